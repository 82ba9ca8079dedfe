/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * remote_fs.h - what the files of dcfs over NFS share: the nodes and
 * the attributes seen of them (remote_node.c), the FUSE handlers
 * (remote.c), the start-up (remote_main.c).  remote.c's opening comment
 * says how names, attributes and data flow; remote_node.c's gives the
 * locking rules.
 */
#ifndef DCFS_REMOTE_FS_H
#define DCFS_REMOTE_FS_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "dcache.h"
#include "nfs/nfsfs.h"

#define NODE_BUCKETS	4096
#define GROUPS_MAX	16	/* AUTH_UNIX carries no more */

struct rnode {
	struct rnode *hnext;		/* nodes_lock */
	uint64_t dev, ino;		/* the key; written once */
	uint32_t type;			/* S_IFMT bits; never changes */
	struct dcnfs_fh fh;		/* written once */
	uint64_t nlookup;		/* nodes_lock */
	struct dc_dentry *dentry;	/* a directory's entry; nodes_lock */
	/* the file as the last open saw it: close-to-open's check */
	struct timespec mtime, ctime;	/* nodes_lock */
	off_t size;
	/* the attributes last seen, from an RPC sent at st_ms (0: none)
	 * while rs.attr_gen was st_gen: answers while trusted
	 * (remote_node.c, trust_ms) */
	struct stat st;			/* nodes_lock */
	int64_t st_ms;
	int64_t st_trust_ms;		/* how long after st_ms they serve */
	uint64_t st_gen;
	int64_t changed_ms;		/* when a write here last changed it */
	/* open files of it, and the name an unlink gave it while open
	 * (removed at the last release): nodes_lock */
	unsigned opens;
	bool silly;
	struct dcnfs_fh silly_dir;
	struct rnode *silly_at;		/* silly_dir's node, held (one
					 * lookup of its own), or NULL */
	char silly_name[40];
	/* data written UNSTABLE through any open file of it, not committed
	 * yet (the kernel writes a shared mapping's pages back through
	 * whichever file it picks, so a flush or fsync of any commits all),
	 * and the write verifier it was written under; lost: some of what
	 * was written since it was last clean may be gone (two verifiers, or
	 * a COMMIT that answered another), which every flush and fsync says
	 * (EIO) until a write finds nothing left to commit, or the last open
	 * file closes; committing: a COMMIT of it is in flight, which the
	 * next waits for (rs.commit_done): nodes_lock */
	bool dirty, lost, committing;
	uint64_t verf;
};

/* An open directory: its listing, read whole at opendir. */
struct rdir {
	char *buf;		/* names, NUL-terminated, one after another */
	size_t len, cap;
	uint64_t *ino;		/* per name */
	size_t n, ncap;
};

struct remote_state {
	struct dc_backend be;
	struct dc_cache *cache;
	struct rnode root;
	struct rnode *buckets[NODE_BUCKETS];
	pthread_mutex_t nodes_lock;
	pthread_cond_t commit_done;	/* a node's committing went false */
	double entry_timeout, attr_timeout, neg_timeout;
	bool no_names;		/* --name-cache off: every lookup a LOOKUP */
	/* attributes seen serve for a tenth of how long their inode had
	 * been unchanged, within [min, max] (dcnfs_trust_ms): a file's by
	 * --ac and --acregmax, a directory's by --acdir and --acdirmax */
	int64_t acreg_min_ms, acreg_max_ms, acdir_min_ms, acdir_max_ms;
	/* bumped by each change made through the mount that may change
	 * attributes of inodes other than the one it names (nlink, a
	 * directory's times): attributes seen before it serve no more */
	uint64_t attr_gen;	/* atomic */
	int64_t changed_ms;	/* atomic: when attr_gen last moved */
	struct fuse_session *se;
};

extern struct remote_state rs;

/* ---- remote_node.c: nodes --------------------------------------------------- */

/* The node of a nodeid, and the nodeid of a node (the root's is
 * FUSE_ROOT_ID). */
struct rnode *rnode_of(fuse_ino_t ino);
fuse_ino_t rnode_id(struct rnode *n);
/* The table's bucket of inode (dev, ino). */
size_t rnode_bucket(uint64_t dev, uint64_t ino);
bool rnode_same_fh(const struct dcnfs_fh *a, const struct dcnfs_fh *b);
/* Remember st's times and size as what n's last open saw (nodes_lock). */
void rnode_seen_locked(struct rnode *n, const struct stat *st);
/* The node of inode (dev, ino) of type type and handle fh, one more
 * lookup counted on it: found or made (NULL: no memory).  dentry (a
 * directory's entry, or NULL) becomes the node's; its reference passes. */
struct rnode *rnode_get(uint64_t dev, uint64_t ino, uint32_t type,
			const struct dcnfs_fh *fh, struct dc_dentry *dentry);
/* The same for the inode st describes. */
struct rnode *rnode_get_st(const struct stat *st, const struct dcnfs_fh *fh,
			   struct dc_dentry *dentry);
/* The kernel forgot nlookup lookups of n: at none left, n goes, unless an
 * open file still pins it (then rnode_closed frees it). */
void rnode_forget(struct rnode *n, uint64_t nlookup);
/* At the end: every node, its entry, and its hidden name. */
void rnodes_free_all(void);
/* A reference to directory node n's entry: 0, ENOTDIR or ESTALE. */
int rnode_dentry(struct rnode *n, struct dc_dentry **out);
/* One more, one fewer open file of n; at none left, the hidden name an
 * unlink gave it goes, and so does n if the kernel forgot it meanwhile
 * (n may be freed: not to be used after). */
void rnode_opened(struct rnode *n);
void rnode_closed(struct rnode *n);
/* Hidden name name in directory node p is gone: the cache forgets it,
 * and the hold of p that unlink_open took is dropped. */
void rnode_unhid(struct rnode *p, const char *name);

/* ---- remote_node.c: attributes seen ---------------------------------------- */

/* CLOCK_MONOTONIC in ms. */
int64_t rs_now_ms(void);
/* The generation of changes through the mount (acquire). */
uint64_t rattr_gen(void);
/* A change through the mount: attributes seen before serve no more. */
void rattr_changed(void);
/* st, from an RPC sent at ms while the generation was gen, as n's. */
void rattr_store(struct rnode *n, const struct stat *st, int64_t ms,
		 uint64_t gen);
/* n's own data or attributes changed through it: ask the server next. */
void rattr_stale(struct rnode *n);
/* Names in directory p changed through this mount (remote_node.c). */
void rdir_changed(struct rnode *p);
/* n's attributes: trusted ones, else a GETATTR's.  0 or -errno. */
int rattr_get(struct rnode *n, struct stat *st);
/* The same for a node just looked up through the cache, the backend's
 * attributes of its entry (seed, seen at seen; 0: none) serving too. */
int rattr_of_entry(struct rnode *n, const struct stat *seed, int64_t seen,
		   struct stat *st);

/* ---- remote.c ------------------------------------------------------------ */

extern const struct fuse_lowlevel_ops remote_ops;

#endif
