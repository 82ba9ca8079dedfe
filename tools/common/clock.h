/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * clock.h - the one clock the tools time with: CLOCK_MONOTONIC, which no
 * one can set, in nanoseconds or seconds.  Inline: the replay stamps
 * every cache call with it.
 */
#ifndef DC_TOOLS_CLOCK_H
#define DC_TOOLS_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Monotonic time in nanoseconds. */
static inline uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Monotonic time in seconds. */
static inline double clock_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
