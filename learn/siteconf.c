/*
 * siteconf.c - the site configuration (learn/siteconf.h, doc/formats.md
 * section 15): one table of keys, read from the file or set from a command
 * line through the same checks.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/settings.h"
#include "common/state.h"
#include "learn/hostlist.h"
#include "learn/log.h"
#include "learn/siteconf.h"
#include "learn/yamlin.h"

enum kind { K_PATH, K_CMD, K_NUM, K_LIST };

static const struct keydef {
	const char *name;
	enum kind kind;
	size_t off;
	uint64_t lo, hi, def;
	const char *sdef;
} keys[BOT_SITECONF_NKEYS] = {
	[BOT_SITECONF_STATE_DIR] = { "state_dir", K_PATH, offsetof(struct bot_siteconf, state_dir),
				     0, 0, 0, "/var/lib/nccl-bot/state" },
	[BOT_SITECONF_OUTBOX_DIR] = { "outbox_dir", K_PATH, offsetof(struct bot_siteconf, outbox_dir),
				      0, 0, 0, "/var/spool/nccl-bot/outbox" },
	[BOT_SITECONF_SHIP_COMMAND] = { "ship_command", K_CMD,
					offsetof(struct bot_siteconf, ship_command), 0, 0, 0, "" },
	[BOT_SITECONF_METRICS_DIR] = { "metrics_dir", K_PATH,
				       offsetof(struct bot_siteconf, metrics_dir), 0, 0, 0, "" },
	[BOT_SITECONF_RETENTION] = { "retention", K_NUM, offsetof(struct bot_siteconf, retention),
				     2, 1024, 8, NULL },
	[BOT_SITECONF_WINDOW] = { "window", K_NUM, offsetof(struct bot_siteconf, window),
				  60, 1ull << 31, 86400, NULL },
	[BOT_SITECONF_USER_CAP] = { "user_cap", K_NUM, offsetof(struct bot_siteconf, user_cap),
				    1, 1ull << 32, 4096, NULL },
	[BOT_SITECONF_ACCOUNT_CAP] = { "account_cap", K_NUM,
				       offsetof(struct bot_siteconf, account_cap), 1, 1ull << 34,
				       16384, NULL },
	[BOT_SITECONF_DEDUP_WINDOWS] = { "dedup_windows", K_NUM,
					 offsetof(struct bot_siteconf, dedup_windows), 2, 1024, 14,
					 NULL },
	[BOT_SITECONF_SETTLE] = { "settle", K_NUM, offsetof(struct bot_siteconf, settle), 0,
				  1ull << 31, 300, NULL },
	[BOT_SITECONF_MAX_WAIT] = { "max_wait", K_NUM, offsetof(struct bot_siteconf, max_wait), 0,
				    1ull << 31, 3600, NULL },
	[BOT_SITECONF_CONSENSUS_MIN] = { "consensus_min", K_NUM,
					 offsetof(struct bot_siteconf, consensus_min), 1, 1u << 20,
					 4, NULL },
	[BOT_SITECONF_FABRICS] = { "fabrics", K_LIST, 0, 0, 0, 0, NULL },
	[BOT_SITECONF_CONSENSUS_USERS] = { "consensus_users", K_NUM,
					   offsetof(struct bot_siteconf, consensus_users), 1,
					   1u << 20, 3, NULL },
	/* default dedup_windows - 1 (derive) */
	[BOT_SITECONF_HOLD_WINDOWS] = { "hold_windows", K_NUM,
					offsetof(struct bot_siteconf, hold_windows), 1, 1023, 13,
					NULL },
};

static const struct bot_yamlin_limits conf_limits = {
	BOT_SITECONF_MAX_BYTES, BOT_YAMLIN_DEPTH, BOT_SITECONF_MAX_SCALARS, BOT_SITECONF_STR_MAX - 1,
};

