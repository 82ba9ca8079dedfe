/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch.h - a watcher's state, private to the files that make it:
 *
 *   watch.c           the public calls: start, stop, dc_watch_dir, modes
 *   watch_event.c     what an event tells the cache and the owner, the
 *                     fall-back to ttl, and the thread that reads events
 *   watch_inotify.c   the inotify backend: a watch per directory
 *   watch_fanotify.c  the fanotify backend: a mark per file system
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
#ifndef DC_WATCH_H
#define DC_WATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal.h"

#define WATCH_BUF	(64u << 10)	/* one read of events */
#define WATCH_MAX_FS	32		/* file systems one fanotify watcher marks */

struct wd_ent;		/* watch_inotify.c */
struct memo;		/* watch_fanotify.c */

/* A file system a fanotify watcher marked (or a device of one it did). */
struct wfs {
	unsigned char fsid[8];	/* statfs f_fsid, as events report it */
	uint64_t dev;
	int mount_fd;		/* for open_by_handle_at; -1: an alias of an
				 * earlier entry with the same fsid */
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
	struct dc_hkey hkey;		/* the memo's hash key, per watcher */
	bool told_unresolved;		/* logged a handle we could not open */
	char *buf;			/* WATCH_BUF bytes */
};

/* ---- watch_event.c ------------------------------------------------------ */

/* A line to the owner's log(), when it gave one. */
void dc__watch_say(struct dc_watch *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* err (either sign) in words, in buf; thread-safe. */
const char *dc__watch_errstr(int err, char *buf, size_t size);
/* Hand ev to the owner's changed(), when it gave one. */
void dc__watch_report(struct dc_watch *w, const struct dc_change_event *ev);
/* Events were lost: forget everything, and say so. */
void dc__watch_lost(struct dc_watch *w, const char *why);
/* name in (dir_ino, dir_dev) changed: tell the cache, *old what it held. */
void dc__watch_forget_name(struct dc_watch *w, uint64_t dir_ino, uint64_t dir_dev,
			   const char *name, size_t len, uint32_t flags,
			   struct dc_inode *old);
/* Then tell the owner (nothing when flags is 0). */
void dc__watch_report_name(struct dc_watch *w, uint64_t dir_ino, uint64_t dir_dev,
			   const char *name, size_t len, uint32_t flags,
			   const struct dc_inode *old, uint64_t ino);
/* The directory (ino, dev) itself changed, or is gone. */
void dc__watch_forget_self(struct dc_watch *w, uint64_t ino, uint64_t dev,
			   uint32_t flags, bool gone);
/* Wake the thread (through w->wake). */
void dc__watch_wake(struct dc_watch *w);
/* Stop watching, fall back to ttl; the thread settles it.  w->lock held. */
void dc__watch_fall_back(struct dc_watch *w, int err, const char *why);
/* The thread: reads events until w->stop. */
void *dc__watch_thread(void *arg);

/* ---- watch_inotify.c ---------------------------------------------------- */

/* Open the inotify descriptor and watch root.  0 or -errno. */
int dc__inotify_start(struct dc_watch *w);
/* Watch directory fd (ino, dev).  0 or -errno (-ENOSPC: the user's
 * watch limit).  w->lock held. */
int dc__inotify_dir(struct dc_watch *w, int fd, uint64_t ino, uint64_t dev);
/* Handle the n bytes of events in w->buf.  The thread's. */
void dc__inotify_batch(struct dc_watch *w, size_t n);
/* Of n bytes of events in w->buf, take only the watches' removals. */
void dc__inotify_removals(struct dc_watch *w, size_t n);

/* ---- watch_fanotify.c --------------------------------------------------- */

/* Open the fanotify descriptor and mark root's file system.  0 or -errno. */
int dc__fanotify_start(struct dc_watch *w);
/* Mark the file system of directory fd (device dev).  0 or -errno
 * (-ENOSPC: WATCH_MAX_FS marked).  w->lock held. */
int dc__fanotify_fs_add(struct dc_watch *w, int fd, uint64_t dev);
/* The marked file system of device dev, or NULL.  Lock-free. */
const struct wfs *dc__fanotify_fs_by_dev(const struct dc_watch *w, uint64_t dev);
/* Handle the n bytes of events in w->buf.  The thread's. */
void dc__fanotify_batch(struct dc_watch *w, size_t n);
/* Every memoised "below root" verdict may be wrong now.  The thread's. */
void dc__fanotify_forget_verdicts(struct dc_watch *w);

#endif /* DC_WATCH_H */
