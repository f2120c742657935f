/*
 * fuzz_ledger.c - fuzz target for the compactor's ledger reader
 * (learn/ledger.c, doc/formats.md section 14).
 *
 * The ledger decides what counts as merged: any bytes must come back as a
 * clean rejection ("name: reason", nothing allocated) or as a ledger that
 * re-encodes to exactly the same bytes (the format is canonical), whose
 * identities are all found again. Since a valid CRC is rare in random
 * bytes, each input is also tried with its trailer recomputed, so that
 * mutations reach the structural checks.
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "learn/ledger.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *p, size_t n)
{
	struct bot_ledger l;
	char err[BOT_LEDGER_ERR_MAX];
	uint8_t *out;
	size_t len;

	err[0] = 0;
	if (bot_ledger_parse("l", p, n, &l, err, sizeof(err)) < 0) {
		if (l.ids || l.use || strncmp(err, "l: ", 3) != 0)
			abort();
		return;
	}
	for (size_t i = 0; i < l.nids; i++)
		if (!bot_ledger_has(&l, l.ids[i].identity))
			abort();
	if (bot_ledger_encode(&l, &out, &len, err, sizeof(err)) < 0)
		abort();
	if (len != n || memcmp(out, p, n) != 0)
		abort();
	free(out);
	bot_ledger_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b;
	uint32_t crc;

	check(data, size);
	if (size < BOT_LEDGER_HDR_SIZE + BOT_LEDGER_TRAILER_SIZE || size > (1u << 22))
		return 0;
	b = malloc(size);
	if (!b)
		return 0;
	memcpy(b, data, size);
	crc = bot_spool_crc32c(0, b, size - BOT_LEDGER_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		b[size - 8 + i] = (uint8_t)(crc >> (8 * i));
	memset(b + size - 4, 0, 4);
	check(b, size);
	free(b);
	return 0;
}
