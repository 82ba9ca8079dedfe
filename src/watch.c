// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch.c - watchers: changes made to a host directory behind the cache's
 * back, learnt from the kernel and told to the cache by inode.
 *
 * A watcher turns each kernel event about (directory, name) into the cache
 * call that forgets what the event may have made false, then hands the
 * event to its owner's changed().  The cache is told by inode, holding no
 * entry (dc_invalidate_child, dc_invalidate_inode, dc_invalidate_all), so
 * the watcher needs to know nothing of what is cached.
 *
 *   fanotify  one FAN_MARK_FILESYSTEM mark per file system (the root's at
 *             start, others as dc_watch_dir meets them): every change on
 *             it arrives with the directory's file handle and the name.
 *             Handles are turned into (ino, dev) and "below root or not"
 *             once, in the memo below, so events elsewhere on the file
 *             system cost a hash and a probe.
 *   inotify   one watch per directory, added by dc_watch_dir before the
 *             directory's names are looked up; wd -> (ino, dev) in a table.
 *   ttl       no thread: the cache's TTLs bound every answer's age.
 *
 * Why nothing is missed.  A watch (or mark) exists before any name of its
 * directory is looked up: the root's is made before the cache is
 * forgotten at start, every other directory's by dc_watch_dir before the
 * backend returns it.  So a change is either seen by the lookup that
 * caches it, or made after the watch exists and reported.  A lookup in
 * flight across the report is not cached: the cache bumps the directory's
 * generation when it is told (see "Misses" in docs/design.md).  A lost
 * report (a queue overflow, an event that cannot be read) forgets
 * everything; a directory that cannot be watched falls back to ttl.  The
 * cache may forget, it never lies.
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
 * Locking rules:
 *
 *  w->lock (mutex)
 *	the inotify table (wd -> directory), adding a file system to w->fs,
 *	the fall-back to ttl (w->mode becoming TTL, lost_err, lost_why) and
 *	closing w->fd after it.  Held across inotify_add_watch and
 *	fanotify_mark: a watch the kernel made is in the table before its
 *	IN_IGNORED can be handled (the thread takes the lock for that), so a
 *	removed watch never lingers in the table.  Never held across a call
 *	into the cache or into changed() or log().
 *  w->mode
 *	atomic.  After start it changes once at most, to TTL, under w->lock.
 *	dc_watch_dir reads it unlocked to return at once in the modes that
 *	need no lock; a stale read only takes the locked path, which reads
 *	it again.
 *  w->fs[0 .. w->nfs)
 *	published with a release store of nfs after the entry is written,
 *	and never changed after; read lock-free (acquire load of nfs) by the
 *	thread and by dc_watch_dir's fast path.
 *  w->kind, w->root*, w->opt
 *	fixed before the thread starts.
 *  w->memo, w->buf, w->epoch
 *	the thread's alone.
 *  w->fd
 *	written by the thread (closed at the fall-back) under w->lock, read
 *	by dc_watch_dir under w->lock and by the thread.
 *  w->stop
 *	atomic; dc_watch_stop sets it, wakes the thread through w->wake (an
 *	eventfd) and joins it.
 *
 * Order: hostfs's watcher lock (read side, held across dc_watch_dir) ->
 * w->lock -> the kernel's.  dc_watch_stop detaches from hostfs (the write
 * side, which waits for lookups inside dc_watch_dir) before it frees
 * anything, so no lookup reaches a freed watcher.  changed() runs on the
 * watcher's thread with no lock of ours held, after the cache was told:
 * an owner that looks the name up from changed() sees the new state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_PATH, open_by_handle_at, the GNU strerror_r */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define WATCH_TTL_MS	1000u		/* opt->ttl_ms 0 */
#define WATCH_BUF	(64u << 10)	/* one read of events */
#define WATCH_NICE	(-10)		/* the thread's priority, where allowed */
#define WATCH_BEHIND	(64 << 10)	/* queued bytes (FIONREAD) past a full
					 * read that mean "skip to the end": a
					 * few thousand events either kind */
#define WATCH_MAX_FS	32		/* file systems one fanotify watcher marks */
#define MEMO_SETS	2048		/* the memo: 2048 sets of 4 directories */
#define MEMO_WAYS	4
#define MEMO_HANDLE	40		/* longest handle memoised (ext4 8, xfs 16-24,
					 * btrfs 20-40); longer: resolved each time */
#define CLIMB_MAX	4096		/* ".." steps before "cannot tell" */

/* What the cache needs; contents changes (MODIFY) only for an owner's
 * changed(), as the cache holds no contents: without one they would only
 * fill the queue (a build elsewhere on the file system) towards overflow. */
