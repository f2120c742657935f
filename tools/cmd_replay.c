/*
 * cmd_replay.c - `nccl-bot replay`: options, data, report.
 *
 * Reads sweep files (or generates the built-in fabrics' sweep in memory when
 * none is given), groups them into contexts (replay/dataset.c), evaluates
 * AUTO and the policies in each requested mode (replay/replay_eval.c) and
 * prints one report (replay/replay_out.c). Exit status: 0 success, 1 bad or
 * unusable data (FILE:LINE on stderr), 2 usage (the message names the
 * option). Numbers, seeds, policy names and allow-lists follow the settings
 * grammar (common/settings.h, doc/formats.md section 11).
 */
#include <errno.h>
#include <getopt.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/settings.h"
#include "common/sweep.h"
#include "replay/dataset.h"
#include "replay/replay.h"
#include "sim/sim.h"

#define MAX_FILES 256

struct replay_args {
	const char *files[MAX_FILES];
	size_t nfiles;
	int policies[BOT_NPOLICY];
	size_t npolicies;
	int policy_auto;	/* the last --policy named auto (judged after every option) */
	int modes[BOT_NMODES];
	size_t nmodes;
	struct bot_replay_opts run;
	int calls_set;
	int epoch_set, delay_set;	/* given: refused without the epochs mode */
	int jobs_set;			/* given: refused without the jobs mode */
	int tune_contexts_set;		/* given: refused with --no-tune */
	const char *round_opt;		/* --comms, --plan-comms, --sample-rate or --skew
					 * given: refused without jobs or epochs */
	struct bot_eval_opts eval;
	enum bot_format format;
	struct bot_ds_opts ds;
	uint64_t sim_seed;
	unsigned sim_samples;
	int sim_seed_set, sim_samples_set;	/* given: refused with --data */
	int progress;		/* a progress line on stderr */
	int lofo;		/* leave one fabric out */
	int reachable;		/* --best reachable */
};

/* Progress on stderr: one line rewritten in place, at most once per
 * percent; the line is cleared when the mode is done. */
struct progress {
	const char *mode;
	int last;
};

static void progress_show(void *arg, double frac)
{
	struct progress *p = arg;
	int pct = (int)(frac * 100);

	if (pct == p->last)
		return;
	p->last = pct;
	fprintf(stderr, "\rnccl-bot: replay: %s %3d%%", p->mode, pct);
	fflush(stderr);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot replay [--data FILE]... [options]\n"
		"\n"
		"Replays forced-arm sweeps (doc/formats.md section 7) and scores each policy\n"
		"against AUTO (NCCL's cost model). Without --data, the built-in fabrics of the\n"
		"simulator are generated in memory. See doc/replay.md.\n"
		"\n"
		"  --data FILE          sweep CSV; repeat for several files (also positional;\n"
		"                       a file named twice is refused)\n"
		"  --policy LIST        comma list of policies (default: all but auto; AUTO,\n"
		"                       the baseline, is always printed and never listed)\n"
		"  --mode LIST          per-call, jobs, epochs; comma list (default: jobs)\n"
		"  --seed N             replay seed, decimal or 0x-hex (default 0)\n"
		"  --train-nodes SET    tuning/history split, e.g. 4-8 or 4,8 (default 4-8)\n"
		"  --test-nodes SET     scored split (default 16-32)\n"
		"  --calls N            per-call: calls per context; jobs: calls per comm and job;\n"
		"                       epochs: calls per comm (default 500; epochs 10000)\n"
		"  --jobs J             jobs mode: successive jobs (default 20)\n"
		"  --comms C            communicators sharing a context (default 8)\n"
		"  --plan-comms C       communicators the planner assumes (what a step table is\n"
		"                       compiled for; default: --comms); jobs and epochs modes\n"
		"                       (per-call mode plans for its one communicator)\n"
		"  --sample-rate X      fraction of calls measured (default 0.01)\n"
		"  --epoch E            epochs mode: calls per epoch (default 100)\n"
		"  --delay D            epochs mode: epochs before feedback is used (default 2)\n"
		"  --skew X             arrival-skew noise sd (default 0.02)\n"
		"  --budget X           safe-exploration budget of every budgeted learning policy,\n"
		"                       a fraction 0..1 of AUTO's latency (default 0.01: 1 %%);\n"
		"                       kept through tuning; the -free policies have no budget\n"
		"                       and ignore it (doc/policies.md)\n"
		"  --allow LIST         arms policies may probe beyond Ring, Tree, PAT and AUTO's\n"
		"                       algorithm: algo/proto or algo names, all, none (default none)\n"
		"  --prior SRC          data, sim or none (default data: auto_us, else the simulator)\n"
		"  --prior-fabric NAME  simulator fabric for data fabrics it does not know\n"
		"  --history H          none (default) or train: run on the training split first\n"
		"  --no-tune            policies' default parameters (no grid search)\n"
		"  --tune-contexts N    training contexts used per grid point (default 256; 0 = all)\n"
		"  --threads N          worker threads (default 2; results do not depend on it)\n"
		"  --alpha X            significance after Holm correction (default 0.05)\n"
		"  --sim-seed N         without --data: seed of the built-in fabrics' sweep,\n"
		"                       decimal or 0x-hex (default 0)\n"
		"  --sim-samples N      without --data: samples per arm of the built-in sweep\n"
		"                       (default 16)\n"
		"  --format FMT         table (default), json or csv\n"
		"  --worst N            table: list each policy's N worst test contexts (refused\n"
		"                       with --format json or csv)\n"
		"  --harmed             with --worst: rank by run loss minus AUTO's (harm), not\n"
		"                       run loss\n"
		"  --sim-fabrics LIST   without --data: simulator fabrics or families to generate\n"
		"                       (builtin, alt, calibration; default builtin)\n"
		"  --sim-outliers P     without --data: every generated fabric's chance per call\n"
		"                       of a 2-10x outlier, 0..0.5 (default: each fabric's own,\n"
		"                       0.3-0.5 %%); a stress for heavy-tailed noise\n"
		"  --best WHICH         losses against the best arm of all (all, default) or the\n"
		"                       best arm the allow-list reaches (reachable)\n"
		"  --lofo               leave one fabric out: for each fabric, tune on the other\n"
		"                       fabrics' training contexts, score its test contexts\n"
		"  --reference          the unoptimised engine (same numbers, slower: for\n"
		"                       comparing; bench/replay_scale.sh)\n"
		"  --progress WHEN      auto (default: on a terminal), always or never; on stderr\n"
		"  --help\n"
		"\n"
		"Numbers are decimal digits without blanks, signs or leading zeros (X: with an\n"
		"optional fraction and exponent, 0.02 or 1e-3), and lists have no empty items\n"
		"(doc/formats.md section 11).\n");
}

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "nccl-bot: replay: %s '%s': %s\n", opt, val, why);
	return 2;
}

