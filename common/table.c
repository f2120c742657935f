/*
 * table.c - step-table encoder and decoder (doc/formats.md section 8).
 *
 * The text is "NBT1.<digest hex>.<base64url payload>"; the payload is a
 * little-endian header, shapes, entries and scale corrections. Both
 * directions work on a caller-owned struct bot_table and allocate nothing:
 * the rank-side library decodes into a static table at comm init, tools
 * encode from one they filled. Integer operations only.
 *
 * The decoder checks, in order: syntax and size, the format version in the
 * prefix, the digest over the payload bytes, the version byte, then every
 * field and the canonical order. A table that does not decode is the same
 * on every rank (same bytes), except for a version this build does not know,
 * which the caller must treat as fatal (bot_table_err_fatal()).
 */
#include <string.h>

#include "common/le.h"
#include "common/table.h"
#include "policies/context.h"

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const char *bot_table_strerror(int err)
{
	switch (err) {
	case BOT_TABLE_OK:
		return "ok";
	case BOT_TABLE_ESYNTAX:
		return "not a step table (want NBT1.<16 hex>.<base64url>)";
	case BOT_TABLE_EDIGEST:
		return "digest does not match the payload";
	case BOT_TABLE_EVERSION:
		return "step-table format version unknown to this build";
	case BOT_TABLE_ESIZE:
		return "step table over the size budget";
	case BOT_TABLE_EFORMAT:
		return "payload malformed or not canonical";
	case BOT_TABLE_EINVAL:
		return "invalid table contents";
	}
	return "unknown error";
}

void bot_table_init(struct bot_table *t, int policy, uint64_t seed)
{
	t->version = BOT_TABLE_VERSION;
	t->policy = (uint8_t)policy;
	t->flags = 0;
	t->min_bytes_log2 = 20;
	t->seed = seed;
	t->allow = 0;
	t->nshapes = 0;
	t->nentries = 0;
	t->ncorr = 0;
	t->digest = 0;
}

int bot_table_shape(struct bot_table *t, uint32_t nranks, uint32_t nnodes)
{
	if (nnodes > 65535)
		nnodes = 65535;
	for (unsigned i = 0; i < t->nshapes; i++)
		if (t->shapes[i].nranks == nranks && t->shapes[i].nnodes == nnodes)
			return (int)i;
	if (t->nshapes >= BOT_TABLE_MAX_SHAPES)
		return -1;
	t->shapes[t->nshapes].nranks = nranks;
	t->shapes[t->nshapes].nnodes = (uint16_t)nnodes;
	return t->nshapes++;
}

/* ---- ordering ---------------------------------------------------------- */

static int shape_cmp(const struct bot_table_shape *a, const struct bot_table_shape *b)
{
	if (a->nranks != b->nranks)
		return a->nranks < b->nranks ? -1 : 1;
	if (a->nnodes != b->nnodes)
		return a->nnodes < b->nnodes ? -1 : 1;
	return 0;
}

static uint32_t entry_key(const struct bot_table_entry *e)
{
	return ((uint32_t)e->shape << 16) | ((uint32_t)e->coll << 8) | e->bucket;
}

static uint32_t corr_key(const struct bot_table_corr *c)
{
	return ((uint32_t)c->coll << 16) | ((uint32_t)c->arm << 8) | c->bpr_log2;
}

/* Insertion sorts: tables are built once per step, and n is a few
 * thousand at most; an in-place sort needs no allocation. Shell gaps keep
 * the worst case reasonable. */
static const unsigned gaps[] = { 701, 301, 132, 57, 23, 10, 4, 1 };

static void sort_entries(struct bot_table_entry *v, unsigned n)
{
	for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		unsigned gap = gaps[g];

		for (unsigned i = gap; i < n; i++) {
			struct bot_table_entry x = v[i];
			unsigned j = i;

			while (j >= gap && entry_key(&v[j - gap]) > entry_key(&x)) {
				v[j] = v[j - gap];
				j -= gap;
			}
			v[j] = x;
		}
	}
}

