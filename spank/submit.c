/*
 * submit.c - what a submission names: partition and account from sbatch's
 * or salloc's command line, the batch script's #SBATCH block and
 * slurm.conf's default partition (spank/submit.h).
 *
 * The option scan needs to know which options take a value in the next
 * word: every short option of sbatch and salloc that requires one is
 * listed, and every long option of theirs, with a value or without (or
 * one only after "="). A long option is matched as getopt matches it: its
 * full name, or a prefix of exactly one name (sbatch takes --part for
 * --partition). A long option that matches none or several (another SPANK
 * plugin's flag, a typo) without "=" stops the scan: whether the next word
 * is its value or the script is not known, so what follows it (the
 * script included) stays unknown, never guessed.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "spank/submit.h"

/* Short options of sbatch and salloc (22.05) whose value may be the next
 * word: -A -a -B -b -C -c -D -d -e -F -G -i -J -L -M -m -N -n -o -p -q
 * -S -t -w -x. The rest take none, or theirs only attached (-k, -I, -K). */
static const char short_with_value[] = "AaBbCcDdeFGiJLMmNnopqStwx";

/* Long options that take no value, or one only after "=". */
static const char *const long_no_value[] = {
	"bell", "contiguous", "exclusive", "get-user-env", "help", "hold", "ignore-pbs",
	"immediate", "kill-command", "nccl-bot", "nice", "no-bell", "no-kill", "no-requeue",
	"no-shell", "overcommit", "oversubscribe", "parsable", "propagate", "quiet", "reboot",
	"requeue", "spread-job", "test-only", "usage", "use-min-nodes", "verbose", "version",
	"wait", "x11", NULL,
};

/* Long options of sbatch and salloc (22.05) that take a value. */
static const char *const long_with_value[] = {
	"account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir",
	"cluster-constraint", "clusters", "comment", "constraint", "container", "core-spec",
	"cores-per-socket", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline",
	"delay-boot", "dependency", "distribution", "error", "exclude", "export", "export-file",
	"extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
	"gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "hint", "input", "job-name",
	"kill-on-invalid-dep", "licenses", "mail-type", "mail-user", "mcs-label", "mem",
	"mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nodefile", "nodelist",
	"nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu", "ntasks-per-node",
	"ntasks-per-socket", "open-mode", "output", "partition", "power", "prefer", "priority",
	"profile", "qos", "reservation", "signal", "sockets-per-node", "switches",
	"thread-spec", "threads-per-core", "time", "time-min", "tmp", "tres-per-task", "uid",
	"wait-all-nodes", "wckey", "wrap", NULL,
};

/* srun's (22.05, `srun --help`): short options whose value may be the next
 * word (-I and -K take one only attached), long options without a value
 * (or one only after "="), long options with one. */
static const char srun_short_with_value[] = "AbBcCdDeFGiJLmMnNopqrStTwWx";
static const char *const srun_long_no_value[] = {
	"bcast", "compress", "contiguous", "disable-status", "exact", "exclusive", "help",
	"hold", "immediate", "kill-on-bad-exit", "label", "multi-prog", "nccl-bot", "nice",
	"no-allocate", "no-kill", "overcommit", "overlap", "oversubscribe", "preserve-env",
	"propagate", "pty", "quiet", "quit-on-interrupt", "reboot", "resv-ports", "send-libs",
	"spread-job", "test-only", "unbuffered", "usage", "use-min-nodes", "verbose", "version",
	"whole", "x11", NULL,
};
static const char *const srun_long_with_value[] = {
	"accel-bind", "account", "acctg-freq", "bb", "bbf", "bcast-exclude", "begin", "chdir",
	"cluster-constraint", "clusters", "comment", "constraint", "container", "context",
	"core-spec", "cores-per-socket", "cpu-bind", "cpu_bind", "cpu-freq", "cpus-per-gpu",
	"cpus-per-task", "deadline",
	"delay-boot", "dependency", "distribution", "epilog", "error", "exclude", "export",
	"extra-node-info", "gid", "gpu-bind", "gpu-freq", "gpus", "gpus-per-node",
	"gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "het-group", "hint", "input",
	"jobid", "job-name", "licenses", "mail-type", "mail-user", "mcs-label", "mem",
	"mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "mpi", "msg-timeout", "network",
	"nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu",
	"ntasks-per-node", "ntasks-per-socket", "ntasks-per-tres", "open-mode", "output",
	"pack-group", "partition", "power", "prefer", "priority", "profile", "prolog", "qos",
	"relative", "reservation", "signal", "slurmd-debug", "sockets-per-node", "switches",
	"task-epilog", "task-prolog", "tasks-per-node", "thread-spec", "threads",
	"threads-per-core", "time", "time-min", "tmp", "tres-per-task", "uid", "wait", "wckey",
	NULL,
};

