/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfsfs.h - a libdcache backend over an NFS export (NFSv3 or NFSv4.0),
 * on libnfs's raw RPC calls.
 *
 * Built into libdcnfs.a, apart from libdcache (whose users need no
 * libnfs), when pkg-config finds libnfs.  Cookies are file handles: a
 * lookup asks the server for one name in the directory a handle names,
 * so each miss costs one LOOKUP RPC and each hit none.  With TTLs on, an
 * expired entry costs a GETATTR of its directory (and one of its inode),
 * and a LOOKUP only when the directory changed.  See docs/nfs.md.
 */
#ifndef DCACHE_NFSFS_H
#define DCACHE_NFSFS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>

#include "dcache.h"

struct dcnfs_options {
	uint32_t timeout_ms;	/* one RPC's answer at most; 0: 10000 */
	/* Attributes the server showed at most this long ago (ms) stand in
	 * for a GETATTR when an expired entry is checked (NFS's acdirmin),
	 * so an answer may be this much older than its TTL; 0: 100;
	 * DCNFS_ACDIR_OFF: never. */
	uint32_t acdir_ms;
	/* NFS's acdirmax: attributes are trusted for a tenth of how long
	 * the inode had been unchanged (its mtime or ctime, by the server's
	 * clock) when they were seen, within [acdir_ms, acdir_max_ms], as
	 * BSD's NFS clients do (dcnfs_trust_ms); 0, or below acdir_ms:
	 * acdir_ms alone. */
	uint32_t acdir_max_ms;
	uint32_t reserved32;	/* zero */
	uint64_t reserved[2];	/* zero */
};

#define DCNFS_ACDIR_OFF	UINT32_MAX

/*
 * How long attributes seen of an inode that had then been unchanged for
 * unchanged_ms stand in for a GETATTR: a tenth of that, within [min_ms,
 * max_ms] (max_ms below min_ms: min_ms).  A file left alone for ten
 * minutes is trusted for a minute, one changed a second ago for min_ms:
 * what changed lately is likely to change again.  A server clock ahead
 * of the client's gives a negative age, so min_ms; one behind it by D
 * adds D to every age (trust up to D/10 longer): the clocks are assumed
 * to agree, as NFS clients assume.
 */
static inline int64_t dcnfs_trust_ms(int64_t unchanged_ms, int64_t min_ms,
				     int64_t max_ms)
{
	int64_t t = unchanged_ms / 10;

	if (max_ms < min_ms)
		max_ms = min_ms;
	return t < min_ms ? min_ms : t > max_ms ? max_ms : t;
}

/* RPCs sent, by kind, since dcnfs_open (a moment's view, not a snapshot). */
struct dcnfs_stats {
	uint64_t lookups;	/* LOOKUP */
	uint64_t getattrs;	/* GETATTR */
	uint64_t readdirs;	/* READDIR (one per page of a listing) */
	uint64_t readlinks;	/* READLINK */
	uint64_t connects;	/* connections made to the NFS service */
	uint64_t retries;	/* RPCs sent again on a new connection */
	uint64_t revalidations;	/* expired entries checked (revalidate) */
	uint64_t reads;		/* READ */
	uint64_t writes;	/* WRITE */
	uint64_t commits;	/* COMMIT */
	uint64_t updates;	/* CREATE, MKDIR, SYMLINK, MKNOD, REMOVE, RMDIR,
				 * RENAME, LINK */
	uint64_t setattrs;	/* SETATTR */
	uint64_t others;	/* FSSTAT */
	uint64_t later;		/* RPCs sent again because the server asked
				 * for them later (JUKEBOX, DELAY, GRACE) */
};

