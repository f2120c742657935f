/*
 * fuzz_state.c - fuzz target for the state snapshot reader (common/state.c).
 *
 * Snapshots live in a shared state directory and outlive builds, so any
 * bytes must come back as a clean rejection with a "name: reason" message
 * and nothing allocated, or as a state that re-encodes to exactly the same
 * bytes in the version it was read from (the format is canonical: one
 * state, one encoding per version; versions 1 and 2 are still read), and
 * whose current encoding parses back to the same state. Since a valid
 * CRC is rare in random bytes, each input is also tried with its trailer
 * recomputed, so that mutations reach the structural checks.
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "common/state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *p, size_t n)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	uint8_t *out;
	size_t len;

	err[0] = 0;
	if (bot_state_parse("f", p, n, &s, err, sizeof(err)) < 0) {
		if (s.kb || s.src || strncmp(err, "f: ", 3) != 0)
			abort();
		return;
	}
	if (bot_state_encode_version(&s, s.version, &out, &len, err, sizeof(err)) < 0)
		abort();
	if (len != n || memcmp(out, p, n) != 0)
		abort();
	free(out);
	if (s.version < BOT_STATE_VERSION) {
		/* an older version reads as the current one with the fields it
		 * lacks 0, and writes back to the same bytes in its own */
		struct bot_state t;
		uint8_t *o2;
		size_t l2;

		if (bot_state_encode(&s, &out, &len, err, sizeof(err)) < 0)
			abort();
		if (bot_state_parse("f", out, len, &t, err, sizeof(err)) < 0 ||
		    t.version != BOT_STATE_VERSION ||
		    bot_state_encode_version(&t, s.version, &o2, &l2, err, sizeof(err)) < 0)
			abort();
		if (l2 != n || memcmp(o2, p, n) != 0)
			abort();
		free(o2);
		free(out);
		bot_state_free(&t);
	}
	bot_state_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b;
	uint32_t crc;

	check(data, size);
	if (size < BOT_STATE_HDR_SIZE_V1 + BOT_STATE_TRAILER_SIZE || size > (1u << 22))
		return 0;
	b = malloc(size);
	if (!b)
		return 0;
	memcpy(b, data, size);
	crc = bot_spool_crc32c(0, b, size - BOT_STATE_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		b[size - 8 + i] = (uint8_t)(crc >> (8 * i));
	memset(b + size - 4, 0, 4);
	check(b, size);
	free(b);
	return 0;
}
