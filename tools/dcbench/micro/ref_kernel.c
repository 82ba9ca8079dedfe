/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ref_kernel.c - the kernel reference: the scenario's tree materialized
 * on our tmpfs (mount.c), looked up with fstatat(AT_FDCWD, path) from its
 * root, so that the kernel's dcache answers what libdcache answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "micro/micro.h"

static int kernel_materialize(struct tree *t)
{
	const char *top = kfs_dir();
	char dir[600], path[PBUF];
	int dfd;

	if (t->kmade)
		return 0;
	if (t->kfailed || !top)
		return -1;
	snprintf(dir, sizeof(dir), "%s/%s", top, t->label);
	if (mkdir(dir, 0755) || (dfd = open(dir, O_PATH | O_DIRECTORY)) < 0) {
		fprintf(stderr, "dcbench micro: %s: %s\n", dir, strerror(errno));
		t->kfailed = true;
		return -1;
	}
	progress("materializing %s (%u entries) in %s", t->label, t->nn - 1, dir);
	for (uint32_t i = 1; i < t->nn; i++) {
		const struct tnode *x = &t->n[i];
		int r;

		if (tree_path(t, i, path, sizeof(path)) < 0)
			continue;
		if (x->type == 'd')
			r = mkdirat(dfd, path, 0755);
		else if (x->type == 'l')
			r = symlinkat(t->pool + x->target, dfd, path);
		else
			r = mknodat(dfd, path, S_IFREG | 0644, 0);
		if (r) {
			fprintf(stderr, "dcbench micro: creating %s/%s: %s\n", dir, path,
				strerror(errno));
			close(dfd);
			t->kfailed = true;
			return -1;
		}
	}
	close(dfd);
	t->kmade = true;
	return 0;
}

int kernel_enter(const struct impl *im)
{
	return chdir(im->kdir) ? -errno : 0;
}

int kernel_build(struct impl *im, const struct scen *s)
{
	if (s->id == SC_COLD) {
		im->skipped = true;
		snprintf(im->why, sizeof(im->why), "skipped for cold: a tree of %u "
			 "entries on tmpfs takes too long to create", s->t->nn - 1);
		return -1;
	}
	if (kernel_materialize(s->t)) {
		snprintf(im->why, sizeof(im->why), "no tree on a kernel file system: %s",
			 kfs_note());
		return -1;
	}
	snprintf(im->kdir, sizeof(im->kdir), "%s/%s", kfs_dir(), s->t->label);
	return 0;
}
