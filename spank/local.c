/*
 * local.c - srun (the local context, as the user): the one decision for
 * each step, made before its tasks are launched.
 *
 * Owns: reading what srun knows about the step (the option, its job's
 * partition and account, whether it asks for GPUs, the kill switch),
 * the gate and the build (spank/decide.h), and putting the decision into
 * srun's environment, which Slurm copies to every task: the variables
 * themselves (NCCL_TUNER_PLUGIN, NCCL_PROFILER_PLUGIN, NCCL_BOT_TABLE) and
 * the same values under SLURM_NCCL_BOT_PIN_* (srun --export=NONE forwards
 * SLURM_* only; spank/remote.c copies those back). A step that does not
 * use nccl-bot gets none of ours, also when an enclosing sbatch or salloc
 * had pinned them.
 *
 * A heterogeneous step (srun ... : ...) gets one decision for all its
 * components. srun calls init_post_opt once per component and copies its
 * environment for each component after the last of them, but calls
 * local_user_init only once, and what that sets reaches the first
 * component only (observed with Slurm 22.05, doc/slurm.md). So the second
 * init_post_opt call, which is the first sign of a heterogeneous step,
 * decides for the whole step there, and later calls and local_user_init
 * leave that decision alone: every component copies the same variables.
 * What srun knows then: no job yet when it allocates one itself (its
 * nodes unknown: the prior, like any step whose fabric is not known);
 * inside a heterogeneous allocation the nodes of every component
 * (SLURM_JOB_NODELIST_HET_GROUP_<n>), all of which must be on one fabric.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/settings.h"
#include "learn/report.h"
#include "learn/siteconf.h"
#include "policies/context.h"
#define BOT_SPANK_WANT_HOSTLIST
#include "spank/context.h"
#include "spank/fabricmap.h"
#include "spank/decide.h"
#include "spank/submit.h"

static const char *first_env(const char *a, const char *b)
{
	const char *v = getenv(a);

	if ((!v || !*v) && b)
		v = getenv(b);
	return v && *v ? v : NULL;
}

/* init_post_opt calls: one per component of the step; a second one
 * decides for the whole heterogeneous step (het_decided). */
static int post_opt_calls;
static int het_decided;
/* The decision's "table from ..." line: srun -v shows it, but only from
 * local_user_init on (in init_post_opt srun has not yet set its log level),
 * so a heterogeneous step's is kept and said there. */
static char said[PATH_MAX + 512];
/* SLURM_JOB_PARTITION as init_post_opt found it: an enclosing allocation's
 * partition, one name ("" none or a list). */
static char alloc_partition[256];

size_t bot_spank_own_cmdline(char *buf, size_t max)
{
	size_t n = 0;
	ssize_t r;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	while (n < max && ((r = read(fd, buf + n, max - n)) > 0 || (r < 0 && errno == EINTR)))
		if (r > 0)
			n += (size_t)r;
	close(fd);
	return n;
}

/* srun's own options (--gpus=1, --gres=gpu:1, --export=...), which set
 * nothing in srun's environment (spank/submit.h): read from its command
 * line, once. */
static const struct bot_spank_srun *srun_cmdline(void)
{
	static struct bot_spank_srun r;
	static char buf[65536];
	static int done;
	size_t n;

	if (!done) {
		done = 1;
		n = bot_spank_own_cmdline(buf, sizeof(buf));
		if (n)
			bot_spank_srun_cmdline(buf, n, &r);
	}
	return &r;
}

/* The --export list the step's tasks get their environment by, NULL for
 * none (decide_here says which). Set where the step is decided, read by
 * user_var. */
static const char *export_list;

/* Take out what an enclosing sbatch/salloc (or an outer srun) pinned: a
 * variable still holding our pinned value is ours, not the user's. */
static void unpin(void)
{
	char var[128];

	for (size_t i = 0; bot_spank_pinned[i]; i++) {
		const char *pin, *cur;

		snprintf(var, sizeof(var), "%s%s", BOT_SPANK_PIN_PREFIX, bot_spank_pinned[i]);
		pin = getenv(var);
		cur = getenv(bot_spank_pinned[i]);
		if (pin && cur && !strcmp(pin, cur))
			unsetenv(bot_spank_pinned[i]);
		unsetenv(var);
	}
	unsetenv(BOT_SPANK_MEASURE_VAR);
	bot_spank_report_unpin();
}

