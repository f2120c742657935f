/*
 * sim.c - the named fabrics of the simulator and forced-arm sweep generation.
 *
 * Each fabric carries two kinds of facts (struct bot_fabric, sim_int.h):
 * what NCCL's topology search would report (fed to our copy of AUTO's cost
 * model, sim_auto.c) and the physics of the measured model (sim_model.c).
 * The four scoring fabrics are DGX-like H100 with IB NDR rails and SHARP,
 * H100 with shared RoCE NICs behind an oversubscribed spine, DGX A100 with IB
 * HDR, and GB200 NVL72 (4-GPU trays, 18 per NVLink domain). Two calibration
 * fabrics mirror the external measurements in data/external. A second
 * family, built from specifications, lives in sim_family.c; the lookups
 * here cover both.
 *
 * Generation walks fabric x collective x nodes x size x supported arm and
 * appends `samples` rows each; a row depends only on (seed, fabric, context,
 * arm, sample index), so any subset generates the same rows.
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "sim/sim_int.h"

#define G(n, i, o) { (n), (i), (o) }
#define G0 { 0, 0, 0 }

static const struct bot_fabric fabrics[] = {
	{
		.name = "h100-ib-ndr",
		.desc = "8x H100 SXM per node (NVLink4, NVSwitch, NVLS), 8x 400G IB NDR rails, "
			"non-blocking fat tree in 32-node rail groups, SHARP (CollNet) on, Intel host",
		.gpn = 8, .min_nodes = 1, .max_nodes = 64, .domain_nodes = 1,
		.scoring = 1, .cal = -1,
		.cc_idx = 2, .cpu_amd = 0, .intra_nvl = 1, .ll128 = 1, .nvswitch = 1,
		.nvls = 1, .collnet = 1, .lat_inter = 0,
		.g1 = { G(24, 20, 20), G(24, 20, 20), G0, G0, G(16, 20, 40), G(16, 20, 40), G0 },
		.gn = { G(16, 24, 24), G(16, 24, 24), G(16, 24, 24), G(16, 24, 24),
			G(16, 20, 24), G(16, 20, 24), G0 },
		.b_nvl = 370, .nic_gbs = 46, .nics = 8, .net_ch = 8,
		.launch_us = 5.0, .hop_intra_us = 0.9, .hop_net_us = 3.2, .proxy_us = 2.5,
		.ch_scale = 1.0, .leaf_nodes = 32, .oversub = 1.0, .ecmp = 0.12,
		.tier_us = 0.8, .incast = 0.05, .nic_share = 1.0,
		.nvls_lat_us = 12.0, .nvls_gain = 0.75, .sharp_eff = 0.8, .sharp_lat_us = 3.0,
		.sigma = 0.03, .outlier_p = 0.003,
	},
	{
		.name = "h100-roce",
		.desc = "8x H100 SXM per node (NVLink4, NVSwitch, NVLS), 4x 400G RoCEv2 NICs shared "
			"by GPU pairs, 16-node leaves with a 2:1 spine, ECMP + DCQCN, Intel host",
		.gpn = 8, .min_nodes = 1, .max_nodes = 64, .domain_nodes = 1,
		.scoring = 1, .cal = -1,
		.cc_idx = 2, .cpu_amd = 0, .intra_nvl = 1, .ll128 = 1, .nvswitch = 1,
		.nvls = 1, .collnet = 0, .lat_inter = 0,
		.g1 = { G(24, 20, 20), G(24, 20, 20), G0, G0, G(16, 20, 40), G(16, 20, 40), G0 },
		.gn = { G(16, 12, 12), G(16, 12, 12), G0, G0, G(16, 20, 12), G(16, 20, 12), G0 },
		.b_nvl = 370, .nic_gbs = 44, .nics = 4, .net_ch = 8,
		.launch_us = 5.0, .hop_intra_us = 0.9, .hop_net_us = 5.0, .proxy_us = 4.0,
		.ch_scale = 1.0, .leaf_nodes = 16, .oversub = 2.0, .ecmp = 0.25,
		.tier_us = 1.5, .incast = 0.3, .nic_share = 0.85,
		.nvls_lat_us = 12.0, .nvls_gain = 0.75,
		.sigma = 0.05, .outlier_p = 0.004,
	},
	{
		.name = "a100-ib-hdr",
		.desc = "8x A100 SXM4 per node (NVLink3, NVSwitch, no NVLS), 8x 200G IB HDR rails, "
			"fat tree in 20-node scalable units, AMD host",
		.gpn = 8, .min_nodes = 1, .max_nodes = 64, .domain_nodes = 1,
		.scoring = 1, .cal = -1,
		.cc_idx = 1, .cpu_amd = 1, .intra_nvl = 1, .ll128 = 1, .nvswitch = 1,
		.nvls = 0, .collnet = 0, .lat_inter = 0,
		.g1 = { G(24, 10, 10), G(24, 10, 10), G0, G0, G0, G0, G0 },
		.gn = { G(8, 24, 24), G(8, 24, 24), G0, G0, G0, G0, G0 },
		.b_nvl = 235, .nic_gbs = 23, .nics = 8, .net_ch = 8,
		.launch_us = 6.0, .hop_intra_us = 1.1, .hop_net_us = 4.0, .proxy_us = 3.0,
		.ch_scale = 0.65, .leaf_nodes = 20, .oversub = 1.0, .ecmp = 0.15,
		.tier_us = 1.0, .incast = 0.05, .nic_share = 1.0,
		.sigma = 0.035, .outlier_p = 0.003,
	},
	{
		.name = "gb200-nvl",
		.desc = "GB200 NVL72: 4x B200 per compute tray, 18 trays per NVLink5 domain (MNNVL, "
			"NVLS), 4x 400G IB per tray between racks, Grace (Arm) host",
		.gpn = 4, .min_nodes = 1, .max_nodes = 64, .domain_nodes = 18,
		.scoring = 1, .cal = -1,
		.cc_idx = 3, .cpu_amd = 0, .intra_nvl = 1, .ll128 = 1, .nvswitch = 1,
		.nvls = 1, .collnet = 0, .lat_inter = 0,
		.g1 = { G(32, 20, 20), G(32, 20, 20), G0, G0, G(24, 30, 60), G(24, 30, 60), G0 },
		.gn = { G(16, 24, 24), G(16, 24, 24), G0, G0, G(24, 30, 16), G(24, 30, 16), G0 },
		.b_nvl = 720, .nic_gbs = 46, .nics = 4, .net_ch = 16,
		.launch_us = 4.5, .hop_intra_us = 1.2, .hop_net_us = 3.5, .proxy_us = 2.5,
		.ch_scale = 1.6, .leaf_nodes = 4, .oversub = 1.0, .ecmp = 0.1,
		.tier_us = 0.8, .incast = 0.05, .nic_share = 1.0,
		.nvls_lat_us = 14.0, .nvls_gain = 0.7,
		.sigma = 0.03, .outlier_p = 0.003,
	},
	/* calibration fabrics (not scoring) */
	{
		.name = "aws-g5-a10g",
		.desc = "calibration: 1x A10G per node (PCIe Gen4), AWS g5.xlarge Ethernet, NCCL "
			"socket transport (no GDR), AMD host; data/external/sweep/aws-g5-a10g.csv",
		.gpn = 1, .min_nodes = 2, .max_nodes = 8, .domain_nodes = 1,
		.scoring = 0, .cal = BOT_SIM_CAL_A10G, .family = BOT_SIM_FAMILY_CAL,
		.cc_idx = 1, .cpu_amd = 1, .intra_nvl = 0, .ll128 = 1, .nvswitch = 0,
		.nvls = 0, .collnet = 0, .lat_inter = 0,
		.g1 = { G(2, 1.2f, 1.2f), G(2, 1.2f, 1.2f), G0, G0, G0, G0, G(2, 1.2f, 1.2f) },
		.gn = { G(2, 1.2f, 1.2f), G(2, 1.2f, 1.2f), G0, G0, G0, G0, G(2, 1.2f, 1.2f) },
		.b_nvl = 20, .nic_gbs = 1.2, .nics = 1, .net_ch = 1,
		.launch_us = 30.0, .hop_intra_us = 5.0, .hop_net_us = 100.0, .proxy_us = 40.0,
		.ch_scale = 0.5, .leaf_nodes = 64, .oversub = 1.0, .ecmp = 0,
		.tier_us = 0, .incast = 0, .nic_share = 1.0, .ll_host_gbs = 0.12,
		.sigma = 0.06, .outlier_p = 0.005,
	},
	{
		.name = "modal-a100",
		.desc = "calibration: 8 ranks of A100 as 1x8, 2x4, 4x2 (Modal), network not "
			"documented, 2 channels across nodes; iteration times incl. a matmul",
		.gpn = 8, .min_nodes = 1, .max_nodes = 4, .domain_nodes = 1,
		.scoring = 0, .cal = BOT_SIM_CAL_MODAL, .family = BOT_SIM_FAMILY_CAL,
		.cc_idx = 1, .cpu_amd = 1, .intra_nvl = 1, .ll128 = 1, .nvswitch = 1,
		.nvls = 0, .collnet = 0, .lat_inter = 0,
		.g1 = { G(24, 10, 10), G(24, 10, 10), G0, G0, G0, G0, G0 },
		.gn = { G(2, 12, 12), G(2, 12, 12), G0, G0, G0, G0, G0 },
		.b_nvl = 235, .nic_gbs = 12, .nics = 2, .net_ch = 2,
		.launch_us = 6.0, .hop_intra_us = 1.1, .hop_net_us = 20.0, .proxy_us = 5.0,
		.ch_scale = 0.65, .leaf_nodes = 64, .oversub = 1.0, .ecmp = 0,
		.tier_us = 0, .incast = 0, .nic_share = 1.0,
		.sigma = 0.06, .outlier_p = 0.004,
	},
};

