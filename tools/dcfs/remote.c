// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * remote.c - dcfs over an NFS export: "dcfs nfs://HOST/EXPORT MOUNTPOINT".
 *
 * The same split as over a host directory (dcfs.h): names live in
 * libdcache, whose backend is tools/nfs's (one LOOKUP per miss, entries
 * revalidated against their directory's attributes when their TTL ran
 * out); everything else is one NFSv3 RPC through nfsio.c, by file handle.
 *
 * Nodes and the attributes seen of them are remote_node.c's.  A lookup
 * in a directory whose entry the cache forgot is the server's answer
 * (libdcache caches nothing below such a directory), by the directory's
 * handle, so that a lookup relative to it (a working directory) is
 * answered as the path's would be; the node gets a new entry when the
 * kernel next looks the directory's own name up.
 *
 * Coherence, as Linux's NFS client (docs/dcfs.md, "Over NFS"): the kernel
 * keeps names for --entry-timeout and attributes for --attr-timeout; the
 * cache keeps answers for --ttl (negative ones for --neg-ttl), then asks
 * the server whether the directory changed (one GETATTR, none while its
 * attributes are trusted: --acdir after they were seen, up to --acdirmax
 * for a directory long unchanged) and looks the name up again only if
 * it did; attributes answer for --ac, up to --acregmax likewise.  Close-to-open: open asks for the file's attributes, and the
 * kernel's pages of it are kept only if the file did not change since;
 * data written is committed on close (flush) and fsync, and a server that
 * restarted in between (another write verifier) makes them fail with EIO.
 *
 * Credentials: the kernel checks permissions against the attributes
 * (default_permissions); calls that make, remove, rename or link names or
 * change attributes go to the server as the caller (AUTH_UNIX: uid, gid,
 * groups), so it owns what it makes and the server checks as well; the
 * cache's own lookups, reads and writes of opened files go as root, as
 * the kernel checked them at open.  The export must not squash root.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "remote_fs.h"

/* ---- replies ---------------------------------------------------------------- */

/* The caller of req, as AUTH_UNIX carries it; a wait the server asks
 * for (a grace period) ends should the caller be killed meanwhile. */
struct rcred {
	struct dcnfs_cred c;
	uint32_t groups[GROUPS_MAX];
};

static const struct dcnfs_cred *caller(fuse_req_t req, struct rcred *rc)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	gid_t g[GROUPS_MAX];
	int i, n = fuse_req_getgroups(req, GROUPS_MAX, g);

	rc->c.uid = ctx->uid;
	rc->c.gid = ctx->gid;
	rc->c.pid = ctx->pid;
	rc->c.ngroups = 0;
	for (i = 0; i < n && i < GROUPS_MAX; i++)
		rc->groups[rc->c.ngroups++] = g[i];
	rc->c.groups = rc->groups;
	return &rc->c;
}

static void reply_entry(fuse_req_t req, struct rnode *n, const struct stat *st)
{
	struct fuse_entry_param e;

	memset(&e, 0, sizeof(e));
	e.ino = rnode_id(n);
	e.attr = *st;
	e.attr_timeout = rs.attr_timeout;
	e.entry_timeout = rs.entry_timeout;
	if (fuse_reply_entry(req, &e) == -ENOENT)	/* the request was interrupted */
		rnode_forget(n, 1);
}

/* ---- names ------------------------------------------------------------------ */

/*
 * Did the server refuse a change outright, so that nothing changed and
 * what the cache holds is still true (a permission, a name taken, a
 * directory not empty...)?  Not EIO or a transport's error, which may
 * hide one that was done, nor ENOENT, ESTALE, ENOTDIR or EISDIR, which
 * may say the cache holds a name another client removed or replaced.
 */
static bool refused(int err)
{
	switch (err) {
	case EACCES: case EPERM: case EEXIST: case ENOTEMPTY: case EINVAL:
	case EXDEV: case ENAMETOOLONG: case EROFS: case EMLINK: case ENOSPC:
	case EDQUOT: case EBUSY:
		return true;
	}
	return false;
}

/* A lookup that found nothing (err, an errno): ENOENT as a negative
 * entry the kernel keeps for the negative timeout, when there is one. */
static void reply_lookup_err(fuse_req_t req, int err)
{
	struct fuse_entry_param e = { .entry_timeout = rs.neg_timeout };

	if (err == ENOENT && rs.neg_timeout > 0)
		fuse_reply_entry(req, &e);
	else
		fuse_reply_err(req, err);
}

/* --name-cache off: the kernel's lookup is one LOOKUP RPC, as a client
 * without a name cache sends (the baseline the cache is measured by). */
