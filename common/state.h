/*
 * state.h - per-fabric learned state (doc/formats.md section 12, format v3;
 * versions 1 and 2 are still read).
 *
 * Owns the snapshot file: header (with the lineage: parent, ledger,
 * epoch), sources, context records, CRC-32C trailer; canonical, so equal
 * states have equal bytes and names. Version 2 files read as a state whose
 * contexts' summaries are 0; version 1 files also with parent, ledger,
 * epoch and every context's explore 0. The
 * state directory around snapshots (content-addressed snapshots per fabric,
 * the `current` pointer, publishing, the writers' lock) is learn/store.h
 * and learn/lock.h.
 *
 * A state is a knowledge base (policies/kb.h: priors, calls, statistics)
 * plus the ids of what was merged into it and the number of merge rounds.
 * What goes into it (spool files today, the compactor's deltas later) is
 * the caller's business; this module only stores and validates. Tools only:
 * ranks never read state.
 */
#ifndef BOT_COMMON_STATE_H
#define BOT_COMMON_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "policies/kb.h"

#define BOT_STATE_MAGIC "NBSTATE1"
#define BOT_STATE_VERSION 3		/* written; 1, 2 and 3 are read */
#define BOT_STATE_HDR_SIZE 128
#define BOT_STATE_HDR_SIZE_V1 96
#define BOT_STATE_SRC_SIZE 8
#define BOT_STATE_CTX_SIZE 124	/* a context record without its histograms */
#define BOT_STATE_CTX_SIZE_V2 116
#define BOT_STATE_CTX_SIZE_V1 108
#define BOT_STATE_TRAILER_SIZE 8
#define BOT_STATE_FABRIC_MAX 64
#define BOT_STATE_MAX_SOURCES (1u << 20)
#define BOT_STATE_MAX_CONTEXTS (1u << 20)
#define BOT_STATE_MAX_ARM_N BOT_STATS_MAX_N	/* samples per (context, arm): 2^40 */
#define BOT_STATE_MAX_FILE (256u << 20)
#define BOT_STATE_ERR_MAX 768
#define BOT_STATE_NAME_MAX 32		/* "snap-<16 hex>.nbs" + NUL, with room */

struct bot_state {
	char fabric[BOT_STATE_FABRIC_MAX + 1];
	uint64_t rounds;			/* merges that added a source */
	uint64_t parent;		/* digest of the snapshot this was made from; 0 first */
	uint64_t ledger;		/* digest of the compactor's ledger; 0 (state add) */
	uint64_t epoch;			/* last decay window applied; 0 none */
	unsigned version;		/* the format version it was read from; 0 built */
	size_t nsources, scap;
	uint64_t *src;			/* ids of what was merged (a spool file:
					 * bot_digest64 of its bytes), sorted, unique */
	struct bot_kb *kb;
};

/* A fabric name by the sweep CSV's rule: [a-z0-9][a-z0-9._-]{0,63}. */
int bot_state_fabric_ok(const char *name);

/* The names of the compactor's own directories beside the fabrics'
 * (inbox, quarantine, held: formats.md section 14), which pass the rule
 * above but no fabric may take: 1 for one of them. */
int bot_state_fabric_reserved(const char *name);
/* Why, as every refusal of one says it (after "not a fabric name "). */
#define BOT_STATE_RESERVED_WHY "(inbox, quarantine and held are the state directory's own)"

/* An empty state of a fabric: 0, or -1 (bad name, out of memory). */
int bot_state_init(struct bot_state *s, const char *fabric);
void bot_state_free(struct bot_state *s);

/* Sources: has (1/0); insert (kept sorted; a present id is a no-op): 0, or
 * -1 out of memory or over BOT_STATE_MAX_SOURCES. */
int bot_state_has_source(const struct bot_state *s, uint64_t id);
int bot_state_add_source(struct bot_state *s, uint64_t id);
/* Insert n ids at once (any order, duplicates allowed): one sort and one
 * merge, O((nsources + n) log n), where n calls of bot_state_add_source
 * would move the array n times. 0, or -1 (out of memory, or the union over
 * BOT_STATE_MAX_SOURCES: s unchanged). */
int bot_state_add_sources(struct bot_state *s, const uint64_t *ids, size_t n);

/* The canonical file image, malloc()ed into *buf. 0, or -1 with the reason
 * (a limit exceeded, out of memory) in err. */
int bot_state_encode(const struct bot_state *s, uint8_t **buf, size_t *len, char *err,
		     size_t errlen);
/* The same in a given format version: BOT_STATE_VERSION; 2 for a state
 * whose every summaries count is 0; 1 for one without lineage either
 * (parent, ledger, epoch and every explore 0); else -1: so that tests and
 * tools can make the files an older reader reads. Each version's encoding
 * is canonical. */
int bot_state_encode_version(const struct bot_state *s, unsigned version, uint8_t **buf,
			     size_t *len, char *err, size_t errlen);
/* Validate and decode a whole image named `name`: 0 with *out filled (free
 * with bot_state_free), or -1 with "name: reason" in err and *out empty. */
int bot_state_parse(const char *name, const uint8_t *buf, size_t len, struct bot_state *out,
		    char *err, size_t errlen);
/* Read a snapshot file (at most BOT_STATE_MAX_FILE bytes) and parse it. */
int bot_state_read_file(const char *path, struct bot_state *out, char *err, size_t errlen);

/* The snapshot name of an image: "snap-<bot_digest64 hex>.nbs". */
void bot_state_snap_name(const uint8_t *buf, size_t len, char name[BOT_STATE_NAME_MAX]);
/* Is s exactly "snap-<16 lower-case hex>.nbs"? */
int bot_state_snap_name_ok(const char *s);
/* The digest a snapshot name carries (the parent of a state made from it);
 * 0 for a string that is not a snapshot name (or ""). */
uint64_t bot_state_snap_digest(const char *name);
/* A snapshot's name from its digest. */
void bot_state_snap_name_of(uint64_t digest, char name[BOT_STATE_NAME_MAX]);

/* A snapshot's header alone (what the state directory reads to follow the
 * parent chain or to tell an interrupted first publish): the fields
 * checked as bot_state_parse() checks them, nothing after them (no CRC). */
struct bot_state_hdr {
	unsigned version;
	char fabric[BOT_STATE_FABRIC_MAX + 1];
	uint64_t rounds, parent, ledger, epoch;	/* v1: lineage 0 */
	uint32_t nsources, ncontexts;
};
/* 0, or -1 with "name: reason" in err. len may be the whole file or its
 * first BOT_STATE_HDR_SIZE bytes (or fewer for a version 1 file). */
int bot_state_parse_header(const char *name, const uint8_t *buf, size_t len,
			   struct bot_state_hdr *h, char *err, size_t errlen);


#endif
