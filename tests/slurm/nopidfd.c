/*
 * nopidfd.c - run a command as on a kernel without pidfds (Linux < 5.3,
 * RHEL 8's 4.18): a seccomp filter makes pidfd_open and
 * pidfd_send_signal fail with ENOSYS, for the command and everything it
 * starts (test_slurm_report.sh runs slurmd under it, so slurmstepd's
 * harvest takes its no-pidfd path).
 *
 *   nopidfd PROGRAM [ARG...]
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif

int main(int argc, char **argv)
{
	struct sock_filter prog[] = {
		/* the syscall number; either pidfd call answers ENOSYS */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_open, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pidfd_send_signal, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
	};
	struct sock_fprog fp = { (unsigned short)(sizeof(prog) / sizeof(prog[0])), prog };

	if (argc < 2) {
		fprintf(stderr, "usage: nopidfd PROGRAM [ARG...]\n");
		return 2;
	}
	/* root may filter without it (slurmd's jobs keep their setuid programs) */
	if (geteuid() != 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		perror("nopidfd: no_new_privs");
		return 1;
	}
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp) < 0) {
		perror("nopidfd: seccomp");
		return 1;
	}
	execvp(argv[1], argv + 1);
	perror("nopidfd: exec");
	return 127;
}