static void sort_corr(struct bot_table_corr *v, unsigned n)
{
	for (unsigned g = 0; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		unsigned gap = gaps[g];

		for (unsigned i = gap; i < n; i++) {
			struct bot_table_corr x = v[i];
			unsigned j = i;

			while (j >= gap && corr_key(&v[j - gap]) > corr_key(&x)) {
				v[j] = v[j - gap];
				j -= gap;
			}
			v[j] = x;
		}
	}
}

int bot_table_normalize(struct bot_table *t)
{
	uint8_t order[BOT_TABLE_MAX_SHAPES], rank[BOT_TABLE_MAX_SHAPES];
	struct bot_table_shape s[BOT_TABLE_MAX_SHAPES];
	unsigned n = t->nshapes;

	if (n > BOT_TABLE_MAX_SHAPES || t->nentries > BOT_TABLE_MAX_ENTRIES ||
	    t->ncorr > BOT_TABLE_MAX_CORR)
		return BOT_TABLE_EINVAL;
	for (unsigned i = 0; i < n; i++)
		order[i] = (uint8_t)i;
	for (unsigned i = 1; i < n; i++) {
		uint8_t x = order[i];
		unsigned j = i;

		while (j > 0 && shape_cmp(&t->shapes[order[j - 1]], &t->shapes[x]) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = x;
	}
	for (unsigned i = 0; i < n; i++) {
		s[i] = t->shapes[order[i]];
		rank[order[i]] = (uint8_t)i;
	}
	memcpy(t->shapes, s, n * sizeof(s[0]));
	for (unsigned i = 0; i < t->nentries; i++) {
		if (t->entries[i].shape >= n)
			return BOT_TABLE_EINVAL;
		t->entries[i].shape = rank[t->entries[i].shape];
	}
	sort_entries(t->entries, t->nentries);
	sort_corr(t->corr, t->ncorr);
	for (unsigned i = 1; i < n; i++)
		if (shape_cmp(&t->shapes[i - 1], &t->shapes[i]) == 0)
			return BOT_TABLE_EINVAL;
	for (unsigned i = 1; i < t->nentries; i++)
		if (entry_key(&t->entries[i - 1]) == entry_key(&t->entries[i]))
			return BOT_TABLE_EINVAL;
	for (unsigned i = 1; i < t->ncorr; i++)
		if (corr_key(&t->corr[i - 1]) == corr_key(&t->corr[i]))
			return BOT_TABLE_EINVAL;
	return 0;
}

/* ---- validation shared by both directions ------------------------------ */

static int arm_ok(unsigned arm)
{
	return arm < BOT_NARMS || arm == BOT_ARM_AUTO;
}

/* A plan as formats.md section 5 allows it: arms valid, nprobe <= 4,
 * ranges non-empty, within 0..256, disjoint and ascending (canonical). */
static int plan_ok(const struct bot_plan *p)
{
	unsigned prev_hi = 0;

	if (!arm_ok(p->exploit) || p->nchannels > BOT_TABLE_MAX_NCHANNELS ||
	    p->nprobe > BOT_MAX_PROBES)
		return 0;
	for (unsigned i = 0; i < p->nprobe; i++) {
		const struct bot_probe *r = &p->probe[i];

		if (!arm_ok(r->arm) || r->lo >= r->hi || r->hi > BOT_PROBE_BUCKETS || r->lo < prev_hi)
			return 0;
		prev_hi = r->hi;
	}
	return 1;
}

static int header_ok(const struct bot_table *t)
{
	return t->version == BOT_TABLE_VERSION && (t->flags & ~BOT_TABLE_F_KNOWN) == 0 &&
	       t->min_bytes_log2 <= 63 && (t->allow >> BOT_NARMS) == 0 &&
	       t->nshapes <= BOT_TABLE_MAX_SHAPES && t->nentries <= BOT_TABLE_MAX_ENTRIES &&
	       t->ncorr <= BOT_TABLE_MAX_CORR;
}

/* Every field valid and everything in canonical order. */
static int table_ok(const struct bot_table *t)
{
	if (!header_ok(t))
		return 0;
	for (unsigned i = 0; i < t->nshapes; i++) {
		if (t->shapes[i].nranks == 0 || t->shapes[i].nnodes == 0)
			return 0;
		if (i > 0 && shape_cmp(&t->shapes[i - 1], &t->shapes[i]) >= 0)
			return 0;
	}
	for (unsigned i = 0; i < t->nentries; i++) {
		const struct bot_table_entry *e = &t->entries[i];

		if (e->shape >= t->nshapes || e->coll >= BOT_NCOLL || !plan_ok(&e->plan))
			return 0;
		if (i > 0 && entry_key(&t->entries[i - 1]) >= entry_key(e))
			return 0;
	}
	for (unsigned i = 0; i < t->ncorr; i++) {
		const struct bot_table_corr *c = &t->corr[i];

		if (c->coll >= BOT_NCOLL || c->arm >= BOT_NARMS || c->bpr_log2 > 63)
			return 0;
		if (i > 0 && corr_key(&t->corr[i - 1]) >= corr_key(c))
			return 0;
	}
	return 1;
}

/* ---- sizes ------------------------------------------------------------- */

static size_t payload_len(unsigned nshapes, unsigned nentries, unsigned ncorr)
{
	return BOT_TABLE_HDR_SIZE + (size_t)nshapes * BOT_TABLE_SHAPE_SIZE +
	       (size_t)nentries * BOT_TABLE_ENTRY_SIZE + (size_t)ncorr * BOT_TABLE_CORR_SIZE;
}

static size_t b64_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

static size_t text_len(unsigned nshapes, unsigned nentries, unsigned ncorr)
{
	return BOT_TABLE_HEAD_LEN + b64_len(payload_len(nshapes, nentries, ncorr));
}

size_t bot_table_encoded_len(const struct bot_table *t)
{
	return text_len(t->nshapes, t->nentries, t->ncorr);
}

int bot_table_fit(struct bot_table *t, size_t max_text)
{
	unsigned keep;

	if (max_text == 0 || max_text > BOT_TABLE_MAX_TEXT)
		max_text = BOT_TABLE_MAX_TEXT;
	if (text_len(t->nshapes, 0, t->ncorr) > max_text)
		return BOT_TABLE_ESIZE;
	keep = t->nentries;
	while (keep > 0 && text_len(t->nshapes, keep, t->ncorr) > max_text)
		keep--;
	{
		int dropped = t->nentries - keep;

		t->nentries = (uint16_t)keep;
		return dropped;
	}
}

/* ---- encoder ------------------------------------------------------------ */

static void b64_put(const uint8_t *in, size_t n, char *out)
{
	size_t i = 0;

	for (; i + 3 <= n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*out++ = b64url[v >> 18];
		*out++ = b64url[(v >> 12) & 63];
		*out++ = b64url[(v >> 6) & 63];
		*out++ = b64url[v & 63];
	}
	if (n - i == 1) {
		uint32_t v = (uint32_t)in[i] << 16;

		*out++ = b64url[v >> 18];
		*out++ = b64url[(v >> 12) & 63];
	} else if (n - i == 2) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;

		*out++ = b64url[v >> 18];
		*out++ = b64url[(v >> 12) & 63];
		*out++ = b64url[(v >> 6) & 63];
	}
}

