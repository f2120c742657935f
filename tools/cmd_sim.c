/*
 * cmd_sim.c - `nccl-bot sim`: write a simulated forced-arm sweep (sweep CSV
 * v1), list the fabrics, or report the simulator's calibration and how often
 * AUTO is wrong on it.
 *
 * Options are parsed by hand so every error names the option and the value;
 * numbers, seeds and byte counts follow the settings grammar
 * (common/settings.h, doc/formats.md section 11); usage errors exit 2, I/O
 * and allocation failures 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/settings.h"
#include "sim/sim_int.h"
#include "tools/progress.h"

#define MAX_FABRICS 16
#define MAX_NODES 64

static void usage(FILE *o)
{
	fprintf(o,
		"usage: nccl-bot sim [options]\n"
		"  --fabric NAME[,NAME]  fabrics or families (builtin, alt, calibration) to\n"
		"                        simulate (default: builtin, the four scoring fabrics)\n"
		"  --nodes LIST          node counts, e.g. 1,2,4,8 or 4-8 (range = those of the\n"
		"                        default list 1,2,3,4,6,8,12,16,24,32,48,64 inside it);\n"
		"                        each fabric keeps those in its range (--list)\n"
		"  --min-bytes SIZE      smallest message (default 1KiB; a byte count with an\n"
		"                        optional KiB, MiB, GiB or TiB suffix)\n"
		"  --max-bytes SIZE      largest message (default 4GiB); sizes are powers of two\n"
		"  --samples N           rows per (context, arm) (default 16)\n"
		"  --seed S              noise seed, decimal or 0x-hex (default 0)\n"
		"  --coll LIST           collectives (broadcast,reduce,allgather,reducescatter,allreduce)\n"
		"  --output FILE         write the sweep here (default stdout, as for -)\n"
		"  --list                list the fabrics\n"
		"  --calibrate           print the calibration report (reads --data); its fit\n"
		"                        takes about 25 s per 10 MB of distinct contexts (the\n"
		"                        shipped data: under a second), with a progress line\n"
		"                        when stderr is a terminal\n"
		"  --auto-report         print how often AUTO is >10%% wrong per fabric and scale\n"
		"                        (--list, --calibrate and --auto-report print a fixed\n"
		"                        report on stdout: the sweep's options are refused)\n"
		"  --data DIR            external sweep files (default data/external/sweep, in\n"
		"                        the current directory: the data is in the source tree)\n"
		"  --help                this text\n");
}

#define EMPTY_ITEM BOT_CMD_EMPTY_ITEM

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "nccl-bot: sim: %s: invalid value '%s': %s\n", opt, val, why);
	return 2;
}

/* A byte count (common/settings.h) from 1 to 1 TiB. */
static int parse_size(const char *opt, const char *s, uint64_t *v)
{
	int rc = bot_set_bytes(s, v);

	const char *unit = rc == BOT_SET_ESYNTAX ? bot_cmd_bytes_unit(s) : NULL;

	if (!rc && (*v < 1 || *v > UINT64_C(1) << 40))
		rc = BOT_SET_ERANGE;
	/* a count of a unit past TiB is past 1TiB (or below 1, as 0PiB) */
	if (unit && (!strcmp(unit, "PiB") || !strcmp(unit, "EiB") || !strcmp(unit, "ZiB") ||
		     !strcmp(unit, "YiB")))
		rc = BOT_SET_ERANGE;
	return rc ? bot_cmd_bad_value("sim", opt, s, BOT_SET_BYTES, "from 1 to 1TiB", rc, 0) : 0;
}

/* Append v to the node counts unless it is there already (a count named
 * twice, alone or by ranges, is simulated once). 0, or -1 when full. */
static int add_node(unsigned *out, unsigned *n, unsigned v)
{
	for (unsigned i = 0; i < *n; i++)
		if (out[i] == v)
			return 0;
	if (*n >= MAX_NODES)
		return -1;
	out[(*n)++] = v;
	return 0;
}

