/*
 * stats.h - integer latency statistics per (context, arm).
 *
 * Owns doc/formats.md section 6: a latency sample in nanoseconds becomes
 * q = round(64 * log2(ns)); a bot_stats holds the count, the sum and the
 * sum of squares of q, and a sparse histogram of q. Merging is adding, so
 * it is exact and order-independent. The robust location (trimmed mean of q
 * within one octave of the median bin) and the derived microsecond values
 * are computed here in floating point; they are planner-side only.
 */
#ifndef BOT_STATS_H
#define BOT_STATS_H

#include <stdint.h>

#define BOT_Q_PER_OCTAVE 64
#define BOT_Q_MAX 2560		/* 2^40 ns */
#define BOT_TRIM_Q 64		/* one octave: a lone sample slower than its prior by more is doubted (policy.c) */
#define BOT_MEAN_TRIM_Q 128	/* robust mean: within a factor of 4 of the median */
#define BOT_STATS_MAX_N (1ull << 40)	/* samples an arm holds after a merge */

struct bot_bin {
	uint16_t bin;		/* q */
	uint32_t count;
};

struct bot_stats {
	uint64_t n;
	uint64_t sum_q;
	uint64_t sumsq_q;
	uint32_t nbins, cap;	/* sparse histogram, sorted by bin */
	struct bot_bin *bins;
};

/* q of a duration in nanoseconds (clamped to 0..BOT_Q_MAX); ns <= 0 or NaN
 * gives -1. */
int bot_q_from_ns(double ns);
int bot_q_from_us(double us);
double bot_us_from_q(double q);

void bot_stats_init(struct bot_stats *s);
void bot_stats_free(struct bot_stats *s);
/* Add count samples with value q. Returns 0, or -1 on allocation failure
 * (s unchanged). */
int bot_stats_add_q(struct bot_stats *s, int q, uint32_t count);
/* dst += src. A bin that would pass 2^32-1, or a total over
 * BOT_STATS_MAX_N, halves the merged histogram (every count c becomes
 * c >> k for the smallest k that fits, empty bins dropped; section 12's
 * "halves that arm's histogram"), so counters never block a merge and the
 * result is deterministic for a given order of merges. Returns 0, 1 when
 * it halved, or -1 on allocation failure (dst unchanged). */
int bot_stats_merge(struct bot_stats *dst, const struct bot_stats *src);
/* Decay: multiply counts by num/den, drop empty bins, recompute. A count
 * that would lose less than one sample on average (c (den - num) < den:
 * below 16 at 15/16) is rounded up with the chance of its fraction, the draw
 * a hash of the histogram, the bin and `nonce`, else down (formats.md
 * section 14, "Decay"): deterministic, and small bins decay as large ones
 * do on average. The nonce must differ between decays of one histogram
 * (which window, which context and arm). */
void bot_stats_decay(struct bot_stats *s, uint64_t num, uint64_t den, uint64_t nonce);
/* Multiply counts by num/den, each rounded down (the total never exceeds
 * n x num / den: the compactor's caps), drop empty bins, recompute. */
void bot_stats_scale_down(struct bot_stats *s, uint64_t num, uint64_t den);
int bot_stats_copy(struct bot_stats *dst, const struct bot_stats *src);

/* Median bin (lower median); -1 when empty. */
int bot_stats_median_q(const struct bot_stats *s);
/* Robust location in q units and the number of samples it used (*used may be
 * NULL). Returns NaN when empty. */
double bot_stats_robust_q(const struct bot_stats *s, uint64_t *used);
/* Robust spread: standard deviation of q within the trimmed window (q units);
 * 0 with fewer than two samples. */
double bot_stats_robust_sd_q(const struct bot_stats *s);
/* Location, spread and count used, in one pass over the window: *loc NaN
 * and *sd 0 when empty; any pointer may be NULL. */
void bot_stats_robust(const struct bot_stats *s, double *loc, double *sd, uint64_t *used);
/* The same, and the *mean spread* (what the planner calls): the spread of
 * the quantity whose mean the location is, 2^(q/64) in the window, as its
 * coefficient of variation in q units (64 / ln 2 times sd / mean; 0 below
 * two samples). For a narrow window it equals the robust spread; a slow
 * sample the window keeps moves a mean more than a log, and widens this
 * more (formats.md section 6). */
void bot_stats_robust_mean(const struct bot_stats *s, double *loc, double *sd, double *msd,
			   uint64_t *used);
/* Robust latency in microseconds (2^(loc/64)/1000); NaN when empty. */
double bot_stats_robust_us(const struct bot_stats *s);

#endif
