/*
 * harvest_read.c - nccl-bot-harvest-read, the reading half of a harvest in
 * a process of its own (doc/formats.md, "The harvest helper").
 *
 *   nccl-bot-harvest-read UID GID GROUPS DIR
 *
 * spank_nccl_bot.so starts it with posix_spawn from slurmstepd (root, many
 * threads: a fork without exec could hang on a lock another thread held)
 * with the stream's pipe as stdout, /dev/null as stdin and stderr, and an
 * empty environment. Before it reads anything it becomes the job's user
 * for good: every descriptor past 2 closed, the groups GROUPS names (a
 * comma-separated list of gids, as Slurm resolved the job's; "-": the
 * user database's for UID, else GID alone), then gid and uid (real, effective and
 * saved), no new privileges, rlimits (address space, CPU time, file size,
 * descriptors, no core). Then learn/harvest.h's bot_harvest_read lists DIR
 * and writes the unit stream on stdout: spool files owned by UID only. A
 * setup that fails writes the stream's error unit (code 3) and exits 3;
 * the parent (bot_harvest_collect) trusts nothing it says anyway.
 *
 * Exit status: 0 the stream was written, 1 writing it failed, 2 usage,
 * 3 the setup failed.
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/le.h"
#include "learn/harvest.h"

#define HELPER_AS (1024ull << 20)	/* a spool file (<= ~160 MiB) and the listing */
#define HELPER_CPU_S 10
#define HELPER_NOFILE 64
#define HELPER_GROUPS 1024

static int parse_id(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v >= 0xffffffffull)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int limit(int res, rlim_t v)
{
	struct rlimit rl = { v, v };

	return setrlimit(res, &rl);
}

/* "g1,g2,...": 0 with groups[0..*n), or -1 */
static int parse_groups(const char *s, gid_t *groups, int *n)
{
	*n = 0;
	while (*s) {
		char one[16];
		size_t len = strcspn(s, ",");
		uint32_t g;

		if (!len || len >= sizeof(one) || *n >= HELPER_GROUPS)
			return -1;
		memcpy(one, s, len);
		one[len] = 0;
		if (parse_id(one, &g) < 0)
			return -1;
		groups[(*n)++] = (gid_t)g;
		s += len;
		if (*s == ',' && !*++s)
			return -1;
	}
	return 0;
}

/* Become uid:gid with the job's groups, for good. */
static int drop(uid_t uid, gid_t gid, const gid_t *given, int ngiven)
{
	gid_t groups[HELPER_GROUPS];
	int ng = HELPER_GROUPS;
	struct passwd *pw;

	if (getuid() == 0 || geteuid() == 0) {
		if (ngiven >= 0) {
			if (setgroups((size_t)ngiven, given) < 0)
				return -1;
		} else {
			pw = getpwuid(uid);
			if (!pw || getgrouplist(pw->pw_name, gid, groups, &ng) < 0) {
				groups[0] = gid;
				ng = 1;
			}
			if (setgroups((size_t)ng, groups) < 0)
				return -1;
		}
	}
	if (setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -1;
	/* no way back */
	if (uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		return -1;
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid)
		return -1;
	return 0;
}

/* An AddressSanitizer build (CI's) reserves terabytes of address space for
 * its shadow: an address-space limit would fail its every later mapping.
 * Only there is RLIMIT_AS left alone. */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

static int setup(uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	closefrom(3);
	if (drop(uid, gid, groups, ngroups) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	if ((!ASAN_BUILD && limit(RLIMIT_AS, HELPER_AS) < 0) || limit(RLIMIT_CPU, HELPER_CPU_S) < 0 ||
	    limit(RLIMIT_FSIZE, 0) < 0 || limit(RLIMIT_NOFILE, HELPER_NOFILE) < 0 ||
	    limit(RLIMIT_CORE, 0) < 0)
		return -1;
	return 0;
}

/* The stream's X unit, code 3: the child's setup failed. */
static void setup_failed(int e)
{
	uint8_t u[BOT_HARVEST_UNIT] = { 'X' };

	bot_le_put16(u + 2, 3);
	bot_le_put32(u + 4, (uint32_t)e);
	(void)!write(1, u, sizeof(u));
}

int main(int argc, char **argv)
{
	struct bot_harvest_src src;
	struct bot_harvest_req req;
	static gid_t groups[HELPER_GROUPS];
	uint32_t uid, gid;
	int ngroups = -1;

	if (argc != 5 || parse_id(argv[1], &uid) < 0 || parse_id(argv[2], &gid) < 0 ||
	    (strcmp(argv[3], "-") && parse_groups(argv[3], groups, &ngroups) < 0) ||
	    argv[4][0] != '/') {
		fprintf(stderr, "usage: nccl-bot-harvest-read UID GID GROUPS|- DIR (absolute)\n");
		return 2;
	}
	if (setup((uid_t)uid, (gid_t)gid, groups, ngroups) < 0) {
		setup_failed(errno);
		return 3;
	}
	memset(&req, 0, sizeof(req));
	src.dir = argv[4];
	src.name = NULL;
	req.src = &src;
	req.nsrc = 1;
	req.owner = (uid_t)uid;
	return bot_harvest_read(&req, 1) < 0 ? 1 : 0;
}
