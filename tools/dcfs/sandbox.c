// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * sandbox.c - dcfs reduced to the privileges it uses.
 *
 * dcfs runs as root and, with allow_other, serves every user: a flaw in
 * it, or in a library under it, is a flaw in a root process that any
 * local user can feed.  Three fences, each of use without the others:
 *
 *   capabilities  at start, before any thread exists (capset changes the
 *                 calling thread alone, and a thread starts with its
 *                 creator's sets), every capability dcfs does not use
 *                 leaves the bounding, permitted, effective and
 *                 inheritable sets, and so the ambient one.  kept[] says
 *                 what stays and why.  Acting as the caller needs
 *                 CAP_SETUID and CAP_SETGID: without them setfsuid and
 *                 setgroups fail, and requests would run as root, so dcfs
 *                 refuses to start instead.
 *
 *   seccomp       after start-up, before the request loop: an allow-list
 *                 of the system calls that dcfs, glibc, libfuse and
 *                 liburcu make, put on every thread already running
 *                 (TSYNC) and inherited by those to come.  Any other call
 *                 kills the process (--seccomp=kill) or is logged by the
 *                 kernel and let through (log).
 *
 *   namespace     --sandbox=namespace: a mount namespace of dcfs's own
 *                 whose root, an empty read-only tmpfs, holds only the
 *                 source (at its own path, so that paths given at start
 *                 still name it), /proc (ops.c reaches inodes through
 *                 /proc/self/fd/N) and an empty stand-in at the mount
 *                 point (libfuse unmounts that path at exit).  The real
 *                 mount stays in the first namespace, where a child
 *                 forked before the switch waits for dcfs to end, however
 *                 it ends, and unmounts it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dcfs.h"

/* ---- capabilities --------------------------------------------------------- */

/*
 * What dcfs keeps as root, and why.  Everything else goes, CAP_SETPCAP
 * last (dropping from the bounding set needs it).
 */
static const int kept[] = {
	/* SETATTR's owner and group changes */
	CAP_CHOWN,
	/* the host call after the kernel's own check: default_permissions
	 * judged the caller, dcfs must not judge again as itself */
	CAP_DAC_OVERRIDE,
	/* open_by_handle_at: files held by handle (node.c) and the fanotify
	 * watcher's directory handles (src/watch_fanotify.c) */
	CAP_DAC_READ_SEARCH,
	/* chmod, utimes and xattrs of files dcfs (fsuid 0) does not own */
	CAP_FOWNER,
	/* set-group-ID kept on chmod and on creations in such directories */
	CAP_FSETID,
	/* setfsuid and setgroups per thread: acting as the caller */
	CAP_SETUID,
	CAP_SETGID,
	/* device nodes made by root callers */
	CAP_MKNOD,
	/* security.capability xattrs (setcap through the mount) */
	CAP_SETFCAP,
	/* libfuse's mount(2) and umount2(2), fanotify_init and its
	 * filesystem marks, trusted.* and security.* xattrs, and the mount
	 * namespace of --sandbox=namespace */
	CAP_SYS_ADMIN,
	/* RLIMIT_NOFILE above the hard limit (main.c), and root callers'
	 * writes into reserved blocks; lowered for other callers
	 * (caps_resource) */
	CAP_SYS_RESOURCE,
	/* the watcher thread's nice -10 (src/watch_event.c) */
	CAP_SYS_NICE,
};

#define CAP_BIT(c)	(1ull << (c))

static bool resource_kept;	/* CAP_SYS_RESOURCE permitted after the drop */

static uint64_t kept_mask(void)
{
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		m |= CAP_BIT(kept[i]);
	return m;
}

struct capsets {
	uint64_t eff, prm, inh;
};

/* The calling thread's sets (pid 0: this thread, not the process). */
static int caps_get(struct capsets *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	c->eff = d[0].effective | (uint64_t)d[1].effective << 32;
	c->prm = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c->inh = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

static int caps_set(const struct capsets *c)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)c->eff, (uint32_t)c->prm, (uint32_t)c->inh },
		{ (uint32_t)(c->eff >> 32), (uint32_t)(c->prm >> 32),
		  (uint32_t)(c->inh >> 32) },
	};

	return (int)syscall(SYS_capset, &h, d);
}

