// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfsio.c - the NFSv3 calls a file server needs besides names: attributes,
 * making and removing names, data, listings (nfsfs.h, "Files").
 *
 * Each is one RPC (reads and writes one per NFSFS_IO_MAX bytes) sent as
 * the caller's credential, so the server checks permissions and owns new
 * inodes as it would for that user.  The RPCs that make, remove, rename
 * or link names are not idempotent: sent with RPC_ONCE, never twice.
 * These calls keep no state: the names they change are the caller's to
 * tell its cache about (dcfs does, with the updates of dcache.h).
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "nfs/rpc.h"

#define NFSFS_IO_MAX		(1u << 20)	/* one READ or WRITE at most */
/* one NFSv4 WRITE at most: libnfs 4.0 encodes a COMPOUND into a buffer
 * of 4 KiB (its rpc_nfs4_compound_async takes no size), which holds the
 * RPC header and credential, PUTFH and WRITE's own fields besides */
#define NFSFS_IO4_WRITE_MAX	3584
#define NFSFS_LIST_BYTES	32768		/* one READDIR reply at most */

/* MKDIR3res, SYMLINK3res and MKNOD3res are CREATE3res by another name:
 * one reader takes all four. */
_Static_assert(offsetof(MKDIR3res, MKDIR3res_u.resok.obj_attributes) ==
	       offsetof(CREATE3res, CREATE3res_u.resok.obj_attributes), "MKDIR3res");
_Static_assert(offsetof(SYMLINK3res, SYMLINK3res_u.resok.obj_attributes) ==
	       offsetof(CREATE3res, CREATE3res_u.resok.obj_attributes), "SYMLINK3res");
_Static_assert(offsetof(MKNOD3res, MKNOD3res_u.resok.obj_attributes) ==
	       offsetof(CREATE3res, CREATE3res_u.resok.obj_attributes), "MKNOD3res");

static void fh_arg(nfs_fh3 *to, const struct dcnfs_fh *from)
{
	to->data.data_len = from->len;
	to->data.data_val = (char *)from->data;
}

static int fh_take(struct dcnfs_fh *to, const nfs_fh3 *from)
{
	if (from->data.data_len == 0 || from->data.data_len > sizeof(to->data))
		return -EIO;
	to->len = from->data.data_len;
	memcpy(to->data, from->data.data_val, to->len);
	return 0;
}

static int name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	return n > DC_NAME_MAX ? -ENAMETOOLONG : 0;
}

/* The server, and the handles and name a call takes, checked. */
static int args_ok(const struct dc_backend *be, struct nfsrpc **r,
		   const struct dcnfs_fh *fh, const char *name)
{
	*r = dcnfs__rpc(be);
	if (!*r || !fh || !fh->len || fh->len > sizeof(fh->data))
		return -EINVAL;
	return name ? name_ok(name) : 0;
}

/* Replies whose status is all a caller needs (every NFSv3 result
 * begins with it). */
static int take_status(void *res, void *arg)
{
	(void)arg;
	return nfs3_errno(*(nfsstat3 *)res);
}

/* ---- attributes --------------------------------------------------------- */

static int take_getattr(void *res, void *arg)
{
	GETATTR3res *r = res;
	int err = nfs3_errno(r->status);

	if (!err)
		nfs3_stat_fill(&r->GETATTR3res_u.resok.obj_attributes, arg);
	return err;
}

int dcnfs_getattr(const struct dc_backend *be, const struct dcnfs_cred *cr,
		  const struct dcnfs_fh *fh, struct stat *st)
{
	GETATTR3args a;
	struct nfsrpc *r;
	int err = args_ok(be, &r, fh, NULL);

	if (err || !st)
		return err ? err : -EINVAL;
	fh_arg(&a.object, fh);
	return nfsrpc_call(r, RK_GETATTR, cr, NFS3_GETATTR, &a, take_getattr,
			   st, 0);
}

/*
 * The credential of a call that follows a change the server made (for
 * its handle or attributes): the caller's, but not cut short should the
 * caller be killed meanwhile (dcnfs_cred.pid), or the change would be
 * done and not told.  copy is the storage.
 */
