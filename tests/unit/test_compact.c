/*
 * test_compact.c - the fleet's state directory (doc/formats.md section 14):
 * ship (learn/ship.h), the lease (learn/lease.h), the ledger
 * (learn/ledger.h) and the compactor (learn/compact.h).
 *
 * Deltas are made with the delta encoder (common/delta.h) the way a harvest
 * would leave them: one per node of a job step, each holding the node's
 * samples (the record of its lowest rank) of one or more contexts. What is
 * checked is what section 14 promises: groups merge whole when ready, every
 * delta counts exactly once (twice shipped, two compactors, 64 producers
 * with 8 shippers, a crash at every named point), impossible and
 * contradicting steps are quarantined with their reason, a user's influence
 * is capped per window, and old evidence decays.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/state.h"
#include "learn/compact.h"
#include "learn/crash.h"
#include "learn/lease.h"
#include "learn/ledger.h"
#include "learn/merge.h"
#include "learn/ship.h"
#include "learn/store.h"
#include "policies/context.h"
#include "tests/unit/testutil.h"

#define FABRIC "f1"
#define ARM_RING_LL 3		/* ring/ll */
#define MIB (1u << 20)

static char dir[64], state[128], outbox[128], inbox[160], quar[160], held[160];

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "compact");
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(outbox, sizeof(outbox), "%s/outbox", dir);
	snprintf(inbox, sizeof(inbox), "%s/inbox", state);
	snprintf(quar, sizeof(quar), "%s/quarantine", state);
	snprintf(held, sizeof(held), "%s/held", state);
	ck_assert_int_eq(mkdir(state, 0755), 0);
	ck_assert_int_eq(mkdir(outbox, 0755), 0);
	ck_assert_int_eq(mkdir(inbox, 0750), 0);
	unsetenv(BOT_CRASH_ENV);
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

static void quiet(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	(void)msg;
}

static void noisy(void *arg, int level, const char *msg)
{
	(void)arg;
	fprintf(stderr, "  [%s] %s\n", bot_log_level_name(level), msg);
}

/* Keeps the last message (arg: a char[512]). */
static void keep_last(void *arg, int level, const char *msg)
{
	(void)level;
	snprintf((char *)arg, 512, "%s", msg);
}

/* Keeps the first WARN (arg: a char[512], empty until one comes). */
static void keep_warn(void *arg, int level, const char *msg)
{
	if (level == BOT_LOG_WARN && !((char *)arg)[0])
		snprintf((char *)arg, 512, "%s", msg);
}

static struct bot_log qlog = { quiet, NULL };
static struct bot_log nlog = { noisy, NULL };

/* ---- deltas ---------------------------------------------------------------- */

struct step {
	const char *job;
	uint32_t step, nodes, uid, gpus, flags;
	uint32_t array_job, array_task;		/* 0, BOT_DELTA_NONE: not an array */
	const char *fabric, *account;
	uint64_t t_start, t_end;
};

static struct step mkstep(const char *job, uint32_t nodes, uint32_t uid)
{
	uint64_t now = (uint64_t)time(NULL);

	return (struct step){ job, 0, nodes, uid, 0, BOT_DELTA_F_SLURM, 0, BOT_DELTA_NONE, FABRIC,
			      "", now - 100, now - 10 };
}

static void sample(struct bot_spool_rec *r, uint64_t comm, uint32_t nbytes, uint32_t nranks,
		   uint32_t nnodes, uint32_t rank, uint64_t seq, int arm, uint64_t ns)
{
	memset(r, 0, sizeof(*r));
	r->kind = BOT_SPOOL_SAMPLE;
	r->flags = BOT_SPOOL_F_NO_COST;
	r->coll = 4;
	r->arm = (uint8_t)arm;
	r->nchannels = 8;
	r->auto_arm = r->decided = BOT_SPOOL_ARM_NONE;
	r->comm_id = comm;
	r->rank = rank;
	r->nranks = nranks;
	r->nnodes = nnodes;
	r->nbytes = nbytes;
	r->seq = seq;
	r->duration_ns = ns;
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r->cost[i] = -1.0f;
}

/* Write a delta (tmp + rename, as the harvest does) into d; its name in
 * name (may be NULL). */
static void put_delta(const char *d, const struct step *s, const char *node,
		      struct bot_spool_rec *recs, size_t n, char *name_out)
{
	struct bot_delta_hdr h;
	char name[BOT_DELTA_NAME_MAX], err[512], tmp[BOT_TEST_PATH_MAX], path[BOT_TEST_PATH_MAX];
	uint8_t *buf;
	size_t len;

	memset(&h, 0, sizeof(h));
	h.flags = s->flags;
	snprintf(h.cluster, sizeof(h.cluster), "c1");
	snprintf(h.job, sizeof(h.job), "%s", s->job);
	snprintf(h.fabric, sizeof(h.fabric), "%s", s->fabric);
	snprintf(h.node, sizeof(h.node), "%s", node);
	snprintf(h.account, sizeof(h.account), "%s", s->account);
	snprintf(h.build_id, sizeof(h.build_id), "nccl-bot test");
	h.uid = h.gid = s->uid;
	h.step = s->step;
	h.array_job = s->array_job;
	h.array_task = s->array_task;
	h.het_comp = BOT_DELTA_NONE;
	h.step_nodes = s->nodes;
	h.job_gpus = s->gpus;
	h.t_start = s->t_start;
	h.t_end = s->t_end;
	h.t_harvest = s->t_end;
	bot_delta_sort(recs, n);
	ck_assert_msg(bot_delta_encode(&h, recs, n, &buf, &len, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(bot_delta_name(&h, name), 0);
	snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", d, name);
	snprintf(path, sizeof(path), "%s/%s", d, name);
	{
		FILE *f = fopen(tmp, "wb");

		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
		ck_assert_int_eq(fclose(f), 0);
	}
	ck_assert_int_eq(rename(tmp, path), 0);
	free(buf);
	if (name_out)
		strcpy(name_out, name);
}

/*
 * One job step: on each node k of s->nodes, nsamp samples of allreduce
 * 1 MiB of comm `comm`, seq 0..nsamp-1, arm `arm`, base_ns x (1 + k/8)
 * (so the minimum over nodes is node 0's), written into d.
 */
static void put_step(const char *d, const struct step *s, uint64_t comm, int nsamp, int arm,
		     uint64_t base_ns)
{
	struct bot_spool_rec *r = calloc((size_t)nsamp, sizeof(*r));
	uint32_t nranks = 8 * s->nodes;

	for (uint32_t k = 0; k < s->nodes; k++) {
		char node[32];

		for (int i = 0; i < nsamp; i++)
			sample(&r[i], comm, MIB, nranks, s->nodes, 8 * k, (uint64_t)i, arm,
			       base_ns + base_ns * k / 8);
		snprintf(node, sizeof(node), "n%u", k);
		put_delta(d, s, node, r, (size_t)nsamp, NULL);
	}
	free(r);
}

static void conf_init(struct bot_compact_conf *c, int64_t now)
{
	bot_compact_conf_default(c);
	c->state = state;
	c->now = now;
}

static int compact(const struct bot_compact_conf *c, struct bot_compact_result *r)
{
	return bot_compact_run(c, r, &qlog);
}

static const struct bot_compact_fabric *fab(const struct bot_compact_result *r, const char *f)
{
	for (size_t i = 0; i < r->nfab; i++)
		if (!strcmp(r->fab[i].fabric, f))
			return &r->fab[i];
	return NULL;
}

/* Samples in a fabric's current state (all contexts and arms); -1 none. */
static int64_t total(const char *f)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	int64_t n = 0;
	int rc = bot_store_load(state, f, &s, NULL, err, sizeof(err));

	ck_assert_msg(rc >= 0, "%s", err);
	if (rc == 1) {
		bot_state_free(&s);
		return -1;
	}
	for (size_t i = 0; i < bot_kb_count(s.kb); i++)
		for (int a = 0; a < BOT_NARMS; a++)
			n += (int64_t)bot_kb_at(s.kb, i)->arm[a].n;
	bot_state_free(&s);
	return n;
}

/* The robust latency (us) of arm a of the 1 MiB allreduce context of
 * nranks/nnodes in the fabric; NaN none. n_out: its samples. */
static double robust_us(uint32_t nranks, uint32_t nnodes, int a, uint64_t *n_out)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	const struct bot_kb_ctx *c;
	double us = NAN;

	ck_assert_int_eq(bot_store_load(state, FABRIC, &s, NULL, err, sizeof(err)), 0);
	c = bot_kb_find(s.kb, bot_ctx_key(4, bot_size_bucket(MIB), nranks, nnodes));
	if (n_out)
		*n_out = c ? c->arm[a].n : 0;
	if (c)
		us = bot_stats_robust_us(&c->arm[a]);
	bot_state_free(&s);
	return us;
}

static int count_dir(const char *d, const char *suffix)
{
	char cmd[BOT_TEST_PATH_MAX + 64];
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' 2>/dev/null", d);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	while (fgets(cmd, sizeof(cmd), p)) {
		size_t l = strlen(cmd), sl = strlen(suffix);

		if (l && cmd[l - 1] == '\n')
			cmd[--l] = 0;
		if (l >= sl && !strcmp(cmd + l - sl, suffix))
			n++;
	}
	pclose(p);
	return n;
}

static int file_has(const char *path, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return strstr(buf, needle) != NULL;
}

/* ---- groups and readiness ----------------------------------------------------- */

START_TEST(t_groups_ready)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct step s = mkstep("100", 2, 1000), s3 = mkstep("101", 3, 1000);
	struct bot_spool_rec rec[16];
	int64_t now = (int64_t)time(NULL);
	uint64_t n;

	/* node 0 of a 2-node step: not ready (1 of 2 nodes, settling) */
	for (int i = 0; i < 16; i++)
		sample(&rec[i], 7, MIB, 16, 2, 0, (uint64_t)i, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 16, NULL);
	conf_init(&c, now);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->waiting, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 0);
	ck_assert_str_eq(fab(&r, FABRIC)->snapshot, "");
	ck_assert_int_eq(total(FABRIC), -1);
	bot_compact_result_free(&r);

	/* node 1 arrives, slower: the step is whole, merged with the minimum */
	for (int i = 0; i < 16; i++)
		sample(&rec[i], 7, MIB, 16, 2, 8, (uint64_t)i, ARM_RING_LL, 30000);
	put_delta(inbox, &s, "n1", rec, 16, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 2);
	ck_assert_uint_eq(fab(&r, FABRIC)->steps, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->offered, 16);
	ck_assert_int_eq(total(FABRIC), 16);
	ck_assert_double_eq_tol(robust_us(16, 2, ARM_RING_LL, &n), 10.0, 0.2);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	bot_compact_result_free(&r);

	/* a 3-node step with 2 deltas: waits, then merges once settled */
	put_step(inbox, &s3, 9, 4, ARM_RING_LL, 20000);
	{
		char p[BOT_TEST_PATH_MAX];

		snprintf(p, sizeof(p), "%s/c1.101.0.0.n2.nbd", inbox);
		ck_assert_int_eq(unlink(p), 0);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->waiting, 2);
	bot_compact_result_free(&r);
	c.now = now + 299;
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->waiting, 2);
	bot_compact_result_free(&r);
	c.now = now + 400;
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 2);
	ck_assert_int_eq(total(FABRIC), 16 + 4);
	bot_compact_result_free(&r);
}
END_TEST

static int why_has(const char *name, const char *needle)
{
	char p[BOT_TEST_PATH_MAX + 8];

	snprintf(p, sizeof(p), "%s/%s.why", quar, name);
	return file_has(p, needle);
}

