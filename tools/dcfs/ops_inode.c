// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops_inode.c - the FUSE operations on one node and its attributes:
 * LOOKUP and FORGET (the kernel's lookup count, node.c), GETATTR,
 * SETATTR, READLINK, STATFS and ACCESS.
 *
 * A lookup goes through the cache (dc_lookup in the directory node's
 * entry); a miss reaches the backend (backend.c), which opens and stats
 * the name and leaves both in this thread's stash for the reply.  See
 * ops.c for the rules every handler follows.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ops.h"

/* ---- lookups ------------------------------------------------------------ */

void entry_init(struct fuse_entry_param *e)
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
int lookup_in(struct dnode *dir, struct dc_dentry *dd, const char *name,
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
	if (e->attr.st_nlink == 0 && (!S_ISDIR(n->type) || !fresh) &&
	    tries++ < 3) {
		/* no name holds this inode any more, yet the cache did (a
		 * directory only from the cache: a file system that counts
		 * no links of directories says 0 of a live one) */
		node_forget(n, 1);
		CTR_ADD(stale, 1);
		dc_invalidate_name(dcfs.cache, dd, name);
		goto again;
	}
	e->ino = node_ino(n);
	*out = n;
	return 0;
}

int do_lookup(struct dnode *dir, const char *name,
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

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
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

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	forget_one(ino, nlookup);
	fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count,
		     struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		forget_one(forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}
/* ---- attributes --------------------------------------------------------- */

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

void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
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
 * Before a write or truncate by a caller without CAP_FSETID, the kernel
 * drops a file's set-user-ID and set-group-ID bits itself, with no owner
 * check (file_remove_privs: ATTR_FORCE), and asks dcfs with a mode change
 * that only drops them: alone for a write, with the new size for a
 * truncate (or an O_TRUNC open).  The host, asked as that caller, would
 * refuse it (EPERM): so the rest is done as the caller, and then, if it
 * was, that one change as root.  A caller's own chmod of a file it does
 * not own never comes here: the kernel checks ownership first
 * (default_permissions).
 */
static bool kills_setid(int fd, int ffd, const struct stat *attr, int valid)
{
	mode_t setid = S_ISUID | S_ISGID, now, want = attr->st_mode & 07777;
	struct stat st;

	if (!(valid & FUSE_SET_ATTR_MODE) ||
	    (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) ||
	    (ffd >= 0 ? fstat(ffd, &st) : fstat(fd, &st)) < 0)
		return false;
	now = st.st_mode & 07777;
	return (now & setid) && (want & setid) != (now & setid) &&
	       want == ((now & ~setid) | (want & now & setid));
}

/*
 * The changes SETATTR asks for, on n (descriptor fd; open file ffd, or
 * -1; wfd, or -1, the node's descriptor for writing when the kernel holds
 * the file open: a size change is then an ftruncate, which checks no
 * permission, as natively), as the caller.
 */
static int set_attrs(fuse_req_t req, struct dnode *n, int fd, int ffd,
		     int wfd, const struct stat *attr, int valid)
{
	struct procpath pp;
	struct caller cr;
	bool kill = kills_setid(fd, ffd, attr, valid);
	int res = 0;

	if (kill)	/* after the rest: see kills_setid */
		valid &= ~FUSE_SET_ATTR_MODE;
	if ((errno = caller_begin(req, &cr, CR_GROUPS)))
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
	if (res == 0 && kill) {
		mode_t m = attr->st_mode & 07777;

		res = ffd >= 0 ? fchmod(ffd, m) : chmod(proc_path(&pp, fd), m);
	}
	return res;
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		int valid, struct fuse_file_info *fi)
{
	struct dnode *n = ino_node(ino);
	int fd, ffd = file_fd(n, fi), wfd = -1, err = check_node(n);

	if (err)
		return reply_errno(req, err);
	/* before node_fd_use: file_io_fd uses and ends its own */
	if ((valid & FUSE_SET_ATTR_SIZE) && fi && ffd < 0 && S_ISREG(n->type)) {
		wfd = file_io_fd(req, fi, n, true);
		if (wfd < 0)
			return reply_errno(req, errno);
	}
	fd = node_fd_use(n);
	if (fd < 0 || set_attrs(req, n, fd, ffd, wfd, attr, valid) < 0)
		reply_errno(req, errno);
	else
		reply_attr(req, n, ffd);
	node_fd_done();
	node_io_done();
}

void op_readlink(fuse_req_t req, fuse_ino_t ino)
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

void op_statfs(fuse_req_t req, fuse_ino_t ino)
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
void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct procpath pp;
	struct caller cr;
	const char *path = node_path(&pp, ino_node(ino));
	int res, err = path ? caller_begin(req, &cr, CR_GROUPS) : errno;

	if (!err) {
		res = faccessat(AT_FDCWD, path, mask, AT_EACCESS);
		err = res < 0 ? errno : 0;
		caller_end(&cr);
	}
	fuse_reply_err(req, err);
	node_fd_done();
}
