/*
 * fabricdir.c - a fabric's directory, opened safely (learn/fabricdir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/readall.h"
#include "common/state.h"
#include "learn/fabricdir.h"
#include "learn/log.h"

int bot_fabricdir_open(const char *dir, const char *fabric, int create,
		       char fdir_out[BOT_FABRIC_PATH_MAX], char *err, size_t errlen)
{
	char fdir[BOT_FABRIC_PATH_MAX], shown[BOT_FABRIC_PATH_MAX];
	const char *hint = create ? " (create the state directory first)" : "";
	struct stat st;
	uid_t owner;
	gid_t group;
	int dfd, fd, created = 0, e;

	if (err && errlen)
		err[0] = 0;
	if (!bot_state_fabric_ok(fabric))
		return bot_log_errf(err, errlen, "fabric name '%s' is not [a-z0-9][a-z0-9._-]{0,63}", fabric);
	/* the compactor's own directories beside the fabrics (formats.md
	 * section 14): state written there was mixed into the inbox and
	 * skipped by `state verify` (until 2026-12-05) */
	if (create && bot_state_fabric_reserved(fabric))
		return bot_log_errf(err, errlen, "fabric name '%s' is the compactor's %s/%s "
				    "directory (inbox, quarantine and held are not fabric names)",
				    fabric, dir, fabric);
	if ((size_t)snprintf(fdir, sizeof(fdir), "%s/%s", dir, fabric) >= sizeof(fdir))
		return bot_log_errf(err, errlen, "%s%s%s: path too long", dir, bot_path_sep(dir),
				    fabric);
	/* messages (and fdir_out, for the callers' messages) say "state/a",
	 * also for a DIR given as "state/" (what is opened is unchanged) */
	snprintf(shown, sizeof(shown), "%s%s%s", dir, bot_path_sep(dir), fabric);
	if (fdir_out)
		memcpy(fdir_out, shown, sizeof(shown));
	if (stat(dir, &st) < 0)
		return bot_log_errf(err, errlen, "%s: %s%s", dir, strerror(errno), hint);
	if (!S_ISDIR(st.st_mode))
		return bot_log_errf(err, errlen, "%s: not a directory%s", dir, hint);
	/* everything below is relative to the directory opened here, whose
	 * owner the fabric's directory is given to: by path, the owner of a
	 * state directory that root was told of could swap it for a symbolic
	 * link between the stat and the mkdir, and root made the directory
	 * wherever the link pointed and gave it to that user (until
	 * 2026-12-05) */
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);	/* search permission only */
	if (dfd < 0 || fstat(dfd, &st) < 0) {
		e = errno;
		if (dfd >= 0)
			close(dfd);
		return bot_log_errf(err, errlen, "%s: %s%s", dir, strerror(e), hint);
	}
	owner = st.st_uid;
	group = st.st_gid;
	/* DIR holding a `current` itself is a fabric's directory given as the
	 * state directory: a fabric made inside it would be learned into and
	 * read from where no job looks (until 2026-12-04, silently) */
	if (fstatat(dfd, fabric, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT &&
	    fstatat(dfd, "current", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
		close(dfd);
		return bot_log_errf(err, errlen, "%s: holds a fabric's `current` itself: a "
				    "fabric's directory, not the state directory (name its "
				    "parent as the state directory)", dir);
	}
	if (create) {
		if (mkdirat(dfd, fabric, 0755) == 0) {
			created = 1;
		} else if (errno != EEXIST) {
			e = errno;
			close(dfd);
			return bot_log_errf(err, errlen, "%s: %s", shown, strerror(e));
		}
	}
	fd = openat(dfd, fabric, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	e = errno;
	close(dfd);
	errno = e;
	/* mkdir's mode went through the umask: readers need 0755 */
	if (fd >= 0 && created && fchmod(fd, 0755) < 0) {
		e = errno;
		close(fd);
		return bot_log_errf(err, errlen, "%s: cannot make it mode 0755: %s", shown,
				    strerror(e));
	}
	/* root (an admin's `state import` or `state add`) making a fabric in
	 * a state directory the service account owns: the fabric's directory
	 * is the owner's too, else the compactor could never write it (until
	 * 2026-12-05 it was root's, and every later compaction of the fabric
	 * failed with ".lock: Permission denied") */
	if (fd >= 0 && created && geteuid() == 0 && owner != 0 && fchown(fd, owner, group) < 0) {
		e = errno;
		close(fd);
		return bot_log_errf(err, errlen, "%s: cannot give it to the state directory's owner "
				    "(uid %u): %s", shown, (unsigned)owner, strerror(e));
	}
	if (fd >= 0)
		return fd;
	if (errno == ENOENT && !create)
		return -2;
	return bot_log_errf(err, errlen, "%s: %s", shown,
			errno == ENOTDIR || errno == ELOOP ? "not a directory (or a symbolic link)" :
			strerror(errno));
}

int bot_statedir_as_owner(const char *dir, const char *what, char *err, size_t errlen)
{
	struct stat st;
	const struct passwd *pw;
	const char *name;
	char who[96];

	if (err && errlen)
		err[0] = 0;
	if (geteuid() != 0 || stat(dir, &st) < 0 || st.st_uid == 0)
		return 0;
	pw = getpwuid(st.st_uid);
	snprintf(who, sizeof(who), "uid %u%s%s%s", (unsigned)st.st_uid, pw ? " (" : "",
		 pw ? pw->pw_name : "", pw ? ")" : "");
	name = pw ? pw->pw_name : "USER";
	/* ship as the account alone cannot read root's 0750 outbox (the
	 * package's unit keeps CAP_DAC_OVERRIDE for it): runuser was advised
	 * for ship too, and failed with "outbox: Permission denied" (until
	 * 2026-12-05) */
	if (!strcmp(what, "ship"))
		return bot_log_errf(err, errlen, "%s: ship as root into a state directory %s "
				    "owns: the inbox and deltas root made there that account could "
				    "not write or read, and its next ship or compact would fail; run "
				    "it as the owner with CAP_DAC_OVERRIDE for root's outbox, as its "
				    "unit does (systemctl start nccl-bot-ship.service, or setpriv "
				    "--reuid=%s --regid=%u --init-groups --inh-caps=+dac_override "
				    "--ambient-caps=+dac_override -- nccl-bot ship ...)", dir, who,
				    name, (unsigned)st.st_gid);
	return bot_log_errf(err, errlen, "%s: %s as root into a state directory %s owns: "
			    "what root made there (inbox, .lease, .ledger, deltas) that account "
			    "could not write, and its next ship or compact would fail; run it as "
			    "the owner (runuser -u %s -- nccl-bot %s ...)", dir, what, who,
			    name, what);
}
