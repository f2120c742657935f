/*
 * test_fileio.c - the shared file helpers of common/ that the writers and
 * listings of learn/ and tools/ use: the whole-file writer (writeall.h),
 * the directory walk (dirscan.h), the binary trailer (trailer.h) and the
 * growing array (grow.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/dirscan.h"
#include "common/grow.h"
#include "common/trailer.h"
#include "common/writeall.h"
#include "testutil.h"

static char dir[256];

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "fileio");
}

static void teardown(void)
{
	bot_test_rmtree(dir);
}

static int dir_fd(void)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	return fd;
}

/* The bytes of dir/name, NUL-terminated, into buf (cap bytes): the length
 * or -1 when it cannot be opened. */
static ssize_t slurp(const char *name, char *buf, size_t cap)
{
	char path[BOT_TEST_PATH_MAX];
	int fd = open(bot_test_path(path, dir, name), O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = 0;
	return n;
}

static char hook_seen[64];
static int hook_tmp_there;

static void hook(const char *point)
{
	char path[BOT_TEST_PATH_MAX];

	snprintf(hook_seen, sizeof(hook_seen), "%s", point);
	/* the temporary is complete, the name not yet replaced */
	hook_tmp_there = access(bot_test_path(path, dir, ".f.tmp"), F_OK) == 0;
}

START_TEST(test_write_replace)
{
	const struct bot_write_rule r = { .mode = 0640, .chmod = 1, .clear_stale = 1,
					  .sync_dir = 1, .before_rename = hook, .point = "p1" };
	char buf[64], err[256];
	struct stat st;
	mode_t old = umask(077);
	int fd = dir_fd();

	bot_test_write(dir, "f", "old", 3);
	bot_test_write(dir, ".f.tmp", "stale", 5);	/* left by a writer that died */
	ck_assert_int_eq(bot_write_whole_at(fd, dir, "f", "new!", 4, &r, err, sizeof(err)), 0);
	umask(old);
	ck_assert_int_eq(slurp("f", buf, sizeof(buf)), 4);
	ck_assert_str_eq(buf, "new!");
	ck_assert_str_eq(hook_seen, "p1");
	ck_assert_int_eq(hook_tmp_there, 1);
	ck_assert_int_eq(slurp(".f.tmp", buf, sizeof(buf)), -1);
	/* the umask undone: the rule's mode */
	ck_assert_int_eq(fstatat(fd, "f", &st, 0), 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0640);
	close(fd);
}
END_TEST

START_TEST(test_write_no_replace)
{
	const struct bot_write_rule r = { .mode = 0644, .no_replace = 1, .clear_stale = 1 };
	char buf[64], err[256];
	int fd = dir_fd();

	ck_assert_int_eq(bot_write_whole_at(fd, dir, "d", "one", 3, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(bot_write_whole_at(fd, dir, "d", "two", 3, &r, err, sizeof(err)), 1);
	ck_assert_int_eq(slurp("d", buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, "one");
	ck_assert_int_eq(slurp(".d.tmp", buf, sizeof(buf)), -1);
	close(fd);
}
END_TEST

START_TEST(test_write_failures_name_file_and_step)
{
	const struct bot_write_rule keep = { .mode = 0644, .tmp = "t.tmp" };
	const struct bot_write_rule r = { .mode = 0644 };
	char want[BOT_TEST_PATH_MAX + 64], err[1024], buf[8];
	int fd = dir_fd();

	/* a temporary that is there and not to be cleared: create fails */
	bot_test_write(dir, "t.tmp", "x", 1);
	ck_assert_int_eq(bot_write_whole_at(fd, dir, "t", "y", 1, &keep, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "%s/t.tmp: cannot create: ", dir);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	ck_assert_int_eq(slurp("t.tmp", buf, sizeof(buf)), 1);	/* not ours: kept */
	/* renaming onto a directory fails: the step and both names, the
	 * temporary removed */
	ck_assert_int_eq(mkdirat(fd, "sub", 0755), 0);
	bot_test_write(dir, "sub/x", "x", 1);
	ck_assert_int_eq(bot_write_whole_at(fd, dir, "sub", "y", 1, &r, err, sizeof(err)), -1);
	snprintf(want, sizeof(want), "cannot rename %s/.sub.tmp to %s/sub: ", dir, dir);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "%s", err);
	ck_assert_int_eq(slurp(".sub.tmp", buf, sizeof(buf)), -1);
	/* no directory named: the names alone */
	ck_assert_int_eq(bot_write_whole_at(fd, NULL, "t", "y", 1, &keep, err, sizeof(err)), -1);
	ck_assert_msg(!strncmp(err, "t.tmp: cannot create: ", 22), "%s", err);
	close(fd);
}
END_TEST

struct count {
	size_t seen, dots;
	size_t stop_at;
};

static int count_one(const struct dirent *e, void *arg)
{
	struct count *c = arg;

	if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
		c->dots++;
	else
		c->seen++;
	return c->stop_at && c->seen == c->stop_at ? 7 : 0;
}

START_TEST(test_dir_scan)
{
	struct count c = { 0, 0, 0 };
	int fd = dir_fd(), nd;

	bot_test_write(dir, "a", "", 0);
	bot_test_write(dir, "b", "", 0);
	bot_test_write(dir, "c", "", 0);
	ck_assert_int_eq(bot_dir_scan(fd, count_one, &c), 0);
	ck_assert_uint_eq(c.seen, 3);
	ck_assert_uint_eq(c.dots, 2);
	/* the same fd again: the walk starts over, the fd stays open */
	memset(&c, 0, sizeof(c));
	ck_assert_int_eq(bot_dir_scan(fd, count_one, &c), 0);
	ck_assert_uint_eq(c.seen, 3);
	/* a visitor's stop value comes back */
	memset(&c, 0, sizeof(c));
	c.stop_at = 2;
	ck_assert_int_eq(bot_dir_scan(fd, count_one, &c), 7);
	ck_assert_uint_eq(c.seen, 2);
	close(fd);
	/* not a directory: -errno */
	nd = open(bot_test_path((char[BOT_TEST_PATH_MAX]){ 0 }, dir, "a"), O_RDONLY);
	ck_assert_int_ge(nd, 0);
	ck_assert_int_eq(bot_dir_scan(nd, count_one, &c), -ENOTDIR);
	close(nd);
	ck_assert_int_eq(bot_dir_scan(-1, count_one, &c), -EBADF);
}
END_TEST

START_TEST(test_trailer)
{
	uint8_t b[32 + 8];

	for (size_t i = 0; i < 32; i++)
		b[i] = (uint8_t)(i * 7);
	memset(b + 32, 0xee, 8);
	bot_trailer_put(b, 32);
	ck_assert_uint_eq(bot_le_get32(b + 32), bot_spool_crc32c(0, b, 32));
	ck_assert(bot_le_zero(b + 36, 4));
	ck_assert(bot_trailer_ok(b, 32, NULL));
	b[37] = 1;	/* the reserved bytes count */
	ck_assert(!bot_trailer_ok(b, 32, NULL));
	b[37] = 0;
	b[3] ^= 0x10;	/* a body bit */
	ck_assert(!bot_trailer_ok(b, 32, NULL));
}
END_TEST

START_TEST(test_grow)
{
	uint32_t *v = NULL;
	size_t cap = 0;

	ck_assert_int_eq(bot_grow((void **)&v, &cap, 1, sizeof(*v)), 0);
	ck_assert_uint_eq(cap, 64);
	ck_assert_int_eq(bot_grow((void **)&v, &cap, 65, sizeof(*v)), 0);
	ck_assert_uint_eq(cap, 128);
	ck_assert_int_eq(bot_grow((void **)&v, &cap, 100, sizeof(*v)), 0);
	ck_assert_uint_eq(cap, 128);
	/* a size that would overflow is refused, the array kept */
	ck_assert_int_eq(bot_grow((void **)&v, &cap, SIZE_MAX / 2, sizeof(*v)), -1);
	ck_assert_uint_eq(cap, 128);
	free(v);
}
END_TEST

static Suite *fileio_suite(void)
{
	Suite *s = suite_create("fileio");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_write_replace);
	tcase_add_test(tc, test_write_no_replace);
	tcase_add_test(tc, test_write_failures_name_file_and_step);
	tcase_add_test(tc, test_dir_scan);
	tcase_add_test(tc, test_trailer);
	tcase_add_test(tc, test_grow);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(fileio_suite)