/* Serialise the payload into p (payload_len() bytes). */
static void payload_put(const struct bot_table *t, uint8_t *p)
{
	uint8_t *q;

	memset(p, 0, payload_len(t->nshapes, t->nentries, t->ncorr));
	p[0] = t->version;
	p[1] = t->policy;
	p[2] = t->flags;
	p[3] = t->min_bytes_log2;
	bot_le_put64(p + 4, t->seed);
	bot_le_put32(p + 12, t->allow);
	bot_le_put16(p + 16, t->nshapes);
	bot_le_put16(p + 18, t->nentries);
	bot_le_put16(p + 20, t->ncorr);
	q = p + BOT_TABLE_HDR_SIZE;
	for (unsigned i = 0; i < t->nshapes; i++, q += BOT_TABLE_SHAPE_SIZE) {
		bot_le_put32(q, t->shapes[i].nranks);
		bot_le_put16(q + 4, t->shapes[i].nnodes);
	}
	for (unsigned i = 0; i < t->nentries; i++, q += BOT_TABLE_ENTRY_SIZE) {
		const struct bot_table_entry *e = &t->entries[i];

		q[0] = e->shape;
		q[1] = e->coll;
		q[2] = e->bucket;
		q[3] = e->plan.exploit;
		q[4] = e->plan.nchannels;
		q[5] = e->plan.nprobe;
		for (unsigned k = 0; k < e->plan.nprobe; k++) {
			q[6 + 3 * k] = e->plan.probe[k].arm;
			q[7 + 3 * k] = (uint8_t)e->plan.probe[k].lo;
			q[8 + 3 * k] = (uint8_t)(e->plan.probe[k].hi - 1);
		}
	}
	for (unsigned i = 0; i < t->ncorr; i++, q += BOT_TABLE_CORR_SIZE) {
		q[0] = t->corr[i].coll;
		q[1] = t->corr[i].arm;
		q[2] = t->corr[i].bpr_log2;
		bot_le_put32(q + 4, t->corr[i].q16);
	}
}