static const struct dcnfs_cred *after(const struct dcnfs_cred *cr,
				      struct dcnfs_cred *copy)
{
	if (!cr || !cr->pid)
		return cr;
	*copy = *cr;
	copy->pid = 0;
	return copy;
}

/* The attributes a reply's post_op_attr carried, else a GETATTR's. */
static int attr_after(const struct dc_backend *be, const struct dcnfs_cred *cr,
		      const struct dcnfs_fh *fh, const post_op_attr *pa,
		      int have, struct stat *st)
{
	struct dcnfs_cred c;

	if (have && pa->attributes_follow) {
		nfs3_stat_fill(&pa->post_op_attr_u.attributes, st);
		return 0;
	}
	return dcnfs_getattr(be, after(cr, &c), fh, st);
}

struct attr_out {
	post_op_attr attr;
	int have;
};

static int take_setattr(void *res, void *arg)
{
	SETATTR3res *r = res;
	struct attr_out *o = arg;
	int err = nfs3_errno(r->status);

	if (!err) {
		o->attr = r->SETATTR3res_u.resok.obj_wcc.after;
		o->have = 1;
	}
	return err;
}

static nfstime3 time3(const struct timespec *t)
{
	nfstime3 n = { .seconds = (u_int)t->tv_sec, .nseconds = (u_int)t->tv_nsec };

	return n;
}

int dcnfs_setattr(const struct dc_backend *be, const struct dcnfs_cred *cr,
		  const struct dcnfs_fh *fh, const struct stat *want,
		  unsigned what, struct stat *st)
{
	SETATTR3args a;
	struct attr_out o = { .have = 0 };
	struct nfsrpc *r;
	sattr3 *s = &a.new_attributes;
	int err = args_ok(be, &r, fh, NULL);

	if (err || !want || !st)
		return err ? err : -EINVAL;
	memset(&a, 0, sizeof(a));
	fh_arg(&a.object, fh);
	s->mode.set_it = !!(what & DCNFS_SET_MODE);
	s->mode.set_mode3_u.mode = want->st_mode & 07777;
	s->uid.set_it = !!(what & DCNFS_SET_UID);
	s->uid.set_uid3_u.uid = want->st_uid;
	s->gid.set_it = !!(what & DCNFS_SET_GID);
	s->gid.set_gid3_u.gid = want->st_gid;
	s->size.set_it = !!(what & DCNFS_SET_SIZE);
	s->size.set_size3_u.size = (uint64_t)want->st_size;
	s->atime.set_it = what & DCNFS_SET_ATIME_NOW ? SET_TO_SERVER_TIME :
			  what & DCNFS_SET_ATIME ? SET_TO_CLIENT_TIME : DONT_CHANGE;
	s->atime.set_atime_u.atime = time3(&want->st_atim);
	s->mtime.set_it = what & DCNFS_SET_MTIME_NOW ? SET_TO_SERVER_TIME :
			  what & DCNFS_SET_MTIME ? SET_TO_CLIENT_TIME : DONT_CHANGE;
	s->mtime.set_mtime_u.mtime = time3(&want->st_mtim);
	err = nfsrpc_call(r, RK_SETATTR, cr, NFS3_SETATTR, &a, take_setattr, &o, 0);
	return err ? err : attr_after(be, cr, fh, &o.attr, o.have, st);
}

/* ---- names -------------------------------------------------------------- */

/* What CREATE, MKDIR, SYMLINK and MKNOD answer. */
struct made {
	struct dcnfs_fh fh;
	int have_fh;
	post_op_attr attr;
};

static int take_made(void *res, void *arg)
{
	CREATE3res *r = res;
	CREATE3resok *ok = &r->CREATE3res_u.resok;
	struct made *m = arg;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	m->attr = ok->obj_attributes;
	if (!ok->obj.handle_follows)
		return 0;
	err = fh_take(&m->fh, &ok->obj.post_op_fh3_u.handle);
	m->have_fh = !err;
	return err;
}

static void sattr_mode(sattr3 *s, mode_t mode)
{
	memset(s, 0, sizeof(*s));
	s->mode.set_it = 1;
	s->mode.set_mode3_u.mode = mode & 07777;
}

