// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c - dcfs: command line, mount, daemon, statistics, shutdown.
 *
 *   dcfs SOURCE_DIR MOUNTPOINT [options]
 *
 * Every option has two spellings: --NAME[=VALUE] on the command line and
 * NAME[=VALUE], '_' for '-', inside -o, because mount(8), /etc/fstab and
 * mount.fuse3 give a file system its options only as -o.  -o items that
 * are not dcfs's go on to libfuse (ro, noatime, fsname=...).
 *
 * Start-up order (the parent returns only once the mount answers):
 *   parent: parse and check everything it can (a usage error: exit 2;
 *           any other failure: a clear message and exit 1), drop the
 *           capabilities dcfs does not use (sandbox.c; before any thread,
 *           as threads inherit them), raise RLIMIT_NOFILE, create the FUSE
 *           session, write the first statistics (so a --stats FILE that
 *           cannot be written fails here), and mount; then fork.
 *   child:  new session (setsid), with --sandbox=namespace its own mount
 *           namespace and root (before any thread: a namespace is per
 *           thread), create the cache (liburcu's threads start here, after
 *           the fork), start the statistics thread, install the seccomp
 *           filter on every thread, tell the parent it is about to serve,
 *           switch its diagnostics to syslog, and run the request loop.
 *   parent: stat()s the mount point, which the child must answer; exits 0
 *           when it did, 1 (with the reason) when it did not.
 * With --foreground there is no fork, and diagnostics stay on stderr.
 *
 * Shutdown: SIGINT, SIGTERM or SIGHUP end the loop (the handler posts the
 * semaphore the main thread waits on, loop.c); so does an
 * external `fusermount3 -u` or `umount`.  Then dcfs unmounts (if still
 * mounted), drops the lookups the kernel never forgot, destroys the cache
 * (which releases every node it held), and writes its last statistics,
 * where nodes_total must be 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcfs.h"

#define EXIT_USAGE	2	/* a bad command line, as dcpath and dcbench */
#define MAX_THREADS	100000

struct dcfs dcfs;

/* Who may use the mount (the kernel's allow_other, libfuse's allow_root). */
enum access {
	ACCESS_DEFAULT,		/* OTHER as root, else OWNER */
	ACCESS_OTHER,		/* every user */
	ACCESS_OWNER,		/* the user dcfs runs as */
	ACCESS_ROOT,		/* that user and root */
};

static struct {
	const char *source, *mountpoint;	/* as given */
	char *src_abs, *mnt_abs;
	char *stats_arg;			/* --stats as given */
	char *stats_dir, *stats_base;		/* its directory, resolved */
	int stats_dirfd;			/* that directory, O_PATH */
	int threads, readers, uring_depth;	/* uring_depth 0: no --uring */
	uint64_t cache_entries;
	bool foreground;
	enum access access;
	enum dcfs_seccomp seccomp;
	bool seccomp_given, sandbox;
	char *fuse_opts;			/* -o items for libfuse, escaped */
	struct fuse_args fargs;			/* argv[0] and -o options */
} opt = { .threads = 10, .stats_dirfd = -1 };

/*
 * --seccomp for root when not given.  A build may make it FILTER_LOG
 * (make CFLAGS_EXTRA=-DDCFS_SECCOMP_DEFAULT=FILTER_LOG) to have the kernel
 * name the calls a new library makes, test suites and all.
 */
#ifndef DCFS_SECCOMP_DEFAULT
#define DCFS_SECCOMP_DEFAULT	FILTER_KILL
#endif

static int status_fd = -1;		/* child -> parent, start-up result */
static int notify_fd = -1;		/* $NOTIFY_SOCKET, connected */
static int devnull = -1;		/* a daemon's stdio, opened early */
static bool log_syslog;			/* dcfs_log: syslog, not stderr */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stats_cv = PTHREAD_COND_INITIALIZER;
static bool stats_stop;

/* ---- diagnostics --------------------------------------------------------- */

void dcfs_log(int prio, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (__atomic_load_n(&log_syslog, __ATOMIC_RELAXED))
		syslog(prio, "%s", msg);
	else
		fprintf(stderr, "dcfs: %s\n", msg);	/* one write: no interleaving */
}

