/*
 * stepenv.c - the environment for a step (learn/stepenv.h).
 *
 * In order: check the request; settle who wins between the user's plugin
 * variables and nccl-bot (an admin default with a tuner of the user's ends
 * here: nothing to set); check the rank-side library; build the step table
 * from its source (learn/compile.h; a fabric's state through
 * learn/store.h); set the table's header from the request (size threshold,
 * allow-list, measurement, shadow); encode it; list the variables.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/readall.h"
#include "common/settings.h"
#include "common/table.h"
#include "learn/ranklib.h"
#include "learn/stepenv.h"
#include "learn/store.h"
#include "policies/context.h"
#include "policies/policy.h"

void bot_stepenv_req_default(struct bot_stepenv_req *req)
{
	memset(req, 0, sizeof(*req));
	req->source = BOT_STEPENV_PRIOR;
	req->policy = BOT_POLICY_AUTO;
	req->min_bytes_log2 = BOT_SET_MIN_BYTES_LOG2_DEFAULT;
	req->comms = 8;
	req->round = -1;
	req->measure = 1;
	req->who = BOT_STEPENV_EXPLICIT;
}

void bot_stepenv_free(struct bot_stepenv *out)
{
	for (size_t i = 0; i < out->nvars; i++)
		free(out->var[i].value);
	out->nvars = 0;
}

const char *bot_stepenv_get(const struct bot_stepenv *out, const char *name)
{
	for (size_t i = 0; i < out->nvars; i++)
		if (!strcmp(out->var[i].name, name))
			return out->var[i].value;
	return NULL;
}

/* A request the caller could have caught: -2, logged. */
static int bad_req(const struct bot_log *log, const char *what)
{
	bot_log_msg(log, BOT_LOG_ERROR, "%s", what);
	return -2;
}

static int check_req(const struct bot_stepenv_req *r, const struct bot_log *log)
{
	if (!r->lib || !*r->lib)
		return bad_req(log, "no rank-side library named");
	if (r->policy < 0 || r->policy >= BOT_NPOLICY || r->min_bytes_log2 > 63 ||
	    (r->allow >> BOT_NARMS))
		return bad_req(log, "a policy id, size threshold or allow-list out of range");
	switch (r->source) {
	case BOT_STEPENV_PRIOR:
		if (r->nspool || r->state || r->fabric)
			return bad_req(log, "a table from the prior only reads no spool files and "
				       "no state");
		return 0;
	case BOT_STEPENV_SPOOL:
		if (!r->nspool)
			return bad_req(log, "no spool files named");
		if (r->state || r->fabric)
			return bad_req(log, "a table from spool files reads no state");
		break;
	case BOT_STEPENV_STATE:
		if (!r->state || !*r->state)
			return bad_req(log, "no state directory or snapshot named");
		if (r->nspool)
			return bad_req(log, "a table from a fabric's state reads no spool files");
		if (r->fabric && !bot_state_fabric_ok(r->fabric))
			return bad_req(log, "a fabric name is [a-z0-9][a-z0-9._-]{0,63}");
		break;
	default:
		return bad_req(log, "an unknown table source");
	}
	if (r->comms < 1 || r->comms > 65536 || r->round > (int64_t)1 << 62)
		return bad_req(log, "communicators outside 1..65536 or a round over 2^62");
	return 0;
}

/* NCCL_TUNER_PLUGIN=none / NCCL_PROFILER_PLUGIN=none (any case): the user
 * turned that plugin off; NCCL then loads none. Nothing is trimmed: " none"
 * is a name NCCL would dlopen as given, so it is a plugin of the user's. */
static int is_none(const char *value)
{
	return value && !strcasecmp(value, "none");
}

/*
 * Does a plugin variable name our library: the same string, or an absolute
 * path to the same file? A relative name is always the user's: NCCL
 * resolves "bot" to libnccl-tuner-bot.so and a bare file name through its
 * own dlopen search (LD_LIBRARY_PATH, the rank's environment, the
 * container's ld.so cache), which this side cannot know; treating it as
 * ours could hide that ranks load another build.
 */
static int is_ours(const char *value, const char *lib)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (!strcmp(value, lib))
		return 1;
	return value[0] == '/' && realpath(value, a) && realpath(lib, b) && !strcmp(a, b);
}

/* A user's value for a note (one line, whatever it holds). */
static const char *esc(const char *value, char *buf, size_t len)
{
	return bot_log_esc(buf, len, value);
}

static void compile_opts(const struct bot_stepenv_req *r, struct bot_compile_opts *o)
{
	bot_compile_opts_default(o);
	bot_policy_init(&o->policy, bot_policy_name(r->policy));
	o->policy.allow = r->allow;
	o->seed = r->seed;
	o->ncomms = r->comms;
	o->round = r->round;
	o->min_bytes_log2 = r->min_bytes_log2;
}

