/*
 * compile.c - spool files -> knowledge base -> step table (learn/compile.h).
 *
 * Three passes. Read: every file is opened the safe way (no link, no
 * FIFO or device, a size cap; bot_compile_read_file), read whole and
 * validated by the spool parser; a bad one is skipped with its reason. Gather: cost rows become priors, clean
 * samples are kept as (commId, collective, sequence, arm, duration), and
 * summaries give each context its call count. Reduce: samples of one
 * collective on several ranks are the same call seen from each rank, each
 * span including the wait for the slowest peer (arrival skew); the minimum
 * over ranks is the collective's own duration, one sample per call. Then
 * the policy plans every context that has a prior, the entries go into the
 * table most-called first, and what does not fit the size budget is dropped
 * (those contexts fall back to the prior on every rank alike).
 *
 * Memory is bounded per batch (compile.h BOT_COMPILE_MAX_*): files listed,
 * clean samples kept, contexts; past a bound the batch is refused whole.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/grow.h"
#include "common/readall.h"
#include "common/spool.h"
#include "common/state.h"
#include "learn/compile.h"

struct sample {
	uint64_t comm_id, seq, key, ns;
	uint8_t arm;
};

/* A set of u64 (open addressing; 0 is kept apart): table digests and file
 * ids, so that a batch of many files costs no quadratic scan. */
struct set {
	uint64_t *v;
	size_t n, cap;			/* cap: a power of two, or 0 */
	int has_zero;
};

struct gather {
	struct sample *s;
	size_t ns, scap;
	struct set digests;		/* distinct table digests */
	struct set seen;		/* ids of the files read, for the second-copy check */
	uint64_t *src;			/* ids of the files read, in order */
	size_t nsrc, srccap;
};

void bot_compile_opts_default(struct bot_compile_opts *o)
{
	memset(o, 0, sizeof(*o));
	bot_policy_init(&o->policy, "thompson");
	o->ncomms = 8;
	o->calls = BOT_COMPILE_CALLS;
	o->round = -1;
	o->min_bytes_log2 = 20;
}

uint64_t bot_compile_round_calls(const struct bot_kb_ctx *c, uint64_t floor_calls)
{
	double per = bot_kb_calls_per_comm(c);

	if (!(per > (double)floor_calls))
		return floor_calls;
	if (per >= 18446744073709549568.0)
		return UINT64_MAX;
	return (uint64_t)ceil(per);
}

static uint64_t rec_key(const struct bot_spool_rec *r)
{
	return bot_ctx_key(r->coll, bot_size_bucket(r->nbytes), r->nranks, r->nnodes);
}

static size_t set_slot(const struct set *st, uint64_t x)
{
	size_t i = (size_t)(bot_mix64(x) & (st->cap - 1));

	while (st->v[i] && st->v[i] != x)
		i = (i + 1) & (st->cap - 1);
	return i;
}

static int set_has(const struct set *st, uint64_t x)
{
	if (!x)
		return st->has_zero;
	return st->cap && st->v[set_slot(st, x)] == x;
}

/* Add x: 1 added, 0 present, -1 out of memory. */
static int set_add(struct set *st, uint64_t x)
{
	if (!x) {
		int had = st->has_zero;

		st->has_zero = 1;
		return !had;
	}
	if (set_has(st, x))
		return 0;
	if (2 * (st->n + 1) > st->cap) {
		struct set bigger = { NULL, 0, st->cap ? 2 * st->cap : 64, st->has_zero };

		bigger.v = calloc(bigger.cap, sizeof(*bigger.v));
		if (!bigger.v)
			return -1;
		for (size_t i = 0; i < st->cap; i++)
			if (st->v[i])
				bigger.v[set_slot(&bigger, st->v[i])] = st->v[i];
		bigger.n = st->n;
		free(st->v);
		*st = bigger;
	}
	st->v[set_slot(st, x)] = x;
	st->n++;
	return 1;
}

static size_t set_count(const struct set *st)
{
	return st->n + (size_t)st->has_zero;
}

