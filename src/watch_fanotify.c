// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch_fanotify.c - the fanotify backend: one FAN_MARK_FILESYSTEM mark
 * per file system (the root's at start, others as dc_watch_dir meets
 * them); every change on it arrives with the directory's file handle and
 * the name.  Handles are turned into (ino, dev) and "below root or not"
 * once, in the memo below, so events elsewhere on the file system cost a
 * hash and a probe.
 *
 * fanotify judges a directory's place when its event is read, not when
 * the event was made, and that errs only harmlessly: a directory that has
 * left root since is forgotten by its move's event, which follows in the
 * queue; one that has come in since makes a name forgotten needlessly.  A
 * memoised verdict goes stale only when a directory moves, and then only
 * below the moved one, and only if its old and new parents differ in
 * theirs: so one of them is below root, and its event, read before any
 * later event in the moved subtree, clears every verdict.  A directory
 * whose handle no longer opens (ESTALE) was removed; its removal, which
 * its parent reports, forgets it.  ignore_self drops the process's own
 * changes (it told the cache of them itself) after that clearing: its
 * moves still move what lies below.
 *
 * Locking: w->fs entries are added under w->lock (held across
 * fanotify_mark) and published by a release store of w->nfs; they are
 * read lock-free after an acquire load of it.  The memo and the epoch
 * are the thread's alone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_PATH, open_by_handle_at */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "watch.h"

/* headers older than Linux 5.17 lack it; such a kernel refuses it (EINVAL),
 * and dc__fanotify_start asks for FAN_REPORT_DFID_NAME alone */
#ifndef FAN_REPORT_TARGET_FID
#define FAN_REPORT_TARGET_FID		0x00001000
#define FAN_REPORT_DFID_NAME_TARGET	(FAN_REPORT_DFID_NAME | FAN_REPORT_FID | \
					 FAN_REPORT_TARGET_FID)
#endif

#define MEMO_SETS	2048		/* the memo: 2048 sets of 4 directories */
#define MEMO_WAYS	4
#define MEMO_HANDLE	40		/* longest handle memoised (ext4 8, xfs 16-24,
					 * btrfs 20-40); longer: resolved each time */
#define CLIMB_MAX	4096		/* ".." steps before "cannot tell" */

/* What the cache needs (as for inotify); contents changes (MODIFY) only for an owner's
 * changed(), as the cache holds no contents: without one they would only
 * fill the queue (a build elsewhere on the file system) towards overflow. */
#define FAN_EVENTS	(FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | \
			 FAN_ATTRIB | FAN_ONDIR)


/*
 * What one directory handle stands for.  ino and dev never change for a
 * handle (a handle names one inode; a reused inode number comes with a new
 * generation, so a new handle).  The verdict "below root" can: a directory
 * moved in or out of root moves everything under it, so verdicts hold only
 * while epoch is w->epoch, and any move of a directory below root bumps it.
 */
struct memo {
	uint64_t key;		/* hash of fs and handle; 0: empty */
	uint64_t ino, dev;
	uint32_t epoch;		/* verdict valid while == w->epoch; 0: none */
	int32_t htype;
	uint8_t hlen, fs, inside;
	unsigned char h[MEMO_HANDLE];
};

/* A file handle with room for the longest the kernel makes. */
union fhandle {
	struct file_handle fh;
	char space[sizeof(struct file_handle) + MAX_HANDLE_SZ];
};

/* ---- file systems ------------------------------------------------------ */

const struct wfs *dc__fanotify_fs_by_dev(const struct dc_watch *w, uint64_t dev)
{
	unsigned i, n = dc__load_acq(w->nfs);

	for (i = 0; i < n; i++)
		if (w->fs[i].dev == dev)
			return &w->fs[i];
	return NULL;
}

/* The first entry with this fsid: the one that holds a mount fd. */
static const struct wfs *fs_by_fsid(const struct dc_watch *w,
				    const unsigned char fsid[8])
{
	unsigned i, n = dc__load_acq(w->nfs);

	for (i = 0; i < n; i++)
		if (!memcmp(w->fs[i].fsid, fsid, 8))
			return &w->fs[i];
	return NULL;
}

/*
 * Can directory dfd's handle be opened again?  Every event names its
 * directory by handle, and open_by_handle_at needs CAP_DAC_READ_SEARCH,
 * which a process may lack while it holds the CAP_SYS_ADMIN that
 * fanotify needs (a container given the one but not the other): marked
 * anyway, every event would be "a change in an unknown directory", and
 * each would forget everything.  0 or -errno.
 */