/* The user's own NCCL_TUNER_PLUGIN or NCCL_PROFILER_PLUGIN as the step's
 * tasks would get it: srun's environment as --export passes it on, a value
 * the list sets itself (--export=ALL,NCCL_TUNER_PLUGIN=mine.so), nothing
 * under --export=NONE. Our own earlier pin is not the user's. */
static const char *user_var(const char *name)
{
	static char vals[2][4096];
	char var[128];
	const char *cur = getenv(name), *pin;
	char *out = vals[strcmp(name, "NCCL_TUNER_PLUGIN") != 0];

	snprintf(var, sizeof(var), "%s%s", BOT_SPANK_PIN_PREFIX, name);
	pin = getenv(var);
	if (cur && pin && !strcmp(cur, pin))
		cur = NULL;
	cur = bot_spank_export_value(export_list, name, cur, out, sizeof(vals[0]));
	if (cur && pin && !strcmp(cur, pin))
		return NULL;
	/* empty is unset, as NCCL and learn/stepenv read it: no plugin of
	 * the user's to keep or replace */
	return cur && *cur ? cur : NULL;
}

/*
 * The site configuration (config=, learn/siteconf.h), read where the step
 * is decided and nowhere else: its state_dir when plugstack.conf names
 * none, and its list of fabrics (a fabric not in it has no state: the
 * prior). A file that cannot be read costs the learned state, never the
 * step: the prior, and a warning for a user who asked.
 */
static void apply_siteconf(struct bot_spank_args *a, int asked)
{
	struct bot_siteconf c;
	char err[BOT_SITECONF_ERR_MAX];

	if (!a->config[0])
		return;
	if (bot_siteconf_load(a->config, &c, err, sizeof(err)) < 0) {
		if (asked)
			slurm_spank_log("nccl-bot: warning: %s; the step runs on the prior", err);
		else
			slurm_debug("nccl-bot: %s; the step runs on the prior", err);
		a->state_dir[0] = 0;
		bot_siteconf_free(&c);
		return;
	}
	if (!(a->set & (1u << BOT_SPANK_A_STATE_DIR)) && (c.set & (1u << BOT_SITECONF_STATE_DIR)))
		snprintf(a->state_dir, sizeof(a->state_dir), "%s", c.state_dir);
	if (a->fabric[0] && !bot_siteconf_fabric_ok(&c, a->fabric)) {
		slurm_debug("nccl-bot: fabric %s is not in %s's fabrics: the prior", a->fabric,
			    a->config);
		a->fabric[0] = 0;
	}
	bot_siteconf_free(&c);
}

/*
 * Inside a heterogeneous allocation srun has no SLURM_JOB_NODELIST, only
 * each component's SLURM_JOB_NODELIST_HET_GROUP_<n> (observed, 22.05): all
 * of them in one host list. 0 when there are none.
 */
static int het_nodes(BOT_SLURM_HOSTLIST *out)
{
	BOT_SLURM_HOSTLIST hl = NULL;
	char var[64];
	const char *v;

	for (int i = 0; i < 128; i++) {
		snprintf(var, sizeof(var), "SLURM_JOB_NODELIST_HET_GROUP_%d", i);
		if (!(v = first_env(var, NULL)))
			break;
		if (!hl)
			hl = slurm_hostlist_create(v);
		else
			slurm_hostlist_push(hl, v);
		if (!hl)
			return 0;
	}
	*out = hl;
	return hl != NULL;
}

/*
 * The step's fabric from fabric_map= or the fabric_map of config=
 * (spank/fabricmap.h's bot_fabricmap_load_site): every node of
 * the job this srun runs in (srun knows the job's nodes here, not yet the
 * step's: a step inside an allocation that spans two fabrics runs on the
 * prior even when its own nodes are on one). With a map, fabric= is not
 * used. The node list is expanded by Slurm's own hostlist code (the
 * process that loaded the plugin has it; spank/compat.h).
 */
