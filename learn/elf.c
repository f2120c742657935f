/*
 * elf.c - does a file export some names the way the dynamic loader would
 * find them (learn/elf.h)?
 *
 * The walk: ELF header (64 bytes: magic, class, byte order, type, machine),
 * program headers (PT_LOAD segments map addresses to file offsets; the one
 * PT_DYNAMIC), the dynamic entries (where the symbol, string, hash and
 * version tables are, and DF_1_PIE), the hash table (how many symbols
 * dlsym() can reach), then the symbols themselves. Addresses become file
 * offsets only inside a PT_LOAD segment's file part, which is checked to lie
 * inside the file; the constants are the System V ABI's and GNU's, written
 * out here rather than taken from <elf.h> so that the reader stays the same
 * on every host.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errf.h"
#include "common/le.h"
#include "learn/elf.h"

#define EHDR_SIZE 64
#define PHDR_SIZE 56
#define DYN_SIZE 16
#define SYM_SIZE 24

enum { ELF_ET_REL = 1, ELF_ET_EXEC = 2, ELF_ET_DYN = 3, ELF_ET_CORE = 4 };
enum { ELF_PT_LOAD = 1, ELF_PT_DYNAMIC = 2 };
enum {
	ELF_DT_NULL = 0,
	ELF_DT_HASH = 4,
	ELF_DT_STRTAB = 5,
	ELF_DT_SYMTAB = 6,
	ELF_DT_STRSZ = 10,
	ELF_DT_SYMENT = 11,
};
#define ELF_DT_GNU_HASH 0x6ffffef5ull
#define ELF_DT_VERSYM 0x6ffffff0ull
#define ELF_DT_FLAGS_1 0x6ffffffbull
#define ELF_DF_1_PIE 0x08000000ull
#define ELF_STT_OBJECT 1
#define ELF_STB_GLOBAL 1
#define ELF_STB_WEAK 2
#define ELF_STB_GNU_UNIQUE 10
#define ELF_STV_DEFAULT 0
#define ELF_STV_PROTECTED 3
#define ELF_VERSYM_HIDDEN 0x8000u

struct seg {
	uint64_t off, vaddr, filesz;
};

struct elf {
	const struct bot_elf_src *src;
	struct seg *load;
	size_t nload;
	char *why;
	size_t whylen;
};

static int rd(const struct elf *e, uint64_t off, void *buf, size_t len, const char *what)
{
	if (off > e->src->size || len > e->src->size - off)
		return bot_errf(e->why, e->whylen, "truncated: %s (offset %" PRIu64 ", %zu bytes) "
				"ends past the end of the file (%" PRIu64 " bytes)", what, off, len,
				e->src->size);
	if (e->src->read(e->src->arg, off, buf, len) < 0)
		return bot_errf(e->why, e->whylen, "cannot read %s at offset %" PRIu64, what, off);
	return 0;
}

/* The file offset of [vaddr, vaddr + len) inside one loadable segment. */
static int v2o(const struct elf *e, uint64_t vaddr, uint64_t len, uint64_t *off,
	       const char *what)
{
	for (size_t i = 0; i < e->nload; i++) {
		const struct seg *s = &e->load[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr)) {
			*off = s->off + (vaddr - s->vaddr);
			return 0;
		}
	}
	return bot_errf(e->why, e->whylen, "the %s (address 0x%" PRIx64 ", %" PRIu64 " bytes) is "
			"not inside a loadable segment", what, vaddr, len);
}

/* malloc()ed copy of [vaddr, vaddr + len). */
static uint8_t *fetch(const struct elf *e, uint64_t vaddr, uint64_t len, const char *what)
{
	uint64_t off;
	uint8_t *b;

	if (v2o(e, vaddr, len, &off, what) < 0)
		return NULL;
	b = malloc(len ? (size_t)len : 1);
	if (!b) {
		bot_errf(e->why, e->whylen, "out of memory reading the %s", what);
		return NULL;
	}
	if (rd(e, off, b, (size_t)len, what) < 0) {
		free(b);
		return NULL;
	}
	return b;
}