/* libfuse's own messages (and its -d request log) take the same way. */
static void fuse_log_hook(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	char msg[1024];
	size_t n;

	if (!__atomic_load_n(&log_syslog, __ATOMIC_RELAXED)) {
		vfprintf(stderr, fmt, ap);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	syslog((int)level, "%s", msg);	/* fuse_log_level is syslog's scale */
}

/* Connected at once (LOG_NDELAY): a sandboxed daemon sees no /dev/log. */
static void open_syslog(void)
{
	openlog("dcfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void dcfs_log_to_syslog(void)
{
	open_syslog();
	__atomic_store_n(&log_syslog, true, __ATOMIC_RELAXED);
}

static void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dcfs_log(LOG_ERR, "%s", msg);
	exit(1);
}

static void usage_error(const char *fmt, ...)
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

/*
 * systemd's readiness protocol (sd_notify(3), without libsystemd): a
 * datagram per state to $NOTIFY_SOCKET, a path or, with a leading '@', an
 * abstract name.  Nothing to do where it is unset.  The socket is
 * connected at start: a sandboxed daemon cannot reach the path later.
 */
static void notify_connect(void)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    (n = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, n);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa,
			      (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0) {
		dcfs_log(LOG_WARNING, "NOTIFY_SOCKET %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	notify_fd = fd;
}

static void notify_systemd(const char *state)
{
	if (notify_fd >= 0 &&
	    send(notify_fd, state, strlen(state), MSG_NOSIGNAL) < 0)
		dcfs_log(LOG_WARNING, "NOTIFY_SOCKET %s: %s",
			 getenv("NOTIFY_SOCKET"), strerror(errno));
}

/* ---- options ------------------------------------------------------------- */

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
"                            ttl that works), fanotify, inotify, ttl, off\n"
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

static char *xstrdup(const char *s)
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

static void parse_args(int argc, char **argv)
{
	const char *positional[2];
	bool no_more_options = false;
	int npos = 0, i;

	dcfs.mode = DC_MODE_RCU;
	dcfs.entry_timeout = dcfs.attr_timeout = -1;	/* by coherence, below */
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

/*
 * The kernel's timeouts the user left to us: long where a watcher tells
 * the kernel of every change, 0 in ttl mode (the cache's TTLs bound the
 * answers' age, and the kernel asks every time), libfuse's 1 s without
 * coherence, as before it existed.
 */
static void set_timeouts(void)
{
	enum dc_watch_mode m = coherence_mode();
	double t = m == DC_WATCH_OFF ? 1.0 : m == DC_WATCH_TTL ? 0.0 : 3600.0;

	if (dcfs.entry_timeout < 0)
		dcfs.entry_timeout = t;
	if (dcfs.attr_timeout < 0)
		dcfs.attr_timeout = t;
	if (m == DC_WATCH_TTL &&
	    (dcfs.entry_timeout > 0 || dcfs.attr_timeout > 0))
		dcfs_log(LOG_WARNING, "ttl mode with kernel timeouts above 0: the "
			 "kernel may show what it holds for %g s more than the TTL",
			 dcfs.entry_timeout > dcfs.attr_timeout ?
			 dcfs.entry_timeout : dcfs.attr_timeout);
}

/* Does path lie in dir (both absolute, resolved) or is it dir? */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) &&
	       (path[n] == '\0' || path[n] == '/' || n == 1);
}

/*
 * libfuse opens /dev/fuse itself, as the user dcfs runs as, before it
 * tries mount(2), and falls back to fusermount3 only when mount(2) is
 * refused: so even a user whose mounts fusermount3 makes needs read and
 * write access to the device.  Try that open now, for the right message.
 */
static void check_dev_fuse(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return;
	}
	switch (errno) {
	case ENOENT:
		die("/dev/fuse does not exist: load the fuse module (modprobe "
		    "fuse), or in a container, give it the device");
	case ENODEV:
	case ENXIO:
		die("/dev/fuse: %s: the kernel has no FUSE driver: load the fuse "
		    "module (modprobe fuse)", strerror(errno));
	case EACCES:
	case EPERM:
		die("/dev/fuse: %s: dcfs opens it for reading and writing as the "
		    "user it runs as, even where fusermount3 then mounts for it%s; "
		    "run dcfs as root, or have root give /dev/fuse its usual mode "
		    "0666", strerror(errno), errno == EPERM ?
		    " (EPERM: a device cgroup or security policy forbids it)" : "");
	default:
		die("/dev/fuse: %s", strerror(errno));
	}
}

/* fusermount3 lets a user other than root give allow_other only so. */
static bool user_allow_other(void)
{
	FILE *f = fopen("/etc/fuse.conf", "r");
	char line[256];
	bool yes = false;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *s = line + strspn(line, " \t"), *e = s + strcspn(s, "#\n");

		while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e - s == 16 && !strncmp(s, "user_allow_other", 16))
			yes = true;
	}
	fclose(f);
	return yes;
}

