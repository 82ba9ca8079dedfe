/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.h - what dcbench replay and dcbench compare share: a trace read
 * and prepared (struct setup), runs made and gathered by (mode, threads,
 * copies) into a struct agg, and the agg's figures printed and written as
 * JSON.
 */
#ifndef DCBENCH_TRACE_REPORT_H
#define DCBENCH_TRACE_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/json.h"
#include "trace/replay.h"
#include "trace/trace.h"

#define MAX_RUNS	1000
#define MAX_PRINT	5	/* mismatches printed per invocation */
/*
 * A cache mode's median run must last this long to be timed: below it,
 * thread start-up and the clocks' granularity outweigh the lookups, and
 * ratios of such times say nothing.
 */
#define MIN_TIMED_S	0.100
/*
 * replay's and compare's JSON "schema_version": in 2, cache_s is the time
 * measured inside the ops, cpu_over_null_s the CPU time beyond null's.
 */
#define RP_SCHEMA_VERSION	2
/* What the time in the cache holds, for the report. */
#define CACHE_TIME_IS	"wall time inside cache calls, lock waits in, memfs updates out"

/* R runs of one (mode, threads, copies), and what is derived from them. */
struct agg {
	int mode;
	unsigned threads, copies, runs, done;
	bool over;			/* threads > cores */
	bool too_short;			/* a cache mode's runs under MIN_TIMED_S */
	struct rp_result *r;		/* runs */
	/* derived (NAN: unmeasured) */
	double elapsed_s, elapsed_mean, elapsed_sd;
	double user_s, sys_s, cpu_s, cpu_sd, cpu_pct;
	double cache_s, cache_sd;		/* measured inside the ops */
	double cpu_over_null_s, cpu_over_null_sd;	/* cpu_s beyond null's */
	double lookups_per_s, ns_per_lookup, ns_per_component, cpu_ns_per_lookup;
	double hit_share, negative_share, path_hit_share;
	uint64_t lookups, hits, negative_hits, misses, restarts, lock_waits,
		 entries, components, path_hits;
	uint64_t negative_misses, complete_answers, readdirs;
	uint64_t checked, mismatches, unchecked, update_errors;
};

struct setup {
	const char *cmd, *file;
	FILE *rep;		/* the report: stdout, or stderr when stdout carries JSON */
	struct dct_trace *t;
	struct rp_prep *p;
	unsigned complete_after;	/* the cache's option (0: its default) */
	uint64_t warm_wrong;	/* mismatches and failed updates in warm-ups */
};

/* The options replay and compare share. */
struct run_opts {
	unsigned copies;	/* 0: as many as threads */
	unsigned runs;
	unsigned complete_after;	/* dc_options.complete_after */
	bool warmup, json;
};

/*
 * -h/--help (help printed), --copies, --runs, --warmup, --complete-after
 * and --json, which replay and compare share, into o: CLI_NONE, CLI_TAKEN, or CLI_EXIT with
 * the exit status in *rc (cli.h).
 */
int run_opt(const char *cmd, const char *help, int argc, char **argv, int *i,
	    struct run_opts *o, int *rc);

/*
 * An argument no option of cmd took: the trace (*file), once.  0, or
 * EXIT_USAGE with a message (an unknown option, a second trace).
 */
int report_trace_arg(const char *cmd, char *arg, const char **file);
/*
 * Read and prepare s->file, print what preparation found; 0, EXIT_USAGE
 * when no trace was named, or EXIT_FAIL.
 */
int report_open(struct setup *s);
void report_close(struct setup *s);
/* One run into a (NULL: a warm-up, not kept but for its mismatches and
 * failed updates, added to s->warm_wrong).  0 or EXIT_FAIL. */
int report_run(struct setup *s, int mode, unsigned threads, unsigned copies,
	       struct agg *a, unsigned *printed);

/* Fill in what a's runs say; null: the null mode's aggregate, or NULL. */
void report_derive(struct agg *a, const struct agg *null);
/* a's figures, a few lines. */
void report_agg(FILE *f, const struct agg *a);
/* A run too short to time, said the same way everywhere; then what follows. */
void report_too_short(FILE *f, const struct dct_trace *t, const struct agg *a,
		      const char *then);
/* A rate as "1.23M", "4.5k", "678" ("-" for NAN), into buf. */
const char *report_fmt_rate(double v, char *buf, size_t size);

void report_agg_json(struct json *j, const struct agg *a);
/* The trace and what preparation found, as members of the open object. */
void report_info_json(struct json *j, const char *file, const struct dct_trace *t,
		      const struct rp_info *in);

/*
 * compare --plot: lookups/s against the thread counts tl[], one line per
 * cache mode in modes[], drawn into file (.svg or .png).  0; 1 when
 * gnuplot is not installed (a skip); or -1; said why on stderr.
 */
int compare_plot(const char *file, const char *trace, struct agg *ag, unsigned nag,
		 const unsigned *tl, unsigned nt, const int *modes, unsigned nm,
		 unsigned copies);

#endif /* DCBENCH_TRACE_REPORT_H */
