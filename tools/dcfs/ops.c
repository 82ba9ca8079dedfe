// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - the FUSE low-level operations of dcfs, passed through to
 * SOURCE_DIR.
 *
 * Every name operation works relative to the directory node's O_PATH
 * descriptor, one component at a time, never through a path.  What needs
 * a real open of a node's inode goes through /proc/self/fd/N (an O_PATH
 * descriptor cannot be read, written, chmod'ed or have its xattrs read).
 *
 * Permissions are checked twice: by the kernel (dcfs mounts with
 * default_permissions, and negotiates POSIX ACLs where the source has
 * them) against the attributes dcfs reports, and by the host, because
 * every host call that the host checks or accounts is made as the caller
 * ("the caller's credentials" below).  No host call follows a symlink or
 * opens by name what it did not just create (O_NOFOLLOW, O_EXCL), and no
 * name is used in a directory that has left the source ("names that left
 * the source").  docs/dcfs.md, "Security", gives the whole design.
 *
 * The update contract of libdcache: change the source first, then tell the
 * cache (dc_create, dc_mkdir, dc_symlink, dc_link, dc_unlink, dc_rmdir,
 * dc_rename).  The kernel holds the directories' locks across each such
 * request, so no other update touches those names in between.
 *
 * Rule for handlers: everything that uses a node or a directory's entry is
 * done before the reply.  After a reply the kernel may forget the node at
 * once, and another thread may free it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "dcfs.h"

#define SMALL_READ	(32 * 1024)	/* below this, copy; above, splice */

struct procpath {
	char s[48];
};

static const char *proc_path(struct procpath *p, int fd)
{
	snprintf(p->s, sizeof(p->s), "/proc/self/fd/%d", fd);
	return p->s;
}

/* /proc/self/fd/N of any node (node_fd_use: call node_fd_done() after);
 * NULL with errno if it has no descriptor to be had */
static const char *node_path(struct procpath *p, struct dnode *n)
{
	int fd = node_fd_use(n);

	return fd < 0 ? NULL : proc_path(p, fd);
}

static bool out_of_fds(int err)
{
	return err == EMFILE || err == ENFILE;
}

static void reply_errno(fuse_req_t req, int err)
{
	if (out_of_fds(err))
		CTR_ADD(emfile, 1);
	fuse_reply_err(req, err);
}

/* ---- the caller's credentials ----------------------------------------- */

/*
 * dcfs runs as root, and the kernel has checked the caller's access
 * against what dcfs reported (default_permissions; the ACLs too with
 * FUSE_POSIX_ACL).  Those checks saw the names the kernel holds, which may
 * be stale, and they do not cover what the host checks or accounts
 * itself: a sticky directory whose entry changed behind the kernel, ACLs,
 * quotas and root's reserved blocks, the owner of what is made (a
 * whiteout too), the system.* attributes some file systems check.  So a
 * host call that the host checks or accounts is made as the caller:
 *
 *   fsuid, fsgid   the caller's (setfsuid/setfsgid: this thread only).
 *                  A file-system uid other than 0 takes the file-system
 *                  capabilities (DAC_OVERRIDE, FOWNER, FSETID, CHOWN,
 *                  MKNOD, ...) out of the thread's effective set.
 *   groups         the caller's, where a permission is checked (CR_GROUPS;
 *                  a raw setgroups, which unlike glibc's changes this
 *                  thread only); none when they cannot be read.
 *   CAP_SYS_RESOURCE  dropped (caps_resource): quotas and reserved blocks.
 *   umask          the caller's, where the kernel left it to us (CR_UMASK
 *                  with POSIX ACLs: a default ACL overrides it; each
 *                  worker then has its own fs_struct).
 *
 * A switch that cannot be verified fails the request with EPERM: dcfs
 * never acts as root in a caller's stead.  Root (uid and gid 0) acts as
 * root.  The cache's own lookups are made as root, between such calls.
 */
enum { CR_GROUPS = 1, CR_UMASK = 2 };

struct caller {
	bool fs;	/* fsuid/fsgid switched (or half-switched) */
	bool caps;	/* CAP_SYS_RESOURCE lowered */
	bool groups;	/* supplementary groups installed */
	bool umask;	/* the caller's umask set */
};

/* The caller's groups on this thread, or none: never root's.  false if
 * even that failed. */
static bool set_groups(fuse_req_t req)
{
	gid_t small[64], *list = small;
	int n = fuse_req_getgroups(req, 64, list);
	long res;

	if (n > 64) {
		int cap = n;

		list = malloc((size_t)cap * sizeof(*list));
		if (!list)
			return false;
		n = fuse_req_getgroups(req, cap, list);
		if (n > cap)
			n = cap;	/* it grew meanwhile: the first cap */
	}
	res = syscall(SYS_setgroups, n > 0 ? (size_t)n : 0, n > 0 ? list : NULL);
	if (list != small)
		free(list);
	return res == 0;
}

/* This thread's own umask (unshare CLONE_FS): once per thread. */
static bool own_umask(void)
{
	static __thread bool own;

	if (!own && unshare(CLONE_FS) == 0)
		own = true;
	return own;
}

static void caller_end(struct caller *cr)
{
	int e = errno;

	if (cr->caps)
		caps_resource(true);
	if (cr->fs) {
		setfsuid(0);
		setfsgid(0);
	}
	if (cr->groups)
		syscall(SYS_setgroups, (size_t)0, NULL);
	if (cr->umask)
		umask(0);
	memset(cr, 0, sizeof(*cr));
	errno = e;
}

void caller_reset(void)
{
	struct caller cr = { .fs = true, .caps = true, .groups = true,
			     .umask = own_umask() };

	caller_end(&cr);
}

/* Act as the caller of req until caller_end: 0, or EPERM (logged once). */
static int caller_begin(fuse_req_t req, struct caller *cr, int what)
{
	static bool said;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	memset(cr, 0, sizeof(*cr));
	if ((what & CR_UMASK) && dcfs.posix_acl) {
		if (!own_umask())
			goto fail;
		umask(ctx->umask);
		cr->umask = true;
	}
	if (!dcfs.as_caller || (ctx->uid == 0 && ctx->gid == 0))
		return 0;
	if (what & CR_GROUPS) {
		if (!set_groups(req))
			goto fail;
		cr->groups = true;
	}
	cr->fs = true;
	/* each returns the id in force before; (uid_t)-1 changes nothing */
	setfsgid(ctx->gid);
	if ((gid_t)setfsgid((gid_t)-1) != ctx->gid)
		goto fail;
	setfsuid(ctx->uid);
	if ((uid_t)setfsuid((uid_t)-1) != ctx->uid)
		goto fail;
	if (ctx->uid != 0) {
		cr->caps = true;
		if (caps_resource(false) < 0)
			goto fail;
	}
	return 0;
fail:
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		dcfs_log(LOG_ERR, "cannot act as uid %u gid %u (%s): refusing "
			 "requests that would run as root instead",
			 (unsigned)ctx->uid, (unsigned)ctx->gid, strerror(errno));
	caller_end(cr);
	return EPERM;
}

/* ---- names that left the source ------------------------------------------- */

/*
 * A directory moved out of SOURCE_DIR on the host (into another user's
 * private directory, say) keeps its descriptor here, and names the kernel
 * still holds would reach it; natively the path to it is closed.  So
 * before a name is made, removed or looked up in a directory, and before a
 * file's data is first opened, the kernel's own path of the descriptor
 * (/proc/self/fd/N) must lie in SOURCE_DIR's.  Outside it, the cache
 * forgets the object's names and the request gets ESTALE: the kernel walks
 * the path again (LOOKUP_REVAL) and finds the name gone.  A directory
 * whose path is too long to print is judged by walking ".." up to
 * SOURCE_DIR.
 */
static bool under(const char *p, size_t len, const char *root, size_t rlen)
{
	if (rlen == 1)				/* SOURCE_DIR is "/" */
		return p[0] == '/';
	return len >= rlen && !memcmp(p, root, rlen) &&
	       (len == rlen || p[rlen] == '/');
}

static ssize_t fd_path(int fd, char *buf, size_t size)
{
	struct procpath pp;
	ssize_t len = readlink(proc_path(&pp, fd), buf, size - 1);

	if (len >= (ssize_t)size - 1) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (len >= 0)
		buf[len] = '\0';
	return len;
}

/* Is directory fd below SOURCE_DIR, going up by ".."? */
static bool inside_by_walk(int fd)
{
	struct stat root, st, below = { 0 };
	int cur = -1, up, depth;
	bool in = false;

	if (fstat(dcfs.root_fd, &root) < 0)
		return false;
	for (depth = 0; depth < 4096; depth++) {
		if (fstat(cur < 0 ? fd : cur, &st) < 0)
			break;
		if (st.st_ino == root.st_ino && st.st_dev == root.st_dev) {
			in = true;
			break;
		}
		/* ".." of a root is itself: the top, and no SOURCE_DIR met */
		if (depth > 0 && st.st_ino == below.st_ino && st.st_dev == below.st_dev)
			break;
		below = st;
		up = openat(cur < 0 ? fd : cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur >= 0)
			close(cur);
		cur = up;
		if (cur < 0)
			break;
	}
	if (cur >= 0)
		close(cur);
	return in;
}

/* SOURCE_DIR's path at start (op_init); -1: read it each time */
static char src_path[PATH_MAX];
static ssize_t src_len = -1;

static bool inside_source(int fd, bool dir)
{
	char p[PATH_MAX], r[PATH_MAX];
	ssize_t len = fd_path(fd, p, sizeof(p)), rlen;
	struct stat st;
	static const char del[] = " (deleted)";
	size_t dl = sizeof(del) - 1;

	/* too long to print: a directory is walked up; a file has no ".."
	 * (judged inside: the one case this check leaves open) */
	if (len < 0)
		return errno == ENAMETOOLONG && (!dir || inside_by_walk(fd));
	/* removed, or a name that really ends so: the link count says.  A
	 * removed directory takes no new names; a removed file's data stay
	 * readable to whoever opened it, as natively */
	if ((size_t)len > dl && !memcmp(p + len - dl, del, dl) &&
	    (fstat(fd, &st) < 0 || st.st_nlink == 0))
		return !dir;
	if (src_len > 0 && under(p, (size_t)len, src_path, (size_t)src_len))
		return true;
	/* SOURCE_DIR's own path now (it may itself have been renamed) */
	rlen = fd_path(dcfs.root_fd, r, sizeof(r));
	if (rlen < 0)
		return dir && inside_by_walk(fd);
	return under(p, (size_t)len, r, (size_t)rlen);
}

/* Forget the names of n, which left the source (counted as stale). */
static void left_source(struct dnode *n)
{
	CTR_ADD(stale, 1);
	if (S_ISDIR(n->type))
		dc_invalidate_dir(dcfs.cache, n->ino, dc_hostfs_gen(n->dev));
	else
		dc_invalidate_inode(dcfs.cache, n->ino, dc_hostfs_gen(n->dev));
}

/* May names in directory node dir, whose descriptor is fd, be used?  0,
 * or ESTALE (see above). */
static int check_dir_fd(struct dnode *dir, int fd)
{
	if (dir == dcfs.root || inside_source(fd, true))
		return 0;
	left_source(dir);
	return ESTALE;
}

static int check_dir(struct dnode *dir)
{
	int tmp, fd = node_dir_fd(dir, &tmp), err;

	if (fd < 0)
		return errno;
	err = check_dir_fd(dir, fd);
	node_dir_fd_put(tmp);
	return err;
}

/* The same for a node's own object, where it holds a descriptor opened
 * by name (a file held by handle has no path to check). */
static int check_node(struct dnode *n)
{
	int fd = node_fd(n);

	if (S_ISDIR(n->type))
		return check_dir(n);
	if (fd < 0 || inside_source(fd, false))
		return 0;
	left_source(n);
	return ESTALE;
}

/* ---- lookups ------------------------------------------------------------ */

static void entry_init(struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->attr_timeout = dcfs_attr_timeout();
	e->entry_timeout = dcfs_entry_timeout();
}

/*
 * name in directory node dir, through the cache: on success one kernel
 * lookup of the node is counted (the caller replies with it, or forgets
 * it), e is filled and *out is the node.  Returns 0 or a positive errno;
 * ENOENT is a negative answer.  A cached name found stale (its inode has
 * no links left, or is no longer what the name holds: the source was
 * changed behind dcfs's back) is forgotten and looked up again.
 */
static int lookup_in(struct dnode *dir, struct dc_dentry *dd, const char *name,
		     struct fuse_entry_param *e, struct dnode **out)
{
	size_t len = strlen(name);
	const struct stat *fresh;
	struct dc_dentry *d;
	struct dc_inode st;
	struct dnode *n;
	int err, tries = 0;

again:
	err = dc_lookup(dcfs.cache, dd, name, len, &d);
	if (err) {
		stash_clear();
		return -err;
	}
	err = dc_dentry_stat(d, &st);
	if (err) {
		dc_put(dcfs.cache, d);
		stash_clear();
		return -err;
	}
	n = (struct dnode *)(uintptr_t)st.cookie;
	err = node_activate(n, dir, name, d, stash_fd_for(n));
	dc_put(dcfs.cache, d);
	/* after a miss, the backend stat'ed n while serving this request */
	fresh = err == 0 ? stash_stat_for(n) : NULL;
	if (fresh) {
		e->attr = *fresh;
	} else if (err == 0 && node_stat(n, dir, name, &e->attr) < 0) {
		err = errno;
		node_forget(n, 1);
		stash_clear();
		return err;
	}
	stash_clear();
	if (err == -ESTALE && tries++ < 3) {
		CTR_ADD(stale, 1);
		dc_invalidate_name(dcfs.cache, dd, name);
		goto again;
	}
	if (err)
		return -err;
	if (e->attr.st_nlink == 0 && !S_ISDIR(n->type) && tries++ < 3) {
		/* no name holds this inode any more, yet the cache did */
		node_forget(n, 1);
		CTR_ADD(stale, 1);
		dc_invalidate_name(dcfs.cache, dd, name);
		goto again;
	}
	e->ino = node_ino(n);
	*out = n;
	return 0;
}

static int do_lookup(struct dnode *dir, const char *name,
		     struct fuse_entry_param *e, struct dnode **out)
{
	struct dc_dentry *dd = node_dentry_get(dir);
	int err;

	entry_init(e);
	if (!dd)
		return ENOTDIR;
	err = lookup_in(dir, dd, name, e, out);
	dc_put(dcfs.cache, dd);
	return err;
}

/*
 * The kernel follows a LOOKUP with a GETATTR of the same node when
 * attributes expire at once (attr timeout 0: every stat, and every
 * searched directory with default_permissions), and with --uring both
 * come from one CPU's queue, so mostly to the same thread.  For a file
 * held by handle the GETATTR would cost open_by_handle_at, fstat and
 * close; the name it was just looked up by costs one fstatat.  So each
 * thread remembers its last such lookup: the node's address, the
 * directory's descriptor and the name — no reference, since node_stat_at
 * uses what it finds only if it is the node's device and inode, and a
 * stale descriptor at worst names something else.
 */
static __thread struct {
	struct dnode *n;
	int dirfd;
	char name[NAME_MAX + 1];
} last_lookup = { NULL, -1, "" };

static void remember_lookup(struct dnode *n, struct dnode *dir, const char *name)
{
	size_t len = strlen(name);

	if (node_fd(n) >= 0 || len > NAME_MAX)
		return;
	last_lookup.n = n;
	last_lookup.dirfd = node_fd(dir);
	memcpy(last_lookup.name, name, len + 1);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	struct dnode *n;
	int err = check_dir(ino_node(parent));

	if (!err)
		err = do_lookup(ino_node(parent), name, &e, &n);
	if (!err)
		remember_lookup(n, ino_node(parent), name);
	if (err == ENOENT && dcfs_entry_timeout() > 0) {
		/* a negative entry the kernel may keep for entry_timeout */
		entry_init(&e);
		fuse_reply_entry(req, &e);
	} else if (err) {
		reply_errno(req, err);
	} else if (fuse_reply_entry(req, &e) != 0) {
		node_forget(n, 1);	/* the kernel never saw it */
	}
}

static void forget_one(fuse_ino_t ino, uint64_t nlookup)
{
	if (ino != FUSE_ROOT_ID)	/* the root is ours for good */
		node_forget(ino_node(ino), nlookup);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

/* ---- attributes --------------------------------------------------------- */

/*
 * Handle-less I/O.  A compiler opens hundreds of headers per source file,
 * and every open of a FUSE file costs an OPEN round trip and a RELEASE
 * (two thirds of all requests in a kernel build, counted with --debug).
 * Unless --open-requests is given, dcfs answers the first OPEN with
 * ENOSYS: the kernel (4.19+) takes that as "opens need no request", stops
 * sending OPEN and RELEASE for files, keeps their page cache, and sends
 * reads and writes with fh 0.  Those go to descriptors the node opens on
 * first use (O_RDONLY, O_RDWR: the kernel has checked the caller's access
 * at open) and closes when the kernel forgets it.  A CREATE still gets a
 * handle of its own; fh 0 is never a real one (descriptors 0-2 are taken).
 * The kernel truncates with SETATTR rather than in OPEN (op_init turns
 * ATOMIC_O_TRUNC off), and a write's flags carry O_APPEND and O_SYNC,
 * which op_write_buf applies per write.  Over the node descriptor budget
 * (node.c, "More nodes than descriptors") the descriptor serves one
 * request and is closed after it (io_tmp, io_done).
 */
static __thread int io_tmp[2] = { -1, -1 };

/* Close this thread's descriptors opened for one request's I/O. */
static void io_done(void)
{
	for (int i = 0; i < 2; i++)
		if (io_tmp[i] >= 0) {
			close(io_tmp[i]);
			io_tmp[i] = -1;
		}
}

/*
 * Opening a file breaks a lease another process holds on it (F_SETLEASE)
 * and waits for the lease to go, up to /proc/sys/fs/lease-break-time.  So
 * the open is first tried without waiting (O_NONBLOCK: EWOULDBLOCK, the
 * break begun); only then does the worker wait, with no lock held and
 * counted apart from the workers that serve everyone else
 * (loop_block_begin), so that one user's leased files cannot stall
 * another's requests.  A caller that opened with O_NONBLOCK gets
 * EWOULDBLOCK, as natively; so does one with too many waits already.
 */
static int open_waiting(fuse_req_t req, const char *path, int flags,
			bool nonblock)
{
	/* flags with O_NONBLOCK: the descriptor keeps it (a per-open handle
	 * whose caller asked); without, it is taken off again */
	int fd = open(path, flags | O_NONBLOCK);

	if (fd >= 0) {
		/* F_SETFL takes the status flags alone (O_APPEND, O_DIRECT...):
		 * those asked for, without the O_NONBLOCK added here */
		if (!(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags) < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		return fd;
	}
	if (errno != EWOULDBLOCK || nonblock)
		return -1;
	if (!loop_block_begin(fuse_req_ctx(req)->uid)) {
		errno = EWOULDBLOCK;
		return -1;
	}
	fd = open(path, flags);
	loop_block_end();
	return fd;
}

/* The node's descriptor for reads or writes, opened on first use (as
 * root: it serves every caller, and the kernel checked each at open). */
static int node_io_fd(fuse_req_t req, struct fuse_file_info *fi,
		      struct dnode *n, bool write)
{
	int fd = __atomic_load_n(&n->io_fd[write], __ATOMIC_ACQUIRE), pfd, cur;
	bool nonblock = fi && (fi->flags & O_NONBLOCK);
	struct procpath pp;
	int err;

	if (fd >= 0)
		return fd;
	err = check_node(n);
	if (err) {
		errno = err;
		return -1;
	}
	pfd = node_fd_use(n);
	if (pfd < 0)
		return -1;
	fd = open_waiting(req, proc_path(&pp, pfd),
			  (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY, nonblock);
	/* a write-only file, for a daemon that is not root */
	if (fd < 0 && write && errno == EACCES)
		fd = open_waiting(req, proc_path(&pp, pfd),
				  O_WRONLY | O_CLOEXEC | O_NOCTTY, nonblock);
	err = errno;
	node_fd_done();
	if (fd < 0) {
		if (out_of_fds(err))
			CTR_ADD(emfile, 1);
		errno = err;
		return -1;
	}
	pthread_mutex_lock(&n->lock);
	cur = n->io_fd[write];
	if (cur >= 0) {
		/* another request opened it meanwhile: use that one */
		pthread_mutex_unlock(&n->lock);
		close(fd);
		return cur;
	}
	if (CTR_GET(node_fds) >= dcfs.fd_budget) {
		/* over budget: for this request only (io_done) */
		if (io_tmp[write] >= 0)
			close(io_tmp[write]);
		io_tmp[write] = fd;
	} else {
		/* release: pairs with the acquire above */
		__atomic_store_n(&n->io_fd[write], fd, __ATOMIC_RELEASE);
		CTR_ADD(node_fds, 1);
	}
	pthread_mutex_unlock(&n->lock);
	return fd;
}

/* The descriptor for reads (write false) or writes of file n: the open
 * file's handle if it has one, else the node's; -1 with errno. */
static int io_fd(fuse_req_t req, struct dnode *n, struct fuse_file_info *fi,
		 bool write)
{
	if (fi && fi->fh)
		return (int)fi->fh;
	return node_io_fd(req, fi, n, write);
}

/* The descriptor for attribute calls: the open file's, if it has one. */
static int file_fd(struct dnode *n, struct fuse_file_info *fi)
{
	return fi && fi->fh && S_ISREG(n->type) ? (int)fi->fh : -1;
}

static void reply_attr(fuse_req_t req, struct dnode *n, int ffd)
{
	struct stat st;
	int res;

	if (ffd >= 0)
		res = fstat(ffd, &st);
	else if (last_lookup.n == n)
		res = node_stat_at(n, last_lookup.dirfd, last_lookup.name, &st);
	else
		res = node_stat(n, NULL, NULL, &st);

	if (res < 0)
		return reply_errno(req, errno);
	fuse_reply_attr(req, &st, dcfs_attr_timeout());
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dnode *n = ino_node(ino);

	reply_attr(req, n, file_fd(n, fi));
}

static int set_times(struct dnode *n, int fd, int ffd, const struct stat *attr,
		     int valid)
{
	struct timespec tv[2];
	struct procpath pp;

	tv[0].tv_sec = tv[1].tv_sec = 0;
	tv[0].tv_nsec = tv[1].tv_nsec = UTIME_OMIT;
	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		tv[0].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_ATIME)
		tv[0] = attr->st_atim;
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		tv[1].tv_nsec = UTIME_NOW;
	else if (valid & FUSE_SET_ATTR_MTIME)
		tv[1] = attr->st_mtim;
	if (ffd >= 0)
		return futimens(ffd, tv);
	if (utimensat(fd, "", tv, AT_EMPTY_PATH) == 0)
		return 0;
	if (errno != EINVAL || S_ISLNK(n->type))
		return -1;
	/* kernels before AT_EMPTY_PATH support in utimensat */
	return utimensat(AT_FDCWD, proc_path(&pp, fd), tv, 0);
}

/*
 * The changes SETATTR asks for, on n (descriptor fd; open file ffd, or
 * -1; wfd, or -1, the node's descriptor for writing when the kernel holds
 * the file open: a size change is then an ftruncate, which checks no
 * permission, as natively), as the caller.
 */
/*
 * Before a write or truncate by a caller without CAP_FSETID, the kernel
 * drops a file's set-user-ID and set-group-ID bits itself, with no owner
 * check (file_remove_privs: ATTR_FORCE), and asks dcfs with a mode change
 * that only drops them.  The host, asked as that caller, would refuse it
 * (EPERM): so that one change is made as root.  A caller's own chmod of a
 * file it does not own never comes here: the kernel checks ownership
 * first (default_permissions).
 */
static bool kills_setid(int fd, int ffd, const struct stat *attr, int valid)
{
	mode_t setid = S_ISUID | S_ISGID, now, want = attr->st_mode & 07777;
	struct stat st;

	if ((valid & ~FUSE_SET_ATTR_CTIME) != FUSE_SET_ATTR_MODE ||
	    (ffd >= 0 ? fstat(ffd, &st) : fstat(fd, &st)) < 0)
		return false;
	now = st.st_mode & 07777;
	return (now & setid) && (want & setid) != (now & setid) &&
	       want == ((now & ~setid) | (want & now & setid));
}

static int set_attrs(fuse_req_t req, struct dnode *n, int fd, int ffd,
		     int wfd, const struct stat *attr, int valid)
{
	struct procpath pp;
	struct caller cr;
	int res = 0;

	if (kills_setid(fd, ffd, attr, valid))
		memset(&cr, 0, sizeof(cr));	/* as root: see kills_setid */
	else if ((errno = caller_begin(req, &cr, CR_GROUPS)))
		return -1;
	if (valid & FUSE_SET_ATTR_MODE) {
		mode_t m = attr->st_mode & 07777;

		res = ffd >= 0 ? fchmod(ffd, m) : chmod(proc_path(&pp, fd), m);
	}
	if (res == 0 && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
		uid_t uid = valid & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1;
		gid_t gid = valid & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1;

		res = fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
	}
	if (res == 0 && (valid & FUSE_SET_ATTR_SIZE)) {
		int tfd = ffd >= 0 ? ffd : wfd;

		if (tfd < 0) {
			/* truncate(2) by path would wait on a lease break
			 * unseen; an open for writing checks the same */
			tfd = open_waiting(req, proc_path(&pp, fd),
					   O_WRONLY | O_CLOEXEC | O_NOCTTY, false);
			res = tfd < 0 ? -1 : ftruncate(tfd, attr->st_size);
			if (tfd >= 0) {
				int e = errno;

				close(tfd);
				errno = e;
			}
		} else {
			res = ftruncate(tfd, attr->st_size);
		}
	}
	if (res == 0 && (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)))
		res = set_times(n, fd, ffd, attr, valid);
	caller_end(&cr);
	return res;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int valid, struct fuse_file_info *fi)
{
	struct dnode *n = ino_node(ino);
	int fd, ffd = file_fd(n, fi), wfd = -1, err = check_node(n);

	if (err)
		return reply_errno(req, err);
	/* before node_fd_use: node_io_fd uses and ends its own */
	if ((valid & FUSE_SET_ATTR_SIZE) && fi && ffd < 0 && S_ISREG(n->type)) {
		wfd = node_io_fd(req, fi, n, true);
		if (wfd < 0)
			return reply_errno(req, errno);
	}
	fd = node_fd_use(n);
	if (fd < 0 || set_attrs(req, n, fd, ffd, wfd, attr, valid) < 0)
		reply_errno(req, errno);
	else
		reply_attr(req, n, ffd);
	node_fd_done();
	io_done();
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX + 1];
	int fd = node_fd_use(ino_node(ino));
	ssize_t len = fd < 0 ? -1 : readlinkat(fd, "", buf, sizeof(buf));

	node_fd_done();
	if (len < 0)
		return reply_errno(req, errno);
	if ((size_t)len >= sizeof(buf))
		return reply_errno(req, ENAMETOOLONG);
	buf[len] = '\0';
	fuse_reply_readlink(req, buf);
}

/* ---- creating and removing names ------------------------------------------ */

/*
 * An update given an inode takes its reference (and releases it itself if
 * it has no use for it) when it returns 0 or -ENOMEM; an argument error is
 * returned before it takes anything.  Then the name is forgotten instead.
 */
static void told(int err, struct dnode *n, struct dc_dentry *dd, const char *name)
{
	if (err && err != -ENOMEM) {
		node_put(n);
		dc_invalidate_name(dcfs.cache, dd, name);
	}
}

/*
 * A directory a request changes names in: its node, its cache entry and a
 * descriptor, each held for the request (names_begin .. names_end).
 */
struct dref {
	struct dnode *n;
	struct dc_dentry *dd;
	int fd, tmp;
};

/*
 * name was just created in r (by us): tell the cache what it is now.  The node's reference goes to the cache; the
 * descriptor opened to learn the inode is stashed for the lookup that
 * follows.  If anything fails, the cache forgets the name instead (it may
 * forget, it must not lie).
 */
static void announce(struct dref *r, const char *name, const char *link)
{
	struct dc_dentry *dd = r->dd;
	struct dc_inode in;
	struct dnode *n;
	struct stat st;
	int fd;

	fd = openat(r->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || node_get(&st, &fd, &n) != 0) {
		if (fd >= 0)
			close(fd);
		dc_invalidate_name(dcfs.cache, dd, name);
		return;
	}
	stash_set(n, fd, &st);	/* before the cache may drop n */
	in.ino = st.st_ino;
	in.cookie = (uint64_t)(uintptr_t)n;
	in.mode = st.st_mode;
	in.gen = dc_hostfs_gen(st.st_dev);
	if (S_ISDIR(st.st_mode))
		told(dc_mkdir(dcfs.cache, dd, name, &in), n, dd, name);
	else if (S_ISLNK(st.st_mode) && link)
		told(dc_symlink(dcfs.cache, dd, name, &in, link), n, dd, name);
	else
		told(dc_create(dcfs.cache, dd, name, &in), n, dd, name);
}

/* The creation worked but no node could be made: take it back. */
static void rollback(struct dref *r, const char *name, bool isdir, int err)
{
	if (!out_of_fds(err) && err != ENOMEM)
		return;
	if (unlinkat(r->fd, name, isdir ? AT_REMOVEDIR : 0) == 0) {
		if (isdir)
			dc_rmdir(dcfs.cache, r->dd, name);
		else
			dc_unlink(dcfs.cache, r->dd, name);
	}
}

/*
 * The start of every request that changes names in dir: its descriptor
 * and entry held for the request, and dir still in the source
 * (check_dir).  0 or an errno; names_end either way.
 */
static int names_begin(struct dnode *dir, struct dref *r)
{
	int err;

	r->n = dir;
	r->dd = NULL;
	r->fd = node_dir_fd(dir, &r->tmp);
	if (r->fd < 0)
		return errno;
	err = check_dir_fd(dir, r->fd);
	if (err)
		return err;
	r->dd = node_dentry_get(dir);
	return r->dd ? 0 : ENOTDIR;
}

static void names_end(struct dref *r)
{
	if (r->dd)
		dc_put(dcfs.cache, r->dd);
	node_dir_fd_put(r->tmp);
}

/* Reply with the new name's entry (looked up through the cache). */
static void reply_made(fuse_req_t req, struct dref *r, const char *name,
		       bool isdir)
{
	struct fuse_entry_param e;
	struct dnode *n;
	int err;

	entry_init(&e);
	err = lookup_in(r->n, r->dd, name, &e, &n);
	if (err) {
		rollback(r, name, isdir, err);
		return reply_errno(req, err);
	}
	if (fuse_reply_entry(req, &e) != 0)
		node_forget(n, 1);
}

static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev, const char *link)
{
	struct dref r;
	int res, err = names_begin(ino_node(parent), &r);
	struct caller cr;

	if (!err)
		err = caller_begin(req, &cr, CR_GROUPS | CR_UMASK);
	if (!err) {
		if (link)
			res = symlinkat(link, r.fd, name);
		else if (S_ISDIR(mode))
			res = mkdirat(r.fd, name, mode & 07777);
		else
			res = mknodat(r.fd, name, mode, rdev);
		err = res < 0 ? errno : 0;
		caller_end(&cr);
	}
	if (err) {
		reply_errno(req, err);
	} else {
		announce(&r, name, link);
		reply_made(req, &r, name, S_ISDIR(mode));
	}
	names_end(&r);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	make_node(req, parent, name, S_IFLNK | 0777, 0, link);
}

