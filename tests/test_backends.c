// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_backends.c - the memfs and hostfs backends, driven directly through
 * their functions and ops tables, without a cache.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcache.h"

static unsigned long checks, failures;

#define CHECK(cond)							\
	do {								\
		checks++;						\
		if (!(cond)) {						\
			failures++;					\
			fprintf(stderr, "%s:%d: CHECK failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
		}							\
	} while (0)

/* CHECK(expr == want) that also prints what expr gave. */
#define CHECK_RC(expr, want)						\
	do {								\
		long long got_ = (expr), want_ = (want);		\
		checks++;						\
		if (got_ != want_) {					\
			failures++;					\
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s"	\
				" (got %lld, want %lld)\n", __FILE__,	\
				__LINE__, #expr, #want, got_, want_);	\
		}							\
	} while (0)

#define ROOT	DC_MEMFS_ROOT

/* ---- memfs ----------------------------------------------------------- */

static uint64_t mf_add(struct dc_memfs *fs, uint64_t dir, const char *name,
		       uint32_t mode, const char *target)
{
	struct dc_inode ino;
	int rc = dc_memfs_add(fs, dir, name, mode, target, &ino);

	CHECK_RC(rc, 0);
	return rc ? 0 : ino.ino;
}

/* The inode number name has in dir, or 0 if none. */
static uint64_t mf_ino(struct dc_memfs *fs, uint64_t dir, const char *name)
{
	struct dc_inode ino;

	return dc_memfs_lookup(fs, dir, name, &ino) ? 0 : ino.ino;
}

static int mf_getattr(struct dc_memfs *fs, uint64_t ino, uint32_t *mode)
{
	struct dc_backend b = dc_memfs_backend(fs);
	struct dc_inode i = { .ino = ino, .cookie = ino };
	int rc = b.ops->getattr(b.ctx, &i);

	if (!rc && mode)
		*mode = i.mode;
	return rc;
}

static void test_memfs_names(struct dc_memfs *fs)
{
	char n255[256], n256[257];
	struct dc_inode ino;

	memset(n255, 'x', 255);
	n255[255] = '\0';
	memset(n256, 'y', 256);
	n256[256] = '\0';

	CHECK_RC(dc_memfs_add(fs, ROOT, NULL, S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, "", S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, ".", S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, "..", S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, "a/b", S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, "/", S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, n256, S_IFREG, NULL, NULL),
		 -ENAMETOOLONG);
	CHECK_RC(dc_memfs_add(fs, ROOT, n255, S_IFREG, NULL, &ino), 0);
	CHECK_RC(dc_memfs_lookup(fs, ROOT, n255, NULL), 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, n255, 0), 0);
	CHECK_RC(dc_memfs_add(fs, ROOT, "...", S_IFREG, NULL, NULL), 0);
	CHECK_RC(dc_memfs_add(fs, ROOT, ".x", S_IFREG, NULL, NULL), 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "...", 0), 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, ".x", 0), 0);

	CHECK_RC(dc_memfs_lookup(fs, ROOT, NULL, &ino), -EINVAL);
	CHECK_RC(dc_memfs_lookup(fs, ROOT, "..", &ino), -EINVAL);
	CHECK_RC(dc_memfs_lookup(fs, ROOT, n256, &ino), -ENAMETOOLONG);
	CHECK_RC(dc_memfs_remove(fs, ROOT, ".", 0), -EINVAL);
	CHECK_RC(dc_memfs_remove(fs, ROOT, n256, 0), -ENAMETOOLONG);
	CHECK_RC(dc_memfs_link(fs, ROOT, ROOT, "a/b", NULL), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, ROOT, "", ROOT, "x", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, ROOT, "x", ROOT, "..", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, ROOT, "x", ROOT, n256, 0),
		 -ENAMETOOLONG);
	CHECK_RC(dc_memfs_count(fs), 0);
}

static void test_memfs_add(struct dc_memfs *fs)
{
	struct dc_inode ino;
	char longt[DC_PATH_MAX + 1];
	uint64_t f, d;

	CHECK_RC(dc_memfs_add(NULL, ROOT, "a", S_IFREG, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, ROOT, "f", S_IFREG | 0644, NULL, &ino), 0);
	f = ino.ino;
	CHECK(f > ROOT);
	CHECK_RC(ino.cookie, f);
	CHECK_RC(ino.mode, S_IFREG | 0644);
	CHECK_RC(dc_memfs_add(fs, ROOT, "f", S_IFREG, NULL, NULL), -EEXIST);
	CHECK_RC(dc_memfs_add(fs, ROOT, "f", S_IFDIR, NULL, NULL), -EEXIST);
	CHECK_RC(dc_memfs_add(fs, f, "x", S_IFREG, NULL, NULL), -ENOTDIR);
	CHECK_RC(dc_memfs_add(fs, 999999, "x", S_IFREG, NULL, NULL), -ENOENT);
	CHECK_RC(dc_memfs_add(fs, 0, "x", S_IFREG, NULL, NULL), -ENOENT);

	d = mf_add(fs, ROOT, "d", S_IFDIR | 0700, NULL);
	CHECK(d > f);
	CHECK_RC(dc_memfs_lookup(fs, ROOT, "d", &ino), 0);
	CHECK_RC(ino.mode, S_IFDIR | 0700);

	/* Types by mode; none means a regular file; nonsense is refused. */
	CHECK_RC(dc_memfs_add(fs, d, "plain", 0644, NULL, &ino), 0);
	CHECK_RC(ino.mode, S_IFREG | 0644);
	CHECK_RC(dc_memfs_add(fs, d, "fifo", S_IFIFO | 0600, NULL, &ino), 0);
	CHECK(S_ISFIFO(ino.mode));
	CHECK_RC(dc_memfs_add(fs, d, "chr", S_IFCHR | 0600, NULL, &ino), 0);
	CHECK(S_ISCHR(ino.mode));
	CHECK_RC(dc_memfs_add(fs, d, "blk", S_IFBLK, NULL, &ino), 0);
	CHECK(S_ISBLK(ino.mode));
	CHECK_RC(dc_memfs_add(fs, d, "sock", S_IFSOCK, NULL, &ino), 0);
	CHECK(S_ISSOCK(ino.mode));
	CHECK_RC(dc_memfs_add(fs, d, "bad", 0030000, NULL, NULL), -EINVAL);

	/* Symlinks need a target of sane length. */
	CHECK_RC(dc_memfs_add(fs, d, "l", S_IFLNK, NULL, NULL), -EINVAL);
	CHECK_RC(dc_memfs_add(fs, d, "l", S_IFLNK, "", NULL), -ENOENT);
	memset(longt, 'a', DC_PATH_MAX);
	longt[DC_PATH_MAX] = '\0';
	CHECK_RC(dc_memfs_add(fs, d, "l", S_IFLNK, longt, NULL),
		 -ENAMETOOLONG);
	longt[DC_PATH_MAX - 1] = '\0';
	CHECK_RC(dc_memfs_add(fs, d, "l", S_IFLNK | 0777, longt, &ino), 0);
	CHECK(S_ISLNK(ino.mode));
	CHECK_RC(dc_memfs_lookup(fs, d, "bad", NULL), -ENOENT);

	/* Each name counts; inode numbers only go up. */
	CHECK_RC(dc_memfs_count(fs), 8);
	CHECK_RC(dc_memfs_lookup(fs, f, "x", NULL), -ENOTDIR);
	CHECK_RC(dc_memfs_lookup(fs, 12345, "x", NULL), -ENOENT);
	CHECK_RC(dc_memfs_lookup(NULL, ROOT, "f", NULL), -EINVAL);
}

