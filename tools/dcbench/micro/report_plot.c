/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report_plot.c - --plot: wall-clock Mops/s against threads, one panel
 * per scenario, a line per implementation, drawn by gnuplot from a
 * script written to a temporary file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/plot.h"
#include "micro/micro.h"
#include "micro/util.h"

static const char *const im_colors[IM_NR] = {
	"#d62728", "#ff7f0e", "#9467bd", "#e377c2", "#8c564b", "#7f7f7f", "#1f77b4", "#2ca02c",
};

/* Has implementation k a point in scenario sc's panel? */
static bool plotted(struct bench *b, int sc, int k)
{
	for (unsigned ti = 0; ti < b->ntl; ti++)
		if (cell_get(b, sc, b->tl[ti], k))
			return true;
	return false;
}

int plot(struct bench *b, const char *file, const char *host, const char *date)
{
	const char *ext = strrchr(file, '.');
	bool png = ext && !strcmp(ext, ".png");
	unsigned nsc = 0, cols, rows;
	struct plot p;
	int err;
	FILE *f;

	for (int sc = 0; sc < SC_NR; sc++)
		nsc += b->ran[sc];
	if (!nsc)
		return -1;
	err = plot_begin(&p, "dcbench micro");
	if (err)
		return err;
	f = p.f;
	cols = nsc < 3 ? nsc : 3;
	rows = (nsc + cols - 1) / cols;
	fprintf(f, "set terminal %s size %u,%u font 'sans,10'\n",
		png ? "pngcairo" : "svg dynamic", 420 * cols, 330 * rows + 40);
	fputs("set output ", f);
	plot_quote(f, file);
	fprintf(f, "\nset multiplot layout %u,%u title 'dcbench micro: %s, %s, %u cores "
		"(Mops/s over wall time, median of %u runs; higher is better)'\n", rows, cols, host, date,
		b->cores, b->runs);
	fputs("set logscale x 2\nset logscale y 10\nset grid\nset key top left font ',8'\n"
	      "set xlabel 'threads'\nset ylabel 'Mops/s'\n", f);
	fputs("set xtics (", f);
	for (unsigned i = 0; i < b->ntl; i++)
		fprintf(f, "%s%u", i ? ", " : "", b->tl[i]);
	fprintf(f, ")\nset xrange [%g:%g]\n", b->tl[0] / 1.3, b->tl[b->ntl - 1] * 1.3);
	for (int sc = 0; sc < SC_NR; sc++) {
		bool any = false;

		if (!b->ran[sc])
			continue;
		fprintf(f, "set title '%s'\nplot ", sc_names[sc]);
		for (int k = 0; k < IM_NR; k++) {
			if (!plotted(b, sc, k))
				continue;
			fprintf(f, "%s'-' using 1:2 with linespoints lw 2 lc rgb '%s' pt %d "
				"title '%s'", any ? ", " : "", im_colors[k], k + 4, im_names[k]);
			any = true;
		}
		if (!any)
			fputs("1/0 notitle", f);
		fputc('\n', f);
		for (int k = 0; k < IM_NR; k++) {
			if (!plotted(b, sc, k))
				continue;
			for (unsigned ti = 0; ti < b->ntl; ti++) {
				struct cell *c = cell_get(b, sc, b->tl[ti], k);

				if (c)
					fprintf(f, "%u %.6g\n", b->tl[ti], c->mopsw_med);
			}
			fputs("e\n", f);
		}
	}
	fputs("unset multiplot\n", f);
	if (plot_finish(&p))
		return -1;
	fprintf(rep, "plot: %s\n", file);
	return 0;
}
