/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcache-debug.h - libdcache's test and debugging hooks.
 *
 * Not part of the stable API: these calls serve the project's own tests
 * and tools (allocation-failure injection, leak counts, an invariant
 * check) and may change in any release.  They are exported so that a
 * program linked against libdcache.so can use them too.
 */
#ifndef DCACHE_DEBUG_H
#define DCACHE_DEBUG_H

#include "dcache.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Allocation-failure injection for tests: with every > 0 the every-th
 * allocation fails; with every < 0 each fails with probability 1/-every,
 * drawn from seed.  0 turns injection off.  Process-wide.
 */
void dc_debug_fail_alloc(long every, uint64_t seed);
/* Allocations that failed by injection since the last call to the above. */
uint64_t dc_debug_failed_allocs(void);
/* Entries allocated and not yet freed, all caches of the process. */
uint64_t dc_debug_live_entries(void);
/* Bytes allocated by libdcache and not yet freed, all caches. */
uint64_t dc_debug_live_bytes(void);
/* Check the cache's invariants (quiescent callers only); 0 or -EUCLEAN. */
int dc_debug_check(struct dc_cache *c);
/* The same, and on -EUCLEAN the first broken invariant found, with its
 * counts, in why (size bytes, NUL-terminated; why[0] is 0 unless
 * -EUCLEAN).  A NULL why is ignored. */
int dc_debug_check_why(struct dc_cache *c, char *why, size_t size);
/*
 * Call fn(arg) in each miss of c that asks the backend, from inside its
 * first locked section (in rcu mode the write lock's miss side and the
 * name's bucket stripe; in the other modes the write lock), just after
 * it hashes its pending entry (NULL: no more): a test holds a miss there,
 * as a preempted thread would, to see who waits for it.  Set it while no
 * lookup runs.
 */
void dc_debug_on_miss(struct dc_cache *c, void (*fn)(void *arg), void *arg);
/*
 * Call fn(arg) in each dc_resolve or dc_resolve_as of c from the root (rcu
 * mode) that walked and is about to offer the walk's answer to the
 * one-probe table, inside the walk's read-side section (NULL: no more):
 * a test changes the namespace there, as a writer on another CPU may
 * between a walk and its add.  fn may update c, but nothing that waits
 * for a grace period (dc_shrink, or an update that takes the cache an
 * eighth past its cap).  Set it while no lookup runs.
 */
void dc_debug_on_path_add(struct dc_cache *c, void (*fn)(void *arg), void *arg);

#ifdef __cplusplus
}
#endif
#endif /* DCACHE_DEBUG_H */
