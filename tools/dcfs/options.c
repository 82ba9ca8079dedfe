// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * options.c - dcfs's command line: the table of options, --help, and the
 * parser of both spellings.
 *
 *   dcfs SOURCE_DIR MOUNTPOINT [options]
 *
 * Every option has two spellings: --NAME[=VALUE] on the command line and
 * NAME[=VALUE], '_' for '-', inside -o, because mount(8), /etc/fstab and
 * mount.fuse3 give a file system its options only as -o.  -o items that
 * are not dcfs's go on to libfuse (ro, noatime, fsname=...).
 *
 * Runs on the main thread alone, before anything else: a usage error
 * exits 2 (usage_error) before dcfs has changed anything.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "options.h"

#define EXIT_USAGE	2	/* a bad command line, as dcpath and dcbench */
#define MAX_THREADS	100000

/*
 * --seccomp for root when not given.  A build may make it FILTER_LOG
 * (make CFLAGS_EXTRA=-DDCFS_SECCOMP_DEFAULT=FILTER_LOG) to have the kernel
 * name the calls a new library makes, test suites and all.
 */
#ifndef DCFS_SECCOMP_DEFAULT
#define DCFS_SECCOMP_DEFAULT	FILTER_KILL
#endif

struct dcfs_opts opt = { .threads = 10 };

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dcfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: dcfs SOURCE_DIR MOUNTPOINT [options]\n"
	      "       dcfs --help | --version\n", stderr);
	exit(EXIT_USAGE);
}

enum opt_key {
	K_MODE, K_THREADS, K_READERS, K_COHERENCE, K_TTL, K_ENTRY_TIMEOUT,
	K_ATTR_TIMEOUT, K_CACHE_ENTRIES, K_OPEN_REQUESTS, K_READDIRPLUS, K_URING, K_STATS,
	K_ALLOW_OTHER, K_NO_ALLOW_OTHER, K_ALLOW_ROOT, K_SECCOMP, K_SANDBOX,
	K_FOREGROUND, K_DEBUG,
	K_HELP, K_VERSION,
};

enum opt_arg { ARG_NONE, ARG_NEEDED, ARG_OPTIONAL };

/*
 * Every option dcfs accepts, once: the command line and -o both look
 * names up here, and --help must list each (tests/test_dcfs.sh checks).
 */
static const struct dcfs_option {
	const char *name;		/* --name; in -o, '_' for '-' */
	enum opt_arg arg;
	enum opt_key key;
	char short_name;		/* -f, or 0 */
	bool cmdline_only;		/* not a mount option */
} options[] = {
	{ "mode",		ARG_NEEDED,	K_MODE },
	{ "threads",		ARG_NEEDED,	K_THREADS },
	{ "readers",		ARG_NEEDED,	K_READERS },
	{ "coherence",		ARG_NEEDED,	K_COHERENCE },
	{ "ttl",		ARG_NEEDED,	K_TTL },
	{ "entry-timeout",	ARG_NEEDED,	K_ENTRY_TIMEOUT },
	{ "attr-timeout",	ARG_NEEDED,	K_ATTR_TIMEOUT },
	{ "cache-entries",	ARG_NEEDED,	K_CACHE_ENTRIES },
	{ "open-requests",	ARG_NONE,	K_OPEN_REQUESTS },
	{ "readdirplus",	ARG_NEEDED,	K_READDIRPLUS },
	{ "uring",		ARG_OPTIONAL,	K_URING },
	{ "stats",		ARG_NEEDED,	K_STATS },
	{ "allow-other",	ARG_NONE,	K_ALLOW_OTHER },
	{ "no-allow-other",	ARG_NONE,	K_NO_ALLOW_OTHER },
	{ "allow-root",		ARG_NONE,	K_ALLOW_ROOT },
	{ "seccomp",		ARG_NEEDED,	K_SECCOMP },
	{ "sandbox",		ARG_NEEDED,	K_SANDBOX },
	{ "foreground",		ARG_NONE,	K_FOREGROUND, 'f' },
	{ "debug",		ARG_NONE,	K_DEBUG, 'd' },
	{ "help",		ARG_NONE,	K_HELP, 'h', true },
	{ "version",		ARG_NONE,	K_VERSION, 'V', true },
};