/* linkat of what fd opened to newname in directory ndfd, as the caller. */
static int link_as(fuse_req_t req, int fd, int ndfd, const char *newname)
{
	struct procpath pp;
	struct caller cr;
	int res, err = caller_begin(req, &cr, CR_GROUPS);

	if (err) {
		errno = err;
		return -1;
	}
	res = linkat(fd, "", ndfd, newname, AT_EMPTY_PATH);
	if (res < 0 && errno == ENOENT)
		/* without CAP_DAC_READ_SEARCH AT_EMPTY_PATH is refused; the
		 * magic link leads to the inode itself, a symlink's too (it
		 * is not followed past: the jump is the walk's last step) */
		res = linkat(AT_FDCWD, proc_path(&pp, fd), ndfd, newname,
			     AT_SYMLINK_FOLLOW);
	caller_end(&cr);
	return res;
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct dnode *n = ino_node(ino);
	struct dref r;
	struct dc_inode in;
	struct stat st;
	int fd, res, err = names_begin(ino_node(newparent), &r);

	if (!err)
		err = check_node(n);
	if (err) {
		names_end(&r);
		return reply_errno(req, err);
	}
	fd = node_fd_use(n);
	res = fd < 0 ? -1 : link_as(req, fd, r.fd, newname);
	if (res < 0) {
		reply_errno(req, errno);
		node_fd_done();
		names_end(&r);
		return;
	}
	res = fstat(fd, &st);
	node_fd_done();
	if (res == 0) {
		in.ino = st.st_ino;
		in.cookie = (uint64_t)(uintptr_t)n;
		in.mode = st.st_mode;
		in.gen = dc_hostfs_gen(st.st_dev);
		node_ref(n);		/* the new entry's */
		told(dc_link(dcfs.cache, r.dd, newname, &in), n, r.dd, newname);
	} else {
		dc_invalidate_name(dcfs.cache, r.dd, newname);
	}
	reply_made(req, &r, newname, false);
	names_end(&r);
}

