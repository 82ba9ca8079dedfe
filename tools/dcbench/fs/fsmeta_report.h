/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsmeta_report.h - what `dcbench fsmeta` (fsmeta.h) measured and how it
 * reports it: each configuration's runs, their median and spread, the
 * ratios to native and to the peers, the project's goals, the JSON.
 */
#ifndef DCBENCH_FSMETA_REPORT_H
#define DCBENCH_FSMETA_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fs/fsload.h"
#include "fs/fsmount.h"

#define MAX_REPEAT	1000	/* runs of a configuration at most (--repeat) */

/* One run of one configuration. */
struct run {
	struct fsl_result res;
	double user_s, sys_s;	/* the daemon's CPU time (0 for native) */
	bool daemon_ok;		/* exited 0 when unmounted */
};

/* A file system as --configs names it, and its runs. */
struct config {
	struct fsm_config fs;	/* what is mounted, and how */
	char label[64];		/* native, dcfs-rcu, passthrough_ll@0... */
	struct run *runs;
	unsigned median;	/* index of the median run by total ops/s */
	double med, mean, sd, lo, hi;	/* of the total ops/s */
	uint64_t failed;	/* over all runs */
	bool daemon_ok;		/* in every run */
};

/* The command line, as the report repeats it. */
struct setup {
	const char *dir, *work, *dcfs_opts;
	unsigned threads, passes, mix, repeat;
	double entry_to, attr_to;
	bool dropped;		/* the page cache was dropped before each run */
};

/* Is it a FUSE file system (not native)? */
bool fsmeta_is_fuse(const struct config *c);

/*
 * Summarises each configuration's s->repeat runs and prints the report on
 * rep: the table, the info ratios and the goals; with json, the JSON
 * document on stdout too.  EXIT_OK, or EXIT_FAIL when an operation or a
 * daemon failed (the goals do not count) or stdout could not be written.
 */
int fsmeta_report(FILE *rep, const struct setup *s, struct config *cfg, unsigned n,
		  bool json);

#endif /* DCBENCH_FSMETA_REPORT_H */
