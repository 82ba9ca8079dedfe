/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * torture.c - the torture engine: lookups racing every kind of update
 * (tests/test_torture, and `dcbench torture` for long runs).
 *
 * The namespace: directories /d0../d3, each with 6 stable files (never
 * touched: a lookup of one must always succeed, whatever moves around it)
 * and 6 volatile slots, and one directory holding a stable file "inner"
 * that writer 0 moves between /m and /d0/mm (a directory with contents
 * moving into another directory).  That directory also holds "sub", a
 * directory whose handle is taken once and held (as a FUSE server holds
 * its nodes' entries), with one more volatile slot "sub/v" that writer 0
 * changes through that handle and checks by its path from the root, while
 * readers look it up through the handle: whatever happens to the entries
 * above sub (a move, an invalidation, a forget on -ENOMEM), the handle and
 * the path must agree.  Writers own disjoint slots and change them with
 * every update call; readers resolve slot paths (dc_resolve), walk them
 * (dc_walk, a reference), look single names up (dc_lookup on a held
 * directory) and check stable names.
 *
 * Invalidations go through a handle (dc_invalidate_name, dc_invalidate)
 * or, as a watcher would, by inode with memfs's ino and gen
 * (dc_invalidate_child, dc_invalidate_inode; rarely dc_invalidate_all).
 * One run in three (by seed and mode) has TTLs of a few milliseconds, so
 * expiry and revalidation race the updates too.  Neither changes the
 * oracle: forgetting never changes what a name holds, and a revalidation
 * asks the backend during the lookup, as a miss does.
 *
 * The oracle.  Every slot has a version, odd while its writer changes it,
 * and a ring of the values (inode number, or -ENOENT) it held at each even
 * version.  A writer opens the transition before the backend changes and
 * closes it after the cache was told.  A reader notes the version before
 * and after its lookup; the answer must be one the slot held at some even
 * version in between, so a name that existed throughout is never
 * reported missing and no answer mixes two states.  A writer must also
 * see exactly what it made, right after making it.
 *
 * At the end: every name answers what the oracle says it holds now, every
 * reference returned (a shrink to nothing leaves only the root), the
 * cache consistent (dc_debug_check), every entry and every byte freed
 * after dc_cache_destroy.  Thread interleavings are not reproducible; the
 * seed reproduces each thread's choices.
 *
 * With allocation failures on (o->fail_every, dc_debug_fail_alloc) the
 * library's allocations fail during the run; memfs allocates with plain
 * malloc, so the backend's changes still always happen.  The contract
 * (dcache.h): an update that cannot allocate forgets the names it touches
 * and returns -ENOMEM, so the backend's change stands and the oracle
 * records it as usual -- readers must see the old or the new value, and
 * the writer, which must see exactly what it made, sees it through a miss.
 * A lookup may return -ENOMEM (not checked, counted); any other answer is
 * checked as always, and any other error of any call is a violation.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/rng.h"
#include "torture.h"
#include "dcache-debug.h"

#define NDIRS		4
#define NSTABLE		6
#define NVOL		6
#define NVSLOTS		(NDIRS * NVOL)
#define MOVE0		NVSLOTS			/* the moving directory's two places */
#define SUBV		(NVSLOTS + 2)		/* sub/v, through a held handle */
#define NSLOTS		(NVSLOTS + 3)
#define RING		256

static const char *const op_names[TOP_NR] = {
	"resolve", "walk", "lookup", "stable", "create", "mkdir", "symlink",
	"link", "unlink", "rmdir", "rename", "noreplace", "exchange", "movedir",
	"inval-name", "inval-dir", "inval-child", "inval-inode", "inval-all",
	"shrink",
};

const char *torture_op_name(enum torture_op op)
{
	return (unsigned)op < TOP_NR ? op_names[op] : "?";
}

enum kind { K_NONE, K_FILE, K_DIR, K_LINK, K_HARD };

struct slot {
	uint64_t ver;			/* odd while changing */
	int64_t hist[RING];		/* value at each even version */
	uint64_t dir;			/* memfs ino of its directory */
	uint32_t dir_gen;		/* and its gen */
	struct dc_dentry **dirp;	/* the cache handle of its directory */
	char name[16];
	char path[32];			/* what readers resolve */
	bool rel;			/* readers resolve name in *dirp instead */
	enum kind kind;			/* writer's own bookkeeping */
};

struct torture {
	const struct torture_opts *o;
	struct dc_memfs *fs;
	struct dc_cache *c;
	struct dc_dentry *root, *dirs[NDIRS], *sub;
	struct dc_inode dir_in[NDIRS], root_in;	/* memfs's /dN and / */
	uint64_t stable[NDIRS][NSTABLE];
	uint64_t inner;
	struct slot slots[NSLOTS];
	int nwriters;
	int stop;
	pthread_mutex_t log_lock;
	uint64_t ops[TOP_NR], checks, skipped, violations;
	uint64_t enomem[TOP_NR];	/* atomic */
};

struct worker {
	struct torture *t;
	int id;
	uint64_t seed;
	uint64_t ops[TOP_NR];
};

static void violation(struct torture *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void violation(struct torture *t, const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&t->violations, 1, __ATOMIC_RELAXED);
	if (!t->o->log)
		return;
	pthread_mutex_lock(&t->log_lock);
	fprintf(t->o->log, "violation (seed %llu, mode %s): ",
		(unsigned long long)t->o->seed, dc_mode_name(t->o->mode));
	va_start(ap, fmt);
	vfprintf(t->o->log, fmt, ap);
	va_end(ap);
	fputc('\n', t->o->log);
	pthread_mutex_unlock(&t->log_lock);
}

/* An update call must work: the backend change already succeeded. */
static void must(struct torture *t, int err, const char *what)
{
	if (err)
		violation(t, "%s returned %d", what, err);
}

/*
 * err is -ENOMEM and allocations fail on purpose: count it for op.
 * Then the call's answer is not checked (the caller says so).
 */
static bool nomem(struct torture *t, int64_t err, enum torture_op op)
{
	if (err != -ENOMEM || !t->o->fail_every)
		return false;
	__atomic_add_fetch(&t->enomem[op], 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * A cache update call: 0, or -ENOMEM while allocations fail from the calls
 * that allocate (dcache.h: the cache forgot the names instead; the
 * backend's change stands).  A removal, an exchange or an invalidation
 * allocates nothing it needs, and always returns 0, but for an
 * invalidation of the root, which says -ENOMEM when it could make no new
 * root entry (the caller checks that).  Anything else is a violation.
 */
static void must_update(struct torture *t, int err, enum torture_op op)
{
	bool may = op == TOP_CREATE || op == TOP_MKDIR || op == TOP_SYMLINK ||
		   op == TOP_LINK || op == TOP_RENAME || op == TOP_NOREPLACE ||
		   op == TOP_MOVEDIR;

	if (!(may && nomem(t, err, op)))
		must(t, err, op_names[op]);
}

/* ---- slot history ---------------------------------------------------------- */

static void slot_begin(struct slot *s, int64_t newval)
{
	uint64_t v = s->ver;

	__atomic_store_n(&s->hist[(v + 2) % RING], newval, __ATOMIC_RELAXED);
	/* release: the new value is in the ring before anyone sees v+1 */
	__atomic_store_n(&s->ver, v + 1, __ATOMIC_RELEASE);
}

/* The new value, when it is known only after the backend made it. */
static void slot_value(struct slot *s, int64_t newval)
{
	__atomic_store_n(&s->hist[(s->ver + 1) % RING], newval, __ATOMIC_RELAXED);
}

static void slot_end(struct slot *s)
{
	__atomic_store_n(&s->ver, s->ver + 1, __ATOMIC_RELEASE);
}

static int64_t slot_now(const struct slot *s)
{
	return s->hist[s->ver % RING];
}

/* Did s hold got at some even version in [before, after]? */
static bool slot_allows(struct slot *s, uint64_t before, uint64_t after,
			int64_t got, int64_t inner)
{
	uint64_t v;

	for (v = before & ~1ull; v <= ((after + 1) & ~1ull); v += 2) {
		int64_t want = __atomic_load_n(&s->hist[v % RING], __ATOMIC_RELAXED);

		if (inner && want > 0)
			want = inner;
		if (got == want)
			return true;
	}
	return false;
}

/* ---- writers ------------------------------------------------------------ */

static struct dc_dentry *slot_dir(struct slot *s)
{
	return *s->dirp;
}

static bool is_move(const struct torture *t, const struct slot *s)
{
	return s == &t->slots[MOVE0] || s == &t->slots[MOVE0 + 1];
}

static void w_create(struct torture *t, struct worker *w, struct slot *s, unsigned k)
{
	static const enum torture_op ops[4] = { TOP_CREATE, TOP_MKDIR, TOP_SYMLINK, TOP_LINK };
	struct dc_inode in;
	uint64_t src = t->stable[1][2];
	int err;

	slot_begin(s, k == 2 ? (int64_t)t->stable[0][1] : k == 3 ? (int64_t)src : 0);
	switch (k) {
	case 0:
		err = dc_memfs_add(t->fs, s->dir, s->name, S_IFREG | 0644, NULL, &in);
		break;
	case 1:
		err = dc_memfs_add(t->fs, s->dir, s->name, S_IFDIR | 0755, NULL, &in);
		break;
	case 2:
		err = dc_memfs_add(t->fs, s->dir, s->name, S_IFLNK | 0777, "/d0/s1", &in);
		break;
	default:
		err = dc_memfs_link(t->fs, src, s->dir, s->name, &in);
		break;
	}
	must(t, err, "memfs add");
	if (k < 2)
		slot_value(s, (int64_t)in.ino);
	switch (k) {
	case 0: err = dc_create(t->c, slot_dir(s), s->name, &in); break;
	case 1: err = dc_mkdir(t->c, slot_dir(s), s->name, &in); break;
	case 2: err = dc_symlink(t->c, slot_dir(s), s->name, &in, "/d0/s1"); break;
	default: err = dc_link(t->c, slot_dir(s), s->name, &in); break;
	}
	must_update(t, err, ops[k]);
	slot_end(s);
	s->kind = k == 0 ? K_FILE : k == 1 ? K_DIR : k == 2 ? K_LINK : K_HARD;
	w->ops[ops[k]]++;
}

static void w_remove(struct torture *t, struct worker *w, struct slot *s)
{
	bool dir = s->kind == K_DIR;

	slot_begin(s, -ENOENT);
	must(t, dc_memfs_remove(t->fs, s->dir, s->name, dir), "memfs remove");
	must_update(t, dir ? dc_rmdir(t->c, slot_dir(s), s->name) :
			     dc_unlink(t->c, slot_dir(s), s->name),
		    dir ? TOP_RMDIR : TOP_UNLINK);
	slot_end(s);
	s->kind = K_NONE;
	w->ops[dir ? TOP_RMDIR : TOP_UNLINK]++;
}

static void w_rename(struct torture *t, struct worker *w, struct slot *a,
		     struct slot *b, unsigned flags)
{
	int64_t va = slot_now(a), vb = slot_now(b);
	enum kind ka = a->kind;
	/* two names of one inode: rename(2) does nothing at all */
	bool same = a->kind == K_HARD && b->kind == K_HARD;
	enum torture_op op = flags & DC_RENAME_EXCHANGE ? TOP_EXCHANGE :
			     flags & DC_RENAME_NOREPLACE ? TOP_NOREPLACE : TOP_RENAME;

	slot_begin(a, same ? va : flags & DC_RENAME_EXCHANGE ? vb : -ENOENT);
	slot_begin(b, same ? vb : va);
	must(t, dc_memfs_rename(t->fs, a->dir, a->name, b->dir, b->name, flags),
	     "memfs rename");
	must_update(t, dc_rename(t->c, slot_dir(a), a->name, slot_dir(b), b->name,
				 flags), is_move(t, a) ? TOP_MOVEDIR : op);
	slot_end(a);
	slot_end(b);
	if (!same) {
		a->kind = flags & DC_RENAME_EXCHANGE ? b->kind : K_NONE;
		b->kind = ka;
	}
	w->ops[op]++;
}

/* Writer 0 moves the directory with "inner" between /m and /d0/mm. */
static void w_movedir(struct torture *t, struct worker *w)
{
	struct slot *a = &t->slots[MOVE0], *b = &t->slots[MOVE0 + 1];

	if (a->kind == K_NONE) {
		struct slot *x = a;

		a = b;
		b = x;
	}
	w_rename(t, w, a, b, 0);
	w->ops[TOP_RENAME]--;
	w->ops[TOP_MOVEDIR]++;
}

/*
 * Forget slot s's name: through its directory's handle, or by inode as a
 * watcher would, with what memfs says the directory (or the name) is.
 */
static void w_inval_name(struct torture *t, struct worker *w, struct slot *s,
			 unsigned how)
{
	struct dc_inode in;
	enum torture_op op;
	int err;

	switch (how % 4) {
	case 0: case 1:
		op = TOP_INVAL_NAME;
		err = dc_invalidate_name(t->c, slot_dir(s), s->name);
		break;
	case 2:
		op = TOP_INVAL_CHILD;
		err = dc_invalidate_child(t->c, s->dir, s->dir_gen, s->name,
					  strlen(s->name));
		break;
	default:	/* what the name holds now; nothing: the name */
		op = TOP_INVAL_INODE;
		err = dc_memfs_lookup(t->fs, s->dir, s->name, &in);
		if (!err) {
			err = dc_invalidate_inode(t->c, in.ino, in.gen);
		} else if (err == -ENOENT) {
			op = TOP_INVAL_CHILD;
			err = dc_invalidate_child(t->c, s->dir, s->dir_gen,
						  s->name, strlen(s->name));
		}
		break;
	}
	must_update(t, err, op);
	w->ops[op]++;
}

/* Forget directory i (NDIRS: the root) and all below it, one of the ways. */
static void w_inval_dir(struct torture *t, struct worker *w, unsigned i,
			unsigned how)
{
	bool root = i == NDIRS;
	const struct dc_inode *in = root ? &t->root_in : &t->dir_in[i];
	enum torture_op op;
	char name[8];
	int err;

	switch (how % 8) {
	case 0: case 1: case 2: case 3:
		op = TOP_INVAL_DIR;
		err = dc_invalidate(t->c, root ? t->root : t->dirs[i]);
		break;
	case 4: case 5:
		op = TOP_INVAL_INODE;
		err = dc_invalidate_inode(t->c, in->ino, in->gen);
		break;
	case 6:
		if (!root) {	/* its name in the root */
			op = TOP_INVAL_CHILD;
			snprintf(name, sizeof(name), "d%u", i);
			err = dc_invalidate_child(t->c, t->root_in.ino,
						  t->root_in.gen, name, strlen(name));
			break;
		}
		/* fall through */
	default:
		op = TOP_INVAL_ALL;
		err = dc_invalidate_all(t->c);
		break;
	}
	/* the root's, wherever no new root entry could be made */
	if (!((root || op == TOP_INVAL_ALL) && nomem(t, err, op)))
		must_update(t, err, op);
	w->ops[op]++;
}

/* sub/v's path now; only writer 0, which moves sub's parent, may ask. */
static const char *subv_path(struct torture *t)
{
	return t->slots[MOVE0].kind != K_NONE ? "/m/sub/v" : "/d0/mm/sub/v";
}

/* After its own change a writer sees exactly what it made. */
static void check_own(struct torture *t, struct slot *s)
{
	struct dc_inode st;
	int err;
	int64_t got;

	if (is_move(t, s))
		return;
	err = dc_resolve(t->c, NULL, s == &t->slots[SUBV] ? subv_path(t) : s->path,
			 0, &st);
	got = err ? err : (int64_t)st.ino;
	if (nomem(t, got, TOP_RESOLVE))
		return;
	if (got != slot_now(s))
		violation(t, "writer sees %s -> %lld, made %lld", s->path,
			  (long long)got, (long long)slot_now(s));
}

static void writer_step(struct torture *t, struct worker *w, struct slot **mine,
			int n)
{
	uint64_t r = rng_next(&w->seed);
	struct slot *a = mine[r % n], *b = mine[(r >> 8) % n];
	unsigned op = (unsigned)(r >> 16) % 20;

	if (op < 7) {
		if (a->kind)
			w_remove(t, w, a);
		else
			w_create(t, w, a, (unsigned)(r >> 24) % 4);
	} else if (op < 11) {
		/* onto an empty name (NOREPLACE), or over a non-directory */
		if (a != b && a->kind && b->kind != K_DIR &&
		    !(a->kind == K_DIR && b->kind))
			w_rename(t, w, a, b, b->kind ? 0 : DC_RENAME_NOREPLACE);
	} else if (op < 13) {
		if (a != b && a->kind && b->kind)
			w_rename(t, w, a, b, DC_RENAME_EXCHANGE);
	} else if (op < 15) {
		if (w->id == 0)
			w_movedir(t, w);
	} else if (op < 17) {
		/* forgetting is always allowed; answers must stay right */
		w_inval_name(t, w, a, (unsigned)(r >> 24));
	} else if (op < 18) {
		/* one in five the root: everything cached is forgotten */
		w_inval_dir(t, w, (unsigned)(r >> 24) % (NDIRS + 1),
			    (unsigned)(r >> 32));
	} else {
		dc_shrink(t->c, (r >> 24) % 8);
		w->ops[TOP_SHRINK]++;
	}
	check_own(t, a);
	if (b != a)
		check_own(t, b);
}

static void *writer(void *arg)
{
	struct worker *w = arg;
	struct torture *t = w->t;
	struct slot *mine[NVSLOTS + 1];
	int n = 0, i;

	for (i = 0; i < NVSLOTS; i++)
		if (i % t->nwriters == w->id)
			mine[n++] = &t->slots[i];
	if (w->id == 0)		/* it knows where sub is: it moves it */
		mine[n++] = &t->slots[SUBV];
	while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED))
		writer_step(t, w, mine, n);
	return NULL;
}

/* ---- readers ------------------------------------------------------------ */

/* Resolve s's path one of three ways (*op says which); the answer as an
 * ino or -errno. */
static int64_t read_slot(struct torture *t, struct worker *w, struct slot *s,
			 const char *path, uint64_t r, enum torture_op *op)
{
	struct dc_dentry *d = NULL, *base = NULL;
	struct dc_inode st;
	int err;

	if (s->rel) {	/* from the held directory handle */
		base = slot_dir(s);
		path = s->name;
	}
	switch (r % 3) {
	case 0:
		err = dc_resolve(t->c, base, path, 0, &st);
		*op = TOP_RESOLVE;
		break;
	case 1:
		err = dc_walk(t->c, base, path, 0, &d);
		*op = TOP_WALK;
		break;
	default:	/* one name in the held directory handle */
		if (is_move(t, s)) {
			err = dc_walk(t->c, NULL, path, 0, &d);
			*op = TOP_WALK;
			break;
		}
		err = dc_lookup(t->c, slot_dir(s), s->name, strlen(s->name), &d);
		*op = TOP_LOOKUP;
		if (!err) {	/* a symlink slot: follow it as the path would */
			dc_dentry_stat(d, &st);
			if (S_ISLNK(st.mode)) {
				dc_put(t->c, d);
				err = dc_walk(t->c, base, path, 0, &d);
			}
		}
		break;
	}
	w->ops[*op]++;
	if (!err && d) {
		err = dc_dentry_stat(d, &st);
		dc_put(t->c, d);
	}
	return err ? err : (int64_t)st.ino;
}

static void check_slot(struct torture *t, struct worker *w, struct slot *s)
{
	uint64_t before, after, now, r = rng_next(&w->seed);
	int64_t inner = is_move(t, s) ? (int64_t)t->inner : 0;
	enum torture_op op;
	char path[48];
	int64_t got;

	snprintf(path, sizeof(path), inner ? "%s/inner" : "%s", s->path);
	before = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE);
	got = read_slot(t, w, s, path, r, &op);
	after = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE);
	if (nomem(t, got, op))
		return;	/* a lookup may fail so; any answer is checked */
	if (after - before > RING - 8)
		goto skip;
	if (!slot_allows(s, before, after, got, inner) && (after & 1)) {
		/* a create's ino is stored just after the backend made it, so
		 * a lookup may see it first: wait for the change to end */
		while ((now = __atomic_load_n(&s->ver, __ATOMIC_ACQUIRE)) == after)
			sched_yield();
		if (now - before > RING - 8)
			goto skip;
	}
	if (!slot_allows(s, before, after, got, inner)) {
		/* only trust the verdict if the ring did not move on meanwhile */
		if (__atomic_load_n(&s->ver, __ATOMIC_ACQUIRE) - before > RING - 8)
			goto skip;
		violation(t, "%s -> %lld (%s), not held at any version in "
			  "%llu..%llu (held %lld at %llu)", path, (long long)got,
			  op_names[op], (unsigned long long)before,
			  (unsigned long long)after,
			  (long long)__atomic_load_n(&s->hist[(before & ~1ull) % RING],
						     __ATOMIC_RELAXED),
			  (unsigned long long)(before & ~1ull));
	}
	__atomic_add_fetch(&t->checks, 1, __ATOMIC_RELAXED);
	return;
skip:
	__atomic_add_fetch(&t->skipped, 1, __ATOMIC_RELAXED);
}