static int held_why_has(const char *name, const char *needle)
{
	char p[BOT_TEST_PATH_MAX + 8];

	snprintf(p, sizeof(p), "%s/%s.why", held, name);
	return file_has(p, needle);
}


/* max_wait: a step still receiving deltas merges once its oldest is old
 * enough; a step that ended before the dedup horizon is quarantined. */
static void age(const char *name, int64_t mtime)
{
	char p[BOT_TEST_PATH_MAX];
	struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };

	ck_assert_int_eq(utimensat(AT_FDCWD, bot_test_path(p, inbox, name), ts, 0), 0);
}

START_TEST(t_max_wait_too_old)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t now = (int64_t)time(NULL);
	struct step s = mkstep("150", 3, 1000);
	char p[BOT_TEST_PATH_MAX];

	put_step(inbox, &s, 1, 4, ARM_RING_LL, 10000);
	ck_assert_int_eq(unlink(bot_test_path(p, inbox, "c1.150.0.0.n2.nbd")), 0);
	age("c1.150.0.0.n0.nbd", now - 3000);	/* n1 is fresh: not settled */
	conf_init(&c, now);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->waiting, 2);
	bot_compact_result_free(&r);
	age("c1.150.0.0.n0.nbd", now - 3700);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 2);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 4);

	/* ended 15 windows ago: the ledger no longer remembers that far */
	s = mkstep("151", 1, 1000);
	s.t_start = (uint64_t)(now - 15 * 86400 - 100);
	s.t_end = (uint64_t)(now - 15 * 86400);
	put_step(inbox, &s, 2, 4, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.by_reason[BOT_Q_TOO_OLD], 1);
	bot_compact_result_free(&r);
	ck_assert(why_has("c1.151.0.0.n0.nbd", "too old to dedup"));
	ck_assert_int_eq(total(FABRIC), 4);
}
END_TEST

/* ---- dedup -------------------------------------------------------------------- */

START_TEST(t_dedup)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct step s = mkstep("200", 1, 1000);
	char snap1[BOT_STATE_NAME_MAX], prov[BOT_TEST_PATH_MAX];

	conf_init(&c, (int64_t)time(NULL));
	put_step(outbox, &s, 5, 32, ARM_RING_LL, 10000);
	/* shipped twice: the second run finds nothing, then the same bytes again */
	{
		struct bot_ship_opts o = { outbox, state, 60, NULL };
		struct bot_ship_result sr;

		ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
		ck_assert_uint_eq(sr.shipped, 1);
	}
	/* a copy under another name is not that delta: the reader refuses it */
	{
		char cmd[2 * BOT_TEST_PATH_MAX + 32];

		snprintf(cmd, sizeof(cmd), "cp '%s/c1.200.0.0.n0.nbd' '%s/c1.200.0.0.n9.nbd'", inbox,
			 inbox);
		ck_assert_int_eq(system(cmd), 0);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	ck_assert_uint_eq(r.by_reason[BOT_Q_UNREADABLE], 1);
	ck_assert(why_has("c1.200.0.0.n9.nbd", "c1.200.0.0.n9.nbd"));
	strcpy(snap1, fab(&r, FABRIC)->snapshot);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 32);

	/* the same delta shipped again in a later run: a duplicate, counted once */
	put_step(outbox, &s, 5, 32, ARM_RING_LL, 10000);
	{
		struct bot_ship_opts o = { outbox, state, 60, NULL };
		struct bot_ship_result sr;

		ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
		ck_assert_uint_eq(sr.shipped, 1);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->duplicate, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 0);
	ck_assert_str_eq(fab(&r, FABRIC)->snapshot, "");
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 32);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	snprintf(prov, sizeof(prov), "%s/.ledger/%s/provenance.log", state, FABRIC);
	ck_assert(file_has(prov, " merged - c1.200.0.0.n0.nbd 1000 - n0 f1"));
	ck_assert(file_has(prov, " duplicate - c1.200.0.0.n0.nbd"));
	/* the ledger is admin-only */
	{
		struct stat st;
		char p[BOT_TEST_PATH_MAX];

		snprintf(p, sizeof(p), "%s/.ledger/%s", state, FABRIC);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0700);
		ck_assert_int_eq(stat(prov, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0600);
	}
}
END_TEST

/* ---- quarantine ------------------------------------------------------------------ */


START_TEST(t_impossible)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[2];
	char name[BOT_DELTA_NAME_MAX];
	struct step s;

	conf_init(&c, (int64_t)time(NULL));
	/* nRanks over 64 x step nodes */
	s = mkstep("300", 1, 1000);
	sample(&rec[0], 1, MIB, 65, 1, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	/* nRanks over the job's GPUs */
	s = mkstep("301", 1, 1000);
	s.gpus = 8;
	sample(&rec[0], 1, MIB, 16, 1, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	/* a duration longer than the step (+60 s) */
	s = mkstep("302", 1, 1000);
	sample(&rec[0], 1, MIB, 8, 1, 0, 0, ARM_RING_LL, (s.t_end - s.t_start + 61) * 1000000000ull);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	/* calls over (end - start + 60) x 10^6 */
	s = mkstep("303", 1, 1000);
	sample(&rec[0], 1, MIB, 8, 1, 0, 0, ARM_RING_LL, 10000);
	memset(&rec[1], 0, sizeof(rec[1]));
	rec[1] = rec[0];
	rec[1].kind = BOT_SPOOL_SUMMARY;
	rec[1].arm = BOT_SPOOL_ARM_NONE;
	rec[1].nchannels = 0;
	rec[1].seq = rec[1].duration_ns = 0;
	rec[1].calls = (s.t_end - s.t_start + 60) * 1000000ull + 1;
	put_delta(inbox, &s, "n0", rec, 2, NULL);
	/* a 2-node step whose deltas disagree on the uid */
	s = mkstep("304", 2, 1000);
	sample(&rec[0], 1, MIB, 16, 2, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	s.uid = 1001;
	sample(&rec[0], 1, MIB, 16, 2, 8, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n1", rec, 1, name);
	/* not a delta at all */
	bot_test_write(inbox, "junk.nbd", "not a delta", 11);
	/* a fine one next to them */
	s = mkstep("305", 1, 1000);
	put_step(inbox, &s, 1, 3, ARM_RING_LL, 10000);

	ck_assert_int_eq(bot_compact_run(&c, &r, &nlog), 0);
	ck_assert_uint_eq(r.quarantined, 7);
	ck_assert_uint_eq(r.by_reason[BOT_Q_IMPOSSIBLE], 4);
	ck_assert_uint_eq(r.by_reason[BOT_Q_GROUP], 2);
	ck_assert_uint_eq(r.by_reason[BOT_Q_UNREADABLE], 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 3);
	ck_assert(why_has("c1.300.0.0.n0.nbd", "nRanks 65 over the 64 x step nodes = 64"));
	ck_assert(why_has("c1.301.0.0.n0.nbd", "nRanks 16 over the job's GPUs 8"));
	ck_assert(why_has("c1.302.0.0.n0.nbd", "a duration of"));
	ck_assert(why_has("c1.303.0.0.n0.nbd", "calls in a step of"));
	ck_assert(why_has("c1.304.0.0.n0.nbd", "disagree on the uid"));
	ck_assert(why_has(name, "disagree on the uid"));
	ck_assert(why_has("junk.nbd", "junk.nbd"));
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	{
		/* provenance: quarantines before the fabric is known go to the top-level
		 * log (admin-only), the others to the fabric's */
		char p[BOT_TEST_PATH_MAX], fp[BOT_TEST_PATH_MAX], line[512];
		struct stat st;

		snprintf(p, sizeof(p), "%s/.ledger/provenance.log", state);
		snprintf(fp, sizeof(fp), "%s/.ledger/%s/provenance.log", state, FABRIC);
		ck_assert(file_has(p, " quarantined unreadable junk.nbd - - - -\n"));
		ck_assert(file_has(p, " quarantined inconsistent-step c1.304.0.0.n0.nbd 1000 - n0 f1\n"));
		snprintf(line, sizeof(line), " quarantined inconsistent-step %s 1001 - n1 f1\n", name);
		ck_assert(file_has(p, line));
		ck_assert(!file_has(p, "impossible-context"));
		ck_assert(file_has(fp, " quarantined impossible-context c1.300.0.0.n0.nbd 1000 - n0 f1"));
		ck_assert(!file_has(fp, "junk.nbd"));
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0600);
		snprintf(p, sizeof(p), "%s/.ledger", state);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0700);
	}

	/* the same name quarantined again never overwrites the first */
	bot_test_write(inbox, "junk.nbd", "still not a delta", 17);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert(why_has("junk.nbd.1", "junk.nbd"));
	{
		char p[BOT_TEST_PATH_MAX];

		ck_assert(file_has(bot_test_path(p, quar, "junk.nbd"), "not a delta"));
		ck_assert(file_has(bot_test_path(p, quar, "junk.nbd.1"), "still not a delta"));
	}
}
END_TEST

/* Four contexts with 128 samples at 10 us in the fabric; a step of 8
 * samples each at 50 us contradicts it (4 of 4); one at 12 us does not. */
START_TEST(t_consensus)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[4 * 128];
	struct step s = mkstep("400", 1, 1000);
	size_t n;

	conf_init(&c, (int64_t)time(NULL));
	n = 0;
	for (uint32_t k = 0; k < 4; k++)
		for (int i = 0; i < 128; i++)
			sample(&rec[n++], 1, MIB << k, 8, 1, 0, (uint64_t)i, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, n, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 512);

	s = mkstep("401", 1, 2000);
	n = 0;
	for (uint32_t k = 0; k < 4; k++)
		for (int i = 0; i < 8; i++)
			sample(&rec[n++], 2, MIB << k, 8, 1, 0, (uint64_t)i, ARM_RING_LL, 50000);
	put_delta(inbox, &s, "n0", rec, n, NULL);
	s = mkstep("402", 1, 3000);
	n = 0;
	for (uint32_t k = 0; k < 4; k++)
		for (int i = 0; i < 8; i++)
			sample(&rec[n++], 3, MIB << k, 8, 1, 0, (uint64_t)i, ARM_RING_LL, 12000);
	put_delta(inbox, &s, "n0", rec, n, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	/* held, not quarantined (one user: nobody agrees yet) */
	ck_assert_uint_eq(r.by_reason[BOT_Q_CONSENSUS], 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->held_new, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->held, 1);
	ck_assert_uint_eq(r.held, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	ck_assert(held_why_has("c1.401.0.0.n0.nbd", "contradicts the fabric on 4 of 4 contexts"));
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	ck_assert_int_eq(total(FABRIC), 512 + 32);
	/* the next run lists it again and keeps it (no provenance line twice) */
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.held_listed, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->held, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->held_new, 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 512 + 32);
}
END_TEST

/* ---- consensus over users (section 14, "Consensus") -------------------------------- */

/*
 * A step of uid `uid` ending at t - 10 into the inbox: nsamp samples at ns
 * of allreduce (MIB << k) on comm k + 1, for each of nctx contexts, arm
 * ring/ll; its delta's name in name (may be NULL).
 */
static void ctx_step(int64_t t, const char *job, uint32_t uid, int nctx, int nsamp, uint64_t ns,
		     char *name)
{
	struct bot_spool_rec *rec = calloc((size_t)(nctx * nsamp), sizeof(*rec));
	struct step s = mkstep(job, 1, uid);
	size_t n = 0;

	ck_assert_ptr_nonnull(rec);
	s.t_start = (uint64_t)t - 50;
	s.t_end = (uint64_t)t - 10;
	for (int k = 0; k < nctx; k++)
		for (int i = 0; i < nsamp; i++)
			sample(&rec[n++], 1 + (uint64_t)k, MIB << k, 8, 1, 0, (uint64_t)i,
			       ARM_RING_LL, ns);
	put_delta(inbox, &s, "n0", rec, n, name);
	free(rec);
}

/* The robust latency (us) of ring/ll of context k (allreduce MIB << k, 8
 * ranks, 1 node) in the fabric. */
static double ctx_us(int k)
{
	struct bot_state st;
	char err[BOT_STATE_ERR_MAX];
	const struct bot_kb_ctx *c;
	double us = NAN;

	ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
	c = bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB << k), 8, 1));
	if (c)
		us = bot_stats_robust_us(&c->arm[ARM_RING_LL]);
	bot_state_free(&st);
	return us;
}