static void lookup_uncached(fuse_req_t req, struct rnode *p, const char *name)
{
	int64_t ms = rs_now_ms();
	uint64_t gen = rattr_gen();
	struct dcnfs_fh fh;
	struct stat st;
	struct rnode *n;
	int err = S_ISDIR(p->type) ? -dcnfs_lookup(&rs.be, NULL, &p->fh, name,
						   &fh, &st) : ENOTDIR;

	if (err) {
		reply_lookup_err(req, err);
		return;
	}
	n = rnode_get_st(&st, &fh, NULL);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rattr_store(n, &st, ms, gen);
	reply_entry(req, n, &st);
}

static void r_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct dc_dentry *dir, *d;
	struct stat st, seed;
	struct dcnfs_fh fh;
	struct dc_inode in;
	int64_t seen;
	struct rnode *n;
	int err;

	if (rs.no_names) {
		lookup_uncached(req, rnode_of(parent), name);
		return;
	}
	err = rnode_dentry(rnode_of(parent), &dir);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	/* in a directory whose entry the cache forgot, the server's answer
	 * (nothing is cached below it): the node gets a new entry when the
	 * kernel next looks the directory's own name up */
	err = -dc_lookup(rs.cache, dir, name, strlen(name), &d);
	dc_put(rs.cache, dir);
	if (err) {
		reply_lookup_err(req, err);
		return;
	}
	err = -dc_dentry_stat(d, &in);
	if (!err)
		err = -dcnfs_inode_fh(&in, &fh);
	if (err) {
		dc_put(rs.cache, d);
		fuse_reply_err(req, err);
		return;
	}
	/* while d is held: its cookie is the backend's until released */
	if (dcnfs_inode_stat(&rs.be, &in, &seed, &seen))
		seen = 0;
	n = rnode_get(in.gen, in.ino, in.mode, &fh, d);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* a hit costs no RPC while its attributes are trusted, nor a
	 * miss: its LOOKUP's reply carried them */
	err = -rattr_of_entry(n, &seed, seen, &st);
	if (err) {
		rnode_forget(n, 1);
		fuse_reply_err(req, err);
		return;
	}
	reply_entry(req, n, &st);
}

static void r_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	rnode_forget(rnode_of(ino), nlookup);
	fuse_reply_none(req);
}

static void r_forget_multi(fuse_req_t req, size_t count,
			   struct fuse_forget_data *forgets)
{
	size_t i;

	for (i = 0; i < count; i++)
		rnode_forget(rnode_of(forgets[i].ino), forgets[i].nlookup);
	fuse_reply_none(req);
}

/* The directory entry d, of a directory just made: is it the inode with
 * handle fh (and not one another client put under the name since)? */
static bool entry_is(struct dc_dentry *d, const struct dcnfs_fh *fh)
{
	struct dcnfs_fh found;
	struct dc_inode in;

	return !dc_dentry_stat(d, &in) && !dcnfs_inode_fh(&in, &found) &&
	       rnode_same_fh(&found, fh);
}

/*
 * name appeared in parent (handle fh, attributes st, from an RPC sent at
 * ms): the cache forgets what it held for the name, and a directory's
 * node gets its entry (one lookup, through the cache).  Replies with the
 * new node's entry, and for a create (fi) its open file.
 */
static void made(fuse_req_t req, struct rnode *parent, const char *name,
		 const struct dcnfs_fh *fh, const struct stat *st, int64_t ms,
		 struct fuse_file_info *fi)
{
	struct dc_dentry *dir, *d = NULL;
	struct fuse_entry_param e;
	struct rnode *n;

	if (!rnode_dentry(parent, &dir)) {
		dc_invalidate_name(rs.cache, dir, name);
		if (S_ISDIR(st->st_mode) &&
		    !dc_lookup(rs.cache, dir, name, strlen(name), &d) &&
		    !entry_is(d, fh)) {
			dc_put(rs.cache, d);
			d = NULL;	/* found at its first lookup instead */
		}
		dc_put(rs.cache, dir);
	}
	n = rnode_get_st(st, fh, d);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rattr_store(n, st, ms, rattr_gen());
	if (!fi) {
		reply_entry(req, n, st);
		return;
	}
	memset(&e, 0, sizeof(e));
	e.ino = rnode_id(n);
	e.attr = *st;
	e.attr_timeout = rs.attr_timeout;
	e.entry_timeout = rs.entry_timeout;
	rnode_opened(n);
	fi->fh = (uint64_t)(fi->flags & O_ACCMODE);	/* for r_flush */
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		/* interrupted: no release will come */
		rnode_closed(n);
		rnode_forget(n, 1);
	}
}

/*
 * Does cr have access mask (4 read, 2 write) to an inode of attributes
 * st, by its mode bits, as the kernel's generic_permission checks them
 * (no ACLs: NFSv3 carries none)?  Root reads and writes anything.
 */
