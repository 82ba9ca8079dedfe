// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * capture.c - `dcbench import` and `dcbench capture`: an strace log made
 * into a trace (import.h does the reading), and a command run under
 * strace with its log imported.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "trace/import.h"
#include "common/json.h"
#include "common/proc.h"
#include "trace/trace.h"

const char dcb_import_help[] =
"usage: dcbench import STRACE_LOG[.xz] -o TRACE [--json]\n"
"\n"
"Reads a log written by strace -f -y -qq -e trace=%file,%process,chdir,fchdir\n"
"-o LOG (plain or xz; '-' reads stdin) and writes the binary trace\n"
"(docs/trace-format.md).  The summary goes to stderr.\n"
"\n"
"  -o, --output TRACE  the trace to write (required); left as it was if the\n"
"                      import fails\n"
"      --json          the summary as one JSON document on stdout\n"
"  -h, --help          this help\n"
"\n"
"A log is refused (exit 1) when it is empty, is no strace log, has lines\n"
"without the pid strace -f puts in front, has no path lookup, or when more\n"
"than half of its non-blank lines are malformed.\n"
"Exit status: 0 imported; 1 refused, unreadable or not written; 2 usage error.\n";

const char dcb_capture_help[] =
"usage: dcbench capture -o TRACE [--json] [--keep-log FILE] -- COMMAND [ARGS...]\n"
"\n"
"Runs COMMAND under strace -f -y -qq -e trace=%file,%process,chdir,fchdir\n"
"and imports the log into TRACE, as dcbench import does.\n"
"\n"
"  -o, --output TRACE  the trace to write (required)\n"
"      --keep-log FILE\n"
"                      keep the strace log in FILE (else it is a temporary\n"
"                      file, removed)\n"
"      --json          the summary as one JSON document on stdout, with the\n"
"                      command's exit status\n"
"  -h, --help          this help\n"
"\n"
"Needs strace (Debian package: strace).\n"
"Exit status: 0 success; 1 the command failed (the trace is still written),\n"
"or the log could not be imported; 2 usage error.\n";

/* ---- import ------------------------------------------------------------------- */

/* The summary's counters, in the order the JSON document gives them. */
#define FIELD(name)	{ #name, offsetof(struct dct_import_summary, name) }
static const struct {
	const char *key;
	size_t off;
} head_fields[] = {
	FIELD(lines), FIELD(blank), FIELD(bytes), FIELD(processes), FIELD(ops),
}, tail_fields[] = {
	FIELD(path_ops), FIELD(path_ops_failed), FIELD(path_ops_enoent),
	FIELD(distinct_paths), FIELD(malformed), FIELD(malformed_first_line),
	FIELD(unknown_calls), FIELD(ignored_calls), FIELD(signals),
	FIELD(skipped_fd_calls), FIELD(unresolved), FIELD(too_long), FIELD(restarted),
	FIELD(unfinished_at_eof), FIELD(cwd_corrections), FIELD(orphans),
	FIELD(wait_unmatched),
};
#undef FIELD

static uint64_t field_of(const struct dct_import_summary *s, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)s + off, sizeof(v));
	return v;
}