/*
 * A backend for url, "nfs://HOST/EXPORT[?PARAM[&PARAM...]]", into *out
 * (PARAM: version=3 or version=4 (NFSv4.0; 3 when not given), or
 * nfsport=N and mountport=N to connect to those ports without asking
 * HOST's rpcbind; over NFSv4 the NFS port is 2049 unless nfsport= says
 * otherwise, and mountport= goes unused): the export's root is found
 * (NFSv3: one MNT; NFSv4: PUTROOTFH and a LOOKUP per component of its
 * pseudo path) and its handle kept.  The backend then connects to the
 * NFS service once per thread that uses it at once (a pool: libnfs
 * contexts are one thread's at a time).  0, or -EINVAL (NULL, a bad URL,
 * non-zero reserved space), -ENOMEM, -ECONNREFUSED (HOST's rpcbind,
 * mountd or NFS service cannot be reached), -ETIMEDOUT, or the server's
 * answer for the export (-ENOENT, -EACCES, ...).
 */
int dcnfs_open(const char *url, const struct dcnfs_options *opt,
	       struct dc_backend *out);
/* Is url one dcnfs_open takes, as written?  0, or -EINVAL with what is
 * wrong with it (a phrase, for a usage message) in why. */
int dcnfs_url_check(const char *url, char *why, size_t size);

/* The RPC counts of a backend dcnfs_open made, while its cache lives;
 * zeros for another backend. */
void dcnfs_stats(const struct dc_backend *be, struct dcnfs_stats *st);

/* ---- Files: what a file server (dcfs) needs besides names ----------------
 * Each call takes the backend dcnfs_open made (-EINVAL for another), the
 * credential the server is to check (AUTH_UNIX: uid, gid, at most 16
 * groups; NULL: root) and handles; it sends one RPC (read and write: one
 * per 1 MiB) and answers 0 (or a count) or a negative errno: the
 * server's (NFS3ERR_* as the system's: -ENOENT, -EACCES, -ESTALE for a
 * handle whose inode is gone, ...), -ETIMEDOUT, or -EIO (the connection
 * failed; an RPC that is not safe to send twice -- those that make,
 * remove, rename or link names -- is then not sent again, so whether the
 * server did it is unknown).  struct stat out: the attributes the reply
 * carried, or those of a GETATTR after it (st_dev is the fsid folded to
 * 32 bits, the entries' gen).
 */

/* An NFS file handle (a server's longer than 64 bytes: -EIO). */
struct dcnfs_fh {
	uint32_t len;
	unsigned char data[64];
};

/* Who asks (AUTH_UNIX), and for which process. */
struct dcnfs_cred {
	uint32_t uid, gid;
	uint32_t ngroups;		/* beyond 16: the first 16 */
	const uint32_t *groups;
	pid_t pid;			/* whose being killed ends a wait the
					 * server asked for (-EINTR); 0: none */
};

/* The handle of a cache entry's inode (dc_dentry_stat of an entry of
 * this backend's cache): 0, or -ESTALE (no cookie). */
int dcnfs_inode_fh(const struct dc_inode *inode, struct dcnfs_fh *out);
int dcnfs_getattr(const struct dc_backend *be, const struct dcnfs_cred *cr,
		  const struct dcnfs_fh *fh, struct stat *st);
/* The attributes the backend last saw of a cache entry's inode (in any
 * reply), without an RPC, and when the RPC that showed them was sent
 * (CLOCK_MONOTONIC, ms) into *seen_ms: 0, -ESTALE (no cookie) or
 * -ENODATA (none seen). */
int dcnfs_inode_stat(const struct dc_backend *be, const struct dc_inode *inode,
		     struct stat *st, int64_t *seen_ms);
/* A cache entry's inode was changed through this client (a name made or
 * removed in it): what was seen of it before counts as seen of an inode
 * changed lately, trusted for acdir_ms only (dcnfs_trust_ms). */
void dcnfs_inode_changed(const struct dc_backend *be,
			 const struct dc_inode *inode);

/* LOOKUP name in dir, without the cache: its handle into *fh. */
int dcnfs_lookup(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *dir, const char *name,
		 struct dcnfs_fh *fh, struct stat *st);

