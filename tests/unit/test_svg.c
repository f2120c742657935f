/*
 * test_svg.c - the SVG writer (learn/svg.h): escaping, size labels, what a
 * chart with bad, empty or huge data writes, and the bounds.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "learn/statesvg.h"
#include "learn/svg.h"
#include "policies/context.h"
#include "policies/kb.h"
#include "testutil.h"

static char dir[64];
static void setup(void) { bot_test_mkdtemp(dir, sizeof(dir), "svg"); }
static void teardown(void) { bot_test_rmtree(dir); }

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* No "nan" or "inf" anywhere (case-insensitive), outside the names we gave. */
static void assert_finite(const char *t)
{
	for (const char *p = t; *p; p++) {
		ck_assert_msg(strncasecmp(p, "nan", 3) != 0, "nan at %.40s", p);
		ck_assert_msg(strncasecmp(p, "inf", 3) != 0, "inf at %.40s", p);
	}
}

static void assert_document(const char *t, size_t len)
{
	ck_assert_uint_eq(strlen(t), len);
	ck_assert(!strncmp(t, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg ", 44));
	ck_assert(len > 7 && !strcmp(t + len - 7, "</svg>\n"));
	ck_assert_int_eq(count(t, "<g>"), count(t, "</g>"));
}

START_TEST(escaping)
{
	char b[BOT_SVG_MAX_TEXT * 6 + 1], small[7];
	char longs[BOT_SVG_MAX_TEXT + 50];

	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), NULL), "");
	/* control characters: one line, no character XML forbids */
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "x\ny\t\x1b[0m\x7f"),
			 "x\\x0ay\\x09\\x1b[0m\\x7f");
	/* valid UTF-8 is kept; bytes that are not UTF-8, overlong forms,
	 * surrogates and U+FFFE/U+FFFF are written as text */
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
			 "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "\xff\xc3"), "\\xff\\xc3");
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "\xc0\xaf"), "\\xc0\\xaf");
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "\xed\xa0\x80"), "\\xed\\xa0\\x80");
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "\xef\xbf\xbe"), "\\xef\\xbf\\xbe");
	ck_assert_str_eq(bot_svg_esc(b, sizeof(b), "\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
	/* cut before an escape that does not fit, never inside one */
	ck_assert_str_eq(bot_svg_esc(small, sizeof(small), "ab&cd"), "ab");
	ck_assert_str_eq(bot_svg_esc(small, sizeof(small), "abcdefghij"), "abcdef");
	/* at most BOT_SVG_MAX_TEXT bytes of the input */
	memset(longs, 'x', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = 0;
	ck_assert_uint_eq(strlen(bot_svg_esc(b, sizeof(b), longs)), BOT_SVG_MAX_TEXT);
}
END_TEST

START_TEST(byte_labels)
{
	char b[32];

	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 1), "1");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 512), "512");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 1024), "1K");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 1536), "1.5K");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 64.0 * 1024 * 1024), "64M");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 4.0 * 1024 * 1024 * 1024), "4G");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), 1099511627776.0), "1T");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), NAN), "?");
	ck_assert_str_eq(bot_svg_bytes(b, sizeof(b), -1), "?");
}
END_TEST

START_TEST(chart_ticks_and_series)
{
	double x[] = { 1024, 4096, 65536, 1048576 }, y1[] = { 0, 12.5, 40, 3 }, y2[] = { 1, 2, 3, 4 };
	struct bot_svg_series s[] = {
		{ "4 nodes", x, y1, 4, BOT_SVG_POLYLINE },
		{ "8 nodes", x, y2, 4, BOT_SVG_STEP },
	};
	struct bot_svg_chart c = { .title = "allreduce", .ylabel = "loss", .yaxis = BOT_SVG_Y_PERCENT,
				    .series = s, .nseries = 2 };
	char *t, err[256];
	size_t len;

	ck_assert_int_eq(bot_svg_render("AUTO <fabric>", &c, 1, &t, &len, err, sizeof(err)), 0);
	assert_document(t, len);
	assert_finite(t);
	ck_assert(strstr(t, "<title>AUTO &lt;fabric&gt;</title>"));
	/* x: 1K to 1M, a tick every octave; y in percent from 0 */
	ck_assert(strstr(t, ">1K</text>"));
	ck_assert(strstr(t, ">2K</text>"));
	ck_assert(strstr(t, ">1M</text>"));
	ck_assert(!strstr(t, ">2M</text>"));
	ck_assert(!strstr(t, ">512</text>"));
	ck_assert(strstr(t, ">0%</text>"));
	ck_assert(strstr(t, ">40%</text>"));
	ck_assert(strstr(t, ">4 nodes</text>"));
	ck_assert(strstr(t, ">8 nodes</text>"));
	ck_assert(!strstr(t, "no data"));
	ck_assert_int_eq(count(t, "<polyline"), 2);
	/* the step line has a corner between each pair of points: 4 + 3 */
	{
		const char *p = strstr(strstr(t, "<polyline") + 1, "<polyline");
		const char *pts = strstr(p, "points=\"");
		int n = 0;

		for (const char *q = pts + 8; *q != '"'; q++)
			n += *q == ',';
		ck_assert_int_eq(n, 7);
	}
	/* one marker per point and one per legend entry: circles for the
	 * first series, squares for the second */
	ck_assert_int_eq(count(t, "<circle"), 5);
	ck_assert_int_eq(count(t, "<rect x=\"") - 1, 5);
	free(t);
}
END_TEST

