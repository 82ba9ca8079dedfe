// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c - dcfs: command line, mount, daemon, statistics, shutdown.
 *
 *   dcfs SOURCE_DIR MOUNTPOINT [options]
 *
 * Start-up order (the parent returns only once the mount answers):
 *   parent: parse and check everything it can (a clear message and exit 1
 *           on any error), raise RLIMIT_NOFILE, create the FUSE session
 *           and mount; then fork.
 *   child:  new session (setsid), create the cache (liburcu's threads start
 *           here, after the fork), start the statistics thread, tell the
 *           parent it is about to serve, and run the multi-threaded loop.
 *   parent: stat()s the mount point, which the child must answer; exits 0
 *           when it did, 1 (with the reason) when it did not.
 * With --foreground there is no fork.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcfs.h"

#define DCFS_VERSION	"0.1.0"

struct dcfs dcfs;

static struct {
	const char *source, *mountpoint;	/* as given */
	char *src_abs, *mnt_abs, *stats_path;
	int threads, readers, uring_depth;	/* uring_depth 0: no --uring */
	uint64_t cache_entries;
	bool foreground;
	struct fuse_args fargs;			/* argv[0] and -o options */
} opt = { .threads = 10 };

static int status_fd = -1;		/* child -> parent, start-up result */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stats_cv = PTHREAD_COND_INITIALIZER;
static bool stats_stop;

static void usage(FILE *f)
{
	fprintf(f,
"usage: dcfs SOURCE_DIR MOUNTPOINT [options]\n"
"\n"
"A FUSE passthrough of SOURCE_DIR whose names are cached by libdcache.\n"
"\n"
"  --mode rcu|global|rwlock  libdcache's locking mode (default rcu)\n"
"  --threads N               most worker threads (default 10, as libfuse)\n"
"  --readers N               workers serving requests while none is stuck on\n"
"                            one for over 10 ms (default: one per CPU dcfs may\n"
"                            run on; at most --threads)\n"
"  --coherence MODE          show changes made in SOURCE_DIR behind dcfs:\n"
"                            auto (default: the first of fanotify, inotify,\n"
"                            ttl that works), fanotify, inotify, ttl, off\n"
"  --ttl MS                  ttl mode (and its fallback): names and attributes\n"
"                            are checked again after MS ms (default 1000)\n"
"  --entry-timeout S         kernel's name cache timeout, seconds (default\n"
"                            3600 with coherence on; 0 in ttl mode; 1 off)\n"
"  --attr-timeout S          kernel's attribute cache timeout (the same);\n"
"                            0 and 0 send every path component to dcfs\n"
"  --cache-entries N         cap on cached names (default %u)\n"
"  --open-requests           a file handle per open (OPEN and RELEASE sent\n"
"                            for every open); default: handle-less I/O,\n"
"                            no request per open (docs/dcfs.md)\n"
"  --uring[=N]               FUSE over io_uring (Linux 6.14+, the fuse module's\n"
"                            enable_uring set to Y): requests served on the CPU\n"
"                            that made them, by N threads per CPU (default 2)\n"
"  --stats FILE              node count and cache counters, rewritten every\n"
"                            second and at exit\n"
"  -f, --foreground          do not daemonize\n"
"  -d, --debug               libfuse's request log on stderr (implies -f)\n"
"  -o OPT[,OPT...]           FUSE mount options (default_permissions and\n"
"                            allow_other are always given)\n"
"  -h, --help   -V, --version\n", DC_DEFAULT_MAX_ENTRIES);
}

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("dcfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double parse_seconds(const char *name, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 1e9)
		die("%s: '%s' is not a number of seconds >= 0", name, s);
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
		die("%s: '%s' is not a whole number from %lld to %lld", name, s,
		    min, max);
	return v;
}

/* "--name VALUE" or "--name=VALUE"; NULL if argv[*i] is not --name. */
static const char *long_value(int argc, char **argv, int *i, const char *name)
{
	size_t n = strlen(name);
	const char *a = argv[*i];

	if (strncmp(a, name, n) != 0)
		return NULL;
	if (a[n] == '=')
		return a + n + 1;
	if (a[n] != '\0')
		return NULL;
	if (*i + 1 >= argc)
		die("%s needs a value", name);
	return argv[++*i];
}

