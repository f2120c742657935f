/*
 * report.h - the user's report of a step: one part per (job, step, node),
 * built from a node's validated spool records, written into the report
 * directory, read back, merged per step and per job, and the numbers the
 * report and the one-line summary show (doc/formats.md section 17).
 *
 * Owns the part's text format (version 2; version 1 still read) and the definitions of a
 * report's latencies, best known arm, saved/lost and loss (agreements B,
 * the replay's words). Nothing is printed: errors are returned with
 * "FILE:LINE: reason" in err or go to a struct bot_log; the one-line
 * summary is formatted into the caller's buffer.
 *
 * Who calls it: the harvest reader (tools/harvest_read.c, as the job's
 * user) and `nccl-bot harvest --report-dir` build and write a part;
 * `nccl-bot report` and srun (spank/local.c) read and merge parts.
 */
#ifndef BOT_LEARN_REPORT_H
#define BOT_LEARN_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/spool.h"
#include "learn/log.h"

#define BOT_REPORT_VERSION 3		/* the newest this reader reads; a part is
					 * written in the oldest version that holds
					 * it (formats.md 17): 3 only with duplicates
					 * or calls whose decided arm is unknown */
#define BOT_REPORT_VERSION_MIN 1	/* the oldest this reader reads */
#define BOT_REPORT_MAGIC "nccl-bot-report-part"
#define BOT_REPORT_LINE_MAX 1024	/* bytes, the newline included */
#define BOT_REPORT_FILE_MAX (1u << 20)
#define BOT_REPORT_MAX_CTX 4096u
#define BOT_REPORT_MAX_VERS 8
#define BOT_REPORT_MAX_SAMPLES (1u << 20)	/* clean samples one part counts */
#define BOT_REPORT_MAX_PARTS 4096u		/* parts one directory read takes */
#define BOT_REPORT_MAX_SET_CTX (1u << 18)	/* contexts over the parts one read holds */
#define BOT_REPORT_TOKEN_MAX 65			/* job, step, node, fabric; NUL included */
#define BOT_REPORT_WHY_MAX 256
#define BOT_REPORT_ERR_MAX 512
#define BOT_REPORT_NARMS 21
#define BOT_REPORT_ARM_NONE 0xff
#define BOT_REPORT_DEC_AUTO BOT_REPORT_NARMS		/* dcalls[]: left to AUTO ('-') */
#define BOT_REPORT_DEC_UNKNOWN (BOT_REPORT_NARMS + 1)	/* dcalls[]: decided arm unknown ('?') */
#define BOT_REPORT_NDEC (BOT_REPORT_NARMS + 2)
#define BOT_REPORT_SUFFIX ".part"

enum bot_report_plugin {
	BOT_REPORT_PLUGIN_NONE = 0,	/* the user had no plugin of their own */
	BOT_REPORT_PLUGIN_KEPT = 1,	/* theirs kept (an admin default) */
	BOT_REPORT_PLUGIN_REPLACED = 2,	/* theirs replaced (--nccl-bot) */
};

/* One arm that ran in a context, from its clean samples. n == 0: not measured. */
struct bot_report_arm {
	uint64_t n, min_ns, med_ns;
};

struct bot_report_ctx {
	uint8_t coll, bucket;
	uint32_t nranks, nnodes;
	uint64_t calls;
	uint8_t auto_arm, decided;		/* BOT_REPORT_ARM_NONE: unknown / left to AUTO;
						 * decided: the arm with the most calls */
	uint64_t dcalls[BOT_REPORT_NDEC];	/* calls per decided arm ([NARMS]: '-',
						 * [NARMS + 1]: '?', unknown: neither ours
						 * nor AUTO's); their sum is calls */
	int has_cost;
	float cost[BOT_REPORT_NARMS];		/* us, -1 unsupported */
	struct bot_report_arm arm[BOT_REPORT_NARMS];
	uint64_t src_calls;			/* merging: calls of the part that gave the
						 * arms and the cost row */
};

struct bot_report_ver {
	uint32_t v;
	uint64_t n;
};

