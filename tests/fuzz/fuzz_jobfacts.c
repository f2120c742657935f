/*
 * fuzz_jobfacts.c - fuzz target for the job's facts file's parser
 * (spank/jobfacts.h): it must return 0 or -1 with a terminated message,
 * and what it accepts must encode back to the same facts (account within
 * its rule, numbers in range).
 * Built with tests/fuzz/driver.c or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spank/jobfacts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_spank_jobfacts f, g;
	char err[256], buf[512];
	int n;

	memset(err, 'x', sizeof(err));
	if (bot_spank_jobfacts_parse((const char *)data, size, &f, err, sizeof(err)) < 0) {
		if (!memchr(err, 0, sizeof(err)))
			abort();
		return 0;
	}
	if (strlen(f.account) >= sizeof(f.account) || f.gpus >= 0xfffffff0u ||
	    f.het_job >= 0xfffffff0u || f.start >> 63)
		abort();
	n = bot_spank_jobfacts_encode(&f, buf, sizeof(buf));
	if (n < 0 || bot_spank_jobfacts_parse(buf, (size_t)n, &g, err, sizeof(err)) < 0 ||
	    memcmp(&f, &g, sizeof(f)))
		abort();
	return 0;
}
