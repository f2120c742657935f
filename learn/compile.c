/*
 * compile.c - spool files -> knowledge base -> step table (learn/compile.h).
 *
 * Three passes. Read: every file is validated whole by the spool reader; a
 * bad one is skipped with its reason. Gather: cost rows become priors, clean
 * samples are kept as (commId, collective, sequence, arm, duration), and
 * summaries give each context its call count. Reduce: samples of one
 * collective on several ranks are the same call seen from each rank, each
 * span including the wait for the slowest peer (arrival skew); the minimum
 * over ranks is the collective's own duration, one sample per call. Then
 * the policy plans every context that has a prior, the entries go into the
 * table most-called first, and what does not fit the size budget is dropped
 * (those contexts fall back to the prior on every rank alike).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/errf.h"
#include "common/spool.h"
#include "learn/compile.h"

struct sample {
	uint64_t comm_id, seq, key, ns;
	uint8_t arm;
};

struct gather {
	struct sample *s;
	size_t ns, scap;
	uint64_t *digests;
	size_t nd, dcap;
	uint64_t *src;			/* ids of the files read */
	size_t nsrc, srccap;
};

void bot_compile_opts_default(struct bot_compile_opts *o)
{
	memset(o, 0, sizeof(*o));
	bot_policy_init(&o->policy, "thompson");
	o->ncomms = 8;
	o->calls = 500;
	o->round = -1;
	o->min_bytes_log2 = 20;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	q = realloc(*p, n * size);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

static uint64_t rec_key(const struct bot_spool_rec *r)
{
	return bot_ctx_key(r->coll, bot_size_bucket(r->nbytes), r->nranks, r->nnodes);
}

static int add_digest(struct gather *g, uint64_t d)
{
	for (size_t i = 0; i < g->nd; i++)
		if (g->digests[i] == d)
			return 0;
	if (grow((void **)&g->digests, &g->dcap, g->nd + 1, sizeof(*g->digests)))
		return -1;
	g->digests[g->nd++] = d;
	return 0;
}

/* One validated file into the gather lists and the priors of kb. */
static int gather_file(struct gather *g, struct bot_kb *kb, const struct bot_spool_file *f,
		       struct bot_compile_report *rep)
{
	if (add_digest(g, f->hdr.table_digest))
		return -1;
	for (uint64_t i = 0; i < f->hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f->recs[i];
		uint64_t key = rec_key(r);

		if (!(r->flags & BOT_SPOOL_F_NO_COST) && bot_kb_offer_prior(kb, key, r->cost) < 0)
			return -1;
		if (r->kind == BOT_SPOOL_SUMMARY) {
			if (bot_kb_add_calls(kb, key, r->calls) < 0)
				return -1;
			continue;
		}
		rep->samples++;
		if (!bot_spool_clean(r) || r->arm >= BOT_NARMS) {
			rep->samples_unclean++;
			continue;
		}
		if (grow((void **)&g->s, &g->scap, g->ns + 1, sizeof(*g->s)))
			return -1;
		g->s[g->ns++] = (struct sample){ r->comm_id, r->seq, key, r->duration_ns, r->arm };
	}
	return 0;
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
};

static int cmp_ranked(const void *pa, const void *pb)
{
	const struct ranked *a = pa, *b = pb;

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
	struct bot_shape shape = { o->seed, o->ncomms, o->calls, rep->round };
	size_t i, k = 0;
	int dropped;

	if (!r) {
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
		if (bot_policy_plan(&o->policy, kb, c->key, &shape, &plan) < 0)
			continue;
		/* Nothing to say beyond "leave it to AUTO". */
		if (!plan.nprobe && (plan.exploit == BOT_ARM_AUTO ||
				     plan.exploit == bot_prior_argmin(c->prior)))
			continue;
		r[m].e.coll = (uint8_t)bot_key_coll(c->key);
		r[m].e.bucket = (uint8_t)b;
		r[m].e.plan = plan;
		r[m].calls = c->calls;
		r[m].key = c->key;
		m++;
	}
	if (m)
		qsort(r, m, sizeof(*r), cmp_ranked);
	/* Shapes in ranked order too: past 256 shapes, the least-called
	 * contexts lose theirs. */
	for (i = 0; i < m && k < BOT_TABLE_MAX_ENTRIES; i++) {
		int shape_idx = bot_table_shape(t, bot_key_nranks(r[i].key), bot_key_nnodes(r[i].key));

		if (shape_idx < 0) {
			rep->dropped++;
			continue;
		}
		r[i].e.shape = (uint8_t)shape_idx;
		t->entries[k++] = r[i].e;
	}
	rep->dropped += m - i;	/* past the entry capacity */
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
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int push_path(struct bot_compile_paths *p, const char *dir, const char *name)
{
	size_t len = strlen(dir) + (name ? strlen(name) + 1 : 0) + 1;

	if (grow((void **)&p->v, &p->cap, p->n + 1, sizeof(*p->v)) || !(p->v[p->n] = malloc(len)))
		return -1;
	if (name)
		snprintf(p->v[p->n], len, "%s/%s", dir, name);
	else
		memcpy(p->v[p->n], dir, len);
	p->n++;
	return 0;
}

/* Every *.spool file of a directory (not hidden), sorted by name. */
static int list_dir(const char *dir, struct bot_compile_paths *p, char *err, size_t errlen)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t first = p->n;

	if (!d)
		return bot_errf(err, errlen, "%s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 7 || e->d_name[0] == '.' || strcmp(e->d_name + len - 6, ".spool"))
			continue;
		if (push_path(p, dir, e->d_name) < 0) {
			closedir(d);
			return bot_errf(err, errlen, "out of memory");
		}
	}
	closedir(d);
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

		if (stat(paths[i], &st) < 0)
			rc = bot_errf(err, errlen, "%s: %s", paths[i], strerror(errno));
		else if (S_ISDIR(st.st_mode))
			rc = list_dir(paths[i], out, err, errlen);
		else
			rc = push_path(out, paths[i], NULL) < 0 ? bot_errf(err, errlen, "out of memory") : 0;
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
	free(p->v);
	memset(p, 0, sizeof(*p));
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
	for (size_t i = 0; i < x->g->nsrc; i++)
		if (x->g->src[i] == f->digest) {
			bot_log_msg(x->log, BOT_LOG_WARN, "skipping %s: the same bytes as another "
				    "file of this batch", path);
			return 1;
		}
	if (x->dedup && bot_state_has_source(x->dedup, f->digest)) {
		x->rep->files_merged_before++;
		return 1;
	}
	return 0;
}

static int read_one(struct read_ctx *x, const char *path)
{
	struct bot_spool_file f;
	char why[BOT_SPOOL_ERR_MAX];

	x->rep->files++;
	if (bot_spool_read_file(path, &f, why, sizeof(why)) < 0) {
		x->rep->files_rejected++;
		bot_log_msg(x->log, BOT_LOG_WARN, "skipping %s", why);
		return 0;
	}
	if (skip_file(x, path, &f)) {
		bot_spool_free(&f);
		return 0;
	}
	if (grow((void **)&x->g->src, &x->g->srccap, x->g->nsrc + 1, sizeof(*x->g->src)) ||
	    gather_file(x->g, x->kb, &f, x->rep) < 0) {
		bot_spool_free(&f);
		snprintf(x->err, x->errlen, "out of memory");
		return -1;
	}
	x->g->src[x->g->nsrc++] = f.digest;
	bot_spool_free(&f);
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
		if (read_one(&x, list.v[i]) < 0)
			goto out;
	if (reduce_samples(&g, kb, rep) < 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	rep->jobs = g.nd;
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
	free(g.digests);
	free(g.src);
	bot_kb_free(kb);
	return rc;
}

int bot_compile_plan(const struct bot_kb *kb, const struct bot_compile_opts *o, uint64_t round,
		     struct bot_table *t, struct bot_compile_report *rep, char *err, size_t errlen)
{
	struct bot_kb *sorted = bot_kb_sorted(kb);
	int rc;

	bot_table_init(t, o->policy.id, o->seed);
	t->min_bytes_log2 = (uint8_t)o->min_bytes_log2;
	t->allow = o->policy.allow;
	t->flags |= BOT_TABLE_F_MEASURE;
	if (o->policy.id == BOT_POLICY_SHADOW)
		t->flags |= BOT_TABLE_F_SHADOW;
	if (!sorted) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rep->round = round;
	rep->contexts = rep->entries = rep->dropped = 0;
	rc = plan_all(sorted, o, t, rep, err, errlen);
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
