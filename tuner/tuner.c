/*
 * tuner.c - per-communicator tuner contexts: from the step table to the
 * dense decision array (tuner.h), plus the context pool.
 *
 * Contexts come from a static pool of BOT_TUNER_POOL slots claimed with an
 * atomic exchange (no allocation, no lock); past that, malloc. A context we
 * cannot get fails comm init with a named reason, because running AUTO on
 * one rank while the others follow the table would hang the job.
 *
 * The step table is decoded at every comm init, under a spin lock, into one
 * static struct: init is rare and cheap next to NCCL's own, and this keeps
 * the rule simple (the table in the environment at init is the one used).
 * Decoding outcomes (DESIGN invariant 2):
 *	no table            policy from NCCL_BOT_POLICY; only `auto` exists
 *	                    without a table (leave NCCL's choice), logged
 *	digest or syntax    the prior (AUTO), logged: same bytes, same outcome
 *	unknown version     init fails (another build may be loaded elsewhere)
 * NCCL_ALGO / NCCL_PROTO set: touch nothing, logged once per process.
 *
 * No pthread calls: their symbols were re-versioned in glibc 2.34 and the
 * library must load on 2.28. Atomics are compiler builtins.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "common/table.h"
#include "policies/plan.h"
#include "policies/policy.h"
#include "tuner/tuner.h"

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "unknown"
#endif

#define BOT_TUNER_POOL 256

static struct bot_tuner_ctx pool[BOT_TUNER_POOL];
static unsigned char pool_used[BOT_TUNER_POOL];

static struct bot_table table;	/* guarded by table_lock */
static char table_lock;
static char logged_algo_env;

