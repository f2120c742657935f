/*
 * replay_load.c - the replay's input: sweep files, or the built-in fabrics.
 *
 * Files are read one after the other into one bot_sweep, remembering where
 * each file's rows end so that a context-level error can still name
 * FILE:LINE. Without files, the simulator generates every fabric at the
 * node counts the train and test splits use (its default node list, plus
 * single counts named explicitly), so nothing is generated that the replay
 * would not score or learn from.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "sim/sim.h"

static int generate(const struct bot_nodeset *train, const struct bot_nodeset *test,
		    uint64_t seed, unsigned samples, const struct bot_ds_opts *opts,
		    struct bot_sweep *sw, char *err, size_t errlen)
{
	unsigned nodes[1024], n = 0, nfab = 0;
	const struct bot_fabric *fab[64];
	struct bot_sim_opts so;
	char bad[96];

	for (unsigned i = 0; i < bot_sim_default_nnodes && n < 1024; i++) {
		unsigned v = bot_sim_default_nodes[i];

		if (bot_nodeset_has(train, v) || bot_nodeset_has(test, v))
			nodes[n++] = v;
	}
	for (unsigned s = 0; s < 2; s++) {
		const struct bot_nodeset *set = s ? test : train;

		for (unsigned i = 0; i < set->n && n < 1024; i++) {
			int have = 0;

			if (set->lo[i] != set->hi[i])
				continue;
			for (unsigned j = 0; j < n; j++)
				have |= nodes[j] == set->lo[i];
			if (!have)
				nodes[n++] = set->lo[i];
		}
	}
	if (!n) {
		snprintf(err, errlen, "no node count of the built-in fabrics is in the splits");
		return -1;
	}
	if (bot_sim_select(opts->sim_fabrics ? opts->sim_fabrics : "builtin", fab, 64, &nfab, bad, sizeof(bad))) {
		snprintf(err, errlen, "--sim-fabrics: '%s' is no simulator fabric or family", bad);
		return -1;
	}
	memset(&so, 0, sizeof(so));
	so.seed = seed;
	so.samples = samples;
	so.nodes = nodes;
	so.nnodes = n;
	so.outliers_set = opts->sim_outliers_set;
	so.outlier_p = opts->sim_outliers;
	for (unsigned i = 0; i < nfab; i++) {
		so.only = fab[i];
		if (bot_sim_generate(&so, sw)) {
			snprintf(err, errlen, "out of memory generating the built-in sweep");
			return -1;
		}
	}
	return 0;
}

int bot_replay_load(struct bot_dataset *ds, const char *const *files, size_t nfiles,
		    const struct bot_ds_opts *opts, const struct bot_nodeset *train,
		    const struct bot_nodeset *test, uint64_t sim_seed, unsigned samples,
		    char *err, size_t errlen)
{
	struct bot_sweep sw;
	size_t *end = calloc(nfiles ? nfiles : 1, sizeof(*end));
	struct bot_ds_files names = { files, end, nfiles };
	int rc = -1;

	bot_sweep_init(&sw);
	if (!end) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* an auto_us that differs from an earlier file's row names that file */
	sw.src_name = files;
	sw.src_end = end;
	for (size_t i = 0; i < nfiles; i++) {
		size_t before = sw.nrows;

		sw.nsrc = i;

		if (bot_sweep_read(&sw, files[i], err, errlen))
			goto out;
		if (sw.nrows == before) {
			snprintf(err, errlen, "%s:1: no data rows", files[i]);
			goto out;
		}
		end[i] = sw.nrows;
	}
	if (!nfiles && generate(train, test, sim_seed, samples, opts, &sw, err, errlen))
		goto out;
	rc = bot_dataset_build(ds, &sw, nfiles ? &names : NULL, opts, err, errlen);
out:
	bot_sweep_free(&sw);
	free(end);
	return rc;
}
