/*
 * spool_read.c - the all-or-nothing spool reader, the tools' half of
 * common/spool.h (doc/formats.md section 9, format v2; v1 still read).
 *
 * The reader trusts nothing: magic, version, record size, the length
 * implied by nrecords, the CRC and every field's range are checked before
 * one record is handed out, and any failure rejects the whole file with
 * "FILE: reason".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/le.h"
#include "common/errf.h"
#include "common/readall.h"
#include "common/spool.h"
#include "common/trailer.h"
#include "policies/context.h"

int bot_spool_rec_read(struct bot_spool_rec *r, const uint8_t in[BOT_SPOOL_REC_SIZE],
		       uint32_t version, uint64_t index, int64_t *proc_seen, char *err,
		       size_t errlen)
{
	bot_spool_unpack_rec(r, in);
	if (!bot_spool_rec_pad_zero(in))
		return bot_errf(err, errlen, "%s not zero", r->kind == BOT_SPOOL_PROC ?
				"process record: bytes 28..159" : "reserved bytes");
	if (r->kind != BOT_SPOOL_PROC)
		return bot_spool_rec_check(r, err, errlen);
	if (version < 2)
		return bot_errf(err, errlen, "a process record (kind 3) in a version %u file "
				"(version 2 has them)", version);
	if (*proc_seen >= 0)
		return bot_errf(err, errlen, "a second process record (the first is record %lld; "
				"a file holds at most one)", (long long)*proc_seen);
	if (bot_spool_proc_check(r, err, errlen) < 0)
		return -1;
	*proc_seen = (int64_t)index;
	return 0;
}

int bot_spool_parse(const char *name, const uint8_t *buf, size_t len, struct bot_spool_file *out,
		    char *err, size_t errlen)
{
	struct bot_spool_hdr *h = &out->hdr;
	char why[BOT_SPOOL_ERR_MAX];
	int64_t proc_seen = -1;
	uint64_t n;
	size_t body;
	uint32_t crc;

	memset(out, 0, sizeof(*out));
	if (len < BOT_SPOOL_HDR_SIZE + BOT_SPOOL_TRAILER_SIZE)
		return bot_errf(err, errlen, "%s: truncated: %zu bytes, shorter than header and trailer",
			   name, len);
	if (memcmp(buf, BOT_SPOOL_MAGIC, 8) != 0)
		return bot_errf(err, errlen, "%s: offset 0: bad magic (not an nccl-bot spool file)", name);
	h->version = bot_le_get32(buf + 8);
	if (h->version < BOT_SPOOL_VERSION_MIN || h->version > BOT_SPOOL_VERSION)
		return bot_errf(err, errlen, "%s: offset 8: spool format version %u (this build reads "
				"%d and %d)", name, h->version, BOT_SPOOL_VERSION_MIN,
				BOT_SPOOL_VERSION);
	h->rec_size = bot_le_get32(buf + 12);
	if (h->rec_size != BOT_SPOOL_REC_SIZE)
		return bot_errf(err, errlen, "%s: offset 12: record size %u (versions 1 and 2 have "
				"%d)", name, h->rec_size, BOT_SPOOL_REC_SIZE);
	n = bot_le_get64(buf + 16);
	if (n > BOT_SPOOL_MAX_RECORDS)
		return bot_errf(err, errlen, "%s: offset 16: %llu records, over the limit %u", name,
			   (unsigned long long)n, BOT_SPOOL_MAX_RECORDS);
	body = BOT_SPOOL_HDR_SIZE + (size_t)n * BOT_SPOOL_REC_SIZE;
	if (len != body + BOT_SPOOL_TRAILER_SIZE)
		return bot_errf(err, errlen, "%s: length %zu, but %llu records need %zu bytes (%s)", name,
			   len, (unsigned long long)n, body + BOT_SPOOL_TRAILER_SIZE,
			   len < body + BOT_SPOOL_TRAILER_SIZE ? "truncated" : "trailing bytes");
	if (!bot_trailer_ok(buf, body, &crc))
		return bot_errf(err, errlen, "%s: offset %zu: CRC-32C mismatch (stored %08x, computed %08x)",
			   name, body, bot_le_get32(buf + body), crc);
	h->nrecords = n;
	h->table_digest = bot_le_get64(buf + 24);
	memcpy(h->build_id, buf + 32, BOT_SPOOL_BUILD_ID_SIZE);
	h->host_hash = bot_le_get64(buf + 48);
	h->pid = bot_le_get32(buf + 56);
	h->flags = bot_le_get32(buf + 60);
	if (h->flags & ~BOT_SPOOL_HF_KNOWN)
		return bot_errf(err, errlen, "%s: offset 60: unknown header flags 0x%x", name, h->flags);
	if (memchr(h->build_id, 0, BOT_SPOOL_BUILD_ID_SIZE) == NULL)
		h->build_id[BOT_SPOOL_BUILD_ID_SIZE - 1] = 0;	/* printable; full 16 B allowed */
	if (n) {
		out->recs = malloc((size_t)n * sizeof(*out->recs));
		if (!out->recs)
			return bot_errf(err, errlen, "%s: out of memory for %llu records", name,
				   (unsigned long long)n);
	}
	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = buf + BOT_SPOOL_HDR_SIZE + (size_t)i * BOT_SPOOL_REC_SIZE;

		if (bot_spool_rec_read(&out->recs[i], p, h->version, i, &proc_seen, why,
				       sizeof(why)) < 0) {
			bot_spool_free(out);
			return bot_errf(err, errlen, "%s: record %llu (offset %zu): %s", name,
				   (unsigned long long)i, (size_t)(p - buf), why);
		}
	}
	out->digest = bot_digest64(buf, len);
	return 0;
}

/* The largest file a reader accepts. */
#define SPOOL_MAX_FILE ((size_t)BOT_SPOOL_HDR_SIZE + \
			(size_t)BOT_SPOOL_MAX_RECORDS * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE)

int bot_spool_read_at(int dirfd, const char *name, const char *path, struct bot_spool_file *out,
		      char *err, size_t errlen)
{
	static const struct bot_open_rule rule = { "spool file", SPOOL_MAX_FILE, 0, 0, 0, 0, 0 };
	uint8_t *buf;
	size_t len;
	int rc;

	memset(out, 0, sizeof(*out));
	if (bot_read_at(dirfd, name, path, &rule, &buf, &len, err, errlen) < 0)
		return -1;
	rc = bot_spool_parse(path, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

int bot_spool_read_file(const char *path, struct bot_spool_file *out, char *err, size_t errlen)
{
	return bot_spool_read_at(AT_FDCWD, path, path, out, err, errlen);
}

int bot_spool_name_ok(const char *name)
{
	size_t n = strlen(name);

	return n >= 7 && name[0] != '.' && !strcmp(name + n - 6, ".spool");
}

void bot_spool_free(struct bot_spool_file *f)
{
	free(f->recs);
	f->recs = NULL;
	f->hdr.nrecords = 0;
}
