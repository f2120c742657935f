/*
 * nccl_abi.h - the NCCL tuner and profiler plugin ABIs as the emulator sees
 * them.
 *
 * Declared here, independently of tuner/'s own declarations, from NCCL's
 * own plugin headers at the release tags named next to each fact (paths in
 * the NVIDIA/nccl repository): a test that did not grow up with the code it
 * tests. Only what the emulator drives is declared: tuner v2..v6 and
 * profiler v1..v6 (v1..v3 are only probed and initialised; their events are
 * not emulated). Each profiler version has its own descriptor, state
 * argument and function-table types, because their layouts differ (v4 is
 * not v5 with a narrower type field; see below). x86-64 / aarch64 LP64
 * layout; every size and offset the emulator or a plugin relies on is
 * checked with a static assertion at the end of this file.
 */
#ifndef EMU_NCCL_ABI_H
#define EMU_NCCL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ncclResult_t (nccl.h; the values are the same in every release emulated) */
enum {
	EMU_NCCL_SUCCESS = 0,
	EMU_NCCL_SYSTEM_ERROR = 2,
	EMU_NCCL_INTERNAL_ERROR = 3,
	EMU_NCCL_INVALID_ARGUMENT = 4,
	EMU_NCCL_INVALID_USAGE = 5,
};

/* ncclFunc_t: the tuner only ever sees 0..4 */
#define EMU_NUM_FUNCS 5
#define EMU_NUM_ALGOS 7		/* TREE RING COLLNET_DIRECT COLLNET_CHAIN NVLS NVLS_TREE PAT */
#define EMU_NUM_PROTOS 3	/* LL LL128 SIMPLE */
#define EMU_NUM_ARMS (EMU_NUM_ALGOS * EMU_NUM_PROTOS)
#define EMU_ALGO_TREE 0
#define EMU_ALGO_RING 1
#define EMU_ALGO_COLLNET_DIRECT 2
#define EMU_ALGO_COLLNET_CHAIN 3
#define EMU_ALGO_NVLS 4
#define EMU_ALGO_NVLS_TREE 5
#define EMU_ALGO_PAT 6
#define EMU_PROTO_LL 0
#define EMU_PROTO_LL128 1
#define EMU_PROTO_SIMPLE 2
#define EMU_ALGO_PROTO_IGNORE (-1.0f)
#define EMU_MAXCHANNELS 64

/* Logger levels and subsystem flags */
enum { EMU_LOG_NONE, EMU_LOG_VERSION, EMU_LOG_WARN, EMU_LOG_INFO, EMU_LOG_ABORT, EMU_LOG_TRACE };
#define EMU_LOG_INIT 0x1UL
#define EMU_LOG_TUNING 0x40UL
#define EMU_LOG_PROFILE 0x4000UL

typedef void (*emu_logger_t)(int level, unsigned long flags, const char *file, int line,
			     const char *fmt, ...);

/* ---- tuner ----
 * v2.27.7-1 src/include/plugin/tuner/tuner_v{2,3,4}.h,
 * v2.28.9-1 src/include/plugin/tuner/tuner_v5.h,
 * v2.30.7-1 src/include/plugin/tuner/tuner_v6.h. */

struct emu_nvl_domain_info {		/* ncclNvlDomainInfo_v5_t, 12 bytes */
	int nNvlDomains;
	int minRanksPerNvlDomain;
	int maxRanksPerNvlDomain;
};

struct emu_tuner_constants {		/* ncclTunerConstants_v5_t, 1152 bytes */
	double baseLatencies[EMU_NUM_ALGOS][EMU_NUM_PROTOS];
	double hwLatencies[3][EMU_NUM_ALGOS][EMU_NUM_PROTOS];
	double llMaxBws[4][3];
	double perChMaxRingLL128Bws[4][3];
	double perChMaxTreeLL128Bws[4][3];
	double perChMaxTreeBws[4][3];
	double perChMaxNVLSTreeBws[4][3];
};

struct emu_tuner_v2 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, emu_logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int collNetSupport,
			   int nvlsSupport, int numPipeOps, int *algorithm, int *protocol,
			   int *nChannels);
	int (*destroy)(void *ctx);
};

struct emu_tuner_v3 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, emu_logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int *nChannels);
	int (*destroy)(void *ctx);
};

struct emu_tuner_v4 {
	const char *name;
	int (*init)(size_t nRanks, size_t nNodes, emu_logger_t log, void **ctx);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*destroy)(void *ctx);
};

struct emu_tuner_v5 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, emu_logger_t log,
		    struct emu_nvl_domain_info *nvl, struct emu_tuner_constants *constants);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*finalize)(void *ctx);
};