/* unlinkat as the caller (the host checks the sticky bit, ACLs...) */
static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			int flags)
{
	struct caller cr;
	struct dref r;
	int err = names_begin(ino_node(parent), &r), res;

	if (!err && !(flags & AT_REMOVEDIR))
		node_pin_victim(r.n, name);
	if (!err)
		err = caller_begin(req, &cr, CR_GROUPS);
	if (!err) {
		res = unlinkat(r.fd, name, flags);
		err = res < 0 ? errno : 0;
		caller_end(&cr);
	}
	if (!err) {
		if (flags & AT_REMOVEDIR)
			dc_rmdir(dcfs.cache, r.dd, name);
		else
			dc_unlink(dcfs.cache, r.dd, name);
	}
	names_end(&r);
	fuse_reply_err(req, err);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 0);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, AT_REMOVEDIR);
}

/* After an exchange: directory nodes move to their new, live entries. */
static void refresh(struct dc_dentry *dd, const char *name)
{
	struct dc_dentry *d;
	struct dc_inode st;

	if (dc_lookup(dcfs.cache, dd, name, strlen(name), &d) == 0) {
		if (dc_dentry_stat(d, &st) == 0 && S_ISDIR(st.mode))
			node_refresh((struct dnode *)(uintptr_t)st.cookie, d);
		dc_put(dcfs.cache, d);
	}
	stash_clear();
}

