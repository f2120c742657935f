/*
 * statesvg.c - a fabric's state as a picture of AUTO's estimated loss
 * (statesvg.h): contexts sorted into charts (collective) and lines (node
 * count, ranks), points in size order, drawn by learn/svg.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "learn/log.h"
#include "learn/stateyaml.h"
#include "learn/statesvg.h"
#include "learn/svg.h"
#include "policies/context.h"
#include "policies/kb.h"

/* Context keys in (collective, nodes, ranks, bucket) order. */
static int by_chart(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	uint64_t kx[4] = { bot_key_coll(x), bot_key_nnodes(x), bot_key_nranks(x), bot_key_bucket(x) };
	uint64_t ky[4] = { bot_key_coll(y), bot_key_nnodes(y), bot_key_nranks(y), bot_key_bucket(y) };

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

static int same_line(uint64_t a, uint64_t b)
{
	return bot_key_coll(a) == bot_key_coll(b) && bot_key_nnodes(a) == bot_key_nnodes(b) &&
	       bot_key_nranks(a) == bot_key_nranks(b);
}

int bot_statesvg_loss(const struct bot_state *s, const char *snap, const char *file,
		      char **text, size_t *len, struct bot_statesvg_info *info, char *err,
		      size_t errlen)
{
	size_t n = bot_kb_count(s->kb), nlines = 0, ncharts = 0, i;
	uint64_t *keys = calloc(n ? n : 1, sizeof(*keys));
	double *x = calloc(n ? n : 1, sizeof(*x)), *y = calloc(n ? n : 1, sizeof(*y));
	struct bot_svg_series *lines = calloc(n ? n : 1, sizeof(*lines));
	char (*names)[48] = calloc(n ? n : 1, sizeof(*names));
	struct bot_svg_chart charts[BOT_NCOLL + 1];
	char ctitle[BOT_NCOLL][160], title[256], empty[] = "no context learned yet";
	int rc = -1;

	memset(info, 0, sizeof(*info));
	memset(charts, 0, sizeof(charts));
	*text = NULL;
	*len = 0;
	if (!keys || !x || !y || !lines || !names) {
		bot_log_errf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++)
		keys[i] = bot_kb_at(s->kb, i)->key;
	qsort(keys, n, sizeof(*keys), by_chart);
	for (i = 0; i < n; i++) {
		struct bot_stateyaml_learned l;
		uint64_t k = keys[i];
		unsigned coll = bot_key_coll(k), b = bot_key_bucket(k);
		struct bot_svg_chart *c;

		if (coll >= BOT_NCOLL)
			continue;	/* the snapshot reader refuses these; never drawn */
		if (!ncharts || bot_key_coll(keys[i - 1]) != coll) {
			snprintf(ctitle[coll], sizeof(ctitle[coll]), "%s: AUTO's estimated loss "
				 "against the best known arm", bot_coll_name((int)coll));
			charts[ncharts++] = (struct bot_svg_chart){
				.title = ctitle[coll], .ylabel = "AUTO's loss",
				.yaxis = BOT_SVG_Y_PERCENT, .series = lines + nlines };
		}
		c = &charts[ncharts - 1];
		if (!c->nseries || !same_line(keys[i - 1], k)) {
			if (c->nseries == BOT_SVG_MAX_SERIES) {
				/* the rest of this line is dropped with it */
				while (i + 1 < n && same_line(keys[i + 1], k))
					i++;
				info->dropped++;
				continue;
			}
			snprintf(names[nlines], sizeof(names[nlines]), "%u node%s, %u ranks",
				 (unsigned)bot_key_nnodes(k), bot_key_nnodes(k) == 1 ? "" : "s",
				 (unsigned)bot_key_nranks(k));
			lines[nlines] = (struct bot_svg_series){ names[nlines], x + i, y + i, 0,
								 BOT_SVG_POLYLINE };
			nlines++;
			c->nseries++;
		}
		bot_stateyaml_learned(bot_kb_find(s->kb, k), &l);
		x[i] = b ? (double)bot_bucket_lo(b) : NAN;	/* 0 bytes has no place on log2 */
		y[i] = l.loss_pct;
		info->points += isfinite(x[i]) && isfinite(y[i]);
		lines[nlines - 1].n++;
	}
	info->charts = ncharts;
	info->lines = nlines;
	if (!ncharts)
		charts[ncharts++] = (struct bot_svg_chart){ .title = empty, .ylabel = "AUTO's loss",
							    .yaxis = BOT_SVG_Y_PERCENT };
	snprintf(title, sizeof(title), "nccl-bot: fabric %s%s%s", s->fabric,
		 snap && *snap ? ", snapshot " : file ? ", " : "",
		 snap && *snap ? snap : file ? file : "");
	rc = bot_svg_render(title, charts, ncharts, text, len, err, errlen);
out:
	free(keys);
	free(x);
	free(y);
	free(lines);
	free(names);
	return rc;
}
