/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_torture.c - the quick torture of make check: `dcbench torture`'s
 * engine (tests/torture/torture.c) for DC_TEST_SECONDS per mode, with
 * caps small enough that eviction runs all the time.  Any wrong answer,
 * failed update, unreturned reference or unfreed byte is a violation.
 * Then, per mode, a shorter one with allocation failures injected during
 * the run (every Nth, or at random): every failing call must say -ENOMEM,
 * every other answer is checked as strictly, and the end-of-run checks
 * (consistency, references, nothing leaked) are the same.
 */
#include "harness.h"
#include "torture/torture.h"

int main(void)
{
	struct torture_opts o = { .seconds = h_seconds(), .threads = 6,
				  .seed = 20021101, .max_entries = 48,
				  .max_negative = 12, .log = stderr };
	enum dc_mode m;

	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		struct torture_result r;
		uint64_t writes = 0;
		int k;

		memset(&r, 0, sizeof(r));
		o.mode = m;
		CHECK_EQ(torture_run(&o, &r), 0);
		for (k = TOP_CREATE; k < TOP_NR; k++)
			writes += r.ops[k];
		printf("%-6s: %llu updates, %llu answers checked, %llu skipped, "
		       "%llu violations; %llu evictions, %llu rcu-walk restarts\n",
		       dc_mode_name(m), (unsigned long long)writes,
		       (unsigned long long)r.checks, (unsigned long long)r.skipped,
		       (unsigned long long)r.violations, (unsigned long long)r.evictions,
		       (unsigned long long)r.restarts);
		CHECK_EQ(r.violations, 0);
		/* the run did something of every kind */
		CHECK(r.checks > 100);
		for (k = 0; k < TOP_NR; k++)
			if (!r.ops[k])
				printf("  no %s operation ran\n", torture_op_name(k));
		CHECK(r.ops[TOP_RENAME] && r.ops[TOP_EXCHANGE] && r.ops[TOP_MOVEDIR] &&
		      r.ops[TOP_LINK] && r.ops[TOP_LOOKUP] && r.ops[TOP_WALK]);
		CHECK(r.evictions > 0);
	}
	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		struct torture_result r;
		uint64_t nomem = 0;
		int k;

		memset(&r, 0, sizeof(r));
		o.mode = m;
		o.seconds = h_seconds() / 2;
		/* global: every 31st allocation; the others one in 40 at random */
		o.fail_every = m == DC_MODE_GLOBAL ? 31 : -40;
		o.fail_seed = 1000 + (uint64_t)m;
		CHECK_EQ(torture_run(&o, &r), 0);
		for (k = 0; k < TOP_NR; k++)
			nomem += r.enomem[k];
		printf("%-6s with allocation failures: %llu injected, %llu calls "
		       "returned -ENOMEM (%llu updates), %llu answers checked, "
		       "%llu violations\n", dc_mode_name(m),
		       (unsigned long long)r.failed_allocs, (unsigned long long)nomem,
		       (unsigned long long)(nomem - r.enomem[TOP_RESOLVE] -
					    r.enomem[TOP_WALK] - r.enomem[TOP_LOOKUP] -
					    r.enomem[TOP_STABLE]),
		       (unsigned long long)r.checks, (unsigned long long)r.violations);
		CHECK_EQ(r.violations, 0);
		CHECK(r.failed_allocs > 0 && nomem > 0);
		CHECK(r.checks > 100);
	}
	o.fail_every = 0;
	return h_done("test_torture");
}
