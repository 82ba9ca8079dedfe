// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree.c - the tree each file system's run starts from, made directly in
 * the source, and its removal.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/coherence/run.h"

static int mk(struct run *r, const char *rel, char type, const char *target, size_t len)
{
	char path[PATH_MAX];
	int fd;

	coh_at(path, r->src, rel);
	if (type == 'd') {
		if (mkdir(path, 0755) < 0)
			goto fail;
	} else if (type == 'l') {
		if (symlink(target, path) < 0)
			goto fail;
	} else if (target) {
		char from[PATH_MAX];

		coh_at(from, r->src, target);
		if (link(from, path) < 0)
			goto fail;
	} else {
		for (size_t i = 0; i < len; i++)
			r->buf[i] = (unsigned char)(' ' + coh_below(&r->rng, 95));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			goto fail;
		if (coh_write_all(fd, r->buf, len) < 0) {
			close(fd);
			goto fail;
		}
		close(fd);
	}
	if (coh_names_add(&r->names, rel, type) == 0)
		return 0;
	errno = ENOMEM;
fail:
	coh_put(r->error, sizeof(r->error), "cannot make %s: %s", path, strerror(errno));
	return -1;
}

static int mk_xattr(struct run *r, const char *rel)
{
	char path[PATH_MAX], v[32];
	int n = snprintf(v, sizeof(v), "v%u", coh_below(&r->rng, 1000000));

	coh_at(path, r->src, rel);
	if (lsetxattr(path, XATTR_NAME, v, (size_t)n, 0) == 0)
		return 0;
	coh_put(r->error, sizeof(r->error), "setxattr %s: %s", path, strerror(errno));
	return -1;
}

/*
 * Six top directories (never renamed or removed, so no change is made at
 * the root), four below each; in each of those eight files of up to
 * 1.5 KB, a symlink to a sibling, one to a cousin, a dangling one, a hard
 * link, xattrs on two files, a directory of four files and a symlink, and
 * an empty directory: 486 names.
 */
int coh_make_tree(struct run *r)
{
	char p[REL_MAX], q[REL_MAX];

	for (unsigned t = 0; t < 6; t++) {
		coh_put(p, sizeof(p), "d%u", t);
		if (mk(r, p, 'd', NULL, 0))
			return -1;
		for (unsigned s = 0; s < 4; s++) {
			coh_put(p, sizeof(p), "d%u/s%u", t, s);
			if (mk(r, p, 'd', NULL, 0))
				return -1;
			for (unsigned f = 0; f < 8; f++) {
				coh_put(q, sizeof(q), "%s/f%u", p, f);
				if (mk(r, q, 'f', NULL, coh_below(&r->rng, 1500)))
					return -1;
			}
			coh_put(q, sizeof(q), "%s/l0", p);
			if (mk(r, q, 'l', "f0", 0))
				return -1;
			coh_put(q, sizeof(q), "%s/l1", p);
			if (mk(r, q, 'l', "../s0/f1", 0))
				return -1;
			coh_put(q, sizeof(q), "%s/l2", p);
			if (mk(r, q, 'l', "nowhere", 0))
				return -1;
			{
				char f1[REL_MAX];

				coh_put(f1, sizeof(f1), "%s/f1", p);
				coh_put(q, sizeof(q), "%s/h0", p);
				if (mk(r, q, 'f', f1, 0))
					return -1;
			}
			for (unsigned f = 2; f < 4 && r->xattrs; f++) {
				coh_put(q, sizeof(q), "%s/f%u", p, f);
				if (mk_xattr(r, q))
					return -1;
			}
			coh_put(q, sizeof(q), "%s/t0", p);
			if (mk(r, q, 'd', NULL, 0))
				return -1;
			for (unsigned f = 0; f < 4; f++) {
				coh_put(q, sizeof(q), "%s/t0/g%u", p, f);
				if (mk(r, q, 'f', NULL, coh_below(&r->rng, 1500)))
					return -1;
			}
			coh_put(q, sizeof(q), "%s/t0/l0", p);
			if (mk(r, q, 'l', "../f2", 0))
				return -1;
			coh_put(q, sizeof(q), "%s/e0", p);
			if (mk(r, q, 'd', NULL, 0))
				return -1;
		}
	}
	r->entries = r->names.n;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if ((flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT)
		fprintf(stderr, "dcbench coherence: cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

/* The tree, directly in the source, never crossing into another mount. */
void coh_remove_tree(const char *root)
{
	nftw(root, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}
