/*
 * replay.c - the replay engine: protocols, loss accounting, statistics.
 *
 * One engine serves the three modes. Contexts advance in lockstep, round by
 * round, and share one knowledge base per fabric (as a cluster's state is
 * shared): in round r every context is planned once from what the planner
 * knows, each of its communicators gets one arm from the plan and its probe
 * bucket, runs K calls on it, and a few of those calls produce latency
 * samples that reach the knowledge base D rounds later.
 *
 *   mode      rounds R          comms C  calls/round K  delay D  samples per (comm, round)
 *   per-call  calls             1        1              1        1, no skew noise
 *   jobs      jobs              comms    calls          1        sample_rate*K, skewed
 *   epochs    ceil(calls/epoch) comms    epoch          delay    sample_rate*K, skewed
 *
 * A sample is one of the arm's measured sweep samples, drawn by bot_rng()
 * (a bootstrap, never the mean), times 1+|N(0, skew_sd)| for arrival skew
 * in jobs and epochs modes. The draws do not depend on the policy (common
 * random numbers), so policies are compared on the same noise.
 *
 * Two policies are defined by what runs rather than by how they plan:
 * `shadow` plans (as thompson does) but every call runs AUTO's arm, whose
 * samples it learns from; `frozen` plans greedily from knowledge that is
 * not updated during the run (o->frozen, set for its scored run).
 *
 * The loss of a context is the call-weighted mean of mean(arm)/best - 1 over
 * every call, exploration included; an arm the plan names but the data
 * cannot run (BOT_ARM_AUTO, no samples, unsupported) costs what AUTO costs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

/* bot_rng streams of the replay (arbitrary fixed constants). */
#define STREAM_COMM	0x636f6d6d5f696400ULL	/* communicator ids */
#define STREAM_FBN	0x66625f636f756e74ULL	/* how many samples a (comm, round) yields */
#define STREAM_FB	0x66625f73616d706cULL	/* which sample, and its skew */

static const char *const mode_names[BOT_NMODES] = { "per-call", "jobs", "epochs" };

const char *bot_replay_mode_name(int mode)
{
	return mode >= 0 && mode < BOT_NMODES ? mode_names[mode] : NULL;
}

int bot_replay_mode_parse(const char *s)
{
	for (int i = 0; i < BOT_NMODES; i++)
		if (!strcmp(s, mode_names[i]))
			return i;
	if (!strcmp(s, "percall"))
		return BOT_MODE_PERCALL;
	return -1;
}

void bot_replay_opts_default(struct bot_replay_opts *o, int mode)
{
	memset(o, 0, sizeof(*o));
	o->mode = mode;
	o->seed = 0;
	o->calls = mode == BOT_MODE_EPOCHS ? 10000 : 500;
	o->jobs = 20;
	o->comms = 8;
	o->sample_rate = 0.01;
	o->epoch = 100;
	o->delay = 2;
	o->skew_sd = 0.02;
}

uint64_t bot_replay_rounds(const struct bot_replay_opts *o)
{
	switch (o->mode) {
	case BOT_MODE_PERCALL:
		return o->calls;
	case BOT_MODE_JOBS:
		return o->jobs;
	case BOT_MODE_EPOCHS:
		return o->epoch ? (o->calls + o->epoch - 1) / o->epoch : 0;
	}
	return 0;
}

/* ---- node sets ---- */

static int parse_u32(const char *s, const char **end, uint32_t *v)
{
	char *e;
	unsigned long x;

	if (*s < '0' || *s > '9')
		return -1;
	x = strtoul(s, &e, 10);
	if (x < 1 || x > 65535)
		return -1;
	*v = (uint32_t)x;
	*end = e;
	return 0;
}

