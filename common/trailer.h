/*
 * trailer.h - the 8-byte trailer of nccl-bot's binary files (spool file,
 * delta, state snapshot, ledger; doc/formats.md): the CRC-32C of every byte
 * before it, little-endian, then 4 reserved zero bytes. Header-only, tool
 * side (the rank-side spool writer chains its CRC over chunks itself).
 */
#ifndef BOT_COMMON_TRAILER_H
#define BOT_COMMON_TRAILER_H

#include <stddef.h>
#include <stdint.h>

#include "common/le.h"
#include "common/spool.h"

/* Write the trailer of the body b[0..body) at b + body. */
static inline void bot_trailer_put(uint8_t *b, size_t body)
{
	bot_le_put32(b + body, bot_spool_crc32c(0, b, body));
	bot_le_put32(b + body + 4, 0);
}

/* 1 when the trailer at b + body is right for b[0..body), else 0; the CRC
 * computed into *crc (may be NULL), for a message. */
static inline int bot_trailer_ok(const uint8_t *b, size_t body, uint32_t *crc)
{
	uint32_t c = bot_spool_crc32c(0, b, body);

	if (crc)
		*crc = c;
	return bot_le_get32(b + body) == c && bot_le_zero(b + body + 4, 4);
}

#endif
