/*
 * sweep.c - the forced-arm sweep CSV (doc/formats.md section 7, format v1).
 *
 * Reader: the first line that is neither blank nor a '#' comment is the
 * header; it names the columns, so the required ones may come in any order
 * and unknown ones are skipped. Every data row is validated field by field
 * and any problem is reported as "FILE:LINE: column "value": reason"; on an
 * error nothing of the buffer stays in the table. Fields may be quoted the
 * RFC 4180 way on one line ("a,b", "say ""hi"""); a quoted field never spans
 * lines. The auto_us of one (fabric, collective, nbytes, nranks, nnodes,
 * algo, proto) must be the same on every row, across all the inputs of one
 * table; a hash map over row indices checks it while parsing. Fabric names
 * are found through a hash index kept in the table (bot_sweep.fhash), not
 * by scanning the names: a sweep may name 65,536 fabrics.
 *
 * Writer: always the nine required columns plus the four optional columns a
 * row stores (nchannels, num_pipe_ops, captured, aggregate), absent values
 * as empty fields, numbers with the fewest of 9, 15 or 17 digits that read
 * back to the same double, so write-then-read is exact.
 *
 * Numbers are parsed by hand (integers) or checked against a plain decimal
 * grammar before strtod (floats): no hex, inf, nan, whitespace or signs
 * slip through, and a locale with another decimal point makes the value an
 * error rather than a different number.
 */
#include "common/sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "policies/context.h"

#define SWEEP_LINE_MAX (64 * 1024)		/* bytes, without the line end */
#define SWEEP_READ_MAX ((size_t)1 << 30)	/* bot_sweep_read's file cap */
#define SWEEP_NBYTES_MAX ((uint64_t)1 << 40)
#define SWEEP_NNODES_MAX 65535
#define SWEEP_NCHANNELS_MAX 64
#define SWEEP_NFABRICS_MAX 65536		/* uint16_t index */
#define SWEEP_NUM_MAX 128			/* longest float literal accepted */
#define SWEEP_SHOW_MAX 40			/* value bytes quoted in a message */

enum col {
	C_FABRIC, C_COLL, C_NBYTES, C_NRANKS, C_NNODES, C_ALGO, C_PROTO, C_AUTO, C_MEAS,
	C_NREQ,
	C_NCHAN = C_NREQ, C_PIPE, C_DTYPE, C_VERSION, C_CAPT, C_AGGR,
	C_NKNOWN
};

static const char *const col_name[C_NKNOWN] = {
	"fabric", "collective", "nbytes", "nranks", "nnodes", "algo", "proto", "auto_us",
	"measured_us", "nchannels", "num_pipe_ops", "dtype", "nccl_version", "captured",
	"aggregate",
};

static const char sweep_header[] =
	"fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,"
	"nchannels,num_pipe_ops,captured,aggregate\n";

struct field {
	const char *p;
	size_t n;
};

struct parser {
	struct bot_sweep *sw;
	const char *name;
	char *err;
	size_t errlen;
	uint32_t line;
	size_t nrows0;		/* rows before this buffer: kept on error */
	int pos[C_NKNOWN];	/* header position of each known column, -1 none */
	size_t ncols;		/* fields per line, from the header */
	struct field *f;	/* ncols fields of the current line */
	char *scratch;		/* unescaped quoted fields of the current line */
	/* auto_us consistency: open addressing, row index + 1, 0 = empty */
	uint32_t *ht;
	size_t htcap, htused;
	int last_fabric;	/* cache for the fabric column, -1 none */
};

/* ------------------------------------------------------------------ */
/* table */

void bot_sweep_init(struct bot_sweep *sw)
{
	memset(sw, 0, sizeof(*sw));
}

void bot_sweep_free(struct bot_sweep *sw)
{
	free(sw->rows);
	free(sw->fabrics);
	free(sw->fhash);
	bot_sweep_init(sw);
}

/* 0 = valid fabric name, 1 = valid but for upper case, -1 invalid, -2
 * longer than BOT_SWEEP_FABRIC_MAX. */
