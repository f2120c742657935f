/*
 * reportsvg.h - `nccl-bot report --svg`: a job's report as a picture.
 *
 * One panel per collective and scale (node count, ranks): by message size,
 * the estimated loss against the best known arm of AUTO's arm and of
 * nccl-bot's choice (learn/report.h's bot_report_row, the text report's
 * numbers), two bands with the arm each used at each size, and the calls,
 * time saved and lost in the panel's subtitle; the document's title names
 * the job, its notes the calls decided, the time saved or lost, the ranks
 * and the versions. At most BOT_REPORTSVG_MAX_PANELS panels: past that the
 * scales with the fewest calls are left out, and a note says so.
 *
 * Owns the choice of what is drawn; the drawing is learn/svg.h's. Nothing
 * is printed: messages go to a struct bot_log. Tools only.
 */
#ifndef BOT_LEARN_REPORTSVG_H
#define BOT_LEARN_REPORTSVG_H

#include <stddef.h>

#include "learn/log.h"
#include "learn/report.h"

#define BOT_REPORTSVG_MAX_PANELS 32

/* What was drawn. */
struct bot_reportsvg_info {
	size_t panels;		/* drawn */
	size_t contexts;	/* contexts in the panels drawn */
	size_t known;		/* of them, those with a known loss (a point on each line) */
	size_t dropped;		/* panels left out (more than BOT_REPORTSVG_MAX_PANELS) */
	size_t dropped_ctx;	/* their contexts */
};

/*
 * m, a merged report (a job's steps: bot_report_merge), as one SVG
 * document; name says what it is in the title ("job 1234"), where the
 * directory it was read from (NULL: not said), nsteps the steps merged.
 * 0 with *text (malloc()ed, NUL-terminated, *len bytes) and *info; -1 with
 * the reason on log when m has no context (nothing measured: no picture,
 * rather than an empty one) or the document cannot be made.
 */
int bot_reportsvg_draw(const struct bot_report_part *m, const char *name, const char *where,
		       size_t nsteps, char **text, size_t *len, struct bot_reportsvg_info *info,
		       const struct bot_log *log);

#endif
