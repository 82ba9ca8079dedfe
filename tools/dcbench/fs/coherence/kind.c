// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kind.c - one file system's run: a fresh tree in the source, mounted,
 * read through the mount until it is all cached, changed, unmounted and
 * removed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/clock.h"
#include "cli.h"
#include "fs/fsmount.h"
#include "fs/coherence/run.h"

static int mount_kind(struct run *r, struct fsmount *m)
{
	const struct setup *s = r->s;
	bool peer = !strncmp(r->kind, "passthrough_ll", 14);
	double to = peer ? s->peer_to : -1;
	/* the example serves xattrs only when asked to */
	const char *extra = peer ? "-o xattr" : fsm_kind_dcfs(r->kind) ? s->dcfs_args : NULL;

	return fsm_start(m, r->kind, s->source, s->mount, to, to, NULL, s->work, extra);
}

/* Do xattrs work in the source, and then through the mount? */
static bool source_xattrs(const struct run *r)
{
	if (lsetxattr(r->src, XATTR_NAME, "x", 1, 0) < 0)
		return false;
	lremovexattr(r->src, XATTR_NAME);
	return true;
}

static bool mount_xattrs(const struct run *r)
{
	char path[PATH_MAX], v[XATTR_MAX];

	coh_at(path, r->mnt, "d0/s0/f2");
	return lgetxattr(path, XATTR_NAME, v, sizeof(v)) > 0;
}


void coh_run_kind(struct run *r)
{
	const struct setup *s = r->s;
	struct reader rd[MAX_READERS];
	struct fsmount m;
	bool mounted = false;
	int64_t t;

	r->rng = s->seed;
	r->overflows = -1;
	coh_put(r->name, sizeof(r->name), ".dcbench-coherence.%s.XXXXXX", r->kind);
	coh_at(r->src, s->source, r->name);
	if (!mkdtemp(r->src)) {
		coh_put(r->error, sizeof(r->error), "cannot make a directory in %s: %s",
		    s->source, strerror(errno));
		r->src[0] = '\0';
		return;
	}
	memmove(r->name, strrchr(r->src, '/') + 1, strlen(strrchr(r->src, '/') + 1) + 1);
	r->xattrs = source_xattrs(r);
	if (!r->xattrs)
		coh_put(r->note, sizeof(r->note), "%s has no user xattrs: setxattr and "
		    "removexattr left out", s->source);
	if (coh_make_tree(r) < 0)
		goto out;
	if (s->flood && coh_make_flood_dirs(r) < 0)
		goto out;
	if (mount_kind(r, &m) < 0) {
		coh_put(r->error, sizeof(r->error), "%s could not be mounted (why is on stderr; the "
		    "daemon's log is %s/daemon-%s.log)", r->kind, s->work, r->kind);
		goto out;
	}
	mounted = true;
	coh_at(r->mnt, m.dir, r->name);
	if (access(r->mnt, F_OK) < 0) {
		coh_put(r->error, sizeof(r->error), "%s does not show the tree: %s: %s",
		    r->kind, r->mnt, strerror(errno));
		goto out;
	}
	if (r->xattrs && !mount_xattrs(r)) {
		r->xattrs = false;
		coh_put(r->note, sizeof(r->note), "%s shows no xattrs: setxattr and "
		    "removexattr left out", r->kind);
	}
	t = (int64_t)clock_ns();
	if (coh_start_readers(r, rd) < 0)
		goto out;
	r->warm_s = (double)((int64_t)clock_ns() - t) * 1e-9;
	coh_witness_start(&r->wit);	/* failing, the report says so */
	coh_run_changes(r);
	coh_witness_stop(&r->wit);
	coh_stop_readers(r, rd);
	r->ran = !coh_interrupted && !r->dead;
out:
	if (cli_progress())
		fprintf(stderr, "\r%60s\r", "");
	if (mounted && fsm_stop(&m, NULL) < 0 && !r->error[0]) {
		coh_put(r->error, sizeof(r->error), "%s did not end cleanly; see %s/daemon-%s.log",
		    r->kind, s->work, r->kind);
		r->ran = false;
	}
	if (mounted)
		r->overflows = coh_overflows_logged(r);
	if (r->src[0])
		coh_remove_tree(r->src);
}
