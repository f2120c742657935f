/*
 * env.h - the NCCL_BOT_* environment as a rank reads it.
 *
 * Every rank-side init (profiler and tuner, per communicator) reads the
 * whole environment once, through common/settings.h's bot_env_read(), so
 * the tuner and the profiler parse every variable with the same grammar as
 * the tools and agree by construction. A refused value takes its default
 * and is reported once per process per variable, at WARN level, in
 * bot_env_explain()'s words: every rank reads the same environment and so
 * does the same, and the launcher's value is what to fix.
 *
 * The variables a step table replaces (policy, seed, min bytes, allow-list:
 * doc/formats.md section 11) are not reported while a table is present,
 * since nothing reads them then.
 *
 * Six test hooks ride along, deliberately absent from doc/formats.md
 * (they are not settings): NCCL_BOT_TEST_STUCK_NS (a u64: the stuck time
 * of records and windows), NCCL_BOT_TEST_POOL_MAX (a u64: the record
 * pool's size, up to 4 x the default), NCCL_BOT_TEST_SPOOL_PERIOD_NS (a
 * u64: the rewrite period), NCCL_BOT_TEST_NO_QUIET and
 * NCCL_BOT_TEST_SPOOL_NO_THREAD (switches), parsed with the same grammar
 * and ignored silently when refused.
 */
#ifndef BOT_TUNER_ENV_H
#define BOT_TUNER_ENV_H

#include <stdint.h>

#include "common/settings.h"
#include "tuner/nccl_abi.h"

#define BOT_RENV_TEST_STUCK_NS "NCCL_BOT_TEST_STUCK_NS"
#define BOT_RENV_TEST_NO_QUIET "NCCL_BOT_TEST_NO_QUIET"
#define BOT_RENV_TEST_SPOOL_PERIOD_NS "NCCL_BOT_TEST_SPOOL_PERIOD_NS"
#define BOT_RENV_TEST_SPOOL_NO_THREAD "NCCL_BOT_TEST_SPOOL_NO_THREAD"
#define BOT_RENV_TEST_POOL_MAX "NCCL_BOT_TEST_POOL_MAX"

/* Read the environment into e (getenv). has_table: NCCL_BOT_TABLE is set
 * and non-empty (then the table's variables are not reported). log may be
 * NULL: then nothing is reported, and a later read with a logger still
 * reports. */
void bot_renv_read(struct bot_env *e, int has_table, bot_nccl_logger_t log);

/* Whether NCCL_BOT_TABLE is set and non-empty. */
int bot_renv_has_table(void);

/* The test hooks: *stuck_ns set only when the variable is a valid number;
 * no_quiet 1 only for "1". */
int bot_renv_test_stuck_ns(uint64_t *stuck_ns);
int bot_renv_test_pool_max(uint64_t *n);
int bot_renv_test_no_quiet(void);
/* The spool's rewrite period in ns (tuner/spoolwriter.h), at least 1 ms; *ns set
 * only when the variable is a valid number. */
int bot_renv_test_spool_period_ns(uint64_t *ns);
/* 1 only for "1": the spool behaves as if its writer thread could not be
 * started (tuner/spoolwriter.h). */
int bot_renv_test_spool_no_thread(void);

#endif
