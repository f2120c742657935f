/*
 * siteconf.h - the site configuration (doc/formats.md section 15, version
 * 2; version 1 still read): one optional YAML file read by ship, compact
 * and the SPANK plugin.
 *
 * Owns its keys, their defaults and ranges, and where the file is looked
 * for: the caller's path (`--config FILE`), else NCCL_BOT_CONFIG (the
 * word "none": no file, every default; what tests set so that they never
 * read the host's file), else BOT_SITECONF_DEFAULT when it exists, else
 * every default. Read with the
 * bounded reader (learn/yamlin.h: at most 1 MiB, depth 8, 65,536 scalars,
 * no aliases, anchors, tags or duplicate keys); numbers follow section
 * 11's grammar (common/settings.h); an unknown key is refused naming its
 * line. Command-line options override the file through bot_siteconf_set,
 * which takes the same key names and the same grammar, so an option and
 * the file's key can never mean different things. Tools and SPANK only.
 *
 * Version 2 adds fabric_map (node -> fabric, and partition -> fabric):
 * per fabric its nodes as Slurm host lists (learn/hostlist.h) and its
 * partitions, checked and expanded here (every node and partition in one
 * fabric only, bounded), kept as a flat list that spank/fabricmap.h turns
 * into the plugin's map. A version 1 file without it reads as before.
 */
#ifndef BOT_LEARN_SITECONF_H
#define BOT_LEARN_SITECONF_H

#include <stddef.h>
#include <stdint.h>

#define BOT_SITECONF_DEFAULT "/etc/nccl-bot/site.yaml"
#define BOT_SITECONF_ENV "NCCL_BOT_CONFIG"
#define BOT_SITECONF_ENV_NONE "none"	/* NCCL_BOT_CONFIG=none: read no file */
#define BOT_SITECONF_MAX_BYTES ((size_t)1 << 20)
#define BOT_SITECONF_MAX_SCALARS 65536
#define BOT_SITECONF_STR_MAX 4096	/* a path or a command, NUL included */
#define BOT_SITECONF_MAX_FABRICS 4096
#define BOT_SITECONF_ERR_MAX 1280
#define BOT_SITECONF_VERSION 2		/* 1 still read (no fabric_map) */
#define BOT_SITECONF_MAX_MAP_NODES 262144	/* after the host lists are expanded */
#define BOT_SITECONF_MAX_MAP_PARTITIONS 4096
#define BOT_SITECONF_PARTITION_MAX 55	/* 1-54 of [A-Za-z0-9._-], NUL included */

/* One node or partition of fabric_map, with where the file named it. */
struct bot_siteconf_mapent {
	char name[65];			/* a node (1-64 of [A-Za-z0-9._-]) or a partition */
	uint8_t partition;		/* 1: a partition */
	uint32_t fabric;		/* index into map_fabrics */
	uint32_t line, col;		/* the list item that named it, from 1 */
};

/* bits of bot_siteconf.set: which keys were given (file or override) */
enum bot_siteconf_key {
	BOT_SITECONF_STATE_DIR, BOT_SITECONF_OUTBOX_DIR, BOT_SITECONF_SHIP_COMMAND,
	BOT_SITECONF_METRICS_DIR, BOT_SITECONF_RETENTION, BOT_SITECONF_WINDOW,
	BOT_SITECONF_USER_CAP, BOT_SITECONF_ACCOUNT_CAP, BOT_SITECONF_DEDUP_WINDOWS,
	BOT_SITECONF_SETTLE, BOT_SITECONF_MAX_WAIT, BOT_SITECONF_CONSENSUS_MIN,
	BOT_SITECONF_FABRICS, BOT_SITECONF_CONSENSUS_USERS, BOT_SITECONF_HOLD_WINDOWS,
	BOT_SITECONF_NKEYS
};

struct bot_siteconf {
	char source[BOT_SITECONF_STR_MAX];	/* the file read; "" when only defaults */
	char state_dir[BOT_SITECONF_STR_MAX];	/* default /var/lib/nccl-bot/state */
	char outbox_dir[BOT_SITECONF_STR_MAX];	/* default /var/spool/nccl-bot/outbox */
	char ship_command[BOT_SITECONF_STR_MAX];	/* "": copy into <state_dir>/inbox */
	char metrics_dir[BOT_SITECONF_STR_MAX];	/* "": no metrics */
	uint64_t retention;		/* 2..1024, default 8 */
	uint64_t window;		/* seconds, 60..2^31, default 86400 */
	uint64_t user_cap;		/* samples, 1..2^32, default 4096 */
	uint64_t account_cap;		/* samples, 1..2^34, default 4 x user_cap */
	uint64_t dedup_windows;		/* 1..1024, default 14 */
	uint64_t settle;		/* seconds, 0..2^31, default 300 */
	uint64_t max_wait;		/* seconds, settle..2^31, default 3600 */
	uint64_t consensus_min;		/* contexts, 1..2^20, default 4 */
	uint64_t consensus_users;	/* uids that accept a held step, 1..2^20, default 3 */
	uint64_t hold_windows;		/* windows a step is held, 1..dedup_windows-1 (default) */
	size_t nfabrics;		/* 0: no list (every fabric accepted) */
	char (*fabrics)[65];		/* malloc()ed, section 12's names, unique */
	unsigned set;			/* bit per enum bot_siteconf_key */
	/* fabric_map (version 2; not a command-line key) */
	int map_given;			/* the file has fabric_map (maybe naming nothing) */
	unsigned map_line;		/* the line of its key */
	size_t nmap_fabrics;
	char (*map_fabrics)[65];	/* malloc()ed, in the file's order */
	size_t nmap;
	struct bot_siteconf_mapent *map;	/* malloc()ed, sorted: nodes, then partitions,
						 * each by name; unique */
};

/* Every default (no file). */
void bot_siteconf_defaults(struct bot_siteconf *c);
void bot_siteconf_free(struct bot_siteconf *c);

/*
 * Load the configuration: path (`--config`), or NULL for the lookup above.
 * A path given (or NCCL_BOT_CONFIG, unless "none") must exist; the default
 * file may be absent. The file must be a regular file with one link, owned by root or
 * by the caller. 0 with *c filled (bot_siteconf_free), or -1 with
 * "FILE:LINE:COL: reason" in err and *c holding the defaults.
 */
int bot_siteconf_load(const char *path, struct bot_siteconf *c, char *err, size_t errlen);
/* The same over bytes named `name` (tests, fuzzing). */
int bot_siteconf_parse(const char *name, const void *buf, size_t len, struct bot_siteconf *c,
		       char *err, size_t errlen);

/*
 * Set one key from a command line (key as in the file: "retention",
 * "state_dir", "fabrics" as a comma-separated list, ...), with the file's
 * grammar and range. 0, or -1 with "KEY: reason" in err and *c unchanged.
 * The rules between keys (max_wait >= settle, ...) are checked once all
 * overrides are in, by bot_siteconf_check, so that the order of options
 * does not matter.
 */
int bot_siteconf_set(struct bot_siteconf *c, const char *key, const char *value, char *err,
		     size_t errlen);
/* The rules between keys after overrides: 0, or -1 with the reason. */
int bot_siteconf_check(struct bot_siteconf *c, char *err, size_t errlen);

/* Is fabric accepted (the list is empty, or holds it)? */
int bot_siteconf_fabric_ok(const struct bot_siteconf *c, const char *fabric);

#endif
