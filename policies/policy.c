/*
 * policy.c - the policy registry and the planner: knowledge -> bot_plan.
 *
 * Everything works in log space, q = 64 * log2(ns). For each arm of a
 * context the planner builds a Gaussian belief about its true q:
 *
 *   prior     m0 = q(AUTO's cost entry) + c, where c is AUTO's error for the
 *             same arm borrowed from neighbouring contexts ("scale transfer":
 *             the same collective at sizes within two octaves, at the same
 *             bytes per rank on other node counts, weighted by the skill
 *             those scales showed predicting each other (scale_skill:
 *             leave-one-scale-out), and, weakly, the other arms of this
 *             context), shrunk towards the error every arm shares
 *             there (corrections: the common offset);
 *   data      the robust (median-trimmed) mean r of the arm's own samples,
 *             so a few samples ten times too slow never move it;
 *   posterior mean (W*m0 + n*r)/(W + n), W = prior_weight pseudo-samples,
 *             sd 1/sqrt(1/tau^2 + n/sigma^2), tau = prior_sd octaves (less
 *             when neighbours back the correction), sigma the arm's robust
 *             spread, floored.
 *
 * Arms are "plausible" when supported (cost entry >= 0) and their prior is
 * within `plausible` times the best prior, or their posterior is already
 * that competitive, and, where a probe is a lump, when the worst-case lump
 * rule does not forbid them this round (worst_filter; safe_clip below);
 * nothing else is ever planned. The exploit arm is the
 * lowest posterior mean. Probes are ranges of the 256 probe buckets:
 * Thompson sizes them by each arm's probability of being best (estimated
 * with K deterministic draws; with one communicator, drawing the probe
 * bucket per call makes this exactly Thompson sampling), UCB1 by lower
 * confidence bounds, epsilon-greedy by a fixed share. The cold variants
 * start every supported arm from a flat belief; etc and sweep are
 * schedules. All randomness is bot_rng(seed, stream, key, round-derived),
 * so a plan is a pure function of its inputs. No allocation, no I/O.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* bot_rng streams, one per purpose. */
#define STREAM_THOMPSON	0x7473616d706c6531ULL	/* "tsample1" */
#define STREAM_OFFSET	0x6f66667365743031ULL	/* "offset01" */
#define STREAM_WIDE	0x7769646570726931ULL	/* "widepri1" */

#define SIGMA_FLOOR	1.5	/* q: noise sd never assumed below ~1.6 % */
#define SIGMA_FEW	6.0	/* q: assumed noise sd before the context has 4 degrees of freedom */
#define POOL_DF		4.0	/* weight of the pooled noise estimate, in degrees of freedom */
#define COLD_SD		64.0	/* q: belief of an unmeasured arm without prior */
#define PRUNE_Z		3.5	/* arms this many sd behind cannot be best */
#define SHRINK_MAX	3.0	/* neighbours at most halve the prior sd */
/* Pseudo-weight of "AUTO is right" against borrowed corrections: one
 * neighbour an octave away with a few samples (weight ~0.6) passes on ~70 %
 * of the error it saw. 1.0 passed on ~40 %, and an error that grows with size
 * (ring LL at 2 -> 16 MiB) then took a job per octave to reach the contexts
 * that needed it (jobs mode, replay seed 0: 3 contexts above 10 % -> 1). */
#define CORR_SHRINK	0.25
#ifndef WIDE_P
#define WIDE_P		0.1	/* weight of the wide component of an unmeasured arm's prior */
#endif
#ifndef WIDE_PJ
#define WIDE_PJ		0.1
#endif
#ifndef UCB_WIDE
#define UCB_WIDE	1.5
#endif
#ifndef WIDE_K
#define WIDE_K		3.0	/* its sd, in prior sds */
#endif

/*
 * Defaults, chosen on a toy replay (structured AUTO errors of 10-60 %, 5 %
 * log-normal noise, outliers; per-call and 20-job x 8-comm modes):
 *  - prior_sd 0.3 octave: the cost of Thompson's exploration grows quickly
 *    with it (every arm whose prior is within ~2 sd gets sampled once), and
 *    below 0.25 contexts where AUTO is 2x off stop being found;
 *  - prior_weight 0.5: one measurement outweighs the prior (noise is a few
 *    percent, AUTO's error tens of percent); results are insensitive to it;
 *  - share 1: neighbours' corrections cut jobs-mode loss by about a third;
 *  - probe_frac 0.5: a cap only, probability matching sets the width;
 *  - ucb_c 0.7: 0.5 misses arms AUTO is far off about, 1 over-explores;
 *  - epsilon 0.02: uniform exploration of plausible arms is expensive;
 *  - plausible 4x: an arm AUTO predicts 4x slower is never worth a probe.
 */
static const struct bot_policy_params defaults = {
	.prior_weight = 0.5,
	.prior_sd = 0.3,
	.probe_frac = 0.5,
	.epsilon = 0.02,
	.ucb_c = 0.7,
	.discount = 1.0,
	.share = 1.0,
	.plausible = 4.0,
	.etc_rounds = 2.0,
	.budget = 0.01,
};

/* Safe exploration: the one-sided bound used for "pessimistic", in
 * posterior sds (one sd: each bound holds with about 84 % under the
 * Gaussian belief; doc/policies.md says what that buys). */
#define SAFE_Z		1.0
/* An arm without samples in this context (or any arm while AUTO's own arm
 * has none) is charged the cost model's ratio against AUTO's arm, times
 * the model's miss here (model_miss) and 1 + SAFE_MARGIN, minus one, and at
 * least SAFE_FLOOR (safe_excess). */
#ifndef SAFE_MARGIN
#define SAFE_MARGIN	0.05
#endif
#ifndef SAFE_FLOOR
#define SAFE_FLOOR	0.02
#endif
/* The exploit that replaces one the budget cannot cover (safe_clip) is an
 * arm with at least this many samples of its own whose pessimistic excess
 * is a saving, else AUTO's: it runs on every communicator of the round, so
 * it needs more than one communicator's round of samples (jobs mode at 1 %
 * sampling: 5). Chosen among 1, 10 and 20 on replay seed 0, jobs mode (1:
 * harmed 1 -> 3; 10: 3; 20: 1, mean 1.43 -> 1.39 %), then checked on all
 * 15 seed pairs (doc/policies.md). */
#ifndef SAFE_FALLBACK_N
#define SAFE_FALLBACK_N 20
#endif

/* With several communicators, the chance at most that a probe charged as
 * one communicator's round lands on two or more (guess_width). */
#ifndef SAFE_LUMP
#define SAFE_LUMP	0.05
#endif

/* The baseline refresh (safe_clip): while another arm is exploited and AUTO's
 * own arm has fewer than SAFE_REFRESH_N samples of evidence that put it more
 * than twice as slow as NCCL's model (corrected by neighbours) says, AUTO
 * keeps SAFE_REFRESH_W of the 256 probe buckets, so that an unlucky start
 * (its first draws outliers) is measured again instead of written off for
 * good. Where AUTO truly is that slow, the refresh costs SAFE_REFRESH_W / 256
 * of the saving until the samples are in. 20 is the evidence the fallback
 * exploit asks for (SAFE_FALLBACK_N); 16 buckets (6 %) refill it within a few
 * hundred calls at the replay's per-call rate. Checked, not tuned: with
 * outliers of 2-10x on 3 % and 8 % of calls (bench/replay_jitter.sh). */
#ifndef SAFE_REFRESH_N
#define SAFE_REFRESH_N	20
#endif
#ifndef SAFE_REFRESH_W
#define SAFE_REFRESH_W	16
#endif

/* The worst-case lump rule (safe_clip, doc/policies.md): where a probe is a
 * lump, an arm without samples here that NCCL's cost model rates (times its
 * miss here, model_miss) more than SAFE_TRUST times AUTO's arm is probed
 * only while one communicator's round on it would cost at most
 * SAFE_WORST_CAP of the context's calls so far (this round included) even if
 * the arm were SAFE_WORST_K times slower than the model says. Chosen on replay seed 0 (built-in fabrics, jobs and epochs
 * modes, and the real data: an arm the model put at 2.0x was 5.25x on
 * aws-g5-a10g), then checked on all 15 seed pairs. */
#ifndef SAFE_TRUST
#define SAFE_TRUST	1.6
#endif
#ifndef SAFE_WORST_K
#define SAFE_WORST_K	2.5
#endif
#ifndef SAFE_WORST_CAP
#define SAFE_WORST_CAP	0.02
#endif
/* The rule bounds one communicator's lump; a range that two or more land in
 * pays it once per communicator. An arm the rule judges (rated above
 * SAFE_TRUST) is therefore tried on a range that two or more of the round's
 * communicators land in with probability at most SAFE_WORST_LUMP, not
 * SAFE_LUMP (8 communicators, at most one round in flight: 2 buckets
 * instead of 11). Chosen among 1 % and 0.3 % on seeds off bench/replay's grid
 * (builtin replay seeds 0-9 at sim seed 0, alt 0-9, the real data 0-24), then
 * checked on that grid and on seeds used for neither (doc/policies.md). */
#ifndef SAFE_WORST_LUMP
#define SAFE_WORST_LUMP	0.003
#endif
/* The model's miss here (model_miss) is at most SAFE_MISS_CAP, so that the
 * worst-case lump rule's wait stays proportionate: at the cap every arm
 * without samples counts as 4x or more, judged, and admitted once the
 * context's calls are (4 x 2.5 - 1) / 0.02 = 450 lumps or more. Caps of 1.5,
 * 2 and 8 gave the same real-data results over replay seeds 0-44 (an arm the
 * first miss moves above SAFE_TRUST is judged whatever the cap;
 * doc/policies.md). */