int bot_nodeset_parse(const char *s, struct bot_nodeset *out, char *err, size_t errlen)
{
	const char *p = s;

	out->n = 0;
	for (;;) {
		uint32_t lo, hi;

		if (out->n == BOT_NODESET_MAX) {
			snprintf(err, errlen, "'%s': more than %d ranges", s, BOT_NODESET_MAX);
			return -1;
		}
		if (parse_u32(p, &p, &lo))
			goto bad;
		hi = lo;
		if (*p == '-' && parse_u32(p + 1, &p, &hi))
			goto bad;
		if (hi < lo)
			goto bad;
		out->lo[out->n] = lo;
		out->hi[out->n] = hi;
		out->n++;
		if (*p == 0)
			return 0;
		if (*p != ',')
			goto bad;
		p++;
	}
bad:
	snprintf(err, errlen, "'%s': expected node counts like 4-8 or 4,8 (1..65535, low-high)", s);
	out->n = 0;
	return -1;
}

int bot_nodeset_has(const struct bot_nodeset *s, uint32_t nnodes)
{
	for (unsigned i = 0; i < s->n; i++)
		if (nnodes >= s->lo[i] && nnodes <= s->hi[i])
			return 1;
	return 0;
}

void bot_nodeset_format(const struct bot_nodeset *s, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < s->n && o < len; i++) {
		if (s->lo[i] == s->hi[i])
			o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? "," : "", s->lo[i]);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%u-%u", i ? "," : "", s->lo[i], s->hi[i]);
	}
}

/* ---- the engine ---- */

struct fb {
	uint32_t ctx;		/* position in ctxs[] */
	uint8_t arm;
	double us;
};

struct fb_buf {
	struct fb *v;
	size_t n, cap;
};

static int fb_push(struct fb_buf *b, uint32_t ctx, int arm, double us)
{
	if (b->n == b->cap) {
		size_t nc = b->cap ? b->cap * 2 : 1024;
		struct fb *nv = realloc(b->v, nc * sizeof(*nv));

		if (!nv)
			return -1;
		b->v = nv;
		b->cap = nc;
	}
	b->v[b->n].ctx = ctx;
	b->v[b->n].arm = (uint8_t)arm;
	b->v[b->n].us = us;
	b->n++;
	return 0;
}

static double unit(uint64_t h)
{
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);	/* [0, 1) */
}

/* |N(0, 1)| from two hashes (Box-Muller). */
static double half_normal(uint64_t h1, uint64_t h2)
{
	double u = 1.0 - unit(h1), v = unit(h2);

	return fabs(sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v));
}

struct run {
	const struct bot_dataset *ds;
	const size_t *ctxs;
	size_t n;
	const struct bot_policy *pol;
	const struct bot_replay_opts *o;
	struct bot_kb **kbs;
	struct bot_plan_memo **memo;	/* per fabric, valid for one round; NULL entries: none */
	const size_t *used;		/* the fabrics of ctxs, ascending */
	size_t nused;
	uint64_t rounds, ncomm, delay;
};

static uint64_t ctx_id(const struct bot_ds_ctx *c)
{
	return bot_mix64(c->key) ^ ((uint64_t)c->fabric << 1);
}

static uint64_t calls_in_round(const struct run *r, uint64_t round)
{
	const struct bot_replay_opts *o = r->o;

	switch (o->mode) {
	case BOT_MODE_PERCALL:
		return 1;
	case BOT_MODE_JOBS:
		return o->calls;
	default:
		if (round + 1 < r->rounds)
			return o->epoch;
		return o->calls - (r->rounds - 1) * o->epoch;
	}
}

static uint64_t comm_id(const struct run *r, const struct bot_ds_ctx *c, uint64_t round, uint64_t i)
{
	/* jobs: fresh communicators every job; otherwise the same ones all along. */
	uint64_t job = r->o->mode == BOT_MODE_JOBS ? round : 0;

	return bot_rng(r->o->seed, STREAM_COMM, ((uint64_t)c->fabric << 32) ^ job, i);
}

/* At most this many feedback samples per (comm, round): beyond a few
 * thousand, more samples of one arm change no estimate, and each is kept
 * until delivered (memory = contexts x comms x samples x delay). */
#define MAX_FEEDBACK 4096