/* A command's options: which take a value in the next word. */
struct optset {
	const char *short_with_value;
	const char *const *no_value, *const *with_value;
	const char *lacks;	/* a name of the lists this command does not have */
};
static const struct optset sbatch_opts = { short_with_value, long_no_value, long_with_value,
					   NULL };
/* salloc has no --wait of sbatch's: "--wait N" is --wait-all-nodes */
static const struct optset salloc_opts = { short_with_value, long_no_value, long_with_value,
					   "wait" };
static const struct optset srun_opts = { srun_short_with_value, srun_long_no_value,
					 srun_long_with_value, NULL };

enum opt_kind { OPT_UNKNOWN, OPT_NO_VALUE, OPT_VALUE };

/* Which long option name[0..len) is, as getopt_long reads it: an exact
 * name, else the one name it is a prefix of; *full gets that name. */
static enum opt_kind long_option(const struct optset *o, const char *name, size_t len,
				 const char **full)
{
	const char *const *lists[2] = { o->no_value, o->with_value };
	enum opt_kind kind = OPT_UNKNOWN;
	int matches = 0;

	*full = NULL;
	if (!len)
		return OPT_UNKNOWN;
	for (int l = 0; l < 2; l++)
		for (size_t i = 0; lists[l][i]; i++) {
			if (strncmp(lists[l][i], name, len) ||
			    (o->lacks && !strcmp(lists[l][i], o->lacks)))
				continue;
			if (!lists[l][i][len]) {	/* exact */
				*full = lists[l][i];
				return l ? OPT_VALUE : OPT_NO_VALUE;
			}
			matches++;
			*full = lists[l][i];
			kind = l ? OPT_VALUE : OPT_NO_VALUE;
		}
	if (matches != 1) {
		*full = NULL;
		return OPT_UNKNOWN;
	}
	return kind;
}

static void put(char *out, size_t len, const char *v)
{
	size_t n = strlen(v);

	/* a value that does not fit is not known, never a truncated name */
	if (n && n < len)
		memcpy(out, v, n + 1);
	else
		out[0] = 0;
}

/* What a scan of options found. */
struct found {
	char *part, *acct;	/* where to store (size BOT_SPANK_SUBMIT_VALUE_MAX) */
	char *dir;		/* -D/--chdir's value (PATH_MAX), NULL not wanted */
	int wrap;		/* --wrap: no script */
	int unsure;		/* an option the scan cannot read: what follows unknown */
	int gpus;		/* an option asks for a GPU (-G, --gpus*, --gres=gpu...) */
	int gpus_named;		/* an option names GPUs, a count of 0 included */
	const struct optset *o;	/* the command's options (sbatch_opts when NULL) */
	const char *export_;	/* --export's value (the last), NULL none */
	int export_file;	/* --export-file: the job's environment is a file's */
};

/* Does value v of option `full` (a long name, or "G" for -G) ask for a
 * GPU? -G/--gpus and --gpus-per-*: a count ("2", "a100:2"), 0 none;
 * --gres and --tres-per-task: an item naming gpu with a count other than 0
 * ("gpu:2", "gpu:a100:1", "gres/gpu=1", "gpu", as Slurm reads a bare one). */
