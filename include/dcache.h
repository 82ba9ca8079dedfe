/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcache.h - libdcache, an RCU directory-entry cache for userspace.
 *
 * The cache maps (parent directory, name) to an entry that is either an
 * inode (positive) or "this name does not exist" (negative), and resolves
 * whole paths against it.  In the default mode a lookup takes no lock and
 * writes no shared cache line; misses go to a backend supplied at creation.
 *
 * Conventions:
 *  - Every function that can fail returns 0 (or a non-negative count) on
 *    success and a negative errno on failure.  No function sets errno.
 *  - Names passed to update functions are single components: not empty, no
 *    '/', not "." or "..", at most DC_NAME_MAX bytes.
 *  - Threads need no set-up: the first call from a thread registers it with
 *    liburcu (memb flavour) and a thread-exit handler unregisters it.  A
 *    thread that registered itself with urcu-memb is left as it is.
 *  - Structs the caller allocates end in reserved space, so that later
 *    versions add fields without changing their size.  Those it fills in
 *    (dc_options, dc_backend_ops, dc_watch_options, dc_hostfs_options)
 *    must be zero-initialised (= { ... } does), or the call taking them
 *    returns -EINVAL; dc_stats's reserved space comes back zero.
 *  - Concurrency: every call may run on any thread, at the same time as
 *    any other call on the same cache (lookups with lookups and updates,
 *    updates with updates), except dc_cache_destroy, which nothing may
 *    overlap or follow.  A reference may be dropped (dc_put) on another
 *    thread than took it.
 *  - fork(): the child must not call libdcache until it has called exec:
 *    the caches, their locks, liburcu's registrations and its callback
 *    threads are the parent's.
 *  - A thread that registered itself with liburcu must not call the cache
 *    inside its own rcu_read_lock(): a miss may wait for a grace period.
 *  - The update functions mirror a file system: call them AFTER the backend
 *    operation succeeded.  If an update cannot allocate memory the cache
 *    forgets the affected names (it may forget, it never lies) and the call
 *    returns -ENOMEM.  Only dc_create, dc_mkdir, dc_symlink, dc_link and a
 *    dc_rename other than EXCHANGE can; dc_unlink, dc_rmdir (whose negative
 *    entry is a hint: without memory the name is just forgotten), an
 *    exchange and the invalidations return 0 whatever memory there is.
 */
#ifndef DCACHE_H
#define DCACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Version.  From 0.2.0 on, the soname's number (libdcache.so.1 since
 * 0.3.0, whose dc_inode grew) changes whenever a program built against an
 * older header could break; within it, calls and struct fields are only
 * added (fields into reserved space).  dc_version() is the library's own version, which may be newer
 * than the header's.
 */
#define DC_VERSION_MAJOR	0
#define DC_VERSION_MINOR	3
#define DC_VERSION_PATCH	0
#define DC_VERSION_STRING	"0.3.0"
/* MAJOR * 10000 + MINOR * 100 + PATCH, for #if comparisons. */
#define DC_VERSION_NUMBER	(DC_VERSION_MAJOR * 10000 + DC_VERSION_MINOR * 100 + DC_VERSION_PATCH)

/* The library's version, "MAJOR.MINOR.PATCH"; never NULL. */
const char *dc_version(void);
/* The same as DC_VERSION_NUMBER computes it. */
int dc_version_number(void);

#define DC_NAME_MAX	255	/* longest component, bytes */
#define DC_PATH_MAX	4096	/* a path of this many bytes or more: ENAMETOOLONG */
#define DC_MAXSYMLINKS	40	/* symlinks followed per resolution; the 41st: ELOOP */

struct dc_cache;
struct dc_dentry;

/* Locking mode, fixed at creation.  Same API and same answers in each. */
enum dc_mode {
	DC_MODE_RCU = 0,	/* lock-free rcu-walk, reference walk on a miss */
	DC_MODE_GLOBAL,		/* one global mutex per lookup step and update (2002) */
	DC_MODE_RWLOCK,		/* one reader-writer lock */
};

/*
 * What the cache knows of an inode.  mode holds the S_IFMT type bits and
 * nothing above st_mode's 16 bits (S_IFMT | 07777): a backend answer with
 * more is -EIO, an update's -EINVAL.  The same type goes in (a backend's
 * answer, an update) and comes out (dc_resolve, dc_dentry_stat: a copy,
 * taken without a reference).
 */
