/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_race.c - the torture of test_torture, in rcu mode, on the library
 * built again with its race windows open (DC_RACE_WINDOWS, src/internal.h):
 * at each point where a race matters (a lock-free reader between its
 * snapshot and its check, a writer inside its odd seq, a one-probe node
 * between its walk and its add, between the halves of a Dekker
 * handshake) a thread yields the CPU one time in RACE_ODDS.  On a machine
 * with few cores another thread then often runs inside a window, as it
 * does on many cores.
 *
 * Three runs of DC_TEST_SECONDS: a cap of 48 entries (eviction all the
 * time); one of 5,000, where entries and their one-probe nodes live long
 * (its one-probe answers are counted, and must be there); one of 300 with
 * answers that expire after a few milliseconds.  The torture turns TTLs
 * on for one seed in three (seed + mode divisible by 3), so the seeds are
 * chosen for that.
 *
 * A window here is a call, which the compiler moves no load or store
 * across, and when it yields a system call, which the CPU does not
 * either: this build hides an ordering fault near a window.
 * test_torture, on the library as built, does not.
 */
#include <sched.h>

#include "common/rng.h"
#include "harness.h"
#include "torture/torture.h"

#define RACE_ODDS	16

void dc__race_window(void);

void dc__race_window(void)
{
	/* seeded by the thread's own address: threads differ */
	static _Thread_local uint64_t s;

	if (!s)
		s = (uint64_t)(uintptr_t)&s;
	if (rng_below(&s, RACE_ODDS) == 0)
		sched_yield();
}

int main(void)
{
	static const struct {
		uint64_t cap, seed;
		bool ttl, paths;	/* TTLs on; one-probe answers required */
	} runs[] = {
		{ 48, 20021102, false, false },
		{ 5000, 20021104, false, true },
		{ 300, 20021103, true, false },
	};

	for (unsigned i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		struct torture_opts o = { .mode = DC_MODE_RCU, .seconds = h_seconds(),
					  .threads = 8, .seed = runs[i].seed,
					  .max_entries = runs[i].cap,
					  .max_negative = runs[i].cap / 4, .log = stderr };
		struct torture_result r;

		memset(&r, 0, sizeof(r));
		CHECK_EQ(torture_run(&o, &r), 0);
		printf("cap %llu, TTLs %u/%u ms: %llu answers checked, %llu violations; "
		       "%llu one-probe answers, %llu rcu-walk restarts\n",
		       (unsigned long long)runs[i].cap, r.ttl_ms, r.neg_ttl_ms,
		       (unsigned long long)r.checks, (unsigned long long)r.violations,
		       (unsigned long long)r.path_hits, (unsigned long long)r.restarts);
		CHECK_EQ(r.violations, 0);
		CHECK(r.checks > 100);
		CHECK(r.ops[TOP_RENAME] && r.ops[TOP_MOVEDIR] && r.ops[TOP_LOOKUP]);
		CHECK_EQ(r.ttl_ms != 0, runs[i].ttl);
		/* the windows of the one-probe table were passed */
		if (runs[i].paths)
			CHECK(r.path_hits > 0);
	}
	return h_done("test_race");
}
