/*
 * hintlog.c - a shared object with a logger and no ncclGetVersion(), for
 * test_tuner.c: NCCL linked statically into a library with its symbols
 * hidden looks like this to the plugin (the logger's object exports no
 * version). The logger hands each line to hintlog_sink when set.
 */
#include <stdarg.h>
#include <stdio.h>

void (*hintlog_sink)(int level, const char *line);
void hintlog_logger(int level, unsigned long flags, const char *file, int line, const char *fmt,
		    ...);

void hintlog_logger(int level, unsigned long flags, const char *file, int line, const char *fmt,
		    ...)
{
	char buf[4096];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (hintlog_sink)
		hintlog_sink(level, buf);
}
