/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * syscalls.c - what each system call in the log means to the importer:
 * a table of the calls we know (which arguments are paths, directory fds
 * and flags), and per call the op it records or the process state it
 * changes (chdir, fork, wait, exit).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/import_internal.h"
#include "trace/util.h"

enum sys_type {
	S_PATH,		/* a path lookup: one op */
	S_SYMLINK,	/* path is the new link, path2 the target text */
	S_CHDIR,
	S_FCHDIR,
	S_GETCWD,
	S_FORK,
	S_WAIT,
	S_WAITID,
	S_EXIT,
	S_IGNORE,	/* known, no path lookup, nothing to track */
};

/* How to read the flags argument. */
enum flag_style {
	FL_NONE,
	FL_OPEN,	/* O_CREAT, O_EXCL, O_DIRECTORY, O_TRUNC, O_NOFOLLOW */
	FL_STAT,	/* AT_SYMLINK_NOFOLLOW makes it LSTAT */
	FL_AT,		/* AT_SYMLINK_NOFOLLOW sets NOFOLLOW */
	FL_LINKAT,	/* NOFOLLOW unless AT_SYMLINK_FOLLOW */
	FL_UNLINKAT,	/* AT_REMOVEDIR makes it RMDIR */
	FL_RENAME,	/* RENAME_NOREPLACE, _EXCHANGE, _WHITEOUT */
};

struct sysdesc {
	const char *name;
	uint8_t type;
	uint8_t kind;
	int8_t dfd, path, dfd2, path2, flags;	/* argument indices, -1: none */
	uint8_t style;
	uint8_t fixed;		/* DCT_F_* always set */
};

#define P1(n, k, p)		{ n, S_PATH, k, -1, p, -1, -1, -1, FL_NONE, 0 }
#define PAT(n, k, d, p, f, s)	{ n, S_PATH, k, d, p, -1, -1, f, s, 0 }
#define P2(n, k, d, p, d2, p2, f, s, x) { n, S_PATH, k, d, p, d2, p2, f, s, x }
#define T(n, t)			{ n, t, 0, -1, -1, -1, -1, -1, FL_NONE, 0 }

