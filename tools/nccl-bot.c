/*
 * nccl-bot.c - the nccl-bot command: dispatch to subcommands.
 *
 * `nccl-bot SUBCOMMAND [options]`. Each subcommand lives in its own cmd_*.c
 * and owns its options, messages and exit status (tools/cmd.h).
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

struct subcommand {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct subcommand subcommands[] = {
	{ "env", bot_cmd_env, "print the export lines that load nccl-bot outside Slurm" },
	{ "harvest", bot_cmd_harvest, "one step's spool files on this node into one delta (outbox)" },
	{ "replay", bot_cmd_replay, "score policies against AUTO on sweep data or the built-in fabrics" },
	{ "sim", bot_cmd_sim, "simulate forced-arm sweeps on named fabrics (sweep CSV)" },
	{ "spool", bot_cmd_spool, "show spool files; convert their samples to a sweep CSV" },
	{ "state", bot_cmd_state, "per-fabric learned state: add, show, export, import, verify, rollback, quarantine" },
	{ "ship", bot_cmd_ship, "move a node's outbox deltas into the state directory's inbox" },
	{ "compact", bot_cmd_compact, "merge the inbox's deltas into each fabric's state" },
	{ "report", bot_cmd_report, "a job's report from its steps' parts: per context, saved and lost vs AUTO" },
	{ "doctor", bot_cmd_doctor, "is this host set up for the SPANK plugin? (a node health check)" },
	{ "fabric", bot_cmd_fabric, "the fabric map from slurm.conf and topology.conf; a node list's fabric" },
	{ "demo", bot_cmd_demo, "two emulated jobs on a throwaway local Slurm cluster: the second learns (root)" },
};

void bot_cmd_progname(char **argv, const char *name)
{
	static char buf[80];

	snprintf(buf, sizeof(buf), "nccl-bot: %s", name);
	argv[0] = buf;
}

void bot_cmd_log(void *arg, int level, const char *msg)
{
	(void)level;
	fprintf(stderr, "nccl-bot: %s: %s\n", (const char *)arg, msg);
}

const char *bot_cmd_bytes_unit(const char *value)
{
	const char *u = value + strspn(value, "0123456789");

	if (u == value || !*u)
		return NULL;
	for (const char *c = u; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z')))
			return NULL;
	return u;
}

int bot_cmd_bad_value(const char *cmd, const char *opt, const char *value, enum bot_set_kind kind,
		      const char *range, int err, size_t bad)
{
	const char *unit = (kind == BOT_SET_BYTES || kind == BOT_SET_THRESHOLD) &&
			   err == BOT_SET_ESYNTAX ? bot_cmd_bytes_unit(value) : NULL;

	const char *want = bot_set_want(kind);

	/* a byte count with a narrower range than the grammar's 2^63 says that
	 * range alone ("<= 2^63 ..., from 1 to 1TiB" read as two bounds) */
	if (range && (kind == BOT_SET_BYTES || kind == BOT_SET_THRESHOLD))
		want = "a byte count: decimal digits, optionally followed by KiB, MiB, GiB or TiB";
	fprintf(stderr, "nccl-bot: %s: %s '%s': want %s%s%s (", cmd, opt, value, want,
		range ? ", " : "", range ? range : "");
	/* "1PiB" has no blank or sign: its unit is what is refused */
	if (unit)
		fprintf(stderr, "an unknown unit '%s'", unit);
	else
		fprintf(stderr, "%s", bot_set_strerror(err));
	if (kind == BOT_SET_ALLOW && bad < strlen(value))
		fprintf(stderr, ": '%.*s'", (int)strcspn(value + bad, ","), value + bad);
	fprintf(stderr, ")\n");
	return 2;
}

int bot_cmd_list_has_empty(const char *list)
{
	return *list && (*list == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"));
}

const char *bot_cmd_fabric_list_problem(const char *list)
{
	if (!*list)
		return "empty: want a fabric or family name, or a comma list of them";
	if (bot_cmd_list_has_empty(list))
		return BOT_CMD_EMPTY_ITEM;
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: nccl-bot SUBCOMMAND [options]\n\nsubcommands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		fprintf(f, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\n`nccl-bot SUBCOMMAND --help` (or `nccl-bot help SUBCOMMAND`) describes its\n"
		"options; `nccl-bot --version` prints the release; see nccl-bot(1).\n");
}

static const struct subcommand *find_subcommand(const char *name)
{
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (!strcmp(name, subcommands[i].name))
			return &subcommands[i];
	return NULL;
}

/* `nccl-bot help CMD [WORD...]` is `nccl-bot CMD [WORD...] --help` (WORD:
 * state's and spool's own subcommands); `nccl-bot help` the list above. */
static int help(int argc, char **argv)
{
	const struct subcommand *sc;
	char *av[8];
	int n = 0;

	if (argc < 3 || !strcmp(argv[2], "help")) {
		usage(stdout);
		return 0;
	}
	sc = find_subcommand(argv[2]);
	if (!sc) {
		fprintf(stderr, "nccl-bot: help: unknown subcommand '%s'\n", argv[2]);
		usage(stderr);
		return 2;
	}
	if (argc > 5) {
		fprintf(stderr, "nccl-bot: help: %s: too many words (nccl-bot help %s [SUBCOMMAND])\n",
			sc->name, sc->name);
		return 2;
	}
	av[n++] = argv[2];
	for (int i = 3; i < argc; i++)
		av[n++] = argv[i];
	av[n++] = "--help";
	av[n] = NULL;
	bot_cmd_progname(av, sc->name);
	return sc->run(n, av);
}

/* What reached standard output, checked once for every subcommand: a
 * full disk or a closed pipe is an error, not a success with the output
 * lost. A subcommand that failed has said why already. */
static int stdout_checked(int rc)
{
	int flushed = fflush(stdout) == 0, e = errno;

	if (rc == 0 && (!flushed || ferror(stdout))) {
		fprintf(stderr, "nccl-bot: standard output: %s\n",
			!flushed ? strerror(e) : "a write failed");
		return 1;
	}
	return rc;
}

static int run_main(int argc, char **argv);

int main(int argc, char **argv)
{
	return stdout_checked(run_main(argc, argv));
}

static int run_main(int argc, char **argv)
{
	/* Numbers are read and written in the C locale whatever the user's is. */
	setlocale(LC_ALL, "C");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc, argv);
	if (!strcmp(argv[1], "--version")) {
		printf("nccl-bot %s\n", PACKAGE_VERSION);
		return 0;
	}
	{
		const struct subcommand *sc = find_subcommand(argv[1]);

		if (sc) {
			bot_cmd_progname(argv + 1, sc->name);
			return sc->run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "nccl-bot: unknown subcommand '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
