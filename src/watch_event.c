// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch_event.c - what a watcher does with what it learns: each event
 * becomes the cache call that forgets what it may have made false, then
 * the owner's changed(); a lost event forgets everything; a watcher that
 * cannot watch falls back to ttl.  And the thread that reads the events.
 *
 * Locking (watch.h has the whole table): the cache and changed() are
 * called with no lock of ours held; w->lock is taken for the inotify
 * table and the fall-back only.  The thread alone reads w->fd's events.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* the GNU strerror_r */
#endif
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "watch.h"

#define WATCH_NICE	(-10)		/* the thread's priority, where allowed */
#define WATCH_BEHIND	(64 << 10)	/* queued bytes (FIONREAD) past a full
					 * read that mean "skip to the end": a
					 * few thousand events either kind */
#define WATCH_PACE_NS	1000000		/* a stream of events is read about
					 * once a millisecond (pace) */

/* ---- telling the cache, and the owner --------------------------------- */

void dc__watch_say(struct dc_watch *w, const char *fmt, ...)
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
const char *dc__watch_errstr(int err, char *buf, size_t size)
{
	return strerror_r(err < 0 ? -err : err, buf, size);
}

void dc__watch_report(struct dc_watch *w, const struct dc_change_event *ev)
{
	if (w->opt.changed)
		w->opt.changed(w->opt.arg, ev);
}

/* Events were lost, or could not be read: anything may have changed. */
void dc__watch_lost(struct dc_watch *w, const char *why)
{
	struct dc_change_event ev = { .what = DC_CHANGE_ALL };

	dc_invalidate_all(w->c);
	if (w->memo)
		dc__fanotify_forget_verdicts(w);	/* a lost move could change them */
	dc__watch_say(w, "coherence: %s on %s: forgot everything", why, w->root);
	dc__watch_report(w, &ev);
}

/*
 * name in directory (dir_ino, dir_dev) changed: tell the cache, and say in
 * *old what it held for the name (all 0: nothing, or a negative entry).
 * A binding or attribute change forgets the name; an attribute change
 * also forgets the inode's other names (hard links share its attributes),
 * where the cache knew which inode the name held.  A change of contents
 * alone forgets nothing: the cache holds no contents (and no size).
 */
void dc__watch_forget_name(struct dc_watch *w, uint64_t dir_ino, uint64_t dir_dev,
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
void dc__watch_report_name(struct dc_watch *w, uint64_t dir_ino, uint64_t dir_dev,
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
		dc__watch_report(w, &ev);
}

/* The directory itself changed: its attributes (it is checked again
 * before its next use, keeping what is cached below it, whose own changes
 * are reported by name); or, gone, it was moved, removed or unmounted,
 * which its parent reports by name too where it is watched (forgotten
 * with everything cached below).  The owner hears of it as the name "."
 * in the directory. */
void dc__watch_forget_self(struct dc_watch *w, uint64_t ino, uint64_t dev,
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
	dc__watch_report(w, &ev);
}

void dc__watch_wake(struct dc_watch *w)
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
 * (at once, or after its pace: a millisecond) nothing new is learnt of the
 * unwatched directory; its lookups are forgotten when dc_set_ttl forgets
 * everything.
 */
void dc__watch_fall_back(struct dc_watch *w, int err, const char *why)
{
	if (dc__load(w->mode) == DC_WATCH_TTL)
		return;
	w->lost_err = err;
	w->lost_why = why;
	dc__store(w->mode, (int)DC_WATCH_TTL);
	dc__watch_wake(w);
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
		dc__watch_say(w, "coherence: %s on %s: %s; using ttl (the cache's own)", why,
			      w->root, dc__watch_errstr(err, eb, sizeof(eb)));
	} else {
		dc_set_ttl(w->c, w->opt.ttl_ms, w->opt.ttl_ms);
		dc__watch_say(w, "coherence: %s on %s: %s; using ttl (%u ms)", why, w->root,
			      dc__watch_errstr(err, eb, sizeof(eb)), w->opt.ttl_ms);
	}
	dc__watch_report(w, &ev);
}

/* ---- the thread ------------------------------------------------------------ */