/* Sorted by name: bsearch. */
static const struct sysdesc systab[] = {
	P1("access", DCT_ACCESS, 0),
	{ "chdir", S_CHDIR, DCT_CHDIR, -1, 0, -1, -1, -1, FL_NONE, 0 },
	P1("chmod", DCT_CHMOD, 0),
	P1("chown", DCT_CHOWN, 0),
	P1("chown32", DCT_CHOWN, 0),
	T("clone", S_FORK),
	T("clone2", S_FORK),
	T("clone3", S_FORK),
	{ "creat", S_PATH, DCT_OPEN, -1, 0, -1, -1, -1, FL_NONE, DCT_F_CREAT | DCT_F_TRUNC },
	P1("execve", DCT_EXECVE, 0),
	PAT("execveat", DCT_EXECVE, 0, 1, -1, FL_NONE),
	T("exit", S_EXIT),
	T("exit_group", S_EXIT),
	PAT("faccessat", DCT_ACCESS, 0, 1, -1, FL_NONE),
	PAT("faccessat2", DCT_ACCESS, 0, 1, 3, FL_AT),
	T("fchdir", S_FCHDIR),
	T("fchmod", S_IGNORE),
	PAT("fchmodat", DCT_CHMOD, 0, 1, 3, FL_AT),
	PAT("fchmodat2", DCT_CHMOD, 0, 1, 3, FL_AT),
	T("fchown", S_IGNORE),
	T("fchown32", S_IGNORE),
	PAT("fchownat", DCT_CHOWN, 0, 1, 4, FL_AT),
	T("fork", S_FORK),
	T("fstat", S_IGNORE),
	T("fstat64", S_IGNORE),
	PAT("fstatat64", DCT_STAT, 0, 1, 3, FL_STAT),
	T("fstatfs", S_IGNORE),
	T("fstatfs64", S_IGNORE),
	PAT("futimesat", DCT_UTIMENS, 0, 1, -1, FL_NONE),
	T("getcwd", S_GETCWD),
	P1("getxattr", DCT_STAT, 0),
	T("kill", S_IGNORE),
	{ "lchown", S_PATH, DCT_CHOWN, -1, 0, -1, -1, -1, FL_NONE, DCT_F_NOFOLLOW },
	{ "lchown32", S_PATH, DCT_CHOWN, -1, 0, -1, -1, -1, FL_NONE, DCT_F_NOFOLLOW },
	P1("lgetxattr", DCT_LSTAT, 0),
	P2("link", DCT_LINK, -1, 0, -1, 1, -1, FL_NONE, DCT_F_NOFOLLOW),
	P2("linkat", DCT_LINK, 0, 1, 2, 3, 4, FL_LINKAT, 0),
	P1("listxattr", DCT_STAT, 0),
	P1("llistxattr", DCT_LSTAT, 0),
	P1("lremovexattr", DCT_LSTAT, 0),
	P1("lsetxattr", DCT_LSTAT, 0),
	P1("lstat", DCT_LSTAT, 0),
	P1("lstat64", DCT_LSTAT, 0),
	P1("mkdir", DCT_MKDIR, 0),
	PAT("mkdirat", DCT_MKDIR, 0, 1, -1, FL_NONE),
	P1("mknod", DCT_MKNOD, 0),
	PAT("mknodat", DCT_MKNOD, 0, 1, -1, FL_NONE),
	PAT("newfstatat", DCT_STAT, 0, 1, 3, FL_STAT),
	P1("oldlstat", DCT_LSTAT, 0),
	P1("oldstat", DCT_STAT, 0),
	PAT("open", DCT_OPEN, -1, 0, 1, FL_OPEN),
	PAT("openat", DCT_OPEN, 0, 1, 2, FL_OPEN),
	PAT("openat2", DCT_OPEN, 0, 1, 2, FL_OPEN),
	T("pidfd_open", S_IGNORE),
	T("pidfd_send_signal", S_IGNORE),
	P1("readlink", DCT_READLINK, 0),
	PAT("readlinkat", DCT_READLINK, 0, 1, -1, FL_NONE),
	P1("removexattr", DCT_STAT, 0),
	P2("rename", DCT_RENAME, -1, 0, -1, 1, -1, FL_NONE, 0),
	P2("renameat", DCT_RENAME, 0, 1, 2, 3, -1, FL_NONE, 0),
	P2("renameat2", DCT_RENAME, 0, 1, 2, 3, 4, FL_RENAME, 0),
	P1("rmdir", DCT_RMDIR, 0),
	T("rt_sigqueueinfo", S_IGNORE),
	T("rt_tgsigqueueinfo", S_IGNORE),
	P1("setxattr", DCT_STAT, 0),
	P1("stat", DCT_STAT, 0),
	P1("stat64", DCT_STAT, 0),
	P1("statfs", DCT_STAT, 0),
	P1("statfs64", DCT_STAT, 0),
	PAT("statx", DCT_STAT, 0, 1, 2, FL_STAT),
	{ "symlink", S_SYMLINK, DCT_SYMLINK, -1, 1, -1, 0, -1, FL_NONE, 0 },
	{ "symlinkat", S_SYMLINK, DCT_SYMLINK, 1, 2, -1, 0, -1, FL_NONE, 0 },
	T("tgkill", S_IGNORE),
	T("tkill", S_IGNORE),
	P1("truncate", DCT_TRUNCATE, 0),
	P1("truncate64", DCT_TRUNCATE, 0),
	P1("unlink", DCT_UNLINK, 0),
	PAT("unlinkat", DCT_UNLINK, 0, 1, 2, FL_UNLINKAT),
	P1("utime", DCT_UTIMENS, 0),
	PAT("utimensat", DCT_UTIMENS, 0, 1, 3, FL_AT),
	P1("utimes", DCT_UTIMENS, 0),
	T("vfork", S_FORK),
	T("wait4", S_WAIT),
	T("waitid", S_WAITID),
	T("waitpid", S_WAIT),
};

