/*
 * fuzz_harvest.c - fuzz target for the harvest's validating half
 * (learn/harvest.c's bot_harvest_collect), which parses, as root, the unit
 * stream a reading child running as the job's user writes on a pipe
 * (doc/formats.md section 13, "The harvest's record stream").
 *
 * Each input is the whole stream. collect reads its fd through poll() and
 * read(); poll() on a regular file is always ready, so the bytes go into one
 * memfd per process (truncated, written, rewound for each input): no child,
 * no second thread, no sleep, the same work every run. The identity is fixed
 * (as `nccl-bot harvest` gives it: no Slurm flag, the job and the step
 * start left to the harvest, so the default job string from the record
 * digests and the step start from the child's file times are exercised
 * too), the step has 2 nodes, and the bounds are small (8 files, 4 KiB of spool bytes) so the
 * stream's byte bound and file bound are within reach of short inputs. The
 * outbox is a directory made once per process under $TMPDIR, /dev/shm or
 * /tmp (where fsync is cheap if it can be) and removed at exit.
 *
 * Invariants (abort() otherwise): collect returns; every message it logs
 * is free of control characters; when it fails, the outbox is left empty
 * and the outcome is not "written"; when it succeeds, every file the
 * stream named is counted read, rejected or duplicate, and the outbox holds
 * only the delta it names, which bot_delta_read_at reads back with this
 * identity, a step start at most 7 days before the end, the counts the
 * result gives, and records that each pass bot_spool_rec_check and the
 * step's node count. The delta is removed after each input. Built with tests/fuzz/driver.c (standalone) or libFuzzer.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/delta.h"
#include "common/spool.h"
#include "learn/harvest.h"
#include "learn/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define STEP_NODES 2
#define T_END 1700000000ull

static char root[256], outbox[300];
static int outfd = -1, memfd = -1;
static const struct bot_harvest_src srcs[2] = {
	{ "/fuzz/spool-a", NULL },
	{ "/fuzz/spool-b", NULL },
};
static struct bot_harvest_req req;

static void cleanup(void)
{
	DIR *d = opendir(outbox);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(outbox);
	rmdir(root);
}

static void setup(void)
{
	const char *base = getenv("TMPDIR");
	struct stat st;

	if (!base || !*base)
		base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
		       access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(root, sizeof(root), "%s/fuzz-harvest-XXXXXX", base);
	if (!mkdtemp(root)) {
		perror(root);
		abort();
	}
	snprintf(outbox, sizeof(outbox), "%s/outbox", root);
	if (mkdir(outbox, 0700) < 0) {
		perror(outbox);
		abort();
	}
	atexit(cleanup);
	outfd = open(outbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memfd = memfd_create("fuzz-harvest-stream", MFD_CLOEXEC);
	if (outfd < 0 || memfd < 0) {
		perror("fuzz_harvest: setup");
		abort();
	}
	req.src = srcs;
	req.nsrc = 2;
	req.owner = getuid();
	req.max_files = 8;
	req.max_bytes = 4096;
	req.outbox = outbox;
	strcpy(req.id.cluster, "fuzz");
	strcpy(req.id.fabric, "h100-ib-ndr");
	strcpy(req.id.node, "n1");
	req.id.uid = 1000;
	req.id.gid = 1000;
	req.id.step = 3;
	req.id.array_task = req.id.het_comp = BOT_DELTA_NONE;
	req.id.step_nodes = STEP_NODES;
	req.id.t_end = T_END;
	req.id.t_harvest = T_END + 5;
}

/* The log: every message must come escaped (it names hostile bytes). */
static void check_log(void *arg, int level, const char *msg)
{
	(void)arg;
	(void)level;
	for (const unsigned char *p = (const unsigned char *)msg; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			abort();
}

/* The outbox's entries other than . and ..; *only set to 1 when the one
 * entry is name. */
static size_t outbox_entries(const char *name, int *only)
{
	DIR *d = opendir(outbox);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		abort();
	*only = 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		if (name && !strcmp(e->d_name, name))
			*only = 1;
	}
	closedir(d);
	if (n != 1)
		*only = 0;
	return n;
}

/* What a successful collect wrote: the delta it names, with this identity
 * and these counts, every record valid. */
static void check_written(const struct bot_harvest_result *res)
{
	const struct bot_delta_hdr *id = &req.id;
	char err[BOT_DELTA_ERR_MAX], path[sizeof(outbox) + BOT_DELTA_NAME_MAX + 1];
	struct bot_delta d;
	int only;

	if (res->outcome != BOT_HARVEST_WRITTEN || !res->name[0] ||
	    outbox_entries(res->name, &only) != 1 || !only)
		abort();
	snprintf(path, sizeof(path), "%s/%s", outbox, res->name);
	if (strcmp(res->path, path))
		abort();
	if (bot_delta_read_at(outfd, res->name, path, &d, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_harvest: the delta written does not read back: %s\n", err);
		abort();
	}
	if (strcmp(d.hdr.cluster, id->cluster) || strcmp(d.hdr.fabric, id->fabric) ||
	    strcmp(d.hdr.node, id->node) || strcmp(d.hdr.account, id->account) ||
	    d.hdr.uid != id->uid || d.hdr.gid != id->gid || d.hdr.step != id->step ||
	    d.hdr.step_nodes != id->step_nodes || d.hdr.t_start > T_END ||
	    d.hdr.t_start < T_END - BOT_HARVEST_MAX_SPAN_S || d.hdr.t_end != id->t_end ||
	    d.hdr.t_harvest != id->t_harvest || d.hdr.flags != res->flags ||
	    (d.hdr.flags & (BOT_DELTA_F_SLURM | BOT_DELTA_F_ACCOUNT)) ||
	    d.identity != res->identity || d.hdr.nrecords != res->records ||
	    !d.hdr.nrecords || d.hdr.nrecords > res->records_in ||
	    d.hdr.files_read != res->files_read || d.hdr.files_rejected != res->files_rejected ||
	    !!(d.hdr.flags & BOT_DELTA_F_REJECTED) != !!res->files_rejected)
		abort();
	for (uint64_t i = 0; i < d.hdr.nrecords; i++)
		if (bot_spool_rec_check(&d.recs[i], err, sizeof(err)) < 0 ||
		    d.recs[i].nnodes > STEP_NODES)
			abort();
	bot_delta_free(&d);
	if (unlinkat(outfd, res->name, 0) < 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct bot_log log = { check_log, NULL };
	struct bot_harvest_result res;
	int only, rc;

	if (memfd < 0)
		setup();
	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size ||
	    lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	rc = bot_harvest_collect(memfd, &req, &res, &log);
	if (res.files != res.files_read + res.files_rejected + res.files_duplicate && rc == 0)
		abort();
	if (rc == 0) {
		check_written(&res);
	} else if (rc != -1 || res.outcome == BOT_HARVEST_WRITTEN ||
		   outbox_entries(NULL, &only) != 0) {
		abort();
	}
	return 0;
}