#define NFABRICS (sizeof(fabrics) / sizeof(fabrics[0]))
#define NSCORING 4	/* the scoring fabrics come first */

const unsigned bot_sim_default_nodes[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 };
const unsigned bot_sim_default_nnodes = sizeof(bot_sim_default_nodes) / sizeof(bot_sim_default_nodes[0]);

/* The enumerated fabrics are the scoring ones; calibration fabrics are only
 * reachable by name (bot_sim_fabric_find) or slot. */
unsigned bot_sim_nfabrics(void)
{
	return NSCORING;
}

const struct bot_fabric *bot_sim_fabric(unsigned i)
{
	return i < NSCORING ? &fabrics[i] : NULL;
}

/* Every fabric, calibration and the second family included (for --list):
 * the built-in table first, then sim_family.c's. */
unsigned bot_sim_nall(void)
{
	return NFABRICS + bot_sim_alt_count();
}

const struct bot_fabric *bot_sim_fabric_any(unsigned i)
{
	return i < NFABRICS ? &fabrics[i] : bot_sim_alt(i - NFABRICS);
}

const struct bot_fabric *bot_sim_fabric_find(const char *name)
{
	unsigned i;

	for (i = 0; name && i < bot_sim_nall(); i++)
		if (!strcasecmp(bot_sim_fabric_any(i)->name, name))
			return bot_sim_fabric_any(i);
	return NULL;
}