static bool may_access(const struct stat *st, const struct dcnfs_cred *cr,
		       unsigned mask)
{
	mode_t m = st->st_mode;
	uint32_t i;

	if (cr->uid == 0)
		return true;
	if (cr->uid == st->st_uid) {
		m >>= 6;
	} else {
		bool group = cr->gid == st->st_gid;

		for (i = 0; !group && i < cr->ngroups; i++)
			group = cr->groups[i] == st->st_gid;
		if (group)
			m >>= 3;
	}
	return (m & mask) == mask;
}

/*
 * O_CREAT without O_EXCL of a name the server has though the kernel did
 * not know it (another client made it): open that file, as open(2)
 * would, checking the caller's access and truncating for O_TRUNC.  Its
 * handle and attributes into *fh and *st; 0 or an errno.
 */
static int open_existing(struct rnode *p, const char *name, int flags,
			 const struct dcnfs_cred *cr, struct dcnfs_fh *fh,
			 struct stat *st)
{
	unsigned mask = (flags & O_ACCMODE) == O_RDONLY ? 4 :
			(flags & O_ACCMODE) == O_WRONLY ? 2 : 6;
	struct stat want = { .st_size = 0 };
	int err = -dcnfs_lookup(&rs.be, NULL, &p->fh, name, fh, st);

	if (err)
		return err;
	if (S_ISDIR(st->st_mode))
		return EISDIR;
	if (!S_ISREG(st->st_mode))
		return EEXIST;	/* a create of a name another type holds */
	if (flags & O_TRUNC)
		mask |= 2;
	if (!may_access(st, cr, mask))
		return EACCES;
	if (flags & O_TRUNC)
		err = -dcnfs_setattr(&rs.be, cr, fh, &want, DCNFS_SET_SIZE, st);
	return err;
}

static void make(fuse_req_t req, fuse_ino_t parent, const char *name,
		 mode_t mode, dev_t rdev, const char *target,
		 struct fuse_file_info *fi)
{
	struct rnode *p = rnode_of(parent);
	const struct dcnfs_cred *cr;
	struct dcnfs_fh fh;
	int64_t ms = rs_now_ms();
	struct rcred rc;
	struct stat st;
	int err, tries;

	cr = caller(req, &rc);
	/* GUARDED: an UNCHECKED CREATE would open a file another client
	 * made, unchecked, as this caller's own */
	for (tries = 0; tries < 2; tries++) {
		err = -dcnfs_make(&rs.be, cr, &p->fh, name, mode, 1, rdev,
				  target, &fh, &st);
		if (err != EEXIST || !fi || (fi->flags & O_EXCL))
			break;
		err = open_existing(p, name, fi->flags, cr, &fh, &st);
		if (err != ENOENT)
			break;	/* ENOENT: removed between: create it again */
	}
	rattr_changed();		/* the parent's times and link count */
	rdir_changed(p);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	made(req, p, name, &fh, &st, ms, fi);
}

static void r_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode, dev_t rdev)
{
	make(req, parent, name, mode, rdev, NULL, NULL);
}

static void r_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		    mode_t mode)
{
	make(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL, NULL);
}

static void r_symlink(fuse_req_t req, const char *target, fuse_ino_t parent,
		      const char *name)
{
	make(req, parent, name, S_IFLNK | 0777, 0, target, NULL);
}

static void r_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, struct fuse_file_info *fi)
{
	make(req, parent, name, S_IFREG | (mode & 07777), 0, NULL, fi);
}

/* The handle and identity of what name in p names: the cache's answer,
 * else the server's (a directory without a cache entry, or a cache that
 * does not know the name yet).  0 or an errno. */
static int name_fh(struct rnode *p, const char *name, struct dcnfs_fh *fh,
		   uint64_t *dev, uint64_t *ino, uint32_t *mode)
{
	struct dc_dentry *dir, *d;
	struct dc_inode in;
	struct stat st;
	int err = rnode_dentry(p, &dir);

	if (!err) {
		err = -dc_lookup(rs.cache, dir, name, strlen(name), &d);
		dc_put(rs.cache, dir);
		if (!err) {
			err = -dc_dentry_stat(d, &in);
			if (!err)
				err = -dcnfs_inode_fh(&in, fh);
			dc_put(rs.cache, d);
		}
		if (!err) {
			*dev = in.gen;
			*ino = in.ino;
			*mode = in.mode;
			return 0;
		}
	}
	err = -dcnfs_lookup(&rs.be, NULL, &p->fh, name, fh, &st);
	if (err)
		return err;
	*dev = (uint64_t)st.st_dev;
	*ino = st.st_ino;
	*mode = st.st_mode;
	return 0;
}

