// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stats.c - median, mean and sample standard deviation (stats.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/stats.h"

int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double stats_median(const double *v, unsigned n)
{
	double small[64], *s = small, m;

	if (n == 0)
		return NAN;
	if (n > sizeof(small) / sizeof(small[0]) && !(s = malloc(n * sizeof(*s))))
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), stats_cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	if (s != small)
		free(s);
	return m;
}

double stats_mean(const double *v, unsigned n)
{
	double sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += v[i];
	return n ? sum / n : NAN;
}

double stats_sd(const double *v, unsigned n)
{
	double m = stats_mean(v, n), ss = 0;

	if (n < 2)
		return NAN;
	for (unsigned i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (n - 1));
}