/* "1,2,4-8" -> distinct node counts in the order first named (ranges
 * select entries of the default list); each number decimal, 1..65535. 0, -1
 * (not counts or ranges), or -2 (well formed, but its ranges hold no count
 * of the default list). */
static int parse_nodes(const char *s, unsigned *out, unsigned *n)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf) || !*s)
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;
		unsigned i;

		if (dash) {
			*dash = 0;
			if (bot_set_range(tok, 1, 65535, &lo) || bot_set_range(dash + 1, lo, 65535, &hi))
				return -1;
			for (i = 0; i < bot_sim_default_nnodes; i++) {
				unsigned v = bot_sim_default_nodes[i];

				if (v >= lo && v <= hi && add_node(out, n, v))
					return -1;
			}
			continue;
		}
		if (bot_set_range(tok, 1, 65535, &lo) || add_node(out, n, (unsigned)lo))
			return -1;
	}
	return *n ? 0 : -2;
}

static int parse_colls(const char *s, unsigned *mask)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf) || !*s)
		return -1;
	strcpy(buf, s);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int c = bot_coll_parse(tok);

		if (c < 0)
			return -1;
		*mask |= 1u << c;
	}
	return *mask ? 0 : -1;
}

static void list_fabrics(FILE *o)
{
	unsigned i;

	for (i = 0; i < bot_sim_nall(); i++) {
		const struct bot_fabric *f = bot_sim_fabric_any(i);
		unsigned lo, hi;

		bot_sim_node_range(f, &lo, &hi);
		fprintf(o, "%-16s %u GPU/node, %u-%u nodes, family %s%s\n  %s\n", bot_sim_fabric_name(f),
			bot_sim_gpus_per_node(f), lo, hi, bot_sim_fabric_family(f),
			f->family == BOT_SIM_FAMILY_CAL ? " (calibration only)" : "",
			bot_sim_fabric_desc(f));
	}
}

static void print_err(const char *what, const struct bot_sim_calerr *e)
{
	printf("%-8s abs |ln pred/meas| median %.3f p90 %.3f (%u rows); "
	       "arm ratio median %.3f p90 %.3f (%u pairs); objective %.4f\n",
	       what, e->abs_med, e->abs_p90, e->nabs, e->ratio_med, e->ratio_p90, e->nratio,
	       e->objective);
}

/* The calibration sweeps in dir. The data ships in the source tree only
 * (data/external/sweep; no package installs it), so a file that is not
 * there gets a hint: where the default points, and --data. */
static int load_cal(const char *dir, int dir_given, struct bot_sweep *sw)
{
	static const char *const files[] = { "aws-g5-a10g.csv", "modal-a100.csv" };
	char paths[2][4096], err[BOT_SWEEP_ERR_MAX];
	const char *names[2] = { paths[0], paths[1] };
	size_t ends[2] = { 0, 0 };
	unsigned i;
	int rc;

	/* an empty DIR is shown as '', as an empty path is everywhere
	 * (tests/cli/test_usage.sh): "/aws-g5-a10g.csv" read the root */
	if (!*dir) {
		fprintf(stderr, "nccl-bot: sim: --calibrate: --data '': %s\n", strerror(ENOENT));
		return -1;
	}
	for (i = 0; i < 2; i++) {
		size_t before = sw->nrows;
		char *path = paths[i];

		snprintf(path, sizeof(paths[i]), "%s/%s", dir, files[i]);
		/* a row of the first file an auto_us differs from is named by it */
		sw->src_name = names;
		sw->src_end = ends;
		sw->nsrc = i;
		rc = bot_sweep_read(sw, path, err, sizeof(err));
		sw->src_name = NULL;
		sw->src_end = NULL;
		sw->nsrc = 0;
		ends[i] = sw->nrows;
		if (rc == 0 && sw->nrows == before) {
			/* as the replay says it (doc/replay.md): a header alone
			 * calibrated nothing and printed errors of 0 */
			fprintf(stderr, "nccl-bot: sim: --calibrate: %s:1: no data rows\n", path);
			return -1;
		}
		if (rc) {
			int missing = access(path, F_OK) != 0;

			fprintf(stderr, "nccl-bot: sim: --calibrate: %s%s\n", err,
				!missing ? "" : dir_given ?
				" (--data DIR names the directory of aws-g5-a10g.csv and modal-a100.csv: "
				"the source tree's data/external/sweep)" :
				" (the default --data data/external/sweep is relative to the current "
				"directory, and the data is not installed: run from nccl-bot's source "
				"tree or give --data SRCDIR/data/external/sweep)");
			return -1;
		}
	}
	return 0;
}