/*
 * The node of an open file named name in p, pinned as one more open file
 * (rnode_closed unpins), so that it cannot close unseen between here and
 * its hidden name, and claimed for that name (silly: unlink_open gives
 * it, or takes the claim back); NULL if none, if it has or is getting a
 * hidden name already (which keeps the inode), or if it is unless's.
 * Whether it has other names is not asked: two unlinks of two of its
 * names at once would both see the other and remove both.
 */
static struct rnode *open_node(struct rnode *p, const char *name,
			       const struct dcnfs_fh *unless)
{
	struct dcnfs_fh fh;
	struct rnode *n;
	uint64_t dev, ino;
	uint32_t mode;

	if (name_fh(p, name, &fh, &dev, &ino, &mode) || S_ISDIR(mode) ||
	    (unless && rnode_same_fh(unless, &fh)))
		return NULL;
	pthread_mutex_lock(&rs.nodes_lock);
	for (n = rs.buckets[rnode_bucket(dev, ino)]; n; n = n->hnext)
		if (n->ino == ino && n->dev == dev && rnode_same_fh(&n->fh, &fh))
			break;
	if (n && (!n->opens || n->silly))
		n = NULL;
	if (n) {
		n->opens++;
		n->silly = true;
	}
	pthread_mutex_unlock(&rs.nodes_lock);
	return n;
}

/*
 * Unlink name, a name of n, a file open here: as NFS clients do, it is
 * renamed to a hidden name instead (were it the last, the server would
 * forget the inode, and reads of the open file would answer ESTALE),
 * removed at the last release.  n as open_node left it (pinned and
 * claimed); a failed RENAME takes the claim back.  0 or an errno.
 */
static int unlink_open(struct rnode *p, const char *name, struct rnode *n,
		       const struct dcnfs_cred *cr)
{
	static uint64_t seq;
	char silly[sizeof(n->silly_name)];
	struct dc_dentry *at;
	int err;

	snprintf(silly, sizeof(silly), ".dcfs-silly.%" PRIx64 ".%" PRIx64, n->ino,
		 __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	err = -dcnfs_rename(&rs.be, cr, &p->fh, name, &p->fh, silly);
	if (err && !refused(err)) {
		/* EIO may hide a RENAME that was done: the hidden name, if
		 * there, is n's, and goes at its last close like any */
		struct dcnfs_fh fh;
		struct stat st;

		if (!dcnfs_lookup(&rs.be, NULL, &p->fh, silly, &fh, &st) &&
		    rnode_same_fh(&fh, &n->fh))
			err = 0;
	}
	if (!err && !rnode_dentry(p, &at)) {
		/* a name made here: the cache may hold it absent */
		dc_invalidate_name(rs.cache, at, silly);
		dc_put(rs.cache, at);
	}
	pthread_mutex_lock(&rs.nodes_lock);
	if (err) {
		n->silly = false;
	} else {
		/* p held until the name goes (rnode_unhid), to tell its
		 * entry, whichever it has then */
		p->nlookup++;
		n->silly_dir = p->fh;
		n->silly_at = p;
		memcpy(n->silly_name, silly, sizeof(silly));
	}
	pthread_mutex_unlock(&rs.nodes_lock);
	return err;
}

/*
 * A RENAME over name in p failed after unlink_open hid n, the file it
 * would have replaced: name goes back to n, so that the failed rename
 * changed nothing, as rename(2) promises.  Only while the server says
 * name is absent: an error such as EIO may hide a RENAME that was done
 * (name is then the source), and another client may have made name
 * since.  Otherwise n keeps its hidden name, which goes at its last
 * close.  n is pinned by the caller.  Sent even should the caller be
 * killed meanwhile (the cred's pid left out): the name is not its alone.
 * Whether name is n's again.
 */
static bool unhide(struct rnode *p, const char *name, struct rnode *n,
		   const struct dcnfs_cred *caller_cr)
{
	struct dcnfs_cred cr = *caller_cr;
	char silly[sizeof(n->silly_name)];
	struct rnode *at;
	struct dcnfs_fh fh;
	struct stat st;

	cr.pid = 0;
	if (dcnfs_lookup(&rs.be, NULL, &p->fh, name, &fh, &st) != -ENOENT)
		return false;
	pthread_mutex_lock(&rs.nodes_lock);
	memcpy(silly, n->silly_name, sizeof(silly));
	pthread_mutex_unlock(&rs.nodes_lock);
	if (dcnfs_rename(&rs.be, &cr, &p->fh, silly, &p->fh, name)) {
		syslog(LOG_WARNING, "dcfs: a failed rename could not give %s "
		       "back its name; it goes at its last close", silly);
		return false;
	}
	pthread_mutex_lock(&rs.nodes_lock);
	n->silly = false;
	at = n->silly_at;
	n->silly_at = NULL;
	pthread_mutex_unlock(&rs.nodes_lock);
	if (at)
		rnode_unhid(at, silly);
	return true;
}

static void r_remove(fuse_req_t req, fuse_ino_t parent, const char *name,
		     int is_dir)
{
	struct rnode *p = rnode_of(parent), *n = NULL;
	const struct dcnfs_cred *cr;
	struct dc_dentry *dir;
	struct rcred rc;
	int err;

	cr = caller(req, &rc);
	if (!is_dir)
		n = open_node(p, name, NULL);
	if (n) {
		err = unlink_open(p, name, n, cr);
		rnode_closed(n);	/* closed meanwhile: the hidden name goes now */
	} else {
		err = -dcnfs_remove(&rs.be, cr, &p->fh, name, is_dir);
	}
	rattr_changed();		/* the inode's link count, the parent's times */
	rdir_changed(p);

	/* the cache hears of it unless the server refused it: EIO may hide
	 * a done REMOVE, and forgetting the name is never wrong (but a
	 * directory's forgotten entry is its node's, uncached from then on) */
	if (!refused(err) && !rnode_dentry(p, &dir)) {
		if (err || (is_dir ? dc_rmdir(rs.cache, dir, name) :
				     dc_unlink(rs.cache, dir, name)))
			dc_invalidate_name(rs.cache, dir, name);
		dc_put(rs.cache, dir);
	}
	fuse_reply_err(req, err);
}

static void r_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	r_remove(req, parent, name, 0);
}

