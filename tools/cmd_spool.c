/*
 * cmd_spool.c - `nccl-bot spool`: look at spool files (doc/formats.md
 * section 9) and turn their clean samples into a forced-arm sweep CSV
 * (section 7), the first half of the learning loop.
 *
 *   nccl-bot spool show FILE|DIR...              a human summary per file
 *   nccl-bot spool sweep [--fabric NAME] FILE|DIR...
 *
 * A directory stands for its *.spool files, sorted by name, as everywhere
 * spool files are read (learn/compile.h bot_compile_list).
 *
 * Files are read with the all-or-nothing reader, the safe way
 * (learn/compile.h bot_compile_read_file: never through a link, never a
 * FIFO or a device): a bad file is named with its reason and skipped whole
 * (exit status 1 at the end), never half-used. `sweep` is learn/spoolsweep.h's conversion (one
 * row per clean sample, auto_us from the context's cost row); this file
 * prints the CSV and the counts.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/spool.h"
#include "common/sweep.h"
#include "learn/compile.h"
#include "learn/spoolsweep.h"
#include "policies/context.h"

static void spool_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot spool show FILE|DIR...\n"
		"       nccl-bot spool sweep [--fabric NAME] FILE|DIR...\n"
		"\n"
		"  show     header, record counts, labels and contexts of each spool file\n"
		"  sweep    a forced-arm sweep CSV (one row per clean sample) on stdout\n"
		"  A directory means its *.spool files, sorted by name; a path holding none\n"
		"  is named and the exit status is 1 (with no spool file at all, no CSV).\n"
		"  --fabric NAME   the fabric column (default \"unknown\")\n");
}

static const char *label_names[] = { "aggregate", "channels-missing", "out-of-range",
				     "captured", "first-use-of-algo", "no-cost-row" };

/* The process record (formats.md section 9, kind 3) in one line. */
static void show_proc(const struct bot_spool_rec *r)
{
	static const char *const flag_names[] = { "table", "measured", "prior" };
	char nccl[32] = "unknown", prof[16] = "none";
	const char *pol = bot_policy_name(r->policy);
	int any = 0;

	if (r->nccl_version)
		snprintf(nccl, sizeof(nccl), "%u.%u.%u", r->nccl_version / 10000,
			 r->nccl_version / 100 % 100, r->nccl_version % 100);
	if (r->profiler_abi)
		snprintf(prof, sizeof(prof), "v%u", r->profiler_abi);
	printf("  process: NCCL %s, tuner v%u, profiler %s, %u comm%s, policy %s, flags ", nccl,
	       r->tuner_abi, prof, r->comms, r->comms == 1 ? "" : "s", pol ? pol : "unknown");
	for (int b = 0; b < 3; b++)
		if (r->proc_flags & (1u << b))
			printf("%s%s", any++ ? "," : "", flag_names[b]);
	printf("%s\n", any ? "" : "none");
}

static int show_one(const struct bot_compile_paths *list, size_t fi)
{
	const char *path = list->v[fi];
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX], bid[4 * BOT_SPOOL_BUILD_ID_SIZE + 1], *shown;
	uint64_t nsamp = 0, nsum = 0, clean = 0, calls = 0, labels[6] = { 0 };
	const struct bot_spool_rec *proc = NULL;

	if (bot_compile_read_file(list, fi, &f, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: spool show: %s (rejected)\n", err);
		return 1;
	}
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f.recs[i];

		if (r->kind == BOT_SPOOL_PROC) {
			proc = r;
			continue;
		}
		if (r->kind == BOT_SPOOL_SUMMARY) {
			nsum++;
			calls += r->calls;
			continue;
		}
		nsamp++;
		clean += bot_spool_clean(r);
		for (int b = 0; b < 6; b++)
			labels[b] += (r->flags >> b) & 1;
	}
	/* one line each, whatever the file name or the build id holds */
	shown = malloc(strlen(path) * 4 + 1);
	if (shown)
		bot_log_esc(shown, strlen(path) * 4 + 1, path);
	bot_log_esc(bid, sizeof(bid), f.hdr.build_id);
	printf("%s: spool v%u, %s, pid %u, host %016llx, table %016llx%s%s\n",
	       shown ? shown : "(out of memory)", f.hdr.version, bid, f.hdr.pid, (unsigned long long)f.hdr.host_hash,
	       (unsigned long long)f.hdr.table_digest,
	       f.hdr.flags & BOT_SPOOL_HF_SAMPLES_DROPPED ? ", samples dropped at the cap" : "",
	       f.hdr.flags & BOT_SPOOL_HF_SUMMARIES_DROPPED ? ", summaries dropped" : "");
	if (proc)
		show_proc(proc);
	else
		printf("  process: no record (%s)\n", f.hdr.version < 2 ? "a version 1 file" :
		       "the tuner initialised no communicator in this process");
	printf("  %llu samples (%llu clean), %llu context summaries covering %llu calls\n",
	       (unsigned long long)nsamp, (unsigned long long)clean, (unsigned long long)nsum,
	       (unsigned long long)calls);
	for (int b = 0; b < 6; b++)
		if (labels[b])
			printf("  label %-18s %llu\n", label_names[b], (unsigned long long)labels[b]);
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f.recs[i];

		if (r->kind != BOT_SPOOL_SUMMARY)
			continue;
		printf("  comm %016llx rank %u/%u nodes %u %s %llu B+: %llu calls (%llu captured), "
		       "decided %s, AUTO %s\n", (unsigned long long)r->comm_id, r->rank, r->nranks,
		       r->nnodes, bot_coll_name(r->coll), (unsigned long long)r->nbytes,
		       (unsigned long long)r->calls, (unsigned long long)r->captured_calls,
		       r->decided < BOT_NARMS ? bot_arm_name(r->decided) :
		       r->flags & BOT_SPOOL_F_NO_COST ? "unknown" : "auto",
		       r->auto_arm < BOT_NARMS ? bot_arm_name(r->auto_arm) : "unknown");
	}
	free(shown);
	bot_spool_free(&f);
	return 0;
}

