/*
 * yamlout.c - YAML through libyaml's emitter into memory (learn/yamlout.h).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "learn/log.h"
#include "learn/yamlout.h"

struct bot_yamlout {
	yaml_emitter_t e;
	char *buf;
	size_t len, cap;
	int failed, finished;
	unsigned char kind[32];	/* open collections: 1 mapping, 0 sequence */
	unsigned depth;
	char err[256];
};

static int out_write(void *data, unsigned char *p, size_t n)
{
	struct bot_yamlout *y = data;

	if (y->len + n + 1 > y->cap) {
		size_t c = y->cap ? y->cap : 4096;
		char *b;

		while (c < y->len + n + 1)
			c *= 2;
		if (!(b = realloc(y->buf, c)))
			return 0;
		y->buf = b;
		y->cap = c;
	}
	memcpy(y->buf + y->len, p, n);
	y->len += n;
	y->buf[y->len] = 0;
	return 1;
}

/* Hand an initialized event (ok: the initializer's result) to the emitter. */
static void emit(struct bot_yamlout *y, yaml_event_t *ev, int ok)
{
	if (y->failed) {
		if (ok)
			yaml_event_delete(ev);
		return;
	}
	if (!ok) {
		y->failed = 1;
		snprintf(y->err, sizeof(y->err), "out of memory");
		return;
	}
	if (!yaml_emitter_emit(&y->e, ev)) {
		y->failed = 1;
		snprintf(y->err, sizeof(y->err), "%s", y->e.problem ? y->e.problem :
			 y->e.error == YAML_MEMORY_ERROR || y->e.error == YAML_WRITER_ERROR ?
			 "out of memory" : "emitter error");
	}
}

struct bot_yamlout *bot_yamlout_new(void)
{
	struct bot_yamlout *y = calloc(1, sizeof(*y));
	yaml_event_t ev;

	if (!y)
		return NULL;
	if (!yaml_emitter_initialize(&y->e)) {
		free(y);
		return NULL;
	}
	yaml_emitter_set_output(&y->e, out_write, y);
	yaml_emitter_set_unicode(&y->e, 1);
	yaml_emitter_set_width(&y->e, 100);
	yaml_emitter_set_indent(&y->e, 2);
	emit(y, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	emit(y, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	return y;
}

void bot_yamlout_free(struct bot_yamlout *y)
{
	if (!y)
		return;
	yaml_emitter_delete(&y->e);
	free(y->buf);
	free(y);
}

static void open_one(struct bot_yamlout *y, int map)
{
	if (y->depth == sizeof(y->kind)) {
		y->failed = 1;
		snprintf(y->err, sizeof(y->err), "nested too deep");
		return;
	}
	y->kind[y->depth++] = (unsigned char)map;
}

void bot_yamlout_map(struct bot_yamlout *y, int flow)
{
	yaml_event_t ev;

	open_one(y, 1);
	emit(y, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
			 flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

void bot_yamlout_seq(struct bot_yamlout *y, int flow)
{
	yaml_event_t ev;

	open_one(y, 0);
	emit(y, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
			 flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
}

void bot_yamlout_end(struct bot_yamlout *y)
{
	yaml_event_t ev;

	if (!y->depth) {
		y->failed = 1;
		snprintf(y->err, sizeof(y->err), "an end without a mapping or sequence");
		return;
	}
	if (y->kind[--y->depth])
		emit(y, &ev, yaml_mapping_end_event_initialize(&ev));
	else
		emit(y, &ev, yaml_sequence_end_event_initialize(&ev));
}

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0. */
static size_t utf8_seq(const unsigned char *p)
{
	size_t n;
	uint32_t c;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, c = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, c = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, c = p[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (c < 0x800 || (c >= 0xd800 && c <= 0xdfff))) ||
	    (n == 4 && (c < 0x10000 || c > 0x10ffff)))
		return 0;
	return n;
}

static void scalar(struct bot_yamlout *y, const char *s, yaml_scalar_style_t style)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t len = strlen(s), n, o = 0;
	char *fixed = NULL;
	int bad = 0;
	yaml_event_t ev;

	/* Bytes that are not UTF-8 (a file name, a reason from a file) are
	 * written as the text \xNN: the emitter takes UTF-8 only. */
	for (size_t i = 0; i < len && !bad; i += n)
		bad = !(n = utf8_seq(p + i));
	if (bad) {
		if (!(fixed = malloc(4 * len + 1))) {
			if (!y->failed)
				snprintf(y->err, sizeof(y->err), "out of memory");
			y->failed = 1;
			return;
		}
		for (size_t i = 0; i < len; i += n) {
			n = utf8_seq(p + i);
			if (n) {
				memcpy(fixed + o, p + i, n);
				o += n;
			} else {
				o += (size_t)sprintf(fixed + o, "\\x%02x", p[i]);
				n = 1;
			}
		}
		fixed[o] = 0;
		s = fixed;
		len = o;
	}
	emit(y, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)(uintptr_t)s,
			 (int)len, 1, 1, style));
	free(fixed);
}

void bot_yamlout_str(struct bot_yamlout *y, const char *s)
{
	scalar(y, s, YAML_ANY_SCALAR_STYLE);
}

void bot_yamlout_quoted(struct bot_yamlout *y, const char *s)
{
	scalar(y, s, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

void bot_yamlout_u64(struct bot_yamlout *y, uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	scalar(y, b, YAML_PLAIN_SCALAR_STYLE);
}

void bot_yamlout_hex64(struct bot_yamlout *y, uint64_t v, int prefix)
{
	char b[24];

	snprintf(b, sizeof(b), "%s%016" PRIx64, prefix ? "0x" : "", v);
	scalar(y, b, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

void bot_yamlout_f32_fmt(float v, char buf[32])
{
	for (int d = 6; d <= 9; d++) {
		snprintf(buf, 32, "%.*g", d, (double)v);
		if (d == 9 || !memcmp(&(float){ strtof(buf, NULL) }, &v, sizeof(v)))
			return;
	}
}

void bot_yamlout_f32(struct bot_yamlout *y, float v)
{
	char b[32];

	bot_yamlout_f32_fmt(v, b);
	scalar(y, b, YAML_PLAIN_SCALAR_STYLE);
}

void bot_yamlout_num(struct bot_yamlout *y, double v, int digits)
{
	char b[40];

	if (!isfinite(v)) {
		bot_yamlout_null(y);
		return;
	}
	snprintf(b, sizeof(b), "%.*g", digits, v);
	scalar(y, b, YAML_PLAIN_SCALAR_STYLE);
}

void bot_yamlout_null(struct bot_yamlout *y)
{
	scalar(y, "null", YAML_PLAIN_SCALAR_STYLE);
}

int bot_yamlout_finish(struct bot_yamlout *y, const char **buf, size_t *len, char *err,
		       size_t errlen)
{
	yaml_event_t ev;

	if (!y->finished) {
		y->finished = 1;
		emit(y, &ev, yaml_document_end_event_initialize(&ev, 1));
		emit(y, &ev, yaml_stream_end_event_initialize(&ev));
		if (!y->failed && !yaml_emitter_flush(&y->e)) {
			y->failed = 1;
			snprintf(y->err, sizeof(y->err), "out of memory");
		}
	}
	if (y->failed)
		return bot_log_errf(err, errlen, "YAML emitter: %s", y->err);
	*buf = y->buf ? y->buf : "";
	*len = y->len;
	return 0;
}