/*
 * (a) The audit's case: 6 contexts, 1,024 samples per context per window
 * from one step of one of 7 users (uid 1000 + w % 7), 60 windows at 10 us;
 * then the hardware is 3x slower (30 us). The first two steps are held
 * (one user, then two); the third window's step makes three users, and the
 * three merge; once the fabric is within a factor 2 of 30 us, steps no
 * longer contradict it and merge at once. The robust latency of every
 * context crosses 20 us (halfway) within 16 windows.
 */
START_TEST(t_consensus_follows)
{
	enum { NCTX = 6, S = 1024, STEADY = 60, AFTER = 24 };
	const int64_t base = 86400ll * 20000 + 43200;
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int crossed = -1;
	double prev = 0;
	char job[32];

	conf_init(&c, base);
	for (int w = 0; w < STEADY; w++) {
		c.now = base + (int64_t)w * 86400;
		snprintf(job, sizeof(job), "b%d", w);
		ctx_step(c.now, job, 1000 + (uint32_t)(w % 7), NCTX, S, 10000, NULL);
		ck_assert_int_eq(compact(&c, &r), 0);
		ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
		bot_compact_result_free(&r);
	}
	for (int k = 0; k < NCTX; k++)
		ck_assert_double_eq_tol(ctx_us(k), 10.0, 0.2);
	printf("consensus: %d contexts x %d samples per window, 3x slower after window %d\n"
	       "consensus:  k  held merged accepted  ring/ll us (6 contexts: min max)\n", NCTX, S,
	       STEADY - 1);
	for (int k = 1; k <= AFTER; k++) {
		int w = STEADY - 1 + k;
		const struct bot_compact_fabric *f;
		double lo = INFINITY, hi = -INFINITY;

		c.now = base + (int64_t)w * 86400;
		snprintf(job, sizeof(job), "h%d", w);
		ctx_step(c.now, job, 1000 + (uint32_t)(w % 7), NCTX, S, 30000, NULL);
		ck_assert_int_eq(compact(&c, &r), 0);
		f = fab(&r, FABRIC);
		ck_assert_ptr_nonnull(f);
		ck_assert_uint_eq(r.quarantined, 0);
		for (int j = 0; j < NCTX; j++) {
			double us = ctx_us(j);

			lo = us < lo ? us : lo;
			hi = us > hi ? us : hi;
		}
		printf("consensus: %2d  %4zu %6zu %8zu  %6.2f %6.2f\n", k, f->held, f->merged,
		       f->accepted, lo, hi);
		if (k <= 2) {	/* one user, then two: held */
			ck_assert_uint_eq(f->held, (size_t)k);
			ck_assert_uint_eq(f->merged, 0);
			ck_assert_double_eq_tol(hi, 10.0, 0.2);
		} else if (k == 3) {	/* three users: the three merge */
			ck_assert_uint_eq(f->held, 0);
			ck_assert_uint_eq(f->merged, 3);
			ck_assert_uint_eq(f->accepted, 3);
			ck_assert_double_gt(lo, 10.5);
		} else {
			/* held until a third user agrees (every third window), or merged
			 * at once when the fabric no longer contradicts the step */
			ck_assert_uint_le(f->held, 2);
			ck_assert(f->merged == 0 || f->merged == 1 || f->merged == 3);
			ck_assert_double_ge(lo, prev - 0.01);
		}
		prev = lo;
		bot_compact_result_free(&r);
		if (crossed < 0 && lo > 20.0)
			crossed = k;
	}
	printf("consensus: every context past 20 us (halfway from 10 to 30) after %d window(s)\n",
	       crossed);
	ck_assert_int_gt(crossed, 3);
	ck_assert_int_le(crossed, 16);
	ck_assert_int_eq(count_dir(held, ".nbd"), 0);
}
END_TEST

/*
 * (b) One user's 1,000-job array reporting the best arm 100x slower (1 ms
 * against 10 us, 4 contexts): held, never merged, quarantined once held
 * hold_windows (3 here) windows; the fabric moves only with the honest
 * step of each window (another user, 10 us).
 */
START_TEST(t_consensus_one_user)
{
	enum { NCTX = 4, JOBS = 1000 };
	const int64_t base = 86400ll * 20000 + 43200;
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t t0, per_ctx = 128;	/* one bin per context: decays per bin, exactly */
	char job[32];

	conf_init(&c, base);
	c.hold_windows = 3;
	ctx_step(base, "100", 1000, NCTX, 128, 10000, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	t0 = total(FABRIC);
	ck_assert_int_eq(t0, NCTX * 128);
	c.now = base + 86400;
	for (int j = 0; j < JOBS; j++) {
		snprintf(job, sizeof(job), "%d", 7000 + j);
		ctx_step(c.now, job, 6666, NCTX, 8, 1000000, NULL);
	}
	printf("one user: window  held  quarantined  merged  samples  ring/ll us\n");
	for (int w = 1; w <= 5; w++) {
		const struct bot_compact_fabric *f;
		double us;

		c.now = base + (int64_t)w * 86400;
		if (w > 1) {	/* the honest traffic of the window */
			snprintf(job, sizeof(job), "%d", 100 + w);
			ctx_step(c.now, job, 1000 + (uint32_t)w, NCTX, 128, 10000, NULL);
		}
		ck_assert_int_eq(compact(&c, &r), 0);
		f = fab(&r, FABRIC);
		us = ctx_us(0);
		printf("one user: %6d  %4zu  %11zu  %6zu  %7" PRId64 "  %6.2f\n", w, f->held,
		       f->quarantined, f->merged, total(FABRIC), us);
		ck_assert_uint_eq(f->accepted, 0);
		ck_assert_uint_eq(f->merged, w > 1 ? 1 : 0);
		if (w <= 4) {	/* window 1 + 3 */
			ck_assert_uint_eq(f->held, JOBS);
			ck_assert_uint_eq(r.by_reason[BOT_Q_CONSENSUS], 0);
		} else {
			ck_assert_uint_eq(f->held, 0);
			ck_assert_uint_eq(r.by_reason[BOT_Q_CONSENSUS], JOBS);
		}
		bot_compact_result_free(&r);
		if (w == 2)	/* nothing published in window 1: two windows of decay */
			per_ctx = per_ctx * 15 / 16;
		if (w > 1)
			per_ctx = per_ctx * 15 / 16 + 128;
		ck_assert_int_eq(total(FABRIC), NCTX * per_ctx);
		ck_assert_double_eq_tol(us, 10.0, 0.2);
	}
	ck_assert_int_eq(count_dir(held, ".nbd"), 0);
	ck_assert_int_eq(count_dir(held, ".why"), 0);
	ck_assert_int_eq(count_dir(quar, ".nbd"), JOBS);
	ck_assert(why_has("c1.7000.0.0.n0.nbd", "contradicted the fabric on 4 of 4 contexts and "
			  "fewer than 3 users agreed within 3 windows"));
}
END_TEST

/*
 * (c) Two users agreeing (below consensus_users = 3) do not merge, nor does
 * a third user contradicting in the other direction (faster); (d) the third
 * user slower, in a later run, merges the two held steps with it.
 */
START_TEST(t_consensus_users)
{
	const int64_t base = 86400ll * 20000 + 43200;
	struct bot_compact_conf c;
	struct bot_compact_result r;
	char n1[BOT_DELTA_NAME_MAX], n3[BOT_DELTA_NAME_MAX], prov[BOT_TEST_PATH_MAX], line[512];

	conf_init(&c, base);
	ctx_step(base, "200", 1000, 4, 128, 10000, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	c.now = base + 86400;
	ctx_step(c.now, "201", 2001, 4, 8, 50000, n1);
	ctx_step(c.now, "202", 2002, 4, 8, 50000, NULL);
	ctx_step(c.now, "203", 2003, 4, 8, 2000, n3);	/* faster: another direction */
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->held_new, 3);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 512);
	ck_assert_int_eq(count_dir(held, ".nbd"), 3);

	c.now = base + 2 * 86400;
	ctx_step(c.now, "204", 2004, 4, 8, 40000, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.held_listed, 3);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 3);
	ck_assert_uint_eq(fab(&r, FABRIC)->accepted, 3);
	ck_assert_uint_eq(fab(&r, FABRIC)->held, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->held_new, 0);
	bot_compact_result_free(&r);
	/* two windows of decay per context (128 -> 120 -> 112), then 3 x 8 */
	ck_assert_int_eq(total(FABRIC), 4 * (112 + 3 * 8));
	ck_assert_int_eq(count_dir(held, ".nbd"), 1);
	ck_assert_int_eq(count_dir(held, ".why"), 1);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	ck_assert(held_why_has(n3, "contradicts the fabric on 4 of 4 contexts"));
	snprintf(prov, sizeof(prov), "%s/.ledger/%s/provenance.log", state, FABRIC);
	snprintf(line, sizeof(line), " held consensus %s 2001 ", n1);
	ck_assert(file_has(prov, line));
	snprintf(line, sizeof(line), " merged - %s 2001 ", n1);
	ck_assert(file_has(prov, line));
}
END_TEST

/* (e) A crash after the publish, before the accepted held deltas leave
 * held/: the rerun drops them as duplicates; every delta counts once. */
START_TEST(t_crash_held)
{
	const int64_t base = 86400ll * 20000 + 43200;
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t old, mid;
	int status;
	pid_t pid;

	conf_init(&c, base);
	ctx_step(base, "300", 1000, 4, 128, 10000, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	old = total(FABRIC);
	ck_assert_int_eq(old, 4 * 128);
	c.now = base + 86400;
	ctx_step(c.now, "301", 2001, 4, 8, 50000, NULL);
	ctx_step(c.now, "302", 2002, 4, 8, 50000, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(count_dir(held, ".nbd"), 2);
	ctx_step(c.now, "303", 2003, 4, 8, 50000, NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv(BOT_CRASH_ENV, "compact-before-held-cleanup", 1);
		(void)compact(&c, &r);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d, want the "
		      "crash's SIGKILL", status);
	mid = total(FABRIC);
	ck_assert_int_eq(mid, 4 * (120 + 3 * 8));	/* published */
	ck_assert_int_eq(count_dir(held, ".nbd"), 2);	/* not yet removed */
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->duplicate + fab(&r, FABRIC)->merged, 2 + 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 4 * (120 + 3 * 8));
	ck_assert_int_eq(count_dir(held, ".nbd"), 0);
	ck_assert_int_eq(count_dir(held, ".why"), 0);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	ck_assert_int_eq(count_dir(quar, ".nbd"), 0);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 4 * (120 + 3 * 8));
}
END_TEST


/* Prior rows follow the newest merged step; --fabric leaves the others;
 * a fabric outside the site's list is quarantined. */
