/*
 * doctor.c - the checks of `nccl-bot doctor` (spank/doctor.h): plugstack.conf
 * and what it names, the plugin's build, its arguments, the rank library,
 * the node-local directories and the container snippets.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/le.h"
#include "common/readall.h"
#include "learn/elfread.h"
#include "learn/log.h"
#include "learn/ranklib.h"
#include "spank/args.h"
#include "spank/decide.h"
#include "learn/siteconf.h"
#include "spank/doctor.h"
#include "spank/fabricmap.h"
#include "spank/spooldir.h"

#define CONF_MAX (1u << 20)	/* a plugstack.conf, an fstab, apptainer.conf */
#define CONF_FILES_MAX 64	/* files read through include lines */
#define CONF_DEPTH_MAX 4	/* include nesting */
#define PLUGIN_SO "spank_nccl_bot.so"
#define TMPFS_MAGIC_NUMBER 0x01021994

/* Our plugin's line: where, how, with which words. */
struct line {
	char where[PATH_MAX + 32];	/* "FILE:LINE" */
	char mode[16];			/* optional, required */
	char path[PATH_MAX];
	char *words[BOT_DOCTOR_ARGS_MAX];
	int nwords;
};

struct doc {
	const struct bot_doctor_opts *o;
	bot_doctor_report_fn fn;
	void *arg;
	int problems;
	int soft;		/* enable=off: problems are reported as warnings */
	int follow;		/* include lines are read (not in bot_doctor_scan) */
	struct line lines[8];	/* our plugin's lines (more are counted, not kept) */
	int nlines;
	int nfiles;
	char seen[CONF_FILES_MAX][PATH_MAX];	/* files read (an include loop reads one once) */
};

static void __attribute__((format(printf, 4, 5)))
say(struct doc *d, const char *check, enum bot_doctor_status st, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bot_log_esc_inplace(msg, sizeof(msg));
	if (st == BOT_DOCTOR_PROBLEM && d->soft)
		st = BOT_DOCTOR_WARN;
	if (st == BOT_DOCTOR_PROBLEM)
		d->problems++;
	d->fn(d->arg, check, st, msg);
}

int bot_doctor_parse_version(const char *s, uint32_t *v)
{
	unsigned long part[3] = { 0, 0, 0 };
	const char *p = s;
	char *end;
	int n = 0;

	while (*p && !(*p >= '0' && *p <= '9' && (p == s || p[-1] == ' ' || p[-1] == '-')))
		p++;
	while (n < 3 && *p >= '0' && *p <= '9') {
		errno = 0;
		part[n] = strtoul(p, &end, 10);
		if (errno || part[n] > 255)
			return -1;
		n++;
		p = end;
		if (*p != '.')
			break;
		p++;
	}
	if (n < 2 || part[0] == 0)
		return -1;
	*v = (uint32_t)(part[0] << 16 | part[1] << 8 | part[2]);
	return 0;
}

/* ---- reading a configuration file ----------------------------------- */

/* The whole of path (a regular file owned by root or us), NUL-terminated
 * (one byte past *len). A symbolic link owned by root or us is followed,
 * as Slurm follows it: the packages' plugstack line is meant to be linked
 * into plugstack.conf.d (doc/admin.md); its target must pass the same
 * rule. A link someone else owns is refused. */
static int read_conf(const char *path, uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	const struct bot_open_rule rule = { "configuration file", CONF_MAX, 0, 1, geteuid(), 1, 1 };
	char dir[PATH_MAX], target[PATH_MAX];
	const char *slash;
	struct stat lst;
	uint8_t *text;
	int dfd, rc;

	if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		if (lst.st_uid != 0 && lst.st_uid != geteuid())
			return bot_log_errf(err, errlen, "%s: a symbolic link owned by uid %u "
					    "(want root's or uid %u's)", path,
					    (unsigned)lst.st_uid, (unsigned)geteuid());
		if (!realpath(path, target))
			return bot_log_errf(err, errlen, "%s: a symbolic link to nothing readable: "
					    "%s", path, strerror(errno));
		path = target;
	}
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return bot_log_errf(err, errlen, "%s: not an absolute path", path);
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return bot_log_errf(err, errlen, "%s: %s", dir[0] ? dir : "/", strerror(errno));
	rc = bot_read_at(dfd, slash + 1, path, &rule, buf, len, err, errlen);
	close(dfd);
	if (rc < 0)
		return rc;
	/* one more byte: the text is read NUL-terminated */
	if (!(text = realloc(*buf, *len + 1))) {
		free(*buf);
		*buf = NULL;
		return bot_log_errf(err, errlen, "%s: out of memory", path);
	}
	text[*len] = 0;
	*buf = text;
	return 0;
}

/* Split s at blanks into at most max words (in place); the count. */
static int split(char *s, char **w, int max)
{
	int n = 0;

	for (char *t = strtok(s, " \t\r"); t && n < max; t = strtok(NULL, " \t\r"))
		w[n++] = t;
	return n;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static void read_plugstack(struct doc *d, const char *path, int depth);

static void include(struct doc *d, const char *where, const char *pattern, int depth)
{
	glob_t g;
	int rc;

	if (pattern[0] != '/') {
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: include %s: not an absolute path",
		    where, pattern);
		return;
	}
	rc = glob(pattern, GLOB_ERR, NULL, &g);
	if (rc == GLOB_NOMATCH)
		return;		/* Slurm reads nothing for it either */
	if (rc != 0) {
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: include %s: cannot list it", where,
		    pattern);
		return;
	}
	for (size_t i = 0; i < g.gl_pathc; i++)
		read_plugstack(d, g.gl_pathv[i], depth + 1);
	globfree(&g);
}

static void scan_plugstack(struct doc *d, const char *path, char *text, int depth);