#ifndef SAFE_MISS_CAP
#define SAFE_MISS_CAP	4.0
#endif
/* It counts from SAFE_MISS_N samples of evidence of both arms, AUTO's and
 * the measured one (one or two slow samples may be outliers: build_view
 * widens their spread). With 1 instead of 3 (other arms only): the same on
 * the real data, 2 more harmed per call at 8 % outliers
 * (bench/replay_jitter.sh). */
#ifndef SAFE_MISS_N
#define SAFE_MISS_N	3
#endif

/* The policy whose planner a -free variant uses. */
static int base_id(int id)
{
	switch (id) {
	case BOT_POLICY_GREEDY_FREE:
		return BOT_POLICY_GREEDY;
	case BOT_POLICY_EGREEDY_FREE:
		return BOT_POLICY_EGREEDY;
	case BOT_POLICY_UCB1_FREE:
		return BOT_POLICY_UCB1;
	case BOT_POLICY_THOMPSON_FREE:
		return BOT_POLICY_THOMPSON;
	default:
		return id;
	}
}

static int is_free(int id)
{
	return base_id(id) != id;
}

static int is_cold(int id)
{
	return id == BOT_POLICY_GREEDY_COLD || id == BOT_POLICY_UCB1_COLD ||
	       id == BOT_POLICY_THOMPSON_COLD;
}

int bot_policy_init(struct bot_policy *p, const char *name)
{
	int id = bot_policy_parse(name);

	if (!p || id < 0)
		return -1;
	p->id = id;
	p->par = defaults;
	p->allow = 0;
	if (is_free(id) || id == BOT_POLICY_AUTO || id == BOT_POLICY_SWEEP)
		p->par.budget = INFINITY;
	if (is_cold(id)) {
		p->par.prior_weight = 0;
		p->par.share = 0;
	}
	return 0;
}

int bot_policy_set(struct bot_policy *p, const char *key, double v)
{
	struct bot_policy_params *q;

	if (!p || !key || !isfinite(v))
		return -1;
	q = &p->par;
	if (!strcmp(key, "prior_weight") && v >= 0)
		q->prior_weight = v;
	else if (!strcmp(key, "prior_sd") && v > 0 && v <= 16)
		q->prior_sd = v;
	else if (!strcmp(key, "probe_frac") && v >= 0 && v <= 1)
		q->probe_frac = v;
	else if (!strcmp(key, "epsilon") && v >= 0 && v <= 1)
		q->epsilon = v;
	else if (!strcmp(key, "ucb_c") && v >= 0)
		q->ucb_c = v;
	else if (!strcmp(key, "discount") && v > 0 && v <= 1)
		q->discount = v;
	else if (!strcmp(key, "share") && v >= 0)
		q->share = v;
	else if (!strcmp(key, "plausible") && v >= 1)
		q->plausible = v;
	else if (!strcmp(key, "etc_rounds") && v >= 0 && v <= 1e9)
		q->etc_rounds = v;
	else if (!strcmp(key, "budget") && v >= 0 && v <= 1e9) {
		/* the -free variants, auto and sweep have none (INFINITY):
		 * they ignore it, as doc/policies.md says */
		if (isfinite(q->budget))
			q->budget = v;
	}
	else
		return -1;
	return 0;
}

/* Grids: a few values of the parameters that matter for each policy. */
int bot_policy_grid(int id, unsigned i, struct bot_policy_params *out)
{
	static const double pw[] = { 0.25, 0.5, 1, 2 };
	static const double sd[] = { 0.3, 0.45, 0.6 };
	static const double sh[] = { 0, 0.5, 1, 2 };
	static const double eps[] = { 0.01, 0.02, 0.05, 0.1 };
	static const double uc[] = { 0.35, 0.7, 1.0 };
	static const double fr[] = { 0.25, 0.5, 1 };
	static const double er[] = { 1, 2, 3, 5 };
	struct bot_policy p;

	if (!out || bot_policy_init(&p, bot_policy_name(id)) < 0)
		return -1;
	switch (base_id(id)) {
	case BOT_POLICY_GREEDY:		/* prior_weight x share */
		if (i >= 12)
			return -1;
		p.par.prior_weight = pw[i % 4];
		p.par.share = sh[1 + i / 4];
		break;
	case BOT_POLICY_EGREEDY:	/* epsilon x prior_weight */
		if (i >= 12)
			return -1;
		p.par.epsilon = eps[i % 4];
		p.par.prior_weight = pw[i / 4];
		break;
	case BOT_POLICY_UCB1:		/* ucb_c x prior_sd */
		if (i >= 9)
			return -1;
		p.par.ucb_c = uc[i % 3];
		p.par.prior_sd = sd[i / 3];
		break;
	case BOT_POLICY_THOMPSON:	/* prior_sd x share, then probe_frac */
		if (i < 9) {
			p.par.prior_sd = sd[i % 3];
			p.par.share = sh[1 + i / 3];
		} else if (i < 12) {
			p.par.probe_frac = fr[i - 9];
			p.par.share = 0;
		} else {
			return -1;
		}
		break;
	case BOT_POLICY_UCB1_COLD:
		if (i >= 3)
			return -1;
		p.par.ucb_c = uc[i];
		break;
	case BOT_POLICY_THOMPSON_COLD:
		if (i >= 3)
			return -1;
		p.par.probe_frac = fr[i];
		break;
	case BOT_POLICY_ETC:
		if (i >= 4)
			return -1;
		p.par.etc_rounds = er[i];
		break;
	default:	/* auto, sweep, greedy-cold; frozen and shadow, whose replayed
			 * calls never depend on their parameters: nothing to tune */
		if (i >= 1)
			return -1;
		break;
	}
	*out = p.par;
	return 0;
}

int bot_prior_argmin(const float prior[BOT_NARMS])
{
	int best = -1;

	if (!prior)
		return -1;
	for (int a = 0; a < BOT_NARMS; a++)
		if (prior[a] >= 0 && (best < 0 || prior[a] < prior[best]))
			best = a;
	return best;
}

void bot_policy_decay(const struct bot_policy *p, struct bot_kb *kb, uint64_t round)
{
	double d;

	if (!p || !kb)
		return;
	d = p->par.discount;
	if (!(d > 0) || d >= 1)
		return;
	bot_kb_decay(kb, (uint32_t)floor(d * 65536.0 + 0.5), 65536, round);
}

/* ---- beliefs ---------------------------------------------------------- */

struct belief {
	int arm;
	int plausible;
	uint64_t n;	/* the arm's own evidence (arm_summary), 0 for a lone outlier */
	double r;	/* their robust mean (q), NaN when n == 0 */
	double m0;	/* prior mean (q), corrected */
	double mu;	/* posterior mean */
	double sd;	/* posterior sd */
	uint64_t n_all;	/* samples the window kept, a lone outlier included (what
			 * the budget counts) */
	double r_all;	/* their robust mean (q), NaN when n_all == 0 */
};

/* What the planner reads of one arm of one context: its robust summary
 * and the q of its prior entry. */
struct arm_sum {
	double loc, sd;	/* bot_stats_robust_mean: location, mean spread */
	uint64_t used;
	uint64_t ev;	/* evidence (arm_summary) */
	double pq;	/* prior_q(prior[arm]) */
};

/* Summaries computed once per (context, arm) while a kb stays unchanged:
 * a compile plans every context and each is borrowed from by up to ten
 * neighbours and its scale peers. Indexed by bot_kb_at() index. */
struct bot_plan_memo {
	const struct bot_kb *kb;
	size_t n;
	unsigned char *done;	/* n * BOT_NARMS */
	struct arm_sum *sum;	/* n * BOT_NARMS */
};

struct view {
	const struct bot_kb_ctx *ctx;
	size_t idx;		/* ctx's bot_kb_at() index */
	int auto_arm;
	int nb;			/* supported arms */
	struct belief b[BOT_NARMS];
	double miss;		/* the model's miss here (model_miss), once the
				 * beliefs are built */
};

static double model_miss(const struct view *v);

static double prior_q(float us)
{
	double ns = (double)us * 1000.0;

	return 64.0 * log2(ns > 1.0 ? ns : 1.0);
}

struct bot_plan_memo *bot_plan_memo_new(const struct bot_kb *kb)
{
	struct bot_plan_memo *m = calloc(1, sizeof(*m));
	size_t n = bot_kb_count(kb);

	if (!m)
		return NULL;
	m->kb = kb;
	m->n = n;
	if (n) {
		m->done = calloc(n * BOT_NARMS, sizeof(*m->done));
		m->sum = malloc(n * BOT_NARMS * sizeof(*m->sum));
		if (!m->done || !m->sum) {
			bot_plan_memo_free(m);
			return NULL;
		}
	}
	return m;
}

void bot_plan_memo_free(struct bot_plan_memo *m)
{
	if (!m)
		return;
	free(m->done);
	free(m->sum);
	free(m);
}

/* Arm a of context c (index idx): from the memo when there is one. */
static const struct arm_sum *arm_summary(struct bot_plan_memo *memo, const struct bot_kb_ctx *c,
					 size_t idx, int a, struct arm_sum *tmp)
{
	struct arm_sum *s = tmp;
	uint64_t out;

	if (memo && idx < memo->n) {
		s = &memo->sum[idx * BOT_NARMS + (size_t)a];
		if (memo->done[idx * BOT_NARMS + (size_t)a])
			return s;
		memo->done[idx * BOT_NARMS + (size_t)a] = 1;
	}
	bot_stats_robust_mean(&c->arm[a], &s->loc, NULL, &s->sd, &s->used);
	/* The evidence behind the location: the samples the window kept less
	 * those it dropped. A median that a few more slow draws would have
	 * carried off (3 samples at 8x, 2 at 1x: the window keeps the three)
	 * is no measurement of either cluster; counted as its 3 samples, it
	 * made an arm 8x too slow look certain, and the arm was never tried
	 * again (doc/policies.md, heavy-tailed noise). */
	out = c->arm[a].n > s->used ? c->arm[a].n - s->used : 0;
	s->ev = s->used > out ? s->used - out : 0;
	s->pq = prior_q(c->prior[a]);
	return s;
}

