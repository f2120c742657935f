/*
 * cmd_fabric.c - `nccl-bot fabric`: the fabric map from Slurm's files, and
 * what a job on some nodes gets (doc/slurm.md, "Fabric tools").
 *
 *   nccl-bot fabric generate [--slurm-conf FILE] [--topology FILE]
 *                            [--by RULE] [-o FILE]
 *   nccl-bot fabric --map FILE NODELIST
 *
 * generate reads slurm.conf's NodeName lines (features) and topology.conf
 * (switches) with spank/fabricgen.h and writes the fabric map
 * spank/fabricmap.h reads ("NODE FABRIC" lines, sorted by node), each node
 * without a fabric as a comment with the reason. NODELIST (a Slurm host
 * list) shows each node's fabric in the map and what a step on all of them
 * plans from: the fabric's state, or the prior and why (the same rule as
 * srun: spank/fabricmap.h's bot_fabricmap_step_add).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "common/readall.h"
#include "common/writeall.h"
#include "spank/fabricgen.h"
#include "spank/fabricmap.h"

static void fabric_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot fabric generate [--slurm-conf FILE] [--topology FILE] [--by RULE]\n"
		"                                [-o FILE]\n"
		"       nccl-bot fabric --map FILE NODELIST\n"
		"\n"
		"  generate  write the fabric map (one \"NODE FABRIC\" line per node, sorted) from\n"
		"            slurm.conf's NodeName lines and topology.conf; nodes without a\n"
		"            fabric are comments saying why\n"
		"  NODELIST  each node's fabric in the map (a Slurm host list: n[1-4],gpu7), and\n"
		"            what a step on all of them plans from: one fabric's state, or the\n"
		"            prior and why\n"
		"\n"
		"  --slurm-conf FILE  default $SLURM_CONF, else /etc/slurm/slurm.conf\n"
		"  --topology FILE    default topology.conf beside slurm.conf, when it exists\n"
		"  --by RULE          feature:PREFIX (default feature:fabric_): the node's one feature\n"
		"                     starting with PREFIX, PREFIX cut off; features: all of the\n"
		"                     node's features, sorted, joined with '-'; top-switch: the\n"
		"                     topmost switch above the node in topology.conf\n"
		"  -o FILE            write the map there (temporary name, fsync, rename); default\n"
		"                     standard output\n"
		"  --map FILE         the fabric map (plugstack.conf's fabric_map=)\n");
}

static int read_file(const char *path, uint8_t **buf, size_t *len)
{
	const struct bot_open_rule rule = { .what = "Slurm configuration",
					    .max = BOT_FABRICGEN_MAX_BYTES };
	char err[PATH_MAX + 256];

	if (bot_read_at(AT_FDCWD, path, path, &rule, buf, len, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: fabric: %s\n", err);
		return -1;
	}
	return 0;
}

static int write_out(const char *path, const char *text, size_t len)
{
	const struct bot_write_rule r = { .mode = 0644, .chmod = 1, .sync_dir = 1 };
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], err[PATH_MAX + 256];
	int dfd, rc;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash == path ? 1 : slash - path) : 1,
		 slash ? path : ".");
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		fprintf(stderr, "nccl-bot: fabric: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	rc = bot_write_whole_at(dfd, slash ? dir : NULL, slash ? slash + 1 : path, text, len, &r,
				err, sizeof(err));
	close(dfd);
	if (rc < 0) {
		fprintf(stderr, "nccl-bot: fabric: %s\n", err);
		return -1;
	}
	return 0;
}

/* text: a growing buffer */
struct text {
	char *s;
	size_t n, cap;
};

static int put(struct text *t, const char *a, const char *b, const char *c)
{
	size_t need = strlen(a) + strlen(b) + strlen(c) + 2;

	if (t->n + need > t->cap) {
		size_t cap = (t->cap + need) * 2;
		char *s = realloc(t->s, cap);

		if (!s)
			return -1;
		t->s = s;
		t->cap = cap;
	}
	t->n += (size_t)sprintf(t->s + t->n, "%s%s%s\n", a, b, c);
	return 0;
}

