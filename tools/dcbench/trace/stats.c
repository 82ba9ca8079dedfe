/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.c - median, mean and standard deviation of a run's samples.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "trace/stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double stats_median(const double *v, unsigned n)
{
	double *s;
	double m;

	if (n == 0)
		return NAN;
	s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

double stats_mean(const double *v, unsigned n)
{
	double s = 0;

	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : NAN;
}

/* Sample standard deviation; NAN for fewer than two values. */
double stats_sd(const double *v, unsigned n)
{
	double m = stats_mean(v, n), s = 0;

	if (n < 2)
		return NAN;
	for (unsigned i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (n - 1));
}
