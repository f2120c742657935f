/*
 * cmd_spool.c - `nccl-bot spool`: look at spool files (doc/formats.md
 * section 9) and turn their clean samples into a forced-arm sweep CSV
 * (section 7), the first half of the learning loop.
 *
 *   nccl-bot spool show FILE|DIR...              a human summary per file
 *   nccl-bot spool sweep [--fabric NAME] FILE|DIR...
 *
 * A directory stands for its *.spool files, sorted by name, as everywhere
 * spool files are read (learn/compile.h bot_compile_list).
 *
 * Files are read with the all-or-nothing reader (common/spool.h): a bad
 * file is named with its reason and skipped whole (exit status 1 at the
 * end), never half-used. `sweep` writes one row per clean sample (no label,
 * a duration); labelled samples are counted on stderr. auto_us is the
 * context's cost-table row at the arm that ran: a sweep wants one auto_us
 * per (fabric, context, arm), and all or none of a context's arms with one,
 * so the first cost row seen for a context in any file (samples and
 * summaries carry it) serves every row of that context; a context no record
 * knows the row of gets empty auto_us for all its arms. The profiler's event
 * mask is process-wide, so a comm's samples can predate its own window's
 * copy of the row: that is why rows are filled after every file is read.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "common/spool.h"
#include "common/sweep.h"
#include "learn/compile.h"
#include "policies/context.h"

static void spool_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot spool show FILE|DIR...\n"
		"       nccl-bot spool sweep [--fabric NAME] FILE|DIR...\n"
		"\n"
		"  show     header, record counts, labels and contexts of each spool file\n"
		"  sweep    a forced-arm sweep CSV (one row per clean sample) on stdout\n"
		"  A directory means its *.spool files, sorted by name.\n"
		"  --fabric NAME   the fabric column (default \"unknown\")\n");
}

static const char *label_names[] = { "aggregate", "channels-missing", "out-of-range",
				     "captured", "first-use-of-algo", "no-cost-row" };

static int show_one(const char *path)
{
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];
	uint64_t nsamp = 0, nsum = 0, clean = 0, calls = 0, labels[6] = { 0 };

	if (bot_spool_read_file(path, &f, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: %s (rejected)\n", err);
		return 1;
	}
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f.recs[i];

		if (r->kind == BOT_SPOOL_SUMMARY) {
			nsum++;
			calls += r->calls;
			continue;
		}
		nsamp++;
		clean += bot_spool_clean(r);
		for (int b = 0; b < 6; b++)
			labels[b] += (r->flags >> b) & 1;
	}
	printf("%s: spool v%u, %s, pid %u, host %016llx, table %016llx%s%s\n", path,
	       f.hdr.version, f.hdr.build_id, f.hdr.pid, (unsigned long long)f.hdr.host_hash,
	       (unsigned long long)f.hdr.table_digest,
	       f.hdr.flags & BOT_SPOOL_HF_SAMPLES_DROPPED ? ", samples dropped at the cap" : "",
	       f.hdr.flags & BOT_SPOOL_HF_SUMMARIES_DROPPED ? ", summaries dropped" : "");
	printf("  %llu samples (%llu clean), %llu context summaries covering %llu calls\n",
	       (unsigned long long)nsamp, (unsigned long long)clean, (unsigned long long)nsum,
	       (unsigned long long)calls);
	for (int b = 0; b < 6; b++)
		if (labels[b])
			printf("  label %-18s %llu\n", label_names[b], (unsigned long long)labels[b]);
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f.recs[i];

		if (r->kind != BOT_SPOOL_SUMMARY)
			continue;
		printf("  comm %016llx rank %u/%u nodes %u %s %llu B+: %llu calls (%llu captured), "
		       "decided %s, AUTO %s\n", (unsigned long long)r->comm_id, r->rank, r->nranks,
		       r->nnodes, bot_coll_name(r->coll), (unsigned long long)r->nbytes,
		       (unsigned long long)r->calls, (unsigned long long)r->captured_calls,
		       r->decided < BOT_NARMS ? bot_arm_name(r->decided) :
		       r->flags & BOT_SPOOL_F_NO_COST ? "unknown" : "auto",
		       r->auto_arm < BOT_NARMS ? bot_arm_name(r->auto_arm) : "unknown");
	}
	bot_spool_free(&f);
	return 0;
}

/* A context's cost row: the first one seen in any file wins. */
struct au {
	uint64_t nbytes;
	uint32_t nranks, nnodes;
	uint8_t coll, known;
	float cost[BOT_SPOOL_NCOST];
};

