/*
 * cmd_report.c - `nccl-bot report`: a job's report from its parts
 * (learn/report.h; doc/formats.md section 17; nccl-bot(1), REPORT).
 *
 *   nccl-bot report [--json] [--svg FILE] [--plugstack FILE] [--state DIR] JOBID|DIR
 *
 * DIR: every part in it, per step and per job. JOBID: its parts, from the
 * first of these directories that holds one: ./nccl-bot-JOBID,
 * $NCCL_BOT_REPORT_DIR, and report_dir= of spank_nccl_bot.so in
 * plugstack.conf and plugstack.conf.d/ *.conf beside it (--plugstack, else
 * the one beside $SLURM_CONF, else /etc/slurm/plugstack.conf), %j and %u
 * expanded for the job and the invoking user.
 *
 * Per step (the parts of its nodes merged) and per job (its steps merged):
 * per context the arms used with their measured latencies, AUTO's arm, our
 * choice, the best known arm, the estimated loss of both, time saved and
 * lost; then the totals. An arm a step did not measure (AUTO's, once
 * learning moved a context off it) takes its latency from the fabric's
 * learned state when it has it (--state DIR, $NCCL_BOT_STATE, else
 * state_dir= of plugstack.conf; learn/store.h), else from NCCL's cost
 * model; the source is named (formats.md 17). --svg FILE: the steps read merged, drawn
 * (learn/reportsvg.h) into FILE besides the text or JSON. --json: "steps",
 * "jobs" (every job's totals: a DIR may hold several) and "job" (the
 * last job's). Exit status: 0
 * parts were read (and FILE written), 1 none (or the directory cannot be
 * read, or nothing was measured to draw, or FILE cannot be written), 2
 * usage.
 */
#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "common/dirscan.h"
#include "common/readall.h"
#include "learn/report.h"
#include "learn/reportsvg.h"
#include "learn/store.h"
#include "policies/context.h"

#define PLUGSTACK_MAX (1u << 20)

static void report_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot report [--json] [--svg FILE] [--plugstack FILE] [--state DIR]\n"
		"                       JOBID|DIR\n"
		"\n"
		"  The job's report: its steps' parts (one per node, written at each step's end\n"
		"  as the job's user) merged per step and per job. Per context: the arms used,\n"
		"  their measured latencies, AUTO's arm and ours, the best known arm, the\n"
		"  estimated loss of each, time saved and lost against AUTO; then the totals.\n"
		"  JOBID is looked for in ./nccl-bot-JOBID, $NCCL_BOT_REPORT_DIR, and\n"
		"  plugstack.conf's report_dir= (%%j, %%u expanded); DIR is read as it is.\n"
		"\n"
		"  --json            one JSON object instead of text\n"
		"  --svg FILE        also draw the report into FILE (SVG): per collective and\n"
		"                    scale, AUTO's and our estimated loss by message size, the\n"
		"                    arms used, time saved and lost (exit 1 when nothing was\n"
		"                    measured: no picture)\n"
		"  --plugstack FILE  the plugstack.conf to read report_dir= and state_dir= from\n"
		"                    (default the one beside $SLURM_CONF, else\n"
		"                    /etc/slurm/plugstack.conf)\n"
		"  --state DIR       the fabrics' learned state (default $NCCL_BOT_STATE, else\n"
		"                    plugstack.conf's state_dir=): an arm a step did not measure\n"
		"                    (AUTO's, once learning moved off it) takes the latency the\n"
		"                    fabric measured before NCCL's cost model's estimate\n");
}

static int job_like(const char *s)
{
	if (!*s || strlen(s) >= BOT_REPORT_TOKEN_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || *s == '_'))
			return 0;
	return 1;
}

static int has_parts(const char *dir, const char *job)
{
	struct stat st;

	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && bot_report_dir_count(dir, job, NULL) > 0;
}

/* KEY=VALUE (key "report_dir=", "state_dir=") of the spank_nccl_bot line
 * in one plugstack file: an absolute VALUE. */
static int plugstack_one(int dirfd, const char *name, const char *path, const char *key,
			 char *out, size_t len, char *why, size_t whylen)
{
	const struct bot_open_rule rule = { .what = "plugstack.conf", .max = PLUGSTACK_MAX };
	char err[PATH_MAX + 256];
	uint8_t *buf = NULL;
	size_t n = 0;
	int found = 0;

	if (bot_read_at(dirfd, name, path, &rule, &buf, &n, err, sizeof(err)) < 0) {
		if (why)
			snprintf(why, whylen, "%s", err);
		return 0;
	}
	for (size_t i = 0; i < n && !found;) {
		size_t e = i;
		char line[8192];

		while (e < n && buf[e] != '\n')
			e++;
		if (e - i < sizeof(line)) {
			char *w, *save;

			memcpy(line, buf + i, e - i);
			line[e - i] = 0;
			if (strstr(line, "spank_nccl_bot") && line[strspn(line, " \t")] != '#')
				for (w = strtok_r(line, " \t\r", &save); w;
				     w = strtok_r(NULL, " \t\r", &save))
					if (!strncmp(w, key, strlen(key)) &&
					    w[strlen(key)] == '/') {
						snprintf(out, len, "%s", w + strlen(key));
						found = 1;
					}
		}
		i = e + 1;
	}
	free(buf);
	return found;
}

