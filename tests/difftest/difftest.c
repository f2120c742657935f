/*
 * difftest.c - differential fuzzing of two builds of libnccl-tuner-bot.so:
 * the same random inputs into both, every output compared, every
 * difference classified as one of the intended changes or reported.
 *
 * usage: difftest NEW.so REF.so FAKE_NCCL.so [CALLS [SEED]]
 * (DIFFTEST_REF_TABLE_VERSION: the newest step-table format REF.so reads,
 * default 1; valid tables are written in formats 1 up to it)
 *
 * Run it through tests/difftest/run.sh, which builds the reference .so from
 * a git revision, the fake NCCL and this driver (see there). Not part of
 * `make check`: it needs a second build.
 *
 * Each build is loaded with dlmopen(LM_ID_NEWLM) into a link-map namespace
 * of its own, with its own copy of libc, so the two share no state (pools,
 * the static step table, the environment) and each one's environment is set
 * through its own libc's setenv(). FAKE_NCCL.so is loaded into both
 * namespaces: it exports ncclGetVersion(), answering what the driver sets,
 * as libnccl does in a real process, and holds the logger each build is
 * given, as libnccl does (tuner/ncclver.h asks only the logger's object).
 *
 * An iteration picks the inputs every rank-side decision depends on: the
 * NCCL_BOT_* environment (valid spellings and refused ones), a step table
 * (none, valid with plans, probes, corrections, allow-lists, shadow and any
 * policy, corrupt, another format version, garbage), NCCL_ALGO sometimes,
 * the tuner ABI version (3..6), nranks/nnodes, the NCCL version the fake
 * reports, and 1-3 communicators (commIds). Both builds init the same
 * contexts (results compared), then get the same calls: collectives in and
 * out of range, sizes at the edges, cost tables mixing -1, 0, -0, NaN, inf,
 * subnormals, values near 3.6e9 and FLT_MAX, ties, all-ignored rows,
 * numAlgo 6 or 7 and numProto 3 (what NCCL passes), NULL tables and NULL
 * nChannels. Every call's table (every byte of the buffer),
 * nChannels and return value are compared.
 *
 * Intended changes, by class (a difference in any other call fails):
 *   cap    the new build believes NCCL >= 2.29 (tuner v6, or v5 with
 *          ncclGetVersion() >= 22900) and the row has an entry in
 *          [3.6e9, FLT_MAX), which 2.29+ can pick; from then on the same
 *          cell's sweep counter may differ too (the cell, a context's
 *          collective and size bucket, is "tainted")
 *   env    an NCCL_BOT_* spelling whose meaning the settings grammar changed
 *          (octal/hex/suffixed numbers, all/none/empty items in allow-lists,
 *          NCCL_BOT_DEBUG other than 0/1), computed per variable with the
 *          old parsers (copied below from the reference revision) and
 *          bot_env_read()
 *   ignored an all-ignored row (no entry >= 0): counted, expected to agree
 *   newid  the step table names a policy id 12-15 (the -free variants), which
 *          the reference reads as auto
 *   family AUTO's pick is NVLS or NVLS_TREE and the other has an entry >= 0:
 *          the new build may force that sibling (the NVLS family); the cell
 *          is tainted like cap's (its sweep counter may move differently)
 *
 * Classes are no blind spot: in every iteration where cap or env applies, a
 * twin context in the new build gets the old meaning (the environment
 * rewritten in the new grammar; AUTO's old cap, through tuner v5 with NCCL
 * 2.28, which decides as v6 but for the cap) and is compared with the
 * reference strictly, on every call.
 *
 * Output: counts of calls, inits and differences per class; exit 1 on any
 * unclassified difference (the first ones are printed in full).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <float.h>
#include <inttypes.h>
#include <link.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "common/table.h"
#include "policies/context.h"

/* the step table names a policy id the reference does not know (12-15,
 * the -free variants): it reads them as auto */
static int table_newid;
/* The newest step-table format the reference reads (run.sh passes it; 1
 * for revisions before formats were versioned): valid tables are written
 * in a format both builds read, 1 up to it, so that the same bytes are
 * compared (doc/formats.md section 8: a format version decides alike in
 * every build that reads it). */
static unsigned ref_table_version = 1;

typedef void (*logger_t)(int level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...);

/* NCCL's side of the tuner ABI (doc/nccl-abi.md, tuner ABI), declared here. */
struct tuner_v3 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int *nChannels);
	int (*destroy)(void *ctx);
};

struct tuner_v4 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*destroy)(void *ctx);
};

struct tuner_v5 {	/* v6 adds getChunkSize after finalize */
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, logger_t log,
		    void *nvl, void *constants);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*finalize)(void *ctx);
};

#define NBUF 64		/* floats per cost-table buffer (NCCL's is 21) */
#define MAXCTX 3
#define NVARS 8