static int cmp_sys(const void *key, const void *elem)
{
	const struct dct_span *k = key;
	const char *n = ((const struct sysdesc *)elem)->name;
	size_t nl = strlen(n);
	int c = memcmp(k->p, n, k->len < nl ? k->len : nl);

	return c ? c : (k->len > nl) - (k->len < nl);
}

static const struct sysdesc *find_sys(const char *name, size_t len)
{
	struct dct_span k = { name, len };

	return bsearch(&k, systab, sizeof(systab) / sizeof(systab[0]),
		       sizeof(systab[0]), cmp_sys);
}

static void count_unknown(struct dct_importer *im, const char *name, size_t len)
{
	size_t i;

	im->sum.unknown_calls++;
	for (i = 0; i < im->nunknown; i++)
		if (strlen(im->unknown[i].name) == len &&
		    memcmp(im->unknown[i].name, name, len) == 0)
			break;
	if (i == im->nunknown) {
		if (i == MAX_UNKNOWN_NAMES)
			return;
		memcpy(im->unknown[i].name, name, len);
		im->unknown[i].name[len] = '\0';
		im->nunknown++;
	}
	im->unknown[i].count++;
}

/* 0, a positive errno, DCT_ERR_UNKNOWN; or -2 for a call to be restarted. */
static int call_err(struct dct_importer *im, const struct dct_call *c)
{
	const struct dct_span *e = &c->errname;

	if (e->len >= 8 && memcmp(e->p, "ERESTART", 8) == 0)
		return -2;
	if (c->ret == DCT_RET_NUM)
		return 0;
	if (c->ret == DCT_RET_UNKNOWN || e->len >= sizeof(im->errname))
		return DCT_ERR_UNKNOWN;
	/* nearly every failure is the same ENOENT: remember the last one */
	if (strlen(im->errname) != e->len || memcmp(im->errname, e->p, e->len)) {
		memcpy(im->errname, e->p, e->len);
		im->errname[e->len] = '\0';
		im->errnum = dct_errno_from_name(e->p, e->len);
	}
	return im->errnum ? im->errnum : DCT_ERR_UNKNOWN;
}

/*
 * Argument idx as a directory fd, with its -y annotation decoded into
 * im->abuf when there is one (*annot set).
 */
static enum dct_fd parse_fd(struct dct_importer *im, const struct dct_call *c,
			    int idx, bool *annot)
{
	*annot = false;
	if (idx < 0 || (unsigned)idx >= c->nargs)
		return DCT_FD_NONE;
	return dct_parse_dirfd(c->args[idx], im->abuf, sizeof(im->abuf), annot);
}

/* Normalise im->abuf in place; false if it is too long. */
static bool norm_abuf(struct dct_importer *im)
{
	long n = im_join_path(im->pbuf, "/", im->abuf, strlen(im->abuf));

	if (n < 0)
		return false;
	memcpy(im->abuf, im->pbuf, (size_t)n + 1);
	return true;
}

/* AT_FDCWD</dir> tells us the cwd, whatever the path argument is. */
static void adopt_fdcwd(struct dct_importer *im, struct proc *p,
			const struct dct_call *c, int didx)
{
	bool annot;

	if (didx >= 0 && parse_fd(im, c, didx, &annot) == DCT_FD_CWD && annot &&
	    norm_abuf(im))
		im_adopt_cwd(im, p, im->abuf);
}

enum res { R_OK, R_PENDING, R_SKIP, R_FAIL };

