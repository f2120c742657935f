/*
 * delta.c - the delta file codec (common/delta.h, doc/formats.md section
 * 13, format v1): header packing, the identity digest, the canonical name,
 * the canonical record order, the encoder and the all-or-nothing reader.
 *
 * Records are section 9's, packed and checked by common/spool_codec.c; a
 * delta adds a 512-byte header saying whose step and node they came from.
 * The encoder refuses what the reader would refuse, so every file the
 * harvest writes reads back; the reader trusts nothing, since a delta
 * travels through directories other people can write.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/delta.h"
#include "common/errf.h"
#include "common/le.h"
#include "common/readall.h"
#include "common/spool.h"
#include "common/state.h"
#include "common/trailer.h"
#include "policies/context.h"

#define TRAILER BOT_SPOOL_TRAILER_SIZE
#define ID_FROM 16	/* the identity block: header bytes 16..391 ... */
#define ID_TO 392
#define ID_ZERO 328	/* ... with 328..391 (counts and times) zeroed */

/* String fields: offset in the header (each field BOT_DELTA_STR bytes),
 * name for messages, rule, and the most characters: 63 (a NUL at least),
 * or the whole field for the fabric (formats.md section 12's names, as the
 * state's header holds them). */
enum str_rule { R_NAME, R_JOB, R_FABRIC, R_ACCOUNT };
_Static_assert(BOT_STATE_FABRIC_MAX == BOT_DELTA_FABRIC_MAX &&
	       BOT_DELTA_FABRIC_MAX == BOT_DELTA_STR,
	       "every fabric a state holds fits a delta's fabric field whole");

static const struct str_field {
	size_t off;
	const char *what;
	enum str_rule rule;
	size_t max;
} str_fields[] = {
	{ 16, "cluster", R_NAME, BOT_DELTA_STR - 1 },
	{ 80, "job", R_JOB, BOT_DELTA_STR - 1 },
	{ 144, "fabric", R_FABRIC, BOT_DELTA_FABRIC_MAX },
	{ 208, "node", R_NAME, BOT_DELTA_STR - 1 },
	{ 392, "account", R_ACCOUNT, BOT_DELTA_STR - 1 },
};

static const char *rule_text(enum str_rule r)
{
	switch (r) {
	case R_NAME:
		return "[A-Za-z0-9._-]{1,63}";
	case R_JOB:
		return "[A-Za-z0-9_+-]{1,63}";
	case R_FABRIC:
		return "[a-z0-9][a-z0-9._-]{0,63}";
	case R_ACCOUNT:
		break;
	}
	return "[A-Za-z0-9._-]{0,63}";
}

static int in_set(int c, const char *extra)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr(extra, c));
}

static int str_ok(const char *s, const struct str_field *f)
{
	enum str_rule r = f->rule;
	size_t n = strlen(s);

	if (n > f->max)
		return 0;
	if (r == R_FABRIC)
		return bot_state_fabric_ok(s);
	if (n == 0)
		return r == R_ACCOUNT;
	for (size_t i = 0; i < n; i++)
		if (!in_set((unsigned char)s[i], r == R_JOB ? "_+-" : "._-"))
			return 0;
	return 1;
}

/* The header's string field for a table entry. */
static const char *str_of(const struct bot_delta_hdr *h, size_t i)
{
	switch (i) {
	case 0:
		return h->cluster;
	case 1:
		return h->job;
	case 2:
		return h->fabric;
	case 3:
		return h->node;
	}
	return h->account;
}

static int step_ok(uint32_t s)
{
	return s <= 0xfffffff0u || s == BOT_DELTA_STEP_BATCH || s == BOT_DELTA_STEP_INTERACTIVE ||
	       s == BOT_DELTA_STEP_EXTERN;
}

/* The build id: printable ASCII, NUL padded (all 16 bytes may be used). */
static int build_id_ok(const char *b)
{
	size_t n = strnlen(b, BOT_SPOOL_BUILD_ID_SIZE);

	for (size_t i = 0; i < n; i++)
		if (b[i] < 0x20 || b[i] > 0x7e)
			return 0;
	return 1;
}

