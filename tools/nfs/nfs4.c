// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfs4.c - NFSv4.0 under the NFSv3 calls the rest of tools/nfs makes.
 *
 * Each NFSv3 procedure becomes one COMPOUND (a regular file's CREATE
 * two or three: OPEN, then OPEN_CONFIRM and CLOSE), and the COMPOUND's
 * reply becomes the NFSv3 result that procedure answers, which the
 * caller's take() then reads as it would over NFSv3.  So names, caching
 * and files (nfsfs.c, nfsio.c) have one code path for both versions.
 *
 * What NFSv4 does differently, and how it is met here:
 *  - no MOUNT protocol: the export's root is PUTROOTFH then a LOOKUP per
 *    component of its pseudo path;
 *  - attributes are a bitmap and an XDR list (fattr4), owners are
 *    strings: the server is asked for numeric owners ("1000"), and a
 *    name it sends anyway reads as nobody (65534);
 *  - no CREATE of regular files: OPEN with OPEN4_CREATE, under a client
 *    ID (SETCLIENTID, set up on first use and again when the server has
 *    forgotten it), each OPEN by an open-owner of its own so no seqid is
 *    shared between threads, then CLOSE at once;
 *  - READ, WRITE and SETATTR take the anonymous stateid (all zeros),
 *    which RFC 7530 lets a client use without OPEN;
 *  - REMOVE removes files and directories alike: unlink and rmdir
 *    first VERIFY (or NVERIFY) that the name is not (or is) a directory
 *    in the same COMPOUND, so they answer EISDIR and ENOTDIR as NFSv3's
 *    REMOVE and RMDIR do;
 *  - READDIR lists neither "." nor "..": a listing's first page gets
 *    them here, with cookies 1 and 2 (which NFSv4 keeps from servers).
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "nfs/nfs4_attr.h"
#include "nfs/rpc.h"

#define OPS_MAX		10
#define COOKIE_DOT	1	/* "." and "..": cookies no server uses */
#define COOKIE_DOTDOT	2
#define SYMLINK4_MAX	3072	/* a target's bytes (see nfsio.c's WRITE) */

/* What a file's attributes are asked as (fattr3's every field). */
static const uint32_t stat_mask[2] = {
	W0(FATTR4_TYPE) | W0(FATTR4_SIZE) | W0(FATTR4_FSID) | W0(FATTR4_FILEID),
	W1(FATTR4_MODE) | W1(FATTR4_NUMLINKS) | W1(FATTR4_OWNER) |
	W1(FATTR4_OWNER_GROUP) | W1(FATTR4_RAWDEV) | W1(FATTR4_SPACE_USED) |
	W1(FATTR4_TIME_ACCESS) | W1(FATTR4_TIME_METADATA) | W1(FATTR4_TIME_MODIFY)
};
static const uint32_t fsstat_mask[2] = {
	W0(FATTR4_FILES_AVAIL) | W0(FATTR4_FILES_FREE) | W0(FATTR4_FILES_TOTAL),
	W1(FATTR4_SPACE_AVAIL) | W1(FATTR4_SPACE_FREE) | W1(FATTR4_SPACE_TOTAL)
};
static const uint32_t fileid_mask[1] = { W0(FATTR4_FILEID) };

int nfs4_errno(nfsstat4 st)
{
	switch (st) {
	case NFS4_OK:			return 0;
	case NFS4ERR_PERM:		return -EPERM;
	case NFS4ERR_NOENT:		return -ENOENT;
	case NFS4ERR_NXIO:		return -ENXIO;
	case NFS4ERR_ACCESS:		return -EACCES;
	case NFS4ERR_EXIST:		return -EEXIST;
	case NFS4ERR_XDEV:		return -EXDEV;
	case NFS4ERR_NOTDIR:		return -ENOTDIR;
	case NFS4ERR_ISDIR:		return -EISDIR;
	case NFS4ERR_INVAL:
	case NFS4ERR_BADTYPE:		return -EINVAL;
	case NFS4ERR_FBIG:		return -EFBIG;
	case NFS4ERR_NOSPC:		return -ENOSPC;
	case NFS4ERR_ROFS:		return -EROFS;
	case NFS4ERR_MLINK:		return -EMLINK;
	case NFS4ERR_NAMETOOLONG:	return -ENAMETOOLONG;
	case NFS4ERR_NOTEMPTY:		return -ENOTEMPTY;
	case NFS4ERR_DQUOT:		return -EDQUOT;
	case NFS4ERR_STALE:		/* the inode is gone */
	case NFS4ERR_FHEXPIRED:
	case NFS4ERR_BADHANDLE:		return -ESTALE;
	case NFS4ERR_NOTSUPP:
	case NFS4ERR_ATTRNOTSUPP:	return -EOPNOTSUPP;
	case NFS4ERR_DELAY:
	case NFS4ERR_GRACE:		return -EAGAIN;
	case NFS4ERR_SYMLINK:		/* a LOOKUP in a symlink: as NFSv3 */
					return -ENOTDIR;
	case NFS4ERR_BADNAME:
	case NFS4ERR_BADCHAR:		return -EINVAL;
	case NFS4ERR_BADOWNER:		return -EPERM;
	case NFS4ERR_SHARE_DENIED:
	case NFS4ERR_LOCKED:		return -EACCES;
	default:			return -EIO;	/* IO, SERVERFAULT, ... */
	}
}

/* ---- a COMPOUND ---------------------------------------------------------- */

struct compound {
	COMPOUND4args args;
	nfs_argop4 ops[OPS_MAX];
	uint32_t mask[2];			/* attributes set */
	unsigned char attrs[ATTR_BYTES];	/* their values */
	uint32_t type_mask;			/* (N)VERIFY's attribute */
	unsigned char type_val[4];
	char path[1024];			/* the export's, taken apart */
};

