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
 * Attributes: ino is the fileid, mode the type (from ftype3) and the
 * permission bits, uid and gid the owner's numbers, gen the fsid folded
 * to 32 bits (nfsrpc_fsid32), so that an export spanning file systems
 * never shows two inodes as one.
 *
 * Change detection (revalidate), as Linux's NFSv3 client does it: NFSv3
 * has no change attribute, so a directory's (mtime, ctime, size) stands
 * for one.  Each handle remembers the attributes the server last showed
 * for its inode (every GETATTR, LOOKUP and READDIR reply carries some),
 * and a directory's handle numbers each new (mtime, ctime, size) it sees
 * with an epoch, unique across the backend.  An answer -- a LOOKUP's
 * handle or -ENOENT, a READDIR listing -- holds for the epoch the
 * directory's post-operation attributes in its reply show, if they vouch
 * for it: the rule, for an answer whose request was sent at client time
 * T, is that the reply carries the directory's attributes, and both its
 * mtime and ctime are more than a second older than T.  Then every later
 * change of the directory stamps a later time, so the same attributes
 * seen again mean no change since the answer; younger attributes may
 * hide a second change within the same timestamp tick (the file system's
 * granularity, up to a second on some), and their answer vouches for
 * nothing.  (It assumes the server's clock runs no more than a second,
 * less its timestamp granularity, behind the client's.)  An expired entry
 * then costs one GETATTR of its directory (none if the directory's
 * attributes are still trusted) and, when positive, the attributes of
 * its inode (one GETATTR, or those still trusted), and a LOOKUP only
 * when the directory changed or the answer vouched for nothing.
 * Attributes are trusted for acdir_ms after the RPC that showed them,
 * or longer, up to acdir_max_ms, when they showed an inode unchanged
 * for long (dcnfs_trust_ms: a tenth of its age).  Negative answers are remembered by (epoch, name) in a
 * small table, listings as the sorted hashes of their names (a name
 * whose hash is listed is checked with a LOOKUP).  All of this is under
 * fs->alock.
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

#include "nfs/rpc.h"

#define NFSFS_TIMEOUT_MS	10000
#define NFSFS_READDIR_BYTES	32768	/* one READDIR reply at most */
#define NFSFS_ACDIR_MS		100	/* opt->acdir_ms 0 */
#define NFSFS_YOUNG_NS		1000000000LL	/* see "Change detection" */
#define NFSFS_NEG_SLOTS		1024	/* negative answers remembered */
#define NFSFS_LIST_MAX		65536	/* names of a listing remembered */

/* A directory's stand-in for a change attribute. */
struct dattr {
	uint64_t mtime, ctime;	/* ns */
	uint64_t size;
};

/* A directory's names as a listing showed them under epoch: sorted hashes. */
struct listing {
	uint64_t epoch;
	uint32_t n;
	uint64_t keys[];
};

/* A handle, and what the server last said of its inode (under fs->alock). */
struct fh {
	uint32_t len;
	char data[NFS3_FHSIZE];
	struct dc_inode in;	/* its attributes (cookie unused) */
	fattr3 fa;		/* all of them, when seen_ms */
	int64_t seen_ms;	/* when the RPC that showed them was sent; 0: none */
	int64_t age_ms;		/* how long the inode had then been unchanged */
	uint64_t epoch;		/* a directory: its attributes' epoch; 0: none */
	struct dattr dir;	/* the attributes of that epoch */
	struct listing *list;	/* its names, listed under an epoch; or NULL */
	uint64_t answer;	/* as an answer in its parent: the parent's epoch
				 * it holds for; 0: none */
};

/* A negative answer: name was not in the directory of epoch (0: free). */
struct neg {
	uint64_t epoch;
	uint32_t len;
	char name[DC_NAME_MAX];
};

struct nfsfs {
	struct nfsrpc rpc;	/* the server, its connections, RPC counts */
	int64_t acdir_ms;	/* -1: attributes seen before are never reused */
	int64_t acdir_max_ms;	/* for inodes long unchanged (dcnfs_trust_ms) */
	struct fh root;		/* the export's root, from MNT */
	pthread_mutex_t alock;	/* what handles remember, epochs, negs */
	uint64_t epochs;	/* the last epoch given */
	struct neg *negs;	/* NFSFS_NEG_SLOTS */
};

/* One RPC that only reads, as root: sent again on a new connection if
 * its own failed. */
static int nfs_call(struct nfsfs *fs, enum rpc_kind kind, int proc,
		    void *args, int (*take)(void *res, void *arg), void *arg)
{
	return nfsrpc_call(&fs->rpc, kind, NULL, proc, args, take, arg, 0);
}

/* ---- replies ------------------------------------------------------------ */

static void attr_fill(const fattr3 *a, struct dc_inode *out)
{
	out->ino = a->fileid;
	out->mode = nfs3_type_bits(a->type) | (a->mode & 07777);
	out->gen = nfsrpc_fsid32(a->fsid);
	out->uid = a->uid;
	out->gid = a->gid;
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

static void fh_free(struct fh *h)
{
	free(h->list);
	free(h);
}

/* ---- what handles remember (fs->alock) ---------------------------------- */

/* When a request left: the monotonic clock for ages, the wall clock to
 * hold against the server's timestamps. */
struct sent {
	int64_t mono_ms;
	int64_t wall_ns;
};

static void sent_now(struct sent *s)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	s->wall_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	s->mono_ms = nfsrpc_now_ms();
}

static uint64_t time_ns(const nfstime3 *t)
{
	return (uint64_t)t->seconds * 1000000000u + t->nseconds;
}

/*
 * What an RPC sent at s says of h's inode (a, from its reply): kept
 * unless a later RPC's word is in already; a directory's epoch moves on
 * when its (mtime, ctime, size) differ from the last seen.  Returns the
 * epoch an answer in the same reply holds for: 0 when a is not a
 * directory's, is not what h holds now, or is too young to vouch for it
 * (see "Change detection").  alock held.
 */
static uint64_t observe_locked(struct nfsfs *fs, struct fh *h, const fattr3 *a,
			       const struct sent *s)
{
	struct dattr d = {
		.mtime = time_ns(&a->mtime), .ctime = time_ns(&a->ctime),
		.size = a->size,
	};
	uint64_t newest = d.mtime > d.ctime ? d.mtime : d.ctime;

	if (s->mono_ms >= h->seen_ms) {
		attr_fill(a, &h->in);
		h->fa = *a;
		h->seen_ms = s->mono_ms;
		/* no times (NFSv4 may leave them out): no age to trust */
		h->age_ms = newest ? (s->wall_ns - (int64_t)newest) / 1000000 : 0;
		if (a->type == NF3DIR &&
		    (!h->epoch || memcmp(&d, &h->dir, sizeof(d)))) {
			h->epoch = ++fs->epochs;
			h->dir = d;
			free(h->list);	/* names of another epoch */
			h->list = NULL;
		}
	}
	if (a->type != NF3DIR || !h->epoch || memcmp(&d, &h->dir, sizeof(d)))
		return 0;
	if (s->wall_ns - (int64_t)newest <= NFSFS_YOUNG_NS)
		return 0;
	return h->epoch;
}

static uint64_t observe(struct nfsfs *fs, struct fh *h, const fattr3 *a,
			const struct sent *s)
{
	uint64_t epoch;

	pthread_mutex_lock(&fs->alock);
	epoch = observe_locked(fs, h, a, s);
	pthread_mutex_unlock(&fs->alock);
	return epoch;
}

/* Were h's attributes seen recently enough to stand for a GETATTR:
 * within acdir_ms, or longer the longer its inode had been unchanged
 * (dcnfs_trust_ms)?  alock held. */
static int fresh_locked(const struct nfsfs *fs, const struct fh *h)
{
	return h->seen_ms && fs->acdir_ms >= 0 &&
	       nfsrpc_now_ms() - h->seen_ms <=
	       dcnfs_trust_ms(h->age_ms, fs->acdir_ms, fs->acdir_max_ms);
}

/* FNV-1a: names to listing keys and table slots.  A collision only
 * sends a LOOKUP (a listed key means "may be there"; a slot holds the
 * whole name). */
static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= (unsigned char)*name++;
		h *= 0x100000001b3ull;
	}
	return h;
}