struct emu_tuner_v6 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, size_t nRanks, size_t nNodes, emu_logger_t log,
		    struct emu_nvl_domain_info *nvl, struct emu_tuner_constants *constants);
	int (*getCollInfo)(void *ctx, int collType, size_t nBytes, int numPipeOps,
			   float **collCostTable, int numAlgo, int numProto, int regBuff,
			   int *nChannels);
	int (*finalize)(void *ctx);
	int (*getChunkSize)(void *ctx, int collType, size_t nBytes, int algo, int proto,
			    int nChannels, size_t *chunkSize);
};

/* ---- profiler ----
 *
 * Three descriptor layouts, and a plugin must read the one it registered
 * for:
 *
 *   v4  NCCL 2.27 calls it natively, with a zero-initialised 104-byte
 *       descriptor on its stack (v2.27.7-1 src/plugin/profiler.cc); 2.28+
 *       reach a v4-only plugin through an adapter that fills a local v4
 *       descriptor (v2.28.9-1 src/plugin/profiler/profiler_v4.cc). `type`
 *       is one byte. A Coll's parentObj is its Group's handle, and the
 *       descriptor ends right after coll.proto: there is no parentGroup.
 *   v5  NCCL 2.28 (v2.28.9-1 src/include/plugin/profiler/profiler_v5.h):
 *       112 bytes, `type` is a uint64_t, API events (GroupApi, CollApi,
 *       P2pApi, KernelLaunch) are new, a Coll's parentObj is its CollApi
 *       handle and the Group's handle moved to coll.parentGroup (@104).
 *   v6  NCCL 2.29.2+ (v2.30.7-1 src/include/plugin/profiler/profiler_v6.h):
 *       v5 plus the copy-engine events; the new union members fit in the
 *       same 112 bytes, so every v5 offset holds.
 *
 * The declarations follow the headers member for member (not just the
 * members the emulator fills) so that the compiler derives the sizes; the
 * assertions at the end pin them. doc/formats.md (NCCL_BOT_MEASURE_V4)
 * says which of these releases nccl-bot measures on.
 */

/* Event type bits (ncclProfile*). Bits 0-7 exist since v4 (v2.27.7-1
 * src/include/plugin/nccl_profiler.h), 8-11 since v5 (v2.28.9-1, same
 * path), 12-14 since v6 (v2.30.7-1, same path). The values never moved. */
#define EMU_PROF_GROUP (1u << 0)
#define EMU_PROF_COLL (1u << 1)
#define EMU_PROF_P2P (1u << 2)
#define EMU_PROF_PROXY_OP (1u << 3)
#define EMU_PROF_PROXY_STEP (1u << 4)
#define EMU_PROF_PROXY_CTRL (1u << 5)
#define EMU_PROF_KERNEL_CH (1u << 6)
#define EMU_PROF_NET_PLUGIN (1u << 7)
#define EMU_PROF_GROUP_API (1u << 8)		/* v5+ */
#define EMU_PROF_COLL_API (1u << 9)		/* v5+ */
#define EMU_PROF_P2P_API (1u << 10)		/* v5+ */
#define EMU_PROF_KERNEL_LAUNCH (1u << 11)	/* v5+ */
#define EMU_PROF_CE_COLL (1u << 12)		/* v6 */
#define EMU_PROF_CE_SYNC (1u << 13)		/* v6 */
#define EMU_PROF_CE_BATCH (1u << 14)		/* v6 */

/* Every event type a descriptor of each version can carry. */
#define EMU_PROF_V4_TYPES 0x00ffu
#define EMU_PROF_V5_TYPES 0x0fffu
#define EMU_PROF_V6_TYPES 0x7fffu

/* ncclProfilerEventState_t: an enum, passed by value (4 bytes). The one
 * the emulator sends is KernelChStop, with the channel's stop pTimer in the
 * state arguments; it is 22 in each version (v2.27.7-1, v2.28.9-1 and
 * v2.30.7-1 src/include/plugin/nccl_profiler.h). v5 adds GroupApi states
 * 23-24, v6 copy-engine states 25-30; none is emulated. */
#define EMU_PROF_V4_STATE_KERNEL_CH_STOP 22
#define EMU_PROF_V5_STATE_KERNEL_CH_STOP 22
#define EMU_PROF_V6_STATE_KERNEL_CH_STOP 22

/* v4 event descriptor, 104 bytes (v2.27.7-1
 * src/include/plugin/profiler/profiler_v4.h; unchanged in v2.28.9-1 and
 * v2.30.7-1). */
