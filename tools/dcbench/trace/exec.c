/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * exec.c - one trace op run through libdcache, and its answer checked
 * against the recorded one.
 *
 * The time in the cache: each worker stamps CLOCK_MONOTONIC before and
 * after every path op, in every mode, and adds the difference to a counter
 * of its own; the memfs updates a cache mode applies are stamped again and
 * taken back out.  Wall time, so that a thread asleep on a cache lock keeps
 * counting.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "dcache.h"
#include "trace/sched.h"

static const char *err_text(int e, char *buf, size_t size)
{
	const char *n;

	if (e == 0)
		return "success";
	if (e == DCT_ERR_UNKNOWN)
		return "unknown";
	n = dct_errno_name(e);
	if (n)
		return n;
	snprintf(buf, size, "errno %d", e);
	return buf;
}

static void mismatch(struct worker *w, const struct rproc *r, const struct dct_op *o,
		     int got)
{
	struct rctx *x = w->x;
	const struct dct_trace *t = x->p->t;
	const struct cpath *cp = x->p->cp[r->copy];
	char b1[32], b2[32];

	w->mismatches++;
	if (!x->cfg->mismatch_log)
		return;
	pthread_mutex_lock(&x->log_lock);
	if (x->printed < x->cfg->max_print) {
		x->printed++;
		fprintf(x->cfg->mismatch_log,
			"mismatch: copy %u pid %u line %u %s %s%s%s: recorded %s, replay %s\n",
			r->copy, t->procs[r->proc].pid, o->line, dct_kind_name(o->kind),
			cp[o->path].s, o->kind == DCT_RENAME || o->kind == DCT_LINK ||
			o->kind == DCT_SYMLINK ? " -> " : "",
			o->kind == DCT_RENAME || o->kind == DCT_LINK ||
			o->kind == DCT_SYMLINK ? cp[o->path2].s : "",
			err_text(o->err, b1, sizeof(b1)), err_text(got, b2, sizeof(b2)));
	}
	pthread_mutex_unlock(&x->log_lock);
}

/* Close the stamp t0 opened before a memfs update: the backend's work, not
 * the cache's, so it is left out of the time in the cache. */
static void untime(struct worker *w, uint64_t t0)
{
	w->update_ns += clock_ns() - t0;
}

/* exec_op's answer for an op it cannot check (nothing to create or remove) */
#define GOT_SKIP	(-2)

static void check(struct worker *w, const struct rproc *r, const struct dct_op *o, int got)
{
	int rec = o->err;

	if (rec == DCT_ERR_UNKNOWN || got == GOT_SKIP) {
		w->unchecked++;
		return;
	}
	w->checked++;
	if (rec == got || (!rp_err_determined(o->kind, rec) && got == 0))
		return;
	mismatch(w, r, o, got);
}

/* Resolve s; the result as a positive errno, the answer in *st. */
static int look(struct dc_cache *c, const char *s, unsigned fl, struct dc_inode *st)
{
	int r = dc_resolve(c, NULL, s, fl, st);

	return r < 0 ? -r : 0;
}

/*
 * The directory of e and the entry for its name in it.  Returns a positive
 * errno when the directory cannot be reached; otherwise 0 with *dir
 * referenced, *dino its inode, and *exists / *st about the name.
 */
static int find_parent(struct dc_cache *c, const struct cpath *e, struct dc_dentry **dir,
		       uint64_t *dino, bool *exists, struct dc_inode *st)
{
	struct dc_dentry *d;
	struct dc_inode dst;
	int r;

	r = dc_walk(c, NULL, e->parent, 0, dir);
	if (r < 0)
		return -r;
	r = dc_dentry_stat(*dir, &dst);
	if (r < 0 || !S_ISDIR(dst.mode)) {
		dc_put(c, *dir);
		return r < 0 ? -r : ENOTDIR;
	}
	*dino = dst.ino;
	r = dc_lookup(c, *dir, e->name, e->nlen, &d);
	*exists = r == 0;
	if (r == 0) {
		r = dc_dentry_stat(d, st);
		dc_put(c, d);
		if (r < 0)
			*exists = false;
		return 0;
	}
	if (r == -ENOENT)
		return 0;
	dc_put(c, *dir);
	return -r;
}

