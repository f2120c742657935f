/*
 * sim_auto.c - our own implementation of NCCL 2.28's AUTO cost model
 * (ncclTopoTuneModel + ncclTopoGetAlgoTime in src/graph/tuning.cc, and the
 * algorithm filter of updateCollCostTable in src/enqueue.cc), written from
 * the published facts, for the simulated fabrics.
 *
 * AUTO is an alpha-beta model: time = latency + nBytes / (1000 * bw), with
 * constant tables indexed by GPU generation and a scale bucket of 1, 2 or
 * >= 3 nodes, bandwidths taken from the topology search (nominal, not
 * measured) and a few static fudge factors. That structure is exactly why it
 * is wrong on some contexts, and the simulator's measured model deliberately
 * does not share it. numPipeOps is 1 (so latCount is 1 for every algorithm).
 *
 * On an MNNVL fabric (GB200 NVL72) NCCL sees one "node" per NVLink domain;
 * the cost model is evaluated in that view.
 */
#include <math.h>
#include <string.h>

#include "sim/sim_int.h"

enum { HW_NVLINK = 0, HW_PCI = 1, HW_NET = 2 };

/* NCCL 2.28 default tuner constants (facts, re-typed). [algo][proto] */
static const float base_lat[BOT_NALGO][BOT_NPROTO] = {
	{ 6.8f, 14.0f, 8.4f }, { 6.6f, 14.0f, 8.4f },
	{ 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 }, { 0, 0, 0 },
	{ 8.0f, 8.0f, 8.0f },
};

static const float hw_lat[3][BOT_NALGO][BOT_NPROTO] = {
	{ /* NVLink */
		{ 0.6f, 1.25f, 4.0f }, { 0.6f, 1.9f, 3.4f },
		{ 0, 0, 3.7f }, { 0, 0, 2.8f },
		{ 0, 0, 25.0f }, { 0, 0, 25.0f },
		{ 0, 0, 4.0f },
	},
	{ /* PCI */
		{ 1.0f, 1.9f, 4.0f }, { 1.0f, 2.5f, 5.7f },
		{ 0, 0, 3.7f }, { 0, 0, 2.8f },
		{ 0, 0, 0 }, { 0, 0, 0 },
		{ 0, 0, 4.0f },
	},
	{ /* NET */
		{ 5.0f, 8.5f, 14.0f }, { 2.7f, 4.0f, 14.0f },
		{ 0, 0, 31.0f }, { 0, 0, 30.0f },
		{ 0, 0, 18.0f }, { 0, 0, 20.9f },
		{ 0, 0, 14.0f },
	},
};

/* [compcap idx: Volta, Ampere, Hopper, Blackwell][scale: 1, 2, >=3 nodes]
 * llMaxBws rows 0/1 double as Intel/AMD rows on multi-node. */
static const double ll_max_bw[4][3] = {
	{ 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 },
	{ 141.0, 45.0, 35.0 }, { 282.0, 90.0, 70.0 },
};
static const double ch_max_ring_ll128[4][3] = {
	{ 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 },
	{ 36.7, 36.7, 36.7 }, { 73.4, 34.6, 73.4 },
};
static const double ch_max_tree_ll128[4][3] = {
	{ 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 },
	{ 36.7, 36.7, 29.0 }, { 55.6, 31.67, 20.0 },
};
static const double ch_max_tree[4][3] = {
	{ 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 },
	{ 38.7, 41.4, 36.0 }, { 70.0, 42.8, 24.0 },
};
static const double ch_max_nvls_tree[4][3] = {
	{ 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 },
	{ 0.0, 57.7, 45.5 }, { 0.0, 96.0, 43.8 },
};
static const float nvls_eff[4] = { 0.0f, 0.0f, 0.85f, 0.74f };

/* Tree allreduce bandwidth correction, powers of two 64 B .. 256 MiB. */
static const float tree_corr[BOT_NPROTO][23] = {
	{ 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f,
	  .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f },
	{ 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f,
	  .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f, .9f, 1.0f, 1.0f },
	{ .9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f,
	  .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f },
};

