/*
 * stats.c - integer latency statistics and their robust summaries
 * (doc/formats.md section 6).
 *
 * A sample becomes q = round(64 * log2(ns)). Each bot_stats keeps a sparse
 * histogram of q sorted by bin; n, sum_q and sumsq_q always equal what the
 * bins imply, so merging (adding bins) and discounting (scaling counts, then
 * recomputing the sums from the bins) are exact and order-independent.
 * Updates build into fresh storage or grow first, so an allocation failure
 * leaves the statistics unchanged. The robust location is the mean of the
 * bins within +-BOT_TRIM_Q of the (lower) median bin: a few samples ten
 * times too slow sit outside the window and are ignored.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
	i = find_bin(s, q);
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
	uint32_t i = 0, j = 0, k = 0;
	size_t cap;

	if (src->nbins == 0)
		return 0;
	/* Check overflow first so that dst stays unchanged on failure. */
	for (i = 0, j = 0; i < dst->nbins && j < src->nbins;) {
		if (dst->bins[i].bin < src->bins[j].bin) {
			i++;
		} else if (dst->bins[i].bin > src->bins[j].bin) {
			j++;
		} else {
			if (dst->bins[i].count > UINT32_MAX - src->bins[j].count)
				return -1;
			i++;
			j++;
		}
	}
	cap = (size_t)dst->nbins + src->nbins;
	out = malloc(cap * sizeof(*out));
	if (!out)
		return -1;
	i = j = 0;
	while (i < dst->nbins || j < src->nbins) {
		if (j == src->nbins || (i < dst->nbins && dst->bins[i].bin < src->bins[j].bin)) {
			out[k++] = dst->bins[i++];
		} else if (i == dst->nbins || src->bins[j].bin < dst->bins[i].bin) {
			out[k++] = src->bins[j++];
		} else {
			out[k] = dst->bins[i++];
			out[k++].count += src->bins[j++].count;
		}
	}
	free(dst->bins);
	dst->bins = out;
	dst->nbins = k;
	dst->cap = (uint32_t)cap;
	recompute(dst);
	return 0;
}

void bot_stats_decay(struct bot_stats *s, uint32_t num, uint32_t den)
{
	uint32_t k = 0;

	if (den == 0 || num >= den)
		return;
	for (uint32_t i = 0; i < s->nbins; i++) {
		uint64_t c = (uint64_t)s->bins[i].count * num / den;

		if (c) {
			s->bins[k].bin = s->bins[i].bin;
			s->bins[k++].count = (uint32_t)c;
		}
	}
	s->nbins = k;
	recompute(s);
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

/* Bins [*lo, *hi) within the robust window around the median. */
static int window(const struct bot_stats *s, uint32_t *lo, uint32_t *hi)
{
	int m = bot_stats_median_q(s);

	if (m < 0)
		return -1;
	*lo = find_bin(s, m - BOT_TRIM_Q);
	*hi = find_bin(s, m + BOT_TRIM_Q + 1);
	return 0;
}

double bot_stats_robust_q(const struct bot_stats *s, uint64_t *used)
{
	uint32_t lo, hi;
	uint64_t c = 0, sum = 0;

	if (used)
		*used = 0;
	if (window(s, &lo, &hi) < 0)
		return NAN;
	for (uint32_t i = lo; i < hi; i++) {
		c += s->bins[i].count;
		sum += (uint64_t)s->bins[i].count * s->bins[i].bin;
	}
	if (used)
		*used = c;
	return c ? (double)sum / (double)c : NAN;
}

double bot_stats_robust_sd_q(const struct bot_stats *s)
{
	uint32_t lo, hi;
	uint64_t c = 0;
	double mean, ss = 0;

	if (window(s, &lo, &hi) < 0)
		return 0;
	mean = bot_stats_robust_q(s, &c);
	if (c < 2)
		return 0;
	for (uint32_t i = lo; i < hi; i++) {
		double d = s->bins[i].bin - mean;

		ss += s->bins[i].count * d * d;
	}
	return sqrt(ss / (double)(c - 1));
}

double bot_stats_robust_us(const struct bot_stats *s)
{
	double q = bot_stats_robust_q(s, NULL);

	return isnan(q) ? NAN : bot_us_from_q(q);
}

void bot_stats_robust(const struct bot_stats *s, double *loc, double *sd, uint64_t *used)
{
	int m = bot_stats_median_q(s);
	uint32_t lo, hi;
	uint64_t c = 0;
	int64_t sd1 = 0, sd2 = 0;
	double l = NAN, v = 0;

	if (m >= 0) {
		lo = find_bin(s, m - BOT_TRIM_Q);
		hi = find_bin(s, m + BOT_TRIM_Q + 1);
		for (uint32_t i = lo; i < hi; i++) {
			int64_t d = (int64_t)s->bins[i].bin - m, k = s->bins[i].count;

			c += (uint64_t)k;
			sd1 += k * d;
			sd2 += k * d * d;
		}
		if (c) {
			l = m + (double)sd1 / (double)c;
			if (c > 1) {
				v = ((double)sd2 - (double)sd1 * (double)sd1 / (double)c) / (double)(c - 1);
				v = v > 0 ? sqrt(v) : 0;
			}
		}
	}
	if (loc)
		*loc = l;
	if (sd)
		*sd = v;
	if (used)
		*used = c;
}
