/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * validate.c - the rules of the trace format: the kinds of op, the flags
 * and paths each may carry, errno names, and dct_validate(), which checks
 * every rule so that a replay can index with what it finds.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "trace/util.h"

static const char *const kind_names[DCT_NKINDS] = {
	[DCT_OPEN] = "OPEN", [DCT_STAT] = "STAT", [DCT_LSTAT] = "LSTAT",
	[DCT_ACCESS] = "ACCESS", [DCT_READLINK] = "READLINK",
	[DCT_EXECVE] = "EXECVE", [DCT_CHDIR] = "CHDIR", [DCT_MKDIR] = "MKDIR",
	[DCT_MKNOD] = "MKNOD", [DCT_UNLINK] = "UNLINK", [DCT_RMDIR] = "RMDIR",
	[DCT_RENAME] = "RENAME", [DCT_LINK] = "LINK", [DCT_SYMLINK] = "SYMLINK",
	[DCT_TRUNCATE] = "TRUNCATE", [DCT_UTIMENS] = "UTIMENS",
	[DCT_CHMOD] = "CHMOD", [DCT_CHOWN] = "CHOWN", [DCT_FORK] = "FORK",
	[DCT_WAIT] = "WAIT", [DCT_EXIT] = "EXIT",
};

#define F_PATH1	(DCT_F_SLASH | DCT_F_NOFOLLOW)
#define DCT_ERRNO_MAX	4095	/* the kernel's MAX_ERRNO */

/* Flags each kind may carry; anything else is corruption. */
static const uint8_t kind_flags[DCT_NKINDS] = {
	[DCT_OPEN] = F_PATH1 | DCT_F_CREAT | DCT_F_EXCL | DCT_F_DIRECTORY | DCT_F_TRUNC,
	[DCT_STAT] = DCT_F_SLASH, [DCT_LSTAT] = DCT_F_SLASH,
	[DCT_ACCESS] = F_PATH1, [DCT_READLINK] = DCT_F_SLASH,
	[DCT_EXECVE] = DCT_F_SLASH, [DCT_CHDIR] = DCT_F_SLASH,
	[DCT_MKDIR] = DCT_F_SLASH, [DCT_MKNOD] = DCT_F_SLASH,
	[DCT_UNLINK] = DCT_F_SLASH, [DCT_RMDIR] = DCT_F_SLASH,
	[DCT_RENAME] = DCT_F_SLASH | DCT_F_SLASH2 | DCT_F_NOREPLACE |
		       DCT_F_EXCHANGE | DCT_F_WHITEOUT,
	[DCT_LINK] = F_PATH1 | DCT_F_SLASH2,
	[DCT_SYMLINK] = DCT_F_SLASH,
	[DCT_TRUNCATE] = DCT_F_SLASH, [DCT_UTIMENS] = F_PATH1,
	[DCT_CHMOD] = F_PATH1, [DCT_CHOWN] = F_PATH1,
	[DCT_FORK] = DCT_F_THREAD | DCT_F_VFORK,
	[DCT_WAIT] = 0, [DCT_EXIT] = DCT_F_IMPLIED,
};

const char *dct_kind_name(unsigned kind)
{
	return kind < DCT_NKINDS ? kind_names[kind] : "?";
}

int dct_kind_paths(unsigned kind)
{
	switch (kind) {
	case DCT_RENAME:
	case DCT_LINK:
	case DCT_SYMLINK:
		return 2;
	case DCT_FORK:
	case DCT_WAIT:
	case DCT_EXIT:
		return 0;
	default:
		return kind < DCT_NKINDS ? 1 : 0;
	}
}

bool dct_kind_has_child(unsigned kind)
{
	return kind == DCT_FORK || kind == DCT_WAIT;
}

const char *dct_errno_name(int err)
{
	if (err <= 0)
		return NULL;
	return strerrorname_np(err);
}

