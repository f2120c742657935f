/*
 * test_spank_args.c - the SPANK plugin's parts that need no Slurm: the
 * plugstack.conf arguments (spank/args.h), the user's option value and the
 * gate and build of the one decision per step (spank/decide.h).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/table.h"
#include "policies/context.h"
#include "spank/args.h"
#include "spank/childread.h"
#include "spank/decide.h"
#include "spank/doctor.h"
#include "spank/fabricmap.h"
#include "spank/reportstate.h"
#include "spank/submit.h"
#include "learn/store.h"
#include "policies/kb.h"
#include "testutil.h"

/* This binary's qsort, which the code under test calls instead of libc's: a
 * correct sort that leaves equal elements in the reverse of their order, as
 * a qsort that is not stable may (glibc 2.37+, musl), so that the tests that
 * depend on the comparator breaking ties see it on any libc. A merge sort
 * (stable) of the reversed array. */
static void merge_sort(unsigned char *b, unsigned char *t, size_t n, size_t size,
		       int (*cmp)(const void *, const void *))
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	merge_sort(b, t, h, size, cmp);
	merge_sort(b + h * size, t, n - h, size, cmp);
	while (i < h || j < n) {
		size_t from = j >= n || (i < h && cmp(b + i * size, b + j * size) <= 0) ? i++ : j++;

		memcpy(t + k++ * size, b + from * size, size);
	}
	memcpy(b, t, n * size);
}

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	unsigned char *b = base, *t;

	if (n < 2 || !size)
		return;
	t = malloc(n * size);
	ck_assert_ptr_nonnull(t);
	for (size_t i = 0; i < n / 2; i++) {	/* reversed: ties end up reversed */
		memcpy(t, b + i * size, size);
		memcpy(b + i * size, b + (n - 1 - i) * size, size);
		memcpy(b + (n - 1 - i) * size, t, size);
	}
	merge_sort(b, t, n, size, cmp);
	free(t);
}

static int parse(struct bot_spank_args *a, const char *node, char *err, size_t len, ...)
{
	char *av[32];
	int ac = 0;
	va_list ap;

	va_start(ap, len);
	for (char *w; ac < 32 && (w = va_arg(ap, char *)); )
		av[ac++] = w;
	va_end(ap);
	bot_spank_args_defaults(a, "/opt/nccl-bot/0/lib");
	return bot_spank_args_parse(a, ac, av, node, err, len);
}

#define OK(...) ck_assert_msg(parse(&a, "n1", err, sizeof(err), __VA_ARGS__, NULL) == 0, "%s", err)
#define BAD(want, ...) do { \
	ck_assert_int_eq(parse(&a, "n1", err, sizeof(err), __VA_ARGS__, NULL), -1); \
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want); \
} while (0)

START_TEST(test_defaults)
{
	struct bot_spank_args a;
	char err[BOT_SPANK_ERR_MAX];

	OK("enable=opt-in");
	ck_assert_int_eq(a.mode, BOT_SPANK_MODE_SHADOW);
	ck_assert_int_eq(a.policy, BOT_POLICY_GREEDY);
	ck_assert_int_eq(a.min_bytes_log2, 20);
	ck_assert_str_eq(a.lib_prefix, "/opt/nccl-bot/0/lib");
	ck_assert(bot_spank_policy_allowed(&a, BOT_POLICY_GREEDY));
	ck_assert(!bot_spank_policy_allowed(&a, BOT_POLICY_UCB1));
}
END_TEST

START_TEST(test_values)
{
	struct bot_spank_args a;
	char err[BOT_SPANK_ERR_MAX], buf[256];

	OK("enable=default", "mode=on", "policy=frozen", "policies=ucb1,thompson",
	   "partitions=gpu,debug", "accounts=a1", "exclude_accounts=bad", "min_bytes=3MiB",
	   "state_dir=/s/%n", "outbox_dir=/o", "spool_dir=/run/nb/%n", "lib_prefix=/l",
	   "fabric_map=/etc/nb/map", "report_dir=/r", "kill_switch=/etc/nb/off",
	   "require_gpus=1", "config=/etc/nb/site.yaml", "fabric=ndr.a", "timeout_ms=500");
	ck_assert_int_eq(a.enable, BOT_SPANK_ENABLE_DEFAULT);
	ck_assert_int_eq(a.mode, BOT_SPANK_MODE_ON);
	ck_assert_int_eq(a.policy, BOT_POLICY_FROZEN);
	ck_assert_int_eq(a.min_bytes_log2, 22);		/* 3 MiB rounded up to 4 MiB */
	ck_assert_str_eq(a.state_dir, "/s/n1");
	ck_assert_str_eq(a.spool_dir, "/run/nb/n1");
	ck_assert_str_eq(a.fabric, "ndr.a");
	ck_assert_int_eq(a.require_gpus, 1);
	ck_assert_int_eq((int)a.timeout_ms, 500);
	ck_assert(bot_spank_list_has(a.partitions, "debug"));
	ck_assert(!bot_spank_list_has(a.partitions, "debu"));
	ck_assert(!bot_spank_list_has(a.partitions, "gpu,debug"));
	ck_assert(bot_spank_policy_allowed(&a, BOT_POLICY_UCB1));
	ck_assert(bot_spank_policy_allowed(&a, BOT_POLICY_FROZEN));	/* policy= is in */
	ck_assert(!bot_spank_policy_allowed(&a, BOT_POLICY_SWEEP));
	bot_spank_policies_str(&a, buf, sizeof(buf));
	ck_assert_str_eq(buf, "ucb1,thompson,frozen");
	/* report_dir= keeps %u and %j (and %%) for the node's expansion */
	OK("report_dir=/r/%u/%j/%n/%%");
	ck_assert_str_eq(a.report_dir, "/r/%u/%j/n1/%%");
	OK("state_dir=/s/%%");
	ck_assert_str_eq(a.state_dir, "/s/%");
	/* a directory's trailing '/' and '/.' are dropped, so that a link
	 * there is one its checks see (O_NOFOLLOW); a file's path is kept */
	OK("spool_dir=/dev/shm/nb/", "state_dir=/s/./", "outbox_dir=/o//.", "report_dir=/r/%u/",
	   "lib_prefix=/.", "kill_switch=/etc/nb/off/");
	ck_assert_str_eq(a.spool_dir, "/dev/shm/nb");
	ck_assert_str_eq(a.state_dir, "/s");
	ck_assert_str_eq(a.outbox_dir, "/o");
	ck_assert_str_eq(a.report_dir, "/r/%u");
	ck_assert_str_eq(a.lib_prefix, "/");
	ck_assert_str_eq(a.kill_switch, "/etc/nb/off/");
	/* "link/.." goes through the link: refused in a directory */
	BAD("spool_dir=/a/..: a '..' component", "spool_dir=/a/..");
	OK("spool_dir=/a/..b/c..");
	ck_assert_str_eq(a.spool_dir, "/a/..b/c..");
	ck_assert_int_lt(bot_spank_args_parse(&a, 1, (char *[]){ "state_dir=/s/%j" }, "n1", err,
					      sizeof(err)), 0);
}
END_TEST

