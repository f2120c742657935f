/*
 * elfread.c - does a file export some names the way the dynamic loader would
 * find them (learn/elfread.h)?
 *
 * The walk: ELF header (64 bytes: magic, class, byte order, type, machine),
 * program headers (PT_LOAD segments map addresses to file offsets; the one
 * PT_DYNAMIC), the dynamic entries - found as ld.so finds them, at
 * PT_DYNAMIC's p_vaddr mapped through a PT_LOAD segment, never at its
 * p_offset - (where the symbol, string, hash and version tables are, and
 * DF_1_PIE), then one lookup per name, the loader's own: with DT_GNU_HASH
 * the Bloom filter word, the bucket and the chain; without it DT_HASH's
 * bucket and chain; and for each candidate glibc's check_match() (a defined
 * symbol with a value, of a type dlsym() returns, the name, and for an
 * unversioned lookup an unversioned symbol, else the only non-hidden
 * versioned one) and binding (global, weak or unique). A symbol that dlsym()
 * would not return is not exported, whatever else the file holds; one it
 * would return must also be a data object (NCCL reads a struct there).
 *
 * Bounded in time and memory whatever the bytes: every read is checked
 * against the file and the segment it lies in; a GNU chain is read in
 * chunks of CHAIN_CHUNK entries and walked at most BOT_ELF_MAX_SYMS steps;
 * a System V chain array (at most BOT_ELF_MAX_SYMS entries) is read once and
 * a walk longer than it is a cycle. Addresses become file offsets only
 * inside a PT_LOAD segment's file part, which is checked to lie inside the
 * file; the constants are the System V ABI's and GNU's, written out here
 * rather than taken from <elf.h> so that the reader stays the same on every
 * host.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elfhash.h"
#include "common/errf.h"
#include "common/le.h"
#include "learn/elfread.h"

#define EHDR_SIZE 64
#define PHDR_SIZE 56
#define DYN_SIZE 16
#define SYM_SIZE 24
#define CHAIN_CHUNK 4096	/* GNU hash chain entries read at once */

enum { ELF_ET_REL = 1, ELF_ET_EXEC = 2, ELF_ET_DYN = 3, ELF_ET_CORE = 4 };
enum { ELF_PT_LOAD = 1, ELF_PT_DYNAMIC = 2 };
enum {
	ELF_DT_NULL = 0,
	ELF_DT_NEEDED = 1,
	ELF_DT_HASH = 4,
	ELF_DT_STRTAB = 5,
	ELF_DT_SYMTAB = 6,
	ELF_DT_STRSZ = 10,
	ELF_DT_SYMENT = 11,
	ELF_DT_RPATH = 15,
	ELF_DT_RUNPATH = 29,
};
#define ELF_DT_GNU_HASH 0x6ffffef5ull
#define ELF_DT_VERSYM 0x6ffffff0ull
#define ELF_DT_FLAGS_1 0x6ffffffbull
#define ELF_DF_1_PIE 0x08000000ull
#define ELF_STT_NOTYPE 0
#define ELF_STT_OBJECT 1
#define ELF_STT_FUNC 2
#define ELF_STT_COMMON 5
#define ELF_STT_TLS 6
#define ELF_STT_GNU_IFUNC 10
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
	int r;

	if (off > e->src->size || len > e->src->size - off)
		return bot_errf(e->why, e->whylen, "truncated: %s (offset %" PRIu64 ", %zu bytes) "
				"ends past the end of the file (%" PRIu64 " bytes)", what, off, len,
				e->src->size);
	r = e->src->read(e->src->arg, off, buf, len);
	if (r == -2)
		return bot_errf(e->why, e->whylen, "changed while being read (it ends before "
				"offset %" PRIu64 ", %" PRIu64 " bytes were announced)", off + len,
				e->src->size);
	if (r < 0)
		return bot_errf(e->why, e->whylen, "cannot read %s at offset %" PRIu64, what, off);
	return 0;
}