static uint32_t get32_at(const struct elf *e, uint64_t vaddr, int *rc, const char *what)
{
	uint8_t b[4];
	uint64_t off;

	if (*rc < 0 || v2o(e, vaddr, 4, &off, what) < 0 || rd(e, off, b, 4, what) < 0) {
		*rc = -1;
		return 0;
	}
	return bot_le_get32(b);
}

/* DT_GNU_HASH: symbols [symoffset, n) are the ones dlsym() can reach; n is
 * one past the end of the chain of the highest bucket. */
static int gnu_hash_count(const struct elf *e, uint64_t addr, uint64_t *first, uint64_t *n)
{
	uint32_t nbuckets, symoffset, bloom, max = 0, v;
	uint64_t buckets, chains, idx;
	int rc = 0;

	nbuckets = get32_at(e, addr, &rc, "GNU hash table");
	symoffset = get32_at(e, addr + 4, &rc, "GNU hash table");
	bloom = get32_at(e, addr + 8, &rc, "GNU hash table");
	if (rc < 0)
		return -1;
	if (nbuckets > BOT_ELF_MAX_SYMS || bloom > BOT_ELF_MAX_SYMS || symoffset > BOT_ELF_MAX_SYMS)
		return bot_errf(e->why, e->whylen, "GNU hash table: %u buckets, %u bloom words, "
				"symbol offset %u (at most 2^20 each)", nbuckets, bloom, symoffset);
	if (addr > UINT64_MAX - 16 - 8ull * bloom - 4ull * nbuckets)
		return bot_errf(e->why, e->whylen, "GNU hash table: address 0x%" PRIx64 " overflows",
				addr);
	buckets = addr + 16 + 8ull * bloom;
	chains = buckets + 4ull * nbuckets;
	for (uint32_t b = 0; b < nbuckets; b++) {
		v = get32_at(e, buckets + 4ull * b, &rc, "GNU hash buckets");
		if (rc < 0)
			return -1;
		if (v && v < symoffset)
			return bot_errf(e->why, e->whylen, "GNU hash table: bucket %u names symbol %u, "
					"below the symbol offset %u", b, v, symoffset);
		if (v > max)
			max = v;
	}
	*first = symoffset;
	if (!max) {
		*n = symoffset;
		return 0;
	}
	for (idx = max;; idx++) {
		if (idx >= BOT_ELF_MAX_SYMS)
			return bot_errf(e->why, e->whylen, "GNU hash table: a chain past 2^20 symbols");
		v = get32_at(e, chains + 4 * (idx - symoffset), &rc, "GNU hash chains");
		if (rc < 0)
			return -1;
		if (v & 1)
			break;
	}
	*n = idx + 1;
	return 0;
}

/* What the dynamic segment says. */
struct dyn {
	uint64_t hash, gnu_hash, strtab, symtab, strsz, syment, versym, flags1;
	int has_hash, has_gnu_hash, has_strtab, has_symtab, has_strsz, has_versym;
};

