/*
 * test_ranklib.c - the rank library check (learn/ranklib.h) and its ELF
 * reader (learn/elfread.h).
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
 * symbol that must not count, a zeroed Bloom filter - and against dlsym()
 * on those objects; on objects built here it does the loader's lookup
 * (Bloom filter, buckets, chains, glibc's symbol checks, the dynamic
 * entries at PT_DYNAMIC's address) in a bounded number of reads, and a
 * file that shrinks is "changed while being read". Paths: what NCCL is
 * pointed at keeps links, normalised lexically; devices and FIFOs are
 * looked at, never opened. And the symbol lists equal tuner/exports.map.
 */
#include <check.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "learn/elfread.h"
#include "learn/ranklib.h"
#include "tests/unit/testutil.h"

#ifndef BOT_TUNER_SO
#define BOT_TUNER_SO "tuner/libnccl-tuner-bot.so"
#endif
#ifndef BOT_SRCDIR
#define BOT_SRCDIR "."
#endif

static char dir[64];

/* ---- open() watched ------------------------------------------------------ */

/* The library is linked into this program: its open() calls land here, so
 * a test can say that a path was never opened (a device's open can have
 * side effects; only regular files may be opened). */
static const char *watch;
static int watched_opens;

int open(const char *path, int flags, ...)
{
	static int (*real)(const char *, int, ...);
	va_list ap;
	int mode = 0;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "open");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_start(ap, flags);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	if (watch && !strcmp(path, watch))
		watched_opens++;
	return real(path, flags, mode);
}

static void setup(void)
{
	bot_test_mkdtemp(dir, sizeof(dir), "ranklib");
}

