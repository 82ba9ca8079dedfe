/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * storm.c - the cold-miss storm: --storm-threads threads, each looking
 * up fresh names in a directory of its own, so that every lookup misses
 * and reaches a backend that sleeps --backend-delay-us per lookup, as a
 * network file system's round trip would.  The misses share nothing but
 * the cache: if they wait for each other (one writer lock held across the
 * miss, say), the throughput stays far below the ideal of threads / delay.
 * libdcache's modes only: the references have no backend.
 *
 * Beside them runs the backend alone: the same threads make the same
 * backend calls with no cache in between.  On a machine whose cores
 * cannot wake that many sleepers on time, it falls short of the ideal
 * too; what a mode gets of it is what the cache itself costs.
 *
 * Each mode has its cache over the slow backend; in each of --runs rounds
 * every mode runs once for --ms milliseconds, in turn, after one untimed
 * run of each (unless --no-warm).  Between runs the cache is emptied
 * (dc_invalidate_all, then dc_shrink of every unused entry, waiting for
 * their frees) and the threads' directories looked up again, untimed, so
 * each run starts alike, from memory the cache has used before, as a
 * cache that has run a while does; and memory stays bounded by one run's
 * names.  Names are never reused, so each timed lookup makes exactly one
 * backend call.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "common/stats.h"
#include "dcache.h"
#include "dcache-debug.h"
#include "micro/micro.h"
#include "micro/util.h"

#define SB_ROOT		1	/* the root's inode; thread k's directory is 2 + k */
#define SB_FILE_SHIFT	40	/* a file's inode: its directory's << 40 | number */

/* The slow backend: the root, a directory per thread, any file in them. */
struct sback {
	long delay_ns;
	unsigned ndirs;
	uint64_t calls, ns;	/* atomics: backend lookups, ns spent in them */
};

static int sb_root(void *ctx, struct dc_inode *out)
{
	(void)ctx;
	memset(out, 0, sizeof(*out));
	out->ino = SB_ROOT;
	out->mode = S_IFDIR | 0755;
	return 0;
}

/* The number spelled by name[0, len) in base after prefix p, or -1. */
static int64_t sb_number(const char *name, size_t len, char p, int base)
{
	char buf[24], *end;
	unsigned long long v;

	if (len < 2 || len >= sizeof(buf) || name[0] != p)
		return -1;
	memcpy(buf, name + 1, len - 1);
	buf[len - 1] = '\0';
	errno = 0;
	v = strtoull(buf, &end, base);
	if (*end || errno || v >= 1ull << SB_FILE_SHIFT)
		return -1;
	return (int64_t)v;
}

/* The round trip: a real sleep, so a waiting thread leaves its CPU. */
static void sb_sleep(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR)
		;
}

/* "sNNN" in the root: thread NNN's directory; "fHEX" in one: a file. */
static int sb_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		     size_t len, struct dc_inode *out)
{
	struct sback *sb = ctx;
	uint64_t t0 = clock_ns();
	int64_t v;

	sb_sleep(sb->delay_ns);
	__atomic_fetch_add(&sb->calls, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&sb->ns, clock_ns() - t0, __ATOMIC_RELAXED);
	memset(out, 0, sizeof(*out));
	if (dir->ino == SB_ROOT) {
		v = sb_number(name, len, 's', 10);
		if (v < 0 || v >= sb->ndirs)
			return -ENOENT;
		out->ino = SB_ROOT + 1 + (uint64_t)v;
		out->mode = S_IFDIR | 0755;
		return 0;
	}
	v = sb_number(name, len, 'f', 16);
	if (v < 0)
		return -ENOENT;
	out->ino = dir->ino << SB_FILE_SHIFT | (uint64_t)v;
	out->mode = S_IFREG | 0644;
	return 0;
}

static const struct dc_backend_ops sb_ops = {
	.root = sb_root,
	.lookup = sb_lookup,
};

/* A mode's cache over its own slow backend. */
struct smode {
	bool ok;
	struct sback sb;
	struct dc_cache *c;
};

struct storm;

struct sworker {
	_Alignas(64) struct storm *st;
	pthread_t th;
	unsigned idx;
	uint64_t next[IM_NR + 1];	/* each mode's next file number (the
					 * backend alone's last): never reused */
	/* the last run */
	uint64_t t0, t1, lookups, failed;
};

