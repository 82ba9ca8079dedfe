// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stress.c - `dcbench torture` and `dcbench memstorm`: the command lines
 * of the test engines in tests/torture/, for runs longer and larger than
 * make check's (`make torture`, docs/testing.md).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "dcache.h"
#include "torture/memstorm.h"
#include "torture/torture.h"

const char dcb_torture_help[] =
"usage: dcbench torture [--seconds S] [--threads N] [--mode rcu|global|rwlock|all]\n"
"                       [--seed X] [--max-entries N] [--fail-alloc N|rand:N[:SEED]]\n"
"\n"
"Writers change a small memfs namespace and tell the cache; readers look\n"
"names up; an oracle checks every answer (docs/testing.md).  Exit 1 on any\n"
"violation.  One mode in three (chosen by seed and mode) runs with TTLs of\n"
"1-5 ms, so that expiry and revalidation race the updates.\n"
"  --seconds S      run S seconds per mode (default 10)\n"
"  --threads N      threads, 2 to 256, a third of them writers (default 6)\n"
"  --mode M         one mode, or all (default)\n"
"  --seed X         each thread's choices (default: the time)\n"
"  --max-entries N  the cache's cap, at least 8 (default 48; negative\n"
"                   entries N/4)\n"
"  --fail-alloc N   during the run every Nth allocation of the library fails;\n"
"  --fail-alloc rand:N[:SEED]\n"
"                   each fails with probability 1/N, drawn from SEED (default\n"
"                   the --seed).  Every failing call must return -ENOMEM, an\n"
"                   update so forgets the names it touches; the answers, the\n"
"                   end-of-run checks (consistency, references, no leak) are\n"
"                   as strict as without.  Prints how many failed.\n"
"  -h, --help       this help\n"
"\n"
"Exit status: 0 no violation; 1 a violation; 2 usage error.\n";

const char dcb_memstorm_help[] =
"usage: dcbench memstorm [--names N] [--cap N] [--threads N]\n"
"                        [--mode rcu|global|rwlock] [--json]\n"
"\n"
"Resolves N distinct paths, half of them missing, through a cache capped\n"
"at --cap entries, and samples the cache's bytes and the process's\n"
"resident memory: both must stay under the bound (cap x 256 bytes, the\n"
"buckets and 4 MiB).\n"
"\n"
"  --names N    distinct paths (default 10000000)\n"
"  --cap N      the cache's max_entries, at least 64 (default 100000)\n"
"  --threads N  resolving threads, 1 to 256 (default 2)\n"
"  --mode M     rcu, global or rwlock (default rcu)\n"
"  --json       one JSON document on stdout\n"
"  -h, --help   this help\n"
"\n"
"Exit status: 0 the bound held; 1 it did not, or a failure; 2 usage error.\n";

/* --mode M (or "all" where all_ok): 0, or EXIT_USAGE with a message. */
static int parse_mode(const char *cmd, const char *s, bool all_ok, enum dc_mode *m)
{
	if ((all_ok && !strcmp(s, "all")) || !dc_mode_parse(s, m))
		return 0;
	return cli_usage(cmd, "unknown mode '%s'", s);
}

