/*
 * cmd_compact.c - `nccl-bot compact`: the inbox's deltas into each
 * fabric's learned state (doc/formats.md section 14; learn/compact.h does
 * the work).
 *
 *   nccl-bot compact [--state DIR] [--wait] [--fabric F]... [--now T]
 *                    [--window S] [--user-cap N] [--account-cap N]
 *                    [--dedup-windows N] [--settle S] [--max-wait S]
 *                    [--consensus-min N] [--consensus-users N] [--hold-windows N]
 *                    [--retention N] [--metrics-dir DIR] [--config FILE]
 *
 * The knobs come from the site configuration (learn/siteconf.h: --config,
 * NCCL_BOT_CONFIG, /etc/nccl-bot/site.yaml), each option overriding its
 * key with the file's grammar and range (tools/cmd_siteconf.c). The state
 * directory: --state, else NCCL_BOT_STATE, else the file's state_dir.
 * Prints on stdout one line per fabric it touched and one for the inbox.
 * A run that stopped before any fabric prints nothing on stdout and writes
 * no metrics. Exit status: 0 when the run finished (quarantined deltas are
 * outcomes, counted, not errors) or another compactor holds the lease (said
 * on stderr); 1 on an error (a fabric's state, ledger or inbox unreadable or
 * unwritable: nothing published for it), or when the metrics textfile could
 * not be written (the rest published); 2 usage, a bad option value or a bad
 * site configuration (named: file, line, column, problem).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd.h"
#include "common/state.h"
#include "learn/compact.h"
#include "learn/metrics.h"
#include "tools/progress.h"

/* learn/'s messages during a run: the progress line cleared first */
static struct bot_progress compact_progress;

static void compact_log(void *arg, int level, const char *msg)
{
	bot_progress_end(&compact_progress);
	bot_cmd_log(arg, level, msg);
}

static void compact_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot compact [--state DIR] [--wait] [--fabric F]... [options]\n"
		"\n"
		"Merge the deltas of STATE/inbox into each fabric's state: one compactor per\n"
		"state directory (a second one exits 0 at once, or waits with --wait).\n"
		"Defaults come from the site configuration; each option overrides its key.\n"
		"\n"
		"  --state DIR          the state directory (default $NCCL_BOT_STATE, else\n"
		"                       state_dir of the site configuration)\n"
		"  --wait               wait for the lease instead of exiting\n"
		"  --fabric F           only this fabric (repeatable); others stay in the inbox\n"
		"  --window S           seconds of a bounded-influence window, >= 60 (86400)\n"
		"  --user-cap N         samples per (context, arm), window and uid (4096)\n"
		"  --account-cap N      the same per trusted account (4 x user-cap)\n"
		"  --dedup-windows N    windows the ledger remembers merged deltas (14)\n"
		"  --settle S           seconds without a new delta before a step merges (300)\n"
		"  --max-wait S         seconds after which a step merges as it is (3600)\n"
		"  --consensus-min N    contradicted contexts that hold a step (4)\n"
		"  --consensus-users N  uids whose held steps agree to merge them (3)\n"
		"  --hold-windows N     windows a step is held before its quarantine, below\n"
		"                       --dedup-windows (dedup-windows - 1)\n"
		"  --retention N        snapshots and ledger files kept per fabric, >= 2 (8)\n"
		"  --metrics-dir DIR    write DIR/nccl-bot-compact.prom (Prometheus textfile)\n"
		"  --now T              the time, unix seconds (tests)\n"
		"  --config FILE        the site configuration (default $NCCL_BOT_CONFIG, else\n"
		"                       /etc/nccl-bot/site.yaml when it exists; NCCL_BOT_CONFIG=none:\n"
		"                       no file)\n");
}

