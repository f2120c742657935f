/*
 * jobfacts.c - a job's root-side facts on one node (spank/jobfacts.h).
 *
 * The text: a first line "nccl-bot job facts 1", then "account=",
 * "gpus=", "het_job=" and "start=" lines, each once, in any order;
 * nothing else (doc/formats.md section 13).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/readall.h"
#include "common/writeall.h"
#include "learn/log.h"
#include "spank/jobfacts.h"

#define HEAD "nccl-bot job facts 1\n"

static int account_ok(const char *s, size_t n)
{
	if (n >= BOT_DELTA_STR)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return 1;
}

/* A decimal below 2^32 - 16 (Slurm's NO_VAL and friends excluded). */
static int u32(const char *s, size_t n, uint32_t *out)
{
	uint64_t v = 0;

	if (!n || n > 10)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >= 0xfffffff0u)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* A decimal below 2^63. */
static int u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (!n || n > 19)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v >> 63)
		return -1;
	*out = v;
	return 0;
}

/* "0,2-3" -> 3; 0 for anything else than indices and ranges. */
static uint32_t count_gpus(const char *s)
{
	uint64_t n = 0;

	while (*s) {
		size_t a = strspn(s, "0123456789"), b = 0;
		uint32_t lo, hi;

		if (u32(s, a, &lo) < 0)
			return 0;
		s += a;
		hi = lo;
		if (*s == '-') {
			b = strspn(s + 1, "0123456789");
			if (u32(s + 1, b, &hi) < 0 || hi < lo)
				return 0;
			s += 1 + b;
		}
		n += (uint64_t)(hi - lo) + 1;
		if (n > 65536)
			return 0;
		if (*s == ',')
			s++;
		else if (*s)
			return 0;
	}
	return (uint32_t)n;
}

void bot_spank_jobfacts_from_env(struct bot_spank_jobfacts *f,
				 const char *(*get)(const char *name))
{
	const char *v;

	memset(f, 0, sizeof(*f));
	v = get("SLURM_JOB_ACCOUNT");
	if (v && account_ok(v, strlen(v)))
		snprintf(f->account, sizeof(f->account), "%s", v);
	v = get("SLURM_JOB_GPUS");
	if (v)
		f->gpus = count_gpus(v);
	v = get("SLURM_HET_JOB_ID");
	if (v && u32(v, strlen(v), &f->het_job) < 0)
		f->het_job = 0;
}

