/*
 * spool_codec.c - the spool record codec, the rank-side half of
 * common/spool.h (doc/formats.md section 9, format v2): CRC-32C,
 * little-endian packing and unpacking of the header and records (the
 * process record, kind 3, by its own layout), and the range checks of a
 * measurement record and of a process record. No I/O and no allocation: libnccl-tuner-bot.so
 * links this file (its writer is tuner/spoolwriter.c) and not spool_read.c.
 */
#include <stdio.h>
#include <string.h>

#include "common/le.h"
#include "common/errf.h"
#include "common/spool.h"
#include "policies/context.h"

/* CRC-32C, reflected, slicing by 8: eight bytes per step through eight
 * tables, about 5x faster than a byte at a time on the ~10 MB a full spool
 * holds (the rank-side writer checksums it at every rewrite). */
static uint32_t crc_tab[8][256];
static char crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78u : c >> 1;
		crc_tab[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_tab[t][i] = (crc_tab[t - 1][i] >> 8) ^ crc_tab[0][crc_tab[t - 1][i] & 0xff];
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t bot_spool_crc32c(uint32_t crc, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	/* two threads may build the tables at once: they write the same values */
	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	crc = ~crc;
	while (n && ((uintptr_t)p & 7)) {
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		n--;
	}
	while (n >= 8) {
		/* little-endian loads, byte by byte: no alignment or endianness
		 * assumption (the compiler merges them on x86-64 and aarch64) */
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				     (uint32_t)p[3] << 24);

		crc = crc_tab[7][lo & 0xff] ^ crc_tab[6][(lo >> 8) & 0xff] ^
		      crc_tab[5][(lo >> 16) & 0xff] ^ crc_tab[4][lo >> 24] ^ crc_tab[3][p[4]] ^
		      crc_tab[2][p[5]] ^ crc_tab[1][p[6]] ^ crc_tab[0][p[7]];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = crc_tab[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---- little-endian packing (common/le.h) --------------------------------- */

static void putf(uint8_t *p, float f)
{
	uint32_t v;

	memcpy(&v, &f, 4);
	bot_le_put32(p, v);
}

static float getf(const uint8_t *p)
{
	uint32_t v = bot_le_get32(p);
	float f;

	memcpy(&f, &v, 4);
	return f;
}

void bot_spool_pack_hdr(uint8_t out[BOT_SPOOL_HDR_SIZE], const struct bot_spool_hdr *h)
{
	memset(out, 0, BOT_SPOOL_HDR_SIZE);
	memcpy(out, BOT_SPOOL_MAGIC, 8);
	bot_le_put32(out + 8, h->version);
	bot_le_put32(out + 12, h->rec_size);
	bot_le_put64(out + 16, h->nrecords);
	bot_le_put64(out + 24, h->table_digest);
	memcpy(out + 32, h->build_id, BOT_SPOOL_BUILD_ID_SIZE);
	bot_le_put64(out + 48, h->host_hash);
	bot_le_put32(out + 56, h->pid);
	bot_le_put32(out + 60, h->flags);
}

/* The process record's five fields, over bytes 8..27. */
#define PROC_NCCL 8
#define PROC_TUNER 12
#define PROC_PROF 16
#define PROC_COMMS 20
#define PROC_FLAGS 24
#define PROC_END 28

void bot_spool_pack_rec(uint8_t out[BOT_SPOOL_REC_SIZE], const struct bot_spool_rec *r)
{
	memset(out, 0, BOT_SPOOL_REC_SIZE);
	out[0] = r->kind;
	out[1] = r->flags;
	out[2] = r->coll;
	out[3] = r->arm;
	out[4] = r->nchannels;
	out[5] = r->auto_arm;
	out[6] = r->decided;
	out[7] = r->policy;
	if (r->kind == BOT_SPOOL_PROC) {
		/* nothing past byte 27: the measurement fields are not its */
		bot_le_put32(out + PROC_NCCL, r->nccl_version);
		bot_le_put32(out + PROC_TUNER, r->tuner_abi);
		bot_le_put32(out + PROC_PROF, r->profiler_abi);
		bot_le_put32(out + PROC_COMMS, r->comms);
		bot_le_put32(out + PROC_FLAGS, r->proc_flags);
		return;
	}
	bot_le_put64(out + 8, r->comm_id);
	bot_le_put32(out + 16, r->rank);
	bot_le_put32(out + 20, r->nranks);
	bot_le_put32(out + 24, r->nnodes);
	/* 28..31 reserved */
	bot_le_put64(out + 32, r->nbytes);
	bot_le_put64(out + 40, r->seq);
	bot_le_put64(out + 48, r->duration_ns);
	bot_le_put64(out + 56, r->calls);
	bot_le_put64(out + 64, r->captured_calls);
	/* 72..75 reserved */
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		putf(out + 76 + 4 * i, r->cost[i]);
}

void bot_spool_unpack_rec(struct bot_spool_rec *r, const uint8_t in[BOT_SPOOL_REC_SIZE])
{
	memset(r, 0, sizeof(*r));
	r->kind = in[0];
	r->flags = in[1];
	r->coll = in[2];
	r->arm = in[3];
	r->nchannels = in[4];
	r->auto_arm = in[5];
	r->decided = in[6];
	r->policy = in[7];
	if (r->kind == BOT_SPOOL_PROC) {
		r->nccl_version = bot_le_get32(in + PROC_NCCL);
		r->tuner_abi = bot_le_get32(in + PROC_TUNER);
		r->profiler_abi = bot_le_get32(in + PROC_PROF);
		r->comms = bot_le_get32(in + PROC_COMMS);
		r->proc_flags = bot_le_get32(in + PROC_FLAGS);
		return;
	}
	r->comm_id = bot_le_get64(in + 8);
	r->rank = bot_le_get32(in + 16);
	r->nranks = bot_le_get32(in + 20);
	r->nnodes = bot_le_get32(in + 24);
	r->nbytes = bot_le_get64(in + 32);
	r->seq = bot_le_get64(in + 40);
	r->duration_ns = bot_le_get64(in + 48);
	r->calls = bot_le_get64(in + 56);
	r->captured_calls = bot_le_get64(in + 64);
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r->cost[i] = getf(in + 76 + 4 * i);
}

/* ---- validation ---------------------------------------------------------- */

static int arm_ok(uint8_t a)
{
	return a < BOT_NARMS || a == BOT_SPOOL_ARM_NONE;
}

int bot_spool_rec_pad_zero(const uint8_t in[BOT_SPOOL_REC_SIZE])
{
	if (in[0] == BOT_SPOOL_PROC)
		return bot_le_zero(in + PROC_END, BOT_SPOOL_REC_SIZE - PROC_END);
	return bot_le_zero(in + 28, 4) && bot_le_zero(in + 72, 4);
}

int bot_spool_rec_check(const struct bot_spool_rec *r, char *err, size_t errlen)
{
	int nocost = 1;

	if (r->kind == BOT_SPOOL_PROC)
		return bot_errf(err, errlen, "kind 3, a process record, where only measurements "
				"(1 sample, 2 summary) belong");
	if (r->kind != BOT_SPOOL_SAMPLE && r->kind != BOT_SPOOL_SUMMARY)
		return bot_errf(err, errlen, "kind %u (want 1 sample or 2 summary)", r->kind);
	if (r->nccl_version || r->tuner_abi || r->profiler_abi || r->comms || r->proc_flags)
		return bot_errf(err, errlen, "kind %u with process-record fields set", r->kind);
	if (r->flags & ~BOT_SPOOL_F_KNOWN)
		return bot_errf(err, errlen, "unknown flag bits 0x%02x", r->flags & ~BOT_SPOOL_F_KNOWN);
	if (r->coll >= BOT_NCOLL)
		return bot_errf(err, errlen, "collective %u out of range", r->coll);
	if (!arm_ok(r->auto_arm) || !arm_ok(r->decided))
		return bot_errf(err, errlen, "auto_arm %u / decided %u out of range", r->auto_arm,
			   r->decided);
	if (r->policy >= BOT_NPOLICY)
		return bot_errf(err, errlen, "policy %u out of range", r->policy);
	if (r->nranks < 1 || r->nnodes < 1 || r->nnodes > r->nranks || r->rank >= r->nranks)
		return bot_errf(err, errlen, "rank %u nranks %u nnodes %u inconsistent", r->rank,
			   r->nranks, r->nnodes);
	if (r->nbytes > BOT_SPOOL_MAX_BYTES)
		return bot_errf(err, errlen, "nbytes %llu over 2^40", (unsigned long long)r->nbytes);
	for (int i = 0; i < BOT_SPOOL_NCOST; i++) {
		float c = r->cost[i];

		if (!__builtin_isfinite(c) || (c < 0 && c != -1.0f))
			return bot_errf(err, errlen, "cost[%d] is not -1 or a finite value >= 0", i);
		/* -0 compares equal to 0 but is another encoding: never one */
		if (c == 0 && __builtin_signbit(c))
			return bot_errf(err, errlen, "cost[%d] is -0, not -1 or a finite value >= 0",
					i);
		if (c != -1.0f)
			nocost = 0;
	}
	if ((r->flags & BOT_SPOOL_F_NO_COST) && !nocost)
		return bot_errf(err, errlen, "flag 'no cost row' with a cost row");
	if (r->kind == BOT_SPOOL_SAMPLE) {
		if (r->arm >= BOT_NARMS)
			return bot_errf(err, errlen, "sample arm %u out of range", r->arm);
		if (r->nchannels > 64)
			return bot_errf(err, errlen, "nchannels %u over 64", r->nchannels);
		if (r->nbytes < 1)
			return bot_errf(err, errlen, "sample of 0 bytes");
		if (r->duration_ns > BOT_SPOOL_MAX_NS)
			return bot_errf(err, errlen, "duration %llu ns over 2^40",
				   (unsigned long long)r->duration_ns);
		if (r->calls || r->captured_calls)
			return bot_errf(err, errlen, "sample with summary counts");
	} else {
		if (r->arm != BOT_SPOOL_ARM_NONE || r->nchannels || r->seq || r->duration_ns ||
		    (r->flags & BOT_SPOOL_F_UNCLEAN))
			return bot_errf(err, errlen, "summary with sample fields set");
		if (r->captured_calls > r->calls)
			return bot_errf(err, errlen, "summary: captured_calls > calls");
	}
	return 0;
}

int bot_spool_proc_check(const struct bot_spool_rec *r, char *err, size_t errlen)
{
	static const uint8_t zero[BOT_SPOOL_NCOST * 4];

	if (r->kind != BOT_SPOOL_PROC)
		return bot_errf(err, errlen, "kind %u is not a process record (3)", r->kind);
	if (r->flags || r->coll || r->nchannels || r->arm != BOT_SPOOL_ARM_NONE ||
	    r->auto_arm != BOT_SPOOL_ARM_NONE || r->decided != BOT_SPOOL_ARM_NONE)
		return bot_errf(err, errlen, "process record: bytes 1..6 are %u %u %u %u %u %u "
				"(want 0 0 255 0 255 255)", r->flags, r->coll, r->arm, r->nchannels,
				r->auto_arm, r->decided);
	if (r->policy >= BOT_NPOLICY)
		return bot_errf(err, errlen, "process record: policy %u out of range", r->policy);
	if (r->tuner_abi < BOT_SPOOL_TUNER_ABI_MIN || r->tuner_abi > BOT_SPOOL_TUNER_ABI_MAX)
		return bot_errf(err, errlen, "process record: tuner ABI %u (want %d..%d)",
				r->tuner_abi, BOT_SPOOL_TUNER_ABI_MIN, BOT_SPOOL_TUNER_ABI_MAX);
	if (r->profiler_abi && (r->profiler_abi < BOT_SPOOL_PROF_ABI_MIN ||
				r->profiler_abi > BOT_SPOOL_PROF_ABI_MAX))
		return bot_errf(err, errlen, "process record: profiler ABI %u (want 0 or %d..%d)",
				r->profiler_abi, BOT_SPOOL_PROF_ABI_MIN, BOT_SPOOL_PROF_ABI_MAX);
	if (!r->comms)
		return bot_errf(err, errlen, "process record: 0 communicators");
	if (r->proc_flags & ~BOT_SPOOL_PF_KNOWN)
		return bot_errf(err, errlen, "process record: unknown flag bits 0x%x",
				r->proc_flags & ~BOT_SPOOL_PF_KNOWN);
	/* the measurement fields are not a process record's (the cost row:
	 * its bit patterns, so that -0 is not 0 either) */
	if (r->comm_id || r->rank || r->nranks || r->nnodes || r->nbytes || r->seq ||
	    r->duration_ns || r->calls || r->captured_calls || memcmp(r->cost, zero, sizeof(zero)))
		return bot_errf(err, errlen, "process record with measurement fields set");
	return 0;
}
