/*
 * fabricmap.h - the administrator's static map of node -> fabric
 * (plugstack.conf fabric_map=FILE), and the fabric of a step's nodes.
 *
 * A fabric is a hardware and network class (doc/slurm.md), not a switch:
 * a step whose nodes all map to one fabric plans from that fabric's
 * learned state; a node the map does not name, or nodes of two fabrics,
 * give no fabric (the prior), with the reason for the report. Read once
 * per step where the step is decided (srun, sbatch, salloc), never on a
 * compute node and never through an RPC.
 *
 * The file (doc/formats.md section 18; `nccl-bot fabric generate` writes
 * it): text, one "NODE FABRIC" per line, separated by blanks;
 * '#' starts a comment; blank lines are skipped. NODE is 1-64 of
 * [A-Za-z0-9._-], FABRIC a fabric name of doc/formats.md section 12
 * ([a-z0-9][a-z0-9._-]{0,63}). A line "partition:NAME FABRIC" gives a
 * partition's fabric instead (NAME 1-54 of [A-Za-z0-9._-]; stored under
 * that key, which no node name can be), for the batch step decided at
 * submission, before the job has nodes. A node or partition named twice,
 * any other byte, or a line with more or fewer fields is an error naming
 * the line. At most
 * 4 MiB and 262,144 nodes. No Slurm here: node lists are expanded by the
 * caller.
 *
 * The same map may instead be the fabric_map of the site configuration
 * (learn/siteconf.h, doc/formats.md section 15, version 2) that the
 * plugin's config= names: bot_fabricmap_load_site takes it from there.
 * Both fabric_map= and a site configuration with a map is refused (two
 * maps that could disagree), never ranked.
 */
#ifndef BOT_SPANK_FABRICMAP_H
#define BOT_SPANK_FABRICMAP_H

#include <stddef.h>

#define BOT_FABRICMAP_MAX_BYTES ((size_t)4 << 20)
#define BOT_FABRICMAP_MAX_NODES 262144
#define BOT_FABRICMAP_NAME_MAX 65	/* NUL included */

struct bot_fabricmap_entry {
	char node[BOT_FABRICMAP_NAME_MAX];
	char fabric[BOT_FABRICMAP_NAME_MAX];
	size_t line;		/* the map's line that names it (1-based) */
};

struct bot_fabricmap {
	size_t n;
	struct bot_fabricmap_entry *e;	/* malloc()ed, sorted by node */
};

/* Parse a map held in buf (name for messages). 0, or -1 with
 * "NAME:LINE: reason" in err and *m empty. */
int bot_fabricmap_parse(const char *name, const void *buf, size_t len, struct bot_fabricmap *m,
			char *err, size_t errlen);
/* Read and parse path: a regular file with one link, owned by root or by
 * the caller, opened without following a link (common/readall.h). */
int bot_fabricmap_load(const char *path, struct bot_fabricmap *m, char *err, size_t errlen);
void bot_fabricmap_free(struct bot_fabricmap *m);

struct bot_siteconf;
/* The fabric_map of a loaded site configuration as a map: 1 when c has
 * one (it may name no node), 0 when it has none (*m empty), -1 out of
 * memory with the reason in err. */
int bot_fabricmap_from_siteconf(const struct bot_siteconf *c, struct bot_fabricmap *m, char *err,
				size_t errlen);
/*
 * The plugin's map (plugstack.conf): map is fabric_map= (the text file),
 * config is config= (a site configuration); "" or NULL for one not given.
 * 1 with *m loaded, 0 when neither gives a map (fabric= then stands), or
 * -1 with the reason in err: the text map cannot be read or is bad, or
 * both give a map. A site configuration that cannot be read gives no map
 * here (its reader where the step is decided reports it and runs the
 * step on the prior). Read where the step is decided and, for the node's
 * own fabric, in the epilogue (root: the file must then be root's).
 */
int bot_fabricmap_load_site(const char *map, const char *config, struct bot_fabricmap *m,
			    char *err, size_t errlen);

/* The node's fabric, NULL when the map does not name it. */
const char *bot_fabricmap_lookup(const struct bot_fabricmap *m, const char *node);

/* Resolve a step's nodes one at a time: start with a zeroed struct, add
 * each node, then read fabric ("" = none) and why. */
struct bot_fabricmap_step {
	char fabric[BOT_FABRICMAP_NAME_MAX];
	int state;			/* 0 no node yet, 1 one fabric, -1 none */
	char why[256];			/* with state -1 */
};
void bot_fabricmap_step_add(const struct bot_fabricmap *m, struct bot_fabricmap_step *s,
			    const char *node);

/* The fabric of a comma-separated partition list ("a,b"): every one must
 * be in the map and all on one fabric; *s as bot_fabricmap_step_add
 * leaves it (state 1 and fabric, or -1 and why). */
void bot_fabricmap_partitions(const struct bot_fabricmap *m, const char *list,
			      struct bot_fabricmap_step *s);

#endif
