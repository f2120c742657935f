/*
 * sim_family.c - the simulator's second family of fabrics ("alt"), built
 * from compact specifications instead of typed-in facts.
 *
 * The built-in fabrics (sim.c) list every fact by hand: NCCL's graph facts
 * and the measured model's physics. This family is built differently, so
 * that policies tuned on one family can be scored on the other without
 * sharing its hand-set numbers: each entry names only what a datasheet
 * gives (GPU generation, how the GPUs of a node are connected, NICs and
 * their rate, the network's latency, leaf size, oversubscription, ECMP and
 * incast behaviour, noise), and alt_build() derives both NCCL's view
 * (channels and per-channel bandwidths, as its topology search would find
 * them) and the physics from those. The family covers other vendors'
 * networks (AWS EFA, HPE Slingshot), an oversubscribed RoCE spine, partial
 * NVLink domains (PCIe cards with NVLink bridges in pairs; GB200 in NVL36
 * racks), and a fabric whose true latencies are AUTO's own estimates within
 * a few percent, where the best a policy can do is not to explore.
 *
 * The fabrics are built once (pthread_once) into static storage; callers
 * get pointers that live as long as the process.
 */
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "sim/sim_int.h"

/* How the GPUs of one node (or NVLink domain) reach each other. */
enum { LINK_NVSWITCH = 0, LINK_NVL_MESH = 1, LINK_NVL_PAIRS = 2, LINK_PCIE = 3 };

struct alt_spec {
	const char *name, *desc;
	unsigned gpn, domain_nodes, max_nodes;
	int cc_idx, cpu_amd, link, nvls, collnet;
	double nic_gbps;	/* one NIC, Gb/s */
	unsigned nics;		/* per node */
	double hop_net_us, proxy_us, tier_us;
	unsigned leaf_nodes;
	double oversub, ecmp, incast, nic_share;
	double sigma, outlier_p;
	double auto_truth;	/* > 0: true latency = AUTO's estimate x (1 +- this) */
};

static const struct alt_spec specs[] = {
	{ "h100-efa", "alt: 8x H100 SXM (NVSwitch, NVLS), AWS EFA (SRD over 32x 100G, as 8x 400G), "
		      "high per-message latency of libfabric, packet spraying (no ECMP collisions), cloud jitter",
	  8, 1, 64, 2, 0, LINK_NVSWITCH, 1, 0, 400, 8, 14.0, 8.0, 1.0, 64, 1.0, 0.0, 0.1, 1.0,
	  0.06, 0.006, 0 },
	{ "h100-slingshot", "alt: 4x H100 per node in a direct NVLink mesh (no NVSwitch), HPE Slingshot "
			    "4x 200G, dragonfly groups of 16 nodes with 1.5:1 global taper, adaptive routing",
	  4, 1, 64, 2, 1, LINK_NVL_MESH, 0, 0, 200, 4, 3.5, 3.0, 1.5, 16, 1.5, 0.2, 0.15, 1.0,
	  0.045, 0.004, 0 },
	{ "a100-roce-os4", "alt: 8x A100 (NVSwitch), 2x 200G RoCE NICs shared by 4 GPUs each, 8-node "
			   "leaves under a 4:1 oversubscribed spine, DCQCN, Intel host",
	  8, 1, 64, 1, 0, LINK_NVSWITCH, 0, 0, 200, 2, 5.5, 4.0, 2.0, 8, 4.0, 0.3, 0.3, 0.8,
	  0.05, 0.004, 0 },
	{ "h100-pcie-bridge", "alt: 8x H100 PCIe per node, NVLink bridges between pairs only (a partial "
			      "NVLink domain: rings cross PCIe), 2x 400G IB shared by 4 GPUs each",
	  8, 1, 64, 2, 0, LINK_NVL_PAIRS, 0, 0, 400, 2, 3.5, 3.0, 0.8, 32, 1.0, 0.12, 0.05, 0.8,
	  0.04, 0.003, 0 },
	{ "gb200-nvl36", "alt: GB200 in NVL36 racks (9 trays of 4 B200 per NVLink domain: 36 ranks, "
			 "above NVLS's 32-rank limit for allgather), 4x 400G IB per tray, Grace host",
	  4, 9, 64, 3, 0, LINK_NVSWITCH, 1, 0, 400, 4, 3.5, 2.5, 0.8, 4, 1.0, 0.1, 0.05, 1.0,
	  0.03, 0.003, 0 },
	{ "h100-ib-auto", "alt: 8x H100 SXM (NVSwitch, NVLS), 8x 400G IB; its true latencies are AUTO's "
			  "estimates within 3%: AUTO is right almost everywhere, exploring only costs",
	  8, 1, 64, 2, 0, LINK_NVSWITCH, 1, 0, 400, 8, 3.2, 2.5, 0.8, 32, 1.0, 0.12, 0.05, 1.0,
	  0.03, 0.003, 0.03 },
};

#define NALT (sizeof(specs) / sizeof(specs[0]))

static struct bot_fabric alt[NALT];
static pthread_once_t alt_once = PTHREAD_ONCE_INIT;

static void graph(struct bot_sim_graph *g, unsigned nch, double intra, double inter)
{
	g->nch = (unsigned char)nch;
	g->bw_intra = (float)intra;
	g->bw_inter = (float)inter;
}

