/*
 * test_fabricgen.c - `nccl-bot fabric generate`'s readers and rule
 * (spank/fabricgen.h): Slurm host lists (ranges, zero padding, errors),
 * slurm.conf's NodeName lines (features, NodeName=DEFAULT), topology.conf
 * (leaves, the top switch, a node under two leaves, a loop), and each rule
 * (feature:PREFIX, features, top-switch) with the reasons for no fabric.
 */
#include <string.h>
#include <time.h>

#include "spank/fabricgen.h"
#include "testutil.h"

static char got[4096];

static int collect(void *arg, const char *name)
{
	(void)arg;
	strcat(got, name);
	strcat(got, " ");
	return 0;
}

static int expand(const char *expr, char *err, size_t len)
{
	got[0] = 0;
	return bot_hostlist_expand(expr, collect, NULL, err, len);
}

START_TEST(test_hostlist)
{
	char err[256];

	ck_assert_int_eq(expand("n[1-3],gpu7", err, sizeof(err)), 0);
	ck_assert_str_eq(got, "n1 n2 n3 gpu7 ");
	ck_assert_int_eq(expand("n[08-10,15]x", err, sizeof(err)), 0);
	ck_assert_str_eq(got, "n08x n09x n10x n15x ");
	ck_assert_int_eq(expand("a", err, sizeof(err)), 0);
	ck_assert_str_eq(got, "a ");
	ck_assert_int_eq(expand("n[3-1]", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "N <= M"), "%s", err);
	ck_assert_int_eq(expand("n[1-2", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n[1]][", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n[[1]]", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n[1,]", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n[1]x[2]", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n,", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n/1", err, sizeof(err)), -1);
	ck_assert_int_eq(expand("n[0-999999999]", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "over 262144 names"), "%s", err);
}
END_TEST

static const char conf[] =
	"ClusterName=c  # a comment\n"
	"NodeName=DEFAULT Features=fabric_b,hbm\n"
	"NodeName=n[1-2] NodeHostname=h Features=fabric_A,h100\n"
	"NodeName=n[3-4] State=UNKNOWN\n"
	"nodename=g1 Feature=fabric_a,fabric_c\n"
	"NodeName=bare\n"
	"PartitionName=debug Nodes=ALL\n";

static const char topo[] =
	"SwitchName=leaf1 Nodes=n[1-2]\n"
	"SwitchName=leaf2 Nodes=n[3-4]\n"
	"SwitchName=spine Switches=leaf[1-2]\n"
	"SwitchName=lone Nodes=x9   # a node slurm.conf does not name\n";

static const char *fab(struct bot_fabricgen *g, const char *node, const char *rule, int want,
		       const char *why_has)
{
	static char f[BOT_FABRICGEN_NAME];
	char why[512] = "";
	const struct bot_fabricgen_node *n = bot_fabricgen_find(g, node);

	ck_assert_msg(n != NULL, "%s not found", node);
	ck_assert_int_eq(bot_fabricgen_fabric(g, n, rule, f, sizeof(f), why, sizeof(why)), want);
	if (why_has)
		ck_assert_msg(strstr(why, why_has), "'%s' lacks '%s'", why, why_has);
	return f;
}

/* A feature naming one of the compactor's own directories (inbox,
 * quarantine, held) is no fabric: its state would land beside the inbox. */
START_TEST(test_reserved_fabric)
{
	static const char c[] = "NodeName=q1 Feature=fabric_Quarantine\nNodeName=q2 Feature=fabric_ok\n";
	struct bot_fabricgen g;
	char err[512];

	memset(&g, 0, sizeof(g));
	ck_assert_msg(bot_fabricgen_slurmconf(&g, "slurm.conf", c, strlen(c), err,
					      sizeof(err)) == 0, "%s", err);
	fab(&g, "q1", "feature:fabric_", 1, "'quarantine' is the name of a directory");
	ck_assert_str_eq(fab(&g, "q2", "feature:fabric_", 0, NULL), "ok");
	bot_fabricgen_free(&g);
}
END_TEST

