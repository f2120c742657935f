/*
 * ledger.c - the compactor's ledger (learn/ledger.h, doc/formats.md
 * section 14).
 *
 * In memory, identities and uses are two arrays, each a sorted prefix and
 * an unsorted tail of what this run added (merged into the prefix once the
 * tail grows, and before encoding), so a run of thousands of deltas against
 * a ledger of a million identities costs no quadratic copying.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/grow.h"
#include "common/le.h"
#include "common/readall.h"
#include "common/spool.h"
#include "common/state.h"
#include "common/trailer.h"
#include "common/writeall.h"
#include "learn/ledger.h"
#include "learn/log.h"
#include "policies/context.h"

#define TAIL_MAX 256

int bot_ledger_init(struct bot_ledger *l, const char *fabric)
{
	memset(l, 0, sizeof(*l));
	if (!bot_state_fabric_ok(fabric))
		return -1;
	snprintf(l->fabric, sizeof(l->fabric), "%s", fabric);
	return 0;
}

void bot_ledger_free(struct bot_ledger *l)
{
	free(l->ids);
	free(l->use);
	memset(l, 0, sizeof(*l));
}

static int cmp_id(const void *pa, const void *pb)
{
	const struct bot_ledger_id *a = pa, *b = pb;

	if (a->identity != b->identity)
		return a->identity < b->identity ? -1 : 1;
	return (a->window > b->window) - (a->window < b->window);
}

static int cmp_use(const struct bot_ledger_use *a, const struct bot_ledger_use *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->principal != b->principal)
		return a->principal < b->principal ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->arm > b->arm) - (a->arm < b->arm);
}

static int cmp_use_q(const void *a, const void *b)
{
	return cmp_use(a, b);
}

/* Sort the ids and keep one per identity (the earliest window). */
static void ids_sort(struct bot_ledger *l)
{
	size_t k = 0;

	if (l->ids_sorted == l->nids)
		return;
	qsort(l->ids, l->nids, sizeof(*l->ids), cmp_id);
	for (size_t i = 0; i < l->nids; i++)
		if (!k || l->ids[k - 1].identity != l->ids[i].identity)
			l->ids[k++] = l->ids[i];
	l->nids = l->ids_sorted = k;
}

/* Uses are unique by construction (use_add updates in place). */
static void use_sort(struct bot_ledger *l)
{
	if (l->use_sorted == l->nuse)
		return;
	qsort(l->use, l->nuse, sizeof(*l->use), cmp_use_q);
	l->use_sorted = l->nuse;
}

int bot_ledger_has(const struct bot_ledger *l, uint64_t identity)
{
	size_t lo = 0, hi = l->ids_sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l->ids[mid].identity < identity)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < l->ids_sorted && l->ids[lo].identity == identity)
		return 1;
	for (size_t i = l->ids_sorted; i < l->nids; i++)
		if (l->ids[i].identity == identity)
			return 1;
	return 0;
}

int bot_ledger_add_id(struct bot_ledger *l, uint64_t identity, uint64_t window)
{
	if (bot_ledger_has(l, identity))
		return 0;
	if (l->nids >= BOT_LEDGER_MAX_IDS ||
	    bot_grow((void **)&l->ids, &l->idcap, l->nids + 1, sizeof(*l->ids)))
		return -1;
	l->ids[l->nids++] = (struct bot_ledger_id){ identity, window };
	if (l->nids - l->ids_sorted > TAIL_MAX)
		ids_sort(l);
	return 0;
}

void bot_ledger_prune(struct bot_ledger *l, uint64_t horizon)
{
	size_t k = 0, sorted = 0;

	for (size_t i = 0; i < l->nids; i++) {
		if (l->ids[i].window < horizon)
			continue;
		if (i < l->ids_sorted)
			sorted++;
		l->ids[k++] = l->ids[i];
	}
	l->nids = k;
	l->ids_sorted = sorted;
}

void bot_ledger_set_window(struct bot_ledger *l, uint64_t w)
{
	if (w != l->window)
		l->nuse = l->use_sorted = 0;
	l->window = w;
}

