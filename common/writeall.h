/*
 * writeall.h - writing a whole file so that a reader sees the old one or
 * the new one, never a part: the bytes go to a temporary name created
 * O_EXCL next to the file, are fsynced, and the temporary is renamed onto
 * the name (or, never replacing, beside it), the directory fsynced if
 * asked. Used by the snapshot store (learn/store.c), the harvest's delta
 * writer (learn/harvest.c), the ledger (learn/ledger.c), the metrics
 * textfile (learn/metrics.c) and `state export -o` (tools/cmd_state.c).
 * The counterpart of readall.h.
 */
#ifndef BOT_COMMON_WRITEALL_H
#define BOT_COMMON_WRITEALL_H

#include <stddef.h>
#include <sys/types.h>

/* How bot_write_whole_at writes. */
struct bot_write_rule {
	mode_t mode;		/* the temporary is created with it (through the umask) */
	int chmod;		/* then fchmod()ed to it: the umask undone */
	int no_replace;		/* never replace an existing name (1 returned) */
	int clear_stale;	/* remove a temporary left by a writer that died first */
	int sync_dir;		/* fsync the directory after the rename */
	const char *tmp;	/* the temporary's name; NULL: ".<name>.tmp" */
	/* called with point after the temporary is complete and closed, just
	 * before the rename (a crash test hook, learn/crash.h); NULL: none */
	void (*before_rename)(const char *point);
	const char *point;
};

/*
 * Write len bytes of buf as dirfd/name by rule r; dir names the directory
 * in messages (NULL: the names alone). Returns 0 written, 1 when
 * r->no_replace and the name exists (nothing written), or -1 with the file
 * and the failed step in err ("DIR/.NAME.tmp: cannot fsync: reason",
 * "cannot rename DIR/.NAME.tmp to DIR/NAME: reason", "DIR: fsync: reason").
 * The temporary is removed on every failure.
 */
int bot_write_whole_at(int dirfd, const char *dir, const char *name, const void *buf, size_t len,
		       const struct bot_write_rule *r, char *err, size_t errlen);

#endif
