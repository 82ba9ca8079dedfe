/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * import.h - turn an strace log into a dcbench trace.
 *
 * The log is what `strace -f -y -qq -e trace=%file,%process,chdir,fchdir`
 * writes: one line per system call, prefixed with the pid.  The importer
 * reads it streaming (plain or xz), follows each process's working
 * directory, makes every path absolute and writes a trace (trace.h).
 * The line parser it is built on is in strace.h.
 */
#ifndef DCBENCH_TRACE_IMPORT_H
#define DCBENCH_TRACE_IMPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/strace.h"
#include "trace/trace.h"

#define DCT_TOP_UNKNOWN	8	/* unknown syscall names kept in the summary */

struct dct_import_summary {
	uint64_t lines;			/* lines read, all kinds */
	uint64_t blank;			/* ... of them empty or white space */
	uint64_t bytes;			/* bytes of log text (decompressed) */
	uint64_t processes;
	uint64_t ops;			/* ops written, all kinds */
	uint64_t ops_by_kind[DCT_NKINDS];
	uint64_t path_ops;		/* ops that take a path */
	uint64_t path_ops_failed;	/* ... with an error outcome */
	uint64_t path_ops_enoent;	/* ... with ENOENT */
	uint64_t distinct_paths;	/* string-table entries */
	uint64_t malformed;		/* lines we could not parse */
	uint64_t malformed_first_line;	/* line number of the first, 0 if none */
	uint64_t unprefixed;		/* malformed for want of a pid prefix alone */
	uint64_t unknown_calls;		/* calls we know nothing about */
	uint64_t ignored_calls;		/* known calls without a path lookup */
	uint64_t signals;		/* "--- SIGxxx ---" lines */
	uint64_t skipped_fd_calls;	/* "" or NULL path: no lookup was made */
	uint64_t unresolved;		/* relative paths with no known directory */
	uint64_t too_long;		/* paths over DCT_PATH_MAX once absolute */
	uint64_t restarted;		/* ERESTART*: the call is made again */
	uint64_t unfinished_at_eof;	/* <unfinished ...> never resumed */
	uint64_t cwd_corrections;	/* AT_FDCWD<dir> differed from our cwd */
	uint64_t orphans;		/* processes with no clone seen, bar the first */
	uint64_t wait_unmatched;	/* wait4 returned a pid that is no child */
	struct {
		char name[24];
		uint64_t count;
	} unknown[DCT_TOP_UNKNOWN];	/* the most frequent unknown calls */
};

/*
 * A log is refused when it is empty, is no strace log, has a line
 * without the pid strace -f -o puts in front, has no path lookup, or when
 * more than DCT_MALFORMED_PERCENT percent of its non-blank lines are
 * malformed: a trace made of what is left would measure something else.
 */
#define DCT_MALFORMED_PERCENT	50

/*
 * Import log (plain or .xz, told apart by magic bytes) into out_trace.
 * progress, if not NULL, gets a line now and then.  Returns 0 or -1 with a
 * message in err.  A few malformed lines are counted in *sum; a log that
 * dct_import_usable() refuses is an error, and out_trace is then left as
 * it was.  out_trace is opened before the log is read, so that a place
 * that cannot be written fails at once.
 */
int dct_import(const char *log, const char *out_trace,
	       struct dct_import_summary *sum, FILE *progress,
	       char *err, size_t errlen);

/* 0 if a log with this summary makes a trace worth replaying; else -1 and why. */
int dct_import_usable(const struct dct_import_summary *sum, char *err, size_t errlen);

/* Can out_trace be written?  Probes it as dct_import would; 0, or -1 and why. */
int dct_import_check_output(const char *out_trace, char *err, size_t errlen);

void dct_import_summary_print(FILE *f, const struct dct_import_summary *sum);
/* The anomaly counters on one "# ..." line, for tests to compare. */
void dct_import_summary_brief(FILE *f, const struct dct_import_summary *sum);

/*
 * The same, one line at a time, into memory: for tests and the fuzzer.
 * line needs no NUL and must not contain the newline.
 */
struct dct_importer;
struct dct_importer *dct_importer_new(void);
void dct_importer_line(struct dct_importer *im, const char *line, size_t len);
int dct_importer_finish(struct dct_importer *im, struct dct_trace **out,
			struct dct_import_summary *sum, char *err, size_t errlen);
void dct_importer_free(struct dct_importer *im);

#endif /* DCBENCH_TRACE_IMPORT_H */