void bot_siteconf_defaults(struct bot_siteconf *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < BOT_SITECONF_NKEYS; i++) {
		const struct keydef *k = &keys[i];

		if (k->kind == K_NUM)
			*(uint64_t *)((char *)c + k->off) = k->def;
		else if (k->kind != K_LIST)
			strcpy((char *)c + k->off, k->sdef);
	}
}

void bot_siteconf_free(struct bot_siteconf *c)
{
	free(c->fabrics);
	c->fabrics = NULL;
	c->nfabrics = 0;
	free(c->map_fabrics);
	c->map_fabrics = NULL;
	c->nmap_fabrics = 0;
	free(c->map);
	c->map = NULL;
	c->nmap = 0;
	c->map_given = 0;
}

static int find_key(const char *name)
{
	for (int i = 0; i < BOT_SITECONF_NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return i;
	return -1;
}

/* Set scalar key i of c from s: 0, or -1 with the reason in why. */
static int set_scalar(struct bot_siteconf *c, int i, const char *s, char *why, size_t wlen)
{
	const struct keydef *k = &keys[i];

	if (k->kind == K_NUM) {
		uint64_t v;
		int rc = bot_set_u64(s, 0, &v);

		if (rc == 0 && (v < k->lo || v > k->hi))
			rc = BOT_SET_ERANGE;
		if (rc < 0) {
			snprintf(why, wlen, "'%.64s' is not a number %llu..%llu (%s)", s,
				 (unsigned long long)k->lo, (unsigned long long)k->hi,
				 bot_set_strerror(rc));
			return -1;
		}
		*(uint64_t *)((char *)c + k->off) = v;
	} else {
		for (const char *p = s; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f) {
				snprintf(why, wlen, "a control character");
				return -1;
			}
		if (strlen(s) >= BOT_SITECONF_STR_MAX) {
			snprintf(why, wlen, "longer than %d bytes", BOT_SITECONF_STR_MAX - 1);
			return -1;
		}
		if (k->kind == K_PATH && *s && *s != '/') {
			snprintf(why, wlen, "'%.64s' is not an absolute path (or \"\")", s);
			return -1;
		}
		strcpy((char *)c + k->off, s);
	}
	c->set |= 1u << i;
	return 0;
}

static int add_fabric(char (**list)[65], size_t *n, const char *name, char *why, size_t wlen)
{
	char (*l)[65];

	if (!bot_state_fabric_ok(name)) {
		snprintf(why, wlen, "fabric '%.64s' is not [a-z0-9][a-z0-9._-]{0,63}", name);
		return -1;
	}
	if (bot_state_fabric_reserved(name)) {
		snprintf(why, wlen, "fabric '%s' is not a fabric name " BOT_STATE_RESERVED_WHY, name);
		return -1;
	}
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], name)) {
			snprintf(why, wlen, "fabric '%s' listed twice", name);
			return -1;
		}
	if (*n >= BOT_SITECONF_MAX_FABRICS) {
		snprintf(why, wlen, "more than %d fabrics", BOT_SITECONF_MAX_FABRICS);
		return -1;
	}
	l = realloc(*list, (*n + 1) * sizeof(*l));
	if (!l) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	strcpy(l[*n], name);
	*list = l;
	(*n)++;
	return 0;
}

/* The defaults that follow other keys. */
static void derive(struct bot_siteconf *c)
{
	if (!(c->set & (1u << BOT_SITECONF_ACCOUNT_CAP)))
		c->account_cap = 4 * c->user_cap;
	if (!(c->set & (1u << BOT_SITECONF_HOLD_WINDOWS)))
		c->hold_windows = c->dedup_windows - 1;
}

