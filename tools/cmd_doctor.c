/*
 * cmd_doctor.c - `nccl-bot doctor`: is this host set up for
 * spank_nccl_bot.so? Options, the Slurm version (slurmd -V) and the
 * output; the checks are spank/doctor.h's.
 *
 *   nccl-bot doctor [--node] [--plugstack FILE] [--json] [-v]
 *
 * Usable as a Slurm HealthCheckProgram (or from a node health check
 * script): exit 0 when healthy, 1 with one line per problem on standard
 * output, 2 for a usage error. Warnings (a kill switch in place, a
 * `required` line) are printed but keep the exit status 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd.h"
#include "learn/ranklib.h"
#include "spank/doctor.h"

#ifndef BOT_RANK_LIBDIR
#define BOT_RANK_LIBDIR "/opt/nccl-bot/" PACKAGE_VERSION "/lib"
#endif
#ifndef BOT_HARVEST_HELPER
#define BOT_HARVEST_HELPER "/usr/libexec/nccl-bot/nccl-bot-harvest-read"
#endif
/* Where Debian, RPM builds and Slurm's own install put plugins. */
#define DEFAULT_PLUGIN_DIR "/usr/lib/x86_64-linux-gnu/slurm-wlm:/usr/lib64/slurm:" \
	"/usr/lib/slurm:/usr/local/lib/slurm"
#define VERSION_WAIT_MS 5000

extern char **environ;

static void doctor_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot doctor [--node] [--plugstack FILE] [--json] [-v]\n"
		"                      [--slurm-version X.Y[.Z]] [--plugin-dir DIRS] [--node-name NAME]\n"
		"                      [--enroot-dir DIR] [--apptainer-conf FILE]\n"
		"\n"
		"Checks that spank_nccl_bot.so can run here: plugstack.conf names it once, it was\n"
		"built for this Slurm's major.minor, its arguments parse, the rank library under\n"
		"lib_prefix= is a tuner and profiler plugin, both find the libraries they need\n"
		"(DT_NEEDED) here, spool_dir= is on a writable tmpfs, outbox_dir= and the\n"
		"harvest helper are in place, state_dir= exists, config= (the site\n"
		"configuration) and fabric_map= parse as the plugin reads them, and enroot's\n"
		"or Apptainer's configuration binds the library and the spool where present.\n"
		"Exit 0 healthy, 1 with one line per problem (a node health check), 2 usage.\n"
		"\n"
		"  --node                 only what a compute node needs (no state_dir=,\n"
		"                         fabric_map=, config=, kill_switch=)\n"
		"  --plugstack FILE       default plugstack.conf beside $SLURM_CONF, else\n"
		"                         /etc/slurm/plugstack.conf\n"
		"  --json                 one JSON object: healthy, problems, checks\n"
		"  -v, --verbose          print the checks that passed too\n"
		"  --slurm-version X.Y[.Z]  this Slurm's version (default: slurmd -V, else\n"
		"                         srun --version)\n"
		"  --plugin-dir DIRS      ':'-separated, for a plugin named without a path\n"
		"                         (default PluginDir= of slurm.conf beside\n"
		"                         plugstack.conf, else %s)\n"
		"  --node-name NAME       what %%n stands for (default $SLURMD_NODENAME, else the\n"
		"                         host's short name)\n"
		"  --enroot-dir DIR       enroot's configuration (default /etc/enroot)\n"
		"  --apptainer-conf FILE  default /etc/apptainer/apptainer.conf, else\n"
		"                         /etc/singularity/singularity.conf\n",
		DEFAULT_PLUGIN_DIR);
}

/* The first line prog prints for arg (a version), within VERSION_WAIT_MS;
 * 0 or -1 (not there, no answer in time). */