/* The bounding set: every capability the kernel knows but keep. */
static int drop_bounding(uint64_t keep)
{
	int cap, err = 0;

	for (cap = 0; cap < 64; cap++) {
		if ((keep & CAP_BIT(cap)) || cap == CAP_SETPCAP)
			continue;
		if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) < 0)
			break;		/* past the last the kernel knows */
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && !err)
			err = errno;
	}
	if (!(keep & CAP_BIT(CAP_SETPCAP)) &&
	    prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0) < 0 && !err)
		err = errno;
	return err;
}

int caps_restrict(bool as_caller)
{
	uint64_t keep = kept_mask();
	struct capsets c;
	int err;

	if (geteuid() != 0)
		return 0;	/* a user's dcfs has nothing to drop */
	if (caps_get(&c) < 0) {
		dcfs_log(LOG_ERR, "capget: %s", strerror(errno));
		return -1;
	}
	if (as_caller && (!(c.eff & CAP_BIT(CAP_SETUID)) ||
			  !(c.eff & CAP_BIT(CAP_SETGID)))) {
		dcfs_log(LOG_ERR, "running as root without %s%s%s: dcfs acts as "
			 "the calling user (setfsuid, setfsgid, setgroups) and "
			 "would act as root instead; give it those capabilities "
			 "(systemd: CapabilityBoundingSet=)",
			 c.eff & CAP_BIT(CAP_SETUID) ? "" : "CAP_SETUID",
			 !(c.eff & CAP_BIT(CAP_SETUID)) &&
			 !(c.eff & CAP_BIT(CAP_SETGID)) ? " and " : "",
			 c.eff & CAP_BIT(CAP_SETGID) ? "" : "CAP_SETGID");
		return -1;
	}
	/* without CAP_SETPCAP the bounding set stays; it only limits what
	 * an executed program gets, and dcfs executes none once serving */
	err = drop_bounding(keep);
	if (err)
		dcfs_log(LOG_NOTICE, "the capability bounding set stays as it "
			 "is: %s", strerror(err));
	c.prm &= keep;
	c.eff &= keep;
	c.inh = 0;		/* and with it the ambient set */
	if (caps_set(&c) < 0) {
		dcfs_log(LOG_ERR, "capset: %s", strerror(errno));
		return -1;
	}
	resource_kept = c.prm & CAP_BIT(CAP_SYS_RESOURCE);
	return 0;
}

/*
 * CAP_SYS_RESOURCE on or off in this thread's effective set.  The set is
 * read each time, not remembered: setfsuid drops the file system
 * capabilities from it (and brings them back), so a copy taken at start
 * would hand a thread acting as a user CAP_DAC_OVERRIDE again.
 */
int caps_resource(bool on)
{
	static bool said;
	struct capsets c;
	uint64_t want;

	if (!resource_kept)
		return 0;
	if (caps_get(&c) == 0) {
		want = on ? c.eff | CAP_BIT(CAP_SYS_RESOURCE) :
			    c.eff & ~CAP_BIT(CAP_SYS_RESOURCE);
		if (want == c.eff)
			return 0;
		c.eff = want;
		if (caps_set(&c) == 0)
			return 0;
	}
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		dcfs_log(LOG_ERR, "cannot turn CAP_SYS_RESOURCE %s: %s",
			 on ? "on" : "off", strerror(errno));
	return -1;
}

/* A forked child's: what it needs alone. */
static void caps_only(uint64_t keep)
{
	struct capsets c;

	if (geteuid() != 0 || caps_get(&c) < 0)
		return;
	c.prm &= keep;
	c.eff &= keep;
	c.inh = 0;
	caps_set(&c);
}

/* ---- seccomp ---------------------------------------------------------------- */

/*
 * Every system call a serving dcfs makes, found by reading the code and by
 * running tests/test_dcfs.sh (plain and under ASan) with --seccomp=log:
 * the kernel logs each call outside the list.  Grouped by who makes them.
 * Names the architecture lacks are skipped.
 */