START_TEST(not_finite_never_written)
{
	double x[] = { 1024, NAN, 4096, INFINITY, 16384, 0, -5, 65536, 131072, 1e308, 1e-300, 0.5 };
	double y[] = { 1, 2, NAN, 4, INFINITY, 6, 7, -INFINITY, 1e300, 1, 1, 1 };
	struct bot_svg_series s = { "bad", x, y, 12, BOT_SVG_POLYLINE };
	struct bot_svg_chart c = { .title = "t", .ylabel = "y", .series = &s, .nseries = 1 };
	char *t, err[256];
	size_t len;

	ck_assert_int_eq(bot_svg_render("t", &c, 1, &t, &len, err, sizeof(err)), 0);
	assert_document(t, len);
	assert_finite(t);
	/* two valid points (1K, 1; 128K, 1e300 clamped): separate runs,
	 * each a lone marker, so no line at all */
	ck_assert_int_eq(count(t, "<polyline"), 0);
	ck_assert_int_eq(count(t, "<circle"), 3);
	ck_assert(strstr(t, ">1000000000000</text>"));	/* the clamped top tick */
	ck_assert(strstr(t, ">1K</text>"));	/* x from 1K to 128K: no tiny or huge sizes */
	ck_assert(strstr(t, ">128K</text>"));
	ck_assert(!strstr(t, ">256K</text>"));
	ck_assert(!strstr(t, ">512</text>"));
	free(t);
}
END_TEST

START_TEST(empty_charts)
{
	struct bot_svg_series s = { NULL, NULL, NULL, 0, BOT_SVG_POLYLINE };
	struct bot_svg_chart c[] = {
		{ .title = "empty series", .ylabel = "y", .yaxis = BOT_SVG_Y_PERCENT, .series = &s,
		  .nseries = 1 },
		{ .title = NULL },
	};
	char *t, err[256];
	size_t len;

	ck_assert_int_eq(bot_svg_render(NULL, c, 2, &t, &len, err, sizeof(err)), 0);
	assert_document(t, len);
	assert_finite(t);
	ck_assert_int_eq(count(t, "no data"), 2);
	ck_assert_int_eq(count(t, "<polyline"), 0);
	free(t);
	/* no chart at all: a document with its title */
	ck_assert_int_eq(bot_svg_render("nothing", NULL, 0, &t, &len, err, sizeof(err)), 0);
	assert_document(t, len);
	ck_assert(strstr(t, "<title>nothing</title>"));
	free(t);
}
END_TEST

START_TEST(bounds)
{
	static struct bot_svg_series s[BOT_SVG_MAX_SERIES + 1];
	struct bot_svg_chart c = { .title = "t", .ylabel = "y", .series = s,
				    .nseries = BOT_SVG_MAX_SERIES + 1 };
	double x = 1024, y = 1;
	char *t = (char *)1, err[256];
	size_t len = 7;

	for (size_t i = 0; i <= BOT_SVG_MAX_SERIES; i++)
		s[i] = (struct bot_svg_series){ "s", &x, &y, 1, BOT_SVG_POLYLINE };
	ck_assert_int_eq(bot_svg_render("t", &c, 1, &t, &len, err, sizeof(err)), -1);
	ck_assert_ptr_null(t);
	ck_assert_uint_eq(len, 0);
	ck_assert(strstr(err, "65 series (at most 64)"));
	c.nseries = BOT_SVG_MAX_SERIES;
	ck_assert_int_eq(bot_svg_render("t", &c, 1, &t, &len, err, sizeof(err)), 0);
	free(t);
	s[0].n = BOT_SVG_MAX_POINTS;	/* the count is refused before any is read */
	ck_assert_int_eq(bot_svg_render("t", &c, 1, &t, &len, err, sizeof(err)), -1);
	ck_assert(strstr(err, "more than"));
}
END_TEST

