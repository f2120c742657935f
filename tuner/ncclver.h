/*
 * ncclver.h - which NCCL loaded us, when the process can tell.
 *
 * NCCL exports ncclGetVersion(); the tuner ABI does not pass the version.
 * Looking the function up with dlsym() would tie the library to a libdl
 * symbol that glibc 2.34 re-versioned (the library must load on glibc
 * 2.28), and dlsym(RTLD_DEFAULT) would not see a libnccl opened
 * RTLD_LOCAL (as PyTorch's is). So the lookup walks the objects
 * dl_iterate_phdr() reports (libc since forever, never re-versioned) and
 * reads each one's dynamic symbol table: the object that holds the hint
 * address first (the logger NCCL passes at init lives in libnccl), then
 * every object in load order.
 *
 * The answer is a fact of the process, not of the rank: every process of
 * one program loads the same objects, and NCCL itself fails communicator
 * init when its ranks run different versions.
 */
#ifndef BOT_TUNER_NCCLVER_H
#define BOT_TUNER_NCCLVER_H

/* NCCL_VERSION_CODE of the ncclGetVersion() found (2.29.7 is 22907), or 0
 * when none is found or it fails. hint may be NULL. */
int bot_ncclver(const void *hint);

#endif