/* Linux errnos all lie below 134; the scan is cheap and needs no table. */
int dct_errno_from_name(const char *name, size_t len)
{
	for (int e = 1; e < 256; e++) {
		const char *n = strerrorname_np(e);

		if (n && strlen(n) == len && memcmp(n, name, len) == 0)
			return e;
	}
	return 0;
}

/* Absolute and lexically normal: what the importer promises for paths. */
static bool path_is_normal(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || s[0] != '/')
		return false;
	if (n > 1 && s[n - 1] == '/')
		return false;
	for (const char *p = s; (p = strchr(p, '/')); p++) {
		if (p[1] == '/')
			return false;
		if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return false;
	}
	return true;
}

static int check_path(const struct dct_trace *t, const uint8_t *normal,
		      uint64_t i, uint32_t id, bool any_text, const char *which,
		      char *err, size_t errlen)
{
	if (id >= t->npaths) {
		dct_fail(err, errlen, "op %" PRIu64 ": %s %" PRIu32
		     " out of range (%" PRIu32 " paths)", i, which, id, t->npaths);
		return -1;
	}
	if (!any_text && !normal[id]) {
		dct_fail(err, errlen, "op %" PRIu64 ": %s %" PRIu32
		     " is not a normalised absolute path", i, which, id);
		return -1;
	}
	return 0;
}

static int check_child(const struct dct_trace *t, uint32_t owner, uint64_t i,
		       const struct dct_op *o, char *err, size_t errlen)
{
	const struct dct_proc *c;
	uint64_t back;

	if (o->child >= t->nprocs) {
		dct_fail(err, errlen, "op %" PRIu64 ": child %" PRIu32
		     " out of range (%" PRIu32 " processes)", i, o->child, t->nprocs);
		return -1;
	}
	c = &t->procs[o->child];
	back = o->kind == DCT_FORK ? c->fork_op : c->wait_op;
	if (c->parent != (int32_t)owner || back != i) {
		dct_fail(err, errlen, "op %" PRIu64 ": %s of process %" PRIu32
		     " does not match that process's record", i,
		     dct_kind_name(o->kind), o->child);
		return -1;
	}
	return 0;
}

static int check_op(const struct dct_trace *t, const uint8_t *normal,
		    uint32_t owner, uint64_t i, char *err, size_t errlen)
{
	const struct dct_op *o = &t->ops[i];
	int np;

	if (o->kind >= DCT_NKINDS) {
		dct_fail(err, errlen, "op %" PRIu64 ": unknown kind %u", i, o->kind);
		return -1;
	}
	if (o->flags & ~kind_flags[o->kind]) {
		dct_fail(err, errlen, "op %" PRIu64 ": flags 0x%x not valid for %s",
		     i, o->flags, kind_names[o->kind]);
		return -1;
	}
	if (o->err < DCT_ERR_UNKNOWN || o->err > DCT_ERRNO_MAX) {
		dct_fail(err, errlen, "op %" PRIu64 ": bad error %d", i, o->err);
		return -1;
	}
	np = dct_kind_paths(o->kind);
	if (np >= 1 && check_path(t, normal, i, o->path, false, "path", err, errlen))
		return -1;
	if (np >= 2 && check_path(t, normal, i, o->path2, o->kind == DCT_SYMLINK,
				  "path2", err, errlen))
		return -1;
	if ((np < 1 && o->path != DCT_NONE) || (np < 2 && o->path2 != DCT_NONE)) {
		dct_fail(err, errlen, "op %" PRIu64 ": %s carries an unused path",
		     i, kind_names[o->kind]);
		return -1;
	}
	if (dct_kind_has_child(o->kind))
		return check_child(t, owner, i, o, err, errlen);
	if (o->child != DCT_NONE) {
		dct_fail(err, errlen, "op %" PRIu64 ": %s carries a child", i,
		     kind_names[o->kind]);
		return -1;
	}
	return 0;
}

