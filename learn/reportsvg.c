/*
 * reportsvg.c - a merged report drawn (reportsvg.h): contexts sorted into
 * panels (collective, nodes, ranks) and sizes, each context's row
 * (bot_report_row) as a point of AUTO's loss and of ours and a cell of
 * each band, the notes from the totals; learn/svg.c draws.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/reportsvg.h"
#include "learn/svg.h"
#include "policies/context.h"

#define NOTE_MAX 320
#define TITLE_MAX 160

/* A context's place: panel (collective, nodes, ranks), then size. */
struct place {
	uint64_t key;
	size_t i;		/* into m->ctx */
};

/* A panel: a run of places of one collective and scale. */
struct group {
	size_t from, n;
	uint64_t calls;
	int drawn;
};

static uint64_t place_key(const struct bot_report_ctx *c)
{
	return (uint64_t)c->coll << 56 | (uint64_t)(c->nnodes & 0xffff) << 40 |
	       (uint64_t)c->nranks << 8 | c->bucket;
}

static int same_panel(uint64_t a, uint64_t b)
{
	return a >> 8 == b >> 8;
}

static int by_place(const void *a, const void *b)
{
	uint64_t x = ((const struct place *)a)->key, y = ((const struct place *)b)->key;

	return x < y ? -1 : x > y;
}

