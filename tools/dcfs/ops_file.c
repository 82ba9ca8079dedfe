// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops_file.c - the FUSE operations on a file's data: OPEN, READ, WRITE,
 * FLUSH, RELEASE, FSYNC, FALLOCATE, COPY_FILE_RANGE and LSEEK.
 *
 * Handle-less I/O.  A compiler opens hundreds of headers per source file,
 * and every open of a FUSE file costs an OPEN round trip and a RELEASE
 * (two thirds of all requests in a kernel build).  Unless --open-requests
 * is given, dcfs answers the first OPEN with ENOSYS: the kernel (4.19+)
 * takes that as "opens need no request", stops sending OPEN and RELEASE
 * for files, keeps their page cache, and sends reads and writes with
 * fh 0.  Those go to descriptors the node opens on first use (O_RDONLY,
 * O_RDWR: the kernel has checked the caller's access at open) and closes
 * when the kernel forgets it (nodefd.c, "I/O descriptors").  A CREATE
 * still gets a handle of its own; fh 0 is never a real one (descriptors
 * 0-2 are taken).  The kernel truncates with SETATTR rather than in OPEN
 * (op_init turns ATOMIC_O_TRUNC off), and a write's flags carry O_APPEND
 * and O_SYNC, which op_write_buf applies per write.
 *
 * Every handler that takes an I/O descriptor calls node_io_done() before
 * it returns.  See ops.c for the rules every handler follows.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/proc.h"
#include "ops.h"

#define SMALL_READ	(32 * 1024)	/* below this, copy; above, splice */

/*
 * Interrupts.  A caller's signal, even SIGKILL, does not end its request:
 * the kernel sends FUSE_INTERRUPT and waits for the reply.  A lease
 * break's wait, natively cut short by any signal, would so hold the
 * caller for up to the whole lease-break-time.  So the wait is made
 * interruptible: libfuse calls on_interrupt on the thread that read the
 * INTERRUPT, which sends DCFS_SIG_INTERRUPT to the waiting worker (a
 * handler that does nothing, without SA_RESTART), whose open(2) then
 * fails with EINTR, answered to a caller being killed (open_interruptible
 * waits again for one that lives on).
 *
 * The signal is sent only while the callback is registered, and the
 * worker blocks it then but around its open, so that it cuts nothing
 * else short.  It may arrive after the worker saw no interrupt and
 * before its open began, and be spent there: on_interrupt sends it again
 * every INTR_PAUSE_NS until the worker says it is past its open (done),
 * for INTR_FOR_NS at most (an open in an uninterruptible wait ignores
 * it).  A standard signal, not a real-time one: a pending one absorbs
 * the resends rather than queueing each.  Unregistering the callback
 * takes the request's lock, which libfuse holds around on_interrupt, so
 * no signal is sent after it; what is still pending then is taken
 * (sigtimedwait) before the mask is put back.
 */
#define INTR_PAUSE_NS	100000ull	/* 100 us */
#define INTR_FOR_NS	2000000000ull	/* 2 s */

struct wait_intr {
	pthread_t worker;
	atomic_bool hit;	/* the request was interrupted */
	atomic_bool done;	/* the worker is past its open, or skipped it */
};

static void on_interrupt(fuse_req_t req, void *data)
{
	struct wait_intr *w = data;
	struct timespec pause = { 0, INTR_PAUSE_NS };
	uint64_t end = clock_ns() + INTR_FOR_NS;

	(void)req;
	atomic_store(&w->hit, true);
	/* registered after the interrupt came: called by the worker itself,
	 * which has not begun its open */
	if (pthread_equal(w->worker, pthread_self()))
		return;
	while (!atomic_load(&w->done) && clock_ns() < end) {
		pthread_kill(w->worker, DCFS_SIG_INTERRUPT);
		nanosleep(&pause, NULL);
	}
}

/*
 * Is req's caller being killed (proc_dying)?  The signal stays pending
 * while the caller waits in the kernel for our answer.  One we cannot
 * look at (no pid in our namespace): yes, or it would wait for the lease
 * even when killed.
 */
static bool caller_dying(fuse_req_t req)
{
	return proc_dying(fuse_req_ctx(req)->pid) != 0;
}

/*
 * open(2) of path now, not waiting for a lease break (EWOULDBLOCK, the
 * break begun).  flags with O_NONBLOCK: the descriptor keeps it (a
 * per-open handle whose caller asked); without, it is taken off again.
 * -1 with errno.
 */
static int open_now(const char *path, int flags)
{
	int fd = open(path, flags | O_NONBLOCK), err;

	/* F_SETFL takes the status flags alone (O_APPEND, O_DIRECT...):
	 * those asked for, without the O_NONBLOCK added here */
	if (fd >= 0 && !(flags & O_NONBLOCK) && fcntl(fd, F_SETFL, flags) < 0) {
		err = errno;
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

#define REWAIT_PAUSE_NS	20000000	/* 20 ms */

/*
 * After an interrupt its caller lives through: the open made again, as
 * the kernel restarts one after a handler with SA_RESTART, and looked at
 * every REWAIT_PAUSE_NS (the kernel sends one interrupt a request, so a
 * fatal signal that comes later is seen only so) until it opens, fails
 * otherwise, or the caller is being killed (EINTR).  -1 with errno.
 */
static int rewait(fuse_req_t req, const char *path, int flags)
{
	const struct timespec pause = { 0, REWAIT_PAUSE_NS };
	int fd;

	for (;;) {
		if (caller_dying(req)) {
			errno = EINTR;
			return -1;
		}
		fd = open_now(path, flags);
		if (fd >= 0 || errno != EWOULDBLOCK)
			return fd;
		nanosleep(&pause, NULL);
	}
}

/*
 * open(2) that a FUSE_INTERRUPT of req cuts short (EINTR) when its caller
 * is being killed.  A caller that lives on (a signal it handles) waits
 * on (rewait), as its open(2) would be restarted after a handler with
 * SA_RESTART: the kernel does not say whether the handler has it, and an
 * EINTR a program never sees natively would break it.  -1 with errno.
 */
static int open_interruptible(fuse_req_t req, const char *path, int flags)
{
	struct wait_intr w = { .worker = pthread_self() };
	const struct timespec zero = { 0, 0 };
	sigset_t set, old;
	int fd = -1, err = EINTR;

	sigemptyset(&set);
	sigaddset(&set, DCFS_SIG_INTERRUPT);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	fuse_req_interrupt_func(req, on_interrupt, &w);
	if (!atomic_load(&w.hit)) {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		fd = open(path, flags);
		err = errno;
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	/* on either path: an interrupt that came after the check above
	 * stops resending, and the unregistering below, which waits for
	 * it, waits no longer */
	atomic_store(&w.done, true);
	fuse_req_interrupt_func(req, NULL, NULL);
	while (sigtimedwait(&set, NULL, &zero) == DCFS_SIG_INTERRUPT)
		;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (fd < 0 && err == EINTR && atomic_load(&w.hit))
		return rewait(req, path, flags);
	if (fd < 0)
		errno = err;
	return fd;
}

/*
 * Opening a file breaks a lease another process holds on it (F_SETLEASE)
 * and waits for the lease to go, up to /proc/sys/fs/lease-break-time.  So
 * the open is first tried without waiting (O_NONBLOCK: EWOULDBLOCK, the
 * break begun); only then does the worker wait, with no lock held and
 * counted apart from the workers that serve everyone else
 * (loop_block_begin), so that one user's leased files cannot stall
 * another's requests.  A caller that opened with O_NONBLOCK gets
 * EWOULDBLOCK, as natively; so does one with too many waits already.
 */
int open_waiting(fuse_req_t req, const char *path, int flags, bool nonblock)
{
	int fd = open_now(path, flags);

	if (fd >= 0 || errno != EWOULDBLOCK || nonblock)
		return fd;
	if (!loop_block_begin(fuse_req_ctx(req)->uid)) {
		errno = EWOULDBLOCK;
		return -1;
	}
	fd = open_interruptible(req, path, flags);
	loop_block_end();
	return fd;
}

/*
 * The node's descriptor for reads or writes, opened on first use (as
 * root: it serves every caller, and the kernel checked each at open).  An
 * append-only file (chattr +a) opens for writing only with O_APPEND, which
 * would make every positional write an append: a caller that opened it
 * with O_APPEND gets such a descriptor for its request alone.
 */
int file_io_fd(fuse_req_t req, struct fuse_file_info *fi, struct dnode *n,
	       bool write)
{
	int fd = node_io_get(n, write), pfd, err, append = -1;
	bool nonblock = fi && (fi->flags & O_NONBLOCK);
	struct procpath pp;

	if (fd >= 0)
		return fd;
	err = check_node(n);
	if (err) {
		errno = err;
		return -1;
	}
	pfd = node_fd_use(n);
	if (pfd < 0)
		return -1;
	fd = open_waiting(req, proc_path(&pp, pfd),
			  (write ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOCTTY, nonblock);
	/* a write-only file, for a daemon that is not root */
	if (fd < 0 && write && errno == EACCES)
		fd = open_waiting(req, proc_path(&pp, pfd),
				  O_WRONLY | O_CLOEXEC | O_NOCTTY, nonblock);
	if (fd < 0 && write && errno == EPERM && fi && (fi->flags & O_APPEND))
		append = fd = open_waiting(req, proc_path(&pp, pfd),
					   O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY,
					   nonblock);
	err = errno;
	node_fd_done();
	if (fd < 0) {
		if (out_of_fds(err))
			CTR_ADD(emfile, 1);
		errno = err;
		return -1;
	}
	return append >= 0 ? node_io_once(write, fd) : node_io_keep(n, write, fd);
}


/* The descriptor for reads (write false) or writes of file n: the open
 * file's handle if it has one, else the node's; -1 with errno. */
static int io_fd(fuse_req_t req, struct dnode *n, struct fuse_file_info *fi,
		 bool write)
{
	if (fi && fi->fh)
		return (int)fi->fh;
	return file_io_fd(req, fi, n, write);
}

void file_opened(struct fuse_file_info *fi, int fd)
{
	fi->fh = (uint64_t)fd;
	/* every change goes through this mount, so the page cache stays
	 * right across opens; AUTO_INVAL_DATA still drops it when the
	 * attributes show another mtime or size */
	fi->keep_cache = 1;
	/* a close of a file opened for reading has nothing to report: no
	 * FLUSH round trip then (FOPEN_NOFLUSH, Linux 5.16+; older kernels
	 * ignore it).  A compiler opens hundreds of headers per file, and
	 * close() waits for FLUSH; RELEASE is sent in the background. */
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		fi->noflush = 1;
	CTR_ADD(open_files, 1);
}

void file_closed(int fd)
{
	close(fd);
	CTR_ADD(open_files, -1);
}


/* A handle per open (--open-requests): opened as the caller, so the host
 * checks it too, by the inode (never by name). */
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dnode *n = ino_node(ino);
	struct procpath pp;
	struct caller cr;
	int fd, err;

	if (!dcfs.open_requests)	/* handle-less I/O (above) */
		return (void)fuse_reply_err(req, ENOSYS);
	err = check_node(n);
	if (err)
		return reply_errno(req, err);
	/* before the switch: a caller's fsuid has no CAP_DAC_READ_SEARCH
	 * for open_by_handle_at */
	fd = node_fd_use(n);
	err = fd < 0 ? errno : caller_begin(req, &cr, CR_GROUPS);
	if (!err) {
		/* not O_APPEND (as at create), unless the file is append-only
		 * and refuses a writer without it; nor O_DIRECT, whose
		 * alignment dcfs's buffers do not keep (the kernel keeps no
		 * pages for such a file anyway) */
		int pfd = fd, flags = (fi->flags | O_CLOEXEC) &
				      ~(O_NOFOLLOW | O_CREAT | O_EXCL | O_APPEND | O_DIRECT);

		fd = open_waiting(req, proc_path(&pp, pfd), flags, fi->flags & O_NONBLOCK);
		if (fd < 0 && errno == EPERM && (fi->flags & O_APPEND))
			fd = open_waiting(req, proc_path(&pp, pfd), flags | O_APPEND,
					  fi->flags & O_NONBLOCK);
		err = fd < 0 ? errno : 0;
		caller_end(&cr);
	}
	node_fd_done();
	if (err)
		return reply_errno(req, err);
	file_opened(fi, fd);
	if (fuse_reply_open(req, fi) != 0)
		file_closed(fd);
}

static void read_reply(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	int fd = io_fd(req, ino_node(ino), fi, false);

	if (fd < 0)
		return reply_errno(req, errno);
	if (size <= SMALL_READ) {
		/* a copy costs less than the three splices for small reads */
		char buf[SMALL_READ];
		ssize_t n = pread(fd, buf, size, off);

		if (n < 0)
			return reply_errno(req, errno);
		fuse_reply_buf(req, buf, (size_t)n);
		return;
	}
	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = fd;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi)
{
	read_reply(req, ino, size, off, fi);
	node_io_done();
}

/* The reply to a write of n bytes (-1: errno), this request's I/O done. */
static void reply_written(fuse_req_t req, ssize_t n)
{
	if (n < 0)
		reply_errno(req, errno);
	else
		fuse_reply_write(req, (size_t)n);
	node_io_done();
}

/*
 * A write of iov at off.  With a handle, the handle's own flags apply.
 * Handle-less, the open file's O_APPEND, O_SYNC and O_DSYNC come with the
 * write (fi->flags) and are applied to this write alone: RWF_APPEND writes
 * at the end whatever off says, as a descriptor opened O_APPEND would.
 */
static void write_iov(fuse_req_t req, fuse_ino_t ino, const struct iovec *iov,
		      int cnt, off_t off, struct fuse_file_info *fi)
{
	int fd = io_fd(req, ino_node(ino), fi, true), rwf = 0, err;
	struct caller cr;
	ssize_t n;

	if (fd < 0)
		return reply_errno(req, errno);
	/* as the caller: quotas, reserved blocks, set-id bits cleared; a
	 * writeback has none, and is made as the file's owner */
	err = fi->writepage ? caller_begin_owner(fd, &cr) : caller_begin(req, &cr, 0);
	if (err) {
		node_io_done();
		return reply_errno(req, err);
	}
	/* the file's flags as of this write (fcntl may have changed them
	 * since the open); a writeback of a shared mapping's pages never
	 * appends */
	if ((fi->flags & O_APPEND) && !fi->writepage)
		rwf |= RWF_APPEND;
	if (!fi->fh) {
		if ((fi->flags & O_SYNC) == O_SYNC)
			rwf |= RWF_SYNC;
		else if (fi->flags & O_DSYNC)
			rwf |= RWF_DSYNC;
	}
	n = pwritev2(fd, iov, cnt, off, rwf);
	caller_end(&cr);
	reply_written(req, n);
}

/*
 * A shared mapping's writeback through a handle opened O_APPEND: only an
 * append-only file's is (op_open), which natively refuses a writable
 * shared mapping; its pages would be appended, for good.  EPERM instead.
 */
static bool appending_writeback(const struct fuse_file_info *fi)
{
	return fi->fh && fi->writepage && (fcntl((int)fi->fh, F_GETFL) & O_APPEND);
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
	      size_t size, off_t off, struct fuse_file_info *fi)
{
	struct iovec iov = { (void *)buf, size };

	if (appending_writeback(fi))
		return reply_errno(req, EPERM);
	write_iov(req, ino, &iov, 1, off, fi);
}

void op_write_buf(fuse_req_t req, fuse_ino_t ino,
		  struct fuse_bufvec *in, off_t off,
		  struct fuse_file_info *fi)
{
	size_t size = fuse_buf_size(in);
	struct fuse_bufvec out = FUSE_BUFVEC_INIT(size);
	struct iovec iov[8];
	int cnt = 0;
	ssize_t n;

	if (appending_writeback(fi))
		return reply_errno(req, EPERM);
	/* a handle opened with the caller's flags, but O_APPEND: a write that
	 * appends goes by write_iov, which says so */
	if (fi->fh && (!(fi->flags & O_APPEND) || fi->writepage)) {
		struct caller cr;
		int err = fi->writepage ? caller_begin_owner((int)fi->fh, &cr) :
					  caller_begin(req, &cr, 0);

		if (err)
			return reply_errno(req, err);
		out.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		out.buf[0].fd = (int)fi->fh;
		out.buf[0].pos = off;
		n = fuse_buf_copy(&out, in, 0);
		caller_end(&cr);
		if (n < 0)
			return reply_errno(req, (int)-n);
		return (void)fuse_reply_write(req, (size_t)n);
	}
	/* handle-less: the flags come with the write.  With splice reads
	 * off (op_init), libfuse hands over memory buffers. */
	for (size_t i = in->idx; i < in->count; i++) {
		if ((in->buf[i].flags & FUSE_BUF_IS_FD) || cnt == 8) {
			/* not expected: gather into one buffer */
			char *mem = malloc(size);

			out.buf[0].mem = mem;
			if (!mem)
				return reply_errno(req, ENOMEM);
			n = fuse_buf_copy(&out, in, 0);
			if (n < 0) {
				free(mem);
				return reply_errno(req, (int)-n);
			}
			iov[0] = (struct iovec){ mem, (size_t)n };
			write_iov(req, ino, iov, 1, off, fi);
			free(mem);
			return;
		}
		iov[cnt++] = (struct iovec){
			(char *)in->buf[i].mem + (i == in->idx ? in->off : 0),
			in->buf[i].size - (i == in->idx ? in->off : 0) };
	}
	write_iov(req, ino, iov, cnt, off, fi);
}

void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	int fd;

	(void)ino;
	/*
	 * Handle-less I/O (the default): no file has a handle of its own, so
	 * a close has nothing to report.  ENOSYS makes the kernel stop
	 * sending FLUSH for good (fc->no_flush), which saves a round trip per
	 * close(2), written files' included; a compile closes hundreds.
	 */
	if (!dcfs.open_requests)
		return (void)fuse_reply_err(req, ENOSYS);
	if (!fi->fh)
		return (void)fuse_reply_err(req, 0);
	fd = dup((int)fi->fh);
	/* a close of a duplicate: what close(2) of the caller would report */
	if (fd < 0)
		return reply_errno(req, errno);
	fuse_reply_err(req, close(fd) < 0 ? errno : 0);
}

void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	if (fi->fh)
		file_closed((int)fi->fh);
	fuse_reply_err(req, 0);
}

/*
 * A descriptor of file n for a call that takes either kind (fsync,
 * lseek): the open file's handle, one the node keeps, else one for
 * reading, else for writing (a write-only file, for a daemon that is not
 * root).  -1 with errno.
 */
static int any_fd(fuse_req_t req, struct dnode *n, struct fuse_file_info *fi)
{
	int fd;

	if (fi && fi->fh)
		return (int)fi->fh;
	fd = node_io_get(n, false);
	if (fd < 0)
		fd = node_io_get(n, true);
	if (fd >= 0)
		return fd;
	fd = file_io_fd(req, fi, n, false);
	if (fd < 0 && errno == EACCES)
		fd = file_io_fd(req, fi, n, true);
	return fd;
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi)
{
	/* a file's data and metadata, whichever descriptor reaches it */
	int fd = any_fd(req, ino_node(ino), fi), res;

	if (fd < 0)
		return reply_errno(req, errno);
	res = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, res < 0 ? errno : 0);
	node_io_done();
}

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
		  off_t offset, off_t length, struct fuse_file_info *fi)
{
	int fd = io_fd(req, ino_node(ino), fi, true), err;
	struct caller cr;

	if (fd < 0)
		return reply_errno(req, errno);
	err = caller_begin(req, &cr, 0);
	if (!err) {
		err = fallocate(fd, mode, offset, length) < 0 ? errno : 0;
		caller_end(&cr);
	}
	fuse_reply_err(req, err);
	node_io_done();
}

