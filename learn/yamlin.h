/*
 * yamlin.h - the one way nccl-bot reads YAML (doc/formats.md sections 15
 * and 16): a bounded pull reader over libyaml's event parser, never its
 * document loader, so that no input can make it build more than it is
 * allowed to. Tools and the SPANK plugin only; never the rank side.
 *
 * Owns the rules every YAML input obeys, whatever reads it:
 *   - an input size cap (per use), checked before libyaml sees a byte;
 *   - a depth limit (mappings and sequences nested at most max_depth deep);
 *   - a limit on scalars (keys included) and on one scalar's length;
 *   - no anchors, no aliases (so no "billion laughs"), no tags or %TAG
 *     directives, mapping keys that are scalars, no key twice in a mapping;
 *   - exactly one document (an empty input is one without a root).
 * Every refusal reads "NAME:LINE:COL: rule", lines and columns from 1,
 * control characters escaped.
 *
 * The caller walks the events (bot_yamlin_next) and decides what they
 * mean: learn/siteconf.c (site configuration) and learn/stateyaml.c (state
 * in YAML) are the two readers built on it.
 */
#ifndef BOT_LEARN_YAMLIN_H
#define BOT_LEARN_YAMLIN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BOT_YAMLIN_DEPTH 8		/* formats.md section 15 */
#define BOT_YAMLIN_ERR_MAX 1024

struct bot_yamlin_limits {
	size_t max_bytes;	/* the whole input */
	unsigned max_depth;	/* nested mappings and sequences (the root's is 1) */
	uint64_t max_scalars;	/* scalar events, keys included */
	size_t max_scalar_len;	/* bytes of one scalar's value */
};

enum bot_yamlin_type {
	BOT_YAMLIN_SCALAR = 1,
	BOT_YAMLIN_MAP,		/* a mapping starts: keys and values follow, then END */
	BOT_YAMLIN_SEQ,		/* a sequence starts: items follow, then END */
	BOT_YAMLIN_END,		/* the innermost mapping or sequence ends */
	BOT_YAMLIN_EOF,		/* the document ended (or there was none) */
};

struct bot_yamlin_ev {
	enum bot_yamlin_type type;
	const char *s;		/* SCALAR: the value, NUL-terminated, until the next call */
	size_t len;
	int plain;		/* SCALAR: written without quotes (so `null` means null) */
	int is_key;		/* SCALAR: a mapping's key */
	unsigned line, col;	/* where it starts, from 1 */
};

struct bot_yamlin;

/* A reader over len bytes named `name` in messages (the bytes are copied
 * only by libyaml's own buffering; buf must outlive the reader). NULL with
 * err on a refusal (over max_bytes) or out of memory. */
struct bot_yamlin *bot_yamlin_mem(const char *name, const void *buf, size_t len,
				  const struct bot_yamlin_limits *lim, char *err, size_t errlen);
/* A reader over a file, read whole first through common/readall.h's
 * bot_read_at (opened through its directory, no link, no FIFO or device,
 * one hard link, at most max_bytes; with owner != (uid_t)-1 owned by root
 * or by owner). */
struct bot_yamlin *bot_yamlin_file(const char *path, const struct bot_yamlin_limits *lim,
				   uid_t owner, char *err, size_t errlen);
void bot_yamlin_free(struct bot_yamlin *r);

/* The next event: 0, or -1 with the reason in bot_yamlin_error(). After
 * an error every call fails the same way. */
int bot_yamlin_next(struct bot_yamlin *r, struct bot_yamlin_ev *ev);
/* Skip the value whose first event is ev (a whole mapping or sequence). */
int bot_yamlin_skip(struct bot_yamlin *r, const struct bot_yamlin_ev *ev);
/* Record a refusal at ev (NULL: no position): "NAME:LINE:COL: msg".
 * Returns -1; the first refusal recorded is the one kept. */
int bot_yamlin_fail(struct bot_yamlin *r, const struct bot_yamlin_ev *ev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *bot_yamlin_error(const struct bot_yamlin *r);
const char *bot_yamlin_name(const struct bot_yamlin *r);
/* The bytes being read (the file's, or the caller's buffer), *len of them. */
const uint8_t *bot_yamlin_input(const struct bot_yamlin *r, size_t *len);

/* For a reader that refused its input (r holds the refusal): when the
 * root mapping holds `key` (a format's version) with a number above max,
 * wherever the key stands, replace the refusal with one naming that
 * version at its line (bot_yamlin_version_refused, with noun) and return 1 (*found: the version); else 0, the
 * refusal kept. A file of a newer format is refused for what the newer
 * format changed (a key this build does not know, a value out of its
 * range), often before its version key is read; this names the cause
 * (formats.md: a reader refuses a version it does not know naming it).
 * A second pass over the input, on the failure path only. */
int bot_yamlin_newer(struct bot_yamlin *r, const char *key, const char *noun, uint64_t max,
		     uint64_t *found);

/* Refuse a format version v this build does not read (1 to max) at ev, in
 * the one wording every YAML format uses, whether the version key was read
 * first or found after another refusal (bot_yamlin_newer): "version 3:
 * this build reads versions 1 to 2 (a newer format)"; noun names what is
 * numbered ("version", "schema"). Returns -1. */
int bot_yamlin_version_refused(struct bot_yamlin *r, const struct bot_yamlin_ev *ev,
			       const char *noun, uint64_t v, uint64_t max);

/* A plain `null`, `Null`, `NULL`, `~` or an empty plain scalar. */
int bot_yamlin_is_null(const struct bot_yamlin_ev *ev);
/* A scalar value as a number of section 11's grammar within lo..hi (hex:
 * 0x and 1-16 hex digits allowed too); what names the value in a refusal.
 * 0, or -1 recorded at ev. */
int bot_yamlin_u64(struct bot_yamlin *r, const struct bot_yamlin_ev *ev, const char *what,
		   int hex, uint64_t lo, uint64_t hi, uint64_t *out);
/* The next event, which must be a scalar (what names it): 0 or -1. */
int bot_yamlin_scalar(struct bot_yamlin *r, const char *what, struct bot_yamlin_ev *ev);

#endif