/* Validated records into the gather lists and the priors of kb: 0, -1 out
 * of memory, or -2 past BOT_COMPILE_MAX_SAMPLES. */
static int gather_recs(struct gather *g, struct bot_kb *kb, const struct bot_spool_rec *recs,
		       size_t n, struct bot_compile_report *rep)
{
	for (size_t i = 0; i < n; i++) {
		const struct bot_spool_rec *r = &recs[i];
		uint64_t key;

		if (r->kind == BOT_SPOOL_PROC)
			continue;	/* what ran, not a measurement (formats.md 9) */
		key = rec_key(r);
		if (!(r->flags & BOT_SPOOL_F_NO_COST) && bot_kb_offer_prior(kb, key, r->cost) < 0)
			return -1;
		if (r->kind == BOT_SPOOL_SUMMARY) {
			/* one rank's estimate of its communicator's calls in
			 * the job: the state keeps how many (formats.md 12),
			 * a summary of fewer than BOT_COMPILE_CALLS calls as
			 * that fraction of one */
			uint64_t units = r->calls >= BOT_COMPILE_CALLS ? 65536 :
					 r->calls * 65536 / BOT_COMPILE_CALLS;

			if (bot_kb_add_counts(kb, key, r->calls, units) < 0)
				return -1;
			continue;
		}
		rep->samples++;
		if (!bot_spool_clean(r) || r->arm >= BOT_NARMS) {
			rep->samples_unclean++;
			continue;
		}
		if (g->ns >= BOT_COMPILE_MAX_SAMPLES)
			return -2;
		if (bot_grow((void **)&g->s, &g->scap, g->ns + 1, sizeof(*g->s)))
			return -1;
		g->s[g->ns++] = (struct sample){ r->comm_id, r->seq, key, r->duration_ns, r->arm };
	}
	return 0;
}

/* One validated file into the gather lists and the priors of kb: as
 * gather_recs, and its table digest counted. */
static int gather_file(struct gather *g, struct bot_kb *kb, const struct bot_spool_file *f,
		       struct bot_compile_report *rep)
{
	if (set_add(&g->digests, f->hdr.table_digest) < 0)
		return -1;
	return gather_recs(g, kb, f->recs, (size_t)f->hdr.nrecords, rep);
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct sample *a = pa, *b = pb;

	if (a->comm_id != b->comm_id)
		return a->comm_id < b->comm_id ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	return (a->ns > b->ns) - (a->ns < b->ns);
}

/* Minimum over the ranks of each collective, into kb. */
static int reduce_samples(struct gather *g, struct bot_kb *kb, struct bot_compile_report *rep)
{
	if (g->ns)
		qsort(g->s, g->ns, sizeof(*g->s), cmp_sample);
	for (size_t i = 0; i < g->ns;) {
		size_t j = i;

		/* Sorted by duration last: the group's first is its minimum. */
		while (j < g->ns && g->s[j].comm_id == g->s[i].comm_id && g->s[j].key == g->s[i].key &&
		       g->s[j].seq == g->s[i].seq && g->s[j].arm == g->s[i].arm)
			j++;
		if (bot_kb_add_us(kb, g->s[i].key, g->s[i].arm, (double)g->s[i].ns / 1000.0) < 0)
			return -1;
		rep->collectives++;
		i = j;
	}
	return 0;
}

struct ranked {
	struct bot_table_entry e;
	uint64_t calls, key;
	int trivial;			/* "leave it to AUTO": no probe, AUTO's arm */
};

/* Entries that decide something first, then those that say "AUTO", each
 * most-called first: past the size budget the "AUTO" ones go first. */
static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

	if (a->trivial != b->trivial)
		return a->trivial - b->trivial;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	/* keys are unique: a total order, the same with any qsort */
	return (a->key > b->key) - (a->key < b->key);
}

/* Plan every context with a prior into t, most-called first, then fit and
 * normalise. kb is in key order (bot_kb_sorted). */