static const char *const allowed[] = {
	/* glibc: memory, threads, signals, time */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise",
	"futex", "set_robust_list", "get_robust_list", "rseq",
	"set_tid_address", "exit", "exit_group", "rt_sigaction",
	"rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sigaltstack", "tgkill", "tkill",
	"restart_syscall", "sched_yield", "sched_getaffinity",
	"sched_setaffinity", "getcpu", "clock_gettime", "clock_getres",
	"clock_nanosleep", "nanosleep", "gettimeofday", "time", "getrandom",
	"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid",
	"getegid", "getresuid", "getresgid", "getgroups", "prlimit64",
	"getrlimit", "prctl", "arch_prctl", "uname", "sysinfo",
	/* liburcu */
	"membarrier",
	/* libfuse: the device, its pipes, replies, the unmount at exit */
	"read", "readv", "write", "writev", "poll", "ppoll", "pipe", "pipe2",
	"splice", "vmsplice", "tee", "ioctl", "umount2",
	/* requests: names, attributes, data, xattrs, handles */
	"openat", "open", "close", "close_range", "dup", "dup2", "dup3",
	"fcntl", "lseek", "pread64", "pwrite64", "preadv", "pwritev",
	"preadv2", "pwritev2", "newfstatat", "fstat", "lstat", "stat",
	"statx", "statfs", "fstatfs", "getdents64", "readlink", "readlinkat",
	"access", "faccessat", "faccessat2", "mkdirat", "mknodat",
	"symlinkat", "linkat", "unlinkat", "rename", "renameat", "renameat2",
	"chmod", "fchmod", "fchmodat", "fchownat", "fchown", "lchown",
	"utimensat", "truncate", "ftruncate", "fallocate", "fsync",
	"fdatasync", "copy_file_range", "fadvise64", "readahead",
	"getxattr", "lgetxattr", "fgetxattr", "setxattr", "lsetxattr",
	"fsetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr",
	"lremovexattr", "fremovexattr", "name_to_handle_at",
	"open_by_handle_at", "umask",
	/* acting as the caller */
	"setfsuid", "setfsgid", "setgroups", "capget", "capset",
	/* the watcher (src/watch.c) */
	"fanotify_init", "fanotify_mark", "inotify_init1", "inotify_add_watch",
	"inotify_rm_watch", "eventfd2", "setpriority", "getpriority",
	/* syslog and systemd's notification socket (AF_UNIX only, below) */
	"connect", "sendto", "sendmsg",
	/* --sandbox=namespace: the unmounting child */
	"wait4",
	NULL
};

static const char *const allowed_uring[] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register", NULL
};

/*
 * ASan's leak check at exit stops the world: a tracer task (a clone
 * without CLONE_THREAD) lists /proc/self/task (getdents) and attaches to
 * every thread (ptrace).  Instrumented builds only.
 */
#ifdef __SANITIZE_ADDRESS__
#define LEAK_CHECK	1
static const char *const allowed_leak_check[] = {
	"clone", "getdents", "ptrace", NULL
};
#else
#define LEAK_CHECK	0
static const char *const allowed_leak_check[] = { NULL };
#endif

int seccomp_parse(const char *s, enum dcfs_seccomp *out)
{
	static const char *const names[] = {
		[FILTER_NONE] = "none", [FILTER_LOG] = "log",
		[FILTER_KILL] = "kill",
	};
	int i;

	for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum dcfs_seccomp)i;
			return 0;
		}
	return -1;
}