struct dc_inode {
	uint64_t ino;		/* inode number, reported back to callers */
	uint64_t cookie;	/* backend's handle; the cache hands it back to
				 * release() when it drops the inode */
	uint32_t mode;		/* st_mode: type and permission bits */
	uint32_t gen;		/* backend-defined; ino and gen together name
				 * the inode (a generation, or a device) */
	uint32_t uid, gid;	/* owner (st_uid, st_gid): dc_resolve_as's
				 * search checks read a directory's */
};

/*
 * Backend: where misses go.  Called with no cache lock held, possibly from
 * many threads at once (but never twice at once for the same dir and name).
 * Return 0 or a negative errno (a positive value is taken for -EIO);
 * -ENOENT from lookup is cached as negative.
 * -EMFILE or -ENFILE from lookup (or adopt) makes the cache evict unused
 * entries (releasing what they hold) and ask again, three times at most.
 * Callbacks other than release must not call the cache that called them:
 * it may be waiting for their answer with the name's entry pending.
 * release() runs when the entry is freed, which may be later, after an
 * RCU grace period, on liburcu's callback thread, on the cache's own
 * thread (dc_cache_create), or on a thread that is itself waiting for a
 * lookup's answer; so it may call the update and
 * invalidation functions (dc_create ... dc_invalidate_all) but must not
 * look names up, shrink, or destroy the cache, and while dc_cache_destroy
 * runs it must not call the cache at all.
 */
struct dc_backend_ops {
	/* The root directory's inode. */
	int (*root)(void *ctx, struct dc_inode *out);
	/* Name (len bytes, not NUL-terminated) in directory dir. */
	int (*lookup)(void *ctx, const struct dc_inode *dir, const char *name,
		      size_t len, struct dc_inode *out);
	/* Refresh attributes of an inode the backend handed out. */
	int (*getattr)(void *ctx, struct dc_inode *inode);
	/* Symlink target into buf (size bytes); returns its length.  Without
	 * it, symlinks are cached but not followed (-EOPNOTSUPP). */
	int (*readlink)(void *ctx, const struct dc_inode *link, char *buf,
			size_t size);
	/* The cache dropped its last entry holding this inode's cookie. */
	void (*release)(void *ctx, const struct dc_inode *inode);
	/* The backend's context is no longer used (at dc_cache_destroy). */
	void (*destroy)(void *ctx);
	/*
	 * Optional, used only when TTLs are on: is the cached answer for name
	 * in dir still true?  cached is what the cache holds (mode 0: "does
	 * not exist").  1: still true, the same inode with the same mode,
	 * owner and group (dc_resolve_as checks a directory's; the entry's
	 * TTL starts again); 0: changed; or a negative errno (could not
	 * tell).  Unless 1, the
	 * entry is forgotten and the name looked up again.  Without it,
	 * an expired entry is checked with lookup (and the inode it returns
	 * released when it is the one cached).  Called as lookup is.
	 */
	int (*revalidate)(void *ctx, const struct dc_inode *dir, const char *name,
			  size_t len, const struct dc_inode *cached);
	/*
	 * Optional: the update calls (dc_create, dc_mkdir, dc_symlink,
	 * dc_link) hand the new entry's inode to adopt, which fills in the
	 * backend's own cookie for name in dir (the caller cannot know it)
	 * and checks that name still is inode->ino.  0: cache *inode as
	 * adopt left it (released like any cookie); -ENOENT or -ESTALE: the
	 * name changed again, it is forgotten instead (the update returns
	 * 0); another errno: the name is forgotten and the update returns
	 * it (a mode that dc_inode cannot hold: -EIO).  On an error adopt leaves
	 * nothing to release.  Without adopt,
	 * the caller's cookie is the backend's (a backend's own server knows
	 * it).  Called with no cache lock held, from any thread, possibly at
	 * the same time as a lookup of the same name.
	 */
	int (*adopt)(void *ctx, const struct dc_inode *dir, const char *name,
		     size_t len, struct dc_inode *inode);
	/*
	 * Optional: every name in directory dir, each handed to emit (len
	 * bytes, not NUL-terminated; "." and ".." may come or not).  Return
	 * 0 once every name was given, or at once the first non-zero value
	 * emit returns, or a negative errno; -EOPNOTSUPP: a listing of this
	 * directory may leave out names lookup finds (it is not asked again
	 * until the directory's names change).  With it the cache may hold a
	 * directory's whole listing and answer a name that is not in it
	 * (-ENOENT) without a lookup (see complete_after) until it is told
	 * of a change of the directory's names.  Called as lookup is.
	 */
	int (*readdir)(void *ctx, const struct dc_inode *dir,
		       int (*emit)(void *arg, const char *name, size_t len),
		       void *arg);
	void (*reserved[5])(void);	/* NULL */
};