#define IN_EVENTS	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
			 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | \
			 IN_EXCL_UNLINK | IN_ONLYDIR)
#define FAN_EVENTS	(FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO | \
			 FAN_ATTRIB | FAN_ONDIR)

/* An inotify watch: the directory it reports on. */
struct wd_ent {
	int wd;			/* 0: empty slot */
	uint64_t ino, dev;
};

/* A file system a fanotify watcher marked (or a device of one it did). */
struct wfs {
	unsigned char fsid[8];	/* statfs f_fsid, as events report it */
	uint64_t dev;
	int mount_fd;		/* for open_by_handle_at; -1: an alias of an
				 * earlier entry with the same fsid */
};

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

struct dc_watch {
	struct dc_cache *c;
	struct dc_watch_options opt;	/* ttl_ms filled in */
	char *root;			/* for log lines */
	int root_fd;			/* O_PATH|O_DIRECTORY */
	uint64_t root_ino, root_dev;
	pid_t self;

	int mode;			/* enum dc_watch_mode; atomic */
	int kind;			/* what w->fd is: INOTIFY or FANOTIFY */
	int fd;				/* inotify or fanotify descriptor, or -1 */
	int wake;			/* eventfd: stop, or fall back */
	int stop;			/* atomic */
	bool thread_on, hostfs;
	pthread_t thread;

	pthread_mutex_t lock;
	int lost_err;			/* the fall-back's cause (lock) */
	const char *lost_why;
	struct wd_ent *wds;		/* inotify: open addressing (lock) */
	size_t wd_mask, wd_used;

	struct wfs fs[WATCH_MAX_FS];	/* fanotify */
	unsigned nfs;			/* published entries (release/acquire) */

	struct memo *memo;		/* fanotify: MEMO_SETS * MEMO_WAYS */
	uint32_t epoch, clock;
	uint64_t seed;
	bool told_unresolved;		/* logged a handle we could not open */
	char *buf;			/* WATCH_BUF bytes */
};

static const char *const watch_mode_names[] = {
	[DC_WATCH_AUTO]		= "auto",
	[DC_WATCH_OFF]		= "off",
	[DC_WATCH_TTL]		= "ttl",
	[DC_WATCH_INOTIFY]	= "inotify",
	[DC_WATCH_FANOTIFY]	= "fanotify",
};
#define NR_WATCH_MODES	(sizeof(watch_mode_names) / sizeof(watch_mode_names[0]))

DC_API const char *dc_watch_mode_name(enum dc_watch_mode mode)
{
	if ((unsigned)mode >= NR_WATCH_MODES)
		return NULL;
	return watch_mode_names[mode];
}

