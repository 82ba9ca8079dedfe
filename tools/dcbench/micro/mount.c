/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * mount.c - the kernel reference's file system: a tmpfs of our own in a
 * private temporary directory (or, when mounting is impossible, a
 * directory under the shared /dev/shm), the working directory to come
 * back to after a kernel run, and the clean-up that removes them at exit
 * and on a fatal signal.
 *
 * The signal handler uses async-signal-safe calls only (umount2, rmdir,
 * fork, execve, waitpid), then dies of the signal; g_mounted and g_made
 * are sig_atomic_t so that it sees what the main thread has done.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "micro/micro.h"

extern char **environ;

static char g_mnt[256];			/* our private temporary directory */
static volatile sig_atomic_t g_mounted, g_made;
static bool g_fallback;			/* /dev/shm, not a mount of our own */
static char g_kfs_note[320];
static int g_cwdfd = -1;

static void rm_tree_now(const char *dir);

static void kernel_cleanup(void)
{
	if (g_mounted) {
		if (g_cwdfd >= 0 && fchdir(g_cwdfd)) {
			/* nothing better to do */
		}
		if (umount2(g_mnt, MNT_DETACH) == 0)
			g_mounted = 0;
	}
	if (g_made) {
		if (g_fallback)
			rm_tree_now(g_mnt);
		else
			rmdir(g_mnt);
		g_made = 0;
	}
}

/* Signal: undo the mount (async-signal-safe calls only), then die of it. */
static void on_signal(int sig)
{
	if (g_mounted)
		umount2(g_mnt, MNT_DETACH);
	if (g_made) {
		if (g_fallback) {
			pid_t pid = fork();

			if (pid == 0) {
				char *av[] = { "rm", "-rf", g_mnt, NULL };

				execve("/bin/rm", av, environ);
				_exit(127);
			}
			if (pid > 0)
				waitpid(pid, NULL, 0);
		} else {
			rmdir(g_mnt);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_tree_now(const char *dir)
{
	nftw(dir, rm_cb, 64, FTW_DEPTH | FTW_PHYS);
}

/*
 * A tmpfs of our own in a private temporary directory; in a mount
 * namespace of our own when we can make one, so that the mount goes away
 * with us even if we are killed.  If mounting is impossible: a directory
 * under /dev/shm (a tmpfs too, but shared), and the report says so.
 */
int kfs_setup(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE };
	struct sigaction sa;
	bool ns = false;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	atexit(kernel_cleanup);
	snprintf(g_mnt, sizeof(g_mnt), "/tmp/dcbench-micro.XXXXXX");
	if (mkdtemp(g_mnt)) {
		g_made = 1;
		if (unshare(CLONE_NEWNS) == 0 &&
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
			ns = true;
		if (mount("none", g_mnt, "tmpfs", 0, "nr_inodes=0,size=4g,mode=0700") == 0) {
			g_mounted = 1;
			snprintf(g_kfs_note, sizeof(g_kfs_note), "tmpfs mounted at %s%s",
				 g_mnt, ns ? " (private mount namespace)" : "");
			return 0;
		}
		snprintf(g_kfs_note, sizeof(g_kfs_note), "mount -t tmpfs failed (%s); ",
			 strerror(errno));
		rmdir(g_mnt);
		g_made = 0;
	} else {
		snprintf(g_kfs_note, sizeof(g_kfs_note), "mkdtemp in /tmp failed (%s); ",
			 strerror(errno));
	}
	snprintf(g_mnt, sizeof(g_mnt), "/dev/shm/dcbench-micro.XXXXXX");
	if (!mkdtemp(g_mnt)) {
		size_t l = strlen(g_kfs_note);

		snprintf(g_kfs_note + l, sizeof(g_kfs_note) - l,
			 "/dev/shm failed too: kernel not measured");
		return -1;
	}
	g_made = 1;
	g_fallback = true;
	{
		size_t l = strlen(g_kfs_note);

		snprintf(g_kfs_note + l, sizeof(g_kfs_note) - l,
			 "fell back to %s (the shared /dev/shm tmpfs)", g_mnt);
	}
	return 0;
}

int kfs_init(void)
{
	g_cwdfd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g_cwdfd < 0) {
		fprintf(stderr, "dcbench micro: cannot open the working directory: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

const char *kfs_dir(void)
{
	return g_made ? g_mnt : NULL;
}

const char *kfs_note(void)
{
	return g_kfs_note;
}

void kfs_leave(void)
{
	if (fchdir(g_cwdfd)) {
		fprintf(stderr, "dcbench micro: cannot return to the working directory: %s\n",
			strerror(errno));
		exit(1);
	}
}

void kfs_end(void)
{
	kernel_cleanup();
	if (g_cwdfd >= 0)
		close(g_cwdfd);
	g_cwdfd = -1;
}
