/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_walk.c - libFuzzer target for the path walk.
 *
 * Arbitrary bytes (up to the first NUL) are resolved as a path, with and
 * without DC_NOFOLLOW and from two starting directories, by a cache in
 * each mode over a fixed memfs tree full of symlinks, and by a separate,
 * deliberately simple recursive resolver written here from the kernel's
 * rules.  Any difference in errno or inode is a finding (fuzz.h).  The
 * caches stay alive across inputs, so answers come both from misses and
 * from the cache (rcu-walk, ref-walk).  Small caps make eviction run all the time.
 *
 *	make fuzz            (builds with clang -fsanitize=fuzzer,address)
 *
 * tests/fuzz/run_corpus.c replays tests/fuzz/corpus_walk/ as a plain
 * regression test in make check.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dcache.h"
#include "fuzz.h"

#define MAXINO	64

static struct dc_memfs *fs;
static struct dc_cache *caches[3];
static struct dc_dentry *bases[3][2];	/* the root, and /a/b */
static uint64_t parent_of[MAXINO];
static uint64_t ino_ab;

/* ---- the tree ------------------------------------------------------------- */

static uint64_t add(uint64_t dir, const char *name, uint32_t mode, const char *t)
{
	struct dc_inode in;

	if (dc_memfs_add(fs, dir, name, mode, t, &in) || in.ino >= MAXINO)
		abort();
	if (S_ISDIR(mode))
		parent_of[in.ino] = dir;
	return in.ino;
}

static void build_tree(void)
{
	uint64_t a, b, c, d;
	char long_name[256];

	if (dc_memfs_new(&fs))
		abort();
	parent_of[DC_MEMFS_ROOT] = DC_MEMFS_ROOT;
	a = add(DC_MEMFS_ROOT, "a", S_IFDIR | 0755, NULL);
	b = add(a, "b", S_IFDIR | 0755, NULL);
	c = add(b, "c", S_IFDIR | 0755, NULL);
	d = add(DC_MEMFS_ROOT, "d", S_IFDIR | 0755, NULL);
	ino_ab = b;
	add(DC_MEMFS_ROOT, "f", S_IFREG | 0644, NULL);
	add(a, "g", S_IFREG | 0644, NULL);
	add(c, "h", S_IFREG | 0644, NULL);
	add(DC_MEMFS_ROOT, "l1", S_IFLNK | 0777, "a/b");
	add(DC_MEMFS_ROOT, "l2", S_IFLNK | 0777, "/a");
	add(b, "l3", S_IFLNK | 0777, "../..");
	add(DC_MEMFS_ROOT, "loop", S_IFLNK | 0777, "loop");
	add(DC_MEMFS_ROOT, "l4", S_IFLNK | 0777, "l1/c/");
	add(DC_MEMFS_ROOT, "dang", S_IFLNK | 0777, "nope/x");
	add(DC_MEMFS_ROOT, "abs", S_IFLNK | 0777, "/a/g");
	add(c, "up", S_IFLNK | 0777, "../../../../../..");
	add(d, "self", S_IFLNK | 0777, "self/x");
	add(d, "x1", S_IFLNK | 0777, "x2");
	add(d, "x2", S_IFLNK | 0777, "x3");
	add(d, "x3", S_IFLNK | 0777, "/d/x1");	/* a 3-cycle */
	add(d, "tof", S_IFLNK | 0777, "../f");
	add(d, "dot", S_IFLNK | 0777, ".");
	add(d, "many", S_IFLNK | 0777, "dot/dot/dot/dot/dot/dot/dot/dot/dot/dot");
	memset(long_name, 'n', 255);
	long_name[255] = '\0';
	add(a, long_name, S_IFREG | 0644, NULL);
}

static void open_caches(void)
{
	enum dc_mode m;

	for (m = DC_MODE_RCU; m <= DC_MODE_RWLOCK; m++) {
		struct dc_options o = { .mode = m, .max_entries = 24, .max_negative = 6 };

		o.backend = dc_memfs_backend(fs);
		if (dc_cache_create(&o, &caches[m]))
			abort();
		bases[m][0] = dc_root(caches[m]);
		if (dc_walk(caches[m], NULL, "a/b", 0, &bases[m][1]))
			abort();
	}
}

/* ---- the reference resolver: simple, recursive, no cache ------------------ */