/* dcnfs_setattr's what: the fields of *want to set */
#define DCNFS_SET_MODE		0x01
#define DCNFS_SET_UID		0x02
#define DCNFS_SET_GID		0x04
#define DCNFS_SET_SIZE		0x08
#define DCNFS_SET_ATIME		0x10	/* st_atim */
#define DCNFS_SET_MTIME		0x20	/* st_mtim */
#define DCNFS_SET_ATIME_NOW	0x40	/* the server's time */
#define DCNFS_SET_MTIME_NOW	0x80
int dcnfs_setattr(const struct dc_backend *be, const struct dcnfs_cred *cr,
		  const struct dcnfs_fh *fh, const struct stat *want,
		  unsigned what, struct stat *st);

/*
 * Make name in directory dir: mode's type says what (S_IFREG: CREATE,
 * GUARDED when excl, else UNCHECKED, which opens an existing file;
 * S_IFDIR: MKDIR; S_IFLNK: SYMLINK to target; S_IFIFO, S_IFSOCK,
 * S_IFCHR, S_IFBLK: MKNOD with rdev), its permission bits the new
 * inode's; its handle into *fh.  -EINVAL: another type, or no target.
 */
int dcnfs_make(const struct dc_backend *be, const struct dcnfs_cred *cr,
	       const struct dcnfs_fh *dir, const char *name, mode_t mode,
	       int excl, dev_t rdev, const char *target, struct dcnfs_fh *fh,
	       struct stat *st);
/* Remove name from dir: REMOVE, or RMDIR when is_dir. */
int dcnfs_remove(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *dir, const char *name, int is_dir);
int dcnfs_rename(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *odir, const char *oname,
		 const struct dcnfs_fh *ndir, const char *nname);
/* A new name for fh's inode; its attributes after into *st. */
int dcnfs_link(const struct dc_backend *be, const struct dcnfs_cred *cr,
	       const struct dcnfs_fh *fh, const struct dcnfs_fh *dir,
	       const char *name, struct stat *st);
/* A symlink's target into buf (NUL-terminated): its length, or
 * -ENAMETOOLONG (no room for it and its NUL). */
int dcnfs_readlink(const struct dc_backend *be, const struct dcnfs_fh *fh,
		   char *buf, size_t size);
/* Up to size bytes at off into buf: the count (0 at the end). */
ssize_t dcnfs_read(const struct dc_backend *be, const struct dcnfs_cred *cr,
		   const struct dcnfs_fh *fh, void *buf, size_t size,
		   uint64_t off);
/* size bytes at off, UNSTABLE (dcnfs_commit makes them durable); the
 * count written; the server's write verifier into *verf (the last part's),
 * and *mixed true when the parts of the write saw two (the server
 * restarted between them and may have lost the first). */
ssize_t dcnfs_write(const struct dc_backend *be, const struct dcnfs_cred *cr,
		    const struct dcnfs_fh *fh, const void *buf, size_t size,
		    uint64_t off, uint64_t *verf, bool *mixed);
/* What was written UNSTABLE to stable storage; the verifier into *verf
 * (one unlike the writes' means the server restarted and may have lost
 * them). */
int dcnfs_commit(const struct dc_backend *be, const struct dcnfs_cred *cr,
		 const struct dcnfs_fh *fh, uint64_t *verf);
int dcnfs_statfs(const struct dc_backend *be, const struct dcnfs_fh *fh,
		 struct statvfs *st);
/* Every name in directory dir ("." and ".." too) with its fileid, in
 * the server's order, to emit, until emit answers non-zero (returned). */
int dcnfs_list(const struct dc_backend *be, const struct dcnfs_cred *cr,
	       const struct dcnfs_fh *dir,
	       int (*emit)(void *arg, const char *name, uint64_t ino),
	       void *arg);

#endif