struct storm {
	unsigned n;
	struct sworker *w;
	pthread_barrier_t go, done;
	int stop, quit;
	int kind;		/* this run's mode; IM_NR: the backend alone */
	struct dc_cache *c;	/* NULL: the backend alone */
	struct sback *sb;
};

/* The backend alone: the name a lookup of path's last component would
 * ask, asked directly.  0 with *in filled, or -ENOENT. */
static int alone_lookup(struct storm *st, uint64_t dir, const char *name,
			struct dc_inode *in)
{
	struct dc_inode din = { .ino = dir, .mode = S_IFDIR | 0755 };

	return sb_lookup(st->sb, &din, name, strlen(name), in);
}

/* Fresh names in this thread's directory until the main thread says stop;
 * a lookup failed unless it answered the backend's file. */
static void storm_job(struct sworker *w)
{
	struct storm *st = w->st;
	uint64_t dir = SB_ROOT + 1 + w->idx, lookups = 0, failed = 0;
	char path[48];
	struct dc_inode in;

	w->t0 = clock_ns();
	do {
		uint64_t k = w->next[st->kind]++;
		int err;

		snprintf(path, sizeof(path), "s%03u/f%" PRIx64, w->idx, k);
		err = st->c ? dc_resolve(st->c, NULL, path, 0, &in) :
			      alone_lookup(st, dir, strchr(path, '/') + 1, &in);
		lookups++;
		failed += err || in.ino != (dir << SB_FILE_SHIFT | k) ||
			  !S_ISREG(in.mode);
		/* relaxed: stop is a request to end soon; the done barrier
		 * orders this run's figures before the main thread reads them */
	} while (!__atomic_load_n(&st->stop, __ATOMIC_RELAXED));
	w->t1 = clock_ns();
	w->lookups = lookups;
	w->failed = failed;
}

static void *storm_main(void *arg)
{
	struct sworker *w = arg;
	struct storm *st = w->st;

	/* the backend's sleeps are this thread's: without this the kernel
	 * may stretch each by up to the default 50 us timer slack */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		pthread_barrier_wait(&st->go);
		if (st->quit)
			break;
		storm_job(w);
		pthread_barrier_wait(&st->done);
	}
	return NULL;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The process's context switches so far, voluntary (a sleep, a wait for
 * a lock) and not (a preemption): on a machine where a switch is dear,
 * what a lookup costs beyond its own code. */
static uint64_t switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
}

/* Look up every thread's directory, so a timed lookup misses on its last
 * component alone: 0 or -errno. */
static int warm_dirs(struct dc_cache *c, unsigned n)
{
	char path[16];
	struct dc_inode in;

	for (unsigned k = 0; k < n; k++) {
		int err;

		snprintf(path, sizeof(path), "s%03u", k);
		err = dc_resolve(c, NULL, path, 0, &in);
		if (err)
			return err;
	}
	return 0;
}

/*
 * Forget every entry, evict them, and wait until their frees (after a
 * grace period, on liburcu's call_rcu thread) are done, so the next run
 * neither pays for them nor finds its memory untouched: 0 or -errno.
 * The frees are done when the process's live entries (every cache's)
 * have fallen by what this cache evicted; the other caches are idle.
 */
static int empty_cache(struct dc_cache *c)
{
	const struct timespec ms = { 0, 1000000 };
	uint64_t live0 = dc_debug_live_entries(), target;
	struct dc_stats s0, s1;
	int err;
	long n;

	dc_get_stats(c, &s0);
	err = dc_invalidate_all(c);
	if (err)
		return err;
	n = dc_shrink(c, 0);
	if (n < 0)
		return (int)n;
	dc_get_stats(c, &s1);
	/* this cache's live entries are its count once its frees are done
	 * (the new root included) */
	target = live0 - s0.entries + s1.entries;
	for (int i = 0; i < 10000 && dc_debug_live_entries() > target; i++)
		nanosleep(&ms, NULL);
	if (dc_debug_live_entries() > target)
		fprintf(stderr, "dcbench micro: storm: %" PRIu64 " evicted entries still "
			"not freed after 10 s\n", dc_debug_live_entries() - target);
	return 0;
}