struct emu_prof_descr_v4 {
	uint8_t type;			/* one bit of EMU_PROF_V4_TYPES */
	void *parentObj;		/* Coll and P2p: the Group handle */
	int rank;			/* set for Coll, P2p, ProxyOp, ProxyStep */
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
			/* the descriptor ends here: no parentGroup in v4 */
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
		} p2p;
		struct {
			int pid;		/* pid_t */
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;
			int isSend;
		} proxyOp;
		struct {
			int step;
		} proxyStep;
		struct {
			uint8_t channelId;
			uint64_t pTimer;	/* GPU globaltimer at the channel's start */
		} kernelCh;
		struct {
			int64_t id;
			void *data;
		} netPlugin;
	};
};

/* v5 event descriptor, 112 bytes (v2.28.9-1
 * src/include/plugin/profiler/profiler_v5.h; unchanged in v2.30.7-1). */
struct emu_prof_descr_v5 {
	uint64_t type;			/* one bit of EMU_PROF_V5_TYPES */
	void *parentObj;		/* Coll: the CollApi handle; CollApi: GroupApi */
	int rank;			/* set for Coll, P2p, ProxyOp, ProxyStep */
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
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			bool graphCaptured;
		} p2pApi;
		struct {
			void *stream;
		} kernelLaunch;
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
			void *parentGroup;	/* the Group handle (v4's parentObj) */
		} coll;
		struct {
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct {
			int pid;		/* pid_t */
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;
			int isSend;
		} proxyOp;
		struct {
			int step;
		} proxyStep;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
		struct {
			int64_t id;
			void *data;
		} netPlugin;
	};
};

/* v6 event descriptor, 112 bytes (v2.30.7-1
 * src/include/plugin/profiler/profiler_v6.h; same in v2.29.7-1): the v5
 * members, then the copy-engine ones. */
struct emu_prof_descr_v6 {
	uint64_t type;			/* one bit of EMU_PROF_V6_TYPES */
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
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			bool graphCaptured;
		} p2pApi;
		struct {
			void *stream;
		} kernelLaunch;
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
			const char *func;
			void *buff;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nChannels;
			void *parentGroup;
		} p2p;
		struct {
			int pid;		/* ncclPid_t */
			uint8_t channelId;
			int peer;
			int nSteps;
			int chunkSize;
			int isSend;
		} proxyOp;
		struct {
			int step;
		} proxyStep;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
		struct {
			int64_t id;
			void *data;
		} netPlugin;
		struct {
			uint64_t seqNumber;
			const char *func;
			const void *sendBuff;
			void *recvBuff;
			size_t count;
			int root;
			const char *datatype;
			const char *syncStrategy;
			bool intraBatchSync;
			uint32_t batchSize;
			uint32_t numBatches;
			uint32_t ceSeqNum;
			void *stream;
		} ceColl;
		struct {
			bool isComplete;
			int nRanks;
		} ceCollSync;
		struct {
			int numOps;
			size_t totalBytes;
			bool useIntraSync;
		} ceCollBatch;
	};
};

/* State arguments, 8 bytes, the same four members in each version (v4:
 * v2.27.7-1 profiler_v4.h, v5: v2.28.9-1 profiler_v5.h; v2.30.7-1
 * profiler_v6.h declares v6's to be v5's). Separate types all the same, so
 * that a function table of one version cannot be called with another's. */
union emu_prof_state_v4 {
	struct { size_t transSize; } proxyStep;
	struct { int appendedProxyOps; } proxyCtrl;
	struct { void *data; } netPlugin;
	struct { uint64_t pTimer; } kernelCh;	/* KernelChStop: the stop pTimer */
};

union emu_prof_state_v5 {
	struct { size_t transSize; } proxyStep;
	struct { int appendedProxyOps; } proxyCtrl;
	struct { void *data; } netPlugin;
	struct { uint64_t pTimer; } kernelCh;
};

union emu_prof_state_v6 {
	struct { size_t transSize; } proxyStep;
	struct { int appendedProxyOps; } proxyCtrl;
	struct { void *data; } netPlugin;
	struct { uint64_t pTimer; } kernelCh;
};

/* v1..v3: only init/finalize are used by the emulator */
struct emu_profiler_v1 {
	const char *name;
	int (*init)(void **ctx, int *eActivationMask);
	void *startEvent;
	void *stopEvent;
	void *recordEventState;
	int (*finalize)(void *ctx);
};

/* Function tables, 48 bytes each. v4's init takes the mask first and the
 * commHash fourth; v5 and v6 take the commId second. */
