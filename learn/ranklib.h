/*
 * ranklib.h - the rank library check: is a path one NCCL can load as
 * nccl-bot's tuner (and profiler)?
 *
 * NCCL_TUNER_PLUGIN naming a file that is missing, not a library, built for
 * another machine, or a library without the tuner symbols makes NCCL go on
 * without that tuner (or load another one found by name) and say so only at
 * debug level: a launch that sets it must know the path is right. The path
 * must be absolute (NCCL resolves a bare name through its own search), name
 * a regular file, and be an ELF shared object for this machine that
 * exports the tuner plugin symbols this build's rank-side library exports
 * (tuner/exports.map). The file is read (learn/elfread.h), never loaded: no
 * constructor of a user-named file runs in the tool, nor in the SPANK
 * plugin, which checks as root.
 */
#ifndef BOT_LEARN_RANKLIB_H
#define BOT_LEARN_RANKLIB_H

#include <limits.h>
#include <stddef.h>

/* The symbols of tuner/exports.map, NULL-terminated: every tuner one must
 * be exported; the profiler ones say whether the library also measures. */
extern const char *const bot_ranklib_tuner_syms[];
extern const char *const bot_ranklib_profiler_syms[];

struct bot_ranklib {
	/* What NCCL is pointed at: the path as given, normalised lexically
	 * ("//", "." and ".." taken out), symbolic links kept. A container
	 * that binds only /opt/nccl-bot/<version> opens this path; the
	 * resolved one may lie outside what it binds. */
	char path[PATH_MAX];
	/* The file, links resolved: what was checked, and what "is it our
	 * library" compares (learn/stepenv.h). */
	char real[PATH_MAX];
	int profiler;		/* it exports every profiler symbol as well */
};

/*
 * Check path. 0 with *out filled, or -1 with the reason in err ("not an
 * absolute path", "a directory, not a shared library", "built for AArch64;
 * this machine is x86-64", "does not export ncclTunerPlugin_v5, ...").
 * The file is looked at (lstat of the resolved path) before it is opened:
 * only a regular file is opened, without following a link and without
 * blocking, and the open file must be the one looked at.
 */
int bot_ranklib_check(const char *path, struct bot_ranklib *out, char *err, size_t errlen);

/*
 * An absolute, lexically normalised form of path, for a path a user typed
 * (`nccl-bot env --lib`): a relative one is taken from the current
 * directory as the shell names it ($PWD when that is the current
 * directory, else getcwd()), then "//", "." and ".." are taken out without
 * resolving links. 0, or -1 with err (too long, no current directory).
 */
int bot_ranklib_abspath(const char *path, char *out, size_t len, char *err, size_t errlen);

#endif
