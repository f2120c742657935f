/*
 * metrics.h - the Prometheus textfile of ship and compact (doc/formats.md
 * section 14, "Metrics"): <metrics_dir>/<name>.prom, written .tmp + fsync +
 * rename so that a collector reads a whole file, never a half-written one.
 */
#ifndef BOT_LEARN_METRICS_H
#define BOT_LEARN_METRICS_H

#include <stddef.h>

/* Replace dir/name with text: 0, or -1 with err. */
int bot_metrics_write(const char *dir, const char *name, const char *text, size_t len,
		      char *err, size_t errlen);

#endif
