/*
 * state.c - per-fabric learned state: the snapshot codec (state.h,
 * doc/formats.md section 12; writes version 3, reads 1, 2 and 3).
 *
 * The encoder writes contexts in key order and bins in bin order, so one
 * state has one byte string (per format version); the parser accepts
 * exactly that form and nothing else, which makes a snapshot's digest a
 * name for its content. The versions differ only in the header's lineage
 * fields (parent, ledger, epoch, reserved: 32 bytes; v2 on) and each
 * context's words before its histograms: explore (v2 on), summaries (v3).
 * The state directory around snapshots (`current`, publishing, locking) is
 * learn/store.c and learn/lock.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/le.h"
#include "common/errf.h"
#include "common/readall.h"
#include "common/spool.h"
#include "common/state.h"
#include "common/trailer.h"
#include "policies/context.h"

int bot_state_fabric_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 1 || n > BOT_STATE_FABRIC_MAX)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      (i > 0 && (c == '.' || c == '_' || c == '-'))))
			return 0;
	}
	return 1;
}

int bot_state_fabric_reserved(const char *name)
{
	return name && (!strcmp(name, "inbox") || !strcmp(name, "quarantine") ||
			!strcmp(name, "held"));
}

int bot_state_init(struct bot_state *s, const char *fabric)
{
	memset(s, 0, sizeof(*s));
	if (!bot_state_fabric_ok(fabric))
		return -1;
	strcpy(s->fabric, fabric);
	s->kb = bot_kb_new();
	return s->kb ? 0 : -1;
}

void bot_state_free(struct bot_state *s)
{
	if (!s)
		return;
	free(s->src);
	bot_kb_free(s->kb);
	memset(s, 0, sizeof(*s));
}

/* Index of the first source with id >= the given one. */
static size_t lower_bound(const struct bot_state *s, uint64_t id)
{
	size_t lo = 0, hi = s->nsources;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->src[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int bot_state_has_source(const struct bot_state *s, uint64_t id)
{
	size_t i = lower_bound(s, id);

	return i < s->nsources && s->src[i] == id;
}

int bot_state_add_source(struct bot_state *s, uint64_t id)
{
	size_t i = lower_bound(s, id);

	if (i < s->nsources && s->src[i] == id)
		return 0;
	if (s->nsources >= BOT_STATE_MAX_SOURCES)
		return -1;
	if (s->nsources == s->scap) {
		size_t cap = s->scap ? 2 * s->scap : 64;
		uint64_t *n = realloc(s->src, cap * sizeof(*n));

		if (!n)
			return -1;
		s->src = n;
		s->scap = cap;
	}
	memmove(&s->src[i + 1], &s->src[i], (s->nsources - i) * sizeof(*s->src));
	s->src[i] = id;
	s->nsources++;
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return (a > b) - (a < b);
}

int bot_state_add_sources(struct bot_state *s, const uint64_t *ids, size_t n)
{
	uint64_t *add, *out;
	size_t m = 0, i = 0, j = 0, k = 0;

	if (n == 0)
		return 0;
	if (n > BOT_STATE_MAX_SOURCES + (size_t)s->nsources || !(add = malloc(n * sizeof(*add))))
		return -1;
	memcpy(add, ids, n * sizeof(*add));
	qsort(add, n, sizeof(*add), cmp_u64);
	for (size_t x = 0; x < n; x++)	/* unique */
		if (m == 0 || add[x] != add[m - 1])
			add[m++] = add[x];
	out = malloc((s->nsources + m) * sizeof(*out));
	if (!out) {
		free(add);
		return -1;
	}
	while (i < s->nsources || j < m) {
		if (j == m || (i < s->nsources && s->src[i] < add[j]))
			out[k++] = s->src[i++];
		else if (i == s->nsources || add[j] < s->src[i])
			out[k++] = add[j++];
		else {
			out[k++] = s->src[i++];
			j++;
		}
	}
	free(add);
	if (k > BOT_STATE_MAX_SOURCES) {
		free(out);
		return -1;
	}
	free(s->src);
	s->src = out;
	s->nsources = s->scap = k;
	return 0;
}

static uint32_t arm_mask(const struct bot_kb_ctx *c)
{
	uint32_t m = 0;

	for (int a = 0; a < BOT_NARMS; a++)
		if (c->arm[a].nbins)
			m |= 1u << a;
	return m;
}

/* A context record's size before its histograms, per format version. */
static size_t ctx_size(unsigned version)
{
	return version == 1 ? BOT_STATE_CTX_SIZE_V1 : version == 2 ? BOT_STATE_CTX_SIZE_V2 :
	       BOT_STATE_CTX_SIZE;
}

static int cmp_ctx(const void *pa, const void *pb)
{
	const struct bot_kb_ctx *a = *(const struct bot_kb_ctx *const *)pa;
	const struct bot_kb_ctx *b = *(const struct bot_kb_ctx *const *)pb;

	return (a->key > b->key) - (a->key < b->key);
}

int bot_state_encode(const struct bot_state *s, uint8_t **buf, size_t *len, char *err,
		     size_t errlen)
{
	return bot_state_encode_version(s, BOT_STATE_VERSION, buf, len, err, errlen);
}

int bot_state_encode_version(const struct bot_state *s, unsigned version, uint8_t **buf,
			     size_t *len, char *err, size_t errlen)
{
	size_t n = bot_kb_count(s->kb), size, off;
	size_t hdr = version == 1 ? BOT_STATE_HDR_SIZE_V1 : BOT_STATE_HDR_SIZE;
	size_t ctx = ctx_size(version);
	const struct bot_kb_ctx **v = NULL;
	uint8_t *b;

	*buf = NULL;
	*len = 0;
	if (version < 1 || version > BOT_STATE_VERSION)
		return bot_errf(err, errlen, "snapshot format version %u: this build writes 1 to %d",
				version, BOT_STATE_VERSION);
	if (version == 1 && (s->parent || s->ledger || s->epoch))
		return bot_errf(err, errlen, "format version 1 has no parent, ledger or epoch");
	if (!bot_state_fabric_ok(s->fabric))
		return bot_errf(err, errlen, "fabric name '%s' is not [a-z0-9][a-z0-9._-]{0,63}", s->fabric);
	if (n > BOT_STATE_MAX_CONTEXTS || s->nsources > BOT_STATE_MAX_SOURCES)
		return bot_errf(err, errlen, "%zu contexts and %zu sources: over the limits (%u each)", n,
			   s->nsources, BOT_STATE_MAX_CONTEXTS);
	if (n && !(v = malloc(n * sizeof(*v))))
		return bot_errf(err, errlen, "out of memory");
	size = hdr + s->nsources * BOT_STATE_SRC_SIZE + BOT_STATE_TRAILER_SIZE;
	for (size_t i = 0; i < n; i++) {
		v[i] = bot_kb_at(s->kb, i);
		size += ctx;
		if ((version == 1 && v[i]->explore) || (version < 3 && v[i]->summaries)) {
			uint64_t key = v[i]->key;
			const char *what = v[i]->summaries ? "summaries" : "explore";

			free(v);
			return bot_errf(err, errlen, "context %016" PRIx64 ": format version %u has no "
					"%s", key, version, what);
		}
		for (int a = 0; a < BOT_NARMS; a++) {
			if (v[i]->arm[a].n > BOT_STATE_MAX_ARM_N) {
				uint64_t key = v[i]->key;

				free(v);
				return bot_errf(err, errlen, "context %016" PRIx64 " arm %d: more than 2^40 "
					   "samples", key, a);
			}
			if (v[i]->arm[a].nbins)
				size += 4 + 8 * (size_t)v[i]->arm[a].nbins;
		}
	}
	if (size > BOT_STATE_MAX_FILE) {
		free(v);
		return bot_errf(err, errlen, "a snapshot of %zu bytes: over the %u MiB limit", size,
			   BOT_STATE_MAX_FILE >> 20);
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_ctx);
	b = calloc(1, size);
	if (!b) {
		free(v);
		return bot_errf(err, errlen, "out of memory");
	}
	memcpy(b, BOT_STATE_MAGIC, 8);
	bot_le_put32(b + 8, version);
	memcpy(b + 16, s->fabric, strlen(s->fabric));
	bot_le_put64(b + 80, s->rounds);
	bot_le_put32(b + 88, (uint32_t)s->nsources);
	bot_le_put32(b + 92, (uint32_t)n);
	if (version >= 2) {
		bot_le_put64(b + 96, s->parent);
		bot_le_put64(b + 104, s->ledger);
		bot_le_put64(b + 112, s->epoch);
		/* 120: reserved, 0 */
	}
	off = hdr;
	for (size_t i = 0; i < s->nsources; i++, off += BOT_STATE_SRC_SIZE)
		bot_le_put64(b + off, s->src[i]);
	for (size_t i = 0; i < n; i++) {
		const struct bot_kb_ctx *c = v[i];
		uint32_t mask = arm_mask(c);

		bot_le_put64(b + off, c->key);
		bot_le_put64(b + off + 8, c->calls);
		bot_le_put32(b + off + 16, c->has_prior ? 1 : 0);
		bot_le_put32(b + off + 20, mask);
		for (int a = 0; a < BOT_NARMS; a++) {
			float f = c->has_prior ? c->prior[a] : -1.0f;
			uint32_t bits;

			if (!(isfinite(f) && f >= 0))
				f = -1.0f;
			else if (f == 0)
				f = 0.0f;	/* never -0 */
			memcpy(&bits, &f, sizeof(bits));
			bot_le_put32(b + off + 24 + 4 * (size_t)a, bits);
		}
		if (version >= 2)
			bot_le_put64(b + off + 108, c->explore);
		if (version >= 3)
			bot_le_put64(b + off + 116, c->summaries);
		off += ctx;
		for (int a = 0; a < BOT_NARMS; a++) {
			const struct bot_stats *st = &c->arm[a];

			if (!(mask & (1u << a)))
				continue;
			bot_le_put32(b + off, st->nbins);
			off += 4;
			for (uint32_t k = 0; k < st->nbins; k++, off += 8) {
				bot_le_put32(b + off, st->bins[k].bin);
				bot_le_put32(b + off + 4, st->bins[k].count);
			}
		}
	}
	bot_trailer_put(b, off);
	free(v);
	*buf = b;
	*len = size;
	return 0;
}

/* The records after the header and sources, into out->kb. */
static int parse_contexts(const char *name, const uint8_t *b, size_t end, size_t off,
			  uint32_t nctx, size_t ctx, struct bot_state *out, char *err, size_t errlen)
{
	uint64_t prev = 0;

	for (uint32_t i = 0; i < nctx; i++) {
		uint64_t key, calls;
		uint32_t flags, mask;
		float prior[BOT_NARMS];
		struct bot_kb_ctx *c;

		if (end - off < ctx)
			return bot_errf(err, errlen, "%s: context %u at offset %zu: truncated", name, i, off);
		key = bot_le_get64(b + off);
		calls = bot_le_get64(b + off + 8);
		flags = bot_le_get32(b + off + 16);
		mask = bot_le_get32(b + off + 20);
		if (i > 0 && key <= prev)
			return bot_errf(err, errlen, "%s: context %u at offset %zu: keys not strictly "
				   "ascending", name, i, off);
		prev = key;
		if (bot_key_coll(key) >= BOT_NCOLL || bot_key_nranks(key) < 1 ||
		    bot_key_nnodes(key) < 1 || bot_key_nnodes(key) > bot_key_nranks(key))
			return bot_errf(err, errlen, "%s: context %u at offset %zu: key %016" PRIx64
					" is not a context (collective %u, %u nodes, %u ranks)", name,
					i, off, key, bot_key_coll(key), bot_key_nnodes(key),
					bot_key_nranks(key));
		if (flags & ~1u)
			return bot_errf(err, errlen, "%s: context %u at offset %zu: unknown flags 0x%x",
				   name, i, off + 16, flags);
		if (mask >> BOT_NARMS)
			return bot_errf(err, errlen, "%s: context %u at offset %zu: arm mask 0x%x names "
				   "arms over 20", name, i, off + 20, mask);
		for (int a = 0; a < BOT_NARMS; a++) {
			uint32_t bits = bot_le_get32(b + off + 24 + 4 * (size_t)a);

			memcpy(&prior[a], &bits, sizeof(bits));
			if (!(prior[a] == -1.0f || (isfinite(prior[a]) && prior[a] >= 0 &&
						    !(bits >> 31))) ||
			    (!(flags & 1) && prior[a] != -1.0f))
				return bot_errf(err, errlen, "%s: context %u at offset %zu: prior entry %d "
					   "is not -1 or a finite value >= 0%s", name, i,
					   off + 24 + 4 * (size_t)a, a,
					   flags & 1 ? "" : " (or set without a prior row)");
		}
		c = bot_kb_get(out->kb, key);
		if (!c)
			return bot_errf(err, errlen, "%s: out of memory", name);
		c->calls = calls;
		if (ctx >= BOT_STATE_CTX_SIZE_V2)
			c->explore = bot_le_get64(b + off + 108);
		if (ctx >= BOT_STATE_CTX_SIZE)
			c->summaries = bot_le_get64(b + off + 116);
		if (flags & 1) {
			memcpy(c->prior, prior, sizeof(prior));
			c->has_prior = 1;
		}
		off += ctx;
		for (int a = 0; a < BOT_NARMS; a++) {
			uint32_t nb, last = 0;
			uint64_t total = 0;

			if (!(mask & (1u << a)))
				continue;
			if (end - off < 4)
				return bot_errf(err, errlen, "%s: context %u arm %d at offset %zu: truncated",
					   name, i, a, off);
			nb = bot_le_get32(b + off);
			off += 4;
			if (nb < 1 || nb > BOT_Q_MAX + 1)
				return bot_errf(err, errlen, "%s: context %u arm %d at offset %zu: %u bins "
					   "(want 1..%d)", name, i, a, off - 4, nb, BOT_Q_MAX + 1);
			if ((end - off) / 8 < nb)
				return bot_errf(err, errlen, "%s: context %u arm %d at offset %zu: truncated",
					   name, i, a, off);
			for (uint32_t k = 0; k < nb; k++, off += 8) {
				uint32_t q = bot_le_get32(b + off), cnt = bot_le_get32(b + off + 4);

				if (q > BOT_Q_MAX || (k > 0 && q <= last) || cnt == 0)
					return bot_errf(err, errlen, "%s: context %u arm %d bin %u at offset "
						   "%zu: %s", name, i, a, k, off,
						   q > BOT_Q_MAX ? "bin over 2560" :
						   cnt == 0 ? "zero count" : "bins not strictly ascending");
				last = q;
				total += cnt;
				if (total > BOT_STATE_MAX_ARM_N)
					return bot_errf(err, errlen, "%s: context %u arm %d: more than 2^40 "
						   "samples", name, i, a);
				if (bot_stats_add_q(&c->arm[a], (int)q, cnt) < 0)
					return bot_errf(err, errlen, "%s: out of memory", name);
			}
		}
	}
	if (off != end)
		return bot_errf(err, errlen, "%s: %zu bytes after the last context (offset %zu)", name,
			   end - off, off);
	return 0;
}

int bot_state_parse_header(const char *name, const uint8_t *b, size_t len,
			   struct bot_state_hdr *h, char *err, size_t errlen)
{
	uint32_t flags;
	size_t hdr;

	memset(h, 0, sizeof(*h));
	if (len < BOT_STATE_HDR_SIZE_V1 || memcmp(b, BOT_STATE_MAGIC, 8))
		return bot_errf(err, errlen, len >= 8 && !memcmp(b, BOT_STATE_MAGIC, 8) ?
				"%s: %zu bytes: shorter than a header" :
				"%s: not an nccl-bot state snapshot (bad magic)", name, len);
	h->version = bot_le_get32(b + 8);
	if (h->version < 1 || h->version > BOT_STATE_VERSION)
		return bot_errf(err, errlen, "%s: snapshot format version %u; this build reads "
				"versions 1 to %d", name, h->version, BOT_STATE_VERSION);
	hdr = h->version == 1 ? BOT_STATE_HDR_SIZE_V1 : BOT_STATE_HDR_SIZE;
	if (len < hdr)
		return bot_errf(err, errlen, "%s: %zu bytes: shorter than a header", name, len);
	flags = bot_le_get32(b + 12);
	if (flags)
		return bot_errf(err, errlen, "%s: offset 12: unknown flags 0x%x", name, flags);
	memcpy(h->fabric, b + 16, BOT_STATE_FABRIC_MAX);
	h->fabric[BOT_STATE_FABRIC_MAX] = 0;
	for (size_t i = strlen(h->fabric); i < BOT_STATE_FABRIC_MAX; i++)
		if (b[16 + i])
			return bot_errf(err, errlen, "%s: offset 16: fabric name not NUL padded", name);
	if (!bot_state_fabric_ok(h->fabric))
		return bot_errf(err, errlen, "%s: offset 16: fabric name '%s' is not "
			   "[a-z0-9][a-z0-9._-]{0,63}", name, h->fabric);
	h->rounds = bot_le_get64(b + 80);
	h->nsources = bot_le_get32(b + 88);
	h->ncontexts = bot_le_get32(b + 92);
	if (h->nsources > BOT_STATE_MAX_SOURCES || h->ncontexts > BOT_STATE_MAX_CONTEXTS)
		return bot_errf(err, errlen, "%s: %u sources, %u contexts: over the limits (%u each)",
			   name, h->nsources, h->ncontexts, BOT_STATE_MAX_CONTEXTS);
	if (h->version >= 2) {
		h->parent = bot_le_get64(b + 96);
		h->ledger = bot_le_get64(b + 104);
		h->epoch = bot_le_get64(b + 112);
		if (bot_le_get64(b + 120))
			return bot_errf(err, errlen, "%s: offset 120: reserved bytes not zero", name);
	}
	return 0;
}

int bot_state_parse(const char *name, const uint8_t *b, size_t len, struct bot_state *out,
		    char *err, size_t errlen)
{
	struct bot_state_hdr h;
	size_t end, off, hdr;

	memset(out, 0, sizeof(*out));
	if (len > BOT_STATE_MAX_FILE)
		return bot_errf(err, errlen, "%s: %zu bytes: over the %u MiB limit", name, len,
			   BOT_STATE_MAX_FILE >> 20);
	if (len < BOT_STATE_HDR_SIZE_V1 + BOT_STATE_TRAILER_SIZE)
		return bot_errf(err, errlen, "%s: %zu bytes: shorter than a header and trailer", name, len);
	if (memcmp(b, BOT_STATE_MAGIC, 8))
		return bot_errf(err, errlen, "%s: not an nccl-bot state snapshot (bad magic)", name);
	h.version = bot_le_get32(b + 8);
	if (h.version < 1 || h.version > BOT_STATE_VERSION)
		return bot_errf(err, errlen, "%s: snapshot format version %u; this build reads "
				"versions 1 to %d", name, h.version, BOT_STATE_VERSION);
	hdr = h.version == 1 ? BOT_STATE_HDR_SIZE_V1 : BOT_STATE_HDR_SIZE;
	if (len < hdr + BOT_STATE_TRAILER_SIZE)
		return bot_errf(err, errlen, "%s: %zu bytes: shorter than a header and trailer", name, len);
	end = len - BOT_STATE_TRAILER_SIZE;
	if (!bot_trailer_ok(b, end, NULL))
		return bot_errf(err, errlen, "%s: checksum mismatch (the file is damaged or truncated)",
			   name);
	if (bot_state_parse_header(name, b, end, &h, err, errlen) < 0)
		return -1;
	if ((end - hdr) / BOT_STATE_SRC_SIZE < h.nsources)
		return bot_errf(err, errlen, "%s: %u sources do not fit in %zu bytes", name,
				h.nsources, len);
	if (bot_state_init(out, h.fabric) < 0)
		return bot_errf(err, errlen, "%s: out of memory", name);
	out->version = h.version;
	out->rounds = h.rounds;
	out->parent = h.parent;
	out->ledger = h.ledger;
	out->epoch = h.epoch;
	off = hdr;
	if (h.nsources && !(out->src = malloc(h.nsources * sizeof(*out->src)))) {
		bot_state_free(out);
		return bot_errf(err, errlen, "%s: out of memory", name);
	}
	out->scap = h.nsources;
	for (uint32_t i = 0; i < h.nsources; i++, off += BOT_STATE_SRC_SIZE) {
		uint64_t id = bot_le_get64(b + off);

		if (i > 0 && id <= out->src[i - 1]) {
			bot_state_free(out);
			return bot_errf(err, errlen, "%s: source %u at offset %zu: ids not strictly "
				   "ascending", name, i, off);
		}
		out->src[i] = id;
		out->nsources++;
	}
	if (parse_contexts(name, b, end, off, h.ncontexts,
			   ctx_size(h.version), out, err,
			   errlen) < 0) {
		bot_state_free(out);
		return -1;
	}
	return 0;
}

int bot_state_read_file(const char *path, struct bot_state *out, char *err, size_t errlen)
{
	uint8_t *b;
	size_t len;
	/* O_NONBLOCK: a FIFO must fail the regular-file check, not hang the open */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int rc;

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return bot_errf(err, errlen, "%s: %s", bot_path_shown(path), strerror(errno));
	if (bot_read_whole(fd, path, BOT_STATE_MAX_FILE, &b, &len, err, errlen) < 0)
		return -1;
	rc = bot_state_parse(path, b, len, out, err, errlen);
	free(b);
	return rc;
}

void bot_state_snap_name(const uint8_t *buf, size_t len, char name[BOT_STATE_NAME_MAX])
{
	snprintf(name, BOT_STATE_NAME_MAX, "snap-%016" PRIx64 ".nbs", bot_digest64(buf, len));
}

void bot_state_snap_name_of(uint64_t digest, char name[BOT_STATE_NAME_MAX])
{
	snprintf(name, BOT_STATE_NAME_MAX, "snap-%016" PRIx64 ".nbs", digest);
}

uint64_t bot_state_snap_digest(const char *name)
{
	uint64_t d = 0;

	if (!name || !bot_state_snap_name_ok(name))
		return 0;
	for (int i = 5; i < 21; i++)
		d = d << 4 | (uint64_t)(name[i] <= '9' ? name[i] - '0' : name[i] - 'a' + 10);
	return d;
}

int bot_state_snap_name_ok(const char *s)
{
	if (strlen(s) != 25 || strncmp(s, "snap-", 5) || strcmp(s + 21, ".nbs"))
		return 0;
	for (int i = 5; i < 21; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

