/*
 * harvest_stream.c - the harvest's reading half (learn/harvest.c's
 * bot_harvest_read) run on spool directories, its unit stream written to
 * standard output: how tests/fuzz/make-corpus-harvest.sh makes the seeds of
 * the stream's fuzz target (tests/fuzz/fuzz_harvest.c). Built by `make
 * check` (so it keeps compiling), never run by it.
 *
 *   tests/fuzz/harvest_stream [-f MAX_FILES] [-b MAX_BYTES] DIR... >STREAM
 *
 * Every *.spool entry of each DIR, owned by the invoking user. Exit status
 * 0 when the stream was written whole, 1 when standard output failed, 2 on
 * a usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "learn/harvest.h"

int main(int argc, char **argv)
{
	struct bot_harvest_req req = { 0 };
	struct bot_harvest_src *src;
	int opt;

	while ((opt = getopt(argc, argv, "f:b:")) != -1) {
		if (opt == 'f')
			req.max_files = strtoul(optarg, NULL, 10);
		else if (opt == 'b')
			req.max_bytes = strtoull(optarg, NULL, 10);
		else
			goto usage;
	}
	if (optind >= argc)
		goto usage;
	src = calloc((size_t)(argc - optind), sizeof(*src));
	if (!src)
		return 1;
	for (int i = optind; i < argc; i++)
		src[i - optind].dir = argv[i];
	req.src = src;
	req.nsrc = (size_t)(argc - optind);
	req.owner = getuid();
	if (bot_harvest_read(&req, STDOUT_FILENO) < 0) {
		perror("harvest_stream: standard output");
		return 1;
	}
	free(src);
	return 0;
usage:
	fprintf(stderr, "usage: %s [-f MAX_FILES] [-b MAX_BYTES] DIR... >STREAM\n", argv[0]);
	return 2;
}
