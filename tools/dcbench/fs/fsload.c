// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsload.c - the metadata load of `dcbench fsmeta` (fsload.h): a parallel
 * walk, stat passes by full path, and a create/rename/unlink mix.
 *
 * Every operation goes through a full path from the top of the tree, so
 * each one makes the kernel (and, through FUSE, the daemon) look up every
 * component: that is the work a name cache is for.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "fs/fsload.h"

#define SCRATCH_PREFIX	".fsmeta."

const char *const fsl_phase_names[FSL_NPHASES] = { "walk", "stat", "mix" };

/* A growable list of strings it owns. */
struct list {
	char **v;
	size_t n, cap;
};

struct fsl_ctx;

struct worker {
	pthread_t tid;
	unsigned id;
	struct fsl_ctx *c;
	uint64_t ops, failed;
	double t0, t1;		/* its own start and end of the phase */
	struct list found;	/* walk: every path it saw */
	char scratch[PATH_MAX];	/* mix: its directory */
	char err[sizeof(((struct fsl_phase *)0)->first_error)];
};

struct fsl_ctx {
	const struct fsl_options *o;
	struct worker *w;
	pthread_mutex_t lock;	/* the gate and the walk's queue */
	pthread_cond_t cv;
	int gate;		/* 0: wait, 1: go, -1: give up (a thread did not start) */
	struct list queue;	/* walk: directories still to read */
	size_t busy;		/* walk: threads reading one now */
	int error;		/* a worker ran out of memory: the run is void */
	struct list all;	/* the walk's finds, for the stat phase */
};

/* ---- small helpers ---------------------------------------------------- */

double fsl_rate(const struct fsl_phase *p)
{
	return p->seconds > 0 ? (double)p->ops / p->seconds : 0;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 2);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

/* Appends s (owned by the list from now on); -1 on ENOMEM, s not taken. */
static int list_add(struct list *l, char *s)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = s;
	return 0;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool skipped_name(const char *name)
{
	return (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))) ||
	       !strncmp(name, SCRATCH_PREFIX, sizeof(SCRATCH_PREFIX) - 1);
}

/*
 * Counts a failed operation, and describes the thread's first one: the
 * reason first, so that a long path cut short (marked "...") keeps it.
 */
static void fail(struct worker *w, const char *op, const char *path, int err)
{
	const size_t size = sizeof(w->err);
	char buf[128];

	w->failed++;
	if (!w->err[0] &&
	    snprintf(w->err, size, "%s: %s: %s", op, strerror_r(err, buf, sizeof(buf)),
		     path) >= (int)size)
		memcpy(w->err + size - 4, "...", 4);
}

/* A worker cannot go on (out of memory): every thread stops. */
static void set_error(struct fsl_ctx *c, int err)
{
	pthread_mutex_lock(&c->lock);
	if (!c->error)
		c->error = err;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
}

static bool stopped(const struct fsl_ctx *c)
{
	return c->o->stop && *c->o->stop;
}

/* Waits for the main thread's word; false: give up without working. */
static bool gate_wait(struct fsl_ctx *c)
{
	int g;

	pthread_mutex_lock(&c->lock);
	while (!c->gate)
		pthread_cond_wait(&c->cv, &c->lock);
	g = c->gate;
	pthread_mutex_unlock(&c->lock);
	return g > 0;
}

/*
 * Removes a scratch directory and the files in it (the mix makes no
 * subdirectories).  0, or -1 with errno; a missing directory is 0.
 */
static int remove_scratch(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int err = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    unlinkat(dirfd(d), e->d_name, 0) < 0 && !err)
			err = errno;
	closedir(d);
	if (rmdir(path) < 0 && errno != ENOENT && !err)
		err = errno;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

/* ---- walk ---------------------------------------------------------------- */

/* The next directory to read; NULL when the walk is over (or void). */
static char *wq_pop(struct fsl_ctx *c)
{
	char *d = NULL;

	pthread_mutex_lock(&c->lock);
	while (!c->queue.n && c->busy && !c->error)
		pthread_cond_wait(&c->cv, &c->lock);
	if (c->queue.n && !c->error) {
		d = c->queue.v[--c->queue.n];
		c->busy++;
	}
	pthread_mutex_unlock(&c->lock);
	return d;
}

/* A directory read: its subdirectories join the queue. */
static void wq_done(struct fsl_ctx *c, struct list *subdirs)
{
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < subdirs->n; i++)
		if (list_add(&c->queue, subdirs->v[i])) {
			free(subdirs->v[i]);
			if (!c->error)
				c->error = ENOMEM;
		}
	subdirs->n = 0;
	c->busy--;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
}