static void resolve_fabric(struct bot_spank_args *a, int asked, const char *submit)
{
	struct bot_fabricmap m;
	struct bot_fabricmap_step st;
	BOT_SLURM_HOSTLIST hl;
	const char *nodes;
	char err[PATH_MAX + 256], *h;
	int rc = bot_fabricmap_load_site(a->fabric_map, a->config, &m, err, sizeof(err));

	if (rc == 0)
		return;		/* no map (fabric_map= or config='s fabric_map) */
	a->fabric[0] = 0;
	if (rc < 0) {
		snprintf(a->fabric_why, sizeof(a->fabric_why), "the fabric map cannot be read");
		if (asked)
			slurm_spank_log("nccl-bot: warning: %s; the step runs on the prior", err);
		else
			slurm_debug("nccl-bot: %s; the step runs on the prior", err);
		return;
	}
	if (submit) {
		/* at submission: no nodes yet, the partitions' fabric */
		if (!*submit)
			snprintf(a->fabric_why, sizeof(a->fabric_why), "the partition is not known "
				 "at submission");
		else {
			bot_fabricmap_partitions(&m, submit, &st);
			if (st.state == 1)
				snprintf(a->fabric, sizeof(a->fabric), "%s", st.fabric);
			else
				snprintf(a->fabric_why, sizeof(a->fabric_why), "%s", st.why);
		}
		bot_fabricmap_free(&m);
		return;
	}
	nodes = first_env("SLURM_JOB_NODELIST", "SLURM_NODELIST");
	if (!nodes || !(hl = slurm_hostlist_create(nodes))) {
		if (!het_nodes(&hl)) {
			snprintf(a->fabric_why, sizeof(a->fabric_why), "the step's nodes are not "
				 "known here");
			bot_fabricmap_free(&m);
			return;
		}
	}
	memset(&st, 0, sizeof(st));
	while (st.state >= 0 && (h = slurm_hostlist_shift(hl))) {
		bot_fabricmap_step_add(&m, &st, h);
		free(h);
	}
	slurm_hostlist_destroy(hl);
	bot_fabricmap_free(&m);
	if (st.state == 1)
		snprintf(a->fabric, sizeof(a->fabric), "%s", st.fabric);
	else
		snprintf(a->fabric_why, sizeof(a->fabric_why), "%s", st.state < 0 ? st.why :
			 "the step has no nodes");
}

