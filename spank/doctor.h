/*
 * doctor.h - the checks of `nccl-bot doctor`: is this host set up to run
 * spank_nccl_bot.so? Usable as a Slurm node health check.
 *
 * Owns what is checked and the verdict of each check, never how it is
 * printed (tools/cmd_doctor.c): plugstack.conf and the files it includes
 * name the plugin exactly once; the plugin file is a Slurm plugin built for
 * this Slurm's major.minor (its plugin_version read from the file, never
 * loaded) whose needed libraries (DT_NEEDED) resolve here; its arguments parse (spank/args.h, the plugin's own parser); the
 * rank library under lib_prefix= is a tuner and profiler plugin
 * (learn/ranklib.h); spool_dir= is on a writable tmpfs, or can be made
 * there; outbox_dir=, state_dir= and the harvest helper are what the plugin
 * expects; the container snippets from contrib/ are in place where the site
 * runs enroot or Apptainer. Nothing is loaded, nothing is written, no link
 * is followed into a file that is read (common/readall.h's bot_open_at).
 * No Slurm here: the Slurm version is the caller's (slurmd -V).
 */
#ifndef BOT_SPANK_DOCTOR_H
#define BOT_SPANK_DOCTOR_H

#include <stddef.h>
#include <stdint.h>

enum bot_doctor_status {
	BOT_DOCTOR_OK = 0,
	BOT_DOCTOR_SKIP = 1,	/* not applicable here (said why) */
	BOT_DOCTOR_WARN = 2,	/* worth a look, not a reason to drain a node */
	BOT_DOCTOR_PROBLEM = 3,	/* the node cannot run steps with nccl-bot as configured */
};

/* What the caller found out and what the command line said. */
struct bot_doctor_opts {
	const char *plugstack;		/* plugstack.conf */
	const char *plugin_dir;		/* ':'-separated, for a relative plugin path;
					 * NULL: slurm.conf's PluginDir= beside
					 * plugstack, else plugin_dir_default */
	const char *plugin_dir_default;
	const char *node;		/* the name %n stands for; NULL: a path with %n is refused */
	int node_only;			/* --node: only what a compute node needs */
	uint32_t slurm_version;		/* SLURM_VERSION_NUMBER layout; 0: not known */
	const char *slurm_version_from;	/* where it came from ("slurmd -V"), for messages */
	const char *default_lib_prefix;	/* the plugin's built-in lib_prefix */
	const char *default_helper;	/* the plugin's built-in harvest_helper */
	const char *enroot_dir;		/* enroot's configuration directory (/etc/enroot) */
	const char *apptainer_conf;	/* apptainer.conf; NULL: the usual places */
};

/* One verdict: check is a short name ("plugstack", "plugin version"). */
typedef void (*bot_doctor_report_fn)(void *arg, const char *check, enum bot_doctor_status st,
				     const char *msg);

/* The checks under o, each reported once or more through fn; returns the
 * number of problems (BOT_DOCTOR_PROBLEM). Messages hold file contents
 * only escaped (learn/log.h's bot_log_esc_inplace). */
int bot_doctor_run(const struct bot_doctor_opts *o, bot_doctor_report_fn fn, void *arg);

/*
 * The text of a plugstack.conf (len bytes, any bytes) named name in
 * messages, without the files: include lines are not followed, the
 * plugin's line must be there once, and its arguments parse (node for %n).
 * Reported through fn like bot_doctor_run; the number of problems. For
 * the fuzz target.
 */
int bot_doctor_scan(const char *name, const char *text, size_t len, const char *node,
		    bot_doctor_report_fn fn, void *arg);

/*
 * What the mount sources in text cover of lib and spool: bit 0 lib, bit 1
 * spool (a source covers a path when it is the path or a directory above
 * it). apptainer 0: enroot fstab lines (the first word); 1: apptainer.conf
 * ("bind path = SRC[:DST]"). Comments (#) and other lines are skipped.
 */
unsigned bot_doctor_binds(const char *text, size_t len, int apptainer, const char *lib,
			  const char *spool);

/*
 * The dynamic loader's cache (/etc/ld.so.cache's bytes, glibc's format
 * "glibc-ld.so.cache1.1", alone or after the old "ld.so-1.7.0" table):
 * fn(arg, path) for each entry named name, in the cache's order, until fn
 * returns nonzero. Returns the number of entries passed to fn, or -1 when
 * buf is not such a cache. Any bytes: offsets are checked against len.
 */
int bot_doctor_ldcache(const uint8_t *buf, size_t len, const char *name,
		       int (*fn)(void *arg, const char *path), void *arg);

/* "22.05.8" into *v (SLURM_VERSION_NUM layout) from the first word of s
 * that starts with a digit ("slurm 22.05.8", "slurm-wlm 24.11.5"): 0, or
 * -1 when there is none. A missing micro is 0. */
int bot_doctor_parse_version(const char *s, uint32_t *v);

/* The plugstack.conf words of one plugin line: "optional PATH ARGS..." */
#define BOT_DOCTOR_ARGS_MAX 64

#endif
