// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops_names.c - the FUSE operations that change names: MKNOD, MKDIR,
 * SYMLINK, LINK, UNLINK, RMDIR, RENAME and CREATE.
 *
 * The update contract of libdcache: change the source first, then tell the
 * cache (dc_create, dc_mkdir, dc_symlink, dc_link, dc_unlink, dc_rmdir,
 * dc_rename).  The kernel holds the directories' locks across each such
 * request, so no other update touches those names in between.  Each host
 * call is made as the caller (caller.c), in a directory still in the
 * source (confine.c), and opens nothing by name that it did not just
 * create.  See ops.c for the rules every handler follows.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

/* ---- telling the cache ------------------------------------------------- */

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
 * name was just created in r (by us): tell the cache what it is now.  The
 * node's reference goes to the cache; the descriptor opened to learn the
 * inode is stashed for the lookup that follows.  If anything fails, the
 * cache forgets the name instead (it may forget, it must not lie).
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
	backend_inode(&in, &st, n);
	if (S_ISDIR(st.st_mode))
		told(dc_mkdir(dcfs.cache, dd, name, &in), n, dd, name);
	else if (S_ISLNK(st.st_mode) && link)
		told(dc_symlink(dcfs.cache, dd, name, &in, link), n, dd, name);
	else
		told(dc_create(dcfs.cache, dd, name, &in), n, dd, name);
}

/* Whether name in dfd still holds the file made describes. */
static bool still_made(int dfd, const char *name, const struct stat *made)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_dev == made->st_dev && st.st_ino == made->st_ino;
}

/*
 * The creation worked but no node could be made: take it back, as the
 * caller (the host checks the sticky bit and the rest as for any unlink
 * of theirs), and only while the name is still made (its device and
 * inode, where the request knows them): meanwhile the name may have been
 * renamed away and another user's file put there.
 */
static void rollback(fuse_req_t req, struct dref *r, const char *name,
		     bool isdir, int err, const struct stat *made)
{
	struct caller cr;
	int res;

	if (!out_of_fds(err) && err != ENOMEM)
		return;
	if (made && !still_made(r->fd, name, made))
		return;
	if (caller_begin(req, &cr, CR_GROUPS))
		return;
	res = unlinkat(r->fd, name, isdir ? AT_REMOVEDIR : 0);
	caller_end(&cr);
	if (res == 0) {
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

/* Whether n is the file st describes. */
static bool is_made(const struct stat *st, const struct dnode *n)
{
	return (uint64_t)st->st_dev == n->dev && (uint64_t)st->st_ino == n->ino;
}

/*
 * n, the name's node, is not what the request made: a rename put another
 * file there meanwhile.  The kernel takes an answer for the caller's new
 * file, and a server exporting the mount (knfsd) opens a created file
 * with no check of its mode; so dcfs forgets the name and answers
 * ESTALE, and the kernel looks the name up again (LOOKUP_REVAL).
 */
static void reply_swapped(fuse_req_t req, struct dref *r, const char *name,
			  struct dnode *n)
{
	CTR_ADD(stale, 1);
	node_forget(n, 1);
	dc_invalidate_name(dcfs.cache, r->dd, name);
	reply_errno(req, ESTALE);
}

/* Reply with the new name's entry (looked up through the cache); made:
 * what the request put there, where it knows (NULL: not known). */
static void reply_made(fuse_req_t req, struct dref *r, const char *name,
		       bool isdir, const struct stat *made)
{
	struct fuse_entry_param e;
	struct dnode *n;
	int err;

	entry_init(&e);
	err = lookup_in(r->n, r->dd, name, &e, &n);
	if (err) {
		rollback(req, r, name, isdir, err, made);
		return reply_errno(req, err);
	}
	if (made && !is_made(made, n))
		return reply_swapped(req, r, name, n);
	if (fuse_reply_entry(req, &e) != 0)
		node_forget(n, 1);
}

/* ---- making names ------------------------------------------------------ */

/* tests/test_security.sh widens the window between a create (or a link)
 * and the look at its name: DCFS_TEST_CREATE_PAUSE_MS, read once at start */
static unsigned create_pause_ms;

void ops_names_init(void)
{
	const char *v = getenv("DCFS_TEST_CREATE_PAUSE_MS");

	create_pause_ms = v ? (unsigned)strtoul(v, NULL, 10) % 10000 : 0;
}

/*
 * A regular file is made by an exclusive open, as CREATE makes one, so
 * that its descriptor says what was made: the answer is checked against
 * it.  mkdirat, symlinkat and mknodat of the other types leave nothing
 * to check by; the kernel opens none of those.
 */
static int make_regular(int dfd, const char *name, mode_t mode, struct stat *made)
{
	int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			O_CLOEXEC, mode & 07777);

	if (fd < 0)
		return -1;
	if (fstat(fd, made) < 0) {
		int err = errno;

		close(fd);
		unlinkat(dfd, name, 0);	/* as the caller: what it just made */
		errno = err;
		return -1;
	}
	close(fd);
	return 0;
}

static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev, const char *link)
{
	struct dref r;
	struct stat made;
	bool regular = !link && S_ISREG(mode);
	int res, err = names_begin(ino_node(parent), &r);
	struct caller cr;

	if (!err)
		err = caller_begin(req, &cr, CR_GROUPS | CR_UMASK);
	if (!err) {
		if (link)
			res = symlinkat(link, r.fd, name);
		else if (S_ISDIR(mode))
			res = mkdirat(r.fd, name, mode & 07777);
		else if (regular)
			res = make_regular(r.fd, name, mode, &made);
		else
			res = mknodat(r.fd, name, mode, rdev);
		err = res < 0 ? errno : 0;
		caller_end(&cr);
	}
	if (err) {
		reply_errno(req, err);
	} else {
		if (create_pause_ms)
			usleep(create_pause_ms * 1000u);
		announce(&r, name, link);
		reply_made(req, &r, name, S_ISDIR(mode), regular ? &made : NULL);
	}
	names_end(&r);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
	      mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL);
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
	      mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL);
}

