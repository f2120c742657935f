/*
 * harvest.c - one job step's spool files on one node into one delta
 * (learn/harvest.h; doc/formats.md section 13).
 *
 * The reading half runs as the job's user and sends what it read as
 * 160-byte units; the validating half runs as root, believes nothing of it
 * (every record re-checked, every count recounted, the stream bounded in
 * bytes and time) and writes the delta. The unit layout is written down in
 * formats.md section 13 since two processes share it:
 *
 *   'F' file     0 tag, 1 outcome (0 read, 1 rejected), 2 u16 reason,
 *                4 u32 errno, 8 u64 records that follow, 16 u64 table
 *                digest, 24 u64 file digest (not believed: the parent
 *                digests the records itself), 32 u64 mtime, 40 u64 size,
 *                48 u32 spool header flags, 52 u16 source index, 54 u16 0,
 *                56..159 entry name (NUL padded, cut at 103 bytes)
 *   1, 2         a spool record of the last file (section 9's packing;
 *                its process record, kind 3, is never sent)
 *   'R' reason   1..159 why the last file was rejected (text, NUL padded)
 *   'X' error    2 u16 code, 4 u32 errno, 8 u32 source index, 12 u32 count:
 *                nothing was read (last unit)
 *   'E' end      4 u32 file units sent (last unit)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/delta.h"
#include "common/dirscan.h"
#include "common/le.h"
#include "common/readall.h"
#include "common/spool.h"
#include "common/writeall.h"
#include "learn/harvest.h"
#include "policies/context.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define U BOT_HARVEST_UNIT
#define NAME_OFF 56
#define NAME_LEN (U - NAME_OFF)
/* The largest spool file a harvest reads: what the writer can write
 * (learn/harvest.h), well under what the format allows (common/spool.h). */
#define SPOOL_MAX_FILE ((size_t)BOT_SPOOL_HDR_SIZE + \
			((size_t)BOT_HARVEST_FILE_RECORDS + 1) * BOT_SPOOL_REC_SIZE + \
			BOT_SPOOL_TRAILER_SIZE)
_Static_assert(SPOOL_MAX_FILE == BOT_HARVEST_FILE_MAX, "harvest.h's size of the largest file");
_Static_assert(BOT_HARVEST_FILE_RECORDS <= BOT_SPOOL_MAX_RECORDS, "within the format's limit");

enum { ERR_DIR = 1, ERR_FILES = 2, ERR_SETUP = 3 };

const char *bot_harvest_why_name(int why)
{
	static const char *const names[BOT_HARVEST_WHY_N] = {
		"read", "cannot be opened", "a symbolic link", "not a regular file",
		"over the largest spool file", "more than one hard link", "another owner",
		"changed while read", "invalid content", "over the harvest's byte bound",
		"refused by the parent's re-validation", "nNodes over the step's nodes",
	};

	return why >= 0 && why < BOT_HARVEST_WHY_N ? names[why] : "unknown";
}

static size_t max_files_of(const struct bot_harvest_req *r)
{
	return r->max_files ? r->max_files : BOT_HARVEST_MAX_FILES;
}

static uint64_t max_bytes_of(const struct bot_harvest_req *r)
{
	return r->max_bytes ? r->max_bytes : BOT_HARVEST_MAX_BYTES;
}

/* ---- the reading half (the job's user) ----------------------------------- */

struct entry {
	size_t src;
	char *name;
};

struct listing {
	struct entry *v;
	size_t n, cap;
	int *dirfd;		/* per source */
};

