/*
 * test_settings.c - the grammar of settings (common/settings.h,
 * doc/formats.md section 11): every kind, accepted and refused spellings,
 * and the environment table the ranks read.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "policies/context.h"
#include "tests/unit/testutil.h"

START_TEST(test_numbers)
{
	static const struct {
		const char *s;
		int hex, rc;
		uint64_t v;
	} cases[] = {
		{ "0", 0, BOT_SET_OK, 0 },
		{ "7", 0, BOT_SET_OK, 7 },
		{ "18446744073709551615", 0, BOT_SET_OK, UINT64_MAX },
		{ "18446744073709551616", 0, BOT_SET_ERANGE, 0 },
		{ "", 0, BOT_SET_EEMPTY, 0 },
		{ " 7", 0, BOT_SET_ESYNTAX, 0 },
		{ "7 ", 0, BOT_SET_ESYNTAX, 0 },
		{ " -1", 0, BOT_SET_ESYNTAX, 0 },
		{ "-1", 0, BOT_SET_ESYNTAX, 0 },
		{ "+7", 0, BOT_SET_ESYNTAX, 0 },
		{ "010", 0, BOT_SET_EZERO, 0 },
		{ "00", 0, BOT_SET_EZERO, 0 },
		{ "1e3", 0, BOT_SET_ESYNTAX, 0 },
		{ "0x10", 0, BOT_SET_ESYNTAX, 0 },
		{ "0x10", 1, BOT_SET_OK, 16 },
		{ "0XfF", 1, BOT_SET_OK, 255 },
		{ "0x00ff", 1, BOT_SET_OK, 255 },
		{ "0xffffffffffffffff", 1, BOT_SET_OK, UINT64_MAX },
		{ "0x0000000000000000ff", 1, BOT_SET_OK, 255 },
		{ "0x1ffffffffffffffff", 1, BOT_SET_ERANGE, 0 },
		{ "0x", 1, BOT_SET_ESYNTAX, 0 },
		{ "0x1g", 1, BOT_SET_ESYNTAX, 0 },
		{ "0x 1", 1, BOT_SET_ESYNTAX, 0 },
		{ "010", 1, BOT_SET_EZERO, 0 },
		{ "12", 1, BOT_SET_OK, 12 },
	};

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t v = 12345;
		int rc = bot_set_u64(cases[i].s, cases[i].hex, &v);

		ck_assert_msg(rc == cases[i].rc, "'%s' hex=%d: rc %d, want %d", cases[i].s,
			      cases[i].hex, rc, cases[i].rc);
		if (rc == BOT_SET_OK)
			ck_assert_msg(v == cases[i].v, "'%s': %llu", cases[i].s,
				      (unsigned long long)v);
		else
			ck_assert_msg(v == 12345, "'%s': output written on error", cases[i].s);
	}
}
END_TEST

START_TEST(test_range)
{
	uint64_t v;

	ck_assert_int_eq(bot_set_range("16", 16, 64, &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 16);
	ck_assert_int_eq(bot_set_range("64", 16, 64, &v), BOT_SET_OK);
	ck_assert_int_eq(bot_set_range("15", 16, 64, &v), BOT_SET_ERANGE);
	ck_assert_int_eq(bot_set_range("65", 16, 64, &v), BOT_SET_ERANGE);
	ck_assert_int_eq(bot_set_range("0x20", 16, 64, &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_range("032", 16, 64, &v), BOT_SET_EZERO);
}
END_TEST

START_TEST(test_bytes_and_threshold)
{
	uint64_t v;
	unsigned k;
	int rounded;

	ck_assert_int_eq(bot_set_bytes("1048576", &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 1048576);
	ck_assert_int_eq(bot_set_bytes("1MiB", &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 1048576);
	ck_assert_int_eq(bot_set_bytes("64KiB", &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 65536);
	ck_assert_int_eq(bot_set_bytes("2GiB", &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 2ULL << 30);
	ck_assert_int_eq(bot_set_bytes("8388608TiB", &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 1ULL << 63);
	ck_assert_int_eq(bot_set_bytes("8388609TiB", &v), BOT_SET_ERANGE);
	ck_assert_int_eq(bot_set_bytes("9223372036854775808", &v), BOT_SET_OK);
	ck_assert_int_eq(bot_set_bytes("9223372036854775809", &v), BOT_SET_ERANGE);
	ck_assert_int_eq(bot_set_bytes("0", &v), BOT_SET_OK);
	ck_assert_uint_eq(v, 0);
	ck_assert_int_eq(bot_set_bytes("1 MiB", &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_bytes("1M", &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_bytes("1mib", &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_bytes("1.5MiB", &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_bytes("MiB", &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_bytes("01MiB", &v), BOT_SET_EZERO);
	ck_assert_int_eq(bot_set_bytes("010", &v), BOT_SET_EZERO);
	ck_assert_int_eq(bot_set_bytes("", &v), BOT_SET_EEMPTY);

	ck_assert_int_eq(bot_set_threshold("1048576", &k, &rounded), BOT_SET_OK);
	ck_assert_uint_eq(k, 20);
	ck_assert_int_eq(rounded, 0);
	ck_assert_int_eq(bot_set_threshold("1048577", &k, &rounded), BOT_SET_OK);
	ck_assert_uint_eq(k, 21);
	ck_assert_int_eq(rounded, 1);
	ck_assert_int_eq(bot_set_threshold("0", &k, &rounded), BOT_SET_OK);
	ck_assert_uint_eq(k, 0);
	ck_assert_int_eq(rounded, 0);
	ck_assert_int_eq(bot_set_threshold("1", &k, &rounded), BOT_SET_OK);
	ck_assert_uint_eq(k, 0);
	ck_assert_int_eq(bot_set_threshold("10", &k, NULL), BOT_SET_OK);
	ck_assert_uint_eq(k, 4);
	ck_assert_int_eq(bot_set_threshold("9223372036854775808", &k, NULL), BOT_SET_OK);
	ck_assert_uint_eq(k, 63);
	ck_assert_int_eq(bot_set_threshold("010", &k, NULL), BOT_SET_EZERO);
}
END_TEST

START_TEST(test_policy)
{
	int id = -7;

	ck_assert_int_eq(bot_set_policy("thompson", &id), BOT_SET_OK);
	ck_assert_int_eq(id, BOT_POLICY_THOMPSON);
	ck_assert_int_eq(bot_set_policy("Thompson_Cold", &id), BOT_SET_OK);
	ck_assert_int_eq(id, BOT_POLICY_THOMPSON_COLD);
	ck_assert_int_eq(bot_set_policy("SHADOW", &id), BOT_SET_OK);
	ck_assert_int_eq(id, BOT_POLICY_SHADOW);
	ck_assert_int_eq(bot_set_policy("thompsoncold", &id), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_policy(" auto", &id), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_policy("", &id), BOT_SET_EEMPTY);
	for (int i = 0; i < BOT_NPOLICY; i++) {
		ck_assert_int_eq(bot_set_policy(bot_policy_name(i), &id), BOT_SET_OK);
		ck_assert_int_eq(id, i);
	}
	ck_assert_ptr_null(bot_policy_name(BOT_NPOLICY));
}
END_TEST

START_TEST(test_allow)
{
	uint32_t a = 0;
	size_t bad = 99;
	const uint32_t nvls = 7u << (3 * BOT_ALGO_NVLS);

	ck_assert_int_eq(bot_set_allow("all", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, (1u << BOT_NARMS) - 1);
	ck_assert_int_eq(bot_set_allow("none", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, 0);
	ck_assert_int_eq(bot_set_allow("nvls", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, nvls);
	ck_assert_int_eq(bot_set_allow("NVLS/Simple,collnet_direct", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, (1u << bot_arm(BOT_ALGO_NVLS, BOT_PROTO_SIMPLE)) |
				     (7u << (3 * BOT_ALGO_COLLNET_DIRECT)));
	ck_assert_int_eq(bot_set_allow("nvls_tree/ll128", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, 1u << bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL128));

	a = 12345;
	ck_assert_int_eq(bot_set_allow("nvls,", &a, &bad), BOT_SET_ELIST);
	ck_assert_uint_eq(bad, 5);
	ck_assert_int_eq(bot_set_allow(",nvls", &a, &bad), BOT_SET_ELIST);
	ck_assert_uint_eq(bad, 0);
	ck_assert_int_eq(bot_set_allow("nvls,all", &a, &bad), BOT_SET_ELIST);
	ck_assert_uint_eq(bad, 5);
	ck_assert_int_eq(bot_set_allow("none,tree", &a, &bad), BOT_SET_ELIST);
	ck_assert_int_eq(bot_set_allow("nvls, tree", &a, &bad), BOT_SET_ESYNTAX);
	ck_assert_uint_eq(bad, 5);
	ck_assert_int_eq(bot_set_allow("tree,bogus", &a, &bad), BOT_SET_ENAME);
	ck_assert_uint_eq(bad, 5);
	ck_assert_int_eq(bot_set_allow("nvls/fast", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("/simple", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("", &a, &bad), BOT_SET_EEMPTY);
	/* names are strict: any case and '-' for '_', nothing dropped */
	ck_assert_int_eq(bot_set_allow("n-v-l-s", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("--nvls", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("nvlstree", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("nvls_", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("ring/l-l128", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("nvls/", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("/", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("tree/simple/ll", &a, &bad), BOT_SET_ENAME);
	ck_assert_int_eq(bot_set_allow("nvls,ALL", &a, &bad), BOT_SET_ELIST);
	ck_assert_uint_eq(a, 12345);
	ck_assert_int_eq(bot_set_allow("NVLS-TREE/LL128", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, 1u << bot_arm(BOT_ALGO_NVLS_TREE, BOT_PROTO_LL128));
	ck_assert_int_eq(bot_set_allow("ALL", &a, &bad), BOT_SET_OK);
	ck_assert_uint_eq(a, (1u << BOT_NARMS) - 1);
}
END_TEST

/* bot_set_allow_format writes what bot_set_allow reads back to the same
 * mask: none, all, whole algorithms by name, single arms by arm name. */
START_TEST(test_allow_format)
{
	static const char *const lists[] = { "none", "all", "nvls", "ring/ll,nvls",
					     "collnet_direct,collnet_chain,nvls,nvls_tree",
					     "tree/ll128,ring/simple" };
	char buf[256];

	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		uint32_t a, b;

		ck_assert_int_eq(bot_set_allow(lists[i], &a, NULL), BOT_SET_OK);
		bot_set_allow_format(a, buf, sizeof(buf));
		ck_assert_str_eq(buf, lists[i]);
		ck_assert_int_eq(bot_set_allow(buf, &b, NULL), BOT_SET_OK);
		ck_assert_uint_eq(a, b);
	}
}
END_TEST

START_TEST(test_bool)
{
	int v = 7;

	ck_assert_int_eq(bot_set_bool("1", &v), BOT_SET_OK);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(bot_set_bool("0", &v), BOT_SET_OK);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(bot_set_bool("yes", &v), BOT_SET_ESYNTAX);
	ck_assert_int_eq(bot_set_bool(" 1", &v), BOT_SET_ESYNTAX);
	/* a number, but not 0 or 1: said as such (a "character the grammar
	 * does not allow" until 2026-12-04) */
	ck_assert_int_eq(bot_set_bool("01", &v), BOT_SET_EZERO);
	ck_assert_int_eq(bot_set_bool("2", &v), BOT_SET_ERANGE);
	ck_assert_int_eq(bot_set_bool("10", &v), BOT_SET_ERANGE);
	ck_assert_int_eq(bot_set_bool("", &v), BOT_SET_EEMPTY);
}
END_TEST

/* a fake environment for bot_env_read */
static const char *const *fake_env;

static const char *fake_get(const char *name)
{
	for (const char *const *p = fake_env; p && *p; p += 2)
		if (!strcmp(p[0], name))
			return p[1];
	return NULL;
}

START_TEST(test_env)
{
	static const char *const good[] = {
		"NCCL_BOT_POLICY", "ucb1", "NCCL_BOT_SEED", "0x2a", "NCCL_BOT_MIN_BYTES", "64KiB",
		"NCCL_BOT_ALLOW", "all", "NCCL_BOT_WINDOW", "16", "NCCL_BOT_DEBUG", "1",
		"NCCL_BOT_MEASURE_V4", "1", NULL,
	};
	static const char *const bad[] = {
		"NCCL_BOT_POLICY", "fastest", "NCCL_BOT_SEED", "+7", "NCCL_BOT_MIN_BYTES", "010",
		"NCCL_BOT_ALLOW", "nvls,", "NCCL_BOT_WINDOW", "8", "NCCL_BOT_DEBUG", "yes",
		"NCCL_BOT_MEASURE_V4", "", NULL,
	};
	struct bot_env e;
	char msg[512];

	fake_env = NULL;
	bot_env_read(&e, fake_get);
	ck_assert_int_eq(e.policy, BOT_POLICY_AUTO);
	ck_assert_uint_eq(e.seed, 0);
	ck_assert_uint_eq(e.min_bytes_log2, 20);
	ck_assert_uint_eq(e.allow, 0);
	ck_assert_uint_eq(e.window, 32);
	ck_assert_int_eq(e.debug, 0);
	ck_assert_uint_eq(e.set, 0);
	ck_assert_uint_eq(e.bad, 0);

	fake_env = good;
	bot_env_read(&e, fake_get);
	ck_assert_int_eq(e.policy, BOT_POLICY_UCB1);
	ck_assert_uint_eq(e.seed, 42);
	ck_assert_uint_eq(e.min_bytes_log2, 16);
	ck_assert_uint_eq(e.allow, (1u << BOT_NARMS) - 1);
	ck_assert_uint_eq(e.window, 16);
	ck_assert_int_eq(e.debug, 1);
	ck_assert_int_eq(e.measure_v4, 1);
	ck_assert_uint_eq(e.set, (1u << BOT_ENV_COUNT) - 1);
	ck_assert_uint_eq(e.bad, 0);

	fake_env = bad;
	bot_env_read(&e, fake_get);
	/* every refused value takes its default; an empty one is unset */
	ck_assert_int_eq(e.policy, BOT_POLICY_AUTO);
	ck_assert_uint_eq(e.seed, 0);
	ck_assert_uint_eq(e.min_bytes_log2, 20);
	ck_assert_uint_eq(e.allow, 0);
	ck_assert_uint_eq(e.window, 32);
	ck_assert_int_eq(e.debug, 0);
	ck_assert_int_eq(e.measure_v4, 0);
	ck_assert_uint_eq(e.bad, ((1u << BOT_ENV_COUNT) - 1) & ~(1u << BOT_ENV_MEASURE_V4));
	ck_assert_uint_eq(e.set & (1u << BOT_ENV_MEASURE_V4), 0);
	ck_assert_int_eq(e.err[BOT_ENV_MIN_BYTES], BOT_SET_EZERO);
	bot_env_explain(&e, BOT_ENV_SEED, "+7", msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "NCCL_BOT_SEED='+7'") && strstr(msg, "default (0)"), "%s", msg);
	bot_env_explain(&e, BOT_ENV_WINDOW, "8", msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "16 to 64") && strstr(msg, "out of range"), "%s", msg);
	bot_env_explain(&e, BOT_ENV_MIN_BYTES, "010", msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "octal"), "%s", msg);
	/* what goes into NCCL's log is printable and bounded */
	bot_env_explain(&e, BOT_ENV_POLICY, "a\nb\033c", msg, sizeof(msg));
	ck_assert_msg(strstr(msg, "'a?b?c'"), "%s", msg);
	{
		/* 92 characters are shown whole; 93 are cut, with "..." (a
		 * whole 92 had "..." too until 2026-12-04) */
		char v[94], want[100];

		memset(v, 'x', 93);
		v[92] = 0;
		bot_env_explain(&e, BOT_ENV_POLICY, v, msg, sizeof(msg));
		snprintf(want, sizeof(want), "'%s'", v);
		ck_assert_msg(strstr(msg, want), "%s", msg);
		v[92] = 'x';
		v[93] = 0;
		bot_env_explain(&e, BOT_ENV_POLICY, v, msg, sizeof(msg));
		v[92] = 0;
		snprintf(want, sizeof(want), "'%s...'", v);
		ck_assert_msg(strstr(msg, want), "%s", msg);
	}
	for (unsigned id = 0; id < BOT_ENV_COUNT; id++)
		ck_assert(!strncmp(bot_env_name(id), "NCCL_BOT_", 9));
	{
		/* the rule alone, in place as the spool writer uses it */
		char s[16] = "a\tb\x7f\xc3\xa9";

		bot_env_show(s, s, sizeof(s));
		ck_assert_str_eq(s, "a?b???");
		strcpy(s, "0123456789abcde");
		bot_env_show(s, s, sizeof(s));
		ck_assert_str_eq(s, "0123456789ab...");
		strcpy(s, "0123456789ab");
		bot_env_show(s, s, sizeof(s));
		ck_assert_str_eq(s, "0123456789ab");
		bot_env_show(NULL, s, sizeof(s));
		ck_assert_str_eq(s, "");
	}
}
END_TEST

static Suite *settings_suite(void)
{
	Suite *s = suite_create("settings");
	TCase *tc = tcase_create("grammar");

	tcase_add_test(tc, test_numbers);
	tcase_add_test(tc, test_range);
	tcase_add_test(tc, test_bytes_and_threshold);
	tcase_add_test(tc, test_policy);
	tcase_add_test(tc, test_allow);
	tcase_add_test(tc, test_allow_format);
	tcase_add_test(tc, test_bool);
	tcase_add_test(tc, test_env);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(settings_suite)