/* Samples one (comm, round) of a context feeds back. */
static uint64_t n_feedback(const struct run *r, const struct bot_ds_ctx *c, uint64_t round,
			   uint64_t i, uint64_t k)
{
	double x, fl;
	uint64_t n;

	if (r->o->mode == BOT_MODE_PERCALL)
		return 1;
	x = r->o->sample_rate * (double)k;
	fl = floor(x);
	n = (uint64_t)fl + (unit(bot_rng(r->o->seed, STREAM_FBN, ctx_id(c), (round << 20) ^ i)) < x - fl);
	return n < MAX_FEEDBACK ? n : MAX_FEEDBACK;
}

/* What a rank measures of a call the data runs on arm eff (-1: left to
 * AUTO, known only from auto,auto rows): the label of its samples, -1 when
 * nothing is measured, and the rows they are drawn from. The ranks label a
 * sample with the arm NCCL ran; for a call left to NCCL that is NCCL's own
 * choice, the argmin of the cost table the tuner sees, which the prior
 * stands for (doc/replay.md). */
static int measured_as(const struct bot_ds_ctx *c, int eff, const double **samples, uint32_t *n)
{
	if (eff >= 0) {
		*samples = c->arm[eff].samples;
		*n = c->arm[eff].n;
		return eff;
	}
	if (!c->nauto || !c->has_prior)
		return -1;
	*samples = c->auto_samples;
	*n = c->nauto;
	return bot_prior_argmin(c->prior);
}

/* nfb samples of one (comm, round), drawn from `samples` (n of them) and
 * labelled `arm` (measured_as). */
static int feed(const struct run *r, struct fb_buf *b, uint32_t pos, const struct bot_ds_ctx *c,
		int arm, const double *samples, uint32_t n, uint64_t round, uint64_t i, uint64_t nfb)
{
	for (uint64_t s = 0; s < nfb; s++) {
		uint64_t b0 = bot_mix64(bot_mix64((round << 16) ^ i) ^ ((uint64_t)arm << 48) ^ s);
		uint64_t h = bot_rng(r->o->seed, STREAM_FB, ctx_id(c), b0);
		double us = samples[h % n];

		if (r->o->mode != BOT_MODE_PERCALL && r->o->skew_sd > 0)
			us *= 1.0 + r->o->skew_sd * half_normal(bot_mix64(h ^ 1), bot_mix64(h ^ 2));
		if (fb_push(b, pos, arm, us))
			return -1;
	}
	return 0;
}

static void deliver(const struct run *r, struct fb_buf *b)
{
	for (size_t j = 0; j < b->n; j++) {
		const struct bot_ds_ctx *c = &r->ds->ctx[r->ctxs[b->v[j].ctx]];

		/* what a rank cannot measure, the replay does not learn either
		 * (AUTO's own arm included: CollNet, NVLS across NCCL's nodes) */
		if (bot_arm_measurable(b->v[j].arm, c->nccl_nodes))
			bot_kb_add_us(r->kbs[c->fabric], c->key, b->v[j].arm, b->v[j].us);
	}
	b->n = 0;
}

/*
 * Plans of one round read knowledge bases that do not change until the next
 * round's delivery, so each fabric's per-arm summaries are computed once per
 * round (bot_plan_memo) instead of once per context that borrows them: the
 * same numbers (bot_policy_plan_memo() plans exactly as bot_policy_plan()),
 * at a cost linear in the contexts instead of in contexts x neighbours. A
 * memo that cannot be allocated is left out (planning is then slower, not
 * different). o->reference keeps the plain path, to compare against.
 */
static void memo_renew(struct run *r)
{
	if (!r->memo)
		return;
	for (size_t u = 0; u < r->nused; u++) {
		size_t f = r->used[u];

		bot_plan_memo_free(r->memo[f]);
		r->memo[f] = bot_plan_memo_new(r->kbs[f]);
	}
}