int bot_spank_decide_here(uint64_t seed, const char *what,
			  const struct bot_spank_submission *sub)
{
	const char *submit = sub ? sub->partition : NULL;
	static struct bot_spank_args eff;
	const struct bot_spank_args *a = &eff;
	struct bot_spank_step s;
	struct bot_spank_gate g;
	struct bot_spank_decision d;
	char err[BOT_SPANK_ERR_MAX], var[128];
	struct stat st;
	int asked, plugin;

	memset(&s, 0, sizeof(s));
	eff = bot_spank.args;
	if (!bot_spank.args_ok) {
		if (bot_spank.opt_seen)
			slurm_spank_log("nccl-bot: error: %s; nccl-bot is off on this cluster until "
					"the administrator fixes it", bot_spank.args_err);
		unpin();
		return 0;
	}
	s.opt = BOT_SPANK_OPT_NONE;
	if (bot_spank.opt_seen &&
	    bot_spank_opt_parse(bot_spank.opt_null ? NULL : bot_spank.opt_value, a, &s.opt,
				&s.opt_policy, err, sizeof(err)) < 0) {
		/* refused by the callback already; never reached in practice */
		slurm_spank_log("nccl-bot: error: %s", err);
		unpin();
		return -1;
	}
	if (sub) {
		/* at submission: what the command line, the environment, the
		 * script and slurm.conf name (spank/allocator.c) */
		s.partition = *sub->partition ? sub->partition : NULL;
		s.account = *sub->account ? sub->account : NULL;
		s.partition_why = sub->partition_why;
		s.account_why = sub->account_why;
	} else {
		s.partition = first_env("SLURM_JOB_PARTITION", "SLURM_PARTITION");
		/* a requested list holding the allocation's partition: that one */
		if (s.partition && strchr(s.partition, ',') && alloc_partition[0] &&
		    bot_spank_list_has(s.partition, alloc_partition))
			s.partition = alloc_partition;
		s.account = first_env("SLURM_JOB_ACCOUNT", "SLURM_ACCOUNT");
		if (!s.account)
			s.account = first_env("SBATCH_ACCOUNT", "SALLOC_ACCOUNT");
	}
	s.has_gpus = bot_spank_env_has_gpus(bot_getenv) || (sub && sub->gpus) ||
		     (!sub && srun_cmdline()->gpus);
	/* the list the tasks get their environment by: sbatch's (its option,
	 * #SBATCH or SBATCH_EXPORT; an inherited SLURM_EXPORT_ENV is not
	 * sbatch's), none for salloc; srun's option, else SRUN_EXPORT_ENV,
	 * else SLURM_EXPORT_ENV (a batch script's, its sruns' default) */
	if (sub)
		export_list = sub->export_list;
	else if (srun_cmdline()->export_list)
		export_list = srun_cmdline()->export_list;
	else
		export_list = first_env("SRUN_EXPORT_ENV", "SLURM_EXPORT_ENV");
	/* read where the step is decided, never on the nodes */
	s.kill_switch = a->kill_switch[0] && stat(a->kill_switch, &st) == 0;
	bot_spank_gate(a, &s, &g);
	asked = g.explicit_;
	if (g.used) {
		resolve_fabric(&eff, asked, submit);
		apply_siteconf(&eff, asked);
	}
	if (g.tell)
		slurm_spank_log("nccl-bot: %s", g.reason);
	else if (g.reason[0] && sub)
		slurm_verbose("nccl-bot: %s: %s", what, g.reason);	/* sbatch -v */
	else if (g.reason[0])
		slurm_debug("nccl-bot: %s: %s", what, g.reason);
	if (!g.used) {
		unpin();
		return 0;
	}
	if (sub && sub->export_file) {
		/* sbatch unsets its whole environment after this callback
		 * when the job's comes from a file (--export-file), so no
		 * variable set here reaches the batch step; its sruns get the
		 * option (Slurm sets SLURM_SPANK_* after that) and decide */
		const char *m = "the batch step runs without nccl-bot: sbatch --export-file gives "
				"it the file's environment only (nccl-bot's variables are set in "
				"sbatch's, which Slurm drops); the job's srun steps use nccl-bot";

		if (asked)
			slurm_spank_log("nccl-bot: %s", m);
		else
			slurm_verbose("nccl-bot: %s", m);
		unpin();
		return 0;
	}
	/* Whose plugin the step ends up with, for the report: read now, while
	 * the user's own NCCL_TUNER_PLUGIN/NCCL_PROFILER_PLUGIN are still in
	 * the environment (the pins below overwrite them). */
	plugin = !user_var("NCCL_TUNER_PLUGIN") && !user_var("NCCL_PROFILER_PLUGIN") ?
		 BOT_REPORT_PLUGIN_NONE : g.explicit_ ? BOT_REPORT_PLUGIN_REPLACED :
		 BOT_REPORT_PLUGIN_KEPT;
	if (bot_spank_build(a, &g, seed, user_var("NCCL_TUNER_PLUGIN"),
			    user_var("NCCL_PROFILER_PLUGIN"), &d, &bot_spank_user_log) < 0) {
		if (asked)
			slurm_spank_log("nccl-bot: error: the %s runs without nccl-bot (above)",
					what);
		unpin();
		return 0;
	}
	if (!d.used) {
		/* only the administrator's default stands aside (learn/stepenv.h):
		 * the user's own tuner is kept; one line says so, as the summary
		 * line would have */
		static const char pre[] = "nccl-bot not used: ";
		const char *note = strncmp(d.note, pre, sizeof(pre) - 1) ? d.note :
				   d.note + sizeof(pre) - 1;

		if (plugin == BOT_REPORT_PLUGIN_KEPT)
			slurm_spank_log("nccl-bot: %s: nccl-bot stood aside: %s, kept (the "
					"administrator's default never replaces a user's own "
					"plugin; --nccl-bot would)", what, note);
		else
			slurm_debug("nccl-bot: %s: %s", what, d.note);
		unpin();
		bot_spank_decision_free(&d);
		return 0;
	}
	unpin();
	for (size_t i = 0; i < d.nvars; i++) {
		snprintf(var, sizeof(var), "%s%s", BOT_SPANK_PIN_PREFIX, d.name[i]);
		if (setenv(d.name[i], d.value[i], 1) < 0 || setenv(var, d.value[i], 1) < 0) {
			slurm_spank_log("nccl-bot: error: cannot set %s: out of memory; the %s "
					"runs without nccl-bot", d.name[i], what);
			unpin();
			for (size_t j = 0; j <= i; j++)
				unsetenv(d.name[j]);
			bot_spank_decision_free(&d);
			return 0;
		}
	}
	bot_spank_report_pin(a, g.policy == BOT_POLICY_SHADOW, plugin, d.source,
			     sub && sub->chdir && *sub->chdir ? sub->chdir : NULL);
	if (d.measured && setenv(BOT_SPANK_MEASURE_VAR, "1", 1) < 0)
		slurm_spank_log("nccl-bot: warning: cannot set %s: the %s measures nothing",
				BOT_SPANK_MEASURE_VAR, what);
	snprintf(said, sizeof(said), "nccl-bot: %s: policy %s, table from the %s%s%s", what,
		 bot_policy_name(g.policy), d.source, d.note[0] ? "; " : "", d.note);
	slurm_verbose("%s", said);
	bot_spank_decision_free(&d);
	return 0;
}

