// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coherence.c - `dcbench coherence` (docs/dcbench.md): how long a change
 * made directly in the source directory, behind a FUSE file system's
 * back, takes to show through the mount, and which changes never show.
 *
 * For each file system: a fresh tree in the source directory, mounted
 * (fsmount.c) and read through the mount by reader threads until the
 * kernel and the daemon have all of it cached, then N random changes, one
 * at a time, the readers still reading.  Before a change the mount must
 * show the old state of every name the change touches: looking at them is
 * what puts them in the kernel's caches, where they can go stale.  After
 * it, the mount is polled until it shows, for every one of those names,
 * what the source shows.  The lag runs from the return of the change's
 * last system call to the end of the first poll that agreed; a change
 * not seen within --give-up-ms is counted as never seen.  A share of the
 * changes is made through the mount instead, and must show in the source
 * and through the mount at once.
 *
 * With --flood N, before the first change and then every quarter of the
 * changes, many threads make N empty files as fast as the source takes
 * them, in a directory of the tree that no change touches, and go on
 * making more until the next change has been made (directly in the
 * source), then remove them all: a watcher of the source (dcfs's
 * coherence) falls behind, its event queue overflows, the change's event
 * is likely dropped, and the change must still show, as must every change
 * after it.  Afterwards the daemon's log tells how many overflows it saw.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "coherence.h"
#include "fsmount.h"
#include "common/json.h"

#define CMD		"coherence"
#define MAX_KINDS	9		/* every kind fsmount.c knows, once each */
#define POLL_NS		200000		/* between two polls of the mount */
#define MAX_CHECKS	24		/* names one change is checked on */
#define MAX_DESCENDANTS	8		/* checked below a renamed directory */
#define REL_MAX		256		/* a path inside the tree */
#define MAX_DEPTH	8		/* directories nest no deeper */
#define DATA_MAX	65536		/* files stay smaller */
#define BIG_FILE	16384		/* nothing is appended past this */
#define XATTR_NAME	"user.dcbench"
#define XATTR_MAX	64
#define MAX_EXAMPLES	5
#define MAX_READERS	64
#define NEVER		INT64_MAX	/* the lag of a change never seen */
#define FLOOD_DIR	".dcbench-flood"	/* in the tree's root: no change's */
#define FLOOD_THREADS	64		/* flooding threads at most */

const char dcb_coherence_help[] =
"usage: dcbench coherence --fs KIND[,KIND...] [--source DIR] [--mount DIR]\n"
"                         [--changes N] [--bound-ms B] [--give-up-ms G] [--seed S]\n"
"                         [--readers R] [--through-mount PERCENT] [--peer-timeout S]\n"
"                         [--dcfs-args \"ARGS\"] [--workdir DIR] [--json FILE]\n"
"                         [--flood N [--require-overflow]] [--require-bound]\n"
"\n"
"For each KIND: makes a fresh tree in the source directory, mounts it, reads\n"
"all of it through the mount, then makes N random changes directly in the\n"
"source, one at a time, while R threads keep reading through the mount.\n"
"Before each change the mount must show the old state of the names it\n"
"touches; after it, the mount is polled every 200 us until it shows what the\n"
"source shows (type, mode, owner, size, links, symlink target, contents,\n"
"xattr, directory listing).  Reports the lag per kind of change: p50, p99,\n"
"max, how many took longer than B ms, how many were never seen within G ms.\n"
"\n"
"  --fs KIND[,...]     file systems: rcu, global, rwlock (dcfs in that mode,\n"
"                      with its own default timeouts), rcu-uring, ...\n"
"                      (with --uring), passthrough_ll, passthrough_ll-dp\n"
"                      (libfuse's example, built in the work directory), and\n"
"                      native (no mount: a control, every lag about 0)\n"
"  --source DIR        the directory mounted; each tree is made in a new\n"
"                      directory in it, removed afterwards (default WORKDIR/src)\n"
"  --mount DIR         the mount point, an empty directory (default WORKDIR/mnt)\n"
"  --changes N         changes per file system (default 1000)\n"
"  --bound-ms B        a change seen later than this is stale (default 100)\n"
"  --give-up-ms G      a change not seen by then is never seen (default 3000)\n"
"  --seed S            the tree and the changes (default 1; the same for each KIND)\n"
"  --readers R         threads reading through the mount all along (default 2)\n"
"  --through-mount P   percent of the changes made through the mount (default 10)\n"
"  --peer-timeout S    passthrough_ll's -o timeout= in seconds (default: its own, 1 s)\n"
"  --dcfs-args \"ARGS\"  more dcfs options, split at spaces (e.g. \"--attr-timeout 0\");\n"
"                      --dcfs-opts is the same\n"
"  --workdir DIR       passthrough_ll's build, the daemons' logs, the default source\n"
"                      and mount point; kept.  Default: a new directory under\n"
"                      $TMPDIR or /tmp, removed afterwards\n"
"  --json FILE         the results as one JSON document in FILE ('-': stdout, and\n"
"                      the report goes to stderr)\n"
"  --flood N           before the first change and then every quarter of them,\n"
"                      make N empty files in the tree's " FLOOD_DIR " as fast as\n"
"                      possible, and more while the next change is made (in the\n"
"                      source), then remove them: the daemon's event queue\n"
"                      overflows (default 0: no floods); the report says how many\n"
"                      overflows dcfs logged\n"
"  --require-overflow  with --flood: exit 1 if a dcfs kind logged no overflow\n"
"  --require-bound     exit 1 if any change was seen later than B ms, never seen,\n"
"                      or failed\n"
"  -h, --help          this help\n"
"\n"
"Needs root (mounts, chown) and /dev/fuse.\n"
"Exit status: 0 if every file system ran; 1 if one could not be set up, mounted\n"
"or stopped cleanly (or --require-bound or --require-overflow was not met);\n"
"2 usage error.\n";

enum chg {
	C_CREATE, C_UNLINK, C_RENAME, C_RENAME_DIR, C_MKDIR, C_RMDIR,
	C_REPLACE, C_PWRITE, C_TRUNCATE, C_APPEND, C_CHMOD, C_CHOWN,
	C_LINK, C_UNLINK_LINK, C_RETARGET, C_SETXATTR, C_RMXATTR, C_NCHG
};

static const char *const chg_names[C_NCHG] = {
	"create", "unlink", "rename", "rename-dir", "mkdir", "rmdir",
	"replace", "pwrite", "truncate", "append", "chmod", "chown",
	"link", "unlink-link", "retarget", "setxattr", "removexattr",
};

struct setup {
	const char *kinds[MAX_KINDS];
	unsigned nkinds;
	char source[PATH_MAX], mount[PATH_MAX], work[PATH_MAX];
	unsigned changes, bound_ms, give_up_ms, seed, readers, through;
	unsigned flood;			/* files per flood; 0: no floods */
	double peer_to;			/* < 0: passthrough_ll's own */
	const char *dcfs_args, *json;
	bool require, require_overflow;
	mode_t umask;
};

/* A name the tree holds, as the source has it. */
struct ent {
	char path[REL_MAX];
	char type;			/* 'f' file, 'd' directory, 'l' symlink */
};

struct names {
	struct ent *e;
	size_t n, cap;
	pthread_mutex_t lock;		/* readers copy a path under it */
};

/* What to compare on a name, besides whether it exists and its type. */
enum { W_ATTR = 1, W_DATA = 2, W_XATTR = 4, W_LIST = 8 };

struct check {
	char path[REL_MAX];
	unsigned what;
};

/* A name as one side shows it: what a user would look at. */
struct view {
	int err;			/* of lstat: 0 or ENOENT, ... */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	off_t size;
	nlink_t nlink;
	int target_err;
	char target[REL_MAX];
	int data_err;
	size_t data_len;
	uint64_t data_hash;
	int xattr_err;
	size_t xattr_len;
	char xattr[XATTR_MAX];
	int list_err;
	unsigned list_n;
	uint64_t list_hash;
};

struct plan {
	enum chg chg;
	bool via_mount;
	char type;			/* of a */
	char a[REL_MAX], b[REL_MAX], tmp[REL_MAX], target[REL_MAX];
	mode_t mode;
	uid_t uid;
	gid_t gid;
	off_t off, size;
	unsigned char data[4096];	/* the bytes written */
	size_t n;
	char xval[XATTR_MAX];
	size_t xlen;
	uint64_t want_hash;		/* a's contents afterwards */
	size_t want_len;
	nlink_t want_nlink;
	struct check chk[MAX_CHECKS];
	unsigned nchk;
};

struct rec {
	unsigned char chg;
	bool via_mount, failed;
	bool flood;			/* made during a flood */
	int64_t lag;			/* ns, or NEVER; direct changes only */
};

struct run;
struct flood;

struct reader {
	pthread_t thread;
	struct run *r;
	unsigned id;
	uint64_t rng, ops;
};

struct stats {
	unsigned direct, over, never, via, failed;
	int64_t p50, p99, max, max_seen;	/* ns; -1 when nothing measured */
};

struct run {
	const struct setup *s;
	const char *kind;
	char name[64];			/* the tree's directory in the source */
	char src[PATH_MAX];		/* the tree's root in the source */
	char mnt[PATH_MAX];		/* and through the mount */
	struct names names, quar;	/* the tree; what was left stale */
	uint64_t rng;
	unsigned next;			/* for fresh names */
	bool xattrs;
	size_t entries;			/* the tree as made */
	unsigned char *buf;		/* DATA_MAX + 1: what a look reads */
	unsigned char *old;		/* 2 * DATA_MAX: a file, as it will be */
	struct rec *recs;
	size_t nrec;
	uint64_t skipped, reader_ops;
	double warm_s;
	unsigned floods;		/* made */
	uint64_t flood_files;		/* files they made, all together */
	struct flood *flood;		/* one is under way */
	unsigned flood_changes;		/* direct changes timed during them */
	int64_t flood_max;		/* their largest lag (ns, NEVER); -1: none */
	int overflows;			/* the daemon logged; -1: no dcfs log */
	double flood_s;			/* the floods' own time, all together */
	char flood_err[320];
	atomic_bool stop;
	atomic_uint warm;
	bool tried, ran, dead;
	char error[512], note[256];
	char never[MAX_EXAMPLES][640], late[MAX_EXAMPLES][640], fails[MAX_EXAMPLES][640];
	unsigned nnever, nlate, nfails;
	const char *moving;		/* the directory a destination is sought for */
	size_t moving_height, moving_len;
	struct stats all, by[C_NCHG];
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

/* ---- small things ---------------------------------------------------------- */

static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* splitmix64: one seed makes the same tree and the same changes. */
static uint64_t rnd(uint64_t *s)
{
	return mix(*s += 0x9e3779b97f4a7c15ULL);
}

static unsigned below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(rnd(s) % n) : 0;
}

/* snprintf for text that may be cut short (names are kept short enough
 * that paths never are) */