/* MKDIR, MKNOD, SYMLINK, UNLINK, RMDIR, OPEN with O_CREAT. */
static int do_name_op(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct rctx *x = w->x;
	struct dc_cache *c = x->c;
	const struct cpath *cp = x->p->cp[r->copy];
	const struct cpath *e = &cp[o->path];
	struct dc_dentry *dir;
	struct dc_inode st;
	struct dc_inode in;
	uint64_t dino;
	/* apply what the trace did; an rmdir said ENOTEMPTY is tried, since
	 * only the backend knows whether the directory is empty */
	bool exists, apply = o->err == 0 ||
			     (o->kind == DCT_RMDIR && o->err == ENOTEMPTY);
	uint64_t t0;
	int got, m;

	got = find_parent(c, e, &dir, &dino, &exists, &st);
	if (got)
		return got;
	switch (o->kind) {
	case DCT_OPEN:
		if (exists) {
			if (o->flags & DCT_F_EXCL)
				got = EEXIST;
			else if (S_ISLNK(st.mode))
				got = look(c, (o->flags & DCT_F_SLASH) ? e->slash : e->s, 0, &st);
			if (!got && S_ISDIR(st.mode))
				got = EISDIR;
			break;
		}
		/* fall through - create a file */
	case DCT_MKDIR:
	case DCT_MKNOD:
	case DCT_SYMLINK:
		if (exists) {
			got = EEXIST;
			break;
		}
		if (!apply)
			break;
		m = o->kind == DCT_MKDIR ? S_IFDIR | 0755 :
		    o->kind == DCT_SYMLINK ? S_IFLNK | 0777 : S_IFREG | 0644;
		t0 = clock_ns();
		got = -dc_memfs_add(x->fs, dino, e->name, (uint32_t)m,
				    o->kind == DCT_SYMLINK ? cp[o->path2].s : NULL, &in);
		untime(w, t0);
		if (got) {
			w->update_errors++;
			break;
		}
		if (o->kind == DCT_MKDIR)
			dc_mkdir(c, dir, e->name, &in);
		else if (o->kind == DCT_SYMLINK)
			dc_symlink(c, dir, e->name, &in, cp[o->path2].s);
		else
			dc_create(c, dir, e->name, &in);
		break;
	case DCT_UNLINK:
	case DCT_RMDIR:
		if (!exists) {
			got = ENOENT;
			break;
		}
		if (o->kind == DCT_UNLINK && S_ISDIR(st.mode)) {
			got = EISDIR;
			break;
		}
		if (o->kind == DCT_RMDIR && !S_ISDIR(st.mode)) {
			got = ENOTDIR;
			break;
		}
		if (!apply)
			break;
		t0 = clock_ns();
		got = -dc_memfs_remove(x->fs, dino, e->name, o->kind == DCT_RMDIR);
		untime(w, t0);
		if (got == ENOTEMPTY)
			break;
		if (got) {
			w->update_errors++;
			break;
		}
		if (o->kind == DCT_RMDIR)
			dc_rmdir(c, dir, e->name);
		else
			dc_unlink(c, dir, e->name);
		break;
	default:
		break;
	}
	dc_put(c, dir);
	return got;
}

static int do_rename(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct rctx *x = w->x;
	struct dc_cache *c = x->c;
	const struct cpath *cp = x->p->cp[r->copy];
	const struct cpath *e1 = &cp[o->path], *e2 = &cp[o->path2];
	struct dc_dentry *od, *nd;
	struct dc_inode s1, s2;
	uint64_t oino, nino;
	bool ex1, ex2;
	unsigned fl = 0;
	int got;

	got = find_parent(c, e1, &od, &oino, &ex1, &s1);
	if (got)
		return got;
	got = find_parent(c, e2, &nd, &nino, &ex2, &s2);
	if (got) {
		dc_put(c, od);
		return got;
	}
	if (o->flags & DCT_F_NOREPLACE)
		fl |= DC_RENAME_NOREPLACE;
	if (o->flags & DCT_F_EXCHANGE)
		fl |= DC_RENAME_EXCHANGE;
	if (!ex1)
		got = ENOENT;
	else if (!S_ISDIR(s1.mode) && ((o->flags & DCT_F_SLASH) ||
		 (!(fl & DC_RENAME_EXCHANGE) && (o->flags & DCT_F_SLASH2))))
		got = ENOTDIR;		/* "file/" names a directory */
	else if ((fl & DC_RENAME_NOREPLACE) && ex2)
		got = EEXIST;
	else if ((fl & DC_RENAME_EXCHANGE) && !ex2)
		got = ENOENT;
	else if (o->err == 0) {
		uint64_t t0 = clock_ns();

		got = -dc_memfs_rename(x->fs, oino, e1->name, nino, e2->name, fl);
		untime(w, t0);
		if (got)
			w->update_errors++;	/* as an add or a link that failed */
		else
			dc_rename(c, od, e1->name, nd, e2->name, fl);
	}
	dc_put(c, od);
	dc_put(c, nd);
	/* an error the names do not decide (EINVAL, EXDEV, EBUSY, ...): which
	 * of the two it was about is not recorded */
	if (o->err > 0 && !rp_err_determined(o->kind, o->err))
		return GOT_SKIP;
	return got;
}

