/*
 * args.c - the plugstack.conf arguments (spank/args.h).
 *
 * One table of arguments, one parser per kind of value. Numbers, byte
 * counts and policies go through common/settings.h, so `min_bytes=1MiB`
 * means here what NCCL_BOT_MIN_BYTES=1MiB means at the ranks. Lists are
 * checked word by word (names of partitions and accounts: no blanks, no
 * control characters). Paths must be absolute after "%n" is expanded.
 */
#include <stdio.h>
#include <string.h>

#include "common/settings.h"
#include "common/state.h"
#include "learn/log.h"
#include "policies/context.h"
#include "spank/args.h"

enum kind { K_ENABLE, K_MODE, K_POLICY, K_POLICIES, K_LIST, K_BYTES, K_PATH, K_BOOL, K_FABRIC,
	    K_MS };

static const struct {
	const char *name;
	enum kind kind;
} args[BOT_SPANK_A_COUNT] = {
	[BOT_SPANK_A_ENABLE] = { "enable", K_ENABLE },
	[BOT_SPANK_A_MODE] = { "mode", K_MODE },
	[BOT_SPANK_A_POLICY] = { "policy", K_POLICY },
	[BOT_SPANK_A_POLICIES] = { "policies", K_POLICIES },
	[BOT_SPANK_A_PARTITIONS] = { "partitions", K_LIST },
	[BOT_SPANK_A_ACCOUNTS] = { "accounts", K_LIST },
	[BOT_SPANK_A_EXCLUDE_ACCOUNTS] = { "exclude_accounts", K_LIST },
	[BOT_SPANK_A_MIN_BYTES] = { "min_bytes", K_BYTES },
	[BOT_SPANK_A_STATE_DIR] = { "state_dir", K_PATH },
	[BOT_SPANK_A_OUTBOX_DIR] = { "outbox_dir", K_PATH },
	[BOT_SPANK_A_SPOOL_DIR] = { "spool_dir", K_PATH },
	[BOT_SPANK_A_LIB_PREFIX] = { "lib_prefix", K_PATH },
	[BOT_SPANK_A_FABRIC_MAP] = { "fabric_map", K_PATH },
	[BOT_SPANK_A_REPORT_DIR] = { "report_dir", K_PATH },
	[BOT_SPANK_A_KILL_SWITCH] = { "kill_switch", K_PATH },
	[BOT_SPANK_A_REQUIRE_GPUS] = { "require_gpus", K_BOOL },
	[BOT_SPANK_A_CONFIG] = { "config", K_PATH },
	[BOT_SPANK_A_FABRIC] = { "fabric", K_FABRIC },
	[BOT_SPANK_A_TIMEOUT_MS] = { "timeout_ms", K_MS },
	[BOT_SPANK_A_HARVEST_HELPER] = { "harvest_helper", K_PATH },
};

const char *bot_spank_arg_name(enum bot_spank_arg a)
{
	return (unsigned)a < BOT_SPANK_A_COUNT ? args[a].name : "?";
}

void bot_spank_args_defaults(struct bot_spank_args *a, const char *default_lib_prefix)
{
	memset(a, 0, sizeof(*a));
	a->enable = BOT_SPANK_ENABLE_OPT_IN;
	a->mode = BOT_SPANK_MODE_SHADOW;
	a->policy = BOT_POLICY_GREEDY;
	a->min_bytes_log2 = BOT_SET_MIN_BYTES_LOG2_DEFAULT;
	a->timeout_ms = 2000;
	strcpy(a->spool_dir, "/dev/shm/nccl-bot");	/* spank/spooldir.h's default */
	if (default_lib_prefix && strlen(default_lib_prefix) < sizeof(a->lib_prefix))
		strcpy(a->lib_prefix, default_lib_prefix);
}

/* bot_spank_path_expand; keep: the '%' letters left as they are (with
 * "%%") for a later expansion (report_dir=: %u and %j, learn/report.h). */
static int path_expand_keep(const char *in, const char *node, const char *keep, char *out,
			    size_t outlen, char *err, size_t errlen)
{
	size_t n = 0;

	for (const char *p = in; *p; p++) {
		const char *add = p;
		size_t len = 1;

		if (*p == '%') {
			if (keep && p[1] && (p[1] == '%' || strchr(keep, p[1]))) {
				len = 2;
				p++;
			} else if (p[1] == '%') {
				p++;
			} else if (p[1] == 'n') {
				if (!node || !*node)
					return bot_log_errf(err, errlen, "%%n: the node name is not "
							    "known here");
				if (strchr(node, '/'))
					return bot_log_errf(err, errlen, "%%n: the node name '%s' "
							    "holds '/'", node);
				add = node;
				len = strlen(node);
				p++;
			} else {
				/* report_dir= keeps %u and %j: say them too */
				return bot_log_errf(err, errlen, "'%%%c' is not %s",
						    p[1] ? p[1] : ' ', keep ?
						    "%n, %u, %j or %%" : "%n or %%");
			}
		}
		if (n + len >= outlen)
			return bot_log_errf(err, errlen, "longer than %zu bytes", outlen - 1);
		memcpy(out + n, add, len);
		n += len;
	}
	if (!outlen)
		return -1;
	out[n] = 0;
	return 0;
}