static int conf_name(const struct dirent *e, void *arg)
{
	size_t n = strlen(e->d_name);

	(void)arg;
	return e->d_name[0] != '.' && n > 5 && !strcmp(e->d_name + n - 5, ".conf");
}

/* key's value in plugstack.conf, else in plugstack.conf.d beside it; why
 * (when not NULL) says why plugstack.conf itself could not be read, else
 * is left empty. */
static int plugstack_value(const char *file, const char *key, char *out, size_t len, char *why,
			   size_t whylen)
{
	char dir[PATH_MAX], sub[PATH_MAX + 32], path[2 * PATH_MAX];
	const char *slash = strrchr(file, '/');
	char **names = NULL;
	size_t n = 0;
	int fd, found;

	if (why)
		why[0] = 0;
	if (!strcmp(file, "/dev/null"))
		return 0;	/* the usual "no plugstack.conf" */
	if (plugstack_one(AT_FDCWD, file, file, key, out, len, why, whylen))
		return 1;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - file) : 1, slash ? file : ".");
	snprintf(sub, sizeof(sub), "%s/plugstack.conf.d", dir);
	fd = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	found = 0;
	if (bot_dir_names(fd, conf_name, NULL, &names, &n) == 0)
		for (size_t i = 0; i < n && !found; i++) {
			snprintf(path, sizeof(path), "%s/%s", sub, names[i]);
			found = plugstack_one(fd, names[i], path, key, out, len, NULL, 0);
		}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	close(fd);
	return found;
}

/* The plugstack.conf a command reads: --plugstack, else the one beside
 * $SLURM_CONF, else /etc/slurm/plugstack.conf. */
static const char *plugstack_file(const char *plugstack, char *conf, size_t len)
{
	const char *sc = getenv("SLURM_CONF"), *slash = sc ? strrchr(sc, '/') : NULL;

	if (plugstack)
		return plugstack;
	if (slash)
		snprintf(conf, len, "%.*s/plugstack.conf", (int)(slash - sc), sc);
	else if (sc && *sc)	/* SLURM_CONF=slurm.conf: beside it, here */
		snprintf(conf, len, "plugstack.conf");
	else
		snprintf(conf, len, "/etc/slurm/plugstack.conf");
	return conf;
}

/* Where JOBID's parts are: 0 with dir filled, or -1 (each place tried said). */
static int find_dir(const char *job, const char *plugstack, char *dir, size_t len)
{
	struct passwd *pw = getpwuid(getuid());
	const char *user = pw ? pw->pw_name : "";
	const char *env = getenv("NCCL_BOT_REPORT_DIR");
	char tmpl[PATH_MAX], err[PATH_MAX + 256], conf[PATH_MAX], why[PATH_MAX + 256];
	char tried[3][PATH_MAX];
	int nt = 0, found;

	snprintf(dir, len, "nccl-bot-%s", job);
	if (has_parts(dir, job))
		return 0;
	snprintf(tried[nt++], PATH_MAX, "%s", dir);
	if (env && *env && bot_report_dir_expand(env, job, user, dir, len, err, sizeof(err)) == 0) {
		if (has_parts(dir, job))
			return 0;
		snprintf(tried[nt++], PATH_MAX, "%s", dir);
	} else if (env && *env) {
		/* said, as srun says it (spank/report.c): the user set it, and
		 * the places tried below would not name it */
		bot_log_esc_inplace(err, sizeof(err));
		fprintf(stderr, "nccl-bot: report: warning: NCCL_BOT_REPORT_DIR: %s; not "
			"looked at\n", err);
	}
	plugstack = plugstack_file(plugstack, conf, sizeof(conf));
	found = plugstack_value(plugstack, "report_dir=", tmpl, sizeof(tmpl), why, sizeof(why));
	err[0] = 0;
	if (found && bot_report_dir_expand(tmpl, job, user, dir, len, err, sizeof(err)) == 0) {
		err[0] = 0;
		if (has_parts(dir, job))
			return 0;
		snprintf(tried[nt++], PATH_MAX, "%s", dir);
	}
	fprintf(stderr, "nccl-bot: report: no parts of job %s in", job);
	for (int i = 0; i < nt; i++)
		fprintf(stderr, "%s %s", i ? "," : "", tried[i]);
	if (found && err[0])	/* report_dir= could not be expanded */
		fprintf(stderr, " (%s's report_dir=: %s)\n", plugstack, err);
	else if (found)		/* its directory was tried */
		fprintf(stderr, "\n");
	else if (why[0])	/* it names the file */
		fprintf(stderr, " (and no report_dir=: %s)\n", why);
	else
		fprintf(stderr, " (nor report_dir= in %s)\n", plugstack);
	return -1;
}

/* ---- the fabrics' learned state ------------------------------------------ */

#define REPORT_MAX_FABRICS 16	/* fabrics one report loads; others: the cost model */

/* The states of the fabrics the parts name, for the rows' lookup
 * (formats.md 17, "Latency of an arm"). */
struct report_states {
	size_t n;
	const char *name[REPORT_MAX_FABRICS];
	const struct bot_kb *kb[REPORT_MAX_FABRICS];
	struct bot_state s[REPORT_MAX_FABRICS];
	struct bot_report_states st;
	struct bot_report_lookup lookup;
};