/* Every spool file of an argument, one summary each; a directory without
 * spool files is named (there was nothing to show). */
static int show_path(const char *path)
{
	struct bot_compile_paths list;
	char err[512];
	int rc = 0;

	if (bot_compile_list(&path, 1, &list, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: spool show: %s\n", err);
		return 1;
	}
	if (!list.n) {
		fprintf(stderr, "nccl-bot: spool show: %s: no *.spool files\n", path);
		rc = 1;
	}
	for (size_t i = 0; i < list.n; i++)
		rc |= show_one(&list, i);
	bot_compile_paths_free(&list);
	return rc;
}

static int cmd_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bot_log log = { bot_cmd_log, "spool sweep" };
	struct bot_spoolsweep_report rep;
	struct bot_sweep sw;
	const char *fabric = "unknown";
	int c, rc, bad = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		if (c == 'f') {
			fabric = optarg;
		} else if (c == 'h') {
			spool_usage(stdout);
			return 0;
		} else {
			spool_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		spool_usage(stderr);
		return 2;
	}
	bot_sweep_init(&sw);
	rc = bot_spoolsweep((const char *const *)argv + optind, (size_t)(argc - optind), fabric,
			    &sw, &rep, &log);
	if (rc < 0) {
		bot_sweep_free(&sw);
		return rc == -2 ? 2 : 1;
	}
	if (!rep.sound) {
		/* no spool file at all, or none that could be read (each path
		 * named on the log): no CSV, as spool show prints nothing */
		bot_sweep_free(&sw);
		return 1;
	}
	if (bot_sweep_write_header(stdout) < 0)
		bad = 1;
	for (size_t i = 0; i < sw.nrows; i++)
		if (bot_sweep_write_row(stdout, &sw, &sw.rows[i]) < 0)
			bad = 1;
	fprintf(stderr, "nccl-bot: spool sweep: %llu rows from clean samples; skipped %llu "
		"labelled samples and %llu context summaries\n", (unsigned long long)rep.rows,
		(unsigned long long)rep.labelled, (unsigned long long)rep.summaries);
	bot_sweep_free(&sw);
	if (fflush(stdout) != 0)
		bad = 1;
	return bad || rep.bad ? 1 : 0;
}

int bot_cmd_spool(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		spool_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "show")) {
		/* show takes no option: --help is the usage, any other word
		 * starting with '-', before the files or after them, a usage
		 * error rather than a file name, found before any file is read
		 * ("--" ends the options; ./-x names a file -x). */
		int i, end = argc, paths = 0;

		for (i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--")) {
				end = i;
				break;
			}
			if (argv[i][0] != '-' || !argv[i][1])
				continue;
			if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
				spool_usage(stdout);
				return 0;
			}
			fprintf(stderr, "nccl-bot: spool show: unknown option '%s' (a file of that "
				"name: ./%s)\n", argv[i], argv[i]);
			spool_usage(stderr);
			return 2;
		}
		for (i = 2; i < argc; i++) {
			if (i == end)
				continue;	/* the "--" itself */
			rc |= show_path(argv[i]);
			paths++;
		}
		if (!paths) {
			spool_usage(stderr);
			return 2;
		}
		return rc;
	}
	if (!strcmp(argv[1], "sweep")) {
		bot_cmd_progname(argv + 1, "spool sweep");
		return cmd_sweep(argc - 1, argv + 1);
	}
	fprintf(stderr, "nccl-bot: spool: unknown action '%s'\n", argv[1]);
	spool_usage(stderr);
	return 2;
}
