/*
 * cmd.h - subcommands of the nccl-bot tool.
 *
 * Each subcommand is `int bot_cmd_NAME(int argc, char **argv)` with argv[0]
 * "nccl-bot: NAME" (bot_cmd_progname); it returns the process exit status (0
 * success, 1 failure, 2 usage error) and prints its own messages, prefixed
 * "nccl-bot:".
 */
#ifndef BOT_CMD_H
#define BOT_CMD_H

#include <stddef.h>

#include "common/settings.h"
#include "learn/log.h"
#include "learn/siteconf.h"

int bot_cmd_env(int argc, char **argv);
int bot_cmd_harvest(int argc, char **argv);
int bot_cmd_sim(int argc, char **argv);
int bot_cmd_replay(int argc, char **argv);
int bot_cmd_spool(int argc, char **argv);
int bot_cmd_state(int argc, char **argv);
int bot_cmd_ship(int argc, char **argv);
int bot_cmd_compact(int argc, char **argv);
int bot_cmd_fabric(int argc, char **argv);
int bot_cmd_report(int argc, char **argv);
int bot_cmd_doctor(int argc, char **argv);
int bot_cmd_demo(int argc, char **argv);

/* argv[0] becomes "nccl-bot: NAME" ("nccl-bot: state add"): getopt_long
 * prints it before its own messages (an unknown option, a missing value),
 * so that they start with "nccl-bot:" as every other message does. */
void bot_cmd_progname(char **argv, const char *name);

/* What learn/ reports, on stderr: "nccl-bot: <arg>: <msg>", arg being the
 * command's name as a string ("env", "state add"). For struct bot_log. */
void bot_cmd_log(void *arg, int level, const char *msg);

/* The unit of a byte count ("PiB" of "1PiB"): what follows its leading
 * digits when that is letters alone, else NULL. bot_cmd_bad_value names it
 * as an unknown unit where the grammar refused the value's syntax. */
const char *bot_cmd_bytes_unit(const char *value);

/* 1 when a comma-separated list has an empty item (",", "4,,8", "4,"),
 * which strtok would skip unseen; else 0 (also for "", no list at all). */
int bot_cmd_list_has_empty(const char *list);
#define BOT_CMD_EMPTY_ITEM "an empty item (a list's items are separated by single commas)"
/* Why a --fabric/--sim-fabrics list is no list (empty, or an empty item),
 * or NULL; the names themselves are the simulator's to judge. */
const char *bot_cmd_fabric_list_problem(const char *list);

/*
 * A value the settings grammar (common/settings.h) refused: prints
 * "nccl-bot: CMD: OPT 'VALUE': want <bot_set_want(kind)>[, RANGE] (<reason>)"
 * and returns 2, the exit status of a usage error. range may be NULL
 * ("from 1 to 65536"). For an allow-list, bad is the offset of the refused
 * item (bot_set_allow), which is named too.
 */
int bot_cmd_bad_value(const char *cmd, const char *opt, const char *value, enum bot_set_kind kind,
		      const char *range, int err, size_t bad);

/* What stops a file being written at path, in words ("directory D does
 * not exist", "D is not a directory", "is a directory", ...) into why:
 * 0 when nothing does, that is when path's directory exists and path is
 * not a directory and, where it exists, a regular file, since it is
 * replaced by a rename: never a device, FIFO or symbolic link, nor a
 * fabric's own current or .lock, an existing snapshot, nor a state
 * directory's .lease, nor anything in a state directory's inbox,
 * quarantine, held or under its .ledger (tools/cmd_state.c). */
int bot_cmd_out_problem(const char *path, char *why, size_t cap);

/* text written whole to path (a temporary O_EXCL beside it, fsynced,
 * renamed over it, the directory fsynced; mode 0644 through the umask),
 * path given as option opt: 0, or 1 after "nccl-bot: CMD: OPT PATH:
 * reason; WHAT was not written" (tools/cmd_state.c). */
int bot_cmd_write_file(const char *cmd, const char *opt, const char *path, const char *what,
		       const char *text, size_t len);

/* An option that overrides a key of the site configuration. */
struct bot_cmd_override {
	const char *key;	/* the file's key ("user_cap") */
	const char *opt;	/* the option ("--user-cap"), for messages */
	const char *value;
};

/*
 * The site configuration of a command (tools/cmd_siteconf.c): loaded from
 * path (`--config`) or the lookup of learn/siteconf.h, then each override
 * applied in order with bot_siteconf_set. 0 with *sc filled (the caller
 * frees it), or 2 (a usage error: the command does not run) after
 * printing "nccl-bot: CMD: site configuration: FILE:LINE:COL: reason" or
 * "nccl-bot: CMD: OPT 'VALUE': key: reason".
 */
int bot_cmd_siteconf(const char *cmd, const char *path, const struct bot_cmd_override *ov,
		     size_t nov, struct bot_siteconf *sc);

/*
 * The `nccl-bot state` actions apart from those in tools/cmd_state.c (add,
 * show, export, import, and the option parsing of all): verify
 * (cmd_state_verify.c), rollback and quarantine (cmd_state_admin.c). Each
 * returns the exit status and prints its own messages.
 */
struct bot_state_opts {
	const char *dir;	/* --state, default $NCCL_BOT_STATE */
	const char *fabric;	/* --fabric */
	const char *as;		/* import --as */
	const char *out;	/* export -o */
	const char *to;		/* rollback --to */
	unsigned long steps;	/* rollback --steps (0: not given) */
	int partial;		/* add --partial */
	char **args;		/* what follows the options */
	int nargs;
};

int bot_state_verify(const struct bot_state_opts *o);
int bot_state_rollback(const struct bot_state_opts *o);
int bot_state_quarantine(const struct bot_state_opts *o);


#endif
