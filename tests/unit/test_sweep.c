/*
 * test_sweep.c - unit tests of the sweep CSV reader and writer
 * (common/sweep.c, doc/formats.md section 7).
 *
 * Round trips, header-driven columns, every error class with its FILE:LINE
 * prefix and column, rollback of a failed buffer, comments, CRLF, quoting
 * and the auto_us consistency rule.
 */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/sweep.h"
#include "policies/context.h"
#include "tests/unit/testutil.h"

#define HDR "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us\n"
#define HDR_NO_NL "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us"
#define Z64 "0000000000000000000000000000000000000000000000000000000000000000"

static char err[BOT_SWEEP_ERR_MAX];

static int parse(struct bot_sweep *sw, const char *text)
{
	return bot_sweep_parse(sw, "t.csv", text, strlen(text), err, sizeof(err));
}

/* Parses text into a fresh table; expects success and n rows. */
static void parse_ok(struct bot_sweep *sw, const char *text, size_t n)
{
	bot_sweep_init(sw);
	ck_assert_msg(parse(sw, text) == 0, "unexpected error: %s", err);
	ck_assert_uint_eq(sw->nrows, n);
}

/* Expects an error whose message starts with "t.csv:LINE: " and holds want. */
static void parse_err(const char *text, unsigned line, const char *want)
{
	struct bot_sweep sw;
	char prefix[32];

	bot_sweep_init(&sw);
	err[0] = '\0';
	ck_assert_msg(parse(&sw, text) == -1, "no error for:\n%s", text);
	ck_assert_uint_eq(sw.nrows, 0);
	ck_assert_uint_eq(sw.nfabrics, 0);
	snprintf(prefix, sizeof(prefix), "t.csv:%u: ", line);
	ck_assert_msg(strncmp(err, prefix, strlen(prefix)) == 0, "want prefix \"%s\", got \"%s\"",
		      prefix, err);
	ck_assert_msg(strstr(err, want) != NULL, "want \"%s\" in \"%s\"", want, err);
	bot_sweep_free(&sw);
}

static bool row_eq(const struct bot_sweep *a, const struct bot_sweep_row *x,
		   const struct bot_sweep *b, const struct bot_sweep_row *y)
{
	return strcmp(a->fabrics[x->fabric], b->fabrics[y->fabric]) == 0 &&
	       x->coll == y->coll && x->algo == y->algo && x->proto == y->proto &&
	       x->nchannels == y->nchannels && x->captured == y->captured &&
	       x->aggregate == y->aggregate && x->nbytes == y->nbytes && x->nranks == y->nranks &&
	       x->nnodes == y->nnodes && x->num_pipe_ops == y->num_pipe_ops &&
	       ((isnan(x->auto_us) && isnan(y->auto_us)) || x->auto_us == y->auto_us) &&
	       ((isnan(x->measured_us) && isnan(y->measured_us)) || x->measured_us == y->measured_us);
}

static char *write_all(const struct bot_sweep *sw, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(bot_sweep_write_header(f), 0);
	for (size_t i = 0; i < sw->nrows; i++)
		ck_assert_int_eq(bot_sweep_write_row(f, sw, &sw->rows[i]), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

static struct bot_sweep_row mkrow(struct bot_sweep *sw, const char *fabric, int coll,
				  uint64_t nbytes, uint32_t nranks, uint32_t nnodes, int algo,
				  int proto, double auto_us, double measured_us)
{
	struct bot_sweep_row r;
	int fi = bot_sweep_fabric(sw, fabric);

	ck_assert_int_ge(fi, 0);
	memset(&r, 0, sizeof(r));
	r.fabric = (uint16_t)fi;
	r.coll = (int8_t)coll;
	r.nbytes = nbytes;
	r.nranks = nranks;
	r.nnodes = nnodes;
	r.algo = (int8_t)algo;
	r.proto = (int8_t)proto;
	r.auto_us = auto_us;
	r.measured_us = measured_us;
	r.nchannels = -1;
	r.captured = -1;
	r.aggregate = -1;
	r.num_pipe_ops = -1;
	return r;
}

START_TEST(test_roundtrip)
{
	struct bot_sweep a, b;
	struct bot_sweep_row r;
	size_t len;
	char *text;

	bot_sweep_init(&a);
	r = mkrow(&a, "ib-hdr", BOT_COLL_ALLREDUCE, 1 << 20, 128, 16, BOT_ALGO_RING,
		  BOT_PROTO_SIMPLE, 12.5, 13.25);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "ib-hdr", BOT_COLL_ALLREDUCE, 1 << 20, 128, 16, BOT_ALGO_NVLS,
		  BOT_PROTO_LL, -1, NAN);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "ib-hdr", BOT_COLL_ALLREDUCE, 1 << 20, 128, 16, BOT_ALGO_TREE,
		  BOT_PROTO_LL128, -1, 99.0);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "roce.2x_b", BOT_COLL_BROADCAST, 1, 1, 1, -1, -1, NAN, 0.1);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "roce.2x_b", BOT_COLL_REDUCESCATTER, (uint64_t)1 << 40, 4294967295u, 65535,
		  BOT_ALGO_PAT, -1, NAN, 1.0 / 3.0);
	r.nchannels = 0;
	r.num_pipe_ops = 2147483647;
	r.captured = 1;
	r.aggregate = 0;
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "0", BOT_COLL_ALLGATHER, 3, 2, 2, -1, BOT_PROTO_LL, 1e-300, 1.7976931348623157e308);
	r.nchannels = 64;
	r.num_pipe_ops = 1;
	r.captured = 0;
	r.aggregate = 1;
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "0", BOT_COLL_REDUCE, 12345, 8, 1, BOT_ALGO_COLLNET_CHAIN, BOT_PROTO_SIMPLE,
		  0.30000000000000004, 123456.789012345);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);

	text = write_all(&a, &len);
	bot_sweep_init(&b);
	ck_assert_msg(bot_sweep_parse(&b, "w.csv", text, len, err, sizeof(err)) == 0, "%s\n%s",
		      err, text);
	ck_assert_uint_eq(b.nrows, a.nrows);
	ck_assert_uint_eq(b.nfabrics, 3);
	for (size_t i = 0; i < a.nrows; i++) {
		ck_assert_msg(row_eq(&a, &a.rows[i], &b, &b.rows[i]), "row %zu differs:\n%s", i, text);
		ck_assert_uint_eq(b.rows[i].line, i + 2);
	}
	/* written text is stable: writing the parsed table gives the same bytes */
	{
		size_t len2;
		char *text2 = write_all(&b, &len2);

		ck_assert_str_eq(text, text2);
		free(text2);
	}
	free(text);
	bot_sweep_free(&a);
	bot_sweep_free(&b);
}
END_TEST

