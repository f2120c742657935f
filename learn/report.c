/*
 * report.c - a step's report parts: build, text, files, merge, numbers
 * (learn/report.h; doc/formats.md section 17).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/errf.h"
#include "common/readall.h"
#include "common/writeall.h"
#include "learn/report.h"
#include "policies/context.h"
#include "policies/kb.h"
#include "policies/stats.h"

#define NARMS BOT_REPORT_NARMS
#define NONE BOT_REPORT_ARM_NONE
#define NDEC BOT_REPORT_NDEC
#define UNK BOT_REPORT_DEC_UNKNOWN
#define BIG (1ull << 40)
#define HASH_CAP 8192u	/* > 2 x BOT_REPORT_MAX_CTX, a power of two */

_Static_assert(NARMS == BOT_NARMS, "the report's arms are section 1's");
_Static_assert(NARMS == BOT_SPOOL_NCOST, "one cost entry per arm");

void bot_report_part_init(struct bot_report_part *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->fabric, sizeof(p->fabric), "prior");
}

void bot_report_part_free(struct bot_report_part *p)
{
	free(p->ctx);
	p->ctx = NULL;
	p->nctx = 0;
}

static uint64_t ctx_key(const struct bot_report_ctx *c)
{
	return bot_ctx_key(c->coll, c->bucket, c->nranks, c->nnodes);
}

/* Add n processes of version v to a list of at most BOT_REPORT_MAX_VERS. */
static void ver_add(struct bot_report_ver *v, size_t *nv, uint32_t val, uint64_t n)
{
	for (size_t i = 0; i < *nv; i++)
		if (v[i].v == val) {
			v[i].n += n;
			return;
		}
	if (*nv < BOT_REPORT_MAX_VERS) {
		v[*nv].v = val;
		v[(*nv)++].n = n;
	}
}

/* The dcalls index of a decided arm ('-': the last). */
static int dec_idx(uint8_t a)
{
	return a < NARMS ? a : NARMS;
}

/* The decided arm with the most calls (ties to the lower arm, '-' last;
 * never '?', unknown, which no ctx line names); keep when no calls. */
static uint8_t dec_top(const struct bot_report_ctx *c, uint8_t keep)
{
	uint64_t best = 0;
	uint8_t d = keep;

	for (int i = 0; i <= NARMS; i++)
		if (c->dcalls[i] > best) {
			best = c->dcalls[i];
			d = i < NARMS ? (uint8_t)i : NONE;
		}
	return d;
}

static uint64_t add_cap(uint64_t a, uint64_t b)
{
	return a + b > BIG ? BIG : a + b;
}

/* A context's calls per decided arm; one made by hand with calls but no
 * split is one decided arm (as a v1 context). */
static void dcalls_of(const struct bot_report_ctx *c, uint64_t d[NDEC])
{
	uint64_t sum = 0;

	for (int i = 0; i < NDEC; i++)
		sum |= d[i] = c->dcalls[i];
	if (!sum)
		d[dec_idx(c->decided)] = c->calls;
}

/* ---- the builder ---------------------------------------------------------- */

struct bsum {
	uint64_t key, comm, calls;
	uint8_t decided;	/* the dcalls index: an arm, '-' or unknown */
};

struct bsamp {
	uint32_t ctx;
	uint8_t arm;
	uint64_t ns;
};

struct bctx {
	uint64_t key;
	uint8_t auto_arm, decided;
	int has_cost;
	float cost[NARMS];
};

struct bot_report_builder {
	struct bctx *ctx;
	size_t nctx;
	int32_t *hash;
	struct bsum *sum;
	size_t nsum, capsum;
	struct bsamp *samp;
	size_t nsamp, capsamp;
	uint64_t procs[4];
	struct bot_report_ver nccl[BOT_REPORT_MAX_VERS], tuner[BOT_REPORT_MAX_VERS],
		profiler[BOT_REPORT_MAX_VERS];
	size_t nnccl, ntuner, nprofiler;
	uint64_t policy_n[BOT_NPOLICY];
	uint64_t files_read, files_rejected, files_duplicate;
	uint64_t *digests;		/* record digests of the files taken */
	size_t ndig;
};

struct bot_report_builder *bot_report_builder_new(void)
{
	struct bot_report_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->ctx = calloc(BOT_REPORT_MAX_CTX, sizeof(*b->ctx));
	b->hash = malloc(HASH_CAP * sizeof(*b->hash));
	if (!b->ctx || !b->hash) {
		bot_report_builder_free(b);
		return NULL;
	}
	for (size_t i = 0; i < HASH_CAP; i++)
		b->hash[i] = -1;
	return b;
}

void bot_report_builder_free(struct bot_report_builder *b)
{
	if (!b)
		return;
	free(b->ctx);
	free(b->hash);
	free(b->sum);
	free(b->samp);
	free(b->digests);
	free(b);
}

/* The context of key: its index, made when new; -1 past the cap. */
static long bctx_of(struct bot_report_builder *b, uint64_t key)
{
	size_t h = (size_t)(bot_mix64(key) & (HASH_CAP - 1));

	while (b->hash[h] >= 0) {
		if (b->ctx[b->hash[h]].key == key)
			return b->hash[h];
		h = (h + 1) & (HASH_CAP - 1);
	}
	if (b->nctx >= BOT_REPORT_MAX_CTX)
		return -1;
	memset(&b->ctx[b->nctx], 0, sizeof(b->ctx[0]));
	b->ctx[b->nctx].key = key;
	b->ctx[b->nctx].auto_arm = NONE;
	b->ctx[b->nctx].decided = NONE;
	b->hash[h] = (int32_t)b->nctx;
	return (long)b->nctx++;
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 256;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return -1;
	*v = p;
	*cap = n;
	return 0;
}

static void take_arms(struct bctx *c, const struct bot_spool_rec *r)
{
	if (c->auto_arm == NONE && r->auto_arm < NARMS)
		c->auto_arm = r->auto_arm;
	if (c->decided == NONE && r->decided < NARMS)
		c->decided = r->decided;
	if (!c->has_cost && !(r->flags & BOT_SPOOL_F_NO_COST)) {
		int any = 0;

		for (int i = 0; i < NARMS; i++)
			any |= r->cost[i] >= 0;
		if (any) {
			memcpy(c->cost, r->cost, sizeof(c->cost));
			c->has_cost = 1;
		}
	}
}

static void take_proc(struct bot_report_builder *b, const struct bot_spool_rec *r)
{
	b->procs[0]++;
	if (r->proc_flags & BOT_SPOOL_PF_TABLE)
		b->procs[1]++;
	if (r->proc_flags & BOT_SPOOL_PF_MEASURED)
		b->procs[2]++;
	if (r->proc_flags & BOT_SPOOL_PF_PRIOR)
		b->procs[3]++;
	if (r->nccl_version)
		ver_add(b->nccl, &b->nnccl, r->nccl_version, 1);
	if (r->tuner_abi)
		ver_add(b->tuner, &b->ntuner, r->tuner_abi, 1);
	ver_add(b->profiler, &b->nprofiler, r->profiler_abi, 1);
}

/*
 * The file's record digest as the harvest computes it (formats.md 13): its
 * samples and summaries in the file's order, packed, the process record
 * left out. 0 with *digest set, or 1 when the file holds none (a process
 * record alone is nobody's copy).
 */
static int rec_digest(const struct bot_spool_rec *recs, size_t n, uint64_t *digest)
{
	uint8_t u[BOT_SPOOL_REC_SIZE];
	uint64_t d = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (recs[i].kind == BOT_SPOOL_PROC)
			continue;
		bot_spool_pack_rec(u, &recs[i]);
		d = bot_mix64(d ^ bot_digest64(u, sizeof(u)));
		m++;
	}
	*digest = d;
	return m ? 0 : 1;
}

/* A file with the same records as one taken before: the delta skips it
 * (counted in neither files read nor rejected), so the part does. 1 when
 * it is one (counted), 0 when not (its digest kept), -1 out of memory. */
static int duplicate(struct bot_report_builder *b, const struct bot_spool_rec *recs, size_t n)
{
	uint64_t d;

	if (rec_digest(recs, n, &d))
		return 0;
	for (size_t i = 0; i < b->ndig; i++)
		if (b->digests[i] == d) {
			b->files_duplicate++;
			/* bot_report_builder_file counted it read */
			if (b->files_read)
				b->files_read--;
			return 1;
		}
	if (b->ndig % 64 == 0) {
		uint64_t *v = realloc(b->digests, (b->ndig + 64) * sizeof(*v));

		if (!v)
			return -1;
		b->digests = v;
	}
	b->digests[b->ndig++] = d;
	return 0;
}