static void parse_args(int argc, char **argv)
{
	const char *positional[2];
	int npos = 0, i;
	const char *v;

	dcfs.mode = DC_MODE_RCU;
	dcfs.entry_timeout = dcfs.attr_timeout = -1;	/* by coherence, below */
	dcfs.coherence = DC_WATCH_AUTO;
	dcfs.ttl_ms = 1000;
	if (fuse_opt_add_arg(&opt.fargs, argv[0]))
		die("out of memory");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("dcfs %s (libfuse %s)\n", DCFS_VERSION, fuse_pkgversion());
			exit(0);
		} else if ((v = long_value(argc, argv, &i, "--mode"))) {
			if (dc_mode_parse(v, &dcfs.mode))
				die("--mode: '%s' is not rcu, global or rwlock", v);
		} else if ((v = long_value(argc, argv, &i, "--coherence"))) {
			if (dc_watch_mode_parse(v, &dcfs.coherence))
				die("--coherence: '%s' is not auto, fanotify, inotify, "
				    "ttl or off", v);
		} else if ((v = long_value(argc, argv, &i, "--ttl"))) {
			dcfs.ttl_ms = (uint32_t)parse_count("--ttl", v, 1, 86400000);
		} else if ((v = long_value(argc, argv, &i, "--threads"))) {
			opt.threads = (int)parse_count("--threads", v, 1, 100000);
		} else if ((v = long_value(argc, argv, &i, "--readers"))) {
			opt.readers = (int)parse_count("--readers", v, 1, 100000);
		} else if ((v = long_value(argc, argv, &i, "--entry-timeout"))) {
			dcfs.entry_timeout = parse_seconds("--entry-timeout", v);
		} else if ((v = long_value(argc, argv, &i, "--attr-timeout"))) {
			dcfs.attr_timeout = parse_seconds("--attr-timeout", v);
		} else if ((v = long_value(argc, argv, &i, "--cache-entries"))) {
			opt.cache_entries = (uint64_t)parse_count("--cache-entries", v,
								  16, 1ll << 32);
		} else if ((v = long_value(argc, argv, &i, "--stats"))) {
			opt.stats_path = (char *)v;
		} else if (!strcmp(a, "--uring")) {
			opt.uring_depth = 2;
		} else if (!strncmp(a, "--uring=", 8)) {
			opt.uring_depth = (int)parse_count("--uring", a + 8, 1, 64);
		} else if (!strcmp(a, "--open-requests")) {
			dcfs.open_requests = true;
		} else if (!strcmp(a, "-f") || !strcmp(a, "--foreground")) {
			opt.foreground = true;
		} else if (!strcmp(a, "-d") || !strcmp(a, "--debug")) {
			dcfs.debug = opt.foreground = true;
		} else if (!strncmp(a, "-o", 2)) {
			v = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v || !*v)
				die("-o needs mount options");
			if (fuse_opt_add_arg(&opt.fargs, "-o") ||
			    fuse_opt_add_arg(&opt.fargs, v))
				die("out of memory");
		} else if (a[0] == '-' && a[1] != '\0') {
			die("unknown option '%s' (see dcfs --help)", a);
		} else {
			if (npos == 2)
				die("too many arguments ('%s'); see dcfs --help", a);
			positional[npos++] = a;
		}
	}
	if (npos < 2)
		die("usage: dcfs SOURCE_DIR MOUNTPOINT [options] (see dcfs --help)");
	opt.source = positional[0];
	opt.mountpoint = positional[1];
}

/* An absolute name for a file that may not exist yet (--stats). */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *s;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		die("getcwd: %s", strerror(errno));
	s = malloc(strlen(cwd) + strlen(path) + 2);
	if (!s)
		die("out of memory");
	sprintf(s, "%s/%s", cwd, path);
	return s;
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
		fprintf(stderr, "dcfs: ttl mode with kernel timeouts above 0: the "
			"kernel may show what it holds for %g s more than the TTL\n",
			dcfs.entry_timeout > dcfs.attr_timeout ?
			dcfs.entry_timeout : dcfs.attr_timeout);
}

