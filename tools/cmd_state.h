/*
 * cmd_state.h - the `nccl-bot state` actions apart from `add`, one file per
 * group: cmd_state.c (add, show, export, import: option parsing for all),
 * cmd_state_verify.c (verify), cmd_state_admin.c (rollback, quarantine).
 * Each action returns the exit status (0, 1 failure, 2 usage) and prints
 * its own messages.
 */
#ifndef BOT_TOOLS_CMD_STATE_H
#define BOT_TOOLS_CMD_STATE_H

#include <dirent.h>
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

/* The names of the entries of the directory open on dirfd that keep(e, arg)
 * accepts, strdup()ed into *names (*n of them, sorted; the caller frees
 * each and the array): 0, or -1 with errno when reading the directory or
 * memory failed part-way (what was read is in *names). Shared by the
 * actions that list a directory (common/dirscan.h). */
int bot_state_cmd_names(int dirfd, int (*keep)(const struct dirent *e, void *arg), void *arg,
			char ***names, size_t *n);

int bot_state_verify(const struct bot_state_opts *o);
int bot_state_rollback(const struct bot_state_opts *o);
int bot_state_quarantine(const struct bot_state_opts *o);

#endif
