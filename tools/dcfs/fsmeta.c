// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsmeta.c - a metadata benchmark for a directory tree (a plain directory
 * or a FUSE mount of one), the way a build hits a file system: walk it,
 * stat every file by its full path (each component a lookup), and a mix
 * of create, rename, stat and unlink.
 *
 *   fsmeta --dir D [--threads N] [--passes P] [--mix K] [--json]
 *
 * Phases, each timed on its own with N threads started together:
 *   walk  a parallel readdir walk of D (a shared queue of directories);
 *         every entry lstat()ed by its full path.  Ops: one per readdir
 *         of a directory, one per lstat.
 *   stat  P passes over every path the walk found, lstat() by full path,
 *         the paths dealt round-robin to the threads.
 *   mix   each thread in a scratch directory of its own under D, K times:
 *         create (O_CREAT|O_EXCL), rename, lstat the new name, lstat the
 *         old name (must fail with ENOENT), unlink.  Five ops each.
 * A failed operation is one that returned an error it should not have
 * (ENOENT for the old name in the mix is the expected answer).
 *
 * Output: a line per phase and a total (ops, seconds, ops/s, failed), or
 * one JSON object with --json.  Exit 0 if nothing failed, 1 otherwise,
 * 2 on a usage error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct phase {
	const char *name;
	uint64_t ops, failed;
	double seconds;
};

static struct {
	const char *dir;
	int threads, passes, mix;
	bool json;
} opt = { NULL, 1, 3, 2000, false };

/* ---- small helpers ---------------------------------------------------- */

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p) {
		fprintf(stderr, "fsmeta: out of memory\n");
		exit(1);
	}
	return p;
}

static char *join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = xmalloc(la + lb + 2);

	memcpy(s, a, la);
	s[la] = '/';
	memcpy(s + la + 1, b, lb + 1);
	return s;
}

/* A growable list of paths. */
struct list {
	char **v;
	size_t n, cap;
};

static void list_add(struct list *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v) {
			fprintf(stderr, "fsmeta: out of memory\n");
			exit(1);
		}
	}
	l->v[l->n++] = s;
}

/* ---- threads ------------------------------------------------------------ */

struct worker {
	pthread_t tid;
	int id;
	uint64_t ops, failed;
	double t0, t1;		/* its own start and end of the phase */
	struct list found;	/* walk: every path it saw */
};

static pthread_barrier_t start_line;
static struct worker *workers;

/* ---- walk ---------------------------------------------------------------- */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	struct list queue;	/* directories to read */
	size_t busy;		/* threads reading one now */
} wq = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, 0 };

static char *wq_pop(void)
{
	char *d = NULL;

	pthread_mutex_lock(&wq.lock);
	while (!wq.queue.n && wq.busy)
		pthread_cond_wait(&wq.cv, &wq.lock);
	if (wq.queue.n) {
		d = wq.queue.v[--wq.queue.n];
		wq.busy++;
	}
	pthread_mutex_unlock(&wq.lock);
	return d;
}

static void wq_done(struct list *subdirs)
{
	size_t i;

	pthread_mutex_lock(&wq.lock);
	for (i = 0; i < subdirs->n; i++)
		list_add(&wq.queue, subdirs->v[i]);
	subdirs->n = 0;
	wq.busy--;
	pthread_cond_broadcast(&wq.cv);
	pthread_mutex_unlock(&wq.lock);
}

