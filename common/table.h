/*
 * table.h - the step table (NCCL_BOT_TABLE), doc/formats.md section 8.
 *
 * The step table is everything a step's ranks decide from, compiled once by
 * the launcher (SPANK, `nccl-bot env`) and passed to every rank in one
 * environment variable, so every rank has the same bytes by construction:
 *
 *	NBT3.<digest: 16 lower-case hex>.<payload: base64url, no padding>
 *
 * This module owns the in-memory form (struct bot_table) and the codec, in
 * two halves: table_decode.c (the decoder and the validation; the rank-side
 * library links only this half) and table_encode.c (building, ordering,
 * fitting and encoding; tools). Pure C with no allocation and no libm: the
 * decoder fills a caller-provided struct (static in the .so).
 *
 * Encoded tables are canonical: shapes sorted by (nranks, nnodes), entries
 * by (shape, coll, bucket), corrections by (coll, arm, log2), no duplicates,
 * reserved bytes zero. The decoder rejects anything else, so one table has
 * exactly one encoding.
 */
#ifndef BOT_TABLE_H
#define BOT_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "policies/plan.h"

/* The version written (formats.md 8); versions BOT_TABLE_VERSION_MIN up to
 * it are read. Versions 2 and 3 have version 1's layout. An AUTO of a plan
 * means "left to NCCL" from version 2 on and "the policy on the prior" in
 * version 1; from version 3 on, a cell the table does not decide gets no
 * probe on the prior (tuner/decide.c). */
#define BOT_TABLE_VERSION 3
#define BOT_TABLE_VERSION_MIN 1
/* "NBT<version>." + 16 hex digits + "." */
#define BOT_TABLE_HEAD_LEN 22
/* Size budget: at most 96 KiB of text (one variable may hold 128 KiB). */
#define BOT_TABLE_MAX_TEXT 98304
#define BOT_TABLE_MAX_PAYLOAD ((BOT_TABLE_MAX_TEXT - BOT_TABLE_HEAD_LEN) * 3 / 4)

#define BOT_TABLE_HDR_SIZE 24
#define BOT_TABLE_SHAPE_SIZE 8
#define BOT_TABLE_ENTRY_SIZE 20
#define BOT_TABLE_CORR_SIZE 8

#define BOT_TABLE_MAX_SHAPES 256
#define BOT_TABLE_MAX_ENTRIES ((BOT_TABLE_MAX_PAYLOAD - BOT_TABLE_HDR_SIZE) / BOT_TABLE_ENTRY_SIZE)
#define BOT_TABLE_MAX_CORR ((BOT_TABLE_MAX_PAYLOAD - BOT_TABLE_HDR_SIZE) / BOT_TABLE_CORR_SIZE)
#define BOT_TABLE_MAX_NCHANNELS 64

/* Header flags. */
#define BOT_TABLE_F_SHADOW 0x01		/* decide, never write the cost table */
#define BOT_TABLE_F_MEASURE 0x02	/* measurement allowed */
#define BOT_TABLE_F_ONLINE 0x04		/* online mode (later issue) */
#define BOT_TABLE_F_KNOWN 0x07

/* Errors: negative return values. */
enum bot_table_err {
	BOT_TABLE_OK = 0,
	BOT_TABLE_ESYNTAX = -1,		/* not NBTn.<hex>.<base64url> */
	BOT_TABLE_EDIGEST = -2,		/* digest does not match the payload */
	BOT_TABLE_EVERSION = -3,	/* a format version this build does not know */
	BOT_TABLE_ESIZE = -4,		/* over the size budget, or the output buffer */
	BOT_TABLE_EFORMAT = -5,		/* payload malformed or not canonical */
	BOT_TABLE_EINVAL = -6,		/* encoder input invalid */
	BOT_TABLE_EPREFIX = -7,		/* the prefix's version is not the payload's
					 * (the last: tests/fuzz/fuzz_table.c) */
};

struct bot_table_shape {
	uint32_t nranks;
	uint16_t nnodes;
};

struct bot_table_entry {
	uint8_t shape;		/* index into shapes[] */
	uint8_t coll;		/* enum bot_coll */
	uint8_t bucket;		/* size bucket, formats.md section 2 */
	struct bot_plan plan;	/* exploit, nchannels, probes */
};

struct bot_table_corr {
	uint8_t coll;
	uint8_t arm;
	uint8_t bpr_log2;	/* bytes per rank, log2 */
	uint32_t q16;		/* measured/predicted, Q16 fixed point */
};

