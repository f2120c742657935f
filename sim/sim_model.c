/*
 * sim_model.c - the simulator's "measured" latency model and its noise.
 *
 * Deliberately not NCCL's alpha-beta model: time is built from physical
 * pieces (doc/simulator.md lists each effect and why it is realistic):
 *
 *   t = launch + skew(nranks) + steps * hop(proto, link, spine)
 *       + pipeline fill + traffic * bytes / effective bandwidth
 *
 * where the effective bandwidth is the link rate times the protocol's payload
 * efficiency, a chunk-size ramp (Simple and LL128 need large chunks), capped
 * by the channels a small message really uses times a per-channel SM rate,
 * and degraded by spine oversubscription, ECMP collisions, RoCE incast and
 * NIC sharing. Unlike AUTO's constants, these vary continuously with the
 * node count and do not stop at a ">= 3 nodes" bucket.
 *
 * The free effect magnitudes (struct bot_sim_params) were fitted against
 * data/external/sweep and are frozen in bot_sim_frozen below.
 */
#include <math.h>

#include "sim/sim_int.h"

/* Hand-set starting point of the calibration (physics priors). */
const struct bot_sim_params bot_sim_prior = {
	.simple_chunk_us = 1.5,
	.ll128_chunk_us = 0.3,
	.ll_ch_gbs = 4.0,
	.simple_hop = 2.5,
	.ll128_hop = 1.4,
	.tree_bw_eff = 0.9,
	.tree_fill = 1.0,
	.skew_us = 1.0,
	.cal_net_gbs = { 1.2, 12.0 },
	.cal_hop_us = { 100.0, 20.0 },
	.cal_ll_host_gbs = 0.12,
	.cal_launch_us = 30.0,
};

/*
 * Frozen: `nccl-bot sim --calibrate` (data/external/sweep), 2026-11-29.
 * Calibration error, see BOT_SIM_CAL_* in sim_int.h and doc/simulator.md.
 * Do not change these values after policies have been tuned.
 */
const struct bot_sim_params bot_sim_frozen = {
	.simple_chunk_us = 0.05,
	.ll128_chunk_us = 0.3,
	.ll_ch_gbs = 5.6,
	.simple_hop = 2.5,
	.ll128_hop = 1.4,
	.tree_bw_eff = 0.7746,
	.tree_fill = 0.003906,
	.skew_us = 1.0,
	.cal_net_gbs = { 1.038, 36.87 },
	.cal_hop_us = { 35.18, 1.0 },
	.cal_ll_host_gbs = 0.1091,
	.cal_launch_us = 371.2,
};

const char *const bot_sim_param_names[BOT_SIM_NPARAMS] = {
	"simple_chunk_us", "ll128_chunk_us", "ll_ch_gbs", "simple_hop", "ll128_hop",
	"tree_bw_eff", "tree_fill", "skew_us",
	"a10g_net_gbs", "modal_net_gbs", "a10g_hop_us", "modal_hop_us", "a10g_ll_host_gbs",
	"a10g_launch_us",
};

/* Fitted (1) or held at the prior (0): the per-step multipliers and the skew
 * are not identifiable on a socket transport whose proxy dominates every
 * step, and LL128 over sockets is an off-default path (NCCL enables LL128
 * only up to PXB), so these stay at their physical priors. */
const unsigned char bot_sim_param_fit[BOT_SIM_NPARAMS] = {
	1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1,
};

double *bot_sim_param_ref(struct bot_sim_params *p, unsigned i)
{
	switch (i) {
	case 0: return &p->simple_chunk_us;
	case 1: return &p->ll128_chunk_us;
	case 2: return &p->ll_ch_gbs;
	case 3: return &p->simple_hop;
	case 4: return &p->ll128_hop;
	case 5: return &p->tree_bw_eff;
	case 6: return &p->tree_fill;
	case 7: return &p->skew_us;
	case 8: return &p->cal_net_gbs[0];
	case 9: return &p->cal_net_gbs[1];
	case 10: return &p->cal_hop_us[0];
	case 11: return &p->cal_hop_us[1];
	case 12: return &p->cal_ll_host_gbs;
	case 13: return &p->cal_launch_us;
	}
	return NULL;
}

/* Per-protocol physics. */
static const double payload[BOT_NPROTO] = { 0.5, 120.0 / 128.0, 1.0 };
/* per-channel SM throughput relative to LL's, H100 (LL128 and Simple move
 * 16-byte vectors without per-line flags) */
static const double ch_rel[BOT_NPROTO] = { 1.0, 5.0, 7.0 };
/* largest chunk a channel moves per step, bytes */
static const double chunk_max[BOT_NPROTO] = { 32768.0, 262144.0, 524288.0 };

