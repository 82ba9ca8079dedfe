/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * impl.c - the six implementations behind one set of calls: building,
 * checking and freeing any of them, one lookup with its answer, and the
 * updates of the mixed scenarios and the update costs.  libdcache's three
 * modes live here (dc_resolve on a cache over memfs); the references in
 * ref_kernel.c, ref_lfht.c and ref_mutex.c.  The timed loops call each
 * implementation directly (pool.c), not through these.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcache.h"
#include "micro/micro.h"
#include "micro/util.h"

const char *const im_names[IM_NR] = {
	"rcu", "rwlock", "global", "rcu-ttl", "rcu-as", "kernel", "lfht", "mutex",
};

uint32_t rcuttl_ms(uint32_t ttl_ms)
{
	return ttl_ms ? ttl_ms : 3600000u;
}

const struct dc_cred *rcuas_cred(const struct dc_cred *as)
{
	static const uint32_t groups[] = { 5, 6 };
	static const struct dc_cred user = { 1000, 1000, 2, groups };

	return as ? as : &user;
}

int fs_build(const struct tree *t, struct fsinst *out)
{
	int err = dc_memfs_new(&out->fs);

	if (err)
		return err;
	out->mino = xmalloc(t->nn * sizeof(*out->mino));
	out->mino[0] = DC_MEMFS_ROOT;
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct tnode *x = &t->n[i];
		struct dc_inode in;

		err = dc_memfs_add(out->fs, out->mino[x->parent], tname(t, i),
				   tnode_mode(x), x->type == 'l' ? t->pool + x->target : NULL,
				   &in);
		if (err || in.ino > UINT32_MAX) {
			fprintf(stderr, "dcbench micro: memfs: adding %s: %s\n",
				tname(t, i), strerror(err ? -err : EOVERFLOW));
			dc_memfs_free(out->fs);
			free(out->mino);
			out->fs = NULL;
			return err ? err : -EOVERFLOW;
		}
		out->mino[i] = (uint32_t)in.ino;
	}
	return 0;
}

void fs_free(struct fsinst *f)
{
	if (!f)
		return;
	if (f->fs)
		dc_memfs_free(f->fs);
	free(f->mino);
	free(f);
}

/* libdcache in mode kind over shared, or over a memfs of its own */
static int dc_build(struct impl *im, int kind, struct scen *s, struct fsinst *shared)
{
	struct dc_options o = {
		.mode = kind == IM_RCU || kind == IM_RCUTTL || kind == IM_RCUAS ?
			DC_MODE_RCU :
			kind == IM_RWLOCK ? DC_MODE_RWLOCK : DC_MODE_GLOBAL,
		.max_entries = s->max_entries,
		.max_negative = s->max_negative,
		.ttl_ms = s->ttl_ms,
		.neg_ttl_ms = s->ttl_ms,
	};
	if (kind == IM_RCUTTL)
		o.ttl_ms = o.neg_ttl_ms = rcuttl_ms(s->ttl_ms);
	int err;

	im->cred = kind == IM_RCUAS ? rcuas_cred(s->cred) : s->cred;
	if (shared) {
		im->fs = shared;
	} else {
		im->fs = xcalloc(1, sizeof(*im->fs));
		im->fs_owner = true;
		err = fs_build(s->t, im->fs);
		if (err) {
			snprintf(im->why, sizeof(im->why), "memfs: %s", strerror(-err));
			return err;
		}
	}
	o.backend = dc_memfs_backend(im->fs->fs);
	err = dc_cache_create(&o, &im->c);
	if (err) {
		snprintf(im->why, sizeof(im->why), "dc_cache_create: %s", strerror(-err));
		return err;
	}
	return 0;
}

int im_build(struct impl *im, int kind, struct scen *s, struct fsinst *shared)
{
	memset(im, 0, sizeof(*im));
	im->kind = kind;
	switch (kind) {
	case IM_RCU:
	case IM_RWLOCK:
	case IM_GLOBAL:
	case IM_RCUTTL:
	case IM_RCUAS:
		return dc_build(im, kind, s, shared);
	case IM_KERNEL:
		return kernel_build(im, s);
	case IM_LFHT:
		return lfht_build(im, s->t, s->nbuckets, s->ref_node_bytes);
	case IM_MUTEX:
		return mtab_build(im, s->t, s->nbuckets, s->ref_node_bytes);
	}
	return -EINVAL;
}

void im_destroy(struct impl *im)
{
	if (im->c)
		dc_cache_destroy(im->c);
	im->c = NULL;
	if (im->fs_owner)
		fs_free(im->fs);
	im->fs = NULL;
	lfht_destroy(im);
	mtab_destroy(im);
	arena_free(&im->ar);
}

/* One lookup, with its answer (checks and warming only). */
static int im_resolve(struct impl *im, const char *path, struct res *r)
{
	switch (im->kind) {
	case IM_KERNEL: {
		struct stat st;

		if (fstatat(AT_FDCWD, path, &st, 0))
			return -errno;
		r->id = UINT32_MAX;	/* compared by type only */
		r->mode = st.st_mode;
		return 0;
	}
	case IM_LFHT:
		return lfht_resolve(im, path, r);
	case IM_MUTEX:
		return mtab_resolve(im, path, r);
	default: {
		struct dc_inode st;
		int err = im->cred ? dc_resolve_as(im->c, NULL, path, 0, im->cred, &st) :
				     dc_resolve(im->c, NULL, path, 0, &st);

		if (!err) {
			r->id = (uint32_t)st.ino;	/* memfs inode number */
			r->mode = st.mode;
		}
		return err;
	}
	}
}

