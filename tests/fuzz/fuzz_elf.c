/*
 * fuzz_elf.c - fuzz target for the ELF reader of the rank library check
 * (learn/elfread.c).
 *
 * The check reads files a user names, and later does so as root in the
 * SPANK plugin, so any bytes must give an answer without a crash, a hang or
 * a read outside the input: 0 with found bits for the names asked only, or
 * -1 with a reason and nothing found; the same answer twice; -1 when the
 * source cannot be read at all, or ends before the size it announced
 * ("changed while being read"); and a bounded number of reads whatever the
 * tables say (the lookups read chains, symbols and strings in chunks, never
 * an entry at a time). The machine asked for is the input's
 * own e_machine, so that mutations get past the header to the segments,
 * the dynamic entries, the hash tables and the symbols. bot_elf_object
 * (nccl-bot doctor reads a SPANK plugin's plugin_version with it) is
 * asked too: a found object is one the export check finds; and
 * bot_elf_needed (the DT_NEEDED names doctor resolves).
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "learn/elfread.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
	const uint8_t *p;
	size_t n;
	size_t shrunk;		/* bytes left when the file "shrank" (else n) */
	unsigned reads;
};

/* At most this many reads per check: 9 names, each a few hundred chunk
 * reads at worst (learn/elfread.c). */
#define MAX_READS 20000

static int mem_read(void *arg, uint64_t off, void *buf, size_t len)
{
	struct mem *m = arg;

	/* the reader must never ask for bytes outside the file */
	if (off > m->n || len > m->n - off)
		abort();
	if (++m->reads > MAX_READS)
		abort();
	if (off + len > m->shrunk)
		return -2;
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
	struct mem m = { data, size, size, 0 };
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
	m.reads = 0;
	rc2 = bot_elf_exports(&src, machine, names, NNAMES, &found2, why2, sizeof(why2));
	if (rc2 != rc || found2 != found || (rc < 0 && strcmp(why, why2)))
		abort();
	/* another machine's file is never accepted */
	m.reads = 0;
	if (bot_elf_exports(&src, machine ^ 1, names, NNAMES, &found2, why2, sizeof(why2)) != -1)
		abort();
	/* a file that shrank to its first half: the same answer where the
	 * reads stay in it, else refused */
	m.reads = 0;
	m.shrunk = size / 2;
	rc2 = bot_elf_exports(&src, machine, names, NNAMES, &found2, why2, sizeof(why2));
	if (rc2 == 0 && (rc != 0 || found2 != found))
		abort();
	m.shrunk = size;
	/* an object's bytes (a Slurm plugin's plugin_version): found only
	 * where bot_elf_exports finds it, never more bytes than asked */
	for (size_t i = 0; i < 2; i++) {
		static const char *const obj[] = { "plugin_version", "ncclTunerPlugin_v5" };
		uint8_t val[8];
		size_t got = 99;

		m.reads = 0;
		why2[0] = 0;
		rc2 = bot_elf_object(&src, machine, obj[i], val, sizeof(val), &got, why2,
				     sizeof(why2));
		if ((rc2 != 0 && rc2 != -1) || (rc2 == 0 && got > sizeof(val)) ||
		    (rc2 < 0 && (got != 0 || !why2[0])))
			abort();
		/* (where the whole check failed on another name, one name may
		 * still be found alone) */
		if (i == 1 && rc2 == 0 && rc == 0 && !(found >> 3 & 1))
			abort();
	}
	/* the needed libraries (nccl-bot doctor): names terminated, non-empty,
	 * at most BOT_ELF_MAX_NEEDED; refused only with a reason and nothing
	 * kept; the same answer twice; never for another machine */
	{
		static struct bot_elf_deps deps, deps2;

		m.reads = 0;
		why2[0] = 0;
		rc2 = bot_elf_needed(&src, machine, &deps, why2, sizeof(why2));
		if (rc2 != 0 && rc2 != -1)
			abort();
		if (rc2 < 0 && (deps.n || deps.runpath[0] || !why2[0]))
			abort();
		if (deps.n > BOT_ELF_MAX_NEEDED ||
		    !memchr(deps.runpath, 0, sizeof(deps.runpath)))
			abort();
		for (size_t i = 0; i < deps.n; i++)
			if (!deps.needed[i][0] || !memchr(deps.needed[i], 0, BOT_ELF_NAME_MAX))
				abort();
		m.reads = 0;
		if (bot_elf_needed(&src, machine, &deps2, why, sizeof(why)) != rc2 ||
		    memcmp(&deps, &deps2, sizeof(deps)))
			abort();
		m.reads = 0;
		if (bot_elf_needed(&src, machine ^ 1, &deps2, why, sizeof(why)) != -1)
			abort();
	}
	src.read = fail_read;
	if (size >= 64 && bot_elf_exports(&src, machine, names, NNAMES, &found2, why2,
					   sizeof(why2)) != -1)
		abort();
	return 0;
}