static int rename_as(fuse_req_t req, int dfd, const char *name, int ndfd,
		     const char *newname, unsigned flags)
{
	struct caller cr;
	int err = caller_begin(req, &cr, CR_GROUPS);

	if (err)
		return err;
	if (renameat2(dfd, name, ndfd, newname, flags) < 0)
		err = errno;
	caller_end(&cr);
	return err;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct dref r = { .tmp = -1 }, nr = { .tmp = -1 };
	struct dc_dentry *dd, *nd;
	unsigned dcflags = 0;
	int err;

	if (flags & ~(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return reply_errno(req, EINVAL);
	err = names_begin(ino_node(parent), &r);
	if (!err)
		err = names_begin(ino_node(newparent), &nr);
	if (!err && !(flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)))
		node_pin_victim(nr.n, newname);
	if (!err)
		err = rename_as(req, r.fd, name, nr.fd, newname, flags);
	if (err)
		goto out;
	dd = r.dd;
	nd = nr.dd;
	if (flags & RENAME_NOREPLACE)
		dcflags |= DC_RENAME_NOREPLACE;
	if (flags & RENAME_EXCHANGE)
		dcflags |= DC_RENAME_EXCHANGE;
	if ((flags & RENAME_WHITEOUT) ||
	    dc_rename(dcfs.cache, dd, name, nd, newname, dcflags) < 0) {
		/* a whiteout, or the cache could not follow: forget both */
		dc_invalidate_name(dcfs.cache, dd, name);
		dc_invalidate_name(dcfs.cache, nd, newname);
	}
	if (flags & RENAME_EXCHANGE) {
		refresh(dd, name);
		refresh(nd, newname);
	}
out:
	names_end(&r);
	names_end(&nr);
	fuse_reply_err(req, err);
}

/* ---- files ----------------------------------------------------------------- */

static void file_opened(struct fuse_file_info *fi, int fd)
{
	fi->fh = (uint64_t)fd;
	/* every change goes through this mount, so the page cache stays
	 * right across opens; AUTO_INVAL_DATA still drops it when the
	 * attributes show another mtime or size */
	fi->keep_cache = 1;
	/* a close of a file opened for reading has nothing to report: no
	 * FLUSH round trip then (FOPEN_NOFLUSH, Linux 5.16+; older kernels
	 * ignore it).  A compiler opens hundreds of headers per file, and
	 * close() waits for FLUSH; RELEASE is sent in the background. */
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		fi->noflush = 1;
	CTR_ADD(open_files, 1);
}

static void file_closed(int fd)
{
	close(fd);
	CTR_ADD(open_files, -1);
}

/*
 * A CREATE comes when the kernel believes name absent.  The host call is
 * O_CREAT|O_EXCL|O_NOFOLLOW: dcfs never opens, as root, what happens to
 * be there by now (a symlink planted there would be followed out of the
 * source).  If something is there and the caller did not ask O_EXCL, the
 * kernel's negative name was stale: the cache forgets it and ESTALE makes
 * the kernel look the name up again (LOOKUP_REVAL) and open what it finds
 * through the mount, with every check a native open makes.
 */
static int create_as(fuse_req_t req, struct dref *r, const char *name,
		     mode_t mode, int flags)
{
	struct caller cr;
	int fd, err = caller_begin(req, &cr, CR_GROUPS | CR_UMASK);

	if (err) {
		errno = err;
		return -1;
	}
	fd = openat(r->fd, name, (flags & ~O_NOFOLLOW) | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, mode);
	caller_end(&cr);
	if (fd < 0 && errno == EEXIST && !(flags & O_EXCL)) {
		CTR_ADD(stale, 1);
		dc_invalidate_name(dcfs.cache, r->dd, name);
		errno = ESTALE;
	}
	return fd;
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	struct dnode *n;
	struct dref r;
	int fd, err = names_begin(ino_node(parent), &r);

	if (err) {
		reply_errno(req, err);
		goto out;
	}
	fd = create_as(req, &r, name, mode, fi->flags);
	if (fd < 0) {
		reply_errno(req, errno);
		goto out;
	}
	announce(&r, name, NULL);
	entry_init(&e);
	err = lookup_in(r.n, r.dd, name, &e, &n);
	if (err) {
		close(fd);
		rollback(&r, name, false, err);
		reply_errno(req, err);
		goto out;
	}
	if (!dcfs.open_requests) {
		/* handle-less: the kernel sends no RELEASE once an OPEN was
		 * refused (fuse_file_put skips it while no_open is set), so a
		 * handle kept here would never be closed.  The file's reads
		 * and writes go to the node's descriptors like any other's. */
		close(fd);
		fi->fh = 0;
		fi->keep_cache = 1;
		if (fuse_reply_create(req, &e, fi) != 0)
			node_forget(n, 1);
		goto out;
	}
	file_opened(fi, fd);
	if (fuse_reply_create(req, &e, fi) != 0) {
		node_forget(n, 1);
		file_closed(fd);
	}
out:
	names_end(&r);
}

/* A handle per open (--open-requests): opened as the caller, so the host
 * checks it too, by the inode (never by name). */
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dnode *n = ino_node(ino);
	struct procpath pp;
	struct caller cr;
	int fd, err;

	if (!dcfs.open_requests)	/* handle-less I/O, see node_io_fd */
		return (void)fuse_reply_err(req, ENOSYS);
	err = check_node(n);
	if (err)
		return reply_errno(req, err);
	/* before the switch: a caller's fsuid has no CAP_DAC_READ_SEARCH
	 * for open_by_handle_at */
	fd = node_fd_use(n);
	err = fd < 0 ? errno : caller_begin(req, &cr, CR_GROUPS);
	if (!err) {
		fd = open_waiting(req, proc_path(&pp, fd),
				  (fi->flags | O_CLOEXEC) & ~(O_NOFOLLOW | O_CREAT | O_EXCL),
				  fi->flags & O_NONBLOCK);
		err = fd < 0 ? errno : 0;
		caller_end(&cr);
	}
	node_fd_done();
	if (err)
		return reply_errno(req, err);
	file_opened(fi, fd);
	if (fuse_reply_open(req, fi) != 0)
		file_closed(fd);
}

