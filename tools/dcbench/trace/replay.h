/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay.h - replaying a dcbench trace through libdcache.
 *
 * rp_prepare() reads a trace once and works out, outside any timing:
 *  - a schedule: the trace order (the log's line order, bent where needed
 *    so that a child starts after its parent's FORK, a WAIT completes after
 *    the child's EXIT and a vfork parent waits for the child's exec), and
 *    the dependencies the replay must keep between processes;
 *  - the namespace the build saw when it started (docs/dcbench.md,
 *    "Namespace inference"), built into a memfs before every run;
 *  - for K copies, the paths of copy k (the build's private trees get the
 *    suffix ".k" for k >= 1; everything else is shared).
 *
 * rp_run() then replays: each trace process's ops in order, on N threads,
 * every answer checked against the recorded outcome.  Only the replay is
 * timed; each run gets a fresh memfs and cache.  Within it, each path op
 * is timed too (cache_s below).
 */
#ifndef DCBENCH_TRACE_REPLAY_H
#define DCBENCH_TRACE_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "dcache.h"
#include "trace/trace.h"

/* Modes: libdcache's three (enum dc_mode's numbers), and null (no cache:
 * the recorded answers). */
enum rp_mode {
	RP_RCU = DC_MODE_RCU, RP_GLOBAL = DC_MODE_GLOBAL, RP_RWLOCK = DC_MODE_RWLOCK,
	RP_NULL, RP_NMODES
};

const char *rp_mode_name(int mode);	/* dc_mode_name()'s, "null"; "?" if none */
int rp_mode_parse(const char *name);	/* a mode, or -1 */

#define RP_MAX_THREADS	1024
#define RP_MAX_COPIES	256

/* What preparation found; the counts are for one copy. */
struct rp_info {
	uint64_t procs, ops, path_ops;
	uint64_t init_dirs, init_files, init_links;	/* inferred namespace */
	uint64_t init_link_targets;	/* files/dirs added as symlink targets */
	uint64_t changed_names;		/* names the trace creates or removes */
	uint64_t conflicts;		/* outcomes the inference could not fit */
	uint64_t unchecked;		/* ops with no recorded outcome (-1) */
	uint64_t deps;			/* cross-process dependencies kept */
	uint64_t conflict_deps;		/* ... of which from shared names */
	uint64_t components;		/* path components of all path ops */
	uint64_t planned_lookups;	/* dc_* lookup calls if all went as recorded */
	uint64_t critical_ops;		/* fork/wait critical path, in ops */
	uint64_t critical_ops_replay;	/* the same with every kept dependency */
	double bound;			/* ops / critical_ops: best speed-up */
	double bound_replay;		/* ops / critical_ops_replay */
	unsigned nroots;		/* private roots (copied per copy) */
	const char *const *roots;
};

struct rp_prep;

/* 0, or -1 with a message in err.  The trace must outlive the prep. */
int rp_prepare(const struct dct_trace *t, struct rp_prep **out,
	       char *err, size_t errlen);
const struct rp_info *rp_get_info(const struct rp_prep *p);
void rp_free(struct rp_prep *p);

struct rp_config {
	int mode;		/* enum rp_mode */
	unsigned threads;	/* worker threads, >= 1 */
	unsigned copies;	/* independent copies of the trace, >= 1 */
	FILE *progress;		/* a line now and then while it runs; NULL: quiet */
	FILE *mismatch_log;	/* the first mismatches, one line each; NULL: none */
	unsigned max_print;	/* how many of them */
	unsigned complete_after; /* dc_options.complete_after (0: default) */
};

struct rp_result {
	double elapsed_s;	/* wall clock of the replay alone */
	double user_s, sys_s;	/* getrusage(RUSAGE_SELF) over the replay */
	/* The time in the cache: wall time (CLOCK_MONOTONIC) from the start to
	 * the end of each path op, summed over ops and threads, less the memfs
	 * updates the op applied.  So it holds the cache calls, the backend
	 * lookups they make on misses, time asleep on the cache's locks, and
	 * the little glue between the calls, and any time the thread was
	 * preempted inside an op (so more threads than CPUs inflate it); not
	 * the replay's own scheduling (its spinning and sched_yield), waits
	 * for other processes, checks or memfs updates.  In the null mode (no
	 * cache) it is what the two stamps per op cost, and every mode pays as
	 * much. */
	double cache_s;
	uint64_t ops;		/* ops replayed, all copies */
	uint64_t lookups;	/* dc_get_stats (null mode: planned_lookups) */
	uint64_t components;	/* path components resolved */
	uint64_t hits, negative_hits, misses, restarts, lock_waits;
	uint64_t path_hits;	/* of hits and negative_hits: one probe */
	uint64_t negative_misses, complete_answers, readdirs;
	uint64_t entries;	/* cache entries at the end */
	uint64_t checked;	/* outcomes compared */
	uint64_t mismatches;	/* ... that differed */
	uint64_t unchecked;	/* no recorded outcome */
	uint64_t update_errors;	/* memfs refused an update the cache agreed to */
};

/* One run.  0, or -1 with a message in err (bad config, out of memory,
 * a replay that could not finish). */
int rp_run(struct rp_prep *p, const struct rp_config *cfg,
	   struct rp_result *res, char *err, size_t errlen);

#endif /* DCBENCH_TRACE_REPLAY_H */