static struct bot_ledger_use *use_find(const struct bot_ledger *l, const struct bot_ledger_use *u)
{
	size_t lo = 0, hi = l->use_sorted;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_use(&l->use[mid], u) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < l->use_sorted && !cmp_use(&l->use[lo], u))
		return &l->use[lo];
	for (size_t i = l->use_sorted; i < l->nuse; i++)
		if (!cmp_use(&l->use[i], u))
			return &l->use[i];
	return NULL;
}

uint64_t bot_ledger_used(const struct bot_ledger *l, int kind, uint64_t principal, uint64_t key,
			 int arm)
{
	struct bot_ledger_use u = { (uint8_t)kind, (uint8_t)arm, principal, key, 0 };
	const struct bot_ledger_use *f = use_find(l, &u);

	return f ? f->count : 0;
}

int bot_ledger_use_add(struct bot_ledger *l, int kind, uint64_t principal, uint64_t key, int arm,
		       uint64_t count)
{
	struct bot_ledger_use u = { (uint8_t)kind, (uint8_t)arm, principal, key, count };
	struct bot_ledger_use *f;

	if (!count)
		return 0;
	f = use_find(l, &u);
	if (f) {
		f->count = count > UINT64_MAX - f->count ? UINT64_MAX : f->count + count;
		return 0;
	}
	if (l->nuse >= BOT_LEDGER_MAX_USES ||
	    bot_grow((void **)&l->use, &l->usecap, l->nuse + 1, sizeof(*l->use)))
		return -1;
	l->use[l->nuse++] = u;
	if (l->nuse - l->use_sorted > TAIL_MAX)
		use_sort(l);
	return 0;
}

int bot_ledger_encode(struct bot_ledger *l, uint8_t **buf, size_t *len, char *err,
		      size_t errlen)
{
	size_t n, off;
	uint8_t *b;

	*buf = NULL;
	ids_sort(l);
	use_sort(l);
	if (l->nids > BOT_LEDGER_MAX_IDS || l->nuse > BOT_LEDGER_MAX_USES)
		return bot_log_errf(err, errlen, "ledger of %s: over its bounds", l->fabric);
	n = BOT_LEDGER_HDR_SIZE + l->nids * BOT_LEDGER_ID_SIZE + l->nuse * BOT_LEDGER_USE_SIZE +
	    BOT_LEDGER_TRAILER_SIZE;
	b = calloc(1, n);
	if (!b)
		return bot_log_errf(err, errlen, "ledger of %s: out of memory", l->fabric);
	memcpy(b, BOT_LEDGER_MAGIC, 8);
	bot_le_put32(b + 8, BOT_LEDGER_VERSION);
	memcpy(b + 16, l->fabric, strlen(l->fabric));
	bot_le_put64(b + 80, l->window);
	bot_le_put32(b + 88, (uint32_t)l->nids);
	bot_le_put32(b + 92, (uint32_t)l->nuse);
	off = BOT_LEDGER_HDR_SIZE;
	for (size_t i = 0; i < l->nids; i++, off += BOT_LEDGER_ID_SIZE) {
		bot_le_put64(b + off, l->ids[i].identity);
		bot_le_put64(b + off + 8, l->ids[i].window);
	}
	for (size_t i = 0; i < l->nuse; i++, off += BOT_LEDGER_USE_SIZE) {
		b[off] = l->use[i].kind;
		b[off + 1] = l->use[i].arm;
		bot_le_put64(b + off + 8, l->use[i].principal);
		bot_le_put64(b + off + 16, l->use[i].key);
		bot_le_put64(b + off + 24, l->use[i].count);
	}
	bot_trailer_put(b, off);
	*buf = b;
	*len = n;
	return 0;
}

static int key_ok(uint64_t k)
{
	uint32_t nr = bot_key_nranks(k), nn = bot_key_nnodes(k);

	return bot_key_coll(k) < 5 && nr >= 1 && nn >= 1 && (nn <= nr || nn == 65535);
}

