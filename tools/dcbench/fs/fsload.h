/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsload.h - a metadata load on a directory tree (a plain directory or a
 * FUSE mount of one), the way a build hits a file system, for
 * `dcbench fsmeta`.  Three phases, each timed on its own with N threads
 * released together:
 *
 *   walk  a parallel readdir walk of the tree (a shared queue of
 *         directories); every entry lstat()ed by its full path.  Ops: one
 *         per directory opened, one per lstat.
 *   stat  P passes of lstat() over every path the walk found, by full
 *         path (so every component is a lookup), dealt round-robin.
 *   mix   each thread in a scratch directory of its own under the tree
 *         (.fsmeta.PID.N), K times: create (O_CREAT|O_EXCL), rename,
 *         lstat the new name, lstat the old one (ENOENT expected),
 *         unlink.  Five ops each.
 *
 * A failed operation is one that returned an error it should not have.
 * The walk and the stat phase skip names starting with ".fsmeta.".
 */
#ifndef DCBENCH_FSLOAD_H
#define DCBENCH_FSLOAD_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

enum { FSL_WALK, FSL_STAT, FSL_MIX, FSL_NPHASES };

extern const char *const fsl_phase_names[FSL_NPHASES];	/* "walk", "stat", "mix" */

struct fsl_options {
	const char *dir;
	unsigned threads;	/* >= 1 */
	unsigned passes;	/* stat passes */
	unsigned mix;		/* mix rounds per thread */
	/* if not NULL: once *stop is non-zero the threads stop early and
	 * fsl_run returns -1 without a message (a signal handler sets it) */
	const volatile sig_atomic_t *stop;
};

struct fsl_phase {
	uint64_t ops, failed;
	double seconds;		/* first thread's start to last one's end */
	char first_error[192];	/* "lstat PATH: reason" of one failure, or "" */
};

struct fsl_result {
	struct fsl_phase phase[FSL_NPHASES];
	struct fsl_phase total;	/* ops and failures summed, seconds summed */
	size_t entries;		/* what the walk found */
};

/* ops / seconds, 0 when nothing was timed. */
double fsl_rate(const struct fsl_phase *p);

/*
 * Runs the three phases on o->dir.  Returns 0 when the load ran (failed
 * operations are counted in *r, not an error), -1 with a message on stderr
 * when it could not (threads, memory), -1 without one when stopped.  The
 * mix's scratch directories are removed before it returns, whatever
 * happened (as far as o->dir still answers: see fsl_clean_scratch).
 */
int fsl_run(const struct fsl_options *o, struct fsl_result *r);

/*
 * Removes the scratch directories (.fsmeta.PID.N, one level of files) that
 * this process or a process no longer alive left in dir: after a daemon
 * died under the mix, or an interrupted run.  0, or -1 with a message if
 * one could not be removed.
 */
int fsl_clean_scratch(const char *dir);

#endif /* DCBENCH_FSLOAD_H */
