/*
 * nccl_abi.h - our own declaration of the NCCL plugin ABIs we implement.
 *
 * NCCL finds a plugin by dlsym() of a global struct per ABI version and
 * calls through its function pointers; nothing of NCCL is linked. We carry
 * the declarations ourselves (like NCCL's example plugins do), written from
 * the facts in doc/nccl-abi.md (tuner and profiler ABIs, profiler
 * descriptors): tuner v2..v6 and profiler v4..v6, x86-64 and aarch64 (LP64)
 * layouts, with the sizes and offsets we rely on checked at compile time.
 * Only layouts and signatures matter; names are ours.
 *
 * The cost table NCCL hands to getCollInfo is typed float** but is really a
 * contiguous float[numAlgo][numProto] on NCCL's stack: never dereference it
 * as row pointers.
 */
#ifndef BOT_NCCL_ABI_H
#define BOT_NCCL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ncclResult_t (nccl.h 2.28): only the values we return. */
typedef int bot_nccl_result_t;
#define BOT_NCCL_SUCCESS 0
#define BOT_NCCL_INTERNAL_ERROR 3

/* ncclDebugLogLevel and the subsystem flags we log under. */
enum {
	BOT_NCCL_LOG_NONE = 0,
	BOT_NCCL_LOG_VERSION = 1,
	BOT_NCCL_LOG_WARN = 2,
	BOT_NCCL_LOG_INFO = 3,
	BOT_NCCL_LOG_ABORT = 4,
	BOT_NCCL_LOG_TRACE = 5
};
#define BOT_NCCL_INIT 0x1UL
#define BOT_NCCL_TUNING 0x40UL
#define BOT_NCCL_PROFILE 0x4000UL

typedef void (*bot_nccl_logger_t)(int level, unsigned long flags, const char *file, int line,
				  const char *fmt, ...);

/* ncclNvlDomainInfo_v5_t (also v6). */
struct bot_nccl_nvl_domain_info {
	int nNvlDomains;
	int minRanksPerNvlDomain;
	int maxRanksPerNvlDomain;
};

/* ncclTunerConstants_v5_t (also v6): 1152 bytes of doubles owned by NCCL.
 * We never write it; declared so the layout is on record. */
struct bot_nccl_tuner_constants {
	double baseLatencies[7][3];
	double hwLatencies[3][7][3];
	double llMaxBws[4][3];
	double perChMaxRingLL128Bws[4][3];
	double perChMaxTreeLL128Bws[4][3];
	double perChMaxTreeBws[4][3];
	double perChMaxNVLSTreeBws[4][3];
};

/* Tuner v2 (NCCL 2.21+): no cost table; returns algo/proto itself. */
struct bot_nccl_tuner_v2 {
	const char *name;
	bot_nccl_result_t (*init)(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx);
	bot_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes, int collNetSupport,
					 int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
					 int *nChannels);
	bot_nccl_result_t (*destroy)(void *ctx);
};

/* Tuner v3 (NCCL 2.22+): the cost table appears. */
struct bot_nccl_tuner_v3 {
	const char *name;
	bot_nccl_result_t (*init)(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx);
	bot_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
					 float **collCostTable, int numAlgo, int numProto,
					 int *nChannels);
	bot_nccl_result_t (*destroy)(void *ctx);
};

/* Tuner v4 (NCCL 2.24+): v3 plus regBuff (which we never use: it is
 * rank-local). */
struct bot_nccl_tuner_v4 {
	const char *name;
	bot_nccl_result_t (*init)(size_t nRanks, size_t nNodes, bot_nccl_logger_t log, void **ctx);
	bot_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
					 float **collCostTable, int numAlgo, int numProto,
					 int regBuff, int *nChannels);
	bot_nccl_result_t (*destroy)(void *ctx);
};

typedef bot_nccl_result_t (*bot_nccl_tuner_init_v5_fn)(void **ctx, uint64_t commId, size_t nRanks,
						       size_t nNodes, bot_nccl_logger_t log,
						       struct bot_nccl_nvl_domain_info *nvl,
						       struct bot_nccl_tuner_constants *constants);

/* Tuner v5 (NCCL 2.28.3+): init gets the commId (comm->commHash). */
struct bot_nccl_tuner_v5 {
	const char *name;
	bot_nccl_tuner_init_v5_fn init;
	bot_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
					 float **collCostTable, int numAlgo, int numProto,
					 int regBuff, int *nChannels);
	bot_nccl_result_t (*finalize)(void *ctx);
};

/* Tuner v6 (NCCL 2.30.3+): v5 plus an optional getChunkSize (NULL = none). */
struct bot_nccl_tuner_v6 {
	const char *name;
	bot_nccl_tuner_init_v5_fn init;
	bot_nccl_result_t (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
					 float **collCostTable, int numAlgo, int numProto,
					 int regBuff, int *nChannels);
	bot_nccl_result_t (*finalize)(void *ctx);
	bot_nccl_result_t (*getChunkSize)(void *ctx, int collType, size_t nBytes, int algo, int proto,
					  int nChannels, size_t *chunkSize);
};

/* ncclGetVersion(int *version), exported by libnccl: NCCL_VERSION_CODE,
 * major * 10000 + minor * 100 + patch from 2.9 on (2.29.7 is 22907). */
typedef bot_nccl_result_t (*bot_nccl_get_version_fn)(int *version);
#define BOT_NCCL_VERSION(x, y, z) ((x) * 10000 + (y) * 100 + (z))

