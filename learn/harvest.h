/*
 * harvest.h - one job step's spool files on one node into one delta
 * (doc/formats.md section 13; DESIGN.md invariant 5).
 *
 * Two halves that never share memory, joined by a stream of fixed-size
 * 160-byte units on a pipe (its layout: formats.md section 13, "The
 * harvest's record stream"):
 *
 *  - the reading half, bot_harvest_read(), runs in a child that already has
 *    the job's uid and gids and resource limits (the SPANK plugin switches
 *    them; `nccl-bot harvest` runs it as the invoking user). It opens each
 *    spool directory once (O_DIRECTORY|O_NOFOLLOW), lists its *.spool
 *    entries, opens each through that fd as common/readall.h's bot_open_at
 *    does (no link, no FIFO or device, a regular file owned by the
 *    expected uid with one link, at most a spool file's largest size),
 *    validates it (bot_spool_parse) and writes a file unit, then its
 *    records. Bounds: files per harvest (past it nothing is read: the
 *    harvest is refused whole) and bytes per harvest (a file past it is
 *    rejected unread).
 *
 *  - the validating half, bot_harvest_collect(), runs in the (root)
 *    parent. It reads the stream under a hard byte bound and a deadline,
 *    trusts none of its counts, re-validates every record (section 9's
 *    checks, nNodes within the step's nodes), reduces samples to the
 *    minimum over the node's ranks, sorts, caps, stamps the identity the
 *    caller gives (root-side facts) and writes the delta into the outbox:
 *    `.<name>.tmp` O_EXCL 0640, fsync, rename without replacing, fsync of
 *    the directory. A delta of that name already there is never
 *    overwritten (BOT_HARVEST_EXISTS). A rename another harvest left half
 *    done (link + unlink, killed between) is completed first.
 *
 * bot_harvest_run() joins them: it forks the reading half with a pipe,
 * runs the caller's child_setup hook in the child first (where the SPANK
 * plugin drops privileges and sets rlimits), collects, and kills the child
 * past the timeout: a harvest never hangs.
 *
 * Costs: the child holds one spool file at a time (at most
 * BOT_HARVEST_FILE_MAX, about 20 MiB: mind RLIMIT_AS); the parent holds the records of
 * the files read (at most max_bytes of them) until the delta is written.
 * The hook runs after fork() in the caller's process image: it should also
 * close descriptors the user must not inherit.
 *
 * Not for multi-threaded callers: bot_harvest_run forks
 * without exec. In a multi-threaded caller (slurmstepd) the child may
 * inherit a lock another thread held (malloc's, stdio's) and hang in
 * malloc until killed at the timeout, losing the step's delta. The SPANK
 * plugin therefore posix_spawn()s a helper (tools/harvest_read.c) that
 * calls bot_harvest_read, and collects with bot_harvest_collect
 * (formats.md section 13).
 */
#ifndef BOT_LEARN_HARVEST_H
#define BOT_LEARN_HARVEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/delta.h"
#include "common/spool.h"
#include "learn/log.h"

#define BOT_HARVEST_MAX_FILES 4096u		/* spool files per harvest (one node's step) */
/* The most measurement records the rank-side writer puts in one spool
 * file: 65,536 samples and 65,536 summaries per process (doc/formats.md
 * section 9; the reader's 2^20 is the format's limit, not the writer's);
 * the largest file also holds the process record (format v2). A bigger file
 * is refused unread, one with more measurements refused for its content. */
#define BOT_HARVEST_FILE_RECORDS (2u * 65536u)
#define BOT_HARVEST_FILE_MAX (64ull + ((uint64_t)BOT_HARVEST_FILE_RECORDS + 1u) * 160u + 8u)
#define BOT_HARVEST_MAX_BYTES (96ull << 20)	/* spool bytes read per harvest (formats.md
						 * section 13: sized to 100 ms of CPU) */
#define BOT_HARVEST_TIMEOUT_MS 10000u		/* the reading child's wall-clock bound */
#define BOT_HARVEST_UNIT 160			/* the stream's unit, a spool record's size */
#define BOT_HARVEST_PATH_MAX 4096
#define BOT_HARVEST_MAX_SPAN_S (7u * 86400)	/* a step start from file times: at most
						 * this long before the step end */

/* Where spool files are: a directory, and one entry of it or all of them. */
struct bot_harvest_src {
	const char *dir;
	const char *name;	/* one entry; NULL: every *.spool entry (not hidden ones) */
};

