/*
 * plan.h - what ranks evaluate: a per-context plan and its integer decision.
 *
 * Owns doc/formats.md section 5. A plan names the exploit arm and up to
 * BOT_MAX_PROBES disjoint ranges of probe buckets (0..255) that use another
 * arm instead. bot_plan_arm() is integer compares only (invariant 1, doc/design.md);
 * it is the only part of policies/ that the rank-side tuner links besides
 * context.h.
 */
#ifndef BOT_PLAN_H
#define BOT_PLAN_H

#include <stdint.h>

#include "context.h"

#define BOT_MAX_PROBES 4
/* An arm value meaning "leave NCCL's own choice" (no prior known). */
#define BOT_ARM_AUTO 0xff
#define BOT_PROBE_BUCKETS 256

struct bot_probe {
	uint8_t arm;
	uint16_t lo, hi;	/* probe bucket in [lo, hi) uses arm */
};

struct bot_plan {
	uint8_t exploit;
	uint8_t nchannels;	/* 0 = NCCL's choice */
	uint8_t nprobe;
	struct bot_probe probe[BOT_MAX_PROBES];
};

/* Arm of a communicator whose probe bucket is `bucket`. */
static inline int bot_plan_arm(const struct bot_plan *p, unsigned bucket)
{
	for (unsigned i = 0; i < p->nprobe && i < BOT_MAX_PROBES; i++)
		if (bucket >= p->probe[i].lo && bucket < p->probe[i].hi)
			return p->probe[i].arm;
	return p->exploit;
}

/*
 * The algorithm family: NVLS and NVLS_TREE share one (their buffers are
 * NCCL's NVLS buffers, allocated once for both; NVLS_TREE's first use only
 * adds a tree connect, as Tree's own first use does); every other algorithm
 * is its own family, CollNet Direct and CollNet Chain included.
 */
static inline int bot_algo_family(int algo)
{
	return algo == BOT_ALGO_NVLS_TREE ? BOT_ALGO_NVLS : algo;
}

/*
 * Arms a rank may force without remembering anything (doc/design.md,
 * "Contexts and arms"): a first use of an algorithm on a communicator
 * triggers NCCL's collective connection setup, and NVLS/CollNet also allocate GPU
 * memory. So only Ring, Tree and PAT, any protocol of the algorithm family
 * AUTO picks for this very call (NVLS and NVLS_TREE: when AUTO picks one,
 * the other's buffers exist already), and the arms of the allow-list (bit
 * per arm) are ever forced. Stateless: a function of the call's own AUTO
 * choice. Planners use the same rule, so they never plan an arm that a rank
 * would refuse.
 */
static inline int bot_arm_allowed(int arm, int auto_arm, uint32_t allow)
{
	int algo = arm / BOT_NPROTO;

	if (arm < 0 || arm >= BOT_NARMS)
		return 0;
	return algo == BOT_ALGO_TREE || algo == BOT_ALGO_RING || algo == BOT_ALGO_PAT ||
	       (auto_arm >= 0 && auto_arm < BOT_NARMS &&
		bot_algo_family(algo) == bot_algo_family(auto_arm / BOT_NPROTO)) ||
	       ((allow >> arm) & 1u);
}

/*
 * Can a rank measure the arm on a context of nnodes nodes? NCCL's profiler
 * reports nChannels 0 for a collective on the CollNet path, which is
 * CollNet Direct, CollNet Chain and NVLS across nodes, and then no kernel
 * channel events: the rank library labels such a sample "channels
 * missing" (doc/formats.md section 9) and it never becomes a clean
 * sample. A probe of such an arm is paid and never learned from: its cost
 * is missing from the statistics the budget is computed from, so it would
 * be probed again in every job. Planners therefore never force one
 * (doc/policies.md, "Arms the ranks cannot measure").
 */
static inline int bot_arm_measurable(int arm, uint32_t nnodes)
{
	int algo = arm / BOT_NPROTO;

	if (arm < 0 || arm >= BOT_NARMS)
		return 0;
	return algo != BOT_ALGO_COLLNET_DIRECT && algo != BOT_ALGO_COLLNET_CHAIN &&
	       !(algo == BOT_ALGO_NVLS && nnodes > 1);
}

/* The arms of AUTO's algorithm family as a bit mask (0 for an arm out of
 * range): what bot_arm_allowed() adds for auto_arm. */
static inline uint32_t bot_arm_family_mask(int auto_arm)
{
	int f;

	if (auto_arm < 0 || auto_arm >= BOT_NARMS)
		return 0;
	f = bot_algo_family(auto_arm / BOT_NPROTO);
	if (f == BOT_ALGO_NVLS)
		return 7u << (BOT_ALGO_NVLS * BOT_NPROTO) | 7u << (BOT_ALGO_NVLS_TREE * BOT_NPROTO);
	return 7u << (f * BOT_NPROTO);
}

/* 0 when the plan is well-formed: arms < BOT_NARMS or BOT_ARM_AUTO, ranges disjoint and
 * within 0..256, nprobe <= BOT_MAX_PROBES. */
int bot_plan_check(const struct bot_plan *p);

#endif
