/*
 * cmd_siteconf.c - the site configuration as the tools read it
 * (learn/siteconf.h, doc/formats.md section 15): load the file, then let
 * the command line override it key by key through bot_siteconf_set, so an
 * option and the file's key share one grammar and one range.
 */
#include <stdio.h>

#include "cmd.h"

int bot_cmd_siteconf(const char *cmd, const char *path, const struct bot_cmd_override *ov,
		     size_t nov, struct bot_siteconf *sc)
{
	char err[BOT_SITECONF_ERR_MAX];

	if (bot_siteconf_load(path, sc, err, sizeof(err)) < 0) {
		bot_log_esc_inplace(err, sizeof(err));
		fprintf(stderr, "nccl-bot: %s: site configuration: %s\n", cmd, err);
		return 2;
	}
	for (size_t i = 0; i < nov; i++) {
		if (bot_siteconf_set(sc, ov[i].key, ov[i].value, err, sizeof(err)) < 0) {
			bot_log_esc_inplace(err, sizeof(err));
			fprintf(stderr, "nccl-bot: %s: %s '%s': %s\n", cmd, ov[i].opt,
				ov[i].value, err);
			bot_siteconf_free(sc);
			return 2;
		}
	}
	if (nov && bot_siteconf_check(sc, err, sizeof(err)) < 0) {
		bot_log_esc_inplace(err, sizeof(err));
		fprintf(stderr, "nccl-bot: %s: the options with the site configuration: %s\n", cmd,
			err);
		bot_siteconf_free(sc);
		return 2;
	}
	return 0;
}
