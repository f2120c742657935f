/*
 * nccl_abi.h - the NCCL tuner and profiler plugin ABIs as the emulator sees
 * them.
 *
 * Declared here, independently of tuner/'s own declarations, from the facts
 * in shared/notes/nccl-plugin-abi.md (NCCL 2.28.9 and 2.30.7 headers): a test
 * that did not grow up with the code it tests. Only what the emulator drives
 * is declared: tuner v2..v6 and profiler v1..v6 (v1..v3 are only probed and
 * initialised; their events are not emulated). x86-64 / aarch64 LP64 layout;
 * the offsets the notes verified are checked with static assertions.
 */
#ifndef EMU_NCCL_ABI_H
#define EMU_NCCL_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ncclResult_t (nccl.h 2.28) */
enum {
	EMU_NCCL_SUCCESS = 0,
	EMU_NCCL_SYSTEM_ERROR = 2,
	EMU_NCCL_INTERNAL_ERROR = 3,
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

/* ---- tuner ---- */

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

/* ---- profiler ---- */

#define EMU_PROF_GROUP (1u << 0)
#define EMU_PROF_COLL (1u << 1)
#define EMU_PROF_P2P (1u << 2)
#define EMU_PROF_PROXY_OP (1u << 3)
#define EMU_PROF_PROXY_STEP (1u << 4)
#define EMU_PROF_PROXY_CTRL (1u << 5)
#define EMU_PROF_KERNEL_CH (1u << 6)
#define EMU_PROF_NET_PLUGIN (1u << 7)
#define EMU_PROF_GROUP_API (1u << 8)
#define EMU_PROF_COLL_API (1u << 9)
#define EMU_PROF_P2P_API (1u << 10)
#define EMU_PROF_KERNEL_LAUNCH (1u << 11)

#define EMU_PROF_STATE_KERNEL_CH_STOP 22

/* v5/v6 event descriptor (112 bytes); v4 has the same offsets with a
 * uint8_t type. Only the union members the emulator fills are declared. */
struct emu_prof_descr_v5 {
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
		uint8_t pad[88];
	};
};

struct emu_prof_descr_v4 {
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
			void *parentGroup;
		} coll;
		struct {
			uint8_t channelId;
			uint64_t pTimer;
		} kernelCh;
		uint8_t pad[88];
	};
};

union emu_prof_state_args {		/* 8 bytes */
	struct { uint64_t pTimer; } kernelCh;
	uint64_t raw;
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

struct emu_profiler_v4 {
	const char *name;
	int (*init)(void **ctx, int *mask, const char *commName, uint64_t commHash, int nNodes,
		    int nRanks, int rank, emu_logger_t log);
	int (*startEvent)(void *ctx, void **eHandle, struct emu_prof_descr_v4 *d);
	int (*stopEvent)(void *eHandle);
	int (*recordEventState)(void *eHandle, int state, union emu_prof_state_args *a);
	int (*finalize)(void *ctx);
};

struct emu_profiler_v5 {		/* also v6 */
	const char *name;
	int (*init)(void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes,
		    int nRanks, int rank, emu_logger_t log);
	int (*startEvent)(void *ctx, void **eHandle, struct emu_prof_descr_v5 *d);
	int (*stopEvent)(void *eHandle);
	int (*recordEventState)(void *eHandle, int state, union emu_prof_state_args *a);
	int (*finalize)(void *ctx);
};

_Static_assert(sizeof(struct emu_tuner_constants) == 1152, "ncclTunerConstants_v5_t is 1152 B");
_Static_assert(offsetof(struct emu_tuner_constants, hwLatencies) == 168, "hwLatencies @168");
_Static_assert(offsetof(struct emu_tuner_constants, llMaxBws) == 672, "llMaxBws @672");
_Static_assert(offsetof(struct emu_tuner_constants, perChMaxNVLSTreeBws) == 1056, "@1056");
_Static_assert(sizeof(struct emu_nvl_domain_info) == 12, "ncclNvlDomainInfo_v5_t is 12 B");
_Static_assert(sizeof(struct emu_tuner_v5) == 32, "tuner v5 struct is 32 B");
_Static_assert(sizeof(struct emu_profiler_v5) == 48, "profiler v5 struct is 48 B");
_Static_assert(sizeof(struct emu_prof_descr_v5) == 112, "descriptor is 112 B");
_Static_assert(offsetof(struct emu_prof_descr_v5, rank) == 16, "rank @16");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.seqNumber) == 24, "coll @24");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.func) == 32, "func @32");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.count) == 56, "count @56");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.root) == 64, "root @64");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.datatype) == 72, "datatype @72");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.nChannels) == 80, "nChannels @80");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.nWarps) == 81, "nWarps @81");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.algo) == 88, "algo @88");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.proto) == 96, "proto @96");
_Static_assert(offsetof(struct emu_prof_descr_v5, coll.parentGroup) == 104, "parentGroup @104");
_Static_assert(offsetof(struct emu_prof_descr_v5, kernelCh.channelId) == 24, "channelId @24");
_Static_assert(offsetof(struct emu_prof_descr_v5, kernelCh.pTimer) == 32, "pTimer @32");
_Static_assert(offsetof(struct emu_prof_descr_v4, coll.algo) == 88, "v4 algo @88");
_Static_assert(sizeof(union emu_prof_state_args) == 8, "state args are 8 B");

#endif
