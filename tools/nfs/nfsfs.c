// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfsfs.c - a libdcache backend over an NFSv3 export, on libnfs's raw RPC
 * calls.
 *
 * Handles: libnfs's own file API is path-based (and would send a LOOKUP
 * per component of every path it is given); the cache asks by directory
 * and name, which is what NFSv3's LOOKUP takes.  So the backend speaks
 * the protocol itself: one MNT at open gives the export's root handle,
 * and every inode's cookie is a struct fh (its handle) the backend
 * allocated, freed by release.  The root's cookie is the context's own
 * handle, so root() may be called any number of times and releasing the
 * root frees nothing.  Handles are the server's, valid on any connection.
 *
 * Connections: a libnfs rpc_context serves one thread at a time.  Idle
 * connections wait in a stack under fs->lock; a call takes one (or
 * connects a new one), uses it alone, and gives it back, or destroys it
 * when its transport failed.  So there are as many connections as
 * threads that ever called at once, each connected once.
 *
 * Calls: each RPC is queued and then driven by a poll loop on the
 * context's descriptor until its callback ran or the timeout passed.  The
 * callback copies what the caller needs out of the reply (libnfs frees it
 * afterwards).  An RPC whose connection failed (the server restarted, say)
 * is sent once more on a new one: every RPC here only reads, so sending it
 * twice is harmless.
 *
 * Attributes: ino is the fileid, mode the type (from ftype3) and the
 * permission bits, gen the low bits of the fsid, so that an export
 * spanning file systems never shows two inodes as one.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "nfs/nfsfs.h"

#define NFSFS_TIMEOUT_MS	10000
#define NFSFS_READDIR_BYTES	32768	/* one READDIR reply at most */

enum nfsfs_stat { ST_LOOKUP, ST_GETATTR, ST_READDIR, ST_READLINK, ST_CONNECT,
		  ST_RETRY, ST_NR };

struct fh {
	uint32_t len;
	char data[NFS3_FHSIZE];
};

struct conn {
	struct rpc_context *rpc;
	struct conn *next;	/* in fs->idle */
};

struct nfsfs {
	char *server;
	char *export;
	int timeout_ms;
	struct fh root;		/* the export's root, from MNT */
	pthread_mutex_t lock;	/* idle */
	struct conn *idle;	/* connections no thread uses now */
	uint64_t stats[ST_NR];	/* atomic */
};

static void count(struct nfsfs *fs, enum nfsfs_stat s)
{
	/* relaxed: counters, ordered against nothing */
	__atomic_add_fetch(&fs->stats[s], 1, __ATOMIC_RELAXED);
}

/* ---- one RPC, synchronously ------------------------------------------- */

/*
 * An RPC in flight: take() reads the reply inside the callback (which
 * owns it) into arg and answers 0 or a negative errno.  broken: the
 * transport failed, the connection is not to be used again.
 */
struct call {
	int (*take)(void *res, void *arg);
	void *arg;
	int done;
	int err;
	int broken;
};

static void call_done(struct rpc_context *rpc, int status, void *data,
		      void *priv)
{
	struct call *c = priv;

	(void)rpc;
	c->done = 1;
	if (status == RPC_STATUS_SUCCESS) {
		c->err = c->take ? c->take(data, c->arg) : 0;
		return;
	}
	c->broken = 1;
	c->err = status == RPC_STATUS_TIMEOUT ? -ETIMEDOUT : -EIO;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Drive rpc until c's callback ran: 0, or a negative errno (the
 * connection is then broken). */
static int wait_call(struct nfsfs *fs, struct rpc_context *rpc, struct call *c)
{
	int64_t deadline = now_ms() + fs->timeout_ms;

	while (!c->done) {
		struct pollfd p = { .fd = rpc_get_fd(rpc), .events = rpc_which_events(rpc) };
		int64_t left = deadline - now_ms();
		int n;

		if (left <= 0) {
			c->broken = 1;
			return -ETIMEDOUT;
		}
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno != EINTR) {
			c->broken = 1;
			return -errno;
		}
		if (n > 0 && rpc_service(rpc, p.revents) < 0 && !c->done) {
			c->broken = 1;
			return -EIO;
		}
	}
	return c->err;
}