/* Where the state is: --state, $NCCL_BOT_STATE, plugstack.conf's
 * state_dir=; "" none. */
static void state_dir_of(const char *opt, const char *plugstack, char *out, size_t len)
{
	const char *env = getenv("NCCL_BOT_STATE");
	char conf[PATH_MAX];

	out[0] = 0;
	if (opt)
		snprintf(out, len, "%s", opt);
	else if (env && *env)
		snprintf(out, len, "%s", env);
	else if (!plugstack_value(plugstack_file(plugstack, conf, sizeof(conf)), "state_dir=", out,
				  len, NULL, 0))
		out[0] = 0;
}

/* Load the state of each fabric the parts name (not "prior", not "*"): a
 * fabric without state, or one that cannot be read (said), is left to the
 * cost model. Returns the lookup to attach, or NULL when none loaded. */
static const struct bot_report_lookup *states_load(struct report_states *rs, const char *dir,
						   const struct bot_report_set *set)
{
	char snap[BOT_STATE_NAME_MAX], err[BOT_STATE_ERR_MAX + PATH_MAX];

	memset(rs, 0, sizeof(*rs));
	for (size_t i = 0; dir[0] && i < set->n; i++) {
		const char *f = set->v[i].fabric;
		size_t k = 0;
		int rc;

		if (!strcmp(f, "prior") || !bot_state_fabric_ok(f))
			continue;
		while (k < rs->n && strcmp(rs->name[k], f))
			k++;
		if (k < rs->n)
			continue;
		if (rs->n == REPORT_MAX_FABRICS) {
			fprintf(stderr, "nccl-bot: report: over %d fabrics: %s's arms not measured "
				"come from NCCL's cost model\n", REPORT_MAX_FABRICS, f);
			continue;
		}
		rc = bot_store_load(dir, f, &rs->s[rs->n], snap, err, sizeof(err));
		if (rc < 0) {
			bot_log_esc_inplace(err, sizeof(err));
			fprintf(stderr, "nccl-bot: report: warning: %s; fabric %s's arms not measured "
				"come from NCCL's cost model\n", err, f);
			continue;
		}
		rs->name[rs->n] = f;
		rs->kb[rs->n] = rs->s[rs->n].kb;
		rs->n++;
	}
	if (!rs->n)
		return NULL;
	rs->st.n = rs->n;
	rs->st.fabric = rs->name;
	rs->st.kb = rs->kb;
	rs->lookup.arms = bot_report_state_arms;
	rs->lookup.arg = &rs->st;
	return &rs->lookup;
}

static void states_free(struct report_states *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		bot_state_free(&rs->s[i]);
	rs->n = 0;
}

/* ---- output ------------------------------------------------------------- */

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void us(double s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%.1f us", s * 1e6);
}

static const char *plugin_word(int p)
{
	return p == BOT_REPORT_PLUGIN_KEPT ? "kept" : p == BOT_REPORT_PLUGIN_REPLACED ?
	       "replaced" : "none";
}

/* Where an estimated latency came from (formats.md 17); "" measured. */
static const char *est_word(int src)
{
	return src == BOT_REPORT_SRC_STATE ? " (estimated: the fabric's state)" :
	       src == BOT_REPORT_SRC_COST ? " (estimated: NCCL's cost model)" : "";
}

/* "job" for a job's total, "job J" where the directory holds several. */
static const char *job_label(const struct bot_report_part *m, int several, char *buf,
			     size_t len)
{
	char lead[BOT_REPORT_TOKEN_MAX];

	if (!several)
		return "job";
	/* the leader's id, as --json's "jobs" names it (a component's
	 * steps are the leader's) */
	bot_report_job_leader(m->job, lead, sizeof(lead));
	snprintf(buf, len, "job %s", lead);
	return buf;
}

static void text_totals(const char *what, const struct bot_report_part *m)
{
	struct bot_report_totals t;
	char sv[32], ls[32], nt[32], nc[64] = "", uk[96] = "";

	bot_report_totals(m, &t);
	if (t.calls_unknown)
		snprintf(uk, sizeof(uk), " (%llu whose decided arm is unknown, not counted as "
			 "AUTO's)", (unsigned long long)t.calls_unknown);
	/* contexts measured but never called are not judged: said when any */
	if (t.no_calls)
		snprintf(nc, sizeof(nc), ", %zu without calls (not judged)", t.no_calls);
	bot_report_span(t.saved, sv, sizeof(sv));
	bot_report_span(t.lost, ls, sizeof(ls));
	bot_report_span(t.net >= 0 ? t.net : -t.net, nt, sizeof(nt));
	if (m->shadow)
		printf("  %s total (shadow: NCCL's choice stood, nothing saved or lost): %llu calls "
		       "in %zu contexts, %zu where AUTO lost >10%% against the best known arm%s\n",
		       what, (unsigned long long)t.calls, t.contexts, t.over10, nc);
	else
		printf("  %s total: %llu calls decided of %llu%s, %ssaved %s, lost %s, net %s %s "
		       "vs AUTO; %zu contexts lost >10%%, %zu harmed (worse than AUTO by > 2 "
		       "points), %zu unknown%s\n", what, (unsigned long long)t.calls_decided,
		       (unsigned long long)t.calls, uk, t.estimated ? "est. " : "", sv, ls, nt,
		       t.net >= 0 ? "saved" : "lost", t.over10, t.harmed, t.unknown, nc);
}