struct dc_backend {
	const struct dc_backend_ops *ops;
	void *ctx;
};

struct dc_options {
	enum dc_mode mode;
	uint64_t max_entries;	/* cap on cached entries; 0: DC_DEFAULT_MAX_ENTRIES */
	uint64_t max_negative;	/* cap on negative entries; 0: max_entries / 4 */
	struct dc_backend backend;	/* required; the cache owns it from now */
	/* Expiry (see Coherence below): an answer older than this many
	 * milliseconds is checked again before use; 0: never expires. */
	uint32_t ttl_ms;		/* positive entries */
	uint32_t neg_ttl_ms;		/* negative entries */
	/* Complete directories (backends with readdir): after this many
	 * lookups in one directory that the backend answered -ENOENT (or at
	 * once for a directory made through the cache, dc_mkdir), the cache
	 * lists it, and while nothing in it changes answers names not listed
	 * without asking.  0: DC_DEFAULT_COMPLETE_AFTER; DC_COMPLETE_OFF:
	 * never. */
	uint32_t complete_after;
	/* List only directories of at most this many names; 0:
	 * DC_DEFAULT_COMPLETE_MAX. */
	uint32_t complete_max;
	uint64_t reserved[7];		/* zero */
};

#define DC_DEFAULT_MAX_ENTRIES	(1u << 20)
#define DC_DEFAULT_COMPLETE_AFTER	1
#define DC_DEFAULT_COMPLETE_MAX		4096
#define DC_COMPLETE_OFF			UINT32_MAX

/* Create a cache into *out; it starts one thread, which evicts when the
 * cache grows past a cap (every signal blocked in it).  0, -EINVAL (NULL,
 * no root or lookup op, a bad mode, non-zero reserved space), -ENOMEM,
 * -EAGAIN (the thread could not be started), -ENOTDIR (the root is not a
 * directory), -EIO (its mode has bits above 0xffff) or the backend's
 * root() error; on failure the backend is destroyed too. */
int dc_cache_create(const struct dc_options *opt, struct dc_cache **out);
/* Destroy: stops and joins the cache's thread, and waits for deferred
 * frees (rcu_barrier).  No reference may be held, and no other call on c
 * may overlap or follow. */
void dc_cache_destroy(struct dc_cache *c);
/* The mode's name ("rcu", "global", "rwlock"), NULL for no mode. */
const char *dc_mode_name(enum dc_mode mode);
/* The mode named name into *out: 0, or -EINVAL (NULL or unknown). */
int dc_mode_parse(const char *name, enum dc_mode *out);

/* ---- Lookups ---------------------------------------------------------- */

#define DC_NOFOLLOW	0x1	/* do not follow a symlink in the last component */
/* dc_resolve_as only: as Linux with fs.protected_symlinks set, follow a
 * trailing symlink (the last component) in a sticky world-writable
 * directory only if the credential's uid or the directory's owner owns it
 * (else -EACCES), whoever resolves, uid 0 too. */
#define DC_PROTECTED_SYMLINKS	0x2


/*
 * Resolve PATH (absolute, or relative to base; base NULL means the root)
 * and copy out the answer.  Takes no reference and, when every component is
 * cached, no lock; in rcu mode a path from the root resolved before (no
 * ".", ".." or symlink in it; with TTLs on, until the first of its
 * entries' deadlines) costs one probe however deep.  Errors: -EINVAL (NULL), -ENOENT, -ENOTDIR,
 * -ENAMETOOLONG, -ELOOP, -ENOMEM (a miss or a symlink's text could not
 * be held), -EOPNOTSUPP (a symlink to follow, and a backend without
 * readlink), or the backend's error.  One name at a time, as
 * the kernel's walk: each name is one its directory held when looked up,
 * but a resolve racing the move of a directory on the path may look the
 * rest up in that directory after the move.
 */
int dc_resolve(struct dc_cache *c, struct dc_dentry *base, const char *path,
	       unsigned flags, struct dc_inode *st);
/*
 * A credential: fsuid, fsgid and the supplementary groups (ngroups of
 * them at groups; groups may be NULL when ngroups is 0).
 */
