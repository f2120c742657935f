/*
 * emu_loop.c - the emulator's side of the learning loop (loop.sh).
 *
 * --workload COLL:SIZE,... makes every communicator call a fixed cycle of
 * contexts instead of the random mix, so that the plugin's 1%-duty windows
 * see each of them often; --measured sim (emu_rank.c) makes the KernelCh
 * span of each collective the simulator's measured latency of the arm NCCL
 * actually launched, the "truth" the plugin has to learn.
 *
 * After a run (or with --explain, from the step table alone) this file
 * prints, per (communicator shape of the layout, workload entry):
 *
 *   CTX shape=8x8 coll=allgather bytes=1572864 comms=2 calls=96000
 *       auto=ring/ll128 auto_us=134.5 best=ring/ll best_us=98.0
 *       exploit=ring/ll exploit_us=98.0 probes=- used=ring/ll:99.1%,ring/ll128:0.9%
 *       mean_us=98.4 regret=0.4% auto_regret=37.2%
 *
 * (one line): AUTO's arm is the argmin of the cost table NCCL hands the
 * tuner; best is the argmin of the simulator's noiseless latency
 * (bot_sim_true_us) over the arms the step table lets the plugin force
 * (Ring, Tree, PAT, AUTO's algorithm, the allow-list; every supported arm
 * without a table); exploit and probes come from the table's entry ("prior"
 * when it has none, "auto" for 255); used counts the arms launched by rank
 * 0 of each communicator; regret is the launched arms' mean true latency
 * over best's, auto_regret AUTO's. A LOSS line sums the same over every
 * context (time-weighted by calls); a TABLE line the same for the table's
 * exploit arms (exploit_us: AUTO's arm where the table has no entry), every
 * context weighted alike.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/emulator/emu.h"

#ifndef EMU_NO_TABLE
#include "common/table.h"
#include "policies/context.h"
#endif

static const char *const coll_names[EMU_NUM_FUNCS] = {
	"broadcast", "reduce", "allgather", "reducescatter", "allreduce"
};
static const char *const algo_names[EMU_NUM_ALGOS] = {
	"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"
};
static const char *const proto_names[EMU_NUM_PROTOS] = { "ll", "ll128", "simple" };

static const char *arm_name(int arm, char *buf, size_t n)
{
	if (arm < 0 || arm >= EMU_NUM_ARMS)
		snprintf(buf, n, "%s", arm == 255 ? "auto" : "none");
	else
		snprintf(buf, n, "%s/%s", algo_names[arm / 3], proto_names[arm % 3]);
	return buf;
}

/* "1536K", "64M", "1G", "2097152" -> bytes; 0 on error. */
static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (end == s)
		return 0;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end == 'i' && end[1] == 'B')
		end += 2;
	else if (*end == 'B')
		end++;
	return *end ? 0 : (uint64_t)v;
}

int emu_work_parse(struct emu_cfg *cfg, const char *spec, char *err, size_t errlen)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "--workload: too long");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	cfg->nwork = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t want, best_d = ~0ULL;
		int coll = -1;
		unsigned best = 0;

		if (!colon) {
			snprintf(err, errlen, "--workload: '%s' is not COLL:SIZE", tok);
			return -1;
		}
		*colon = 0;
		for (int k = 0; k < EMU_NUM_FUNCS; k++)
			if (!strcmp(tok, coll_names[k]))
				coll = k;
		want = parse_size(colon + 1);
		if (coll < 0 || !want) {
			snprintf(err, errlen, "--workload: bad collective or size in '%s:%s'", tok,
				 colon + 1);
			return -1;
		}
		if (cfg->nwork == EMU_NWORK_MAX) {
			snprintf(err, errlen, "--workload: at most %d entries", EMU_NWORK_MAX);
			return -1;
		}
		/* the nearest size the emulator's cost tables hold */
		for (unsigned i = 0; i < EMU_NSIZES; i++) {
			uint64_t b = emu_size(i), d = b > want ? b - want : want - b;

			if (d < best_d) {
				best_d = d;
				best = i;
			}
		}
		cfg->work[cfg->nwork].coll = coll;
		cfg->work[cfg->nwork].si = best;
		cfg->nwork++;
	}
	if (!cfg->nwork) {
		snprintf(err, errlen, "--workload: empty");
		return -1;
	}
	return 0;
}