int bot_delta_hdr_check(const struct bot_delta_hdr *h, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(str_fields) / sizeof(str_fields[0]); i++) {
		const char *s = str_of(h, i);

		if (memchr(s, 0, str_fields[i].max + 1) == NULL)
			return bot_errf(err, errlen, "%s: not NUL-terminated", str_fields[i].what);
		if (!str_ok(s, &str_fields[i]))
			return bot_errf(err, errlen, "%s '%.*s' is not %s", str_fields[i].what,
					(int)str_fields[i].max, s, rule_text(str_fields[i].rule));
	}
	/* the state directory's own directories (formats.md section 14): no
	 * fabric's state can be written there, so the compactor failed the
	 * fabric on every run, the delta kept in the inbox (until 2026-12-05) */
	if (bot_state_fabric_reserved(h->fabric))
		return bot_errf(err, errlen, "fabric '%s' is not a fabric name " BOT_STATE_RESERVED_WHY,
				h->fabric);
	if (memchr(h->build_id, 0, sizeof(h->build_id)) == NULL || !build_id_ok(h->build_id))
		return bot_errf(err, errlen, "build id is not printable ASCII");
	if (h->flags & ~(uint32_t)BOT_DELTA_F_ALL)
		return bot_errf(err, errlen, "unknown flags 0x%x", h->flags);
	if ((h->flags & BOT_DELTA_F_ACCOUNT) && !h->account[0])
		return bot_errf(err, errlen, "account trusted (flag bit4) but empty");
	if (!step_ok(h->step))
		return bot_errf(err, errlen, "step id 0x%x is neither 0..0xfffffff0 nor batch, "
				"interactive or extern", h->step);
	if (h->array_job == 0 && h->array_task != BOT_DELTA_NONE)
		return bot_errf(err, errlen, "array task %u without an array job", h->array_task);
	if (h->het_job == 0 && h->het_comp != BOT_DELTA_NONE)
		return bot_errf(err, errlen, "het component %u without a het job", h->het_comp);
	if (h->step_nodes < 1)
		return bot_errf(err, errlen, "step nodes 0 (at least 1)");
	if (h->t_end < h->t_start)
		return bot_errf(err, errlen, "step end %llu before its start %llu",
				(unsigned long long)h->t_end, (unsigned long long)h->t_start);
	if (h->nrecords > BOT_DELTA_MAX_RECORDS)
		return bot_errf(err, errlen, "%llu records, over the limit %u",
				(unsigned long long)h->nrecords, BOT_DELTA_MAX_RECORDS);
	return 0;
}

/* The header image (strings must hold a NUL within their field). */
static void pack_hdr(uint8_t b[BOT_DELTA_HDR_SIZE], const struct bot_delta_hdr *h)
{
	memset(b, 0, BOT_DELTA_HDR_SIZE);
	memcpy(b, BOT_DELTA_MAGIC, 8);
	bot_le_put32(b + 8, BOT_DELTA_VERSION);
	bot_le_put32(b + 12, h->flags);
	for (size_t i = 0; i < sizeof(str_fields) / sizeof(str_fields[0]); i++)
		memcpy(b + str_fields[i].off, str_of(h, i),
		       strnlen(str_of(h, i), str_fields[i].max));
	bot_le_put32(b + 272, h->uid);
	bot_le_put32(b + 276, h->gid);
	bot_le_put32(b + 280, h->restart);
	bot_le_put32(b + 284, h->step);
	bot_le_put32(b + 288, h->array_job);
	bot_le_put32(b + 292, h->array_task);
	bot_le_put32(b + 296, h->het_job);
	bot_le_put32(b + 300, h->het_comp);
	bot_le_put32(b + 328, h->step_nodes);
	bot_le_put32(b + 332, h->step_tasks);
	bot_le_put32(b + 336, h->job_gpus);
	bot_le_put32(b + 340, h->leaf_switches);
	bot_le_put64(b + 344, h->t_start);
	bot_le_put64(b + 352, h->t_end);
	bot_le_put64(b + 360, h->t_harvest);
	bot_le_put32(b + 368, h->files_read);
	bot_le_put32(b + 372, h->files_rejected);
	bot_le_put64(b + 376, h->nrecords);
	bot_le_put64(b + 384, h->table_digest);
	memcpy(b + 456, h->build_id, strnlen(h->build_id, BOT_SPOOL_BUILD_ID_SIZE));
}

static uint64_t identity_of_image(const uint8_t *b)
{
	uint8_t id[ID_TO - ID_FROM];

	memcpy(id, b + ID_FROM, sizeof(id));
	memset(id + (ID_ZERO - ID_FROM), 0, ID_TO - ID_ZERO);
	return bot_digest64(id, sizeof(id));
}

