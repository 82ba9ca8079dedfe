// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * netdelay.c - a TCP relay on 127.0.0.1 that delays every byte by a fixed
 * time in each direction: a LAN's latency for a server on this machine,
 * where the kernel has no netem qdisc to add it.
 *
 *   netdelay --delay-us US LISTEN_PORT:TARGET_PORT...
 *
 * For each pair it listens on 127.0.0.1:LISTEN_PORT; each connection made
 * there is relayed to 127.0.0.1:TARGET_PORT.  Each direction of a
 * connection is a reader thread, which stamps what it reads with the time
 * it is due (now + US) and queues it, and a writer thread, which sends
 * each piece at its time, in order: the delay does not limit how much is
 * in flight, as on a wire.  What is queued is not bounded: it is meant
 * for request and reply traffic (NFS), whose senders wait for answers,
 * not for bulk streams.  Prints "netdelay: ready" once every port
 * listens; runs until killed.  Exit status 2 on a usage error, 1 when a
 * port cannot be listened on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CHUNK		16384	/* read at once, on the reader's stack */
#define MAX_PAIRS	8

static long delay_ns;

/* What one reader read, due at a time. */
struct piece {
	struct piece *next;
	struct timespec due;
	size_t len;
	char data[];
};

/* One direction: from -> to, its queue between its two threads. */
struct flow {
	int from, to;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct piece *head, **tail;
	int eof;			/* the reader is done */
	pthread_t reader;
	struct conn *conn;
};

/* A relayed connection: its two flows; freed by the last writer done,
 * once both readers are joined. */
struct conn {
	struct flow f[2];
	int left;			/* writers not done; under f[0].lock */
};

static void due_after(struct timespec *t)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_nsec += delay_ns;
	t->tv_sec += t->tv_nsec / 1000000000L;
	t->tv_nsec %= 1000000000L;
}

static void *reader(void *arg)
{
	struct flow *f = arg;
	char buf[CHUNK];

	for (;;) {
		ssize_t n = read(f->from, buf, sizeof(buf));
		struct piece *p;

		if (n < 0 && errno == EINTR)
			continue;
		p = n > 0 ? malloc(sizeof(*p) + (size_t)n) : NULL;
		if (!p)
			break;	/* the end, an error, or no memory: EOF on */
		memcpy(p->data, buf, (size_t)n);
		p->len = (size_t)n;
		p->next = NULL;
		due_after(&p->due);
		pthread_mutex_lock(&f->lock);
		*f->tail = p;
		f->tail = &p->next;
		pthread_cond_signal(&f->more);
		pthread_mutex_unlock(&f->lock);
	}
	pthread_mutex_lock(&f->lock);
	f->eof = 1;
	pthread_cond_signal(&f->more);
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The last of a connection's writers closes both sockets and frees it:
 * each writer joined its own reader, so nothing else touches it. */
static void flow_done(struct flow *f)
{
	struct conn *c = f->conn;
	int last, i;

	shutdown(f->to, SHUT_WR);
	pthread_join(f->reader, NULL);
	pthread_mutex_lock(&c->f[0].lock);
	last = --c->left == 0;
	pthread_mutex_unlock(&c->f[0].lock);
	if (!last)
		return;
	close(c->f[0].from);
	close(c->f[1].from);
	for (i = 0; i < 2; i++) {
		pthread_mutex_destroy(&c->f[i].lock);
		pthread_cond_destroy(&c->f[i].more);
	}
	free(c);
}

static void *writer(void *arg)
{
	struct flow *f = arg;
	int broken = 0;

	/* its sleeps are the delay: no timer slack on them */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	for (;;) {
		struct piece *p;

		pthread_mutex_lock(&f->lock);
		while (!f->head && !f->eof)
			pthread_cond_wait(&f->more, &f->lock);
		p = f->head;
		if (p) {
			f->head = p->next;
			if (!f->head)
				f->tail = &f->head;
		}
		pthread_mutex_unlock(&f->lock);
		if (!p)
			break;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &p->due, NULL) == EINTR)
			;
		if (!broken && write_all(f->to, p->data, p->len) < 0) {
			broken = 1;	/* drain what the reader still queues */
			shutdown(f->from, SHUT_RD);
		}
		free(p);
	}
	flow_done(f);
	return NULL;
}

