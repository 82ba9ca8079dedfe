/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.c - the importer's processes: each pid's state, ops and working
 * directory, and the paths it names made absolute.
 *
 * Working directories.  With -y, strace annotates AT_FDCWD with the
 * directory it stands for, so most lines tell us the process's cwd and we
 * simply believe them.  Lines without one (stat, lstat, mkdir, execve,
 * chdir...) use the cwd we track through chdir, fchdir, getcwd and fork.
 * A process can run before we know its cwd: a vfork child's lines come
 * before its parent's clone returns, and the first process's cwd is only
 * known from its first annotation.  Relative paths seen then are kept,
 * relative to the unknown directory, and fixed up when it becomes known.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/import_internal.h"
#include "trace/util.h"

/*
 * Append s's components to out (holding a normalised prefix): drop empty
 * and "." components, keep "..": the cache resolves it physically, and
 * "a/link/.." is not "a" when link is a symlink.
 */
static int norm_append(char *out, size_t *olen, const char *s, size_t slen)
{
	const char *p = s, *end = s + slen;

	while (p < end) {
		const char *c;
		size_t n, sep;

		while (p < end && *p == '/')
			p++;
		for (c = p; p < end && *p != '/'; p++)
			;
		n = (size_t)(p - c);
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		sep = *olen > 0 && out[*olen - 1] != '/';
		if (*olen + sep + n >= PATH_CAP)
			return -1;
		if (sep)
			out[(*olen)++] = '/';
		memcpy(out + *olen, c, n);
		*olen += n;
	}
	out[*olen] = '\0';
	return 0;
}

/*
 * base (absolute, or relative to an unknown directory) joined with rel,
 * normalised into out; its length, or -1 when over DCT_PATH_MAX.  The base
 * is normalised as well: annotations come from the log, so trust none.
 */
long im_join_path(char *out, const char *base, const char *rel, size_t rlen)
{
	size_t n = 0;

	if (rlen > 0 && rel[0] == '/') {
		out[n++] = '/';
		out[n] = '\0';
	} else {
		if (base[0] == '/')
			out[n++] = '/';
		out[n] = '\0';
		if (norm_append(out, &n, base, strlen(base)))
			return -1;
	}
	if (norm_append(out, &n, rel, rlen))
		return -1;
	return (long)n;
}

/* A trailing '/' or "/." asks for a directory; "/" itself asks nothing. */
bool im_trailing_slash(const char *s, size_t n)
{
	size_t k = n;

	while (k > 0 && s[k - 1] == '/')
		k--;
	if (k == 0)
		return false;
	if (k < n)
		return true;
	return n >= 2 && s[n - 1] == '.' && s[n - 2] == '/';
}

uint32_t im_clamp_line(uint64_t l)
{
	return l > UINT32_MAX ? UINT32_MAX : (uint32_t)l;
}

static size_t pid_hash(uint32_t pid, size_t nslots)
{
	return (pid * 2654435761u) & (nslots - 1);
}

static bool pidmap_grow(struct dct_importer *im)
{
	size_t ns = im->pidslots ? im->pidslots * 2 : 4096;
	uint32_t *map = calloc(ns, sizeof(*map)), *key = calloc(ns, sizeof(*key));

	if (!map || !key) {
		free(map);
		free(key);
		return false;
	}
	for (size_t i = 0; i < im->pidslots; i++) {
		size_t j;

		if (!im->pidmap[i])
			continue;
		for (j = pid_hash(im->pidkey[i], ns); map[j]; j = (j + 1) & (ns - 1))
			;
		map[j] = im->pidmap[i];
		key[j] = im->pidkey[i];
	}
	free(im->pidmap);
	free(im->pidkey);
	im->pidmap = map;
	im->pidkey = key;
	im->pidslots = ns;
	return true;
}

static size_t pidmap_slot(const struct dct_importer *im, uint32_t pid)
{
	size_t j = pid_hash(pid, im->pidslots);

	while (im->pidmap[j] && im->pidkey[j] != pid)
		j = (j + 1) & (im->pidslots - 1);
	return j;
}

/* The latest process with this pid, whatever its state; NULL if none. */
struct proc *im_find_proc(const struct dct_importer *im, uint32_t pid)
{
	size_t j;

	if (!im->pidslots)
		return NULL;
	j = pidmap_slot(im, pid);
	return im->pidmap[j] ? im->procs[im->pidmap[j] - 1] : NULL;
}

struct proc *im_new_proc(struct dct_importer *im, uint32_t pid)
{
	struct proc *p;
	size_t j;

	if (im->nprocs >= INT32_MAX ||
	    ((im->pidused + 1) * 2 > im->pidslots && !pidmap_grow(im)) ||
	    dct_grow(&im->procs, &im->pcap, im->nprocs + 1, sizeof(*im->procs)))
		goto oom;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->cwd_rel = strdup(""))) {
		free(p);
		goto oom;
	}
	p->pid = pid;
	p->index = (uint32_t)im->nprocs;
	p->parent = -1;
	p->base_from_parent = true;
	im->procs[im->nprocs++] = p;
	j = pidmap_slot(im, pid);
	if (!im->pidmap[j])
		im->pidused++;
	im->pidmap[j] = (uint32_t)im->nprocs;
	im->pidkey[j] = pid;
	return p;
oom:
	im->oom = true;
	return NULL;
}

/* The running process with this pid; a new one if the pid is new or reused. */
struct proc *im_live_proc(struct dct_importer *im, uint32_t pid)
{
	struct proc *p = im_find_proc(im, pid);

