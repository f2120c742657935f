/*
 * stats.c - integer latency statistics and their robust summaries
 * (doc/formats.md section 6).
 *
 * A sample becomes q = round(64 * log2(ns)). Each bot_stats keeps a sparse
 * histogram of q sorted by bin; n, sum_q and sumsq_q always equal what the
 * bins imply, so merging (adding bins) and discounting (scaling counts, then
 * recomputing the sums from the bins) are exact and order-independent.
 * Updates build into fresh storage or grow first, so an allocation failure
 * leaves the statistics unchanged.
 *
 * The robust location estimates the *mean* latency, the quantity the loss is
 * defined on (GPU time adds up): the arithmetic mean of the samples within
 * a factor of four of the (lower) median (+-BOT_MEAN_TRIM_Q bins), returned
 * as its q. Samples ten times too slow sit outside the window and are
 * ignored; a right-skewed arm is not flattered the way a log-space mean
 * would flatter it. The robust spread is the sd of q in the same window; the
 * mean spread, what the planner's beliefs use, is the spread of the
 * latencies the location averages (their coefficient of variation, in q
 * units), so a slow sample the mean keeps widens the belief as much as it
 * moves it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "stats.h"

int bot_q_from_ns(double ns)
{
	double q;

	if (!(ns > 0))		/* also NaN */
		return -1;
	q = 64.0 * log2(ns);
	if (!(q < BOT_Q_MAX))	/* also +inf */
		return BOT_Q_MAX;
	if (q <= 0)
		return 0;
	return (int)floor(q + 0.5);
}

int bot_q_from_us(double us)
{
	return bot_q_from_ns(us * 1000.0);
}

double bot_us_from_q(double q)
{
	return exp2(q / 64.0) / 1000.0;
}

void bot_stats_init(struct bot_stats *s)
{
	memset(s, 0, sizeof(*s));
}

void bot_stats_free(struct bot_stats *s)
{
	free(s->bins);
	bot_stats_init(s);
}

static void recompute(struct bot_stats *s)
{
	s->n = s->sum_q = s->sumsq_q = 0;
	for (uint32_t i = 0; i < s->nbins; i++) {
		uint64_t c = s->bins[i].count, q = s->bins[i].bin;

		s->n += c;
		s->sum_q += c * q;
		s->sumsq_q += c * q * q;
	}
}

static int reserve(struct bot_stats *s, uint32_t want)
{
	struct bot_bin *nb;
	uint32_t cap;

	if (want <= s->cap)
		return 0;
	cap = s->cap ? s->cap : 4;
	while (cap < want)
		cap *= 2;
	nb = realloc(s->bins, (size_t)cap * sizeof(*nb));
	if (!nb)
		return -1;
	s->bins = nb;
	s->cap = cap;
	return 0;
}

