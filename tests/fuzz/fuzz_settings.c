/*
 * fuzz_settings.c - fuzz target for the settings grammar (common/settings.c).
 *
 * Ranks parse NCCL_BOT_* values with this code, so any string must come
 * back as a known error or a value, never a crash or a read past its end.
 * For every input (cut at its first NUL) each parser runs, and what it
 * accepts is checked against the grammar of doc/formats.md section 11: a
 * decimal number prints back as the same string (no blanks, signs or
 * leading zeros slip through), a byte count is the number times its unit,
 * a threshold is the byte count rounded up to a power of two, an accepted
 * policy's name parses back to the same id, an allow-list sets bits 0..20
 * only. Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "policies/context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char s[4096];

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_settings: %s: '%s'\n", what, s);
	abort();
}

static const char *env_get(const char *name)
{
	(void)name;
	return s;
}

static int known(int rc)
{
	return rc <= 0 && rc >= BOT_SET_ELIST;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char back[64];
	uint64_t v, w;
	uint32_t a;
	size_t bad;
	unsigned k;
	int rc, id, b, rounded;

	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = 0;

	rc = bot_set_u64(s, 0, &v);
	if (!known(rc))
		fail("u64: unknown error");
	if (rc == BOT_SET_OK) {
		snprintf(back, sizeof(back), "%llu", (unsigned long long)v);
		if (strcmp(back, s))
			fail("decimal does not print back");
	}
	rc = bot_set_u64(s, 1, &w);
	if (!known(rc))
		fail("hex: unknown error");
	if (rc == BOT_SET_OK && !(s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))) {
		if (bot_set_u64(s, 0, &v) != BOT_SET_OK || v != w)
			fail("hex and decimal disagree");
	}
	rc = bot_set_bytes(s, &v);
	if (!known(rc))
		fail("bytes: unknown error");
	if (rc == BOT_SET_OK) {
		if (v > (1ULL << 63))
			fail("bytes over 2^63");
		rc = bot_set_threshold(s, &k, &rounded);
		if (rc != BOT_SET_OK || k > 63 || (1ULL << k) < v || (k && (1ULL << (k - 1)) >= v) ||
		    rounded != (v > 1 && (1ULL << k) != v))
			fail("threshold is not the byte count rounded up");
	} else if (bot_set_threshold(s, &k, NULL) != rc) {
		fail("threshold and bytes disagree");
	}
	rc = bot_set_policy(s, &id);
	if (!known(rc))
		fail("policy: unknown error");
	if (rc == BOT_SET_OK) {
		int again;

		if (id < 0 || id >= BOT_NPOLICY ||
		    bot_set_policy(bot_policy_name(id), &again) != BOT_SET_OK || again != id)
			fail("policy id");
	}
	rc = bot_set_allow(s, &a, &bad);
	if (!known(rc))
		fail("allow: unknown error");
	if (rc == BOT_SET_OK && (a >> BOT_NARMS))
		fail("allow: bits over 20");
	if (rc == BOT_SET_OK)
		for (const char *p = s; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      (*p >= '0' && *p <= '9') || *p == '_' || *p == '-' || *p == '/' ||
			      *p == ','))
				fail("allow: accepted a character outside names, '/' and ','");
	if (rc != BOT_SET_OK && bad > strlen(s))
		fail("allow: error offset past the end");
	rc = bot_set_bool(s, &b);
	if (!known(rc) || (rc == BOT_SET_OK && strcmp(s, b ? "1" : "0")))
		fail("bool");

	/* the environment table: every variable set to this string */
	{
		struct bot_env e;
		char msg[512];

		bot_env_read(&e, env_get);
		if (s[0] && e.set != (1u << BOT_ENV_COUNT) - 1)
			fail("env: a set variable not marked set");
		if (e.policy < 0 || e.policy >= BOT_NPOLICY || e.min_bytes_log2 > 63 ||
		    e.window < 16 || e.window > 64 || (e.allow >> BOT_NARMS) ||
		    (unsigned)e.debug > 1 || (unsigned)e.measure_v4 > 1)
			fail("env: a value out of its range");
		for (unsigned var = 0; var < BOT_ENV_COUNT; var++) {
			if (!(e.bad >> var & 1))
				continue;
			bot_env_explain(&e, (enum bot_env_id)var, s, msg, sizeof(msg));
			for (const char *p = msg; *p; p++)
				if (*p < 0x20 || *p > 0x7e)
					fail("env: explanation not printable");
		}
	}
	return 0;
}
