// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main.c - dcfs: start-up, the daemon, systemd readiness, signals and
 * shutdown.  The command line is options.c (checked by checks.c), the
 * statistics file stats.c, privileges and the sandbox sandbox.c.
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
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"
#include "options.h"
#include "remote.h"

struct dcfs dcfs;

static int status_fd = -1;		/* child -> parent, start-up result */
static int notify_fd = -1;		/* $NOTIFY_SOCKET, connected */
static int devnull = -1;		/* a daemon's stdio, opened early */

/* ---- systemd readiness --------------------------------------------------- */

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

/* ---- settings made at start ---------------------------------------------- */

/*
 * The kernel's timeouts the user left to us: long where a watcher tells
 * the kernel of every change, 0 in ttl mode (the cache's TTLs bound the
 * answers' age, and the kernel asks every time), libfuse's 1 s without
 * coherence.
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

/* its arrival is all: it makes the worker's open fail with EINTR */
static void on_interrupt_signal(int sig)
{
	(void)sig;
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
	sa.sa_handler = on_interrupt_signal;
	sigaction(DCFS_SIG_INTERRUPT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
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
	log_open_syslog();
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
	coherence_quiesce();	/* the watcher writes to the session: first */
	fuse_session_unmount(dcfs.se);
	sandbox_unmount();
}

/*
 * At exit, n threads (who) are still in host calls that do not return:
 * they may yet use the session, the nodes and the cache, so the process
 * ends with its statistics written and its mount gone, freeing nothing.
 */
static _Noreturn void leave_stuck(unsigned n, const char *who,
				  enum dc_watch_mode coherence)
{
	struct dc_stats cs;

	dcfs_log(LOG_ERR, "%u %s still in host calls at exit (stuck): "
		 "unmounting and leaving without freeing", n, who);
	dc_get_stats(dcfs.cache, &cs);
	stats_final(&cs, coherence);
	unmount_fs();	/* again after the rings' wait: a no-op */
	_exit(1);
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

/* "dcfs nfs://HOST/EXPORT MOUNTPOINT": remote.c, where libnfs is. */
static int serve_remote(int argc, char **argv)
{
#ifdef DC_HAVE_NFS
	return remote_main(argc, argv);
#else
	(void)argc;
	fprintf(stderr, "dcfs: %s: this dcfs was built without NFS support "
		"(install libnfs-dev and build again)\n", argv[0]);
	return 2;
#endif
}

int main(int argc, char **argv)
{
	struct dc_options copt;
	struct dc_stats cs;
	enum dc_watch_mode coherence;
	rlim_t nofile;
	int pfd[2], ret, err, i;
	int64_t left;
	unsigned stuck;
	pid_t pid;

	for (i = 1; i < argc; i++)
		if (remote_source(argv[i]))
			return serve_remote(argc, argv);
	log_take_fuse();
	parse_args(argc, argv);
	notify_connect();
	check_paths();
	/* before the first thread (preload_unwinder's) */
	dcfs.as_caller = geteuid() == 0;
	if (caps_restrict(dcfs.as_caller))
		exit(1);
	nofile = proc_raise_nofile();	/* a descriptor per node the kernel knows */
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
	err = stats_write("starting", &cs, DC_WATCH_OFF);
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

	ops_names_init();
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

	stats_start();
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
	ret = dcfs_loop(dcfs.se, (unsigned)opt.threads, (unsigned)opt.readers, &stuck);
	notify_systemd("STOPPING=1");
	if (ret < 0)
		dcfs_log(LOG_ERR, "the request loop ended: %s", strerror(-ret));
	/* the statistics thread reads the watcher and the rings: first */
	stats_stop();
	coherence = coherence_mode();
	if (stuck)
		leave_stuck(stuck, "workers", coherence);
	unmount_fs();
	/* the rings' threads may still serve a lookup, which asks the
	 * watcher to watch a new directory: they end before the watcher */
	stuck = uring_stop();
	if (stuck)
		leave_stuck(stuck, "ring threads", coherence);
	coherence_stop();
	fuse_session_destroy(dcfs.se);
	dcfs.se = NULL;

	/* every node goes: first the kernel's shares, then the cache's */
	dc_get_stats(dcfs.cache, &cs);
	nodes_drop_kernel_refs();
	dc_cache_destroy(dcfs.cache);
	dcfs.cache = NULL;
	left = nodes_count();
	stats_final(&cs, coherence);
	if (left)
		dcfs_log(LOG_ERR, "%lld nodes left at exit", (long long)left);
	nodes_fini();
	if (dcfs.handle_fd >= 0)
		close(dcfs.handle_fd);
	fuse_opt_free_args(&opt.fargs);
	return ret < 0 || left ? 1 : 0;
}
