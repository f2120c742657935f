/*
 * sim_int.h - internals of the fabric simulator shared by sim/sim_*.c and
 * its unit test (not part of the simulator's public API, sim/sim.h).
 *
 * A fabric is two sets of facts: what NCCL's topology search and init would
 * report for it (channel counts, per-channel bandwidths, link types, compute
 * capability, CPU vendor: the inputs of NCCL's AUTO cost model), and the
 * physics our "measured" model uses (link rates, per-hop latencies, switch
 * tiers, oversubscription, ...). The measured model's free effect
 * magnitudes live in struct bot_sim_params; the frozen set used everywhere
 * is bot_sim_frozen (sim/sim_model.c), fitted by `nccl-bot sim
 * --calibrate` against data/external/sweep.
 */
#ifndef BOT_SIM_INT_H
#define BOT_SIM_INT_H

#include <stdio.h>

#include "sim/sim.h"

/* What NCCL's search reports for one algorithm's graph. */
struct bot_sim_graph {
	unsigned char nch;	/* channels */
	float bw_intra;		/* per channel, GB/s */
	float bw_inter;		/* per channel, GB/s */
};

struct bot_fabric {
	const char *name, *desc;
	unsigned gpn;		/* GPUs per (physical) node */
	unsigned min_nodes, max_nodes;
	unsigned domain_nodes;	/* nodes per NVLink domain (MNNVL), 1 = node */
	unsigned scoring;	/* part of the default generation */
	int cal;		/* -1, or calibration slot (BOT_SIM_CAL_*) */

	/* --- what NCCL sees (AUTO cost model inputs) --- */
	int cc_idx;		/* 1 Ampere, 2 Hopper, 3 Blackwell */
	int cpu_amd;		/* llMaxBws row / net overhead: AMD */
	int intra_nvl;		/* intra graph typeIntra is NVLink (else PCI) */
	int ll128;		/* LL128 enabled by default on this topology */
	int nvswitch;		/* NVSwitch present (CollNetDirect) */
	int nvls;		/* NVLS (multicast) supported */
	int collnet;		/* CollNet (SHARP) plugin loaded */
	int tree_pattern_tree;	/* maxTreePattern == TREE (x0.85) */
	float lat_inter;	/* graph latencyInter, us */
	struct bot_sim_graph g1[BOT_NALGO];	/* graphs on one NCCL node */
	struct bot_sim_graph gn[BOT_NALGO];	/* graphs across NCCL nodes */

	/* --- measured-model physics --- */
	double b_nvl;		/* per-GPU intra-domain bus bandwidth, GB/s */
	double nic_gbs;		/* one NIC's achievable rate, GB/s */
	unsigned nics;		/* NICs per node */
	unsigned net_ch;	/* channels a multi-node ring spreads over NICs */
	double launch_us;	/* kernel launch + completion */
	double hop_intra_us;	/* one LL step over NVLink/PCIe */
	double hop_net_us;	/* one LL step over the network */
	double proxy_us;	/* extra per network step for Simple (proxy, flush) */
	double ch_scale;	/* per-channel SM throughput vs H100 */
	unsigned leaf_nodes;	/* nodes under one leaf / rail group */
	double oversub;		/* spine oversubscription (>= 1) */
	double ecmp;		/* extra spine loss from flow collisions */
	double tier_us;		/* extra latency per network step across spine */
	double incast;		/* slowdown per extra sender into one NIC */
	double nic_share;	/* efficiency when GPUs share a NIC */
	double nvls_lat_us;	/* NVLS multicast + fence per call */
	double nvls_gain;	/* NVLS allreduce algbw / b_nvl */
	double sharp_eff;	/* SHARP in-network reduction efficiency */
	double sharp_lat_us;	/* SHARP aggregation latency */
	double ll_host_gbs;	/* LL per-channel cap on host-memory transports; 0 = none */
	double sigma;		/* log-normal noise */
	double outlier_p;	/* outlier probability per call */
	int family;		/* BOT_SIM_FAMILY_* */
	double auto_truth;	/* > 0: the true latency is AUTO's estimate within +- this
				 * fraction (a fabric where AUTO is right); 0: the model */
};

enum { BOT_SIM_CAL_A10G = 0, BOT_SIM_CAL_MODAL = 1 };
enum { BOT_SIM_FAMILY_BUILTIN = 0, BOT_SIM_FAMILY_ALT = 1, BOT_SIM_FAMILY_CAL = 2 };