static void test_memfs_ops(struct dc_memfs *fs)
{
	struct dc_backend b = dc_memfs_backend(fs);
	const struct dc_backend_ops *ops = b.ops;
	struct dc_inode root, dir, out, tmp;
	char buf[64];
	uint64_t d, f, l;

	CHECK(ops && ops->root && ops->lookup && ops->getattr &&
	      ops->readlink && ops->release && ops->destroy);
	CHECK(b.ctx == fs);

	CHECK_RC(ops->root(b.ctx, &root), 0);
	CHECK_RC(root.ino, DC_MEMFS_ROOT);
	CHECK_RC(root.cookie, DC_MEMFS_ROOT);
	CHECK_RC(root.mode, S_IFDIR | 0755);

	d = mf_add(fs, ROOT, "opsdir", S_IFDIR | 0755, NULL);
	f = mf_add(fs, d, "abc", S_IFREG | 0600, NULL);
	l = mf_add(fs, d, "link", S_IFLNK | 0777, "../target");
	mf_add(fs, d, "a", S_IFREG, NULL);

	/* Names come with a length and no NUL. */
	CHECK_RC(ops->lookup(b.ctx, &root, "opsdirXYZ", 6, &dir), 0);
	CHECK_RC(dir.ino, d);
	CHECK_RC(dir.cookie, d);
	CHECK(S_ISDIR(dir.mode));
	CHECK_RC(ops->lookup(b.ctx, &dir, "abcdef", 3, &out), 0);
	CHECK_RC(out.ino, f);
	CHECK_RC(out.mode, S_IFREG | 0600);
	CHECK_RC(ops->lookup(b.ctx, &dir, "abcdef", 1, &out), 0);
	CHECK(out.ino != f && S_ISREG(out.mode));
	CHECK_RC(ops->lookup(b.ctx, &dir, "abcdef", 2, &out), -ENOENT);
	CHECK_RC(ops->lookup(b.ctx, &dir, "abcdef", 0, &out), -EINVAL);
	CHECK_RC(ops->lookup(b.ctx, &dir, "a\0b", 3, &out), -EINVAL);
	CHECK_RC(ops->lookup(b.ctx, &dir, "a/b", 3, &out), -EINVAL);
	CHECK_RC(ops->lookup(b.ctx, &dir, "..x", 2, &out), -EINVAL);
	CHECK_RC(ops->lookup(b.ctx, &dir, ".x", 1, &out), -EINVAL);
	{
		char big[300];

		memset(big, 'a', sizeof(big));
		CHECK_RC(ops->lookup(b.ctx, &dir, big, 256, &out),
			 -ENAMETOOLONG);
		CHECK_RC(ops->lookup(b.ctx, &dir, big, 255, &out), -ENOENT);
	}
	tmp = out;
	tmp.cookie = f;
	CHECK_RC(ops->lookup(b.ctx, &tmp, "x", 1, &out), -ENOTDIR);
	tmp.cookie = 777777;
	CHECK_RC(ops->lookup(b.ctx, &tmp, "x", 1, &out), -ENOENT);

	/* readlink: the whole target and its NUL, or nothing. */
	CHECK_RC(ops->lookup(b.ctx, &dir, "link", 4, &out), 0);
	CHECK_RC(out.ino, l);
	CHECK(S_ISLNK(out.mode));
	memset(buf, 'Z', sizeof(buf));
	CHECK_RC(ops->readlink(b.ctx, &out, buf, sizeof(buf)), 9);
	CHECK(strcmp(buf, "../target") == 0);
	CHECK_RC(ops->readlink(b.ctx, &out, buf, 10), 9);
	CHECK_RC(ops->readlink(b.ctx, &out, buf, 9), -ENAMETOOLONG);
	CHECK_RC(ops->readlink(b.ctx, &out, buf, 3), -ENAMETOOLONG);
	CHECK_RC(ops->readlink(b.ctx, &out, buf, 0), -EINVAL);
	CHECK_RC(ops->readlink(b.ctx, &dir, buf, sizeof(buf)), -EINVAL);

	/* getattr refreshes by cookie. */
	tmp = (struct dc_inode){ .cookie = f };
	CHECK_RC(ops->getattr(b.ctx, &tmp), 0);
	CHECK_RC(tmp.ino, f);
	CHECK_RC(tmp.mode, S_IFREG | 0600);
	tmp = (struct dc_inode){ .cookie = 0 };
	CHECK_RC(ops->getattr(b.ctx, &tmp), -ESTALE);
	tmp = (struct dc_inode){ .cookie = UINT64_MAX };
	CHECK_RC(ops->getattr(b.ctx, &tmp), -ESTALE);

	/* Removed: the cookie dangles harmlessly. */
	CHECK_RC(dc_memfs_remove(fs, d, "link", 0), 0);
	CHECK_RC(ops->readlink(b.ctx, &out, buf, sizeof(buf)), -ESTALE);
	tmp = (struct dc_inode){ .cookie = l };
	CHECK_RC(ops->getattr(b.ctx, &tmp), -ESTALE);
	CHECK_RC(dc_memfs_remove(fs, d, "abc", 0), 0);
	CHECK_RC(dc_memfs_remove(fs, d, "a", 0), 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "opsdir", 1), 0);
	CHECK_RC(ops->lookup(b.ctx, &dir, "a", 1, &out), -ENOENT);
	tmp = dir;
	CHECK_RC(ops->getattr(b.ctx, &tmp), -ESTALE);
	/* A new name never reuses a number. */
	CHECK(mf_add(fs, ROOT, "opsdir", S_IFDIR, NULL) > l);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "opsdir", 1), 0);

	/* release and destroy leave the memfs alone. */
	ops->release(b.ctx, &root);
	ops->destroy(b.ctx);
	CHECK_RC(ops->root(b.ctx, &root), 0);
	CHECK_RC(root.ino, DC_MEMFS_ROOT);
}