START_TEST(test_errors_name_the_argument)
{
	struct bot_spank_args a;
	char err[BOT_SPANK_ERR_MAX];

	BAD("enable=on: want off, opt-in or default", "enable=on");
	BAD("mode=x: want shadow or on", "mode=x");
	BAD("policy=bogus", "policy=bogus");
	BAD("policies=ucb1,,x: an empty item", "policies=ucb1,,x");
	BAD("policies=ucb1,nope", "policies=ucb1,nope");
	BAD("min_bytes=010", "min_bytes=010");		/* no octal: settings grammar */
	BAD("min_bytes=-1", "min_bytes=-1");
	BAD("min_bytes=1 MiB", "min_bytes=1 MiB");
	BAD("require_gpus=2: want 0 or 1", "require_gpus=2");
	BAD("state_dir=rel: not an absolute path", "state_dir=rel");
	BAD("state_dir=/a/%x: '%x' is not %n or %%", "state_dir=/a/%x");
	/* report_dir= also keeps %u and %j, and says so */
	BAD("report_dir=/a/%x: '%x' is not %n, %u, %j or %%", "report_dir=/a/%x");
	BAD("partitions=a b", "partitions=a b");
	BAD("accounts=: an empty value", "accounts=");
	BAD("fabric=Bad", "fabric=Bad");
	/* the compactor's own directories' names pass the grammar (2026-12-05) */
	BAD("'inbox' is not a fabric name", "fabric=inbox");
	BAD("timeout_ms=0", "timeout_ms=0");
	BAD("'bogus': unknown", "bogus=1");
	BAD("'plain': want KEY=VALUE", "plain");
	BAD("enable= given twice", "enable=off", "enable=default");
	/* %n without a node name */
	ck_assert_int_eq(parse(&a, NULL, err, sizeof(err), "spool_dir=/x/%n", NULL), -1);
	ck_assert_msg(strstr(err, "spool_dir=/x/%n: %n: the node name is not known"), "%s", err);
	ck_assert_int_eq(parse(&a, NULL, err, sizeof(err), "spool_dir=/x/%%n", NULL), 0);
	ck_assert_str_eq(a.spool_dir, "/x/%n");
	ck_assert_int_eq(parse(&a, "a/b", err, sizeof(err), "spool_dir=/x/%n", NULL), -1);
}
END_TEST