int bot_spank_local_post_opt(spank_t sp)
{
	(void)sp;
	post_opt_calls++;
	if (post_opt_calls == 1) {
		const char *p = getenv("SLURM_JOB_PARTITION");

		/* inside an allocation (a batch script, salloc), the partition
		 * it runs in; srun later puts the job's requested list there
		 * (-p a,b), which alone would not say which (decide_here) */
		if (p && *p && !strchr(p, ',') && strlen(p) < sizeof(alloc_partition))
			strcpy(alloc_partition, p);
		unpin();	/* an enclosing allocation's pins are not this step's */
		return 0;
	}
	if (het_decided)
		return 0;	/* the decision is in the environment every component copies */
	het_decided = 1;
	/* no job id yet outside an allocation: the seed is the allocation's,
	 * else 0; every component gets the same table either way */
	{
		const char *j = first_env("SLURM_JOB_ID", NULL);
		uint64_t seed = j ? strtoull(j, NULL, 10) << 32 : 0;

		return bot_spank_decide_here(seed, "heterogeneous step", NULL);
	}
}

/* A count srun put into its own environment: 0 when absent or not one. */
static uint32_t env_count(const char *name)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (!v || *v < '0' || *v > '9')
		return 0;
	x = strtoul(v, &end, 10);
	return *end || x > 0xfffffful ? 0 : (uint32_t)x;
}

int bot_spank_local_user_init(spank_t sp)
{
	uint32_t job = 0, step = 0;

	if (het_decided) {
		/* init_post_opt decided for every component. The step's size
		 * for the summary's wait and its "of N ranks" is the whole
		 * step's: S_JOB_NNODES and S_JOB_TOTAL_TASK_COUNT here are the
		 * first component's, srun's own SLURM_NNODES and SLURM_NTASKS
		 * the sums over all components (observed, 22.05: 1+2 nodes and
		 * 2+3 tasks say 3 and 5, also for a step inside a larger
		 * heterogeneous allocation) */
		bot_spank_report_step(sp);
		if (env_count("SLURM_NNODES") && env_count("SLURM_NTASKS"))
			bot_spank_report_step_size(env_count("SLURM_NNODES"),
						   env_count("SLURM_NTASKS"));
		if (said[0])
			slurm_verbose("%s", said);
		return 0;
	}
	spank_get_item(sp, S_JOB_ID, &job);
	spank_get_item(sp, S_JOB_STEPID, &step);
	bot_spank_report_step(sp);
	return bot_spank_decide_here((uint64_t)job << 32 | step, "step", NULL);
}