struct resolved {
	enum res res;
	uint32_t id;		/* R_OK */
	char *rel;		/* R_PENDING, malloc'd */
	bool slash;
};

/* Decode path argument a into im->sbuf; its length, or -1 (counted). */
static long decode_path(struct dct_importer *im, struct dct_span a)
{
	long n = dct_decode_string(a, im->sbuf, sizeof(im->sbuf));

	if (n < 0) {
		if (a.len > DCT_PATH_MAX && a.p[a.len - 1] == '"')
			im->sum.too_long++;
		else
			im_count_malformed(im);
		return -1;
	}
	if ((size_t)n != strlen(im->sbuf)) {
		im_count_malformed(im);	/* a NUL: strace never prints one in a path */
		return -1;
	}
	return n;
}

static enum res resolve_rel(struct dct_importer *im, struct proc *p,
			    const struct dct_call *c, int didx, size_t n,
			    struct resolved *r)
{
	bool annot = false;
	enum dct_fd fk = didx < 0 ? DCT_FD_CWD : parse_fd(im, c, didx, &annot);
	long k;

	if (fk == DCT_FD_NUM && annot && norm_abuf(im))
		r->id = im_intern_abs(im, im->abuf, im->sbuf, n);
	else if (fk == DCT_FD_CWD && p->cwd)
		r->id = im_intern_abs(im, p->cwd, im->sbuf, n);
	else if (fk == DCT_FD_CWD) {
		k = im_join_path(im->pbuf, p->cwd_rel, im->sbuf, n);
		if (k < 0) {
			im->sum.too_long++;
			return R_FAIL;
		}
		r->rel = strdup(im->pbuf);
		if (!r->rel) {
			im->oom = true;
			return R_FAIL;
		}
		return R_PENDING;
	} else {
		im->sum.unresolved++;	/* an fd we cannot name */
		return R_FAIL;
	}
	return r->id == DCT_NONE ? R_FAIL : R_OK;
}

/*
 * Path argument pidx, relative to directory-fd argument didx (-1: the
 * cwd).  R_SKIP: not a lookup ("" with AT_EMPTY_PATH, NULL, an address).
 */
static enum res resolve(struct dct_importer *im, struct proc *p,
			const struct dct_call *c, int didx, int pidx,
			struct resolved *r)
{
	struct dct_span a;
	long n;

	memset(r, 0, sizeof(*r));
	r->id = DCT_NONE;
	if (pidx < 0 || (unsigned)pidx >= c->nargs) {
		im_count_malformed(im);
		return r->res = R_FAIL;
	}
	a = c->args[pidx];
	if (a.len == 0 || a.p[0] != '"') {
		im->sum.skipped_fd_calls++;
		return r->res = R_SKIP;
	}
	n = decode_path(im, a);
	if (n < 0)
		return r->res = R_FAIL;
	if (n == 0) {
		im->sum.skipped_fd_calls++;
		return r->res = R_SKIP;
	}
	r->slash = im_trailing_slash(im->sbuf, (size_t)n);
	if (im->sbuf[0] == '/') {
		r->id = im_intern_abs(im, "/", im->sbuf, (size_t)n);
		return r->res = r->id == DCT_NONE ? R_FAIL : R_OK;
	}
	return r->res = resolve_rel(im, p, c, didx, (size_t)n, r);
}

/* A symlink's target: text, stored as given. */
static enum res symlink_target(struct dct_importer *im, const struct dct_call *c,
			       int idx, struct resolved *r)
{
	long n;

	memset(r, 0, sizeof(*r));
	if (idx < 0 || (unsigned)idx >= c->nargs || c->args[idx].len == 0 ||
	    c->args[idx].p[0] != '"') {
		im_count_malformed(im);
		return r->res = R_FAIL;
	}
	n = decode_path(im, c->args[idx]);
	if (n < 0)
		return r->res = R_FAIL;
	r->id = strtab_intern(&im->paths, im->sbuf, (size_t)n);
	if (r->id == DCT_NONE) {
		im->oom = true;
		return r->res = R_FAIL;
	}
	return r->res = R_OK;
}