static int plan_all(const struct bot_kb *kb, const struct bot_compile_opts *o,
		    struct bot_table *t, struct bot_compile_report *rep, char *err, size_t errlen)
{
	size_t n = bot_kb_count(kb), m = 0;
	struct ranked *r = malloc((n ? n : 1) * sizeof(*r));
	/* no round in flight: a step's feedback is merged before the next
	 * compile counts it, and steps that start before it share its round
	 * (doc/policies.md, the guarantee's concurrent jobs) */
	struct bot_shape shape = { o->seed, o->ncomms, o->calls, rep->round, 0 };
	struct bot_plan_memo *memo = bot_plan_memo_new(kb);
	size_t i, k = 0;
	int dropped;

	if (!r || !memo) {
		free(r);
		bot_plan_memo_free(memo);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		const struct bot_kb_ctx *c = bot_kb_at(kb, i);
		unsigned b = bot_key_bucket(c->key);
		struct bot_plan plan;

		if (!c->has_prior || bot_bucket_lo(b) < (1ULL << o->min_bytes_log2))
			continue;
		rep->contexts++;
		shape.calls = bot_compile_round_calls(c, o->calls);
		if (bot_policy_plan_memo(&o->policy, kb, memo, c->key, &shape, &plan) < 0)
			continue;
		/* "Leave it to AUTO" is said too for the learning policies
		 * that probe: a context the table does not name gets the
		 * policy on the prior, which in a v3 table (formats.md 8) no
		 * longer probes but still forces the argmin of the corrected
		 * prior where the table has scale corrections, an arm the
		 * budgeted plan did not choose (tuner/decide.c). Ranked after
		 * every entry that decides something. */
		r[m].trivial = !plan.nprobe && (plan.exploit == BOT_ARM_AUTO ||
						plan.exploit == bot_prior_argmin(c->prior));
		if (r[m].trivial) {
			if (!bot_policy_probes_on_prior(o->policy.id))
				continue;
			plan.exploit = BOT_ARM_AUTO;
			plan.nchannels = 0;
		}
		r[m].e.coll = (uint8_t)bot_key_coll(c->key);
		r[m].e.bucket = (uint8_t)b;
		r[m].e.plan = plan;
		r[m].calls = c->calls;
		r[m].key = c->key;
		m++;
	}
	bot_plan_memo_free(memo);
	if (m)
		qsort(r, m, sizeof(*r), cmp_ranked);
	/* Shapes in ranked order too: past 256 shapes, the least-called
	 * contexts lose theirs. */
	for (i = 0; i < m && k < BOT_TABLE_MAX_ENTRIES; i++) {
		int shape_idx = bot_table_shape(t, bot_key_nranks(r[i].key), bot_key_nnodes(r[i].key));

		if (shape_idx < 0) {
			rep->dropped++;
			rep->dropped_auto += r[i].trivial;
			continue;
		}
		r[i].e.shape = (uint8_t)shape_idx;
		t->entries[k++] = r[i].e;
		rep->entries_auto += r[i].trivial;
	}
	rep->dropped += m - i;	/* past the entry capacity */
	for (; i < m; i++)
		rep->dropped_auto += r[i].trivial;
	t->nentries = (uint16_t)k;
	free(r);
	dropped = bot_table_fit(t, 0);
	if (dropped < 0 || bot_table_normalize(t) < 0) {
		snprintf(err, errlen, "cannot fit the step table: %s",
			 bot_table_strerror(dropped < 0 ? dropped : BOT_TABLE_EINVAL));
		return -1;
	}
	rep->dropped += (size_t)dropped;
	rep->entries = t->nentries;
	{
		/* the fit dropped the last entries, which rank the trivial last */
		size_t cut = (size_t)dropped < rep->entries_auto ? (size_t)dropped : rep->entries_auto;

		rep->entries_auto -= cut;
		rep->dropped_auto += cut;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* dir/name (name NULL: dir as given; no second '/' after a dir given as
 * "spool/"), opened later from dirfd. */
static int push_path(struct bot_compile_paths *p, const char *dir, const char *name, int dirfd)
{
	const char *sep = bot_path_sep(dir);
	size_t dlen = strlen(dir), len = dlen + (name ? strlen(sep) + strlen(name) : 0) + 1;

	if (bot_grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) ||
	    bot_grow((void **)&p->at, &p->atcap, p->n + 1, sizeof(*p->at)) ||
	    !(p->v[p->n] = malloc(len)))
		return -1;
	if (name)
		snprintf(p->v[p->n], len, "%s%s%s", dir, sep, name);
	else
		memcpy(p->v[p->n], dir, len);
	p->at[p->n].dirfd = dirfd;
	p->at[p->n].name = name ? dlen + strlen(sep) : 0;
	p->n++;
	return 0;
}

static int too_many(const char *where, char *err, size_t errlen)
{
	return bot_log_errf(err, errlen, "%s: more than %u spool files in one batch: refused "
			    "whole (split the input)", where, BOT_COMPILE_MAX_FILES);
}

struct list_arg {
	struct bot_compile_paths *p;
	const char *dir;
	int fd;
};

/* bot_dir_scan's visitor: 0, or 1 over BOT_COMPILE_MAX_FILES, 2 out of
 * memory. */
static int list_one(const struct dirent *e, void *arg)
{
	struct list_arg *a = arg;

	if (!bot_spool_name_ok(e->d_name))
		return 0;
	if (a->p->n >= BOT_COMPILE_MAX_FILES)
		return 1;
	return push_path(a->p, a->dir, e->d_name, a->fd) < 0 ? 2 : 0;
}

/* Every *.spool entry of a directory (not hidden), sorted by name, to be
 * opened from the directory's fd. A readdir() error is an error: a partial
 * listing would be merged as if it were the whole job. */
static int list_dir(const char *dir, struct bot_compile_paths *p, char *err, size_t errlen)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;
	size_t first = p->n;
	struct list_arg a = { p, dir, fd };

	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", dir, strerror(errno));
	if (bot_grow((void **)&p->dirs, &p->dircap, p->ndirs + 1, sizeof(*p->dirs))) {
		close(fd);
		return bot_log_errf(err, errlen, "out of memory");
	}
	p->dirs[p->ndirs++] = fd;	/* closed by bot_compile_paths_free */
	rc = bot_dir_scan(fd, list_one, &a);
	if (rc == 1)
		return too_many(dir, err, errlen);
	if (rc == 2)
		return bot_log_errf(err, errlen, "out of memory");
	if (rc < 0)
		return bot_log_errf(err, errlen, "%s: cannot list the directory: %s (a partial "
				    "listing is not the whole input)", dir, strerror(-rc));
	/* One directory: the same prefix and fd, so sorting the paths alone
	 * sorts by name and keeps at[] right. */
	if (p->n - first > 1)
		qsort(p->v + first, p->n - first, sizeof(*p->v), cmp_str);
	return 0;
}

