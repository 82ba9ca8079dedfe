// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - the FUSE low-level operations of dcfs, passed through to
 * SOURCE_DIR: what dcfs asks of the kernel at INIT, and the table of
 * handlers.  The handlers live by what they work on:
 *
 *   ops_inode.c   LOOKUP, FORGET, GETATTR, SETATTR, READLINK, STATFS, ACCESS
 *   ops_names.c   MKNOD, MKDIR, SYMLINK, LINK, UNLINK, RMDIR, RENAME, CREATE
 *   ops_file.c    OPEN, READ, WRITE, FLUSH, RELEASE, FSYNC, FALLOCATE,
 *                 COPY_FILE_RANGE, LSEEK (handle-less I/O)
 *   ops_dir.c     OPENDIR, READDIR, READDIRPLUS, RELEASEDIR, FSYNCDIR
 *   ops_xattr.c   SETXATTR, GETXATTR, LISTXATTR, REMOVEXATTR
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
 * (caller.c).  No host call follows a symlink or opens by name what it
 * did not just create (O_NOFOLLOW, O_EXCL), and no name is used in a
 * directory that has left the source (confine.c).  docs/dcfs.md,
 * "Security", gives the whole design.
 *
 * Rule for handlers: everything that uses a node or a directory's entry is
 * done before the reply.  After a reply the kernel may forget the node at
 * once, and another thread may free it.
 */
#include <errno.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "ops.h"

/* Does SOURCE_DIR keep POSIX ACLs?  (ENODATA: it could, none is set.) */
static bool source_has_acls(void)
{
	struct procpath pp;

	return getxattr(proc_path(&pp, dcfs.root_fd), "system.posix_acl_access",
			NULL, 0) >= 0 || errno == ENODATA;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	unsigned slots;

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
	confine_init();
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
	/* handle-less I/O (ops_file.c): O_TRUNC must reach us as a SETATTR,
	 * since no OPEN will */
	if (!dcfs.open_requests)
		conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
	/*
	 * The kernel keeps at most max_background background requests
	 * (readahead, writebacks, RELEASEs) sent and unanswered; past them
	 * every new one waits, each user's read of an uncached page among
	 * them.  With its default of 12, twelve stuck in host calls
	 * stalled every reader of the mount: as many as the pool may have
	 * workers, so that stuck requests fill the pool (loop.c) before
	 * they fill this.  The congestion threshold, where readahead holds
	 * back, stays at the kernel's default (3/4 of 12), which would
	 * otherwise follow ours.
	 */
	slots = dcfs_loop_slots();
	if (slots) {
		conn->max_background = slots < UINT16_MAX ? slots : UINT16_MAX;
		conn->congestion_threshold = 9;
	}
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
