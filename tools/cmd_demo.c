/*
 * cmd_demo.c - `nccl-bot demo`: the product in one command on this host
 * alone, no GPU and no cluster of one's own. Two emulated training jobs
 * under `srun --nccl-bot` on a throwaway four-node Slurm cluster, the
 * second deciding from what the first measured (harvest, ship, compact),
 * their srun summary lines and the second one's report.
 *
 * The work is a shell script, tools/demo.sh (installed as
 * $(pkgdatadir)/demo.sh), because the cluster it starts is the test
 * cluster's, tests/slurm/cluster.sh (installed as $(pkgdatadir)/cluster.sh).
 * This file owns what is around it:
 *   - the checks made before anything starts (root, Slurm and munge
 *     installed, every file the script needs built or installed), each
 *     failing with what is missing and how to get it: never a half-started
 *     cluster;
 *   - the files: from the build tree when this is the build tree's
 *     nccl-bot (/proc/self/exe), else the installed ones (pkgdatadir,
 *     pkglibexecdir, the SPANK plugin's and the rank library's directories);
 *   - the temporary directory (removed at the end unless --keep);
 *   - the progress line on a terminal (tools/progress.h), drawn from the
 *     script's "@@ N TEXT" lines; nothing of it when stdout or stderr is not
 *     a terminal;
 *   - signals and what outlives the script: the script runs in a process
 *     group of its own, so that Ctrl-C reaches this process only, which
 *     passes the signal (SIGINT, SIGTERM, SIGHUP) on to the script alone (its
 *     trap cancels the jobs, then stops every daemon by its PID); this process is the child subreaper of all it
 *     starts (PR_SET_CHILD_SUBREAPER), so slurmstepd and the ranks, which
 *     leave slurmd's process tree, stay its descendants, and once the script
 *     has ended every descendant still running is stopped (SIGTERM, then
 *     SIGKILL) before it exits.
 *
 * Exit status: 0 when job 2 saved time against AUTO (its line and the truth);
 * 1 when it does not, or something failed or is missing; 2 usage; 128+N
 * after signal N.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "tools/progress.h"

#ifndef BOT_DEMO_BUILDDIR
#define BOT_DEMO_BUILDDIR "/nonexistent"
#endif
#ifndef BOT_DEMO_SRCDIR
#define BOT_DEMO_SRCDIR "/nonexistent"
#endif
#ifndef BOT_DEMO_PKGDATADIR
#define BOT_DEMO_PKGDATADIR "/usr/share/nccl-bot"
#endif
#ifndef BOT_DEMO_PKGLIBEXECDIR
#define BOT_DEMO_PKGLIBEXECDIR "/usr/libexec/nccl-bot"
#endif
#ifndef BOT_DEMO_SPANKDIR
#define BOT_DEMO_SPANKDIR "/usr/lib/slurm"
#endif
#ifndef BOT_DEMO_RANKDIR
#define BOT_DEMO_RANKDIR "/opt/nccl-bot/lib"
#endif

#define DEMO_STAGES 7		/* the script's "@@ N" lines, 1..7 */
#define DEMO_STOP_S 60		/* seconds the script has to stop after a signal */
#define DEMO_REAP_S 5		/* seconds leftovers have after SIGTERM */

/* The files the script needs, from the build tree or installed. */
struct demo_files {
	char bot[PATH_MAX], script[PATH_MAX], cluster[PATH_MAX], plugin[PATH_MAX];
	char libdir[PATH_MAX], lib[PATH_MAX], helper[PATH_MAX], emu[PATH_MAX];
	int build_tree;
	uid_t owner;	/* who may own the scripts: root, or the build tree's nccl-bot's owner */
};

static volatile sig_atomic_t demo_signal;

static void demo_on_signal(int sig)
{
	if (!demo_signal)
		demo_signal = sig;
}

static void demo_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot demo [--keep] [--svg FILE]\n"
		"\n"
		"Show what nccl-bot does, on this host alone (no GPU, no cluster of your own):\n"
		"start a throwaway Slurm cluster of four nodes here (its own munged, slurmctld\n"
		"and slurmd, in a temporary directory), run two emulated training jobs with\n"
		"`srun --nccl-bot` on a simulated fabric where NCCL's cost model is wrong for\n"
		"some allreduces, the second job deciding from what the first measured\n"
		"(harvest, ship, compact), print both jobs' summary lines and the second one's\n"
		"report, then stop every daemon it started (also on Ctrl-C) and remove the\n"
		"directory. Exit 0 when job 2 saved time against AUTO (its line and the truth).\n"
		"Needs root (slurmd runs as root) and Slurm and munge installed (scripts/setup\n"
		"in the source tree installs them). Takes about 10 s.\n"
		"\n"
		"  --keep      keep the temporary directory (configuration, logs, the jobs'\n"
		"              output, state and reports); its path is printed\n"
		"  --svg FILE  where the report's picture goes, when `nccl-bot report` draws\n"
		"              one (default nccl-bot-demo.svg in the current directory)\n");
}

