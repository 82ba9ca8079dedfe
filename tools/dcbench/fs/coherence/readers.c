// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * readers.c - the threads that read the tree through the mount all along:
 * first every name (so that the kernel and the daemon have all of it
 * cached), then random names, and names that are not there, until the
 * run stops them.  A reader copies a name under names.lock (run.h).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/coherence/run.h"

/* Everything a user might look at on a name, through the mount. */
static void visit(const struct run *r, const char *rel, char type, bool negative,
		  unsigned char *buf)
{
	char path[PATH_MAX], target[REL_MAX];
	struct stat st;

	coh_at(path, r->mnt, rel);
	if (lstat(path, &st) < 0)
		return;
	if (type == 'l') {
		if (readlink(path, target, sizeof(target)) < 0)
			return;
	} else if (type == 'f') {
		coh_read_file(path, buf, DATA_MAX + 1);
	} else if (type == 'd') {
		struct view v = { 0 };

		coh_list_dir(path, &v);
		if (negative) {
			char none[PATH_MAX + 16];

			coh_put(none, sizeof(none), "%s/.dcbench-none", path);
			lstat(none, &st);
		}
	}
	if (type != 'l' && r->xattrs)
		lgetxattr(path, XATTR_NAME, target, sizeof(target));
}

/* Every name of the tree as made, dealt round-robin to the readers. */
static void warm_up(struct run *r, unsigned id, unsigned n, unsigned char *buf)
{
	for (size_t i = id; i < r->entries && !coh_interrupted; i += n) {
		struct ent e;

		pthread_mutex_lock(&r->names.lock);
		e = r->names.e[i];
		pthread_mutex_unlock(&r->names.lock);
		visit(r, e.path, e.type, true, buf);
	}
}

/* A random name, or one in a random directory that is not there. */
static void look(struct run *r, struct reader *rd, unsigned char *buf)
{
	struct ent e;
	bool missing = coh_below(&rd->rng, 8) == 0;

	pthread_mutex_lock(&r->names.lock);
	e = r->names.e[coh_below(&rd->rng, (unsigned)r->names.n)];
	pthread_mutex_unlock(&r->names.lock);
	if (missing) {
		char dir[REL_MAX], rel[REL_MAX + 16], path[PATH_MAX];
		struct stat st;

		if (e.type == 'd')
			memcpy(dir, e.path, sizeof(dir));
		else
			coh_parent_of(e.path, dir);
		coh_put(rel, sizeof(rel), "%s/.none%u", dir, coh_below(&rd->rng, 64));
		coh_at(path, r->mnt, rel);
		lstat(path, &st);
		return;
	}
	visit(r, e.path, e.type, false, buf);
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct run *r = rd->r;
	unsigned char *buf = malloc(DATA_MAX + 1);

	if (buf)
		warm_up(r, rd->id, r->s->readers, buf);
	atomic_fetch_add(&r->warm, 1);
	while (buf && !atomic_load(&r->stop) && !coh_interrupted) {
		look(r, rd, buf);
		rd->ops++;
	}
	free(buf);
	return NULL;
}

int coh_start_readers(struct run *r, struct reader *rd)
{
	unsigned n = r->s->readers;

	for (unsigned i = 0; i < n; i++) {
		rd[i].r = r;
		rd[i].id = i;
		rd[i].rng = r->s->seed * 1000003ULL + i + 1;
		rd[i].ops = 0;
		if (pthread_create(&rd[i].thread, NULL, reader_main, &rd[i])) {
			coh_put(r->error, sizeof(r->error), "cannot start reader threads");
			atomic_store(&r->stop, true);
			for (unsigned k = 0; k < i; k++)
				pthread_join(rd[k].thread, NULL);
			return -1;
		}
	}
	if (n == 0)
		warm_up(r, 0, 1, r->buf);
	while (atomic_load(&r->warm) < n && !coh_interrupted)
		usleep(1000);
	return 0;
}

void coh_stop_readers(struct run *r, struct reader *rd)
{
	atomic_store(&r->stop, true);
	for (unsigned i = 0; i < r->s->readers; i++) {
		pthread_join(rd[i].thread, NULL);
		r->reader_ops += rd[i].ops;
	}
}