static int handles_open(int dfd)
{
	union fhandle h;
	int mnt, fd;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(dfd, "", &h.fh, &mnt, AT_EMPTY_PATH) < 0)
		return -errno;
	fd = open_by_handle_at(dfd, &h.fh, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * Mark the file system of directory fd (device dev), unless one with its
 * fsid is marked already (then dev is an alias of it).  The mark is made
 * through /proc (fanotify_mark does not take an O_PATH descriptor as its
 * object), and a descriptor of the directory kept for open_by_handle_at:
 * handles are opened in the mount they came through, below root, so that
 * climbing ".." from them passes root; first, that they open
 * (handles_open).  w->lock held.
 */
int dc__fanotify_fs_add(struct dc_watch *w, int fd, uint64_t dev)
{
	struct statfs sfs;
	struct wfs *f;
	char path[40];
	int err = 0;

	if (w->nfs == WATCH_MAX_FS)
		return -ENOSPC;
	f = &w->fs[w->nfs];
	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	memcpy(f->fsid, &sfs.f_fsid, sizeof(f->fsid));
	f->dev = dev;
	f->mount_fd = -1;
	if (!fs_by_fsid(w, f->fsid)) {
		/* open_by_handle_at refuses an O_PATH mount descriptor */
		f->mount_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (f->mount_fd < 0)
			return -errno;
		err = handles_open(f->mount_fd);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (!err && fanotify_mark(w->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
					  FAN_EVENTS | (w->opt.changed ? FAN_MODIFY : 0),
					  AT_FDCWD, path) < 0)
			err = -errno;
		if (err) {
			close(f->mount_fd);
			f->mount_fd = -1;
			return err;
		}
	}
	/* release: the entry is complete before readers can see it */
	dc__store_rel(w->nfs, w->nfs + 1);
	return 0;
}

int dc__fanotify_start(struct dc_watch *w)
{
	int err;

	/* the target's own fid too where the kernel gives it (Linux 5.17):
	 * an unlinked hard link's remaining inode, a link count change */
	w->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME_TARGET |
			      FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE);
	if (w->fd < 0 && errno == EINVAL)
		w->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
				      FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE);
	if (w->fd < 0) {
		w->fd = -1;
		return -errno;
	}
	w->memo = calloc((size_t)MEMO_SETS * MEMO_WAYS, sizeof(*w->memo));
	if (!w->memo) {
		err = -ENOMEM;
	} else {
		pthread_mutex_lock(&w->lock);
		err = dc__fanotify_fs_add(w, w->root_fd, w->root_dev);
		pthread_mutex_unlock(&w->lock);
	}
	if (err) {
		close(w->fd);
		w->fd = -1;
		free(w->memo);
		w->memo = NULL;
	}
	return err;
}

/* ---- the memo ---------------------------------------------------------- */

/* The library's keyed hash, keyed per watcher: which handles share a set
 * differs by run. */
static uint64_t memo_key(const struct dc_watch *w, unsigned fs,
			 const struct file_handle *fh)
{
	uint64_t h = dc__hash_bytes(&w->hkey, fh->f_handle, fh->handle_bytes);

	h = dc__mix(&w->hkey, h, (uint64_t)fs << 32 | (uint32_t)fh->handle_type);
	return h | 1;	/* 0 marks an empty slot */
}

static struct memo *memo_set(struct dc_watch *w, uint64_t key)
{
	return &w->memo[((key >> 17) % MEMO_SETS) * MEMO_WAYS];
}

static struct memo *memo_find(struct dc_watch *w, uint64_t key, unsigned fs,
			      const struct file_handle *fh)
{
	struct memo *m = memo_set(w, key);
	unsigned i;

	for (i = 0; i < MEMO_WAYS; i++, m++)
		if (m->key == key && m->fs == fs && m->htype == fh->handle_type &&
		    m->hlen == fh->handle_bytes &&
		    !memcmp(m->h, fh->f_handle, m->hlen))
			return m;
	return NULL;
}

/* A slot for a new handle: an empty way, else the next in turn. */
static struct memo *memo_claim(struct dc_watch *w, uint64_t key)
{
	struct memo *m = memo_set(w, key);
	unsigned i;

	for (i = 0; i < MEMO_WAYS; i++)
		if (!m[i].key)
			return &m[i];
	return &m[w->clock++ % MEMO_WAYS];
}

/* Every verdict may be wrong now; ino and dev stay right. */
void dc__fanotify_forget_verdicts(struct dc_watch *w)
{
	size_t i;

	if (++w->epoch)
		return;
	for (i = 0; i < (size_t)MEMO_SETS * MEMO_WAYS; i++)
		w->memo[i].epoch = 0;
	w->epoch = 1;
}