static int demo_exists(const char *path, int mode)
{
	return access(path, mode) == 0;
}

/* PROG on PATH or in /usr/sbin (Debian's slurmctld, slurmd, munged). */
static int demo_have_prog(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n && n < sizeof(buf) - strlen(prog) - 2) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
			if (demo_exists(buf, X_OK))
				return 1;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	snprintf(buf, sizeof(buf), "/usr/sbin/%s", prog);
	return demo_exists(buf, X_OK);
}

static int demo_path(char *dst, const char *dir, const char *name)
{
	int n = snprintf(dst, PATH_MAX, "%s/%s", dir, name);

	return n > 0 && n < PATH_MAX ? 0 : -1;
}

/* The build tree's files when this is the build tree's nccl-bot, else the
 * installed ones. "This is the build tree's" means the very file: the
 * build path (baked in at build time) holds a regular file, not a link,
 * with this process's device and inode. A path compared after realpath()
 * would let whoever can write the old build path (a tree since removed,
 * rpmbuild's under /tmp) point a link at the installed nccl-bot and have
 * root's demo run their scripts. */
static int demo_find_files(struct demo_files *f)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct stat built, me;
	int bad = 0;

	memset(f, 0, sizeof(*f));
	if (n <= 0) {
		fprintf(stderr, "nccl-bot: demo: /proc/self/exe: %s\n", strerror(errno));
		return -1;
	}
	self[n] = 0;
	snprintf(f->bot, sizeof(f->bot), "%s", self);
	f->build_tree = lstat(BOT_DEMO_BUILDDIR "/nccl-bot", &built) == 0 && S_ISREG(built.st_mode) &&
			stat("/proc/self/exe", &me) == 0 && built.st_dev == me.st_dev &&
			built.st_ino == me.st_ino;
	/* whoever owns the build tree's nccl-bot already decides what it runs */
	f->owner = f->build_tree ? built.st_uid : 0;
	if (f->build_tree) {
		bad |= demo_path(f->script, BOT_DEMO_SRCDIR, "tools/demo.sh");
		bad |= demo_path(f->cluster, BOT_DEMO_SRCDIR, "tests/slurm/cluster.sh");
		bad |= demo_path(f->plugin, BOT_DEMO_BUILDDIR, "spank/spank_nccl_bot.so");
		bad |= demo_path(f->libdir, BOT_DEMO_BUILDDIR, "tuner");
		bad |= demo_path(f->helper, BOT_DEMO_BUILDDIR, "nccl-bot-harvest-read");
		bad |= demo_path(f->emu, BOT_DEMO_BUILDDIR, "tests/emulator/nccl-emu");
	} else {
		bad |= demo_path(f->script, BOT_DEMO_PKGDATADIR, "demo.sh");
		bad |= demo_path(f->cluster, BOT_DEMO_PKGDATADIR, "cluster.sh");
		bad |= demo_path(f->plugin, BOT_DEMO_SPANKDIR, "spank_nccl_bot.so");
		snprintf(f->libdir, sizeof(f->libdir), "%s", BOT_DEMO_RANKDIR);
		bad |= demo_path(f->helper, BOT_DEMO_PKGLIBEXECDIR, "nccl-bot-harvest-read");
		bad |= demo_path(f->emu, BOT_DEMO_PKGLIBEXECDIR, "nccl-emu");
	}
	bad |= demo_path(f->lib, f->libdir, "libnccl-tuner-bot.so");
	if (bad) {
		fprintf(stderr, "nccl-bot: demo: a path of its files is longer than PATH_MAX\n");
		return -1;
	}
	return 0;
}

/*
 * Everything the demo needs, before anything starts: 0, or 1 after one
 * message per problem saying what is missing and how to get it.
 */
