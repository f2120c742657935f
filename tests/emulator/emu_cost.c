/*
 * emu_cost.c - the cost tables the emulated NCCL hands to getCollInfo.
 *
 * Default: the simulator's AUTO model (sim/sim.h, bot_sim_auto_table), the
 * same numbers NCCL 2.28 would compute for the chosen fabric. Built without
 * the simulator (-DEMU_NO_SIM) or run with --costs internal, a small
 * alpha-beta model stands in: it has NCCL's shape (unsupported arms at -1,
 * LL/LL128/Simple crossovers, Tree only for allreduce, PAT for allgather /
 * reducescatter across nodes, NVLS on one node) but no claim to accuracy.
 * Either way a table is a pure function of (collective, nBytes, nNodes), so
 * it is identical on every rank, as NCCL's is.
 *
 * emu_cost_huge() (scenario huge) rewrites some tables so that entries sit
 * at or above 3.6e9 us, where NCCL's search cap differs by release
 * (doc/nccl-abi.md, "Tuner calls"): up to 2.28 they are never picked, from
 * 2.29 everything below FLT_MAX can be.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/emulator/emu.h"

#ifndef EMU_NO_SIM
#include "sim/sim.h"
static const struct bot_fabric *fabric;
#endif

static int mode = EMU_COST_INTERNAL;
static char desc[160] = "internal alpha-beta model";

uint64_t emu_size(unsigned i)
{
	unsigned b = 40 + (i % EMU_NSIZES);	/* 1 KiB .. ~1.75 GiB */
	unsigned e = b / 4, sub = b % 4;
	uint64_t lo = (uint64_t)(4 + sub) << (e - 2);
	uint64_t span = (uint64_t)1 << (e - 2);

	/* every third size sits inside its bucket rather than on its edge */
	if (i % 3 == 1)
		lo += emu_mix64(i) % span;
	return lo;
}

int emu_cost_setup(int m, const char *fabric_name, char *err, size_t errlen)
{
	mode = m;
	if (m == EMU_COST_INTERNAL) {
		snprintf(desc, sizeof(desc), "internal alpha-beta model");
		return 0;
	}
#ifndef EMU_NO_SIM
	if (!bot_sim_nfabrics()) {
		snprintf(err, errlen, "the simulator has no fabrics");
		return -1;
	}
	fabric = fabric_name ? bot_sim_fabric_find(fabric_name) : bot_sim_fabric(0);
	if (!fabric) {
		snprintf(err, errlen, "unknown fabric '%s'", fabric_name);
		return -1;
	}
	snprintf(desc, sizeof(desc), "simulator fabric %s", bot_sim_fabric_name(fabric));
	return 0;
#else
	(void)fabric_name;
	snprintf(err, errlen, "built without the simulator (EMU_NO_SIM); use --costs internal");
	return -1;
#endif
}

const char *emu_cost_desc(void)
{
	return desc;
}

static void internal_table(int coll, uint64_t nbytes, unsigned nnodes, float out[EMU_NUM_ARMS])
{
	/* per-protocol latency (us) and bandwidth share of the link */
	static const double base_lat[3] = { 6.6, 14.0, 8.4 };
	static const double net_lat[3] = { 2.7, 4.0, 14.0 };
	static const double bw_share[3] = { 0.5, 0.92, 1.0 };
	double bw_link = nnodes > 1 ? 45.0 : 360.0;	/* GB/s per rank */
	double steps = nnodes > 1 ? 2.0 * (nnodes - 1) : 1.0;
	double log_nodes = 0;

	for (unsigned n = nnodes; n > 1; n >>= 1)
		log_nodes += 1;
	for (int i = 0; i < EMU_NUM_ARMS; i++)
		out[i] = EMU_ALGO_PROTO_IGNORE;
	for (int p = 0; p < EMU_NUM_PROTOS; p++) {
		double bw = bw_link * bw_share[p];
		double ring = base_lat[p] + steps * net_lat[p] + (double)nbytes / (1000.0 * bw);

		if (coll == 4)
			ring += (double)nbytes / (1000.0 * bw);
		out[EMU_ALGO_RING * 3 + p] = (float)ring;
		if (coll == 4) {	/* allreduce: tree */
			double tree = base_lat[p] + 2.0 * log_nodes * net_lat[p] +
				      (double)nbytes / (1000.0 * bw * 0.85) * 2.0;
			out[EMU_ALGO_TREE * 3 + p] = (float)tree;
		}
		if ((coll == 2 || coll == 3) && nnodes > 1 && p == EMU_PROTO_SIMPLE) {
			double pat = 8.0 + log_nodes * net_lat[p] / 3.5 +
				     (double)nbytes / (1000.0 * bw * 0.75);
			out[EMU_ALGO_PAT * 3 + p] = (float)pat;
		}
	}
	if (coll == 4 && nnodes == 1)
		out[EMU_ALGO_NVLS * 3 + EMU_PROTO_SIMPLE] =
			(float)(25.0 + (double)nbytes / (1000.0 * 480.0));
}

void emu_cost_table(int coll, uint64_t nbytes, unsigned nnodes, float out[EMU_NUM_ARMS])
{
#ifndef EMU_NO_SIM
	if (mode == EMU_COST_SIM) {
		bot_sim_auto_table(fabric, coll, nbytes, nnodes, out);
		return;
	}
#endif
	internal_table(coll, nbytes, nnodes, out);
}

