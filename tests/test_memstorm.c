/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_memstorm.c - the memory bound, briefly: in each mode, 300,000
 * distinct paths (60,000 under ThreadSanitizer; half of them missing)
 * through a cache capped at 2,000 entries (tests/torture/memstorm.c).  Every answer must be right, the
 * cap must have made the cache evict, and the cache's live bytes and the
 * process's resident growth must both stay under the bound.  Under
 * ThreadSanitizer, whose shadow memory grows with the process, resident
 * growth is not the cache's and that check is skipped.
 */
#include "harness.h"
#include "torture/memstorm.h"

/* Under TSan, ten times slower, a fifth of the paths: still 30 times the
 * cap, so every mode evicts thousands of times beside the lookups. */
#if H_UNDER_TSAN
#define NAMES 60000
#else
#define NAMES 300000
#endif

int main(void)
{
	struct memstorm_opts o = { .names = NAMES, .cap = 2000, .threads = 2 };

	for (enum dc_mode m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		struct memstorm_result r;
		int ret;

		o.mode = m;
		ret = memstorm_run(&o, &r);
		CHECK(r.seconds > 0);	/* it ran */
		CHECK_EQ(r.wrong, 0);
		CHECK(r.evictions > 0);
		CHECK(r.peak_entries > 0 && r.peak_entries <= o.cap + o.cap / 4);
		CHECK(r.peak_bytes > 0 && r.peak_bytes <= r.bound);
#if H_UNDER_TSAN
		SKIP("resident growth under ThreadSanitizer");
		(void)ret;
#else
		CHECK(r.peak_rss <= r.bound);
		CHECK_EQ(ret, 0);
#endif
	}
	return h_done("test_memstorm");
}