struct emu_profiler_v4 {
	const char *name;
	int (*init)(void **ctx, int *mask, const char *commName, uint64_t commHash, int nNodes,
		    int nRanks, int rank, emu_logger_t log);
	int (*startEvent)(void *ctx, void **eHandle, struct emu_prof_descr_v4 *d);
	int (*stopEvent)(void *eHandle);
	int (*recordEventState)(void *eHandle, int state, union emu_prof_state_v4 *a);
	int (*finalize)(void *ctx);
};

struct emu_profiler_v5 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes,
		    int nRanks, int rank, emu_logger_t log);
	int (*startEvent)(void *ctx, void **eHandle, struct emu_prof_descr_v5 *d);
	int (*stopEvent)(void *eHandle);
	int (*recordEventState)(void *eHandle, int state, union emu_prof_state_v5 *a);
	int (*finalize)(void *ctx);
};

struct emu_profiler_v6 {
	const char *name;
	int (*init)(void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes,
		    int nRanks, int rank, emu_logger_t log);
	int (*startEvent)(void *ctx, void **eHandle, struct emu_prof_descr_v6 *d);
	int (*stopEvent)(void *eHandle);
	int (*recordEventState)(void *eHandle, int state, union emu_prof_state_v6 *a);
	int (*finalize)(void *ctx);
};

/* ---- layout checks ---- */

/* offsetof(T, m) == off, with the fact in the message */
#define EMU_ABI_AT(T, m, off) _Static_assert(offsetof(T, m) == (off), #T "." #m " is at " #off)

_Static_assert(sizeof(struct emu_tuner_constants) == 1152, "ncclTunerConstants_v5_t is 1152 B");
_Static_assert(offsetof(struct emu_tuner_constants, hwLatencies) == 168, "hwLatencies @168");
_Static_assert(offsetof(struct emu_tuner_constants, llMaxBws) == 672, "llMaxBws @672");
_Static_assert(offsetof(struct emu_tuner_constants, perChMaxNVLSTreeBws) == 1056, "@1056");
_Static_assert(sizeof(struct emu_nvl_domain_info) == 12, "ncclNvlDomainInfo_v5_t is 12 B");
_Static_assert(sizeof(struct emu_tuner_v5) == 32, "tuner v5 struct is 32 B");
_Static_assert(sizeof(struct emu_tuner_v6) == 40, "tuner v6 struct is 40 B");

/* Event types: a v4 type fits its one-byte field; API events would not
 * (which is why NCCL's 2.28+ v4 adapter drops them instead of truncating). */
_Static_assert(EMU_PROF_V4_TYPES <= UINT8_MAX, "every v4 type fits a uint8_t");
_Static_assert(EMU_PROF_GROUP_API > UINT8_MAX, "API events cannot be v4 events");
_Static_assert((EMU_PROF_V4_TYPES & EMU_PROF_V5_TYPES & EMU_PROF_V6_TYPES) == EMU_PROF_V4_TYPES,
	       "each version keeps the older bits");

/* v4: 104 bytes, one-byte type, coll is the last and largest member */
_Static_assert(sizeof(struct emu_prof_descr_v4) == 104, "v4 descriptor is 104 B");
_Static_assert(sizeof(((struct emu_prof_descr_v4 *)0)->type) == 1, "v4 type is a uint8_t");
EMU_ABI_AT(struct emu_prof_descr_v4, type, 0);
EMU_ABI_AT(struct emu_prof_descr_v4, parentObj, 8);
EMU_ABI_AT(struct emu_prof_descr_v4, rank, 16);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.seqNumber, 24);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.func, 32);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.sendBuff, 40);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.recvBuff, 48);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.count, 56);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.root, 64);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.datatype, 72);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.nChannels, 80);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.nWarps, 81);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.algo, 88);
EMU_ABI_AT(struct emu_prof_descr_v4, coll.proto, 96);
_Static_assert(offsetof(struct emu_prof_descr_v4, coll.proto) + sizeof(const char *) ==
	       sizeof(struct emu_prof_descr_v4), "v4: nothing after coll.proto");
EMU_ABI_AT(struct emu_prof_descr_v4, kernelCh.channelId, 24);
EMU_ABI_AT(struct emu_prof_descr_v4, kernelCh.pTimer, 32);

