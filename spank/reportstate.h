/*
 * reportstate.h - the fabric's learned state for srun's one-line summary
 * (doc/formats.md section 17, "Latency of an arm"): an arm the step did
 * not measure (AUTO's, once learning moved a context off it) takes the
 * latency the fabric measured before NCCL's cost model's estimate.
 *
 * srun runs as the user at the step's end: the state is read in a forked
 * child bounded in time (a hung shared filesystem never holds srun), which
 * keeps of each context the step ran only each arm's median bin and hands
 * that back as a state image the parent validates (common/state.h). Any
 * failure is only a reason: the summary then uses the cost model.
 */
#ifndef BOT_SPANK_REPORTSTATE_H
#define BOT_SPANK_REPORTSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/state.h"
#include "learn/report.h"

#define BOT_SPANK_REPORT_STATE_MAX (8u << 20)	/* bytes the child may hand back */

/*
 * The current state of fabric (a fabric name, not "prior") in state_dir,
 * reduced to the median bin of each arm of the contexts of m, read within
 * timeout_ms: 0 with *out filled (free with bot_state_free; every arm of
 * it one bin, count 1: bot_report_state_arms reads the same median), or -1
 * with the reason in why (*out empty).
 */
int bot_spank_report_state(const char *state_dir, const char *fabric, uint64_t timeout_ms,
			   const struct bot_report_part *m, struct bot_state *out, char *why,
			   size_t whylen);

#endif
