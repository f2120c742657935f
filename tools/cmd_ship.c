/*
 * cmd_ship.c - `nccl-bot ship`: a node's outbox -> the state directory's
 * inbox (doc/formats.md section 14, "Ship"; learn/ship.h does the work).
 *
 *   nccl-bot ship [--outbox DIR] [--state DIR] [--timeout S] [--ship-command CMD]
 *                 [--metrics-dir DIR] [--config FILE]
 *
 * What the options leave out comes from the site configuration
 * (learn/siteconf.h): outbox_dir, state_dir (after NCCL_BOT_STATE),
 * ship_command, metrics_dir. Prints one summary line on stderr. Exit
 * status: 0 when every delta was shipped or waits for the next run (busy,
 * timeout); 1 when a delta was kept because of a problem (a conflict in
 * the inbox, a file that is not a regular one, a failed copy or command)
 * or the directories cannot be opened; 2 usage, or a bad site
 * configuration (named: file, line, column, problem).
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "learn/metrics.h"
#include "learn/ship.h"

static void ship_usage(FILE *f)
{
	fprintf(f,
		"usage: nccl-bot ship [--outbox DIR] [--state DIR] [--timeout S] [--ship-command CMD]\n"
		"                     [--metrics-dir DIR] [--config FILE]\n"
		"\n"
		"Move every delta (*.nbd) of a node's outbox into STATE/inbox: copied under a\n"
		"temporary name, fsynced, renamed, then removed from the outbox. A delta\n"
		"already in the inbox with the same bytes is removed; with other bytes it is\n"
		"kept and named. Idempotent and safe to run concurrently: run it from a timer.\n"
		"\n"
		"  --outbox DIR         the node's outbox (default: outbox_dir of the site\n"
		"                       configuration, when it sets one)\n"
		"  --state DIR          the state directory (its inbox is made 0750 if missing;\n"
		"                       default $NCCL_BOT_STATE, else state_dir of the site\n"
		"                       configuration)\n"
		"  --timeout S          seconds a run may take, 1..86400 (default 60); what is\n"
		"                       left waits for the next run\n"
		"  --ship-command CMD   hand each delta to CMD instead: `CMD... FILE`, split on\n"
		"                       blanks, run without a shell; exit 0 = shipped (removed)\n"
		"  --metrics-dir DIR    write DIR/nccl-bot-ship.prom (Prometheus textfile)\n"
		"  --config FILE        the site configuration (default $NCCL_BOT_CONFIG, else\n"
		"                       /etc/nccl-bot/site.yaml when it exists; NCCL_BOT_CONFIG=none:\n"
		"                       no file)\n");
}

static int write_metrics(const char *dir, const struct bot_ship_result *r)
{
	char text[2048], err[768];
	int n = snprintf(text, sizeof(text),
			 "# HELP nccl_bot_ship_last_run_deltas Deltas the last ship run handled, by "
			 "outcome (this run's counts, not cumulative).\n"
			 "# TYPE nccl_bot_ship_last_run_deltas gauge\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"shipped\"} %zu\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"duplicate\"} %zu\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"conflict\"} %zu\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"busy\"} %zu\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"refused\"} %zu\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"failed\"} %zu\n"
			 "nccl_bot_ship_last_run_deltas{outcome=\"left\"} %zu\n",
			 r->shipped, r->duplicate, r->conflict, r->busy, r->refused, r->failed,
			 r->left);

	if (bot_metrics_write(dir, "nccl-bot-ship.prom", text, (size_t)n, err, sizeof(err)) < 0) {
		fprintf(stderr, "nccl-bot: ship: metrics: %s\n", err);
		return -1;
	}
	return 0;
}

int bot_cmd_ship(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "outbox", required_argument, NULL, 'o' },
		{ "state", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "ship-command", required_argument, NULL, 'c' },
		{ "metrics-dir", required_argument, NULL, 'm' },
		{ "config", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct bot_ship_opts o = { NULL, NULL, 60, NULL };
	struct bot_log log = { bot_cmd_log, "ship" };
	struct bot_ship_result r;
	struct bot_siteconf sc;
	struct bot_cmd_override ov[1];
	const char *metrics = NULL, *config = NULL;
	size_t nov = 0;
	uint64_t v;
	int c, e, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o.outbox = optarg;
			break;
		case 's':
			o.state = optarg;
			break;
		case 't':
			if ((e = bot_set_range(optarg, 1, 86400, &v)) < 0)
				return bot_cmd_bad_value("ship", "--timeout", optarg, BOT_SET_NUMBER,
							 "from 1 to 86400", e, 0);
			o.timeout = (double)v;
			break;
		case 'c':
			/* the file's grammar: no control characters */
			ov[0] = (struct bot_cmd_override){ "ship_command", "--ship-command", optarg };
			nov = 1;
			break;
		case 'm':
			metrics = optarg;
			break;
		case 'C':
			config = optarg;
			break;
		case 'h':
			ship_usage(stdout);
			return 0;
		default:
			ship_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nccl-bot: ship: unexpected argument\n");
		ship_usage(stderr);
		return 2;
	}
	/* an empty path names nothing (it read ": No such file or directory") */
	if ((o.outbox && !*o.outbox) || (o.state && !*o.state) || (metrics && !*metrics)) {
		fprintf(stderr, "nccl-bot: ship: %s: empty (leave the option out for the "
			"default)\n", o.outbox && !*o.outbox ? "--outbox" :
			o.state && !*o.state ? "--state" : "--metrics-dir");
		return 2;
	}
	if ((rc = bot_cmd_siteconf("ship", config, ov, nov, &sc)) != 0)
		return rc;
	if (!o.outbox && (sc.set & (1u << BOT_SITECONF_OUTBOX_DIR)) && sc.outbox_dir[0])
		o.outbox = sc.outbox_dir;
	if (!o.state)
		o.state = getenv("NCCL_BOT_STATE");
	if ((!o.state || !*o.state) && (sc.set & (1u << BOT_SITECONF_STATE_DIR)))
		o.state = sc.state_dir;
	o.command = sc.ship_command;
	/* Blanks alone name no program (split on blanks, the delta's own path
	 * would be the command): ship refuses it; the other readers of the
	 * site configuration do not read the key (formats.md 15). */
	if (*o.command && !o.command[strspn(o.command, " ")]) {
		if (nov)
			fprintf(stderr, "nccl-bot: ship: --ship-command '%s': blanks alone name no "
				"program (\"\" copies into the inbox)\n", o.command);
		else
			fprintf(stderr, "nccl-bot: ship: site configuration: %s: ship_command: "
				"blanks alone name no program (\"\" copies into the inbox)\n",
				sc.source);
		bot_siteconf_free(&sc);
		return 2;
	}
	if (!metrics && sc.metrics_dir[0])
		metrics = sc.metrics_dir;
	if (!o.outbox || (!*o.command && (!o.state || !*o.state))) {
		fprintf(stderr, "nccl-bot: ship: --outbox and --state (or --ship-command) are "
			"required, or outbox_dir and state_dir (or ship_command) in the site "
			"configuration\n");
		ship_usage(stderr);
		bot_siteconf_free(&sc);
		return 2;
	}
	rc = bot_ship_run(&o, &r, &log);
	if (rc < 0) {
		bot_siteconf_free(&sc);
		return 1;
	}
	fprintf(stderr, "nccl-bot: ship: %s: %zu shipped, %zu already there, %zu busy, %zu "
		"conflicting, %zu refused, %zu failed, %zu left%s\n", o.outbox, r.shipped,
		r.duplicate, r.busy, r.conflict, r.refused, r.failed, r.left,
		r.timed_out ? " (timeout: the rest waits for the next run)" : "");
	rc = r.conflict || r.refused || r.failed ? 1 : 0;
	if (metrics && write_metrics(metrics, &r) < 0)
		rc = 1;
	bot_siteconf_free(&sc);
	return rc;
}