/* A decimal number within [lo, hi] (common/settings.h). */
static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char range[64];
	int rc = bot_set_range(s, lo, hi, out);

	if (!rc)
		return 0;
	snprintf(range, sizeof(range), "from %llu to %llu", (unsigned long long)lo,
		 (unsigned long long)hi);
	return bot_cmd_bad_value("replay", opt, s, BOT_SET_NUMBER, range, rc, 0);
}

/* A seed: a u64, decimal or 0x-hex. */
static int parse_seed(const char *opt, const char *s, uint64_t *out)
{
	int rc = bot_set_u64(s, 1, out);

	return rc ? bot_cmd_bad_value("replay", opt, s, BOT_SET_HEX64, NULL, rc, 0) : 0;
}

/* A real number within [lo, hi]: digits with an optional fraction and
 * exponent (0.02, .5, 1e-3), the settings grammar's digits with a decimal
 * point; no blank, sign, hex, inf or nan (doc/formats.md section 11). */
static int parse_dbl(const char *opt, const char *s, double lo, double hi, double *out)
{
	size_t i = 0, digits = 0, exp = 0;
	char *e;
	double v;

	if (s[0] == '-') {
		char why[96];

		snprintf(why, sizeof(why), "negative (want %g..%g)", lo, hi);
		return bad(opt, s, why);
	}
	for (; s[i] >= '0' && s[i] <= '9'; i++)
		digits++;
	if (s[i] == '.')
		for (i++; s[i] >= '0' && s[i] <= '9'; i++)
			digits++;
	if (digits && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (s[i] == '+' || s[i] == '-')
			i++;
		for (; s[i] >= '0' && s[i] <= '9'; i++)
			exp++;
		if (!exp)
			digits = 0;
	}
	if (!digits || s[i] || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return bad(opt, s, "expected a decimal number (digits, an optional fraction and "
			   "exponent; no blank, sign, leading zero, hex, inf or nan)");
	errno = 0;
	v = strtod(s, &e);
	if (*e || e == s)
		return bad(opt, s, "expected a number");
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1))
		return bad(opt, s, "beyond the range of a double (at most about 1.8e308)");
	if (errno == ERANGE)	/* 0 or a subnormal: precision lost */
		return bad(opt, s, "too small for a double (below about 2.2e-308; 0 is 0)");
	if (v < lo || v > hi) {
		char why[96];

		snprintf(why, sizeof(why), "out of range %g..%g", lo, hi);
		return bad(opt, s, why);
	}
	*out = v;
	return 0;
}

