/*
 * test_ncclver.c - tuner/ncclver.c, compiled into this test (its static
 * lookup functions included), so that the sanitizer build checks it with
 * UBSan too (the .so is never instrumented).
 *
 * Checks: the GNU hash lookup finds ncclGetVersion in a hand-made table
 * and refuses a bloom shift of 32 or more (undefined on a 32-bit hash; a
 * malformed object) rather than shifting by it; bot_ncclver() asks only
 * the object that holds the hint: this binary exports ncclGetVersion()
 * (linked with --export-dynamic-symbol, as libnccl exports it), so a hint
 * here gives its answer, and a hint in libc, which exports none, gives 0,
 * never this binary's (the first in load order), as does no hint.
 */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "tests/unit/testutil.h"
#include "tuner/ncclver.c"

static int fake_version = 22907;

int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
	*version = fake_version;
	return 0;
}

/* ---- a hand-made dynamic symbol table with a GNU hash -------------------- */

static const char strtab[] = "\0ncclGetVersion\0other";
static ElfW(Sym) symtab[3];
/* header, one bloom word, one bucket, two chain entries */
static _Alignas(ElfW(Addr)) uint32_t table[4 + sizeof(ElfW(Addr)) / 4 + 1 + 2];

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/* One bucket, symbols 1.. (ncclGetVersion, other) in the chain, a bloom
 * word with every bit set, the given shift. */
static void make(struct dyn *d, uint32_t shift)
{
	ElfW(Addr) *bloom = (ElfW(Addr) *)&table[4];
	uint32_t *buckets = (uint32_t *)&bloom[1], *chain = &buckets[1];

	memset(symtab, 0, sizeof(symtab));
	symtab[1].st_name = 1;
	symtab[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	symtab[1].st_shndx = 12;
	symtab[1].st_value = 0x1000;
	symtab[2].st_name = 16;
	symtab[2].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	symtab[2].st_shndx = 12;
	symtab[2].st_value = 0x2000;
	table[0] = 1;		/* nbuckets */
	table[1] = 1;		/* symoffset */
	table[2] = 1;		/* bloom words */
	table[3] = shift;
	bloom[0] = ~(ElfW(Addr))0;
	buckets[0] = 1;
	chain[0] = gnu_hash("ncclGetVersion") & ~1u;
	chain[1] = gnu_hash("other") | 1u;	/* last of the chain */
	memset(d, 0, sizeof(*d));
	d->symtab = symtab;
	d->strtab = strtab;
	d->strsz = sizeof(strtab);
	d->gnu_hash = table;
}

START_TEST(test_gnu_hash_lookup)
{
	struct dyn d;

	make(&d, 6);
	ck_assert_uint_eq(find_gnu(&d), 1);
	make(&d, 31);
	ck_assert_uint_eq(find_gnu(&d), 1);
	/* a shift the 32-bit hash cannot take: refused, not undefined */
	make(&d, 32);
	ck_assert_uint_eq(find_gnu(&d), 0);
	make(&d, 40);
	ck_assert_uint_eq(find_gnu(&d), 0);
	make(&d, UINT32_MAX);
	ck_assert_uint_eq(find_gnu(&d), 0);
}
END_TEST

static void hint_fn(void)
{
}

START_TEST(test_only_the_hint)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *in_libc = libc ? dlsym(libc, "getpid") : NULL;
	void (*fn)(void) = hint_fn;
	const void *here;

	memcpy(&here, &fn, sizeof(here));
	ck_assert_ptr_nonnull(in_libc);
	ck_assert_int_eq(bot_ncclver(here), 22907);
	fake_version = 22809;
	ck_assert_int_eq(bot_ncclver(here), 22809);
	/* libc exports no ncclGetVersion; this binary, loaded first, does */
	ck_assert_int_eq(bot_ncclver(in_libc), 0);
	ck_assert_int_eq(bot_ncclver(NULL), 0);
	/* an address no object holds */
	ck_assert_int_eq(bot_ncclver((const void *)(uintptr_t)16), 0);
	dlclose(libc);
}
END_TEST

static Suite *ncclver_suite(void)
{
	Suite *s = suite_create("ncclver");
	TCase *tc = tcase_create("lookup");

	tcase_add_test(tc, test_gnu_hash_lookup);
	tcase_add_test(tc, test_only_the_hint);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(ncclver_suite)
