// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hostfs.c - a backend over a directory of the host file system.
 *
 * Confinement: every lookup is one openat() of one component relative to a
 * directory descriptor, with O_PATH|O_NOFOLLOW.  The component is checked
 * first: never empty, never "." or "..", never containing '/' or a NUL.
 * So the host never walks a path for us and never follows a symlink; a
 * symlink comes back as itself, and the cache decides what to do with its
 * target (which it reads with readlink and resolves, again one component at
 * a time, from the cache's own root).  Nothing can climb out of root.
 *
 * Cookies: the backend cookie of an inode is
 *   HOSTFS_NO_FD (0)        no descriptor: regular files, devices, fifos,
 *                           sockets.  Their lookup needs none, and keeping
 *                           one per file would exhaust RLIMIT_NOFILE;
 *   HOSTFS_ROOT (UINT64_MAX) the root directory, whose descriptor belongs
 *                           to the backend context (opened at
 *                           dc_hostfs_backend, closed at destroy);
 *   fd + 1                  anything else (directories and symlinks): an
 *                           O_PATH descriptor owned by the cache entry that
 *                           holds the inode, closed by release.
 * Storing fd + 1 keeps a zeroed struct dc_inode harmless: releasing it
 * closes nothing (a raw fd of 0 would close stdin).  Because the root's
 * cookie is the context's own descriptor, root() may be called any number
 * of times and releasing the root is a no-op.  Callers never make
 * cookies: the cache's update calls ask adopt(), which opens the new name
 * itself, so a cookie is always a descriptor hostfs opened.
 *
 * Descriptors: at most max_fds are kept (h->nfds counts them).  A lookup
 * that would keep one more answers -EMFILE, as the kernel would at its
 * own limit; the cache then evicts unused entries, which closes theirs,
 * and asks again.  So the cache never takes the process's last
 * descriptors, and a tree of any size resolves within the budget.
 *
 * Locking: the context is read-only between creation and destroy but for
 * its watcher (h->watch), and each descriptor has one owner; the kernel
 * serialises the rest.  The cache promises not to look the same name up
 * twice at once, and every lookup it discards it must release, or the
 * descriptor leaks.
 *
 * Watcher: a watcher started on a cache over hostfs (dc_watch_start)
 * attaches itself here, and every lookup that returns a directory gives it
 * to dc_watch_dir first, so that the directory is watched before any of its
 * names is looked up.  h->watch is read with an acquire load (none: no lock
 * taken, the cost of a lookup without a watcher is that load) and used
 * under h->lock's read side; detaching takes the write side, so it waits
 * for every lookup inside dc_watch_dir, after which none can reach the
 * watcher (it is freed next).  Writers are preferred: a stream of lookups
 * cannot hold a detach off.
 *
 * Attributes: ino, mode and owner come from fstat on the O_PATH descriptor; gen
 * is the device (dc_hostfs_gen), so that a tree spanning mounts (btrfs
 * subvolumes all have inode 256) never shows two inodes as one.  getattr on an inode without a descriptor is -ESTALE.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_PATH */
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/vfs.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define HOSTFS_NO_FD	0ull
#define HOSTFS_ROOT	UINT64_MAX
#define HOSTFS_MAX_FDS	65536u	/* kept at most, whatever the limit */

struct hostfs {
	int root_fd;		/* O_PATH|O_DIRECTORY, owned by the context */
	unsigned max_fds;	/* descriptors kept at most */
	unsigned nfds;		/* kept now (atomic) */
	struct dc_watch *watch;	/* told of each directory; NULL: none */
	pthread_rwlock_t lock;	/* watch: read side to use, write side to set */
};

/* The descriptor behind a cookie, or -1 when it has none. */
static int cookie_fd(const struct hostfs *h, uint64_t cookie)
{
	if (cookie == HOSTFS_ROOT)
		return h->root_fd;
	if (cookie == HOSTFS_NO_FD || cookie - 1 > (uint64_t)INT_MAX)
		return -1;
	return (int)(cookie - 1);
}

/* One more descriptor to keep, within the budget?  Else -EMFILE. */
static int keep_fd(struct hostfs *h)
{
	/* relaxed: a count, ordered against nothing; the kernel owns the fds */
	if (__atomic_add_fetch(&h->nfds, 1, __ATOMIC_RELAXED) <= h->max_fds)
		return 0;
	__atomic_sub_fetch(&h->nfds, 1, __ATOMIC_RELAXED);
	return -EMFILE;
}

static void drop_fd(struct hostfs *h, int fd)
{
	close(fd);
	__atomic_sub_fetch(&h->nfds, 1, __ATOMIC_RELAXED);
}

/*
 * One component, len bytes, into a NUL-terminated buffer of
 * DC_NAME_MAX + 1 bytes, refusing anything that could make the host walk
 * more than one step: '/', "." and "..".  A NUL inside would silently
 * shorten the name, so it is refused too.
 */
static int name_copy(const char *name, size_t len, char *buf)
{
	int err = dc__check_name_long_first(name, len);

	if (err)
		return err;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return 0;
}

static void stat_fill(const struct stat *st, uint64_t cookie,
		      struct dc_inode *out)
{
	out->ino = st->st_ino;
	out->cookie = cookie;
	out->mode = st->st_mode;
	out->gen = dc_hostfs_gen(st->st_dev);
	out->uid = st->st_uid;
	out->gid = st->st_gid;
}

/* The entry's descriptor, if it has one of its own. */
static void hostfs_release(void *ctx, const struct dc_inode *inode)
{
	struct hostfs *h = ctx;
	int fd;

	if (!inode || inode->cookie == HOSTFS_ROOT)
		return;
	fd = cookie_fd(h, inode->cookie);
	if (fd >= 0)
		drop_fd(h, fd);
}

static int hostfs_root(void *ctx, struct dc_inode *out)
{
	struct hostfs *h = ctx;
	struct stat st;

	if (!out)
		return -EINVAL;
	if (fstat(h->root_fd, &st) < 0)
		return -errno;
	stat_fill(&st, HOSTFS_ROOT, out);
	return 0;
}

/*
 * A directory about to be returned: its watcher watches it first.  What
 * dc_watch_dir answers changes nothing here: a directory it cannot watch
 * makes the watcher fall back to TTLs, which bound the answer's age.
 */
static void tell_watcher(struct hostfs *h, int fd, const struct stat *st)
{
	struct dc_watch *w;

	if (!dc__load_acq(h->watch))
		return;
	pthread_rwlock_rdlock(&h->lock);
	w = dc__load_acq(h->watch);
	if (w)
		dc_watch_dir(w, fd, st->st_ino, st->st_dev);
	pthread_rwlock_unlock(&h->lock);
}

/*
 * Open name in dir and fill out.  Only directories (to look in) and
 * symlinks (to read) keep their descriptor, within the budget.
 */
static int open_child(struct hostfs *h, const struct dc_inode *dir,
		      const char *name, size_t len, struct stat *st,
		      struct dc_inode *out)
{
	char buf[DC_NAME_MAX + 1];
	int dfd, fd, err;

	if (!dir || !out)
		return -EINVAL;
	err = name_copy(name, len, buf);
	if (err)
		return err;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	dfd = cookie_fd(h, dir->cookie);
	if (dfd < 0)
		return -ESTALE;

	fd = openat(dfd, buf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (!S_ISDIR(st->st_mode) && !S_ISLNK(st->st_mode)) {
		close(fd);
		stat_fill(st, HOSTFS_NO_FD, out);
		return 0;
	}
	err = keep_fd(h);
	if (err) {
		close(fd);
		return err;
	}
	if (S_ISDIR(st->st_mode)) {
		tell_watcher(h, fd, st);
		/* the root of another file system: a change of its own
		 * attributes reaches no watch of ours until the watcher has
		 * it (its parent's watch hears nothing of a mount's root), so
		 * a chmod between the fstat above and that would be missed
		 * for good; read them again now that it is watched */
		if (dir->gen != dc_hostfs_gen(st->st_dev) && fstat(fd, st) < 0) {
			err = -errno;
			drop_fd(h, fd);
			return err;
		}
	}
	stat_fill(st, (uint64_t)fd + 1, out);
	return 0;
}

static int hostfs_lookup(void *ctx, const struct dc_inode *dir,
			 const char *name, size_t len, struct dc_inode *out)
{
	struct stat st;

	return open_child(ctx, dir, name, len, &st, out);
}

/*
 * The cache is told of a name the caller made: open it as a lookup
 * would, so that the cookie is ours, and check that it is still the
 * inode the caller made (-ESTALE: it was replaced since).
 */
static int hostfs_adopt(void *ctx, const struct dc_inode *dir,
			const char *name, size_t len, struct dc_inode *inode)
{
	struct dc_inode found;
	struct stat st;
	int err;

	if (!inode)
		return -EINVAL;
	err = open_child(ctx, dir, name, len, &st, &found);
	if (err)
		return err;
	if (found.ino != inode->ino || found.gen != inode->gen ||
	    (found.mode & S_IFMT) != (inode->mode & S_IFMT)) {
		hostfs_release(ctx, &found);
		return -ESTALE;
	}
	*inode = found;
	return 0;
}

/*
 * The O_PATH descriptor may outlive the name: fstat still answers for the
 * inode itself, which is what getattr means.  Keeps the cookie.
 */
static int hostfs_getattr(void *ctx, struct dc_inode *inode)
{
	struct hostfs *h = ctx;
	struct stat st;
	int fd;

	if (!inode)
		return -EINVAL;
	fd = cookie_fd(h, inode->cookie);
	if (fd < 0)
		return -ESTALE;
	if (fstat(fd, &st) < 0)
		return -errno;
	stat_fill(&st, inode->cookie, inode);
	return 0;
}

/*
 * readlinkat(fd, "") reads the symlink an O_PATH|O_NOFOLLOW descriptor
 * refers to.  readlink(2) truncates silently; a target that leaves no room
 * for its NUL is -ENAMETOOLONG here instead.  On success buf is
 * NUL-terminated.
 */
static int hostfs_readlink(void *ctx, const struct dc_inode *link, char *buf,
			   size_t size)
{
	struct hostfs *h = ctx;
	ssize_t n;
	int fd;

	if (!link || !buf || !size)
		return -EINVAL;
	if (!S_ISLNK(link->mode))
		return -EINVAL;
	fd = cookie_fd(h, link->cookie);
	if (fd < 0)
		return -ESTALE;
	n = readlinkat(fd, "", buf, size);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size || n > INT_MAX)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return (int)n;
}

#ifndef FS_CASEFOLD_FL
#define FS_CASEFOLD_FL	0x40000000
#endif
#ifndef F2FS_SUPER_MAGIC
#define F2FS_SUPER_MAGIC	0xF2F52010
#endif

/* XFS's geometry (XFS_IOC_FSGEOMETRY, <xfs/xfs_fs.h>'s struct
 * xfs_fsop_geom), of which only the flags are read. */
struct xfs_geometry {
	uint32_t sizes[8];
	uint64_t blocks[4];
	unsigned char uuid[16];
	uint32_t sunit, swidth;
	int32_t version;
	uint32_t flags;
	uint32_t more[6];
	uint64_t reserved[17];
};
_Static_assert(sizeof(struct xfs_geometry) == 256, "xfs_fsop_geom is 256 bytes");
#define XFS_GEOMETRY		_IOR('X', 126, struct xfs_geometry)
#define XFS_GEOM_ASCII_CI	(1u << 12)	/* XFS_FSOP_GEOM_FLAGS_DIRV2CI */

/*
 * Does a listing of the directory open at fd hold every name a lookup in
 * it finds?  Only on file systems known to: a listing lets the cache deny
 * names.  Elsewhere it may not -- procfs hides thread ids, autofs mounts
 * on lookup, ZFS and NFS servers hide snapshot directories, FUSE file
 * systems do as they please -- and a case-folded directory (ext4, f2fs,
 * tmpfs; overlayfs reports its layer's flag) finds "FOO" as "foo", as
 * does every directory of an XFS made case-insensitive (mkfs.xfs -n
 * version=ci, which sets no flag on directories: the geometry says so,
 * and a kernel too old to answer it is not trusted).
 */
static bool lists_every_name(int fd)
{
	struct xfs_geometry geo;
	struct statfs sf;
	int flags = 0;

	if (fstatfs(fd, &sf) < 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case EXT4_SUPER_MAGIC: case F2FS_SUPER_MAGIC: case TMPFS_MAGIC:
	case OVERLAYFS_SUPER_MAGIC:
		/* no flags to read: no case folding either */
		return ioctl(fd, FS_IOC_GETFLAGS, &flags) < 0 ?
		       errno == ENOTTY || errno == EINVAL : !(flags & FS_CASEFOLD_FL);
	case XFS_SUPER_MAGIC:
		return ioctl(fd, XFS_GEOMETRY, &geo) == 0 &&
		       !(geo.flags & XFS_GEOM_ASCII_CI);
	case BTRFS_SUPER_MAGIC:
		return true;
	default:
		return false;
	}
}

/*
 * The listing is read through a descriptor opened from the directory's
 * own (an O_PATH one will do), so it is of the inode the caller holds,
 * wherever its name went; that descriptor is closed before returning, so
 * hostfs does not count it in its budget.
 */
DC_API int dc_readdir_fd(int dirfd,
			 int (*emit)(void *arg, const char *name, size_t len),
			 void *arg)
{
	struct dirent *e;
	DIR *dp;
	int fd, err;

	if (dirfd < 0 || !emit)
		return -EINVAL;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!lists_every_name(fd)) {
		close(fd);
		return -EOPNOTSUPP;
	}
	dp = fdopendir(fd);
	if (!dp) {
		err = -errno;
		close(fd);
		return err;
	}
	for (err = 0; !err;) {
		errno = 0;
		e = readdir(dp);
		if (!e) {
			err = -errno;
			break;
		}
		err = emit(arg, e->d_name, strlen(e->d_name));
	}
	closedir(dp);
	return err;
}