START_TEST(test_option)
{
	struct bot_spank_args a;
	char err[BOT_SPANK_ERR_MAX];
	int kind, pol;

	OK("policies=ucb1");
	ck_assert_int_eq(bot_spank_opt_parse(NULL, &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(kind, BOT_SPANK_OPT_BARE);
	ck_assert_int_eq(bot_spank_opt_parse("(null)", &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(kind, BOT_SPANK_OPT_BARE);
	ck_assert_int_eq(bot_spank_opt_parse("", &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(kind, BOT_SPANK_OPT_BARE);
	ck_assert_int_eq(bot_spank_opt_parse("off", &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(kind, BOT_SPANK_OPT_OFF);
	/* any case, as policy names (=UCB1 is taken; =OFF was refused) */
	ck_assert_int_eq(bot_spank_opt_parse("OFF", &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(kind, BOT_SPANK_OPT_OFF);
	ck_assert_int_eq(bot_spank_opt_parse("ucb1", &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(pol, BOT_POLICY_UCB1);
	ck_assert_int_eq(bot_spank_opt_parse("shadow", &a, &kind, &pol, err, sizeof(err)), 0);
	ck_assert_int_eq(pol, BOT_POLICY_SHADOW);
	ck_assert_int_eq(bot_spank_opt_parse("sweep", &a, &kind, &pol, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "does not let users pick") && strstr(err, "allowed: greedy,ucb1"),
		      "%s", err);
	ck_assert_int_eq(bot_spank_opt_parse("bogus", &a, &kind, &pol, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "--nccl-bot=bogus: not a policy"), "%s", err);
}
END_TEST

START_TEST(test_gate)
{
	struct bot_spank_args a;
	struct bot_spank_step s;
	struct bot_spank_gate g;
	char err[BOT_SPANK_ERR_MAX];

	memset(&s, 0, sizeof(s));
	OK("enable=opt-in", "mode=on");
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used);				/* opt-in, not asked */
	s.opt = BOT_SPANK_OPT_BARE;
	bot_spank_gate(&a, &s, &g);
	ck_assert(g.used && g.explicit_ && g.policy == BOT_POLICY_GREEDY);
	s.opt = BOT_SPANK_OPT_POLICY;
	s.opt_policy = BOT_POLICY_UCB1;
	bot_spank_gate(&a, &s, &g);
	ck_assert(g.used && g.policy == BOT_POLICY_UCB1);
	s.kill_switch = 1;
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && g.tell && strstr(g.reason, "kill switch"));
	s.kill_switch = 0;

	OK("enable=default", "mode=on", "partitions=gpu", "exclude_accounts=x", "require_gpus=1");
	s.opt = BOT_SPANK_OPT_NONE;
	s.partition = "gpu";
	s.has_gpus = 1;
	bot_spank_gate(&a, &s, &g);
	ck_assert(g.used && !g.explicit_);
	s.opt = BOT_SPANK_OPT_OFF;
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used);
	s.opt = BOT_SPANK_OPT_NONE;
	s.partition = "cpu";
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && strstr(g.reason, "partition cpu"));
	s.partition = NULL;
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used);				/* unknown partition: not enabled */
	/* a job submitted to several partitions: enabled where all are */
	s.partition = "gpu,cpu";
	bot_spank_gate(&a, &s, &g);
	ck_assert_msg(!g.used && strstr(g.reason, "may run in any of partitions gpu,cpu, and "
					"nccl-bot is not enabled in cpu"), "%s", g.reason);
	s.partition = "gpu,gpu";
	bot_spank_gate(&a, &s, &g);
	ck_assert(g.used);
	s.partition = "gpu";
	s.account = "x";
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && strstr(g.reason, "account x"));
	s.account = "y";
	s.has_gpus = 0;
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && !g.tell && strstr(g.reason, "require_gpus"));
	/* a user who asked is told (silent until 2026-12-04) */
	s.opt = BOT_SPANK_OPT_BARE;
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && g.tell && strstr(g.reason, "require_gpus"));
	s.opt = BOT_SPANK_OPT_NONE;
	s.has_gpus = 1;
	/* at submission: an unknown account under exclude_accounts= may be
	 * the excluded default account; srun's unknown one is not excluded */
	s.account = NULL;
	bot_spank_gate(&a, &s, &g);
	ck_assert(g.used);
	s.account_why = "not given by -A";
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && strstr(g.reason, "account is not known at submission (not given "
				    "by -A)"));
	s.account = "y";
	s.partition = NULL;
	s.partition_why = "not given by -p";
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && strstr(g.reason, "partition is not known at submission (not given "
				    "by -p) and this cluster enables nccl-bot in some partitions"));
	s.partition = "gpu";
	s.partition_why = s.account_why = NULL;

	OK("enable=default");				/* mode=shadow by default */
	s.has_gpus = 0;
	s.opt = BOT_SPANK_OPT_POLICY;
	s.opt_policy = BOT_POLICY_GREEDY;
	bot_spank_gate(&a, &s, &g);
	ck_assert(g.used && g.policy == BOT_POLICY_SHADOW && g.tell);

	OK("enable=off");
	bot_spank_gate(&a, &s, &g);
	ck_assert(!g.used && g.tell && strstr(g.reason, "enable=off"));
}
END_TEST

static const char *gpu_env;
static const char *gpu_get(const char *name)
{
	return !strcmp(name, "SLURM_TRES_PER_TASK") || !strcmp(name, "SLURM_GPUS") ? gpu_env : NULL;
}

START_TEST(test_gpus)
{
	gpu_env = NULL;
	ck_assert(!bot_spank_env_has_gpus(gpu_get));
	gpu_env = "0";
	ck_assert(!bot_spank_env_has_gpus(gpu_get));
	gpu_env = "a100:0";
	ck_assert(!bot_spank_env_has_gpus(gpu_get));
	gpu_env = "2";
	ck_assert(bot_spank_env_has_gpus(gpu_get));
	gpu_env = "cpu=4";
	ck_assert(bot_spank_env_has_gpus(gpu_get));	/* SLURM_GPUS=cpu=4: some value */
}
END_TEST

static int nlog;
static char lastlog[1024];
static void count_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	snprintf(lastlog, sizeof(lastlog), "%s", msg);
	nlog++;
}

static void stall(void)
{
	pause();	/* a state read that never returns (a hung filesystem) */
}

START_TEST(test_build)
{
	struct bot_spank_args a;
	struct bot_spank_gate g;
	struct bot_spank_decision d;
	struct bot_log log = { count_log, NULL };
	char err[BOT_SPANK_ERR_MAX], lp[600], sd[600];
	static char dir[128];

	bot_test_mkdtemp(dir, sizeof(dir), "spank");
	snprintf(lp, sizeof(lp), "lib_prefix=%s", BOT_TUNER_SO_DIR);
	snprintf(sd, sizeof(sd), "state_dir=%s", dir);
	OK(lp, "mode=on");
	memset(&g, 0, sizeof(g));
	g.used = 1;
	g.explicit_ = 1;
	g.policy = BOT_POLICY_UCB1;
	/* the prior: all three variables, the user's tuner replaced */
	ck_assert_int_eq(bot_spank_build(&a, &g, 7, "theirs.so", NULL, &d, &log), 0);
	ck_assert(d.used);
	ck_assert_int_eq((int)d.nvars, 3);
	ck_assert_str_eq(d.name[0], "NCCL_TUNER_PLUGIN");
	ck_assert(strstr(d.value[0], "/libnccl-tuner-bot.so"));
	ck_assert_str_eq(d.name[2], BOT_ENV_TABLE);
	ck_assert_str_eq(d.source, "prior");
	bot_spank_decision_free(&d);
	/* an admin default keeps the user's tuner: nothing to set */
	g.explicit_ = 0;
	ck_assert_int_eq(bot_spank_build(&a, &g, 7, "theirs.so", NULL, &d, &log), 0);
	ck_assert(!d.used && strstr(d.note, "theirs.so"));
	bot_spank_decision_free(&d);
	/* a fabric without state yet, read in the bounded child */
	OK(lp, sd, "fabric=f1", "mode=on");
	ck_assert_int_eq(bot_spank_build(&a, &g, 7, NULL, NULL, &d, &log), 0);
	ck_assert_msg(d.used && d.nvars == 3 && strstr(d.source, "fabric f1"), "%s", d.source);
	bot_spank_decision_free(&d);
	/* an unreadable state: the prior, said why */
	OK(lp, "state_dir=/nonexistent/nb", "fabric=f1", "mode=on");
	nlog = 0;
	ck_assert_int_eq(bot_spank_build(&a, &g, 7, NULL, NULL, &d, &log), 0);
	ck_assert_msg(d.used && !strncmp(d.source, "prior", 5), "%s", d.source);
	ck_assert(nlog > 0);
	bot_spank_decision_free(&d);
	/* a state read that hangs: the prior after timeout_ms, said why */
	OK(lp, sd, "fabric=f1", "mode=on", "timeout_ms=200");
	bot_spank_test_child_hook = stall;
	{
		struct timespec t0, t1;
		long ms;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(bot_spank_build(&a, &g, 7, NULL, NULL, &d, &log), 0);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
		ck_assert_msg(ms >= 200 && ms < 2000, "took %ld ms", ms);
	}
	bot_spank_test_child_hook = NULL;
	ck_assert_msg(d.used && !strncmp(d.source, "prior (reading the state took over 200 ms",
					 41), "%s", d.source);
	ck_assert_msg(strstr(lastlog, "took over 200 ms"), "%s", lastlog);
	bot_spank_decision_free(&d);
	/* no rank library: -1 */
	OK("lib_prefix=/nonexistent", "mode=on");
	ck_assert_int_eq(bot_spank_build(&a, &g, 7, NULL, NULL, &d, &log), -1);
	bot_test_rmtree(dir);
}
END_TEST

/* what a submission names: sbatch's command line (argv as
 * /proc/self/cmdline has it), the script's #SBATCH block, slurm.conf */
static void cmdline(struct bot_spank_submit *s, int want_script, size_t n, const char *argv)
{
	bot_spank_submit_cmdline(argv, n, want_script, s);
}
#define CMD(s, lit) cmdline(s, 1, sizeof(lit), lit)

static int srun_gpus(const char *argv, size_t n)
{
	struct bot_spank_srun r;

	bot_spank_srun_cmdline(argv, n, &r);
	return r.gpus;
}

/* an environment of one variable, SBATCH_GPUS_PER_NODE=2 (and
 * SBATCH0_GPUS=0) */
static const char *one_gpu_var(const char *name)
{
	return !strcmp(name, "SBATCH_GPUS_PER_NODE") ? "2" : !strcmp(name, "SBATCH0_GPUS") ? "0" :
	       NULL;
}

static const char *job_gpus_var(const char *name)
{
	return !strcmp(name, "SLURM_JOB_GPUS") ? "0" : NULL;
}

static const char *gpus_zero_var(const char *name)
{
	return !strcmp(name, "SLURM_GPUS") ? "0" : NULL;
}

START_TEST(test_submit)
{
	struct bot_spank_submit s;
	char out[64];

	CMD(&s, "sbatch\0-p\0debug\0-A\0acct1\0job.sh\0-p\0x");
	ck_assert_str_eq(s.partition, "debug");	/* the script's own -p is its own */
	ck_assert_str_eq(s.account, "acct1");
	ck_assert_str_eq(s.script, "job.sh");
	CMD(&s, "sbatch\0--partition=a\0--partition\0b\0--account=c\0-vvHN1\0-n\0"
		"2\0--nccl-bot\0--hold\0j.sh");
	ck_assert_str_eq(s.partition, "b");		/* the last one, as getopt */
	ck_assert_str_eq(s.account, "c");
	ck_assert_str_eq(s.script, "j.sh");
	CMD(&s, "sbatch\0-vpother\0-Aacct2\0--export\0ALL\0--\0-odd.sh");
	ck_assert_str_eq(s.partition, "other");
	ck_assert_str_eq(s.account, "acct2");
	ck_assert_str_eq(s.script, "-odd.sh");
	CMD(&s, "sbatch\0-p\0debug\0--wrap\0true");
	ck_assert_str_eq(s.script, "");			/* --wrap: no script */
	CMD(&s, "sbatch\0-N1");
	ck_assert_str_eq(s.script, "");			/* stdin */
	ck_assert_str_eq(s.partition, "");
	cmdline(&s, 0, sizeof("salloc\0-p\0x\0srun\0-p\0y"), "salloc\0-p\0x\0srun\0-p\0y");
	ck_assert_str_eq(s.partition, "x");
	ck_assert_str_eq(s.script, "");			/* salloc: a command, no script */
	CMD(&s, "sbatch\0-p");				/* a value missing */
	ck_assert_str_eq(s.partition, "");
	/* long options abbreviated as getopt takes them */
	CMD(&s, "sbatch\0-vv\0--part=gpuX\0--acco\0secret\0--pars\0job.sh");
	ck_assert_str_eq(s.partition, "gpuX");
	ck_assert_str_eq(s.account, "secret");
	ck_assert_str_eq(s.script, "job.sh");	/* --pars: --parsable, no value */
	ck_assert_int_eq(s.unsure, 0);
	/* an option the scan cannot read (another plugin's flag, an ambiguous
	 * prefix) stops it: the script is unknown, never the next word */
	CMD(&s, "sbatch\0-p\0cpu\0--container-remap-root\0-p\0gpu\0x.sh");
	ck_assert_str_eq(s.partition, "");	/* a later -p may follow: unknown */
	ck_assert_str_eq(s.script, "");
	ck_assert_int_eq(s.unsure, 1);
	CMD(&s, "sbatch\0--par\0gpu\0x.sh");		/* partition or parsable? */
	ck_assert_str_eq(s.partition, "");
	ck_assert_str_eq(s.script, "");
	ck_assert_int_eq(s.unsure, 1);
	CMD(&s, "sbatch\0--container-image=x\0-A\0a\0x.sh");	/* "=": its value */
	ck_assert_str_eq(s.account, "a");
	ck_assert_str_eq(s.script, "x.sh");

	/* -D/--chdir: the job's working directory, where its sruns put their
	 * report: the batch step's goes there too (until 2026-12-04: into
	 * sbatch's own working directory, a second directory) */
	CMD(&s, "sbatch\0-D\0/w/x\0j.sh");
	ck_assert_str_eq(s.chdir, "/w/x");
	CMD(&s, "sbatch\0--chd=rel\0j.sh");
	ck_assert_str_eq(s.chdir, "rel");
	CMD(&s, "sbatch\0-N1\0j.sh");
	ck_assert_str_eq(s.chdir, "");
	/* GPUs asked for on the command line (require_gpus=1; until
	 * 2026-12-04 only the environment was read, where sbatch and srun put
	 * none of their own options) */
	CMD(&s, "sbatch\0--gpus=1\0j.sh");
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0-G\0a100:2\0j.sh");
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0-NG2\0j.sh");	/* -N takes the rest of the word: "G2" */
	ck_assert_int_eq(s.gpus, 0);
	CMD(&s, "sbatch\0--gres=shard:2,gpu:a100:1\0j.sh");
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0--gres=gpu:0\0--gpus-per-node=0\0--gpus\0a100:0\0j.sh");
	ck_assert_int_eq(s.gpus, 0);
	CMD(&s, "sbatch\0--gres=gpu\0j.sh");	/* a bare gpu is one */
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0--gres=gres:gpu:1\0j.sh");	/* Slurm reads past "gres:" */
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0--gres=shard:2\0j.sh");		/* a shared GPU */
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0--gpus=0\0j.sh");		/* named: the variables do not count */
	ck_assert_int_eq(s.gpus, 0);
	ck_assert_int_eq(s.gpus_named, 1);
	CMD(&s, "sbatch\0--tasks-per-node\0001\0j.sh");	/* unsure: a GPU not ruled out */
	ck_assert_int_eq(s.unsure, 1);
	ck_assert_int_eq(s.gpus, 1);
	/* salloc's --wait is --wait-all-nodes, with a value */
	cmdline(&s, 0, sizeof("salloc\0--wait\0000\0-p\0other\0sh"), "salloc\0--wait\0000\0-p\0other\0sh");
	ck_assert_str_eq(s.partition, "other");
	ck_assert_int_eq(s.unsure, 0);
	/* sbatch's --export, read for the user's plugin; salloc has none */
	CMD(&s, "sbatch\0--export=ALL,NCCL_TUNER_PLUGIN=m.so\0j.sh");
	ck_assert_str_eq(s.export_, "ALL,NCCL_TUNER_PLUGIN=m.so");
	cmdline(&s, 0, sizeof("salloc\0--export=NONE\0sh"), "salloc\0--export=NONE\0sh");
	ck_assert_str_eq(s.export_, "");
	/* sbatch's --export-file: the batch step's environment is the
	 * file's (the plugin's variables do not reach it); salloc has none */
	CMD(&s, "sbatch\0--export-file=env.txt\0j.sh");
	ck_assert_int_eq(s.export_file, 1);
	CMD(&s, "sbatch\0--export-file\0env.txt\0j.sh");
	ck_assert_int_eq(s.export_file, 1);
	ck_assert_str_eq(s.script, "j.sh");
	CMD(&s, "sbatch\0--export=ALL\0j.sh");
	ck_assert_int_eq(s.export_file, 0);
	cmdline(&s, 0, sizeof("salloc\0--export-file=e\0sh"), "salloc\0--export-file=e\0sh");
	ck_assert_int_eq(s.export_file, 0);
	/* a heterogeneous job: an --export-file of any component is the
	 * job's (sbatch reads them all before the first's environment is
	 * built); the script follows the last component, never ":"; -p is
	 * the first component's (missed, ":" the script, until 2026-12-04) */
	CMD(&s, "sbatch\0-p\0a\0-N1\0:\0--export-file\0e\0-p\0b\0j.sh\0x");
	ck_assert_int_eq(s.export_file, 1);
	ck_assert_str_eq(s.script, "j.sh");
	ck_assert_str_eq(s.partition, "a");
	CMD(&s, "sbatch\0-N1\0:\0-N1\0:\0-N2\0j.sh\0--export-file=e");	/* the script's */
	ck_assert_int_eq(s.export_file, 0);
	ck_assert_str_eq(s.script, "j.sh");
	CMD(&s, "sbatch\0-N1\0:\0--wrap\0true");
	ck_assert_str_eq(s.script, "");
	CMD(&s, "sbatch\0-p\0a\0:\0--tasks-per-node\0001\0j.sh");
	ck_assert_int_eq(s.unsure, 1);
	ck_assert_str_eq(s.script, "");
	CMD(&s, "sbatch\0j.sh\0:\0--export-file=e");	/* the script's arguments */
	ck_assert_int_eq(s.export_file, 0);
	ck_assert_str_eq(s.script, "j.sh");
	CMD(&s, "sbatch\0--tres-per-task=gres/gpu=1\0j.sh");
	ck_assert_int_eq(s.gpus, 1);
	CMD(&s, "sbatch\0-N1\0j.sh\0--gpus=1");	/* the script's argument */
	ck_assert_int_eq(s.gpus, 0);
#define SRUN(lit) srun_gpus(lit, sizeof(lit))
	ck_assert_int_eq(SRUN("srun\0-N1\0--gpus=1\0true"), 1);
	ck_assert_int_eq(SRUN("srun\0-l\0--gres\0gpu:1\0true"), 1);	/* -l takes no value */
	ck_assert_int_eq(SRUN("srun\0--gpus-per-task=1\0--mpi=pmix\0python\0x.py"), 1);
	ck_assert_int_eq(SRUN("srun\0-N1\0python\0--gpus=1"), 0);	/* the program's */
	ck_assert_int_eq(SRUN("srun\0-N1\0true"), 0);
	ck_assert_int_eq(SRUN("srun\0--label\0-G1\0true"), 1);
	/* -F takes a value; a later component of a heterogeneous step counts;
	 * an option the scan cannot read may ask for one (not ruled out) */
	ck_assert_int_eq(SRUN("srun\0-F\0hosts\0--gpus=1\0prog"), 1);
	ck_assert_int_eq(SRUN("srun\0--whole\0--gpus=1\0prog"), 1);
	ck_assert_int_eq(SRUN("srun\0-n1\0prog\0a\0:\0-n1\0--gpus=1\0prog2"), 1);
	ck_assert_int_eq(SRUN("srun\0--container-image\0img\0prog"), 1);
	ck_assert_int_eq(SRUN("srun\0--container-image=img\0prog"), 0);	/* "=": read */
	/* --export: its value, which srun keeps out of its environment */
	{
		static const char cl[] = "srun\0--export=ALL,NCCL_TUNER_PLUGIN=mine.so\0-N1\0"
					 "true\0--export=NONE";
		struct bot_spank_srun r;

		bot_spank_srun_cmdline(cl, sizeof(cl), &r);
		ck_assert_str_eq(r.export_list, "ALL,NCCL_TUNER_PLUGIN=mine.so");
		bot_spank_srun_cmdline("srun\0true", sizeof("srun\0true"), &r);
		ck_assert_ptr_null(r.export_list);
#define EXPV(l, e) bot_spank_export_value(l, "NCCL_TUNER_PLUGIN", e, out, sizeof(out))
		ck_assert_str_eq(EXPV("ALL,NCCL_TUNER_PLUGIN=mine.so", NULL), "mine.so");
		/* with ALL srun applies its environment last: it wins */
		ck_assert_str_eq(EXPV("ALL,NCCL_TUNER_PLUGIN=mine.so", "env.so"), "env.so");
		ck_assert_str_eq(EXPV("all,NCCL_TUNER_PLUGIN=mine.so", NULL), "mine.so");
		ck_assert_str_eq(EXPV("all", "env.so"), "env.so");	/* any case */
		ck_assert_ptr_null(EXPV("None", "env.so"));
		ck_assert_ptr_null(EXPV("NONE,NCCL_TUNER_PLUGIN=mine.so", "env.so"));
		ck_assert_ptr_null(EXPV("NIL", "env.so"));
		/* commas inside double quotes are the item's; quotes go */
		ck_assert_str_eq(EXPV("NCCL_TUNER_PLUGIN=\"a,b\",ALL", NULL), "a,b");
		ck_assert_str_eq(EXPV("\"NCCL_TUNER_PLUGIN=a,b\"", NULL), "a,b");
		ck_assert_str_eq(EXPV("ALL", "env.so"), "env.so");
		ck_assert_str_eq(EXPV(NULL, "env.so"), "env.so");
		ck_assert_ptr_null(EXPV("NONE", "env.so"));	/* not passed on */
		ck_assert_ptr_null(EXPV("FOO,BAR", "env.so"));
		ck_assert_str_eq(EXPV("FOO,NCCL_TUNER_PLUGIN", "env.so"), "env.so");
		ck_assert_ptr_null(EXPV("ALL,NCCL_TUNER_PLUGIN_X=1", NULL));
		ck_assert_str_eq(EXPV("NCCL_TUNER_PLUGIN=", "env.so"), "");
	}
	ck_assert_int_eq(bot_spank_submit_env_gpus("SBATCH_", one_gpu_var), 1);
	ck_assert_int_eq(bot_spank_submit_env_gpus("SALLOC_", one_gpu_var), -1);	/* none */
	ck_assert_int_eq(bot_spank_submit_env_gpus("SBATCH0_", one_gpu_var), 0);	/* 0 */
	/* the job's GPU indices: "0" is GPU 0 (it read as none until
	 * 2026-12-04); SLURM_GPUS=0 is a count */
	ck_assert_int_eq(bot_spank_env_has_gpus(job_gpus_var), 1);
	ck_assert_int_eq(bot_spank_env_has_gpus(gpus_zero_var), 0);

#define SCRIPT(s, lit) bot_spank_submit_script(lit, sizeof(lit) - 1, s)
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH --gres=gpu:2\n#SBATCH -D /w\n"
				"#SBATCH --export=NONE\necho\n"), 0);
	ck_assert_int_eq(s.gpus, 1);
	ck_assert_str_eq(s.export_, "NONE");
	ck_assert_str_eq(s.chdir, "/w");
	ck_assert_int_eq(s.export_file, 0);
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH --export-file=/e\n"), 0);
	ck_assert_int_eq(s.export_file, 1);
	/* a heterogeneous job's later component (after "#SBATCH hetjob",
	 * "packjob", any case): sbatch reads it after the batch step's
	 * environment is built, which keeps nccl-bot; nor are its -p, -A the
	 * batch step's (the whole script was read until 2026-12-04) */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH -p first\n#SBATCH  HetJob\n"
				"#SBATCH --export-file=/e -p second -A a\n"), 0);
	ck_assert_int_eq(s.export_file, 0);
	ck_assert_str_eq(s.partition, "first");
	ck_assert_str_eq(s.account, "");
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH packjob\n#SBATCH --export-file=/e\n"), 0);
	ck_assert_int_eq(s.export_file, 0);
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH --job-name=hetjobs --export-file=/e\n"), 0);
	ck_assert_int_eq(s.export_file, 1);	/* not a separator */
	strcpy(s.chdir, "/cmd");
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH --chdir=/w\n"), 0);
	ck_assert_str_eq(s.chdir, "/cmd");		/* the command line's wins */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\n#SBATCH -N1\n\n# note\n#SBATCH --partition=gpu "
				"-A 'acct 1' # c\n#SBATCH -p other\necho hi\n"
				"#SBATCH -A late\n"), 0);
	ck_assert_str_eq(s.partition, "other");
	ck_assert_str_eq(s.account, "acct 1");	/* quotes group; after a command: none */
	strcpy(s.partition, "cmd");
	s.account[0] = 0;
	ck_assert_int_eq(SCRIPT(&s, "#!/bin/sh\r\n#SBATCH -p gpu\r\n  #SBATCH -A a2\r\n"
				"#SBATCHX -A a3\n#SBATCH -Aa4"), 0);
	ck_assert_str_eq(s.partition, "cmd");		/* the command line's wins */
	ck_assert_str_eq(s.account, "");		/* indented, no blank, cut: not read */
	ck_assert_int_eq(SCRIPT(&s, "echo no\n#SBATCH -p x\n"), -1);