static const char *const family_names[] = { "builtin", "alt", "calibration" };

const char *bot_sim_fabric_family(const struct bot_fabric *f)
{
	return family_names[f->family];
}

int bot_sim_select(const char *list, const struct bot_fabric **out, unsigned max, unsigned *n,
		   char *bad, size_t badlen)
{
	const char *p = list;

	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");
		char name[64];
		int fam = -1, found = 0;

		snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1), p);
		for (int k = 0; k < 3; k++)
			if (!strcmp(name, family_names[k]))
				fam = k;
		for (unsigned i = 0; len && i < bot_sim_nall(); i++) {
			const struct bot_fabric *f = bot_sim_fabric_any(i);
			int dup = 0;

			if (fam >= 0 ? (f->family != fam || (fam == BOT_SIM_FAMILY_BUILTIN && !f->scoring)) :
				       strcasecmp(f->name, name))
				continue;
			found = 1;
			for (unsigned j = 0; j < *n; j++)
				dup |= out[j] == f;
			if (dup)
				continue;
			if (*n == max) {
				snprintf(bad, badlen, "more than %u fabrics", max);
				return -1;
			}
			out[(*n)++] = f;
		}
		if (!found) {
			snprintf(bad, badlen, "%s", len ? name : "(empty name)");
			return -1;
		}
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

const struct bot_fabric *bot_sim_cal_fabric(int slot)
{
	unsigned i;

	for (i = 0; i < NFABRICS; i++)
		if (fabrics[i].cal == slot)
			return &fabrics[i];
	return NULL;
}

const char *bot_sim_fabric_name(const struct bot_fabric *f) { return f->name; }
const char *bot_sim_fabric_desc(const struct bot_fabric *f) { return f->desc; }
unsigned bot_sim_gpus_per_node(const struct bot_fabric *f) { return f->gpn; }
unsigned bot_sim_max_nodes(const struct bot_fabric *f) { return f->max_nodes; }