/*
 * Far behind: more than WATCH_BEHIND bytes still queued after a full read
 * (a flood of changes elsewhere in the tree, or on the file system).  Each
 * queued event describes a change made before now, so one invalidation of
 * everything made after skipping them covers them: skip what is queued
 * now, then forget all -- in that order, or a change skipped after the
 * invalidation would go untold.  Only what is queued now: under a flood
 * that goes on, reading until the queue is empty might never end, and
 * nothing would be forgotten meanwhile (nor would dc_watch_stop's join
 * return); what comes after is read as usual.  inotify's removals of
 * watches are still taken from what is skipped, so the table stays true.
 * Without this, a change at the end of a full queue waits for every event
 * before it to be handled one by one (hundreds of ms), only to reach the
 * overflow that forgets everything anyway.
 */
static void skip_backlog(struct dc_watch *w)
{
	size_t skipped = 0;
	int queued = 0;
	ssize_t n;

	/* fanotify's count may hold each event's metadata alone, less than
	 * what a read returns: less is skipped then, and the rest is read
	 * as usual (or skipped again) */
	if (ioctl(w->fd, FIONREAD, &queued) < 0)
		queued = 0;	/* then one read's worth */
	do {
		n = read(w->fd, w->buf, WATCH_BUF);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		skipped += (size_t)n;
		if (w->kind == DC_WATCH_INOTIFY)
			dc__inotify_removals(w, (size_t)n);
	} while (skipped < (size_t)queued && !dc__load(w->stop));
	dc__watch_say(w, "coherence: the %s queue was near overflow on %s: skipped %zu bytes "
		      "of events", w->kind == DC_WATCH_INOTIFY ? "inotify" : "fanotify", w->root,
		      skipped);
	dc__watch_lost(w, "the skipped events");
}

static bool far_behind(struct dc_watch *w)
{
	int queued = 0;

	return ioctl(w->fd, FIONREAD, &queued) == 0 && queued > WATCH_BEHIND;
}

/* Read events until none is left (or we are told to stop). */
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
			int err = n < 0 ? -errno : -EIO;	/* before the lock */

			pthread_mutex_lock(&w->lock);
			dc__watch_fall_back(w, err, "cannot read events");
			pthread_mutex_unlock(&w->lock);
			return;
		}
		/* a full read with much more behind it: the batch in hand is
		 * older than what is queued, so it goes with the rest */
		if ((size_t)n > WATCH_BUF - 4096 && far_behind(w)) {
			if (w->kind == DC_WATCH_INOTIFY)
				dc__inotify_removals(w, (size_t)n);
			skip_backlog(w);
			continue;
		}
		/* by kind, not mode: a fall-back may have come since the read */
		if (w->kind == DC_WATCH_INOTIFY)
			dc__inotify_batch(w, (size_t)n);
		else
			dc__fanotify_batch(w, (size_t)n);
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

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Under a stream of events (a read within two paces of the last) the
 * thread sleeps after each read until a pace has passed since it began,
 * so that it reads about once a pace, woken by its timer, and not once an
 * event: each wake-up by an event is a context switch, and at our
 * priority it preempts whoever made the change (most events of a stream
 * are the owner's own, which the kernel queues and we drop).  A change
 * after a quiet spell is read at once; under a stream one waits a pace at
 * most (and the timer's slack, 50 us by default).
 */
static void pace(uint64_t began)
{
	uint64_t now = mono_ns();

	if (now - began < WATCH_PACE_NS) {
		uint64_t ns = WATCH_PACE_NS - (now - began);

		nanosleep(&(struct timespec){ 0, (long)ns }, NULL);
	}
}

void *dc__watch_thread(void *arg)
{
	struct dc_watch *w = arg;
	struct pollfd p[2];
	uint64_t v, last = 0;

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
			dc__watch_fall_back(w, -EIO, "the event descriptor failed");
			pthread_mutex_unlock(&w->lock);
		} else if (p[0].revents & POLLIN) {
			uint64_t began = mono_ns();
			bool stream = began - last < 2 * WATCH_PACE_NS;

			last = began;
			drain(w);
			if (stream)
				pace(began);
		}
	}
	return NULL;
}