#define NOPTIONS	(sizeof(options) / sizeof(options[0]))

/* mount(8)'s way of saying no, beside the mechanical no_allow_other */
static const char *const no_allow_other_alias = "noallow_other";

/*
 * -o items that only mount(8) and fstab use, which mount(8) or mount.fuse3
 * drop before they reach a file system: accepted and ignored, for a dcfs
 * run by hand with an fstab line's options.  And relatime, which mount(8)
 * passes on but libfuse does not know: it is the kernel's default anyway.
 */
static bool mount_only(const char *item)
{
	static const char *const words[] = {
		"defaults", "auto", "noauto", "nofail", "user", "nouser",
		"users", "owner", "group", "_netdev", "relatime", NULL,
	};
	int i;

	if (!strncmp(item, "x-", 2) || !strncmp(item, "comment=", 8))
		return true;
	for (i = 0; words[i]; i++)
		if (!strcmp(item, words[i]))
			return true;
	return false;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: dcfs SOURCE_DIR MOUNTPOINT [options]\n"
"       dcfs nfs://HOST/EXPORT MOUNTPOINT [options]   (dcfs nfs:// --help)\n"
"       dcfs --help | --version\n"
"\n"
"A FUSE passthrough of SOURCE_DIR at MOUNTPOINT whose names are cached by\n"
"libdcache.  Every option is also a mount option: -o NAME[=VALUE], '_' for '-'.\n"
"\n"
"  --mode rcu|global|rwlock  libdcache's locking mode (default rcu)\n"
"  --threads N               most worker threads, 1 to %d (default 10)\n"
"  --readers N               workers serving requests while none is stuck on\n"
"                            one for over 10 ms, 1 to --threads (default: one\n"
"                            per CPU dcfs may run on, at most --threads)\n"
"  --coherence MODE          show changes made in SOURCE_DIR behind dcfs:\n"
"                            auto (default: the first of fanotify, inotify,\n"
"                            ttl that works), fanotify, inotify, ttl, off.\n"
"                            fanotify, inotify: a change shows once the\n"
"                            watcher reads its event (an overflow of the\n"
"                            event queue forgets everything); ttl: no answer\n"
"                            older than --ttl; off: changes show as the\n"
"                            kernel's timeouts allow, or never\n"
"  --ttl MS                  ttl mode (and its fallback): names and attributes\n"
"                            are checked again after MS ms (default 1000)\n"
"  --entry-timeout S         kernel's name cache timeout, seconds (default\n"
"                            3600 with coherence on; 0 in ttl mode; 1 off)\n"
"  --attr-timeout S          kernel's attribute cache timeout (the same);\n"
"                            0 and 0 send every path component to dcfs\n"
"  --cache-entries N         cap on cached names, 16 to 2^32 (default %u)\n"
"  --open-requests           a file handle per open (OPEN and RELEASE sent\n"
"                            for every open); default: handle-less I/O,\n"
"                            no request per open\n"
"  --readdirplus auto|off    auto: listings may carry each entry's attributes\n"
"                            (READDIRPLUS, the kernel's choice); off: plain\n"
"                            READDIR (default: off when both timeouts are 0,\n"
"                            since the attributes would expire at once)\n"
"  --uring[=N]               FUSE over io_uring (Linux 6.14+, the fuse module's\n"
"                            enable_uring set to Y): requests served on the CPU\n"
"                            that made them, by N threads per CPU, 1 to 64\n"
"                            (default 2)\n"
"  --stats FILE              counters, pid and time, rewritten every second and\n"
"                            at exit; FILE may not lie inside MOUNTPOINT\n"
"  --allow-other             every user may use the mount (the default as root;\n"
"                            other users need user_allow_other in\n"
"                            /etc/fuse.conf)\n"
"  --no-allow-other          only the user dcfs runs as (the default for users\n"
"                            other than root; -o noallow_other too)\n"
"  --allow-root              the user dcfs runs as and root (as another user\n"
"                            than root: kernel timeouts 0)\n"
"                            (of these three the last given wins)\n"
"  --seccomp kill|log|none   system calls outside dcfs's list, once it serves:\n"
"                            kill the daemon (the default as root), are logged\n"
"                            by the kernel, or no filter (the default for\n"
"                            other users, who may give none alone)\n"
"  --sandbox none|namespace  namespace: serve from a mount namespace whose root\n"
"                            holds only SOURCE_DIR and /proc (root only;\n"
"                            default none)\n"
"  -f, --foreground          do not daemonize; diagnostics stay on stderr (a\n"
"                            daemon's go to syslog, facility daemon)\n"
"  -d, --debug               libfuse's request log on stderr (implies -f)\n"
"  -o OPT[,OPT...]           mount options: the options above as\n"
"                            NAME[=VALUE] (mode=rcu,stats=/run/dcfs.stats),\n"
"                            FUSE and VFS options passed on (ro, noatime,\n"
"                            nosuid, nodev, fsname=...); fstab-only ones\n"
"                            (defaults, nofail, _netdev, x-*) ignored;\n"
"                            default_permissions is always given\n"
"  -h, --help                this list\n"
"  -V, --version             the version\n"
"\n"
"Exit status: 0 mounted (or --help, --version), 1 could not mount or serve,\n"
"2 a usage error.  See dcfs(1).\n", MAX_THREADS, DC_DEFAULT_MAX_ENTRIES);
}