static const char *const vars[NVARS] = {
	"NCCL_BOT_TABLE", "NCCL_BOT_POLICY", "NCCL_BOT_SEED", "NCCL_BOT_MIN_BYTES",
	"NCCL_BOT_ALLOW", "NCCL_BOT_DEBUG", "NCCL_ALGO", "NCCL_PROTO",
};
enum { V_TABLE, V_POLICY, V_SEED, V_MIN, V_ALLOW, V_DEBUG, V_ALGO, V_PROTO };

struct build {
	const char *name;
	void *so, *libc, *fake;
	int (*set)(const char *, const char *, int);
	int (*unset)(const char *);
	int *nccl_version;
	logger_t logger;	/* in FAKE_NCCL.so, as NCCL's is in libnccl */
	char *lastlog;
	const struct tuner_v3 *v3;
	const struct tuner_v4 *v4;
	const struct tuner_v5 *v5, *v6;
};

static struct build nb = { .name = "new" }, rb = { .name = "ref" };

/* The logger is FAKE_NCCL.so's (difftest_logger): the new build's init line
 * says which cap it chose. */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	exit(2);
}

static void *sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p)
		die("difftest: %s: %s\n", name, dlerror());
	return p;
}

static void load(struct build *b, const char *path, const char *fake)
{
	Lmid_t lmid;

	b->so = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!b->so)
		die("difftest: dlmopen %s: %s\n", path, dlerror());
	if (dlinfo(b->so, RTLD_DI_LMID, &lmid))
		die("difftest: dlinfo: %s\n", dlerror());
	b->libc = dlmopen(lmid, "libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	b->fake = dlmopen(lmid, fake, RTLD_NOW | RTLD_LOCAL);
	if (!b->libc || !b->fake)
		die("difftest: dlmopen into the namespace of %s: %s\n", path, dlerror());
	b->set = (int (*)(const char *, const char *, int))sym(b->libc, "setenv");
	b->unset = (int (*)(const char *))sym(b->libc, "unsetenv");
	b->nccl_version = sym(b->fake, "difftest_nccl_version");
	b->logger = (logger_t)sym(b->fake, "difftest_logger");
	b->lastlog = sym(b->fake, "difftest_lastlog");
	b->v3 = sym(b->so, "ncclTunerPlugin_v3");
	b->v4 = sym(b->so, "ncclTunerPlugin_v4");
	b->v5 = sym(b->so, "ncclTunerPlugin_v5");
	b->v6 = sym(b->so, "ncclTunerPlugin_v6");
}

/* ---- randomness --------------------------------------------------------- */

static uint64_t rs;

static uint64_t rnd(void)
{
	rs += 0x9e3779b97f4a7c15ULL;
	return bot_mix64(rs);
}

