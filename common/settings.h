/*
 * settings.h - the one grammar of every setting (doc/formats.md section 11).
 *
 * A setting reaches nccl-bot as an environment variable read by the ranks
 * (NCCL_BOT_POLICY, ...), as a command-line option of `nccl-bot` (--policy,
 * ...), and later as a plugstack.conf argument of the SPANK plugin. All of
 * them parse here, so a spelling means the same thing everywhere or is
 * refused everywhere (tests/unit/test_settings.c holds both sides to it).
 *
 * Owns: the number grammar (decimal digits; 0x-hex only where a setting
 * says so; never blanks, signs, leading zeros or octal), byte counts with
 * binary suffixes, size thresholds (a byte count rounded up to a power of
 * two), policy names (via policies/context.h), allow-lists of arms, 0/1
 * switches, and the table of the variables ranks read with their defaults.
 *
 * libc only, no allocation, no strtoull(): glibc 2.38+ headers redirect
 * strtoull to a GLIBC_2.38 symbol that the rank-side library, which must
 * load on glibc 2.28, cannot depend on. The rank-side library links this
 * file.
 */
#ifndef BOT_SETTINGS_H
#define BOT_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

/* Errors: negative return values. */
enum bot_set_err {
	BOT_SET_OK = 0,
	BOT_SET_EEMPTY = -1,	/* the value is empty */
	BOT_SET_ESYNTAX = -2,	/* not in the grammar (a blank, a sign, no digits, ...) */
	BOT_SET_EZERO = -3,	/* a leading zero: octal is not accepted, write 8 not 010 */
	BOT_SET_ERANGE = -4,	/* too large, or outside the setting's range */
	BOT_SET_ENAME = -5,	/* not a known name */
	BOT_SET_ELIST = -6,	/* an empty list item, or all/none next to other items */
};

/* What a setting's value is. */
enum bot_set_kind {
	BOT_SET_NUMBER,		/* decimal u64 */
	BOT_SET_HEX64,		/* decimal or 0x-hex u64 */
	BOT_SET_BYTES,		/* byte count, optional KiB/MiB/GiB/TiB */
	BOT_SET_THRESHOLD,	/* byte count, rounded up to a power of two */
	BOT_SET_POLICY,		/* policy name */
	BOT_SET_ALLOW,		/* allow-list of arms */
	BOT_SET_BOOL,		/* 0 or 1 */
};

/* A short reason for an error code ("a leading zero (octal is not accepted)"). */
const char *bot_set_strerror(int err);
/* What a kind of value looks like, for messages ("0 or 1"). */
const char *bot_set_want(enum bot_set_kind kind);

/* Numbers. Decimal digits only, or with hex set also "0x"/"0X" and 1..16
 * hex digits; "0" itself is fine, "00" and "010" are not. */
int bot_set_u64(const char *s, int hex, uint64_t *out);
/* A decimal number within [lo, hi] (ERANGE outside). */
int bot_set_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* A byte count: a decimal number, optionally followed by KiB, MiB, GiB or
 * TiB (binary units, exact case), at most 2^63. */
int bot_set_bytes(const char *s, uint64_t *out);
/* A size threshold: a byte count rounded up to a power of two, as log2
 * (0..63). *rounded (may be NULL) is set when the value was not a power of
 * two already (0 and 1 are 2^0). */
int bot_set_threshold(const char *s, unsigned *log2, int *rounded);
/* The smallest k with 2^k >= n (0 for n <= 1), n <= 2^63. */
unsigned bot_set_log2_ceil(uint64_t n);
/* A policy name (doc/formats.md section 10) -> its id. */
int bot_set_policy(const char *s, int *id);
/* An allow-list: "all", "none", or comma-separated items, each an algorithm
 * (every protocol of it: "nvls") or an arm ("nvls/simple"), names as in
 * doc/formats.md section 1 in any case, '-' and '_' alike. -> bit per arm
 * (bits 0..20). On an error *bad (may be NULL) is the offset of the
 * offending item in s. */
