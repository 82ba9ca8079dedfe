/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.h - the summary statistics dcbench's replay reports: median
 * (judged), mean and sample standard deviation (shown beside).
 */
#ifndef DCBENCH_TRACE_STATS_H
#define DCBENCH_TRACE_STATS_H

double stats_median(const double *v, unsigned n);	/* NAN for none */
double stats_mean(const double *v, unsigned n);		/* NAN for none */
double stats_sd(const double *v, unsigned n);		/* NAN for fewer than 2 */

#endif /* DCBENCH_TRACE_STATS_H */