static void test_memfs_link_remove(struct dc_memfs *fs)
{
	struct dc_inode ino;
	uint64_t d, e, f, base = dc_memfs_count(fs);
	uint32_t mode;

	d = mf_add(fs, ROOT, "ld", S_IFDIR, NULL);
	e = mf_add(fs, d, "sub", S_IFDIR, NULL);
	f = mf_add(fs, d, "file", S_IFREG | 0640, NULL);

	CHECK_RC(dc_memfs_link(NULL, f, ROOT, "x", NULL), -EINVAL);
	CHECK_RC(dc_memfs_link(fs, d, ROOT, "x", NULL), -EPERM);
	CHECK_RC(dc_memfs_link(fs, ROOT, ROOT, "x", NULL), -EPERM);
	CHECK_RC(dc_memfs_link(fs, 999999, ROOT, "x", NULL), -ENOENT);
	CHECK_RC(dc_memfs_link(fs, f, 999999, "x", NULL), -ENOENT);
	CHECK_RC(dc_memfs_link(fs, f, f, "x", NULL), -ENOTDIR);
	CHECK_RC(dc_memfs_link(fs, f, d, "sub", NULL), -EEXIST);
	CHECK_RC(dc_memfs_link(fs, f, d, "file", NULL), -EEXIST);
	CHECK_RC(dc_memfs_link(fs, f, e, "f2", &ino), 0);
	CHECK_RC(ino.ino, f);
	CHECK_RC(ino.mode, S_IFREG | 0640);
	CHECK_RC(dc_memfs_link(fs, f, ROOT, "f3", NULL), 0);
	CHECK_RC(mf_ino(fs, e, "f2"), f);
	CHECK_RC(dc_memfs_count(fs), base + 5);

	/* Remove: type and emptiness rules. */
	CHECK_RC(dc_memfs_remove(NULL, d, "file", 0), -EINVAL);
	CHECK_RC(dc_memfs_remove(fs, d, "file", 1), -ENOTDIR);
	CHECK_RC(dc_memfs_remove(fs, d, "sub", 0), -EISDIR);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "ld", 0), -EISDIR);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "ld", 1), -ENOTEMPTY);
	CHECK_RC(dc_memfs_remove(fs, d, "sub", 1), -ENOTEMPTY);
	CHECK_RC(dc_memfs_remove(fs, d, "nope", 0), -ENOENT);
	CHECK_RC(dc_memfs_remove(fs, 999999, "file", 0), -ENOENT);
	CHECK_RC(dc_memfs_remove(fs, f, "file", 0), -ENOTDIR);

	/* The inode lives while a name does. */
	CHECK_RC(dc_memfs_remove(fs, d, "file", 0), 0);
	CHECK_RC(mf_getattr(fs, f, &mode), 0);
	CHECK_RC(mode, S_IFREG | 0640);
	CHECK_RC(dc_memfs_remove(fs, e, "f2", 0), 0);
	CHECK_RC(mf_getattr(fs, f, NULL), 0);
	CHECK_RC(dc_memfs_link(fs, f, d, "back", NULL), 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "f3", 0), 0);
	CHECK_RC(dc_memfs_remove(fs, d, "back", 0), 0);
	CHECK_RC(mf_getattr(fs, f, NULL), -ESTALE);
	CHECK_RC(dc_memfs_link(fs, f, d, "again", NULL), -ENOENT);

	CHECK_RC(dc_memfs_remove(fs, d, "sub", 1), 0);
	CHECK_RC(dc_memfs_add(fs, e, "x", S_IFREG, NULL, NULL), -ENOENT);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "ld", 1), 0);
	CHECK_RC(mf_getattr(fs, d, NULL), -ESTALE);
	CHECK_RC(dc_memfs_count(fs), base);
}