/* The index the next op will have. */
static int at(const struct compound *c)
{
	return (int)c->args.argarray.argarray_len;
}

static nfs_argop4 *op(struct compound *c, nfs_opnum4 num)
{
	nfs_argop4 *o = &c->ops[c->args.argarray.argarray_len++];

	memset(o, 0, sizeof(*o));
	o->argop = num;
	return o;
}

static void op_putfh(struct compound *c, const nfs_fh3 *fh)
{
	nfs_fh4 *h = &op(c, OP_PUTFH)->nfs_argop4_u.opputfh.object;

	h->nfs_fh4_len = fh->data.data_len;
	h->nfs_fh4_val = fh->data.data_val;
}

static void name4(component4 *to, const char *name)
{
	to->utf8string_len = (u_int)strlen(name);
	to->utf8string_val = (char *)name;
}

/* LOOKUP name in the current directory: "." stays, ".." is LOOKUPP. */
static void op_lookup(struct compound *c, const char *name)
{
	if (!strcmp(name, "."))
		return;
	if (!strcmp(name, "..")) {
		op(c, OP_LOOKUPP);
		return;
	}
	name4(&op(c, OP_LOOKUP)->nfs_argop4_u.oplookup.objname, name);
}

static void op_getattr(struct compound *c, const uint32_t *mask, u_int words)
{
	bitmap4 *b = &op(c, OP_GETATTR)->nfs_argop4_u.opgetattr.attr_request;

	b->bitmap4_len = words;
	b->bitmap4_val = (uint32_t *)mask;	/* only read */
}

/* VERIFY (or NVERIFY) that the current file is (or is not) a directory. */
static void op_verify_dir(struct compound *c, nfs_opnum4 num)
{
	nfs_argop4 *o = op(c, num);
	fattr4 *f = num == OP_VERIFY ? &o->nfs_argop4_u.opverify.obj_attributes :
		    &o->nfs_argop4_u.opnverify.obj_attributes;

	nfs4_attr_type(f, &c->type_mask, c->type_val, NF4DIR);
}

/*
 * The result of op i into *o, if the server got that far (else 0).
 * Copied out: libnfs 4.0's decoder lays arrays and lists out 4-byte
 * aligned, so a result (or a READDIR entry) holding 64-bit fields is
 * never read in place.  What its pointers point to stays libnfs's, valid
 * until the callback returns.
 */
static int res_op(COMPOUND4res *r, unsigned i, nfs_resop4 *o)
{
	if (i >= r->resarray.resarray_len)
		return 0;
	memcpy(o, (const char *)r->resarray.resarray_val + i * sizeof(*o),
	       sizeof(*o));
	return 1;
}

/* The attributes GETATTR op i answered into a, or 0 (none). */
static int res_attrs(COMPOUND4res *r, unsigned i, struct attrs4 *at)
{
	nfs_resop4 o;

	if (!res_op(r, i, &o) || o.resop != OP_GETATTR ||
	    o.nfs_resop4_u.opgetattr.status)
		return 0;
	return !nfs4_attrs_take(&o.nfs_resop4_u.opgetattr.GETATTR4res_u.resok4
				   .obj_attributes, at);
}

static void post_attr(post_op_attr *p, COMPOUND4res *r, unsigned i)
{
	struct attrs4 at;

	p->attributes_follow = res_attrs(r, i, &at);
	if (p->attributes_follow)
		p->post_op_attr_u.attributes = at.a;
}

/* The handle GETFH op i answered, or 0. */
static int res_fh(COMPOUND4res *r, unsigned i, nfs_fh3 *fh)
{
	nfs_resop4 o;
	nfs_fh4 *h;

	if (!res_op(r, i, &o) || o.resop != OP_GETFH ||
	    o.nfs_resop4_u.opgetfh.status)
		return 0;
	h = &o.nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object;
	fh->data.data_len = h->nfs_fh4_len;
	fh->data.data_val = h->nfs_fh4_val;
	return 1;
}

/* ---- one NFSv3 procedure as a COMPOUND ------------------------------------ */

/* A call in flight: the procedure, the caller's reader of its NFSv3
 * result, and where each answer sits in the COMPOUND. */
struct v4call {
	int proc;
	int (*take)(void *res, void *arg);
	void *arg;
	int i_attr, i_fh, i_dirattr, i_main;	/* op indexes; -1: none */
	nfs_opnum4 sent[OPS_MAX];	/* the ops sent, in order */
	unsigned nsent;
	uint64_t cookie;		/* READDIR: the one asked from */
	/* CREATE's OPEN */
	uint64_t clientid;	/* its client ID */
	int stale_clientid;	/* refused for it: the server forgot it */
	stateid4 sid;		/* what it opened */
	int confirm;		/* 1: opened; | OPEN4_RESULT_CONFIRM */
};

static const stateid4 anonymous;	/* all zeros: no OPEN needed */

struct open_owner {
	char name[40];
};

/* CREATE of a regular file: OPEN with OPEN4_CREATE under v->clientid. */
static int build_open(struct nfsrpc *r, struct compound *c,
		      struct v4call *v, void *args, struct open_owner *own)
{
	CREATE3args *a = args;
	OPEN4args *o;
	createhow4 *how;

