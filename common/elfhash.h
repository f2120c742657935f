/*
 * elfhash.h - the two hash functions of ELF dynamic symbol tables, as the
 * dynamic loader computes them: the GNU hash (DT_GNU_HASH: h = h * 33 + c
 * from 5381) and the System V hash (DT_HASH). Used where a symbol is
 * looked up the loader's way: in a file by the rank library check
 * (learn/elfread.c), in the loaded objects by the rank side (tuner/ncclver.c).
 * Header-only, integer operations only.
 */
#ifndef BOT_COMMON_ELFHASH_H
#define BOT_COMMON_ELFHASH_H

#include <stdint.h>

static inline uint32_t bot_elf_gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		h = h * 33 + *p;
	return h;
}

static inline uint32_t bot_elf_sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		h = (h << 4) + *p;
		g = h & 0xf0000000u;
		h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

#endif
