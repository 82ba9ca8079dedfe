// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * names.c - the names of the tree as the source has them, and the names
 * the mount was left stale on (quarantined), which no change touches
 * again.  Only the main thread changes a list, under its lock (run.h).
 */
#include <stdlib.h>
#include <string.h>

#include "fs/coherence/run.h"

int coh_names_add(struct names *t, const char *path, char type)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct ent *e;

		pthread_mutex_lock(&t->lock);
		e = realloc(t->e, cap * sizeof(*e));
		if (e) {
			t->e = e;
			t->cap = cap;
		}
		pthread_mutex_unlock(&t->lock);
		if (!e)
			return -1;
	}
	pthread_mutex_lock(&t->lock);
	coh_put(t->e[t->n].path, REL_MAX, "%s", path);
	t->e[t->n].type = type;
	t->n++;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

void coh_names_del(struct names *t, const char *path)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].path, path)) {
			t->e[i] = t->e[--t->n];
			break;
		}
	pthread_mutex_unlock(&t->lock);
}

/* from, and everything below it, is now called to. */
void coh_names_move(struct names *t, const char *from, const char *to)
{
	size_t n = strlen(from);

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->n; i++) {
		char moved[REL_MAX];

		if (!coh_within(t->e[i].path, from))
			continue;
		coh_put(moved, sizeof(moved), "%s%s", to, t->e[i].path + n);
		memcpy(t->e[i].path, moved, sizeof(moved));
	}
	pthread_mutex_unlock(&t->lock);
}

bool coh_has_children(const struct names *t, const char *dir)
{
	size_t n = strlen(dir);

	for (size_t i = 0; i < t->n; i++)
		if (!strncmp(t->e[i].path, dir, n) && t->e[i].path[n] == '/')
			return true;
	return false;
}

/*
 * Names the mount never caught up with are left alone from then on, so
 * that every change is measured from a mount that showed its old state:
 * 'n', the name itself (and everything found through it), or 'l', only a
 * directory's listing (the names in it may still change).
 */
bool coh_usable(const struct run *r, const char *path)
{
	for (size_t i = 0; i < r->quar.n; i++)
		if (r->quar.e[i].type == 'n' && coh_within(path, r->quar.e[i].path))
			return false;
	return true;
}

bool coh_listing_stale(const struct run *r, const char *dir)
{
	for (size_t i = 0; i < r->quar.n; i++)
		if (r->quar.e[i].type == 'l' && !strcmp(dir, r->quar.e[i].path))
			return true;
	return false;
}

/* Does a stale name lie below dir? */
bool coh_holds_stale(const struct run *r, const char *dir)
{
	for (size_t i = 0; i < r->quar.n; i++)
		if (strcmp(dir, r->quar.e[i].path) && coh_within(r->quar.e[i].path, dir))
			return true;
	return false;
}

void coh_quarantine(struct run *r, const char *path, char type)
{
	if (strcmp(path, ".") && coh_usable(r, path) && !(type == 'l' && coh_listing_stale(r, path)))
		coh_names_add(&r->quar, path, type);
}
