/*
 * kb.c - the knowledge base: per context key, AUTO's prior and per-arm
 * statistics.
 *
 * Contexts are allocated one by one (pointers stay valid while the kb
 * lives) and listed in insertion order, which is the deterministic iteration
 * order of bot_kb_at(). An open-addressing table (linear probing, power of
 * two size, at most half full) maps bot_mix64(key) to the index. A second
 * table chains together the contexts of one collective and one
 * bytes-per-rank bucket across scales (bot_kb_peer_*), so that a policy can
 * borrow AUTO's measured error from other node counts without scanning the
 * whole kb. A clone copies everything, chains included, so plans on a clone
 * are bit-identical.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb.h"

#define NONE UINT32_MAX

/* uint64 key -> uint32 value; val 0 marks an empty slot (stored value + 1). */
struct map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

struct bot_kb {
	struct bot_kb_ctx **ctx;
	uint32_t *peer_next;	/* per context: next context of the same peer group */
	size_t n, cap;
	struct map index;	/* key -> context index */
	struct map peers;	/* peer group -> most recently added context */
};

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static uint32_t map_get(const struct map *m, uint64_t key)
{
	size_t mask, i;

	if (!m->cap)
		return NONE;
	mask = m->cap - 1;
	for (i = bot_mix64(key) & mask; m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			return m->vals[i] - 1;
	return NONE;
}

static void map_put_nogrow(struct map *m, uint64_t key, uint32_t val)
{
	size_t mask = m->cap - 1, i;

	for (i = bot_mix64(key) & mask; m->vals[i]; i = (i + 1) & mask)
		if (m->keys[i] == key) {
			m->vals[i] = val + 1;
			return;
		}
	m->keys[i] = key;
	m->vals[i] = val + 1;
	m->n++;
}

/* Make room for one more key. */
static int map_reserve(struct map *m)
{
	struct map nm;

	if (2 * (m->n + 1) <= m->cap)
		return 0;
	nm.cap = m->cap ? 2 * m->cap : 16;
	nm.n = 0;
	nm.keys = malloc(nm.cap * sizeof(*nm.keys));
	nm.vals = calloc(nm.cap, sizeof(*nm.vals));
	if (!nm.keys || !nm.vals) {
		free(nm.keys);
		free(nm.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i])
			map_put_nogrow(&nm, m->keys[i], m->vals[i] - 1);
	map_free(m);
	*m = nm;
	return 0;
}

static int map_copy(struct map *dst, const struct map *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->cap)
		return 0;
	dst->keys = malloc(src->cap * sizeof(*dst->keys));
	dst->vals = malloc(src->cap * sizeof(*dst->vals));
	if (!dst->keys || !dst->vals) {
		map_free(dst);
		return -1;
	}
	memcpy(dst->keys, src->keys, src->cap * sizeof(*dst->keys));
	memcpy(dst->vals, src->vals, src->cap * sizeof(*dst->vals));
	dst->cap = src->cap;
	dst->n = src->n;
	return 0;
}

unsigned bot_kb_bpr_bucket(uint64_t key)
{
	unsigned b = bot_key_bucket(key), coll = bot_key_coll(key);
	uint32_t r = bot_key_nranks(key);

	if ((coll == BOT_COLL_ALLGATHER || coll == BOT_COLL_REDUCESCATTER) && r > 1)
		return bot_size_bucket(bot_bucket_lo(b) / r);
	return b;
}

static uint64_t peer_group(uint64_t key)
{
	return ((uint64_t)bot_key_coll(key) << 8) | bot_kb_bpr_bucket(key);
}

struct bot_kb *bot_kb_new(void)
{
	return calloc(1, sizeof(struct bot_kb));
}

static void ctx_free(struct bot_kb_ctx *c)
{
	if (!c)
		return;
	for (int a = 0; a < BOT_NARMS; a++)
		bot_stats_free(&c->arm[a]);
	free(c);
}

void bot_kb_free(struct bot_kb *kb)
{
	if (!kb)
		return;
	for (size_t i = 0; i < kb->n; i++)
		ctx_free(kb->ctx[i]);
	free(kb->ctx);
	free(kb->peer_next);
	map_free(&kb->index);
	map_free(&kb->peers);
	free(kb);
}

struct bot_kb *bot_kb_clone(const struct bot_kb *kb)
{
	struct bot_kb *c;

	if (!kb || !(c = bot_kb_new()))
		return NULL;
	if (kb->n) {
		c->ctx = calloc(kb->n, sizeof(*c->ctx));
		c->peer_next = malloc(kb->n * sizeof(*c->peer_next));
		if (!c->ctx || !c->peer_next)
			goto fail;
		c->cap = kb->n;
		memcpy(c->peer_next, kb->peer_next, kb->n * sizeof(*c->peer_next));
	}
	for (size_t i = 0; i < kb->n; i++) {
		const struct bot_kb_ctx *s = kb->ctx[i];
		struct bot_kb_ctx *d = calloc(1, sizeof(*d));

		if (!d)
			goto fail;
		c->ctx[c->n++] = d;
		d->key = s->key;
		d->has_prior = s->has_prior;
		d->calls = s->calls;
		d->explore = s->explore;
		d->summaries = s->summaries;
		memcpy(d->prior, s->prior, sizeof(d->prior));
		for (int a = 0; a < BOT_NARMS; a++)
			if (bot_stats_copy(&d->arm[a], &s->arm[a]) < 0)
				goto fail;
	}
	if (map_copy(&c->index, &kb->index) < 0 || map_copy(&c->peers, &kb->peers) < 0)
		goto fail;
	return c;
fail:
	bot_kb_free(c);
	return NULL;
}