START_TEST(test_writer_format)
{
	struct bot_sweep a;
	struct bot_sweep_row r;
	size_t len;
	char *text;

	bot_sweep_init(&a);
	r = mkrow(&a, "f", BOT_COLL_ALLREDUCE, 1024, 8, 2, BOT_ALGO_NVLS_TREE, BOT_PROTO_LL128,
		  -1, NAN);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "f", BOT_COLL_ALLREDUCE, 1024, 8, 2, -1, -1, NAN, 12.5);
	r.nchannels = 4;
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	r = mkrow(&a, "f", BOT_COLL_ALLREDUCE, 1024, 8, 2, BOT_ALGO_RING, BOT_PROTO_LL, 0.1, 2.0 / 3);
	ck_assert_int_eq(bot_sweep_push(&a, &r), 0);
	text = write_all(&a, &len);
	ck_assert_str_eq(text,
			 "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,"
			 "nchannels,num_pipe_ops,captured,aggregate\n"
			 "f,allreduce,1024,8,2,nvls_tree,ll128,-1,,,,,\n"
			 "f,allreduce,1024,8,2,auto,auto,,12.5,4,,,\n"
			 "f,allreduce,1024,8,2,ring,ll,0.1,0.66666666666666663,,,,\n");
	free(text);
	/* a row naming no fabric or an unknown id is refused */
	r.fabric = 7;
	ck_assert_int_eq(bot_sweep_write_row(stdout, &a, &r), -1);
	r.fabric = 0;
	r.coll = 9;
	ck_assert_int_eq(bot_sweep_write_row(stdout, &a, &r), -1);
	bot_sweep_free(&a);
}
END_TEST