static int plan_ctx(const struct run *r, const struct bot_ds_ctx *c, uint64_t round, uint64_t k,
		    struct bot_plan *plan, char *err, size_t errlen)
{
	/* the planner is told the communicators it assumes (the ranks' step
	 * table is compiled for --comms, which may not be what the job has) */
	uint32_t pc = r->o->mode == BOT_MODE_PERCALL || !r->o->plan_comms ? (uint32_t)r->ncomm
									   : r->o->plan_comms;
	/* the rounds run before this one whose feedback is still on the way
	 * (none before the first round) */
	uint64_t inflight = round < r->delay - 1 ? round : r->delay - 1;
	struct bot_shape shape = { r->o->seed, pc, k, round, (uint32_t)inflight };
	char name[64];

	struct bot_plan_memo *m = r->memo ? r->memo[c->fabric] : NULL;

	if (!bot_policy_plan_memo(r->pol, r->kbs[c->fabric], m, c->key, &shape, plan) &&
	    !bot_plan_check(plan))
		return 0;
	bot_ctx_format(c->key, name, sizeof(name));
	snprintf(err, errlen, "policy %s failed to plan %s/%s in round %llu", bot_policy_name(r->pol->id),
		 r->ds->fabrics[c->fabric], name, (unsigned long long)round);
	return -1;
}

int bot_replay_run(const struct bot_dataset *ds, const size_t *ctxs, size_t n,
		   const struct bot_policy *pol, const struct bot_replay_opts *o,
		   struct bot_kb **kbs, struct bot_ctx_result *out, char *err, size_t errlen)
{
	struct run r = { ds, ctxs, n, pol, o, kbs, NULL, NULL, 0, 0, 0, 0 };
	struct fb_buf *bufs = NULL;
	double *loss = NULL, *ncalls = NULL, *saved = NULL, *lost = NULL;	/* us */
	unsigned char *used = NULL;
	size_t *ulist = NULL;
	int rc = -1;

	err[0] = 0;
	switch (o->mode) {
	case BOT_MODE_PERCALL:
		r.rounds = o->calls, r.ncomm = 1, r.delay = 1;
		break;
	case BOT_MODE_JOBS:
		r.rounds = o->jobs, r.ncomm = o->comms, r.delay = 1;
		break;
	case BOT_MODE_EPOCHS:
		if (!o->epoch || !o->delay) {
			snprintf(err, errlen, "epochs mode needs --epoch >= 1 and --delay >= 1");
			return -1;
		}
		r.rounds = (o->calls + o->epoch - 1) / o->epoch, r.ncomm = o->comms, r.delay = o->delay;
		break;
	default:
		snprintf(err, errlen, "unknown mode %d", o->mode);
		return -1;
	}
	if (!r.ncomm) {
		snprintf(err, errlen, "--comms must be >= 1");
		return -1;
	}
	bufs = calloc(r.delay, sizeof(*bufs));
	loss = calloc(n ? n : 1, sizeof(*loss));
	ncalls = calloc(n ? n : 1, sizeof(*ncalls));
	saved = calloc(n ? n : 1, sizeof(*saved));
	lost = calloc(n ? n : 1, sizeof(*lost));
	used = calloc(ds->nfabrics ? ds->nfabrics : 1, 1);
	ulist = malloc((ds->nfabrics ? ds->nfabrics : 1) * sizeof(*ulist));
	if (!o->reference)
		r.memo = calloc(ds->nfabrics ? ds->nfabrics : 1, sizeof(*r.memo));
	if (!bufs || !loss || !ncalls || !saved || !lost || !used || !ulist ||
	    (!o->reference && !r.memo))
		goto oom;
	/* Per round, only the fabrics of these contexts are decayed and
	 * memoised: no later plan reads the others' knowledge (a task's
	 * knowledge bases see the history run, then the test run; a fabric
	 * left out of the first is still empty there, and decaying nothing
	 * does nothing), and 65,536 fabrics a round, 500 rounds a run, cost
	 * more than the run itself. */
	for (size_t j = 0; j < n; j++)
		used[ds->ctx[ctxs[j]].fabric] = 1;
	for (size_t f = 0; f < ds->nfabrics; f++)
		if (used[f])
			ulist[r.nused++] = f;
	r.used = ulist;
	for (size_t j = 0; j < n; j++) {
		const struct bot_ds_ctx *c = &ds->ctx[ctxs[j]];

		if (c->has_prior && bot_kb_set_prior(kbs[c->fabric], c->key, c->prior))
			goto oom;
	}