static void read_reply(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	int fd = io_fd(req, ino_node(ino), fi, false);

	if (fd < 0)
		return reply_errno(req, errno);
	if (size <= SMALL_READ) {
		/* a copy costs less than the three splices for small reads */
		char buf[SMALL_READ];
		ssize_t n = pread(fd, buf, size, off);

		if (n < 0)
			return reply_errno(req, errno);
		fuse_reply_buf(req, buf, (size_t)n);
		return;
	}
	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = fd;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	read_reply(req, ino, size, off, fi);
	io_done();
}

/*
 * A write of iov at off.  With a handle, the handle's own flags apply.
 * Handle-less, the open file's O_APPEND, O_SYNC and O_DSYNC come with the
 * write (fi->flags) and are applied to this write alone: RWF_APPEND writes
 * at the end whatever off says, as a descriptor opened O_APPEND would.
 */
static void write_iov(fuse_req_t req, fuse_ino_t ino, const struct iovec *iov,
		      int cnt, off_t off, struct fuse_file_info *fi)
{
	int fd = io_fd(req, ino_node(ino), fi, true), rwf = 0, err;
	struct caller cr;
	ssize_t n;

	if (fd < 0)
		return reply_errno(req, errno);
	/* as the caller: quotas, reserved blocks, set-id bits cleared */
	err = caller_begin(req, &cr, 0);
	if (err) {
		io_done();
		return reply_errno(req, err);
	}
	if (!fi->fh) {
		if (fi->flags & O_APPEND)
			rwf |= RWF_APPEND;
		if ((fi->flags & O_SYNC) == O_SYNC)
			rwf |= RWF_SYNC;
		else if (fi->flags & O_DSYNC)
			rwf |= RWF_DSYNC;
	}
	n = pwritev2(fd, iov, cnt, off, rwf);
	caller_end(&cr);
	if (n < 0)
		reply_errno(req, errno);
	else
		fuse_reply_write(req, (size_t)n);
	io_done();
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct iovec iov = { (void *)buf, size };

	write_iov(req, ino, &iov, 1, off, fi);
}