static void text_step(const struct bot_report_part *m, const char *nodes, int contexts)
{
	char nccl[128], tuner[64], prof[64];
	struct bot_report_totals t;

	/* expected ranks as the step's summary line counts them (tasks, the
	 * largest communicator, the ranks that loaded): a launcher's ranks
	 * under one task are not "16 of 2" */
	bot_report_totals(m, &t);
	bot_report_versions(m->nccl, m->nnccl, BOT_REPORT_VER_NCCL, nccl, sizeof(nccl));
	bot_report_versions(m->tuner, m->ntuner, BOT_REPORT_VER_ABI, tuner, sizeof(tuner));
	bot_report_versions(m->profiler, m->nprofiler, BOT_REPORT_VER_ABI, prof, sizeof(prof));
	printf("step %s.%s: %zu part(s) (%s), mode %s, policy %s, fabric %s%s%s%s, leaf switches "
	       "%u, user plugin %s", m->job, m->step, m->nparts, nodes,
	       m->shadow ? "shadow" : "on", bot_policy_name(m->policy), m->fabric,
	       m->fabric_why[0] ? " (" : "", m->fabric_why, m->fabric_why[0] ? ")" : "",
	       m->leaf_switches, plugin_word(m->user_plugin));
	if (m->token)
		printf(", token %016llx", (unsigned long long)m->token);
	putchar('\n');
	printf("  tuner loaded on %llu of %llu expected ranks (%llu with a table, %llu measured, "
	       "%llu on the prior); NCCL %s, tuner %s, profiler %s; spool files %llu read, "
	       "%llu rejected\n", (unsigned long long)m->procs_loaded,
	       (unsigned long long)t.ranks_expected,
	       (unsigned long long)m->procs_table, (unsigned long long)m->procs_measured,
	       (unsigned long long)m->procs_prior, nccl, tuner, prof,
	       (unsigned long long)m->files_read, (unsigned long long)m->files_rejected);
	if (m->files_duplicate)
		printf("  (%llu spool file(s) skipped: the same records as a file read before, a "
		       "copy; counted once, as learning counts them)\n",
		       (unsigned long long)m->files_duplicate);
	for (size_t i = 0; contexts && i < m->nctx; i++) {
		const struct bot_report_ctx *c = &m->ctx[i];
		struct bot_report_row r;
		char name[96], ta[32], tx[32], sv[32], ls[32];
		int a = c->auto_arm < BOT_REPORT_NARMS ? c->auto_arm : -1;

		bot_report_row(m, c, &r);
		bot_ctx_format(bot_ctx_key(c->coll, c->bucket, c->nranks, c->nnodes), name,
			       sizeof(name));
		/* the best known arm is the fastest measured, or AUTO's (or
		 * ours) where its estimate is faster: then it says so */
		printf("  %s: %llu calls; AUTO %s, ours %s, best known %s%s\n", name,
		       (unsigned long long)c->calls, a >= 0 ? bot_arm_name(a) : "unknown",
		       r.chosen >= 0 ? bot_arm_name(r.chosen) : "unknown",
		       r.best >= 0 ? bot_arm_name(r.best) : "unknown",
		       r.best >= 0 && r.known ? est_word(r.src[r.best]) : "");
		{
			int nd = 0;

			for (int k = 0; k < BOT_REPORT_NDEC; k++)
				nd += c->dcalls[k] != 0;
			/* communicators that decided different arms (or whose
			 * decided arm is unknown: said even alone) */
			for (int k = 0; k < BOT_REPORT_NDEC; k++)
				if (c->dcalls[k] && (nd > 1 || k == BOT_REPORT_DEC_UNKNOWN))
					printf("    decided %s: %llu calls\n", k < BOT_REPORT_NARMS ?
					       bot_arm_name(k) : k == BOT_REPORT_DEC_AUTO ?
					       "- (AUTO)" : "? (unknown, not counted as AUTO's)",
					       (unsigned long long)c->dcalls[k]);
		}
		for (int k = 0; k < BOT_REPORT_NARMS; k++)
			if (c->arm[k].n)
				printf("    %-16s %llu samples, median %.1f us, min %.1f us\n",
				       bot_arm_name(k), (unsigned long long)c->arm[k].n,
				       c->arm[k].med_ns / 1e3, c->arm[k].min_ns / 1e3);
		if (!r.known) {
			printf("    loss unknown (AUTO's arm or a latency is not known)\n");
			continue;
		}
		us(r.t[a], ta, sizeof(ta));
		us(r.t_ours, tx, sizeof(tx));
		bot_report_span(r.saved, sv, sizeof(sv));
		bot_report_span(r.lost, ls, sizeof(ls));
		/* each latency says where it came from; the losses and the
		 * times are estimated when any of the three is */
		printf("    AUTO %s%s, ours %s%s; loss ours %.1f%%, AUTO %.1f%%%s; saved %s, lost "
		       "%s%s%s\n", ta, est_word(r.src[a]), tx, est_word(r.src_ours),
		       r.loss_ours * 100, r.loss_auto * 100, r.estimated ? " (estimated)" : "", sv,
		       ls, r.over10 ? "; lost >10%" : "", r.harmed ? "; harmed" :
		       r.no_calls ? "; no calls, not judged" : "");
	}
	text_totals("step", m);
}

