/*
 * fuzz_elf.c - fuzz target for the ELF reader of the rank library check
 * (learn/elf.c).
 *
 * The check reads files a user names, and later does so as root in the
 * SPANK plugin, so any bytes must give an answer without a crash, a hang or
 * a read outside the input: 0 with found bits for the names asked only, or
 * -1 with a reason and nothing found; the same answer twice; and -1 when
 * the source cannot be read at all. The machine asked for is the input's
 * own e_machine, so that mutations get past the header to the segments,
 * the dynamic entries, the hash tables and the symbols.
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "learn/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t *p;
	size_t n;
};

static int mem_read(void *arg, uint64_t off, void *buf, size_t len)
{
	const struct mem *m = arg;

	/* the reader must never ask for bytes outside the file */
	if (off > m->n || len > m->n - off)
		abort();
	memcpy(buf, m->p + off, len);
	return 0;
}

static int fail_read(void *arg, uint64_t off, void *buf, size_t len)
{
	(void)arg;
	(void)off;
	(void)buf;
	(void)len;
	return -1;
}

static const char *const names[] = {
	"ncclTunerPlugin_v2", "ncclTunerPlugin_v3", "ncclTunerPlugin_v4", "ncclTunerPlugin_v5",
	"ncclTunerPlugin_v6", "ncclTunerPlugin_v7", "ncclProfiler_v4", "ncclProfiler_v5",
	"ncclProfiler_v6",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct bot_elf_src src = { mem_read, &m, size };
	unsigned machine = size >= 20 ? (unsigned)data[18] | (unsigned)data[19] << 8 : 62;
	char why[512], why2[512];
	uint64_t found, found2;
	int rc, rc2;

	why[0] = why2[0] = 0;
	rc = bot_elf_exports(&src, machine, names, NNAMES, &found, why, sizeof(why));
	if (rc != 0 && rc != -1)
		abort();
	if (rc < 0 && (found || !why[0] || !memchr(why, 0, sizeof(why))))
		abort();
	if (rc == 0 && (found >> NNAMES))
		abort();
	rc2 = bot_elf_exports(&src, machine, names, NNAMES, &found2, why2, sizeof(why2));
	if (rc2 != rc || found2 != found || (rc < 0 && strcmp(why, why2)))
		abort();
	/* another machine's file is never accepted */
	if (bot_elf_exports(&src, machine ^ 1, names, NNAMES, &found2, why2, sizeof(why2)) != -1)
		abort();
	src.read = fail_read;
	if (size >= 64 && bot_elf_exports(&src, machine, names, NNAMES, &found2, why2,
					   sizeof(why2)) != -1)
		abort();
	return 0;
}