/* Derive a fabric from its specification. */
static void alt_build(const struct alt_spec *s, struct bot_fabric *f)
{
	/* per GPU generation: intra-node channels, their bandwidth on an
	 * NVSwitch, the NVSwitch bus rate per GPU, launch cost, LL hop,
	 * per-channel SM rate relative to H100 */
	static const unsigned gen_nch[4] = { 0, 24, 24, 32 };
	static const double gen_bw[4] = { 0, 10, 20, 20 }, gen_bus[4] = { 0, 235, 370, 720 };
	static const double gen_launch[4] = { 0, 6.0, 5.0, 4.5 }, gen_hop[4] = { 0, 1.1, 0.9, 1.2 };
	static const double gen_ch[4] = { 0, 0.65, 1.0, 1.6 };
	int cc = s->cc_idx;
	double nic = s->nic_gbps / 8.0 * 0.92;	/* GB/s after protocol overhead */
	unsigned nch_net = s->nics >= 2 ? 16 : 8;
	double net_per_ch = nic * s->nics / nch_net;
	double intra_ch, bus;
	unsigned nch_intra;

	memset(f, 0, sizeof(*f));
	f->name = s->name;
	f->desc = s->desc;
	f->gpn = s->gpn;
	f->min_nodes = 1;
	f->max_nodes = s->max_nodes;
	f->domain_nodes = s->domain_nodes;
	f->scoring = 0;
	f->family = BOT_SIM_FAMILY_ALT;
	f->cal = -1;
	f->cc_idx = cc;
	f->cpu_amd = s->cpu_amd;
	f->ll128 = 1;
	/* What NCCL's search finds inside a node: NVLink rings on an NVSwitch
	 * or a full mesh; with NVLink in pairs only, no ring closes over
	 * NVLink, so the graph is PCI with few channels. */
	switch (s->link) {
	case LINK_NVSWITCH:
		nch_intra = gen_nch[cc], intra_ch = gen_bw[cc], bus = gen_bus[cc];
		f->intra_nvl = 1, f->nvswitch = 1;
		break;
	case LINK_NVL_MESH:
		nch_intra = 12, intra_ch = gen_bw[cc] * 0.8, bus = gen_bus[cc] * 0.8;
		f->intra_nvl = 1;
		break;
	case LINK_NVL_PAIRS:
		nch_intra = 4, intra_ch = 12, bus = 24;
		break;
	default:
		nch_intra = 2, intra_ch = 12, bus = 22;
		break;
	}
	f->nvls = s->nvls && s->link == LINK_NVSWITCH && cc >= 2;
	f->collnet = s->collnet;
	graph(&f->g1[BOT_ALGO_RING], nch_intra, intra_ch, intra_ch);
	graph(&f->g1[BOT_ALGO_TREE], nch_intra, intra_ch, intra_ch);
	graph(&f->gn[BOT_ALGO_RING], nch_net, net_per_ch, net_per_ch);
	graph(&f->gn[BOT_ALGO_TREE], nch_net, net_per_ch, net_per_ch);
	if (f->nvls) {
		unsigned nn = cc >= 3 ? 24 : 16;

		graph(&f->g1[BOT_ALGO_NVLS], nn, intra_ch, 2 * intra_ch);
		graph(&f->g1[BOT_ALGO_NVLS_TREE], nn, intra_ch, 2 * intra_ch);
		graph(&f->gn[BOT_ALGO_NVLS], nn, intra_ch, net_per_ch);
		graph(&f->gn[BOT_ALGO_NVLS_TREE], nn, intra_ch, net_per_ch);
	}
	if (f->collnet) {
		graph(&f->gn[BOT_ALGO_COLLNET_DIRECT], nch_net, intra_ch, net_per_ch);
		graph(&f->gn[BOT_ALGO_COLLNET_CHAIN], nch_net, intra_ch, net_per_ch);
	}
	/* physics */
	f->b_nvl = bus;
	f->nic_gbs = nic;
	f->nics = s->nics;
	f->net_ch = 2 * s->nics;
	f->launch_us = gen_launch[cc];
	f->hop_intra_us = s->link == LINK_NVSWITCH ? gen_hop[cc] : s->link == LINK_NVL_MESH ?
			  gen_hop[cc] * 1.1 : 2.0;
	f->hop_net_us = s->hop_net_us;
	f->proxy_us = s->proxy_us;
	f->ch_scale = gen_ch[cc];
	f->leaf_nodes = s->leaf_nodes;
	f->oversub = s->oversub;
	f->ecmp = s->ecmp;
	f->tier_us = s->tier_us;
	f->incast = s->incast;
	f->nic_share = s->nic_share;
	f->nvls_lat_us = cc >= 3 ? 14.0 : 12.0;
	f->nvls_gain = cc >= 3 ? 0.7 : 0.75;
	f->sharp_eff = 0.8;
	f->sharp_lat_us = 3.0;
	f->sigma = s->sigma;
	f->outlier_p = s->outlier_p;
	f->auto_truth = s->auto_truth;
}

static void alt_init(void)
{
	for (unsigned i = 0; i < NALT; i++)
		alt_build(&specs[i], &alt[i]);
}

unsigned bot_sim_alt_count(void)
{
	return NALT;
}

const struct bot_fabric *bot_sim_alt(unsigned i)
{
	if (i >= NALT)
		return NULL;
	pthread_once(&alt_once, alt_init);
	return &alt[i];
}
