/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * import_main_test.c - a small driver for the importer while dcbench's
 * real command line is being written:
 *
 *	import_main_test import LOG[.xz] -o TRACE	import, print the summary
 *	import_main_test dump TRACE			one op per line, as text
 */
#include <stdio.h>
#include <string.h>

#include "import.h"
#include "trace.h"

static int usage(void)
{
	fprintf(stderr, "usage: import_main_test import LOG -o TRACE\n"
			"       import_main_test dump TRACE\n");
	return 2;
}

static int cmd_import(const char *log, const char *out)
{
	struct dct_import_summary sum;
	char err[512];

	if (dct_import(log, out, &sum, stderr, err, sizeof(err))) {
		fprintf(stderr, "import: %s\n", err);
		return 1;
	}
	dct_import_summary_print(stdout, &sum);
	return 0;
}

static int cmd_dump(const char *file)
{
	struct dct_trace *t;
	char err[512];

	if (dct_read(file, &t, err, sizeof(err))) {
		fprintf(stderr, "dump: %s\n", err);
		return 1;
	}
	dct_dump(stdout, t);
	dct_free(t);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "import") && !strcmp(argv[3], "-o"))
		return cmd_import(argv[2], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "dump"))
		return cmd_dump(argv[2]);
	return usage();
}
