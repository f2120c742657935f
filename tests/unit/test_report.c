/*
 * test_report.c - learn/report.h: a part built from spool records, its text
 * read back, the parser's refusals, merging per step and per job, and the
 * saved/lost/loss numbers on a hand-computed example (formats.md 17).
 */
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>

#include "learn/report.h"
#include "policies/context.h"
#include "policies/kb.h"
#include "testutil.h"

static char dir[128];

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "report");
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

#define TREE_SIMPLE 2	/* bot_arm(TREE, SIMPLE) */
#define RING_SIMPLE 5	/* bot_arm(RING, SIMPLE) */

static struct bot_spool_rec rec(int kind, uint64_t comm, uint32_t rank, uint64_t nbytes)
{
	struct bot_spool_rec r;

	memset(&r, 0, sizeof(r));
	r.kind = (uint8_t)kind;
	r.coll = BOT_COLL_ALLREDUCE;
	r.arm = kind == BOT_SPOOL_SAMPLE ? TREE_SIMPLE : 0xff;
	r.auto_arm = RING_SIMPLE;
	r.decided = TREE_SIMPLE;
	r.policy = BOT_POLICY_UCB1;
	r.comm_id = comm;
	r.rank = rank;
	r.nranks = 8;
	r.nnodes = 2;
	r.nbytes = nbytes;
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r.cost[i] = -1;
	r.cost[TREE_SIMPLE] = 10;
	r.cost[RING_SIMPLE] = 8;
	return r;
}

static void identity(struct bot_report_part *p, const char *node)
{
	snprintf(p->job, sizeof(p->job), "77");
	snprintf(p->step, sizeof(p->step), "0");
	snprintf(p->node, sizeof(p->node), "%s", node);
	p->step_nodes = 2;
	p->expected_ranks = 4;
}

START_TEST(test_build_and_read_back)
{
	struct bot_report_builder *b = bot_report_builder_new();
	struct bot_spool_rec r[10];
	struct bot_report_part p, q;
	char err[600], *text, *text2;
	size_t len, len2;
	uint64_t nb = 1u << 24;
	unsigned bucket = bot_size_bucket(nb);

	ck_assert_ptr_nonnull(b);
	r[0] = rec(BOT_SPOOL_SUMMARY, 1, 0, bot_bucket_lo(bucket));
	r[0].calls = 600;
	r[1] = rec(BOT_SPOOL_SUMMARY, 1, 1, bot_bucket_lo(bucket));
	r[1].calls = 640;
	r[2] = rec(BOT_SPOOL_SUMMARY, 2, 0, bot_bucket_lo(bucket));
	r[2].calls = 100;
	for (int i = 0; i < 3; i++) {
		r[3 + i] = rec(BOT_SPOOL_SAMPLE, 1, 0, nb);
		r[3 + i].duration_ns = (uint64_t)(i == 0 ? 30000 : i == 1 ? 10000 : 20000);
	}
	r[6] = rec(BOT_SPOOL_SAMPLE, 1, 0, nb);
	r[6].duration_ns = 5;
	r[6].flags = BOT_SPOOL_F_AGGREGATE;	/* not clean: not counted */
	for (int i = 7; i < 9; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].kind = BOT_SPOOL_PROC;
		r[i].arm = r[i].auto_arm = r[i].decided = 0xff;
		r[i].policy = BOT_POLICY_UCB1;
		r[i].nccl_version = 22809;
		r[i].tuner_abi = 5;
		r[i].profiler_abi = i == 7 ? 5 : 0;
		r[i].proc_flags = BOT_SPOOL_PF_TABLE | (i == 7 ? BOT_SPOOL_PF_MEASURED : 0);
	}
	ck_assert_int_eq(bot_report_builder_add(b, r, 9), 0);
	bot_report_builder_file(b, 0);
	bot_report_builder_file(b, 1);
	bot_report_part_init(&p);
	ck_assert_int_eq(bot_report_builder_finish(b, &p), 0);
	bot_report_builder_free(b);
	identity(&p, "n1");
	ck_assert_uint_eq(p.nctx, 1);
	ck_assert_uint_eq(p.ctx[0].calls, 740);	/* max over ranks, added over comms */
	ck_assert_uint_eq(p.ctx[0].arm[TREE_SIMPLE].n, 3);
	ck_assert_uint_eq(p.ctx[0].arm[TREE_SIMPLE].min_ns, 10000);
	ck_assert_uint_eq(p.ctx[0].arm[TREE_SIMPLE].med_ns, 20000);
	ck_assert_uint_eq(p.ctx[0].auto_arm, RING_SIMPLE);
	ck_assert_uint_eq(p.procs_loaded, 2);
	ck_assert_uint_eq(p.procs_table, 2);
	ck_assert_uint_eq(p.procs_measured, 1);
	ck_assert_uint_eq(p.nprofiler, 2);
	ck_assert_int_eq(p.policy, BOT_POLICY_UCB1);
	ck_assert_uint_eq(p.files_read, 1);
	ck_assert_uint_eq(p.files_rejected, 1);
	ck_assert_int_eq(bot_report_part_format(&p, &text, &len, err, sizeof(err)), 0);
	ck_assert_msg(bot_report_part_parse("x", text, len, &q, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(bot_report_part_format(&q, &text2, &len2, err, sizeof(err)), 0);
	ck_assert_uint_eq(len, len2);
	ck_assert_msg(!memcmp(text, text2, len), "read back differs:\n%s\n%s", text, text2);
	/* written and read as a file: the name is the identity */
	ck_assert_msg(bot_report_part_write(dir, &p, err, sizeof(err), err, sizeof(err)) == 0,
		      "%s", err);
	{
		struct bot_report_set set;
		struct stat st;
		char path[400];

		snprintf(path, sizeof(path), "%s/77.0.n1.part", dir);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0600);
		ck_assert_int_eq(bot_report_dir_read(dir, "77", NULL, &set, NULL), 0);
		ck_assert_uint_eq(set.n, 1);
		ck_assert_uint_eq(set.v[0].ctx[0].calls, 740);
		bot_report_set_free(&set);
		ck_assert_int_eq(bot_report_dir_count(dir, "77", "0"), 1);
		ck_assert_int_eq(bot_report_dir_count(dir, "77", "1"), 0);
		ck_assert_int_eq(bot_report_dir_count(dir, "7", NULL), 0);
	}
	free(text);
	free(text2);
	bot_report_part_free(&p);
	bot_report_part_free(&q);
}
END_TEST

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *f = fopen(from, "rb"), *g;
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	g = fopen(to, "wb");
	if (!g)
		return -1;
	fwrite(buf, 1, n, g);
	return fclose(g) ? -1 : 0;
}

static const char *const head =
	"nccl-bot-report-part 1\njob 5\nstep 0\nnode a\n";