/* One plugstack.conf (or a file it includes): our lines into d->lines. */
static void read_plugstack(struct doc *d, const char *path, int depth)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[PATH_MAX + 256];

	if (depth > CONF_DEPTH_MAX || d->nfiles >= CONF_FILES_MAX) {
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: more than %d files or %d levels of "
		    "include lines (a loop?)", path, CONF_FILES_MAX, CONF_DEPTH_MAX);
		return;
	}
	for (int i = 0; i < d->nfiles; i++)
		if (!strcmp(d->seen[i], path))
			return;
	snprintf(d->seen[d->nfiles++], PATH_MAX, "%s", path);
	if (read_conf(path, &buf, &len, err, sizeof(err)) < 0) {
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s", err);
		return;
	}
	if (memchr(buf, 0, len)) {
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: holds a NUL byte: not a text file",
		    path);
		free(buf);
		return;
	}
	scan_plugstack(d, path, (char *)buf, depth);
	free(buf);
}

/* The lines of one plugstack.conf's text (NUL-terminated, cut up here). */
static void scan_plugstack(struct doc *d, const char *path, char *text, int depth)
{
	unsigned lineno = 0;

	for (char *line = text, *next; line; line = next) {
		char *w[BOT_DOCTOR_ARGS_MAX + 2], where[PATH_MAX + 32];
		int n;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		line[strcspn(line, "#")] = 0;
		n = split(line, w, BOT_DOCTOR_ARGS_MAX + 2);
		if (n == 0)
			continue;
		snprintf(where, sizeof(where), "%s:%u", path, lineno);
		if (!strcmp(w[0], "include")) {
			if (n == 2 && d->follow)
				include(d, where, w[1], depth);
			else if (n == 2)
				say(d, "plugstack", BOT_DOCTOR_SKIP, "%s: include %s not followed",
				    where, w[1]);
			else
				say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: include wants one "
				    "pattern", where);
			continue;
		}
		if (n < 2 || strcmp(base_name(w[1]), PLUGIN_SO))
			continue;	/* another plugin's line */
		if (d->nlines < (int)(sizeof(d->lines) / sizeof(d->lines[0]))) {
			struct line *l = &d->lines[d->nlines];

			snprintf(l->where, sizeof(l->where), "%s", where);
			snprintf(l->mode, sizeof(l->mode), "%s", w[0]);
			snprintf(l->path, sizeof(l->path), "%s", w[1]);
			l->nwords = 0;
			for (int i = 2; i < n && i - 2 < BOT_DOCTOR_ARGS_MAX; i++)
				if ((l->words[l->nwords] = strdup(w[i])))
					l->nwords++;
			if (l->nwords < n - 2 && l->nwords < BOT_DOCTOR_ARGS_MAX)
				say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: out of memory", where);
			if (n - 2 > BOT_DOCTOR_ARGS_MAX)
				say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: more than %d arguments",
				    where, BOT_DOCTOR_ARGS_MAX);
		}
		d->nlines++;
	}
}

/* plugstack.conf.d/NAME.conf beside plugstack.conf that name the plugin but
 * were never read (no include line reaches them): Slurm ignores them. */