static void summary(struct bot_spool_rec *r, float cost0)
{
	sample(r, 1, MIB, 8, 1, 0, 0, ARM_RING_LL, 0);
	r->kind = BOT_SPOOL_SUMMARY;
	r->flags = 0;
	r->arm = BOT_SPOOL_ARM_NONE;
	r->nchannels = 0;
	r->seq = r->duration_ns = 0;
	r->calls = 100;
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r->cost[i] = i == ARM_RING_LL ? cost0 : -1.0f;
}

START_TEST(t_prior_fabrics)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[1];
	struct bot_state st;
	char err[BOT_STATE_ERR_MAX];
	const char *only[] = { "f2" }, *site[] = { FABRIC, "f2" };
	struct step s;

	conf_init(&c, (int64_t)time(NULL));
	s = mkstep("1100", 1, 1000);
	summary(&rec[0], 5.0f);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	s = mkstep("1101", 1, 1000);
	summary(&rec[0], 9.0f);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
	ck_assert_float_eq(bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB), 8, 1))
			   ->prior[ARM_RING_LL], 9.0f);
	ck_assert_uint_eq(bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB), 8, 1))->calls,
			  200);
	bot_state_free(&st);

	/* --fabric f2: f1's step stays in the inbox */
	s = mkstep("1102", 1, 1000);
	put_step(inbox, &s, 1, 5, ARM_RING_LL, 10000);
	s = mkstep("1103", 1, 1000);
	s.fabric = "f2";
	put_step(inbox, &s, 1, 7, ARM_RING_LL, 10000);
	c.only = only;
	c.nonly = 1;
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.nfab, 1);
	ck_assert_uint_eq(r.skipped, 1);
	ck_assert_uint_eq(fab(&r, "f2")->merged, 1);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total("f2"), 7);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 1);

	/* the site's fabric list */
	c.only = NULL;
	c.nonly = 0;
	c.fabrics = site + 1;
	c.nfabrics = 1;
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.by_reason[BOT_Q_FABRIC], 1);
	bot_compact_result_free(&r);
	ck_assert(why_has("c1.1102.0.0.n0.nbd", "fabric f1 is not in the site's fabric list"));
	{
		char p[BOT_TEST_PATH_MAX];

		snprintf(p, sizeof(p), "%s/.ledger/provenance.log", state);
		ck_assert(file_has(p, " quarantined unknown-fabric c1.1102.0.0.n0.nbd 1000 - n0 f1\n"));
	}
	(void)site;
}
END_TEST

/* ---- bounded influence -------------------------------------------------------------- */

/*
 * Twenty users' jobs measured ring/ll at 10 us (1,000 samples each); then
 * one user's 1,000-job array reports it 100x slower (64 samples a job).
 * With the per-user cap (4,096 per window) the fabric's robust latency
 * stays where it was; without it (a cap nobody reaches) the array moves it.
 */
static void attack(int64_t now, uint64_t user_cap, double *before, double *after,
		   uint64_t *offered, uint64_t *admitted, uint64_t *n_after)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	char job[32];
	uint64_t n;

	conf_init(&c, now);
	c.user_cap = user_cap;
	for (int u = 0; u < 20; u++) {
		struct step s;

		snprintf(job, sizeof(job), "%d", 500 + u);
		s = mkstep(job, 1, 100 + (uint32_t)u);
		put_step(inbox, &s, (uint64_t)u + 1, 1000, ARM_RING_LL, 10000);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	*before = robust_us(8, 1, ARM_RING_LL, &n);
	ck_assert_uint_eq(n, 20000);
	for (int j = 0; j < 1000; j++) {
		struct step s;

		snprintf(job, sizeof(job), "9000_%d", j);
		s = mkstep(job, 1, 7);
		s.array_job = 9000;
		s.array_task = (uint32_t)j;
		put_step(inbox, &s, 1000 + (uint64_t)j, 64, ARM_RING_LL, 1000000);
	}
	{
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(compact(&c, &r), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("compacted 1000 one-node steps (64 samples each) in %.3f s\n",
		       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	}
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1000);
	*offered = fab(&r, FABRIC)->offered;
	*admitted = fab(&r, FABRIC)->admitted;
	bot_compact_result_free(&r);
	*after = robust_us(8, 1, ARM_RING_LL, n_after);
}

START_TEST(t_user_cap)
{
	int64_t now = (int64_t)time(NULL);
	double b, a, b2, a2;
	uint64_t off, adm, off2, adm2, n, n2;

	attack(now, 4096, &b, &a, &off, &adm, &n);
	printf("user cap 4096: ring/ll robust latency %.2f us before, %.2f us after a 1000-job "
	       "array at 100x; samples admitted %" PRIu64 " of %" PRIu64 " offered (arm now %"
	       PRIu64 ")\n", b, a, adm, off, n);
	ck_assert_uint_eq(off, 64000);
	ck_assert_uint_eq(adm, 4096);
	ck_assert_uint_eq(n, 20000 + 4096);
	ck_assert_double_le(fabs(a - b) / b, 0.01);

	teardown();
	setup();
	attack(now, 1u << 30, &b2, &a2, &off2, &adm2, &n2);
	printf("no cap:        ring/ll robust latency %.2f us before, %.2f us after; admitted %"
	       PRIu64 " of %" PRIu64 "\n", b2, a2, adm2, off2);
	ck_assert_uint_eq(adm2, 64000);
	ck_assert_double_gt(a2, 10 * b2);
}
END_TEST

/* A trusted account is a second principal: two users of one account
 * together stay within account_cap. */
START_TEST(t_account_cap)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	uint64_t n;

	conf_init(&c, (int64_t)time(NULL));
	c.user_cap = 100;
	c.account_cap = 150;
	for (int u = 0; u < 2; u++) {
		struct step s;
		char job[16];

		snprintf(job, sizeof(job), "70%d", u);
		s = mkstep(job, 1, 10 + (uint32_t)u);
		s.flags |= BOT_DELTA_F_ACCOUNT;
		s.account = "proj";
		put_step(inbox, &s, 1 + (uint64_t)u, 120, ARM_RING_LL, 10000);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->offered, 240);
	ck_assert_uint_eq(fab(&r, FABRIC)->admitted, 150);
	bot_compact_result_free(&r);
	robust_us(8, 1, ARM_RING_LL, &n);
	ck_assert_uint_eq(n, 150);
}
END_TEST

/* Calls are capped per communicator's call as samples are: user_cap x 100
 * x nRanks as stored, since every rank's summary counts (formats.md 12,
 * 14). Two communicators of 8 ranks, 100 calls each: 1,600 stored calls
 * against a cap of 1 x 100 x 8 = 800. */
START_TEST(t_calls_cap)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[16];
	struct bot_state st;
	char err[BOT_STATE_ERR_MAX];
	struct step s = mkstep("750", 1, 1000);

	conf_init(&c, (int64_t)time(NULL));
	c.user_cap = 1;
	for (uint32_t i = 0; i < 16; i++) {
		summary(&rec[i], 5.0f);
		rec[i].comm_id = 1 + i / 8;
		rec[i].rank = i % 8;
	}
	put_delta(inbox, &s, "n0", rec, 16, NULL);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB), 8, 1))->calls,
			  800);
	/* 16 summaries of 100 calls, each a fifth of one (fewer than
	 * BOT_COMPILE_CALLS), capped to 800 calls: their count scales alike
	 * (16 x 13107 / 2), so the calls per job stay the 500 a summary must
	 * report to count whole */
	ck_assert_uint_eq(bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB), 8, 1))
			  ->summaries, 16 * 13107 / 2);
	bot_state_free(&st);
}
END_TEST

/* ---- decay -------------------------------------------------------------------------- */

START_TEST(t_decay)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct step s;
	uint64_t n, want;
	int64_t t1 = 86400 * 20000 + 100;

	conf_init(&c, t1);
	s = mkstep("800", 1, 1000);
	s.t_start = (uint64_t)t1 - 50;
	s.t_end = (uint64_t)t1 - 10;
	put_step(inbox, &s, 1, 1000, ARM_RING_LL, 10000);
	{
		struct bot_spool_rec sum;
		struct step s2 = s;

		s2.job = "799";
		summary(&sum, 5.0f);
		sum.calls = 1600;
		put_delta(inbox, &s2, "n0", &sum, 1, NULL);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	robust_us(8, 1, ARM_RING_LL, &n);
	ck_assert_uint_eq(n, 1000);

	/* three windows later: 1000 x 15/16 three times (rounded down), plus 10 */
	c.now = t1 + 3 * 86400;
	s = mkstep("801", 1, 1000);
	s.t_start = (uint64_t)c.now - 50;
	s.t_end = (uint64_t)c.now - 10;
	put_step(inbox, &s, 2, 10, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	robust_us(8, 1, ARM_RING_LL, &n);
	want = 1000;
	for (int w = 0; w < 3; w++)
		want = want * 15 / 16;
	ck_assert_uint_eq(n, want + 10);
	{
		struct bot_state st;
		char err[BOT_STATE_ERR_MAX];

		const struct bot_kb_ctx *k;

		/* calls decay too: 1600 -> 1500 -> 1406 -> 1318; the one
		 * summary's count follows the calls, rounded down (65536 ->
		 * 61440 -> 57589 -> 53984), so a communicator's calls per job
		 * stay 1600, never fewer */
		ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
		k = bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB), 8, 1));
		ck_assert_uint_eq(k->calls, 1318);
		ck_assert_uint_eq(k->summaries, 53984);
		ck_assert_msg(bot_kb_calls_per_comm(k) >= 1600 && bot_kb_calls_per_comm(k) < 1601,
			      "%g", bot_kb_calls_per_comm(k));
		bot_state_free(&st);
	}

	/* the same window again: no further decay */
	s = mkstep("802", 1, 1000);
	s.t_start = (uint64_t)c.now - 50;
	s.t_end = (uint64_t)c.now - 10;
	put_step(inbox, &s, 3, 10, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	robust_us(8, 1, ARM_RING_LL, &n);
	ck_assert_uint_eq(n, want + 20);
}
END_TEST

/*
 * Decay, shown: the fabric follows a hardware change and a new NCCL
 * version, and no counter grows without bound.
 *
 * One context (allreduce 1 MiB, 8 ranks on 1 node), arm ring/ll. Every
 * window (86400 s) one job step of one user brings S = 1024 samples (under
 * the per-user cap of 4096, so no cap scales it) and a summary row with 100
 * calls and a prior. Before each window's merge the state is multiplied by
 * 15/16 (rounded down, per bin), so after the merge n' = floor(15 n / 16)
 * + S: n stays below the ceiling 16 S (if n <= 16 S then 15/16 n + S <=
 * 16 S), and the calls below 16 x 100. 200 windows at 10 us reach that
 * steady state. Then the hardware changes: every step measures 20 us. The
 * old bin decays as (15/16)^k while the new one fills as 16 S (1 -
 * (15/16)^k); the robust location (section 6: the mean over the bins within
 * a factor 4 of the median, and 10 and 20 us are a factor 2 apart) is the
 * count-weighted mean, closer to 20 than to 10 as soon as the new bin holds
 * more: (15/16)^k < 1/2, k >= N = ceil(ln 2 / ln(16/15)) = 11. The prior
 * row (the NCCL cost model) is the newest merged step's: it changes in the
 * first window after the upgrade.
 */