/*
 * The fabric's learned latencies, attached to a part by a reader (never in
 * the part's text): arms(arg, fabric, c, ns) fills ns[arm] with the median
 * in ns of each arm the fabric's state holds samples of for c's context
 * (0: none) and returns 0, or -1 when it knows nothing of that fabric or
 * context. formats.md 17, "Latency of an arm". bot_report_state_arms is one
 * over loaded states.
 */
struct bot_report_lookup {
	int (*arms)(void *arg, const char *fabric, const struct bot_report_ctx *c,
		    double ns[BOT_REPORT_NARMS]);
	void *arg;
};

struct bot_report_part {
	char job[BOT_REPORT_TOKEN_MAX], step[BOT_REPORT_TOKEN_MAX], node[BOT_REPORT_TOKEN_MAX];
	uint32_t restart, step_nodes, expected_ranks, leaf_switches;
	int shadow;				/* mode shadow */
	int policy;				/* section 10's id */
	char fabric[BOT_REPORT_TOKEN_MAX];	/* "prior" or the fabric */
	char fabric_why[BOT_REPORT_WHY_MAX];	/* "" none */
	int user_plugin;			/* enum bot_report_plugin */
	uint64_t token;				/* the step's token; 0 unknown */
	uint64_t files_read, files_rejected;
	uint64_t files_duplicate;		/* skipped: the same records as a file read
						 * (the delta skips them too); nothing of
						 * theirs is counted */
	uint64_t procs_loaded, procs_table, procs_measured, procs_prior;
	struct bot_report_ver nccl[BOT_REPORT_MAX_VERS], tuner[BOT_REPORT_MAX_VERS],
		profiler[BOT_REPORT_MAX_VERS];
	size_t nnccl, ntuner, nprofiler;
	struct bot_report_ctx *ctx;		/* ascending context key; malloc()ed */
	size_t nctx;
	size_t nparts;				/* merged: parts in it (1 for one part) */
	const struct bot_report_lookup *lookup;	/* not stored: the fabric's state for
						 * arms the step did not measure; NULL
						 * none. A merge keeps out's, else in's */
};

void bot_report_part_init(struct bot_report_part *p);
void bot_report_part_free(struct bot_report_part *p);

/* ---- building a part from spool records ------------------------------- */

struct bot_report_builder;

struct bot_report_builder *bot_report_builder_new(void);
/* Add one validated spool file's records (kinds 1, 2 and 3; others are
 * ignored). 0, or -1 when out of memory. Contexts past BOT_REPORT_MAX_CTX
 * and samples past BOT_REPORT_MAX_SAMPLES are not counted. A file whose
 * samples and summaries are those of a file added before (the harvest's
 * record digest, formats.md 13) adds nothing: it is counted as a duplicate
 * and taken out of the files read (bot_report_builder_file called first). */
int bot_report_builder_add(struct bot_report_builder *b, const struct bot_spool_rec *recs,
			   size_t n);
/* Count a spool file read or rejected. */
void bot_report_builder_file(struct bot_report_builder *b, int rejected);
/* Fill p's measured half (contexts, process counts, versions, policy, files);
 * the caller sets the identity (job, step, node, ...). 0, or -1 when out of
 * memory. The builder is spent either way: free it. */
int bot_report_builder_finish(struct bot_report_builder *b, struct bot_report_part *p);
void bot_report_builder_free(struct bot_report_builder *b);

/* ---- the text --------------------------------------------------------- */

/* A token of formats.md section 17: s with characters outside
 * [A-Za-z0-9._-] as '_', cut to 64 ("_" for ""). */
void bot_report_token(char *dst, size_t len, const char *s);
/* The job a part's job string belongs to: "J" for "J+K" (a heterogeneous
 * job's component K), else the string itself. */
void bot_report_job_leader(const char *job, char *out, size_t len);
/* A job string of formats.md 17: a token, or one "J+K" with J and K
 * decimal; anything else is made a token (bot_report_token). */
void bot_report_job_token(char *dst, size_t len, const char *s);
/* The part's file name, "<job>.<step>.<node>.part". */
int bot_report_part_name(const struct bot_report_part *p, char *buf, size_t len);
/* The part as text (malloc()ed *buf, *len bytes): 0, or -1 (out of memory,
 * or a field out of the format's range, reason in err). */
