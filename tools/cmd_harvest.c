/*
 * cmd_harvest.c - `nccl-bot harvest`: one step's spool files on this node
 * into one delta in an outbox, outside Slurm (doc/formats.md section 13).
 *
 *   nccl-bot harvest [--outbox DIR] --fabric F [--cluster C] [--job J]
 *                    [--node N] [--restart R] [--step S] [--nodes N]
 *                    [--config FILE] [--report-dir DIR] SPOOL...
 *
 * With --report-dir the reading child also writes this node's report part
 * there (learn/report.h, formats.md section 17), as the invoking user,
 * after the stream; the parent waits for it within the harvest's bound.
 * Without --outbox the site configuration's outbox_dir is used (the file
 * is read only then, or with --config: learn/siteconf.h).
 *
 * The work is learn/harvest.h's bot_harvest_run: the spool files are read
 * in a child (as the invoking user, the files' expected owner), validated
 * again here and written as one delta. The identity is the invoking
 * user's (flag bit3 clear): uid and gid, the options, and defaults from
 * section 13's table. Exit status: 0 a delta was written (rejected files
 * are named on stderr and counted in the line), 1 nothing was written (no
 * valid spool file, a bound, a delta of that name already in the outbox,
 * an error), 2 a usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common/delta.h"
#include "common/state.h"
#include "learn/harvest.h"
#include "learn/report.h"

static void harvest_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot harvest [--outbox DIR] --fabric F [--cluster C] [--job J] [--node N]\n"
		"                        [--restart R] [--step S] [--nodes N] [--config FILE]\n"
		"                        [--report-dir DIR] SPOOL...\n"
		"\n"
		"  Validate one job step's spool files on this node (SPOOL: a directory of\n"
		"  *.spool files, or files) and write them as one delta into the outbox,\n"
		"  DIR/<cluster>.<job>.<restart>.<step>.<node>.nbd, never replacing one there.\n"
		"  Files that are not regular, are links, have several links, belong to\n"
		"  another user, are too large or fail validation are rejected and named.\n"
		"  Exit status 0: a delta was written; 1: nothing was written (no valid spool\n"
		"  file, a delta of that name exists, a bound or an error); 2: usage.\n"
		"\n"
		"  --outbox DIR   where the delta goes (an existing directory; default outbox_dir\n"
		"                 of the site configuration, when it sets one)\n"
		"  --fabric F     fabric name, [a-z0-9][a-z0-9._-]{0,63}\n"
		"  --cluster C    cluster name, [A-Za-z0-9._-]{1,63} (default local)\n"
		"  --job J        job string, [A-Za-z0-9_+-]{1,63} (default j + 15 hex digits\n"
		"                 of the records read: the same files, the same job)\n"
		"  --node N       node name, [A-Za-z0-9._-]{1,63} (default the hostname)\n"
		"  --restart R    the job's restart count (default 0)\n"
		"  --step S       step id 0..4294967280, or batch, extern, interactive (default 0)\n"
		"  --nodes N      the step's nodes, 1..65536 (default 1): records of communicators\n"
		"                 spanning more nodes are refused\n"
		"  --config FILE  the site configuration (default $NCCL_BOT_CONFIG, else\n"
		"                 /etc/nccl-bot/site.yaml when it exists; read only for outbox_dir)\n"
		"  --report-dir DIR  also write this node's report part into DIR (made 0700,\n"
		"                 parents too; a part it cannot write is named, the delta kept;\n"
		"                 <job>.<step>.<node>.part, the job 'local' without --job);\n"
		"                 read it with nccl-bot report DIR\n");
}

/* A number of the settings grammar (common/settings.h: decimal digits, no
 * sign, blank or leading zero) within [lo, hi]: 0, or its error (a
 * BOT_SET_E* code: bot_set_strerror). */
static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;
	int rc = bot_set_range(s, lo, hi, &v);

	if (!rc)
		*out = (uint32_t)v;
	return rc;
}