static void test_memfs_rename(struct dc_memfs *fs)
{
	uint64_t r, a, b, c, f, g, h, e1, e2, base;
	uint64_t start = dc_memfs_count(fs);
	uint32_t mode;

	r = mf_add(fs, ROOT, "rn", S_IFDIR, NULL);
	base = dc_memfs_count(fs);
	a = mf_add(fs, r, "a", S_IFDIR, NULL);		/* rn/a */
	b = mf_add(fs, a, "b", S_IFDIR, NULL);		/* rn/a/b */
	c = mf_add(fs, r, "c", S_IFDIR, NULL);		/* rn/c */
	f = mf_add(fs, b, "f", S_IFREG, NULL);		/* rn/a/b/f */
	g = mf_add(fs, r, "g", S_IFREG, NULL);		/* rn/g */
	e1 = mf_add(fs, r, "e1", S_IFDIR, NULL);	/* rn/e1, empty */

	CHECK_RC(dc_memfs_rename(NULL, r, "g", r, "x", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "g", r, "x",
				 DC_RENAME_NOREPLACE | DC_RENAME_EXCHANGE),
		 -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "g", r, "x", 0x4), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "nope", r, "x", 0), -ENOENT);
	CHECK_RC(dc_memfs_rename(fs, 999999, "g", r, "x", 0), -ENOENT);
	CHECK_RC(dc_memfs_rename(fs, r, "g", 999999, "x", 0), -ENOENT);
	CHECK_RC(dc_memfs_rename(fs, r, "g", g, "x", 0), -ENOTDIR);
	CHECK_RC(dc_memfs_rename(fs, g, "x", r, "x", 0), -ENOTDIR);

	/* Onto itself: nothing happens (NOREPLACE still sees a target). */
	CHECK_RC(dc_memfs_rename(fs, r, "g", r, "g", 0), 0);
	CHECK_RC(dc_memfs_rename(fs, r, "a", r, "a", 0), 0);
	CHECK_RC(dc_memfs_rename(fs, r, "g", r, "g", DC_RENAME_EXCHANGE), 0);
	CHECK_RC(dc_memfs_rename(fs, r, "g", r, "g", DC_RENAME_NOREPLACE),
		 -EEXIST);
	CHECK_RC(mf_ino(fs, r, "g"), g);

	/* Plain moves, within and across directories. */
	CHECK_RC(dc_memfs_rename(fs, r, "g", r, "g2", 0), 0);
	CHECK_RC(mf_ino(fs, r, "g"), 0);
	CHECK_RC(mf_ino(fs, r, "g2"), g);
	CHECK_RC(dc_memfs_rename(fs, r, "g2", c, "g", DC_RENAME_NOREPLACE), 0);
	CHECK_RC(mf_ino(fs, c, "g"), g);
	CHECK_RC(dc_memfs_remove(fs, r, "c", 1), -ENOTEMPTY);
	CHECK_RC(dc_memfs_count(fs), base + 6);

	/* A directory cannot go into its own subtree. */
	CHECK_RC(dc_memfs_rename(fs, r, "a", a, "x", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "a", b, "x", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "a", b, "f", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "a", b, "x", DC_RENAME_NOREPLACE),
		 -EINVAL);
	/* ...nor onto its own ancestor. */
	CHECK_RC(dc_memfs_rename(fs, b, "f", r, "a", 0), -ENOTEMPTY);
	CHECK_RC(dc_memfs_rename(fs, a, "b", r, "a", 0), -ENOTEMPTY);
	CHECK_RC(dc_memfs_rename(fs, b, "f", r, "a", DC_RENAME_EXCHANGE),
		 -EINVAL);

	/* Moving a directory moves its subtree check with it. */
	CHECK_RC(dc_memfs_rename(fs, a, "b", c, "b", 0), 0);	/* rn/c/b */
	CHECK_RC(mf_ino(fs, c, "b"), b);
	CHECK_RC(dc_memfs_rename(fs, r, "c", b, "c", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, r, "a", b, "a", 0), 0);	/* rn/c/b/a */
	CHECK_RC(dc_memfs_rename(fs, r, "c", a, "c", 0), -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, b, "a", r, "a", 0), 0);	/* back */

	/* Type rules for replacing. */
	h = mf_add(fs, r, "h", S_IFREG, NULL);
	CHECK_RC(dc_memfs_rename(fs, r, "h", r, "a", 0), -EISDIR);
	CHECK_RC(dc_memfs_rename(fs, r, "a", r, "h", 0), -ENOTDIR);
	CHECK_RC(dc_memfs_rename(fs, r, "a", r, "c", 0), -ENOTEMPTY);
	CHECK_RC(dc_memfs_rename(fs, r, "h", r, "e1", 0), -EISDIR);
	CHECK_RC(dc_memfs_rename(fs, r, "h", c, "g", DC_RENAME_NOREPLACE),
		 -EEXIST);
	CHECK_RC(dc_memfs_rename(fs, r, "a", r, "e1", DC_RENAME_NOREPLACE),
		 -EEXIST);

	/* Replace an empty directory: the old one dies. */
	base = dc_memfs_count(fs);
	CHECK_RC(dc_memfs_rename(fs, r, "a", r, "e1", 0), 0);
	CHECK_RC(mf_ino(fs, r, "e1"), a);
	CHECK_RC(mf_ino(fs, r, "a"), 0);
	CHECK_RC(mf_getattr(fs, e1, NULL), -ESTALE);
	CHECK_RC(dc_memfs_count(fs), base - 1);
	/* Replace a file: same. */
	CHECK_RC(dc_memfs_rename(fs, c, "g", r, "h", 0), 0);
	CHECK_RC(mf_ino(fs, r, "h"), g);
	CHECK_RC(mf_getattr(fs, h, NULL), -ESTALE);
	CHECK_RC(dc_memfs_count(fs), base - 2);

	/* Two names of one inode: POSIX says do nothing. */
	CHECK_RC(dc_memfs_link(fs, g, r, "hl", NULL), 0);
	CHECK_RC(dc_memfs_rename(fs, r, "h", r, "hl", 0), 0);
	CHECK_RC(mf_ino(fs, r, "h"), g);
	CHECK_RC(mf_ino(fs, r, "hl"), g);
	CHECK_RC(dc_memfs_remove(fs, r, "hl", 0), 0);

	/* Exchange: both must exist; parents follow the directories. */
	e2 = mf_add(fs, r, "e2", S_IFDIR, NULL);
	CHECK_RC(dc_memfs_rename(fs, r, "h", r, "none", DC_RENAME_EXCHANGE),
		 -ENOENT);
	CHECK_RC(dc_memfs_rename(fs, r, "none", r, "h", DC_RENAME_EXCHANGE),
		 -ENOENT);
	/* rn/e1 is a (empty), rn/c/b is b (holding f): swap them. */
	CHECK_RC(dc_memfs_rename(fs, r, "e1", c, "b", DC_RENAME_EXCHANGE), 0);
	CHECK_RC(mf_ino(fs, r, "e1"), b);
	CHECK_RC(mf_ino(fs, c, "b"), a);
	CHECK_RC(dc_memfs_rename(fs, r, "e1", e2, "x", 0), 0);	/* b to e2/x */
	CHECK_RC(mf_ino(fs, e2, "x"), b);
	/* b's parent is e2 now: e2 cannot go under b. */
	CHECK_RC(dc_memfs_rename(fs, r, "e2", b, "e2", 0), -EINVAL);
	/* a's parent is c now: c cannot go under a. */
	CHECK_RC(dc_memfs_rename(fs, r, "c", a, "c", 0), -EINVAL);
	/* A file and a directory swap, types and all. */
	CHECK_RC(dc_memfs_rename(fs, r, "h", r, "e2", DC_RENAME_EXCHANGE), 0);
	CHECK_RC(mf_ino(fs, r, "h"), e2);
	CHECK_RC(mf_ino(fs, r, "e2"), g);
	CHECK_RC(mf_getattr(fs, e2, &mode), 0);
	CHECK(S_ISDIR(mode));
	CHECK_RC(dc_memfs_lookup(fs, r, "h", NULL), 0);
	CHECK_RC(mf_ino(fs, e2, "x"), b);
	/* Exchange a directory into its own subtree. */
	CHECK_RC(dc_memfs_rename(fs, r, "h", b, "f", DC_RENAME_EXCHANGE),
		 -EINVAL);
	CHECK_RC(dc_memfs_rename(fs, b, "f", r, "h", DC_RENAME_EXCHANGE),
		 -EINVAL);

	/* Tear down: rn/h(e2)/x(b)/f, rn/c/b(a), rn/e2(g). */
	CHECK_RC(dc_memfs_remove(fs, b, "f", 0), 0);
	CHECK_RC(mf_getattr(fs, f, NULL), -ESTALE);
	CHECK_RC(dc_memfs_remove(fs, e2, "x", 1), 0);
	CHECK_RC(dc_memfs_remove(fs, r, "h", 1), 0);
	CHECK_RC(dc_memfs_remove(fs, c, "b", 1), 0);
	CHECK_RC(dc_memfs_remove(fs, r, "c", 1), 0);
	CHECK_RC(dc_memfs_remove(fs, r, "e2", 0), 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "rn", 1), 0);
	CHECK_RC(dc_memfs_count(fs), start);
}

