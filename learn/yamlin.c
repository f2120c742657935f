/*
 * yamlin.c - the bounded YAML pull reader (learn/yamlin.h) over libyaml's
 * event parser.
 *
 * One frame per open mapping or sequence (at most max_depth); a mapping's
 * frame remembers its keys in a small hash set so that a key given twice is
 * refused with the line of both. Scalars are copied out of libyaml's event
 * into the reader's own buffer, so every libyaml event is freed before the
 * caller sees anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#include "common/readall.h"
#include "common/settings.h"
#include "learn/log.h"
#include "learn/yamlin.h"
#include "policies/context.h"

struct key {
	char *s;
	size_t len;
	unsigned line;
};

struct frame {
	int map;		/* 1 mapping, 0 sequence */
	int want_key;		/* mapping: the next node is a key */
	struct key *keys;	/* mapping: the keys seen */
	size_t nkeys, ckeys;
	uint32_t *slot;		/* open addressing: index+1 into keys, 0 empty */
	size_t nslot;		/* power of two */
};

struct bot_yamlin {
	yaml_parser_t p;
	char name[256];
	struct bot_yamlin_limits lim;
	uint8_t *own;		/* the file's bytes (bot_yamlin_file) */
	const uint8_t *in;	/* the bytes read, own or the caller's */
	size_t inlen;
	struct frame *f;
	unsigned depth;
	uint64_t nscalars;
	int docs, root_done, eof;
	char *sbuf;		/* the last scalar */
	size_t scap;
	char err[BOT_YAMLIN_ERR_MAX];
};

static void frame_clear(struct frame *f)
{
	for (size_t i = 0; i < f->nkeys; i++)
		free(f->keys[i].s);
	free(f->keys);
	free(f->slot);
	memset(f, 0, sizeof(*f));
}

const char *bot_yamlin_error(const struct bot_yamlin *r)
{
	return r->err[0] ? r->err : "no error";
}

const char *bot_yamlin_name(const struct bot_yamlin *r)
{
	return r->name;
}

static int vfail(struct bot_yamlin *r, unsigned line, unsigned col, const char *fmt, va_list ap)
{
	char msg[BOT_YAMLIN_ERR_MAX / 2];

	if (r->err[0])
		return -1;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (line)
		snprintf(r->err, sizeof(r->err), "%.255s:%u:%u: %.511s", r->name, line, col, msg);
	else
		snprintf(r->err, sizeof(r->err), "%.255s: %.511s", r->name, msg);
	bot_log_esc_inplace(r->err, sizeof(r->err));
	return -1;
}

