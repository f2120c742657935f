/*
 * elfread.h - a small, bounded reader of ELF64 little-endian shared objects.
 *
 * Owns one question: would this machine's dynamic loader load the file as
 * a shared library, which of some names does it export the way dlsym()
 * finds them, and which libraries does it need (DT_NEEDED)? It answers without loading the file: dlopen() would run the
 * file's constructors, which a tool must never do for a path a user named
 * (and the SPANK plugin asks as root).
 *
 * What is read is what the loader reads: the ELF header, the program
 * headers, the dynamic entries (at PT_DYNAMIC's address mapped through a
 * PT_LOAD segment, as ld.so finds them), and for each name the loader's own
 * lookup: the GNU hash table's Bloom filter word, bucket and chain
 * (DT_GNU_HASH), or without one DT_HASH's bucket and chain, then the
 * candidate symbols, their names and versions as glibc's dlsym() checks
 * them. Section headers are not used. Every offset, count and size is
 * checked against the file before it is used, every table and every walk
 * has a bound, and reads are few and in bulk, so any input gives an answer
 * (a reason when it is not a loadable shared object) in bounded time and
 * memory, never a crash or a read out of bounds. 32-bit and big-endian
 * files are refused with that reason.
 */
#ifndef BOT_LEARN_ELFREAD_H
#define BOT_LEARN_ELFREAD_H

#include <stddef.h>
#include <stdint.h>

/* Where the bytes come from: a file (pread) or memory (the fuzz target). */
struct bot_elf_src {
	/* Read exactly len bytes at off into buf: 0, -1 (an error), or -2
	 * (the source ends first: the file changed while being read). */
	int (*read)(void *arg, uint64_t off, void *buf, size_t len);
	void *arg;
	uint64_t size;		/* the file's size */
};

/* A struct bot_elf_src's read for an open file: arg points to the fd
 * (an int); pread, -2 when the file ends early (it shrank since fstat). */
int bot_elf_fd_read(void *arg, uint64_t off, void *buf, size_t len);

#define BOT_ELF_MAX_FILE (1ull << 30)	/* larger files are refused unread */
#define BOT_ELF_MAX_PHNUM 4096
#define BOT_ELF_MAX_DYN 4096		/* dynamic entries read */
#define BOT_ELF_MAX_SYMS (1u << 20)
#define BOT_ELF_MAX_STRSZ (64u << 20)
#define BOT_ELF_MAX_NAMES 64

/*
 * Is src a loadable ELF64 little-endian shared object (ET_DYN, not a
 * position-independent executable) for `machine` (an e_machine value)?
 * Returns 0 with bit i of *found set for each names[i] (at most
 * BOT_ELF_MAX_NAMES) that its dynamic symbol table exports as a defined data
 * object, global, weak or unique, of default or protected visibility: the
 * symbol dlsym() would return for the name (hash table lookup, glibc's
 * version rules) is that data object. Or -1 with the reason in why.
 */
int bot_elf_exports(const struct bot_elf_src *src, unsigned machine, const char *const *names,
		    size_t nnames, uint64_t *found, char *why, size_t whylen);

/*
 * The bytes of the data object name exports (found as bot_elf_exports
 * finds it): at most len of its st_size bytes into buf, *got of them, as
 * the file holds them (before any relocation; meant for constants such as
 * a Slurm plugin's plugin_version). 0, or -1 with the reason in why (not
 * a shared object for machine, not exported, not in the file).
 */
int bot_elf_object(const struct bot_elf_src *src, unsigned machine, const char *name, void *buf,
		   size_t len, size_t *got, char *why, size_t whylen);

/*
 * The libraries src (a shared object for machine, as bot_elf_exports
 * checks it) needs: its DT_NEEDED names in the file's order, and the
 * search path the loader tries first for them (DT_RUNPATH, else DT_RPATH;
 * "" when neither; $ORIGIN is left as the file says). 0, or -1 with the
 * reason in why (not a shared object, a name outside the string table or
 * longer than BOT_ELF_NAME_MAX - 1 bytes, more than BOT_ELF_MAX_NEEDED
 * names) and *deps emptied. Nothing is resolved here (spank/doctor.c does).
 */
#define BOT_ELF_MAX_NEEDED 64
#define BOT_ELF_NAME_MAX 256
struct bot_elf_deps {
	size_t n;
	char needed[BOT_ELF_MAX_NEEDED][BOT_ELF_NAME_MAX];
	char runpath[1024];
};
int bot_elf_needed(const struct bot_elf_src *src, unsigned machine, struct bot_elf_deps *deps,
		   char *why, size_t whylen);

/* The e_machine of the running build (0 when this build does not know it). */
unsigned bot_elf_host_machine(void);
/* "x86-64", "AArch64", ... or "machine <n>" (into buf when not known). */
const char *bot_elf_machine_name(unsigned machine, char *buf, size_t len);

#endif
