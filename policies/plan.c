/*
 * plan.c - well-formedness of a plan (doc/formats.md section 5).
 *
 * The rank side evaluates plans with integer compares only (plan.h); this
 * file holds the one check that every producer (policies, table decoder)
 * runs before a plan is used: arms in range, at most BOT_MAX_PROBES ranges,
 * each range non-empty within 0..256 and no two overlapping.
 */
#include "plan.h"

static int arm_ok(unsigned arm)
{
	return arm < BOT_NARMS || arm == BOT_ARM_AUTO;
}

int bot_plan_check(const struct bot_plan *p)
{
	if (!p)
		return -1;
	if (!arm_ok(p->exploit) || p->nprobe > BOT_MAX_PROBES)
		return -1;
	for (unsigned i = 0; i < p->nprobe; i++) {
		const struct bot_probe *a = &p->probe[i];

		if (!arm_ok(a->arm) || a->lo >= a->hi || a->hi > BOT_PROBE_BUCKETS)
			return -1;
		for (unsigned j = 0; j < i; j++) {
			const struct bot_probe *b = &p->probe[j];

			if (a->lo < b->hi && b->lo < a->hi)
				return -1;
		}
	}
	return 0;
}
