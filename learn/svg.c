/*
 * svg.c - charts for people as plain SVG (svg.h): escaping, scales and
 * ticks, bands of cells, one panel per chart, the document in a growing
 * buffer.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "learn/log.h"
#include "learn/svg.h"

/* The page: panels stacked under the document's title. */
#define DOC_W 880
#define DOC_TITLE_H 44
#define PLOT_X 80		/* left edge of a plot, room for y labels */
#define PLOT_W 540
#define PLOT_TOP 34		/* from a panel's top: its title above */
#define PLOT_H 240
#define PANEL_BOTTOM 56		/* x labels and the axis's name below the plot */
#define LEGEND_X (PLOT_X + PLOT_W + 24)
#define LEGEND_ROW 18
#define NOTE_ROW 18		/* a line of notes under the document's title */
#define SUBTITLE_H 16		/* a panel's subtitle, between its title and its plot */
#define BAND_TOP 46		/* the first band, below the plot's bottom */
#define BAND_ROW 16		/* a band and the gap to the next */
#define BAND_H 12

static const char *const colours[] = { "#0072b2", "#d55e00", "#009e73", "#cc79a7",
				       "#e69f00", "#56b4e9", "#222222", "#8c564b" };
#define NCOLOURS (sizeof(colours) / sizeof(colours[0]))

struct out {
	char *p;
	size_t len, cap;
	int fail;		/* 1 out of memory, 2 a number refused */
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o->fail)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || bot_grow((void **)&o->p, &o->cap, o->len + (size_t)n + 1, 1) < 0) {
		o->fail = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(o->p + o->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += (size_t)n;
}

/* A coordinate or a length: two decimals, never "nan" or "inf". */
static void num(struct out *o, double v)
{
	if (!isfinite(v)) {
		if (!o->fail)
			o->fail = 2;
		return;
	}
	if (v == 0)
		v = 0;	/* no "-0.00" */
	put(o, "%.2f", v);
}

/* An escaped string. */
static void text(struct out *o, const char *s)
{
	char buf[BOT_SVG_MAX_TEXT * 6 + 1];

	put(o, "%s", bot_svg_esc(buf, sizeof(buf), s));
}

/* Length of the UTF-8 sequence at s (at most n bytes) that XML 1.0 allows
 * as a character, or 0. */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
	size_t len, i;
	uint32_t cp, min;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2, cp = s[0] & 0x1f, min = 0x80;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3, cp = s[0] & 0x0f, min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe ||
	    cp == 0xffff)
		return 0;
	return len;
}

char *bot_svg_esc(char *dst, size_t dstlen, const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strnlen((const char *)u, BOT_SVG_MAX_TEXT), i = 0, o = 0;

	while (i < n) {
		char piece[8];
		size_t plen, take = 1;

		switch (u[i]) {
		case '&': strcpy(piece, "&amp;"); break;
		case '<': strcpy(piece, "&lt;"); break;
		case '>': strcpy(piece, "&gt;"); break;
		case '"': strcpy(piece, "&quot;"); break;
		case '\'': strcpy(piece, "&#39;"); break;
		default:
			if (u[i] < 0x20 || u[i] == 0x7f) {
				snprintf(piece, sizeof(piece), "\\x%02x", u[i]);
			} else if (u[i] < 0x80) {
				piece[0] = (char)u[i];
				piece[1] = 0;
			} else if ((take = utf8_ok(u + i, n - i)) != 0) {
				memcpy(piece, u + i, take);
				piece[take] = 0;
			} else {
				take = 1;
				snprintf(piece, sizeof(piece), "\\x%02x", u[i]);
			}
		}
		plen = strlen(piece);
		if (o + plen >= dstlen)
			break;
		memcpy(dst + o, piece, plen);
		o += plen;
		i += take;
	}
	dst[o] = 0;
	return dst;
}