	for (uint64_t round = 0; round < r.rounds; round++) {
		struct fb_buf *b = &bufs[round % r.delay];
		uint64_t k = calls_in_round(&r, round);

		if (round > 0 && pol->par.discount < 1)
			for (size_t u = 0; u < r.nused; u++)
				bot_policy_decay(pol, kbs[ulist[u]], round);	/* between rounds */
		if (round >= r.delay)
			deliver(&r, b);	/* feedback of round - delay */
		memo_renew(&r);	/* the knowledge bases are fixed until the next round */
		for (size_t j = 0; j < n; j++) {
			const struct bot_ds_ctx *c = &ds->ctx[ctxs[j]];
			struct bot_plan plan;

			/* the calls whose feedback just arrived: safe exploration
			 * converts samples to calls with them (doc/policies.md);
			 * counted as a state counts them, once per rank
			 * (formats.md 12) */
			if (round >= r.delay && !o->frozen &&
			    bot_kb_add_calls(kbs[c->fabric], c->key,
					     bot_key_rank_calls(c->key, r.ncomm *
								calls_in_round(&r, round - r.delay))))
				goto oom;
			if (plan_ctx(&r, c, round, k, &plan, err, errlen))
				goto out;
			for (uint64_t i = 0; i < r.ncomm; i++) {
				uint64_t epoch = o->mode == BOT_MODE_JOBS ? 0 : round;
				unsigned bucket = bot_probe_bucket(o->seed, comm_id(&r, c, round, i), c->key, epoch);
				int arm = bot_plan_arm(&plan, bucket);
				int eff, label;
				const double *src;
				uint32_t nsrc;
				double dt;

				if (pol->id == BOT_POLICY_SHADOW)
					arm = BOT_ARM_AUTO;	/* decides, never writes the table */
				eff = bot_ds_effective_arm(c, arm);

				loss[j] += (double)k * bot_ds_arm_loss(c, arm);
				ncalls[j] += (double)k;
				dt = bot_ds_arm_us(c, arm) - c->auto_mean;
				if (dt < 0)
					saved[j] -= (double)k * dt;
				else
					lost[j] += (double)k * dt;
				if (o->frozen || (label = measured_as(c, eff, &src, &nsrc)) < 0)
					continue;
				if (feed(&r, b, (uint32_t)j, c, label, src, nsrc, round, i,
					 n_feedback(&r, c, round, i, k)))
					goto oom;
			}
		}
		if (o->progress)
			o->progress(o->progress_arg, n);
	}
	/* Everything measured has arrived when the final plan is made. */
	for (uint64_t round = r.rounds > r.delay ? r.rounds - r.delay : 0; round < r.rounds; round++)
		deliver(&r, &bufs[round % r.delay]);
	memo_renew(&r);
	for (size_t j = 0; j < n; j++) {
		const struct bot_ds_ctx *c = &ds->ctx[ctxs[j]];
		struct bot_plan plan;

		if (plan_ctx(&r, c, r.rounds, calls_in_round(&r, 0), &plan, err, errlen))
			goto out;
		out[j].run_loss = ncalls[j] > 0 ? loss[j] / ncalls[j] : c->auto_loss;
		out[j].final_loss = bot_ds_arm_loss(c, plan.exploit);
		out[j].final_arm = plan.exploit;
		out[j].saved = saved[j] * 1e-6;
		out[j].lost = lost[j] * 1e-6;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	if (bufs)
		for (uint64_t d = 0; d < r.delay; d++)
			free(bufs[d].v);
	free(bufs);
	free(loss);
	free(ncalls);
	free(saved);
	free(lost);
	if (r.memo)
		for (size_t f = 0; f < ds->nfabrics; f++)
			bot_plan_memo_free(r.memo[f]);
	free(r.memo);
	free(used);
	free(ulist);
	return rc;
}

/* ---- statistics ---- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double nearest_rank(const double *sorted, size_t n, double p)
{
	size_t k = (size_t)ceil(p * (double)n);

	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return sorted[k - 1];
}

void bot_summarize(const double *run_loss, const double *final_loss, size_t n, struct bot_summary *s)
{
	double *v, sum = 0, fsum = 0;

	memset(s, 0, sizeof(*s));
	s->contexts = n;
	if (!n)
		return;
	v = malloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		sum += run_loss[i];
		fsum += final_loss ? final_loss[i] : run_loss[i];
		s->over_10pct += run_loss[i] > 0.10;
		if (v)
			v[i] = run_loss[i];
	}
	s->mean = sum / (double)n;
	s->final_mean = fsum / (double)n;
	if (!v) {
		s->p50 = s->p90 = s->p99 = s->max = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_double);
	s->p50 = nearest_rank(v, n, 0.50);
	s->p90 = nearest_rank(v, n, 0.90);
	s->p99 = nearest_rank(v, n, 0.99);
	s->max = v[n - 1];
	free(v);
}

void bot_summarize_harm(const struct bot_ctx_result *res, const double *auto_loss, size_t n,
			struct bot_summary *s)
{
	s->harmed = 0;
	s->worst_excess = n ? -INFINITY : NAN;
	s->saved = s->lost = 0;
	for (size_t i = 0; i < n; i++) {
		double x = res[i].run_loss - auto_loss[i];

		/* the same arm's loss computed two ways: a rounding residue
		 * (1e-16) is no excess, and not a -0.00% either */
		if (fabs(x) < 1e-12)
			x = 0;
		s->harmed += x > BOT_HARM_MARGIN;
		if (x > s->worst_excess)
			s->worst_excess = x;
		s->saved += res[i].saved;
		s->lost += res[i].lost;
	}
}