static int run_version(const char *prog, const char *arg, char *out, size_t len)
{
	char *const argv[] = { (char *)prog, (char *)arg, NULL };
	posix_spawn_file_actions_t fa;
	struct timespec t0, t;
	size_t n = 0;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, prog, &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		close(p[0]);
		close(p[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf = { p[0], POLLIN, 0 };
		long left;
		ssize_t r;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = VERSION_WAIT_MS - ((t.tv_sec - t0.tv_sec) * 1000 +
					  (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || poll(&pf, 1, (int)left) <= 0)
			break;
		r = read(p[0], out + n, len - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n >= len - 1 || memchr(out, '\n', n))
			break;
	}
	close(p[0]);
	out[n] = 0;
	out[strcspn(out, "\n")] = 0;
	/* What it printed is the answer; one still running after it (or
	 * silent past the bound) is killed, never waited on unbounded. */
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	return n > 0 ? 0 : -1;
}

struct out {
	int json, verbose, n;
};

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", (unsigned char)*s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void report(void *arg, const char *check, enum bot_doctor_status st, const char *msg)
{
	static const char *const word[] = { "ok", "skip", "warning", "problem" };
	struct out *o = arg;

	if (o->json) {
		printf("%s\n    {\"check\": ", o->n++ ? "," : "");
		json_str(check);
		printf(", \"status\": \"%s\", \"message\": ", word[st]);
		json_str(msg);
		putchar('}');
	} else if (st >= BOT_DOCTOR_WARN || o->verbose) {
		printf("%s: %s: %s\n", word[st], check, msg);
	}
}

int bot_cmd_doctor(int argc, char **argv)
{
	enum { O_PLUGSTACK = 256, O_SLURM_VERSION, O_PLUGIN_DIR, O_NODE_NAME, O_ENROOT,
	       O_APPTAINER, O_JSON, O_NODE };
	static const struct option opts[] = {
		{ "node", no_argument, NULL, O_NODE },
		{ "plugstack", required_argument, NULL, O_PLUGSTACK },
		{ "json", no_argument, NULL, O_JSON },
		{ "verbose", no_argument, NULL, 'v' },
		{ "slurm-version", required_argument, NULL, O_SLURM_VERSION },
		{ "plugin-dir", required_argument, NULL, O_PLUGIN_DIR },
		{ "node-name", required_argument, NULL, O_NODE_NAME },
		{ "enroot-dir", required_argument, NULL, O_ENROOT },
		{ "apptainer-conf", required_argument, NULL, O_APPTAINER },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bot_doctor_opts o;
	struct out out = { 0, 0, 0 };
	char plugstack[PATH_MAX], given[PATH_MAX], confabs[PATH_MAX], host[256], ver[256];
	char err[PATH_MAX + 128];
	const char *conf, *slurm_version = NULL;
	int c, problems;

	memset(&o, 0, sizeof(o));
	o.plugin_dir_default = DEFAULT_PLUGIN_DIR;
	o.default_lib_prefix = BOT_RANK_LIBDIR;
	o.default_helper = BOT_HARVEST_HELPER;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case O_NODE: o.node_only = 1; break;
		case O_PLUGSTACK: o.plugstack = optarg; break;
		case O_JSON: out.json = 1; break;
		case 'v': out.verbose = 1; break;
		case O_SLURM_VERSION: slurm_version = optarg; break;
		case O_PLUGIN_DIR: o.plugin_dir = optarg; break;
		case O_NODE_NAME: o.node = optarg; break;
		case O_ENROOT: o.enroot_dir = optarg; break;
		case O_APPTAINER: o.apptainer_conf = optarg; break;
		case 'h':
			doctor_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "nccl-bot: doctor: unknown option or missing value: %s\n",
				argv[optind - 1]);
			doctor_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nccl-bot: doctor: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	/* every usage error before anything is probed (slurmd -V) */
	if (o.plugstack && !o.plugstack[0]) {
		fprintf(stderr, "nccl-bot: doctor: --plugstack: empty path (name plugstack.conf, "
			"or leave the option out for the default)\n");
		return 2;
	}
	{
		const char *const given_opts[][2] = {
			{ "--plugin-dir", o.plugin_dir }, { "--node-name", o.node },
			{ "--enroot-dir", o.enroot_dir }, { "--apptainer-conf", o.apptainer_conf },
		};

		for (size_t i = 0; i < sizeof(given_opts) / sizeof(given_opts[0]); i++)
			if (given_opts[i][1] && !given_opts[i][1][0]) {
				fprintf(stderr, "nccl-bot: doctor: %s: empty (leave the option out "
					"for the default)\n", given_opts[i][0]);
				return 2;
			}
	}
	/* A path given relative is the user's, from here (plugstack.conf's
	 * own includes are another matter: Slurm wants those absolute). */
	if (o.plugstack && o.plugstack[0] != '/') {
		if (bot_ranklib_abspath(o.plugstack, given, sizeof(given), err, sizeof(err)) < 0) {
			fprintf(stderr, "nccl-bot: doctor: --plugstack %s\n", err);
			return 2;
		}
		o.plugstack = given;
	}
	if (!o.plugstack) {
		conf = getenv("SLURM_CONF");
		if (conf && *conf && conf[0] != '/') {
			if (bot_ranklib_abspath(conf, confabs, sizeof(confabs), err,
						sizeof(err)) < 0) {
				fprintf(stderr, "nccl-bot: doctor: SLURM_CONF %s\n", err);
				return 2;
			}
			conf = confabs;
		}
		if (conf && conf[0] == '/' && strrchr(conf, '/') &&
		    (size_t)(strrchr(conf, '/') - conf) + sizeof("/plugstack.conf") <=
		    sizeof(plugstack)) {
			snprintf(plugstack, sizeof(plugstack), "%.*s/plugstack.conf",
				 (int)(strrchr(conf, '/') - conf), conf);
			o.plugstack = plugstack;
		} else {
			o.plugstack = "/etc/slurm/plugstack.conf";
		}
	}
	if (slurm_version) {
		if (bot_doctor_parse_version(slurm_version, &o.slurm_version) < 0) {
			fprintf(stderr, "nccl-bot: doctor: --slurm-version '%s': want X.Y or "
				"X.Y.Z (22.05.8)\n", slurm_version);
			return 2;
		}
		o.slurm_version_from = "--slurm-version";
	} else {
		/* A health check runs without PATH (slurmd's HealthCheckProgram
		 * does): the usual places after PATH's. */
		static const char *const prog[][2] = {
			{ "slurmd", "-V" }, { "/usr/sbin/slurmd", "-V" },
			{ "/usr/local/sbin/slurmd", "-V" }, { "srun", "--version" },
			{ "/usr/bin/srun", "--version" }, { "/usr/local/bin/srun", "--version" },
		};

		for (size_t i = 0; i < sizeof(prog) / sizeof(prog[0]); i++)
			if (run_version(prog[i][0], prog[i][1], ver, sizeof(ver)) == 0 &&
			    bot_doctor_parse_version(ver, &o.slurm_version) == 0) {
				o.slurm_version_from = i < 3 ? "slurmd -V" : "srun --version";
				break;
			}
	}
	if (!o.node) {
		const char *v = getenv("SLURMD_NODENAME");

		if (v && *v) {
			o.node = v;
		} else if (gethostname(host, sizeof(host)) == 0) {
			host[sizeof(host) - 1] = 0;
			host[strcspn(host, ".")] = 0;
			o.node = host;
		}
	}
	if (out.json)
		printf("{\n  \"checks\": [");
	problems = bot_doctor_run(&o, report, &out);
	if (out.json)
		printf("\n  ],\n  \"problems\": %d,\n  \"healthy\": %s\n}\n", problems,
		       problems ? "false" : "true");
	else if (out.verbose)
		printf("%s\n", problems ? "not healthy" : "healthy");
	fflush(stdout);
	return problems ? 1 : 0;
}