static int read_dynamic(const struct elf *e, uint64_t off, uint64_t filesz, struct dyn *d)
{
	uint64_t n = filesz / DYN_SIZE;
	uint8_t *b;
	int done = 0;

	memset(d, 0, sizeof(*d));
	if (n > BOT_ELF_MAX_DYN)
		n = BOT_ELF_MAX_DYN;
	b = malloc(n ? (size_t)n * DYN_SIZE : 1);
	if (!b)
		return bot_errf(e->why, e->whylen, "out of memory");
	if (rd(e, off, b, (size_t)n * DYN_SIZE, "dynamic segment") < 0) {
		free(b);
		return -1;
	}
	for (uint64_t i = 0; i < n && !done; i++) {
		uint64_t tag = bot_le_get64(b + i * DYN_SIZE), val = bot_le_get64(b + i * DYN_SIZE + 8);

		switch (tag) {
		case ELF_DT_NULL:
			done = 1;
			break;
		case ELF_DT_HASH:
			d->hash = val;
			d->has_hash = 1;
			break;
		case ELF_DT_STRTAB:
			d->strtab = val;
			d->has_strtab = 1;
			break;
		case ELF_DT_SYMTAB:
			d->symtab = val;
			d->has_symtab = 1;
			break;
		case ELF_DT_STRSZ:
			d->strsz = val;
			d->has_strsz = 1;
			break;
		case ELF_DT_SYMENT:
			d->syment = val;
			break;
		case ELF_DT_GNU_HASH:
			d->gnu_hash = val;
			d->has_gnu_hash = 1;
			break;
		case ELF_DT_VERSYM:
			d->versym = val;
			d->has_versym = 1;
			break;
		case ELF_DT_FLAGS_1:
			d->flags1 = val;
			break;
		}
	}
	free(b);
	if (!done)
		return bot_errf(e->why, e->whylen, "the dynamic segment has no DT_NULL in its first "
				"%" PRIu64 " entries", n);
	return 0;
}

/* The ELF header: a 64-bit little-endian shared object for machine. */
static int check_header(const struct elf *e, const uint8_t *h, unsigned machine)
{
	unsigned type = bot_le_get16(h + 16), mach = bot_le_get16(h + 18);
	char a[32], b[32];

	if (memcmp(h, "\177ELF", 4))
		return bot_errf(e->why, e->whylen, "not an ELF file (no ELF magic number)");
	if (h[4] == 1)
		return bot_errf(e->why, e->whylen, "a 32-bit ELF file (ELFCLASS32); NCCL loads "
				"64-bit libraries here");
	if (h[4] != 2)
		return bot_errf(e->why, e->whylen, "ELF class %u is neither 32- nor 64-bit", h[4]);
	if (h[5] == 2)
		return bot_errf(e->why, e->whylen, "a big-endian ELF file; this machine is "
				"little-endian");
	if (h[5] != 1)
		return bot_errf(e->why, e->whylen, "unknown ELF byte order %u", h[5]);
	if (h[6] != 1 || bot_le_get32(h + 20) != 1)
		return bot_errf(e->why, e->whylen, "ELF version %u/%u (want 1)", h[6],
				bot_le_get32(h + 20));
	if (type != ELF_ET_DYN)
		return bot_errf(e->why, e->whylen, "%s, not a shared library",
				type == ELF_ET_EXEC ? "an executable (ET_EXEC)" :
				type == ELF_ET_REL ? "a relocatable object (ET_REL, a .o file)" :
				type == ELF_ET_CORE ? "a core dump (ET_CORE)" : "an ELF file of unknown type");
	if (!machine)
		return bot_errf(e->why, e->whylen, "this build does not know its own machine type");
	if (mach != machine)
		return bot_errf(e->why, e->whylen, "built for %s; this machine is %s",
				bot_elf_machine_name(mach, a, sizeof(a)),
				bot_elf_machine_name(machine, b, sizeof(b)));
	if (bot_le_get16(h + 54) != PHDR_SIZE)
		return bot_errf(e->why, e->whylen, "program header size %u (want %d)",
				bot_le_get16(h + 54), PHDR_SIZE);
	return 0;
}