/* A report written to standard output, flushed before the next one: 0,
 * or -1 once a write failed, said here with its errno (the exit check in
 * tools/nccl-bot.c would see only the stream's error flag by the next
 * report, without the reason); nothing more is printed then. */
static int report_flushed(void)
{
	int flushed = fflush(stdout) == 0, e = errno;

	if (flushed && !ferror(stdout))
		return 0;
	fprintf(stderr, "nccl-bot: sim: standard output: %s\n",
		!flushed ? strerror(e) : "a write failed");
	return -1;
}

static int calibrate(const char *dir, int dir_given)
{
	struct bot_sweep sw;
	struct bot_sim_params fit;
	struct bot_sim_calerr e;
	struct bot_progress pr;
	unsigned i, np;
	double sig;

	bot_sweep_init(&sw);
	if (load_cal(dir, dir_given, &sw)) {
		bot_sweep_free(&sw);
		return 1;
	}
	/* rows of other fabrics only (or only unsupported, auto,auto or
	 * partly forced ones) leave nothing to fit: errors of 0 from 0 rows
	 * and the prior as the fit, exit 0, read as a perfect calibration */
	if (bot_sim_calerr(&sw, &bot_sim_prior, &e)) {
		fprintf(stderr, "nccl-bot: sim: --calibrate: %s: no measured forced-arm row of "
			"fabric aws-g5-a10g or modal-a100 (the fabrics the calibration fits)\n", dir);
		bot_sweep_free(&sw);
		return 1;
	}
	sig = bot_sim_repeat_sigma(&sw, &np);
	printf("# nccl-bot sim --calibrate (data: %s)\n", dir);
	printf("repeated-run noise: sigma %.3f of log latency from %u rerun pairs\n", sig, np);
	bot_sim_calerr(&sw, &bot_sim_prior, &e);
	print_err("prior", &e);
	/* the fit is most of the time (25 s of CPU for 10 MB of distinct
	 * contexts, 120k rows): a progress line on a terminal, as the
	 * replay draws */
	bot_progress_start(&pr, "sim: --calibrate: fit trials", 0);
	bot_sim_fit(&sw, &bot_sim_prior, &fit, bot_progress_cb, &pr);
	bot_progress_end(&pr);
	bot_sim_calerr(&sw, &fit, &e);
	print_err("fitted", &e);
	bot_sim_calerr(&sw, &bot_sim_frozen, &e);
	print_err("frozen", &e);
	printf("%-16s %10s %10s %10s\n", "parameter", "prior", "fitted", "frozen");
	for (i = 0; i < BOT_SIM_NPARAMS; i++) {
		struct bot_sim_params a = bot_sim_prior, b = bot_sim_frozen;

		printf("%-16s %10.4g %10.4g %10.4g\n", bot_sim_param_names[i],
		       *bot_sim_param_ref(&a, i), *bot_sim_param_ref(&fit, i),
		       *bot_sim_param_ref(&b, i));
	}
	bot_sweep_free(&sw);
	return 0;
}

