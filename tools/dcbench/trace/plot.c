/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plot.c - dcbench compare --plot: lookups/s against threads, one line per
 * cache mode, drawn by gnuplot (when it is installed) into an SVG or PNG.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/plot.h"
#include "trace/report.h"

int compare_plot(const char *file, const char *trace, struct agg *ag, unsigned nag,
		 const unsigned *tl, unsigned nt, const int *modes, unsigned nm,
		 unsigned copies)
{
	const char *ext = strrchr(file, '.');
	bool png = ext && !strcmp(ext, ".png");
	struct plot p;
	FILE *f;
	int err = plot_begin(&p, "dcbench compare");

	if (err)
		return err;
	f = p.f;
	fprintf(f, "set terminal %s size 800,500 font 'sans,11'\n",
		png ? "png" : "svg dynamic");
	fputs("set output ", f);
	plot_quote(f, file);
	fputs("\nset title ", f);
	{
		char title[600];

		snprintf(title, sizeof(title), "dcbench compare: %s (%u cores)", trace, cli_cores());
		plot_quote(f, title);
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
	return plot_finish(&p);
}