DC_API int dc_watch_mode_parse(const char *name, enum dc_watch_mode *out)
{
	unsigned i;

	if (!name || !out)
		return -EINVAL;
	for (i = 0; i < NR_WATCH_MODES; i++)
		if (!strcmp(name, watch_mode_names[i])) {
			*out = (enum dc_watch_mode)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- telling the cache, and the owner --------------------------------- */

static void say(struct dc_watch *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct dc_watch *w, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!w->opt.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->opt.log(w->opt.arg, msg);
}

/* strerror is not thread-safe; the GNU strerror_r is (_GNU_SOURCE). */
static const char *errstr(int err, char *buf, size_t size)
{
	return strerror_r(err < 0 ? -err : err, buf, size);
}

static void report(struct dc_watch *w, const struct dc_change_event *ev)
{
	if (w->opt.changed)
		w->opt.changed(w->opt.arg, ev);
}

static void memo_forget_verdicts(struct dc_watch *w);

/* Events were lost, or could not be read: anything may have changed. */
static void lost(struct dc_watch *w, const char *why)
{
	struct dc_change_event ev = { .what = DC_CHANGE_ALL };

	dc_invalidate_all(w->c);
	if (w->memo)
		memo_forget_verdicts(w);	/* a lost move could change them */
	say(w, "coherence: %s on %s: forgot everything", why, w->root);
	report(w, &ev);
}

/*
 * name in directory (dir_ino, dir_dev) changed: tell the cache, and say in
 * *old what it held for the name (all 0: nothing, or a negative entry).
 * A binding or attribute change forgets the name; an attribute change
 * also forgets the inode's other names (hard links share its attributes),
 * where the cache knew which inode the name held.  A change of contents
 * alone forgets nothing: the cache holds no contents (and no size).
 */
static void forget_name(struct dc_watch *w, uint64_t dir_ino, uint64_t dir_dev,
			const char *name, size_t len, uint32_t flags,
			struct dc_inode *old)
{
	*old = (struct dc_inode){ 0 };
	if (!(flags & (DC_CHANGED_ENTRY | DC_CHANGED_ATTR)))
		return;
	if (dc__invalidate_child(w->c, dir_ino, dc_hostfs_gen(dir_dev), name, len,
				 old) == 0 &&
	    (flags & DC_CHANGED_ATTR) && old->mode && !S_ISDIR(old->mode))
		dc_invalidate_inode(w->c, old->ino, old->gen);
}

/* ... and then tell the owner. */
static void report_name(struct dc_watch *w, uint64_t dir_ino, uint64_t dir_dev,
			const char *name, size_t len, uint32_t flags,
			const struct dc_inode *old, uint64_t ino)
{
	struct dc_change_event ev = {
		.what = DC_CHANGE_NAME, .dir_ino = dir_ino, .dir_dev = dir_dev,
		.dir_gen = dc_hostfs_gen(dir_dev), .name = name, .len = len,
		.flags = flags, .old_ino = old->ino, .old_mode = old->mode,
		.ino = ino,
	};

	if (flags)
		report(w, &ev);
}

/* The directory itself changed: its attributes (it is checked again
 * before its next use, keeping what is cached below it, whose own changes
 * are reported by name); or, gone, it was moved, removed or unmounted,
 * which its parent reports by name too where it is watched (forgotten
 * with everything cached below).  The owner hears of it as the name "."
 * in the directory. */
static void forget_self(struct dc_watch *w, uint64_t ino, uint64_t dev,
			uint32_t flags, bool gone)
{
	struct dc_change_event ev = {
		.what = DC_CHANGE_NAME, .dir_ino = ino, .dir_dev = dev,
		.dir_gen = dc_hostfs_gen(dev), .name = ".", .len = 1,
		.flags = flags,
	};

	if (!flags)
		return;
	if (gone)
		dc_invalidate_dir(w->c, ino, ev.dir_gen);
	else
		dc_invalidate_inode(w->c, ino, ev.dir_gen);
	report(w, &ev);
}

static void wake(struct dc_watch *w)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is already non-zero, the thread will wake */
	if (write(w->wake, &one, sizeof(one)) < 0) {
	}
}

/*
 * Stop watching and let the cache's TTLs bound every answer from now on.
 * w->lock held.  The cache is told on the thread (settle_fall_back): the
 * caller may be a backend lookup, inside the cache's miss path, and
 * changed() belongs on the watcher's thread.  Until the thread has done so
 * (microseconds) nothing new is learnt of the unwatched directory; its
 * lookups are forgotten when dc_set_ttl forgets everything.
 */
static void fall_back(struct dc_watch *w, int err, const char *why)
{
	if (dc__load(w->mode) == DC_WATCH_TTL)
		return;
	w->lost_err = err;
	w->lost_why = why;
	dc__store(w->mode, (int)DC_WATCH_TTL);
	wake(w);
}

/* The fall-back, on the thread: events end, TTLs begin. */
static void settle_fall_back(struct dc_watch *w)
{
	struct dc_change_event ev = {
		.what = DC_CHANGE_ALL, .flags = DC_CHANGED_DEGRADED,
	};
	const char *why;
	char eb[128];
	int err;

	pthread_mutex_lock(&w->lock);
	/* closing returns the watches to the user's budget */
	close(w->fd);
	w->fd = -1;
	err = w->lost_err;
	why = w->lost_why;
	pthread_mutex_unlock(&w->lock);
	/* a cache with TTLs of its own keeps them, as in ttl mode; what it
	 * holds may have changed unseen meanwhile either way */
	if (dc__load(w->c->ttl_on)) {
		dc_invalidate_all(w->c);
		say(w, "coherence: %s on %s: %s; using ttl (the cache's own)", why,
		    w->root, errstr(err, eb, sizeof(eb)));
	} else {
		dc_set_ttl(w->c, w->opt.ttl_ms, w->opt.ttl_ms);
		say(w, "coherence: %s on %s: %s; using ttl (%u ms)", why, w->root,
		    errstr(err, eb, sizeof(eb)), w->opt.ttl_ms);
	}
	report(w, &ev);
}

/* ---- inotify ------------------------------------------------------------ */

static size_t wd_slot(const struct dc_watch *w, int wd)
{
	return ((uint32_t)wd * 0x9e3779b1u) & w->wd_mask;
}

/* The table's entry for wd, or NULL.  w->lock held. */
static struct wd_ent *wd_find(struct dc_watch *w, int wd)
{
	size_t i;

	if (!w->wds)
		return NULL;
	for (i = wd_slot(w, wd); w->wds[i].wd; i = (i + 1) & w->wd_mask)
		if (w->wds[i].wd == wd)
			return &w->wds[i];
	return NULL;
}

static void wd_place(struct dc_watch *w, const struct wd_ent *e)
{
	size_t i;

	for (i = wd_slot(w, e->wd); w->wds[i].wd; i = (i + 1) & w->wd_mask)
		;
	w->wds[i] = *e;
}

/* Twice the slots (at most half full, so probes stay short). */
static int wd_grow(struct dc_watch *w)
{
	size_t n = w->wds ? (w->wd_mask + 1) * 2 : 64, i, old = w->wds ? w->wd_mask + 1 : 0;
	struct wd_ent *was = w->wds;

	w->wds = calloc(n, sizeof(*w->wds));
	if (!w->wds) {
		w->wds = was;
		return -ENOMEM;
	}
	w->wd_mask = n - 1;
	for (i = 0; i < old; i++)
		if (was[i].wd)
			wd_place(w, &was[i]);
	free(was);
	return 0;
}

/* Record wd -> (ino, dev); the kernel gives one inode one wd, so adding
 * a directory again finds its entry.  w->lock held. */
static int wd_put(struct dc_watch *w, int wd, uint64_t ino, uint64_t dev)
{
	struct wd_ent e = { wd, ino, dev }, *p = wd_find(w, wd);

	if (p) {
		*p = e;
		return 0;
	}
	if ((!w->wds || 2 * (w->wd_used + 1) > w->wd_mask + 1) && wd_grow(w))
		return -ENOMEM;
	wd_place(w, &e);
	w->wd_used++;
	return 0;
}

/* Remove wd, shifting back the entries that probed past it (no
 * tombstones).  w->lock held. */
static void wd_del(struct dc_watch *w, int wd)
{
	struct wd_ent *p = wd_find(w, wd);
	size_t i, j, home;

	if (!p)
		return;
	i = (size_t)(p - w->wds);
	w->wds[i].wd = 0;
	w->wd_used--;
	for (j = (i + 1) & w->wd_mask; w->wds[j].wd; j = (j + 1) & w->wd_mask) {
		home = wd_slot(w, w->wds[j].wd);
		/* j's entry may move to the hole at i unless its home lies
		 * cyclically in (i, j] */
		if ((j > i && (home <= i || home > j)) ||
		    (j < i && home <= i && home > j)) {
			w->wds[i] = w->wds[j];
			w->wds[j].wd = 0;
			i = j;
		}
	}
}

/* Watch directory fd (any descriptor of it: through /proc, so O_PATH
 * will do).  w->lock held. */
static int inotify_dir(struct dc_watch *w, int fd, uint64_t ino, uint64_t dev)
{
	char path[40];
	int wd, err;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wd = inotify_add_watch(w->fd, path, IN_EVENTS |
			       (w->opt.changed ? IN_MODIFY : 0));
	if (wd < 0)
		return -errno;
	err = wd_put(w, wd, ino, dev);
	if (err)	/* a new watch we cannot map: drop it */
		inotify_rm_watch(w->fd, wd);
	return err;
}

static int inotify_start(struct dc_watch *w)
{
	int err;

	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		w->fd = -1;
		return -errno;
	}
	pthread_mutex_lock(&w->lock);
	err = inotify_dir(w, w->root_fd, w->root_ino, w->root_dev);
	pthread_mutex_unlock(&w->lock);
	if (err) {
		close(w->fd);
		w->fd = -1;
		free(w->wds);
		w->wds = NULL;
		w->wd_used = 0;
	}
	return err;
}