/* A new connection to program/version on the server into *out. */
static int connect_rpc(struct nfsfs *fs, int program, int version,
		       struct rpc_context **out)
{
	struct call c = { 0 };
	struct rpc_context *rpc = rpc_init_context();
	int err;

	if (!rpc)
		return -ENOMEM;
	if (rpc_connect_program_async(rpc, fs->server, program, version,
				      call_done, &c) < 0) {
		rpc_destroy_context(rpc);
		return -ECONNREFUSED;
	}
	err = wait_call(fs, rpc, &c);
	if (err) {
		rpc_destroy_context(rpc);
		return err == -EIO ? -ECONNREFUSED : err;
	}
	*out = rpc;
	return 0;
}

/* An idle connection to the NFS service, or a new one. */
static int get_conn(struct nfsfs *fs, struct conn **out)
{
	struct conn *cn;
	int err;

	pthread_mutex_lock(&fs->lock);
	cn = fs->idle;
	if (cn)
		fs->idle = cn->next;
	pthread_mutex_unlock(&fs->lock);
	if (cn) {
		*out = cn;
		return 0;
	}
	cn = malloc(sizeof(*cn));
	if (!cn)
		return -ENOMEM;
	err = connect_rpc(fs, NFS_PROGRAM, NFS_V3, &cn->rpc);
	if (err) {
		free(cn);
		return err;
	}
	count(fs, ST_CONNECT);
	*out = cn;
	return 0;
}

static void drop_conn(struct conn *cn)
{
	rpc_destroy_context(cn->rpc);
	free(cn);
}

static void put_conn(struct nfsfs *fs, struct conn *cn)
{
	pthread_mutex_lock(&fs->lock);
	cn->next = fs->idle;
	fs->idle = cn;
	pthread_mutex_unlock(&fs->lock);
}

typedef int (*send_fn)(struct rpc_context *rpc, rpc_cb cb, void *args,
		       void *priv);

/*
 * Send one NFS RPC (send with args) and wait for it; take reads its
 * reply.  A connection whose transport failed is dropped, and the RPC
 * sent once more on a new one.
 */
static int nfs_call(struct nfsfs *fs, enum nfsfs_stat kind, send_fn send,
		    void *args, int (*take)(void *res, void *arg), void *arg)
{
	int tries, err = -EIO;

	for (tries = 0; tries < 2; tries++) {
		struct call c = { .take = take, .arg = arg };
		struct conn *cn;

		if (tries)
			count(fs, ST_RETRY);
		err = get_conn(fs, &cn);
		if (err)
			return err;
		count(fs, kind);
		if (send(cn->rpc, call_done, args, &c) < 0) {
			drop_conn(cn);
			continue;
		}
		err = wait_call(fs, cn->rpc, &c);
		if (!c.broken) {
			put_conn(fs, cn);
			return err;
		}
		/* destroying the context cancels c: its callback may run
		 * now, while c is still ours */
		drop_conn(cn);
	}
	return err;
}

/* The libnfs calls, each under the one type send_fn has. */
static int send_lookup(struct rpc_context *rpc, rpc_cb cb, void *args, void *priv)
{
	return rpc_nfs3_lookup_async(rpc, cb, args, priv);
}

static int send_getattr(struct rpc_context *rpc, rpc_cb cb, void *args, void *priv)
{
	return rpc_nfs3_getattr_async(rpc, cb, args, priv);
}

static int send_readlink(struct rpc_context *rpc, rpc_cb cb, void *args, void *priv)
{
	return rpc_nfs3_readlink_async(rpc, cb, args, priv);
}

static int send_readdir(struct rpc_context *rpc, rpc_cb cb, void *args, void *priv)
{
	return rpc_nfs3_readdir_async(rpc, cb, args, priv);
}

/* ---- replies ------------------------------------------------------------ */