/* ---- profiler ------------------------------------------------------------ */

/* Event type bits (the same values in v4..v6; v4 carries them in a
 * uint8_t, so it has no API events) and the one state we use. */
#define BOT_NCCL_PROF_GROUP (1u << 0)
#define BOT_NCCL_PROF_COLL (1u << 1)
#define BOT_NCCL_PROF_KERNEL_CH (1u << 6)
#define BOT_NCCL_PROF_GROUP_API (1u << 8)	/* v5+ */
#define BOT_NCCL_PROF_COLL_API (1u << 9)	/* v5+ */
#define BOT_NCCL_PROF_STATE_KERNEL_CH_STOP 22

/*
 * The v4 event descriptor (NCCL 2.27 native; 2.28+ fill one in their v4
 * adapter): 104 bytes, a one-byte type, and no coll.parentGroup: a v4
 * Coll's Group handle is its parentObj. On 2.27 it is a 104-byte object on
 * NCCL's stack, so nothing past it may be read. Only the members we read
 * are declared; coll is the union's largest member (p2p, proxyOp,
 * proxyStep and netPlugin are smaller).
 */
struct bot_nccl_prof_descr_v4 {
	uint8_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			uint64_t seqNumber;
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
		} coll;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
	};
};

/*
 * The v5 event descriptor, also v6's (NCCL 2.28+): 112 bytes, a 64-bit
 * type, API events, and a Coll's parentObj is its CollApi handle while its
 * Group is coll.parentGroup. v6 adds copy-engine members to the union
 * (ceColl, 88 bytes like coll), which we never read; the size stays 112.
 */
struct bot_nccl_prof_descr_v5 {
	uint64_t type;
	void *parentObj;
	int rank;
	union {
		struct {
			bool graphCaptured;
			int groupDepth;
		} groupApi;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			bool graphCaptured;
		} collApi;
		struct {
			uint64_t seqNumber;
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nChannels;
			uint8_t nWarps;
			const char *algo;
			const char *proto;
			void *parentGroup;
		} coll;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
	};
};

/* State arguments (v4..v6): an 8-byte union; KernelChStop passes the stop
 * pTimer, the only member we read. */
union bot_nccl_prof_state_args {
	uint64_t pTimer;
	void *data;
};

_Static_assert(sizeof(struct bot_nccl_prof_descr_v4) == 104, "v4 descriptor: 104 bytes");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, parentObj) == 8, "v4 parentObj @8");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, rank) == 16, "v4 rank @16");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.seqNumber) == 24, "v4 seq @24");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.func) == 32, "v4 func @32");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.count) == 56, "v4 count @56");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.datatype) == 72, "v4 dtype @72");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.nChannels) == 80, "v4 nch @80");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.algo) == 88, "v4 algo @88");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, coll.proto) == 96, "v4 proto @96");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v4, kernelCh.pTimer) == 32, "v4 pTimer @32");

_Static_assert(sizeof(struct bot_nccl_prof_descr_v5) == 112, "v5/v6 descriptor: 112 bytes");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, parentObj) == 8, "v5 parentObj @8");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, rank) == 16, "v5 rank @16");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, groupApi.graphCaptured) == 24,
	       "v5 groupApi.graphCaptured @24");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, collApi.count) == 32, "v5 api count @32");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, collApi.datatype) == 40,
	       "v5 api dtype @40");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, collApi.graphCaptured) == 64,
	       "v5 collApi.graphCaptured @64");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.func) == 32, "v5 func @32");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.count) == 56, "v5 count @56");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.datatype) == 72, "v5 dtype @72");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.nChannels) == 80, "v5 nch @80");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.algo) == 88, "v5 algo @88");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.proto) == 96, "v5 proto @96");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, coll.parentGroup) == 104,
	       "v5 parentGroup @104");
_Static_assert(offsetof(struct bot_nccl_prof_descr_v5, kernelCh.pTimer) == 32, "v5 pTimer @32");
_Static_assert(sizeof(union bot_nccl_prof_state_args) == 8, "state args: 8 bytes");

struct bot_nccl_profiler_v4 {
	const char *name;
	bot_nccl_result_t (*init)(void **ctx, int *eActivationMask, const char *commName,
				  uint64_t commHash, int nNodes, int nRanks, int rank,
				  bot_nccl_logger_t log);
	bot_nccl_result_t (*startEvent)(void *ctx, void **eHandle,
					struct bot_nccl_prof_descr_v4 *d);
	bot_nccl_result_t (*stopEvent)(void *eHandle);
	bot_nccl_result_t (*recordEventState)(void *eHandle, int eState,
					      union bot_nccl_prof_state_args *a);
	bot_nccl_result_t (*finalize)(void *ctx);
};

/* v5 and v6 share this struct (commId first in init); v6 only adds event
 * types and descriptor members we do not use. */
struct bot_nccl_profiler_v5 {
	const char *name;
	bot_nccl_result_t (*init)(void **ctx, uint64_t commId, int *eActivationMask,
				  const char *commName, int nNodes, int nRanks, int rank,
				  bot_nccl_logger_t log);
	bot_nccl_result_t (*startEvent)(void *ctx, void **eHandle,
					struct bot_nccl_prof_descr_v5 *d);
	bot_nccl_result_t (*stopEvent)(void *eHandle);
	bot_nccl_result_t (*recordEventState)(void *eHandle, int eState,
					      union bot_nccl_prof_state_args *a);
	bot_nccl_result_t (*finalize)(void *ctx);
};

#endif
