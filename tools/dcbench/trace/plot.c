/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plot.c - dcbench compare --plot: lookups/s against threads, one line per
 * cache mode, drawn by gnuplot (when it is installed) into an SVG or PNG.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "trace/report.h"

extern char **environ;

/* Find program in $PATH. */
static bool have_prog(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
		if (access(buf, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

static void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);	/* gnuplot: '' inside single quotes */
		fputc(*s, f);
	}
	fputc('\'', f);
}

int compare_plot(const char *file, const char *trace, struct agg *ag, unsigned nag,
		 const unsigned *tl, unsigned nt, const int *modes, unsigned nm,
		 unsigned copies)
{
	char script[] = "/tmp/dcbench-plot.XXXXXX";
	const char *ext = strrchr(file, '.');
	bool png = ext && !strcmp(ext, ".png");
	char *argv[] = { "gnuplot", script, NULL };
	FILE *f;
	pid_t pid;
	int fd, status, err;

	if (!have_prog("gnuplot")) {
		fprintf(stderr, "dcbench compare: gnuplot is not installed (Debian: "
			"gnuplot-nox); no plot drawn\n");
		return -1;
	}
	fd = mkstemp(script);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "dcbench compare: plot: %s\n", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(script);
		}
		return -1;
	}
	fprintf(f, "set terminal %s size 800,500 font 'sans,11'\n",
		png ? "png" : "svg dynamic");
	fputs("set output ", f);
	gp_quote(f, file);
	fputs("\nset title ", f);
	{
		char title[600];

		snprintf(title, sizeof(title), "dcbench compare: %s (%u cores)", trace, cli_cores());
		gp_quote(f, title);
	}
	if (copies)
		fprintf(f, "\nset xlabel 'threads (%u cop%s)'", copies, copies == 1 ? "y" : "ies");
	else
		fputs("\nset xlabel 'threads (as many copies of the trace)'", f);
	fputs("\nset ylabel 'lookups/s'\n"
	      "set logscale x 2\nset key top left\nset grid\nset yrange [0:*]\n"
	      "set format y '%.1s%c'\nset xtics (", f);
	for (unsigned i = 0; i < nt; i++)
		fprintf(f, "%s%u", i ? ", " : "", tl[i]);
	fputs(")\n", f);
	if (nt == 1)	/* one point: give gnuplot an x range around it */
		fprintf(f, "set xrange [%g:%g]\n", tl[0] / 2.0, tl[0] * 2.0);
	/* the cache modes; null (no cache) would only flatten them */
	fputs("plot ", f);
	for (unsigned m = 0, first = 1; m < nm; m++) {
		if (modes[m] == RP_NULL)
			continue;
		fprintf(f, "%s'-' using 1:2 with linespoints lw 2 title '%s'",
			first ? "" : ", ", rp_mode_name(modes[m]));
		first = 0;
	}
	fputc('\n', f);
	for (unsigned m = 0; m < nm; m++) {
		if (modes[m] == RP_NULL)
			continue;
		for (unsigned i = 0; i < nag; i++)
			if (ag[i].mode == modes[m] && !isnan(ag[i].lookups_per_s))
				fprintf(f, "%u %.6g\n", ag[i].threads, ag[i].lookups_per_s);
		fputs("e\n", f);
	}
	if (fclose(f)) {
		unlink(script);
		return -1;
	}
	fflush(NULL);
	err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (err) {
		fprintf(stderr, "dcbench compare: cannot run gnuplot: %s; no plot drawn\n",
			strerror(err));
		unlink(script);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(script);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "dcbench compare: gnuplot failed; no plot drawn\n");
		return -1;
	}
	return 0;
}