static int nfs3_errno(nfsstat3 st)
{
	switch (st) {
	case NFS3_OK:			return 0;
	case NFS3ERR_PERM:		return -EPERM;
	case NFS3ERR_NOENT:		return -ENOENT;
	case NFS3ERR_NXIO:		return -ENXIO;
	case NFS3ERR_ACCES:		return -EACCES;
	case NFS3ERR_EXIST:		return -EEXIST;
	case NFS3ERR_XDEV:		return -EXDEV;
	case NFS3ERR_NODEV:		return -ENODEV;
	case NFS3ERR_NOTDIR:		return -ENOTDIR;
	case NFS3ERR_ISDIR:		return -EISDIR;
	case NFS3ERR_INVAL:		return -EINVAL;
	case NFS3ERR_FBIG:		return -EFBIG;
	case NFS3ERR_NOSPC:		return -ENOSPC;
	case NFS3ERR_ROFS:		return -EROFS;
	case NFS3ERR_MLINK:		return -EMLINK;
	case NFS3ERR_NAMETOOLONG:	return -ENAMETOOLONG;
	case NFS3ERR_NOTEMPTY:		return -ENOTEMPTY;
	case NFS3ERR_DQUOT:		return -EDQUOT;
	case NFS3ERR_STALE:		/* the inode is gone */
	case NFS3ERR_BADHANDLE:		return -ESTALE;
	case NFS3ERR_REMOTE:		return -EREMOTE;
	case NFS3ERR_NOTSUPP:		return -EOPNOTSUPP;
	case NFS3ERR_JUKEBOX:		return -EAGAIN;
	case NFS3ERR_BADTYPE:		return -EINVAL;
	default:			return -EIO;	/* IO, SERVERFAULT, ... */
	}
}

static uint32_t type_bits(ftype3 t)
{
	switch (t) {
	case NF3REG:	return S_IFREG;
	case NF3DIR:	return S_IFDIR;
	case NF3BLK:	return S_IFBLK;
	case NF3CHR:	return S_IFCHR;
	case NF3LNK:	return S_IFLNK;
	case NF3SOCK:	return S_IFSOCK;
	case NF3FIFO:	return S_IFIFO;
	default:	return 0;	/* the cache refuses it: -EIO */
	}
}

static void attr_fill(const fattr3 *a, struct dc_inode *out)
{
	out->ino = a->fileid;
	out->mode = type_bits(a->type) | (a->mode & 07777);
	out->gen = (uint32_t)a->fsid;
}

static int fh_copy(struct fh *to, const nfs_fh3 *from)
{
	if (from->data.data_len == 0 || from->data.data_len > NFS3_FHSIZE)
		return -EIO;
	to->len = from->data.data_len;
	memcpy(to->data, from->data.data_val, to->len);
	return 0;
}

static void fh_arg(nfs_fh3 *to, const struct fh *from)
{
	to->data.data_len = from->len;
	to->data.data_val = (char *)from->data;
}

static struct fh *cookie_fh(uint64_t cookie)
{
	return (struct fh *)(uintptr_t)cookie;
}

/* What a LOOKUP answered: the handle and, when the server sent them, the
 * attributes (have_attr). */
struct lookup_out {
	struct fh fh;
	struct dc_inode in;
	int have_attr;
};

static int take_lookup(void *res, void *arg)
{
	LOOKUP3res *r = res;
	struct lookup_out *o = arg;
	LOOKUP3resok *ok = &r->LOOKUP3res_u.resok;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	err = fh_copy(&o->fh, &ok->object);
	if (err)
		return err;
	o->have_attr = ok->obj_attributes.attributes_follow;
	if (o->have_attr)
		attr_fill(&ok->obj_attributes.post_op_attr_u.attributes, &o->in);
	return 0;
}

static int take_getattr(void *res, void *arg)
{
	GETATTR3res *r = res;
	int err = nfs3_errno(r->status);

	if (!err)
		attr_fill(&r->GETATTR3res_u.resok.obj_attributes, arg);
	return err;
}

