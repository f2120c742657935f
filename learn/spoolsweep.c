/*
 * spoolsweep.c - spool files to a forced-arm sweep (learn/spoolsweep.h):
 * read every file whole, keep each context's first cost row, push a row per
 * clean sample, then fill every row's auto_us from its context's row.
 * Contexts are found through a hash of their fields (a sweep of many files
 * costs no scan per record); rows are bounded like a compile batch
 * (BOT_COMPILE_MAX_SAMPLES: past it the conversion is refused whole).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/spool.h"
#include "learn/compile.h"
#include "learn/spoolsweep.h"
#include "policies/context.h"

/* A context's cost row: the first one seen in any file wins. */
struct au {
	uint64_t nbytes;
	uint32_t nranks, nnodes;
	uint8_t coll, known;
	float cost[BOT_SPOOL_NCOST];
};

struct sweep_state {
	struct bot_sweep *sw;
	size_t first;		/* the first row of this conversion in sw */
	int fabric;
	struct au *au;
	size_t nau, cau;
	size_t *idx;		/* open addressing: 1 + index into au, 0 empty */
	size_t nidx;		/* a power of two, at least twice nau */
	size_t *row_ctx;	/* per row from first on: index into au */
	size_t nrc, crc;
	struct bot_spoolsweep_report *rep;
	const struct bot_log *log;
	int oom;		/* -1 out of memory, -2 past the row bound */
};

static uint64_t au_hash(uint64_t nbytes, uint32_t nranks, uint32_t nnodes, uint8_t coll)
{
	return bot_mix64(bot_mix64(nbytes ^ ((uint64_t)coll << 56)) ^
			 ((uint64_t)nranks << 32 | nnodes));
}

static int au_is(const struct au *a, const struct bot_spool_rec *r)
{
	return a->nbytes == r->nbytes && a->nranks == r->nranks && a->nnodes == r->nnodes &&
	       a->coll == r->coll;
}

/* Rebuild the index at twice the size. */
static int au_reindex(struct sweep_state *s)
{
	size_t n = s->nidx ? 2 * s->nidx : 256;
	size_t *idx = calloc(n, sizeof(*idx));

	if (!idx)
		return -1;
	for (size_t i = 0; i < s->nau; i++) {
		const struct au *a = &s->au[i];
		size_t h = (size_t)au_hash(a->nbytes, a->nranks, a->nnodes, a->coll) & (n - 1);

		while (idx[h])
			h = (h + 1) & (n - 1);
		idx[h] = i + 1;
	}
	free(s->idx);
	s->idx = idx;
	s->nidx = n;
	return 0;
}

/* The context of a record, its cost row noted when it has one; -1 when out
 * of memory. */
static long ctx_of(struct sweep_state *s, const struct bot_spool_rec *r)
{
	int has = !(r->flags & BOT_SPOOL_F_NO_COST);
	size_t h, i;

	if (2 * (s->nau + 1) > s->nidx && au_reindex(s) < 0)
		return -1;
	h = (size_t)au_hash(r->nbytes, r->nranks, r->nnodes, r->coll) & (s->nidx - 1);
	while (s->idx[h] && !au_is(&s->au[s->idx[h] - 1], r))
		h = (h + 1) & (s->nidx - 1);
	if (s->idx[h]) {
		i = s->idx[h] - 1;
	} else {
		if (s->nau == s->cau) {
			size_t nc = s->cau ? s->cau * 2 : 64;
			struct au *na = realloc(s->au, nc * sizeof(*na));

			if (!na)
				return -1;
			s->au = na;
			s->cau = nc;
		}
		i = s->nau++;
		memset(&s->au[i], 0, sizeof(s->au[i]));
		s->au[i].nbytes = r->nbytes;
		s->au[i].nranks = r->nranks;
		s->au[i].nnodes = r->nnodes;
		s->au[i].coll = r->coll;
		s->idx[h] = i + 1;
	}
	if (has && !s->au[i].known) {
		memcpy(s->au[i].cost, r->cost, sizeof(s->au[i].cost));
		s->au[i].known = 1;
	}
	return (long)i;
}

/* auto_us of every row from its context's cost row, once all files are in. */
static void fill_auto_us(struct sweep_state *s)
{
	for (size_t i = s->first; i < s->sw->nrows; i++) {
		struct bot_sweep_row *row = &s->sw->rows[i];
		const struct au *a = &s->au[s->row_ctx[i - s->first]];
		float c = a->cost[bot_arm(row->algo, row->proto)];

		row->auto_us = !a->known ? NAN : c > 0 ? c : -1;
	}
}

