// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * change.c - making a planned change, in the source or through the mount,
 * checking the source shows it, and keeping the names up with it.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/coherence/run.h"

const char *const chg_names[C_NCHG] = {
	"create", "unlink", "rename", "rename-dir", "mkdir", "rmdir",
	"replace", "pwrite", "truncate", "append", "chmod", "chown",
	"link", "unlink-link", "retarget", "setxattr", "removexattr",
};

static int put_file(const char *path, const void *data, size_t n, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);
	int err = 0;

	if (fd < 0)
		return errno;
	if (coh_write_all(fd, data, n) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/* p's change under base (the tree in the source, or through the mount):
 * 0, or the errno of the call *call names. */
int coh_apply(const struct plan *p, const char *base, const char **call)
{
	char a[PATH_MAX], b[PATH_MAX], t[PATH_MAX];
	int err = 0, fd;

	coh_at(a, base, p->a);
	coh_at(b, base, p->b);
	coh_at(t, base, p->tmp);
	*call = chg_names[p->chg];
	switch (p->chg) {
	case C_CREATE:
		return put_file(a, p->data, p->n, O_CREAT | O_EXCL);
	case C_UNLINK:
	case C_UNLINK_LINK:
		return unlink(a) < 0 ? errno : 0;
	case C_RENAME:
	case C_RENAME_DIR:
		return rename(a, b) < 0 ? errno : 0;
	case C_MKDIR:
		return mkdir(a, 0755) < 0 ? errno : 0;
	case C_RMDIR:
		return rmdir(a) < 0 ? errno : 0;
	case C_REPLACE:
		*call = "write of the new file";
		if ((err = put_file(t, p->data, p->n, O_CREAT | O_EXCL)))
			return err;
		*call = "rename over the file";
		return rename(t, a) < 0 ? errno : 0;
	case C_PWRITE: {
		ssize_t w;

		fd = open(a, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		w = pwrite(fd, p->data, p->n, p->off);
		if (w < 0)
			err = errno;
		else if ((size_t)w != p->n)
			err = EIO;
		if (close(fd) < 0 && !err)
			err = errno;
		return err;
	}
	case C_TRUNCATE:
		return truncate(a, p->size) < 0 ? errno : 0;
	case C_APPEND:
		return put_file(a, p->data, p->n, O_APPEND);
	case C_CHMOD:
		return chmod(a, p->mode) < 0 ? errno : 0;
	case C_CHOWN:
		return lchown(a, p->uid, p->gid) < 0 ? errno : 0;
	case C_LINK:
		return link(a, b) < 0 ? errno : 0;
	case C_RETARGET:
		*call = "symlink";
		if (symlink(p->target, t) < 0)
			return errno;
		*call = "rename over the symlink";
		return rename(t, a) < 0 ? errno : 0;
	case C_SETXATTR:
		return lsetxattr(a, XATTR_NAME, p->xval, p->xlen, 0) < 0 ? errno : 0;
	case C_RMXATTR:
		return lremovexattr(a, XATTR_NAME) < 0 ? errno : 0;
	case C_NCHG:
		break;
	}
	return EINVAL;
}

static bool is_type(const struct view *v, char type)
{
	return !v->err && (type == 'd' ? S_ISDIR(v->mode) : type == 'l' ? S_ISLNK(v->mode) :
			   S_ISREG(v->mode));
}

static bool has_data(const struct view *v, const struct plan *p)
{
	return is_type(v, 'f') && !v->data_err && v->data_len == p->want_len &&
	       v->data_hash == p->want_hash;
}

/* Does the source show what p meant to do?  v[i] is check i after it. */
bool coh_intended(const struct run *r, const struct plan *p, const struct view *v)
{
	switch (p->chg) {
	case C_CREATE:
	case C_REPLACE:
	case C_PWRITE:
	case C_TRUNCATE:
	case C_APPEND:
		return has_data(&v[0], p) && (p->chg != C_REPLACE || v[1].err == ENOENT);
	case C_UNLINK:
	case C_UNLINK_LINK:
	case C_RMDIR:
		return v[0].err == ENOENT;
	case C_RENAME:
	case C_RENAME_DIR:
		return v[0].err == ENOENT && is_type(&v[1], p->type);
	case C_MKDIR:
		return is_type(&v[0], 'd') && (v[0].mode & 07777) == (0755 & ~r->s->umask);
	case C_CHMOD:
		return !v[0].err && (v[0].mode & 07777) == p->mode;
	case C_CHOWN:
		return !v[0].err && v[0].uid == p->uid && v[0].gid == p->gid;
	case C_LINK:
		return is_type(&v[0], 'f') && v[0].nlink == p->want_nlink;
	case C_RETARGET:
		return is_type(&v[0], 'l') && !strcmp(v[0].target, p->target) &&
		       v[1].err == ENOENT;
	case C_SETXATTR:
		return !v[0].xattr_err && v[0].xattr_len == p->xlen &&
		       !memcmp(v[0].xattr, p->xval, p->xlen);
	case C_RMXATTR:
		return v[0].xattr_err == ENODATA;
	case C_NCHG:
		break;
	}
	return false;
}

/* The names as the source now has them. */
void coh_commit(struct run *r, const struct plan *p)
{
	switch (p->chg) {
	case C_CREATE:
	case C_MKDIR:
		coh_names_add(&r->names, p->a, p->type);
		break;
	case C_LINK:
		coh_names_add(&r->names, p->b, 'f');
		break;
	case C_UNLINK:
	case C_UNLINK_LINK:
	case C_RMDIR:
		coh_names_del(&r->names, p->a);
		break;
	case C_RENAME:
	case C_RENAME_DIR:
		coh_names_move(&r->names, p->a, p->b);
		coh_names_move(&r->quar, p->a, p->b);
		break;
	default:
		break;
	}
}