static int write_metrics(const char *dir, const char *state, int64_t now_opt,
			 const struct bot_compact_result *r, double secs, size_t backlog)
{
	time_t now = now_opt >= 0 ? (time_t)now_opt : time(NULL);
	char *text = NULL, err[768];
	size_t len = 0, merged = 0, dup = 0, held = 0;
	FILE *m = open_memstream(&text, &len);
	int rc;

	if (!m) {
		fprintf(stderr, "nccl-bot: compact: metrics: %s: out of memory\n", dir);
		return -1;
	}
	for (size_t i = 0; i < r->nfab; i++) {
		merged += r->fab[i].merged;
		dup += r->fab[i].duplicate;
		held += r->fab[i].held_new;
	}
	fprintf(m, "# HELP nccl_bot_compact_last_run_deltas Deltas the last compact run handled, "
		"by outcome and reason (this run's counts, not cumulative).\n"
		"# TYPE nccl_bot_compact_last_run_deltas gauge\n"
		"nccl_bot_compact_last_run_deltas{outcome=\"merged\",reason=\"\"} %zu\n"
		"nccl_bot_compact_last_run_deltas{outcome=\"duplicate\",reason=\"\"} %zu\n"
		"nccl_bot_compact_last_run_deltas{outcome=\"held\",reason=\"consensus\"} %zu\n",
		merged, dup, held);
	for (int k = 0; k < BOT_Q_NREASONS; k++)
		fprintf(m, "nccl_bot_compact_last_run_deltas{outcome=\"quarantined\","
			"reason=\"%s\"} %zu\n",
			bot_compact_reason_name(k), r->by_reason[k]);
	fprintf(m, "# HELP nccl_bot_inbox_backlog Deltas left in the inbox after the run.\n"
		"# TYPE nccl_bot_inbox_backlog gauge\nnccl_bot_inbox_backlog %zu\n"
		"# HELP nccl_bot_held Deltas held in STATE/held after the run (section 14).\n"
		"# TYPE nccl_bot_held gauge\nnccl_bot_held %zu\n"
		"# HELP nccl_bot_inbox_oldest_seconds Age of the oldest delta left in the inbox.\n"
		"# TYPE nccl_bot_inbox_oldest_seconds gauge\nnccl_bot_inbox_oldest_seconds %"
		PRIu64 "\n# HELP nccl_bot_snapshot_age_seconds Seconds since a fabric's current "
		"snapshot was published.\n# TYPE nccl_bot_snapshot_age_seconds gauge\n", backlog,
		r->held, r->oldest_s);
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
	fprintf(m, "# HELP nccl_bot_compact_duration_seconds Seconds the run took.\n"
		"# TYPE nccl_bot_compact_duration_seconds gauge\n"
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

/* The options that override a key of the site configuration. */
static const struct { int opt; const char *key, *name; } conf_opts[] = {
	{ 'W', "window", "--window" },
	{ 'u', "user_cap", "--user-cap" },
	{ 'a', "account_cap", "--account-cap" },
	{ 'd', "dedup_windows", "--dedup-windows" },
	{ 'S', "settle", "--settle" },
	{ 'M', "max_wait", "--max-wait" },
	{ 'c', "consensus_min", "--consensus-min" },
	{ 'U', "consensus_users", "--consensus-users" },
	{ 'H', "hold_windows", "--hold-windows" },
	{ 'r', "retention", "--retention" },
};
#define NCONF_OPTS (sizeof(conf_opts) / sizeof(conf_opts[0]))

/* conf from the site configuration: every knob, and the fabric list
 * (pointers into sc, which must outlive conf). */
static int conf_from_site(struct bot_compact_conf *conf, const struct bot_siteconf *sc,
			  const char ***fabrics)
{
	conf->window = sc->window;
	conf->user_cap = sc->user_cap;
	conf->account_cap = sc->account_cap;
	conf->dedup_windows = sc->dedup_windows;
	conf->settle = sc->settle;
	conf->max_wait = sc->max_wait;
	conf->consensus_min = sc->consensus_min;
	conf->consensus_users = sc->consensus_users;
	conf->hold_windows = sc->hold_windows;
	conf->retention = (unsigned)sc->retention;
	*fabrics = calloc(sc->nfabrics + 1, sizeof(**fabrics));
	if (!*fabrics)
		return -1;
	for (size_t i = 0; i < sc->nfabrics; i++)
		(*fabrics)[i] = sc->fabrics[i];
	conf->fabrics = *fabrics;
	conf->nfabrics = sc->nfabrics;
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
		{ "consensus-users", required_argument, NULL, 'U' },
		{ "hold-windows", required_argument, NULL, 'H' },
		{ "retention", required_argument, NULL, 'r' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bot_compact_conf conf;
	struct bot_compact_result r;
	struct bot_log log = { compact_log, "compact" };
	struct bot_siteconf sc;
	struct bot_cmd_override *ov = NULL;
	const char **only = NULL, **fabrics = NULL, *metrics = NULL, *config = NULL;
	struct timespec t0, t1;
	size_t nonly = 0, nov = 0, backlog;
	int c, rc;
	uint64_t v;

	bot_compact_conf_default(&conf);
	only = calloc((size_t)argc + 1, sizeof(*only));
	ov = calloc((size_t)argc + 1, sizeof(*ov));
	if (!only || !ov) {
		free(only);
		free(ov);
		return 1;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		rc = 0;
		for (size_t k = 0; k < NCONF_OPTS; k++)
			if (conf_opts[k].opt == c) {
				/* applied over the site configuration once it is read */
				ov[nov++] = (struct bot_cmd_override){ conf_opts[k].key,
								       conf_opts[k].name, optarg };
				c = 0;
			}
		switch (c) {
		case 0:
			break;
		case 's':
			conf.state = optarg;
			break;
		case 'w':
			conf.wait = 1;
			break;
		case 'f':
			if (!bot_state_fabric_ok(optarg)) {
				fprintf(stderr, "nccl-bot: compact: --fabric '%s': want "
					"[a-z0-9][a-z0-9._-]{0,63}\n", optarg);
				free(only);
				free(ov);
				return 2;
			}
			/* no fabric's state is written there: --fabric inbox
			 * exited 0 doing nothing (until 2026-12-05) */
			if (bot_state_fabric_reserved(optarg)) {
				fprintf(stderr, "nccl-bot: compact: --fabric '%s': not a fabric name "
					BOT_STATE_RESERVED_WHY "\n", optarg);
				free(only);
				free(ov);
				return 2;
			}
			only[nonly++] = optarg;
			break;
		case 'n':
			if (!(rc = number("--now", optarg, 0, INT64_MAX, &v)))
				conf.now = (int64_t)v;
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
			free(ov);
			return 0;
		default:
			compact_usage(stderr);
			free(only);
			free(ov);
			return 2;
		}
		if (rc) {
			free(only);
			free(ov);
			return rc;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nccl-bot: compact: unexpected argument '%s'\n", argv[optind]);
		compact_usage(stderr);
		free(only);
		free(ov);
		return 2;
	}
	/* an empty path names nothing (it read ": No such file or directory") */
	if ((conf.state && !*conf.state) || (metrics && !*metrics)) {
		fprintf(stderr, "nccl-bot: compact: %s: empty (leave the option out for the "
			"default)\n", conf.state && !*conf.state ? "--state" : "--metrics-dir");
		free(only);
		free(ov);
		return 2;
	}
	rc = bot_cmd_siteconf("compact", config, ov, nov, &sc);
	free(ov);
	if (rc) {
		free(only);
		return rc;
	}
	if (conf_from_site(&conf, &sc, &fabrics) < 0) {
		bot_siteconf_free(&sc);
		free(only);
		return 1;
	}
	if (!conf.state)
		conf.state = getenv("NCCL_BOT_STATE");
	if ((!conf.state || !*conf.state) && (sc.set & (1u << BOT_SITECONF_STATE_DIR)))
		conf.state = sc.state_dir;
	if (!metrics && sc.metrics_dir[0])
		metrics = sc.metrics_dir;
	if (!conf.state || !*conf.state) {
		fprintf(stderr, "nccl-bot: compact: --state is required (or NCCL_BOT_STATE, or "
			"state_dir in the site configuration)\n");
		compact_usage(stderr);
		free(fabrics);
		bot_siteconf_free(&sc);
		free(only);
		return 2;
	}
	conf.only = only;
	conf.nonly = nonly;
	bot_progress_start(&compact_progress, "compact: deltas read", 0);
	conf.progress = bot_progress_cb;
	conf.progress_arg = &compact_progress;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = bot_compact_run(&conf, &r, &log);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	bot_progress_end(&compact_progress);
	if (r.busy) {
		fprintf(stderr, "nccl-bot: compact: another compactor holds the lease: %s\n",
			r.holder);
		free(fabrics);
		bot_siteconf_free(&sc);
		free(only);
		return 0;
	}
	if (r.stopped) {
		/* nothing to summarise: the error is on stderr, and metrics of a
		 * run that never reached the inbox would read as an empty inbox */
		if (r.quarantined)
			fprintf(stderr, "nccl-bot: compact: stopped before merging; %zu delta(s) "
				"quarantined first (%s/quarantine)\n", r.quarantined, conf.state);
		bot_compact_result_free(&r);
		free(fabrics);
		bot_siteconf_free(&sc);
		free(only);
		return 1;
	}
	/* those not listed wait too; held/ is listed with the inbox */
	backlog = r.inbox + r.held_listed - r.quarantined - r.held + r.unlisted;
	for (size_t i = 0; i < r.nfab; i++) {
		const struct bot_compact_fabric *f = &r.fab[i];

		char why[160] = "";

		backlog -= f->merged + f->duplicate;
		/* what the waiting deltas wait for (the result does not say which
		 * of the two each step waits for: both are named) */
		if (f->waiting)
			snprintf(why, sizeof(why), " (%zu waiting for more nodes or the settle time, "
				 "%" PRIu64 " s; a step merges as it is after %" PRIu64 " s)",
				 f->waiting, conf.settle, conf.max_wait);
		printf("compact: %s: merged %zu delta(s) of %zu job step(s), %zu duplicate(s), %zu "
		       "quarantined, %zu waiting; samples admitted %" PRIu64 " of %" PRIu64
		       " offered; %s%s%s\n", f->fabric, f->merged, f->steps, f->duplicate,
		       f->quarantined, f->waiting, f->admitted, f->offered,
		       f->failed ? "FAILED, nothing published" :
		       f->snapshot[0] ? "published " : "nothing published", f->snapshot, why);
	}
	printf("compact: inbox: %zu delta(s) listed, %zu quarantined, %zu left", r.inbox,
	       r.quarantined, backlog);
	if (r.held)	/* section 14, "Consensus" */
		printf("; %zu held in %s/held (contradicting the fabric until %" PRIu64 " users "
		       "agree)", r.held, conf.state, conf.consensus_users);
	printf("\n");
	/* a side output: what the run published stays, the exit status says it */
	if (metrics && write_metrics(metrics, conf.state, conf.now, &r,
				     (double)(t1.tv_sec - t0.tv_sec) +
				     (t1.tv_nsec - t0.tv_nsec) / 1e9, backlog) < 0)
		rc = -1;
	bot_compact_result_free(&r);
	free(fabrics);
	bot_siteconf_free(&sc);
	free(only);
	return rc < 0 ? 1 : 0;
}
