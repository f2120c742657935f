/*
 * lease.h - the compactor's lease on a state directory (doc/formats.md
 * section 14, "Lease"): one compactor per state directory.
 *
 * An exclusive flock(2) of <state>/.lease, held for the whole run and
 * released by closing its fd, so a holder that dies (kill -9 included)
 * frees it with its process. The file holds "host pid start\n" of the
 * holder (start: unix seconds), for people and for the message a second
 * compactor prints; nothing trusts its content.
 */
#ifndef BOT_LEARN_LEASE_H
#define BOT_LEARN_LEASE_H

#include <stddef.h>

#define BOT_LEASE_FILE ".lease"
#define BOT_LEASE_HOLDER_MAX 192

struct bot_lease {
	int fd;				/* the flock's fd while held; -1 */
	char holder[BOT_LEASE_HOLDER_MAX];	/* busy: "HOST PID" of the holder (escaped) */
};

/*
 * Take the lease of state directory dir (which must exist; .lease is made
 * 0600, never through a link). With wait, blocks while another holds it.
 * Returns 0 (held: release with bot_lease_release), 1 (busy, without wait:
 * l->holder names the holder as its file says, "unknown" when it says
 * nothing readable), or -1 with err.
 */
int bot_lease_take(const char *dir, int wait, struct bot_lease *l, char *err, size_t errlen);
void bot_lease_release(struct bot_lease *l);

#endif