/* Groups by calls, most first (ties: the panel order). */
static int by_calls(const void *a, const void *b)
{
	const struct group *x = *(const struct group *const *)a, *y = *(const struct group *const *)b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* An arm's colour: its algorithm's hue, lighter for the lighter protocol
 * (simple full, ll128 a third towards white, ll two thirds). */
static unsigned arm_rgb(int arm)
{
	static const unsigned algo[BOT_NALGO] = {
		0xd55e00,	/* tree */
		0x0072b2,	/* ring */
		0x009e73,	/* collnet_direct */
		0xcc79a7,	/* collnet_chain */
		0xe69f00,	/* nvls */
		0x56b4e9,	/* nvls_tree */
		0x555555,	/* pat */
	};
	unsigned base = algo[bot_arm_algo(arm)], out = 0;
	int p = bot_arm_proto(arm), white = p == BOT_PROTO_SIMPLE ? 0 : p == BOT_PROTO_LL128 ? 1 : 2;

	for (int s = 0; s < 24; s += 8) {
		unsigned ch = base >> s & 0xff;

		ch += (255 - ch) * (unsigned)white / 3;
		out |= ch << s;
	}
	return out;
}

/* A loss in percent; a loss is >= 0 (the best known arm is the fastest of
 * those it is measured against), so a rounding error's -1e-16 is 0 rather
 * than a y axis down to -10%. */
static double pct(double loss)
{
	return loss < 0 && loss > -1e-9 ? 0 : loss * 100;
}

/* A time span for people, as the text report writes it (bot_report_span;
 * until 2026-12-05 "0.0 us" here for 40 ns, and for none) */
static const char *span(char *buf, size_t len, double s)
{
	bot_report_span(s, buf, len);
	return buf;
}

static void notes_of(const struct bot_report_part *m, const char *where, size_t nsteps,
		     const struct bot_reportsvg_info *in, char (*note)[NOTE_MAX], size_t *nnotes)
{
	struct bot_report_totals t;
	char nccl[128], tuner[64], prof[64], sv[32], ls[32], nt[32];
	size_t n = 0;

	bot_report_totals(m, &t);
	bot_report_versions(m->nccl, m->nnccl, BOT_REPORT_VER_NCCL, nccl, sizeof(nccl));
	bot_report_versions(m->tuner, m->ntuner, BOT_REPORT_VER_ABI, tuner, sizeof(tuner));
	bot_report_versions(m->profiler, m->nprofiler, BOT_REPORT_VER_ABI, prof, sizeof(prof));
	snprintf(note[n++], NOTE_MAX, "%zu step(s), %zu part(s); mode %s, policy %s, fabric %s%s%.100s%s",
		 nsteps, m->nparts, m->shadow ? "shadow" : "on", bot_policy_name(m->policy),
		 m->fabric, m->fabric_why[0] ? " (" : "", m->fabric_why,
		 m->fabric_why[0] ? ")" : "");
	if (m->shadow) {
		snprintf(note[n++], NOTE_MAX, "shadow: NCCL's choice stood, nothing saved or lost; "
			 "%llu calls in %zu contexts, %zu where AUTO lost >10%%",
			 (unsigned long long)t.calls, t.contexts, t.over10);
	} else {
		span(sv, sizeof(sv), t.saved);
		span(ls, sizeof(ls), t.lost);
		span(nt, sizeof(nt), fabs(t.net));
		snprintf(note[n++], NOTE_MAX, "%llu calls decided of %llu; %ssaved %s, lost %s, net "
			 "%s %s vs AUTO", (unsigned long long)t.calls_decided,
			 (unsigned long long)t.calls, t.estimated ? "est. " : "", sv, ls, nt,
			 t.net >= 0 ? "saved" : "lost");
		char nc[64] = "";

		if (t.no_calls)
			snprintf(nc, sizeof(nc), ", %zu without calls (not judged)", t.no_calls);
		snprintf(note[n++], NOTE_MAX, "%zu context(s) lost >10%%, %zu harmed (worse than "
			 "AUTO by > 2 points), %zu unknown%s", t.over10, t.harmed, t.unknown, nc);
	}
	snprintf(note[n++], NOTE_MAX, "tuner loaded on %llu of %llu ranks; NCCL %s, tuner %s, "
		 "profiler %s", (unsigned long long)t.ranks_loaded,
		 (unsigned long long)t.ranks_expected, nccl, tuner, prof);
	snprintf(note[n++], NOTE_MAX, "loss: latency vs the best known arm's at that size (0%% = "
		 "best; ours drawn over AUTO's); bands: the arm each used");
	/* where AUTO's latency came from when the step did not run it
	 * (formats.md 17): the fabric's state, or NCCL's cost model */
	if (!m->shadow) {
		size_t from[4] = { 0 };

		for (size_t i = 0; i < m->nctx; i++) {
			struct bot_report_row r;

			bot_report_row(m, &m->ctx[i], &r);
			if (r.known && m->ctx[i].auto_arm < BOT_REPORT_NARMS)
				from[r.src[m->ctx[i].auto_arm] & 3]++;
		}
		if (from[BOT_REPORT_SRC_STATE] || from[BOT_REPORT_SRC_COST])
			snprintf(note[n++], NOTE_MAX, "AUTO's latency where the step did not run its "
				 "arm: the fabric's state in %zu context(s), NCCL's cost model in %zu",
				 from[BOT_REPORT_SRC_STATE], from[BOT_REPORT_SRC_COST]);
	}
	if (in->dropped)
		snprintf(note[n++], NOTE_MAX, "%zu panel(s) of the fewest calls left out (%zu "
			 "context(s); at most %d drawn): the text report has them", in->dropped,
			 in->dropped_ctx, BOT_REPORTSVG_MAX_PANELS);
	if (where)
		snprintf(note[n++], NOTE_MAX, "from %s", where);
	*nnotes = n;
}

/* Everything one document needs, allocated at once. */
struct work {
	struct place *pl;
	struct group *g, **gp;
	double *x, *ya, *yo;
	int *ca, *co;
	struct bot_svg_series *series;
	struct bot_svg_band *bands;
	struct bot_svg_chart *charts;
	char (*title)[TITLE_MAX], (*sub)[NOTE_MAX];
};

static void work_free(struct work *w)
{
	free(w->pl);
	free(w->g);
	free(w->gp);
	free(w->x);
	free(w->ya);
	free(w->yo);
	free(w->ca);
	free(w->co);
	free(w->series);
	free(w->bands);
	free(w->charts);
	free(w->title);
	free(w->sub);
}

static int work_alloc(struct work *w, size_t n)
{
	memset(w, 0, sizeof(*w));
	w->pl = calloc(n, sizeof(*w->pl));
	w->g = calloc(n, sizeof(*w->g));
	w->gp = calloc(n, sizeof(*w->gp));
	w->x = calloc(n, sizeof(*w->x));
	w->ya = calloc(n, sizeof(*w->ya));
	w->yo = calloc(n, sizeof(*w->yo));
	w->ca = calloc(n, sizeof(*w->ca));
	w->co = calloc(n, sizeof(*w->co));
	w->series = calloc(2 * BOT_REPORTSVG_MAX_PANELS, sizeof(*w->series));
	w->bands = calloc(2 * BOT_REPORTSVG_MAX_PANELS, sizeof(*w->bands));
	w->charts = calloc(BOT_REPORTSVG_MAX_PANELS, sizeof(*w->charts));
	w->title = calloc(BOT_REPORTSVG_MAX_PANELS, sizeof(*w->title));
	w->sub = calloc(BOT_REPORTSVG_MAX_PANELS, sizeof(*w->sub));
	return w->pl && w->g && w->gp && w->x && w->ya && w->yo && w->ca && w->co && w->series &&
	       w->bands && w->charts && w->title && w->sub ? 0 : -1;
}

/* Panel k of group g: its points, cells, title and subtitle. */
static void panel_of(const struct bot_report_part *m, struct work *w, const struct group *g,
		     size_t k, const struct bot_svg_cat *cats, struct bot_reportsvg_info *in)
{
	const struct bot_report_ctx *c0 = &m->ctx[w->pl[g->from].i];
	double saved = 0, lost = 0;
	size_t known = 0;
	int est = 0;
	char sv[32], ls[32];

	for (size_t j = g->from; j < g->from + g->n; j++) {
		const struct bot_report_ctx *c = &m->ctx[w->pl[j].i];
		struct bot_report_row r;

		bot_report_row(m, c, &r);
		/* bucket 0 (0 bytes) has no place on a log2 axis */
		w->x[j] = c->bucket ? (double)bot_bucket_lo(c->bucket) : NAN;
		w->ya[j] = r.known ? pct(r.loss_auto) : NAN;
		w->yo[j] = r.known ? pct(r.loss_ours) : NAN;
		w->ca[j] = c->auto_arm < BOT_REPORT_NARMS ? c->auto_arm : -1;
		w->co[j] = r.chosen;
		if (r.known) {
			known++;
			saved += r.saved;
			lost += r.lost;
			est |= r.estimated;
		}
	}
	snprintf(w->title[k], TITLE_MAX, "%s, %u node%s, %u rank%s", bot_coll_name(c0->coll),
		 c0->nnodes, c0->nnodes == 1 ? "" : "s", c0->nranks, c0->nranks == 1 ? "" : "s");
	if (m->shadow)
		snprintf(w->sub[k], NOTE_MAX, "%llu calls at %zu size(s), %zu with a known loss; "
			 "shadow: NCCL's choice stood", (unsigned long long)g->calls, g->n, known);
	else
		snprintf(w->sub[k], NOTE_MAX, "%llu calls at %zu size(s), %zu with a known loss; "
			 "%ssaved %s, lost %s vs AUTO", (unsigned long long)g->calls, g->n, known,
			 est ? "est. " : "", span(sv, sizeof(sv), saved), span(ls, sizeof(ls), lost));
	w->series[2 * k] = (struct bot_svg_series){ "AUTO", w->x + g->from, w->ya + g->from, g->n,
						    BOT_SVG_POLYLINE };
	w->series[2 * k + 1] = (struct bot_svg_series){
		m->shadow ? "nccl-bot (shadow: AUTO's)" : "nccl-bot", w->x + g->from,
		w->yo + g->from, g->n, BOT_SVG_POLYLINE };
	w->bands[2 * k] = (struct bot_svg_band){ "AUTO's arm", w->x + g->from, w->ca + g->from,
						 g->n };
	w->bands[2 * k + 1] = (struct bot_svg_band){ "nccl-bot's", w->x + g->from,
						     w->co + g->from, g->n };
	w->charts[k] = (struct bot_svg_chart){
		.title = w->title[k], .ylabel = "loss vs the best known arm",
		.yaxis = BOT_SVG_Y_PERCENT, .series = w->series + 2 * k, .nseries = 2,
		.subtitle = w->sub[k],
		.empty = "no loss known (AUTO's arm or a latency was not measured)",
		.bands = w->bands + 2 * k, .nbands = 2, .cats = cats, .ncats = BOT_REPORT_NARMS };
	in->contexts += g->n;
	in->known += known;
}

int bot_reportsvg_draw(const struct bot_report_part *m, const char *name, const char *where,
		       size_t nsteps, char **text, size_t *len, struct bot_reportsvg_info *info,
		       const struct bot_log *log)
{
	struct bot_svg_cat cats[BOT_REPORT_NARMS];
	char note[BOT_SVG_MAX_NOTES][NOTE_MAX], title[TITLE_MAX], err[256];
	const char *notes[BOT_SVG_MAX_NOTES];
	struct bot_svg_doc doc;
	struct work w;
	size_t ng = 0, k = 0, nnotes = 0;
	int rc = -1;

	memset(info, 0, sizeof(*info));
	*text = NULL;
	*len = 0;
	if (!m->nctx) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: nothing measured (no collective context in its "
			    "parts): no picture drawn", name);
		return -1;
	}
	if (work_alloc(&w, m->nctx) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: out of memory", name);
		work_free(&w);
		return -1;
	}
	for (size_t i = 0; i < m->nctx; i++)
		w.pl[i] = (struct place){ place_key(&m->ctx[i]), i };
	qsort(w.pl, m->nctx, sizeof(*w.pl), by_place);
	for (size_t i = 0; i < m->nctx; i++) {
		if (!i || !same_panel(w.pl[i - 1].key, w.pl[i].key))
			w.g[ng++] = (struct group){ i, 0, 0, 0 };
		w.g[ng - 1].n++;
		w.g[ng - 1].calls += m->ctx[w.pl[i].i].calls;
	}
	/* the panels with the most calls are drawn, in panel order */
	for (size_t i = 0; i < ng; i++)
		w.gp[i] = &w.g[i];
	qsort(w.gp, ng, sizeof(*w.gp), by_calls);
	for (size_t i = 0; i < ng; i++) {
		w.gp[i]->drawn = i < BOT_REPORTSVG_MAX_PANELS;
		if (!w.gp[i]->drawn) {
			info->dropped++;
			info->dropped_ctx += w.gp[i]->n;
		}
	}
	for (int a = 0; a < BOT_REPORT_NARMS; a++)
		cats[a] = (struct bot_svg_cat){ bot_arm_name(a), arm_rgb(a) };
	for (size_t i = 0; i < ng; i++)
		if (w.g[i].drawn)
			panel_of(m, &w, &w.g[i], k++, cats, info);
	info->panels = k;
	notes_of(m, where, nsteps, info, note, &nnotes);
	for (size_t i = 0; i < nnotes; i++)
		notes[i] = note[i];
	snprintf(title, sizeof(title), "nccl-bot report: %s", name);
	doc = (struct bot_svg_doc){ title, notes, nnotes, w.charts, k };
	if (bot_svg_render_doc(&doc, text, len, err, sizeof(err)) < 0)
		bot_log_msg(log, BOT_LOG_ERROR, "%s: the picture: %s", name, err);
	else
		rc = 0;
	work_free(&w);
	return rc;
}