/* ---- entries at and above 3.6e9 (scenario huge) ---- */

/* 2.28's cap itself and the float after it, larger ones, and the largest
 * float below FLT_MAX: never picked up to 2.28, picked from 2.29; then
 * FLT_MAX and +inf, never picked by any release. */
static const float huge_vals[] = {
	EMU_CAP_228, 3600000256.0f, 4e9f, 1e12f, 1e30f, 0x1.fffffcp127f, FLT_MAX, INFINITY,
};
#define NHUGE_PICKABLE 6	/* the first 6 are below FLT_MAX */
/* the float just below 3.6e9: the largest entry 2.28 still picks */
#define BELOW_CAP 3599999744.0f

_Static_assert(EMU_CAP_228 == 3600000000.0f && 3600000256.0f > EMU_CAP_228 &&
	       BELOW_CAP < EMU_CAP_228, "3.6e9 is exact in binary32, its neighbours 256 apart");

/* Every supported entry of t scaled by one factor so that the smallest
 * lands at base (order kept; capped at the largest float below FLT_MAX,
 * which makes ties at the top); skip (an index or -1) stays as it is. */
static void scale_up(float t[EMU_NUM_ARMS], int skip, double base)
{
	double min = 0;

	for (int a = 0; a < EMU_NUM_ARMS; a++)
		if (a != skip && t[a] > 0.0f && (min == 0 || t[a] < min))
			min = t[a];
	if (min == 0)
		return;
	for (int a = 0; a < EMU_NUM_ARMS; a++) {
		double v;

		if (a == skip || t[a] < 0.0f)
			continue;
		v = t[a] > 0.0f ? (double)t[a] * (base / min) : base;
		if (v > 0x1.fffffcp127)
			v = 0x1.fffffcp127;
		t[a] = (float)v < EMU_CAP_228 ? EMU_CAP_228 : (float)v;
	}
}

void emu_cost_huge(int coll, unsigned si, unsigned nnodes, float t[EMU_NUM_ARMS])
{
	static const double bases[4] = { 3.6e9, 4e9, 1e20, 1e37 };
	uint64_t r = emu_mix64(emu_mix64(0x6875676531ULL ^ (uint64_t)coll) ^
			       ((uint64_t)si << 8 | (uint64_t)nnodes << 20));
	int auto_arm = emu_nccl_argmin(t, EMU_NUM_ARMS, EMU_CAP_228);
	unsigned k = (unsigned)(r >> 8);

	switch (r & 7) {
	case 3:		/* AUTO's own pick moves up; the runner-up becomes AUTO's */
		if (auto_arm >= 0)
			t[auto_arm] = huge_vals[k % NHUGE_PICKABLE];
		break;
	case 4:		/* Ring, Tree and PAT (what a plugin may always force) */
		for (int a = 0; a < EMU_NUM_ARMS; a++) {
			int algo = a / EMU_NUM_PROTOS;

			if (t[a] >= 0.0f && (algo == EMU_ALGO_RING || algo == EMU_ALGO_TREE ||
					     algo == EMU_ALGO_PAT))
				t[a] = huge_vals[(k + (unsigned)a) % NHUGE_PICKABLE];
		}
		break;
	case 5:		/* everything: 2.28 has nothing to pick, 2.29 AUTO's order */
		scale_up(t, -1, bases[k & 3]);
		break;
	case 6:		/* everything but AUTO's pick: the only one 2.28 may run */
		scale_up(t, auto_arm, bases[k & 3]);
		break;
	case 7:		/* each supported entry: kept, just below the cap, or any huge */
		for (int a = 0; a < EMU_NUM_ARMS; a++, k = (unsigned)emu_mix64(k)) {
			if (t[a] < 0.0f || (k & 3) == 0)
				continue;
			t[a] = (k & 3) == 1 ? BELOW_CAP
					     : huge_vals[(k >> 2) % (sizeof(huge_vals) /
								     sizeof(huge_vals[0]))];
		}
		break;
	default:	/* 0..2: as NCCL computed it */
		break;
	}
}

/* ---- the simulator's truth (--measured sim, learning-loop reports) ---- */

int emu_cost_is_sim(void)
{
#ifndef EMU_NO_SIM
	return mode == EMU_COST_SIM && fabric;
#else
	return 0;
#endif
}

double emu_measured_us(int coll, uint64_t nbytes, unsigned nnodes, int arm, uint64_t seed,
		       uint64_t i)
{
#ifndef EMU_NO_SIM
	if (emu_cost_is_sim() && arm >= 0 && arm < EMU_NUM_ARMS)
		return bot_sim_sample_us(fabric, coll, nbytes, nnodes, arm, seed, i);
#else
	(void)coll, (void)nbytes, (void)nnodes, (void)arm, (void)seed, (void)i;
#endif
	return -1.0;
}

double emu_true_us(int coll, uint64_t nbytes, unsigned nnodes, int arm)
{
#ifndef EMU_NO_SIM
	if (emu_cost_is_sim() && arm >= 0 && arm < EMU_NUM_ARMS)
		return bot_sim_true_us(fabric, coll, nbytes, nnodes, arm);
#else
	(void)coll, (void)nbytes, (void)nnodes, (void)arm;
#endif
	return -1.0;
}