/* Hostile strings everywhere, the document checked by xmllint when there. */
START_TEST(hostile_wellformed)
{
	const char *bad = "]]><!-- \"&amp;\x01\xff\xed\xa0\x80<script>&#0;";
	double x[] = { 1, 2, 4 }, y[] = { -3, 0, 3 };
	struct bot_svg_series s[] = { { bad, x, y, 3, BOT_SVG_STEP }, { bad, x, y, 0, 0 } };
	struct bot_svg_chart c = { .title = bad, .ylabel = bad, .series = s, .nseries = 2 };
	char *t, err[256], path[BOT_TEST_PATH_MAX], cmd[BOT_TEST_PATH_MAX + 64];
	size_t len;

	ck_assert_int_eq(bot_svg_render(bad, &c, 1, &t, &len, err, sizeof(err)), 0);
	assert_document(t, len);
	ck_assert(!strstr(t, "<script"));
	ck_assert(!strstr(t, "<!--"));
	ck_assert(!strstr(t, "&#0;"));
	ck_assert(strstr(t, ">-4</text>"));
	bot_test_write(dir, "h.svg", t, len);
	free(t);
	if (system("command -v xmllint >/dev/null 2>&1") != 0) {
		fprintf(stderr, "test_svg: xmllint not installed: well-formedness not checked\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "xmllint --noout '%s'", bot_test_path(path, dir, "h.svg"));
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A band's cell (bot_svg_cell): a quarter octave centred on its size, cut
 * at the middle to a neighbour, nothing for a size not drawn. */
START_TEST(band_cells)
{
	double x[] = { 1024, 4096, 4096 * 1.0905077326652577 /* 2^(1/8) */, NAN, 0, 65536 };
	double lo, hi;

	ck_assert_int_eq(bot_svg_cell(x, 6, 0, 0, &lo, &hi), 0);
	ck_assert_double_eq_tol(lo, 9.875, 1e-9);
	ck_assert_double_eq_tol(hi, 10.125, 1e-9);
	ck_assert_int_eq(bot_svg_cell(x, 6, 1, 0.25, &lo, &hi), 0);
	ck_assert_double_eq_tol(lo, 11.875, 1e-9);
	ck_assert_double_eq_tol(hi, 12.0625, 1e-9);	/* the middle to 2^12.125 */
	ck_assert_int_eq(bot_svg_cell(x, 6, 2, 0.25, &lo, &hi), 0);
	ck_assert_double_eq_tol(lo, 12.0625, 1e-9);
	ck_assert_double_eq_tol(hi, 12.25, 1e-9);	/* NaN next: not a neighbour */
	ck_assert_int_eq(bot_svg_cell(x, 6, 3, 0.25, &lo, &hi), -1);
	ck_assert_int_eq(bot_svg_cell(x, 6, 4, 0.25, &lo, &hi), -1);
	ck_assert_int_eq(bot_svg_cell(x, 6, 5, 1, &lo, &hi), 0);	/* 0 before: no neighbour */
	ck_assert_double_eq_tol(lo, 15.5, 1e-9);
	ck_assert_double_eq_tol(hi, 16.5, 1e-9);
	ck_assert_int_eq(bot_svg_cell(x, 6, 6, 0.25, &lo, &hi), -1);
}
END_TEST

/* Long titles and notes shrink to fit (bot_svg_fit), down to a floor. */
START_TEST(text_fits)
{
	char s[401];

	ck_assert_int_eq(bot_svg_fit("abc", 100, 12), 12);
	ck_assert_int_eq(bot_svg_fit(NULL, 1, 12), 12);
	memset(s, 'x', 50);
	s[50] = 0;
	ck_assert_int_eq(bot_svg_fit(s, 300, 12), 10);	/* 50 x 0.6 x 10 = 300 */
	ck_assert_int_eq(bot_svg_fit(s, 360, 12), 12);
	for (int i = 0; i < 50; i++)
		memcpy(s + 2 * i, "\xc3\xa9", 2);	/* 50 characters in 100 bytes */
	s[100] = 0;
	ck_assert_int_eq(bot_svg_fit(s, 300, 12), 10);
	memset(s, 'x', 400);
	s[400] = 0;	/* the first BOT_SVG_MAX_TEXT bytes count, and the floor holds */
	ck_assert_int_eq(bot_svg_fit(s, 300, 12), BOT_SVG_MIN_FONT);
	ck_assert_int_eq(bot_svg_fit(s, 200 * 0.6 * 9, 12), 9);
}
END_TEST

/* Notes, a subtitle, bands: cells in their category's colour, only the
 * categories used in the legend, the bounds. */
START_TEST(bands_and_notes)
{
	double x[] = { 1024, 2048, 4096, 8192, 16384 }, y[] = { 1, 2, NAN, 4, 5 };
	int cat[] = { 0, 1, 0, -1, 7 };
	struct bot_svg_series s = { "AUTO", x, y, 5, BOT_SVG_POLYLINE };
	struct bot_svg_cat cats[] = { { "ring/ll", 0xff0000 }, { "tree<simple>", 0x0000ff },
				      { "unused", 0x00ff00 } };
	struct bot_svg_band b[] = { { "AUTO's arm", x, cat, 5 }, { "ours", x, cat, 2 } };
	struct bot_svg_chart c = { .title = "allreduce", .ylabel = "loss", .yaxis = BOT_SVG_Y_PERCENT,
				   .series = &s, .nseries = 1, .subtitle = "saved 1 ms & more",
				   .bands = b, .nbands = 2, .cats = cats, .ncats = 3 };
	const char *notes[] = { "calls <decided>", NULL };
	struct bot_svg_doc d = { "job 1", notes, 2, &c, 1 };
	char *t, *plain, err[256];
	size_t len, plen;

	ck_assert_int_eq(bot_svg_render_doc(&d, &t, &len, err, sizeof(err)), 0);
	assert_document(t, len);
	assert_finite(t);
	ck_assert(strstr(t, ">calls &lt;decided&gt;</text>"));
	ck_assert(strstr(t, ">saved 1 ms &amp; more</text>"));
	ck_assert(strstr(t, ">AUTO&#39;s arm</text>"));
	ck_assert(strstr(t, ">ours</text>"));
	/* cells: 2 + 1 of ring/ll, 1 + 1 of tree/simple, each colour once more
	 * in the legend; the unused category nowhere */
	ck_assert_int_eq(count(t, "fill=\"#ff0000\""), 4);
	ck_assert_int_eq(count(t, "fill=\"#0000ff\""), 3);
	ck_assert(strstr(t, ">tree&lt;simple&gt;</text>"));
	ck_assert(!strstr(t, "#00ff00"));
	ck_assert(!strstr(t, ">unused<"));
	/* taller than the same chart without notes, subtitle or bands */
	c.subtitle = NULL;
	c.nbands = 0;
	ck_assert_int_eq(bot_svg_render("job 1", &c, 1, &plain, &plen, err, sizeof(err)), 0);
	ck_assert_int_eq(strstr(plain, "height=\"") - plain, strstr(t, "height=\"") - t);
	ck_assert(strncmp(strstr(plain, "height=\""), strstr(t, "height=\""), 16) != 0);
	ck_assert(strstr(plain, "height=\"374.00\""));	/* 44 + 34 + 240 + 56 */
	ck_assert(strstr(t, "height=\"468.00\""));	/* + 2 notes, a subtitle, 2 bands: 36 + 16 + 58 */
	free(plain);
	free(t);
	/* bounds */
	c.nbands = BOT_SVG_MAX_BANDS + 1;
	ck_assert_int_eq(bot_svg_render_doc(&d, &t, &len, err, sizeof(err)), -1);
	ck_assert(strstr(err, "bands (at most"));
	c.nbands = 0;
	c.ncats = BOT_SVG_MAX_CATS + 1;
	ck_assert_int_eq(bot_svg_render_doc(&d, &t, &len, err, sizeof(err)), -1);
	ck_assert(strstr(err, "categories (at most"));
	c.ncats = 3;
	d.nnotes = BOT_SVG_MAX_NOTES + 1;
	ck_assert_int_eq(bot_svg_render_doc(&d, &t, &len, err, sizeof(err)), -1);
	ck_assert(strstr(err, "lines of notes"));
	ck_assert_ptr_null(t);
}
END_TEST

/* A context of coll at bucket b, nodes n: AUTO's arm (ring/ll, the prior's
 * argmin) at q + d, ring/simple at q (d = 64: AUTO twice as slow). */
static void add_ctx(struct bot_kb *kb, unsigned coll, unsigned b, unsigned n, int d)
{
	float prior[BOT_NARMS];
	struct bot_kb_ctx *c = bot_kb_get(kb, bot_ctx_key(coll, b, n * 8, n));
	int ll = bot_arm(BOT_ALGO_RING, BOT_PROTO_LL), simple = bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE);

	ck_assert_ptr_nonnull(c);
	for (int a = 0; a < BOT_NARMS; a++)
		prior[a] = -1;
	prior[ll] = 10;
	prior[simple] = 20;
	ck_assert_int_eq(bot_kb_set_prior(kb, c->key, prior), 0);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[ll], 1000 + d, 20), 0);
	ck_assert_int_eq(bot_stats_add_q(&c->arm[simple], 1000, 20), 0);
}