static void sweep_file(struct sweep_state *s, const struct bot_compile_paths *list, size_t fi)
{
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];

	s->rep->files++;
	if (bot_compile_read_file(list, fi, &f, err, sizeof(err)) < 0) {
		bot_log_msg(s->log, BOT_LOG_WARN, "%s (rejected, skipped)", err);
		s->rep->bad++;
		return;
	}
	s->rep->sound++;
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f.recs[i];
		struct bot_sweep_row row;
		long ci;

		if (r->kind == BOT_SPOOL_PROC)
			continue;	/* what ran, not a measurement (formats.md 9) */
		ci = ctx_of(s, r);
		if (ci < 0) {
			s->oom = -1;
			break;
		}
		if (r->kind == BOT_SPOOL_SUMMARY) {
			s->rep->summaries++;
			continue;
		}
		if (!bot_spool_clean(r)) {
			s->rep->labelled++;
			continue;
		}
		if (s->rep->rows >= BOT_COMPILE_MAX_SAMPLES) {
			bot_log_msg(s->log, BOT_LOG_ERROR, "%s: more than %llu rows in one "
				    "conversion: refused whole (split the input)", list->v[fi],
				    (unsigned long long)BOT_COMPILE_MAX_SAMPLES);
			s->oom = -2;
			break;
		}
		memset(&row, 0, sizeof(row));
		row.fabric = (uint16_t)s->fabric;
		row.coll = (int8_t)r->coll;
		row.algo = (int8_t)bot_arm_algo(r->arm);
		row.proto = (int8_t)bot_arm_proto(r->arm);
		row.nchannels = (int8_t)r->nchannels;
		row.captured = 0;
		row.aggregate = 0;
		row.nbytes = r->nbytes;
		row.nranks = r->nranks;
		row.nnodes = r->nnodes;
		row.num_pipe_ops = -1;
		row.auto_us = NAN;	/* fill_auto_us() */
		row.measured_us = (double)r->duration_ns / 1000.0;
		if (s->nrc == s->crc) {
			size_t nc = s->crc ? s->crc * 2 : 256;
			size_t *nr = realloc(s->row_ctx, nc * sizeof(*nr));

			if (!nr) {
				s->oom = -1;
				break;
			}
			s->row_ctx = nr;
			s->crc = nc;
		}
		if (bot_sweep_push(s->sw, &row) < 0) {
			s->oom = -1;
			break;
		}
		s->row_ctx[s->nrc++] = (size_t)ci;
		s->rep->rows++;
	}
	bot_spool_free(&f);
}

int bot_spoolsweep(const char *const *paths, size_t npaths, const char *fabric,
		   struct bot_sweep *sw, struct bot_spoolsweep_report *rep,
		   const struct bot_log *log)
{
	struct sweep_state s;
	char err[512];

	memset(rep, 0, sizeof(*rep));
	memset(&s, 0, sizeof(s));
	s.sw = sw;
	s.first = sw->nrows;
	s.rep = rep;
	s.log = log;
	s.fabric = bot_sweep_fabric(sw, fabric);
	if (s.fabric < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "'%s' is not a fabric name "
			    "([a-z0-9][a-z0-9._-]{0,63})", fabric);
		return -2;
	}
	/* path by path: one that cannot be listed is named, the others read */
	for (size_t p = 0; p < npaths && !s.oom; p++) {
		struct bot_compile_paths list;

		if (bot_compile_list(&paths[p], 1, &list, err, sizeof(err)) < 0) {
			bot_log_msg(log, BOT_LOG_WARN, "%s", err);
			rep->bad++;
			continue;
		}
		if (!list.n) {
			/* as spool show: a path without spool files is named */
			bot_log_msg(log, BOT_LOG_WARN, "%s: no *.spool files", paths[p]);
			rep->bad++;
		}
		for (size_t i = 0; i < list.n && !s.oom; i++)
			sweep_file(&s, &list, i);
		bot_compile_paths_free(&list);
	}
	if (!s.oom)
		fill_auto_us(&s);
	free(s.au);
	free(s.idx);
	free(s.row_ctx);
	if (s.oom) {
		sw->nrows = s.first;	/* refused whole: none of this conversion's rows */
		if (s.oom == -1)
			bot_log_msg(log, BOT_LOG_ERROR, "out of memory");
		return -1;
	}
	return 0;
}