struct dc_cred {
	uint32_t uid, gid;
	uint32_t ngroups;
	const uint32_t *groups;
};
/*
 * dc_resolve as a process with credential cred would resolve path, as
 * Linux's may_lookup: search (exec) permission is needed on every
 * directory a name is looked up in (the start, directories reached
 * through ".", ".." and symlinks), checked before the lookup, so an
 * unsearchable directory answers -EACCES even for a missing name; the
 * last component itself needs none.  uid 0 may search any directory
 * (CAP_DAC_READ_SEARCH); otherwise the owner's bits, else the group's
 * (gid or a supplementary group is the directory's), else the others'.
 * Mode bits only: POSIX ACLs are not read (on a directory with an ACL
 * the group bits are the ACL's mask, so the answer may differ from the
 * kernel's), nor capabilities other than uid 0's, nor idmapped mounts.
 * A directory's bits are those the cache holds: suspect or expired ones
 * are checked with the backend first; the root's change only with
 * dc_invalidate_inode of it.  dc_resolve's errors, -EACCES, and -EINVAL
 * for cred NULL (or groups NULL with ngroups).  Lock-free when cached.
 */
int dc_resolve_as(struct dc_cache *c, struct dc_dentry *base, const char *path,
		  unsigned flags, const struct dc_cred *cred, struct dc_inode *st);
/* The same, returning a reference to the entry (release with dc_put); the
 * same errors. */
int dc_walk(struct dc_cache *c, struct dc_dentry *base, const char *path,
	    unsigned flags, struct dc_dentry **out);
/* One name (len bytes; "." and ".." allowed) in directory dir: a
 * reference in *out, or -ENOENT, -ENOTDIR, -EINVAL (NULL, empty, or a '/'
 * or NUL inside), -ENAMETOOLONG, -ENOMEM, or the backend's error. */
int dc_lookup(struct dc_cache *c, struct dc_dentry *dir, const char *name,
	      size_t len, struct dc_dentry **out);
/* A reference to the root (release with dc_put); NULL when c is NULL. */
struct dc_dentry *dc_root(struct dc_cache *c);

/* Another reference to a held entry d; returns d. */
struct dc_dentry *dc_get(struct dc_dentry *d);
/* Drop a reference taken from cache c (c must be the entry's cache). */
void dc_put(struct dc_cache *c, struct dc_dentry *d);
/*
 * Copy out a held entry's inode data; -ENOENT if the entry is negative.
 * A held entry's inode (ino, gen, type, cookie) never changes, only its
 * permission bits and owner may be brought up to date: after its name is removed,
 * replaced or forgotten (dc_unlink, dc_rename over it, dc_invalidate...)
 * it still answers 0 and the inode it named, while lookups of the name
 * answer the new truth.  Hold an entry for the inode it names, not for
 * its name.
 */
int dc_dentry_stat(struct dc_dentry *d, struct dc_inode *st);
/* The held entry's path from the root into buf (NUL-terminated): its
 * length, or -EINVAL (NULL, size 0), -ERANGE (buf too small) or -ENOENT
 * (the entry or a directory above it was forgotten or removed). */
int dc_dentry_path(struct dc_cache *c, struct dc_dentry *d, char *buf,
		   size_t size);

/* ---- Updates (after the file system changed) --------------------------
 * Each takes the held directory dir and one name.  Common errors: -EINVAL
 * (NULL, or a bad name), -ENAMETOOLONG (name), -ENOTDIR (dir is not a
 * directory), -ENOENT (dir is a negative entry), -ENOMEM (see
 * Conventions), or an error of the backend's adopt().  A held directory
 * that has since been removed or forgotten takes no update: 0.
 * Without adopt, inode's cookie passes to the cache once a call's checks
 * of its arguments pass: it keeps it, or hands it to release, whatever
 * the call returns after that (-ENOMEM included); a call refused by them
 * (-EINVAL, -ENAMETOOLONG, -ENOTDIR, -ENOENT, dc_link's -EPERM) takes
 * nothing.
 */

/* name appeared in dir as inode (any type; a symlink needs dc_symlink).
 * -EINVAL when inode is NULL or its mode has no type bits (S_IFMT) or
 * bits above 0xffff. */
int dc_create(struct dc_cache *c, struct dc_dentry *dir, const char *name,
	      const struct dc_inode *inode);
/* The same for a directory: -EINVAL unless inode is one. */
int dc_mkdir(struct dc_cache *c, struct dc_dentry *dir, const char *name,
	     const struct dc_inode *inode);
