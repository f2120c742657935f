/*
 * table_decode.c - the step-table decoder, the rank-side half of
 * common/table.h (doc/formats.md section 8): libnccl-tuner-bot.so links this
 * file and not table_encode.c.
 *
 * The decoder checks, in order: syntax and size, the format version in the
 * prefix, the digest over the payload bytes, the version byte, then every
 * field and the canonical order. It fills a caller-owned struct bot_table
 * (static in the .so) and allocates nothing; integer operations only. A
 * table that does not decode is the same on every rank (same bytes), except
 * for a version this build does not know and a prefix that does not name
 * its payload's version, which the caller must treat as fatal
 * (bot_table_err_fatal()).
 */
#include <string.h>

#include "common/le.h"
#include "common/table.h"
#include "policies/context.h"

const char *bot_table_strerror(int err)
{
	switch (err) {
	case BOT_TABLE_OK:
		return "ok";
	case BOT_TABLE_ESYNTAX:
		return "not a step table (want NBT3.<16 hex>.<base64url>; NBT1. and NBT2. still "
		       "read)";
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
	case BOT_TABLE_EPREFIX:
		return "its prefix does not name its payload's format version (the text was edited "
		       "or damaged after it was compiled)";
	}
	return "unknown error";
}

/* ---- validation (the encoder checks its input with it too) ----------- */

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
	return t->version >= BOT_TABLE_VERSION_MIN && t->version <= BOT_TABLE_VERSION &&
	       (t->flags & ~BOT_TABLE_F_KNOWN) == 0 &&
	       t->min_bytes_log2 <= 63 && (t->allow >> BOT_NARMS) == 0 &&
	       t->nshapes <= BOT_TABLE_MAX_SHAPES && t->nentries <= BOT_TABLE_MAX_ENTRIES &&
	       t->ncorr <= BOT_TABLE_MAX_CORR;
}

int bot_table_valid(const struct bot_table *t)
{
	if (!header_ok(t))
		return 0;
	for (unsigned i = 0; i < t->nshapes; i++) {
		if (t->shapes[i].nranks == 0 || t->shapes[i].nnodes == 0)
			return 0;
		if (i > 0 && bot_table_shape_cmp(&t->shapes[i - 1], &t->shapes[i]) >= 0)
			return 0;
	}
	for (unsigned i = 0; i < t->nentries; i++) {
		const struct bot_table_entry *e = &t->entries[i];

		if (e->shape >= t->nshapes || e->coll >= BOT_NCOLL || !plan_ok(&e->plan))
			return 0;
		if (i > 0 && bot_table_entry_key(&t->entries[i - 1]) >= bot_table_entry_key(e))
			return 0;
	}
	for (unsigned i = 0; i < t->ncorr; i++) {
		const struct bot_table_corr *c = &t->corr[i];

		if (c->coll >= BOT_NCOLL || c->arm >= BOT_NARMS || c->bpr_log2 > 63)
			return 0;
		if (i > 0 && bot_table_corr_key(&t->corr[i - 1]) >= bot_table_corr_key(c))
			return 0;
	}
	return 1;
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
	if (p[0] < BOT_TABLE_VERSION_MIN || p[0] > BOT_TABLE_VERSION)
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
	    bot_table_payload_len(t->nshapes, t->nentries, t->ncorr) != n)
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
	return bot_table_valid(t) ? BOT_TABLE_OK : BOT_TABLE_EFORMAT;
}

int bot_table_decode(const char *text, size_t len, struct bot_table *t)
{
	uint64_t digest = 0;
	long plen;

	if (len < 5 || memcmp(text, "NBT", 3) != 0)
		return len > BOT_TABLE_MAX_TEXT ? BOT_TABLE_ESIZE : BOT_TABLE_ESYNTAX;
	/* "NBT<digits>." with any version other than those read here, however
	 * many digits and whatever follows: another build's table, refused by
	 * name (a later format may change everything after the first dot) */
	if (text[3] < '0' + BOT_TABLE_VERSION_MIN || text[3] > '0' + BOT_TABLE_VERSION ||
	    text[4] != '.') {
		size_t i = 3;

		while (i < len && text[i] >= '0' && text[i] <= '9')
			i++;
		if (i > 3 && i < len && text[i] == '.')
			return BOT_TABLE_EVERSION;
		return len > BOT_TABLE_MAX_TEXT ? BOT_TABLE_ESIZE : BOT_TABLE_ESYNTAX;
	}
	/* the size budget after the version: a newer build's table over this
	 * build's budget (a later one may allow more) is another build's
	 * table, which fails init, never a quiet fall back to the prior */
	if (len > BOT_TABLE_MAX_TEXT)
		return BOT_TABLE_ESIZE;
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
	{
		int rc = payload_get(t->raw, (size_t)plen, t);

		/* the prefix's digit names the payload's version byte: a
		 * prefix read here over a payload of another version (one
		 * this build does not know included) was edited */
		if (rc == BOT_TABLE_EVERSION ||
		    (rc == 0 && t->version != (uint8_t)(text[3] - '0')))
			return BOT_TABLE_EPREFIX;
		return rc;
	}
}