static int generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slurm-conf", 1, 0, 'c' }, { "topology", 1, 0, 't' }, { "by", 1, 0, 'b' },
		{ "output", 1, 0, 'o' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *conf = getenv("SLURM_CONF"), *topo = NULL, *rule = "feature:fabric_",
		   *out = NULL;
	char topo_buf[PATH_MAX], fabric[BOT_FABRICGEN_NAME], why[512], err[PATH_MAX + 512];
	struct bot_fabricgen g = { 0 };
	struct text t = { 0 };
	size_t mapped = 0, left = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	int o, rc = 1;

	optind = 1;
	while ((o = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': conf = optarg; break;
		case 't': topo = optarg; break;
		case 'b': rule = optarg; break;
		case 'o': out = optarg; break;
		case 'h': fabric_usage(stdout); return 0;
		default: fabric_usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fabric_usage(stderr);
		return 2;
	}
	if (!bot_fabricgen_rule_ok(rule)) {
		fprintf(stderr, "nccl-bot: fabric generate: --by '%s': want feature:PREFIX, "
			"features or top-switch\n", rule);
		return 2;
	}
	if (!conf || !*conf)
		conf = "/etc/slurm/slurm.conf";
	if (!topo) {
		const char *slash = strrchr(conf, '/');

		snprintf(topo_buf, sizeof(topo_buf), "%.*stopology.conf",
			 slash ? (int)(slash - conf + 1) : 0, conf);
		if (access(topo_buf, F_OK) == 0)
			topo = topo_buf;
	}
	if (read_file(conf, &buf, &len) < 0)
		goto out;
	if (bot_fabricgen_slurmconf(&g, conf, (const char *)buf, len, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: fabric generate: %s\n", err);
		goto out;
	}
	free(buf);
	buf = NULL;
	if (topo) {
		if (read_file(topo, &buf, &len) < 0)
			goto out;
		if (bot_fabricgen_topology(&g, topo, (const char *)buf, len, err, sizeof(err)) < 0) {
			fprintf(stderr, "nccl-bot: fabric generate: %s\n", err);
			goto out;
		}
	} else if (!strcmp(rule, "top-switch")) {
		fprintf(stderr, "nccl-bot: fabric generate: --by top-switch needs topology.conf "
			"(--topology)\n");
		goto out;
	}
	if (put(&t, "# nccl-bot fabric map: NODE FABRIC (nccl-bot fabric generate --by ", rule,
		")") < 0)
		goto oom;
	for (size_t i = 0; i < g.n; i++) {
		int r = bot_fabricgen_fabric(&g, &g.node[i], rule, fabric, sizeof(fabric), why,
					     sizeof(why));

		if (r < 0) {
			fprintf(stderr, "nccl-bot: fabric generate: %s\n", why);
			goto out;
		}
		if (r == 0) {
			if (put(&t, g.node[i].name, " ", fabric) < 0)
				goto oom;
			mapped++;
		} else {
			if (put(&t, "# ", why, "") < 0)
				goto oom;
			left++;
		}
	}
	if (out ? write_out(out, t.s, t.n) < 0 : fwrite(t.s, 1, t.n, stdout) != t.n)
		goto out;
	fprintf(stderr, "nccl-bot: fabric generate: %zu node(s) mapped, %zu without a fabric\n",
		mapped, left);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "nccl-bot: fabric generate: out of memory\n");
out:
	free(buf);
	free(t.s);
	bot_fabricgen_free(&g);
	return rc;
}

struct show_arg {
	const struct bot_fabricmap *m;
	struct bot_fabricmap_step *st;
};

static int show_one(void *arg, const char *node)
{
	struct show_arg *a = arg;
	const char *f = bot_fabricmap_lookup(a->m, node);

	printf("%s %s\n", node, f ? f : "-");
	bot_fabricmap_step_add(a->m, a->st, node);
	return 0;
}

static int show(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "map", 1, 0, 'm' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	const char *map = NULL;
	char err[PATH_MAX + 512];
	struct bot_fabricmap m;
	struct bot_fabricmap_step st;
	struct show_arg a = { &m, &st };
	int o;

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'm': map = optarg; break;
		case 'h': fabric_usage(stdout); return 0;
		default: fabric_usage(stderr); return 2;
		}
	}
	if (!map || optind != argc - 1) {
		fabric_usage(stderr);
		return 2;
	}
	if (bot_fabricmap_load(map, &m, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: fabric: %s\n", err);
		return 1;
	}
	memset(&st, 0, sizeof(st));
	if (bot_hostlist_expand(argv[optind], show_one, &a, err, sizeof(err))) {
		fprintf(stderr, "nccl-bot: fabric: %s: %s\n", argv[optind], err);
		bot_fabricmap_free(&m);
		return 2;
	}
	if (st.state == 1)
		printf("step: fabric %s (its state, or the prior while it has none)\n", st.fabric);
	else
		printf("step: the prior (%s)\n", st.why);
	bot_fabricmap_free(&m);
	return 0;
}

int bot_cmd_fabric(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "generate"))
		return generate(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fabric_usage(stdout);
		return 0;
	}
	return show(argc, argv);
}
