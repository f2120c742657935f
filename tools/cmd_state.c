/*
 * cmd_state.c - `nccl-bot state`: per-fabric learned state outside Slurm
 * (doc/formats.md section 12).
 *
 *   nccl-bot state add  --state DIR --fabric F SPOOL...   merge one job's spool files
 *   nccl-bot state show --state DIR --fabric F | FILE    YAML rendering
 *
 * `add` is the merge of one job (learn/merge.h): a read-modify-publish
 * cycle under the fabric's lock; this file says what happened. `show`
 * renders a snapshot (learn/store.h loads the current one) as YAML.
 * `nccl-bot env --state` compiles step tables from what `add` publishes.
 */
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/state.h"
#include "learn/merge.h"
#include "learn/store.h"
#include "policies/context.h"
#include "policies/plan.h"
#include "policies/policy.h"

static void state_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot state add --state DIR --fabric F [--partial] SPOOL...\n"
		"       nccl-bot state show --state DIR --fabric F\n"
		"       nccl-bot state show FILE\n"
		"\n"
		"  add    merge one job's spool files (FILE or DIR of *.spool, all of the job's\n"
		"         ranks at once) into the fabric's state and publish a new snapshot;\n"
		"         files merged before are skipped, so adding a job twice is a no-op;\n"
		"         a job with a file that fails validation, or with some files merged\n"
		"         before, is refused (exit status 1): a job is merged whole, once;\n"
		"         paths holding no *.spool file are an error\n"
		"  show   the fabric's current snapshot (or a snapshot FILE) as YAML\n"
		"\n"
		"  --state DIR    state directory (default $NCCL_BOT_STATE); DIR/F/ is created\n"
		"  --fabric F     fabric name, [a-z0-9][a-z0-9._-]{0,63}\n"
		"  --partial      add: merge the valid, new files of a job anyway (their\n"
		"                 collectives lose the minimum over the other files' ranks)\n");
}

static int state_add(const char *dir, const char *fabric, const char *const *paths, size_t n,
		     int partial)
{
	struct bot_merge_req req = { dir, fabric, paths, n, partial, NULL };
	struct bot_log log = { bot_cmd_log, "state add" };
	struct bot_merge_result res;
	int rc = bot_merge_job(&req, &res, &log);

	switch (res.outcome) {
	case BOT_MERGE_PUBLISHED:
		fprintf(stderr, "nccl-bot: state add: %s: merged %zu spool file(s) (%zu already "
			"merged, %zu rejected), %" PRIu64 " collectives after the minimum over "
			"ranks; %zu contexts, round %" PRIu64 "; published %s/%s/%s\n", fabric,
			res.merged, res.merged_before, res.rejected, res.collectives, res.contexts,
			res.round, dir, fabric, res.snapshot);
		return 0;
	case BOT_MERGE_NOTHING_NEW:
		fprintf(stderr, "nccl-bot: state add: %s: nothing new (%zu file(s) read, %zu "
			"already merged, %zu rejected); %s%s\n", fabric, res.files,
			res.merged_before, res.rejected,
			res.snapshot[0] ? res.snapshot : "no snapshot yet",
			res.snapshot[0] ? " unchanged" : "");
		return res.rejected ? 1 : 0;
	case BOT_MERGE_REFUSED:
		/* the hint only where there are valid new files to merge */
		if (res.files > res.rejected + res.merged_before)
			fprintf(stderr, "nccl-bot: state add: pass --partial to merge the valid new "
				"files alone\n");
		return 1;
	case BOT_MERGE_FAILED:
		break;
	}
	return rc < 0 ? 1 : 0;
}

