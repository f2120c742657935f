/*
 * test_ranklib.c - the rank library check (learn/ranklib.h) and its ELF
 * reader (learn/elf.h).
 *
 * Accepted: the built rank-side library (and a link to it, resolved).
 * Refused, each with its reason: a relative path, a missing file, a
 * directory, /dev/null, a FIFO (without hanging), /etc/passwd, a text
 * file, a truncated copy of the library at many lengths, copies with a
 * 32-bit class, big-endian byte order, an executable's type or another
 * machine, a PIE executable, and real libraries that export no tuner
 * symbols (libc, libm), and another plugin's library lacking the newer tuner
 * symbols. The reader itself is checked on the seed objects of
 * its fuzz target (tests/fuzz/corpus-elf): GNU and System V hash tables,
 * symbol versions, an older tuner without v5/v6, a function and a hidden
 * symbol that must not count. And the symbol lists equal tuner/exports.map.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn/elf.h"
#include "learn/ranklib.h"

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif
#ifndef BOT_SRCDIR
#define BOT_SRCDIR "."
#endif

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/nb-ranklib-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;
	long len;

	ck_assert_msg(f != NULL, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_ge(len, 0);
	rewind(f);
	b = malloc((size_t)len + 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(fread(b, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	*n = (size_t)len;
	return b;
}

static void spill(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fclose(f), 0);
}

/* Refused, the reason containing want (and the path as given). */
static void refused(const char *path, const char *want)
{
	struct bot_ranklib r;
	char err[1024];

	err[0] = 0;
	ck_assert_msg(bot_ranklib_check(path, &r, err, sizeof(err)) == -1, "%s accepted", path);
	ck_assert_msg(strstr(err, want) != NULL, "%s: want '%s', got '%s'", path, want, err);
	ck_assert_msg(!strncmp(err, path, strlen(path)), "reason does not name %s: %s", path, err);
}