static void decay_window(int64_t t, uint64_t w, uint64_t ns, float prior)
{
	enum { S = 1024 };
	struct bot_spool_rec *rec = calloc(S + 1, sizeof(*rec));
	struct step s;
	char job[32];

	ck_assert_ptr_nonnull(rec);
	snprintf(job, sizeof(job), "d%" PRIu64, w);
	s = mkstep(job, 1, 1000 + (uint32_t)(w % 7));
	s.t_start = (uint64_t)t - 50;
	s.t_end = (uint64_t)t - 10;
	for (int i = 0; i < S; i++)
		sample(&rec[i], 1, MIB, 8, 1, 0, (uint64_t)i, ARM_RING_LL, ns);
	summary(&rec[S], prior);
	put_delta(inbox, &s, "n0", rec, S + 1, NULL);
	free(rec);
}

static void decay_state(uint64_t *n, uint64_t *calls, float *prior)
{
	struct bot_state st;
	char err[BOT_STATE_ERR_MAX];
	const struct bot_kb_ctx *k;

	ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
	k = bot_kb_find(st.kb, bot_ctx_key(4, bot_size_bucket(MIB), 8, 1));
	ck_assert_ptr_nonnull(k);
	*n = k->arm[ARM_RING_LL].n;
	*calls = k->calls;
	*prior = k->prior[ARM_RING_LL];
	bot_state_free(&st);
}

START_TEST(t_decay_follows)
{
	const uint64_t S = 1024, CALLS = 100, steady = 200;
	const int64_t base = 86400ll * 20000 + 43200;
	const int N = (int)ceil(log(2.0) / log(16.0 / 15.0));
	struct bot_compact_conf c;
	struct bot_compact_result r;
	uint64_t n, calls, sim_old = 0, sim_new = 0, max_n = 0, max_calls = 0, prev_n = 0;
	float prior;
	double us, prev_us;
	int flipped = -1;

	conf_init(&c, base);
	printf("decay: S=%" PRIu64 " samples/window, ceiling 16 S = %" PRIu64 " samples, calls "
	       "ceiling %" PRIu64 "; hardware changes after window %" PRIu64 ", N = %d\n", S,
	       16 * S, 16 * CALLS, steady - 1, N);
	printf("decay: window  samples  calls  ring/ll us  prior\n");
	for (uint64_t w = 0; w < steady; w++) {
		c.now = base + (int64_t)w * 86400;
		decay_window(c.now, w, 10000, 5.0f);
		ck_assert_int_eq(compact(&c, &r), 0);
		ck_assert_uint_eq(fab(&r, FABRIC)->admitted, S);
		bot_compact_result_free(&r);
		decay_state(&n, &calls, &prior);
		us = robust_us(8, 1, ARM_RING_LL, NULL);
		/* the integer recurrence, exactly (one bin: rounding per bin is per arm) */
		sim_old = sim_old * 15 / 16 + S;
		ck_assert_uint_eq(n, sim_old);
		ck_assert_uint_le(n, 16 * S);
		ck_assert_uint_le(calls, 16 * CALLS);
		if (n > max_n)
			max_n = n;
		if (calls > max_calls)
			max_calls = calls;
		if (w % 20 == 0 || w + 3 >= steady)
			printf("decay: %6" PRIu64 "  %7" PRIu64 "  %5" PRIu64 "  %10.2f  %5.1f\n", w, n,
			       calls, us, prior);
		ck_assert_double_eq_tol(us, 10.0, 0.2);
		prev_n = n;
	}
	/* steady: a fixed point below the ceiling, reached long before window 200 */
	ck_assert_uint_eq(prev_n, sim_old);
	ck_assert_uint_eq(sim_old * 15 / 16 + S, sim_old);
	ck_assert_uint_ge(n, 15 * S);
	prev_us = us;
	printf("decay: steady state %" PRIu64 " samples (ceiling %" PRIu64 "), calls %" PRIu64
	       " (ceiling %" PRIu64 "); the most seen over %" PRIu64 " windows: %" PRIu64
	       ", %" PRIu64 "\n", n, 16 * S, calls, 16 * CALLS, steady, max_n, max_calls);

	/* the hardware changes (20 us), and NCCL with it (a new prior) */
	for (int k = 1; k <= N + 5; k++) {
		uint64_t w = steady - 1 + (uint64_t)k;

		c.now = base + (int64_t)w * 86400;
		decay_window(c.now, w, 20000, 9.0f);
		ck_assert_int_eq(compact(&c, &r), 0);
		ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);	/* not a consensus quarantine */
		bot_compact_result_free(&r);
		decay_state(&n, &calls, &prior);
		us = robust_us(8, 1, ARM_RING_LL, NULL);
		sim_old = sim_old * 15 / 16;
		sim_new = sim_new * 15 / 16 + S;
		printf("decay: %6" PRIu64 "  %7" PRIu64 "  %5" PRIu64 "  %10.2f  %5.1f   k=%d: %"
		       PRIu64 " at 10 us, %" PRIu64 " at 20 us\n", w, n, calls, us, prior, k,
		       sim_old, sim_new);
		ck_assert_uint_eq(n, sim_old + sim_new);
		ck_assert_uint_le(n, 16 * S);
		ck_assert_float_eq(prior, 9.0f);	/* the newest step's prior, at once */
		if (flipped < 0 && us > 15.0)
			flipped = k;
		ck_assert_double_gt(us, prev_us);	/* moving towards 20 every window */
		prev_us = us;
		/* closer to 20 exactly when the new evidence outweighs the old */
		ck_assert_int_eq(us > 15.0, sim_new > sim_old);
	}
	printf("decay: closer to 20 us than to 10 us after %d window(s) (N = %d)\n", flipped, N);
	ck_assert_int_eq(flipped, N);
}
END_TEST

/* A bin near 2^32 in the published state never blocks a merge: the arm
 * halves. */
START_TEST(t_bin_saturates)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_state st;
	struct bot_kb_ctx *ctx;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX];
	uint64_t key = bot_ctx_key(4, bot_size_bucket(MIB), 8, 1), n;
	int q = bot_q_from_ns(10000);
	struct step s = mkstep("900", 1, 1000);

	ck_assert_int_eq(bot_state_init(&st, FABRIC), 0);
	ctx = bot_kb_get(st.kb, key);
	ck_assert_int_eq(bot_stats_add_q(&ctx->arm[ARM_RING_LL], q, UINT32_MAX - 10), 0);
	ck_assert_int_eq(bot_store_publish(state, &st, snap, err, sizeof(err)), 0);
	bot_state_free(&st);

	conf_init(&c, (int64_t)time(NULL));
	c.user_cap = 1000;
	put_step(inbox, &s, 1, 100, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	robust_us(8, 1, ARM_RING_LL, &n);
	/* the sum halved as a whole (section 12: c >> k for the smallest k that fits) */
	ck_assert_uint_eq(n, ((uint64_t)UINT32_MAX - 10 + 100) >> 1);
}
END_TEST

/* ---- the lease ------------------------------------------------------------------------ */

START_TEST(t_lease)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_lease l;
	char err[256], want[64], byte;
	int up[2], down[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(up), 0);
	ck_assert_int_eq(pipe(down), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (bot_lease_take(state, 0, &l, err, sizeof(err)) != 0)
			_exit(1);
		if (write(up[1], "x", 1) != 1)
			_exit(1);
		if (read(down[0], &byte, 1) < 0)	/* held until killed */
			_exit(1);
		_exit(0);
	}
	ck_assert_int_eq(read(up[0], &byte, 1), 1);
	ck_assert_int_eq(bot_lease_take(state, 0, &l, err, sizeof(err)), 1);
	snprintf(want, sizeof(want), " %ld", (long)pid);
	ck_assert_msg(strstr(l.holder, want) != NULL, "holder '%s' lacks pid %ld", l.holder,
		      (long)pid);
	conf_init(&c, (int64_t)time(NULL));
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_int_eq(r.busy, 1);
	bot_compact_result_free(&r);
	/* a holder killed with -9 frees it */
	ck_assert_int_eq(kill(pid, SIGKILL), 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(bot_lease_take(state, 0, &l, err, sizeof(err)), 0);
	bot_lease_release(&l);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_int_eq(r.busy, 0);
	bot_compact_result_free(&r);
	close(up[0]);
	close(up[1]);
	close(down[0]);
	close(down[1]);
}
END_TEST

/* Two compactors at once, waiting and not: every delta exactly once. */
static void race_compactors(int wait)
{
	struct step s;
	pid_t pid[2];
	int status;
	char job[16];

	for (int j = 0; j < 40; j++) {
		snprintf(job, sizeof(job), "%d", 1000 + j);
		s = mkstep(job, 2, 1000 + (uint32_t)j);
		put_step(inbox, &s, (uint64_t)j + 1, 50, ARM_RING_LL, 10000 + 100 * (uint64_t)j);
	}
	for (int k = 0; k < 2; k++) {
		pid[k] = fork();
		ck_assert_int_ge(pid[k], 0);
		if (pid[k] == 0) {
			struct bot_compact_conf c;
			struct bot_compact_result r;

			conf_init(&c, (int64_t)time(NULL));
			c.wait = wait;
			_exit(compact(&c, &r) == 0 ? (r.busy ? 3 : 0) : 1);
		}
	}
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(waitpid(pid[k], &status, 0), pid[k]);
		ck_assert(WIFEXITED(status));
		ck_assert_msg(WEXITSTATUS(status) == 0 || (!wait && WEXITSTATUS(status) == 3),
			      "compactor exit %d", WEXITSTATUS(status));
	}
	ck_assert_int_eq(total(FABRIC), 40 * 50);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
}

START_TEST(t_race_wait)
{
	race_compactors(1);
}
END_TEST

START_TEST(t_race_nowait)
{
	race_compactors(0);
}
END_TEST

/* ---- 64 producers, 8 shippers, one compactor -------------------------------------------- */

START_TEST(t_producers)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_ship_opts o = { outbox, state, 60, NULL };
	struct bot_ship_result sr;
	char done[BOT_TEST_PATH_MAX];
	pid_t prod[64], ship[8];
	int status;

	snprintf(done, sizeof(done), "%s/producers-done", dir);
	/* shippers first, racing each other and the producers */
	for (int k = 0; k < 8; k++) {
		ship[k] = fork();
		ck_assert_int_ge(ship[k], 0);
		if (ship[k] == 0) {
			for (;;) {
				int finished = access(done, F_OK) == 0;

				if (bot_ship_run(&o, &sr, &nlog) < 0)
					_exit(1);
				if (sr.conflict || sr.refused || sr.failed)
					_exit(2);
				if (finished && sr.seen == 0)
					_exit(0);
			}
		}
	}
	for (int p = 0; p < 64; p++) {
		prod[p] = fork();
		ck_assert_int_ge(prod[p], 0);
		if (prod[p] == 0) {
			char job[16];
			struct step s;

			/* each producer: a 2-node step of its own */
			snprintf(job, sizeof(job), "%d", 2000 + p);
			s = mkstep(job, 2, 5000 + (uint32_t)p);
			put_step(outbox, &s, (uint64_t)p + 1, 100, ARM_RING_LL,
				 10000 + 10 * (uint64_t)p);
			_exit(0);
		}
	}
	for (int p = 0; p < 64; p++) {
		ck_assert_int_eq(waitpid(prod[p], &status, 0), prod[p]);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	bot_test_write(dir, "producers-done", "", 0);
	for (int k = 0; k < 8; k++) {
		ck_assert_int_eq(waitpid(ship[k], &status, 0), ship[k]);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "shipper %d: %d", k,
			      status);
	}
	/* anything a shipper found busy is shipped by the next run */
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 0);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 128);
	ck_assert_int_eq(count_dir(inbox, ".tmp"), 0);
	conf_init(&c, (int64_t)time(NULL));
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 128);
	ck_assert_uint_eq(fab(&r, FABRIC)->steps, 64);
	bot_compact_result_free(&r);
	printf("64 producers, 8 shippers, 1 compactor: %" PRId64 " samples merged (want %d)\n",
	       total(FABRIC), 64 * 100);
	ck_assert_int_eq(total(FABRIC), 64 * 100);
}
END_TEST

