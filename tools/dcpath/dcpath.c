/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcpath - resolve paths through libdcache on a host directory.
 *
 *   dcpath --root DIR [--cwd RELDIR] [--nofollow] [--mode rcu|global|rwlock]
 *          [--as UID:GID[:G1,G2,...]] PATH...
 *   dcpath --help | --version
 *
 * One line per PATH, in order: "PATH<TAB>INODE" (the host's st_ino of what
 * it resolved to) or "PATH<TAB>ENAME" (the errno's name).  Tab, newline and
 * backslash in PATH print as \t, \n, \\.  Exit 0 when every path resolved,
 * 1 when some did not, 2 on a usage error.  Resolution matches
 * openat2(rootfd, PATH, O_PATH [| O_NOFOLLOW], RESOLVE_IN_ROOT); with
 * --cwd, relative paths resolve as after chroot(DIR) and chdir(RELDIR);
 * with --as, as a process of that fsuid, fsgid and groups would
 * (dc_resolve_as: search permission on each directory looked up in).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcache.h"

static const char help[] =
"usage: dcpath --root DIR [--cwd RELDIR] [--nofollow] [--mode rcu|global|rwlock]\n"
"              [--as UID:GID[:G1,G2,...]] PATH...\n"
"       dcpath --help | --version\n"
"\n"
"Resolves each PATH through libdcache over the host directory DIR, as\n"
"openat2(rootfd, PATH, O_PATH, RESOLVE_IN_ROOT) would: \"..\" and absolute\n"
"symlinks stay inside DIR.  One line per PATH, in order: PATH<TAB>INODE (the\n"
"st_ino of what it resolved to) or PATH<TAB>ENAME (the errno's name, such\n"
"as ENOENT); a tab, newline or backslash in PATH prints as \\t, \\n, \\\\.\n"
"\n"
"  --root DIR     the directory that is \"/\" (required)\n"
"  --cwd RELDIR   resolve relative paths from RELDIR, itself resolved in DIR:\n"
"                 as after chroot(DIR) and chdir(RELDIR)\n"
"  --nofollow     do not follow a symlink in the last component (O_NOFOLLOW)\n"
"  --mode M       the cache's mode: rcu (default), global or rwlock\n"
"  --as UID:GID[:G1,G2,...]\n"
"                 resolve as a process with that fsuid, fsgid and supplementary\n"
"                 groups would: EACCES where a directory looked up in cannot\n"
"                 be searched (mode bits only: POSIX ACLs are not read)\n"
"  -h, --help     this help\n"
"      --version  dcpath's version, that of the libdcache it runs with\n"
"\n"
"Exit status: 0 every PATH resolved; 1 some did not; 2 usage error, or DIR\n"
"or RELDIR cannot be used.\n";

/* A usage error: the message, the synopsis, exit status 2. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dcpath: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%.*s\nTry 'dcpath --help'.\n",
		(int)(strstr(help, "\n\n") - help), help);
	return 2;
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

#define MAX_GROUPS	65536	/* NGROUPS_MAX */

/* One number of --as: decimal, below 2^32 - 1 ((uid_t)-1 is "none"). */
static int parse_id(const char *s, char **end, uint32_t *out)
{
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, end, 10);
	if (errno || v >= UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* --as UID:GID[:G1,G2,...] into *cr, its groups into groups[]. */
static int parse_cred(const char *s, struct dc_cred *cr, uint32_t *groups)
{
	char *p;

	if (parse_id(s, &p, &cr->uid) || *p != ':' ||
	    parse_id(p + 1, &p, &cr->gid))
		return -1;
	cr->ngroups = 0;
	cr->groups = groups;
	if (*p == '\0')
		return 0;
	if (*p != ':' || p[1] == '\0')
		return -1;
	do {
		if (cr->ngroups == MAX_GROUPS ||
		    parse_id(p + 1, &p, &groups[cr->ngroups++]))
			return -1;
	} while (*p == ',');
	return *p ? -1 : 0;
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
		{ "as", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct dc_options o = { .mode = DC_MODE_RCU };
	const char *root = NULL, *cwd = NULL;
	struct dc_dentry *base = NULL;
	struct dc_cred cred, *as = NULL;
	static uint32_t groups[MAX_GROUPS];
	struct dc_cache *c;
	unsigned flags = 0;
	int opt, err, i, status = 0;

	opterr = 0;	/* our messages, with the synopsis */
	while ((opt = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'r': root = optarg; break;
		case 'c': cwd = optarg; break;
		case 'n': flags |= DC_NOFOLLOW; break;
		case 'm':
			if (dc_mode_parse(optarg, &o.mode))
				return usage_error("--mode is rcu, global or rwlock, not '%s'",
						   optarg);
			break;
		case 'a':
			if (parse_cred(optarg, &cred, groups))
				return usage_error("--as is UID:GID[:G1,G2,...], not '%s'",
						   optarg);
			as = &cred;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		case 'V':
			printf("dcpath (dcache) %s\n", dc_version());
			return 0;
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!root)
		return usage_error("--root DIR is required");
	if (optind >= argc)
		return usage_error("which paths? (PATH...)");
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
			struct dc_inode st;

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
		struct dc_inode st;

		err = as ? dc_resolve_as(c, base, argv[i], flags, as, &st) :
			   dc_resolve(c, base, argv[i], flags, &st);
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