/* Give op its path in slot: now, or once the directory is known. */
static void attach(struct dct_importer *im, struct proc *p, uint64_t op,
		   uint8_t slot, struct resolved *r)
{
	struct pend *e;

	if (r->res == R_OK) {
		if (slot == 0)
			p->ops[op].path = r->id;
		else
			p->ops[op].path2 = r->id;
		return;
	}
	if (r->res != R_PENDING)
		return;
	if (dct_grow(&p->pend, &p->pcap, p->npend + 1, sizeof(*p->pend))) {
		free(r->rel);
		r->rel = NULL;		/* callers free r->rel after us */
		im->oom = true;
		return;
	}
	e = &p->pend[p->npend++];
	e->op = op;
	e->slot = slot;
	e->rel = r->rel;
	r->rel = NULL;
}

static unsigned decode_flags(const struct sysdesc *sd, const struct dct_call *c,
			     unsigned *kind)
{
	struct dct_span a = { "", 0 };
	unsigned f = sd->fixed;

	if (sd->flags >= 0 && (unsigned)sd->flags < c->nargs)
		a = c->args[sd->flags];
	switch (sd->style) {
	case FL_OPEN:
		f |= dct_has_word(a, "O_CREAT") ? DCT_F_CREAT : 0;
		f |= dct_has_word(a, "O_EXCL") ? DCT_F_EXCL : 0;
		f |= dct_has_word(a, "O_TRUNC") ? DCT_F_TRUNC : 0;
		f |= dct_has_word(a, "O_NOFOLLOW") ? DCT_F_NOFOLLOW : 0;
		if (dct_has_word(a, "O_DIRECTORY") || dct_has_word(a, "O_TMPFILE"))
			f |= DCT_F_DIRECTORY;
		break;
	case FL_STAT:
		if (dct_has_word(a, "AT_SYMLINK_NOFOLLOW"))
			*kind = DCT_LSTAT;
		break;
	case FL_AT:
		f |= dct_has_word(a, "AT_SYMLINK_NOFOLLOW") ? DCT_F_NOFOLLOW : 0;
		break;
	case FL_LINKAT:
		f |= dct_has_word(a, "AT_SYMLINK_FOLLOW") ? 0 : DCT_F_NOFOLLOW;
		break;
	case FL_UNLINKAT:
		if (dct_has_word(a, "AT_REMOVEDIR"))
			*kind = DCT_RMDIR;
		break;
	case FL_RENAME:
		f |= dct_has_word(a, "RENAME_NOREPLACE") ? DCT_F_NOREPLACE : 0;
		f |= dct_has_word(a, "RENAME_EXCHANGE") ? DCT_F_EXCHANGE : 0;
		f |= dct_has_word(a, "RENAME_WHITEOUT") ? DCT_F_WHITEOUT : 0;
		break;
	}
	return f;
}

static void do_path(struct dct_importer *im, struct proc *p, const struct sysdesc *sd,
		    const struct dct_call *c, int err, uint64_t line)
{
	unsigned kind = sd->kind, flags = decode_flags(sd, c, &kind);
	struct resolved r1, r2 = { .res = R_SKIP };
	long long op;

	adopt_fdcwd(im, p, c, sd->dfd);
	adopt_fdcwd(im, p, c, sd->dfd2);
	if (resolve(im, p, c, sd->dfd, sd->path, &r1) >= R_SKIP)
		return;
	if (sd->type == S_SYMLINK)
		symlink_target(im, c, sd->path2, &r2);
	else if (sd->path2 >= 0 && resolve(im, p, c, sd->dfd2, sd->path2, &r2) == R_OK)
		flags |= r2.slash ? DCT_F_SLASH2 : 0;
	if (sd->path2 >= 0 && r2.res >= R_SKIP) {
		free(r1.rel);
		return;
	}
	flags |= r1.slash ? DCT_F_SLASH : 0;
	if (r2.res == R_PENDING)
		flags |= r2.slash ? DCT_F_SLASH2 : 0;
	op = im_add_op(im, p, kind, flags, err, line);
	if (op < 0) {
		free(r1.rel);
		free(r2.rel);
		return;
	}
	attach(im, p, (uint64_t)op, 0, &r1);
	attach(im, p, (uint64_t)op, 1, &r2);
}

