/*
 * emu_alloc.c - allocation-failure injection for the emulator.
 *
 * The emulator binary defines malloc, calloc, realloc, posix_memalign,
 * aligned_alloc, memalign and mmap itself. A plugin dlopen()ed with
 * RTLD_LOCAL still resolves its undefined symbols through the global scope,
 * where the executable comes first, so its allocations land here. They are
 * forwarded to glibc (__libc_malloc & co., exported since GLIBC_2.2.5)
 * unless the calling thread has opened a failure window, in which case they
 * fail with ENOMEM the way an exhausted or cgroup-limited process does.
 * This reproduces "malloc failed on one rank" without LD_PRELOAD, without
 * touching the plugin and without affecting other threads or ranks.
 *
 * Built with -DEMU_NO_INTERPOSE (sanitizer builds, whose runtimes own
 * malloc) the window is a no-op and emu_alloc_interposed() says so.
 */
#include <errno.h>
#include <stddef.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/emulator/emu.h"

#ifndef EMU_NO_INTERPOSE

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void *__libc_memalign(size_t align, size_t n);
extern void __libc_free(void *p);

static __thread int fail_on __attribute__((tls_model("initial-exec")));
static __thread unsigned refused __attribute__((tls_model("initial-exec")));

static int refuse(void)
{
	if (!fail_on)
		return 0;
	refused++;
	errno = ENOMEM;
	return 1;
}

void *malloc(size_t n)
{
	return refuse() ? NULL : __libc_malloc(n);
}

void free(void *p)
{
	__libc_free(p);
}

void *calloc(size_t n, size_t m)
{
	return refuse() ? NULL : __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
	return (n && refuse()) ? NULL : __libc_realloc(p, n);
}

void *memalign(size_t align, size_t n)
{
	return refuse() ? NULL : __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n)
{
	return refuse() ? NULL : __libc_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p;

	if (align < sizeof(void *) || (align & (align - 1)))
		return EINVAL;
	if (refuse())
		return ENOMEM;
	p = __libc_memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

static void *emu_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if ((flags & MAP_ANONYMOUS) && refuse())
		return MAP_FAILED;
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return emu_mmap(addr, len, prot, flags, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return emu_mmap(addr, len, prot, flags, fd, off);
}

void emu_alloc_fail_begin(void)
{
	refused = 0;
	fail_on = 1;
}

unsigned emu_alloc_fail_end(void)
{
	fail_on = 0;
	return refused;
}

int emu_alloc_interposed(void)
{
	return 1;
}

#else

void emu_alloc_fail_begin(void)
{
}

unsigned emu_alloc_fail_end(void)
{
	return 0;
}

int emu_alloc_interposed(void)
{
	return 0;
}

#endif