/* ---- crash at every named point ------------------------------------------------------ */

static const char *const crash_points[] = {
	"ship-after-tmp", "ship-after-rename", "compact-after-ledger", "publish-after-snapshot",
	"compact-after-current", "compact-mid-cleanup",
};

static void ship_and_compact(int64_t now)
{
	struct bot_ship_opts o = { outbox, state, 60, NULL };
	struct bot_ship_result sr;
	struct bot_compact_conf c;
	struct bot_compact_result r;

	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	conf_init(&c, now);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
}

START_TEST(t_crash)
{
	const char *point = crash_points[_i];
	int64_t now = (int64_t)time(NULL);
	int64_t old, mid;
	struct step s;
	char job[16];
	int status;
	pid_t pid;

	s = mkstep("3000", 2, 1000);
	put_step(outbox, &s, 1, 10, ARM_RING_LL, 10000);
	ship_and_compact(now);
	old = total(FABRIC);
	ck_assert_int_eq(old, 10);
	for (int j = 1; j <= 3; j++) {
		snprintf(job, sizeof(job), "%d", 3000 + j);
		s = mkstep(job, 2, 1000 + (uint32_t)j);
		put_step(outbox, &s, 1 + (uint64_t)j, 10 * j, ARM_RING_LL, 10000);
	}
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv(BOT_CRASH_ENV, point, 1);
		ship_and_compact(now);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "%s: status %d, want "
		      "the crash's SIGKILL", point, status);
	mid = total(FABRIC);
	ck_assert_msg(mid == old || mid == old + 60, "%s: %" PRId64 " samples after the crash "
		      "(old %" PRId64 ", new %" PRId64 ")", point, mid, old, old + 60);
	ship_and_compact(now);
	ck_assert_msg(total(FABRIC) == old + 60, "%s: %" PRId64 " samples after the rerun, want %"
		      PRId64, point, total(FABRIC), old + 60);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 0);
	ck_assert_int_eq(count_dir(quar, ".nbd"), 0);
	/* and once more: nothing changes */
	ship_and_compact(now);
	ck_assert_int_eq(total(FABRIC), old + 60);
}
END_TEST

/* A fabric's first compaction killed after its snapshot's rename and before
 * `current` (formats.md 12): the snapshot is the state, the rerun completes
 * the publish (said at WARN), its ledger dedups the deltas still in the
 * inbox, and nothing is counted twice or lost (the rerun published over it
 * from no state until 2026-12-04, and a `current` deleted afterwards lost
 * the first run's jobs, their deltas gone from the inbox). */
START_TEST(t_crash_first_publish)
{
	struct bot_ship_opts o = { outbox, state, 60, NULL };
	struct bot_ship_result sr;
	struct bot_compact_conf c;
	struct bot_compact_result r;
	char warn[512] = "", cur[BOT_FABRIC_PATH_MAX + 64];
	struct bot_log wlog = { keep_warn, warn };
	int64_t now = (int64_t)time(NULL);
	struct step s = mkstep("3100", 2, 1000);
	int status;
	pid_t pid;

	put_step(outbox, &s, 1, 10, ARM_RING_LL, 10000);
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv(BOT_CRASH_ENV, "publish-after-snapshot", 1);
		conf_init(&c, now);
		compact(&c, &r);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "status %d", status);
	snprintf(cur, sizeof(cur), "%s/%s/current", state, FABRIC);
	ck_assert_int_eq(access(cur, F_OK), -1);
	ck_assert_int_eq(total(FABRIC), 10);	/* read before any writer came */
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 2);
	conf_init(&c, now);
	ck_assert_int_eq(bot_compact_run(&c, &r, &wlog), 0);
	ck_assert_msg(strstr(warn, "completed an interrupted first publish"), "%s", warn);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->duplicate, 2);
	bot_compact_result_free(&r);
	ck_assert_int_eq(access(cur, F_OK), 0);
	ck_assert_int_eq(total(FABRIC), 10);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
}
END_TEST

/* ---- ship ------------------------------------------------------------------------------ */

START_TEST(t_ship_files)
{
	struct bot_ship_opts o = { outbox, state, 60, NULL };
	struct bot_ship_result sr;
	struct step s = mkstep("600", 1, 1000);
	char name[BOT_DELTA_NAME_MAX], p[BOT_TEST_PATH_MAX], q[BOT_TEST_PATH_MAX];
	struct bot_spool_rec rec[1];

	sample(&rec[0], 1, MIB, 8, 1, 0, 0, ARM_RING_LL, 10000);
	put_delta(outbox, &s, "n0", rec, 1, name);
	/* the inbox holds that name with other bytes: kept, never overwritten */
	bot_test_write(inbox, name, "other bytes", 11);
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_uint_eq(sr.conflict, 1);
	ck_assert(file_has(bot_test_path(p, inbox, name), "other bytes"));
	ck_assert_int_eq(access(bot_test_path(p, outbox, name), F_OK), 0);
	ck_assert_int_eq(count_dir(inbox, ".tmp"), 0);
	/* the same bytes: done */
	ck_assert_int_eq(unlink(bot_test_path(p, inbox, name)), 0);
	{
		char cmd[2 * BOT_TEST_PATH_MAX + 16];

		snprintf(cmd, sizeof(cmd), "cp '%s/%s' '%s/'", outbox, name, inbox);
		ck_assert_int_eq(system(cmd), 0);
	}
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_uint_eq(sr.duplicate, 1);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 0);

	/* a FIFO, a link and a file with two links are refused, never waited on */
	ck_assert_int_eq(mkfifo(bot_test_path(p, outbox, "fifo.nbd"), 0644), 0);
	ck_assert_int_eq(symlink("/etc/passwd", bot_test_path(p, outbox, "link.nbd")), 0);
	bot_test_write(dir, "two", "x", 1);
	ck_assert_int_eq(link(bot_test_path(q, dir, "two"), bot_test_path(p, outbox, "two.nbd")), 0);
	ck_assert_int_eq(bot_ship_run(&o, &sr, &nlog), 0);
	ck_assert_uint_eq(sr.refused, 3);
	ck_assert_uint_eq(sr.shipped, 0);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 1);
	unlink(bot_test_path(p, outbox, "fifo.nbd"));
	unlink(bot_test_path(p, outbox, "link.nbd"));
	unlink(bot_test_path(p, outbox, "two.nbd"));

	/* out of time before the first file: everything waits */
	s = mkstep("601", 1, 1000);
	put_delta(outbox, &s, "n0", rec, 1, name);
	o.timeout = 1e-9;
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_int_eq(sr.timed_out, 1);
	ck_assert_uint_eq(sr.left, 1);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 1);
}
END_TEST

START_TEST(t_ship_command)
{
	struct bot_ship_opts o = { outbox, state, 60, "false" };
	struct bot_ship_result sr;
	struct step s = mkstep("610", 1, 1000);
	struct bot_spool_rec rec[1];

	sample(&rec[0], 1, MIB, 8, 1, 0, 0, ARM_RING_LL, 10000);
	put_delta(outbox, &s, "n0", rec, 1, NULL);
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_uint_eq(sr.failed, 1);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 1);
	/* blanks alone name no program: the delta is never run as the
	 * command; failed, kept */
	o.command = "   ";
	{
		char last[512] = "";
		struct bot_log klog = { keep_last, last };

		ck_assert_int_eq(bot_ship_run(&o, &sr, &klog), 0);
		ck_assert_msg(strstr(last, "the ship command names no program"), "%s", last);
	}
	ck_assert_uint_eq(sr.failed, 1);
	ck_assert_uint_eq(sr.shipped, 0);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 1);
	/* killed at the run's timeout */
	o.command = "tail -n 0 -f";
	o.timeout = 0.5;
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_uint_eq(sr.left, 1);
	ck_assert_int_eq(sr.timed_out, 1);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 1);
	/* exit 0: shipped, removed; the command got the file as its last word */
	o.command = "test -s";
	o.timeout = 60;
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_uint_eq(sr.shipped, 1);
	ck_assert_int_eq(count_dir(outbox, ".nbd"), 0);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
}
END_TEST

/* ---- the ledger codec ------------------------------------------------------------------ */

START_TEST(t_ledger_codec)
{
	struct bot_ledger l, m;
	uint8_t *b, *b2;
	size_t len, len2;
	char err[512];
	uint64_t key = bot_ctx_key(4, 80, 16, 2);

	ck_assert_int_eq(bot_ledger_init(&l, FABRIC), 0);
	l.window = 20000;
	for (uint64_t i = 0; i < 1000; i++)
		ck_assert_int_eq(bot_ledger_add_id(&l, bot_mix64(i), 19990 + i % 10), 0);
	ck_assert_int_eq(bot_ledger_add_id(&l, bot_mix64(3), 1), 0);	/* present: kept */
	ck_assert(bot_ledger_has(&l, bot_mix64(999)));
	ck_assert(!bot_ledger_has(&l, bot_mix64(1000)));
	ck_assert_int_eq(bot_ledger_use_add(&l, BOT_LEDGER_UID, 7, key, 3, 100), 0);
	ck_assert_int_eq(bot_ledger_use_add(&l, BOT_LEDGER_UID, 7, key, 3, 50), 0);
	ck_assert_int_eq(bot_ledger_use_add(&l, BOT_LEDGER_ACCOUNT, 99, key, BOT_LEDGER_CALLS, 5), 0);
	ck_assert_uint_eq(bot_ledger_used(&l, BOT_LEDGER_UID, 7, key, 3), 150);
	ck_assert_int_eq(bot_ledger_encode(&l, &b, &len, err, sizeof(err)), 0);
	ck_assert_uint_eq(len, BOT_LEDGER_HDR_SIZE + 1000 * 16 + 2 * 32 + 8);
	ck_assert_int_eq(bot_ledger_parse("l", b, len, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.nids, 1000);
	ck_assert_uint_eq(bot_ledger_used(&m, BOT_LEDGER_UID, 7, key, 3), 150);
	ck_assert(bot_ledger_has(&m, bot_mix64(3)));
	ck_assert_int_eq(bot_ledger_encode(&m, &b2, &len2, err, sizeof(err)), 0);
	ck_assert_uint_eq(len2, len);
	ck_assert_mem_eq(b2, b, len);	/* canonical */
	free(b2);
	bot_ledger_free(&m);
	/* a flipped byte, a cut file */
	b[BOT_LEDGER_HDR_SIZE + 3] ^= 1;
	ck_assert_int_eq(bot_ledger_parse("l", b, len, &m, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "CRC"));
	ck_assert_int_eq(bot_ledger_parse("l", b, len - 1, &m, err, sizeof(err)), -1);
	ck_assert_int_eq(bot_ledger_parse("l", b, 10, &m, err, sizeof(err)), -1);
	free(b);
	/* pruning and a new window */
	bot_ledger_prune(&l, 19995);
	ck_assert_uint_eq(l.nids, 500);
	bot_ledger_set_window(&l, 20001);
	ck_assert_uint_eq(bot_ledger_used(&l, BOT_LEDGER_UID, 7, key, 3), 0);
	bot_ledger_free(&l);
}
END_TEST


/* ---- review 1 (findings kept as regressions) ------------------------------------- */

static char logbuf[16384];

static void capture(void *arg, int level, const char *msg)
{
	size_t n = strlen(logbuf);

	(void)arg;
	snprintf(logbuf + n, sizeof(logbuf) - n, "[%s] %s\n", bot_log_level_name(level), msg);
}

static struct bot_log caplog = { capture, NULL };

/* The .why file holds the reason and one real newline (not an escaped one). */
START_TEST(t_why_newline)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[1];
	struct step s = mkstep("1700", 1, 1000);
	char p[BOT_TEST_PATH_MAX + 8], buf[1024];
	FILE *f;
	size_t n;

	sample(&rec[0], 1, MIB, 65, 1, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	conf_init(&c, (int64_t)time(NULL));
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.by_reason[BOT_Q_IMPOSSIBLE], 1);
	bot_compact_result_free(&r);
	snprintf(p, sizeof(p), "%s/c1.1700.0.0.n0.nbd.why", quar);
	f = fopen(p, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	ck_assert_uint_gt(n, 2);
	ck_assert_msg(buf[n - 1] == '\n' && !strchr(buf, '\n')[1], "%s", buf);
	ck_assert_ptr_null(strstr(buf, "\\x0a"));
}
END_TEST

/* A step that ends after now + one window is impossible: were it merged, its
 * identity would leave the ledger before the step left the horizon. */
START_TEST(t_future_step)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t now = (int64_t)time(NULL);
	struct step s = mkstep("1800", 1, 1000);

	s.t_start = (uint64_t)now + 2 * 86400;
	s.t_end = s.t_start + 100;
	put_step(inbox, &s, 1, 4, ARM_RING_LL, 10000);
	/* a step that ended in the next window (a clock a little ahead) is fine */
	s = mkstep("1801", 1, 1000);
	s.t_start = (uint64_t)now + 60;
	s.t_end = (uint64_t)now + 120;
	put_step(inbox, &s, 2, 4, ARM_RING_LL, 10000);
	conf_init(&c, now);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.by_reason[BOT_Q_IMPOSSIBLE], 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	ck_assert(why_has("c1.1800.0.0.n0.nbd", "in the future"));
	ck_assert_int_eq(total(FABRIC), 4);
}
END_TEST