static void check_stable(struct torture *t, struct worker *w, uint64_t r)
{
	unsigned d = (unsigned)(r >> 8) % NDIRS, f = (unsigned)(r >> 16) % NSTABLE;
	struct dc_inode st;
	char path[32];
	int err;

	snprintf(path, sizeof(path), "/d%u/s%u", d, f);
	err = dc_resolve(t->c, NULL, path, 0, &st);
	w->ops[TOP_STABLE]++;
	if (nomem(t, err, TOP_STABLE))
		return;
	__atomic_add_fetch(&t->checks, 1, __ATOMIC_RELAXED);
	if (err || st.ino != t->stable[d][f])
		violation(t, "stable %s -> %lld (want %llu)", path,
			  err ? (long long)err : (long long)st.ino,
			  (unsigned long long)t->stable[d][f]);
}

static void *reader(void *arg)
{
	struct worker *w = arg;
	struct torture *t = w->t;

	while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
		uint64_t r = rng_next(&w->seed);

		if (r % 4 == 0)
			check_stable(t, w, r);
		else
			check_slot(t, w, &t->slots[(r >> 8) % NSLOTS]);
	}
	return NULL;
}

/* ---- set-up and the run -------------------------------------------------- */

static int build(struct torture *t)
{
	struct dc_inode in;
	char name[16];
	int d, i, err = dc_memfs_new(&t->fs);
	uint64_t m;

	if (!err) {	/* the root's ino and gen, for invalidations by inode */
		struct dc_backend be = dc_memfs_backend(t->fs);

		err = be.ops->root(be.ctx, &t->root_in);
	}
	for (d = 0; d < NDIRS && !err; d++) {
		snprintf(name, sizeof(name), "d%d", d);
		err = dc_memfs_add(t->fs, DC_MEMFS_ROOT, name, S_IFDIR | 0755, NULL, &in);
		t->dir_in[d] = in;
		for (i = 0; i < NSTABLE && !err; i++) {
			uint64_t dino = in.ino;
			struct dc_inode f;

			snprintf(name, sizeof(name), "s%d", i);
			err = dc_memfs_add(t->fs, dino, name, S_IFREG | 0644, NULL, &f);
			t->stable[d][i] = f.ino;
			in.ino = dino;
		}
		for (i = 0; i < NVOL; i++) {
			struct slot *s = &t->slots[d * NVOL + i];

			s->dir = in.ino;
			s->dir_gen = in.gen;
			s->dirp = &t->dirs[d];
			snprintf(s->name, sizeof(s->name), "v%d", i);
			snprintf(s->path, sizeof(s->path), "/d%d/v%d", d, i);
			s->hist[0] = -ENOENT;
		}
	}
	if (!err)
		err = dc_memfs_add(t->fs, DC_MEMFS_ROOT, "m", S_IFDIR | 0755, NULL, &in);
	m = in.ino;
	if (!err)
		err = dc_memfs_add(t->fs, m, "inner", S_IFREG | 0644, NULL, &in);
	t->inner = in.ino;
	if (!err)
		err = dc_memfs_add(t->fs, m, "sub", S_IFDIR | 0755, NULL, &in);
	t->slots[SUBV] = (struct slot){ .dir = in.ino, .dir_gen = in.gen,
		.dirp = &t->sub, .name = "v", .path = "sub/v", .rel = true,
		.hist = { -ENOENT } };
	/* the moving directory's two places: > 0 in the history means "there" */
	t->slots[NVSLOTS] = (struct slot){ .dir = t->root_in.ino,
		.dir_gen = t->root_in.gen, .dirp = &t->root,
		.name = "m", .path = "/m", .kind = K_DIR, .hist = { 1 } };
	t->slots[NVSLOTS + 1] = (struct slot){ .dir = t->slots[0].dir,
		.dir_gen = t->slots[0].dir_gen, .dirp = &t->dirs[0],
		.name = "mm", .path = "/d0/mm",
		.hist = { -ENOENT } };
	return err;
}

