// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nodefd.c - how a request reaches a node's inode: the node's own
 * descriptor, one opened by file handle for the request, a directory's
 * for one call, and the descriptors a file's reads and writes go to.
 *
 * More nodes than descriptors
 * ---------------------------
 * The kernel may hold more inodes than the process may open files (a walk
 * of a kernel tree with timeouts 0 keeps every inode it met).  Directories
 * always hold a descriptor; a file or symlink activated when the nodes'
 * descriptors (node_fds, io descriptors included) have reached fd_budget
 * holds a file handle instead, and each request on it opens a descriptor
 * by handle for its own duration.  Where handles do not work (not root,
 * a file system without them, a file on another mount) files hold
 * descriptors, and the limit is the limit (EMFILE, counted).
 *
 * I/O descriptors
 * ---------------
 * Handle-less I/O (ops_file.c) reads and writes a file through
 * descriptors its node opens on first use, O_RDONLY and O_RDWR, kept
 * until the kernel forgets the node (node_forget closes them).  Over the
 * budget such a descriptor serves one request and is closed after it
 * (node_io_done).
 *
 * Locking: the node's descriptor and handle are read lock-free (acquire
 * loads, paired with the release stores node.c makes under the node
 * lock).  An I/O descriptor is kept under the node lock (node_io_keep),
 * as node.c's lock rules say.  The descriptors opened for one request
 * are the thread's own (thread-local slots).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dcfs.h"

/* ---- file handles ------------------------------------------------------ */

/* The handle of what fd (O_PATH) is, and its mount id in *mid. */
static struct file_handle *handle_at(int fd, int *mid)
{
	struct file_handle *fh = malloc(sizeof(*fh) + MAX_HANDLE_SZ), *small;

	if (!fh)
		return NULL;
	fh->handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", fh, mid, AT_EMPTY_PATH) < 0) {
		free(fh);
		return NULL;
	}
	small = realloc(fh, sizeof(*fh) + fh->handle_bytes);
	return small ? small : fh;
}

void nodes_setup_handles(uint64_t nofile)
{
	struct file_handle *fh;
	int mid, fd, probe;

	/* files hold descriptors up to a quarter of the limit; the rest is
	 * for what cannot go without: directories (one each, for as long as
	 * the cache holds them), handle-less I/O, directory streams (a
	 * snapshot past the budget), libfuse's pipes */
	dcfs.handle_fd = -1;
	dcfs.fd_budget = (int64_t)(nofile / 4);
	/* open_by_handle_at wants a real descriptor of the file system, not
	 * an O_PATH one, and CAP_DAC_READ_SEARCH: try both once */
	fd = openat(dcfs.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	fh = handle_at(dcfs.root_fd, &mid);
	probe = fh ? open_by_handle_at(fd, fh, O_PATH | O_CLOEXEC) : -1;
	free(fh);
	if (probe < 0) {
		close(fd);
		return;
	}
	close(probe);
	dcfs.handle_fd = fd;
	dcfs.mount_id = mid;
}

/* The handle of what fd (O_PATH) is, if open_by_handle_at can reopen it. */
struct file_handle *node_handle_of(int fd)
{
	int mid;
	struct file_handle *fh = handle_at(fd, &mid);

	if (fh && mid != dcfs.mount_id) {
		free(fh);
		return NULL;
	}
	return fh;
}

/* Do two handles name the same inode (same generation)? */
bool node_handle_same(const struct file_handle *a,
		      const struct file_handle *b)
{
	return a->handle_type == b->handle_type &&
	       a->handle_bytes == b->handle_bytes &&
	       !memcmp(a->f_handle, b->f_handle, a->handle_bytes);
}

/* ---- a request's descriptor -------------------------------------------- */

int node_dir_fd(struct dnode *n, int *tmp)
{
	int fd = __atomic_load_n(&n->fd, __ATOMIC_ACQUIRE);
	struct file_handle *fh;

	*tmp = -1;
	if (fd >= 0)
		return fd;
	fh = __atomic_load_n(&n->fh, __ATOMIC_ACQUIRE);
	if (!fh || dcfs.handle_fd < 0 || __atomic_load_n(&n->gone, __ATOMIC_ACQUIRE)) {
		errno = ENOENT;		/* removed: empty for good */
		return -1;
	}
	fd = open_by_handle_at(dcfs.handle_fd, fh, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			CTR_ADD(emfile, 1);
		else if (errno == ESTALE)
			errno = ENOENT;	/* removed behind our back */
		return -1;
	}
	*tmp = fd;
	return fd;
}

/*
 * This thread's descriptor opened by handle, and for which node.  The slot
 * holds a reference on the node, so a later request that forgets to call
 * node_fd_done() cannot match a freed node's address reused by another.
 */
static __thread struct dnode *use_node;
static __thread int use_fd = -1;

int node_fd_use(struct dnode *n)
{
	/* acquire: pairs with node_activate's release store of fd */
	int fd = __atomic_load_n(&n->fd, __ATOMIC_ACQUIRE);
	struct file_handle *fh;

	if (fd >= 0)
		return fd;
	if (use_node == n)
		return use_fd;
	node_fd_done();
	fh = __atomic_load_n(&n->fh, __ATOMIC_ACQUIRE);
	if (!fh) {
		errno = ESTALE;
		return -1;
	}
	fd = open_by_handle_at(dcfs.handle_fd, fh, O_PATH | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE)
			CTR_ADD(emfile, 1);
		return -1;
	}
	node_ref(n);
	use_node = n;
	use_fd = fd;
	return fd;
}

