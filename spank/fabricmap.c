/*
 * fabricmap.c - the node -> fabric map (spank/fabricmap.h).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/readall.h"
#include "common/state.h"
#include "learn/log.h"
#include "learn/siteconf.h"
#include "spank/fabricmap.h"

static int node_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

static int by_node(const void *a, const void *b)
{
	return strcmp(((const struct bot_fabricmap_entry *)a)->node,
		      ((const struct bot_fabricmap_entry *)b)->node);
}

/* The load's order: by node, then by line, so that of a node named three
 * or more times the first pair compared is its first two namings (qsort
 * is not stable). */
static int by_node_line(const void *a, const void *b)
{
	const struct bot_fabricmap_entry *x = a, *y = b;
	int c = strcmp(x->node, y->node);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

void bot_fabricmap_free(struct bot_fabricmap *m)
{
	free(m->e);
	m->e = NULL;
	m->n = 0;
}

#define PART_PREFIX "partition:"
#define PART_PREFIX_LEN (sizeof(PART_PREFIX) - 1)

/* The next blank-separated field of [p, end) into out; its length, 0 at
 * the end of the line's content, -1 when too long or holding a bad byte.
 * fabric 2: a node or "partition:NAME" (the map's first field). */
static int field(const char **p, const char *end, char *out, size_t outlen, int fabric)
{
	const char *s;
	size_t n;

	while (*p < end && (**p == ' ' || **p == '\t'))
		(*p)++;
	s = *p;
	if (fabric == 2 && (size_t)(end - s) > PART_PREFIX_LEN &&
	    !memcmp(s, PART_PREFIX, PART_PREFIX_LEN) && node_char((unsigned char)s[PART_PREFIX_LEN]))
		*p += PART_PREFIX_LEN;
	while (*p < end && **p != ' ' && **p != '\t') {
		if (!node_char((unsigned char)**p))
			return -1;
		(*p)++;
	}
	n = (size_t)(*p - s);
	if (n >= outlen)
		return -1;
	memcpy(out, s, n);
	out[n] = 0;
	if (n && fabric == 1 && !bot_state_fabric_ok(out))
		return -1;
	return (int)n;
}

int bot_fabricmap_parse(const char *name, const void *buf, size_t len, struct bot_fabricmap *m,
			char *err, size_t errlen)
{
	const char *p = buf, *end = p + len;
	size_t cap = 0, line = 0;

	m->n = 0;
	m->e = NULL;
	if (len > BOT_FABRICMAP_MAX_BYTES)
		return bot_log_errf(err, errlen, "%s: over %zu bytes", name,
				    BOT_FABRICMAP_MAX_BYTES);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *hash = memchr(p, '#', (size_t)(le - p));
		const char *q = p, *ce = hash ? hash : le;
		struct bot_fabricmap_entry ent;
		char extra[2];
		int a, b;
		/* a CR is no blank here: say so where it is what went wrong */
		const char *cr = memchr(q, '\r', (size_t)(le - q)) ?
			" (the line holds a CR: DOS line ends? convert the file with dos2unix)" : "";

		line++;
		p = nl ? nl + 1 : end;
		if (memchr(q, 0, (size_t)(le - q)))
			goto bad_byte;
		a = field(&q, ce, ent.node, sizeof(ent.node), 2);
		if (a == 0) {
			/* a blank or comment line, if nothing else is on it */
			while (q < ce && (*q == ' ' || *q == '\t'))
				q++;
			if (q != ce)
				goto bad_byte;
			continue;
		}
		if (a < 0)
			goto bad_node;
		b = field(&q, ce, ent.fabric, sizeof(ent.fabric), 1);
		if (b <= 0) {
			if (b == 0) {
				bot_fabricmap_free(m);
				return bot_log_errf(err, errlen, "%s:%zu: node %s without a fabric "
						    "(want NODE FABRIC)", name, line, ent.node);
			}
			bot_fabricmap_free(m);
			return bot_log_errf(err, errlen, "%s:%zu: not a fabric name (want "
					    "[a-z0-9][a-z0-9._-]{0,63})%s", name, line, cr);
		}
		if (bot_state_fabric_reserved(ent.fabric)) {
			bot_fabricmap_free(m);
			return bot_log_errf(err, errlen, "%s:%zu: fabric name '%s' is the name of "
					    "a directory of the state directory's own (inbox, "
					    "quarantine and held are not fabric names)", name, line,
					    ent.fabric);
		}
		if (field(&q, ce, extra, sizeof(extra), 0) != 0 || q != ce) {
			bot_fabricmap_free(m);
			return bot_log_errf(err, errlen, "%s:%zu: more than NODE FABRIC on the line%s",
					    name, line, cr);
		}
		if (m->n == BOT_FABRICMAP_MAX_NODES) {
			bot_fabricmap_free(m);
			return bot_log_errf(err, errlen, "%s:%zu: more than %d nodes", name, line,
					    BOT_FABRICMAP_MAX_NODES);
		}
		if (m->n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct bot_fabricmap_entry *ne = realloc(m->e, nc * sizeof(*ne));

			if (!ne) {
				bot_fabricmap_free(m);
				return bot_log_errf(err, errlen, "%s: out of memory", name);
			}
			m->e = ne;
			cap = nc;
		}
		ent.line = line;
		m->e[m->n++] = ent;
		continue;
bad_node:
		bot_fabricmap_free(m);
		return bot_log_errf(err, errlen, "%s:%zu: not a node name (want 1-64 of "
				    "[A-Za-z0-9._-]) or partition:NAME (NAME 1-54 of them)%s", name,
				    line, cr);
bad_byte:
		bot_fabricmap_free(m);
		return bot_log_errf(err, errlen, "%s:%zu: a byte that has no place in the map%s",
				    name, line, cr);
	}
	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), by_node_line);
	for (size_t i = 1; i < m->n; i++) {
		if (!strcmp(m->e[i - 1].node, m->e[i].node)) {
			char node[BOT_FABRICMAP_NAME_MAX];
			size_t a = m->e[i - 1].line, b = m->e[i].line;	/* a < b */

			memcpy(node, m->e[i].node, sizeof(node));
			bot_fabricmap_free(m);
			return bot_log_errf(err, errlen, "%s:%zu: %s%s is named twice (first on "
					    "line %zu)", name, b, strchr(node, ':') ? "" : "node ",
					    node, a);
		}
	}
	return 0;
}

