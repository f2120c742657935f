/*
 * settings.c - the grammar of settings (common/settings.h, doc/formats.md
 * section 11).
 *
 * Everything is written out by hand over the characters, without strtoull()
 * (see settings.h) and without locale: a value is accepted or refused by
 * these few loops the same way on every rank and in every tool.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/settings.h"
#include "policies/context.h"

const char *bot_set_strerror(int err)
{
	switch (err) {
	case BOT_SET_OK:
		return "ok";
	case BOT_SET_EEMPTY:
		return "empty";
	case BOT_SET_ESYNTAX:
		return "not in the grammar: a blank, a sign, another character, or no digits";
	case BOT_SET_EZERO:
		return "a leading zero (octal is not accepted)";
	case BOT_SET_ERANGE:
		return "out of range";
	case BOT_SET_ENAME:
		return "an unknown name";
	case BOT_SET_ELIST:
		return "an empty item, or all/none next to other items";
	}
	return "invalid";
}

const char *bot_set_want(enum bot_set_kind kind)
{
	switch (kind) {
	case BOT_SET_NUMBER:
		return "decimal digits";
	case BOT_SET_HEX64:
		return "a u64: decimal digits, or 0x and hex digits (at most 16 significant)";
	case BOT_SET_BYTES:
	case BOT_SET_THRESHOLD:
		return "a byte count <= 2^63: decimal digits, optionally followed by KiB, MiB, "
		       "GiB or TiB";
	case BOT_SET_POLICY:
		return "a policy name (auto, sweep, greedy, egreedy, ucb1, thompson, etc, "
		       "greedy-cold, ucb1-cold, thompson-cold, frozen, shadow, greedy-free, "
		       "egreedy-free, ucb1-free, thompson-free)";
	case BOT_SET_ALLOW:
		return "all, none, or a comma-separated list of algorithms (nvls) and arms "
		       "(nvls/simple)";
	case BOT_SET_BOOL:
		return "0 or 1";
	}
	return "a valid value";
}

/* Decimal digits s[0..n) -> *out. */
static int dec_n(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0)
		return BOT_SET_EEMPTY;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return BOT_SET_ESYNTAX;
	if (s[0] == '0' && n > 1)
		return BOT_SET_EZERO;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT64_MAX - d) / 10)
			return BOT_SET_ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return BOT_SET_OK;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int bot_set_u64(const char *s, int hex, uint64_t *out)
{
	uint64_t v = 0;
	size_t n;

	if (!s || !*s)
		return BOT_SET_EEMPTY;
	if (!hex || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return dec_n(s, strlen(s), out);
	s += 2;
	n = strlen(s);
	if (n == 0)
		return BOT_SET_ESYNTAX;
	for (size_t i = 0; i < n; i++)
		if (hex_digit(s[i]) < 0)
			return BOT_SET_ESYNTAX;
	/* leading zeros are harmless in hex ("0x0001"), but 16 digits is
	 * the most a u64 has: more than that is out of range */
	while (n > 1 && s[0] == '0') {
		s++;
		n--;
	}
	if (n > 16)
		return BOT_SET_ERANGE;
	for (size_t i = 0; i < n; i++)
		v = v << 4 | (uint64_t)hex_digit(s[i]);
	*out = v;
	return BOT_SET_OK;
}

int bot_set_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v;
	int rc = bot_set_u64(s, 0, &v);

	if (rc)
		return rc;
	if (v < lo || v > hi)
		return BOT_SET_ERANGE;
	*out = v;
	return BOT_SET_OK;
}

int bot_set_bytes(const char *s, uint64_t *out)
{
	static const struct {
		const char *suffix;
		unsigned shift;
	} units[] = { { "KiB", 10 }, { "MiB", 20 }, { "GiB", 30 }, { "TiB", 40 } };
	size_t n, digits = 0;
	unsigned shift = 0;
	uint64_t v;
	int rc;

	if (!s || !*s)
		return BOT_SET_EEMPTY;
	n = strlen(s);
	while (digits < n && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	if (digits == 0)
		return BOT_SET_ESYNTAX;
	if (digits < n) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(s + digits, units[i].suffix))
				break;
		if (i == sizeof(units) / sizeof(units[0]))
			return BOT_SET_ESYNTAX;
		shift = units[i].shift;
	}
	rc = dec_n(s, digits, &v);
	if (rc)
		return rc;
	if (v > (1ULL << 63) >> shift)
		return BOT_SET_ERANGE;
	*out = v << shift;
	return BOT_SET_OK;
}

unsigned bot_set_log2_ceil(uint64_t n)
{
	unsigned k = 0;

	while (k < 63 && (1ULL << k) < n)
		k++;
	return k;
}

int bot_set_threshold(const char *s, unsigned *log2, int *rounded)
{
	uint64_t v;
	int rc = bot_set_bytes(s, &v);
	unsigned k;

	if (rc)
		return rc;
	k = bot_set_log2_ceil(v);
	*log2 = k;
	if (rounded)
		*rounded = v > 1 && (1ULL << k) != v;
	return BOT_SET_OK;
}

