// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * uring.c - FUSE over io_uring (--uring): requests served on the CPU that
 * made them.
 *
 * Why: through /dev/fuse the kernel hands a request to whichever reader
 * waited longest, on whichever CPU, and a wake-up across CPUs is an
 * inter-processor interrupt (under virtualization, an exit to the
 * hypervisor): a one-thread stat loop is much slower with dcfs free to run
 * on any CPU than with dcfs and the client on one (docs/dcfs.md, "Which
 * CPU serves a request").  Since Linux 6.14 the kernel can instead
 * queue each request on a per-CPU queue (fs/fuse/dev_uring.c): the queue
 * of the CPU the caller runs on.  Here each queue gets `depth` threads,
 * each pinned to that CPU where dcfs may run there, each with its own
 * io_uring and one ring entry (a header and a payload buffer).  A request
 * costs one io_uring_enter (commit the reply and fetch the next request)
 * instead of a read and a writev.
 *
 * The kernel offers it only when the fuse module's enable_uring parameter
 * is Y; libfuse 3.14 knows nothing of it.  So dcfs keeps libfuse for
 * decoding and answering requests and hooks its I/O
 * (fuse_session_custom_io): the read hook sees the kernel's INIT and
 * whether it offers FUSE_OVER_IO_URING; the writev hook adds that flag to
 * dcfs's INIT reply, and turns a reply to a ring request into the ring
 * entry's header and payload.  FORGET and INTERRUPT still come through
 * /dev/fuse (the kernel sends only those there once the ring is ready), so
 * loop.c keeps serving it.
 *
 * The protocol, in the kernel's words (dev_uring.c):
 *   REGISTER          hands an entry's buffers to queue qid; once every
 *                     queue has an entry the ring is ready and requests go
 *                     to it.  Until then, with FUSE_OVER_IO_URING agreed
 *                     at INIT, every new request waits (fuse_block_alloc):
 *                     so every thread must register or fail, promptly.
 *                     A REGISTER that fails turns the ring off for the
 *                     connection and wakes the waiters: /dev/fuse again.
 *   completion (res 0) the entry holds a request: fuse_in_header in
 *                     in_out, the operation's fixed header in op_in, the
 *                     rest (names, data) in the payload.
 *   COMMIT_AND_FETCH  the reply (fuse_out_header in in_out, the out
 *                     arguments in the payload) and wait for the next.
 *   res -ENOTCONN     the connection ended (unmount): the thread leaves.
 *
 * Threads and memory: a ring thread touches only its own ring and entry,
 * and libfuse and the cache as any worker does.  `serving` (thread-local)
 * tells the writev hook which entry a reply belongs to.  The settings read
 * at INIT (offer, init_unique, payload size) are written by the thread
 * serving INIT before its reply is written and read by ring threads only
 * after `init_state` says so (a mutex and condition variable).
 */
#include <errno.h>
#include <linux/fuse.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dcfs.h"

/*
 * The kernel's io_uring ABI (include/uapi/linux/fuse.h, Linux 6.14 and
 * later); Debian 12's headers predate it.
 */
#define FUSE_OVER_IO_URING_BIT2	(1u << (41 - 32))	/* in flags2 */
#define URING_CMD_REGISTER	1
#define URING_CMD_COMMIT_AND_FETCH 2

struct uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;	/* to quote in COMMIT_AND_FETCH */
	uint32_t payload_sz;	/* bytes in the payload buffer */
	uint32_t padding;
	uint64_t reserved;
};

struct uring_req_header {
	char in_out[128];	/* fuse_in_header in, fuse_out_header out */
	char op_in[128];	/* the operation's fixed header */
	struct uring_ent_in_out ent;
};

struct uring_cmd_req {		/* in the 128-byte SQE's command area */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};

#define ROOM	256	/* before the payload: fuse_in_header + op_in, copied */
#define WAIT_NS	200000000ll	/* a ring thread looks for the end this often */

