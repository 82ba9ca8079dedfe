// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * view.c - looking at a name, in the source or through the mount, the way
 * a user would (type, mode, owner, size, links, symlink target, contents,
 * xattr, listing), and comparing two such views.
 */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/rng.h"
#include "fs/coherence/run.h"

/* The listing as a count and a hash that does not depend on the order. */
void coh_list_dir(const char *path, struct view *v)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (!d) {
		v->list_err = errno;
		return;
	}
	errno = 0;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		v->list_n++;
		v->list_hash += rng_mix(hash_fnv1a(e->d_name, strlen(e->d_name), HASH_FNV_OFFSET));
	}
	if (errno)
		v->list_err = errno;
	closedir(d);
}

void coh_observe(const char *base, const struct check *c, struct view *v,
		    unsigned char *buf)
{
	char path[PATH_MAX];
	struct stat st;

	memset(v, 0, sizeof(*v));
	coh_at(path, base, c->path);
	if (lstat(path, &st) < 0) {
		v->err = errno;
		return;
	}
	v->mode = st.st_mode;
	v->uid = st.st_uid;
	v->gid = st.st_gid;
	v->size = st.st_size;
	v->nlink = st.st_nlink;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, v->target, sizeof(v->target) - 1);

		if (n < 0)
			v->target_err = errno;
		else
			v->target[n] = '\0';
	}
	if ((c->what & W_DATA) && S_ISREG(st.st_mode)) {
		ssize_t n = coh_read_file(path, buf, DATA_MAX + 1);

		if (n < 0) {
			v->data_err = errno;
		} else {
			v->data_len = (size_t)n;
			v->data_hash = hash_fnv1a(buf, (size_t)n, HASH_FNV_OFFSET);
		}
	}
	if ((c->what & W_XATTR) && !S_ISLNK(st.st_mode)) {
		ssize_t n = lgetxattr(path, XATTR_NAME, v->xattr, sizeof(v->xattr));

		if (n < 0)
			v->xattr_err = errno;
		else
			v->xattr_len = (size_t)n;
	}
	if ((c->what & W_LIST) && S_ISDIR(st.st_mode))
		coh_list_dir(path, v);
}

/* Does the mount's view a agree with the source's b on what? */
bool coh_same(const struct view *a, const struct view *b, unsigned what)
{
	if (a->err != b->err)
		return false;
	if (a->err)
		return true;
	if ((a->mode & S_IFMT) != (b->mode & S_IFMT))
		return false;
	if ((what & W_ATTR) &&
	    (a->mode != b->mode || a->uid != b->uid || a->gid != b->gid ||
	     a->size != b->size || a->nlink != b->nlink))
		return false;
	if ((what & W_ATTR) && S_ISLNK(a->mode) &&
	    (a->target_err != b->target_err || strcmp(a->target, b->target)))
		return false;
	if ((what & W_DATA) &&
	    (a->data_err != b->data_err || a->data_len != b->data_len ||
	     a->data_hash != b->data_hash))
		return false;
	if ((what & W_XATTR) &&
	    (a->xattr_err != b->xattr_err || a->xattr_len != b->xattr_len ||
	     memcmp(a->xattr, b->xattr, a->xattr_len)))
		return false;
	if ((what & W_LIST) &&
	    (a->list_err != b->list_err || a->list_n != b->list_n ||
	     a->list_hash != b->list_hash))
		return false;
	return true;
}

bool coh_dead(const struct view *v)
{
	return v->err == ENOTCONN || v->err == ECONNABORTED;
}

/* "file 0644 0:0 size 12 nlink 1 data 12 B #1a2b3c4d", for the report */
void coh_describe(const struct view *v, unsigned what, char *out, size_t size)
{
	int k;

	if (v->err) {
		coh_put(out, size, "%s", coh_err_name(v->err));
		return;
	}
	k = snprintf(out, size, "%s %04o %u:%u size %lld nlink %lu",
		     S_ISDIR(v->mode) ? "dir" : S_ISLNK(v->mode) ? "symlink" :
		     S_ISREG(v->mode) ? "file" : "other", (unsigned)(v->mode & 07777),
		     (unsigned)v->uid, (unsigned)v->gid, (long long)v->size,
		     (unsigned long)v->nlink);
	if (S_ISLNK(v->mode) && k >= 0 && (size_t)k < size)
		k += snprintf(out + k, size - (size_t)k, " -> %s",
			      v->target_err ? coh_err_name(v->target_err) : v->target);
	if ((what & W_DATA) && S_ISREG(v->mode) && k >= 0 && (size_t)k < size)
		k += v->data_err ?
		     snprintf(out + k, size - (size_t)k, " data %s", coh_err_name(v->data_err)) :
		     snprintf(out + k, size - (size_t)k, " data %zu B #%08x", v->data_len,
			      (unsigned)(v->data_hash >> 32));
	if ((what & W_XATTR) && k >= 0 && (size_t)k < size)
		k += v->xattr_err ?
		     snprintf(out + k, size - (size_t)k, " xattr %s", coh_err_name(v->xattr_err)) :
		     snprintf(out + k, size - (size_t)k, " xattr '%.*s'", (int)v->xattr_len,
			      v->xattr);
	if ((what & W_LIST) && S_ISDIR(v->mode) && k >= 0 && (size_t)k < size) {
		if (v->list_err)
			coh_put(out + k, size - (size_t)k, " listing %s", coh_err_name(v->list_err));
		else
			coh_put(out + k, size - (size_t)k, " listing %u names #%08x", v->list_n,
			    (unsigned)(v->list_hash >> 32));
	}
}