/* The attributes of the inode handle h names, into *out (cookie kept). */
static int getattr_fh(struct nfsfs *fs, const struct fh *h, struct dc_inode *out)
{
	GETATTR3args a;

	fh_arg(&a.object, h);
	return nfs_call(fs, ST_GETATTR, send_getattr, &a, take_getattr, out);
}

/* ---- the backend ---------------------------------------------------------- */

static int nfsfs_root(void *ctx, struct dc_inode *out)
{
	struct nfsfs *fs = ctx;
	int err;

	if (!out)
		return -EINVAL;
	err = getattr_fh(fs, &fs->root, out);
	if (!err)
		out->cookie = (uintptr_t)&fs->root;
	return err;
}

/* A handle the backend allocated; the root's is the context's own. */
static void nfsfs_release(void *ctx, const struct dc_inode *inode)
{
	struct nfsfs *fs = ctx;
	struct fh *h;

	if (!inode)
		return;
	h = cookie_fh(inode->cookie);
	if (h && h != &fs->root)
		free(h);
}

/* One component: NFS servers may walk "." and "..", and '/' or a NUL
 * would not be one name; the cache sends none of these, but a caller
 * of the ops might. */
static int name_check(const char *name, size_t len)
{
	if (!name || !len)
		return -EINVAL;
	if (len > DC_NAME_MAX)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, '\0', len))
		return -EINVAL;
	if (name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')))
		return -EINVAL;
	return 0;
}

static int lookup_fh(struct nfsfs *fs, const struct dc_inode *dir,
		     const char *name, size_t len, struct dc_inode *out)
{
	char buf[DC_NAME_MAX + 1];
	struct lookup_out o = { .have_attr = 0 };
	LOOKUP3args a;
	struct fh *h;
	int err;

	if (!dir || !out)
		return -EINVAL;
	err = name_check(name, len);
	if (err)
		return err;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (!cookie_fh(dir->cookie))
		return -ESTALE;
	memcpy(buf, name, len);
	buf[len] = '\0';
	fh_arg(&a.what.dir, cookie_fh(dir->cookie));
	a.what.name = buf;
	err = nfs_call(fs, ST_LOOKUP, send_lookup, &a, take_lookup, &o);
	if (!err && !o.have_attr)	/* post_op attributes are optional */
		err = getattr_fh(fs, &o.fh, &o.in);
	if (err)
		return err;
	h = malloc(sizeof(*h));
	if (!h)
		return -ENOMEM;
	*h = o.fh;
	*out = o.in;
	out->cookie = (uintptr_t)h;
	return 0;
}

static int nfsfs_lookup(void *ctx, const struct dc_inode *dir,
			const char *name, size_t len, struct dc_inode *out)
{
	return lookup_fh(ctx, dir, name, len, out);
}

/* The cache is told of a name its caller made: look it up for our own
 * handle, and check it is still the caller's inode (-ESTALE if not). */
static int nfsfs_adopt(void *ctx, const struct dc_inode *dir,
		       const char *name, size_t len, struct dc_inode *inode)
{
	struct dc_inode found;
	int err;

	if (!inode)
		return -EINVAL;
	err = lookup_fh(ctx, dir, name, len, &found);
	if (err)
		return err;
	if (found.ino != inode->ino || found.gen != inode->gen ||
	    (found.mode & S_IFMT) != (inode->mode & S_IFMT)) {
		nfsfs_release(ctx, &found);
		return -ESTALE;
	}
	*inode = found;
	return 0;
}

