/*
 * stateyaml.h - a fabric's learned state in YAML (doc/formats.md section
 * 16, schema 3): `nccl-bot state export` writes it, `state import` reads
 * it back, `state show` renders it for people with what was learned.
 *
 * Owns the schema: written with libyaml's emitter (learn/yamlout.h), read
 * with the bounded event reader (learn/yamlin.h: at most 256 MiB, depth 8,
 * no aliases, anchors, tags or duplicate keys). Export then import gives
 * a state whose snapshot encoding (bot_state_encode) is byte-identical:
 * every field of struct bot_state is written, priors as the shortest
 * decimal that reads back to the same f32 bits, and the last key,
 * ncontexts, so that an export cut short is refused rather than imported
 * as a smaller state. Readers accept schemas 1 (no summaries), 2 (no
 * ncontexts) and 3. Tools only.
 */
#ifndef BOT_LEARN_STATEYAML_H
#define BOT_LEARN_STATEYAML_H

#include <stddef.h>
#include <stdint.h>

#include "common/state.h"

#define BOT_STATEYAML_SCHEMA 3	/* written; 1 to 3 read (formats.md 16) */
#define BOT_STATESHOW_SCHEMA 1
#define BOT_STATEYAML_MAX_BYTES ((size_t)256 << 20)
#define BOT_STATEYAML_MAX_SCALARS (1ull << 26)
#define BOT_STATEYAML_MAX_SCALAR 4096

/* s as schema-3 YAML: 0 with *text (malloc()ed, NUL-terminated, *len
 * bytes), or -1 with err. */
int bot_stateyaml_export(const struct bot_state *s, char **text, size_t *len, char *err,
			 size_t errlen);

/* Parse schema 1-3 YAML named `name` into *out (free with bot_state_free):
 * 0, or -1 with "NAME:LINE:COL: reason" (or "NAME: reason") in err and
 * *out empty. The state is checked as the snapshot reader checks a file
 * (section 12's rules), so whatever is imported can be published. */
int bot_stateyaml_import(const char *name, const void *buf, size_t len, struct bot_state *out,
			 char *err, size_t errlen);
/* The same for a file, read through bot_read_at (no link, no FIFO, one
 * hard link, at most BOT_STATEYAML_MAX_BYTES). */
int bot_stateyaml_import_file(const char *path, struct bot_state *out, char *err,
			      size_t errlen);

/* What `state show` says about one context. */
struct bot_stateyaml_learned {
	int best;		/* arm with the lowest robust latency among arms with samples; -1 none */
	double best_us;		/* its robust latency (bot_stats_robust_us) */
	uint64_t best_n;	/* its samples */
	int auto_arm;		/* AUTO's arm: argmin of the prior row; -1 no prior */
	double auto_us;		/* its robust latency when it has samples; NaN otherwise */
	uint64_t auto_n;
	double loss_pct;	/* (auto_us / best_us - 1) * 100; NaN when unknown */
};
/* Confidence words for a number of samples: "low" (< 8), "medium" (< 64),
 * "high" (section 14's consensus thresholds). */
#define BOT_STATEYAML_CONF_MEDIUM 8
#define BOT_STATEYAML_CONF_HIGH 64
const char *bot_stateyaml_confidence(uint64_t n);
void bot_stateyaml_learned(const struct bot_kb_ctx *c, struct bot_stateyaml_learned *out);

/* `state show`: s rendered for people (what was learned per context; not
 * for import), from the snapshot named snap or the file named file (either
 * may be NULL). 0 with *text (malloc()ed), or -1 with err. */
int bot_stateyaml_show(const struct bot_state *s, const char *snap, const char *file,
		       char **text, size_t *len, char *err, size_t errlen);

#endif