static int asks_gpu(const char *full, const char *v)
{
	int list = !strcmp(full, "gres") || !strcmp(full, "tres-per-task");

	if (!list && strcmp(full, "G") && strncmp(full, "gpus", 4))
		return 0;
	while (*v) {
		size_t n = strcspn(v, ",");
		const char *end = v + n, *c = end, *name = v;

		while (c > v && c[-1] != ':' && c[-1] != '=')
			c--;
		/* "gres:gpu:1", "gres/gpu=1": Slurm reads past the type */
		if (list && (!strncmp(name, "gres:", 5) || !strncmp(name, "gres/", 5)))
			name += 5;
		/* the item's count: after its last ':' or '=' (none: 1); a GPU
		 * shared (mps, shard) is a GPU too */
		if ((!list || !strncmp(name, "gpu", 3) || !strncmp(name, "mps", 3) ||
		     !strncmp(name, "shard", 5)) &&
		    !(c > v && end - c == 1 && *c == '0') && !(c == v && !list && n == 1 && *v == '0'))
			return 1;
		v = *end ? end + 1 : end;
	}
	return 0;
}

/* Does option `full` name GPUs at all (a count of 0 included)? Then it, not
 * the command's input variables, says whether the job asks for one. */
static int names_gpu(const char *full, const char *v)
{
	if (!strcmp(full, "G") || !strncmp(full, "gpus", 4))
		return 1;
	if (strcmp(full, "gres") && strcmp(full, "tres-per-task"))
		return 0;
	return strstr(v, "gpu") || strstr(v, "mps") || strstr(v, "shard");
}

/*
 * Scan argv[0..argc) as options; returns the index of the first
 * non-option argument (argc when there is none).
 */
static int scan(char *const *argv, int argc, struct found *f)
{
	const struct optset *o = f->o ? f->o : &sbatch_opts;
	int i = 0;

	while (i < argc) {
		const char *a = argv[i], *v = NULL;
		char opt = 0;

		if (!strcmp(a, "--"))
			return i + 1;
		if (a[0] != '-' || !a[1])
			return i;	/* the script, or "-" */
		i++;
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '='), *full;
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			enum opt_kind kind = long_option(o, name, len, &full);

			if (kind == OPT_UNKNOWN && !eq) {
				f->unsure = 1;	/* its value or the script next? */
				return argc;
			}
			if (eq)
				v = eq + 1;
			else if (kind == OPT_VALUE && i < argc)
				v = argv[i++];
			if (full && v && names_gpu(full, v)) {
				f->gpus_named = 1;
				f->gpus |= asks_gpu(full, v);
			}
			if (full && v && !strcmp(full, "export"))
				f->export_ = v;
			if (full && v && !strcmp(full, "export-file"))
				f->export_file = 1;
			if (full && !strcmp(full, "chdir"))
				opt = 'D';
			else if (full && !strcmp(full, "partition"))
				opt = 'p';
			else if (full && !strcmp(full, "account"))
				opt = 'A';
			else if (full && !strcmp(full, "wrap"))
				f->wrap = 1;
		} else {
			/* a cluster of flags; the first that takes a value takes
			 * the rest of the word, else the next word */
			for (const char *c = a + 1; *c; c++) {
				if (!strchr(o->short_with_value, *c))
					continue;
				opt = *c;
				if (c[1])
					v = c + 1;
				else if (i < argc)
					v = argv[i++];
				break;
			}
		}
		if (!v)
			continue;
		if (opt == 'G') {
			f->gpus_named = 1;
			f->gpus |= asks_gpu("G", v);
		}
		if (opt == 'D' && f->dir)
			put(f->dir, PATH_MAX, v);
		else if (opt == 'p')
			put(f->part, BOT_SPANK_SUBMIT_VALUE_MAX, v);
		else if (opt == 'A')
			put(f->acct, BOT_SPANK_SUBMIT_VALUE_MAX, v);
	}
	return argc;
}

#define ARGV_MAX 4096

/* A command line as /proc/self/cmdline has it (NUL-separated words, n
 * bytes) copied into copy (cap bytes) and split into argv (ARGV_MAX words
 * at most), argv[0] skipped; a last word cut short by n is still a word.
 * Returns the count. */