/* "all" (every policy but auto) or comma-separated policy names. */
static int parse_policies(struct replay_args *a, const char *s)
{
	int auto_named = 0;

	a->npolicies = 0;
	a->policy_auto = 0;
	if (!strcmp(s, "all")) {
		for (int i = 0; i < BOT_NPOLICY; i++)
			if (i != BOT_POLICY_AUTO)
				a->policies[a->npolicies++] = i;
		return 0;
	}
	for (const char *item = s;;) {
		size_t n = strcspn(item, ",");
		char name[64];
		int id, rc;

		snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
			 item);
		rc = n ? bot_set_policy(name, &id) : BOT_SET_ELIST;
		if (rc)
			return bot_cmd_bad_value("replay", "--policy", n ? name : s, BOT_SET_POLICY,
						 NULL, rc, 0);
		for (size_t i = 0; i < a->npolicies; i++)
			if (a->policies[i] == id)
				id = -1;
		/* AUTO is every run's baseline, its line always printed: as a
		 * policy too it printed a second row of the same key */
		if (id == BOT_POLICY_AUTO)
			auto_named = 1;
		else if (id >= 0)
			a->policies[a->npolicies++] = id;
		if (!item[n])
			break;
		item += n + 1;
	}
	/* judged by policies_check once every option is read: a later
	 * --policy replaces this one, as any repeated option does */
	a->policy_auto = auto_named;
	return 0;
}

/* The --policy that counts (the last): auto alone is refused, auto in a
 * list left out with a note. */
static int policies_check(const struct replay_args *a)
{
	if (a->policy_auto && !a->npolicies) {
		fprintf(stderr, "nccl-bot: replay: --policy auto: AUTO is the baseline every replay "
			"prints; name a policy to score against it (default: all but auto)\n");
		return 2;
	}
	if (a->policy_auto)
		fprintf(stderr, "nccl-bot: replay: --policy: auto left out (AUTO is the baseline "
			"every replay prints)\n");
	return 0;
}

static int parse_modes(struct replay_args *a, const char *s)
{
	char buf[128], *save = NULL, *tok;

	a->nmodes = 0;
	if (strlen(s) >= sizeof(buf))
		return bad("--mode", s, "too long");
	if (bot_cmd_list_has_empty(s))
		return bad("--mode", s, "an empty item (a list's items are separated by single "
			   "commas)");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int m = bot_replay_mode_parse(tok);

		if (m < 0)
			return bad("--mode", tok, "expected per-call, jobs or epochs");
		for (size_t i = 0; i < a->nmodes; i++)
			if (a->modes[i] == m)
				m = -1;
		if (m >= 0)
			a->modes[a->nmodes++] = m;
	}
	if (!a->nmodes)
		return bad("--mode", s, "no mode named");
	return 0;
}

/* An allow-list (common/settings.h): "all", "none" or "ring/ll,nvls". */
static int parse_allow(struct replay_args *a, const char *s)
{
	size_t bad;
	int rc = bot_set_allow(s, &a->eval.allow, &bad);

	return rc ? bot_cmd_bad_value("replay", "--allow", s, BOT_SET_ALLOW, NULL, rc, bad) : 0;
}

enum {
	OPT_DATA = 256, OPT_POLICY, OPT_MODE, OPT_SEED, OPT_TRAIN, OPT_TEST, OPT_CALLS, OPT_JOBS,
	OPT_COMMS, OPT_PLAN_COMMS, OPT_RATE, OPT_EPOCH, OPT_DELAY, OPT_SKEW, OPT_PRIOR, OPT_PRIOR_FABRIC,
	OPT_HISTORY, OPT_NO_TUNE, OPT_TUNE_CTX, OPT_THREADS, OPT_ALPHA, OPT_SIM_SEED,
	OPT_SIM_SAMPLES, OPT_FORMAT, OPT_ALLOW, OPT_WORST, OPT_HARMED, OPT_REFERENCE, OPT_PROGRESS, OPT_SIM_FABRICS,
	OPT_LOFO, OPT_BEST, OPT_BUDGET, OPT_SIM_OUTLIERS, OPT_HELP
};

