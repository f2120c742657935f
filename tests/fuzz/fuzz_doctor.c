/*
 * fuzz_doctor.c - fuzz target for what `nccl-bot doctor` parses
 * (spank/doctor.h): a plugstack.conf's text (bot_doctor_scan: the lines,
 * the plugin's line found once, its arguments through spank/args.c), the
 * mount sources of an enroot fstab and of apptainer.conf
 * (bot_doctor_binds), a version line (bot_doctor_parse_version) and the
 * dynamic loader's cache (bot_doctor_ldcache). Any bytes: no crash, a
 * terminated message per verdict, statuses in range, the same answer
 * twice; a version accepted has a major and fits SLURM_VERSION_NUM's
 * layout; a cache's paths are absolute, inside the input and its matches
 * counted. The first byte picks the parser (its value modulo 4).
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spank/doctor.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct tally {
	unsigned n, problems, sum;
};

static void count(void *arg, const char *check, enum bot_doctor_status st, const char *msg)
{
	struct tally *t = arg;

	if (!check || !*check || !msg || st > BOT_DOCTOR_PROBLEM)
		abort();
	/* messages are escaped: no control character but none at all */
	for (const char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	t->n++;
	t->problems += st == BOT_DOCTOR_PROBLEM;
	t->sum = t->sum * 31 + (unsigned)st + (unsigned)strlen(msg);
}

struct paths {
	const char *buf;
	size_t len;
	unsigned n;
};

/* A cache entry's path: absolute and inside the input, NUL included. */
static int cache_path(void *arg, const char *path)
{
	struct paths *p = arg;

	if (path < p->buf || path >= p->buf + p->len || path[0] != '/' ||
	    !memchr(path, 0, (size_t)(p->buf + p->len - path)))
		abort();
	p->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tally a = { 0, 0, 0 }, b = { 0, 0, 0 };
	const char *text = (const char *)data + 1;
	size_t len = size ? size - 1 : 0;
	unsigned g1, g2;
	int rc;

	if (size == 0)
		return 0;
	switch (data[0] % 4) {
	case 0:
		rc = bot_doctor_scan("/fuzz/plugstack.conf", text, len, "n1", count, &a);
		if (rc < 0 || (unsigned)rc != a.problems || a.n == 0)
			abort();
		rc = bot_doctor_scan("/fuzz/plugstack.conf", text, len, "n1", count, &b);
		if ((unsigned)rc != b.problems || a.n != b.n || a.sum != b.sum)
			abort();
		break;
	case 1:
		g1 = bot_doctor_binds(text, len, data[0] & 4 ? 1 : 0, "/opt/nccl-bot/lib",
				      "/dev/shm/nccl-bot");
		g2 = bot_doctor_binds(text, len, data[0] & 4 ? 1 : 0, "/opt/nccl-bot/lib",
				      "/dev/shm/nccl-bot");
		if (g1 > 3 || g1 != g2)
			abort();
		break;
	case 3: {
		struct paths p = { text, len, 0 };
		int n = bot_doctor_ldcache((const uint8_t *)text, len, "libc.so.6", cache_path, &p);

		if (n < -1 || (n >= 0 && (unsigned)n != p.n) ||
		    bot_doctor_ldcache((const uint8_t *)text, len, "libc.so.6", cache_path, &p) != n)
			abort();
		break;
	}
	case 2:
	default: {
		char s[256];
		uint32_t v = 0;

		if (len >= sizeof(s))
			len = sizeof(s) - 1;
		memcpy(s, text, len);
		s[len] = 0;
		if (bot_doctor_parse_version(s, &v) == 0 && ((v >> 16) == 0 || v > 0xffffff))
			abort();
		break;
	}
	}
	return 0;
}