void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			struct fuse_file_info *fi_in, fuse_ino_t ino_out,
			off_t off_out, struct fuse_file_info *fi_out,
			size_t len, int flags)
{
	int in = io_fd(req, ino_node(ino_in), fi_in, false), out, err;
	struct caller cr;
	ssize_t n;

	if (in < 0)
		return reply_errno(req, errno);
	out = io_fd(req, ino_node(ino_out), fi_out, true);
	err = out < 0 ? errno : caller_begin(req, &cr, 0);
	if (err) {
		node_io_done();
		return reply_errno(req, err);
	}
	/* the reply's count is 32 bits: a copy past it (a file system that
	 * copies 4 GiB or more in one call) would be told short, or as 0 */
	if (len > (UINT32_MAX & ~(size_t)4095))
		len = UINT32_MAX & ~(size_t)4095;
	n = copy_file_range(in, &off_in, out, &off_out, len, (unsigned)flags);
	caller_end(&cr);
	reply_written(req, n);
}

void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	      struct fuse_file_info *fi)
{
	int fd = any_fd(req, ino_node(ino), fi);
	off_t res;

	if (fd < 0)
		return reply_errno(req, errno);
	res = lseek(fd, off, whence);
	if (res < 0)
		reply_errno(req, errno);
	else
		fuse_reply_lseek(req, res);
	node_io_done();
}
