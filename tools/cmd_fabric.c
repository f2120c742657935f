/*
 * cmd_fabric.c - `nccl-bot fabric`: the fabric map from Slurm's files, and
 * what a job on some nodes gets (doc/slurm.md, "Fabric tools").
 *
 *   nccl-bot fabric generate [--slurm-conf FILE] [--topology FILE]
 *                            [--by RULE] [--yaml] [-o FILE]
 *   nccl-bot fabric [--map FILE] [--config FILE] NODELIST
 *
 * --yaml writes the same map as a site configuration (doc/formats.md
 * section 15, version 2: fabric_map, each fabric's nodes as host lists),
 * through the emitter (learn/yamlout.h). NODELIST reads the map the plugin would:
 * --map's text file, or the site configuration's fabric_map (--config,
 * else NCCL_BOT_CONFIG, else the default file; --map alone reads none),
 * and refuses both at once as the plugin does.
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
#include "learn/yamlout.h"
#include "spank/fabricgen.h"
#include "spank/fabricmap.h"

static void fabric_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot fabric generate [--slurm-conf FILE] [--topology FILE] [--by RULE]\n"
		"                                [--yaml] [-o FILE]\n"
		"       nccl-bot fabric [--map FILE] [--config FILE] NODELIST\n"
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
		"  --yaml             write it as a site configuration (version: 2, fabric_map:\n"
		"                     each fabric's nodes) to merge into site.yaml\n"
		"  -o FILE            write the map there (temporary name, fsync, rename); default\n"
		"                     standard output, as for -o - (./- names a file -)\n"
		"  --map FILE         the fabric map (plugstack.conf's fabric_map=); alone, no site\n"
		"                     configuration is read\n"
		"  --config FILE      the site configuration whose fabric_map is the map\n"
		"                     (plugstack.conf's config=); default $NCCL_BOT_CONFIG, else\n"
		"                     /etc/nccl-bot/site.yaml when it exists\n");
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

/* A node of the YAML map: its fabric, and its name split into a prefix
 * and a trailing number of 1-9 digits (width 0: none), so that runs of
 * numbered names can be written as host lists. */
struct pair {
	const char *fabric, *node;
	size_t plen;
	int width;
	unsigned long num;
};

static void split_name(struct pair *p)
{
	size_t len = strlen(p->node), d = 0;

	while (d < len && p->node[len - 1 - d] >= '0' && p->node[len - 1 - d] <= '9')
		d++;
	p->plen = len;
	p->width = 0;
	p->num = 0;
	if (d >= 1 && d <= 9) {
		p->plen = len - d;
		p->width = (int)d;
		p->num = strtoul(p->node + p->plen, NULL, 10);
	}
}

/* By fabric, then prefix, width and number: runs of one prefix and width
 * in numeric order. */
static int by_fabric_node(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	size_t n = x->plen < y->plen ? x->plen : y->plen;
	int d = strcmp(x->fabric, y->fabric);

	if (!d && !(d = memcmp(x->node, y->node, n)) && x->plen != y->plen)
		d = x->plen < y->plen ? -1 : 1;
	if (!d && x->width != y->width)
		d = x->width < y->width ? -1 : 1;
	if (!d && x->num != y->num)
		d = x->num < y->num ? -1 : 1;
	return d ? d : strcmp(x->node, y->node);
}

#define HOSTLIST_ITEM_MAX 1024	/* well under the reader's 4095 bytes a scalar */

/* Write p[i..] as one host list item ("n[01-16,20]", or the name alone)
 * and return the index after it: names of one fabric, prefix and width. */
