/*
 * test_spank_spool.c - a step's spool directory (spank/spooldir.h): its
 * name, the epilog's match of a job's names, spool_dir= refused when it is
 * a link or another's, a step directory refused when something else is
 * there, removal that never follows a link and stays bounded; and, as
 * root, nccl-bot-harvest-read (tools/harvest_read.c) dropping to another
 * uid before it reads (a root-only directory cannot be listed: its stream
 * says so) and its usage errors; the epilog's parse of a leftover's name;
 * the job's facts file (spank/jobfacts.h): from a prolog's environment,
 * written and read back, refused when it is a link, another's or malformed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/le.h"
#include "learn/harvest.h"
#include "spank/jobfacts.h"
#include "spank/spooldir.h"
#include "testutil.h"

static char dir[BOT_TEST_PATH_MAX];

static void setup(void) { bot_test_mkdtemp(dir, sizeof(dir), "spankspool"); }
static void teardown(void) { bot_test_rmtree(dir); }

START_TEST(test_name)
{
	char n[BOT_SPANK_SPOOL_NAME_MAX];

	ck_assert_int_eq(bot_spank_spool_name(12, 0, 3, "n1", n, sizeof(n)), 0);
	ck_assert_str_eq(n, "12.0.3.n1");
	ck_assert_int_eq(bot_spank_spool_name(12, 2, BOT_DELTA_STEP_BATCH, "gpu-7.a", n,
					      sizeof(n)), 0);
	ck_assert_str_eq(n, "12.2.batch.gpu-7.a");
	ck_assert_int_eq(bot_spank_spool_name(12, 0, 0, "", n, sizeof(n)), -1);
	ck_assert_int_eq(bot_spank_spool_name(12, 0, 0, "a/b", n, sizeof(n)), -1);
	ck_assert_int_eq(bot_spank_spool_name(12, 0, 0, "..", n, sizeof(n)), -1);
	ck_assert_int_eq(bot_spank_spool_name(12, 0, 0, "n 1", n, sizeof(n)), -1);
	ck_assert_int_eq(bot_spank_spool_name(12, 0, 0, "n1", n, 5), -1);

	ck_assert(bot_spank_spool_of_job("12.0.3.n1", 12, "n1"));
	ck_assert(bot_spank_spool_of_job("12.4.batch.n1", 12, "n1"));
	ck_assert(!bot_spank_spool_of_job("12.0.3.n1", 1, "n1"));
	ck_assert(!bot_spank_spool_of_job("120.0.3.n1", 12, "n1"));
	ck_assert(!bot_spank_spool_of_job("12.0.3.n1", 12, "n"));
	ck_assert(!bot_spank_spool_of_job("12.0.3.xn1", 12, "n1"));
	ck_assert(!bot_spank_spool_of_job("12.0.n1", 12, "n1"));
	ck_assert(!bot_spank_spool_of_job("12..3.n1", 12, "n1"));
	ck_assert(!bot_spank_spool_of_job("12.0.3.n1", 12, "../n1"));
}
END_TEST

START_TEST(test_base)
{
	char p[BOT_TEST_PATH_MAX + 32], l[BOT_TEST_PATH_MAX + 32], err[512];
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "%s/base", dir);
	ck_assert_int_eq(bot_spank_spool_base(p, 0, err, sizeof(err)), -1);
	ck_assert_int_eq(errno, ENOENT);
	fd = bot_spank_spool_base(p, 1, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	close(fd);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0711);
	/* again: there already */
	fd = bot_spank_spool_base(p, 1, err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	close(fd);
	/* a link is refused, even to a good directory */
	snprintf(l, sizeof(l), "%s/link", dir);
	ck_assert_int_eq(symlink(p, l), 0);
	ck_assert_int_eq(bot_spank_spool_base(l, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "a symbolic link"), "%s", err);
	/* writable by others: refused */
	ck_assert_int_eq(chmod(p, 0777), 0);
	ck_assert_int_eq(bot_spank_spool_base(p, 1, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "refused"), "%s", err);
	ck_assert_int_eq(bot_spank_spool_base("rel/ative", 1, err, sizeof(err)), -1);
}
END_TEST

