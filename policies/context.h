/*
 * context.h - names, arms, size buckets, context keys and hashing.
 *
 * Owns the vocabulary every other part shares (doc/formats.md sections 1-4):
 * collective / algorithm / protocol ids in NCCL's own order, the arm index
 * (algo * 3 + proto, also the flat index into NCCL's float[7][3] cost
 * table), the size-bucket function, the packed 64-bit context key and the
 * splitmix64 mixer used for every rank-shared pseudo-random choice.
 *
 * Everything here is integer-only and free of I/O, so the rank-side tuner
 * may link it.
 */
#ifndef BOT_CONTEXT_H
#define BOT_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

enum bot_coll {
	BOT_COLL_BROADCAST = 0,
	BOT_COLL_REDUCE = 1,
	BOT_COLL_ALLGATHER = 2,
	BOT_COLL_REDUCESCATTER = 3,
	BOT_COLL_ALLREDUCE = 4,
	BOT_NCOLL = 5
};

enum bot_algo {
	BOT_ALGO_TREE = 0,
	BOT_ALGO_RING = 1,
	BOT_ALGO_COLLNET_DIRECT = 2,
	BOT_ALGO_COLLNET_CHAIN = 3,
	BOT_ALGO_NVLS = 4,
	BOT_ALGO_NVLS_TREE = 5,
	BOT_ALGO_PAT = 6,
	BOT_NALGO = 7
};

enum bot_proto {
	BOT_PROTO_LL = 0,
	BOT_PROTO_LL128 = 1,
	BOT_PROTO_SIMPLE = 2,
	BOT_NPROTO = 3
};

#define BOT_NARMS 21		/* BOT_NALGO * BOT_NPROTO */
#define BOT_NBUCKETS 256	/* size buckets 0..255 */

static inline int bot_arm(int algo, int proto) { return algo * BOT_NPROTO + proto; }
static inline int bot_arm_algo(int arm) { return arm / BOT_NPROTO; }
static inline int bot_arm_proto(int arm) { return arm % BOT_NPROTO; }

/* Lower-case names; NULL for an out-of-range id. */
const char *bot_coll_name(int coll);
const char *bot_algo_name(int algo);
const char *bot_proto_name(int proto);
/* "ring/simple" style name of an arm, in a static table. */
const char *bot_arm_name(int arm);

/* Case-insensitive lookups of the names above (also accepts NCCL's profiler
 * spellings "AllReduce", "TREE", "LL128"). Return the id or -1. */
int bot_coll_parse(const char *s);
int bot_algo_parse(const char *s);
int bot_proto_parse(const char *s);
/* Same, for a string of known length (not NUL-terminated). */
int bot_coll_parse_n(const char *s, size_t n);
int bot_algo_parse_n(const char *s, size_t n);
int bot_proto_parse_n(const char *s, size_t n);
/* "ring/simple" (any accepted spelling of each half) -> arm index, or -1. */
int bot_arm_parse(const char *s);

/* Policy ids and names, doc/formats.md section 10. The ids are stored in
 * step tables and spool files; the planning itself is policies/policy.h. */
enum bot_policy_id {
	BOT_POLICY_AUTO = 0,
	BOT_POLICY_SWEEP = 1,
	BOT_POLICY_GREEDY = 2,
	BOT_POLICY_EGREEDY = 3,
	BOT_POLICY_UCB1 = 4,
	BOT_POLICY_THOMPSON = 5,
	BOT_POLICY_ETC = 6,
	BOT_POLICY_GREEDY_COLD = 7,
	BOT_POLICY_UCB1_COLD = 8,
	BOT_POLICY_THOMPSON_COLD = 9,
	BOT_POLICY_FROZEN = 10,
	BOT_POLICY_SHADOW = 11,
	/* the learning policies without the exploration budget (doc/policies.md) */
	BOT_POLICY_GREEDY_FREE = 12,
	BOT_POLICY_EGREEDY_FREE = 13,
	BOT_POLICY_UCB1_FREE = 14,
	BOT_POLICY_THOMPSON_FREE = 15,
	BOT_NPOLICY = 16
};