/*
 * --stats FILE: its directory, resolved now (dcfs moves to /).  Inside
 * the mount point, writing it would be a request to dcfs itself before
 * dcfs serves: start-up would hang for good, mount and all.
 */
static void check_stats_path(void)
{
	char *copy, *dir, *base;

	if (!opt.stats_arg)
		return;
	copy = xstrdup(opt.stats_arg);
	base = strrchr(copy, '/');
	if (base) {
		*base++ = '\0';
		dir = *copy ? copy : "/";
	} else {
		base = copy;
		dir = ".";
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		die("--stats '%s': not a file name", opt.stats_arg);
	opt.stats_dir = realpath(dir, NULL);
	if (!opt.stats_dir)
		die("--stats '%s': directory '%s': %s", opt.stats_arg, dir,
		    strerror(errno));
	if (path_within(opt.stats_dir, opt.mnt_abs))
		die("--stats '%s' lies inside the mount point '%s': dcfs would "
		    "wait on itself to write it; put it elsewhere (/run, /tmp)",
		    opt.stats_arg, opt.mnt_abs);
	opt.stats_base = xstrdup(base);
	free(copy);
	/* written through it: the directory stays reachable from a sandbox */
	opt.stats_dirfd = open(opt.stats_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (opt.stats_dirfd < 0)
		die("--stats '%s': directory '%s': %s", opt.stats_arg,
		    opt.stats_dir, strerror(errno));
}

static void check_paths(void)
{
	struct statx stx;
	struct stat st;

	if (stat(opt.source, &st) < 0)
		die("source '%s': %s", opt.source, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("source '%s' is not a directory", opt.source);
	opt.src_abs = realpath(opt.source, NULL);
	if (!opt.src_abs)
		die("source '%s': %s", opt.source, strerror(errno));

	/* mount.fuse3's drop_privileges hands over a mounted /dev/fuse */
	if (!strncmp(opt.mountpoint, "/dev/fd/", 8))
		die("mount point '%s': a /dev/fuse descriptor (mount.fuse3's "
		    "drop_privileges) is not supported; mount without it",
		    opt.mountpoint);
	if (statx(AT_FDCWD, opt.mountpoint, 0, STATX_TYPE, &stx) < 0) {
		if (errno == ENOTCONN)
			die("mount point '%s' is a dead FUSE mount (try fusermount3 -u %s)",
			    opt.mountpoint, opt.mountpoint);
		die("mount point '%s': %s", opt.mountpoint, strerror(errno));
	}
	if (!S_ISDIR(stx.stx_mode))
		die("mount point '%s' is not a directory", opt.mountpoint);
	if ((stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	    (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		die("mount point '%s' is busy: something is already mounted there",
		    opt.mountpoint);
	opt.mnt_abs = realpath(opt.mountpoint, NULL);
	if (!opt.mnt_abs)
		die("mount point '%s': %s", opt.mountpoint, strerror(errno));
	if (path_within(opt.mnt_abs, opt.src_abs) && strcmp(opt.mnt_abs, opt.src_abs))
		die("mount point '%s' lies inside the source '%s'", opt.mnt_abs,
		    opt.src_abs);
	check_stats_path();
	if (opt.access != ACCESS_OWNER && geteuid() != 0 && !user_allow_other())
		die("%s as a user other than root needs user_allow_other in "
		    "/etc/fuse.conf (or --no-allow-other: only you may use the mount)",
		    opt.access == ACCESS_ROOT ? "allow_root" : "allow_other");
	check_dev_fuse();
	if (opt.uring_depth && !uring_kernel_enabled())
		die("--uring: the kernel's FUSE over io_uring is off (as root: "
		    "echo Y > /sys/module/fuse/parameters/enable_uring; Linux 6.14+)");
}

/* As many descriptors as we may have: each node the kernel knows has one. */
static rlim_t raise_nofile(void)
{
	struct rlimit rl;
	FILE *f;
	unsigned long nr_open = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	/* root may lift the hard limit itself, up to fs.nr_open */
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open > rl.rlim_max) {
		struct rlimit up = { nr_open, nr_open };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return nr_open;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

/*
 * glibc unwinds a cancelled or exiting thread with libgcc_s, which it
 * dlopen()s on first use; libfuse cancels its workers at unmount.  With
 * every descriptor taken (a kernel that holds more inodes than our limit)
 * that dlopen fails and glibc aborts ("libgcc_s.so.1 must be installed for
 * pthread_cancel to work").  One thread that exits at start loads it while
 * descriptors are free; glibc keeps it loaded.
 */
static void *exit_at_once(void *arg)
{
	pthread_exit(arg);
}

static void preload_unwinder(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, exit_at_once, NULL) == 0)
		pthread_join(t, NULL);
}

/* ---- signals ----------------------------------------------------------- */

static void on_signal(int sig)
{
	(void)sig;
	dcfs_loop_stop();
}

static void set_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* ---- statistics --------------------------------------------------------- */

/*
 * A new file of an unpredictable name, .FILE.XXXXXX, in FILE's directory
 * (by its descriptor: a sandboxed daemon no longer sees its path).  O_EXCL
 * and O_NOFOLLOW, as mkostemp: nothing planted there is followed.  The
 * descriptor, or -1 with errno.
 */
static int stats_tmpfile(char *tmp, size_t len)
{
	static const char digits[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t r;
	int tries, i, fd;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull + (uint64_t)tries;
		if (snprintf(tmp, len, ".%s.XXXXXX", opt.stats_base) >= (int)len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		for (i = (int)strlen(tmp) - 6; tmp[i]; i++, r /= 62)
			tmp[i] = digits[r % 62];
		fd = openat(opt.stats_dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/*
 * One snapshot, into a new file beside FILE (stats_tmpfile), made 0644
 * whatever the umask, then renamed over FILE: a reader sees the old
 * snapshot or the new one, never half.  0 or an errno.
 */
static int write_stats(const char *state, const struct dc_stats *cs,
		       enum dc_watch_mode coherence)
{
	char tmp[NAME_MAX + 1];
	int fd, err = 0;
	FILE *f;

	if (!opt.stats_base)
		return 0;
	fd = stats_tmpfile(tmp, sizeof(tmp));
	if (fd < 0)
		return errno;
	if (fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlinkat(opt.stats_dirfd, tmp, 0);
		return err;
	}
	fprintf(f,
		"state %s\n"
		"pid %d\n"
		"updated %lld\n"
		"mode %s\n"
		"coherence %s\n"
		"nodes %lld\n"
		"nodes_total %lld\n"
		"node_fds %lld\n"
		"node_fd_budget %lld\n"
		"file_handles %d\n"
		"fdless %lld\n"
		"open_files %lld\n"
		"emfile %llu\n"
		"stale_names %llu\n"
		"workers %lld\n"
		"workers_started %llu\n"
		"uring %d\n"
		"uring_requests %llu\n"
		"cache_lookups %llu\n"
		"cache_hits %llu\n"
		"cache_negative_hits %llu\n"
		"cache_misses %llu\n"
		"cache_restarts %llu\n"
		"cache_evictions %llu\n"
		"cache_lock_waits %llu\n"
		"cache_entries %llu\n"
		"cache_negative %llu\n"
		"cache_bytes %llu\n",
		state, (int)getpid(), (long long)time(NULL),
		dc_mode_name(dcfs.mode), dc_watch_mode_name(coherence),
		(long long)CTR_GET(nodes_active), (long long)CTR_GET(nodes_total),
		(long long)CTR_GET(node_fds), (long long)dcfs.fd_budget,
		dcfs.handle_fd >= 0,
		(long long)CTR_GET(fdless), (long long)CTR_GET(open_files),
		(unsigned long long)CTR_GET(emfile),
		(unsigned long long)CTR_GET(stale),
		(long long)CTR_GET(workers),
		(unsigned long long)CTR_GET(workers_started),
		uring_active(), (unsigned long long)uring_requests(),
		(unsigned long long)cs->lookups, (unsigned long long)cs->hits,
		(unsigned long long)cs->negative_hits,
		(unsigned long long)cs->misses, (unsigned long long)cs->restarts,
		(unsigned long long)cs->evictions,
		(unsigned long long)cs->lock_waits,
		(unsigned long long)cs->entries, (unsigned long long)cs->negative,
		(unsigned long long)cs->bytes);
	if (ferror(f))
		err = EIO;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (!err && renameat(opt.stats_dirfd, tmp, opt.stats_dirfd,
			     opt.stats_base) < 0)
		err = errno;
	if (err)
		unlinkat(opt.stats_dirfd, tmp, 0);
	return err;
}

/* The daemon's snapshots: a failure said once, and its end. */
static void write_stats_logged(const char *state, enum dc_watch_mode coherence)
{
	static bool failing;
	struct dc_stats cs;
	int err;

	dc_get_stats(dcfs.cache, &cs);
	err = write_stats(state, &cs, coherence);
	if (err && !failing)
		dcfs_log(LOG_ERR, "--stats %s/%s: %s; trying again every second",
			 opt.stats_dir, opt.stats_base, strerror(err));
	else if (!err && failing)
		dcfs_log(LOG_NOTICE, "--stats %s/%s: written again",
			 opt.stats_dir, opt.stats_base);
	failing = err != 0;
}

static void *stats_thread(void *arg)
{
	struct timespec t;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* main wrote the first one before the mount was announced */
	pthread_mutex_lock(&stats_lock);
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		while (!stats_stop &&
		       pthread_cond_timedwait(&stats_cv, &stats_lock, &t) == 0)
			;
		if (stats_stop)
			break;
		pthread_mutex_unlock(&stats_lock);
		write_stats_logged("running", coherence_mode());
		pthread_mutex_lock(&stats_lock);
	}
	pthread_mutex_unlock(&stats_lock);
	return NULL;
}

static void stop_stats_thread(pthread_t tid)
{
	pthread_mutex_lock(&stats_lock);
	stats_stop = true;
	pthread_cond_signal(&stats_cv);
	pthread_mutex_unlock(&stats_lock);
	pthread_join(tid, NULL);
}

/* ---- start-up ------------------------------------------------------------ */

/* Child to parent: "OK" or the reason it failed. */
static void report(const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(msg))
		n = sizeof(msg) - 1;
	if (status_fd >= 0) {
		if (write(status_fd, msg, (size_t)n) < 0)
			dcfs_log(LOG_ERR, "status pipe: %s", strerror(errno));
		close(status_fd);
		status_fd = -1;
	} else if (strcmp(msg, "OK") != 0) {
		dcfs_log(LOG_ERR, "%s", msg);
	}
}

/*
 * A child whose end of the pipe closed unspoken is dying: its status, within
 * 2 s (the pipe closes before the exit is done; a large instrumented
 * process takes a while to tear down).
 */
static bool reap(pid_t child, int *status)
{
	const struct timespec ms10 = { 0, 10000000 };
	int i;

	for (i = 0; i < 200; i++) {
		if (waitpid(child, status, WNOHANG) == child)
			return true;
		nanosleep(&ms10, NULL);
	}
	return false;
}

/*
 * Parent: wait for the child's word, then for the mount to answer.  The
 * stat goes through the kernel to the child's loop, so success means the
 * file system is being served.
 */
static int parent_wait(int fd, pid_t child)
{
	char msg[513], ready[64];
	ssize_t n, got = 0;
	struct stat st;
	int status;

	while ((n = read(fd, msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += n;
	msg[got] = '\0';
	if (got == 0) {
		if (reap(child, &status) && WIFSIGNALED(status))
			dcfs_log(LOG_ERR, "the daemon died of signal %d while starting",
				 WTERMSIG(status));
		else
			dcfs_log(LOG_ERR, "the daemon exited while starting");
		/* a mount nobody serves, unless this copy of /dev/fuse goes */
		fuse_session_unmount(dcfs.se);
		return 1;
	}
	if (strcmp(msg, "OK") != 0) {
		dcfs_log(LOG_ERR, "%s", msg);
		return 1;
	}
	if (stat(opt.mnt_abs, &st) < 0) {
		dcfs_log(LOG_ERR, "the mount at %s does not answer: %s",
			 opt.mnt_abs, strerror(errno));
		return 1;
	}
	/* a notify unit that lets dcfs fork: the daemon is the service now */
	snprintf(ready, sizeof(ready), "READY=1\nMAINPID=%d", (int)child);
	notify_systemd(ready);
	return 0;
}

/* A daemon's stdio and syslog, opened before a sandbox hides them. */
static void daemon_io_open(void)
{
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	open_syslog();
}

static void to_dev_null(void)
{
	if (devnull < 0)
		return;
	dup2(devnull, 0);
	dup2(devnull, 1);
	dup2(devnull, 2);
	close(devnull);
	devnull = -1;
}

/* The mount, and with --sandbox=namespace the real one, gone. */
static void unmount_fs(void)
{
	fuse_session_unmount(dcfs.se);
	sandbox_unmount();
}

static int enter_sandbox(rlim_t nofile)
{
	struct sandbox_spec s = {
		.source = opt.src_abs,
		.mountpoint = opt.mnt_abs,
		.fuse_fd = fuse_session_fd(dcfs.se),
		.foreground = opt.foreground,
		.uring = opt.uring_depth > 0,
		.nofile = (uint64_t)nofile,
	};

	return opt.sandbox ? sandbox_enter(&s) : 0;
}

/*
 * libfuse's arguments: the options dcfs always gives, who may use the
 * mount, then the user's -o items it did not take itself (later options
 * win in libfuse, so the user may override fsname and subtype).
 */
static void fuse_args_build(char *argv0)
{
	const char *who = opt.access == ACCESS_OTHER ? ",allow_other" :
			  opt.access == ACCESS_ROOT && geteuid() != 0 ?
			  ",allow_root" : "";
	char *mopts = malloc(strlen(opt.src_abs) * 2 + 96), *q;
	const char *p;

	if (!mopts)
		die("out of memory");
	/* default_permissions: the kernel checks access against our
	 * attributes.  allow_root as root: no allow_other, so the kernel
	 * itself lets only root in */
	q = mopts + sprintf(mopts, "default_permissions%s,subtype=dcfs,fsname=", who);
	for (p = opt.src_abs; *p; p++) {
		if (*p == ',' || *p == '\\')
			*q++ = '\\';
		*q++ = *p;
	}
	*q = '\0';
	if (fuse_opt_add_arg(&opt.fargs, argv0) ||
	    fuse_opt_add_arg(&opt.fargs, "-o") ||
	    fuse_opt_add_arg(&opt.fargs, mopts) ||
	    (opt.fuse_opts && (fuse_opt_add_arg(&opt.fargs, "-o") ||
			       fuse_opt_add_arg(&opt.fargs, opt.fuse_opts))) ||
	    (dcfs.debug && fuse_opt_add_arg(&opt.fargs, "-d")))
		die("out of memory");
	free(mopts);
}

int main(int argc, char **argv)
{
	struct dc_options copt;
	struct dc_stats cs;
	enum dc_watch_mode coherence;
	pthread_t stats_tid;
	bool have_stats = false;
	rlim_t nofile;
	int pfd[2], ret, err;
	int64_t left;
	pid_t pid;

	fuse_set_log_func(fuse_log_hook);
	parse_args(argc, argv);
	notify_connect();
	check_paths();
	/* before the first thread (preload_unwinder's) */
	dcfs.as_caller = geteuid() == 0;
	if (caps_restrict(dcfs.as_caller))
		exit(1);
	nofile = raise_nofile();
	preload_unwinder();
	umask(0);		/* the kernel applied the caller's umask already */
	if (dcfs.as_caller && setgroups(0, NULL) < 0)
		die("setgroups: %s", strerror(errno));

	dcfs.root_fd = open(opt.src_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dcfs.root_fd < 0)
		die("source '%s': %s", opt.src_abs, strerror(errno));
	nodes_setup_handles((uint64_t)nofile);

	fuse_args_build(argv[0]);
	dcfs.se = fuse_session_new(&opt.fargs, &dcfs_ops, sizeof(dcfs_ops), NULL);
	if (!dcfs.se)
		usage_error("libfuse refused the mount options (its message is "
			    "above): %s", opt.fuse_opts ? opt.fuse_opts : "none");
	/* before mounting: a FILE that cannot be written fails the start */
	memset(&cs, 0, sizeof(cs));
	err = write_stats("starting", &cs, DC_WATCH_OFF);
	if (err)
		die("--stats '%s': cannot write it: %s", opt.stats_arg,
		    strerror(err));
	if (fuse_session_mount(dcfs.se, opt.mnt_abs) != 0)
		die("could not mount on '%s'", opt.mnt_abs);

	if (!opt.foreground) {
		if (pipe2(pfd, O_CLOEXEC) < 0) {
			fuse_session_unmount(dcfs.se);
			die("pipe: %s", strerror(errno));
		}
		pid = fork();
		if (pid < 0) {
			fuse_session_unmount(dcfs.se);
			die("fork: %s", strerror(errno));
		}
		if (pid > 0) {
			close(pfd[1]);
			_exit(parent_wait(pfd[0], pid));
		}
		close(pfd[0]);
		status_fd = pfd[1];
		setsid();
		daemon_io_open();
	}
	if (chdir("/") < 0)
		dcfs_log(LOG_WARNING, "chdir /: %s", strerror(errno));
	set_signals();
	if (enter_sandbox(nofile)) {
		unmount_fs();
		report("start-up: --sandbox=namespace failed (see above)");
		return 1;
	}

	/* after the fork: the cache registers this thread with liburcu and
	 * the first deferred free starts liburcu's callback thread */
	err = nodes_init((uint64_t)nofile);
	if (!err)
		err = node_make_root(dcfs.root_fd, &dcfs.root);
	if (err) {
		unmount_fs();
		report("start-up: %s", strerror(-err));
		return 1;
	}
	memset(&copt, 0, sizeof(copt));
	copt.mode = dcfs.mode;
	copt.max_entries = opt.cache_entries;
	copt.backend.ops = &dcfs_backend_ops;
	copt.backend.ctx = NULL;
	err = dc_cache_create(&copt, &dcfs.cache);
	if (err) {
		unmount_fs();
		report("creating the cache: %s", strerror(-err));
		return 1;
	}
	node_set_root_dentry(dcfs.root, dc_root(dcfs.cache));
	if (coherence_start(opt.src_abs)) {
		unmount_fs();
		report("start-up: --coherence=%s failed (see above)",
		       dc_watch_mode_name(dcfs.coherence));
		return 1;
	}
	set_timeouts();

	if (opt.stats_base) {
		write_stats_logged("running", coherence_mode());
		if (pthread_create(&stats_tid, NULL, stats_thread, NULL) == 0)
			have_stats = true;
		else
			dcfs_log(LOG_WARNING, "no statistics thread: --stats %s "
				 "is not updated", opt.stats_arg);
	}
	/* before the loop reads INIT, which decides on the ring */
	if (opt.uring_depth && uring_start(dcfs.se, (unsigned)opt.uring_depth)) {
		unmount_fs();
		report("start-up: %s", strerror(ENOMEM));
		return 1;
	}
	/* every thread but the workers runs now: the filter goes on all */
	if (seccomp_install(opt.seccomp, opt.uring_depth > 0)) {
		unmount_fs();
		report("start-up: --seccomp: no filter (see above)");
		return 1;
	}
	/* tests/test_dcfs.sh: one call outside the list (getcwd, harmless),
	 * which kill must punish and log must let through */
	if (getenv("DCFS_TEST_SECCOMP_PROBE"))
		syscall(SYS_getcwd, (char *)NULL, (size_t)0);
	report("OK");
	if (!opt.foreground) {
		to_dev_null();
		dcfs_log_to_syslog();
	} else {
		notify_systemd("READY=1");
	}
	ret = dcfs_loop(dcfs.se, (unsigned)opt.threads, (unsigned)opt.readers);
	notify_systemd("STOPPING=1");
	if (ret < 0)
		dcfs_log(LOG_ERR, "the request loop ended: %s", strerror(-ret));
	/* the statistics thread reads the watcher and the rings: first */
	if (have_stats)
		stop_stats_thread(stats_tid);
	coherence = coherence_mode();
	unmount_fs();
	coherence_stop();
	uring_stop();
	fuse_session_destroy(dcfs.se);
	dcfs.se = NULL;

	/* every node goes: first the kernel's shares, then the cache's */
	dc_get_stats(dcfs.cache, &cs);
	nodes_drop_kernel_refs();
	dc_cache_destroy(dcfs.cache);
	dcfs.cache = NULL;
	left = nodes_count();
	err = write_stats("exited", &cs, coherence);
	if (err)
		dcfs_log(LOG_ERR, "--stats %s/%s: %s", opt.stats_dir,
			 opt.stats_base, strerror(err));
	if (left)
		dcfs_log(LOG_ERR, "%lld nodes left at exit", (long long)left);
	nodes_fini();
	if (dcfs.handle_fd >= 0)
		close(dcfs.handle_fd);
	fuse_opt_free_args(&opt.fargs);
	return ret < 0 || left ? 1 : 0;
}
