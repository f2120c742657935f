/*
 * reportstate.c - the fabric's learned state for srun's one-line summary,
 * read in a child bounded in time (spank/reportstate.h; formats.md 17).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "learn/store.h"
#include "policies/context.h"
#include "policies/kb.h"
#include "spank/childread.h"
#include "spank/reportstate.h"

struct child_arg {
	const char *dir, *fabric;
	const struct bot_report_part *m;
};

/* The state reader, run by bot_spank_childread in the child: the state
 * loaded, each arm of m's contexts cut to its median bin, the image written
 * to fd. Exit 0 written, 1 no state, 2 not read. */
static void child(int fd, void *arg)
{
	const char *dir = ((const struct child_arg *)arg)->dir;
	const char *fabric = ((const struct child_arg *)arg)->fabric;
	const struct bot_report_part *m = ((const struct child_arg *)arg)->m;
	struct bot_state s, r;
	char snap[BOT_STATE_NAME_MAX], err[BOT_STATE_ERR_MAX];
	uint8_t *buf = NULL;
	size_t len = 0, off = 0;
	int rc = bot_store_load(dir, fabric, &s, snap, err, sizeof(err));

	if (rc != 0)
		_exit(rc > 0 ? 1 : 2);
	if (bot_state_init(&r, fabric) < 0)
		_exit(2);
	for (size_t i = 0; i < m->nctx; i++) {
		const struct bot_report_ctx *c = &m->ctx[i];
		uint64_t key = bot_ctx_key(c->coll, c->bucket, c->nranks, c->nnodes);
		const struct bot_kb_ctx *k = bot_kb_find(s.kb, key);
		struct bot_kb_ctx *d;

		if (!k)
			continue;
		for (int a = 0; a < BOT_NARMS; a++) {
			int q = k->arm[a].n ? bot_stats_median_q(&k->arm[a]) : -1;

			if (q < 0)
				continue;
			d = bot_kb_get(r.kb, key);
			if (!d || bot_stats_add_q(&d->arm[a], q, 1) < 0)
				_exit(2);
		}
	}
	if (bot_state_encode(&r, &buf, &len, err, sizeof(err)) < 0)
		_exit(2);
	while (off < len) {
		ssize_t w = write(fd, buf + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(2);
		off += (size_t)w;
	}
	_exit(0);
}

int bot_spank_report_state(const char *state_dir, const char *fabric, uint64_t timeout_ms,
			   const struct bot_report_part *m, struct bot_state *out, char *why,
			   size_t whylen)
{
	struct child_arg a = { state_dir, fabric, m };
	struct bot_spank_childread cr;
	uint8_t *buf;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!state_dir || !*state_dir || !fabric || !strcmp(fabric, "prior") ||
	    !bot_state_fabric_ok(fabric) || !m->nctx) {
		snprintf(why, whylen, "no fabric state to read");
		return -1;
	}
	if (bot_spank_childread(child, &a, timeout_ms > 60000 ? 60000 : timeout_ms,
				BOT_SPANK_REPORT_STATE_MAX, &cr, why, whylen) < 0)
		return -1;
	buf = cr.buf;
	n = cr.len;
	if (!cr.exited) {
		/* SIGCHLD ignored, or another reaper took it: its exit status
		 * is unknown, so its answer is not taken */
		snprintf(why, whylen, "the state reader's exit was not seen");
		free(buf);
		return -1;
	}
	if (!WIFEXITED(cr.status) || WEXITSTATUS(cr.status) != 0) {
		snprintf(why, whylen, WIFEXITED(cr.status) && WEXITSTATUS(cr.status) == 1 ?
			 "fabric %s has no learned state yet" : "fabric %s's state cannot be read",
			 fabric);
		free(buf);
		return -1;
	}
	{
		char err[BOT_STATE_ERR_MAX];

		if (bot_state_parse("the state reader's answer", buf, n, out, err,
				    sizeof(err)) < 0) {
			snprintf(why, whylen, "%s", err);
			free(buf);
			return -1;
		}
	}
	free(buf);
	if (strcmp(out->fabric, fabric)) {
		bot_state_free(out);
		memset(out, 0, sizeof(*out));
		snprintf(why, whylen, "the state reader answered for another fabric");
		return -1;
	}
	why[0] = 0;
	return 0;
}