const char *bot_svg_bytes(char *buf, size_t len, double bytes)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	if (!isfinite(bytes) || bytes < 0) {
		snprintf(buf, len, "?");
		return buf;
	}
	while (u < 5 && bytes >= 1024) {
		bytes /= 1024;
		u++;
	}
	if (bytes == floor(bytes))
		snprintf(buf, len, "%.0f%.*s", bytes, u >= 0, u >= 0 ? units + u : "");
	else
		snprintf(buf, len, "%.1f%.*s", bytes, u >= 0, u >= 0 ? units + u : "");
	return buf;
}

/* ---- scales -------------------------------------------------------------- */

static int point_ok(const struct bot_svg_series *s, size_t i)
{
	return s->x[i] >= 1 && s->x[i] <= BOT_SVG_MAX_X && isfinite(s->y[i]);
}

static double clamp_y(double y)
{
	return y > BOT_SVG_MAX_ABS ? BOT_SVG_MAX_ABS : y < -BOT_SVG_MAX_ABS ? -BOT_SVG_MAX_ABS : y;
}

struct scale {
	double xlo, xhi;	/* log2 of bytes, whole numbers */
	int xstep;		/* between ticks, in octaves */
	double ylo, yhi, ystep;
	int ydec;		/* decimals of the y labels */
	size_t npoints;
};

static void chart_scale(const struct bot_svg_chart *c, struct scale *sc)
{
	static const int xsteps[] = { 1, 2, 4, 5, 10, 20 };
	double lxmin = INFINITY, lxmax = -INFINITY, ymin = 0, ymax = 0, raw, mag, span;

	sc->npoints = 0;
	for (size_t k = 0; k < c->nseries; k++) {
		const struct bot_svg_series *s = &c->series[k];

		for (size_t i = 0; i < s->n; i++) {
			double lx, y;

			if (!point_ok(s, i))
				continue;
			lx = log2(s->x[i]);
			y = clamp_y(s->y[i]);
			lxmin = fmin(lxmin, lx);
			lxmax = fmax(lxmax, lx);
			ymin = fmin(ymin, y);
			ymax = fmax(ymax, y);
			sc->npoints++;
		}
	}
	for (size_t k = 0; k < c->nbands; k++) {
		const struct bot_svg_band *b = &c->bands[k];

		for (size_t i = 0; i < b->n; i++) {
			if (!(b->x[i] >= 1 && b->x[i] <= BOT_SVG_MAX_X))
				continue;
			lxmin = fmin(lxmin, log2(b->x[i]));
			lxmax = fmax(lxmax, log2(b->x[i]));
		}
	}
	if (lxmin > lxmax) {
		lxmin = 10;	/* 1K .. 1G */
		lxmax = 30;
	}
	sc->xlo = floor(lxmin);
	sc->xhi = ceil(lxmax);
	if (sc->xhi <= sc->xlo)
		sc->xhi = sc->xlo + 1;
	sc->xstep = 20;
	for (size_t i = 0; i < sizeof(xsteps) / sizeof(xsteps[0]); i++) {
		if ((sc->xhi - sc->xlo) / xsteps[i] <= 10) {
			sc->xstep = xsteps[i];
			break;
		}
	}
	sc->xlo = floor(sc->xlo / sc->xstep) * sc->xstep;
	sc->xhi = ceil(sc->xhi / sc->xstep) * sc->xstep;

	if (ymax <= ymin)
		ymax = ymin + 1;
	raw = (ymax - ymin) / 5;
	mag = pow(10, floor(log10(raw)));
	sc->ystep = raw <= mag ? mag : raw <= 2 * mag ? 2 * mag : raw <= 5 * mag ? 5 * mag :
		    10 * mag;
	sc->ylo = floor(ymin / sc->ystep) * sc->ystep;
	sc->yhi = ceil(ymax / sc->ystep) * sc->ystep;
	span = -floor(log10(sc->ystep));
	sc->ydec = span > 0 ? (int)fmin(span, 9) : 0;
}

static double px_x(const struct scale *sc, double bytes)
{
	return PLOT_X + (log2(bytes) - sc->xlo) / (sc->xhi - sc->xlo) * PLOT_W;
}