/* The table from a fabric's state: a state directory or a snapshot file. */
static int from_state(const struct bot_stepenv_req *r, struct bot_stepenv *out,
		      struct bot_table *t, const struct bot_log *log)
{
	struct bot_compile_opts o;
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	struct stat st;
	int rc;

	if (stat(r->state, &st) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s: %s", r->state, strerror(errno));
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		if (!r->fabric) {
			bot_log_msg(log, BOT_LOG_ERROR, "%s is a state directory: say which fabric",
				    r->state);
			return -2;
		}
		rc = bot_store_load(r->state, r->fabric, &s, out->snapshot, err, sizeof(err));
	} else {
		rc = bot_state_read_file(r->state, &s, err, sizeof(err));
		if (rc == 0 && r->fabric && strcmp(r->fabric, s.fabric)) {
			bot_log_msg(log, BOT_LOG_ERROR, "%s holds fabric '%s', not '%s'", r->state,
				    s.fabric, r->fabric);
			bot_state_free(&s);
			return -1;
		}
	}
	if (rc < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "%s", err);
		return -1;
	}
	if (rc == 1)
		bot_log_msg(log, BOT_LOG_INFO, "%s%s%s: no learned state yet; the table holds no "
			    "learned entries (as from the prior only)", r->state,
			    bot_path_sep(r->state), r->fabric);
	compile_opts(r, &o);
	rc = bot_compile_plan(s.kb, &o, r->round >= 0 ? (uint64_t)r->round : s.rounds, t,
			      &out->compile, err, sizeof(err));
	if (rc < 0)
		bot_log_msg(log, BOT_LOG_ERROR, "%s%s%s%s%s: %s", r->state,
			    out->snapshot[0] ? "/" : "", out->snapshot[0] ? s.fabric : "",
			    out->snapshot[0] ? "/" : "", out->snapshot, err);
	memcpy(out->fabric, s.fabric, sizeof(out->fabric));
	out->sources = s.nsources;
	bot_state_free(&s);
	return rc;
}

static int build_table(const struct bot_stepenv_req *r, struct bot_stepenv *out,
		       struct bot_table *t, const struct bot_log *log)
{
	struct bot_compile_opts o;
	char err[512];
	int rc = 0;

	switch (r->source) {
	case BOT_STEPENV_PRIOR:
		bot_table_init(t, r->policy, r->seed);
		break;
	case BOT_STEPENV_SPOOL:
		compile_opts(r, &o);
		rc = bot_compile_spools(r->spool, r->nspool, &o, t, &out->compile, log, err,
					sizeof(err));
		if (rc < 0)
			bot_log_msg(log, BOT_LOG_ERROR, "%s", err);
		else if (out->compile.files == 0)	/* a first job has none yet: fine, but say so */
			bot_log_msg(log, BOT_LOG_WARN, "no spool file (*.spool) in %s%s: the table "
				    "is the prior's", r->spool[0], r->nspool > 1 ? " and the other "
				    "paths named" : "");
		break;
	case BOT_STEPENV_STATE:
		rc = from_state(r, out, t, log);
		break;
	}
	if (rc < 0)
		return rc;
	/* The header says what the request says, whatever the source. */
	t->min_bytes_log2 = (uint8_t)r->min_bytes_log2;
	t->allow = r->allow;
	if (out->measured)
		t->flags |= BOT_TABLE_F_MEASURE;
	else
		t->flags &= (uint8_t)~BOT_TABLE_F_MEASURE;
	if (r->policy == BOT_POLICY_SHADOW)
		t->flags |= BOT_TABLE_F_SHADOW;
	return 0;
}

/* Set name to value (taken over: the caller no longer frees it). */
static int add_var(struct bot_stepenv *out, const char *name, char *value)
{
	if (!value)
		return -1;
	out->var[out->nvars].name = name;
	out->var[out->nvars].value = value;
	out->nvars++;
	return 0;
}