int bot_spank_path_expand(const char *in, const char *node, char *out, size_t outlen, char *err,
			  size_t errlen)
{
	return path_expand_keep(in, node, NULL, out, outlen, err, errlen);
}

int bot_spank_list_has(const char *list, const char *item)
{
	size_t n = strlen(item);

	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !memcmp(p, item, n))
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

int bot_spank_policy_allowed(const struct bot_spank_args *a, int policy)
{
	return policy >= 0 && policy < BOT_NPOLICY &&
	       (policy == a->policy || (a->policies >> policy) & 1);
}

void bot_spank_policies_str(const struct bot_spank_args *a, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = 0;
	for (int p = 0; p < BOT_NPOLICY && len; p++) {
		if (!bot_spank_policy_allowed(a, p))
			continue;
		int w = snprintf(buf + n, len - n, "%s%s", n ? "," : "", bot_policy_name(p));
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

/* A list of names: items of [A-Za-z0-9._-] and similar printable bytes,
 * no blanks, no empty item. */
static int parse_list(const char *v, char *out, size_t outlen, char *err, size_t errlen)
{
	const char *item = v;

	if (strlen(v) >= outlen)
		return bot_log_errf(err, errlen, "longer than %zu bytes", outlen - 1);
	for (const char *p = v;; p++) {
		if (*p == ',' || !*p) {
			if (p == item)
				return bot_log_errf(err, errlen, "an empty item");
			if (!*p)
				break;
			item = p + 1;
			continue;
		}
		if ((unsigned char)*p <= ' ' || (unsigned char)*p >= 0x7f || *p == '=')
			return bot_log_errf(err, errlen, "'%c' in a name (names are printable "
					    "ASCII without blanks, commas separate them)",
					    (unsigned char)*p >= 0x20 && *p != 0x7f ? *p : '?');
	}
	strcpy(out, v);
	return 0;
}

static int parse_policies(const char *v, uint32_t *bits, char *err, size_t errlen)
{
	char item[64];
	const char *p = v;

	*bits = 0;
	for (;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int id, rc;

		if (!len)
			return bot_log_errf(err, errlen, "an empty item");
		if (len >= sizeof(item))
			return bot_log_errf(err, errlen, "'%.20s...' is not a policy", p);
		memcpy(item, p, len);
		item[len] = 0;
		if ((rc = bot_set_policy(item, &id)))
			return bot_log_errf(err, errlen, "'%s': %s", item, bot_set_strerror(rc));
		*bits |= 1u << id;
		if (!e)
			return 0;
		p = e + 1;
	}
}

static int parse_one(struct bot_spank_args *a, enum bot_spank_arg id, const char *v,
		     const char *node, char *err, size_t errlen)
{
	char *path = NULL;
	uint64_t u;
	int rc, b;

	if (!*v)
		return bot_log_errf(err, errlen, "an empty value");
	switch (args[id].kind) {
	case K_ENABLE:
		if (!strcmp(v, "off"))
			a->enable = BOT_SPANK_ENABLE_OFF;
		else if (!strcmp(v, "opt-in"))
			a->enable = BOT_SPANK_ENABLE_OPT_IN;
		else if (!strcmp(v, "default"))
			a->enable = BOT_SPANK_ENABLE_DEFAULT;
		else
			return bot_log_errf(err, errlen, "want off, opt-in or default");
		return 0;
	case K_MODE:
		if (!strcmp(v, "shadow"))
			a->mode = BOT_SPANK_MODE_SHADOW;
		else if (!strcmp(v, "on"))
			a->mode = BOT_SPANK_MODE_ON;
		else
			return bot_log_errf(err, errlen, "want shadow or on");
		return 0;
	case K_POLICY:
		if ((rc = bot_set_policy(v, &a->policy)))
			return bot_log_errf(err, errlen, "%s", bot_set_strerror(rc));
		return 0;
	case K_POLICIES:
		return parse_policies(v, &a->policies, err, errlen);
	case K_LIST:
		if (id == BOT_SPANK_A_PARTITIONS)
			return parse_list(v, a->partitions, sizeof(a->partitions), err, errlen);
		if (id == BOT_SPANK_A_ACCOUNTS)
			return parse_list(v, a->accounts, sizeof(a->accounts), err, errlen);
		return parse_list(v, a->exclude_accounts, sizeof(a->exclude_accounts), err, errlen);
	case K_BYTES:
		if ((rc = bot_set_threshold(v, &a->min_bytes_log2, NULL)))
			return bot_log_errf(err, errlen, "%s (want %s)", bot_set_strerror(rc),
					    bot_set_want(BOT_SET_THRESHOLD));
		return 0;
	case K_BOOL:
		if ((rc = bot_set_bool(v, &b)))
			return bot_log_errf(err, errlen, "want 0 or 1");
		a->require_gpus = b;
		return 0;
	case K_MS:
		if ((rc = bot_set_range(v, 1, 60000, &u)))
			return bot_log_errf(err, errlen, "%s (want milliseconds, 1 to 60000)",
					    bot_set_strerror(rc));
		a->timeout_ms = u;
		return 0;
	case K_FABRIC:
		if (!bot_state_fabric_ok(v))
			return bot_log_errf(err, errlen, "a fabric name is "
					    "[a-z0-9][a-z0-9._-]{0,63}");
		if (bot_state_fabric_reserved(v))
			return bot_log_errf(err, errlen, "'%s' is not a fabric name "
					    BOT_STATE_RESERVED_WHY, v);
		strcpy(a->fabric, v);
		return 0;
	case K_PATH:
		switch (id) {
		case BOT_SPANK_A_STATE_DIR: path = a->state_dir; break;
		case BOT_SPANK_A_OUTBOX_DIR: path = a->outbox_dir; break;
		case BOT_SPANK_A_SPOOL_DIR: path = a->spool_dir; break;
		case BOT_SPANK_A_HARVEST_HELPER: path = a->harvest_helper; break;
		case BOT_SPANK_A_LIB_PREFIX: path = a->lib_prefix; break;
		case BOT_SPANK_A_FABRIC_MAP: path = a->fabric_map; break;
		case BOT_SPANK_A_REPORT_DIR: path = a->report_dir; break;
		case BOT_SPANK_A_KILL_SWITCH: path = a->kill_switch; break;
		default: path = a->config; break;
		}
		{
			char tmp[PATH_MAX];

			if (path_expand_keep(v, node, id == BOT_SPANK_A_REPORT_DIR ? "uj" : NULL,
					     tmp, sizeof(tmp), err, errlen) < 0)
				return -1;
			if (tmp[0] != '/')
				return bot_log_errf(err, errlen, "not an absolute path");
			if (id != BOT_SPANK_A_KILL_SWITCH && id != BOT_SPANK_A_CONFIG &&
			    id != BOT_SPANK_A_FABRIC_MAP && id != BOT_SPANK_A_HARVEST_HELPER) {
				/* a directory: "d/" is d, "link/.." is refused
				 * (common/settings.h) */
				if (bot_path_has_dotdot(tmp))
					return bot_log_errf(err, errlen, "a '..' component (it "
							    "could lead through a link): give the "
							    "directory itself");
				bot_path_dir_trim(tmp);
			}
			strcpy(path, tmp);	/* both PATH_MAX */
		}
		return 0;
	}
	return bot_log_errf(err, errlen, "unknown kind");
}

int bot_spank_args_parse(struct bot_spank_args *a, int ac, char *const *av, const char *node,
			 char *err, size_t errlen)
{
	char why[BOT_SPANK_ERR_MAX];

	for (int i = 0; i < ac; i++) {
		const char *w = av[i] ? av[i] : "";
		const char *eq = strchr(w, '=');
		size_t klen;
		int id = -1;

		if (!eq)
			return bot_log_errf(err, errlen, "plugstack.conf argument '%s': want "
					    "KEY=VALUE", w);
		klen = (size_t)(eq - w);
		for (int k = 0; k < BOT_SPANK_A_COUNT; k++)
			if (strlen(args[k].name) == klen && !memcmp(args[k].name, w, klen))
				id = k;
		if (id < 0)
			return bot_log_errf(err, errlen, "plugstack.conf argument '%.*s': unknown "
					    "(see spank_nccl_bot(8))", (int)(klen > 64 ? 64 : klen),
					    w);
		if (a->set & (1u << id))
			return bot_log_errf(err, errlen, "plugstack.conf argument %s= given twice",
					    args[id].name);
		if (parse_one(a, (enum bot_spank_arg)id, eq + 1, node, why, sizeof(why)) < 0)
			return bot_log_errf(err, errlen, "plugstack.conf argument %s=%s: %s",
					    args[id].name, eq + 1, why);
		a->set |= 1u << id;
	}
	return 0;
}
