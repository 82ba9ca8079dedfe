// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coherence.c - changes made in SOURCE_DIR behind dcfs's back (another
 * program, a git checkout, a container writing its volume) shown through
 * the mount within milliseconds, with the kernel's long timeouts kept.
 *
 * Two caches must learn of each change: libdcache's, which a libdcache
 * watcher (dc_watch_start: fanotify, inotify or ttl) tells itself, and the
 * kernel's, which only dcfs can tell, through FUSE notifications sent from
 * the watcher's thread in its changed() hook:
 *
 *   a name's binding changed   FUSE_NOTIFY_INVAL_ENTRY (parent, name), and
 *                              INVAL_INODE of the parent (mtime, nlink) and
 *                              of the inodes the name named before and
 *                              names now (their link counts changed)
 *   an inode's link count      INVAL_INODE of it (fanotify names the inode
 *                              of an event, Linux 5.17)
 *   attributes / contents      INVAL_INODE of what the name names: the
 *                              attributes and the page cache
 *   anything may have changed  FUSE_NOTIFY_INC_EPOCH (Linux 6.16: every
 *                              name the kernel holds is checked again on
 *                              its next use) and INVAL_INODE of every node
 *                              the kernel knows
 *
 * The hook runs on the watcher's thread, never on a worker serving a
 * request: the kernel may take a directory's lock to drop a name, and a
 * request holding that lock waits on a worker, never on this thread.  It
 * holds no lock of dcfs or libdcache while it notifies.  A directory the
 * kernel does not know (no node with nlookup > 0) has no names in the
 * kernel to drop, so events there cost a table probe.
 *
 * With fanotify, dcfs's own changes (the kernel asked for them, and dcfs
 * told libdcache itself) are dropped by the watcher (ignore_self): no
 * second storm of invalidations for work the caches already know of.
 *
 * When the watcher falls back to ttl (the inotify watch budget is spent),
 * the kernel's timeouts drop to 0 from that moment, as in ttl mode: what
 * the kernel holds was made true by the INC_EPOCH sent with the fallback.
 */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcfs.h"

/* The kernel's notification code (include/uapi/linux/fuse.h, 7.44). */
#define NOTIFY_INC_EPOCH	8

struct fuse_notify_header {	/* struct fuse_out_header */
	uint32_t len;
	int32_t error;
	uint64_t unique;
};

static struct dc_watch *watch;
static bool epoch_unsupported;
/*
 * The session's descriptor is closed at unmount while the watcher may
 * still run, and its number may then be reused by a file another thread
 * opens: a notification written there would land in that file.  So the
 * hook counts itself in (notifiers) and checks notify_off, and so does
 * each write (sending); the unmount sets notify_off and waits for the
 * count to drop (coherence_quiesce).  Both sides store, then load,
 * seq_cst: either the hook sees the flag and sends nothing, or the
 * waiter sees it counted and waits.
 */
static _Atomic int notifiers;
static _Atomic bool notify_off;

static void log_line(void *arg, const char *msg)
{
	(void)arg;
	dcfs_log(LOG_NOTICE, "%s", msg);
}

/* A notification may still be written: the unmount has not begun. */
static bool sending(void)
{
	return !atomic_load(&notify_off);
}

static void inval_inode(struct dnode *n, bool data)
{
	/* off -1: attributes only; 0, 0: attributes and every cached page */
	if (sending())
		fuse_lowlevel_notify_inval_inode(dcfs.se, node_ino(n), data ? 0 : -1, 0);
}

static void inval_each(struct dnode *n, void *data)
{
	inval_inode(n, *(bool *)data);
}

/* Tell the kernel that inode (dev, ino) changed, through every node of it
 * the kernel knows. */
static void inval_known(uint64_t dev, uint64_t ino, bool data)
{
	node_each_known(dev, ino, inval_each, &data);
}

