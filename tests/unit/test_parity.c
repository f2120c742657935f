/*
 * test_parity.c - every spelling of a setting means the same at the ranks
 * and in the tools (doc/formats.md section 11).
 *
 * For each spelling of each setting that both sides take (policy, seed,
 * size threshold, allow-list), two independent runs:
 *  - ranks: a fresh child process sets only NCCL_BOT_<X> (no step table),
 *    loads the BUILT libnccl-tuner-bot.so as NCCL does and opens a tuner
 *    v5 context; the verdict comes from what the library logs: a WARN
 *    naming the variable (refused, default used) and the init line's
 *    effective policy, seed, allowed arms and threshold;
 *  - tools: the BUILT `nccl-bot env --prior-only --<opt> <spelling>`; exit
 *    2 is refused, exit 0 prints the step table, decoded here.
 * Both must refuse, or both must accept with the same value. The empty
 * string is left out on purpose: an empty variable is an unset one
 * (formats.md section 11), while an empty option value is a usage error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/table.h"
#include "policies/context.h"
#include "tests/emulator/nccl_abi.h"
#include "tests/unit/testutil.h"

#ifndef BOT_TUNER_SO
#error "BOT_TUNER_SO must name the built library"
#endif
#ifndef BOT_NCCL_BOT
#error "BOT_NCCL_BOT must name the built nccl-bot"
#endif

/* What one side made of a spelling. */
struct verdict {
	int accepted;
	int policy;
	uint64_t seed;
	unsigned min_log2;
	uint32_t allowed;	/* arms forced without AUTO's say: Ring/Tree/PAT + allow-list */
};

/* Ring, Tree and PAT (every protocol): always allowed (policies/plan.h). */
static uint32_t static_arms(void)
{
	uint32_t m = 0;

	for (int p = 0; p < BOT_NPROTO; p++)
		m |= 1u << bot_arm(BOT_ALGO_RING, p) | 1u << bot_arm(BOT_ALGO_TREE, p) |
		     1u << bot_arm(BOT_ALGO_PAT, p);
	return m;
}

/* ---- ranks ------------------------------------------------------------------- */

static const char *child_var;
static int child_warned;
static char child_init[2048];

static void child_log(int level, unsigned long flags, const char *file, int line,
		      const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level == EMU_LOG_WARN && strstr(msg, child_var))
		child_warned = 1;
	if (strstr(msg, "(from the environment)"))
		snprintf(child_init, sizeof(child_init), "%s", msg);
}

static const char *const bot_vars[] = {
	"NCCL_BOT_TABLE", "NCCL_BOT_POLICY", "NCCL_BOT_SEED", "NCCL_BOT_MIN_BYTES",
	"NCCL_BOT_ALLOW", "NCCL_BOT_SPOOL", "NCCL_BOT_WINDOW", "NCCL_BOT_DEBUG",
	"NCCL_BOT_MEASURE_V4", "NCCL_ALGO", "NCCL_PROTO",
};

/* In the child: load the library, open one context, report. */
static void child_run(const char *var, const char *val, int fd)
{
	struct verdict v = { 0 };
	const struct emu_tuner_v5 *t;
	char name[64], *p;
	unsigned long long seed;
	unsigned allowed, k;
	void *so, *ctx = NULL;

	for (size_t i = 0; i < sizeof(bot_vars) / sizeof(bot_vars[0]); i++)
		unsetenv(bot_vars[i]);
	setenv(var, val, 1);
	child_var = var;
	so = dlopen(BOT_TUNER_SO, RTLD_NOW | RTLD_LOCAL);
	t = so ? dlsym(so, "ncclTunerPlugin_v5") : NULL;
	if (!t || t->init(&ctx, 0x1234, 8, 2, child_log, NULL, NULL) != EMU_NCCL_SUCCESS)
		_exit(3);
	p = strstr(child_init, "policy ");
	if (!p || sscanf(p, "policy %63s (from the environment), seed 0x%llx, allowed arms 0x%x",
			 name, &seed, &allowed) != 3)
		_exit(4);
	p = strstr(child_init, "min bytes 2^");
	if (!p || sscanf(p, "min bytes 2^%u", &k) != 1)
		_exit(5);
	v.accepted = !child_warned;
	v.policy = bot_policy_parse(name);
	v.seed = seed;
	v.min_log2 = k;
	v.allowed = allowed;
	t->finalize(ctx);
	if (write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		_exit(6);
	_exit(0);
}

static void ranks(const char *var, const char *val, struct verdict *v)
{
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(fds[0]);
		child_run(var, val, fds[1]);
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], v, sizeof(*v)), (ssize_t)sizeof(*v));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s='%s': child status %d",
		      var, val, status);
}

/* ---- tools ------------------------------------------------------------------- */

static struct bot_table table;