/*
 * Is directory fd (whose stat is *st) root or below it?  Climb "..",
 * comparing (dev, ino) with root's, until root (yes) or a directory that
 * is its own parent (no: the top of the tree it can climb, the namespace's
 * root or, for a handle outside the mount it was opened in, the file
 * system's).  0 with the verdict in *inside, or -errno: cannot tell.
 */
static int climb(struct dc_watch *w, int fd, struct stat st, bool *inside)
{
	struct stat up_st;
	int cur = fd, up, err = -ELOOP, i;

	*inside = false;
	for (i = 0; i < CLIMB_MAX; i++) {
		if (st.st_ino == w->root_ino && st.st_dev == w->root_dev) {
			*inside = true;
			err = 0;
			break;
		}
		up = openat(cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (up < 0) {
			err = -errno;
			break;
		}
		if (fstat(up, &up_st) < 0) {
			err = -errno;
			close(up);
			break;
		}
		if (cur != fd)
			close(cur);
		cur = up;
		if (up_st.st_ino == st.st_ino && up_st.st_dev == st.st_dev) {
			err = 0;
			break;
		}
		st = up_st;
	}
	if (cur != fd)
		close(cur);
	return err;
}

struct where {
	uint64_t ino, dev;
	bool inside;
};

/*
 * Where the directory a handle names is.  From the memo when it knows;
 * otherwise opened by handle (in the mount of the file system's entry),
 * stat'ed and climbed, and memoised.  -ESTALE (or -ENOENT): the directory
 * is gone, and its own removal is reported by its parent.  Other errors:
 * cannot tell.  A verdict that could not be reached is "inside", not
 * memoised: forgetting a name needlessly is harmless.
 */
static int dir_where(struct dc_watch *w, const struct wfs *f,
		     const struct file_handle *fh, struct where *out)
{
	unsigned fs = (unsigned)(f - w->fs);
	bool memoise = fh->handle_bytes <= MEMO_HANDLE;
	uint64_t key = memoise ? memo_key(w, fs, fh) : 0;
	struct memo *m = memoise ? memo_find(w, key, fs, fh) : NULL;
	struct stat st;
	bool inside;
	int fd, err;

	if (m && m->epoch == w->epoch) {
		*out = (struct where){ m->ino, m->dev, m->inside };
		return 0;
	}
	/* the cast: open_by_handle_at does not write the handle */
	fd = open_by_handle_at(f->mount_fd, (struct file_handle *)fh,
			       O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = climb(w, fd, st, &inside);
	close(fd);
	*out = (struct where){ st.st_ino, st.st_dev, err ? true : inside };
	if (!memoise)
		return 0;
	if (!m) {
		m = memo_claim(w, key);
		m->key = key;
		m->fs = (uint8_t)fs;
		m->htype = fh->handle_type;
		m->hlen = (uint8_t)fh->handle_bytes;
		memcpy(m->h, fh->f_handle, fh->handle_bytes);
	}
	m->ino = st.st_ino;
	m->dev = st.st_dev;
	m->inside = inside;
	m->epoch = err ? 0 : w->epoch;
	return 0;
}

/* ---- events ------------------------------------------------------------ */

/* The inode a target fid names, 0 when it no longer opens (removed) or
 * is a directory.  Three system calls: only for events below root, or
 * with no name. */
static uint64_t target_ino(const struct wfs *f, const struct file_handle *fh)
{
	struct stat st;
	int fd = open_by_handle_at(f->mount_fd, (struct file_handle *)fh,
				   O_PATH | O_CLOEXEC);
	int r;

	if (fd < 0)
		return 0;
	r = fstat(fd, &st);
	close(fd);
	return r == 0 && !S_ISDIR(st.st_mode) ? (uint64_t)st.st_ino : 0;
}

/*
 * The attributes of the inode name holds changed, and the cache did not
 * hold that name: it may hold the inode's other names (hard links), which
 * only the inode finds.  Looked up now, so a rename of name since the
 * change makes this forget the wrong inode: harmless, and the rename's own
 * events follow.  No directory descriptor, no look: nothing forgotten.
 * Told to the owner as a change of the inode.
 */
static void forget_links(struct dc_watch *w, const struct wfs *f,
			 const struct file_handle *fh, const char *name)
{
	struct stat st;
	int fd, r;

	fd = open_by_handle_at(f->mount_fd, (struct file_handle *)fh,
			       O_PATH | O_CLOEXEC);
	if (fd < 0)
		return;
	r = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW);
	close(fd);
	if (!r && !S_ISDIR(st.st_mode)) {
		struct dc_change_event ev = {
			.what = DC_CHANGE_INODE, .flags = DC_CHANGED_ATTR,
			.ino = st.st_ino, .dir_dev = st.st_dev,
			.dir_gen = dc_hostfs_gen(st.st_dev),
		};

		dc_invalidate_inode(w->c, st.st_ino, ev.dir_gen);
		/* the owner's copies of its attributes too (as fanotify_inode) */
		dc__watch_report(w, &ev);
	}
}

/*
 * An event on an inode with no name (a link count changed: link, unlink
 * elsewhere): only the inode's fid.  Whether it is below root cannot be
 * told cheaply; the cache and the owner each find it in one probe or not.
 */
static void fanotify_inode(struct dc_watch *w, const struct fanotify_event_metadata *m,
			   const unsigned char fsid[8], const struct file_handle *target)
{
	const struct wfs *f = fs_by_fsid(w, fsid);
	struct dc_change_event ev = { .what = DC_CHANGE_INODE };
	uint64_t ino;

	if (!f || (w->opt.ignore_self && m->pid == w->self))
		return;
	ino = target_ino(f, target);
	if (!ino)
		return;		/* gone: its names' removals say the rest */
	dc_invalidate_inode(w->c, ino, dc_hostfs_gen(f->dev));
	ev.ino = ino;
	ev.dir_dev = f->dev;
	ev.dir_gen = dc_hostfs_gen(f->dev);
	if (m->mask & FAN_ATTRIB)
		ev.flags |= DC_CHANGED_ATTR;
	if (m->mask & FAN_MODIFY)
		ev.flags |= DC_CHANGED_DATA;
	dc__watch_report(w, &ev);
}

/* One (directory, name) of an event; name is NUL-terminated. */
static void fanotify_name(struct dc_watch *w, const struct fanotify_event_metadata *m,
			  const unsigned char fsid[8], const struct file_handle *fh,
			  const char *name, size_t nl, const struct file_handle *target)
{
	const struct wfs *f = fs_by_fsid(w, fsid);
	struct where d = { 0 };
	struct dc_inode old;
	uint32_t flags = 0;
	uint64_t ino;
	char eb[128];
	int err;

	if (!f)
		return;		/* not a file system of ours */
	err = dir_where(w, f, fh, &d);
	if (err == -ESTALE || err == -ENOENT) {
		/* the directory is gone, and what was cached below it goes
		 * with it (its own removal's event); but the changed file may
		 * have other names, elsewhere, which its own handle finds */
		if (target && (m->mask & FAN_ATTRIB))
			fanotify_inode(w, m, fsid, target);
		return;
	}
	if (err) {
		/* we cannot tell which directory changed */
		if (!w->told_unresolved) {
			w->told_unresolved = true;
			dc__watch_say(w, "coherence: cannot open a directory by handle on %s: %s",
				      w->root, dc__watch_errstr(err, eb, sizeof(eb)));
		}
		dc__watch_lost(w, "a change in an unknown directory");
		return;
	}
	if (!d.inside) {
		/* the changed file may have other names below root (hard
		 * links), which share its attributes: its own handle finds
		 * them, or, before Linux 5.17, its name looked up */
		if ((m->mask & FAN_ATTRIB) && !(m->mask & FAN_ONDIR) &&
		    !(w->opt.ignore_self && m->pid == w->self)) {
			if (target)
				fanotify_inode(w, m, fsid, target);
			else
				forget_links(w, f, fh, name);
		}
		return;
	}
	/* a directory moved below root: what is below it may have left root,
	 * or come in (a move outside root changes no verdict) */
	if ((m->mask & FAN_ONDIR) && (m->mask & (FAN_MOVED_FROM | FAN_MOVED_TO)))
		dc__fanotify_forget_verdicts(w);
	if (w->opt.ignore_self && m->pid == w->self)
		return;
	if (m->mask & (FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO))
		flags |= DC_CHANGED_ENTRY;
	if (m->mask & FAN_ATTRIB)
		flags |= DC_CHANGED_ATTR;
	if (m->mask & FAN_MODIFY)
		flags |= DC_CHANGED_DATA;
	if (nl == 1 && name[0] == '.') {
		dc__watch_forget_self(w, d.ino, d.dev, flags & ~(uint32_t)DC_CHANGED_ENTRY,
				      false);
		return;
	}
	dc__watch_forget_name(w, d.ino, d.dev, name, nl, flags, &old);
	ino = target ? target_ino(f, target) : 0;
	/* the inode's other names share its attributes (hard links) */
	if (ino && (flags & DC_CHANGED_ATTR) && ino != old.ino)
		dc_invalidate_inode(w->c, ino, dc_hostfs_gen(f->dev));
	else if (!target && (flags & DC_CHANGED_ATTR) && !old.mode)
		forget_links(w, f, fh, name);
	dc__watch_report_name(w, d.ino, d.dev, name, nl, flags, &old, ino);
}

/* A fid record, copied out of the event buffer. */
struct fid_rec {
	unsigned char fsid[8];
	union fhandle fh;
	const char *name;	/* directories: NUL-terminated; "." for DFID */
	size_t nl;
};

/*
 * One info record of len bytes at p into *r: a directory fid (with a name
 * for DFID_NAME; an event on a directory itself names it ".") or the
 * target's fid (FID).  0, or -1 when the record is malformed.
 */
static int fid_parse(unsigned type, const char *p, size_t len, struct fid_rec *r)
{
	const size_t fixed = sizeof(struct fanotify_event_info_fid) +
			     sizeof(struct file_handle);
	size_t hb, left;

	if (len < fixed)
		return -1;
	memcpy(r->fsid, p + offsetof(struct fanotify_event_info_fid, fsid), 8);
	memcpy(&r->fh.fh, p + sizeof(struct fanotify_event_info_fid),
	       sizeof(struct file_handle));
	hb = r->fh.fh.handle_bytes;
	if (hb > MAX_HANDLE_SZ || hb > len - fixed)
		return -1;
	memcpy(r->fh.fh.f_handle, p + fixed, hb);
	r->name = p + fixed + hb;
	left = len - fixed - hb;
	if (type == FAN_EVENT_INFO_TYPE_DFID_NAME) {
		r->nl = strnlen(r->name, left);
		if (r->nl == left || r->nl == 0)
			return -1;
	} else {
		r->name = ".";
		r->nl = 1;
	}
	return 0;
}

/* The info records of one event (len bytes at p): its directory and name,
 * with the target's fid where given, or the target's fid alone.  Other
 * records are skipped. */
static void fanotify_one(struct dc_watch *w, const struct fanotify_event_metadata *m,
			 const char *p, size_t len)
{
	struct fanotify_event_info_header h;
	struct fid_rec dir, target;
	bool have_dir = false, have_target = false;

	if (m->mask & FAN_Q_OVERFLOW) {
		dc__watch_lost(w, "the fanotify queue overflowed");
		return;
	}
	while (len >= sizeof(h)) {
		struct fid_rec *r = NULL;

		memcpy(&h, p, sizeof(h));
		if (h.len < sizeof(h) || h.len > len) {
			dc__watch_lost(w, "a malformed fanotify record");
			return;
		}
		if (h.info_type == FAN_EVENT_INFO_TYPE_DFID_NAME ||
		    h.info_type == FAN_EVENT_INFO_TYPE_DFID) {
			r = &dir;
			have_dir = true;
		} else if (h.info_type == FAN_EVENT_INFO_TYPE_FID) {
			r = &target;
			have_target = true;
		}
		if (r && fid_parse(h.info_type, p, h.len, r)) {
			dc__watch_lost(w, "a malformed fanotify record");
			return;
		}
		p += h.len;
		len -= h.len;
	}
	if (have_dir)
		fanotify_name(w, m, dir.fsid, &dir.fh.fh, dir.name, dir.nl,
			      have_target && !memcmp(target.fsid, dir.fsid, 8) ?
			      &target.fh.fh : NULL);
	else if (have_target)
		fanotify_inode(w, m, target.fsid, &target.fh.fh);
}

/* n bytes of events in w->buf.  Records are 4-byte aligned at best, so
 * every header is copied out before it is read. */
void dc__fanotify_batch(struct dc_watch *w, size_t n)
{
	struct fanotify_event_metadata m;
	size_t off = 0;

	while (n - off >= FAN_EVENT_METADATA_LEN) {
		memcpy(&m, w->buf + off, sizeof(m));
		if (m.event_len < FAN_EVENT_METADATA_LEN || m.event_len > n - off ||
		    m.metadata_len < FAN_EVENT_METADATA_LEN ||
		    m.metadata_len > m.event_len ||
		    m.vers != FANOTIFY_METADATA_VERSION) {
			dc__watch_lost(w, "a malformed fanotify event");
			return;
		}
		if (m.fd >= 0)	/* never asked for (fid mode); never leaked */
			close(m.fd);
		fanotify_one(w, &m, w->buf + off + m.metadata_len,
			     m.event_len - m.metadata_len);
		off += m.event_len;
	}
}
