/*
 * fabricgen.c - the fabric map from slurm.conf and topology.conf
 * (spank/fabricgen.h).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/state.h"
#include "learn/log.h"
#include "spank/fabricgen.h"

static int name_ok(const char *s)
{
	if (!*s || strlen(s) >= BOT_FABRICGEN_NAME)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
			return 0;
	return 1;
}

/* ---- nodes and switches -------------------------------------------------- */

static int node_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bot_fabricgen_node *)a)->name,
		      ((const struct bot_fabricgen_node *)b)->name);
}

const struct bot_fabricgen_node *bot_fabricgen_find(const struct bot_fabricgen *g,
						    const char *name)
{
	struct bot_fabricgen_node key;

	if (strlen(name) >= sizeof(key.name) || !g->n)
		return NULL;
	strcpy(key.name, name);
	return bsearch(&key, g->node, g->n, sizeof(*g->node), node_cmp);
}

/* ---- the name index while a file is read ----------------------------------- */

typedef const char *(*name_at_fn)(const struct bot_fabricgen *g, size_t i);

static const char *node_name_at(const struct bot_fabricgen *g, size_t i)
{
	return g->node[i].name;
}

static const char *sw_name_at(const struct bot_fabricgen *g, size_t i)
{
	return g->sw[i].name;
}

static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (size_t)(h ^ h >> 29);
}

/* The index of name in ix (cap a power of two, never full), or -1; *slot:
 * where it is, or where it goes. */
static long ix_find(const struct bot_fabricgen *g, const uint32_t *ix, size_t cap, name_at_fn at,
		    const char *name, size_t *slot)
{
	size_t m = cap - 1;

	for (size_t h = name_hash(name) & m;; h = (h + 1) & m)
		if (!ix[h] || !strcmp(at(g, ix[h] - 1), name)) {
			*slot = h;
			return ix[h] ? (long)ix[h] - 1 : -1;
		}
}

/* ix rebuilt over the first count names, with room for at least one more
 * at a load of 1/2 at most; -1 out of memory (ix unchanged). */
static int ix_make(const struct bot_fabricgen *g, uint32_t **ix, size_t *cap, name_at_fn at,
		   size_t count)
{
	size_t c = 64, slot;
	uint32_t *t;

	while (c < 2 * (count + 1))
		c *= 2;
	if (*ix && c <= *cap)
		return 0;
	if (!(t = calloc(c, sizeof(*t))))
		return -1;
	for (size_t i = 0; i < count; i++) {
		ix_find(g, t, c, at, at(g, i), &slot);
		t[slot] = (uint32_t)(i + 1);
	}
	free(*ix);
	*ix = t;
	*cap = c;
	return 0;
}

/* A read ends: the nodes sorted by name (bot_fabricgen_find's bsearch),
 * the node index dropped (its positions are gone). */
static void read_done(struct bot_fabricgen *g)
{
	if (g->n)
		qsort(g->node, g->n, sizeof(*g->node), node_cmp);
	free(g->node_ix);
	g->node_ix = NULL;
	g->node_ixcap = 0;
}

/* The node, appended when missing (sorted when the read ends); NULL out
 * of memory or over the bound. */
static struct bot_fabricgen_node *node_get(struct bot_fabricgen *g, const char *name)
{
	struct bot_fabricgen_node *n;
	size_t slot;
	long i;

	if (ix_make(g, &g->node_ix, &g->node_ixcap, node_name_at, g->n) < 0)
		return NULL;
	i = ix_find(g, g->node_ix, g->node_ixcap, node_name_at, name, &slot);
	if (i >= 0)
		return &g->node[i];
	if (g->n >= BOT_FABRICGEN_MAX_NODES)
		return NULL;
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		void *v = realloc(g->node, cap * sizeof(*g->node));

		if (!v)
			return NULL;
		g->node = v;
		g->cap = cap;
	}
	n = g->node + g->n;
	memset(n, 0, sizeof(*n));
	strcpy(n->name, name);
	n->leaf = -1;
	g->node_ix[slot] = (uint32_t)(g->n + 1);
	g->n++;
	return n;
}