static void unread_dropins(struct doc *d)
{
	char pat[PATH_MAX];
	glob_t g;

	if (snprintf(pat, sizeof(pat), "%s.d/*.conf", d->o->plugstack) >= (int)sizeof(pat) ||
	    glob(pat, 0, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		uint8_t *buf = NULL;
		size_t len = 0;
		char err[64];
		int read = 0;

		for (int j = 0; j < d->nfiles; j++)
			read |= !strcmp(d->seen[j], g.gl_pathv[i]);
		if (read || read_conf(g.gl_pathv[i], &buf, &len, err, sizeof(err)) < 0)
			continue;
		if (memmem(buf, len, PLUGIN_SO, strlen(PLUGIN_SO)))
			say(d, "plugstack", BOT_DOCTOR_WARN, "%s names %s, but %s does not include "
			    "it: Slurm does not read it", g.gl_pathv[i], PLUGIN_SO,
			    d->o->plugstack);
		free(buf);
	}
	globfree(&g);
}

/* ---- the libraries a shared object needs --------------------------------- */

#define LDCACHE "/etc/ld.so.cache"
#define LDCACHE_MAX (16u << 20)
#define LDCACHE_OLD "ld.so-1.7.0"
#define LDCACHE_NEW "glibc-ld.so.cache1.1"
#define LDCACHE_HDR 48		/* the new format's header */
#define LDCACHE_ENTRY 24	/* flags, key, value, osversion, hwcap */
/* The loader's trusted directories (glibc's system search path on Debian's
 * multiarch and on RPM-based hosts); a library is taken only when it is a
 * shared object for this machine, so a directory of another's is harmless. */
#define SYSTEM_LIB_DIRS "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:" \
	"/lib/aarch64-linux-gnu:/usr/lib/aarch64-linux-gnu:/lib64:/usr/lib64:/lib:/usr/lib"

/* The NUL-terminated string at off of buf (len bytes), at most PATH_MAX
 * bytes long, or NULL. (Unbounded, a hostile cache without NULs made every
 * entry scan to the end: quadratic, minutes for 8 MiB.) */
static const char *cache_str(const uint8_t *buf, size_t len, uint64_t off)
{
	if (off >= len || !memchr(buf + off, 0, len - off < PATH_MAX ? len - off : PATH_MAX))
		return NULL;
	return (const char *)buf + off;
}

int bot_doctor_ldcache(const uint8_t *buf, size_t len, const char *name,
		       int (*fn)(void *arg, const char *path), void *arg)
{
	size_t hdr = 0, n = 0;
	uint32_t nlibs;

	if (len >= 16 && !memcmp(buf, LDCACHE_OLD, strlen(LDCACHE_OLD))) {
		/* the old format first, the new one after it, 8-byte aligned */
		uint64_t old = (uint64_t)bot_le_get32(buf + 12) * 12 + 16;

		hdr = (size_t)((old + 7) & ~7ull);
		if (old > len || hdr > len)
			return -1;
	}
	if (len - hdr < LDCACHE_HDR || memcmp(buf + hdr, LDCACHE_NEW, strlen(LDCACHE_NEW)))
		return -1;
	nlibs = bot_le_get32(buf + hdr + 20);
	if ((uint64_t)nlibs * LDCACHE_ENTRY > len - hdr - LDCACHE_HDR)
		return -1;
	for (uint32_t i = 0; i < nlibs; i++) {
		const uint8_t *e = buf + hdr + LDCACHE_HDR + (size_t)i * LDCACHE_ENTRY;
		/* the new format's strings: offsets from its header */
		const char *key = cache_str(buf, len, hdr + (uint64_t)bot_le_get32(e + 4));
		const char *value = cache_str(buf, len, hdr + (uint64_t)bot_le_get32(e + 8));

		if (!key || !value || strcmp(key, name) || value[0] != '/')
			continue;
		n++;
		if (fn(arg, value))
			break;
	}
	return (int)(n > INT_MAX ? INT_MAX : n);
}

/* path, links followed as the loader follows them, opened for reading
 * (any owner; not a FIFO or device): the fd with *st, its real path into
 * real (PATH_MAX bytes), or -1 with why. */
static int open_lib(const char *path, char *real, struct stat *st, char *why, size_t whylen)
{
	const struct bot_open_rule rule = { "library", BOT_ELF_MAX_FILE, 0, 0, 0, 0, 0 };
	char dir[PATH_MAX], err[PATH_MAX + 256];
	int fd, dfd;

	if (!realpath(path, real))
		return bot_log_errf(why, whylen, "%s", strerror(errno));
	snprintf(dir, sizeof(dir), "%s", real);
	*strrchr(dir, '/') = 0;
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return bot_log_errf(why, whylen, "%s: %s", dir, strerror(errno));
	fd = bot_open_at(dfd, base_name(real), real, &rule, st, err, sizeof(err));
	close(dfd);
	if (fd < 0)
		return bot_log_errf(why, whylen, "%s", err);
	return fd;
}

/* Is path a shared object for this machine (as the loader would map it)?
 * 1 yes, 0 no (why says what it is). Only the ELF headers are read. */
static int loadable_lib(const char *path, char *why, size_t whylen)
{
	char real[PATH_MAX];
	struct bot_elf_deps *deps;
	struct bot_elf_src src;
	struct stat st;
	int fd, rc;

	if ((fd = open_lib(path, real, &st, why, whylen)) < 0)
		return 0;
	if (!(deps = malloc(sizeof(*deps)))) {
		close(fd);
		bot_log_errf(why, whylen, "out of memory");
		return 0;
	}
	src.read = bot_elf_fd_read;
	src.arg = &fd;
	src.size = (uint64_t)st.st_size;
	rc = bot_elf_needed(&src, bot_elf_host_machine(), deps, why, whylen) == 0;
	free(deps);
	close(fd);
	return rc;
}

struct lookup {
	char found[PATH_MAX];
	char why[512];		/* the last candidate's refusal */
};

static int try_lib(void *arg, const char *path)
{
	struct lookup *l = arg;
	char why[sizeof(l->why)];

	if (access(path, F_OK) < 0)
		return 0;
	if (loadable_lib(path, why, sizeof(why))) {
		snprintf(l->found, sizeof(l->found), "%s", path);
		return 1;
	}
	bot_log_errf(l->why, sizeof(l->why), "%s: %s", path, why);
	return 0;
}

/* name in the ':'-separated dirs ($ORIGIN is origin): 1 found. */
static int in_dirs(struct lookup *l, const char *dirs, const char *origin, const char *name)
{
	char path[PATH_MAX];

	for (const char *p = dirs; p && *p;) {
		size_t n = strcspn(p, ":");
		int len;

		if (n >= 7 && !strncmp(p, "$ORIGIN", 7))
			len = snprintf(path, sizeof(path), "%s%.*s/%s", origin, (int)(n - 7), p + 7,
				       name);
		else if (n >= 9 && !strncmp(p, "${ORIGIN}", 9))
			len = snprintf(path, sizeof(path), "%s%.*s/%s", origin, (int)(n - 9), p + 9,
				       name);
		else
			len = snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, name);
		if (n && len > 0 && (size_t)len < sizeof(path) && try_lib(l, path))
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

/* Do the DT_NEEDED libraries of the file open at fd (path, as the loader is
 * given it: $ORIGIN is its directory; size bytes) resolve here, as the
 * dynamic loader looks them up: DT_RUNPATH (else DT_RPATH),
 * /etc/ld.so.cache, the system directories? One verdict under
 * check; what fails is said with consequence (what a missing library
 * means for this file). Their own dependencies are not followed. */
static void check_needed(struct doc *d, const char *check, int fd, uint64_t size,
			 const char *path, const char *consequence)
{
	const struct bot_open_rule rule = { "loader cache", LDCACHE_MAX, 0, 1, 0, 1, 0 };
	struct bot_elf_src src = { bot_elf_fd_read, &fd, size };
	struct bot_elf_deps *deps = malloc(sizeof(*deps));
	struct lookup *l = malloc(sizeof(*l));
	char why[512], origin[PATH_MAX], err[PATH_MAX + 256], names[1024] = "";
	uint8_t *cache = NULL;
	size_t cachelen = 0, used = 0;
	int dfd, missing = 0;

	if (!deps || !l) {
		say(d, check, BOT_DOCTOR_PROBLEM, "%s: out of memory", path);
		goto out;
	}
	if (bot_elf_needed(&src, bot_elf_host_machine(), deps, why, sizeof(why)) < 0) {
		say(d, check, BOT_DOCTOR_PROBLEM, "%s: its needed libraries: %s", path, why);
		goto out;
	}
	snprintf(origin, sizeof(origin), "%s", path);
	*strrchr(origin, '/') = 0;
	if ((dfd = open("/etc", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		if (bot_read_at(dfd, "ld.so.cache", LDCACHE, &rule, &cache, &cachelen, err,
				sizeof(err)) < 0) {
			cache = NULL;
			cachelen = 0;
		}
		close(dfd);
	}
	for (size_t i = 0; i < deps->n; i++) {
		const char *name = deps->needed[i];
		int found;

		l->found[0] = l->why[0] = 0;
		if (strchr(name, '/'))
			found = try_lib(l, name);
		else
			found = in_dirs(l, deps->runpath, origin, name) ||
				(cache && bot_doctor_ldcache(cache, cachelen, name, try_lib, l) > 0 &&
				 l->found[0]) ||
				in_dirs(l, SYSTEM_LIB_DIRS, origin, name);
		if (!found) {
			missing++;
			say(d, check, BOT_DOCTOR_PROBLEM, "%s needs %s, which is not found%s%s%s "
			    "(looked in %s%s" LDCACHE " and the system directories): %s", path,
			    name, l->why[0] ? " (" : "", l->why, l->why[0] ? ")" : "",
			    deps->runpath[0] ? deps->runpath : "", deps->runpath[0] ? ", " : "",
			    consequence);
		} else if (used < sizeof(names)) {
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 used ? " " : "", name);
		}
	}
	if (!missing)
		say(d, check, BOT_DOCTOR_OK, "%s: its %zu needed libraries load here (%s)", path,
		    deps->n, names);
out:
	free(cache);
	free(deps);
	free(l);
}

/* check_needed on the file at path. */
static void check_lib_needed(struct doc *d, const char *check, const char *path,
			     const char *consequence)
{
	char real[PATH_MAX], why[PATH_MAX + 512];
	struct stat st;
	int fd = open_lib(path, real, &st, why, sizeof(why));

	if (fd < 0) {
		say(d, check, BOT_DOCTOR_PROBLEM, "%s: %s", path, why);
		return;
	}
	check_needed(d, check, fd, (uint64_t)st.st_size, path, consequence);
	close(fd);
}

/* ---- the plugin file ------------------------------------------------- */

/* PluginDir= of the slurm.conf beside plugstack.conf into out ("" when
 * there is none, or no such line). */
static void slurm_plugin_dir(const char *plugstack, char *out, size_t len)
{
	char conf[PATH_MAX], err[64];
	const char *slash = strrchr(plugstack, '/');
	uint8_t *buf = NULL;
	size_t n = 0;

	out[0] = 0;
	if (!slash || snprintf(conf, sizeof(conf), "%.*s/slurm.conf", (int)(slash - plugstack),
			       plugstack) >= (int)sizeof(conf) ||
	    read_conf(conf, &buf, &n, err, sizeof(err)) < 0)
		return;
	for (char *line = (char *)buf, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		line += strspn(line, " \t");
		if (!strncasecmp(line, "PluginDir=", 10))
			snprintf(out, len, "%.*s", (int)strcspn(line + 10, " \t\r#"), line + 10);
	}
	free(buf);
}

/* A relative plugin path as Slurm finds it: in PluginDir's directories
 * (--plugin-dir, else slurm.conf's PluginDir=, else the usual places). */
static int find_plugin(const struct doc *d, const char *name, char *out, size_t len)
{
	char dirs[PATH_MAX];
	const char *p = d->o->plugin_dir;

	if (!p && name[0] != '/') {
		slurm_plugin_dir(d->o->plugstack, dirs, sizeof(dirs));
		p = dirs[0] ? dirs : d->o->plugin_dir_default;
	}

	if (name[0] == '/')
		return snprintf(out, len, "%s", name) < (int)len ? 0 : -1;
	while (p && *p) {
		size_t n = strcspn(p, ":");

		if (n && (size_t)snprintf(out, len, "%.*s/%s", (int)n, p, name) < len &&
		    access(out, F_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	return -1;
}

static void check_plugin(struct doc *d, const struct line *l)
{
	const struct bot_open_rule rule = { "SPANK plugin", BOT_ELF_MAX_FILE, 0, 1, geteuid(), 1, 0 };
	char path[PATH_MAX], real[PATH_MAX], dir[PATH_MAX], err[PATH_MAX + 256], why[512];
	char type[16] = "", name[32] = "";
	uint8_t ver[4];
	size_t got = 0;
	struct bot_elf_src src;
	struct stat st;
	uint32_t v;
	int fd, dfd, ok;

	if (!strcmp(l->mode, "required"))
		say(d, "plugstack", BOT_DOCTOR_WARN, "%s: loaded 'required': a plugin that fails "
		    "to load stops slurmd; nccl-bot is meant to be 'optional'", l->where);
	else if (strcmp(l->mode, "optional"))
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: '%s': want optional or required",
		    l->where, l->mode);
	if (find_plugin(d, l->path, path, sizeof(path)) < 0) {
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s: %s: not found in PluginDir (%s)",
		    l->where, l->path, d->o->plugin_dir ? d->o->plugin_dir : "slurm.conf's, or "
		    "the usual places");
		return;
	}
	if (!realpath(path, real)) {
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s: %s", path, strerror(errno));
		return;
	}
	snprintf(dir, sizeof(dir), "%s", real);
	*strrchr(dir, '/') = 0;
	dfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s: %s", dir, strerror(errno));
		return;
	}
	fd = bot_open_at(dfd, base_name(real), path, &rule, &st, err, sizeof(err));
	close(dfd);
	if (fd < 0) {
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s", err);
		return;
	}
	if (st.st_mode & 022)
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s: writable by group or others (mode %03o): "
		    "slurmstepd loads it as root", path, (unsigned)(st.st_mode & 0777));
	src.read = bot_elf_fd_read;
	src.arg = &fd;
	src.size = (uint64_t)st.st_size;
	ok = bot_elf_object(&src, bot_elf_host_machine(), "plugin_type", type, sizeof(type) - 1,
			    &got, why, sizeof(why)) == 0;
	if (ok)
		type[got] = 0;
	if (ok && bot_elf_object(&src, bot_elf_host_machine(), "plugin_name", name,
				 sizeof(name) - 1, &got, why, sizeof(why)) == 0)
		name[got] = 0;
	if (ok && bot_elf_object(&src, bot_elf_host_machine(), "plugin_version", ver,
				 sizeof(ver), &got, why, sizeof(why)) < 0)
		ok = 0;
	if (!ok || got != sizeof(ver)) {
		close(fd);
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s: not a Slurm plugin: %s", path,
		    ok ? "plugin_version is not 4 bytes" : why);
		return;
	}
	check_needed(d, "plugin libraries", fd, (uint64_t)st.st_size, path,
		     "slurmstepd cannot load the optional plugin here, and this node's tasks "
		     "would run without nccl-bot while other nodes' run with it");
	close(fd);
	if (strcmp(type, "spank") || strcmp(name, "nccl_bot")) {
		say(d, "plugin", BOT_DOCTOR_PROBLEM, "%s: a Slurm plugin of type '%s' named '%s', "
		    "not the SPANK plugin nccl_bot", path, type, name);
		return;
	}
	v = (uint32_t)ver[0] | (uint32_t)ver[1] << 8 | (uint32_t)ver[2] << 16 |
	    (uint32_t)ver[3] << 24;
	if (!d->o->slurm_version) {
		say(d, "plugin version", BOT_DOCTOR_WARN, "%s: built for Slurm %u.%02u; this Slurm's "
		    "version is not known (no slurmd -V; --slurm-version gives it)", path,
		    v >> 16 & 255, v >> 8 & 255);
	} else if ((v >> 8) != (d->o->slurm_version >> 8)) {
		say(d, "plugin version", BOT_DOCTOR_PROBLEM, "%s: built for Slurm %u.%02u, this is "
		    "Slurm %u.%02u (%s): Slurm refuses to load it; install the package built for "
		    "%u.%02u", path, v >> 16 & 255, v >> 8 & 255, d->o->slurm_version >> 16 & 255,
		    d->o->slurm_version >> 8 & 255, d->o->slurm_version_from ?
		    d->o->slurm_version_from : "given", d->o->slurm_version >> 16 & 255,
		    d->o->slurm_version >> 8 & 255);
	} else {
		say(d, "plugin version", BOT_DOCTOR_OK, "%s: built for Slurm %u.%02u.%u, this is "
		    "%u.%02u.%u", path, v >> 16 & 255, v >> 8 & 255, v & 255,
		    d->o->slurm_version >> 16 & 255, d->o->slurm_version >> 8 & 255,
		    d->o->slurm_version & 255);
	}
}

/* ---- what the arguments name ------------------------------------------ */

static void check_ranklib(struct doc *d, const struct bot_spank_args *a)
{
	static const char *const names[] = { BOT_SPANK_RANK_SO, "libnccl-profiler-bot.so" };
	struct bot_ranklib rl, tuner;
	char path[PATH_MAX + 64], err[PATH_MAX + 512];

	memset(&tuner, 0, sizeof(tuner));
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", a->lib_prefix, names[i]);
		if (i == 1 && access(path, F_OK) < 0 && errno == ENOENT)
			break;	/* optional: the plugin names the tuner for both */
		if (bot_ranklib_check(path, &rl, err, sizeof(err)) < 0) {
			say(d, "rank library", BOT_DOCTOR_PROBLEM, "lib_prefix=%s: %s", a->lib_prefix,
			    err);
			return;
		}
		if (!rl.profiler) {
			say(d, "rank library", BOT_DOCTOR_PROBLEM, "%s: a tuner plugin without the "
			    "profiler symbols: steps would decide but never measure (another build?)",
			    path);
			return;
		}
		if (i == 0)
			tuner = rl;
		else if (strcmp(rl.real, tuner.real))
			say(d, "rank library", BOT_DOCTOR_WARN, "%s is %s, not the tuner %s: two "
			    "builds side by side?", path, rl.real, tuner.real);
	}
	say(d, "rank library", BOT_DOCTOR_OK, "%s/%s: a tuner and profiler plugin",
	    a->lib_prefix, BOT_SPANK_RANK_SO);
	check_lib_needed(d, "rank library", tuner.path, "NCCL cannot load the tuner here: the "
			 "step's ranks on this node would fail or run without it");
}