/* The table's plan for a context: exploit arm (255 AUTO), probes text;
 * -1 without a table, -2 when it has no entry (the prior decides). */
static int table_plan(const void *t, unsigned nranks, unsigned nnodes, int coll, uint64_t nbytes,
		      char *probes, size_t pl)
{
	snprintf(probes, pl, "-");
#ifndef EMU_NO_TABLE
	const struct bot_table *tb = t;
	unsigned b = bot_size_bucket(nbytes);

	if (!tb)
		return -1;
	for (unsigned e = 0; e < tb->nentries; e++) {
		const struct bot_table_entry *x = &tb->entries[e];
		const struct bot_table_shape *sh = &tb->shapes[x->shape];
		char an[32];

		if (sh->nranks != nranks || sh->nnodes != nnodes || x->coll != coll ||
		    x->bucket != b)
			continue;
		for (unsigned k = 0; k < x->plan.nprobe && k < BOT_MAX_PROBES; k++)
			snprintf(probes + (k ? strlen(probes) : 0), pl - (k ? strlen(probes) : 0),
				 "%s%s:%u-%u", k ? "," : "", arm_name(x->plan.probe[k].arm, an,
									sizeof(an)),
				 x->plan.probe[k].lo, x->plan.probe[k].hi - 1);
		return x->plan.exploit;
	}
	return -2;
#else
	(void)t, (void)nranks, (void)nnodes, (void)coll, (void)nbytes;
	return -1;
#endif
}

/* May the plugin force arm (Ring, Tree, PAT, AUTO's algorithm, allow-list)? */
static int arm_allowed(int arm, int auto_arm, int have_table, uint32_t allow)
{
	int algo = arm / 3;

	if (!have_table)
		return 1;
	return algo == EMU_ALGO_RING || algo == EMU_ALGO_TREE || algo == EMU_ALGO_PAT ||
	       (auto_arm >= 0 && algo == auto_arm / 3) || (allow >> arm & 1);
}