static int put(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int put_error(int fd, int code, int e, size_t src, size_t count)
{
	uint8_t u[U] = { 'X' };

	bot_le_put16(u + 2, (uint32_t)code);
	bot_le_put32(u + 4, (uint32_t)e);
	bot_le_put32(u + 8, (uint32_t)src);
	bot_le_put32(u + 12, (uint32_t)count);
	return put(fd, u, U);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void listing_free(struct listing *l, size_t nsrc)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	if (l->dirfd)
		for (size_t i = 0; i < nsrc; i++)
			if (l->dirfd[i] >= 0)
				close(l->dirfd[i]);
	free(l->dirfd);
}

/* Add an entry: 0, -1 out of memory, -2 over the file bound. */
static int add_entry(struct listing *l, size_t src, const char *name, size_t max)
{
	if (l->n >= max)
		return -2;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct entry *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	if (!(l->v[l->n].name = strdup(name)))
		return -1;
	l->v[l->n++].src = src;
	return 0;
}

struct list_arg {
	struct listing *l;
	size_t i, max;
};

/* bot_dir_scan's visitor: 0, or 1 out of memory, 2 past the bound. */
static int list_one(const struct dirent *e, void *arg)
{
	struct list_arg *a = arg;

	if (!bot_spool_name_ok(e->d_name))
		return 0;
	return -add_entry(a->l, a->i, e->d_name, a->max);
}

/* Every *.spool entry of source i: 0, or -errno (a listing that fails
 * part-way is an error), or -E2BIG past the bound. */
static int list_dir(struct listing *l, size_t i, size_t max)
{
	struct list_arg a = { l, i, max };
	int rc = bot_dir_scan(l->dirfd[i], list_one, &a);

	if (rc > 0)
		return rc == 2 ? -E2BIG : -ENOMEM;
	return rc;
}

/* The reason without the "PATH: " prefix the readers put on it. */
static const char *strip_path(const char *err, const char *path)
{
	size_t n = strlen(path);

	return !strncmp(err, path, n) && err[n] == ':' && err[n + 1] == ' ' ? err + n + 2 : err;
}

static int put_rejected(int fd, const struct entry *e, int why, int eno, const struct stat *st,
			const char *text)
{
	uint8_t u[2 * U] = { 'F', 1 };

	bot_le_put16(u + 2, (uint32_t)why);
	bot_le_put32(u + 4, (uint32_t)eno);
	if (st) {
		bot_le_put64(u + 32, st->st_mtime > 0 ? (uint64_t)st->st_mtime : 0);
		bot_le_put64(u + 40, st->st_size > 0 ? (uint64_t)st->st_size : 0);
	}
	bot_le_put16(u + 52, (uint32_t)e->src);
	strncpy((char *)u + NAME_OFF, e->name, NAME_LEN - 1);
	u[U] = 'R';
	strncpy((char *)u + U + 1, text, U - 2);
	return put(fd, u, sizeof(u));
}

/* A record whose nNodes passes the step's nodes, which the part rejects its
 * file for (BOT_HARVEST_WHY_NNODES): one rule for the parent's take_file and
 * the child's count of files read. A process record's nNodes is 0. */
static int rec_nnodes_over(const struct bot_spool_rec *r, uint32_t step_nodes)
{
	return r->nnodes > step_nodes;
}

/* Would the parent reject f for a record's nNodes? A reader that was not
 * told the step's nodes (0) leaves that to the parent. */
static int nnodes_over(const struct bot_harvest_req *req, const struct bot_spool_file *f)
{
	for (uint64_t i = 0; req->id.step_nodes && i < f->hdr.nrecords; i++)
		if (rec_nnodes_over(&f->recs[i], req->id.step_nodes))
			return 1;
	return 0;
}

/* One file: open, check, read, validate, send. 0, or -1 when fd failed. */
static int read_one(int fd, const struct bot_harvest_req *req, int dirfd, const char *dir,
		    const struct entry *e, uint64_t *budget)
{
	const struct bot_open_rule rule = { "spool file", SPOOL_MAX_FILE, 1, 1, req->owner, 0, 0 };
	char path[BOT_HARVEST_PATH_MAX + 256], err[BOT_SPOOL_ERR_MAX + BOT_HARVEST_PATH_MAX];
	struct bot_spool_file f;
	struct stat st;
	uint8_t *buf, u[U] = { 'F', 0 };
	uint64_t proc;
	size_t len, first, rest;
	int sfd, rc;

	snprintf(path, sizeof(path), "%s%s%s", dir, bot_path_sep(dir), e->name);
	sfd = bot_open_at(dirfd, e->name, path, &rule, &st, err, sizeof(err));
	if (sfd < 0 && req->on_file)
		req->on_file(req->on_file_arg, NULL);
	if (sfd < 0)
		return put_rejected(fd, e, -sfd, 0, -sfd == BOT_OPEN_ERRNO ? NULL : &st,
				    strip_path(err, path));
	if ((uint64_t)st.st_size > *budget) {
		close(sfd);
		if (req->on_file)
			req->on_file(req->on_file_arg, NULL);
		snprintf(err, sizeof(err), "%lld bytes, over what is left of the harvest's "
			 "%llu-byte bound (%llu bytes): not read", (long long)st.st_size,
			 (unsigned long long)max_bytes_of(req), (unsigned long long)*budget);
		return put_rejected(fd, e, BOT_HARVEST_WHY_BYTES, 0, &st, err);
	}
	if (bot_read_whole(sfd, path, SPOOL_MAX_FILE, &buf, &len, err, sizeof(err)) < 0) {
		if (req->on_file)
			req->on_file(req->on_file_arg, NULL);
		return put_rejected(fd, e, BOT_HARVEST_WHY_CHANGED, 0, &st, strip_path(err, path));
	}
	*budget -= len;
	if (bot_spool_parse(path, buf, len, &f, err, sizeof(err)) < 0) {
		free(buf);
		if (req->on_file)
			req->on_file(req->on_file_arg, NULL);
		return put_rejected(fd, e, BOT_HARVEST_WHY_INVALID, 0, &st, strip_path(err, path));
	}
	/* the process record (kind 3, at most one) stays here: it teaches
	 * nothing and has no place in a delta (formats.md sections 9, 13) */
	for (proc = 0; proc < f.hdr.nrecords; proc++)
		if (f.recs[proc].kind == BOT_SPOOL_PROC)
			break;
	if (f.hdr.nrecords - (proc < f.hdr.nrecords) > BOT_HARVEST_FILE_RECORDS) {
		snprintf(err, sizeof(err), "%llu samples and summaries, more than the writer "
			 "writes (%u)", (unsigned long long)(f.hdr.nrecords -
							     (proc < f.hdr.nrecords)),
			 BOT_HARVEST_FILE_RECORDS);
		bot_spool_free(&f);
		free(buf);
		if (req->on_file)
			req->on_file(req->on_file_arg, NULL);
		return put_rejected(fd, e, BOT_HARVEST_WHY_INVALID, 0, &st, err);
	}
	/* the report counts the file as the delta will: rejected where the
	 * parent's re-validation rejects it for its nNodes (take_file), read
	 * otherwise; the parent still decides, from what it is sent */
	if (req->on_file)
		req->on_file(req->on_file_arg, nnodes_over(req, &f) ? NULL : &f);
	bot_le_put64(u + 8, f.hdr.nrecords - (proc < f.hdr.nrecords));
	bot_le_put64(u + 16, f.hdr.table_digest);
	bot_le_put64(u + 24, f.digest);
	bot_le_put64(u + 32, st.st_mtime > 0 ? (uint64_t)st.st_mtime : 0);
	bot_le_put64(u + 40, (uint64_t)len);
	bot_le_put32(u + 48, f.hdr.flags);
	bot_le_put16(u + 52, (uint32_t)e->src);
	strncpy((char *)u + NAME_OFF, e->name, NAME_LEN - 1);
	/* the records as the file holds them: validated, section 9's packing,
	 * those before the process record and those after it */
	first = (size_t)proc * BOT_SPOOL_REC_SIZE;
	rest = proc < f.hdr.nrecords ? (size_t)(f.hdr.nrecords - proc - 1) * BOT_SPOOL_REC_SIZE : 0;
	rc = put(fd, u, U) < 0 || put(fd, buf + BOT_SPOOL_HDR_SIZE, first) < 0 ||
	     (rest && put(fd, buf + BOT_SPOOL_HDR_SIZE + first + BOT_SPOOL_REC_SIZE, rest) < 0) ?
	     -1 : 0;
	bot_spool_free(&f);
	free(buf);
	return rc;
}

int bot_harvest_read(const struct bot_harvest_req *req, int fd)
{
	struct listing l = { NULL, 0, 0, NULL };
	size_t max = max_files_of(req);
	uint64_t budget = max_bytes_of(req);
	uint8_t end[U] = { 'E' };
	int rc = 0;

	if (!(l.dirfd = malloc((req->nsrc ? req->nsrc : 1) * sizeof(int))))
		return put_error(fd, ERR_DIR, ENOMEM, 0, 0);
	for (size_t i = 0; i < req->nsrc; i++)
		l.dirfd[i] = -1;
	/* List everything first: past the file bound, nothing is opened. */
	for (size_t i = 0; i < req->nsrc && !rc; i++) {
		const struct bot_harvest_src *s = &req->src[i];

		l.dirfd[i] = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (l.dirfd[i] < 0) {
			rc = put_error(fd, ERR_DIR, errno, i, 0) < 0 ? -1 : 1;
			break;
		}
		if (s->name && (!*s->name || strchr(s->name, '/'))) {
			rc = put_error(fd, ERR_DIR, EINVAL, i, 0) < 0 ? -1 : 1;
			break;
		}
		if (s->name) {
			int a = add_entry(&l, i, s->name, max);

			rc = a == -2 ? -E2BIG : a < 0 ? -ENOMEM : 0;
		} else {
			rc = list_dir(&l, i, max);
		}
		if (rc == -E2BIG)
			rc = put_error(fd, ERR_FILES, 0, i, l.n + 1) < 0 ? -1 : 1;
		else if (rc < 0)
			rc = put_error(fd, ERR_DIR, -rc, i, 0) < 0 ? -1 : 1;
	}
	if (!rc) {
		if (l.n > 1)
			qsort(l.v, l.n, sizeof(*l.v), cmp_entry);
		for (size_t i = 0; i < l.n && !rc; i++)
			rc = read_one(fd, req, l.dirfd[l.v[i].src], req->src[l.v[i].src].dir, &l.v[i],
				      &budget);
		bot_le_put32(end + 4, (uint32_t)l.n);
		if (!rc)
			rc = put(fd, end, U);
	}
	listing_free(&l, req->nsrc);
	return rc < 0 ? -1 : 0;
}

/* ---- the validating half (root) ----------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct stream {
	int fd;
	int64_t deadline;
	uint64_t got, bound;
	uint8_t buf[64 * U];
	size_t have, pos;
	int timed_out;
};

/* The next unit into u: 1, 0 at the end of the stream, -1 (an error, a
 * bound or the deadline; err says which). */
static int next_unit(struct stream *s, uint8_t u[U], char *err, size_t errlen)
{
	while (s->have - s->pos < U) {
		int64_t left = s->deadline - now_ms();
		struct pollfd p = { s->fd, POLLIN, 0 };
		ssize_t r;
		int pr;

		if (s->pos) {
			memmove(s->buf, s->buf + s->pos, s->have - s->pos);
			s->have -= s->pos;
			s->pos = 0;
		}
		if (left <= 0 || (pr = poll(&p, 1, (int)(left > 60000 ? 60000 : left))) == 0) {
			if (left > 0)
				continue;
			s->timed_out = 1;
			return bot_log_errf(err, errlen, "the reading child did not finish in time");
		}
		if (pr < 0) {
			if (errno == EINTR)
				continue;
			return bot_log_errf(err, errlen, "poll: %s", strerror(errno));
		}
		r = read(s->fd, s->buf + s->have, sizeof(s->buf) - s->have);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return bot_log_errf(err, errlen, "reading the child's stream: %s",
					    strerror(errno));
		if (r == 0) {
			if (s->have)
				return bot_log_errf(err, errlen, "the child's stream ends inside a unit");
			return 0;
		}
		s->have += (size_t)r;
		s->got += (uint64_t)r;
		if (s->got > s->bound)
			return bot_log_errf(err, errlen, "the child's stream is over its %llu-byte "
					    "bound", (unsigned long long)s->bound);
	}
	memcpy(u, s->buf + s->pos, U);
	s->pos += U;
	return 1;
}

struct collect {
	const struct bot_harvest_req *req;
	struct bot_harvest_result *res;
	const struct bot_log *log;
	struct bot_spool_rec *recs;
	size_t n, cap;
	uint64_t *digests;		/* of the files read, in order */
	size_t ndig;
	uint64_t table_digest, oldest;
	int have_oldest, rank_drops;
};

static void file_path(const struct collect *c, const uint8_t *u, char *path, size_t len)
{
	const char *dir = c->req->src[bot_le_get16(u + 52)].dir;
	char name[NAME_LEN];

	memcpy(name, u + NAME_OFF, NAME_LEN - 1);
	name[NAME_LEN - 1] = 0;
	snprintf(path, len, "%s%s%s", dir, bot_path_sep(dir), name);
}

static void reject(struct collect *c, const char *path, int why, const char *text)
{
	c->res->files_rejected++;
	c->res->rejected_by[why]++;
	bot_log_msg(c->log, BOT_LOG_WARN, "%s: rejected: %s", path, text);
}

static int grow_recs(struct collect *c, size_t need)
{
	size_t cap = c->cap ? c->cap : 1024;
	struct bot_spool_rec *v;

	if (need <= c->cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (!(v = realloc(c->recs, cap * sizeof(*v))))
		return -1;
	c->recs = v;
	c->cap = cap;
	return 0;
}

/* The records of one file read by the child: all re-validated, kept only
 * when every one passes. The file's id (duplicates, the default job) is
 * computed here from the records received, never the digest the child
 * claims (formats.md section 13). 0, or -1 (a stream error in err). */
static int take_file(struct collect *c, struct stream *s, const uint8_t *fu, char *err,
		     size_t errlen)
{
	uint64_t n = bot_le_get64(fu + 8), digest = 0;
	size_t first = c->n;
	char path[BOT_HARVEST_PATH_MAX + NAME_LEN + 2], why[BOT_SPOOL_ERR_MAX] = "";
	char w2[BOT_SPOOL_ERR_MAX];
	int bad = 0;
	uint8_t u[U];

	file_path(c, fu, path, sizeof(path));
	if (n > BOT_HARVEST_FILE_RECORDS)
		return bot_log_errf(err, errlen, "%s: the child claims %llu records, over a spool "
				    "file's %u", path, (unsigned long long)n, BOT_HARVEST_FILE_RECORDS);
	for (uint64_t i = 0; i < n; i++) {
		struct bot_spool_rec r;
		int rc = next_unit(s, u, err, errlen);

		if (rc <= 0)
			return rc < 0 ? -1 : bot_log_errf(err, errlen, "%s: the child's stream "
							  "ends inside its records", path);
		if (bad)
			continue;
		digest = bot_mix64(digest ^ bot_digest64(u, U));
		bot_spool_unpack_rec(&r, u);
		if (!bot_le_zero(u + 28, 4) || !bot_le_zero(u + 72, 4)) {
			bad = BOT_HARVEST_WHY_PARENT;
			snprintf(why, sizeof(why), "record %llu: reserved bytes not zero",
				 (unsigned long long)i);
		} else if (bot_spool_rec_check(&r, w2, sizeof(w2)) < 0) {
			bad = BOT_HARVEST_WHY_PARENT;
			snprintf(why, sizeof(why), "record %llu: %.400s", (unsigned long long)i, w2);
		} else if (rec_nnodes_over(&r, c->req->id.step_nodes)) {
			bad = BOT_HARVEST_WHY_NNODES;
			snprintf(why, sizeof(why), "record %llu: nNodes %u over the step's %u "
				 "node(s)", (unsigned long long)i, r.nnodes, c->req->id.step_nodes);
		} else if (grow_recs(c, c->n + 1) < 0) {
			return bot_log_errf(err, errlen, "out of memory");
		} else {
			c->recs[c->n++] = r;
		}
	}
	if (bad) {
		c->n = first;
		reject(c, path, bad, why);
		return 0;
	}
	/* a file without records (a process record alone, formats.md 13) is
	 * nobody's copy: it has nothing to count twice */
	for (size_t i = 0; n && i < c->ndig; i++)
		if (c->digests[i] == digest) {
			c->n = first;
			c->res->files_duplicate++;
			bot_log_msg(c->log, BOT_LOG_WARN, "%s: skipped: the same records as a "
				    "file read before", path);
			return 0;
		}
	if (c->ndig % 64 == 0) {
		uint64_t *d = realloc(c->digests, (c->ndig + 64) * sizeof(*d));

		if (!d)
			return bot_log_errf(err, errlen, "out of memory");
		c->digests = d;
	}
	c->digests[c->ndig++] = digest;
	c->res->files_read++;
	c->res->records_in += n;
	if (!c->table_digest)
		c->table_digest = bot_le_get64(fu + 16);
	if (bot_le_get32(fu + 48) & BOT_SPOOL_HF_KNOWN)
		c->rank_drops = 1;
	if (!c->have_oldest || bot_le_get64(fu + 32) < c->oldest)
		c->oldest = bot_le_get64(fu + 32);
	c->have_oldest = 1;
	return 0;
}

/* A file unit's fields within their ranges? */
static int file_unit_ok(const struct collect *c, const uint8_t *u)
{
	unsigned outcome = u[1], why = bot_le_get16(u + 2);

	if (outcome > 1 || bot_le_get16(u + 52) >= c->req->nsrc || bot_le_get16(u + 54))
		return 0;
	if (outcome == 0 && why != 0)
		return 0;
	if (outcome == 1 && (why < 1 || why > BOT_HARVEST_WHY_BYTES || bot_le_get64(u + 8)))
		return 0;
	/* an entry name: not empty, NUL-terminated in its field, no '/' */
	if (!u[NAME_OFF] || !memchr(u + NAME_OFF, 0, NAME_LEN))
		return 0;
	return strchr((const char *)u + NAME_OFF, '/') == NULL;
}

static int child_error(struct collect *c, const uint8_t *u, char *err, size_t errlen)
{
	unsigned code = bot_le_get16(u + 2), e = bot_le_get32(u + 4), src = bot_le_get32(u + 8);
	const char *dir = src < c->req->nsrc ? c->req->src[src].dir : "?";

	switch (code) {
	case ERR_DIR:
		return bot_log_errf(err, errlen, "%s: cannot list the spool directory: %s",
				    bot_path_shown(dir), strerror((int)e));
	case ERR_FILES:
		return bot_log_errf(err, errlen, "%s: more than %zu spool files (the bound of "
				    "one harvest): refused whole, none read", dir,
				    max_files_of(c->req));
	case ERR_SETUP:
		return bot_log_errf(err, errlen, "the reading child's setup failed: %s",
				    strerror((int)e));
	}
	return bot_log_errf(err, errlen, "the child's stream holds an unknown error %u", code);
}

/* The whole stream: 1 at its end unit, -1 (err). */
static int take_stream(struct collect *c, struct stream *s, char *err, size_t errlen)
{
	uint8_t u[U], r[U];
	size_t units = 0;
	int rc;

	for (;;) {
		rc = next_unit(s, u, err, errlen);
		if (rc <= 0)
			return rc < 0 ? -1 : bot_log_errf(err, errlen, "the child's stream ended "
							  "early (no end unit)");
		switch (u[0]) {
		case 'E':
			if (bot_le_get32(u + 4) != units || !bot_le_zero(u + 1, 3) || !bot_le_zero(u + 8, U - 8))
				return bot_log_errf(err, errlen, "the child's stream is malformed: "
						    "end unit after %zu files says %u", units,
						    bot_le_get32(u + 4));
			/* the last unit: the stream ends there (EOF), or it is
			 * refused (data after it, or the deadline) */
			rc = next_unit(s, u, err, errlen);
			if (rc > 0)
				return bot_log_errf(err, errlen, "the child's stream goes on after "
						    "its end unit");
			return rc < 0 ? -1 : 1;
		case 'X':
			return child_error(c, u, err, errlen);
		case 'F':
			break;
		default:
			return bot_log_errf(err, errlen, "the child's stream is malformed: unit "
					    "%llu of kind 0x%02x where a file unit belongs",
					    (unsigned long long)(s->got / U), u[0]);
		}
		if (!file_unit_ok(c, u))
			return bot_log_errf(err, errlen, "the child's stream is malformed: a file "
					    "unit out of range");
		if (++units > max_files_of(c->req))
			return bot_log_errf(err, errlen, "the child's stream names more than %zu "
					    "files", max_files_of(c->req));
		c->res->files++;
		if (u[1] == 0) {
			if (take_file(c, s, u, err, errlen) < 0)
				return -1;
			continue;
		}
		rc = next_unit(s, r, err, errlen);
		if (rc <= 0 || r[0] != 'R')
			return rc < 0 ? -1 : bot_log_errf(err, errlen, "the child's stream is "
							  "malformed: no reason after a rejection");
		{
			char path[BOT_HARVEST_PATH_MAX + NAME_LEN + 2], text[U];

			memcpy(text, r + 1, U - 1);
			text[U - 1] = 0;
			file_path(c, u, path, sizeof(path));
			reject(c, path, bot_le_get16(u + 2), text);
		}
	}
}

/* Samples to one per (commId, key, seq, arm): the record of the lowest
 * rank with a clean sample holds the minimum of the clean durations; a
 * collective without a clean sample keeps its lowest rank's record. recs
 * sorted (bot_delta_sort); returns the new count, still sorted. */
static size_t reduce(struct bot_spool_rec *recs, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n;) {
		const struct bot_spool_rec *a = &recs[i];
		size_t j = i + 1, keep = i;
		uint64_t best = 0;
		int clean = 0;

		if (a->kind != BOT_SPOOL_SAMPLE) {
			recs[out++] = recs[i++];
			continue;
		}
		while (j < n && recs[j].kind == BOT_SPOOL_SAMPLE && recs[j].comm_id == a->comm_id &&
		       recs[j].coll == a->coll && recs[j].seq == a->seq && recs[j].arm == a->arm &&
		       bot_size_bucket(recs[j].nbytes) == bot_size_bucket(a->nbytes) &&
		       recs[j].nranks == a->nranks && recs[j].nnodes == a->nnodes)
			j++;
		for (size_t k = i; k < j; k++) {
			if (!bot_spool_clean(&recs[k]))
				continue;
			if (!clean || recs[k].duration_ns < best)
				best = recs[k].duration_ns;
			if (!clean)
				keep = k;
			clean = 1;
		}
		recs[out] = recs[keep];
		if (clean)
			recs[out].duration_ns = best;
		out++;
		i = j;
	}
	return out;
}

/* Keep at most BOT_DELTA_MAX_RECORDS: summaries first, then samples in
 * order. recs sorted (samples first); returns the new count. */
static size_t cap_records(struct bot_spool_rec *recs, size_t n, int *dropped)
{
	size_t samples = 0, summaries, keep_sum, keep_smp;

	*dropped = n > BOT_DELTA_MAX_RECORDS;
	if (!*dropped)
		return n;
	while (samples < n && recs[samples].kind == BOT_SPOOL_SAMPLE)
		samples++;
	summaries = n - samples;
	keep_sum = summaries < BOT_DELTA_MAX_RECORDS ? summaries : BOT_DELTA_MAX_RECORDS;
	keep_smp = BOT_DELTA_MAX_RECORDS - keep_sum;
	memmove(recs + keep_smp, recs + samples, keep_sum * sizeof(*recs));
	return keep_smp + keep_sum;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The default job string: j + 15 hex digits of the digest of the read
 * files' record digests (take_file's), sorted, 8 bytes little-endian each. */
static void default_job(uint64_t *d, size_t n, char job[BOT_DELTA_STR])
{
	uint8_t *b = malloc(n ? 8 * n : 1);
	uint64_t x = 0;

	qsort(d, n, sizeof(*d), cmp_u64);
	if (b) {
		for (size_t i = 0; i < n; i++)
			bot_le_put64(b + 8 * i, d[i]);
		x = bot_digest64(b, 8 * n);
		free(b);
	}
	snprintf(job, BOT_DELTA_STR, "j%015llx", (unsigned long long)(x >> 4));
}

struct stranded {
	int dfd;
	unsigned done;
};

/* bot_dir_scan's visitor: a `.<name>.nbd.tmp` that is the same file as
 * `<name>.nbd`, with two links, is a link + unlink that a harvest did not
 * finish (killed between the two): remove the temporary's link. Always 0. */
static int complete_one(const struct dirent *e, void *arg)
{
	struct stranded *a = arg;
	char name[BOT_DELTA_NAME_MAX];
	size_t n = strlen(e->d_name);
	struct stat t, f;

	if (e->d_name[0] != '.' || n < 10 || n - 5 >= sizeof(name) ||
	    strcmp(e->d_name + n - 8, ".nbd.tmp"))
		return 0;
	memcpy(name, e->d_name + 1, n - 5);
	name[n - 5] = 0;
	if (fstatat(a->dfd, e->d_name, &t, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fstatat(a->dfd, name, &f, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(t.st_mode) ||
	    t.st_dev != f.st_dev || t.st_ino != f.st_ino || t.st_nlink != 2)
		return 0;
	if (unlinkat(a->dfd, e->d_name, 0) == 0)
		a->done++;
	return 0;
}

/* Finish the renames other harvests left half done in the outbox (the
 * link + unlink fallback, formats.md section 13): ship refuses a delta with
 * two links. Best effort: a listing that fails leaves them for the next. */
static void complete_stranded(int dfd, const char *outbox, const struct bot_log *log)
{
	struct stranded a = { dfd, 0 };

	bot_dir_scan(dfd, complete_one, &a);
	if (!a.done)
		return;
	fsync(dfd);
	bot_log_msg(log, BOT_LOG_WARN, "%s: completed an interrupted rename of %u delta(s) (a "
		    "harvest that died left a second link)", outbox, a.done);
}

/*
 * Write buf as outbox/name: .<name>.tmp O_EXCL 0640, fsync, renamed without
 * replacing, the directory fsynced (common/writeall.h); renames left half
 * done first completed. 0 written, 1 the name exists (nothing written), -1
 * err.
 */
static int write_delta(const char *outbox, const char *name, const uint8_t *buf, size_t len,
		       const struct bot_log *log, char *err, size_t errlen)
{
	/* a temporary left by a harvest that died is ours to replace */
	const struct bot_write_rule r = {
		.mode = 0640, .chmod = 1, .no_replace = 1, .clear_stale = 1, .sync_dir = 1,
	};
	char trimmed[PATH_MAX];
	struct stat st;
	int dfd, rc;

	/* "link/" and "link/." resolve the link, "link/.." goes through it
	 * (common/settings.h): the outbox is the directory itself */
	if (bot_path_has_dotdot(outbox))
		return bot_log_errf(err, errlen, "%s: the outbox: a '..' component (it could "
				    "lead through a link): give the directory itself", outbox);
	if (strlen(outbox) >= sizeof(trimmed))
		return bot_log_errf(err, errlen, "%.64s...: the outbox: path too long", outbox);
	outbox = bot_path_dir_trim(strcpy(trimmed, outbox));
	dfd = open(outbox, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		struct stat lst;

		/* the last component is never followed (the delta is written
		 * as root on the SPANK path): say so where that is the cause */
		if ((errno == ELOOP || errno == ENOTDIR) && lstat(outbox, &lst) == 0 &&
		    S_ISLNK(lst.st_mode))
			return bot_log_errf(err, errlen, "%s: the outbox: a symbolic link (not "
					    "followed: give the directory it names)", outbox);
		return bot_log_errf(err, errlen, "%s: the outbox: %s", outbox, strerror(errno));
	}
	complete_stranded(dfd, outbox, log);
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		close(dfd);
		return 1;
	}
	rc = bot_write_whole_at(dfd, outbox, name, buf, len, &r, err, errlen);
	close(dfd);
	if (rc < 0)
		bot_log_esc_inplace(err, errlen);
	return rc;
}

/* The delta of what was collected: header, reduce, cap, encode, write. */
static int finish(struct collect *c, char *err, size_t errlen)
{
	struct bot_harvest_result *res = c->res;
	struct bot_delta_hdr h = c->req->id;
	uint8_t *buf;
	size_t len, n;
	int dropped, rc;

	if (!res->files_read) {
		res->outcome = BOT_HARVEST_NOTHING;
		if (!res->files)
			return bot_log_errf(err, errlen, "no spool file to harvest: nothing written");
		return bot_log_errf(err, errlen, "none of the %zu spool file(s) is valid: nothing "
				    "written", res->files);
	}
	if (!c->n) {
		/* never an empty delta (formats.md section 13) */
		res->outcome = BOT_HARVEST_NOTHING;
		return bot_log_errf(err, errlen, "the %zu spool file(s) read hold no record: "
				    "nothing written", res->files_read);
	}
	bot_delta_sort(c->recs, c->n);
	n = reduce(c->recs, c->n);
	n = cap_records(c->recs, n, &dropped);
	h.flags &= BOT_DELTA_F_SLURM | BOT_DELTA_F_ACCOUNT;
	h.flags |= (dropped ? BOT_DELTA_F_DROPPED : 0) |
		   (res->files_rejected ? BOT_DELTA_F_REJECTED : 0) |
		   (c->rank_drops ? BOT_DELTA_F_RANK_DROPS : 0);
	if (!h.t_harvest)
		h.t_harvest = (uint64_t)time(NULL);
	if (!h.t_end)
		h.t_end = h.t_harvest;
	if (!h.t_start) {
		/* the child's mtimes: at most t_end, at least BOT_HARVEST_MAX_SPAN_S
		 * before it (a claimed 0 would switch the compactor's runtime
		 * bounds off) */
		uint64_t floor = h.t_end > BOT_HARVEST_MAX_SPAN_S ? h.t_end - BOT_HARVEST_MAX_SPAN_S : 0;

		h.t_start = c->oldest < h.t_end ? c->oldest : h.t_end;
		if (h.t_start < floor)
			h.t_start = floor;
	}
	h.files_read = (uint32_t)res->files_read;
	h.files_rejected = (uint32_t)res->files_rejected;
	h.table_digest = c->table_digest;
	memset(h.build_id, 0, sizeof(h.build_id));
	strncpy(h.build_id, "nccl-bot " PACKAGE_VERSION, BOT_SPOOL_BUILD_ID_SIZE);
	if (!h.job[0])
		default_job(c->digests, c->ndig, h.job);
	h.nrecords = n;
	if (bot_delta_name(&h, res->name) < 0)
		return bot_log_errf(err, errlen, "the identity has an empty cluster, job or node");
	if (bot_delta_encode(&h, c->recs, n, &buf, &len, err, errlen) < 0)
		return -1;
	res->records = n;
	res->flags = h.flags;
	res->identity = bot_delta_identity(&h);
	snprintf(res->path, sizeof(res->path), "%s%s%s", c->req->outbox,
		 bot_path_sep(c->req->outbox), res->name);
	rc = write_delta(c->req->outbox, res->name, buf, len, c->log, err, errlen);
	free(buf);
	if (rc == 1) {
		res->outcome = BOT_HARVEST_EXISTS;
		return bot_log_errf(err, errlen, "%s exists: not overwritten (a delta of the same "
				    "step and node; the compactor counts an identity once)",
				    res->path);
	}
	if (rc == 0)
		res->outcome = BOT_HARVEST_WRITTEN;
	return rc;
}

static int collect_until(int fd, const struct bot_harvest_req *req, int64_t deadline,
			 struct bot_harvest_result *res, const struct bot_log *log, int *timed_out)
{
	struct collect c = { req, res, log, NULL, 0, 0, NULL, 0, 0, 0, 0, 0 };
	struct stream *s = malloc(sizeof(*s));
	char err[BOT_DELTA_ERR_MAX + BOT_HARVEST_PATH_MAX], why[BOT_DELTA_ERR_MAX];
	struct bot_delta_hdr probe = req->id;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->outcome = BOT_HARVEST_FAILED;
	*timed_out = 0;
	/* the identity first: a bad one fails before anything is read */
	if (!probe.job[0])
		strcpy(probe.job, "j");
	probe.t_start = probe.t_end = 0;
	probe.nrecords = 0;
	if ((req->id.flags & BOT_DELTA_F_SLURM) && !req->id.t_start)
		snprintf(why, sizeof(why), "an identity from Slurm (flag bit3) needs the step's "
			 "start: the child's file times are not one");
	if (!req->outbox || !req->nsrc || ((req->id.flags & BOT_DELTA_F_SLURM) && !req->id.t_start) ||
	    bot_delta_hdr_check(&probe, why, sizeof(why)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "harvest: %s", !req->outbox ? "no outbox" :
			    !req->nsrc ? "no spool directory" : why);
		free(s);
		return -1;
	}
	if (!s) {
		bot_log_msg(log, BOT_LOG_ERROR, "harvest: out of memory");
		return -1;
	}
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->deadline = deadline;
	/* two units per file (a file and its reason, or a file and at least
	 * one record), the records of max_bytes, the end */
	s->bound = (2 * (uint64_t)max_files_of(req) + 2) * U + max_bytes_of(req);
	if (take_stream(&c, s, err, sizeof(err)) > 0 && finish(&c, err, sizeof(err)) == 0)
		rc = 0;
	if (rc < 0)
		bot_log_msg(log, res->outcome == BOT_HARVEST_FAILED ? BOT_LOG_ERROR : BOT_LOG_WARN,
			    "%s", err);
	*timed_out = s->timed_out;
	free(s);
	free(c.recs);
	free(c.digests);
	return rc;
}

int bot_harvest_collect(int fd, const struct bot_harvest_req *req, struct bot_harvest_result *res,
			const struct bot_log *log)
{
	int timed_out;

	return collect_until(fd, req, now_ms() + (req->timeout_ms ? req->timeout_ms :
						  BOT_HARVEST_TIMEOUT_MS), res, log, &timed_out);
}

/* Wait for the child's exit until deadline (a pidfd where there is one;
 * else a short poll of waitpid): 1 exited, 0 not. The child is not reaped
 * here. */
static int wait_exit(pid_t pid, int64_t deadline)
{
	struct timespec ms = { 0, 1000000 };
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (pfd >= 0) {
		struct pollfd q = { pfd, POLLIN, 0 };
		int64_t left;
		int r;

		do {
			left = deadline - now_ms();
			r = poll(&q, 1, left > 0 ? (int)left : 0);
		} while (r < 0 && errno == EINTR);
		close(pfd);
		return r > 0;
	}
	while (now_ms() < deadline) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid)
			return 1;
		nanosleep(&ms, NULL);
	}
	return 0;
}

