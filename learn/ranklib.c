/*
 * ranklib.c - the rank library check (learn/ranklib.h): normalise the path
 * lexically (what NCCL is pointed at), resolve it (what is checked), look
 * at the resolved file before opening it (only a regular file is opened:
 * opening a device can have side effects, a FIFO or a FUSE file can hang),
 * open it without following links and without blocking, make sure the open
 * file is the one looked at, and read its dynamic symbols through
 * learn/elfread.c with pread(), so nothing is mapped or loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/readall.h"
#include "learn/elfread.h"
#include "learn/log.h"
#include "learn/ranklib.h"

const char *const bot_ranklib_tuner_syms[] = {
	"ncclTunerPlugin_v2", "ncclTunerPlugin_v3", "ncclTunerPlugin_v4",
	"ncclTunerPlugin_v5", "ncclTunerPlugin_v6", NULL,
};

const char *const bot_ranklib_profiler_syms[] = {
	"ncclProfiler_v4", "ncclProfiler_v5", "ncclProfiler_v6", NULL,
};

/* in (absolute) with "//", "." and ".." taken out, links not resolved. */
static int normalise(const char *in, char *out, size_t len)
{
	size_t o = 0;

	if (len < 2 || in[0] != '/')
		return -1;
	out[o++] = '/';
	for (const char *p = in; *p;) {
		const char *q;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (q = p; *q && *q != '/'; q++)
			;
		n = (size_t)(q - p);
		if (n == 1 && p[0] == '.') {
			/* nothing */
		} else if (n == 2 && p[0] == '.' && p[1] == '.') {
			/* back to the previous '/' (the root stays the root) */
			if (o > 1) {
				o--;
				while (o > 1 && out[o - 1] != '/')
					o--;
			}
		} else {
			if (o + n + 2 > len)
				return -1;
			if (o > 1 && out[o - 1] != '/')
				out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		p = q;
	}
	if (o > 1 && out[o - 1] == '/')
		o--;
	out[o] = 0;
	return 0;
}

int bot_ranklib_abspath(const char *path, char *out, size_t len, char *err, size_t errlen)
{
	char cwd[PATH_MAX], joined[2 * PATH_MAX + 2];
	const char *pwd = getenv("PWD");
	struct stat a, b;

	if (!path || !*path)
		return bot_log_errf(err, errlen, "an empty path");
	if (path[0] == '/') {
		if (normalise(path, out, len) < 0)
			return bot_log_errf(err, errlen, "%s: path too long", path);
		return 0;
	}
	/* The shell's name of the current directory, as `pwd -L` takes it:
	 * $PWD when it is absolute and is the current directory. */
	if (pwd && pwd[0] == '/' && strlen(pwd) < sizeof(cwd) && stat(pwd, &a) == 0 &&
	    stat(".", &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		memcpy(cwd, pwd, strlen(pwd) + 1);
	else if (!getcwd(cwd, sizeof(cwd)))
		return bot_log_errf(err, errlen, "%s: cannot make it an absolute path (the current "
				    "directory: %s)", path, strerror(errno));
	snprintf(joined, sizeof(joined), "%s/%s", cwd, path);
	if (normalise(joined, out, len) < 0)
		return bot_log_errf(err, errlen, "%s: path too long", path);
	return 0;
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
	struct stat st, fst;
	char why[512], again[PATH_MAX];
	int fd, rc;

	memset(out, 0, sizeof(*out));
	if (!path || !*path)
		return bot_log_errf(err, errlen, "an empty path");
	if (path[0] != '/')
		return bot_log_errf(err, errlen, "%s: not an absolute path (NCCL would look the name "
				    "up in its own library search path)", path);
	if (normalise(path, out->path, sizeof(out->path)) < 0)
		return bot_log_errf(err, errlen, "%s: path too long", path);
	/* realpath() for the check only: NCCL is pointed at out->path. */
	if (!realpath(path, out->real))
		return bot_log_errf(err, errlen, "%s: %s", path, strerror(errno));
	/* ".." after a link means another directory to the kernel than to the
	 * lexical form: check that NCCL would open the file checked. */
	if (strcmp(out->path, path) && (!realpath(out->path, again) || strcmp(again, out->real)))
		return bot_log_errf(err, errlen, "%s: names another file than %s (a '..' after a "
				    "symbolic link): name the library without '..'", path,
				    out->path);
	/*
	 * Only a regular file is opened. The check runs as the user today
	 * (`nccl-bot env`); in the SPANK plugin it must run in a child with the
	 * job's uid and gids (like the spool harvest), not as root in
	 * slurmstepd: a root open of a user-named path can still probe where
	 * the user cannot look.
	 */
	if (lstat(out->real, &st) < 0)
		return bot_log_errf(err, errlen, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode) && bot_file_kind(st.st_mode))
		return bot_log_errf(err, errlen, "%s: %s, not a shared library", path,
				    bot_file_kind(st.st_mode));
	if (!S_ISREG(st.st_mode))
		return bot_log_errf(err, errlen, "%s: not a regular file", path);
	fd = open(out->real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return bot_log_errf(err, errlen, "%s: %s", path,
				    errno == ELOOP ? "replaced by a symbolic link while being "
				    "checked" : strerror(errno));
	if (fstat(fd, &fst) < 0) {
		int e = errno;

		close(fd);
		return bot_log_errf(err, errlen, "%s: %s", path, strerror(e));
	}
	if (!S_ISREG(fst.st_mode) || fst.st_dev != st.st_dev || fst.st_ino != st.st_ino) {
		close(fd);
		return bot_log_errf(err, errlen, "%s: replaced while being checked", path);
	}
	for (size_t i = 0; i < nt; i++)
		names[i] = bot_ranklib_tuner_syms[i];
	for (size_t i = 0; i < np; i++)
		names[nt + i] = bot_ranklib_profiler_syms[i];
	src.read = bot_elf_fd_read;
	src.arg = &fd;
	src.size = (uint64_t)fst.st_size;
	rc = bot_elf_exports(&src, bot_elf_host_machine(), names, nt + np, &found, why,
			     sizeof(why));
	close(fd);
	if (rc < 0)
		return bot_log_errf(err, errlen, "%s: %s", path, why);
	all_tuner = (1ull << nt) - 1;
	if (!(found & all_tuner))
		return bot_log_errf(err, errlen, "%s: exports none of the NCCL tuner plugin symbols "
				    "(%s..%s): not a tuner plugin", path, bot_ranklib_tuner_syms[0],
				    bot_ranklib_tuner_syms[nt - 1]);
	if ((found & all_tuner) != all_tuner) {
		char missing[256] = "";
		size_t m = 0;

		for (size_t i = 0; i < nt; i++)
			if (!(found & (1ull << i)) && m < sizeof(missing))
				m += (size_t)snprintf(missing + m, sizeof(missing) - m, "%s%s",
						      m ? ", " : "", bot_ranklib_tuner_syms[i]);
		return bot_log_errf(err, errlen, "%s: does not export %s: another tuner plugin, or "
				    "another build of nccl-bot's", path, missing);
	}
	out->profiler = ((found >> nt) & ((1ull << np) - 1)) == (1ull << np) - 1;
	return 0;
}
