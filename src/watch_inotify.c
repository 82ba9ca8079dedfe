// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch_inotify.c - the inotify backend: one watch per directory, added
 * by dc_watch_dir before the directory's names are looked up, and a table
 * wd -> (ino, dev) that turns each event into the directory it is about.
 *
 * Locking: the table is w->lock's, held across inotify_add_watch so that
 * a watch the kernel made is in the table before its IN_IGNORED can be
 * handled (the thread takes the lock for that): a removed watch never
 * lingers there.  Events are read and handled on the thread alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "watch.h"

/* What the cache needs; contents changes (MODIFY) only for an owner's
 * changed(), as the cache holds no contents: without one they would only
 * fill the queue (a build elsewhere on the file system) towards overflow. */
#define IN_EVENTS	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | \
			 IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | \
			 IN_EXCL_UNLINK | IN_ONLYDIR)

/* An inotify watch: the directory it reports on. */
struct wd_ent {
	int wd;			/* 0: empty slot */
	uint64_t ino, dev;
};

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
int dc__inotify_dir(struct dc_watch *w, int fd, uint64_t ino, uint64_t dev)
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

int dc__inotify_start(struct dc_watch *w)
{
	int err;

	w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->fd < 0) {
		w->fd = -1;
		return -errno;
	}
	pthread_mutex_lock(&w->lock);
	err = dc__inotify_dir(w, w->root_fd, w->root_ino, w->root_dev);
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
		dc__watch_lost(w, "the inotify queue overflowed");
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
		dc__watch_forget_self(w, d.ino, d.dev, flags,
				      e->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT));
		return;
	}
	if (e->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO))
		flags |= DC_CHANGED_ENTRY;
	if (e->mask & IN_ATTRIB)
		flags |= DC_CHANGED_ATTR;
	if (e->mask & IN_MODIFY)
		flags |= DC_CHANGED_DATA;
	dc__watch_forget_name(w, d.ino, d.dev, name, nl, flags, &old);
	dc__watch_report_name(w, d.ino, d.dev, name, nl, flags, &old, 0);
}

/* n bytes of events in w->buf.  The kernel returns whole events; a
 * record that does not fit is a kernel we do not understand. */
void dc__inotify_batch(struct dc_watch *w, size_t n)
{
	struct inotify_event e;
	size_t off = 0, nl;
	const char *name;

	while (n - off >= sizeof(e)) {
		memcpy(&e, w->buf + off, sizeof(e));
		off += sizeof(e);
		if (e.len > n - off) {
			dc__watch_lost(w, "a truncated inotify event");
			return;
		}
		name = w->buf + off;
		nl = strnlen(name, e.len);
		off += e.len;
		if (nl == e.len && e.len) {
			dc__watch_lost(w, "an inotify name without its NUL");
			continue;
		}
		inotify_one(w, &e, name, nl);
	}
}

/* Of n bytes of inotify events in w->buf, only the watches' removals. */
void dc__inotify_removals(struct dc_watch *w, size_t n)
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
