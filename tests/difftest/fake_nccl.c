/*
 * fake_nccl.c - what the rank-side library looks up in libnccl:
 * ncclGetVersion(), answering what difftest.c sets (0: fail, as when the
 * version is unknown), and the logger NCCL passes at init, which is how the
 * library finds this object (tuner/ncclver.h: only the object that holds
 * the logger is asked). Loaded into each build's namespace; the logger
 * keeps the last line for the driver.
 */
#include <stdarg.h>
#include <stdio.h>

int difftest_nccl_version;
char difftest_lastlog[1024];

int ncclGetVersion(int *version);
void difftest_logger(int level, unsigned long flags, const char *file, int line,
		     const char *fmt, ...);

int ncclGetVersion(int *version)
{
	if (!difftest_nccl_version || !version)
		return 4;	/* ncclInvalidArgument */
	*version = difftest_nccl_version;
	return 0;
}

void difftest_logger(int level, unsigned long flags, const char *file, int line,
		     const char *fmt, ...)
{
	va_list ap;

	(void)level;
	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(difftest_lastlog, sizeof(difftest_lastlog), fmt, ap);
	va_end(ap);
}