START_TEST(test_built_library_accepted)
{
	struct bot_ranklib r;
	char err[1024], link[128], real[PATH_MAX];

	ck_assert_msg(bot_ranklib_check(BOT_TUNER_SO, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_ptr_nonnull(realpath(BOT_TUNER_SO, real));
	ck_assert_str_eq(r.path, real);
	ck_assert_int_eq(r.profiler, 1);
	/* a link (as an installed libnccl-profiler-bot.so is) resolves to the file */
	snprintf(link, sizeof(link), "%s/libnccl-tuner-bot.so", dir);
	ck_assert_int_eq(symlink(real, link), 0);
	ck_assert_msg(bot_ranklib_check(link, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.path, real);
}
END_TEST

START_TEST(test_not_files_refused)
{
	char path[128];

	refused("tuner/libnccl-tuner-bot.so", "not an absolute path");
	refused("", "empty path");
	refused("/nonexistent/libnccl-tuner-bot.so", "No such file or directory");
	refused("/tmp", "a directory, not a shared library");
	refused(dir, "a directory, not a shared library");
	refused("/dev/null", "a character device, not a shared library");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	refused(path, "a FIFO, not a shared library");
	refused("/etc/passwd", "not an ELF file");
	snprintf(path, sizeof(path), "%s/short.so", dir);
	spill(path, "\177ELF", 4);
	refused(path, "4 bytes: too short for an ELF header");
	snprintf(path, sizeof(path), "%s/empty.so", dir);
	spill(path, "", 0);
	refused(path, "0 bytes: too short");
}
END_TEST

/* Every prefix of the library that cuts a segment is refused as truncated;
 * none crashes (the sanitizer build checks the reads). */
START_TEST(test_truncated_refused)
{
	size_t n, cut;
	uint8_t *b = slurp(BOT_TUNER_SO, &n);
	char path[128];
	unsigned refused_n = 0;

	snprintf(path, sizeof(path), "%s/cut.so", dir);
	spill(path, b, 1000);
	refused(path, "truncated: a loadable segment");
	for (cut = 64; cut < n; cut += cut < 4096 ? 61 : 997) {
		struct bot_ranklib r;
		char err[1024];

		spill(path, b, cut);
		if (bot_ranklib_check(path, &r, err, sizeof(err)) < 0) {
			ck_assert_msg(strstr(err, "truncated") || strstr(err, "not inside"), "%zu: %s",
				      cut, err);
			refused_n++;
		}
	}
	/* the loadable segments end at the end of the file (no section
	 * headers after them would make a cut harmless) or nearly */
	ck_assert_uint_gt(refused_n, 0);
	free(b);
}
END_TEST

/* One header field changed at a time. */
static void patched(size_t at, const uint8_t *bytes, size_t nb, const char *want)
{
	size_t n;
	uint8_t *b = slurp(BOT_TUNER_SO, &n);
	char path[128];

	memcpy(b + at, bytes, nb);
	snprintf(path, sizeof(path), "%s/patched.so", dir);
	spill(path, b, n);
	refused(path, want);
	free(b);
}

START_TEST(test_foreign_objects_refused)
{
	static const uint8_t c32[] = { 1 }, be[] = { 2 }, exec[] = { 2, 0 }, rel[] = { 1, 0 };
	unsigned host = bot_elf_host_machine();
	uint8_t other[2];
	char want[128], a[32], b[32];

	patched(4, c32, 1, "a 32-bit ELF file");
	patched(5, be, 1, "a big-endian ELF file");
	patched(16, exec, 2, "an executable (ET_EXEC), not a shared library");
	patched(16, rel, 2, "a relocatable object");
	other[0] = host == 183 ? 62 : 183;	/* x86-64 or AArch64, whichever this is not */
	other[1] = 0;
	snprintf(want, sizeof(want), "built for %s; this machine is %s",
		 bot_elf_machine_name(other[0], a, sizeof(a)), bot_elf_machine_name(host, b, sizeof(b)));
	patched(18, other, 2, want);
}
END_TEST

/* The test program itself: a PIE (or, built without, an ET_EXEC). */
START_TEST(test_executable_refused)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ck_assert_int_gt(n, 0);
	self[n] = 0;
	refused(self, "executable");
}
END_TEST

/* Real libraries that are not tuner plugins: libc (always mapped) and the
 * libm next to it. */
START_TEST(test_system_libraries_refused)
{
	char line[4096], libc[PATH_MAX] = "", libm[PATH_MAX + 16];
	FILE *f = fopen("/proc/self/maps", "r");
	struct stat st;

	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && (strstr(p, "/libc.so") || strstr(p, "/libc-"))) {
			p[strcspn(p, "\n")] = 0;
			snprintf(libc, sizeof(libc), "%s", p);
			break;
		}
	}
	fclose(f);
	ck_assert_msg(libc[0], "libc not found in /proc/self/maps");
	refused(libc, "exports none of the NCCL tuner plugin symbols");
	snprintf(libm, sizeof(libm), "%s", libc);
	strcpy(strrchr(libm, '/'), "/libm.so.6");
	if (stat(libm, &st) == 0)
		refused(libm, "exports none of the NCCL tuner plugin symbols");
}
END_TEST

/* ---- the reader on the fuzz target's seeds (x86-64 objects) ----------------- */

struct mem {
	const uint8_t *p;
	size_t n;
};

static int mem_read(void *arg, uint64_t off, void *buf, size_t len)
{
	const struct mem *m = arg;

	ck_assert(off <= m->n && len <= m->n - off);
	memcpy(buf, m->p + off, len);
	return 0;
}

static const char *const seed_names[] = {
	"ncclTunerPlugin_v2", "ncclTunerPlugin_v3", "ncclTunerPlugin_v4", "ncclTunerPlugin_v5",
	"ncclTunerPlugin_v6", "ncclTunerPlugin_v7", "ncclProfiler_v4", "ncclProfiler_v5",
	"ncclProfiler_v6",
};