/*
 * Quiescent now: every name answers what it holds, whatever the cache
 * kept or forgot during the run (after allocation failures above all).
 */
static void check_final(struct torture *t)
{
	struct dc_inode st;
	char path[48];
	int d, i, err;

	for (i = 0; i < NSLOTS; i++) {
		struct slot *s = &t->slots[i];
		int64_t want = slot_now(s), got;

		if (is_move(t, s) && want > 0)
			want = (int64_t)t->inner;
		snprintf(path, sizeof(path), is_move(t, s) ? "%s/inner" : "%s",
			 s == &t->slots[SUBV] ? subv_path(t) : s->path);
		err = dc_resolve(t->c, NULL, path, 0, &st);
		got = err ? err : (int64_t)st.ino;
		__atomic_add_fetch(&t->checks, 1, __ATOMIC_RELAXED);
		if (got != want)
			violation(t, "at the end %s -> %lld, holds %lld", path,
				  (long long)got, (long long)want);
		if (!s->rel)
			continue;
		err = dc_resolve(t->c, slot_dir(s), s->name, 0, &st);
		got = err ? err : (int64_t)st.ino;
		if (got != want)
			violation(t, "at the end %s through its directory's handle "
				  "-> %lld, holds %lld", path, (long long)got,
				  (long long)want);
	}
	for (d = 0; d < NDIRS; d++)
		for (i = 0; i < NSTABLE; i++) {
			snprintf(path, sizeof(path), "/d%d/s%d", d, i);
			err = dc_resolve(t->c, NULL, path, 0, &st);
			__atomic_add_fetch(&t->checks, 1, __ATOMIC_RELAXED);
			if (err || st.ino != t->stable[d][i])
				violation(t, "at the end stable %s -> %lld", path,
					  err ? (long long)err : (long long)st.ino);
		}
}

