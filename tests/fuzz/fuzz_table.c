/*
 * fuzz_table.c - fuzz target for the step-table decoder (common/table_decode.c).
 *
 * The decoder runs inside every rank on bytes from the environment, so any
 * input must come back as a clean error code, never a crash, a read past
 * the input, or a table that breaks the format's rules. For every input this
 * checks: decode returns 0 or a known error; a decoded table re-encodes to
 * exactly the same text (one encoding per table); and, since a valid digest
 * is rare in random bytes, the input is also decoded with its digest
 * rewritten to match the payload, so mutations reach the payload checks.
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/table.h"
#include "policies/context.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct bot_table t;
static char buf[BOT_TABLE_MAX_TEXT + 64];
static char again[BOT_TABLE_MAX_TEXT + 64];

static void check(const char *text, size_t n)
{
	int err = bot_table_decode(text, n, &t);
	long m;

	if (err > 0 || err < BOT_TABLE_EPREFIX)	/* the enum's last */
		abort();
	if (err != BOT_TABLE_OK)
		return;
	m = bot_table_encode(&t, again, sizeof(again));
	if (m < 0 || (size_t)m != n || memcmp(again, text, n) != 0)
		abort();
}

/* Same input with the digest replaced by the payload's true digest. */
static void check_redigested(const char *text, size_t n)
{
	static uint8_t raw[BOT_TABLE_MAX_PAYLOAD];
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	size_t plen = 0;
	uint32_t acc = 0;
	int bits = 0;
	char hex[17];

	if (n < BOT_TABLE_HEAD_LEN || memcmp(text, "NBT", 3) != 0 || (text[3] < '1' || text[3] > '3') ||
	    text[4] != '.' || n > sizeof(buf))
		return;
	for (size_t i = BOT_TABLE_HEAD_LEN; i < n; i++) {
		const char *p = memchr(b64, text[i], 64);

		if (!p || text[i] == '\0')
			return;
		acc = acc << 6 | (uint32_t)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (plen < sizeof(raw))
				raw[plen++] = (uint8_t)(acc >> bits);
		}
	}
	memcpy(buf, text, n);
	snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)bot_digest64(raw, plen));
	memcpy(buf + 5, hex, 16);
	check(buf, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check((const char *)data, size);
	check_redigested((const char *)data, size);
	return 0;
}