#define CONF(lit, o) bot_spank_conf_default_partition(lit, sizeof(lit) - 1, o, sizeof(o))
	ck_assert_int_eq(CONF("PartitionName=DEFAULT Default=YES\nPartitionName=debug Nodes=n[1-4] "
			      "Default=YES MaxTime=1\npartitionname=other default=yes # last\n"
			      "# PartitionName=c Default=YES\nPartitionName=d Default=NO\n", out),
			 0);
	ck_assert_str_eq(out, "other");
	ck_assert_int_eq(CONF("PartitionName=debug Nodes=n1\nDefault=YES\n", out), -1);
}
END_TEST

START_TEST(test_fabricmap)
{
	static const char good[] = "# node fabric\n\nn3 b\n n1\ta  # leaf1\nn2 a\nn4 b";
	struct bot_fabricmap m;
	struct bot_fabricmap_step st;
	char err[512];

	ck_assert_msg(bot_fabricmap_parse("map", good, strlen(good), &m, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq((int)m.n, 4);
	ck_assert_str_eq(bot_fabricmap_lookup(&m, "n1"), "a");
	ck_assert_str_eq(bot_fabricmap_lookup(&m, "n4"), "b");
	ck_assert(bot_fabricmap_lookup(&m, "n5") == NULL);
	memset(&st, 0, sizeof(st));
	bot_fabricmap_step_add(&m, &st, "n1");
	bot_fabricmap_step_add(&m, &st, "n2");
	ck_assert(st.state == 1 && !strcmp(st.fabric, "a"));
	bot_fabricmap_step_add(&m, &st, "n3");
	ck_assert(st.state == -1 && !st.fabric[0]);
	ck_assert_str_eq(st.why, "the step's nodes span fabrics a and b");
	memset(&st, 0, sizeof(st));
	bot_fabricmap_step_add(&m, &st, "n1");
	bot_fabricmap_step_add(&m, &st, "n9");
	ck_assert_str_eq(st.why, "node n9 is not in the fabric map");
	bot_fabricmap_free(&m);

#define MAPBAD(text, want) do { \
	ck_assert_int_eq(bot_fabricmap_parse("map", text, strlen(text), &m, err, sizeof(err)), -1); \
	ck_assert_msg(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want); \
	ck_assert(m.e == NULL && m.n == 0); \
} while (0)
	MAPBAD("n1 a\nn2 a\nn1 b\n", "map:3: node n1 is named twice (first on line 1)");
	/* named four times: the second naming is reported, against the first,
	 * whatever order qsort leaves equal names in (this binary's qsort, at
	 * its top, leaves them reversed: the name-only comparator of before
	 * 2026-12-03 reports line 6 against line 5 here, on any libc). */
	MAPBAD("n1 a\nn2 a\nn1 b\nn3 a\nn1 c\nn1 d\n",
	       "map:3: node n1 is named twice (first on line 1)");
	MAPBAD("n9 a\nn1 a\nn2 a\nn2 b\nn3 a\nn2 c\nn2 d\nn2 e\nn2 f\nn2 g\nn2 h\n",
	       "map:4: node n2 is named twice (first on line 3)");
	MAPBAD("n1 a\nn2\n", "map:2: node n2 without a fabric");
	MAPBAD("n1 A\n", "map:1: not a fabric name");
	MAPBAD("n1 a\nn2 held\n", "map:2: fabric name 'held' is the name of a directory");
	MAPBAD("n1 a b\n", "map:1: more than NODE FABRIC");
	MAPBAD("n/1 a\n", "map:1: not a node name");
	MAPBAD("n1 a\r\n", "map:1:");
	MAPBAD("n1 a\nx\0 b\n", "map:2:");
	MAPBAD("partition:p a\npartition:p b\n", "map:2: partition:p is named twice (first on line 1)");
	MAPBAD("partition: a\n", "map:1: not a node name");
	MAPBAD("partition:x:y a\n", "map:1: not a node name");
	MAPBAD("part:x a\n", "map:1: not a node name");
	MAPBAD("partition:0123456789012345678901234567890123456789012345678901234 a\n",
	       "map:1: not a node name");

	/* partitions' fabrics, for what is decided at submission */
	{
		static const char pm[] = "n1 a\npartition:gpu a\npartition:gpu2 a\n"
					 "partition:cpu b\npartition 01\n";

		ck_assert_msg(bot_fabricmap_parse("map", pm, strlen(pm), &m, err, sizeof(err)) ==
			      0, "%s", err);
		ck_assert(bot_fabricmap_lookup(&m, "gpu") == NULL);	/* not a node */
		ck_assert_str_eq(bot_fabricmap_lookup(&m, "partition"), "01");	/* a node */
		bot_fabricmap_partitions(&m, "gpu", &st);
		ck_assert(st.state == 1 && !strcmp(st.fabric, "a"));
		bot_fabricmap_partitions(&m, "gpu,gpu2", &st);
		ck_assert(st.state == 1 && !strcmp(st.fabric, "a"));
		bot_fabricmap_partitions(&m, "gpu,cpu", &st);
		ck_assert(st.state == -1 && !st.fabric[0]);
		ck_assert_str_eq(st.why, "the partitions span fabrics a and b");
		bot_fabricmap_partitions(&m, "gpu,nope", &st);
		ck_assert_str_eq(st.why, "partition nope is not in the fabric map");
		bot_fabricmap_partitions(&m, "n1", &st);
		ck_assert_str_eq(st.why, "partition n1 is not in the fabric map");
		bot_fabricmap_partitions(&m, "gpu,", &st);
		ck_assert(st.state == -1);
		bot_fabricmap_partitions(&m, "", &st);
		ck_assert(st.state == -1);
		bot_fabricmap_free(&m);
	}
}
END_TEST

/* bot_doctor_ldcache: a cache made here (the new format after an old
 * table, as glibc before 2.32 wrote it, and alone), then the host's. */
struct found {
	char paths[4][64];
	int n, stop_at;
};

static int note_path(void *arg, const char *path)
{
	struct found *f = arg;

	if (f->n < 4)
		snprintf(f->paths[f->n], sizeof(f->paths[0]), "%s", path);
	f->n++;
	return f->n == f->stop_at;
}

static size_t put_cache(uint8_t *b, int old)
{
	static const char *const str[] = { "libx.so.1", "/lib/a/libx.so.1", "liby.so.2",
					   "/lib/b/liby.so.2", "/lib/c/libx.so.1" };
	/* entries: (key, value) indexes into str */
	static const int ent[][2] = { { 0, 1 }, { 2, 3 }, { 0, 4 } };
	size_t hdr = 0, at, strs;
	uint32_t off[5];

	memset(b, 0, 1024);
	if (old) {
		memcpy(b, "ld.so-1.7.0", 11);
		b[12] = 1;	/* one old entry, 12 bytes: 28, aligned to 32 */
		hdr = 32;
	}
	memcpy(b + hdr, "glibc-ld.so.cache1.1", 20);
	b[hdr + 20] = 3;
	strs = hdr + 48 + 3 * 24;
	at = strs;
	for (int i = 0; i < 5; i++) {
		off[i] = (uint32_t)(at - hdr);
		memcpy(b + at, str[i], strlen(str[i]) + 1);
		at += strlen(str[i]) + 1;
	}
	for (int i = 0; i < 3; i++) {
		uint8_t *e = b + hdr + 48 + i * 24;

		e[0] = 3;
		memcpy(e + 4, &off[ent[i][0]], 4);
		memcpy(e + 8, &off[ent[i][1]], 4);
	}
	return at;
}

START_TEST(test_ldcache)
{
	uint8_t b[1024];
	struct found f;
	size_t len;

	for (int old = 0; old < 2; old++) {
		len = put_cache(b, old);
		memset(&f, 0, sizeof(f));
		ck_assert_int_eq(bot_doctor_ldcache(b, len, "libx.so.1", note_path, &f), 2);
		ck_assert_str_eq(f.paths[0], "/lib/a/libx.so.1");
		ck_assert_str_eq(f.paths[1], "/lib/c/libx.so.1");
		memset(&f, 0, sizeof(f));
		f.stop_at = 1;
		ck_assert_int_eq(bot_doctor_ldcache(b, len, "libx.so.1", note_path, &f), 1);
		memset(&f, 0, sizeof(f));
		ck_assert_int_eq(bot_doctor_ldcache(b, len, "liby.so.2", note_path, &f), 1);
		ck_assert_str_eq(f.paths[0], "/lib/b/liby.so.2");
		ck_assert_int_eq(bot_doctor_ldcache(b, len, "libz.so", note_path, &f), 0);
		/* cut short: entries past the end refused, strings past it skipped */
		ck_assert_int_eq(bot_doctor_ldcache(b, (old ? 32 : 0) + 48 + 24, "libx.so.1",
						    note_path, &f), -1);
		ck_assert_int_eq(bot_doctor_ldcache(b, len - 17, "libx.so.1", note_path, &f), 1);
	}
	ck_assert_int_eq(bot_doctor_ldcache((const uint8_t *)"not a cache", 11, "libc.so.6",
					    note_path, &f), -1);
	/* hostile: 100,000 entries whose strings point into 4 MiB without a
	 * NUL; each string is looked at for PATH_MAX bytes at most (unbounded,
	 * this took minutes and met the test's timeout) */
	{
		static uint8_t h[(4 << 20) + 48 + 100000 * 24];
		uint32_t n = 100000, at = 48 + n * 24;

		memcpy(h, "glibc-ld.so.cache1.1", 20);
		memcpy(h + 20, &n, 4);
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *e = h + 48 + (size_t)i * 24;

			memcpy(e + 4, &at, 4);
			memcpy(e + 8, &at, 4);
		}
		memset(h + at, 'A', sizeof(h) - at);
		ck_assert_int_eq(bot_doctor_ldcache(h, sizeof(h), "libx.so.1", note_path, &f), 0);
	}
	/* the host's: libc.so.6 is there (glibc's own cache, where there is one) */
	{
		FILE *c = fopen("/etc/ld.so.cache", "rb");
		static uint8_t host[16 << 20];

		if (c) {
			len = fread(host, 1, sizeof(host), c);
			fclose(c);
			memset(&f, 0, sizeof(f));
			ck_assert_int_ge(bot_doctor_ldcache(host, len, "libc.so.6", note_path, &f), 1);
			ck_assert_msg(strstr(f.paths[0], "/libc.so.6") != NULL, "%s", f.paths[0]);
		}
	}
}
END_TEST