int bot_report_part_format(const struct bot_report_part *p, char **buf, size_t *len, char *err,
			   size_t errlen);
/* Parse a part's text; name is for messages. 0 with *out filled (free it),
 * or -1 with "name:LINE: reason" in err and *out empty. */
int bot_report_part_parse(const char *name, const char *buf, size_t len,
			  struct bot_report_part *out, char *err, size_t errlen);

/*
 * A report directory's template (formats.md section 17): %j the job, %u
 * the user, %% a '%'; any other '%' is refused. 0 with out filled, or -1
 * with the reason in err.
 */
int bot_report_dir_expand(const char *tmpl, const char *job, const char *user, char *out,
			  size_t outlen, char *err, size_t errlen);
/* The pinned decision's facts, "MODE PLUGIN SOURCE..." (formats.md 17),
 * into p (mode, user_plugin, fabric, fabric_why). 0, or -1 when it does
 * not read (p keeps its defaults: on, none, prior). */
int bot_report_part_info(struct bot_report_part *p, const char *info);

/* ---- files ------------------------------------------------------------ */

/* Make dir (and missing parents), mode 0700, as the caller: 0, or -1 with
 * the reason. The last component, made or existing, must be a directory
 * (not a link) of the caller's euid that group and others cannot write. */
int bot_report_mkdir(const char *dir, char *err, size_t errlen);
/* Write p into dir (made first) as whoever calls: temporary O_EXCL 0600,
 * fsync, rename over its name, directory fsynced. 0 with the file's path
 * in path (may be NULL), or -1 with the reason in err. */
int bot_report_part_write(const char *dir, const struct bot_report_part *p, char *path,
			  size_t pathlen, char *err, size_t errlen);
/* Read and parse dirfd/name (path for messages): never through a link, a
 * regular file with one link, at most BOT_REPORT_FILE_MAX; owned by uid
 * when check_owner. 0, or -1 with the reason. */
int bot_report_part_read_at(int dirfd, const char *name, const char *path, int check_owner,
			    uid_t uid, struct bot_report_part *out, char *err, size_t errlen);

/* Parts read from a directory. */
struct bot_report_set {
	struct bot_report_part *v;
	size_t n;
	size_t refused;		/* parts that failed to read (each on the log) */
};

/* Which parts a read takes: job (NULL: every job; "J" takes J's
 * heterogeneous components' "J+K" too), step (NULL: every step), token
 * (0: any). */
struct bot_report_filter {
	const char *job, *step;
	uint64_t token;
};

/* Read every *.part of dir that f takes, owned by the reader (getuid();
 * root: the directory's owner), sorted by leader job, step, token, job,
 * node. Refused parts (another owner's, unreadable, another token's are
 * skipped silently) are logged and counted; past BOT_REPORT_MAX_SET_CTX
 * contexts the rest is not read (logged, counted as refused). 0, or -1
 * when the directory cannot be read (log). */
int bot_report_dir_select(const char *dir, const struct bot_report_filter *f,
			  struct bot_report_set *set, const struct bot_log *log);
/* bot_report_dir_select with token 0. */
int bot_report_dir_read(const char *dir, const char *job, const char *step,
			struct bot_report_set *set, const struct bot_log *log);
/* How many parts of job.step are in dir (a cheap count for srun's wait:
 * names only); -1 when the directory cannot be opened. */
int bot_report_dir_count(const char *dir, const char *job, const char *step);
void bot_report_set_free(struct bot_report_set *set);

/* ---- merging and numbers ---------------------------------------------- */

enum bot_report_how {
	BOT_REPORT_SAME_STEP = 0,	/* nodes of one step: calls the largest */
	BOT_REPORT_STEPS = 1,		/* steps of a job: calls added */
};

/* Merge in into out (out starts with bot_report_part_init: then it becomes
 * a copy). 0, or -1 when out of memory or over BOT_REPORT_MAX_CTX. */
int bot_report_merge(struct bot_report_part *out, const struct bot_report_part *in, int how);