/* The ranks run as the job's user and reach their spool directory through
 * spool_dir: others must be able to search it (the plugin makes it 0711). */
#define SPOOL_UNSEARCHABLE "spool_dir=%s: mode %03o: others cannot search it, so the job's " \
	"ranks (its user) cannot reach their spool directory and measure nothing (the " \
	"plugin makes it 0711)"

/* path on a writable tmpfs, made by root alone (or to be made there). */
static void check_spool(struct doc *d, const char *path)
{
	char err[PATH_MAX + 256], parent[PATH_MAX];
	const char *on = path;
	struct statfs fs;
	struct statvfs vfs;
	int fd;

	{
		struct stat lst;

		/* a link, dangling or not, is refused by the plugin (its
		 * O_NOFOLLOW open), never "made later" */
		if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
			say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir %s: a symbolic link (refused)",
			    path);
			return;
		}
	}
	if (access(path, F_OK) < 0) {
		if (errno != ENOENT) {
			/* not "not there yet": a parent this user cannot search
			 * (the job's ranks, its user, could not reach their
			 * spool directory either), a loop, a name too long */
			say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir=%s: %s (as uid %u)", path,
			    strerror(errno), (unsigned)geteuid());
			return;
		}
		snprintf(parent, sizeof(parent), "%s", path);
		*strrchr(parent, '/') = 0;
		on = parent[0] ? parent : "/";
	}
	if (statfs(on, &fs) < 0 || statvfs(on, &vfs) < 0) {
		say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir=%s: %s: %s", path, on, strerror(errno));
		return;
	}
	if ((unsigned long)fs.f_type != TMPFS_MAGIC_NUMBER) {
		say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir=%s: %s is not on a tmpfs (is the "
		    "tmpfs mounted?): spool files would go to disk", path, on);
		return;
	}
	if (vfs.f_flag & ST_RDONLY) {
		say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir=%s: %s is mounted read-only", path,
		    on);
		return;
	}
	if (on != path) {
		say(d, "spool", BOT_DOCTOR_OK, "spool_dir=%s: not there yet; made on a tmpfs at the "
		    "first step that measures", path);
		return;
	}
	if (geteuid() != 0) {
		/* the plugin makes it as root, 0711: a user cannot open it,
		 * and should not; judged from its inode, as the plugin would */
		struct stat st;

		if (lstat(path, &st) < 0)
			say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir=%s: %s", path, strerror(errno));
		else if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
			say(d, "spool", BOT_DOCTOR_PROBLEM, "spool_dir=%s: %s", path,
			    S_ISLNK(st.st_mode) ? "a symbolic link (refused)" :
			    !S_ISDIR(st.st_mode) ? "not a directory" : "not a directory of root "
			    "writable by it alone (the plugin refuses it: someone else made it?)");
		else if (!(st.st_mode & S_IXOTH))
			say(d, "spool", BOT_DOCTOR_PROBLEM, SPOOL_UNSEARCHABLE, path,
			    (unsigned)(st.st_mode & 0777));
		else
			say(d, "spool", BOT_DOCTOR_OK, "spool_dir=%s: a tmpfs, root's and writable by "
			    "it alone (judged from its inode: doctor runs as uid %u)", path,
			    (unsigned)geteuid());
		return;
	}
	fd = bot_spank_spool_base(path, 0, err, sizeof(err));
	if (fd < 0) {
		say(d, "spool", BOT_DOCTOR_PROBLEM, "%s", err);
		return;
	}
	{
		struct stat st;

		if (fstat(fd, &st) == 0 && !(st.st_mode & S_IXOTH)) {
			close(fd);
			say(d, "spool", BOT_DOCTOR_PROBLEM, SPOOL_UNSEARCHABLE, path,
			    (unsigned)(st.st_mode & 0777));
			return;
		}
	}
	close(fd);
	say(d, "spool", BOT_DOCTOR_OK, "spool_dir=%s: a tmpfs, writable by uid %u alone", path,
	    (unsigned)geteuid());
}