/* Every reference returned, the cache consistent, then everything freed. */
static void check_end(struct torture *t, uint64_t entries0, uint64_t bytes0)
{
	struct dc_stats st;
	char why[256];
	int i;

	check_final(t);
	if (dc_debug_check_why(t->c, why, sizeof(why)))
		violation(t, "dc_debug_check failed at the end: %s", why);
	for (i = 0; i < NDIRS; i++)
		dc_put(t->c, t->dirs[i]);
	dc_put(t->c, t->sub);
	dc_put(t->c, t->root);
	while (dc_shrink(t->c, 0) > 0)
		;
	dc_get_stats(t->c, &st);
	if (st.entries != 1)
		violation(t, "%llu entries left after shrinking to nothing "
			  "(a reference not returned?)", (unsigned long long)st.entries);
	dc_cache_destroy(t->c);
	if (dc_debug_live_entries() != entries0)
		violation(t, "%lld entries not freed",
			  (long long)(dc_debug_live_entries() - entries0));
	if (dc_debug_live_bytes() != bytes0)
		violation(t, "%lld bytes not freed",
			  (long long)(dc_debug_live_bytes() - bytes0));
}

/* One run in three (of the modes of one seed, exactly one) expires its
 * answers after 1-5 ms, negative and positive apart. */
