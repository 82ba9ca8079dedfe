/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memfs - an in-memory namespace behind the cache, changed the way a
 * file server changes its file system: the change first (dc_memfs_*),
 * then the cache told of it (dc_mkdir, dc_create, dc_rename, ...).
 *
 *   cc memfs.c $(pkg-config --cflags --libs dcache) -o memfs
 */
#define _XOPEN_SOURCE 700	/* S_IFDIR, S_IFREG */
#include <dcache.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int show(struct dc_cache *c, const char *path)
{
	struct dc_inode in;
	int err = dc_resolve(c, NULL, path, 0, &in);

	if (err)
		printf("%-16s %s\n", path, strerror(-err));
	else
		printf("%-16s inode %llu\n", path, (unsigned long long)in.ino);
	return err;
}

int main(void)
{
	struct dc_options o = { .mode = DC_MODE_RCU };
	struct dc_inode src, file;
	struct dc_dentry *root, *d;
	struct dc_memfs *fs;
	struct dc_cache *c;
	int err;

	if (dc_memfs_new(&fs) != 0)
		return 1;
	o.backend = dc_memfs_backend(fs);
	if (dc_cache_create(&o, &c) != 0)
		return 1;
	root = dc_root(c);

	/* mkdir src; creat src/main.c: the namespace, then the cache */
	err = dc_memfs_add(fs, DC_MEMFS_ROOT, "src", S_IFDIR | 0755, NULL, &src);
	if (!err)
		err = dc_mkdir(c, root, "src", &src);
	if (!err)
		err = dc_memfs_add(fs, src.ino, "main.c", S_IFREG | 0644, NULL, &file);
	if (!err && dc_walk(c, NULL, "src", 0, &d) == 0) {
		err = dc_create(c, d, "main.c", &file);
		dc_put(c, d);
	}
	if (err) {
		fprintf(stderr, "memfs: %s\n", strerror(-err));
		return 1;
	}
	show(c, "src/main.c");

	/* mv src lib: the whole subtree moves in the cache too */
	err = dc_memfs_rename(fs, DC_MEMFS_ROOT, "src", DC_MEMFS_ROOT, "lib", 0);
	if (!err)
		err = dc_rename(c, root, "src", root, "lib", 0);
	if (err) {
		fprintf(stderr, "memfs: rename: %s\n", strerror(-err));
		return 1;
	}
	show(c, "src/main.c");
	err = show(c, "lib/main.c");

	dc_put(c, root);
	dc_cache_destroy(c);
	dc_memfs_free(fs);
	return err ? 1 : 0;
}