uint64_t bot_delta_identity(const struct bot_delta_hdr *h)
{
	uint8_t b[BOT_DELTA_HDR_SIZE];
	struct bot_delta_hdr c = *h;

	/* strings cut at their field, as packing does */
	c.cluster[BOT_DELTA_STR - 1] = c.job[BOT_DELTA_STR - 1] = 0;
	c.fabric[BOT_DELTA_FABRIC_MAX] = c.node[BOT_DELTA_STR - 1] = 0;
	c.account[BOT_DELTA_STR - 1] = c.build_id[BOT_SPOOL_BUILD_ID_SIZE] = 0;
	pack_hdr(b, &c);
	return identity_of_image(b);
}

/* One part of a name: [A-Za-z0-9_+-] kept, anything else '_'. */
static char *name_part(char *o, const char *s)
{
	for (; *s; s++)
		*o++ = in_set((unsigned char)*s, "_+-") ? *s : '_';
	return o;
}

int bot_delta_name(const struct bot_delta_hdr *h, char name[BOT_DELTA_NAME_MAX])
{
	const char *part[3] = { h->cluster, h->job, h->node };
	char step[16], *o = name;

	name[0] = 0;
	for (int i = 0; i < 3; i++)
		if (!part[i][0] || !memchr(part[i], 0, BOT_DELTA_STR))
			return -1;
	if (h->step == BOT_DELTA_STEP_BATCH)
		strcpy(step, "batch");
	else if (h->step == BOT_DELTA_STEP_EXTERN)
		strcpy(step, "extern");
	else if (h->step == BOT_DELTA_STEP_INTERACTIVE)
		strcpy(step, "interactive");
	else
		snprintf(step, sizeof(step), "%u", h->step);
	/* at most 63 + 1 + 63 + 1 + 10 + 1 + 11 + 1 + 63 + 4 + 1 bytes */
	o = name_part(o, h->cluster);
	*o++ = '.';
	o = name_part(o, h->job);
	o += sprintf(o, ".%u.%s.", h->restart, step);
	o = name_part(o, h->node);
	strcpy(o, ".nbd");
	return 0;
}

/* ---- canonical order ----------------------------------------------------- */

static uint64_t rec_key(const struct bot_spool_rec *r)
{
	return bot_ctx_key(r->coll, bot_size_bucket(r->nbytes), r->nranks, r->nnodes);
}

/* (kind, commId, key, seq, arm, rank): the order a delta's records are in. */
static int cmp_order(const struct bot_spool_rec *a, const struct bot_spool_rec *b)
{
	uint64_t ka, kb;

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->comm_id != b->comm_id)
		return a->comm_id < b->comm_id ? -1 : 1;
	ka = rec_key(a);
	kb = rec_key(b);
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_sort(const void *pa, const void *pb)
{
	const struct bot_spool_rec *a = pa, *b = pb;
	uint8_t x[BOT_SPOOL_REC_SIZE], y[BOT_SPOOL_REC_SIZE];
	int c = cmp_order(a, b);

	if (c)
		return c;
	/* ties broken by the packed bytes: one order whatever the input's */
	bot_spool_pack_rec(x, a);
	bot_spool_pack_rec(y, b);
	return memcmp(x, y, sizeof(x));
}

void bot_delta_sort(struct bot_spool_rec *recs, size_t n)
{
	if (n > 1)
		qsort(recs, n, sizeof(*recs), cmp_sort);
}

/* ---- encoder ------------------------------------------------------------- */

int bot_delta_encode(const struct bot_delta_hdr *h, const struct bot_spool_rec *recs, size_t n,
		     uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	struct bot_delta_hdr c = *h;
	char why[BOT_SPOOL_ERR_MAX];
	size_t body;
	uint8_t *b;

	*buf = NULL;
	*len = 0;
	c.nrecords = n;
	if (bot_delta_hdr_check(&c, why, sizeof(why)) < 0)
		return bot_errf(err, errlen, "delta header: %s", why);
	for (size_t i = 0; i < n; i++) {
		if (bot_spool_rec_check(&recs[i], why, sizeof(why)) < 0)
			return bot_errf(err, errlen, "record %zu: %s", i, why);
		if (recs[i].nnodes > c.step_nodes)
			return bot_errf(err, errlen, "record %zu: nNodes %u over the step's %u nodes",
					i, recs[i].nnodes, c.step_nodes);
		if (i && cmp_order(&recs[i - 1], &recs[i]) > 0)
			return bot_errf(err, errlen, "record %zu: not in the canonical order "
					"(bot_delta_sort)", i);
	}
	body = BOT_DELTA_HDR_SIZE + n * BOT_SPOOL_REC_SIZE;
	b = malloc(body + TRAILER);
	if (!b)
		return bot_errf(err, errlen, "out of memory for %zu records", n);
	pack_hdr(b, &c);
	for (size_t i = 0; i < n; i++)
		bot_spool_pack_rec(b + BOT_DELTA_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &recs[i]);
	bot_trailer_put(b, body);
	*buf = b;
	*len = body + TRAILER;
	return 0;
}