/* A directory root writes into (outbox_dir=): there, not a link, ours. */
static int private_dir(struct doc *d, const char *check, const char *arg, const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		say(d, check, BOT_DOCTOR_PROBLEM, "%s=%s: %s", arg, path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		say(d, check, BOT_DOCTOR_PROBLEM, "%s=%s: %s, not a directory", arg, path,
		    S_ISLNK(st.st_mode) ? "a symbolic link" : "something else");
		return -1;
	}
	/* the plugin writes it as root, whoever runs doctor (judged from its
	 * inode, as the spool directory is) */
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		say(d, check, BOT_DOCTOR_PROBLEM, "%s=%s: owned by uid %u, mode %03o: want root, "
		    "writable by it alone (the plugin writes it as root)", arg, path,
		    (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		return -1;
	}
	say(d, check, BOT_DOCTOR_OK, "%s=%s", arg, path);
	return 0;
}

static void check_helper(struct doc *d, const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		say(d, "harvest helper", BOT_DOCTOR_PROBLEM, "harvest_helper=%s: %s: steps' "
		    "measurements are removed, not harvested", path, strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR) || st.st_uid != 0 ||
	    (st.st_mode & 022)) {
		say(d, "harvest helper", BOT_DOCTOR_PROBLEM, "harvest_helper=%s: want an executable "
		    "file owned by root, writable by root alone (uid %u, mode %03o)", path,
		    (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
		return;
	}
	say(d, "harvest helper", BOT_DOCTOR_OK, "harvest_helper=%s", path);
}

/* The files read where the step is decided (srun): not on a node. */
static void check_launch_side(struct doc *d, const struct bot_spank_args *a)
{
	struct stat st;
	int state_named = a->state_dir[0] != 0;	/* here or in config= */

	if (a->state_dir[0]) {
		if (stat(a->state_dir, &st) < 0 || !S_ISDIR(st.st_mode))
			say(d, "state", BOT_DOCTOR_PROBLEM, "state_dir=%s: %s", a->state_dir,
			    access(a->state_dir, F_OK) ? strerror(errno) : "not a directory");
		else
			say(d, "state", BOT_DOCTOR_OK, "state_dir=%s", a->state_dir);
	}
	/* read as the plugin reads them: a file that does not parse costs
	 * every step its learned state (the prior, a debug line), so it is a
	 * problem here, named as the reader names it */
	if (a->config[0]) {
		struct bot_siteconf c;
		char err[BOT_SITECONF_ERR_MAX];

		if (bot_siteconf_load(a->config, &c, err, sizeof(err)) < 0) {
			say(d, "config", BOT_DOCTOR_PROBLEM, "config=%s: %s: steps run on the prior",
			    a->config, err);
			state_named = 1;	/* unknown: said above */
		} else {
			say(d, "config", BOT_DOCTOR_OK, "config=%s", a->config);
			if (!a->state_dir[0] && (c.set & (1u << BOT_SITECONF_STATE_DIR))) {
				state_named = 1;
				if (stat(c.state_dir, &st) < 0 || !S_ISDIR(st.st_mode))
					say(d, "state", BOT_DOCTOR_PROBLEM, "state_dir %s (%s): %s",
					    c.state_dir, a->config,
					    access(c.state_dir, F_OK) ? strerror(errno) :
					    "not a directory");
				else
					say(d, "state", BOT_DOCTOR_OK, "state_dir %s (%s)", c.state_dir,
					    a->config);
			}
			/* ship moves the deltas from the site configuration's
			 * outbox_dir; the harvest writes them into outbox_dir= */
			if ((c.set & (1u << BOT_SITECONF_OUTBOX_DIR)) && c.outbox_dir[0] &&
			    strcmp(c.outbox_dir, a->outbox_dir))
				say(d, "outbox", BOT_DOCTOR_PROBLEM, "%s has outbox_dir %s, which ship "
				    "empties, but the harvest writes into %s%s: deltas would never be "
				    "shipped", a->config, c.outbox_dir,
				    a->outbox_dir[0] ? "outbox_dir=" : "no outbox_dir= (nowhere)",
				    a->outbox_dir);
		}
		bot_siteconf_free(&c);
	}
	/* mode=on without learned state: a working setup whose policy
	 * never sees what earlier jobs measured; worth a look (a first
	 * install may mean it), not a problem (shadow mode decides nothing) */
	if (!state_named && a->mode == BOT_SPANK_MODE_ON)
		say(d, "state", BOT_DOCTOR_WARN, "mode=on, no state_dir= (nor one in config=): "
		    "every step plans from NCCL's cost model (the prior) and nothing learned "
		    "crosses jobs");
	if (a->fabric_map[0] || a->config[0]) {
		struct bot_fabricmap m;
		char err[BOT_SITECONF_ERR_MAX + 512];

		if (bot_fabricmap_load_site(a->fabric_map, a->config, &m, err, sizeof(err)) < 0) {
			say(d, "fabric map", BOT_DOCTOR_PROBLEM, "%s: steps run on the prior", err);
		} else if (a->fabric_map[0]) {
			say(d, "fabric map", BOT_DOCTOR_OK, "fabric_map=%s: %zu node(s)",
			    a->fabric_map, m.n);
		}
		bot_fabricmap_free(&m);
	}
	if (a->kill_switch[0] && lstat(a->kill_switch, &st) == 0)
		say(d, "kill switch", BOT_DOCTOR_WARN, "kill_switch=%s exists: new steps run "
		    "without nccl-bot", a->kill_switch);
}

/* ---- containers --------------------------------------------------------- */

/* Does a mount of src cover path (src is path or a directory above it)? */
static int covers(const char *src, const char *path)
{
	size_t n = strlen(src);

	while (n > 1 && src[n - 1] == '/')
		n--;
	return !strncmp(src, path, n) && (path[n] == 0 || path[n] == '/' || n == 1);
}

/* What the mounts (sources, one per line) in buf cover of lib and spool:
 * bit 0 lib, bit 1 spool. fstab: the first word; apptainer.conf: the
 * value of "bind path = SRC[:DST]". */
static unsigned mounts_cover(char *buf, int apptainer, const char *lib, const char *spool)
{
	unsigned got = 0;

	for (char *line = buf, *next; line; line = next) {
		char src[PATH_MAX], *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		line[strcspn(line, "#")] = 0;
		p = line + strspn(line, " \t");
		if (apptainer) {
			if (strncmp(p, "bind path", 9))
				continue;
			p += 9 + strspn(p + 9, " \t");
			if (*p++ != '=')
				continue;
			p += strspn(p, " \t");
		}
		snprintf(src, sizeof(src), "%.*s", (int)strcspn(p, apptainer ? ": \t\r" : " \t\r"),
			 p);
		if (src[0] != '/')
			continue;
		if (covers(src, lib))
			got |= 1;
		if (covers(src, spool))
			got |= 2;
	}
	return got;
}

static void report_cover(struct doc *d, const char *check, const char *where, unsigned got,
			 const char *lib, const char *spool)
{
	if (got == 3)
		say(d, check, BOT_DOCTOR_OK, "%s binds %s and %s", where, lib, spool);
	else
		say(d, check, BOT_DOCTOR_PROBLEM, "%s binds no %s%s%s: containers' ranks would not "
		    "find it (contrib/ has the snippets)", where, got & 1 ? "" : lib,
		    got ? "" : " and no ", got & 2 ? "" : spool);
}

static void check_enroot(struct doc *d, const char *lib, const char *spool)
{
	const char *dir = d->o->enroot_dir ? d->o->enroot_dir : "/etc/enroot";
	char pat[PATH_MAX], err[PATH_MAX + 256];
	unsigned got = 0;
	int hook = 0;
	struct stat st;
	glob_t g;

	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		say(d, "enroot", BOT_DOCTOR_SKIP, "%s: no enroot configuration", dir);
		return;
	}
	snprintf(pat, sizeof(pat), "%s/mounts.d/*.fstab", dir);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			uint8_t *buf = NULL;
			size_t len = 0;

			if (read_conf(g.gl_pathv[i], &buf, &len, err, sizeof(err)) < 0) {
				say(d, "enroot", BOT_DOCTOR_PROBLEM, "%s", err);
				continue;
			}
			got |= mounts_cover((char *)buf, 0, lib, spool);
			free(buf);
		}
		globfree(&g);
	}
	snprintf(pat, sizeof(pat), "%s/mounts.d", dir);
	report_cover(d, "enroot", pat, got, lib, spool);
	if ((got & 2) && access(spool, F_OK) < 0)
		say(d, "enroot", BOT_DOCTOR_PROBLEM, "spool_dir=%s does not exist: enroot refuses "
		    "to start a container whose mount source is missing (make it at boot: "
		    "contrib/tmpfiles.d)", spool);
	snprintf(pat, sizeof(pat), "%s/hooks.d/*nccl-bot*.sh", dir);
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			hook |= stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode) &&
				(st.st_mode & S_IXUSR);
		globfree(&g);
	}
	if (hook)
		say(d, "enroot", BOT_DOCTOR_OK, "%s/hooks.d: nccl-bot's hook", dir);
	else
		say(d, "enroot", BOT_DOCTOR_PROBLEM, "%s/hooks.d: no executable *nccl-bot*.sh: a "
		    "container's environment would lose NCCL_TUNER_PLUGIN and NCCL_BOT_*", dir);
}

