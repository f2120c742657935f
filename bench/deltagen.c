/*
 * deltagen.c - bench/compact.sh's helper: deterministic deltas (doc/formats.md
 * section 13) written through common/delta.h's encoder into a state
 * directory's inbox, as `nccl-bot ship` leaves them.
 *
 *   deltagen seed INBOX T       100 one-delta steps that together cover the
 *                               2,000 contexts (5 collectives x 40 size
 *                               buckets x 10 scales) on 3 arms, 16 samples
 *                               per (context, arm): compacted, they make
 *                               the 2,000-context state
 *   deltagen deltas INBOX T N   N deltas of steps of 1..4 nodes (one delta
 *                               per node) of 50 users, each delta 4 contexts
 *                               x 2 arms x 8 samples plus a summary per
 *                               context (68 records)
 *
 * T is the compactor's --now: every step ends at T - 600 (inside the dedup
 * horizon, in T's window). Each step claims 128 nodes (so any scale is
 * possible for it) and is ready by the inbox mtime, which is long before T.
 * A sample's duration depends on its context, arm and seq only, the same in
 * both modes, so no step contradicts the fabric (no consensus quarantine).
 * The same arguments write the same bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/delta.h"
#include "common/spool.h"
#include "policies/context.h"

#define NCTX (BOT_NCOLL * 40 * 10)

static const uint32_t scales[10][2] = { { 8, 1 }, { 16, 2 }, { 32, 4 }, { 64, 8 }, { 128, 16 },
	{ 256, 32 }, { 512, 64 }, { 1024, 128 }, { 16, 4 }, { 64, 16 } };

static int arm_of(int i)
{
	static const int a[3][2] = { { BOT_ALGO_RING, BOT_PROTO_LL },
				     { BOT_ALGO_RING, BOT_PROTO_SIMPLE },
				     { BOT_ALGO_TREE, BOT_PROTO_SIMPLE } };

	return bot_arm(a[i][0], a[i][1]);
}

/* context c (0..NCTX-1) as collective, nbytes (its bucket's lower bound),
 * nranks, nnodes */
static void ctx_of(unsigned c, unsigned *coll, uint64_t *nbytes, uint32_t *nranks,
		   uint32_t *nnodes)
{
	unsigned k = (c / 10) % 40, sc = c % 10;
	unsigned bucket = bot_size_bucket((uint64_t)1 << (20 + k / 4)) + k % 4;

	*coll = c / 400;
	*nbytes = bot_bucket_lo(bucket);
	*nranks = scales[sc][0];
	*nnodes = scales[sc][1];
}

static void sample(struct bot_spool_rec *r, unsigned c, int armi, uint32_t rank, uint64_t seq)
{
	unsigned coll;

	memset(r, 0, sizeof(*r));
	r->kind = BOT_SPOOL_SAMPLE;
	r->flags = BOT_SPOOL_F_NO_COST;
	ctx_of(c, &coll, &r->nbytes, &r->nranks, &r->nnodes);
	r->coll = (uint8_t)coll;
	r->arm = (uint8_t)arm_of(armi);
	r->nchannels = 8;
	r->auto_arm = r->decided = BOT_SPOOL_ARM_NONE;
	r->comm_id = 0xc0000 + c;
	r->rank = rank % r->nranks;
	r->seq = seq;
	/* 20 us .. ~1 s by size, arms 10% apart, a 1/64 spread over seq */
	r->duration_ns = (20000 + r->nbytes / 1000) * (10 + (uint64_t)armi) / 10 *
			 (64 + seq % 16) / 64;
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r->cost[i] = -1.0f;
}

static void summary(struct bot_spool_rec *r, unsigned c, uint32_t rank)
{
	unsigned coll;

	memset(r, 0, sizeof(*r));
	r->kind = BOT_SPOOL_SUMMARY;
	r->flags = BOT_SPOOL_F_NO_COST;
	ctx_of(c, &coll, &r->nbytes, &r->nranks, &r->nnodes);
	r->coll = (uint8_t)coll;
	r->arm = r->auto_arm = r->decided = BOT_SPOOL_ARM_NONE;
	r->comm_id = 0xc0000 + c;
	r->rank = rank % r->nranks;
	r->calls = 100;
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r->cost[i] = -1.0f;
}