struct ring {
	pthread_t tid;
	unsigned qid;
	bool pin;
	int fd;
	/* what io_uring_enter and the SQEs name: the ring's registered index
	 * and /dev/fuse's fixed-file slot, or the descriptors themselves */
	int enter_fd, fuse_fd;
	unsigned enter_flags;
	uint8_t sqe_flags;
	/* tests only (DCFS_TEST_FAIL_URING_REGISTER in the environment): the
	 * first REGISTER names no descriptor, so io_uring fails it before
	 * FUSE sees it -- the failure ring_refuse() exists for */
	bool fail_register;
	/* the mappings of io_uring_setup(2): both queues in one
	 * (IORING_FEAT_SINGLE_MMAP), the SQEs in another */
	void *map;
	size_t map_sz, sqes_sz;
	struct io_uring_sqe *sqes;	/* 128-byte entries */
	unsigned *sq_head, *sq_tail, *sq_mask, *sq_array;
	unsigned *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
	/* the ring entry */
	struct uring_req_header hdr;
	char *block;			/* ROOM bytes, then the payload */
	size_t payload_sz;
	struct iovec iov[2];
	uint64_t unique;		/* of the request being served */
	bool replied;
	/* requests served: written by the thread, read for --stats */
	_Atomic uint64_t served;
};

enum { INIT_WAIT, INIT_RING, INIT_NO_RING, INIT_END };

static struct {
	unsigned nrings;
	struct ring *rings;
	struct fuse_session *se;
	/* INIT: written by the worker serving it, see the top comment;
	 * init_unique is compared by every reply, hence atomic */
	bool offered;
	_Atomic uint64_t init_unique;
	size_t max_payload;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int init_state;			/* lock */
	unsigned setup_done;		/* lock: rings set up or failed */
	int setup_err;			/* lock: the first failure */
	bool active;			/* lock: INIT agreed on the ring */
	/* uring_stop: ring threads leave; read without the lock after
	 * every request and every WAIT_NS */
	_Atomic bool stopping;
	uint64_t served_before;		/* lock: by rings joined */
} ur = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static __thread struct ring *serving;

static void set_init_state(int s)
{
	pthread_mutex_lock(&ur.lock);
	if (ur.init_state == INIT_WAIT || s == INIT_END)
		ur.init_state = s;
	pthread_cond_broadcast(&ur.cond);
	pthread_mutex_unlock(&ur.lock);
}

/* ---- raw io_uring: one SQE in flight per ring -------------------------- */

static void ring_unmap(struct ring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_sz);
	if (r->map && r->map != MAP_FAILED)
		munmap(r->map, r->map_sz);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->sqes = NULL;
	r->map = NULL;
}

/*
 * Spare the kernel two descriptor lookups per request (fget and fput of
 * the ring in io_uring_enter, of /dev/fuse in each command): register the
 * ring's own descriptor and /dev/fuse as a fixed file.  Each is optional:
 * where the kernel refuses, the plain descriptor serves.
 */
static void ring_register_fds(struct ring *r)
{
	struct io_uring_rsrc_update up = { .offset = -1u, .data = (uint64_t)r->fd };
	int fuse = fuse_session_fd(ur.se);

	r->enter_fd = r->fd;
	r->enter_flags = 0;
	r->fuse_fd = fuse;
	r->sqe_flags = 0;
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_RING_FDS,
		    &up, 1) == 1) {
		r->enter_fd = (int)up.offset;
		r->enter_flags = IORING_ENTER_REGISTERED_RING;
	}
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_FILES,
		    &fuse, 1) == 0) {
		r->fuse_fd = 0;
		r->sqe_flags = IOSQE_FIXED_FILE;
	}
}