static void teardown(void)
{
	bot_test_rmtree(dir);
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
	ck_assert_str_eq(r.path, BOT_TUNER_SO);
	ck_assert_str_eq(r.real, real);
	ck_assert_int_eq(r.profiler, 1);
	/* a link (as an installed libnccl-profiler-bot.so is): NCCL is pointed
	 * at the link, the file behind it is checked */
	snprintf(link, sizeof(link), "%s/libnccl-tuner-bot.so", dir);
	ck_assert_int_eq(symlink(real, link), 0);
	ck_assert_msg(bot_ranklib_check(link, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.path, link);
	ck_assert_str_eq(r.real, real);
}
END_TEST

/* bot_elf_needed on the built rank library: libc.so.6 and libpthread.so.0
 * (tests/unit/test_so_deps.sh's list), no run path; on the head of the
 * file alone (the dynamic segment cut off): refused, nothing kept. */
START_TEST(test_needed_of_built_library)
{
	struct bot_elf_deps *deps = malloc(sizeof(*deps));
	struct bot_elf_src src;
	struct stat st;
	char why[512] = "";
	int fd = open(BOT_TUNER_SO, O_RDONLY | O_CLOEXEC), libc = 0, pthread = 0;

	ck_assert_ptr_nonnull(deps);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	src.read = bot_elf_fd_read;
	src.arg = &fd;
	src.size = (uint64_t)st.st_size;
	ck_assert_msg(bot_elf_needed(&src, bot_elf_host_machine(), deps, why, sizeof(why)) == 0,
		      "%s", why);
	ck_assert_uint_eq(deps->n, 2);
	for (size_t i = 0; i < deps->n; i++) {
		libc += !strcmp(deps->needed[i], "libc.so.6");
		pthread += !strcmp(deps->needed[i], "libpthread.so.0");
	}
	ck_assert_int_eq(libc, 1);
	ck_assert_int_eq(pthread, 1);
	ck_assert_str_eq(deps->runpath, "");
	/* another machine's: refused */
	ck_assert_int_eq(bot_elf_needed(&src, bot_elf_host_machine() ^ 1, deps, why, sizeof(why)),
			 -1);
	ck_assert_uint_eq(deps->n, 0);
	src.size = 4096;
	ck_assert_int_eq(bot_elf_needed(&src, bot_elf_host_machine(), deps, why, sizeof(why)), -1);
	ck_assert_uint_eq(deps->n, 0);
	ck_assert_msg(why[0], "no reason given");
	close(fd);
	free(deps);
}
END_TEST

/* /opt/nccl-bot as a link to site storage: the path NCCL is given keeps
 * the link (a container binding /opt/nccl-bot/<version> opens it), "//",
 * "." and ".." taken out lexically; a ".." that the kernel would take
 * through a link elsewhere is refused. */
START_TEST(test_path_kept_lexically)
{
	struct bot_ranklib r;
	char err[1024], real[PATH_MAX], tdir[PATH_MAX], link[PATH_MAX], path[PATH_MAX + 64];
	char want[PATH_MAX + 64];

	ck_assert_ptr_nonnull(realpath(BOT_TUNER_SO, real));
	snprintf(tdir, sizeof(tdir), "%s", real);
	*strrchr(tdir, '/') = 0;
	snprintf(link, sizeof(link), "%s/opt", dir);
	ck_assert_int_eq(symlink(tdir, link), 0);
	snprintf(path, sizeof(path), "%s//opt/./../opt/libnccl-tuner-bot.so", dir);
	snprintf(want, sizeof(want), "%s/opt/libnccl-tuner-bot.so", dir);
	/* the kernel takes opt/.. through the link: another directory */
	refused(path, "No such file or directory");
	snprintf(path, sizeof(path), "%s//opt/./libnccl-tuner-bot.so", dir);
	ck_assert_msg(bot_ranklib_check(path, &r, err, sizeof(err)) == 0, "%s", err);
	ck_assert_str_eq(r.path, want);
	ck_assert_str_eq(r.real, real);
	/* x/lnk/.. is the link's parent to the kernel, x to the lexical form */
	snprintf(path, sizeof(path), "%s/x", dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/x/lnk", dir);
	ck_assert_int_eq(symlink(tdir, path), 0);
	snprintf(path, sizeof(path), "%s/x/lnk/../%s/libnccl-tuner-bot.so", dir,
		 strrchr(tdir, '/') + 1);
	refused(path, "(a '..' after a symbolic link): name the library without '..'");
}
END_TEST

/* A relative --lib: from the current directory as the shell names it. */
START_TEST(test_abspath)
{
	char out[PATH_MAX], err[256], real[PATH_MAX], tdir[PATH_MAX], link[PATH_MAX];
	char want[PATH_MAX + 64], old[PATH_MAX];
	const char *pwd = getenv("PWD");

	ck_assert_int_eq(bot_ranklib_abspath("/a//b/./c/../d/", out, sizeof(out), err,
					     sizeof(err)), 0);
	ck_assert_str_eq(out, "/a/b/d");
	ck_assert_int_eq(bot_ranklib_abspath("/../..", out, sizeof(out), err, sizeof(err)), 0);
	ck_assert_str_eq(out, "/");
	ck_assert_int_eq(bot_ranklib_abspath("", out, sizeof(out), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(realpath(BOT_TUNER_SO, real));
	snprintf(tdir, sizeof(tdir), "%s", real);
	*strrchr(tdir, '/') = 0;
	snprintf(link, sizeof(link), "%s/opt", dir);
	ck_assert_int_eq(symlink(tdir, link), 0);
	ck_assert_ptr_nonnull(getcwd(old, sizeof(old)));
	ck_assert_int_eq(chdir(link), 0);
	/* $PWD names the current directory through the link: kept */
	setenv("PWD", link, 1);
	ck_assert_int_eq(bot_ranklib_abspath("./libnccl-tuner-bot.so", out, sizeof(out), err,
					     sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s/libnccl-tuner-bot.so", link);
	ck_assert_str_eq(out, want);
	ck_assert_int_eq(bot_ranklib_abspath("../opt/libnccl-tuner-bot.so", out, sizeof(out), err,
					     sizeof(err)), 0);
	ck_assert_str_eq(out, want);
	/* a $PWD that is not the current directory is not believed */
	setenv("PWD", "/", 1);
	ck_assert_int_eq(bot_ranklib_abspath("libnccl-tuner-bot.so", out, sizeof(out), err,
					     sizeof(err)), 0);
	ck_assert_str_eq(out, real);
	ck_assert_int_eq(chdir(old), 0);
	if (pwd)
		setenv("PWD", pwd, 1);
}
END_TEST

START_TEST(test_not_files_refused)
{
	char path[128], link[128];

	refused("tuner/libnccl-tuner-bot.so", "not an absolute path");
	refused("", "empty path");
	refused("/nonexistent/libnccl-tuner-bot.so", "No such file or directory");
	refused("/tmp", "a directory, not a shared library");
	refused(dir, "a directory, not a shared library");
	/* looked at, never opened */
	watch = "/dev/null";
	watched_opens = 0;
	refused("/dev/null", "a character device, not a shared library");
	snprintf(link, sizeof(link), "%s/null.so", dir);
	ck_assert_int_eq(symlink("/dev/null", link), 0);
	refused(link, "a character device, not a shared library");
	ck_assert_int_eq(watched_opens, 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	watch = path;
	refused(path, "a FIFO, not a shared library");
	ck_assert_int_eq(watched_opens, 0);
	watch = NULL;
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
	/* the Bloom filter zeroed: dlsym() finds nothing, nor does the reader */
	ck_assert_msg(seed("zeroed-bloom.so", &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, 0);
	ck_assert_int_eq(seed("truncated", &found, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "truncated"), "%s", why);
	ck_assert_int_eq(seed("text", &found, why, sizeof(why)), -1);
	ck_assert_ptr_nonnull(strstr(why, "not an ELF file"));
	ck_assert_uint_eq(found, 0);
}
END_TEST

/* ---- the loader's lookup on objects built here --------------------------- */

/*
 * A minimal ELF64 x86-64 shared object in memory, addresses equal to file
 * offsets, one PT_LOAD over everything: the header, PT_LOAD and PT_DYNAMIC,
 * the dynamic entries, a string table, data-object symbols 1..n, and a GNU
 * hash table (symoffset 1, one Bloom word, shift 6) or a System V one, built
 * as GNU ld builds them. Options break one thing at a time.
 */
struct synth {
	int sysv;		/* DT_HASH instead of DT_GNU_HASH */
	uint32_t nbuckets;
	int zero_bloom;		/* every Bloom word 0: dlsym() looks no further */
	uint32_t long_chain;	/* GNU: a chain of this many entries, no end bit */
	int sysv_loop;		/* System V: every chain entry points at itself */
	int zero_value;		/* symbol 1 (ncclTunerPlugin_v2) has st_value 0 */
	int local_bind;		/* symbol 2 (v3) is STB_LOCAL */
	int dyn_offset_junk;	/* PT_DYNAMIC's p_offset points elsewhere */
};

static const char *const synth_names[] = {
	"ncclTunerPlugin_v2", "ncclTunerPlugin_v3", "ncclTunerPlugin_v4", "ncclTunerPlugin_v5",
	"ncclTunerPlugin_v6", "ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6",
};
#define SYNTH_N 8

static uint32_t bot_le_get32_t(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)v); put16(p + 2, (uint16_t)(v >> 16)); }
static void put64(uint8_t *p, uint64_t v) { put32(p, (uint32_t)v); put32(p + 4, (uint32_t)(v >> 32)); }

static uint32_t t_gnu_hash(const char *s)
{
	uint32_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static uint32_t t_sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	while (*s) {
		h = (h << 4) + (unsigned char)*s++;
		g = h & 0xf0000000u;
		h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static uint8_t *synth_build(const struct synth *o, size_t *len)
{
	uint32_t nb = o->nbuckets ? o->nbuckets : 3, order[SYNTH_N], strpos[SYNTH_N];
	size_t dyn = 64 + 2 * 56, str = dyn + 6 * 16, sym, hash, end, p = 1, n = 0;
	uint8_t *b;

	/* GNU hash: symbols ordered by bucket */
	for (uint32_t i = 0; i < SYNTH_N; i++)
		order[i] = i;
	for (uint32_t i = 0; i < SYNTH_N; i++)
		for (uint32_t j = i + 1; j < SYNTH_N; j++)
			if (!o->sysv && t_gnu_hash(synth_names[order[j]]) % nb <
					t_gnu_hash(synth_names[order[i]]) % nb) {
				uint32_t t = order[i];

				order[i] = order[j];
				order[j] = t;
			}
	for (uint32_t i = 0; i < SYNTH_N; i++)
		n += strlen(synth_names[i]) + 1;
	sym = (str + 1 + n + 7) & ~(size_t)7;
	hash = sym + 24 * (SYNTH_N + 1);
	if (o->sysv)
		end = hash + 8 + 4 * nb + 4 * (SYNTH_N + 1);
	else
		end = hash + 16 + 8 + 4 * nb + 4 * (o->long_chain ? o->long_chain : SYNTH_N);
	b = calloc(1, end);
	ck_assert_ptr_nonnull(b);
	/* ELF header */
	memcpy(b, "\177ELF\2\1\1", 7);
	put16(b + 16, 3);		/* ET_DYN */
	put16(b + 18, 62);		/* x86-64 */
	put32(b + 20, 1);
	put64(b + 32, 64);		/* phoff */
	put16(b + 52, 64);
	put16(b + 54, 56);
	put16(b + 56, 2);
	/* PT_LOAD over the file, PT_DYNAMIC */
	put32(b + 64, 1);
	put64(b + 64 + 16, 0);
	put64(b + 64 + 32, end);
	put64(b + 64 + 40, end);
	put32(b + 120, 2);
	put64(b + 120 + 8, o->dyn_offset_junk ? str : dyn);
	put64(b + 120 + 16, dyn);
	put64(b + 120 + 32, 6 * 16);
	/* dynamic entries */
	put64(b + dyn, o->sysv ? 4 : 0x6ffffef5ull);
	put64(b + dyn + 8, hash);
	put64(b + dyn + 16, 5);
	put64(b + dyn + 24, str);
	put64(b + dyn + 32, 6);
	put64(b + dyn + 40, sym);
	put64(b + dyn + 48, 10);
	put64(b + dyn + 56, 1 + n);
	put64(b + dyn + 64, 11);
	put64(b + dyn + 72, 24);
	/* strings */
	for (uint32_t i = 0; i < SYNTH_N; i++) {
		strpos[i] = (uint32_t)p;
		memcpy(b + str + p, synth_names[i], strlen(synth_names[i]) + 1);
		p += strlen(synth_names[i]) + 1;
	}
	/* symbols 1..N in hash order */
	for (uint32_t k = 0; k < SYNTH_N; k++) {
		uint8_t *q = b + sym + 24 * (k + 1);
		uint32_t i = order[k];

		put32(q, strpos[i]);
		q[4] = (uint8_t)((i == 1 && o->local_bind ? 0 : 1) << 4 | 1);	/* OBJECT */
		put16(q + 6, 1);
		put64(q + 8, i == 0 && o->zero_value ? 0 : 0x1000 + 64 * i);
		put64(q + 16, 56);
	}
	if (o->sysv) {
		uint8_t *bk = b + hash + 8, *ch = bk + 4 * nb;

		put32(b + hash, nb);
		put32(b + hash + 4, SYNTH_N + 1);
		for (uint32_t k = 0; k < SYNTH_N; k++) {
			uint32_t h = t_sysv_hash(synth_names[order[k]]) % nb;

			put32(ch + 4 * (k + 1), bot_le_get32_t(bk + 4 * h));
			put32(bk + 4 * h, k + 1);
		}
		if (o->sysv_loop)	/* every chain entry points at itself */
			for (uint32_t k = 1; k <= SYNTH_N; k++)
				put32(ch + 4 * k, k);
	} else {
		uint8_t *bloom = b + hash + 16, *bk = bloom + 8, *ch = bk + 4 * nb;
		uint64_t word = 0;

		put32(b + hash, nb);
		put32(b + hash + 4, 1);
		put32(b + hash + 8, 1);
		put32(b + hash + 12, 6);
		for (uint32_t k = 0; k < SYNTH_N; k++) {
			uint32_t h = t_gnu_hash(synth_names[order[k]]), bucket = h % nb;
			int last = k + 1 == SYNTH_N ||
				   t_gnu_hash(synth_names[order[k + 1]]) % nb != bucket;

			word |= 1ull << (h % 64) | 1ull << ((h >> 6) % 64);
			if (!bot_le_get32_t(bk + 4 * bucket))
				put32(bk + 4 * bucket, k + 1);
			put32(ch + 4 * k, (h & ~1u) | (uint32_t)last);
		}
		put64(bloom, o->zero_bloom ? 0 : word);
		if (o->long_chain) {
			/* bucket 0 starts a chain with no end, of no symbol's hash */
			put32(bk, 1);
			for (uint32_t k = 0; k < o->long_chain; k++)
				put32(ch + 4 * k, 2);
		}
	}
	*len = end;
	return b;
}

/* bot_elf_exports on a synthetic object, counting reads. */
static unsigned nreads;

static int counting_read(void *arg, uint64_t off, void *buf, size_t len)
{
	nreads++;
	return mem_read(arg, off, buf, len);
}

static int synth_check(const struct synth *o, uint64_t *found, char *why, size_t len)
{
	struct mem m;
	struct bot_elf_src src = { counting_read, &m, 0 };
	int rc;

	m.p = synth_build(o, &m.n);
	src.size = m.n;
	nreads = 0;
	rc = bot_elf_exports(&src, 62, synth_names, SYNTH_N, found, why, len);
	free((void *)m.p);
	return rc;
}

START_TEST(test_loader_lookup)
{
	struct synth o;
	uint64_t found, all = (1u << SYNTH_N) - 1;
	char why[512];

	memset(&o, 0, sizeof(o));
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all);
	ck_assert_uint_lt(nreads, 64);
	o.sysv = 1;
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all);
	/* the dynamic entries are where p_vaddr says (ld.so ignores p_offset) */
	memset(&o, 0, sizeof(o));
	o.dyn_offset_junk = 1;
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all);
	/* a zeroed Bloom word: dlsym() fails, so nothing is exported */
	memset(&o, 0, sizeof(o));
	o.zero_bloom = 1;
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, 0);
	/* glibc's check_match: a symbol with value 0 is not found; a local
	 * binding is passed over */
	memset(&o, 0, sizeof(o));
	o.zero_value = 1;
	o.local_bind = 1;
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all & ~(uint64_t)3);
	o.sysv = 1;
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, all & ~(uint64_t)3);
}
END_TEST

/* Bounded work whatever the tables say: 2^20 buckets cost a few reads (a
 * read per bucket made a crafted file cost millions of system calls), a
 * chain without an end is cut at 2^20 symbols in chunks, a System V chain
 * that loops is refused. */
START_TEST(test_lookup_bounded)
{
	struct synth o;
	uint64_t found;
	char why[512];

	memset(&o, 0, sizeof(o));
	o.nbuckets = (1u << 20) - 1;
	ck_assert_msg(synth_check(&o, &found, why, sizeof(why)) == 0, "%s", why);
	ck_assert_uint_eq(found, (1u << SYNTH_N) - 1);
	ck_assert_uint_lt(nreads, 64);
	memset(&o, 0, sizeof(o));
	o.nbuckets = 1;
	o.long_chain = 1u << 20;
	ck_assert_int_eq(synth_check(&o, &found, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "a chain past 2^20 symbols"), "%s", why);
	ck_assert_uint_lt(nreads, 400);
	memset(&o, 0, sizeof(o));
	o.sysv = 1;
	o.sysv_loop = 1;
	ck_assert_int_eq(synth_check(&o, &found, why, sizeof(why)), -1);
	ck_assert_msg(strstr(why, "a chain that loops"), "%s", why);
}
END_TEST

/* A file that ends before the size it had: "changed while being read". */
static size_t shrunk_to;

static int shrinking_read(void *arg, uint64_t off, void *buf, size_t len)
{
	if (off + len > shrunk_to)
		return -2;
	return mem_read(arg, off, buf, len);
}

START_TEST(test_changed_while_read)
{
	struct synth o;
	struct mem m;
	struct bot_elf_src src = { shrinking_read, &m, 0 };
	uint64_t found;
	char why[512];

	memset(&o, 0, sizeof(o));
	m.p = synth_build(&o, &m.n);
	src.size = m.n;
	shrunk_to = m.n / 2;
	ck_assert_int_eq(bot_elf_exports(&src, 62, synth_names, SYNTH_N, &found, why, sizeof(why)),
			 -1);
	ck_assert_msg(strstr(why, "changed while being read"), "%s", why);
	free((void *)m.p);
}
END_TEST

/* The zeroed Bloom word on a real object (the fuzz seed, x86-64): refused
 * by the check, and dlsym() indeed finds nothing in it; the reader agrees
 * with dlsym() on every seed object for every name but the function
 * ncclProfiler_v5 (dlsym() returns it; it is no plugin struct). */
START_TEST(test_reader_agrees_with_dlsym)
{
	static const char *const objs[] = { "gnu-hash.so", "sysv-hash.so", "versioned.so",
					    "older-tuner.so", "zeroed-bloom.so" };
	char path[PATH_MAX], why[512], err[1024];
	struct bot_ranklib r;

	if (bot_elf_host_machine() != 62 || BOT_SRCDIR[0] != '/')
		return;
	for (size_t k = 0; k < sizeof(objs) / sizeof(objs[0]); k++) {
		uint64_t found;
		void *h;

		snprintf(path, sizeof(path), "%s/tests/fuzz/corpus-elf/%s", BOT_SRCDIR, objs[k]);
		ck_assert_msg(seed(objs[k], &found, why, sizeof(why)) == 0, "%s: %s", objs[k], why);
		h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		ck_assert_msg(h != NULL, "%s: %s", path, dlerror());
		for (int i = 0; i < 9; i++) {
			if (!strcmp(seed_names[i], "ncclProfiler_v5"))
				continue;
			ck_assert_msg(!!(found >> i & 1) == (dlsym(h, seed_names[i]) != NULL),
				      "%s: %s: the reader says %d, dlsym() disagrees", objs[k],
				      seed_names[i], (int)(found >> i & 1));
		}
		dlclose(h);
	}
	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus-elf/zeroed-bloom.so", BOT_SRCDIR);
	ck_assert_int_eq(bot_ranklib_check(path, &r, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "exports none of the NCCL tuner plugin symbols"), "%s", err);
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

static Suite *ranklib_suite(void)
{
	Suite *s = suite_create("ranklib");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_built_library_accepted);
	tcase_add_test(tc, test_needed_of_built_library);
	tcase_add_test(tc, test_path_kept_lexically);
	tcase_add_test(tc, test_abspath);
	tcase_add_test(tc, test_not_files_refused);
	tcase_add_test(tc, test_truncated_refused);
	tcase_add_test(tc, test_foreign_objects_refused);
	tcase_add_test(tc, test_executable_refused);
	tcase_add_test(tc, test_system_libraries_refused);
	tcase_add_test(tc, test_reader_on_seeds);
	tcase_add_test(tc, test_loader_lookup);
	tcase_add_test(tc, test_lookup_bounded);
	tcase_add_test(tc, test_changed_while_read);
	tcase_add_test(tc, test_reader_agrees_with_dlsym);
	tcase_add_test(tc, test_other_plugins);
	tcase_add_test(tc, test_symbols_match_exports_map);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(ranklib_suite)
