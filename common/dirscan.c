/*
 * dirscan.c - visiting every entry of a directory (common/dirscan.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/dirscan.h"

int bot_dir_scan(int dirfd, int (*visit)(const struct dirent *e, void *arg), void *arg)
{
	int fd = dup(dirfd), rc = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		rc = errno ? -errno : -EIO;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	rewinddir(d);	/* a dup shares the offset an earlier listing left at the end */
	for (;;) {
		errno = 0;
		e = readdir(d);
		if (!e) {
			rc = errno ? -errno : 0;
			break;
		}
		rc = visit(e, arg);
		if (rc)
			break;
	}
	closedir(d);
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct names_arg {
	int (*keep)(const struct dirent *e, void *arg);
	void *arg;
	char **v;
	size_t n, cap;
};

/* bot_dir_scan's visitor: 0, or 1 out of memory. */
static int add_name(const struct dirent *e, void *arg)
{
	struct names_arg *a = arg;

	if (!a->keep(e, a->arg))
		return 0;
	if (a->n == a->cap) {
		size_t nc = a->cap ? 2 * a->cap : 16;
		char **v = realloc(a->v, nc * sizeof(*v));

		if (!v)
			return 1;
		a->v = v;
		a->cap = nc;
	}
	if (!(a->v[a->n] = strdup(e->d_name)))
		return 1;
	a->n++;
	return 0;
}

int bot_dir_names(int dirfd, int (*keep)(const struct dirent *e, void *arg), void *arg,
		  char ***names, size_t *n)
{
	struct names_arg a = { keep, arg, NULL, 0, 0 };
	int rc = bot_dir_scan(dirfd, add_name, &a);

	if (a.n > 1)
		qsort(a.v, a.n, sizeof(*a.v), cmp_name);
	*names = a.v;
	*n = a.n;
	if (rc) {
		errno = rc > 0 ? ENOMEM : -rc;
		return -1;
	}
	return 0;
}