#define FILL_DIRS	100
#define FILL_PER_DIR	2000

static void test_memfs_fill(void)
{
	struct dc_backend b;
	struct dc_memfs *fs;
	struct dc_inode dir, out;
	uint64_t dirs[FILL_DIRS];
	unsigned long bad = 0;
	char name[32];
	int i, j, len;

	CHECK_RC(dc_memfs_new(&fs), 0);
	if (!fs)
		return;
	b = dc_memfs_backend(fs);
	for (i = 0; i < FILL_DIRS; i++) {
		snprintf(name, sizeof(name), "dir%d", i);
		dirs[i] = mf_add(fs, ROOT, name, S_IFDIR | 0755, NULL);
		for (j = 0; j < FILL_PER_DIR; j++) {
			snprintf(name, sizeof(name), "f%d", j);
			if (dc_memfs_add(fs, dirs[i], name, S_IFREG | 0644,
					 NULL, NULL))
				bad++;
		}
	}
	CHECK_RC(bad, 0);
	CHECK_RC(dc_memfs_count(fs), FILL_DIRS * (FILL_PER_DIR + 1));

	/* Every name through the ops, and inode numbers all distinct. */
	bad = 0;
	for (i = 0; i < FILL_DIRS; i++) {
		dir = (struct dc_inode){ .ino = dirs[i], .cookie = dirs[i],
					 .mode = S_IFDIR | 0755 };
		for (j = 0; j < FILL_PER_DIR; j++) {
			len = snprintf(name, sizeof(name), "f%d", j);
			if (b.ops->lookup(b.ctx, &dir, name, len, &out) ||
			    out.ino != dirs[i] + 1 + (uint64_t)j ||
			    !S_ISREG(out.mode))
				bad++;
			len = snprintf(name, sizeof(name), "g%d", j);
			if (b.ops->lookup(b.ctx, &dir, name, len, &out) !=
			    -ENOENT)
				bad++;
		}
	}
	CHECK_RC(bad, 0);

	/* Remove every other name; the rest stay findable. */
	bad = 0;
	for (i = 0; i < FILL_DIRS; i++)
		for (j = 0; j < FILL_PER_DIR; j += 2) {
			snprintf(name, sizeof(name), "f%d", j);
			if (dc_memfs_remove(fs, dirs[i], name, 0))
				bad++;
		}
	CHECK_RC(bad, 0);
	CHECK_RC(dc_memfs_count(fs), FILL_DIRS * (FILL_PER_DIR / 2 + 1));
	bad = 0;
	for (i = 0; i < FILL_DIRS; i++)
		for (j = 0; j < FILL_PER_DIR; j++) {
			snprintf(name, sizeof(name), "f%d", j);
			if ((dc_memfs_lookup(fs, dirs[i], name, NULL) == 0) !=
			    ((j & 1) != 0))
				bad++;
		}
	CHECK_RC(bad, 0);
	CHECK_RC(dc_memfs_remove(fs, ROOT, "dir0", 1), -ENOTEMPTY);
	/* Freed with names and symlinks still in it: no leaks. */
	mf_add(fs, dirs[1], "sl", S_IFLNK | 0777, "/some/where");
	dc_memfs_free(fs);
}