	return p && p->state == LIVE ? p : im_new_proc(im, pid);
}

void im_count_malformed(struct dct_importer *im)
{
	if (!im->sum.malformed_first_line)
		im->sum.malformed_first_line = im->lineno;
	im->sum.malformed++;
}

/* Append an op; its index, or -1 (out of memory, or after the EXIT). */
long long im_add_op(struct dct_importer *im, struct proc *p, unsigned kind,
			unsigned flags, int err, uint64_t line)
{
	struct dct_op *o;

	if (p->has_exit) {
		im_count_malformed(im);	/* a call after the process's end */
		return -1;
	}
	if (dct_grow(&p->ops, &p->cap, p->nops + 1, sizeof(*p->ops))) {
		im->oom = true;
		return -1;
	}
	o = &p->ops[p->nops];
	o->kind = (uint8_t)kind;
	o->flags = (uint8_t)flags;
	o->err = (int16_t)err;
	o->path = o->path2 = o->child = DCT_NONE;
	o->line = im_clamp_line(line);
	return (long long)p->nops++;
}

static void kill_op(struct dct_importer *im, struct proc *p, uint64_t op)
{
	if (p->ops[op].kind != DEAD_OP)
		im->sum.unresolved++;
	p->ops[op].kind = DEAD_OP;
}

void im_drop_pending(struct dct_importer *im, struct proc *p)
{
	for (size_t i = 0; i < p->npend; i++) {
		kill_op(im, p, p->pend[i].op);
		free(p->pend[i].rel);
	}
	p->npend = 0;
}

uint32_t im_intern_abs(struct dct_importer *im, const char *base,
			   const char *rel, size_t rlen)
{
	long n = im_join_path(im->pbuf, base, rel, rlen);
	uint32_t id;

	if (n < 0) {
		im->sum.too_long++;
		return DCT_NONE;
	}
	id = strtab_intern(&im->paths, im->pbuf, (size_t)n);
	if (id == DCT_NONE)
		im->oom = true;
	return id;
}

/* The unknown directory turned out to be base: resolve what waited for it. */
static void resolve_pending(struct dct_importer *im, struct proc *p, const char *base)
{
	for (size_t i = 0; i < p->npend; i++) {
		struct pend *e = &p->pend[i];
		struct dct_op *o = &p->ops[e->op];
		uint32_t id = DCT_NONE;

		if (o->kind != DEAD_OP)
			id = im_intern_abs(im, base, e->rel, strlen(e->rel));
		if (id == DCT_NONE)
			o->kind = DEAD_OP;
		else if (e->slot == 0)
			o->path = id;
		else
			o->path2 = id;
		free(e->rel);
	}
	p->npend = 0;
}

bool im_set_str(struct dct_importer *im, char **dst, const char *s)
{
	char *c = strdup(s);

	if (!c) {
		im->oom = true;
		return false;
	}
	free(*dst);
	*dst = c;
	return true;
}

/* The directory the process stood in at fork is now known. */
void im_learn_base(struct dct_importer *im, struct proc *p, const char *base)
{
	if (p->cwd == NULL) {
		if (im_join_path(im->pbuf, base, p->cwd_rel, strlen(p->cwd_rel)) >= 0)
			im_set_str(im, &p->cwd, im->pbuf);
		else
			im->sum.too_long++;
	}
	resolve_pending(im, p, base);
	p->base_from_parent = false;
}

/*
 * Where an unknown cwd started, given that it is now abs: abs minus the
 * chdirs made since, when those were plain descents.  NULL if we cannot
 * tell (a ".." or a symlink in between).
 */
static const char *derive_base(struct dct_importer *im, const struct proc *p,
			       const char *abs)
{
	size_t n = strlen(abs), r = strlen(p->cwd_rel), b;

	if (r == 0)
		return abs;
	/* abs must be base + "/" + cwd_rel */
	if (dct_has_word((struct dct_span){ p->cwd_rel, r }, "..") || r >= n ||
	    memcmp(abs + n - r, p->cwd_rel, r) != 0 || abs[n - r - 1] != '/')
		return NULL;
	b = n - r - 1;
	if (b == 0)
		return "/";
	memcpy(im->sbuf, abs, b);
	im->sbuf[b] = '\0';
	return im->sbuf;
}

/* The kernel told us the cwd (AT_FDCWD annotation, getcwd): believe it. */
void im_adopt_cwd(struct dct_importer *im, struct proc *p, const char *abs)
{
	const char *base;

	if (p->cwd) {
		if (strcmp(p->cwd, abs) != 0) {
			im->sum.cwd_corrections++;
			im_set_str(im, &p->cwd, abs);
		}
		return;
	}
	if (p->npend) {
		base = derive_base(im, p, abs);
		if (base)
			resolve_pending(im, p, base);
		else
			im_drop_pending(im, p);
	}
	im_set_str(im, &p->cwd, abs);
	p->base_from_parent = false;
}

/* The cwd became unknowable (fchdir to an fd we cannot name). */
void im_lose_cwd(struct dct_importer *im, struct proc *p)
{
	im_drop_pending(im, p);
	free(p->cwd);
	p->cwd = NULL;
	im_set_str(im, &p->cwd_rel, "");
	p->base_from_parent = false;
}

void im_free_proc(struct proc *p)
{
	for (size_t i = 0; i < p->npend; i++)
		free(p->pend[i].rel);
	free(p->pend);
	free(p->ops);
	free(p->cwd);
	free(p->cwd_rel);
	free(p->unf);
	free(p);
}