/* The same for a symlink to target: -EINVAL unless inode is a symlink and
 * target is not NULL; -ENAMETOOLONG for a target of DC_PATH_MAX or more. */
int dc_symlink(struct dc_cache *c, struct dc_dentry *dir, const char *name,
	       const struct dc_inode *inode, const char *target);
/* A new hard link to an existing inode: -EPERM for a directory. */
int dc_link(struct dc_cache *c, struct dc_dentry *dir, const char *name,
	    const struct dc_inode *inode);
/* name was removed from dir: its entry turns negative.  Never -ENOMEM. */
int dc_unlink(struct dc_cache *c, struct dc_dentry *dir, const char *name);
/* The same for a directory, forgetting what was cached below it. */
int dc_rmdir(struct dc_cache *c, struct dc_dentry *dir, const char *name);

#define DC_RENAME_NOREPLACE	0x1
#define DC_RENAME_EXCHANGE	0x2
/*
 * A rename (plain or NOREPLACE) moves the source's entry and its cached
 * subtree (when source and target are one inode, as rename(2) it changes
 * nothing); EXCHANGE forgets both names.  -EINVAL: a directory moved into
 * its own subtree, or both flags.  Between its backend operation and this
 * call the caller must not let another update touch the same names (a
 * FUSE server gets that from the kernel's directory locks).
 */
int dc_rename(struct dc_cache *c, struct dc_dentry *odir, const char *oname,
	      struct dc_dentry *ndir, const char *nname, unsigned flags);
/* Forget an entry and everything below it (the root: forget everything,
 * and read the root's inode data again from the backend).  0, or -EINVAL
 * (NULL); for the root, the error of the backend's root(), -ENOTDIR or
 * -EIO (it named no directory, or one with a bad mode) or -ENOMEM, after
 * everything below the root was forgotten all the same, the root keeping
 * its old data. */
int dc_invalidate(struct dc_cache *c, struct dc_dentry *d);
/* Forget one name in dir, whatever the cache held for it.  0, -EINVAL,
 * -ENAMETOOLONG, -ENOTDIR or -ENOENT, as for the updates. */
int dc_invalidate_name(struct dc_cache *c, struct dc_dentry *dir,
		       const char *name);
/* Evict unused entries until at most target remain, or none unused is
 * left, and queue for freeing the one-probe path nodes still waiting for
 * a batch to fill: the number evicted, or -EINVAL (c NULL). */
long dc_shrink(struct dc_cache *c, uint64_t target);

/* ---- Coherence: changes made behind the cache ------------------------- */

/*
 * The guarantee: an answer is never older than the last invalidation the
 * cache was told about before the lookup began, and, where TTLs are on, no
 * older than its TTL (the clock is CLOCK_MONOTONIC_COARSE, read at most
 * once per walk).  A backend lookup in flight across an invalidation of
 * its directory is answered but not cached.
 *
 * Push: a watcher that knows what changed says so by inode, holding no
 * entry.  dir_gen and gen are the backend's gen (hostfs: dc_hostfs_gen).
 * Each forgets in O(1) per cached entry of the inode, however much is
 * cached below it.  An inode the cache does not hold: nothing, 0.  Where
 * one forgets all (the root's inode; or an inode some of whose names the
 * cache could not index, dc_invalidate_inode), its result is
 * dc_invalidate_all's.
 */
/* Name (len bytes) in directory (dir_ino, dir_gen) changed: forgotten in
 * every cached entry of that directory.  -EINVAL or -ENAMETOOLONG: bad
 * name. */
int dc_invalidate_child(struct dc_cache *c, uint64_t dir_ino, uint32_t dir_gen,
			const char *name, size_t len);
/* The inode's attributes changed: every cached name of a non-directory
 * is forgotten; a directory is checked again before its next use (its new
 * permission bits and owner stored in place), keeping what is cached
 * below it.  A
 * lookup in flight that answers this inode is not cached.  Symlinks are
 * not indexed (nothing of theirs changes in place): for them, nothing. */
int dc_invalidate_inode(struct dc_cache *c, uint64_t ino, uint32_t gen);
/* Names in directory (ino, gen) changed, which ones unknown: each cached
 * entry of it is forgotten with all cached below it (the root: all). */
int dc_invalidate_dir(struct dc_cache *c, uint64_t ino, uint32_t gen);
/* Anything may have changed (an event queue overflowed): forget all.
 * 0, -EINVAL (c NULL), or the root's errors of dc_invalidate. */
