/*
 * ledger.h - the compactor's ledger (doc/formats.md section 14, "Ledger"):
 * per fabric, what was merged (delta identities, for dedup) and what each
 * principal consumed in the open window (for bounded influence), plus the
 * admin-only directory it lives in and the provenance log next to it.
 *
 *   <state>/.ledger/<fabric>/ledger-<digest>.nbl   (0600; dirs 0700)
 *   <state>/.ledger/<fabric>/provenance.log        (0600, appended)
 *   <state>/.ledger/provenance.log                 (the same, fabric unknown)
 *
 * Owns the binary layout (magic NBLEDGR1, version 1, canonical: one ledger,
 * one byte string, so the name's digest names the content), its bounded,
 * all-or-nothing reader, content-addressed writing (tmp O_EXCL + fsync +
 * rename + directory fsync) and the append of provenance lines. Which
 * ledger is the fabric's is said by the snapshot `current` names (its
 * `ledger` field); the compactor (learn/compact.h) decides what goes in.
 */
#ifndef BOT_LEARN_LEDGER_H
#define BOT_LEARN_LEDGER_H

#include <stddef.h>
#include <stdint.h>

#define BOT_LEDGER_MAGIC "NBLEDGR1"
#define BOT_LEDGER_VERSION 1
#define BOT_LEDGER_HDR_SIZE 96
#define BOT_LEDGER_ID_SIZE 16
#define BOT_LEDGER_USE_SIZE 32
#define BOT_LEDGER_TRAILER_SIZE 8
#define BOT_LEDGER_MAX_IDS (1u << 22)
#define BOT_LEDGER_MAX_USES (1u << 22)
#define BOT_LEDGER_MAX_FILE ((size_t)BOT_LEDGER_HDR_SIZE + \
			     (size_t)BOT_LEDGER_MAX_IDS * BOT_LEDGER_ID_SIZE + \
			     (size_t)BOT_LEDGER_MAX_USES * BOT_LEDGER_USE_SIZE + \
			     BOT_LEDGER_TRAILER_SIZE)
#define BOT_LEDGER_FABRIC_MAX 64
#define BOT_LEDGER_NAME_MAX 32		/* "ledger-<16 hex>.nbl" + NUL, with room */
#define BOT_LEDGER_ERR_MAX 768

/* principal kinds */
#define BOT_LEDGER_UID 1
#define BOT_LEDGER_ACCOUNT 2		/* principal = bot_digest64 of the account name */
/* the arm of a use that counts calls rather than samples */
#define BOT_LEDGER_CALLS 255

struct bot_ledger_id {
	uint64_t identity;		/* bot_delta_identity */
	uint64_t window;		/* the window the step was counted in */
};

struct bot_ledger_use {
	uint8_t kind;			/* BOT_LEDGER_UID / BOT_LEDGER_ACCOUNT */
	uint8_t arm;			/* 0..20 (samples), BOT_LEDGER_CALLS (calls) */
	uint64_t principal;		/* uid, or the account's digest */
	uint64_t key;			/* context key */
	uint64_t count;			/* >= 1 */
};

struct bot_ledger {
	char fabric[BOT_LEDGER_FABRIC_MAX + 1];
	uint64_t window;		/* the open window the uses belong to */
	struct bot_ledger_id *ids;	/* [0, ids_sorted) sorted; then appended ones */
	size_t nids, ids_sorted, idcap;
	struct bot_ledger_use *use;	/* the same, uses */
	size_t nuse, use_sorted, usecap;
};

/* An empty ledger of a fabric (window 0): 0, or -1 on a bad name. */
int bot_ledger_init(struct bot_ledger *l, const char *fabric);
void bot_ledger_free(struct bot_ledger *l);

/* Merged before? */
int bot_ledger_has(const struct bot_ledger *l, uint64_t identity);
/* Record a merged identity (a present one keeps its window): 0, or -1 out
 * of memory or over BOT_LEDGER_MAX_IDS. */
int bot_ledger_add_id(struct bot_ledger *l, uint64_t identity, uint64_t window);
/* Forget identities counted before window horizon. */
void bot_ledger_prune(struct bot_ledger *l, uint64_t horizon);
/* Move to window w: a different window drops every use (consumption ends
 * with its window). */
void bot_ledger_set_window(struct bot_ledger *l, uint64_t w);
/* A principal's consumption of (key, arm) in the open window. */
uint64_t bot_ledger_used(const struct bot_ledger *l, int kind, uint64_t principal, uint64_t key,
			 int arm);
/* Add to it (saturating): 0, or -1 out of memory or over the bound. */
int bot_ledger_use_add(struct bot_ledger *l, int kind, uint64_t principal, uint64_t key, int arm,
		       uint64_t count);

/* The canonical image (sorts l first), malloc()ed: 0, or -1 with err. */
int bot_ledger_encode(struct bot_ledger *l, uint8_t **buf, size_t *len, char *err,
		      size_t errlen);
/* Validate and decode a whole image: 0 with *out (bot_ledger_free), or -1
 * with "name: reason" and *out empty. */
int bot_ledger_parse(const char *name, const uint8_t *buf, size_t len, struct bot_ledger *out,
		     char *err, size_t errlen);

/* "ledger-<16 hex>.nbl" of a digest. */
void bot_ledger_file_name(uint64_t digest, char name[BOT_LEDGER_NAME_MAX]);

/*
 * The fabric's ledger directory <dir>/.ledger/<fabric> as a directory fd,
 * never through a link, made 0700 (both levels) when missing; its path in
 * path. fabric NULL: <dir>/.ledger itself (its provenance.log holds the
 * deltas quarantined before their fabric was known). -1 with err.
 */
int bot_ledger_open_dir(const char *dir, const char *fabric, char *path, size_t pathlen,
			char *err, size_t errlen);
/* Read ledger-<digest>.nbl from ldir (a regular file, one link, its bytes'
 * digest the name's, the fabric's): 0, or -1 with err. */
int bot_ledger_load(int ldir, const char *path, const char *fabric, uint64_t digest,
		    struct bot_ledger *out, char *err, size_t errlen);
/* Write l as ledger-<digest>.nbl (0600, tmp + fsync + rename + directory
 * fsync; already there with those bytes, compared in full: done; other
 * bytes under that name are replaced): 0 with *digest, or -1. */
int bot_ledger_write(int ldir, const char *path, struct bot_ledger *l, uint64_t *digest,
		     char *err, size_t errlen);
/* Remove ledger files but the keep newest (by mtime, then name) and the
 * one named by digest `always`; errors are ignored (old files cost space). */
void bot_ledger_prune_files(int ldir, unsigned keep, uint64_t always);
/* Append text (whole lines) to provenance.log (0600, never through a link)
 * in one write, then fsync: 0, or -1 with err. */
int bot_ledger_provenance(int ldir, const char *path, const char *text, size_t len, char *err,
			  size_t errlen);

#endif
