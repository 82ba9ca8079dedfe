/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dcfs.h - a FUSE passthrough file system whose names live in libdcache.
 *
 * Two tables, two jobs:
 *
 *   names  (parent, name) -> entry       libdcache (rcu, global or rwlock),
 *                                        with a backend over SOURCE_DIR
 *   nodes  (st_dev, st_ino) -> node      this file system: what FUSE calls
 *                                        an inode (a nodeid is a node's
 *                                        address), hard links share one
 *
 * A positive cache entry's cookie is a node, and every entry holding a
 * cookie holds one reference on it (the backend's release() drops it).
 * See node.c for the life of a node and for every lock.
 */
#ifndef DCFS_H
#define DCFS_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "dcache.h"

/*
 * A node.  Fields and their rules:
 *
 *   hnext, dev, ino, type   the node table; key fields are written once,
 *                           hnext under the stripe lock of its bucket
 *   refs      atomic; one per cache entry whose cookie is this node, plus
 *             one while nlookup > 0.  Zero is final: the node is being
 *             freed, and node_find() will not hand it out ("get unless
 *             zero" under the stripe lock).
 *   nlookup   atomic; the kernel's lookup count.  It crosses zero (0->1 in
 *             node_activate, 1->0 in node_forget) only under lock, so the
 *             state that goes with "the kernel knows this node" (fd for a
 *             non-directory, dentry for a directory) changes only there.
 *             Moves that stay above zero are lock-free CASes.
 *   fd        O_PATH|O_NOFOLLOW descriptor.  Directories keep one for the
 *             node's whole life (the cache looks names up in them at any
 *             time), except a removed directory's, closed when the kernel
 *             forgets it (gone), and one made past half the budget, which
 *             holds a handle instead (node_dir_fd); other files and
 *             symlinks hold one only while
 *             nlookup > 0, so names that are merely cached pin no
 *             descriptor and no deleted file.  One activated while the
 *             nodes' descriptors are over budget holds none ("fd-less"):
 *             requests open one from fh (node_fd_use).  Set when nlookup
 *             crosses zero, under lock; stable while > 0.
 *   fh        a file's or symlink's handle (name_to_handle_at), its
 *             identity (node.c, same_inode): made with the node where
 *             handles work (a directory's only past the budget), freed
 *             with it.
 *   dentry    directories only: a held cache entry to look names up in,
 *             held while nlookup > 0.  Written under lock; a request takes
 *             its own reference under the lock (node_dentry_get), so a
 *             replaced entry is put at once and the cache may evict it.
 */
struct dnode {
	struct dnode *hnext;
	uint64_t dev, ino;
	uint32_t type;			/* S_IFMT bits; never changes */
	int fd;
	bool gone;			/* a removed directory (node_forget) */
	struct file_handle *fh;
	/* handle-less I/O (nodefd.c): a file's O_RDONLY [0] and O_RDWR [1]
	 * descriptors, kept on first use under lock, closed with fd */
	int io_fd[2];
	int64_t refs;
	uint64_t nlookup;
	struct dc_dentry *dentry;
	pthread_mutex_t lock;
};

/* --readdirplus: unset (off when both kernel timeouts are 0), auto, off */
enum dcfs_readdirplus { DCFS_RDPLUS_DEFAULT, DCFS_RDPLUS_AUTO, DCFS_RDPLUS_OFF };

struct dcfs {
	struct dc_cache *cache;
	enum dc_mode mode;
	struct dnode *root;
	int root_fd;			/* SOURCE_DIR, O_PATH */
	/* fd-less files (nodefd.c): SOURCE_DIR opened O_RDONLY for
	 * open_by_handle_at, or -1 where handles do not work; its mount */
	int handle_fd, mount_id;
	int64_t fd_budget;		/* node descriptors before going fd-less */
	double entry_timeout, attr_timeout;	/* read with dcfs_*_timeout() */
	enum dc_watch_mode coherence;	/* asked for (AUTO: the first that works) */
	uint32_t ttl_ms;		/* ttl mode: the cache's TTLs */
	bool as_caller;			/* root: host calls as the calling user */
	bool posix_acl;			/* the kernel checks POSIX ACLs (op_init) */
	bool open_requests;		/* --open-requests: a handle per open */
	enum dcfs_readdirplus readdirplus;	/* --readdirplus */
	bool debug;
	struct fuse_session *se;
};

extern struct dcfs dcfs;

/* Counters for --stats: relaxed atomics, written only on rare events. */
struct dcfs_counters {
	int64_t nodes_total;	/* node structures allocated */
	int64_t nodes_active;	/* nlookup > 0 (the kernel knows them) */
	int64_t node_fds;	/* descriptors held by nodes */
	int64_t fdless;		/* files the kernel knows, held by handle only */
	int64_t open_files;	/* file and directory handles */
	uint64_t emfile;	/* operations that failed for want of a descriptor */
	uint64_t stale;		/* cached names found stale and forgotten */
	int64_t workers;	/* worker threads alive (loop.c) */
	uint64_t workers_started;
	int64_t workers_stuck;	/* on one request over a second (loop.c) */
	uint64_t stuck_refused;	/* requests refused: their uid's stuck ones at the bound */
};
extern struct dcfs_counters dcfs_ctr;

#define CTR_ADD(f, v)	__atomic_add_fetch(&dcfs_ctr.f, (v), __ATOMIC_RELAXED)
#define CTR_GET(f)	__atomic_load_n(&dcfs_ctr.f, __ATOMIC_RELAXED)

/* ---- log.c: diagnostics ---------------------------------------------------- */
/*
 * A diagnostic, prio a syslog(3) level, no newline.  On stderr
 * ("dcfs: " first) until dcfs runs as a daemon, then through syslog
 * (ident dcfs, LOG_DAEMON): a daemon's stderr is /dev/null.
 */
void dcfs_log(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A failure to start: dcfs_log at LOG_ERR, then exit 1. */
void die(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
/* libfuse's messages (and its -d request log) go the same way. */
void log_take_fuse(void);
/* What ops_names.c takes from the environment (a test's hook), at start. */
void ops_names_init(void);

/* Connect to syslog now: a sandbox hides /dev/log later. */
void log_open_syslog(void);
/* Diagnostics through syslog from now on (a forked child's too). */
void dcfs_log_to_syslog(void);

/* ---- node.c: the node table and a node's life ---------------------------- */
int nodes_init(uint64_t nbuckets);
void nodes_fini(void);
/* The root node (nlookup 1 for good), before the cache exists. */
int node_make_root(int root_fd, struct dnode **out);
/* After the cache exists: the root node's directory entry. */
void node_set_root_dentry(struct dnode *root, struct dc_dentry *d);

/*
 * Find or make the node for what fd (an O_PATH descriptor) opened, whose
 * attributes are st; one reference for the caller.  The node takes fd
 * when it keeps one (a new directory or symlink), else *fdp is left for
 * the caller, who may pass it on to node_activate (it is an fd of the
 * right inode).  *fdp is set to -1 when taken.
 */
int node_get(const struct stat *st, int *fdp, struct dnode **out);
void node_ref(struct dnode *n);
void node_put(struct dnode *n);

/*
 * Count one kernel lookup of n, reached as name in directory dir (whose
 * entry for it is d, held by the caller).  On its first lookup a file
 * node needs a descriptor: *fdp if it is one (taken, set to -1), else
 * opened from dir and name and checked to be the same inode (-ESTALE if
 * the name now names something else).  A directory node takes a
 * reference on d; if it held another, dead entry it moves to d.
 */
int node_activate(struct dnode *n, struct dnode *dir, const char *name,
		  struct dc_dentry *d, int *fdp);
/* After an exchange: a directory node the kernel knows moves to d. */
void node_refresh(struct dnode *n, struct dc_dentry *d);
/* The kernel forgot count lookups of n. */
void node_forget(struct dnode *n, uint64_t count);
/* At unmount: drop what the kernel never forgot; 0 or nodes leaked. */
void nodes_drop_kernel_refs(void);
int64_t nodes_count(void);

/* Before name in dir is unlinked or replaced: a file held by handle that
 * the kernel knows takes a descriptor (keeps its data while open). */
void node_pin_victim(struct dnode *dir, const char *name);

/* A directory's cache entry, referenced for the caller (dc_put it), or
 * NULL (not a directory, or one the kernel forgot). */
struct dc_dentry *node_dentry_get(struct dnode *n);

/* A node the kernel knows (nlookup > 0) for inode (dev, ino), referenced,
 * or NULL. */
struct dnode *node_find_known(uint64_t dev, uint64_t ino);
/* fn(n, arg) for every node the kernel knows for inode (dev, ino), with no
 * lock held.  An inode may have several: without file handles (dcfs not
 * root) a file node the kernel forgot cannot be told from another inode
 * once its descriptor is closed, so a hard link looked up meanwhile made
 * a node of its own, and both may be known again. */
void node_each_known(uint64_t dev, uint64_t ino, void (*fn)(struct dnode *, void *),
		     void *arg);
/* Every node the kernel knows, referenced, in a malloc'ed array (*out;
 * NULL when none); their count.  Short of memory: those found so far. */
size_t nodes_collect_known(struct dnode ***out);

static inline struct dnode *ino_node(fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? dcfs.root : (struct dnode *)(uintptr_t)ino;
}

static inline fuse_ino_t node_ino(struct dnode *n)
{
	return n == dcfs.root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)n;
}

/* Does a node of this type hold a descriptor for its whole life?  Only
 * a directory (names are looked up in it at any time); a symlink's text
 * is cached by libdcache and the kernel, so it goes as a file does. */
static inline bool keeps_fd(uint32_t type)
{
	return S_ISDIR(type);
}

/* ---- nodefd.c: a node's descriptors ---------------------------------------- */
/*
 * Nodes over the descriptor budget (see struct dnode): at start, whether
 * file handles work on SOURCE_DIR, and the budget (a quarter of nofile:
 * the rest is for directories, I/O and directory streams).
 */
void nodes_setup_handles(uint64_t nofile);
/* The handle of what fd (O_PATH) is, if open_by_handle_at can reopen it
 * (malloc'ed), or NULL. */
struct file_handle *node_handle_of(int fd);
/* Do two handles name the same inode (same generation)? */
bool node_handle_same(const struct file_handle *a,
		      const struct file_handle *b);

/*
 * Any node's O_PATH descriptor for the rest of this request (the caller
 * knows nlookup > 0): its own, or for a fd-less file one opened by handle
 * and kept by this thread until node_fd_done().  -1 with errno if none.
 */
int node_fd_use(struct dnode *n);
void node_fd_done(void);
/* stat n, reached as name in dir (dir may be NULL): 0 or -1 with errno */
int node_stat(struct dnode *n, struct dnode *dir, const char *name,
	      struct stat *st);
/* The same with dir's descriptor, which may be stale (a file it names is
 * used only if it is n's device and inode): -1 for none. */
int node_stat_at(struct dnode *n, int dirfd, const char *name, struct stat *st);

/* A directory's or symlink's descriptor (they always keep one): only while
 * the caller knows nlookup > 0.  Any other node: node_fd_use. */
static inline int node_fd(struct dnode *n)
{
	return __atomic_load_n(&n->fd, __ATOMIC_ACQUIRE);
}

/* A directory's descriptor for one call: its own, or, for one held by
 * handle (made past half the budget), one opened into *tmp, which
 * node_dir_fd_put closes.  -1 with errno: ENOENT for a removed one. */
int node_dir_fd(struct dnode *n, int *tmp);
static inline void node_dir_fd_put(int tmp)
{
	if (tmp >= 0)
		close(tmp);
}

/* File n's descriptor for reads (write false) or writes, if it has kept
 * one, else -1 (acquire: pairs with node_io_keep's release). */
static inline int node_io_get(struct dnode *n, bool write)
{
	return __atomic_load_n(&n->io_fd[write], __ATOMIC_ACQUIRE);
}
/*
 * fd was just opened on file n for reads or writes: n keeps it, or over
 * the budget this thread does until node_io_done().  Returns the
 * descriptor to use: fd, or the one another request kept meanwhile (fd is
 * then closed).
 */
int node_io_keep(struct dnode *n, bool write, int fd);
/* fd for this thread's current request only: closed by node_io_done(). */
int node_io_once(bool write, int fd);
/* Close what this thread kept for one request's I/O (node_io_keep). */
void node_io_done(void);

/* ---- backend.c: the libdcache backend over SOURCE_DIR --------------------- */
/* The backend libdcache calls on a miss (ctx unused: one file system). */
extern const struct dc_backend_ops dcfs_backend_ops;
/* The cache's inode for node n, whose attributes are st. */
void backend_inode(struct dc_inode *out, const struct stat *st,
		   struct dnode *n);

/* The descriptor a backend lookup opened, kept for the next activation,
 * and the attributes it found. */
void stash_set(struct dnode *n, int fd, const struct stat *st);
int *stash_fd_for(struct dnode *n);
const struct stat *stash_stat_for(struct dnode *n);
void stash_clear(void);

/* ---- coherence.c: changes made in SOURCE_DIR behind dcfs ----------------- */
/* Start watching the source, dcfs.root_fd (the cache and the session
 * exist, the mount is up: the source's path may lead into it). */
int coherence_start(const char *source);
/* A directory node was made: watch it (inotify mode; else nothing),
 * through fd, a descriptor of it. */
void coherence_watch_dir(struct dnode *n, int fd);
/* The watcher's mode now (OFF when none runs). */
enum dc_watch_mode coherence_mode(void);
/* No more notifications to the kernel: before the session's descriptor
 * is closed (the watcher may run on). */
void coherence_quiesce(void);
void coherence_stop(void);

/* The kernel's timeouts now (a fallback to ttl shortens them). */
static inline double dcfs_entry_timeout(void)
{
	double v;

	__atomic_load(&dcfs.entry_timeout, &v, __ATOMIC_RELAXED);
	return v;
}

static inline double dcfs_attr_timeout(void)
{
	double v;

	__atomic_load(&dcfs.attr_timeout, &v, __ATOMIC_RELAXED);
	return v;
}

/* ---- ops.c: the FUSE operations (ops.h: what their files share) ----------- */
extern const struct fuse_lowlevel_ops dcfs_ops;
/*
 * caller.c: a request thread's first call: root's file-system ids and
 * capabilities, no groups, a umask of 0 in an fs_struct of its own.  A
 * thread starts with its creator's, and a worker may be started by one
 * acting as a caller (loop_block_begin).
 */
void caller_reset(void);

/* ---- loop.c: the request loop ------------------------------------------- */

/* At the end, how long a worker or ring thread still in a request has to
 * finish it (a big fsync may take seconds; a stuck host call never ends) */
#define JOIN_S	5

/* The CLOCK_REALTIME deadline, JOIN_S from now, for pthread_timedjoin_np
 * of the threads still running at the end. */
static inline struct timespec join_deadline(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_sec += JOIN_S;
	return t;
}

/*
 * Serve the session on at most `threads` workers, `readers` (0: one per
 * CPU) of them kept reading; returns 0 or a negative errno.  *left: the
 * workers still in a request a few seconds after the end (stuck in a
 * host call); they may yet touch anything, so with any left the caller
 * must leave the process without freeing.
 */
int dcfs_loop(struct fuse_session *se, unsigned threads, unsigned readers,
	      unsigned *left);
/* End the loop; async-signal-safe. */
void dcfs_loop_stop(void);
/* Inside dcfs_loop: the most workers it may run, stuck ones included
 * (0 outside it). */
unsigned dcfs_loop_slots(void);
/*
 * The calling worker is about to make a host call that may block for
 * long (an open that breaks a lease), on behalf of uid.  false: too many
 * of uid's requests block already (8), or too many in all (64); the
 * caller must not block (it answers EAGAIN/EWOULDBLOCK).  true: the
 * worker no longer counts against --threads until loop_block_end(), so
 * the pool may start another.  On a ring thread (uring.c), always false:
 * a ring's queue has no other reader.  Not nested; end on the same
 * thread, in the same request (an end after a refused begin does
 * nothing).
 */
bool loop_block_begin(uid_t uid);
void loop_block_end(void);
/* Cuts a worker's lease wait short when its caller is interrupted
 * (ops_file.c, "Interrupts"); main.c gives it a handler that does nothing,
 * without SA_RESTART.  dcfs uses no socket that could raise it. */
#define DCFS_SIG_INTERRUPT	SIGURG

/* ---- uring.c: FUSE over io_uring (--uring) ------------------------------ */
/* Is the fuse module's enable_uring on? */
bool uring_kernel_enabled(void);
/* Before dcfs_loop: ring threads, `depth` per CPU queue; on failure a
 * message and /dev/fuse alone.  0 or -ENOMEM. */
int uring_start(struct fuse_session *se, unsigned depth);
/* After the session is unmounted, before it is destroyed: the ring
 * threads end.  Returns how many are still in a request JOIN_S seconds
 * on (stuck in a host call): then, as with dcfs_loop's *left, the caller
 * must leave the process without freeing. */
unsigned uring_stop(void);
/* While INIT is served: will dcfs ask for the ring?  After: did it? */
bool uring_offered(void);
bool uring_active(void);
/* Requests served through the ring so far. */
uint64_t uring_requests(void);

/* ---- stats.c: --stats FILE ------------------------------------------------- */
/*
 * Before the mount (check_paths): FILE's directory resolved and opened,
 * since the daemon moves to / and may be sandboxed.  Exits (said) when
 * FILE cannot be written there or lies inside the mount point.  Nothing
 * without --stats.
 */
void stats_setup(void);
/* One snapshot, state "starting", "running" or "exited", cs the cache's
 * statistics: 0, or an errno.  0 without --stats. */
int stats_write(const char *state, const struct dc_stats *cs,
		enum dc_watch_mode coherence);
/* A snapshot now and every second after, on a thread of its own; a
 * failure said once.  Stopped (joined) by stats_stop. */
void stats_start(void);
void stats_stop(void);
/* The last snapshot ("exited"), a failure said. */
void stats_final(const struct dc_stats *cs, enum dc_watch_mode coherence);

/* ---- sandbox.c: capabilities, seccomp, a mount namespace ------------------ */
/*
 * As root, before any thread exists: refuse (-1, said) when acting as the
 * caller lacks CAP_SETUID or CAP_SETGID, else drop every capability dcfs
 * does not use.  0 for a user other than root: nothing to drop.
 */
int caps_restrict(bool as_caller);
/* CAP_SYS_RESOURCE in the calling thread's effective set: off around host
 * calls made for a caller other than root, on again after.  0, or -1
 * (logged once) when the set could not be changed. */
int caps_resource(bool on);

/* --seccomp: what a system call outside the allow-list does */
enum dcfs_seccomp { FILTER_NONE, FILTER_LOG, FILTER_KILL };
int seccomp_parse(const char *s, enum dcfs_seccomp *out);
/* On every thread, existing and future; 0, or -1 (said). */
int seccomp_install(enum dcfs_seccomp mode, bool uring);

/* --sandbox=namespace: none or namespace; 0, or -1 for neither */
int sandbox_parse(const char *s, bool *namespace);
struct sandbox_spec {
	const char *source, *mountpoint;	/* absolute, resolved */
	int fuse_fd;				/* the session's /dev/fuse */
	bool foreground;			/* stderr kept, else syslog */
	bool uring;				/* uring.c's file in the root */
	uint64_t nofile;			/* for nodes_setup_handles */
};
/*
 * Once mounted, before any thread exists: a mount namespace whose root
 * holds the source and /proc only; dcfs.root_fd and the handle
 * descriptor are opened again from it.  0, or -1 (said).
 */
int sandbox_enter(const struct sandbox_spec *s);
/* After fuse_session_unmount: the real mount, in the first namespace. */
void sandbox_unmount(void);

#endif /* DCFS_H */