/* Where an arm's latency came from (formats.md 17). */
enum bot_report_src {
	BOT_REPORT_SRC_NONE = 0,	/* unknown */
	BOT_REPORT_SRC_STEP = 1,	/* measured in this step */
	BOT_REPORT_SRC_STATE = 2,	/* the fabric's state (estimated) */
	BOT_REPORT_SRC_COST = 3,	/* NCCL's cost model (estimated) */
};
/* "step", "state", "cost" or "unknown". */
const char *bot_report_src_name(int src);

/* One context's numbers (formats.md section 17). Times in seconds. */
struct bot_report_row {
	double t[BOT_REPORT_NARMS];	/* per-call latency, s; < 0 unknown */
	int est[BOT_REPORT_NARMS];	/* t[] estimated (src state or cost) */
	int src[BOT_REPORT_NARMS];	/* enum bot_report_src of t[] */
	int src_ours;			/* of t_ours: the least sure of the decided arms'
					 * (cost over state over step) */
	int chosen;			/* x: the decided arm with the most calls, -1 unknown */
	double t_ours;			/* the calls-weighted t of the decided arms, s */
	int best;			/* best known arm, -1 none */
	int known;			/* t(a), t(x) and best known: saved/lost/loss set */
	int estimated;			/* t(a) or t(x) or the best is an estimate */
	double loss_ours, loss_auto;	/* t/t(best) - 1 */
	double saved, lost;		/* s */
	int over10, harmed;		/* never for a context without calls: no run
					 * loss to judge (no_calls) */
	int no_calls;			/* known, but the context counted no calls */
};

/* The row of c, a context of p; arms the step did not measure through
 * p->lookup when set, else (and then) NCCL's cost row. */
void bot_report_row(const struct bot_report_part *p, const struct bot_report_ctx *c,
		    struct bot_report_row *r);

/* Loaded states for a lookup: arg is a struct bot_report_states; a fabric
 * not among them, or a context not in its state, is -1. */
struct bot_kb;
struct bot_report_states {
	size_t n;
	const char *const *fabric;	/* n fabric names */
	const struct bot_kb *const *kb;	/* their knowledge bases (a state's kb) */
};
int bot_report_state_arms(void *arg, const char *fabric, const struct bot_report_ctx *c,
			  double ns[BOT_REPORT_NARMS]);

struct bot_report_totals {
	uint64_t calls, calls_decided;
	uint64_t calls_unknown;		/* calls whose decided arm is unknown ('?'): not
					 * decided, not AUTO's; nothing saved or lost */
	double saved, lost;		/* s */
	double net;			/* saved - lost, s; 0 where the two differ by no
					 * more than the sums' rounding (its sign is
					 * what the report says: saved or lost) */
	int estimated;			/* a number in saved/lost came from an estimate */
	size_t contexts, over10, harmed, unknown;
	size_t no_calls;		/* known contexts without calls: left out of
					 * over10, harmed and worst_excess */
	double worst_excess;
	uint64_t ranks_loaded, ranks_expected;
};

void bot_report_totals(const struct bot_report_part *p, struct bot_report_totals *t);

/* "2.28.9" for 22809 (older codes: 2.x.y as NCCL wrote them); several
 * values joined with '/'; "n/a" for none. */
void bot_report_versions(const struct bot_report_ver *v, size_t n, int kind, char *buf,
			 size_t len);
enum { BOT_REPORT_VER_NCCL = 0, BOT_REPORT_VER_ABI = 1 };

/* A time saved or lost, s >= 0, as the report and its picture write it:
 * "%.3f s" from 1 s, "%.3f ms" from 1 ms, "%.1f us" from 1 us, "%.3g us"
 * below, "0 us" for none or rounding dust (below 1e-10 s), so that no
 * time ever reads as zero and zero reads one way. */
void bot_report_span(double s, char *buf, size_t len);

/* The one-line summary (formats.md section 17), without a newline.
 * stepname: "1234.0"; where: the report directory. */
void bot_report_summary(const struct bot_report_part *merged, const char *stepname,
			const char *where, char *buf, size_t len);

#endif