	if (a->how.mode == EXCLUSIVE)
		return -EINVAL;	/* never asked for here */
	op_putfh(c, &a->where.dir);
	v->i_main = at(c);
	o = &op(c, OP_OPEN)->nfs_argop4_u.opopen;
	o->seqid = 0;
	/* access the creator may not have (mode 0): READ is what the
	 * server lets the owner of a file it just made have */
	o->share_access = OPEN4_SHARE_ACCESS_READ;
	o->share_deny = OPEN4_SHARE_DENY_NONE;
	o->owner.clientid = v->clientid;
	snprintf(own->name, sizeof(own->name), "dcnfs.%d.%" PRIu64,
		 (int)getpid(),
		 /* relaxed: only distinct, orders nothing */
		 __atomic_add_fetch(&r->v4owners, 1, __ATOMIC_RELAXED));
	o->owner.owner.owner_len = (u_int)strlen(own->name);
	o->owner.owner.owner_val = own->name;
	o->openhow.opentype = OPEN4_CREATE;
	how = &o->openhow.openflag4_u.how;
	how->mode = a->how.mode == GUARDED ? GUARDED4 : UNCHECKED4;
	if (nfs4_attrs_put(&a->how.createhow3_u.obj_attributes,
		      &how->createhow4_u.createattrs, c->mask, c->attrs))
		return -EINVAL;
	o->claim.claim = CLAIM_NULL;
	name4(&o->claim.open_claim4_u.file, a->where.name);
	v->i_fh = at(c);
	op(c, OP_GETFH);
	v->i_attr = at(c);
	op_getattr(c, stat_mask, 2);
	return 0;
}

/* MKDIR, SYMLINK and MKNOD: CREATE of that type. */
static int build_make(struct compound *c, struct v4call *v, void *args)
{
	CREATE4args *o;
	const sattr3 *s;
	const diropargs3 *where;

	if (v->proc == NFS3_MKDIR) {
		MKDIR3args *a = args;

		where = &a->where;
		s = &a->attributes;
	} else if (v->proc == NFS3_SYMLINK) {
		SYMLINK3args *a = args;

		where = &a->where;
		s = &a->symlink.symlink_attributes;
	} else {
		MKNOD3args *a = args;

		where = &a->where;
		/* every kind's attributes begin the union */
		s = a->what.type == NF3CHR || a->what.type == NF3BLK ?
		    &a->what.mknoddata3_u.chr_device.dev_attributes :
		    &a->what.mknoddata3_u.pipe_attributes;
	}
	op_putfh(c, &where->dir);
	v->i_main = at(c);
	o = &op(c, OP_CREATE)->nfs_argop4_u.opcreate;
	name4(&o->objname, where->name);
	if (v->proc == NFS3_MKDIR) {
		o->objtype.type = NF4DIR;
	} else if (v->proc == NFS3_SYMLINK) {
		SYMLINK3args *a = args;

		/* within the 4 KiB libnfs 4.0 encodes a call into */
		if (strlen(a->symlink.symlink_data) > SYMLINK4_MAX)
			return -ENAMETOOLONG;
		o->objtype.type = NF4LNK;
		name4(&o->objtype.createtype4_u.linkdata,
		      a->symlink.symlink_data);
	} else {
		MKNOD3args *a = args;

		o->objtype.type = (nfs_ftype4)a->what.type;
		if (a->what.type == NF3CHR || a->what.type == NF3BLK) {
			specdata3 *d = &a->what.mknoddata3_u.chr_device.spec;

			o->objtype.createtype4_u.devdata.specdata1 = d->specdata1;
			o->objtype.createtype4_u.devdata.specdata2 = d->specdata2;
		}
	}
	if (nfs4_attrs_put(s, &o->createattrs, c->mask, c->attrs))
		return -EINVAL;
	v->i_fh = at(c);
	op(c, OP_GETFH);
	v->i_attr = at(c);
	op_getattr(c, stat_mask, 2);
	return 0;
}

/* READDIR, and ".." after it for a listing's first page. */
static int build_readdir(struct compound *c, struct v4call *v,
			 const READDIR3args *a)
{
	READDIR4args *o;

	op_putfh(c, &a->dir);
	v->i_dirattr = at(c);
	op_getattr(c, stat_mask, 2);
	v->i_main = at(c);
	o = &op(c, OP_READDIR)->nfs_argop4_u.opreaddir;
	v->cookie = a->cookie;
	o->cookie = a->cookie <= COOKIE_DOTDOT ? 0 : a->cookie;
	/* a listing from its start carries no verifier (RFC 7530) */
	if (o->cookie)
		memcpy(o->cookieverf, a->cookieverf, sizeof(o->cookieverf));
	o->dircount = a->count;
	o->maxcount = a->count;
	o->attr_request.bitmap4_len = 1;
	o->attr_request.bitmap4_val = (uint32_t *)fileid_mask;
	if (a->cookie < COOKIE_DOTDOT) {
		/* ".." after the listing: at the root it fails, and
		 * the listing stands */
		op(c, OP_LOOKUPP);
		v->i_attr = at(c);
		op_getattr(c, fileid_mask, 1);
	}
	return 0;
}

/* The export's root: PUTROOTFH and a LOOKUP per component of path. */
static int build_root(struct compound *c, struct v4call *v,
		      const char *path)
{
	char *p, *save = NULL;

	/* split in a copy: path stays as it was for a resend */
	if (strlen(path) >= sizeof(c->path))
		return -ENAMETOOLONG;
	strcpy(c->path, path);
	op(c, OP_PUTROOTFH);
	for (p = strtok_r(c->path, "/", &save); p;
	     p = strtok_r(NULL, "/", &save)) {
		if (at(c) >= OPS_MAX - 1)
			return -ENAMETOOLONG;
		op_lookup(c, p);
	}
	v->i_fh = at(c);
	op(c, OP_GETFH);
	return 0;
}

