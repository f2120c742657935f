/*
 * stepenv.h - the environment for a step: what a launcher sets so that
 * every rank of a step loads nccl-bot and decides from the same table.
 *
 * One function that `nccl-bot env`, the SPANK plugin and the tests call.
 * In: where the step table comes from (the prior only, spool files of
 * earlier jobs, or a fabric's learned state), the policy settings (parsed
 * by common/settings.h), the rank-side library, the user's own
 * NCCL_TUNER_PLUGIN and NCCL_PROFILER_PLUGIN, and who wins between them and
 * nccl-bot. Out: the variables to set, in order, and a summary. Nothing is
 * printed; warnings and errors go to the log (learn/log.h).
 *
 * Who wins:
 * - an explicit request for nccl-bot (`nccl-bot env`, `srun --nccl-bot`):
 *   both variables name our library; a user's plugin that is replaced is
 *   named in a warning, and so is a variable the user had set to `none`
 *   (any case: NCCL then loads no such plugin) - "the user had turned it
 *   off";
 * - an admin default: the user's own plugins are kept. With a tuner plugin
 *   of the user's, or NCCL_TUNER_PLUGIN=none (the user turned NCCL's tuner
 *   off), nccl-bot is not used at all for the step (nothing to set; the
 *   note says which). With only a profiler plugin of the user's, our tuner
 *   still decides (NCCL_TUNER_PLUGIN ours, NCCL_PROFILER_PLUGIN theirs),
 *   the table does not let ranks measure, and the summary's note says
 *   "nothing measured: the profiler plugin is the user's <value>" for the
 *   report; with NCCL_PROFILER_PLUGIN=none the same, the note saying "the
 *   user turned NCCL's profiler off (NCCL_PROFILER_PLUGIN=none)".
 * A plugin variable naming our library (the same string, or an absolute
 * path to the same file) is not a user's. A relative name is the user's
 * even when NCCL would resolve it to our file ("bot" is
 * libnccl-tuner-bot.so to NCCL): where NCCL's dlopen search leads on a
 * rank cannot be known here. Values are used as given, never trimmed.
 *
 * The library is exported as given, normalised lexically (links kept:
 * learn/ranklib.h), so that a container binding only
 * /opt/nccl-bot/<version> opens the same path; links are resolved only to
 * check it and to compare it with the user's variables.
 *
 * NCCL_BOT_TABLE always comes from the encoder (doc/formats.md section 8):
 * a table that cannot be built is an error, never an empty variable. The
 * library must pass the rank library check (learn/ranklib.h) whenever
 * nccl-bot is used.
 */
#ifndef BOT_LEARN_STEPENV_H
#define BOT_LEARN_STEPENV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "common/state.h"
#include "learn/compile.h"
#include "learn/log.h"

enum bot_stepenv_source {
	BOT_STEPENV_PRIOR = 0,	/* no learned entries: the policy on NCCL's own cost table */
	BOT_STEPENV_SPOOL = 1,	/* plan every context earlier jobs' spool files measured */
	BOT_STEPENV_STATE = 2,	/* plan every context of a fabric's learned state */
};

enum bot_stepenv_who {
	BOT_STEPENV_EXPLICIT = 0,	/* the user asked for nccl-bot: ours replace theirs */
	BOT_STEPENV_DEFAULT = 1,	/* an admin default: the user's own plugins are kept */
};

struct bot_stepenv_req {
	enum bot_stepenv_source source;
	const char *const *spool;	/* SPOOL: spool files and directories of them */
	size_t nspool;
	const char *state;		/* STATE: a state directory, or a snapshot file */
	const char *fabric;		/* STATE: required with a directory; checked against a file */
	int policy;			/* doc/formats.md section 10 */
	uint64_t seed;
	unsigned min_bytes_log2;	/* 0..63 */
	uint32_t allow;			/* bits 0..20 */
	uint32_t comms;			/* SPOOL, STATE: communicators sharing a context, >= 1 */
	int64_t round;			/* SPOOL, STATE: the job round; < 0: the jobs in the
					 * spool files, or the state's merge rounds */
	int measure;			/* ranks may measure (where NCCL_BOT_SPOOL is set) */
	const char *lib;		/* the rank-side library, an absolute path
					 * (bot_ranklib_abspath makes a typed one so) */
	const char *user_tuner;		/* the user's NCCL_TUNER_PLUGIN; NULL or "" = unset */
	const char *user_profiler;	/* the user's NCCL_PROFILER_PLUGIN; NULL or "" = unset */
	enum bot_stepenv_who who;
};

/* Default settings: the prior, policy auto, seed 0, 1 MiB, nothing allowed
 * beyond the defaults, 8 comms, the round from the data, measuring, an
 * explicit request. lib and the user's variables are NULL. */
void bot_stepenv_req_default(struct bot_stepenv_req *req);

#define BOT_STEPENV_MAX_VARS 3

struct bot_stepenv_var {
	const char *name;
	char *value;			/* malloc()ed */
};

struct bot_stepenv {
	struct bot_stepenv_var var[BOT_STEPENV_MAX_VARS];	/* to set, in this order */
	size_t nvars;
	int used;			/* nccl-bot's tuner decides in the step */
	int measured;			/* the table lets ranks measure */
	char lib[PATH_MAX];		/* the library NCCL is pointed at: as given,
					 * normalised lexically, links kept */
	char note[PATH_MAX + 128];	/* for the step's report, "" when nothing to say */
	/* where the table came from */
	struct bot_compile_report compile;	/* SPOOL, STATE: what was read and planned */
	char fabric[BOT_STATE_FABRIC_MAX + 1];	/* STATE */
	char snapshot[BOT_STATE_NAME_MAX];	/* STATE from a directory: the snapshot planned
						 * from; "" when the fabric has none yet */
	size_t sources;				/* STATE: what was merged into it */
};

/*
 * Build the environment. Returns 0 with *out filled (free it with
 * bot_stepenv_free), -1 when it cannot be built (the reason logged), or -2
 * when the request is incomplete or inconsistent (logged; a usage error).
 */
int bot_stepenv_build(const struct bot_stepenv_req *req, struct bot_stepenv *out,
		      const struct bot_log *log);
void bot_stepenv_free(struct bot_stepenv *out);

/* A variable's value in out, NULL when it is not set. */
const char *bot_stepenv_get(const struct bot_stepenv *out, const char *name);

#endif
