/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - dcbench's command table and dispatch: each command lives in its
 * own file (cli.h names them).
 * docs/dcbench.md is the manual, man/dcbench.1 the page.  Exit status:
 * 0 success, 1 failure (or mismatches found), 2 usage error, 3 compare
 * on runs too short to time.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fs/coherence/coherence.h"
#include "dcache.h"
#include "flood.h"
#include "fs/fsmeta.h"
#include "fs/kernbench.h"

static const char usage_text[] =
"usage: dcbench COMMAND [OPTIONS]\n"
"       dcbench --help | --version\n"
"\n"
"  import STRACE_LOG[.xz] -o TRACE [--json]\n"
"        turn an strace log into a trace\n"
"  capture -o TRACE [--json] [--keep-log FILE] -- COMMAND [ARGS...]\n"
"        run COMMAND under strace and import what it did\n"
"  replay TRACE [--threads N] [--copies K] [--mode rcu|global|rwlock|null]\n"
"               [--runs R] [--warmup] [--json]\n"
"        replay the trace through libdcache, check every answer, time it\n"
"  compare TRACE [--threads LIST] [--copies K] [--runs R] [--modes LIST]\n"
"                [--warmup] [--plot FILE.svg|.png] [--json]\n"
"        replay in every mode (and null), interleaved, and compare them\n"
"  micro [OPTIONS]     the micro-benchmark suite (docs/micro.md)\n"
"  torture [OPTIONS]   randomized concurrent test with an oracle (docs/testing.md)\n"
"  memstorm [OPTIONS]  the memory bound under churn\n"
"  flood [OPTIONS]     names made to share one hash chain, and their cost\n"
"  fsmeta --dir D [OPTIONS]\n"
"        metadata load natively, through dcfs and passthrough_ll (root)\n"
"  kernbench --tree KERNEL_TREE [OPTIONS]\n"
"        a kernel build natively and through dcfs, timed as kernbench did\n"
"  coherence --fs KIND[,KIND...] [OPTIONS]\n"
"        how long changes made behind a FUSE mount's back take to show (root)\n"
"\n"
"  -h, --help          this help; 'dcbench COMMAND --help' lists a command's options\n"
"      --version       dcbench's version (that of libdcache it is built with)\n"
"\n"
"docs/dcbench.md and dcbench(1) for more.\n"
"Exit status: 0 success; 1 failure or mismatches; 2 usage error;\n"
"3 compare: the runs were too short to time, goals not judged.\n";

/* The command table: dispatch, and each command's synopsis for usage errors. */
static const struct command {
	const char *name;
	int (*fn)(int, char **);
	const char *help;		/* NULL: the command prints its own */
} commands[] = {
	{ "import", cmd_import, dcb_import_help },
	{ "capture", cmd_capture, dcb_capture_help },
	{ "replay", cmd_replay, dcb_replay_help },
	{ "compare", cmd_compare, dcb_compare_help },
	{ "micro", dcb_micro_main, dcb_micro_help },
	{ "torture", cmd_torture, dcb_torture_help },
	{ "memstorm", cmd_memstorm, dcb_memstorm_help },
	{ "flood", dcb_flood_main, dcb_flood_help },
	{ "fsmeta", dcb_fsmeta_main, dcb_fsmeta_help },
	{ "kernbench", dcb_kernbench_main, dcb_kernbench_help },
	{ "coherence", dcb_coherence_main, dcb_coherence_help },
};

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* The help text of command cmd, or NULL (cli_usage's lookup). */
static const char *help_of(const char *cmd)
{
	const struct command *c = find_command(cmd);

	return c ? c->help : NULL;
}

/* ---- dispatch ----------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const struct command *c;

	cli_set_help(help_of, usage_text);
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dcbench (dcache) %s\n", dc_version());
		return EXIT_OK;
	}
	c = find_command(argv[1]);
	if (c)
		return c->fn(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return cli_usage(NULL, "unknown option '%s'", argv[1]);
	return cli_usage(NULL, "unknown command '%s'", argv[1]);
}
