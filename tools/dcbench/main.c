/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * main.c - dcbench's command line: import, capture, replay, compare.
 * docs/dcbench.md is the manual, man/dcbench.1 the page.  Exit status:
 * 0 success, 1 failure (or mismatches found), 2 usage error, 3 compare
 * on runs too short to time.
 */
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "fs/coherence/coherence.h"
#include "dcache.h"
#include "flood.h"
#include "fs/fsmeta.h"
#include "fs/kernbench.h"
#include "import.h"
#include "json.h"
#include "memstorm.h"
#include "micro.h"
#include "torture.h"
#include "trace.h"

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
	{ "micro", dcb_micro_main, NULL },
	{ "torture", dcb_torture_main, NULL },
	{ "memstorm", dcb_memstorm_main, NULL },
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

void cli_synopsis(FILE *f, const char *help)
{
	const char *end = strstr(help, "\n\n");

	fprintf(f, "%.*s\n", end ? (int)(end - help) : (int)strlen(help), help);
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	const struct command *c = cmd ? find_command(cmd) : NULL;
	va_list ap;

	fprintf(stderr, "dcbench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c && c->help)
		cli_synopsis(stderr, c->help);
	else if (!cmd)
		cli_synopsis(stderr, usage_text);
	fprintf(stderr, "Try 'dcbench %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

bool cli_opt(const char *cmd, int argc, char **argv, int *i, const char *name,
	     bool has_value, const char **val, int *bad)
{
	const char *a = argv[*i];
	size_t n = strlen(name);

	if (strncmp(a, "--", 2) || strncmp(a + 2, name, n))
		return false;
	if (a[2 + n] == '\0') {
		if (!has_value)
			return true;
		if (*i + 1 >= argc) {
			*bad = cli_usage(cmd, "--%s needs a value", name);
			return true;
		}
		*val = argv[++*i];
		return true;
	}
	if (a[2 + n] != '=')
		return false;
	if (!has_value) {
		*bad = cli_usage(cmd, "--%s takes no value", name);
		return true;
	}
	*val = a + 3 + n;
	return true;
}

int cli_uint(const char *cmd, const char *opt, const char *s, unsigned lo,
	     unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || s[0] == '+' || v < lo || v > hi)
		return cli_usage(cmd, "%s wants a number from %u to %u, not '%s'",
				 opt, lo, hi, s);
	*out = (unsigned)v;
	return 0;
}

int cli_seconds(const char *cmd, const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < 0 || v > 86400)
		return cli_usage(cmd, "%s wants seconds from 0 to 86400, not '%s'", opt, s);
	*out = v;
	return 0;
}

int cli_uint_list(const char *cmd, const char *opt, const char *s, unsigned lo,
		  unsigned hi, unsigned *out, unsigned max, unsigned *n)
{
	char buf[32];

	*n = 0;
	for (const char *p = s;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (*n == max)
			return cli_usage(cmd, "%s: at most %u values", opt, max);
		if (len >= sizeof(buf))
			return cli_usage(cmd, "%s: '%.*s' is not a number", opt,
					 (int)len, p);
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (cli_uint(cmd, opt, buf, lo, hi, &out[*n]))
			return EXIT_USAGE;
		(*n)++;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

bool cli_progress(void)
{
	return isatty(STDERR_FILENO) == 1;
}

unsigned cli_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

/* ---- import ------------------------------------------------------------------- */

static void summary_json(struct json *j, const struct dct_import_summary *s)
{
	json_kuint(j, "lines", s->lines);
	json_kuint(j, "blank", s->blank);
	json_kuint(j, "bytes", s->bytes);
	json_kuint(j, "processes", s->processes);
	json_kuint(j, "ops", s->ops);
	json_key(j, "ops_by_kind");
	json_obj_begin(j);
	for (unsigned k = 0; k < DCT_NKINDS; k++)
		json_kuint(j, dct_kind_name(k), s->ops_by_kind[k]);
	json_obj_end(j);
	json_kuint(j, "path_ops", s->path_ops);
	json_kuint(j, "path_ops_failed", s->path_ops_failed);
	json_kuint(j, "path_ops_enoent", s->path_ops_enoent);
	json_kuint(j, "distinct_paths", s->distinct_paths);
	json_kuint(j, "malformed", s->malformed);
	if (s->malformed)
		json_kuint(j, "malformed_first_line", s->malformed_first_line);
	else
		json_knull(j, "malformed_first_line");
	json_kuint(j, "unknown_calls", s->unknown_calls);
	json_kuint(j, "ignored_calls", s->ignored_calls);
	json_kuint(j, "signals", s->signals);
	json_kuint(j, "skipped_fd_calls", s->skipped_fd_calls);
	json_kuint(j, "unresolved", s->unresolved);
	json_kuint(j, "too_long", s->too_long);
	json_kuint(j, "restarted", s->restarted);
	json_kuint(j, "unfinished_at_eof", s->unfinished_at_eof);
	json_kuint(j, "cwd_corrections", s->cwd_corrections);
	json_kuint(j, "orphans", s->orphans);
	json_kuint(j, "wait_unmatched", s->wait_unmatched);
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

int cmd_import(int argc, char **argv)
{
	const char *cmd = "import", *log = NULL, *out = NULL;
	bool json = false;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(cmd, argc, argv, &i, "help", false, &v, &bad)) {
			if (bad)
				return bad;
			fputs(dcb_import_help, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "-o") || cli_opt(cmd, argc, argv, &i, "output", true, &v, &bad)) {
			if (bad)
				return bad;
			if (!v) {
				if (i + 1 >= argc)
					return cli_usage(cmd, "-o needs a file name");
				v = argv[++i];
			}
			out = v;
		} else if (cli_opt(cmd, argc, argv, &i, "json", false, &v, &bad)) {
			if (bad)
				return bad;
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		} else if (log) {
			return cli_usage(cmd, "one log at a time ('%s' and '%s')", log, argv[i]);
		} else {
			log = argv[i];
		}
	}
	if (!log)
		return cli_usage(cmd, "which strace log?");
	if (!out)
		return cli_usage(cmd, "where to? (-o TRACE)");
	return do_import(cmd, log, out, json, -1);
}

/* ---- capture ------------------------------------------------------------------ */

/* Is prog an executable in $PATH? */
static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == 0)
			snprintf(buf, sizeof(buf), "./%s", prog);
		else
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, prog);
		if (access(buf, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

int cmd_capture(int argc, char **argv)
{
	const char *cmd = "capture", *out = NULL, *keep = NULL;
	char tmplog[] = "/tmp/dcbench-capture.XXXXXX";
	struct sigaction ign, oint, oquit;
	char err[512];
	bool json = false;
	int bad = 0, first = -1, fd, status, rc;
	pid_t pid;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--")) {
			first = i + 1;
			break;
		}
		if (!strcmp(argv[i], "-h") || cli_opt(cmd, argc, argv, &i, "help", false, &v, &bad)) {
			if (bad)
				return bad;
			fputs(dcb_capture_help, stdout);
			return EXIT_OK;
		}
		if (!strcmp(argv[i], "-o") || cli_opt(cmd, argc, argv, &i, "output", true, &v, &bad)) {
			if (bad)
				return bad;
			if (!v) {
				if (i + 1 >= argc)
					return cli_usage(cmd, "-o needs a file name");
				v = argv[++i];
			}
			out = v;
		} else if (cli_opt(cmd, argc, argv, &i, "keep-log", true, &v, &bad)) {
			if (bad)
				return bad;
			keep = v;
		} else if (cli_opt(cmd, argc, argv, &i, "json", false, &v, &bad)) {
			if (bad)
				return bad;
			json = true;
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
	if (!in_path("strace")) {
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
		pid = fork();
		if (pid == 0) {
			sigaction(SIGINT, &oint, NULL);
			sigaction(SIGQUIT, &oquit, NULL);
			execvp("strace", av);
			fprintf(stderr, "dcbench capture: cannot run strace: %s\n",
				strerror(errno));
			_exit(127);
		}
		free(av);
		if (pid < 0) {
			fprintf(stderr, "dcbench capture: fork: %s\n", strerror(errno));
			status = -1;
		} else {
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
		}
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		if (pid < 0 || (WIFEXITED(status) && WEXITSTATUS(status) == 127)) {
			if (!keep)
				unlink(tmplog);
			return EXIT_FAIL;
		}
		if (WIFEXITED(status))
			status = WEXITSTATUS(status);
		else if (WIFSIGNALED(status))
			status = 128 + WTERMSIG(status);
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

/* ---- dispatch ----------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const struct command *c;

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
