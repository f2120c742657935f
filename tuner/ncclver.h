/*
 * ncclver.h - which NCCL loaded us, when the process can tell.
 *
 * NCCL exports ncclGetVersion(); the tuner ABI does not pass the version.
 * Looking the function up with dlsym() would tie the library to a libdl
 * symbol that glibc 2.34 re-versioned (the library must load on glibc
 * 2.28), and dlsym(RTLD_DEFAULT) would not see a libnccl opened
 * RTLD_LOCAL (as PyTorch's is). So the lookup walks the objects
 * dl_iterate_phdr() reports (libc since forever, never re-versioned) and
 * reads the dynamic symbol table of one of them: the object that holds the
 * hint address (the logger NCCL passes at init lives in libnccl). Never
 * another object: which other objects export ncclGetVersion() (a second
 * framework's libnccl), and in what order they were loaded, can differ
 * between the processes of one job, so a fallback to them could give two
 * ranks of one communicator different answers. A NCCL that does not export
 * it (linked statically, symbols hidden) therefore reads as unknown, on
 * every rank alike.
 *
 * The answer is a fact of the NCCL that called, not of the rank: NCCL
 * itself fails communicator init when its ranks run different versions.
 */
#ifndef BOT_TUNER_NCCLVER_H
#define BOT_TUNER_NCCLVER_H

/* NCCL_VERSION_CODE of the ncclGetVersion() that the object holding hint
 * exports (2.29.7 is 22907), or 0 when hint is NULL, no loaded object
 * holds it, that object does not export the function, or it fails. */
int bot_ncclver(const void *hint);

#endif