static int nfsfs_getattr(void *ctx, struct dc_inode *inode)
{
	struct dc_inode in;
	int err;

	if (!inode)
		return -EINVAL;
	if (!cookie_fh(inode->cookie))
		return -ESTALE;
	err = getattr_fh(ctx, cookie_fh(inode->cookie), &in);
	if (err)
		return err;
	in.cookie = inode->cookie;
	*inode = in;
	return 0;
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

static int nfsfs_readlink(void *ctx, const struct dc_inode *link, char *buf,
			  size_t size)
{
	struct readlink_out o = { .buf = buf, .size = size };
	READLINK3args a;
	int err;

	if (!link || !buf || !size || !S_ISLNK(link->mode))
		return -EINVAL;
	if (!cookie_fh(link->cookie))
		return -ESTALE;
	fh_arg(&a.symlink, cookie_fh(link->cookie));
	err = nfs_call(ctx, ST_READLINK, send_readlink, &a, take_readlink, &o);
	return err ? err : o.len;
}

/* One READDIR page: its names go to emit as they are read; where to go
 * on from (cookie, verf) and whether that was the last page. */
struct readdir_page {
	int (*emit)(void *arg, const char *name, size_t len);
	void *arg;
	int stop;		/* what emit returned, when not 0 */
	cookie3 cookie;
	cookieverf3 verf;
	int eof;
};

static int take_readdir(void *res, void *arg)
{
	READDIR3res *r = res;
	struct readdir_page *p = arg;
	READDIR3resok *ok = &r->READDIR3res_u.resok;
	const entry3 *e;
	entry3 ent;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	memcpy(p->verf, ok->cookieverf, sizeof(p->verf));
	for (e = ok->reply.entries; e; e = ent.nextentry) {
		/* libnfs 4.0's decoder lays entries out 4-byte aligned (their
		 * cookie is 64 bits): each is copied out, never read in place */
		memcpy(&ent, e, sizeof(ent));
		p->cookie = ent.cookie;
		p->stop = p->emit(p->arg, ent.name, strlen(ent.name));
		if (p->stop)
			return 0;
	}
	p->eof = ok->reply.eof;
	/* a page with no entry and no eof would be asked for forever */
	return ok->reply.entries || p->eof ? 0 : -EIO;
}

static int nfsfs_readdir(void *ctx, const struct dc_inode *dir,
			 int (*emit)(void *arg, const char *name, size_t len),
			 void *arg)
{
	struct readdir_page p = { .emit = emit, .arg = arg };
	READDIR3args a;
	int err;

	if (!dir || !emit)
		return -EINVAL;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (!cookie_fh(dir->cookie))
		return -ESTALE;
	fh_arg(&a.dir, cookie_fh(dir->cookie));
	a.count = NFSFS_READDIR_BYTES;
	do {
		a.cookie = p.cookie;
		memcpy(a.cookieverf, p.verf, sizeof(a.cookieverf));
		err = nfs_call(ctx, ST_READDIR, send_readdir, &a, take_readdir, &p);
		if (err)
			return err;
		if (p.stop)
			return p.stop;
	} while (!p.eof);
	return 0;
}

static void nfsfs_free(struct nfsfs *fs)
{
	struct conn *cn;

	while ((cn = fs->idle)) {
		fs->idle = cn->next;
		drop_conn(cn);
	}
	pthread_mutex_destroy(&fs->lock);
	free(fs->server);
	free(fs->export);
	free(fs);
}

static void nfsfs_destroy(void *ctx)
{
	nfsfs_free(ctx);
}

static const struct dc_backend_ops nfsfs_ops = {
	.root		= nfsfs_root,
	.lookup		= nfsfs_lookup,
	.getattr	= nfsfs_getattr,
	.readlink	= nfsfs_readlink,
	.release	= nfsfs_release,
	.destroy	= nfsfs_destroy,
	.adopt		= nfsfs_adopt,
	.readdir	= nfsfs_readdir,
};

/* ---- opening ------------------------------------------------------------------ */

static int mnt_errno(mountstat3 st)
{
	switch (st) {
	case MNT3_OK:			return 0;
	case MNT3ERR_PERM:		return -EPERM;
	case MNT3ERR_NOENT:		return -ENOENT;
	case MNT3ERR_ACCES:		return -EACCES;
	case MNT3ERR_NOTDIR:		return -ENOTDIR;
	case MNT3ERR_INVAL:		return -EINVAL;
	case MNT3ERR_NAMETOOLONG:	return -ENAMETOOLONG;
	case MNT3ERR_NOTSUPP:		return -EOPNOTSUPP;
	default:			return -EIO;
	}
}

static int take_mnt(void *res, void *arg)
{
	mountres3 *r = res;
	const fhandle3 *h = &r->mountres3_u.mountinfo.fhandle;
	struct fh *root = arg;
	int err = mnt_errno(r->fhs_status);

	if (err)
		return err;
	if (h->fhandle3_len == 0 || h->fhandle3_len > NFS3_FHSIZE)
		return -EIO;
	root->len = h->fhandle3_len;
	memcpy(root->data, h->fhandle3_val, root->len);
	return 0;
}

/* The export's root handle, from one MNT on a connection of its own. */
static int mount_root(struct nfsfs *fs)
{
	struct call c = { .take = take_mnt, .arg = &fs->root };
	struct rpc_context *rpc;
	int err;

	err = connect_rpc(fs, MOUNT_PROGRAM, MOUNT_V3, &rpc);
	if (err)
		return err;
	if (rpc_mount3_mnt_async(rpc, call_done, fs->export, &c) < 0)
		err = -ENOMEM;
	else
		err = wait_call(fs, rpc, &c);
	rpc_destroy_context(rpc);
	return err;
}

/* "nfs://HOST/EXPORT[?version=3]" into fs->server and fs->export. */
static int parse_url(struct nfsfs *fs, const char *url, int *version)
{
	const char *host, *path, *query;

	if (strncmp(url, "nfs://", 6))
		return -EINVAL;
	host = url + 6;
	path = strchr(host, '/');
	if (!path || path == host)
		return -EINVAL;
	query = strchr(path, '?');
	*version = 3;
	if (query) {
		if (!strcmp(query, "?version=4"))
			*version = 4;
		else if (strcmp(query, "?version=3"))
			return -EINVAL;
	} else {
		query = path + strlen(path);
	}
	if (memchr(host, ':', (size_t)(path - host)))	/* ports come from rpcbind */
		return -EINVAL;
	fs->server = strndup(host, (size_t)(path - host));
	fs->export = strndup(path, (size_t)(query - path));
	return fs->server && fs->export ? 0 : -ENOMEM;
}

int dcnfs_open(const char *url, const struct dcnfs_options *opt,
	       struct dc_backend *out)
{
	struct nfsfs *fs;
	int err, i, version;

	if (!url || !out)
		return -EINVAL;
	if (opt && opt->reserved32)
		return -EINVAL;
	for (i = 0; opt && i < 3; i++)
		if (opt->reserved[i])
			return -EINVAL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	fs->timeout_ms = opt && opt->timeout_ms ? (int)(opt->timeout_ms > INT_MAX ?
			 INT_MAX : opt->timeout_ms) : NFSFS_TIMEOUT_MS;
	err = pthread_mutex_init(&fs->lock, NULL);
	if (err) {
		free(fs);
		return -err;
	}
	err = parse_url(fs, url, &version);
	if (!err && version != 3)
		err = -EPROTONOSUPPORT;
	if (!err)
		err = mount_root(fs);
	if (err) {
		nfsfs_free(fs);
		return err;
	}
	out->ops = &nfsfs_ops;
	out->ctx = fs;
	return 0;
}

void dcnfs_stats(const struct dc_backend *be, struct dcnfs_stats *st)
{
	const struct nfsfs *fs;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!be || be->ops != &nfsfs_ops)
		return;
	fs = be->ctx;
	st->lookups = __atomic_load_n(&fs->stats[ST_LOOKUP], __ATOMIC_RELAXED);
	st->getattrs = __atomic_load_n(&fs->stats[ST_GETATTR], __ATOMIC_RELAXED);
	st->readdirs = __atomic_load_n(&fs->stats[ST_READDIR], __ATOMIC_RELAXED);
	st->readlinks = __atomic_load_n(&fs->stats[ST_READLINK], __ATOMIC_RELAXED);
	st->connects = __atomic_load_n(&fs->stats[ST_CONNECT], __ATOMIC_RELAXED);
	st->retries = __atomic_load_n(&fs->stats[ST_RETRY], __ATOMIC_RELAXED);
}
