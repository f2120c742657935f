/*
 * fuzz_replay.c - fuzz target of the replay's input step: sweep text ->
 * bot_dataset_build (replay/dataset.c) -> a short jobs-mode run.
 *
 * Whatever the sweep reader accepts, the dataset either refuses it with a
 * message naming the input ("in:LINE: ...") or builds contexts whose every
 * number the report prints is finite: arm means, the best arm's time,
 * AUTO's loss, and after a two-job run of thompson each context's run loss
 * and its saved and lost seconds (valid but extreme times such as 1e308 or
 * 1e-300 must be refused, never printed as inf% or nan). Any broken
 * invariant aborts.
 *
 * Built with tests/fuzz/driver.c (make check) or with clang's libFuzzer
 * (FUZZ_TARGET=replay tests/fuzz/run-libfuzzer.sh).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/kb.h"
#include "policies/policy.h"
#include "replay/dataset.h"
#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			fprintf(stderr, "fuzz_replay: %s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);			\
			abort();						\
		}								\
	} while (0)

#define MAX_CTX 64	/* contexts replayed per input (keeps an input fast) */

static void run(const struct bot_dataset *ds)
{
	size_t idx[MAX_CTX], n = ds->nctx < MAX_CTX ? ds->nctx : MAX_CTX;
	struct bot_ctx_result res[MAX_CTX];
	struct bot_kb **kbs = calloc(ds->nfabrics ? ds->nfabrics : 1, sizeof(*kbs));
	struct bot_replay_opts o;
	struct bot_policy pol;
	char err[256];

	CHECK(kbs != NULL);
	for (size_t f = 0; f < ds->nfabrics; f++)
		CHECK((kbs[f] = bot_kb_new()) != NULL);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	bot_replay_opts_default(&o, BOT_MODE_JOBS);
	o.jobs = 2;
	o.comms = 2;
	o.calls = 50;
	o.sample_rate = 0.1;
	CHECK(bot_policy_init(&pol, "thompson") == 0);
	CHECK(bot_replay_run(ds, idx, n, &pol, &o, kbs, res, err, sizeof(err)) == 0);
	for (size_t i = 0; i < n; i++) {
		CHECK(isfinite(res[i].run_loss) && res[i].run_loss >= -1);
		CHECK(isfinite(res[i].final_loss));
		CHECK(isfinite(res[i].saved) && res[i].saved >= 0);
		CHECK(isfinite(res[i].lost) && res[i].lost >= 0);
	}
	for (size_t f = 0; f < ds->nfabrics; f++)
		bot_kb_free(kbs[f]);
	free(kbs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_ds_opts opts = { BOT_PRIOR_DATA, NULL, NULL, 0, 0 };
	struct bot_sweep sw;
	struct bot_dataset ds;
	char err[BOT_SWEEP_ERR_MAX > BOT_DS_ERR_MAX ? BOT_SWEEP_ERR_MAX : BOT_DS_ERR_MAX];
	int rc;

	bot_sweep_init(&sw);
	if (bot_sweep_parse(&sw, "in", (const char *)data, size, err, sizeof(err))) {
		bot_sweep_free(&sw);
		return 0;	/* the sweep reader's own target covers this */
	}
	bot_dataset_init(&ds);
	rc = bot_dataset_build(&ds, &sw, NULL, &opts, err, sizeof(err));
	CHECK(rc == 0 || rc == -1);
	CHECK(strlen(err) < sizeof(err));
	if (rc < 0) {
		CHECK(err[0] != 0);
		CHECK(!strncmp(err, "<generated>:", 12) || !strcmp(err, "out of memory"));
	} else {
		for (size_t i = 0; i < ds.nctx; i++) {
			const struct bot_ds_ctx *c = &ds.ctx[i];

			CHECK(isfinite(c->best_us) && c->best_us > 0);
			CHECK(isfinite(c->auto_mean) && c->auto_mean > 0);
			CHECK(isfinite(c->auto_loss));
			for (int a = 0; a < BOT_NARMS; a++) {
				CHECK(!c->arm[a].usable || (isfinite(c->arm[a].mean) && c->arm[a].mean > 0));
				CHECK(isfinite(bot_ds_arm_loss(c, a)));
			}
		}
		if (ds.nctx)
			run(&ds);
	}
	bot_dataset_free(&ds);
	bot_sweep_free(&sw);
	return 0;
}
