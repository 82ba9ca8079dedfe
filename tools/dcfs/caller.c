// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * caller.c - acting as the caller: the credentials a worker takes on for
 * the host calls it makes on a request's behalf, and gives back after.
 *
 * dcfs runs as root, and the kernel has checked the caller's access
 * against what dcfs reported (default_permissions; the ACLs too with
 * FUSE_POSIX_ACL).  Those checks saw the names the kernel holds, which may
 * be stale, and they do not cover what the host checks or accounts
 * itself: a sticky directory whose entry changed behind the kernel, ACLs,
 * quotas and root's reserved blocks, the owner of what is made (a
 * whiteout too), the system.* attributes some file systems check.  So a
 * host call that the host checks or accounts is made as the caller:
 *
 *   fsuid, fsgid   the caller's (setfsuid/setfsgid: this thread only).
 *                  A file-system uid other than 0 takes the file-system
 *                  capabilities (DAC_OVERRIDE, FOWNER, FSETID, CHOWN,
 *                  MKNOD, ...) out of the thread's effective set.
 *   groups         the caller's, where a permission is checked (CR_GROUPS;
 *                  a raw setgroups, which unlike glibc's changes this
 *                  thread only); none when they cannot be read.
 *   CAP_SYS_RESOURCE  dropped (caps_resource): quotas and reserved blocks.
 *   umask          the caller's, where the kernel left it to us (CR_UMASK
 *                  with POSIX ACLs: a default ACL overrides it; each
 *                  worker then has its own fs_struct).
 *
 * A switch that cannot be verified fails the request with EPERM: dcfs
 * never acts as root in a caller's stead.  Root (uid and gid 0) acts as
 * root.  The cache's own lookups are made as root, between such calls.
 */
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ops.h"

/* The caller's groups on this thread, or none: never root's.  false if
 * even that failed. */
static bool set_groups(fuse_req_t req)
{
	gid_t small[64], *list = small;
	int n = fuse_req_getgroups(req, 64, list);
	long res;

	if (n > 64) {
		int cap = n;

		list = malloc((size_t)cap * sizeof(*list));
		if (!list)
			return false;
		n = fuse_req_getgroups(req, cap, list);
		if (n > cap)
			n = cap;	/* it grew meanwhile: the first cap */
	}
	res = syscall(SYS_setgroups, n > 0 ? (size_t)n : 0, n > 0 ? list : NULL);
	if (list != small)
		free(list);
	return res == 0;
}

/* This thread's own umask (unshare CLONE_FS): once per thread. */
static bool own_umask(void)
{
	static __thread bool own;

	if (!own && unshare(CLONE_FS) == 0)
		own = true;
	return own;
}

void caller_end(struct caller *cr)
{
	int e = errno;

	if (cr->caps)
		caps_resource(true);
	if (cr->fs) {
		setfsuid(0);
		setfsgid(0);
	}
	if (cr->groups)
		syscall(SYS_setgroups, (size_t)0, NULL);
	if (cr->umask)
		umask(0);
	memset(cr, 0, sizeof(*cr));
	errno = e;
}

void caller_reset(void)
{
	struct caller cr = { .fs = true, .caps = true, .groups = true,
			     .umask = own_umask() };

	caller_end(&cr);
}

/* fsuid and fsgid become uid and gid, verified, and CAP_SYS_RESOURCE goes
 * if lower; false on failure, with cr saying what caller_end must undo. */
static bool switch_ids(struct caller *cr, uid_t uid, gid_t gid, bool lower)
{
	cr->fs = true;
	/* each returns the id in force before; (uid_t)-1 changes nothing */
	setfsgid(gid);
	if ((gid_t)setfsgid((gid_t)-1) != gid)
		return false;
	setfsuid(uid);
	if ((uid_t)setfsuid((uid_t)-1) != uid)
		return false;
	if (lower) {
		cr->caps = true;
		if (caps_resource(false) < 0)
			return false;
	}
	return true;
}

int caller_begin(fuse_req_t req, struct caller *cr, int what)
{
	static bool said;
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	memset(cr, 0, sizeof(*cr));
	if ((what & CR_UMASK) && dcfs.posix_acl) {
		if (!own_umask())
			goto fail;
		umask(ctx->umask);
		cr->umask = true;
	}
	if (!dcfs.as_caller || (ctx->uid == 0 && ctx->gid == 0))
		return 0;
	if (what & CR_GROUPS) {
		if (!set_groups(req))
			goto fail;
		cr->groups = true;
	}
	if (!switch_ids(cr, ctx->uid, ctx->gid, ctx->uid != 0))
		goto fail;
	return 0;
fail:
	if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
		dcfs_log(LOG_ERR, "cannot act as uid %u gid %u (%s): refusing "
			 "requests that would run as root instead",
			 (unsigned)ctx->uid, (unsigned)ctx->gid, strerror(errno));
	caller_end(cr);
	return EPERM;
}

/*
 * A write the kernel sends on its own: a shared mapping's dirty pages
 * written back (FUSE_WRITE_CACHE) carry no caller, only ids of 0.  Made
 * as the file's owner, whom the blocks are charged to, and never with
 * CAP_SYS_RESOURCE, so that neither a quota nor root's reserved blocks
 * are passed through a mapping.  A file root owns is written as root
 * (its reserved blocks still reachable, by whoever may map it shared).
 */
int caller_begin_owner(int fd, struct caller *cr)
{
	struct stat st;

	memset(cr, 0, sizeof(*cr));
	if (!dcfs.as_caller)
		return 0;
	if (fstat(fd, &st) < 0)
		return errno;
	if (!switch_ids(cr, st.st_uid, st.st_gid, true)) {
		dcfs_log(LOG_ERR, "cannot write back as uid %u gid %u (%s)",
			 (unsigned)st.st_uid, (unsigned)st.st_gid, strerror(errno));
		caller_end(cr);
		return EPERM;
	}
	return 0;
}