int bot_fabricmap_load(const char *path, struct bot_fabricmap *m, char *err, size_t errlen)
{
	struct bot_open_rule r = {
		.what = "fabric map", .max = BOT_FABRICMAP_MAX_BYTES, .one_link = 1,
		.check_owner = 1, .uid = getuid(), .root_ok = 1, .owner_writes = 1,
	};
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;

	m->n = 0;
	m->e = NULL;
	if (bot_read_at(AT_FDCWD, path, path, &r, &buf, &len, err, errlen) < 0)
		return -1;
	rc = bot_fabricmap_parse(path, buf, len, m, err, errlen);
	free(buf);
	return rc;
}

const char *bot_fabricmap_lookup(const struct bot_fabricmap *m, const char *node)
{
	struct bot_fabricmap_entry key;
	const struct bot_fabricmap_entry *e;

	if (!m->n || strlen(node) >= sizeof(key.node))
		return NULL;
	strcpy(key.node, node);
	e = bsearch(&key, m->e, m->n, sizeof(*m->e), by_node);
	return e ? e->fabric : NULL;
}

void bot_fabricmap_step_add(const struct bot_fabricmap *m, struct bot_fabricmap_step *s,
			    const char *node)
{
	const char *f;
	char esc[BOT_FABRICMAP_NAME_MAX * 4];

	if (s->state < 0)
		return;
	f = bot_fabricmap_lookup(m, node);
	if (!f) {
		s->state = -1;
		s->fabric[0] = 0;
		snprintf(s->why, sizeof(s->why), "node %s is not in the fabric map",
			 bot_log_esc(esc, sizeof(esc), node));
		return;
	}
	if (s->state == 0) {
		s->state = 1;
		strcpy(s->fabric, f);
		return;
	}
	if (strcmp(s->fabric, f)) {
		snprintf(s->why, sizeof(s->why), "the step's nodes span fabrics %s and %s",
			 s->fabric, f);
		s->state = -1;
		s->fabric[0] = 0;
	}
}

