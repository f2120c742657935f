/*
 * ncclver.c - ncclGetVersion() of the NCCL in this process (tuner/ncclver.h).
 *
 * For each loaded object: its PT_DYNAMIC segment gives the dynamic symbol
 * table (DT_SYMTAB), its strings (DT_STRTAB, DT_STRSZ) and a hash table
 * (DT_GNU_HASH, else DT_HASH), through which one name is found without
 * reading every symbol. glibc relocates those addresses in place when it
 * loads an object, except where the dynamic section is read-only (the
 * vDSO): an address below the object's base is still an offset. Anything
 * that does not look like a table is skipped; nothing is written.
 *
 * Only the object that holds the hint is asked. Falling back to another
 * object's ncclGetVersion() (the first in load order) made the answer
 * depend on what else the process had loaded, and in what order (another
 * framework's libnccl), so two ranks of one communicator could assume
 * different caps; 0 (unknown: 2.28's cap) is the same on every rank.
 */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "common/elfhash.h"
#include "tuner/nccl_abi.h"
#include "tuner/ncclver.h"

#define NAME "ncclGetVersion"

struct search {
	uintptr_t hint;
	uintptr_t at_hint;	/* the function in the hint's object */
};

struct dyn {
	const ElfW(Sym) *symtab;
	const char *strtab;
	size_t strsz;
	const uint32_t *gnu_hash, *elf_hash;
};

static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

static int read_dyn(const struct dl_phdr_info *info, struct dyn *d)
{
	const ElfW(Dyn) *dyn = NULL;

	memset(d, 0, sizeof(*d));
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			break;
		case DT_GNU_HASH:
			d->gnu_hash = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_HASH:
			d->elf_hash = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		}
	}
	return d->symtab && d->strtab && d->strsz && (d->gnu_hash || d->elf_hash) ? 0 : -1;
}

/* Symbol i is the function NAME, defined here. */
static int sym_is(const struct dyn *d, uint32_t i)
{
	const ElfW(Sym) *s = &d->symtab[i];

	return s->st_shndx != SHN_UNDEF && s->st_value && ELF64_ST_TYPE(s->st_info) == STT_FUNC &&
	       s->st_name < d->strsz && d->strsz - s->st_name >= sizeof(NAME) &&
	       memcmp(d->strtab + s->st_name, NAME, sizeof(NAME)) == 0;
}

/* The symbol's index, or 0 (index 0 is the null symbol). */
static uint32_t find_gnu(const struct dyn *d)
{
	const uint32_t *h = d->gnu_hash;
	uint32_t nbuckets = h[0], symoffset = h[1], bloom_size = h[2], bloom_shift = h[3];
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)&h[4];
	const uint32_t *buckets, *chain;
	const unsigned bits = sizeof(ElfW(Addr)) * 8;
	uint32_t hash, i;
	ElfW(Addr) word, mask;

	/* hash is 32 bits: a shift of 32 or more is undefined (a malformed
	 * object; linkers choose 5..8) */
	if (!nbuckets || !bloom_size || bloom_shift >= 32)
		return 0;
	hash = bot_elf_gnu_hash(NAME);
	word = bloom[(hash / bits) % bloom_size];
	mask = (ElfW(Addr))1 << (hash % bits) | (ElfW(Addr))1 << ((hash >> bloom_shift) % bits);
	if ((word & mask) != mask)
		return 0;
	buckets = (const uint32_t *)&bloom[bloom_size];
	chain = &buckets[nbuckets];
	i = buckets[hash % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t hi = chain[i - symoffset];

		if ((hi | 1) == (hash | 1) && sym_is(d, i))
			return i;
		if (hi & 1)
			return 0;
	}
}

static uint32_t find_elf(const struct dyn *d)
{
	const uint32_t *h = d->elf_hash;
	uint32_t nbucket = h[0], nchain = h[1], hash;
	const uint32_t *bucket = &h[2], *chain = &bucket[nbucket];

	if (!nbucket)
		return 0;
	hash = bot_elf_sysv_hash(NAME);
	/* a chain never visits more entries than there are symbols */
	for (uint32_t i = bucket[hash % nbucket], n = 0; i && i < nchain && n < nchain;
	     i = chain[i], n++)
		if (sym_is(d, i))
			return i;
	return 0;
}

static int object_holds(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + p->p_vaddr;

		if (p->p_type == PT_LOAD && a >= lo && a - lo < p->p_memsz)
			return 1;
	}
	return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct search *s = arg;
	struct dyn d;
	uint32_t i;
	uintptr_t fn;

	(void)size;
	if (!object_holds(info, s->hint))
		return 0;
	/* the hint's object, whatever it holds: stop here */
	if (read_dyn(info, &d) < 0)
		return 1;
	i = d.gnu_hash ? find_gnu(&d) : find_elf(&d);
	if (!i)
		return 1;
	fn = info->dlpi_addr + d.symtab[i].st_value;
	s->at_hint = fn;
	return 1;
}

int bot_ncclver(const void *hint)
{
	struct search s = { (uintptr_t)hint, 0 };
	bot_nccl_get_version_fn fn;
	uintptr_t f;
	int v = 0;

	if (!hint)
		return 0;
	dl_iterate_phdr(visit, &s);
	f = s.at_hint;
	if (!f)
		return 0;
	memcpy(&fn, &f, sizeof(fn));
	if (fn(&v) != BOT_NCCL_SUCCESS || v <= 0)
		return 0;
	return v;
}
