/*
 * cmd_env.c - `nccl-bot env`: the environment a launcher needs outside
 * Slurm, as shell `export` lines for `eval "$(nccl-bot env ...)"`.
 *
 * It points NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN at the same absolute
 * path of the installed rank-side library (one instance in the process) and
 * compiles NCCL_BOT_TABLE, the step table every rank decides from
 * (doc/formats.md section 8). With --prior-only the table holds no
 * per-context entries: the policy, seed, size threshold and allow-list only.
 * Tables from learned state (--state) come with the state files, later.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/table.h"
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
		"       nccl-bot env --state FILE ...     (not supported yet: exit 2)\n"
		"\n"
		"Prints the export lines a launcher needs outside Slurm:\n"
		"  eval \"$(nccl-bot env --prior-only --policy auto)\"\n"
		"\n"
		"  --prior-only     a step table without learned entries (policy on the prior)\n"
		"  --state FILE     a table compiled from learned state: not supported yet\n"
		"                   (state files come in a later release)\n"
		"  --policy P       policy name (default auto; see nccl-bot(7))\n"
		"  --seed S         u64 seed shared by every rank, decimal or 0x-hex (default 0)\n"
		"  --min-bytes N    leave calls below N bytes to NCCL (default 1048576; rounded\n"
		"                   up to a power of two)\n"
		"  --allow LIST     arms that may be forced beyond Ring, Tree, PAT and AUTO's own\n"
		"                   algorithm, comma-separated: nvls/simple, or nvls for all\n"
		"                   protocols (forcing NVLS or CollNet may allocate GPU memory)\n"
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

int bot_cmd_env(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "prior-only", no_argument, NULL, 'P' },
		{ "state", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ "min-bytes", required_argument, NULL, 'm' },
		{ "allow", required_argument, NULL, 'a' },
		{ "lib", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *policy = "auto", *state = NULL, *lib = BOT_RANK_LIBDIR "/" BOT_RANK_SO_NAME;
	uint64_t seed = 0, min_bytes = 1048576;
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
	if (state) {
		fprintf(stderr, "nccl-bot: env: --state %s: tables from learned state are not "
			"supported yet; use --prior-only\n", state);
		return 2;
	}
	if (!prior_only) {
		fprintf(stderr, "nccl-bot: env: say --prior-only (--state is not supported yet)\n");
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
	bot_table_init(t, policy_id, seed);
	for (k = 0; k < 63 && (1ULL << k) < min_bytes; k++)
		;
	if (min_bytes > 1 && (1ULL << k) != min_bytes)
		fprintf(stderr, "nccl-bot: env: --min-bytes %llu rounded up to %llu (a power of two)\n",
			(unsigned long long)min_bytes, 1ULL << k);
	t->min_bytes_log2 = (uint8_t)k;
	t->allow = allow;
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