void bot_fabricmap_partitions(const struct bot_fabricmap *m, const char *list,
			      struct bot_fabricmap_step *s)
{
	char key[BOT_FABRICMAP_NAME_MAX], esc[BOT_FABRICMAP_NAME_MAX * 4];
	const char *p = list, *f;

	memset(s, 0, sizeof(*s));
	while (s->state >= 0) {
		size_t n = strcspn(p, ",");

		if (!n || n + PART_PREFIX_LEN >= sizeof(key)) {
			s->state = -1;
			snprintf(s->why, sizeof(s->why), "the partition list is not one the map "
				 "can hold");
			break;
		}
		memcpy(key, PART_PREFIX, PART_PREFIX_LEN);
		memcpy(key + PART_PREFIX_LEN, p, n);
		key[PART_PREFIX_LEN + n] = 0;
		f = bot_fabricmap_lookup(m, key);
		if (!f) {
			s->state = -1;
			snprintf(s->why, sizeof(s->why), "partition %s is not in the fabric map",
				 bot_log_esc(esc, sizeof(esc), key + PART_PREFIX_LEN));
		} else if (s->state == 0) {
			s->state = 1;
			strcpy(s->fabric, f);
		} else if (strcmp(s->fabric, f)) {
			snprintf(s->why, sizeof(s->why), "the partitions span fabrics %s and %s",
				 s->fabric, f);
			s->state = -1;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	if (s->state < 0)
		s->fabric[0] = 0;
}

int bot_fabricmap_from_siteconf(const struct bot_siteconf *c, struct bot_fabricmap *m, char *err,
				size_t errlen)
{
	m->n = 0;
	m->e = NULL;
	if (!c->map_given)
		return 0;
	if (c->nmap && !(m->e = calloc(c->nmap, sizeof(*m->e))))
		return bot_log_errf(err, errlen, "%s: fabric_map: out of memory", c->source);
	for (size_t i = 0; i < c->nmap; i++) {
		const struct bot_siteconf_mapent *s = &c->map[i];
		struct bot_fabricmap_entry *e = &m->e[i];

		/* both checked by the reader: a node of 64 bytes at most, a
		 * partition of 54, under the same key as the text map's */
		size_t pre = s->partition ? PART_PREFIX_LEN : 0, n = strnlen(s->name, 64);

		if (pre + n >= sizeof(e->node))
			n = sizeof(e->node) - 1 - pre;	/* not reached: the reader's bound */
		memcpy(e->node, PART_PREFIX, pre);
		memcpy(e->node + pre, s->name, n);
		e->node[pre + n] = 0;
		snprintf(e->fabric, sizeof(e->fabric), "%s", c->map_fabrics[s->fabric]);
	}
	m->n = c->nmap;
	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), by_node);
	return 1;
}

int bot_fabricmap_load_site(const char *map, const char *config, struct bot_fabricmap *m,
			    char *err, size_t errlen)
{
	struct bot_siteconf c;
	char cerr[BOT_SITECONF_ERR_MAX];
	int rc = 0;

	m->n = 0;
	m->e = NULL;
	if (config && *config && bot_siteconf_load(config, &c, cerr, sizeof(cerr)) == 0) {
		if (c.map_given && map && *map)
			rc = bot_log_errf(err, errlen, "two fabric maps: fabric_map=%s and the "
					  "fabric_map of %s (line %u); give one", map, config,
					  c.map_line);
		else
			rc = bot_fabricmap_from_siteconf(&c, m, err, errlen);
		bot_siteconf_free(&c);
		if (rc)
			return rc;
	}
	if (!map || !*map)
		return 0;
	return bot_fabricmap_load(map, m, err, errlen) < 0 ? -1 : 1;
}
