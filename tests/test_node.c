// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_node.c - dcfs's node table (tools/dcfs/node.c) without a mount:
 * the kernel's lookup count against FORGET, staged so that each race
 * happens every run, not once in many.
 *
 * node.c is built into this program with node_race_window() defined as
 * race_window() below, which the forget path calls after it has read the
 * lookup count under the node's lock and before it writes it back.  The
 * staged case parks the forgetting thread there while a lookup takes the
 * count from 1 to 2 without the lock, then lets it go on: the count must
 * end at 1, with the node's descriptor and the kernel's reference kept.
 * A forget that stores the count it read would write 0 and free the node
 * the kernel still holds.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcfs.h"
#include "harness.h"

struct dcfs dcfs = { .handle_fd = -1 };

void dcfs_log(int prio, const char *fmt, ...)
{
	va_list ap;

	(void)prio;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void coherence_watch_dir(struct dnode *n, int fd)
{
	(void)n;
	(void)fd;
}

/* ---- the staged pause ------------------------------------------------- */

static struct dnode *staged;		/* the node whose forget pauses */
static sem_t paused, resume;

void race_window(struct dnode *n)
{
	if (n != staged)
		return;
	staged = NULL;			/* once */
	sem_post(&paused);
	sem_wait(&resume);
}

static void *forget_thread(void *arg)
{
	node_forget(arg, 1);
	return NULL;
}

/* A file node the kernel knows once (nlookup 1), and one reference of the
 * test's own so that the node outlives any mistake. */
static struct dnode *known_file(const char *path)
{
	struct dnode *n = NULL;
	struct stat st;
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0);
	CHECK(node_get(&st, &fd, &n) == 0);
	if (!n)
		exit(h_done("test_node"));
	CHECK_EQ(node_activate(n, NULL, NULL, NULL, &fd), 0);
	CHECK_EQ(fd, -1);		/* the node took it */
	return n;
}

static void forget_races_lookup(const char *path)
{
	struct dnode *n = known_file(path);
	pthread_t t;

	CHECK_EQ(n->nlookup, 1);
	CHECK_EQ(n->refs, 2);		/* ours and the kernel's share */
	staged = n;
	sem_init(&paused, 0, 0);
	sem_init(&resume, 0, 0);
	CHECK(pthread_create(&t, NULL, forget_thread, n) == 0);
	sem_wait(&paused);		/* forget has read 1 under the lock */
	/* a LOOKUP of the same node: the lock-free 1 -> 2 */
	CHECK_EQ(node_activate(n, NULL, NULL, NULL, NULL), 0);
	sem_post(&resume);
	pthread_join(t, NULL);

	/* one lookup is left, and with it the kernel's state */
	CHECK_EQ(__atomic_load_n(&n->nlookup, __ATOMIC_SEQ_CST), 1);
	CHECK_EQ(__atomic_load_n(&n->refs, __ATOMIC_SEQ_CST), 2);
	CHECK(__atomic_load_n(&n->fd, __ATOMIC_SEQ_CST) >= 0);
	CHECK_EQ(CTR_GET(nodes_active), 1);

	node_forget(n, 1);		/* the kernel's last */
	CHECK_EQ(n->nlookup, 0);
	CHECK_EQ(n->refs, 1);
	CHECK_EQ(n->fd, -1);
	node_put(n);			/* ours: frees it */
	CHECK_EQ(nodes_count(), 0);
}

/* Forgets and lookups of one node on two threads, unstaged: the count
 * ends where the arithmetic says. */
static void *lookups(void *arg)
{
	for (int i = 0; i < 100000; i++)
		node_activate(arg, NULL, NULL, NULL, NULL);
	return NULL;
}

static void counts_add_up(const char *path)
{
	struct dnode *n = known_file(path);
	pthread_t t;
	int i;

	/* never down to zero: a lookup from zero would reopen by name */
	for (i = 0; i < 100000; i++)
		node_activate(n, NULL, NULL, NULL, NULL);
	CHECK(pthread_create(&t, NULL, lookups, n) == 0);
	for (i = 0; i < 100000; i++)
		node_forget(n, 1);
	pthread_join(t, NULL);
	CHECK_EQ(n->nlookup, 100001);
	node_forget(n, 100001);
	node_put(n);
	CHECK_EQ(nodes_count(), 0);
}

/* At unmount every node the kernel still knows is dropped and freed:
 * more than one batch of them (node.c is built with batches of 2 here, so
 * passes also stop inside chains), some known more than once. */
static void unmount_drops_all(void)
{
	char dir[] = "/tmp/test_node.d.XXXXXX", p[64];
	enum { FILES = 300 };
	int i, fd;

	CHECK(mkdtemp(dir) != NULL);
	for (i = 0; i < FILES; i++) {
		struct dnode *n;

		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
		CHECK(fd >= 0);
		close(fd);
		n = known_file(p);
		if (i % 3 == 0)
			CHECK_EQ(node_activate(n, NULL, NULL, NULL, NULL), 0);
		node_put(n);		/* ours: the kernel's share is left */
	}
	CHECK_EQ(nodes_count(), FILES);
	CHECK_EQ(CTR_GET(nodes_active), FILES);
	nodes_drop_kernel_refs();
	CHECK_EQ(nodes_count(), 0);
	CHECK_EQ(CTR_GET(nodes_active), 0);
	for (i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		unlink(p);
	}
	rmdir(dir);
}

int main(void)
{
	char path[] = "/tmp/test_node.XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	close(fd);
	CHECK(nodes_init(1024) == 0);
	forget_races_lookup(path);
	counts_add_up(path);
	unmount_drops_all();
	nodes_fini();
	unlink(path);
	return h_done("test_node");
}
