/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rpc.h - one NFS RPC at a time on libnfs's raw calls: a pool of
 * connections to one server, the MNT (or NFSv4 LOOKUPs) that find an
 * export's root, and the conversions every user of the protocol needs.
 * Callers speak NFSv3 procedures; over NFSv4 each is sent as a COMPOUND
 * and answered as NFSv3 (nfs4.c).  Private to tools/nfs (nfsfs.c names,
 * nfsio.c files).
 */
#ifndef DCNFS_RPC_H
#define DCNFS_RPC_H

#include <pthread.h>
#include <stdint.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-mount.h>
#include <nfsc/libnfs-raw-nfs.h>
#include <nfsc/libnfs-raw-nfs4.h>

#include "nfs/nfsfs.h"

/* RPCs counted by kind (dcnfs_stats). */
enum rpc_kind { RK_LOOKUP, RK_GETATTR, RK_READDIR, RK_READLINK, RK_CONNECT,
		RK_RETRY, RK_REVAL, RK_READ, RK_WRITE, RK_COMMIT, RK_UPDATE,
		RK_SETATTR, RK_OTHER, RK_LATER, RK_NR };

struct conn;

/* A server, its export, and the connections to its NFS service. */
struct nfsrpc {
	char *server;
	char *export;
	int timeout_ms;
	int nfsport, mountport;	/* from the URL; 0: ask rpcbind */
	int version;		/* 3 or 4 */
	pthread_mutex_t lock;	/* idle */
	struct conn *idle;	/* connections no thread uses now */
	uint64_t stats[RK_NR];	/* atomic */
	/* NFSv4's state, for CREATE's OPEN (nfs4.c) */
	pthread_mutex_t v4lock;	/* v4clientid, v4verf */
	uint64_t v4clientid;	/* 0: none set up */
	uint64_t v4verf;	/* the next SETCLIENTID's verifier */
	uint64_t v4nonce;	/* random: this client's ID, with the host's name */
	uint64_t v4owners;	/* open-owners named (atomic) */
};

/* A procedure nfsrpc_call sends that NFSv3 has not: the export's root
 * handle over NFSv4 (args: its path; the reply: an nfs_fh3). */
#define NFSRPC_ROOT	1000

/* A call the server asks for later (JUKEBOX; NFSv4 DELAY, GRACE) is sent
 * again after a pause that doubles from MIN to MAX, for FOR in all. */
#define NFSRPC_LATER_MIN_MS	100
#define NFSRPC_LATER_MAX_MS	5000
#define NFSRPC_LATER_FOR_MS	120000

/* nfsrpc_call's flags */
#define RPC_ONCE	0x1	/* not idempotent: never sent a second time */

/*
 * Send one NFS RPC (proc, an NFSv3 procedure, with its NFSv3 args) as cred (NULL: as root) and wait for
 * it; take reads its reply inside libnfs's callback (which owns it) and
 * answers 0 or a negative errno.  A connection whose transport failed is
 * dropped, and the RPC sent once more on a new one unless RPC_ONCE (then
 * -EIO or -ETIMEDOUT: whether the server did it is unknown).  One the
 * server asks for later is sent again, RPC_ONCE or not, after a pause
 * (NFSRPC_LATER_*), and -EAGAIN once it has asked for FOR_MS.  0 or a
 * negative errno; never 0 for an RPC that was not answered.
 */
int nfsrpc_call(struct nfsrpc *r, enum rpc_kind kind,
		const struct dcnfs_cred *cred, int proc, void *args,
		int (*take)(void *res, void *arg), void *arg, unsigned flags);

/* "nfs://HOST/EXPORT[?version=3|4][&nfsport=N][&mountport=N]" into r
 * (r->version: 3 unless asked), timeout_ms for each RPC.  0, -EINVAL or
 * -ENOMEM (nfsrpc_fini frees what was set). */
int nfsrpc_init(struct nfsrpc *r, const char *url, int timeout_ms);
/* Is url one nfsrpc_init takes?  0, or -EINVAL with what is wrong (a
 * phrase) in why. */
int nfsrpc_url_check(const char *url, char *why, size_t size);
/* The export's root handle (NFSv3: one MNT, on a connection of its own;
 * NFSv4: PUTROOTFH and a LOOKUP per component). */
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

/* ---- between rpc.c and nfs4.c ---- */

/*
 * An RPC in flight: take() reads the reply inside the callback (which
 * owns it) into arg and answers 0 or a negative errno.  broken: the
 * transport failed, the connection is not to be used again.
 */
struct call {
	int (*take)(void *res, void *arg);
	void *arg;
	int done;
	int answered;	/* the server's reply came (done for another reason) */
	int err;
	int broken;
};

/* libnfs's callback for a struct call (priv). */
void nfsrpc__done(struct rpc_context *rpc, int status, void *data, void *priv);
/* Drive rpc until c's callback ran: 0, or a negative errno (the
 * connection is then broken). */
int nfsrpc__wait(struct nfsrpc *r, struct rpc_context *rpc, struct call *c);
/* proc with its NFSv3 args as NFSv4 on rpc, the reply to c->take as
 * proc's NFSv3 result; c as nfsrpc__wait leaves it. */
int nfs4_exchange(struct nfsrpc *r, struct rpc_context *rpc, int proc,
		  void *args, struct call *c);
int nfs4_errno(nfsstat4 st);

/*
 * A READDIR page's names and how far it went, checked so that a server
 * that sends what no directory holds is refused (-EIO) rather than
 * believed.  nfsrpc_name: 0, a name to list; 1, one longer than
 * DC_NAME_MAX, which some servers' file systems hold and no caller can
 * use (skipped, its cookie kept); -EIO, none at all, or one with a '/'.
 * "." and ".." are names here.  nfsrpc_page_moves: whether a page that
 * did not end the listing moved it on: it ends on a cookie other than 0
 * and the one it was asked from (else the next page would be the same,
 * forever), nor on one an earlier page of the listing ended on (pages
 * that come round again, A, B, A, B...: Brent's cycle finding over the
 * cookies the pages end on, in the listing's *loop, zeroed before its
 * first page: found within three times the pages up to the first
 * repeat),
 * and the listing is not past NFSRPC_LIST_MAX names (a bound on one
 * that never ends).
 */
#define NFSRPC_LIST_MAX	(1ull << 32)
struct nfsrpc_loop {
	cookie3 saved;		/* the cookie a page ended on, compared */
	uint64_t lap, power;	/* pages since saved; saved again at power */
};
int nfsrpc_name(const char *name);
int nfsrpc_page_moves(struct nfsrpc_loop *loop, cookie3 asked, cookie3 last,
		      uint64_t names);

/* NFSv3 to the system's words. */
int nfs3_errno(nfsstat3 st);

/* A file system's 32-bit name, from its fsid (an NFSv4 one folded in
 * first, nfs4_attr.c): the cache's gen and st_dev.  Both halves count: a
 * server's fsid may differ in either alone (a device number's major in
 * the high half, its minor in the low). */
static inline uint32_t nfsrpc_fsid32(uint64_t fsid)
{
	return (uint32_t)(fsid ^ fsid >> 32);
}
uint32_t nfs3_type_bits(ftype3 t);
void nfs3_stat_fill(const fattr3 *a, struct stat *st);
int64_t nfsrpc_now_ms(void);

#endif
