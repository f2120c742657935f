/*
 * ranklib.c - the rank library check (learn/ranklib.h): resolve the path,
 * open it without blocking (a FIFO must not hang the check), require a
 * regular file, and read its dynamic symbols through learn/elf.c with
 * pread(), so nothing is mapped or loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errf.h"
#include "learn/elf.h"
#include "learn/ranklib.h"

const char *const bot_ranklib_tuner_syms[] = {
	"ncclTunerPlugin_v2", "ncclTunerPlugin_v3", "ncclTunerPlugin_v4",
	"ncclTunerPlugin_v5", "ncclTunerPlugin_v6", NULL,
};

const char *const bot_ranklib_profiler_syms[] = {
	"ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6", NULL,
};

static int fd_read(void *arg, uint64_t off, void *buf, size_t len)
{
	int fd = *(int *)arg;
	size_t done = 0;

	while (done < len) {
		ssize_t r = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static const char *file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory, not a shared library";
	if (S_ISCHR(m))
		return "a character device, not a shared library";
	if (S_ISBLK(m))
		return "a block device, not a shared library";
	if (S_ISFIFO(m))
		return "a FIFO, not a shared library";
	if (S_ISSOCK(m))
		return "a socket, not a shared library";
	return "not a regular file";
}

static size_t count(const char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

int bot_ranklib_check(const char *path, struct bot_ranklib *out, char *err, size_t errlen)
{
	const char *names[BOT_ELF_MAX_NAMES];
	size_t nt = count(bot_ranklib_tuner_syms), np = count(bot_ranklib_profiler_syms);
	struct bot_elf_src src;
	uint64_t found, all_tuner;
	struct stat st;
	char why[512];
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (!path || !*path)
		return bot_errf(err, errlen, "an empty path");
	if (path[0] != '/')
		return bot_errf(err, errlen, "%s: not an absolute path (NCCL would look the name up "
				"in its own library search path)", path);
	if (!realpath(path, out->path))
		return bot_errf(err, errlen, "%s: %s", path, strerror(errno));
	fd = open(out->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return bot_errf(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = bot_errf(err, errlen, "%s: %s", path, file_kind(st.st_mode));
		close(fd);
		return rc;
	}
	for (size_t i = 0; i < nt; i++)
		names[i] = bot_ranklib_tuner_syms[i];
	for (size_t i = 0; i < np; i++)
		names[nt + i] = bot_ranklib_profiler_syms[i];
	src.read = fd_read;
	src.arg = &fd;
	src.size = (uint64_t)st.st_size;
	rc = bot_elf_exports(&src, bot_elf_host_machine(), names, nt + np, &found, why,
			     sizeof(why));
	close(fd);
	if (rc < 0)
		return bot_errf(err, errlen, "%s: %s", path, why);
	all_tuner = (1ull << nt) - 1;
	if (!(found & all_tuner))
		return bot_errf(err, errlen, "%s: exports none of the NCCL tuner plugin symbols "
				"(%s..%s): not a tuner plugin", path, bot_ranklib_tuner_syms[0],
				bot_ranklib_tuner_syms[nt - 1]);
	if ((found & all_tuner) != all_tuner) {
		char missing[256] = "";
		size_t m = 0;

		for (size_t i = 0; i < nt; i++)
			if (!(found & (1ull << i)) && m < sizeof(missing))
				m += (size_t)snprintf(missing + m, sizeof(missing) - m, "%s%s",
						      m ? ", " : "", bot_ranklib_tuner_syms[i]);
		return bot_errf(err, errlen, "%s: does not export %s: another tuner plugin, or "
				"another build of nccl-bot's", path, missing);
	}
	out->profiler = ((found >> nt) & ((1ull << np) - 1)) == (1ull << np) - 1;
	return 0;
}