/* The state drawn (learn/statesvg.h): charts per collective, lines per
 * scale, a 0-byte bucket left out, more lines than a chart holds dropped. */
START_TEST(state_drawn)
{
	struct bot_state st;
	struct bot_statesvg_info in;
	char *t, err[256];
	size_t len;

	ck_assert_int_eq(bot_state_init(&st, "f1"), 0);
	strcpy(st.fabric, "f<1>");	/* readers refuse such a name; escaped all the same */
	for (unsigned n = 1; n <= BOT_SVG_MAX_SERIES + 2; n++)
		for (unsigned b = 40; b < 48; b += 4)
			add_ctx(st.kb, BOT_COLL_ALLREDUCE, b, n, 64);
	add_ctx(st.kb, BOT_COLL_BROADCAST, 0, 2, 64);	/* 0 bytes: no place on log2 */
	add_ctx(st.kb, BOT_COLL_BROADCAST, 44, 2, 64);
	ck_assert_int_eq(bot_statesvg_loss(&st, "snap-x.nbs", NULL, &t, &len, &in, err,
					   sizeof(err)), 0);
	ck_assert_uint_eq(in.charts, 2);
	ck_assert_uint_eq(in.lines, 1 + BOT_SVG_MAX_SERIES);
	ck_assert_uint_eq(in.dropped, 2);
	ck_assert_uint_eq(in.points, 1 + 2 * BOT_SVG_MAX_SERIES);
	assert_document(t, len);
	assert_finite(t);
	ck_assert(strstr(t, "<title>nccl-bot: fabric f&lt;1&gt;, snapshot snap-x.nbs</title>"));
	ck_assert(strstr(t, ">broadcast: AUTO&#39;s estimated loss"));
	ck_assert(strstr(t, ">1 node, 8 ranks<"));
	ck_assert(strstr(t, ">64 nodes, 512 ranks<"));
	ck_assert(!strstr(t, ">65 nodes"));
	ck_assert(strstr(t, ">100%</text>"));	/* twice as slow: 100% lost */
	free(t);
	bot_state_free(&st);

	ck_assert_int_eq(bot_state_init(&st, "e"), 0);
	ck_assert_int_eq(bot_statesvg_loss(&st, NULL, "e.nbs", &t, &len, &in, err, sizeof(err)), 0);
	ck_assert_uint_eq(in.charts, 0);
	ck_assert(strstr(t, "no context learned yet"));
	ck_assert(strstr(t, "<title>nccl-bot: fabric e, e.nbs</title>"));
	free(t);
	bot_state_free(&st);
}
END_TEST

static Suite *svg_suite(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("svg");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, escaping);
	tcase_add_test(tc, byte_labels);
	tcase_add_test(tc, chart_ticks_and_series);
	tcase_add_test(tc, not_finite_never_written);
	tcase_add_test(tc, empty_charts);
	tcase_add_test(tc, bounds);
	tcase_add_test(tc, hostile_wellformed);
	tcase_add_test(tc, state_drawn);
	tcase_add_test(tc, band_cells);
	tcase_add_test(tc, text_fits);
	tcase_add_test(tc, bands_and_notes);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(svg_suite)