static void r_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	r_remove(req, parent, name, 1);
}

/*
 * RENAME_NOREPLACE, which NFSv3 cannot say: is name absent from directory
 * node p on the server (0, or EEXIST)?  The kernel holds both directories
 * locked, so nothing through this mount comes between the LOOKUP and the
 * RENAME; a second client's create of the name may (docs/dcfs.md).
 */
static int absent_on_server(struct rnode *p, const char *name)
{
	struct dcnfs_fh fh;
	struct stat st;
	int err = -dcnfs_lookup(&rs.be, NULL, &p->fh, name, &fh, &st);

	return err == ENOENT ? 0 : err ? err : EEXIST;
}

static void r_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		     fuse_ino_t newparent, const char *newname,
		     unsigned int flags)
{
	struct rnode *op = rnode_of(parent), *np = rnode_of(newparent), *t = NULL;
	struct dc_dentry *od = NULL, *nd = NULL;
	const struct dcnfs_cred *cr;
	struct dcnfs_fh sfh;
	struct rcred rc;
	uint64_t dev, ino;
	uint32_t mode;
	bool kept = true;	/* newname still names what it named */
	int err;

	if (flags & ~RENAME_NOREPLACE) {	/* NFSv3 cannot exchange */
		fuse_reply_err(req, EINVAL);
		return;
	}
	err = flags ? absent_on_server(np, newname) : 0;
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	cr = caller(req, &rc);
	/* a file open here that the rename would replace keeps a hidden name
	 * (r_remove), unless it is the source itself (then nothing changes)
	 * or the source is a directory (which cannot replace a file); it
	 * stays pinned across the RENAME, so that a failed one can give the
	 * name back before a last close removes the file */
	if (!flags && !name_fh(op, name, &sfh, &dev, &ino, &mode) &&
	    !S_ISDIR(mode) && (t = open_node(np, newname, &sfh))) {
		err = unlink_open(np, newname, t, cr);
		if (err) {
			rnode_closed(t);
			goto told;
		}
	}
	err = -dcnfs_rename(&rs.be, cr, &op->fh, name, &np->fh, newname);
	if (t) {
		if (err)
			kept = unhide(np, newname, t, cr);
		rnode_closed(t);	/* closed meanwhile: the hidden name goes now */
	}
told:
	rattr_changed();		/* a replaced inode's link count, the parents' */
	rdir_changed(op);
	rdir_changed(np);
	if (rnode_dentry(op, &od))
		od = NULL;
	if (rnode_dentry(np, &nd))
		nd = NULL;
	/* the cache moves what it holds, or forgets both names (an error
	 * other than a refusal may hide a done RENAME, and a target hidden
	 * and not given its name back is gone from it; either side may be
	 * unknown to the cache) */
	if (refused(err) && kept)
		;
	else if (err || !od || !nd || dc_rename(rs.cache, od, name, nd, newname, 0)) {
		if (od)
			dc_invalidate_name(rs.cache, od, name);
		if (nd)
			dc_invalidate_name(rs.cache, nd, newname);
	}
	if (od)
		dc_put(rs.cache, od);
	if (nd)
		dc_put(rs.cache, nd);
	fuse_reply_err(req, err);
}