/* 0 or a negative errno. */
static int ring_setup(struct ring *r)
{
	struct io_uring_params p;

	memset(&p, 0, sizeof(p));
	/* SQE128: the command area holds struct uring_cmd_req.  SINGLE_ISSUER
	 * and DEFER_TASKRUN: only this thread submits, and the kernel's
	 * completion work (copying a request into our buffers) runs when this
	 * thread waits, on its CPU, not in an interrupt of someone else. */
	p.flags = IORING_SETUP_SQE128 | IORING_SETUP_SINGLE_ISSUER |
		  IORING_SETUP_DEFER_TASKRUN;
	r->fd = (int)syscall(__NR_io_uring_setup, 2, &p);
	if (r->fd < 0)
		return -errno;
	if (!(p.features & IORING_FEAT_SINGLE_MMAP)) {
		close(r->fd);
		r->fd = -1;
		return -EOPNOTSUPP;
	}
	r->map_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	if (r->map_sz < p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe))
		r->map_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->map = mmap(NULL, r->map_sz, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	if (r->map == MAP_FAILED)
		goto fail;
	r->sqes_sz = p.sq_entries * 128;
	r->sqes = mmap(NULL, r->sqes_sz, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (r->sqes == MAP_FAILED)
		goto fail;
	r->sq_head = (unsigned *)((char *)r->map + p.sq_off.head);
	r->sq_tail = (unsigned *)((char *)r->map + p.sq_off.tail);
	r->sq_mask = (unsigned *)((char *)r->map + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)((char *)r->map + p.sq_off.array);
	r->cq_head = (unsigned *)((char *)r->map + p.cq_off.head);
	r->cq_tail = (unsigned *)((char *)r->map + p.cq_off.tail);
	r->cq_mask = (unsigned *)((char *)r->map + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)((char *)r->map + p.cq_off.cqes);
	ring_register_fds(r);
	return 0;
fail:
	ring_unmap(r);
	return -ENOMEM;
}

/* Queue one FUSE command for the entry (the previous one has completed). */
static void ring_queue_cmd(struct ring *r, uint32_t op, uint64_t commit_id)
{
	unsigned tail = *r->sq_tail, idx = tail & *r->sq_mask;
	/* 128-byte SQEs: entry idx is two struct io_uring_sqe long */
	struct io_uring_sqe *sqe = (struct io_uring_sqe *)((char *)r->sqes + idx * 128);
	struct uring_cmd_req *cmd = (struct uring_cmd_req *)sqe->cmd;

	memset(sqe, 0, 128);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = r->fuse_fd;
	sqe->flags = r->sqe_flags;
	if (op == URING_CMD_REGISTER && r->fail_register) {
		r->fail_register = false;
		sqe->fd = -1;
		sqe->flags = 0;
	}
	sqe->cmd_op = op;
	if (op == URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)r->iov;
		sqe->len = 2;
	}
	cmd->commit_id = commit_id;
	cmd->qid = (uint16_t)r->qid;
	r->sq_array[idx] = idx;
	/* the SQE's contents before the tail that publishes it to the kernel */
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

/*
 * Submit what is queued and wait for one completion, at most WAIT_NS.
 * Returns 1 with *res set, 0 on timeout or signal, or a negative errno.
 */
static int ring_wait(struct ring *r, int *res)
{
	struct __kernel_timespec ts = { 0, WAIT_NS };
	struct io_uring_getevents_arg arg = { .ts = (uint64_t)(uintptr_t)&ts };
	unsigned head = *r->cq_head;

	/* acquire: the CQE's contents after the tail the kernel published
	 * them with (its release) */
	if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
		/* the kernel moves sq_head as it consumes SQEs */
		unsigned to_submit = *r->sq_tail -
				     __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);

		if (syscall(__NR_io_uring_enter, r->enter_fd, to_submit, 1,
			    IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG |
			    r->enter_flags, &arg, sizeof(arg)) < 0) {
			const struct timespec ms = { 0, 1000000 };

			/* ETIME, EINTR: try again; EAGAIN, EBUSY (short of
			 * kernel memory): try again, without spinning */
			if (errno == EAGAIN || errno == EBUSY)
				nanosleep(&ms, NULL);
			else if (errno != ETIME && errno != EINTR)
				return -errno;
		}
		if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
			return 0;
	}
	*res = r->cqes[head & *r->cq_mask].res;
	/* release: done with the CQE before the kernel may reuse its slot */
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return 1;
}

