/*
 * le.h - little-endian packing of the on-disk and in-variable formats
 * (step table, spool, state snapshot): every multi-byte field is written
 * and read byte by byte, whatever the host's byte order. Header-only, no
 * libc: the rank-side library uses it too.
 */
#ifndef BOT_COMMON_LE_H
#define BOT_COMMON_LE_H

#include <stddef.h>
#include <stdint.h>

static inline void bot_le_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void bot_le_put32(uint8_t *p, uint32_t v)
{
	bot_le_put16(p, v);
	bot_le_put16(p + 2, v >> 16);
}

static inline void bot_le_put64(uint8_t *p, uint64_t v)
{
	bot_le_put32(p, (uint32_t)v);
	bot_le_put32(p + 4, (uint32_t)(v >> 32));
}

static inline uint32_t bot_le_get16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static inline uint32_t bot_le_get32(const uint8_t *p)
{
	return bot_le_get16(p) | bot_le_get16(p + 2) << 16;
}

static inline uint64_t bot_le_get64(const uint8_t *p)
{
	return (uint64_t)bot_le_get32(p) | (uint64_t)bot_le_get32(p + 4) << 32;
}

/* 1 when the n bytes at p are all zero (a reserved field, a NUL padding). */
static inline int bot_le_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

#endif
