/*
 * cmd_state.h - the `nccl-bot state` actions apart from `add`, one file per
 * group: cmd_state.c (add, show, export, import: option parsing for all),
 * cmd_state_verify.c (verify), cmd_state_admin.c (rollback, quarantine).
 * Each action returns the exit status (0, 1 failure, 2 usage) and prints
 * its own messages.
 */
#ifndef BOT_TOOLS_CMD_STATE_H
#define BOT_TOOLS_CMD_STATE_H

#include <stddef.h>

#include "common/state.h"

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