/* The loadable segment whose file part holds vaddr, or NULL. */
static const struct seg *seg_of(const struct elf *e, uint64_t vaddr)
{
	for (size_t i = 0; i < e->nload; i++) {
		const struct seg *s = &e->load[i];

		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz)
			return s;
	}
	return NULL;
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

/* Read [vaddr, vaddr + len) into buf. */
static int vread(const struct elf *e, uint64_t vaddr, void *buf, size_t len, const char *what)
{
	uint64_t off = 0;

	if (v2o(e, vaddr, len, &off, what) < 0)
		return -1;
	return rd(e, off, buf, len, what);
}

/* What the dynamic segment says. */
struct dyn {
	uint64_t hash, gnu_hash, strtab, symtab, strsz, syment, versym, flags1;
	int has_hash, has_gnu_hash, has_strtab, has_symtab, has_strsz, has_versym;
	uint64_t needed[BOT_ELF_MAX_NEEDED];	/* DT_NEEDED string offsets, in order */
	size_t nneeded;
	int more_needed;			/* more than BOT_ELF_MAX_NEEDED */
	uint64_t rpath, runpath;
	int has_rpath, has_runpath;
};

/* The dynamic entries at PT_DYNAMIC's address (where ld.so reads them),
 * up to DT_NULL, at most BOT_ELF_MAX_DYN of them. */
