// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * flood.c - floods (--flood N): many threads make empty files in the
 * source as fast as it takes them, in a directory of the tree no change
 * touches, while a change is made, so that a watcher of the source falls
 * behind and its event queue overflows; then the files are removed.
 *
 * Threads: each flooding thread works in a directory of its own and
 * touches only its struct flooder; the main thread reads a flooder's
 * count with relaxed loads while waiting for the first --flood files
 * (a progress count, nothing is read through it), and its other fields
 * only after joining it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "fs/fsmount.h"
#include "fs/coherence/run.h"

/* One flooding thread: its share of the files, in a directory of its own
 * (files made in one directory queue on its lock). */
struct flooder {
	pthread_t thread;
	struct flood *fl;
	int dfd;			/* FLOOD_DIR/K in the source; -1: none */
	unsigned k, n;			/* its share of --flood */
	atomic_uint made;
	atomic_bool done;
	int64_t end;			/* when its last file was removed */
	char err[160];			/* the first failure */
};

/* A flood under way. */
struct flood {
	struct flooder f[FLOOD_THREADS];
	unsigned t;
	atomic_bool stop;		/* the change is made: remove the files */
	int64_t t0;
};

/*
 * Makes the thread's share of files, and more (twice its share at most)
 * until the change in hand has been made, so that the queue is full then,
 * and still filling; then removes them all.
 */
static void *flooder_main(void *arg)
{
	struct flooder *f = arg;
	unsigned made = 0;
	char name[32];

	while ((made < f->n || !atomic_load(&f->fl->stop)) && made < 2 * f->n &&
	       !coh_interrupted) {
		coh_put(name, sizeof(name), "f%u", made);
		if (mknodat(f->dfd, name, S_IFREG | 0644, 0) < 0) {
			coh_put(f->err, sizeof(f->err), "mknod %s/%u/%s: %s (after %u)", FLOOD_DIR,
			    f->k, name, coh_err_name(errno), made);
			break;
		}
		atomic_store_explicit(&f->made, ++made, memory_order_relaxed);
	}
	atomic_store(&f->done, true);
	for (unsigned i = 0; i < made; i++) {
		coh_put(name, sizeof(name), "f%u", i);
		if (unlinkat(f->dfd, name, 0) < 0 && errno != ENOENT && !f->err[0])
			coh_put(f->err, sizeof(f->err), "unlink %s/%u/%s: %s", FLOOD_DIR, f->k, name,
			    coh_err_name(errno));
	}
	f->end = (int64_t)clock_ns();
	return NULL;
}

/* Flooding threads: eight per CPU, so that together they outrun a
 * watcher's one thread, sharing the CPUs with it, the readers and the
 * daemon, by enough to keep its queue full: the watcher frees room a read
 * at a time, and the flood fills it again before the next. */
static unsigned flooders(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 8 : n > FLOOD_THREADS / 8 ? FLOOD_THREADS : 8 * (unsigned)n;
}

/* FLOOD_DIR and a directory in it per flooding thread, in the source. */
int coh_make_flood_dirs(struct run *r)
{
	char path[PATH_MAX];

	coh_at(path, r->src, FLOOD_DIR);
	if (mkdir(path, 0755) < 0)
		goto fail;
	for (unsigned k = 0; k < flooders(); k++) {
		coh_put(path, sizeof(path), "%s/%s/%u", r->src, FLOOD_DIR, k);
		if (mkdir(path, 0755) < 0)
			goto fail;
	}
	return 0;
fail:
	coh_put(r->error, sizeof(r->error), "cannot make %s: %s", path, strerror(errno));
	return -1;
}

/*
 * A flood's start: each flooding thread's directory looked up through the
 * mount (a watcher of directories, inotify, watches a directory once it is
 * looked up), then --flood N empty files made directly in the source, one
 * mknodat each, as fast as the source takes them, by flooders() threads.
 * Returns when all N are made; the threads go on making files until the
 * change in hand is made (coh_flood_stop), then remove theirs
 * (coh_flood_end).  The files are no names of the tree: nothing compares
 * them, and the readers never look at them.
 */