int bot_set_allow(const char *s, uint32_t *allow, size_t *bad);
/* The inverse: "none", "all", or the algorithms every protocol of which is
 * allowed and the single arms, comma-separated, as bot_set_allow reads them
 * (truncated to len, always NUL-terminated when len > 0). */
void bot_set_allow_format(uint32_t allow, char *buf, size_t len);
/* "0" or "1". */
int bot_set_bool(const char *s, int *out);

/* ---- the environment ranks read --------------------------------------------- */

#define BOT_ENV_TABLE "NCCL_BOT_TABLE"
#define BOT_ENV_SPOOL "NCCL_BOT_SPOOL"

/* The parsed NCCL_BOT_* variables, in this order (bot_env_name()). */
enum bot_env_id {
	BOT_ENV_POLICY,		/* NCCL_BOT_POLICY, policy, default auto (no table only) */
	BOT_ENV_SEED,		/* NCCL_BOT_SEED, hex64, default 0 (no table only) */
	BOT_ENV_MIN_BYTES,	/* NCCL_BOT_MIN_BYTES, threshold, default 1048576 (no table only) */
	BOT_ENV_ALLOW,		/* NCCL_BOT_ALLOW, allow-list, default none (no table only) */
	BOT_ENV_WINDOW,		/* NCCL_BOT_WINDOW, number 16..64, default 32 */
	BOT_ENV_DEBUG,		/* NCCL_BOT_DEBUG, 0/1, default 0 */
	BOT_ENV_MEASURE_V4,	/* NCCL_BOT_MEASURE_V4, 0/1, default 0 */
	BOT_ENV_COUNT
};

#define BOT_SET_WINDOW_MIN 16
#define BOT_SET_WINDOW_MAX 64
#define BOT_SET_WINDOW_DEFAULT 32
#define BOT_SET_MIN_BYTES_LOG2_DEFAULT 20

struct bot_env {
	int policy;		/* formats.md section 10 */
	uint64_t seed;
	unsigned min_bytes_log2;
	uint32_t allow;
	unsigned window;
	int debug, measure_v4;
	unsigned set;		/* bit per enum bot_env_id: present and non-empty */
	unsigned bad;		/* bit per enum bot_env_id: present but refused (default used) */
	int err[BOT_ENV_COUNT];	/* the refusal's error code */
};

/*
 * A directory setting's path (NCCL_BOT_SPOOL, plugstack.conf's directories,
 * an outbox): its trailing "/" and "/." dropped in place ("/" stays), since
 * "link/" resolves a link at its last name, which an O_NOFOLLOW open must
 * see. Returns p.
 */
char *bot_path_dir_trim(char *p);

/* Does path p hold a ".." component? Refused in a directory setting:
 * "link/.." goes through the link to its target's parent. */
int bot_path_has_dotdot(const char *p);

/* The variable's name. */
const char *bot_env_name(enum bot_env_id id);

/* getenv() as the readers of the environment here take it (a lookup
 * returning const; tests pass their own). */
const char *bot_getenv(const char *name);

/* Read every variable through get (getenv, or a test's lookup; it may
 * return NULL). An unset or empty variable takes its default; a refused one
 * takes its default too and is marked in e->bad, so that the caller says so.
 * Same environment, same result: ranks given the same environment decide
 * the same. */
void bot_env_read(struct bot_env *e, const char *(*get)(const char *name));

/* A value from the environment as a message shows it (NCCL's log, a
 * terminal): printable ASCII, anything else '?'; one over len - 4
 * characters is cut there and ends in "..." (said; with len 4 or less,
 * cut to len - 1 without it: too short to say). out may be value. */
void bot_env_show(const char *value, char *out, size_t len);

/* "NCCL_BOT_SEED='+7' is not decimal digits or 0x and 1-16 hex digits (a
 * character ...); using the default (0)" into buf (always terminated). */
void bot_env_explain(const struct bot_env *e, enum bot_env_id id, const char *value, char *buf,
		     size_t len);

#endif