/*
 * Paired sign-flip permutation test of the mean difference. Under the null
 * hypothesis (no difference between the policy and AUTO in this scenario)
 * each paired difference is as likely to carry either sign, so the observed
 * |mean| is compared with the |mean| of BOT_SIGNFLIP_DRAWS random sign
 * assignments. The draws are bot_rng() of (seed, scenario), so the p-value is
 * a pure function of its inputs. It tests the mean, the quantity the replay
 * reports (a signed-rank test answers a question about the median: many tiny
 * exploration costs outvote a few large gains there).
 */
#define SIGNFLIP_STREAM 0x7369676e666c6970ULL

/* The sign assignments of draw r: bit k % 64 of word k / 64 flips the k-th
 * nonzero difference. Shared by both implementations below. */
static uint64_t signflip_bits(uint64_t seed, uint64_t r, size_t k)
{
	return bot_rng(seed, SIGNFLIP_STREAM, r, k / 64);
}

/* Observed |sum| over the nonzero differences; 0 when there are none. */
static double signflip_obs(const double *d, size_t n, size_t *m, int *direction)
{
	double obs = 0;

	*m = 0;
	if (direction)
		*direction = 0;
	for (size_t i = 0; i < n; i++)
		if (d[i] != 0 && !isnan(d[i])) {
			obs += d[i];
			(*m)++;
		}
	if (direction && *m)
		*direction = obs > 0 ? 1 : obs < 0 ? -1 : 0;
	return fabs(obs);
}

/* Sums that equal the observed one up to rounding count as extreme. */
static double signflip_tol(double obs)
{
	return 1e-12 * (obs > 1 ? obs : 1);
}

double bot_signflip_reference(const double *d, size_t n, uint64_t seed, int *direction)
{
	size_t m, hits = 0;
	double obs = signflip_obs(d, n, &m, direction), tol = signflip_tol(obs);

	if (m == 0)
		return 1.0;
	for (uint64_t r = 0; r < BOT_SIGNFLIP_DRAWS; r++) {
		double sum = 0;
		uint64_t bits = 0;

		for (size_t i = 0, k = 0; i < n; i++) {
			if (d[i] == 0 || isnan(d[i]))
				continue;
			if (k % 64 == 0)
				bits = signflip_bits(seed, r, k);
			sum += (bits & 1) ? d[i] : -d[i];
			bits >>= 1;
			k++;
		}
		hits += fabs(sum) >= obs - tol;
	}
	return (double)(hits + 1) / (double)(BOT_SIGNFLIP_DRAWS + 1);
}