static const struct option options[] = {
	{ "data", required_argument, NULL, OPT_DATA },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "train-nodes", required_argument, NULL, OPT_TRAIN },
	{ "test-nodes", required_argument, NULL, OPT_TEST },
	{ "calls", required_argument, NULL, OPT_CALLS },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "comms", required_argument, NULL, OPT_COMMS },
	{ "plan-comms", required_argument, NULL, OPT_PLAN_COMMS },
	{ "sample-rate", required_argument, NULL, OPT_RATE },
	{ "epoch", required_argument, NULL, OPT_EPOCH },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "skew", required_argument, NULL, OPT_SKEW },
	{ "prior", required_argument, NULL, OPT_PRIOR },
	{ "prior-fabric", required_argument, NULL, OPT_PRIOR_FABRIC },
	{ "history", required_argument, NULL, OPT_HISTORY },
	{ "no-tune", no_argument, NULL, OPT_NO_TUNE },
	{ "tune-contexts", required_argument, NULL, OPT_TUNE_CTX },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "alpha", required_argument, NULL, OPT_ALPHA },
	{ "sim-seed", required_argument, NULL, OPT_SIM_SEED },
	{ "sim-samples", required_argument, NULL, OPT_SIM_SAMPLES },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "worst", required_argument, NULL, OPT_WORST },
	{ "harmed", no_argument, NULL, OPT_HARMED },
	{ "allow", required_argument, NULL, OPT_ALLOW },
	{ "reference", no_argument, NULL, OPT_REFERENCE },
	{ "sim-fabrics", required_argument, NULL, OPT_SIM_FABRICS },
	{ "sim-outliers", required_argument, NULL, OPT_SIM_OUTLIERS },
	{ "lofo", no_argument, NULL, OPT_LOFO },
	{ "best", required_argument, NULL, OPT_BEST },
	{ "budget", required_argument, NULL, OPT_BUDGET },
	{ "progress", required_argument, NULL, OPT_PROGRESS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 }
};

/* The same file named twice (by the same name, or another name of it)
 * would count each of its samples twice: refused. */
static int stat_data(const char *path, struct stat *st)
{
	/* "-" is standard input (bot_sweep_read): a file redirected there is
	 * the same file as its path (--data f.csv --data - <f.csv) */
	return strcmp(path, "-") ? stat(path, st) : fstat(STDIN_FILENO, st);
}

static int same_file(const char *x, const char *y)
{
	struct stat sx, sy;

	if (!strcmp(x, y))
		return 1;
	return !stat_data(x, &sx) && !stat_data(y, &sy) && sx.st_dev == sy.st_dev &&
	       sx.st_ino == sy.st_ino;
}

static int add_file(struct replay_args *a, const char *f)
{
	if (a->nfiles == MAX_FILES) {
		fprintf(stderr, "nccl-bot: replay: --data: more than %d files\n", MAX_FILES);
		return 2;
	}
	for (size_t i = 0; i < a->nfiles; i++)
		if (same_file(a->files[i], f)) {
			if (strcmp(a->files[i], f))
				fprintf(stderr, "nccl-bot: replay: --data '%s': the same file as '%s' "
					"(its samples would count twice)\n", f, a->files[i]);
			else
				fprintf(stderr, "nccl-bot: replay: --data '%s': named twice (its "
					"samples would count twice)\n", f);
			return 2;
		}
	a->files[a->nfiles++] = f;
	return 0;
}

/* Options that cannot apply to the rest of the command line are refused,
 * not ignored. -1 to go on, else 2 with the message printed. */