static void r_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		   const char *newname)
{
	struct rnode *n = rnode_of(ino), *p = rnode_of(newparent);
	int64_t ms = rs_now_ms();
	struct dc_dentry *dir;
	struct rcred rc;
	struct stat st;
	int err = -dcnfs_link(&rs.be, caller(req, &rc), &n->fh, &p->fh, newname,
			      &st);

	rattr_changed();		/* the parent's times */
	rdir_changed(p);

	if (!rnode_dentry(p, &dir)) {
		dc_invalidate_name(rs.cache, dir, newname);
		dc_put(rs.cache, dir);
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	n = rnode_get_st(&st, &n->fh, NULL);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rattr_store(n, &st, ms, rattr_gen());
	reply_entry(req, n, &st);
}

static void r_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX];
	int err = dcnfs_readlink(&rs.be, &rnode_of(ino)->fh, buf, sizeof(buf));

	if (err < 0)
		fuse_reply_err(req, -err);
	else
		fuse_reply_readlink(req, buf);
}

/* ---- attributes ---------------------------------------------------------------- */

static void r_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;
	int err = -rattr_get(rnode_of(ino), &st);

	(void)fi;
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fuse_reply_attr(req, &st, rs.attr_timeout);
}

static unsigned set_bits(int to_set)
{
	unsigned what = 0;

	if (to_set & FUSE_SET_ATTR_MODE)
		what |= DCNFS_SET_MODE;
	if (to_set & FUSE_SET_ATTR_UID)
		what |= DCNFS_SET_UID;
	if (to_set & FUSE_SET_ATTR_GID)
		what |= DCNFS_SET_GID;
	if (to_set & FUSE_SET_ATTR_SIZE)
		what |= DCNFS_SET_SIZE;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		what |= DCNFS_SET_ATIME_NOW;
	else if (to_set & FUSE_SET_ATTR_ATIME)
		what |= DCNFS_SET_ATIME;
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		what |= DCNFS_SET_MTIME_NOW;
	else if (to_set & FUSE_SET_ATTR_MTIME)
		what |= DCNFS_SET_MTIME;
	return what;
}

/*
 * Does mode only drop n's set-user-ID or set-group-ID bits?  The kernel
 * asks so after a write by someone without CAP_FSETID (alone), or with a
 * truncate's new size, which the server would refuse from anyone but the
 * owner; it is done as root (the kernel itself does it so on local file
 * systems), once the rest was done as the caller.
 */
static bool kills_setid(struct rnode *n, mode_t mode)
{
	struct stat now;

	if (dcnfs_getattr(&rs.be, NULL, &n->fh, &now))
		return false;
	return (now.st_mode & (S_ISUID | S_ISGID)) &&
	       (now.st_mode & 07777 & ~(mode_t)(S_ISUID | S_ISGID)) == (mode & 07777);
}

static void r_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		      int to_set, struct fuse_file_info *fi)
{
	struct rnode *n = rnode_of(ino);
	const struct dcnfs_cred *cr;
	struct rcred rc;
	struct stat st;
	int err, rest;
	bool kill;

	(void)fi;
	cr = caller(req, &rc);
	kill = (to_set & FUSE_SET_ATTR_MODE) &&
	       !(to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) && cr->uid &&
	       kills_setid(n, attr->st_mode);
	/* the rest as the caller, then, if it was done, the set-id bits
	 * dropped as root */
	rest = kill ? to_set & ~FUSE_SET_ATTR_MODE : to_set;
	err = 0;
	if (set_bits(rest) || !kill)
		err = -dcnfs_setattr(&rs.be, cr, &n->fh, attr, set_bits(rest), &st);
	if (!err && kill)
		err = -dcnfs_setattr(&rs.be, NULL, &n->fh, attr, DCNFS_SET_MODE, &st);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))
		/* the cache holds permission bits and owners */
		dc_invalidate_inode(rs.cache, st.st_ino, (uint32_t)st.st_dev);
	/* the backend's attributes of it are older now: the next ask is an
	 * RPC (rattr_stale), and a node made after this one is freed
	 * takes none of them (remote_node.c, unhash_unused) */
	rattr_stale(n);
	fuse_reply_attr(req, &st, rs.attr_timeout);
}

static void r_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs st;
	int err = -dcnfs_statfs(&rs.be, &rnode_of(ino)->fh, &st);

	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &st);
}

/* ---- data ------------------------------------------------------------------------ */

/* open's O_TRUNC (libfuse asks the kernel to pass it on): the file's
 * size to 0 as the caller, its attributes after into *st. */
