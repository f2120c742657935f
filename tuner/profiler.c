/*
 * profiler.c - profiler plugin v4..v6, first slice: link only.
 *
 * NCCL calls profiler init and then tuner init for the same communicator on
 * the same thread with no other comm's init in between (ABI notes section
 * 3), so a thread-local "last profiler init" read by the tuner's init links
 * the two. This slice measures nothing: init sets the process-global event
 * mask to 0 and every event call is a cheap no-op returning a NULL handle.
 * Nothing here may change a decision: profiler presence is rank-local.
 */
#include <stdlib.h>

#include "tuner/profiler.h"
#include "tuner/tuner.h"

struct bot_prof_ctx {
	uint64_t comm_id;
	int rank, nranks, nnodes;
};

/* initial-exec: no __tls_get_addr, so no DT_NEEDED on the dynamic loader;
 * a few bytes of the static TLS surplus glibc keeps for dlopen()ed objects. */
static __thread struct bot_prof_link prof_link __attribute__((tls_model("initial-exec")));

int bot_prof_link_take(uint64_t comm_id)
{
	int rank = -1;

	if (prof_link.valid && prof_link.comm_id == comm_id)
		rank = prof_link.rank;
	prof_link.valid = 0;
	return rank;
}

int bot_prof_init(void **ctx, uint64_t comm_id, int *mask, int nnodes, int nranks, int rank)
{
	struct bot_prof_ctx *p = malloc(sizeof(*p));

	if (mask)
		*mask = 0;
	prof_link.comm_id = comm_id;
	prof_link.rank = rank;
	prof_link.valid = 1;
	/* No memory only costs learning: say success with no context. */
	if (p) {
		p->comm_id = comm_id;
		p->rank = rank;
		p->nranks = nranks;
		p->nnodes = nnodes;
	}
	*ctx = p;
	return BOT_NCCL_SUCCESS;
}

int bot_prof_start(void *ctx, void **handle, struct bot_nccl_prof_descr *d)
{
	if (handle)
		*handle = NULL;
	return BOT_NCCL_SUCCESS;
}

int bot_prof_stop(void *handle)
{
	return BOT_NCCL_SUCCESS;
}

int bot_prof_record(void *handle, int state, struct bot_nccl_prof_state_args *a)
{
	return BOT_NCCL_SUCCESS;
}

int bot_prof_finalize(void *ctx)
{
	free(ctx);
	return BOT_NCCL_SUCCESS;
}