START_TEST(test_files_and_rules)
{
	struct bot_fabricgen g;
	char err[512];

	memset(&g, 0, sizeof(g));
	ck_assert_msg(bot_fabricgen_slurmconf(&g, "slurm.conf", conf, strlen(conf), err,
					      sizeof(err)) == 0, "%s", err);
	ck_assert_msg(bot_fabricgen_topology(&g, "topology.conf", topo, strlen(topo), err,
					     sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(g.n, 7);	/* bare g1 n1..n4 x9 */
	ck_assert_uint_eq(g.nsw, 4);
	ck_assert_str_eq(fab(&g, "n1", "feature:fabric_", 0, NULL), "a");	/* lowercased */
	ck_assert_str_eq(fab(&g, "n3", "feature:fabric_", 0, NULL), "b");	/* the DEFAULT's */
	fab(&g, "g1", "feature:fabric_", -1, "two features starting with fabric_");
	ck_assert_str_eq(fab(&g, "bare", "feature:fabric_", 0, NULL), "b");	/* DEFAULT too */
	fab(&g, "x9", "feature:fabric_", 1, "no feature starting with fabric_");
	ck_assert_str_eq(fab(&g, "n2", "features", 0, NULL), "fabric_a-h100");
	ck_assert_str_eq(fab(&g, "n4", "features", 0, NULL), "fabric_b-hbm");
	fab(&g, "x9", "features", 1, "has no features");
	ck_assert_str_eq(fab(&g, "n1", "top-switch", 0, NULL), "spine");
	ck_assert_str_eq(fab(&g, "n4", "top-switch", 0, NULL), "spine");
	ck_assert_str_eq(fab(&g, "x9", "top-switch", 0, NULL), "lone");
	fab(&g, "bare", "top-switch", 1, "under no switch");
	fab(&g, "n1", "bogus", -1, "not a rule");
	ck_assert(!bot_fabricgen_rule_ok("feature:"));
	ck_assert(bot_fabricgen_rule_ok("feature:x"));
	bot_fabricgen_free(&g);
}
END_TEST

START_TEST(test_errors_name_the_line)
{
	static const char two[] = "SwitchName=a Nodes=n1\nSwitchName=b Nodes=n[1-2]\n";
	static const char loop[] = "SwitchName=a Switches=b\nSwitchName=b Switches=a\n";
	static const char self[] = "SwitchName=a Switches=a\n";
	static const char parents[] = "SwitchName=a Switches=c\n\nSwitchName=b Switches=c\n";
	static const char word[] = "SwitchName=a Nodes=n1 junk\n";
	static const char other[] = "NodeName=n1\n";
	static const char badnode[] = "NodeName=n[1-x]\n";
	struct bot_fabricgen g;
	char err[512];

#define BAD(fn, text, want) do { \
	memset(&g, 0, sizeof(g)); \
	ck_assert_int_eq(fn(&g, "f", text, strlen(text), err, sizeof(err)), -1); \
	ck_assert_msg(strstr(err, want), "'%s' lacks '%s'", err, want); \
	bot_fabricgen_free(&g); \
} while (0)
	BAD(bot_fabricgen_topology, two, "f:2: node n1 under two switches, a and b");
	BAD(bot_fabricgen_topology, loop, "f: switch a is in a loop of switches");
	BAD(bot_fabricgen_topology, self, "f:1: switch a under itself");
	BAD(bot_fabricgen_topology, parents, "f:3: switch c under two switches, a and b");
	BAD(bot_fabricgen_topology, word, "f:1: 'junk': not KEY=VALUE");
	BAD(bot_fabricgen_topology, other, "f:1: not a SwitchName= line");
	BAD(bot_fabricgen_slurmconf, badnode, "f:1: 'n[1-x]': a range is N or N-M");
	memset(&g, 0, sizeof(g));
	ck_assert_int_eq(bot_fabricgen_slurmconf(&g, "f", "a\0b", 3, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "NUL"), "%s", err);
	bot_fabricgen_free(&g);
}
END_TEST

/* Names in an order strcmp does not keep (n10 sorts before n2): the
 * largest map, 262,144 nodes under 16,384 switches, is read in about a
 * second, not the hours a sorted insertion per node (a memmove of the
 * array behind it) took; every node found, the map sorted afterwards. */
START_TEST(test_large_unsorted)
{
	struct bot_fabricgen g;
	char err[512], *text, *p;
	size_t cap = 16384 * 64;
	struct timespec t0, t1;
	double secs;

	ck_assert_ptr_nonnull(text = malloc(cap));
	p = text;
	for (unsigned s = 0; s < 16384; s++)	/* leaves in reverse, 16 nodes each */
		p += sprintf(p, "SwitchName=l%u Nodes=n[%u-%u]\n", 16383 - s, (16383 - s) * 16 + 1,
			     (16383 - s) * 16 + 16);
	memset(&g, 0, sizeof(g));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_msg(bot_fabricgen_topology(&g, "t", text, (size_t)(p - text), err,
					     sizeof(err)) == 0, "%s", err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	ck_assert_uint_eq(g.n, 262144);
	ck_assert_uint_eq(g.nsw, 16384);
	ck_assert_msg(secs < 30, "%.1f s", secs);
	for (size_t i = 1; i < g.n; i++)
		ck_assert_int_lt(strcmp(g.node[i - 1].name, g.node[i].name), 0);
	ck_assert_ptr_nonnull(bot_fabricgen_find(&g, "n262144"));
	ck_assert_int_eq(g.sw[bot_fabricgen_find(&g, "n17")->leaf].name[0], 'l');
	ck_assert_str_eq(g.sw[bot_fabricgen_find(&g, "n17")->leaf].name, "l1");
	bot_fabricgen_free(&g);
	free(text);
}
END_TEST

static Suite *fabricgen_suite(void)
{
	Suite *s = suite_create("fabricgen");
	TCase *tc = tcase_create("fabricgen");

	tcase_add_test(tc, test_hostlist);
	tcase_add_test(tc, test_files_and_rules);
	tcase_add_test(tc, test_reserved_fabric);
	tcase_add_test(tc, test_errors_name_the_line);
	suite_add_tcase(s, tc);
	/* Its own case and limit: the map takes about 3 s under ASan on a
	 * quiet 2-core machine, over check's 4 s default when the suite runs
	 * beside others; the test's own bound (30 s) is the claim. */
	tc = tcase_create("large");
	tcase_add_test(tc, test_large_unsorted);
	tcase_set_timeout(tc, 120);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(fabricgen_suite)
