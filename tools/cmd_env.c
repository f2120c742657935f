/*
 * cmd_env.c - `nccl-bot env`: the environment a launcher needs outside
 * Slurm, as shell `export` lines for `eval "$(nccl-bot env ...)"`.
 *
 * Options become a request for the environment for a step
 * (learn/stepenv.h), which checks the rank-side library, builds the step
 * table from the prior, spool files or a fabric's state, and lists the
 * variables; this file parses the options (common/settings.h), prints the
 * variables and says what the table came from. `nccl-bot env` is an
 * explicit request for nccl-bot: the user's own NCCL_TUNER_PLUGIN and
 * NCCL_PROFILER_PLUGIN are replaced, with a warning naming them.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common/settings.h"
#include "common/state.h"
#include "learn/ranklib.h"
#include "learn/stepenv.h"

#ifndef BOT_RANK_LIBDIR
#define BOT_RANK_LIBDIR "/opt/nccl-bot/" PACKAGE_VERSION "/lib"
#endif
#define BOT_RANK_SO_NAME "libnccl-tuner-bot.so"
#define MAX_SPOOL 64

static void env_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot env --prior-only [--policy P] [--seed S] [--min-bytes N]\n"
		"                    [--allow LIST] [--no-measure] [--lib PATH]\n"
		"       nccl-bot env --spool FILE|DIR... [--comms C] [--round R] [same options]\n"
		"       nccl-bot env --state DIR --fabric F [--comms C] [--round R] [same options]\n"
		"       nccl-bot env --state SNAPSHOT [--fabric F] [...]\n"
		"\n"
		"Prints the export lines a launcher needs outside Slurm:\n"
		"  eval \"$(nccl-bot env --prior-only --policy auto)\"\n"
		"\n"
		"  --prior-only     a step table without learned entries (policy on the prior)\n"
		"  --spool PATH     plan from earlier jobs' spool files (a directory: its\n"
		"                   *.spool files); repeatable. Bad files are skipped, named.\n"
		"  --state DIR      plan from the fabric's learned state (DIR/F/current, written\n"
		"                   by `nccl-bot state add`; default $NCCL_BOT_STATE when\n"
		"                   --fabric is given alone); a snapshot file works too\n"
		"  --fabric F       the fabric whose state to use (checked against a file)\n"
		"  --comms C        communicators expected to share a context, 1..65536\n"
		"                   (default 8; --spool and --state only)\n"
		"  --round R        job index for the plan, up to 2^62 (default: jobs seen in\n"
		"                   the spools, or the state's merge rounds; --spool and\n"
		"                   --state only)\n"
		"  --policy P       policy name (default auto; see nccl-bot(7))\n"
		"  --seed S         u64 seed shared by every rank, decimal or 0x-hex (default 0)\n"
		"  --min-bytes N    leave calls below N bytes to NCCL: a byte count, KiB, MiB,\n"
		"                   GiB, TiB suffixes (default 1048576; rounded up to a power\n"
		"                   of two)\n"
		"  --allow LIST     arms that may be forced beyond Ring, Tree, PAT and AUTO's own\n"
		"                   algorithm: all, none, or comma-separated nvls/simple, or nvls\n"
		"                   for all protocols (forcing NVLS or CollNet may allocate GPU\n"
		"                   memory)\n"
		"  --no-measure     ranks never measure (they measure only where NCCL_BOT_SPOOL\n"
		"                   is set anyway)\n"
		"  --lib PATH       the rank-side library: an ELF shared object for this machine\n"
		"                   exporting the tuner symbols; exported as given (links kept),\n"
		"                   a relative PATH taken from the current directory (default\n"
		"                   " BOT_RANK_LIBDIR "/" BOT_RANK_SO_NAME ")\n"
		"\n"
		"Values follow one grammar (doc/formats.md section 11): decimal digits without\n"
		"blanks, signs or leading zeros; 0x-hex for --seed.\n");
}

/* Print VAR='value' with shell single quotes. */
static void print_export(const char *var, const char *value)
{
	printf("export %s='", var);
	for (const char *p = value; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	}
	printf("'\n");
}

