/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfsfs.h - a libdcache backend over an NFS export, on libnfs (NFSv3).
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

#include <stdint.h>

#include "dcache.h"

struct dcnfs_options {
	uint32_t timeout_ms;	/* one RPC's answer at most; 0: 10000 */
	/* Attributes the server showed at most this long ago (ms) stand in
	 * for a GETATTR when an expired entry is checked (NFS's acdirmin),
	 * so an answer may be this much older than its TTL; 0: 100;
	 * DCNFS_ACDIR_OFF: never. */
	uint32_t acdir_ms;
	uint64_t reserved[3];	/* zero */
};

#define DCNFS_ACDIR_OFF	UINT32_MAX

/* RPCs sent, by kind, since dcnfs_open (a moment's view, not a snapshot). */
struct dcnfs_stats {
	uint64_t lookups;	/* LOOKUP */
	uint64_t getattrs;	/* GETATTR */
	uint64_t readdirs;	/* READDIR (one per page of a listing) */
	uint64_t readlinks;	/* READLINK */
	uint64_t connects;	/* connections made to the NFS service */
	uint64_t retries;	/* RPCs sent again on a new connection */
	uint64_t revalidations;	/* expired entries checked (revalidate) */
};

/*
 * A backend for url, "nfs://HOST/EXPORT[?version=3]", into *out: the
 * export is mounted (one MNT, through HOST's rpcbind) and its root's
 * handle kept.  The backend then connects to the NFS service once per
 * thread that uses it at once (a pool: libnfs contexts are one thread's
 * at a time).  0, or -EINVAL (NULL, a bad URL, non-zero reserved space),
 * -EPROTONOSUPPORT (version=4: not built yet), -ENOMEM, -ECONNREFUSED
 * (HOST's rpcbind, mountd or NFS service cannot be reached), -ETIMEDOUT,
 * or the MNT's error (-ENOENT, -EACCES, ...).
 */
int dcnfs_open(const char *url, const struct dcnfs_options *opt,
	       struct dc_backend *out);

/* The RPC counts of a backend dcnfs_open made, while its cache lives;
 * zeros for another backend. */
void dcnfs_stats(const struct dc_backend *be, struct dcnfs_stats *st);

#endif