static void op_write_buf(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_bufvec *in, off_t off,
			 struct fuse_file_info *fi)
{
	size_t size = fuse_buf_size(in);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
	struct iovec iov[8];
	int cnt = 0;
	ssize_t n;

	if (fi->fh) {	/* a handle opened with the caller's flags */
		struct caller cr;
		int err = caller_begin(req, &cr, 0);

		if (err)
			return reply_errno(req, err);
		out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		out.buf[0].fd = (int)fi->fh;
		out.buf[0].pos = off;
		n = fuse_buf_copy(&out, in, 0);
		caller_end(&cr);
		if (n < 0)
			return reply_errno(req, (int)-n);
		return (void)fuse_reply_write(req, (size_t)n);
	}
	/* handle-less: the flags come with the write.  With splice reads
	 * off (op_init), libfuse hands over memory buffers. */
	for (size_t i = in->idx; i < in->count; i++) {
		if ((in->buf[i].flags & FUSE_BUF_IS_FD) || cnt == 8) {
			/* not expected: gather into one buffer */
			char *mem = malloc(size);

			out.buf[0].mem = mem;
			if (!mem)
				return reply_errno(req, ENOMEM);
			n = fuse_buf_copy(&out, in, 0);
			if (n < 0) {
				free(mem);
				return reply_errno(req, (int)-n);
			}
			iov[0] = (struct iovec){ mem, (size_t)n };
			write_iov(req, ino, iov, 1, off, fi);
			free(mem);
			return;
		}
		iov[cnt++] = (struct iovec){
			(char *)in->buf[i].mem + (i == in->idx ? in->off : 0),
			in->buf[i].size - (i == in->idx ? in->off : 0) };
	}
	write_iov(req, ino, iov, cnt, off, fi);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd;

	(void)ino;
	/*
	 * Handle-less I/O (the default): no file has a handle of its own, so
	 * a close has nothing to report.  ENOSYS makes the kernel stop
	 * sending FLUSH for good (fc->no_flush), which saves a round trip per
	 * close(2), written files' included; a compile closes hundreds.
	 */
	if (!dcfs.open_requests)
		return (void)fuse_reply_err(req, ENOSYS);
	if (!fi->fh)
		return (void)fuse_reply_err(req, 0);
	fd = dup((int)fi->fh);
	/* a close of a duplicate: what close(2) of the caller would report */
	if (fd < 0)
		return reply_errno(req, errno);
	fuse_reply_err(req, close(fd) < 0 ? errno : 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if (fi->fh)
		file_closed((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		     struct fuse_file_info *fi)
{
	/* a file's data and metadata, whichever descriptor reaches it */
	int fd = io_fd(req, ino_node(ino), fi, false), res;

	if (fd < 0)
		return reply_errno(req, errno);
	res = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, res < 0 ? errno : 0);
	io_done();
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			 off_t offset, off_t length, struct fuse_file_info *fi)
{
	int fd = io_fd(req, ino_node(ino), fi, true), err;
	struct caller cr;

	if (fd < 0)
		return reply_errno(req, errno);
	err = caller_begin(req, &cr, 0);
	if (!err) {
		err = fallocate(fd, mode, offset, length) < 0 ? errno : 0;
		caller_end(&cr);
	}
	fuse_reply_err(req, err);
	io_done();
}

static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			       off_t off_out, struct fuse_file_info *fi_out,
			       size_t len, int flags)
{
	int in = io_fd(req, ino_node(ino_in), fi_in, false), out, err;
	struct caller cr;
	ssize_t n;

	if (in < 0)
		return reply_errno(req, errno);
	out = io_fd(req, ino_node(ino_out), fi_out, true);
	err = out < 0 ? errno : caller_begin(req, &cr, 0);
	if (err) {
		io_done();
		return reply_errno(req, err);
	}
	n = copy_file_range(in, &off_in, out, &off_out, len, (unsigned)flags);
	caller_end(&cr);
	if (n < 0)
		reply_errno(req, errno);
	else
		fuse_reply_write(req, (size_t)n);
	io_done();
}

static void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	int fd = io_fd(req, ino_node(ino), fi, false);
	off_t res;

	if (fd < 0)
		return reply_errno(req, errno);
	res = lseek(fd, off, whence);
	if (res < 0)
		reply_errno(req, errno);
	else
		fuse_reply_lseek(req, res);
	io_done();
}

/* ---- directories ------------------------------------------------------------ */

/*
 * A directory handle: a stream on a descriptor of its own while open
 * handles stay within the descriptor budget; past it, the whole listing
 * read at open (a snapshot) and no descriptor kept, so that handles held
 * open by one user cannot take every descriptor from the others.  A
 * snapshot keeps each entry in a compact record, all of them together
 * within SNAP_BYTES (past it: EMFILE, as when descriptors run out), and is
 * read again on a rewind (an offset of 0), as a stream would be.
 */
#define SNAP_BYTES	(64u << 20)

struct snaprec {
	uint64_t ino;
	int64_t off;			/* d_off: where the next one starts */
	unsigned char type;
	char name[];			/* NUL-terminated */
};

struct dirh {
	DIR *dp;		/* a stream, or NULL: a snapshot */
	char *snap;		/* the snapshot's records, end bytes of them */
	size_t end, cap, pos;
	struct dirent one;	/* the record pos last gave, as a dirent */
	struct dirent *entry;	/* read but not yet returned */
	off_t offset;
};

static uint64_t snap_bytes;	/* every snapshot's cap, added up (atomic) */