int bot_report_builder_add(struct bot_report_builder *b, const struct bot_spool_rec *recs,
			   size_t n)
{
	int dup = duplicate(b, recs, n);

	if (dup)
		return dup < 0 ? -1 : 0;
	for (size_t i = 0; i < n; i++) {
		const struct bot_spool_rec *r = &recs[i];
		uint64_t key;
		long c;

		if (r->policy < BOT_NPOLICY && r->kind != BOT_SPOOL_SAMPLE)
			b->policy_n[r->policy]++;
		if (r->kind == BOT_SPOOL_PROC) {
			take_proc(b, r);
			continue;
		}
		if ((r->kind != BOT_SPOOL_SAMPLE && r->kind != BOT_SPOOL_SUMMARY) ||
		    r->coll >= BOT_NCOLL || !r->nranks || !r->nnodes)
			continue;
		key = bot_ctx_key(r->coll, bot_size_bucket(r->nbytes), r->nranks, r->nnodes);
		c = bctx_of(b, key);
		if (c < 0)
			continue;
		take_arms(&b->ctx[c], r);
		if (r->kind == BOT_SPOOL_SUMMARY) {
			if (b->nsum >= BOT_REPORT_MAX_SAMPLES)
				continue;
			if (grow((void **)&b->sum, &b->capsum, b->nsum + 1, sizeof(*b->sum)) < 0)
				return -1;
			b->sum[b->nsum].key = key;
			b->sum[b->nsum].comm = r->comm_id;
			/* 255 is left to AUTO, but unknown with bit5 (no cost
			 * row: the tuner's record of the context was not
			 * found, formats.md 9); an arm this build does not
			 * know is unknown too: neither is AUTO's choice */
			b->sum[b->nsum].decided = r->decided < NARMS ? r->decided :
				r->decided == NONE && !(r->flags & BOT_SPOOL_F_NO_COST) ?
				NARMS : UNK;
			b->sum[b->nsum++].calls = r->calls < BIG ? r->calls : BIG;
		} else if (bot_spool_clean(r) && r->arm < NARMS) {
			if (b->nsamp >= BOT_REPORT_MAX_SAMPLES)
				continue;
			if (grow((void **)&b->samp, &b->capsamp, b->nsamp + 1, sizeof(*b->samp)) < 0)
				return -1;
			b->samp[b->nsamp].ctx = (uint32_t)c;
			b->samp[b->nsamp].arm = r->arm;
			b->samp[b->nsamp++].ns = r->duration_ns;
		}
	}
	return 0;
}

void bot_report_builder_file(struct bot_report_builder *b, int rejected)
{
	if (rejected)
		b->files_rejected++;
	else
		b->files_read++;
}

static int cmp_sum(const void *x, const void *y)
{
	const struct bsum *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->comm < b->comm ? -1 : a->comm > b->comm;
}

