/*
 * fuzz_siteconf.c - fuzz target for the site configuration reader
 * (learn/siteconf.c) and the bounded YAML reader under it (learn/yamlin.c).
 *
 * The configuration is read by root-side code (SPANK, the compactor), so
 * any bytes must come back as a refusal naming "site.yaml" and leaving the
 * defaults, or as a configuration whose every value is within its range:
 * retention >= 2, account_cap >= user_cap, max_wait >= settle, paths
 * absolute or empty, no control character in a string, fabric names by
 * section 12's rule; a fabric_map (version 2) of valid, unique, sorted
 * node and partition names within the bounds, each on a fabric of its
 * own list. The same bytes are also walked event by event under
 * tight limits, which must end in EOF or an error, never a crash, a hang
 * or a leak. Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/state.h"
#include "learn/hostlist.h"
#include "learn/siteconf.h"
#include "learn/yamlin.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void clean_str(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

static void walk(const uint8_t *data, size_t size)
{
	static const struct bot_yamlin_limits lim = { 1 << 16, 3, 64, 32 };
	struct bot_yamlin *r = bot_yamlin_mem("w", data, size, &lim, NULL, 0);
	struct bot_yamlin_ev ev;
	unsigned depth = 0;

	if (!r)
		return;
	for (;;) {
		if (bot_yamlin_next(r, &ev) < 0) {
			if (strncmp(bot_yamlin_error(r), "w", 1))
				abort();
			break;
		}
		if (ev.type == BOT_YAMLIN_EOF)
			break;
		if (ev.type == BOT_YAMLIN_MAP || ev.type == BOT_YAMLIN_SEQ)
			depth++;
		else if (ev.type == BOT_YAMLIN_END)
			depth--;
		else if (ev.len > 32 || strlen(ev.s) != ev.len)
			abort();
		if (depth > 3)
			abort();
	}
	bot_yamlin_free(r);
}

static void check_map(const struct bot_siteconf *c)
{
	size_t parts = 0;

	if (!c->map_given && (c->nmap || c->nmap_fabrics))
		abort();
	if (c->nmap_fabrics > BOT_SITECONF_MAX_FABRICS)
		abort();
	for (size_t i = 0; i < c->nmap_fabrics; i++)
		if (!bot_state_fabric_ok(c->map_fabrics[i]))
			abort();
	for (size_t i = 0; i < c->nmap; i++) {
		const struct bot_siteconf_mapent *e = &c->map[i];

		if (e->fabric >= c->nmap_fabrics || !bot_hostlist_name_ok(e->name) ||
		    (e->partition && strlen(e->name) >= BOT_SITECONF_PARTITION_MAX))
			abort();
		parts += e->partition;
		if (i && (c->map[i - 1].partition > e->partition ||
			  (c->map[i - 1].partition == e->partition &&
			   strcmp(c->map[i - 1].name, e->name) >= 0)))
			abort();	/* sorted and unique */
	}
	if (parts > BOT_SITECONF_MAX_MAP_PARTITIONS ||
	    c->nmap - parts > BOT_SITECONF_MAX_MAP_NODES)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_siteconf c;
	char err[BOT_SITECONF_ERR_MAX];

	walk(data, size);
	err[0] = 0;
	if (bot_siteconf_parse("site.yaml", data, size, &c, err, sizeof(err)) < 0) {
		if (strncmp(err, "site.yaml", 9) || c.nfabrics || c.retention != 8 || c.set ||
		    c.map_given || c.nmap || c.nmap_fabrics)
			abort();
		bot_siteconf_free(&c);
		return 0;
	}
	if (c.retention < 2 || c.account_cap < c.user_cap || c.max_wait < c.settle ||
	    c.user_cap < 1 || c.window < 60)
		abort();
	clean_str(c.state_dir);
	clean_str(c.outbox_dir);
	clean_str(c.ship_command);
	clean_str(c.metrics_dir);
	if ((c.state_dir[0] && c.state_dir[0] != '/') || (c.metrics_dir[0] && c.metrics_dir[0] != '/'))
		abort();
	for (size_t i = 0; i < c.nfabrics; i++)
		if (!bot_state_fabric_ok(c.fabrics[i]))
			abort();
	check_map(&c);
	bot_siteconf_free(&c);
	return 0;
}
