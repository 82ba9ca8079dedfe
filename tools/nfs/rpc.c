// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rpc.c - one NFS RPC at a time, on libnfs's raw calls.
 *
 * Connections: a libnfs rpc_context serves one thread at a time.  Idle
 * connections wait in a stack under r->lock; a call takes one (or
 * connects a new one), uses it alone, and gives it back, or destroys it
 * when its transport failed.  So there are as many connections as
 * threads that ever called at once, each connected once.
 *
 * Calls: each RPC is queued and then driven by a poll loop on the
 * context's descriptor until its callback ran or the timeout passed.  The
 * callback copies what the caller needs out of the reply (libnfs frees it
 * afterwards).  An RPC whose connection failed (the server restarted, say)
 * is sent once more on a new one, unless its caller said it must not be
 * done twice (a CREATE or REMOVE sent again would answer EEXIST or
 * ENOENT for what the first did).
 *
 * Later: a server that answers JUKEBOX (NFSv4: DELAY, GRACE) has not
 * done the call and asks for it again later, as it does while it
 * recovers after a restart.  The call is sent again after a pause that
 * doubles from NFSRPC_LATER_MIN_MS up to NFSRPC_LATER_MAX_MS, for
 * NFSRPC_LATER_FOR_MS in all (longer than a default grace period), then
 * fails with -EAGAIN; or sooner with -EINTR, when the process it is made
 * for (the credential's pid) is being killed.  Calls not to be done twice
 * are sent again too, as
 * Linux's client does: NFSv4 says the operation was not done; NFSv3 only
 * that it was not completed, so one an NFSv3 server completes after all
 * answers the second time as a repeat would (EEXIST, ENOENT).
 *
 * Credentials: AUTH_UNIX, set on the connection before each call when it
 * differs from the one it carries, so a connection serves any caller.
 *
 * Versions: callers name NFSv3 procedures.  Over NFSv3 each is the RPC
 * of that name; over NFSv4 (r->version 4) nfs4.c sends it as a COMPOUND
 * on the same connection and answers the NFSv3 result.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "common/proc.h"
#include "nfs/rpc.h"

#define RPC_GROUPS_MAX	16	/* AUTH_UNIX carries no more */

struct conn {
	struct rpc_context *rpc;
	struct conn *next;		/* in r->idle */
	/* the credential its AUTH_UNIX carries */
	uint32_t uid, gid, ngroups;
	uint32_t groups[RPC_GROUPS_MAX];
};

void nfsrpc__done(struct rpc_context *rpc, int status, void *data,
		  void *priv)
{
	struct call *c = priv;

	(void)rpc;
	c->done = 1;
	if (status == RPC_STATUS_SUCCESS) {
		c->answered = 1;
		c->err = c->take ? c->take(data, c->arg) : 0;
		return;
	}
	c->broken = 1;
	c->err = status == RPC_STATUS_TIMEOUT ? -ETIMEDOUT : -EIO;
}

int64_t nfsrpc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int nfsrpc__wait(struct nfsrpc *r, struct rpc_context *rpc, struct call *c)
{
	int64_t deadline = nfsrpc_now_ms() + r->timeout_ms;

	while (!c->done) {
		struct pollfd p = { .fd = rpc_get_fd(rpc), .events = rpc_which_events(rpc) };
		int64_t left = deadline - nfsrpc_now_ms();
		int n;

		if (left <= 0) {
			c->broken = 1;
			return -ETIMEDOUT;
		}
		n = poll(&p, 1, (int)left);
		if (n < 0 && errno != EINTR) {
			c->broken = 1;
			return -errno;
		}
		if (n > 0 && rpc_service(rpc, p.revents) < 0) {
			/* the connection is done for, even if this call's
			 * answer came in before it failed */
			c->broken = 1;
			return c->done ? c->err : -EIO;
		}
	}
	return c->err;
}

/* A new connection to program/version on the server into *out. */
static int connect_rpc(struct nfsrpc *r, int program, int version,
		       struct rpc_context **out)
{
	struct call c = { 0 };
	struct rpc_context *rpc = rpc_init_context();
	/* NFSv4 has one well-known port and needs no rpcbind (RFC 7530) */
	int port = program == NFS_PROGRAM ? (r->nfsport ? r->nfsport :
		   version == NFS_V4 ? 2049 : 0) :
		   program == MOUNT_PROGRAM ? r->mountport : 0;
	int err;

	if (!rpc)
		return -ENOMEM;
	if ((port ? rpc_connect_port_async(rpc, r->server, port, program, version,
					   nfsrpc__done, &c) :
		    rpc_connect_program_async(rpc, r->server, program, version,
					      nfsrpc__done, &c)) < 0) {
		rpc_destroy_context(rpc);
		return -ECONNREFUSED;
	}
	err = nfsrpc__wait(r, rpc, &c);
	if (err) {
		rpc_destroy_context(rpc);
		return err == -EIO ? -ECONNREFUSED : err;
	}
	*out = rpc;
	return 0;
}

static void drop_conn(struct conn *cn)
{
	rpc_destroy_context(cn->rpc);
	free(cn);
}

/* Make cn's AUTH_UNIX say cred (NULL: root).  0 or -ENOMEM. */
static int conn_cred(struct conn *cn, const struct dcnfs_cred *cred)
{
	static const struct dcnfs_cred root;
	uint32_t n, groups[RPC_GROUPS_MAX];
	struct AUTH *auth;

	if (!cred)
		cred = &root;
	n = cred->ngroups < RPC_GROUPS_MAX ? cred->ngroups : RPC_GROUPS_MAX;
	if (n)
		memcpy(groups, cred->groups, n * sizeof(*groups));
	if (cn->uid == cred->uid && cn->gid == cred->gid && cn->ngroups == n &&
	    !memcmp(cn->groups, groups, n * sizeof(*groups)))
		return 0;
	auth = libnfs_authunix_create("dcnfs", cred->uid, cred->gid, n,
				      n ? groups : NULL);
	if (!auth)
		return -ENOMEM;
	rpc_set_auth(cn->rpc, auth);	/* frees the one it replaces */
	cn->uid = cred->uid;
	cn->gid = cred->gid;
	cn->ngroups = n;
	memcpy(cn->groups, groups, n * sizeof(*groups));
	return 0;
}

/*
 * Has the server closed idle connection cn (a restart, an idle timeout)?
 * An idle connection has no call in flight, so anything to read on it is
 * the end of the stream or an error.  Seen now, before a call is queued
 * on it: one that found it dead only after (libnfs fails every queued
 * call when it reads the end) could not tell whether the server had
 * done it, and a call not to be done twice would fail with EIO.
 */
static bool conn_closed(struct conn *cn)
{
	struct pollfd p = { .fd = rpc_get_fd(cn->rpc), .events = POLLIN | POLLRDHUP };

	return p.fd < 0 || poll(&p, 1, 0) != 0;
}

/* An idle connection to the NFS service (unless fresh), or a new one. */
static int get_conn(struct nfsrpc *r, bool fresh, struct conn **out)
{
	struct conn *cn = NULL;
	int err;

	while (!fresh) {
		pthread_mutex_lock(&r->lock);
		cn = r->idle;
		if (cn)
			r->idle = cn->next;
		pthread_mutex_unlock(&r->lock);
		if (!cn || !conn_closed(cn))
			break;
		drop_conn(cn);
		cn = NULL;
	}
	if (cn) {
		*out = cn;
		return 0;
	}
	cn = calloc(1, sizeof(*cn));
	if (!cn)
		return -ENOMEM;
	err = connect_rpc(r, NFS_PROGRAM, r->version == 4 ? NFS_V4 : NFS_V3,
			  &cn->rpc);
	if (err) {
		free(cn);
		return err;
	}
	/* a credential that is no one's, so the first call sets its own */
	cn->uid = cn->gid = UINT32_MAX;
	nfsrpc_count(r, RK_CONNECT);
	*out = cn;
	return 0;
}

/* A connection broke: the idle ones go too, made to the same server, which
 * may have gone away (a restart closes them all), so that the calls after
 * this one do not each meet a dead connection first. */
static void drop_idle(struct nfsrpc *r)
{
	struct conn *cn, *next;

	pthread_mutex_lock(&r->lock);
	cn = r->idle;
	r->idle = NULL;
	pthread_mutex_unlock(&r->lock);
	for (; cn; cn = next) {
		next = cn->next;
		drop_conn(cn);
	}
}

static void put_conn(struct nfsrpc *r, struct conn *cn)
{
	pthread_mutex_lock(&r->lock);
	cn->next = r->idle;
	r->idle = cn;
	pthread_mutex_unlock(&r->lock);
}

/* proc's NFSv3 RPC with args on rpc, for c. */
static int send3(struct rpc_context *rpc, int proc, void *a, struct call *c)
{
	switch (proc) {
	case NFS3_GETATTR:  return rpc_nfs3_getattr_async(rpc, nfsrpc__done, a, c);
	case NFS3_SETATTR:  return rpc_nfs3_setattr_async(rpc, nfsrpc__done, a, c);
	case NFS3_LOOKUP:   return rpc_nfs3_lookup_async(rpc, nfsrpc__done, a, c);
	case NFS3_READLINK: return rpc_nfs3_readlink_async(rpc, nfsrpc__done, a, c);
	case NFS3_READ:	    return rpc_nfs3_read_async(rpc, nfsrpc__done, a, c);
	case NFS3_WRITE:    return rpc_nfs3_write_async(rpc, nfsrpc__done, a, c);
	case NFS3_CREATE:   return rpc_nfs3_create_async(rpc, nfsrpc__done, a, c);
	case NFS3_MKDIR:    return rpc_nfs3_mkdir_async(rpc, nfsrpc__done, a, c);
	case NFS3_SYMLINK:  return rpc_nfs3_symlink_async(rpc, nfsrpc__done, a, c);
	case NFS3_MKNOD:    return rpc_nfs3_mknod_async(rpc, nfsrpc__done, a, c);
	case NFS3_REMOVE:   return rpc_nfs3_remove_async(rpc, nfsrpc__done, a, c);
	case NFS3_RMDIR:    return rpc_nfs3_rmdir_async(rpc, nfsrpc__done, a, c);
	case NFS3_RENAME:   return rpc_nfs3_rename_async(rpc, nfsrpc__done, a, c);
	case NFS3_LINK:	    return rpc_nfs3_link_async(rpc, nfsrpc__done, a, c);
	case NFS3_READDIR:  return rpc_nfs3_readdir_async(rpc, nfsrpc__done, a, c);
	case NFS3_FSSTAT:   return rpc_nfs3_fsstat_async(rpc, nfsrpc__done, a, c);
	case NFS3_COMMIT:   return rpc_nfs3_commit_async(rpc, nfsrpc__done, a, c);
	default:	    return -1;
	}
}

/* proc on cn for c, as cn's version speaks it: 0 or a negative errno. */
static int exchange(struct nfsrpc *r, struct conn *cn, int proc, void *args,
		    struct call *c)
{
	if (r->version == 4)
		return nfs4_exchange(r, cn->rpc, proc, args, c);
	if (send3(cn->rpc, proc, args, c) < 0) {
		/* nothing left: the RPC was not sent */
		c->broken = 1;
		return -EIO;
	}
	return nfsrpc__wait(r, cn->rpc, c);
}

/*
 * Sleep before a call the server asked for later: 0; -EAGAIN when it has
 * asked for NFSRPC_LATER_FOR_MS already; -EINTR when the process the call
 * is for (cred's pid) is being killed, looked at every LATER_LOOK_MS, as
 * Linux's client waits killable (a grace period lasts a minute or two).
 * The call was not done: nothing is left half made.
 */
#define LATER_LOOK_MS	50

static int wait_later(const struct dcnfs_cred *cred, int64_t *waited_ms,
		      int64_t *pause_ms)
{
	int64_t slept;

	if (*waited_ms >= NFSRPC_LATER_FOR_MS)
		return -EAGAIN;
	for (slept = 0; slept < *pause_ms; slept += LATER_LOOK_MS) {
		int64_t ms = *pause_ms - slept < LATER_LOOK_MS ?
			     *pause_ms - slept : LATER_LOOK_MS;
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

		/* one that cannot be looked at waits on: the server said
		 * the call was not done, and it may be done later */
		if (cred && cred->pid && proc_dying(cred->pid) == 1)
			return -EINTR;
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	*waited_ms += *pause_ms;
	*pause_ms = *pause_ms * 2 > NFSRPC_LATER_MAX_MS ? NFSRPC_LATER_MAX_MS :
		    *pause_ms * 2;
	return 0;
}

int nfsrpc_call(struct nfsrpc *r, enum rpc_kind kind,
		const struct dcnfs_cred *cred, int proc, void *args,
		int (*take)(void *res, void *arg), void *arg, unsigned flags)
{
	int64_t waited_ms = 0, pause_ms = NFSRPC_LATER_MIN_MS;
	int tries, err = -EIO;
	bool fresh = false;

	for (tries = 0; tries < 2; tries++) {
		struct call c = { .take = take, .arg = arg };
		struct conn *cn;

		if (fresh)
			nfsrpc_count(r, RK_RETRY);
		/* the one resend after a failure on a new connection, not an
		 * idle one; a call asked for later takes any */
		err = get_conn(r, fresh, &cn);
		fresh = false;
		if (err)
			return err;
		err = conn_cred(cn, cred);
		if (err) {
			put_conn(r, cn);
			return err;
		}
		nfsrpc_count(r, kind);
		err = exchange(r, cn, proc, args, &c);
		if (!c.broken) {
			put_conn(r, cn);
			/* JUKEBOX: the server asks for it again; no failure,
			 * so the one resend after a failure stays */
			if (err == -EAGAIN && c.answered) {
				int later = wait_later(cred, &waited_ms, &pause_ms);

				if (later)
					return later;
				nfsrpc_count(r, RK_LATER);
				tries--;
				continue;
			}
			return err;
		}
		/* destroying the context cancels c: its callback may run
		 * now, while c is still ours */
		drop_conn(cn);
		/* a transport that failed, not a server that was slow: a
		 * timeout leaves the others be, or an overloaded server
		 * would get every thread's reconnects at once */
		if (err != -ETIMEDOUT)
			drop_idle(r);
		/* answered before the connection failed: that answer stands */
		if (c.answered || (flags & RPC_ONCE))
			return err;
		fresh = true;
	}
	return err;
}

int nfsrpc_name(const char *name)
{
	if (!name || !*name || strchr(name, '/'))
		return -EIO;
	return strnlen(name, DC_NAME_MAX + 1) > DC_NAME_MAX;
}

int nfsrpc_page_moves(struct nfsrpc_loop *loop, cookie3 asked, cookie3 last,
		      uint64_t names)
{
	if (!last || last == asked || names > NFSRPC_LIST_MAX ||
	    last == loop->saved)
		return 0;
	/* saved at pages 1, 2, 4, 8...: once the gap reaches a cycle's
	 * length, a page in the cycle ends on the saved cookie again */
	if (++loop->lap >= loop->power) {
		loop->saved = last;
		loop->power = loop->power ? 2 * loop->power : 1;
		loop->lap = 0;
	}
	return 1;
}

int nfs3_errno(nfsstat3 st)
{
	switch (st) {
	case NFS3_OK:			return 0;
	case NFS3ERR_PERM:		return -EPERM;
	case NFS3ERR_NOENT:		return -ENOENT;
	case NFS3ERR_NXIO:		return -ENXIO;
	case NFS3ERR_ACCES:		return -EACCES;
	case NFS3ERR_EXIST:		return -EEXIST;
	case NFS3ERR_XDEV:		return -EXDEV;
	case NFS3ERR_NODEV:		return -ENODEV;
	case NFS3ERR_NOTDIR:		return -ENOTDIR;
	case NFS3ERR_ISDIR:		return -EISDIR;
	case NFS3ERR_INVAL:		return -EINVAL;
	case NFS3ERR_FBIG:		return -EFBIG;
	case NFS3ERR_NOSPC:		return -ENOSPC;
	case NFS3ERR_ROFS:		return -EROFS;
	case NFS3ERR_MLINK:		return -EMLINK;
	case NFS3ERR_NAMETOOLONG:	return -ENAMETOOLONG;
	case NFS3ERR_NOTEMPTY:		return -ENOTEMPTY;
	case NFS3ERR_DQUOT:		return -EDQUOT;
	case NFS3ERR_STALE:		/* the inode is gone */
	case NFS3ERR_BADHANDLE:		return -ESTALE;
	case NFS3ERR_REMOTE:		return -EREMOTE;
	case NFS3ERR_NOTSUPP:		return -EOPNOTSUPP;
	case NFS3ERR_JUKEBOX:		return -EAGAIN;
	case NFS3ERR_BADTYPE:		return -EINVAL;
	default:			return -EIO;	/* IO, SERVERFAULT, ... */
	}
}

uint32_t nfs3_type_bits(ftype3 t)
{
	switch (t) {
	case NF3REG:	return S_IFREG;
	case NF3DIR:	return S_IFDIR;
	case NF3BLK:	return S_IFBLK;
	case NF3CHR:	return S_IFCHR;
	case NF3LNK:	return S_IFLNK;
	case NF3SOCK:	return S_IFSOCK;
	case NF3FIFO:	return S_IFIFO;
	default:	return 0;	/* the cache refuses it: -EIO */
	}
}

/* A struct stat of a's attributes (st_dev: nfsrpc_fsid32 of the fsid). */
void nfs3_stat_fill(const fattr3 *a, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_dev = (dev_t)nfsrpc_fsid32(a->fsid);
	st->st_ino = a->fileid;
	st->st_mode = nfs3_type_bits(a->type) | (a->mode & 07777);
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = makedev(a->rdev.specdata1, a->rdev.specdata2);
	st->st_size = (off_t)a->size;
	st->st_blksize = 4096;
	st->st_blocks = (blkcnt_t)((a->used + 511) / 512);
	st->st_atim.tv_sec = a->atime.seconds;
	st->st_atim.tv_nsec = a->atime.nseconds;
	st->st_mtim.tv_sec = a->mtime.seconds;
	st->st_mtim.tv_nsec = a->mtime.nseconds;
	st->st_ctim.tv_sec = a->ctime.seconds;
	st->st_ctim.tv_nsec = a->ctime.nseconds;
}

/* ---- the export ------------------------------------------------------- */

static int mnt_errno(mountstat3 st)
{
	switch (st) {
	case MNT3_OK:			return 0;
	case MNT3ERR_PERM:		return -EPERM;
	case MNT3ERR_NOENT:		return -ENOENT;
	case MNT3ERR_ACCES:		return -EACCES;
	case MNT3ERR_NOTDIR:		return -ENOTDIR;
	case MNT3ERR_INVAL:		return -EINVAL;
	case MNT3ERR_NAMETOOLONG:	return -ENAMETOOLONG;
	case MNT3ERR_NOTSUPP:		return -EOPNOTSUPP;
	default:			return -EIO;
	}
}

static int take_mnt(void *res, void *arg)
{
	mountres3 *r = res;
	const fhandle3 *h = &r->mountres3_u.mountinfo.fhandle;
	struct dcnfs_fh *root = arg;
	int err = mnt_errno(r->fhs_status);

	if (err)
		return err;
	if (h->fhandle3_len == 0 || h->fhandle3_len > NFS3_FHSIZE)
		return -EIO;
	root->len = h->fhandle3_len;
	memcpy(root->data, h->fhandle3_val, root->len);
	return 0;
}

static int take_root4(void *res, void *arg)
{
	const nfs_fh3 *h = res;
	struct dcnfs_fh *root = arg;

	if (h->data.data_len == 0 || h->data.data_len > sizeof(root->data))
		return -EIO;
	root->len = h->data.data_len;
	memcpy(root->data, h->data.data_val, root->len);
	return 0;
}

int nfsrpc_mount(struct nfsrpc *r, struct dcnfs_fh *root)
{
	struct call c = { .take = take_mnt, .arg = root };
	struct rpc_context *rpc;
	int err;

	if (r->version == 4)
		return nfsrpc_call(r, RK_OTHER, NULL, NFSRPC_ROOT, r->export,
				   take_root4, root, 0);

	err = connect_rpc(r, MOUNT_PROGRAM, MOUNT_V3, &rpc);
	if (err)
		return err;
	if (rpc_mount3_mnt_async(rpc, nfsrpc__done, r->export, &c) < 0)
		err = -ENOMEM;
	else
		err = nfsrpc__wait(r, rpc, &c);
	rpc_destroy_context(rpc);
	return err;
}

/* One URL parameter, "NAME=VALUE" of q[0, len): a whole number in
 * [lo, hi] into *v; -EINVAL if it is not NAME's or not such a number. */
static int url_param(const char *q, size_t len, const char *name, long lo,
		     long hi, int *v)
{
	size_t n = strlen(name);
	char buf[16], *end;
	long x;

	if (len <= n + 1 || strncmp(q, name, n) || q[n] != '=' ||
	    len - n - 1 >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, q + n + 1, len - n - 1);
	buf[len - n - 1] = '\0';
	errno = 0;
	x = strtol(buf, &end, 10);
	if (errno || *end || end == buf || x < lo || x > hi)
		return -EINVAL;
	*v = (int)x;
	return 0;
}

/* "nfs://HOST/EXPORT[?PARAM&...]" into r (r NULL: checked only): PARAM
 * is version=3|4, nfsport=N or mountport=N (no rpcbind asked for that
 * program).  0, -ENOMEM, or -EINVAL with what is wrong in why. */
static int parse_url(struct nfsrpc *r, const char *url, char *why, size_t size)
{
	struct nfsrpc scratch;
	const char *host, *path, *query, *q;

	if (!r)
		r = &scratch;
	if (strncmp(url, "nfs://", 6)) {
		snprintf(why, size, "not an nfs://HOST/EXPORT URL");
		return -EINVAL;
	}
	host = url + 6;
	path = strchr(host, '/');
	if (!path || path == host) {
		snprintf(why, size, "no HOST, or no /EXPORT after it (nfs://HOST/EXPORT)");
		return -EINVAL;
	}
	if (memchr(host, ':', (size_t)(path - host))) {
		snprintf(why, size, "a port is given as ?nfsport=N or ?mountport=N, "
			 "not after HOST");
		return -EINVAL;
	}
	query = strchr(path, '?');
	r->version = 3;
	for (q = query; q && *q; ) {
		size_t len;

		q++;
		len = strcspn(q, "&");
		if (url_param(q, len, "version", 3, 4, &r->version) &&
		    url_param(q, len, "nfsport", 1, 65535, &r->nfsport) &&
		    url_param(q, len, "mountport", 1, 65535, &r->mountport)) {
			snprintf(why, size, "bad parameter '%.*s': version=3 or 4, "
				 "nfsport=N or mountport=N (ports 1 to 65535), "
				 "joined by '&'", (int)(len < 64 ? len : 64), q);
			return -EINVAL;
		}
		q += len;
	}
	if (r == &scratch)
		return 0;
	if (!query)
		query = path + strlen(path);
	r->server = strndup(host, (size_t)(path - host));
	r->export = strndup(path, (size_t)(query - path));
	return r->server && r->export ? 0 : -ENOMEM;
}

int nfsrpc_url_check(const char *url, char *why, size_t size)
{
	return url ? parse_url(NULL, url, why, size) : -EINVAL;
}

int nfsrpc_init(struct nfsrpc *r, const char *url, int timeout_ms)
{
	char why[160];
	int err;

	memset(r, 0, sizeof(*r));
	r->timeout_ms = timeout_ms;
	err = pthread_mutex_init(&r->lock, NULL);
	if (err)
		return -err;
	err = pthread_mutex_init(&r->v4lock, NULL);
	if (err) {
		pthread_mutex_destroy(&r->lock);
		return -err;
	}
	/* a first verifier unlike any earlier one of this context's ID
	 * (a SETCLIENTID again after the server forgot it) */
	r->v4verf = (uint64_t)nfsrpc_now_ms() ^ (uint64_t)getpid() << 40;
	/* the client ID's own part: two clients of one server must never
	 * share it (the second's SETCLIENTID would drop the first's opens),
	 * and a process ID and an address repeat across hosts and
	 * containers */
	if (getrandom(&r->v4nonce, sizeof(r->v4nonce), 0) != sizeof(r->v4nonce))
		r->v4nonce = r->v4verf ^ (uint64_t)(uintptr_t)r;
	return parse_url(r, url, why, sizeof(why));
}

void nfsrpc_fini(struct nfsrpc *r)
{
	struct conn *cn;

	while ((cn = r->idle)) {
		r->idle = cn->next;
		drop_conn(cn);
	}
	pthread_mutex_destroy(&r->lock);
	pthread_mutex_destroy(&r->v4lock);
	free(r->server);
	free(r->export);
}