/* The arguments of proc (an NFSv3 procedure's) as c. */
static int build(struct nfsrpc *r, struct compound *c, struct v4call *v,
		 void *args, struct open_owner *own)
{
	v->i_attr = v->i_fh = v->i_dirattr = v->i_main = -1;
	switch (v->proc) {
	case NFS3_GETATTR: {
		GETATTR3args *a = args;

		op_putfh(c, &a->object);
		v->i_attr = at(c);
		op_getattr(c, stat_mask, 2);
		return 0;
	}
	case NFS3_SETATTR: {
		SETATTR3args *a = args;
		SETATTR4args *s;

		op_putfh(c, &a->object);
		v->i_main = at(c);
		s = &op(c, OP_SETATTR)->nfs_argop4_u.opsetattr;
		s->stateid = anonymous;
		if (nfs4_attrs_put(&a->new_attributes, &s->obj_attributes, c->mask,
			      c->attrs))
			return -EINVAL;
		v->i_attr = at(c);
		op_getattr(c, stat_mask, 2);
		return 0;
	}
	case NFS3_LOOKUP: {
		LOOKUP3args *a = args;

		op_putfh(c, &a->what.dir);
		v->i_dirattr = at(c);
		op_getattr(c, stat_mask, 2);
		v->i_main = at(c);
		op_lookup(c, a->what.name);
		v->i_fh = at(c);
		op(c, OP_GETFH);
		v->i_attr = at(c);
		op_getattr(c, stat_mask, 2);
		return 0;
	}
	case NFS3_READLINK: {
		READLINK3args *a = args;

		op_putfh(c, &a->symlink);
		v->i_main = at(c);
		op(c, OP_READLINK);
		return 0;
	}
	case NFS3_READ: {
		READ3args *a = args;
		READ4args *o;

		op_putfh(c, &a->file);
		v->i_main = at(c);
		o = &op(c, OP_READ)->nfs_argop4_u.opread;
		o->stateid = anonymous;
		o->offset = a->offset;
		o->count = a->count;
		return 0;
	}
	case NFS3_WRITE: {
		WRITE3args *a = args;
		WRITE4args *o;

		op_putfh(c, &a->file);
		v->i_main = at(c);
		o = &op(c, OP_WRITE)->nfs_argop4_u.opwrite;
		o->stateid = anonymous;
		o->offset = a->offset;
		o->stable = a->stable == UNSTABLE ? UNSTABLE4 :
			    a->stable == DATA_SYNC ? DATA_SYNC4 : FILE_SYNC4;
		o->data.data_len = a->data.data_len;
		o->data.data_val = a->data.data_val;
		return 0;
	}
	case NFS3_COMMIT: {
		COMMIT3args *a = args;
		COMMIT4args *o;

		op_putfh(c, &a->file);
		v->i_main = at(c);
		o = &op(c, OP_COMMIT)->nfs_argop4_u.opcommit;
		o->offset = a->offset;
		o->count = a->count;
		return 0;
	}
	case NFS3_CREATE:
		return build_open(r, c, v, args, own);
	case NFS3_MKDIR:
	case NFS3_SYMLINK:
	case NFS3_MKNOD:
		return build_make(c, v, args);
	case NFS3_REMOVE:
	case NFS3_RMDIR: {
		diropargs3 *d = v->proc == NFS3_REMOVE ?
				&((REMOVE3args *)args)->object :
				&((RMDIR3args *)args)->object;

		op_putfh(c, &d->dir);
		op_lookup(c, d->name);
		/* the type REMOVE does not check: as NFSv3's REMOVE and RMDIR */
		v->i_attr = at(c);
		op_verify_dir(c, v->proc == NFS3_RMDIR ? OP_VERIFY : OP_NVERIFY);
		op_putfh(c, &d->dir);
		v->i_main = at(c);
		name4(&op(c, OP_REMOVE)->nfs_argop4_u.opremove.target, d->name);
		return 0;
	}
	case NFS3_RENAME: {
		RENAME3args *a = args;
		RENAME4args *o;

		op_putfh(c, &a->from.dir);
		op(c, OP_SAVEFH);
		op_putfh(c, &a->to.dir);
		v->i_main = at(c);
		o = &op(c, OP_RENAME)->nfs_argop4_u.oprename;
		name4(&o->oldname, a->from.name);
		name4(&o->newname, a->to.name);
		return 0;
	}
	case NFS3_LINK: {
		LINK3args *a = args;

		op_putfh(c, &a->file);
		op(c, OP_SAVEFH);
		op_putfh(c, &a->link.dir);
		v->i_main = at(c);
		name4(&op(c, OP_LINK)->nfs_argop4_u.oplink.newname, a->link.name);
		op(c, OP_RESTOREFH);
		v->i_attr = at(c);
		op_getattr(c, stat_mask, 2);
		return 0;
	}
	case NFS3_FSSTAT: {
		FSSTAT3args *a = args;

		op_putfh(c, &a->fsroot);
		v->i_attr = at(c);
		op_getattr(c, fsstat_mask, 2);
		return 0;
	}
	case NFS3_READDIR:
		return build_readdir(c, v, args);
	case NFSRPC_ROOT:
		return build_root(c, v, args);
	default:
		return -EOPNOTSUPP;
	}
}

/* The status of op i: its own, or the COMPOUND's if the server stopped
 * before it (an earlier op failed). */
static nfsstat4 op_status(COMPOUND4res *r, int i)
{
	nfs_resop4 o;

	/* every result begins with its status */
	return i >= 0 && res_op(r, (unsigned)i, &o) ?
	       *(nfsstat4 *)&o.nfs_resop4_u : r->status;
}