int bot_ledger_parse(const char *name, const uint8_t *buf, size_t len, struct bot_ledger *out,
		     char *err, size_t errlen)
{
	char fabric[BOT_LEDGER_FABRIC_MAX + 1];
	uint32_t nids, nuse;
	size_t body, off;

	memset(out, 0, sizeof(*out));
	if (len < BOT_LEDGER_HDR_SIZE + BOT_LEDGER_TRAILER_SIZE)
		return bot_log_errf(err, errlen, "%s: truncated: %zu bytes, shorter than header "
				    "and trailer", name, len);
	if (len > BOT_LEDGER_MAX_FILE)
		return bot_log_errf(err, errlen, "%s: %zu bytes, over the limit", name, len);
	if (memcmp(buf, BOT_LEDGER_MAGIC, 8))
		return bot_log_errf(err, errlen, "%s: offset 0: bad magic (not an nccl-bot "
				    "ledger)", name);
	if (bot_le_get32(buf + 8) != BOT_LEDGER_VERSION)
		return bot_log_errf(err, errlen, "%s: offset 8: ledger format version %u (this "
				    "build reads %d)", name, bot_le_get32(buf + 8),
				    BOT_LEDGER_VERSION);
	if (bot_le_get32(buf + 12))
		return bot_log_errf(err, errlen, "%s: offset 12: unknown flags 0x%x", name,
				    bot_le_get32(buf + 12));
	nids = bot_le_get32(buf + 88);
	nuse = bot_le_get32(buf + 92);
	if (nids > BOT_LEDGER_MAX_IDS || nuse > BOT_LEDGER_MAX_USES)
		return bot_log_errf(err, errlen, "%s: offset 88: %u identities and %u uses, over "
				    "the limits", name, nids, nuse);
	body = BOT_LEDGER_HDR_SIZE + (size_t)nids * BOT_LEDGER_ID_SIZE +
	       (size_t)nuse * BOT_LEDGER_USE_SIZE;
	if (len != body + BOT_LEDGER_TRAILER_SIZE)
		return bot_log_errf(err, errlen, "%s: length %zu, but the counts need %zu bytes",
				    name, len, body + BOT_LEDGER_TRAILER_SIZE);
	if (!bot_trailer_ok(buf, body, NULL))
		return bot_log_errf(err, errlen, "%s: offset %zu: CRC-32C mismatch", name, body);
	memcpy(fabric, buf + 16, BOT_LEDGER_FABRIC_MAX);
	fabric[BOT_LEDGER_FABRIC_MAX] = 0;
	if (!bot_state_fabric_ok(fabric) || !bot_le_zero(buf + 16 + strlen(fabric),
						  BOT_LEDGER_FABRIC_MAX - strlen(fabric)))
		return bot_log_errf(err, errlen, "%s: offset 16: fabric name not "
				    "[a-z0-9][a-z0-9._-]{0,63}, NUL padded", name);
	bot_ledger_init(out, fabric);
	out->window = bot_le_get64(buf + 80);
	if ((nids && !(out->ids = malloc((size_t)nids * sizeof(*out->ids)))) ||
	    (nuse && !(out->use = malloc((size_t)nuse * sizeof(*out->use))))) {
		bot_ledger_free(out);
		return bot_log_errf(err, errlen, "%s: out of memory", name);
	}
	out->idcap = nids;
	out->usecap = nuse;
	off = BOT_LEDGER_HDR_SIZE;
	for (uint32_t i = 0; i < nids; i++, off += BOT_LEDGER_ID_SIZE) {
		struct bot_ledger_id *d = &out->ids[i];

		d->identity = bot_le_get64(buf + off);
		d->window = bot_le_get64(buf + off + 8);
		if (d->window > out->window || (i && d->identity <= out->ids[i - 1].identity)) {
			const char *why = d->window > out->window ? "window after the ledger's" :
					  "not strictly ascending";

			bot_ledger_free(out);
			return bot_log_errf(err, errlen, "%s: identity %u (offset %zu): %s", name, i,
					    off, why);
		}
		out->nids = out->ids_sorted = i + 1;
	}
	for (uint32_t i = 0; i < nuse; i++, off += BOT_LEDGER_USE_SIZE) {
		struct bot_ledger_use *u = &out->use[i];
		const char *why = NULL;

		u->kind = buf[off];
		u->arm = buf[off + 1];
		u->principal = bot_le_get64(buf + off + 8);
		u->key = bot_le_get64(buf + off + 16);
		u->count = bot_le_get64(buf + off + 24);
		if (u->kind != BOT_LEDGER_UID && u->kind != BOT_LEDGER_ACCOUNT)
			why = "unknown principal kind";
		else if (u->kind == BOT_LEDGER_UID && u->principal > UINT32_MAX)
			why = "a uid over 2^32-1";
		else if (u->arm >= BOT_NARMS && u->arm != BOT_LEDGER_CALLS)
			why = "arm out of range";
		else if (!bot_le_zero(buf + off + 2, 6))
			why = "reserved bytes not zero";
		else if (!key_ok(u->key))
			why = "not a context key";
		else if (!u->count)
			why = "zero count";
		else if (i && cmp_use(u, &out->use[i - 1]) <= 0)
			why = "not strictly ascending";
		if (why) {
			bot_ledger_free(out);
			return bot_log_errf(err, errlen, "%s: use %u (offset %zu): %s", name, i, off,
					    why);
		}
		out->nuse = out->use_sorted = i + 1;
	}
	return 0;
}

