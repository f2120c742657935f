/*
 * decide.c - the one decision per step (spank/decide.h).
 *
 * The gate is a pure function of the arguments and what the launcher
 * knows. The build asks learn/stepenv.h for the variables: from a
 * fabric's state in a forked child whose answer is read through a pipe
 * within timeout_ms (a child stuck on a shared filesystem is killed and
 * left behind, never waited for), else, or on any trouble there, from
 * the prior in this process. The child's messages come back through the
 * pipe and are logged here, so the user sees them once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/table.h"
#include "learn/stepenv.h"
#include "policies/context.h"
#include "spank/childread.h"
#include "spank/decide.h"

const char *const bot_spank_pinned[BOT_SPANK_MAX_VARS + 1] = {
	"NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", BOT_ENV_TABLE, NULL,
};

int bot_spank_opt_parse(const char *value, const struct bot_spank_args *a, int *kind,
			int *policy, char *err, size_t errlen)
{
	char allowed[256];
	int rc;

	*policy = -1;
	if (!value || !*value || !strcmp(value, "(null)")) {
		*kind = BOT_SPANK_OPT_BARE;
		return 0;
	}
	/* any case, as policy names are read (--nccl-bot=OFF, =Off) */
	if (!strcasecmp(value, "off")) {
		*kind = BOT_SPANK_OPT_OFF;
		return 0;
	}
	*kind = BOT_SPANK_OPT_POLICY;
	if ((rc = bot_set_policy(value, policy))) {
		if (a)
			bot_spank_policies_str(a, allowed, sizeof(allowed));
		return bot_log_errf(err, errlen, "--nccl-bot=%s: not a policy (%s); this cluster "
				    "allows %s%sshadow or off", value, bot_set_strerror(rc),
				    a ? allowed : "", a && *allowed ? ", " : "");
	}
	/* shadow changes no decision: anyone may ask for it */
	if (a && *policy != BOT_POLICY_SHADOW && !bot_spank_policy_allowed(a, *policy)) {
		bot_spank_policies_str(a, allowed, sizeof(allowed));
		return bot_log_errf(err, errlen, "--nccl-bot=%s: this cluster does not let users "
				    "pick that policy; allowed: %s%sshadow or off", value, allowed,
				    *allowed ? ", " : "");
	}
	return 0;
}

static void no(struct bot_spank_gate *g, int tell, const char *fmt, const char *arg)
{
	g->used = 0;
	g->tell = tell;
	snprintf(g->reason, sizeof(g->reason), fmt, arg ? arg : "");
}

void bot_spank_gate(const struct bot_spank_args *a, const struct bot_spank_step *s,
		    struct bot_spank_gate *g)
{
	int asked = s->opt == BOT_SPANK_OPT_BARE || s->opt == BOT_SPANK_OPT_POLICY;

	memset(g, 0, sizeof(*g));
	g->explicit_ = asked;
	if (s->opt == BOT_SPANK_OPT_OFF)
		return no(g, 0, "the user said --nccl-bot=off%s", NULL);
	if (a->enable == BOT_SPANK_ENABLE_OFF)
		return no(g, asked, "switched off on this cluster (enable=off)%s",
			  NULL);
	if (!asked && a->enable != BOT_SPANK_ENABLE_DEFAULT)
		return no(g, 0, "not asked for (enable=opt-in)%s", NULL);
	if (s->kill_switch)
		return no(g, asked, "switched off by the administrator (the kill "
			  "switch %s exists)", a->kill_switch);
	if (a->partitions[0] && !s->partition && s->partition_why)
		return no(g, asked, "the partition is not known at submission (%s) and this "
			  "cluster enables nccl-bot in some partitions only (partitions=)",
			  s->partition_why);
	if (a->partitions[0] && s->partition && strchr(s->partition, ',')) {
		/* a job submitted to several partitions (-p a,b) runs in one of
		 * them, which is not known where the step is decided: enabled
		 * only when it is enabled in each */
		char item[BOT_SPANK_LIST_MAX];
		const char *p = s->partition;

		while (*p) {
			size_t n = strcspn(p, ",");

			snprintf(item, sizeof(item), "%.*s", (int)n, p);
			if (!bot_spank_list_has(a->partitions, item)) {
				g->used = 0;
				g->tell = asked;
				snprintf(g->reason, sizeof(g->reason), "the job may run in any of "
					 "partitions %.200s, and nccl-bot is not enabled in %.100s "
					 "(partitions=): name the partition with -p", s->partition,
					 item);
				return;
			}
			p += n + (p[n] == ',');
		}
	} else if (a->partitions[0] && (!s->partition || !bot_spank_list_has(a->partitions,
									     s->partition)))
		return no(g, asked, "not enabled in partition %s", s->partition ? s->partition :
			  "(unknown)");
	if ((a->accounts[0] || a->exclude_accounts[0]) && !s->account && s->account_why)
		return no(g, asked, "the account is not known at submission (%s) and this cluster "
			  "enables nccl-bot by account (accounts= or exclude_accounts=)",
			  s->account_why);
	if (a->accounts[0] && (!s->account || !bot_spank_list_has(a->accounts, s->account)))
		return no(g, asked, "not enabled for account %s", s->account ? s->account :
			  "(unknown)");
	if (a->exclude_accounts[0] && s->account &&
	    bot_spank_list_has(a->exclude_accounts, s->account))
		return no(g, asked, "not enabled for account %s", s->account);
	if (a->require_gpus && !s->has_gpus)
		return no(g, asked, "the step asks for no GPUs (require_gpus=1: none named by "
			  "--gpus, --gpus-per-*, --gres=gpu or the job's GPU variables)%s", NULL);
	g->used = 1;
	g->policy = s->opt == BOT_SPANK_OPT_POLICY ? s->opt_policy : a->policy;
	if (a->mode == BOT_SPANK_MODE_SHADOW && g->policy != BOT_POLICY_SHADOW) {
		g->tell = s->opt == BOT_SPANK_OPT_POLICY;
		snprintf(g->reason, sizeof(g->reason), "shadow mode on this cluster (mode=shadow):"
			 " measuring only, NCCL's choice stands (policy %s not applied)",
			 bot_policy_name(g->policy));
		g->policy = BOT_POLICY_SHADOW;
	}
}