static void tools(const char *opt, const char *val, struct verdict *v)
{
	static char out[BOT_TABLE_MAX_TEXT * 2];
	char *args[] = { BOT_NCCL_BOT, "env", "--prior-only", "--lib", BOT_TUNER_SO, (char *)opt,
			 (char *)val, NULL };
	size_t n = 0;
	ssize_t r;
	int fds[2], status, devnull;
	char *p, *end;
	pid_t pid;

	memset(v, 0, sizeof(*v));
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		dup2(fds[1], 1);
		dup2(devnull, 2);
		close(fds[0]);
		for (size_t i = 0; i < sizeof(bot_vars) / sizeof(bot_vars[0]); i++)
			unsetenv(bot_vars[i]);
		unsetenv("NCCL_TUNER_PLUGIN");
		unsetenv("NCCL_PROFILER_PLUGIN");
		execv(args[0], args);
		_exit(127);
	}
	close(fds[1]);
	while ((r = read(fds[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "nccl-bot env %s '%s' died", opt, val);
	if (WEXITSTATUS(status) == 2)
		return;		/* refused: a usage error naming the option */
	ck_assert_msg(WEXITSTATUS(status) == 0, "nccl-bot env %s '%s': exit %d", opt, val,
		      WEXITSTATUS(status));
	p = strstr(out, "export NCCL_BOT_TABLE='");
	ck_assert_ptr_nonnull(p);
	p += strlen("export NCCL_BOT_TABLE='");
	end = strchr(p, '\'');
	ck_assert_ptr_nonnull(end);
	ck_assert_int_eq(bot_table_decode(p, (size_t)(end - p), &table), BOT_TABLE_OK);
	v->accepted = 1;
	v->policy = table.policy;
	v->seed = table.seed;
	v->min_log2 = table.min_bytes_log2;
	v->allowed = table.allow | static_arms();
}

/* ---- the spellings ----------------------------------------------------------- */

static void same(const char *var, const char *opt, const char *const *vals)
{
	for (const char *const *s = vals; *s; s++) {
		struct verdict r, t;

		ranks(var, *s, &r);
		tools(opt, *s, &t);
		ck_assert_msg(r.accepted == t.accepted, "'%s': ranks %s it, tools %s it", *s,
			      r.accepted ? "accept" : "refuse", t.accepted ? "accept" : "refuse");
		if (!r.accepted)
			continue;
		ck_assert_msg(r.policy == t.policy && r.seed == t.seed && r.min_log2 == t.min_log2 &&
				      r.allowed == t.allowed,
			      "%s='%s': ranks policy %d seed %" PRIu64 " 2^%u arms %06x; tools policy "
			      "%d seed %" PRIu64 " 2^%u arms %06x", var, *s, r.policy, r.seed,
			      r.min_log2, r.allowed, t.policy, t.seed, t.min_log2, t.allowed);
	}
}

START_TEST(test_policy)
{
	static const char *const v[] = {
		"thompson", "THOMPSON", "thompson_cold", "Thompson-Cold", "sweep", "shadow",
		"auto", "ucb1", "greedy-cold", "thompsoncold", " auto", "auto ", "bogus", "1",
		NULL,
	};

	same("NCCL_BOT_POLICY", "--policy", v);
}
END_TEST

START_TEST(test_seed)
{
	static const char *const v[] = {
		"0", "7", "42", "18446744073709551615", "18446744073709551616", " -1", "-1", "+7",
		"010", "00", "0x10", "0XfF", "0x00ff", "0xffffffffffffffff", "0x10000000000000000",
		"0x", "0x1g", "1e3", " 7", "7 ", "7\t", NULL,
	};

	same("NCCL_BOT_SEED", "--seed", v);
}
END_TEST

START_TEST(test_min_bytes)
{
	static const char *const v[] = {
		"1048576", "1MiB", "64KiB", "2GiB", "1TiB", "0", "1", "3", "1048577",
		"9223372036854775808", "9223372036854775809", "8388608TiB", "1M", "1 MiB", "1mib",
		"010", "0x100000", "+1", "-1", "1.5MiB", "MiB", NULL,
	};

	same("NCCL_BOT_MIN_BYTES", "--min-bytes", v);
}
END_TEST

START_TEST(test_allow)
{
	static const char *const v[] = {
		"all", "ALL", "none", "nvls", "NVLS", "nvls/simple", "NVLS_TREE/LL128",
		"nvls-tree/ll", "collnet_direct,nvls", "collnet_chain/simple,ring",
		"nvls,", ",nvls", "nvls,,tree", "all,nvls", "none,tree", "n-v-l-s", "nvlstree",
		"nvls_", "nvls, tree", "bogus", "tree/simple/ll", "nvls/", "/", NULL,
	};

	same("NCCL_BOT_ALLOW", "--allow", v);
}
END_TEST

static Suite *parity_suite(void)
{
	Suite *s = suite_create("parity");
	TCase *tc = tcase_create("ranks-vs-tools");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_seed);
	tcase_add_test(tc, test_min_bytes);
	tcase_add_test(tc, test_allow);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(parity_suite)