static void walk_dir(struct worker *w, const char *dir, struct list *subdirs)
{
	struct dirent *e;
	DIR *d;

	w->ops++;
	d = opendir(dir);
	if (!d) {
		fail(w, "opendir", dir, errno);
		return;
	}
	for (;;) {
		struct stat st;
		char *p, *q;

		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno)
				fail(w, "readdir", dir, errno);
			break;
		}
		if (skipped_name(e->d_name))
			continue;
		p = join(dir, e->d_name);
		if (!p)
			goto oom;
		w->ops++;
		if (lstat(p, &st) < 0) {
			fail(w, "lstat", p, errno);
			free(p);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			q = strdup(p);
			if (!q || list_add(subdirs, q)) {
				free(q);
				free(p);
				goto oom;
			}
		}
		if (list_add(&w->found, p)) {
			free(p);
			goto oom;
		}
	}
	closedir(d);
	return;
oom:
	closedir(d);
	set_error(w->c, ENOMEM);
}

static void *walk_thread(void *arg)
{
	struct worker *w = arg;
	struct list subdirs = { 0 };
	char *dir;

	if (!gate_wait(w->c))
		return NULL;
	w->t0 = clock_s();
	while ((dir = wq_pop(w->c))) {
		if (!stopped(w->c))
			walk_dir(w, dir, &subdirs);
		free(dir);
		wq_done(w->c, &subdirs);
	}
	w->t1 = clock_s();
	list_free(&subdirs);
	return NULL;
}

/* ---- stat ------------------------------------------------------------------ */

static void *stat_thread(void *arg)
{
	struct worker *w = arg;
	const struct fsl_ctx *c = w->c;
	size_t step = c->o->threads;
	struct stat st;

	if (!gate_wait(w->c))
		return NULL;
	w->t0 = clock_s();
	for (unsigned pass = 0; pass < c->o->passes && !stopped(c); pass++)
		for (size_t i = w->id; i < c->all.n && !stopped(c); i += step) {
			w->ops++;
			if (lstat(c->all.v[i], &st) < 0)
				fail(w, "lstat", c->all.v[i], errno);
		}
	w->t1 = clock_s();
	return NULL;
}

/* ---- mix ------------------------------------------------------------------- */

