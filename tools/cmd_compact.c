/*
 * cmd_compact.c - `nccl-bot compact`: the inbox's deltas into each
 * fabric's learned state (doc/formats.md section 14; learn/compact.h does
 * the work).
 *
 *   nccl-bot compact --state DIR [--wait] [--fabric F]... [--now T]
 *                    [--window S] [--user-cap N] [--account-cap N]
 *                    [--dedup-windows N] [--settle S] [--max-wait S]
 *                    [--consensus-min N] [--retention N] [--metrics-dir DIR]
 *                    [--config FILE]
 *
 * Prints on stdout one line per fabric it touched and one for the inbox.
 * Exit status: 0 when the run finished (quarantined deltas are outcomes,
 * counted, not errors) or another compactor holds the lease (said on
 * stderr); 1 on an error (a fabric's state, ledger or inbox unreadable or
 * unwritable: nothing published for it); 2 usage.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "learn/compact.h"
#include "learn/metrics.h"

static void compact_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot compact --state DIR [--wait] [--fabric F]... [options]\n"
		"\n"
		"Merge the deltas of STATE/inbox into each fabric's state: one compactor per\n"
		"state directory (a second one exits 0 at once, or waits with --wait).\n"
		"\n"
		"  --state DIR          the state directory (default $NCCL_BOT_STATE)\n"
		"  --wait               wait for the lease instead of exiting\n"
		"  --fabric F           only this fabric (repeatable); others stay in the inbox\n"
		"  --window S           seconds of a bounded-influence window (default 86400)\n"
		"  --user-cap N         samples per (context, arm), window and uid (4096)\n"
		"  --account-cap N      the same per trusted account (4 x user-cap)\n"
		"  --dedup-windows N    windows the ledger remembers merged deltas (14)\n"
		"  --settle S           seconds without a new delta before a step merges (300)\n"
		"  --max-wait S         seconds after which a step merges as it is (3600)\n"
		"  --consensus-min N    contradicted contexts that quarantine a step (4)\n"
		"  --retention N        ledger files kept per fabric, >= 2 (8)\n"
		"  --metrics-dir DIR    write DIR/nccl-bot-compact.prom (Prometheus textfile)\n"
		"  --now T              the time, unix seconds (tests)\n"
		"  --config FILE        site configuration (read once the YAML reader is merged)\n");
}

static int write_metrics(const char *dir, const char *state, const struct bot_compact_result *r,
			 double secs, size_t backlog)
{
	time_t now = time(NULL);
	char *text = NULL, err[768];
	size_t len = 0, merged = 0, dup = 0;
	FILE *m = open_memstream(&text, &len);
	int rc;

	if (!m)
		return -1;
	for (size_t i = 0; i < r->nfab; i++) {
		merged += r->fab[i].merged;
		dup += r->fab[i].duplicate;
	}
	fprintf(m, "# HELP nccl_bot_deltas_total Deltas a compact run handled.\n"
		"# TYPE nccl_bot_deltas_total counter\n"
		"nccl_bot_deltas_total{outcome=\"merged\",reason=\"\"} %zu\n"
		"nccl_bot_deltas_total{outcome=\"duplicate\",reason=\"\"} %zu\n", merged, dup);
	for (int k = 0; k < BOT_Q_NREASONS; k++)
		fprintf(m, "nccl_bot_deltas_total{outcome=\"quarantined\",reason=\"%s\"} %zu\n",
			bot_compact_reason_name(k), r->by_reason[k]);
	fprintf(m, "# TYPE nccl_bot_inbox_backlog gauge\nnccl_bot_inbox_backlog %zu\n"
		"# TYPE nccl_bot_inbox_oldest_seconds gauge\nnccl_bot_inbox_oldest_seconds %"
		PRIu64 "\n# TYPE nccl_bot_snapshot_age_seconds gauge\n", backlog, r->oldest_s);
	for (size_t i = 0; i < r->nfab; i++) {
		char cur[4200];
		struct stat st;

		/* the age of what `current` names: when it was last replaced */
		snprintf(cur, sizeof(cur), "%s/%s/current", state, r->fab[i].fabric);
		if (lstat(cur, &st) == 0)
			fprintf(m, "nccl_bot_snapshot_age_seconds{fabric=\"%s\"} %lld\n",
				r->fab[i].fabric, (long long)(now > st.st_mtime ?
							      now - st.st_mtime : 0));
	}
	fprintf(m, "# TYPE nccl_bot_compact_duration_seconds gauge\n"
		"nccl_bot_compact_duration_seconds %.3f\n", secs);
	fclose(m);
	rc = bot_metrics_write(dir, "nccl-bot-compact.prom", text, len, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "nccl-bot: compact: metrics: %s\n", err);
	free(text);
	return rc;
}

static int number(const char *opt, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char range[64];
	int e = bot_set_range(v, lo, hi, out);

	if (e < 0) {
		snprintf(range, sizeof(range), "from %" PRIu64 " to %" PRIu64, lo, hi);
		return bot_cmd_bad_value("compact", opt, v, BOT_SET_NUMBER, range, e, 0);
	}
	return 0;
}