struct sweep_state {
	struct bot_sweep sw;
	int fabric;
	struct au *au;
	size_t nau, cau;
	size_t *row_ctx;	/* per sweep row: index into au */
	size_t nrc, crc;
	uint64_t clean, labelled, summaries;
	int bad;
};

/* The context of a record, its cost row noted when it has one; -1 when out
 * of memory. */
static long ctx_of(struct sweep_state *s, const struct bot_spool_rec *r)
{
	int has = !(r->flags & BOT_SPOOL_F_NO_COST);
	size_t i;

	for (i = 0; i < s->nau; i++) {
		struct au *a = &s->au[i];

		if (a->nbytes == r->nbytes && a->nranks == r->nranks && a->nnodes == r->nnodes &&
		    a->coll == r->coll)
			break;
	}
	if (i == s->nau) {
		if (s->nau == s->cau) {
			size_t nc = s->cau ? s->cau * 2 : 64;
			struct au *na = realloc(s->au, nc * sizeof(*na));

			if (!na)
				return -1;
			s->au = na;
			s->cau = nc;
		}
		memset(&s->au[i], 0, sizeof(s->au[i]));
		s->au[i].nbytes = r->nbytes;
		s->au[i].nranks = r->nranks;
		s->au[i].nnodes = r->nnodes;
		s->au[i].coll = r->coll;
		s->nau++;
	}
	if (has && !s->au[i].known) {
		memcpy(s->au[i].cost, r->cost, sizeof(s->au[i].cost));
		s->au[i].known = 1;
	}
	return (long)i;
}

/* auto_us of every row from its context's cost row, once all files are in. */
static void fill_auto_us(struct sweep_state *s)
{
	for (size_t i = 0; i < s->sw.nrows; i++) {
		struct bot_sweep_row *row = &s->sw.rows[i];
		const struct au *a = &s->au[s->row_ctx[i]];
		float c = a->cost[bot_arm(row->algo, row->proto)];

		row->auto_us = !a->known ? NAN : c > 0 ? c : -1;
	}
}