static void *mix_thread(void *arg)
{
	struct worker *w = arg;
	char a[PATH_MAX + 32], b[PATH_MAX + 32];
	bool ready = true;
	struct stat st;
	int fd;

	/* its directory is made before the start, outside the timing */
	if (mkdir(w->scratch, 0755) < 0) {
		w->ops++;
		fail(w, "mkdir", w->scratch, errno);
		ready = false;
	}
	if (!gate_wait(w->c))
		return NULL;
	w->t0 = clock_s();
	for (unsigned i = 0; ready && i < w->c->o->mix && !stopped(w->c); i++) {
		snprintf(a, sizeof(a), "%s/new%u", w->scratch, i);
		snprintf(b, sizeof(b), "%s/renamed%u", w->scratch, i);
		w->ops += 5;
		fd = open(a, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			fail(w, "create", a, errno);
		else
			close(fd);
		if (rename(a, b) < 0)
			fail(w, "rename", a, errno);
		if (lstat(b, &st) < 0)
			fail(w, "lstat", b, errno);
		if (lstat(a, &st) == 0)
			fail(w, "lstat (old name, ENOENT expected)", a, EEXIST);
		else if (errno != ENOENT)
			fail(w, "lstat (old name, ENOENT expected)", a, errno);
		if (unlink(b) < 0)
			fail(w, "unlink", b, errno);
	}
	w->t1 = clock_s();
	return NULL;
}

/* ---- driver -------------------------------------------------------------------- */

/*
 * One phase: the threads are started, then released together.  A phase
 * runs from its first thread's start to its last thread's end, each
 * measured by the thread itself (the main thread may be descheduled while
 * they work).
 */
static int run_phase(struct fsl_ctx *c, int which, struct fsl_phase *ph,
		     void *(*fn)(void *))
{
	unsigned n = c->o->threads, started = 0;
	double t0 = 0, t1 = 0;
	int err = 0;

	c->gate = 0;
	for (unsigned i = 0; i < n; i++) {
		c->w[i].ops = c->w[i].failed = 0;
		c->w[i].t0 = c->w[i].t1 = 0;
		c->w[i].err[0] = '\0';
	}
	for (; started < n; started++) {
		err = pthread_create(&c->w[started].tid, NULL, fn, &c->w[started]);
		if (err)
			break;
	}
	pthread_mutex_lock(&c->lock);
	c->gate = err ? -1 : 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
	for (unsigned i = 0; i < started; i++)
		pthread_join(c->w[i].tid, NULL);
	if (err) {
		fprintf(stderr, "dcbench: cannot start %u threads: %s\n", n, strerror(err));
		return -1;
	}
	if (c->error) {
		fprintf(stderr, "dcbench: the %s phase: %s\n", fsl_phase_names[which],
			strerror(c->error));
		return -1;
	}
	if (stopped(c))
		return -1;
	memset(ph, 0, sizeof(*ph));
	for (unsigned i = 0; i < n; i++) {
		ph->ops += c->w[i].ops;
		ph->failed += c->w[i].failed;
		if (!ph->first_error[0] && c->w[i].err[0])
			memcpy(ph->first_error, c->w[i].err, sizeof(ph->first_error));
		if (i == 0 || c->w[i].t0 < t0)
			t0 = c->w[i].t0;
		if (i == 0 || c->w[i].t1 > t1)
			t1 = c->w[i].t1;
	}
	ph->seconds = t1 - t0;
	return 0;
}

/* The walk's finds, every thread's, in one list for the stat phase. */
static int gather(struct fsl_ctx *c)
{
	size_t total = 0, k = 0;

	for (unsigned i = 0; i < c->o->threads; i++)
		total += c->w[i].found.n;
	c->all.v = malloc((total ? total : 1) * sizeof(*c->all.v));
	if (!c->all.v) {
		fprintf(stderr, "dcbench: out of memory (%zu paths)\n", total);
		return -1;
	}
	c->all.cap = total;
	for (unsigned i = 0; i < c->o->threads; i++) {
		struct list *f = &c->w[i].found;

		if (f->n)	/* a thread that found nothing has no array */
			memcpy(c->all.v + k, f->v, f->n * sizeof(*f->v));
		k += f->n;
		f->n = 0;	/* the strings are all's now */
		list_free(f);
	}
	c->all.n = k;
	return 0;
}

int fsl_run(const struct fsl_options *o, struct fsl_result *r)
{
	/* each run's scratch names differ: a directory a dead daemon could
	 * not remove never collides with the next run's */
	static unsigned seq;
	unsigned run = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);
	struct fsl_ctx c = {
		.o = o,
		.lock = PTHREAD_MUTEX_INITIALIZER,
		.cv = PTHREAD_COND_INITIALIZER,
	};
	char *root = NULL;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	c.w = calloc(o->threads, sizeof(*c.w));
	if (!c.w) {
		fprintf(stderr, "dcbench: out of memory\n");
		return -1;
	}
	for (unsigned i = 0; i < o->threads; i++) {
		c.w[i].id = i;
		c.w[i].c = &c;
		if ((size_t)snprintf(c.w[i].scratch, sizeof(c.w[i].scratch), "%s/%s%d.%u.%u",
				     o->dir, SCRATCH_PREFIX, (int)getpid(), run, i) >=
		    sizeof(c.w[i].scratch)) {
			c.w[i].scratch[0] = '\0';	/* never remove a cut-short path */
			fprintf(stderr, "dcbench: path too long: %s\n", o->dir);
			goto out;
		}
	}
	root = strdup(o->dir);
	if (!root || list_add(&c.queue, root)) {
		free(root);
		fprintf(stderr, "dcbench: out of memory\n");
		goto out;
	}
	if (run_phase(&c, FSL_WALK, &r->phase[FSL_WALK], walk_thread) || gather(&c))
		goto out;
	r->entries = c.all.n;
	if (run_phase(&c, FSL_STAT, &r->phase[FSL_STAT], stat_thread) ||
	    run_phase(&c, FSL_MIX, &r->phase[FSL_MIX], mix_thread))
		goto out;
	r->total = (struct fsl_phase){ 0 };
	for (int p = 0; p < FSL_NPHASES; p++) {
		r->total.ops += r->phase[p].ops;
		r->total.failed += r->phase[p].failed;
		r->total.seconds += r->phase[p].seconds;
		if (!r->total.first_error[0])
			memcpy(r->total.first_error, r->phase[p].first_error,
			       sizeof(r->total.first_error));
	}
	rc = 0;
out:
	/* Best effort, through whatever dir is: if a daemon died under the
	 * mix, fsl_clean_scratch on the source finishes the job. */
	for (unsigned i = 0; i < o->threads; i++) {
		if (c.w[i].scratch[0])
			remove_scratch(c.w[i].scratch);
		list_free(&c.w[i].found);
	}
	list_free(&c.queue);
	list_free(&c.all);
	free(c.w);
	pthread_cond_destroy(&c.cv);
	pthread_mutex_destroy(&c.lock);
	return rc;
}

int fsl_clean_scratch(const char *dir)
{
	const size_t plen = sizeof(SCRATCH_PREFIX) - 1;
	pid_t self = getpid();
	struct dirent *e;
	int rc = 0;
	DIR *d;

	d = opendir(dir);
	if (!d) {
		fprintf(stderr, "dcbench: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		char *end, *path;
		long pid;

		if (strncmp(e->d_name, SCRATCH_PREFIX, plen))
			continue;
		errno = 0;
		pid = strtol(e->d_name + plen, &end, 10);
		if (errno || end == e->d_name + plen || *end != '.' || pid <= 0)
			continue;
		/* another live process's (EPERM: alive, not ours to judge) */
		if (pid != self && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		path = join(dir, e->d_name);
		if (!path || remove_scratch(path) < 0) {
			fprintf(stderr, "dcbench: cannot remove scratch %s/%s: %s\n", dir,
				e->d_name, strerror(path ? errno : ENOMEM));
			rc = -1;
		}
		free(path);
	}
	closedir(d);
	return rc;
}