const struct bot_kb_ctx *bot_kb_find(const struct bot_kb *kb, uint64_t key)
{
	uint32_t i;

	if (!kb)
		return NULL;
	i = map_get(&kb->index, key);
	return i == NONE ? NULL : kb->ctx[i];
}

size_t bot_kb_index(const struct bot_kb *kb, uint64_t key)
{
	uint32_t i;

	if (!kb)
		return BOT_KB_NONE;
	i = map_get(&kb->index, key);
	return i == NONE ? BOT_KB_NONE : i;
}

struct bot_kb_ctx *bot_kb_get(struct bot_kb *kb, uint64_t key)
{
	struct bot_kb_ctx *c;
	uint32_t i, head;
	uint64_t g;

	if (!kb)
		return NULL;
	i = map_get(&kb->index, key);
	if (i != NONE)
		return kb->ctx[i];
	if (kb->n >= NONE - 1)
		return NULL;
	if (kb->n == kb->cap) {
		size_t cap = kb->cap ? 2 * kb->cap : 16;
		struct bot_kb_ctx **nc = realloc(kb->ctx, cap * sizeof(*nc));
		uint32_t *np;

		if (!nc)
			return NULL;
		kb->ctx = nc;
		np = realloc(kb->peer_next, cap * sizeof(*np));
		if (!np)
			return NULL;
		kb->peer_next = np;
		kb->cap = cap;
	}
	if (map_reserve(&kb->index) < 0 || map_reserve(&kb->peers) < 0)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->key = key;
	for (int a = 0; a < BOT_NARMS; a++) {
		c->prior[a] = -1.0f;
		bot_stats_init(&c->arm[a]);
	}
	g = peer_group(key);
	head = map_get(&kb->peers, g);
	kb->peer_next[kb->n] = head;
	map_put_nogrow(&kb->peers, g, (uint32_t)kb->n);
	map_put_nogrow(&kb->index, key, (uint32_t)kb->n);
	kb->ctx[kb->n++] = c;
	return c;
}

int bot_kb_set_prior(struct bot_kb *kb, uint64_t key, const float prior[BOT_NARMS])
{
	struct bot_kb_ctx *c;

	if (!prior || !(c = bot_kb_get(kb, key)))
		return -1;
	for (int a = 0; a < BOT_NARMS; a++)
		c->prior[a] = isfinite(prior[a]) && prior[a] > 0 ? prior[a] : prior[a] == 0 ? 0.0f : -1.0f;
	c->has_prior = 1;
	return 0;
}

/* Row a before row b? Bit patterns as u32, arm by arm (endian-free). */
static int row_less(const float *a, const float *b)
{
	for (int i = 0; i < BOT_NARMS; i++) {
		uint32_t x, y;

		memcpy(&x, &a[i], sizeof(x));
		memcpy(&y, &b[i], sizeof(y));
		if (x != y)
			return x < y;
	}
	return 0;
}

