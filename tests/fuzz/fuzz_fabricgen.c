/*
 * fuzz_fabricgen.c - fuzz target for `nccl-bot fabric generate`'s readers
 * (spank/fabricgen.h): the same bytes as topology.conf, as slurm.conf and
 * (up to the first newline) as a Slurm host list. Each must return 0 or -1
 * with a terminated message; what they accept must hold: nodes sorted and
 * named once, every leaf a switch index in range, no loop of switches, a
 * host list's names valid, and every rule's fabric a fabric name.
 * Built with tests/fuzz/driver.c or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/state.h"
#include "spank/fabricgen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t names;

static int count(void *arg, const char *name)
{
	(void)arg;
	if (!*name || strlen(name) >= BOT_FABRICGEN_NAME || strchr(name, '[') ||
	    strchr(name, ','))
		abort();
	return ++names > 100000 ? 1 : 0;	/* stop early: a bounded run */
}

static void check(const struct bot_fabricgen *g)
{
	static const char *rules[] = { "feature:fabric_", "features", "top-switch", "feature:a" };
	char f[BOT_FABRICGEN_NAME], why[512];

	for (size_t i = 0; i < g->n; i++) {
		if (i && strcmp(g->node[i - 1].name, g->node[i].name) >= 0)
			abort();
		if (g->node[i].leaf >= (int)g->nsw || bot_fabricgen_find(g, g->node[i].name) !=
		    &g->node[i])
			abort();
		for (size_t r = 0; r < sizeof(rules) / sizeof(*rules); r++) {
			int rc = bot_fabricgen_fabric(g, &g->node[i], rules[r], f, sizeof(f), why,
						      sizeof(why));

			if (rc == 0 && !bot_state_fabric_ok(f))
				abort();
			if (rc != 0 && !memchr(why, 0, sizeof(why)))
				abort();
		}
	}
	for (size_t s = 0; s < g->nsw; s++) {
		int p = (int)s;

		for (size_t k = 0; p >= 0; k++, p = g->sw[p].parent)
			if (k > g->nsw || p >= (int)g->nsw)
				abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_fabricgen g;
	char err[512], line[512];
	const uint8_t *nl;
	size_t n;

	memset(&g, 0, sizeof(g));
	memset(err, 'x', sizeof(err));
	if (bot_fabricgen_topology(&g, "fuzz", (const char *)data, size, err, sizeof(err)) == 0)
		check(&g);
	else if (!memchr(err, 0, sizeof(err)))
		abort();
	/* after an error g is partial (freed, never used): start again */
	bot_fabricgen_free(&g);
	memset(err, 'x', sizeof(err));
	if (bot_fabricgen_slurmconf(&g, "fuzz", (const char *)data, size, err, sizeof(err)) == 0)
		check(&g);
	else if (!memchr(err, 0, sizeof(err)))
		abort();
	bot_fabricgen_free(&g);

	nl = memchr(data, '\n', size);
	n = nl ? (size_t)(nl - data) : size;
	if (n >= sizeof(line))
		n = sizeof(line) - 1;
	memcpy(line, data, n);
	line[n] = 0;
	names = 0;
	memset(err, 'x', sizeof(err));
	if (bot_hostlist_expand(line, count, NULL, err, sizeof(err)) < 0 &&
	    !memchr(err, 0, sizeof(err)))
		abort();
	return 0;
}