static int demo_check(const struct demo_files *f)
{
	static const char *const progs[] = { "slurmctld", "slurmd", "munged", "munge", "mungekey",
					     "srun", "sinfo", "scancel" };
	char missing[256] = "";
	const char *how = f->build_tree ? "scripts/setup installs it, with the headers, and rebuilds"
					: "install nccl-bot again (the package or `make install`)";
	int bad = 0;

	if (geteuid() != 0) {
		fprintf(stderr,
			"nccl-bot: demo: must run as root: its throwaway cluster's slurmd runs as root\n"
			"  and munged as user munge (in a temporary directory; nothing of the host's\n"
			"  Slurm or munge is used or changed). Run it as root: sudo nccl-bot demo\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		if (!demo_have_prog(progs[i])) {
			strcat(missing, " ");
			strcat(missing, progs[i]);
		}
	if (*missing) {
		fprintf(stderr,
			"nccl-bot: demo: Slurm or munge is not installed (missing:%s).\n"
			"  scripts/setup in nccl-bot's source tree installs them (Debian 12: apt-get install\n"
			"  slurmctld slurmd slurm-client munge libslurm-dev, then rebuild nccl-bot so that\n"
			"  its SPANK plugin is built).\n",
			missing);
		bad = 1;
	}
	if (!demo_exists(f->plugin, R_OK)) {
		fprintf(stderr,
			"nccl-bot: demo: %s: no SPANK plugin (configure found no Slurm headers, or a\n"
			"  sanitizer build): %s\n",
			f->plugin, f->build_tree ? "scripts/setup installs libslurm-dev and rebuilds" : how);
		bad = 1;
	}
	if (!demo_exists(f->script, R_OK) || !demo_exists(f->cluster, R_OK)) {
		fprintf(stderr, "nccl-bot: demo: %s or %s is missing: %s\n", f->script, f->cluster, how);
		bad = 1;
	}
	for (int k = 0; k < 2 && !bad; k++) {
		/* root runs them: they must be root's (or, in a build tree, its
		 * nccl-bot's owner's) and writable by that owner alone */
		const char *p = k ? f->cluster : f->script;
		struct stat st;

		if (stat(p, &st) == 0 && ((st.st_uid != 0 && st.st_uid != f->owner) ||
					  (st.st_mode & 022))) {
			fprintf(stderr, "nccl-bot: demo: %s is owned by uid %u, mode %03o: the demo runs "
				"it as root, so it must be root's (or this nccl-bot's owner's) and "
				"writable by its owner alone\n", p,
				(unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
			bad = 1;
		}
	}
	if (!demo_exists(f->lib, R_OK) || !demo_exists(f->helper, X_OK)) {
		fprintf(stderr, "nccl-bot: demo: %s or %s is missing: %s\n", f->lib, f->helper,
			f->build_tree ? "run make" : how);
		bad = 1;
	}
	if (!demo_exists(f->emu, X_OK)) {
		fprintf(stderr, "nccl-bot: demo: %s, the NCCL emulator, is missing: %s\n", f->emu,
			f->build_tree ? "run make (it builds tests/emulator/nccl-emu)" : how);
		bad = 1;
	}
	return bad;
}

/* ---- descendants ---------------------------------------------------------- */

/* The parent of pid from /proc/PID/stat, or -1 (also for a zombie: it has
 * ended, only its status waits to be collected). */
static pid_t demo_ppid(pid_t pid)
{
	char path[64], buf[1024], *p, state;
	ssize_t n;
	int fd;
	long ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the command name may hold anything */
	if (!p || sscanf(p + 1, " %c %ld", &state, &ppid) != 2 || state == 'Z')
		return -1;
	return (pid_t)ppid;
}

/*
 * Every descendant of this process (up to max) into out; their number.
 * The processes' parents are read once each, then each chain followed up
 * to this process, or to 1 or a process already gone.
 */
static size_t demo_descendants(pid_t *out, size_t max)
{
	enum { CAP = 65536 };
	static pid_t pids[CAP], parents[CAP];
	size_t n = 0, k = 0;
	pid_t self = getpid();
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < CAP) {
		char *end;
		long v = strtol(e->d_name, &end, 10);

		if (*end || v <= 0 || v == self)
			continue;
		pids[n] = (pid_t)v;
		parents[n] = demo_ppid((pid_t)v);
		n++;
	}
	closedir(d);
	for (size_t i = 0; i < n && k < max; i++) {
		pid_t p = parents[i];

		for (int depth = 0; depth < 64 && p > 1 && p != self; depth++) {
			pid_t next = -1;

			for (size_t j = 0; j < n; j++)
				if (pids[j] == p) {
					next = parents[j];
					break;
				}
			p = next;
		}
		if (p == self)
			out[k++] = pids[i];
	}
	return k;
}

/* Collects the status of every child that has ended (orphans that this
 * subreaper inherited included); the script's into *status. */
static void demo_reap(pid_t child, int *status, int *child_done)
{
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
		if (p == child) {
			*status = st;
			*child_done = 1;
		}
}

/* ", comm(pid)" appended to names, as long as it fits. */
static void demo_name(pid_t pid, char *names, size_t len)
{
	char path[64], comm[32] = "?";
	size_t used = strlen(names);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		comm[n > 0 ? n : 0] = 0;
		comm[strcspn(comm, "\n")] = 0;
	}
	if (used < len)
		snprintf(names + used, len - used, "%s%s(%d)", used ? ", " : "", comm, (int)pid);
}

/*
 * Stop every descendant still running: SIGTERM, DEMO_REAP_S seconds, then
 * SIGKILL. The number left after that (0 but for a process that cannot
 * be killed); *stopped: how many there were, names: which.
 */
static size_t demo_stop_descendants(size_t *stopped, char *names, size_t len, pid_t child,
				    int *status, int *child_done)
{
	static pid_t left[4096];
	size_t n;
	struct timespec ts = { 0, 50 * 1000000 };

	demo_reap(child, status, child_done);
	n = demo_descendants(left, 4096);
	*stopped = n;
	for (size_t i = 0; i < n; i++) {
		demo_name(left[i], names, len);
		kill(left[i], SIGTERM);
	}
	for (int i = 0; n && i < DEMO_REAP_S * 20; i++) {
		nanosleep(&ts, NULL);
		demo_reap(child, status, child_done);
		n = demo_descendants(left, 4096);
	}
	for (int round = 0; n && round < 20; round++) {
		for (size_t i = 0; i < n; i++)
			kill(left[i], SIGKILL);
		nanosleep(&ts, NULL);
		demo_reap(child, status, child_done);
		n = demo_descendants(left, 4096);
	}
	return n;
}

static int demo_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) ? -1 : 0;
	return unlink(path) ? -1 : 0;
}

