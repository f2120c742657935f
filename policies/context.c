/*
 * context.c - names, size buckets, context formatting and the digest
 * (doc/formats.md sections 1-4).
 *
 * Names live in constant tables in NCCL's own order. Parsing is
 * case-insensitive and ignores '_' and '-', so the sweep spellings
 * ("collnet_direct"), NCCL's profiler spellings ("COLLNET_DIRECT", "LL128",
 * "AllReduce") and NCCL's log spellings ("CollNetDirect", "NVLSTree") all map
 * to the same id. The size bucket is four sub-buckets per octave computed
 * from the highest set bit with integer operations only.
 */
#include <stdio.h>
#include <string.h>

#include "context.h"

static const char *const coll_names[BOT_NCOLL] = {
	"broadcast", "reduce", "allgather", "reducescatter", "allreduce"
};

static const char *const algo_names[BOT_NALGO] = {
	"tree", "ring", "collnet_direct", "collnet_chain", "nvls", "nvls_tree", "pat"
};

static const char *const proto_names[BOT_NPROTO] = { "ll", "ll128", "simple" };

static const char *const arm_names[BOT_NARMS] = {
	"tree/ll", "tree/ll128", "tree/simple",
	"ring/ll", "ring/ll128", "ring/simple",
	"collnet_direct/ll", "collnet_direct/ll128", "collnet_direct/simple",
	"collnet_chain/ll", "collnet_chain/ll128", "collnet_chain/simple",
	"nvls/ll", "nvls/ll128", "nvls/simple",
	"nvls_tree/ll", "nvls_tree/ll128", "nvls_tree/simple",
	"pat/ll", "pat/ll128", "pat/simple",
};

const char *bot_coll_name(int coll)
{
	return coll >= 0 && coll < BOT_NCOLL ? coll_names[coll] : NULL;
}

const char *bot_algo_name(int algo)
{
	return algo >= 0 && algo < BOT_NALGO ? algo_names[algo] : NULL;
}

const char *bot_proto_name(int proto)
{
	return proto >= 0 && proto < BOT_NPROTO ? proto_names[proto] : NULL;
}

const char *bot_arm_name(int arm)
{
	return arm >= 0 && arm < BOT_NARMS ? arm_names[arm] : NULL;
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

static int is_sep(int c)
{
	return c == '_' || c == '-';
}

/* s[0..n) equals name, ignoring case and separators. */
static int name_eq(const char *s, size_t n, const char *name)
{
	size_t i = 0;

	for (;;) {
		while (i < n && is_sep((unsigned char)s[i]))
			i++;
		while (*name && is_sep((unsigned char)*name))
			name++;
		if (i == n || !*name)
			return i == n && !*name;
		if (lower((unsigned char)s[i]) != *name)
			return 0;
		i++;
		name++;
	}
}

static int lookup(const char *const *names, int count, const char *s, size_t n)
{
	if (!s || n == 0)
		return -1;
	for (int i = 0; i < count; i++)
		if (name_eq(s, n, names[i]))
			return i;
	return -1;
}

int bot_coll_parse_n(const char *s, size_t n)
{
	return lookup(coll_names, BOT_NCOLL, s, n);
}

int bot_algo_parse_n(const char *s, size_t n)
{
	return lookup(algo_names, BOT_NALGO, s, n);
}

int bot_proto_parse_n(const char *s, size_t n)
{
	return lookup(proto_names, BOT_NPROTO, s, n);
}

int bot_coll_parse(const char *s)
{
	return s ? bot_coll_parse_n(s, strlen(s)) : -1;
}

int bot_algo_parse(const char *s)
{
	return s ? bot_algo_parse_n(s, strlen(s)) : -1;
}

int bot_proto_parse(const char *s)
{
	return s ? bot_proto_parse_n(s, strlen(s)) : -1;
}

int bot_arm_parse(const char *s)
{
	const char *slash;
	int algo, proto;

	if (!s || !(slash = strchr(s, '/')))
		return -1;
	algo = bot_algo_parse_n(s, (size_t)(slash - s));
	proto = bot_proto_parse(slash + 1);
	return algo < 0 || proto < 0 ? -1 : bot_arm(algo, proto);
}

static unsigned highbit(uint64_t n)
{
	unsigned e = 0;

	while (n >>= 1)
		e++;
	return e;
}

unsigned bot_size_bucket(uint64_t nbytes)
{
	unsigned e;

	if (nbytes == 0)
		return 0;
	e = highbit(nbytes);
	if (e < 2)
		return 4 * e;
	return 4 * e + (unsigned)((nbytes >> (e - 2)) & 3);
}

uint64_t bot_bucket_lo(unsigned b)
{
	unsigned e = (b & 0xff) / 4, sub = b % 4;

	if (b == 0)
		return 0;
	if (e < 2)		/* buckets 1-3 and 5-7 hold no byte count */
		return (uint64_t)1 << e;
	return (uint64_t)(4 + sub) << (e - 2);
}

int bot_ctx_format(uint64_t key, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB" };
	unsigned b = bot_key_bucket(key), e = b / 4, u = e / 10;
	const char *coll = bot_coll_name((int)bot_key_coll(key));
	char cbuf[8];

	if (u > 3)
		u = 3;
	if (!coll) {
		snprintf(cbuf, sizeof(cbuf), "coll%u", bot_key_coll(key));
		coll = cbuf;
	}
	if (!buf)
		len = 0;
	return snprintf(buf, len, "%s/%llu%s+%u/n%u/r%u", coll,
			(unsigned long long)1 << (e - 10 * u), unit[u], b % 4,
			(unsigned)bot_key_nnodes(key), (unsigned)bot_key_nranks(key));
}

uint64_t bot_digest64(const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= c[i];
		h *= 0x100000001b3ULL;
	}
	return bot_mix64(h);
}

/* ---- policy names (formats.md section 10) ---- */

static const char *const policy_names[BOT_NPOLICY] = {
	"auto", "sweep", "greedy", "egreedy", "ucb1", "thompson", "etc",
	"greedy-cold", "ucb1-cold", "thompson-cold", "frozen", "shadow",
	"greedy-free", "egreedy-free", "ucb1-free", "thompson-free",
};

const char *bot_policy_name(int id)
{
	return id >= 0 && id < BOT_NPOLICY ? policy_names[id] : NULL;
}

static int ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		int x = (unsigned char)*a, y = (unsigned char)*b;

		if (x >= 'A' && x <= 'Z')
			x += 'a' - 'A';
		if (x == '_')
			x = '-';
		if (x != y)
			return 0;
	}
	return !*a && !*b;
}

int bot_policy_parse(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < BOT_NPOLICY; i++)
		if (ieq(name, policy_names[i]))
			return i;
	return -1;
}