static int split_argv(const char *buf, size_t n, char *copy, size_t cap, char **argv)
{
	int argc = 0;

	if (n > cap - 1)
		n = cap - 1;
	memcpy(copy, buf, n);
	copy[n] = 0;
	for (size_t i = strnlen(copy, n) + 1; i < n && argc < ARGV_MAX; i += strlen(copy + i) + 1)
		argv[argc++] = copy + i;
	return argc;
}

void bot_spank_submit_cmdline(const char *buf, size_t n, int want_script,
			      struct bot_spank_submit *s)
{
	static char copy[65536 + 1];
	char *argv[ARGV_MAX];
	struct found f = { .part = s->partition, .acct = s->account, .dir = s->chdir,
			   .o = want_script ? &sbatch_opts : &salloc_opts };
	int argc, first;

	memset(s, 0, sizeof(*s));
	argc = split_argv(buf, n, copy, sizeof(copy), argv);
	first = scan(argv, argc, &f);
	/* a heterogeneous job, "sbatch opts : opts ... script": sbatch reads
	 * every component's options before the first's (an --export-file or
	 * --wrap of any is the job's, the script follows the last); -p, -A,
	 * -D, --export and the GPUs are the first component's, the batch
	 * step's (the ":" was taken for the script until 2026-12-04) */
	while (want_script && !f.unsure && first < argc && !strcmp(argv[first], ":")) {
		char part[BOT_SPANK_SUBMIT_VALUE_MAX], acct[BOT_SPANK_SUBMIT_VALUE_MAX];
		struct found g = { .part = part, .acct = acct, .o = &sbatch_opts };

		first++;
		first += scan(argv + first, argc - first, &g);
		f.export_file |= g.export_file;
		f.wrap |= g.wrap;
		f.unsure |= g.unsure;
	}
	s->gpus = f.gpus;
	s->gpus_named = f.gpus_named;
	/* salloc has no --export */
	if (want_script && f.export_)
		put(s->export_, sizeof(s->export_), f.export_);
	s->export_file = want_script && f.export_file;
	if (f.unsure) {
		/* a later -p, -A, -D, --export or GPU option may follow the
		 * option not read: unknown, and a GPU maybe asked for */
		s->partition[0] = s->account[0] = s->chdir[0] = s->export_[0] = 0;
		s->gpus = s->gpus_named = 1;
		s->unsure = 1;
		return;
	}
	if (want_script && !f.wrap && !f.unsure && first < argc && strcmp(argv[first], "-"))
		put(s->script, sizeof(s->script), argv[first]);
}

#define WORDS_MAX 64
#define LINE_MAX_ 4096

/* Split an #SBATCH line's options into words as sbatch does: blanks
 * separate, quotes group and are removed, a word starting with '#' ends
 * the line. Returns the count; line is rewritten in place. */
static int words(char *line, char **w)
{
	char *in = line, *out = line;
	int n = 0;

	for (;;) {
		char q = 0;

		while (*in == ' ' || *in == '\t')
			in++;
		if (!*in || *in == '#' || n == WORDS_MAX)
			break;
		w[n++] = out;
		while (*in && (q || (*in != ' ' && *in != '\t'))) {
			if (!q && (*in == '"' || *in == '\''))
				q = *in++;
			else if (q && *in == q) {
				q = 0;
				in++;
			} else
				*out++ = *in++;
		}
		if (*in)
			in++;
		*out++ = 0;	/* out never passes in: the word ends in place */
	}
	return n;
}

/* Is an #SBATCH line's text (after "#SBATCH") a heterogeneous job's
 * component separator, as sbatch reads it: blanks, then "hetjob" or
 * "packjob" in any case, then a blank or the end? sbatch reads the lines
 * after it for the next component only, after the batch step's (the first
 * component's) environment is built. */
static int het_separator(const char *l)
{
	while (isspace((unsigned char)*l))
		l++;
	return (!strncasecmp(l, "hetjob", 6) && (!l[6] || isspace((unsigned char)l[6]))) ||
	       (!strncasecmp(l, "packjob", 7) && (!l[7] || isspace((unsigned char)l[7])));
}