static void hex64(uint64_t v, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--, v >>= 4)
		out[i] = hex[v & 15];
}

long bot_table_encode(const struct bot_table *t, char *out, size_t cap)
{
	size_t plen, tlen;
	uint8_t *p;

	if (!table_ok(t))
		return BOT_TABLE_EINVAL;
	plen = payload_len(t->nshapes, t->nentries, t->ncorr);
	tlen = BOT_TABLE_HEAD_LEN + b64_len(plen);
	if (tlen > BOT_TABLE_MAX_TEXT || tlen + 1 > cap)
		return BOT_TABLE_ESIZE;
	/*
	 * No scratch buffer: serialise the payload into the tail of out, then
	 * expand base64 from the front. Group k reads input at off + 3k and
	 * writes output at 22 + 4k; with off = tlen + 1 - plen, which is about
	 * 23 + plen / 3, every write lands before the next unread input byte.
	 */
	p = (uint8_t *)out + (tlen + 1 - plen);
	payload_put(t, p);
	memcpy(out, BOT_TABLE_PREFIX, 5);
	hex64(bot_digest64(p, plen), out + 5);
	out[21] = '.';
	b64_put(p, plen, out + BOT_TABLE_HEAD_LEN);
	out[tlen] = '\0';
	return (long)tlen;
}

/* ---- decoder ------------------------------------------------------------ */

static int b64_val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

/* Decode n base64url characters into out; returns the byte count or -1 for
 * a bad character, an impossible length, or non-zero trailing bits (so
 * every payload has one encoding). */
static long b64_get(const char *in, size_t n, uint8_t *out)
{
	size_t o = 0, i = 0;
	uint32_t acc = 0;

	if (n % 4 == 1)
		return -1;
	for (; i < n; i++) {
		int v = b64_val((unsigned char)in[i]);

		if (v < 0)
			return -1;
		acc = acc << 6 | (uint32_t)v;
		if (i % 4 == 3) {
			out[o++] = (uint8_t)(acc >> 16);
			out[o++] = (uint8_t)(acc >> 8);
			out[o++] = (uint8_t)acc;
			acc = 0;
		}
	}
	if (n % 4 == 2) {
		if (acc & 0xf)
			return -1;
		out[o++] = (uint8_t)(acc >> 4);
	} else if (n % 4 == 3) {
		if (acc & 0x3)
			return -1;
		out[o++] = (uint8_t)(acc >> 10);
		out[o++] = (uint8_t)(acc >> 2);
	}
	return (long)o;
}