/* Is path i of s answered as the tree says?  *errp: the resolve's error. */
static bool right_answer(struct impl *im, const struct scen *s, uint32_t i, int *errp)
{
	const struct targets *g = &s->tg;
	struct res r = { 0, 0 };
	int err = im_resolve(im, g->path[i], &r);
	int32_t e = g->expect[i];
	const struct tnode *x;
	uint32_t want;

	*errp = err;
	if (e < 0)
		return err == -ENOENT;
	if (err)
		return false;
	x = &s->t->n[e];
	want = im_is_dc(im->kind) ? im->fs->mino[e] :
	       im->kind == IM_KERNEL ? UINT32_MAX : (uint32_t)e;
	return r.id == want && (x->type == 'd' ? S_ISDIR(r.mode) : S_ISREG(r.mode));
}

/*
 * Check every answer against the tree, in two passes (micro.h says why).
 * Returns the number of wrong answers; the first few are printed.
 */
uint64_t im_check(struct impl *im, const struct scen *s)
{
	const struct targets *g = &s->tg;
	uint64_t bad = 0;
	int err;

	if (im->kind == IM_KERNEL && kernel_enter(im))
		return 1;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < g->n; i++)
			if (!right_answer(im, s, i, &err) && bad++ < 5)
				fprintf(stderr, "dcbench micro: %s %s: wrong answer for "
					"%s: %s (expected %s)\n", sc_names[s->id],
					im_names[im->kind], g->path[i],
					err ? strerror(-err) : "found",
					g->expect[i] < 0 ? "ENOENT" : "found");
	if (im->kind == IM_KERNEL)
		kfs_leave();
	return bad;
}

/* -- updates: the mixed scenarios' and the update costs' -- */

int dirh_open(struct impl *im, struct dirh *h, const struct tree *t,
	      const uint32_t *dirs, unsigned n)
{
	char path[PBUF], full[PBUF + 600];

	memset(h, 0, sizeof(*h));
	for (unsigned k = 0; k < NSDIR; k++)
		h->fd[k] = -1;
	for (unsigned k = 0; k < n; k++) {
		if (tree_path(t, dirs[k], path, sizeof(path)) < 0)
			return -ENAMETOOLONG;
		h->n = k + 1;
		switch (im->kind) {
		case IM_KERNEL:
			snprintf(full, sizeof(full), "%s/%s", im->kdir, path);
			h->fd[k] = open(full, O_PATH | O_DIRECTORY);
			if (h->fd[k] < 0)
				return -errno;
			break;
		case IM_LFHT:
			if (!(h->node[k] = lfht_node(im, path)))
				return -ENOENT;
			break;
		case IM_MUTEX:
			if (!(h->node[k] = mtab_node(im, path)))
				return -ENOENT;
			break;
		default: {
			struct dc_inode st;
			int err = dc_walk(im->c, NULL, path, 0, &h->d[k]);

			if (err)
				return err;
			err = dc_dentry_stat(h->d[k], &st);
			if (err)
				return err;
			h->ino[k] = st.ino;
		}
		}
	}
	return 0;
}

void dirh_close(struct impl *im, struct dirh *h)
{
	for (unsigned k = 0; k < h->n; k++) {
		if (h->d[k])
			dc_put(im->c, h->d[k]);
		if (h->fd[k] >= 0)
			close(h->fd[k]);
	}
	memset(h, 0, sizeof(*h));
}

int im_create(struct impl *im, struct dirh *h, unsigned k, const char *name)
{
	switch (im->kind) {
	case IM_KERNEL:
		return mknodat(h->fd[k], name, S_IFREG | 0644, 0) ? -errno : 0;
	case IM_LFHT:
		return lfht_create(im, h->node[k], name);
	case IM_MUTEX:
		return mtab_create(im, h->node[k], name);
	default: {
		struct dc_inode in;
		int err = dc_memfs_add(im->fs->fs, h->ino[k], name, S_IFREG | 0644,
				       NULL, &in);

		return err ? err : dc_create(im->c, h->d[k], name, &in);
	}
	}
}

int im_unlink(struct impl *im, struct dirh *h, unsigned k, const char *name)
{
	switch (im->kind) {
	case IM_KERNEL:
		return unlinkat(h->fd[k], name, 0) ? -errno : 0;
	case IM_LFHT:
		return lfht_unlink(im, h->node[k], name);
	case IM_MUTEX:
		return mtab_unlink(im, h->node[k], name);
	default: {
		int err = dc_memfs_remove(im->fs->fs, h->ino[k], name, 0);

		return err ? err : dc_unlink(im->c, h->d[k], name);
	}
	}
}

int im_rename(struct impl *im, struct dirh *h, unsigned a, const char *oname,
	      unsigned b, const char *nname)
{
	switch (im->kind) {
	case IM_KERNEL:
		return renameat(h->fd[a], oname, h->fd[b], nname) ? -errno : 0;
	case IM_LFHT:
		return lfht_rename(im, h->node[a], oname, h->node[b], nname);
	case IM_MUTEX:
		return mtab_rename(im, h->node[a], oname, h->node[b], nname);
	default: {
		int err = dc_memfs_rename(im->fs->fs, h->ino[a], oname, h->ino[b],
					  nname, 0);

		return err ? err : dc_rename(im->c, h->d[a], oname, h->d[b], nname, 0);
	}
	}
}