static int parse_step(const char *s, uint32_t *out)
{
	if (!strcmp(s, "batch"))
		*out = BOT_DELTA_STEP_BATCH;
	else if (!strcmp(s, "extern"))
		*out = BOT_DELTA_STEP_EXTERN;
	else if (!strcmp(s, "interactive"))
		*out = BOT_DELTA_STEP_INTERACTIVE;
	else
		return parse_u32(s, 0, 0xfffffff0u, out);
	return 0;
}

/* Copy a string option into a header field: 0, or -1 too long. */
static int set_str(char dst[BOT_DELTA_STR], const char *s)
{
	if (strlen(s) >= BOT_DELTA_STR)
		return -1;
	strcpy(dst, s);
	return 0;
}

static int bad_opt(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "nccl-bot: harvest: %s '%s': want %s\n", opt, val, want);
	return 2;
}

/* SPOOL arguments as sources: a directory is listed, anything else is one
 * entry of its directory (opened from it, never through a link). */
static int make_sources(char **argv, int argc, struct bot_harvest_src *src, char **copies)
{
	for (int i = 0; i < argc; i++) {
		struct stat st;
		char *slash;

		copies[i] = NULL;
		/* the empty path is no entry of "." but a path that is not
		 * there (named '' by the harvest) */
		if (!*argv[i] || (lstat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))) {
			src[i].dir = argv[i];
			src[i].name = NULL;
			continue;
		}
		if (!(copies[i] = strdup(argv[i])))
			return -1;
		slash = strrchr(copies[i], '/');
		if (!slash) {
			src[i].dir = ".";
			src[i].name = copies[i];
		} else {
			*slash = 0;
			src[i].dir = slash == copies[i] ? "/" : copies[i];
			src[i].name = slash + 1;
		}
	}
	return 0;
}

/* The report part, built in the reading child (req.on_file) and written
 * there once the stream is out (req.child_done). */
struct cli_report {
	struct bot_report_builder *b;
	struct bot_report_part id;	/* identity only */
	const char *dir;
	int oom;
};

static void report_file(void *arg, const struct bot_spool_file *f)
{
	struct cli_report *r = arg;

	bot_report_builder_file(r->b, !f);
	if (f && bot_report_builder_add(r->b, f->recs, (size_t)f->hdr.nrecords) < 0)
		r->oom = 1;
}

static void report_done(void *arg)
{
	struct cli_report *r = arg;
	struct bot_report_part p = r->id;
	char err[BOT_REPORT_ERR_MAX + 4096], path[4096 + 256];

	p.ctx = NULL;
	p.nctx = 0;
	if (r->oom || bot_report_builder_finish(r->b, &p) < 0) {
		fprintf(stderr, "nccl-bot: harvest: no report part written: out of memory\n");
		return;
	}
	if (bot_report_part_write(r->dir, &p, path, sizeof(path), err, sizeof(err)) < 0)
		fprintf(stderr, "nccl-bot: harvest: no report part written: %s (the delta does "
			"not depend on it)\n", err);
	else
		fprintf(stderr, "nccl-bot: harvest: report part %s\n", path);
	bot_report_part_free(&p);
}

static int harvest(struct bot_harvest_req *req, char **argv, int argc)
{
	struct bot_log log = { bot_cmd_log, "harvest" };
	struct bot_harvest_src *src = calloc((size_t)argc, sizeof(*src));
	char **copies = calloc((size_t)argc, sizeof(*copies));
	struct bot_harvest_result res;
	int rc = 1;

	if (!src || !copies || make_sources(argv, argc, src, copies) < 0) {
		fprintf(stderr, "nccl-bot: harvest: out of memory\n");
		goto out;
	}
	req->src = src;
	req->nsrc = (size_t)argc;
	bot_harvest_run(req, &res, &log);
	if (res.outcome == BOT_HARVEST_WRITTEN) {
		fprintf(stderr, "nccl-bot: harvest: wrote %s: %" PRIu64 " records from %zu spool "
			"file(s), %zu rejected%s, identity %016" PRIx64 "\n", res.path, res.records,
			res.files_read, res.files_rejected,
			res.flags & BOT_DELTA_F_DROPPED ? ", records dropped at the cap" : "",
			res.identity);
		rc = 0;
	}
out:
	for (int i = 0; copies && i < argc; i++)
		free(copies[i]);
	free(copies);
	free(src);
	return rc;
}