/* One event: name (nl bytes; 0: the watched directory itself). */
static void inotify_one(struct dc_watch *w, const struct inotify_event *e,
			const char *name, size_t nl)
{
	struct dc_inode old;
	struct wd_ent *p, d;
	uint32_t flags = 0;

	if (e->mask & IN_Q_OVERFLOW) {
		lost(w, "the inotify queue overflowed");
		return;
	}
	pthread_mutex_lock(&w->lock);
	p = wd_find(w, e->wd);
	if (p)
		d = *p;
	if (p && (e->mask & IN_IGNORED))
		wd_del(w, e->wd);
	pthread_mutex_unlock(&w->lock);
	if (!p || (e->mask & IN_IGNORED))
		return;
	if (!nl) {
		if (e->mask & (IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT))
			flags |= DC_CHANGED_ATTR;
		forget_self(w, d.ino, d.dev, flags,
			    e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT));
		return;
	}
	if (e->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
		flags |= DC_CHANGED_ENTRY;
	if (e->mask & IN_ATTRIB)
		flags |= DC_CHANGED_ATTR;
	if (e->mask & IN_MODIFY)
		flags |= DC_CHANGED_DATA;
	forget_name(w, d.ino, d.dev, name, nl, flags, &old);
	report_name(w, d.ino, d.dev, name, nl, flags, &old, 0);
}