int bot_set_policy(const char *s, int *id)
{
	int v;

	if (!s || !*s)
		return BOT_SET_EEMPTY;
	v = bot_policy_parse(s);
	if (v < 0)
		return BOT_SET_ENAME;
	*id = v;
	return BOT_SET_OK;
}

/* s[0..n) spells name: any case, '-' and '_' alike, nothing left out or
 * added ("NVLS_Tree" and "nvls-tree" are nvls_tree; "nvlstree" and "nvls_"
 * are not, unlike the loose parsers policies/context.h offers for NCCL's
 * own strings). */
static int name_is(const char *s, size_t n, const char *name)
{
	if (!name || strlen(name) != n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int a = (unsigned char)s[i], b = (unsigned char)name[i];

		if (a >= 'A' && a <= 'Z')
			a += 'a' - 'A';
		if (a == '-')
			a = '_';
		if (b == '-')
			b = '_';
		if (a != b)
			return 0;
	}
	return 1;
}

static int algo_of(const char *s, size_t n)
{
	for (int a = 0; a < BOT_NALGO; a++)
		if (name_is(s, n, bot_algo_name(a)))
			return a;
	return -1;
}

static int proto_of(const char *s, size_t n)
{
	for (int p = 0; p < BOT_NPROTO; p++)
		if (name_is(s, n, bot_proto_name(p)))
			return p;
	return -1;
}

/* One allow-list item s[0..n): an algorithm or algo/proto. */
static int allow_item(const char *s, size_t n, uint32_t *bits)
{
	const char *slash = memchr(s, '/', n);
	int algo, proto;

	if (!slash) {
		algo = algo_of(s, n);
		if (algo < 0)
			return BOT_SET_ENAME;
		for (int p = 0; p < BOT_NPROTO; p++)
			*bits |= 1u << bot_arm(algo, p);
		return BOT_SET_OK;
	}
	algo = algo_of(s, (size_t)(slash - s));
	proto = proto_of(slash + 1, n - (size_t)(slash - s) - 1);
	if (algo < 0 || proto < 0)
		return BOT_SET_ENAME;
	*bits |= 1u << bot_arm(algo, proto);
	return BOT_SET_OK;
}

int bot_set_allow(const char *s, uint32_t *allow, size_t *bad)
{
	uint32_t bits = 0;
	size_t at = 0, n;
	int rc;

	if (bad)
		*bad = 0;
	if (!s || !*s)
		return BOT_SET_EEMPTY;
	if (name_is(s, strlen(s), "all")) {
		*allow = (1u << BOT_NARMS) - 1;
		return BOT_SET_OK;
	}
	if (name_is(s, strlen(s), "none")) {
		*allow = 0;
		return BOT_SET_OK;
	}
	for (;;) {
		const char *item = s + at, *comma = strchr(item, ',');

		n = comma ? (size_t)(comma - item) : strlen(item);
		if (bad)
			*bad = at;
		if (n == 0 || name_is(item, n, "all") || name_is(item, n, "none"))
			return BOT_SET_ELIST;
		for (size_t i = 0; i < n; i++)
			if (item[i] == ' ' || item[i] == '\t' || item[i] == '\n' ||
			    item[i] == '\r')
				return BOT_SET_ESYNTAX;
		rc = allow_item(item, n, &bits);
		if (rc)
			return rc;
		if (!comma)
			break;
		at += n + 1;
	}
	if (bad)
		*bad = 0;
	*allow = bits;
	return BOT_SET_OK;
}

void bot_set_allow_format(uint32_t allow, char *buf, size_t len)
{
	size_t o = 0;

	if (!len)
		return;
	if (!allow) {
		snprintf(buf, len, "none");
		return;
	}
	if (allow == (1u << BOT_NARMS) - 1) {
		snprintf(buf, len, "all");
		return;
	}
	buf[0] = 0;
	for (int a = 0; a < BOT_NALGO && o < len; a++) {
		uint32_t every = ((1u << BOT_NPROTO) - 1) << bot_arm(a, 0);

		if ((allow & every) == every) {
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "", bot_algo_name(a));
			continue;
		}
		for (int p = 0; p < BOT_NPROTO && o < len; p++)
			if (allow & (1u << bot_arm(a, p)))
				o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "," : "",
						      bot_arm_name(bot_arm(a, p)));
	}
}

int bot_set_bool(const char *s, int *out)
{
	if (!s || !*s)
		return BOT_SET_EEMPTY;
	if ((s[0] == '0' || s[0] == '1') && !s[1]) {
		*out = s[0] == '1';
		return BOT_SET_OK;
	}
	/* a number other than 0 and 1 is out of range (or has a leading
	 * zero), not bad syntax */
	for (const char *p = s; ; p++)
		if (!*p)
			return s[0] == '0' ? BOT_SET_EZERO : BOT_SET_ERANGE;
		else if (*p < '0' || *p > '9')
			return BOT_SET_ESYNTAX;
}