static struct neg *neg_slot(struct nfsfs *fs, uint64_t epoch, const char *name,
			    size_t len)
{
	uint64_t h = name_hash(name, len) ^ (epoch * 0x9e3779b97f4a7c15ull);

	return &fs->negs[(h >> 32) % NFSFS_NEG_SLOTS];
}

/* name was not in the directory of epoch (not 0). */
static void neg_record(struct nfsfs *fs, uint64_t epoch, const char *name,
		       size_t len)
{
	struct neg *n;

	pthread_mutex_lock(&fs->alock);
	n = neg_slot(fs, epoch, name, len);
	n->epoch = epoch;
	n->len = (uint32_t)len;
	memcpy(n->name, name, len);
	pthread_mutex_unlock(&fs->alock);
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Is name known absent from directory d in epoch (not 0)?  alock held. */
static int absent_locked(struct nfsfs *fs, const struct fh *d, uint64_t epoch,
			 const char *name, size_t len)
{
	const struct neg *n = neg_slot(fs, epoch, name, len);
	uint64_t key;

	if (n->epoch == epoch && n->len == len && !memcmp(n->name, name, len))
		return 1;
	if (!d->list || d->list->epoch != epoch)
		return 0;
	key = name_hash(name, len);
	return !bsearch(&key, d->list->keys, d->list->n, sizeof(key), cmp_key);
}

/* ---- replies ------------------------------------------------------------- */

/* What a LOOKUP answered: the handle and, when the server sent them, the
 * object's and the directory's attributes. */
struct lookup_out {
	struct fh fh;
	fattr3 obj, dir;
	int have_obj, have_dir;
};

static int take_lookup(void *res, void *arg)
{
	LOOKUP3res *r = res;
	struct lookup_out *o = arg;
	LOOKUP3resok *ok = &r->LOOKUP3res_u.resok;
	const post_op_attr *dir = r->status == NFS3_OK ? &ok->dir_attributes :
				  &r->LOOKUP3res_u.resfail.dir_attributes;
	int err = nfs3_errno(r->status);

	o->have_dir = dir->attributes_follow;
	if (o->have_dir)
		o->dir = dir->post_op_attr_u.attributes;
	if (err)
		return err;
	err = fh_copy(&o->fh, &ok->object);
	if (err)
		return err;
	o->have_obj = ok->obj_attributes.attributes_follow;
	if (o->have_obj)
		o->obj = ok->obj_attributes.post_op_attr_u.attributes;
	return 0;
}

static int take_getattr(void *res, void *arg)
{
	GETATTR3res *r = res;
	fattr3 *out = arg;
	int err = nfs3_errno(r->status);

	if (!err)
		*out = r->GETATTR3res_u.resok.obj_attributes;
	return err;
}

/* The attributes of the inode handle h names, into *out (cookie kept),
 * and into what h remembers. */
static int getattr_fh(struct nfsfs *fs, struct fh *h, struct dc_inode *out)
{
	GETATTR3args a;
	struct sent s;
	fattr3 attr;
	int err;

	fh_arg(&a.object, h);
	sent_now(&s);
	err = nfs_call(fs, RK_GETATTR, NFS3_GETATTR, &a, take_getattr, &attr);
	if (err)
		return err;
	observe(fs, h, &attr, &s);
	attr_fill(&attr, out);
	return 0;
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
		fh_free(h);
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

/* dir and name as lookup takes them: dir's handle into *d. */
static int dir_check(const struct dc_inode *dir, const char *name, size_t len,
		     struct fh **d)
{
	int err;

	if (!dir)
		return -EINVAL;
	err = name_check(name, len);
	if (err)
		return err;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	*d = cookie_fh(dir->cookie);
	return *d ? 0 : -ESTALE;
}

/*
 * LOOKUP name in directory d: a new handle into *out, remembering the
 * epoch of d its answer holds for; an -ENOENT that holds for an epoch is
 * remembered by name.
 */
static int lookup_fh(struct nfsfs *fs, struct fh *d, const char *name,
		     size_t len, struct dc_inode *out)
{
	char buf[DC_NAME_MAX + 1];
	struct lookup_out o = { .have_obj = 0 };
	LOOKUP3args a;
	struct sent s;
	uint64_t epoch;
	struct fh *h;
	int err;

	memcpy(buf, name, len);
	buf[len] = '\0';
	fh_arg(&a.what.dir, d);
	a.what.name = buf;
	sent_now(&s);
	err = nfs_call(fs, RK_LOOKUP, NFS3_LOOKUP, &a, take_lookup, &o);
	epoch = o.have_dir ? observe(fs, d, &o.dir, &s) : 0;
	if (err == -ENOENT && epoch)
		neg_record(fs, epoch, name, len);
	if (err)
		return err;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->len = o.fh.len;
	memcpy(h->data, o.fh.data, h->len);
	h->answer = epoch;	/* h is ours alone until returned */
	if (o.have_obj)
		observe(fs, h, &o.obj, &s);
	else	/* post_op attributes are optional */
		err = getattr_fh(fs, h, &h->in);
	if (err) {
		fh_free(h);
		return err;
	}
	*out = h->in;
	out->cookie = (uintptr_t)h;
	return 0;
}

static int nfsfs_lookup(void *ctx, const struct dc_inode *dir,
			const char *name, size_t len, struct dc_inode *out)
{
	struct fh *d;
	int err;

	if (!out)
		return -EINVAL;
	err = dir_check(dir, name, len, &d);
	return err ? err : lookup_fh(ctx, d, name, len, out);
}

/* The same inode, with the same permission bits and owner. */
static int same_answer(const struct dc_inode *a, const struct dc_inode *b)
{
	return a->ino == b->ino && a->gen == b->gen && a->mode == b->mode &&
	       a->uid == b->uid && a->gid == b->gid;
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
	err = nfsfs_lookup(ctx, dir, name, len, &found);
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

/* The epoch of directory d now: from attributes seen within acdir_ms,
 * else from a GETATTR.  0 or a negative errno. */
static int dir_epoch(struct nfsfs *fs, struct fh *d, uint64_t *epoch)
{
	struct dc_inode in;
	int err;

	pthread_mutex_lock(&fs->alock);
	*epoch = fresh_locked(fs, d) ? d->epoch : 0;
	pthread_mutex_unlock(&fs->alock);
	if (*epoch)
		return 0;
	err = getattr_fh(fs, d, &in);
	if (err)
		return err;
	pthread_mutex_lock(&fs->alock);
	*epoch = d->epoch;
	pthread_mutex_unlock(&fs->alock);
	return 0;
}

/* Is c's inode still as cached says (permission bits, owner)?  Attributes
 * seen within acdir_ms, else a GETATTR. */
static int inode_holds(struct nfsfs *fs, struct fh *c,
		       const struct dc_inode *cached)
{
	struct dc_inode in;
	int fresh, err;

	pthread_mutex_lock(&fs->alock);
	fresh = fresh_locked(fs, c);
	in = c->in;
	pthread_mutex_unlock(&fs->alock);
	if (!fresh) {
		err = getattr_fh(fs, c, &in);
		if (err)
			return err;
	}
	return same_answer(&in, cached);
}

/* c, a handle the cache holds, learns what f (a new handle of the same
 * inode) was told.  alock held. */
static void absorb_locked(struct nfsfs *fs, struct fh *c, const struct fh *f)
{
	c->answer = f->answer;
	if (f->seen_ms < c->seen_ms)
		return;
	c->in = f->in;
	c->fa = f->fa;
	c->seen_ms = f->seen_ms;
	c->age_ms = f->age_ms;
	if (f->epoch && (!c->epoch || memcmp(&c->dir, &f->dir, sizeof(c->dir)))) {
		c->epoch = ++fs->epochs;
		c->dir = f->dir;
		free(c->list);
		c->list = NULL;
	}
}

/* Ask the server: 1 when name in d is still what cached says. */
static int lookup_check(struct nfsfs *fs, struct fh *d, const char *name,
			size_t len, const struct dc_inode *cached)
{
	struct fh *c = cookie_fh(cached->cookie);
	struct dc_inode found;
	int same, err = lookup_fh(fs, d, name, len, &found);

	if (err == -ENOENT)
		return !cached->mode;
	if (err)
		return err;
	same = cached->mode && same_answer(&found, cached);
	if (same && c) {
		pthread_mutex_lock(&fs->alock);
		absorb_locked(fs, c, cookie_fh(found.cookie));
		pthread_mutex_unlock(&fs->alock);
	}
	nfsfs_release(fs, &found);
	return same;
}

/*
 * Is cached (mode 0: absent) still the truth of name in dir?  Without a
 * LOOKUP when dir's attributes are those of the epoch the answer holds
 * for (see "Change detection"); a positive answer's own attributes are
 * checked too.
 */
static int nfsfs_revalidate(void *ctx, const struct dc_inode *dir,
			    const char *name, size_t len,
			    const struct dc_inode *cached)
{
	struct nfsfs *fs = ctx;
	struct fh *d, *c;
	uint64_t epoch;
	int held, err;

	if (!cached)
		return -EINVAL;
	err = dir_check(dir, name, len, &d);
	if (err)
		return err;
	nfsrpc_count(&fs->rpc, RK_REVAL);
	err = dir_epoch(fs, d, &epoch);
	if (err)
		return err;
	c = cached->mode ? cookie_fh(cached->cookie) : NULL;
	pthread_mutex_lock(&fs->alock);
	if (!epoch)
		held = 0;
	else if (!cached->mode)
		held = absent_locked(fs, d, epoch, name, len);
	else
		held = c && c->answer == epoch;
	pthread_mutex_unlock(&fs->alock);
	if (held)
		return cached->mode ? inode_holds(fs, c, cached) : 1;
	return lookup_check(fs, d, name, len, cached);
}

static int nfsfs_readlink(void *ctx, const struct dc_inode *link, char *buf,
			  size_t size)
{
	struct nfsfs *fs = ctx;
	struct dcnfs_fh fh;

	if (!link || !buf || !size || !S_ISLNK(link->mode))
		return -EINVAL;
	if (dcnfs_inode_fh(link, &fh))
		return -ESTALE;
	return dcnfs__readlink(&fs->rpc, &fh, buf, size);
}

/*
 * One READDIR page: its names go to emit as they are read, and their
 * hashes to keys (up to NFSFS_LIST_MAX; lost: they could not all be
 * kept); where to go on from (cookie, verf), whether that was the last
 * page, and the directory's attributes the reply carried.
 */
struct readdir_page {
	int (*emit)(void *arg, const char *name, size_t len);
	void *arg;
	int stop;		/* what emit returned, when not 0 */
	uint64_t names;		/* so far */
	cookie3 cookie;		/* the next page's: the last entry's */
	struct nfsrpc_loop loop;	/* the cookies pages ended on */
	cookieverf3 verf;
	int eof;
	fattr3 dir;
	int have_dir;
	uint64_t *keys;
	uint32_t n, cap;
	int lost;
};

/* One name's key, kept for the listing. */
static void keep_key(struct readdir_page *p, const char *name, size_t len)
{
	uint64_t *keys;
	uint32_t cap;

	if (p->lost || (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return;
	if (p->n == p->cap) {
		cap = p->cap ? p->cap * 2 : 64;
		keys = cap <= NFSFS_LIST_MAX ? realloc(p->keys, cap * sizeof(*keys)) : NULL;
		if (!keys) {
			p->lost = 1;
			return;
		}
		p->keys = keys;
		p->cap = cap;
	}
	p->keys[p->n++] = name_hash(name, len);
}

static int take_readdir(void *res, void *arg)
{
	READDIR3res *r = res;
	struct readdir_page *p = arg;
	READDIR3resok *ok = &r->READDIR3res_u.resok;
	const entry3 *e;
	entry3 ent;
	cookie3 asked = p->cookie;
	int err = nfs3_errno(r->status);

	if (err)
		return err;
	p->have_dir = ok->dir_attributes.attributes_follow;
	if (p->have_dir)
		p->dir = ok->dir_attributes.post_op_attr_u.attributes;
	memcpy(p->verf, ok->cookieverf, sizeof(p->verf));
	for (e = ok->reply.entries; e; e = ent.nextentry) {
		size_t len;

		/* libnfs 4.0's decoder lays entries out 4-byte aligned (their
		 * cookie is 64 bits): each is copied out, never read in place */
		memcpy(&ent, e, sizeof(ent));
		p->names++;
		p->cookie = ent.cookie;
		err = nfsrpc_name(ent.name);
		if (err < 0)
			return err;
		if (err)
			continue;	/* too long for any caller */
		len = strlen(ent.name);
		keep_key(p, ent.name, len);
		p->stop = p->emit(p->arg, ent.name, len);
		if (p->stop)
			return 0;
	}
	p->eof = ok->reply.eof;
	/* a page that leaves the listing where it was would be asked for
	 * forever (an empty one among them) */
	return p->eof || nfsrpc_page_moves(&p->loop, asked, p->cookie, p->names) ?
	       0 : -EIO;
}

/* A whole listing whose every page showed d in epoch (not 0): its keys
 * become d's listing, if d is still in that epoch. */
static void keep_listing(struct nfsfs *fs, struct fh *d, uint64_t epoch,
			 struct readdir_page *p)
{
	struct listing *l = malloc(sizeof(*l) + (size_t)p->n * sizeof(uint64_t));

	if (!l)
		return;
	l->epoch = epoch;
	l->n = p->n;
	if (p->n)
		memcpy(l->keys, p->keys, (size_t)p->n * sizeof(uint64_t));
	qsort(l->keys, l->n, sizeof(uint64_t), cmp_key);
	pthread_mutex_lock(&fs->alock);
	if (d->epoch == epoch) {
		free(d->list);
		d->list = l;
		l = NULL;
	}
	pthread_mutex_unlock(&fs->alock);
	free(l);
}

static int nfsfs_readdir(void *ctx, const struct dc_inode *dir,
			 int (*emit)(void *arg, const char *name, size_t len),
			 void *arg)
{
	struct nfsfs *fs = ctx;
	struct readdir_page p = { .emit = emit, .arg = arg };
	READDIR3args a;
	uint64_t epoch = 0, e;
	struct sent s;
	struct fh *d;
	int err = 0, page;

	if (!dir || !emit)
		return -EINVAL;
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	d = cookie_fh(dir->cookie);
	if (!d)
		return -ESTALE;
	fh_arg(&a.dir, d);
	a.count = NFSFS_READDIR_BYTES;
	for (page = 0; !p.eof; page++) {
		a.cookie = p.cookie;
		memcpy(a.cookieverf, p.verf, sizeof(a.cookieverf));
		p.have_dir = 0;
		sent_now(&s);
		err = nfs_call(fs, RK_READDIR, NFS3_READDIR, &a, take_readdir, &p);
		if (err || p.stop)
			break;
		/* the listing holds for an epoch only if every page saw it */
		e = p.have_dir ? observe(fs, d, &p.dir, &s) : 0;
		epoch = page == 0 || e == epoch ? e : 0;
	}
	if (!err && !p.stop && !p.lost && epoch)
		keep_listing(fs, d, epoch, &p);
	free(p.keys);
	return err ? err : p.stop;
}

static void nfsfs_free(struct nfsfs *fs)
{
	nfsrpc_fini(&fs->rpc);
	pthread_mutex_destroy(&fs->alock);
	free(fs->root.list);
	free(fs->negs);
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
	.revalidate	= nfsfs_revalidate,
};

/* ---- opening ------------------------------------------------------------------ */

/* The export's root handle into fs->root. */
static int mount_root(struct nfsfs *fs)
{
	struct dcnfs_fh root;
	int err = nfsrpc_mount(&fs->rpc, &root);

	if (err)
		return err;
	fs->root.len = root.len;
	memcpy(fs->root.data, root.data, root.len);
	return 0;
}

int dcnfs_url_check(const char *url, char *why, size_t size)
{
	return nfsrpc_url_check(url, why, size);
}

int dcnfs_open(const char *url, const struct dcnfs_options *opt,
	       struct dc_backend *out)
{
	struct nfsfs *fs;
	int err, i, timeout;

	if (!url || !out)
		return -EINVAL;
	if (opt && opt->reserved32)
		return -EINVAL;
	for (i = 0; opt && i < 2; i++)
		if (opt->reserved[i])
			return -EINVAL;
	fs = calloc(1, sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	timeout = opt && opt->timeout_ms ? (int)(opt->timeout_ms > INT_MAX ?
		  INT_MAX : opt->timeout_ms) : NFSFS_TIMEOUT_MS;
	fs->acdir_ms = !opt || !opt->acdir_ms ? NFSFS_ACDIR_MS :
		       opt->acdir_ms == DCNFS_ACDIR_OFF ? -1 : (int64_t)opt->acdir_ms;
	fs->acdir_max_ms = opt && opt->acdir_max_ms != DCNFS_ACDIR_OFF ?
			   (int64_t)opt->acdir_max_ms : 0;
	fs->negs = calloc(NFSFS_NEG_SLOTS, sizeof(*fs->negs));
	err = fs->negs ? pthread_mutex_init(&fs->alock, NULL) : ENOMEM;
	if (err) {
		free(fs->negs);
		free(fs);
		return -err;
	}
	err = nfsrpc_init(&fs->rpc, url, timeout);
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

/* The server of a backend dcnfs_open made, or NULL. */
struct nfsrpc *dcnfs__rpc(const struct dc_backend *be)
{
	return be && be->ops == &nfsfs_ops ? &((struct nfsfs *)be->ctx)->rpc : NULL;
}

static uint64_t stat_of(const struct nfsrpc *r, enum rpc_kind k)
{
	return __atomic_load_n(&r->stats[k], __ATOMIC_RELAXED);
}

void dcnfs_stats(const struct dc_backend *be, struct dcnfs_stats *st)
{
	const struct nfsrpc *r = dcnfs__rpc(be);

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	st->lookups = stat_of(r, RK_LOOKUP);
	st->getattrs = stat_of(r, RK_GETATTR);
	st->readdirs = stat_of(r, RK_READDIR);
	st->readlinks = stat_of(r, RK_READLINK);
	st->connects = stat_of(r, RK_CONNECT);
	st->retries = stat_of(r, RK_RETRY);
	st->revalidations = stat_of(r, RK_REVAL);
	st->reads = stat_of(r, RK_READ);
	st->writes = stat_of(r, RK_WRITE);
	st->commits = stat_of(r, RK_COMMIT);
	st->updates = stat_of(r, RK_UPDATE);
	st->setattrs = stat_of(r, RK_SETATTR);
	st->others = stat_of(r, RK_OTHER);
	st->later = stat_of(r, RK_LATER);
}

int dcnfs_inode_fh(const struct dc_inode *inode, struct dcnfs_fh *out)
{
	const struct fh *h;

	if (!inode || !out)
		return -EINVAL;
	h = cookie_fh(inode->cookie);
	if (!h)
		return -ESTALE;
	out->len = h->len;
	memcpy(out->data, h->data, h->len);
	return 0;
}

void dcnfs_inode_changed(const struct dc_backend *be,
			 const struct dc_inode *inode)
{
	struct fh *h;
	struct nfsfs *fs;

	if (!dcnfs__rpc(be) || !inode || !(h = cookie_fh(inode->cookie)))
		return;
	fs = be->ctx;
	pthread_mutex_lock(&fs->alock);
	h->age_ms = 0;
	pthread_mutex_unlock(&fs->alock);
}

int dcnfs_inode_stat(const struct dc_backend *be, const struct dc_inode *inode,
		     struct stat *st, int64_t *seen_ms)
{
	struct nfsrpc *r = dcnfs__rpc(be);
	struct nfsfs *fs;
	const struct fh *h;

	if (!r || !inode || !st || !seen_ms)
		return -EINVAL;
	h = cookie_fh(inode->cookie);
	if (!h)
		return -ESTALE;
	fs = be->ctx;
	pthread_mutex_lock(&fs->alock);
	*seen_ms = h->seen_ms;
	if (h->seen_ms)
		nfs3_stat_fill(&h->fa, st);
	pthread_mutex_unlock(&fs->alock);
	return *seen_ms ? 0 : -ENODATA;
}