int bot_cmd_compact(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "wait", no_argument, NULL, 'w' },
		{ "fabric", required_argument, NULL, 'f' },
		{ "now", required_argument, NULL, 'n' },
		{ "window", required_argument, NULL, 'W' },
		{ "user-cap", required_argument, NULL, 'u' },
		{ "account-cap", required_argument, NULL, 'a' },
		{ "dedup-windows", required_argument, NULL, 'd' },
		{ "settle", required_argument, NULL, 'S' },
		{ "max-wait", required_argument, NULL, 'M' },
		{ "consensus-min", required_argument, NULL, 'c' },
		{ "retention", required_argument, NULL, 'r' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bot_compact_conf conf;
	struct bot_compact_result r;
	struct bot_log log = { bot_cmd_log, "compact" };
	const char **only = NULL, *metrics = NULL, *config = NULL;
	struct timespec t0, t1;
	size_t nonly = 0, backlog;
	int c, rc, account_set = 0;
	uint64_t v;

	bot_compact_conf_default(&conf);
	only = calloc((size_t)argc + 1, sizeof(*only));
	if (!only)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 's':
			conf.state = optarg;
			break;
		case 'w':
			conf.wait = 1;
			break;
		case 'f':
			only[nonly++] = optarg;
			break;
		case 'n':
			if (!(rc = number("--now", optarg, 0, INT64_MAX, &v)))
				conf.now = (int64_t)v;
			break;
		case 'W':
			rc = number("--window", optarg, 1, UINT32_MAX, &conf.window);
			break;
		case 'u':
			rc = number("--user-cap", optarg, 1, UINT32_MAX, &conf.user_cap);
			if (!rc && !account_set)
				conf.account_cap = 4 * conf.user_cap;
			break;
		case 'a':
			rc = number("--account-cap", optarg, 1, UINT32_MAX, &conf.account_cap);
			account_set = 1;
			break;
		case 'd':
			rc = number("--dedup-windows", optarg, 1, 100000, &conf.dedup_windows);
			break;
		case 'S':
			rc = number("--settle", optarg, 0, UINT32_MAX, &conf.settle);
			break;
		case 'M':
			rc = number("--max-wait", optarg, 0, UINT32_MAX, &conf.max_wait);
			break;
		case 'c':
			rc = number("--consensus-min", optarg, 1, 1u << 20, &conf.consensus_min);
			break;
		case 'r':
			if (!(rc = number("--retention", optarg, 2, 1000, &v)))
				conf.retention = (unsigned)v;
			break;
		case 'm':
			metrics = optarg;
			break;
		case 'C':
			config = optarg;
			break;
		case 'h':
			compact_usage(stdout);
			free(only);
			return 0;
		default:
			compact_usage(stderr);
			free(only);
			return 2;
		}
		if (rc) {
			free(only);
			return rc;
		}
	}
	/* SITE CONFIG (learn/siteconf.h, at merge): read --config / NCCL_BOT_CONFIG /
	 * /etc/nccl-bot/site.yaml here, before the options above are applied, and
	 * fill conf (state_dir, window, user_cap, account_cap, dedup_windows,
	 * settle, max_wait, consensus_min, retention, fabrics) and metrics_dir. */
	if (config) {
		fprintf(stderr, "nccl-bot: compact: --config %s: this build has no site "
			"configuration reader yet; pass the options\n", config);
		free(only);
		return 2;
	}
	if (!conf.state)
		conf.state = getenv("NCCL_BOT_STATE");
	if (optind < argc || !conf.state || !*conf.state) {
		fprintf(stderr, "nccl-bot: compact: %s\n", optind < argc ? "unexpected argument" :
			"--state is required");
		compact_usage(stderr);
		free(only);
		return 2;
	}
	conf.only = only;
	conf.nonly = nonly;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = bot_compact_run(&conf, &r, &log);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (r.busy) {
		fprintf(stderr, "nccl-bot: compact: another compactor holds the lease: %s\n",
			r.holder);
		free(only);
		return 0;
	}
	backlog = r.inbox - r.quarantined + r.unlisted;	/* those not listed wait too */
	for (size_t i = 0; i < r.nfab; i++) {
		const struct bot_compact_fabric *f = &r.fab[i];

		backlog -= f->merged + f->duplicate;
		printf("compact: %s: merged %zu delta(s) of %zu job step(s), %zu duplicate(s), %zu "
		       "quarantined, %zu waiting; samples admitted %" PRIu64 " of %" PRIu64
		       " offered; %s%s\n", f->fabric, f->merged, f->steps, f->duplicate,
		       f->quarantined, f->waiting, f->admitted, f->offered,
		       f->failed ? "FAILED, nothing published" :
		       f->snapshot[0] ? "published " : "nothing published", f->snapshot);
	}
	printf("compact: inbox: %zu delta(s) listed, %zu quarantined, %zu left\n", r.inbox,
	       r.quarantined, backlog);
	if (metrics)
		write_metrics(metrics, conf.state, &r, (double)(t1.tv_sec - t0.tv_sec) +
			      (t1.tv_nsec - t0.tv_nsec) / 1e9, backlog);
	bot_compact_result_free(&r);
	free(only);
	return rc < 0 ? 1 : 0;
}