void bot_ledger_file_name(uint64_t digest, char name[BOT_LEDGER_NAME_MAX])
{
	snprintf(name, BOT_LEDGER_NAME_MAX, "ledger-%016" PRIx64 ".nbl", digest);
}

/* mkdirat + open without following a link; made 0700 whatever the umask. */
static int open_sub(int at, const char *name, const char *path, char *err, size_t errlen)
{
	int fd;

	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return bot_log_errf(err, errlen, "%s: %s", path, strerror(errno));
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", path, errno == ENOTDIR || errno == ELOOP ?
				    "not a directory (or a symbolic link)" : strerror(errno));
	if (fchmod(fd, 0700) < 0) {
		int e = errno;

		close(fd);
		return bot_log_errf(err, errlen, "%s: cannot make it 0700: %s", path, strerror(e));
	}
	return fd;
}

int bot_ledger_open_dir(const char *dir, const char *fabric, char *path, size_t pathlen,
			char *err, size_t errlen)
{
	int dfd, top, fd;

	if (fabric && !bot_state_fabric_ok(fabric))
		return bot_log_errf(err, errlen, "fabric name '%s' is not "
				    "[a-z0-9][a-z0-9._-]{0,63}", fabric);
	if ((size_t)snprintf(path, pathlen, "%s%s.ledger", dir, bot_path_sep(dir)) >= pathlen)
		return bot_log_errf(err, errlen, "%s%s.ledger: path too long", dir,
				    bot_path_sep(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return bot_log_errf(err, errlen, "%s: %s", dir, strerror(errno));
	top = open_sub(dfd, ".ledger", path, err, errlen);
	close(dfd);
	if (top < 0 || !fabric)
		return top;
	snprintf(path, pathlen, "%s%s.ledger/%s", dir, bot_path_sep(dir), fabric);
	fd = open_sub(top, fabric, path, err, errlen);
	close(top);
	return fd;
}

int bot_ledger_load(int ldir, const char *path, const char *fabric, uint64_t digest,
		    struct bot_ledger *out, char *err, size_t errlen)
{
	static const struct bot_open_rule rule = { "ledger", BOT_LEDGER_MAX_FILE, 1, 0, 0, 0, 0 };
	char name[BOT_LEDGER_NAME_MAX], full[4200];
	uint8_t *buf;
	size_t len;

	memset(out, 0, sizeof(*out));
	bot_ledger_file_name(digest, name);
	snprintf(full, sizeof(full), "%s/%s", path, name);
	if (bot_read_at(ldir, name, full, &rule, &buf, &len, err, errlen) < 0) {
		bot_log_esc_inplace(err, errlen);
		return -1;
	}
	if (bot_digest64(buf, len) != digest) {
		free(buf);
		return bot_log_errf(err, errlen, "%s: its bytes do not match its name's digest",
				    full);
	}
	if (bot_ledger_parse(full, buf, len, out, err, errlen) < 0) {
		free(buf);
		return -1;
	}
	free(buf);
	if (strcmp(out->fabric, fabric)) {
		bot_ledger_free(out);
		return bot_log_errf(err, errlen, "%s: the ledger of fabric %s, not %s", full,
				    out->fabric, fabric);
	}
	return 0;
}

int bot_ledger_write(int ldir, const char *path, struct bot_ledger *l, uint64_t *digest,
		     char *err, size_t errlen)
{
	const struct bot_write_rule r = { .mode = 0600, .chmod = 1, .clear_stale = 1,
					  .sync_dir = 1 };
	static const struct bot_open_rule rule = { "ledger", BOT_LEDGER_MAX_FILE, 1, 0, 0, 0, 0 };
	char name[BOT_LEDGER_NAME_MAX], full[4200], why[BOT_LEDGER_ERR_MAX];
	uint8_t *buf, *old = NULL;
	size_t len, olen = 0;
	int rc = 0;

	if (bot_ledger_encode(l, &buf, &len, err, errlen) < 0)
		return -1;
	*digest = bot_digest64(buf, len);
	bot_ledger_file_name(*digest, name);
	snprintf(full, sizeof(full), "%s/%s", path, name);
	/* content-addressed: when the same bytes are there, nothing to write;
	 * a file of that name with other bytes (damaged) is replaced */
	if (bot_read_at(ldir, name, full, &rule, &old, &olen, why, sizeof(why)) < 0 ||
	    olen != len || memcmp(old, buf, len)) {
		rc = bot_write_whole_at(ldir, path, name, buf, len, &r, err, errlen);
		if (rc < 0)
			bot_log_esc_inplace(err, errlen);
	}
	free(old);
	free(buf);
	return rc;
}

struct lfile {
	char name[BOT_LEDGER_NAME_MAX];
	struct timespec mtime;
};

static int cmp_lfile(const void *pa, const void *pb)
{
	const struct lfile *a = pa, *b = pb;

	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec > b->mtime.tv_sec ? -1 : 1;
	if (a->mtime.tv_nsec != b->mtime.tv_nsec)
		return a->mtime.tv_nsec > b->mtime.tv_nsec ? -1 : 1;
	return -strcmp(a->name, b->name);
}

struct lfiles {
	int ldir;
	struct lfile *v;
	size_t n, cap;
};

/* bot_dir_scan's visitor: 0, or 1 out of memory. */
static int list_lfile(const struct dirent *e, void *arg)
{
	struct lfiles *l = arg;
	struct stat st;
	size_t len = strlen(e->d_name);

	if (len != 27 || strncmp(e->d_name, "ledger-", 7) || strcmp(e->d_name + 23, ".nbl") ||
	    fstatat(l->ldir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	if (bot_grow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v)))
		return 1;
	memcpy(l->v[l->n].name, e->d_name, len + 1);
	l->v[l->n++].mtime = st.st_mtim;
	return 0;
}

void bot_ledger_prune_files(int ldir, unsigned keep, uint64_t always)
{
	char keep_name[BOT_LEDGER_NAME_MAX];
	struct lfiles l = { ldir, NULL, 0, 0 };
	struct lfile *v;
	size_t n;

	bot_ledger_file_name(always, keep_name);
	/* best effort: a listing cut short prunes among what was read */
	(void)bot_dir_scan(ldir, list_lfile, &l);
	v = l.v;
	n = l.n;
	if (n)
		qsort(v, n, sizeof(*v), cmp_lfile);
	for (size_t i = keep; i < n; i++)
		if (strcmp(v[i].name, keep_name))
			unlinkat(ldir, v[i].name, 0);
	free(v);
}

int bot_ledger_provenance(int ldir, const char *path, const char *text, size_t len, char *err,
			  size_t errlen)
{
	int fd = openat(ldir, "provenance.log",
			O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	struct stat st;
	size_t done = 0;

	if (fd < 0)
		return bot_log_errf(err, errlen, "%s/provenance.log: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return bot_log_errf(err, errlen, "%s/provenance.log: not a regular file with one "
				    "link", path);
	}
	while (done < len) {
		ssize_t w = write(fd, text + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			int e = errno;

			close(fd);
			return bot_log_errf(err, errlen, "%s/provenance.log: %s", path, strerror(e));
		}
		done += (size_t)w;
	}
	if (fsync(fd) < 0) {
		int e = errno;

		close(fd);
		return bot_log_errf(err, errlen, "%s/provenance.log: %s", path, strerror(e));
	}
	close(fd);
	return 0;
}