/* n bytes of events in w->buf.  The kernel returns whole events; a
 * record that does not fit is a kernel we do not understand. */
static void inotify_batch(struct dc_watch *w, size_t n)
{
	struct inotify_event e;
	size_t off = 0, nl;
	const char *name;

	while (n - off >= sizeof(e)) {
		memcpy(&e, w->buf + off, sizeof(e));
		off += sizeof(e);
		if (e.len > n - off) {
			lost(w, "a truncated inotify event");
			return;
		}
		name = w->buf + off;
		nl = strnlen(name, e.len);
		off += e.len;
		if (nl == e.len && e.len) {
			lost(w, "an inotify name without its NUL");
			continue;
		}
		inotify_one(w, &e, name, nl);
	}
}

/* ---- fanotify: file systems ---------------------------------------------- */

static const struct wfs *fs_by_dev(const struct dc_watch *w, uint64_t dev)
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
 * Mark the file system of directory fd (device dev), unless one with its
 * fsid is marked already (then dev is an alias of it).  The mark is made
 * through /proc (fanotify_mark does not take an O_PATH descriptor as its
 * object), and a descriptor of the directory kept for open_by_handle_at:
 * handles are opened in the mount they came through, below root, so that
 * climbing ".." from them passes root.  w->lock held.
 */
static int fs_add(struct dc_watch *w, int fd, uint64_t dev)
{
	struct statfs sfs;
	struct wfs *f;
	char path[40];

	if (w->nfs == WATCH_MAX_FS)
		return -ENOSPC;
	f = &w->fs[w->nfs];
	if (fstatfs(fd, &sfs) < 0)
		return -errno;
	memcpy(f->fsid, &sfs.f_fsid, sizeof(f->fsid));
	f->dev = dev;
	f->mount_fd = -1;
	if (!fs_by_fsid(w, f->fsid)) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (fanotify_mark(w->fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				  FAN_EVENTS | (w->opt.changed ? FAN_MODIFY : 0),
				  AT_FDCWD, path) < 0)
			return -errno;
		/* open_by_handle_at refuses an O_PATH mount descriptor */
		f->mount_fd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (f->mount_fd < 0)
			return -errno;	/* the mark stays, unused: harmless */
	}
	/* release: the entry is complete before readers can see it */
	dc__store_rel(w->nfs, w->nfs + 1);
	return 0;
}

static int fanotify_start(struct dc_watch *w)
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
		err = fs_add(w, w->root_fd, w->root_dev);
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

/* ---- fanotify: the memo ---------------------------------------------------- */

