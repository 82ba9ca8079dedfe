// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops_dir.c - the FUSE operations on a directory's listing: OPENDIR,
 * READDIR, READDIRPLUS, RELEASEDIR and FSYNCDIR.
 *
 * A listing is read from SOURCE_DIR, never from the cache (libdcache
 * keeps names looked up, not whole directories).  READDIRPLUS looks each
 * listed name up through the cache, as LOOKUP does, and counts a kernel
 * lookup of each node it returns.  A directory handle belongs to one open
 * directory, which the kernel reads one READDIR at a time (fuse_readdir
 * holds the file's readdir lock): a handle takes no lock but users_lock
 * for its user's slot, when it is a snapshot; the snapshots' sizes are
 * atomic counters.  See ops.c for the rules every handler
 * follows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

/*
 * A directory handle: a stream on a descriptor of its own while open
 * handles stay within the descriptor budget; past it, the whole listing
 * read at open (a snapshot) and no descriptor kept, so that handles held
 * open by one user cannot take every descriptor from the others.  A
 * snapshot keeps each entry in a compact record, all of them together
 * within SNAP_BYTES (past it: EMFILE, as when descriptors run out), and is
 * read again on a rewind (an offset of 0), as a stream would be.  One
 * user's snapshots together stay within SNAP_SHARE, so that one user
 * cannot take every byte from the others either; root's are not counted
 * apart.
 */
#define SNAP_BYTES	(64u << 20)
#define SNAP_SHARE	(SNAP_BYTES / 4)

/*
 * The users with snapshots open, each with the bytes they hold.  A slot
 * is taken at the first snapshot handle of its uid and given up at the
 * last one's release (handles, under users_lock); its bytes change with
 * atomics while a handle holds it, and are back to 0 when the last one
 * goes (each handle gives back what it took before it drops the slot).
 * Past NUSERS users at once, new users share one more slot, overflow:
 * together they hold at most a share.
 */
#define NUSERS	64

struct user {
	uint32_t uid;
	uint32_t handles;	/* 0: the slot is free */
	uint64_t bytes;
};

static struct user users[NUSERS], overflow;
static pthread_mutex_t users_lock = PTHREAD_MUTEX_INITIALIZER;

/* uid's slot, with one more handle on it; NULL for root. */
static struct user *user_take(uint32_t uid)
{
	struct user *u, *free_slot = NULL;

	if (uid == 0)
		return NULL;
	pthread_mutex_lock(&users_lock);
	for (u = users; u < users + NUSERS; u++) {
		if (u->handles && u->uid == uid)
			break;
		if (!u->handles && !free_slot)
			free_slot = u;
	}
	if (u == users + NUSERS) {
		u = free_slot ? free_slot : &overflow;
		u->uid = uid;	/* overflow's is only the last one's */
	}
	u->handles++;
	pthread_mutex_unlock(&users_lock);
	return u;
}

static void user_drop(struct user *u)
{
	if (!u)
		return;
	pthread_mutex_lock(&users_lock);
	u->handles--;
	pthread_mutex_unlock(&users_lock);
}

struct snaprec {
	uint64_t ino;
	int64_t off;			/* d_off: where the next one starts */
	unsigned char type;
	char name[];			/* NUL-terminated */
};

struct dirh {
	struct user *user;	/* whose snapshot bytes these are, or NULL */
	DIR *dp;		/* a stream, or NULL: a snapshot */
	char *snap;		/* the snapshot's records, end bytes of them */
	size_t end, cap, pos;
	struct dirent one;	/* the record pos last gave, as a dirent */
	struct dirent *entry;	/* read but not yet returned */
	off_t offset;
};

static uint64_t snap_bytes;	/* every snapshot's cap, added up (atomic) */

static void snap_drop(struct dirh *h)
{
	__atomic_sub_fetch(&snap_bytes, h->cap, __ATOMIC_RELAXED);
	if (h->user)
		__atomic_sub_fetch(&h->user->bytes, h->cap, __ATOMIC_RELAXED);
	free(h->snap);
	h->snap = NULL;
	h->end = h->cap = h->pos = 0;
}

static void dirh_free(struct dirh *h)
{
	if (h->dp)
		closedir(h->dp);
	snap_drop(h);
	user_drop(h->user);
	free(h);
}

static size_t rec_size(size_t namelen)
{
	return (sizeof(struct snaprec) + namelen + 1 + 7) & ~(size_t)7;
}

/* Charge more bytes to *total, within limit: false (nothing charged) past it. */
static bool charge(uint64_t *total, uint64_t more, uint64_t limit)
{
	if (__atomic_add_fetch(total, more, __ATOMIC_RELAXED) <= limit)
		return true;
	__atomic_sub_fetch(total, more, __ATOMIC_RELAXED);
	return false;
}

/* Room for need more bytes, within SNAP_BYTES and the user's SNAP_SHARE:
 * 0 or an errno. */
static int snap_grow(struct dirh *h, size_t need)
{
	size_t cap = h->cap ? h->cap : 4096;
	char *bigger;

	while (cap - h->end < need)
		cap *= 2;
	if (cap == h->cap)
		return 0;
	if (h->user && !charge(&h->user->bytes, cap - h->cap, SNAP_SHARE))
		return EMFILE;
	if (!charge(&snap_bytes, cap - h->cap, SNAP_BYTES)) {
		if (h->user)
			__atomic_sub_fetch(&h->user->bytes, cap - h->cap, __ATOMIC_RELAXED);
		return EMFILE;
	}
	bigger = realloc(h->snap, cap);
	if (!bigger) {
		__atomic_sub_fetch(&snap_bytes, cap - h->cap, __ATOMIC_RELAXED);
		if (h->user)
			__atomic_sub_fetch(&h->user->bytes, cap - h->cap, __ATOMIC_RELAXED);
		return ENOMEM;
	}
	h->snap = bigger;
	h->cap = cap;
	return 0;
}

/* Read the stream to its end into records, then close it: 0 or errno. */
static int dirh_snapshot(struct dirh *h)
{
	struct snaprec *r;
	struct dirent *d;
	size_t len;
	int err;

	for (;;) {
		errno = 0;
		d = readdir(h->dp);
		if (!d)
			break;
		len = strlen(d->d_name);
		err = snap_grow(h, rec_size(len));
		if (err)
			return err;
		r = (struct snaprec *)(h->snap + h->end);
		r->ino = d->d_ino;
		r->off = d->d_off;
		r->type = d->d_type;
		memcpy(r->name, d->d_name, len + 1);
		h->end += rec_size(len);
	}
	if (errno)
		return errno;
	closedir(h->dp);
	h->dp = NULL;
	return 0;
}

/* A snapshot read again (a rewind): 0 or errno, the old one kept then. */
static int dirh_reread(struct dirh *h, struct dnode *dir)
{
	struct dirh fresh = { .user = h->user };
	int tmp, dfd = node_dir_fd(dir, &tmp), fd, err;

	fd = dfd < 0 ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	node_dir_fd_put(tmp);
	if (fd < 0)
		return err;
	fresh.dp = fdopendir(fd);
	if (!fresh.dp) {
		err = errno;
		close(fd);
		return err;
	}
	err = dirh_snapshot(&fresh);
	if (err) {
		closedir(fresh.dp);
		snap_drop(&fresh);
		return err;
	}
	snap_drop(h);
	h->snap = fresh.snap;
	h->end = fresh.end;
	h->cap = fresh.cap;
	h->pos = 0;
	return 0;
}

static void dirh_seek(struct dirh *h, off_t off)
{
	size_t at = 0;
	struct snaprec *r;

	if (h->dp) {
		seekdir(h->dp, off);
		return;
	}
	/* a snapshot: off is the d_off of the record before (0: the start) */
	while (off != 0 && at < h->end) {
		r = (struct snaprec *)(h->snap + at);
		at += rec_size(strlen(r->name));
		if (r->off == off)
			break;
	}
	h->pos = at;
}

static struct dirent *dirh_next(struct dirh *h)
{
	struct snaprec *r;

	if (h->dp)
		return readdir(h->dp);
	if (h->pos >= h->end)
		return NULL;
	r = (struct snaprec *)(h->snap + h->pos);
	h->pos += rec_size(strlen(r->name));
	h->one.d_ino = r->ino;
	h->one.d_off = r->off;
	h->one.d_type = r->type;
	snprintf(h->one.d_name, sizeof(h->one.d_name), "%s", r->name);
	return &h->one;
}

void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dnode *dir = ino_node(ino);
	int tmp, dfd = node_dir_fd(dir, &tmp), fd, err;
	struct dirh *h;

	err = dfd < 0 ? errno : check_dir_fd(dir, dfd);
	if (err == ENOENT)	/* removed: it lists empty, as natively */
		err = 0;
	fd = err ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && fd < 0)
		err = errno;
	node_dir_fd_put(tmp);
	if (err)
		return reply_errno(req, err);
	h = calloc(1, sizeof(*h));
	if (!h) {
		close(fd);
		return reply_errno(req, ENOMEM);
	}
	if (!(h->dp = fdopendir(fd))) {
		err = errno;
		close(fd);
		dirh_free(h);
		return reply_errno(req, err);
	}
	if (CTR_GET(open_files) >= dcfs.fd_budget) {
		h->user = user_take(fuse_req_ctx(req)->uid);
		err = dirh_snapshot(h);
		if (err) {
			dirh_free(h);
			return reply_errno(req, err);
		}
	}
	fi->fh = (uint64_t)(uintptr_t)h;
	if (h->dp)
		CTR_ADD(open_files, 1);
	if (fuse_reply_open(req, fi) != 0) {
		if (h->dp)
			CTR_ADD(open_files, -1);
		dirh_free(h);
	}
}