static int hex_val(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static int all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

/* Parse the payload p (n bytes, digest already checked) into t. */
static int payload_get(const uint8_t *p, size_t n, struct bot_table *t)
{
	const uint8_t *q;

	if (n < BOT_TABLE_HDR_SIZE)
		return BOT_TABLE_EFORMAT;
	if (p[0] != BOT_TABLE_VERSION)
		return BOT_TABLE_EVERSION;
	t->version = p[0];
	t->policy = p[1];
	t->flags = p[2];
	t->min_bytes_log2 = p[3];
	t->seed = bot_le_get64(p + 4);
	t->allow = bot_le_get32(p + 12);
	t->nshapes = (uint16_t)bot_le_get16(p + 16);
	t->nentries = (uint16_t)bot_le_get16(p + 18);
	t->ncorr = (uint16_t)bot_le_get16(p + 20);
	if (bot_le_get16(p + 22) != 0 || !header_ok(t) ||
	    payload_len(t->nshapes, t->nentries, t->ncorr) != n)
		return BOT_TABLE_EFORMAT;
	q = p + BOT_TABLE_HDR_SIZE;
	for (unsigned i = 0; i < t->nshapes; i++, q += BOT_TABLE_SHAPE_SIZE) {
		if (bot_le_get16(q + 6) != 0)
			return BOT_TABLE_EFORMAT;
		t->shapes[i].nranks = bot_le_get32(q);
		t->shapes[i].nnodes = (uint16_t)bot_le_get16(q + 4);
	}
	for (unsigned i = 0; i < t->nentries; i++, q += BOT_TABLE_ENTRY_SIZE) {
		struct bot_table_entry *e = &t->entries[i];

		e->shape = q[0];
		e->coll = q[1];
		e->bucket = q[2];
		memset(&e->plan, 0, sizeof(e->plan));
		e->plan.exploit = q[3];
		e->plan.nchannels = q[4];
		e->plan.nprobe = q[5];
		if (e->plan.nprobe > BOT_MAX_PROBES)
			return BOT_TABLE_EFORMAT;
		for (unsigned k = 0; k < e->plan.nprobe; k++) {
			e->plan.probe[k].arm = q[6 + 3 * k];
			e->plan.probe[k].lo = q[7 + 3 * k];
			e->plan.probe[k].hi = (uint16_t)(q[8 + 3 * k] + 1);
		}
		/* unused probe slots and the reserved bytes must be zero */
		if (!all_zero(q + 6 + 3 * e->plan.nprobe, 14 - 3 * (size_t)e->plan.nprobe))
			return BOT_TABLE_EFORMAT;
	}
	for (unsigned i = 0; i < t->ncorr; i++, q += BOT_TABLE_CORR_SIZE) {
		if (q[3] != 0)
			return BOT_TABLE_EFORMAT;
		t->corr[i].coll = q[0];
		t->corr[i].arm = q[1];
		t->corr[i].bpr_log2 = q[2];
		t->corr[i].q16 = bot_le_get32(q + 4);
	}
	return table_ok(t) ? BOT_TABLE_OK : BOT_TABLE_EFORMAT;
}

int bot_table_decode(const char *text, size_t len, struct bot_table *t)
{
	uint64_t digest = 0;
	long plen;

	if (len > BOT_TABLE_MAX_TEXT)
		return BOT_TABLE_ESIZE;
	if (len < 5 || memcmp(text, "NBT", 3) != 0)
		return BOT_TABLE_ESYNTAX;
	/* "NBT<digits>." with any version other than ours, however many digits
	 * and whatever follows: another build's table, refused by name (a
	 * later format may change everything after the first dot) */
	if (text[3] != '1' || text[4] != '.') {
		size_t i = 3;

		while (i < len && text[i] >= '0' && text[i] <= '9')
			i++;
		if (i > 3 && i < len && text[i] == '.')
			return BOT_TABLE_EVERSION;
		return BOT_TABLE_ESYNTAX;
	}
	if (len < BOT_TABLE_HEAD_LEN)
		return BOT_TABLE_ESYNTAX;
	for (int i = 5; i < 21; i++) {
		int v = hex_val((unsigned char)text[i]);

		if (v < 0)
			return BOT_TABLE_ESYNTAX;
		digest = digest << 4 | (uint64_t)v;
	}
	if (text[21] != '.')
		return BOT_TABLE_ESYNTAX;
	plen = b64_get(text + BOT_TABLE_HEAD_LEN, len - BOT_TABLE_HEAD_LEN, t->raw);
	if (plen < 0)
		return BOT_TABLE_ESYNTAX;
	if (bot_digest64(t->raw, (size_t)plen) != digest)
		return BOT_TABLE_EDIGEST;
	t->digest = digest;
	return payload_get(t->raw, (size_t)plen, t);
}