START_TEST(test_fields)
{
	struct bot_sweep sw;
	const struct bot_sweep_row *r;

	parse_ok(&sw, HDR "ib,AllReduce,1048576,16,2,TREE,LL128,10.5,11\n"
		      "ib,allgather,1,1,1,auto,auto,,1e3\n"
		      "ib,reduce,4096,8,8,ring,auto,,0.5\n"
		      "ib,broadcast,4096,8,1,Auto,simple,,.5\n"
		      "ib,reducescatter,1099511627776,8,1,collnet_direct,ll,-1,\n"
		      "ib,allreduce,8,8,1,NVLSTree,Simple,,1." Z64 "1\n", 6);
	ck_assert_int_eq(sw.rows[5].algo, BOT_ALGO_NVLS_TREE);
	ck_assert_double_eq(sw.rows[5].measured_us, 1.0);
	r = &sw.rows[0];
	ck_assert_str_eq(sw.fabrics[r->fabric], "ib");
	ck_assert_int_eq(r->coll, BOT_COLL_ALLREDUCE);
	ck_assert_uint_eq(r->nbytes, 1048576);
	ck_assert_uint_eq(r->nranks, 16);
	ck_assert_uint_eq(r->nnodes, 2);
	ck_assert_int_eq(r->algo, BOT_ALGO_TREE);
	ck_assert_int_eq(r->proto, BOT_PROTO_LL128);
	ck_assert_double_eq(r->auto_us, 10.5);
	ck_assert_double_eq(r->measured_us, 11);
	ck_assert_int_eq(r->nchannels, -1);
	ck_assert_int_eq(r->num_pipe_ops, -1);
	ck_assert_int_eq(r->captured, -1);
	ck_assert_int_eq(r->aggregate, -1);
	ck_assert_uint_eq(r->line, 2);
	/* auto,auto: a stock NCCL run */
	r = &sw.rows[1];
	ck_assert_int_eq(r->algo, -1);
	ck_assert_int_eq(r->proto, -1);
	ck_assert(isnan(r->auto_us));
	ck_assert_double_eq(r->measured_us, 1000);
	/* partly forced */
	ck_assert_int_eq(sw.rows[2].algo, BOT_ALGO_RING);
	ck_assert_int_eq(sw.rows[2].proto, -1);
	ck_assert_int_eq(sw.rows[3].algo, -1);
	ck_assert_int_eq(sw.rows[3].proto, BOT_PROTO_SIMPLE);
	ck_assert_double_eq(sw.rows[3].measured_us, 0.5);
	/* unsupported arm, nothing measured */
	ck_assert_double_eq(sw.rows[4].auto_us, -1);
	ck_assert(isnan(sw.rows[4].measured_us));
	ck_assert_uint_eq(sw.rows[4].nbytes, (uint64_t)1 << 40);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_reorder_optional_unknown)
{
	struct bot_sweep sw;
	const struct bot_sweep_row *r;

	parse_ok(&sw, "measured_us,note,proto,ALGO,nnodes,nranks,nbytes,Collective,fabric,auto_us,"
		      "nchannels,dtype,num_pipe_ops,nccl_version,captured,aggregate,\n"
		      "7.5,\"hello, world\",simple,ring,2,16,65536,allreduce,dgx-h100,7,"
		      "32,ncclBfloat16,3,2.28.9,1,0,\n"
		      "8,,ll,tree,1,4,512,broadcast,dgx-h100,,,,,,,,x\n", 2);
	r = &sw.rows[0];
	ck_assert_str_eq(sw.fabrics[r->fabric], "dgx-h100");
	ck_assert_int_eq(r->coll, BOT_COLL_ALLREDUCE);
	ck_assert_uint_eq(r->nbytes, 65536);
	ck_assert_uint_eq(r->nranks, 16);
	ck_assert_uint_eq(r->nnodes, 2);
	ck_assert_int_eq(r->algo, BOT_ALGO_RING);
	ck_assert_int_eq(r->proto, BOT_PROTO_SIMPLE);
	ck_assert_double_eq(r->auto_us, 7);
	ck_assert_double_eq(r->measured_us, 7.5);
	ck_assert_int_eq(r->nchannels, 32);
	ck_assert_int_eq(r->num_pipe_ops, 3);
	ck_assert_int_eq(r->captured, 1);
	ck_assert_int_eq(r->aggregate, 0);
	r = &sw.rows[1];
	ck_assert_int_eq(r->coll, BOT_COLL_BROADCAST);
	ck_assert_int_eq(r->nchannels, -1);
	ck_assert_int_eq(r->num_pipe_ops, -1);
	ck_assert_int_eq(r->captured, -1);
	ck_assert_int_eq(r->aggregate, -1);
	ck_assert_uint_eq(r->line, 3);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_crlf_comments_blank)
{
	struct bot_sweep sw;

	parse_ok(&sw, "# made by hand\r\n\r\n   \r\n" HDR "\t\n"
		      "ib,allreduce,8,2,1,ring,ll,,1.5\r\n"
		      "# a comment, with a comma\n"
		      "\n"
		      "ib,allreduce,8,2,1,ring,ll,,2.5", 2);
	ck_assert_uint_eq(sw.rows[0].line, 6);
	ck_assert_uint_eq(sw.rows[1].line, 9);
	ck_assert_double_eq(sw.rows[0].measured_us, 1.5);
	ck_assert_double_eq(sw.rows[1].measured_us, 2.5);
	bot_sweep_free(&sw);
	/* CRLF on the header too; a byte order mark is skipped */
	parse_ok(&sw, "\xef\xbb\xbf" "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,"
		      "measured_us\r\nib,allreduce,8,2,1,ring,ll,,1.5\r\n", 1);
	bot_sweep_free(&sw);
	/* errors after comments carry the file's own line numbers */
	parse_err("# c\r\n\r\n" HDR "# c\r\nib,allreduce,8,2,1,ring,ll,,x\r\n", 5, "measured_us \"x\"");
}
END_TEST

START_TEST(test_header_only_and_empty)
{
	struct bot_sweep sw;

	parse_ok(&sw, HDR, 0);
	bot_sweep_free(&sw);
	parse_ok(&sw, "# c\n" HDR "# nothing measured\n\n", 0);
	bot_sweep_free(&sw);

	static const char *const empties[] = { "", "\n", "# only a comment\n\n  \n", "\r\n\r\n" };

	for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		bot_sweep_init(&sw);
		ck_assert_int_eq(parse(&sw, empties[i]), -1);
		ck_assert_str_eq(err, "t.csv: empty file (no header)");
		bot_sweep_free(&sw);
	}
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sweep_parse(&sw, "n.csv", NULL, 0, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "n.csv: empty file (no header)");
	bot_sweep_free(&sw);
}
END_TEST

struct bad {
	const char *text;
	unsigned line;
	const char *want;
};

