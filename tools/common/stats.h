/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.h - the few statistics the benchmarks report: median, mean and
 * sample standard deviation of a series of doubles.  None changes its
 * input; each answers NAN where the series is too short (or, for the
 * median of a long series, when no memory is left for its sorted copy).
 */
#ifndef DC_TOOLS_STATS_H
#define DC_TOOLS_STATS_H

/* qsort's comparison for doubles, ascending (no NaN expected). */
int stats_cmp_double(const void *a, const void *b);

/* The median of v[0..n): the middle value, or the mean of the two middle ones. */
double stats_median(const double *v, unsigned n);

/* The arithmetic mean of v[0..n); NAN for n = 0. */
double stats_mean(const double *v, unsigned n);

/* The sample standard deviation (n - 1 in the denominator); NAN for n < 2. */
double stats_sd(const double *v, unsigned n);

#endif
