/*
 * cmd_env.c - `nccl-bot env`: the environment a launcher needs outside
 * Slurm, as shell `export` lines for `eval "$(nccl-bot env ...)"`.
 *
 * It points NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN at the same absolute
 * path of the installed rank-side library (one instance in the process) and
 * compiles NCCL_BOT_TABLE, the step table every rank decides from
 * (doc/formats.md section 8). With --prior-only the table holds no
 * per-context entries: the policy, seed, size threshold and allow-list only.
 * With --spool the policy plans every context that earlier jobs' spool
 * files measured (learn/compile.h): the learning loop without shared state.
 * With --state it plans every context of a fabric's learned state
 * (common/state.h, built by `nccl-bot state add`), the job round being the
 * state's merge rounds.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common/state.h"
#include "common/table.h"
#include "learn/compile.h"
#include "learn/store.h"
#include "policies/context.h"
#include "policies/policy.h"

#ifndef BOT_RANK_LIBDIR
#define BOT_RANK_LIBDIR "/opt/nccl-bot/" PACKAGE_VERSION "/lib"
#endif
#define BOT_RANK_SO_NAME "libnccl-tuner-bot.so"

static void env_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot env --prior-only [--policy P] [--seed S] [--min-bytes N]\n"
		"                    [--allow LIST] [--lib PATH]\n"
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
		"  --comms C        communicators expected to share a context (default 8)\n"
		"  --round R        job index for the plan (default: jobs seen in the spools,\n"
		"                   or the state's merge rounds)\n"
		"  --no-measure     ranks never measure (they measure only where NCCL_BOT_SPOOL\n"
		"                   is set anyway)\n"
		"  --state DIR      plan from the fabric's learned state (DIR/F/current, written\n"
		"                   by `nccl-bot state add`; default $NCCL_BOT_STATE when\n"
		"                   --fabric is given alone); a snapshot file works too\n"
		"  --fabric F       the fabric whose state to use (checked against a file)\n"
		"  --policy P       policy name (default auto; see nccl-bot(7))\n"
		"  --seed S         u64 seed shared by every rank, decimal or 0x-hex (default 0)\n"
		"  --min-bytes N    leave calls below N bytes to NCCL (default 1048576; rounded\n"
		"                   up to a power of two)\n"
		"  --allow LIST     arms that may be forced beyond Ring, Tree, PAT and AUTO's own\n"
		"                   algorithm, comma-separated: nvls/simple, or nvls for all\n"
		"                   protocols, or all (forcing NVLS or CollNet may allocate\n"
		"                   GPU memory)\n"
		"  --lib PATH       the rank-side library (default " BOT_RANK_LIBDIR "/" BOT_RANK_SO_NAME ")\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* "nvls/simple,tree" -> bit per arm; -1 and a message on a bad name. */
static int parse_allow(const char *list, uint32_t *allow)
{
	char buf[512], *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf)) {
		fprintf(stderr, "nccl-bot: env: --allow: list too long\n");
		return -1;
	}
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*allow |= (1u << BOT_NARMS) - 1;
			continue;
		}
		if (!strcmp(tok, "none"))
			continue;
		int arm = strchr(tok, '/') ? bot_arm_parse(tok) : -1;
		int algo = strchr(tok, '/') ? -1 : bot_algo_parse(tok);

		if (arm >= 0) {
			*allow |= 1u << arm;
		} else if (algo >= 0) {
			for (int p = 0; p < BOT_NPROTO; p++)
				*allow |= 1u << bot_arm(algo, p);
		} else {
			fprintf(stderr, "nccl-bot: env: --allow: unknown arm or algorithm '%s' "
				"(want e.g. nvls/simple or collnet_direct)\n", tok);
			return -1;
		}
	}
	return 0;
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