static nfsstat3 status3(COMPOUND4res *r)
{
	int err = nfs4_errno(r->status);

	/* the errnos nfs3_errno maps back to what nfs4_errno gave */
	switch (-err) {
	case 0:			return NFS3_OK;
	case EPERM:		return NFS3ERR_PERM;
	case ENOENT:		return NFS3ERR_NOENT;
	case ENXIO:		return NFS3ERR_NXIO;
	case EACCES:		return NFS3ERR_ACCES;
	case EEXIST:		return NFS3ERR_EXIST;
	case EXDEV:		return NFS3ERR_XDEV;
	case ENOTDIR:		return NFS3ERR_NOTDIR;
	case EISDIR:		return NFS3ERR_ISDIR;
	case EINVAL:		return NFS3ERR_INVAL;
	case EFBIG:		return NFS3ERR_FBIG;
	case ENOSPC:		return NFS3ERR_NOSPC;
	case EROFS:		return NFS3ERR_ROFS;
	case EMLINK:		return NFS3ERR_MLINK;
	case ENAMETOOLONG:	return NFS3ERR_NAMETOOLONG;
	case ENOTEMPTY:		return NFS3ERR_NOTEMPTY;
	case EDQUOT:		return NFS3ERR_DQUOT;
	case ESTALE:		return NFS3ERR_STALE;
	case EOPNOTSUPP:	return NFS3ERR_NOTSUPP;
	case EAGAIN:		return NFS3ERR_JUKEBOX;
	default:		return NFS3ERR_IO;
	}
}

/*
 * Whether a string the server sent (len bytes at val) can be read: at
 * most SERVER_STR_MAX bytes, and no NUL in it (read as a C string, a NUL
 * would cut it short).  The bound comes first: libnfs 4.0's decoder lets
 * a length of 2^31 or more through with val inside the reply, so len is
 * not what the reply holds until it is known small.  No name or link
 * text of any file system comes near the bound; callers apply their own
 * limits (DC_NAME_MAX, DC_PATH_MAX) after it.
 */
#define SERVER_STR_MAX	65535

static int server_bytes_ok(const char *val, u_int len)
{
	return len <= SERVER_STR_MAX && (!len || (val && !memchr(val, '\0', len)));
}