static void check_paths(void)
{
	struct statx stx;
	struct stat st;
	size_t n;

	if (stat(opt.source, &st) < 0)
		die("source '%s': %s", opt.source, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		die("source '%s' is not a directory", opt.source);
	opt.src_abs = realpath(opt.source, NULL);
	if (!opt.src_abs)
		die("source '%s': %s", opt.source, strerror(errno));

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
	n = strlen(opt.src_abs);
	if (strncmp(opt.mnt_abs, opt.src_abs, n) == 0 &&
	    (opt.mnt_abs[n] == '/' || (n == 1 && opt.mnt_abs[1])))
		die("mount point '%s' lies inside the source '%s'", opt.mnt_abs,
		    opt.src_abs);
	if (access("/dev/fuse", R_OK | W_OK) < 0)
		die("/dev/fuse: %s (is the fuse module loaded?)", strerror(errno));
	if (opt.uring_depth && !uring_kernel_enabled())
		die("--uring: the kernel's FUSE over io_uring is off (as root: "
		    "echo Y > /sys/module/fuse/parameters/enable_uring; Linux 6.14+)");
	if (opt.stats_path)
		opt.stats_path = absolute(opt.stats_path);
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

static void write_stats(const char *state, const struct dc_stats *cs)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	if (!opt.stats_path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", opt.stats_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f,
		"state %s\n"
		"pid %d\n"
		"mode %s\n"
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
		state, (int)getpid(), dc_mode_name(dcfs.mode),
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
	if (fclose(f) == 0)
		rename(tmp, opt.stats_path);
	else
		unlink(tmp);
}

static void *stats_thread(void *arg)
{
	struct dc_stats cs;
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
		dc_get_stats(dcfs.cache, &cs);
		write_stats("running", &cs);
		pthread_mutex_lock(&stats_lock);
	}
	pthread_mutex_unlock(&stats_lock);
	return NULL;
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
			perror("dcfs: status pipe");
		close(status_fd);
		status_fd = -1;
	} else if (strcmp(msg, "OK") != 0) {
		fprintf(stderr, "dcfs: %s\n", msg);
	}
}

/*
 * Parent: wait for the child's word, then for the mount to answer.  The
 * stat goes through the kernel to the child's loop, so success means the
 * file system is being served.
 */
static int parent_wait(int fd, pid_t child)
{
	char msg[513];
	ssize_t n, got = 0;
	struct stat st;
	int status;

	while ((n = read(fd, msg + got, sizeof(msg) - 1 - (size_t)got)) > 0)
		got += n;
	msg[got] = '\0';
	if (got == 0) {
		if (waitpid(child, &status, WNOHANG) == child && WIFSIGNALED(status))
			fprintf(stderr, "dcfs: the daemon died of signal %d while starting\n",
				WTERMSIG(status));
		else
			fprintf(stderr, "dcfs: the daemon exited while starting\n");
		return 1;
	}
	if (strcmp(msg, "OK") != 0) {
		fprintf(stderr, "dcfs: %s\n", msg);
		return 1;
	}
	if (stat(opt.mnt_abs, &st) < 0) {
		fprintf(stderr, "dcfs: the mount at %s does not answer: %s\n",
			opt.mnt_abs, strerror(errno));
		return 1;
	}
	return 0;
}

static void to_dev_null(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0)
		return;
	dup2(fd, 0);
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