/* Index of the first bin >= q. */
static uint32_t find_bin(const struct bot_stats *s, int q)
{
	uint32_t lo = 0, hi = s->nbins;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->bins[mid].bin < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bot_stats_add_q(struct bot_stats *s, int q, uint32_t count)
{
	uint32_t i;
	uint64_t uq;

	if (q < 0 || q > BOT_Q_MAX)
		return -1;
	if (count == 0)
		return 0;
	/* bins arrive in ascending order when a histogram is read back */
	i = s->nbins && s->bins[s->nbins - 1].bin < q ? s->nbins : find_bin(s, q);
	if (i < s->nbins && s->bins[i].bin == q) {
		if (s->bins[i].count > UINT32_MAX - count)
			return -1;
		s->bins[i].count += count;
	} else {
		if (reserve(s, s->nbins + 1) < 0)
			return -1;
		memmove(&s->bins[i + 1], &s->bins[i], (size_t)(s->nbins - i) * sizeof(s->bins[0]));
		s->bins[i].bin = (uint16_t)q;
		s->bins[i].count = count;
		s->nbins++;
	}
	uq = (uint64_t)q;
	s->n += count;
	s->sum_q += (uint64_t)count * uq;
	s->sumsq_q += (uint64_t)count * uq * uq;
	return 0;
}

int bot_stats_merge(struct bot_stats *dst, const struct bot_stats *src)
{
	struct bot_bin *out;
	uint64_t *cnt, max = 0, total = 0;
	uint32_t i = 0, j = 0, k = 0, m = 0;
	unsigned shift = 0;
	size_t cap;

	if (src->nbins == 0)
		return 0;
	cap = (size_t)dst->nbins + src->nbins;
	out = malloc(cap * sizeof(*out));
	cnt = malloc(cap * sizeof(*cnt));
	if (!out || !cnt) {
		free(out);
		free(cnt);
		return -1;
	}
	/* the sums in 64 bits first: dst stays unchanged until it fits */
	while (i < dst->nbins || j < src->nbins) {
		if (j == src->nbins || (i < dst->nbins && dst->bins[i].bin < src->bins[j].bin)) {
			out[k].bin = dst->bins[i].bin;
			cnt[k++] = dst->bins[i++].count;
		} else if (i == dst->nbins || src->bins[j].bin < dst->bins[i].bin) {
			out[k].bin = src->bins[j].bin;
			cnt[k++] = src->bins[j++].count;
		} else {
			out[k].bin = dst->bins[i].bin;
			cnt[k++] = (uint64_t)dst->bins[i++].count + src->bins[j++].count;
		}
		max = cnt[k - 1] > max ? cnt[k - 1] : max;
		total += cnt[k - 1];	/* < 2 x 2561 x 2^32: no overflow */
	}
	/* halve (c >> 1, repeated) until every bin and the total fit */
	while ((max >> shift) > UINT32_MAX || total > BOT_STATS_MAX_N) {
		shift++;
		total = 0;
		for (uint32_t x = 0; x < k; x++)
			total += cnt[x] >> shift;
	}
	for (uint32_t x = 0; x < k; x++)
		if (cnt[x] >> shift) {
			out[m].bin = out[x].bin;
			out[m++].count = (uint32_t)(cnt[x] >> shift);
		}
	free(cnt);
	free(dst->bins);
	dst->bins = out;
	dst->nbins = m;
	dst->cap = (uint32_t)cap;
	recompute(dst);
	return shift ? 1 : 0;
}

/* Multiply every count by num/den; dither: round a small count up with the
 * chance of its fraction (a hash of salt and the bin), else round down. */
static void scale(struct bot_stats *s, uint64_t num, uint64_t den, int dither, uint64_t salt)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < s->nbins; i++) {
		/* a count < 2^32 times num < 2^64 fits in 128 bits: never overflows */
		unsigned __int128 prod = (unsigned __int128)s->bins[i].count * num;
		uint64_t c = (uint64_t)(prod / den), rem = (uint64_t)(prod % den);

		/* A count that would lose less than one sample on average
		 * (c (den - num) < den: below 16 at 15/16) is rounded up
		 * with the chance of its fraction. Rounded down always, a bin
		 * of 1 vanished at the first decay and small bins went many
		 * times faster than large ones, so the samples of a sparse
		 * context fell far behind its calls (decayed exactly) and its
		 * sample rate looked a tenth of the truth (doc/policies.md,
		 * the sample lag). Larger counts are rounded down: less than
		 * one sample against an expected loss of one or more. */
		if (dither && rem && (unsigned __int128)s->bins[i].count * (den - num) < den &&
		    bot_mix64(salt ^ ((uint64_t)s->bins[i].bin << 32 | s->bins[i].count)) % den < rem)
			c++;
		if (c) {
			s->bins[k].bin = s->bins[i].bin;
			s->bins[k++].count = (uint32_t)c;
		}
	}
	s->nbins = k;
	recompute(s);
}

void bot_stats_decay(struct bot_stats *s, uint64_t num, uint64_t den, uint64_t nonce)
{
	uint64_t salt;

	if (den == 0 || num >= den)
		return;
	/* the histogram before the decay and the caller's nonce (which
	 * decay this is, of which arm): every input is the state's own, so
	 * every compactor decays alike; the nonce differs between decays,
	 * else a histogram that one decay left as it was would draw the
	 * same again, and be left as it was for good */
	salt = bot_mix64(bot_mix64(bot_mix64(bot_mix64(nonce) ^ s->n) ^ s->sum_q) ^ s->sumsq_q ^
			 num * 0x9e3779b97f4a7c15ULL ^ den);
	scale(s, num, den, 1, salt);
}

void bot_stats_scale_down(struct bot_stats *s, uint64_t num, uint64_t den)
{
	if (den == 0 || num >= den)
		return;
	scale(s, num, den, 0, 0);
}

int bot_stats_copy(struct bot_stats *dst, const struct bot_stats *src)
{
	struct bot_bin *b = NULL;

	if (dst == src)
		return 0;
	if (src->nbins) {
		b = malloc((size_t)src->nbins * sizeof(*b));
		if (!b)
			return -1;
		memcpy(b, src->bins, (size_t)src->nbins * sizeof(*b));
	}
	free(dst->bins);
	*dst = *src;
	dst->bins = b;
	dst->cap = src->nbins;
	return 0;
}

int bot_stats_median_q(const struct bot_stats *s)
{
	uint64_t want, cum = 0;

	if (s->n == 0)
		return -1;
	want = (s->n - 1) / 2;	/* 0-based index of the lower median */
	for (uint32_t i = 0; i < s->nbins; i++) {
		cum += s->bins[i].count;
		if (cum > want)
			return s->bins[i].bin;
	}
	return s->nbins ? s->bins[s->nbins - 1].bin : -1;
}

/* Bins [*lo, *hi) within +-half of the median bin; *m the median. */
static int window(const struct bot_stats *s, int half, int *m, uint32_t *lo, uint32_t *hi)
{
	*m = bot_stats_median_q(s);
	if (*m < 0)
		return -1;
	*lo = find_bin(s, *m - half);
	*hi = find_bin(s, *m + half + 1);
	return 0;
}

