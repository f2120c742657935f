/*
 * fabricgen.h - the fabric map from Slurm's own description of the
 * cluster (`nccl-bot fabric generate`; doc/slurm.md, "Fabric tools").
 *
 * Owns three readers and one rule: Slurm host lists ("n[01-16],gpu7"),
 * slurm.conf's NodeName lines (each node's features) and topology.conf's
 * SwitchName lines (each node's leaf switch, and the top switch above it),
 * and the rule that turns a node's facts into a fabric name (doc/formats.md
 * section 12's rule): a fabric is a hardware and network class, so
 *
 *   feature:PREFIX  the node's one feature starting with PREFIX, PREFIX
 *                   cut off ("fabric_" and feature fabric_h100-ndr ->
 *                   h100-ndr); no such feature: no fabric; two: an error
 *   features        every feature of the node, sorted, joined with '-'
 *   top-switch      the topmost switch above the node's leaf (one tree of
 *                   switches = one network)
 *
 * The fabric is lowercased; a result that is not a fabric name is no
 * fabric (the node is left out of the map, with the reason). No Slurm
 * here: the files are read as text, bounded (4 MiB each, 262,144 nodes,
 * 65,536 switches, names of 64 bytes), and every error names the file
 * and line.
 */
#ifndef BOT_SPANK_FABRICGEN_H
#define BOT_SPANK_FABRICGEN_H

#include <stddef.h>
#include <stdint.h>

#include "learn/hostlist.h"	/* bot_hostlist_expand: the host lists of both files */

#define BOT_FABRICGEN_NAME 65		/* a node or switch name, NUL included */
#define BOT_FABRICGEN_FEATURES 512	/* a node's features, comma-separated */
#define BOT_FABRICGEN_MAX_NODES 262144u
#define BOT_FABRICGEN_MAX_SWITCHES 65536u
#define BOT_FABRICGEN_MAX_BYTES ((size_t)4 << 20)

struct bot_fabricgen_node {
	char name[BOT_FABRICGEN_NAME];
	char features[BOT_FABRICGEN_FEATURES];	/* "" none */
	int leaf;				/* switch index, -1 none */
	int in_conf;				/* slurm.conf defines it (not only
						 * topology.conf) */
};

struct bot_fabricgen_switch {
	char name[BOT_FABRICGEN_NAME];
	int parent;				/* -1 none */
	int leaf;				/* it names nodes */
};

struct bot_fabricgen {
	size_t n, cap;
	struct bot_fabricgen_node *node;	/* sorted by name after each read */
	size_t nsw, swcap;
	struct bot_fabricgen_switch *sw;
	/* while a file is read: names -> index + 1 (open addressing), so that
	 * a node or switch is found or added in O(1) whatever the names' order */
	uint32_t *node_ix, *sw_ix;
	size_t node_ixcap, sw_ixcap;
	char default_features[BOT_FABRICGEN_FEATURES];	/* slurm.conf's NodeName=DEFAULT */
};


/* Add slurm.conf's NodeName lines (their Features=/Feature=; NodeName=DEFAULT
 * sets the default features of the lines after it). name: for messages. */
int bot_fabricgen_slurmconf(struct bot_fabricgen *g, const char *name, const char *buf,
			    size_t len, char *err, size_t errlen);

/* Add topology.conf's SwitchName lines (Nodes= makes a leaf, Switches= the
 * children of a switch). A node under two leaves, a switch under two
 * parents or a loop is an error. After an error (of either reader) g holds
 * part of the file: free it, do not use it. */
int bot_fabricgen_topology(struct bot_fabricgen *g, const char *name, const char *buf,
			   size_t len, char *err, size_t errlen);

/* Is rule one of the rules above? */
int bot_fabricgen_rule_ok(const char *rule);

/* The node's fabric under rule into out; 0, 1 no fabric (why says so), -1
 * an error (why). */
int bot_fabricgen_fabric(const struct bot_fabricgen *g, const struct bot_fabricgen_node *n,
			 const char *rule, char *out, size_t len, char *why, size_t whylen);

/* The node named, NULL when neither file named it. */
const struct bot_fabricgen_node *bot_fabricgen_find(const struct bot_fabricgen *g,
						    const char *name);

void bot_fabricgen_free(struct bot_fabricgen *g);

#endif