static int hostfs_readdir(void *ctx, const struct dc_inode *dir,
			  int (*emit)(void *arg, const char *name, size_t len),
			  void *arg)
{
	int dfd;

	if (!dir || !emit)
		return -EINVAL;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	dfd = cookie_fd(ctx, dir->cookie);
	return dfd < 0 ? -ESTALE : dc_readdir_fd(dfd, emit, arg);
}

static void hostfs_destroy(void *ctx)
{
	struct hostfs *h = ctx;

	close(h->root_fd);
	pthread_rwlock_destroy(&h->lock);
	free(h);
}

static const struct dc_backend_ops hostfs_ops = {
	.root		= hostfs_root,
	.lookup		= hostfs_lookup,
	.getattr	= hostfs_getattr,
	.readlink	= hostfs_readlink,
	.release	= hostfs_release,
	.destroy	= hostfs_destroy,
	.adopt		= hostfs_adopt,
	.readdir	= hostfs_readdir,
};

/* Half the soft limit on descriptors: the rest stays the program's. */
static unsigned default_max_fds(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > 2u * HOSTFS_MAX_FDS)
		return HOSTFS_MAX_FDS;
	return rl.rlim_cur / 2 > 16 ? (unsigned)(rl.rlim_cur / 2) : 16;
}