static double parse_seconds(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		usage_error("%s: '%s' is not a number of seconds >= 0", name, s);
	return v;
}

static long long parse_count(const char *name, const char *s, long long min,
			     long long max)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		usage_error("%s: '%s' is not a whole number from %lld to %lld",
			    name, s, min, max);
	return v;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		die("out of memory");
	return d;
}

/* v is NULL only for ARG_NONE and an ARG_OPTIONAL given bare; as names
 * the option the way the user spelled it, for messages. */
static void apply_option(const struct dcfs_option *o, const char *v,
			 const char *as)
{
	switch (o->key) {
	case K_MODE:
		if (dc_mode_parse(v, &dcfs.mode))
			usage_error("%s: '%s' is not rcu, global or rwlock", as, v);
		break;
	case K_THREADS:
		opt.threads = (int)parse_count(as, v, 1, MAX_THREADS);
		break;
	case K_READERS:
		opt.readers = (int)parse_count(as, v, 1, MAX_THREADS);
		break;
	case K_COHERENCE:
		if (dc_watch_mode_parse(v, &dcfs.coherence))
			usage_error("%s: '%s' is not auto, fanotify, inotify, ttl "
				    "or off", as, v);
		break;
	case K_TTL:
		dcfs.ttl_ms = (uint32_t)parse_count(as, v, 1, 86400000);
		break;
	case K_ENTRY_TIMEOUT:
		dcfs.entry_timeout = parse_seconds(as, v);
		break;
	case K_ATTR_TIMEOUT:
		dcfs.attr_timeout = parse_seconds(as, v);
		break;
	case K_CACHE_ENTRIES:
		opt.cache_entries = (uint64_t)parse_count(as, v, 16, 1ll << 32);
		break;
	case K_OPEN_REQUESTS:
		dcfs.open_requests = true;
		break;
	case K_READDIRPLUS:
		if (!strcmp(v, "auto"))
			dcfs.readdirplus = DCFS_RDPLUS_AUTO;
		else if (!strcmp(v, "off"))
			dcfs.readdirplus = DCFS_RDPLUS_OFF;
		else
			usage_error("%s: '%s' is not auto or off", as, v);
		break;
	case K_URING:
		opt.uring_depth = v ? (int)parse_count(as, v, 1, 64) : 2;
		break;
	case K_STATS:
		if (!*v)
			usage_error("%s needs a file name", as);
		free(opt.stats_arg);
		opt.stats_arg = xstrdup(v);
		break;
	case K_ALLOW_OTHER:
		opt.access = ACCESS_OTHER;
		break;
	case K_NO_ALLOW_OTHER:
		opt.access = ACCESS_OWNER;
		break;
	case K_ALLOW_ROOT:
		opt.access = ACCESS_ROOT;
		break;
	case K_SECCOMP:
		if (seccomp_parse(v, &opt.seccomp))
			usage_error("%s: '%s' is not kill, log or none", as, v);
		opt.seccomp_given = true;
		break;
	case K_SANDBOX:
		if (sandbox_parse(v, &opt.sandbox))
			usage_error("%s: '%s' is not none or namespace", as, v);
		break;
	case K_FOREGROUND:
		opt.foreground = true;
		break;
	case K_DEBUG:
		dcfs.debug = opt.foreground = true;
		break;
	case K_HELP:
		usage(stdout);
		exit(0);
	case K_VERSION:
		printf("dcfs (dcache) %s\n", dc_version());
		exit(0);
	}
}