static bool dot_or_dotdot(const char *s)
{
	return s[0] == '.' && (!s[1] || (s[1] == '.' && !s[2]));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
	struct dnode *dir = ino_node(ino), **looked = NULL;
	size_t rem = size, nlooked = 0, i;
	char *buf = malloc(size), *p = buf;
	int err = 0;

	if (!buf)
		return reply_errno(req, ENOMEM);
	if (plus) {
		/* the nodes counted in this reply, to undo if it is lost */
		looked = malloc((size / 32 + 1) * sizeof(*looked));
		if (!looked) {
			free(buf);
			return reply_errno(req, ENOMEM);
		}
	}
	if (off != h->offset) {
		if (off == 0 && !h->dp && (err = dirh_reread(h, dir))) {
			free(looked);
			free(buf);
			return reply_errno(req, err);
		}
		dirh_seek(h, off);
		h->entry = NULL;
		h->offset = off;
	}
	for (;;) {
		struct fuse_entry_param e;
		struct dnode *n = NULL;
		const char *name;
		size_t entsize;
		off_t next;

		if (!h->entry) {
			errno = 0;
			h->entry = dirh_next(h);
			if (!h->entry) {
				err = errno;
				break;
			}
		}
		next = h->entry->d_off;
		name = h->entry->d_name;
		if (!plus) {
			struct stat st = {
				.st_ino = h->entry->d_ino,
				.st_mode = (mode_t)h->entry->d_type << 12,
			};

			entsize = fuse_add_direntry(req, p, rem, name, &st, next);
		} else if (dot_or_dotdot(name)) {
			entry_init(&e);
			e.attr.st_ino = h->entry->d_ino;
			e.attr.st_mode = (mode_t)h->entry->d_type << 12;
			entsize = fuse_add_direntry_plus(req, p, rem, name, &e, next);
		} else {
			err = do_lookup(dir, name, &e, &n);
			if (err == ENOENT) {	/* gone since readdir saw it */
				err = 0;
				h->entry = NULL;
				h->offset = next;
				continue;
			}
			if (err)
				break;
			entsize = fuse_add_direntry_plus(req, p, rem, name, &e, next);
		}
		if (entsize > rem) {
			if (n)
				node_forget(n, 1);
			break;
		}
		if (n)
			looked[nlooked++] = n;
		p += entsize;
		rem -= entsize;
		h->entry = NULL;
		h->offset = next;
	}
	/* an error can only be told before anything was returned */
	if (err && rem == size) {
		reply_errno(req, err);
	} else if (fuse_reply_buf(req, buf, size - rem) != 0) {
		for (i = 0; i < nlooked; i++)
			node_forget(looked[i], 1);
	}
	free(looked);
	free(buf);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
		    off_t off, struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

void op_releasedir(fuse_req_t req, fuse_ino_t ino,
		   struct fuse_file_info *fi)
{
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;

	(void)ino;
	if (h->dp)
		CTR_ADD(open_files, -1);
	dirh_free(h);
	fuse_reply_err(req, 0);
}

void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
		 struct fuse_file_info *fi)
{
	struct dirh *h = (struct dirh *)(uintptr_t)fi->fh;
	int tmp = -1, fd, res;

	if (h->dp) {
		fd = dirfd(h->dp);
	} else {	/* a snapshot: the directory, opened for this call */
		int dfd = node_dir_fd(ino_node(ino), &tmp);

		fd = dfd < 0 ? -1 : openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		node_dir_fd_put(tmp);
		tmp = fd;
	}
	res = fd < 0 ? -1 : datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, res < 0 ? errno : 0);
	if (tmp >= 0)
		close(tmp);
}
