/*
 * spool.h - the spool file (doc/formats.md section 9, format v2; v1 still
 * read): what a rank process ran (its process record) and measured, written
 * by the rank-side library (tuner/spoolwriter.c) and read by tools (`nccl-bot
 * spool`, harvest, compact).
 *
 * Owns the on-disk layout: the 64-byte header, the 160-byte records, the
 * CRC-32C trailer, packing/unpacking them little-endian whatever the host,
 * and the reader's validation. A file is accepted whole or rejected whole
 * with "FILE: reason" (a record index or byte offset in the reason), never
 * half-read: a rejected file is quarantined by its caller.
 *
 * Two halves: spool_codec.c (CRC, packing, the record check; no I/O, no
 * allocation: the rank-side library links only this half) and spool_read.c
 * (bot_spool_parse, bot_spool_read_at/_file, bot_spool_free: tools).
 */
#ifndef BOT_COMMON_SPOOL_H
#define BOT_COMMON_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#define BOT_SPOOL_MAGIC "NBSPOOL1"
#define BOT_SPOOL_VERSION 2	/* written; readers accept 1 and 2 */
#define BOT_SPOOL_VERSION_MIN 1
#define BOT_SPOOL_HDR_SIZE 64
#define BOT_SPOOL_REC_SIZE 160
#define BOT_SPOOL_TRAILER_SIZE 8
#define BOT_SPOOL_BUILD_ID_SIZE 16
#define BOT_SPOOL_NCOST 21
/* Largest file a reader accepts: 2^20 records (the writer keeps far fewer). */
#define BOT_SPOOL_MAX_RECORDS (1u << 20)
#define BOT_SPOOL_ERR_MAX 512

/* Header flags. */
#define BOT_SPOOL_HF_SAMPLES_DROPPED 0x1	/* the per-process sample cap was hit */
#define BOT_SPOOL_HF_SUMMARIES_DROPPED 0x2	/* the summary cap was hit */
#define BOT_SPOOL_HF_KNOWN 0x3

/* Record kinds. 1 and 2 are measurements (the only kinds a delta holds);
 * 3, version 2 only, at most one per file, is the process record: what ran
 * in the process, which readers that learn skip. */
#define BOT_SPOOL_SAMPLE 1
#define BOT_SPOOL_SUMMARY 2
#define BOT_SPOOL_PROC 3

/* Process record: proc_flags. */
#define BOT_SPOOL_PF_TABLE 0x1		/* a step table was loaded and used */
#define BOT_SPOOL_PF_MEASURED 0x2	/* the profiler measured (a window was armed) */
#define BOT_SPOOL_PF_PRIOR 0x4		/* fell back to the prior (table refused or absent) */
#define BOT_SPOOL_PF_KNOWN 0x7
/* Process record: the ABI versions it may name (0: no profiler of ours). */
#define BOT_SPOOL_TUNER_ABI_MIN 2
#define BOT_SPOOL_TUNER_ABI_MAX 6
#define BOT_SPOOL_PROF_ABI_MIN 4
#define BOT_SPOOL_PROF_ABI_MAX 6

/* Record flags (labels). A sample with none of bits 0-4 set is clean. */
#define BOT_SPOOL_F_AGGREGATE 0x01	/* its group held >1 Coll of the same func/algo/proto */
#define BOT_SPOOL_F_CHANNELS 0x02	/* channels missing (nChannels 0, or not all reported) */
#define BOT_SPOOL_F_RANGE 0x04		/* stop <= start, or outside 0.05x-20x of the prior */
#define BOT_SPOOL_F_CAPTURED 0x08	/* graph-captured call */
#define BOT_SPOOL_F_FIRST_ALGO 0x10	/* first measured use of this algorithm on the comm */
#define BOT_SPOOL_F_NO_COST 0x20	/* no cost-table row known: cost[] all -1 */
#define BOT_SPOOL_F_KNOWN 0x3f
#define BOT_SPOOL_F_UNCLEAN 0x1f

#define BOT_SPOOL_ARM_NONE 0xff		/* auto_arm unknown / decided left to AUTO / summary arm */
#define BOT_SPOOL_MAX_NS (1ull << 40)
#define BOT_SPOOL_MAX_BYTES (1ull << 40)

struct bot_spool_hdr {
	uint32_t version;	/* BOT_SPOOL_VERSION */
	uint32_t rec_size;	/* BOT_SPOOL_REC_SIZE */
	uint64_t nrecords;
	uint64_t table_digest;	/* 0 without a step table */
	char build_id[BOT_SPOOL_BUILD_ID_SIZE];	/* "nccl-bot 0.1", NUL padded */
	uint64_t host_hash;	/* bot_digest64 of the hostname */
	uint32_t pid;
	uint32_t flags;		/* BOT_SPOOL_HF_* */
};

/* One record. For kinds 1 and 2 the five process fields at the end are 0;
 * for kind 3 (BOT_SPOOL_PROC) only kind, policy and those five are set:
 * flags, coll, nchannels 0, arm/auto_arm/decided 0xff, everything else 0. */