static void check_apptainer(struct doc *d, const char *lib, const char *spool)
{
	static const char *const usual[] = { "/etc/apptainer/apptainer.conf",
					     "/etc/singularity/singularity.conf" };
	const char *conf = d->o->apptainer_conf;
	char err[PATH_MAX + 256];
	uint8_t *buf = NULL;
	size_t len = 0;

	for (size_t i = 0; !conf && i < sizeof(usual) / sizeof(usual[0]); i++)
		if (access(usual[i], F_OK) == 0)
			conf = usual[i];
	if (!conf || access(conf, F_OK) < 0) {
		say(d, "apptainer", BOT_DOCTOR_SKIP, "%s: no Apptainer or Singularity configuration",
		    conf ? conf : usual[0]);
		return;
	}
	if (read_conf(conf, &buf, &len, err, sizeof(err)) < 0) {
		say(d, "apptainer", BOT_DOCTOR_PROBLEM, "%s", err);
		return;
	}
	report_cover(d, "apptainer", conf, mounts_cover((char *)buf, 1, lib, spool), lib, spool);
	free(buf);
}

/* ---- the whole -------------------------------------------------------------- */

/* The line's arguments through the plugin's parser into *a (NULL: a
 * local), one at a time so that every bad one is reported (the plugin
 * stops at the first): 0, or -1 (each reported; *a then holds the default
 * of each bad argument and the values of the others). */