#define ROW1 "ib,allreduce,1024,8,2,ring,ll,"
static const struct bad bads[] = {
	/* header */
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us\nx\n", 1,
	  "missing required column \"measured_us\"" },
	{ "ib,allreduce,1024,8,2,ring,ll,,1\n", 1, "missing required column \"fabric\"" },
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,NBYTES\n", 1,
	  "duplicate column \"nbytes\" (fields 3 and 10)" },
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,dtype,dtype\n", 1,
	  "duplicate column \"dtype\"" },
	{ "#\n\nfabric,\"collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us\n", 3,
	  "unterminated quoted field" },
	/* field counts */
	{ HDR ROW1 ",1.5,extra\n", 2, "10 fields, the header has 9" },
	{ HDR ROW1 "\n", 2, "8 fields, the header has 9" },
	{ HDR "\n" ROW1 ",1.5\nib\n", 4, "1 field, the header has 9" },
	/* fabric */
	{ HDR "ib,allreduce,1024,8,2,ring,ll,,1\n" HDR, 3, "a second header (files joined into one?" },
	{ HDR "IB,allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"IB\": fabric names are lower case" },
	{ HDR ",allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"\": empty: every row names its fabric" },
	{ HDR "-ib,allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"-ib\"" },
	{ HDR "i b,allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"i b\"" },
	{ HDR "ib/x,allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"ib/x\"" },
	{ HDR "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  ",allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\": "
	  "longer than 64 characters (65)" },
	/* names */
	{ HDR "ib,allreduc,1024,8,2,ring,ll,,1\n", 2, "collective \"allreduc\": unknown collective" },
	{ HDR "ib,auto,1024,8,2,ring,ll,,1\n", 2, "collective \"auto\"" },
	{ HDR "ib,,1024,8,2,ring,ll,,1\n", 2, "collective \"\"" },
	{ HDR "ib,allreduce,1024,8,2,rings,ll,,1\n", 2, "algo \"rings\": unknown algo" },
	{ HDR "ib,allreduce,1024,8,2,ring,ll1,,1\n", 2, "proto \"ll1\": unknown proto" },
	{ HDR "ib,allreduce,1024,8,2, ring,ll,,1\n", 2, "algo \" ring\"" },
	{ HDR "ib,allreduce,1024,8,2,ring" Z64 ",ll,,1\n", 2, "algo \"ring000000000000000000000000000000000000...\"" },
	{ HDR "ib,allreduce,1024,8,2,ring,\"\",,1\n", 2, "proto \"\"" },
	/* nbytes */
	{ HDR "ib,allreduce,0,8,2,ring,ll,,1\n", 2, "nbytes \"0\": out of range" },
	{ HDR "ib,allreduce,1099511627777,8,2,ring,ll,,1\n", 2, "nbytes \"1099511627777\"" },
	{ HDR "ib,allreduce,99999999999999999999999,8,2,ring,ll,,1\n", 2, "nbytes" },
	{ HDR "ib,allreduce,-1,8,2,ring,ll,,1\n", 2, "nbytes \"-1\": not an unsigned decimal" },
	{ HDR "ib,allreduce,+1,8,2,ring,ll,,1\n", 2, "nbytes \"+1\"" },
	{ HDR "ib,allreduce,1e3,8,2,ring,ll,,1\n", 2, "nbytes \"1e3\"" },
	{ HDR "ib,allreduce,0x10,8,2,ring,ll,,1\n", 2, "nbytes \"0x10\"" },
	{ HDR "ib,allreduce, 16,8,2,ring,ll,,1\n", 2, "nbytes \" 16\"" },
	{ HDR "ib,allreduce,16 ,8,2,ring,ll,,1\n", 2, "nbytes \"16 \"" },
	{ HDR "ib,allreduce,,8,2,ring,ll,,1\n", 2, "nbytes \"\"" },
	/* nranks, nnodes */
	{ HDR "ib,allreduce,1024,0,1,ring,ll,,1\n", 2, "nranks \"0\"" },
	{ HDR "ib,allreduce,1024,4294967296,1,ring,ll,,1\n", 2, "nranks \"4294967296\"" },
	{ HDR "ib,allreduce,1024,8,0,ring,ll,,1\n", 2, "nnodes \"0\"" },
	{ HDR "ib,allreduce,1024,100000,65536,ring,ll,,1\n", 2, "nnodes \"65536\"" },
	{ HDR "ib,allreduce,1024,8,9,ring,ll,,1\n", 2, "nnodes \"9\": more nodes than nranks (8)" },
	/* auto_us */
	{ HDR ROW1 "0,1\n", 2, "auto_us \"0\": auto_us must be > 0" },
	{ HDR ROW1 "-2,1\n", 2, "auto_us \"-2\"" },
	{ HDR ROW1 "-0.5,1\n", 2, "auto_us \"-0.5\"" },
	{ HDR ROW1 "nan,1\n", 2, "auto_us \"nan\": not a decimal number" },
	{ HDR ROW1 "inf,1\n", 2, "auto_us \"inf\"" },
	{ HDR ROW1 "1e999,1\n", 2, "auto_us \"1e999\": out of range" },
	{ HDR ROW1 "1e-999,1\n", 2, "auto_us \"1e-999\": out of range" },
	{ HDR ROW1 "5us,1\n", 2, "auto_us \"5us\"" },
	{ HDR ROW1 "1.5.2,1\n", 2, "auto_us \"1.5.2\"" },
	{ HDR ROW1 "1e,1\n", 2, "auto_us \"1e\"" },
	{ HDR ROW1 ".,1\n", 2, "auto_us \".\"" },
	{ HDR ROW1 "0x1p3,1\n", 2, "auto_us \"0x1p3\"" },
	{ HDR ROW1 "1\xff,1\n", 2, "auto_us \"1\\xff\"" },
	{ HDR ROW1 "1." Z64 Z64 "1,1\n", 2, "auto_us \"1." "00000000000000000000000000000000000000...\": "
	  "longer than 128 characters" },
	/* measured_us */
	{ HDR ROW1 ",\n", 2, "measured_us \"\": empty, which is only allowed when auto_us is -1" },
	{ HDR ROW1 "3,\n", 2, "measured_us \"\"" },
	{ HDR ROW1 ",0\n", 2, "measured_us \"0\": measured_us must be > 0" },
	{ HDR ROW1 ",-0\n", 2, "measured_us \"-0\"" },
	{ HDR ROW1 ",-1\n", 2, "measured_us \"-1\"" },
	{ HDR ROW1 ",NaN\n", 2, "measured_us \"NaN\"" },
	{ HDR ROW1 ",-inf\n", 2, "measured_us \"-inf\"" },
	{ HDR ROW1 ",1e400\n", 2, "measured_us \"1e400\": out of range" },
	{ HDR ROW1 ",1.5x\n", 2, "measured_us \"1.5x\"" },
	{ HDR ROW1 ",1." Z64 Z64 "1\n", 2, "measured_us \"1." "00000000000000000000000000000000000000...\": "
	  "longer than 128 characters" },
	{ HDR ROW1 ",1,5\n", 2, "10 fields" },
	{ HDR ROW1 ", 1.5\n", 2, "measured_us \" 1.5\"" },
	{ HDR ROW1 ",+1.5\n", 2, "measured_us \"+1.5\"" },
	/* optional columns */
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,nchannels\n"
	  ROW1 ",1,65\n", 2, "nchannels \"65\": out of range" },
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,nchannels\n"
	  ROW1 ",1,-1\n", 2, "nchannels \"-1\"" },
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,num_pipe_ops\n"
	  ROW1 ",1,0\n", 2, "num_pipe_ops \"0\"" },
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,num_pipe_ops\n"
	  ROW1 ",1,2147483648\n", 2, "num_pipe_ops \"2147483648\"" },
	{ "fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us,captured\n"
	  ROW1 ",1,2\n", 2, "captured \"2\"" },
	{ "aggregate,fabric,collective,nbytes,nranks,nnodes,algo,proto,auto_us,measured_us\n"
	  "yes," ROW1 ",1\n", 2, "aggregate \"yes\"" },
	/* quoting */
	{ HDR "\"ib,allreduce,1024,8,2,ring,ll,,1\n", 2, "unterminated quoted field" },
	{ HDR "\"ib\"x,allreduce,1024,8,2,ring,ll,,1\n", 2, "field 1: text after the closing quote" },
	{ HDR "ib,all\"reduce,1024,8,2,ring,ll,,1\n", 2, "field 2: quote inside an unquoted field" },
	{ HDR "\"ib,x\",allreduce,1024,8,2,ring,ll,,1\n", 2, "fabric \"ib,x\"" },
	{ HDR "ib,\"all\"\"reduce\",1024,8,2,ring,ll,,1\n", 2, "collective \"all\\x22reduce\"" },
	/* auto_us consistency */
	{ HDR ROW1 "5,1\n" ROW1 "5,2\n# c\n" ROW1 "6,3\n", 5,
	  "auto_us \"6\": differs from auto_us 5 on line 2 for the same fabric" },
	{ HDR ROW1 ",1\n" ROW1 "5,2\n", 3, "auto_us \"5\": differs from auto_us empty on line 2" },
	{ HDR ROW1 "-1,\n" ROW1 "2.5,2\n", 3, "differs from auto_us -1 on line 2" },
	{ HDR "ib,allreduce,1024,8,2,auto,auto,3,1\nib,allreduce,1024,8,2,auto,auto,,1\n", 3,
	  "auto_us \"\": differs from auto_us 3 on line 2" },
	/* rollback covers rows before the error */
	{ HDR ROW1 ",1\nnew,allreduce,1024,8,2,ring,ll,,1\n" ROW1 ",bad\n", 4, "measured_us" },
};