/* Readers and a renamer at once: the lock keeps answers whole. */
struct race {
	struct dc_memfs *fs;
	uint64_t dir;
	int stop, outlasted;
	unsigned long bad;
};

/* A memfs holding d/a, and nt threads running fn on r: how many started
 * (0 without the memfs). */
static int race_start(struct race *r, void *(*fn)(void *), pthread_t *t, int nt)
{
	int n = 0;

	CHECK_RC(dc_memfs_new(&r->fs), 0);
	if (!r->fs)
		return 0;
	r->dir = mf_add(r->fs, ROOT, "d", S_IFDIR, NULL);
	mf_add(r->fs, r->dir, "a", S_IFREG, NULL);
	while (n < nt && pthread_create(&t[n], NULL, fn, r) == 0)
		n++;
	CHECK_RC(n, nt);
	return n;
}

static void *race_reader(void *arg)
{
	struct race *r = arg;
	struct dc_inode out;
	unsigned long bad = 0;
	int i;

	for (i = 0; i < 20000; i++) {
		int a = dc_memfs_lookup(r->fs, r->dir, "a", &out);
		int b = dc_memfs_lookup(r->fs, r->dir, "b", &out);

		/* Each answer is whole: found a file, or -ENOENT. */
		if ((a && a != -ENOENT) || (b && b != -ENOENT))
			bad++;
		if (!a && !S_ISREG(out.mode))
			bad++;
	}
	__atomic_add_fetch(&r->bad, bad, __ATOMIC_RELAXED);
	return NULL;
}