static size_t hostlist_item(struct bot_yamlout *y, const struct pair *p, size_t np, size_t i)
{
	char item[HOSTLIST_ITEM_MAX + 64];
	size_t j = i, n;
	int ranges = 0;

	if (!p[i].width || i + 1 == np || strcmp(p[i + 1].fabric, p[i].fabric) ||
	    p[i + 1].width != p[i].width || p[i + 1].plen != p[i].plen ||
	    memcmp(p[i + 1].node, p[i].node, p[i].plen)) {
		bot_yamlout_str(y, p[i].node);
		return i + 1;
	}
	n = (size_t)snprintf(item, sizeof(item), "%.*s[", (int)p[i].plen, p[i].node);
	while (j < np && n < HOSTLIST_ITEM_MAX && !strcmp(p[j].fabric, p[i].fabric) &&
	       p[j].width == p[i].width && p[j].plen == p[i].plen &&
	       !memcmp(p[j].node, p[i].node, p[i].plen)) {
		size_t k = j;

		while (k + 1 < np && !strcmp(p[k + 1].fabric, p[i].fabric) &&
		       p[k + 1].width == p[i].width && p[k + 1].plen == p[i].plen &&
		       !memcmp(p[k + 1].node, p[i].node, p[i].plen) && p[k + 1].num == p[k].num + 1)
			k++;
		n += (size_t)snprintf(item + n, sizeof(item) - n, "%s%0*lu", ranges++ ? "," : "",
				      p[i].width, p[j].num);
		if (k > j)
			n += (size_t)snprintf(item + n, sizeof(item) - n, "-%0*lu", p[i].width,
					      p[k].num);
		j = k + 1;
	}
	snprintf(item + n, sizeof(item) - n, "]");
	bot_yamlout_str(y, item);
	return j;
}

/*
 * The map as a site configuration (formats.md section 15, version 2),
 * after t's comments: fabric_map with each fabric (sorted) and its nodes
 * as Slurm host lists (runs of one prefix and digit count in brackets, at
 * most HOSTLIST_ITEM_MAX bytes an item, so that a large cluster still fits
 * the reader's 1 MiB), through the emitter. fab[i] is node i's fabric
 * ("" none).
 */
