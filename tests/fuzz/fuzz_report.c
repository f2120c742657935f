/*
 * fuzz_report.c - fuzz target for the report part's parser
 * (learn/report.c, doc/formats.md section 17).
 *
 * A part is written by the job's user and read by srun and `nccl-bot
 * report`: any bytes must come back as a clean refusal ("p:LINE: reason",
 * nothing kept) or as a part whose text, written again, parses to the same
 * text (the writer's output is canonical), and whose merge with itself and
 * numbers never crash.
 * Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "learn/report.h"
#include "learn/reportsvg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The same bytes as SLURM_NCCL_BOT_REPORT_INFO (formats.md 17: "MODE
 * PLUGIN SOURCE...", from the step's environment): whatever it sets, the
 * part is one the writer writes and the reader reads back. */
static void check_info(const uint8_t *data, size_t size)
{
	struct bot_report_part p, q;
	char info[1024], err[BOT_REPORT_ERR_MAX];
	char *a;
	size_t la;

	if (size >= sizeof(info) || memchr(data, 0, size))
		return;
	memcpy(info, data, size);
	info[size] = 0;
	bot_report_part_init(&p);
	strcpy(p.job, "1");
	strcpy(p.step, "0");
	strcpy(p.node, "n1");
	p.nparts = 1;
	p.step_nodes = 1;
	if (bot_report_part_info(&p, info) < 0)
		return;
	if (bot_report_part_format(&p, &a, &la, err, sizeof(err)) < 0)
		abort();
	if (bot_report_part_parse("i", a, la, &q, err, sizeof(err)) < 0)
		abort();
	if (strcmp(q.fabric, p.fabric) || strcmp(q.fabric_why, p.fabric_why) ||
	    q.shadow != p.shadow || q.user_plugin != p.user_plugin)
		abort();
	free(a);
	bot_report_part_free(&p);
	bot_report_part_free(&q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_report_part p, q, m;
	struct bot_report_totals t;
	char err[BOT_REPORT_ERR_MAX], line[8192];
	char *a, *b;
	size_t la, lb;

	check_info(data, size);
	err[0] = 0;
	if (bot_report_part_parse("p", (const char *)data, size, &p, err, sizeof(err)) < 0) {
		if (p.ctx || p.nctx || strncmp(err, "p:", 2) != 0)
			abort();
		return 0;
	}
	if (bot_report_part_format(&p, &a, &la, err, sizeof(err)) < 0)
		abort();
	if (bot_report_part_parse("q", a, la, &q, err, sizeof(err)) < 0)
		abort();
	if (bot_report_part_format(&q, &b, &lb, err, sizeof(err)) < 0 || la != lb ||
	    memcmp(a, b, la) != 0)
		abort();
	bot_report_part_init(&m);
	if (bot_report_merge(&m, &p, BOT_REPORT_SAME_STEP) < 0 ||
	    bot_report_merge(&m, &q, BOT_REPORT_STEPS) < 0)
		abort();
	for (size_t i = 0; i < m.nctx; i++)
		if (m.ctx[i].calls < p.ctx[i].calls)
			abort();
	bot_report_totals(&m, &t);
	bot_report_summary(&m, "1.0", "/r", line, sizeof(line));
	{
		/* the picture (learn/reportsvg.h): drawn whenever there is a
		 * context (a number not finite fails the drawing), every
		 * context in a panel or counted as left out */
		struct bot_log log = { NULL, NULL };
		struct bot_reportsvg_info in;
		char *svg;
		size_t ls;
		int rc = bot_reportsvg_draw(&m, "1", "/r", 1, &svg, &ls, &in, &log);

		if ((rc < 0) != (m.nctx == 0))
			abort();
		if (rc == 0) {
			if (ls != strlen(svg) || in.contexts + in.dropped_ctx != m.nctx)
				abort();
			free(svg);
		}
	}
	free(a);
	free(b);
	bot_report_part_free(&p);
	bot_report_part_free(&q);
	bot_report_part_free(&m);
	return 0;
}