struct bot_harvest_req {
	/* The reading half. */
	const struct bot_harvest_src *src;
	size_t nsrc;
	uid_t owner;			/* spool files must be owned by this uid */
	size_t max_files;		/* 0: BOT_HARVEST_MAX_FILES */
	uint64_t max_bytes;		/* 0: BOT_HARVEST_MAX_BYTES */
	/* bot_harvest_run: run in the child before it reads anything (drop to
	 * the job's uid and gids, set rlimits); non-zero means the child reads
	 * nothing and the harvest fails. NULL: the child reads as it is. */
	int (*child_setup)(void *arg);
	void *child_arg;
	unsigned timeout_ms;		/* 0: BOT_HARVEST_TIMEOUT_MS */
	/*
	 * The report (learn/report.h): in the reading process, on_file is
	 * called with each spool file read and validated (f), or with NULL for
	 * each file rejected there. bot_harvest_run: child_done runs in the
	 * child after the stream was written whole and its pipe closed (the
	 * user's report part is written there); the parent waits for the
	 * child's exit until the timeout, then kills it. NULL: none.
	 */
	void (*on_file)(void *arg, const struct bot_spool_file *f);
	void *on_file_arg;
	void (*child_done)(void *arg);
	/*
	 * The validating half: the trusted identity (cluster, job, fabric, node,
	 * uid, gid, restart, step, array and het ids, step nodes/tasks, job
	 * GPUs, leaf switches, account, flags bit3/bit4). Filled in by the
	 * harvest: flags bits 0-2, files read and rejected, nrecords, the
	 * table digest, the build id; t_harvest when 0 (the clock), t_end when
	 * 0 (t_harvest), t_start when 0 (the oldest spool file's mtime as the
	 * child says, at most t_end and at least t_end -
	 * BOT_HARVEST_MAX_SPAN_S; with flags bit3 the caller must give it);
	 * job when "" (`j` + 15 hex digits of the digest of the read files'
	 * record digests, formats.md section 13).
	 */
	struct bot_delta_hdr id;
	const char *outbox;		/* an existing directory, not a link */
};

/* Why a spool file was rejected (the stream's reason codes; 1-7 are
 * common/readall.h's enum bot_open_refusal). */
enum bot_harvest_why {
	BOT_HARVEST_WHY_OK = 0,
	BOT_HARVEST_WHY_ERRNO = 1,	/* stat or open failed */
	BOT_HARVEST_WHY_LINK = 2,	/* a symbolic link */
	BOT_HARVEST_WHY_KIND = 3,	/* a FIFO, device, socket or directory */
	BOT_HARVEST_WHY_SIZE = 4,	/* over the largest spool file */
	BOT_HARVEST_WHY_LINKS = 5,	/* more than one hard link */
	BOT_HARVEST_WHY_OWNER = 6,	/* not owned by the job's uid */
	BOT_HARVEST_WHY_CHANGED = 7,	/* replaced or changed while read */
	BOT_HARVEST_WHY_INVALID = 8,	/* its content fails section 9's checks */
	BOT_HARVEST_WHY_BYTES = 9,	/* past the harvest's byte bound: not read */
	BOT_HARVEST_WHY_PARENT = 10,	/* the parent's re-validation refused a record */
	BOT_HARVEST_WHY_NNODES = 11,	/* a record's nNodes over the step's nodes */
	BOT_HARVEST_WHY_N = 12
};

enum bot_harvest_outcome {
	BOT_HARVEST_WRITTEN = 0,	/* a delta was written (res.path) */
	BOT_HARVEST_EXISTS = 1,		/* a delta of that name is there: not overwritten */
	BOT_HARVEST_NOTHING = 2,	/* no spool file, none valid, or no record: nothing written */
	BOT_HARVEST_FAILED = 3,		/* an error or a bound (on the log): nothing written */
};

struct bot_harvest_result {
	enum bot_harvest_outcome outcome;
	size_t files;			/* spool files the stream named */
	size_t files_read;		/* accepted: their records are in the delta */
	size_t files_rejected;		/* refused, each named on the log */
	size_t files_duplicate;		/* skipped: the same records as a file read */
	size_t rejected_by[BOT_HARVEST_WHY_N];
	uint64_t records_in;		/* records of the accepted files */
	uint64_t records;		/* in the delta, after the reduce and the cap */
	uint32_t flags;			/* the delta's */
	uint64_t identity;		/* bot_delta_identity of the delta's header */
	char name[BOT_DELTA_NAME_MAX];	/* the delta's name ("" before it is known) */
	char path[BOT_HARVEST_PATH_MAX];	/* OUTBOX/NAME */
};

/* A reason code's words ("a symbolic link", "over the byte bound"). */
const char *bot_harvest_why_name(int why);

/*
 * The reading half: the spool files req names, as a unit stream on fd
 * (never closed here). Uses src, nsrc, owner, max_files and max_bytes
 * only. Returns 0 when the stream was written whole (it ends with an end
 * unit, or an error unit saying why nothing was read), -1 when fd failed.
 */
int bot_harvest_read(const struct bot_harvest_req *req, int fd);

/*
 * The validating half: read the stream from fd (at most what max_files and
 * max_bytes allow, until timeout_ms from now), validate, reduce and write
 * the delta. Messages (each rejected file with its reason, what was
 * written) go to log. Returns 0 (BOT_HARVEST_WRITTEN) or -1 (res->outcome
 * says which other outcome); *res is filled either way.
 */
int bot_harvest_collect(int fd, const struct bot_harvest_req *req, struct bot_harvest_result *res,
			const struct bot_log *log);

/*
 * Both: fork the reading half (after req->child_setup) with a pipe, collect
 * from it, and kill the child when it is not done within the timeout.
 * Returns as bot_harvest_collect.
 */
int bot_harvest_run(const struct bot_harvest_req *req, struct bot_harvest_result *res,
		    const struct bot_log *log);

#endif