int bot_compile_list(const char *const *paths, size_t npaths, struct bot_compile_paths *out,
		     char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		int rc;

		/* An argument may be a link to a directory (the caller named it);
		 * files themselves are never read through a link. */
		if (stat(paths[i], &st) < 0)
			rc = bot_log_errf(err, errlen, "%s: %s", bot_path_shown(paths[i]),
					  strerror(errno));
		else if (S_ISDIR(st.st_mode))
			rc = list_dir(paths[i], out, err, errlen);
		else if (out->n >= BOT_COMPILE_MAX_FILES)
			rc = too_many(paths[i], err, errlen);
		else
			rc = push_path(out, paths[i], NULL, AT_FDCWD) < 0 ?
			     bot_log_errf(err, errlen, "out of memory") : 0;
		if (rc < 0) {
			bot_compile_paths_free(out);
			return -1;
		}
	}
	return 0;
}

void bot_compile_paths_free(struct bot_compile_paths *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i]);
	for (size_t i = 0; i < p->ndirs; i++)
		close(p->dirs[i]);
	free(p->v);
	free(p->at);
	free(p->dirs);
	memset(p, 0, sizeof(*p));
}

int bot_compile_read_file(const struct bot_compile_paths *p, size_t i, struct bot_spool_file *f,
			  char *err, size_t errlen)
{
	int rc = bot_spool_read_at(p->at[i].dirfd, p->v[i] + p->at[i].name, p->v[i], f, err,
				   errlen);

	if (rc < 0)
		bot_log_esc_inplace(err, errlen);
	return rc;
}