#define LOG(c, lvl, flags, ...)							\
	do {									\
		if ((c)->log)							\
			(c)->log((lvl), (flags), __FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

static struct bot_tuner_ctx *ctx_get(void)
{
	struct bot_tuner_ctx *c;

	for (unsigned i = 0; i < BOT_TUNER_POOL; i++)
		if (!__atomic_exchange_n(&pool_used[i], 1, __ATOMIC_ACQUIRE)) {
			pool[i].from_pool = 1;
			return &pool[i];
		}
	c = malloc(sizeof(*c));
	if (c)
		c->from_pool = 0;
	return c;
}

static void ctx_put(struct bot_tuner_ctx *c)
{
	if (!c)
		return;
	if (c->from_pool)
		__atomic_store_n(&pool_used[c - pool], 0, __ATOMIC_RELEASE);
	else
		free(c);
}

static void lock_table(void)
{
	while (__atomic_test_and_set(&table_lock, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void unlock_table(void)
{
	__atomic_clear(&table_lock, __ATOMIC_RELEASE);
}

static int env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v;
}

/* Whether an arm may be forced without looking at AUTO's choice: Ring, Tree
 * and PAT, and the table's allow-list. Anything else (CollNet, NVLS) may
 * trigger connection setup or GPU allocation on first use. */
static int arm_static_ok(unsigned arm, uint32_t allow)
{
	unsigned algo = arm / BOT_NPROTO;

	return algo == BOT_ALGO_RING || algo == BOT_ALGO_TREE || algo == BOT_ALGO_PAT ||
	       (allow >> arm & 1);
}

static int find_shape(const struct bot_table *t, uint32_t nranks, uint32_t nnodes)
{
	if (nnodes > 65535)
		nnodes = 65535;
	for (unsigned i = 0; i < t->nshapes; i++)
		if (t->shapes[i].nranks == nranks && t->shapes[i].nnodes == nnodes)
			return (int)i;
	return -1;
}

/* Reduce the table to this comm's cells. Every probe bucket depends only on
 * (seed, commId, context key, epoch 0), all known now. */
static void build_cells(struct bot_tuner_ctx *c, const struct bot_table *t, int has_comm_id)
{
	int shape = find_shape(t, c->nranks, c->nnodes);
	unsigned min_bucket = 4u * t->min_bytes_log2;

	if (shape < 0)
		return;
	for (unsigned i = 0; i < t->nentries; i++) {
		const struct bot_table_entry *e = &t->entries[i];
		struct bot_tuner_cell *cell;
		unsigned arm;

		if (e->shape != shape || e->bucket < min_bucket)
			continue;
		if (has_comm_id) {
			uint64_t key = bot_ctx_key(e->coll, e->bucket, c->nranks, c->nnodes);

			arm = (unsigned)bot_plan_arm(&e->plan,
						     bot_probe_bucket(t->seed, c->comm_id, key, 0));
		} else {
			arm = e->plan.exploit;
		}
		if (arm >= BOT_NARMS)
			continue;
		cell = &c->cell[e->coll][e->bucket];
		cell->arm = (uint8_t)arm;
		if (!arm_static_ok(arm, t->allow))
			cell->arm |= BOT_TUNER_NEEDS_AUTO;
		cell->nchannels = e->plan.nchannels;
		c->ncells++;
	}
}

/* No table: the policy named by NCCL_BOT_POLICY on the prior. Only `auto`
 * (leave NCCL's choice) exists without a table in this build; any other name
 * is logged and treated as auto, identically on every rank given the same
 * environment. */
static void no_table(struct bot_tuner_ctx *c)
{
	const char *p = getenv("NCCL_BOT_POLICY");

	if (p && *p && strcmp(p, "auto") != 0)
		LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_POLICY=%s needs a step table (NCCL_BOT_TABLE) in this build; "
		    "leaving NCCL's choice (auto)", p);
}

/* Decode the table and fill c's cells. Returns 0, or -1 when init must
 * fail (reason already logged). */
static int load_table(struct bot_tuner_ctx *c, int has_comm_id)
{
	const char *text = getenv("NCCL_BOT_TABLE");
	int err, ret = 0;

	if (!text || !*text) {
		no_table(c);
		return 0;
	}
	lock_table();
	err = bot_table_decode(text, strlen(text), &table);
	if (err == BOT_TABLE_OK) {
		c->digest = table.digest;
		c->shadow = (table.flags & BOT_TABLE_F_SHADOW) || table.policy == BOT_POLICY_SHADOW;
		build_cells(c, &table, has_comm_id);
	} else if (bot_table_err_fatal(err)) {
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE: %s (this is nccl-bot " PACKAGE_VERSION
		    ", table format %d): failing communicator init rather than deciding "
		    "differently from other ranks; load the nccl-bot build that compiled the table",
		    bot_table_strerror(err), BOT_TABLE_VERSION);
		ret = -1;
	} else {
		LOG(c, BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING,
		    "nccl-bot: NCCL_BOT_TABLE rejected: %s; leaving NCCL's choice (the prior) "
		    "for this communicator", bot_table_strerror(err));
	}
	unlock_table();
	return ret;
}

int bot_tuner_open(struct bot_tuner_ctx **out, int abi, int has_comm_id, uint64_t comm_id,
		   size_t nranks, size_t nnodes, bot_nccl_logger_t log)
{
	struct bot_tuner_ctx *c = ctx_get();
	unsigned char from_pool;

	*out = NULL;
	if (!c) {
		if (log)
			log(BOT_NCCL_LOG_WARN, BOT_NCCL_INIT | BOT_NCCL_TUNING, __FILE__, __LINE__,
			    "nccl-bot: cannot allocate the per-communicator context (%zu bytes): "
			    "failing communicator init", sizeof(*c));
		return BOT_NCCL_INTERNAL_ERROR;
	}
	from_pool = c->from_pool;
	memset(c, 0, sizeof(*c));
	memset(c->cell, BOT_TUNER_AUTO, sizeof(c->cell));
	c->from_pool = from_pool;
	c->abi = (uint8_t)abi;
	c->comm_id = comm_id;
	c->nranks = nranks > UINT32_MAX ? UINT32_MAX : (uint32_t)nranks;
	c->nnodes = nnodes > UINT32_MAX ? UINT32_MAX : (uint32_t)nnodes;
	c->log = log;
	c->debug = env_set("NCCL_BOT_DEBUG") && strcmp(getenv("NCCL_BOT_DEBUG"), "0") != 0;
	c->prof_rank = has_comm_id ? bot_prof_link_take(comm_id) : -1;

	if (env_set("NCCL_ALGO") || env_set("NCCL_PROTO")) {
		if (!__atomic_exchange_n(&logged_algo_env, 1, __ATOMIC_RELAXED))
			LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_TUNING,
			    "nccl-bot: NCCL_ALGO or NCCL_PROTO is set: leaving every cost table untouched");
		*out = c;
		return BOT_NCCL_SUCCESS;
	}
	if (load_table(c, has_comm_id) < 0) {
		ctx_put(c);
		return BOT_NCCL_INTERNAL_ERROR;
	}
	LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_INIT | BOT_NCCL_TUNING,
	    "nccl-bot " PACKAGE_VERSION ": tuner v%d comm %016llx nranks %u nnodes %u: "
	    "table %016llx, %u contexts decided, profiler rank %d%s%s", abi,
	    (unsigned long long)comm_id, c->nranks, c->nnodes, (unsigned long long)c->digest,
	    c->ncells, c->prof_rank,
	    c->shadow ? ", shadow (never written)" : "",
	    has_comm_id ? "" : ", no commId (exploit arms only)");
	*out = c;
	return BOT_NCCL_SUCCESS;
}

void bot_tuner_close(struct bot_tuner_ctx *c)
{
	ctx_put(c);
}

void bot_tuner_debug_log(const struct bot_tuner_ctx *c, int coll, size_t nbytes, int arm,
			 int forced)
{
	LOG(c, BOT_NCCL_LOG_INFO, BOT_NCCL_TUNING,
	    "nccl-bot: comm %016llx coll %d nbytes %zu bucket %u: arm %d %s",
	    (unsigned long long)c->comm_id, coll, nbytes, bot_tuner_bucket(nbytes), arm,
	    forced ? "forced" : c->shadow ? "shadow" : "left to NCCL (unsupported or not allowed)");
}