void coh_flood_begin(struct run *r)
{
	struct flood *fl = calloc(1, sizeof(*fl));
	char path[PATH_MAX];
	struct stat st;
	bool all;

	if (!fl) {
		if (!r->flood_err[0])
			coh_put(r->flood_err, sizeof(r->flood_err), "out of memory");
		return;
	}
	fl->t = flooders();
	fl->t0 = (int64_t)clock_ns();
	for (unsigned k = 0; k < fl->t; k++) {
		struct flooder *f = &fl->f[k];

		f->fl = fl;
		f->k = k;
		f->n = r->s->flood / fl->t + (k < r->s->flood % fl->t);
		coh_put(path, sizeof(path), "%s/%s/%u", r->mnt, FLOOD_DIR, k);
		if (lstat(path, &st) < 0 && !r->flood_err[0])
			coh_put(r->flood_err, sizeof(r->flood_err), "%s: %s (through the mount)",
			    path, coh_err_name(errno));
		coh_put(path, sizeof(path), "%s/%s/%u", r->src, FLOOD_DIR, k);
		f->dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (f->dfd < 0 && !r->flood_err[0])
			coh_put(r->flood_err, sizeof(r->flood_err), "%s: %s", path, coh_err_name(errno));
		if (f->dfd >= 0 && pthread_create(&f->thread, NULL, flooder_main, f)) {
			if (!r->flood_err[0])
				coh_put(r->flood_err, sizeof(r->flood_err), "cannot start a flooding "
				    "thread");
			close(f->dfd);
			f->dfd = -1;
		}
	}
	do {
		all = true;
		for (unsigned k = 0; k < fl->t; k++) {
			struct flooder *f = &fl->f[k];

			all &= f->dfd < 0 || atomic_load(&f->done) ||
			       atomic_load_explicit(&f->made, memory_order_relaxed) >= f->n;
		}
		if (!all)
			usleep(200);
	} while (!all);
	r->flood = fl;
}

/* The change is made: the flood's files go. */
void coh_flood_stop(struct run *r)
{
	if (r->flood)
		atomic_store(&r->flood->stop, true);
}

/* ... and the flood's end: its files removed. */
void coh_flood_end(struct run *r)
{
	struct flood *fl = r->flood;
	int64_t end = fl->t0;
	bool any = false;

	coh_flood_stop(r);
	r->flood = NULL;
	for (unsigned k = 0; k < fl->t; k++) {
		struct flooder *f = &fl->f[k];

		if (f->dfd < 0)
			continue;
		pthread_join(f->thread, NULL);
		close(f->dfd);
		any = true;
		r->flood_files += atomic_load(&f->made);
		if (f->end > end)
			end = f->end;
		if (f->err[0] && !r->flood_err[0])
			coh_put(r->flood_err, sizeof(r->flood_err), "%s", f->err);
	}
	if (any)
		r->floods++;
	r->flood_s += (double)(end - fl->t0) * 1e-9;
	free(fl);
}

/* The overflows the daemon logged (the watcher's "coherence: ...
 * overflowed on ...", src/watch_inotify.c and src/watch_fanotify.c), or
 * -1 when it is no dcfs or its log cannot be read. */
int coh_overflows_logged(const struct run *r)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	if (!fsm_kind_dcfs(r->kind))
		return -1;
	coh_put(path, sizeof(path), "%s/daemon-%s.log", r->s->work, r->kind);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		/* the queue overflowed, or was skipped on the brink of it */
		n += strstr(line, "coherence: ") && (strstr(line, " overflowed on ") ||
						     strstr(line, " near overflow on "));
	free(line);
	fclose(f);
	return n;
}