static int put(const char *inbox, const char *job, uint32_t uid, unsigned node, uint64_t t,
	       struct bot_spool_rec *recs, size_t n)
{
	struct bot_delta_hdr h;
	char name[BOT_DELTA_NAME_MAX], err[BOT_DELTA_ERR_MAX], path[4096];
	uint8_t *buf;
	size_t len;
	FILE *f;

	memset(&h, 0, sizeof(h));
	h.flags = BOT_DELTA_F_SLURM;
	snprintf(h.cluster, sizeof(h.cluster), "bench");
	snprintf(h.job, sizeof(h.job), "%s", job);
	snprintf(h.fabric, sizeof(h.fabric), "bench");
	snprintf(h.node, sizeof(h.node), "n%u", node);
	snprintf(h.build_id, sizeof(h.build_id), "nccl-bot bench");
	h.uid = h.gid = uid;
	h.array_task = h.het_comp = BOT_DELTA_NONE;
	h.step_nodes = 128;
	h.t_start = t - 3600;
	h.t_end = t - 600;
	h.t_harvest = t - 590;
	h.files_read = 8;
	bot_delta_sort(recs, n);
	if (bot_delta_encode(&h, recs, n, &buf, &len, err, sizeof(err)) < 0 ||
	    bot_delta_name(&h, name) < 0) {
		fprintf(stderr, "deltagen: %s\n", err);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", inbox, name);
	f = fopen(path, "wbx");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		perror(path);
		free(buf);
		return -1;
	}
	free(buf);
	return 0;
}

static int seed(const char *inbox, uint64_t t)
{
	enum { STEPS = 100, PER = NCTX / STEPS, NSAMP = 16 };
	static struct bot_spool_rec r[PER * (3 * NSAMP + 1)];

	for (unsigned s = 0; s < STEPS; s++) {
		size_t n = 0;
		char job[32];

		for (unsigned i = 0; i < PER; i++) {
			unsigned c = s * PER + i;

			for (int a = 0; a < 3; a++)
				for (unsigned q = 0; q < NSAMP; q++)
					sample(&r[n++], c, a, 0, q);
			summary(&r[n++], c, 0);
		}
		snprintf(job, sizeof(job), "seed%u", s);
		if (put(inbox, job, 500 + s % 20, 0, t, r, n) < 0)
			return 1;
	}
	return 0;
}

static int deltas(const char *inbox, uint64_t t, unsigned long total)
{
	enum { NC = 4, NA = 2, NSAMP = 8 };
	struct bot_spool_rec r[NC * (NA * NSAMP + 1)];
	unsigned long made = 0;

	for (unsigned s = 0; made < total; s++) {
		unsigned nodes = 1 + s % 4;
		char job[32];

		if (nodes > total - made)
			nodes = (unsigned)(total - made);
		snprintf(job, sizeof(job), "%u", 100000 + s);
		for (unsigned k = 0; k < nodes; k++) {
			size_t n = 0;

			for (unsigned i = 0; i < NC; i++) {
				unsigned c = (s * 37 + i * 500) % NCTX;

				for (int a = 0; a < NA; a++)
					for (unsigned q = 0; q < NSAMP; q++)
						sample(&r[n++], c, (int)((s + (unsigned)a) % 3),
						       8 * k, q);
				summary(&r[n++], c, 8 * k);
			}
			if (put(inbox, job, 1000 + s % 50, k, t, r, n) < 0)
				return 1;
			made++;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "seed"))
		return seed(argv[2], strtoull(argv[3], NULL, 10));
	if (argc == 5 && !strcmp(argv[1], "deltas"))
		return deltas(argv[2], strtoull(argv[3], NULL, 10), strtoul(argv[4], NULL, 10));
	fprintf(stderr, "usage: deltagen seed INBOX T | deltagen deltas INBOX T N\n");
	return 2;
}