static void dirop(diropargs3 *d, const struct dcnfs_fh *dir, const char *name)
{
	fh_arg(&d->dir, dir);
	d->name = (char *)name;
}

/* The argument and the call that make an inode of mode's type. */
union make_args {
	CREATE3args create;
	MKDIR3args mkdir;
	SYMLINK3args symlink;
	MKNOD3args mknod;
};

static int make_args(union make_args *a, const struct dcnfs_fh *dir,
		     const char *name, mode_t mode, int excl, dev_t rdev,
		     const char *target, int *proc)
{
	devicedata3 *dev = &a->mknod.what.mknoddata3_u.chr_device;

	memset(a, 0, sizeof(*a));
	switch (mode & S_IFMT) {
	case S_IFREG:
		dirop(&a->create.where, dir, name);
		a->create.how.mode = excl ? GUARDED : UNCHECKED;
		sattr_mode(&a->create.how.createhow3_u.obj_attributes, mode);
		*proc = NFS3_CREATE;
		return 0;
	case S_IFDIR:
		dirop(&a->mkdir.where, dir, name);
		sattr_mode(&a->mkdir.attributes, mode);
		*proc = NFS3_MKDIR;
		return 0;
	case S_IFLNK:
		if (!target)
			return -EINVAL;
		dirop(&a->symlink.where, dir, name);
		sattr_mode(&a->symlink.symlink.symlink_attributes, 0777);
		a->symlink.symlink.symlink_data = (char *)target;
		*proc = NFS3_SYMLINK;
		return 0;
	case S_IFCHR:
	case S_IFBLK:
		a->mknod.what.type = S_ISCHR(mode) ? NF3CHR : NF3BLK;
		/* chr_device and blk_device are one union member's place */
		sattr_mode(&dev->dev_attributes, mode);
		dev->spec.specdata1 = major(rdev);
		dev->spec.specdata2 = minor(rdev);
		break;
	case S_IFIFO:
		a->mknod.what.type = NF3FIFO;
		sattr_mode(&a->mknod.what.mknoddata3_u.pipe_attributes, mode);
		break;
	case S_IFSOCK:
		a->mknod.what.type = NF3SOCK;
		sattr_mode(&a->mknod.what.mknoddata3_u.sock_attributes, mode);
		break;
	default:
		return -EINVAL;
	}
	dirop(&a->mknod.where, dir, name);
	*proc = NFS3_MKNOD;
	return 0;
}

/* What a LOOKUP answers: the handle, and the object's attributes when
 * the server sent them (CREATE3res's obj_attributes is one too). */
static int take_lookup(void *res, void *arg)
{
	LOOKUP3res *r = res;
	struct made *m = arg;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	m->attr = r->LOOKUP3res_u.resok.obj_attributes;
	err = fh_take(&m->fh, &r->LOOKUP3res_u.resok.object);
	m->have_fh = !err;
	return err;
}

/* LOOKUP name in dir into m. */
static int lookup_into(struct nfsrpc *r, const struct dcnfs_cred *cr,
		       const struct dcnfs_fh *dir, const char *name,
		       struct made *m)
{
	LOOKUP3args l;

	dirop(&l.what, dir, name);
	return nfsrpc_call(r, RK_LOOKUP, cr, NFS3_LOOKUP, &l, take_lookup, m, 0);
}

int dcnfs_lookup(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *dir, const char *name,
		 struct dcnfs_fh *fh, struct stat *st)
{
	struct made m = { .have_fh = 0 };
	struct nfsrpc *r;
	int err = args_ok(be, &r, dir, name);

	if (!err && (!fh || !st))
		err = -EINVAL;
	if (!err)
		err = lookup_into(r, cr, dir, name, &m);
	if (err)
		return err;
	*fh = m.fh;
	return attr_after(be, cr, fh, &m.attr, 1, st);
}

int dcnfs_make(const struct dc_backend *be, const struct dcnfs_cred *cr,
	       const struct dcnfs_fh *dir, const char *name, mode_t mode,
	       int excl, dev_t rdev, const char *target, struct dcnfs_fh *fh,
	       struct stat *st)
{
	union make_args a;
	struct made m = { .have_fh = 0 };
	struct nfsrpc *r;
	int proc;
	int err = args_ok(be, &r, dir, name);