/* The second family (sim/sim_family.c), built from specifications. */
unsigned bot_sim_alt_count(void);
const struct bot_fabric *bot_sim_alt(unsigned i);

/* AUTO's table for an explicit rank count (sim_auto.c). */
void bot_sim_auto_table_r(const struct bot_fabric *f, int coll, uint64_t nbytes,
			  unsigned nnodes, unsigned nranks, float out[BOT_NARMS]);

/* Free effect magnitudes of the measured model (fitted, then frozen). */
struct bot_sim_params {
	double simple_chunk_us;	/* fixed cost per Simple chunk (handshake) */
	double ll128_chunk_us;	/* same for LL128 */
	double ll_ch_gbs;	/* LL per-channel cap on H100, GB/s */
	double simple_hop;	/* Simple per-step latency vs LL */
	double ll128_hop;	/* LL128 per-step latency vs LL */
	double tree_bw_eff;	/* tree bandwidth vs ring's */
	double tree_fill;	/* tree pipeline-fill chunks per level */
	double skew_us;		/* rank arrival skew scale */
	/* calibration fabrics' own unknowns (do not transfer) */
	double cal_net_gbs[2];
	double cal_hop_us[2];
	double cal_ll_host_gbs;	/* a10g LL cap over host memory */
	double cal_launch_us;	/* a10g fixed cost per call (sockets) */
};
#define BOT_SIM_NPARAMS 14

extern const struct bot_sim_params bot_sim_frozen;
extern const struct bot_sim_params bot_sim_prior;
extern const char *const bot_sim_param_names[BOT_SIM_NPARAMS];
extern const unsigned char bot_sim_param_fit[BOT_SIM_NPARAMS];
double *bot_sim_param_ref(struct bot_sim_params *p, unsigned i);

/* Every fabric including calibration ones, for listings. */
unsigned bot_sim_nall(void);
const struct bot_fabric *bot_sim_fabric_any(unsigned i);

/* Calibration fabrics (not in bot_sim_fabric()'s list). */
const struct bot_fabric *bot_sim_cal_fabric(int slot);

/* Measured model with explicit parameters and rank count. */
double bot_sim_model_us(const struct bot_fabric *f, const struct bot_sim_params *p,
			int coll, double nbytes, unsigned nnodes, unsigned nranks, int arm);

/* Sample i of a context whose true latency t is known (key: context key). */
double bot_sim_noisy(const struct bot_fabric *f, uint64_t key, int arm, double t,
		     uint64_t seed, uint64_t i);

/* Calibration error of parameters p against the calibration rows of sw. */
struct bot_sim_calerr {
	unsigned nabs, nratio;		/* rows / arm pairs used */
	double abs_med, abs_p90;	/* |ln(pred/meas)|, per arm row (a10g) */
	double ratio_med, ratio_p90;	/* |ln ratio error| vs the best arm */
	double objective;
};
int bot_sim_calerr(const struct bot_sweep *sw, const struct bot_sim_params *p,
		   struct bot_sim_calerr *e);
/* Coordinate search from start; writes the fit into out. progress (may be
 * NULL) is told the parameter trials tried of the most the search can take
 * (done of total; done jumps to total when the search stops early): each
 * trial scores every calibration (context, arm), so 10 MB of distinct
 * contexts (120k rows) take about 25 s of CPU. */
void bot_sim_fit(const struct bot_sweep *sw, const struct bot_sim_params *start,
		 struct bot_sim_params *out,
		 void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg);
/* Log-noise sigma estimated from repeated rows of sw (modal 2x4 reruns). */
double bot_sim_repeat_sigma(const struct bot_sweep *sw, unsigned *npairs);

/* Frozen calibration error bounds (measured 0.182 / 0.563 / 0.221 / 0.650,
 * recorded in doc/simulator.md; tests/unit/test_sim.c recomputes them). */
#define BOT_SIM_CAL_ABS_MED_MAX 0.19
#define BOT_SIM_CAL_ABS_P90_MAX 0.57
#define BOT_SIM_CAL_RATIO_MED_MAX 0.23
#define BOT_SIM_CAL_RATIO_P90_MAX 0.66

/* Fraction of contexts where AUTO's arm is > 10% slower than the best arm
 * (true latencies), over nodes in [lo, hi]; n receives the context count. */
double bot_sim_auto_wrong(const struct bot_fabric *f, unsigned lo, unsigned hi,
			  double margin, unsigned *n);

#endif