/* ---- reader -------------------------------------------------------------- */

/* A string field f of the header b: NUL padded, a NUL at least unless the
 * field may be used whole, into dst (f->max + 1 bytes). */
static int get_str(const uint8_t *b, const struct str_field *f, char *dst)
{
	const uint8_t *nul = memchr(b + f->off, 0, BOT_DELTA_STR);

	if (nul ? !bot_le_zero(nul, BOT_DELTA_STR - (size_t)(nul - (b + f->off))) :
	    f->max < BOT_DELTA_STR)
		return -1;
	memcpy(dst, b + f->off, BOT_DELTA_STR);
	dst[f->max] = 0;	/* 63: the padding's; 64: past the field */
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* Is base not the canonical name of h? 1 with "path: reason", or 0. */
static int name_mismatch(const char *base, const struct bot_delta_hdr *h, const char *path,
			 char *err, size_t errlen)
{
	char canon[BOT_DELTA_NAME_MAX];

	if (bot_delta_name(h, canon) == 0 && strcmp(base, canon) == 0)
		return 0;
	bot_errf(err, errlen, "%s: not the name its header gives (%s)", path, canon);
	return 1;
}

/* The header fields of an image whose length and CRC are right. */
static int parse_hdr(const char *name, const uint8_t *b, struct bot_delta_hdr *h, char *err,
		     size_t errlen)
{
	char why[BOT_SPOOL_ERR_MAX];

	h->flags = bot_le_get32(b + 12);
	if (h->flags & ~(uint32_t)BOT_DELTA_F_ALL)
		return bot_errf(err, errlen, "%s: offset 12: unknown flags 0x%x", name, h->flags);
	for (size_t i = 0; i < sizeof(str_fields) / sizeof(str_fields[0]); i++) {
		char *dst = (char *)str_of(h, i);

		if (get_str(b, &str_fields[i], dst) < 0)
			return bot_errf(err, errlen, "%s: offset %zu: %s not NUL padded", name,
					str_fields[i].off, str_fields[i].what);
	}
	/* the build id may use all 16 bytes */
	memcpy(h->build_id, b + 456, BOT_SPOOL_BUILD_ID_SIZE);
	if (!bot_le_zero(b + 456 + strnlen(h->build_id, BOT_SPOOL_BUILD_ID_SIZE),
		  BOT_SPOOL_BUILD_ID_SIZE - strnlen(h->build_id, BOT_SPOOL_BUILD_ID_SIZE)))
		return bot_errf(err, errlen, "%s: offset 456: build id not NUL padded", name);
	if (!bot_le_zero(b + 304, 24))
		return bot_errf(err, errlen, "%s: offset 304: reserved bytes not zero", name);
	if (!bot_le_zero(b + 472, 40))
		return bot_errf(err, errlen, "%s: offset 472: reserved bytes not zero", name);
	h->uid = bot_le_get32(b + 272);
	h->gid = bot_le_get32(b + 276);
	h->restart = bot_le_get32(b + 280);
	h->step = bot_le_get32(b + 284);
	h->array_job = bot_le_get32(b + 288);
	h->array_task = bot_le_get32(b + 292);
	h->het_job = bot_le_get32(b + 296);
	h->het_comp = bot_le_get32(b + 300);
	h->step_nodes = bot_le_get32(b + 328);
	h->step_tasks = bot_le_get32(b + 332);
	h->job_gpus = bot_le_get32(b + 336);
	h->leaf_switches = bot_le_get32(b + 340);
	h->t_start = bot_le_get64(b + 344);
	h->t_end = bot_le_get64(b + 352);
	h->t_harvest = bot_le_get64(b + 360);
	h->files_read = bot_le_get32(b + 368);
	h->files_rejected = bot_le_get32(b + 372);
	h->nrecords = bot_le_get64(b + 376);
	h->table_digest = bot_le_get64(b + 384);
	if (bot_delta_hdr_check(h, why, sizeof(why)) < 0)
		return bot_errf(err, errlen, "%s: header: %s", name, why);
	return 0;
}

int bot_delta_parse(const char *name, int name_check, const uint8_t *buf, size_t len,
		    struct bot_delta *out, char *err, size_t errlen)
{
	struct bot_delta_hdr *h = &out->hdr;
	char why[BOT_SPOOL_ERR_MAX];
	uint64_t n;
	size_t body;
	uint32_t crc;

	memset(out, 0, sizeof(*out));
	if (len < BOT_DELTA_HDR_SIZE + TRAILER)
		return bot_errf(err, errlen, "%s: truncated: %zu bytes, shorter than header and "
				"trailer", name, len);
	if (len > BOT_DELTA_MAX_FILE)
		return bot_errf(err, errlen, "%s: %zu bytes, over the %u-byte limit", name, len,
				BOT_DELTA_MAX_FILE);
	if (memcmp(buf, BOT_DELTA_MAGIC, 8) != 0)
		return bot_errf(err, errlen, "%s: offset 0: bad magic (not an nccl-bot delta)", name);
	if (bot_le_get32(buf + 8) != BOT_DELTA_VERSION)
		return bot_errf(err, errlen, "%s: offset 8: delta format version %u (this build "
				"reads %d)", name, bot_le_get32(buf + 8), BOT_DELTA_VERSION);
	n = bot_le_get64(buf + 376);
	if (n > BOT_DELTA_MAX_RECORDS)
		return bot_errf(err, errlen, "%s: offset 376: %llu records, over the limit %u", name,
				(unsigned long long)n, BOT_DELTA_MAX_RECORDS);
	body = BOT_DELTA_HDR_SIZE + (size_t)n * BOT_SPOOL_REC_SIZE;
	if (len != body + TRAILER)
		return bot_errf(err, errlen, "%s: length %zu, but %llu records need %zu bytes (%s)",
				name, len, (unsigned long long)n, body + TRAILER,
				len < body + TRAILER ? "truncated" : "trailing bytes");
	if (!bot_trailer_ok(buf, body, &crc))
		return bot_errf(err, errlen, "%s: offset %zu: CRC-32C mismatch (stored %08x, "
				"computed %08x)", name, body, bot_le_get32(buf + body), crc);
	if (parse_hdr(name, buf, h, err, errlen) < 0) {
		memset(h, 0, sizeof(*h));
		return -1;
	}
	if (name_check && name_mismatch(base_name(name), h, name, err, errlen)) {
		memset(h, 0, sizeof(*h));
		return -1;
	}
	if (n && !(out->recs = malloc((size_t)n * sizeof(*out->recs)))) {
		memset(h, 0, sizeof(*h));
		return bot_errf(err, errlen, "%s: out of memory for %llu records", name,
				(unsigned long long)n);
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = buf + BOT_DELTA_HDR_SIZE + i * BOT_SPOOL_REC_SIZE;
		struct bot_spool_rec *r = &out->recs[i];

		bot_spool_unpack_rec(r, p);
		if (!bot_le_zero(p + 28, 4) || !bot_le_zero(p + 72, 4))
			snprintf(why, sizeof(why), "reserved bytes not zero");
		else if (bot_spool_rec_check(r, why, sizeof(why)) == 0) {
			if (r->nnodes > h->step_nodes)
				snprintf(why, sizeof(why), "nNodes %u over the step's %u nodes",
					 r->nnodes, h->step_nodes);
			else if (i && cmp_order(r - 1, r) > 0)
				snprintf(why, sizeof(why), "not in the canonical order (kind, "
					 "commId, key, seq, arm, rank)");
			else
				continue;
		}
		bot_delta_free(out);
		return bot_errf(err, errlen, "%s: record %zu (offset %zu): %s", name, i,
				(size_t)(p - buf), why);
	}
	out->identity = identity_of_image(buf);
	out->digest = bot_digest64(buf, len);
	return 0;
}

int bot_delta_read_at(int dirfd, const char *name, const char *path, struct bot_delta *out,
		      char *err, size_t errlen)
{
	static const struct bot_open_rule rule = { "delta", BOT_DELTA_MAX_FILE, 1, 0, 0, 0, 0 };
	uint8_t *buf;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (bot_read_at(dirfd, name, path, &rule, &buf, &len, err, errlen) < 0)
		return -1;
	/* messages name the path; the name checked is the entry's */
	rc = bot_delta_parse(path, 0, buf, len, out, err, errlen);
	free(buf);
	if (rc == 0 && name_mismatch(base_name(name), &out->hdr, path, err, errlen)) {
		bot_delta_free(out);
		return -1;
	}
	return rc;
}

void bot_delta_free(struct bot_delta *d)
{
	free(d->recs);
	memset(d, 0, sizeof(*d));
}