static int do_link(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct rctx *x = w->x;
	struct dc_cache *c = x->c;
	const struct cpath *cp = x->p->cp[r->copy];
	const struct cpath *e1 = &cp[o->path], *e2 = &cp[o->path2];
	struct dc_dentry *nd;
	struct dc_inode s1, s2;
	struct dc_inode in;
	uint64_t nino;
	bool ex2;
	int got;

	got = look(c, (o->flags & DCT_F_SLASH) ? e1->slash : e1->s,
		   (o->flags & DCT_F_NOFOLLOW) ? DC_NOFOLLOW : 0, &s1);
	if (got)
		return got;
	if (S_ISDIR(s1.mode))
		return EPERM;
	got = find_parent(c, e2, &nd, &nino, &ex2, &s2);
	if (got)
		return got;
	if (ex2)
		got = EEXIST;
	else if (o->err == 0) {
		uint64_t t0 = clock_ns();

		got = -dc_memfs_link(x->fs, s1.ino, nino, e2->name, &in);
		untime(w, t0);
		if (got)
			w->update_errors++;
		else
			dc_link(c, nd, e2->name, &in);
	}
	dc_put(c, nd);
	if (o->err > 0 && !rp_err_determined(o->kind, o->err))
		return GOT_SKIP;	/* as for rename */
	return got;
}

/* One op against the cache; the outcome as a positive errno or 0. */
static int exec_op(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct dc_cache *c = w->x->c;
	const struct cpath *e = &w->x->p->cp[r->copy][o->path];
	const char *s = (o->flags & DCT_F_SLASH) ? e->slash : e->s;
	unsigned nofollow = (o->flags & DCT_F_NOFOLLOW) ? DC_NOFOLLOW : 0;
	struct dc_inode st;
	int got;

	switch (o->kind) {
	case DCT_OPEN:
		if ((o->flags & DCT_F_CREAT) && e->name)
			return do_name_op(w, r, o);
		got = look(c, s, nofollow, &st);
		if (got)
			return got;
		if (S_ISLNK(st.mode))
			return ELOOP;
		if ((o->flags & DCT_F_DIRECTORY) && !S_ISDIR(st.mode))
			return ENOTDIR;
		if ((o->flags & DCT_F_TRUNC) && S_ISDIR(st.mode))
			return EISDIR;
		return 0;
	case DCT_STAT: case DCT_ACCESS: case DCT_UTIMENS: case DCT_CHMOD:
	case DCT_CHOWN:
		return look(c, s, nofollow, &st);
	case DCT_TRUNCATE:
		got = look(c, s, 0, &st);
		return got ? got : S_ISDIR(st.mode) ? EISDIR : 0;
	case DCT_LSTAT:
		return look(c, s, DC_NOFOLLOW, &st);
	case DCT_READLINK:
		got = look(c, s, DC_NOFOLLOW, &st);
		return got ? got : S_ISLNK(st.mode) ? 0 : EINVAL;
	case DCT_EXECVE:
		got = look(c, s, 0, &st);
		return got ? got : S_ISDIR(st.mode) ? EACCES : 0;
	case DCT_CHDIR:
		got = look(c, s, 0, &st);
		return got ? got : S_ISDIR(st.mode) ? 0 : ENOTDIR;
	case DCT_MKDIR: case DCT_MKNOD: case DCT_SYMLINK: case DCT_UNLINK:
	case DCT_RMDIR:
		if (o->kind == DCT_SYMLINK &&
		    w->x->p->cp[r->copy][o->path2].s[0] == '\0')
			return ENOENT;	/* an empty target: before any lookup */
		if (e->name)
			return do_name_op(w, r, o);
		/* "/" or a name ending in "..": nothing to make or remove */
		got = look(c, s, DC_NOFOLLOW, &st);
		if (o->kind == DCT_MKDIR || o->kind == DCT_MKNOD || o->kind == DCT_SYMLINK)
			return got ? got : EEXIST;
		return GOT_SKIP;		/* the walk only, not checked */
	case DCT_RENAME:
		if (e->name && w->x->p->cp[r->copy][o->path2].name)
			return do_rename(w, r, o);
		look(c, s, DC_NOFOLLOW, &st);
		return GOT_SKIP;
	case DCT_LINK:
		if (w->x->p->cp[r->copy][o->path2].name)
			return do_link(w, r, o);
		look(c, s, DC_NOFOLLOW, &st);
		return GOT_SKIP;
	default:
		return 0;
	}
}

/*
 * A path op's outcome: exec_op's, or in the null mode the recorded one.
 * Every mode pays these two stamps per op, so the null mode's total is
 * what the measurement itself adds to every mode's.
 */
static int answer(struct worker *w, const struct rproc *r, const struct dct_op *o,
		  bool null)
{
	uint64_t t0 = clock_ns();
	int got = null ? o->err : exec_op(w, r, o);

	w->op_ns += clock_ns() - t0;
	return got;
}

/* Run r until it exits or must wait. */

void rp_exec_op(struct worker *w, const struct rproc *r, const struct dct_op *o,
		bool null)
{
	check(w, r, o, answer(w, r, o, null));
}