/* The plugin's map from the site configuration (config=) or fabric_map=
 * (bot_fabricmap_load_site): the same lookups as the text map, both at
 * once refused, a configuration without a map giving none. */
START_TEST(test_fabricmap_site)
{
	static const char conf[] = "version: 2\nfabric_map:\n  a:\n    nodes: n[1-2]\n"
				   "    partitions: [debug]\n  b:\n    nodes: [n3, n4]\n";
	static const char plain[] = "version: 1\nstate_dir: /srv/state\n";
	static const char text[] = "n1 c\n";
	char dir[128], cpath[BOT_TEST_PATH_MAX], ppath[BOT_TEST_PATH_MAX],
	     tpath[BOT_TEST_PATH_MAX], bpath[BOT_TEST_PATH_MAX], err[PATH_MAX + 512];
	struct bot_fabricmap m;
	struct bot_fabricmap_step st;

	bot_test_mkdtemp(dir, sizeof(dir), "fmsite");
	bot_test_write(dir, "site.yaml", conf, strlen(conf));
	bot_test_write(dir, "plain.yaml", plain, strlen(plain));
	bot_test_write(dir, "text.map", text, strlen(text));
	bot_test_write(dir, "bad.yaml", "version: 2\nfabric_map: [x]\n", 27);
	bot_test_path(cpath, dir, "site.yaml");
	bot_test_path(ppath, dir, "plain.yaml");
	bot_test_path(tpath, dir, "text.map");
	bot_test_path(bpath, dir, "bad.yaml");

	/* config= alone: its map, nodes and partitions */
	ck_assert_msg(bot_fabricmap_load_site("", cpath, &m, err, sizeof(err)) == 1, "%s", err);
	ck_assert_uint_eq(m.n, 5);
	ck_assert_str_eq(bot_fabricmap_lookup(&m, "n2"), "a");
	ck_assert_str_eq(bot_fabricmap_lookup(&m, "n4"), "b");
	ck_assert_ptr_null(bot_fabricmap_lookup(&m, "debug"));
	memset(&st, 0, sizeof(st));
	bot_fabricmap_step_add(&m, &st, "n1");
	bot_fabricmap_step_add(&m, &st, "n2");
	ck_assert_int_eq(st.state, 1);
	ck_assert_str_eq(st.fabric, "a");
	bot_fabricmap_step_add(&m, &st, "n3");
	ck_assert_int_eq(st.state, -1);
	ck_assert_str_eq(st.why, "the step's nodes span fabrics a and b");
	bot_fabricmap_partitions(&m, "debug", &st);
	ck_assert(st.state == 1 && !strcmp(st.fabric, "a"));
	bot_fabricmap_free(&m);
	/* both: refused, naming both files and the map's line */
	ck_assert_int_eq(bot_fabricmap_load_site(tpath, cpath, &m, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "two fabric maps: fabric_map=") && strstr(err, "text.map") &&
		      strstr(err, "site.yaml (line 2)"), "%s", err);
	ck_assert_uint_eq(m.n, 0);
	/* a configuration without a map: fabric_map= alone, or no map at all */
	ck_assert_msg(bot_fabricmap_load_site(tpath, ppath, &m, err, sizeof(err)) == 1, "%s", err);
	ck_assert_str_eq(bot_fabricmap_lookup(&m, "n1"), "c");
	bot_fabricmap_free(&m);
	ck_assert_int_eq(bot_fabricmap_load_site("", ppath, &m, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_fabricmap_load_site(NULL, NULL, &m, err, sizeof(err)), 0);
	ck_assert_uint_eq(m.n, 0);
	/* a configuration that cannot be read gives no map here (the
	 * decision's reader reports it); a text map still loads */
	ck_assert_int_eq(bot_fabricmap_load_site("", bpath, &m, err, sizeof(err)), 0);
	ck_assert_msg(bot_fabricmap_load_site(tpath, bpath, &m, err, sizeof(err)) == 1, "%s", err);
	bot_fabricmap_free(&m);
	bot_test_rmtree(dir);
}
END_TEST

/*
 * srun's summary and the fabric's state (spank/reportstate.h, formats.md
 * 17): a step that ran only tree/simple (120 us) in a context where NCCL's
 * row made AUTO's ring/simple 96 us; the fabric measured ring at 150 us.
 * The bounded reader hands back each arm's median bin: the line saves.
 */
/* A child that writes n bytes (n in arg) then exits 0. */
static void write_n(int fd, void *arg)
{
	size_t n = *(size_t *)arg, off = 0;
	char b[4096];

	memset(b, 'x', sizeof(b));
	while (off < n) {
		ssize_t w = write(fd, b, n - off < sizeof(b) ? n - off : sizeof(b));

		if (w <= 0)
			_exit(3);
		off += (size_t)w;
	}
	_exit(0);
}

/* childread: exactly max bytes is an answer, max + 1 is not, and an empty
 * answer is one even with max 0. */
START_TEST(test_childread_bounds)
{
	struct bot_spank_childread r;
	char why[256];
	size_t sizes[] = { 0, 1, 65536, 65537, 200000 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];

		ck_assert_int_eq(bot_spank_childread(write_n, &n, 20000, n, &r, why, sizeof(why)), 0);
		ck_assert_uint_eq(r.len, n);
		ck_assert(r.exited && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0);
		free(r.buf);
		if (!n)
			continue;
		ck_assert_int_eq(bot_spank_childread(write_n, &n, 20000, n - 1, &r, why,
						     sizeof(why)), -1);
		ck_assert_ptr_null(r.buf);
		ck_assert_ptr_nonnull(strstr(why, "over"));
	}
}
END_TEST