static int check_link(const struct dct_trace *t, uint32_t i, uint64_t op,
		      unsigned kind, const char *what, char *err, size_t errlen)
{
	const struct dct_proc *p = &t->procs[i], *pp;

	if (op == DCT_NO_OP)
		return 0;
	if (p->parent < 0) {
		dct_fail(err, errlen, "process %" PRIu32 ": %s without a parent", i, what);
		return -1;
	}
	pp = &t->procs[p->parent];
	if (op < pp->first_op || op - pp->first_op >= pp->nops ||
	    t->ops[op].kind != kind || t->ops[op].child != i) {
		dct_fail(err, errlen, "process %" PRIu32 ": %s %" PRIu64
		     " is not its parent's %s of it", i, what, op, kind_names[kind]);
		return -1;
	}
	return 0;
}

static int check_proc(const struct dct_trace *t, uint32_t i, uint64_t *next,
		      char *err, size_t errlen)
{
	const struct dct_proc *p = &t->procs[i];

	if (p->parent < -1 || (p->parent >= 0 && (uint32_t)p->parent >= i)) {
		dct_fail(err, errlen, "process %" PRIu32 ": parent %" PRId32
		     " is not an earlier process", i, p->parent);
		return -1;
	}
	if (p->first_op != *next || p->nops == 0 || p->nops > t->nops - *next) {
		dct_fail(err, errlen, "process %" PRIu32 ": ops [%" PRIu64 ", +%" PRIu64
		     ") do not continue at %" PRIu64 " within %" PRIu64 " ops",
		     i, p->first_op, p->nops, *next, t->nops);
		return -1;
	}
	*next += p->nops;
	if ((p->parent >= 0) != (p->fork_op != DCT_NO_OP)) {
		dct_fail(err, errlen, "process %" PRIu32 ": fork_op must be set exactly"
		     " when there is a parent", i);
		return -1;
	}
	if (p->wait_op != DCT_NO_OP && p->wait_op <= p->fork_op) {
		dct_fail(err, errlen, "process %" PRIu32 ": reaped before it was forked", i);
		return -1;
	}
	return 0;
}

/* Every process ends with its one EXIT; link records are checked by check_op. */
static int check_proc_ops(const struct dct_trace *t, const uint8_t *normal,
			  uint32_t i, char *err, size_t errlen)
{
	const struct dct_proc *p = &t->procs[i];
	uint64_t end = p->first_op + p->nops;

	for (uint64_t k = p->first_op; k < end; k++) {
		if (check_op(t, normal, i, k, err, errlen))
			return -1;
		if ((t->ops[k].kind == DCT_EXIT) != (k == end - 1)) {
			dct_fail(err, errlen, "process %" PRIu32 ": EXIT must be its last op"
			     " and only there (op %" PRIu64 ")", i, k);
			return -1;
		}
	}
	if (check_link(t, i, p->fork_op, DCT_FORK, "fork_op", err, errlen) ||
	    check_link(t, i, p->wait_op, DCT_WAIT, "wait_op", err, errlen))
		return -1;
	return 0;
}

int dct_validate(const struct dct_trace *t, char *err, size_t errlen)
{
	uint64_t next = 0;
	uint8_t *normal;
	int rc = -1;

	if (t->nprocs > INT32_MAX) {
		dct_fail(err, errlen, "%" PRIu32 " processes: too many", t->nprocs);
		return -1;
	}
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (check_proc(t, i, &next, err, errlen))
			return -1;
	if (next != t->nops) {
		dct_fail(err, errlen, "processes cover %" PRIu64 " of %" PRIu64 " ops",
		     next, t->nops);
		return -1;
	}
	normal = malloc(t->npaths ? t->npaths : 1);
	if (!normal) {
		dct_fail(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < t->npaths; i++)
		normal[i] = path_is_normal(t->paths[i]);
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (check_proc_ops(t, normal, i, err, errlen))
			goto out;
	rc = 0;
out:
	free(normal);
	return rc;
}
