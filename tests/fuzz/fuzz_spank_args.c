/*
 * fuzz_spank_args.c - fuzz target for the plugstack.conf arguments
 * (spank/args.c) and the --nccl-bot value (spank/decide.c). The input is
 * split at blanks into words, as Slurm splits a plugstack.conf line; the
 * parser must return 0 or -1 with a terminated message, and what it
 * accepts must hold: absolute paths, known enable/mode values, a policy
 * id in range. The same bytes are also parsed as a fabric map
 * (spank/fabricmap.h): a map it accepts names each node once, sorted;
 * and as a submission (spank/submit.h): a command line, a batch script's
 * #SBATCH block and a slurm.conf, whose fields must come out terminated.
 * Built with tests/fuzz/driver.c or libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/context.h"
#include "spank/args.h"
#include "spank/decide.h"
#include "spank/fabricmap.h"
#include "spank/submit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char s[8192];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bot_spank_args a;
	char err[BOT_SPANK_ERR_MAX], *av[64], *save = NULL;
	int ac = 0, kind, pol;

	struct bot_fabricmap m;

	if (bot_fabricmap_parse("fuzz", data, size, &m, err, sizeof(err)) == 0) {
		for (size_t i = 1; i < m.n; i++)
			if (strcmp(m.e[i - 1].node, m.e[i].node) >= 0)
				abort();
		for (size_t i = 0; i < m.n; i++)
			if (bot_fabricmap_lookup(&m, m.e[i].node) != m.e[i].fabric)
				abort();
		bot_fabricmap_free(&m);
	} else if (!memchr(err, 0, sizeof(err)) || m.e) {
		abort();
	}
	{
		static struct bot_spank_submit sub;
		char part[64];

		bot_spank_submit_cmdline((const char *)data, size, (int)(size & 1), &sub);
		(void)bot_spank_submit_script((const char *)data, size, &sub);
		{
			struct bot_spank_srun r;
			char out[32];
			const char *v;

			bot_spank_srun_cmdline((const char *)data, size, &r);
			if (r.gpus > 1 || (r.export_list && strlen(r.export_list) > size))
				abort();
			v = bot_spank_export_value(r.export_list, "NCCL_TUNER_PLUGIN", "e", out,
						   sizeof(out));
			if (v && v != out && strcmp(v, "e"))
				abort();
			if (v == out && !memchr(out, 0, sizeof(out)))
				abort();
		}
		if (!memchr(sub.partition, 0, sizeof(sub.partition)) ||
		    !memchr(sub.account, 0, sizeof(sub.account)) ||
		    !memchr(sub.script, 0, sizeof(sub.script)))
			abort();
		if (bot_spank_conf_default_partition((const char *)data, size, part,
						     sizeof(part)) == 0 &&
		    (!memchr(part, 0, sizeof(part)) || !part[0]))
			abort();
	}
	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = 0;
	for (char *w = strtok_r(s, " \t\n", &save); w && ac < 64; w = strtok_r(NULL, " \t\n", &save))
		av[ac++] = w;
	bot_spank_args_defaults(&a, "/opt/nccl-bot/0/lib");
	memset(err, 'x', sizeof(err));
	if (bot_spank_args_parse(&a, ac, av, (size & 1) ? "n1" : NULL, err, sizeof(err)) < 0) {
		if (!memchr(err, 0, sizeof(err)))
			abort();
	} else {
		if (a.enable < 0 || a.enable > 2 || a.mode < 0 || a.mode > 1 || a.policy < 0 ||
		    a.policy >= BOT_NPOLICY || a.min_bytes_log2 > 63)
			abort();
		if ((a.state_dir[0] && a.state_dir[0] != '/') || a.lib_prefix[0] != '/')
			abort();
	}
	for (int i = 0; i < ac; i++) {
		if (bot_spank_opt_parse(av[i], &a, &kind, &pol, err, sizeof(err)) == 0 &&
		    kind == BOT_SPANK_OPT_POLICY && (pol < 0 || pol >= BOT_NPOLICY))
			abort();
	}
	return 0;
}