static void do_chdir(struct dct_importer *im, struct proc *p,
		     const struct dct_call *c, int err, uint64_t line)
{
	struct resolved r;
	enum res s = resolve(im, p, c, -1, 0, &r);
	long long op;

	if (s == R_SKIP)
		return;
	if (s == R_FAIL) {
		if (err == 0)
			im_lose_cwd(im, p);
		return;
	}
	op = im_add_op(im, p, DCT_CHDIR, r.slash ? DCT_F_SLASH : 0, err, line);
	if (err == 0 && s == R_OK) {
		/* pending paths stay only if the fork can still resolve them */
		if (!p->cwd && !p->base_from_parent)
			im_drop_pending(im, p);
		im_set_str(im, &p->cwd, im->paths.blob + im->paths.off[r.id]);
	} else if (err == 0) {
		im_set_str(im, &p->cwd_rel, r.rel);
	}
	if (op >= 0)
		attach(im, p, (uint64_t)op, 0, &r);
	free(r.rel);
}

static void do_fchdir(struct dct_importer *im, struct proc *p,
		      const struct dct_call *c, int err)
{
	bool annot;

	if (err != 0)
		return;
	if (parse_fd(im, c, 0, &annot) == DCT_FD_NUM && annot && norm_abuf(im)) {
		if (!p->cwd && !p->base_from_parent)
			im_drop_pending(im, p);
		im_set_str(im, &p->cwd, im->abuf);
	} else {
		im_lose_cwd(im, p);
	}
}

static void do_getcwd(struct dct_importer *im, struct proc *p, const struct dct_call *c)
{
	long n;

	if (c->ret != DCT_RET_NUM || c->value <= 0 || c->nargs < 1)
		return;
	n = dct_decode_string(c->args[0], im->abuf, sizeof(im->abuf));
	/* "(unreachable)/x" names no directory we could walk to */
	if (n > 0 && im->abuf[0] == '/' && strlen(im->abuf) == (size_t)n && norm_abuf(im))
		im_adopt_cwd(im, p, im->abuf);
}

/* The process a clone returned: one already running, or a new one. */
static struct proc *fork_child(struct dct_importer *im, struct proc *parent, uint32_t pid)
{
	struct proc *c = im_find_proc(im, pid);

	if (c && c->state == LIVE && !c->linked && c->index > parent->index) {
		/* its first lines came before the clone returned */
		if (c->base_from_parent && parent->cwd)
			im_learn_base(im, c, parent->cwd);
	} else {
		c = im_new_proc(im, pid);
		if (!c)
			return NULL;
		if (parent->cwd)
			im_set_str(im, &c->cwd, parent->cwd);
	}
	c->linked = true;
	c->parent = (int32_t)parent->index;
	c->base_from_parent = false;
	return c;
}

static void do_fork(struct dct_importer *im, struct proc *p, struct dct_span name,
		    struct dct_span text, const struct dct_call *c, uint64_t entry)
{
	unsigned flags = 0;
	struct proc *child;
	long long op;