	if (!err && (!fh || !st))
		err = -EINVAL;
	if (!err)
		err = make_args(&a, dir, name, mode, excl, rdev, target, &proc);
	if (err)
		return err;
	err = nfsrpc_call(r, RK_UPDATE, cr, proc, &a, take_made, &m, RPC_ONCE);
	if (err)
		return err;
	if (!m.have_fh) {	/* the handle is optional in the reply */
		struct dcnfs_cred c;

		err = lookup_into(r, after(cr, &c), dir, name, &m);
		if (err)
			return err;
	}
	*fh = m.fh;
	return attr_after(be, cr, fh, &m.attr, 1, st);
}

int dcnfs_remove(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *dir, const char *name, int is_dir)
{
	REMOVE3args rm;
	RMDIR3args rd;
	struct nfsrpc *r;
	int err = args_ok(be, &r, dir, name);

	if (err)
		return err;
	if (is_dir) {
		dirop(&rd.object, dir, name);
		return nfsrpc_call(r, RK_UPDATE, cr, NFS3_RMDIR, &rd,
				   take_status, NULL, RPC_ONCE);
	}
	dirop(&rm.object, dir, name);
	return nfsrpc_call(r, RK_UPDATE, cr, NFS3_REMOVE, &rm, take_status,
			   NULL, RPC_ONCE);
}

int dcnfs_rename(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *odir, const char *oname,
		 const struct dcnfs_fh *ndir, const char *nname)
{
	RENAME3args a;
	struct nfsrpc *r;
	int err = args_ok(be, &r, odir, oname);

	if (!err)
		err = args_ok(be, &r, ndir, nname);
	if (err)
		return err;
	dirop(&a.from, odir, oname);
	dirop(&a.to, ndir, nname);
	return nfsrpc_call(r, RK_UPDATE, cr, NFS3_RENAME, &a, take_status,
			   NULL, RPC_ONCE);
}

static int take_link(void *res, void *arg)
{
	LINK3res *r = res;
	struct attr_out *o = arg;
	int err = nfs3_errno(r->status);

	if (!err) {
		o->attr = r->LINK3res_u.resok.file_attributes;
		o->have = 1;
	}
	return err;
}

int dcnfs_link(const struct dc_backend *be, const struct dcnfs_cred *cr,
	       const struct dcnfs_fh *fh, const struct dcnfs_fh *dir,
	       const char *name, struct stat *st)
{
	LINK3args a;
	struct attr_out o = { .have = 0 };
	struct nfsrpc *r;
	int err = args_ok(be, &r, dir, name);

	if (!err)
		err = args_ok(be, &r, fh, NULL);
	if (err || !st)
		return err ? err : -EINVAL;
	fh_arg(&a.file, fh);
	dirop(&a.link, dir, name);
	err = nfsrpc_call(r, RK_UPDATE, cr, NFS3_LINK, &a, take_link, &o,
			  RPC_ONCE);
	return err ? err : attr_after(be, cr, fh, &o.attr, o.have, st);
}

struct readlink_out {
	char *buf;
	size_t size;
	int len;
};

static int take_readlink(void *res, void *arg)
{
	READLINK3res *r = res;
	struct readlink_out *o = arg;
	const char *t;
	size_t n;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	t = r->READLINK3res_u.resok.data;
	n = t ? strlen(t) : 0;
	/* a target that leaves no room for its NUL: as hostfs answers */
	if (n >= o->size || n > INT_MAX)
		return -ENAMETOOLONG;
	memcpy(o->buf, t, n);
	o->buf[n] = '\0';
	o->len = (int)n;
	return 0;
}

int dcnfs__readlink(struct nfsrpc *r, const struct dcnfs_fh *fh, char *buf,
		    size_t size)
{
	struct readlink_out o = { .buf = buf, .size = size };
	READLINK3args a;
	int err;

	fh_arg(&a.symlink, fh);
	err = nfsrpc_call(r, RK_READLINK, NULL, NFS3_READLINK, &a,
			  take_readlink, &o, 0);
	return err ? err : o.len;
}