static int failat(struct bot_yamlin *r, unsigned line, unsigned col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int failat(struct bot_yamlin *r, unsigned line, unsigned col, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(r, line, col, fmt, ap);
	va_end(ap);
	return rc;
}

int bot_yamlin_fail(struct bot_yamlin *r, const struct bot_yamlin_ev *ev, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vfail(r, ev ? ev->line : 0, ev ? ev->col : 0, fmt, ap);
	va_end(ap);
	return rc;
}

static struct bot_yamlin *reader_new(const char *name, const struct bot_yamlin_limits *lim,
				     char *err, size_t errlen)
{
	struct bot_yamlin *r = calloc(1, sizeof(*r));

	if (!r || !(r->f = calloc(lim->max_depth ? lim->max_depth : 1, sizeof(*r->f)))) {
		free(r);
		bot_log_errf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	bot_log_esc_inplace(r->name, sizeof(r->name));
	r->lim = *lim;
	if (!yaml_parser_initialize(&r->p)) {
		free(r->f);
		free(r);
		bot_log_errf(err, errlen, "%s: out of memory", name);
		return NULL;
	}
	return r;
}

struct bot_yamlin *bot_yamlin_mem(const char *name, const void *buf, size_t len,
				  const struct bot_yamlin_limits *lim, char *err, size_t errlen)
{
	struct bot_yamlin *r;

	if (len > lim->max_bytes) {
		bot_log_errf(err, errlen, "%s: %zu bytes: over the %zu-byte limit", name, len,
			     lim->max_bytes);
		return NULL;
	}
	r = reader_new(name, lim, err, errlen);
	if (r) {
		yaml_parser_set_input_string(&r->p, (const unsigned char *)buf, len);
		r->in = buf;
		r->inlen = len;
	}
	return r;
}

const uint8_t *bot_yamlin_input(const struct bot_yamlin *r, size_t *len)
{
	*len = r->inlen;
	return r->in;
}

struct bot_yamlin *bot_yamlin_file(const char *path, const struct bot_yamlin_limits *lim,
				   uid_t owner, char *err, size_t errlen)
{
	char dir[4096];
	const char *base = strrchr(path, '/');
	struct bot_open_rule rule = { "YAML file", 0, 1, 0, 0, 1, 0 };
	struct bot_yamlin *r;
	uint8_t *buf;
	size_t len;
	int dfd, rc;

	/* opened through its directory: the last component is never a link */
	if (base) {
		size_t n = base == path ? 1 : (size_t)(base - path);

		if (n >= sizeof(dir)) {
			bot_log_errf(err, errlen, "%s: path too long", path);
			return NULL;
		}
		memcpy(dir, path, n);
		dir[n] = 0;
		base++;
	} else {
		strcpy(dir, ".");
		base = path;
	}
	if (!*base) {
		bot_log_errf(err, errlen, "%s: not a file name", path);
		return NULL;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		bot_log_errf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	rule.max = lim->max_bytes;
	rule.check_owner = owner != (uid_t)-1;
	rule.uid = owner;
	rule.owner_writes = rule.check_owner;
	rc = bot_read_at(dfd, base, path, &rule, &buf, &len, err, errlen);
	close(dfd);
	if (rc < 0) {
		bot_log_esc_inplace(err, errlen);
		return NULL;
	}
	r = bot_yamlin_mem(path, buf, len, lim, err, errlen);
	if (!r) {
		free(buf);
		return NULL;
	}
	r->own = buf;
	return r;
}

void bot_yamlin_free(struct bot_yamlin *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->depth; i++)
		frame_clear(&r->f[i]);
	yaml_parser_delete(&r->p);
	free(r->f);
	free(r->own);
	free(r->sbuf);
	free(r);
}

/* Remember key (s, len) in the mapping f: 0, 1 (already there: *first is
 * the line of the first), -1 out of memory. */
static int key_add(struct frame *f, const char *s, size_t len, unsigned line, unsigned *first)
{
	uint64_t h = bot_digest64(s, len);
	size_t i;

	if (f->nkeys + 1 > f->nslot / 2) {
		size_t n = f->nslot ? f->nslot * 2 : 16;
		uint32_t *slot = calloc(n, sizeof(*slot));

		if (!slot)
			return -1;
		for (size_t k = 0; k < f->nkeys; k++) {
			i = bot_digest64(f->keys[k].s, f->keys[k].len) & (n - 1);
			while (slot[i])
				i = (i + 1) & (n - 1);
			slot[i] = (uint32_t)(k + 1);
		}
		free(f->slot);
		f->slot = slot;
		f->nslot = n;
	}
	for (i = h & (f->nslot - 1); f->slot[i]; i = (i + 1) & (f->nslot - 1)) {
		const struct key *k = &f->keys[f->slot[i] - 1];

		if (k->len == len && !memcmp(k->s, s, len)) {
			*first = k->line;
			return 1;
		}
	}
	if (f->nkeys == f->ckeys) {
		size_t n = f->ckeys ? f->ckeys * 2 : 8;
		struct key *k = realloc(f->keys, n * sizeof(*k));

		if (!k)
			return -1;
		f->keys = k;
		f->ckeys = n;
	}
	if (!(f->keys[f->nkeys].s = malloc(len + 1)))
		return -1;
	memcpy(f->keys[f->nkeys].s, s, len + 1);
	f->keys[f->nkeys].len = len;
	f->keys[f->nkeys].line = line;
	f->nkeys++;
	f->slot[i] = (uint32_t)f->nkeys;
	return 0;
}

static int parse_fail(struct bot_yamlin *r)
{
	const yaml_parser_t *p = &r->p;

	if (p->error == YAML_MEMORY_ERROR)
		return failat(r, 0, 0, "out of memory");
	if (p->context)
		return failat(r, (unsigned)p->problem_mark.line + 1,
			      (unsigned)p->problem_mark.column + 1, "YAML syntax: %s %s (line %u)",
			      p->problem ? p->problem : "error", p->context,
			      (unsigned)p->context_mark.line + 1);
	return failat(r, (unsigned)p->problem_mark.line + 1, (unsigned)p->problem_mark.column + 1,
		      "YAML syntax: %s", p->problem ? p->problem : "error");
}

/* A node starts (scalar, mapping or sequence) at ev: the rules that hold
 * for every node, and its place in the mapping around it. */
static int node_start(struct bot_yamlin *r, struct bot_yamlin_ev *ev, const yaml_char_t *anchor,
		      const yaml_char_t *tag)
{
	struct frame *top = r->depth ? &r->f[r->depth - 1] : NULL;

	if (anchor)
		return bot_yamlin_fail(r, ev, "an anchor (&%s): anchors and aliases are refused",
				       (const char *)anchor);
	if (tag)
		return bot_yamlin_fail(r, ev, "a tag (%s): tags are refused", (const char *)tag);
	if (!top && r->root_done)
		return bot_yamlin_fail(r, ev, "more than one document");
	ev->is_key = 0;
	if (top && top->map) {
		if (top->want_key) {
			unsigned first = 0;
			int rc;

			if (ev->type != BOT_YAMLIN_SCALAR)
				return bot_yamlin_fail(r, ev, "a mapping key that is not a scalar");
			rc = key_add(top, ev->s, ev->len, ev->line, &first);
			if (rc < 0)
				return bot_yamlin_fail(r, ev, "out of memory");
			if (rc > 0)
				return bot_yamlin_fail(r, ev, "duplicate key '%.64s' (first at line %u)",
						       ev->s, first);
			ev->is_key = 1;
		}
		top->want_key = !top->want_key;
	}
	if (!top && ev->type == BOT_YAMLIN_SCALAR)
		r->root_done = 1;
	return 0;
}

int bot_yamlin_next(struct bot_yamlin *r, struct bot_yamlin_ev *ev)
{
	memset(ev, 0, sizeof(*ev));
	for (;;) {
		yaml_event_t e;
		int rc = 0;

		if (r->err[0])
			return -1;
		if (r->eof) {
			ev->type = BOT_YAMLIN_EOF;
			return 0;
		}
		if (!yaml_parser_parse(&r->p, &e))
			return parse_fail(r);
		ev->line = (unsigned)e.start_mark.line + 1;
		ev->col = (unsigned)e.start_mark.column + 1;
		switch (e.type) {
		case YAML_NO_EVENT:
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			yaml_event_delete(&e);
			continue;
		case YAML_DOCUMENT_START_EVENT:
			if (r->docs++)
				rc = bot_yamlin_fail(r, ev, "more than one document");
			else if (e.data.document_start.tag_directives.start !=
				 e.data.document_start.tag_directives.end)
				rc = bot_yamlin_fail(r, ev, "a %%TAG directive: tags are refused");
			yaml_event_delete(&e);
			if (rc < 0)
				return -1;
			continue;
		case YAML_STREAM_END_EVENT:
			yaml_event_delete(&e);
			r->eof = 1;
			ev->type = BOT_YAMLIN_EOF;
			return 0;
		case YAML_ALIAS_EVENT:
			bot_yamlin_fail(r, ev, "an alias (*%s): anchors and aliases are refused",
					(const char *)e.data.alias.anchor);
			yaml_event_delete(&e);
			return -1;
		case YAML_SCALAR_EVENT: {
			size_t len = e.data.scalar.length;

			ev->type = BOT_YAMLIN_SCALAR;
			if (++r->nscalars > r->lim.max_scalars)
				rc = bot_yamlin_fail(r, ev, "more than %llu scalars",
						     (unsigned long long)r->lim.max_scalars);
			else if (len > r->lim.max_scalar_len)
				rc = bot_yamlin_fail(r, ev, "a scalar of %zu bytes (at most %zu)", len,
						     r->lim.max_scalar_len);
			else if (memchr(e.data.scalar.value, 0, len))
				rc = bot_yamlin_fail(r, ev, "a NUL character in a scalar");
			if (rc == 0 && len + 1 > r->scap) {
				char *b = realloc(r->sbuf, len + 1);

				if (!b)
					rc = bot_yamlin_fail(r, ev, "out of memory");
				else {
					r->sbuf = b;
					r->scap = len + 1;
				}
			}
			if (rc == 0) {
				memcpy(r->sbuf, e.data.scalar.value, len);
				r->sbuf[len] = 0;
				ev->s = r->sbuf;
				ev->len = len;
				ev->plain = e.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
				rc = node_start(r, ev, e.data.scalar.anchor, e.data.scalar.tag);
			}
			yaml_event_delete(&e);
			return rc;
		}
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT: {
			int map = e.type == YAML_MAPPING_START_EVENT;

			ev->type = map ? BOT_YAMLIN_MAP : BOT_YAMLIN_SEQ;
			rc = node_start(r, ev, map ? e.data.mapping_start.anchor :
					e.data.sequence_start.anchor,
					map ? e.data.mapping_start.tag : e.data.sequence_start.tag);
			yaml_event_delete(&e);
			if (rc < 0)
				return -1;
			if (r->depth >= r->lim.max_depth)
				return bot_yamlin_fail(r, ev, "nested deeper than %u levels",
						       r->lim.max_depth);
			memset(&r->f[r->depth], 0, sizeof(r->f[0]));
			r->f[r->depth].map = map;
			r->f[r->depth].want_key = map;
			r->depth++;
			return 0;
		}
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			yaml_event_delete(&e);
			ev->type = BOT_YAMLIN_END;
			if (r->depth) {
				frame_clear(&r->f[--r->depth]);
				if (!r->depth)
					r->root_done = 1;
			}
			return 0;
		}
		yaml_event_delete(&e);
	}
}

int bot_yamlin_skip(struct bot_yamlin *r, const struct bot_yamlin_ev *ev)
{
	struct bot_yamlin_ev e;
	unsigned open = 1;

	if (ev->type != BOT_YAMLIN_MAP && ev->type != BOT_YAMLIN_SEQ)
		return 0;
	while (open) {
		if (bot_yamlin_next(r, &e) < 0)
			return -1;
		if (e.type == BOT_YAMLIN_MAP || e.type == BOT_YAMLIN_SEQ)
			open++;
		else if (e.type == BOT_YAMLIN_END)
			open--;
		else if (e.type == BOT_YAMLIN_EOF)
			return bot_yamlin_fail(r, &e, "unexpected end of the document");
	}
	return 0;
}

int bot_yamlin_version_refused(struct bot_yamlin *r, const struct bot_yamlin_ev *ev,
			       const char *noun, uint64_t v, uint64_t max)
{
	return failat(r, ev->line, ev->col, "%s %llu: this build reads %ss 1 to %llu%s", noun,
		      (unsigned long long)v, noun, (unsigned long long)max,
		      v > max ? " (a newer format)" : "");
}

int bot_yamlin_newer(struct bot_yamlin *r, const char *key, const char *noun, uint64_t max,
		     uint64_t *found)
{
	struct bot_yamlin *a;
	struct bot_yamlin_ev ev;
	char err[BOT_YAMLIN_ERR_MAX];
	int rc = 0;

	if (!r->err[0] || !r->in)
		return 0;
	a = reader_new(r->name, &r->lim, err, sizeof(err));
	if (!a)
		return 0;
	memcpy(a->name, r->name, sizeof(a->name));	/* escaped already */
	yaml_parser_set_input_string(&a->p, r->in, r->inlen);
	a->in = r->in;
	a->inlen = r->inlen;
	if (bot_yamlin_next(a, &ev) < 0 || ev.type != BOT_YAMLIN_MAP)
		goto out;
	for (;;) {
		int hit;

		if (bot_yamlin_next(a, &ev) < 0 || ev.type != BOT_YAMLIN_SCALAR)
			goto out;	/* the end of the root, or a refusal before the key */
		hit = !strcmp(ev.s, key);
		if (bot_yamlin_next(a, &ev) < 0)
			goto out;
		if (hit) {
			if (ev.type == BOT_YAMLIN_SCALAR &&
			    bot_yamlin_u64(a, &ev, key, 0, 0, UINT64_MAX, found) == 0 &&
			    *found > max) {
				char at[BOT_YAMLIN_ERR_MAX];

				/* the refusal already is the version's, at its value */
				snprintf(at, sizeof(at), "%.255s:%u:%u: ", r->name, ev.line, ev.col);
				bot_log_esc_inplace(at, sizeof(at));
				if (!strncmp(r->err, at, strlen(at)))
					goto out;
				r->err[0] = 0;
				bot_yamlin_version_refused(r, &ev, noun, *found, max);
				rc = 1;
			}
			goto out;
		}
		if (bot_yamlin_skip(a, &ev) < 0)
			goto out;
	}
out:
	bot_yamlin_free(a);
	return rc;
}

int bot_yamlin_is_null(const struct bot_yamlin_ev *ev)
{
	return ev->type == BOT_YAMLIN_SCALAR && ev->plain &&
	       (!ev->len || !strcmp(ev->s, "~") || !strcmp(ev->s, "null") ||
		!strcmp(ev->s, "Null") || !strcmp(ev->s, "NULL"));
}

int bot_yamlin_u64(struct bot_yamlin *r, const struct bot_yamlin_ev *ev, const char *what,
		   int hex, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;
	int rc;

	if (ev->type != BOT_YAMLIN_SCALAR)
		return bot_yamlin_fail(r, ev, "%s: want a number, not a %s", what,
				       ev->type == BOT_YAMLIN_MAP ? "mapping" : "sequence");
	rc = bot_set_u64(ev->s, hex, &v);
	if (rc == 0 && (v < lo || v > hi))
		rc = BOT_SET_ERANGE;
	if (rc < 0)
		return bot_yamlin_fail(r, ev, "%s: '%.64s' is not a number %llu..%llu (%s)", what,
				       ev->s, (unsigned long long)lo, (unsigned long long)hi,
				       bot_set_strerror(rc));
	*out = v;
	return 0;
}

int bot_yamlin_scalar(struct bot_yamlin *r, const char *what, struct bot_yamlin_ev *ev)
{
	if (bot_yamlin_next(r, ev) < 0)
		return -1;
	if (ev->type != BOT_YAMLIN_SCALAR)
		return bot_yamlin_fail(r, ev, "%s: want a scalar", what);
	return 0;
}