int bot_spank_submit_script(const char *buf, size_t n, struct bot_spank_submit *s)
{
	char part[BOT_SPANK_SUBMIT_VALUE_MAX] = "", acct[BOT_SPANK_SUBMIT_VALUE_MAX] = "";
	static char dir[PATH_MAX], exp[sizeof(s->export_)];
	struct found f = { .part = part, .acct = acct, .dir = dir };
	char line[LINE_MAX_ + 1], *w[WORDS_MAX];
	size_t i = 0;
	int lines = 0;

	dir[0] = exp[0] = 0;

	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return -1;
	while (i < n && buf[i] != '\n')
		i++;
	i++;	/* past the "#!" line */
	while (i < n && ++lines <= BOT_SPANK_SCRIPT_LINES_MAX) {
		size_t e = i, k;

		while (e < n && buf[e] != '\n')
			e++;
		if (e == n)
			break;	/* cut short by the bound: not read */
		k = i;
		while (k < e && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r'))
			k++;
		if (k < e && buf[k] != '#')
			break;	/* the first command ends the block */
		if (e - i > 7 && e - i <= LINE_MAX_ && !strncmp(buf + i, "#SBATCH", 7) &&
		    (buf[i + 7] == ' ' || buf[i + 7] == '\t')) {
			size_t len = e - i - 7;

			memcpy(line, buf + i + 7, len);
			line[len] = 0;
			if (len && line[len - 1] == '\r')
				line[len - 1] = 0;
			for (size_t c = 0; c < len; c++)
				if (!line[c])
					line[c] = ' ';	/* a NUL in the line: a blank */
			if (het_separator(line))
				break;	/* the rest is a later component's */
			scan(w, words(line, w), &f);
			if (f.export_) {	/* it points into line */
				put(exp, sizeof(exp), f.export_);
				f.export_ = NULL;
			}
		}
		i = e + 1;
	}
	if (!s->partition[0] && part[0])
		put(s->partition, sizeof(s->partition), part);
	if (!s->account[0] && acct[0])
		put(s->account, sizeof(s->account), acct);
	if (!s->chdir[0] && dir[0])
		put(s->chdir, sizeof(s->chdir), dir);
	if (!s->export_[0] && exp[0])
		put(s->export_, sizeof(s->export_), exp);
	s->export_file |= f.export_file;
	/* GPU options: the command line's (or its variables') win */
	if (!s->gpus_named && f.gpus_named) {
		s->gpus = f.gpus;
		s->gpus_named = 1;
	}
	return 0;
}

int bot_spank_submit_env_gpus(const char *prefix, const char *(*get)(const char *name))
{
	static const char *const m[][2] = {
		{ "GPUS", "gpus" }, { "GPUS_PER_NODE", "gpus-per-node" },
		{ "GPUS_PER_TASK", "gpus-per-task" }, { "GPUS_PER_SOCKET", "gpus-per-socket" },
		{ "GRES", "gres" }, { "TRES_PER_TASK", "tres-per-task" },
	};
	char var[64];
	int named = 0;

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		const char *v;

		snprintf(var, sizeof(var), "%s%s", prefix, m[i][0]);
		if (!(v = get(var)) || !*v || !names_gpu(m[i][1], v))
			continue;
		if (asks_gpu(m[i][1], v))
			return 1;
		named = 1;
	}
	return named ? 0 : -1;
}

void bot_spank_srun_cmdline(const char *buf, size_t n, struct bot_spank_srun *r)
{
	static char copy[65536 + 1];
	char *argv[ARGV_MAX], part[BOT_SPANK_SUBMIT_VALUE_MAX], acct[BOT_SPANK_SUBMIT_VALUE_MAX];
	struct found f = { .part = part, .acct = acct, .o = &srun_opts };
	int argc, i = 0;

	memset(r, 0, sizeof(*r));
	argc = split_argv(buf, n, copy, sizeof(copy), argv);
	/* every component of a heterogeneous step: "opts prog args : opts
	 * prog args ..." */
	while (i < argc && !f.unsure) {
		i += scan(argv + i, argc - i, &f);
		while (i < argc && strcmp(argv[i], ":"))
			i++;
		i += i < argc;
	}
	r->unsure = f.unsure;
	/* an option not read may ask for a GPU: not ruled out */
	r->gpus = f.gpus || f.unsure;
	r->export_list = f.unsure ? NULL : f.export_;
}

