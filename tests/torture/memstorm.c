/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memstorm.c - the memory-bound engine: does the cap hold?  (tests/test_memstorm
 * briefly, `dcbench memstorm` at full size)
 *
 * Threads resolve N distinct paths /dK/nI (I from 0 to N-1, K = I mod
 * 1000) through a cache capped at `cap` entries.  Every second name
 * exists; the others are misses that leave negative entries.  The backend
 * is synthetic (a name's answer is computed from it), so nothing but the
 * cache grows.  A sampler records the cache's live bytes (measured by its
 * allocator) and the process's resident memory; both must stay under
 *
 *	bound = cap x 128 bytes x 2 + the bucket array + 4 MiB
 *
 * (128 bytes is an entry with its bucket; the factor 2 leaves room for the
 * entries evicted but still waiting for a grace period, at most an eighth
 * of the cap by design, and for slab chunks not yet reused).  Resident
 * memory is measured as growth over the process before the cache existed.
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "dcache.h"
#include "memstorm.h"

#define NDIRS	1000

struct storm {
	struct dc_cache *c;
	uint64_t names;
	int threads;
	int done;
	uint64_t wrong;			/* answers not what the backend says */
	uint64_t peak_bytes, peak_entries, peak_rss;
};

struct part {
	struct storm *s;
	uint64_t from, to;
};

/* ---- the synthetic backend: /dK, and nI exists in it iff I is even --------- */

static int parse_index(const char *s, size_t len, char prefix, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len < 2 || len > 20 || s[0] != prefix)
		return -1;
	for (i = 1; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

static int st_root(void *ctx, struct dc_inode *out)
{
	(void)ctx;
	*out = (struct dc_inode){ 1, 1, S_IFDIR | 0755, 0 };
	return 0;
}

static int st_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		     size_t len, struct dc_inode *out)
{
	uint64_t i;

	(void)ctx;
	if (dir->ino == 1) {
		if (parse_index(name, len, 'd', &i) || i >= NDIRS)
			return -ENOENT;
		*out = (struct dc_inode){ 2 + i, 2 + i, S_IFDIR | 0755, 0 };
		return 0;
	}
	if (parse_index(name, len, 'n', &i) || i % NDIRS != dir->ino - 2 || i % 2)
		return -ENOENT;
	*out = (struct dc_inode){ 1000000 + i, 0, S_IFREG | 0644, 0 };
	return 0;
}

static const struct dc_backend_ops storm_ops = { .root = st_root, .lookup = st_lookup };

/* ---- the run --------------------------------------------------------------- */