static int switch_get(struct bot_fabricgen *g, const char *name)
{
	size_t slot;
	long i;

	if (ix_make(g, &g->sw_ix, &g->sw_ixcap, sw_name_at, g->nsw) < 0)
		return -1;
	i = ix_find(g, g->sw_ix, g->sw_ixcap, sw_name_at, name, &slot);
	if (i >= 0)
		return (int)i;
	if (g->nsw >= BOT_FABRICGEN_MAX_SWITCHES)
		return -1;
	if (g->nsw == g->swcap) {
		size_t cap = g->swcap ? g->swcap * 2 : 16;
		void *v = realloc(g->sw, cap * sizeof(*g->sw));

		if (!v)
			return -1;
		g->sw = v;
		g->swcap = cap;
	}
	memset(&g->sw[g->nsw], 0, sizeof(g->sw[0]));
	strcpy(g->sw[g->nsw].name, name);
	g->sw[g->nsw].parent = -1;
	g->sw_ix[slot] = (uint32_t)(g->nsw + 1);
	return (int)g->nsw++;
}

void bot_fabricgen_free(struct bot_fabricgen *g)
{
	free(g->node);
	free(g->sw);
	free(g->node_ix);
	free(g->sw_ix);
	memset(g, 0, sizeof(*g));
}

/* ---- the line reader ------------------------------------------------------ */

#define MAX_WORDS 64

struct line {
	char *key[MAX_WORDS], *val[MAX_WORDS];
	int n;
};

/* Split a line (comment cut at its first '#', inside quotes too, as
 * Slurm cuts it) into KEY=VALUE words. A value may be in double quotes,
 * as slurm.conf allows (Features="a,b"): the quotes are not part of it
 * and blanks inside them are; a quote without its end is part of the
 * word, as Slurm reads it. A line of `Include FILE` is refused by name:
 * its lines would be missing. 0, or -1 (why in err). */
static int split(char *s, struct line *l, char *err, size_t errlen)
{
	char *p = s, *o = s;
	unsigned bs = 0;

	/* as Slurm reads slurm.conf: a '#' after an even number of backslashes
	 * starts the comment (quotes or not); then each backslash escapes the
	 * character after it (backslash-# is a '#' in a value) */
	for (char *c = s; *c; c++) {
		if (*c == '#' && !(bs % 2)) {
			*c = 0;
			break;
		}
		bs = *c == '\\' ? bs + 1 : 0;
	}
	for (; *p; p++) {
		if (*p == '\\' && p[1])
			p++;
		*o++ = *p;
	}
	*o = 0;
	p = s;
	l->n = 0;
	for (;;) {
		char *w, *eq, *shut;

		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p)
			return 0;
		w = p;
		if (!l->n && !strncasecmp(w, "include", 7) && (w[7] == ' ' || w[7] == '\t'))
			return bot_log_errf(err, errlen, "'Include' is not followed (its lines "
					    "would be missing): name the file that holds them, or the "
					    "files joined, instead");
		while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		eq = p;
		if (*eq != '=' || eq == w) {
			while (*p && *p != ' ' && *p != '\t' && *p != '\r')
				p++;
			*p = 0;
			return bot_log_errf(err, errlen, "'%s': not KEY=VALUE", w);
		}
		if (l->n == MAX_WORDS)
			return bot_log_errf(err, errlen, "over %d words", MAX_WORDS);
		*eq = 0;
		l->key[l->n] = w;
		p = eq + 1;
		shut = *p == '"' ? strchr(p + 1, '"') : NULL;
		if (shut) {
			l->val[l->n++] = p + 1;
			*shut = 0;
			p = shut + 1;
			if (*p && *p != ' ' && *p != '\t' && *p != '\r')
				return bot_log_errf(err, errlen, "%s=: text after the closing quote", w);
			continue;
		}
		l->val[l->n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p)
			*p++ = 0;
	}
}

static const char *word(const struct line *l, const char *key)
{
	for (int i = 0; i < l->n; i++)
		if (!strcasecmp(l->key[i], key))
			return l->val[i];
	return NULL;
}

/* Each line of buf to fn; errors as "NAME:LINE: reason". */
static int each_line(const char *name, const char *buf, size_t len,
		     int (*fn)(struct bot_fabricgen *, struct line *, char *, size_t),
		     struct bot_fabricgen *g, char *err, size_t errlen)
{
	char *copy, *p, msg[512];
	unsigned lineno = 0;
	int rc = 0;