int dcnfs_readlink(const struct dc_backend *be, const struct dcnfs_fh *fh,
		   char *buf, size_t size)
{
	struct nfsrpc *r;
	int err = args_ok(be, &r, fh, NULL);

	if (err || !buf || !size)
		return err ? err : -EINVAL;
	return dcnfs__readlink(r, fh, buf, size);
}

/* ---- data --------------------------------------------------------------- */

struct read_out {
	char *buf;
	size_t size;
	size_t got;
	int eof;
};

static int take_read(void *res, void *arg)
{
	READ3res *r = res;
	READ3resok *ok = &r->READ3res_u.resok;
	struct read_out *o = arg;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	if (ok->data.data_len > o->size || ok->count != ok->data.data_len)
		return -EIO;
	memcpy(o->buf, ok->data.data_val, ok->data.data_len);
	o->got = ok->data.data_len;
	o->eof = ok->eof;
	return 0;
}

ssize_t dcnfs_read(const struct dc_backend *be, const struct dcnfs_cred *cr,
		   const struct dcnfs_fh *fh, void *buf, size_t size,
		   uint64_t off)
{
	struct nfsrpc *r;
	size_t done = 0;
	int err = args_ok(be, &r, fh, NULL);

	if (err || (!buf && size))
		return err ? err : -EINVAL;
	while (done < size) {
		struct read_out o = { .buf = (char *)buf + done };
		READ3args a;

		o.size = size - done < NFSFS_IO_MAX ? size - done : NFSFS_IO_MAX;
		fh_arg(&a.file, fh);
		a.offset = off + done;
		a.count = (count3)o.size;
		err = nfsrpc_call(r, RK_READ, cr, NFS3_READ, &a, take_read, &o, 0);
		if (err)
			return done ? (ssize_t)done : err;
		done += o.got;
		if (o.eof || !o.got)
			break;
	}
	return (ssize_t)done;
}

struct write_out {
	size_t count;
	uint64_t verf;
};

static int take_write(void *res, void *arg)
{
	WRITE3res *r = res;
	struct write_out *o = arg;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	o->count = r->WRITE3res_u.resok.count;
	memcpy(&o->verf, r->WRITE3res_u.resok.verf, sizeof(o->verf));
	return 0;
}

ssize_t dcnfs_write(const struct dc_backend *be, const struct dcnfs_cred *cr,
		    const struct dcnfs_fh *fh, const void *buf, size_t size,
		    uint64_t off, uint64_t *verf, bool *mixed)
{
	struct nfsrpc *r;
	size_t done = 0, most;
	int err = args_ok(be, &r, fh, NULL);

	if (err || (!buf && size) || !verf || !mixed)
		return err ? err : -EINVAL;
	*mixed = false;
	most = r->version == 4 ? NFSFS_IO4_WRITE_MAX : NFSFS_IO_MAX;
	while (done < size) {
		struct write_out o = { .count = 0 };
		WRITE3args a;

		fh_arg(&a.file, fh);
		a.offset = off + done;
		a.count = (count3)(size - done < most ? size - done : most);
		a.stable = UNSTABLE;
		a.data.data_len = a.count;
		a.data.data_val = (char *)buf + done;
		/* a WRITE sent twice writes the same bytes twice: harmless */
		err = nfsrpc_call(r, RK_WRITE, cr, NFS3_WRITE, &a, take_write, &o, 0);
		if (!err && (o.count == 0 || o.count > a.count))
			err = -EIO;	/* no progress, or more than asked */
		if (err)
			return done ? (ssize_t)done : err;
		/* two verifiers in one write: the server restarted between
		 * its parts and may have lost the first */
		if (done && o.verf != *verf)
			*mixed = true;
		*verf = o.verf;
		done += o.count;
	}
	return (ssize_t)done;
}

static int take_commit(void *res, void *arg)
{
	COMMIT3res *r = res;
	int err = nfs3_errno(r->status);

	if (!err)
		memcpy(arg, r->COMMIT3res_u.resok.verf, sizeof(uint64_t));
	return err;
}

