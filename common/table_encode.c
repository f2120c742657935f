/*
 * table_encode.c - the step-table encoder, the tools' half of common/table.h
 * (doc/formats.md section 8): building a table, putting it in canonical
 * order, fitting it to the size budget and encoding it. Tools link both
 * halves; the rank-side library links only table_decode.c.
 *
 * The text is "NBT3.<digest hex>.<base64url payload>" (NBT1, NBT2 for a
 * version 1, 2 table); the payload is a
 * little-endian header, shapes, entries and scale corrections. Works on a
 * caller-owned struct bot_table and allocates nothing.
 */
#include <string.h>

#include "common/le.h"
#include "common/table.h"
#include "policies/context.h"

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

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

/* ---- canonical order ---------------------------------------------------- */

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

			while (j >= gap && bot_table_entry_key(&v[j - gap]) > bot_table_entry_key(&x)) {
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

			while (j >= gap && bot_table_corr_key(&v[j - gap]) > bot_table_corr_key(&x)) {
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

		while (j > 0 && bot_table_shape_cmp(&t->shapes[order[j - 1]], &t->shapes[x]) > 0) {
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
		if (bot_table_shape_cmp(&t->shapes[i - 1], &t->shapes[i]) == 0)
			return BOT_TABLE_EINVAL;
	for (unsigned i = 1; i < t->nentries; i++)
		if (bot_table_entry_key(&t->entries[i - 1]) == bot_table_entry_key(&t->entries[i]))
			return BOT_TABLE_EINVAL;
	for (unsigned i = 1; i < t->ncorr; i++)
		if (bot_table_corr_key(&t->corr[i - 1]) == bot_table_corr_key(&t->corr[i]))
			return BOT_TABLE_EINVAL;
	return 0;
}

/* ---- sizes ------------------------------------------------------------- */

static size_t b64_len(size_t n)
{
	return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
}

static size_t text_len(unsigned nshapes, unsigned nentries, unsigned ncorr)
{
	return BOT_TABLE_HEAD_LEN + b64_len(bot_table_payload_len(nshapes, nentries, ncorr));
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

/* Serialise the payload into p (bot_table_payload_len() bytes). */
static void payload_put(const struct bot_table *t, uint8_t *p)
{
	uint8_t *q;

	memset(p, 0, bot_table_payload_len(t->nshapes, t->nentries, t->ncorr));
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

	if (!bot_table_valid(t))
		return BOT_TABLE_EINVAL;
	plen = bot_table_payload_len(t->nshapes, t->nentries, t->ncorr);
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
	memcpy(out, "NBT0.", 5);
	out[3] = (char)('0' + t->version);	/* 1..3: bot_table_valid checked it */
	hex64(bot_digest64(p, plen), out + 5);
	out[21] = '.';
	b64_put(p, plen, out + BOT_TABLE_HEAD_LEN);
	out[tlen] = '\0';
	return (long)tlen;
}