	if (len > BOT_FABRICGEN_MAX_BYTES)
		return bot_log_errf(err, errlen, "%s: over %zu bytes", name, BOT_FABRICGEN_MAX_BYTES);
	if (memchr(buf, 0, len))
		return bot_log_errf(err, errlen, "%s: a NUL byte: not a text file", name);
	if (!(copy = malloc(len + 1)))
		return bot_log_errf(err, errlen, "%s: out of memory", name);
	memcpy(copy, buf, len);
	copy[len] = 0;
	for (p = copy; p && *p && !rc;) {
		char *nl = strchr(p, '\n');
		struct line l;

		if (nl)
			*nl = 0;
		lineno++;
		msg[0] = 0;
		if (split(p, &l, msg, sizeof(msg)) < 0 || (l.n && fn(g, &l, msg, sizeof(msg)) < 0))
			rc = bot_log_errf(err, errlen, "%s:%u: %s", name, lineno, msg);
		p = nl ? nl + 1 : NULL;
	}
	free(copy);
	return rc;
}

/* ---- slurm.conf ------------------------------------------------------------- */

struct feat_arg {
	struct bot_fabricgen *g;
	const char *features;
	char *err;
	size_t errlen;
};

static int add_features(void *arg, const char *name)
{
	struct feat_arg *a = arg;
	struct bot_fabricgen_node *n = node_get(a->g, name);

	if (!n)
		return bot_log_errf(a->err, a->errlen, "out of memory or over %u nodes",
				    BOT_FABRICGEN_MAX_NODES);
	snprintf(n->features, sizeof(n->features), "%s", a->features);
	n->in_conf = 1;
	return 0;
}

static int conf_line(struct bot_fabricgen *g, struct line *l, char *err, size_t errlen)
{
	const char *nodes = word(l, "NodeName"), *f;
	struct feat_arg a = { g, NULL, err, errlen };

	if (!nodes || strcasecmp(l->key[0], "NodeName"))
		return 0;	/* another line of slurm.conf */
	f = word(l, "Features");
	if (!f)
		f = word(l, "Feature");
	if (f && strlen(f) >= BOT_FABRICGEN_FEATURES)
		return bot_log_errf(err, errlen, "Features= longer than %d bytes",
				    BOT_FABRICGEN_FEATURES - 1);
	if (!strcasecmp(nodes, "DEFAULT")) {
		snprintf(g->default_features, sizeof(g->default_features), "%s", f ? f : "");
		return 0;
	}
	a.features = f ? f : g->default_features;
	return bot_hostlist_expand(nodes, add_features, &a, err, errlen) ? -1 : 0;
}

int bot_fabricgen_slurmconf(struct bot_fabricgen *g, const char *name, const char *buf,
			    size_t len, char *err, size_t errlen)
{
	int rc;

	g->default_features[0] = 0;
	rc = each_line(name, buf, len, conf_line, g, err, errlen);
	read_done(g);
	return rc;
}

/* ---- topology.conf ----------------------------------------------------------- */

struct leaf_arg {
	struct bot_fabricgen *g;
	int sw;
	char *err;
	size_t errlen;
};

static int add_leaf(void *arg, const char *name)
{
	struct leaf_arg *a = arg;
	struct bot_fabricgen_node *n = node_get(a->g, name);

	if (!n)
		return bot_log_errf(a->err, a->errlen, "out of memory or over %u nodes",
				    BOT_FABRICGEN_MAX_NODES);
	if (n->leaf >= 0 && n->leaf != a->sw)
		return bot_log_errf(a->err, a->errlen, "node %s under two switches, %s and %s",
				    name, a->g->sw[n->leaf].name, a->g->sw[a->sw].name);
	n->leaf = a->sw;
	return 0;
}

static int add_child(void *arg, const char *name)
{
	struct leaf_arg *a = arg;
	int c = switch_get(a->g, name);

	if (c < 0)
		return bot_log_errf(a->err, a->errlen, "out of memory or over %u switches",
				    BOT_FABRICGEN_MAX_SWITCHES);
	if (c == a->sw)
		return bot_log_errf(a->err, a->errlen, "switch %s under itself", name);
	if (a->g->sw[c].parent >= 0 && a->g->sw[c].parent != a->sw)
		return bot_log_errf(a->err, a->errlen, "switch %s under two switches, %s and %s",
				    name, a->g->sw[a->g->sw[c].parent].name, a->g->sw[a->sw].name);
	a->g->sw[c].parent = a->sw;
	return 0;
}