/* The option named name (len bytes), '_' read as '-' when mount is set. */
static const struct dcfs_option *find_option(const char *name, size_t len,
					      bool mount)
{
	size_t i, k;

	for (i = 0; i < NOPTIONS; i++) {
		const char *o = options[i].name;

		if (strlen(o) != len || (mount && options[i].cmdline_only))
			continue;
		for (k = 0; k < len; k++)
			if (o[k] != (mount && name[k] == '_' ? '-' : name[k]))
				break;
		if (k == len)
			return &options[i];
	}
	if (mount && len == strlen(no_allow_other_alias) &&
	    !strncmp(name, no_allow_other_alias, len))
		return find_option("no-allow-other", strlen("no-allow-other"), false);
	return NULL;
}

/* "--name VALUE", "--name=VALUE", "--name" */
static void parse_long(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *name = a + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	const struct dcfs_option *o = find_option(name, len, false);
	const char *v = eq ? eq + 1 : NULL;
	char as[64];

	if (!o)
		usage_error("unknown option '%s'", a);
	snprintf(as, sizeof(as), "--%s", o->name);
	if (o->arg == ARG_NONE && v)
		usage_error("%s takes no value", as);
	if (o->arg == ARG_NEEDED && !v) {
		if (*i + 1 >= argc)
			usage_error("%s needs a value", as);
		v = argv[++*i];
	}
	apply_option(o, v, as);
}

/* one -o item, backslash escapes already undone in u; raw as given */
static void parse_mount_item(const char *raw, char *u)
{
	char *eq = strchr(u, '='), as[64];
	const struct dcfs_option *o;
	size_t n;

	if (mount_only(u))
		return;
	o = find_option(u, eq ? (size_t)(eq - u) : strlen(u), true);
	if (!o) {
		/* libfuse's: it takes \ escapes too, so pass it as given */
		n = opt.fuse_opts ? strlen(opt.fuse_opts) : 0;
		opt.fuse_opts = realloc(opt.fuse_opts, n + strlen(raw) + 2);
		if (!opt.fuse_opts)
			die("out of memory");
		sprintf(opt.fuse_opts + n, "%s%s", n ? "," : "", raw);
		return;
	}
	if (eq)
		*eq = '\0';
	snprintf(as, sizeof(as), "-o %s", u);
	if (o->arg == ARG_NONE && eq)
		usage_error("%s takes no value", as);
	if (o->arg == ARG_NEEDED && !eq)
		usage_error("%s needs a value (%s=...)", as, u);
	apply_option(o, eq ? eq + 1 : NULL, as);
}