static int parse_line(struct doc *d, const struct line *l, struct bot_spank_args *a)
{
	struct bot_spank_args local;
	char err[BOT_SPANK_ERR_MAX];
	int bad = 0;

	if (!a)
		a = &local;
	bot_spank_args_defaults(a, d->o->default_lib_prefix);
	if (d->o->default_helper)
		snprintf(a->harvest_helper, sizeof(a->harvest_helper), "%s", d->o->default_helper);
	for (int i = 0; i < l->nwords; i++)
		if (bot_spank_args_parse(a, 1, &l->words[i], d->o->node, err, sizeof(err)) < 0) {
			say(d, "arguments", BOT_DOCTOR_PROBLEM, "%s: %s", l->where, err);
			bad++;
		}
	if (bad) {
		say(d, "arguments", BOT_DOCTOR_WARN, "%s: %d of %d arguments do not parse (nccl-bot "
		    "is off until they do); the checks below use each one's default",
		    l->where, bad, l->nwords);
		return -1;
	}
	say(d, "arguments", BOT_DOCTOR_OK, "%s: %d arguments parse", l->where, l->nwords);
	if (a->enable == BOT_SPANK_ENABLE_OFF) {
		say(d, "arguments", BOT_DOCTOR_WARN, "%s: enable=off: nccl-bot is off; what follows "
		    "is reported, never a problem", l->where);
		d->soft = 1;
	}
	return 0;
}