void emu_loop_report(const struct emu_cfg *cfg, const struct emu_result *r, unsigned n)
{
	struct emu_shape shapes[16];
	unsigned nshapes = emu_layout_shapes(cfg->nprocs * cfg->ranks_per_proc,
					     cfg->ranks_per_node, shapes, 16);
	double tot_calls = 0, tot_used = 0, tot_auto = 0, tot_best = 0;
	double ex_sum = 0, ex_auto = 0, ex_best = 0;
	unsigned nctx = 0;
	void *table = NULL;
	uint32_t allow = 0;

#ifndef EMU_NO_TABLE
	if (cfg->table) {
		struct bot_table *t = malloc(sizeof(*t));

		if (t && bot_table_decode(cfg->table, strlen(cfg->table), t) == BOT_TABLE_OK) {
			table = t;
			allow = t->allow;
		} else {
			free(t);
			printf("# CTX: the step table does not decode; exploit=prior\n");
		}
	}
#endif
	for (unsigned s = 0; s < nshapes; s++) {
		for (unsigned w = 0; w < cfg->nwork; w++) {
			int coll = cfg->work[w].coll, auto_arm, best = -1, exploit;
			uint64_t nbytes = emu_size(cfg->work[w].si), calls = 0;
			uint64_t hist[EMU_NUM_ARMS] = { 0 };
			unsigned comms = 0, nn = shapes[s].nnodes;
			float row[EMU_NUM_ARMS];
			double best_us = 0, auto_us, used_us = 0;
			char used[400] = "", probes[200], a1[32], a2[32], a3[32];

			emu_cost_table(coll, nbytes, nn, row);
			auto_arm = emu_nccl_argmin(row, EMU_NUM_ARMS, cfg->ver->cap);
			for (int a = 0; a < EMU_NUM_ARMS; a++) {
				double v = emu_true_us(coll, nbytes, nn, a);

				if (row[a] < 0.0f || v < 0 ||
				    !arm_allowed(a, auto_arm, table != NULL, allow))
					continue;
				if (best < 0 || v < best_us) {
					best = a;
					best_us = v;
				}
			}
			auto_us = emu_true_us(coll, nbytes, nn, auto_arm);
			exploit = table_plan(table, shapes[s].nranks, nn, coll, nbytes, probes,
					     sizeof(probes));
			nctx++;
			ex_sum += emu_true_us(coll, nbytes, nn, exploit >= 0 && exploit < EMU_NUM_ARMS
								? exploit : auto_arm);
			ex_auto += auto_us;
			ex_best += best_us;
			for (unsigned i = 0; r && i < n; i++) {
				const struct emu_result *x = &r[i];

				if (x->status != EMU_ST_OK || x->crank != 0 ||
				    (unsigned)x->nranks != shapes[s].nranks ||
				    (unsigned)x->nnodes != nn)
					continue;
				comms++;
				for (int a = 0; a < EMU_NUM_ARMS; a++) {
					hist[a] += x->work_arm[w][a];
					calls += x->work_arm[w][a];
				}
			}
			for (int a = 0; a < EMU_NUM_ARMS; a++) {
				if (!hist[a])
					continue;
				used_us += (double)hist[a] * emu_true_us(coll, nbytes, nn, a);
				snprintf(used + strlen(used), sizeof(used) - strlen(used),
					 "%s%s:%.1f%%", used[0] ? "," : "", arm_name(a, a1, sizeof(a1)),
					 100.0 * (double)hist[a] / (double)calls);
			}
			if (calls) {
				tot_calls += (double)calls;
				tot_used += used_us;
				tot_auto += (double)calls * auto_us;
				tot_best += (double)calls * best_us;
				used_us /= (double)calls;
			}
			printf("CTX shape=%ux%u coll=%s bytes=%llu comms=%u calls=%llu auto=%s "
			       "auto_us=%.1f best=%s best_us=%.1f exploit=%s exploit_us=%.1f probes=%s "
			       "used=%s mean_us=%.1f regret=%.1f%% auto_regret=%.1f%%\n",
			       shapes[s].nranks, nn, coll_names[coll], (unsigned long long)nbytes,
			       comms, (unsigned long long)calls, arm_name(auto_arm, a1, sizeof(a1)),
			       auto_us, arm_name(best, a2, sizeof(a2)), best_us,
			       exploit == -1 ? "-" : exploit == -2 ? "prior"
							   : arm_name(exploit, a3, sizeof(a3)),
			       emu_true_us(coll, nbytes, nn, exploit >= 0 && exploit < EMU_NUM_ARMS
								 ? exploit : auto_arm),
			       probes, used[0] ? used : "-", used_us,
			       calls ? 100.0 * (used_us - best_us) / best_us : 0.0,
			       100.0 * (auto_us - best_us) / best_us);
		}
	}
	if (tot_calls > 0)
		printf("LOSS calls=%.0f mean_us=%.1f auto_us=%.1f best_us=%.1f regret=%.2f%% "
		       "auto_regret=%.2f%%\n", tot_calls, tot_used / tot_calls,
		       tot_auto / tot_calls, tot_best / tot_calls,
		       100.0 * (tot_used - tot_best) / tot_best,
		       100.0 * (tot_auto - tot_best) / tot_best);
	if (nctx && ex_best > 0)	/* every context weighted alike */
		printf("TABLE contexts=%u exploit_us=%.1f auto_us=%.1f best_us=%.1f regret=%.2f%% "
		       "auto_regret=%.2f%%\n", nctx, ex_sum / nctx, ex_auto / nctx, ex_best / nctx,
		       100.0 * (ex_sum - ex_best) / ex_best, 100.0 * (ex_auto - ex_best) / ex_best);
	free(table);
	fflush(stdout);
}