static uint64_t rss_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void *storm_worker(void *arg)
{
	struct part *p = arg;
	char path[64];
	uint64_t i;

	for (i = p->from; i < p->to; i++) {
		struct dc_inode st;
		int err;

		snprintf(path, sizeof(path), "/d%llu/n%llu",
			 (unsigned long long)(i % NDIRS), (unsigned long long)i);
		err = dc_resolve(p->s->c, NULL, path, 0, &st);
		if (i % 2 ? err != -ENOENT : err || st.ino != 1000000 + i)
			__atomic_add_fetch(&p->s->wrong, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void sample(struct storm *s, uint64_t rss0)
{
	struct dc_stats st;
	uint64_t rss = rss_bytes();

	dc_get_stats(s->c, &st);
	if (st.bytes > s->peak_bytes)
		s->peak_bytes = st.bytes;
	if (st.entries > s->peak_entries)
		s->peak_entries = st.entries;
	if (rss > rss0 && rss - rss0 > s->peak_rss)
		s->peak_rss = rss - rss0;
}

int memstorm_run(const struct memstorm_opts *mo, struct memstorm_result *r)
{
	struct dc_options o = { .mode = mo->mode, .max_entries = mo->cap };
	struct storm s = { .names = mo->names, .threads = mo->threads };
	uint64_t rss0, bound, buckets = 16, chunk;
	struct part *parts;
	pthread_t *th;
	struct dc_stats st;
	int i, err;
	double t0, secs;

	while (buckets < o.max_entries / 2)	/* the library's sizing rule */
		buckets *= 2;
	bound = o.max_entries * 128 * 2 + buckets * 8 + (4u << 20);
	o.backend.ops = &storm_ops;
	rss0 = rss_bytes();
	err = dc_cache_create(&o, &s.c);
	memset(r, 0, sizeof(*r));
	if (err) {
		fprintf(stderr, "memstorm: cannot create the cache: %s\n", strerror(-err));
		return 1;
	}
	parts = calloc((size_t)s.threads, sizeof(*parts));
	th = calloc((size_t)s.threads, sizeof(*th));
	if (!parts || !th) {
		fprintf(stderr, "memstorm: out of memory\n");
		dc_cache_destroy(s.c);
		free(parts);
		free(th);
		return 1;
	}
	chunk = s.names / (uint64_t)s.threads + 1;
	t0 = clock_s();
	for (i = 0; i < s.threads; i++) {
		parts[i] = (struct part){ &s, chunk * (uint64_t)i, chunk * (uint64_t)(i + 1) };
		if (parts[i].to > s.names)
			parts[i].to = s.names;
		if (pthread_create(&th[i], NULL, storm_worker, &parts[i])) {
			fprintf(stderr, "memstorm: cannot start thread %d\n", i);
			th[i] = 0;
			s.wrong++;	/* its names were not resolved: not a pass */
		}
	}
	/* sample every 20 ms until the workers are done */
	for (;;) {
		void *ret;
		int alive = 0;

		sample(&s, rss0);
		for (i = 0; i < s.threads; i++)
			if (th[i] && pthread_tryjoin_np(th[i], &ret) != 0)
				alive++;
			else
				th[i] = 0;
		if (!alive)
			break;
		if (isatty(2))
			fprintf(stderr, "\rmemstorm: %.0f s", clock_s() - t0);
		usleep(20000);
	}
	secs = clock_s() - t0;
	sample(&s, rss0);
	if (isatty(2))
		fputc('\n', stderr);
	dc_get_stats(s.c, &st);
	{
		double per_entry = st.entries ? (double)st.bytes / (double)st.entries : 0;
		bool ok = s.peak_bytes <= bound && s.peak_rss <= bound && !s.wrong;

		*r = (struct memstorm_result){
			.wrong = s.wrong, .evictions = st.evictions,
			.peak_entries = s.peak_entries, .peak_bytes = s.peak_bytes,
			.peak_rss = s.peak_rss, .bound = bound, .seconds = secs,
		};

		if (mo->json) {
			printf("{\"schema_version\": 1, \"command\": \"memstorm\", \"mode\": \"%s\", "
			       "\"names\": %llu, \"cap\": %llu, \"threads\": %d, \"seconds\": %.3f, "
			       "\"lookups_per_s\": %.0f, \"evictions\": %llu, \"wrong\": %llu, "
			       "\"peak_entries\": %llu, \"peak_live_bytes\": %llu, "
			       "\"peak_rss_growth_bytes\": %llu, \"bound_bytes\": %llu, "
			       "\"bytes_per_cached_entry\": %.1f, \"within_bound\": %s}\n",
			       dc_mode_name(o.mode), (unsigned long long)s.names,
			       (unsigned long long)o.max_entries, s.threads, secs, s.names / secs,
			       (unsigned long long)st.evictions, (unsigned long long)s.wrong,
			       (unsigned long long)s.peak_entries,
			       (unsigned long long)s.peak_bytes, (unsigned long long)s.peak_rss,
			       (unsigned long long)bound, per_entry, ok ? "true" : "false");
		} else {
			printf("memstorm (%s, %d threads): %llu names (half missing) in %.1f s, "
			       "%.2f M lookups/s, %llu evictions, %llu wrong answers\n",
			       dc_mode_name(o.mode), s.threads, (unsigned long long)s.names,
			       secs, s.names / secs / 1e6, (unsigned long long)st.evictions,
			       (unsigned long long)s.wrong);
			printf("  cap %llu entries: peak %llu entries, peak live bytes %.1f MiB, "
			       "peak resident growth %.1f MiB, bound %.1f MiB: %s\n",
			       (unsigned long long)o.max_entries,
			       (unsigned long long)s.peak_entries, s.peak_bytes / 1048576.0,
			       s.peak_rss / 1048576.0, bound / 1048576.0,
			       ok ? "within" : "EXCEEDED");
			printf("  bytes per cached entry (allocator's count / entries, "
			       "buckets and slab included): %.1f\n", per_entry);
		}
		dc_cache_destroy(s.c);
		free(parts);
		free(th);
		return ok ? 0 : 1;
	}
}