/* One run with a clock far ahead: the fabric fails later (the ledger is
 * from the future), nothing is quarantined, the deltas wait. */
START_TEST(t_clock_ahead)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t now = (int64_t)time(NULL), ahead = now + 100 * 86400;
	struct step s = mkstep("1900", 1, 1000);

	s.t_start = (uint64_t)ahead - 200;
	s.t_end = (uint64_t)ahead - 100;
	put_step(inbox, &s, 1, 4, ARM_RING_LL, 10000);
	conf_init(&c, ahead);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	s = mkstep("1901", 1, 1000);
	put_step(inbox, &s, 2, 4, ARM_RING_LL, 10000);
	conf_init(&c, now);
	logbuf[0] = 0;
	ck_assert_int_eq(bot_compact_run(&c, &r, &caplog), -1);
	ck_assert_uint_eq(r.quarantined, 0);
	ck_assert_int_eq(fab(&r, FABRIC)->failed, 1);
	ck_assert_int_eq(r.stopped, 0);	/* a fabric failed: the run has a summary */
	bot_compact_result_free(&r);
	ck_assert_msg(strstr(logbuf, "the ledger is from the future (clock?)"), "%s", logbuf);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 1);
	ck_assert_int_eq(count_dir(quar, ".nbd"), 0);
}
END_TEST

/* A delta without an identity from Slurm (a user's claim, shipped from an
 * outbox the user owns) naming the job step of another user's Slurm job is
 * quarantined alone: the Slurm step's own deltas stay and merge. */
START_TEST(t_claim_not_slurm_step)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[1];
	struct step s = mkstep("1150", 2, 1000);

	sample(&rec[0], 1, MIB, 16, 2, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	sample(&rec[0], 1, MIB, 16, 2, 8, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n1", rec, 1, NULL);
	s.uid = 2000;
	s.flags &= ~(uint32_t)BOT_DELTA_F_SLURM;
	sample(&rec[0], 1, MIB, 16, 2, 0, 0, ARM_RING_LL, 99999999);
	put_delta(inbox, &s, "n9", rec, 1, NULL);
	conf_init(&c, (int64_t)time(NULL));
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.by_reason[BOT_Q_GROUP], 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 2);
	bot_compact_result_free(&r);
	ck_assert(why_has("c1.1150.0.0.n9.nbd", "without an identity from Slurm"));
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	ck_assert_int_eq(total(FABRIC), 1);
}
END_TEST

/* A step's deltas must agree on what the caps and the window use. */
START_TEST(t_step_disagrees)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_spool_rec rec[1];
	struct step s = mkstep("1100", 2, 1000);

	sample(&rec[0], 1, MIB, 16, 2, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	s.account = "acct";
	s.flags |= BOT_DELTA_F_ACCOUNT;
	sample(&rec[0], 1, MIB, 16, 2, 8, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n1", rec, 1, NULL);
	/* (one without bit3 is a claim, quarantined alone: t_claim_not_slurm_step) */
	s = mkstep("1101", 2, 1000);
	s.account = "acct";
	sample(&rec[0], 1, MIB, 16, 2, 0, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n0", rec, 1, NULL);
	s.flags |= BOT_DELTA_F_ACCOUNT;
	sample(&rec[0], 1, MIB, 16, 2, 8, 0, ARM_RING_LL, 10000);
	put_delta(inbox, &s, "n1", rec, 1, NULL);
	conf_init(&c, (int64_t)time(NULL));
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.by_reason[BOT_Q_GROUP], 4);
	bot_compact_result_free(&r);
	ck_assert(why_has("c1.1100.0.0.n0.nbd", "disagree on the account"));
	ck_assert(why_has("c1.1101.0.0.n1.nbd", "disagree on the flags"));
	ck_assert_int_eq(total(FABRIC), -1);
}
END_TEST

/* dedup_windows below 2 would quarantine a step of the previous window. */
START_TEST(t_dedup_windows_min)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;

	conf_init(&c, (int64_t)time(NULL));
	c.dedup_windows = 1;
	logbuf[0] = 0;
	ck_assert_int_eq(bot_compact_run(&c, &r, &caplog), -1);
	ck_assert_int_eq(r.failed, 1);
	ck_assert_int_eq(r.stopped, 1);	/* before any fabric: nothing to summarise */
	ck_assert_msg(strstr(logbuf, "dedup_windows must be at least 2"), "%s", logbuf);
	bot_compact_result_free(&r);
	c.dedup_windows = 2;
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
}
END_TEST

/* A ledger at its identity bound still takes new steps once the old
 * identities left the horizon (pruned before merging). */
START_TEST(t_ledger_full)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t now = (int64_t)time(NULL);
	struct step s = mkstep("4000", 1, 1000);
	struct bot_state cur;
	struct bot_ledger l;
	char err[BOT_LEDGER_ERR_MAX], lpath[BOT_TEST_PATH_MAX], snap[BOT_STATE_NAME_MAX];
	uint64_t digest;
	int ldir;

	put_step(inbox, &s, 1, 4, ARM_RING_LL, 10000);
	conf_init(&c, now);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(bot_store_load(state, FABRIC, &cur, snap, err, sizeof(err)), 0);
	ldir = bot_ledger_open_dir(state, FABRIC, lpath, sizeof(lpath), err, sizeof(err));
	ck_assert_int_ge(ldir, 0);
	ck_assert_int_eq(bot_ledger_load(ldir, lpath, FABRIC, cur.ledger, &l, err, sizeof(err)), 0);
	/* filled in place, sorted (adding 2^22 one by one takes minutes) */
	ck_assert_uint_eq(l.nids, 1);
	{
		struct bot_ledger_id keep = l.ids[0], *v = malloc(BOT_LEDGER_MAX_IDS * sizeof(*v));
		size_t k = 0;
		int kept = 0;

		ck_assert_ptr_nonnull(v);
		for (uint64_t i = 0; k + !kept < BOT_LEDGER_MAX_IDS; i++) {
			uint64_t id = (i + 1) << 40 | 0x77;

			if (!kept && keep.identity < id) {
				v[k++] = keep;
				kept = 1;
			}
			v[k++] = (struct bot_ledger_id){ id, l.window };
		}
		if (!kept)
			v[k++] = keep;	/* larger than every filler: last */
		free(l.ids);
		l.ids = v;
		l.nids = l.ids_sorted = l.idcap = k;
	}
	ck_assert_uint_eq(l.nids, BOT_LEDGER_MAX_IDS);
	ck_assert_int_eq(bot_ledger_write(ldir, lpath, &l, &digest, err, sizeof(err)), 0);
	bot_ledger_free(&l);
	close(ldir);
	cur.ledger = digest;
	cur.parent = bot_state_snap_digest(snap);
	ck_assert_msg(bot_store_publish_keep(state, &cur, 8, snap, err, sizeof(err)) >= 0, "%s", err);
	bot_state_free(&cur);
	/* 20 windows later: every identity is past the horizon */
	s = mkstep("4001", 1, 1000);
	s.t_start += 20 * 86400;
	s.t_end += 20 * 86400;
	put_step(inbox, &s, 2, 4, ARM_RING_LL, 10000);
	conf_init(&c, now + 20 * 86400);
	ck_assert_int_eq(bot_compact_run(&c, &r, &nlog), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
}
END_TEST


/* Trust: an account without bit3 is never a principal; ship refuses a
 * foreign outbox file that claims another uid or the trust bits. */
START_TEST(t_trust)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct bot_ship_opts o = { outbox, state, 60, NULL };
	struct bot_ship_result sr;
	struct bot_spool_rec rec[1];
	char name[BOT_DELTA_NAME_MAX], p[BOT_TEST_PATH_MAX];

	conf_init(&c, (int64_t)time(NULL));
	c.user_cap = 100;
	c.account_cap = 150;
	for (int u = 0; u < 2; u++) {
		struct step s;
		char job[16];

		snprintf(job, sizeof(job), "50%d", u);
		s = mkstep(job, 1, 10 + (uint32_t)u);
		s.flags = BOT_DELTA_F_ACCOUNT;	/* no bit3: the account is a claim */
		s.account = "proj";
		put_step(inbox, &s, 1 + (uint64_t)u, 120, ARM_RING_LL, 10000);
	}
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->offered, 240);
	ck_assert_uint_eq(fab(&r, FABRIC)->admitted, 200);	/* 100 per uid, no account cap */
	bot_compact_result_free(&r);

	if (geteuid() != 0)
		return;	/* the ship half needs files of another owner */
	sample(&rec[0], 1, MIB, 8, 1, 0, 0, ARM_RING_LL, 10000);
	{
		struct step s = mkstep("510", 1, 1000);	/* claims uid 1000, file owned by 4242 */

		s.flags = 0;
		put_delta(outbox, &s, "n0", rec, 1, name);
		ck_assert_int_eq(chown(bot_test_path(p, outbox, name), 4242, 4242), 0);
		s = mkstep("511", 1, 4242);		/* its own uid, but bit3 */
		put_delta(outbox, &s, "n0", rec, 1, name);
		ck_assert_int_eq(chown(bot_test_path(p, outbox, name), 4242, 4242), 0);
		s = mkstep("512", 1, 4242);		/* its own uid, no trust bits: fine */
		s.flags = 0;
		put_delta(outbox, &s, "n0", rec, 1, name);
		ck_assert_int_eq(chown(bot_test_path(p, outbox, name), 4242, 4242), 0);
	}
	ck_assert_int_eq(bot_ship_run(&o, &sr, &qlog), 0);
	ck_assert_uint_eq(sr.refused, 2);
	ck_assert_uint_eq(sr.shipped, 1);
	ck_assert_int_eq(access(bot_test_path(p, inbox, "c1.512.0.0.n0.nbd"), F_OK), 0);
	ck_assert_int_eq(access(bot_test_path(p, outbox, "c1.510.0.0.n0.nbd"), F_OK), 0);
	ck_assert_int_eq(access(bot_test_path(p, outbox, "c1.511.0.0.n0.nbd"), F_OK), 0);
}
END_TEST