/* ---- the script's output -------------------------------------------------- */

struct demo_stream {
	int fd;
	FILE *to;		/* where its lines go */
	char buf[4096];
	size_t len;
};

struct demo_view {
	struct bot_progress prog;
	char what[160];
	char text[120];
	int stage;
	struct timespec since;
	long shown_s;		/* the seconds on the line; -1: redraw */
};

static double demo_elapsed(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* The line: "nccl-bot: demo: TEXT (S s)  43% (3 of 7)", redrawn when the
 * stage or its seconds change, or after a line of output cleared it. */
static void demo_draw(struct demo_view *v)
{
	long s = (long)demo_elapsed(&v->since);

	if (!v->prog.on || !v->stage || (s == v->shown_s && v->prog.drawn))
		return;
	v->shown_s = s;
	snprintf(v->what, sizeof(v->what), "demo: %s (%ld s)", v->text, s);
	v->prog.last_ms = 0;
	bot_progress_update(&v->prog, (uint64_t)v->stage);
}

/* One complete line of a stream: progress, or shown. */
static void demo_line(struct demo_view *v, struct demo_stream *s, const char *line)
{
	if (s->to == stdout && !strncmp(line, "@@ ", 3)) {
		char *end;
		long st = strtol(line + 3, &end, 10);

		if (st >= 1 && st <= DEMO_STAGES && *end == ' ') {
			v->stage = (int)st;
			snprintf(v->text, sizeof(v->text), "%s", end + 1);
			clock_gettime(CLOCK_MONOTONIC, &v->since);
			v->shown_s = -1;
			demo_draw(v);
		}
		return;
	}
	bot_progress_end(&v->prog);
	fprintf(s->to, "%s\n", line);
	fflush(s->to);
}

/* Reads what is there; 0 at its end (or an error), 1 otherwise. */
static int demo_read(struct demo_view *v, struct demo_stream *s)
{
	ssize_t n = read(s->fd, s->buf + s->len, sizeof(s->buf) - 1 - s->len);
	char *nl;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 1;
	if (n <= 0) {
		if (s->len) {
			s->buf[s->len] = 0;
			demo_line(v, s, s->buf);
			s->len = 0;
		}
		return 0;
	}
	s->len += (size_t)n;
	s->buf[s->len] = 0;
	while ((nl = strchr(s->buf, '\n'))) {
		*nl = 0;
		demo_line(v, s, s->buf);
		s->len -= (size_t)(nl + 1 - s->buf);
		memmove(s->buf, nl + 1, s->len + 1);
	}
	if (s->len == sizeof(s->buf) - 1) {	/* a line longer than the buffer */
		demo_line(v, s, s->buf);
		s->len = 0;
	}
	return 1;
}

/*
 * The script, started with its stdout and stderr on pipes (*out, *err), in a
 * process group of its own (a Ctrl-C reaches this process only, which
 * passes it on) and with SIGTERM should this process die first. Its PID,
 * or -1 after a message.
 */
static pid_t demo_spawn(const char *script, int *out, int *err)
{
	struct sigaction sa;
	int po[2], pe[2];
	pid_t child;

	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		fprintf(stderr, "nccl-bot: demo: pipe: %s\n", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = demo_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	fflush(NULL);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "nccl-bot: demo: fork: %s\n", strerror(errno));
		return -1;
	}
	if (child == 0) {
		int null = open("/dev/null", O_RDONLY);

		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		execl("/bin/sh", "sh", script, (char *)NULL);
		_exit(127);
	}
	setpgid(child, child);
	close(po[1]);
	close(pe[1]);
	*out = po[0];
	*err = pe[0];
	return child;
}