START_TEST(test_errors)
{
	parse_err(bads[_i].text, bads[_i].line, bads[_i].want);
}
END_TEST

START_TEST(test_consistency_ok)
{
	struct bot_sweep sw;

	/* every key field separates arms */
	parse_ok(&sw, HDR ROW1 "5,1\n"
		      "ib2,allreduce,1024,8,2,ring,ll,6,1\n"
		      "ib,reduce,1024,8,2,ring,ll,6,1\n"
		      "ib,allreduce,1025,8,2,ring,ll,6,1\n"
		      "ib,allreduce,1024,9,2,ring,ll,6,1\n"
		      "ib,allreduce,1024,8,1,ring,ll,6,1\n"
		      "ib,allreduce,1024,8,2,tree,ll,6,1\n"
		      "ib,allreduce,1024,8,2,ring,simple,6,1\n"
		      "ib,allreduce,1024,8,2,auto,ll,6,1\n"
		      "ib,allreduce,1024,8,2,ring,auto,6,1\n", 10);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_consistency_many)
{
	/* enough arms to grow the map several times; one conflict at the end */
	size_t cap = 4000 * 64, len = 0;
	char *text = malloc(cap);
	struct bot_sweep sw;

	len += (size_t)snprintf(text + len, cap - len, HDR);
	for (int i = 0; i < 3000; i++)
		len += (size_t)snprintf(text + len, cap - len, "f%d,allgather,%d,4,1,ring,simple,%d,1\n",
					i % 7, i + 1, i % 13 + 1);
	for (int i = 0; i < 3000; i += 7)
		len += (size_t)snprintf(text + len, cap - len, "f%d,allgather,%d,4,1,ring,simple,%d,2\n",
					i % 7, i + 1, i % 13 + 1);
	parse_ok(&sw, text, 3000 + 429);
	ck_assert_uint_eq(sw.nfabrics, 7);
	bot_sweep_free(&sw);
	/* nbytes 2999 is i = 2998 on line 3000: fabric f2, auto_us 9 */
	snprintf(text + len, cap - len, "f3,allgather,2999,4,1,ring,simple,1,2\n");
	bot_sweep_init(&sw);
	ck_assert_int_eq(parse(&sw, text), 0);
	bot_sweep_free(&sw);
	snprintf(text + len, cap - len, "f2,allgather,2999,4,1,ring,simple,1,2\n");
	bot_sweep_init(&sw);
	ck_assert_int_eq(parse(&sw, text), -1);
	ck_assert_msg(strstr(err, "t.csv:3431: auto_us \"1\": differs from auto_us 9 on line 3000 ")
		      == err, "%s", err);
	ck_assert_uint_eq(sw.nrows, 0);
	bot_sweep_free(&sw);
	free(text);
}
END_TEST