/* The cache of mode kind over its slow backend: 0 or -errno, with why. */
static int smode_build(struct bench *b, struct smode *m, int kind,
		       struct storm_res *r)
{
	/* one run's names at most (each lookup sleeps the delay), twice
	 * over, and room to spare; above the cap the LRU evicts (counted) */
	uint64_t per = (uint64_t)b->ms * 1000 / b->storm_delay_us + 2;
	uint64_t need = 2 * per * b->storm_threads + 65536;
	struct dc_options o = {
		.mode = kind == IM_RCU ? DC_MODE_RCU :
			kind == IM_RWLOCK ? DC_MODE_RWLOCK : DC_MODE_GLOBAL,
		.max_entries = need < (1u << 22) ? need : 1u << 22,
	};
	int err;

	m->sb.delay_ns = (long)b->storm_delay_us * 1000;
	m->sb.ndirs = b->storm_threads;
	o.backend = (struct dc_backend){ &sb_ops, &m->sb };
	err = dc_cache_create(&o, &m->c);
	if (err) {
		snprintf(r->why, sizeof(r->why), "dc_cache_create: %s", strerror(-err));
		return err;
	}
	err = warm_dirs(m->c, b->storm_threads);
	if (err) {
		snprintf(r->why, sizeof(r->why), "looking up the directories: %s",
			 strerror(-err));
		return err;
	}
	m->ok = true;
	return 0;
}

/* One timed run of mode kind (IM_NR: the backend alone, m's cache NULL),
 * then the cache emptied for the next. */
static void storm_run(struct bench *b, struct storm *st, struct smode *m, int kind,
		      struct storm_res *r)
{
	struct timespec ts = { (time_t)(b->ms / 1000), (long)(b->ms % 1000) * 1000000L };
	uint64_t t0, t1 = 0, lookups = 0, failed = 0, calls0, ns0, cpu0, csw0;
	struct dc_stats s0, s1;
	int err;

	st->kind = kind;
	st->c = m->c;
	st->sb = &m->sb;
	memset(&s0, 0, sizeof(s0));
	s1 = s0;
	if (m->c)
		dc_get_stats(m->c, &s0);
	calls0 = __atomic_load_n(&m->sb.calls, __ATOMIC_RELAXED);
	ns0 = __atomic_load_n(&m->sb.ns, __ATOMIC_RELAXED);
	cpu0 = cpu_ns();
	csw0 = switches();
	__atomic_store_n(&st->stop, 0, __ATOMIC_RELAXED);
	pthread_barrier_wait(&st->go);
	t0 = clock_ns();
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&st->done);
	r->cpu_ns += cpu_ns() - cpu0;
	r->csw += switches() - csw0;
	/* the barrier ordered every backend call of the run before these */
	r->calls += __atomic_load_n(&m->sb.calls, __ATOMIC_RELAXED) - calls0;
	r->call_ns += __atomic_load_n(&m->sb.ns, __ATOMIC_RELAXED) - ns0;
	if (m->c)
		dc_get_stats(m->c, &s1);
	r->dc_misses += s1.misses - s0.misses;
	r->miss_waits += s1.miss_waits - s0.miss_waits;
	r->lock_waits += s1.lock_waits - s0.lock_waits;
	r->evictions += s1.evictions - s0.evictions;
	for (unsigned i = 0; i < st->n; i++) {
		struct sworker *w = &st->w[i];

		if (w->t0 < t0)
			t0 = w->t0;
		if (w->t1 > t1)
			t1 = w->t1;
		lookups += w->lookups;
		failed += w->failed;
	}
	r->lookups += lookups;
	r->failed += failed;
	if (r->nr < MAX_RUNS && lookups && t1 > t0)
		r->rate[r->nr++] = (double)lookups * 1e9 / (double)(t1 - t0);
	if (!m->c)
		return;
	/* untimed: back to a cache holding the directories alone */
	err = empty_cache(m->c);
	if (!err)
		err = warm_dirs(m->c, st->n);
	if (err) {
		snprintf(r->why, sizeof(r->why), "emptying the cache: %s", strerror(-err));
		m->ok = false;
	}
}

static void storm_start(struct storm *st, unsigned n)
{
	memset(st, 0, sizeof(*st));
	st->n = n;
	st->w = aligned_alloc(64, ((n * sizeof(*st->w)) + 63) & ~(size_t)63);
	if (!st->w)
		oom(n * sizeof(*st->w));
	memset(st->w, 0, n * sizeof(*st->w));
	pthread_barrier_init(&st->go, NULL, n + 1);
	pthread_barrier_init(&st->done, NULL, n + 1);
	for (unsigned i = 0; i < n; i++) {
		int err;

		st->w[i].st = st;
		st->w[i].idx = i;
		err = pthread_create(&st->w[i].th, NULL, storm_main, &st->w[i]);
		if (err) {
			fprintf(stderr, "dcbench micro: pthread_create: %s\n", strerror(err));
			exit(1);
		}
	}
}