static int auto_report(void)
{
	unsigned i;

	printf("# share of contexts where AUTO's arm is >10%% slower than the best arm\n");
	printf("%-16s %12s %12s %12s\n", "fabric", "nodes 4-8", "nodes 16-32", "all nodes");
	for (i = 0; i < bot_sim_nall(); i++) {
		const struct bot_fabric *f = bot_sim_fabric_any(i);
		unsigned n1, n2, n3;

		if (f->family == BOT_SIM_FAMILY_CAL)
			continue;
		double a = bot_sim_auto_wrong(f, 4, 8, 0.1, &n1);
		double b = bot_sim_auto_wrong(f, 16, 32, 0.1, &n2);
		double c = bot_sim_auto_wrong(f, 1, 65535, 0.1, &n3);

		printf("%-16s %5.1f%% /%4u %5.1f%% /%4u %5.1f%% /%4u\n", bot_sim_fabric_name(f),
		       100 * a, n1, 100 * b, n2, 100 * c, n3);
	}
	return 0;
}

static int write_sweep(const char *path, const struct bot_sweep *sw)
{
	struct bot_progress pr;
	FILE *o = stdout;
	size_t i;
	int rc = 0;

	if (path && strcmp(path, "-")) {
		o = fopen(path, "w");
		if (!o) {
			fprintf(stderr, "nccl-bot: sim: --output: cannot open '%s': %s\n", path,
				strerror(errno));
			return 1;
		}
	}
	bot_progress_start(&pr, "sim: rows written", sw->nrows);
	if (o == stdout && isatty(STDOUT_FILENO))
		pr.on = 0;	/* the rows themselves are on the terminal */
	if (bot_sweep_write_header(o))
		rc = 1;
	for (i = 0; !rc && i < sw->nrows; i++) {
		if (bot_sweep_write_row(o, sw, &sw->rows[i]))
			rc = 1;
		if ((i & 1023) == 0 || i + 1 == sw->nrows)
			bot_progress_update(&pr, i + 1);
	}
	bot_progress_end(&pr);
	if (fflush(o))
		rc = 1;
	if (o != stdout && fclose(o))
		rc = 1;
	if (rc)
		fprintf(stderr, "nccl-bot: sim: writing '%s' failed: %s\n",
			path ? path : "stdout", strerror(errno));
	return rc;
}

/* Each fabric to simulate (those chosen, else the built-in ones) keeps at
 * least one count of the node list: a list that selects nothing for one
 * would write no row of it. 0, or -1 with the message printed. */
static int check_nodes(const char *arg, const struct bot_fabric *const *fab, unsigned nfab,
		       const struct bot_sim_opts *o)
{
	unsigned nf = nfab ? nfab : bot_sim_nfabrics();

	for (unsigned i = 0; i < nf; i++) {
		const struct bot_fabric *f = nfab ? fab[i] : bot_sim_fabric(i);
		unsigned j, lo, hi;
		char why[160];

		for (j = 0; j < o->nnodes && !bot_sim_has_nodes(f, o->nodes[j]); j++)
			;
		if (j < o->nnodes)
			continue;
		bot_sim_node_range(f, &lo, &hi);
		snprintf(why, sizeof(why), "selects no node count of fabric %s (simulated at "
			 "%u-%u nodes)", bot_sim_fabric_name(f), lo, hi);
		bad("--nodes", arg, why);
		return -1;
	}
	return 0;
}

/* The options that take a value: any other word is unknown, also when no
 * value follows it (not "missing value"). */
static int sim_takes_value(const char *opt)
{
	static const char *const valued[] = { "--fabric", "--nodes", "--min-bytes", "--max-bytes",
					      "--samples", "--seed", "--coll", "--output",
					      "--data" };

	for (size_t i = 0; i < sizeof(valued) / sizeof(valued[0]); i++)
		if (!strcmp(opt, valued[i]))
			return 1;
	return 0;
}

