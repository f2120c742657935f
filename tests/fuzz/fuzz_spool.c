/*
 * fuzz_spool.c - fuzz target for the spool reader (common/spool_read.c).
 *
 * Spool files are written by ranks inside users' jobs and later read by
 * tools and the harvester, so any bytes must come back as a clean rejection
 * with a "name: reason" message, or as records that pass every range check;
 * never a crash, a read past the input, or a half-filled result. Since a
 * valid CRC is rare in random bytes, each input is also tried with its
 * trailer recomputed, so mutations reach the per-record checks, and an
 * accepted file must re-pack to exactly the same bytes. Format v2: an
 * accepted file holds at most one process record (kind 3), only when its
 * header says version 2, and that record re-packs to all 160 bytes.
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const uint8_t *p, size_t n)
{
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];
	uint8_t rec[BOT_SPOOL_REC_SIZE];
	unsigned nproc = 0;

	err[0] = 0;
	if (bot_spool_parse("f", p, n, &f, err, sizeof(err)) < 0) {
		if (f.recs || strncmp(err, "f: ", 3) != 0)
			abort();
		return;
	}
	if (BOT_SPOOL_HDR_SIZE + f.hdr.nrecords * BOT_SPOOL_REC_SIZE + BOT_SPOOL_TRAILER_SIZE != n)
		abort();
	if (f.hdr.version != 1 && f.hdr.version != 2)
		abort();
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const uint8_t *in = p + BOT_SPOOL_HDR_SIZE + i * BOT_SPOOL_REC_SIZE;

		if (f.recs[i].kind == BOT_SPOOL_PROC) {
			if (++nproc > 1 || f.hdr.version < 2 ||
			    bot_spool_proc_check(&f.recs[i], err, sizeof(err)) < 0)
				abort();
			bot_spool_pack_rec(rec, &f.recs[i]);
			if (memcmp(rec, in, BOT_SPOOL_REC_SIZE) != 0)
				abort();
			continue;
		}
		if (bot_spool_rec_check(&f.recs[i], err, sizeof(err)) < 0)
			abort();
		bot_spool_pack_rec(rec, &f.recs[i]);
		/* -0.0 and 0.0 are both valid costs; compare all but the cost bits */
		if (memcmp(rec, in, 76) != 0)
			abort();
	}
	bot_spool_free(&f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *b;
	uint32_t crc;

	check(data, size);
	if (size < BOT_SPOOL_HDR_SIZE + BOT_SPOOL_TRAILER_SIZE || size > (1u << 22))
		return 0;
	b = malloc(size);
	if (!b)
		return 0;
	memcpy(b, data, size);
	crc = bot_spool_crc32c(0, b, size - BOT_SPOOL_TRAILER_SIZE);
	for (int i = 0; i < 4; i++)
		b[size - 8 + i] = (uint8_t)(crc >> (8 * i));
	memset(b + size - 4, 0, 4);
	check(b, size);
	free(b);
	return 0;
}
