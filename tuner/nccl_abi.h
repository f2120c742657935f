/*
 * nccl_abi.h - our own declaration of the NCCL plugin ABIs we implement.
 *
 * NCCL finds a plugin by dlsym() of a global struct per ABI version and
 * calls through its function pointers; nothing of NCCL is linked. We carry
 * the declarations ourselves (like NCCL's example plugins do), written from
 * the facts in shared/notes/nccl-plugin-abi.md sections 1 and 2: tuner v2..v6
 * and profiler v4..v6. Only layouts and signatures matter; names are ours.
 *
 * The cost table NCCL hands to getCollInfo is typed float** but is really a
 * contiguous float[numAlgo][numProto] on NCCL's stack: never dereference it
 * as row pointers (see bot_tuner_cost()).
 */
#ifndef BOT_NCCL_ABI_H
#define BOT_NCCL_ABI_H

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

/* Profiler v4..v6: descriptors and state arguments are opaque to this slice
 * (we do not read them yet); the eState enum is passed as an int. */
struct bot_nccl_prof_descr;
struct bot_nccl_prof_state_args;

struct bot_nccl_profiler_v4 {
	const char *name;
	bot_nccl_result_t (*init)(void **ctx, int *eActivationMask, const char *commName,
				  uint64_t commHash, int nNodes, int nRanks, int rank,
				  bot_nccl_logger_t log);
	bot_nccl_result_t (*startEvent)(void *ctx, void **eHandle, struct bot_nccl_prof_descr *d);
	bot_nccl_result_t (*stopEvent)(void *eHandle);
	bot_nccl_result_t (*recordEventState)(void *eHandle, int eState,
					      struct bot_nccl_prof_state_args *a);
	bot_nccl_result_t (*finalize)(void *ctx);
};

/* v5 and v6 share this init (commId first); v6 only adds event types. */
struct bot_nccl_profiler_v5 {
	const char *name;
	bot_nccl_result_t (*init)(void **ctx, uint64_t commId, int *eActivationMask,
				  const char *commName, int nNodes, int nRanks, int rank,
				  bot_nccl_logger_t log);
	bot_nccl_result_t (*startEvent)(void *ctx, void **eHandle, struct bot_nccl_prof_descr *d);
	bot_nccl_result_t (*stopEvent)(void *eHandle);
	bot_nccl_result_t (*recordEventState)(void *eHandle, int eState,
					      struct bot_nccl_prof_state_args *a);
	bot_nccl_result_t (*finalize)(void *ctx);
};

#endif
