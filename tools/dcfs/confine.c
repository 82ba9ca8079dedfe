// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * confine.c - names that left the source: a directory or file whose
 * descriptor dcfs holds but that now lies outside SOURCE_DIR on the host
 * is no longer served.
 *
 * A directory moved out of SOURCE_DIR on the host (into another user's
 * private directory, say) keeps its descriptor here, and names the kernel
 * still holds would reach it; natively the path to it is closed.  So
 * before a name is made, removed or looked up in a directory, and before a
 * file's data is first opened, the kernel's own path of the descriptor
 * (/proc/self/fd/N) must lie in SOURCE_DIR's.  Outside it, the cache
 * forgets the object's names and the request gets ESTALE: the kernel walks
 * the path again (LOOKUP_REVAL) and finds the name gone.  A directory
 * whose path is too long to print is judged by walking ".." up to
 * SOURCE_DIR.  A directory removed takes no names, as natively: its
 * requests for names answer ENOENT, while its attributes and its (empty)
 * listing stay served.
 *
 * Called by any worker at any time; the only shared state is SOURCE_DIR's
 * path, written once at INIT before any request is served.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

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

/* SOURCE_DIR's path at start (confine_init); -1: read it each time */
static char src_path[PATH_MAX];
static ssize_t src_len = -1;

void confine_init(void)
{
	src_len = fd_path(dcfs.root_fd, src_path, sizeof(src_path));
}

/*
 * Where the object open at fd (a directory if dir) lies: 0, in the source;
 * ESTALE, outside it; ENOENT, a directory removed, which holds no names
 * and takes none, as natively (lookups and creates there answer ENOENT).
 */
static int where(int fd, bool dir)
{
	char p[PATH_MAX], r[PATH_MAX];
	ssize_t len = fd_path(fd, p, sizeof(p)), rlen;
	struct stat st;
	static const char del[] = " (deleted)";
	size_t dl = sizeof(del) - 1;

	/* too long to print: a directory is walked up; a file has no ".."
	 * (judged inside: the one case this check leaves open) */
	if (len < 0)
		return errno == ENAMETOOLONG && (!dir || inside_by_walk(fd)) ?
		       0 : ESTALE;
	/* removed, or a name that really ends so: the link count says.  A
	 * removed file's data stay readable to whoever opened it; a
	 * directory is taken as removed only when fstat says so */
	if ((size_t)len > dl && !memcmp(p + len - dl, del, dl)) {
		if (fstat(fd, &st) < 0)
			return dir ? ESTALE : 0;
		if (st.st_nlink == 0)
			return dir ? ENOENT : 0;
	}
	if (src_len > 0 && under(p, (size_t)len, src_path, (size_t)src_len))
		return 0;
	/* SOURCE_DIR's own path now (it may itself have been renamed) */
	rlen = fd_path(dcfs.root_fd, r, sizeof(r));
	if (rlen < 0)
		return dir && inside_by_walk(fd) ? 0 : ESTALE;
	return under(p, (size_t)len, r, (size_t)rlen) ? 0 : ESTALE;
}

/* Forget the names of n, which left the source or was removed. */
static void forget_names(struct dnode *n)
{
	if (S_ISDIR(n->type))
		dc_invalidate_dir(dcfs.cache, n->ino, dc_hostfs_gen(n->dev));
	else
		dc_invalidate_inode(dcfs.cache, n->ino, dc_hostfs_gen(n->dev));
}

/* n left the source (counted as stale). */
static void left_source(struct dnode *n)
{
	CTR_ADD(stale, 1);
	forget_names(n);
}

int check_dir_fd(struct dnode *dir, int fd)
{
	int err = dir == dcfs.root ? 0 : where(fd, true);

	if (err == ESTALE)
		left_source(dir);
	else if (err == ENOENT)
		forget_names(dir);	/* its name, cached in its parent */
	return err;
}

int check_dir(struct dnode *dir)
{
	int tmp, fd = node_dir_fd(dir, &tmp), err;

	if (fd < 0)
		return errno;
	err = check_dir_fd(dir, fd);
	node_dir_fd_put(tmp);
	return err;
}

/* A file held by handle has no path to check: it passes; so does a
 * removed directory, whose attributes and (empty) listing may be used. */
int check_node(struct dnode *n)
{
	int fd = node_fd(n), err;

	if (S_ISDIR(n->type)) {
		err = check_dir(n);
		return err == ENOENT ? 0 : err;
	}
	if (fd < 0 || where(fd, false) == 0)
		return 0;
	left_source(n);
	return ESTALE;
}