struct phys {
	unsigned nr, m, local;	/* ranks, network nodes, ranks per domain */
	double b_net;		/* ring bus bandwidth over the network, GB/s */
	double hop_net;		/* one network step, LL, us */
	double spine_frac;	/* fraction of traffic crossing the spine */
	double cong;		/* bandwidth multiplier from spine effects */
	double tier;		/* extra latency per network step */
};

static void make_phys(const struct bot_fabric *f, const struct bot_sim_params *P,
		      unsigned nnodes, unsigned nranks, struct phys *ph)
{
	unsigned dn = f->domain_nodes ? f->domain_nodes : 1;
	unsigned gpn_nic, nch;
	double nic = f->nic_gbs;

	ph->nr = nranks;
	ph->m = (nnodes + dn - 1) / dn;
	ph->local = nranks / ph->m;
	ph->hop_net = f->hop_net_us;
	if (f->cal >= 0) {
		nic = P->cal_net_gbs[f->cal];
		ph->hop_net = P->cal_hop_us[f->cal];
	}
	/* a multi-node ring's bus rate: the channels crossing the boundary,
	 * one NIC each, at most all NICs of a network node */
	nch = f->net_ch;
	if (nch > f->nics * dn)
		nch = f->nics * dn;
	gpn_nic = f->gpn / (f->nics ? f->nics : 1);
	ph->b_net = nch * nic * (gpn_nic > 1 ? f->nic_share : 1.0);
	ph->spine_frac = 0;
	ph->cong = 1;
	ph->tier = 0;
	if (ph->m > f->leaf_nodes) {
		ph->spine_frac = 1.0 - (double)f->leaf_nodes / ph->m;
		ph->cong = 1.0 / (1.0 + ph->spine_frac * (f->oversub - 1.0 + f->ecmp));
		ph->tier = f->tier_us;
	}
}

static double ramp(double chunk, double half)
{
	return half <= 0 ? 1.0 : chunk / (chunk + half);
}

/* Effective bandwidth (GB/s) of `link` for protocol p with nch channels,
 * chunk bytes per channel-step and total bytes S. */
static double eff_bw(const struct bot_fabric *f, const struct bot_sim_params *P, int p,
		     double link, unsigned nch, double chunk, double S, int host_ll)
{
	/* a chunk costs a fixed handshake time on top of its transfer, so
	 * the chunk reaching 50% efficiency is that time x per-channel rate */
	double t0 = p == BOT_PROTO_SIMPLE ? P->simple_chunk_us :
		    p == BOT_PROTO_LL128 ? P->ll128_chunk_us : 0;
	double half = t0 * 1e3 * link / nch;
	double used, cap, bw;

	if (chunk > chunk_max[p])
		chunk = chunk_max[p];
	bw = link * payload[p] * ramp(chunk, half);
	/* small messages run on fewer channels (NCCL's thread thresholds) */
	used = S / 32768.0;
	if (used < 1)
		used = 1;
	if (used > nch)
		used = nch;
	cap = used * P->ll_ch_gbs * ch_rel[p] * f->ch_scale;
	if (p == BOT_PROTO_LL && host_ll && f->ll_host_gbs > 0)
		cap = fmin(cap, used * (f->cal == BOT_SIM_CAL_A10G ? P->cal_ll_host_gbs : f->ll_host_gbs));
	return fmin(bw, cap);
}

static double hop_mult(const struct bot_sim_params *P, int p)
{
	return p == BOT_PROTO_SIMPLE ? P->simple_hop : p == BOT_PROTO_LL128 ? P->ll128_hop : 1.0;
}

static unsigned ceil_log2(unsigned v)
{
	unsigned r = 0;

	while ((1u << r) < v)
		r++;
	return r;
}

static uint64_t fabric_hash(const struct bot_fabric *f);

/* A fabric where AUTO is right: the true latency is AUTO's own estimate
 * times 1 +- auto_truth, the factor a fixed function of the context and
 * arm (so near-ties may swap, and nothing else). */