static unsigned rn(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static int chance(unsigned pct)
{
	return rn(100) < pct;
}

/* ---- the old parsers (revision 813b7d5, tuner/tuner.c), for classing ---- */

static int old_u64(const char *s, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (!*s)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return -1;
	} else if (s[0] == '0' && s[1]) {
		base = 8;
		s++;
	}
	for (; *s; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (d >= base || v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int old_allow(const char *list, uint32_t *allow)
{
	char buf[512], *save = NULL, *tok;
	uint32_t a = 0;

	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int arm = strchr(tok, '/') ? bot_arm_parse(tok) : -1;
		int algo = strchr(tok, '/') ? -1 : bot_algo_parse(tok);

		if (arm >= 0) {
			a |= 1u << arm;
		} else if (algo >= 0) {
			for (int p = 0; p < BOT_NPROTO; p++)
				a |= 1u << bot_arm(algo, p);
		} else {
			return -1;
		}
	}
	*allow = a;
	return 0;
}

/* ---- one iteration's environment ---------------------------------------- */

static const char *env_val[NVARS];
static char table_text[BOT_TABLE_MAX_TEXT + 64];

static const char *env_get(const char *name)
{
	for (int i = 0; i < NVARS; i++)
		if (!strcmp(name, vars[i]))
			return env_val[i];
	return NULL;
}

static void env_apply(struct build *b)
{
	for (int i = 0; i < NVARS; i++) {
		if (env_val[i])
			b->set(vars[i], env_val[i], 1);
		else
			b->unset(vars[i]);
	}
}

/* Whether a variable the decisions read means something else to the new
 * build than to the old one (the decisions read the no-table variables
 * only without a table and without NCCL_ALGO/NCCL_PROTO). */
static int env_changed(void)
{
	const char *t = env_val[V_TABLE];
	struct bot_env e;
	uint64_t u;
	uint32_t a;
	int changed = 0;

	bot_env_read(&e, env_get);
	{
		const char *v = env_val[V_DEBUG];
		int old = v && *v && strcmp(v, "0") != 0;

		changed |= old != e.debug;
	}
	if ((t && *t) || (env_val[V_ALGO] && *env_val[V_ALGO]) ||
	    (env_val[V_PROTO] && *env_val[V_PROTO]))
		return changed;
	if (env_val[V_POLICY] && *env_val[V_POLICY]) {
		int id = bot_policy_parse(env_val[V_POLICY]);

		changed |= (id >= 0 ? id : 0) != e.policy;
	}
	if (env_val[V_SEED] && *env_val[V_SEED])
		changed |= (old_u64(env_val[V_SEED], &u) == 0 ? u : 0) != e.seed;
	if (env_val[V_MIN] && *env_val[V_MIN]) {
		unsigned k = 20;

		if (old_u64(env_val[V_MIN], &u) == 0 && u <= (1ULL << 63))
			k = bot_set_log2_ceil(u);
		changed |= k != e.min_bytes_log2;
	}
	if (env_val[V_ALLOW] && *env_val[V_ALLOW])
		changed |= (old_allow(env_val[V_ALLOW], &a) == 0 ? a : 0) != e.allow;
	return changed;
}

/* The new build's spelling of what the old build read from the current
 * environment (the old parsers' values, written in the new grammar), for
 * the strict comparison of env-class iterations. */
static char tr_seed[32], tr_min[32], tr_allow[512];
static const char *tr_val[NVARS];

static void env_translate(void)
{
	const char *t = env_val[V_TABLE];
	uint64_t u;
	uint32_t a;

	memcpy(tr_val, env_val, sizeof(tr_val));
	if (env_val[V_DEBUG] && *env_val[V_DEBUG])
		tr_val[V_DEBUG] = strcmp(env_val[V_DEBUG], "0") ? "1" : "0";
	if ((t && *t) || (env_val[V_ALGO] && *env_val[V_ALGO]) ||
	    (env_val[V_PROTO] && *env_val[V_PROTO]))
		return;
	if (env_val[V_SEED] && *env_val[V_SEED]) {
		snprintf(tr_seed, sizeof(tr_seed), "%" PRIu64,
			 old_u64(env_val[V_SEED], &u) == 0 ? u : 0);
		tr_val[V_SEED] = tr_seed;
	}
	if (env_val[V_MIN] && *env_val[V_MIN]) {
		unsigned k = 20;

		if (old_u64(env_val[V_MIN], &u) == 0 && u <= (1ULL << 63))
			k = bot_set_log2_ceil(u);
		snprintf(tr_min, sizeof(tr_min), "%" PRIu64, (uint64_t)1 << k);
		tr_val[V_MIN] = tr_min;
	}
	if (env_val[V_ALLOW] && *env_val[V_ALLOW]) {
		size_t n = 0;

		if (old_allow(env_val[V_ALLOW], &a))
			a = 0;
		strcpy(tr_allow, "none");
		for (int arm = 0; arm < BOT_NARMS; arm++)
			if (a >> arm & 1)
				n += (size_t)snprintf(tr_allow + n, sizeof(tr_allow) - n, "%s%s",
						      n ? "," : "", bot_arm_name(arm));
		tr_val[V_ALLOW] = tr_allow;
	}
}

static void env_apply_tr(struct build *b)
{
	for (int i = 0; i < NVARS; i++) {
		if (tr_val[i])
			b->set(vars[i], tr_val[i], 1);
		else
			b->unset(vars[i]);
	}
}

static const char *pick(const char *const *list, unsigned n)
{
	return list[rn(n)];
}

#define PICK(list) pick(list, sizeof(list) / sizeof(list[0]))

static void env_random(void)
{
	static const char *const policies[] = {
		"auto", "sweep", "greedy", "egreedy", "ucb1", "thompson", "etc", "greedy-cold",
		"ucb1-cold", "thompson-cold", "frozen", "shadow", "Thompson_Cold", "SWEEP",
		"thompsn", "", " sweep", "sweep ", "greedy-", "-greedy",
	};
	static const char *const numbers[] = {
		"0", "1", "7", "1023", "1024", "1048576", "1000000", "3000000", "4194304",
		"9223372036854775808", "9223372036854775809", "18446744073709551615",
		"18446744073709551616", "010", "00", "0x10", "0X100000", "0x", "0xffffffffffffffff",
		"0x1ffffffffffffffff", " 7", "7 ", "+7", "-1", "1e3", "1MiB", "2MiB", "4KiB", "1GiB",
		"1mib", "1M", "MiB", "", "0777", "08", "0x0000000000000000001",
	};
	static const char *const allows[] = {
		"all", "none", "nvls", "nvls/simple", "collnet_direct,collnet_chain", "NVLS/Simple",
		"Ring", "tree,ring,pat", "nvls,,tree", "nvls,", ",nvls", "all,tree", "none,nvls",
		"nvls_tree/ll128,collnet_chain/ll", "nvls tree", "nvls/fast", "", "ALL", "pat/ll",
		"collnetdirect", "nvls-tree",
	};
	static const char *const debugs[] = { "0", "1", "yes", "2", "", " 1", "true" };
	static const char *const dynamic[] = { "sweep", "thompson", "egreedy", "ucb1", "etc",
					       "greedy", "frozen", "shadow", "ucb1-cold" };

	for (int i = V_POLICY; i < NVARS; i++)
		env_val[i] = NULL;
	if (chance(85))
		env_val[V_POLICY] = chance(60) ? PICK(dynamic) : PICK(policies);
	if (chance(40))
		env_val[V_SEED] = chance(50) ? PICK(numbers) : "12345";
	if (chance(50))
		env_val[V_MIN] = chance(50) ? PICK(numbers) : chance(50) ? "1024" : "65536";
	if (chance(40))
		env_val[V_ALLOW] = PICK(allows);
	if (chance(20))
		env_val[V_DEBUG] = PICK(debugs);
	if (chance(3))
		env_val[V_ALGO] = chance(50) ? "Ring" : "";
	if (chance(2))
		env_val[V_PROTO] = "Simple";
}

/* ---- step tables ----------------------------------------------------------- */

static struct bot_table tbl;

#define PICKA(list) (list)[rn(sizeof(list) / sizeof((list)[0]))]
static const unsigned rtp[] = { BOT_ALGO_RING, BOT_ALGO_TREE, BOT_ALGO_PAT };

static int table_random(uint32_t nranks, uint32_t nnodes)
{
	static uint8_t used[BOT_NCOLL][BOT_NBUCKETS];
	unsigned nent, ncorr;
	int shape;
	long n;

	static const int pol[] = { BOT_POLICY_SWEEP, BOT_POLICY_SWEEP, BOT_POLICY_THOMPSON,
				   BOT_POLICY_EGREEDY, BOT_POLICY_GREEDY, BOT_POLICY_SHADOW };

	bot_table_init(&tbl, chance(60) ? pol[rn(6)] : (int)rn(BOT_NPOLICY), rnd());
	if (chance(3))
		tbl.policy = (uint8_t)(BOT_NPOLICY + rn(200));
	table_newid = tbl.policy >= BOT_POLICY_GREEDY_FREE && tbl.policy < BOT_NPOLICY;
	tbl.flags = (uint8_t)rn(4);
	tbl.min_bytes_log2 = (uint8_t)(chance(80) ? 8 + rn(20) : rn(64));
	tbl.allow = chance(50) ? 0 : (uint32_t)rnd() & ((1u << BOT_NARMS) - 1);
	if (chance(5))
		bot_table_shape(&tbl, nranks + 1, nnodes);
	shape = chance(85) ? bot_table_shape(&tbl, nranks, nnodes) : -1;
	bot_table_shape(&tbl, nranks * 2, nnodes);
	if (shape < 0)
		shape = 0;
	memset(used, 0, sizeof(used));
	nent = chance(20) ? rn(1200) : rn(400);
	for (unsigned i = 0; i < nent; i++) {
		struct bot_table_entry *e = &tbl.entries[tbl.nentries];
		unsigned coll = rn(BOT_NCOLL), b = chance(80) ? 40 + rn(96) : rn(256);
		unsigned lo = 0;

		if (used[coll][b])
			continue;
		used[coll][b] = 1;
		memset(e, 0, sizeof(*e));
		e->shape = (uint8_t)shape;
		e->coll = (uint8_t)coll;
		e->bucket = (uint8_t)b;
		e->plan.exploit = (uint8_t)(chance(15) ? BOT_ARM_AUTO :
					    chance(50) ? (unsigned)bot_arm((int)PICKA(rtp), (int)rn(3)) :
					    rn(BOT_NARMS));
		e->plan.nchannels = (uint8_t)(chance(50) ? 0 : rn(65));
		e->plan.nprobe = (uint8_t)rn(BOT_MAX_PROBES + 1);
		for (unsigned k = 0; k < e->plan.nprobe; k++) {
			unsigned left = BOT_PROBE_BUCKETS - lo;

			if (left < 2) {
				e->plan.nprobe = (uint8_t)k;
				break;
			}
			e->plan.probe[k].arm = (uint8_t)(chance(10) ? BOT_ARM_AUTO : rn(BOT_NARMS));
			e->plan.probe[k].lo = (uint16_t)(lo + rn(left / 2));
			e->plan.probe[k].hi = (uint16_t)(e->plan.probe[k].lo + 1 +
							 rn(BOT_PROBE_BUCKETS - e->plan.probe[k].lo));
			lo = e->plan.probe[k].hi;
		}
		tbl.nentries++;
	}
	ncorr = chance(50) ? rn(chance(10) ? 3000 : 400) : 0;
	{
		static uint8_t cused[BOT_NCOLL][BOT_NARMS][64];

		memset(cused, 0, sizeof(cused));
		for (unsigned i = 0; i < ncorr; i++) {
			unsigned c = rn(BOT_NCOLL), a = rn(BOT_NARMS), l = chance(80) ? 8 + rn(30) : rn(64);

			if (cused[c][a][l])
				continue;
			cused[c][a][l] = 1;
			tbl.corr[tbl.ncorr++] = (struct bot_table_corr){
				(uint8_t)c, (uint8_t)a, (uint8_t)l,
				chance(5) ? (uint32_t)rnd() : chance(5) ? 0 : 16384 + rn(4 * 65536) };
		}
	}
	if (bot_table_normalize(&tbl))
		return -1;
	tbl.version = (uint8_t)(1 + rn(ref_table_version < BOT_TABLE_VERSION ? ref_table_version
									   : BOT_TABLE_VERSION));
	n = bot_table_encode(&tbl, table_text, sizeof(table_text));
	return n < 0 ? -1 : 0;
}

static int table_kind;	/* 0 none, 1 valid, 2 corrupt, 3 other version, 4 garbage */

static void table_env(uint32_t nranks, uint32_t nnodes)
{
	unsigned r = rn(100);

	env_val[V_TABLE] = NULL;
	table_kind = 0;
	table_newid = 0;
	if (r < 40)
		return;
	if (table_random(nranks, nnodes) < 0) {
		table_newid = 0;
		return;
	}
	table_kind = 1;
	env_val[V_TABLE] = table_text;
	if (r < 48) {
		size_t n = strlen(table_text);

		/* a flipped payload character: digest mismatch (or syntax) */
		table_text[BOT_TABLE_HEAD_LEN + rn((unsigned)(n - BOT_TABLE_HEAD_LEN))] ^= 1;
		table_kind = 2;
		table_newid = 0;
	} else if (r < 51) {
		table_text[3] = '4';	/* a format this build does not read */
		table_kind = 3;
		table_newid = 0;
	} else if (r < 53) {
		static const char *const junk[] = { "NBT1.", "NBT", "hello", "NBT1.0123", "NBT12.x" };

		snprintf(table_text, sizeof(table_text), "%s", PICK(junk));
		table_kind = 4;
		table_newid = 0;
	}
}

/* ---- cost tables and calls -------------------------------------------------- */

static float special(void)
{
	static const float v[] = {
		0.0f, -0.0f, -1.0f, -0.5f, NAN, -NAN, INFINITY, -INFINITY, 1e-45f, 1e-40f,
		3.6e9f, 3.6e9f + 256.0f, 3.6e9f - 256.0f, 4e9f, 1e30f, FLT_MAX,
		0x1.fffffcp127f, 1e-3f, 1.0f, 2.0f,
	};

	return v[rn(sizeof(v) / sizeof(v[0]))];
}

static void cost_random(float *t, unsigned n)
{
	unsigned mode = rn(100);

	for (unsigned i = 0; i < NBUF; i++)
		t[i] = -1.0f;
	if (mode < 3)
		return;		/* all ignored */
	for (unsigned i = 0; i < n && i < NBUF; i++) {
		unsigned r = rn(100);

		if (mode < 5)
			t[i] = r < 30 ? -1.0f : 3.6e9f * (1.0f + (float)rn(1000));
		else if (r < 20)
			t[i] = -1.0f;
		else if (r < 82)
			t[i] = (float)exp((double)rn(20000) / 1000.0 - 7.0);
		else if (r < 88 && i)
			t[i] = t[rn(i)];	/* a tie */
		else if (r < 92)
			t[i] = 2.0f * t[rn(n)];	/* exactly 2x */
		else if (r < 94)
			t[i] = nextafterf(2.0f * t[rn(n)], chance(50) ? 0.0f : INFINITY);
		else
			t[i] = special();
	}
}

static size_t size_random(void)
{
	static const size_t edge[] = { 0, 1, 2, 3, 4, 5, 7, 8, 1023, 1024, 1025, 1048575, 1048576,
				       1048577, (size_t)1 << 40, SIZE_MAX, SIZE_MAX - 1 };
	unsigned r = rn(100);

	if (r < 8)
		return edge[rn(sizeof(edge) / sizeof(edge[0]))];
	if (r < 16)
		return ((size_t)1 << rn(63)) + (chance(50) ? 0 : (size_t)rn(3) - 1);
	if (r < 24)
		return (size_t)(rnd() >> rn(64));
	/* mostly where decisions are made: 1 KiB .. 16 GiB */
	return ((size_t)1 << (10 + rn(24))) + (size_t)(rnd() >> (40 + rn(24)));
}

/* ---- counts ----------------------------------------------------------------- */

static uint64_t ncalls, ninits, niters, nforced, nchannels, ntranslated, diff_translated;
static uint64_t in_cap, in_env, in_ignored, in_family, in_newid;	/* calls in each class */
static uint64_t diff_cap, diff_env, diff_ignored, diff_family, diff_newid, diff_bad, diff_init;

static int cap_row(const float *t, unsigned n)
{
	for (unsigned i = 0; i < n && i < NBUF; i++)
		if (t[i] >= 3.6e9f && t[i] < FLT_MAX)
			return 1;
	return 0;
}

/* AUTO (the smallest entry >= 0, ties to the lowest; either cap) picks NVLS
 * or NVLS_TREE and the other one has an entry >= 0: the new build may force
 * the sibling, which the reference never did (the NVLS family). */
static int family_row(const float *t, unsigned n)
{
	int best = -1, algo;

	for (unsigned i = 0; i < n && i < NBUF; i++)
		if (t[i] >= 0.0f && t[i] < FLT_MAX && (best < 0 || t[i] < t[best]))
			best = (int)i;
	algo = best / 3;
	if (best < 0 || (algo != BOT_ALGO_NVLS && algo != BOT_ALGO_NVLS_TREE))
		return 0;
	algo = algo == BOT_ALGO_NVLS ? BOT_ALGO_NVLS_TREE : BOT_ALGO_NVLS;
	for (int p = 0; p < 3 && (unsigned)(algo * 3 + p) < n; p++)
		if (t[algo * 3 + p] >= 0.0f)
			return 1;
	return 0;
}

static int all_ignored(const float *t, unsigned n)
{
	for (unsigned i = 0; i < n && i < NBUF; i++)
		if (t[i] >= 0.0f)
			return 0;
	return 1;
}

static void report(const char *what, int abi, int version, const float *in, const float *a,
		   const float *b, int na, int nbch, int coll, size_t nbytes, int numAlgo,
		   int numProto)
{
	if (diff_bad > 10)
		return;
	fprintf(stderr, "UNCLASSIFIED %s: iter %" PRIu64 " abi %d version %d coll %d nbytes %zu "
		"numAlgo %d numProto %d table kind %d nch new %d ref %d\n", what, niters, abi,
		version, coll, nbytes, numAlgo, numProto, table_kind, na, nbch);
	for (int i = 0; i < NVARS; i++)
		if (env_val[i])
			fprintf(stderr, "  %s='%.60s'\n", vars[i], env_val[i]);
	for (int i = 0; i < 21; i++)
		fprintf(stderr, "  [%2d] in %-14g new %-14g ref %g\n", i, in ? in[i] : 0.0,
			a ? a[i] : 0.0, b ? b[i] : 0.0);
}

/* ---- an iteration ------------------------------------------------------------- */

static void *ctx_open(struct build *b, int abi, uint64_t comm, uint32_t nranks, uint32_t nnodes,
		      int *rc)
{
	void *ctx = NULL;

	b->lastlog[0] = 0;
	switch (abi) {
	case 3:
		*rc = b->v3->init(nranks, nnodes, b->logger, &ctx);
		break;
	case 4:
		*rc = b->v4->init(nranks, nnodes, b->logger, &ctx);
		break;
	case 5:
		*rc = b->v5->init(&ctx, comm, nranks, nnodes, b->logger, NULL, NULL);
		break;
	default:
		*rc = b->v6->init(&ctx, comm, nranks, nnodes, b->logger, NULL, NULL);
		break;
	}
	return ctx;
}

static int call(struct build *b, int abi, void *ctx, int coll, size_t nbytes, int pipe,
		float *t, int numAlgo, int numProto, int *nch)
{
	switch (abi) {
	case 3:
		return b->v3->getCollInfo(ctx, coll, nbytes, pipe, (float **)t, numAlgo, numProto, nch);
	case 4:
		return b->v4->getCollInfo(ctx, coll, nbytes, pipe, (float **)t, numAlgo, numProto,
					  (int)rn(2), nch);
	case 5:
		return b->v5->getCollInfo(ctx, coll, nbytes, pipe, (float **)t, numAlgo, numProto,
					  (int)rn(2), nch);
	default:
		return b->v6->getCollInfo(ctx, coll, nbytes, pipe, (float **)t, numAlgo, numProto,
					  (int)rn(2), nch);
	}
}

static void ctx_close(struct build *b, int abi, void *ctx)
{
	if (!ctx)
		return;
	if (abi == 3)
		b->v3->destroy(ctx);
	else if (abi == 4)
		b->v4->destroy(ctx);
	else if (abi == 5)
		b->v5->finalize(ctx);
	else
		b->v6->finalize(ctx);
}

static void iteration(uint64_t budget)
{
	static const uint32_t ranks[] = { 2, 8, 16, 16, 32, 64, 128, 1, 3, 4096 };
	int abi = 3 + (int)rn(4), version, nctx = 1 + (int)rn(MAXCTX), env_class;
	uint32_t nranks = ranks[rn(sizeof(ranks) / sizeof(ranks[0]))];
	uint32_t nnodes = nranks >= 2 ? 1 + rn(nranks > 16 ? 16 : nranks) : 1;
	void *cn[MAXCTX] = { 0 }, *cr[MAXCTX] = { 0 }, *ct[MAXCTX] = { 0 };
	int twin, twin_abi;
	static uint8_t tainted[MAXCTX][BOT_NCOLL][BOT_NBUCKETS];
	int new_flt;
	static const int versions[] = { 0, 22809, 22900, 22907, 23007, 22703, 2708 };

	memset(tainted, 0, sizeof(tainted));
	version = versions[rn(sizeof(versions) / sizeof(versions[0]))];
	*nb.nccl_version = version;
	*rb.nccl_version = version;
	new_flt = abi == 6 || (abi == 5 && version >= 22900);
	env_random();
	table_env(nranks, nnodes);
	env_class = env_changed();
	env_apply(&rb);
	/* When an intended change applies, a twin context in the new build is
	 * given the old meaning and compared strictly: the environment in the
	 * new grammar (env class), and AUTO's old cap through tuner v5 with
	 * NCCL 2.28 (v5 and v6 decide alike but for the cap). */
	twin = env_class || new_flt;
	twin_abi = new_flt ? 5 : abi;
	for (int i = 0; i < nctx; i++) {
		uint64_t comm = chance(10) ? (uint64_t)rn(4) : rnd();
		int rn_ = 0, rr = 0, rt = 0;

		if (twin) {
			env_translate();
			if (!env_class)
				memcpy(tr_val, env_val, sizeof(tr_val));
			env_apply_tr(&nb);
			*nb.nccl_version = new_flt ? 22809 : version;
			ct[i] = ctx_open(&nb, twin_abi, comm, nranks, nnodes, &rt);
			*nb.nccl_version = version;
		}
		env_apply(&nb);

		cn[i] = ctx_open(&nb, abi, comm, nranks, nnodes, &rn_);
		/* the new build's own word on its cap, when it logged it */
		if (rn_ == 0 && strstr(nb.lastlog, "AUTO's cap") &&
		    !strstr(nb.lastlog, new_flt ? "AUTO's cap FLT_MAX" : "AUTO's cap 3.6e9"))
			die("difftest: abi %d version %d: the new build says '%s'\n", abi, version,
			    nb.lastlog);
		cr[i] = ctx_open(&rb, abi, comm, nranks, nnodes, &rr);
		ninits++;
		if (twin && (rt != rr || !ct[i] != !cr[i])) {
			diff_init++;
			diff_bad++;
			fprintf(stderr, "UNCLASSIFIED init (twin): abi %d rc new %d ref %d\n", abi, rt,
				rr);
		}
		if (rn_ != rr || !cn[i] != !cr[i]) {
			diff_init++;
			diff_bad++;
			fprintf(stderr, "UNCLASSIFIED init: abi %d rc new %d ref %d\n", abi, rn_, rr);
		}
	}
	for (uint64_t k = 0; k < budget; k++) {
		float in[NBUF], ta[NBUF], tb[NBUF];
		int i = (int)rn((unsigned)nctx), coll, numAlgo, numProto, na, nbch, nbch_init, ra, rb_;
		int null_t = chance(1), null_n = chance(1), pipe = chance(5) ? 0 : 1 + (int)rn(3);
		size_t nbytes = size_random();
		unsigned n;
		int cap, fam, ign, same;

		coll = chance(92) ? (int)rn(BOT_NCOLL) : (int)rn(20) - 2;
		if (table_kind == 1 && tbl.nentries && chance(40)) {
			/* a context the table decides (when its shape is ours) */
			const struct bot_table_entry *e = &tbl.entries[rn(tbl.nentries)];
			uint64_t lo = bot_bucket_lo(e->bucket);
			uint64_t hi = e->bucket < 255 ? bot_bucket_lo(e->bucket + 1u) : lo + 1;

			coll = e->coll;
			nbytes = (size_t)(lo + (hi > lo ? rnd() % (hi - lo) : 0));
		}
		/* what NCCL passes: 3 protocols, 6 algorithms up to 2.22, 7 after */
		numAlgo = chance(85) ? 7 : 6;
		numProto = 3;
		n = (unsigned)(numAlgo * numProto);
		cost_random(in, n);
		memcpy(ta, in, sizeof(ta));
		memcpy(tb, in, sizeof(tb));
		na = nbch = nbch_init = chance(10) ? 5 : 0;
		ra = call(&nb, abi, cn[i], coll, nbytes, pipe, null_t ? NULL : ta, numAlgo, numProto,
			  null_n ? NULL : &na);
		rb_ = call(&rb, abi, cr[i], coll, nbytes, pipe, null_t ? NULL : tb, numAlgo, numProto,
			   null_n ? NULL : &nbch);
		ncalls++;
		cap = new_flt && !null_t && cap_row(in, n);
		fam = !null_t && family_row(in, n) ? 2 : 0;
		/* a sweep cell's counter moved on one build only: that cell
		 * (and only it: counters are per cell) may differ from then on */
		if ((unsigned)coll < BOT_NCOLL) {
			uint8_t *tc = &tainted[i][coll][bot_size_bucket(nbytes)];

			*tc |= (uint8_t)(cap | fam);
			cap |= *tc & 1;
			fam |= *tc & 2;
		}
		ign = !null_t && all_ignored(in, n);
		in_cap += cap;
		in_env += env_class;
		in_ignored += ign;
		in_family += !!fam;
		in_newid += table_newid;
		nforced += !null_t && memcmp(ta, in, sizeof(ta)) != 0;
		nchannels += !null_n && na != nbch_init;
		if (twin && ct[i] && !fam && !table_newid) {	/* the family is intended in twins too */
			float tt[NBUF];
			int nt = nbch_init, rt;

			memcpy(tt, in, sizeof(tt));
			rt = call(&nb, twin_abi, ct[i], coll, nbytes, pipe, null_t ? NULL : tt,
				  numAlgo, numProto, null_n ? NULL : &nt);
			ntranslated++;
			if (!(rt == rb_ && nt == nbch && !memcmp(tt, tb, sizeof(tt)))) {
				diff_translated++;
				diff_bad++;
				report("call (twin)", abi, version, in, tt, tb, nt, nbch, coll, nbytes,
				       numAlgo, numProto);
			}
		}
		same = ra == rb_ && na == nbch && !memcmp(ta, tb, sizeof(ta));
		if (same)
			continue;
		if (cap)
			diff_cap++;
		else if (env_class)
			diff_env++;
		else if (ign)
			diff_ignored++;
		else if (fam)
			diff_family++;
		else if (table_newid)
			diff_newid++;
		else {
			diff_bad++;
			report("call", abi, version, in, ta, tb, na, nbch, coll, nbytes, numAlgo,
			       numProto);
		}
	}
	for (int i = 0; i < nctx; i++) {
		ctx_close(&nb, abi, cn[i]);
		ctx_close(&nb, twin_abi, ct[i]);
		ctx_close(&rb, abi, cr[i]);
	}
	niters++;
}

int main(int argc, char **argv)
{
	uint64_t total, seed;

	if (argc < 4)
		die("usage: difftest NEW.so REF.so FAKE_NCCL.so [CALLS [SEED]]\n");
	total = argc > 4 ? strtoull(argv[4], NULL, 10) : 10000000;
	seed = argc > 5 ? strtoull(argv[5], NULL, 10) : 1;
	if (getenv("DIFFTEST_REF_TABLE_VERSION")) {
		ref_table_version = (unsigned)strtoul(getenv("DIFFTEST_REF_TABLE_VERSION"), NULL, 10);
		if (ref_table_version < 1 || ref_table_version > 9)
			die("difftest: DIFFTEST_REF_TABLE_VERSION must be 1..9\n");
	}
	rs = seed;
	load(&nb, argv[1], argv[3]);
	load(&rb, argv[2], argv[3]);
	if (nb.so == rb.so)
		die("difftest: both builds share one namespace\n");
	while (ncalls < total) {
		uint64_t left = total - ncalls, budget = 1 + rn(chance(20) ? 4000 : 300);

		iteration(budget < left ? budget : left);
		if (niters % 5000 == 0)
			fprintf(stderr, "difftest: %" PRIu64 " calls, %" PRIu64 " iterations, %" PRIu64
				" unclassified\n", ncalls, niters, diff_bad);
	}
	printf("difftest: seed %" PRIu64 ": %" PRIu64 " calls in %" PRIu64 " iterations (%" PRIu64
	       " context inits compared, %" PRIu64 " differing)\n", seed, ncalls, niters, ninits,
	       diff_init);
	printf("  the new build forced an arm in %" PRIu64 " calls, set nChannels in %" PRIu64
	       "\n", nforced, nchannels);
	printf("  class cap     (entries in [3.6e9, FLT_MAX) on NCCL >= 2.29, and the rest of "
	       "those cells): %" PRIu64 " calls, %" PRIu64 " differ\n", in_cap, diff_cap);
	printf("  class env     (an NCCL_BOT_* spelling the grammar changed): %" PRIu64
	       " calls, %" PRIu64 " differ\n", in_env, diff_env);
	printf("  class ignored (no entry >= 0): %" PRIu64 " calls, %" PRIu64 " differ\n",
	       in_ignored, diff_ignored);
	printf("  class newid   (a table naming policy ids 12-15, which the reference reads as "
	       "auto): %" PRIu64 " calls, %" PRIu64 " differ\n", in_newid, diff_newid);
	printf("  class family  (AUTO on NVLS or NVLS_TREE, the other supported, and the rest of "
	       "those cells): %" PRIu64 " calls, %" PRIu64 " differ\n", in_family, diff_family);
	printf("  twins (cap and env classes given the old meaning, compared strictly): %" PRIu64
	       " calls, %" PRIu64 " differ\n", ntranslated, diff_translated);
	printf("  unclassified differences: %" PRIu64 "\n", diff_bad);
	return diff_bad ? 1 : 0;
}