int bot_kb_offer_prior(struct bot_kb *kb, uint64_t key, const float prior[BOT_NARMS])
{
	struct bot_kb_ctx *c;
	float row[BOT_NARMS];

	if (!prior || !(c = bot_kb_get(kb, key)))
		return -1;
	for (int a = 0; a < BOT_NARMS; a++)
		row[a] = isfinite(prior[a]) && prior[a] > 0 ? prior[a] : prior[a] == 0 ? 0.0f : -1.0f;
	if (!c->has_prior || row_less(row, c->prior))
		memcpy(c->prior, row, sizeof(row));
	c->has_prior = 1;
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

int bot_kb_add_calls(struct bot_kb *kb, uint64_t key, uint64_t calls)
{
	struct bot_kb_ctx *c = bot_kb_get(kb, key);

	if (!c)
		return -1;
	c->calls = sat_add(c->calls, calls);
	return 0;
}

/* calls x (ref_summaries / ref_calls), rounded down, saturating. */
static uint64_t at_ratio(uint64_t calls, uint64_t ref_calls, uint64_t ref_summaries)
{
	unsigned __int128 s = (unsigned __int128)calls * ref_summaries / ref_calls;

	return s > UINT64_MAX ? UINT64_MAX : (uint64_t)s;
}

int bot_kb_add_counts(struct bot_kb *kb, uint64_t key, uint64_t calls, uint64_t summaries)
{
	struct bot_kb_ctx *c = bot_kb_get(kb, key);

	if (!c)
		return -1;
	if (calls && summaries && c->calls && !c->summaries)
		c->summaries = at_ratio(c->calls, calls, summaries);
	else if (calls && !summaries && c->calls && c->summaries)
		summaries = at_ratio(calls, c->calls, c->summaries);
	c->calls = sat_add(c->calls, calls);
	c->summaries = sat_add(c->summaries, summaries);
	return 0;
}

void bot_kb_set_calls(struct bot_kb_ctx *c, uint64_t calls)
{
	if (c->summaries && c->calls) {
		c->summaries = at_ratio(calls, c->calls, c->summaries);
		if (!c->summaries)
			calls = 0;
	}
	c->calls = calls;
}

double bot_kb_calls_per_comm(const struct bot_kb_ctx *c)
{
	if (!c || !c->summaries)
		return 0;
	return (double)c->calls * 65536.0 / (double)c->summaries;
}

int bot_kb_merge(struct bot_kb *dst, const struct bot_kb *src)
{
	int halved = 0;

	for (size_t i = 0; src && i < src->n; i++) {
		const struct bot_kb_ctx *s = src->ctx[i];
		struct bot_kb_ctx *d;

		if (bot_kb_add_counts(dst, s->key, s->calls, s->summaries) < 0)
			return -1;
		if (s->has_prior && bot_kb_offer_prior(dst, s->key, s->prior) < 0)
			return -1;
		d = bot_kb_get(dst, s->key);
		if (s->explore > d->explore)
			d->explore = s->explore;
		for (int a = 0; a < BOT_NARMS; a++) {
			int rc = bot_stats_merge(&d->arm[a], &s->arm[a]);

			if (rc < 0)
				return -1;
			halved += rc;
		}
	}
	return halved;
}

static int cmp_ctx_key(const void *pa, const void *pb)
{
	const struct bot_kb_ctx *a = *(const struct bot_kb_ctx *const *)pa;
	const struct bot_kb_ctx *b = *(const struct bot_kb_ctx *const *)pb;

	return (a->key > b->key) - (a->key < b->key);
}

struct bot_kb *bot_kb_sorted(const struct bot_kb *kb)
{
	struct bot_kb *out = bot_kb_new();
	const struct bot_kb_ctx **v = NULL;
	size_t n = bot_kb_count(kb);

	if (!out || (n && !(v = malloc(n * sizeof(*v)))))
		goto fail;
	for (size_t i = 0; i < n; i++)
		v[i] = kb->ctx[i];
	if (n)
		qsort(v, n, sizeof(*v), cmp_ctx_key);
	for (size_t i = 0; i < n; i++) {
		struct bot_kb_ctx *d = bot_kb_get(out, v[i]->key);

		if (!d)
			goto fail;
		d->has_prior = v[i]->has_prior;
		d->calls = v[i]->calls;
		d->explore = v[i]->explore;
		d->summaries = v[i]->summaries;
		memcpy(d->prior, v[i]->prior, sizeof(d->prior));
		for (int a = 0; a < BOT_NARMS; a++)
			if (bot_stats_copy(&d->arm[a], &v[i]->arm[a]) < 0)
				goto fail;
	}
	free(v);
	return out;
fail:
	free(v);
	bot_kb_free(out);
	return NULL;
}

int bot_kb_add_us(struct bot_kb *kb, uint64_t key, int arm, double us)
{
	struct bot_kb_ctx *c;
	int q;

	if (arm < 0 || arm >= BOT_NARMS || !(us > 0) || !isfinite(us))
		return -1;
	q = bot_q_from_us(us);
	if (q < 0 || !(c = bot_kb_get(kb, key)))
		return -1;
	return bot_stats_add_q(&c->arm[arm], q, 1);
}

void bot_kb_decay(struct bot_kb *kb, uint32_t num, uint32_t den, uint64_t nonce)
{
	if (!kb)
		return;
	for (size_t i = 0; i < kb->n; i++)
		for (int a = 0; a < BOT_NARMS; a++)
			bot_stats_decay(&kb->ctx[i]->arm[a], num, den,
					bot_mix64(bot_mix64(nonce ^ kb->ctx[i]->key) + (uint64_t)a));
}

size_t bot_kb_count(const struct bot_kb *kb)
{
	return kb ? kb->n : 0;
}

const struct bot_kb_ctx *bot_kb_at(const struct bot_kb *kb, size_t i)
{
	return kb && i < kb->n ? kb->ctx[i] : NULL;
}

size_t bot_kb_peer_first(const struct bot_kb *kb, uint64_t key)
{
	uint32_t i;

	if (!kb)
		return BOT_KB_NONE;
	i = map_get(&kb->peers, peer_group(key));
	return i == NONE ? BOT_KB_NONE : i;
}

size_t bot_kb_peer_next(const struct bot_kb *kb, size_t i)
{
	if (!kb || i >= kb->n || kb->peer_next[i] == NONE)
		return BOT_KB_NONE;
	return kb->peer_next[i];
}