/* head + body parses? */
static int parses(const char *body, char *err, size_t errlen)
{
	char buf[4096];
	struct bot_report_part p;
	int rc;

	snprintf(buf, sizeof(buf), "%s%s", head, body);
	rc = bot_report_part_parse("t", buf, strlen(buf), &p, err, errlen);
	bot_report_part_free(&p);
	return rc;
}

/* A file with the records of one added before (a copied spool file) adds
 * nothing, as the harvest skips it from the delta; a process record alone
 * is nobody's copy (formats.md 13, 17). */
START_TEST(test_duplicate_file)
{
	struct bot_report_builder *b = bot_report_builder_new();
	struct bot_spool_rec r[3], pr;
	struct bot_report_part p, q;
	char err[600], *text;
	size_t len;

	ck_assert_ptr_nonnull(b);
	r[0] = rec(BOT_SPOOL_SAMPLE, 1, 0, 1u << 20);
	r[0].duration_ns = 10000;
	memset(&r[1], 0, sizeof(r[1]));
	r[1].kind = BOT_SPOOL_PROC;
	r[1].arm = r[1].auto_arm = r[1].decided = 0xff;
	r[1].policy = BOT_POLICY_UCB1;
	r[1].nccl_version = 22809;
	r[1].tuner_abi = 5;
	r[1].proc_flags = BOT_SPOOL_PF_TABLE;
	r[2] = rec(BOT_SPOOL_SUMMARY, 1, 0, 1u << 20);
	r[2].calls = 50;
	pr = r[1];
	for (int k = 0; k < 2; k++) {	/* the file, then its copy */
		bot_report_builder_file(b, 0);
		ck_assert_int_eq(bot_report_builder_add(b, r, 3), 0);
	}
	for (int k = 0; k < 2; k++) {	/* a process record alone, twice */
		bot_report_builder_file(b, 0);
		ck_assert_int_eq(bot_report_builder_add(b, &pr, 1), 0);
	}
	bot_report_part_init(&p);
	ck_assert_int_eq(bot_report_builder_finish(b, &p), 0);
	bot_report_builder_free(b);
	identity(&p, "n1");
	ck_assert_uint_eq(p.files_read, 3);
	ck_assert_uint_eq(p.files_duplicate, 1);
	ck_assert_uint_eq(p.procs_loaded, 3);
	ck_assert_uint_eq(p.nnccl, 1);
	ck_assert_uint_eq(p.nccl[0].n, 3);
	ck_assert_uint_eq(p.nctx, 1);
	ck_assert_uint_eq(p.ctx[0].arm[TREE_SIMPLE].n, 1);
	ck_assert_uint_eq(p.ctx[0].calls, 50);
	/* written as "files 3 0 1", in version 3 (a reader of 1-2 says the
	 * version instead of a wrong number of fields), and read back */
	ck_assert_int_eq(bot_report_part_format(&p, &text, &len, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(text, "\nfiles 3 0 1\n"));
	ck_assert_int_eq(strncmp(text, "nccl-bot-report-part 3\n", 23), 0);
	ck_assert_msg(bot_report_part_parse("x", text, len, &q, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(q.files_duplicate, 1);
	bot_report_part_free(&q);
	/* the same as version 2: refused */
	text[21] = '2';
	ck_assert_int_lt(bot_report_part_parse("x", text, len, &q, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "wrong number of fields"), "%s", err);
	free(text);
	bot_report_part_free(&q);
	/* none: two numbers, as before, and version 2 */
	p.files_duplicate = 0;
	ck_assert_int_eq(bot_report_part_format(&p, &text, &len, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(text, "\nfiles 3 0\n"));
	ck_assert_int_eq(strncmp(text, "nccl-bot-report-part 2\n", 23), 0);
	free(text);
	bot_report_part_free(&p);
	/* version 1 has no third number */
	ck_assert_int_eq(parses("files 1 0 1\nend 0\n", err, sizeof(err)), -1);
	ck_assert_int_eq(parses("files 1 0\nend 0\n", err, sizeof(err)), 0);
}
END_TEST

/* A summary whose decided arm is unknown (255 with bit5: the tuner had no
 * record of the context) is neither ours nor AUTO's: counted apart ('?'),
 * not as left to AUTO (formats.md 9, 17). */
START_TEST(test_decided_unknown)
{
	struct bot_report_builder *b = bot_report_builder_new();
	struct bot_spool_rec r[5];
	struct bot_report_part p, q;
	struct bot_report_totals t;
	struct bot_report_row row;
	char err[600], *text;
	size_t len;
	uint64_t nb = 1u << 24;
	unsigned bucket = bot_size_bucket(nb);

	ck_assert_ptr_nonnull(b);
	r[0] = rec(BOT_SPOOL_SUMMARY, 1, 0, bot_bucket_lo(bucket));	/* tree */
	r[0].calls = 100;
	r[1] = rec(BOT_SPOOL_SUMMARY, 2, 0, bot_bucket_lo(bucket));	/* unknown */
	r[1].calls = 300;
	r[1].decided = r[1].auto_arm = 0xff;
	r[1].flags = BOT_SPOOL_F_NO_COST;
	for (int i = 0; i < BOT_SPOOL_NCOST; i++)
		r[1].cost[i] = -1;
	r[2] = rec(BOT_SPOOL_SUMMARY, 3, 0, bot_bucket_lo(bucket));	/* left to AUTO */
	r[2].calls = 50;
	r[2].decided = 0xff;
	r[3] = rec(BOT_SPOOL_SAMPLE, 1, 0, nb);
	r[3].duration_ns = 20000;
	r[4] = rec(BOT_SPOOL_SAMPLE, 3, 0, nb);
	r[4].arm = RING_SIMPLE;
	r[4].duration_ns = 10000;
	ck_assert_int_eq(bot_report_builder_add(b, r, 5), 0);
	bot_report_part_init(&p);
	ck_assert_int_eq(bot_report_builder_finish(b, &p), 0);
	bot_report_builder_free(b);
	identity(&p, "n1");
	ck_assert_uint_eq(p.nctx, 1);
	ck_assert_uint_eq(p.ctx[0].calls, 450);
	ck_assert_uint_eq(p.ctx[0].dcalls[TREE_SIMPLE], 100);
	ck_assert_uint_eq(p.ctx[0].dcalls[BOT_REPORT_DEC_AUTO], 50);
	ck_assert_uint_eq(p.ctx[0].dcalls[BOT_REPORT_DEC_UNKNOWN], 300);
	/* totals: 100 decided, 300 unknown; ours is tree's alone (20 us vs
	 * AUTO's 10 us), not pulled towards AUTO's by the unknown calls */
	bot_report_totals(&p, &t);
	ck_assert_uint_eq(t.calls, 450);
	ck_assert_uint_eq(t.calls_decided, 100);
	ck_assert_uint_eq(t.calls_unknown, 300);
	bot_report_row(&p, &p.ctx[0], &row);
	ck_assert_int_eq(row.known, 1);
	ck_assert_msg(row.t_ours > 16e-6, "t_ours %g", row.t_ours);	/* (100x20 + 50x10)/150 */
	ck_assert_msg(fabs(row.lost - 100 * 10e-6) < 1e-9, "lost %g", row.lost);
	/* written as 'decided ? 300', in version 3, read back */
	ck_assert_int_eq(bot_report_part_format(&p, &text, &len, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(text, "\ndecided ? 300\n"));
	ck_assert_int_eq(strncmp(text, "nccl-bot-report-part 3\n", 23), 0);
	ck_assert_msg(bot_report_part_parse("x", text, len, &q, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(q.ctx[0].dcalls[BOT_REPORT_DEC_UNKNOWN], 300);
	bot_report_part_free(&q);
	/* the same as version 2: refused, naming the version */
	text[21] = '2';
	ck_assert_int_lt(bot_report_part_parse("x", text, len, &q, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "'decided ?' is version 3's"), "%s", err);
	free(text);
	bot_report_part_free(&q);
	bot_report_part_free(&p);
}
END_TEST

START_TEST(test_refusals)
{
	static const char *const bad[] = {
		"end 1\n",					/* count */
		"ctx allreduce 80 8 2 10 - -\n",		/* no end */
		"ctx allreduce 80 8 2 10 - -\nend 1",		/* no newline */
		"bogus 1\nend 0\n",				/* unknown key */
		"node b\nend 0\n",				/* twice */
		"mode off\nend 0\n",
		"step x\nend 0\n",
		"ctx allreduce 80 8 2 10 - -\nctx allreduce 80 8 2 10 - -\nend 2\n",
		"ctx allreduce 81 8 2 10 - -\nctx allreduce 80 8 2 10 - -\nend 2\n",
		"ctx allreduce 80 8 9 10 - -\nend 1\n",		/* nnodes > nranks */
		"ctx allreduce 80 8 2 010 - -\nend 1\n",	/* leading zero */
		"ctx allreduce 80 8 2 10 ring/bogus -\nend 1\n",
		"ctx allreduce 80 8 2 10 - -\narm ring/simple 1 5 5\narm ring/simple 1 5 5\nend 1\n",
		"ctx allreduce 80 8 2 10 - -\narm ring/simple 1 6 5\nend 1\n",	/* min > med */
		"ctx allreduce 80 8 2 10 - -\narm ring/simple 0 5 5\nend 1\n",
		"ctx allreduce 80 8 2 10 - -\ncost -0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
		"end 1\n",
		"ctx allreduce 80 8 2 10 - -\ncost nan 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
		"end 1\n",
		"ctx allreduce 80 8 2 10 - -\narm ring/simple 1 5 5\ncost -1 -1 -1 -1 -1 -1 -1 -1 "
		"-1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1 -1\nend 1\n",	/* cost after arm */
		"ctx allreduce 80 8 2 10 - -\nmode on\nend 1\n",	/* header after ctx */
		"fabric_why a\x01b\nend 0\n",			/* control character */
		"procs 1 2 0 0\nend 0\n",			/* more with a table than loaded */
		"end 0\nend 0\n",
		"mode  on\nend 0\n",				/* empty field */
		"end 0\n\n",
	};
	char err[600], lng[2000];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(parses(bad[i], err, sizeof(err)) < 0, "accepted bad %zu", i);
		ck_assert_msg(!strncmp(err, "t:", 2), "%zu: %s", i, err);
	}
	ck_assert_msg(parses("mode shadow\nfabric_why no map here\nend 0\n", err, sizeof(err)) == 0,
		      "%s", err);
	{
		/* the reason is kept whole, spaces and all (not its first word) */
		char buf[512];
		struct bot_report_part p;

		snprintf(buf, sizeof(buf), "%sfabric_why no map <&\"> here\nend 0\n", head);
		ck_assert_int_eq(bot_report_part_parse("t", buf, strlen(buf), &p, err, sizeof(err)), 0);
		ck_assert_str_eq(p.fabric_why, "no map <&\"> here");
		bot_report_part_free(&p);
	}
	{
		/* a reason of many words (more than a line has fields) and two
		 * spaces in a row is still one value, not a refused part */
		char buf[1024], why[300] = "";
		struct bot_report_part p;

		for (int i = 0; i < 40; i++)
			strcat(why, i == 20 ? "w  " : "w ");
		strcat(why, "end");
		snprintf(buf, sizeof(buf), "%sfabric_why %s\nend 0\n", head, why);
		ck_assert_msg(bot_report_part_parse("t", buf, strlen(buf), &p, err, sizeof(err)) == 0,
			      "%s", err);
		ck_assert_str_eq(p.fabric_why, why);
		bot_report_part_free(&p);
	}
	ck_assert_msg(parses("ctx allreduce 80 8 2 0 - -\nend 1\n", err, sizeof(err)) == 0, "%s", err);
	memset(lng, 'a', sizeof(lng));
	memcpy(lng, "fabric_why ", 11);
	strcpy(lng + 1100, "\nend 0\n");
	ck_assert_int_lt(parses(lng, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "1024"));
	/* another version, no magic, a missing job */
	{
		struct bot_report_part p;
		const char *v2 = "nccl-bot-report-part 4\njob 5\nstep 0\nnode a\nend 0\n";
		const char *nojob = "nccl-bot-report-part 1\nstep 0\nnode a\nend 0\n";

		ck_assert_int_lt(bot_report_part_parse("t", v2, strlen(v2), &p, err, sizeof(err)), 0);
		ck_assert_msg(strstr(err, "another version (this reader reads 1 to 3)"), "%s", err);
		ck_assert_int_lt(bot_report_part_parse("t", nojob, strlen(nojob), &p, err,
						       sizeof(err)), 0);
		ck_assert_int_lt(bot_report_part_parse("t", "", 0, &p, err, sizeof(err)), 0);
		/* the version written, and the one still read */
		ck_assert_int_lt(bot_report_part_parse("t", "job 5\n", 6, &p, err, sizeof(err)), 0);
		ck_assert_msg(strstr(err, "no 'nccl-bot-report-part 3' line; 1 and 2 still read"),
			      "%s", err);
	}
}
END_TEST

/* A part holding the example of formats.md 17's numbers. */
static void example(struct bot_report_part *p, const char *node, uint64_t tree_med,
		    uint64_t ring_med)
{
	struct bot_report_ctx *c;

	bot_report_part_init(p);
	identity(p, node);
	p->nparts = 1;
	p->ctx = calloc(2, sizeof(*p->ctx));
	ck_assert_ptr_nonnull(p->ctx);
	p->nctx = 2;
	/* allgather (2) sorts before allreduce (4) */
	c = &p->ctx[1];
	c->coll = BOT_COLL_ALLREDUCE;
	c->bucket = 80;
	c->nranks = 8;
	c->nnodes = 2;
	c->calls = c->src_calls = 1000;
	c->auto_arm = RING_SIMPLE;
	c->decided = TREE_SIMPLE;
	c->arm[TREE_SIMPLE] = (struct bot_report_arm){ 10, tree_med - 1000, tree_med };
	c->arm[RING_SIMPLE] = (struct bot_report_arm){ 4, ring_med - 1000, ring_med };
	c = &p->ctx[0];
	c->coll = BOT_COLL_ALLGATHER;
	c->bucket = 84;
	c->nranks = 8;
	c->nnodes = 2;
	c->calls = c->src_calls = 500;
	c->auto_arm = RING_SIMPLE;
	c->decided = TREE_SIMPLE;
	c->has_cost = 1;
	for (int i = 0; i < BOT_REPORT_NARMS; i++)
		c->cost[i] = -1;
	c->cost[TREE_SIMPLE] = 10;
	c->cost[RING_SIMPLE] = 8;
	c->arm[TREE_SIMPLE] = (struct bot_report_arm){ 6, 110000, 120000 };
}

START_TEST(test_numbers)
{
	struct bot_report_part p;
	struct bot_report_row r;
	struct bot_report_totals t;
	char line[600];

	example(&p, "a", 80000, 100000);
	/* allreduce: both measured; tree 80 us, ring (AUTO) 100 us, 1000 calls */
	bot_report_row(&p, &p.ctx[1], &r);
	ck_assert(r.known && !r.estimated);
	ck_assert_int_eq(r.best, TREE_SIMPLE);
	ck_assert(fabs(r.saved - 0.02) < 1e-12);
	ck_assert(r.lost == 0);
	ck_assert(fabs(r.loss_ours) < 1e-12 && fabs(r.loss_auto - 0.25) < 1e-12);
	ck_assert(!r.over10 && !r.harmed);
	/* allgather: AUTO's ring estimated as 120 x 8/10 = 96 us; ours 120 us */
	bot_report_row(&p, &p.ctx[0], &r);
	ck_assert(r.known && r.estimated && r.est[RING_SIMPLE]);
	ck_assert_int_eq(r.best, RING_SIMPLE);
	ck_assert(fabs(r.t[RING_SIMPLE] - 96e-6) < 1e-15);
	ck_assert(fabs(r.lost - 500 * 24e-6) < 1e-12);
	ck_assert(fabs(r.loss_ours - 0.25) < 1e-12);
	ck_assert(r.over10 && r.harmed);
	bot_report_totals(&p, &t);
	ck_assert_uint_eq(t.calls_decided, 1500);
	ck_assert(fabs(t.saved - 0.02) < 1e-12 && fabs(t.lost - 0.012) < 1e-12);
	ck_assert(t.estimated);
	ck_assert_uint_eq(t.over10, 1);
	ck_assert_uint_eq(t.harmed, 1);
	ck_assert(fabs(t.worst_excess - 0.25) < 1e-12);
	/* expected ranks: the largest communicator (8) beats the 4 tasks Slurm
	 * started (a launcher starting ranks as a task's children) */
	p.procs_loaded = 3;
	p.nccl[0] = (struct bot_report_ver){ 22809, 3 };
	p.nnccl = 1;
	p.tuner[0] = (struct bot_report_ver){ 5, 3 };
	p.ntuner = 1;
	bot_report_summary(&p, "77.0", "/r", line, sizeof(line));
	ck_assert_msg(!strcmp(line, "nccl-bot: step 77.0: 1500 calls decided, est. saved ~8 ms vs "
			      "AUTO, 1 contexts lost >10%, tuner loaded on 3 of 8 ranks, NCCL "
			      "2.28.9, tuner v5, profiler n/a; report: /r"), "%s", line);
	/* 1000 s and more, or a value that rounds up to the next unit: plain
	 * digits, as the demo and test_demo.sh read them ([0-9.]*), never
	 * 2e+03 s or 1e+03 ms */
	p.ctx[1].calls = p.ctx[1].src_calls = 100000000;	/* 2000 s - 12 ms */
	bot_report_summary(&p, "77.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "est. saved ~2000 s vs AUTO"), "%s", line);
	p.ctx[1].calls = p.ctx[1].src_calls = 50585;		/* 1.0117 s - 12 ms */
	bot_report_summary(&p, "77.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "est. saved ~1 s vs AUTO"), "%s", line);
	p.ctx[1].calls = p.ctx[1].src_calls = 1000;
	/* shadow: NCCL's choice stands, nothing claimed */
	p.shadow = 1;
	bot_report_totals(&p, &t);
	ck_assert_uint_eq(t.calls_decided, 0);
	ck_assert(t.saved == 0 && t.lost == 0);
	bot_report_summary(&p, "77.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "shadow: measured only") && !strstr(line, "saved"), "%s", line);
	bot_report_part_free(&p);
	/* nothing measured still says something */
	bot_report_part_init(&p);
	bot_report_summary(&p, "1.2", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "0 calls decided") && strstr(line, "loaded on 0 of ? ranks") &&
		      strstr(line, "NCCL n/a"), "%s", line);
}
END_TEST

/* saved 100 ns (101 - 1), lost 100 ns (120 - 20): the sums differ in their
 * last bits; the summary said "lost 1.32e-17 us" (a sign from rounding, in
 * the exponent form the readers of the line do not take) until 2026-12-04 */
START_TEST(test_rounding)
{
	static const char text[] =
		"nccl-bot-report-part 2\njob 77\nstep 0\nnode n1\npolicy ucb1\n"
		"ctx allreduce 80 8 1 1 ring/simple tree/simple\ndecided tree/simple 1\n"
		"arm ring/simple 10 101 101\narm tree/simple 10 1 1\n"
		"ctx allreduce 84 8 1 1 ring/simple tree/simple\ndecided tree/simple 1\n"
		"arm ring/simple 10 20 20\narm tree/simple 10 120 120\nend 2\n";
	struct bot_report_part p;
	struct bot_report_totals t;
	char err[600], line[600];

	ck_assert_msg(bot_report_part_parse("77.0.n1.part", text, sizeof(text) - 1, &p, err,
					    sizeof(err)) == 0, "%s", err);
	bot_report_totals(&p, &t);
	ck_assert(fabs(t.saved - 1e-7) < 1e-18 && fabs(t.lost - 1e-7) < 1e-18);
	ck_assert(t.net == 0);
	bot_report_summary(&p, "77.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "2 calls decided, est. saved 0 us vs AUTO,"), "%s", line);
	bot_report_part_free(&p);
}
END_TEST

START_TEST(test_merge)
{
	struct bot_report_part a, b, step, job;
	struct bot_report_totals t;

	example(&a, "a", 80000, 100000);
	example(&b, "b", 70000, 110000);
	b.ctx[1].calls = b.ctx[1].src_calls = 1200;
	bot_report_part_init(&step);
	ck_assert_int_eq(bot_report_merge(&step, &a, BOT_REPORT_SAME_STEP), 0);
	ck_assert_int_eq(bot_report_merge(&step, &b, BOT_REPORT_SAME_STEP), 0);
	ck_assert_uint_eq(step.nparts, 2);
	ck_assert_str_eq(step.node, "*");
	ck_assert_str_eq(step.job, "77");
	ck_assert_uint_eq(step.nctx, 2);
	ck_assert_uint_eq(step.expected_ranks, 8);
	/* calls the largest; medians the sample-weighted mean of the parts';
	 * samples added */
	ck_assert_uint_eq(step.ctx[1].calls, 1200);
	ck_assert_uint_eq(step.ctx[1].arm[TREE_SIMPLE].med_ns, 75000);
	ck_assert_uint_eq(step.ctx[1].arm[RING_SIMPLE].med_ns, 105000);
	ck_assert_uint_eq(step.ctx[1].arm[TREE_SIMPLE].n, 20);
	ck_assert_uint_eq(step.ctx[1].arm[TREE_SIMPLE].min_ns, 69000);
	bot_report_totals(&step, &t);
	/* 1200 x (105 - 75) us + the allgather's saved 0 */
	ck_assert(fabs(t.saved - 0.036) < 1e-12);
	/* two steps of a job: calls added */
	bot_report_part_init(&job);
	ck_assert_int_eq(bot_report_merge(&job, &step, BOT_REPORT_STEPS), 0);
	snprintf(a.step, sizeof(a.step), "1");
	ck_assert_int_eq(bot_report_merge(&job, &a, BOT_REPORT_STEPS), 0);
	ck_assert_uint_eq(job.ctx[1].calls, 2200);
	ck_assert_uint_eq(job.ctx[0].calls, 1000);
	ck_assert_str_eq(job.step, "*");
	ck_assert_uint_eq(job.nparts, 3);
	bot_report_part_free(&a);
	bot_report_part_free(&b);
	bot_report_part_free(&step);
	bot_report_part_free(&job);
}
END_TEST

START_TEST(test_files_refused)
{
	struct bot_report_part p, q;
	struct bot_report_set set;
	char err[800], path[400], link[400];
	int dfd;

	example(&p, "a", 80000, 100000);
	ck_assert_int_eq(bot_report_part_write(dir, &p, NULL, 0, err, sizeof(err)), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dfd, 0);
	/* a link to the part, a part whose content names another node, a FIFO */
	snprintf(path, sizeof(path), "%s/77.0.a.part", dir);
	snprintf(link, sizeof(link), "%s/77.0.b.part", dir);
	ck_assert_int_eq(symlink(path, link), 0);
	snprintf(link, sizeof(link), "%s/77.0.c.part", dir);
	ck_assert_int_eq(copy_file(path, link), 0);
	snprintf(link, sizeof(link), "%s/77.0.d.part", dir);
	ck_assert_int_eq(mkfifo(link, 0600), 0);
	ck_assert_int_lt(bot_report_part_read_at(dfd, "77.0.b.part", "b", 0, 0, &q, err,
						 sizeof(err)), 0);
	ck_assert_int_lt(bot_report_part_read_at(dfd, "77.0.c.part", "c", 0, 0, &q, err,
						 sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "77.0.a.part"));
	ck_assert_int_lt(bot_report_part_read_at(dfd, "77.0.d.part", "d", 0, 0, &q, err,
						 sizeof(err)), 0);
	ck_assert_int_lt(bot_report_part_read_at(dfd, "77.0.a.part", "a", 1, getuid() + 1, &q,
						 err, sizeof(err)), 0);
	ck_assert_int_eq(bot_report_part_read_at(dfd, "77.0.a.part", "a", 1, getuid(), &q, err,
						 sizeof(err)), 0);
	bot_report_part_free(&q);
	close(dfd);
	ck_assert_int_eq(bot_report_dir_read(dir, "77", "0", &set, NULL), 0);
	ck_assert_uint_eq(set.n, 1);
	ck_assert_uint_eq(set.refused, 3);
	bot_report_set_free(&set);
	/* a directory that is a link is not written through */
	snprintf(link, sizeof(link), "%s/ln", dir);
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert_int_lt(bot_report_part_write(link, &p, NULL, 0, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
	/* missing parents are made 0700 */
	snprintf(path, sizeof(path), "%s/x/y", dir);
	ck_assert_int_eq(bot_report_part_write(path, &p, NULL, 0, err, sizeof(err)), 0);
	{
		struct stat st;

		snprintf(path, sizeof(path), "%s/x", dir);
		ck_assert_int_eq(stat(path, &st), 0);
		ck_assert_int_eq(st.st_mode & 0777, 0700);
	}
	bot_report_part_free(&p);
}
END_TEST

START_TEST(test_expand_and_info)
{
	struct bot_report_part p;
	char out[256], err[400];

	ck_assert_int_eq(bot_report_dir_expand("/r/%u/%j/100%%", "12", "ann", out, sizeof(out), err,
					       sizeof(err)), 0);
	ck_assert_str_eq(out, "/r/ann/12/100%");
	ck_assert_int_lt(bot_report_dir_expand("/r/%n", "12", "ann", out, sizeof(out), err,
					       sizeof(err)), 0);
	ck_assert_int_lt(bot_report_dir_expand("/r/%u", "12", "a/b", out, sizeof(out), err,
					       sizeof(err)), 0);
	ck_assert_int_lt(bot_report_dir_expand("/r/%j", "12", "a", out, 5, err, sizeof(err)), 0);
	bot_report_part_init(&p);
	ck_assert_int_eq(bot_report_part_info(&p, "shadow replaced prior (the map has no n9)"), 0);
	ck_assert(p.shadow);
	ck_assert_int_eq(p.user_plugin, BOT_REPORT_PLUGIN_REPLACED);
	ck_assert_str_eq(p.fabric, "prior");
	ck_assert_str_eq(p.fabric_why, "the map has no n9");
	ck_assert_int_eq(bot_report_part_info(&p, "on kept fabric a (no learned state yet)"), 0);
	ck_assert(!p.shadow);
	ck_assert_str_eq(p.fabric, "a");
	ck_assert_str_eq(p.fabric_why, "");
	ck_assert_int_lt(bot_report_part_info(&p, "off none prior"), 0);
	ck_assert_int_lt(bot_report_part_info(&p, NULL), 0);
}
END_TEST

/* Review 3: communicators that share a context decide different arms
 * (one probes AUTO's ring, one exploits tree): saved and lost charge each
 * communicator's calls to its own decided arm, whatever order the records
 * come in, and the split survives the text (v2 'decided' lines). */
static void two_comms(struct bot_report_part *p, int probe_first)
{
	struct bot_report_builder *b = bot_report_builder_new();
	struct bot_spool_rec r[4];
	uint64_t nb = 1u << 20;
	int k = 0;

	ck_assert_ptr_nonnull(b);
	r[probe_first ? 0 : 2] = rec(BOT_SPOOL_SUMMARY, 2, 0, nb);
	r[probe_first ? 0 : 2].decided = RING_SIMPLE;
	r[probe_first ? 0 : 2].calls = 100;
	r[probe_first ? 1 : 3] = rec(BOT_SPOOL_SAMPLE, 2, 0, nb);
	r[probe_first ? 1 : 3].arm = RING_SIMPLE;
	r[probe_first ? 1 : 3].decided = RING_SIMPLE;
	r[probe_first ? 1 : 3].duration_ns = 100000;
	k = probe_first ? 2 : 0;
	r[k] = rec(BOT_SPOOL_SUMMARY, 1, 0, nb);
	r[k].calls = 1000000;
	r[k + 1] = rec(BOT_SPOOL_SAMPLE, 1, 0, nb);
	r[k + 1].duration_ns = 50000;
	ck_assert_int_eq(bot_report_builder_add(b, r, 4), 0);
	bot_report_part_init(p);
	ck_assert_int_eq(bot_report_builder_finish(b, p), 0);
	bot_report_builder_free(b);
	identity(p, "n1");
}

START_TEST(test_decided_per_comm)
{
	struct bot_report_part p, q;
	struct bot_report_totals t;
	char err[600], *text;
	size_t len;

	for (int order = 0; order < 2; order++) {
		two_comms(&p, order);
		ck_assert_uint_eq(p.nctx, 1);
		ck_assert_uint_eq(p.ctx[0].calls, 1000100);
		ck_assert_uint_eq(p.ctx[0].decided, TREE_SIMPLE);
		bot_report_totals(&p, &t);
		/* 10^6 x (100 - 50) us; the probe's 100 calls on AUTO's arm: 0 */
		ck_assert_msg(fabs(t.saved - 50.0) < 1e-9 && t.lost == 0, "order %d: saved %g "
			      "lost %g", order, t.saved, t.lost);
		ck_assert_uint_eq(t.calls_decided, 1000100);
		ck_assert_int_eq(bot_report_part_format(&p, &text, &len, err, sizeof(err)), 0);
		ck_assert_ptr_nonnull(strstr(text, "nccl-bot-report-part 2\n"));
		ck_assert_ptr_nonnull(strstr(text, "\ndecided tree/simple 1000000\n"));
		ck_assert_ptr_nonnull(strstr(text, "\ndecided ring/simple 100\n"));
		ck_assert_msg(bot_report_part_parse("x", text, len, &q, err, sizeof(err)) == 0, "%s",
			      err);
		bot_report_totals(&q, &t);
		ck_assert(fabs(t.saved - 50.0) < 1e-9);
		free(text);
		bot_report_part_free(&q);
		bot_report_part_free(&p);
	}
	/* decided lines that do not add up, or in a v1 part, are refused */
	{
		const char *bad = "nccl-bot-report-part 2\njob 5\nstep 0\nnode a\n"
				  "ctx allreduce 80 8 2 1000 ring/simple tree/simple\n"
				  "decided tree/simple 900\nend 1\n";
		const char *v1 = "nccl-bot-report-part 1\njob 5\nstep 0\nnode a\n"
				 "ctx allreduce 80 8 2 1000 ring/simple tree/simple\n"
				 "decided tree/simple 1000\nend 1\n";

		ck_assert_int_lt(bot_report_part_parse("t", bad, strlen(bad), &q, err, sizeof(err)),
				 0);
		ck_assert_msg(strstr(err, "add up"), "%s", err);
		ck_assert_int_lt(bot_report_part_parse("t", v1, strlen(v1), &q, err, sizeof(err)), 0);
	}
	/* the ctx line's decided arm is the decided arm with the most calls (a
	 * part that says otherwise was read, and its report said "ours
	 * ring/simple" above "decided tree/simple: 600 calls", until 2026-12-04);
	 * a tie goes to the lower arm */
	{
		const char *bad = "nccl-bot-report-part 2\njob 5\nstep 0\nnode a\n"
				  "ctx allreduce 88 16 2 1000 ring/simple ring/simple\n"
				  "decided tree/simple 600\ndecided ring/simple 400\nend 1\n";
		const char *good = "nccl-bot-report-part 2\njob 5\nstep 0\nnode a\n"
				   "ctx allreduce 88 16 2 1000 ring/simple tree/simple\n"
				   "decided tree/simple 600\ndecided ring/simple 400\nend 1\n";
		const char *tie = "nccl-bot-report-part 2\njob 5\nstep 0\nnode a\n"
				  "ctx allreduce 88 16 2 1000 ring/simple tree/simple\n"
				  "decided tree/simple 500\ndecided ring/simple 500\nend 1\n";

		ck_assert_int_lt(bot_report_part_parse("t", bad, strlen(bad), &q, err, sizeof(err)),
				 0);
		ck_assert_msg(strstr(err, "t:5: the context's decided arm (its ctx line) is not the "
				      "decided arm with the most calls"), "%s", err);
		ck_assert_msg(bot_report_part_parse("t", good, strlen(good), &q, err, sizeof(err)) == 0,
			      "%s", err);
		bot_report_part_free(&q);
		/* a header line's error names its key (until 2026-12-04 only
		 * "a number out of range", "a key given twice") */
		{
			const char *range = "nccl-bot-report-part 2\njob 5\nstep 0\nnode a\n"
					    "step_nodes 70000\nend 0\n";
			const char *twice = "nccl-bot-report-part 2\njob 5\nstep 0\nnode a\n"
					    "job 5\nend 0\n";

			ck_assert_int_lt(bot_report_part_parse("t", range, strlen(range), &q, err,
							       sizeof(err)), 0);
			ck_assert_str_eq(err, "t:5: 'step_nodes': a number out of range");
			ck_assert_int_lt(bot_report_part_parse("t", twice, strlen(twice), &q, err,
							       sizeof(err)), 0);
			ck_assert_str_eq(err, "t:5: 'job': a key given twice");
			/* a cut after the header is the file's trouble, not its last key's */
			ck_assert_int_lt(bot_report_part_parse("t", range, strlen("nccl-bot-report-part "
							       "2\njob 5\nstep 0\nnode a\n"), &q, err,
							       sizeof(err)), 0);
			ck_assert_str_eq(err, "t:4: no 'end' line (a cut file)");
		}
		/* a long unknown key is cut, the reason kept */
		{
			char longkey[1100];

			snprintf(longkey, sizeof(longkey), "nccl-bot-report-part 2\njob 5\nstep 0\n"
				 "node a\n%01000d 1\nend 0\n", 0);
			ck_assert_int_lt(bot_report_part_parse("t", longkey, strlen(longkey), &q, err,
							       sizeof(err)), 0);
			ck_assert_msg(strstr(err, "...': unknown key"), "%s", err);
		}
		/* tree is arm 0*3+2, ring/simple 1*3+2: the tie is tree's */
		ck_assert_msg(bot_report_part_parse("t", tie, strlen(tie), &q, err, sizeof(err)) == 0,
			      "%s", err);
		bot_report_part_free(&q);
	}
}
END_TEST

/* Version 1 is still read: a context is one decided arm. */
START_TEST(test_v1_read)
{
	const char *v1 = "nccl-bot-report-part 1\njob 5\nstep 0\nnode n1\npolicy ucb1\n"
			 "ctx allreduce 80 8 2 1000 ring/simple tree/simple\n"
			 "arm tree/simple 10 80000 90000\narm ring/simple 10 90000 100000\nend 1\n";
	struct bot_report_part p;
	struct bot_report_totals t;
	char err[400];

	ck_assert_msg(bot_report_part_parse("t", v1, strlen(v1), &p, err, sizeof(err)) == 0, "%s",
		      err);
	ck_assert_uint_eq(p.ctx[0].dcalls[TREE_SIMPLE], 1000);
	ck_assert(p.token == 0);
	bot_report_totals(&p, &t);
	ck_assert(fabs(t.saved - 0.01) < 1e-12);
	bot_report_part_free(&p);
}
END_TEST

/* Review 5, the reviewer's two parts: n1 measured tree 120 us and AUTO's
 * ring 110 us, n2 tree 100 us only. The minimum of medians said tree
 * saved 10 ms; the sample-weighted mean says tree and ring tie. */
START_TEST(test_weighted_median)
{
	const char *n1 = "nccl-bot-report-part 1\njob 5\nstep 0\nnode n1\npolicy ucb1\n"
			 "ctx allreduce 80 8 2 1000 ring/simple tree/simple\n"
			 "arm tree/simple 10 110000 120000\narm ring/simple 10 100000 110000\n"
			 "end 1\n";
	const char *n2 = "nccl-bot-report-part 1\njob 5\nstep 0\nnode n2\npolicy ucb1\n"
			 "ctx allreduce 80 8 2 1000 ring/simple tree/simple\n"
			 "arm tree/simple 10 90000 100000\nend 1\n";
	struct bot_report_part a, b, m;
	struct bot_report_totals t;
	char err[400];

	ck_assert_int_eq(bot_report_part_parse("1", n1, strlen(n1), &a, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_report_part_parse("2", n2, strlen(n2), &b, err, sizeof(err)), 0);
	bot_report_part_init(&m);
	ck_assert_int_eq(bot_report_merge(&m, &a, BOT_REPORT_SAME_STEP), 0);
	ck_assert_int_eq(bot_report_merge(&m, &b, BOT_REPORT_SAME_STEP), 0);
	ck_assert_uint_eq(m.ctx[0].arm[TREE_SIMPLE].med_ns, 110000);
	ck_assert_uint_eq(m.ctx[0].arm[TREE_SIMPLE].n, 20);
	bot_report_totals(&m, &t);
	ck_assert_msg(t.saved == 0 && t.lost == 0, "saved %g lost %g", t.saved, t.lost);
	bot_report_part_free(&a);
	bot_report_part_free(&b);
	bot_report_part_free(&m);
}
END_TEST

/* Review 4: the writer refuses a report directory that others can write
 * or another user owns; readers take the reader's own parts only. */
START_TEST(test_owner)
{
	struct bot_report_part p;
	struct bot_report_set set;
	char err[800], sub[300], path[400];

	example(&p, "a", 80000, 100000);
	snprintf(sub, sizeof(sub), "%s/shared", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(chmod(sub, 0777), 0);
	ck_assert_int_lt(bot_report_part_write(sub, &p, NULL, 0, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "writable by group or others"), "%s", err);
	ck_assert_int_eq(chmod(sub, 01777), 0);
	ck_assert_int_lt(bot_report_part_write(sub, &p, NULL, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(chmod(sub, 0700), 0);
	ck_assert_msg(bot_report_part_write(sub, &p, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	if (getuid() == 0) {
		/* root: another user's directory is refused; reading it, root
		 * takes the directory owner's parts only (root's is not) */
		ck_assert_int_eq(chown(sub, 65534, 65534), 0);
		snprintf(p.node, sizeof(p.node), "b");
		ck_assert_int_lt(bot_report_part_write(sub, &p, NULL, 0, err, sizeof(err)), 0);
		ck_assert_msg(strstr(err, "owned by uid 65534"), "%s", err);
		ck_assert_int_eq(bot_report_dir_read(sub, "77", "0", &set, NULL), 0);
		ck_assert_uint_eq(set.n, 0);
		ck_assert_uint_eq(set.refused, 1);
		bot_report_set_free(&set);
		snprintf(path, sizeof(path), "%s/77.0.a.part", sub);
		ck_assert_int_eq(chown(path, 65534, 65534), 0);
		ck_assert_int_eq(bot_report_dir_read(sub, "77", "0", &set, NULL), 0);
		ck_assert_uint_eq(set.n, 1);
		bot_report_set_free(&set);
	}
	bot_report_part_free(&p);
}
END_TEST

/* Review 2 and audit 6: a heterogeneous job's components (J+K) are its
 * leader's, one step; a part of another token (a stale one of the same
 * job id) is not the step's. */
START_TEST(test_token_and_components)
{
	struct bot_report_part p, m;
	struct bot_report_set set;
	const struct bot_report_filter f = { "77", "0", 0x1234abcdull };
	char err[800], *text;
	size_t len;

	example(&p, "a", 80000, 100000);
	p.token = 0x1234abcdull;
	snprintf(p.job, sizeof(p.job), "77+0");
	ck_assert_msg(bot_report_part_write(dir, &p, NULL, 0, err, sizeof(err)) == 0, "%s", err);
	snprintf(p.job, sizeof(p.job), "77+1");
	snprintf(p.node, sizeof(p.node), "b");
	ck_assert_int_eq(bot_report_part_write(dir, &p, NULL, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_report_part_format(&p, &text, &len, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(strstr(text, "\njob 77+1\n"));
	ck_assert_ptr_nonnull(strstr(text, "\ntoken 000000001234abcd\n"));
	free(text);
	/* a stale part of job 77 step 0 (another cluster's) */
	snprintf(p.job, sizeof(p.job), "77");
	snprintf(p.node, sizeof(p.node), "c");
	p.token = 0x99;
	ck_assert_int_eq(bot_report_part_write(dir, &p, NULL, 0, err, sizeof(err)), 0);
	/* job 7's and 77+x's are not 7's */
	ck_assert_int_eq(bot_report_dir_count(dir, "7", NULL), 0);
	ck_assert_int_eq(bot_report_dir_count(dir, "77", "0"), 3);
	ck_assert_int_eq(bot_report_dir_select(dir, &f, &set, NULL), 0);
	ck_assert_uint_eq(set.n, 2);
	bot_report_part_init(&m);
	for (size_t i = 0; i < set.n; i++)
		ck_assert_int_eq(bot_report_merge(&m, &set.v[i], BOT_REPORT_SAME_STEP), 0);
	ck_assert_str_eq(m.job, "77");
	ck_assert_uint_eq(m.nparts, 2);
	ck_assert(m.token == 0x1234abcdull);
	bot_report_part_free(&m);
	bot_report_set_free(&set);
	/* every token: sorted by leader, step, token */
	ck_assert_int_eq(bot_report_dir_read(dir, "77", NULL, &set, NULL), 0);
	ck_assert_uint_eq(set.n, 3);
	ck_assert(set.v[0].token == 0x99);
	bot_report_set_free(&set);
	/* a J+K job string with something else in it is a token */
	bot_report_job_token(p.job, sizeof(p.job), "77+1x");
	ck_assert_str_eq(p.job, "77_1x");
	bot_report_part_free(&p);
}
END_TEST

/*
 * An arm the step did not measure (formats.md 17, "Latency of an arm"):
 * the example's allgather measured only our tree/simple (120 us); NCCL's
 * row (ring 8, tree 10) puts AUTO's ring/simple at 96 us, so without the
 * fabric's state the context is lost and harmed. The fabric measured ring
 * at 150 us and tree at 120 us: with its state AUTO's ring is ~150 us
 * (the state's ratio on the step's tree), and the context saved.
 */
START_TEST(test_state_lookup)
{
	struct bot_report_part p, m;
	struct bot_report_row r;
	struct bot_report_totals t;
	struct bot_kb *kb = bot_kb_new(), *only = bot_kb_new();
	uint64_t key = bot_ctx_key(BOT_COLL_ALLGATHER, 84, 8, 2);
	const char *names[1] = { "f" };
	const struct bot_kb *kbs[1];
	struct bot_report_states st = { 1, names, kbs };
	struct bot_report_lookup lk = { bot_report_state_arms, &st };
	char line[600];

	ck_assert_ptr_nonnull(kb);
	ck_assert_ptr_nonnull(only);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(bot_kb_add_us(kb, key, RING_SIMPLE, 150), 0);
		ck_assert_int_eq(bot_kb_add_us(kb, key, TREE_SIMPLE, 120), 0);
	}
	kbs[0] = kb;
	example(&p, "a", 80000, 100000);
	snprintf(p.fabric, sizeof(p.fabric), "f");
	/* without the state: the old cost-model estimate, lost and harmed */
	bot_report_row(&p, &p.ctx[0], &r);
	ck_assert_int_eq(r.src[RING_SIMPLE], BOT_REPORT_SRC_COST);
	ck_assert_int_eq(r.src[TREE_SIMPLE], BOT_REPORT_SRC_STEP);
	ck_assert(fabs(r.t[RING_SIMPLE] - 96e-6) < 1e-15);
	ck_assert(r.lost > 0 && r.saved == 0 && r.harmed);
	/* with it: AUTO's arm from the fabric's state, saved, not lost */
	p.lookup = &lk;
	bot_report_row(&p, &p.ctx[0], &r);
	ck_assert_int_eq(r.src[RING_SIMPLE], BOT_REPORT_SRC_STATE);
	ck_assert_str_eq(bot_report_src_name(r.src[RING_SIMPLE]), "state");
	ck_assert(r.est[RING_SIMPLE] && r.estimated && r.known);
	ck_assert_msg(fabs(r.t[RING_SIMPLE] - 150e-6) < 1.5e-6, "%g", r.t[RING_SIMPLE]);
	ck_assert_int_eq(r.best, TREE_SIMPLE);
	ck_assert(r.saved > 500 * 29e-6 && r.lost == 0);
	ck_assert(!r.harmed && !r.over10);
	ck_assert_int_eq(r.src_ours, BOT_REPORT_SRC_STEP);
	/* the measured context is untouched by the state */
	bot_report_row(&p, &p.ctx[1], &r);
	ck_assert(!r.estimated && r.src[RING_SIMPLE] == BOT_REPORT_SRC_STEP);
	/* totals and the summary line: saved, still marked an estimate */
	bot_report_totals(&p, &t);
	ck_assert(t.lost == 0 && t.harmed == 0 && t.estimated);
	bot_report_summary(&p, "77.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "est. saved ~") && strstr(line, "0 contexts lost >10%"), "%s",
		      line);
	/* a merge carries the lookup on */
	bot_report_part_init(&m);
	ck_assert_int_eq(bot_report_merge(&m, &p, BOT_REPORT_STEPS), 0);
	ck_assert_ptr_eq(m.lookup, &lk);
	bot_report_row(&m, &m.ctx[0], &r);
	ck_assert_int_eq(r.src[RING_SIMPLE], BOT_REPORT_SRC_STATE);
	bot_report_part_free(&m);
	{
		/* a job's steps on two fabrics merged (the job total, the
		 * picture): the merge names none ('*'), so fabric f's state
		 * does not stand in for the contexts fabric g ran */
		struct bot_report_part g;

		example(&g, "b", 80000, 100000);
		snprintf(g.fabric, sizeof(g.fabric), "g");
		bot_report_part_init(&m);
		ck_assert_int_eq(bot_report_merge(&m, &p, BOT_REPORT_STEPS), 0);
		ck_assert_int_eq(bot_report_merge(&m, &g, BOT_REPORT_STEPS), 0);
		ck_assert_str_eq(m.fabric, "*");
		ck_assert_str_eq(m.fabric_why, "parts name fabrics f and g");
		bot_report_row(&m, &m.ctx[0], &r);
		ck_assert_int_eq(r.src[RING_SIMPLE], BOT_REPORT_SRC_COST);
		bot_report_part_free(&m);
		bot_report_part_free(&g);
	}
	/* a state without the step's reference arm: its median itself */
	ck_assert_int_eq(bot_kb_add_us(only, key, RING_SIMPLE, 140), 0);
	kbs[0] = only;
	bot_report_row(&p, &p.ctx[0], &r);
	ck_assert_msg(fabs(r.t[RING_SIMPLE] - 140e-6) < 1.5e-6, "%g", r.t[RING_SIMPLE]);
	/* another fabric's state, or none for the context: the cost model */
	snprintf(p.fabric, sizeof(p.fabric), "g");
	bot_report_row(&p, &p.ctx[0], &r);
	ck_assert_int_eq(r.src[RING_SIMPLE], BOT_REPORT_SRC_COST);
	snprintf(p.fabric, sizeof(p.fabric), "f");
	kbs[0] = kb;
	p.ctx[0].bucket = 85;
	bot_report_row(&p, &p.ctx[0], &r);
	ck_assert_int_eq(r.src[RING_SIMPLE], BOT_REPORT_SRC_COST);
	bot_report_part_free(&p);
	bot_kb_free(kb);
	bot_kb_free(only);
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_build_and_read_back);
	tcase_add_test(tc, test_refusals);
	tcase_add_test(tc, test_duplicate_file);
	tcase_add_test(tc, test_decided_unknown);
	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_rounding);
	tcase_add_test(tc, test_merge);
	tcase_add_test(tc, test_files_refused);
	tcase_add_test(tc, test_expand_and_info);
	tcase_add_test(tc, test_decided_per_comm);
	tcase_add_test(tc, test_v1_read);
	tcase_add_test(tc, test_weighted_median);
	tcase_add_test(tc, test_owner);
	tcase_add_test(tc, test_token_and_components);
	tcase_add_test(tc, test_state_lookup);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(report_suite)
