/*
 * compilebench.c - bench/compile.sh's helper: a step table compiled from a
 * 2,000-context snapshot.
 *
 *   compilebench gen FILE      write the snapshot (deterministic bytes)
 *   compilebench time FILE R   R rounds of: read the file's bytes (the
 *                              floor); read + parse + plan + encode (what
 *                              `nccl-bot env --state FILE` does after its
 *                              rank library check). Prints the medians in ms.
 *
 * The snapshot: 5 collectives x 40 size buckets x 10 scales, every context
 * with AUTO's row (3 arms) and histograms on 3 arms (16 bins, counts from a
 * fixed generator), sources of 200 jobs; written by bot_state_encode.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/state.h"
#include "common/table.h"
#include "learn/compile.h"
#include "policies/context.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

static int gen(const char *path)
{
	static const uint32_t scales[10][2] = { { 8, 1 }, { 16, 2 }, { 32, 4 }, { 64, 8 },
		{ 128, 16 }, { 256, 32 }, { 512, 64 }, { 1024, 128 }, { 16, 4 }, { 64, 16 } };
	const int arms[3] = { bot_arm(BOT_ALGO_RING, BOT_PROTO_LL),
			      bot_arm(BOT_ALGO_RING, BOT_PROTO_SIMPLE),
			      bot_arm(BOT_ALGO_TREE, BOT_PROTO_SIMPLE) };
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	uint8_t *b;
	size_t n;
	FILE *f;

	if (bot_state_init(&s, "bench") < 0)
		return 1;
	for (unsigned c = 0; c < BOT_NCOLL; c++)
		for (unsigned k = 0; k < 40; k++)
			for (unsigned sc = 0; sc < 10; sc++) {
				unsigned bucket = bot_size_bucket((uint64_t)1 << (20 + k / 4)) + k % 4;
				uint64_t key = bot_ctx_key(c, bucket, scales[sc][0], scales[sc][1]);
				float prior[BOT_NARMS];
				struct bot_kb_ctx *x;

				for (int a = 0; a < BOT_NARMS; a++)
					prior[a] = -1.0f;
				for (int i = 0; i < 3; i++)
					prior[arms[i]] = 50.0f + (float)(next() % 1000);
				if (bot_kb_offer_prior(s.kb, key, prior) < 0 ||
				    bot_kb_add_calls(s.kb, key, 1000 + next() % 100000) < 0 ||
				    !(x = bot_kb_get(s.kb, key)))
					return 1;
				for (int i = 0; i < 3; i++) {
					int q0 = 1000 + (int)(next() % 400);

					for (int q = 0; q < 16; q++)
						if (bot_stats_add_q(&x->arm[arms[i]], q0 + 2 * q,
								    1 + next() % 50) < 0)
							return 1;
				}
			}
	for (uint64_t j = 0; j < 200 * 8; j++)
		if (bot_state_add_source(&s, ((uint64_t)next() << 32) | next()) < 0)
			return 1;
	s.rounds = 200;
	if (bot_state_encode(&s, &b, &n, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != n || fclose(f) != 0) {
		perror(path);
		return 1;
	}
	printf("%s: %zu contexts, %zu bytes\n", path, bot_kb_count(s.kb), n);
	free(b);
	bot_state_free(&s);
	return 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double read_bytes(const char *path)
{
	static char buf[1 << 16];
	double t0 = now_ms();
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		exit(1);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return now_ms() - t0;
}

static double compile_once(const char *path, size_t *entries)
{
	static char text[BOT_TABLE_MAX_TEXT + 1];
	struct bot_compile_opts o;
	struct bot_compile_report rep;
	struct bot_table *t = malloc(sizeof(*t));
	struct bot_state s;
	char err[BOT_STATE_ERR_MAX];
	double t0 = now_ms();

	if (!t || bot_state_read_file(path, &s, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", t ? err : "out of memory");
		exit(1);
	}
	bot_compile_opts_default(&o);
	if (bot_compile_plan(s.kb, &o, s.rounds, t, &rep, err, sizeof(err)) < 0 ||
	    bot_table_encode(t, text, sizeof(text)) < 0) {
		fprintf(stderr, "plan: %s\n", err);
		exit(1);
	}
	bot_state_free(&s);
	*entries = rep.entries;
	free(t);
	return now_ms() - t0;
}

int main(int argc, char **argv)
{
	double *r, *c;
	size_t entries = 0;
	int n;

	if (argc == 3 && !strcmp(argv[1], "gen"))
		return gen(argv[2]);
	if (argc != 4 || strcmp(argv[1], "time") || (n = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: compilebench gen FILE | compilebench time FILE ROUNDS\n");
		return 2;
	}
	r = malloc((size_t)n * sizeof(*r));
	c = malloc((size_t)n * sizeof(*c));
	if (!r || !c)
		return 1;
	for (int i = 0; i < n; i++) {	/* side by side, interleaved */
		r[i] = read_bytes(argv[2]);
		c[i] = compile_once(argv[2], &entries);
	}
	qsort(r, (size_t)n, sizeof(*r), cmp_d);
	qsort(c, (size_t)n, sizeof(*c), cmp_d);
	printf("read %.3f ms compile %.3f ms entries %zu\n", r[n / 2], c[n / 2], entries);
	free(r);
	free(c);
	return 0;
}
