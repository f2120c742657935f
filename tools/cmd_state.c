/*
 * cmd_state.c - `nccl-bot state`: per-fabric learned state outside Slurm
 * (doc/formats.md section 12).
 *
 *   nccl-bot state add  --state DIR --fabric F SPOOL...   merge one job's spool files
 *   nccl-bot state show --state DIR --fabric F | FILE    YAML rendering
 *
 * `add` is a read-modify-publish cycle under the fabric's lock: load the
 * current snapshot (or start empty), read the job's spool files (bad ones
 * are named and skipped; files already merged are skipped, so adding the
 * same job twice changes nothing), reduce them as `env --spool` does, merge
 * into a copy, and publish a new snapshot. Nothing is published when no
 * file is new or anything fails: `current` keeps naming the old snapshot.
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
#include "learn/compile.h"
#include "learn/lock.h"
#include "learn/store.h"
#include "policies/context.h"
#include "policies/plan.h"

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
		"         before, is refused (exit status 1): a job is merged whole, once\n"
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
	struct bot_state cur, next = { 0 };
	struct bot_compile_report rep;
	uint64_t *src = NULL;
	struct bot_kb *batch = NULL;
	char err[BOT_STATE_ERR_MAX], old[BOT_STATE_NAME_MAX], snap[BOT_STATE_NAME_MAX];
	size_t nsrc = 0;
	int lock, rc = 1, loaded;
	struct bot_log log = { bot_cmd_log, "state add" };

	lock = bot_lock_fabric(dir, fabric, 1, err, sizeof(err));
	if (lock < 0) {
		fprintf(stderr, "nccl-bot: state add: %s\n", err);
		return 1;
	}
	loaded = bot_store_load(dir, fabric, &cur, old, err, sizeof(err));
	if (loaded < 0) {
		fprintf(stderr, "nccl-bot: state add: %s; nothing merged (fix or move the file: "
			"`current` may name the previous snapshot)\n", err);
		bot_lock_release(lock);
		return 1;
	}
	if (bot_compile_read(paths, n, &cur, &batch, &src, &nsrc, &rep, &log, err,
			     sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: state add: %s; nothing merged\n", err);
		goto out;
	}
	/* A job is merged whole, once: its samples are reduced over all of its
	 * ranks together. A part of a job merged alone would keep its ranks'
	 * arrival skew (and count the job twice in rounds). */
	if (!partial && nsrc && (rep.files_rejected || rep.files_merged_before)) {
		fprintf(stderr, "nccl-bot: state add: %s: of this job's %zu spool file(s), %zu "
			"failed validation (named above) and %zu were merged before; nothing "
			"merged: a job is merged whole, once. Fix or remove the bad files, or pass "
			"--partial to merge the %zu other file(s) alone\n", fabric, rep.files,
			rep.files_rejected, rep.files_merged_before, nsrc);
		goto out;
	}
	if (nsrc == 0) {
		fprintf(stderr, "nccl-bot: state add: %s: nothing new (%zu file(s) read, %zu "
			"already merged, %zu rejected); %s%s\n", fabric, rep.files,
			rep.files_merged_before, rep.files_rejected,
			loaded == 0 ? old : "no snapshot yet", loaded == 0 ? " unchanged" : "");
		rc = rep.files_rejected ? 1 : 0;
		goto out;
	}
	/* Merge into a copy: a failure leaves nothing half-merged. */
	if (bot_state_init(&next, fabric) < 0 || bot_kb_merge(next.kb, cur.kb) < 0 ||
	    bot_kb_merge(next.kb, batch) < 0) {
		fprintf(stderr, "nccl-bot: state add: merging failed (out of memory, or a "
			"histogram bin over 2^32-1 samples); nothing published\n");
		goto out;
	}
	next.rounds = cur.rounds + 1;
	for (size_t i = 0; i < cur.nsources; i++)
		if (bot_state_add_source(&next, cur.src[i]) < 0)
			goto oom;
	for (size_t i = 0; i < nsrc; i++)
		if (bot_state_add_source(&next, src[i]) < 0)
			goto oom;
	if (bot_store_publish(dir, &next, snap, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: state add: %s; nothing published\n", err);
		goto out;
	}
	fprintf(stderr, "nccl-bot: state add: %s: merged %zu spool file(s) (%zu already merged, "
		"%zu rejected), %" PRIu64 " collectives after the minimum over ranks; %zu contexts, "
		"round %" PRIu64 "; published %s/%s/%s\n", fabric, nsrc, rep.files_merged_before,
		rep.files_rejected, rep.collectives, bot_kb_count(next.kb), next.rounds, dir, fabric,
		snap);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "nccl-bot: state add: out of memory (or over %u sources); nothing "
		"published\n", BOT_STATE_MAX_SOURCES);
out:
	bot_state_free(&next);
	bot_state_free(&cur);
	bot_kb_free(batch);
	free(src);
	bot_lock_release(lock);
	return rc;
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
	printf("format: %d\nfabric: %s\n", BOT_STATE_VERSION, s.fabric);
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