/* READDIR's entries as NFSv3's, "." and ".." first on a first page. */
static int take_readdir(COMPOUND4res *r, struct v4call *v)
{
	READDIR3res out;
	READDIR3resok *ok = &out.READDIR3res_u.resok;
	READDIR4resok *in;
	nfs_resop4 m;
	entry4 e;
	const entry4 *next;
	entry3 *ents = NULL, **tail = &ok->reply.entries;
	struct attrs4 dir, up;
	size_t n = 2, k = 0, synth;
	int err;

	memset(&out, 0, sizeof(out));
	out.status = status3(r);

	if (out.status != NFS3_OK && op_status(r, v->i_main) == NFS4_OK &&
	    (int)r->resarray.resarray_len > v->i_main + 1)
		out.status = NFS3_OK;	/* only the LOOKUPP of ".." failed */
	if (out.status != NFS3_OK)
		return v->take(&out, v->arg);
	if (!res_op(r, (unsigned)v->i_main, &m))
		return -EIO;
	in = &m.nfs_resop4_u.opreaddir.READDIR4res_u.resok4;
	post_attr(&ok->dir_attributes, r, (unsigned)v->i_dirattr);
	memcpy(ok->cookieverf, in->cookieverf, sizeof(ok->cookieverf));
	/* each entry copied out before it is read (see res_op) */
	for (next = in->reply.entries; next; next = e.nextentry) {
		memcpy(&e, next, sizeof(e));
		n++;
	}
	ents = calloc(n, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	dir.a.fileid = 0;
	if (ok->dir_attributes.attributes_follow)
		dir.a = ok->dir_attributes.post_op_attr_u.attributes;
	if (v->cookie < COOKIE_DOT) {
		ents[k].name = ".";
		ents[k].fileid = dir.a.fileid;
		ents[k].cookie = COOKIE_DOT;
		*tail = &ents[k++];
		tail = &(*tail)->nextentry;
	}
	if (v->cookie < COOKIE_DOTDOT) {
		ents[k].name = "..";
		/* above the export's root is the server's pseudo file
		 * system, whose root may show no fileid (0: readdir(3)
		 * would hide the entry) */
		ents[k].fileid = v->i_attr >= 0 && res_attrs(r, (unsigned)v->i_attr, &up) &&
				 up.a.fileid ? up.a.fileid : dir.a.fileid;
		ents[k].cookie = COOKIE_DOTDOT;
		*tail = &ents[k++];
		tail = &(*tail)->nextentry;
	}
	synth = k;
	for (next = in->reply.entries; next; next = e.nextentry) {
		struct attrs4 at;
		char *name;

		memcpy(&e, next, sizeof(e));
		/* a name over DC_NAME_MAX goes on, for the callers to skip
		 * with its cookie (nfsrpc_name) */
		if (!server_bytes_ok(e.name.utf8string_val, e.name.utf8string_len) ||
		    !e.name.utf8string_len) {
			err = -EIO;
			goto out;
		}
		name = malloc((size_t)e.name.utf8string_len + 1);
		if (!name || nfs4_attrs_take(&e.attrs, &at)) {
			err = name ? -EIO : -ENOMEM;
			free(name);
			goto out;
		}
		memcpy(name, e.name.utf8string_val, e.name.utf8string_len);
		name[e.name.utf8string_len] = '\0';
		ents[k].name = name;
		ents[k].fileid = at.a.fileid;
		ents[k].cookie = e.cookie;
		*tail = &ents[k++];
		tail = &(*tail)->nextentry;
	}
	ok->reply.eof = in->reply.eof;
	err = v->take(&out, v->arg);
out:
	while (k > synth)
		free(ents[--k].name);
	free(ents);
	return err;
}

/* What CREATE (OPEN), MKDIR, SYMLINK and MKNOD answered (m: the main
 * op's result, st: the COMPOUND's status), as CREATE3res. */
static int take_made4(COMPOUND4res *r, struct v4call *v, nfs_resop4 *m,
		      nfsstat3 st)
{
	CREATE3res out;
	CREATE3resok *ok = &out.CREATE3res_u.resok;

	memset(&out, 0, sizeof(out));
	if (v->proc == NFS3_CREATE && m &&
	    (op_status(r, v->i_main) == NFS4ERR_STALE_CLIENTID ||
	     op_status(r, v->i_main) == NFS4ERR_EXPIRED)) {
		v->stale_clientid = 1;	/* sent again: not the answer */
		return -EIO;
	}
	/* made: the name exists even if GETFH or GETATTR failed */
	out.status = m && op_status(r, v->i_main) == NFS4_OK ? NFS3_OK : st;
	if (out.status == NFS3_OK) {
		if (v->proc == NFS3_CREATE) {
			OPEN4resok *o = &m->nfs_resop4_u.opopen
					 .OPEN4res_u.resok4;

			v->sid = o->stateid;
			v->confirm = 1 | (o->rflags & OPEN4_RESULT_CONFIRM);
		}
		ok->obj.handle_follows = res_fh(r, (unsigned)v->i_fh,
						&ok->obj.post_op_fh3_u.handle);
		post_attr(&ok->obj_attributes, r, (unsigned)v->i_attr);
	}
	return v->take(&out, v->arg);
}

/*
 * Whether the reply has a result for each op sent, in order, and no
 * more (fewer only where the COMPOUND failed: the server stops at the
 * first op that fails).  The decoder lays a
 * result out as the op the server names, so a result named otherwise
 * than its op would be read as another op's fields: a length and a
 * pointer where the other has a flag and a count.
 */
static int results_match(COMPOUND4res *r, const struct v4call *v)
{
	unsigned n = r->resarray.resarray_len;

	if (n > v->nsent || (r->status == NFS4_OK && n != v->nsent))
		return 0;
	for (unsigned i = 0; i < n; i++) {
		nfs_opnum4 got;

		/* copied out, as res_op says why */
		memcpy(&got, (const char *)r->resarray.resarray_val +
			     i * sizeof(nfs_resop4) + offsetof(nfs_resop4, resop),
		       sizeof(got));
		if (got != v->sent[i])
			return 0;
		/* the COMPOUND's status is its last op's: OK, every op
		 * succeeded (a result that says otherwise is all zeros
		 * past its status, and would read as an empty answer) */
		if (r->status == NFS4_OK && op_status(r, (int)i) != NFS4_OK)
			return 0;
	}
	return 1;
}

/* The ops c sends, for results_match. */
static void record_sent(struct v4call *v, const struct compound *c)
{
	v->nsent = c->args.argarray.argarray_len;
	for (unsigned i = 0; i < v->nsent; i++)
		v->sent[i] = c->ops[i].argop;
}

/* The COMPOUND's reply as proc's NFSv3 result, for the caller's take(). */
static int take4(void *res, void *arg)
{
	COMPOUND4res *r = res;
	struct v4call *v = arg;
	nfs_resop4 mres;
	nfs_resop4 *m;
	nfsstat3 st;

	if (!results_match(r, v))
		return -EIO;
	m = v->i_main >= 0 && res_op(r, (unsigned)v->i_main, &mres) ? &mres : NULL;
	st = status3(r);
	if (st == NFS3_OK && v->i_main >= 0 && !m)
		return -EIO;	/* every op done, and its result missing */
	switch (v->proc) {
	case NFS3_GETATTR: {
		GETATTR3res out = { .status = st };
		struct attrs4 at;

		if (st == NFS3_OK) {
			if (!res_attrs(r, (unsigned)v->i_attr, &at))
				return -EIO;
			out.GETATTR3res_u.resok.obj_attributes = at.a;
		}
		return v->take(&out, v->arg);
	}
	case NFS3_SETATTR: {
		SETATTR3res out;

		memset(&out, 0, sizeof(out));
		/* the SETATTR done and only the GETATTR after it failed */
		out.status = m && op_status(r, v->i_main) == NFS4_OK ? NFS3_OK : st;
		if (out.status == NFS3_OK)
			post_attr(&out.SETATTR3res_u.resok.obj_wcc.after, r,
				  (unsigned)v->i_attr);
		return v->take(&out, v->arg);
	}
	case NFS3_LOOKUP: {
		LOOKUP3res out;
		LOOKUP3resok *ok = &out.LOOKUP3res_u.resok;

		memset(&out, 0, sizeof(out));
		/* found, even if only the GETATTR after failed */
		out.status = op_status(r, v->i_fh) == NFS4_OK ? NFS3_OK : st;
		st = out.status;
		/* resok's and resfail's dir_attributes: the reader picks one */
		post_attr(st == NFS3_OK ? &ok->dir_attributes :
			  &out.LOOKUP3res_u.resfail.dir_attributes, r,
			  (unsigned)v->i_dirattr);
		if (st == NFS3_OK) {
			if (!res_fh(r, (unsigned)v->i_fh, &ok->object))
				return -EIO;
			post_attr(&ok->obj_attributes, r, (unsigned)v->i_attr);
		}
		return v->take(&out, v->arg);
	}
	case NFS3_READLINK: {
		READLINK3res out;
		linktext4 *t;
		char *s = NULL;
		int err;

		memset(&out, 0, sizeof(out));
		out.status = st;
		if (st == NFS3_OK) {
			t = &m->nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link;
			if (!server_bytes_ok(t->utf8string_val, t->utf8string_len))
				return -EIO;
			/* as over NFSv3 (dcnfs__readlink) */
			if (t->utf8string_len > DC_PATH_MAX - 1)
				return -ENAMETOOLONG;
			s = malloc((size_t)t->utf8string_len + 1);
			if (!s)
				return -ENOMEM;
			memcpy(s, t->utf8string_val, t->utf8string_len);
			s[t->utf8string_len] = '\0';
			out.READLINK3res_u.resok.data = s;
		}
		err = v->take(&out, v->arg);
		free(s);
		return err;
	}
	case NFS3_READ: {
		READ3res out;
		READ4resok *in;

		memset(&out, 0, sizeof(out));
		out.status = st;
		if (st == NFS3_OK) {
			in = &m->nfs_resop4_u.opread.READ4res_u.resok4;
			out.READ3res_u.resok.count = in->data.data_len;
			out.READ3res_u.resok.eof = in->eof;
			out.READ3res_u.resok.data.data_len = in->data.data_len;
			out.READ3res_u.resok.data.data_val = in->data.data_val;
		}
		return v->take(&out, v->arg);
	}
	case NFS3_WRITE: {
		WRITE3res out;
		WRITE4resok *in;

		memset(&out, 0, sizeof(out));
		out.status = st;
		if (st == NFS3_OK) {
			in = &m->nfs_resop4_u.opwrite.WRITE4res_u.resok4;
			out.WRITE3res_u.resok.count = in->count;
			out.WRITE3res_u.resok.committed = (stable_how)in->committed;
			memcpy(out.WRITE3res_u.resok.verf, in->writeverf,
			       sizeof(out.WRITE3res_u.resok.verf));
		}
		return v->take(&out, v->arg);
	}
	case NFS3_COMMIT: {
		COMMIT3res out;

		memset(&out, 0, sizeof(out));
		out.status = st;
		if (st == NFS3_OK)
			memcpy(out.COMMIT3res_u.resok.verf,
			       m->nfs_resop4_u.opcommit.COMMIT4res_u.resok4.writeverf,
			       sizeof(out.COMMIT3res_u.resok.verf));
		return v->take(&out, v->arg);
	}
	case NFS3_CREATE:
	case NFS3_MKDIR:
	case NFS3_SYMLINK:
	case NFS3_MKNOD:
		return take_made4(r, v, m, st);
	case NFS3_REMOVE:
	case NFS3_RMDIR: {
		nfsstat4 vs = op_status(r, v->i_attr);
		nfsstat3 out = st;

		/* the (N)VERIFY that stopped it: the type was wrong */
		if (vs == NFS4ERR_NOT_SAME)
			out = NFS3ERR_NOTDIR;
		else if (vs == NFS4ERR_SAME)
			out = NFS3ERR_ISDIR;
		return v->take(&out, v->arg);
	}
	case NFS3_RENAME:
		return v->take(&st, v->arg);
	case NFS3_LINK: {
		LINK3res out;

		memset(&out, 0, sizeof(out));
		out.status = m && op_status(r, v->i_main) == NFS4_OK ? NFS3_OK : st;
		if (out.status == NFS3_OK)
			post_attr(&out.LINK3res_u.resok.file_attributes, r,
				  (unsigned)v->i_attr);
		return v->take(&out, v->arg);
	}
	case NFS3_FSSTAT: {
		FSSTAT3res out;
		FSSTAT3resok *ok = &out.FSSTAT3res_u.resok;
		struct attrs4 at;

		memset(&out, 0, sizeof(out));
		out.status = st;
		if (st == NFS3_OK) {
			if (!res_attrs(r, (unsigned)v->i_attr, &at))
				return -EIO;
			ok->tbytes = at.space_total;
			ok->fbytes = at.space_free;
			ok->abytes = at.space_avail;
			ok->tfiles = at.files_total;
			ok->ffiles = at.files_free;
			ok->afiles = at.files_avail;
		}
		return v->take(&out, v->arg);
	}
	case NFS3_READDIR:
		return take_readdir(r, v);
	case NFSRPC_ROOT: {
		nfs_fh3 fh;

		if (st != NFS3_OK)
			return nfs3_errno(st);
		if (!res_fh(r, (unsigned)v->i_fh, &fh))
			return -EIO;
		return v->take(&fh, v->arg);
	}
	default:
		return -EIO;
	}
}

/* ---- state: the client ID, and closing what CREATE opened ------------------ */

static int take_setclientid(void *res, void *arg)
{
	COMPOUND4res *r = res;
	SETCLIENTID4resok *ok;
	nfs_resop4 o;
	int err = nfs4_errno(r->status);

	if (err)
		return err;
	if (!res_op(r, 0, &o) || o.resop != OP_SETCLIENTID ||
	    o.nfs_resop4_u.opsetclientid.status != NFS4_OK)
		return -EIO;
	ok = &o.nfs_resop4_u.opsetclientid.SETCLIENTID4res_u.resok4;
	memcpy(arg, ok, sizeof(*ok));
	return 0;
}

static int take_status4(void *res, void *arg)
{
	(void)arg;
	return nfs4_errno(((COMPOUND4res *)res)->status);
}

/* One COMPOUND of c on rpc, its reply to take(arg). */
static int send_compound(struct nfsrpc *r, struct rpc_context *rpc,
			 struct compound *c, int (*take)(void *, void *),
			 void *arg, struct call *call)
{
	call->take = take;
	call->arg = arg;
	c->args.argarray.argarray_val = c->ops;
	if (rpc_nfs4_compound_async(rpc, nfsrpc__done, &c->args, call) < 0)
		return -ENOMEM;
	return nfsrpc__wait(r, rpc, call);
}

/* The client ID OPEN needs, set up with the server on first use (and
 * after the server forgot it: stale is the one it refused).  Under
 * r->v4lock, so one thread sets it up while the others wait. */
static int client_id(struct nfsrpc *r, struct rpc_context *rpc,
		     uint64_t stale, uint64_t *id_out, struct call *out)
{
	struct compound c;
	SETCLIENTID4resok ok;
	SETCLIENTID4args *s;
	struct utsname host;
	char id[128];
	int err = 0;

	pthread_mutex_lock(&r->v4lock);
	if (r->v4clientid && r->v4clientid != stale)
		goto out;
	memset(&c, 0, sizeof(c));
	s = &op(&c, OP_SETCLIENTID)->nfs_argop4_u.opsetclientid;
	/* the verifier: a new one each time this process sets up, so the
	 * server drops any state of the ID's earlier incarnation */
	memcpy(s->client.verifier, &r->v4verf, sizeof(s->client.verifier));
	r->v4verf++;
	snprintf(id, sizeof(id), "dcnfs.%.64s.%d.%016" PRIx64,
		 uname(&host) == 0 ? host.nodename : "?", (int)getpid(),
		 r->v4nonce);
	s->client.id.id_len = (u_int)strlen(id);
	s->client.id.id_val = id;
	s->callback.cb_program = 0;	/* no callbacks: no delegations */
	s->callback.cb_location.r_netid = "tcp";
	s->callback.cb_location.r_addr = "0.0.0.0.0.0";
	out->done = out->answered = out->broken = 0;
	err = send_compound(r, rpc, &c, take_setclientid, &ok, out);
	if (err)
		goto out;
	memset(&c, 0, sizeof(c));
	{
		SETCLIENTID_CONFIRM4args *a =
			&op(&c, OP_SETCLIENTID_CONFIRM)->nfs_argop4_u
			 .opsetclientid_confirm;

		a->clientid = ok.clientid;
		memcpy(a->setclientid_confirm, ok.setclientid_confirm,
		       sizeof(a->setclientid_confirm));
	}
	out->done = out->answered = out->broken = 0;
	err = send_compound(r, rpc, &c, take_status4, NULL, out);
	if (!err)
		r->v4clientid = ok.clientid;
out:
	*id_out = r->v4clientid;
	pthread_mutex_unlock(&r->v4lock);
	return err;
}

/* CREATE's OPEN, closed again (after OPEN_CONFIRM where the server asks
 * for it).  Its failures lose nothing: the file is made, and the server
 * drops the state when the lease ends. */
static void close_open(struct nfsrpc *r, struct rpc_context *rpc,
		       struct v4call *v, const nfs_fh3 *fh, struct call *out)
{
	struct compound c;
	CLOSE4args *cl;
	seqid4 seqid = 1;

	memset(&c, 0, sizeof(c));
	op_putfh(&c, fh);
	if (v->confirm & OPEN4_RESULT_CONFIRM) {
		OPEN_CONFIRM4args *oc =
			&op(&c, OP_OPEN_CONFIRM)->nfs_argop4_u.opopen_confirm;

		oc->open_stateid = v->sid;
		oc->seqid = seqid++;
		/* OPEN_CONFIRM's stateid is OPEN's with the next seqid */
		v->sid.seqid++;
	}
	cl = &op(&c, OP_CLOSE)->nfs_argop4_u.opclose;
	cl->seqid = seqid;
	cl->open_stateid = v->sid;
	out->done = out->answered = out->broken = 0;
	(void)send_compound(r, rpc, &c, take_status4, NULL, out);
}

/* CREATE's caller's take, seeing the handle CLOSE needs on the way. */
struct create_take {
	int (*take)(void *res, void *arg);
	void *arg;
	nfs_fh3 fh;
	unsigned char data[NFS4_FHSIZE];
	int have_fh;
};

static int take_create(void *res, void *arg)
{
	CREATE3res *out = res;
	struct create_take *t = arg;
	post_op_fh3 *h = &out->CREATE3res_u.resok.obj;

	if (out->status == NFS3_OK && h->handle_follows &&
	    h->post_op_fh3_u.handle.data.data_len <= sizeof(t->data)) {
		t->fh.data.data_len = h->post_op_fh3_u.handle.data.data_len;
		memcpy(t->data, h->post_op_fh3_u.handle.data.data_val,
		       t->fh.data.data_len);
		t->fh.data.data_val = (char *)t->data;
		t->have_fh = 1;
	}
	return t->take(res, t->arg);
}

/*
 * Every RPC of one exchange goes through c, the caller's: should one time
 * out, nfsrpc_call destroys the connection, and libnfs then calls the
 * callback of what is still queued, which must find live memory.
 */
int nfs4_exchange(struct nfsrpc *r, struct rpc_context *rpc, int proc,
		  void *args, struct call *c)
{
	struct v4call v = { .proc = proc, .take = c->take, .arg = c->arg };
	struct create_take ct = { .take = c->take, .arg = c->arg };
	struct open_owner own;
	struct compound cmp;
	uint64_t stale = 0;
	int err, tries, opened;

	for (tries = 0; tries < 2; tries++) {
		if (proc == NFS3_CREATE) {
			err = client_id(r, rpc, stale, &v.clientid, c);
			if (err) {
				/* no OPEN sent: safe to send again, after a
				 * failure as after a server's "later" (DELAY),
				 * which nfsrpc_call tells by the answer */
				if (err != -EAGAIN)
					c->answered = 0;
				return err;
			}
			v.take = take_create;
			v.arg = &ct;
		}
		memset(&cmp, 0, sizeof(cmp));
		err = build(r, &cmp, &v, args, &own);
		if (err) {
			c->done = 1;
			c->broken = c->answered = 0;
			return c->err = err;
		}
		record_sent(&v, &cmp);
		stale = v.clientid;
		v.stale_clientid = v.confirm = 0;
		c->done = c->answered = c->broken = 0;
		err = send_compound(r, rpc, &cmp, take4, &v, c);
		/* CREATE's OPEN refused for a client ID the server forgot:
		 * set up a new one and OPEN once more */
		if (!c->answered || !v.stale_clientid)
			break;
	}
	/* what OPEN opened is closed even if the caller's take failed */
	if (proc == NFS3_CREATE && c->answered && !c->broken &&
	    (v.confirm & 1) && ct.have_fh) {
		opened = c->answered;
		close_open(r, rpc, &v, &ct.fh, c);
		c->answered = opened;	/* OPEN's answer stands */
	}
	return err;
}