static int yaml_map(struct text *t, const struct bot_fabricgen *g,
		    char (*fab)[BOT_FABRICGEN_NAME])
{
	struct bot_yamlout *y = bot_yamlout_new();
	struct pair *p = g->n ? calloc(g->n, sizeof(*p)) : NULL;
	const char *doc;
	char err[256];
	size_t np = 0, len;
	int rc = -1;

	if (!y || (g->n && !p)) {
		fprintf(stderr, "nccl-bot: fabric generate: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < g->n; i++)
		if (fab[i][0]) {
			p[np] = (struct pair){ .fabric = fab[i], .node = g->node[i].name };
			split_name(&p[np++]);
		}
	if (np)
		qsort(p, np, sizeof(*p), by_fabric_node);
	bot_yamlout_map(y, 0);
	bot_yamlout_str(y, "version");
	bot_yamlout_u64(y, 2);
	bot_yamlout_str(y, "fabric_map");
	bot_yamlout_map(y, 0);
	for (size_t i = 0; i < np;) {
		size_t start = i;

		bot_yamlout_str(y, p[i].fabric);
		bot_yamlout_map(y, 0);
		bot_yamlout_str(y, "nodes");
		bot_yamlout_seq(y, 0);
		while (i < np && !strcmp(p[i].fabric, p[start].fabric))
			i = hostlist_item(y, p, np, i);
		bot_yamlout_end(y);
		bot_yamlout_end(y);
	}
	bot_yamlout_end(y);
	bot_yamlout_end(y);
	if (bot_yamlout_finish(y, &doc, &len, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: fabric generate: %s\n", err);
		goto out;
	}
	if (put(t, doc, "", "") < 0) {
		fprintf(stderr, "nccl-bot: fabric generate: out of memory\n");
		goto out;
	}
	t->n--;		/* put's newline: the emitter ends the document with one */
	rc = 0;
out:
	free(p);
	bot_yamlout_free(y);
	return rc;
}

static int generate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "slurm-conf", 1, 0, 'c' }, { "topology", 1, 0, 't' }, { "by", 1, 0, 'b' },
		{ "output", 1, 0, 'o' }, { "yaml", 0, 0, 'y' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *conf = getenv("SLURM_CONF"), *topo = NULL, *rule = "feature:fabric_",
		   *out = NULL;
	char topo_buf[PATH_MAX], fabric[BOT_FABRICGEN_NAME], why[512], err[PATH_MAX + 512];
	struct bot_fabricgen g = { 0 };
	struct text t = { 0 };
	size_t mapped = 0, left = 0, notconf = 0;
	uint8_t *buf = NULL;
	size_t len = 0;
	int o, rc = 1, yaml = 0;
	char (*fab)[BOT_FABRICGEN_NAME] = NULL;

	optind = 1;
	while ((o = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (o) {
		case 'c': conf = optarg; break;
		case 't': topo = optarg; break;
		case 'b': rule = optarg; break;
		case 'o': out = strcmp(optarg, "-") ? optarg : NULL; break;	/* - is stdout */
		case 'y': yaml = 1; break;
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
	if (put(&t, yaml ? "# nccl-bot site configuration: fabric_map (nccl-bot fabric generate "
		"--yaml --by " : "# nccl-bot fabric map: NODE FABRIC (nccl-bot fabric generate --by ",
		rule, ")") < 0)
		goto oom;
	if (g.n && !(fab = calloc(g.n, sizeof(*fab))))
		goto oom;
	for (size_t i = 0; i < g.n; i++) {
		int r;

		/* a node topology.conf names and slurm.conf does not has no
		 * features to map it by: under a feature rule it is left out
		 * and counted apart (--by top-switch maps it, as before) */
		if (!g.node[i].in_conf && strcmp(rule, "top-switch")) {
			notconf++;
			continue;
		}
		r = bot_fabricgen_fabric(&g, &g.node[i], rule, fabric, sizeof(fabric), why,
					 sizeof(why));

		if (r < 0) {
			fprintf(stderr, "nccl-bot: fabric generate: %s\n", why);
			goto out;
		}
		if (r == 0) {
			snprintf(fab[i], sizeof(fab[i]), "%s", fabric);
			if (!yaml && put(&t, g.node[i].name, " ", fabric) < 0)
				goto oom;
			mapped++;
		} else {
			if (put(&t, "# ", why, "") < 0)
				goto oom;
			left++;
		}
	}
	if (yaml && yaml_map(&t, &g, fab) < 0)
		goto out;
	if (out ? write_out(out, t.s, t.n) < 0 : fwrite(t.s, 1, t.n, stdout) != t.n)
		goto out;
	fprintf(stderr, "nccl-bot: fabric generate: %zu node(s) mapped, %zu without a fabric\n",
		mapped, left);
	if (notconf)
		fprintf(stderr, "nccl-bot: fabric generate: %zu node(s) of topology.conf not in "
			"slurm.conf, left out\n", notconf);
	rc = 0;
	goto out;
oom:
	fprintf(stderr, "nccl-bot: fabric generate: out of memory\n");
out:
	free(buf);
	free(t.s);
	free(fab);
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
		{ "map", 1, 0, 'm' }, { "config", 1, 0, 'C' }, { "help", 0, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	const char *map = NULL, *config = NULL;
	char err[PATH_MAX + 512];
	struct bot_fabricmap m;
	struct bot_fabricmap_step st;
	struct show_arg a = { &m, &st };
	struct bot_siteconf sc;
	int o, rc = 0;

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'm': map = optarg; break;
		case 'C': config = optarg; break;
		case 'h': fabric_usage(stdout); return 0;
		default: fabric_usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fabric_usage(stderr);
		return 2;
	}
	/* the site configuration as the plugin's config= (--map alone: none) */
	bot_siteconf_defaults(&sc);
	if ((config || !map) && (rc = bot_cmd_siteconf("fabric", config, NULL, 0, &sc)) != 0)
		return rc;
	if (sc.map_given && map) {
		fprintf(stderr, "nccl-bot: fabric: two fabric maps: --map %s and the fabric_map of "
			"%s (line %u); give one\n", map, sc.source, sc.map_line);
		bot_siteconf_free(&sc);
		return 1;
	}
	if (sc.map_given)
		rc = bot_fabricmap_from_siteconf(&sc, &m, err, sizeof(err)) < 0 ? -1 : 0;
	else if (map)
		rc = bot_fabricmap_load(map, &m, err, sizeof(err));
	else {
		fprintf(stderr, "nccl-bot: fabric: no fabric map: give --map FILE, or a site "
			"configuration with fabric_map (--config FILE)%s%s\n",
			sc.source[0] ? "; none in " : "", sc.source);
		fabric_usage(stderr);
		bot_siteconf_free(&sc);
		return 2;
	}
	bot_siteconf_free(&sc);
	if (rc < 0) {
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
	if (argc >= 2 && !strcmp(argv[1], "generate")) {
		bot_cmd_progname(argv + 1, "fabric generate");
		return generate(argc - 1, argv + 1);
	}
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fabric_usage(stdout);
		return 0;
	}
	return show(argc, argv);
}