void node_fd_done(void)
{
	struct dnode *n = use_node;

	if (n) {
		close(use_fd);
		use_node = NULL;
		use_fd = -1;
		node_put(n);
	}
}

int node_stat_at(struct dnode *n, int dirfd, const char *name, struct stat *st)
{
	int fd = __atomic_load_n(&n->fd, __ATOMIC_ACQUIRE), res, e;
	bool ours = use_node != n;	/* else the caller is using it */

	if (fd >= 0)
		return fstat(fd, st);
	/* fd-less: the name is the cheap way (one call, no descriptor), if
	 * it still names n: the same device and inode number is the same
	 * file, however it was reached */
	if (dirfd >= 0 && fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (uint64_t)st->st_ino == n->ino && (uint64_t)st->st_dev == n->dev)
		return 0;
	fd = node_fd_use(n);
	if (fd < 0)
		return -1;
	res = fstat(fd, st);
	e = errno;
	if (ours)
		node_fd_done();
	errno = e;
	return res;
}

int node_stat(struct dnode *n, struct dnode *dir, const char *name,
	      struct stat *st)
{
	return node_stat_at(n, dir ? node_fd(dir) : -1, name, st);
}

/* ---- I/O descriptors -------------------------------------------------- */

/* This thread's descriptors kept for one request's I/O, over the budget. */
static __thread int io_tmp[2] = { -1, -1 };

int node_io_once(bool write, int fd)
{
	if (io_tmp[write] >= 0)
		close(io_tmp[write]);
	io_tmp[write] = fd;
	return fd;
}

int node_io_keep(struct dnode *n, bool write, int fd)
{
	int cur;

	pthread_mutex_lock(&n->lock);
	cur = n->io_fd[write];
	if (cur >= 0) {
		/* another request opened it meanwhile: use that one */
		pthread_mutex_unlock(&n->lock);
		close(fd);
		return cur;
	}
	if (CTR_GET(node_fds) >= dcfs.fd_budget) {
		node_io_once(write, fd);	/* over budget */
	} else {
		/* release: pairs with node_io_get's acquire */
		__atomic_store_n(&n->io_fd[write], fd, __ATOMIC_RELEASE);
		CTR_ADD(node_fds, 1);
	}
	pthread_mutex_unlock(&n->lock);
	return fd;
}

void node_io_done(void)
{
	for (int i = 0; i < 2; i++)
		if (io_tmp[i] >= 0) {
			close(io_tmp[i]);
			io_tmp[i] = -1;
		}
}
