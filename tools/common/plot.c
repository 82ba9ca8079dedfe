// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * plot.c - a gnuplot script in a temporary file, and gnuplot run on it
 * (plot.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/plot.h"
#include "common/proc.h"

int plot_begin(struct plot *p, const char *who)
{
	int fd;

	p->who = who;
	p->f = NULL;
	if (!proc_on_path("gnuplot")) {
		fprintf(stderr, "%s: gnuplot is not installed (Debian: gnuplot-nox); "
			"no plot drawn\n", who);
		return 1;
	}
	snprintf(p->script, sizeof(p->script), "/tmp/dcbench-plot.XXXXXX");
	fd = mkstemp(p->script);
	if (fd < 0 || !(p->f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: plot: %s; no plot drawn\n", who, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(p->script);
		}
		return -1;
	}
	return 0;
}

void plot_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

int plot_finish(struct plot *p)
{
	char *argv[] = { "gnuplot", p->script, NULL };
	int rc;

	if (fclose(p->f)) {
		fprintf(stderr, "%s: plot: %s; no plot drawn\n", p->who, strerror(errno));
		unlink(p->script);
		return -1;
	}
	rc = proc_run(argv);
	unlink(p->script);
	if (rc < 0) {
		fprintf(stderr, "%s: cannot run gnuplot: %s; no plot drawn\n", p->who,
			strerror(-rc));
		return -1;
	}
	if (rc) {
		fprintf(stderr, "%s: gnuplot failed; no plot drawn\n", p->who);
		return -1;
	}
	return 0;
}