static void sweep_file(struct sweep_state *s, const char *path)
{
	struct bot_spool_file f;
	char err[BOT_SPOOL_ERR_MAX];

	if (bot_spool_read_file(path, &f, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: %s (rejected, skipped)\n", err);
		s->bad = 1;
		return;
	}
	for (uint64_t i = 0; i < f.hdr.nrecords; i++) {
		const struct bot_spool_rec *r = &f.recs[i];
		struct bot_sweep_row row;

		long ci = ctx_of(s, r);

		if (ci < 0) {
			fprintf(stderr, "nccl-bot: out of memory\n");
			s->bad = 1;
			break;
		}
		if (r->kind == BOT_SPOOL_SUMMARY) {
			s->summaries++;
			continue;
		}
		if (!bot_spool_clean(r)) {
			s->labelled++;
			continue;
		}
		memset(&row, 0, sizeof(row));
		row.fabric = (uint16_t)s->fabric;
		row.coll = (int8_t)r->coll;
		row.algo = (int8_t)bot_arm_algo(r->arm);
		row.proto = (int8_t)bot_arm_proto(r->arm);
		row.nchannels = (int8_t)r->nchannels;
		row.captured = 0;
		row.aggregate = 0;
		row.nbytes = r->nbytes;
		row.nranks = r->nranks;
		row.nnodes = r->nnodes;
		row.num_pipe_ops = -1;
		row.auto_us = NAN;	/* fill_auto_us() */
		row.measured_us = (double)r->duration_ns / 1000.0;
		if (s->nrc == s->crc) {
			size_t nc = s->crc ? s->crc * 2 : 256;
			size_t *nr = realloc(s->row_ctx, nc * sizeof(*nr));

			if (!nr) {
				fprintf(stderr, "nccl-bot: out of memory\n");
				s->bad = 1;
				break;
			}
			s->row_ctx = nr;
			s->crc = nc;
		}
		if (bot_sweep_push(&s->sw, &row) < 0) {
			fprintf(stderr, "nccl-bot: out of memory\n");
			s->bad = 1;
			break;
		}
		s->row_ctx[s->nrc++] = (size_t)ci;
		s->clean++;
	}
	bot_spool_free(&f);
}

/* The spool files one argument names (a directory: its *.spool files,
 * sorted); a path that cannot be listed is named and counts as bad. */
static int list_arg(const char *path, struct bot_compile_paths *list)
{
	char err[512];

	if (bot_compile_list(&path, 1, list, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: spool: %s\n", err);
		return -1;
	}
	return 0;
}

static void sweep_path(struct sweep_state *s, const char *path)
{
	struct bot_compile_paths list;

	if (list_arg(path, &list) < 0) {
		s->bad = 1;
		return;
	}
	for (size_t i = 0; i < list.n; i++)
		sweep_file(s, list.v[i]);
	bot_compile_paths_free(&list);
}

/* Every spool file of an argument, one summary each; a directory without
 * spool files is named (there was nothing to show). */
static int show_path(const char *path)
{
	struct bot_compile_paths list;
	int rc = 0;

	if (list_arg(path, &list) < 0)
		return 1;
	if (!list.n) {
		fprintf(stderr, "nccl-bot: spool show: %s: no *.spool files\n", path);
		rc = 1;
	}
	for (size_t i = 0; i < list.n; i++)
		rc |= show_one(list.v[i]);
	bot_compile_paths_free(&list);
	return rc;
}

static int cmd_sweep(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fabric", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sweep_state s;
	const char *fabric = "unknown";
	int c;

	memset(&s, 0, sizeof(s));
	optind = 1;
	while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) != -1) {
		if (c == 'f') {
			fabric = optarg;
		} else if (c == 'h') {
			spool_usage(stdout);
			return 0;
		} else {
			spool_usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		spool_usage(stderr);
		return 2;
	}
	bot_sweep_init(&s.sw);
	s.fabric = bot_sweep_fabric(&s.sw, fabric);
	if (s.fabric < 0) {
		fprintf(stderr, "nccl-bot: --fabric %s: not a fabric name ([a-z0-9][a-z0-9._-]{0,63})\n",
			fabric);
		bot_sweep_free(&s.sw);
		return 2;
	}
	for (int i = optind; i < argc; i++)
		sweep_path(&s, argv[i]);
	fill_auto_us(&s);
	if (bot_sweep_write_header(stdout) < 0)
		s.bad = 1;
	for (size_t i = 0; i < s.sw.nrows; i++)
		if (bot_sweep_write_row(stdout, &s.sw, &s.sw.rows[i]) < 0)
			s.bad = 1;
	fprintf(stderr, "nccl-bot: spool sweep: %llu rows from clean samples; skipped %llu "
		"labelled samples and %llu context summaries\n", (unsigned long long)s.clean,
		(unsigned long long)s.labelled, (unsigned long long)s.summaries);
	bot_sweep_free(&s.sw);
	free(s.au);
	free(s.row_ctx);
	if (fflush(stdout) != 0)
		s.bad = 1;
	return s.bad ? 1 : 0;
}

int bot_cmd_spool(int argc, char **argv)
{
	int rc = 0;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		spool_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "show")) {
		if (argc < 3) {
			spool_usage(stderr);
			return 2;
		}
		for (int i = 2; i < argc; i++)
			rc |= show_path(argv[i]);
		return rc;
	}
	if (!strcmp(argv[1], "sweep"))
		return cmd_sweep(argc - 1, argv + 1);
	fprintf(stderr, "nccl-bot: spool: unknown action '%s'\n", argv[1]);
	spool_usage(stderr);
	return 2;
}
