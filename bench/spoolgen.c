/*
 * spoolgen.c - writes small valid spool files for bench/stateadd.sh:
 * DIR/nb-bench-<i>.spool for i in [first, first + n), each one rank of its
 * own communicator with one clean sample and one context summary (two
 * records, 392 bytes), so every file is a distinct source with distinct
 * bytes and the batch spreads over a handful of contexts. Deterministic:
 * the same arguments write the same bytes.
 *
 * usage: spoolgen DIR N [FIRST]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "policies/context.h"

static void record(struct bot_spool_rec *r, int kind, uint64_t i)
{
	uint64_t nbytes = (uint64_t)1 << (20 + i % 8);	/* 1 MiB .. 128 MiB */

	memset(r, 0, sizeof(*r));
	r->kind = (uint8_t)kind;
	r->coll = BOT_COLL_ALLREDUCE;
	r->arm = kind == BOT_SPOOL_SAMPLE ? (uint8_t)bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE) :
					    BOT_SPOOL_ARM_NONE;
	r->nchannels = kind == BOT_SPOOL_SAMPLE ? 8 : 0;
	r->auto_arm = (uint8_t)bot_arm(BOT_ALGO_RING, BOT_PROTO_LL);
	r->decided = BOT_SPOOL_ARM_NONE;
	r->policy = BOT_POLICY_THOMPSON;
	r->comm_id = 0x100000 + i;
	r->rank = 0;
	r->nranks = 16;
	r->nnodes = 2;
	r->nbytes = kind == BOT_SPOOL_SAMPLE ? nbytes : bot_bucket_lo(bot_size_bucket(nbytes));
	r->seq = kind == BOT_SPOOL_SAMPLE ? i : 0;
	r->duration_ns = kind == BOT_SPOOL_SAMPLE ? 100000 + i % 997 : 0;
	r->calls = kind == BOT_SPOOL_SUMMARY ? 100 : 0;
	for (int a = 0; a < BOT_SPOOL_NCOST; a++)
		r->cost[a] = -1.0f;
	r->cost[bot_arm(BOT_ALGO_RING, BOT_PROTO_LL)] = 100.0f;
	r->cost[bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE)] = 120.0f;
}

int main(int argc, char **argv)
{
	enum { NREC = 2 };
	uint8_t buf[BOT_SPOOL_HDR_SIZE + NREC * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE];
	struct bot_spool_hdr h;
	uint64_t n, first;
	char path[4096];

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: spoolgen DIR N [FIRST]\n");
		return 2;
	}
	n = strtoull(argv[2], NULL, 10);
	first = argc == 4 ? strtoull(argv[3], NULL, 10) : 0;
	for (uint64_t i = first; i < first + n; i++) {
		struct bot_spool_rec r;
		uint32_t crc;
		FILE *f;

		memset(buf, 0, sizeof(buf));
		memset(&h, 0, sizeof(h));
		h.version = BOT_SPOOL_VERSION;
		h.rec_size = BOT_SPOOL_REC_SIZE;
		h.nrecords = NREC;
		strcpy(h.build_id, "nccl-bot bench");
		h.host_hash = 0xbe4c;
		h.pid = (uint32_t)(1000 + i);
		bot_spool_pack_hdr(buf, &h);
		record(&r, BOT_SPOOL_SAMPLE, i);
		bot_spool_pack_rec(buf + BOT_SPOOL_HDR_SIZE, &r);
		record(&r, BOT_SPOOL_SUMMARY, i);
		bot_spool_pack_rec(buf + BOT_SPOOL_HDR_SIZE + BOT_SPOOL_REC_SIZE, &r);
		crc = bot_spool_crc32c(0, buf, sizeof(buf) - BOT_SPOOL_TRAILER_SIZE);
		for (int k = 0; k < 4; k++)
			buf[sizeof(buf) - 8 + k] = (uint8_t)(crc >> (8 * k));
		snprintf(path, sizeof(path), "%s/nb-bench-%08llu.spool", argv[1],
			 (unsigned long long)i);
		f = fopen(path, "wb");
		if (!f || fwrite(buf, 1, sizeof(buf), f) != sizeof(buf) || fclose(f) != 0) {
			perror(path);
			return 1;
		}
	}
	return 0;
}