static int fabric_check(const char *s, size_t n)
{
	bool upper = false;

	if (n > BOT_SWEEP_FABRIC_MAX)
		return -2;
	if (n < 1)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			continue;
		if (c >= 'A' && c <= 'Z') {
			upper = true;
			continue;
		}
		if (i > 0 && (c == '.' || c == '_' || c == '-'))
			continue;
		return -1;
	}
	return upper ? 1 : 0;
}

static uint64_t fabric_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return bot_mix64(h);
}

static void fhash_put(struct bot_sweep *sw, size_t idx)
{
	const char *name = sw->fabrics[idx];
	size_t j = fabric_hash(name, strlen(name)) & (sw->fhcap - 1);

	while (sw->fhash[j])
		j = (j + 1) & (sw->fhcap - 1);
	sw->fhash[j] = (uint32_t)(idx + 1);
}

/* Make the index hold fabrics[0, nfabrics) with room for one more: rebuilt
 * after a failed parse dropped names (nfhash > nfabrics) or when half full,
 * else the names added since are put in. -1 on allocation failure. */
static int fhash_sync(struct bot_sweep *sw)
{
	if (sw->nfhash > sw->nfabrics || (sw->nfabrics + 1) * 2 > sw->fhcap) {
		size_t cap = sw->fhcap ? sw->fhcap : 64;
		uint32_t *t;

		while ((sw->nfabrics + 1) * 2 > cap)
			cap *= 2;
		t = calloc(cap, sizeof(*t));
		if (!t)
			return -1;
		free(sw->fhash);
		sw->fhash = t;
		sw->fhcap = cap;
		sw->nfhash = 0;
	}
	for (; sw->nfhash < sw->nfabrics; sw->nfhash++)
		fhash_put(sw, sw->nfhash);
	return 0;
}

static int fabric_find_add(struct bot_sweep *sw, const char *s, size_t n)
{
	size_t j;

	if (fhash_sync(sw) < 0)
		return -1;
	j = fabric_hash(s, n) & (sw->fhcap - 1);
	for (; sw->fhash[j]; j = (j + 1) & (sw->fhcap - 1)) {
		const char *c = sw->fabrics[sw->fhash[j] - 1];

		if (strncmp(c, s, n) == 0 && c[n] == '\0')
			return (int)sw->fhash[j] - 1;
	}
	if (sw->nfabrics >= SWEEP_NFABRICS_MAX)
		return -1;
	if (sw->nfabrics == sw->fcap) {
		size_t cap = sw->fcap ? sw->fcap * 2 : 8;
		void *p = realloc(sw->fabrics, cap * sizeof(*sw->fabrics));

		if (!p)
			return -1;
		sw->fabrics = p;
		sw->fcap = cap;
	}
	memcpy(sw->fabrics[sw->nfabrics], s, n);
	sw->fabrics[sw->nfabrics][n] = '\0';
	sw->fhash[j] = (uint32_t)(sw->nfabrics + 1);
	sw->nfhash++;
	return (int)sw->nfabrics++;
}

int bot_sweep_fabric(struct bot_sweep *sw, const char *name)
{
	size_t n;

	if (!name)
		return -1;
	n = strnlen(name, BOT_SWEEP_FABRIC_MAX + 1);
	if (fabric_check(name, n) != 0)
		return -1;
	return fabric_find_add(sw, name, n);
}

int bot_sweep_push(struct bot_sweep *sw, const struct bot_sweep_row *row)
{
	if (sw->nrows == sw->cap) {
		size_t cap = sw->cap ? sw->cap * 2 : 1024;
		void *p;

		if (cap > SIZE_MAX / sizeof(*sw->rows))
			return -1;
		p = realloc(sw->rows, cap * sizeof(*sw->rows));
		if (!p)
			return -1;
		sw->rows = p;
		sw->cap = cap;
	}
	sw->rows[sw->nrows++] = *row;
	return 0;
}

/* ------------------------------------------------------------------ */
/* messages */

/* The value as it appears in a message: printable ASCII kept, '"' and '\'
 * and other bytes escaped, cut after SWEEP_SHOW_MAX bytes. */