int dc_invalidate_all(struct dc_cache *c);
/* Turn expiry on or off (ms; 0: never) for answers cached from now on;
 * with either non-zero, what is cached already is forgotten.  0 or -EINVAL. */
int dc_set_ttl(struct dc_cache *c, uint32_t ttl_ms, uint32_t neg_ttl_ms);

/*
 * Watchers: a thread that learns of changes under a host directory from
 * the kernel and tells the cache (and, through changed(), its owner).
 *
 *   fanotify  a filesystem mark with FAN_REPORT_DFID_NAME on each file
 *             system below root: every change on it, dropped cheaply when
 *             outside root.  Needs CAP_SYS_ADMIN and Linux 5.9.
 *   inotify   a watch per directory the backend tells of (dc_watch_dir),
 *             bounded by fs.inotify.max_user_watches.
 *   ttl       no events: the cache's TTLs (set to ttl_ms if none are).
 *   off       nothing: the cache trusts its updates alone.
 *   auto      the first of fanotify, inotify, ttl that works.
 * A queue overflow (or a queue so far behind it would soon overflow)
 * invalidates everything; a full watch budget (or a directory that cannot
 * be watched) falls back to ttl (forgetting all); each says so through
 * log().  The watcher's thread runs at nice -10 where allowed.  Mounts
 * and unmounts below root are not reported.  With a hostfs backend, its
 * lookups give the watcher every directory they return; other backends
 * call dc_watch_dir themselves.
 */
enum dc_watch_mode {
	DC_WATCH_AUTO = 0,
	DC_WATCH_OFF,
	DC_WATCH_TTL,
	DC_WATCH_INOTIFY,
	DC_WATCH_FANOTIFY,
};
/* The mode's name ("auto", "off", "ttl", "inotify", "fanotify"), or NULL. */
const char *dc_watch_mode_name(enum dc_watch_mode mode);
/* The mode named name into *out: 0, or -EINVAL (NULL or unknown). */
int dc_watch_mode_parse(const char *name, enum dc_watch_mode *out);

enum dc_change {
	DC_CHANGE_NAME = 1,	/* name in dir: created, removed, moved, or its
				 * inode's attributes or data changed */
	DC_CHANGE_ALL,		/* anything may have changed */
	DC_CHANGE_INODE,	/* inode ino (on dir_dev) changed, no name known:
				 * its attributes (a link count) or data */
};

/* What a watcher saw, handed to changed() after the cache was told. */
struct dc_change_event {
	enum dc_change what;
	uint64_t dir_ino;	/* NAME: the directory */
	uint64_t dir_dev;	/* its st_dev (dir_gen: dc_hostfs_gen of it) */
	const char *name;	/* NAME: len bytes, NUL-terminated; ".": the
				 * directory itself (its attributes) */
	size_t len;
	uint32_t dir_gen;
	uint32_t flags;		/* DC_CHANGED_* */
	/* NAME: what the cache held for the name before it was forgotten
	 * (0: nothing, or a negative entry), so an owner can tell others
	 * holding that inode (its other names' link count changed) */
	uint64_t old_ino;
	uint32_t old_mode;
	/* NAME, INODE: the inode the event is about, as the kernel names it
	 * (fanotify on Linux 5.17+), when it still exists; else 0 */
	uint64_t ino;
};
#define DC_CHANGED_ENTRY	0x1	/* the name's binding (create, remove, move) */
#define DC_CHANGED_ATTR		0x2	/* attributes of what it names */
#define DC_CHANGED_DATA		0x4	/* contents of what it names */
#define DC_CHANGED_DEGRADED	0x8	/* ALL: the watcher fell back to ttl */

struct dc_watch_options {
	enum dc_watch_mode mode;
	uint32_t ttl_ms;	/* ttl mode, and the fallback; 0: 1000 */
	int ignore_self;	/* fanotify: drop changes this process made */
	/* Optional, on the watcher's thread, after the cache was told. */
	void (*changed)(void *arg, const struct dc_change_event *ev);
	/* Optional: one line (no newline) on a mode chosen or lost, or
	 * events lost; from dc_watch_start or the watcher's thread. */
	void (*log)(void *arg, const char *msg);
	void *arg;
	/* Optional, with root_fd_set 1: root as a descriptor (O_PATH will
	 * do; the watcher keeps a duplicate), root (still required) then
	 * only naming it in messages.  For a root something may be mounted
	 * over, as a FUSE file system mounted on its own source is: root's
	 * path then leads into the mount, whose server is the caller. */
	int32_t root_fd_set;
	int32_t root_fd;
	uint64_t reserved[3];	/* zero */
};