struct read_ctx {
	struct gather *g;
	struct bot_kb *kb;
	const struct bot_state *dedup;
	struct bot_compile_report *rep;
	const struct bot_log *log;
	char *err;
	size_t errlen;
};

/* Skip f? Already merged into the state, or a second copy in this batch. */
static int skip_file(struct read_ctx *x, const char *path, const struct bot_spool_file *f)
{
	if (set_has(&x->g->seen, f->digest)) {
		bot_log_msg(x->log, BOT_LOG_WARN, "skipping %s: the same bytes as another "
			    "file of this batch", path);
		x->rep->files_duplicate++;
		return 1;
	}
	if (x->dedup && bot_state_has_source(x->dedup, f->digest)) {
		x->rep->files_merged_before++;
		return 1;
	}
	return 0;
}

static int read_one(struct read_ctx *x, const struct bot_compile_paths *list, size_t i)
{
	const char *path = list->v[i];
	struct bot_spool_file f;
	char why[BOT_SPOOL_ERR_MAX];
	int rc;

	x->rep->files++;
	if (bot_compile_read_file(list, i, &f, why, sizeof(why)) < 0) {
		x->rep->files_rejected++;
		bot_log_msg(x->log, BOT_LOG_WARN, "rejected %s", why);
		return 0;
	}
	if (skip_file(x, path, &f)) {
		bot_spool_free(&f);
		return 0;
	}
	if (bot_grow((void **)&x->g->src, &x->g->srccap, x->g->nsrc + 1, sizeof(*x->g->src)) ||
	    set_add(&x->g->seen, f.digest) < 0)
		rc = -1;
	else
		rc = gather_file(x->g, x->kb, &f, x->rep);
	bot_spool_free(&f);
	if (rc == -2)
		return bot_log_errf(x->err, x->errlen, "%s: more than %llu clean samples in one "
				    "batch: refused whole (split the input)", path,
				    (unsigned long long)BOT_COMPILE_MAX_SAMPLES);
	if (rc < 0)
		return bot_log_errf(x->err, x->errlen, "out of memory");
	if (bot_kb_count(x->kb) > BOT_COMPILE_MAX_CONTEXTS)
		return bot_log_errf(x->err, x->errlen, "%s: more than %u contexts in one batch: "
				    "refused whole (split the input)", path,
				    BOT_COMPILE_MAX_CONTEXTS);
	x->g->src[x->g->nsrc++] = f.digest;
	return 0;
}