static int ref_lookup(uint64_t dir, const char *name, size_t len, struct dc_inode *out)
{
	const struct dc_backend be = dc_memfs_backend(fs);
	struct dc_inode din = { dir, dir, S_IFDIR, 0 };

	return be.ops->lookup(be.ctx, &din, name, len, out);
}

static int ref_readlink(const struct dc_inode *in, char *buf, size_t size)
{
	const struct dc_backend be = dc_memfs_backend(fs);

	return be.ops->readlink(be.ctx, in, buf, size);
}

/*
 * Resolve p (len bytes) from directory start.  follow_last: follow a
 * symlink in the last component.  *nlinks counts symlinks across the
 * whole resolution.
 */
static int ref_walk(uint64_t start, const char *p, size_t len, bool follow_last,
		    int *nlinks, struct dc_inode *res)
{
	struct dc_inode cur = { start, start, S_IFDIR, 0 }, child;
	size_t i = 0;

	if (len > 0 && p[0] == '/')
		cur.ino = cur.cookie = DC_MEMFS_ROOT;
	for (;;) {
		size_t s, n;
		bool last, trailing;
		int err;

		while (i < len && p[i] == '/')
			i++;
		if (i == len)
			break;
		s = i;
		while (i < len && p[i] != '/')
			i++;
		n = i - s;
		trailing = i < len;		/* a slash follows */
		{
			size_t j = i;

			while (j < len && p[j] == '/')
				j++;
			last = j == len;
		}
		if (!S_ISDIR(cur.mode))
			return -ENOTDIR;
		if (n == 1 && p[s] == '.')
			continue;
		if (n == 2 && p[s] == '.' && p[s + 1] == '.') {
			cur.ino = cur.cookie = parent_of[cur.ino];
			continue;
		}
		if (n > 255)
			return -ENAMETOOLONG;
		err = ref_lookup(cur.ino, p + s, n, &child);
		if (err)
			return err;
		if (S_ISLNK(child.mode) && (!last || follow_last || trailing)) {
			char t[DC_PATH_MAX];
			int tl;

			if (++*nlinks > DC_MAXSYMLINKS)
				return -ELOOP;
			tl = ref_readlink(&child, t, sizeof(t));
			if (tl < 0)
				return tl;
			if (tl == 0)
				return -ENOENT;
			err = ref_walk(cur.ino, t, (size_t)tl, true, nlinks, &child);
			if (err)
				return err;
		}
		if (last && trailing && !S_ISDIR(child.mode))
			return -ENOTDIR;
		cur = child;
	}
	*res = cur;
	return 0;
}

static int ref_resolve(uint64_t start, const char *path, unsigned flags, uint64_t *ino)
{
	size_t len = strnlen(path, DC_PATH_MAX);
	struct dc_inode r;
	int nlinks = 0, err;

	if (len == DC_PATH_MAX)
		return -ENAMETOOLONG;
	if (len == 0)
		return -ENOENT;
	err = ref_walk(start, path, len, !(flags & DC_NOFOLLOW), &nlinks, &r);
	if (!err)
		*ino = r.ino;
	return err;
}

/* ---- the target ------------------------------------------------------------- */

/* libFuzzer's build: a finding aborts (run_corpus.c counts it instead) */
__attribute__((weak)) void fuzz_fail(void)
{
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	char path[DC_PATH_MAX + 64];
	size_t n = size < sizeof(path) - 1 ? size : sizeof(path) - 1;
	unsigned flags;
	int m, b;

	if (!ready) {
		build_tree();
		open_caches();
		ready = true;
	}
	memcpy(path, data, n);
	path[n] = '\0';
	for (flags = 0; flags <= DC_NOFOLLOW; flags += DC_NOFOLLOW)
		for (b = 0; b < 2; b++) {
			uint64_t want_ino = 0;
			int want = ref_resolve(b ? ino_ab : DC_MEMFS_ROOT, path, flags,
					       &want_ino);

			for (m = 0; m < 3; m++) {
				struct dc_inode st;
				int got = dc_resolve(caches[m], bases[m][b], path, flags, &st);

				if (got != want || (!got && st.ino != want_ino)) {
					fprintf(stderr, "mode %s base %d flags %u path \"%s\": "
						"cache %d/%llu, reference %d/%llu\n",
						dc_mode_name((enum dc_mode)m), b, flags, path, got,
						(unsigned long long)(got ? 0 : st.ino), want,
						(unsigned long long)want_ino);
					fuzz_fail();
					return 0;
				}
			}
		}
	return 0;
}
