// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * plan.c - planning a change: a random kind of change, the names it is
 * made on (picked from the tree, never a stale one) and every name whose
 * view it changes, which are the names checked on both sides afterwards.
 */
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/hash.h"
#include "fs/coherence/run.h"

typedef bool (*filter)(struct run *r, const struct ent *e);

static bool src_stat(const struct run *r, const char *rel, struct stat *st)
{
	char path[PATH_MAX];

	coh_at(path, r->src, rel);
	return lstat(path, st) == 0;
}

static bool f_file(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'f';
}

static bool f_file_or_link(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'f' || e->type == 'l';
}

static bool f_file_or_dir(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'f' || e->type == 'd';
}

static bool f_any(struct run *r, const struct ent *e)
{
	(void)r;
	(void)e;
	return true;
}

static bool f_link(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'l';
}

/* a directory a name can be made in */
static bool f_dir(struct run *r, const struct ent *e)
{
	return e->type == 'd' && coh_depth(e->path) < MAX_DEPTH &&
	       strlen(e->path) + 16 < REL_MAX && !coh_listing_stale(r, e->path);
}

/* below the top: the top directories stay */
static bool f_movable_dir(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'd' && coh_depth(e->path) >= 2;
}

static bool f_empty_dir(struct run *r, const struct ent *e)
{
	return f_movable_dir(r, e) && !coh_has_children(&r->names, e->path);
}

static bool f_linked_file(struct run *r, const struct ent *e)
{
	struct stat st;

	return e->type == 'f' && src_stat(r, e->path, &st) && st.st_nlink >= 2;
}

static bool f_small_file(struct run *r, const struct ent *e)
{
	struct stat st;

	return e->type == 'f' && src_stat(r, e->path, &st) && st.st_size < BIG_FILE;
}

static bool f_middle_file(struct run *r, const struct ent *e)
{
	struct stat st;

	return e->type == 'f' && src_stat(r, e->path, &st) && st.st_size >= 16;
}

static bool f_with_xattr(struct run *r, const struct ent *e)
{
	char path[PATH_MAX];

	if (!f_file_or_dir(r, e))
		return false;
	coh_at(path, r->src, e->path);
	return lgetxattr(path, XATTR_NAME, NULL, 0) >= 0;
}

/* where r->moving can go: not below itself, and not too deep or long */
static bool f_dest(struct run *r, const struct ent *e)
{
	return f_dir(r, e) && !coh_within(e->path, r->moving) &&
	       coh_depth(e->path) + r->moving_height <= MAX_DEPTH &&
	       strlen(e->path) + 12 + r->moving_len < REL_MAX;
}

/* A random usable name that f accepts, copied to out; false if none. */
static bool pick(struct run *r, filter f, char *out, char *type)
{
	unsigned seen = 0;
	size_t got = 0;

	for (size_t i = 0; i < r->names.n; i++) {
		const struct ent *e = &r->names.e[i];

		if (!coh_usable(r, e->path) || !f(r, e))
			continue;
		if (coh_below(&r->rng, ++seen) == 0)
			got = i;
	}
	if (!seen)
		return false;
	coh_put(out, REL_MAX, "%s", r->names.e[got].path);
	if (type)
		*type = r->names.e[got].type;
	return true;
}

static void fresh(struct run *r, const char *dir, const char *prefix, char *out)
{
	coh_put(out, REL_MAX, "%s/%s%u", dir, prefix, r->next++);
}

static void want(struct plan *p, const char *path, unsigned what)
{
	for (unsigned i = 0; i < p->nchk; i++)
		if (!strcmp(p->chk[i].path, path)) {
			p->chk[i].what |= what;
			return;
		}
	if (p->nchk == MAX_CHECKS)
		return;
	coh_put(p->chk[p->nchk].path, REL_MAX, "%s", path);
	p->chk[p->nchk++].what = what;
}

static void want_parent(struct plan *p, const char *path)
{
	char dir[REL_MAX];

	coh_parent_of(path, dir);
	want(p, dir, W_LIST);
}