int bot_compile_read(const char *const *paths, size_t npaths, const struct bot_state *dedup,
		     struct bot_kb **kb_out, uint64_t **src, size_t *nsrc,
		     struct bot_compile_report *rep, const struct bot_log *log, char *err,
		     size_t errlen)
{
	struct gather g = { 0 };
	struct bot_kb *kb = bot_kb_new();
	struct read_ctx x = { &g, kb, dedup, rep, log, err, errlen };
	struct bot_compile_paths list = { 0 };
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	*kb_out = NULL;
	*src = NULL;
	*nsrc = 0;
	if (!kb) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (bot_compile_list(paths, npaths, &list, err, errlen) < 0)
		goto out;
	for (size_t i = 0; i < list.n; i++)
		if (read_one(&x, &list, i) < 0)
			goto out;
	if (reduce_samples(&g, kb, rep) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rep->jobs = set_count(&g.digests);
	*kb_out = bot_kb_sorted(kb);
	if (!*kb_out) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	*src = g.src;
	*nsrc = g.nsrc;
	g.src = NULL;
	rc = 0;
out:
	bot_compile_paths_free(&list);
	free(g.s);
	free(g.digests.v);
	free(g.seen.v);
	free(g.src);
	bot_kb_free(kb);
	return rc;
}

/* Contexts already in ascending key order (a snapshot is written so)? Then
 * planning from kb itself is planning from bot_kb_sorted(kb): the same
 * contexts in the same order, and the same scale-peer chains, which
 * follow insertion order. */
static int in_key_order(const struct bot_kb *kb)
{
	size_t n = bot_kb_count(kb);

	for (size_t i = 1; i < n; i++)
		if (bot_kb_at(kb, i - 1)->key >= bot_kb_at(kb, i)->key)
			return 0;
	return 1;
}

int bot_compile_plan(const struct bot_kb *kb, const struct bot_compile_opts *o, uint64_t round,
		     struct bot_table *t, struct bot_compile_report *rep, char *err, size_t errlen)
{
	struct bot_kb *sorted = NULL;
	int rc;

	bot_table_init(t, o->policy.id, o->seed);
	t->min_bytes_log2 = (uint8_t)o->min_bytes_log2;
	t->allow = o->policy.allow;
	t->flags |= BOT_TABLE_F_MEASURE;
	if (o->policy.id == BOT_POLICY_SHADOW)
		t->flags |= BOT_TABLE_F_SHADOW;
	if (!in_key_order(kb) && !(sorted = bot_kb_sorted(kb))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rep->round = round;
	rep->contexts = rep->entries = rep->dropped = 0;
	rep->entries_auto = rep->dropped_auto = 0;
	rc = plan_all(sorted ? sorted : kb, o, t, rep, err, errlen);
	bot_kb_free(sorted);
	return rc;
}

int bot_compile_spools(const char *const *paths, size_t npaths, const struct bot_compile_opts *o,
		       struct bot_table *t, struct bot_compile_report *rep,
		       const struct bot_log *log, char *err, size_t errlen)
{
	uint64_t *src;
	struct bot_kb *kb;
	size_t nsrc;
	int rc;

	if (bot_compile_read(paths, npaths, NULL, &kb, &src, &nsrc, rep, log, err, errlen) < 0) {
		bot_table_init(t, o->policy.id, o->seed);
		return -1;
	}
	free(src);
	rc = bot_compile_plan(kb, o, o->round >= 0 ? (uint64_t)o->round : rep->jobs, t, rep, err,
			      errlen);
	bot_kb_free(kb);
	return rc;
}

/* ---- records already read (a compactor's deltas) -------------------------- */

struct bot_compile_batch {
	struct gather g;
	struct bot_kb *kb;
	struct bot_compile_report rep;
};

struct bot_compile_batch *bot_compile_batch_new(void)
{
	struct bot_compile_batch *b = calloc(1, sizeof(*b));

	if (b && !(b->kb = bot_kb_new())) {
		free(b);
		return NULL;
	}
	return b;
}

int bot_compile_add_records(struct bot_compile_batch *b, const struct bot_spool_rec *recs,
			    size_t n)
{
	int rc = gather_recs(&b->g, b->kb, recs, n, &b->rep);

	if (rc == 0 && bot_kb_count(b->kb) > BOT_COMPILE_MAX_CONTEXTS)
		rc = -3;
	return rc;
}

int bot_compile_batch_finish(struct bot_compile_batch *b, struct bot_kb **kb,
			     struct bot_compile_report *rep)
{
	*kb = NULL;
	if (reduce_samples(&b->g, b->kb, &b->rep) < 0)
		return -1;
	b->g.ns = 0;
	*kb = bot_kb_sorted(b->kb);
	if (rep)
		*rep = b->rep;
	return *kb ? 0 : -1;
}

void bot_compile_batch_free(struct bot_compile_batch *b)
{
	if (!b)
		return;
	free(b->g.s);
	free(b->g.digests.v);
	free(b->g.seen.v);
	free(b->g.src);
	bot_kb_free(b->kb);
	free(b);
}