/* Program headers: the loadable segments into e->load, the dynamic one into *dyn. */
static int read_segments(struct elf *e, const uint8_t *h, struct seg *dyn)
{
	uint64_t phoff = bot_le_get64(h + 32);
	unsigned phnum = bot_le_get16(h + 56);
	int ndyn = 0;
	uint8_t *p;

	if (!phnum)
		return bot_errf(e->why, e->whylen, "no program headers: nothing to load");
	if (phnum > BOT_ELF_MAX_PHNUM)
		return bot_errf(e->why, e->whylen, "%u program headers (at most %d)", phnum,
				BOT_ELF_MAX_PHNUM);
	p = malloc((size_t)phnum * PHDR_SIZE);
	e->load = malloc((size_t)phnum * sizeof(*e->load));
	if (!p || !e->load) {
		free(p);
		return bot_errf(e->why, e->whylen, "out of memory");
	}
	if (rd(e, phoff, p, (size_t)phnum * PHDR_SIZE, "the program headers") < 0) {
		free(p);
		return -1;
	}
	for (unsigned i = 0; i < phnum; i++) {
		const uint8_t *q = p + (size_t)i * PHDR_SIZE;
		uint32_t type = bot_le_get32(q);
		struct seg s = { bot_le_get64(q + 8), bot_le_get64(q + 16), bot_le_get64(q + 32) };

		if (type != ELF_PT_LOAD && type != ELF_PT_DYNAMIC)
			continue;
		if (s.off > e->src->size || s.filesz > e->src->size - s.off) {
			free(p);
			return bot_errf(e->why, e->whylen, "truncated: %s segment (program header %u, "
					"offset %" PRIu64 ", %" PRIu64 " bytes) ends past the end of "
					"the file (%" PRIu64 " bytes)",
					type == ELF_PT_LOAD ? "a loadable" : "the dynamic", i, s.off,
					s.filesz, e->src->size);
		}
		if (type == ELF_PT_LOAD) {
			if (s.filesz > bot_le_get64(q + 40)) {
				free(p);
				return bot_errf(e->why, e->whylen, "program header %u: a loadable "
						"segment larger in the file than in memory", i);
			}
			e->load[e->nload++] = s;
		} else {
			*dyn = s;
			ndyn++;
		}
	}
	free(p);
	if (!e->nload)
		return bot_errf(e->why, e->whylen, "no loadable segment");
	if (!ndyn)
		return bot_errf(e->why, e->whylen, "no dynamic segment: not a shared library");
	if (ndyn > 1)
		return bot_errf(e->why, e->whylen, "%d dynamic segments", ndyn);
	return 0;
}

/* Does the symbol at index i export one of names? */
static void match(const uint8_t *sym, const uint8_t *versym, uint64_t i, const char *str,
		  uint64_t strsz, const char *const *names, size_t nnames, uint64_t *found)
{
	const uint8_t *p = sym + i * SYM_SIZE;
	uint32_t name = bot_le_get32(p);
	unsigned bind = p[4] >> 4, type = p[4] & 15, vis = p[5] & 3;

	if (!bot_le_get16(p + 6) || type != ELF_STT_OBJECT ||
	    (bind != ELF_STB_GLOBAL && bind != ELF_STB_WEAK && bind != ELF_STB_GNU_UNIQUE) ||
	    (vis != ELF_STV_DEFAULT && vis != ELF_STV_PROTECTED) || name >= strsz)
		return;
	if (versym) {
		unsigned v = bot_le_get16(versym + 2 * i);

		/* 0: local; hidden: not the default version, dlsym() skips it */
		if (!(v & ~ELF_VERSYM_HIDDEN) || (v & ELF_VERSYM_HIDDEN))
			return;
	}
	for (size_t j = 0; j < nnames; j++) {
		size_t len = strlen(names[j]);

		if (len < strsz - name && !memcmp(str + name, names[j], len) && !str[name + len])
			*found |= 1ull << j;
	}
}

