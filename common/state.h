/*
 * state.h - per-fabric learned state (doc/formats.md section 12, format v1).
 *
 * Owns the snapshot file: header, sources, context records, CRC-32C
 * trailer; canonical, so equal states have equal bytes and names. The
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
#define BOT_STATE_VERSION 1
#define BOT_STATE_HDR_SIZE 96
#define BOT_STATE_SRC_SIZE 8
#define BOT_STATE_CTX_SIZE 108	/* a context record without its histograms */
#define BOT_STATE_TRAILER_SIZE 8
#define BOT_STATE_FABRIC_MAX 64
#define BOT_STATE_MAX_SOURCES (1u << 20)
#define BOT_STATE_MAX_CONTEXTS (1u << 20)
#define BOT_STATE_MAX_ARM_N (1ull << 40)	/* samples per (context, arm) */
#define BOT_STATE_MAX_FILE (256u << 20)
#define BOT_STATE_ERR_MAX 768
#define BOT_STATE_NAME_MAX 32		/* "snap-<16 hex>.nbs" + NUL, with room */

struct bot_state {
	char fabric[BOT_STATE_FABRIC_MAX + 1];
	uint64_t rounds;			/* merges that added a source */
	uint64_t parent;		/* digest of the snapshot this was made from; 0 first */
	uint64_t ledger;		/* digest of the compactor's ledger; 0 (state add) */
	uint64_t epoch;			/* last decay window applied; 0 none */
	size_t nsources, scap;
	uint64_t *src;			/* ids of what was merged (a spool file:
					 * bot_digest64 of its bytes), sorted, unique */
	struct bot_kb *kb;
};

/* A fabric name by the sweep CSV's rule: [a-z0-9][a-z0-9._-]{0,63}. */
int bot_state_fabric_ok(const char *name);

/* An empty state of a fabric: 0, or -1 (bad name, out of memory). */
int bot_state_init(struct bot_state *s, const char *fabric);
void bot_state_free(struct bot_state *s);

/* Sources: has (1/0); insert (kept sorted; a present id is a no-op): 0, or
 * -1 out of memory or over BOT_STATE_MAX_SOURCES. */
int bot_state_has_source(const struct bot_state *s, uint64_t id);
int bot_state_add_source(struct bot_state *s, uint64_t id);

/* The canonical file image, malloc()ed into *buf. 0, or -1 with the reason
 * (a limit exceeded, out of memory) in err. */
int bot_state_encode(const struct bot_state *s, uint8_t **buf, size_t *len, char *err,
		     size_t errlen);
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


#endif