/*
 * root itself is an ordinary path, resolved (symlinks and all) by the
 * host once: the caller chose it.  Only what lies below is confined.
 */
DC_API int dc_hostfs_open(const char *root, const struct dc_hostfs_options *opt,
			  struct dc_backend *out)
{
	pthread_rwlockattr_t a;
	struct hostfs *h;
	int fd;

	if (!root || !out)
		return -EINVAL;
	if (opt && (opt->reserved32 || !dc__zeroed(opt->reserved, sizeof(opt->reserved))))
		return -EINVAL;
	fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	h = malloc(sizeof(*h));
	if (!h) {
		close(fd);
		return -ENOMEM;
	}
	h->root_fd = fd;
	h->max_fds = opt && opt->max_fds ? opt->max_fds : default_max_fds();
	h->nfds = 0;
	h->watch = NULL;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&h->lock, &a);
	pthread_rwlockattr_destroy(&a);
	out->ops = &hostfs_ops;
	out->ctx = h;
	return 0;
}

DC_API int dc_hostfs_backend(const char *root, struct dc_backend *out)
{
	return dc_hostfs_open(root, NULL, out);
}

/*
 * Attach watcher w to be, when be is a hostfs backend, or detach (w NULL).
 * -EINVAL: not hostfs; -EBUSY: another watcher is attached.
 */
int dc__hostfs_watch(const struct dc_backend *be, struct dc_watch *w)
{
	struct hostfs *h;
	int err = 0;

	if (!be || be->ops != &hostfs_ops)
		return -EINVAL;
	h = be->ctx;
	pthread_rwlock_wrlock(&h->lock);
	if (w && h->watch)
		err = -EBUSY;
	else
		dc__store_rel(h->watch, w);
	pthread_rwlock_unlock(&h->lock);
	return err;
}
