/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * torture.h - a randomized concurrent test of libdcache, in the spirit of
 * rcutorture: writers change a small namespace (memfs, then the cache),
 * readers resolve names in it, and an oracle checks every answer against
 * the versioned history of what each name held.
 */
#ifndef DCB_TORTURE_H
#define DCB_TORTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dcache.h"

enum torture_op {
	TOP_RESOLVE, TOP_WALK, TOP_LOOKUP, TOP_STABLE,	/* readers */
	TOP_CREATE, TOP_MKDIR, TOP_SYMLINK, TOP_LINK, TOP_UNLINK, TOP_RMDIR,
	TOP_RENAME, TOP_NOREPLACE, TOP_EXCHANGE, TOP_MOVEDIR,
	TOP_INVAL_NAME, TOP_INVAL_DIR,
	TOP_INVAL_CHILD, TOP_INVAL_INODE, TOP_INVAL_ALL,	/* by inode (push) */
	TOP_SHRINK,
	TOP_NR
};

struct torture_opts {
	enum dc_mode mode;
	double seconds;
	int threads;		/* writers are a third of them, at least one */
	uint64_t seed;
	uint64_t max_entries;	/* small, so eviction runs all the time */
	uint64_t max_negative;
	/*
	 * Allocation failures during the run (dc_debug_fail_alloc): with
	 * fail_every > 0 every fail_every-th allocation of the library fails,
	 * with fail_every < 0 each one in -fail_every at random, drawn from
	 * fail_seed; 0: none.  Set-up and the final checks run without.
	 */
	long fail_every;
	uint64_t fail_seed;
	FILE *log;		/* violations and the summary; NULL: quiet */
};

struct torture_result {
	uint64_t ops[TOP_NR];
	uint64_t checks;	/* answers checked by the oracle */
	uint64_t skipped;	/* answers whose history had scrolled away */
	uint64_t violations;	/* wrong answers, failed updates, leaks */
	uint64_t evictions, restarts;
	uint64_t path_hits;	/* answers from the one-probe table */
	uint64_t enomem[TOP_NR];	/* calls that returned -ENOMEM, by kind */
	uint64_t failed_allocs;	/* allocations that failed by injection */
	uint32_t ttl_ms, neg_ttl_ms;	/* the cache's TTLs (0: none) */
	double seconds;
};

const char *torture_op_name(enum torture_op op);
/* Run one torture; 0 when no violation, else -1.  Prints to o->log. */
int torture_run(const struct torture_opts *o, struct torture_result *r);
/* Parse --fail-alloc's "N", "rand:N" or "rand:N:SEED" into o; 0 or -1. */
int torture_parse_fail(const char *s, struct torture_opts *o);
/* One line of totals (and the TTLs and allocation failures, if on) to f. */
void torture_print_result(FILE *f, const struct torture_opts *o,
			  const struct torture_result *r);

#endif