struct dc_watch;
/* Watch the host directory root for cache c (whose backend serves it).
 * In fanotify and inotify modes what c holds is forgotten (it was cached
 * unwatched).  -EINVAL, -ENOMEM, -EBUSY (c's hostfs backend has a watcher
 * already), -EBADF or -ENOTDIR (opt->root_fd), or the kernel's error when
 * the mode asked for (not auto) cannot work. */
int dc_watch_start(struct dc_cache *c, const char *root,
		   const struct dc_watch_options *opt, struct dc_watch **out);
/* The mode in use now (never AUTO; TTL after a fallback; OFF for NULL).
 * Lock-free, from any thread. */
enum dc_watch_mode dc_watch_mode_of(struct dc_watch *w);
/* inotify: watch directory (fd: any descriptor of it, O_PATH will do) for
 * the cache; call before its names are looked up, also for a directory a
 * caller adds itself (dc_mkdir: hostfs does it then itself).  fanotify:
 * mark its file system if not yet.  Other modes: 0.  Safe from many
 * threads at once.  -ENOSPC: the watch budget is spent, or another error
 * when it cannot be watched: the watcher falls back to ttl (later calls
 * return 0).  -EBADF: fd < 0; -EINVAL: w NULL. */
int dc_watch_dir(struct dc_watch *w, int fd, uint64_t ino, uint64_t dev);
/* Stop the thread and free w: before dc_cache_destroy, and not from
 * changed() or log().  A backend other than hostfs must have stopped
 * calling dc_watch_dir.  TTLs it turned on stay on. */
void dc_watch_stop(struct dc_watch *w);

/* ---- Statistics ------------------------------------------------------- */

struct dc_stats {
	uint64_t lookups;	/* dc_resolve/dc_walk/dc_lookup calls */
	uint64_t hits;		/* answered from the cache, positive */
	uint64_t negative_hits;	/* answered from a cached negative entry */
	uint64_t misses;	/* backend lookups made */
	uint64_t restarts;	/* lock-free walks that fell back to references */
	uint64_t evictions;	/* entries freed by the LRU */
	uint64_t lock_waits;	/* lock acquisitions that had to wait */
	uint64_t entries;	/* entries now allocated */
	uint64_t negative;	/* of which negative */
	uint64_t bytes;		/* bytes now allocated by the cache */
	uint64_t miss_waits;	/* lookups that waited for another thread's
				   backend call on the same name */
	uint64_t negative_misses; /* backend lookups that answered -ENOENT */
	uint64_t complete_answers; /* -ENOENT answered from a complete
				      directory's listing, not the backend */
	uint64_t readdirs;	/* directory listings asked of the backend */
	uint64_t path_hits;	/* lookups answered by one probe of a whole
				   path (of hits and negative_hits) */
	uint64_t reserved[1];	/* zero in this version */
};
/* The counters, summed over every thread (a moment's view, not a
 * snapshot); nothing when c or st is NULL. */
void dc_get_stats(struct dc_cache *c, struct dc_stats *st);

/* ---- Backends --------------------------------------------------------- */

/*
 * memfs: an in-memory namespace.  Build trees with the dc_memfs_* calls,
 * which change the namespace only (pair each with the cache update).
 * Inode numbers start at 1 (the root); an inode's cookie is its number
 * (the cache's updates set it), so a caller's cookie does not matter.
 * The calls may run from many threads at once.
 */
struct dc_memfs;
/* An empty namespace (the root alone) into *out: 0, -EINVAL (out NULL),
 * -ENOMEM, or the negative error of creating its lock (-EAGAIN). */
int dc_memfs_new(struct dc_memfs **out);
/* Free fs, after every cache using it was destroyed. */
void dc_memfs_free(struct dc_memfs *fs);
/* A backend over fs; the cache does not free fs. */
struct dc_backend dc_memfs_backend(struct dc_memfs *fs);
#define DC_MEMFS_ROOT	1
/*
 * The calls below take names as the cache does (-EINVAL, -ENAMETOOLONG:
 * too long whatever it holds) and answer as a file system would: -ENOENT
 * (no such directory or name), -ENOTDIR, -EEXIST, -EMLINK, -ENOMEM.
 */
/* Add name in directory dir_ino: mode's type says what; target for
 * symlinks (-EINVAL: none; -ENOENT: empty).  The new inode in *out. */
