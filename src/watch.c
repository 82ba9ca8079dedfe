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
 *   fanotify  one mark per file system (watch_fanotify.c)
 *   inotify   one watch per directory (watch_inotify.c)
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
 * This file: the public calls, starting (the mode's choice) and stopping.
 * What events do is watch_event.c's; watch.h has the locking rules, whose
 * order is: hostfs's watcher lock (read side, held across dc_watch_dir) ->
 * w->lock -> the kernel's.  dc_watch_stop detaches from hostfs (the write
 * side, which waits for lookups inside dc_watch_dir) before it frees
 * anything, so no lookup reaches a freed watcher.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* O_PATH */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "watch.h"

#define WATCH_TTL_MS	1000u		/* opt->ttl_ms 0 */

static const char *const watch_mode_names[] = {
	[DC_WATCH_AUTO]		= "auto",
	[DC_WATCH_OFF]		= "off",
	[DC_WATCH_TTL]		= "ttl",
	[DC_WATCH_INOTIFY]	= "inotify",
	[DC_WATCH_FANOTIFY]	= "fanotify",
};
#define NR_WATCH_MODES	DC_ARRAY_SIZE(watch_mode_names)

DC_API const char *dc_watch_mode_name(enum dc_watch_mode mode)
{
	return dc__enum_name(watch_mode_names, NR_WATCH_MODES, (unsigned)mode);
}

DC_API int dc_watch_mode_parse(const char *name, enum dc_watch_mode *out)
{
	int v = out ? dc__enum_parse(watch_mode_names, NR_WATCH_MODES, name)
		    : -EINVAL;

	if (v < 0)
		return v;
	*out = (enum dc_watch_mode)v;
	return 0;
}

/* ---- start and stop -------------------------------------------------------- */

static void watch_free(struct dc_watch *w)
{
	unsigned i;

	if (w->hostfs)
		dc__hostfs_watch(&w->c->be, NULL);
	if (w->thread_on) {
		dc__store(w->stop, 1);
		dc__watch_wake(w);
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
	w->hkey.k0 = (uint64_t)(uintptr_t)w * 0x9e3779b97f4a7c15ull;
	w->hkey.k1 = dc__mum(w->hkey.k0, 0xd6e8feb86659fd93ull);
	pthread_mutex_init(&w->lock, NULL);
	w->root = strdup(root);
	if (opt->root_fd_set)
		w->root_fd = fcntl(opt->root_fd, F_DUPFD_CLOEXEC, 3);
	else
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
	if (!S_ISDIR(st.st_mode)) {
		err = -ENOTDIR;
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
		dc__watch_say(w, "coherence: %sttl (the cache's own) on %s", why ? why : "",
			      w->root);
		return;
	}
	dc_set_ttl(w->c, w->opt.ttl_ms, w->opt.ttl_ms);
	dc__watch_say(w, "coherence: %sttl (%u ms) on %s", why ? why : "", w->opt.ttl_ms,
		      w->root);
}

/* An event mode is on: kind is what w->fd is.  fan_err, when not 0, is why
 * auto took inotify rather than fanotify. */
static void use_events(struct dc_watch *w, int kind, int fan_err)
{
	char eb[128];

	dc__store(w->mode, kind);
	w->kind = kind;
	if (kind == DC_WATCH_FANOTIFY)
		dc__watch_say(w, "coherence: fanotify (filesystem mark) on %s", w->root);
	else if (fan_err)
		dc__watch_say(w, "coherence: fanotify not available on %s: %s; using inotify",
			      w->root, dc__watch_errstr(fan_err, eb, sizeof(eb)));
	else
		dc__watch_say(w, "coherence: inotify on %s", w->root);
}

/* The mode: opened, marked, watched, or an error (not auto). */
static int choose(struct dc_watch *w)
{
	char eb[128], eb2[128], why[512];
	int err, err2;

	switch (w->opt.mode) {
	case DC_WATCH_OFF:
		dc__store(w->mode, (int)DC_WATCH_OFF);
		dc__watch_say(w, "coherence: off on %s (the cache trusts its updates alone)",
			      w->root);
		return 0;
	case DC_WATCH_TTL:
		use_ttl(w, NULL);
		return 0;
	case DC_WATCH_INOTIFY:
		err = dc__inotify_start(w);
		if (!err)
			use_events(w, DC_WATCH_INOTIFY, 0);
		return err;
	case DC_WATCH_FANOTIFY:
		err = dc__fanotify_start(w);
		if (!err)
			use_events(w, DC_WATCH_FANOTIFY, 0);
		return err;
	case DC_WATCH_AUTO:
		break;
	}
	err = dc__fanotify_start(w);
	if (!err) {
		use_events(w, DC_WATCH_FANOTIFY, 0);
		return 0;
	}
	err2 = dc__inotify_start(w);
	if (!err2) {
		use_events(w, DC_WATCH_INOTIFY, err);
		return 0;
	}
	snprintf(why, sizeof(why), "fanotify not available (%s), inotify not "
		 "available (%s); using ", dc__watch_errstr(err, eb, sizeof(eb)),
		 dc__watch_errstr(err2, eb2, sizeof(eb2)));
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
	err = pthread_create(&w->thread, NULL, dc__watch_thread, w);
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
	    (opt->root_fd_set != 0 && opt->root_fd_set != 1) ||
	    (!opt->root_fd_set && opt->root_fd) ||
	    !dc__zeroed(opt->reserved, sizeof(opt->reserved)))
		return -EINVAL;
	if (opt->root_fd_set && opt->root_fd < 0)
		return -EBADF;
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
	if (mode == DC_WATCH_FANOTIFY && dc__fanotify_fs_by_dev(w, dev))
		return 0;
	if (mode != DC_WATCH_FANOTIFY && mode != DC_WATCH_INOTIFY)
		return 0;
	pthread_mutex_lock(&w->lock);
	mode = dc__load(w->mode);
	if (mode == DC_WATCH_INOTIFY) {
		err = dc__inotify_dir(w, fd, ino, dev);
		if (err)
			dc__watch_fall_back(w, err, err == -ENOSPC ?
					    "inotify watch limit reached (fs.inotify.max_user_watches)" :
					    "cannot watch a directory");
	} else if (mode == DC_WATCH_FANOTIFY && !dc__fanotify_fs_by_dev(w, dev)) {
		err = dc__fanotify_fs_add(w, fd, dev);
		if (err)
			dc__watch_fall_back(w, err, "cannot mark the file system of a directory");
	}
	pthread_mutex_unlock(&w->lock);
	return err;
}

DC_API void dc_watch_stop(struct dc_watch *w)
{
	if (w)
		watch_free(w);
}