static int allow_list(scmp_filter_ctx ctx, const char *const *names)
{
	int nr, err;

	for (; *names; names++) {
		nr = seccomp_syscall_resolve_name(*names);
		if (nr == __NR_SCMP_ERROR || nr < 0)
			continue;	/* not on this architecture */
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
		if (err) {
			dcfs_log(LOG_ERR, "seccomp: %s: %s", *names, strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * The calls allowed with some arguments only: threads but no processes
 * (clone3's arguments lie in memory a filter cannot read, so it answers
 * ENOSYS and glibc falls back to clone; in ASan builds any clone, see
 * LEAK_CHECK), a thread's own fs_struct (ops.c: a umask per thread), and
 * local sockets.
 */
static int allow_narrow(scmp_filter_ctx ctx)
{
	int err;

	err = LEAK_CHECK ? allow_list(ctx, allowed_leak_check) :
	      seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
			       SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1,
				       SCMP_A0(SCMP_CMP_EQ, CLONE_FS));
	if (!err)
		err = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				       SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	if (err)
		dcfs_log(LOG_ERR, "seccomp: a rule: %s", strerror(-err));
	return err;
}

int seccomp_install(enum dcfs_seccomp mode, bool uring)
{
	uint32_t deny = mode == FILTER_LOG ? SCMP_ACT_LOG : SCMP_ACT_KILL_PROCESS;
	scmp_filter_ctx ctx;
	int err;

	if (mode == FILTER_NONE)
		return 0;
	ctx = seccomp_init(deny);
	if (!ctx) {
		dcfs_log(LOG_ERR, "seccomp: cannot make a filter");
		return -1;
	}
	/* every thread, those of liburcu and the watcher included; a call
	 * of another architecture (int 0x80) as any other outside the list,
	 * not libseccomp's default, which kills one thread */
	err = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	if (!err)
		err = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, deny);
	if (err)
		dcfs_log(LOG_ERR, "seccomp: the filter's attributes: %s",
			 strerror(-err));
	/* a binary tree: a request's calls pass a few tests, not a hundred */
	if (!err)
		seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (!err)
		err = allow_list(ctx, allowed);
	if (!err && uring)
		err = allow_list(ctx, allowed_uring);
	if (!err)
		err = allow_narrow(ctx);
	if (!err) {
		err = seccomp_load(ctx);
		if (err)
			dcfs_log(LOG_ERR, "seccomp: cannot load the filter: %s",
				 strerror(-err));
	}
	seccomp_release(ctx);
	return err ? -1 : 0;
}

/* ---- --sandbox=namespace ------------------------------------------------------ */

#define NEWROOT		"/tmp"	/* where the new root is built, in our namespace */

static pid_t unmounter = -1;	/* the child left in the first namespace */
static int unmounter_fd = -1;	/* its pipe: closed (or dcfs gone) = unmount */

int sandbox_parse(const char *s, bool *namespace)
{
	if (!strcmp(s, "none"))
		*namespace = false;
	else if (!strcmp(s, "namespace"))
		*namespace = true;
	else
		return -1;
	return 0;
}

/* Every descriptor but a and b (both above 2). */
static void close_all_but(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		close_range(3, (unsigned)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
	close_range((unsigned)hi + 1, ~0u, 0);
}

/*
 * The child that stays in the first namespace with a copy of /dev/fuse.
 * When dcfs ends (it closes the pipe, or dies and the kernel does) it
 * unmounts, in libfuse's order: nothing if the connection is gone
 * already (POLLERR: fusermount3 -u, umount), else close the last
 * descriptor, which ends the connection, then detach the mount.
 */
static void __attribute__((noreturn))
unmounter_main(int rfd, int fuse_fd, const char *mnt, bool foreground)
{
	struct pollfd p = { .fd = fuse_fd };
	sigset_t all;
	char c;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* a terminal's ^C goes to the whole group: it must outlive dcfs */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (!foreground)
			dup2(null, 2);
	}
	/* the daemon's descriptors, its syslog socket among them: a socket
	 * of its own, connected here, where /dev/log is */
	closelog();
	close_all_but(rfd, fuse_fd);
	if (!foreground)
		dcfs_log_to_syslog();
	caps_only(CAP_BIT(CAP_SYS_ADMIN));
	while (read(rfd, &c, 1) < 0 && errno == EINTR)
		;
	if (poll(&p, 1, 0) == 1 && (p.revents & POLLERR))
		_exit(0);
	close(fuse_fd);
	if (umount2(mnt, MNT_DETACH) < 0 && errno != EINVAL)
		dcfs_log(LOG_ERR, "unmounting %s: %s", mnt, strerror(errno));
	_exit(0);
}

static int start_unmounter(int fuse_fd, const char *mnt, bool foreground)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	unmounter = fork();
	if (unmounter < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (unmounter == 0)
		unmounter_main(p[0], fuse_fd, mnt, foreground);
	close(p[0]);
	unmounter_fd = p[1];
	return 0;
}

void sandbox_unmount(void)
{
	int status;

	if (unmounter < 0)
		return;
	close(unmounter_fd);
	unmounter_fd = -1;
	while (waitpid(unmounter, &status, 0) < 0 && errno == EINTR)
		;
	unmounter = -1;
}

/* mkdir -p of NEWROOT followed by path (absolute), into out. */
static int mkdirs(const char *path, char *out, size_t len)
{
	char *p, c;

	if (snprintf(out, len, NEWROOT "%s", path) >= (int)len)
		return -ENAMETOOLONG;
	for (p = out + strlen(NEWROOT) + 1; ; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(out, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			return 0;
	}
}

/* A read-only copy of a small file of the first root (uring.c counts
 * CPUs in /sys/devices/system/cpu/possible, which never changes). */
static int copy_file(const char *path)
{
	char dir[PATH_MAX], dst[PATH_MAX], buf[4096];
	ssize_t n;
	int in, out, err;

	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return 0;	/* uring.c says so and serves without */
	n = read(in, buf, sizeof(buf));
	close(in);
	if (n < 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	err = mkdirs(dir, dst, sizeof(dst));
	if (err)
		return err;
	snprintf(dst, sizeof(dst), NEWROOT "%s", path);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (out < 0)
		return -errno;
	err = write(out, buf, (size_t)n) == n ? 0 : -EIO;
	close(out);
	return err;
}

static int mount_proc(void)
{
	char path[PATH_MAX];
	int err = mkdirs("/proc", path, sizeof(path));
	unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	if (err)
		return err;
	/* only the processes (Linux 5.8): no /proc/sys, no /proc/kcore */
	if (mount("proc", path, "proc", fl, "subset=pid") == 0 ||
	    mount("proc", path, "proc", fl, NULL) == 0)
		return 0;
	return -errno;
}

/* The new root's contents, in NEWROOT; src: the source, in this namespace. */
static int build_root(const struct sandbox_spec *s, int src)
{
	char path[PATH_MAX], from[40];
	int err;

	/* libfuse's umount2 at exit finds this instead of the real mount */
	if (strcmp(s->mountpoint, "/")) {
		err = mkdirs(s->mountpoint, path, sizeof(path));
		if (err)
			return err;
		if (mount("dcfs-mountpoint", path, "tmpfs", MS_RDONLY | MS_NOSUID |
			  MS_NODEV | MS_NOEXEC, "size=4k,mode=0555") < 0)
			return -errno;
	}
	err = mkdirs(s->source, path, sizeof(path));
	if (err)
		return err;
	/* the source's own submounts come with it */
	snprintf(from, sizeof(from), "/proc/self/fd/%d", src);
	if (mount(from, path, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	err = mount_proc();
	if (!err && s->uring)
		err = copy_file("/sys/devices/system/cpu/possible");
	if (!err && mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID |
			  MS_NODEV | MS_NOEXEC, NULL) < 0)
		err = -errno;
	return err;
}

static int fail(const char *what)
{
	dcfs_log(LOG_ERR, "--sandbox: %s: %s", what, strerror(errno));
	return -1;
}

/*
 * The source, opened again in this namespace (a mount of another cannot
 * be bound), before NEWROOT's tmpfs may hide its path: the same
 * directory as dcfs.root_fd, or the source moved since the start.
 */
static int open_source_here(const struct sandbox_spec *s)
{
	struct stat a, b;
	int fd = open(s->source, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &a) < 0 || fstat(dcfs.root_fd, &b) < 0 ||
	    a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/* The namespace and its root, NEWROOT's tmpfs made "/". */
static int enter_root(const struct sandbox_spec *s)
{
	int err, src;

	if (unshare(CLONE_NEWNS) < 0)
		return fail("a mount namespace");
	/* nothing done here reaches the first namespace, and back */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail("private mounts");
	/* this namespace's copy of the FUSE mount: gone before any path
	 * below it is looked up (nobody serves it yet) */
	umount2(s->mountpoint, MNT_DETACH);
	src = open_source_here(s);
	if (src < 0)
		return fail(s->source);
	if (mount("dcfs-root", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=1m,mode=0755") < 0) {
		close(src);
		return fail("a tmpfs on " NEWROOT);
	}
	err = build_root(s, src);
	close(src);
	if (err) {
		errno = -err;
		return fail("the new root");
	}
	/* the old root stacked on the new one, then detached */
	if (chdir(NEWROOT) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return fail("pivot_root");
	return 0;
}

/*
 * The source's descriptors again, from the new root: those opened at
 * start lie in the first namespace, where ".." leads out of the source.
 */
static int reopen_source(const struct sandbox_spec *s)
{
	int fd = open(s->source, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		dcfs_log(LOG_ERR, "--sandbox: source '%s': %s", s->source,
			 strerror(errno));
		return -1;
	}
	close(dcfs.root_fd);
	if (dcfs.handle_fd >= 0)
		close(dcfs.handle_fd);
	dcfs.root_fd = fd;
	nodes_setup_handles(s->nofile);
	return 0;
}

int sandbox_enter(const struct sandbox_spec *s)
{
	int err = start_unmounter(s->fuse_fd, s->mountpoint, s->foreground);

	if (err) {
		dcfs_log(LOG_ERR, "--sandbox: the unmounting child: %s",
			 strerror(-err));
		return -1;
	}
	if (enter_root(s) || reopen_source(s)) {
		sandbox_unmount();
		return -1;
	}
	return 0;
}