static void pick_ttl(const struct torture_opts *o, uint32_t *pos, uint32_t *neg)
{
	uint64_t x = (o->seed + 1) * 0x9e3779b97f4a7c15ull;

	*pos = *neg = 0;
	if ((o->seed + (uint64_t)o->mode) % 3)
		return;
	*pos = 1 + (uint32_t)((x >> 32) % 5);
	*neg = 1 + (uint32_t)((x >> 40) % 5);
}

int torture_run(const struct torture_opts *o, struct torture_result *r)
{
	struct dc_options co = { .mode = o->mode, .max_entries = o->max_entries,
				 .max_negative = o->max_negative };
	uint64_t entries0 = dc_debug_live_entries(), bytes0 = dc_debug_live_bytes();
	int n = o->threads > 1 ? o->threads : 2, i, k;
	struct torture *t = calloc(1, sizeof(*t));
	struct worker *w = calloc((size_t)n, sizeof(*w));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	struct dc_stats st;
	char name[16];
	double t0;

	if (!t || !w || !th) {
		free(t), free(w), free(th);
		return -1;
	}
	t->o = o;
	t->nwriters = n / 3 > 0 ? n / 3 : 1;
	pthread_mutex_init(&t->log_lock, NULL);
	if (build(t)) {
		violation(t, "cannot build the namespace");
		goto out;
	}
	co.backend = dc_memfs_backend(t->fs);
	pick_ttl(o, &co.ttl_ms, &co.neg_ttl_ms);
	r->ttl_ms = co.ttl_ms;
	r->neg_ttl_ms = co.neg_ttl_ms;
	if (dc_cache_create(&co, &t->c)) {
		violation(t, "cannot create the cache");
		goto out;
	}
	t->root = dc_root(t->c);
	for (i = 0; i < NDIRS; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		must(t, dc_walk(t->c, NULL, name, 0, &t->dirs[i]), "walk to a directory");
	}
	must(t, dc_walk(t->c, NULL, "m/sub", 0, &t->sub), "walk to m/sub");
	if (o->fail_every)	/* from here to the join: see the top */
		dc_debug_fail_alloc(o->fail_every, o->fail_seed);
	t0 = clock_s();
	for (i = 0; i < n; i++) {
		w[i] = (struct worker){ .t = t, .id = i,
			.seed = (o->seed + 1) * 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1) | 1 };
		pthread_create(&th[i], NULL, i < t->nwriters ? writer : reader, &w[i]);
	}
	usleep((useconds_t)(o->seconds * 1e6));
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	r->seconds = clock_s() - t0;
	if (o->fail_every) {
		r->failed_allocs = dc_debug_failed_allocs();
		dc_debug_fail_alloc(0, 0);
	}
	for (i = 0; i < n; i++)
		for (k = 0; k < TOP_NR; k++)
			t->ops[k] += w[i].ops[k];
	dc_get_stats(t->c, &st);
	r->evictions = st.evictions;
	r->restarts = st.restarts;
	r->path_hits = st.path_hits;
	check_end(t, entries0, bytes0);