int bot_stepenv_build(const struct bot_stepenv_req *req, struct bot_stepenv *out,
		      const struct bot_log *log)
{
	const char *ut = req->user_tuner && *req->user_tuner ? req->user_tuner : NULL;
	const char *up = req->user_profiler && *req->user_profiler ? req->user_profiler : NULL;
	struct bot_ranklib lib;
	struct bot_table *t = NULL;
	char err[PATH_MAX + 256], *text = NULL, v[PATH_MAX];
	int rc, their_tuner, their_profiler, keep_profiler, tuner_off, profiler_off;
	long n;

	memset(out, 0, sizeof(*out));
	rc = check_req(req, log);
	if (rc < 0)
		return rc;
	tuner_off = is_none(ut);
	profiler_off = is_none(up);
	their_tuner = ut && !tuner_off && !is_ours(ut, req->lib);
	their_profiler = up && !profiler_off && !is_ours(up, req->lib);
	if (req->who == BOT_STEPENV_DEFAULT && (their_tuner || tuner_off)) {
		if (tuner_off)
			snprintf(out->note, sizeof(out->note), "nccl-bot not used: the user turned "
				 "NCCL's tuner plugin off (NCCL_TUNER_PLUGIN=%s)",
				 esc(ut, v, sizeof(v)));
		else
			snprintf(out->note, sizeof(out->note), "nccl-bot not used: the tuner plugin "
				 "is the user's %s", esc(ut, v, sizeof(v)));
		bot_log_msg(log, BOT_LOG_INFO, "keeping the user's NCCL_TUNER_PLUGIN=%s%s%s%s: "
			    "nccl-bot is not used for this step", ut,
			    tuner_off ? " (NCCL's tuner plugin turned off)" : "",
			    up ? " and NCCL_PROFILER_PLUGIN=" : "", up ? up : "");
		return 0;
	}
	if (bot_ranklib_check(req->lib, &lib, err, sizeof(err)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "the rank-side library %s; install nccl-bot's "
			    "rank-side library or name the right one (NCCL would silently go on "
			    "without nccl-bot's tuner)", err);
		return -1;
	}
	/* What NCCL is pointed at: the path as given (links kept), so that a
	 * container binding /opt/nccl-bot/<version> finds it. */
	memcpy(out->lib, lib.path, sizeof(out->lib));
	out->used = 1;
	out->measured = req->measure;
	keep_profiler = req->who == BOT_STEPENV_DEFAULT && (their_profiler || profiler_off);
	if (req->who == BOT_STEPENV_EXPLICIT && (their_tuner || tuner_off))
		bot_log_msg(log, BOT_LOG_WARN, "replacing the user's NCCL_TUNER_PLUGIN=%s%s with "
			    "nccl-bot's %s", ut, tuner_off ? " (the user had turned NCCL's tuner "
			    "plugin off)" : "", out->lib);
	if (req->who == BOT_STEPENV_EXPLICIT && (their_profiler || profiler_off))
		bot_log_msg(log, BOT_LOG_WARN, "replacing the user's NCCL_PROFILER_PLUGIN=%s%s with "
			    "nccl-bot's %s", up, profiler_off ? " (the user had turned NCCL's "
			    "profiler plugin off)" : "", out->lib);
	if (keep_profiler) {
		out->measured = 0;
		if (profiler_off) {
			snprintf(out->note, sizeof(out->note), "nothing measured: the user turned "
				 "NCCL's profiler off (NCCL_PROFILER_PLUGIN=%s)",
				 esc(up, v, sizeof(v)));
			bot_log_msg(log, BOT_LOG_INFO, "keeping the user's NCCL_PROFILER_PLUGIN=%s "
				    "(NCCL's profiler turned off): nccl-bot's tuner decides, nothing "
				    "is measured", up);
		} else {
			snprintf(out->note, sizeof(out->note), "nothing measured: the profiler "
				 "plugin is the user's %s", esc(up, v, sizeof(v)));
			bot_log_msg(log, BOT_LOG_INFO, "keeping the user's NCCL_PROFILER_PLUGIN=%s: "
				    "nccl-bot's tuner decides, nothing is measured", up);
		}
	} else if (!lib.profiler && req->measure) {
		out->measured = 0;
		snprintf(out->note, sizeof(out->note), "nothing measured: %s is no NCCL profiler "
			 "plugin", esc(out->lib, v, sizeof(v)));
		bot_log_msg(log, BOT_LOG_WARN, "%s exports no NCCL profiler plugin: nothing is "
			    "measured", out->lib);
	}

	t = malloc(sizeof(*t));
	text = malloc(BOT_TABLE_MAX_TEXT + 1);
	if (!t || !text) {
		bot_log_msg(log, BOT_LOG_ERROR, "out of memory");
		rc = -1;
		goto fail;
	}
	rc = build_table(req, out, t, log);
	if (rc < 0)
		goto fail;
	n = bot_table_encode(t, text, BOT_TABLE_MAX_TEXT + 1);
	if (n < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "cannot encode the step table: %s",
			    bot_table_strerror((int)n));
		rc = -1;
		goto fail;
	}
	if (add_var(out, "NCCL_TUNER_PLUGIN", strdup(out->lib)) < 0 ||
	    add_var(out, "NCCL_PROFILER_PLUGIN", strdup(keep_profiler ? up : out->lib)) < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "out of memory");
		rc = -1;
		goto fail;
	}
	add_var(out, BOT_ENV_TABLE, text);
	free(t);
	return 0;
fail:
	free(text);
	free(t);
	bot_stepenv_free(out);
	out->used = 0;
	return rc;
}