void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		const char *name)
{
	make_node(req, parent, name, S_IFLNK | 0777, 0, link);
}

/* ---- another name for a node ------------------------------------------- */

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

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
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
	if (create_pause_ms)
		usleep(create_pause_ms * 1000u);
	res = fstat(fd, &st);
	node_fd_done();
	if (res == 0 && !still_made(r.fd, newname, &st)) {
		/* renamed over since: the cache must not be told it is n */
		CTR_ADD(stale, 1);
		dc_invalidate_name(dcfs.cache, r.dd, newname);
		reply_errno(req, ESTALE);
		names_end(&r);
		return;
	}
	if (res == 0) {
		backend_inode(&in, &st, n);
		node_ref(n);		/* the new entry's */
		told(dc_link(dcfs.cache, r.dd, newname, &in), n, r.dd, newname);
	} else {
		dc_invalidate_name(dcfs.cache, r.dd, newname);
	}
	reply_made(req, &r, newname, false, res == 0 ? &st : NULL);
	names_end(&r);
}

/* ---- removing and moving names ------------------------------------------ */

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

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, 0);
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
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

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
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

/* ---- creating a file --------------------------------------------------- */

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
	/* not O_APPEND: a handle made of it takes positional writes too (a
	 * shared mapping's, a descriptor whose O_APPEND was taken off), and
	 * each write says whether it appends (op_write); nor O_DIRECT (see
	 * op_open) */
	fd = openat(r->fd, name, (flags & ~(O_NOFOLLOW | O_APPEND | O_DIRECT)) |
		    O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	caller_end(&cr);
	if (fd < 0 && errno == EEXIST && !(flags & O_EXCL)) {
		CTR_ADD(stale, 1);
		dc_invalidate_name(dcfs.cache, r->dd, name);
		errno = ESTALE;
	}
	return fd;
}

/*
 * Whether n is the file fd was created as.  Between the create and the
 * look at its name (announce, lookup_in) a rename may put another file
 * there; a reply with that file's node would give the caller an open
 * file the kernel takes for the caller's own new one, which it opens
 * with no check of its mode.
 */
static bool is_created(int fd, const struct dnode *n)
{
	struct stat st;

	return fstat(fd, &st) == 0 && is_made(&st, n);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
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
	if (create_pause_ms)
		usleep(create_pause_ms * 1000u);
	announce(&r, name, NULL);
	entry_init(&e);
	err = lookup_in(r.n, r.dd, name, &e, &n);
	if (err) {
		struct stat made;

		if (fstat(fd, &made) == 0)
			rollback(req, &r, name, false, err, &made);
		close(fd);
		reply_errno(req, err);
		goto out;
	}
	if (!is_created(fd, n)) {
		/* the kernel opens what it finds there with every check */
		close(fd);
		reply_swapped(req, &r, name, n);
		goto out;
	}
	if (!dcfs.open_requests) {
		/* handle-less: the kernel sends no RELEASE once an OPEN was
		 * refused (fuse_file_put skips it while no_open is set), so a
		 * handle kept here would never be closed.  The file's reads
		 * and writes go to the node's descriptors like any other's;
		 * a writable one made here is the node's for writes, as a
		 * daemon that is not root may not open the file again for
		 * writing (created read-only, as git makes its objects).
		 * Not one with O_SYNC or O_DSYNC, which F_SETFL cannot drop,
		 * and which every later write would pay. */
		int acc = fi->flags & O_ACCMODE;

		if ((acc == O_WRONLY || acc == O_RDWR) && !(fi->flags & O_DSYNC) &&
		    fcntl(fd, F_SETFL, 0) == 0) {
			/* past the descriptor budget only for this request:
			 * the writes after open the file again */
			node_io_keep(n, true, fd);
			node_io_done();
		} else {
			close(fd);
		}
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