struct bot_spool_rec {
	uint8_t kind;		/* BOT_SPOOL_SAMPLE / _SUMMARY / _PROC */
	uint8_t flags;		/* BOT_SPOOL_F_* */
	uint8_t coll;		/* enum bot_coll */
	uint8_t arm;		/* sample: what ran (descriptor); summary: 0xff */
	uint8_t nchannels;	/* sample: descriptor nChannels */
	uint8_t auto_arm;	/* AUTO's arm for the context, 0xff unknown */
	uint8_t decided;	/* the tuner's arm for the context, 0xff = left to AUTO */
	uint8_t policy;		/* formats.md section 10 */
	uint64_t comm_id;
	uint32_t rank, nranks, nnodes;
	uint64_t nbytes;	/* tuner nBytes; summary: lower bound of the bucket */
	uint64_t seq;		/* sample: descriptor seqNumber; summary: 0 */
	uint64_t duration_ns;	/* sample: GPU duration; summary: 0 */
	uint64_t calls;		/* summary: calls of the context on this rank */
	uint64_t captured_calls;	/* summary: captured calls seen by the profiler */
	float cost[BOT_SPOOL_NCOST];	/* NCCL's cost-table row (us), -1 unsupported */
	/* process record (kind 3) only */
	uint32_t nccl_version;	/* ncclGetVersion() code (22809), 0 unknown */
	uint32_t tuner_abi;	/* the tuner struct version NCCL initialised, 2..6 */
	uint32_t profiler_abi;	/* 4..6 when our profiler was initialised, else 0 */
	uint32_t comms;		/* communicators our tuner initialised */
	uint32_t proc_flags;	/* BOT_SPOOL_PF_* */
};

struct bot_spool_file {
	struct bot_spool_hdr hdr;
	struct bot_spool_rec *recs;	/* hdr.nrecords, malloc()ed */
	uint64_t digest;		/* bot_digest64 of the file's bytes (its identity) */
};

/* ---- codec half (spool_codec.c) ------------------------------------------ */

/* CRC-32C (Castagnoli, reflected 0x82f63b78), software tables, slicing by
 * 8. Chain calls by passing the previous result as crc (start with 0). */
uint32_t bot_spool_crc32c(uint32_t crc, const void *p, size_t n);

void bot_spool_pack_hdr(uint8_t out[BOT_SPOOL_HDR_SIZE], const struct bot_spool_hdr *h);
/* Pack and unpack one record, by its kind: kind 3's fields overlay bytes
 * 8..27 (formats.md section 9, the process record). */
void bot_spool_pack_rec(uint8_t out[BOT_SPOOL_REC_SIZE], const struct bot_spool_rec *r);
void bot_spool_unpack_rec(struct bot_spool_rec *r, const uint8_t in[BOT_SPOOL_REC_SIZE]);

/* A measurement record (kind 1 or 2) within its ranges (formats.md
 * section 9)? 0, or -1 with the reason in err. A process record fails
 * here: this is the check of what a delta may hold (common/delta.h) and
 * of what the harvest's stream carries. */
int bot_spool_rec_check(const struct bot_spool_rec *r, char *err, size_t errlen);
/* A process record (kind 3) within its ranges: fixed bytes, policy, ABI
 * versions, comms >= 1, known proc_flags, every other field 0? 0, or -1
 * with the reason in err. */
int bot_spool_proc_check(const struct bot_spool_rec *r, char *err, size_t errlen);
/* The packed bytes of a record that its kind leaves unspecified (reserved)
 * all zero? 1 or 0. */
int bot_spool_rec_pad_zero(const uint8_t in[BOT_SPOOL_REC_SIZE]);

/* Whether a sample is clean (kind 1, no label, a duration). */
static inline int bot_spool_clean(const struct bot_spool_rec *r)
{
	return r->kind == BOT_SPOOL_SAMPLE && !(r->flags & BOT_SPOOL_F_UNCLEAN) && r->duration_ns;
}

/* ---- reader half (spool_read.c, tools only) ------------------------------- */

/* One record's bytes, as a spool file of header version `version` holds
 * them: unpacked into *r and checked (bytes its kind does not specify
 * zero, then the kind's check; kind 3 only from version 2). 0, or -1 with
 * the reason in err. bot_spool_parse uses this; *proc_seen (the
 * index of the process record seen so far, or -1) refuses a second one. */
int bot_spool_rec_read(struct bot_spool_rec *r, const uint8_t in[BOT_SPOOL_REC_SIZE],
		       uint32_t version, uint64_t index, int64_t *proc_seen, char *err,
		       size_t errlen);

/* Validate and decode a whole file image named `name`. 0 with *out filled
 * (free with bot_spool_free), or -1 with "name: reason" in err and *out
 * empty. Allocates. */
int bot_spool_parse(const char *name, const uint8_t *buf, size_t len, struct bot_spool_file *out,
		    char *err, size_t errlen);
/*
 * Read dirfd/name whole and parse it; path names it in messages. Never
 * through a symbolic link, never blocking, never opening anything but a
 * regular file (checked before the open and again on the open file, the
 * same inode), at most the header, trailer and BOT_SPOOL_MAX_RECORDS
 * records. 0 with *out filled, or -1 with "PATH: reason" in err. Every
 * reader of spool files reads through this.
 */
int bot_spool_read_at(int dirfd, const char *name, const char *path, struct bot_spool_file *out,
		      char *err, size_t errlen);
/* The same for a path (relative to the working directory). */
int bot_spool_read_file(const char *path, struct bot_spool_file *out, char *err, size_t errlen);
void bot_spool_free(struct bot_spool_file *f);
/* 1 when a directory entry is taken for a spool file: *.spool with a
 * name before it, not hidden (a writer's temporary starts with '.'). */
int bot_spool_name_ok(const char *name);

#endif