static int trunc_open(fuse_req_t req, struct rnode *n, struct stat *st)
{
	struct stat want = { .st_size = 0 };
	struct rcred rc;

	return -dcnfs_setattr(&rs.be, caller(req, &rc), &n->fh, &want,
			      DCNFS_SET_SIZE, st);
}

static void r_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rnode *n = rnode_of(ino);
	int64_t ms = rs_now_ms();
	uint64_t gen = rattr_gen();
	struct stat st;
	bool same;
	int err;

	/* open before the first RPC: an unlink meanwhile (which an open
	 * does not keep out) must find it open and hide the name */
	rnode_opened(n);
	/* close-to-open: the attributes now, from the server */
	if (fi->flags & O_TRUNC)
		err = trunc_open(req, n, &st);
	else
		err = -dcnfs_getattr(&rs.be, NULL, &n->fh, &st);
	if (err) {
		rnode_closed(n);
		fuse_reply_err(req, err);
		return;
	}
	if (fi->flags & O_TRUNC)
		rattr_stale(n);	/* as a write */
	else
		rattr_store(n, &st, ms, gen);
	/* the kernel's pages only while the file is as when we last saw it */
	pthread_mutex_lock(&rs.nodes_lock);
	same = !(fi->flags & O_TRUNC) &&
	       n->mtime.tv_sec == st.st_mtim.tv_sec &&
	       n->mtime.tv_nsec == st.st_mtim.tv_nsec &&
	       n->ctime.tv_sec == st.st_ctim.tv_sec &&
	       n->ctime.tv_nsec == st.st_ctim.tv_nsec && n->size == st.st_size;
	rnode_seen_locked(n, &st);
	pthread_mutex_unlock(&rs.nodes_lock);
	/* the kernel's size of the file may be --attr-timeout old: it asks
	 * again before reading (auto_inval_data).  Only attributes (offset
	 * -1): no page lock, nothing a request may hold */
	if (!same)
		fuse_lowlevel_notify_inval_inode(rs.se, ino, -1, 0);
	fi->keep_cache = same;
	fi->fh = (uint64_t)(fi->flags & O_ACCMODE);	/* for r_flush */
	if (fuse_reply_open(req, fi) == -ENOENT) {
		/* the kernel kept its pages: the next open must not */
		pthread_mutex_lock(&rs.nodes_lock);
		n->mtime.tv_nsec = -1;
		pthread_mutex_unlock(&rs.nodes_lock);
		rnode_closed(n);
	}
}

static void r_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	char *buf = malloc(size ? size : 1);
	ssize_t got;

	(void)fi;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	got = dcnfs_read(&rs.be, NULL, &rnode_of(ino)->fh, buf, size, (uint64_t)off);
	if (got < 0)
		fuse_reply_err(req, (int)-got);
	else
		fuse_reply_buf(req, buf, (size_t)got);
	free(buf);
}

/*
 * n holds data not committed, written under verifier verf: a second
 * verifier before a commit means the server restarted between the writes
 * and may have lost the first.  The lost mark stays until a commit said
 * so and a write finds nothing left to commit (fresh).  nodes_lock held.
 */
static void dirty_locked(struct rnode *n, uint64_t verf, bool fresh)
{
	if (fresh && !n->dirty)
		n->lost = false;
	if (n->dirty && n->verf != verf)
		n->lost = true;
	n->verf = verf;
	n->dirty = true;
}

static void r_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	struct rnode *n = rnode_of(ino);
	uint64_t verf;
	bool mixed;
	ssize_t done = dcnfs_write(&rs.be, NULL, &n->fh, buf, size,
				   (uint64_t)off, &verf, &mixed);

	(void)fi;
	rattr_stale(n);		/* its size and times, even on failure */
	if (done < 0) {
		fuse_reply_err(req, (int)-done);
		return;
	}
	pthread_mutex_lock(&rs.nodes_lock);
	dirty_locked(n, verf, true);
	if (mixed)
		n->lost = true;
	pthread_mutex_unlock(&rs.nodes_lock);
	fuse_reply_write(req, (size_t)done);
}

/* Commit what was written to the node of ino through any of its open
 * files: 0, or an errno (EIO: the server lost some).  One COMMIT of a
 * node at a time: a flush or fsync that came during another's waits for
 * its answer, which may be that the data it covers was lost. */