/* ---- the environment ranks read --------------------------------------------- */

static const struct {
	const char *name;
	enum bot_set_kind kind;
	const char *dflt;
} env_vars[BOT_ENV_COUNT] = {
	[BOT_ENV_POLICY] = { "NCCL_BOT_POLICY", BOT_SET_POLICY, "auto" },
	[BOT_ENV_SEED] = { "NCCL_BOT_SEED", BOT_SET_HEX64, "0" },
	[BOT_ENV_MIN_BYTES] = { "NCCL_BOT_MIN_BYTES", BOT_SET_THRESHOLD, "1048576" },
	[BOT_ENV_ALLOW] = { "NCCL_BOT_ALLOW", BOT_SET_ALLOW, "none" },
	[BOT_ENV_WINDOW] = { "NCCL_BOT_WINDOW", BOT_SET_NUMBER, "32" },
	[BOT_ENV_DEBUG] = { "NCCL_BOT_DEBUG", BOT_SET_BOOL, "0" },
	[BOT_ENV_MEASURE_V4] = { "NCCL_BOT_MEASURE_V4", BOT_SET_BOOL, "0" },
};

const char *bot_env_name(enum bot_env_id id)
{
	return (unsigned)id < BOT_ENV_COUNT ? env_vars[id].name : "?";
}

void bot_env_read(struct bot_env *e, const char *(*get)(const char *name))
{
	memset(e, 0, sizeof(*e));
	e->policy = 0;
	e->min_bytes_log2 = BOT_SET_MIN_BYTES_LOG2_DEFAULT;
	e->window = BOT_SET_WINDOW_DEFAULT;
	for (unsigned id = 0; id < BOT_ENV_COUNT; id++) {
		const char *v = get(env_vars[id].name);
		uint64_t u = 0;
		unsigned k = 0;
		uint32_t a = 0;
		int rc = BOT_SET_OK, i = 0;

		if (!v || !*v)
			continue;
		e->set |= 1u << id;
		switch ((enum bot_env_id)id) {
		case BOT_ENV_POLICY:
			if (!(rc = bot_set_policy(v, &i)))
				e->policy = i;
			break;
		case BOT_ENV_SEED:
			if (!(rc = bot_set_u64(v, 1, &u)))
				e->seed = u;
			break;
		case BOT_ENV_MIN_BYTES:
			if (!(rc = bot_set_threshold(v, &k, NULL)))
				e->min_bytes_log2 = k;
			break;
		case BOT_ENV_ALLOW:
			if (!(rc = bot_set_allow(v, &a, NULL)))
				e->allow = a;
			break;
		case BOT_ENV_WINDOW:
			if (!(rc = bot_set_range(v, BOT_SET_WINDOW_MIN, BOT_SET_WINDOW_MAX, &u)))
				e->window = (unsigned)u;
			break;
		case BOT_ENV_DEBUG:
			if (!(rc = bot_set_bool(v, &i)))
				e->debug = i;
			break;
		case BOT_ENV_MEASURE_V4:
			if (!(rc = bot_set_bool(v, &i)))
				e->measure_v4 = i;
			break;
		case BOT_ENV_COUNT:
			break;
		}
		if (rc) {
			e->bad |= 1u << id;
			e->err[id] = rc;
		}
	}
}

const char *bot_getenv(const char *name)
{
	return getenv(name);
}

void bot_env_show(const char *value, char *out, size_t len)
{
	size_t i = 0, max = len > 4 ? len - 4 : len ? len - 1 : 0;

	if (!len)
		return;
	for (; value && value[i] && i < max; i++)
		out[i] = value[i] >= 0x20 && value[i] < 0x7f ? value[i] : '?';
	if (value && value[i] && len > 4)
		memcpy(out + i, "...", 4);	/* cut: said */
	else
		out[i] = 0;
}

void bot_env_explain(const struct bot_env *e, enum bot_env_id id, const char *value, char *buf,
		     size_t len)
{
	const char *range = id == BOT_ENV_WINDOW ? " from 16 to 64" : "";
	char shown[96];

	if (!len)
		return;
	if ((unsigned)id >= BOT_ENV_COUNT) {
		buf[0] = 0;
		return;
	}
	/* the value goes into NCCL's log: printable ASCII only, bounded */
	bot_env_show(value, shown, sizeof(shown));
	snprintf(buf, len, "%s='%s' is not %s%s (%s); using the default (%s)", env_vars[id].name,
		 shown, bot_set_want(env_vars[id].kind), range, bot_set_strerror(e->err[id]),
		 env_vars[id].dflt);
}

char *bot_path_dir_trim(char *p)
{
	size_t n = strlen(p);

	while (n > 1 && (p[n - 1] == '/' || (p[n - 1] == '.' && p[n - 2] == '/'))) {
		n -= p[n - 1] == '/' ? 1 : 2;
		if (n == 0)
			n = 1;	/* "/." */
		p[n] = 0;
	}
	return p;
}

int bot_path_has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == 0 || c[2] == '/'))
			return 1;
	return 0;
}