/* A single sample has no median to be trimmed against: one more than 2x
 * slower than the prior is taken for an outlier until a second sample
 * backs it (two samples: the lower median trims it). Outliers are slow, so
 * only that side is doubted. */
static int lone_outlier(uint64_t n, double loc, double m0)
{
	return n <= 2 && loc > m0 + BOT_TRIM_Q;
}

/* Accumulate AUTO's error seen in context c (weight w per unit of evidence)
 * into sum/wsum for every arm that is supported here. */
static void borrow(const struct bot_kb *kb, struct bot_plan_memo *memo, size_t idx,
		   const struct view *v, double w, double sum[BOT_NARMS], double wsum[BOT_NARMS])
{
	const struct bot_kb_ctx *c = bot_kb_at(kb, idx);

	if (!c || !c->has_prior)
		return;
	for (int i = 0; i < v->nb; i++) {
		int a = v->b[i].arm;
		const struct arm_sum *as;
		struct arm_sum tmp;
		uint64_t n = c->arm[a].n;
		double e;

		if (!n || c->prior[a] < 0)
			continue;
		as = arm_summary(memo, c, idx, a, &tmp);
		n = as->ev;
		if (!n || lone_outlier(n, as->loc, as->pq))
			continue;
		e = w * (double)n / (double)(n + 1);
		sum[a] += e * (as->loc - as->pq);
		wsum[a] += e;
	}
}

/* Weight of a scale peer at nnodes a for a context at nnodes b, before the
 * learned skill: nearer scales count more. */
static double scale_kernel(uint32_t a, uint32_t b)
{
	return 0.6 * exp(-0.35 * fabs(log2((double)(a ? a : 1) / (double)(b ? b : 1))));
}

#define SKILL_PEERS 16

/* Whether a peer at nnodes k may predict a held-out peer at nnodes i: at
 * least dmin (log2 scale) apart; see scale_skill. */
static int far_enough(uint32_t k, uint32_t i, double dmin)
{
	return fabs(log2((double)(k ? k : 1) / (double)(i ? i : 1))) >= dmin - 1e-9;
}

/*
 * Scale transfer's weight, learned: leave-one-scale-out inside the kb.
 * Each scale peer of key (same collective, same bytes per rank, another
 * node count) that measured an arm has an observed AUTO error for it; it
 * is predicted from the other peers' errors of that arm as the planner
 * would borrow them (scale_kernel weights, CORR_SHRINK pseudo-weight
 * towards the common offset of every arm those peers measured), and
 * the skill is 1 - SSE(prediction) / SSE(predicting 0, i.e. AUTO as is),
 * clamped to [0, 1]. Without two peers to compare it is 0: scale transfer
 * is used only as far as it has been seen to predict held-out scales.
 */
static double scale_skill(const struct bot_kb *kb, struct bot_plan_memo *memo, uint64_t key,
			  const struct view *v)
{
	uint32_t nn[SKILL_PEERS];
	double err[SKILL_PEERS][BOT_NARMS], w[SKILL_PEERS][BOT_NARMS];
	double sse = 0, sse0 = 0, dmin = INFINITY;
	unsigned np = 0, m = 0;

	for (size_t i = bot_kb_peer_first(kb, key); i != BOT_KB_NONE && np < SKILL_PEERS;
	     i = bot_kb_peer_next(kb, i)) {
		const struct bot_kb_ctx *c = bot_kb_at(kb, i);
		int any = 0;

		if (!c || c->key == key || !c->has_prior || bot_key_coll(c->key) != bot_key_coll(key))
			continue;
		for (int j = 0; j < v->nb; j++) {
			int a = v->b[j].arm;
			const struct arm_sum *as;
			struct arm_sum tmp;

			w[np][a] = 0;
			if (!c->arm[a].n || c->prior[a] < 0)
				continue;
			as = arm_summary(memo, c, i, a, &tmp);
			if (!as->ev || lone_outlier(as->ev, as->loc, as->pq))
				continue;
			err[np][a] = as->loc - as->pq;
			w[np][a] = (double)as->ev / (double)(as->ev + 1);
			any = 1;
		}
		if (any)
			nn[np++] = bot_key_nnodes(c->key);
	}
	/* Held-out scales are predicted only from peers at least as far from
	 * them as the nearest peer is from key: the skill of extrapolating as
	 * far as key needs, not of interpolating between close scales. */
	for (unsigned i = 0; i < np; i++) {
		double d = fabs(log2((double)(nn[i] ? nn[i] : 1) /
				     (double)(bot_key_nnodes(key) ? bot_key_nnodes(key) : 1)));

		if (d < dmin)
			dmin = d;
	}
	for (unsigned i = 0; i < np; i++) {
		double cs = 0, cwt = 0, common;

		/* shrunk towards the common offset, as corrections() shrinks
		 * what it borrows: the error the eligible peers saw for every
		 * arm, pooled (until 2026-12-03 towards 0, which judged a
		 * transfer by a prediction the planner does not make). The
		 * same for every arm of peer i. */
		for (unsigned k = 0; k < np; k++) {
			if (k == i || !far_enough(nn[k], nn[i], dmin))
				continue;
			for (int j = 0; j < v->nb; j++) {
				int b = v->b[j].arm;
				double kw;

				if (!(w[k][b] > 0))
					continue;
				kw = w[k][b] * scale_kernel(nn[k], nn[i]);
				cs += kw * err[k][b];
				cwt += kw;
			}
		}
		common = cwt > 0 ? cs / (cwt + CORR_SHRINK) : 0;
		for (int j = 0; j < v->nb; j++) {
			int a = v->b[j].arm;
			double ps = 0, pw = 0, pred;
			int others = 0;

			if (!(w[i][a] > 0))
				continue;
			for (unsigned k = 0; k < np; k++) {
				double kw;

				if (k == i || !(w[k][a] > 0) || !far_enough(nn[k], nn[i], dmin))
					continue;
				kw = w[k][a] * scale_kernel(nn[k], nn[i]);
				ps += kw * err[k][a];
				pw += kw;
				others = 1;
			}
			if (!others)
				continue;
			pred = (ps + CORR_SHRINK * common) / (pw + CORR_SHRINK);
			sse += w[i][a] * (err[i][a] - pred) * (err[i][a] - pred);
			sse0 += w[i][a] * err[i][a] * err[i][a];
			m++;
		}
	}
	if (m < 2 || !(sse0 > 0))
		return 0;
	return fmin(1, fmax(0, 1 - sse / sse0));
}

/* Corrections of the prior from neighbouring contexts; see the file comment. */
static void corrections(const struct bot_kb *kb, struct bot_plan_memo *memo, uint64_t key,
			const struct view *v, double share, double corr[BOT_NARMS],
			double wsum[BOT_NARMS])
{
	static const int delta[] = { -8, -4, -3, -2, -1, 1, 2, 3, 4, 8 };
	static const double dw[] = { 0.37, 0.61, 0.69, 0.78, 0.88, 0.88, 0.78, 0.69, 0.61, 0.37 };
	unsigned coll = bot_key_coll(key), b = bot_key_bucket(key);
	uint32_t nr = bot_key_nranks(key), nn = bot_key_nnodes(key);
	double sum[BOT_NARMS] = { 0 };
	double osum = 0, ow = 0, csum = 0, cw = 0, common;

	memset(wsum, 0, BOT_NARMS * sizeof(double));
	/* Same scale, neighbouring sizes. */
	for (unsigned i = 0; i < sizeof(delta) / sizeof(delta[0]); i++) {
		int nbk = (int)b + delta[i];

		if (nbk < 0 || nbk >= BOT_NBUCKETS)
			continue;
		borrow(kb, memo, bot_kb_index(kb, bot_ctx_key(coll, (unsigned)nbk, nr, nn)), v, dw[i],
		       sum, wsum);
	}
	/* Other scales at the same bytes per rank, weighted by how well they
	 * predict each other (scale_skill). */
	{
		double skill = scale_skill(kb, memo, key, v);

		for (size_t i = bot_kb_peer_first(kb, key); skill > 0 && i != BOT_KB_NONE;
		     i = bot_kb_peer_next(kb, i)) {
			const struct bot_kb_ctx *c = bot_kb_at(kb, i);

			if (!c || c->key == key || bot_key_coll(c->key) != coll)
				continue;
			borrow(kb, memo, i, v, skill * scale_kernel(bot_key_nnodes(c->key), nn), sum, wsum);
		}
	}
	/* The error the neighbours saw for every arm they measured, pooled:
	 * the part of AUTO's error that is the context's, not one arm's (a
	 * cost model that is off in level is off for every arm). An arm's own
	 * borrowed evidence is shrunk towards it, not towards 0: towards 0, an
	 * arm no neighbour measured kept NCCL's level while the measured ones,
	 * AUTO's among them, carried the error, and was taken for that much
	 * faster than AUTO (doc/policies.md, "The common offset"). */
	for (int i = 0; i < v->nb; i++) {
		csum += sum[v->b[i].arm];
		cw += wsum[v->b[i].arm];
	}
	common = cw > 0 ? csum / (cw + CORR_SHRINK) : 0;
	/* This context's own measured arms: a shared offset of AUTO here. */
	for (int i = 0; i < v->nb; i++) {
		const struct belief *x = &v->b[i];
		double e;

		if (!x->n)
			continue;
		e = (double)x->n / (double)(x->n + 1);
		osum += e * (x->r - x->m0);
		ow += e;
	}
	for (int i = 0; i < v->nb; i++) {
		int a = v->b[i].arm;
		double s = sum[a], w = wsum[a];
		double e = v->b[i].n ? (double)v->b[i].n / (double)(v->b[i].n + 1) : 0;
		double oo = ow - e;	/* other arms only */

		if (oo > 1e-9) {
			double own = v->b[i].n ? e * (v->b[i].r - v->b[i].m0) : 0;
			double off = (osum - own) / oo;
			double k = 0.25 * oo / (oo + 1);

			s += k * off;
			w += k;
		}
		w *= share;
		s *= share;
		corr[a] = (s + CORR_SHRINK * common) / (w + CORR_SHRINK);
		wsum[a] = w;
	}
}