START_TEST(test_rollback)
{
	struct bot_sweep sw;

	bot_sweep_init(&sw);
	ck_assert_int_eq(parse(&sw, HDR "a,allreduce,64,2,1,ring,ll,4,1\n"
				    "a,allreduce,64,2,1,tree,ll,,2\n"), 0);
	ck_assert_uint_eq(sw.nrows, 2);
	/* a second buffer with new fabrics and good rows before the bad one */
	ck_assert_int_eq(parse(&sw, HDR "b,allreduce,64,2,1,ring,ll,4,1\n"
				    "c,allreduce,64,2,1,ring,ll,4,1\n"
				    "a,allreduce,64,2,1,ring,ll,4,1\n"
				    "a,allreduce,64,2,1,ring,ll,4,0\n"), -1);
	ck_assert_str_eq(err, "t.csv:5: measured_us \"0\": measured_us must be > 0");
	ck_assert_uint_eq(sw.nrows, 2);
	ck_assert_uint_eq(sw.nfabrics, 1);
	ck_assert_str_eq(sw.fabrics[0], "a");
	/* the auto_us rule spans inputs: the first input's row wins */
	ck_assert_int_eq(parse(&sw, "# second file\n" HDR "a,allreduce,64,2,1,ring,ll,5,1\n"), -1);
	ck_assert_str_eq(err, "t.csv:3: auto_us \"5\": differs from auto_us 4 on line 2 of an "
			 "earlier input for the same fabric, collective, nbytes, nranks, nnodes, "
			 "algo and proto");
	ck_assert_uint_eq(sw.nrows, 2);
	/* a good third buffer appends, fabrics get the next index */
	ck_assert_int_eq(parse(&sw, HDR "d,allreduce,64,2,1,ring,ll,5,1\n"
				    "a,allreduce,64,2,1,ring,ll,4,3\n"), 0);
	ck_assert_uint_eq(sw.nrows, 4);
	ck_assert_uint_eq(sw.nfabrics, 2);
	ck_assert_str_eq(sw.fabrics[1], "d");
	ck_assert_uint_eq(sw.rows[2].fabric, 1);
	/* the names of the failed buffer are gone from the name index too */
	ck_assert_int_eq(bot_sweep_fabric(&sw, "c"), 2);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "b"), 3);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "d"), 1);
	sw.nfabrics = 2;	/* dropped again, as a failed parse drops them */
	ck_assert_double_eq(sw.rows[3].measured_us, 3);
	/* rows built in memory take part too */
	{
		struct bot_sweep_row r = sw.rows[0];

		r.line = 0;
		r.nbytes = 128;
		ck_assert_int_eq(bot_sweep_push(&sw, &r), 0);
	}
	ck_assert_int_eq(parse(&sw, HDR "a,allreduce,128,2,1,ring,ll,,1\n"), -1);
	ck_assert_msg(strstr(err, "t.csv:2: auto_us \"\": differs from auto_us 4 on an earlier row")
		      == err, "%s", err);
	ck_assert_uint_eq(sw.nrows, 5);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_quotes)
{
	struct bot_sweep sw;

	parse_ok(&sw, "\"fabric\",collective,nbytes,nranks,nnodes,algo,proto,auto_us,"
		      "measured_us,\"a \"\"note\"\", with a comma\"\n"
		      "\"ib\",\"allreduce\",\"1024\",8,2,ring,ll,\"\",\"1.25\",\"x,y\"\n"
		      "ib,allreduce,1024,8,2,ring,ll,,2,\"\"\n", 2);
	ck_assert_double_eq(sw.rows[0].measured_us, 1.25);
	ck_assert(isnan(sw.rows[0].auto_us));
	ck_assert_uint_eq(sw.rows[0].nbytes, 1024);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_long_lines)
{
	size_t n = 64 * 1024;
	char *text = calloc(1, n + 256);
	struct bot_sweep sw;

	/* a comment of exactly 64 KiB is fine */
	text[0] = '#';
	memset(text + 1, 'x', n - 1);
	strcpy(text + n, "\n" HDR);
	parse_ok(&sw, text, 0);
	bot_sweep_free(&sw);
	/* one byte more is an error, even in a comment (the CR does not count) */
	memset(text + 1, 'x', n);
	strcpy(text + n + 1, "\r\n" HDR);
	parse_err(text, 1, "line longer than 64 KiB (65537 bytes)");
	strcpy(text, HDR "ib,allreduce,1024,8,2,ring,ll,,1,");
	memset(text + strlen(text), 'y', n - 32);
	strcpy(text + strlen(HDR) + n + 1, "\n");
	parse_err(text, 2, "line longer than 64 KiB");
	free(text);
}
END_TEST