/* Reap the child, killed first: never waits more than about a second (a
 * child stuck in the kernel is left behind, said on the log). */
static void reap(pid_t pid, const struct bot_log *log)
{
	struct timespec ms = { 0, 1000000 };

	kill(pid, SIGKILL);
	for (int i = 0; i < 1000; i++) {
		pid_t w = waitpid(pid, NULL, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			return;
		nanosleep(&ms, NULL);
	}
	bot_log_msg(log, BOT_LOG_WARN, "harvest: the reading child %d does not exit after "
		    "SIGKILL: left behind", (int)pid);
}

int bot_harvest_run(const struct bot_harvest_req *req, struct bot_harvest_result *res,
		    const struct bot_log *log)
{
	unsigned ms = req->timeout_ms ? req->timeout_ms : BOT_HARVEST_TIMEOUT_MS;
	int64_t deadline = now_ms() + ms;
	int p[2], rc, timed_out;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->outcome = BOT_HARVEST_FAILED;
	if (pipe2(p, O_CLOEXEC) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "harvest: pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "harvest: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		if (req->child_setup && req->child_setup(req->child_arg) != 0) {
			put_error(p[1], ERR_SETUP, errno, 0, 0);
			_exit(1);
		}
		rc = bot_harvest_read(req, p[1]) < 0 ? 1 : 0;
		close(p[1]);
		if (!rc && req->child_done)
			req->child_done(req->child_arg);
		_exit(rc);
	}
	close(p[1]);
	rc = collect_until(p[0], req, deadline, res, log, &timed_out);
	close(p[0]);
	if (timed_out)
		bot_log_msg(log, BOT_LOG_ERROR, "harvest: the reading child ran past %u ms: killed",
			    ms);
	else if (req->child_done && !wait_exit(pid, deadline))
		bot_log_msg(log, BOT_LOG_WARN, "harvest: the reading child did not finish its "
			    "report within %u ms: killed", ms);
	reap(pid, log);
	return rc;
}