int bot_cmd_harvest(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "outbox", required_argument, NULL, 'o' },
		{ "fabric", required_argument, NULL, 'f' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "job", required_argument, NULL, 'j' },
		{ "node", required_argument, NULL, 'n' },
		{ "restart", required_argument, NULL, 'r' },
		{ "step", required_argument, NULL, 's' },
		{ "nodes", required_argument, NULL, 'N' },
		{ "config", required_argument, NULL, 'C' },
		{ "report-dir", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bot_harvest_req req;
	struct bot_delta_hdr *id = &req.id;
	char err[BOT_DELTA_ERR_MAX];
	struct bot_siteconf sc;
	const char *config = NULL, *report_dir = NULL;
	struct cli_report rep;
	int c, rc, node_given;

	memset(&req, 0, sizeof(req));
	strcpy(id->cluster, "local");
	id->array_task = id->het_comp = BOT_DELTA_NONE;
	id->step_nodes = 1;
	id->uid = (uint32_t)getuid();
	id->gid = (uint32_t)getgid();
	req.owner = getuid();
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			/* as --report-dir '': it was tried as a directory, "harvest:
			 * : the outbox: No such file or directory", exit 1 */
			if (!optarg[0])
				return bad_opt("--outbox", optarg, "a directory");
			req.outbox = optarg;
			break;
		case 'f':
			/* section 12's names: at most 64 characters, the delta's
			 * whole field (BOT_DELTA_FABRIC_MAX) */
			if (!bot_state_fabric_ok(optarg))
				return bad_opt("--fabric", optarg, "[a-z0-9][a-z0-9._-]{0,63}");
			if (bot_state_fabric_reserved(optarg))
				return bad_opt("--fabric", optarg, "a fabric name " BOT_STATE_RESERVED_WHY);
			snprintf(id->fabric, sizeof(id->fabric), "%s", optarg);
			break;
		case 'c':
			if (set_str(id->cluster, optarg) < 0 || !optarg[0])
				return bad_opt("--cluster", optarg, "[A-Za-z0-9._-]{1,63}");
			break;
		case 'j':
			if (set_str(id->job, optarg) < 0 || !optarg[0])
				return bad_opt("--job", optarg, "[A-Za-z0-9_+-]{1,63}");
			break;
		case 'n':
			if (set_str(id->node, optarg) < 0 || !optarg[0])
				return bad_opt("--node", optarg, "[A-Za-z0-9._-]{1,63}");
			break;
		case 'r':
			if ((rc = parse_u32(optarg, 0, UINT32_MAX, &id->restart)))
				return bot_cmd_bad_value("harvest", "--restart", optarg,
							 BOT_SET_NUMBER, "from 0 to 4294967295", rc,
							 0);
			break;
		case 's':
			if ((rc = parse_step(optarg, &id->step)))
				return bot_cmd_bad_value("harvest", "--step", optarg, BOT_SET_NUMBER,
							 "from 0 to 4294967280, or batch, extern, "
							 "interactive", rc, 0);
			break;
		case 'N':
			/* a report part's bound (section 17), and far past a
			 * Slurm step's nodes */
			if ((rc = parse_u32(optarg, 1, 65536, &id->step_nodes)))
				return bot_cmd_bad_value("harvest", "--nodes", optarg,
							 BOT_SET_NUMBER, "from 1 to 65536", rc, 0);
			break;
		case 'C':
			config = optarg;
			break;
		case 'R':
			if (!optarg[0])
				return bad_opt("--report-dir", optarg, "a directory");
			report_dir = optarg;
			break;
		case 'h':
			harvest_usage(stdout);
			return 0;
		default:
			harvest_usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	bot_siteconf_defaults(&sc);
	if (!req.outbox || config) {
		if ((rc = bot_cmd_siteconf("harvest", config, NULL, 0, &sc)) != 0)
			return rc;
		if (!req.outbox && (sc.set & (1u << BOT_SITECONF_OUTBOX_DIR)) && sc.outbox_dir[0])
			req.outbox = sc.outbox_dir;
		bot_siteconf_free(&sc);	/* only the fabric list is allocated */
	}
	if (!req.outbox || !id->fabric[0] || argc < 1) {
		const char *miss[3];
		int nm = 0;

		if (!req.outbox)
			miss[nm++] = "--outbox (or outbox_dir in the site configuration)";
		if (!id->fabric[0])
			miss[nm++] = "--fabric";
		if (argc < 1)
			miss[nm++] = "the spool paths";
		fprintf(stderr, "nccl-bot: harvest: needs --outbox DIR, --fabric F and the step's "
			"spool directories or files; missing: ");
		for (int i = 0; i < nm; i++)	/* "a", "a and b", "a, b and c" */
			fprintf(stderr, "%s%s", i == 0 ? "" : i == nm - 1 ? " and " : ", ", miss[i]);
		fprintf(stderr, "\n");
		return 2;
	}
	node_given = id->node[0] != 0;
	if (!node_given && (gethostname(id->node, BOT_DELTA_STR) < 0 ||
			    !memchr(id->node, 0, BOT_DELTA_STR))) {
		fprintf(stderr, "nccl-bot: harvest: cannot tell the hostname: pass --node\n");
		return 2;
	}
	/* the identity's rules (the job's is checked once it is known) */
	{
		struct bot_delta_hdr probe = *id;

		if (!probe.job[0])
			strcpy(probe.job, "j");
		if (bot_delta_hdr_check(&probe, err, sizeof(err)) < 0) {
			/* the option it came from (the node: or the hostname) */
			static const char *const field[] = { "cluster", "job", "fabric", "node" };
			const char *opt = NULL;

			for (size_t i = 0; i < sizeof(field) / sizeof(field[0]); i++)
				if (!strncmp(err, field[i], strlen(field[i])) &&
				    err[strlen(field[i])] == ' ')
					opt = field[i];
			if (opt && !strcmp(opt, "node") && !node_given)
				fprintf(stderr, "nccl-bot: harvest: the hostname: %s (pass --node)\n",
					err);
			else if (opt)
				fprintf(stderr, "nccl-bot: harvest: --%s: %s\n", opt, err);
			else
				fprintf(stderr, "nccl-bot: harvest: %s\n", err);
			return 2;
		}
	}
	if (report_dir && (id->step == BOT_DELTA_STEP_EXTERN ||
			   id->step == BOT_DELTA_STEP_INTERACTIVE)) {
		/* they run no NCCL under Slurm (no spool directory), and a part's
		 * step is a number or batch (doc/formats.md section 17) */
		fprintf(stderr, "nccl-bot: harvest: --report-dir: the %s step has no report part "
			"(a part's step is a number or batch)\n",
			id->step == BOT_DELTA_STEP_EXTERN ? "extern" : "interactive");
		return 2;
	}
	if (report_dir) {
		memset(&rep, 0, sizeof(rep));
		bot_report_part_init(&rep.id);
		rep.dir = report_dir;
		/* a heterogeneous component's J+K as the part's job (section 17) */
		bot_report_job_token(rep.id.job, sizeof(rep.id.job), id->job[0] ? id->job : "local");
		if (id->step == BOT_DELTA_STEP_BATCH)
			strcpy(rep.id.step, "batch");
		else
			snprintf(rep.id.step, sizeof(rep.id.step), "%u", (unsigned)id->step);
		bot_report_token(rep.id.node, sizeof(rep.id.node), id->node);
		bot_report_token(rep.id.fabric, sizeof(rep.id.fabric), id->fabric);
		rep.id.restart = id->restart;
		rep.id.step_nodes = id->step_nodes;
		rep.b = bot_report_builder_new();
		if (!rep.b) {
			fprintf(stderr, "nccl-bot: harvest: out of memory\n");
			return 1;
		}
		req.on_file = report_file;
		req.on_file_arg = &rep;
		req.child_done = report_done;
		req.child_arg = &rep;
	}
	rc = harvest(&req, argv, argc);
	if (report_dir)
		bot_report_builder_free(rep.b);
	return rc;
}