int bot_spank_env_has_gpus(const char *(*get)(const char *name))
{
	static const char *const vars[] = {
		"SLURM_GPUS", "SLURM_GPUS_PER_NODE", "SLURM_GPUS_PER_TASK",
		"SLURM_GPUS_PER_SOCKET", "SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
		"SLURM_TRES_PER_TASK", "SLURM_TRES_PER_NODE", "SLURM_TRES_PER_JOB", NULL,
	};

	for (size_t i = 0; vars[i]; i++) {
		const char *v = get(vars[i]);

		if (!v || !*v)
			continue;
		/* the job's and step's GPU indices: "0" is the first GPU */
		if (!strcmp(vars[i], "SLURM_JOB_GPUS") || !strcmp(vars[i], "SLURM_STEP_GPUS"))
			return 1;
		if (!strcmp(v, "0"))
			continue;
		if (!strncmp(vars[i], "SLURM_TRES_", 11) && !strstr(v, "gpu"))
			continue;
		/* "gpu:0", "a100:0": no GPU either */
		const char *c = strrchr(v, ':');
		if (c && !strcmp(c, ":0"))
			continue;
		return 1;
	}
	return 0;
}

void bot_spank_decision_free(struct bot_spank_decision *d)
{
	for (size_t i = 0; i < d->nvars; i++) {
		free(d->name[i]);
		free(d->value[i]);
	}
	d->nvars = 0;
	d->used = 0;
}

static void req_for(const struct bot_spank_args *a, const struct bot_spank_gate *g, uint64_t seed,
		    const char *lib, const char *ut, const char *up, struct bot_stepenv_req *r)
{
	bot_stepenv_req_default(r);
	r->policy = g->policy;
	r->seed = seed;
	r->min_bytes_log2 = a->min_bytes_log2;
	r->lib = lib;
	r->user_tuner = ut;
	r->user_profiler = up;
	r->who = g->explicit_ ? BOT_STEPENV_EXPLICIT : BOT_STEPENV_DEFAULT;
}

static int take(struct bot_spank_decision *d, const struct bot_stepenv *env)
{
	d->used = env->used;
	d->measured = env->measured;
	snprintf(d->note, sizeof(d->note), "%s", env->note);
	for (size_t i = 0; i < env->nvars && i < BOT_SPANK_MAX_VARS; i++) {
		d->name[i] = strdup(env->var[i].name);
		d->value[i] = strdup(env->var[i].value);
		d->nvars = i + 1;
		if (!d->name[i] || !d->value[i])
			return -1;
	}
	return 0;
}

/* ---- the child: the state read, bounded ------------------------------------ */

struct pipe_log {
	int fd;
};

static void put(int fd, char tag, const char *s, size_t n)
{
	char t = tag;

	if (write(fd, &t, 1) != 1 || write(fd, s, n) != (ssize_t)n || write(fd, "", 1) != 1)
		_exit(3);
}

static void child_log(void *arg, int level, const char *msg)
{
	put(((struct pipe_log *)arg)->fd, (char)('0' + level), msg, strlen(msg));
}

void (*bot_spank_test_child_hook)(void);

