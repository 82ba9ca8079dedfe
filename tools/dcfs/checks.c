// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * checks.c - what the parent checks before it mounts: the source and the
 * mount point, --stats FILE (stats.c), /dev/fuse, and the options that
 * need the system's consent (allow_other, --uring).  Each failure is a
 * clear message and exit 1, before anything is mounted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"

/* Does path lie in dir (both absolute, resolved) or is it dir? */
bool path_within(const char *path, const char *dir)
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

void check_paths(void)
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
	stats_setup();
	if (opt.access != ACCESS_OWNER && geteuid() != 0 && !user_allow_other())
		die("%s as a user other than root needs user_allow_other in "
		    "/etc/fuse.conf (or --no-allow-other: only you may use the mount)",
		    opt.access == ACCESS_ROOT ? "allow_root" : "allow_other");
	check_dev_fuse();
	if (opt.uring_depth && !uring_kernel_enabled())
		die("--uring: the kernel's FUSE over io_uring is off (as root: "
		    "echo Y > /sys/module/fuse/parameters/enable_uring; Linux 6.14+)");
}