static int check_args(const struct replay_args *a)
{
	static const char *const sim_opts[] = { "--sim-fabrics", "--sim-seed", "--sim-samples",
						"--sim-outliers" };
	const int sim_set[] = { a->ds.sim_fabrics != NULL, a->sim_seed_set, a->sim_samples_set,
				a->ds.sim_outliers_set };

	for (size_t i = 0; a->nfiles && i < sizeof(sim_opts) / sizeof(sim_opts[0]); i++)
		if (sim_set[i]) {
			fprintf(stderr, "nccl-bot: replay: %s shapes the built-in sweep; it does not "
				"apply to --data files\n", sim_opts[i]);
			return 2;
		}
	if (a->epoch_set || a->delay_set) {
		int epochs = 0;

		for (size_t i = 0; i < a->nmodes; i++)
			epochs |= a->modes[i] == BOT_MODE_EPOCHS;
		if (!epochs) {
			fprintf(stderr, "nccl-bot: replay: %s shapes the epochs mode; give --mode "
				"epochs (or a list with it) to use it\n",
				a->epoch_set ? "--epoch" : "--delay");
			return 2;
		}
	}
	if (a->jobs_set) {
		int jobs = 0;

		for (size_t i = 0; i < a->nmodes; i++)
			jobs |= a->modes[i] == BOT_MODE_JOBS;
		if (!jobs) {
			fprintf(stderr, "nccl-bot: replay: --jobs shapes the jobs mode; give --mode "
				"jobs (or a list with it) to use it\n");
			return 2;
		}
	}
	if (a->round_opt) {
		int rounds = 0;

		for (size_t i = 0; i < a->nmodes; i++)
			rounds |= a->modes[i] == BOT_MODE_JOBS || a->modes[i] == BOT_MODE_EPOCHS;
		if (!rounds) {
			fprintf(stderr, "nccl-bot: replay: %s shapes the rounds of the jobs and epochs "
				"modes (per call: one communicator, one sample a call, no skew); give "
				"--mode jobs or epochs (or a list with one) to use it\n", a->round_opt);
			return 2;
		}
	}
	if (a->tune_contexts_set && !a->eval.tune) {
		fprintf(stderr, "nccl-bot: replay: --tune-contexts shapes the tuning; --no-tune "
			"runs none\n");
		return 2;
	}
	if (a->ds.prior_fabric && !a->nfiles) {
		fprintf(stderr, "nccl-bot: replay: --prior-fabric names the simulator fabric that "
			"stands in (AUTO's choice, the prior) for --data files of fabrics it does not "
			"know; without --data the built-in fabrics are their own\n");
		return 2;
	}
	if (a->eval.worst_excess && !a->eval.worst) {
		fprintf(stderr, "nccl-bot: replay: --harmed ranks the contexts --worst N lists; "
			"give --worst N with it\n");
		return 2;
	}
	if (a->eval.worst && a->format != BOT_FMT_TABLE) {
		fprintf(stderr, "nccl-bot: replay: --worst lists contexts in the table format only; "
			"--format %s has no such list\n", a->format == BOT_FMT_JSON ? "json" : "csv");
		return 2;
	}
	return -1;
}