int cmd_torture(int argc, char **argv)
{
	const char *cmd = "torture", *mode = "all";
	struct torture_opts o = { .seconds = 10, .threads = 6, .max_entries = 48,
				  .max_negative = 12, .log = stderr };
	bool fail_seeded = false;
	enum dc_mode one;
	int bad = 0, failed = 0;
	unsigned u;

	o.seed = (uint64_t)time(NULL);
	for (int i = 1; i < argc && !bad; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(cmd, argc, argv, &i, "help", false, &v, &bad)) {
			if (!bad) {
				fputs(dcb_torture_help, stdout);
				return EXIT_OK;
			}
		} else if (cli_opt(cmd, argc, argv, &i, "seconds", true, &v, &bad)) {
			if (!bad && !(bad = cli_seconds(cmd, "--seconds", v, &o.seconds)) &&
			    o.seconds <= 0)
				bad = cli_usage(cmd, "--seconds must be more than 0");
		} else if (cli_opt(cmd, argc, argv, &i, "threads", true, &v, &bad)) {
			if (!bad && !(bad = cli_uint(cmd, "--threads", v, 2, 256, &u)))
				o.threads = (int)u;
		} else if (cli_opt(cmd, argc, argv, &i, "mode", true, &v, &bad)) {
			if (!bad && !(bad = parse_mode(cmd, v, true, &one)))
				mode = v;
		} else if (cli_opt(cmd, argc, argv, &i, "seed", true, &v, &bad)) {
			if (!bad)
				bad = cli_u64(cmd, "--seed", v, 0, UINT64_MAX, &o.seed);
		} else if (cli_opt(cmd, argc, argv, &i, "max-entries", true, &v, &bad)) {
			if (!bad && !(bad = cli_u64(cmd, "--max-entries", v, 8, UINT64_MAX,
						     &o.max_entries)))
				o.max_negative = o.max_entries / 4;
		} else if (cli_opt(cmd, argc, argv, &i, "fail-alloc", true, &v, &bad)) {
			if (bad)
				break;
			if (torture_parse_fail(v, &o))
				bad = cli_usage(cmd, "bad --fail-alloc '%s' (N, rand:N or rand:N:SEED)", v);
			else	/* v is "rand:N[:SEED]" when fail_every < 0 */
				fail_seeded = o.fail_every < 0 && strchr(v + 5, ':');
		} else {
			bad = cli_usage(cmd, argv[i][0] == '-' ? "unknown option '%s'"
				      : "unexpected argument '%s'", argv[i]);
		}
	}
	if (bad)
		return bad;
	if (!fail_seeded)
		o.fail_seed = o.seed;
	for (int m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		struct torture_result r;

		if (strcmp(mode, "all") && strcmp(mode, dc_mode_name((enum dc_mode)m)))
			continue;
		o.mode = (enum dc_mode)m;
		memset(&r, 0, sizeof(r));
		failed |= torture_run(&o, &r) != 0;
		torture_print_result(stdout, &o, &r);
		fflush(stdout);
	}
	return failed ? EXIT_FAIL : EXIT_OK;
}

int cmd_memstorm(int argc, char **argv)
{
	const char *cmd = "memstorm";
	struct memstorm_opts o = { .names = 10000000, .cap = 100000, .threads = 2,
				   .mode = DC_MODE_RCU };
	struct memstorm_result r;
	int bad = 0;
	unsigned u;

	for (int i = 1; i < argc && !bad; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(cmd, argc, argv, &i, "help", false, &v, &bad)) {
			if (!bad) {
				fputs(dcb_memstorm_help, stdout);
				return EXIT_OK;
			}
		} else if (cli_opt(cmd, argc, argv, &i, "names", true, &v, &bad)) {
			if (!bad)
				bad = cli_u64(cmd, "--names", v, 1, UINT64_MAX, &o.names);
		} else if (cli_opt(cmd, argc, argv, &i, "cap", true, &v, &bad)) {
			if (!bad)
				bad = cli_u64(cmd, "--cap", v, 64, UINT64_MAX, &o.cap);
		} else if (cli_opt(cmd, argc, argv, &i, "threads", true, &v, &bad)) {
			if (!bad && !(bad = cli_uint(cmd, "--threads", v, 1, 256, &u)))
				o.threads = (int)u;
		} else if (cli_opt(cmd, argc, argv, &i, "mode", true, &v, &bad)) {
			if (!bad)
				bad = parse_mode(cmd, v, false, &o.mode);
		} else if (cli_opt(cmd, argc, argv, &i, "json", false, &v, &bad)) {
			o.json = true;
		} else {
			bad = cli_usage(cmd, argv[i][0] == '-' ? "unknown option '%s'"
				      : "unexpected argument '%s'", argv[i]);
		}
	}
	return bad ? bad : memstorm_run(&o, &r);
}