/* The state reader: run by bot_spank_childread in the child. */
static void child(int fd, void *arg)
{
	const struct bot_stepenv_req *r = arg;
	struct pipe_log pl = { fd };
	struct bot_log log = { child_log, &pl };
	struct bot_stepenv env;
	char src[320];

	if (bot_spank_test_child_hook)
		bot_spank_test_child_hook();
	if (bot_stepenv_build(r, &env, &log) < 0)
		_exit(2);
	snprintf(src, sizeof(src), "fabric %s%s%s", env.fabric, env.snapshot[0] ? " snapshot " :
		 " (no learned state yet)", env.snapshot);
	put(fd, 'S', src, strlen(src));
	put(fd, 'N', env.note, strlen(env.note));
	put(fd, 'U', env.used ? "1" : "0", 1);
	put(fd, 'M', env.measured ? "1" : "0", 1);
	for (size_t i = 0; i < env.nvars; i++) {
		put(fd, 'K', env.var[i].name, strlen(env.var[i].name));
		put(fd, 'V', env.var[i].value, strlen(env.var[i].value));
	}
	put(fd, 'E', "", 0);
	_exit(0);
}

/* Parse the child's records; 0 when complete ('E' seen). */
static int parse_child(char *buf, size_t n, struct bot_spank_decision *d, const struct bot_log *log)
{
	size_t i = 0;
	int done = 0;

	while (i < n) {
		char tag = buf[i];
		char *s = buf + i + 1;
		size_t len = strnlen(s, n - i - 1);

		if (i + 1 + len >= n)
			break;	/* cut short */
		i += len + 2;
		if (tag >= '0' && tag <= '2')
			bot_log_msg(log, tag - '0', "%s", s);
		else if (tag == 'S')
			snprintf(d->source, sizeof(d->source), "%s", s);
		else if (tag == 'N')
			snprintf(d->note, sizeof(d->note), "%s", s);
		else if (tag == 'U')
			d->used = s[0] == '1';
		else if (tag == 'M')
			d->measured = s[0] == '1';
		else if (tag == 'K' && d->nvars < BOT_SPANK_MAX_VARS) {
			d->name[d->nvars] = strdup(s);
			d->value[d->nvars] = NULL;
		} else if (tag == 'V' && d->nvars < BOT_SPANK_MAX_VARS && d->name[d->nvars]) {
			d->value[d->nvars] = strdup(s);
			if (!d->value[d->nvars])
				return -1;
			d->nvars++;
		} else if (tag == 'E')
			done = 1;
	}
	return done ? 0 : -1;
}

static int from_state(const struct bot_stepenv_req *r, uint64_t timeout_ms,
		      struct bot_spank_decision *d, const struct bot_log *log, char *why,
		      size_t whylen)
{
	struct bot_spank_childread cr;
	int rc;

	/* the answer: the step's environment, its table at most
	 * BOT_TABLE_MAX_TEXT; 4 MiB is far past any valid one */
	if (bot_spank_childread(child, (void *)r, timeout_ms, (size_t)1 << 22, &cr, why,
				whylen) < 0) {
		bot_spank_decision_free(d);
		return -1;
	}
	rc = parse_child((char *)cr.buf, cr.len, d, log);
	if (rc < 0) {
		snprintf(why, whylen, "the state could not be used (above)");
		bot_spank_decision_free(d);
	}
	free(cr.buf);
	return rc;
}

int bot_spank_build(const struct bot_spank_args *a, const struct bot_spank_gate *g,
		    uint64_t seed, const char *user_tuner, const char *user_profiler,
		    struct bot_spank_decision *d, const struct bot_log *log)
{
	struct bot_stepenv_req r;
	struct bot_stepenv env;
	char lib[PATH_MAX], why[256];
	int n, rc;

	memset(d, 0, sizeof(*d));
	n = snprintf(lib, sizeof(lib), "%s/%s", a->lib_prefix, BOT_SPANK_RANK_SO);
	if (n < 0 || (size_t)n >= sizeof(lib)) {
		bot_log_msg(log, BOT_LOG_ERROR, "lib_prefix= is too long");
		return -1;
	}
	req_for(a, g, seed, lib, user_tuner, user_profiler, &r);
	why[0] = 0;
	if (a->state_dir[0] && a->fabric[0]) {
		r.source = BOT_STEPENV_STATE;
		r.state = a->state_dir;
		r.fabric = a->fabric;
		if (from_state(&r, a->timeout_ms, d, log, why, sizeof(why)) == 0)
			return 0;
		bot_log_msg(log, BOT_LOG_WARN, "fabric %s: %s; the step runs on the prior",
			    a->fabric, why);
	} else if (a->state_dir[0]) {
		snprintf(why, sizeof(why), "%s", a->fabric_why[0] ? a->fabric_why :
			 "the nodes' fabric is not known");
	}
	req_for(a, g, seed, lib, user_tuner, user_profiler, &r);
	rc = bot_stepenv_build(&r, &env, log);
	if (rc < 0)
		return -1;
	snprintf(d->source, sizeof(d->source), "prior%s%s%s", why[0] ? " (" : "", why,
		 why[0] ? ")" : "");
	rc = take(d, &env);
	bot_stepenv_free(&env);
	if (rc < 0) {
		bot_log_msg(log, BOT_LOG_ERROR, "out of memory");
		bot_spank_decision_free(d);
		return -1;
	}
	return 0;
}