/* 2^(i/64), i = 0..63: relative latency of a bin within an octave. */
static const double exp2_64th[64] = {
	1, 1.0108892860517005, 1.0218971486541166, 1.0330248790212284,
	1.0442737824274138, 1.0556451783605572, 1.0671404006768237, 1.0787607977571199,
	1.0905077326652577, 1.1023825833078409, 1.1143867425958924, 1.1265216186082418,
	1.1387886347566916, 1.1511892299529827, 1.1637248587775775, 1.1763969916502812,
	1.189207115002721, 1.2021567314527031, 1.215247359980469, 1.22848053610687,
	1.241857812073484, 1.2553807570246911, 1.2690509571917332, 1.2828700160787783,
	1.2968395546510096, 1.3109612115247644, 1.3252366431597413, 1.3396675240533029,
	1.3542555469368927, 1.3690024229745905, 1.383909881963832, 1.3989796725383112,
	1.4142135623730951, 1.42961333839197, 1.4451808069770467, 1.460917794180647,
	1.4768261459394993, 1.4929077282912648, 1.5091644275934228, 1.5255981507445384,
	1.5422108254079407, 1.5590044002378369, 1.5759808451078865, 1.593142151342267,
	1.6104903319492543, 1.6280274218573478, 1.6457554781539649, 1.6636765803267364,
	1.681792830507429, 1.7001063537185235, 1.7186192981224779, 1.7373338352737062,
	1.7562521603732995, 1.7753764925265212, 1.7947090750031072, 1.8142521755003989,
	1.8340080864093424, 1.8539791250833855, 1.8741676341103, 1.8945759815869656,
	1.9152065613971474, 1.9360617934922943, 1.9571441241754002, 1.9784560263879509

};

/* 2^(d/64) for |d| <= 2 * BOT_MEAN_TRIM_Q, without libm on the hot loop:
 * the octave's fraction times an exact power of two, which is what
 * ldexp(exp2_64th[r], o) returns (no rounding: |o| <= 4, far from the
 * subnormals), bit for bit. */
static double ratio_q(int d)
{
	static const double pow2[9] = { 0.0625, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16 };
	int o = d >= 0 ? d / 64 : -((-d + 63) / 64);

	return exp2_64th[d - 64 * o] * pow2[o + 4];
}

/* One pass over the mean window (+-BOT_MEAN_TRIM_Q bins around the lower
 * median): *loc the q of the arithmetic mean of its samples (NaN when
 * empty), *sd the sd of their q and *msd the mean spread (both 0 below two
 * samples; stats.h), *used their count. */
static void window_summary(const struct bot_stats *s, double *loc, double *sd, double *msd,
			   uint64_t *used)
{
	uint32_t lo, hi;
	uint64_t c = 0;
	int64_t sd1 = 0, sd2 = 0;
	double sum = 0, sum2 = 0, v = 0;
	int m;

	*loc = NAN;
	*sd = 0;
	*msd = 0;
	*used = 0;
	if (window(s, BOT_MEAN_TRIM_Q, &m, &lo, &hi) < 0)
		return;
	for (uint32_t i = lo; i < hi; i++) {
		int64_t d = (int64_t)s->bins[i].bin - m, k = s->bins[i].count;
		double x = ratio_q((int)d);

		c += (uint64_t)k;
		sd1 += k * d;
		sd2 += k * d * d;
		sum += (double)k * x;
		sum2 += (double)k * x * x;
	}
	if (c > 1) {
		double mean = sum / (double)c;

		v = ((double)sd2 - (double)sd1 * (double)sd1 / (double)c) / (double)(c - 1);
		*sd = v > 0 ? sqrt(v) : 0;
		/* the coefficient of variation of 2^(q/64), in q units */
		v = (sum2 - sum * mean) / (double)(c - 1);
		*msd = v > 0 ? (double)BOT_Q_PER_OCTAVE / M_LN2 * sqrt(v) / mean : 0;
	}
	*used = c;
	if (c)
		*loc = m + 64.0 * log2(sum / (double)c);
}

double bot_stats_robust_q(const struct bot_stats *s, uint64_t *used)
{
	double loc;

	bot_stats_robust_mean(s, &loc, NULL, NULL, used);
	return loc;
}

double bot_stats_robust_sd_q(const struct bot_stats *s)
{
	double sd;

	bot_stats_robust(s, NULL, &sd, NULL);
	return sd;
}

double bot_stats_robust_us(const struct bot_stats *s)
{
	double q = bot_stats_robust_q(s, NULL);

	return isnan(q) ? NAN : bot_us_from_q(q);
}

void bot_stats_robust(const struct bot_stats *s, double *loc, double *sd, uint64_t *used)
{
	bot_stats_robust_mean(s, loc, sd, NULL, used);
}

void bot_stats_robust_mean(const struct bot_stats *s, double *loc, double *sd, double *msd,
			   uint64_t *used)
{
	double l, v, w;
	uint64_t c;

	window_summary(s, &l, &v, &w, &c);
	if (loc)
		*loc = l;
	if (sd)
		*sd = v;
	if (msd)
		*msd = w;
	if (used)
		*used = c;
}
