/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ops.h - what the files of dcfs's FUSE operations share: the handlers
 * that ops.c's table names, acting as the caller (caller.c), keeping to
 * SOURCE_DIR (confine.c), lookups (ops_inode.c) and file descriptors for
 * I/O (ops_file.c).  ops.c's opening comment gives the rules every
 * handler follows.
 */
#ifndef DCFS_OPS_H
#define DCFS_OPS_H

#include <errno.h>
#include <stdio.h>

#include "dcfs.h"

/* ---- small helpers ------------------------------------------------------ */

struct procpath {
	char s[48];
};

/* /proc/self/fd/N: what needs a real open of an O_PATH descriptor's inode */
static inline const char *proc_path(struct procpath *p, int fd)
{
	snprintf(p->s, sizeof(p->s), "/proc/self/fd/%d", fd);
	return p->s;
}

/* /proc/self/fd/N of any node (node_fd_use: call node_fd_done() after);
 * NULL with errno if it has no descriptor to be had */
static inline const char *node_path(struct procpath *p, struct dnode *n)
{
	int fd = node_fd_use(n);

	return fd < 0 ? NULL : proc_path(p, fd);
}

static inline bool out_of_fds(int err)
{
	return err == EMFILE || err == ENFILE;
}

/* fuse_reply_err, counting a want of descriptors (--stats emfile) */
static inline void reply_errno(fuse_req_t req, int err)
{
	if (out_of_fds(err))
		CTR_ADD(emfile, 1);
	fuse_reply_err(req, err);
}

/* ---- caller.c: the caller's credentials ---------------------------------- */

/* what caller_begin switches besides the file-system ids */
enum { CR_GROUPS = 1, CR_UMASK = 2 };

struct caller {
	bool fs;	/* fsuid/fsgid switched (or half-switched) */
	bool caps;	/* CAP_SYS_RESOURCE lowered */
	bool groups;	/* supplementary groups installed */
	bool umask;	/* the caller's umask set */
};

/* Act as the caller of req until caller_end: 0, or EPERM (logged once). */
int caller_begin(fuse_req_t req, struct caller *cr, int what);
/* Act as the owner of the file open at fd, without CAP_SYS_RESOURCE, for
 * a write the kernel sends on its own (a writeback): 0, errno or EPERM. */
int caller_begin_owner(int fd, struct caller *cr);
/* Back to root; keeps errno. */
void caller_end(struct caller *cr);

/* ---- confine.c: names that left the source -------------------------------- */

/* At INIT: SOURCE_DIR's path, to compare descriptors' paths with. */
void confine_init(void);
/* May names in directory node dir, whose descriptor is fd, be used?  0;
 * ESTALE, it left the source (its names forgotten); or ENOENT, it was
 * removed. */
int check_dir_fd(struct dnode *dir, int fd);
/* The same with dir's own descriptor: 0 or an errno. */
int check_dir(struct dnode *dir);
/* May a node's own object be used?  0 or ESTALE as check_dir (a file held
 * by handle and a removed directory pass). */
int check_node(struct dnode *n);

/* ---- ops_inode.c: lookups ------------------------------------------------ */

/* An entry reply's timeouts, the rest zero. */
void entry_init(struct fuse_entry_param *e);
/*
 * name in directory node dir (its held entry dd), through the cache: on
 * success one kernel lookup of the node is counted (the caller replies
 * with it, or forgets it), e is filled and *out is the node.  0 or a
 * positive errno; ENOENT is a negative answer.
 */
int lookup_in(struct dnode *dir, struct dc_dentry *dd, const char *name,
	      struct fuse_entry_param *e, struct dnode **out);
/* The same, dir's entry taken and put here (ENOTDIR if it has none). */
int do_lookup(struct dnode *dir, const char *name,
	      struct fuse_entry_param *e, struct dnode **out);

/* ---- ops_file.c: descriptors for I/O ------------------------------------ */

/*
 * open(2) of path that waits for a lease break only when it must, counted
 * apart from the workers (loop_block_begin); nonblock: the caller asked
 * O_NONBLOCK, and gets EWOULDBLOCK rather than a wait.  -1 with errno.
 */
int open_waiting(fuse_req_t req, const char *path, int flags, bool nonblock);
/* File n's descriptor for reads or writes (handle-less I/O): its node's,
 * opened on first use; call node_io_done() after the request.  -1 with
 * errno. */
int file_io_fd(fuse_req_t req, struct fuse_file_info *fi, struct dnode *n,
	       bool write);
/* An open file's handle is fd (fi->fh), counted in open_files. */
void file_opened(struct fuse_file_info *fi, int fd);
void file_closed(int fd);

/* ---- the handlers in ops.c's table, by file ------------------------------ */

/* ops_inode.c */
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void op_forget_multi(fuse_req_t req, size_t count,
		     struct fuse_forget_data *forgets);
void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		struct fuse_file_info *fi);
void op_readlink(fuse_req_t req, fuse_ino_t ino);
void op_statfs(fuse_req_t req, fuse_ino_t ino);
void op_access(fuse_req_t req, fuse_ino_t ino, int mask);

/* ops_names.c */
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
	      mode_t mode, dev_t rdev);
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
	      mode_t mode);
void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		const char *name);
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
	     const char *newname);
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
	       fuse_ino_t newparent, const char *newname, unsigned int flags);
void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
	       mode_t mode, struct fuse_file_info *fi);

/* ops_file.c */
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi);
void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
	      off_t off, struct fuse_file_info *fi);
void op_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in,
		  off_t off, struct fuse_file_info *fi);
void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi);
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
		  off_t length, struct fuse_file_info *fi);
void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			off_t off_out, struct fuse_file_info *fi_out,
			size_t len, int flags);
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	      struct fuse_file_info *fi);

/* ops_dir.c */
void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		 struct fuse_file_info *fi);

/* ops_xattr.c */
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 const char *value, size_t size, int flags);
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif /* DCFS_OPS_H */
