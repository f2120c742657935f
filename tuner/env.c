/*
 * env.c - the NCCL_BOT_* environment at the ranks (tuner/env.h).
 */
#include <stdlib.h>

#include "common/settings.h"
#include "tuner/env.h"

/* Bit per enum bot_env_id: already reported in this process. */
static unsigned warned;

static int table_only(enum bot_env_id id)
{
	return id == BOT_ENV_POLICY || id == BOT_ENV_SEED || id == BOT_ENV_MIN_BYTES ||
	       id == BOT_ENV_ALLOW;
}

void bot_renv_read(struct bot_env *e, int has_table, bot_nccl_logger_t log)
{
	bot_env_read(e, bot_getenv);
	for (unsigned id = 0; id < BOT_ENV_COUNT; id++) {
		char why[512];

		if (!(e->bad >> id & 1) || (has_table && table_only((enum bot_env_id)id)))
			continue;
		/* a read without a logger reports nothing and uses nothing up */
		if (!log || (__atomic_fetch_or(&warned, 1u << id, __ATOMIC_RELAXED) & (1u << id)))
			continue;
		bot_env_explain(e, (enum bot_env_id)id, getenv(bot_env_name((enum bot_env_id)id)),
				why, sizeof(why));
		log(BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING, __FILE__, __LINE__,
		    "nccl-bot: %s. Every rank reads the same environment, so every rank does the "
		    "same; fix the launcher's value", why);
	}
}

int bot_renv_has_table(void)
{
	const char *t = getenv(BOT_ENV_TABLE);

	return t && *t;
}

int bot_renv_test_stuck_ns(uint64_t *stuck_ns)
{
	return bot_set_u64(getenv(BOT_RENV_TEST_STUCK_NS), 0, stuck_ns) == BOT_SET_OK;
}

int bot_renv_test_pool_max(uint64_t *n)
{
	return bot_set_u64(getenv(BOT_RENV_TEST_POOL_MAX), 0, n) == BOT_SET_OK;
}

int bot_renv_test_no_quiet(void)
{
	int v = 0;

	return bot_set_bool(getenv(BOT_RENV_TEST_NO_QUIET), &v) == BOT_SET_OK && v;
}

int bot_renv_test_spool_period_ns(uint64_t *ns)
{
	uint64_t v;

	if (bot_set_u64(getenv(BOT_RENV_TEST_SPOOL_PERIOD_NS), 0, &v) != BOT_SET_OK)
		return 0;
	*ns = v < 1000000 ? 1000000 : v;
	return 1;
}

int bot_renv_test_spool_no_thread(void)
{
	int v = 0;

	return bot_set_bool(getenv(BOT_RENV_TEST_SPOOL_NO_THREAD), &v) == BOT_SET_OK && v;
}