void bot_sim_node_range(const struct bot_fabric *f, unsigned *lo, unsigned *hi)
{
	unsigned l = f->min_nodes ? f->min_nodes : 1;

	/* a collective needs two ranks: one GPU a node starts at two nodes */
	while (l * f->gpn < 2 && l < f->max_nodes)
		l++;
	*lo = l;
	*hi = f->max_nodes;
}

int bot_sim_has_nodes(const struct bot_fabric *f, unsigned nnodes)
{
	unsigned lo, hi;

	bot_sim_node_range(f, &lo, &hi);
	return nnodes >= lo && nnodes <= hi;
}

unsigned bot_sim_nccl_nodes(const struct bot_fabric *f, unsigned nnodes)
{
	unsigned dn = f && f->domain_nodes ? f->domain_nodes : 1;

	return (nnodes + dn - 1) / dn;
}

static int gen_context(const struct bot_fabric *f, int fidx, int coll, uint64_t nbytes,
		       unsigned nnodes, const struct bot_sim_opts *o, struct bot_sweep *sw)
{
	float tab[BOT_NARMS];
	unsigned nranks = nnodes * f->gpn;
	uint64_t key = bot_ctx_key((unsigned)coll, bot_size_bucket(nbytes), nranks, nnodes);
	struct bot_sweep_row r;
	int arm;
	uint64_t i;

	bot_sim_auto_table(f, coll, nbytes, nnodes, tab);
	memset(&r, 0, sizeof(r));
	r.fabric = (uint16_t)fidx;
	r.coll = (int8_t)coll;
	r.nchannels = -1;
	r.captured = -1;
	r.aggregate = -1;
	r.num_pipe_ops = 1;
	r.nbytes = nbytes;
	r.nranks = nranks;
	r.nnodes = nnodes;
	for (arm = 0; arm < BOT_NARMS; arm++) {
		double t;

		if (tab[arm] < 0)
			continue;
		t = bot_sim_model_us(f, &bot_sim_frozen, coll, (double)nbytes, nnodes, nranks, arm);
		r.algo = (int8_t)bot_arm_algo(arm);
		r.proto = (int8_t)bot_arm_proto(arm);
		r.auto_us = tab[arm];
		for (i = 0; i < o->samples; i++) {
			r.measured_us = bot_sim_noisy(f, key, arm, t, o->seed, i);
			if (bot_sweep_push(sw, &r))
				return -1;
		}
	}
	return 0;
}

int bot_sim_generate(const struct bot_sim_opts *opts, struct bot_sweep *sw)
{
	struct bot_sim_opts o = *opts;
	const unsigned *nodes = o.nodes ? o.nodes : bot_sim_default_nodes;
	unsigned nn = o.nodes ? o.nnodes : bot_sim_default_nnodes;
	unsigned fi, ni;
	int coll;

	if (!o.samples)
		o.samples = 16;
	if (!o.min_bytes)
		o.min_bytes = 1024;
	if (!o.max_bytes)
		o.max_bytes = 4ULL << 30;
	if (!o.coll_mask)
		o.coll_mask = (1u << BOT_NCOLL) - 1;
	for (fi = 0; fi < (o.only ? 1 : NFABRICS); fi++) {
		/* a copy whose outlier rate may be the caller's; its model and
		 * its name (which seeds the noise) are the fabric's */
		struct bot_fabric g = *(o.only ? o.only : &fabrics[fi]);
		const struct bot_fabric *f = &g;
		int fidx;

		if (o.outliers_set)
			g.outlier_p = o.outlier_p;

		if (!o.only && !f->scoring)
			continue;
		fidx = bot_sweep_fabric(sw, f->name);
		if (fidx < 0)
			return -1;
		for (coll = 0; coll < BOT_NCOLL; coll++) {
			if (!(o.coll_mask & (1u << coll)))
				continue;
			for (ni = 0; ni < nn; ni++) {
				unsigned n = nodes[ni];
				uint64_t b;

				if (!bot_sim_has_nodes(f, n))
					continue;
				for (b = 1; b && b <= o.max_bytes; b <<= 1) {
					if (b < o.min_bytes)
						continue;
					if (gen_context(f, fidx, coll, b, n, &o, sw))
						return -1;
				}
			}
		}
	}
	return 0;
}