int main(int argc, char **argv)
{
	struct dc_options copt;
	struct dc_stats cs;
	pthread_t stats_tid;
	bool have_stats = false;
	char *mopts;
	rlim_t nofile;
	int pfd[2], ret, err;
	int64_t left;
	pid_t pid;

	parse_args(argc, argv);
	check_paths();
	nofile = raise_nofile();
	preload_unwinder();
	dcfs.as_caller = geteuid() == 0;
	umask(0);		/* the kernel applied the caller's umask already */
	if (dcfs.as_caller && setgroups(0, NULL) < 0)
		die("setgroups: %s", strerror(errno));

	dcfs.root_fd = open(opt.src_abs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dcfs.root_fd < 0)
		die("source '%s': %s", opt.src_abs, strerror(errno));
	nodes_setup_handles((uint64_t)nofile);

	/* default_permissions: the kernel checks access against our attributes;
	 * allow_other: every user may use the mount */
	mopts = malloc(strlen(opt.src_abs) * 2 + 64);
	if (!mopts)
		die("out of memory");
	{
		char *q = mopts + sprintf(mopts, "default_permissions,allow_other,"
					  "subtype=dcfs,fsname=");
		const char *p;

		for (p = opt.src_abs; *p; p++) {
			if (*p == ',' || *p == '\\')
				*q++ = '\\';
			*q++ = *p;
		}
		*q = '\0';
	}
	if (fuse_opt_insert_arg(&opt.fargs, 1, "-o") ||
	    fuse_opt_insert_arg(&opt.fargs, 2, mopts))
		die("out of memory");
	free(mopts);
	if (dcfs.debug && fuse_opt_add_arg(&opt.fargs, "-d"))
		die("out of memory");

	dcfs.se = fuse_session_new(&opt.fargs, &dcfs_ops, sizeof(dcfs_ops), NULL);
	if (!dcfs.se)
		die("could not create the FUSE session (bad -o option?)");
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
	}
	if (chdir("/") < 0)
		perror("dcfs: chdir /");
	set_signals();

	/* after the fork: the cache registers this thread with liburcu and
	 * the first deferred free starts liburcu's callback thread */
	err = nodes_init((uint64_t)nofile);
	if (!err)
		err = node_make_root(dcfs.root_fd, &dcfs.root);
	if (err) {
		fuse_session_unmount(dcfs.se);
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
		fuse_session_unmount(dcfs.se);
		report("creating the cache: %s", strerror(-err));
		return 1;
	}
	node_set_root_dentry(dcfs.root, dc_root(dcfs.cache));
	if (coherence_start(opt.src_abs)) {
		fuse_session_unmount(dcfs.se);
		report("start-up: --coherence=%s failed (see above)",
		       dc_watch_mode_name(dcfs.coherence));
		return 1;
	}
	set_timeouts();

	if (opt.stats_path) {
		dc_get_stats(dcfs.cache, &cs);
		write_stats("running", &cs);
		if (pthread_create(&stats_tid, NULL, stats_thread, NULL) == 0)
			have_stats = true;
		else
			fprintf(stderr, "dcfs: no statistics thread\n");
	}
	/* before the loop reads INIT, which decides on the ring */
	if (opt.uring_depth && uring_start(dcfs.se, (unsigned)opt.uring_depth)) {
		fuse_session_unmount(dcfs.se);
		report("start-up: %s", strerror(ENOMEM));
		return 1;
	}
	report("OK");
	if (!opt.foreground)
		to_dev_null();
	ret = dcfs_loop(dcfs.se, (unsigned)opt.threads, (unsigned)opt.readers);
	if (ret < 0)
		fprintf(stderr, "dcfs: the request loop ended: %s\n", strerror(-ret));
	fuse_session_unmount(dcfs.se);
	coherence_stop();
	uring_stop();

	if (have_stats) {
		pthread_mutex_lock(&stats_lock);
		stats_stop = true;
		pthread_cond_signal(&stats_cv);
		pthread_mutex_unlock(&stats_lock);
		pthread_join(stats_tid, NULL);
	}
	fuse_session_destroy(dcfs.se);
	dcfs.se = NULL;

	/* every node goes: first the kernel's shares, then the cache's */
	dc_get_stats(dcfs.cache, &cs);
	nodes_drop_kernel_refs();
	dc_cache_destroy(dcfs.cache);
	dcfs.cache = NULL;
	left = nodes_count();
	write_stats("exited", &cs);
	if (left)
		fprintf(stderr, "dcfs: %lld nodes left at exit\n", (long long)left);
	nodes_fini();
	if (dcfs.handle_fd >= 0)
		close(dcfs.handle_fd);
	fuse_opt_free_args(&opt.fargs);
	return ret < 0 || left ? 1 : 0;
}