/* Does arm a enter a view of context c (AUTO's arm auto_arm)? It needs a
 * prior and the allow-list, and an arm the ranks cannot measure (CollNet,
 * NVLS across nodes) enters only as AUTO's own or where the state holds
 * samples of it (an import; as: its summary, NULL when not computed): it
 * is never probed (strip_unmeasurable). */
static int view_admits(const struct bot_policy *p, const struct bot_kb_ctx *c, int auto_arm, int a,
		       const struct arm_sum *as)
{
	return c->prior[a] >= 0 && bot_arm_allowed(a, auto_arm, p->allow) &&
	       (a == auto_arm || bot_arm_measurable(a, bot_key_nnodes(c->key)) || (as && as->used));
}

/* Fill v for the policy; 0, or -1 when the plan must be "leave it to AUTO". */
static int build_view(const struct bot_policy *p, const struct bot_kb *kb,
		      struct bot_plan_memo *memo, uint64_t key, int cold, struct view *v)
{
	const struct bot_policy_params *par = &p->par;
	size_t idx = bot_kb_index(kb, key);
	const struct bot_kb_ctx *c = bot_kb_at(kb, idx);
	double corr[BOT_NARMS], wsum[BOT_NARMS];
	double best0 = INFINITY, bestmu = INFINITY, ref = INFINITY, win;
	double tau = par->prior_sd * BOT_Q_PER_OCTAVE;
	double pss = 0, pdf = 0, pooled;

	if (!c || !c->has_prior)
		return -1;
	v->ctx = c;
	v->idx = idx;
	v->auto_arm = bot_prior_argmin(c->prior);
	if (v->auto_arm < 0)
		return -1;
	v->nb = 0;
	for (int a = 0; a < BOT_NARMS; a++) {
		const struct arm_sum *as;
		struct arm_sum tmp;
		struct belief *x;

		if (!(c->prior[a] >= 0) || !bot_arm_allowed(a, v->auto_arm, p->allow))
			continue;
		as = arm_summary(memo, c, idx, a, &tmp);
		if (!view_admits(p, c, v->auto_arm, a, as))
			continue;
		x = &v->b[v->nb++];
		x->arm = a;
		x->plausible = 1;
		x->m0 = as->pq;
		x->n = as->ev;
		x->r = x->n ? as->loc : NAN;	/* no evidence: as unmeasured */
		x->n_all = as->used;
		x->r_all = as->loc;
		if (x->n && lone_outlier(x->n, x->r, x->m0)) {
			x->n = 0;
			x->r = NAN;
		}
		/* sd is kept in mu temporarily */
		x->mu = as->sd;
	}
	if (!cold && par->share > 0) {
		corrections(kb, memo, key, v, par->share, corr, wsum);
	} else {
		memset(corr, 0, sizeof(corr));
		memset(wsum, 0, sizeof(wsum));
	}
	/* Noise is pooled over the arms (the exploit arm knows it best) and
	 * shrunk into each arm's own mean spread (arm_summary). */
	for (int i = 0; i < v->nb; i++)
		if (v->b[i].n >= 2) {
			pss += (double)(v->b[i].n - 1) * v->b[i].mu * v->b[i].mu;
			pdf += (double)(v->b[i].n - 1);
		}
	pooled = pdf >= 4 ? sqrt(pss / pdf) : SIGMA_FEW;
	for (int i = 0; i < v->nb; i++) {
		struct belief *x = &v->b[i];
		double own = x->n >= 2 ? (double)(x->n - 1) : 0;
		double sig = fmax(sqrt((own * x->mu * x->mu + POOL_DF * pooled * pooled) /
				       (own + POOL_DF)), SIGMA_FLOOR);
		double n = (double)x->n;

		x->m0 += corr[x->arm];
		if (!cold && x->n && lone_outlier(x->n, x->r, x->m0)) {
			x->n = 0;	/* against the corrected prior too */
			x->r = NAN;
			n = 0;
		}
		if (cold) {
			if (x->n) {
				x->mu = x->r;
				x->sd = sig / sqrt(n);
				if (x->mu < ref)
					ref = x->mu;
			} else {
				x->mu = NAN;
			}
			continue;
		}
		{
			/* One Gaussian update: the prior's precision in the mean
			 * is the one in the sd, so the pseudo-count of the prior
			 * is (sig/t)^2 scaled by prior_weight (default 0.5 = 1x):
			 * borrowed evidence can tighten the prior, never make it
			 * outweigh a handful of the arm's own samples. */
			double boost = fmin(wsum[x->arm], SHRINK_MAX);
			double t = tau / sqrt(1.0 + boost);

			/* One or two samples slower than the prior may be an
			 * outlier short of the lone-outlier cut: their spread is
			 * at least half the disagreement, so the arm is looked at
			 * again instead of being written off for good. */
			if (x->n && x->n <= 2 && x->r > x->m0)
				sig = fmax(sig, 0.5 * (x->r - x->m0));
			double p0 = 2.0 * par->prior_weight / (t * t);
			double pd = n / (sig * sig);

			x->mu = x->n ? (p0 * x->m0 + pd * x->r) / (p0 + pd) : x->m0;
			x->sd = 1.0 / sqrt(1.0 / (t * t) + pd);
		}
		if (x->m0 < best0)
			best0 = x->m0;
		if (x->mu < bestmu)
			bestmu = x->mu;
	}
	v->miss = model_miss(v);
	if (cold) {
		/* Unmeasured arms: a flat belief around the best measurement, or
		 * around AUTO's own prediction before anything was measured. */
		if (!isfinite(ref))
			ref = prior_q(c->prior[v->auto_arm]);
		for (int i = 0; i < v->nb; i++)
			if (!v->b[i].n) {
				v->b[i].mu = ref;
				v->b[i].sd = COLD_SD;
			}
		return 0;
	}
	win = BOT_Q_PER_OCTAVE * log2(par->plausible > 1 ? par->plausible : 1);
	for (int i = 0; i < v->nb; i++) {
		struct belief *x = &v->b[i];

		x->plausible = x->arm == v->auto_arm || x->m0 <= best0 + win ||
			       (x->n && x->mu <= bestmu + win);
	}
	return 0;
}

/* Lowest posterior mean among plausible arms (ties: lowest arm). */
static int argmin_mu(const struct view *v)
{
	int best = -1;

	for (int i = 0; i < v->nb; i++)
		if (v->b[i].plausible && (best < 0 || v->b[i].mu < v->b[best].mu))
			best = i;
	return best;
}

/* ---- plan layout ------------------------------------------------------ */

static void plan_auto(struct bot_plan *out)
{
	memset(out, 0, sizeof(*out));
	out->exploit = BOT_ARM_AUTO;
}

static void plan_one(struct bot_plan *out, int arm)
{
	memset(out, 0, sizeof(*out));
	out->exploit = (uint8_t)arm;
}

/* Lay nprobe ranges of the given widths out contiguously, starting at a
 * pseudo-random offset so that a communicator with a fixed probe bucket is
 * not always the one probing. Widths must be >= 1 and sum to <= 256. */
static void layout(struct bot_plan *out, const int *arm, const unsigned *width, unsigned k,
		   uint64_t seed, uint64_t key, uint64_t round)
{
	unsigned total = 0, lo;

	for (unsigned i = 0; i < k; i++)
		total += width[i];
	lo = total < BOT_PROBE_BUCKETS ?
		(unsigned)(bot_rng(seed, STREAM_OFFSET, key, round) % (BOT_PROBE_BUCKETS - total + 1)) : 0;
	out->nprobe = (uint8_t)k;
	for (unsigned i = 0; i < k; i++) {
		out->probe[i].arm = (uint8_t)arm[i];
		out->probe[i].lo = (uint16_t)lo;
		out->probe[i].hi = (uint16_t)(lo + width[i]);
		lo += width[i];
	}
}

/* Scale widths down so they sum to at most cap (each stays >= 1). */
static void cap_widths(unsigned *width, unsigned k, unsigned cap)
{
	unsigned total = 0;

	for (unsigned i = 0; i < k; i++)
		total += width[i];
	if (total <= cap || !total)
		return;
	for (unsigned i = 0; i < k; i++) {
		unsigned w = (unsigned)((uint64_t)width[i] * cap / total);

		width[i] = w ? w : 1;
	}
}

static unsigned budget(const struct bot_policy_params *par)
{
	double f = par->probe_frac;

	if (!(f > 0))
		return 0;
	if (f > 1)
		f = 1;
	return (unsigned)floor(f * BOT_PROBE_BUCKETS + 0.5);
}

static unsigned comm_width(const struct bot_shape *s)
{
	uint32_t nc = s->ncomms ? s->ncomms : 1;

	return (BOT_PROBE_BUCKETS + nc - 1) / nc;
}

/* ---- policies --------------------------------------------------------- */

