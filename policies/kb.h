/*
 * kb.h - the knowledge base a policy plans from.
 *
 * Owns, per context key: the prior (AUTO's cost-table microseconds per arm,
 * < 0 = unsupported) and a bot_stats per arm. A hash map from the 64-bit
 * context key; no I/O. The replay fills it from sweep samples, the compactor
 * (later) from spool deltas. Neighbouring contexts (other sizes, other
 * scales) are reached by building their keys and looking them up, which is
 * how policies share strength across contexts.
 */
#ifndef BOT_KB_H
#define BOT_KB_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "stats.h"

struct bot_kb;

#define BOT_KB_NONE ((size_t)-1)

struct bot_kb_ctx {
	uint64_t key;
	int has_prior;
	float prior[BOT_NARMS];		/* us; < 0 unsupported */
	uint64_t calls;			/* how often jobs called it, once per rank that
					 * counted (formats.md 12; a weight, not a statistic) */
	uint64_t explore;		/* exploration budget spent across jobs (formats.md
					 * 12; unit defined by the safe-exploration
					 * policies); merges keep the larger */
	uint64_t summaries;		/* rank summaries that `calls` adds up, x 2^16
					 * (formats.md 12): calls x 2^16 / summaries is a
					 * communicator's calls per job; 0 unknown */
	struct bot_stats arm[BOT_NARMS];
};

struct bot_kb *bot_kb_new(void);
void bot_kb_free(struct bot_kb *kb);
/* Deep copy; NULL on allocation failure. */
struct bot_kb *bot_kb_clone(const struct bot_kb *kb);

/* Find or create the context. NULL on allocation failure (find: not found). */
struct bot_kb_ctx *bot_kb_get(struct bot_kb *kb, uint64_t key);
const struct bot_kb_ctx *bot_kb_find(const struct bot_kb *kb, uint64_t key);
/* The bot_kb_at() index of the context, or BOT_KB_NONE when absent. */
size_t bot_kb_index(const struct bot_kb *kb, uint64_t key);

int bot_kb_set_prior(struct bot_kb *kb, uint64_t key, const float prior[BOT_NARMS]);
/* Offer a prior row: taken when the context has none; when it has another,
 * the smaller of the two compared as u32 bit patterns in arm order is kept
 * (doc/formats.md section 12), so the result does not depend on the order
 * rows are offered. Entries that are not finite and >= 0 become -1 first. */
int bot_kb_offer_prior(struct bot_kb *kb, uint64_t key, const float prior[BOT_NARMS]);
/* Add to a context's call count (saturating). 0, or -1 on allocation failure. */
int bot_kb_add_calls(struct bot_kb *kb, uint64_t key, uint64_t calls);
/* Add calls and the summaries (x 2^16) that report them, saturating, as a
 * merge does: where one side has calls
 * but no summaries (a state written before format v3, formats.md 12) and
 * the other has both, the calls without summaries are given summaries at
 * the other side's calls per summary (rounded down: never a less busy
 * job), so that old calls do not count as calls of the new jobs. 0, or -1
 * on allocation failure. */
int bot_kb_add_counts(struct bot_kb *kb, uint64_t key, uint64_t calls, uint64_t summaries);
/* Set a context's calls to `calls` (at most its calls: a cap, a decay),
 * its summaries scaled by the same factor, rounded down, so that the calls
 * per summary never fall; where no summary would remain, no calls do
 * either (calls without summaries are a pre-v3 state's, formats.md 12). */
void bot_kb_set_calls(struct bot_kb_ctx *c, uint64_t calls);
/* A communicator's calls of the context per job, as its ranks' summaries
 * estimated them on average (calls x 2^16 / summaries); 0 when the context
 * records no summaries (formats.md 12: v1 and v2 states, the replay). */
double bot_kb_calls_per_comm(const struct bot_kb_ctx *c);
/* dst += src: calls, summaries, statistics (bot_stats_merge: an arm whose counters
 * would overflow is halved), priors by bot_kb_offer_prior(), explore the
 * larger of the two (a budget spent is not spent twice by merging the same
 * history again; 0, the v1 value, changes nothing). Returns the number of
 * arms halved (0 normally), or -1 on allocation failure; then dst is
 * partly merged (merge into a clone to keep the original). */
int bot_kb_merge(struct bot_kb *dst, const struct bot_kb *src);
/* A deep copy with the contexts in ascending key order: planning from it
 * does not depend on the order contexts were first seen. NULL on allocation
 * failure. */
struct bot_kb *bot_kb_sorted(const struct bot_kb *kb);
/* Add one latency sample (microseconds > 0) for an arm. 0, or -1 on bad
 * input or allocation failure. */
int bot_kb_add_us(struct bot_kb *kb, uint64_t key, int arm, double us);
/* Multiply every count by num/den (bot_stats_decay; the compactor's daily
 * decay, discounting between rounds); `nonce` must differ between decays
 * (the window, the round); each context and arm mixes in its key and arm. */
void bot_kb_decay(struct bot_kb *kb, uint32_t num, uint32_t den, uint64_t nonce);

size_t bot_kb_count(const struct bot_kb *kb);
/* Iterate in unspecified but deterministic order: i from 0 to count-1.
 * (It is insertion order; a clone keeps it.) */
const struct bot_kb_ctx *bot_kb_at(const struct bot_kb *kb, size_t i);

/* Scale peers: the contexts of key's collective whose bytes-per-rank bucket
 * equals key's (every nNodes/nRanks; key itself too when present), as a
 * chain of bot_kb_at() indices, newest first:
 *   for (i = bot_kb_peer_first(kb, k); i != BOT_KB_NONE; i = bot_kb_peer_next(kb, i))
 * Cost is the chain length; no scan of the kb. */
size_t bot_kb_peer_first(const struct bot_kb *kb, uint64_t key);
size_t bot_kb_peer_next(const struct bot_kb *kb, size_t i);
/* Bytes-per-rank bucket of a key: the size bucket itself, except for
 * allgather and reducescatter (nBytes is the full buffer) where it is the
 * bucket of bot_bucket_lo(bucket) / nRanks. */
unsigned bot_kb_bpr_bucket(uint64_t key);

#endif