static void show(char *out, size_t outlen, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;

	for (i = 0; i < n && i < SWEEP_SHOW_MAX && o + 5 < outlen; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			out[o++] = (char)c;
		} else {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (i < n && o + 4 < outlen) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

__attribute__((format(printf, 2, 3)))
static int fail(struct parser *P, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (!P->err || P->errlen == 0)
		return -1;
	if (P->line)
		k = snprintf(P->err, P->errlen, "%s:%" PRIu32 ": ", P->name, P->line);
	else
		k = snprintf(P->err, P->errlen, "%s: ", P->name);
	if (k < 0 || (size_t)k >= P->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(P->err + k, P->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

static const struct field *fld(struct parser *P, int col);

/* "column "value": reason" */
__attribute__((format(printf, 3, 4)))
static int fail_field(struct parser *P, int col, const char *fmt, ...)
{
	char v[SWEEP_SHOW_MAX * 4 + 8], why[BOT_SWEEP_ERR_MAX];
	const struct field *f = fld(P, col);
	va_list ap;

	show(v, sizeof(v), f->p, f->n);
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return fail(P, "%s \"%s\": %s", col_name[col], v, why);
}

/* ------------------------------------------------------------------ */
/* fields and numbers */

/* Split one line (no line end) into fields, keeping the first max of them.
 * Returns the number of fields, or -1 after reporting an error. Quoted fields
 * are unescaped into P->scratch, which holds at least n bytes. */
static long split(struct parser *P, const char *s, size_t n, struct field *f, size_t max)
{
	size_t i = 0, nf = 0, sc = 0;

	for (;;) {
		struct field cur;

		if (i < n && s[i] == '"') {
			size_t start = sc, q = i;

			i++;
			for (;;) {
				if (i >= n)
					return fail(P, "field %zu: unterminated quoted field "
						    "(quoted fields cannot span lines)", nf + 1);
				if (s[i] == '"') {
					if (i + 1 < n && s[i + 1] == '"') {
						P->scratch[sc++] = '"';
						i += 2;
						continue;
					}
					i++;
					break;
				}
				P->scratch[sc++] = s[i++];
			}
			if (i < n && s[i] != ',')
				return fail(P, "field %zu: text after the closing quote "
					    "(the quote opened at byte %zu)", nf + 1, q + 1);
			cur.p = P->scratch + start;
			cur.n = sc - start;
		} else {
			const char *c = memchr(s + i, ',', n - i);
			size_t end = c ? (size_t)(c - s) : n;

			if (memchr(s + i, '"', end - i))
				return fail(P, "field %zu: quote inside an unquoted field "
					    "(quote the whole field and double inner quotes)", nf + 1);
			cur.p = s + i;
			cur.n = end - i;
			i = end;
		}
		if (nf < max)
			f[nf] = cur;
		nf++;
		if (i >= n)
			return (long)nf;
		i++;		/* the comma */
	}
}

/* Unsigned decimal digits only. 0, -1 not a number, -2 above max. */
static int parse_uint(const char *p, size_t n, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	bool big = false;

	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)p[i] - '0';

		if (d > 9)
			return -1;
		if (v > (UINT64_MAX - d) / 10)
			big = true;
		else
			v = v * 10 + d;
	}
	if (big || v > max)
		return -2;
	*out = v;
	return 0;
}

/* [-](digits[.digits*]|.digits)[(e|E)[+-]digits] read by strtod.
 * 0, -1 not a number, -2 out of double's range, -3 too long. */
static int parse_double(const char *p, size_t n, double *out)
{
	char buf[SWEEP_NUM_MAX + 1];
	size_t i = 0, d1 = 0, d2 = 0, de = 0;
	char *end;
	double v;

	if (n > 0 && p[0] == '-')
		i++;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++, d1++;
	if (i < n && p[i] == '.') {
		i++;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++, d2++;
	}
	if (d1 + d2 == 0)
		return -1;
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++, de++;
		if (de == 0)
			return -1;
	}
	if (i != n)
		return -1;
	if (n > SWEEP_NUM_MAX)
		return -3;
	memcpy(buf, p, n);
	buf[n] = '\0';
	errno = 0;
	v = strtod(buf, &end);
	if (end != buf + n)
		return -1;	/* e.g. a locale with another decimal point */
	if (errno == ERANGE || !isfinite(v))
		return -2;
	*out = v;
	return 0;
}

/* Names are short runs of [A-Za-z0-9_-]; anything else never reaches the
 * name tables. */
static bool name_chars(const struct field *f)
{
	if (f->n == 0 || f->n > 32)
		return false;
	for (size_t i = 0; i < f->n; i++) {
		unsigned char c = (unsigned char)f->p[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static bool is_auto(const struct field *f)
{
	return f->n == 4 && strncasecmp(f->p, "auto", 4) == 0;
}

/* ------------------------------------------------------------------ */
/* auto_us consistency map */

static uint64_t row_hash(const struct bot_sweep_row *r)
{
	uint64_t a = (uint64_t)r->fabric | (uint64_t)(uint8_t)r->coll << 16 |
		     (uint64_t)(uint8_t)r->algo << 24 | (uint64_t)(uint8_t)r->proto << 32;

	return bot_mix64(bot_mix64(bot_mix64(a) ^ r->nbytes) ^
			 ((uint64_t)r->nranks << 32 | r->nnodes));
}

static bool row_same_arm(const struct bot_sweep_row *a, const struct bot_sweep_row *b)
{
	return a->fabric == b->fabric && a->coll == b->coll && a->algo == b->algo &&
	       a->proto == b->proto && a->nbytes == b->nbytes && a->nranks == b->nranks &&
	       a->nnodes == b->nnodes;
}

static void fmt_double(char *out, size_t outlen, double v);

static bool same_auto(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static int ht_grow(struct parser *P)
{
	size_t cap = P->htcap ? P->htcap * 2 : 1024;
	uint32_t *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < P->htcap; i++) {
		uint32_t v = P->ht[i];
		size_t j;

		if (!v)
			continue;
		j = row_hash(&P->sw->rows[v - 1]) & (cap - 1);
		while (t[j])
			j = (j + 1) & (cap - 1);
		t[j] = v;
	}
	free(P->ht);
	P->ht = t;
	P->htcap = cap;
	return 0;
}

/* Look row idx up; insert it if its arm is new. Returns the index of the
 * first row of the same arm (idx itself when new), or SIZE_MAX on allocation
 * failure. */
static size_t ht_first(struct parser *P, size_t idx)
{
	const struct bot_sweep_row *r = &P->sw->rows[idx];
	size_t j;

	if ((P->htused + 1) * 2 > P->htcap && ht_grow(P) < 0)
		return SIZE_MAX;
	j = row_hash(r) & (P->htcap - 1);
	while (P->ht[j]) {
		size_t k = P->ht[j] - 1;

		if (row_same_arm(&P->sw->rows[k], r))
			return k;
		j = (j + 1) & (P->htcap - 1);
	}
	P->ht[j] = (uint32_t)(idx + 1);
	P->htused++;
	return idx;
}

/* ------------------------------------------------------------------ */
/* header and rows */

static int header(struct parser *P, const char *s, size_t n)
{
	size_t max = 1;
	long nf;

	for (size_t i = 0; i < n; i++)
		max += s[i] == ',';
	P->f = malloc(max * sizeof(*P->f));
	P->scratch = malloc(SWEEP_LINE_MAX + 1);
	if (!P->f || !P->scratch)
		return fail(P, "out of memory");
	nf = split(P, s, n, P->f, max);
	if (nf < 0)
		return -1;
	P->ncols = (size_t)nf;
	for (int c = 0; c < C_NKNOWN; c++)
		P->pos[c] = -1;
	for (size_t i = 0; i < P->ncols; i++) {
		const struct field *f = &P->f[i];

		for (int c = 0; c < C_NKNOWN; c++) {
			if (strlen(col_name[c]) != f->n || strncasecmp(col_name[c], f->p, f->n))
				continue;
			if (P->pos[c] >= 0)
				return fail(P, "header: duplicate column \"%s\" (fields %d and %zu)",
					    col_name[c], P->pos[c] + 1, i + 1);
			P->pos[c] = (int)i;
		}
	}
	for (int c = 0; c < C_NREQ; c++)
		if (P->pos[c] < 0)
			return fail(P, "header: missing required column \"%s\" (the first line "
				    "that is not blank or a # comment must be the header "
				    "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,"
				    "measured_us)", col_name[c]);
	return 0;
}

static const struct field *fld(struct parser *P, int col)
{
	static const struct field none = { "", 0 };

	return P->pos[col] >= 0 ? &P->f[P->pos[col]] : &none;
}

static int col_uint(struct parser *P, int col, uint64_t lo, uint64_t hi, uint64_t *out)
{
	const struct field *f = fld(P, col);
	int rc = parse_uint(f->p, f->n, hi, out);

	if (rc == 0 && *out >= lo)
		return 0;
	return fail_field(P, col, "%s integer in %" PRIu64 "..%" PRIu64,
			  rc == -1 ? "not an unsigned decimal" : "out of range: expected an",
			  lo, hi);
}

/* Optional small integer: empty or absent -> -1. */
static int col_opt(struct parser *P, int col, uint64_t lo, uint64_t hi, int64_t *out)
{
	uint64_t v;

	if (fld(P, col)->n == 0) {
		*out = -1;
		return 0;
	}
	if (col_uint(P, col, lo, hi, &v) < 0)
		return -1;
	*out = (int64_t)v;
	return 0;
}

static int col_name_id(struct parser *P, int col, int allow_auto, int (*parse)(const char *, size_t),
		       const char *expect)
{
	const struct field *f = fld(P, col);
	int id;

	if (allow_auto && is_auto(f))
		return -1;
	id = name_chars(f) ? parse(f->p, f->n) : -1;
	if (id < 0)
		return fail_field(P, col, "unknown %s (expected %s)", col_name[col], expect) - 1;
	return id;
}

static int row_fabric(struct parser *P, struct bot_sweep_row *r)
{
	struct bot_sweep *sw = P->sw;
	const struct field *f = fld(P, C_FABRIC);
	int rc, idx;

	if (P->last_fabric >= 0) {
		const char *c = sw->fabrics[P->last_fabric];

		if (f->n <= BOT_SWEEP_FABRIC_MAX && memcmp(c, f->p, f->n) == 0 && c[f->n] == '\0') {
			r->fabric = (uint16_t)P->last_fabric;
			return 0;
		}
	}
	rc = fabric_check(f->p, f->n);
	if (rc == 1)
		return fail_field(P, C_FABRIC, "fabric names are lower case "
				  "([a-z0-9][a-z0-9._-]{0,63})");
	if (rc == -2)
		return fail_field(P, C_FABRIC, "longer than %d characters (%zu): expected "
				  "[a-z0-9][a-z0-9._-]{0,63}", BOT_SWEEP_FABRIC_MAX, f->n);
	if (rc < 0 && f->n == 0)
		return fail_field(P, C_FABRIC, "empty: every row names its fabric "
				  "([a-z0-9][a-z0-9._-]{0,63})");
	if (rc < 0)
		return fail_field(P, C_FABRIC, "not a fabric name: expected "
				  "[a-z0-9][a-z0-9._-]{0,63}");
	idx = fabric_find_add(sw, f->p, f->n);
	if (idx < 0)
		return fail(P, "too many fabrics (at most %d) or out of memory",
			    SWEEP_NFABRICS_MAX);
	P->last_fabric = idx;
	r->fabric = (uint16_t)idx;
	return 0;
}

/* The input an earlier row was read from, when the caller said (bot_sweep
 * src_name), else NULL. */
static const char *src_name(const struct bot_sweep *sw, size_t row)
{
	for (size_t i = 0; sw->src_name && sw->src_end && i < sw->nsrc; i++)
		if (row < sw->src_end[i])
			return sw->src_name[i];
	return NULL;
}

static int row(struct parser *P, const char *s, size_t n)
{
	static const char colls[] = "broadcast, reduce, allgather, reducescatter or allreduce";
	static const char algos[] = "auto, tree, ring, collnet_direct, collnet_chain, nvls, "
				    "nvls_tree or pat";
	static const char protos[] = "auto, ll, ll128 or simple";
	struct bot_sweep_row r;
	uint64_t v;
	int64_t o;
	long nf;
	int id, rc;
	size_t first;

	nf = split(P, s, n, P->f, P->ncols);
	if (nf < 0)
		return -1;
	if ((size_t)nf != P->ncols)
		return fail(P, "%ld field%s, the header has %zu", nf, nf == 1 ? "" : "s", P->ncols);

	/* a header again: files joined with cat (it said 'collective
	 * "collective": unknown collective') */
	if (fld(P, C_FABRIC)->n == 6 && !strncasecmp(fld(P, C_FABRIC)->p, "fabric", 6) &&
	    fld(P, C_COLL)->n == 10 && !strncasecmp(fld(P, C_COLL)->p, "collective", 10))
		return fail(P, "a second header (files joined into one? the header is the first "
			    "line that is not blank or a # comment, once per file)");

	memset(&r, 0, sizeof(r));
	r.line = P->line;
	if (row_fabric(P, &r) < 0)
		return -1;
	if ((id = col_name_id(P, C_COLL, 0, bot_coll_parse_n, colls)) < 0)
		return -1;
	r.coll = (int8_t)id;
	if (col_uint(P, C_NBYTES, 1, SWEEP_NBYTES_MAX, &r.nbytes) < 0)
		return -1;
	if (col_uint(P, C_NRANKS, 1, UINT32_MAX, &v) < 0)
		return -1;
	r.nranks = (uint32_t)v;
	if (col_uint(P, C_NNODES, 1, SWEEP_NNODES_MAX, &v) < 0)
		return -1;
	r.nnodes = (uint32_t)v;
	if (r.nnodes > r.nranks)
		return fail_field(P, C_NNODES, "more nodes than nranks (%" PRIu32 ")", r.nranks);
	if ((id = col_name_id(P, C_ALGO, 1, bot_algo_parse_n, algos)) < -1)
		return -1;
	r.algo = (int8_t)id;
	if ((id = col_name_id(P, C_PROTO, 1, bot_proto_parse_n, protos)) < -1)
		return -1;
	r.proto = (int8_t)id;

	/* auto_us: empty (unknown) | -1 (unsupported) | finite > 0 */
	if (fld(P, C_AUTO)->n == 0) {
		r.auto_us = NAN;
	} else {
		rc = parse_double(fld(P, C_AUTO)->p, fld(P, C_AUTO)->n, &r.auto_us);
		if (rc == -1)
			return fail_field(P, C_AUTO, "not a decimal number "
					  "(expected empty, -1 or a number > 0)");
		if (rc == -2)
			return fail_field(P, C_AUTO, "out of range");
		if (rc == -3)
			return fail_field(P, C_AUTO, "longer than %d characters", SWEEP_NUM_MAX);
		if (r.auto_us != -1 && !(r.auto_us > 0))
			return fail_field(P, C_AUTO, "auto_us must be > 0, -1 (unsupported) "
					  "or empty (unknown)");
	}
	/* measured_us: finite > 0; empty only for an unsupported arm */
	if (fld(P, C_MEAS)->n == 0) {
		if (r.auto_us != -1)
			return fail_field(P, C_MEAS, "empty, which is only allowed when "
					  "auto_us is -1 (unsupported arm)");
		r.measured_us = NAN;
	} else {
		rc = parse_double(fld(P, C_MEAS)->p, fld(P, C_MEAS)->n, &r.measured_us);
		if (rc == -1)
			return fail_field(P, C_MEAS, "not a decimal number (expected a number > 0)");
		if (rc == -2)
			return fail_field(P, C_MEAS, "out of range");
		if (rc == -3)
			return fail_field(P, C_MEAS, "longer than %d characters", SWEEP_NUM_MAX);
		if (!(r.measured_us > 0))
			return fail_field(P, C_MEAS, "measured_us must be > 0");
	}

	if (col_opt(P, C_NCHAN, 0, SWEEP_NCHANNELS_MAX, &o) < 0)
		return -1;
	r.nchannels = (int8_t)o;
	if (col_opt(P, C_PIPE, 1, INT32_MAX, &o) < 0)
		return -1;
	r.num_pipe_ops = (int32_t)o;
	if (col_opt(P, C_CAPT, 0, 1, &o) < 0)
		return -1;
	r.captured = (int8_t)o;
	if (col_opt(P, C_AGGR, 0, 1, &o) < 0)
		return -1;
	r.aggregate = (int8_t)o;
	/* dtype and nccl_version are free text and not kept */

	if (P->sw->nrows >= UINT32_MAX - 1)
		return fail(P, "too many rows");
	if (bot_sweep_push(P->sw, &r) < 0)
		return fail(P, "out of memory");
	first = ht_first(P, P->sw->nrows - 1);
	if (first == SIZE_MAX)
		return fail(P, "out of memory");
	if (first != P->sw->nrows - 1) {
		const struct bot_sweep_row *a = &P->sw->rows[first];
		char was[40], where[256];

		if (same_auto(a->auto_us, r.auto_us))
			return 0;
		if (isnan(a->auto_us))
			snprintf(was, sizeof(was), "empty");
		else
			/* the digits that read back to it: "%.9g" said "1" for
			 * 1.0000000001, a value the row compared with did not hold */
			fmt_double(was, sizeof(was), a->auto_us);
		if (first >= P->nrows0)
			snprintf(where, sizeof(where), "line %" PRIu32, a->line);
		else if (a->line && src_name(P->sw, first))
			snprintf(where, sizeof(where), "line %" PRIu32 " of %s", a->line,
				 src_name(P->sw, first));
		else if (a->line)
			snprintf(where, sizeof(where), "line %" PRIu32 " of an earlier input",
				 a->line);
		else
			snprintf(where, sizeof(where), "an earlier row");
		return fail_field(P, C_AUTO, "differs from auto_us %s on %s for the same "
				  "fabric, collective, nbytes, nranks, nnodes, algo and proto",
				  was, where);
	}
	return 0;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

static int parse_lines(struct parser *P, const char *buf, size_t len)
{
	size_t pos = 0;
	bool have_header = false;

	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		pos = 3;	/* UTF-8 byte order mark */
	while (pos < len) {
		const char *s = buf + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - s) : len - pos;

		pos += n + (nl != NULL);
		if (P->line == UINT32_MAX)
			return fail(P, "too many lines");
		P->line++;
		if (n > 0 && s[n - 1] == '\r')
			n--;
		/* Until the header: a file whose lines end in CR alone is one
		 * line (a comment, or a header that "lacks measured_us"), and
		 * UTF-16 has a NUL in every other byte of its header (that
		 * "lacks fabric"): said as what they are. */
		if (!have_header && memchr(s, '\r', n))
			return fail(P, "a carriage return inside the line: lines must end in LF "
				    "or CR LF (CR alone, as classic Mac OS tools write, is not read)");
		if (!have_header && n > 0 && s[0] != '#' && memchr(s, '\0', n))
			return fail(P, "a NUL byte: the file is not ASCII or UTF-8 text (UTF-16?)");
		if (n > SWEEP_LINE_MAX)
			return fail(P, "line longer than 64 KiB (%zu bytes)", n);
		if (blank(s, n) || s[0] == '#')
			continue;
		if (!have_header) {
			if (header(P, s, n) < 0)
				return -1;
			have_header = true;
			continue;
		}
		if (row(P, s, n) < 0)
			return -1;
	}
	if (!have_header) {
		P->line = 0;
		return fail(P, "empty file (no header)");
	}
	return 0;
}

int bot_sweep_parse(struct bot_sweep *sw, const char *name, const char *buf, size_t len,
		    char *err, size_t errlen)
{
	struct parser P;
	size_t nfabrics0 = sw->nfabrics;
	int rc = 0;

	memset(&P, 0, sizeof(P));
	P.sw = sw;
	P.name = name ? name : "<sweep>";
	P.err = err;
	P.errlen = errlen;
	P.nrows0 = sw->nrows;
	P.last_fabric = -1;
	if (err && errlen)
		err[0] = '\0';
	if (sw->nrows >= UINT32_MAX - 1) {
		rc = fail(&P, "too many rows");
		goto out;
	}
	/* earlier rows take part in the auto_us check (the first of an arm wins) */
	for (size_t i = 0; i < sw->nrows; i++) {
		if (ht_first(&P, i) == SIZE_MAX) {
			rc = fail(&P, "out of memory");
			goto out;
		}
	}
	rc = parse_lines(&P, buf ? buf : "", buf ? len : 0);
out:
	if (rc < 0) {
		sw->nrows = P.nrows0;
		sw->nfabrics = nfabrics0;
	}
	free(P.ht);
	free(P.f);
	free(P.scratch);
	return rc;
}

int bot_sweep_read(struct bot_sweep *sw, const char *path, char *err, size_t errlen)
{
	bool is_stdin = path && strcmp(path, "-") == 0;
	const char *name = is_stdin ? "<stdin>" : path;
	struct stat st;
	size_t len = 0, cap = 64 * 1024;
	char *buf = NULL;
	int rc = -1;
	FILE *f;

	if (!path) {
		if (err && errlen)
			snprintf(err, errlen, "(null): no file name");
		return -1;
	}
	f = is_stdin ? stdin : fopen(path, "rb");
	if (!f) {
		if (err && errlen)
			/* the empty path as '' (readall.h bot_path_shown: this
			 * file links alone in the fuzz targets) */
			snprintf(err, errlen, "%s: cannot open: %s", *name ? name : "''",
				 strerror(errno));
		return -1;
	}
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
		if ((uint64_t)st.st_size > SWEEP_READ_MAX) {
			if (err && errlen)
				snprintf(err, errlen, "%s: larger than 1 GiB, the sweep reader's "
					 "limit", name);
			goto out;
		}
		cap = (size_t)st.st_size + 1;
	}
	for (;;) {
		size_t got;

		if (len == cap || !buf) {
			size_t ncap = buf ? cap * 2 : cap;
			char *p;

			if (ncap > SWEEP_READ_MAX + 1)
				ncap = SWEEP_READ_MAX + 1;
			p = realloc(buf, ncap);
			if (!p) {
				if (err && errlen)
					snprintf(err, errlen, "%s: out of memory", name);
				goto out;
			}
			buf = p;
			cap = ncap;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (len > SWEEP_READ_MAX) {
			if (err && errlen)
				snprintf(err, errlen, "%s: larger than 1 GiB, the sweep reader's "
					 "limit", name);
			goto out;
		}
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		if (err && errlen)
			snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
		goto out;
	}
	rc = bot_sweep_parse(sw, name, buf, len, err, errlen);
out:
	free(buf);
	if (!is_stdin)
		fclose(f);
	return rc;
}

/* ------------------------------------------------------------------ */
/* writer */

/* Fewest of 9, 15, 17 significant digits that read back exactly. */
static void fmt_double(char *out, size_t outlen, double v)
{
	static const int prec[] = { 9, 15, 17 };

	for (size_t i = 0; i < sizeof(prec) / sizeof(prec[0]); i++) {
		snprintf(out, outlen, "%.*g", prec[i], v);
		if (strtod(out, NULL) == v)
			return;
	}
}

static void fmt_us(char *out, size_t outlen, double v)
{
	if (isnan(v))
		out[0] = '\0';
	else if (v == -1)
		snprintf(out, outlen, "-1");
	else
		fmt_double(out, outlen, v);
}

static void fmt_opt(char *out, size_t outlen, long v)
{
	if (v < 0)
		out[0] = '\0';
	else
		snprintf(out, outlen, "%ld", v);
}

int bot_sweep_write_header(FILE *f)
{
	return fputs(sweep_header, f) < 0 ? -1 : 0;
}

int bot_sweep_write_row(FILE *f, const struct bot_sweep *sw, const struct bot_sweep_row *r)
{
	const char *coll = bot_coll_name(r->coll);
	const char *algo = r->algo == -1 ? "auto" : bot_algo_name(r->algo);
	const char *proto = r->proto == -1 ? "auto" : bot_proto_name(r->proto);
	char au[40], mu[40], nch[16], npo[16], cap[16], agg[16];

	if (r->fabric >= sw->nfabrics || !coll || !algo || !proto)
		return -1;
	fmt_us(au, sizeof(au), r->auto_us);
	fmt_us(mu, sizeof(mu), r->measured_us);
	fmt_opt(nch, sizeof(nch), r->nchannels);
	fmt_opt(npo, sizeof(npo), r->num_pipe_ops);
	fmt_opt(cap, sizeof(cap), r->captured);
	fmt_opt(agg, sizeof(agg), r->aggregate);
	if (fprintf(f, "%s,%s,%" PRIu64 ",%" PRIu32 ",%" PRIu32 ",%s,%s,%s,%s,%s,%s,%s,%s\n",
		    sw->fabrics[r->fabric], coll, r->nbytes, r->nranks, r->nnodes, algo, proto,
		    au, mu, nch, npo, cap, agg) < 0)
		return -1;
	return 0;
}
