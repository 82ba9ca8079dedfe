/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * harness.h - the tests' tiny harness.  Each test program counts its
 * checks, prints every failure with file:line, ends with one line
 * "NAME: N checks, M failed" (", K skipped" when a check could not run
 * here), and exits 1 if any failed.
 */
#ifndef DC_HARNESS_H
#define DC_HARNESS_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* 1 in a ThreadSanitizer build (gcc says so one way, clang another) */
#if defined(__SANITIZE_THREAD__)
#define H_UNDER_TSAN	1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define H_UNDER_TSAN	1
#endif
#endif
#ifndef H_UNDER_TSAN
#define H_UNDER_TSAN	0
#endif

static unsigned long h_checks, h_failed, h_skipped;

/* atomic: stress tests check from many threads */
#define H_INC(x)	__atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)

#define CHECK(cond) do {						\
	H_INC(h_checks);						\
	if (!(cond)) {							\
		H_INC(h_failed);					\
		fprintf(stderr, "%s:%d: CHECK failed: %s\n",		\
			__FILE__, __LINE__, #cond);			\
	}								\
} while (0)

/* Compare two integers and show both on failure. */
#define CHECK_EQ(a, b) do {						\
	long long h_a = (long long)(a), h_b = (long long)(b);		\
	H_INC(h_checks);						\
	if (h_a != h_b) {						\
		H_INC(h_failed);					\
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s "	\
			"(%lld != %lld)\n", __FILE__, __LINE__, #a, #b,	\
			h_a, h_b);					\
	}								\
} while (0)

/* A check that cannot run here: said why, counted as skipped. */
#define SKIP(why) do {							\
	H_INC(h_skipped);						\
	printf("%s:%d: skipped: %s\n", __FILE__, __LINE__, (why));	\
} while (0)

static inline int h_done(const char *name)
{
	if (h_skipped)
		printf("%s: %lu checks, %lu failed, %lu skipped\n", name,
		       h_checks, h_failed, h_skipped);
	else
		printf("%s: %lu checks, %lu failed\n", name, h_checks, h_failed);
	return h_failed ? 1 : 0;
}

/* The tests' synthetic backends name files n0 to n99: that number, or -1. */
static inline int h_name_index(const char *name, size_t len)
{
	int i = 0;

	if (len < 2 || len > 3 || name[0] != 'n')
		return -1;
	for (size_t k = 1; k < len; k++) {
		if (name[k] < '0' || name[k] > '9')
			return -1;
		i = i * 10 + (name[k] - '0');
	}
	return i;
}

static inline double h_seconds(void)
{
	const char *s = getenv("DC_TEST_SECONDS");
	double v = s ? atof(s) : 2.0;

	return v > 0 ? v : 2.0;
}

/* Seconds on the monotonic clock. */
static inline double h_mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleep ms milliseconds, signals or not. */
static inline void h_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

/* Wait until *count, changed under lock with a broadcast of cv, reaches
 * n.  Bounded (20 s: a safety net, not a measure): false when it did
 * not. */
static inline bool h_wait_at_least(pthread_mutex_t *lock, pthread_cond_t *cv,
				   const int *count, int n)
{
	struct timespec until;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	pthread_mutex_lock(lock);
	while (*count < n && ok)
		ok = pthread_cond_timedwait(cv, lock, &until) != ETIMEDOUT;
	pthread_mutex_unlock(lock);
	return ok;
}

#ifdef DCACHE_H

/* Has the cache's shrinker thread brought it within max entries and
 * maxneg negative ones, with no call to make it?  Polled for ten seconds
 * at most: a bound on "eventually", not a measure of speed. */
static inline int h_within_caps(struct dc_cache *c, uint64_t max, uint64_t maxneg)
{
	struct timespec ms = { 0, 1000000 };
	struct dc_stats st;

	for (int i = 0; i < 10000; i++) {
		dc_get_stats(c, &st);
		if (st.entries <= max && st.negative <= maxneg)
			return 1;
		nanosleep(&ms, NULL);
	}
	return 0;
}
#endif

#endif
