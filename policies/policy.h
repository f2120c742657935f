/*
 * policy.h - bandit policies: from knowledge to a plan.
 *
 * Owns the policy registry (doc/formats.md section 10), their parameters and
 * bot_policy_plan(), which turns the knowledge base (prior + statistics) and
 * the shape of what is being planned (how many communicators share the
 * context, how many calls a round holds, which round this is) into a
 * bot_plan. Planning may use floating point; plans are a deterministic
 * function of (policy, parameters, knowledge, key, shape) bit for bit: any
 * randomness is bot_rng() keyed by the shape's seed, the key and the round.
 *
 * Model (details in policy.c): per arm a Gaussian belief on q = 64*log2(ns),
 * prior mean = q(AUTO's entry) + a correction borrowed from neighbouring
 * contexts of the same collective (sizes within +-2 octaves at the same
 * scale, the same bytes per rank at other node counts via bot_kb_peer_*,
 * weakly the other measured arms of this context), weight prior_weight
 * pseudo-samples, sd prior_sd octaves; data = the median-trimmed robust mean.
 * Only supported arms (entry >= 0) within `plausible` x of the best prior,
 * or already measured competitive, are ever planned.
 *
 * Cost: bot_policy_plan() needs no precomputation and no cache; it reads the
 * context, at most ten neighbouring sizes and the context's scale peers,
 * about 1-3 us with a populated kb, so calling it per call is fine. It
 * allocates nothing. The kb may change freely between calls. A caller that
 * plans every context of an unchanging kb passes a bot_plan_memo.
 *
 * Shapes: ncomms <= 1 is per-call mode (round = call index; the caller
 * draws bot_probe_bucket per call, so probe widths are probabilities: for
 * thompson this is Thompson sampling, for ucb1 the exploit is the arm with
 * the lowest lower confidence bound). ncomms > 1: the exploit is the lowest
 * posterior mean and probes are spread over communicators (an arm worth
 * probing gets at least 256/ncomms buckets, i.e. one communicator expected).
 *
 * Policies: auto = AUTO's arm; sweep = every supported arm in turn, up to 5
 * per plan (dataset recording); greedy/frozen = lowest posterior mean, no
 * probes (frozen differs only in the caller never writing); egreedy =
 * greedy + epsilon*256 buckets over plausible arms rotated by round; ucb1;
 * thompson/shadow (shadow plans like thompson; never writing is the
 * caller's business); etc = etc_rounds cycles over all supported arms (no
 * prior; one cycle = ceil(arms / min(ncomms, 5)) rounds), then the lowest
 * robust mean; *-cold = prior_weight 0, share 0, every supported arm
 * plausible, unmeasured arms start from a flat belief; AUTO's arm is only
 * the first exploit. greedy-cold never probes, so it stays on AUTO's arm.
 *
 * Safe exploration (doc/policies.md): every policy but auto, sweep and the
 * -free variants has its plan clipped afterwards (safe_clip in policy.c):
 * the exploit falls back to AUTO's arm and probe ranges shrink until a
 * pessimistic estimate of the context's cumulative latency, this round
 * included, stays within (1 + budget) of AUTO's arm alone. The -free
 * variants (greedy, egreedy, ucb1, thompson) plan as their namesakes
 * without the clip.
 */
#ifndef BOT_POLICY_H
#define BOT_POLICY_H

#include <stdint.h>

#include "kb.h"
#include "plan.h"

struct bot_policy_params {
	double prior_weight;	/* warm-start pseudo-count, in samples */
	double prior_sd;	/* assumed log2 error of the prior (octaves) */
	double probe_frac;	/* share of probe buckets spent exploring per round */
	double epsilon;		/* egreedy */
	double ucb_c;		/* ucb1 exploration constant */
	double discount;	/* per-round multiplier on counts, 1 = none */
	double share;		/* weight of neighbouring contexts' corrections, 0 = off */
	double plausible;	/* arms whose prior is within this factor of the best */
	double etc_rounds;	/* explore-then-commit: rounds spent exploring */
	double budget;		/* safe exploration: the context's pessimistic cumulative
				 * latency stays within (1 + budget) x AUTO's alone
				 * (doc/policies.md); INFINITY for the -free variants */
};

