/*
 * strcache.h - the profiler's cache of NCCL's descriptor strings (the
 * collective, algorithm and protocol names of each event), shared by every
 * thread that starts events.
 *
 * NCCL's strings are literals with stable addresses, so the last few
 * pointers seen are remembered with the id their text parses to. A miss
 * only parses again; a hit must never pair a pointer with another string's
 * id, which a slot being refilled by another thread would give (a sample
 * labelled with the wrong algorithm or protocol, and learned as such: two
 * NCCLs in one process have 14 algorithm strings for 8 slots; until
 * 2026-12-04 a reader could take the pointer before a refill and the id
 * after it). So each slot is a seqlock: a writer makes the slot's count odd
 * (one writer at a time; a thread that finds it odd or loses the swap does
 * not cache), fences, stores pointer and id, and makes the count even
 * again; a reader uses a slot only when its count was even before and the
 * same after it read the pointer and the id. Lock-free, no waiting, no
 * allocation; a zeroed struct is an empty cache.
 */
#ifndef BOT_TUNER_STRCACHE_H
#define BOT_TUNER_STRCACHE_H

#define BOT_STRCACHE_SLOTS 8

struct bot_strcache {
	const char *p[BOT_STRCACHE_SLOTS];
	int id[BOT_STRCACHE_SLOTS];
	unsigned seq[BOT_STRCACHE_SLOTS];
	unsigned next;
};

/* The id of s (parse(s) on a miss); -1 for NULL. */
static inline int bot_strcache_get(struct bot_strcache *c, const char *s,
				   int (*parse)(const char *))
{
	int id;
	unsigned i, q;

	if (!s)
		return -1;
	for (i = 0; i < BOT_STRCACHE_SLOTS; i++) {
		q = __atomic_load_n(&c->seq[i], __ATOMIC_ACQUIRE);
		if ((q & 1) || __atomic_load_n(&c->p[i], __ATOMIC_RELAXED) != s)
			continue;
		id = __atomic_load_n(&c->id[i], __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->seq[i], __ATOMIC_RELAXED) == q)
			return id;
	}
	id = parse(s);
	i = __atomic_fetch_add(&c->next, 1, __ATOMIC_RELAXED) % BOT_STRCACHE_SLOTS;
	q = __atomic_load_n(&c->seq[i], __ATOMIC_RELAXED);
	if ((q & 1) || !__atomic_compare_exchange_n(&c->seq[i], &q, q + 1, 0, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
		return id;	/* another thread is filling this slot */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&c->p[i], s, __ATOMIC_RELAXED);
	__atomic_store_n(&c->id[i], id, __ATOMIC_RELAXED);
	__atomic_store_n(&c->seq[i], q + 2, __ATOMIC_RELEASE);
	return id;
}

#endif
