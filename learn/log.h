/*
 * log.h - how learn/ reports: through the caller's callback, never to a
 * FILE * or to stderr.
 *
 * The library runs inside `nccl-bot` (which prints to stderr), inside the
 * SPANK plugin (which logs through slurm_error/slurm_info and cannot hold a
 * terminal) and inside tests (which collect the messages). Each message is
 * one line of text without a trailing newline and without the "nccl-bot:"
 * prefix: the callback adds whatever its context needs. A NULL struct or a
 * NULL fn drops messages.
 */
#ifndef BOT_LEARN_LOG_H
#define BOT_LEARN_LOG_H

enum bot_log_level {
	BOT_LOG_ERROR = 0,	/* the operation failed; the message says why */
	BOT_LOG_WARN = 1,	/* it went on, but something was skipped or replaced */
	BOT_LOG_INFO = 2,	/* what was done */
};

struct bot_log {
	void (*fn)(void *arg, int level, const char *msg);
	void *arg;
};

/* Format and hand one message to log->fn. */
void bot_log_msg(const struct bot_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "error", "warning" or "info". */
const char *bot_log_level_name(int level);

#endif