static void snap_drop(struct dirh *h)
{
	__atomic_sub_fetch(&snap_bytes, h->cap, __ATOMIC_RELAXED);
	free(h->snap);
	h->snap = NULL;
	h->end = h->cap = h->pos = 0;
}

static void dirh_free(struct dirh *h)
{
	if (h->dp)
		closedir(h->dp);
	snap_drop(h);
	free(h);
}

static size_t rec_size(size_t namelen)
{
	return (sizeof(struct snaprec) + namelen + 1 + 7) & ~(size_t)7;
}

/* Room for need more bytes, within SNAP_BYTES: 0 or an errno. */
static int snap_grow(struct dirh *h, size_t need)
{
	size_t cap = h->cap ? h->cap : 4096;
	char *bigger;

	while (cap - h->end < need)
		cap *= 2;
	if (cap == h->cap)
		return 0;
	if (__atomic_add_fetch(&snap_bytes, cap - h->cap, __ATOMIC_RELAXED) > SNAP_BYTES) {
		__atomic_sub_fetch(&snap_bytes, cap - h->cap, __ATOMIC_RELAXED);
		return EMFILE;
	}
	bigger = realloc(h->snap, cap);
	if (!bigger) {
		__atomic_sub_fetch(&snap_bytes, cap - h->cap, __ATOMIC_RELAXED);
		return ENOMEM;
	}
	h->snap = bigger;
	h->cap = cap;
	return 0;
}

/* Read the stream to its end into records, then close it: 0 or errno. */
static int dirh_snapshot(struct dirh *h)
{
	struct snaprec *r;
	struct dirent *d;
	size_t len;
	int err;

	for (;;) {
		errno = 0;
		d = readdir(h->dp);
		if (!d)
			break;
		len = strlen(d->d_name);
		err = snap_grow(h, rec_size(len));
		if (err)
			return err;
		r = (struct snaprec *)(h->snap + h->end);
		r->ino = d->d_ino;
		r->off = d->d_off;
		r->type = d->d_type;
		memcpy(r->name, d->d_name, len + 1);
		h->end += rec_size(len);
	}
	if (errno)
		return errno;
	closedir(h->dp);
	h->dp = NULL;
	return 0;
}

/* A snapshot read again (a rewind): 0 or errno, the old one kept then. */
static int dirh_reread(struct dirh *h, struct dnode *dir)
{
	struct dirh fresh = { 0 };
	int tmp, dfd = node_dir_fd(dir, &tmp), fd, err;

	fd = dfd < 0 ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	node_dir_fd_put(tmp);
	if (fd < 0)
		return err;
	fresh.dp = fdopendir(fd);
	if (!fresh.dp) {
		err = errno;
		close(fd);
		return err;
	}
	err = dirh_snapshot(&fresh);
	if (err) {
		closedir(fresh.dp);
		snap_drop(&fresh);
		return err;
	}
	snap_drop(h);
	h->snap = fresh.snap;
	h->end = fresh.end;
	h->cap = fresh.cap;
	h->pos = 0;
	return 0;
}

static void dirh_seek(struct dirh *h, off_t off)
{
	size_t at = 0;
	struct snaprec *r;

	if (h->dp) {
		seekdir(h->dp, off);
		return;
	}
	/* a snapshot: off is the d_off of the record before (0: the start) */
	while (off != 0 && at < h->end) {
		r = (struct snaprec *)(h->snap + at);
		at += rec_size(strlen(r->name));
		if (r->off == off)
			break;
	}
	h->pos = at;
}

static struct dirent *dirh_next(struct dirh *h)
{
	struct snaprec *r;

	if (h->dp)
		return readdir(h->dp);
	if (h->pos >= h->end)
		return NULL;
	r = (struct snaprec *)(h->snap + h->pos);
	h->pos += rec_size(strlen(r->name));
	h->one.d_ino = r->ino;
	h->one.d_off = r->off;
	h->one.d_type = r->type;
	snprintf(h->one.d_name, sizeof(h->one.d_name), "%s", r->name);
	return &h->one;
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dnode *dir = ino_node(ino);
	int tmp, dfd = node_dir_fd(dir, &tmp), fd, err;
	struct dirh *h;

	err = dfd < 0 ? errno : check_dir_fd(dir, dfd);
	fd = err ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && fd < 0)
		err = errno;
	node_dir_fd_put(tmp);
	if (err)
		return reply_errno(req, err);
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return reply_errno(req, ENOMEM);
	}
	if (!(h->dp = fdopendir(fd))) {
		err = errno;
		close(fd);
		free(h);
		return reply_errno(req, err);
	}
	if (CTR_GET(open_files) >= dcfs.fd_budget && (err = dirh_snapshot(h))) {
		dirh_free(h);
		return reply_errno(req, err);
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (h->dp)
		CTR_ADD(open_files, 1);
	if (fuse_reply_open(req, fi) != 0) {
		if (h->dp)
			CTR_ADD(open_files, -1);
		dirh_free(h);
	}
}

static bool dot_or_dotdot(const char *s)
{
	return s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
	struct dnode *dir = ino_node(ino), **looked = NULL;
	size_t rem = size, nlooked = 0, i;
	char *buf = malloc(size), *p = buf;
	int err = 0;

	if (!buf)
		return reply_errno(req, ENOMEM);
	if (plus) {
		/* the nodes counted in this reply, to undo if it is lost */
		looked = malloc((size / 32 + 1) * sizeof(*looked));
		if (!looked) {
			free(buf);
			return reply_errno(req, ENOMEM);
		}
	}
	if (off != h->offset) {
		if (off == 0 && !h->dp && (err = dirh_reread(h, dir))) {
			free(looked);
			free(buf);
			return reply_errno(req, err);
		}
		dirh_seek(h, off);
		h->entry = NULL;
		h->offset = off;
	}
	for (;;) {
		struct fuse_entry_param e;
		struct dnode *n = NULL;
		const char *name;
		size_t entsize;
		off_t next;

		if (!h->entry) {
			errno = 0;
			h->entry = dirh_next(h);
			if (!h->entry) {
				err = errno;
				break;
			}
		}
		next = h->entry->d_off;
		name = h->entry->d_name;
		if (!plus) {
			struct stat st = {
				.st_ino = h->entry->d_ino,
				.st_mode = (mode_t)h->entry->d_type << 12,
			};

			entsize = fuse_add_direntry(req, p, rem, name, &st, next);
		} else if (dot_or_dotdot(name)) {
			entry_init(&e);
			e.attr.st_ino = h->entry->d_ino;
			e.attr.st_mode = (mode_t)h->entry->d_type << 12;
			entsize = fuse_add_direntry_plus(req, p, rem, name, &e, next);
		} else {
			err = do_lookup(dir, name, &e, &n);
			if (err == ENOENT) {	/* gone since readdir saw it */
				err = 0;
				h->entry = NULL;
				h->offset = next;
				continue;
			}
			if (err)
				break;
			entsize = fuse_add_direntry_plus(req, p, rem, name, &e, next);
		}
		if (entsize > rem) {
			if (n)
				node_forget(n, 1);
			break;
		}
		if (n)
			looked[nlooked++] = n;
		p += entsize;
		rem -= entsize;
		h->entry = NULL;
		h->offset = next;
	}
	/* an error can only be told before anything was returned */
	if (err && rem == size) {
		reply_errno(req, err);
	} else if (fuse_reply_buf(req, buf, size - rem) != 0) {
		for (i = 0; i < nlooked; i++)
			node_forget(looked[i], 1);
	}
	free(looked);
	free(buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;

	(void)ino;
	if (h->dp)
		CTR_ADD(open_files, -1);
	dirh_free(h);
	fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
	int tmp = -1, fd, res;

	if (h->dp) {
		fd = dirfd(h->dp);
	} else {	/* a snapshot: the directory, opened for this call */
		int dfd = node_dir_fd(ino_node(ino), &tmp);

		fd = dfd < 0 ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		node_dir_fd_put(tmp);
		tmp = fd;
	}
	res = fd < 0 ? -1 : datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, res < 0 ? errno : 0);
	if (tmp >= 0)
		close(tmp);
}

