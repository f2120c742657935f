/*
 * link.c - profiler init -> tuner init on the same thread (tuner/link.h).
 *
 * A small global table keyed by the thread id, not thread-local storage:
 * TLS in a dlopen()ed library either needs __tls_get_addr (a DT_NEEDED on
 * the dynamic loader) or, initial-exec, the static TLS surplus, which a big
 * process (PyTorch) can exhaust on glibc 2.28 ("cannot allocate memory in
 * static TLS block"), and NCCL would then run without the plugin. Entries
 * are overwritten per thread, evicted oldest first, and cleared when their
 * object dies.
 */
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "tuner/link.h"
#include "tuner/util.h"

#define LINK_SLOTS 64

struct link_ent {
	pid_t tid;		/* 0 = free */
	uint64_t age;
	uint64_t comm_id;
	uint32_t nranks, nnodes;
	int rank;
	void *obj;		/* from profiler init, not referenced */
};

static struct link_ent links[LINK_SLOTS];
static uint64_t link_age;
static char link_lock;

static pid_t thread_id(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* link_lock held: this thread's entry, or NULL */
static struct link_ent *link_find(pid_t tid)
{
	for (unsigned i = 0; i < LINK_SLOTS; i++)
		if (links[i].tid == tid)
			return &links[i];
	return NULL;
}

void bot_link_put(uint64_t comm_id, uint32_t nranks, uint32_t nnodes, int rank, void *obj)
{
	pid_t tid = thread_id();
	struct link_ent *e;

	bot_spin_lock(&link_lock);
	e = link_find(tid);
	if (!e) {
		e = &links[0];
		for (unsigned i = 0; i < LINK_SLOTS; i++) {
			if (!links[i].tid) {
				e = &links[i];
				break;
			}
			if (links[i].age < e->age)
				e = &links[i];
		}
	}
	e->tid = tid;
	e->age = ++link_age;
	e->comm_id = comm_id;
	e->nranks = nranks;
	e->nnodes = nnodes;
	e->rank = rank;
	e->obj = obj;
	bot_spin_unlock(&link_lock);
}

int bot_link_take(uint64_t comm_id, int by_id, uint32_t nranks, uint32_t nnodes, void **obj,
		  int (*ref)(void *obj))
{
	pid_t tid = thread_id();
	struct link_ent *e;
	int rank = -1;

	*obj = NULL;
	bot_spin_lock(&link_lock);
	e = link_find(tid);
	if (e) {
		if (by_id ? e->comm_id == comm_id : e->nranks == nranks && e->nnodes == nnodes) {
			rank = e->rank;
			if (e->obj && ref(e->obj))
				*obj = e->obj;
		}
		/* one tuner init per profiler init: taken or not, it is used up */
		e->tid = 0;
		e->obj = NULL;
	}
	bot_spin_unlock(&link_lock);
	return rank;
}

void bot_link_forget(void *obj)
{
	bot_spin_lock(&link_lock);
	for (unsigned i = 0; i < LINK_SLOTS; i++)
		if (links[i].obj == obj)
			links[i].obj = NULL;
	bot_spin_unlock(&link_lock);
}
