/*
 * grow.h - the growing array of the tool side: make room for need elements
 * of size bytes in *p, doubling from 64, so that n appends cost O(n).
 * Header-only.
 */
#ifndef BOT_COMMON_GROW_H
#define BOT_COMMON_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* *p (of *cap elements) grown to hold need: 0, or -1 out of memory (*p
 * and *cap untouched). */
static inline int bot_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (size && n > SIZE_MAX / size)
		return -1;
	q = realloc(*p, n * size);
	if (!q)
		return -1;
	*p = q;
	*cap = n;
	return 0;
}

#endif