static void test_memfs_threads(void)
{
	struct race r = { 0 };
	pthread_t t[2];
	unsigned long bad = 0;
	int i, n = race_start(&r, race_reader, t, 2);

	if (!r.fs)
		return;
	for (i = 0; i < 5000; i++) {
		if (dc_memfs_rename(r.fs, r.dir, (i & 1) ? "b" : "a",
				    r.dir, (i & 1) ? "a" : "b", 0))
			bad++;
		if (dc_memfs_add(r.fs, r.dir, "tmp", S_IFREG, NULL, NULL) ||
		    dc_memfs_remove(r.fs, r.dir, "tmp", 0))
			bad++;
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	CHECK_RC(bad, 0);
	CHECK_RC(r.bad, 0);
	CHECK_RC(dc_memfs_count(r.fs), 2);
	dc_memfs_free(r.fs);
}

/*
 * A writer is not starved by readers: eight threads look a name up
 * without pause while another renames it to and fro.  Under a lock that
 * lets readers in past a waiting writer, the renames wait for as long as
 * the lookups go on.  Each reader stops after 2,000,000 lookups and says
 * so: a fair share of the lock lets the 2,000 renames end after a few
 * thousand lookups a reader (a count of operations, not of time, so a
 * slow machine or a sanitizer changes nothing).
 */
#define HAMMER_LOOKUPS	2000000
static void *hammer_reader(void *arg)
{
	struct race *h = arg;
	unsigned long i;

	/* relaxed: stop only asks for an end; the join orders the rest */
	for (i = 0; !__atomic_load_n(&h->stop, __ATOMIC_RELAXED); i++) {
		if (i == HAMMER_LOOKUPS) {
			__atomic_store_n(&h->outlasted, 1, __ATOMIC_RELAXED);
			break;
		}
		dc_memfs_lookup(h->fs, h->dir, "a", NULL);
	}
	return NULL;
}

static void test_memfs_writer_progress(void)
{
	struct race h = { 0 };
	pthread_t t[8];
	unsigned long bad = 0;
	int i, n = race_start(&h, hammer_reader, t, 8);

	if (!h.fs)
		return;
	for (i = 0; i < 2000; i++)
		bad += dc_memfs_rename(h.fs, h.dir, (i & 1) ? "b" : "a",
				       h.dir, (i & 1) ? "a" : "b", 0) != 0;
	__atomic_store_n(&h.stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	CHECK_RC(bad, 0);
	CHECK_RC(h.outlasted, 0);	/* the renames ended before the readers */
	dc_memfs_free(h.fs);
}

static void test_memfs(void)
{
	struct dc_memfs *fs = NULL;

	CHECK_RC(dc_memfs_new(NULL), -EINVAL);
	CHECK_RC(dc_memfs_new(&fs), 0);
	CHECK(fs != NULL);
	if (!fs)
		return;
	CHECK_RC(dc_memfs_count(fs), 0);
	CHECK_RC(dc_memfs_count(NULL), 0);
	test_memfs_names(fs);
	test_memfs_add(fs);
	test_memfs_ops(fs);
	test_memfs_link_remove(fs);
	test_memfs_rename(fs);
	dc_memfs_free(fs);
	dc_memfs_free(NULL);

	CHECK_RC(dc_memfs_new(&fs), 0);
	if (fs)
		test_memfs_rename(fs);	/* from a fresh table, too */
	dc_memfs_free(fs);

	test_memfs_fill();
	test_memfs_threads();
	test_memfs_writer_progress();
}

/* ---- hostfs ---------------------------------------------------------- */

static char tmpdir[] = "/tmp/test_backends.XXXXXX";

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n++;
	closedir(d);
	return n;
}

static int rm_one(const char *path, const struct stat *st, int type,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_tree(const char *path)
{
	CHECK_RC(nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static void put_file(const char *rel)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static void put_dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	CHECK_RC(mkdir(path, 0755), 0);
}

static void put_link(const char *target, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	CHECK_RC(symlink(target, path), 0);
}

static uint64_t lstat_ino(const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	return lstat(path, &st) ? 0 : st.st_ino;
}

/* Look a NUL-terminated name up through the ops. */
static int hf_lookup(struct dc_backend *b, const struct dc_inode *dir,
		     const char *name, struct dc_inode *out)
{
	return b->ops->lookup(b->ctx, dir, name, strlen(name), out);
}

static void test_hostfs_create(void)
{
	struct dc_backend b;
	char path[512];

	CHECK_RC(dc_hostfs_backend(NULL, &b), -EINVAL);
	CHECK_RC(dc_hostfs_backend(tmpdir, NULL), -EINVAL);
	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	CHECK_RC(dc_hostfs_backend(path, &b), -ENOENT);
	snprintf(path, sizeof(path), "%s/f", tmpdir);
	CHECK_RC(dc_hostfs_backend(path, &b), -ENOTDIR);
	/* The root path itself may go through a symlink: the caller's. */
	snprintf(path, sizeof(path), "%s/rel", tmpdir);
	CHECK_RC(dc_hostfs_backend(path, &b), 0);
	b.ops->destroy(b.ctx);
}

static void test_hostfs_lookup(struct dc_backend *b)
{
	const struct dc_backend_ops *ops = b->ops;
	struct dc_inode root, d, f, g, p, abs, up, rel, spoof, tmp;
	char buf[256], n256[257];
	struct stat st;

	CHECK_RC(ops->root(b->ctx, &root), 0);
	CHECK(S_ISDIR(root.mode));
	CHECK_RC(stat(tmpdir, &st), 0);
	CHECK_RC(root.ino, st.st_ino);
	CHECK_RC(root.gen, dc_hostfs_gen(st.st_dev));	/* the device */
	CHECK_RC(root.cookie, UINT64_MAX);
	tmp = root;
	CHECK_RC(ops->getattr(b->ctx, &tmp), 0);
	CHECK_RC(tmp.ino, st.st_ino);

	/* A regular file: no descriptor kept, so no getattr. */
	CHECK_RC(hf_lookup(b, &root, "f", &f), 0);
	CHECK(S_ISREG(f.mode));
	CHECK_RC(f.ino, lstat_ino("f"));
	CHECK_RC(f.cookie, 0);
	CHECK_RC(f.gen, dc_hostfs_gen(st.st_dev));
	CHECK_RC(ops->getattr(b->ctx, &f), -ESTALE);
	CHECK_RC(hf_lookup(b, &f, "x", &tmp), -ENOTDIR);
	CHECK_RC(hf_lookup(b, &root, "p", &p), 0);
	CHECK(S_ISFIFO(p.mode));
	CHECK_RC(p.cookie, 0);

	/* A directory: its descriptor is the cookie. */
	CHECK_RC(hf_lookup(b, &root, "d", &d), 0);
	CHECK(S_ISDIR(d.mode));
	CHECK_RC(d.ino, lstat_ino("d"));
	CHECK(d.cookie != 0 && d.cookie != UINT64_MAX);
	tmp = d;
	CHECK_RC(ops->getattr(b->ctx, &tmp), 0);
	CHECK_RC(tmp.ino, d.ino);
	CHECK_RC(tmp.cookie, d.cookie);
	CHECK_RC(hf_lookup(b, &d, "g", &g), 0);
	CHECK_RC(g.ino, lstat_ino("d/g"));
	CHECK_RC(hf_lookup(b, &d, "missing", &tmp), -ENOENT);
	CHECK_RC(hf_lookup(b, &root, "...", &tmp), -ENOENT);
	/* Length, not NUL, ends the name. */
	CHECK_RC(ops->lookup(b->ctx, &root, "dzzz", 1, &tmp), 0);
	CHECK_RC(tmp.ino, d.ino);
	ops->release(b->ctx, &tmp);

	/* Nothing that would make the host walk more than one step. */
	CHECK_RC(hf_lookup(b, &d, "..", &tmp), -EINVAL);
	CHECK_RC(hf_lookup(b, &root, "..", &tmp), -EINVAL);
	CHECK_RC(hf_lookup(b, &d, ".", &tmp), -EINVAL);
	CHECK_RC(hf_lookup(b, &root, "d/g", &tmp), -EINVAL);
	CHECK_RC(hf_lookup(b, &root, "/etc", &tmp), -EINVAL);
	CHECK_RC(hf_lookup(b, &root, "d/", &tmp), -EINVAL);
	CHECK_RC(ops->lookup(b->ctx, &root, "", 0, &tmp), -EINVAL);
	CHECK_RC(ops->lookup(b->ctx, &root, "d\0g", 3, &tmp), -EINVAL);
	CHECK_RC(ops->lookup(b->ctx, &root, NULL, 1, &tmp), -EINVAL);
	memset(n256, 'n', 256);
	n256[256] = '\0';
	CHECK_RC(hf_lookup(b, &root, n256, &tmp), -ENAMETOOLONG);
	n256[255] = '\0';
	CHECK_RC(hf_lookup(b, &root, n256, &tmp), 0);
	CHECK(S_ISREG(tmp.mode));

	/* Symlinks come back as themselves, never followed. */
	CHECK_RC(hf_lookup(b, &root, "abs", &abs), 0);
	CHECK(S_ISLNK(abs.mode));
	CHECK_RC(abs.ino, lstat_ino("abs"));
	CHECK(abs.cookie != 0);
	CHECK_RC(stat("/etc", &st), 0);
	CHECK(abs.ino != st.st_ino);
	CHECK_RC(ops->readlink(b->ctx, &abs, buf, sizeof(buf)), 4);
	CHECK(strcmp(buf, "/etc") == 0);
	CHECK_RC(ops->readlink(b->ctx, &abs, buf, 5), 4);
	CHECK_RC(ops->readlink(b->ctx, &abs, buf, 4), -ENAMETOOLONG);
	CHECK_RC(ops->readlink(b->ctx, &abs, buf, 2), -ENAMETOOLONG);
	CHECK_RC(ops->readlink(b->ctx, &abs, buf, 0), -EINVAL);
	tmp = abs;
	CHECK_RC(ops->getattr(b->ctx, &tmp), 0);
	CHECK(S_ISLNK(tmp.mode));
	CHECK_RC(tmp.ino, abs.ino);
	/* Not a directory, so no lookup through it... */
	CHECK_RC(hf_lookup(b, &abs, "passwd", &tmp), -ENOTDIR);
	/* ...even when the caller claims it is one. */
	spoof = abs;
	spoof.mode = S_IFDIR | 0755;
	CHECK_RC(hf_lookup(b, &spoof, "passwd", &tmp), -ENOTDIR);

	CHECK_RC(hf_lookup(b, &d, "up", &up), 0);
	CHECK(S_ISLNK(up.mode));
	CHECK_RC(up.ino, lstat_ino("d/up"));
	CHECK_RC(ops->readlink(b->ctx, &up, buf, sizeof(buf)), 5);
	CHECK(strcmp(buf, "../..") == 0);
	spoof = up;
	spoof.mode = S_IFDIR;
	CHECK_RC(hf_lookup(b, &spoof, "tmp", &tmp), -ENOTDIR);

	CHECK_RC(hf_lookup(b, &root, "rel", &rel), 0);
	CHECK(S_ISLNK(rel.mode));
	CHECK_RC(ops->readlink(b->ctx, &rel, buf, sizeof(buf)), 1);
	CHECK(strcmp(buf, "d") == 0);

	/* readlink of what is not a symlink, or has no descriptor. */
	CHECK_RC(ops->readlink(b->ctx, &d, buf, sizeof(buf)), -EINVAL);
	CHECK_RC(ops->readlink(b->ctx, &f, buf, sizeof(buf)), -EINVAL);
	tmp = f;
	tmp.mode = S_IFLNK | 0777;
	CHECK_RC(ops->readlink(b->ctx, &tmp, buf, sizeof(buf)), -ESTALE);
	tmp = (struct dc_inode){ .mode = S_IFDIR, .cookie = 0 };
	CHECK_RC(hf_lookup(b, &tmp, "f", &tmp), -ESTALE);

	/* The O_PATH descriptor answers for the inode after its name goes. */
	snprintf(buf, sizeof(buf), "%s/d/g", tmpdir);
	CHECK_RC(rmdir(buf), 0);
	tmp = g;
	CHECK_RC(ops->getattr(b->ctx, &tmp), 0);
	CHECK_RC(tmp.ino, g.ino);
	CHECK_RC(hf_lookup(b, &d, "g", &tmp), -ENOENT);

	/* Releasing files (no fd) and the root (the context's) is a no-op. */
	ops->release(b->ctx, &f);
	ops->release(b->ctx, &p);
	ops->release(b->ctx, &root);
	ops->release(b->ctx, &root);
	CHECK_RC(hf_lookup(b, &root, "f", &tmp), 0);
	ops->release(b->ctx, &g);
	ops->release(b->ctx, &abs);
	ops->release(b->ctx, &up);
	ops->release(b->ctx, &rel);
	ops->release(b->ctx, &d);
}

static void test_hostfs(void)
{
	struct dc_backend b;
	int fds;

	if (!mkdtemp(tmpdir)) {
		CHECK(!"mkdtemp");
		return;
	}
	put_file("f");
	put_dir("d");
	put_dir("d/g");
	put_file("d/g/inner");
	put_link("/etc", "abs");
	put_link("../..", "d/up");
	put_link("d", "rel");
	{
		char path[512];

		snprintf(path, sizeof(path), "%s/p", tmpdir);
		CHECK_RC(mkfifo(path, 0600), 0);
		memset(path, 'n', 255);
		path[255] = '\0';
		put_file(path);
	}
	put_file("d/g/x");
	{
		char path[512];

		/* Emptied so that the test can rmdir it under a live fd. */
		snprintf(path, sizeof(path), "%s/d/g/inner", tmpdir);
		CHECK_RC(unlink(path), 0);
		snprintf(path, sizeof(path), "%s/d/g/x", tmpdir);
		CHECK_RC(unlink(path), 0);
	}

	test_hostfs_create();

	fds = count_fds();
	CHECK_RC(dc_hostfs_backend(tmpdir, &b), 0);
	if (b.ops) {
		test_hostfs_lookup(&b);
		b.ops->destroy(b.ctx);
	}
	/* Every descriptor handed out came back. */
	CHECK_RC(count_fds(), fds);

	rm_tree(tmpdir);
	CHECK(access(tmpdir, F_OK) != 0);
}

int main(void)
{
	test_memfs();
	test_hostfs();
	printf("test_backends: %lu checks, %lu failed\n", checks, failures);
	return failures ? 1 : 0;
}
