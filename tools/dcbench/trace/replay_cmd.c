/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay_cmd.c - dcbench replay: one mode, thread count and number of
 * copies, R runs of a trace, every answer checked.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace/report.h"

const char dcb_replay_help[] =
"usage: dcbench replay TRACE [OPTIONS]\n"
"\n"
"  --threads N    worker threads (default 1)\n"
"  --copies K     independent copies of the trace replayed at once\n"
"                 (default: as many as threads)\n"
"  --mode M       rcu, global, rwlock or null (default rcu)\n"
"  --runs R       timed runs, each with a fresh namespace and cache (default 5)\n"
"  --warmup       one untimed run first (its mismatches count as the\n"
"                 timed runs' do)\n"
"  --complete-after N|off  list a directory after N backend ENOENT answers\n"
"                 in it (default 1), or never\n"
"  --json         one JSON document on stdout\n"
"  -h, --help     this help\n"
"\n"
"Every answer is checked against the outcome recorded in the trace; the\n"
"first mismatches are printed and the exit status is 1 if there were any.\n"
"Time in the cache = wall time from the start to the end of each path op,\n"
"summed over threads, less the memfs updates it applied: the cache calls\n"
"and their time asleep on locks.  Every mode, null too, pays the same two\n"
"clock stamps per op.  Runs shorter than 100 ms are too short to time, and\n"
"said to be.\n"
"Exit status: 0 no mismatch; 1 mismatches, or a failure; 2 usage error.\n";

int cmd_replay(int argc, char **argv)
{
	const char *cmd = "replay";
	struct setup s = { .cmd = cmd };
	struct run_opts o = { .runs = 5 };
	unsigned threads = 1, printed = 0;
	int mode = RP_RCU, bad = 0, rc = EXIT_OK;
	struct agg a;
	FILE *rep;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		switch (run_opt(cmd, dcb_replay_help, argc, argv, &i, &o, &rc)) {
		case CLI_EXIT:
			return rc;
		case CLI_TAKEN:
			continue;
		}
		if (cli_opt(cmd, argc, argv, &i, "threads", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(cmd, "--threads", v, 1, RP_MAX_THREADS, &threads);
		} else if (cli_opt(cmd, argc, argv, &i, "mode", true, &v, &bad)) {
			if (!bad && (mode = rp_mode_parse(v)) < 0)
				bad = cli_usage(cmd, "--mode is rcu, global, rwlock or null, not '%s'", v);
		} else {
			bad = report_trace_arg(cmd, argv[i], &s.file);
		}
		if (bad)
			return bad;
	}
	if (!o.copies)
		o.copies = threads;
	s.rep = rep = o.json ? stderr : stdout;
	s.complete_after = o.complete_after;
	if ((rc = report_open(&s)))
		return rc;

	memset(&a, 0, sizeof(a));
	a.mode = mode;
	a.threads = threads;
	a.copies = o.copies;
	a.runs = o.runs;
	a.over = threads > cli_cores();
	a.r = calloc(o.runs, sizeof(*a.r));
	if (!a.r) {
		fprintf(stderr, "dcbench replay: out of memory\n");
		report_close(&s);
		return EXIT_FAIL;
	}
	if (o.warmup && report_run(&s, mode, threads, o.copies, NULL, &printed))
		rc = EXIT_FAIL;
	for (unsigned r = 0; !rc && r < o.runs; r++) {
		if (cli_progress())
			fprintf(stderr, "\r  run %u of %u ", r + 1, o.runs);
		if (report_run(&s, mode, threads, o.copies, &a, &printed))
			rc = EXIT_FAIL;
	}
	if (cli_progress())
		fprintf(stderr, "\r%20s\r", "");
	if (!rc) {
		report_derive(&a, NULL);
		fprintf(rep, "%s, %u thread%s, %u cop%s%s:\n", rp_mode_name(mode), threads,
			threads == 1 ? "" : "s", o.copies, o.copies == 1 ? "y" : "ies",
			a.over ? " (oversubscribed)" : "");
		report_agg(rep, &a);
		if (a.too_short)
			report_too_short(rep, s.t, &a, "the times above are noise");
		fprintf(rep, "checked %llu outcomes: %llu mismatches (%llu unchecked)\n",
			(unsigned long long)a.checked, (unsigned long long)a.mismatches,
			(unsigned long long)a.unchecked);
		if (s.warm_wrong)
			fprintf(rep, "the warm-up run: %llu mismatches and failed updates\n",
				(unsigned long long)s.warm_wrong);
		if (o.json) {
			struct json j;

			json_init(&j, stdout);
			json_obj_begin(&j);
			json_kint(&j, "schema_version", RP_SCHEMA_VERSION);
			json_kstr(&j, "command", "replay");
			report_info_json(&j, s.file, s.t, rp_get_info(s.p));
			json_key(&j, "results");
			json_arr_begin(&j);
			report_agg_json(&j, &a);
			json_arr_end(&j);
			json_obj_end(&j);
			if (json_finish(&j)) {
				fprintf(stderr, "dcbench replay: cannot write to stdout\n");
				rc = EXIT_FAIL;
			}
		}
		if (a.mismatches || a.update_errors || s.warm_wrong)
			rc = EXIT_FAIL;
	}
	free(a.r);
	report_close(&s);
	return rc;
}