START_TEST(test_make_and_remove)
{
	char p[BOT_TEST_PATH_MAX + 64], t[BOT_TEST_PATH_MAX + 64], err[512];
	struct stat st;
	int base, fd;

	snprintf(p, sizeof(p), "%s/base", dir);
	base = bot_spank_spool_base(p, 1, err, sizeof(err));
	ck_assert_msg(base >= 0, "%s", err);
	ck_assert_int_eq(bot_spank_spool_make(base, "1.0.0.n1", getuid(), getgid(), err,
					      sizeof(err)), 0);
	ck_assert_int_eq(fstatat(base, "1.0.0.n1", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(st.st_mode & 07777, 0700);
	ck_assert_int_eq(st.st_uid, getuid());
	/* again (a restarted slurmstepd): ours, accepted */
	ck_assert_int_eq(bot_spank_spool_make(base, "1.0.0.n1", getuid(), getgid(), err,
					      sizeof(err)), 1);
	/* a link planted under the name is refused, and not followed */
	snprintf(t, sizeof(t), "%s/target", dir);
	ck_assert_int_eq(mkdir(t, 0755), 0);
	ck_assert_int_eq(symlinkat(t, base, "1.0.1.n1"), 0);
	ck_assert_int_eq(bot_spank_spool_make(base, "1.0.1.n1", getuid(), getgid(), err,
					      sizeof(err)), -1);
	ck_assert_msg(strstr(err, "refused"), "%s", err);
	ck_assert_int_eq(stat(t, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0755);
	/* a directory of another mode: refused */
	ck_assert_int_eq(mkdirat(base, "1.0.2.n1", 0755), 0);
	ck_assert_int_eq(bot_spank_spool_make(base, "1.0.2.n1", getuid(), getgid(), err,
					      sizeof(err)), -1);
	/* open: a link is not a step's directory */
	ck_assert_int_eq(bot_spank_spool_open(base, "1.0.1.n1", getuid(), err, sizeof(err)), -1);
	ck_assert_int_eq(bot_spank_spool_open(base, "9.0.0.n1", getuid(), err, sizeof(err)), -1);
	ck_assert_int_eq(errno, ENOENT);
	fd = bot_spank_spool_open(base, "1.0.0.n1", getuid(), err, sizeof(err));
	ck_assert_msg(fd >= 0, "%s", err);
	/* fill it: files, a link to the target, a nested directory with a file */
	ck_assert_int_eq(symlinkat(t, fd, "link.spool"), 0);
	ck_assert_int_eq(mkdirat(fd, "sub", 0700), 0);
	{
		int s = openat(fd, "sub", O_RDONLY | O_DIRECTORY);
		int f = openat(s, "x", O_WRONLY | O_CREAT | O_EXCL, 0600);

		ck_assert(s >= 0 && f >= 0);
		close(f);
		ck_assert_int_eq(symlinkat(t, s, "up"), 0);
		close(s);
	}
	ck_assert_int_eq(mkfifoat(fd, "fifo.spool", 0600), 0);
	snprintf(t + strlen(t), sizeof(t) - strlen(t), "/keep");
	ck_assert_int_eq(close(open(t, O_WRONLY | O_CREAT | O_EXCL, 0600)), 0);
	close(fd);
	ck_assert_msg(bot_spank_spool_remove(base, "1.0.0.n1", err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(fstatat(base, "1.0.0.n1", &st, AT_SYMLINK_NOFOLLOW), -1);
	ck_assert_int_eq(stat(t, &st), 0);	/* what the links pointed at stays */
	/* a link under the name: the link goes, its target stays */
	ck_assert_int_eq(bot_spank_spool_remove(base, "1.0.1.n1", err, sizeof(err)), 0);
	ck_assert_int_eq(stat(t, &st), 0);
	/* not there: fine */
	ck_assert_int_eq(bot_spank_spool_remove(base, "7.0.0.n1", err, sizeof(err)), 0);
	close(base);
}
END_TEST

START_TEST(test_remove_bounded)
{
	char p[BOT_TEST_PATH_MAX + 32], err[512], name[32];
	int base, fd;

	snprintf(p, sizeof(p), "%s/base", dir);
	base = bot_spank_spool_base(p, 1, err, sizeof(err));
	ck_assert_int_eq(bot_spank_spool_make(base, "2.0.0.n1", getuid(), getgid(), err,
					      sizeof(err)), 0);
	fd = bot_spank_spool_open(base, "2.0.0.n1", getuid(), err, sizeof(err));
	/* nested deeper than the bound: left, with the reason */
	for (int i = 0; i <= BOT_SPANK_SPOOL_DEPTH_MAX; i++) {
		int s;

		snprintf(name, sizeof(name), "d%d", i);
		ck_assert_int_eq(mkdirat(fd, name, 0700), 0);
		s = openat(fd, name, O_RDONLY | O_DIRECTORY);
		close(fd);
		fd = s;
	}
	close(fd);
	ck_assert_int_eq(bot_spank_spool_remove(base, "2.0.0.n1", err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "nested over"), "%s", err);
	close(base);
}
END_TEST

/* nccl-bot-harvest-read as root, told to be another uid: it cannot list a
 * directory only root may read, so its stream is one X unit, code 1. */
START_TEST(test_helper_drops)
{
	char p[BOT_TEST_PATH_MAX + 32], uid[16], gid[16];
	unsigned char u[BOT_HARVEST_UNIT];
	struct passwd *pw = getpwnam("nobody");
	int pfd[2], status;
	pid_t pid;

	if (getuid() != 0 || !pw) {
		fprintf(stderr, "skip: test_helper_drops needs root and a user nobody\n");
		return;
	}
	snprintf(p, sizeof(p), "%s/rootonly", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	snprintf(uid, sizeof(uid), "%u", (unsigned)pw->pw_uid);
	snprintf(gid, sizeof(gid), "%u", (unsigned)pw->pw_gid);
	ck_assert_int_eq(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		/* a sanitizer build's leak check cannot run once the helper has
		 * dropped privileges and set its limits (it is a check of the
		 * test build, not of the helper's behaviour) */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		execl(BOT_HARVEST_HELPER, BOT_HARVEST_HELPER, uid, gid, "-", p, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	ck_assert_int_eq(read(pfd[0], u, sizeof(u)), (ssize_t)sizeof(u));
	ck_assert_int_eq(u[0], 'X');
	ck_assert_int_eq(bot_le_get16(u + 2), 1);	/* a source cannot be opened */
	ck_assert_int_eq(bot_le_get32(u + 4), EACCES);
	close(pfd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	/* usage: a relative directory, a bad group list */
	pid = fork();
	if (pid == 0) {
		int dn = open("/dev/null", O_WRONLY);

		dup2(dn, 2);
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
		execl(BOT_HARVEST_HELPER, BOT_HARVEST_HELPER, uid, gid, "1,,2", p, (char *)NULL);
		_exit(127);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 2);
}
END_TEST

START_TEST(test_parse)
{
	uint32_t r = 9, st = 9;

	ck_assert_int_eq(bot_spank_spool_parse("12.0.3.n1", 12, "n1", &r, &st), 0);
	ck_assert(r == 0 && st == 3);
	ck_assert_int_eq(bot_spank_spool_parse("12.4.batch.n1", 12, "n1", &r, &st), 0);
	ck_assert(r == 4 && st == BOT_DELTA_STEP_BATCH);
	ck_assert_int_eq(bot_spank_spool_parse("12.1.extern.gpu-7.a", 12, "gpu-7.a", &r, &st), 0);
	ck_assert(r == 1 && st == BOT_DELTA_STEP_EXTERN);
	ck_assert_int_eq(bot_spank_spool_parse("12.0.03.n1", 12, "n1", &r, &st), -1);
	ck_assert_int_eq(bot_spank_spool_parse("12.00.3.n1", 12, "n1", &r, &st), -1);
	ck_assert_int_eq(bot_spank_spool_parse("12.0.bogus.n1", 12, "n1", &r, &st), -1);
	ck_assert_int_eq(bot_spank_spool_parse("12.0.99999999999.n1", 12, "n1", &r, &st), -1);
	ck_assert_int_eq(bot_spank_spool_parse("12.0.3.n1", 13, "n1", &r, &st), -1);
}
END_TEST

static const char *fake_env(const char *name)
{
	if (!strcmp(name, "SLURM_JOB_ACCOUNT"))
		return "acct_1";
	if (!strcmp(name, "SLURM_JOB_GPUS"))
		return "0,2-3";
	if (!strcmp(name, "SLURM_HET_JOB_ID"))
		return "41";
	return NULL;
}

static const char *bad_env(const char *name)
{
	if (!strcmp(name, "SLURM_JOB_ACCOUNT"))
		return "a b";
	if (!strcmp(name, "SLURM_JOB_GPUS"))
		return "3-1";
	if (!strcmp(name, "SLURM_HET_JOB_ID"))
		return "4294967294";
	return NULL;
}

START_TEST(test_jobfacts)
{
	struct bot_spank_jobfacts f, g;
	char n[BOT_SPANK_SPOOL_NAME_MAX], err[512], p[BOT_TEST_PATH_MAX + 32];
	const char *bad[] = {
		"nccl-bot job facts 2\naccount=\ngpus=0\nhet_job=0\nstart=1\n",
		"nccl-bot job facts 1\naccount=\ngpus=0\nhet_job=0\n",
		"nccl-bot job facts 1\naccount=\ngpus=0\nhet_job=0\nstart=1",
		"nccl-bot job facts 1\naccount=\ngpus=0\nhet_job=0\nstart=1\nstart=1\n",
		"nccl-bot job facts 1\naccount=a b\ngpus=0\nhet_job=0\nstart=1\n",
		"nccl-bot job facts 1\naccount=\ngpus=-1\nhet_job=0\nstart=1\n",
		"nccl-bot job facts 1\naccount=\ngpus=0\nhet_job=4294967295\nstart=1\n",
		"nccl-bot job facts 1\naccount=\ngpus=0\nhet_job=0\nstart=1\nx=1\n",
		"nccl-bot job facts 1\naccount=\ngpus=0\nhet_job=0\nstart\n",
	};
	int base;

	bot_spank_jobfacts_from_env(&f, fake_env);
	ck_assert_str_eq(f.account, "acct_1");
	ck_assert_uint_eq(f.gpus, 3);
	ck_assert_uint_eq(f.het_job, 41);
	bot_spank_jobfacts_from_env(&g, bad_env);
	ck_assert(!g.account[0] && g.gpus == 0 && g.het_job == 0);
	f.start = 1796000000;

	ck_assert_int_eq(bot_spank_jobfacts_name(42, "n1", n, sizeof(n)), 0);
	ck_assert_str_eq(n, ".job.42.n1");
	ck_assert(!bot_spank_spool_of_job(n, 42, "n1"));	/* never swept as a spool */
	ck_assert_int_eq(bot_spank_jobfacts_name(42, "../x", n, sizeof(n)), -1);
	ck_assert_int_eq(bot_spank_jobfacts_name(42, "n1", n, 8), -1);

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(bot_spank_jobfacts_parse(bad[i], strlen(bad[i]), &g, err,
						       sizeof(err)) < 0, "accepted %zu", i);
	/* a newer build's facts: refused naming the version, not as not facts */
	ck_assert_int_lt(bot_spank_jobfacts_parse(bad[0], strlen(bad[0]), &g, err, sizeof(err)), 0);
	ck_assert_msg(strstr(err, "job facts version 2 (this build reads 1)"), "%s", err);
	ck_assert_int_lt(bot_spank_jobfacts_parse("nccl-bot job facts x\n", 21, &g, err,
						  sizeof(err)), 0);
	ck_assert_msg(strstr(err, "not \"nccl-bot job facts 1\""), "%s", err);

	base = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(base, 0);
	ck_assert_int_eq(bot_spank_jobfacts_read(base, ".job.1.n1", &g, err, sizeof(err)), -1);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(bot_spank_jobfacts_write(base, ".job.42.n1", &f, err, sizeof(err)), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(bot_spank_jobfacts_read(base, ".job.42.n1", &g, err, sizeof(err)),
				 0);
		ck_assert(!strcmp(g.account, "acct_1") && g.gpus == 3 && g.het_job == 41 &&
			  g.start == 1796000000);
		/* a link to it is refused; so is a file of another owner */
		ck_assert_int_eq(symlinkat(".job.42.n1", base, ".job.43.n1"), 0);
		ck_assert_int_eq(bot_spank_jobfacts_read(base, ".job.43.n1", &g, err, sizeof(err)),
				 -1);
		snprintf(p, sizeof(p), "%s/.job.42.n1", dir);
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(bot_spank_jobfacts_read(base, ".job.42.n1", &g, err, sizeof(err)),
				 -1);
	} else {
		/* not root's: refused */
		ck_assert_int_eq(bot_spank_jobfacts_read(base, ".job.42.n1", &g, err, sizeof(err)),
				 -1);
	}
	close(base);
}
END_TEST

static Suite *spool_suite(void)
{
	Suite *s = suite_create("spank_spool");
	TCase *tc = tcase_create("spool");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_name);
	tcase_add_test(tc, test_base);
	tcase_add_test(tc, test_make_and_remove);
	tcase_add_test(tc, test_remove_bounded);
	tcase_add_test(tc, test_helper_drops);
	tcase_add_test(tc, test_parse);
	tcase_add_test(tc, test_jobfacts);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(spool_suite)