/* Standard normal quantile (Acklam's rational approximation, |err| < 1.2e-9). */
static double norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
		-2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01,
		2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
		-1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
		-2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00,
		2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
		2.445134137142996e+00, 3.754408661907416e+00 };
	double q, r;

	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	if (p > 1 - 0.02425) {
		q = sqrt(-2 * log(1 - p));
		return -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		       ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	q = p - 0.5;
	r = q * q;
	return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
	       (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

static double draw_normal(uint64_t seed, uint64_t key, int arm, uint64_t idx)
{
	uint64_t h = bot_rng(seed, STREAM_THOMPSON + (uint64_t)arm, key, idx);

	return norm_quantile(((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0));
}

/* Thompson: probability matching over plausible arms. */
static void plan_thompson(const struct bot_policy *p, const struct view *v, uint64_t key,
			  const struct bot_shape *s, struct bot_plan *out)
{
	int ex = argmin_mu(v), cand[BOT_NARMS], nc = 0, arm[BOT_MAX_PROBES];
	unsigned wins[BOT_NARMS] = { 0 }, width[BOT_MAX_PROBES], k = 0, K, minw;
	double wide_p;
	double hi = INFINITY;
	int used[BOT_NARMS] = { 0 };

	plan_one(out, v->b[ex].arm);
	for (int i = 0; i < v->nb; i++)
		if (v->b[i].plausible)
			hi = fmin(hi, v->b[i].mu + PRUNE_Z * v->b[i].sd);
	for (int i = 0; i < v->nb; i++)
		if (v->b[i].plausible &&
		    v->b[i].mu - PRUNE_Z * v->b[i].sd * (v->b[i].n ? 1 : WIDE_K) <= hi)
			cand[nc++] = i;
	if (nc <= 1 || budget(&p->par) == 0)
		return;
	K = s->ncomms > 1 ? 64 : 8;
	wide_p = s->ncomms > 1 ? WIDE_PJ : WIDE_P;
	for (unsigned k2 = 0; k2 < K; k2++) {
		int w = -1;
		double wx = INFINITY;

		for (int j = 0; j < nc; j++) {
			const struct belief *x = &v->b[cand[j]];
			uint64_t idx = s->round * K + k2;
			double d = x->mu + x->sd * draw_normal(s->seed, key, x->arm, idx);

			/* AUTO's error is heavy-tailed: an unmeasured arm's
			 * prior is a mixture, WIDE_P of it WIDE_K times wider. */
			if (!x->n && (double)(bot_rng(s->seed, STREAM_WIDE + (uint64_t)x->arm, key, idx) >> 11) *
					     (1.0 / 9007199254740992.0) < wide_p)
				d = x->mu + WIDE_K * (d - x->mu);

			if (d < wx) {
				wx = d;
				w = cand[j];
			}
		}
		wins[w]++;
	}
	/* Up to BOT_MAX_PROBES non-exploit arms, most wins first. */
	minw = s->ncomms > 1 ? comm_width(s) : 1;
	used[ex] = 1;
	while (k < BOT_MAX_PROBES) {
		int bi = -1;
		unsigned w;

		for (int j = 0; j < nc; j++)
			if (!used[cand[j]] && wins[cand[j]] && (bi < 0 || wins[cand[j]] > wins[bi]))
				bi = cand[j];
		if (bi < 0)
			break;
		used[bi] = 1;
		w = (unsigned)(((uint64_t)wins[bi] * BOT_PROBE_BUCKETS + K / 2) / K);
		if (s->ncomms > 1 && 2 * (uint64_t)wins[bi] * s->ncomms >= K && w < minw)
			w = minw;
		arm[k] = v->b[bi].arm;
		width[k++] = w ? w : 1;
	}
	if (!k)
		return;
	cap_widths(width, k, budget(&p->par));
	layout(out, arm, width, k, s->seed, key, s->round);
}

/* UCB1 on lower confidence bounds (we minimise latency). */
static void plan_ucb(const struct bot_policy *p, const struct view *v, uint64_t key,
		     const struct bot_shape *s, struct bot_plan *out)
{
	double lcb[BOT_NARMS], tot = 1, z;
	int ex = argmin_mu(v), arm[BOT_MAX_PROBES], used[BOT_NARMS] = { 0 };
	unsigned width[BOT_MAX_PROBES], k = 0;

	for (int i = 0; i < v->nb; i++)
		tot += (double)v->b[i].n;
	z = p->par.ucb_c * sqrt(2.0 * log(tot + 1.0));
	/* Unmeasured arms: the heavy tail of AUTO's error (see thompson). */
	for (int i = 0; i < v->nb; i++)
		lcb[i] = v->b[i].mu - z * v->b[i].sd * (v->b[i].n ? 1 : UCB_WIDE);
	if (s->ncomms <= 1) {
		int bi = -1;

		for (int i = 0; i < v->nb; i++)
			if (v->b[i].plausible && (bi < 0 || lcb[i] < lcb[bi]))
				bi = i;
		plan_one(out, v->b[bi].arm);
		return;
	}
	plan_one(out, v->b[ex].arm);
	used[ex] = 1;
	while (k < BOT_MAX_PROBES) {
		int bi = -1;

		for (int i = 0; i < v->nb; i++)
			if (v->b[i].plausible && !used[i] && lcb[i] < v->b[ex].mu &&
			    (bi < 0 || lcb[i] < lcb[bi]))
				bi = i;
		if (bi < 0)
			break;
		used[bi] = 1;
		arm[k] = v->b[bi].arm;
		width[k++] = comm_width(s);
	}
	if (!k || budget(&p->par) == 0)
		return;
	cap_widths(width, k, budget(&p->par));
	layout(out, arm, width, k, s->seed, key, s->round);
}

static void plan_egreedy(const struct bot_policy *p, const struct view *v, uint64_t key,
			 const struct bot_shape *s, struct bot_plan *out)
{
	int ex = argmin_mu(v), list[BOT_NARMS], nl = 0, arm[BOT_MAX_PROBES];
	unsigned width[BOT_MAX_PROBES], k, tot;

	plan_one(out, v->b[ex].arm);
	for (int i = 0; i < v->nb; i++)
		if (v->b[i].plausible && i != ex)
			list[nl++] = v->b[i].arm;
	tot = (unsigned)floor(p->par.epsilon * BOT_PROBE_BUCKETS + 0.5);
	if (!nl || !tot)
		return;
	k = nl < BOT_MAX_PROBES ? (unsigned)nl : BOT_MAX_PROBES;
	if (k > tot)
		k = tot;
	for (unsigned i = 0; i < k; i++) {
		arm[i] = list[(s->round + i) % (unsigned)nl];
		width[i] = tot / k;
	}
	layout(out, arm, width, k, s->seed, key, s->round);
}

/* Spread the buckets evenly over `per` arms of the supported list starting
 * at position `start` (sweep and etc's exploration): the first arm is the
 * exploit and keeps [0, 256/per), the others take the following shares. */
static void plan_spread(const struct view *v, uint64_t start, unsigned per, struct bot_plan *out)
{
	unsigned nb = (unsigned)v->nb;

	if (per > nb)
		per = nb;
	if (per > BOT_MAX_PROBES + 1)
		per = BOT_MAX_PROBES + 1;
	if (per == 0)
		per = 1;
	plan_one(out, v->b[start % nb].arm);
	out->nprobe = (uint8_t)(per - 1);
	for (unsigned i = 1; i < per; i++) {
		out->probe[i - 1].arm = (uint8_t)v->b[(start + i) % nb].arm;
		out->probe[i - 1].lo = (uint16_t)(i * BOT_PROBE_BUCKETS / per);
		out->probe[i - 1].hi = (uint16_t)((i + 1) * BOT_PROBE_BUCKETS / per);
	}
}

static void plan_sweep(const struct view *v, const struct bot_shape *s, struct bot_plan *out)
{
	unsigned per = (unsigned)v->nb < BOT_MAX_PROBES + 1 ? (unsigned)v->nb : BOT_MAX_PROBES + 1;

	plan_spread(v, s->round * per, per, out);
}

static void plan_etc(const struct bot_policy *p, const struct view *v, const struct bot_shape *s,
		     struct bot_plan *out)
{
	unsigned nb = (unsigned)v->nb, per, cycle;
	double rounds;
	int best = -1;

	per = s->ncomms > 1 ? s->ncomms : 1;
	if (per > nb)
		per = nb;
	if (per > BOT_MAX_PROBES + 1)
		per = BOT_MAX_PROBES + 1;
	cycle = (nb + per - 1) / per;
	rounds = p->par.etc_rounds * cycle;
	if ((double)s->round < rounds) {
		plan_spread(v, s->round * per, per, out);
		return;
	}
	for (int i = 0; i < v->nb; i++)
		if (v->b[i].n && (best < 0 || v->b[i].r < v->b[best].r))
			best = i;
	plan_one(out, best < 0 ? v->auto_arm : v->b[best].arm);
}

static void plan_greedy_cold(const struct view *v, struct bot_plan *out)
{
	int best = -1;

	for (int i = 0; i < v->nb; i++)
		if (v->b[i].n && (best < 0 || v->b[i].r < v->b[best].r))
			best = i;
	plan_one(out, best < 0 ? v->auto_arm : v->b[best].arm);
}

/* ---- safe exploration (doc/policies.md) -------------------------------- */

static const struct belief *view_arm(const struct view *v, int arm)
{
	for (int i = 0; i < v->nb; i++)
		if (v->b[i].arm == arm)
			return &v->b[i];
	return NULL;
}

/* NCCL's cost model's ratio of arm b to AUTO's arm; NaN where the prior
 * has no usable entry for either. */
static double model_ratio(const struct view *v, const struct belief *b)
{
	double pa = (double)v->ctx->prior[v->auto_arm], pb = (double)v->ctx->prior[b->arm];

	return pa > 0 && pb >= 0 ? pb / pa : NAN;
}

/* How much NCCL's cost model understated the arms measured in this
 * context: the largest measured ratio (robust means, arm against AUTO's
 * arm) over the model's ratio, among arms with SAFE_MISS_N samples of
 * evidence here, at least 1, at most SAFE_MISS_CAP; 1 while AUTO's arm or
 * every other arm has less evidence than that. An arm without samples
 * is judged as if the model understated it as much (safe_excess, worst_ok,
 * worst_judged): the model's errors within a context are alike (the same
 * size, scale and fabric), so where a probe found an arm 1.4x slower than
 * rated, the next arm rated near AUTO's is not trusted as if nothing had
 * happened (real data, modal-a100 allreduce 16 MiB on 4 nodes: tree/ll128
 * rated 1.15x measured 1.58x, then ring/simple rated 1.20x measured 3.32x
 * harmed the context by 5.1 points in jobs mode). Only misses that make
 * arms slower count: a model that was pessimistic about one arm says
 * nothing safe about another. A forecast: what was spent (safe_history) is
 * counted without it. */
static double model_miss(const struct view *v)
{
	const struct belief *a = view_arm(v, v->auto_arm);
	double m = 1;

	if (!a || a->n < SAFE_MISS_N)
		return 1;
	for (int i = 0; i < v->nb; i++) {
		const struct belief *x = &v->b[i];
		double mr;

		if (x->arm == v->auto_arm || x->n < SAFE_MISS_N)
			continue;
		mr = model_ratio(v, x);
		if (mr > 0)
			m = fmax(m, exp2((x->r - a->r) / BOT_Q_PER_OCTAVE) / mr);
	}
	return fmin(m, SAFE_MISS_CAP);
}

/* Pessimistic excess of one call on arm b over one call of AUTO's arm, in
 * AUTO calls: exactly 0 for AUTO's arm itself (it is the baseline); when
 * both are measured here, the upper bound of b against the lower bound la
 * of AUTO's arm (negative: a saving); otherwise the cost model's ratio
 * (or the corrected one, when lower) made pessimistic: times `miss` (the
 * model's miss here, v->miss, for a plan; 1 for what was spent) and 1 +
 * SAFE_MARGIN, at least SAFE_FLOOR (doc/policies.md). AUTO's errors are
 * heavy-tailed, so this charge can be too low; an arm so charged is only
 * ever probed, never exploited before it has samples (safe_clip). */
static double safe_excess(const struct view *v, const struct belief *b, double la, int auto_measured,
			  double miss)
{
	const struct belief *a;
	double ratio;

	if (b->arm == v->auto_arm)
		return 0;
	/* the posterior mean, or the arm's own samples' mean when higher:
	 * a prior that favours the arm never makes it look safer */
	if (b->n && auto_measured)
		return exp2((fmax(b->mu, b->r) + SAFE_Z * b->sd - la) / BOT_Q_PER_OCTAVE) - 1.0;
	ratio = model_ratio(v, b);
	if (isnan(ratio))
		return INFINITY;
	/* the cost model corrected by what neighbours and other scales
	 * measured, against AUTO's measured lower bound, when it is lower */
	a = view_arm(v, v->auto_arm);
	if (a) {
		double rc = exp2((b->m0 - (auto_measured ? la : a->m0)) / BOT_Q_PER_OCTAVE);

		if (rc < ratio)
			ratio = rc;
	}
	return fmax(SAFE_FLOOR, ratio * miss * (1.0 + SAFE_MARGIN) - 1.0);
}

/* The widest range (at most one communicator's share of the buckets) that
 * two or more of nc communicators land in with probability at most
 * SAFE_LUMP: each communicator's bucket is uniform and independent of the
 * others' (a hash of its id), so the number in a range of w buckets is
 * Binomial(nc, w / 256). A probe whose charge is a guess (an arm without
 * samples, or any arm while AUTO's has none) is charged one
 * communicator's round; without this narrowing a range of 256/nc buckets
 * holds two or more communicators about a quarter of the time (8
 * communicators: 26 %, three or more 7 %), each paying the arm's true excess for a
 * whole round. At least 1 bucket (above ~90 communicators even that holds
 * two with more than SAFE_LUMP). */
static int lumps_ok(uint32_t nc, unsigned w, double chance)
{
	double f = (double)w / BOT_PROBE_BUCKETS, q = pow(1.0 - f, (double)nc - 1);

	return 1.0 - q * (1.0 - f) - (double)nc * f * q <= chance;
}

/* The widest such range for a chance of two or more (SAFE_LUMP, or
 * SAFE_WORST_LUMP for an arm the worst-case lump rule judges). */
static unsigned guess_width(uint32_t nc, double chance)
{
	/* one communicator's share, rounded up (64-bit: nc near 2^32 must not wrap) */
	unsigned lo = 1, hi = (unsigned)((BOT_PROBE_BUCKETS + (uint64_t)(nc ? nc : 1) - 1) /
					 (nc ? nc : 1));

	if (nc <= 1 || lumps_ok(nc, hi, chance))
		return hi;
	/* the chance of two or more grows with w: bisect for the widest
	 * range that keeps it within `chance` (lo ok or 1, hi not ok) */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;

		if (lumps_ok(nc, mid, chance))
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* The rounds a plan of shape s pays before any of them is counted: its own
 * and those in flight, assumed to have run it (safe_clip). */
static double paid_rounds(const struct bot_shape *s)
{
	return 1.0 + s->inflight;
}

/* The range an arm without samples here is tried on first, in a round of
 * shape s: guess_width's, narrowed where rounds are in flight so that the
 * communicators expected to land in it before its first sample can be seen
 * (this round's and the s->inflight rounds' before it, which ran the same
 * plan) are about one, at least one bucket. At 8 communicators: 11 buckets
 * with up to one round in flight (the replay's default delay of 2; 0.69
 * expected over both rounds), 8 with 3 (1.0), 1 with 29 (0.94); past 31
 * (8 communicators) the one bucket expects more than one. This bounds the
 * expected exposure, not guess_width's 5 % chance of two or more: over
 * several rounds that chance is 15 % at 1 in flight, 26 % at 3. An arm the
 * worst-case lump rule judges gets guess_width's SAFE_WORST_LUMP range
 * (chance: which of the two). */
static unsigned guess_range(const struct bot_shape *s, double chance)
{
	uint32_t nc = s->ncomms ? s->ncomms : 1;
	unsigned w = guess_width(nc, chance);
	double cap = floor(BOT_PROBE_BUCKETS / ((double)nc * paid_rounds(s)));

	if (cap < (double)w)
		w = cap < 1 ? 1 : (unsigned)cap;
	return w;
}

/* A round is lumpy when it holds several communicators or several calls: a
 * communicator whose bucket falls in a probe's range runs the arm for the
 * whole round (safe_clip). */
static int lumpy(const struct bot_shape *s)
{
	return s->ncomms > 1 || s->calls > 1;
}

/* The ratio the worst-case lump rule judges arm b by: the cost model's,
 * times its miss here. */
static double doubted_ratio(const struct view *v, const struct belief *b)
{
	return model_ratio(v, b) * v->miss;
}

/* The worst-case lump rule (SAFE_TRUST): may arm b, without samples here,
 * be probed on lumps of `lump` calls (one communicator's round) by a context
 * with `calls` calls so far, this round included? Yes when NCCL's own cost
 * model rates it within SAFE_TRUST of AUTO's arm, or when even SAFE_WORST_K
 * times the model's ratio would cost at most SAFE_WORST_CAP of those calls.
 * The ratio is the cost model's as NCCL gave it, never the one corrected by
 * neighbours: a correction borrowed from other sizes is what made an arm
 * truly 5.25x slower look 1.16x (aws-g5-a10g, real data); only the model's
 * miss measured here (model_miss) scales it (doubted_ratio). The budget's
 * charge (safe_excess) is an expected cost; this bounds one bad surprise. */
static int worst_ok(const struct view *v, const struct belief *b, double lump, double calls)
{
	double ratio = doubted_ratio(v, b);

	if (isnan(ratio))
		return 0;
	if (ratio <= SAFE_TRUST)
		return 1;
	return lump * (ratio * SAFE_WORST_K - 1.0) <= SAFE_WORST_CAP * calls;
}

/* Does the rule judge arm b (it has no samples here, is not AUTO's, and the
 * model rates it, times its miss here, above SAFE_TRUST)? Its first range is
 * then the narrower SAFE_WORST_LUMP one (safe_clip). */
static int worst_judged(const struct view *v, const struct belief *b)
{
	return !b->n && b->arm != v->auto_arm && doubted_ratio(v, b) > SAFE_TRUST;
}

/* Does the rule forbid arm b now? Only an arm without samples here, never
 * AUTO's own. */
static int worst_forbids(const struct view *v, const struct belief *b, double lump, double calls)
{
	return !b->n && b->arm != v->auto_arm && !worst_ok(v, b, lump, calls);
}

/* A context's calls as one communicator counts them. The stored `calls` add
 * every rank's summaries (formats.md 12), a communicator's calls times the
 * ranks that wrote them: read as they are, a context on 128 ranks looks 128
 * times busier than it is, and the budget and the worst-case lump rule,
 * which compare a round's calls with the calls so far, are that many times
 * looser. Divided by the key's nRanks they are a communicator's calls
 * (fewer where some ranks wrote nothing: the safe side). */
static double comm_calls(const struct bot_kb_ctx *c)
{
	uint32_t nr = bot_key_nranks(c->key);

	return (double)c->calls / (double)(nr ? nr : 1);
}

/* What the context has spent and earned: *spent = the pessimistic net
 * excess of its measured calls over AUTO's arm (the gross excess, at least
 * the state's `explore`, less the pessimistic savings) and *base = the calls
 * AUTO's arm alone would have made, both in calls when the context counts
 * its calls (samples scaled by calls / samples), else in samples; *gross =
 * the gross excess alone; *la = AUTO's lower bound (q), *am = whether AUTO's
 * arm has samples here. -1 when AUTO's arm is not in the view. */
static int safe_history(const struct view *v, double *spent, double *gross, double *base, double *la,
			double *rate, int *am)
{
	const struct belief *a = view_arm(v, v->auto_arm);
	double g = 0, sv = 0, n = 0, r = 1, st;

	if (!a)
		return -1;
	*la = (a->n ? fmin(a->mu, a->r) : a->mu) - SAFE_Z * a->sd;
	*am = a->n > 0;
	for (int i = 0; i < v->nb; i++) {
		const struct belief *x = &v->b[i];
		double e = 0;

		n += (double)x->n_all;
		if (x->n)
			e = (double)x->n_all * safe_excess(v, x, *la, *am, 1.0);
		else if (x->n_all)	/* a lone outlier the planner set aside: its
					 * calls were paid for all the same */
			e = (double)x->n_all * fmax(safe_excess(v, x, *la, *am, 1.0),
						    *am ? exp2((x->r_all - *la) / BOT_Q_PER_OCTAVE) - 1.0 : 0);
		if (e > 0)
			g += e;
		else
			sv -= e;
	}
	/* samples per call (one assumed where there is none: what the
	 * sample lag reads; nothing here changes with it, every sum is 0) */
	if (v->ctx->calls)
		r = fmax(n, 1.0) / comm_calls(v->ctx);
	g /= r;
	sv /= r;
	n /= r;
	/* what the state remembers was spent (the gross never decreases) */
	st = (double)v->ctx->explore / 65536.0;
	if (st > g)
		g = st;
	*gross = g;
	*spent = g - sv;
	*base = n;
	*rate = r;
	return 0;
}

/* This round's calls in safe_history's unit (rate: its samples per call):
 * the shape's, communicators x calls per communicator. (The context's
 * average over the rounds so far is not a measure of a job: a state's
 * rounds count merges, and one compactor run merges many steps.) */
static double round_calls(const struct view *v, const struct bot_shape *s, double rate)
{
	double r = (double)(s->ncomms ? s->ncomms : 1) * (double)(s->calls ? s->calls : 1);

	return v->ctx->calls ? r : r * rate;
}

/* The sample lag: how many rounds a communicator's probe runs, on average,
 * before it returns a sample (at least 1). The budget counts what was spent
 * from samples (safe_history), so a probe that returned none cost nothing
 * yet: re-admitted round after round against a slack that only grows, ring/ll
 * (6x) ran 13 communicator-epochs of one context before its first sample
 * arrived (real data, epochs mode, 0.1 % sampling: 16 contexts harmed, the
 * mean above AUTO's). Where a communicator's round yields fewer than one
 * sample on average, a probe is admitted only while the slack covers this
 * many rounds of it, what it will have cost on average by the time it is
 * counted; a sample then stands for 1 / rate calls, so that the count
 * catches up. The rate is safe_history's: the context's samples of the arms
 * in view (AUTO's included) per call, one sample assumed where it has none
 * (the compactor's decay keeps samples and calls in step, formats.md
 * section 14). Without calls the lag is 1 (the first job knows no rate: its
 * budget is 1 % of one round, too small for most probes anyway). safe_clip
 * makes no probe whose range would wait more than BOT_MAX_LAG rounds for a
 * sample and costs more than the exploit: it would not be measured in a
 * thousand rounds. */
#define BOT_MAX_LAG 1024.0
static double sample_lag(const struct view *v, const struct bot_shape *s, double rate)
{
	double per = rate * (double)(s->calls ? s->calls : 1);

	return !v->ctx->calls || per >= 1 ? 1 : 1.0 / per;
}

/* The lump the worst-case lump rule bounds, in calls (r: the round's): one
 * communicator's round for each round the probe runs before it is counted
 * (the sample lag), and the communicators expected to have landed in its
 * range in the rounds still in flight (s->inflight), which the knowledge
 * base has not seen yet (their expected number, not a tail bound). An arm
 * the rule judges has no samples here, so its range is at most guess_range's
 * for SAFE_WORST_LUMP.
 * The lump is compared with the calls that have run, those in flight
 * included: the rule bounds one surprise as a share of the calls it is paid
 * out of, where the budget (safe_clip) books only what has been counted. */
static double worst_lump(const struct view *v, const struct bot_shape *s, double rate, double r)
{
	uint32_t nc = s->ncomms ? s->ncomms : 1;
	double fg = (double)guess_range(s, SAFE_WORST_LUMP) / BOT_PROBE_BUCKETS;

	return r / (double)nc * sample_lag(v, s, rate) + r * fg * (double)s->inflight;
}

/* Where probes are lumps, an arm the worst-case lump rule forbids now is no
 * candidate for the planner: a policy that kept proposing it (a cold
 * policy's optimism about an arm without samples) would have it dropped by
 * safe_clip round after round and starve the arms it could try. */
static void worst_filter(const struct view *judge, const struct bot_shape *s, struct view *v)
{
	double spent, gross, n, la, rate, r, lump;
	int am;

	if (!lumpy(s) || safe_history(judge, &spent, &gross, &n, &la, &rate, &am) < 0)
		return;
	r = round_calls(judge, s, rate);
	lump = worst_lump(judge, s, rate, r);
	for (int i = 0; i < judge->nb; i++) {
		if (!worst_forbids(judge, &judge->b[i], lump, n + r * paid_rounds(s)))
			continue;
		for (int j = 0; j < v->nb; j++)
			if (v->b[j].arm == judge->b[i].arm)
				v->b[j].plausible = 0;
	}
}

/* Does AUTO's arm need the baseline refresh (SAFE_REFRESH_N) under this
 * plan? Only for a policy that probes (greedy, greedy-cold and frozen plan
 * no probe, and frozen never learns from one), while another arm is
 * exploited, and where the ranks can measure AUTO's arm (else its samples,
 * imported, never grow and the refresh would never end). The evidence is
 * 3..19: at 1 or 2 samples this slow, AUTO's arm counts as unmeasured
 * (lone_outlier) and no arm is judged against it. */
static int refresh_due(const struct bot_policy *p, const struct view *v, const struct bot_plan *out,
		       uint64_t key)
{
	const struct belief *a = view_arm(v, v->auto_arm);
	int id = base_id(p->id);

	if (id == BOT_POLICY_GREEDY || id == BOT_POLICY_GREEDY_COLD || id == BOT_POLICY_FROZEN)
		return 0;
	return a && a->n && a->n < SAFE_REFRESH_N && out->exploit != v->auto_arm &&
	       a->r > a->m0 + BOT_TRIM_Q && bot_arm_measurable(v->auto_arm, bot_key_nnodes(key));
}

/* Clip a plan to the budget: with R the calls of this round, S the net
 * spent excess and N the calls so far, keep S + R * (plan's excess per call)
 * <= budget * (N + R). Where rounds are in flight (s->inflight: run on
 * earlier plans, not yet counted), they are assumed to have run this plan:
 * their cost is charged in this plan's check (the exploit's excess, the
 * probes' expected excess), the savings and the budget they earned only
 * once they are counted. Nothing is carried from one plan to the next: a
 * plan that changed since those rounds is charged for its own arms, not for
 * what they ran. The exploit falls back to AUTO when it alone does
 * not fit, and is then probed first instead (else an arm that only
 * borrowed evidence favours would never be measured); probes that cost
 * more than the exploit are taken in the plan's order while the budget
 * covers them. AUTO's arm itself is left to NCCL (BOT_ARM_AUTO), never
 * forced: the budget is against what stock NCCL does, and the arm the
 * prior names AUTO's may not be it. */
static void safe_clip(const struct bot_policy *p, const struct view *v, const struct bot_shape *s,
		      uint64_t key, struct bot_plan *out)
{
	double spent, gross, n, la, rate, r, slack, ex, unit, lag, lump, paid = paid_rounds(s);
	const struct belief *b;
	int arm[BOT_MAX_PROBES + 1], am, refresh = -1;
	unsigned width[BOT_MAX_PROBES + 1], k = 0, nin = 0, tot = 0, gw = 0, gww = 0;

	if (out->exploit == BOT_ARM_AUTO || safe_history(v, &spent, &gross, &n, &la, &rate, &am) < 0) {
		plan_auto(out);
		return;
	}
	/* AUTO's own arm unmeasured and unmeasurable (CollNet, NVLS across
	 * nodes, picked by NCCL): no arm can ever be judged against it, so
	 * nothing a probe measures could be exploited; stay with NCCL */
	if (!am && !bot_arm_measurable(v->auto_arm, bot_key_nnodes(key))) {
		plan_auto(out);
		return;
	}
	r = round_calls(v, s, rate);
	slack = p->par.budget * (n + r) - spent;
	b = view_arm(v, out->exploit);
	ex = b ? safe_excess(v, b, la, am, v->miss) : INFINITY;
	/* An arm is measured before every communicator runs it. */
	if (b && !b->n)
		ex = INFINITY;
	if (ex > 0 && r * paid * ex > slack) {
		int demoted = out->exploit;

		if (b && bot_arm_measurable(demoted, bot_key_nnodes(key))) {
			unsigned w = comm_width(s), cap = budget(&p->par);

			arm[nin] = out->exploit;
			width[nin++] = w < cap ? w : cap;
		}
		out->exploit = (uint8_t)v->auto_arm;
		ex = 0;
		/* in its place, the arm measured here (at least SAFE_FALLBACK_N
		 * samples) to be confidently faster than AUTO's (the largest
		 * pessimistic saving), if any: an arm that only borrowed
		 * evidence must not keep one measured to save from being
		 * exploited */
		for (int i = 0; am && i < v->nb; i++) {
			const struct belief *x = &v->b[i];
			double e;

			if (x->n < SAFE_FALLBACK_N || x->arm == v->auto_arm || x->arm == demoted)
				continue;
			e = safe_excess(v, x, la, am, v->miss);
			if (e < ex) {
				ex = e;
				out->exploit = (uint8_t)x->arm;
			}
		}
	}
	if (refresh_due(p, v, out, key) && nin <= BOT_MAX_PROBES) {
		refresh = (int)nin;
		arm[nin] = v->auto_arm;
		width[nin++] = SAFE_REFRESH_W;
	}
	for (unsigned i = 0; i < out->nprobe && nin <= BOT_MAX_PROBES; i++) {
		unsigned w = (unsigned)(out->probe[i].hi - out->probe[i].lo);

		/* a probe of AUTO's the planner made is the refresh's range,
		 * at least SAFE_REFRESH_W wide */
		if (refresh >= 0 && out->probe[i].arm == v->auto_arm) {
			if (w > width[refresh])
				width[refresh] = w;
			continue;
		}
		arm[nin] = out->probe[i].arm;
		width[nin++] = w;
	}
	slack -= r * (ex > 0 ? paid : 1.0) * ex;
	/* A probe is lumpy when a round holds several communicators or several
	 * calls: a communicator whose bucket falls in its range runs the arm
	 * for the whole round, so a probe that happens costs at least one
	 * communicator's round, however narrow its range. It is charged that,
	 * and kept only when the budget covers it; per call (one communicator,
	 * one call a round) a range shrinks to fit. */
	unit = lumpy(s) ? 1.0 / (s->ncomms ? s->ncomms : 1) : 0;
	/* a lumpy probe is charged the rounds it runs before it is counted */
	lag = unit > 0 ? sample_lag(v, s, rate) : 1;
	lump = unit > 0 ? worst_lump(v, s, rate, r) : 0;
	for (unsigned i = 0; i < nin && k < BOT_MAX_PROBES; i++) {
		unsigned w = width[i];
		double d, c, f;

		b = view_arm(v, arm[i]);
		/* AUTO's arm is never forced, not even as a probe: a probe of
		 * it (while another arm is exploited) leaves the call to NCCL,
		 * BOT_ARM_AUTO below, so that the baseline is measured again
		 * (an estimate of it that one slow draw inflated would
		 * otherwise never be corrected); it costs the baseline */
		if (!b || arm[i] == out->exploit || !w)
			continue;
		d = safe_excess(v, b, la, am, v->miss) - ex;
		if (unit > 0 && worst_forbids(v, b, lump, n + r * paid))
			continue;
		/* an arm without samples here is tried on one communicator's
		 * share first: its charge is a guess, its exposure is bounded;
		 * one the worst-case lump rule judges on a narrower range still,
		 * since the rule bounds one communicator's lump */
		if (unit > 0 && (!b->n || !am) && arm[i] != v->auto_arm) {
			if (!gw) {	/* once per plan */
				gw = guess_range(s, SAFE_LUMP);
				gww = guess_range(s, SAFE_WORST_LUMP);
			}
			unsigned cap = worst_judged(v, b) ? gww : gw;

			if (w > cap)
				w = cap;
		}
		f = (double)w / BOT_PROBE_BUCKETS;
		/* a range that holds k communicators returns samples k
		 * times as fast: it runs lag / k rounds before it is counted */
		if (d > 0 && unit > 0 && lag * unit > BOT_MAX_LAG * fmax(f, unit))
			continue;
		c = r * (fmax(f, unit * lag) + f * s->inflight) * d;
		if (d > 0 && c > slack) {
			if (unit > 0 || slack <= 0)
				continue;
			w = (unsigned)floor(slack / (r * d * paid) * BOT_PROBE_BUCKETS);
			if (!w)
				continue;
			c = r * d * paid * w / BOT_PROBE_BUCKETS;
		}
		if (tot + w > BOT_PROBE_BUCKETS)
			continue;
		if (d > 0)
			slack -= c;
		tot += w;
		arm[k] = arm[i];
		width[k++] = w;
	}
	for (unsigned i = 0; i < k; i++)
		if (arm[i] == v->auto_arm)
			arm[i] = BOT_ARM_AUTO;
	if (out->exploit == v->auto_arm)
		out->exploit = BOT_ARM_AUTO;
	memset(out->probe, 0, sizeof(out->probe));
	out->nprobe = 0;
	if (k)
		layout(out, arm, width, k, s->seed, key, s->round);
}

/* Drop the probes of arms the ranks cannot measure (bot_arm_measurable),
 * AUTO's own kept: their buckets fall to the exploit. Such a probe would be
 * paid in every job and never learned from. */
static void strip_unmeasurable(struct bot_plan *out, uint32_t nnodes, int auto_arm)
{
	unsigned k = 0;

	for (unsigned i = 0; i < out->nprobe && i < BOT_MAX_PROBES; i++)
		if (out->probe[i].arm == BOT_ARM_AUTO || out->probe[i].arm == auto_arm ||
		    bot_arm_measurable(out->probe[i].arm, nnodes))
			out->probe[k++] = out->probe[i];
	for (unsigned i = k; i < BOT_MAX_PROBES; i++)
		memset(&out->probe[i], 0, sizeof(out->probe[i]));
	out->nprobe = (uint8_t)k;
}

uint64_t bot_policy_explore_spent(const struct bot_policy *p, const struct bot_kb *kb, uint64_t key)
{
	const struct bot_kb_ctx *c = kb ? bot_kb_find(kb, key) : NULL;
	struct view v;
	double spent, gross, n, la, rate;
	int am;

	if (!c)
		return 0;
	if (!p || build_view(p, kb, NULL, key, 0, &v) < 0 ||
	    safe_history(&v, &spent, &gross, &n, &la, &rate, &am) < 0 || !c->calls || !(gross > 0))
		return c->explore;
	if (gross * 65536.0 >= 18446744073709549568.0)
		return UINT64_MAX;
	return (uint64_t)(gross * 65536.0);
}

double bot_policy_scale_skill(const struct bot_policy *p, const struct bot_kb *kb, uint64_t key)
{
	struct view v;

	if (!p || !kb || !bot_kb_find(kb, key) || build_view(p, kb, NULL, key, 0, &v) < 0)
		return 0;
	return scale_skill(kb, NULL, key, &v);
}

int bot_policy_plan(const struct bot_policy *p, const struct bot_kb *kb, uint64_t key,
		    const struct bot_shape *shape, struct bot_plan *out)
{
	return bot_policy_plan_memo(p, kb, NULL, key, shape, out);
}

int bot_policy_plan_memo(const struct bot_policy *p, const struct bot_kb *kb,
			 struct bot_plan_memo *memo, uint64_t key, const struct bot_shape *shape,
			 struct bot_plan *out)
{
	struct view v;
	int cold, id, schedule;

	if (!out)
		return -1;
	if (memo && memo->kb != kb)
		memo = NULL;
	plan_auto(out);
	if (!p || !shape || p->id < 0 || p->id >= BOT_NPOLICY)
		return -1;
	id = base_id(p->id);
	cold = is_cold(id) || id == BOT_POLICY_ETC;
	schedule = id == BOT_POLICY_AUTO || id == BOT_POLICY_SWEEP || id == BOT_POLICY_ETC ||
		   id == BOT_POLICY_GREEDY_COLD;
	if (schedule) {
		/* Schedules and AUTO need the arms, not the beliefs. */
		size_t idx = bot_kb_index(kb, key);
		const struct bot_kb_ctx *c = bot_kb_at(kb, idx);

		if (!c || !c->has_prior || (v.auto_arm = bot_prior_argmin(c->prior)) < 0)
			return 0;
		v.ctx = c;
		v.idx = idx;
		v.nb = 0;
		for (int a = 0; a < BOT_NARMS; a++) {
			struct belief *x;
			struct arm_sum tmp;
			const struct arm_sum *as = NULL;

			if (!(c->prior[a] >= 0) || !bot_arm_allowed(a, v.auto_arm, p->allow))
				continue;
			/* schedules need no beliefs; a sweep cannot measure
			 * what the ranks cannot either */
			if (id != BOT_POLICY_AUTO && id != BOT_POLICY_SWEEP)
				as = arm_summary(memo, c, idx, a, &tmp);
			if (!view_admits(p, c, v.auto_arm, a, as))
				continue;
			x = &v.b[v.nb++];
			memset(x, 0, sizeof(*x));
			x->arm = a;
			x->plausible = 1;
			if (as && as->ev) {	/* measured: evidence, as in build_view */
				x->r = as->loc;
				x->n = as->ev;
			}
		}
	} else if (build_view(p, kb, memo, key, cold, &v) < 0) {
		return 0;
	} else if (isfinite(p->par.budget)) {
		/* judged as safe_clip will judge it: on the warm view (a cold
		 * view counts a lone outlier as a measurement) */
		struct view w;

		if (!cold)
			worst_filter(&v, shape, &v);
		else if (build_view(p, kb, memo, key, 0, &w) == 0)
			worst_filter(&w, shape, &v);
	}
	switch (id) {
	case BOT_POLICY_AUTO:
		plan_one(out, v.auto_arm);
		break;
	case BOT_POLICY_SWEEP:
		plan_sweep(&v, shape, out);
		break;
	case BOT_POLICY_GREEDY:
	case BOT_POLICY_FROZEN:
		plan_one(out, v.b[argmin_mu(&v)].arm);
		break;
	case BOT_POLICY_GREEDY_COLD:
		plan_greedy_cold(&v, out);
		break;
	case BOT_POLICY_EGREEDY:
		plan_egreedy(p, &v, key, shape, out);
		break;
	case BOT_POLICY_UCB1:
	case BOT_POLICY_UCB1_COLD:
		plan_ucb(p, &v, key, shape, out);
		break;
	case BOT_POLICY_THOMPSON:
	case BOT_POLICY_THOMPSON_COLD:
	case BOT_POLICY_SHADOW:
		plan_thompson(p, &v, key, shape, out);
		break;
	case BOT_POLICY_ETC:
		plan_etc(p, &v, shape, out);
		break;
	}
	strip_unmeasurable(out, bot_key_nnodes(key), v.auto_arm);
	if (id == BOT_POLICY_AUTO || id == BOT_POLICY_SWEEP || !isfinite(p->par.budget))
		return 0;
	/* Safe exploration judges the plan with the warm beliefs, whatever
	 * the policy planned from. */
	if ((schedule || cold) && build_view(p, kb, memo, key, 0, &v) < 0)
		return 0;
	safe_clip(p, &v, shape, key, out);
	return 0;
}