/* What the table was planned from, on stderr. */
static void say_source(const struct bot_stepenv_req *req, const struct bot_stepenv *env)
{
	const struct bot_compile_report *r = &env->compile;

	if (req->source == BOT_STEPENV_SPOOL)
		fprintf(stderr, "nccl-bot: env: %zu spool file(s) (%zu rejected, %zu the same bytes "
			"as another), %llu samples "
			"(%llu labelled, not learned from), %llu collectives after the minimum over "
			"ranks; %zu contexts, %zu table entries (%zu leave the call to AUTO; %zu "
			"dropped by the size budget, %zu of those leaving it to AUTO); round %llu\n",
			r->files, r->files_rejected, r->files_duplicate, (unsigned long long)r->samples,
			(unsigned long long)r->samples_unclean, (unsigned long long)r->collectives,
			r->contexts, r->entries, r->entries_auto, r->dropped, r->dropped_auto,
			(unsigned long long)r->round);
	else if (req->source == BOT_STEPENV_STATE)
		fprintf(stderr, "nccl-bot: env: fabric %s%s%s: %zu sources, %zu contexts planned, "
			"%zu table entries (%zu leave the call to AUTO; %zu dropped by the size "
			"budget, %zu of those leaving it to AUTO); round %llu\n",
			env->fabric, env->snapshot[0] ? ", " : "", env->snapshot, env->sources,
			r->contexts, r->entries, r->entries_auto, r->dropped, r->dropped_auto,
			(unsigned long long)r->round);
}