static double auto_truth_us(const struct bot_fabric *f, int coll, double S, unsigned nnodes,
			    unsigned nranks, int arm)
{
	float tab[BOT_NARMS];
	uint64_t nb = S < 1 ? 1 : (uint64_t)S;
	uint64_t h = bot_rng(fabric_hash(f), 0x7472757468ULL, ((uint64_t)coll << 56) ^ nb,
			     ((uint64_t)nnodes << 32) ^ ((uint64_t)nranks << 8) ^ (uint64_t)arm);
	double u = (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;	/* [-1, 1) */

	bot_sim_auto_table_r(f, coll, nb, nnodes, nranks, tab);
	if (tab[arm] < 0)
		return -1;
	return (double)tab[arm] * (1.0 + f->auto_truth * u);
}

double bot_sim_model_us(const struct bot_fabric *f, const struct bot_sim_params *P,
			int coll, double S, unsigned nnodes, unsigned nranks, int arm)
{
	int a = bot_arm_algo(arm), p = bot_arm_proto(arm);
	const struct bot_sim_graph *g;
	struct phys ph;
	double hm = hop_mult(P, p), t, lat, bw, traffic, chunk, net_hop, b_nvl;
	unsigned nch, nr = nranks, depth;
	int ag_rs = coll == BOT_COLL_ALLGATHER || coll == BOT_COLL_REDUCESCATTER;

	if (f->auto_truth > 0)
		return auto_truth_us(f, coll, S, nnodes, nranks, arm);
	make_phys(f, P, nnodes, nranks, &ph);
	g = ph.m == 1 ? f->g1 : f->gn;
	nch = g[a].nch ? g[a].nch : 1;
	/* one network step: NIC + switches (+ spine tiers), Simple adds the
	 * proxy thread's progress and the GDR flush */
	net_hop = ph.hop_net * hm + ph.tier + (p == BOT_PROTO_SIMPLE ? f->proxy_us : 0);
	b_nvl = f->b_nvl;
	t = (f->cal == BOT_SIM_CAL_A10G ? P->cal_launch_us : f->launch_us) + P->skew_us * sqrt(2.0 * log((double)nr));
	depth = ceil_log2(ph.m);

	switch (a) {
	case BOT_ALGO_RING: {
		unsigned k = coll == BOT_COLL_ALLREDUCE ? 2 * (nr - 1) : nr - 1;
		unsigned ki = ph.m > 1 ? (coll == BOT_COLL_ALLREDUCE ? 2 : 1) * (ph.m - 1) : 0;
		double link = ph.m > 1 ? fmin(b_nvl, ph.b_net * ph.cong) : b_nvl;

		if (k < ki)
			k = ki;
		lat = (k - ki) * f->hop_intra_us * hm + ki * net_hop;
		if (coll == BOT_COLL_ALLREDUCE)
			traffic = 2.0 * (nr - 1) / nr;
		else if (ag_rs)
			traffic = (double)(nr - 1) / nr;
		else
			traffic = 1.0;
		chunk = (coll == BOT_COLL_BROADCAST || coll == BOT_COLL_REDUCE) ? S / nch :
			S / ((double)nr * nch);
		bw = eff_bw(f, P, p, link, nch, chunk, S, ph.m > 1);
		t += lat + traffic * S / (bw * 1e3);
		break;
	}
	case BOT_ALGO_TREE: {
		/* chain inside a domain, double binary tree across nodes */
		double link, fill;

		link = b_nvl;
		if (ph.m > 1) {
			double tc = 1.0 / (1.0 + fmin(1.0, 1.5 * ph.spine_frac) *
					   (f->oversub - 1.0 + f->ecmp));

			link = fmin(b_nvl, ph.b_net * tc / (1.0 + f->incast));
		}
		link *= P->tree_bw_eff;
		lat = 2.0 * ((ph.local - 1) * f->hop_intra_us * hm + depth * net_hop);
		chunk = S / nch;
		bw = eff_bw(f, P, p, link, nch, chunk, S, ph.m > 1);
		if (chunk > chunk_max[p])
			chunk = chunk_max[p];
		fill = P->tree_fill * 2.0 * (depth + (ph.local > 1)) * chunk / (bw / nch * 1e3);
		/* bytes per link direction: a chain moves 2S; across nodes a
		 * double binary tree moves 2(M-1)/M S per NIC, like a ring */
		traffic = ph.m > 1 ? 2.0 * (ph.m - 1) / ph.m : 2.0;
		t += lat + fill + traffic * S / (bw * 1e3);
		break;
	}
	case BOT_ALGO_NVLS: {
		/* NVSwitch multicast/reduce; multi-node only with SHARP */
		double nbw = b_nvl * f->nvls_gain * ramp(S / ph.local, 256.0 * 1024.0);

		if (coll != BOT_COLL_ALLREDUCE)
			nbw = b_nvl * 0.9 * ramp(S / ph.local, 128.0 * 1024.0);
		lat = f->nvls_lat_us;
		traffic = coll == BOT_COLL_ALLREDUCE ? 1.0 : (double)(ph.local - 1) / ph.local;
		if (ph.m > 1) {
			nbw = fmin(nbw, ph.b_net * ph.cong * f->sharp_eff);
			lat += 2.0 * net_hop + f->sharp_lat_us;
		}
		t += lat + traffic * S / (nbw * 1e3);
		break;
	}
	case BOT_ALGO_NVLS_TREE: {
		double nbw = b_nvl * f->nvls_gain * ramp(S / ph.local, 256.0 * 1024.0);
		double tc = 1.0 / (1.0 + fmin(1.0, 1.5 * ph.spine_frac) *
				   (f->oversub - 1.0 + f->ecmp));
		double tbw = ph.b_net * tc / (1.0 + f->incast) * P->tree_bw_eff;

		tbw = eff_bw(f, P, p, tbw, nch, S / nch, S, 1);
		lat = f->nvls_lat_us + 2.0 * depth * net_hop;
		t += lat + S / (nbw * 1e3) + 2.0 * S / (tbw * 1e3);
		t -= fmin(S / (nbw * 1e3), 2.0 * S / (tbw * 1e3)) * 0.8;	/* overlap */
		break;
	}
	case BOT_ALGO_COLLNET_DIRECT:
	case BOT_ALGO_COLLNET_CHAIN: {
		/* in-network reduction: each node sends its data once */
		double nbw = ph.b_net * ph.cong * f->sharp_eff;
		double intra = a == BOT_ALGO_COLLNET_DIRECT ?
			2.0 * f->hop_intra_us * hm + 0.4 * (ph.local - 1) :
			2.0 * (ph.local - 1) * f->hop_intra_us * hm;

		if (a == BOT_ALGO_COLLNET_CHAIN)
			nbw = fmin(nbw, b_nvl * 0.5);
		nbw = eff_bw(f, P, p, nbw, nch, S / nch, S, 1);
		lat = intra + 2.0 * net_hop + f->sharp_lat_us;
		t += lat + S / (nbw * 1e3);
		break;
	}
	case BOT_ALGO_PAT: {
		/* log-depth exchanges, one GPU per node */
		double link = ph.b_net * ph.cong * 0.9;

		lat = depth * net_hop + nr * 1.0;
		bw = eff_bw(f, P, p, link, nch, S / ((double)nr * nch), S, 1);
		t += lat + (double)(nr - 1) / nr * S / (bw * 1e3);
		break;
	}
	default:
		return -1;
	}
	return t;
}

double bot_sim_true_us(const struct bot_fabric *f, int coll, uint64_t nbytes,
		       unsigned nnodes, int arm)
{
	float tab[BOT_NARMS];

	if (arm < 0 || arm >= BOT_NARMS || coll < 0 || coll >= BOT_NCOLL)
		return -1;
	bot_sim_auto_table(f, coll, nbytes, nnodes, tab);
	if (tab[arm] < 0)
		return -1;
	return bot_sim_model_us(f, &bot_sim_frozen, coll, (double)nbytes, nnodes,
				nnodes * f->gpn, arm);
}

/* Uniform in (0, 1) from 53 bits. */
static double unit(uint64_t h)
{
	return ((double)(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

#define SIM_STREAM 0x73696d6e6f697365ULL	/* "simnoise" */

static uint64_t fabric_hash(const struct bot_fabric *f)
{
	uint64_t h = 1469598103934665603ULL;
	const char *s;

	for (s = f->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return bot_mix64(h);
}

/* Noise multiplier of sample i: log-normal body, rare 2-10x outliers. */
static double noise(const struct bot_fabric *f, uint64_t key, int arm, uint64_t seed, uint64_t i)
{
	uint64_t h = bot_rng(seed ^ fabric_hash(f), SIM_STREAM, key, ((uint64_t)arm << 48) ^ i);
	double u1 = unit(bot_mix64(h ^ 1)), u2 = unit(bot_mix64(h ^ 2));
	double u3 = unit(bot_mix64(h ^ 3)), u4 = unit(bot_mix64(h ^ 4));
	double z = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
	double m = exp(f->sigma * z);

	if (u3 < f->outlier_p)
		m *= exp(log(2.0) + u4 * (log(10.0) - log(2.0)));
	return m;
}

double bot_sim_sample_us(const struct bot_fabric *f, int coll, uint64_t nbytes,
			 unsigned nnodes, int arm, uint64_t seed, uint64_t i)
{
	double t = bot_sim_true_us(f, coll, nbytes, nnodes, arm);
	uint64_t key;

	if (t < 0)
		return -1;
	key = bot_ctx_key((unsigned)coll, bot_size_bucket(nbytes), nnodes * f->gpn, nnodes);
	return t * noise(f, key, arm, seed, i);
}

double bot_sim_noisy(const struct bot_fabric *f, uint64_t key, int arm, double t,
		     uint64_t seed, uint64_t i)
{
	return t * noise(f, key, arm, seed, i);
}
