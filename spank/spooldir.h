/*
 * spooldir.h - a step's spool directory on one node (doc/formats.md,
 * "A step's spool directory under Slurm").
 *
 * Owns the directory the ranks of one job step write their spool files
 * into on one node: its name (a pure function of the job, restart, step
 * and node, so every process that knows those computes the same path and
 * nobody decides anything), its making by root in the remote context
 * (under spool_dir=, owned by the job's uid and gid, mode 0700) and its
 * removal after the harvest. Everything goes through directory fds:
 * mkdirat/openat with O_NOFOLLOW, unlinkat without following links, an
 * existing path that is not our own directory refused. No Slurm here: the
 * unit test runs it as any user.
 *
 * spool_dir= itself (the base) is made by root when missing, mode 0711
 * (users reach their own step's directory, cannot list the others), and
 * must be a directory owned by the caller's euid and writable by nobody
 * else: a base a user made first in a world-writable /dev/shm is refused
 * (the step then measures nothing; the slurmd log says why).
 */
#ifndef BOT_SPANK_SPOOLDIR_H
#define BOT_SPANK_SPOOLDIR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BOT_SPANK_SPOOL_DEFAULT "/dev/shm/nccl-bot"
#define BOT_SPANK_SPOOL_NAME_MAX 128
/* the most entries (over all levels) a removal unlinks; past it the
 * directory is left and the removal fails (a bounded callback) */
#define BOT_SPANK_SPOOL_REMOVE_MAX 20000u
#define BOT_SPANK_SPOOL_DEPTH_MAX 8

/* A Slurm step id as a delta name writes it: decimal, or batch, extern,
 * interactive (common/delta.h's special ids). */
void bot_spank_step_str(uint32_t step, char *buf, size_t len);

/* "<job>.<restart>.<step>.<node>": 0, or -1 when node is empty, holds a
 * byte outside [A-Za-z0-9._-], or the name is too long. */
int bot_spank_spool_name(uint32_t job, uint32_t restart, uint32_t step, const char *node,
			 char *out, size_t len);

/* Is name a spool directory name of job on node (any restart, any step)? */
int bot_spank_spool_of_job(const char *name, uint32_t job, const char *node);

/* The restart count and step of such a name (bot_spank_spool_of_job said
 * yes): 0, or -1 when a number is out of range or the step is not one
 * bot_spank_step_str writes. */
int bot_spank_spool_parse(const char *name, uint32_t job, const char *node, uint32_t *restart,
			  uint32_t *step);

/* Open spool_dir= (an absolute path), making it (0711) when missing: an fd
 * (O_DIRECTORY|O_CLOEXEC), or -1 with the reason in err. create 0: a
 * missing base is an error (ENOENT in errno). */
int bot_spank_spool_base(const char *base, int create, char *err, size_t errlen);

/* Make basefd/name for uid:gid, mode 0700; an existing entry is accepted
 * only when it is a directory (not a link) owned by uid with mode 0700.
 * 0 made, 1 already there, -1 with the reason in err. */
int bot_spank_spool_make(int basefd, const char *name, uid_t uid, gid_t gid, char *err,
			 size_t errlen);

/* Open basefd/name as a step's spool directory of uid: a directory, not a
 * link, owned by uid. The fd, or -1 (errno ENOENT: not there; else the
 * reason in err). */
int bot_spank_spool_open(int basefd, const char *name, uid_t uid, char *err, size_t errlen);

/* Remove basefd/name and everything in it, never following a link, at most
 * BOT_SPANK_SPOOL_REMOVE_MAX entries and BOT_SPANK_SPOOL_DEPTH_MAX levels.
 * 0 (also when it is not there), or -1 with the reason in err. */
int bot_spank_spool_remove(int basefd, const char *name, char *err, size_t errlen);

#endif