int bot_cmd_env(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prior-only", no_argument, NULL, 'P' },
		{ "state", required_argument, NULL, 's' },
		{ "fabric", required_argument, NULL, 'f' },
		{ "policy", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ "min-bytes", required_argument, NULL, 'm' },
		{ "allow", required_argument, NULL, 'a' },
		{ "lib", required_argument, NULL, 'l' },
		{ "spool", required_argument, NULL, 'o' },
		{ "comms", required_argument, NULL, 'c' },
		{ "round", required_argument, NULL, 'r' },
		{ "no-measure", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *fabric = NULL, *lib = BOT_RANK_LIBDIR "/" BOT_RANK_SO_NAME;
	const char *spool[MAX_SPOOL], *min_bytes = NULL, *comms_opt = NULL, *round_opt = NULL;
	struct bot_log log = { bot_cmd_log, "env" };
	struct bot_stepenv_req req;
	struct bot_stepenv env;
	char libpath[PATH_MAX], err[PATH_MAX + 128];
	struct stat st;
	size_t nspool = 0, bad;
	int prior_only = 0, rounded = 0, c, rc;
	uint64_t u;

	bot_stepenv_req_default(&req);
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'P':
			prior_only = 1;
			break;
		case 's':
			state = optarg;
			break;
		case 'f':
			fabric = optarg;
			break;
		case 'p':
			if ((rc = bot_set_policy(optarg, &req.policy)))
				return bot_cmd_bad_value("env", "--policy", optarg, BOT_SET_POLICY,
							 NULL, rc, 0);
			break;
		case 'S':
			if ((rc = bot_set_u64(optarg, 1, &req.seed)))
				return bot_cmd_bad_value("env", "--seed", optarg, BOT_SET_HEX64, NULL,
							 rc, 0);
			break;
		case 'm':
			if ((rc = bot_set_threshold(optarg, &req.min_bytes_log2, &rounded)))
				return bot_cmd_bad_value("env", "--min-bytes", optarg,
							 BOT_SET_THRESHOLD, NULL, rc, 0);
			min_bytes = optarg;
			break;
		case 'a':
			if ((rc = bot_set_allow(optarg, &req.allow, &bad)))
				return bot_cmd_bad_value("env", "--allow", optarg, BOT_SET_ALLOW, NULL,
							 rc, bad);
			break;
		case 'l':
			if (!*optarg) {
				fprintf(stderr, "nccl-bot: env: --lib '': want the rank-side "
					"library's path (empty)\n");
				return 2;
			}
			lib = optarg;
			break;
		case 'n':
			req.measure = 0;
			break;
		case 'o':
			if (nspool == MAX_SPOOL) {
				fprintf(stderr, "nccl-bot: env: --spool: at most %d paths\n", MAX_SPOOL);
				return 2;
			}
			spool[nspool++] = optarg;
			break;
		case 'c':
			if ((rc = bot_set_range(optarg, 1, 65536, &u)))
				return bot_cmd_bad_value("env", "--comms", optarg, BOT_SET_NUMBER,
							 "from 1 to 65536", rc, 0);
			req.comms = (uint32_t)u;
			comms_opt = "--comms";
			break;
		case 'r':
			if ((rc = bot_set_range(optarg, 0, 1ULL << 62, &u)))
				return bot_cmd_bad_value("env", "--round", optarg, BOT_SET_NUMBER,
							 "up to 2^62", rc, 0);
			req.round = (int64_t)u;
			round_opt = "--round";
			break;
		case 'h':
			env_usage(stdout);
			return 0;
		default:
			env_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nccl-bot: env: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (fabric && !bot_state_fabric_ok(fabric)) {
		fprintf(stderr, "nccl-bot: env: --fabric '%s': want [a-z0-9][a-z0-9._-]{0,63}\n",
			fabric);
		return 2;
	}
	if (fabric && bot_state_fabric_reserved(fabric)) {
		fprintf(stderr, "nccl-bot: env: --fabric '%s': not a fabric name "
			BOT_STATE_RESERVED_WHY "\n", fabric);
		return 2;
	}
	if (fabric && !state && !prior_only && !nspool) {
		state = getenv("NCCL_BOT_STATE");
		if (!state || !*state) {
			fprintf(stderr, "nccl-bot: env: --fabric %s: name the state directory with "
				"--state DIR or NCCL_BOT_STATE\n", fabric);
			return 2;
		}
	}
	if (fabric && (prior_only || nspool)) {
		fprintf(stderr, "nccl-bot: env: --fabric goes with --state (a fabric's learned "
			"state), not with --prior-only or --spool\n");
		return 2;
	}
	if (prior_only + (nspool > 0) + (state != NULL) > 1) {
		fprintf(stderr, "nccl-bot: env: --prior-only, --spool and --state exclude each "
			"other\n");
		return 2;
	}
	if (!prior_only && !nspool && !state) {
		fprintf(stderr, "nccl-bot: env: say --prior-only, --spool PATH or --state DIR "
			"--fabric F\n");
		env_usage(stderr);
		return 2;
	}
	if (state && !fabric && stat(state, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "nccl-bot: env: --state %s is a state directory: say which fabric "
			"with --fabric F\n", state);
		return 2;
	}
	if (prior_only && (round_opt || comms_opt)) {
		fprintf(stderr, "nccl-bot: env: %s goes with --spool or --state: a table from the "
			"prior only has no learned entries to plan for a round or communicators\n",
			round_opt ? round_opt : comms_opt);
		return 2;
	}
	/* A relative --lib is taken from the current directory as the shell
	 * names it, lexically (links kept: what NCCL is pointed at). */
	if (bot_ranklib_abspath(lib, libpath, sizeof(libpath), err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: env: --lib %s\n", err);
		return 1;
	}
	req.source = prior_only ? BOT_STEPENV_PRIOR : nspool ? BOT_STEPENV_SPOOL : BOT_STEPENV_STATE;
	req.spool = spool;
	req.nspool = nspool;
	req.state = state;
	req.fabric = fabric;
	req.lib = libpath;
	req.user_tuner = getenv("NCCL_TUNER_PLUGIN");
	req.user_profiler = getenv("NCCL_PROFILER_PLUGIN");
	req.who = BOT_STEPENV_EXPLICIT;
	rc = bot_stepenv_build(&req, &env, &log);
	if (rc < 0)
		return rc == -2 ? 2 : 1;
	say_source(&req, &env);
	if (rounded)
		fprintf(stderr, "nccl-bot: env: --min-bytes %s rounded up to %llu (a power of two)\n",
			min_bytes, 1ULL << req.min_bytes_log2);
	for (size_t i = 0; i < env.nvars; i++)
		print_export(env.var[i].name, env.var[i].value);
	bot_stepenv_free(&env);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "nccl-bot: env: writing the export lines failed\n");
		return 1;
	}
	return 0;
}