/* ---- requests ---------------------------------------------------------- */

/* A reply to r's request: the header to in_out, the rest to the payload. */
static ssize_t ring_reply(struct ring *r, const struct iovec *iov, int count)
{
	size_t off = 0;
	int i;

	for (i = 1; i < count; i++)
		off += iov[i].iov_len;
	if (off > r->payload_sz) {
		errno = EINVAL;
		return -1;
	}
	memcpy(r->hdr.in_out, iov[0].iov_base, sizeof(struct fuse_out_header));
	for (i = 1, off = 0; i < count; i++) {
		/* memmove: a reply may quote the request's own payload */
		memmove(r->block + ROOM + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	r->hdr.ent.payload_sz = (uint32_t)off;
	r->replied = true;
	return (ssize_t)(off + sizeof(struct fuse_out_header));
}

static void ring_reply_err(struct ring *r, uint64_t unique, int err)
{
	struct fuse_out_header oh = {
		.len = sizeof(oh), .error = -err, .unique = unique,
	};
	struct iovec iov = { &oh, sizeof(oh) };

	ring_reply(r, &iov, 1);
}

/*
 * Serve the request the entry holds.  libfuse wants it as read(2) from
 * /dev/fuse gives it: fuse_in_header, the fixed header, the payload, in
 * one buffer; ROOM before the payload takes the first two.  The fixed
 * header's size is what fuse_in_header.len leaves (the kernel sets len
 * before queueing, for either transport).
 *
 * The reply overwrites the payload, so libfuse must not read the request
 * after replying: as in its own loop, where the reply is the operation's
 * last act.
 */
static void ring_serve(struct ring *r)
{
	const struct fuse_in_header *ih = (const void *)r->hdr.in_out;
	size_t payload = r->hdr.ent.payload_sz, op_len;
	struct fuse_buf buf;
	char *start;

	r->unique = ih->unique;
	r->replied = false;
	if (ih->len < sizeof(*ih) + payload || payload > r->payload_sz ||
	    (op_len = ih->len - sizeof(*ih) - payload) > sizeof(r->hdr.op_in)) {
		ring_reply_err(r, ih->unique, EIO);
		return;
	}
	start = r->block + ROOM - op_len - sizeof(*ih);
	memmove(start, ih, sizeof(*ih));
	memcpy(start + sizeof(*ih), r->hdr.op_in, op_len);
	memset(&buf, 0, sizeof(buf));
	buf.mem = start;
	buf.size = sizeof(*ih) + op_len + payload;
	serving = r;
	fuse_session_process_buf(ur.se, &buf);
	serving = NULL;
	stash_clear();		/* nothing a request stashed outlives it */
	/* every entry must be committed, or its queue stops */
	if (!r->replied)
		ring_reply_err(r, r->unique, EIO);
}

/* ---- libfuse's I/O, hooked ---------------------------------------------- */

static ssize_t hook_read(int fd, void *buf, size_t len, void *userdata)
{
	ssize_t n = read(fd, buf, len);
	const struct fuse_in_header *ih = buf;

	(void)userdata;
	if (n >= (ssize_t)(sizeof(*ih) + sizeof(struct fuse_init_in)) &&
	    ih->opcode == FUSE_INIT) {
		const struct fuse_init_in *in = (const void *)(ih + 1);

		/* read by this thread (op_init, init_reply); ring threads
		 * read the outcome after set_init_state (its mutex) */
		ur.offered = ur.nrings && (in->flags & FUSE_INIT_EXT) &&
			     (in->flags2 & FUSE_OVER_IO_URING_BIT2);
		atomic_store_explicit(&ur.init_unique, ih->unique, memory_order_relaxed);
	}
	return n;
}

/* dcfs's INIT reply: ask for the ring if the kernel offered it. */
static ssize_t init_reply(int fd, struct iovec *iov, int count)
{
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct fuse_init_out *out = iov[1].iov_base;
	bool ring = ur.offered && oh->error == 0 &&
		    iov[1].iov_len >= offsetof(struct fuse_init_out, flags2) + 4;
	ssize_t n;

	atomic_store_explicit(&ur.init_unique, 0, memory_order_relaxed);
	if (ring) {
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		/* the kernel's ring->max_payload_sz: the most a request or
		 * reply carries besides its headers */
		size_t pages = (out->flags & FUSE_MAX_PAGES) ? out->max_pages : 32;

		out->flags |= FUSE_INIT_EXT;
		out->flags2 |= FUSE_OVER_IO_URING_BIT2;
		ur.max_payload = pages * page;
		if (ur.max_payload < out->max_write)
			ur.max_payload = out->max_write;
		if (ur.max_payload < 8192)
			ur.max_payload = 8192;
	}
	n = writev(fd, iov, count);
	if (ring && n < 0)
		ring = false;
	if (ur.nrings && !ring)
		dcfs_log(LOG_WARNING, "--uring: the kernel did not offer FUSE "
			"over io_uring; serving through /dev/fuse");
	pthread_mutex_lock(&ur.lock);
	ur.active = ring;
	pthread_mutex_unlock(&ur.lock);
	set_init_state(ring ? INIT_RING : INIT_NO_RING);
	return n;
}

static ssize_t hook_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	const struct fuse_out_header *oh = iov[0].iov_base;
	struct ring *r = serving;
	uint64_t init;

	(void)userdata;
	if (r && iov[0].iov_len == sizeof(*oh) && oh->unique == r->unique)
		return ring_reply(r, iov, count);
	/* 0 once INIT is answered, and notifications carry unique 0 */
	init = atomic_load_explicit(&ur.init_unique, memory_order_relaxed);
	if (init && count > 1 && iov[0].iov_len == sizeof(*oh) && oh->unique == init)
		return init_reply(fd, iov, count);
	return writev(fd, iov, count);
}

/* ---- ring threads -------------------------------------------------------- */

/*
 * This queue's REGISTER failed before it ever served.  FUSE turns the ring
 * off for the connection (and wakes the requests waiting for every queue
 * to register) when it refuses an entry itself; but io_uring may fail the
 * command before FUSE sees it (short of memory, say), and then every
 * request made on this CPU would wait for an entry that never comes.  So
 * ask once more with an empty payload, through the plain descriptor:
 * FUSE refuses that for sure.  False if even that got no answer.
 */
static bool ring_refuse(struct ring *r)
{
	int res, rc;

	r->iov[1].iov_len = 0;
	r->fuse_fd = fuse_session_fd(ur.se);
	r->sqe_flags = 0;
	ring_queue_cmd(r, URING_CMD_REGISTER, 0);
	while ((rc = ring_wait(r, &res)) == 0)
		if (atomic_load_explicit(&ur.stopping, memory_order_relaxed))
			return true;
	return rc > 0;
}

/*
 * Wait for INIT; then register the entry and serve it.  Returns when the
 * connection ends, uring_stop asks, or the ring is not used.
 */
static void ring_run(struct ring *r)
{
	bool registered = false;
	int state, res = 0, rc;

	pthread_mutex_lock(&ur.lock);
	while (ur.init_state == INIT_WAIT)
		pthread_cond_wait(&ur.cond, &ur.lock);
	state = ur.init_state;
	pthread_mutex_unlock(&ur.lock);
	if (state != INIT_RING)
		return;

	r->payload_sz = ur.max_payload;
	r->block = malloc(ROOM + r->payload_sz);
	/* on failure, a zero-length payload: the kernel refuses it and turns
	 * the ring off, so no request waits for this queue */
	r->iov[1].iov_base = r->block ? r->block + ROOM : NULL;
	r->iov[1].iov_len = r->block ? r->payload_sz : 0;
	r->iov[0].iov_base = &r->hdr;
	r->iov[0].iov_len = sizeof(r->hdr);
	r->fail_register = getenv("DCFS_TEST_FAIL_URING_REGISTER") != NULL;
	ring_queue_cmd(r, URING_CMD_REGISTER, 0);
	for (;;) {
		rc = ring_wait(r, &res);
		/* at the end, even under load (clients of a lazily detached
		 * mount): a request left unanswered is ended by the kernel
		 * when dcfs closes /dev/fuse */
		if (atomic_load_explicit(&ur.stopping, memory_order_relaxed))
			break;
		if (rc == 0)
			continue;
		if (rc < 0) {
			res = rc;
		} else if (res == -EAGAIN && !registered) {
			/* INIT's reply not processed yet: try again */
			const struct timespec ms = { 0, 1000000 };

			nanosleep(&ms, NULL);
			ring_queue_cmd(r, URING_CMD_REGISTER, 0);
			continue;
		}
		if (res < 0) {
			bool fallback;

			if (res == -ENOTCONN || res == -ECONNABORTED ||
			    res == -ECANCELED)
				break;
			/* a queue that stops serving, or never starts while
			 * the ring stays on, would hold its CPU's requests
			 * for ever: then the session ends */
			fallback = !registered && rc > 0 && ring_refuse(r);
			dcfs_log(LOG_ERR, "--uring: queue %u: %s%s", r->qid,
				strerror(-res), registered ? "; ending" : fallback ?
				" at registration; serving through /dev/fuse" :
				" at registration; ending");
			if (fallback) {
				pthread_mutex_lock(&ur.lock);
				ur.active = false;
				pthread_mutex_unlock(&ur.lock);
			} else {
				dcfs_loop_stop();
			}
			break;
		}
		registered = true;
		ring_serve(r);
		atomic_store_explicit(&r->served, r->served + 1, memory_order_relaxed);
		ring_queue_cmd(r, URING_CMD_COMMIT_AND_FETCH,
			       r->hdr.ent.commit_id);
	}
}

static void *ring_main(void *arg)
{
	struct ring *r = arg;
	int err;

	if (r->pin) {
		cpu_set_t one;

		CPU_ZERO(&one);
		CPU_SET(r->qid, &one);
		pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	}
	/* SINGLE_ISSUER: the ring belongs to the thread that creates it */
	err = ring_setup(r);
	pthread_mutex_lock(&ur.lock);
	if (err && !ur.setup_err)
		ur.setup_err = err;
	ur.setup_done++;
	pthread_cond_broadcast(&ur.cond);
	pthread_mutex_unlock(&ur.lock);
	if (!err)
		ring_run(r);
	ring_unmap(r);
	free(r->block);
	r->block = NULL;
	return NULL;
}

/* The number of CPU queues the kernel makes: num_possible_cpus(). */
static unsigned possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned lo, hi, n = 0;
	int c;

	if (!f)
		return 0;
	/* "0-15" or "0,2-3": count every listed CPU */
	while (fscanf(f, "%u", &lo) == 1) {
		hi = lo;
		c = fgetc(f);
		if (c == '-' && fscanf(f, "%u", &hi) == 1)
			c = fgetc(f);
		n += hi - lo + 1;
		if (c != ',')
			break;
	}
	fclose(f);
	return n;
}

