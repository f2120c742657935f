/*
 * statesvg.h - `nccl-bot state show --svg`: a fabric's learned state as a
 * picture, AUTO's estimated loss against the best known arm by message size,
 * one chart per collective and one line per scale (node count and ranks).
 *
 * Owns the choice of what is drawn; the drawing is learn/svg.h's. A
 * context's loss is learn/stateyaml.h's (bot_stateyaml_learned: AUTO's arm's
 * robust latency against the best arm's, both measured); a context without
 * it is a gap in its line. Tools only.
 */
#ifndef BOT_LEARN_STATESVG_H
#define BOT_LEARN_STATESVG_H

#include <stddef.h>

#include "common/state.h"

/* What was drawn. */
struct bot_statesvg_info {
	size_t charts;		/* collectives with a context */
	size_t lines;		/* scales drawn, over all charts */
	size_t points;		/* contexts with a known loss */
	size_t dropped;		/* scales left out (more than a chart holds) */
};

/*
 * s as an SVG document, named by snap or file (either may be NULL) in its
 * title: 0 with *text (malloc()ed, *len bytes) and *info, or -1 with err.
 * A state without contexts gives one empty chart that says so.
 */
int bot_statesvg_loss(const struct bot_state *s, const char *snap, const char *file,
		      char **text, size_t *len, struct bot_statesvg_info *info, char *err,
		      size_t errlen);

#endif