/* FNV-1a, seeded per watcher: which handles share a set differs by run. */
static uint64_t memo_key(const struct dc_watch *w, unsigned fs,
			 const struct file_handle *fh)
{
	uint64_t h = 0xcbf29ce484222325ull ^ w->seed;
	const unsigned char *p = fh->f_handle;
	uint32_t i;

	h = (h ^ fs) * 0x100000001b3ull;
	h = (h ^ (uint32_t)fh->handle_type) * 0x100000001b3ull;
	for (i = 0; i < fh->handle_bytes; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
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
static void memo_forget_verdicts(struct dc_watch *w)
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

/* ---- fanotify: events ------------------------------------------------------ */

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
	if (!r && !S_ISDIR(st.st_mode))
		dc_invalidate_inode(w->c, st.st_ino, dc_hostfs_gen(st.st_dev));
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
	if (err == -ESTALE || err == -ENOENT)
		return;
	if (err) {
		/* we cannot tell which directory changed */
		if (!w->told_unresolved) {
			w->told_unresolved = true;
			say(w, "coherence: cannot open a directory by handle on %s: %s",
			    w->root, errstr(err, eb, sizeof(eb)));
		}
		lost(w, "a change in an unknown directory");
		return;
	}
	if (!d.inside)
		return;
	/* a directory moved below root: what is below it may have left root,
	 * or come in (a move outside root changes no verdict) */
	if ((m->mask & FAN_ONDIR) && (m->mask & (FAN_MOVED_FROM | FAN_MOVED_TO)))
		memo_forget_verdicts(w);
	if (w->opt.ignore_self && m->pid == w->self)
		return;
	if (m->mask & (FAN_CREATE | FAN_DELETE | FAN_MOVED_FROM | FAN_MOVED_TO))
		flags |= DC_CHANGED_ENTRY;
	if (m->mask & FAN_ATTRIB)
		flags |= DC_CHANGED_ATTR;
	if (m->mask & FAN_MODIFY)
		flags |= DC_CHANGED_DATA;
	if (nl == 1 && name[0] == '.') {
		forget_self(w, d.ino, d.dev, flags & ~(uint32_t)DC_CHANGED_ENTRY,
			    false);
		return;
	}
	forget_name(w, d.ino, d.dev, name, nl, flags, &old);
	ino = target ? target_ino(f, target) : 0;
	/* the inode's other names share its attributes (hard links) */
	if (ino && (flags & DC_CHANGED_ATTR) && ino != old.ino)
		dc_invalidate_inode(w->c, ino, dc_hostfs_gen(f->dev));
	else if (!target && (flags & DC_CHANGED_ATTR) && !old.mode)
		forget_links(w, f, fh, name);
	report_name(w, d.ino, d.dev, name, nl, flags, &old, ino);
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
	report(w, &ev);
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
		lost(w, "the fanotify queue overflowed");
		return;
	}
	while (len >= sizeof(h)) {
		struct fid_rec *r = NULL;

		memcpy(&h, p, sizeof(h));
		if (h.len < sizeof(h) || h.len > len) {
			lost(w, "a malformed fanotify record");
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
			lost(w, "a malformed fanotify record");
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
static void fanotify_batch(struct dc_watch *w, size_t n)
{
	struct fanotify_event_metadata m;
	size_t off = 0;

	while (n - off >= FAN_EVENT_METADATA_LEN) {
		memcpy(&m, w->buf + off, sizeof(m));
		if (m.event_len < FAN_EVENT_METADATA_LEN || m.event_len > n - off ||
		    m.metadata_len < FAN_EVENT_METADATA_LEN ||
		    m.metadata_len > m.event_len ||
		    m.vers != FANOTIFY_METADATA_VERSION) {
			lost(w, "a malformed fanotify event");
			return;
		}
		if (m.fd >= 0)	/* never asked for (fid mode); never leaked */
			close(m.fd);
		fanotify_one(w, &m, w->buf + off + m.metadata_len,
			     m.event_len - m.metadata_len);
		off += m.event_len;
	}
}

/* ---- the thread ------------------------------------------------------------ */

/* Read events until none is left (or we are told to stop). */
/*
 * Far behind: more than WATCH_BEHIND bytes still queued after a full read
 * (a flood of changes elsewhere in the tree, or on the file system).  Each
 * queued event describes a change made before now, so one invalidation of
 * everything made after skipping them all covers them: skip to the end of
 * the queue, then forget all -- in that order, or a change skipped after
 * the invalidation would go untold.  inotify's removals of watches are
 * still taken from what is skipped, so the table stays true.  Without
 * this, a change at the end of a full queue waits for every event before
 * it to be handled one by one (hundreds of ms), only to reach the
 * overflow that forgets everything anyway.
 */
/* Of n bytes of inotify events in w->buf, only the watches' removals. */
static void skip_ignored(struct dc_watch *w, size_t n)
{
	struct inotify_event e;
	size_t off;

	for (off = 0; n - off >= sizeof(e); off += e.len) {
		memcpy(&e, w->buf + off, sizeof(e));
		off += sizeof(e);
		if (e.len > n - off)
			break;
		if (e.mask & IN_IGNORED) {
			pthread_mutex_lock(&w->lock);
			wd_del(w, e.wd);
			pthread_mutex_unlock(&w->lock);
		}
	}
}

static void skip_backlog(struct dc_watch *w)
{
	size_t skipped = 0;
	ssize_t n;

	while ((n = read(w->fd, w->buf, WATCH_BUF)) > 0 || (n < 0 && errno == EINTR)) {
		if (n < 0)
			continue;
		skipped += (size_t)n;
		if (w->kind == DC_WATCH_INOTIFY)
			skip_ignored(w, (size_t)n);
	}
	say(w, "coherence: the %s queue was near overflow on %s: skipped %zu bytes "
	    "of events", w->kind == DC_WATCH_INOTIFY ? "inotify" : "fanotify", w->root,
	    skipped);
	lost(w, "the skipped events");
}

static bool far_behind(struct dc_watch *w)
{
	int queued = 0;

	return ioctl(w->fd, FIONREAD, &queued) == 0 && queued > WATCH_BEHIND;
}

static void drain(struct dc_watch *w)
{
	ssize_t n;

	while (!dc__load(w->stop) && dc__load(w->mode) != DC_WATCH_TTL) {
		n = read(w->fd, w->buf, WATCH_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			pthread_mutex_lock(&w->lock);
			fall_back(w, n < 0 ? -errno : -EIO, "cannot read events");
			pthread_mutex_unlock(&w->lock);
			return;
		}
		/* a full read with much more behind it: the batch in hand is
		 * older than what is queued, so it goes with the rest */
		if ((size_t)n > WATCH_BUF - 4096 && far_behind(w)) {
			if (w->kind == DC_WATCH_INOTIFY)
				skip_ignored(w, (size_t)n);
			skip_backlog(w);
			continue;
		}
		/* by kind, not mode: a fall-back may have come since the read */
		if (w->kind == DC_WATCH_INOTIFY)
			inotify_batch(w, (size_t)n);
		else
			fanotify_batch(w, (size_t)n);
	}
}

/*
 * The thread's priority.  A change is stale until its event is handled,
 * and the thread's work per event is small, so it should not queue behind
 * the CPU-bound work that makes events (a flood of them can take every
 * CPU): nice -10 where allowed (CAP_SYS_NICE), else as it is.  A thread
 * of its own, so the owner's threads are not touched.
 */
static void raise_priority(void)
{
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WATCH_NICE) < 0 &&
	    errno != EACCES && errno != EPERM)
		return;
}

static void *watch_thread(void *arg)
{
	struct dc_watch *w = arg;
	struct pollfd p[2];
	uint64_t v;

	raise_priority();
	pthread_setname_np(pthread_self(), "dc-watch");
	while (!dc__load(w->stop)) {
		if (dc__load(w->mode) == DC_WATCH_TTL && w->fd >= 0)
			settle_fall_back(w);
		p[0] = (struct pollfd){ .fd = w->fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = w->wake, .events = POLLIN };
		if (poll(p, 2, -1) < 0) {
			if (errno != EINTR) {
				/* no way to wait: sleep, do not spin */
				nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
			}
			continue;
		}
		if ((p[1].revents & POLLIN) && read(w->wake, &v, sizeof(v)) < 0) {
		}
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) {
			pthread_mutex_lock(&w->lock);
			fall_back(w, -EIO, "the event descriptor failed");
			pthread_mutex_unlock(&w->lock);
		} else if (p[0].revents & POLLIN) {
			drain(w);
		}
	}
	return NULL;
}