static void storm_stop(struct storm *st)
{
	st->quit = 1;
	pthread_barrier_wait(&st->go);
	for (unsigned i = 0; i < st->n; i++)
		pthread_join(st->w[i].th, NULL);
	pthread_barrier_destroy(&st->go);
	pthread_barrier_destroy(&st->done);
	free(st->w);
}

int run_storm(struct bench *b)
{
	struct smode m[IM_NR], alone = { .ok = true };
	struct storm st;
	int nok = 0;

	memset(m, 0, sizeof(m));
	memset(b->storm, 0, sizeof(b->storm));
	memset(&b->storm_alone, 0, sizeof(b->storm_alone));
	alone.sb.delay_ns = (long)b->storm_delay_us * 1000;
	alone.sb.ndirs = b->storm_threads;
	if (!b->impl[IM_RCU] && !b->impl[IM_RWLOCK] && !b->impl[IM_GLOBAL]) {
		fprintf(stderr, "dcbench micro: storm: no libdcache mode asked for "
			"(--impls): the references have no backend to wait for\n");
		return -1;
	}
	for (int k = 0; k <= IM_GLOBAL; k++) {
		if (!b->impl[k]) {
			snprintf(b->storm[k].why, sizeof(b->storm[k].why),
				 "not asked for (--impls)");
			continue;
		}
		progress("scenario storm: building %s", im_names[k]);
		nok += smode_build(b, &m[k], k, &b->storm[k]) == 0;
	}
	progress("scenario storm: %u threads, %u us a backend lookup",
		 b->storm_threads, b->storm_delay_us);
	storm_start(&st, b->storm_threads);
	for (int k = 0; k <= IM_GLOBAL && !b->no_warm; k++) {
		struct storm_res warm = { .nr = 0 };

		if (!m[k].ok)
			continue;
		progress("scenario storm: %s, untimed", im_names[k]);
		storm_run(b, &st, &m[k], k, &warm);
		if (!m[k].ok)
			memcpy(b->storm[k].why, warm.why, sizeof(warm.why));
		/* untimed, but a wrong answer is wrong */
		b->storm[k].failed += warm.failed;
	}
	for (unsigned r = 0; r < b->runs; r++) {
		storm_run(b, &st, &alone, IM_NR, &b->storm_alone);
		for (int k = 0; k <= IM_GLOBAL; k++)
			if (m[k].ok)
				storm_run(b, &st, &m[k], k, &b->storm[k]);
	}
	storm_stop(&st);
	b->storm_alone.rate_med = stats_median(b->storm_alone.rate, b->storm_alone.nr);
	if (b->storm_alone.failed) {
		fprintf(stderr, "dcbench micro: storm: %" PRIu64 " of the backend's "
			"own answers were not the file asked for\n",
			b->storm_alone.failed);
		b->wrong_lookups += b->storm_alone.failed;
	}
	for (int k = 0; k <= IM_GLOBAL; k++) {
		struct storm_res *r = &b->storm[k];

		r->rate_med = stats_median(r->rate, r->nr);
		if (m[k].c)
			dc_cache_destroy(m[k].c);
		if (!b->impl[k])
			continue;
		if (r->nr < b->runs) {
			char why[sizeof(r->why)];

			fprintf(stderr, "dcbench micro: storm %s: not measured (%u of %u "
				"runs): %s\n", im_names[k], r->nr, b->runs,
				r->why[0] ? r->why : "?");
			b->unmeasured++;
			/* no figure from fewer runs than the others had */
			snprintf(why, sizeof(why), "%u of %u runs: %s", r->nr, b->runs,
				 r->why[0] ? r->why : "?");
			memcpy(r->why, why, sizeof(why));
			r->nr = 0;
		}
		if (r->failed)
			fprintf(stderr, "dcbench micro: storm %s: %" PRIu64 " timed lookups "
				"failed or answered otherwise than the backend\n",
				im_names[k], r->failed);
		b->wrong_lookups += r->failed;
	}
	b->storm_ran = true;
	return nok ? 0 : -1;
}
