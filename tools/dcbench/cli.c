// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cli.c - what dcbench's commands share on their command lines (cli.h):
 * option scanning, numbers and lists checked against their ranges, and
 * usage errors that show the command's synopsis.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* set once by main() before any command runs; NULL in the tests */
static const char *(*cli_help_of)(const char *cmd);
static const char *cli_usage_text;

void cli_synopsis(FILE *f, const char *help)
{
	const char *end = strstr(help, "\n\n");

	fprintf(f, "%.*s\n", end ? (int)(end - help) : (int)strlen(help), help);
}

void cli_set_help(const char *(*help_of)(const char *cmd), const char *usage)
{
	cli_help_of = help_of;
	cli_usage_text = usage;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	const char *help = cmd && cli_help_of ? cli_help_of(cmd) : NULL;
	va_list ap;

	fprintf(stderr, "dcbench%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (help)
		cli_synopsis(stderr, help);
	else if (!cmd && cli_usage_text)
		cli_synopsis(stderr, cli_usage_text);
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

int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo,
	    uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-' || s[0] == '+' || v < lo || v > hi)
		return cli_usage(cmd, "%s wants a number from %" PRIu64 " to %" PRIu64
				 ", not '%s'", opt, lo, hi, s);
	*out = v;
	return 0;
}

int cli_uint(const char *cmd, const char *opt, const char *s, unsigned lo,
	     unsigned hi, unsigned *out)
{
	uint64_t v;
	int err = cli_u64(cmd, opt, s, lo, hi, &v);

	if (!err)
		*out = (unsigned)v;
	return err;
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
		for (unsigned i = 0; i < *n; i++)
			if (out[i] == out[*n])
				return cli_usage(cmd, "%s: %s twice", opt, buf);
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