/* The other names of path's inode: their link count, and for data and
 * xattrs their contents, change with it. */
static void want_links(struct run *r, struct plan *p, const char *path, unsigned what)
{
	struct stat st, o;

	if (!src_stat(r, path, &st) || !S_ISREG(st.st_mode) || st.st_nlink < 2)
		return;
	for (size_t i = 0; i < r->names.n; i++) {
		const struct ent *e = &r->names.e[i];

		if (e->type == 'f' && strcmp(e->path, path) && src_stat(r, e->path, &o) &&
		    o.st_ino == st.st_ino && o.st_dev == st.st_dev)
			want(p, e->path, W_ATTR | what);
	}
}

static void random_bytes(struct run *r, unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(' ' + coh_below(&r->rng, 95));
}

/* Up to 2 KB of new random bytes that will be all of a's contents. */
static void new_contents(struct run *r, struct plan *p)
{
	p->n = coh_below(&r->rng, 2049);
	random_bytes(r, p->data, p->n);
	p->want_len = p->n;
	p->want_hash = hash_fnv1a(p->data, p->n, HASH_FNV_OFFSET);
}

/* a's attributes, and what of them and its other names changes with it. */
static void want_inode(struct run *r, struct plan *p, unsigned what)
{
	want(p, p->a, W_ATTR | what);
	want_links(r, p, p->a, what);
}

/* a's contents will be the first len bytes of r->old. */
static void want_old(struct run *r, struct plan *p, size_t len)
{
	p->want_len = len;
	p->want_hash = hash_fnv1a(r->old, len, HASH_FNV_OFFSET);
	want_inode(r, p, W_DATA);
}

/* a's contents as the source holds them, into r->old; the length or -1 */
static ssize_t old_data(struct run *r, const char *rel)
{
	char path[PATH_MAX];

	coh_at(path, r->src, rel);
	return coh_read_file(path, r->old, DATA_MAX);
}

static bool plan_create(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "c", p->a);
	p->type = 'f';
	new_contents(r, p);
	want(p, p->a, W_ATTR | W_DATA);
	want_parent(p, p->a);
	return true;
}

/* A name f accepts, removed: it, its directory's listing, its inode's
 * other names (a directory has none). */
static bool plan_removal(struct run *r, struct plan *p, filter f)
{
	if (!pick(r, f, p->a, &p->type))
		return false;
	want(p, p->a, W_ATTR);
	want_parent(p, p->a);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_unlink(struct run *r, struct plan *p)
{
	return plan_removal(r, p, f_file_or_link);
}

static bool plan_rename(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_file_or_link, p->a, &p->type) || !pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "r", p->b);
	want(p, p->a, W_ATTR);
	want(p, p->b, W_ATTR);
	want_parent(p, p->a);
	want_parent(p, p->b);
	return true;
}

static bool plan_rename_dir(struct run *r, struct plan *p)
{
	char dir[REL_MAX];
	size_t below_n = 0, height = 0, len = 0, n;
	size_t idx[MAX_DESCENDANTS];

	if (!pick(r, f_movable_dir, p->a, &p->type))
		return false;
	n = strlen(p->a);
	for (size_t i = 0; i < r->names.n; i++) {
		const char *q = r->names.e[i].path;

		if (!coh_within(q, p->a))
			continue;
		if (coh_depth(q) - coh_depth(p->a) + 1 > height)
			height = coh_depth(q) - coh_depth(p->a) + 1;
		if (strlen(q) - n > len)
			len = strlen(q) - n;
		if (!strcmp(q, p->a))
			continue;
		/* a reservoir: which names below it are checked */
		if (below_n < MAX_DESCENDANTS) {
			idx[below_n] = i;
		} else {
			unsigned k = coh_below(&r->rng, (unsigned)below_n + 1);

			if (k < MAX_DESCENDANTS)
				idx[k] = i;
		}
		below_n++;
	}
	r->moving = p->a;
	r->moving_height = height;
	r->moving_len = len;
	if (!pick(r, f_dest, dir, NULL))
		return false;
	fresh(r, dir, "R", p->b);
	want(p, p->a, W_ATTR);
	want(p, p->b, W_ATTR | W_LIST);
	want_parent(p, p->a);
	want_parent(p, p->b);
	for (size_t k = 0; k < below_n && k < MAX_DESCENDANTS; k++) {
		char moved[REL_MAX];

		coh_put(moved, sizeof(moved), "%s%s", p->b, r->names.e[idx[k]].path + n);
		want(p, moved, W_ATTR);
	}
	return true;
}

