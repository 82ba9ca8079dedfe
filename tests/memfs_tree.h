/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memfs_tree.h - what the tests that build their namespace in one memfs
 * share: the namespace (fs), starting it afresh, adding a name to it,
 * and closing a cache with its consistency check.  Included once per
 * test program, after harness.h and dcache-debug.h.
 */
#ifndef DC_MEMFS_TREE_H
#define DC_MEMFS_TREE_H

#include <sys/stat.h>

#define DIR_M	(S_IFDIR | 0755)
#define REG_M	(S_IFREG | 0644)

/* the namespace behind the test's memfs caches */
static struct dc_memfs *fs;

/* An empty namespace in fs, the one before (if any) freed. */
static inline void fresh_fs(void)
{
	if (fs)
		dc_memfs_free(fs);
	fs = NULL;
	CHECK_EQ(dc_memfs_new(&fs), 0);
}

/* name in directory dir (target: a symlink's text, else NULL): its inode
 * number. */
static inline uint64_t add(uint64_t dir, const char *name, uint32_t mode,
			   const char *target)
{
	struct dc_inode in = { 0 };

	CHECK_EQ(dc_memfs_add(fs, dir, name, mode, target, &in), 0);
	return in.ino;
}

/* Check a cache's consistency and destroy it. */
static inline void close_cache(struct dc_cache *c)
{
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
}

/* The same for the only cache open: no entry may outlive it. */
static inline void close_last_cache(struct dc_cache *c)
{
	close_cache(c);
	CHECK_EQ(dc_debug_live_entries(), 0);
}

#endif