/* -o a,b=c,...: commas split items unless escaped ("\,"). */
static void parse_mount_opts(const char *list)
{
	char *copy = xstrdup(list), *item, *end;

	for (item = copy; item; item = end) {
		char *r, *u, *w;

		for (r = item; *r && *r != ','; r++)
			if (*r == '\\' && r[1])
				r++;
		end = *r ? r + 1 : NULL;
		*r = '\0';
		if (!*item)
			continue;
		u = xstrdup(item);
		for (r = item, w = u; *r; r++) {
			if (*r == '\\' && r[1])
				r++;
			*w++ = *r;
		}
		*w = '\0';
		parse_mount_item(item, u);
		free(u);
	}
	free(copy);
}

/* "-f", "-fd", "-o OPTS", "-oOPTS" */
static void parse_short(int argc, char **argv, int *i)
{
	const char *a = argv[*i], *p;
	size_t k;

	for (p = a + 1; *p; p++) {
		char as[3] = { '-', *p, '\0' };

		if (*p == 'o') {
			const char *v = p[1] ? p + 1 :
					*i + 1 < argc ? argv[++*i] : NULL;

			if (!v || !*v)
				usage_error("-o needs mount options");
			parse_mount_opts(v);
			return;
		}
		for (k = 0; k < NOPTIONS; k++)
			if (options[k].short_name == *p)
				break;
		if (k == NOPTIONS)
			usage_error("unknown option '-%c'", *p);
		apply_option(&options[k], NULL, as);
	}
}

/* What the options mean together, once all are read. */
static void finish_args(void)
{
	bool root = geteuid() == 0;

	if (opt.readers > opt.threads)
		usage_error("readers %d is more than threads %d: give --readers "
			    "(-o readers=) from 1 to %d, or raise --threads",
			    opt.readers, opt.threads, opt.threads);
	if (opt.access == ACCESS_DEFAULT)
		opt.access = root ? ACCESS_OTHER : ACCESS_OWNER;
	/*
	 * A filter needs no_new_privs without root, which would disarm
	 * fusermount3, the set-user-ID program that unmounts a user's dcfs
	 * at exit.  A new mount namespace needs CAP_SYS_ADMIN.
	 */
	if (!opt.seccomp_given)
		opt.seccomp = root ? DCFS_SECCOMP_DEFAULT : FILTER_NONE;
	else if (!root && opt.seccomp != FILTER_NONE)
		usage_error("--seccomp: a filter needs dcfs to run as root (as "
			    "another user, fusermount3 could not unmount at exit)");
	if (opt.sandbox && !root)
		usage_error("--sandbox=namespace needs dcfs to run as root");
	/*
	 * Without root, allow_root is libfuse's check of each request's
	 * uid; whatever the kernel caches it shows to every user without
	 * asking, so it must cache nothing.  (As root, allow_root is the
	 * kernel's own check: no allow_other.)
	 */
	if (opt.access == ACCESS_ROOT && !root) {
		if (dcfs.entry_timeout > 0 || dcfs.attr_timeout > 0)
			usage_error("allow_root as a user other than root needs "
				    "--entry-timeout 0 and --attr-timeout 0 (the "
				    "kernel shows what it caches to every user)");
		dcfs.entry_timeout = dcfs.attr_timeout = 0;
	}
}

void parse_args(int argc, char **argv)
{
	const char *positional[2];
	bool no_more_options = false;
	int npos = 0, i;

	dcfs.mode = DC_MODE_RCU;
	dcfs.entry_timeout = dcfs.attr_timeout = -1;	/* by coherence (main.c) */
	dcfs.coherence = DC_WATCH_AUTO;
	dcfs.ttl_ms = 1000;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (no_more_options || a[0] != '-' || a[1] == '\0') {
			if (npos == 2)
				usage_error("too many arguments ('%s')", a);
			positional[npos++] = a;
		} else if (!strcmp(a, "--")) {
			no_more_options = true;
		} else if (a[1] == '-') {
			parse_long(argc, argv, &i);
		} else {
			parse_short(argc, argv, &i);
		}
	}
	if (npos < 2)
		usage_error("SOURCE_DIR and MOUNTPOINT are needed");
	opt.source = positional[0];
	opt.mountpoint = positional[1];
	finish_args();
}