/*
 * The script's output relayed until both its streams end: "@@" lines drawn
 * as progress, the others shown; a signal received passed on to it, and
 * after DEMO_STOP_S seconds more its process group killed. Collects its
 * status where it ends first (*status, *child_done).
 */
static void demo_relay(pid_t child, int out_fd, int err_fd, int *status, int *child_done)
{
	struct demo_view v;
	struct demo_stream out = { .fd = out_fd, .to = stdout }, err = { .fd = err_fd, .to = stderr };
	int open_streams = 2, rc;
	time_t stop_by = 0;

	memset(&v, 0, sizeof(v));
	bot_progress_start(&v.prog, v.what, DEMO_STAGES);
	if (!isatty(STDOUT_FILENO))
		v.prog.on = 0;
	while (open_streams) {
		struct pollfd pfd[2] = { { out.fd, POLLIN, 0 }, { err.fd, POLLIN, 0 } };

		if (demo_signal && !stop_by) {
			bot_progress_end(&v.prog);
			kill(child, demo_signal);
			stop_by = time(NULL) + DEMO_STOP_S;
		}
		if (stop_by && time(NULL) > stop_by) {
			fprintf(stderr, "nccl-bot: demo: the script did not stop within %d s: killed\n",
				DEMO_STOP_S);
			kill(-child, SIGKILL);
			kill(child, SIGKILL);
			break;
		}
		rc = poll(pfd, 2, 200);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc > 0) {
			if (out.fd >= 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !demo_read(&v, &out)) {
				close(out.fd);
				out.fd = -1;
				open_streams--;
			}
			if (err.fd >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !demo_read(&v, &err)) {
				close(err.fd);
				err.fd = -1;
				open_streams--;
			}
		}
		demo_reap(child, status, child_done);
		demo_draw(&v);
	}
	bot_progress_end(&v.prog);
	if (out.fd >= 0)
		close(out.fd);
	if (err.fd >= 0)
		close(err.fd);
}

/* ---- the command ------------------------------------------------------------ */