static void summary_json(struct json *j, const struct dct_import_summary *s)
{
	for (size_t i = 0; i < sizeof(head_fields) / sizeof(head_fields[0]); i++)
		json_kuint(j, head_fields[i].key, field_of(s, head_fields[i].off));
	json_key(j, "ops_by_kind");
	json_obj_begin(j);
	for (unsigned k = 0; k < DCT_NKINDS; k++)
		json_kuint(j, dct_kind_name(k), s->ops_by_kind[k]);
	json_obj_end(j);
	for (size_t i = 0; i < sizeof(tail_fields) / sizeof(tail_fields[0]); i++) {
		/* no malformed line: its number is null, not 0 */
		if (tail_fields[i].off == offsetof(struct dct_import_summary,
						   malformed_first_line) && !s->malformed)
			json_knull(j, tail_fields[i].key);
		else
			json_kuint(j, tail_fields[i].key, field_of(s, tail_fields[i].off));
	}
	json_key(j, "unknown");
	json_arr_begin(j);
	for (int i = 0; i < DCT_TOP_UNKNOWN && s->unknown[i].count; i++) {
		json_obj_begin(j);
		json_kstr(j, "name", s->unknown[i].name);
		json_kuint(j, "count", s->unknown[i].count);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Import log into trace; prints the summary.  An exit status. */
static int do_import(const char *cmd, const char *log, const char *trace, bool json,
		     int command_status)
{
	struct dct_import_summary sum;
	char err[512];

	memset(&sum, 0, sizeof(sum));
	if (dct_import(log, trace, &sum, cli_progress() ? stderr : NULL,
		       err, sizeof(err))) {
		fprintf(stderr, "dcbench %s: %s\n", cmd, err);
		return EXIT_FAIL;
	}
	fprintf(stderr, "trace:        %s\n", trace);
	dct_import_summary_print(stderr, &sum);
	if (json) {
		struct json j;

		json_init(&j, stdout);
		json_obj_begin(&j);
		json_kint(&j, "schema_version", JSON_SCHEMA_VERSION);
		json_kstr(&j, "command", cmd);
		json_kstr(&j, "log", log);
		json_kstr(&j, "trace", trace);
		if (command_status >= 0)
			json_kint(&j, "command_status", command_status);
		json_key(&j, "summary");
		json_obj_begin(&j);
		summary_json(&j, &sum);
		json_obj_end(&j);
		json_obj_end(&j);
		if (json_finish(&j)) {
			fprintf(stderr, "dcbench %s: cannot write to stdout\n", cmd);
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}

/*
 * -h/--help, -o/--output TRACE and --json, which import and capture share:
 * CLI_TAKEN when argv[*i] was one of them (*out or *json set), CLI_NONE
 * when it is none of them, CLI_EXIT with the status to exit with in *rc
 * after the help or a usage error.
 */
static int shared_opt(const char *cmd, const char *help, int argc, char **argv,
		      int *i, const char **out, bool *json, int *rc)
{
	const char *v = NULL;
	int bad = 0;

	if (!strcmp(argv[*i], "-h") || cli_opt(cmd, argc, argv, i, "help", false, &v, &bad)) {
		if (!bad)
			fputs(help, stdout);
		*rc = bad ? bad : EXIT_OK;
		return CLI_EXIT;
	}
	if (!strcmp(argv[*i], "-o") || cli_opt(cmd, argc, argv, i, "output", true, &v, &bad)) {
		if (!bad && !v) {
			if (*i + 1 < argc)
				v = argv[++*i];
			else
				bad = cli_usage(cmd, "-o needs a file name");
		}
	} else if (cli_opt(cmd, argc, argv, i, "json", false, &v, &bad)) {
		*json = !bad;
	} else {
		return CLI_NONE;
	}
	if (bad) {
		*rc = bad;
		return CLI_EXIT;
	}
	if (v)
		*out = v;
	return CLI_TAKEN;
}

int cmd_import(int argc, char **argv)
{
	const char *cmd = "import", *log = NULL, *out = NULL;
	bool json = false;
	int rc;

	for (int i = 1; i < argc; i++) {
		switch (shared_opt(cmd, dcb_import_help, argc, argv, &i, &out, &json, &rc)) {
		case CLI_EXIT:
			return rc;
		case CLI_TAKEN:
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		if (log)
			return cli_usage(cmd, "one log at a time ('%s' and '%s')", log, argv[i]);
		log = argv[i];
	}
	if (!log)
		return cli_usage(cmd, "which strace log?");
	if (!out)
		return cli_usage(cmd, "where to? (-o TRACE)");
	return do_import(cmd, log, out, json, -1);
}

/* ---- capture ------------------------------------------------------------------ */

int cmd_capture(int argc, char **argv)
{
	const char *cmd = "capture", *out = NULL, *keep = NULL;
	char tmplog[] = "/tmp/dcbench-capture.XXXXXX";
	struct sigaction ign, oint, oquit;
	char err[512];
	bool json = false;
	int bad = 0, first = -1, fd, status = 0, rc;
	int execpipe[2] = { -1, -1 };
	bool execfailed = false;
	struct stat lst;
	pid_t pid;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--")) {
			first = i + 1;
			break;
		}
		switch (shared_opt(cmd, dcb_capture_help, argc, argv, &i, &out, &json, &rc)) {
		case CLI_EXIT:
			return rc;
		case CLI_TAKEN:
			continue;
		}
		if (cli_opt(cmd, argc, argv, &i, "keep-log", true, &v, &bad)) {
			if (bad)
				return bad;
			keep = v;
		} else if (argv[i][0] == '-') {
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		} else {
			return cli_usage(cmd, "put the command after '--' (got '%s')", argv[i]);
		}
	}
	if (!out)
		return cli_usage(cmd, "where to? (-o TRACE)");
	if (first < 0 || first >= argc)
		return cli_usage(cmd, "which command? (-- COMMAND [ARGS...])");
	/* before the command runs, which may take hours */
	if (dct_import_check_output(out, err, sizeof(err))) {
		fprintf(stderr, "dcbench capture: %s\n", err);
		return EXIT_FAIL;
	}
	if (!proc_on_path("strace")) {
		fprintf(stderr, "dcbench capture: strace is not installed (not found in "
			"$PATH); install it: apt-get install strace (Debian package "
			"'strace')\n");
		return EXIT_FAIL;
	}
	if (keep) {
		fd = open(keep, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) {
			fprintf(stderr, "dcbench capture: %s: %s\n", keep, strerror(errno));
			return EXIT_FAIL;
		}
	} else {
		fd = mkstemp(tmplog);
		if (fd < 0) {
			fprintf(stderr, "dcbench capture: cannot make a temporary file: %s\n",
				strerror(errno));
			return EXIT_FAIL;
		}
	}
	close(fd);
	{
		const char *log = keep ? keep : tmplog;
		int n = argc - first;
		char **av = calloc((size_t)n + 10, sizeof(*av));
		int k = 0;

		if (!av) {
			fprintf(stderr, "dcbench capture: out of memory\n");
			if (!keep)
				unlink(tmplog);
			return EXIT_FAIL;
		}
		av[k++] = "strace";
		av[k++] = "-f";
		av[k++] = "-y";
		av[k++] = "-qq";
		av[k++] = "-e";
		av[k++] = "trace=%file,%process,chdir,fchdir";
		av[k++] = "-o";
		av[k++] = (char *)log;
		av[k++] = "--";
		for (int i = first; i < argc; i++)
			av[k++] = argv[i];
		av[k] = NULL;

		/* like system(): the command gets ^C, we wait for it */
		memset(&ign, 0, sizeof(ign));
		ign.sa_handler = SIG_IGN;
		sigaction(SIGINT, &ign, &oint);
		sigaction(SIGQUIT, &ign, &oquit);
		fflush(NULL);
		/* strace that could not be run says so down this pipe, which
		 * its exec closes: the command's own exit status (127 from a
		 * shell that found no such command) is no such sign */
		if (pipe2(execpipe, O_CLOEXEC) < 0)
			pid = -1;
		else
			pid = fork();
		if (pid == 0) {
			int e;
			ssize_t w;

			sigaction(SIGINT, &oint, NULL);
			sigaction(SIGQUIT, &oquit, NULL);
			execvp("strace", av);
			e = errno;
			fprintf(stderr, "dcbench capture: cannot run strace: %s\n",
				strerror(e));
			w = write(execpipe[1], &e, sizeof(e));
			(void)w;	/* the parent then sees strace's 127 only */
			_exit(127);
		}
		free(av);
		if (pid < 0) {
			fprintf(stderr, "dcbench capture: cannot start strace: %s\n",
				strerror(errno));
		} else {
			int e;

			close(execpipe[1]);
			execpipe[1] = -1;
			if (read(execpipe[0], &e, sizeof(e)) > 0)
				execfailed = true;
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		for (int i = 0; i < 2; i++)
			if (execpipe[i] >= 0)
				close(execpipe[i]);
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		if (pid < 0 || execfailed) {
			if (!keep)
				unlink(tmplog);
			return EXIT_FAIL;
		}
		if (WIFEXITED(status))
			status = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			status = 128 + WTERMSIG(status);
		if (stat(log, &lst) == 0 && lst.st_size == 0) {
			/* strace writes a line for the command's exec at least */
			fprintf(stderr, "dcbench capture: strace recorded nothing "
				"(exit status %d): the command did not run; "
				"strace's message, if any, is above\n", status);
			if (!keep)
				unlink(tmplog);
			return EXIT_FAIL;
		}
		rc = do_import(cmd, log, out, json, status);
		if (!keep)
			unlink(tmplog);
		if (rc)
			return rc;
		if (status) {
			fprintf(stderr, "dcbench capture: warning: the command exited with "
				"status %d; the trace was written anyway\n", status);
			return EXIT_FAIL;
		}
	}
	return EXIT_OK;
}
