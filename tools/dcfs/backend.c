// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * backend.c - the libdcache backend over SOURCE_DIR (dcfs_backend_ops):
 * what the cache calls on a miss, an expired answer, a link to read or an
 * entry it drops.  Its inodes' cookies are nodes (node.c): each entry
 * holding one holds a reference, which release() drops.
 *
 * The backend runs as root, on whichever thread missed (a worker serving
 * a request, or the coherence watcher), under no lock of dcfs's; libdcache
 * may hold its own write lock around release() (see node.c, "Locks").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "dcfs.h"

/* ---- the per-thread descriptor stash ---------------------------------- */

/*
 * A backend lookup opens an O_PATH descriptor on the name and fstat()s it
 * to learn what it is.  A directory or symlink node keeps the descriptor;
 * for any other file it is exactly the one node_activate() is about to
 * open again, so the lookup leaves it here, with a reference on the node,
 * for the thread's next activation of that node.  The attributes go with
 * it: the LOOKUP being served replies with them rather than stat the same
 * inode a second time.  The operations empty the stash after each use, so what
 * it holds always comes from the request in hand.
 */
static __thread struct dnode *stash_node;
static __thread int stash_fd = -1;
static __thread struct stat stash_st;

void stash_clear(void)
{
	if (stash_node) {
		if (stash_fd >= 0)	/* -1 once node_activate took it */
			close(stash_fd);
		node_put(stash_node);
		stash_node = NULL;
		stash_fd = -1;
	}
}

void stash_set(struct dnode *n, int fd, const struct stat *st)
{
	stash_clear();
	node_ref(n);
	stash_node = n;
	stash_fd = fd;
	stash_st = *st;
}

/* The stashed descriptor if it is n's, to pass to node_activate. */
int *stash_fd_for(struct dnode *n)
{
	return stash_node == n ? &stash_fd : NULL;
}

/* The stashed attributes if they are n's. */
const struct stat *stash_stat_for(struct dnode *n)
{
	return stash_node == n ? &stash_st : NULL;
}

/* ---- the backend ------------------------------------------------------ */

void backend_inode(struct dc_inode *out, const struct stat *st,
		   struct dnode *n)
{
	out->ino = st->st_ino;
	out->cookie = (uint64_t)(uintptr_t)n;
	out->mode = st->st_mode;
	out->gen = dc_hostfs_gen(st->st_dev);
	out->uid = st->st_uid;
	out->gid = st->st_gid;
}

static int be_root(void *ctx, struct dc_inode *out)
{
	struct dnode *r = dcfs.root;
	struct stat st;

	(void)ctx;
	if (fstat(r->fd, &st) < 0)
		return -errno;
	node_ref(r);		/* the root entry's reference */
	backend_inode(out, &st, r);
	return 0;
}

/*
 * One name in a directory node, as root (dcfs switches credentials only
 * around the system calls that create).  O_PATH|O_NOFOLLOW: a symlink is
 * returned as itself, and nothing is opened for reading.
 */
