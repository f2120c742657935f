/*
 * svg.h - charts for people as plain SVG 1.1: the one writer of pictures
 * (`state show --svg`, and the reports).
 *
 * Owns the picture: a document with a title, lines of notes under it and
 * one panel per chart, stacked; each panel has a title and an optional
 * subtitle, an x axis of message sizes on a log2 scale (ticks labelled 1K,
 * 4K, 1M, ...), a y axis that is linear or in percent (ticks 1, 2 or 5
 * times a power of ten, zero always shown), one polyline or step line per
 * series with a marker on each point, optional bands under the plot (one
 * coloured cell per size: which category, e.g. which arm, held there), and
 * a legend of the series and of the categories the bands use.
 *
 * What reaches the output is always well-formed: every string (titles,
 * series names, which may be a fabric's or a context's name from a file)
 * is escaped for XML (& < > " ' as entities; control characters, bytes
 * that are not UTF-8 and code points XML forbids as the text "\xNN"), and
 * cut at BOT_SVG_MAX_TEXT bytes. Every number written is finite: a point
 * whose x is not a size from 1 byte to BOT_SVG_MAX_X (NaN is not), or whose
 * y is not finite, is left out
 * (the line is broken there), y values are clamped to +-BOT_SVG_MAX_ABS, and
 * the number formatter refuses a value that is not finite, so a bug cannot
 * write "nan" into the picture. No I/O: the document is returned in memory.
 */
#ifndef BOT_LEARN_SVG_H
#define BOT_LEARN_SVG_H

#include <stddef.h>

#define BOT_SVG_MAX_TEXT 200		/* bytes of one string kept */
#define BOT_SVG_MAX_ABS 1e12		/* |y| clamped to this */
#define BOT_SVG_MAX_X 1152921504606846976.0	/* 2^60 bytes: the largest x drawn */
#define BOT_SVG_MAX_POINTS (1u << 20)	/* points in one document */
#define BOT_SVG_MAX_SERIES 64		/* series in one chart */
#define BOT_SVG_MAX_BANDS 8		/* bands in one chart */
#define BOT_SVG_MAX_CATS 64		/* categories of one chart's bands */
#define BOT_SVG_MAX_NOTES 8		/* lines under the document's title */
#define BOT_SVG_CELL 0.25		/* a band's cell: at most this many octaves wide */
#define BOT_SVG_EM 0.6			/* a character's width for bot_svg_fit, in font sizes */
#define BOT_SVG_MIN_FONT 7		/* bot_svg_fit's smallest font size */

enum bot_svg_yaxis {
	BOT_SVG_Y_LINEAR = 0,	/* plain numbers */
	BOT_SVG_Y_PERCENT = 1,	/* y is a percentage: ticks read "5%" */
};

enum bot_svg_line {
	BOT_SVG_POLYLINE = 0,	/* straight segments between points */
	BOT_SVG_STEP = 1,	/* horizontal then vertical: a value holds until the next size */
};

struct bot_svg_series {
	const char *name;	/* legend text (escaped); NULL reads "" */
	const double *x;	/* sizes in bytes, ascending; x < 1 or > 2^60: left out */
	const double *y;
	size_t n;		/* 0: an entry in the legend, no line */
	enum bot_svg_line line;
};

/* A category of a chart's bands (an arm): its legend text and colour. */
struct bot_svg_cat {
	const char *name;	/* legend text (escaped) */
	unsigned rgb;		/* 0xrrggbb */
};

/*
 * A strip under the plot, on the plot's x scale: one coloured cell per
 * size, the colour that of the category held at that size (categories, not
 * values: no y). A cell is centred on its size, at most BOT_SVG_CELL octaves
 * wide and never past the middle between its size and a neighbour's
 * (bot_svg_cell), so a size not in x stays empty.
 */
struct bot_svg_band {
	const char *name;	/* the strip's label, left of it (escaped) */
	const double *x;	/* sizes in bytes, ascending; as a series' x */
	const int *cat;		/* each size's category; outside 0..ncats-1: no cell */
	size_t n;
};

struct bot_svg_chart {
	const char *title;	/* the panel's title (escaped) */
	const char *ylabel;	/* the y axis's label (escaped) */
	enum bot_svg_yaxis yaxis;
	const struct bot_svg_series *series;
	size_t nseries;		/* at most BOT_SVG_MAX_SERIES */
	const char *subtitle;	/* a line under the title (escaped); NULL: none */
	const char *empty;	/* said in the plot when no series has a point; NULL: "no data" */
	const struct bot_svg_band *bands;
	size_t nbands;		/* at most BOT_SVG_MAX_BANDS */
	const struct bot_svg_cat *cats;	/* the bands' categories; those used are in the legend */
	size_t ncats;		/* at most BOT_SVG_MAX_CATS */
};

/* A document: the title, notes (one line each) under it, the charts. */
struct bot_svg_doc {
	const char *title;	/* escaped; NULL reads "" */
	const char *const *notes;	/* escaped; a NULL line reads "" */
	size_t nnotes;		/* at most BOT_SVG_MAX_NOTES */
	const struct bot_svg_chart *charts;
	size_t ncharts;
};

/*
 * title (escaped; NULL reads "") and the charts, one panel each, as one SVG
 * document: 0 with *text (malloc()ed, NUL-terminated, *len bytes), or -1
 * with err (too many series or points, out of memory, a number the
 * formatter refused). A chart without a point to draw says "no data".
 */
int bot_svg_render(const char *title, const struct bot_svg_chart *charts, size_t ncharts,
		   char **text, size_t *len, char *err, size_t errlen);
/* The same for a whole document (notes under the title; too many notes,
 * bands or categories are refused like too many series). */
int bot_svg_render_doc(const struct bot_svg_doc *doc, char **text, size_t *len, char *err,
		       size_t errlen);

/*
 * The cell of size i of a band's sizes x[0..n): 0 with [*lo, *hi] in log2
 * bytes, centred on log2 x[i], at most cell octaves wide (cell <= 0:
 * BOT_SVG_CELL) and never past the middle between x[i] and x[i-1] or
 * x[i+1] (those drawn); -1 when x[i] is not drawn (as a series' point).
 */
int bot_svg_cell(const double *x, size_t n, size_t i, double cell, double *lo, double *hi);

/* The font size (at most size, at least BOT_SVG_MIN_FONT) at which s's
 * first BOT_SVG_MAX_TEXT bytes fit into avail pixels, a character taken as
 * BOT_SVG_EM font sizes wide: titles, subtitles and notes shrink rather
 * than run off the page. */
int bot_svg_fit(const char *s, double avail, int size);

/* s escaped for XML text or an attribute into dst (dstlen > 0), cut at
 * BOT_SVG_MAX_TEXT bytes of s and before an escape that does not fit;
 * returns dst. */
char *bot_svg_esc(char *dst, size_t dstlen, const char *s);

/* A size in bytes as an axis label: 2^k reads "1", "512", "1K", "64M",
 * "1G"; other sizes in the largest unit that keeps them whole or with one
 * decimal ("1.5K"). Into buf (at least 16 bytes). */
const char *bot_svg_bytes(char *buf, size_t len, double bytes);

#endif
