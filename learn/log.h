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
 *
 * One line, whatever a file name or a user's variable holds: control
 * characters (a newline in a file name, an escape sequence in
 * NCCL_TUNER_PLUGIN) are written as \xNN, in every message and in every
 * reason learn/ returns in a caller's err buffer (bot_log_errf).
 */
#ifndef BOT_LEARN_LOG_H
#define BOT_LEARN_LOG_H

#include <stddef.h>

enum bot_log_level {
	BOT_LOG_ERROR = 0,	/* the operation failed; the message says why */
	BOT_LOG_WARN = 1,	/* it went on, but something was skipped or replaced */
	BOT_LOG_INFO = 2,	/* what was done */
};

struct bot_log {
	void (*fn)(void *arg, int level, const char *msg);
	void *arg;
};

/* Format and hand one message to log->fn, control characters escaped. */
void bot_log_msg(const struct bot_log *log, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "error", "warning" or "info". */
const char *bot_log_level_name(int level);

/*
 * The one escaping helper: src into dst (dstlen > 0), each control
 * character (0x00-0x1f, 0x7f) as \xNN, NUL-terminated, cut before an
 * escape that does not fit. Nothing else changes, so escaping twice is
 * escaping once. Returns dst.
 */
char *bot_log_esc(char *dst, size_t dstlen, const char *src);
/* The same in place: s (a buffer of cap bytes) escaped, cut to fit. */
void bot_log_esc_inplace(char *s, size_t cap);
/* Format into err (may be NULL) with control characters escaped, as
 * common/errf.h's bot_errf does for readers; returns -1. */
int bot_log_errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
