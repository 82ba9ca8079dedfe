/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcpath - resolve paths through libdcache on a host directory.
 *
 *   dcpath --root DIR [--cwd RELDIR] [--nofollow] [--mode rcu|global|rwlock]
 *          PATH...
 *
 * One line per PATH, in order: "PATH<TAB>INODE" (the host's st_ino of what
 * it resolved to) or "PATH<TAB>ENAME" (the errno's name).  Tab, newline and
 * backslash in PATH print as \t, \n, \\.  Exit 0 when every path resolved,
 * 1 when some did not, 2 on a usage error.  Resolution matches
 * openat2(rootfd, PATH, O_PATH [| O_NOFOLLOW], RESOLVE_IN_ROOT); with
 * --cwd, relative paths resolve as after chroot(DIR) and chdir(RELDIR).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcache.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: dcpath --root DIR [--cwd RELDIR] [--nofollow] "
		   "[--mode rcu|global|rwlock] PATH...\n");
}

static void put_escaped(const char *s)
{
	for (; *s; s++) {
		if (*s == '\t')
			fputs("\\t", stdout);
		else if (*s == '\n')
			fputs("\\n", stdout);
		else if (*s == '\\')
			fputs("\\\\", stdout);
		else
			putchar(*s);
	}
}

static const char *err_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : "EUNKNOWN";
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "cwd", required_argument, NULL, 'c' },
		{ "nofollow", no_argument, NULL, 'n' },
		{ "mode", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct dc_options o = { .mode = DC_MODE_RCU };
	const char *root = NULL, *cwd = NULL;
	struct dc_dentry *base = NULL;
	struct dc_cache *c;
	unsigned flags = 0;
	int opt, err, i, status = 0;

	while ((opt = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': root = optarg; break;
		case 'c': cwd = optarg; break;
		case 'n': flags |= DC_NOFOLLOW; break;
		case 'm':
			if (dc_mode_parse(optarg, &o.mode)) {
				fprintf(stderr, "dcpath: unknown mode '%s'\n", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!root || optind >= argc) {
		usage(stderr);
		return 2;
	}
	err = dc_hostfs_backend(root, &o.backend);
	if (!err)
		err = dc_cache_create(&o, &c);
	if (err) {
		fprintf(stderr, "dcpath: %s: %s\n", root, strerror(-err));
		return 2;
	}
	if (cwd) {
		err = dc_walk(c, NULL, cwd, 0, &base);
		if (!err) {
			struct dc_stat st;

			err = dc_dentry_stat(base, &st);
			if (!err && (st.mode & 0170000) != 0040000)
				err = -ENOTDIR;
		}
		if (err) {
			fprintf(stderr, "dcpath: --cwd %s: %s\n", cwd, strerror(-err));
			dc_put(c, base);
			dc_cache_destroy(c);
			return 2;
		}
	}
	for (i = optind; i < argc; i++) {
		struct dc_stat st;

		err = dc_resolve(c, base, argv[i], flags, &st);
		put_escaped(argv[i]);
		if (err) {
			printf("\t%s\n", err_name(-err));
			status = 1;
		} else {
			printf("\t%llu\n", (unsigned long long)st.ino);
		}
	}
	dc_put(c, base);
	dc_cache_destroy(c);
	return status;
}