static void __attribute__((format(printf, 3, 4)))
put(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

static int64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void pause_poll(void)
{
	struct timespec t = { 0, POLL_NS };

	nanosleep(&t, NULL);
}

#define FNV0	0xcbf29ce484222325ULL

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

static const char *err_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : strerror(err);
}

/* Is path dir itself or below it? */
static bool within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

static unsigned depth(const char *path)
{
	unsigned d = 1;

	for (; *path; path++)
		d += *path == '/';
	return d;
}

static void at(char *out, const char *base, const char *rel)
{
	put(out, PATH_MAX, "%s/%s", base, rel);
}

/* "d0/s1" for "d0/s1/f3"; "." for a name at the top. */
static void parent_of(const char *path, char *out)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		put(out, REL_MAX, ".");
	else
		put(out, REL_MAX, "%.*s", (int)(slash - path), path);
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads at most max bytes of path; the length, or -1 with errno. */
static ssize_t read_file(const char *path, unsigned char *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	int saved;

	if (fd < 0)
		return -1;
	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (ssize_t)got;
}

/* ---- the names ----------------------------------------------------------------- */

static int names_add(struct names *t, const char *path, char type)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct ent *e;

		pthread_mutex_lock(&t->lock);
		e = realloc(t->e, cap * sizeof(*e));
		if (e) {
			t->e = e;
			t->cap = cap;
		}
		pthread_mutex_unlock(&t->lock);
		if (!e)
			return -1;
	}
	pthread_mutex_lock(&t->lock);
	put(t->e[t->n].path, REL_MAX, "%s", path);
	t->e[t->n].type = type;
	t->n++;
	pthread_mutex_unlock(&t->lock);
	return 0;
}

static void names_del(struct names *t, const char *path)
{
	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->e[i].path, path)) {
			t->e[i] = t->e[--t->n];
			break;
		}
	pthread_mutex_unlock(&t->lock);
}

/* from, and everything below it, is now called to. */
static void names_move(struct names *t, const char *from, const char *to)
{
	size_t n = strlen(from);

	pthread_mutex_lock(&t->lock);
	for (size_t i = 0; i < t->n; i++) {
		char moved[REL_MAX];

		if (!within(t->e[i].path, from))
			continue;
		put(moved, sizeof(moved), "%s%s", to, t->e[i].path + n);
		memcpy(t->e[i].path, moved, sizeof(moved));
	}
	pthread_mutex_unlock(&t->lock);
}

static bool has_children(const struct names *t, const char *dir)
{
	size_t n = strlen(dir);

	for (size_t i = 0; i < t->n; i++)
		if (!strncmp(t->e[i].path, dir, n) && t->e[i].path[n] == '/')
			return true;
	return false;
}

/*
 * Names the mount never caught up with are left alone from then on, so
 * that every change is measured from a mount that showed its old state:
 * 'n', the name itself (and everything found through it), or 'l', only a
 * directory's listing (the names in it may still change).
 */
static bool usable(const struct run *r, const char *path)
{
	for (size_t i = 0; i < r->quar.n; i++)
		if (r->quar.e[i].type == 'n' && within(path, r->quar.e[i].path))
			return false;
	return true;
}

static bool listing_stale(const struct run *r, const char *dir)
{
	for (size_t i = 0; i < r->quar.n; i++)
		if (r->quar.e[i].type == 'l' && !strcmp(dir, r->quar.e[i].path))
			return true;
	return false;
}

/* Does a stale name lie below dir? */
static bool holds_stale(const struct run *r, const char *dir)
{
	for (size_t i = 0; i < r->quar.n; i++)
		if (strcmp(dir, r->quar.e[i].path) && within(r->quar.e[i].path, dir))
			return true;
	return false;
}

static void quarantine(struct run *r, const char *path, char type)
{
	if (strcmp(path, ".") && usable(r, path) && !(type == 'l' && listing_stale(r, path)))
		names_add(&r->quar, path, type);
}

/* ---- looking at a name ------------------------------------------------------------ */

/* The listing as a count and a hash that does not depend on the order. */
static void list_dir(const char *path, struct view *v)
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
		v->list_hash += mix(fnv(e->d_name, strlen(e->d_name), FNV0));
	}
	if (errno)
		v->list_err = errno;
	closedir(d);
}

static void observe(const char *base, const struct check *c, struct view *v,
		    unsigned char *buf)
{
	char path[PATH_MAX];
	struct stat st;

	memset(v, 0, sizeof(*v));
	at(path, base, c->path);
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
		ssize_t n = read_file(path, buf, DATA_MAX + 1);

		if (n < 0) {
			v->data_err = errno;
		} else {
			v->data_len = (size_t)n;
			v->data_hash = fnv(buf, (size_t)n, FNV0);
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
		list_dir(path, v);
}

/* Does the mount's view a agree with the source's b on what? */
static bool same(const struct view *a, const struct view *b, unsigned what)
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

static bool dead(const struct view *v)
{
	return v->err == ENOTCONN || v->err == ECONNABORTED;
}

/* "file 0644 0:0 size 12 nlink 1 data 12 B #1a2b3c4d", for the report */
static void describe(const struct view *v, unsigned what, char *out, size_t size)
{
	int k;

	if (v->err) {
		put(out, size, "%s", err_name(v->err));
		return;
	}
	k = snprintf(out, size, "%s %04o %u:%u size %lld nlink %lu",
		     S_ISDIR(v->mode) ? "dir" : S_ISLNK(v->mode) ? "symlink" :
		     S_ISREG(v->mode) ? "file" : "other", (unsigned)(v->mode & 07777),
		     (unsigned)v->uid, (unsigned)v->gid, (long long)v->size,
		     (unsigned long)v->nlink);
	if (S_ISLNK(v->mode) && k >= 0 && (size_t)k < size)
		k += snprintf(out + k, size - (size_t)k, " -> %s",
			      v->target_err ? err_name(v->target_err) : v->target);
	if ((what & W_DATA) && S_ISREG(v->mode) && k >= 0 && (size_t)k < size)
		k += v->data_err ?
		     snprintf(out + k, size - (size_t)k, " data %s", err_name(v->data_err)) :
		     snprintf(out + k, size - (size_t)k, " data %zu B #%08x", v->data_len,
			      (unsigned)(v->data_hash >> 32));
	if ((what & W_XATTR) && k >= 0 && (size_t)k < size)
		k += v->xattr_err ?
		     snprintf(out + k, size - (size_t)k, " xattr %s", err_name(v->xattr_err)) :
		     snprintf(out + k, size - (size_t)k, " xattr '%.*s'", (int)v->xattr_len,
			      v->xattr);
	if ((what & W_LIST) && S_ISDIR(v->mode) && k >= 0 && (size_t)k < size) {
		if (v->list_err)
			put(out + k, size - (size_t)k, " listing %s", err_name(v->list_err));
		else
			put(out + k, size - (size_t)k, " listing %u names #%08x", v->list_n,
			    (unsigned)(v->list_hash >> 32));
	}
}

/* ---- the tree ------------------------------------------------------------------ */

static int mk(struct run *r, const char *rel, char type, const char *target, size_t len)
{
	char path[PATH_MAX];
	int fd;

	at(path, r->src, rel);
	if (type == 'd') {
		if (mkdir(path, 0755) < 0)
			goto fail;
	} else if (type == 'l') {
		if (symlink(target, path) < 0)
			goto fail;
	} else if (target) {
		char from[PATH_MAX];

		at(from, r->src, target);
		if (link(from, path) < 0)
			goto fail;
	} else {
		for (size_t i = 0; i < len; i++)
			r->buf[i] = (unsigned char)(' ' + below(&r->rng, 95));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0)
			goto fail;
		if (write_all(fd, r->buf, len) < 0) {
			close(fd);
			goto fail;
		}
		close(fd);
	}
	if (names_add(&r->names, rel, type) == 0)
		return 0;
	errno = ENOMEM;
fail:
	put(r->error, sizeof(r->error), "cannot make %s: %s", path, strerror(errno));
	return -1;
}

static int mk_xattr(struct run *r, const char *rel)
{
	char path[PATH_MAX], v[32];
	int n = snprintf(v, sizeof(v), "v%u", below(&r->rng, 1000000));

	at(path, r->src, rel);
	if (lsetxattr(path, XATTR_NAME, v, (size_t)n, 0) == 0)
		return 0;
	put(r->error, sizeof(r->error), "setxattr %s: %s", path, strerror(errno));
	return -1;
}

/*
 * Six top directories (never renamed or removed, so no change is made at
 * the root), four below each; in each of those eight files of up to
 * 1.5 KB, a symlink to a sibling, one to a cousin, a dangling one, a hard
 * link, xattrs on two files, a directory of four files and a symlink, and
 * an empty directory: 486 names.
 */