/* Returns -1 to go on, else an exit status. */
static int parse_args(struct replay_args *a, int argc, char **argv)
{
	char err[256];
	uint64_t u;
	int c, rc;

	memset(a, 0, sizeof(*a));
	bot_replay_opts_default(&a->run, BOT_MODE_JOBS);
	a->modes[0] = BOT_MODE_JOBS;
	a->nmodes = 1;
	parse_policies(a, "all");
	bot_nodeset_parse("4-8", &a->eval.train, err, sizeof(err));
	bot_nodeset_parse("16-32", &a->eval.test, err, sizeof(err));
	a->eval.tune = 1;
	a->eval.tune_contexts = 256;
	a->eval.history = 0;
	a->eval.threads = 2;
	a->eval.alpha = 0.05;
	a->ds.prior = BOT_PRIOR_DATA;
	a->sim_samples = 16;
	a->progress = isatty(STDERR_FILENO);

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
		rc = 0;
		switch (c) {
		case OPT_DATA:
			rc = add_file(a, optarg);
			break;
		case OPT_POLICY:
			rc = parse_policies(a, optarg);
			break;
		case OPT_MODE:
			rc = parse_modes(a, optarg);
			break;
		case OPT_SEED:
			rc = parse_seed("--seed", optarg, &a->run.seed);
			break;
		case OPT_TRAIN:
		case OPT_TEST:
			if (bot_nodeset_parse(optarg, c == OPT_TRAIN ? &a->eval.train : &a->eval.test, err,
					      sizeof(err))) {
				fprintf(stderr, "nccl-bot: replay: %s %s\n",
					c == OPT_TRAIN ? "--train-nodes" : "--test-nodes", err);
				rc = 2;
			}
			break;
		case OPT_CALLS:
			rc = parse_u64("--calls", optarg, 1, 100000000, &a->run.calls);
			a->calls_set = 1;
			break;
		case OPT_JOBS:
			rc = parse_u64("--jobs", optarg, 1, 100000, &u);
			a->run.jobs = (uint32_t)u;
			a->jobs_set = 1;
			break;
		case OPT_COMMS:
			rc = parse_u64("--comms", optarg, 1, 4096, &u);
			a->run.comms = (uint32_t)u;
			a->round_opt = "--comms";
			break;
		case OPT_PLAN_COMMS:
			rc = parse_u64("--plan-comms", optarg, 1, 4096, &u);
			a->run.plan_comms = (uint32_t)u;
			a->round_opt = "--plan-comms";
			break;
		case OPT_RATE:
			rc = parse_dbl("--sample-rate", optarg, 0, 1, &a->run.sample_rate);
			a->round_opt = "--sample-rate";
			break;
		case OPT_EPOCH:
			rc = parse_u64("--epoch", optarg, 1, 100000000, &u);
			a->run.epoch = (uint32_t)u;
			a->epoch_set = 1;
			break;
		case OPT_DELAY:
			rc = parse_u64("--delay", optarg, 1, 1000, &u);
			a->run.delay = (uint32_t)u;
			a->delay_set = 1;
			break;
		case OPT_SKEW:
			rc = parse_dbl("--skew", optarg, 0, 10, &a->run.skew_sd);
			a->round_opt = "--skew";
			break;
		case OPT_PRIOR:
			if (!strcmp(optarg, "data"))
				a->ds.prior = BOT_PRIOR_DATA;
			else if (!strcmp(optarg, "sim"))
				a->ds.prior = BOT_PRIOR_SIM;
			else if (!strcmp(optarg, "none"))
				a->ds.prior = BOT_PRIOR_NONE;
			else
				rc = bad("--prior", optarg, "expected data, sim or none");
			break;
		case OPT_PRIOR_FABRIC:
			if (!bot_sim_fabric_find(optarg))
				rc = bad("--prior-fabric", optarg, "not a simulator fabric (nccl-bot sim --help)");
			a->ds.prior_fabric = optarg;
			break;
		case OPT_HISTORY:
			if (!strcmp(optarg, "train"))
				a->eval.history = 1;
			else if (!strcmp(optarg, "none"))
				a->eval.history = 0;
			else
				rc = bad("--history", optarg, "expected train or none");
			break;
		case OPT_NO_TUNE:
			a->eval.tune = 0;
			break;
		case OPT_WORST:
			rc = parse_u64("--worst", optarg, 0, 100000, &u);
			a->eval.worst = (unsigned)u;
			break;
		case OPT_HARMED:
			a->eval.worst_excess = 1;
			break;
		case OPT_TUNE_CTX:
			rc = parse_u64("--tune-contexts", optarg, 0, 100000000, &u);
			a->eval.tune_contexts = (size_t)u;
			a->tune_contexts_set = 1;
			break;
		case OPT_THREADS:
			rc = parse_u64("--threads", optarg, 1, 256, &u);
			a->eval.threads = (unsigned)u;
			break;
		case OPT_ALPHA:
			rc = parse_dbl("--alpha", optarg, 0, 1, &a->eval.alpha);
			break;
		case OPT_BUDGET:
			rc = parse_dbl("--budget", optarg, 0, 1, &a->eval.budget);
			a->eval.budget_set = 1;
			break;
		case OPT_SIM_SEED:
			rc = parse_seed("--sim-seed", optarg, &a->sim_seed);
			a->sim_seed_set = 1;
			break;
		case OPT_SIM_SAMPLES:
			rc = parse_u64("--sim-samples", optarg, 1, 100000, &u);
			a->sim_samples = (unsigned)u;
			a->sim_samples_set = 1;
			break;
		case OPT_ALLOW:
			rc = parse_allow(a, optarg);
			break;
		case OPT_REFERENCE:
			a->run.reference = 1;
			break;
		case OPT_SIM_FABRICS: {
			const struct bot_fabric *fab[64];
			const char *why = bot_cmd_fabric_list_problem(optarg);
			unsigned nf;
			char bn[96];

			if (why)
				rc = bad("--sim-fabrics", optarg, why);
			else if (bot_sim_select(optarg, fab, 64, &nf, bn, sizeof(bn)))
				rc = bad("--sim-fabrics", bn, "not a simulator fabric or family (builtin, alt, "
					 "calibration; nccl-bot sim --list)");
			a->ds.sim_fabrics = optarg;
			break;
		}
		case OPT_SIM_OUTLIERS:
			rc = parse_dbl("--sim-outliers", optarg, 0, 0.5, &a->ds.sim_outliers);
			a->ds.sim_outliers_set = 1;
			break;
		case OPT_LOFO:
			a->lofo = 1;
			break;
		case OPT_BEST:
			if (!strcmp(optarg, "all") || !strcmp(optarg, "reachable"))
				a->reachable = optarg[0] == 'r';
			else
				rc = bad("--best", optarg, "expected all or reachable");
			break;
		case OPT_PROGRESS:
			if (!strcmp(optarg, "auto"))
				a->progress = isatty(STDERR_FILENO);
			else if (!strcmp(optarg, "always"))
				a->progress = 1;
			else if (!strcmp(optarg, "never"))
				a->progress = 0;
			else
				rc = bad("--progress", optarg, "expected auto, always or never");
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "table"))
				a->format = BOT_FMT_TABLE;
			else if (!strcmp(optarg, "json"))
				a->format = BOT_FMT_JSON;
			else if (!strcmp(optarg, "csv"))
				a->format = BOT_FMT_CSV;
			else
				rc = bad("--format", optarg, "expected table, json or csv");
			break;
		case OPT_HELP:
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "nccl-bot: replay: option '%s' needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "nccl-bot: replay: unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return 2;
		}
		if (rc)
			return rc;
	}
	for (; optind < argc; optind++)
		if ((rc = add_file(a, argv[optind])))
			return rc;
	if ((rc = policies_check(a)))
		return rc;
	return check_args(a);
}

