/*
 * yamlout.h - the one way nccl-bot writes YAML: libyaml's emitter into a
 * memory buffer (never printf-built YAML), so that quoting and escaping are
 * the emitter's. Tools and the SPANK plugin only.
 *
 * Owns the scalar spellings nccl-bot's YAML uses: numbers in decimal,
 * 64-bit digests and keys as quoted hex, and f32 values in the shortest
 * decimal that strtof() reads back to the same bits (bot_yamlout_f32_fmt).
 * Calls after a failure do nothing; bot_yamlout_finish says what failed.
 */
#ifndef BOT_LEARN_YAMLOUT_H
#define BOT_LEARN_YAMLOUT_H

#include <stddef.h>
#include <stdint.h>

struct bot_yamlout;

/* A document with one root node; NULL when out of memory. */
struct bot_yamlout *bot_yamlout_new(void);
void bot_yamlout_free(struct bot_yamlout *y);

/* A mapping or a sequence starts (flow: on one line, `{a: 1}` / `[1, 2]`);
 * bot_yamlout_end closes the innermost one. */
void bot_yamlout_map(struct bot_yamlout *y, int flow);
void bot_yamlout_seq(struct bot_yamlout *y, int flow);
void bot_yamlout_end(struct bot_yamlout *y);

/* Scalars: a string in whatever style the emitter finds safe (plain when
 * it can); a string always double-quoted; a u64 in decimal; a u64 as a
 * quoted 16-digit lower-case hex string, with "0x" when prefix is set; an
 * f32 that reads back exactly; a double with `digits` significant digits
 * (for people; not read back); null. */
void bot_yamlout_str(struct bot_yamlout *y, const char *s);
void bot_yamlout_quoted(struct bot_yamlout *y, const char *s);
void bot_yamlout_u64(struct bot_yamlout *y, uint64_t v);
void bot_yamlout_hex64(struct bot_yamlout *y, uint64_t v, int prefix);
void bot_yamlout_f32(struct bot_yamlout *y, float v);
void bot_yamlout_num(struct bot_yamlout *y, double v, int digits);
void bot_yamlout_null(struct bot_yamlout *y);

/* End the document: 0 with the text in *buf (len bytes, NUL-terminated,
 * owned by y), or -1 with the first failure in err. */
int bot_yamlout_finish(struct bot_yamlout *y, const char **buf, size_t *len, char *err,
		       size_t errlen);

/* The shortest "%.{6..9}g" spelling of a finite v that strtof() reads back
 * to the same bits (9 digits always do) into buf (32 bytes). */
void bot_yamlout_f32_fmt(float v, char buf[32]);

#endif