static int be_lookup(void *ctx, const struct dc_inode *dir, const char *name,
		     size_t len, struct dc_inode *out)
{
	struct dnode *dn = (struct dnode *)(uintptr_t)dir->cookie, *n;
	char buf[DC_NAME_MAX + 1];
	struct stat st;
	int fd, dfd, tmp, err;

	(void)ctx;
	if (len > DC_NAME_MAX)
		return -ENAMETOOLONG;
	if (!S_ISDIR(dir->mode) || !dn)
		return -ENOTDIR;
	dfd = node_dir_fd(dn, &tmp);	/* ENOENT: removed, empty for good */
	if (dfd < 0)
		return -errno;
	memcpy(buf, name, len);
	buf[len] = '\0';
	fd = openat(dfd, buf, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	err = -errno;
	node_dir_fd_put(tmp);
	if (fd < 0) {
		if (err == -EMFILE || err == -ENFILE)
			CTR_ADD(emfile, 1);
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = node_get(&st, &fd, &n);
	if (err) {
		close(fd);
		return err;
	}
	stash_set(n, fd, &st);	/* fd is -1 if the node kept it */
	backend_inode(out, &st, n);
	return 0;
}

/*
 * An expired answer (ttl mode): still what name in dir is?  One fstatat,
 * where a lookup would open a descriptor and probe the node table.  The
 * same inode (number, device, type and mode) with the same owner is the
 * same answer.
 */
static int be_revalidate(void *ctx, const struct dc_inode *dir, const char *name,
			 size_t len, const struct dc_inode *cached)
{
	struct dnode *dn = (struct dnode *)(uintptr_t)dir->cookie;
	char buf[DC_NAME_MAX + 1];
	struct stat st;
	int fd, tmp, res;

	(void)ctx;
	if (len > DC_NAME_MAX || !dn || !S_ISDIR(dir->mode))
		return -EINVAL;
	fd = node_dir_fd(dn, &tmp);
	if (fd < 0)	/* ENOENT: removed, empty for good */
		return errno == ENOENT ? cached->mode == 0 : -errno;
	memcpy(buf, name, len);
	buf[len] = '\0';
	res = fstatat(fd, buf, &st, AT_SYMLINK_NOFOLLOW);
	if (res < 0)
		res = errno == ENOENT ? cached->mode == 0 : -errno;
	else
		res = cached->mode == st.st_mode && cached->ino == (uint64_t)st.st_ino &&
		      cached->gen == dc_hostfs_gen(st.st_dev) &&
		      cached->uid == st.st_uid && cached->gid == st.st_gid;
	node_dir_fd_put(tmp);
	return res;
}

static int be_getattr(void *ctx, struct dc_inode *inode)
{
	struct dnode *n = (struct dnode *)(uintptr_t)inode->cookie;
	struct stat st;
	int fd, tmp = -1, res;

	(void)ctx;
	/* a directory's own or by handle; another file's, only while the
	 * kernel holds it (then it has one) */
	fd = !n ? -1 : S_ISDIR(n->type) ? node_dir_fd(n, &tmp) : node_fd(n);
	if (fd < 0)
		return -ESTALE;
	res = fstat(fd, &st) < 0 ? -errno : 0;
	node_dir_fd_put(tmp);
	if (res == 0)
		backend_inode(inode, &st, n);
	return res;
}

static int be_readlink(void *ctx, const struct dc_inode *link, char *buf,
		       size_t size)
{
	struct dnode *n = (struct dnode *)(uintptr_t)link->cookie;
	struct file_handle *fh;
	int fd, tmp = -1, *sp;
	ssize_t len;

	(void)ctx;
	if (!n || !S_ISLNK(n->type) || size == 0)
		return -EINVAL;
	/* the descriptor this thread's lookup of the link just opened
	 * (libdcache reads a link right after looking it up), else the
	 * node's own, else one of this call's by handle (never
	 * node_fd_use's: a request on this thread may be using that slot) */
	sp = stash_fd_for(n);
	fd = sp && *sp >= 0 ? *sp : __atomic_load_n(&n->fd, __ATOMIC_ACQUIRE);
	if (fd < 0) {
		fh = __atomic_load_n(&n->fh, __ATOMIC_ACQUIRE);
		if (!fh || dcfs.handle_fd < 0)
			return -ESTALE;
		fd = tmp = open_by_handle_at(dcfs.handle_fd, fh, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	len = readlinkat(fd, "", buf, size);
	if (len < 0)
		len = -errno;
	if (tmp >= 0)
		close(tmp);
	if (len < 0)
		return (int)len;
	if ((size_t)len >= size || len > INT_MAX)
		return -ENAMETOOLONG;
	buf[len] = '\0';
	return (int)len;
}

/*
 * Every name in a directory node, so that libdcache can answer names that
 * are not there without a lookup each: the compiler's include probes.
 */
static int be_readdir(void *ctx, const struct dc_inode *dir,
		      int (*emit)(void *arg, const char *name, size_t len),
		      void *arg)
{
	struct dnode *dn = (struct dnode *)(uintptr_t)dir->cookie;
	int dfd, tmp, err;

	(void)ctx;
	if (!S_ISDIR(dir->mode) || !dn)
		return -ENOTDIR;
	dfd = node_dir_fd(dn, &tmp);
	if (dfd < 0)
		return -errno;
	err = dc_readdir_fd(dfd, emit, arg);
	node_dir_fd_put(tmp);
	return err;
}

static void be_release(void *ctx, const struct dc_inode *inode)
{
	(void)ctx;
	node_put((struct dnode *)(uintptr_t)inode->cookie);
}

static void be_destroy(void *ctx)
{
	(void)ctx;
}

const struct dc_backend_ops dcfs_backend_ops = {
	.root		= be_root,
	.lookup		= be_lookup,
	.getattr	= be_getattr,
	.revalidate	= be_revalidate,
	.readlink	= be_readlink,
	.release	= be_release,
	.destroy	= be_destroy,
	.readdir	= be_readdir,
};
