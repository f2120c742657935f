/*
 * dtunknown.c - an LD_PRELOAD shim for the CLI tests: readdir() (and
 * readdir64()) return every entry with d_type DT_UNKNOWN, as XFS without
 * ftype and some network file systems do, so that the code that asks the
 * file system for an entry's type (fstatat) is driven on any file system.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stddef.h>

struct dirent *readdir(DIR *d);
struct dirent64 *readdir64(DIR *d);

struct dirent *readdir(DIR *d)
{
	static struct dirent *(*real)(DIR *);
	struct dirent *e;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "readdir");
	e = real ? real(d) : NULL;
	if (e)
		e->d_type = DT_UNKNOWN;
	return e;
}

struct dirent64 *readdir64(DIR *d)
{
	static struct dirent64 *(*real)(DIR *);
	struct dirent64 *e;

	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "readdir64");
	e = real ? real(d) : NULL;
	if (e)
		e->d_type = DT_UNKNOWN;
	return e;
}