bool uring_kernel_enabled(void)
{
	FILE *f = fopen("/sys/module/fuse/parameters/enable_uring", "r");
	int c = f ? fgetc(f) : EOF;

	if (f)
		fclose(f);
	return c == 'Y' || c == '1';
}

bool uring_offered(void)
{
	return ur.offered;
}

bool uring_active(void)
{
	bool active;

	pthread_mutex_lock(&ur.lock);
	active = ur.active;
	pthread_mutex_unlock(&ur.lock);
	return active;
}

uint64_t uring_requests(void)
{
	uint64_t n;
	unsigned i;

	pthread_mutex_lock(&ur.lock);
	n = ur.served_before;
	for (i = 0; i < ur.nrings; i++)
		n += atomic_load_explicit(&ur.rings[i].served, memory_order_relaxed);
	pthread_mutex_unlock(&ur.lock);
	return n;
}

/* The rings, once no thread runs on them: their counts kept, freed. */
static void free_rings(void)
{
	struct ring *rings = ur.rings;
	unsigned i;

	pthread_mutex_lock(&ur.lock);
	for (i = 0; i < ur.nrings; i++)
		ur.served_before += rings[i].served;
	ur.rings = NULL;
	ur.nrings = 0;
	pthread_mutex_unlock(&ur.lock);
	free(rings);
}