struct bot_table {
	uint8_t version;	/* BOT_TABLE_VERSION_MIN..BOT_TABLE_VERSION */
	uint8_t policy;		/* formats.md section 10 */
	uint8_t flags;		/* BOT_TABLE_F_* */
	uint8_t min_bytes_log2;	/* decisions below 2^k bytes are left to AUTO */
	uint64_t seed;
	uint32_t allow;		/* bit per arm that may be forced beyond Ring/Tree/PAT/AUTO's */
	uint16_t nshapes, nentries, ncorr;
	uint64_t digest;	/* set by bot_table_decode() */
	struct bot_table_shape shapes[BOT_TABLE_MAX_SHAPES];
	struct bot_table_entry entries[BOT_TABLE_MAX_ENTRIES];
	struct bot_table_corr corr[BOT_TABLE_MAX_CORR];
	/* decoder workspace: the raw payload */
	uint8_t raw[BOT_TABLE_MAX_PAYLOAD];
};

/* ---- the layout and the canonical order, shared by both halves ---------- */

static inline int bot_table_shape_cmp(const struct bot_table_shape *a,
				      const struct bot_table_shape *b)
{
	if (a->nranks != b->nranks)
		return a->nranks < b->nranks ? -1 : 1;
	if (a->nnodes != b->nnodes)
		return a->nnodes < b->nnodes ? -1 : 1;
	return 0;
}

static inline uint32_t bot_table_entry_key(const struct bot_table_entry *e)
{
	return ((uint32_t)e->shape << 16) | ((uint32_t)e->coll << 8) | e->bucket;
}

static inline uint32_t bot_table_corr_key(const struct bot_table_corr *c)
{
	return ((uint32_t)c->coll << 16) | ((uint32_t)c->arm << 8) | c->bpr_log2;
}

static inline size_t bot_table_payload_len(unsigned nshapes, unsigned nentries, unsigned ncorr)
{
	return BOT_TABLE_HDR_SIZE + (size_t)nshapes * BOT_TABLE_SHAPE_SIZE +
	       (size_t)nentries * BOT_TABLE_ENTRY_SIZE + (size_t)ncorr * BOT_TABLE_CORR_SIZE;
}

/* ---- decoder half (table_decode.c) ---------------------------------------- */

/* A short reason for an error code ("digest mismatch", ...). */
const char *bot_table_strerror(int err);

/* Every field valid and everything in canonical order (what the decoder
 * accepts, and what the encoder requires). */
int bot_table_valid(const struct bot_table *t);

/* Decode text (len bytes, no NUL needed) into t. Returns 0 or a negative
 * enum bot_table_err. Allocates nothing. */
int bot_table_decode(const char *text, size_t len, struct bot_table *t);

/* Whether an error must fail communicator init rather than fall back to
 * the prior: a format version this build does not know (another build may
 * be loaded elsewhere), and a prefix this build reads over a payload of
 * another version (the text edited after it was compiled: a build that
 * reads the payload's version may decode it). Everything else fails the
 * same way on every rank, since every rank has the same bytes. */
static inline int bot_table_err_fatal(int err)
{
	return err == BOT_TABLE_EVERSION || err == BOT_TABLE_EPREFIX;
}

/* ---- encoder half (table_encode.c, tools only) ----------------------------- */

/* Empty table: version BOT_TABLE_VERSION (a caller may set version 1 to
 * write an older build's table), the given policy and seed, min 2^20
 * bytes. */
void bot_table_init(struct bot_table *t, int policy, uint64_t seed);

/* Index of shape (nranks, nnodes), appended if absent; -1 when full. */
int bot_table_shape(struct bot_table *t, uint32_t nranks, uint32_t nnodes);

/* Sort shapes (renumbering entries), entries and corrections into canonical
 * order. Returns 0, or BOT_TABLE_EINVAL on a duplicate entry or correction
 * (the table is left sorted). */
int bot_table_normalize(struct bot_table *t);

/* Text length (without the NUL) that encoding t would take. */
size_t bot_table_encoded_len(const struct bot_table *t);

/* Keep the first entries (the caller orders them most-called first) so that
 * the encoded text fits max_text bytes (0 = BOT_TABLE_MAX_TEXT). Returns
 * how many entries were dropped, or BOT_TABLE_ESIZE when even the table
 * without entries does not fit. Call before bot_table_normalize(). */
int bot_table_fit(struct bot_table *t, size_t max_text);

/* Encode a canonical table into out (cap bytes, including the NUL). Returns
 * the text length, or a negative enum bot_table_err: EINVAL for a table that
 * is not canonical or has invalid fields, ESIZE over budget or cap. */
long bot_table_encode(const struct bot_table *t, char *out, size_t cap);

#endif