static int make_tree(struct run *r)
{
	char p[REL_MAX], q[REL_MAX];

	for (unsigned t = 0; t < 6; t++) {
		put(p, sizeof(p), "d%u", t);
		if (mk(r, p, 'd', NULL, 0))
			return -1;
		for (unsigned s = 0; s < 4; s++) {
			put(p, sizeof(p), "d%u/s%u", t, s);
			if (mk(r, p, 'd', NULL, 0))
				return -1;
			for (unsigned f = 0; f < 8; f++) {
				put(q, sizeof(q), "%s/f%u", p, f);
				if (mk(r, q, 'f', NULL, below(&r->rng, 1500)))
					return -1;
			}
			put(q, sizeof(q), "%s/l0", p);
			if (mk(r, q, 'l', "f0", 0))
				return -1;
			put(q, sizeof(q), "%s/l1", p);
			if (mk(r, q, 'l', "../s0/f1", 0))
				return -1;
			put(q, sizeof(q), "%s/l2", p);
			if (mk(r, q, 'l', "nowhere", 0))
				return -1;
			{
				char f1[REL_MAX];

				put(f1, sizeof(f1), "%s/f1", p);
				put(q, sizeof(q), "%s/h0", p);
				if (mk(r, q, 'f', f1, 0))
					return -1;
			}
			for (unsigned f = 2; f < 4 && r->xattrs; f++) {
				put(q, sizeof(q), "%s/f%u", p, f);
				if (mk_xattr(r, q))
					return -1;
			}
			put(q, sizeof(q), "%s/t0", p);
			if (mk(r, q, 'd', NULL, 0))
				return -1;
			for (unsigned f = 0; f < 4; f++) {
				put(q, sizeof(q), "%s/t0/g%u", p, f);
				if (mk(r, q, 'f', NULL, below(&r->rng, 1500)))
					return -1;
			}
			put(q, sizeof(q), "%s/t0/l0", p);
			if (mk(r, q, 'l', "../f2", 0))
				return -1;
			put(q, sizeof(q), "%s/e0", p);
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
static void remove_tree(const char *root)
{
	nftw(root, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* ---- floods ------------------------------------------------------------------- */

/* One flooding thread: its share of the files, in a directory of its own
 * (files made in one directory queue on its lock). */
struct flooder {
	pthread_t thread;
	struct flood *fl;
	int dfd;			/* FLOOD_DIR/K in the source; -1: none */
	unsigned k, n;			/* its share of --flood */
	atomic_uint made;
	atomic_bool done;
	int64_t end;			/* when its last file was removed */
	char err[160];			/* the first failure */
};

/* A flood under way. */
struct flood {
	struct flooder f[FLOOD_THREADS];
	unsigned t;
	atomic_bool stop;		/* the change is made: remove the files */
	int64_t t0;
};

/*
 * Makes the thread's share of files, and more (twice its share at most)
 * until the change in hand has been made, so that the queue is full then,
 * and still filling; then removes them all.
 */
static void *flooder_main(void *arg)
{
	struct flooder *f = arg;
	unsigned made = 0;
	char name[32];

	while ((made < f->n || !atomic_load(&f->fl->stop)) && made < 2 * f->n &&
	       !interrupted) {
		put(name, sizeof(name), "f%u", made);
		if (mknodat(f->dfd, name, S_IFREG | 0644, 0) < 0) {
			put(f->err, sizeof(f->err), "mknod %s/%u/%s: %s (after %u)", FLOOD_DIR,
			    f->k, name, err_name(errno), made);
			break;
		}
		atomic_store_explicit(&f->made, ++made, memory_order_relaxed);
	}
	atomic_store(&f->done, true);
	for (unsigned i = 0; i < made; i++) {
		put(name, sizeof(name), "f%u", i);
		if (unlinkat(f->dfd, name, 0) < 0 && errno != ENOENT && !f->err[0])
			put(f->err, sizeof(f->err), "unlink %s/%u/%s: %s", FLOOD_DIR, f->k, name,
			    err_name(errno));
	}
	f->end = now_ns();
	return NULL;
}

/* Flooding threads: eight per CPU, so that together they outrun a
 * watcher's one thread, sharing the CPUs with it, the readers and the
 * daemon, by enough to keep its queue full: the watcher frees room a read
 * at a time, and the flood fills it again before the next. */
static unsigned flooders(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 8 : n > FLOOD_THREADS / 8 ? FLOOD_THREADS : 8 * (unsigned)n;
}

/* FLOOD_DIR and a directory in it per flooding thread, in the source. */
static int make_flood_dirs(struct run *r)
{
	char path[PATH_MAX];

	at(path, r->src, FLOOD_DIR);
	if (mkdir(path, 0755) < 0)
		goto fail;
	for (unsigned k = 0; k < flooders(); k++) {
		put(path, sizeof(path), "%s/%s/%u", r->src, FLOOD_DIR, k);
		if (mkdir(path, 0755) < 0)
			goto fail;
	}
	return 0;
fail:
	put(r->error, sizeof(r->error), "cannot make %s: %s", path, strerror(errno));
	return -1;
}

/*
 * A flood's start: each flooding thread's directory looked up through the
 * mount (a watcher of directories, inotify, watches a directory once it is
 * looked up), then --flood N empty files made directly in the source, one
 * mknodat each, as fast as the source takes them, by flooders() threads.
 * Returns when all N are made; the threads go on making files until the
 * change in hand is made (flood_stop), then remove theirs (flood_end).  The
 * files are no names of the tree: nothing compares them, and the readers
 * never look at them.
 */
static void flood_begin(struct run *r, struct flood *fl)
{
	char path[PATH_MAX];
	struct stat st;
	bool all;

	memset(fl, 0, sizeof(*fl));
	fl->t = flooders();
	fl->t0 = now_ns();
	for (unsigned k = 0; k < fl->t; k++) {
		struct flooder *f = &fl->f[k];

		f->fl = fl;
		f->k = k;
		f->n = r->s->flood / fl->t + (k < r->s->flood % fl->t);
		put(path, sizeof(path), "%s/%s/%u", r->mnt, FLOOD_DIR, k);
		if (lstat(path, &st) < 0 && !r->flood_err[0])
			put(r->flood_err, sizeof(r->flood_err), "%s: %s (through the mount)",
			    path, err_name(errno));
		put(path, sizeof(path), "%s/%s/%u", r->src, FLOOD_DIR, k);
		f->dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (f->dfd < 0 && !r->flood_err[0])
			put(r->flood_err, sizeof(r->flood_err), "%s: %s", path, err_name(errno));
		if (f->dfd >= 0 && pthread_create(&f->thread, NULL, flooder_main, f)) {
			if (!r->flood_err[0])
				put(r->flood_err, sizeof(r->flood_err), "cannot start a flooding "
				    "thread");
			close(f->dfd);
			f->dfd = -1;
		}
	}
	do {
		all = true;
		for (unsigned k = 0; k < fl->t; k++) {
			struct flooder *f = &fl->f[k];

			all &= f->dfd < 0 || atomic_load(&f->done) ||
			       atomic_load_explicit(&f->made, memory_order_relaxed) >= f->n;
		}
		if (!all)
			usleep(200);
	} while (!all);
	r->flood = fl;
}

/* The change is made: the flood's files go. */
static void flood_stop(struct run *r)
{
	if (r->flood)
		atomic_store(&r->flood->stop, true);
}

/* ... and the flood's end: its files removed. */
static void flood_end(struct run *r)
{
	struct flood *fl = r->flood;
	int64_t end = fl->t0;
	bool any = false;

	flood_stop(r);
	r->flood = NULL;
	for (unsigned k = 0; k < fl->t; k++) {
		struct flooder *f = &fl->f[k];

		if (f->dfd < 0)
			continue;
		pthread_join(f->thread, NULL);
		close(f->dfd);
		any = true;
		r->flood_files += atomic_load(&f->made);
		if (f->end > end)
			end = f->end;
		if (f->err[0] && !r->flood_err[0])
			put(r->flood_err, sizeof(r->flood_err), "%s", f->err);
	}
	if (any)
		r->floods++;
	r->flood_s += (double)(end - fl->t0) * 1e-9;
}

/* The overflows the daemon logged (src/watch.c's "coherence: ... overflowed
 * on ..."), or -1 when it is no dcfs or its log cannot be read. */
static int overflows_logged(const struct run *r)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int n = 0;
	FILE *f;

	if (!fsm_kind_dcfs(r->kind))
		return -1;
	put(path, sizeof(path), "%s/daemon-%s.log", r->s->work, r->kind);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (getline(&line, &cap, f) > 0)
		/* the queue overflowed, or was skipped on the brink of it */
		n += strstr(line, "coherence: ") && (strstr(line, " overflowed on ") ||
						     strstr(line, " near overflow on "));
	free(line);
	fclose(f);
	return n;
}

/* ---- readers ------------------------------------------------------------------ */

/* Everything a user might look at on a name, through the mount. */
static void visit(const struct run *r, const char *rel, char type, bool negative,
		  unsigned char *buf)
{
	char path[PATH_MAX], target[REL_MAX];
	struct stat st;

	at(path, r->mnt, rel);
	if (lstat(path, &st) < 0)
		return;
	if (type == 'l') {
		if (readlink(path, target, sizeof(target)) < 0)
			return;
	} else if (type == 'f') {
		read_file(path, buf, DATA_MAX + 1);
	} else if (type == 'd') {
		struct view v = { 0 };

		list_dir(path, &v);
		if (negative) {
			char none[PATH_MAX + 16];

			put(none, sizeof(none), "%s/.dcbench-none", path);
			lstat(none, &st);
		}
	}
	if (type != 'l' && r->xattrs)
		lgetxattr(path, XATTR_NAME, target, sizeof(target));
}

/* Every name of the tree as made, dealt round-robin to the readers. */
static void warm_up(struct run *r, unsigned id, unsigned n, unsigned char *buf)
{
	for (size_t i = id; i < r->entries && !interrupted; i += n) {
		struct ent e;

		pthread_mutex_lock(&r->names.lock);
		e = r->names.e[i];
		pthread_mutex_unlock(&r->names.lock);
		visit(r, e.path, e.type, true, buf);
	}
}

/* A random name, or one in a random directory that is not there. */
static void look(struct run *r, struct reader *rd, unsigned char *buf)
{
	struct ent e;
	bool missing = below(&rd->rng, 8) == 0;

	pthread_mutex_lock(&r->names.lock);
	e = r->names.e[below(&rd->rng, (unsigned)r->names.n)];
	pthread_mutex_unlock(&r->names.lock);
	if (missing) {
		char dir[REL_MAX], rel[REL_MAX + 16], path[PATH_MAX];
		struct stat st;

		if (e.type == 'd')
			memcpy(dir, e.path, sizeof(dir));
		else
			parent_of(e.path, dir);
		put(rel, sizeof(rel), "%s/.none%u", dir, below(&rd->rng, 64));
		at(path, r->mnt, rel);
		lstat(path, &st);
		return;
	}
	visit(r, e.path, e.type, false, buf);
}

static void *reader_main(void *arg)
{
	struct reader *rd = arg;
	struct run *r = rd->r;
	unsigned char *buf = malloc(DATA_MAX + 1);

	if (buf)
		warm_up(r, rd->id, r->s->readers, buf);
	atomic_fetch_add(&r->warm, 1);
	while (buf && !atomic_load(&r->stop) && !interrupted) {
		look(r, rd, buf);
		rd->ops++;
	}
	free(buf);
	return NULL;
}

/* ---- planning a change ---------------------------------------------------------- */

typedef bool (*filter)(struct run *r, const struct ent *e);

static bool src_stat(const struct run *r, const char *rel, struct stat *st)
{
	char path[PATH_MAX];

	at(path, r->src, rel);
	return lstat(path, st) == 0;
}

static bool f_file(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'f';
}

static bool f_file_or_link(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'f' || e->type == 'l';
}

static bool f_file_or_dir(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'f' || e->type == 'd';
}

static bool f_any(struct run *r, const struct ent *e)
{
	(void)r;
	(void)e;
	return true;
}

static bool f_link(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'l';
}

/* a directory a name can be made in */
static bool f_dir(struct run *r, const struct ent *e)
{
	return e->type == 'd' && depth(e->path) < MAX_DEPTH &&
	       strlen(e->path) + 16 < REL_MAX && !listing_stale(r, e->path);
}

/* below the top: the top directories stay */
static bool f_movable_dir(struct run *r, const struct ent *e)
{
	(void)r;
	return e->type == 'd' && depth(e->path) >= 2;
}

static bool f_empty_dir(struct run *r, const struct ent *e)
{
	return f_movable_dir(r, e) && !has_children(&r->names, e->path);
}

static bool f_linked_file(struct run *r, const struct ent *e)
{
	struct stat st;

	return e->type == 'f' && src_stat(r, e->path, &st) && st.st_nlink >= 2;
}

static bool f_small_file(struct run *r, const struct ent *e)
{
	struct stat st;

	return e->type == 'f' && src_stat(r, e->path, &st) && st.st_size < BIG_FILE;
}

static bool f_middle_file(struct run *r, const struct ent *e)
{
	struct stat st;

	return e->type == 'f' && src_stat(r, e->path, &st) && st.st_size >= 16;
}

static bool f_with_xattr(struct run *r, const struct ent *e)
{
	char path[PATH_MAX];

	if (!f_file_or_dir(r, e))
		return false;
	at(path, r->src, e->path);
	return lgetxattr(path, XATTR_NAME, NULL, 0) >= 0;
}

/* where r->moving can go: not below itself, and not too deep or long */
static bool f_dest(struct run *r, const struct ent *e)
{
	return f_dir(r, e) && !within(e->path, r->moving) &&
	       depth(e->path) + r->moving_height <= MAX_DEPTH &&
	       strlen(e->path) + 12 + r->moving_len < REL_MAX;
}

/* A random usable name that f accepts, copied to out; false if none. */
static bool pick(struct run *r, filter f, char *out, char *type)
{
	unsigned seen = 0;
	size_t got = 0;

	for (size_t i = 0; i < r->names.n; i++) {
		const struct ent *e = &r->names.e[i];

		if (!usable(r, e->path) || !f(r, e))
			continue;
		if (below(&r->rng, ++seen) == 0)
			got = i;
	}
	if (!seen)
		return false;
	put(out, REL_MAX, "%s", r->names.e[got].path);
	if (type)
		*type = r->names.e[got].type;
	return true;
}

static void fresh(struct run *r, const char *dir, const char *prefix, char *out)
{
	put(out, REL_MAX, "%s/%s%u", dir, prefix, r->next++);
}

static void want(struct plan *p, const char *path, unsigned what)
{
	for (unsigned i = 0; i < p->nchk; i++)
		if (!strcmp(p->chk[i].path, path)) {
			p->chk[i].what |= what;
			return;
		}
	if (p->nchk == MAX_CHECKS)
		return;
	put(p->chk[p->nchk].path, REL_MAX, "%s", path);
	p->chk[p->nchk++].what = what;
}

static void want_parent(struct plan *p, const char *path)
{
	char dir[REL_MAX];

	parent_of(path, dir);
	want(p, dir, W_LIST);
}

/* The other names of path's inode: their link count, and for data and
 * xattrs their contents, change with it. */
static void want_links(struct run *r, struct plan *p, const char *path, unsigned what)
{
	struct stat st, o;

	if (!src_stat(r, path, &st) || !S_ISREG(st.st_mode) || st.st_nlink < 2)
		return;
	for (size_t i = 0; i < r->names.n; i++) {
		const struct ent *e = &r->names.e[i];

		if (e->type == 'f' && strcmp(e->path, path) && src_stat(r, e->path, &o) &&
		    o.st_ino == st.st_ino && o.st_dev == st.st_dev)
			want(p, e->path, W_ATTR | what);
	}
}

static void random_bytes(struct run *r, unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(' ' + below(&r->rng, 95));
}

/* a's contents as the source holds them, into r->old; the length or -1 */
static ssize_t old_data(struct run *r, const char *rel)
{
	char path[PATH_MAX];

	at(path, r->src, rel);
	return read_file(path, r->old, DATA_MAX);
}

static bool plan_create(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "c", p->a);
	p->type = 'f';
	p->n = below(&r->rng, 2049);
	random_bytes(r, p->data, p->n);
	p->want_len = p->n;
	p->want_hash = fnv(p->data, p->n, FNV0);
	want(p, p->a, W_ATTR | W_DATA);
	want_parent(p, p->a);
	return true;
}

static bool plan_unlink(struct run *r, struct plan *p)
{
	if (!pick(r, f_file_or_link, p->a, &p->type))
		return false;
	want(p, p->a, W_ATTR);
	want_parent(p, p->a);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_rename(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_file_or_link, p->a, &p->type) || !pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "r", p->b);
	want(p, p->a, W_ATTR);
	want(p, p->b, W_ATTR);
	want_parent(p, p->a);
	want_parent(p, p->b);
	return true;
}

static bool plan_rename_dir(struct run *r, struct plan *p)
{
	char dir[REL_MAX];
	size_t below_n = 0, height = 0, len = 0, n;
	size_t idx[MAX_DESCENDANTS];

	if (!pick(r, f_movable_dir, p->a, &p->type))
		return false;
	n = strlen(p->a);
	for (size_t i = 0; i < r->names.n; i++) {
		const char *q = r->names.e[i].path;

		if (!within(q, p->a))
			continue;
		if (depth(q) - depth(p->a) + 1 > height)
			height = depth(q) - depth(p->a) + 1;
		if (strlen(q) - n > len)
			len = strlen(q) - n;
		if (!strcmp(q, p->a))
			continue;
		/* a reservoir: which names below it are checked */
		if (below_n < MAX_DESCENDANTS) {
			idx[below_n] = i;
		} else {
			unsigned k = below(&r->rng, (unsigned)below_n + 1);

			if (k < MAX_DESCENDANTS)
				idx[k] = i;
		}
		below_n++;
	}
	r->moving = p->a;
	r->moving_height = height;
	r->moving_len = len;
	if (!pick(r, f_dest, dir, NULL))
		return false;
	fresh(r, dir, "R", p->b);
	want(p, p->a, W_ATTR);
	want(p, p->b, W_ATTR | W_LIST);
	want_parent(p, p->a);
	want_parent(p, p->b);
	for (size_t k = 0; k < below_n && k < MAX_DESCENDANTS; k++) {
		char moved[REL_MAX];

		put(moved, sizeof(moved), "%s%s", p->b, r->names.e[idx[k]].path + n);
		want(p, moved, W_ATTR);
	}
	return true;
}

static bool plan_mkdir(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "m", p->a);
	p->type = 'd';
	want(p, p->a, W_ATTR | W_LIST);
	want_parent(p, p->a);
	return true;
}

static bool plan_rmdir(struct run *r, struct plan *p)
{
	if (!pick(r, f_empty_dir, p->a, &p->type))
		return false;
	want(p, p->a, W_ATTR);
	want_parent(p, p->a);
	return true;
}

static bool plan_replace(struct run *r, struct plan *p)
{
	char dir[REL_MAX];

	if (!pick(r, f_file, p->a, &p->type))
		return false;
	parent_of(p->a, dir);
	fresh(r, dir, ".tmp", p->tmp);
	p->n = below(&r->rng, 2049);
	random_bytes(r, p->data, p->n);
	p->want_len = p->n;
	p->want_hash = fnv(p->data, p->n, FNV0);
	want(p, p->a, W_ATTR | W_DATA);
	want(p, p->tmp, W_ATTR);
	want_parent(p, p->a);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_pwrite(struct run *r, struct plan *p)
{
	ssize_t len;

	if (!pick(r, f_middle_file, p->a, &p->type) || (len = old_data(r, p->a)) < 16)
		return false;
	p->n = 1 + below(&r->rng, (unsigned)(len / 2 < 64 ? len / 2 : 64));
	p->off = (off_t)(1 + below(&r->rng, (unsigned)((size_t)len - p->n - 1)));
	random_bytes(r, p->data, p->n);
	/* every byte differs, so the write always shows */
	for (size_t i = 0; i < p->n; i++) {
		if (p->data[i] == r->old[p->off + (off_t)i])
			p->data[i] ^= 1;
		r->old[p->off + (off_t)i] = p->data[i];
	}
	p->want_len = (size_t)len;
	p->want_hash = fnv(r->old, (size_t)len, FNV0);
	want(p, p->a, W_ATTR | W_DATA);
	want_links(r, p, p->a, W_DATA);
	return true;
}

static bool plan_truncate(struct run *r, struct plan *p)
{
	ssize_t len;

	if (!pick(r, f_small_file, p->a, &p->type) || (len = old_data(r, p->a)) < 0)
		return false;
	if (len > 0 && below(&r->rng, 4))
		p->size = below(&r->rng, (unsigned)len);
	else
		p->size = len + 1 + below(&r->rng, 1024);
	if (p->size > len)
		memset(r->old + len, 0, (size_t)(p->size - len));
	p->want_len = (size_t)p->size;
	p->want_hash = fnv(r->old, (size_t)p->size, FNV0);
	want(p, p->a, W_ATTR | W_DATA);
	want_links(r, p, p->a, W_DATA);
	return true;
}

static bool plan_append(struct run *r, struct plan *p)
{
	ssize_t len;

	if (!pick(r, f_small_file, p->a, &p->type) || (len = old_data(r, p->a)) < 0)
		return false;
	p->n = 1 + below(&r->rng, 512);
	random_bytes(r, p->data, p->n);
	memcpy(r->old + len, p->data, p->n);
	p->want_len = (size_t)len + p->n;
	p->want_hash = fnv(r->old, p->want_len, FNV0);
	want(p, p->a, W_ATTR | W_DATA);
	want_links(r, p, p->a, W_DATA);
	return true;
}

static bool plan_chmod(struct run *r, struct plan *p)
{
	static const mode_t files[] = { 0600, 0640, 0644, 0664, 0700, 0755 };
	static const mode_t dirs[] = { 0700, 0711, 0750, 0755, 0775 };
	struct stat st;

	if (!pick(r, f_file_or_dir, p->a, &p->type) || !src_stat(r, p->a, &st))
		return false;
	do
		p->mode = p->type == 'd' ? dirs[below(&r->rng, 5)] : files[below(&r->rng, 6)];
	while (p->mode == (st.st_mode & 07777));
	want(p, p->a, W_ATTR);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_chown(struct run *r, struct plan *p)
{
	struct stat st;

	if (!pick(r, f_any, p->a, &p->type) || !src_stat(r, p->a, &st))
		return false;
	do {
		p->uid = below(&r->rng, 3) ? 1000 + below(&r->rng, 8) : 0;
		p->gid = below(&r->rng, 3) ? 1000 + below(&r->rng, 8) : 0;
	} while (p->uid == st.st_uid && p->gid == st.st_gid);
	want(p, p->a, W_ATTR);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_link(struct run *r, struct plan *p)
{
	char dir[REL_MAX];
	struct stat st;

	if (!pick(r, f_file, p->a, &p->type) || !src_stat(r, p->a, &st) ||
	    !pick(r, f_dir, dir, NULL))
		return false;
	fresh(r, dir, "k", p->b);
	p->want_nlink = st.st_nlink + 1;
	want(p, p->b, W_ATTR);
	want(p, p->a, W_ATTR);
	want_parent(p, p->b);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_unlink_link(struct run *r, struct plan *p)
{
	if (!pick(r, f_linked_file, p->a, &p->type))
		return false;
	want(p, p->a, W_ATTR);
	want_parent(p, p->a);
	want_links(r, p, p->a, 0);
	return true;
}

static bool plan_retarget(struct run *r, struct plan *p)
{
	char dir[REL_MAX], old[REL_MAX], path[PATH_MAX];
	ssize_t n;

	if (!pick(r, f_link, p->a, &p->type))
		return false;
	at(path, r->src, p->a);
	n = readlink(path, old, sizeof(old) - 1);
	if (n < 0)
		return false;
	old[n] = '\0';
	do {
		switch (below(&r->rng, 3)) {
		case 0:
			put(p->target, REL_MAX, "f%u", below(&r->rng, 8));
			break;
		case 1:
			put(p->target, REL_MAX, "../f%u", below(&r->rng, 8));
			break;
		default:
			put(p->target, REL_MAX, "gone%u", below(&r->rng, 1000));
		}
	} while (!strcmp(p->target, old));
	parent_of(p->a, dir);
	fresh(r, dir, ".tmp", p->tmp);
	want(p, p->a, W_ATTR);
	want(p, p->tmp, W_ATTR);
	want_parent(p, p->a);
	return true;
}

static bool plan_setxattr(struct run *r, struct plan *p)
{
	if (!pick(r, f_file_or_dir, p->a, &p->type))
		return false;
	p->xlen = (size_t)snprintf(p->xval, sizeof(p->xval), "v%u-%u", r->next++,
				   below(&r->rng, 1000000));
	want(p, p->a, W_ATTR | W_XATTR);
	want_links(r, p, p->a, W_XATTR);
	return true;
}

static bool plan_rmxattr(struct run *r, struct plan *p)
{
	if (!pick(r, f_with_xattr, p->a, &p->type))
		return false;
	want(p, p->a, W_ATTR | W_XATTR);
	want_links(r, p, p->a, W_XATTR);
	return true;
}

static bool (*const planners[C_NCHG])(struct run *, struct plan *) = {
	plan_create, plan_unlink, plan_rename, plan_rename_dir, plan_mkdir, plan_rmdir,
	plan_replace, plan_pwrite, plan_truncate, plan_append, plan_chmod, plan_chown,
	plan_link, plan_unlink_link, plan_retarget, plan_setxattr, plan_rmxattr,
};

/* Does p keep clear of every name the mount was left stale on? */
static bool clear_of_stale(const struct run *r, const struct plan *p)
{
	for (unsigned i = 0; i < p->nchk; i++)
		if (!usable(r, p->chk[i].path) ||
		    ((p->chk[i].what & W_LIST) && listing_stale(r, p->chk[i].path)))
			return false;
	return p->chg != C_RENAME_DIR || !holds_stale(r, p->a);
}

/* A random kind of change with a name to make it on; false if none fits. */
static bool plan_change(struct run *r, struct plan *p, bool via_mount)
{
	for (unsigned tries = 0; tries < 256; tries++) {
		enum chg c = (enum chg)below(&r->rng, C_NCHG);

		if (!r->xattrs && (c == C_SETXATTR || c == C_RMXATTR))
			continue;
		memset(p, 0, sizeof(*p));
		p->chg = c;
		p->via_mount = via_mount;
		if (planners[c](r, p) && clear_of_stale(r, p))
			return true;
	}
	return false;
}

/* ---- making it ------------------------------------------------------------------ */

static int put_file(const char *path, const void *data, size_t n, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);
	int err = 0;

	if (fd < 0)
		return errno;
	if (write_all(fd, data, n) < 0)
		err = errno;
	if (close(fd) < 0 && !err)
		err = errno;
	return err;
}

/* p's change under base (the tree in the source, or through the mount):
 * 0, or the errno of the call *call names. */
static int apply(const struct plan *p, const char *base, const char **call)
{
	char a[PATH_MAX], b[PATH_MAX], t[PATH_MAX];
	int err = 0, fd;

	at(a, base, p->a);
	at(b, base, p->b);
	at(t, base, p->tmp);
	*call = chg_names[p->chg];
	switch (p->chg) {
	case C_CREATE:
		return put_file(a, p->data, p->n, O_CREAT | O_EXCL);
	case C_UNLINK:
	case C_UNLINK_LINK:
		return unlink(a) < 0 ? errno : 0;
	case C_RENAME:
	case C_RENAME_DIR:
		return rename(a, b) < 0 ? errno : 0;
	case C_MKDIR:
		return mkdir(a, 0755) < 0 ? errno : 0;
	case C_RMDIR:
		return rmdir(a) < 0 ? errno : 0;
	case C_REPLACE:
		*call = "write of the new file";
		if ((err = put_file(t, p->data, p->n, O_CREAT | O_EXCL)))
			return err;
		*call = "rename over the file";
		return rename(t, a) < 0 ? errno : 0;
	case C_PWRITE: {
		ssize_t w;

		fd = open(a, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		w = pwrite(fd, p->data, p->n, p->off);
		if (w < 0)
			err = errno;
		else if ((size_t)w != p->n)
			err = EIO;
		if (close(fd) < 0 && !err)
			err = errno;
		return err;
	}
	case C_TRUNCATE:
		return truncate(a, p->size) < 0 ? errno : 0;
	case C_APPEND:
		return put_file(a, p->data, p->n, O_APPEND);
	case C_CHMOD:
		return chmod(a, p->mode) < 0 ? errno : 0;
	case C_CHOWN:
		return lchown(a, p->uid, p->gid) < 0 ? errno : 0;
	case C_LINK:
		return link(a, b) < 0 ? errno : 0;
	case C_RETARGET:
		*call = "symlink";
		if (symlink(p->target, t) < 0)
			return errno;
		*call = "rename over the symlink";
		return rename(t, a) < 0 ? errno : 0;
	case C_SETXATTR:
		return lsetxattr(a, XATTR_NAME, p->xval, p->xlen, 0) < 0 ? errno : 0;
	case C_RMXATTR:
		return lremovexattr(a, XATTR_NAME) < 0 ? errno : 0;
	case C_NCHG:
		break;
	}
	return EINVAL;
}

static bool is_type(const struct view *v, char type)
{
	return !v->err && (type == 'd' ? S_ISDIR(v->mode) : type == 'l' ? S_ISLNK(v->mode) :
			   S_ISREG(v->mode));
}

static bool has_data(const struct view *v, const struct plan *p)
{
	return is_type(v, 'f') && !v->data_err && v->data_len == p->want_len &&
	       v->data_hash == p->want_hash;
}

/* Does the source show what p meant to do?  v[i] is check i after it. */
static bool intended(const struct run *r, const struct plan *p, const struct view *v)
{
	switch (p->chg) {
	case C_CREATE:
	case C_REPLACE:
	case C_PWRITE:
	case C_TRUNCATE:
	case C_APPEND:
		return has_data(&v[0], p) && (p->chg != C_REPLACE || v[1].err == ENOENT);
	case C_UNLINK:
	case C_UNLINK_LINK:
	case C_RMDIR:
		return v[0].err == ENOENT;
	case C_RENAME:
	case C_RENAME_DIR:
		return v[0].err == ENOENT && is_type(&v[1], p->type);
	case C_MKDIR:
		return is_type(&v[0], 'd') && (v[0].mode & 07777) == (0755 & ~r->s->umask);
	case C_CHMOD:
		return !v[0].err && (v[0].mode & 07777) == p->mode;
	case C_CHOWN:
		return !v[0].err && v[0].uid == p->uid && v[0].gid == p->gid;
	case C_LINK:
		return is_type(&v[0], 'f') && v[0].nlink == p->want_nlink;
	case C_RETARGET:
		return is_type(&v[0], 'l') && !strcmp(v[0].target, p->target) &&
		       v[1].err == ENOENT;
	case C_SETXATTR:
		return !v[0].xattr_err && v[0].xattr_len == p->xlen &&
		       !memcmp(v[0].xattr, p->xval, p->xlen);
	case C_RMXATTR:
		return v[0].xattr_err == ENODATA;
	case C_NCHG:
		break;
	}
	return false;
}

/* The names as the source now has them. */
static void commit(struct run *r, const struct plan *p)
{
	switch (p->chg) {
	case C_CREATE:
	case C_MKDIR:
		names_add(&r->names, p->a, p->type);
		break;
	case C_LINK:
		names_add(&r->names, p->b, 'f');
		break;
	case C_UNLINK:
	case C_UNLINK_LINK:
	case C_RMDIR:
		names_del(&r->names, p->a);
		break;
	case C_RENAME:
	case C_RENAME_DIR:
		names_move(&r->names, p->a, p->b);
		names_move(&r->quar, p->a, p->b);
		break;
	default:
		break;
	}
}

/* ---- measuring it ----------------------------------------------------------------- */

enum { AGREED, NOT_SEEN, DEAD, STOPPED };

/*
 * Polls the mount until every check agrees with want[], or limit_ns has
 * passed since t0.  *lag runs from t0 to the end of the poll that agreed.
 * A poll stops at its first disagreement: *bad is the last such check
 * (MAX_CHECKS if there was none) and *seen what the mount showed.
 */
static int await(struct run *r, const struct plan *p, const struct view *want,
		 int64_t t0, int64_t limit_ns, int64_t *lag, unsigned *bad,
		 struct view *seen)
{
	struct view v;

	*bad = MAX_CHECKS;
	for (;;) {
		unsigned i;
		int64_t t;

		for (i = 0; i < p->nchk; i++) {
			observe(r->mnt, &p->chk[i], &v, r->buf);
			if (dead(&v))
				return DEAD;
			if (!same(&v, &want[i], p->chk[i].what)) {
				*seen = v;
				break;
			}
		}
		t = now_ns();
		if (i == p->nchk) {
			*lag = t - t0;
			return AGREED;
		}
		*bad = i;
		if (t - t0 >= limit_ns)
			return NOT_SEEN;
		if (interrupted)
			return STOPPED;
		pause_poll();
	}
}

static void example(char (*list)[640], unsigned *n, const struct plan *p,
		    const struct check *c, const char *what, const struct view *mnt,
		    const struct view *src)
{
	char m[256], s[256];

	if (*n == MAX_EXAMPLES)
		return;
	if (mnt && src) {
		describe(mnt, c->what, m, sizeof(m));
		describe(src, c->what, s, sizeof(s));
		put(list[(*n)++], 640, "%s%s %s%s%s: %s: mount %s, source %s", chg_names[p->chg],
		    p->via_mount ? " (through the mount)" : "", p->a, what ? ", " : "",
		    what ? what : "", c->path, m, s);
	} else {
		put(list[(*n)++], 640, "%s%s %s: %s", chg_names[p->chg],
		    p->via_mount ? " (through the mount)" : "", p->a, what);
	}
}

/* Every name of p the mount disagrees on, once given up on: the name, or
 * only its listing when that is all that differs. */
static void quarantine_stale(struct run *r, const struct plan *p, const struct view *want)
{
	struct view seen;

	for (unsigned i = 0; i < p->nchk; i++) {
		unsigned what = p->chk[i].what;

		observe(r->mnt, &p->chk[i], &seen, r->buf);
		if (same(&seen, &want[i], what))
			continue;
		quarantine(r, p->chk[i].path, same(&seen, &want[i], what & ~W_LIST) ? 'l' : 'n');
	}
}

/* A change seen after the bound: what the mount showed until then. */
static void late(struct run *r, const struct plan *p, int64_t lag, unsigned bad,
		 const struct view *seen, const struct view *now)
{
	char why[320];

	if (bad == MAX_CHECKS) {
		put(why, sizeof(why), "%.3f ms, the first look", (double)lag * 1e-6);
		example(r->late, &r->nlate, p, NULL, why, NULL, NULL);
	} else {
		put(why, sizeof(why), "%.3f ms", (double)lag * 1e-6);
		example(r->late, &r->nlate, p, &p->chk[bad], why, seen, &now[bad]);
	}
}

static void dead_mount(struct run *r)
{
	r->dead = true;
	put(r->error, sizeof(r->error), "the mount stopped answering (ENOTCONN): the "
	    "daemon died; see %s/daemon-%s.log", r->s->work, r->kind);
}

/*
 * One change: wait until the mount shows the old state of its names, make
 * it, check the source shows it, then time the mount (or, through the
 * mount, check both at once).  0 when made, 1 when skipped (the mount
 * never showed the old state), -1 to stop.
 */
static int run_change(struct run *r, struct plan *p)
{
	static struct view old[MAX_CHECKS], now[MAX_CHECKS];
	const int64_t give_up = (int64_t)r->s->give_up_ms * 1000000;
	struct view seen;
	const char *call;
	struct rec *rec;
	unsigned bad = 0;
	int64_t t0, lag;
	int err, st;

	for (unsigned i = 0; i < p->nchk; i++)
		observe(r->src, &p->chk[i], &old[i], r->buf);
	st = await(r, p, old, now_ns(), give_up, &lag, &bad, &seen);
	if (st == DEAD)
		dead_mount(r);
	if (st == DEAD || st == STOPPED)
		return -1;
	if (st == NOT_SEEN) {
		r->skipped++;
		quarantine_stale(r, p, old);
		return 1;
	}

	err = apply(p, p->via_mount ? r->mnt : r->src, &call);
	t0 = now_ns();
	flood_stop(r);
	for (unsigned i = 0; i < p->nchk; i++)
		observe(r->src, &p->chk[i], &now[i], r->buf);

	rec = &r->recs[r->nrec++];
	rec->chg = (unsigned char)p->chg;
	rec->via_mount = p->via_mount;
	rec->flood = r->flood != NULL;
	rec->lag = NEVER;
	if (err || !intended(r, p, now)) {
		char why[320];

		if (err)
			put(why, sizeof(why), "%s: %s", call, err_name(err));
		else
			put(why, sizeof(why), "the source does not show it");
		rec->failed = true;
		example(r->fails, &r->nfails, p, NULL, why, NULL, NULL);
		if (intended(r, p, now))
			commit(r, p);
		quarantine(r, p->a, 'n');
		return 0;
	}
	commit(r, p);
	if (p->via_mount) {
		for (unsigned i = 0; i < p->nchk; i++) {
			observe(r->mnt, &p->chk[i], &seen, r->buf);
			if (dead(&seen)) {
				dead_mount(r);
				return -1;
			}
			if (!same(&seen, &now[i], p->chk[i].what)) {
				rec->failed = true;
				example(r->fails, &r->nfails, p, &p->chk[i], NULL, &seen, &now[i]);
				quarantine_stale(r, p, now);
				break;
			}
		}
		return 0;
	}
	st = await(r, p, now, t0, give_up, &lag, &bad, &seen);
	if (st == DEAD)
		dead_mount(r);
	if (st == DEAD || st == STOPPED) {
		r->nrec--;
		return -1;
	}
	if (st == NOT_SEEN) {
		example(r->never, &r->nnever, p, &p->chk[bad], NULL, &seen, &now[bad]);
		quarantine_stale(r, p, now);
		return 0;
	}
	rec->lag = lag;
	if (lag > (int64_t)r->s->bound_ms * 1000000)
		late(r, p, lag, bad, &seen, now);
	return 0;
}

/*
 * The changes, one at a time.  With --flood, a flood begins before the
 * first change and then every quarter of them, and the change that follows
 * is made directly in the source while the flood still fills the watcher's
 * queue: its event is likely lost, and only the recovery from the overflow
 * can show it.
 */
static void run_changes(struct run *r)
{
	unsigned made = 0, attempts = 0, limit = 2 * r->s->changes + 100;
	unsigned every = r->s->changes / 4 ? r->s->changes / 4 : 1, next_flood = 0;
	struct flood fl;

	while (made < r->s->changes && !interrupted) {
		struct plan p;
		bool via;
		int rc;

		if (++attempts > limit) {
			put(r->note, sizeof(r->note), "stopped after %u changes: the mount "
			    "was stale before %llu of them", made,
			    (unsigned long long)r->skipped);
			break;
		}
		if (r->s->flood && made == next_flood && !r->flood) {
			flood_begin(r, &fl);
			next_flood += every;
		}
		via = below(&r->rng, 100) < r->s->through && !r->flood;
		if (!plan_change(r, &p, via)) {
			put(r->note, sizeof(r->note), "stopped after %u changes: no name "
			    "left that a change could be made on", made);
			break;
		}
		rc = run_change(r, &p);
		if (r->flood)
			flood_end(r);
		if (rc < 0)
			break;
		if (rc == 0)
			made++;
		if (cli_progress() && made % 50 == 0)
			fprintf(stderr, "\r  %s: %u/%u changes   ", r->kind, made, r->s->changes);
	}
	if (r->flood)
		flood_end(r);
}

/* ---- one file system -------------------------------------------------------------- */

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

	at(path, r->mnt, "d0/s0/f2");
	return lgetxattr(path, XATTR_NAME, v, sizeof(v)) > 0;
}

static int start_readers(struct run *r, struct reader *rd)
{
	unsigned n = r->s->readers;

	for (unsigned i = 0; i < n; i++) {
		rd[i].r = r;
		rd[i].id = i;
		rd[i].rng = r->s->seed * 1000003ULL + i + 1;
		if (pthread_create(&rd[i].thread, NULL, reader_main, &rd[i])) {
			put(r->error, sizeof(r->error), "cannot start reader threads");
			atomic_store(&r->stop, true);
			for (unsigned k = 0; k < i; k++)
				pthread_join(rd[k].thread, NULL);
			return -1;
		}
	}
	if (n == 0)
		warm_up(r, 0, 1, r->buf);
	while (atomic_load(&r->warm) < n && !interrupted)
		usleep(1000);
	return 0;
}

static void stop_readers(struct run *r, struct reader *rd)
{
	atomic_store(&r->stop, true);
	for (unsigned i = 0; i < r->s->readers; i++) {
		pthread_join(rd[i].thread, NULL);
		r->reader_ops += rd[i].ops;
	}
}

static void run_kind(struct run *r)
{
	const struct setup *s = r->s;
	struct reader rd[MAX_READERS];
	struct fsmount m;
	bool mounted = false;
	int64_t t;

	r->rng = s->seed;
	r->overflows = -1;
	put(r->name, sizeof(r->name), ".dcbench-coherence.%s.XXXXXX", r->kind);
	at(r->src, s->source, r->name);
	if (!mkdtemp(r->src)) {
		put(r->error, sizeof(r->error), "cannot make a directory in %s: %s",
		    s->source, strerror(errno));
		r->src[0] = '\0';
		return;
	}
	memmove(r->name, strrchr(r->src, '/') + 1, strlen(strrchr(r->src, '/') + 1) + 1);
	r->xattrs = source_xattrs(r);
	if (!r->xattrs)
		put(r->note, sizeof(r->note), "%s has no user xattrs: setxattr and "
		    "removexattr left out", s->source);
	if (make_tree(r) < 0)
		goto out;
	if (s->flood && make_flood_dirs(r) < 0)
		goto out;
	if (mount_kind(r, &m) < 0) {
		put(r->error, sizeof(r->error), "%s could not be mounted (why is on stderr; the "
		    "daemon's log is %s/daemon-%s.log)", r->kind, s->work, r->kind);
		goto out;
	}
	mounted = true;
	at(r->mnt, m.dir, r->name);
	if (access(r->mnt, F_OK) < 0) {
		put(r->error, sizeof(r->error), "%s does not show the tree: %s: %s",
		    r->kind, r->mnt, strerror(errno));
		goto out;
	}
	if (r->xattrs && !mount_xattrs(r)) {
		r->xattrs = false;
		put(r->note, sizeof(r->note), "%s shows no xattrs: setxattr and "
		    "removexattr left out", r->kind);
	}
	t = now_ns();
	if (start_readers(r, rd) < 0)
		goto out;
	r->warm_s = (double)(now_ns() - t) * 1e-9;
	run_changes(r);
	stop_readers(r, rd);
	r->ran = !interrupted && !r->dead;
out:
	if (cli_progress())
		fprintf(stderr, "\r%60s\r", "");
	if (mounted && fsm_stop(&m, NULL) < 0 && !r->error[0]) {
		put(r->error, sizeof(r->error), "%s did not end cleanly; see %s/daemon-%s.log",
		    r->kind, s->work, r->kind);
		r->ran = false;
	}
	if (mounted)
		r->overflows = overflows_logged(r);
	if (r->src[0])
		remove_tree(r->src);
}

/* ---- the report ----------------------------------------------------------------- */

static int cmp_lag(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* nearest rank: the smallest lag with at least q of them at or below it */
static int64_t rank(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	if (!n)
		return -1;
	return v[k ? k - 1 : 0];
}

static void summarise_one(const struct run *r, int chg, struct stats *st, int64_t *lags)
{
	const int64_t bound = (int64_t)r->s->bound_ms * 1000000;
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	st->max_seen = -1;
	for (size_t i = 0; i < r->nrec; i++) {
		const struct rec *x = &r->recs[i];

		if (chg >= 0 && x->chg != chg)
			continue;
		st->via += x->via_mount;
		st->failed += x->failed;
		if (x->via_mount || x->failed)
			continue;
		lags[n++] = x->lag;
		st->direct++;
		st->over += x->lag > bound;
		st->never += x->lag == NEVER;
		if (x->lag != NEVER && x->lag > st->max_seen)
			st->max_seen = x->lag;
	}
	qsort(lags, n, sizeof(*lags), cmp_lag);
	st->p50 = rank(lags, n, 0.50);
	st->p99 = rank(lags, n, 0.99);
	st->max = n ? lags[n - 1] : -1;
}

static int summarise(struct run *r)
{
	int64_t *lags = malloc((r->nrec + 1) * sizeof(*lags));

	if (!lags)
		return -1;
	summarise_one(r, -1, &r->all, lags);
	r->flood_changes = 0;
	r->flood_max = -1;
	for (size_t i = 0; i < r->nrec; i++) {
		const struct rec *x = &r->recs[i];

		if (!x->flood || x->via_mount || x->failed)
			continue;
		r->flood_changes++;
		if (x->lag > r->flood_max)
			r->flood_max = x->lag;
	}
	for (int c = 0; c < C_NCHG; c++)
		summarise_one(r, c, &r->by[c], lags);
	free(lags);
	return 0;
}

/* A lag in ms for the table: "-" unmeasured, ">G" never seen. */
static const char *ms(int64_t v, unsigned give_up_ms, char *buf, size_t size)
{
	if (v < 0)
		put(buf, size, "-");
	else if (v == NEVER)
		put(buf, size, ">%u", give_up_ms);
	else
		put(buf, size, "%.3f", (double)v * 1e-6);
	return buf;
}

static void print_row(FILE *f, const char *name, const struct stats *st, unsigned g)
{
	char a[32], b[32], c[32];

	fprintf(f, "%-12s %7u %10s %10s %10s %7u %6u %6u %6u\n", name, st->direct,
		ms(st->p50, g, a, sizeof(a)), ms(st->p99, g, b, sizeof(b)),
		ms(st->max, g, c, sizeof(c)), st->over, st->never, st->via, st->failed);
}

static void describe_kind(const struct run *r, char *out, size_t size)
{
	const struct setup *s = r->s;

	if (!strcmp(r->kind, "native"))
		put(out, size, "nothing mounted: the source itself");
	else if (!strncmp(r->kind, "passthrough_ll", 14) && s->peer_to >= 0)
		put(out, size, "%s, -o timeout=%g", r->kind, s->peer_to);
	else if (!strncmp(r->kind, "passthrough_ll", 14))
		put(out, size, "%s, its own timeout (1 s)", r->kind);
	else
		put(out, size, "dcfs --mode %.*s%s%s%s", (int)strcspn(r->kind, "-"), r->kind,
		    strchr(r->kind, '-') ? " --uring" : "",
		    s->dcfs_args && *s->dcfs_args ? " " : " (its own timeouts)",
		    s->dcfs_args ? s->dcfs_args : "");
}

static void print_kind(FILE *f, const struct run *r)
{
	const struct setup *s = r->s;
	char how[PATH_MAX + 64], col[16];

	describe_kind(r, how, sizeof(how));
	fprintf(f, "\ncoherence %s: %s\n", r->kind, how);
	if (r->error[0])
		fprintf(f, "  error: %s\n", r->error);
	if (!r->nrec && r->error[0])
		return;
	fprintf(f, "  %zu names in %s/%s, all read through the mount in %.2f s; "
		"%u reader%s, %llu operations\n", r->entries, s->source, r->name, r->warm_s,
		s->readers, s->readers == 1 ? "" : "s", (unsigned long long)r->reader_ops);
	put(col, sizeof(col), ">%ums", s->bound_ms);
	fprintf(f, "%-12s %7s %10s %10s %10s %7s %6s %6s %6s\n", "change", "direct", "p50_ms",
		"p99_ms", "max_ms", col, "never", "mount", "failed");
	for (int c = 0; c < C_NCHG; c++)
		if (r->by[c].direct || r->by[c].via)
			print_row(f, chg_names[c], &r->by[c], s->give_up_ms);
	print_row(f, "all", &r->all, s->give_up_ms);
	if (r->skipped)
		fprintf(f, "  %llu changes not made: the mount still showed an older state "
			"of their names after %u ms\n", (unsigned long long)r->skipped, s->give_up_ms);
	if (r->note[0])
		fprintf(f, "  note: %s\n", r->note);
	if (s->flood) {
		char mx[32];

		fprintf(f, "  floods: %u in %s/%s/%s, of %u files and more while a change was "
			"made: %llu files, %.2f s in all; ", r->floods, s->source, r->name,
			FLOOD_DIR, s->flood, (unsigned long long)r->flood_files, r->flood_s);
		if (r->overflows >= 0)
			fprintf(f, "the daemon logged %d overflow%s\n", r->overflows,
				r->overflows == 1 ? "" : "s");
		else
			fprintf(f, "%s\n", fsm_kind_dcfs(r->kind) ? "no daemon log to read" :
				"no dcfs: overflows not known");
		fprintf(f, "  the %u change%s made during the floods: max %s%s\n",
			r->flood_changes, r->flood_changes == 1 ? "" : "s",
			ms(r->flood_max, s->give_up_ms, mx, sizeof(mx)),
			r->flood_max >= 0 && r->flood_max != NEVER ? " ms" : "");
	}
	if (r->flood_err[0])
		fprintf(f, "  flood failed: %s\n", r->flood_err);
	if (r->nnever)
		fprintf(f, "  never seen (the first %u):\n", r->nnever);
	for (unsigned i = 0; i < r->nnever; i++)
		fprintf(f, "    %s\n", r->never[i]);
	if (r->nlate)
		fprintf(f, "  later than %u ms (the first %u), with what the mount showed until "
			"then:\n", s->bound_ms, r->nlate);
	for (unsigned i = 0; i < r->nlate; i++)
		fprintf(f, "    %s\n", r->late[i]);
	if (r->nfails)
		fprintf(f, "  failed (the first %u):\n", r->nfails);
	for (unsigned i = 0; i < r->nfails; i++)
		fprintf(f, "    %s\n", r->fails[i]);
}

static void print_verdict(FILE *f, const struct run *r)
{
	char p99[32], fl[64] = "";

	if (!r->ran) {
		fprintf(f, "coherence %s: did not run: %s\n", r->kind,
			r->error[0] ? r->error : "interrupted");
		return;
	}
	if (r->s->flood && r->overflows >= 0)
		put(fl, sizeof(fl), "; floods %u, overflows logged %d", r->floods, r->overflows);
	else if (r->s->flood)
		put(fl, sizeof(fl), "; floods %u, overflows logged -", r->floods);
	fprintf(f, "coherence %s: %u changes, stale>%ums %u, never seen %u, p99 %s%s; "
		"through the mount %u, failed %u%s\n", r->kind, r->all.direct, r->s->bound_ms,
		r->all.over, r->all.never, ms(r->all.p99, r->s->give_up_ms, p99, sizeof(p99)),
		r->all.p99 >= 0 && r->all.p99 != NEVER ? " ms" : "", r->all.via, r->all.failed, fl);
}

static double ms_json(int64_t v)
{
	return v < 0 || v == NEVER ? NAN : (double)v * 1e-6;
}

static void stats_json(struct json *j, const struct stats *st)
{
	json_kuint(j, "direct", st->direct);
	json_knum(j, "p50_ms", ms_json(st->p50));
	json_knum(j, "p99_ms", ms_json(st->p99));
	json_knum(j, "max_ms", ms_json(st->max));
	json_knum(j, "max_seen_ms", ms_json(st->max_seen));
	json_kuint(j, "over_bound", st->over);
	json_kuint(j, "never_seen", st->never);
	json_kuint(j, "through_mount", st->via);
	json_kuint(j, "failed", st->failed);
}

static void strings_json(struct json *j, const char *key, char (*list)[640], unsigned n)
{
	json_key(j, key);
	json_arr_begin(j);
	for (unsigned i = 0; i < n; i++)
		json_str(j, list[i]);
	json_arr_end(j);
}

static int write_json(const struct setup *s, struct run *runs, FILE *f)
{
	struct json j;

	json_init(&j, f);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", JSON_SCHEMA_VERSION);
	json_kstr(&j, "command", CMD);
	json_kstr(&j, "source", s->source);
	json_kstr(&j, "mount", s->mount);
	json_kuint(&j, "changes", s->changes);
	json_kuint(&j, "bound_ms", s->bound_ms);
	json_kuint(&j, "give_up_ms", s->give_up_ms);
	json_kuint(&j, "poll_us", POLL_NS / 1000);
	json_kuint(&j, "seed", s->seed);
	json_kuint(&j, "readers", s->readers);
	json_kuint(&j, "through_mount_percent", s->through);
	json_knum(&j, "peer_timeout", s->peer_to >= 0 ? s->peer_to : NAN);
	json_kstr(&j, "dcfs_args", s->dcfs_args ? s->dcfs_args : "");
	json_kuint(&j, "flood", s->flood);
	json_key(&j, "results");
	json_arr_begin(&j);
	for (unsigned i = 0; i < s->nkinds; i++) {
		struct run *r = &runs[i];

		json_obj_begin(&j);
		json_kstr(&j, "kind", r->kind);
		json_kbool(&j, "ran", r->ran);
		if (r->error[0])
			json_kstr(&j, "error", r->error);
		else
			json_knull(&j, "error");
		json_kuint(&j, "names", r->entries);
		json_kbool(&j, "xattrs", r->xattrs);
		json_knum(&j, "warm_up_s", r->warm_s);
		json_kuint(&j, "reader_ops", r->reader_ops);
		json_kuint(&j, "skipped_stale_before", r->skipped);
		if (r->note[0])
			json_kstr(&j, "note", r->note);
		else
			json_knull(&j, "note");
		json_kuint(&j, "floods", r->floods);
		json_kuint(&j, "flood_files", r->flood_files);
		json_knum(&j, "flood_s", r->flood_s);
		json_kuint(&j, "flood_changes", r->flood_changes);
		json_knum(&j, "flood_changes_max_ms", ms_json(r->flood_max));
		if (r->overflows >= 0)
			json_kint(&j, "overflows_logged", r->overflows);
		else
			json_knull(&j, "overflows_logged");
		if (r->flood_err[0])
			json_kstr(&j, "flood_error", r->flood_err);
		else
			json_knull(&j, "flood_error");
		stats_json(&j, &r->all);
		json_key(&j, "by_change");
		json_arr_begin(&j);
		for (int c = 0; c < C_NCHG; c++) {
			json_obj_begin(&j);
			json_kstr(&j, "change", chg_names[c]);
			stats_json(&j, &r->by[c]);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		strings_json(&j, "never_seen_examples", r->never, r->nnever);
		strings_json(&j, "late_examples", r->late, r->nlate);
		strings_json(&j, "failed_examples", r->fails, r->nfails);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	return json_finish(&j);
}

/* ---- the command ------------------------------------------------------------------ */

static int parse_kinds(const char *list, struct setup *s)
{
	char name[32];

	s->nkinds = 0;
	for (const char *p = list;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		const char *k;
		bool dup = false;

		if (len >= sizeof(name))
			len = sizeof(name) - 1;
		memcpy(name, p, len);
		name[len] = '\0';
		k = fsm_kind(name);
		if (!k)
			return cli_usage(CMD, "--fs: '%s' is not rcu, global, rwlock, rcu-uring, "
					 "global-uring, rwlock-uring, passthrough_ll, "
					 "passthrough_ll-dp or native", name);
		for (unsigned i = 0; i < s->nkinds; i++)
			dup |= s->kinds[i] == k;
		if (!dup && s->nkinds < MAX_KINDS)
			s->kinds[s->nkinds++] = k;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* An existing directory given on the command line, made absolute. */
static int existing_dir(const char *opt, const char *arg, char *out)
{
	struct stat st;

	if (!realpath(arg, out) || stat(out, &st) < 0)
		return cli_usage(CMD, "%s %s: %s", opt, arg, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return cli_usage(CMD, "%s %s: not a directory", opt, arg);
	return 0;
}

static bool empty_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	closedir(d);
	return empty;
}

struct args {
	const char *fs, *source, *mount, *work;
};

static int parse_args(int argc, char **argv, struct setup *s, struct args *a)
{
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(CMD, argc, argv, &i, "help", false, &v, &bad)) {
			if (bad)
				return bad;
			fputs(dcb_coherence_help, stdout);
			return -1;
		}
		if (cli_opt(CMD, argc, argv, &i, "fs", true, &v, &bad)) {
			if (bad)
				return bad;
			a->fs = v;
		} else if (cli_opt(CMD, argc, argv, &i, "source", true, &v, &bad)) {
			if (bad)
				return bad;
			a->source = v;
		} else if (cli_opt(CMD, argc, argv, &i, "mount", true, &v, &bad)) {
			if (bad)
				return bad;
			a->mount = v;
		} else if (cli_opt(CMD, argc, argv, &i, "workdir", true, &v, &bad)) {
			if (bad)
				return bad;
			a->work = v;
		} else if (cli_opt(CMD, argc, argv, &i, "changes", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--changes", v, 1, 10000000, &s->changes)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "bound-ms", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--bound-ms", v, 0, 3600000, &s->bound_ms)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "give-up-ms", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--give-up-ms", v, 1, 3600000, &s->give_up_ms)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "seed", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--seed", v, 0, UINT_MAX, &s->seed)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "readers", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--readers", v, 0, MAX_READERS, &s->readers)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "through-mount", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--through-mount", v, 0, 100, &s->through)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "peer-timeout", true, &v, &bad)) {
			if (bad || (bad = cli_seconds(CMD, "--peer-timeout", v, &s->peer_to)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "dcfs-args", true, &v, &bad) ||
			   cli_opt(CMD, argc, argv, &i, "dcfs-opts", true, &v, &bad)) {
			if (bad)
				return bad;
			s->dcfs_args = v;
		} else if (cli_opt(CMD, argc, argv, &i, "json", true, &v, &bad)) {
			if (bad)
				return bad;
			s->json = v;
		} else if (cli_opt(CMD, argc, argv, &i, "require-bound", false, &v, &bad)) {
			if (bad)
				return bad;
			s->require = true;
		} else if (cli_opt(CMD, argc, argv, &i, "flood", true, &v, &bad)) {
			if (bad || (bad = cli_uint(CMD, "--flood", v, 0, 10000000, &s->flood)))
				return bad;
		} else if (cli_opt(CMD, argc, argv, &i, "require-overflow", false, &v, &bad)) {
			if (bad)
				return bad;
			s->require_overflow = true;
		} else {
			return cli_usage(CMD, "unknown option or argument '%s'", argv[i]);
		}
	}
	if (!a->fs)
		return cli_usage(CMD, "which file systems? (--fs KIND[,KIND...])");
	if (s->require_overflow && !s->flood)
		return cli_usage(CMD, "--require-overflow needs --flood N");
	return parse_kinds(a->fs, s);
}

/* Is a equal to b or below it (both absolute and canonical)? */
static bool inside(const char *a, const char *b)
{
	return !strcmp(b, "/") || within(a, b);
}

/* The work directory, then the source and the mount point in it unless
 * given.  made[]: what to remove at the end (work, source, mount). */
static int prepare_dirs(struct setup *s, const struct args *a, bool made[3])
{
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];

	if (a->work) {
		if (mkdir(a->work, 0755) < 0 && errno != EEXIST) {
			fprintf(stderr, "dcbench coherence: --workdir %s: %s\n", a->work, strerror(errno));
			return EXIT_FAIL;
		}
		if (!realpath(a->work, s->work)) {
			fprintf(stderr, "dcbench coherence: --workdir %s: %s\n", a->work, strerror(errno));
			return EXIT_FAIL;
		}
	} else {
		if (!tmp || !*tmp)
			tmp = "/tmp";
		if ((size_t)snprintf(s->work, sizeof(s->work), "%s/dcbench-coherence.XXXXXX", tmp) >=
		    sizeof(s->work) || !mkdtemp(s->work)) {
			fprintf(stderr, "dcbench coherence: cannot make a work directory under %s: %s\n",
				tmp, strerror(errno));
			return EXIT_FAIL;
		}
		made[0] = true;
	}
	for (int k = 1; k < 3; k++) {
		char *dst = k == 1 ? s->source : s->mount;

		if ((k == 1 ? a->source : a->mount))
			continue;
		put(path, sizeof(path), "%s/%s", s->work, k == 1 ? "src" : "mnt");
		if (mkdir(path, 0755) == 0)
			made[k] = true;
		else if (errno != EEXIST) {
			fprintf(stderr, "dcbench coherence: %s: %s\n", path, strerror(errno));
			return EXIT_FAIL;
		}
		put(dst, PATH_MAX, "%s", path);
	}
	if (strlen(s->source) + 2 * REL_MAX + 64 > PATH_MAX ||
	    strlen(s->mount) + 2 * REL_MAX + 64 > PATH_MAX) {
		fprintf(stderr, "dcbench coherence: the source or mount path is too long\n");
		return EXIT_FAIL;
	}
	return 0;
}

static void remove_work(const struct setup *s, const bool made[3])
{
	struct dirent *e;
	char path[PATH_MAX + 256];
	struct stat st;
	DIR *d;

	if (made[2])
		rmdir(s->mount);
	if (made[1])
		rmdir(s->source);
	if (!made[0])
		return;
	d = opendir(s->work);
	if (d) {
		while ((e = readdir(d))) {
			put(path, sizeof(path), "%s/%s", s->work, e->d_name);
			if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
				unlink(path);
		}
		closedir(d);
	}
	if (rmdir(s->work) < 0)
		fprintf(stderr, "dcbench coherence: could not remove %s: %s\n", s->work,
			strerror(errno));
}

/* What the command needs before it makes anything: 0 or an exit status. */
static int check_host(void)
{
	struct stat st;

	if (geteuid() != 0) {
		fprintf(stderr, "dcbench coherence: needs root: it mounts file systems and "
			"chowns files\n");
		return EXIT_FAIL;
	}
	if (stat("/dev/fuse", &st) < 0 || !S_ISCHR(st.st_mode) ||
	    access("/dev/fuse", R_OK | W_OK) < 0) {
		fprintf(stderr, "dcbench coherence: no usable /dev/fuse (modprobe fuse; in a "
			"container, give it /dev/fuse)\n");
		return EXIT_FAIL;
	}
	return 0;
}

/* The source and the mount point, once both are known. */
static int check_dirs(const struct setup *s)
{
	if (inside(s->mount, s->source) || inside(s->source, s->mount))
		return cli_usage(CMD, "the mount point %s and the source %s must not contain "
				 "one another", s->mount, s->source);
	if (!empty_dir(s->mount))
		return cli_usage(CMD, "--mount %s: not an empty directory", s->mount);
	return 0;
}

int dcb_coherence_main(int argc, char **argv)
{
	struct setup s;
	struct args a = { 0 };
	struct run *runs = NULL;
	struct sigaction sa, old_int, old_term, old_hup;
	bool made[3] = { false, false, false };
	bool failed = false, over = false, no_overflow = false;
	FILE *rep = stdout;
	int rc;

	memset(&s, 0, sizeof(s));
	s.changes = 1000;
	s.bound_ms = 100;
	s.give_up_ms = 3000;
	s.seed = 1;
	s.readers = 2;
	s.through = 10;
	s.peer_to = -1;
	rc = parse_args(argc, argv, &s, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (a.source && (rc = existing_dir("--source", a.source, s.source)))
		return rc;
	if (a.mount && (rc = existing_dir("--mount", a.mount, s.mount)))
		return rc;
	if (s.json && !strcmp(s.json, "-"))
		rep = stderr;
	if ((rc = check_host()))
		return rc;
	if ((rc = prepare_dirs(&s, &a, made)) || (rc = check_dirs(&s)))
		goto out;
	s.umask = umask(0);
	umask(s.umask);
	runs = calloc(s.nkinds, sizeof(*runs));
	if (!runs) {
		fprintf(stderr, "dcbench coherence: out of memory\n");
		rc = EXIT_FAIL;
		goto out;
	}
	for (unsigned i = 0; i < s.nkinds; i++) {
		struct run *r = &runs[i];

		r->s = &s;
		r->kind = s.kinds[i];
		pthread_mutex_init(&r->names.lock, NULL);
		pthread_mutex_init(&r->quar.lock, NULL);
		r->buf = malloc(DATA_MAX + 1);
		r->old = malloc(2 * DATA_MAX);
		r->recs = calloc(s.changes, sizeof(*r->recs));
		if (!r->buf || !r->old || !r->recs) {
			fprintf(stderr, "dcbench coherence: out of memory\n");
			rc = EXIT_FAIL;
			goto out;
		}
	}

	/* A signal ends the change in hand; then the readers stop, the file
	 * system is unmounted, the trees removed and the signal's default
	 * action taken. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);

	fprintf(rep, "coherence: %u changes per file system (seed %u), %u%% through the mount, "
		"%u reader%s; bound %u ms, give up after %u ms; source %s, mount %s\n",
		s.changes, s.seed, s.through, s.readers, s.readers == 1 ? "" : "s", s.bound_ms,
		s.give_up_ms, s.source, s.mount);
	for (unsigned i = 0; i < s.nkinds && !interrupted; i++) {
		struct run *r = &runs[i];

		r->tried = true;
		run_kind(r);
		if (summarise(r) < 0) {
			fprintf(stderr, "dcbench coherence: out of memory\n");
			r->ran = false;
		}
		print_kind(rep, r);
		fflush(rep);
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);

	fprintf(rep, "\n");
	for (unsigned i = 0; i < s.nkinds; i++) {
		struct run *r = &runs[i];

		if (r->tried)
			print_verdict(rep, r);
		failed |= !r->ran;
		over |= r->all.over || r->all.failed;
		no_overflow |= r->ran && fsm_kind_dcfs(r->kind) && r->overflows <= 0;
	}
	rc = failed || interrupted ? EXIT_FAIL : EXIT_OK;
	if (s.require && over) {
		fprintf(rep, "coherence: --require-bound: not met (a change stale past %u ms, "
			"never seen, or failed)\n", s.bound_ms);
		rc = EXIT_FAIL;
	}
	if (s.require_overflow && no_overflow) {
		fprintf(rep, "coherence: --require-overflow: not met (a dcfs kind logged no "
			"overflow of its event queue)\n");
		rc = EXIT_FAIL;
	}
	if (s.json && !interrupted) {
		FILE *f = strcmp(s.json, "-") ? fopen(s.json, "w") : stdout;

		if (!f || write_json(&s, runs, f) < 0 || (f != stdout && fclose(f) != 0)) {
			fprintf(stderr, "dcbench coherence: cannot write %s: %s\n", s.json,
				strerror(errno));
			rc = EXIT_FAIL;
		}
	}
	if (failed && made[0]) {
		fprintf(stderr, "dcbench coherence: kept %s for the daemons' logs\n", s.work);
		made[0] = false;
	}
out:
	if (runs)
		for (unsigned i = 0; i < s.nkinds; i++) {
			free(runs[i].buf);
			free(runs[i].old);
			free(runs[i].recs);
			free(runs[i].names.e);
			free(runs[i].quar.e);
		}
	free(runs);
	remove_work(&s, made);
	if (interrupted) {
		fprintf(stderr, "dcbench coherence: interrupted\n");
		signal(interrupted, SIG_DFL);
		raise(interrupted);
	}
	return rc;
}