/* bot_elf_exports on a seed as x86-64: rc, and found or the reason. */
static int seed(const char *name, uint64_t *found, char *why, size_t len)
{
	char path[PATH_MAX];
	struct mem m;
	struct bot_elf_src src = { mem_read, &m, 0 };
	int rc;

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus-elf/%s", BOT_SRCDIR, name);
	m.p = slurp(path, &m.n);
	src.size = m.n;
	rc = bot_elf_exports(&src, 62, seed_names, 9, found, why, len);
	free((void *)m.p);
	return rc;
}

START_TEST(test_reader_on_seeds)
{
	/* v2..v6 and profiler v4, v6: not v7 (hidden), not profiler v5 (a function) */
	const uint64_t all = 0x1f | 1u << 6 | 1u << 8;
	uint64_t found;
	char why[512];

	ck_assert_msg(seed("gnu-hash.so", &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all);
	ck_assert_msg(seed("sysv-hash.so", &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all);
	ck_assert_msg(seed("versioned.so", &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all);
	ck_assert_msg(seed("older-tuner.so", &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all & ~(uint64_t)0x18);
	ck_assert_int_eq(seed("class32", &found, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "32-bit"));
	ck_assert_int_eq(seed("big-endian", &found, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "big-endian"));
	ck_assert_int_eq(seed("exec-type", &found, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "ET_EXEC"));
	ck_assert_int_eq(seed("aarch64", &found, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "built for AArch64; this machine is x86-64"), "%s", why);
	ck_assert_int_eq(seed("truncated", &found, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "truncated"), "%s", why);
	ck_assert_int_eq(seed("text", &found, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "not an ELF file"));
	ck_assert_uint_eq(found, 0);
}
END_TEST

/* Another tuner plugin (the x86-64 seeds, checked as files where this is
 * x86-64): one exporting every tuner symbol passes, without profiler if it
 * lacks one; an older one is refused naming what it lacks. */
START_TEST(test_other_plugins)
{
	struct bot_ranklib r;
	char path[PATH_MAX], err[1024];

	if (bot_elf_host_machine() != 62)
		return;
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus-elf/gnu-hash.so", BOT_SRCDIR);
	if (path[0] != '/')
		return;
	ck_assert_msg(bot_ranklib_check(path, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(r.profiler, 0);	/* ncclProfiler_v5 is a function there */
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus-elf/older-tuner.so", BOT_SRCDIR);
	refused(path, "does not export ncclTunerPlugin_v5, ncclTunerPlugin_v6: another tuner "
		"plugin, or another build of nccl-bot's");
}
END_TEST

/* The lists the check requires are what the rank-side library exports. */
START_TEST(test_symbols_match_exports_map)
{
	char path[PATH_MAX], line[256];
	FILE *f;
	size_t nt = 0, np = 0, mt = 0, mp = 0;

	while (bot_ranklib_tuner_syms[nt])
		nt++;
	while (bot_ranklib_profiler_syms[np])
		np++;
	snprintf(path, sizeof(path), "%s/tuner/exports.map", BOT_SRCDIR);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		int found = 0;

		if (sscanf(line, " %63[A-Za-z0-9_];", name) != 1 || strncmp(name, "nccl", 4))
			continue;
		if (!strncmp(name, "ncclTunerPlugin_v", 17)) {
			for (size_t i = 0; i < nt; i++)
				found |= !strcmp(name, bot_ranklib_tuner_syms[i]);
			mt++;
		} else {
			for (size_t i = 0; i < np; i++)
				found |= !strcmp(name, bot_ranklib_profiler_syms[i]);
			mp++;
		}
		ck_assert_msg(found, "%s (tuner/exports.map) is not in learn/ranklib.c's list", name);
	}
	fclose(f);
	ck_assert_uint_eq(mt, nt);
	ck_assert_uint_eq(mp, np);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ranklib");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_built_library_accepted);
	tcase_add_test(tc, test_not_files_refused);
	tcase_add_test(tc, test_truncated_refused);
	tcase_add_test(tc, test_foreign_objects_refused);
	tcase_add_test(tc, test_executable_refused);
	tcase_add_test(tc, test_system_libraries_refused);
	tcase_add_test(tc, test_reader_on_seeds);
	tcase_add_test(tc, test_other_plugins);
	tcase_add_test(tc, test_symbols_match_exports_map);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
