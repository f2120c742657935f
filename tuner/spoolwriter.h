/*
 * spoolwriter.h - the rank-side spool writer: this process's measurements,
 * kept in bounded memory and rewritten as one cumulative file
 * $NCCL_BOT_SPOOL/nb-<hostname>-<pid>-<token>.spool (doc/formats.md section
 * 9; the token is unique per process and per instance of the library).
 * The bottom of the rank side: it knows records only as packed bytes
 * (common/spool.h's codec) and the summaries of live communicators only
 * through the callback each registers. It also keeps the process record
 * (kind 3: NCCL version, tuner and profiler ABI, comms, flags), which makes
 * every process whose tuner initialised a communicator with NCCL_BOT_SPOOL
 * set write a file, measuring or not.
 *
 * The file is rewritten by a writer thread of the library's own, never on
 * one of NCCL's threads: every BOT_SPOOL_PERIOD_NS when something changed,
 * and when tuner/profiler finalize asks; atexit writes synchronously.
 * Without the thread (pthread_create failed; logged once), and in a process
 * that never measures (no thread is started for it), only finalize and
 * exit write, on their own threads. Never from a forked child (getpid() is
 * compared with the pid recorded at setup). Every failure only costs
 * learning: it is logged once, never returned to NCCL.
 */
#ifndef BOT_TUNER_SPOOLWRITER_H
#define BOT_TUNER_SPOOLWRITER_H

#include <stdint.h>

#include "common/spool.h"
#include "tuner/nccl_abi.h"

#define BOT_SPOOL_PERIOD_NS (60ull * 1000000000ull)
/* How long finalize waits for the writer thread's rewrite. */
#define BOT_SPOOL_FINALIZE_WAIT_NS 1000000000ull
#define BOT_SPOOL_MAX_SAMPLES 65536
#define BOT_SPOOL_MAX_SUMMARIES 65536

/* First call with measurement on: remember the directory, the table digest
 * and a logger, register the atexit flush. Later calls only update the
 * digest/logger when unset. Returns 0, or -1 (no memory, empty dir). The
 * writer thread starts at the first bot_spool_register() after it. */
int bot_spool_setup(const char *dir, uint64_t table_digest, bot_nccl_logger_t log);

/* Append a sample (copied). Past BOT_SPOOL_MAX_SAMPLES it is dropped and
 * counted (header flag). */
void bot_spool_add(const struct bot_spool_rec *r);

/* A source of context summaries: emit() every summary record of obj. */
typedef void (*bot_spool_summaries_fn)(void *obj,
				       void (*emit)(const struct bot_spool_rec *r, void *arg),
				       void *arg);

/* Live sources whose summaries go into every rewrite; bot_spool_retire()
 * keeps their final summaries and forgets the source. Registering starts
 * the writer thread when none is running (it ends once nothing is live and
 * everything was tried). */
void bot_spool_register(void *obj, bot_spool_summaries_fn fn);
void bot_spool_retire(void *obj);

/* Tuner init of one communicator succeeded with NCCL_BOT_SPOOL = dir:
 * set the spool up (as bot_spool_setup) and count the comm in the process
 * record: the tuner ABI (the newest noted), the NCCL version (the first
 * non-zero), the policy (the first comm's), proc_flags OR-ed
 * (BOT_SPOOL_PF_TABLE / _PRIOR). From then on the file is written at
 * finalize and exit even if nothing is measured. Init only: never on
 * getCollInfo's path. */
void bot_spool_note_tuner(const char *dir, int abi, uint32_t nccl_version, uint8_t policy,
			  uint32_t flags, uint64_t table_digest, bot_nccl_logger_t log);
/* Whether a NCCL version is known already (the caller need not look). */
int bot_spool_nccl_known(void);
/* Our profiler was initialised with ABI abi (4..6), measuring or not; kept
 * (the newest) whether or not the spool is set up yet. */
void bot_spool_note_profiler(int abi);
/* A measurement window was armed (BOT_SPOOL_PF_MEASURED): one relaxed
 * load after the first call. */
void bot_spool_note_measured(void);

/* Finalize: have the file brought up to date. Returns at once when nothing
 * was added or retired since the last rewrite; else asks the writer thread
 * and waits for it up to BOT_SPOOL_FINALIZE_WAIT_NS (it finishes later if
 * it must), or, without a writer, rewrites here after waiting up to ~5 s for
 * a rewrite already running. 0, or -1 (not set up, forked child, not done
 * within the wait, I/O error or still busy without a writer). */
int bot_spool_flush(void);

#endif