/* The defaults that follow other keys, and the rules between keys. */
static int finalize(struct bot_siteconf *c, char *why, size_t wlen)
{
	derive(c);
	if (c->account_cap < c->user_cap) {
		snprintf(why, wlen, "account_cap %llu is below user_cap %llu",
			 (unsigned long long)c->account_cap, (unsigned long long)c->user_cap);
		return -1;
	}
	if (c->max_wait < c->settle) {
		snprintf(why, wlen, "max_wait %llu is below settle %llu",
			 (unsigned long long)c->max_wait, (unsigned long long)c->settle);
		return -1;
	}
	if (c->hold_windows >= c->dedup_windows) {
		/* a held step must still dedup when it is accepted (formats 14) */
		snprintf(why, wlen, "hold_windows %llu is not below dedup_windows %llu",
			 (unsigned long long)c->hold_windows,
			 (unsigned long long)c->dedup_windows);
		return -1;
	}
	return 0;
}

/* ---- fabric_map (version 2) ----------------------------------------------- */

/* Where the current list item was, for the entries it makes. */
struct map_add {
	struct bot_siteconf *c;
	size_t cap, nparts;
	uint32_t fabric, line, col;
	char *why;
	size_t wlen;
};

static int map_push(struct map_add *a, const char *name, int partition)
{
	struct bot_siteconf_mapent *e;

	if (partition ? a->nparts >= BOT_SITECONF_MAX_MAP_PARTITIONS :
			a->c->nmap - a->nparts >= BOT_SITECONF_MAX_MAP_NODES) {
		snprintf(a->why, a->wlen, "more than %d %s in the map",
			 partition ? BOT_SITECONF_MAX_MAP_PARTITIONS : BOT_SITECONF_MAX_MAP_NODES,
			 partition ? "partitions" : "nodes");
		return -1;
	}
	if (a->c->nmap == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;

		e = realloc(a->c->map, nc * sizeof(*e));
		if (!e) {
			snprintf(a->why, a->wlen, "out of memory");
			return -1;
		}
		a->c->map = e;
		a->cap = nc;
	}
	e = &a->c->map[a->c->nmap++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->partition = (uint8_t)partition;
	e->fabric = a->fabric;
	e->line = a->line;
	e->col = a->col;
	if (partition)
		a->nparts++;
	return 0;
}

static int map_node(void *arg, const char *name)
{
	return map_push(arg, name, 0);
}

static int partition_ok(const char *s)
{
	return bot_hostlist_name_ok(s) && strlen(s) < BOT_SITECONF_PARTITION_MAX;
}

static int by_entry(const void *x, const void *y)
{
	const struct bot_siteconf_mapent *a = x, *b = y;
	int d = (int)a->partition - (int)b->partition;

	if (!d)
		d = strcmp(a->name, b->name);
	if (!d)
		d = a->line != b->line ? (a->line < b->line ? -1 : 1) :
		    a->col != b->col ? (a->col < b->col ? -1 : 1) : 0;
	return d;
}

/* One item of a fabric's nodes or partitions. */
static int map_item(struct bot_yamlin *r, struct map_add *a, const char *fabric,
		    const char *key, const struct bot_yamlin_ev *ev)
{
	char why[512];

	if (ev->type != BOT_YAMLIN_SCALAR || bot_yamlin_is_null(ev))
		return bot_yamlin_fail(r, ev, "fabric_map: %s: %s: want %s", fabric, key,
				       strcmp(key, "nodes") ? "partition names" :
				       "Slurm host lists (n[1-4],gpu7)");
	a->line = ev->line;
	a->col = ev->col;
	a->why = why;
	a->wlen = sizeof(why);
	why[0] = 0;
	if (!strcmp(key, "partitions")) {
		if (!partition_ok(ev->s))
			return bot_yamlin_fail(r, ev, "fabric_map: %s: partitions: '%.64s' is not "
					       "a partition name (1-54 of [A-Za-z0-9._-])", fabric,
					       ev->s);
		if (map_push(a, ev->s, 1) < 0)
			return bot_yamlin_fail(r, ev, "fabric_map: %s: partitions: %s", fabric, why);
		return 0;
	}
	if (bot_hostlist_expand(ev->s, map_node, a, why, sizeof(why)))
		return bot_yamlin_fail(r, ev, "fabric_map: %s: nodes: '%.128s': %s", fabric, ev->s,
				       why[0] ? why : "not a host list");
	return 0;
}

/* The value of fabric_map (its key is at kev). */
static int read_map(struct bot_yamlin *r, struct bot_siteconf *c, const struct bot_yamlin_ev *kev)
{
	struct bot_yamlin_ev ev, fev, k;
	struct map_add a = { .c = c };

	c->map_given = 1;
	c->map_line = kev->line;
	if (bot_yamlin_next(r, &ev) < 0)
		return -1;
	if (ev.type != BOT_YAMLIN_MAP)
		return bot_yamlin_fail(r, &ev, "fabric_map: want a mapping of fabric names");
	for (;;) {
		char (*l)[65];

		if (bot_yamlin_next(r, &fev) < 0)
			return -1;
		if (fev.type == BOT_YAMLIN_END)
			break;
		if (!bot_state_fabric_ok(fev.s))
			return bot_yamlin_fail(r, &fev, "fabric_map: '%.64s' is not a fabric name "
					       "([a-z0-9][a-z0-9._-]{0,63})", fev.s);
		/* as the text map refuses them (spank/fabricmap.c): a step put
		 * on one was learned into nowhere (until 2026-12-05) */
		if (bot_state_fabric_reserved(fev.s))
			return bot_yamlin_fail(r, &fev, "fabric_map: '%s' is not a fabric name "
					       BOT_STATE_RESERVED_WHY, fev.s);
		if (c->nmap_fabrics >= BOT_SITECONF_MAX_FABRICS)
			return bot_yamlin_fail(r, &fev, "fabric_map: more than %d fabrics",
					       BOT_SITECONF_MAX_FABRICS);
		l = realloc(c->map_fabrics, (c->nmap_fabrics + 1) * sizeof(*l));
		if (!l)
			return bot_yamlin_fail(r, &fev, "out of memory");
		c->map_fabrics = l;
		strcpy(l[c->nmap_fabrics], fev.s);
		a.fabric = (uint32_t)c->nmap_fabrics++;
		if (bot_yamlin_next(r, &ev) < 0)
			return -1;
		if (ev.type != BOT_YAMLIN_MAP)
			return bot_yamlin_fail(r, &ev, "fabric_map: %s: want a mapping with nodes "
					       "and partitions", c->map_fabrics[a.fabric]);
		for (;;) {
			if (bot_yamlin_next(r, &k) < 0)
				return -1;
			if (k.type == BOT_YAMLIN_END)
				break;
			if (strcmp(k.s, "nodes") && strcmp(k.s, "partitions"))
				return bot_yamlin_fail(r, &k, "fabric_map: %s: unknown key '%.64s' "
						       "(want nodes or partitions)",
						       c->map_fabrics[a.fabric], k.s);
			{
				/* the key's text lives until the next event: keep it */
				const char *key = !strcmp(k.s, "nodes") ? "nodes" : "partitions";
				const char *fab = c->map_fabrics[a.fabric];

				if (bot_yamlin_next(r, &ev) < 0)
					return -1;
				if (ev.type != BOT_YAMLIN_SEQ) {
					if (map_item(r, &a, fab, key, &ev) < 0)
						return -1;
					continue;
				}
				for (;;) {
					if (bot_yamlin_next(r, &ev) < 0)
						return -1;
					if (ev.type == BOT_YAMLIN_END)
						break;
					if (map_item(r, &a, fab, key, &ev) < 0)
						return -1;
				}
			}
		}
	}
	/* a node or partition named twice: refused at its later place */
	if (c->nmap)
		qsort(c->map, c->nmap, sizeof(*c->map), by_entry);
	for (size_t i = 1; i < c->nmap; i++) {
		const struct bot_siteconf_mapent *p = &c->map[i - 1], *e = &c->map[i];
		struct bot_yamlin_ev at = { .line = e->line, .col = e->col };

		if (p->partition != e->partition || strcmp(p->name, e->name))
			continue;
		if (p->fabric == e->fabric)
			return bot_yamlin_fail(r, &at, "fabric_map: %s: %s %s is named twice "
					       "(first at line %u)", c->map_fabrics[e->fabric],
					       e->partition ? "partition" : "node", e->name, p->line);
		return bot_yamlin_fail(r, &at, "fabric_map: %s: %s %s is already in fabric %s "
				       "(line %u)", c->map_fabrics[e->fabric],
				       e->partition ? "partition" : "node", e->name,
				       c->map_fabrics[p->fabric], p->line);
	}
	return 0;
}

static int read_conf(struct bot_yamlin *r, struct bot_siteconf *c)
{
	struct bot_yamlin_ev ev, root, kev, map_key = { 0 };
	char why[512];
	uint64_t version = 0;

	if (bot_yamlin_next(r, &root) < 0)
		return -1;
	if (root.type != BOT_YAMLIN_MAP)
		return bot_yamlin_fail(r, root.type == BOT_YAMLIN_EOF ? NULL : &root,
				       "not a site configuration (want a mapping with version: %d; "
				       "version 1 still read)", BOT_SITECONF_VERSION);
	for (;;) {
		int i;

		if (bot_yamlin_next(r, &kev) < 0)
			return -1;
		if (kev.type == BOT_YAMLIN_END)
			break;
		if (!strcmp(kev.s, "version")) {
			if (bot_yamlin_next(r, &ev) < 0 ||
			    bot_yamlin_u64(r, &ev, "version", 0, 0, UINT32_MAX, &version) < 0)
				return -1;
			if (version < 1 || version > BOT_SITECONF_VERSION)
				return bot_yamlin_version_refused(r, &ev, "version", version,
								  BOT_SITECONF_VERSION);
			continue;
		}
		if (!strcmp(kev.s, "fabric_map")) {
			map_key = kev;
			if (read_map(r, c, &map_key) < 0)
				return -1;
			continue;
		}
		i = find_key(kev.s);
		if (i < 0)
			return bot_yamlin_fail(r, &kev, "unknown key '%.64s'", kev.s);
		if (bot_yamlin_next(r, &ev) < 0)
			return -1;
		if (keys[i].kind == K_LIST) {
			if (ev.type != BOT_YAMLIN_SEQ)
				return bot_yamlin_fail(r, &ev, "fabrics: want a list of fabric names");
			for (;;) {
				if (bot_yamlin_next(r, &ev) < 0)
					return -1;
				if (ev.type == BOT_YAMLIN_END)
					break;
				if (ev.type != BOT_YAMLIN_SCALAR)
					return bot_yamlin_fail(r, &ev, "fabrics: want fabric names");
				if (add_fabric(&c->fabrics, &c->nfabrics, ev.s, why, sizeof(why)) < 0)
					return bot_yamlin_fail(r, &ev, "fabrics: %s", why);
			}
			c->set |= 1u << i;
			continue;
		}
		if (ev.type != BOT_YAMLIN_SCALAR)
			return bot_yamlin_fail(r, &ev, "%s: want a %s", keys[i].name,
					       keys[i].kind == K_NUM ? "number" : "string");
		if (set_scalar(c, i, bot_yamlin_is_null(&ev) ? "" : ev.s, why, sizeof(why)) < 0)
			return bot_yamlin_fail(r, &ev, "%s: %s", keys[i].name, why);
	}
	if (!version)
		return bot_yamlin_fail(r, &root, "no version: %d (version 1 still read)",
				       BOT_SITECONF_VERSION);
	if (c->map_given && version < 2)
		return bot_yamlin_fail(r, &map_key, "fabric_map needs version: 2 (this file says "
				       "version: 1)");
	if (bot_yamlin_next(r, &ev) < 0)
		return -1;
	if (ev.type != BOT_YAMLIN_EOF)
		return bot_yamlin_fail(r, &ev, "more than one document");
	if (finalize(c, why, sizeof(why)) < 0)
		return bot_yamlin_fail(r, NULL, "%s", why);
	return 0;
}

static int load_from(struct bot_yamlin *r, const char *name, struct bot_siteconf *c, char *err,
		     size_t errlen)
{
	int rc = read_conf(r, c);
	uint64_t v;

	if (rc < 0) {
		/* a newer version's file, refused for a key or a value its
		 * version brought before its `version:` line: say the version */
		bot_yamlin_newer(r, "version", "version", BOT_SITECONF_VERSION, &v);
		bot_log_errf(err, errlen, "%s", bot_yamlin_error(r));
		bot_siteconf_free(c);
		bot_siteconf_defaults(c);
	} else {
		snprintf(c->source, sizeof(c->source), "%s", name);
	}
	bot_yamlin_free(r);
	return rc;
}

int bot_siteconf_parse(const char *name, const void *buf, size_t len, struct bot_siteconf *c,
		       char *err, size_t errlen)
{
	struct bot_yamlin *r;

	bot_siteconf_defaults(c);
	r = bot_yamlin_mem(name, buf, len, &conf_limits, err, errlen);
	if (!r)
		return -1;
	return load_from(r, name, c, err, errlen);
}

int bot_siteconf_load(const char *path, struct bot_siteconf *c, char *err, size_t errlen)
{
	const char *env = getenv(BOT_SITECONF_ENV);
	struct bot_yamlin *r;
	struct stat st;

	bot_siteconf_defaults(c);
	if (!path && env && !strcmp(env, BOT_SITECONF_ENV_NONE))
		return 0;	/* no file at all: tests, or a site without one */
	if (!path && env && *env)
		path = env;
	if (!path) {
		if (lstat(BOT_SITECONF_DEFAULT, &st) < 0 && errno == ENOENT)
			return 0;
		path = BOT_SITECONF_DEFAULT;
	}
	r = bot_yamlin_file(path, &conf_limits, geteuid(), err, errlen);
	if (!r)
		return -1;
	return load_from(r, path, c, err, errlen);
}

int bot_siteconf_set(struct bot_siteconf *c, const char *key, const char *value, char *err,
		     size_t errlen)
{
	struct bot_siteconf t = *c;
	char why[512];
	int i = find_key(key);

	if (i < 0)
		return bot_log_errf(err, errlen, "%s: not a site configuration key", key);
	if (keys[i].kind == K_LIST) {
		char (*list)[65] = NULL, item[128];
		size_t n = 0;
		const char *p = value;

		while (*value) {
			size_t len = strcspn(p, ",");

			if (len >= sizeof(item)) {
				free(list);
				return bot_log_errf(err, errlen, "%s: an item of %zu bytes", key, len);
			}
			memcpy(item, p, len);
			item[len] = 0;
			if (add_fabric(&list, &n, item, why, sizeof(why)) < 0) {
				free(list);
				return bot_log_errf(err, errlen, "%s: %s", key, why);
			}
			if (!p[len])
				break;
			p += len + 1;
		}
		t.fabrics = list;
		t.nfabrics = n;
		t.set |= 1u << i;
		free(c->fabrics);
		*c = t;
		return 0;
	}
	if (set_scalar(&t, i, value, why, sizeof(why)) < 0)
		return bot_log_errf(err, errlen, "%s: %s", key, why);
	derive(&t);
	*c = t;
	return 0;
}

int bot_siteconf_check(struct bot_siteconf *c, char *err, size_t errlen)
{
	char why[512];

	if (finalize(c, why, sizeof(why)) < 0)
		return bot_log_errf(err, errlen, "%s", why);
	return 0;
}

int bot_siteconf_fabric_ok(const struct bot_siteconf *c, const char *fabric)
{
	if (!c->nfabrics)
		return 1;
	for (size_t i = 0; i < c->nfabrics; i++)
		if (!strcmp(c->fabrics[i], fabric))
			return 1;
	return 0;
}