/* Draws evaluated side by side: each keeps its own running sum, added in
 * the same order as the reference loop (so with the same rounding), but
 * eight independent chains, two per vector, keep the adder busy instead of
 * waiting on one. A sign flip is an exclusive-or of the sign bit, which is
 * exactly what negation does. */
typedef double sf_v2d __attribute__((vector_size(16)));
typedef uint64_t sf_v2u __attribute__((vector_size(16)));
#define SIGNFLIP_VECS 4
#define SIGNFLIP_LANES (2 * SIGNFLIP_VECS)

double bot_signflip(const double *d, size_t n, uint64_t seed, int *direction)
{
	size_t m, hits = 0;
	double obs = signflip_obs(d, n, &m, direction), tol = signflip_tol(obs);
	uint64_t *x;

	if (m == 0)
		return 1.0;
	x = malloc(m * sizeof(*x));
	if (!x)
		return bot_signflip_reference(d, n, seed, direction);
	for (size_t i = 0, k = 0; i < n; i++)
		if (d[i] != 0 && !isnan(d[i]))
			memcpy(&x[k++], &d[i], sizeof(*x));
	for (uint64_t r = 0; r < BOT_SIGNFLIP_DRAWS; r += SIGNFLIP_LANES) {
		sf_v2d sum[SIGNFLIP_VECS];
		sf_v2u bits[SIGNFLIP_VECS];
		const sf_v2u one = { 1, 1 };
		double out[SIGNFLIP_LANES];
		unsigned lanes = BOT_SIGNFLIP_DRAWS - r < SIGNFLIP_LANES ?
				 (unsigned)(BOT_SIGNFLIP_DRAWS - r) : SIGNFLIP_LANES;

		for (unsigned q = 0; q < SIGNFLIP_VECS; q++) {
			sum[q] = (sf_v2d){ 0, 0 };
			bits[q] = (sf_v2u){ 0, 0 };
		}
		for (size_t k = 0; k < m; k++) {
			sf_v2u xv = { x[k], x[k] };

			if (k % 64 == 0)
				for (unsigned q = 0; q < SIGNFLIP_VECS; q++)
					bits[q] = (sf_v2u){ signflip_bits(seed, r + 2 * q, k),
							    signflip_bits(seed, r + 2 * q + 1, k) };
			for (unsigned q = 0; q < SIGNFLIP_VECS; q++) {
				sf_v2u flip = (~bits[q] & one) << 63;

				sum[q] += (sf_v2d)(xv ^ flip);
				bits[q] >>= 1;
			}
		}
		memcpy(out, sum, sizeof(out));
		for (unsigned j = 0; j < lanes; j++)
			hits += fabs(out[j]) >= obs - tol;
	}
	free(x);
	return (double)(hits + 1) / (double)(BOT_SIGNFLIP_DRAWS + 1);
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *pa, const void *pb)
{
	const struct pidx *a = pa, *b = pb;

	if (a->p != b->p)
		return (a->p > b->p) - (a->p < b->p);
	return (a->i > b->i) - (a->i < b->i);
}

void bot_holm(const double *p, size_t n, double *adj)
{
	struct pidx *v = malloc((n ? n : 1) * sizeof(*v));
	double run = 0;

	if (!v) {
		for (size_t i = 0; i < n; i++)
			adj[i] = 1;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		v[i].p = p[i];
		v[i].i = i;
	}
	qsort(v, n, sizeof(*v), cmp_pidx);
	for (size_t j = 0; j < n; j++) {
		double a = (double)(n - j) * v[j].p;

		if (a > 1)
			a = 1;
		if (a > run)
			run = a;
		adj[v[j].i] = run;
	}
	free(v);
}