static int read_dynamic(const struct elf *e, const struct seg *dynseg, struct dyn *d)
{
	const struct seg *s = seg_of(e, dynseg->vaddr);
	uint64_t n = dynseg->filesz / DYN_SIZE, room;
	uint8_t *b;
	int done = 0;

	memset(d, 0, sizeof(*d));
	if (!s)
		return bot_errf(e->why, e->whylen, "the dynamic segment (address 0x%" PRIx64 ") is "
				"not inside a loadable segment: the loader would not find it",
				dynseg->vaddr);
	room = (s->filesz - (dynseg->vaddr - s->vaddr)) / DYN_SIZE;
	if (n > room)
		n = room;
	if (n > BOT_ELF_MAX_DYN)
		n = BOT_ELF_MAX_DYN;
	if (!n)
		return bot_errf(e->why, e->whylen, "an empty dynamic segment");
	b = malloc((size_t)n * DYN_SIZE);
	if (!b)
		return bot_errf(e->why, e->whylen, "out of memory");
	if (vread(e, dynseg->vaddr, b, (size_t)n * DYN_SIZE, "dynamic segment") < 0) {
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
		case ELF_DT_NEEDED:
			if (d->nneeded < BOT_ELF_MAX_NEEDED)
				d->needed[d->nneeded++] = val;
			else
				d->more_needed = 1;
			break;
		case ELF_DT_RPATH:
			d->rpath = val;
			d->has_rpath = 1;
			break;
		case ELF_DT_RUNPATH:
			d->runpath = val;
			d->has_runpath = 1;
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

		if (type == ELF_PT_LOAD) {
			if (s.off > e->src->size || s.filesz > e->src->size - s.off) {
				free(p);
				return bot_errf(e->why, e->whylen, "truncated: a loadable segment "
						"(program header %u, offset %" PRIu64 ", %" PRIu64
						" bytes) ends past the end of the file (%" PRIu64
						" bytes)", i, s.off, s.filesz, e->src->size);
			}
			if (s.filesz > bot_le_get64(q + 40)) {
				free(p);
				return bot_errf(e->why, e->whylen, "program header %u: a loadable "
						"segment larger in the file than in memory", i);
			}
			e->load[e->nload++] = s;
		} else if (type == ELF_PT_DYNAMIC) {
			/* p_offset is not used: ld.so reads the entries at p_vaddr */
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

/* GNU's hash (dl_new_hash) and the System V one (_dl_elf_hash). */
/*
 * An array of the file (symbols, versions, GNU chain words) read in chunks
 * of `chunk` entries aligned to the chunk: a walk along the array costs a
 * read per chunk, not per entry. With chunk = the whole array (System V:
 * nchain) it is read once.
 */
struct cache {
	uint64_t base;		/* address of entry 0 */
	size_t size, chunk;	/* bytes per entry; entries per read */
	const char *what;
	uint8_t *buf;
	uint64_t start, have;	/* entries [start, start + have) in buf */
};

/* Entry i, or NULL (the reason in why). */
static const uint8_t *cache_get(const struct elf *e, struct cache *c, uint64_t i)
{
	uint64_t start, at, room;
	const struct seg *s;

	if (i >= c->start && i - c->start < c->have)
		return c->buf + (i - c->start) * c->size;
	if (i >= BOT_ELF_MAX_SYMS) {
		bot_errf(e->why, e->whylen, "the %s: entry %" PRIu64 " is past 2^20", c->what, i);
		return NULL;
	}
	start = i - i % c->chunk;
	at = c->base + start * c->size;
	s = at >= c->base ? seg_of(e, at) : NULL;
	room = s ? (s->filesz - (at - s->vaddr)) / c->size : 0;
	if (room > c->chunk)
		room = c->chunk;
	if (room <= i - start) {
		bot_errf(e->why, e->whylen, "the %s (address 0x%" PRIx64 ", entry %" PRIu64 ") is "
			 "not inside a loadable segment", c->what, c->base, i);
		return NULL;
	}
	if (!c->buf && !(c->buf = malloc(c->chunk * c->size))) {
		bot_errf(e->why, e->whylen, "out of memory");
		return NULL;
	}
	c->have = 0;
	if (vread(e, at, c->buf, (size_t)room * c->size, c->what) < 0)
		return NULL;
	c->start = start;
	c->have = room;
	return c->buf + (i - start) * c->size;
}

/* What the lookups of all names share: the string table (read whole, once),
 * the symbol and version arrays, the System V chain. */
struct tables {
	const struct elf *e;
	const struct dyn *d;
	uint8_t *str;
	struct cache sym, ver, gnu_chain, sysv_chain;
	int sysv_ready;
	uint32_t nbucket, nchain;
};

/* One name's lookup in progress: glibc's check_match() state. */
struct look {
	struct tables *t;
	const char *name;
	size_t len;
	int nversioned;		/* non-hidden versioned matches seen */
	uint64_t versioned;	/* the first of them */
};

/*
 * glibc's check_match() for an unversioned lookup with
 * DL_LOOKUP_RETURN_NEWEST (dlsym): 1 when symbol i is the match, 0 when the
 * walk goes on (a versioned candidate is counted), -1 on a read error.
 */
static int check_match(struct look *l, uint64_t i)
{
	static const unsigned allowed = 1u << ELF_STT_NOTYPE | 1u << ELF_STT_OBJECT |
					1u << ELF_STT_FUNC | 1u << ELF_STT_COMMON |
					1u << ELF_STT_TLS | 1u << ELF_STT_GNU_IFUNC;
	struct tables *t = l->t;
	const struct elf *e = t->e;
	const uint8_t *sym, *v;
	uint32_t name;
	unsigned type;

	if (!(sym = cache_get(e, &t->sym, i)))
		return -1;
	name = bot_le_get32(sym);
	type = sym[4] & 15;
	if ((!bot_le_get64(sym + 8) && type != ELF_STT_TLS) || !bot_le_get16(sym + 6) ||
	    !((1u << type) & allowed))
		return 0;
	if (name >= t->d->strsz || l->len + 1 > t->d->strsz - name)
		return 0;	/* cannot hold the name and its NUL */
	if (!t->str) {
		t->str = malloc(t->d->strsz ? (size_t)t->d->strsz : 1);
		if (!t->str)
			return bot_errf(e->why, e->whylen, "out of memory");
		if (vread(e, t->d->strtab, t->str, (size_t)t->d->strsz,
			  "dynamic string table") < 0) {
			free(t->str);
			t->str = NULL;
			return -1;
		}
	}
	if (memcmp(t->str + name, l->name, l->len) || t->str[name + l->len])
		return 0;
	if (t->d->has_versym) {
		unsigned ver;

		if (!(v = cache_get(e, &t->ver, i)))
			return -1;
		ver = bot_le_get16(v);
		if ((ver & 0x7fff) >= 2) {
			/* a versioned definition: taken only if it is the one
			 * non-hidden version */
			if (!(ver & ELF_VERSYM_HIDDEN) && l->nversioned++ == 0)
				l->versioned = i;
			return 0;
		}
	}
	return 1;
}

/* GNU hash lookup: *idx the symbol dlsym() would pick (0 none). */
static int gnu_lookup(struct look *l, uint64_t *idx)
{
	const struct elf *e = l->t->e;
	uint64_t addr = l->t->d->gnu_hash, buckets, word, mask, i;
	uint32_t h = bot_elf_gnu_hash(l->name), nbuckets, symoffset, nwords, shift, b;
	uint8_t raw[16];

	*idx = 0;
	if (vread(e, addr, raw, 16, "GNU hash table") < 0)
		return -1;
	nbuckets = bot_le_get32(raw);
	symoffset = bot_le_get32(raw + 4);
	nwords = bot_le_get32(raw + 8);
	shift = bot_le_get32(raw + 12);
	if (nbuckets > BOT_ELF_MAX_SYMS || nwords > BOT_ELF_MAX_SYMS ||
	    symoffset > BOT_ELF_MAX_SYMS)
		return bot_errf(e->why, e->whylen, "GNU hash table: %u buckets, %u Bloom words, "
				"symbol offset %u (at most 2^20 each)", nbuckets, nwords, symoffset);
	if (!nbuckets)
		return 0;	/* the loader skips an object without buckets */
	if (!nwords || (nwords & (nwords - 1)))
		return bot_errf(e->why, e->whylen, "GNU hash table: %u Bloom words (the loader "
				"needs a power of two)", nwords);
	if (shift >= 64)
		return bot_errf(e->why, e->whylen, "GNU hash table: Bloom shift %u (under 64)",
				shift);
	if (addr > UINT64_MAX - 16 - 8ull * nwords - 4ull * nbuckets)
		return bot_errf(e->why, e->whylen, "GNU hash table: address 0x%" PRIx64 " overflows",
				addr);
	buckets = addr + 16 + 8ull * nwords;
	/* the Bloom filter: both bits set, or dlsym() looks no further */
	if (vread(e, addr + 16 + 8ull * ((h / 64) & (nwords - 1)), raw, 8,
		  "GNU hash Bloom filter") < 0)
		return -1;
	word = bot_le_get64(raw);
	mask = 1ull << (h % 64) | 1ull << (((uint64_t)h >> shift) % 64);
	if ((word & mask) != mask)
		return 0;
	if (vread(e, buckets + 4ull * (h % nbuckets), raw, 4, "GNU hash buckets") < 0)
		return -1;
	b = bot_le_get32(raw);
	if (!b)
		return 0;
	if (b < symoffset)
		return bot_errf(e->why, e->whylen, "GNU hash table: bucket %u names symbol %u, below "
				"the symbol offset %u", h % nbuckets, b, symoffset);
	/* chain word k is symbol symoffset + k's */
	l->t->gnu_chain.base = buckets + 4ull * nbuckets;
	for (i = b;; i++) {
		const uint8_t *w;
		uint32_t hv;

		if (i >= BOT_ELF_MAX_SYMS)
			return bot_errf(e->why, e->whylen, "GNU hash table: a chain past 2^20 "
					"symbols");
		if (!(w = cache_get(e, &l->t->gnu_chain, i - symoffset)))
			return -1;
		hv = bot_le_get32(w);
		if (((hv ^ h) >> 1) == 0) {
			int m = check_match(l, i);

			if (m < 0)
				return -1;
			if (m) {
				*idx = i;
				return 0;
			}
		}
		if (hv & 1)
			return 0;
	}
}

/* System V hash lookup: the chain array (nchain entries) and the symbols
 * are read whole, once; a walk longer than nchain is a loop. */
static int sysv_lookup(struct look *l, uint64_t *idx)
{
	struct tables *t = l->t;
	const struct elf *e = t->e;
	uint64_t addr = t->d->hash;
	uint32_t h = bot_elf_sysv_hash(l->name), i, steps;
	const uint8_t *w;
	uint8_t raw[8];

	*idx = 0;
	if (!t->sysv_ready) {
		if (vread(e, addr, raw, 8, "hash table") < 0)
			return -1;
		t->nbucket = bot_le_get32(raw);
		t->nchain = bot_le_get32(raw + 4);
		if (t->nbucket > BOT_ELF_MAX_SYMS || t->nchain > BOT_ELF_MAX_SYMS)
			return bot_errf(e->why, e->whylen, "hash table: %u buckets, %u chain entries "
					"(at most 2^20 each)", t->nbucket, t->nchain);
		t->sysv_chain.base = addr + 8 + 4ull * t->nbucket;
		t->sysv_chain.chunk = t->nchain ? t->nchain : 1;
		t->sym.chunk = t->sysv_chain.chunk;	/* random access: read whole */
		t->ver.chunk = t->sysv_chain.chunk;
		t->sysv_ready = 1;
	}
	if (!t->nbucket)
		return 0;
	if (vread(e, addr + 8 + 4ull * (h % t->nbucket), raw, 4, "hash table buckets") < 0)
		return -1;
	i = bot_le_get32(raw);
	for (steps = 0; i; steps++) {
		int m;

		if (i >= t->nchain)
			return bot_errf(e->why, e->whylen, "hash table: symbol %u past the %u chain "
					"entries", i, t->nchain);
		if (steps > t->nchain)
			return bot_errf(e->why, e->whylen, "hash table: a chain that loops");
		m = check_match(l, i);
		if (m < 0)
			return -1;
		if (m) {
			*idx = i;
			return 0;
		}
		if (!(w = cache_get(e, &t->sysv_chain, i)))
			return -1;
		i = bot_le_get32(w);
	}
	return 0;
}

/*
 * Is name exported the way dlsym() finds it, as a data object? 1 with
 * *symidx its symbol, 0, or -1 (a malformed table: the reason in why).
 */
static int exported_at(struct tables *t, const char *name, uint64_t *symidx)
{
	struct look l = { t, name, strlen(name), 0, 0 };
	const uint8_t *sym;
	uint64_t idx;
	unsigned bind, type, vis;

	if ((t->d->has_gnu_hash ? gnu_lookup(&l, &idx) : sysv_lookup(&l, &idx)) < 0)
		return -1;
	if (!idx && l.nversioned == 1)
		idx = l.versioned;	/* the one version there is */
	if (!idx)
		return 0;
	if (!(sym = cache_get(t->e, &t->sym, idx)))
		return -1;
	bind = sym[4] >> 4;
	type = sym[4] & 15;
	vis = sym[5] & 3;
	/* a local binding: the loader passes over it */
	if (bind != ELF_STB_GLOBAL && bind != ELF_STB_WEAK && bind != ELF_STB_GNU_UNIQUE)
		return 0;
	/* dlsym() would return it; NCCL reads a plugin struct there */
	*symidx = idx;
	return type == ELF_STT_OBJECT && (vis == ELF_STV_DEFAULT || vis == ELF_STV_PROTECTED);
}

static int exported(struct tables *t, const char *name)
{
	uint64_t idx;

	return exported_at(t, name, &idx);
}

/* The tables for one lookup (lookup_names' checks, no names walked). */
static int tables_open(const struct elf *e, const struct dyn *d, struct tables *t)
{
	if (!d->has_symtab || !d->has_strtab)
		return bot_errf(e->why, e->whylen, "no dynamic symbol table: exports nothing");
	if (d->syment && d->syment != SYM_SIZE)
		return bot_errf(e->why, e->whylen, "dynamic symbols of %" PRIu64 " bytes (want %d)",
				d->syment, SYM_SIZE);
	if (!d->has_strsz || d->strsz > BOT_ELF_MAX_STRSZ)
		return bot_errf(e->why, e->whylen, "a dynamic string table of %s bytes",
				d->has_strsz ? "over 2^26" : "unknown");
	if (!d->has_gnu_hash && !d->has_hash)
		return bot_errf(e->why, e->whylen, "no symbol hash table (DT_GNU_HASH or DT_HASH): "
				"dlsym() finds nothing in it");
	memset(t, 0, sizeof(*t));
	t->e = e;
	t->d = d;
	t->sym = (struct cache){ d->symtab, SYM_SIZE, CHAIN_CHUNK, "dynamic symbol table",
				 NULL, 0, 0 };
	t->ver = (struct cache){ d->versym, 2, CHAIN_CHUNK, "symbol version table", NULL, 0, 0 };
	t->gnu_chain = (struct cache){ 0, 4, CHAIN_CHUNK, "GNU hash chains", NULL, 0, 0 };
	t->sysv_chain = (struct cache){ 0, 4, 1, "hash table chains", NULL, 0, 0 };
	return 0;
}

static void tables_close(struct tables *t)
{
	free(t->str);
	free(t->sym.buf);
	free(t->ver.buf);
	free(t->gnu_chain.buf);
	free(t->sysv_chain.buf);
}

static int lookup_names(const struct elf *e, const struct dyn *d, const char *const *names,
			size_t nnames, uint64_t *found)
{
	struct tables t;
	int rc = 0;

	if (tables_open(e, d, &t) < 0)
		return -1;
	for (size_t j = 0; j < nnames && rc >= 0; j++) {
		rc = exported(&t, names[j]);
		if (rc > 0)
			*found |= 1ull << j;
	}
	tables_close(&t);
	return rc < 0 ? -1 : 0;
}

/* What every entry point starts with: the file's size within bounds, its
 * ELF header for this machine, its loadable segments (into e->load, which
 * the caller frees, also on failure) and its dynamic section into *d: 0,
 * or -1 with e->why said. */
static int elf_open(struct elf *e, unsigned machine, struct dyn *d)
{
	struct seg dynseg = { 0, 0, 0 };
	uint8_t h[EHDR_SIZE];

	if (e->src->size < EHDR_SIZE)
		return bot_errf(e->why, e->whylen, "%" PRIu64 " bytes: too short for an ELF header "
				"(not a shared library)", e->src->size);
	if (e->src->size > BOT_ELF_MAX_FILE)
		return bot_errf(e->why, e->whylen, "%" PRIu64 " bytes: over the 1 GiB this check "
				"reads", e->src->size);
	if (rd(e, 0, h, EHDR_SIZE, "the ELF header") < 0 || check_header(e, h, machine) < 0 ||
	    read_segments(e, h, &dynseg) < 0 || read_dynamic(e, &dynseg, d) < 0)
		return -1;
	return 0;
}

int bot_elf_exports(const struct bot_elf_src *src, unsigned machine, const char *const *names,
		    size_t nnames, uint64_t *found, char *why, size_t whylen)
{
	struct elf e = { src, NULL, 0, why, whylen };
	struct dyn d;
	int rc = -1;

	*found = 0;
	if (nnames > BOT_ELF_MAX_NAMES)
		return bot_errf(why, whylen, "more than %d names asked for", BOT_ELF_MAX_NAMES);
	if (elf_open(&e, machine, &d) < 0)
		goto out;
	if (d.flags1 & ELF_DF_1_PIE) {
		bot_errf(why, whylen, "a position-independent executable (PIE), not a shared library");
		goto out;
	}
	rc = lookup_names(&e, &d, names, nnames, found);
out:
	free(e.load);
	if (rc < 0)
		*found = 0;
	return rc;
}

int bot_elf_object(const struct bot_elf_src *src, unsigned machine, const char *name, void *buf,
		   size_t len, size_t *got, char *why, size_t whylen)
{
	struct elf e = { src, NULL, 0, why, whylen };
	struct tables t;
	struct dyn d;
	const uint8_t *sym;
	uint64_t idx = 0, value, size;
	int rc = -1, r;

	*got = 0;
	if (elf_open(&e, machine, &d) < 0 || tables_open(&e, &d, &t) < 0) {
		free(e.load);
		return -1;
	}
	r = exported_at(&t, name, &idx);
	if (r == 0)
		bot_errf(why, whylen, "does not export %s", name);
	else if (r > 0 && (sym = cache_get(&e, &t.sym, idx))) {
		value = bot_le_get64(sym + 8);
		size = bot_le_get64(sym + 16);
		if (size < len)
			len = (size_t)size;
		/* vread refuses what lies outside a segment's file part: an
		 * object in .bss has no bytes in the file to report */
		if (vread(&e, value, buf, len, name) == 0) {
			*got = len;
			rc = 0;
		}
	}
	tables_close(&t);
	free(e.load);
	return rc;
}

/* The NUL-terminated string at offset off of the dynamic string table into
 * out (at most len bytes with its NUL): 0, or -1 (outside the table, or no
 * NUL within len bytes and the table). */
static int dyn_string(const struct elf *e, const struct dyn *d, uint64_t off, char *out,
		      size_t len, const char *what)
{
	const struct seg *s;
	uint64_t at, n;

	if (off >= d->strsz || d->strtab > UINT64_MAX - off)
		return bot_errf(e->why, e->whylen, "%s: offset %" PRIu64 " is outside the dynamic "
				"string table (%" PRIu64 " bytes)", what, off, d->strsz);
	at = d->strtab + off;
	if (!(s = seg_of(e, at)))
		return bot_errf(e->why, e->whylen, "%s (address 0x%" PRIx64 ") is not inside a "
				"loadable segment", what, at);
	n = d->strsz - off;
	if (n > s->filesz - (at - s->vaddr))
		n = s->filesz - (at - s->vaddr);
	if (n > len)
		n = len;
	if (vread(e, at, out, (size_t)n, what) < 0)
		return -1;
	if (!memchr(out, 0, (size_t)n))
		return bot_errf(e->why, e->whylen, "%s: longer than %zu bytes or not terminated",
				what, len - 1);
	return 0;
}

int bot_elf_needed(const struct bot_elf_src *src, unsigned machine, struct bot_elf_deps *deps,
		   char *why, size_t whylen)
{
	struct elf e = { src, NULL, 0, why, whylen };
	struct dyn *d = malloc(sizeof(*d));
	int rc = -1;

	memset(deps, 0, sizeof(*deps));
	if (!d)
		return bot_errf(why, whylen, "out of memory");
	if (elf_open(&e, machine, d) < 0)
		goto out;
	if (d->more_needed) {
		bot_errf(why, whylen, "more than %d needed libraries (DT_NEEDED)",
			 BOT_ELF_MAX_NEEDED);
		goto out;
	}
	if ((d->nneeded || d->has_rpath || d->has_runpath) &&
	    (!d->has_strtab || !d->has_strsz || d->strsz > BOT_ELF_MAX_STRSZ)) {
		bot_errf(why, whylen, "needed libraries, but no dynamic string table of a size "
			 "up to 2^26 bytes");
		goto out;
	}
	for (size_t i = 0; i < d->nneeded; i++) {
		if (dyn_string(&e, d, d->needed[i], deps->needed[i], sizeof(deps->needed[i]),
			       "a needed library's name (DT_NEEDED)") < 0)
			goto out;
		if (!deps->needed[i][0]) {
			bot_errf(why, whylen, "an empty needed library's name (DT_NEEDED)");
			goto out;
		}
	}
	deps->n = d->nneeded;
	/* ld.so ignores DT_RPATH where DT_RUNPATH is there */
	if ((d->has_runpath || d->has_rpath) &&
	    dyn_string(&e, d, d->has_runpath ? d->runpath : d->rpath, deps->runpath,
		       sizeof(deps->runpath), "the library search path (DT_RUNPATH/DT_RPATH)") < 0)
		goto out;
	rc = 0;
out:
	free(e.load);
	free(d);
	if (rc < 0)
		memset(deps, 0, sizeof(*deps));
	return rc;
}

int bot_elf_fd_read(void *arg, uint64_t off, void *buf, size_t len)
{
	int fd = *(int *)arg;
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			return -2;
		done += (size_t)r;
	}
	return 0;
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
