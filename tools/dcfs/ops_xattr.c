// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops_xattr.c - the FUSE operations on extended attributes: SETXATTR,
 * GETXATTR, LISTXATTR and REMOVEXATTR, POSIX ACLs among them (the kernel
 * checks those itself where op_init negotiated them).
 *
 * Each goes through /proc/self/fd/N of the node (an O_PATH descriptor has
 * no xattr calls of its own).  See ops.c for the rules every handler
 * follows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "ops.h"

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

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
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

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
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
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
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
		/* none: done, for a second call of size 0 would only ask the
		 * length again, and one set meanwhile would count bytes that
		 * list does not hold */
		if (n <= 0)
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

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	change_xattr(req, ino, name, NULL, 0, 0, true);
}