static int topo_line(struct bot_fabricgen *g, struct line *l, char *err, size_t errlen)
{
	const char *sw = word(l, "SwitchName"), *nodes = word(l, "Nodes"),
		   *kids = word(l, "Switches");
	struct leaf_arg a = { g, -1, err, errlen };

	if (!sw || strcasecmp(l->key[0], "SwitchName"))
		return bot_log_errf(err, errlen, "not a SwitchName= line");
	if (!name_ok(sw))
		return bot_log_errf(err, errlen, "SwitchName=%s: not a name", sw);
	if ((a.sw = switch_get(g, sw)) < 0)
		return bot_log_errf(err, errlen, "out of memory or over %u switches",
				    BOT_FABRICGEN_MAX_SWITCHES);
	if (nodes) {
		g->sw[a.sw].leaf = 1;
		if (bot_hostlist_expand(nodes, add_leaf, &a, err, errlen))
			return -1;
	}
	if (kids && bot_hostlist_expand(kids, add_child, &a, err, errlen))
		return -1;
	return 0;
}

int bot_fabricgen_topology(struct bot_fabricgen *g, const char *name, const char *buf,
			   size_t len, char *err, size_t errlen)
{
	int rc = each_line(name, buf, len, topo_line, g, err, errlen);

	read_done(g);
	if (rc < 0)
		return -1;
	/* no loops: every chain of parents ends within the switch count */
	for (size_t i = 0; i < g->nsw; i++) {
		int s = (int)i;

		for (size_t k = 0; s >= 0; k++, s = g->sw[s].parent)
			if (k > g->nsw)
				return bot_log_errf(err, errlen, "%s: switch %s is in a loop of "
						    "switches", name, g->sw[i].name);
	}
	return 0;
}

/* ---- the rule ------------------------------------------------------------------ */

int bot_fabricgen_rule_ok(const char *rule)
{
	return !strcmp(rule, "features") || !strcmp(rule, "top-switch") ||
	       (!strncmp(rule, "feature:", 8) && rule[8]);
}

static int feature_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int bot_fabricgen_fabric(const struct bot_fabricgen *g, const struct bot_fabricgen_node *n,
			 const char *rule, char *out, size_t len, char *why, size_t whylen)
{
	char tmp[BOT_FABRICGEN_FEATURES], f[BOT_FABRICGEN_FEATURES], *list[BOT_FABRICGEN_FEATURES];
	size_t nf = 0, k = 0;

	out[0] = 0;
	f[0] = 0;
	if (!strcmp(rule, "top-switch")) {
		int s = n->leaf;

		if (s < 0) {
			bot_log_errf(why, whylen, "node %s is under no switch of topology.conf",
				     n->name);
			return 1;
		}
		while (g->sw[s].parent >= 0)
			s = g->sw[s].parent;
		snprintf(f, sizeof(f), "%s", g->sw[s].name);
	} else {
		snprintf(tmp, sizeof(tmp), "%s", n->features);
		/* commas, and blanks a quoted value may hold around them */
		for (char *w = strtok(tmp, ", \t"); w; w = strtok(NULL, ", \t"))
			list[nf++] = w;
		if (!strcmp(rule, "features")) {
			qsort(list, nf, sizeof(*list), feature_cmp);
			for (size_t i = 0; i < nf; i++)
				k += (size_t)snprintf(f + k, sizeof(f) - k, "%s%s", i ? "-" : "",
						      list[i]);
			if (!nf) {
				bot_log_errf(why, whylen, "node %s has no features", n->name);
				return 1;
			}
		} else if (!bot_fabricgen_rule_ok(rule)) {
			return bot_log_errf(why, whylen, "'%s': not a rule (feature:PREFIX, "
					    "features, top-switch)", rule);
		} else {
			const char *pre = rule + 8;
			size_t pl = strlen(pre);

			for (size_t i = 0; i < nf; i++) {
				if (strncmp(list[i], pre, pl) || !list[i][pl])
					continue;
				if (f[0])
					return bot_log_errf(why, whylen, "node %s has two features "
							    "starting with %s: %s%s and %s",
							    n->name, pre, pre, f, list[i]);
				snprintf(f, sizeof(f), "%s", list[i] + pl);
			}
			if (!f[0]) {
				bot_log_errf(why, whylen, "node %s has no feature starting with %s",
					     n->name, pre);
				return 1;
			}
		}
	}
	for (char *p = f; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	if (!bot_state_fabric_ok(f) || strlen(f) >= len) {
		bot_log_errf(why, whylen, "node %s: '%s' is not a fabric name "
			     "([a-z0-9][a-z0-9._-]{0,63})", n->name, f);
		return 1;
	}
	if (bot_state_fabric_reserved(f)) {
		bot_log_errf(why, whylen, "node %s: '%s' is the name of a directory of the state "
			     "directory's own (inbox, quarantine and held are not fabric names)",
			     n->name, f);
		return 1;
	}
	strcpy(out, f);
	return 0;
}