static void yaml_context(const struct bot_kb_ctx *c)
{
	char name[64];
	int first = 1, auto_arm;

	bot_ctx_format(c->key, name, sizeof(name));
	printf("  - context: %s\n    calls: %" PRIu64 "\n", name, c->calls);
	if (c->has_prior) {
		auto_arm = bot_prior_argmin(c->prior);
		printf("    auto: %s\n    prior_us: {", auto_arm >= 0 ? bot_arm_name(auto_arm) : "null");
		for (int a = 0; a < BOT_NARMS; a++) {
			if (c->prior[a] < 0)
				continue;
			printf("%s%s: %.9g", first ? "" : ", ", bot_arm_name(a), c->prior[a]);
			first = 0;
		}
		printf("}\n");
	} else {
		printf("    auto: null\n    prior_us: null\n");
	}
	first = 1;
	for (int a = 0; a < BOT_NARMS; a++) {
		const struct bot_stats *s = &c->arm[a];
		double loc, sd;
		uint64_t used;

		if (!s->n)
			continue;
		if (first)
			printf("    arms:\n");
		first = 0;
		bot_stats_robust(s, &loc, &sd, &used);
		printf("      %s: {samples: %" PRIu64 ", robust_us: %.6g, median_us: %.6g, "
		       "spread_octaves: %.4g, used: %" PRIu64 "}\n", bot_arm_name(a), s->n,
		       bot_us_from_q(loc), bot_us_from_q(bot_stats_median_q(s)),
		       sd / BOT_Q_PER_OCTAVE, used);
	}
	if (first)
		printf("    arms: {}\n");
}

static int state_show(const char *dir, const char *fabric, const char *file)
{
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX] = "";
	int rc;

	if (file)
		rc = bot_state_read_file(file, &s, err, sizeof(err));
	else
		rc = bot_store_load(dir, fabric, &s, snap, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: state show: %s\n", err);
		return 1;
	}
	if (rc == 1) {
		fprintf(stderr, "nccl-bot: state show: %s/%s: no state yet (no `current`)\n", dir,
			fabric);
		bot_state_free(&s);
		return 1;
	}
	printf("# nccl-bot learned state (doc/formats.md section 12); statistics only\n");
	printf("format: %u\nfabric: %s\n", s.version, s.fabric);
	if (snap[0])
		printf("snapshot: %s\n", snap);
	else {
		printf("file: \"");
		for (const char *c = file; *c; c++)
			if (*c == '"' || *c == '\\')
				printf("\\%c", *c);
			else if ((unsigned char)*c < 0x20)
				printf("\\x%02x", (unsigned char)*c);
			else
				putchar(*c);
		printf("\"\n");
	}
	printf("rounds: %" PRIu64 "\nsources: %zu\ncontexts:%s\n", s.rounds, s.nsources,
	       bot_kb_count(s.kb) ? "" : " []");
	{
		/* In key order, as stored. */
		struct bot_kb *k = bot_kb_sorted(s.kb);

		if (!k) {
			fprintf(stderr, "nccl-bot: state show: out of memory\n");
			bot_state_free(&s);
			return 1;
		}
		for (size_t i = 0; i < bot_kb_count(k); i++)
			yaml_context(bot_kb_at(k, i));
		bot_kb_free(k);
	}
	bot_state_free(&s);
	return 0;
}

int bot_cmd_state(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "fabric", required_argument, NULL, 'f' },
		{ "partial", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = getenv("NCCL_BOT_STATE"), *fabric = NULL, *verb;
	int c, partial = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		state_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	verb = argv[1];
	if (strcmp(verb, "add") && strcmp(verb, "show")) {
		fprintf(stderr, "nccl-bot: state: unknown action '%s' (add or show)\n", verb);
		return 2;
	}
	if (dir && !*dir)
		dir = NULL;
	optind = 1;
	while ((c = getopt_long(argc - 1, argv + 1, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			dir = optarg;
			break;
		case 'f':
			fabric = optarg;
			break;
		case 'P':
			partial = 1;
			break;
		case 'h':
			state_usage(stdout);
			return 0;
		default:
			state_usage(stderr);
			return 2;
		}
	}
	argc -= 1 + optind;
	argv += 1 + optind;
	if (fabric && !bot_state_fabric_ok(fabric)) {
		fprintf(stderr, "nccl-bot: state: --fabric '%s': want [a-z0-9][a-z0-9._-]{0,63}\n",
			fabric);
		return 2;
	}
	if (!strcmp(verb, "show")) {
		if (argc == 1 && !fabric)
			return state_show(NULL, NULL, argv[0]);
		if (argc == 0 && fabric && dir)
			return state_show(dir, fabric, NULL);
		fprintf(stderr, "nccl-bot: state show: give a snapshot FILE, or --fabric F with "
			"--state DIR (or NCCL_BOT_STATE)\n");
		return 2;
	}
	if (!dir || !fabric || argc < 1) {
		fprintf(stderr, "nccl-bot: state add: needs --state DIR (or NCCL_BOT_STATE), "
			"--fabric F and the job's spool files or directories\n");
		return 2;
	}
	return state_add(dir, fabric, (const char *const *)argv, (size_t)argc, partial);
}
