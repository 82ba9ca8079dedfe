/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cli.h - what dcbench's commands share (main.c): option parsing helpers
 * and the exit codes.  Every command prints human text to stderr, and with
 * --json exactly one JSON document to stdout.
 */
#ifndef DCBENCH_CLI_H
#define DCBENCH_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_OK		0
#define EXIT_FAIL	1	/* the command ran and failed (or found mismatches) */
#define EXIT_USAGE	2	/* bad command line */
#define EXIT_SHORT	3	/* compare: runs too short to time, goals not judged */

/*
 * Where cli_usage finds a command's help (its synopsis is the first
 * paragraph) and dcbench's own usage; main() sets them first.
 */
void cli_set_help(const char *(*help_of)(const char *cmd), const char *usage);

/*
 * "dcbench CMD: message", CMD's synopsis and a hint at --help on stderr
 * (CMD NULL: dcbench itself); returns EXIT_USAGE.
 */
int cli_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Option scanning: *i indexes argv.  If argv[*i] is --NAME or --NAME=VALUE,
 * returns true; for an option with a value, *val gets it (the next argument
 * when not given with '='; *i is advanced past it).  A missing value is a
 * usage error: *bad is set to EXIT_USAGE and a message printed.
 */
bool cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
	     bool has_value, const char **val, int *bad);

/*
 * What a helper that scans options several commands share answers:
 * argv[*i] was none of its options, was one and is taken, or the command
 * must exit (after --help, or a usage error) with the status it gives.
 */
enum { CLI_NONE, CLI_TAKEN, CLI_EXIT };

/* A number in [lo, hi]; 0, or EXIT_USAGE with a message. */
int cli_uint(const char *cmd, const char *opt, const char *s, unsigned lo,
	     unsigned hi, unsigned *out);
int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo,
	    uint64_t hi, uint64_t *out);
/* Seconds from 0 to 86400 (a day); 0, or EXIT_USAGE with a message. */
int cli_seconds(const char *cmd, const char *opt, const char *s, double *out);
/* A comma-separated list of such numbers, distinct, at most max; 0 or
 * EXIT_USAGE. */
int cli_uint_list(const char *cmd, const char *opt, const char *s, unsigned lo,
		  unsigned hi, unsigned *out, unsigned max, unsigned *n);

/* Should progress be shown (stderr is a terminal)? */
bool cli_progress(void);
/* Online processors (sysconf), at least 1. */
unsigned cli_cores(void);

/* The first paragraph of a --help text: its usage lines. */
void cli_synopsis(FILE *f, const char *help);

/* Each command's --help text, in the command's own file. */
extern const char dcb_import_help[], dcb_capture_help[], dcb_replay_help[],
		  dcb_compare_help[], dcb_flood_help[], dcb_fsmeta_help[],
		  dcb_kernbench_help[], dcb_coherence_help[], dcb_torture_help[],
		  dcb_memstorm_help[], dcb_micro_help[];

int cmd_import(int argc, char **argv);
int cmd_capture(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_compare(int argc, char **argv);
/* stress.c: the torture and memstorm engines of tests/torture/ */
int cmd_torture(int argc, char **argv);
int cmd_memstorm(int argc, char **argv);
/* micro/cmd.c: the micro-benchmark suite (docs/micro.md) */
int dcb_micro_main(int argc, char **argv);

#endif /* DCBENCH_CLI_H */
