/*
 * compact.h - the compactor (doc/formats.md section 14): the one writer
 * that turns the inbox's deltas into each fabric's learned state.
 *
 * One run, under the state directory's lease (learn/lease.h): list the
 * inbox (bounded, every file opened the safe way and read whole by the
 * delta reader), quarantine what the reader refuses, group deltas by job
 * step (cluster, job, restart, step), refuse groups that disagree on uid,
 * fabric or step nodes, and leave groups that are not ready (not every
 * node yet, still settling, younger than max_wait). Then per fabric, under
 * the fabric's writer lock (learn/lock.h, the lock `state add` takes):
 * load `current` and the ledger it names, decay the state when the window
 * advanced, and for each ready group in identity order: drop duplicates
 * (identities in the ledger), quarantine steps too old to dedup and steps
 * reporting contexts they could not have produced, set aside steps
 * contradicting the fabric (consensus), reduce the step's samples to the
 * minimum over ranks across its nodes (learn/compile.h), cap each
 * principal's samples and calls per (context, arm) in the window, and
 * merge (a bin that would pass 2^32-1 halves its arm). The steps set aside, with those held from
 * earlier runs (<state>/held/, listed with the inbox), are accepted and
 * merged when steps of consensus_users distinct uids contradict the fabric
 * in the same direction on a common (context, arm); the others are moved
 * to held/, or quarantined once held hold_windows windows. Then write the
 * ledger, publish the snapshot naming it, and only then remove the merged
 * deltas from the inbox (and held/) and append provenance lines (those
 * of deltas quarantined before their fabric was known, once the inbox is
 * grouped, to <state>/.ledger/provenance.log).
 *
 * Every knob is a field of struct bot_compact_conf (defaults by
 * bot_compact_conf_default); the tool fills it from the site configuration
 * (learn/siteconf.h) and its options over it (tools/cmd_compact.c).
 * Reports through the caller's log; the one-line summaries are the tool's.
 */
#ifndef BOT_LEARN_COMPACT_H
#define BOT_LEARN_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/state.h"
#include "learn/lease.h"
#include "learn/log.h"

#define BOT_COMPACT_MAX_INBOX 65536u	/* deltas looked at per run (first by name) */
#define BOT_COMPACT_MAX_BYTES (4ull << 30)	/* delta bytes read per run (default) */

struct bot_compact_conf {
	const char *state;		/* the state directory (must exist) */
	uint64_t window;		/* seconds of a bounded-influence window (86400) */
	uint64_t user_cap;		/* samples per (context, arm), window and uid (4096) */
	uint64_t account_cap;		/* the same per trusted account (4 x user_cap) */
	uint64_t dedup_windows;		/* windows the ledger remembers identities (14) */
	uint64_t settle;		/* seconds without a new delta of a step (300) */
	uint64_t max_wait;		/* seconds after which a step merges as it is (3600) */
	uint64_t consensus_min;		/* contradicted contexts that hold a step (4) */
	uint64_t consensus_users;	/* uids agreeing that accept held steps (3) */
	uint64_t hold_windows;		/* windows a step stays held (0: dedup_windows - 1;
					 * must be below dedup_windows) */
	unsigned retention;		/* ledger files kept per fabric (8, >= 2) */
	const char *const *fabrics;	/* the site's fabric list; NULL/0: any */
	size_t nfabrics;
	const char *const *only;	/* this run: only these fabrics; NULL/0: all */
	size_t nonly;
	int64_t now;			/* unix seconds; < 0: the clock (tests set it) */
	uint64_t max_bytes;		/* delta bytes listed per run (BOT_COMPACT_MAX_BYTES) */
	int wait;			/* wait for the lease instead of exiting */
	/* progress for a person: called after each delta a run reads, with
	 * the count read and the count listed; NULL: none */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};

void bot_compact_conf_default(struct bot_compact_conf *c);

/* Reasons a delta is quarantined, counted per reason (metrics). */
enum bot_compact_reason {
	BOT_Q_UNREADABLE = 0,		/* the delta reader refused it */
	BOT_Q_GROUP,			/* its step's deltas disagree on uid, fabric or nodes */
	BOT_Q_FABRIC,			/* not in the site's fabric list */
	BOT_Q_TOO_OLD,			/* step ended before the dedup horizon */
	BOT_Q_IMPOSSIBLE,		/* a context the step could not have produced */
	BOT_Q_CONSENSUS,		/* held hold_windows, and fewer than consensus_users
					 * agreed */
	BOT_Q_NREASONS
};
const char *bot_compact_reason_name(int reason);

struct bot_compact_fabric {
	char fabric[BOT_STATE_FABRIC_MAX + 1];
	size_t merged;			/* deltas merged now */
	size_t steps;			/* job steps merged now */
	size_t duplicate;		/* deltas already in the ledger: removed */
	size_t quarantined;		/* deltas quarantined in this fabric's pass */
	size_t waiting;			/* deltas of steps not ready: left */
	size_t held_new;		/* deltas moved from the inbox to held/ now */
	size_t held;			/* deltas in held/ after the run (new or still) */
	size_t accepted;		/* of the merged, deltas of contradicting steps that
					 * consensus_users accepted (from held/ or new) */
	uint64_t offered, admitted;	/* samples of the merged steps, before and after caps */
	uint64_t capped_steps;		/* merged steps that a cap scaled */
	char snapshot[BOT_STATE_NAME_MAX];	/* published now; "" when nothing was */
	int failed;			/* an error: nothing published (on the log) */
};

struct bot_compact_result {
	int busy;			/* the lease was held by another compactor */
	char holder[BOT_LEASE_HOLDER_MAX];
	size_t inbox;			/* deltas listed in the inbox */
	size_t held_listed;		/* deltas listed in held/ */
	size_t held;			/* deltas in held/ after the run, every fabric */
	size_t quarantined;		/* all quarantined deltas, every reason */
	size_t by_reason[BOT_Q_NREASONS];
	size_t skipped;			/* left: another fabric than --fabric asked */
	size_t unlisted;		/* left: past BOT_COMPACT_MAX_INBOX, not listed */
	uint64_t oldest_s;		/* age of the oldest delta left in the inbox */
	struct bot_compact_fabric *fab;	/* per fabric touched, sorted by name */
	size_t nfab;
	int failed;			/* the inbox could not be read, or a fabric failed */
	int stopped;			/* failed before any fabric: nothing to summarise */
};

/*
 * One run. 0: the run finished (quarantines are outcomes, not errors; a
 * busy lease is r->busy); -1: an error (the inbox unreadable, a fabric that
 * failed: r->failed, on log); whatever failed left the state and the inbox
 * as they were for that fabric. r->stopped as well when the run failed
 * before it reached any fabric (bad knobs, the lease, the directories, the
 * listing, memory): its counts then say only what it quarantined first.
 */
int bot_compact_run(const struct bot_compact_conf *c, struct bot_compact_result *r,
		    const struct bot_log *log);
void bot_compact_result_free(struct bot_compact_result *r);

#endif