/* A child that says its pid, closes the pipe and lives on. */
static void close_and_stay(int fd, void *arg)
{
	pid_t me = getpid();

	(void)arg;
	if (write(fd, &me, sizeof(me)) != (ssize_t)sizeof(me))
		_exit(3);
	close(fd);
	for (;;)
		pause();
}

/* childread: a child that closed the pipe but does not exit is not left
 * running; its answer stands, its exit is not reported as seen. */
START_TEST(test_childread_no_orphan)
{
	struct bot_spank_childread r;
	char why[256];
	pid_t pid;

	ck_assert_int_eq(bot_spank_childread(close_and_stay, NULL, 20000, 64, &r, why,
					     sizeof(why)), 0);
	ck_assert_uint_eq(r.len, sizeof(pid));
	memcpy(&pid, r.buf, sizeof(pid));
	free(r.buf);
	ck_assert(!r.exited);
	if (kill(pid, 0) == 0) {
		/* killed but not yet reaped (a loaded machine) is not running:
		 * /proc/PID/stat's state is Z */
		char path[64], st[256] = "", *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if ((f = fopen(path, "r"))) {
			if (!fgets(st, sizeof(st), f))
				st[0] = 0;
			fclose(f);
		}
		p = strrchr(st, ')');
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ck_assert_msg(p && p[1] == ' ' && p[2] == 'Z', "the child %d was left running",
			      (int)pid);
	} else {
		ck_assert_int_eq(errno, ESRCH);
	}
}
END_TEST