static int load(struct replay_args *a, struct bot_dataset *ds)
{
	char err[BOT_SWEEP_ERR_MAX > BOT_DS_ERR_MAX ? BOT_SWEEP_ERR_MAX : BOT_DS_ERR_MAX];

	if (bot_replay_load(ds, a->files, a->nfiles, &a->ds, &a->eval.train, &a->eval.test,
			    a->sim_seed, a->sim_samples, err, sizeof(err))) {
		fprintf(stderr, "nccl-bot: replay: %s\n", err);
		return 1;
	}
	if (ds->partial_rows)
		fprintf(stderr, "nccl-bot: replay: %llu partly forced rows (algo or proto auto) kept out of arm statistics\n",
			(unsigned long long)ds->partial_rows);
	if (ds->skipped_no_forced)
		fprintf(stderr, "nccl-bot: replay: %zu contexts without a forced arm skipped\n", ds->skipped_no_forced);
	if (ds->skipped_auto_unknown)
		fprintf(stderr, "nccl-bot: replay: %zu contexts skipped: AUTO's choice unknown (no auto_us, no auto,auto rows, no measured simulator choice)\n",
			ds->skipped_auto_unknown);
	if (ds->prior_sim)
		fprintf(stderr, "nccl-bot: replay: %zu contexts take their prior from the simulator's cost model\n", ds->prior_sim);
	if (ds->prior_none)
		fprintf(stderr, "nccl-bot: replay: %zu contexts have no prior: policies leave them to AUTO\n", ds->prior_none);
	if (!ds->nctx) {
		/* say which files and why (it said only "no scorable context
		 * in the data", after the counts) */
		fprintf(stderr, "nccl-bot: replay: no scorable context in ");
		for (size_t i = 0; i < a->nfiles; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", a->files[i]);
		if (!a->nfiles)
			fprintf(stderr, "the built-in sweep");
		if (ds->skipped_auto_unknown && !a->ds.prior_fabric)
			fprintf(stderr, ": AUTO's choice is unknown in every context that has forced "
				"arms (no auto_us, no auto,auto rows, no measured simulator choice; for a "
				"fabric the simulator does not know, --prior-fabric NAME names one to stand in)");
		else if (ds->skipped_auto_unknown)
			fprintf(stderr, ": AUTO's choice is unknown in every context that has forced "
				"arms (no auto_us, no auto,auto rows, and --prior-fabric %s's choice "
				"was not measured)", a->ds.prior_fabric);
		else if (ds->skipped_no_forced)
			fprintf(stderr, ": no context has a forced arm (only auto,auto or partly "
				"forced rows)");
		fprintf(stderr, "\n");
		return 1;
	}
	if (a->reachable) {
		size_t n = 0;

		bot_dataset_rebase(ds, a->eval.allow);
		for (size_t i = 0; i < ds->nctx; i++)
			n += ds->ctx[i].unreachable &&
			     bot_nodeset_has(&a->eval.test, bot_key_nnodes(ds->ctx[i].key));
		fprintf(stderr, "nccl-bot: replay: losses against the best arm the allow-list reaches; "
			"unreachable: %zu test contexts' best arm of all is out of its reach", n);
		/* counted per fabric in one pass (one per fabric was quadratic) */
		size_t *per = n ? calloc(ds->nfabrics, sizeof(*per)) : NULL;

		for (size_t i = 0; per && i < ds->nctx; i++)
			per[ds->ctx[i].fabric] += ds->ctx[i].unreachable &&
				bot_nodeset_has(&a->eval.test, bot_key_nnodes(ds->ctx[i].key));
		for (size_t f = 0; per && f < ds->nfabrics; f++)
			if (per[f])
				fprintf(stderr, " (%s: %zu)", ds->fabrics[f], per[f]);
		free(per);
		fprintf(stderr, "\n");
	}
	return 0;
}

/* The fabrics --lofo holds out: those with a test context, when at least
 * one other fabric has a training context to tune on. */
static int lofo_fabrics(const struct replay_args *a, const struct bot_dataset *ds, size_t **out,
			size_t *n)
{
	unsigned char *test = calloc(ds->nfabrics ? ds->nfabrics : 1, 1);
	unsigned char *train = calloc(ds->nfabrics ? ds->nfabrics : 1, 1);
	size_t ntrainfab = 0;

	*n = 0;
	*out = calloc(ds->nfabrics ? ds->nfabrics : 1, sizeof(**out));
	if (!test || !train || !*out) {
		free(test);
		free(train);
		fprintf(stderr, "nccl-bot: replay: out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < ds->nctx; i++) {
		uint32_t nodes = bot_key_nnodes(ds->ctx[i].key);

		test[ds->ctx[i].fabric] |= (unsigned char)bot_nodeset_has(&a->eval.test, nodes);
		train[ds->ctx[i].fabric] |= (unsigned char)bot_nodeset_has(&a->eval.train, nodes);
	}
	for (size_t f = 0; f < ds->nfabrics; f++)
		ntrainfab += train[f];
	for (size_t f = 0; f < ds->nfabrics; f++)
		if (test[f] && ntrainfab > train[f])
			(*out)[(*n)++] = f;
	free(test);
	free(train);
	if (!*n) {
		fprintf(stderr, "nccl-bot: replay: --lofo needs at least two fabrics, one with test "
			"contexts and another with training contexts\n");
		return -1;
	}
	return 0;
}

static int nodesets_overlap(const struct bot_nodeset *a, const struct bot_nodeset *b)
{
	for (unsigned i = 0; i < a->n; i++)
		for (unsigned j = 0; j < b->n; j++)
			if (a->lo[i] <= b->hi[j] && b->lo[j] <= a->hi[i])
				return 1;
	return 0;
}

int bot_cmd_replay(int argc, char **argv)
{
	struct replay_args a;
	struct bot_dataset ds;
	struct bot_eval *ev = NULL;
	const struct bot_eval **evp = NULL;
	size_t nev = 0, nheld = 1;
	size_t *held = NULL;
	struct progress prog;
	char err[512];
	int rc, erc;

	rc = parse_args(&a, argc, argv);
	if (rc >= 0)
		return rc;
	/* Tuning and history learn on the training split: sharing node counts
	 * with the test split would let the scored contexts into both. */
	if ((a.eval.tune || a.eval.history) && nodesets_overlap(&a.eval.train, &a.eval.test)) {
		fprintf(stderr, "nccl-bot: replay: --train-nodes and --test-nodes overlap; with tuning "
			"or --history train the scored contexts would be learned from (use disjoint "
			"node counts, or --no-tune with --history none)\n");
		return 2;
	}
	bot_dataset_init(&ds);
	rc = load(&a, &ds);
	if (!rc && a.lofo && lofo_fabrics(&a, &ds, &held, &nheld))
		rc = 1;
	if (!rc) {
		ev = calloc(a.nmodes * nheld, sizeof(*ev));
		evp = calloc(a.nmodes * nheld, sizeof(*evp));
		if (!ev || !evp) {
			fprintf(stderr, "nccl-bot: replay: out of memory\n");
			rc = 1;
		}
	}
	for (size_t mh = 0; mh < a.nmodes * nheld && !rc; mh++) {
		size_t m = mh / nheld;
		struct bot_replay_opts def;

		bot_replay_opts_default(&def, a.modes[m]);
		a.eval.run = a.run;
		a.eval.run.mode = a.modes[m];
		if (!a.calls_set)
			a.eval.run.calls = def.calls;
		a.eval.policies = a.policies;
		a.eval.npolicies = a.npolicies;
		a.eval.lofo = a.lofo;
		a.eval.holdout = a.lofo ? held[mh % nheld] : 0;
		prog.mode = bot_replay_mode_name(a.modes[m]);
		prog.last = -1;
		a.eval.progress = a.progress ? progress_show : NULL;
		a.eval.progress_arg = &prog;
		erc = bot_eval_run(&ds, &a.eval, &ev[nev], err, sizeof(err));
		if (a.progress)
			fprintf(stderr, "\r%40s\r", "");
		if (erc) {
			fprintf(stderr, "nccl-bot: replay: %s\n", err);
			bot_eval_free(&ev[nev]);
			rc = 1;
			break;
		}
		evp[nev] = &ev[nev];
		nev++;
	}
	if (!rc)
		bot_eval_print(stdout, a.format, evp, nev);
	for (size_t m = 0; m < nev; m++)
		bot_eval_free(&ev[m]);
	free(ev);
	free(evp);
	free(held);
	bot_dataset_free(&ds);
	if (!rc && fflush(stdout)) {
		fprintf(stderr, "nccl-bot: replay: writing the report: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}