/* The table from a fabric's state (a state directory or a snapshot file). */
static int env_from_state(const char *state, const char *fabric, int policy_id, uint64_t seed,
			  uint32_t allow, uint32_t comms, int64_t round, unsigned min_log2,
			  struct bot_table *t)
{
	struct bot_compile_opts o;
	struct bot_compile_report rep = { 0 };
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX], snap[BOT_STATE_NAME_MAX] = "";
	struct stat st;
	int rc;

	if (stat(state, &st) < 0) {
		fprintf(stderr, "nccl-bot: env: --state %s: %s\n", state, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!fabric) {
			fprintf(stderr, "nccl-bot: env: --state %s is a state directory: say which "
				"fabric with --fabric F\n", state);
			return -2;
		}
		rc = bot_store_load(state, fabric, &s, snap, err, sizeof(err));
	} else {
		rc = bot_state_read_file(state, &s, err, sizeof(err));
		if (rc == 0 && fabric && strcmp(fabric, s.fabric)) {
			fprintf(stderr, "nccl-bot: env: %s holds fabric '%s', not '%s'\n", state,
				s.fabric, fabric);
			bot_state_free(&s);
			return -1;
		}
	}
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: env: %s\n", err);
		return -1;
	}
	if (rc == 1)
		fprintf(stderr, "nccl-bot: env: %s/%s: no learned state yet; the table holds no "
			"learned entries (as --prior-only)\n", state, fabric);
	bot_compile_opts_default(&o);
	bot_policy_init(&o.policy, bot_policy_name(policy_id));
	o.policy.allow = allow;
	o.seed = seed;
	o.ncomms = comms;
	o.min_bytes_log2 = min_log2;
	rc = bot_compile_plan(s.kb, &o, round >= 0 ? (uint64_t)round : s.rounds, t, &rep, err,
			      sizeof(err));
	if (rc < 0)
		fprintf(stderr, "nccl-bot: env: %s%s%s%s%s: %s\n", state, snap[0] ? "/" : "",
			snap[0] ? s.fabric : "", snap[0] ? "/" : "", snap, err);
	else
		fprintf(stderr, "nccl-bot: env: fabric %s%s%s: %zu sources, %zu contexts planned, "
			"%zu table entries (%zu dropped by the size budget); round %llu\n",
			s.fabric, snap[0] ? ", " : "", snap, s.nsources, rep.contexts, rep.entries,
			rep.dropped, (unsigned long long)rep.round);
	bot_state_free(&s);
	return rc;
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
	const char *policy = "auto", *state = NULL, *fabric = NULL, *lib = BOT_RANK_LIBDIR "/" BOT_RANK_SO_NAME;
	uint64_t seed = 0, min_bytes = 1048576, comms = 8, round = 0;
	const char *spool[64];
	size_t nspool = 0;
	int have_round = 0, measure = 1;
	uint32_t allow = 0;
	int prior_only = 0, policy_id, c, k;
	char path[PATH_MAX];
	struct bot_table *t;
	char *text;
	long n;

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
			policy = optarg;
			break;
		case 'S':
			if (parse_u64(optarg, &seed) < 0) {
				fprintf(stderr, "nccl-bot: env: --seed: not a u64: '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm':
			if (parse_u64(optarg, &min_bytes) < 0 || min_bytes > (1ULL << 63)) {
				fprintf(stderr, "nccl-bot: env: --min-bytes: not a byte count <= 2^63: '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'a':
			if (parse_allow(optarg, &allow) < 0)
				return 2;
			break;
		case 'l':
			lib = optarg;
			break;
		case 'n':
			measure = 0;
			break;
		case 'o':
			if (nspool == sizeof(spool) / sizeof(spool[0])) {
				fprintf(stderr, "nccl-bot: env: --spool: at most 64 paths\n");
				return 2;
			}
			spool[nspool++] = optarg;
			break;
		case 'c':
			if (parse_u64(optarg, &comms) < 0 || comms < 1 || comms > 65536) {
				fprintf(stderr, "nccl-bot: env: --comms: want 1..65536: '%s'\n", optarg);
				return 2;
			}
			break;
		case 'r':
			if (parse_u64(optarg, &round) < 0 || round > (1ULL << 62)) {
				fprintf(stderr, "nccl-bot: env: --round: not a job index: '%s'\n", optarg);
				return 2;
			}
			have_round = 1;
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
	policy_id = bot_policy_parse(policy);
	if (policy_id < 0) {
		fprintf(stderr, "nccl-bot: env: --policy: unknown policy '%s'\n", policy);
		return 2;
	}
	if (!realpath(lib, path)) {
		fprintf(stderr, "nccl-bot: env: %s: %s; install nccl-bot's rank-side library or "
			"name it with --lib (NCCL would silently load another tuner)\n", lib,
			strerror(errno));
		return 1;
	}
	if (access(path, R_OK) != 0) {
		fprintf(stderr, "nccl-bot: env: %s: not readable: %s\n", path, strerror(errno));
		return 1;
	}

	t = malloc(sizeof(*t));
	text = malloc(BOT_TABLE_MAX_TEXT + 1);
	if (!t || !text) {
		fprintf(stderr, "nccl-bot: env: out of memory\n");
		free(t);
		free(text);
		return 1;
	}
	for (k = 0; k < 63 && (1ULL << k) < min_bytes; k++)
		;
	if (state) {
		int rc = env_from_state(state, fabric, policy_id, seed, allow, (uint32_t)comms,
					have_round ? (int64_t)round : -1, (unsigned)k, t);

		if (rc < 0) {
			free(t);
			free(text);
			return rc == -2 ? 2 : 1;
		}
	} else if (nspool) {
		struct bot_compile_opts o;
		struct bot_compile_report rep;
		char err[512];

		bot_compile_opts_default(&o);
		bot_policy_init(&o.policy, bot_policy_name(policy_id));
		o.policy.allow = allow;
		o.seed = seed;
		o.ncomms = (uint32_t)comms;
		o.round = have_round ? (int64_t)round : -1;
		o.min_bytes_log2 = (unsigned)k;
		struct bot_log log = { bot_cmd_log, "env" };

		if (bot_compile_spools(spool, nspool, &o, t, &rep, &log, err, sizeof(err)) < 0) {
			fprintf(stderr, "nccl-bot: env: %s\n", err);
			free(t);
			free(text);
			return 1;
		}
		fprintf(stderr, "nccl-bot: env: %zu spool file(s) (%zu skipped), %llu samples "
			"(%llu labelled, not learned from), %llu collectives after the minimum over "
			"ranks; %zu contexts, %zu table entries (%zu dropped by the size budget); "
			"round %llu\n", rep.files, rep.files_rejected,
			(unsigned long long)rep.samples, (unsigned long long)rep.samples_unclean,
			(unsigned long long)rep.collectives, rep.contexts, rep.entries, rep.dropped,
			(unsigned long long)rep.round);
	} else {
		bot_table_init(t, policy_id, seed);
	}
	if (min_bytes > 1 && (1ULL << k) != min_bytes)
		fprintf(stderr, "nccl-bot: env: --min-bytes %llu rounded up to %llu (a power of two)\n",
			(unsigned long long)min_bytes, 1ULL << k);
	t->min_bytes_log2 = (uint8_t)k;
	t->allow = allow;
	/* Ranks measure only with NCCL_BOT_SPOOL set as well. */
	if (measure)
		t->flags |= BOT_TABLE_F_MEASURE;
	else
		t->flags &= (uint8_t)~BOT_TABLE_F_MEASURE;
	if (policy_id == BOT_POLICY_SHADOW)
		t->flags |= BOT_TABLE_F_SHADOW;
	n = bot_table_encode(t, text, BOT_TABLE_MAX_TEXT + 1);
	if (n < 0) {
		fprintf(stderr, "nccl-bot: env: cannot encode the step table: %s\n",
			bot_table_strerror((int)n));
		free(t);
		free(text);
		return 1;
	}
	{
		const char *own = getenv("NCCL_TUNER_PLUGIN");

		if (own && *own && strcmp(own, path) != 0)
			fprintf(stderr, "nccl-bot: env: replacing NCCL_TUNER_PLUGIN=%s\n", own);
	}
	print_export("NCCL_TUNER_PLUGIN", path);
	print_export("NCCL_PROFILER_PLUGIN", path);
	print_export("NCCL_BOT_TABLE", text);
	free(t);
	free(text);
	return 0;
}
