/*
 * cmd.h - subcommands of the nccl-bot tool.
 *
 * Each subcommand is `int bot_cmd_NAME(int argc, char **argv)` with argv[0]
 * the subcommand's name; it returns the process exit status (0 success, 1
 * failure, 2 usage error) and prints its own messages, prefixed "nccl-bot:".
 */
#ifndef BOT_CMD_H
#define BOT_CMD_H

#include "learn/log.h"

int bot_cmd_env(int argc, char **argv);
int bot_cmd_sim(int argc, char **argv);
int bot_cmd_replay(int argc, char **argv);
int bot_cmd_spool(int argc, char **argv);
int bot_cmd_state(int argc, char **argv);

/* What learn/ reports, on stderr: "nccl-bot: <arg>: <msg>", arg being the
 * command's name as a string ("env", "state add"). For struct bot_log. */
void bot_cmd_log(void *arg, int level, const char *msg);

#endif