/* ---- start and stop -------------------------------------------------------- */

static void watch_free(struct dc_watch *w)
{
	unsigned i;

	if (w->hostfs)
		dc__hostfs_watch(&w->c->be, NULL);
	if (w->thread_on) {
		dc__store(w->stop, 1);
		wake(w);
		pthread_join(w->thread, NULL);
	}
	for (i = 0; i < w->nfs; i++)
		if (w->fs[i].mount_fd >= 0)
			close(w->fs[i].mount_fd);
	if (w->fd >= 0)
		close(w->fd);
	if (w->wake >= 0)
		close(w->wake);
	if (w->root_fd >= 0)
		close(w->root_fd);
	pthread_mutex_destroy(&w->lock);
	free(w->wds);
	free(w->memo);
	free(w->buf);
	free(w->root);
	free(w);
}

static int watch_new(struct dc_cache *c, const char *root,
		     const struct dc_watch_options *opt, struct dc_watch **out)
{
	struct dc_watch *w = calloc(1, sizeof(*w));
	struct stat st;
	int err;

	if (!w)
		return -ENOMEM;
	w->c = c;
	w->opt = *opt;
	if (!w->opt.ttl_ms)
		w->opt.ttl_ms = WATCH_TTL_MS;
	w->fd = w->wake = -1;
	w->self = getpid();
	w->epoch = 1;
	w->seed = (uint64_t)(uintptr_t)w * 0x9e3779b97f4a7c15ull;
	pthread_mutex_init(&w->lock, NULL);
	w->root = strdup(root);
	w->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (w->root_fd < 0) {
		err = -errno;
		goto fail;
	}
	if (!w->root) {
		err = -ENOMEM;
		goto fail;
	}
	if (fstat(w->root_fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	w->root_ino = st.st_ino;
	w->root_dev = st.st_dev;
	*out = w;
	return 0;
fail:
	watch_free(w);
	return err;
}

/* ttl: the cache's own TTLs if it has any, else ttl_ms for both kinds. */
static void use_ttl(struct dc_watch *w, const char *why)
{
	dc__store(w->mode, (int)DC_WATCH_TTL);
	if (dc__load(w->c->ttl_on)) {
		say(w, "coherence: %sttl (the cache's own) on %s", why ? why : "",
		    w->root);
		return;
	}
	dc_set_ttl(w->c, w->opt.ttl_ms, w->opt.ttl_ms);
	say(w, "coherence: %sttl (%u ms) on %s", why ? why : "", w->opt.ttl_ms,
	    w->root);
}

/* The mode: opened, marked, watched, or an error (not auto). */
static int choose(struct dc_watch *w)
{
	char eb[128], eb2[128], why[512];
	int err, err2;

	switch (w->opt.mode) {
	case DC_WATCH_OFF:
		dc__store(w->mode, (int)DC_WATCH_OFF);
		say(w, "coherence: off on %s (the cache trusts its updates alone)",
		    w->root);
		return 0;
	case DC_WATCH_TTL:
		use_ttl(w, NULL);
		return 0;
	case DC_WATCH_INOTIFY:
		err = inotify_start(w);
		if (err)
			return err;
		dc__store(w->mode, (int)DC_WATCH_INOTIFY);
		w->kind = DC_WATCH_INOTIFY;
		say(w, "coherence: inotify on %s", w->root);
		return 0;
	case DC_WATCH_FANOTIFY:
		err = fanotify_start(w);
		if (err)
			return err;
		dc__store(w->mode, (int)DC_WATCH_FANOTIFY);
		w->kind = DC_WATCH_FANOTIFY;
		say(w, "coherence: fanotify (filesystem mark) on %s", w->root);
		return 0;
	case DC_WATCH_AUTO:
		break;
	}
	err = fanotify_start(w);
	if (!err) {
		dc__store(w->mode, (int)DC_WATCH_FANOTIFY);
		w->kind = DC_WATCH_FANOTIFY;
		say(w, "coherence: fanotify (filesystem mark) on %s", w->root);
		return 0;
	}
	err2 = inotify_start(w);
	if (!err2) {
		dc__store(w->mode, (int)DC_WATCH_INOTIFY);
		w->kind = DC_WATCH_INOTIFY;
		say(w, "coherence: fanotify not available on %s: %s; using inotify",
		    w->root, errstr(err, eb, sizeof(eb)));
		return 0;
	}
	snprintf(why, sizeof(why), "fanotify not available (%s), inotify not "
		 "available (%s); using ", errstr(err, eb, sizeof(eb)),
		 errstr(err2, eb2, sizeof(eb2)));
	use_ttl(w, why);
	return 0;
}

/* An event mode: the thread, and the hostfs backend's lookups told to
 * call dc_watch_dir.  Then what the cache holds is forgotten: it was
 * cached unwatched, and its directories were never given to
 * dc_watch_dir. */
static int run(struct dc_watch *w)
{
	int err;

	w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wake < 0)
		return -errno;
	w->buf = malloc(WATCH_BUF);
	if (!w->buf)
		return -ENOMEM;
	err = dc__hostfs_watch(&w->c->be, w);
	if (err && err != -EINVAL)
		return err;
	w->hostfs = !err;
	dc_invalidate_all(w->c);
	err = pthread_create(&w->thread, NULL, watch_thread, w);
	if (err)
		return -err;
	w->thread_on = true;
	return 0;
}

DC_API int dc_watch_start(struct dc_cache *c, const char *root,
			  const struct dc_watch_options *opt, struct dc_watch **out)
{
	struct dc_watch *w = NULL;
	int err, mode;

	if (out)
		*out = NULL;
	if (!c || !root || !opt || !out || (unsigned)opt->mode >= NR_WATCH_MODES ||
	    !dc__zeroed(opt->reserved, sizeof(opt->reserved)))
		return -EINVAL;
	err = watch_new(c, root, opt, &w);
	if (err)
		return err;
	err = choose(w);
	mode = dc__load(w->mode);
	if (!err && (mode == DC_WATCH_INOTIFY || mode == DC_WATCH_FANOTIFY))
		err = run(w);
	if (err) {
		watch_free(w);
		return err;
	}
	*out = w;
	return 0;
}

DC_API enum dc_watch_mode dc_watch_mode_of(struct dc_watch *w)
{
	return w ? (enum dc_watch_mode)dc__load(w->mode) : DC_WATCH_OFF;
}

DC_API int dc_watch_dir(struct dc_watch *w, int fd, uint64_t ino, uint64_t dev)
{
	int mode, err = 0;

	if (!w)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	mode = dc__load(w->mode);
	/* the common cases, without the lock: a marked file system, or no
	 * events to ask for */
	if (mode == DC_WATCH_FANOTIFY && fs_by_dev(w, dev))
		return 0;
	if (mode != DC_WATCH_FANOTIFY && mode != DC_WATCH_INOTIFY)
		return 0;
	pthread_mutex_lock(&w->lock);
	mode = dc__load(w->mode);
	if (mode == DC_WATCH_INOTIFY) {
		err = inotify_dir(w, fd, ino, dev);
		if (err)
			fall_back(w, err, err == -ENOSPC ?
				  "inotify watch limit reached (fs.inotify.max_user_watches)" :
				  "cannot watch a directory");
	} else if (mode == DC_WATCH_FANOTIFY && !fs_by_dev(w, dev)) {
		err = fs_add(w, fd, dev);
		if (err)
			fall_back(w, err, "cannot mark the file system of a directory");
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

DC_API void dc_watch_stop(struct dc_watch *w)
{
	if (w)
		watch_free(w);
}