/* Does the rank probe on the prior under this policy (1 in 16 communicators
 * of a context the step table does not decide, tuner/decide.c)? The
 * learning policies other than greedy, frozen and shadow, and only without
 * a table or with a table of format 1 or 2 (doc/formats.md section 8). */
static inline int bot_policy_probes_on_prior(int id)
{
	return id == BOT_POLICY_EGREEDY || id == BOT_POLICY_UCB1 || id == BOT_POLICY_THOMPSON ||
	       id == BOT_POLICY_ETC || id == BOT_POLICY_UCB1_COLD ||
	       id == BOT_POLICY_THOMPSON_COLD || id == BOT_POLICY_EGREEDY_FREE ||
	       id == BOT_POLICY_UCB1_FREE || id == BOT_POLICY_THOMPSON_FREE;
}

/* The policy's name, NULL for an unknown id. */
const char *bot_policy_name(int id);
/* A policy name, case-insensitively, '_' for '-' ("Thompson_Cold"); the id
 * or -1. The one parser of policy names (common/settings.h builds on it). */
int bot_policy_parse(const char *name);

/* Size bucket, doc/formats.md section 2. */
unsigned bot_size_bucket(uint64_t nbytes);
/* Smallest byte count that falls in bucket b (0 for bucket 0). Buckets 1-3 and
 * 5-7 hold no byte count; they give 1 and 2. */
uint64_t bot_bucket_lo(unsigned b);

/* Context key, doc/formats.md section 3. */
static inline uint64_t bot_ctx_key(unsigned coll, unsigned bucket, uint32_t nranks, uint32_t nnodes)
{
	if (nnodes > 65535)
		nnodes = 65535;
	return ((uint64_t)(coll & 0xff) << 56) | ((uint64_t)(bucket & 0xff) << 48) |
	       ((uint64_t)nnodes << 32) | (uint64_t)nranks;
}
static inline unsigned bot_key_coll(uint64_t k) { return (unsigned)(k >> 56); }
static inline unsigned bot_key_bucket(uint64_t k) { return (unsigned)(k >> 48) & 0xff; }
static inline uint32_t bot_key_nnodes(uint64_t k) { return (uint32_t)(k >> 32) & 0xffff; }
static inline uint32_t bot_key_nranks(uint64_t k) { return (uint32_t)k; }
/* A communicator's calls of context k as a state counts them, once per rank
 * (doc/formats.md section 12): calls x nRanks, at most UINT64_MAX. */
static inline uint64_t bot_key_rank_calls(uint64_t k, uint64_t calls)
{
	uint64_t nr = bot_key_nranks(k) ? bot_key_nranks(k) : 1;

	return calls > UINT64_MAX / nr ? UINT64_MAX : calls * nr;
}

/* Writes "allreduce/1MiB+0/n16/r128" into buf (always NUL-terminated when
 * len > 0; buf may be NULL with len 0). The size is 2^(bucket/4) in binary
 * units plus "+sub" (bucket % 4), so bucket 0 reads "1B+0".
 * Returns the length snprintf would have produced. */
int bot_ctx_format(uint64_t key, char *buf, size_t len);

/* Hashing, doc/formats.md section 4. */
static inline uint64_t bot_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t bot_rng(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
	return bot_mix64(bot_mix64(bot_mix64(seed ^ stream) ^ a) ^ b);
}

/* Probe bucket 0..255 of a communicator for a context in an epoch. */
static inline unsigned bot_probe_bucket(uint64_t seed, uint64_t comm_id, uint64_t ctxkey, uint64_t epoch)
{
	return (unsigned)(bot_mix64(bot_mix64(bot_mix64(seed ^ comm_id) ^ ctxkey) ^ epoch) >> 56);
}

/* FNV-1a 64 of the bytes, then bot_mix64: the step-table digest. */
uint64_t bot_digest64(const void *p, size_t n);

#endif
