/*
 * stateyaml.c - a fabric's learned state in YAML (learn/stateyaml.h,
 * doc/formats.md section 16): export and `state show` through the emitter,
 * import through the bounded event reader.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/log.h"
#include "learn/stateyaml.h"
#include "learn/yamlin.h"
#include "learn/yamlout.h"
#include "policies/context.h"
#include "policies/policy.h"

static const struct bot_yamlin_limits state_limits = {
	BOT_STATEYAML_MAX_BYTES, BOT_YAMLIN_DEPTH, BOT_STATEYAML_MAX_SCALARS,
	BOT_STATEYAML_MAX_SCALAR,
};

static int cmp_ctx(const void *pa, const void *pb)
{
	const struct bot_kb_ctx *a = *(const struct bot_kb_ctx *const *)pa;
	const struct bot_kb_ctx *b = *(const struct bot_kb_ctx *const *)pb;

	return (a->key > b->key) - (a->key < b->key);
}

/* The contexts of kb in key order (malloc()ed; NULL only when out of memory
 * and the kb is not empty). */
static const struct bot_kb_ctx **sorted_ctx(const struct bot_kb *kb, size_t *n)
{
	const struct bot_kb_ctx **v;

	*n = bot_kb_count(kb);
	v = malloc((*n ? *n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++)
		v[i] = bot_kb_at(kb, i);
	qsort(v, *n, sizeof(*v), cmp_ctx);
	return v;
}

static int finish(struct bot_yamlout *y, char **text, size_t *len, char *err, size_t errlen)
{
	const char *b;
	size_t n;
	int rc = bot_yamlout_finish(y, &b, &n, err, errlen);

	if (rc == 0) {
		*text = malloc(n + 1);
		if (!*text)
			rc = bot_log_errf(err, errlen, "out of memory");
		else {
			memcpy(*text, b, n + 1);
			*len = n;
		}
	}
	bot_yamlout_free(y);
	return rc;
}

static void key_str(struct bot_yamlout *y, const char *k, const char *v)
{
	bot_yamlout_str(y, k);
	bot_yamlout_str(y, v);
}

static void key_u64(struct bot_yamlout *y, const char *k, uint64_t v)
{
	bot_yamlout_str(y, k);
	bot_yamlout_u64(y, v);
}

static void key_hex(struct bot_yamlout *y, const char *k, uint64_t v, int prefix)
{
	bot_yamlout_str(y, k);
	bot_yamlout_hex64(y, v, prefix);
}

static void key_num(struct bot_yamlout *y, const char *k, double v, int digits)
{
	bot_yamlout_str(y, k);
	bot_yamlout_num(y, v, digits);
}

/* A document's start: the emitter and the contexts in key order (*v, *n),
 * *text and *len cleared. 0, or -1 with err (out of memory). */
static int doc_begin(const struct bot_state *s, struct bot_yamlout **y,
		     const struct bot_kb_ctx ***v, size_t *n, char **text, size_t *len, char *err,
		     size_t errlen)
{
	*text = NULL;
	*len = 0;
	*y = bot_yamlout_new();
	if (!*y || !(*v = sorted_ctx(s->kb, n))) {
		bot_yamlout_free(*y);
		return bot_log_errf(err, errlen, "out of memory");
	}
	bot_yamlout_map(*y, 0);
	return 0;
}

/* A document's end: the contexts' sequence closed, an export's last key
 * (ncontexts != NULL: formats.md 16, schema 3; an export cut short lacks
 * it), the top map closed, the text out (finish). */
static int doc_end(struct bot_yamlout *y, const struct bot_kb_ctx **v, const size_t *ncontexts,
		   char **text, size_t *len, char *err, size_t errlen)
{
	bot_yamlout_end(y);
	if (ncontexts)
		key_u64(y, "ncontexts", *ncontexts);
	bot_yamlout_end(y);
	free(v);
	return finish(y, text, len, err, errlen);
}

/* A context's map opened with what export and show both start it with. */
static void ctx_begin(struct bot_yamlout *y, const struct bot_kb_ctx *c)
{
	char name[96];

	bot_ctx_format(c->key, name, sizeof(name));
	bot_yamlout_map(y, 0);
	key_str(y, "context", name);
	key_hex(y, "key", c->key, 1);
	key_u64(y, "calls", c->calls);
}

int bot_stateyaml_export(const struct bot_state *s, char **text, size_t *len, char *err,
			 size_t errlen)
{
	struct bot_yamlout *y;
	const struct bot_kb_ctx **v;
	size_t n;

	if (doc_begin(s, &y, &v, &n, text, len, err, errlen) < 0)
		return -1;
	key_u64(y, "nccl-bot-state", BOT_STATEYAML_SCHEMA);
	key_str(y, "fabric", s->fabric);
	key_u64(y, "rounds", s->rounds);
	key_hex(y, "parent", s->parent, 0);
	key_hex(y, "ledger", s->ledger, 0);
	key_u64(y, "epoch", s->epoch);
	bot_yamlout_str(y, "sources");
	bot_yamlout_seq(y, 1);
	for (size_t i = 0; i < s->nsources; i++)
		bot_yamlout_hex64(y, s->src[i], 0);
	bot_yamlout_end(y);
	bot_yamlout_str(y, "contexts");
	bot_yamlout_seq(y, 0);
	for (size_t i = 0; i < n; i++) {
		const struct bot_kb_ctx *c = v[i];

		ctx_begin(y, c);
		key_u64(y, "explore", c->explore);
		key_u64(y, "summaries", c->summaries);
		bot_yamlout_str(y, "prior");
		if (c->has_prior) {
			bot_yamlout_map(y, 1);
			for (int a = 0; a < BOT_NARMS; a++)
				if (c->prior[a] >= 0) {
					bot_yamlout_str(y, bot_arm_name(a));
					bot_yamlout_f32(y, c->prior[a]);
				}
			bot_yamlout_end(y);
		} else {
			bot_yamlout_null(y);
		}
		bot_yamlout_str(y, "arms");
		bot_yamlout_map(y, 0);
		for (int a = 0; a < BOT_NARMS; a++) {
			const struct bot_stats *st = &c->arm[a];

			if (!st->n)
				continue;
			bot_yamlout_str(y, bot_arm_name(a));
			bot_yamlout_map(y, 1);
			key_u64(y, "n", st->n);
			bot_yamlout_str(y, "bins");
			bot_yamlout_seq(y, 1);
			for (uint32_t b = 0; b < st->nbins; b++) {
				bot_yamlout_seq(y, 1);
				bot_yamlout_u64(y, st->bins[b].bin);
				bot_yamlout_u64(y, st->bins[b].count);
				bot_yamlout_end(y);
			}
			bot_yamlout_end(y);
			bot_yamlout_end(y);
		}
		bot_yamlout_end(y);
		bot_yamlout_end(y);
	}
	return doc_end(y, v, &n, text, len, err, errlen);
}

/* ---- import ------------------------------------------------------------ */

/* A key's value: the next event, a decimal integer in [lo, hi] (what names
 * it). 0, or -1 with the reader failed. */
static int next_u64(struct bot_yamlin *r, struct bot_yamlin_ev *ev, const char *what,
		    uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (bot_yamlin_next(r, ev) < 0)
		return -1;
	return bot_yamlin_u64(r, ev, what, 0, lo, hi, out);
}

/* 16 hex digits (either case), nothing else. */
static int hex16(struct bot_yamlin *r, const struct bot_yamlin_ev *ev, const char *what,
		 int prefix, uint64_t *out)
{
	const char *p = ev->s;
	uint64_t v = 0;

	if (ev->type != BOT_YAMLIN_SCALAR)
		return bot_yamlin_fail(r, ev, "%s: want a quoted hex string", what);
	if (prefix && (p[0] != '0' || (p[1] != 'x' && p[1] != 'X')))
		goto bad;
	p += prefix ? 2 : 0;
	if (strlen(p) != 16)
		goto bad;
	for (int i = 0; i < 16; i++) {
		int c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			goto bad;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
bad:
	return bot_yamlin_fail(r, ev, "%s: '%.64s' is not %s16 hex digits", what, ev->s,
			       prefix ? "0x and " : "");
}

/* A prior entry: a decimal number >= 0 ([0-9]+(.[0-9]+)?([eE][+-]?[0-9]+)?)
 * that is a finite f32. */
static int f32_value(struct bot_yamlin *r, const struct bot_yamlin_ev *ev, const char *what,
		     float *out)
{
	const char *p = ev->s;
	int nonzero = 0;	/* a digit of the mantissa is not 0 */
	char *end;
	float f;

	if (ev->type != BOT_YAMLIN_SCALAR)
		return bot_yamlin_fail(r, ev, "%s: want a number", what);
	if (*p < '0' || *p > '9')
		goto bad;
	while (*p >= '0' && *p <= '9')
		nonzero |= *p++ != '0';
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			goto bad;
		while (*p >= '0' && *p <= '9')
			nonzero |= *p++ != '0';
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (*p < '0' || *p > '9')
			goto bad;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (*p)
		goto bad;
	f = strtof(ev->s, &end);
	if (*end)
		goto bad;
	if (!isfinite(f))
		return bot_yamlin_fail(r, ev, "%s: '%.64s' is beyond a float (at most about "
				       "3.4e38)", what, ev->s);
	if (f == 0 && nonzero)
		return bot_yamlin_fail(r, ev, "%s: '%.64s' is too small for a float (it would be "
				       "stored as 0; at least about 1.4e-45, or 0)", what, ev->s);
	*out = f;
	return 0;
bad:
	return bot_yamlin_fail(r, ev, "%s: '%.64s' is not a finite number >= 0 (omit "
			       "unsupported arms)", what, ev->s);
}

/* The next event, which must be a mapping key or the mapping's end. */
static int next_key(struct bot_yamlin *r, struct bot_yamlin_ev *ev)
{
	if (bot_yamlin_next(r, ev) < 0)
		return -1;
	if (ev->type == BOT_YAMLIN_END || (ev->type == BOT_YAMLIN_SCALAR && ev->is_key))
		return 0;
	return bot_yamlin_fail(r, ev, "want a key");
}

static int want(struct bot_yamlin *r, struct bot_yamlin_ev *ev, enum bot_yamlin_type t,
		const char *what)
{
	if (bot_yamlin_next(r, ev) < 0)
		return -1;
	if (ev->type != t)
		return bot_yamlin_fail(r, ev, "%s: want a %s", what,
				       t == BOT_YAMLIN_MAP ? "mapping" :
				       t == BOT_YAMLIN_SEQ ? "sequence" : "scalar");
	return 0;
}

/* arms: {ARM: {n: N, bins: [[q, count], ...]}, ...} into c->arm */
static int read_arm(struct bot_yamlin *r, struct bot_kb_ctx *c, int arm, const char *aname)
{
	struct bot_yamlin_ev ev, at;
	struct bot_stats *st = &c->arm[arm];
	uint64_t n = 0, total = 0;
	int have_n = 0, have_bins = 0;

	if (want(r, &at, BOT_YAMLIN_MAP, aname) < 0)
		return -1;
	for (;;) {
		if (next_key(r, &ev) < 0)
			return -1;
		if (ev.type == BOT_YAMLIN_END)
			break;
		if (!strcmp(ev.s, "n")) {
			if (next_u64(r, &ev, "n", 1, BOT_STATE_MAX_ARM_N, &n) < 0)
				return -1;
			have_n = 1;
		} else if (!strcmp(ev.s, "bins")) {
			int last = -1;

			if (want(r, &ev, BOT_YAMLIN_SEQ, "bins") < 0)
				return -1;
			have_bins = 1;
			for (;;) {
				struct bot_yamlin_ev q, cnt, e;
				uint64_t qv, cv;

				if (bot_yamlin_next(r, &e) < 0)
					return -1;
				if (e.type == BOT_YAMLIN_END)
					break;
				if (e.type != BOT_YAMLIN_SEQ)
					return bot_yamlin_fail(r, &e, "bins: want [bin, count] pairs");
				if (bot_yamlin_scalar(r, "bin", &q) < 0 ||
				    bot_yamlin_u64(r, &q, "bin", 0, 0, BOT_Q_MAX, &qv) < 0)
					return -1;
				if ((int)qv <= last)
					return bot_yamlin_fail(r, &q, "bin %llu: bins not strictly "
							       "ascending", (unsigned long long)qv);
				last = (int)qv;
				if (bot_yamlin_scalar(r, "count", &cnt) < 0 ||
				    bot_yamlin_u64(r, &cnt, "count", 0, 1, UINT32_MAX, &cv) < 0)
					return -1;
				if (bot_yamlin_next(r, &e) < 0)
					return -1;
				if (e.type != BOT_YAMLIN_END)
					return bot_yamlin_fail(r, &e, "bins: want [bin, count] pairs");
				total += cv;
				if (total > BOT_STATE_MAX_ARM_N)
					return bot_yamlin_fail(r, &cnt, "%s: more than 2^40 samples",
							       aname);
				if (bot_stats_add_q(st, (int)qv, (uint32_t)cv) < 0)
					return bot_yamlin_fail(r, &cnt, "out of memory");
			}
		} else {
			return bot_yamlin_fail(r, &ev, "unknown key '%.64s' in an arm (n, bins)",
					       ev.s);
		}
	}
	if (!have_n || !have_bins || !total)
		return bot_yamlin_fail(r, &at, "%s: want n and a non-empty bins (an arm without "
				       "samples is omitted)", aname);
	if (n != total)
		return bot_yamlin_fail(r, &at, "%s: n is %llu but the bins hold %llu samples",
				       aname, (unsigned long long)n, (unsigned long long)total);
	return 0;
}

static int read_prior(struct bot_yamlin *r, struct bot_kb_ctx *c)
{
	struct bot_yamlin_ev ev;

	if (bot_yamlin_next(r, &ev) < 0)
		return -1;
	if (bot_yamlin_is_null(&ev))
		return 0;
	if (ev.type != BOT_YAMLIN_MAP)
		return bot_yamlin_fail(r, &ev, "prior: want a mapping of arm: us, or null");
	c->has_prior = 1;
	for (;;) {
		char what[40];
		int a;

		if (next_key(r, &ev) < 0)
			return -1;
		if (ev.type == BOT_YAMLIN_END)
			return 0;
		a = bot_arm_parse(ev.s);
		if (a < 0)
			return bot_yamlin_fail(r, &ev, "prior: '%.64s' is not an arm (ring/ll, ...)",
					       ev.s);
		if (c->prior[a] >= 0)
			return bot_yamlin_fail(r, &ev, "prior: arm %s given twice", bot_arm_name(a));
		snprintf(what, sizeof(what), "prior %s", bot_arm_name(a));
		if (bot_yamlin_next(r, &ev) < 0 || f32_value(r, &ev, what, &c->prior[a]) < 0)
			return -1;
	}
}

static int key_ok(uint64_t k)
{
	return bot_key_coll(k) < BOT_NCOLL && bot_key_nranks(k) >= 1 && bot_key_nnodes(k) >= 1 &&
	       bot_key_nnodes(k) <= bot_key_nranks(k);
}

/* One context mapping (its MAP event read) into s->kb. */
static int read_context(struct bot_yamlin *r, const struct bot_yamlin_ev *at, struct bot_state *s,
			int first, uint64_t *prev, uint64_t schema, int *saw_summaries)
{
	struct bot_kb_ctx c, *dst;
	struct bot_yamlin_ev ev;
	uint64_t calls = 0, explore = 0, summaries = 0, key = 0;
	int have_key = 0, rc = -1;

	memset(&c, 0, sizeof(c));
	for (int a = 0; a < BOT_NARMS; a++) {
		c.prior[a] = -1.0f;
		bot_stats_init(&c.arm[a]);
	}
	for (;;) {
		if (next_key(r, &ev) < 0)
			goto out;
		if (ev.type == BOT_YAMLIN_END)
			break;
		if (!strcmp(ev.s, "context")) {
			/* informative: section 3's text form of the key */
			if (bot_yamlin_scalar(r, "context", &ev) < 0)
				goto out;
		} else if (!strcmp(ev.s, "key")) {
			if (bot_yamlin_next(r, &ev) < 0 || hex16(r, &ev, "key", 1, &key) < 0)
				goto out;
			if (!key_ok(key)) {
				bot_yamlin_fail(r, &ev, "key %s is not a context (collective, nRanks "
						">= 1, 1 <= nNodes <= nRanks)", ev.s);
				goto out;
			}
			if (!first && key <= *prev) {
				bot_yamlin_fail(r, &ev, "key %s: contexts not in strictly ascending "
						"key order", ev.s);
				goto out;
			}
			have_key = 1;
		} else if (!strcmp(ev.s, "calls")) {
			if (next_u64(r, &ev, "calls", 0, UINT64_MAX, &calls) < 0)
				goto out;
		} else if (!strcmp(ev.s, "explore")) {
			if (next_u64(r, &ev, "explore", 0, UINT64_MAX, &explore) < 0)
				goto out;
		} else if (!strcmp(ev.s, "summaries")) {
			/* schema 2 (formats.md 16); the schema may come later
			 * (then judged at the end) */
			if (schema == 1) {
				bot_yamlin_fail(r, &ev, "unknown key 'summaries' in a context: "
						"schema 1 has none (schema 2 does)");
				goto out;
			}
			if (next_u64(r, &ev, "summaries", 0, UINT64_MAX, &summaries) < 0)
				goto out;
			*saw_summaries = 1;
		} else if (!strcmp(ev.s, "prior")) {
			if (read_prior(r, &c) < 0)
				goto out;
		} else if (!strcmp(ev.s, "arms")) {
			if (bot_yamlin_next(r, &ev) < 0)
				goto out;
			if (ev.type != BOT_YAMLIN_MAP) {
				bot_yamlin_fail(r, &ev, "arms: want a mapping of arm: {n, bins}");
				goto out;
			}
			for (;;) {
				int a;

				if (next_key(r, &ev) < 0)
					goto out;
				if (ev.type == BOT_YAMLIN_END)
					break;
				a = bot_arm_parse(ev.s);
				if (a < 0) {
					bot_yamlin_fail(r, &ev, "arms: '%.64s' is not an arm", ev.s);
					goto out;
				}
				if (c.arm[a].n) {
					bot_yamlin_fail(r, &ev, "arms: arm %s given twice",
							bot_arm_name(a));
					goto out;
				}
				if (read_arm(r, &c, a, bot_arm_name(a)) < 0)
					goto out;
			}
		} else {
			bot_yamlin_fail(r, &ev, "unknown key '%.64s' in a context (context, key, "
					"calls, explore, summaries, prior, arms)", ev.s);
			goto out;
		}
	}
	if (!have_key) {
		bot_yamlin_fail(r, at, "a context without its key");
		goto out;
	}
	dst = bot_kb_get(s->kb, key);
	if (!dst) {
		bot_yamlin_fail(r, at, "out of memory");
		goto out;
	}
	dst->calls = calls;
	if (c.has_prior && bot_kb_set_prior(s->kb, key, c.prior) < 0) {
		bot_yamlin_fail(r, at, "out of memory");
		goto out;
	}
	dst->explore = explore;
	dst->summaries = summaries;
	for (int a = 0; a < BOT_NARMS; a++)
		if (c.arm[a].n && bot_stats_merge(&dst->arm[a], &c.arm[a]) < 0) {
			bot_yamlin_fail(r, at, "out of memory");
			goto out;
		}
	*prev = key;
	rc = 0;
out:
	for (int a = 0; a < BOT_NARMS; a++)
		bot_stats_free(&c.arm[a]);
	return rc;
}

/* read_state's *stage: how far it got, for the message of a failure */
enum { READ_START, READ_SCHEMA3, READ_END };

static int read_state(struct bot_yamlin *r, struct bot_state *s, int *stage)
{
	struct bot_yamlin_ev ev, root;
	uint64_t schema = 0, v, ncontexts = 0;
	size_t n = 0;		/* contexts read */
	int have_fabric = 0, saw_summaries = 0;
	int have_ncontexts = 0;
	unsigned after_ncontexts = 0;	/* the line of a key after it */
	struct bot_yamlin_ev ncev;

	if (bot_yamlin_next(r, &root) < 0)
		return -1;
	if (root.type != BOT_YAMLIN_MAP)
		return bot_yamlin_fail(r, root.type == BOT_YAMLIN_EOF ? NULL : &root,
				       "not a state export (want a mapping with nccl-bot-state: %d; "
				       "1 and 2 still read)", BOT_STATEYAML_SCHEMA);
	for (;;) {
		if (next_key(r, &ev) < 0)
			return -1;
		if (ev.type == BOT_YAMLIN_END)
			break;
		if (have_ncontexts && !after_ncontexts)
			after_ncontexts = ev.line;
		if (!strcmp(ev.s, "nccl-bot-state")) {
			if (next_u64(r, &ev, "nccl-bot-state", 0, UINT32_MAX, &schema) < 0)
				return -1;
			if (schema < 1 || schema > BOT_STATEYAML_SCHEMA)
				return bot_yamlin_version_refused(r, &ev, "schema", schema,
								  BOT_STATEYAML_SCHEMA);
			if (schema >= 3)
				*stage = READ_SCHEMA3;
		} else if (!strcmp(ev.s, "nccl-bot-state-show")) {
			return bot_yamlin_fail(r, &ev, "a `state show` rendering, not an export "
					       "(use `nccl-bot state export`)");
		} else if (!strcmp(ev.s, "fabric")) {
			if (bot_yamlin_scalar(r, "fabric", &ev) < 0)
				return -1;
			if (!bot_state_fabric_ok(ev.s))
				return bot_yamlin_fail(r, &ev, "fabric '%.64s' is not "
						       "[a-z0-9][a-z0-9._-]{0,63}", ev.s);
			strcpy(s->fabric, ev.s);
			have_fabric = 1;
		} else if (!strcmp(ev.s, "rounds")) {
			if (next_u64(r, &ev, "rounds", 0, UINT64_MAX, &s->rounds) < 0)
				return -1;
		} else if (!strcmp(ev.s, "epoch")) {
			if (next_u64(r, &ev, "epoch", 0, UINT64_MAX, &s->epoch) < 0)
				return -1;
		} else if (!strcmp(ev.s, "parent")) {
			if (bot_yamlin_next(r, &ev) < 0 || hex16(r, &ev, "parent", 0, &s->parent) < 0)
				return -1;
		} else if (!strcmp(ev.s, "ledger")) {
			if (bot_yamlin_next(r, &ev) < 0 || hex16(r, &ev, "ledger", 0, &s->ledger) < 0)
				return -1;
		} else if (!strcmp(ev.s, "sources")) {
			if (want(r, &ev, BOT_YAMLIN_SEQ, "sources") < 0)
				return -1;
			for (;;) {
				if (bot_yamlin_next(r, &ev) < 0)
					return -1;
				if (ev.type == BOT_YAMLIN_END)
					break;
				if (hex16(r, &ev, "sources", 0, &v) < 0)
					return -1;
				if (s->nsources && v <= s->src[s->nsources - 1])
					return bot_yamlin_fail(r, &ev, "sources: not strictly ascending");
				if (s->nsources >= BOT_STATE_MAX_SOURCES)
					return bot_yamlin_fail(r, &ev, "sources: more than %u",
							       BOT_STATE_MAX_SOURCES);
				if (bot_state_add_source(s, v) < 0)
					return bot_yamlin_fail(r, &ev, "out of memory");
			}
		} else if (!strcmp(ev.s, "ncontexts")) {
			ncev = ev;
			if (next_u64(r, &ev, "ncontexts", 0, BOT_STATE_MAX_CONTEXTS, &ncontexts) < 0)
				return -1;
			have_ncontexts = 1;
		} else if (!strcmp(ev.s, "contexts")) {
			uint64_t prev = 0;

			if (want(r, &ev, BOT_YAMLIN_SEQ, "contexts") < 0)
				return -1;
			for (;;) {
				if (bot_yamlin_next(r, &ev) < 0)
					return -1;
				if (ev.type == BOT_YAMLIN_END)
					break;
				if (ev.type != BOT_YAMLIN_MAP)
					return bot_yamlin_fail(r, &ev, "contexts: want a mapping per "
							       "context");
				if (n >= BOT_STATE_MAX_CONTEXTS)
					return bot_yamlin_fail(r, &ev, "contexts: more than %u",
							       BOT_STATE_MAX_CONTEXTS);
				if (read_context(r, &ev, s, n == 0, &prev, schema, &saw_summaries) < 0)
					return -1;
				n++;
			}
		} else {
			return bot_yamlin_fail(r, &ev, "unknown key '%.64s' (nccl-bot-state, fabric, "
					       "rounds, parent, ledger, epoch, sources, contexts, "
					       "ncontexts)", ev.s);
		}
	}
	*stage = READ_END;
	if (!schema)
		return bot_yamlin_fail(r, &root, "no nccl-bot-state: %d (1 and 2 still read; not a "
				       "state export)", BOT_STATEYAML_SCHEMA);
	if (schema < 2 && saw_summaries)
		return bot_yamlin_fail(r, &root, "unknown key 'summaries' in a context: schema "
				       "%llu has none (schema 2 does)", (unsigned long long)schema);
	if (schema < 3 && have_ncontexts)
		return bot_yamlin_fail(r, &ncev, "unknown key 'ncontexts': schema %llu has none "
				       "(schema 3 does)", (unsigned long long)schema);
	if (schema >= 3 && !have_ncontexts)
		return bot_yamlin_fail(r, NULL, "no ncontexts: a schema 3 export ends with it: the "
				       "file was cut short (or edited); nothing imported");
	if (schema >= 3 && after_ncontexts)
		return bot_yamlin_fail(r, &ncev, "ncontexts is not the last key (line %u follows "
				       "it): it must end the export, to tell a cut one", after_ncontexts);
	if (schema >= 3 && ncontexts != n)
		return bot_yamlin_fail(r, &ncev, "ncontexts: %llu, but %zu context(s) read: the file "
				       "was cut short (or edited); nothing imported",
				       (unsigned long long)ncontexts, n);
	if (!have_fabric)
		return bot_yamlin_fail(r, &root, "no fabric");
	if (bot_yamlin_next(r, &ev) < 0)
		return -1;
	if (ev.type != BOT_YAMLIN_EOF)
		return bot_yamlin_fail(r, &ev, "more than one document");
	return 0;
}

/* Whether the last line that holds anything but blanks, a comment or the
 * document end marker "..." is "ncontexts: <digits>" (the digits may be
 * quoted), schema 3's last key. Lines break at LF, CR or both, as YAML's
 * do; blanks and a comment after the number do not count. Such a file is
 * whole, so a parse error in it is not said to be a cut. */
static int ends_with_ncontexts(const uint8_t *in, size_t len)
{
	static const char key[] = "ncontexts:";
	size_t end = len, start, i, d;
	uint8_t q;

	for (;;) {
		if (!end)
			return 0;
		/* the line [start, end), without its line break */
		start = end;
		while (start && in[start - 1] != '\n' && in[start - 1] != '\r')
			start--;
		/* a comment starts at a '#' first on the line or after a blank */
		for (i = start; i < end; i++)
			if (in[i] == '#' && (i == start || in[i - 1] == ' ' || in[i - 1] == '\t'))
				break;
		while (i > start && (in[i - 1] == ' ' || in[i - 1] == '\t'))
			i--;
		if (i > start && !(i - start == 3 && !memcmp(in + start, "...", 3))) {
			end = i;
			break;
		}
		end = start ? start - 1 : 0; /* nothing on it: the line before */
	}
	if (end - start <= sizeof(key) - 1 || memcmp(in + start, key, sizeof(key) - 1))
		return 0;
	i = start + sizeof(key) - 1;
	d = i;
	while (i < end && (in[i] == ' ' || in[i] == '\t'))
		i++;
	if (i == d)
		return 0; /* "ncontexts:1" is not the key */
	q = i < end && (in[i] == '"' || in[i] == '\'') ? in[i] : 0;
	if (q) {
		if (end - i < 3 || in[end - 1] != q)
			return 0;
		i++;
		end--;
	}
	for (d = i; i < end; i++)
		if (in[i] < '0' || in[i] > '9')
			return 0;
	return d < end;
}

/* Read from r into out; the state is then checked by the snapshot reader. */
static int import_from(struct bot_yamlin *r, const char *name, struct bot_state *out, char *err,
		       size_t errlen)
{
	struct bot_state chk;
	uint8_t *img;
	size_t len, inlen;
	int stage = READ_START;

	if (bot_state_init(out, "x") < 0) {
		bot_yamlin_free(r);
		return bot_log_errf(err, errlen, "%s: out of memory", name);
	}
	if (read_state(r, out, &stage) < 0) {
		const uint8_t *in = bot_yamlin_input(r, &inlen);
		uint64_t v;

		/* a newer schema's export, refused for what that schema
		 * brought before its nccl-bot-state key: say the schema */
		if (bot_yamlin_newer(r, "nccl-bot-state", "schema", BOT_STATEYAML_SCHEMA, &v))
			stage = READ_START;

		/* a schema 3 export cut short fails wherever the cut fell,
		 * often as a value out of order: say what the tail shows */
		bot_log_errf(err, errlen, "%s%s", bot_yamlin_error(r),
			     stage == READ_SCHEMA3 && !ends_with_ncontexts(in, inlen) ?
			     " (the file does not end with its ncontexts line: cut short?)" : "");
		bot_yamlin_free(r);
		bot_state_free(out);
		return -1;
	}
	bot_yamlin_free(r);
	/* whatever is imported must be a snapshot a reader takes */
	if (bot_state_encode(out, &img, &len, err, errlen) < 0) {
		bot_state_free(out);
		return -1;
	}
	if (bot_state_parse(name, img, len, &chk, err, errlen) < 0) {
		free(img);
		bot_state_free(out);
		return -1;
	}
	free(img);
	bot_state_free(&chk);
	return 0;
}

int bot_stateyaml_import(const char *name, const void *buf, size_t len, struct bot_state *out,
			 char *err, size_t errlen)
{
	struct bot_yamlin *r = bot_yamlin_mem(name, buf, len, &state_limits, err, errlen);

	memset(out, 0, sizeof(*out));
	if (!r)
		return -1;
	return import_from(r, name, out, err, errlen);
}

int bot_stateyaml_import_file(const char *path, struct bot_state *out, char *err, size_t errlen)
{
	struct bot_yamlin *r = bot_yamlin_file(path, &state_limits, (uid_t)-1, err, errlen);

	memset(out, 0, sizeof(*out));
	if (!r)
		return -1;
	return import_from(r, path, out, err, errlen);
}

/* ---- show -------------------------------------------------------------- */

const char *bot_stateyaml_confidence(uint64_t n)
{
	return n >= BOT_STATEYAML_CONF_HIGH ? "high" :
	       n >= BOT_STATEYAML_CONF_MEDIUM ? "medium" : "low";
}

void bot_stateyaml_learned(const struct bot_kb_ctx *c, struct bot_stateyaml_learned *out)
{
	out->best = -1;
	out->best_us = NAN;
	out->best_n = 0;
	out->auto_arm = c->has_prior ? bot_prior_argmin(c->prior) : -1;
	out->auto_us = NAN;
	out->auto_n = 0;
	out->loss_pct = NAN;
	for (int a = 0; a < BOT_NARMS; a++) {
		double us;

		if (!c->arm[a].n)
			continue;
		us = bot_stats_robust_us(&c->arm[a]);
		if (isfinite(us) && (out->best < 0 || us < out->best_us)) {
			out->best = a;
			out->best_us = us;
			out->best_n = c->arm[a].n;
		}
	}
	if (out->auto_arm >= 0 && c->arm[out->auto_arm].n) {
		out->auto_us = bot_stats_robust_us(&c->arm[out->auto_arm]);
		out->auto_n = c->arm[out->auto_arm].n;
		if (out->best >= 0 && out->best_us > 0)
			out->loss_pct = (out->auto_us / out->best_us - 1.0) * 100.0;
	}
}

static void show_context(struct bot_yamlout *y, const struct bot_kb_ctx *c)
{
	struct bot_stateyaml_learned l;

	bot_stateyaml_learned(c, &l);
	ctx_begin(y, c);
	bot_yamlout_str(y, "learned");
	if (l.best >= 0) {
		bot_yamlout_map(y, 1);
		key_str(y, "arm", bot_arm_name(l.best));
		key_num(y, "robust_us", l.best_us, 6);
		key_u64(y, "samples", l.best_n);
		key_str(y, "confidence", bot_stateyaml_confidence(l.best_n));
		bot_yamlout_end(y);
	} else {
		bot_yamlout_null(y);
	}
	bot_yamlout_str(y, "auto");
	if (l.auto_arm >= 0) {
		bot_yamlout_map(y, 1);
		key_str(y, "arm", bot_arm_name(l.auto_arm));
		bot_yamlout_str(y, "prior_us");
		bot_yamlout_f32(y, c->prior[l.auto_arm]);
		key_num(y, "robust_us", l.auto_us, 6);
		key_u64(y, "samples", l.auto_n);
		bot_yamlout_end(y);
	} else {
		bot_yamlout_null(y);
	}
	key_num(y, "auto_loss_pct", l.loss_pct, 4);
	bot_yamlout_str(y, "arms");
	bot_yamlout_map(y, 0);
	for (int a = 0; a < BOT_NARMS; a++) {
		const struct bot_stats *s = &c->arm[a];
		double loc, sd, msd;
		uint64_t used, out;

		if (!s->n)
			continue;
		bot_stats_robust_mean(s, &loc, &sd, &msd, &used);
		out = s->n - used;
		bot_yamlout_str(y, bot_arm_name(a));
		bot_yamlout_map(y, 1);
		key_u64(y, "samples", s->n);
		key_num(y, "robust_us", bot_us_from_q(loc), 6);
		key_num(y, "median_us", bot_us_from_q(bot_stats_median_q(s)), 6);
		key_num(y, "spread_octaves", sd / BOT_Q_PER_OCTAVE, 4);
		key_num(y, "mean_spread_octaves", msd / BOT_Q_PER_OCTAVE, 4);
		key_u64(y, "used", used);
		/* the planner's evidence (policies/policy.c, arm_summary) */
		key_u64(y, "evidence", used > out ? used - out : 0);
		bot_yamlout_end(y);
	}
	bot_yamlout_end(y);
	bot_yamlout_end(y);
}

int bot_stateyaml_show(const struct bot_state *s, const char *snap, const char *file,
		       char **text, size_t *len, char *err, size_t errlen)
{
	struct bot_yamlout *y;
	const struct bot_kb_ctx **v;
	size_t n;

	if (doc_begin(s, &y, &v, &n, text, len, err, errlen) < 0)
		return -1;
	key_u64(y, "nccl-bot-state-show", BOT_STATESHOW_SCHEMA);
	key_str(y, "fabric", s->fabric);
	if (snap && *snap)
		key_str(y, "snapshot", snap);
	if (file)
		key_str(y, "file", file);
	key_hex(y, "parent", s->parent, 0);
	key_u64(y, "epoch", s->epoch);
	key_u64(y, "rounds", s->rounds);
	key_u64(y, "sources", s->nsources);
	bot_yamlout_str(y, "contexts");
	bot_yamlout_seq(y, 0);
	for (size_t i = 0; i < n; i++)
		show_context(y, v[i]);
	return doc_end(y, v, NULL, text, len, err, errlen);
}