int bot_cmd_sim(int argc, char **argv)
{
	const struct bot_fabric *fab[MAX_FABRICS];
	unsigned nfab = 0, nodes[MAX_NODES], i;
	struct bot_sim_opts o;
	const char *output = NULL, *data = "data/external/sweep", *nodes_arg = NULL;
	char sweep_opt[64] = "";	/* the first option only a sweep reads */
	int do_list = 0, do_cal = 0, do_rep = 0, data_given = 0, ai, rc = 0;
	struct bot_sweep sw;
	struct bot_progress pr;

	memset(&o, 0, sizeof(o));
	o.samples = 16;
	o.min_bytes = 1024;
	o.max_bytes = UINT64_C(4) << 30;
	for (ai = 1; ai < argc; ai++) {
		char *arg = argv[ai], *val = NULL, *eq;
		char opt[64];

		if (!strcmp(arg, "-h")) {
			usage(stdout);
			return 0;
		}
		if (strncmp(arg, "--", 2)) {
			fprintf(stderr, "nccl-bot: sim: unexpected argument '%s' (see --help)\n", arg);
			return 2;
		}
		snprintf(opt, sizeof(opt), "%s", arg);
		eq = strchr(opt, '=');
		if (eq) {
			*eq = 0;
			val = arg + (eq - opt) + 1;
		}
		if (!strcmp(opt, "--help")) {
			/* as --list=x is (and replay's --help=x): not help */
			if (val)
				return bad(opt, val, "takes no value");
			usage(stdout);
			return 0;
		}
		if (!strcmp(opt, "--list") || !strcmp(opt, "--calibrate") ||
		    !strcmp(opt, "--auto-report")) {
			if (val)
				return bad(opt, val, "takes no value");
			if (opt[2] == 'l')
				do_list = 1;
			else if (opt[2] == 'c')
				do_cal = 1;
			else
				do_rep = 1;
			continue;
		}
		if (!sim_takes_value(opt)) {
			fprintf(stderr, "nccl-bot: sim: unknown option '%s' (see --help)\n", opt);
			return 2;
		}
		if (!val) {
			if (ai + 1 >= argc) {
				fprintf(stderr, "nccl-bot: sim: %s: missing value\n", opt);
				return 2;
			}
			val = argv[++ai];
		}
		if (strcmp(opt, "--data") && !sweep_opt[0])
			snprintf(sweep_opt, sizeof(sweep_opt), "%s", opt);
		if (!strcmp(opt, "--fabric")) {
			const char *why = bot_cmd_fabric_list_problem(val);
			char bn[96];

			if (why)
				return bad(opt, val, why);
			if (bot_sim_select(val, fab, MAX_FABRICS, &nfab, bn, sizeof(bn)))
				return bad(opt, bn, "unknown fabric or family (see --list; families: "
					   "builtin, alt, calibration)");
		} else if (!strcmp(opt, "--nodes")) {
			int pn;

			nodes_arg = val;
			if (bot_cmd_list_has_empty(val))
				return bad(opt, val, EMPTY_ITEM);
			pn = parse_nodes(val, nodes, &o.nnodes);
			if (pn == -2)
				return bad(opt, val, "its ranges hold no count of the default list "
					   "1,2,3,4,6,8,12,16,24,32,48,64 (a count named alone, as 5, is simulated as it is "
					   "where a fabric reaches it)");
			if (pn)
				return bad(opt, val, "expected decimal counts 1..65535 or ranges "
					   "like 4-8");
			o.nodes = nodes;
		} else if (!strcmp(opt, "--min-bytes")) {
			if (parse_size(opt, val, &o.min_bytes))
				return 2;
		} else if (!strcmp(opt, "--max-bytes")) {
			if (parse_size(opt, val, &o.max_bytes))
				return 2;
		} else if (!strcmp(opt, "--samples")) {
			uint64_t v;
			int rc2 = bot_set_range(val, 1, 1000000, &v);

			if (rc2)
				return bot_cmd_bad_value("sim", opt, val, BOT_SET_NUMBER,
							 "from 1 to 1000000", rc2, 0);
			o.samples = (unsigned)v;
		} else if (!strcmp(opt, "--seed")) {
			int rc2 = bot_set_u64(val, 1, &o.seed);

			if (rc2)
				return bot_cmd_bad_value("sim", opt, val, BOT_SET_HEX64, NULL, rc2, 0);
		} else if (!strcmp(opt, "--coll")) {
			if (bot_cmd_list_has_empty(val))
				return bad(opt, val, EMPTY_ITEM);
			if (parse_colls(val, &o.coll_mask))
				return bad(opt, val, "expected collective names separated by commas");
		} else if (!strcmp(opt, "--output")) {
			/* it was tried as a file, "cannot open '': No such file
			 * or directory", exit 1 (until 2026-12-05) */
			if (!*val)
				return bad(opt, val, "want a file name, or - for standard output");
			output = val;
		} else if (!strcmp(opt, "--data")) {
			data = val;
			data_given = 1;
		} else {
			fprintf(stderr, "nccl-bot: sim: unknown option '%s' (see --help)\n", opt);
			return 2;
		}
	}
	if (o.min_bytes > o.max_bytes) {
		fprintf(stderr, "nccl-bot: sim: --min-bytes %llu is above --max-bytes %llu\n",
			(unsigned long long)o.min_bytes, (unsigned long long)o.max_bytes);
		return 2;
	}
	{
		/* sizes are powers of two: a range without one would be an
		 * empty sweep (1 TiB at most: no overflow) */
		uint64_t p2 = 1;

		while (p2 < o.min_bytes)
			p2 <<= 1;
		if (p2 > o.max_bytes) {
			fprintf(stderr, "nccl-bot: sim: --min-bytes %llu to --max-bytes %llu holds "
				"no power of two (the message sizes simulated)\n",
				(unsigned long long)o.min_bytes, (unsigned long long)o.max_bytes);
			return 2;
		}
	}
	/* The reports are fixed: every fabric, node count and collective of
	 * their own, on stdout. An option that shapes a sweep would be
	 * ignored there, and the user would read a report of something else
	 * (or look for an --output file that was never written). */
	if ((do_list || do_cal || do_rep) && sweep_opt[0]) {
		fprintf(stderr, "nccl-bot: sim: %s applies to a sweep, not to %s (which prints "
			"its own fixed report on stdout; see --help)\n", sweep_opt,
			do_list ? "--list" : do_cal ? "--calibrate" : "--auto-report");
		return 2;
	}
	if (data_given && !do_cal) {
		fprintf(stderr, "nccl-bot: sim: --data is read by --calibrate only\n");
		return 2;
	}
	/* Each report asked for is printed, in this order (--list with
	 * another report used to print the list alone), each flushed before
	 * the next so that its lines precede the next one's errors; a
	 * calibration that fails does not hold back the AUTO report, and
	 * the exit status is the worst. */
	if (do_list) {
		list_fabrics(stdout);
		if (report_flushed())
			return 1;
	}
	if (do_cal) {
		rc = calibrate(data, data_given);
		if (report_flushed())
			return rc > 1 ? rc : 1;
	}
	if (do_rep) {
		int r = auto_report();

		if (r > rc)
			rc = r;
	}
	if (do_list || do_cal || do_rep)
		return rc;
	if (o.nodes && check_nodes(nodes_arg, fab, nfab, &o))
		return 2;

	bot_sweep_init(&sw);
	bot_progress_start(&pr, "sim: fabrics simulated", nfab ? nfab : 1);
	bot_progress_update(&pr, 0);
	if (!nfab) {
		o.only = NULL;
		rc = bot_sim_generate(&o, &sw);
		bot_progress_update(&pr, 1);
	}
	for (i = 0; !rc && i < nfab; i++) {
		o.only = fab[i];
		rc = bot_sim_generate(&o, &sw);
		bot_progress_update(&pr, i + 1);
	}
	bot_progress_end(&pr);
	if (rc) {
		fprintf(stderr, "nccl-bot: sim: out of memory generating the sweep\n");
		bot_sweep_free(&sw);
		return 1;
	}
	rc = write_sweep(output, &sw);
	bot_sweep_free(&sw);
	return rc;
}
