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
 * (tuner/exports.map). The file is read (learn/elf.h), never loaded: no
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
	char path[PATH_MAX];	/* the file, links resolved: what NCCL is pointed at */
	int profiler;		/* it exports every profiler symbol as well */
};

/*
 * Check path. 0 with *out filled, or -1 with the reason in err ("not an
 * absolute path", "a directory, not a shared library", "built for AArch64;
 * this machine is x86-64", "does not export ncclTunerPlugin_v5, ...").
 */
int bot_ranklib_check(const char *path, struct bot_ranklib *out, char *err, size_t errlen);

#endif
