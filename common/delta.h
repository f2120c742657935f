/*
 * delta.h - the delta file (doc/formats.md section 13, format v1): one job
 * step's validated measurements on one node, with the identity the harvest
 * stamped on it. Written by the harvest (learn/harvest.h), moved by ship,
 * read by the compactor; immutable once written.
 *
 * Owns the on-disk layout (512-byte header, section 9's 160-byte records,
 * CRC-32C trailer), the identity digest and the canonical file name, and the
 * reader's validation: a file is accepted whole or refused whole with
 * "FILE: reason". Tools only: ranks never see a delta. No I/O here except
 * bot_delta_read_at, which opens like the spool reader (no link, no FIFO or
 * device, a size cap, the same inode).
 */
#ifndef BOT_COMMON_DELTA_H
#define BOT_COMMON_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "common/spool.h"

#define BOT_DELTA_MAGIC "NBDELTA1"
#define BOT_DELTA_VERSION 1
#define BOT_DELTA_HDR_SIZE 512
#define BOT_DELTA_MAX_RECORDS (1u << 18)
#define BOT_DELTA_MAX_FILE (48u << 20)
#define BOT_DELTA_STR 64		/* cluster, job, node, account: 63 chars + NUL */
#define BOT_DELTA_FABRIC_MAX 64		/* the fabric may use its whole 64-byte field */
#define BOT_DELTA_NAME_MAX 352		/* <cluster>.<job>.<restart>.<step>.<node>.nbd + NUL */
#define BOT_DELTA_ERR_MAX 768

/* header flags */
#define BOT_DELTA_F_DROPPED 0x01	/* records dropped at BOT_DELTA_MAX_RECORDS */
#define BOT_DELTA_F_REJECTED 0x02	/* a spool file of the step was rejected */
#define BOT_DELTA_F_RANK_DROPS 0x04	/* a rank dropped samples at its own cap */
#define BOT_DELTA_F_SLURM 0x08		/* identity from root-side Slurm facts */
#define BOT_DELTA_F_ACCOUNT 0x10	/* account trusted */
#define BOT_DELTA_F_ALL 0x1f

/* special step ids (Slurm's) */
#define BOT_DELTA_STEP_BATCH 0xfffffffbu
#define BOT_DELTA_STEP_INTERACTIVE 0xfffffffcu
#define BOT_DELTA_STEP_EXTERN 0xfffffffdu
#define BOT_DELTA_NONE 0xffffffffu	/* array task / het component absent */

struct bot_delta_hdr {
	uint32_t flags;
	char cluster[BOT_DELTA_STR];
	char job[BOT_DELTA_STR];
	char fabric[BOT_DELTA_FABRIC_MAX + 1];
	char node[BOT_DELTA_STR];
	uint32_t uid, gid;
	uint32_t restart;
	uint32_t step;
	uint32_t array_job, array_task;
	uint32_t het_job, het_comp;
	uint32_t step_nodes;		/* >= 1 */
	uint32_t step_tasks;		/* 0 unknown */
	uint32_t job_gpus;		/* 0 unknown */
	uint32_t leaf_switches;		/* 0 unknown */
	uint64_t t_start, t_end, t_harvest;	/* unix seconds */
	uint32_t files_read, files_rejected;
	uint64_t nrecords;
	uint64_t table_digest;
	char account[BOT_DELTA_STR];	/* "" unknown */
	char build_id[BOT_SPOOL_BUILD_ID_SIZE + 1];
};

struct bot_delta {
	struct bot_delta_hdr hdr;
	struct bot_spool_rec *recs;	/* hdr.nrecords, malloc()ed */
	uint64_t identity;		/* bot_delta_identity(&hdr) */
	uint64_t digest;		/* bot_digest64 of the file's bytes */
};

/* The identity digest (same step, same node, same identity; counts and
 * times do not enter). */
uint64_t bot_delta_identity(const struct bot_delta_hdr *h);
/* The canonical file name of a header: 0, or -1 when a part is empty. */
int bot_delta_name(const struct bot_delta_hdr *h, char name[BOT_DELTA_NAME_MAX]);
/* Is h acceptable as a header (strings by their rules, end >= start,
 * step nodes >= 1, flags known)? 0, or -1 with the reason in err. */
int bot_delta_hdr_check(const struct bot_delta_hdr *h, char *err, size_t errlen);

/*
 * Encode a delta: header (nrecords taken from n) and records, which must
 * each pass bot_spool_rec_check and be in the canonical order (the encoder
 * refuses otherwise). The file image is malloc()ed into *buf. 0, or -1 with
 * err.
 */
int bot_delta_encode(const struct bot_delta_hdr *h, const struct bot_spool_rec *recs, size_t n,
		     uint8_t **buf, size_t *len, char *err, size_t errlen);
/* Sort records into the canonical order (kind, commId, key, seq, arm, rank). */
void bot_delta_sort(struct bot_spool_rec *recs, size_t n);

/* Validate and decode a whole image named `name` (its file name, checked
 * against the header's canonical name unless name_check is 0). 0 with *out
 * filled (bot_delta_free), or -1 with "name: reason". */
int bot_delta_parse(const char *name, int name_check, const uint8_t *buf, size_t len,
		    struct bot_delta *out, char *err, size_t errlen);
/* Read dirfd/name (no link, no FIFO or device, one link, at most
 * BOT_DELTA_MAX_FILE bytes) and parse it; path names it in messages. */
int bot_delta_read_at(int dirfd, const char *name, const char *path, struct bot_delta *out,
		      char *err, size_t errlen);
void bot_delta_free(struct bot_delta *d);

#endif