struct bot_policy {
	int id;
	struct bot_policy_params par;
	uint32_t allow;		/* allow-list: bit per arm beyond bot_arm_allowed()'s defaults */
};

/* What a plan is for. */
struct bot_shape {
	uint64_t seed;		/* shared by every rank (step table) */
	uint32_t ncomms;	/* communicators expected to share the context */
	uint64_t calls;		/* calls per communicator in a round */
	uint64_t round;		/* job, epoch or call index */
	uint32_t inflight;	/* rounds already run on earlier plans whose
				 * feedback the knowledge base has not yet seen
				 * (the replay's --delay - 1; 0: each plan sees
				 * every round before it) */
};

/* Defaults for a policy; -1 for an unknown name. */
int bot_policy_init(struct bot_policy *p, const char *name);
/* Set one parameter by name ("prior_weight", ...); -1 unknown key or value
 * out of range. */
int bot_policy_set(struct bot_policy *p, const char *key, double value);
/* Hyperparameter grid for tuning on the training split: 0 and *out filled
 * for i < size, -1 past the end. */
int bot_policy_grid(int id, unsigned i, struct bot_policy_params *out);

/* Plan one context. Without a prior for the key, or with no arm >= 0 in it,
 * the plan is exploit = BOT_ARM_AUTO with no probes ("leave NCCL's choice").
 * Returns 0 or -1 (bad arguments). */
int bot_policy_plan(const struct bot_policy *p, const struct bot_kb *kb, uint64_t key,
		    const struct bot_shape *shape, struct bot_plan *out);

/* Planning many contexts of one kb (a compile): a memo of each arm's
 * robust summary, computed the first time a plan reads it, so that the ten
 * neighbours and the scale peers each context borrows from are summarised
 * once instead of once per borrower. Plans are bit-identical to
 * bot_policy_plan()'s. The kb must not change while the memo is used (a
 * memo made for another kb is ignored). new: NULL on allocation failure. */
struct bot_plan_memo;
struct bot_plan_memo *bot_plan_memo_new(const struct bot_kb *kb);
void bot_plan_memo_free(struct bot_plan_memo *m);
int bot_policy_plan_memo(const struct bot_policy *p, const struct bot_kb *kb,
			 struct bot_plan_memo *memo, uint64_t key, const struct bot_shape *shape,
			 struct bot_plan *out);

/* Apply the policy's discount to every count of kb (bot_kb_decay with
 * num/den = discount in 1/65536 units, `round` the nonce); nothing when
 * discount >= 1. Callers that discount call it once between rounds, each
 * with its round. */
void bot_policy_decay(const struct bot_policy *p, struct bot_kb *kb, uint64_t round);

/* The exploration budget context `key` has spent (doc/policies.md), in
 * doc/formats.md section 12's unit for `explore` (2^-16 of one call of
 * AUTO's arm): the pessimistic excess over AUTO's arm of its measured
 * calls, converted to calls with the context's `calls`, never below its
 * stored `explore`; 0 without a prior, samples or calls. What a writer of
 * the state stores (merges keep the larger). */
uint64_t bot_policy_explore_spent(const struct bot_policy *p, const struct bot_kb *kb, uint64_t key);

/* The weight scale transfer gets in context `key` (doc/policies.md, "Scale
 * transfer's weight"): how well its scale peers' AUTO errors predicted each
 * other, 0..1; 0 without a view or fewer than two held-out predictions.
 * It weighs what the context borrows only when the policy borrows (cold
 * policies and a scale share of 0 do not). */
double bot_policy_scale_skill(const struct bot_policy *p, const struct bot_kb *kb, uint64_t key);

/* AUTO's arm for a prior: argmin over entries >= 0, ties to the lowest
 * index; -1 when none is >= 0. */
int bot_prior_argmin(const float prior[BOT_NARMS]);

#endif