out:
	memcpy(r->ops, t->ops, sizeof(r->ops));
	r->checks = t->checks;
	r->skipped = t->skipped;
	r->violations = t->violations;
	memcpy(r->enomem, t->enomem, sizeof(r->enomem));
	if (t->fs)
		dc_memfs_free(t->fs);
	pthread_mutex_destroy(&t->log_lock);
	free(t), free(w), free(th);
	return r->violations ? -1 : 0;
}

/* ---- the report ---------------------------------------------------------------- */

void torture_print_result(FILE *f, const struct torture_opts *o,
			 const struct torture_result *r)
{
	uint64_t total = 0, nomem = 0;
	int k;

	for (k = 0; k < TOP_NR; k++)
		total += r->ops[k], nomem += r->enomem[k];
	fprintf(f, "torture mode %s: %.1f s, %d threads, seed %llu: %llu operations "
		"(%.0f/s), %llu answers checked, %llu skipped, %llu evictions, "
		"%llu rcu-walk restarts, %llu one-probe answers, %llu violations\n",
		dc_mode_name(o->mode), r->seconds, o->threads,
		(unsigned long long)o->seed, (unsigned long long)total,
		total / r->seconds, (unsigned long long)r->checks,
		(unsigned long long)r->skipped, (unsigned long long)r->evictions,
		(unsigned long long)r->restarts, (unsigned long long)r->path_hits,
		(unsigned long long)r->violations);
	if (r->ttl_ms || r->neg_ttl_ms)
		fprintf(f, "  TTLs on: %u ms, negative %u ms\n", r->ttl_ms,
			r->neg_ttl_ms);
	if (o->fail_every) {
		char how[64];

		if (o->fail_every > 0)
			snprintf(how, sizeof(how), "every %ld", o->fail_every);
		else
			snprintf(how, sizeof(how), "one in %ld, seed %llu",
				 -o->fail_every, (unsigned long long)o->fail_seed);
		fprintf(f, "  allocation failures (%s): %llu injected, %llu calls "
			"returned -ENOMEM\n", how, (unsigned long long)r->failed_allocs,
			(unsigned long long)nomem);
	}
	for (k = 0; k < TOP_NR; k++) {
		fprintf(f, "  %-11s %12llu  %10.0f/s", op_names[k],
			(unsigned long long)r->ops[k], r->ops[k] / r->seconds);
		if (o->fail_every)
			fprintf(f, "  %10llu -ENOMEM", (unsigned long long)r->enomem[k]);
		fputc('\n', f);
	}
}

int torture_parse_fail(const char *s, struct torture_opts *o)
{
	bool rnd = !strncmp(s, "rand:", 5);
	char *end;
	long n;

	errno = 0;
	n = strtol(rnd ? s + 5 : s, &end, 10);
	if (errno || end == (rnd ? s + 5 : s) || n < 1 || (!rnd && *end))
		return -1;
	o->fail_every = rnd ? -n : n;
	if (rnd && *end == ':') {
		const char *p = end + 1;

		o->fail_seed = strtoull(p, &end, 10);
		if (end == p)
			return -1;
	}
	return *end ? -1 : 0;
}