/* The next item of an --export list at *p (commas inside double quotes are
 * the item's, as Slurm reads it) into out without its quotes; 0 at the end. */
static int export_item(const char **p, char *out, size_t outlen, int *fits)
{
	const char *c = *p;
	size_t k = 0;
	int q = 0;

	if (!*c)
		return 0;
	*fits = 1;
	for (; *c && (q || *c != ','); c++) {
		if (*c == '"') {
			q = !q;
			continue;
		}
		if (k + 1 < outlen)
			out[k++] = *c;
		else
			*fits = 0;
	}
	out[k] = 0;
	*p = *c ? c + 1 : c;
	return 1;
}

const char *bot_spank_export_value(const char *list, const char *name, const char *env_value,
				   char *out, size_t outlen)
{
	static char item[4096];
	size_t nl = strlen(name);
	int all = 0, named = 0, fits;
	const char *value = NULL, *p = list;

	if (!list)
		return env_value;
	while (export_item(&p, item, sizeof(item), &fits)) {
		if (!strcasecmp(item, "ALL"))
			all = 1;
		else if (!strcasecmp(item, "NONE") || !strcasecmp(item, "NIL"))
			return NULL;	/* nothing of the launcher's: srun reads no further */
		else if (!strncmp(item, name, nl) && (!item[nl] || item[nl] == '=')) {
			named = 1;
			if (!item[nl])
				value = env_value;
			else if (fits && strlen(item + nl + 1) < outlen)
				value = strcpy(out, item + nl + 1);
			else
				value = NULL;	/* too long to hold: not known */
		}
	}
	/* with ALL the launcher's environment is applied last: it wins */
	if (all)
		return env_value ? env_value : named ? value : NULL;
	return named ? value : NULL;
}

/* Does word w (len bytes) read "KEY=..." (KEY any case)? Its value. */
static const char *keyed(const char *w, size_t len, const char *key, size_t *vlen)
{
	size_t kl = strlen(key);

	if (len <= kl || strncasecmp(w, key, kl) || w[kl] != '=')
		return NULL;
	*vlen = len - kl - 1;
	return w + kl + 1;
}

int bot_spank_conf_default_partition(const char *buf, size_t n, char *out, size_t len)
{
	int found = -1;

	for (size_t i = 0; i < n;) {
		size_t e = i;
		const char *name = NULL;
		size_t name_len = 0;
		int dflt = 0;

		while (e < n && buf[e] != '\n')
			e++;
		for (size_t k = i; k < e;) {
			size_t w, vl;
			const char *v;

			while (k < e && (buf[k] == ' ' || buf[k] == '\t' || buf[k] == '\r'))
				k++;
			if (k == e || buf[k] == '#')
				break;
			w = k;
			while (k < e && buf[k] != ' ' && buf[k] != '\t' && buf[k] != '\r' &&
			       buf[k] != '#')
				k++;
			if ((v = keyed(buf + w, k - w, "PartitionName", &vl))) {
				name = v;
				name_len = vl;
			} else if ((v = keyed(buf + w, k - w, "Default", &vl)))
				dflt = vl == 3 && !strncasecmp(v, "yes", 3);
		}
		/* PartitionName=DEFAULT sets defaults, names no partition */
		if (name && dflt && name_len && name_len < len &&
		    !(name_len == 7 && !strncasecmp(name, "DEFAULT", 7)) &&
		    !memchr(name, 0, name_len)) {
			memcpy(out, name, name_len);
			out[name_len] = 0;
			found = 0;
		}
		i = e + 1;
	}
	return found;
}