START_TEST(test_fabric_api)
{
	struct bot_sweep sw;
	char name[80];

	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "ib"), 0);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "roce"), 1);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "ib"), 0);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "IB"), -1);
	ck_assert_int_eq(bot_sweep_fabric(&sw, ""), -1);
	ck_assert_int_eq(bot_sweep_fabric(&sw, ".x"), -1);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "a b"), -1);
	ck_assert_int_eq(bot_sweep_fabric(&sw, NULL), -1);
	memset(name, 'z', 64);
	name[64] = '\0';
	ck_assert_int_eq(bot_sweep_fabric(&sw, name), 2);
	ck_assert_str_eq(sw.fabrics[2], name);
	name[64] = 'z';
	name[65] = '\0';
	ck_assert_int_eq(bot_sweep_fabric(&sw, name), -1);
	ck_assert_int_eq(bot_sweep_fabric(&sw, "0.a_b-c"), 3);
	ck_assert_uint_eq(sw.nfabrics, 4);
	bot_sweep_free(&sw);
	ck_assert_ptr_null(sw.rows);
	ck_assert_uint_eq(sw.nrows, 0);
}
END_TEST

/* The most fabrics a table numbers (uint16_t): 65,536 names, in an order
 * that is neither the names' nor their first letters', each found again
 * under its own index; the next name is refused, and a row of a known one
 * still reads. */
