/*
 * sweep.h - the forced-arm sweep CSV (doc/formats.md section 7, format v1).
 *
 * Owns reading and writing sweep files: header-driven column order, strict
 * validation with FILE:LINE messages, and the in-memory row table the
 * simulator produces and the replay consumes. Grouping rows into contexts is
 * the replay's job (replay/dataset.h).
 */
#ifndef BOT_SWEEP_H
#define BOT_SWEEP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BOT_SWEEP_FABRIC_MAX 64
#define BOT_SWEEP_ERR_MAX 512

struct bot_sweep_row {
	uint16_t fabric;	/* index into bot_sweep.fabrics */
	int8_t coll;		/* enum bot_coll */
	int8_t algo;		/* enum bot_algo, -1 = auto */
	int8_t proto;		/* enum bot_proto, -1 = auto */
	int8_t nchannels;	/* -1 = absent */
	int8_t captured;	/* -1 absent, 0, 1 */
	int8_t aggregate;	/* -1 absent, 0, 1 */
	uint64_t nbytes;
	uint32_t nranks, nnodes;
	int32_t num_pipe_ops;	/* -1 = absent */
	double auto_us;		/* NAN = unknown (empty); -1 = unsupported */
	double measured_us;	/* NAN = empty (only allowed with auto_us == -1) */
	uint32_t line;		/* source line, 0 when built in memory */
};

struct bot_sweep {
	struct bot_sweep_row *rows;
	size_t nrows, cap;
	char (*fabrics)[BOT_SWEEP_FABRIC_MAX + 1];
	size_t nfabrics, fcap;
	/* Name -> index, owned by sweep.c (open addressing, index + 1, 0 =
	 * empty): it holds fabrics[0, nfhash), caught up or rebuilt when
	 * nfabrics has moved, so a lookup costs the same for 10 names as
	 * for 65,536. */
	uint32_t *fhash;
	size_t fhcap, nfhash;
	/* Optional, set by a caller that reads several inputs into one table
	 * (NULL/0 after bot_sweep_init; never freed here): input i holds the
	 * rows below src_end[i] (and at or above src_end[i - 1]), read from
	 * src_name[i]. A row of an earlier input is then named by its file in
	 * messages ("line 3 of a.csv"), else "line 3 of an earlier input". */
	const char *const *src_name;
	const size_t *src_end;
	size_t nsrc;
};

void bot_sweep_init(struct bot_sweep *sw);
void bot_sweep_free(struct bot_sweep *sw);
/* Index of a fabric name, adding it if new; -1 if the name is invalid or on
 * allocation failure. */
int bot_sweep_fabric(struct bot_sweep *sw, const char *name);
/* Append a row (copied). 0, or -1 on allocation failure. */
int bot_sweep_push(struct bot_sweep *sw, const struct bot_sweep_row *row);

/* Parse a whole buffer (file contents) named `name` and append its rows.
 * Returns 0, or -1 with "name:line: reason" in err. On error no row of this
 * buffer is kept. */
int bot_sweep_parse(struct bot_sweep *sw, const char *name, const char *buf, size_t len,
		    char *err, size_t errlen);
/* Read a file ("-" = stdin) and parse it. An empty file (no header) is an
 * error. */
int bot_sweep_read(struct bot_sweep *sw, const char *path, char *err, size_t errlen);

/* Write the header (with the optional columns this writer emits) and rows. */
int bot_sweep_write_header(FILE *f);
int bot_sweep_write_row(FILE *f, const struct bot_sweep *sw, const struct bot_sweep_row *r);

#endif
