/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * plot.h - drawing with gnuplot: the caller writes a gnuplot script into
 * a temporary file, then gnuplot runs it.  Every failure is said on stderr
 * in the caller's name, with "no plot drawn".
 */
#ifndef DC_TOOLS_PLOT_H
#define DC_TOOLS_PLOT_H

#include <stdio.h>

struct plot {
	FILE *f;		/* the script: the caller writes gnuplot here */
	char script[32];
	const char *who;	/* "dcbench micro": what messages are said as */
};

/*
 * Checks that gnuplot is installed and opens the script: 0; 1 when gnuplot
 * is not installed, a plot skipped rather than failed; or -1 (said why;
 * nothing to clean up in either case).
 */
int plot_begin(struct plot *p, const char *who);

/* Writes s to f as a gnuplot string: in single quotes, a quote doubled. */
void plot_quote(FILE *f, const char *s);

/*
 * Closes the script, runs gnuplot on it and removes it: 0 when gnuplot
 * succeeded, else -1 (said why).
 */
int plot_finish(struct plot *p);

#endif