static int scan_symbols(const struct elf *e, const struct dyn *d, const char *const *names,
			size_t nnames, uint64_t *found)
{
	uint64_t first = 1, n = 0;
	uint8_t *str = NULL, *sym = NULL, *versym = NULL;
	int rc = -1;

	if (!d->has_symtab || !d->has_strtab)
		return bot_errf(e->why, e->whylen, "no dynamic symbol table: exports nothing");
	if (d->syment && d->syment != SYM_SIZE)
		return bot_errf(e->why, e->whylen, "dynamic symbols of %" PRIu64 " bytes (want %d)",
				d->syment, SYM_SIZE);
	if (!d->has_strsz || d->strsz > BOT_ELF_MAX_STRSZ)
		return bot_errf(e->why, e->whylen, "a dynamic string table of %s bytes",
				d->has_strsz ? "over 2^26" : "unknown");
	if (d->has_gnu_hash) {
		if (gnu_hash_count(e, d->gnu_hash, &first, &n) < 0)
			return -1;
	} else if (d->has_hash) {
		int r = 0;

		n = get32_at(e, d->hash + 4, &r, "hash table");	/* nchain */
		if (r < 0)
			return -1;
	} else {
		return bot_errf(e->why, e->whylen, "no symbol hash table (DT_GNU_HASH or DT_HASH): "
				"dlsym() finds nothing in it");
	}
	if (n > BOT_ELF_MAX_SYMS)
		return bot_errf(e->why, e->whylen, "%" PRIu64 " dynamic symbols (at most 2^20)", n);
	if (first >= n)
		return 0;	/* no symbol dlsym() can reach */
	if (!(str = fetch(e, d->strtab, d->strsz, "dynamic string table")) ||
	    !(sym = fetch(e, d->symtab, n * SYM_SIZE, "dynamic symbol table")) ||
	    (d->has_versym && !(versym = fetch(e, d->versym, n * 2, "symbol version table"))))
		goto out;
	for (uint64_t i = first; i < n; i++)
		match(sym, versym, i, (const char *)str, d->strsz, names, nnames, found);
	rc = 0;
out:
	free(str);
	free(sym);
	free(versym);
	return rc;
}

int bot_elf_exports(const struct bot_elf_src *src, unsigned machine, const char *const *names,
		    size_t nnames, uint64_t *found, char *why, size_t whylen)
{
	struct elf e = { src, NULL, 0, why, whylen };
	struct seg dynseg = { 0, 0, 0 };
	struct dyn d;
	uint8_t h[EHDR_SIZE];
	int rc = -1;

	*found = 0;
	if (nnames > BOT_ELF_MAX_NAMES)
		return bot_errf(why, whylen, "more than %d names asked for", BOT_ELF_MAX_NAMES);
	if (src->size < EHDR_SIZE)
		return bot_errf(why, whylen, "%" PRIu64 " bytes: too short for an ELF header (not a "
				"shared library)", src->size);
	if (src->size > BOT_ELF_MAX_FILE)
		return bot_errf(why, whylen, "%" PRIu64 " bytes: over the 1 GiB this check reads",
				src->size);
	if (rd(&e, 0, h, EHDR_SIZE, "the ELF header") < 0 || check_header(&e, h, machine) < 0 ||
	    read_segments(&e, h, &dynseg) < 0 ||
	    read_dynamic(&e, dynseg.off, dynseg.filesz, &d) < 0)
		goto out;
	if (d.flags1 & ELF_DF_1_PIE) {
		bot_errf(why, whylen, "a position-independent executable (PIE), not a shared library");
		goto out;
	}
	rc = scan_symbols(&e, &d, names, nnames, found);
out:
	free(e.load);
	if (rc < 0)
		*found = 0;
	return rc;
}

unsigned bot_elf_host_machine(void)
{
#if defined(__x86_64__)
	return 62;
#elif defined(__aarch64__)
	return 183;
#elif defined(__powerpc64__)
	return 21;
#elif defined(__s390x__)
	return 22;
#elif defined(__riscv) && __riscv_xlen == 64
	return 243;
#elif defined(__loongarch64)
	return 258;
#else
	return 0;
#endif
}

const char *bot_elf_machine_name(unsigned machine, char *buf, size_t len)
{
	switch (machine) {
	case 3:
		return "i386";
	case 21:
		return "PowerPC64";
	case 22:
		return "s390";
	case 40:
		return "ARM";
	case 62:
		return "x86-64";
	case 183:
		return "AArch64";
	case 243:
		return "RISC-V";
	case 258:
		return "LoongArch";
	}
	snprintf(buf, len, "machine %u", machine);
	return buf;
}