static bool plan_mkdir(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "m", p->a);
	p->type = 'd';
	want(p, p->a, W_ATTR | W_LIST);
	want_parent(p, p->a);
	return true;
}

static bool plan_rmdir(struct run *r, struct plan *p)
{
	return plan_removal(r, p, f_empty_dir);
}

static bool plan_replace(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_file, p->a, &p->type))
		return false;
	coh_parent_of(p->a, dir);
	fresh(r, dir, ".tmp", p->tmp);
	new_contents(r, p);
	want(p, p->a, W_ATTR | W_DATA);
	want(p, p->tmp, W_ATTR);
	want_parent(p, p->a);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_pwrite(struct run *r, struct plan *p)
{
	ssize_t len;

	if (!pick(r, f_middle_file, p->a, &p->type) || (len = old_data(r, p->a)) < 16)
		return false;
	p->n = 1 + coh_below(&r->rng, (unsigned)(len / 2 < 64 ? len / 2 : 64));
	p->off = (off_t)(1 + coh_below(&r->rng, (unsigned)((size_t)len - p->n - 1)));
	random_bytes(r, p->data, p->n);
	/* every byte differs, so the write always shows */
	for (size_t i = 0; i < p->n; i++) {
		if (p->data[i] == r->old[p->off + (off_t)i])
			p->data[i] ^= 1;
		r->old[p->off + (off_t)i] = p->data[i];
	}
	want_old(r, p, (size_t)len);
	return true;
}

static bool plan_truncate(struct run *r, struct plan *p)
{
	ssize_t len;

	if (!pick(r, f_small_file, p->a, &p->type) || (len = old_data(r, p->a)) < 0)
		return false;
	if (len > 0 && coh_below(&r->rng, 4))
		p->size = coh_below(&r->rng, (unsigned)len);
	else
		p->size = len + 1 + coh_below(&r->rng, 1024);
	if (p->size > len)
		memset(r->old + len, 0, (size_t)(p->size - len));
	want_old(r, p, (size_t)p->size);
	return true;
}

static bool plan_append(struct run *r, struct plan *p)
{
	ssize_t len;

	if (!pick(r, f_small_file, p->a, &p->type) || (len = old_data(r, p->a)) < 0)
		return false;
	p->n = 1 + coh_below(&r->rng, 512);
	random_bytes(r, p->data, p->n);
	memcpy(r->old + len, p->data, p->n);
	want_old(r, p, (size_t)len + p->n);
	return true;
}

static bool plan_chmod(struct run *r, struct plan *p)
{
	static const mode_t files[] = { 0600, 0640, 0644, 0664, 0700, 0755 };
	static const mode_t dirs[] = { 0700, 0711, 0750, 0755, 0775 };
	struct stat st;

	if (!pick(r, f_file_or_dir, p->a, &p->type) || !src_stat(r, p->a, &st))
		return false;
	do
		p->mode = p->type == 'd' ? dirs[coh_below(&r->rng, 5)] : files[coh_below(&r->rng, 6)];
	while (p->mode == (st.st_mode & 07777));
	want_inode(r, p, 0);
	return true;
}