#define NVLS_MAX_ARITY 32	/* NCCL_MAX_NVLS_ARITY */
#define DIRECT_MAX_ARITY 7	/* NCCL_MAX_DIRECT_ARITY */

static int ilog2(uint64_t v)
{
	int r = -1;

	while (v) {
		v >>= 1;
		r++;
	}
	return r;
}

/* NCCL's view of a communicator on fabric f. */
struct view {
	int nn, nr;		/* NCCL nNodes, nRanks */
	float ppn;
	int local;		/* integer ranks per NCCL node */
	const struct bot_sim_graph *g;
};

static void make_view(const struct bot_fabric *f, unsigned nnodes, unsigned nranks, struct view *v)
{
	unsigned dn = f->domain_nodes ? f->domain_nodes : 1;

	v->nn = (int)((nnodes + dn - 1) / dn);
	v->nr = (int)nranks;
	v->ppn = (float)nranks / (float)v->nn;
	v->local = v->nr / v->nn;
	v->g = v->nn == 1 ? f->g1 : f->gn;
}

/* ncclTopoTuneModel for one (coll, algo, proto): bus->alg bandwidth and
 * latency; bw 0 = disabled. */
static void tune_one(const struct bot_fabric *f, const struct view *v, int coll, int a, int p,
		     float *bw_out, float *lat_out)
{
	const struct bot_sim_graph *g = &v->g[a];
	int cc = f->cc_idx, nn = v->nn, nr = v->nr;
	int i2 = nn <= 2 ? nn - 1 : 2;
	int i1 = nn == 1 ? cc : (f->cpu_amd ? 1 : 0);
	int ag_rs = coll == BOT_COLL_ALLGATHER || coll == BOT_COLL_REDUCESCATTER;
	int collnet = a == BOT_ALGO_COLLNET_DIRECT || a == BOT_ALGO_COLLNET_CHAIN;
	int nsteps = coll == BOT_COLL_ALLREDUCE ? 2 * (nr - 1) : ag_rs ? nr - 1 : nr;
	float ppn = v->ppn, bw, bus, lat, intra_lat, inter_lat;
	int intra_hw = f->intra_nvl ? HW_NVLINK : HW_PCI;

	*bw_out = 0;
	*lat_out = 0;
	/* which algorithms NCCL computes for which collective */
	if ((coll == BOT_COLL_BROADCAST || coll == BOT_COLL_REDUCE) && a != BOT_ALGO_RING)
		return;
	if (ag_rs && a != BOT_ALGO_PAT && a != BOT_ALGO_RING && a != BOT_ALGO_NVLS &&
	    a != BOT_ALGO_COLLNET_DIRECT)
		return;
	if (coll == BOT_COLL_ALLREDUCE && a == BOT_ALGO_PAT)
		return;
	if ((a == BOT_ALGO_NVLS || a == BOT_ALGO_NVLS_TREE) && p != BOT_PROTO_SIMPLE)
		return;
	/* PAT: Simple only, and only with one GPU per node (net on host) */
	if (a == BOT_ALGO_PAT && (p != BOT_PROTO_SIMPLE || nn != nr))
		return;

	bw = nn <= 2 || collnet ? g->bw_intra : g->bw_inter;
	if (a == BOT_ALGO_NVLS || a == BOT_ALGO_NVLS_TREE) {
		float intra_bw, inter_bw;

		if (g->nch < 2)
			return;
		intra_bw = g->bw_intra * nvls_eff[cc] * (float)(g->nch - 1) / (float)g->nch;
		if (coll == BOT_COLL_ALLREDUCE)
			intra_bw *= 2.0f;
		else
			intra_bw *= (ppn - 1) / ppn;
		inter_bw = g->bw_inter * ((nn <= 2 && a == BOT_ALGO_NVLS_TREE) ? 2 : 1);
		bw = fminf(intra_bw, inter_bw);
		if (a == BOT_ALGO_NVLS_TREE)
			bw = fminf(bw, (float)ch_max_nvls_tree[cc][i2]);
	}
	bus = (float)g->nch * bw;

	if (a == BOT_ALGO_RING && p == BOT_PROTO_LL)
		bus = (float)fmin(ll_max_bw[i1][i2], bus * .5);
	if (a == BOT_ALGO_RING && p == BOT_PROTO_LL128)
		bus = (float)fmin(bus * 0.92, g->nch * ch_max_ring_ll128[cc][i2]);
	if (a == BOT_ALGO_TREE && coll == BOT_COLL_ALLREDUCE)
		bus = (float)fmin(bus * .92, g->nch * ch_max_tree[cc][i2]);
	if (a == BOT_ALGO_TREE && p == BOT_PROTO_LL)
		bus = (float)fmin(bus * 1.0 / 3.8, ll_max_bw[i1][i2]);
	if (a == BOT_ALGO_TREE && p == BOT_PROTO_LL128)
		bus = (float)fmin(bus * (nn == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
				  g->nch * ch_max_tree_ll128[cc][i2]);
	if (a == BOT_ALGO_TREE && f->tree_pattern_tree)
		bus *= .85f;
	if (a == BOT_ALGO_PAT)
		bus *= .75f;
	if (collnet && p != BOT_PROTO_SIMPLE)
		bus = 0;
	if (a == BOT_ALGO_COLLNET_DIRECT && p == BOT_PROTO_SIMPLE) {
		if (ag_rs) {
			bus = ppn * fminf(g->bw_intra, g->bw_inter * 0.9f);
		} else {
			float factor = ppn / (1.0f * g->nch);

			factor -= (factor - 1) / 2;
			bus /= factor;
			if (cc >= 2)
				bus *= .85f;
		}
	}
	/* NVLS / CollNetDirect allgather/reducescatter across nodes need
	 * collnet iallgather/ireducescatter, which our SHARP plugin lacks. */
	if ((a == BOT_ALGO_NVLS || a == BOT_ALGO_COLLNET_DIRECT) && ag_rs && nn > 1)
		bus = 0;
	/* bus bandwidth -> algorithm bandwidth */
	if (!(a != BOT_ALGO_RING && ag_rs)) {
		float ratio = 1.0f;

		if (a == BOT_ALGO_RING || a == BOT_ALGO_NVLS || a == BOT_ALGO_NVLS_TREE)
			ratio *= (1.0f * nr) / nsteps;
		else
			ratio *= .5f;
		bus *= ratio;
	}

	/* latency */
	lat = base_lat[a][p];
	intra_lat = hw_lat[intra_hw][a][p];
	inter_lat = (ppn == 1 ? hw_lat[HW_NET][BOT_ALGO_TREE][p] : hw_lat[HW_NET][a][p]) + f->lat_inter;
	if (p == BOT_PROTO_SIMPLE)
		inter_lat += f->lat_inter;
	if (a == BOT_ALGO_RING) {
		float hl = hw_lat[nn == 1 ? intra_hw : HW_NET][a][p];

		if (coll == BOT_COLL_REDUCE || coll == BOT_COLL_BROADCAST) {
			/* single-node graphs are searched with sameChannels */
			if (nn == 1) {
				lat += hl;
			} else {
				if (p == BOT_PROTO_SIMPLE)
					hl = hw_lat[HW_NET][BOT_ALGO_TREE][p];
				lat += nsteps * hl;
			}
		} else {
			float net_over = 0;
			int ninter;

			if (nn > 1) {
				net_over = f->cpu_amd ? 2.0f : 1.0f;
				if (p == BOT_PROTO_SIMPLE)
					net_over *= 3;
			}
			intra_lat = fmaxf(intra_lat, net_over);
			ninter = nn == 1 ? 0 : coll == BOT_COLL_ALLREDUCE ? 2 * (nn - 1) : nn - 1;
			lat += (nsteps - ninter) * intra_lat + ninter * inter_lat;
		}
	} else if (a == BOT_ALGO_TREE) {
		if (coll == BOT_COLL_ALLREDUCE)
			lat += 2 * ((nr / nn - 1) * intra_lat + ilog2((uint64_t)nn) * inter_lat);
	} else if (a == BOT_ALGO_COLLNET_DIRECT) {
		int l1 = nr / nn - 1;

		lat += 2 * ((l1 < 1 ? l1 : 1) * intra_lat + l1 * 0.4f) + inter_lat;
	} else if (a == BOT_ALGO_COLLNET_CHAIN) {
		lat += 2 * (nr / nn - 1) * intra_lat + inter_lat;
	} else if (a == BOT_ALGO_NVLS) {
		lat = intra_lat;
		if (nn > 1)
			lat += inter_lat;
	} else if (a == BOT_ALGO_NVLS_TREE) {
		lat += intra_lat + 2 * ilog2((uint64_t)nn) * inter_lat;
	} else if (a == BOT_ALGO_PAT) {
		if (ag_rs)
			lat += ilog2((uint64_t)nn) * (inter_lat / 3.5f) + nr * 2.8f;
	}

	/* enables: LL128 by topology, algorithms by system features */
	if (p == BOT_PROTO_LL128 && !f->ll128)
		bus = 0;
	if (nn == 1 && a == BOT_ALGO_NVLS_TREE)
		bus = 0;
	if (!f->collnet && (collnet || (a == BOT_ALGO_NVLS && nn > 1)))
		bus = 0;
	if (!f->nvswitch && a == BOT_ALGO_COLLNET_DIRECT)
		bus = 0;
	*bw_out = bus;
	*lat_out = lat;
}

/* AUTO's table with an explicit rank count. */
static void auto_table_r(const struct bot_fabric *f, int coll, uint64_t nbytes,
			 unsigned nnodes, unsigned nranks, float out[BOT_NARMS])
{
	struct view v;
	int a, p;

	for (a = 0; a < BOT_NARMS; a++)
		out[a] = -1.0f;
	if (nranks <= 1) {
		out[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] = 0.0f;
		return;
	}
	make_view(f, nnodes, nranks, &v);
	for (a = 0; a < BOT_NALGO; a++) {
		int cn = a == BOT_ALGO_COLLNET_DIRECT || a == BOT_ALGO_COLLNET_CHAIN;
		int nvls = a == BOT_ALGO_NVLS || a == BOT_ALGO_NVLS_TREE;

		/* updateCollCostTable's filter */
		if (cn && !(f->collnet && v.nn > 1))
			continue;
		if (cn && v.local > DIRECT_MAX_ARITY + 1)
			continue;
		if (nvls && (!f->nvls || (coll != BOT_COLL_ALLREDUCE && v.local > NVLS_MAX_ARITY)))
			continue;
		if (a == BOT_ALGO_NVLS && !f->collnet && v.nn > 1)
			continue;
		for (p = 0; p < BOT_NPROTO; p++) {
			float bw, lat;
			int lsz;

			tune_one(f, &v, coll, a, p, &bw, &lat);
			if (bw == 0)
				continue;
			/* ncclTopoGetAlgoTime */
			lsz = ilog2(nbytes >> 6);
			if (a == BOT_ALGO_TREE && coll == BOT_COLL_ALLREDUCE && lsz >= 0 && lsz < 23)
				bw *= tree_corr[p][lsz];
			if (a == BOT_ALGO_RING && p == BOT_PROTO_SIMPLE && v.nn > 1 &&
			    coll == BOT_COLL_ALLREDUCE &&
			    nbytes / ((uint64_t)v.g[BOT_ALGO_RING].nch * (uint64_t)v.nr) >= 64)
				lat *= f->cc_idx < 1 ? 1.9f : 1.4f;
			out[bot_arm(a, p)] = lat + (float)nbytes / (1000.0f * bw);
		}
	}
}

void bot_sim_auto_table_r(const struct bot_fabric *f, int coll, uint64_t nbytes,
			  unsigned nnodes, unsigned nranks, float out[BOT_NARMS])
{
	auto_table_r(f, coll, nbytes, nnodes, nranks, out);
}

void bot_sim_auto_table(const struct bot_fabric *f, int coll, uint64_t nbytes,
			unsigned nnodes, float out[BOT_NARMS])
{
	auto_table_r(f, coll, nbytes, nnodes, nnodes * f->gpn, out);
}