static int cmp_samp(const void *x, const void *y)
{
	const struct bsamp *a = x, *b = y;

	if (a->ctx != b->ctx)
		return a->ctx < b->ctx ? -1 : 1;
	if (a->arm != b->arm)
		return a->arm < b->arm ? -1 : 1;
	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

static int cmp_ctx(const void *x, const void *y)
{
	uint64_t a = ctx_key(x), b = ctx_key(y);

	return a < b ? -1 : a > b;
}

static long find_ctx(const struct bot_report_part *p, uint64_t key)
{
	size_t lo = 0, hi = p->nctx;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint64_t k = ctx_key(&p->ctx[mid]);

		if (k == key)
			return (long)mid;
		if (k < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int bot_report_builder_finish(struct bot_report_builder *b, struct bot_report_part *p)
{
	uint64_t best = 0;

	bot_report_part_free(p);
	if (b->nctx) {
		p->ctx = calloc(b->nctx, sizeof(*p->ctx));
		if (!p->ctx)
			return -1;
	}
	p->nctx = b->nctx;
	for (size_t i = 0; i < b->nctx; i++) {
		struct bot_report_ctx *c = &p->ctx[i];
		uint64_t k = b->ctx[i].key;

		c->coll = (uint8_t)bot_key_coll(k);
		c->bucket = (uint8_t)bot_key_bucket(k);
		c->nranks = bot_key_nranks(k);
		c->nnodes = bot_key_nnodes(k);
		c->auto_arm = b->ctx[i].auto_arm;
		c->decided = b->ctx[i].decided;
		c->has_cost = b->ctx[i].has_cost;
		memcpy(c->cost, b->ctx[i].cost, sizeof(c->cost));
	}
	/* samples: n, minimum and the lower median per (context, arm) */
	if (b->nsamp > 1)
		qsort(b->samp, b->nsamp, sizeof(*b->samp), cmp_samp);
	for (size_t i = 0; i < b->nsamp;) {
		size_t j = i;

		while (j < b->nsamp && b->samp[j].ctx == b->samp[i].ctx &&
		       b->samp[j].arm == b->samp[i].arm)
			j++;
		p->ctx[b->samp[i].ctx].arm[b->samp[i].arm].n = j - i;
		p->ctx[b->samp[i].ctx].arm[b->samp[i].arm].min_ns = b->samp[i].ns;
		p->ctx[b->samp[i].ctx].arm[b->samp[i].arm].med_ns = b->samp[i + (j - i - 1) / 2].ns;
		i = j;
	}
	if (p->nctx > 1)
		qsort(p->ctx, p->nctx, sizeof(*p->ctx), cmp_ctx);
	/* calls: per communicator the largest over ranks, added over communicators */
	if (b->nsum > 1)
		qsort(b->sum, b->nsum, sizeof(*b->sum), cmp_sum);
	for (size_t i = 0; i < b->nsum;) {
		size_t j = i;
		uint64_t mx = 0;
		long c;

		uint8_t dec = UNK;

		/* a communicator's ranks agree on its decided arm; a rank
		 * that does not know it (unknown) yields to one that does */
		for (; j < b->nsum && b->sum[j].key == b->sum[i].key &&
		       b->sum[j].comm == b->sum[i].comm; j++) {
			uint8_t d = b->sum[j].decided;

			if (b->sum[j].calls > mx)
				mx = b->sum[j].calls;
			if ((d < NARMS && dec >= NARMS) || (d == NARMS && dec == UNK))
				dec = d;
		}
		c = find_ctx(p, b->sum[i].key);
		if (c >= 0) {
			p->ctx[c].calls = add_cap(p->ctx[c].calls, mx);
			p->ctx[c].dcalls[dec] = add_cap(p->ctx[c].dcalls[dec], mx);
		}
		i = j;
	}
	for (size_t i = 0; i < p->nctx; i++) {
		p->ctx[i].src_calls = p->ctx[i].calls;
		p->ctx[i].decided = dec_top(&p->ctx[i], p->ctx[i].decided);
	}
	p->procs_loaded = b->procs[0];
	p->procs_table = b->procs[1];
	p->procs_measured = b->procs[2];
	p->procs_prior = b->procs[3];
	memcpy(p->nccl, b->nccl, sizeof(p->nccl));
	memcpy(p->tuner, b->tuner, sizeof(p->tuner));
	memcpy(p->profiler, b->profiler, sizeof(p->profiler));
	p->nnccl = b->nnccl;
	p->ntuner = b->ntuner;
	p->nprofiler = b->nprofiler;
	p->files_read = b->files_read;
	p->files_rejected = b->files_rejected;
	p->files_duplicate = b->files_duplicate;
	p->policy = BOT_POLICY_AUTO;
	for (int i = 0; i < BOT_NPOLICY; i++)
		if (b->policy_n[i] > best) {
			best = b->policy_n[i];
			p->policy = i;
		}
	p->nparts = 1;
	return 0;
}

/* ---- the text ------------------------------------------------------------- */

static int token_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

void bot_report_job_leader(const char *job, char *out, size_t len)
{
	size_t n = strcspn(job, "+");

	snprintf(out, len, "%.*s", (int)n, job);
}

/* digits only, 1..20 of them */
static int decimal(const char *s, size_t n)
{
	if (!n || n > 20)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return 1;
}

static int is_token(const char *s);

/* A job string: a token, or "J+K" with J and K decimal. */
static int is_job(const char *s)
{
	const char *plus = strchr(s, '+');

	if (!plus)
		return is_token(s);
	return strlen(s) < BOT_REPORT_TOKEN_MAX && decimal(s, (size_t)(plus - s)) &&
	       decimal(plus + 1, strlen(plus + 1));
}

void bot_report_job_token(char *dst, size_t len, const char *s)
{
	if (s && is_job(s) && strlen(s) < len)
		snprintf(dst, len, "%s", s);
	else
		bot_report_token(dst, len, s);
}

void bot_report_token(char *dst, size_t len, const char *s)
{
	size_t k = 0;

	if (!len)
		return;
	for (; s && *s && k + 1 < len && k < BOT_REPORT_TOKEN_MAX - 1; s++)
		dst[k++] = token_char((unsigned char)*s) ? *s : '_';
	if (!k && len > 1)
		dst[k++] = '_';
	dst[k] = 0;
}

int bot_report_part_name(const struct bot_report_part *p, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s.%s.%s" BOT_REPORT_SUFFIX, p->job, p->step, p->node);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

struct text {
	char *b;
	size_t n, cap;
	int oom;
};

static void __attribute__((format(printf, 2, 3))) say(struct text *t, const char *fmt, ...)
{
	char line[BOT_REPORT_LINE_MAX + 64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line) || t->oom) {
		t->oom = 1;
		return;
	}
	if (grow((void **)&t->b, &t->cap, t->n + (size_t)n + 1, 1) < 0) {
		t->oom = 1;
		return;
	}
	memcpy(t->b + t->n, line, (size_t)n + 1);
	t->n += (size_t)n;
}

static const char *arm_or_dash(uint8_t a)
{
	return a < NARMS ? bot_arm_name(a) : "-";
}

static int is_token(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= BOT_REPORT_TOKEN_MAX)
		return 0;
	for (; *s; s++)
		if (!token_char((unsigned char)*s))
			return 0;
	return 1;
}

static int printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static const char *const plugin_words[] = { "none", "kept", "replaced" };

/* The oldest version that holds p (formats.md 17): 3 when it counts spool
 * files skipped as copies (files R J D) or calls whose decided arm is
 * unknown (decided ?), else 2, so that a reader of versions 1-2 (a build
 * before 2026-12-05, during an upgrade) reads every part that does not
 * need them and refuses the others naming their version. */
static int part_version(const struct bot_report_part *p)
{
	if (p->files_duplicate)
		return 3;
	for (size_t i = 0; i < p->nctx; i++) {
		uint64_t d[NDEC];

		dcalls_of(&p->ctx[i], d);
		if (d[UNK])
			return 3;
	}
	return 2;
}

int bot_report_part_format(const struct bot_report_part *p, char **buf, size_t *len, char *err,
			   size_t errlen)
{
	struct text t = { NULL, 0, 0, 0 };
	const char *pol = bot_policy_name(p->policy);
	static const char *const vk[3] = { "nccl", "tuner", "profiler" };
	const struct bot_report_ver *vs[3] = { p->nccl, p->tuner, p->profiler };
	const size_t nv[3] = { p->nnccl, p->ntuner, p->nprofiler };

	*buf = NULL;
	*len = 0;
	if (!is_job(p->job) || !is_token(p->step) || !is_token(p->node) ||
	    !is_token(p->fabric) || !printable(p->fabric_why) || !pol ||
	    p->user_plugin < 0 || p->user_plugin > 2 || p->nctx > BOT_REPORT_MAX_CTX)
		return bot_errf(err, errlen, "report part: a field outside formats.md section 17");
	say(&t, "%s %d\n", BOT_REPORT_MAGIC, part_version(p));
	say(&t, "job %s\nstep %s\nnode %s\nrestart %u\nstep_nodes %u\nexpected_ranks %u\n",
	    p->job, p->step, p->node, p->restart, p->step_nodes ? p->step_nodes : 1,
	    p->expected_ranks);
	say(&t, "mode %s\npolicy %s\nfabric %s\n", p->shadow ? "shadow" : "on", pol, p->fabric);
	if (p->fabric_why[0])
		say(&t, "fabric_why %s\n", p->fabric_why);
	say(&t, "leaf_switches %u\nuser_plugin %s\n", p->leaf_switches,
	    plugin_words[p->user_plugin]);
	if (p->token)
		say(&t, "token %016llx\n", (unsigned long long)p->token);
	/* the third number only when there is one: a part without it reads
	 * in a reader that knows two */
	if (p->files_duplicate)
		say(&t, "files %llu %llu %llu\n", (unsigned long long)p->files_read,
		    (unsigned long long)p->files_rejected, (unsigned long long)p->files_duplicate);
	else
		say(&t, "files %llu %llu\n", (unsigned long long)p->files_read,
		    (unsigned long long)p->files_rejected);
	say(&t, "procs %llu %llu %llu %llu\n", (unsigned long long)p->procs_loaded,
	    (unsigned long long)p->procs_table, (unsigned long long)p->procs_measured,
	    (unsigned long long)p->procs_prior);
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < nv[k] && i < BOT_REPORT_MAX_VERS; i++)
			say(&t, "%s %u %llu\n", vk[k], vs[k][i].v, (unsigned long long)vs[k][i].n);
	for (size_t i = 0; i < p->nctx; i++) {
		const struct bot_report_ctx *c = &p->ctx[i];

		say(&t, "ctx %s %u %u %u %llu %s %s\n", bot_coll_name(c->coll), c->bucket,
		    c->nranks, c->nnodes, (unsigned long long)c->calls, arm_or_dash(c->auto_arm),
		    arm_or_dash(c->decided));
		if (c->has_cost) {
			char line[BOT_REPORT_LINE_MAX];
			size_t k = 0;

			for (int a = 0; a < NARMS; a++)
				k += (size_t)snprintf(line + k, sizeof(line) - k, " %.9g",
						      c->cost[a] >= 0 ? (double)c->cost[a] : -1.0);
			say(&t, "cost%s\n", line);
		}
		uint64_t d[NDEC];

		dcalls_of(c, d);
		for (int x = 0; x < NDEC; x++)
			if (d[x])
				say(&t, "decided %s %llu\n", x < NARMS ? bot_arm_name(x) :
				    x == NARMS ? "-" : "?", (unsigned long long)d[x]);
		for (int a = 0; a < NARMS; a++)
			if (c->arm[a].n)
				say(&t, "arm %s %llu %llu %llu\n", bot_arm_name(a),
				    (unsigned long long)c->arm[a].n,
				    (unsigned long long)c->arm[a].min_ns,
				    (unsigned long long)c->arm[a].med_ns);
	}
	say(&t, "end %zu\n", p->nctx);
	if (t.oom || t.n > BOT_REPORT_FILE_MAX) {
		free(t.b);
		return bot_errf(err, errlen, "report part: out of memory or over %u bytes",
				BOT_REPORT_FILE_MAX);
	}
	*buf = t.b;
	*len = t.n;
	return 0;
}

/* ---- the parser ----------------------------------------------------------- */

#define MAXF 24

struct pline {
	char text[BOT_REPORT_LINE_MAX];
	char rtext[BOT_REPORT_LINE_MAX];	/* rest's copy, whole */
	char *f[MAXF];
	int nf;
	const char *rest;	/* after the key and one space */
};

/* Decimal without sign or leading zero, <= max. */
static int num(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

static int cost_val(const char *s, float *out)
{
	char *end;
	double v;

	if (!strcmp(s, "-1")) {
		*out = -1;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	for (const char *q = s; *q; q++)
		if (!strchr("0123456789.eE+-", *q))
			return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v < 0 || v >= 3.6e9)
		return -1;
	*out = (float)v;
	return 0;
}

static int arm_val(const char *s, uint8_t *out)
{
	int a;

	if (!strcmp(s, "-")) {
		*out = NONE;
		return 0;
	}
	a = bot_arm_parse(s);
	if (a < 0 || a >= NARMS || strcmp(s, bot_arm_name(a)))
		return -1;
	*out = (uint8_t)a;
	return 0;
}

enum hkey {
	H_JOB, H_STEP, H_NODE, H_RESTART, H_STEP_NODES, H_EXPECTED, H_MODE, H_POLICY, H_FABRIC,
	H_WHY, H_LEAF, H_PLUGIN, H_FILES, H_PROCS, H_TOKEN, H_N
};

static const char *const hnames[H_N] = {
	"job", "step", "node", "restart", "step_nodes", "expected_ranks", "mode", "policy",
	"fabric", "fabric_why", "leaf_switches", "user_plugin", "files", "procs", "token",
};

static int parse_header(struct bot_report_part *p, int k, struct pline *l, int version,
			const char **why)
{
	uint64_t v[4];
	int want = k == H_FILES ? 3 : k == H_PROCS ? 5 : 2;

	/* files R J D: D (duplicates) is version 3's, and optional there */
	if (k == H_FILES && version >= 3 && l->nf == 4)
		want = 4;
	if (k != H_WHY && l->nf != want)
		return *why = "wrong number of fields", -1;
	switch (k) {
	case H_TOKEN: {
		const char *t = l->f[1];
		uint64_t tv = 0;

		if (version < 2)
			return *why = "unknown key (token is version 2's)", -1;
		if (strlen(t) != 16)
			return *why = "a token is 16 lowercase hex digits", -1;
		for (; *t; t++) {
			if (!((*t >= '0' && *t <= '9') || (*t >= 'a' && *t <= 'f')))
				return *why = "a token is 16 lowercase hex digits", -1;
			tv = tv << 4 | (uint64_t)(*t <= '9' ? *t - '0' : *t - 'a' + 10);
		}
		p->token = tv;
		return 0;
	}
	case H_JOB:
		if (version >= 2 ? !is_job(l->f[1]) : !is_token(l->f[1]))
			return *why = "not a job: a token of [A-Za-z0-9._-] or J+K", -1;
		snprintf(p->job, sizeof(p->job), "%s", l->f[1]);
		return 0;
	case H_STEP: case H_NODE: case H_FABRIC: {
		char *dst = k == H_STEP ? p->step : k == H_NODE ? p->node : p->fabric;

		if (!is_token(l->f[1]))
			return *why = "not a token of [A-Za-z0-9._-], 1..64 characters", -1;
		if (k == H_STEP && strcmp(l->f[1], "batch") && num(l->f[1], 0xffffffffull, v) < 0)
			return *why = "a step is a number or 'batch'", -1;
		snprintf(dst, BOT_REPORT_TOKEN_MAX, "%s", l->f[1]);
		return 0;
	}
	case H_RESTART: case H_STEP_NODES: case H_EXPECTED: case H_LEAF: {
		uint64_t lo = k == H_STEP_NODES, hi = k == H_STEP_NODES ? 65536 : k == H_EXPECTED ?
			(1u << 20) : k == H_LEAF ? 65535 : 0xffffffffull;

		if (num(l->f[1], hi, v) < 0 || v[0] < lo)
			return *why = "a number out of range", -1;
		*(k == H_RESTART ? &p->restart : k == H_STEP_NODES ? &p->step_nodes :
		  k == H_EXPECTED ? &p->expected_ranks : &p->leaf_switches) = (uint32_t)v[0];
		return 0;
	}
	case H_MODE:
		if (strcmp(l->f[1], "on") && strcmp(l->f[1], "shadow"))
			return *why = "mode is 'on' or 'shadow'", -1;
		p->shadow = !strcmp(l->f[1], "shadow");
		return 0;
	case H_POLICY: {
		int id = bot_policy_parse(l->f[1]);

		if (id < 0 || strcmp(l->f[1], bot_policy_name(id)))
			return *why = "not a policy name", -1;
		p->policy = id;
		return 0;
	}
	case H_WHY:
		if (!l->rest || !*l->rest || strlen(l->rest) >= BOT_REPORT_WHY_MAX)
			return *why = "empty or over 255 characters", -1;
		snprintf(p->fabric_why, sizeof(p->fabric_why), "%s", l->rest);
		return 0;
	case H_PLUGIN:
		for (int i = 0; i < 3; i++)
			if (!strcmp(l->f[1], plugin_words[i])) {
				p->user_plugin = i;
				return 0;
			}
		return *why = "user_plugin is none, kept or replaced", -1;
	case H_FILES:
		v[2] = 0;
		if (num(l->f[1], BIG, &v[0]) < 0 || num(l->f[2], BIG, &v[1]) < 0 ||
		    (l->nf == 4 && num(l->f[3], BIG, &v[2]) < 0))
			return *why = "a number out of range", -1;
		p->files_read = v[0];
		p->files_rejected = v[1];
		p->files_duplicate = v[2];
		return 0;
	case H_PROCS:
		for (int i = 0; i < 4; i++)
			if (num(l->f[1 + i], 1u << 20, &v[i]) < 0)
				return *why = "a number out of range", -1;
		if (v[1] > v[0] || v[2] > v[0] || v[3] > v[0])
			return *why = "more processes of a kind than loaded", -1;
		p->procs_loaded = v[0];
		p->procs_table = v[1];
		p->procs_measured = v[2];
		p->procs_prior = v[3];
		return 0;
	}
	return *why = "unknown key", -1;
}

static int parse_ver(struct bot_report_part *p, struct pline *l, const char **why)
{
	struct bot_report_ver *v;
	size_t *nv;
	uint64_t val, n;

	if (!strcmp(l->f[0], "nccl"))
		v = p->nccl, nv = &p->nnccl;
	else if (!strcmp(l->f[0], "tuner"))
		v = p->tuner, nv = &p->ntuner;
	else
		v = p->profiler, nv = &p->nprofiler;
	if (l->nf != 3 || num(l->f[1], 0xffffffffull, &val) < 0 || num(l->f[2], 1u << 20, &n) < 0)
		return *why = "wants a version and a count", -1;
	if (*nv >= BOT_REPORT_MAX_VERS)
		return *why = "more than 8 lines of this kind", -1;
	for (size_t i = 0; i < *nv; i++)
		if (v[i].v == val)
			return *why = "a version listed twice", -1;
	v[*nv].v = (uint32_t)val;
	v[(*nv)++].n = n;
	return 0;
}

static int parse_ctx(struct bot_report_part *p, struct pline *l, const char **why)
{
	struct bot_report_ctx *c;
	uint64_t b, nr, nn, calls;
	int coll;

	if (l->nf != 8)
		return *why = "wrong number of fields", -1;
	if (p->nctx >= BOT_REPORT_MAX_CTX)
		return *why = "more than 4096 contexts", -1;
	c = &p->ctx[p->nctx];
	memset(c, 0, sizeof(*c));
	coll = bot_coll_parse(l->f[1]);
	if (coll < 0 || strcmp(l->f[1], bot_coll_name(coll)))
		return *why = "not a collective's name", -1;
	if (num(l->f[2], 255, &b) < 0 || num(l->f[3], 0xffffffffull, &nr) < 0 || !nr ||
	    num(l->f[4], 65535, &nn) < 0 || !nn || nn > nr || num(l->f[5], BIG, &calls) < 0)
		return *why = "bucket, nranks, nnodes or calls out of range", -1;
	if (arm_val(l->f[6], &c->auto_arm) < 0 || arm_val(l->f[7], &c->decided) < 0)
		return *why = "not an arm's name or '-'", -1;
	c->coll = (uint8_t)coll;
	c->bucket = (uint8_t)b;
	c->nranks = (uint32_t)nr;
	c->nnodes = (uint32_t)nn;
	c->calls = calls;
	c->src_calls = calls;
	c->dcalls[dec_idx(c->decided)] = calls;	/* until its decided lines say */
	if (p->nctx && ctx_key(&p->ctx[p->nctx - 1]) >= ctx_key(c))
		return *why = "contexts not in ascending order (or repeated)", -1;
	p->nctx++;
	return 0;
}

static int parse_cost(struct bot_report_ctx *c, struct pline *l, const char **why)
{
	if (l->nf != 1 + NARMS)
		return *why = "wants 21 numbers", -1;
	for (int a = 0; a < NARMS; a++)
		if (cost_val(l->f[1 + a], &c->cost[a]) < 0)
			return *why = "a cost is -1 (unsupported) or a number of us from 0 to below "
				      "3.6e9 (NCCL's cap; larger entries are stored as -1)", -1;
	c->has_cost = 1;
	return 0;
}

/* A v2 'decided X CALLS' line; *first: the context's first (its ctx
 * line's own split is dropped). */
static int parse_decided(struct bot_report_ctx *c, struct pline *l, int version, int *first,
			 const char **why)
{
	uint64_t n;
	uint8_t a;
	int x;

	if (l->nf != 3)
		return *why = "wrong number of fields", -1;
	if (!strcmp(l->f[1], "?") && version < 3)
		return *why = "'decided ?' is version 3's", -1;
	if (!strcmp(l->f[1], "?"))
		x = UNK;	/* the decided arm is unknown */
	else if (arm_val(l->f[1], &a) == 0)
		x = dec_idx(a);
	else
		x = -1;
	if (x < 0 || num(l->f[2], BIG, &n) < 0 || !n)
		return *why = "not an arm's name, '-' or '?', or calls out of range", -1;
	if (*first) {
		memset(c->dcalls, 0, sizeof(c->dcalls));
		*first = 0;
	}
	if (c->dcalls[x])
		return *why = "a decided arm listed twice", -1;
	c->dcalls[x] = n;
	return 0;
}

/* A context's decided lines add up to its calls. */
static int decided_sum_ok(const struct bot_report_ctx *c)
{
	uint64_t sum = 0;

	for (int i = 0; i < NDEC; i++)
		sum = add_cap(sum, c->dcalls[i]);
	return sum == c->calls;
}

static int parse_arm(struct bot_report_ctx *c, struct pline *l, const char **why)
{
	uint64_t n, mn, md;
	uint8_t a;

	if (l->nf != 5)
		return *why = "wrong number of fields", -1;
	if (arm_val(l->f[1], &a) < 0 || a == NONE)
		return *why = "not an arm's name", -1;
	if (num(l->f[2], BIG, &n) < 0 || !n || num(l->f[3], BIG, &mn) < 0 ||
	    num(l->f[4], BIG, &md) < 0 || mn > md || !mn)
		return *why = "samples, minimum or median out of range", -1;
	if (c->arm[a].n)
		return *why = "an arm listed twice", -1;
	c->arm[a].n = n;
	c->arm[a].min_ns = mn;
	c->arm[a].med_ns = md;
	return 0;
}

/* Split one line (without its newline) into l. -1: a control character or
 * an empty field. */
static int split(struct pline *l, const char *s, size_t n)
{
	char *q;

	memcpy(l->text, s, n);
	l->text[n] = 0;
	l->nf = 0;
	l->rest = NULL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
			return -1;
	q = l->text;
	{
		char *sp = strchr(q, ' ');

		/* the rest of the line is kept whole for fabric_why: a copy, since
		 * the fields are split in place */
		if (sp) {
			memcpy(l->rtext, sp + 1, n - (size_t)(sp + 1 - q) + 1);
			l->rest = l->rtext;
		}
	}
	for (;;) {
		char *sp = strchr(q, ' ');

		if (l->nf >= MAXF)
			return -1;
		if (sp)
			*sp = 0;
		if (!*q)
			return -1;
		l->f[l->nf++] = q;
		/* fabric_why's value is free text (any number of words, kept
		 * whole in l->rest): its words are not fields */
		if (!sp || (l->nf == 1 && !strcmp(q, "fabric_why")))
			break;
		q = sp + 1;
	}
	return 0;
}

int bot_report_part_parse(const char *name, const char *buf, size_t len,
			  struct bot_report_part *out, char *err, size_t errlen)
{
	static struct pline l;	/* 1 KiB + pointers: off the stack */
	char whycopy[BOT_REPORT_WHY_MAX];
	struct bot_report_ctx *cur = NULL;
	const char *why = NULL, *key = NULL;	/* key: the failing line's first field */
	unsigned seen = 0;
	int lineno = 0, ended = 0, in_arms = 0, version = 0, first_dec = 0, ctx_line = 0;
	size_t pos = 0;

	bot_report_part_init(out);
	if (len > BOT_REPORT_FILE_MAX)
		return bot_errf(err, errlen, "%s: over %u bytes", name, BOT_REPORT_FILE_MAX);
	out->ctx = calloc(BOT_REPORT_MAX_CTX, sizeof(*out->ctx));
	if (!out->ctx)
		return bot_errf(err, errlen, "%s: out of memory", name);
	while (pos < len) {
		const char *s = buf + pos, *nl = memchr(s, '\n', len - pos);
		size_t n;

		lineno++;
		key = NULL;
		if (!nl) {
			why = "the last line has no newline (a cut file)";
			goto bad;
		}
		n = (size_t)(nl - s);
		pos += n + 1;
		if (n + 1 > BOT_REPORT_LINE_MAX) {
			why = "a line over 1024 bytes";
			goto bad;
		}
		if (ended) {
			why = "text after 'end'";
			goto bad;
		}
		if (lineno == 1) {
			size_t m = strlen(BOT_REPORT_MAGIC);

			if (n == m + 2 && !memcmp(s, BOT_REPORT_MAGIC " ", m + 1) &&
			    s[m + 1] >= '0' + BOT_REPORT_VERSION_MIN &&
			    s[m + 1] <= '0' + BOT_REPORT_VERSION) {
				version = s[m + 1] - '0';
				continue;
			}
			why = n > m && !memcmp(s, BOT_REPORT_MAGIC " ", m + 1) ?
			      "a report part of another version (this reader reads 1 to 3)" :
			      "not a report part (no 'nccl-bot-report-part 3' line; 1 and 2 "
			      "still read)";
			goto bad;
		}
		if (split(&l, s, n) < 0) {
			why = "a control character, an empty field or too many fields";
			goto bad;
		}
		/* said at the context's ctx line */
		if ((!strcmp(l.f[0], "ctx") || !strcmp(l.f[0], "end")) && cur &&
		    !decided_sum_ok(cur)) {
			lineno = ctx_line;
			why = "the context's decided calls do not add up to its calls";
			goto bad;
		}
		/* its ctx line's decided arm is the one with the most calls
		 * (formats.md 17; ties to the lower arm, '-' last) */
		if ((!strcmp(l.f[0], "ctx") || !strcmp(l.f[0], "end")) && cur && cur->calls &&
		    dec_top(cur, cur->decided) != cur->decided) {
			lineno = ctx_line;
			why = "the context's decided arm (its ctx line) is not the decided arm with "
			      "the most calls";
			goto bad;
		}
		if (!strcmp(l.f[0], "ctx")) {
			ctx_line = lineno;
			if (parse_ctx(out, &l, &why) < 0)
				goto bad;
			cur = &out->ctx[out->nctx - 1];
			in_arms = 0;
			first_dec = 1;
			continue;
		}
		if (!strcmp(l.f[0], "decided")) {
			if (version < 2 || !cur || in_arms) {
				why = version < 2 ? "unknown key (decided is version 2's)" :
				      "'decided' not after its 'ctx' and before its 'arm' lines";
				goto bad;
			}
			if (parse_decided(cur, &l, version, &first_dec, &why) < 0)
				goto bad;
			continue;
		}
		if (!strcmp(l.f[0], "cost")) {
			if (!cur || in_arms || cur->has_cost || !first_dec) {
				why = "'cost' not right after its 'ctx'";
				goto bad;
			}
			if (parse_cost(cur, &l, &why) < 0)
				goto bad;
			continue;
		}
		if (!strcmp(l.f[0], "arm")) {
			if (!cur) {
				why = "'arm' before any 'ctx'";
				goto bad;
			}
			in_arms = 1;
			if (parse_arm(cur, &l, &why) < 0)
				goto bad;
			continue;
		}
		if (!strcmp(l.f[0], "end")) {
			uint64_t v;

			if (l.nf != 2 || num(l.f[1], BOT_REPORT_MAX_CTX, &v) < 0 || v != out->nctx) {
				why = "'end' does not count the contexts";
				goto bad;
			}
			ended = 1;
			continue;
		}
		if (cur) {
			why = "a header line after the first 'ctx'";
			goto bad;
		}
		key = l.f[0];	/* a header line's errors name its key */
		if (!strcmp(l.f[0], "nccl") || !strcmp(l.f[0], "tuner") ||
		    !strcmp(l.f[0], "profiler")) {
			if (parse_ver(out, &l, &why) < 0)
				goto bad;
			continue;
		}
		{
			int k;

			for (k = 0; k < H_N && strcmp(l.f[0], hnames[k]); k++)
				;
			if (k == H_N) {
				why = "unknown key";
				goto bad;
			}
			if (seen & (1u << k)) {
				why = "a key given twice";
				goto bad;
			}
			seen |= 1u << k;
			if (parse_header(out, k, &l, version, &why) < 0)
				goto bad;
		}
	}
	if (!lineno) {
		why = "empty";
		goto bad;
	}
	key = NULL;	/* what is said from here is the file's, not a line's */
	if (!ended) {
		why = "no 'end' line (a cut file)";
		goto bad;
	}
	if ((seen & 7u) != 7u) {
		lineno = 0;
		why = "job, step or node missing";
		goto bad;
	}
	if (!out->step_nodes)
		out->step_nodes = 1;
	out->nparts = 1;
	/* what the contexts need, not the format's 4096 (a directory of
	 * parts is held whole) */
	{
		struct bot_report_ctx *v = realloc(out->ctx, (out->nctx ? out->nctx : 1) *
						   sizeof(*out->ctx));

		if (v)
			out->ctx = v;
	}
	return 0;
bad:
	if (key)
		snprintf(whycopy, sizeof(whycopy), "'%.40s%s': %s", key, strlen(key) > 40 ? "..." : "",
			 why ? why : "invalid");
	else
		snprintf(whycopy, sizeof(whycopy), "%s", why ? why : "invalid");
	bot_report_part_free(out);
	bot_report_part_init(out);
	return bot_errf(err, errlen, "%s:%d: %s", name, lineno, whycopy);
}

int bot_report_dir_expand(const char *tmpl, const char *job, const char *user, char *out,
			  size_t outlen, char *err, size_t errlen)
{
	size_t n = 0;

	if (!outlen)
		return -1;
	for (const char *p = tmpl; *p; p++) {
		const char *add = p;
		size_t len = 1;

		if (*p == '%') {
			if (p[1] == 'j' || p[1] == 'u') {
				add = p[1] == 'j' ? job : user;
				if (!add || !*add || strchr(add, '/'))
					return bot_errf(err, errlen, "report directory %s: %%%c is not "
							"known here", tmpl, p[1]);
				len = strlen(add);
			} else if (p[1] != '%') {
				return bot_errf(err, errlen, "report directory %s: '%%%c' is not %%j, "
						"%%u or %%%%", tmpl, p[1] ? p[1] : ' ');
			}
			p++;
		}
		if (n + len >= outlen)
			return bot_errf(err, errlen, "report directory %s: too long", tmpl);
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = 0;
	return 0;
}

int bot_report_part_info(struct bot_report_part *p, const char *info)
{
	char mode[16], plugin[16];
	const char *src;
	int k;

	if (!info || sscanf(info, "%15s %15s", mode, plugin) != 2)
		return -1;
	src = strchr(info, ' ');
	src = src ? strchr(src + 1, ' ') : NULL;
	if (strcmp(mode, "on") && strcmp(mode, "shadow"))
		return -1;
	for (k = 0; k < 3 && strcmp(plugin, plugin_words[k]); k++)
		;
	if (k == 3)
		return -1;
	p->shadow = !strcmp(mode, "shadow");
	p->user_plugin = k;
	snprintf(p->fabric, sizeof(p->fabric), "prior");
	p->fabric_why[0] = 0;
	if (!src)
		return 0;
	src++;
	if (!strncmp(src, "fabric ", 7)) {
		char f[BOT_REPORT_TOKEN_MAX];
		size_t n = strcspn(src + 7, " ");

		snprintf(f, sizeof(f), "%.*s", (int)(n < sizeof(f) ? n : sizeof(f) - 1), src + 7);
		if (is_token(f))
			snprintf(p->fabric, sizeof(p->fabric), "%s", f);
	} else {
		const char *o = strchr(src, '('), *c = strrchr(src, ')');

		if (o && c && c > o + 1) {
			size_t n = (size_t)(c - o - 1);

			if (n >= sizeof(p->fabric_why))
				n = sizeof(p->fabric_why) - 1;
			memcpy(p->fabric_why, o + 1, n);
			p->fabric_why[n] = 0;
			for (size_t i = 0; i < n; i++)
				if ((unsigned char)p->fabric_why[i] < 0x20 ||
				    (unsigned char)p->fabric_why[i] >= 0x7f)
					p->fabric_why[i] = '?';
		}
	}
	return 0;
}

/* ---- files ---------------------------------------------------------------- */

int bot_report_mkdir(const char *dir, char *err, size_t errlen)
{
	char p[PATH_MAX];
	size_t n = strlen(dir);
	struct stat st;
	int fd;

	if (!n || n >= sizeof(p))
		return bot_errf(err, errlen, "report directory '%s': empty or too long", dir);
	memcpy(p, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		if (p[i - 1] == '/')
			continue;
		p[i] = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			return bot_errf(err, errlen, "report directory %s: cannot make %s: %s", dir,
					p, strerror(errno));
		p[i] = dir[i];
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return bot_errf(err, errlen, "report directory %s: %s", dir,
				errno == ELOOP || errno == ENOTDIR ? "a symbolic link or not a "
				"directory" : strerror(errno));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return bot_errf(err, errlen, "report directory %s: %s", dir, strerror(errno));
	}
	close(fd);
	/* another user could forge or delete parts in it (formats.md 17) */
	if (st.st_uid != geteuid())
		return bot_errf(err, errlen, "report directory %s: owned by uid %u, not this "
				"user (%u); a shared report_dir= needs %%u", dir,
				(unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 022)
		return bot_errf(err, errlen, "report directory %s: writable by group or others "
				"(mode %03o)", dir, (unsigned)(st.st_mode & 0777));
	return 0;
}

int bot_report_part_write(const char *dir, const struct bot_report_part *p, char *path,
			  size_t pathlen, char *err, size_t errlen)
{
	const struct bot_write_rule rule = { .mode = 0600, .chmod = 1, .clear_stale = 1,
					     .sync_dir = 1 };
	char name[3 * BOT_REPORT_TOKEN_MAX + 16];
	char *buf;
	size_t len;
	int dfd, rc;

	if (bot_report_part_name(p, name, sizeof(name)) < 0 ||
	    bot_report_part_format(p, &buf, &len, err, errlen) < 0)
		return bot_errf(err, errlen, "%s: report part: %s", dir,
				err && *err ? err : "bad name");
	if (bot_report_mkdir(dir, err, errlen) < 0) {
		free(buf);
		return -1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		free(buf);
		return bot_errf(err, errlen, "report directory %s: %s", dir, strerror(errno));
	}
	rc = bot_write_whole_at(dfd, dir, name, buf, len, &rule, err, errlen);
	close(dfd);
	free(buf);
	if (rc < 0)
		return -1;
	if (path)
		snprintf(path, pathlen, "%s/%s", dir, name);
	return 0;
}

int bot_report_part_read_at(int dirfd, const char *name, const char *path, int check_owner,
			    uid_t uid, struct bot_report_part *out, char *err, size_t errlen)
{
	const struct bot_open_rule rule = { .what = "report part", .max = BOT_REPORT_FILE_MAX,
					    .one_link = 1, .check_owner = check_owner,
					    .uid = uid };
	char want[3 * BOT_REPORT_TOKEN_MAX + 16];
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	bot_report_part_init(out);
	if (bot_read_at(dirfd, name, path, &rule, &buf, &len, err, errlen) < 0)
		return -1;
	rc = bot_report_part_parse(path, (const char *)buf, len, out, err, errlen);
	free(buf);
	if (rc < 0)
		return -1;
	if (bot_report_part_name(out, want, sizeof(want)) < 0 || strcmp(want, name)) {
		bot_report_part_free(out);
		return bot_errf(err, errlen, "%s: its job, step and node say %s", path, want);
	}
	return 0;
}

struct want {
	char job[BOT_REPORT_TOKEN_MAX + 1];	/* "J" */
	char step[BOT_REPORT_TOKEN_MAX + 1];	/* "S." or "" */
};

/* "J.", or "J+K." with K decimal (a component of J), then the step. */
static int keep_part(const struct dirent *e, void *arg)
{
	const struct want *w = arg;
	const char *q = e->d_name;
	size_t n = strlen(q), s = strlen(BOT_REPORT_SUFFIX), j = strlen(w->job);

	if (q[0] == '.' || n <= s || strcmp(q + n - s, BOT_REPORT_SUFFIX))
		return 0;
	if (!j)
		return 1;
	if (strncmp(q, w->job, j))
		return 0;
	q += j;
	if (*q == '+' && !strchr(w->job, '+')) {
		q++;
		if (*q < '0' || *q > '9')
			return 0;
		while (*q >= '0' && *q <= '9')
			q++;
	}
	if (*q++ != '.')
		return 0;
	return !strncmp(q, w->step, strlen(w->step));
}

static void want_of(struct want *w, const char *job, const char *step)
{
	w->job[0] = 0;
	w->step[0] = 0;
	if (job)
		snprintf(w->job, sizeof(w->job), "%s", job);
	if (job && step)
		snprintf(w->step, sizeof(w->step), "%s.", step);
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int bot_report_dir_count(const char *dir, const char *job, const char *step)
{
	struct want w;
	char **names = NULL;
	size_t n = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	want_of(&w, job, step);
	rc = bot_dir_names(fd, keep_part, &w, &names, &n);
	close(fd);
	free_names(names, n);
	return rc < 0 ? -1 : (int)(n > 0x7fffffff ? 0x7fffffff : n);
}

static int cmp_step(const char *a, const char *b)
{
	/* numbers in order, "batch" first */
	size_t la = strlen(a), lb = strlen(b);
	int na = strcmp(a, "batch") != 0, nb = strcmp(b, "batch") != 0;

	if (na != nb)
		return na - nb;
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a, b);
}

static int cmp_part(const void *x, const void *y)
{
	const struct bot_report_part *a = x, *b = y;
	char la[BOT_REPORT_TOKEN_MAX], lb[BOT_REPORT_TOKEN_MAX];
	int c;

	bot_report_job_leader(a->job, la, sizeof(la));
	bot_report_job_leader(b->job, lb, sizeof(lb));
	if ((c = strcmp(la, lb)))
		return c;
	if ((c = cmp_step(a->step, b->step)))
		return c;
	if (a->token != b->token)
		return a->token < b->token ? -1 : 1;
	if ((c = strcmp(a->job, b->job)))
		return c;
	return strcmp(a->node, b->node);
}

int bot_report_dir_read(const char *dir, const char *job, const char *step,
			struct bot_report_set *set, const struct bot_log *log)
{
	const struct bot_report_filter f = { job, step, 0 };

	return bot_report_dir_select(dir, &f, set, log);
}

int bot_report_dir_select(const char *dir, const struct bot_report_filter *f,
			  struct bot_report_set *set, const struct bot_log *log)
{
	char err[BOT_REPORT_ERR_MAX + PATH_MAX], path[PATH_MAX + 256];
	struct want w;
	struct stat st;
	char **names = NULL;
	size_t n = 0, total = 0;
	uid_t owner;
	int fd;

	memset(set, 0, sizeof(*set));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: %s", bot_path_shown(dir), strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* the reader's own parts only (root: the directory owner's) */
	owner = getuid() ? getuid() : st.st_uid;
	want_of(&w, f->job, f->step);
	if (bot_dir_names(fd, keep_part, &w, &names, &n) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: cannot list it: %s", dir, strerror(errno));
		free_names(names, n);
		close(fd);
		return -1;
	}
	if (n > BOT_REPORT_MAX_PARTS) {
		/* the first ones by name are read, the rest named and left out
		 * (a directory of many jobs' parts is still reported) */
		bot_log_msg(log, BOT_LOG_WARN, "%s: %zu parts, over %u: %s and the %zu after it "
			    "(by name) not read", dir, n, BOT_REPORT_MAX_PARTS,
			    names[BOT_REPORT_MAX_PARTS], n - BOT_REPORT_MAX_PARTS - 1);
		set->refused += n - BOT_REPORT_MAX_PARTS;
		for (size_t i = BOT_REPORT_MAX_PARTS; i < n; i++)
			free(names[i]);
		n = BOT_REPORT_MAX_PARTS;
	}
	set->v = calloc(n ? n : 1, sizeof(*set->v));
	if (!set->v) {
		bot_log_msg(log, BOT_LOG_ERROR, "out of memory");
		free_names(names, n);
		close(fd);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (total > BOT_REPORT_MAX_SET_CTX) {
			bot_log_msg(log, BOT_LOG_WARN, "%s: over %u contexts in its parts: %s and "
				    "the %zu after it not read", dir, BOT_REPORT_MAX_SET_CTX, names[i],
				    n - i - 1);
			set->refused += n - i;
			break;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (bot_report_part_read_at(fd, names[i], path, 1, owner, &set->v[set->n], err,
					    sizeof(err)) < 0) {
			bot_log_msg(log, BOT_LOG_WARN, "%s; not counted", err);
			set->refused++;
			continue;
		}
		if (f->token && set->v[set->n].token != f->token) {
			bot_report_part_free(&set->v[set->n]);
			continue;
		}
		total += set->v[set->n].nctx;
		set->n++;
	}
	free_names(names, n);
	close(fd);
	if (set->n > 1)
		qsort(set->v, set->n, sizeof(*set->v), cmp_part);
	return 0;
}

void bot_report_set_free(struct bot_report_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		bot_report_part_free(&set->v[i]);
	free(set->v);
	memset(set, 0, sizeof(*set));
}

/* ---- merging -------------------------------------------------------------- */

static void merge_ctx(struct bot_report_ctx *o, const struct bot_report_ctx *c, int how)
{
	uint64_t cw = c->src_calls ? c->src_calls : c->calls, cd[NDEC];

	/* calls per decided arm: a step's nodes each count a communicator
	 * that spans them (the largest), steps add */
	uint64_t most = 0, known = 0;

	dcalls_of(o, o->dcalls);
	dcalls_of(c, cd);
	if (how != BOT_REPORT_STEPS)
		most = o->calls > c->calls ? o->calls : c->calls;
	o->calls = 0;
	for (int x = 0; x < NDEC; x++) {
		if (how == BOT_REPORT_STEPS)
			o->dcalls[x] = add_cap(o->dcalls[x], cd[x]);
		else if (cd[x] > o->dcalls[x])
			o->dcalls[x] = cd[x];
		if (x < UNK)
			known = add_cap(known, o->dcalls[x]);
	}
	/* a communicator whose ranks on one node knew its decided arm and
	 * on another did not ('?': no record of the context there) is one
	 * communicator: its '?' calls on the second node are the known
	 * arm's, not more calls (the per-arm largest counted them twice);
	 * '?' keeps only what the larger node's calls leave beyond the
	 * known arms' */
	if (how != BOT_REPORT_STEPS && o->dcalls[UNK] && add_cap(known, o->dcalls[UNK]) > most)
		o->dcalls[UNK] = most > known ? most - known : 0;
	for (int x = 0; x < NDEC; x++)
		o->calls = add_cap(o->calls, o->dcalls[x]);
	o->decided = dec_top(o, o->decided);
	/* AUTO's arm and the row of the part with the most calls; gaps filled */
	if (cw > o->src_calls) {
		o->src_calls = cw;
		if (c->auto_arm != NONE)
			o->auto_arm = c->auto_arm;
		if (c->has_cost) {
			o->has_cost = 1;
			memcpy(o->cost, c->cost, sizeof(o->cost));
		}
	} else {
		if (o->auto_arm == NONE)
			o->auto_arm = c->auto_arm;
		if (!o->has_cost && c->has_cost) {
			o->has_cost = 1;
			memcpy(o->cost, c->cost, sizeof(o->cost));
		}
	}
	for (int a = 0; a < NARMS; a++) {
		const struct bot_report_arm *x = &c->arm[a];
		struct bot_report_arm *y = &o->arm[a];

		if (!x->n)
			continue;
		if (!y->n) {
			*y = *x;
			continue;
		}
		/* the sample-weighted mean of the medians (formats.md 17) */
		y->med_ns = (uint64_t)llround(((double)y->n * (double)y->med_ns +
					       (double)x->n * (double)x->med_ns) /
					      ((double)y->n + (double)x->n));
		y->n = add_cap(y->n, x->n);
		if (x->min_ns < y->min_ns)
			y->min_ns = x->min_ns;
		if (y->med_ns < y->min_ns)
			y->med_ns = y->min_ns;
	}
}

/* A shadow step's context merged into a job with steps that decided: NCCL's
 * choice stood for every call (formats.md 17, merging). */
static void ctx_stood(struct bot_report_ctx *c)
{
	uint64_t d[NDEC], sum = 0;

	dcalls_of(c, d);
	for (int x = 0; x < NDEC; x++)
		sum = add_cap(sum, d[x]);
	memset(c->dcalls, 0, sizeof(c->dcalls));
	c->dcalls[NARMS] = sum;
	c->decided = NONE;
}

static void tok_merge(char *dst, const char *src)
{
	if (strcmp(dst, src))
		snprintf(dst, BOT_REPORT_TOKEN_MAX, "*");
}

int bot_report_merge(struct bot_report_part *out, const struct bot_report_part *in, int how)
{
	struct bot_report_ctx *v;
	size_t i = 0, j = 0, k = 0;
	int in_stood = 0;

	if (!out->nparts) {
		struct bot_report_ctx *keep = out->ctx;

		free(keep);
		*out = *in;
		out->ctx = NULL;
		out->nctx = 0;
		out->nparts = 0;
	} else {
		char la[BOT_REPORT_TOKEN_MAX], lb[BOT_REPORT_TOKEN_MAX];

		/* a heterogeneous job's components are its leader's */
		bot_report_job_leader(out->job, la, sizeof(la));
		bot_report_job_leader(in->job, lb, sizeof(lb));
		if (strcmp(la, lb))
			tok_merge(out->job, in->job);
		else if (strcmp(out->job, in->job))
			snprintf(out->job, sizeof(out->job), "%s", la);
		if (out->token != in->token)
			out->token = 0;
		tok_merge(out->step, in->step);
		tok_merge(out->node, in->node);
		if (strcmp(out->fabric, in->fabric) && !out->fabric_why[0])
			snprintf(out->fabric_why, sizeof(out->fabric_why), "parts name fabrics %s "
				 "and %s", out->fabric, in->fabric);
		/* two fabrics: none ('*'), so that neither's state stands in
		 * for the other's contexts (formats.md 17) */
		tok_merge(out->fabric, in->fabric);
		if (how == BOT_REPORT_STEPS && out->shadow != in->shadow) {
			/* a job of shadow steps and steps that decided: the
			 * shadow steps' calls are NCCL's own (left to AUTO),
			 * the job is not shadow (it said shadow, nothing
			 * saved, whatever its other steps did) */
			if (out->shadow)
				for (size_t q = 0; q < out->nctx; q++)
					ctx_stood(&out->ctx[q]);
			else
				in_stood = 1;
			out->shadow = 0;
		} else {
			out->shadow |= in->shadow;
		}
		if (!out->lookup)
			out->lookup = in->lookup;
		if (in->step_nodes > out->step_nodes)
			out->step_nodes = in->step_nodes;
		if (in->leaf_switches > out->leaf_switches)
			out->leaf_switches = in->leaf_switches;
		if (in->user_plugin > out->user_plugin)
			out->user_plugin = in->user_plugin;
		out->expected_ranks += in->expected_ranks;
		out->files_read += in->files_read;
		out->files_rejected += in->files_rejected;
		out->files_duplicate += in->files_duplicate;
		out->procs_loaded += in->procs_loaded;
		out->procs_table += in->procs_table;
		out->procs_measured += in->procs_measured;
		out->procs_prior += in->procs_prior;
		for (size_t q = 0; q < in->nnccl; q++)
			ver_add(out->nccl, &out->nnccl, in->nccl[q].v, in->nccl[q].n);
		for (size_t q = 0; q < in->ntuner; q++)
			ver_add(out->tuner, &out->ntuner, in->tuner[q].v, in->tuner[q].n);
		for (size_t q = 0; q < in->nprofiler; q++)
			ver_add(out->profiler, &out->nprofiler, in->profiler[q].v,
				in->profiler[q].n);
	}
	/* contexts: both ascending by key */
	v = calloc(out->nctx + in->nctx ? out->nctx + in->nctx : 1, sizeof(*v));
	if (!v)
		return -1;
	while (i < out->nctx || j < in->nctx) {
		uint64_t a = i < out->nctx ? ctx_key(&out->ctx[i]) : UINT64_MAX;
		uint64_t b = j < in->nctx ? ctx_key(&in->ctx[j]) : UINT64_MAX;

		if (i < out->nctx && (j >= in->nctx || a < b)) {
			v[k++] = out->ctx[i++];
		} else if (i >= out->nctx || b < a) {
			v[k] = in->ctx[j++];
			if (!v[k].src_calls)
				v[k].src_calls = v[k].calls;
			if (in_stood)
				ctx_stood(&v[k]);
			k++;
		} else {
			struct bot_report_ctx c = in->ctx[j++];

			if (in_stood)
				ctx_stood(&c);
			v[k] = out->ctx[i++];
			merge_ctx(&v[k++], &c, how);
		}
	}
	if (k > BOT_REPORT_MAX_CTX) {
		free(v);
		return -1;
	}
	free(out->ctx);
	out->ctx = v;
	out->nctx = k;
	out->nparts += in->nparts ? in->nparts : 1;
	return 0;
}

/* ---- numbers -------------------------------------------------------------- */

const char *bot_report_src_name(int src)
{
	switch (src) {
	case BOT_REPORT_SRC_STEP:
		return "step";
	case BOT_REPORT_SRC_STATE:
		return "state";
	case BOT_REPORT_SRC_COST:
		return "cost";
	default:
		return "unknown";
	}
}

int bot_report_state_arms(void *arg, const char *fabric, const struct bot_report_ctx *c,
			  double ns[NARMS])
{
	const struct bot_report_states *st = arg;
	const struct bot_kb_ctx *k = NULL;
	int any = 0;

	for (size_t i = 0; st && i < st->n && !k; i++)
		if (st->kb[i] && !strcmp(st->fabric[i], fabric))
			k = bot_kb_find(st->kb[i], bot_ctx_key(c->coll, c->bucket, c->nranks,
							      c->nnodes));
	if (!k)
		return -1;
	/* the lower median bin: a median like a part's, within half a bin */
	for (int i = 0; i < NARMS; i++) {
		int q = k->arm[i].n ? bot_stats_median_q(&k->arm[i]) : -1;

		ns[i] = q >= 0 ? bot_us_from_q(q) * 1e3 : 0;
		any |= ns[i] > 0;
	}
	return any ? 0 : -1;
}

/* Arms the step did not measure, from the fabric's state (formats.md 17,
 * source 2): the state's ratio to the reference arm when it holds both,
 * else its median. */
static void from_state(const struct bot_report_part *p, const struct bot_report_ctx *c,
		       int ref, struct bot_report_row *r)
{
	double ns[NARMS];

	if (!p->lookup || !p->lookup->arms)
		return;
	for (int i = 0; i < NARMS; i++)
		ns[i] = 0;
	if (p->lookup->arms(p->lookup->arg, p->fabric, c, ns) < 0)
		return;
	for (int i = 0; i < NARMS; i++) {
		if (c->arm[i].n || !(ns[i] > 0) || !isfinite(ns[i]))
			continue;
		if (ref >= 0 && ns[ref] > 0 && isfinite(ns[ref]))
			r->t[i] = r->t[ref] * ns[i] / ns[ref];
		else
			r->t[i] = ns[i] * 1e-9;
		r->est[i] = 1;
		r->src[i] = BOT_REPORT_SRC_STATE;
	}
}

/* Of two sources, the less sure (cost over state over step). */
static int src_worse(int a, int b)
{
	return a > b ? a : b;
}

void bot_report_row(const struct bot_report_part *p, const struct bot_report_ctx *c,
		    struct bot_report_row *r)
{
	int ref = -1, a, x;
	uint64_t refn = 0;

	memset(r, 0, sizeof(*r));
	r->chosen = -1;
	r->best = -1;
	for (int i = 0; i < NARMS; i++) {
		r->t[i] = c->arm[i].n ? (double)c->arm[i].med_ns * 1e-9 : -1;
		r->src[i] = c->arm[i].n ? BOT_REPORT_SRC_STEP : BOT_REPORT_SRC_NONE;
		if (c->arm[i].n > refn) {
			refn = c->arm[i].n;
			ref = i;
		}
	}
	/* an arm not measured: from the fabric's state, else scaled from the
	 * reference arm by NCCL's row */
	from_state(p, c, ref, r);
	if (ref >= 0 && c->has_cost && c->cost[ref] > 0)
		for (int i = 0; i < NARMS; i++)
			if (!c->arm[i].n && !r->src[i] && c->cost[i] > 0) {
				r->t[i] = r->t[ref] * (double)c->cost[i] / (double)c->cost[ref];
				r->est[i] = 1;
				r->src[i] = BOT_REPORT_SRC_COST;
			}
	a = c->auto_arm < NARMS ? c->auto_arm : -1;
	x = p->shadow || c->decided >= NARMS ? a : c->decided;
	{
		uint64_t dc[NDEC];

		/* most calls' decided arm unknown: ours is unknown, neither
		 * AUTO's nor the ctx line's arm (formats.md 17), which may be
		 * an arm no call decided (the first record's) */
		dcalls_of(c, dc);
		if (!p->shadow && dc[UNK] > dc[dec_idx(c->decided)])
			x = -1;
	}
	r->chosen = x;
	for (int i = 0; i < NARMS; i++) {
		int chosen = i == a || i == x || (!p->shadow && c->dcalls[i]);

		if (r->t[i] < 0 || (!c->arm[i].n && !chosen))
			continue;
		if (r->best < 0 || r->t[i] < r->t[r->best])
			r->best = i;
	}
	if (a < 0 || r->t[a] < 0 || r->best < 0 || r->t[r->best] <= 0)
		return;
	/* every decided arm's calls against AUTO's (formats.md 17) */
	{
		double sum_c = 0, sum_ct = 0;
		uint64_t dc[NDEC];
		int est = 0;

		dcalls_of(c, dc);
		for (int d = 0; d < NDEC; d++) {
			int y = p->shadow || d >= NARMS ? a : d;
			double n = (double)dc[d];

			/* calls whose decided arm is unknown are neither ours
			 * nor AUTO's: they add nothing (shadow: AUTO's) */
			if (!dc[d] || r->t[y] < 0 || (d == UNK && !p->shadow))
				continue;
			sum_c += n;
			sum_ct += n * r->t[y];
			est |= r->est[y];
			r->src_ours = src_worse(r->src_ours, r->src[y]);
			r->saved += n * (r->t[a] > r->t[y] ? r->t[a] - r->t[y] : 0);
			r->lost += n * (r->t[y] > r->t[a] ? r->t[y] - r->t[a] : 0);
		}
		if (sum_c > 0) {
			r->t_ours = sum_ct / sum_c;
		} else if (!c->calls && x >= 0 && r->t[x] >= 0) {
			r->t_ours = r->t[x];	/* no calls counted: the arm decided */
			est = r->est[x];
			r->src_ours = r->src[x];
		} else {
			r->saved = r->lost = 0;
			return;
		}
		r->estimated = r->est[a] || est || r->est[r->best];
	}
	r->known = 1;
	r->loss_ours = r->t_ours / r->t[r->best] - 1;
	/* t_ours is a calls-weighted mean of arms the best is the fastest of:
	 * below it only by rounding ("-0.0%") */
	if (r->loss_ours < 0)
		r->loss_ours = 0;
	r->loss_auto = r->t[a] / r->t[r->best] - 1;
	/* a context without calls lost nothing in this run: its losses say
	 * which arm is faster, not what the run paid (formats.md 17) */
	r->no_calls = !c->calls;
	r->over10 = !r->no_calls && r->loss_ours > 0.10;
	r->harmed = !r->no_calls && r->loss_ours - r->loss_auto > 0.02;
}

void bot_report_totals(const struct bot_report_part *p, struct bot_report_totals *t)
{
	int any = 0;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < p->nctx; i++) {
		const struct bot_report_ctx *c = &p->ctx[i];
		struct bot_report_row r;

		bot_report_row(p, c, &r);
		t->contexts++;
		uint64_t dc[NDEC];

		dcalls_of(c, dc);
		t->calls += c->calls;
		if (!p->shadow) {
			uint64_t dec = 0;

			/* the arms' calls, summed: calls less '-' and '?' would
			 * wrap where the 2^40 cap made calls less than those two */
			for (int x = 0; x < NARMS; x++)
				dec = add_cap(dec, dc[x]);
			t->calls_decided += dec;
			t->calls_unknown += dc[UNK];
		}
		if (!r.known) {
			t->unknown++;
			continue;
		}
		if (r.no_calls) {
			t->no_calls++;
			continue;	/* nothing saved or lost, nothing to judge */
		}
		t->saved += r.saved;
		t->lost += r.lost;
		if (r.estimated && (r.saved > 0 || r.lost > 0))
			t->estimated = 1;
		t->over10 += (size_t)r.over10;
		t->harmed += (size_t)r.harmed;
		if (!any || r.loss_ours - r.loss_auto > t->worst_excess)
			t->worst_excess = r.loss_ours - r.loss_auto;
		any = 1;
	}
	/* equal sums of different terms differ in their last bits: that is no
	 * time saved or lost, whichever sign it has */
	t->net = t->saved - t->lost;
	if (fabs(t->net) <= 1e-11 * (t->saved + t->lost))
		t->net = 0;
	/* Slurm's task count is not the rank count when a launcher (torchrun)
	 * starts the ranks as a task's children: the largest communicator seen
	 * tells more, and a rank that loaded the tuner exists by definition. */
	t->ranks_loaded = p->procs_loaded;
	t->ranks_expected = p->expected_ranks;
	for (size_t i = 0; i < p->nctx; i++)
		if (p->ctx[i].nranks > t->ranks_expected)
			t->ranks_expected = p->ctx[i].nranks;
	if (t->ranks_loaded > t->ranks_expected)
		t->ranks_expected = t->ranks_loaded;
}

void bot_report_versions(const struct bot_report_ver *v, size_t n, int kind, char *buf,
			 size_t len)
{
	size_t k = 0;

	if (!len)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < n && k + 1 < len; i++) {
		uint32_t x = v[i].v;
		int w;

		if (kind == BOT_REPORT_VER_NCCL)
			w = x >= 10000 ? snprintf(buf + k, len - k, "%s%u.%u.%u", k ? "/" : "",
						  x / 10000, x / 100 % 100, x % 100) :
			    snprintf(buf + k, len - k, "%s%u.%u.%u", k ? "/" : "", x / 1000,
				     x / 100 % 10, x % 100);
		else if (x)
			w = snprintf(buf + k, len - k, "%sv%u", k ? "/" : "", x);
		else
			w = snprintf(buf + k, len - k, "%snone", k ? "/" : "");
		if (w < 0 || (size_t)w >= len - k) {
			buf[k] = 0;
			break;
		}
		k += (size_t)w;
	}
	if (!buf[0])
		snprintf(buf, len, "n/a");
}

void bot_report_span(double s, char *buf, size_t len)
{
	if (s >= 1)
		snprintf(buf, len, "%.3f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.3f ms", s * 1e3);
	else if (s >= 1e-6)
		snprintf(buf, len, "%.1f us", s * 1e6);
	else if (s >= 1e-10)
		snprintf(buf, len, "%.3g us", s * 1e6);
	else	/* none, or within the sums' rounding (%.3g writes 1e-05 below it) */
		snprintf(buf, len, "0 us");
}

static void seconds(double s, char *buf, size_t len)
{
	/* plain digits (%.3g writes 1e+03 from 999.5 on): readers take [0-9.]* */
	if (s >= 999.5)
		snprintf(buf, len, "%.0f s", s);
	else if (s >= 0.9995)
		snprintf(buf, len, "%.3g s", s);
	else if (s >= 0.9995e-3)
		snprintf(buf, len, "%.3g ms", s * 1e3);
	else if (s >= 1e-10)
		snprintf(buf, len, "%.3g us", s * 1e6);
	else	/* %.3g writes 1e-05 below 0.0001 */
		snprintf(buf, len, "0 us");
}

void bot_report_summary(const struct bot_report_part *m, const char *stepname,
			const char *where, char *buf, size_t len)
{
	struct bot_report_totals t;
	char nccl[96], tuner[64], prof[64], time[48], exp[24], what[160];
	double net;

	bot_report_totals(m, &t);
	bot_report_versions(m->nccl, m->nnccl, BOT_REPORT_VER_NCCL, nccl, sizeof(nccl));
	bot_report_versions(m->tuner, m->ntuner, BOT_REPORT_VER_ABI, tuner, sizeof(tuner));
	bot_report_versions(m->profiler, m->nprofiler, BOT_REPORT_VER_ABI, prof, sizeof(prof));
	if (t.ranks_expected)
		snprintf(exp, sizeof(exp), "%llu", (unsigned long long)t.ranks_expected);
	else
		snprintf(exp, sizeof(exp), "?");
	net = t.net;
	seconds(net >= 0 ? net : -net, time, sizeof(time));
	if (m->shadow)
		snprintf(what, sizeof(what), "shadow: measured only, NCCL's choice stands");
	else
		snprintf(what, sizeof(what), "%llu calls decided, est. %s %s%s vs AUTO",
			 (unsigned long long)t.calls_decided, net >= 0 ? "saved" : "lost",
			 t.estimated ? "~" : "", time);
	snprintf(buf, len, "nccl-bot: step %s: %s, %zu contexts lost >10%%, tuner loaded on %llu "
		 "of %s ranks, NCCL %s, tuner %s, profiler %s; report: %s", stepname, what,
		 t.over10, (unsigned long long)t.ranks_loaded, exp, nccl, tuner, prof, where);
}