int dcnfs_commit(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *fh, uint64_t *verf)
{
	COMMIT3args a;
	struct nfsrpc *r;
	int err = args_ok(be, &r, fh, NULL);

	if (err || !verf)
		return err ? err : -EINVAL;
	fh_arg(&a.file, fh);
	a.offset = 0;
	a.count = 0;	/* to the end of the file */
	return nfsrpc_call(r, RK_COMMIT, cr, NFS3_COMMIT, &a, take_commit,
			   verf, 0);
}

/* ---- the file system and listings ----------------------------------------- */

static int take_fsstat(void *res, void *arg)
{
	FSSTAT3res *r = res;
	FSSTAT3resok *ok = &r->FSSTAT3res_u.resok;
	struct statvfs *st = arg;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	memset(st, 0, sizeof(*st));
	st->f_bsize = st->f_frsize = 4096;
	st->f_blocks = ok->tbytes / 4096;
	st->f_bfree = ok->fbytes / 4096;
	st->f_bavail = ok->abytes / 4096;
	st->f_files = ok->tfiles;
	st->f_ffree = ok->ffiles;
	st->f_favail = ok->afiles;
	st->f_namemax = DC_NAME_MAX;
	return 0;
}

int dcnfs_statfs(const struct dc_backend *be, const struct dcnfs_fh *fh,
		 struct statvfs *st)
{
	FSSTAT3args a;
	struct nfsrpc *r;
	int err = args_ok(be, &r, fh, NULL);

	if (err || !st)
		return err ? err : -EINVAL;
	fh_arg(&a.fsroot, fh);
	return nfsrpc_call(r, RK_OTHER, NULL, NFS3_FSSTAT, &a, take_fsstat, st, 0);
}

/* One READDIR page of a listing. */
struct list_page {
	int (*emit)(void *arg, const char *name, uint64_t ino);
	void *arg;
	int stop;
	cookie3 cookie;		/* the next page's: the last entry's */
	struct nfsrpc_loop loop;	/* the cookies pages ended on */
	cookieverf3 verf;
	int eof;
	uint64_t names;		/* so far */
};

static int take_list(void *res, void *arg)
{
	READDIR3res *r = res;
	READDIR3resok *ok = &r->READDIR3res_u.resok;
	struct list_page *p = arg;
	const entry3 *e;
	entry3 ent;
	cookie3 asked = p->cookie;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	memcpy(p->verf, ok->cookieverf, sizeof(p->verf));
	for (e = ok->reply.entries; e; e = ent.nextentry) {
		/* copied out: libnfs 4.0 lays entries out 4-byte aligned */
		memcpy(&ent, e, sizeof(ent));
		p->names++;
		p->cookie = ent.cookie;
		err = nfsrpc_name(ent.name);
		if (err < 0)
			return err;
		if (err)
			continue;	/* too long for any caller */
		p->stop = p->emit(p->arg, ent.name, ent.fileid);
		if (p->stop)
			return 0;
	}
	p->eof = ok->reply.eof;
	/* a page that leaves the listing where it was would be asked for
	 * forever (an empty one among them) */
	return p->eof || nfsrpc_page_moves(&p->loop, asked, p->cookie, p->names) ?
	       0 : -EIO;
}

int dcnfs_list(const struct dc_backend *be, const struct dcnfs_cred *cr,
	       const struct dcnfs_fh *dir,
	       int (*emit)(void *arg, const char *name, uint64_t ino),
	       void *arg)
{
	struct list_page p = { .emit = emit, .arg = arg };
	READDIR3args a;
	struct nfsrpc *r;
	int err = args_ok(be, &r, dir, NULL);

	if (err || !emit)
		return err ? err : -EINVAL;
	fh_arg(&a.dir, dir);
	a.count = NFSFS_LIST_BYTES;
	while (!p.eof && !p.stop) {
		a.cookie = p.cookie;
		memcpy(a.cookieverf, p.verf, sizeof(a.cookieverf));
		err = nfsrpc_call(r, RK_READDIR, cr, NFS3_READDIR, &a, take_list,
				  &p, 0);
		if (err)
			return err;
	}
	return p.stop;
}