static bool plan_chown(struct run *r, struct plan *p)
{
	struct stat st;

	if (!pick(r, f_any, p->a, &p->type) || !src_stat(r, p->a, &st))
		return false;
	do {
		p->uid = coh_below(&r->rng, 3) ? 1000 + coh_below(&r->rng, 8) : 0;
		p->gid = coh_below(&r->rng, 3) ? 1000 + coh_below(&r->rng, 8) : 0;
	} while (p->uid == st.st_uid && p->gid == st.st_gid);
	want_inode(r, p, 0);
	return true;
}

static bool plan_link(struct run *r, struct plan *p)
{
	char dir[REL_MAX];
	struct stat st;

	if (!pick(r, f_file, p->a, &p->type) || !src_stat(r, p->a, &st) ||
	    !pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "k", p->b);
	p->want_nlink = st.st_nlink + 1;
	want(p, p->b, W_ATTR);
	want(p, p->a, W_ATTR);
	want_parent(p, p->b);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_unlink_link(struct run *r, struct plan *p)
{
	return plan_removal(r, p, f_linked_file);
}

static bool plan_retarget(struct run *r, struct plan *p)
{
	char dir[REL_MAX], old[REL_MAX], path[PATH_MAX];
	ssize_t n;

	if (!pick(r, f_link, p->a, &p->type))
		return false;
	coh_at(path, r->src, p->a);
	n = readlink(path, old, sizeof(old) - 1);
	if (n < 0)
		return false;
	old[n] = '\0';
	do {
		switch (coh_below(&r->rng, 3)) {
		case 0:
			coh_put(p->target, REL_MAX, "f%u", coh_below(&r->rng, 8));
			break;
		case 1:
			coh_put(p->target, REL_MAX, "../f%u", coh_below(&r->rng, 8));
			break;
		default:
			coh_put(p->target, REL_MAX, "gone%u", coh_below(&r->rng, 1000));
		}
	} while (!strcmp(p->target, old));
	coh_parent_of(p->a, dir);
	fresh(r, dir, ".tmp", p->tmp);
	want(p, p->a, W_ATTR);
	want(p, p->tmp, W_ATTR);
	want_parent(p, p->a);
	return true;
}

static bool plan_setxattr(struct run *r, struct plan *p)
{
	if (!pick(r, f_file_or_dir, p->a, &p->type))
		return false;
	p->xlen = (size_t)snprintf(p->xval, sizeof(p->xval), "v%u-%u", r->next++,
				   coh_below(&r->rng, 1000000));
	want_inode(r, p, W_XATTR);
	return true;
}

static bool plan_rmxattr(struct run *r, struct plan *p)
{
	if (!pick(r, f_with_xattr, p->a, &p->type))
		return false;
	want_inode(r, p, W_XATTR);
	return true;
}

static bool (*const planners[C_NCHG])(struct run *, struct plan *) = {
	plan_create, plan_unlink, plan_rename, plan_rename_dir, plan_mkdir, plan_rmdir,
	plan_replace, plan_pwrite, plan_truncate, plan_append, plan_chmod, plan_chown,
	plan_link, plan_unlink_link, plan_retarget, plan_setxattr, plan_rmxattr,
};

/* Does p keep clear of every name the mount was left stale on? */
static bool clear_of_stale(const struct run *r, const struct plan *p)
{
	for (unsigned i = 0; i < p->nchk; i++)
		if (!coh_usable(r, p->chk[i].path) ||
		    ((p->chk[i].what & W_LIST) && coh_listing_stale(r, p->chk[i].path)))
			return false;
	return p->chg != C_RENAME_DIR || !coh_holds_stale(r, p->a);
}

/* A random kind of change with a name to make it on; false if none fits. */
bool coh_plan_change(struct run *r, struct plan *p, bool via_mount)
{
	for (unsigned tries = 0; tries < 256; tries++) {
		enum chg c = (enum chg)coh_below(&r->rng, C_NCHG);

		if (!r->xattrs && (c == C_SETXATTR || c == C_RMXATTR))
			continue;
		memset(p, 0, sizeof(*p));
		p->chg = c;
		p->via_mount = via_mount;
		if (planners[c](r, p) && clear_of_stale(r, p))
			return true;
	}
	return false;
}
