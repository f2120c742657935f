/*
 * fuzz_sweep.c - fuzz target of the sweep CSV reader (common/sweep.c).
 *
 * Each input is parsed after a small valid buffer, so a failing input also
 * checks the rollback (the first buffer's row stays, nothing of the input
 * does) and the error prefix. An input that parses is written out with the
 * writer and parsed again into a fresh table: the rows must come back
 * identical. Any broken invariant aborts.
 *
 * Built two ways: with tests/fuzz/driver.c (corpus plus a deterministic
 * mutation loop, run by make check) or with clang -fsanitize=fuzzer
 * (tests/fuzz/run-libfuzzer.sh, make fuzz).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char base[] =
	"fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us\n"
	"base,allreduce,1048576,16,2,ring,simple,10.5,11\n";

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "fuzz_sweep: %s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);			\
			abort();						\
		}								\
	} while (0)

static bool same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static bool same_row(const struct bot_sweep *a, const struct bot_sweep_row *x,
		     const struct bot_sweep *b, const struct bot_sweep_row *y)
{
	return strcmp(a->fabrics[x->fabric], b->fabrics[y->fabric]) == 0 &&
	       x->coll == y->coll && x->algo == y->algo && x->proto == y->proto &&
	       x->nchannels == y->nchannels && x->captured == y->captured &&
	       x->aggregate == y->aggregate && x->nbytes == y->nbytes &&
	       x->nranks == y->nranks && x->nnodes == y->nnodes &&
	       x->num_pipe_ops == y->num_pipe_ops && same_double(x->auto_us, y->auto_us) &&
	       same_double(x->measured_us, y->measured_us);
}

/* What every parsed row must satisfy (doc/formats.md section 7). */
static void check_row(const struct bot_sweep *sw, const struct bot_sweep_row *r)
{
	CHECK(r->fabric < sw->nfabrics);
	CHECK(r->coll >= 0 && r->coll <= 4);
	CHECK(r->algo >= -1 && r->algo <= 6);
	CHECK(r->proto >= -1 && r->proto <= 2);
	CHECK(r->nbytes >= 1 && r->nbytes <= (uint64_t)1 << 40);
	CHECK(r->nranks >= 1);
	CHECK(r->nnodes >= 1 && r->nnodes <= 65535 && r->nnodes <= r->nranks);
	CHECK(isnan(r->auto_us) || r->auto_us == -1 || (isfinite(r->auto_us) && r->auto_us > 0));
	CHECK((isnan(r->measured_us) && r->auto_us == -1) ||
	      (isfinite(r->measured_us) && r->measured_us > 0));
	CHECK(r->nchannels >= -1 && r->nchannels <= 64);
	CHECK(r->num_pipe_ops == -1 || r->num_pipe_ops >= 1);
	CHECK(r->captured >= -1 && r->captured <= 1);
	CHECK(r->aggregate >= -1 && r->aggregate <= 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_sweep sw, back;
	char err[BOT_SWEEP_ERR_MAX];
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	bot_sweep_init(&sw);
	CHECK(bot_sweep_parse(&sw, "base", base, sizeof(base) - 1, err, sizeof(err)) == 0);
	CHECK(sw.nrows == 1 && sw.nfabrics == 1);

	rc = bot_sweep_parse(&sw, "in", (const char *)data, size, err, sizeof(err));
	CHECK(rc == 0 || rc == -1);
	CHECK(strlen(err) < sizeof(err));
	if (rc < 0) {
		/* rolled back, and the message names the input */
		CHECK(sw.nrows == 1 && sw.nfabrics == 1);
		CHECK(strcmp(sw.fabrics[0], "base") == 0);
		CHECK(strncmp(err, "in:", 3) == 0 || strncmp(err, "in: ", 4) == 0);
		bot_sweep_free(&sw);
		return 0;
	}
	CHECK(err[0] == '\0');
	for (size_t i = 0; i < sw.nrows; i++)
		check_row(&sw, &sw.rows[i]);

	/* write, parse again, compare */
	f = open_memstream(&text, &len);
	CHECK(f != NULL);
	CHECK(bot_sweep_write_header(f) == 0);
	for (size_t i = 0; i < sw.nrows; i++)
		CHECK(bot_sweep_write_row(f, &sw, &sw.rows[i]) == 0);
	CHECK(fclose(f) == 0);
	bot_sweep_init(&back);
	rc = bot_sweep_parse(&back, "out", text, len, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "fuzz_sweep: written sweep does not parse: %s\n%s", err, text);
	CHECK(rc == 0);
	CHECK(back.nrows == sw.nrows);
	CHECK(back.nfabrics == sw.nfabrics);
	for (size_t i = 0; i < sw.nrows; i++) {
		if (!same_row(&sw, &sw.rows[i], &back, &back.rows[i]))
			fprintf(stderr, "fuzz_sweep: row %zu (line %u) changed by the round trip:\n%s",
				i, (unsigned)sw.rows[i].line, text);
		CHECK(same_row(&sw, &sw.rows[i], &back, &back.rows[i]));
		CHECK(back.rows[i].line == i + 2);
	}
	free(text);
	bot_sweep_free(&back);
	bot_sweep_free(&sw);
	return 0;
}