int bot_spank_jobfacts_name(uint32_t job, const char *node, char *out, size_t len)
{
	int n;

	if (!node || !*node || !account_ok(node, strlen(node)) || !strcmp(node, ".") ||
	    !strcmp(node, ".."))
		return -1;
	n = snprintf(out, len, ".job.%" PRIu32 ".%s", job, node);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int bot_spank_jobfacts_encode(const struct bot_spank_jobfacts *f, char *out, size_t len)
{
	int n = snprintf(out, len, HEAD "account=%s\ngpus=%" PRIu32 "\nhet_job=%" PRIu32
			 "\nstart=%" PRIu64 "\n", f->account, f->gpus, f->het_job, f->start);

	return n < 0 || (size_t)n >= len ? -1 : n;
}

int bot_spank_jobfacts_parse(const char *buf, size_t len, struct bot_spank_jobfacts *f,
			     char *err, size_t errlen)
{
	const size_t hl = sizeof(HEAD) - 1;
	unsigned seen = 0, line = 1;
	size_t i;

	memset(f, 0, sizeof(*f));
	if (len > BOT_SPANK_JOBFACTS_MAX)
		return bot_log_errf(err, errlen, "over %u bytes", BOT_SPANK_JOBFACTS_MAX);
	if (len < hl || memcmp(buf, HEAD, hl)) {
		const size_t pl = sizeof("nccl-bot job facts ") - 1;
		size_t d = pl;

		/* another build's facts (a prolog of a newer nccl-bot): say
		 * its version (formats.md: a reader names a version it does
		 * not know) */
		while (d < len && d < pl + 9 && buf[d] >= '0' && buf[d] <= '9')
			d++;
		if (d > pl && d < len && buf[d] == '\n' && !memcmp(buf, HEAD, pl))
			return bot_log_errf(err, errlen, "line 1: job facts version %.*s (this "
					    "build reads 1)", (int)(d - pl), buf + pl);
		return bot_log_errf(err, errlen, "line 1: not \"nccl-bot job facts 1\"");
	}
	for (i = hl; i < len;) {
		const char *l = buf + i, *eq, *nl = memchr(l, '\n', len - i);
		size_t n, k, vn;
		unsigned bit;

		line++;
		if (!nl)
			return bot_log_errf(err, errlen, "line %u: no newline at its end", line);
		n = (size_t)(nl - l);
		i += n + 1;
		eq = memchr(l, '=', n);
		if (!eq)
			return bot_log_errf(err, errlen, "line %u: not KEY=VALUE", line);
		k = (size_t)(eq - l);
		vn = n - k - 1;
		if (k == 7 && !memcmp(l, "account", 7)) {
			bit = 1;
			if (!account_ok(eq + 1, vn))
				return bot_log_errf(err, errlen, "line %u: not an account", line);
			memcpy(f->account, eq + 1, vn);
			f->account[vn] = 0;
		} else if (k == 4 && !memcmp(l, "gpus", 4)) {
			bit = 2;
			if (u32(eq + 1, vn, &f->gpus) < 0)
				return bot_log_errf(err, errlen, "line %u: not a count", line);
		} else if (k == 7 && !memcmp(l, "het_job", 7)) {
			bit = 4;
			if (u32(eq + 1, vn, &f->het_job) < 0)
				return bot_log_errf(err, errlen, "line %u: not a job id", line);
		} else if (k == 5 && !memcmp(l, "start", 5)) {
			bit = 8;
			if (u64(eq + 1, vn, &f->start) < 0)
				return bot_log_errf(err, errlen, "line %u: not a time", line);
		} else {
			return bot_log_errf(err, errlen, "line %u: an unknown key", line);
		}
		if (seen & bit)
			return bot_log_errf(err, errlen, "line %u: a key given twice", line);
		seen |= bit;
	}
	if (seen != 15)
		return bot_log_errf(err, errlen, "a key is missing (account, gpus, het_job, start)");
	return 0;
}

int bot_spank_jobfacts_write(int basefd, const char *name, const struct bot_spank_jobfacts *f,
			     char *err, size_t errlen)
{
	const struct bot_write_rule r = { .mode = 0600, .chmod = 1, .clear_stale = 1,
					  .sync_dir = 1 };
	char buf[512];
	int n = bot_spank_jobfacts_encode(f, buf, sizeof(buf));

	if (n < 0)
		return bot_log_errf(err, errlen, "%s: the facts do not fit", name);
	return bot_write_whole_at(basefd, NULL, name, buf, (size_t)n, &r, err, errlen) < 0 ? -1
		: 0;
}

int bot_spank_jobfacts_read(int basefd, const char *name, struct bot_spank_jobfacts *f,
			    char *err, size_t errlen)
{
	const struct bot_open_rule rule = { .what = "job facts", .max = BOT_SPANK_JOBFACTS_MAX,
					    .one_link = 1, .check_owner = 1, .uid = 0 };
	char perr[256];
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	memset(f, 0, sizeof(*f));
	if (faccessat(basefd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return bot_log_errf(err, errlen, "%s: not there", name), errno = ENOENT, -1;
	if (bot_read_at(basefd, name, name, &rule, &buf, &len, err, errlen) < 0) {
		errno = EINVAL;
		return -1;
	}
	rc = bot_spank_jobfacts_parse((const char *)buf, len, f, perr, sizeof(perr));
	free(buf);
	if (rc < 0) {
		errno = EINVAL;
		return bot_log_errf(err, errlen, "%s: %s", name, perr);
	}
	return 0;
}