static void demo_env(const struct demo_files *f, const char *dir, const char *svg, int keep)
{
	setenv("NB_DEMO_DIR", dir, 1);
	setenv("NB_DEMO_CLUSTER", f->cluster, 1);
	setenv("NB_DEMO_BOT", f->bot, 1);
	setenv("NB_DEMO_PLUGIN", f->plugin, 1);
	setenv("NB_DEMO_LIBDIR", f->libdir, 1);
	setenv("NB_DEMO_HELPER", f->helper, 1);
	setenv("NB_DEMO_EMU", f->emu, 1);
	setenv("NB_DEMO_SVG", svg, 1);
	if (keep)
		setenv("NB_DEMO_KEEP", "1", 1);
	else
		unsetenv("NB_DEMO_KEEP");
	/* the host's nccl-bot settings stay out of the demo's cluster */
	setenv("NCCL_BOT_CONFIG", "none", 1);
	unsetenv("NCCL_BOT_STATE");
	unsetenv("NCCL_BOT_REPORT_DIR");
	unsetenv("SLURM_CONF");
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int bot_cmd_demo(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "keep", no_argument, NULL, 'k' },
		{ "svg", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct demo_files f;
	char dir[PATH_MAX], svg[PATH_MAX], cwd[PATH_MAX], names[512] = "";
	const char *svg_opt = "nccl-bot-demo.svg", *tmp = getenv("TMPDIR");
	int keep = 0, c, out_fd, err_fd, status = 0, child_done = 0;
	pid_t child;
	size_t stopped, left;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k':
			keep = 1;
			break;
		case 's':
			/* refused now, not after the cluster ran: the picture
			 * is written last */
			if (!*optarg || is_dir(optarg)) {
				fprintf(stderr, "nccl-bot: demo: --svg '%s': want a file name%s\n",
					optarg, *optarg ? ", not a directory" : "");
				return 2;
			}
			svg_opt = optarg;
			break;
		case 'h':
			demo_usage(stdout);
			return 0;
		default:
			demo_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "nccl-bot: demo: unexpected argument '%s'\n", argv[optind]);
		demo_usage(stderr);
		return 2;
	}
	if (svg_opt[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(svg, sizeof(svg), "%s", svg_opt);
	else if (snprintf(svg, sizeof(svg), "%s/%s", cwd, svg_opt) >= (int)sizeof(svg)) {
		fprintf(stderr, "nccl-bot: demo: --svg: the path is too long\n");
		return 2;
	}
	{
		/* the picture's directory must exist now, not after the jobs */
		char why[PATH_MAX + 64];

		if (bot_cmd_out_problem(svg, why, sizeof(why)) < 0) {
			fprintf(stderr, "nccl-bot: demo: --svg '%s': %s\n", svg_opt, why);
			return 2;
		}
	}
	if (demo_find_files(&f) || demo_check(&f))
		return 1;
	if (snprintf(dir, sizeof(dir), "%s/nccl-bot-demo.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
		    (int)sizeof(dir) ||
	    !mkdtemp(dir)) {
		fprintf(stderr, "nccl-bot: demo: cannot make a temporary directory in %s: %s\n",
			tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return 1;
	}
	/* the script and the cluster's configuration name it from other
	 * working directories: an absolute path, also for a relative TMPDIR */
	if (dir[0] != '/') {
		char abs[PATH_MAX];

		if (!realpath(dir, abs)) {
			fprintf(stderr, "nccl-bot: demo: %s: %s\n", dir, strerror(errno));
			rmdir(dir);
			return 1;
		}
		snprintf(dir, sizeof(dir), "%s", abs);
	}
	/* slurm.conf names paths in it unquoted: a blank or '#' there would
	 * stop slurmctld with a parse error instead of this message */
	if (strpbrk(dir, " \t\n\r#\"'=\\")) {
		fprintf(stderr, "nccl-bot: demo: TMPDIR=%s: the cluster's configuration cannot name "
			"a path with blanks, '#', quotes, '=' or '\\' (Slurm's slurm.conf); use another "
			"TMPDIR\n", tmp);
		rmdir(dir);
		return 1;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		fprintf(stderr, "nccl-bot: demo: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
		rmdir(dir);
		return 1;
	}
	demo_env(&f, dir, svg, keep);
	child = demo_spawn(f.script, &out_fd, &err_fd);
	if (child < 0) {
		rmdir(dir);
		return 1;
	}
	demo_relay(child, out_fd, err_fd, &status, &child_done);
	while (!child_done && waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	child_done = 1;
	/* what the script's cluster_down did not stop (slurmstepd, ranks) */
	left = demo_stop_descendants(&stopped, names, sizeof(names), child, &status, &child_done);
	if (stopped)
		fprintf(stderr, "nccl-bot: demo: %zu process(es) of the demo were still running: "
			"stopped: %s\n", stopped, names);
	if (left)
		fprintf(stderr, "nccl-bot: demo: %zu process(es) of the demo could not be stopped\n", left);
	if (keep) {
		printf("kept: %s (--keep)\n", dir);
	} else {
		struct stat st;

		if (!lstat(dir, &st) && nftw(dir, demo_rm_one, 16, FTW_DEPTH | FTW_PHYS))
			fprintf(stderr, "nccl-bot: demo: cannot remove %s: %s\n", dir, strerror(errno));
	}
	if (!left)
		printf("stopped: every process the demo started%s\n",
		       keep ? "" : "; its temporary directory removed");
	fflush(stdout);
	if (demo_signal)
		return 128 + demo_signal;
	if (left)
		return 1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status) == 0 ? 0 : 1;
	return 1;
}