START_TEST(test_report_state)
{
	char dir[128], snap[BOT_STATE_NAME_MAX], err[BOT_STATE_ERR_MAX], why[512], line[600];
	uint64_t key = bot_ctx_key(BOT_COLL_ALLGATHER, 84, 8, 2);
	struct bot_state s, st;
	struct bot_report_part m;
	struct bot_report_ctx *c;
	struct bot_report_row r;
	const char *names[1];
	const struct bot_kb *kbs[1];
	struct bot_report_states states = { 1, names, kbs };
	struct bot_report_lookup lk = { bot_report_state_arms, &states };

	bot_test_mkdtemp(dir, sizeof(dir), "repstate");
	ck_assert_int_eq(bot_state_init(&s, "f"), 0);
	for (int i = 0; i < 5; i++) {
		ck_assert_int_eq(bot_kb_add_us(s.kb, key, 5 /* ring/simple */, 150), 0);
		ck_assert_int_eq(bot_kb_add_us(s.kb, key, 2 /* tree/simple */, 120), 0);
	}
	ck_assert_int_eq(bot_kb_add_us(s.kb, key + 1, 5, 10), 0);	/* not the step's */
	ck_assert_msg(bot_store_publish(dir, &s, snap, err, sizeof(err)) == 0, "%s", err);
	bot_state_free(&s);

	bot_report_part_init(&m);
	snprintf(m.job, sizeof(m.job), "7");
	snprintf(m.step, sizeof(m.step), "0");
	snprintf(m.fabric, sizeof(m.fabric), "f");
	m.nparts = 1;
	m.nctx = 1;
	m.ctx = c = calloc(1, sizeof(*c));
	ck_assert_ptr_nonnull(c);
	c->coll = BOT_COLL_ALLGATHER;
	c->bucket = 84;
	c->nranks = 8;
	c->nnodes = 2;
	c->calls = c->src_calls = c->dcalls[2] = 500;
	c->auto_arm = 5;
	c->decided = 2;
	c->has_cost = 1;
	for (int i = 0; i < BOT_REPORT_NARMS; i++)
		c->cost[i] = -1;
	c->cost[2] = 10;
	c->cost[5] = 8;
	c->arm[2] = (struct bot_report_arm){ 6, 110000, 120000 };
	bot_report_summary(&m, "7.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "est. lost ~"), "%s", line);

	ck_assert_msg(bot_spank_report_state(dir, "f", 5000, &m, &st, why, sizeof(why)) == 0, "%s",
		      why);
	ck_assert_str_eq(st.fabric, "f");
	ck_assert_uint_eq(bot_kb_count(st.kb), 1);	/* the step's context only */
	ck_assert_uint_eq(bot_kb_find(st.kb, key)->arm[5].n, 1);	/* its median bin */
	names[0] = st.fabric;
	kbs[0] = st.kb;
	m.lookup = &lk;
	bot_report_row(&m, c, &r);
	ck_assert_int_eq(r.src[5], BOT_REPORT_SRC_STATE);
	ck_assert_msg(fabs(r.t[5] - 150e-6) < 2e-6, "%g", r.t[5]);
	ck_assert(r.saved > 0 && r.lost == 0 && !r.harmed);
	bot_report_summary(&m, "7.0", "/r", line, sizeof(line));
	ck_assert_msg(strstr(line, "est. saved ~") && strstr(line, "0 contexts lost"), "%s", line);
	bot_state_free(&st);

	/* the fallbacks: a reason, never a failure of the step */
	ck_assert_int_eq(bot_spank_report_state(dir, "g", 5000, &m, &st, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "no learned state"), "%s", why);
	ck_assert_int_eq(bot_spank_report_state(dir, "prior", 5000, &m, &st, why, sizeof(why)), -1);
	ck_assert_int_eq(bot_spank_report_state("", "f", 5000, &m, &st, why, sizeof(why)), -1);
	/* the bound passed: each reader killed and reaped, no zombie left in
	 * srun (it has no other children here) */
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(bot_spank_report_state(dir, "f", 0, &m, &st, why, sizeof(why)),
				 -1);
	ck_assert_msg(strstr(why, "took over 0 ms"), "%s", why);
	errno = 0;
	ck_assert_int_eq(waitpid(-1, NULL, WNOHANG), -1);
	ck_assert_int_eq(errno, ECHILD);
	{
		/* SIGCHLD ignored (a launcher may): the reader's exit status is
		 * never seen, so its answer is not taken as a success */
		void (*was)(int) = signal(SIGCHLD, SIG_IGN);

		ck_assert_int_eq(bot_spank_report_state(dir, "f", 5000, &m, &st, why, sizeof(why)),
				 -1);
		ck_assert_msg(strstr(why, "exit was not seen"), "%s", why);
		signal(SIGCHLD, was);
	}
	{
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/f/current", dir);
		ck_assert_int_eq(unlink(path), 0);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fputs("garbage\n", f);
		fclose(f);
	}
	ck_assert_int_eq(bot_spank_report_state(dir, "f", 5000, &m, &st, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "cannot be read"), "%s", why);
	bot_report_part_free(&m);
	bot_test_rmtree(dir);
}
END_TEST

static Suite *spank_suite(void)
{
	Suite *s = suite_create("spank_args");
	TCase *tc = tcase_create("args");

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_values);
	tcase_add_test(tc, test_errors_name_the_argument);
	tcase_add_test(tc, test_option);
	tcase_add_test(tc, test_gate);
	tcase_add_test(tc, test_gpus);
	tcase_add_test(tc, test_build);
	tcase_add_test(tc, test_fabricmap);
	tcase_add_test(tc, test_ldcache);
	tcase_add_test(tc, test_submit);
	tcase_add_test(tc, test_fabricmap_site);
	tcase_add_test(tc, test_report_state);
	tcase_add_test(tc, test_childread_bounds);
	tcase_add_test(tc, test_childread_no_orphan);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(spank_suite)
