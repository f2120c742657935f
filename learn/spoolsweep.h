/*
 * spoolsweep.h - spool files to a forced-arm sweep (doc/formats.md sections
 * 9 and 7): what ranks measured, in the form the replay and the simulator's
 * calibration read.
 *
 * One row per clean sample (no label, a duration); labelled samples and
 * context summaries are counted, not rows. A row's auto_us is its
 * context's cost-table row at the arm that ran: a sweep wants one auto_us
 * per (fabric, context, arm), and all or none of a context's arms with one,
 * so the first cost row seen for a context in any file (samples and
 * summaries carry it) serves every row of that context, and a context no
 * record knows the row of gets an empty auto_us for all its arms. The
 * profiler's event mask is process-wide, so a comm's samples can predate
 * its own window's copy of the row: rows are filled after every file is
 * read. Files are read whole or not at all, the safe way
 * (learn/compile.h bot_compile_read_file: no link, FIFO or device): a bad
 * one is named on the log and skipped, and so is a path (a directory)
 * holding no spool file.
 */
#ifndef BOT_LEARN_SPOOLSWEEP_H
#define BOT_LEARN_SPOOLSWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "common/sweep.h"
#include "learn/log.h"

struct bot_spoolsweep_report {
	size_t files;		/* spool files read */
	size_t sound;		/* of those, the ones not rejected */
	size_t bad;		/* files rejected, paths that cannot be listed or hold no
				 * spool file: named on the log */
	uint64_t rows;		/* clean samples, a row each */
	uint64_t labelled;	/* labelled samples: not learned from, no row */
	uint64_t summaries;	/* context summaries: no row */
};

/*
 * Append the rows of the spool files paths name (a directory: its *.spool
 * files, sorted) to sw (bot_sweep_init()ed by the caller), with fabric as
 * their fabric. Returns 0 (see rep->bad for skipped input), -1 out of
 * memory or over BOT_COMPILE_MAX_SAMPLES rows (learn/compile.h; then no row
 * of this conversion is kept), or -2 when fabric is not a fabric name;
 * logged.
 */
int bot_spoolsweep(const char *const *paths, size_t npaths, const char *fabric,
		   struct bot_sweep *sw, struct bot_spoolsweep_report *rep,
		   const struct bot_log *log);

#endif
