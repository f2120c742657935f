/*
 * fuzz_delta.c - fuzz target for the delta reader (common/delta.c).
 *
 * Deltas cross directories other people can write (the outbox, the inbox),
 * so any bytes must come back as a clean refusal with a "name: reason"
 * message and nothing allocated, or as a delta the encoder writes back to
 * exactly the same bytes (the encoding is canonical) with every record
 * passing section 9's checks and the step's node count. Each input is also
 * tried with its CRC recomputed, so mutations reach the header and record
 * checks. Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/delta.h"
#include "common/le.h"
#include "common/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *p, size_t n)
{
	struct bot_delta d;
	char err[BOT_DELTA_ERR_MAX];
	uint8_t *b;
	size_t len;

	err[0] = 0;
	if (bot_delta_parse("f", 0, p, n, &d, err, sizeof(err)) < 0) {
		if (d.recs || d.hdr.nrecords || strncmp(err, "f: ", 3) != 0)
			abort();
		return;
	}
	if (BOT_DELTA_HDR_SIZE + d.hdr.nrecords * BOT_SPOOL_REC_SIZE + 8 != n ||
	    d.identity != bot_delta_identity(&d.hdr))
		abort();
	for (uint64_t i = 0; i < d.hdr.nrecords; i++)
		if (bot_spool_rec_check(&d.recs[i], err, sizeof(err)) < 0 ||
		    d.recs[i].nnodes > d.hdr.step_nodes)
			abort();
	if (bot_delta_encode(&d.hdr, d.recs, d.hdr.nrecords, &b, &len, err, sizeof(err)) < 0)
		abort();
	if (len != n || memcmp(b, p, n) != 0)
		abort();
	free(b);
	bot_delta_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b;

	check(data, size);
	if (size < BOT_DELTA_HDR_SIZE + 8 || size > (1u << 22))
		return 0;
	b = malloc(size);
	if (!b)
		return 0;
	memcpy(b, data, size);
	bot_le_put32(b + size - 8, bot_spool_crc32c(0, b, size - 8));
	memset(b + size - 4, 0, 4);
	check(b, size);
	free(b);
	return 0;
}