static void json_vers(const char *key, const struct bot_report_ver *v, size_t n)
{
	printf("\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		printf("%s{\"v\":%u,\"procs\":%llu}", i ? "," : "", v[i].v,
		       (unsigned long long)v[i].n);
	printf("]");
}

static void json_totals(FILE *f, const struct bot_report_part *m)
{
	struct bot_report_totals t;

	bot_report_totals(m, &t);
	fprintf(f, "\"totals\":{\"calls\":%llu,\"calls_decided\":%llu,\"saved\":%.9g,\"lost\":%.9g,"
	       "\"net\":%.9g,\"estimated\":%s,\"contexts\":%zu,\"over10\":%zu,\"harmed\":%zu,"
	       "\"unknown\":%zu,\"no_calls\":%zu,\"calls_unknown\":%llu,\"worst_excess\":%.6g,"
	       "\"ranks_loaded\":%llu,\"ranks_expected\":%llu}", (unsigned long long)t.calls,
	       (unsigned long long)t.calls_decided, t.saved, t.lost, t.net,
	       t.estimated ? "true" : "false", t.contexts, t.over10, t.harmed, t.unknown,
	       t.no_calls, (unsigned long long)t.calls_unknown,
	       t.worst_excess, (unsigned long long)t.ranks_loaded,
	       (unsigned long long)t.ranks_expected);
}

static void json_step(const struct bot_report_part *m, const char *nodes, int counted)
{
	struct bot_report_totals t;

	bot_report_totals(m, &t);
	printf("{\"job\":");
	json_str(m->job);
	printf(",\"step\":");
	json_str(m->step);
	printf(",\"nodes\":");
	json_str(nodes);
	if (m->token)
		printf(",\"token\":\"%016llx\"", (unsigned long long)m->token);

	printf(",\"parts\":%zu,\"mode\":\"%s\",\"policy\":\"%s\",\"fabric\":", m->nparts,
	       m->shadow ? "shadow" : "on", bot_policy_name(m->policy));
	json_str(m->fabric);
	printf(",\"fabric_why\":");
	json_str(m->fabric_why);
	printf(",\"leaf_switches\":%u,\"user_plugin\":\"%s\",\"ranks_loaded\":%llu,"
	       "\"ranks_expected\":%llu,\"files_read\":%llu,\"files_rejected\":%llu,"
	       "\"files_duplicate\":%llu,",
	       m->leaf_switches, plugin_word(m->user_plugin), (unsigned long long)m->procs_loaded,
	       (unsigned long long)t.ranks_expected, (unsigned long long)m->files_read,
	       (unsigned long long)m->files_rejected, (unsigned long long)m->files_duplicate);
	json_vers("nccl", m->nccl, m->nnccl);
	putchar(',');
	json_vers("tuner", m->tuner, m->ntuner);
	putchar(',');
	json_vers("profiler", m->profiler, m->nprofiler);
	printf(",\"contexts\":[");
	for (size_t i = 0; i < m->nctx; i++) {
		const struct bot_report_ctx *c = &m->ctx[i];
		struct bot_report_row r;
		char name[96];
		int a = c->auto_arm < BOT_REPORT_NARMS ? c->auto_arm : -1, first = 1;

		bot_report_row(m, c, &r);
		bot_ctx_format(bot_ctx_key(c->coll, c->bucket, c->nranks, c->nnodes), name,
			       sizeof(name));
		printf("%s{\"context\":\"%s\",\"calls\":%llu,\"auto\":", i ? "," : "", name,
		       (unsigned long long)c->calls);
		if (a >= 0)
			printf("\"%s\"", bot_arm_name(a));
		else
			printf("null");
		printf(",\"chosen\":");
		if (r.chosen >= 0)
			printf("\"%s\"", bot_arm_name(r.chosen));
		else
			printf("null");
		printf(",\"best\":");
		if (r.best >= 0)
			printf("\"%s\"", bot_arm_name(r.best));
		else
			printf("null");
		printf(",\"arms\":[");
		for (int k = 0; k < BOT_REPORT_NARMS; k++)
			if (c->arm[k].n) {
				printf("%s{\"arm\":\"%s\",\"samples\":%llu,\"median_us\":%.3f,"
				       "\"min_us\":%.3f}", first ? "" : ",", bot_arm_name(k),
				       (unsigned long long)c->arm[k].n, c->arm[k].med_ns / 1e3,
				       c->arm[k].min_ns / 1e3);
				first = 0;
			}
		printf("]");
		/* calls per decided arm ('-' left to AUTO, '?' unknown), as the
		 * text's "decided" lines */
		printf(",\"decided\":{");
		first = 1;
		for (int k = 0; k < BOT_REPORT_NDEC; k++)
			if (c->dcalls[k]) {
				printf("%s\"%s\":%llu", first ? "" : ",", k < BOT_REPORT_NARMS ?
				       bot_arm_name(k) : k == BOT_REPORT_DEC_AUTO ? "-" : "?",
				       (unsigned long long)c->dcalls[k]);
				first = 0;
			}
		printf("}");
		if (r.known)
			printf(",\"no_calls\":%s", r.no_calls ? "true" : "false");
		if (r.known)
			printf(",\"t_auto_us\":%.3f,\"t_ours_us\":%.3f,\"estimated\":%s,"
			       "\"t_auto_source\":\"%s\",\"t_ours_source\":\"%s\","
			       "\"best_source\":\"%s\",\"loss_ours\":%.6g,\"loss_auto\":%.6g,"
			       "\"saved\":%.9g,\"lost\":%.9g,\"over10\":%s,\"harmed\":%s}",
			       r.t[a] * 1e6, r.t_ours * 1e6, r.estimated ? "true" : "false",
			       bot_report_src_name(r.src[a]), bot_report_src_name(r.src_ours),
			       bot_report_src_name(r.src[r.best]), r.loss_ours, r.loss_auto,
			       r.saved, r.lost, r.over10 ? "true" : "false",
			       r.harmed ? "true" : "false");
		else
			printf(",\"known\":false}");
	}
	printf("],");
	json_totals(stdout, m);
	/* false: an earlier run's parts, not in the job's totals */
	printf(",\"in_job_total\":%s}", counted ? "true" : "false");
}

/* One job's entry of --json's "jobs": its leader's id and totals. */
static void json_job(FILE *f, const struct bot_report_part *jobm, int first)
{
	char lead[BOT_REPORT_TOKEN_MAX];

	if (!f)
		return;
	bot_report_job_leader(jobm->job, lead, sizeof(lead));
	fprintf(f, "%s{\"job\":\"", first ? "" : ",");
	for (const char *s = lead; *s; s++)	/* a token: [A-Za-z0-9._-] */
		fputc(*s, f);
	fprintf(f, "\",");
	json_totals(f, jobm);
	fprintf(f, "}");
}

/* ---- the command --------------------------------------------------------- */

/* One step: the same job (a heterogeneous job's components are its
 * leader's), step and token (formats.md 17). */
static int same_job(const struct bot_report_part *a, const struct bot_report_part *b)
{
	char la[BOT_REPORT_TOKEN_MAX], lb[BOT_REPORT_TOKEN_MAX];

	bot_report_job_leader(a->job, la, sizeof(la));
	bot_report_job_leader(b->job, lb, sizeof(lb));
	return !strcmp(la, lb);
}

static int same_step(const struct bot_report_part *a, const struct bot_report_part *b)
{
	return same_job(a, b) && !strcmp(a->step, b->step) && a->token == b->token;
}

/* The restart count of the latest run among the parts of set->v[i]'s step
 * (sorted: a step's parts are together, whatever their tokens); *ordered 1
 * when their restart counts differ (so that the latest is known). */
static uint32_t step_latest(const struct bot_report_set *set, size_t i, int *ordered)
{
	const struct bot_report_part *p = &set->v[i];
	uint32_t r = 0;
	size_t k = i, first;

	while (k > 0 && same_job(&set->v[k - 1], p) && !strcmp(set->v[k - 1].step, p->step))
		k--;
	*ordered = 0;
	for (first = k; k < set->n && same_job(&set->v[k], p) && !strcmp(set->v[k].step, p->step);
	     k++) {
		if (set->v[k].restart > r)
			r = set->v[k].restart;
		*ordered |= set->v[k].restart != set->v[first].restart;
	}
	return r;
}

/* What the picture is of: "job J", or "jobs J1, J2, J3, ... (N jobs)". */
static void job_names(const struct bot_report_set *set, char *buf, size_t len)
{
	char lead[BOT_REPORT_TOKEN_MAX], prev[BOT_REPORT_TOKEN_MAX] = "";
	char first[3][BOT_REPORT_TOKEN_MAX];
	size_t n = 0;

	/* the set is sorted by leader job: a new job differs from the one before */
	for (size_t i = 0; i < set->n; i++) {
		bot_report_job_leader(set->v[i].job, lead, sizeof(lead));
		if (i && !strcmp(lead, prev))
			continue;
		if (n < 3)
			snprintf(first[n], sizeof(first[n]), "%s", lead);
		n++;
		snprintf(prev, sizeof(prev), "%s", lead);
	}
	if (n <= 1)
		snprintf(buf, len, "job %s", n ? first[0] : "?");
	else
		snprintf(buf, len, "jobs %s, %s%s%s%s (%zu jobs)", first[0], first[1],
			 n > 2 ? ", " : "", n > 2 ? first[2] : "", n > 3 ? ", ..." : "", n);
}

/* The steps read, merged into all, drawn into svg: 0 or 1. */
static int picture(const char *svg, const char *dir, const struct bot_report_set *set,
		   const struct bot_report_part *all, size_t nsteps)
{
	struct bot_log log = { bot_cmd_log, "report" };
	struct bot_reportsvg_info in;
	char name[3 * BOT_REPORT_TOKEN_MAX + 64], *text;
	size_t len;
	int rc;

	job_names(set, name, sizeof(name));
	if (bot_reportsvg_draw(all, name, dir, nsteps, &text, &len, &in, &log) < 0) {
		fprintf(stderr, "nccl-bot: report: --svg %s: the picture was not written\n", svg);
		return 1;
	}
	rc = bot_cmd_write_file("report", "--svg", svg, "the picture", text, len);
	free(text);
	if (rc == 0)
		fprintf(stderr, "nccl-bot: report: %s: picture of %s: %zu panel(s), %zu context(s), "
			"%zu with a known loss%s\n", svg, name, in.panels, in.contexts, in.known,
			in.dropped ? " (panels of the fewest calls left out)" : "");
	return rc;
}

static int show(const char *dir, const char *job, int json, const char *svg,
		const char *state)
{
	struct bot_log log = { bot_cmd_log, "report" };
	struct report_states rs;
	const struct bot_report_lookup *lookup;
	struct bot_report_set set;
	struct bot_report_part jobm, stepm, all;
	char nodes[1024], *jobs_buf = NULL, label[BOT_REPORT_TOKEN_MAX + 8];
	size_t nsteps = 0, jobs_len = 0;
	int rc = 0, first = 1, njobs = 0, several = 0;
	FILE *jobs = NULL;

	if (bot_report_dir_read(dir, job, NULL, &set, &log) < 0)
		return 1;
	if (!set.n) {
		fprintf(stderr, "nccl-bot: report: no parts in %s%s\n", dir,
			set.refused ? " that could be read" : "");
		bot_report_set_free(&set);
		return 1;
	}
	/* every part's rows see its fabric's state (merges carry it on) */
	lookup = states_load(&rs, state, &set);
	for (size_t i = 0; i < set.n; i++)
		set.v[i].lookup = lookup;
	if (json) {
		/* every job's totals, printed after the steps ("jobs") */
		jobs = open_memstream(&jobs_buf, &jobs_len);
		if (!jobs) {
			fprintf(stderr, "nccl-bot: report: out of memory\n");
			bot_report_set_free(&set);
			states_free(&rs);
			return 1;
		}
		printf("{\"dir\":");
		json_str(dir);
		printf(",\"refused\":%zu,\"steps\":[", set.refused);
	} else {
		printf("nccl-bot report: %s\n", dir);
	}
	bot_report_part_init(&jobm);
	bot_report_part_init(&all);
	/* a directory of several jobs names each job's total (they all
	 * said "job total:"); one job's stays as it was */
	for (size_t i = 1; i < set.n && !several; i++)
		several = !same_job(&set.v[0], &set.v[i]);
	for (size_t i = 0; i < set.n && !rc;) {
		size_t j = i, k = 0;
		int ordered;
		uint32_t run = 0, latest = step_latest(&set, i, &ordered);

		bot_report_part_init(&stepm);
		nodes[0] = 0;
		for (; j < set.n && same_step(&set.v[i], &set.v[j]); j++) {
			if (set.v[j].restart > run)
				run = set.v[j].restart;
			if (bot_report_merge(&stepm, &set.v[j], BOT_REPORT_SAME_STEP) < 0)
				rc = 1;
			k += (size_t)snprintf(nodes + k, k < sizeof(nodes) ? sizeof(nodes) - k : 0,
					      "%s%s", k ? " " : "", set.v[j].node);
			if (k >= sizeof(nodes))
				k = sizeof(nodes) - 1;
		}
		/* parts of one step with another token: an earlier run, another
		 * cluster's job of the same id */
		if (i && same_job(&set.v[i - 1], &set.v[i]) &&
		    !strcmp(set.v[i - 1].step, set.v[i].step))
			fprintf(stderr, "nccl-bot: report: warning: %s: step %s.%s has parts of "
				"different runs (tokens %016llx and %016llx: an earlier run or "
				"another cluster's job of the same id); each is shown on its own, "
				"and the job's total counts %s\n",
				dir, stepm.job, stepm.step, (unsigned long long)set.v[i - 1].token,
				(unsigned long long)set.v[i].token, ordered ?
				"the latest run's (the highest restart count)" :
				"each (runs of one restart count cannot be ordered)");
		/* a new job: the last one's total first */
		if (jobm.nparts && !same_job(&jobm, &stepm)) {
			if (!json)
				text_totals(job_label(&jobm, several, label, sizeof(label)), &jobm);
			json_job(jobs, &jobm, !njobs++);
			bot_report_part_free(&jobm);
			bot_report_part_init(&jobm);
		}
		/* an earlier run's parts (a requeued job's, on nodes the rerun
		 * did not use) are shown but not counted again in the job's
		 * total: both runs' calls were added until 2026-12-04 */
		if (run >= latest && (bot_report_merge(&jobm, &stepm, BOT_REPORT_STEPS) < 0 ||
				      (svg && bot_report_merge(&all, &stepm, BOT_REPORT_STEPS) < 0)))
			rc = 1;
		nsteps++;
		if (json) {
			printf("%s", first ? "" : ",");
			json_step(&stepm, nodes, run >= latest);
		} else {
			text_step(&stepm, nodes, 1);
			if (run < latest)
				printf("  (an earlier run of step %s.%s, restart %u of %u: shown, not "
				       "counted in the job's total)\n", stepm.job, stepm.step, run,
				       latest);
		}
		first = 0;
		bot_report_part_free(&stepm);
		i = j;
	}
	if (json) {
		if (jobm.nparts)
			json_job(jobs, &jobm, !njobs++);
		fclose(jobs);
		/* "jobs": each job's totals (a directory may hold several);
		 * "job": the last one's, the only one's for a JOBID */
		printf("],\"jobs\":[%s],\"job\":{", jobs_buf ? jobs_buf : "");
		free(jobs_buf);
		json_totals(stdout, &jobm);
		printf("}}\n");
	} else if (jobm.nparts) {
		text_totals(job_label(&jobm, several, label, sizeof(label)), &jobm);
	}
	if (rc)
		fprintf(stderr, "nccl-bot: report: out of memory or over %u contexts\n",
			BOT_REPORT_MAX_CTX);
	else if (svg)
		rc = picture(svg, dir, &set, &all, nsteps);
	bot_report_part_free(&all);
	bot_report_part_free(&jobm);
	bot_report_set_free(&set);
	states_free(&rs);
	return rc;
}

int bot_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "svg", required_argument, NULL, 'g' },
		{ "plugstack", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *plugstack = NULL, *svg = NULL, *state = NULL;
	char dir[PATH_MAX], sdir[PATH_MAX];
	struct stat st;
	int c, json = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'p':
			/* an empty FILE was read as a missing plugstack.conf:
			 * "(and no report_dir=: : No such file or directory)" */
			if (!*optarg) {
				fprintf(stderr, "nccl-bot: report: --plugstack wants a file name\n");
				return 2;
			}
			plugstack = optarg;
			break;
		case 's':
			if (!*optarg) {
				fprintf(stderr, "nccl-bot: report: --state wants a directory\n");
				return 2;
			}
			state = optarg;
			break;
		case 'g':
			if (!*optarg) {
				fprintf(stderr, "nccl-bot: report: --svg wants a file name\n");
				return 2;
			}
			svg = optarg;
			break;
		case 'h':
			report_usage(stdout);
			return 0;
		default:
			report_usage(stderr);
			return 2;
		}
	}
	if (argc - optind != 1) {
		report_usage(stderr);
		return 2;
	}
	{
		/* srun prints the step (77.0): the report is the job's, every
		 * step in it */
		const char *a = argv[optind], *dot = strchr(a, '.');
		char job[BOT_REPORT_TOKEN_MAX];

		if (dot && dot > a && (size_t)(dot - a) < sizeof(job) && dot[1] &&
		    !strchr(dot + 1, '.') && !strchr(dot + 1, '/') &&
		    !(stat(a, &st) == 0 && S_ISDIR(st.st_mode))) {
			memcpy(job, a, (size_t)(dot - a));
			job[dot - a] = 0;
			if (job_like(job)) {
				fprintf(stderr, "nccl-bot: report: %s is a step id: give the job id, "
					"%s (its report shows every step)\n", a, job);
				return 2;
			}
		}
	}
	{
		/* squeue names a heterogeneous job's component J+K (and its
		 * step J+K.S): every component's parts are in the leader's
		 * directory, the report of J */
		const char *a = argv[optind], *plus = strchr(a, '+');
		char job[BOT_REPORT_TOKEN_MAX];
		size_t k = plus ? strspn(plus + 1, "0123456789") : 0;

		if (plus && plus > a && (size_t)(plus - a) < sizeof(job) && k &&
		    (!plus[1 + k] || (plus[1 + k] == '.' && plus[2 + k] &&
				      !strchr(plus + 2 + k, '/'))) &&
		    !(stat(a, &st) == 0 && S_ISDIR(st.st_mode))) {
			memcpy(job, a, (size_t)(plus - a));
			job[plus - a] = 0;
			if (job_like(job) && !strchr(job, '_')) {
				fprintf(stderr, "nccl-bot: report: %s is a %s of heterogeneous job "
					"%s: give the job id, %s (its report shows every component "
					"and step)\n", a, plus[1 + k] ? "step of a component" :
					"component", job, job);
				return 2;
			}
		}
	}
	{
		/* squeue names an array task A_T: its parts are under the
		 * task's own job id, which the name does not tell */
		const char *a = argv[optind], *us = strchr(a, '_');

		if (us && us > a && us[1] && strspn(a, "0123456789") == (size_t)(us - a) &&
		    strspn(us + 1, "0123456789") == strlen(us + 1) &&
		    !(stat(a, &st) == 0 && S_ISDIR(st.st_mode))) {
			fprintf(stderr, "nccl-bot: report: %s is task %s of array job %.*s: its "
				"report is under the task's own job id, which `squeue -h -j %s -o "
				"%%A` or `sacct -X -n -j %s -o JobIDRaw` prints\n", a, us + 1,
				(int)(us - a), a, a, a);
			return 2;
		}
	}
	state_dir_of(state, plugstack, sdir, sizeof(sdir));
	if (job_like(argv[optind]) && !(stat(argv[optind], &st) == 0 && S_ISDIR(st.st_mode))) {
		if (find_dir(argv[optind], plugstack, dir, sizeof(dir)) < 0)
			return 1;
		return show(dir, argv[optind], json, svg, sdir);
	}
	return show(argv[optind], NULL, json, svg, sdir);
}