/* The inode name in dir names now, if dir's descriptor can tell. */
static void inval_child(struct dnode *dir, const char *name, bool data)
{
	struct stat st;
	int tmp, fd = node_dir_fd(dir, &tmp);

	if (fd >= 0 && fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		inval_known(st.st_dev, st.st_ino, data);
	node_dir_fd_put(tmp);
}

/*
 * The watcher forgot name in dir for an attribute change; the kernel
 * still holds the name (only its inode's attributes were dropped).  Look
 * it up again now, so that the cache knows which inode the kernel's name
 * is when that name is removed later: then the inode's other names are
 * told of their new link count (inotify says nothing of it itself).
 */
static void relearn(struct dnode *dir, const char *name, size_t len)
{
	struct dc_dentry *dd = node_dentry_get(dir), *d;

	if (dd && dc_lookup(dcfs.cache, dd, name, len, &d) == 0)
		dc_put(dcfs.cache, d);
	if (dd)
		dc_put(dcfs.cache, dd);
	stash_clear();	/* a miss stashed a descriptor for a request: none */
}

/* Every name the kernel holds is checked again at its next use. */
static void bump_epoch(void)
{
	struct fuse_notify_header h = { sizeof(h), NOTIFY_INC_EPOCH, 0 };

	if (epoch_unsupported || !sending())
		return;
	if (write(fuse_session_fd(dcfs.se), &h, sizeof(h)) != (ssize_t)sizeof(h)) {
		epoch_unsupported = true;
		dcfs_log(LOG_WARNING, "the kernel cannot drop all its names at once "
			"(FUSE_NOTIFY_INC_EPOCH, Linux 6.16: %s); names it holds may "
			"stay stale for up to the entry timeout", strerror(errno));
	}
}

static void all_changed(bool degraded)
{
	struct dnode **list;
	size_t n, i;
	double zero = 0;

	if (degraded) {
		/* from now on the kernel asks every time, and the cache's TTLs
		 * bound the answers' age */
		__atomic_store(&dcfs.entry_timeout, &zero, __ATOMIC_RELAXED);
		__atomic_store(&dcfs.attr_timeout, &zero, __ATOMIC_RELAXED);
	}
	bump_epoch();
	n = nodes_collect_known(&list);
	for (i = 0; i < n; i++) {
		inval_inode(list[i], true);
		node_put(list[i]);
	}
	free(list);
}

static void notify(const struct dc_change_event *ev)
{
	struct dnode *dir;

	if (ev->what == DC_CHANGE_ALL) {
		all_changed(ev->flags & DC_CHANGED_DEGRADED);
		return;
	}
	if (ev->what == DC_CHANGE_INODE) {
		inval_known(ev->dir_dev, ev->ino, ev->flags & DC_CHANGED_DATA);
		return;
	}
	dir = node_find_known(ev->dir_dev, ev->dir_ino);
	if (!dir)
		return;		/* the kernel holds nothing in it */
	if (ev->flags & DC_CHANGED_ENTRY) {
		if (sending())
			fuse_lowlevel_notify_inval_entry(dcfs.se, node_ino(dir),
							 ev->name, ev->len);
		inval_inode(dir, true);
		if (ev->old_ino)
			inval_known(ev->dir_dev, ev->old_ino, false);
	}
	/* the inode the kernel says the event is about (an unlinked hard
	 * link's survivor), and the one the name names now */
	if (ev->ino && ev->ino != ev->old_ino)
		inval_known(ev->dir_dev, ev->ino, ev->flags & DC_CHANGED_DATA);
	inval_child(dir, ev->name, ev->flags & DC_CHANGED_DATA);
	if ((ev->flags & DC_CHANGED_ATTR) && !(ev->flags & DC_CHANGED_ENTRY) &&
	    strcmp(ev->name, "."))
		relearn(dir, ev->name, ev->len);
	node_put(dir);
}

static void changed(void *arg, const struct dc_change_event *ev)
{
	(void)arg;
	atomic_fetch_add(&notifiers, 1);
	if (!atomic_load(&notify_off))
		notify(ev);
	atomic_fetch_sub(&notifiers, 1);
}

int coherence_start(const char *source)
{
	struct dc_watch_options o = {
		.mode = dcfs.coherence,
		.ttl_ms = dcfs.ttl_ms,
		.ignore_self = 1,
		.changed = changed,
		.log = log_line,
		/* the source as opened before the mount: mounted on itself,
		 * its path would lead into dcfs, which does not serve yet */
		.root_fd_set = 1,
		.root_fd = dcfs.root_fd,
	};
	int err;

	if (dcfs.coherence == DC_WATCH_OFF) {
		/* said as the watcher says its mode, so the log always names one */
		dcfs_log(LOG_NOTICE, "coherence: off on %s (the cache trusts its updates alone)",
			 source);
		return 0;
	}
	err = dc_watch_start(dcfs.cache, source, &o, &watch);
	if (err) {
		dcfs_log(LOG_ERR, "--coherence=%s on '%s': %s",
			dc_watch_mode_name(dcfs.coherence), source, strerror(-err));
		return err;
	}
	return 0;
}

enum dc_watch_mode coherence_mode(void)
{
	return watch ? dc_watch_mode_of(watch) : DC_WATCH_OFF;
}

void coherence_watch_dir(struct dnode *n, int fd)
{
	/* a watch is on the inode: any descriptor of it will do */
	if (watch)
		dc_watch_dir(watch, fd, n->ino, n->dev);
}

/*
 * No notification is begun from now on, and none is in flight once this
 * returns: then the session's descriptor may be closed.  A notification
 * can wait in the kernel for a directory's lock or a page's that a
 * request holds, which waits for an answer no worker will give any
 * more; so the wait ends after a second, said.  Such a write holds the
 * device itself, whatever becomes of its descriptor's number, and the
 * writes after it check the flag first; what is left is a watcher
 * stopped for that second between a check and its write.
 */
void coherence_quiesce(void)
{
	int i;

	atomic_store(&notify_off, true);
	for (i = 0; i < 1000 && atomic_load(&notifiers); i++)
		usleep(1000);
	if (atomic_load(&notifiers))
		dcfs_log(LOG_WARNING, "unmounting with a notification to the kernel "
			 "still in flight (blocked for over a second)");
}

void coherence_stop(void)
{
	if (watch)
		dc_watch_stop(watch);
	watch = NULL;
}
