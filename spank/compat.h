/*
 * compat.h - the one place where spank/ meets differences between Slurm
 * releases. spank_nccl_bot.so is built per Slurm major release (the loader
 * refuses a plugin whose plugin_version has another major.minor), so these
 * are compile-time choices on SLURM_VERSION_NUMBER from the headers the
 * build found (configure --with-slurm=DIR).
 *
 * What changed after 22.05 (doc/slurm.md, "Slurm versions", says where
 * each fact comes from):
 * - 23.11: the hostlist handle became a struct type and the functions take
 *   and return a pointer to it. BOT_SLURM_HOSTLIST is the handle type to
 *   declare a variable with, whichever release.
 * - 23.x and later: slurm.h has declarations without prototypes; the
 *   warning is silenced around that one include.
 * - 25.05: topology information became opaque (several named
 *   topologies); the flat switch array that slurm_load_topo() returns up
 *   to 24.11 is gone. BOT_SLURM_TOPO_FLAT says whether it exists. The
 *   plugin itself does not call it: the fabric of a node comes from the
 *   administrator's static map, never from an RPC on a compute node.
 *
 * The plugin uses <slurm/spank.h> and getenv() only today; these names are
 * here so that the code that needs them (the fabric tools) has one shim.
 */
#ifndef BOT_SPANK_COMPAT_H
#define BOT_SPANK_COMPAT_H

#include <stdint.h>	/* spank.h uses uint32_t without including it */
#include <slurm/spank.h>

#ifndef SLURM_VERSION_NUM
#error "slurm/spank.h without SLURM_VERSION_NUM: a Slurm older than the 22.05 this builds on"
#endif

#define BOT_SLURM_AT_LEAST(a, b) (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(a, b, 0))

#ifdef BOT_SPANK_WANT_HOSTLIST
/* From 23.x slurm.h declares a few functions without prototypes
 * ("void (*acct_full)();"), which -Wstrict-prototypes -Werror refuses: the
 * warning is Slurm's, not ours, so it is off for that header only. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <slurm/slurm.h>
#pragma GCC diagnostic pop
#if BOT_SLURM_AT_LEAST(23, 11)
typedef hostlist_t *BOT_SLURM_HOSTLIST;	/* 23.11+: a struct, used through a pointer */
#else
typedef hostlist_t BOT_SLURM_HOSTLIST;	/* up to 23.02: already a pointer type */
#endif
#endif

#define BOT_SLURM_TOPO_FLAT (!BOT_SLURM_AT_LEAST(25, 5))

#endif