/* ---- the rest ---------------------------------------------------------------- */

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv;
	int fd = node_fd_use(ino_node(ino));

	if (fd < 0 || fstatvfs(fd, &sv) < 0)
		reply_errno(req, errno);
	else
		fuse_reply_statfs(req, &sv);
	node_fd_done();
}

/* Only without default_permissions does the kernel ask. */
static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct procpath pp;
	struct caller cr;
	int res;

	const char *path = node_path(&pp, ino_node(ino));
	int err = path ? caller_begin(req, &cr, CR_GROUPS) : errno;

	if (!err) {
		res = faccessat(AT_FDCWD, path, mask, AT_EACCESS);
		err = res < 0 ? errno : 0;
		caller_end(&cr);
	}
	fuse_reply_err(req, err);
	node_fd_done();
}

/*
 * Attributes are changed as the caller: the kernel leaves system.* names
 * other than POSIX ACLs (an NFSv4 or CIFS ACL, say) to the file system,
 * and the host's checks of them must see the caller, not root.
 */
static void change_xattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			 const char *value, size_t size, int flags, bool remove)
{
	struct dnode *n = ino_node(ino);
	struct procpath pp;
	struct caller cr;
	const char *path;
	int err = check_node(n), res;

	if (err)
		return reply_errno(req, err);
	path = node_path(&pp, n);
	err = path ? caller_begin(req, &cr, CR_GROUPS) : errno;
	if (!err) {
		res = remove ? removexattr(path, name) :
			       setxattr(path, name, value, size, flags);
		err = res < 0 ? errno : 0;
		caller_end(&cr);
	}
	fuse_reply_err(req, err);
	node_fd_done();
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	change_xattr(req, ino, name, value, size, flags, false);
}

/* getxattr and listxattr: size 0 asks for the length only */
static void reply_xattr(fuse_req_t req, ssize_t (*get)(const char *, const char *,
						       char *, size_t),
			fuse_ino_t ino, const char *name, size_t size)
{
	struct procpath pp;
	const char *path = node_path(&pp, ino_node(ino));
	char *value = NULL;
	ssize_t n;

	if (size && !(value = malloc(size)))
		n = -1, errno = ENOMEM;
	else
		n = path ? get(path, name, value, size) : -1;
	node_fd_done();
	if (n < 0)
		reply_errno(req, errno);
	else if (size)
		fuse_reply_buf(req, value, (size_t)n);
	else
		fuse_reply_xattr(req, (size_t)n);
	free(value);
}

static ssize_t get_xattr(const char *path, const char *name, char *v, size_t s)
{
	return getxattr(path, name, v, s);
}

static ssize_t list_xattr(const char *path, const char *name, char *v, size_t s)
{
	(void)name;
	return listxattr(path, v, s);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	reply_xattr(req, get_xattr, ino, name, size);
}

/*
 * Squeeze the trusted.* names out of a listxattr list of n bytes; the
 * length left.  Each name's length is taken before it moves: the move
 * may overwrite it.
 */
static ssize_t drop_trusted(char *list, size_t n)
{
	char *p = list, *q = list, *end = list + n;

	while (p < end) {
		size_t len = strnlen(p, (size_t)(end - p)) + 1;

		if (strncmp(p, "trusted.", 8) != 0) {
			memmove(q, p, len);
			q += len;
		}
		p += len;
	}
	return q - list;
}

/*
 * The kernel lists trusted.* names only to a caller with CAP_SYS_ADMIN,
 * and dcfs run as root lists as root: for other callers, leave them out.
 * (FUSE does not tell us the caller's capabilities; uid 0 stands for
 * them.)
 */
static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct procpath pp;
	const char *path;
	char *list = NULL;
	ssize_t n = 0;

	if (fuse_req_ctx(req)->uid == 0)
		return reply_xattr(req, list_xattr, ino, NULL, size);
	path = node_path(&pp, ino_node(ino));
	do {
		free(list);
		list = NULL;
		n = path ? listxattr(path, NULL, 0) : -1;
		if (n < 0)
			break;
		list = malloc((size_t)n + 1);
		if (!list) {
			errno = ENOMEM;
			n = -1;
			break;
		}
		n = listxattr(path, list, (size_t)n);
	} while (n < 0 && errno == ERANGE);
	node_fd_done();
	if (n < 0) {
		free(list);
		return reply_errno(req, errno);
	}
	n = drop_trusted(list, (size_t)n);
	if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else if ((size_t)n > size)
		reply_errno(req, ERANGE);
	else
		fuse_reply_buf(req, list, (size_t)n);
	free(list);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	change_xattr(req, ino, name, NULL, 0, 0, true);
}

/* Does SOURCE_DIR keep POSIX ACLs?  (ENODATA: it could, none is set.) */
static bool source_has_acls(void)
{
	struct procpath pp;

	return getxattr(proc_path(&pp, dcfs.root_fd), "system.posix_acl_access",
			NULL, 0) >= 0 || errno == ENODATA;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/*
	 * Where the source keeps POSIX ACLs the kernel checks them too, and
	 * leaves the caller's umask to us (caller_begin applies it, so that
	 * a default ACL can override it, as natively).  Without, the kernel
	 * applied the umask: ours must add nothing.  Either way dcfs's own
	 * umask is 0.
	 */
	if ((conn->capable & FUSE_CAP_POSIX_ACL) && (conn->capable & FUSE_CAP_DONT_MASK) &&
	    source_has_acls()) {
		conn->want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
		dcfs.posix_acl = true;
	}
	src_len = fd_path(dcfs.root_fd, src_path, sizeof(src_path));
	umask(0);
	/* glibc's setgroups changes every thread: none has root's groups to
	 * lend a caller (caller_begin installs the caller's own) */
	if (dcfs.as_caller && setgroups(0, NULL) < 0)
		dcfs_log(LOG_WARNING, "cannot drop the supplementary groups: %s",
			 strerror(errno));
	/* large reads splice from the file to the kernel (op_read); not
	 * with the ring, whose replies are copied into its buffers */
	if ((conn->capable & FUSE_CAP_SPLICE_WRITE) && !uring_offered())
		conn->want |= FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE;
	/* splicing every request in costs a system call per request: the
	 * metadata operations dcfs is about matter more than big writes */
	conn->want &= ~FUSE_CAP_SPLICE_READ;
	/* with both timeouts 0 the attributes READDIRPLUS returns expire at
	 * once: by default it would only make every listed entry a node (and,
	 * for a file, a descriptor) for nothing */
	if (dcfs.readdirplus == DCFS_RDPLUS_OFF ||
	    (dcfs.readdirplus == DCFS_RDPLUS_DEFAULT &&
	     dcfs_entry_timeout() == 0 && dcfs_attr_timeout() == 0))
		conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO);
	/* handle-less I/O (node_io_fd): O_TRUNC must reach us as a SETATTR,
	 * since no OPEN will */
	if (!dcfs.open_requests)
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	/* a symlink's text never changes: let the kernel keep it */
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
}

const struct fuse_lowlevel_ops dcfs_ops = {
	.init		= op_init,
	.lookup		= op_lookup,
	.forget		= op_forget,
	.forget_multi	= op_forget_multi,
	.getattr	= op_getattr,
	.setattr	= op_setattr,
	.readlink	= op_readlink,
	.mknod		= op_mknod,
	.mkdir		= op_mkdir,
	.unlink		= op_unlink,
	.rmdir		= op_rmdir,
	.symlink	= op_symlink,
	.rename		= op_rename,
	.link		= op_link,
	.open		= op_open,
	.create		= op_create,
	.read		= op_read,
	.write		= op_write,
	.write_buf	= op_write_buf,
	.flush		= op_flush,
	.release	= op_release,
	.fsync		= op_fsync,
	.opendir	= op_opendir,
	.readdir	= op_readdir,
	.readdirplus	= op_readdirplus,
	.releasedir	= op_releasedir,
	.fsyncdir	= op_fsyncdir,
	.statfs		= op_statfs,
	.access		= op_access,
	.fallocate	= op_fallocate,
	.setxattr	= op_setxattr,
	.getxattr	= op_getxattr,
	.listxattr	= op_listxattr,
	.removexattr	= op_removexattr,
	.copy_file_range = op_copy_file_range,
	.lseek		= op_lseek,
};