static int commit(fuse_ino_t ino)
{
	struct rnode *n = rnode_of(ino);
	uint64_t verf = 0, want;
	bool dirty, lost;
	int err;

	pthread_mutex_lock(&rs.nodes_lock);
	while (n->committing)
		pthread_cond_wait(&rs.commit_done, &rs.nodes_lock);
	dirty = n->dirty;
	want = n->verf;
	lost = n->lost;
	n->dirty = false;
	n->committing = dirty;
	pthread_mutex_unlock(&rs.nodes_lock);
	if (!dirty)
		return lost ? EIO : 0;
	err = -dcnfs_commit(&rs.be, NULL, &n->fh, &verf);
	pthread_mutex_lock(&rs.nodes_lock);
	if (err) {
		/* not committed: still to do, under the writes' verifier,
		 * and a loss not told yet still to tell (a write meanwhile
		 * found nothing to commit and cleared the mark) */
		dirty_locked(n, want, false);
		n->lost |= lost;
	} else if (verf != want) {
		n->lost = true;	/* every later flush and fsync says so too */
	}
	/* lost before (cleared meanwhile as above: this commit says so) or
	 * now */
	if (!err && (lost || n->lost))
		err = EIO;
	n->committing = false;
	pthread_cond_broadcast(&rs.commit_done);
	pthread_mutex_unlock(&rs.nodes_lock);
	return err;
}

/* A close: what the file wrote is committed, as NFS clients do, and a
 * loss said; a close of a file opened for reading alone commits nothing
 * and says nothing (Linux's client flushes only writable files).  A
 * FLUSH carries no open flags: the open's access mode is the handle. */
static void r_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, (fi->fh & O_ACCMODE) == O_RDONLY ? 0 : commit(ino));
}

static void r_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
		    struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	fuse_reply_err(req, commit(ino));
}

static void r_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	commit(ino);	/* flush said what went wrong */
	rnode_closed(rnode_of(ino));
	fuse_reply_err(req, 0);
}

/* ---- listings --------------------------------------------------------------------- */

static int keep_name(void *arg, const char *name, uint64_t ino)
{
	struct rdir *d = arg;
	size_t len = strlen(name) + 1;

	if (d->len + len > d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 4096;
		char *buf;

		while (cap < d->len + len)
			cap *= 2;
		buf = realloc(d->buf, cap);
		if (!buf)
			return -ENOMEM;
		d->buf = buf;
		d->cap = cap;
	}
	if (d->n == d->ncap) {
		size_t cap = d->ncap ? d->ncap * 2 : 64;
		uint64_t *in = realloc(d->ino, cap * sizeof(*in));

		if (!in)
			return -ENOMEM;
		d->ino = in;
		d->ncap = cap;
	}
	memcpy(d->buf + d->len, name, len);
	d->len += len;
	d->ino[d->n++] = ino;
	return 0;
}

static void rdir_free(struct rdir *d)
{
	free(d->buf);
	free(d->ino);
	free(d);
}

static void r_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct rdir *d = calloc(1, sizeof(*d));
	struct rcred rc;
	int err;

	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	err = -dcnfs_list(&rs.be, caller(req, &rc), &rnode_of(ino)->fh,
			  keep_name, d);
	if (err) {
		rdir_free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) == -ENOENT)
		rdir_free(d);
}

static void r_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		      struct fuse_file_info *fi)
{
	struct rdir *d = (struct rdir *)(uintptr_t)fi->fh;
	char *buf = malloc(size ? size : 1);
	const char *name = d->buf;
	size_t used = 0, i;

	(void)ino;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	for (i = 0; i < d->n; name += strlen(name) + 1, i++) {
		struct stat st = { .st_ino = d->ino[i] };
		size_t len;

		if ((off_t)i < off)
			continue;
		len = fuse_add_direntry(req, buf + used, size - used, name, &st,
					(off_t)i + 1);
		if (len > size - used)
			break;
		used += len;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void r_releasedir(fuse_req_t req, fuse_ino_t ino,
			 struct fuse_file_info *fi)
{
	(void)ino;
	rdir_free((struct rdir *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void r_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* the kernel clears set-id bits after a write itself, asking with a
	 * SETATTR (kills_setid): writes go to the server as root, which
	 * would keep them */
	conn->want &= ~FUSE_CAP_HANDLE_KILLPRIV;
}

const struct fuse_lowlevel_ops remote_ops = {
	.init		= r_init,
	.lookup		= r_lookup,
	.forget		= r_forget,
	.forget_multi	= r_forget_multi,
	.getattr	= r_getattr,
	.setattr	= r_setattr,
	.readlink	= r_readlink,
	.mknod		= r_mknod,
	.mkdir		= r_mkdir,
	.symlink	= r_symlink,
	.unlink		= r_unlink,
	.rmdir		= r_rmdir,
	.rename		= r_rename,
	.link		= r_link,
	.open		= r_open,
	.create		= r_create,
	.read		= r_read,
	.write		= r_write,
	.flush		= r_flush,
	.fsync		= r_fsync,
	.release	= r_release,
	.opendir	= r_opendir,
	.readdir	= r_readdir,
	.releasedir	= r_releasedir,
	.statfs		= r_statfs,
};