/* v5: 112 bytes, eight-byte type, coll.parentGroup last */
_Static_assert(sizeof(struct emu_prof_descr_v5) == 112, "v5 descriptor is 112 B");
_Static_assert(sizeof(((struct emu_prof_descr_v5 *)0)->type) == 8, "v5 type is a uint64_t");
EMU_ABI_AT(struct emu_prof_descr_v5, type, 0);
EMU_ABI_AT(struct emu_prof_descr_v5, parentObj, 8);
EMU_ABI_AT(struct emu_prof_descr_v5, rank, 16);
EMU_ABI_AT(struct emu_prof_descr_v5, groupApi.graphCaptured, 24);
EMU_ABI_AT(struct emu_prof_descr_v5, groupApi.groupDepth, 28);
EMU_ABI_AT(struct emu_prof_descr_v5, collApi.func, 24);
EMU_ABI_AT(struct emu_prof_descr_v5, collApi.count, 32);
EMU_ABI_AT(struct emu_prof_descr_v5, collApi.datatype, 40);
EMU_ABI_AT(struct emu_prof_descr_v5, collApi.root, 48);
EMU_ABI_AT(struct emu_prof_descr_v5, collApi.stream, 56);
EMU_ABI_AT(struct emu_prof_descr_v5, collApi.graphCaptured, 64);
EMU_ABI_AT(struct emu_prof_descr_v5, kernelLaunch.stream, 24);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.seqNumber, 24);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.func, 32);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.sendBuff, 40);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.recvBuff, 48);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.count, 56);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.root, 64);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.datatype, 72);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.nChannels, 80);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.nWarps, 81);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.algo, 88);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.proto, 96);
EMU_ABI_AT(struct emu_prof_descr_v5, coll.parentGroup, 104);
EMU_ABI_AT(struct emu_prof_descr_v5, kernelCh.channelId, 24);
EMU_ABI_AT(struct emu_prof_descr_v5, kernelCh.pTimer, 32);

/* v6: v5's offsets, the copy-engine members inside the same 112 bytes */
_Static_assert(sizeof(struct emu_prof_descr_v6) == 112, "v6 descriptor is 112 B");
_Static_assert(sizeof(((struct emu_prof_descr_v6 *)0)->type) == 8, "v6 type is a uint64_t");
EMU_ABI_AT(struct emu_prof_descr_v6, type, 0);
EMU_ABI_AT(struct emu_prof_descr_v6, parentObj, 8);
EMU_ABI_AT(struct emu_prof_descr_v6, rank, 16);
EMU_ABI_AT(struct emu_prof_descr_v6, groupApi.graphCaptured, 24);
EMU_ABI_AT(struct emu_prof_descr_v6, groupApi.groupDepth, 28);
EMU_ABI_AT(struct emu_prof_descr_v6, collApi.func, 24);
EMU_ABI_AT(struct emu_prof_descr_v6, collApi.count, 32);
EMU_ABI_AT(struct emu_prof_descr_v6, collApi.datatype, 40);
EMU_ABI_AT(struct emu_prof_descr_v6, collApi.root, 48);
EMU_ABI_AT(struct emu_prof_descr_v6, collApi.stream, 56);
EMU_ABI_AT(struct emu_prof_descr_v6, collApi.graphCaptured, 64);
EMU_ABI_AT(struct emu_prof_descr_v6, kernelLaunch.stream, 24);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.seqNumber, 24);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.func, 32);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.sendBuff, 40);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.recvBuff, 48);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.count, 56);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.root, 64);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.datatype, 72);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.nChannels, 80);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.nWarps, 81);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.algo, 88);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.proto, 96);
EMU_ABI_AT(struct emu_prof_descr_v6, coll.parentGroup, 104);
EMU_ABI_AT(struct emu_prof_descr_v6, kernelCh.channelId, 24);
EMU_ABI_AT(struct emu_prof_descr_v6, kernelCh.pTimer, 32);
EMU_ABI_AT(struct emu_prof_descr_v6, ceColl.stream, 104);

/* state arguments and function tables */
_Static_assert(sizeof(union emu_prof_state_v4) == 8, "v4 state args are 8 B");
_Static_assert(sizeof(union emu_prof_state_v5) == 8, "v5 state args are 8 B");
_Static_assert(sizeof(union emu_prof_state_v6) == 8, "v6 state args are 8 B");
EMU_ABI_AT(union emu_prof_state_v4, kernelCh.pTimer, 0);
EMU_ABI_AT(union emu_prof_state_v5, kernelCh.pTimer, 0);
EMU_ABI_AT(union emu_prof_state_v6, kernelCh.pTimer, 0);
_Static_assert(sizeof(struct emu_profiler_v4) == 48, "profiler v4 table is 48 B");
_Static_assert(sizeof(struct emu_profiler_v5) == 48, "profiler v5 table is 48 B");
_Static_assert(sizeof(struct emu_profiler_v6) == 48, "profiler v6 table is 48 B");

#endif
