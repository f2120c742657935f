/*
 * rollback_shim.c - TEMPORARY: replaced at merge by learn/store.c's
 * bot_store_rollback (the store branch). Delete this file and its line in
 * tools/Makefile.inc when that lands; a duplicate symbol at link time says
 * it was forgotten. Until then `nccl-bot state rollback` says it is not
 * available and changes nothing.
 */
#include <stdio.h>

#include "tools/cmd_state.h"

int bot_store_rollback(const char *dir, const char *fabric, const char *to_name, unsigned steps,
		       char out_snap[BOT_STATE_NAME_MAX], char *err, size_t errlen)
{
	(void)dir;
	(void)to_name;
	(void)steps;
	out_snap[0] = 0;
	if (err && errlen)
		snprintf(err, errlen, "%s: rollback is not available yet in this build "
			 "(learn/store.c's bot_store_rollback)", fabric);
	return -1;
}