static void check_line(struct doc *d, const struct line *l)
{
	struct bot_spank_args a;

	check_plugin(d, l);
	parse_line(d, l, &a);	/* a bad argument: the other checks still run */
	check_ranklib(d, &a);
	check_spool(d, a.spool_dir);
	if (a.outbox_dir[0]) {
		private_dir(d, "outbox", "outbox_dir", a.outbox_dir);
		check_helper(d, a.harvest_helper);
	} else {
		say(d, "outbox", BOT_DOCTOR_SKIP, "no outbox_dir=: measurements are not harvested");
	}
	if (!d->o->node_only)
		check_launch_side(d, &a);
	check_enroot(d, a.lib_prefix, a.spool_dir);
	check_apptainer(d, a.lib_prefix, a.spool_dir);
}

static int finish(struct doc *d, const char *plugstack, int files);

int bot_doctor_run(const struct bot_doctor_opts *o, bot_doctor_report_fn fn, void *arg)
{
	struct doc *d = calloc(1, sizeof(*d));

	if (!d) {
		fn(arg, "doctor", BOT_DOCTOR_PROBLEM, "out of memory");
		return 1;
	}
	d->o = o;
	d->fn = fn;
	d->arg = arg;
	d->follow = 1;
	if (!o->plugstack || o->plugstack[0] != '/')
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: not an absolute path",
		    o->plugstack ? o->plugstack : "(none)");
	else
		read_plugstack(d, o->plugstack, 0);
	if (o->plugstack && o->plugstack[0] == '/')
		unread_dropins(d);
	return finish(d, o->plugstack, 1);
}

int bot_doctor_scan(const char *name, const char *text, size_t len, const char *node,
		    bot_doctor_report_fn fn, void *arg)
{
	struct bot_doctor_opts o;
	struct doc *d = calloc(1, sizeof(*d));
	char *copy = malloc(len + 1);

	memset(&o, 0, sizeof(o));
	o.plugstack = name;
	o.node = node;
	o.default_lib_prefix = "/opt/nccl-bot/lib";
	if (!d || !copy) {
		free(d);
		free(copy);
		fn(arg, "doctor", BOT_DOCTOR_PROBLEM, "out of memory");
		return 1;
	}
	d->o = &o;
	d->fn = fn;
	d->arg = arg;
	d->nfiles = 1;
	if (memchr(text, 0, len)) {
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s: holds a NUL byte: not a text file",
		    name);
	} else {
		memcpy(copy, text, len);
		copy[len] = 0;
		scan_plugstack(d, name, copy, 0);
	}
	free(copy);
	return finish(d, name, 0);
}

unsigned bot_doctor_binds(const char *text, size_t len, int apptainer, const char *lib,
			  const char *spool)
{
	char *copy = malloc(len + 1);
	unsigned got;

	if (!copy)
		return 0;
	memcpy(copy, text, len);
	copy[len] = 0;
	got = mounts_cover(copy, apptainer, lib, spool);
	free(copy);
	return got;
}

/* The verdict on the lines found; with files, the checks of the one line.
 * Frees d; the number of problems. */
static int finish(struct doc *d, const char *plugstack, int files)
{
	int problems;

	if (d->nlines == 0 && d->nfiles > 0 && !d->problems)
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s (and what it includes) names no %s: "
		    "nccl-bot is not installed in Slurm here", plugstack, PLUGIN_SO);
	else if (d->nlines > 1)
		say(d, "plugstack", BOT_DOCTOR_PROBLEM, "%s is named %d times (%s and %s): Slurm "
		    "would load it more than once", PLUGIN_SO, d->nlines, d->lines[0].where,
		    d->lines[1].where);
	else if (d->nlines == 1)
		say(d, "plugstack", BOT_DOCTOR_OK, "%s: %s %s", d->lines[0].where, d->lines[0].mode,
		    d->lines[0].path);
	if (d->nlines == 1 && files)
		check_line(d, &d->lines[0]);
	else if (d->nlines == 1)
		parse_line(d, &d->lines[0], NULL);
	for (int i = 0; i < d->nlines && i < (int)(sizeof(d->lines) / sizeof(d->lines[0])); i++)
		for (int j = 0; j < d->lines[i].nwords; j++)
			free(d->lines[i].words[j]);
	problems = d->problems;
	free(d);
	return problems;
}