int dc_memfs_add(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		 uint32_t mode, const char *target, struct dc_inode *out);
/* Inode ino's permission bits become mode (07777 at most: -EINVAL), as
 * chmod(2); its owner becomes uid:gid (new inodes are 0:0), as chown(2).
 * -ENOENT: no such inode.  Tell the cache with dc_invalidate_inode. */
int dc_memfs_chmod(struct dc_memfs *fs, uint64_t ino, uint32_t mode);
int dc_memfs_chown(struct dc_memfs *fs, uint64_t ino, uint32_t uid, uint32_t gid);
/* A hard link to ino as name in dir_ino: -EPERM for a directory. */
int dc_memfs_link(struct dc_memfs *fs, uint64_t ino, uint64_t dir_ino,
		  const char *name, struct dc_inode *out);
/* Remove a name: a directory only when empty (-ENOTEMPTY); is_dir says
 * which is meant (-ENOTDIR, -EISDIR otherwise). */
int dc_memfs_remove(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		    int is_dir);
/* rename(2) within fs, flags DC_RENAME_*: -EINVAL (both flags, or a
 * directory into its own subtree), and rename(2)'s other errors. */
int dc_memfs_rename(struct dc_memfs *fs, uint64_t odir, const char *oname,
		    uint64_t ndir, const char *nname, unsigned flags);
/* Name in dir without the cache: the reference answer for tests. */
int dc_memfs_lookup(struct dc_memfs *fs, uint64_t dir_ino, const char *name,
		    struct dc_inode *out);
/* Names in fs (0 for NULL). */
uint64_t dc_memfs_count(struct dc_memfs *fs);

/*
 * hostfs: a host directory, read through O_PATH descriptors with
 * O_NOFOLLOW, one component at a time, so no lookup escapes root.
 * Cookies are hostfs's own (a descriptor it opened): the update calls
 * open the new name to make one, whatever cookie the caller passes, and
 * forget the name instead when it is no longer the caller's inode.  Tell
 * the cache of a hostfs inode with ino and mode from stat(2) and gen =
 * dc_hostfs_gen(st_dev).
 * Descriptors: one per cached directory and symlink, at most max_fds;
 * past that the cache evicts unused entries to close theirs.
 * Coherence: the cache keeps what it saw until told otherwise.  For
 * changes made behind its back start a watcher (dc_watch_start: the
 * backend's lookups then watch each directory they return), or turn TTLs
 * on, or call dc_invalidate or dc_invalidate_name after each.
 */
struct dc_hostfs_options {
	/* descriptors kept open at most; 0: half of RLIMIT_NOFILE's soft
	 * limit when the backend is made (at least 16, at most 65536) */
	uint32_t max_fds;
	uint32_t reserved32;	/* zero */
	uint64_t reserved[7];	/* zero */
};
/* A backend over host directory root (opt NULL: the defaults).
 * -EINVAL, -ENOMEM, or open(2)'s error for root. */
int dc_hostfs_open(const char *root, const struct dc_hostfs_options *opt,
		   struct dc_backend *out);
/* dc_hostfs_open(root, NULL, out); the same errors. */
int dc_hostfs_backend(const char *root, struct dc_backend *out);
/* A readdir for backends over host directories (hostfs's own): every name
 * in the directory dirfd refers to (any descriptor of it, O_PATH too),
 * "." and ".." included, handed to emit as the readdir op says.  0, emit's
 * first non-zero value, -EINVAL, the errno of opening or reading it, or
 * -EOPNOTSUPP where a listing may leave out names a lookup finds: on file
 * systems other than ext4, xfs, btrfs, tmpfs, f2fs and overlayfs (procfs,
 * autofs, NFS, ZFS, FUSE...), and in case-folded directories. */
int dc_readdir_fd(int dirfd, int (*emit)(void *arg, const char *name, size_t len),
		  void *arg);
/* The gen hostfs gives an inode of device dev (st_dev): the kernel's own
 * 32-bit encoding, 12 bits of major and 20 of minor.  A caller that tells
 * the cache of a hostfs inode (dc_create...) fills gen with this. */
static inline uint32_t dc_hostfs_gen(uint64_t dev)
{
	uint32_t major = (uint32_t)(((dev >> 32) & 0xfffff000u) | ((dev >> 8) & 0xfffu));
	uint32_t minor = (uint32_t)(((dev >> 12) & 0xffffff00u) | (dev & 0xffu));

	return (major << 20) | (minor & 0xfffffu);
}

#ifdef __cplusplus
}
#endif
#endif /* DCACHE_H */