START_TEST(test_many_fabrics)
{
	const unsigned nf = 65536;
	struct bot_sweep sw;
	char *buf = NULL, name[32];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	fputs(HDR, f);
	for (unsigned i = 0; i < nf; i++)
		fprintf(f, "x%x,allreduce,64,2,1,ring,ll,4,1\n", (i * 40503u) % nf);
	fclose(f);
	parse_ok(&sw, buf, nf);
	free(buf);
	ck_assert_uint_eq(sw.nfabrics, nf);
	for (unsigned i = 0; i < nf; i++) {
		snprintf(name, sizeof(name), "x%x", (i * 40503u) % nf);
		ck_assert_str_eq(sw.fabrics[sw.rows[i].fabric], name);
		ck_assert_uint_eq(sw.rows[i].fabric, i);
		ck_assert_int_eq(bot_sweep_fabric(&sw, name), (int)i);
	}
	ck_assert_int_eq(parse(&sw, HDR "x0,allreduce,64,2,1,ring,ll,4,2\n"
				    "y,allreduce,64,2,1,ring,ll,4,1\n"), -1);
	ck_assert_str_eq(err, "t.csv:3: too many fabrics (at most 65536) or out of memory");
	ck_assert_int_eq(bot_sweep_fabric(&sw, "y"), -1);
	ck_assert_int_eq(parse(&sw, HDR "x0,allreduce,64,2,1,ring,ll,4,2\n"), 0);
	ck_assert_uint_eq(sw.nrows, (size_t)nf + 1);
	ck_assert_uint_eq(sw.rows[nf].fabric, 0);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_read_file)
{
	char dir[BOT_TEST_PATH_MAX], path[BOT_TEST_PATH_MAX];
	struct bot_sweep sw;
	FILE *f;

	bot_test_mkdtemp(dir, sizeof(dir), "sweep");
	f = fopen(bot_test_path(path, dir, "sweep.csv"), "w");
	ck_assert_ptr_nonnull(f);
	fputs(HDR "ib,allreduce,1024,8,2,ring,ll,,1\nib,allreduce,1024,8,2,ring,ll,,2\n", f);
	fclose(f);
	bot_sweep_init(&sw);
	ck_assert_msg(bot_sweep_read(&sw, path, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(sw.nrows, 2);
	bot_sweep_free(&sw);

	f = fopen(path, "w");
	fputs(HDR "ib,allreduce,1024,8,2,ring,ll,,1\nib,allreduce,1024,8,2,ring,ll,,z\n", f);
	fclose(f);
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sweep_read(&sw, path, err, sizeof(err)), -1);
	ck_assert_uint_eq(sw.nrows, 0);
	ck_assert_ptr_nonnull(strstr(err, ":3: measured_us \"z\""));
	ck_assert_int_eq(strncmp(err, path, strlen(path)), 0);

	f = fopen(path, "w");
	fclose(f);
	ck_assert_int_eq(bot_sweep_read(&sw, path, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ": empty file (no header)"));
	bot_test_rmtree(dir);

	ck_assert_int_eq(bot_sweep_read(&sw, "/nonexistent/sweep.csv", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "/nonexistent/sweep.csv: cannot open: No such file or directory");
	/* a directory reads as an error, not as an empty file */
	ck_assert_int_eq(bot_sweep_read(&sw, "/", err, sizeof(err)), -1);
	ck_assert_int_eq(strncmp(err, "/: ", 3), 0);
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_read_stdin)
{
	static const char csv[] = HDR "ib,allreduce,1024,8,2,ring,ll,,x\n";
	char dir[BOT_TEST_PATH_MAX], path[BOT_TEST_PATH_MAX];
	struct bot_sweep sw;

	bot_test_mkdtemp(dir, sizeof(dir), "sweep");
	bot_test_write(dir, "stdin.csv", csv, strlen(csv));
	ck_assert_ptr_nonnull(freopen(bot_test_path(path, dir, "stdin.csv"), "r", stdin));
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sweep_read(&sw, "-", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "<stdin>:2: measured_us \"x\": not a decimal number (expected a "
			 "number > 0)");
	bot_sweep_free(&sw);
	bot_test_rmtree(dir);
}
END_TEST

START_TEST(test_err_buffer)
{
	struct bot_sweep sw;
	char small[12];

	bot_sweep_init(&sw);
	/* no error buffer, or a tiny one, is fine */
	ck_assert_int_eq(bot_sweep_parse(&sw, "t.csv", "x\n", 2, NULL, 0), -1);
	ck_assert_int_eq(bot_sweep_parse(&sw, "t.csv", "x\n", 2, small, sizeof(small)), -1);
	ck_assert_str_eq(small, "t.csv:1: he");
	ck_assert_int_eq(bot_sweep_parse(&sw, "a-very-long-file-name.csv", "x\n", 2, small,
					 sizeof(small)), -1);
	ck_assert_uint_lt(strlen(small), sizeof(small));
	bot_sweep_free(&sw);
}
END_TEST

START_TEST(test_nul_bytes)
{
	static const char text[] = HDR "ib,allreduce,1024,8,2,ring,l\0l,,1\n";
	static const char ok[] = HDR "ib,allreduce,1024,8,2,ring,ll,,1\n# \0\n";
	struct bot_sweep sw;

	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sweep_parse(&sw, "t.csv", text, sizeof(text) - 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "t.csv:2: proto \"l\\x00l\": unknown proto (expected auto, ll, ll128 "
			 "or simple)");
	ck_assert_int_eq(bot_sweep_parse(&sw, "t.csv", ok, sizeof(ok) - 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(sw.nrows, 1);
	bot_sweep_free(&sw);
}
END_TEST

/* Line ends of CR alone made the whole file one line: "missing required
 * column measured_us", or, after a comment, "empty file (no header)"; a
 * UTF-16 file's header "lacked fabric". Both are said as what they are. */
START_TEST(test_cr_only_utf16)
{
	static const char u16[] = "\xff\xfe" "f\0a\0b\0r\0i\0c\0,\0";
	static const char cmt[] = "# \0\n" HDR "ib,allreduce,1024,8,2,ring,ll,,1\n";
	struct bot_sweep sw;

	parse_err(HDR_NO_NL "\rib,allreduce,1024,8,2,ring,ll,,1\r", 1,
		  "a carriage return inside the line: lines must end in LF or CR LF");
	parse_err("# converted\r" HDR_NO_NL "\rib,allreduce,1024,8,2,ring,ll,,1\r", 1,
		  "a carriage return inside the line");
	parse_err(HDR "ib,allreduce,1024,8,2,ring,ll,,1\r\r\n", 2, "measured_us \"1\\x0d\"");
	bot_sweep_init(&sw);
	ck_assert_int_eq(bot_sweep_parse(&sw, "t.csv", u16, sizeof(u16) - 1, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "t.csv:1: a NUL byte: the file is not ASCII or UTF-8 text (UTF-16?)");
	/* a NUL in a comment is no header's */
	ck_assert_int_eq(bot_sweep_parse(&sw, "t.csv", cmt, sizeof(cmt) - 1, err, sizeof(err)), 0);
	ck_assert_uint_eq(sw.nrows, 1);
	bot_sweep_free(&sw);
}
END_TEST

static Suite *sweep_suite(void)
{
	Suite *s = suite_create("sweep");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_roundtrip);
	tcase_add_test(tc, test_writer_format);
	tcase_add_test(tc, test_fields);
	tcase_add_test(tc, test_reorder_optional_unknown);
	tcase_add_test(tc, test_crlf_comments_blank);
	tcase_add_test(tc, test_header_only_and_empty);
	tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	tcase_add_test(tc, test_consistency_ok);
	tcase_add_test(tc, test_consistency_many);
	tcase_add_test(tc, test_rollback);
	tcase_add_test(tc, test_quotes);
	tcase_add_test(tc, test_long_lines);
	tcase_add_test(tc, test_fabric_api);
	tcase_add_test(tc, test_many_fabrics);
	tcase_add_test(tc, test_read_file);
	tcase_add_test(tc, test_read_stdin);
	tcase_add_test(tc, test_err_buffer);
	tcase_add_test(tc, test_nul_bytes);
	tcase_add_test(tc, test_cr_only_utf16);
	suite_add_tcase(s, tc);
	return s;
}

BOT_TEST_MAIN(sweep_suite)
