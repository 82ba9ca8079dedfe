/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rpc.h - one NFSv3 RPC at a time on libnfs's raw calls: a pool of
 * connections to one server, the MNT that finds an export's root, and
 * the conversions every user of the protocol needs.  Private to
 * tools/nfs (nfsfs.c names, nfsio.c files).
 */
#ifndef DCNFS_RPC_H
#define DCNFS_RPC_H

#include <pthread.h>
#include <stdint.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>

#include "nfs/nfsfs.h"

/* RPCs counted by kind (dcnfs_stats). */
enum rpc_kind { RK_LOOKUP, RK_GETATTR, RK_READDIR, RK_READLINK, RK_CONNECT,
		RK_RETRY, RK_REVAL, RK_READ, RK_WRITE, RK_COMMIT, RK_UPDATE,
		RK_SETATTR, RK_OTHER, RK_NR };

struct conn;

/* A server, its export, and the connections to its NFS service. */
struct nfsrpc {
	char *server;
	char *export;
	int timeout_ms;
	int nfsport, mountport;	/* from the URL; 0: ask rpcbind */
	pthread_mutex_t lock;	/* idle */
	struct conn *idle;	/* connections no thread uses now */
	uint64_t stats[RK_NR];	/* atomic */
};

typedef int (*send_fn)(struct rpc_context *rpc, rpc_cb cb, void *args,
		       void *priv);

/* nfsrpc_call's flags */
#define RPC_ONCE	0x1	/* not idempotent: never sent a second time */

/*
 * Send one NFS RPC (send with args) as cred (NULL: as root) and wait for
 * it; take reads its reply inside libnfs's callback (which owns it) and
 * answers 0 or a negative errno.  A connection whose transport failed is
 * dropped, and the RPC sent once more on a new one unless RPC_ONCE (then
 * -EIO or -ETIMEDOUT: whether the server did it is unknown).  0 or a
 * negative errno; never 0 for an RPC that was not answered.
 */
int nfsrpc_call(struct nfsrpc *r, enum rpc_kind kind,
		const struct dcnfs_cred *cred, send_fn send, void *args,
		int (*take)(void *res, void *arg), void *arg, unsigned flags);

/* "nfs://HOST/EXPORT[?version=3|4][&nfsport=N][&mountport=N]" into r, timeout_ms for each RPC; the
 * version asked into *version.  0, -EINVAL or -ENOMEM (nfsrpc_fini
 * frees what was set). */
int nfsrpc_init(struct nfsrpc *r, const char *url, int timeout_ms,
		int *version);
/* The export's root handle (one MNT, on a connection of its own). */
int nfsrpc_mount(struct nfsrpc *r, struct dcnfs_fh *root);
void nfsrpc_fini(struct nfsrpc *r);

static inline void nfsrpc_count(struct nfsrpc *r, enum rpc_kind k)
{
	/* relaxed: counters, ordered against nothing */
	__atomic_add_fetch(&r->stats[k], 1, __ATOMIC_RELAXED);
}

/* The server of a backend dcnfs_open made, or NULL (nfsfs.c). */
struct nfsrpc *dcnfs__rpc(const struct dc_backend *be);

/* READLINK of fh into buf (nfsio.c; dcnfs_readlink's contract). */
int dcnfs__readlink(struct nfsrpc *r, const struct dcnfs_fh *fh, char *buf,
		    size_t size);

/* NFSv3 to the system's words. */
int nfs3_errno(nfsstat3 st);
uint32_t nfs3_type_bits(ftype3 t);
void nfs3_stat_fill(const fattr3 *a, struct stat *st);
int64_t nfsrpc_now_ms(void);

#endif
