/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcpath - resolve paths through libdcache on a host directory or an NFS
 * export.
 *
 *   dcpath --root DIR|nfs://HOST/EXPORT [--cwd RELDIR] [--nofollow]
 *          [--mode rcu|global|rwlock] [--as UID:GID[:G1,G2,...]]
 *          [--ttl MS] [--neg-ttl MS] [--lookupcache all|positive|none]
 *          [--passes N] [--repeat-every MS] [--wait-stdin] [--stats]
 *          [--compare-dir DIR] PATH...
 *   dcpath --help | --version
 *
 * One line per PATH, in order: "PATH<TAB>INODE" (the host's st_ino of what
 * it resolved to) or "PATH<TAB>ENAME" (the errno's name).  Tab, newline and
 * backslash in PATH print as \t, \n, \\.  Exit 0 when every path resolved,
 * 1 when some did not, 2 on a usage error, 3 when --compare-dir found an
 * answer the kernel does not give.  Resolution matches
 * openat2(rootfd, PATH, O_PATH [| O_NOFOLLOW], RESOLVE_IN_ROOT); with
 * --cwd, relative paths resolve as after chroot(DIR) and chdir(RELDIR);
 * with --as, as a process of that fsuid, fsgid and groups would
 * (dc_resolve_as: search permission on each directory looked up in).
 * --passes with --repeat-every or --wait-stdin keeps one cache across
 * passes spaced in time, so that a test can change the tree between
 * them and see when each change shows (TTLs: --ttl, --lookupcache).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dcache.h"
#ifdef DC_HAVE_NFS
#include "nfs/nfsfs.h"
#endif

static const char help[] =
"usage: dcpath --root DIR|nfs://HOST/EXPORT [--cwd RELDIR] [--nofollow]\n"
"              [--mode rcu|global|rwlock] [--as UID:GID[:G1,G2,...]]\n"
"              [--ttl MS] [--neg-ttl MS] [--lookupcache all|positive|none]\n"
"              [--passes N] [--repeat-every MS] [--wait-stdin] [--stats]\n"
"              [--compare-dir DIR] PATH...\n"
"       dcpath --help | --version\n"
"\n"
"Resolves each PATH through libdcache over the host directory DIR, as\n"
"openat2(rootfd, PATH, O_PATH, RESOLVE_IN_ROOT) would: \"..\" and absolute\n"
"symlinks stay inside DIR.  One line per PATH, in order: PATH<TAB>INODE (the\n"
"st_ino of what it resolved to) or PATH<TAB>ENAME (the errno's name, such\n"
"as ENOENT); a tab, newline or backslash in PATH prints as \\t, \\n, \\\\.\n"
"\n"
"  --root DIR     the directory that is \"/\" (required); nfs://HOST/EXPORT:\n"
"                 that NFS export instead, through libnfs (NFSv3, or NFSv4\n"
"                 with ?version=4; the inode is the server's fileid)\n"
"  --cwd RELDIR   resolve relative paths from RELDIR, itself resolved in DIR:\n"
"                 as after chroot(DIR) and chdir(RELDIR)\n"
"  --nofollow     do not follow a symlink in the last component (O_NOFOLLOW)\n"
"  --mode M       the cache's mode: rcu (default), global or rwlock\n"
"  --as UID:GID[:G1,G2,...]\n"
"                 resolve as a process with that fsuid, fsgid and supplementary\n"
"                 groups would: EACCES where a directory looked up in cannot\n"
"                 be searched (mode bits only: POSIX ACLs are not read), and\n"
"                 where this system sets fs.protected_symlinks, at a symlink in\n"
"                 a sticky world-writable directory it may not follow\n"
"  --ttl MS       a positive answer older than MS milliseconds is checked\n"
"                 with the backend before use (default 0: never)\n"
"  --neg-ttl MS   the same for negative answers (default 0: never)\n"
"  --lookupcache all|positive|none\n"
"                 as NFS's mount option: all (default) keeps the TTLs;\n"
"                 positive checks every negative answer before use (a\n"
"                 1 ms negative TTL); none checks every answer (1 ms\n"
"                 TTLs, and over NFS a GETATTR each time)\n"
"  --passes N     resolve the PATHs N times (default 1) through one cache,\n"
"                 printing every pass's lines\n"
"  --repeat-every MS  wait MS milliseconds between passes\n"
"  --wait-stdin   before each pass after the first, wait for a line on\n"
"                 stdin (at its end, stop); each pass's lines are flushed\n"
"  --stats        after each pass, one line on stderr: what the cache\n"
"                 answered and asked, and over NFS the RPCs sent, by kind\n"
"  --compare-dir DIR  check each answer against the kernel's on DIR (the\n"
"                 exported directory itself): openat2 with RESOLVE_IN_ROOT,\n"
"                 then fstat; a different inode, type, permission bits,\n"
"                 owner or errno is reported on stderr\n"
"  -h, --help     this help\n"
"      --version  dcpath's version, that of the libdcache it runs with\n"
"\n"
"Exit status: 0 every PATH resolved; 1 some did not; 2 usage error, or DIR\n"
"or RELDIR cannot be used; 3 --compare-dir found a different answer.\n";

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

/*
 * The one number parser: a decimal number from min to max at s, into
 * *out.  end NULL: the number is all of s (strtoll's form: leading space
 * and a sign allowed).  Else it is the digits s starts with (no space, no
 * sign), and *end is set past them.  0, or -EINVAL.
 */
static int parse_num(const char *s, char **end, long long min, long long max,
		     long long *out)
{
	char *e;
	long long n;

	if (end && (*s < '0' || *s > '9'))
		return -EINVAL;
	errno = 0;
	n = strtoll(s, &e, 10);
	if (errno || e == s || (!end && *e) || n < min || n > max)
		return -EINVAL;
	if (end)
		*end = e;
	*out = n;
	return 0;
}

/* The value s of option name: a number from min to max, which what says
 * in words in the usage error (exit status 2) it gives otherwise. */
static int num_opt(const char *name, const char *what, const char *s,
		   long long min, long long max, long long *out)
{
	if (parse_num(s, NULL, min, max, out))
		return usage_error("%s is %s, not '%s'", name, what, s);
	return 0;
}

/* One number of --as: decimal, below 2^32 - 1 ((uid_t)-1 is "none"). */
static int parse_id(const char *s, char **end, uint32_t *out)
{
	long long v;

	if (parse_num(s, end, 0, UINT32_MAX - 1ll, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* --as UID:GID[:G1,G2,...] into *cr, its groups into groups[]. */
/* Does this system set fs.protected_symlinks?  --as then applies it, as
 * the kernel would to a process of that credential. */
static bool protected_symlinks(void)
{
	FILE *f = fopen("/proc/sys/fs/protected_symlinks", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > 0;
}

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

static int is_nfs(const char *root)
{
	return !strncmp(root, "nfs://", 6);
}

/* --lookupcache */
enum lookupcache { LC_ALL, LC_POSITIVE, LC_NONE };

/* The cache's backend: an NFS export for nfs://..., else a host
 * directory.  0, or -1 after the message. */
static int open_backend(const char *root, enum lookupcache lc,
			struct dc_backend *out)
{
	int err;

	if (!is_nfs(root)) {
		err = dc_hostfs_backend(root, out);
	} else {
#ifdef DC_HAVE_NFS
		/* none: no attributes seen before stand for a GETATTR */
		struct dcnfs_options no = {
			.acdir_ms = lc == LC_NONE ? DCNFS_ACDIR_OFF : 0,
		};
		char why[160];

		if (dcnfs_url_check(root, why, sizeof(why))) {
			fprintf(stderr, "dcpath: %s: %s\n", root, why);
			return -1;
		}
		err = dcnfs_open(root, &no, out);
#else
		(void)lc;
		fprintf(stderr, "dcpath: %s: NFS support was not built (pkg-config found no libnfs)\n",
			root);
		return -1;
#endif
	}
	if (err)
		fprintf(stderr, "dcpath: %s: %s\n", root, strerror(-err));
	return err ? -1 : 0;
}

/* What the kernel answers for path under rootfd: 0 and *st, or an errno. */
static int kernel_resolve(int rootfd, const char *path, unsigned flags,
			  struct stat *st)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC | (flags & DC_NOFOLLOW ? O_NOFOLLOW : 0),
		.resolve = RESOLVE_IN_ROOT,
	};
	int err = 0, tries = 0;
	long fd;

	/* EAGAIN: a rename or mount anywhere on the system raced a ".."
	 * (openat2(2) says to ask again) */
	do
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN && ++tries < 1000);
	if (fd < 0)
		return errno;
	if (fstat((int)fd, st) < 0)
		err = errno;
	close((int)fd);
	return err;
}

/* Does the cache's answer (err, st) match the kernel's on rootfd?  1 if
 * so; else 0, and the difference on stderr. */
static int compare(int rootfd, const char *path, unsigned flags, int err,
		   const struct dc_inode *st)
{
	struct stat kst;
	int kerr = kernel_resolve(rootfd, path, flags, &kst);

	if (kerr || err) {
		if (kerr == -err)
			return 1;
		fprintf(stderr, "dcpath: %s: the cache says %s, the kernel %s\n", path,
			err ? err_name(-err) : "found it", kerr ? err_name(kerr) : "found it");
		return 0;
	}
	if (kst.st_ino == st->ino && (kst.st_mode & 0177777) == st->mode &&
	    kst.st_uid == st->uid && kst.st_gid == st->gid)
		return 1;
	fprintf(stderr, "dcpath: %s: the cache says inode %llu mode %o owner %u:%u, "
		"the kernel %llu mode %o owner %u:%u\n", path,
		(unsigned long long)st->ino, st->mode, st->uid, st->gid,
		(unsigned long long)kst.st_ino, kst.st_mode & 0177777,
		(unsigned)kst.st_uid, (unsigned)kst.st_gid);
	return 0;
}

/* path through the cache.  A stale answer (an NFS handle the server no
 * longer knows) makes the cache forget everything, and path is asked once
 * more. */
static int resolve_once(struct dc_cache *c, struct dc_dentry *base,
			const char *path, unsigned flags, const struct dc_cred *as,
			struct dc_inode *st)
{
	return as ? dc_resolve_as(c, base, path, flags, as, st) :
		    dc_resolve(c, base, path, flags, st);
}

static int resolve(struct dc_cache *c, struct dc_dentry *base,
		   const char *path, unsigned flags, const struct dc_cred *as,
		   struct dc_inode *st)
{
	int err = resolve_once(c, base, path, flags, as, st);

	if (err == -ESTALE) {
		struct dc_dentry *root = dc_root(c);

		dc_invalidate(c, root);
		dc_put(c, root);
		err = resolve_once(c, base, path, flags, as, st);
	}
	return err;
}

/* --stats: what the pass asked and answered (since the last call). */
struct counts {
	struct dc_stats cache;
#ifdef DC_HAVE_NFS
	struct dcnfs_stats rpc;
#endif
};

static void print_stats(struct dc_cache *c, const struct dc_backend *be,
			int nfs, int pass, struct counts *last)
{
	struct counts now;

	dc_get_stats(c, &now.cache);
	fprintf(stderr, "dcpath: pass %d: cache lookups=%llu hits=%llu negative_hits=%llu "
		"misses=%llu negative_misses=%llu complete_answers=%llu readdirs=%llu", pass,
		(unsigned long long)(now.cache.lookups - last->cache.lookups),
		(unsigned long long)(now.cache.hits - last->cache.hits),
		(unsigned long long)(now.cache.negative_hits - last->cache.negative_hits),
		(unsigned long long)(now.cache.misses - last->cache.misses),
		(unsigned long long)(now.cache.negative_misses - last->cache.negative_misses),
		(unsigned long long)(now.cache.complete_answers - last->cache.complete_answers),
		(unsigned long long)(now.cache.readdirs - last->cache.readdirs));
#ifdef DC_HAVE_NFS
	dcnfs_stats(be, &now.rpc);
	if (nfs)
		fprintf(stderr, "; rpc LOOKUP=%llu GETATTR=%llu READDIR=%llu READLINK=%llu "
			"connects=%llu retries=%llu; revalidations=%llu",
		(unsigned long long)(now.rpc.lookups - last->rpc.lookups),
		(unsigned long long)(now.rpc.getattrs - last->rpc.getattrs),
		(unsigned long long)(now.rpc.readdirs - last->rpc.readdirs),
		(unsigned long long)(now.rpc.readlinks - last->rpc.readlinks),
		(unsigned long long)(now.rpc.connects - last->rpc.connects),
		(unsigned long long)(now.rpc.retries - last->rpc.retries),
		(unsigned long long)(now.rpc.revalidations - last->rpc.revalidations));
#else
	(void)be;
	(void)nfs;
#endif
	fputc('\n', stderr);
	*last = now;
}

static int parse_lookupcache(const char *s, enum lookupcache *out)
{
	if (!strcmp(s, "all"))
		*out = LC_ALL;
	else if (!strcmp(s, "positive") || !strcmp(s, "pos"))
		*out = LC_POSITIVE;
	else if (!strcmp(s, "none"))
		*out = LC_NONE;
	else
		return -EINVAL;
	return 0;
}

/* Between two passes: --repeat-every's pause, --wait-stdin's line.
 * 0, or -1 at the end of stdin. */
static int between_passes(long long pause_ms, int wait_stdin)
{
	struct timespec ts = { .tv_sec = pause_ms / 1000,
			       .tv_nsec = pause_ms % 1000 * 1000000 };
	int ch;

	fflush(stdout);
	while (pause_ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
	if (!wait_stdin)
		return 0;
	while ((ch = getchar()) != EOF && ch != '\n')
		;
	return ch == EOF ? -1 : 0;
}

/* --cwd RELDIR: a reference to that directory, or 2 after the message. */
static int open_cwd(struct dc_cache *c, const char *cwd, struct dc_dentry **base)
{
	struct dc_inode st;
	int err = dc_walk(c, NULL, cwd, 0, base);

	if (!err) {
		err = dc_dentry_stat(*base, &st);
		if (!err && (st.mode & S_IFMT) != S_IFDIR)
			err = -ENOTDIR;
	}
	if (err) {
		fprintf(stderr, "dcpath: --cwd %s: %s\n", cwd, strerror(-err));
		dc_put(c, *base);
		*base = NULL;
		return 2;
	}
	return 0;
}

/* One pass over paths: their lines; 0, 1 (some did not resolve) or 3
 * (one differed from the kernel's answer on rootfd, when >= 0). */
static int pass(struct dc_cache *c, struct dc_dentry *base, char **paths,
		int n, unsigned flags, const struct dc_cred *as, int rootfd)
{
	int i, err, status = 0;

	for (i = 0; i < n; i++) {
		struct dc_inode st;

		err = resolve(c, base, paths[i], flags, as, &st);
		put_escaped(paths[i]);
		if (err) {
			printf("\t%s\n", err_name(-err));
			if (!status)
				status = 1;
		} else {
			printf("\t%llu\n", (unsigned long long)st.ino);
		}
		if (rootfd >= 0 && !compare(rootfd, paths[i], flags, err, &st))
			status = 3;
	}
	return status;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "root", required_argument, NULL, 'r' },
		{ "cwd", required_argument, NULL, 'c' },
		{ "nofollow", no_argument, NULL, 'n' },
		{ "mode", required_argument, NULL, 'm' },
		{ "as", required_argument, NULL, 'a' },
		{ "ttl", required_argument, NULL, 't' },
		{ "neg-ttl", required_argument, NULL, 'T' },
		{ "lookupcache", required_argument, NULL, 'l' },
		{ "passes", required_argument, NULL, 'p' },
		{ "repeat-every", required_argument, NULL, 'e' },
		{ "wait-stdin", no_argument, NULL, 'w' },
		{ "stats", no_argument, NULL, 's' },
		{ "compare-dir", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct dc_options o = { .mode = DC_MODE_RCU };
	const char *root = NULL, *cwd = NULL, *kdir = NULL;
	struct dc_dentry *base = NULL;
	struct dc_cred cred, *as = NULL;
	static uint32_t groups[MAX_GROUPS];
	struct counts last = { 0 };
	struct dc_backend be;
	struct dc_cache *c;
	enum lookupcache lc = LC_ALL;
	unsigned flags = 0;
	long long n, passes = 1, pause_ms = 0;
	int opt, err, p, stats = 0, wait_stdin = 0, rootfd = -1, status = 0;

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
		case 't':
		case 'T':
			if (num_opt(opt == 't' ? "--ttl" : "--neg-ttl",
				    "a number of milliseconds", optarg, 0, INT_MAX, &n))
				return 2;
			*(opt == 't' ? &o.ttl_ms : &o.neg_ttl_ms) = (uint32_t)n;
			break;
		case 'l':
			if (parse_lookupcache(optarg, &lc))
				return usage_error("--lookupcache is all, positive or none, not '%s'",
						   optarg);
			break;
		case 'p':
			if (num_opt("--passes", "a number from 1 to 1000000", optarg,
				    1, 1000000, &passes))
				return 2;
			break;
		case 'e':
			if (num_opt("--repeat-every", "a number of milliseconds", optarg,
				    0, 86400000, &pause_ms))
				return 2;
			break;
		case 'w': wait_stdin = 1; break;
		case 's': stats = 1; break;
		case 'k': kdir = optarg; break;
		case 'h':
			fputs(help, stdout);
			return 0;
		case 'V':
			printf("dcpath (dcache) %s\n", dc_version());
			return 0;
		case ':':
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			/* a short option's letter (optind has not left its
			 * cluster yet), or a long option, passed by then */
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (as && protected_symlinks())
		flags |= DC_PROTECTED_SYMLINKS;
	if (!root)
		return usage_error("--root DIR is required");
	if (optind >= argc)
		return usage_error("which paths? (PATH...)");
	if (kdir && cwd)
		return usage_error("--compare-dir does not go with --cwd");
	if (kdir && as)
		return usage_error("--compare-dir does not go with --as (it asks the "
				   "kernel as this process)");
	if (kdir) {
		rootfd = open(kdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rootfd < 0) {
			fprintf(stderr, "dcpath: --compare-dir %s: %s\n", kdir, strerror(errno));
			return 2;
		}
	}
	/* as NFS's lookupcache: entries of that kind expire at once */
	if (lc == LC_NONE)
		o.ttl_ms = 1;
	if (lc != LC_ALL)
		o.neg_ttl_ms = 1;
	err = open_backend(root, lc, &o.backend);
	be = o.backend;
	if (!err) {
		err = dc_cache_create(&o, &c);
		if (err)
			fprintf(stderr, "dcpath: %s: %s\n", root, strerror(-err));
	}
	if (err) {
		if (rootfd >= 0)
			close(rootfd);
		return 2;
	}
	if (cwd)
		status = open_cwd(c, cwd, &base);
	for (p = 1; status != 2 && p <= passes; p++) {
		if (p > 1 && between_passes(pause_ms, wait_stdin))
			break;
		err = pass(c, base, argv + optind, argc - optind, flags, as, rootfd);
		if (err > status)
			status = err;
		if (stats)
			print_stats(c, &be, is_nfs(root), p, &last);
	}
	dc_put(c, base);
	dc_cache_destroy(c);
	if (rootfd >= 0)
		close(rootfd);
	return status;
}
