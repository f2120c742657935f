/*
 * delta_shim.c - REMOVED AT MERGE: common/delta.c replaces it.
 *
 * A temporary, minimal implementation of common/delta.h (doc/formats.md
 * section 13) so that ship and compact build and their tests run before the
 * delta codec lands: identity, name, header check, encoder, canonical sort,
 * parser and the safe read. It follows section 13 but is deliberately
 * plain; the tests of ship and compact use only what section 13 promises.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/errf.h"
#include "common/le.h"
#include "common/readall.h"
#include "common/state.h"
#include "policies/context.h"

#define TRAILER 8

static int str_ok(const char *s, int allow_empty, const char *extra)
{
	size_t n = strnlen(s, BOT_DELTA_STR);

	if (n >= BOT_DELTA_STR || (!n && !allow_empty))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return 0;
	}
	return 1;
}

int bot_delta_hdr_check(const struct bot_delta_hdr *h, char *err, size_t errlen)
{
	if (h->flags & ~BOT_DELTA_F_ALL)
		return bot_errf(err, errlen, "unknown flags 0x%x", h->flags);
	if (!str_ok(h->cluster, 0, "._-"))
		return bot_errf(err, errlen, "cluster is not [A-Za-z0-9._-]{1,63}");
	if (!str_ok(h->job, 0, "._+-"))
		return bot_errf(err, errlen, "job is not [A-Za-z0-9._+-]{1,63}");
	if (!bot_state_fabric_ok(h->fabric) || strlen(h->fabric) >= BOT_DELTA_STR)
		return bot_errf(err, errlen, "fabric is not [a-z0-9][a-z0-9._-]{0,62}");
	if (!str_ok(h->node, 0, "._-"))
		return bot_errf(err, errlen, "node is not [A-Za-z0-9._-]{1,63}");
	if (!str_ok(h->account, 1, "._-"))
		return bot_errf(err, errlen, "account is not [A-Za-z0-9._-]{0,63}");
	if (h->step > 0xfffffff0u && h->step != BOT_DELTA_STEP_BATCH &&
	    h->step != BOT_DELTA_STEP_INTERACTIVE && h->step != BOT_DELTA_STEP_EXTERN)
		return bot_errf(err, errlen, "step id 0x%x is not a step", h->step);
	if (h->step_nodes < 1)
		return bot_errf(err, errlen, "step nodes 0");
	if (h->t_end < h->t_start)
		return bot_errf(err, errlen, "step end before its start");
	if (h->nrecords > BOT_DELTA_MAX_RECORDS)
		return bot_errf(err, errlen, "%llu records, over %u",
				(unsigned long long)h->nrecords, BOT_DELTA_MAX_RECORDS);
	return 0;
}

static void put_str(uint8_t *p, const char *s)
{
	memset(p, 0, BOT_DELTA_STR);
	memcpy(p, s, strnlen(s, BOT_DELTA_STR - 1));
}

static void pack_hdr(uint8_t *p, const struct bot_delta_hdr *h)
{
	memset(p, 0, BOT_DELTA_HDR_SIZE);
	memcpy(p, BOT_DELTA_MAGIC, 8);
	bot_le_put32(p + 8, BOT_DELTA_VERSION);
	bot_le_put32(p + 12, h->flags);
	put_str(p + 16, h->cluster);
	put_str(p + 80, h->job);
	put_str(p + 144, h->fabric);
	put_str(p + 208, h->node);
	bot_le_put32(p + 272, h->uid);
	bot_le_put32(p + 276, h->gid);
	bot_le_put32(p + 280, h->restart);
	bot_le_put32(p + 284, h->step);
	bot_le_put32(p + 288, h->array_job);
	bot_le_put32(p + 292, h->array_task);
	bot_le_put32(p + 296, h->het_job);
	bot_le_put32(p + 300, h->het_comp);
	bot_le_put32(p + 328, h->step_nodes);
	bot_le_put32(p + 332, h->step_tasks);
	bot_le_put32(p + 336, h->job_gpus);
	bot_le_put32(p + 340, h->leaf_switches);
	bot_le_put64(p + 344, h->t_start);
	bot_le_put64(p + 352, h->t_end);
	bot_le_put64(p + 360, h->t_harvest);
	bot_le_put32(p + 368, h->files_read);
	bot_le_put32(p + 372, h->files_rejected);
	bot_le_put64(p + 376, h->nrecords);
	bot_le_put64(p + 384, h->table_digest);
	put_str(p + 392, h->account);
	memcpy(p + 456, h->build_id, strnlen(h->build_id, BOT_SPOOL_BUILD_ID_SIZE));
}

uint64_t bot_delta_identity(const struct bot_delta_hdr *h)
{
	uint8_t p[BOT_DELTA_HDR_SIZE];

	pack_hdr(p, h);
	memset(p + 328, 0, 392 - 328);
	return bot_digest64(p + 16, 392 - 16);
}

static void name_part(char *out, size_t cap, const char *s)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < cap; i++) {
		char c = s[i];

		out[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-') ? c : '_';
	}
	out[i] = 0;
}

int bot_delta_name(const struct bot_delta_hdr *h, char name[BOT_DELTA_NAME_MAX])
{
	char c[BOT_DELTA_STR], j[BOT_DELTA_STR], n[BOT_DELTA_STR], st[16];

	if (!h->cluster[0] || !h->job[0] || !h->node[0])
		return -1;
	name_part(c, sizeof(c), h->cluster);
	name_part(j, sizeof(j), h->job);
	name_part(n, sizeof(n), h->node);
	if (h->step == BOT_DELTA_STEP_BATCH)
		strcpy(st, "batch");
	else if (h->step == BOT_DELTA_STEP_EXTERN)
		strcpy(st, "extern");
	else if (h->step == BOT_DELTA_STEP_INTERACTIVE)
		strcpy(st, "interactive");
	else
		snprintf(st, sizeof(st), "%u", h->step);
	snprintf(name, BOT_DELTA_NAME_MAX, "%s.%s.%u.%s.%s.nbd", c, j, h->restart, st, n);
	return 0;
}

static int cmp_rec(const struct bot_spool_rec *a, const struct bot_spool_rec *b)
{
	uint64_t ka = bot_ctx_key(a->coll, bot_size_bucket(a->nbytes), a->nranks, a->nnodes);
	uint64_t kb = bot_ctx_key(b->coll, bot_size_bucket(b->nbytes), b->nranks, b->nnodes);

	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->comm_id != b->comm_id)
		return a->comm_id < b->comm_id ? -1 : 1;
	if (ka != kb)
		return ka < kb ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_rec_q(const void *a, const void *b)
{
	return cmp_rec(a, b);
}

void bot_delta_sort(struct bot_spool_rec *recs, size_t n)
{
	if (n > 1)
		qsort(recs, n, sizeof(*recs), cmp_rec_q);
}

int bot_delta_encode(const struct bot_delta_hdr *h, const struct bot_spool_rec *recs, size_t n,
		     uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	struct bot_delta_hdr hh = *h;
	char why[BOT_SPOOL_ERR_MAX];
	size_t body;
	uint8_t *b;

	*buf = NULL;
	hh.nrecords = n;
	if (bot_delta_hdr_check(&hh, why, sizeof(why)) < 0)
		return bot_errf(err, errlen, "delta header: %s", why);
	for (size_t i = 0; i < n; i++) {
		if (bot_spool_rec_check(&recs[i], why, sizeof(why)) < 0)
			return bot_errf(err, errlen, "record %zu: %s", i, why);
		if (recs[i].nnodes > hh.step_nodes)
			return bot_errf(err, errlen, "record %zu: nNodes over the step's nodes", i);
		if (i && cmp_rec(&recs[i - 1], &recs[i]) >= 0)
			return bot_errf(err, errlen, "record %zu: not in the canonical order", i);
	}
	body = BOT_DELTA_HDR_SIZE + n * BOT_SPOOL_REC_SIZE;
	b = malloc(body + TRAILER);
	if (!b)
		return bot_errf(err, errlen, "out of memory");
	pack_hdr(b, &hh);
	for (size_t i = 0; i < n; i++)
		bot_spool_pack_rec(b + BOT_DELTA_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &recs[i]);
	bot_le_put32(b + body, bot_spool_crc32c(0, b, body));
	memset(b + body + 4, 0, 4);
	*buf = b;
	*len = body + TRAILER;
	return 0;
}

static void get_str(char *dst, const uint8_t *p, size_t n)
{
	memcpy(dst, p, n);
	dst[n] = 0;
}

static int padded(const uint8_t *p, size_t n)
{
	size_t l = strnlen((const char *)p, n);

	if (l == n)
		return 0;
	for (size_t i = l; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

int bot_delta_parse(const char *name, int name_check, const uint8_t *buf, size_t len,
		    struct bot_delta *out, char *err, size_t errlen)
{
	struct bot_delta_hdr *h = &out->hdr;
	char why[BOT_SPOOL_ERR_MAX], canon[BOT_DELTA_NAME_MAX];
	size_t body;
	uint64_t n;

	memset(out, 0, sizeof(*out));
	if (len < BOT_DELTA_HDR_SIZE + TRAILER)
		return bot_errf(err, errlen, "%s: truncated: %zu bytes", name, len);
	if (len > BOT_DELTA_MAX_FILE)
		return bot_errf(err, errlen, "%s: over %u bytes", name, BOT_DELTA_MAX_FILE);
	if (memcmp(buf, BOT_DELTA_MAGIC, 8))
		return bot_errf(err, errlen, "%s: offset 0: bad magic (not an nccl-bot delta)", name);
	if (bot_le_get32(buf + 8) != BOT_DELTA_VERSION)
		return bot_errf(err, errlen, "%s: offset 8: delta format version %u (this build "
				"reads 1)", name, bot_le_get32(buf + 8));
	n = bot_le_get64(buf + 376);
	if (n > BOT_DELTA_MAX_RECORDS)
		return bot_errf(err, errlen, "%s: offset 376: %llu records, over %u", name,
				(unsigned long long)n, BOT_DELTA_MAX_RECORDS);
	body = BOT_DELTA_HDR_SIZE + (size_t)n * BOT_SPOOL_REC_SIZE;
	if (len != body + TRAILER)
		return bot_errf(err, errlen, "%s: length %zu does not match %llu records", name,
				len, (unsigned long long)n);
	if (bot_le_get32(buf + body) != bot_spool_crc32c(0, buf, body) ||
	    !zero(buf + body + 4, 4))
		return bot_errf(err, errlen, "%s: offset %zu: CRC-32C mismatch", name, body);
	for (int off = 16; off < 456; off += 64) {
		if (off == 272)
			off = 392;
		if (!padded(buf + off, BOT_DELTA_STR))
			return bot_errf(err, errlen, "%s: offset %d: string not NUL padded", name,
					off);
	}
	if (!zero(buf + 304, 24) || !zero(buf + 472, 40))
		return bot_errf(err, errlen, "%s: reserved bytes not zero", name);
	h->flags = bot_le_get32(buf + 12);
	get_str(h->cluster, buf + 16, 63);
	get_str(h->job, buf + 80, 63);
	get_str(h->fabric, buf + 144, 63);
	get_str(h->node, buf + 208, 63);
	h->uid = bot_le_get32(buf + 272);
	h->gid = bot_le_get32(buf + 276);
	h->restart = bot_le_get32(buf + 280);
	h->step = bot_le_get32(buf + 284);
	h->array_job = bot_le_get32(buf + 288);
	h->array_task = bot_le_get32(buf + 292);
	h->het_job = bot_le_get32(buf + 296);
	h->het_comp = bot_le_get32(buf + 300);
	h->step_nodes = bot_le_get32(buf + 328);
	h->step_tasks = bot_le_get32(buf + 332);
	h->job_gpus = bot_le_get32(buf + 336);
	h->leaf_switches = bot_le_get32(buf + 340);
	h->t_start = bot_le_get64(buf + 344);
	h->t_end = bot_le_get64(buf + 352);
	h->t_harvest = bot_le_get64(buf + 360);
	h->files_read = bot_le_get32(buf + 368);
	h->files_rejected = bot_le_get32(buf + 372);
	h->nrecords = n;
	h->table_digest = bot_le_get64(buf + 384);
	get_str(h->account, buf + 392, 63);
	memcpy(h->build_id, buf + 456, BOT_SPOOL_BUILD_ID_SIZE);
	h->build_id[BOT_SPOOL_BUILD_ID_SIZE] = 0;
	if (bot_delta_hdr_check(h, why, sizeof(why)) < 0)
		return bot_errf(err, errlen, "%s: %s", name, why);
	if (name_check && (bot_delta_name(h, canon) < 0 || strcmp(canon, name)))
		return bot_errf(err, errlen, "%s: its header names it %s", name, canon);
	if (n && !(out->recs = malloc((size_t)n * sizeof(*out->recs))))
		return bot_errf(err, errlen, "%s: out of memory", name);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = buf + BOT_DELTA_HDR_SIZE + i * BOT_SPOOL_REC_SIZE;

		bot_spool_unpack_rec(&out->recs[i], p);
		why[0] = 0;
		if (!zero(p + 28, 4) || !zero(p + 72, 4))
			snprintf(why, sizeof(why), "reserved bytes not zero");
		else if (bot_spool_rec_check(&out->recs[i], why, sizeof(why)) < 0)
			;
		else if (out->recs[i].nnodes > h->step_nodes)
			snprintf(why, sizeof(why), "nNodes %u over the step's %u nodes",
				 out->recs[i].nnodes, h->step_nodes);
		else if (i && cmp_rec(&out->recs[i - 1], &out->recs[i]) >= 0)
			snprintf(why, sizeof(why), "records not sorted");
		if (!why[0])
			continue;
		bot_delta_free(out);
		return bot_errf(err, errlen, "%s: record %zu: %s", name, i, why);
	}
	out->identity = bot_delta_identity(h);
	out->digest = bot_digest64(buf, len);
	return 0;
}

int bot_delta_read_at(int dirfd, const char *name, const char *path, struct bot_delta *out,
		      char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = bot_open_regular_at(dirfd, name, path, BOT_DELTA_MAX_FILE, 1, NULL, err, errlen);
	if (fd < 0)
		return -1;
	if (bot_read_whole(fd, path, BOT_DELTA_MAX_FILE, &buf, &len, err, errlen) < 0)
		return -1;
	rc = bot_delta_parse(path, 0, buf, len, out, err, errlen);
	if (rc == 0) {
		char canon[BOT_DELTA_NAME_MAX];
		const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

		if (bot_delta_name(&out->hdr, canon) < 0 || strcmp(canon, base)) {
			bot_delta_free(out);
			rc = bot_errf(err, errlen, "%s: its header names it %s", path, canon);
		}
	}
	free(buf);
	return rc;
}

void bot_delta_free(struct bot_delta *d)
{
	free(d->recs);
	d->recs = NULL;
}