static void join_rings(unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++)
		pthread_join(ur.rings[i].tid, NULL);
	free_rings();
}

/*
 * Before the loop starts: a ring thread per CPU queue and depth, each
 * with its ring set up, and libfuse's I/O hooked.  On any failure dcfs
 * says why and serves through /dev/fuse alone.  Returns 0 or -ENOMEM.
 */
int uring_start(struct fuse_session *se, unsigned depth)
{
	static const struct fuse_custom_io io = {
		.read = hook_read, .writev = hook_writev,
	};
	unsigned i, n = possible_cpus() * depth, started = 0;
	const char *why = NULL;
	cpu_set_t allowed;
	int err = 0;

	if (n == 0) {
		dcfs_log(LOG_WARNING, "--uring: cannot count the CPUs; serving through /dev/fuse");
		return 0;
	}
	ur.se = se;
	ur.rings = calloc(n, sizeof(*ur.rings));
	if (!ur.rings)
		return -ENOMEM;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		CPU_ZERO(&allowed);
	for (i = 0; i < n && !err; i++) {
		struct ring *r = &ur.rings[i];

		r->fd = -1;
		r->qid = i / depth;
		/* a queue's requests come from its CPU; where dcfs may not
		 * run there, its threads run where they may */
		r->pin = r->qid < CPU_SETSIZE && CPU_ISSET(r->qid, &allowed);
		err = pthread_create(&r->tid, NULL, ring_main, r);
		if (!err)
			started++;
	}
	pthread_mutex_lock(&ur.lock);
	while (ur.setup_done < started)
		pthread_cond_wait(&ur.cond, &ur.lock);
	if (err)
		why = "could not start a thread";
	else if (ur.setup_err)
		why = strerror(-ur.setup_err);
	pthread_mutex_unlock(&ur.lock);
	if (!why && fuse_session_custom_io(se, &io, fuse_session_fd(se)) != 0)
		why = "libfuse refused the I/O hooks";
	if (why) {
		dcfs_log(LOG_WARNING, "--uring: %s; serving through /dev/fuse", why);
		set_init_state(INIT_END);
		join_rings(started);
		return 0;
	}
	pthread_mutex_lock(&ur.lock);
	ur.nrings = n;
	pthread_mutex_unlock(&ur.lock);
	return 0;
}

/*
 * After the session: the ring threads leave (within WAIT_NS of the end
 * of their request) and go.  Returns how many are still in a request
 * after JOIN_S (stuck in a host call); their rings are then left as they
 * are, in use.
 */
unsigned uring_stop(void)
{
	struct timespec until;
	unsigned i, left = 0;

	if (!ur.rings)
		return 0;
	atomic_store_explicit(&ur.stopping, true, memory_order_relaxed);
	set_init_state(INIT_END);
	until = join_deadline();
	for (i = 0; i < ur.nrings; i++)
		if (pthread_timedjoin_np(ur.rings[i].tid, NULL, &until) != 0)
			left++;
	if (!left)
		free_rings();
	return left;
}