static double px_y(const struct scale *sc, double top, double y)
{
	y = clamp_y(y);
	return top + PLOT_H - (y - sc->ylo) / (sc->yhi - sc->ylo) * PLOT_H;
}

/* ---- drawing --------------------------------------------------------------- */

static void line(struct out *o, double x1, double y1, double x2, double y2, const char *style)
{
	put(o, "<line x1=\"");
	num(o, x1);
	put(o, "\" y1=\"");
	num(o, y1);
	put(o, "\" x2=\"");
	num(o, x2);
	put(o, "\" y2=\"");
	num(o, y2);
	put(o, "\" %s/>\n", style);
}

static void label(struct out *o, double x, double y, const char *anchor, int size,
		  const char *extra, const char *s)
{
	put(o, "<text x=\"");
	num(o, x);
	put(o, "\" y=\"");
	num(o, y);
	put(o, "\" text-anchor=\"%s\" font-size=\"%d\"%s>", anchor, size, extra);
	text(o, s);
	put(o, "</text>\n");
}

int bot_svg_fit(const char *s, double avail, int size)
{
	size_t n = 0;
	double w;

	s = s ? s : "";
	for (size_t i = 0; s[i] && i < BOT_SVG_MAX_TEXT; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;	/* characters, not bytes */
	w = (double)n * size * BOT_SVG_EM;
	if (w <= avail || n == 0)
		return size;
	size = (int)floor(avail / ((double)n * BOT_SVG_EM));
	return size < BOT_SVG_MIN_FONT ? BOT_SVG_MIN_FONT : size;
}

/* Marker k (circle, square, triangle, diamond) centred at x, y. */
static void marker(struct out *o, int k, const char *colour, double x, double y)
{
	switch (k % 4) {
	case 0:
		put(o, "<circle cx=\"");
		num(o, x);
		put(o, "\" cy=\"");
		num(o, y);
		put(o, "\" r=\"3\" fill=\"%s\"/>\n", colour);
		break;
	case 1:
		put(o, "<rect x=\"");
		num(o, x - 3);
		put(o, "\" y=\"");
		num(o, y - 3);
		put(o, "\" width=\"6\" height=\"6\" fill=\"%s\"/>\n", colour);
		break;
	default:
		put(o, "<polygon points=\"");
		if (k % 4 == 2) {
			num(o, x); put(o, ","); num(o, y - 4); put(o, " ");
			num(o, x - 4); put(o, ","); num(o, y + 3); put(o, " ");
			num(o, x + 4); put(o, ","); num(o, y + 3);
		} else {
			num(o, x); put(o, ","); num(o, y - 4); put(o, " ");
			num(o, x + 4); put(o, ","); num(o, y); put(o, " ");
			num(o, x); put(o, ","); num(o, y + 4); put(o, " ");
			num(o, x - 4); put(o, ","); num(o, y);
		}
		put(o, "\" fill=\"%s\"/>\n", colour);
	}
}

static void axes(struct out *o, const struct bot_svg_chart *c, const struct scale *sc,
		 double top)
{
	char buf[64];
	int ny = (int)fmin(round((sc->yhi - sc->ylo) / sc->ystep), 100);

	put(o, "<rect x=\"%d\" y=\"", PLOT_X);
	num(o, top);
	put(o, "\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999999\"/>\n", PLOT_W,
	    PLOT_H);
	for (double e = sc->xlo; e <= sc->xhi + 0.5; e += sc->xstep) {
		double x = px_x(sc, exp2(e));

		line(o, x, top, x, top + PLOT_H, "stroke=\"#e5e5e5\"");
		label(o, x, top + PLOT_H + 16, "middle", 11, "", bot_svg_bytes(buf, sizeof(buf),
									   exp2(e)));
	}
	label(o, PLOT_X + PLOT_W / 2.0, top + PLOT_H + 36, "middle", 12, "",
	      "message size (bytes, log2 scale)");
	for (int i = 0; i <= ny; i++) {
		double v = sc->ylo + i * sc->ystep, y = px_y(sc, top, v);

		if (fabs(v) < sc->ystep / 1e6)
			v = 0;
		snprintf(buf, sizeof(buf), "%.*f%s", sc->ydec, v,
			 c->yaxis == BOT_SVG_Y_PERCENT ? "%" : "");
		line(o, PLOT_X, y, PLOT_X + PLOT_W, y,
		     v == 0 ? "stroke=\"#999999\"" : "stroke=\"#e5e5e5\"");
		label(o, PLOT_X - 6, y + 4, "end", 11, "", buf);
	}
	put(o, "<text transform=\"translate(18,");
	num(o, top + PLOT_H / 2.0);
	put(o, ") rotate(-90)\" text-anchor=\"middle\" font-size=\"12\">");
	text(o, c->ylabel);
	put(o, "</text>\n");
}

/* One run of valid points of a series as a polyline (step or straight). */
static void run(struct out *o, const struct bot_svg_series *s, const struct scale *sc,
		double top, size_t from, size_t to, const char *colour)
{
	put(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", colour);
	for (size_t i = from; i < to; i++) {
		double x = px_x(sc, s->x[i]), y = px_y(sc, top, s->y[i]);

		if (i > from && s->line == BOT_SVG_STEP) {
			num(o, x);
			put(o, ",");
			num(o, px_y(sc, top, s->y[i - 1]));
			put(o, " ");
		}
		num(o, x);
		put(o, ",");
		num(o, y);
		put(o, i + 1 < to ? " " : "");
	}
	put(o, "\"/>\n");
}

static void series(struct out *o, const struct bot_svg_series *s, int k, const struct scale *sc,
		   double top)
{
	const char *colour = colours[(size_t)k % NCOLOURS];
	double ly = top + 12 + k * LEGEND_ROW;
	char style[64];
	size_t i = 0;

	put(o, "<g>\n");
	while (i < s->n) {
		size_t j;

		while (i < s->n && !point_ok(s, i))
			i++;
		for (j = i; j < s->n && point_ok(s, j); j++)
			;
		if (j > i + 1)
			run(o, s, sc, top, i, j, colour);
		for (; i < j; i++)
			marker(o, k, colour, px_x(sc, s->x[i]), px_y(sc, top, s->y[i]));
	}
	snprintf(style, sizeof(style), "stroke-width=\"1.5\" stroke=\"%s\"", colour);
	line(o, LEGEND_X, ly - 4, LEGEND_X + 20, ly - 4, style);
	marker(o, k, colour, LEGEND_X + 10, ly - 4);
	label(o, LEGEND_X + 26, ly, "start", 11, "", s->name);
	put(o, "</g>\n");
}

int bot_svg_cell(const double *x, size_t n, size_t i, double cell, double *lo, double *hi)
{
	double c, half;

#define DRAWN(v) ((v) >= 1 && (v) <= BOT_SVG_MAX_X)
	if (i >= n || !DRAWN(x[i]))
		return -1;
	c = log2(x[i]);
	half = (cell > 0 && cell <= 64 ? cell : BOT_SVG_CELL) / 2;
	*lo = c - half;
	*hi = c + half;
	if (i > 0 && DRAWN(x[i - 1]) && x[i - 1] < x[i])
		*lo = fmax(*lo, (log2(x[i - 1]) + c) / 2);
	if (i + 1 < n && DRAWN(x[i + 1]) && x[i + 1] > x[i])
		*hi = fmin(*hi, (log2(x[i + 1]) + c) / 2);
#undef DRAWN
	return 0;
}

/* The categories the chart's bands use, as bits. */
static uint64_t cats_used(const struct bot_svg_chart *c)
{
	uint64_t used = 0;

	for (size_t k = 0; k < c->nbands; k++)
		for (size_t i = 0; i < c->bands[k].n; i++) {
			int cat = c->bands[k].cat[i];

			if (cat >= 0 && (size_t)cat < c->ncats && c->bands[k].x[i] >= 1 &&
			    c->bands[k].x[i] <= BOT_SVG_MAX_X)
				used |= 1ull << cat;
		}
	return used;
}

static int popcount64(uint64_t v)
{
	int n = 0;

	for (; v; v &= v - 1)
		n++;
	return n;
}

/* Band k: its label, its outline, one cell per size drawn. */
static void band(struct out *o, const struct bot_svg_band *b, const struct bot_svg_chart *c,
		 const struct scale *sc, double y)
{
	put(o, "<g>\n");
	label(o, PLOT_X - 6, y + BAND_H - 2, "end", 10, "", b->name);
	put(o, "<rect x=\"%d\" y=\"", PLOT_X);
	num(o, y);
	put(o, "\" width=\"%d\" height=\"%d\" fill=\"#f7f7f7\" stroke=\"#cccccc\"/>\n", PLOT_W,
	    BAND_H);
	for (size_t i = 0; i < b->n; i++) {
		double lo, hi, x0, x1;
		int cat = b->cat[i];

		if (cat < 0 || (size_t)cat >= c->ncats ||
		    bot_svg_cell(b->x, b->n, i, BOT_SVG_CELL, &lo, &hi) < 0)
			continue;
		x0 = PLOT_X + (fmax(lo, sc->xlo) - sc->xlo) / (sc->xhi - sc->xlo) * PLOT_W;
		x1 = PLOT_X + (fmin(hi, sc->xhi) - sc->xlo) / (sc->xhi - sc->xlo) * PLOT_W;
		if (x1 - x0 < 1.5) {	/* a cell stays visible on a wide axis */
			x0 = (x0 + x1) / 2 - 0.75;
			x1 = x0 + 1.5;
		}
		put(o, "<rect x=\"");
		num(o, x0);
		put(o, "\" y=\"");
		num(o, y);
		put(o, "\" width=\"");
		num(o, x1 - x0);
		put(o, "\" height=\"%d\" fill=\"#%06x\"/>\n", BAND_H, c->cats[cat].rgb & 0xffffffu);
	}
	put(o, "</g>\n");
}

/* The used categories in the legend, under the series. */
static void cat_legend(struct out *o, const struct bot_svg_chart *c, uint64_t used, double top)
{
	double ly = top + 12 + ((double)c->nseries + (c->nseries ? 0.5 : 0)) * LEGEND_ROW;

	for (size_t k = 0; k < c->ncats; k++) {
		if (!(used >> k & 1))
			continue;
		put(o, "<rect x=\"%d\" y=\"", LEGEND_X + 3);
		num(o, ly - 10);
		put(o, "\" width=\"14\" height=\"10\" fill=\"#%06x\"/>\n", c->cats[k].rgb & 0xffffffu);
		label(o, LEGEND_X + 26, ly, "start", 11, "", c->cats[k].name);
		ly += LEGEND_ROW;
	}
}

static double panel_head(const struct bot_svg_chart *c)
{
	return PLOT_TOP + (c->subtitle ? SUBTITLE_H : 0);
}

static double panel_height(const struct bot_svg_chart *c)
{
	int ncats = popcount64(cats_used(c));
	double legend = 20.0 + (double)c->nseries * LEGEND_ROW +
			(ncats ? (c->nseries ? 0.5 : 0) * LEGEND_ROW + ncats * LEGEND_ROW : 0);
	double below = PANEL_BOTTOM + (c->nbands ? BAND_TOP - 36 + (double)c->nbands * BAND_ROW : 0);

	return panel_head(c) + fmax(PLOT_H + below, legend + PANEL_BOTTOM);
}

static void panel(struct out *o, const struct bot_svg_chart *c, double top)
{
	struct scale sc;
	double ptop = top + panel_head(c);

	chart_scale(c, &sc);
	label(o, PLOT_X, top + 20, "start", bot_svg_fit(c->title, DOC_W - PLOT_X - 8, 14),
	      " font-weight=\"bold\"", c->title);
	if (c->subtitle)
		label(o, PLOT_X, top + 20 + SUBTITLE_H, "start",
		      bot_svg_fit(c->subtitle, DOC_W - PLOT_X - 8, 12), " fill=\"#444444\"",
		      c->subtitle);
	axes(o, c, &sc, ptop);
	if (!sc.npoints)
		label(o, PLOT_X + PLOT_W / 2.0, ptop + PLOT_H / 2.0, "middle", 13,
		      " fill=\"#777777\"", c->empty ? c->empty : "no data");
	for (size_t k = 0; k < c->nseries; k++)
		series(o, &c->series[k], (int)k, &sc, ptop);
	for (size_t k = 0; k < c->nbands; k++)
		band(o, &c->bands[k], c, &sc, ptop + PLOT_H + BAND_TOP + (double)k * BAND_ROW);
	cat_legend(o, c, cats_used(c), ptop);
}

int bot_svg_render_doc(const struct bot_svg_doc *d, char **text_out, size_t *len, char *err,
		       size_t errlen)
{
	struct out o = { NULL, 0, 0, 0 };
	size_t npoints = 0;
	double head = DOC_TITLE_H + (double)d->nnotes * NOTE_ROW, h = head, top;

	*text_out = NULL;
	*len = 0;
	if (d->nnotes > BOT_SVG_MAX_NOTES)
		return bot_log_errf(err, errlen, "%zu lines of notes (at most %d)", d->nnotes,
				    BOT_SVG_MAX_NOTES);
	for (size_t c = 0; c < d->ncharts; c++) {
		const struct bot_svg_chart *ch = &d->charts[c];

		if (ch->nseries > BOT_SVG_MAX_SERIES)
			return bot_log_errf(err, errlen, "chart %zu: %zu series (at most %d)", c + 1,
					    ch->nseries, BOT_SVG_MAX_SERIES);
		if (ch->nbands > BOT_SVG_MAX_BANDS)
			return bot_log_errf(err, errlen, "chart %zu: %zu bands (at most %d)", c + 1,
					    ch->nbands, BOT_SVG_MAX_BANDS);
		if (ch->ncats > BOT_SVG_MAX_CATS)
			return bot_log_errf(err, errlen, "chart %zu: %zu categories (at most %d)",
					    c + 1, ch->ncats, BOT_SVG_MAX_CATS);
		for (size_t k = 0; k < ch->nseries + ch->nbands; k++) {
			size_t n = k < ch->nseries ? ch->series[k].n : ch->bands[k - ch->nseries].n;

			if (n > BOT_SVG_MAX_POINTS - npoints)
				return bot_log_errf(err, errlen, "more than %u points",
						    BOT_SVG_MAX_POINTS);
			npoints += n;
		}
		h += panel_height(ch);
	}
	put(&o, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"",
	    DOC_W);
	num(&o, h);
	put(&o, "\" viewBox=\"0 0 %d ", DOC_W);
	num(&o, h);
	put(&o, "\" font-family=\"sans-serif\">\n<title>");
	text(&o, d->title);
	put(&o, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n");
	label(&o, DOC_W / 2.0, 28, "middle", bot_svg_fit(d->title, DOC_W - 16, 16),
	      " font-weight=\"bold\"", d->title);
	for (size_t i = 0; i < d->nnotes; i++)
		label(&o, DOC_W / 2.0, 28 + (double)(i + 1) * NOTE_ROW, "middle",
		      bot_svg_fit(d->notes[i], DOC_W - 16, 12), "", d->notes[i]);
	top = head;
	for (size_t c = 0; c < d->ncharts; c++) {
		put(&o, "<g>\n");
		panel(&o, &d->charts[c], top);
		put(&o, "</g>\n");
		top += panel_height(&d->charts[c]);
	}
	put(&o, "</svg>\n");
	if (o.fail) {
		free(o.p);
		return bot_log_errf(err, errlen, "%s", o.fail == 1 ? "out of memory" :
				    "a number that is not finite (not written)");
	}
	*text_out = o.p;
	*len = o.len;
	return 0;
}

int bot_svg_render(const char *title, const struct bot_svg_chart *charts, size_t ncharts,
		   char **text_out, size_t *len, char *err, size_t errlen)
{
	struct bot_svg_doc d = { title, NULL, 0, charts, ncharts };

	return bot_svg_render_doc(&d, text_out, len, err, errlen);
}