/* A rollback to a snapshot whose ledger is gone would stop the fabric's
 * compaction: refused, naming the ledger. */
START_TEST(t_rollback_ledger)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	int64_t now = (int64_t)time(NULL);
	struct step s = mkstep("7000", 1, 1000);
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX], lname[BOT_LEDGER_NAME_MAX];
	char p[BOT_TEST_PATH_MAX + 64];
	struct bot_state st;
	uint64_t first_ledger;

	conf_init(&c, now);
	put_step(inbox, &s, 1, 4, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
	first_ledger = st.ledger;
	bot_state_free(&st);
	s = mkstep("7001", 1, 1000);
	put_step(inbox, &s, 2, 4, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	bot_compact_result_free(&r);
	/* the first snapshot's ledger is gone (pruned further than the snapshots) */
	bot_ledger_file_name(first_ledger, lname);
	snprintf(p, sizeof(p), "%s/.ledger/%s/%s", state, FABRIC, lname);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(bot_store_rollback(state, FABRIC, NULL, 1, NULL, snap, err, sizeof(err)),
			 -1);
	ck_assert_msg(strstr(err, lname) && strstr(err, "ledger"), "%s", err);
	/* current did not move: the compactor still merges */
	s = mkstep("7002", 1, 1000);
	put_step(inbox, &s, 3, 4, ARM_RING_LL, 10000);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 12);
	/* `state verify` names a current whose ledger is gone (the CLI, when built) */
	if (access("./nccl-bot", X_OK) == 0) {
		char cmd[2 * BOT_TEST_PATH_MAX + 128];

		snprintf(cmd, sizeof(cmd), "./nccl-bot state verify --state '%s' --fabric %s "
			 ">/dev/null 2>&1", state, FABRIC);
		ck_assert_int_eq(system(cmd), 0);
		ck_assert_int_eq(bot_store_load(state, FABRIC, &st, NULL, err, sizeof(err)), 0);
		bot_ledger_file_name(st.ledger, lname);
		bot_state_free(&st);
		snprintf(p, sizeof(p), "%s/.ledger/%s/%s", state, FABRIC, lname);
		ck_assert_int_eq(unlink(p), 0);
		snprintf(cmd, sizeof(cmd), "./nccl-bot state verify --state '%s' --fabric %s 2>&1 | "
			 "grep -q 'ledger.*%s'", state, FABRIC, lname);
		ck_assert_int_eq(system(cmd), 0);
	}
}
END_TEST


/* At most max_bytes of deltas are read per run; the rest wait. */
/* A step cut by the run's byte bound (some of its deltas listed, the rest
 * left for the next run) is not merged in part, however long it settled:
 * it waits until all of it is listed, then merges whole, once. */
START_TEST(t_max_bytes_whole_step)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct step s = mkstep("1449", 1, 1000);
	struct stat st, st2;
	char p[BOT_TEST_PATH_MAX];
	int64_t now = (int64_t)time(NULL);

	put_step(inbox, &s, 1, 4, ARM_RING_LL, 10000);
	s = mkstep("1450", 2, 1000);
	put_step(inbox, &s, 2, 4, ARM_RING_LL, 10000);
	ck_assert_int_eq(stat(bot_test_path(p, inbox, "c1.1449.0.0.n0.nbd"), &st), 0);
	ck_assert_int_eq(stat(bot_test_path(p, inbox, "c1.1450.0.0.n0.nbd"), &st2), 0);
	conf_init(&c, now + 100000);	/* long settled, past max_wait */
	c.max_bytes = (uint64_t)st.st_size + (uint64_t)st2.st_size;
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.inbox, 2);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->waiting, 1);
	bot_compact_result_free(&r);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 2);
	ck_assert_int_eq(total(FABRIC), 4);
	/* the next run lists 1450 first, whole */
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 2);
	ck_assert_uint_eq(fab(&r, FABRIC)->steps, 1);
	bot_compact_result_free(&r);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
	ck_assert_int_eq(total(FABRIC), 8);
}
END_TEST

START_TEST(t_max_bytes)
{
	struct bot_compact_conf c;
	struct bot_compact_result r;
	struct step s;
	struct stat st;
	char p[BOT_TEST_PATH_MAX];

	for (int j = 0; j < 3; j++) {
		char job[16];

		snprintf(job, sizeof(job), "140%d", j);
		s = mkstep(job, 1, 1000);
		put_step(inbox, &s, 1 + (uint64_t)j, 4, ARM_RING_LL, 10000);
	}
	ck_assert_int_eq(stat(bot_test_path(p, inbox, "c1.1400.0.0.n0.nbd"), &st), 0);
	conf_init(&c, (int64_t)time(NULL));
	c.max_bytes = (uint64_t)st.st_size * 2 - 1;
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(r.inbox, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 1);
	bot_compact_result_free(&r);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 2);
	c.max_bytes = 0;	/* the default */
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 2);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 12);

	/* the listing keeps the first max by name while it reads (bounded memory) */
	{
		char **names, nm[32];
		size_t n;
		int more, fd = open(outbox, O_RDONLY | O_DIRECTORY);

		for (int j = 19; j >= 0; j--) {
			snprintf(nm, sizeof(nm), "d%02d.nbd", j);
			bot_test_write(outbox, nm, "x", 1);
		}
		ck_assert_int_eq(bot_ship_list(fd, outbox, 3, &names, &n, &more, p, sizeof(p)), 0);
		ck_assert_uint_eq(n, 3);
		ck_assert_int_eq(more, 17);	/* the 20 entries less the 3 listed */
		ck_assert_str_eq(names[0], "d00.nbd");
		ck_assert_str_eq(names[2], "d02.nbd");
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		close(fd);
	}
}
END_TEST


/* A spool file of one rank, nsamp samples of comm `comm` (the state add
 * side of t_state_add_between), in <dir>/spool/nb-<job>-0.spool. */
static void put_spool(unsigned job, uint64_t comm, unsigned nsamp)
{
	size_t len = BOT_SPOOL_HDR_SIZE + nsamp * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE;
	uint8_t *buf = calloc(1, len);
	struct bot_spool_hdr h;
	char p[BOT_TEST_PATH_MAX], name[64];
	uint32_t crc;

	ck_assert_ptr_nonnull(buf);
	memset(&h, 0, sizeof(h));
	h.version = BOT_SPOOL_VERSION;
	h.rec_size = BOT_SPOOL_REC_SIZE;
	h.nrecords = nsamp;
	h.table_digest = 0x99;
	snprintf(h.build_id, sizeof(h.build_id), "nccl-bot test");
	h.pid = 4242;
	bot_spool_pack_hdr(buf, &h);
	for (unsigned i = 0; i < nsamp; i++) {
		struct bot_spool_rec r;

		sample(&r, comm, MIB, 8, 1, 0, i, ARM_RING_LL, 10000);
		bot_spool_pack_rec(buf + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE, &r);
	}
	crc = bot_spool_crc32c(0, buf, len - BOT_SPOOL_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		buf[len - 8 + i] = (uint8_t)(crc >> (8 * i));
	snprintf(p, sizeof(p), "%s/spool", dir);
	mkdir(p, 0755);
	snprintf(name, sizeof(name), "nb-%u-0.spool", job);
	bot_test_write(p, name, buf, len);
	free(buf);
}

/* Finding 1: a compactor killed after publishing (its delta still in the
 * inbox), then a state add of another job: the next compaction still knows
 * the delta (the ledger goes on with the state add) and drops it as a
 * duplicate; nothing is counted twice. */
START_TEST(t_state_add_between)
{
	struct bot_merge_req mr = { state, FABRIC, NULL, 1, 0, NULL };
	struct bot_merge_result mres;
	struct bot_compact_result r;
	struct bot_compact_conf c;
	struct step s = mkstep("8000", 1, 1000);
	int64_t now = (int64_t)time(NULL);
	char sp[BOT_TEST_PATH_MAX];
	const char *paths[1] = { sp };
	int status;
	pid_t pid;

	put_step(outbox, &s, 1, 10, ARM_RING_LL, 10000);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv(BOT_CRASH_ENV, "compact-after-current", 1);
		ship_and_compact(now);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	ck_assert_int_eq(total(FABRIC), 10);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 1);	/* published, not cleaned */

	put_spool(8001, 77, 8);
	snprintf(sp, sizeof(sp), "%s/spool", dir);
	mr.paths = paths;
	ck_assert_int_eq(bot_merge_job(&mr, &mres, &qlog), 0);
	ck_assert_int_eq(mres.outcome, BOT_MERGE_PUBLISHED);
	ck_assert_int_eq(total(FABRIC), 18);

	conf_init(&c, now);
	ck_assert_int_eq(compact(&c, &r), 0);
	ck_assert_uint_eq(fab(&r, FABRIC)->duplicate, 1);
	ck_assert_uint_eq(fab(&r, FABRIC)->merged, 0);
	bot_compact_result_free(&r);
	ck_assert_int_eq(total(FABRIC), 18);
	ck_assert_int_eq(count_dir(inbox, ".nbd"), 0);
}
END_TEST

static Suite *compact_suite(void)
{
	Suite *s = suite_create("compact");
	TCase *tc = tcase_create("compact");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, t_ledger_codec);
	tcase_add_test(tc, t_groups_ready);
	tcase_add_test(tc, t_max_wait_too_old);
	tcase_add_test(tc, t_dedup);
	tcase_add_test(tc, t_impossible);
	tcase_add_test(tc, t_consensus);
	tcase_add_test(tc, t_consensus_follows);
	tcase_add_test(tc, t_consensus_one_user);
	tcase_add_test(tc, t_consensus_users);
	tcase_add_test(tc, t_crash_held);
	tcase_add_test(tc, t_prior_fabrics);
	tcase_add_test(tc, t_user_cap);
	tcase_add_test(tc, t_account_cap);
	tcase_add_test(tc, t_calls_cap);
	tcase_add_test(tc, t_decay);
	tcase_add_test(tc, t_decay_follows);
	tcase_add_test(tc, t_bin_saturates);
	tcase_add_test(tc, t_lease);
	tcase_add_test(tc, t_race_wait);
	tcase_add_test(tc, t_race_nowait);
	tcase_add_test(tc, t_producers);
	tcase_add_test(tc, t_crash_first_publish);
	tcase_add_loop_test(tc, t_crash, 0, (int)(sizeof(crash_points) / sizeof(crash_points[0])));
	tcase_add_test(tc, t_ship_files);
	tcase_add_test(tc, t_ship_command);
	suite_add_tcase(s, tc);
	tc = tcase_create("review");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, t_why_newline);
	tcase_add_test(tc, t_future_step);
	tcase_add_test(tc, t_clock_ahead);
	tcase_add_test(tc, t_step_disagrees);
	tcase_add_test(tc, t_claim_not_slurm_step);
	tcase_add_test(tc, t_dedup_windows_min);
	tcase_add_test(tc, t_ledger_full);
	tcase_add_test(tc, t_trust);
	tcase_add_test(tc, t_rollback_ledger);
	tcase_add_test(tc, t_max_bytes);
	tcase_add_test(tc, t_max_bytes_whole_step);
	tcase_add_test(tc, t_state_add_between);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(compact_suite)