static int connect_to(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Relay an accepted connection to target: four detached threads. */
static void relay(int client, int target)
{
	struct conn *c = calloc(1, sizeof(*c));
	pthread_t t;
	int server = c ? connect_to(target) : -1, i;

	if (server < 0) {
		fprintf(stderr, "netdelay: connect to port %d: %s\n", target,
			c ? strerror(errno) : "out of memory");
		free(c);
		close(client);
		return;
	}
	c->left = 2;
	c->f[0].from = client;
	c->f[0].to = server;
	c->f[1].from = server;
	c->f[1].to = client;
	for (i = 0; i < 2; i++) {
		struct flow *f = &c->f[i];

		pthread_mutex_init(&f->lock, NULL);
		pthread_cond_init(&f->more, NULL);
		f->tail = &f->head;
		f->conn = c;
	}
	/* readers are joined by their writers (flow_done); writers detach */
	for (i = 0; i < 2; i++) {
		if (pthread_create(&c->f[i].reader, NULL, reader, &c->f[i]) ||
		    pthread_create(&t, NULL, writer, &c->f[i]) ||
		    pthread_detach(t)) {
			fprintf(stderr, "netdelay: cannot start a thread\n");
			exit(1);
		}
	}
}

struct pair {
	int listen_fd, target;
};

static void *acceptor(void *arg)
{
	struct pair *p = arg;

	for (;;) {
		int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC), one = 1;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				usleep(10000);	/* until a connection closes */
				continue;
			}
			fprintf(stderr, "netdelay: accept: %s\n", strerror(errno));
			exit(1);
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		relay(fd, p->target);
	}
	return NULL;
}

static int listen_on(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static const char synopsis[] =
"usage: netdelay --delay-us US LISTEN_PORT:TARGET_PORT...\n"
"  relays 127.0.0.1:LISTEN_PORT to 127.0.0.1:TARGET_PORT, each\n"
"  direction delayed by US microseconds (0 to 1000000); up to 8 pairs\n";

/* A usage error: what was wrong, then the synopsis; exit 2. */
static void __attribute__((noreturn, format(printf, 1, 2))) usage(const char *fmt, ...)
{
	va_list ap;

	fputs("netdelay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", synopsis);
	exit(2);
}

static int port_of(const char *s, char **end)
{
	long v;

	errno = 0;
	v = strtol(s, end, 10);
	return errno || *end == s || v < 1 || v > 65535 ? -1 : (int)v;
}

int main(int argc, char **argv)
{
	static struct pair pairs[MAX_PAIRS];
	char *end;
	long us;
	int i, n = 0;
	pthread_t t;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(synopsis, stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "--delay-us"))
		usage("the first argument is --delay-us US");
	if (argc < 3)
		usage("--delay-us needs a value");
	errno = 0;
	us = strtol(argv[2], &end, 10);
	if (errno || *end || end == argv[2] || us < 0 || us > 1000000)
		usage("--delay-us takes 0 to 1000000 microseconds, not '%s'", argv[2]);
	if (argc < 4)
		usage("which ports? (LISTEN_PORT:TARGET_PORT...)");
	if (argc - 3 > MAX_PAIRS)
		usage("at most %d port pairs", MAX_PAIRS);
	delay_ns = us * 1000;
	signal(SIGPIPE, SIG_IGN);
	for (i = 3; i < argc; i++) {
		int lp = port_of(argv[i], &end), tp = -1;

		if (lp < 0 || *end != ':' || (tp = port_of(end + 1, &end)) < 0 || *end)
			usage("'%s' is no LISTEN_PORT:TARGET_PORT (ports 1 to 65535)",
			      argv[i]);
		pairs[n].target = tp;
		pairs[n].listen_fd = listen_on(lp);
		if (pairs[n].listen_fd < 0) {
			fprintf(stderr, "netdelay: listen on 127.0.0.1:%d: %s\n", lp,
				strerror(errno));
			return 1;
		}
		n++;
	}
	for (i = 0; i < n; i++)
		if (pthread_create(&t, NULL, acceptor, &pairs[i])) {
			fprintf(stderr, "netdelay: cannot start a thread\n");
			return 1;
		}
	printf("netdelay: ready\n");
	fflush(stdout);
	pause();
	return 0;
}