	if (c->ret != DCT_RET_NUM || c->value <= 0 || c->value > UINT32_MAX)
		return;
	if (dct_has_word(name, "vfork") || dct_has_word(text, "CLONE_VFORK"))
		flags |= DCT_F_VFORK;
	if (dct_has_word(text, "CLONE_THREAD"))
		flags |= DCT_F_THREAD;
	op = im_add_op(im, p, DCT_FORK, flags, 0, entry);
	if (op < 0)
		return;
	child = fork_child(im, p, (uint32_t)c->value);
	if (child)
		p->ops[op].child = child->index;
	else
		p->ops[op].kind = DEAD_OP;	/* out of memory: the import fails */
}

static void do_wait(struct dct_importer *im, struct proc *p, uint32_t pid, uint64_t line)
{
	struct proc *c = im_find_proc(im, pid);
	long long op;

	if (!c || c->parent != (int32_t)p->index || c->state == REAPED) {
		im->sum.wait_unmatched++;
		return;
	}
	op = im_add_op(im, p, DCT_WAIT, 0, 0, line);
	if (op < 0)
		return;
	p->ops[op].child = c->index;
	c->state = REAPED;
}

/* waitid(P_..., id, {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=N, ...}, ...) */
static void do_waitid(struct dct_importer *im, struct proc *p, struct dct_span text,
		      const struct dct_call *c, uint64_t line)
{
	const char *end = text.p + text.len, *s;
	uint32_t pid;

	if (c->ret != DCT_RET_NUM || c->value != 0 || dct_has_word(text, "WNOWAIT") ||
	    !(dct_has_word(text, "CLD_EXITED") || dct_has_word(text, "CLD_KILLED") ||
	      dct_has_word(text, "CLD_DUMPED")))
		return;
	s = memmem(text.p, text.len, "si_pid=", 7);
	if (s && dct_parse_u32(s + 7, end, &pid) && pid)
		do_wait(im, p, pid, line);
}

void im_do_exit(struct dct_importer *im, struct proc *p, uint64_t line)
{
	if (p->has_exit)
		return;
	im_add_op(im, p, DCT_EXIT, 0, 0, line);
	p->has_exit = true;
	if (p->state == LIVE)
		p->state = EXITED;
}

/* One complete call: name(text), made at line entry, completed at line. */
void im_handle_call(struct dct_importer *im, struct proc *p, struct dct_span name,
			struct dct_span text, uint64_t entry, uint64_t line)
{
	const struct sysdesc *sd = find_sys(name.p, name.len);
	struct dct_call c;
	int err;

	if (!sd) {
		count_unknown(im, name.p, name.len);
		return;
	}
	if (sd->type == S_IGNORE) {
		im->sum.ignored_calls++;
		return;
	}
	if (dct_parse_call(text.p, text.len, &c) < 0) {
		im_count_malformed(im);
		return;
	}
	err = call_err(im, &c);
	if (err == -2) {
		im->sum.restarted++;
		return;
	}
	switch (sd->type) {
	case S_PATH:
	case S_SYMLINK:
		do_path(im, p, sd, &c, err, line);
		break;
	case S_CHDIR:
		do_chdir(im, p, &c, err, line);
		break;
	case S_FCHDIR:
		do_fchdir(im, p, &c, err);
		break;
	case S_GETCWD:
		do_getcwd(im, p, &c);
		break;
	case S_FORK:
		do_fork(im, p, name, text, &c, entry);
		break;
	case S_WAIT:
		if (c.ret == DCT_RET_NUM && c.value > 0 && c.value <= UINT32_MAX)
			do_wait(im, p, (uint32_t)c.value, line);
		break;
	case S_WAITID:
		do_waitid(im, p, text, &c, line);
		break;
	case S_EXIT:
		im_do_exit(im, p, line);
		break;
	}
}

#ifndef NDEBUG
/* bsearch needs systab in strcmp order; an edit out of order would lose calls. */
bool im_systab_sorted(void)
{
	for (size_t i = 1; i < sizeof(systab) / sizeof(systab[0]); i++)
		if (strcmp(systab[i - 1].name, systab[i].name) >= 0)
			return false;
	return true;
}
#endif