static void *walk_thread(void *arg)
{
	struct worker *w = arg;
	struct list subdirs = { 0 };
	char *dir;

	pthread_barrier_wait(&start_line);
	w->t0 = now();
	while ((dir = wq_pop())) {
		DIR *d = opendir(dir);
		struct dirent *e;

		w->ops++;
		if (!d) {
			w->failed++;
			wq_done(&subdirs);
			continue;
		}
		while ((e = readdir(d))) {
			struct stat st;
			char *p;

			if (e->d_name[0] == '.' && (!e->d_name[1] ||
			    (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			if (!strncmp(e->d_name, ".fsmeta.", 8))
				continue;	/* another run's scratch */
			p = join(dir, e->d_name);
			w->ops++;
			if (lstat(p, &st) < 0) {
				w->failed++;
				free(p);
				continue;
			}
			if (S_ISDIR(st.st_mode))
				list_add(&subdirs, strdup(p));
			list_add(&w->found, p);
		}
		closedir(d);
		wq_done(&subdirs);
	}
	free(subdirs.v);
	w->t1 = now();
	return NULL;
}

/* ---- stat ------------------------------------------------------------------ */

static struct list all;

static void *stat_thread(void *arg)
{
	struct worker *w = arg;
	struct stat st;
	size_t i;
	int pass;

	pthread_barrier_wait(&start_line);
	w->t0 = now();
	for (pass = 0; pass < opt.passes; pass++)
		for (i = (size_t)w->id; i < all.n; i += (size_t)opt.threads) {
			w->ops++;
			if (lstat(all.v[i], &st) < 0)
				w->failed++;
		}
	w->t1 = now();
	return NULL;
}

/* ---- mix ------------------------------------------------------------------- */

static void *mix_thread(void *arg)
{
	struct worker *w = arg;
	char scratch[4096], a[4200], b[4200];
	struct stat st;
	int i, fd;

	snprintf(scratch, sizeof(scratch), "%s/.fsmeta.%d.%d", opt.dir,
		 (int)getpid(), w->id);
	if (mkdir(scratch, 0755) < 0) {
		fprintf(stderr, "fsmeta: mkdir %s: %s\n", scratch, strerror(errno));
		w->failed++;
	}
	pthread_barrier_wait(&start_line);
	w->t0 = now();
	for (i = 0; i < opt.mix; i++) {
		snprintf(a, sizeof(a), "%s/new%d", scratch, i);
		snprintf(b, sizeof(b), "%s/renamed%d", scratch, i);
		w->ops += 5;
		fd = open(a, O_CREAT | O_EXCL | O_WRONLY, 0644);
		if (fd < 0)
			w->failed++;
		else
			close(fd);
		if (rename(a, b) < 0)
			w->failed++;
		if (lstat(b, &st) < 0)
			w->failed++;
		if (lstat(a, &st) == 0 || errno != ENOENT)
			w->failed++;
		if (unlink(b) < 0)
			w->failed++;
	}
	w->t1 = now();
	rmdir(scratch);
	return NULL;
}

/* ---- driver -------------------------------------------------------------------- */

/*
 * A phase runs from its first thread's start to its last thread's end,
 * each measured by the thread itself (the main thread may be descheduled
 * while they work).
 */
static void run_phase(struct phase *ph, void *(*fn)(void *))
{
	double t0 = 0, t1 = 0;
	int i;

	pthread_barrier_init(&start_line, NULL, (unsigned)opt.threads + 1);
	for (i = 0; i < opt.threads; i++) {
		workers[i].ops = workers[i].failed = 0;
		if (pthread_create(&workers[i].tid, NULL, fn, &workers[i])) {
			fprintf(stderr, "fsmeta: cannot start threads\n");
			exit(1);
		}
	}
	pthread_barrier_wait(&start_line);
	for (i = 0; i < opt.threads; i++)
		pthread_join(workers[i].tid, NULL);
	pthread_barrier_destroy(&start_line);
	ph->ops = ph->failed = 0;
	for (i = 0; i < opt.threads; i++) {
		ph->ops += workers[i].ops;
		ph->failed += workers[i].failed;
		if (i == 0 || workers[i].t0 < t0)
			t0 = workers[i].t0;
		if (i == 0 || workers[i].t1 > t1)
			t1 = workers[i].t1;
	}
	ph->seconds = t1 - t0;
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static double rate(const struct phase *p)
{
	return p->seconds > 0 ? (double)p->ops / p->seconds : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: fsmeta --dir D [--threads N] [--passes P] [--mix K] [--json]\n");
}

static long num(const char *name, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "fsmeta: %s: '%s' is not a number from %ld to %ld\n",
			name, s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct phase ph[3] = { { .name = "walk" }, { .name = "stat" }, { .name = "mix" } };
	struct phase tot = { .name = "total" };
	struct stat st;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--json")) {
			opt.json = true;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!v) {
			usage(stderr);
			return 2;
		}
		if (!strcmp(a, "--dir"))
			opt.dir = v;
		else if (!strcmp(a, "--threads"))
			opt.threads = (int)num(a, v, 1, 1024);
		else if (!strcmp(a, "--passes"))
			opt.passes = (int)num(a, v, 0, 1000000);
		else if (!strcmp(a, "--mix"))
			opt.mix = (int)num(a, v, 0, 100000000);
		else {
			fprintf(stderr, "fsmeta: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (!opt.dir) {
		usage(stderr);
		return 2;
	}
	if (stat(opt.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "fsmeta: %s: not a directory\n", opt.dir);
		return 2;
	}
	workers = calloc((size_t)opt.threads, sizeof(*workers));
	if (!workers)
		return 1;
	for (i = 0; i < opt.threads; i++)
		workers[i].id = i;

	list_add(&wq.queue, strdup(opt.dir));
	run_phase(&ph[0], walk_thread);
	for (i = 0; i < opt.threads; i++) {
		size_t k;

		for (k = 0; k < workers[i].found.n; k++)
			list_add(&all, workers[i].found.v[k]);
		free(workers[i].found.v);
	}
	run_phase(&ph[1], stat_thread);
	run_phase(&ph[2], mix_thread);

	for (i = 0; i < 3; i++) {
		tot.ops += ph[i].ops;
		tot.failed += ph[i].failed;
		tot.seconds += ph[i].seconds;
	}
	if (opt.json) {
		printf("{\"dir\": ");
		json_str(opt.dir);
		printf(", \"threads\": %d, \"entries\": %zu, "
		       "\"passes\": %d, \"mix\": %d, \"phases\": {",
		       opt.threads, all.n, opt.passes, opt.mix);
		for (i = 0; i < 3; i++)
			printf("%s\"%s\": {\"ops\": %llu, \"seconds\": %.6f, "
			       "\"ops_per_s\": %.1f, \"failed\": %llu}",
			       i ? ", " : "", ph[i].name,
			       (unsigned long long)ph[i].ops, ph[i].seconds,
			       rate(&ph[i]), (unsigned long long)ph[i].failed);
		printf("}, \"total\": {\"ops\": %llu, \"seconds\": %.6f, "
		       "\"ops_per_s\": %.1f, \"failed\": %llu}}\n",
		       (unsigned long long)tot.ops, tot.seconds, rate(&tot),
		       (unsigned long long)tot.failed);
	} else {
		printf("fsmeta: %s, %d threads, %zu entries\n", opt.dir,
		       opt.threads, all.n);
		for (i = 0; i < 3; i++)
			printf("  %-5s %10llu ops %8.3f s %12.1f ops/s %8llu failed\n",
			       ph[i].name, (unsigned long long)ph[i].ops,
			       ph[i].seconds, rate(&ph[i]),
			       (unsigned long long)ph[i].failed);
		printf("  %-5s %10llu ops %8.3f s %12.1f ops/s %8llu failed\n",
		       tot.name, (unsigned long long)tot.ops, tot.seconds,
		       rate(&tot), (unsigned long long)tot.failed);
	}
	return tot.failed ? 1 : 0;
}
