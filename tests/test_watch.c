// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_watch.c - watchers: changes made to a host directory behind the
 * cache's back reach a hostfs cache.
 *
 *  - coherence, per mode (fanotify, inotify, ttl): a tree is cached
 *    (files and directories two levels deep, names that exist and names
 *    that do not), then changed directly (create, unlink, rename of a
 *    file, of a directory tree, mkdir, rmdir, chmod of a file and of a
 *    directory, a symlink replaced, a directory moved out of root and
 *    back); after each change every path must resolve as lstat and stat
 *    of the real tree say within 100 ms (ttl: the TTL, 50 ms, + 100 ms);
 *  - fanotify's ignore_self: the process's own changes are not reported,
 *    another process's are;
 *  - overflow: changed() blocks on the first event while 20,000 names are
 *    made; the watcher must then report DC_CHANGE_ALL, and everything
 *    agree; and with a queue of 64 events (root: the kernel's limit set
 *    for the watcher's group alone) and 200 names, the kernel's overflow
 *    event itself must be what it reports;
 *  - not root (uid 65534, in a child): auto picks inotify and its log
 *    says why not fanotify; fanotify asked for is -EPERM;
 *  - a spent watch budget (a child in a user namespace whose
 *    max_inotify_watches is 4): dc_watch_dir says -ENOSPC once, then 0;
 *    the watcher is in ttl mode, said so, and answers within the TTL;
 *  - a second file system (tmpfs) below root, in a child's own mount
 *    namespace: changes on it are seen in fanotify and inotify modes;
 *  - errors: bad mode names, a missing root, bad arguments, a second
 *    watcher on one hostfs cache.
 * The forking cases run first, before the process has any thread.
 * Needs root for fanotify, the user namespace and the mount; without it
 * those print SKIP and count as skipped.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dcache-debug.h"
#include "harness.h"

#define LIMIT_MS	100	/* an event mode must agree within this */
#define TTL_MS		50	/* ttl mode's TTL */

static unsigned long skipped;

static void skip(const char *what)
{
	printf("SKIP: %s\n", what);
	skipped++;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* ---- the real tree ------------------------------------------------------ */

static char top[64];		/* the cache's root */
static char outside[64];	/* a sibling, outside root */

/* top/rel, in one of a few rotating buffers (a call may use two). */
static const char *at(const char *rel)
{
	static char buf[4][512];
	static unsigned n;
	char *b = buf[n++ % 4];

	snprintf(b, sizeof(buf[0]), "%s/%s", top, rel);
	return b;
}

static const char *out_at(const char *rel)
{
	static char buf[2][512];
	static unsigned n;
	char *b = buf[n++ % 2];

	snprintf(b, sizeof(buf[0]), "%s/%s", outside, rel);
	return b;
}

static void touch(const char *path)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);

	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* top and outside, made anew; false (a failed check) if they cannot be */
static bool make_top(void)
{
	strcpy(top, "/tmp/dc-watch-XXXXXX");
	strcpy(outside, "/tmp/dc-watch-out-XXXXXX");
	if (!mkdtemp(top)) {
		CHECK(!"mkdtemp");
		return false;
	}
	if (!mkdtemp(outside)) {
		rmdir(top);
		CHECK(!"mkdtemp");
		return false;
	}
	return true;
}

static void remove_top(void)
{
	rm_tree(top);
	rm_tree(outside);
}

/* ---- the cache against the tree ---------------------------------------- */

/* What the kernel says of top/rel: 0 and *st, or -errno. */
static int truth(const char *rel, unsigned flags, struct stat *st)
{
	int r = (flags & DC_NOFOLLOW) ? lstat(at(rel), st) : stat(at(rel), st);

	return r ? -errno : 0;
}

/* The cache and the tree agree on rel, following the last symlink and not. */
static bool agrees(struct dc_cache *c, const char *rel, bool verbose)
{
	static const unsigned how[] = { DC_NOFOLLOW, 0 };
	struct dc_inode ds;
	struct stat st;
	unsigned i;
	int t, r;

	for (i = 0; i < 2; i++) {
		t = truth(rel, how[i], &st);
		r = dc_resolve(c, NULL, rel, how[i], &ds);
		if (t == r && (t || (ds.ino == st.st_ino && ds.mode == st.st_mode)))
			continue;
		if (verbose)
			fprintf(stderr, "  %s%s: tree %d ino %llu mode %o, cache %d "
				"ino %llu mode %o\n", rel, how[i] ? " (nofollow)" : "",
				t, t ? 0ull : (unsigned long long)st.st_ino,
				t ? 0u : (unsigned)st.st_mode, r,
				r ? 0ull : (unsigned long long)ds.ino,
				r ? 0u : (unsigned)ds.mode);
		return false;
	}
	return true;
}

static bool all_agree(struct dc_cache *c, const char *const *paths, bool verbose)
{
	bool ok = true;

	for (; *paths; paths++)
		if (!agrees(c, *paths, verbose)) {
			ok = false;
			if (!verbose)
				break;
		}
	return ok;
}

/* Poll until every path agrees; ms it took, or -1 after 20 x limit. */
static double wait_agree(struct dc_cache *c, const char *const *paths,
			 double limit)
{
	double t0 = now_ms(), t;

	for (;;) {
		t = now_ms() - t0;
		if (all_agree(c, paths, false))
			return t;
		if (t > 20 * limit)
			return -1;
		h_sleep_ms(1);
	}
}

/* After a change: every path agrees within limit ms. */
static void expect_agree(struct dc_cache *c, const char *const *paths,
			 double limit, const char *mode, const char *what)
{
	double t = wait_agree(c, paths, limit);

	if (getenv("DC_TEST_VERBOSE"))
		printf("%s: %s: agreed after %.1f ms\n", mode, what, t);
	H_INC(h_checks);
	if (t < 0 || t > limit) {
		H_INC(h_failed);
		fprintf(stderr, "%s:%d: %s: %s: %s after %.1f ms (limit %.0f):\n",
			__FILE__, __LINE__, mode, what,
			t < 0 ? "never agreed" : "agreed only", t < 0 ? 20 * limit : t,
			limit);
		all_agree(c, paths, true);
	}
}

static int new_cache(const char *root, uint32_t ttl, struct dc_cache **c)
{
	struct dc_options o = { .mode = DC_MODE_RCU, .ttl_ms = ttl, .neg_ttl_ms = ttl };
	int err = dc_hostfs_backend(root, &o.backend);

	return err ? err : dc_cache_create(&o, c);
}

/* ---- what the watcher said ------------------------------------------- */

struct said {
	pthread_mutex_t lock;
	char log[4096];
	int all, degraded, names, self_events;
	int inodes;		/* DC_CHANGE_INODE events */
	pthread_mutex_t *gate;	/* held by the test: the first changed() waits */
	int entered;
};

static void said_init(struct said *s)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
}

static void on_log(void *arg, const char *msg)
{
	struct said *s = arg;

	pthread_mutex_lock(&s->lock);
	if (strlen(s->log) + strlen(msg) + 2 < sizeof(s->log)) {
		strcat(s->log, msg);
		strcat(s->log, "\n");
	}
	pthread_mutex_unlock(&s->lock);
}

static void on_changed(void *arg, const struct dc_change_event *ev)
{
	struct said *s = arg;

	if (s->gate && !__atomic_exchange_n(&s->entered, 1, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(s->gate);
		pthread_mutex_unlock(s->gate);
	}
	pthread_mutex_lock(&s->lock);
	if (ev->what == DC_CHANGE_ALL) {
		s->all++;
		if (ev->flags & DC_CHANGED_DEGRADED)
			s->degraded++;
	} else if (ev->what == DC_CHANGE_INODE) {
		/* a link count changed: the inode alone, no name */
		if (!ev->ino || ev->name || !ev->flags ||
		    ev->dir_gen != dc_hostfs_gen(ev->dir_dev))
			s->self_events = -1000000;	/* malformed: fails below */
		s->inodes++;
	} else {
		s->names++;
		if (ev->what != DC_CHANGE_NAME || !ev->name ||
		    strlen(ev->name) != ev->len || !ev->flags ||
		    ev->dir_gen != dc_hostfs_gen(ev->dir_dev))
			s->self_events = -1000000;	/* malformed: fails below */
	}
	pthread_mutex_unlock(&s->lock);
}

/* DC_TEST_VERBOSE=1: what each watcher logged. */
static void said_show(struct said *s, const char *what)
{
	if (getenv("DC_TEST_VERBOSE"))
		printf("%s: log:\n%s", what, s->log);
}

static int said_get(struct said *s, int *field)
{
	int v;

	pthread_mutex_lock(&s->lock);
	v = *field;
	pthread_mutex_unlock(&s->lock);
	return v;
}

static bool said_log_has(struct said *s, const char *what)
{
	bool r;

	pthread_mutex_lock(&s->lock);
	r = strstr(s->log, what) != NULL;
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Hold the watcher in its first changed(), which a change of path (made
 * here) brings, until the test unlocks gate (s->gate). */
static void hold_watcher(struct said *s, pthread_mutex_t *gate, const char *path)
{
	double t0;

	pthread_mutex_lock(gate);
	touch(path);
	for (t0 = now_ms(); !__atomic_load_n(&s->entered, __ATOMIC_SEQ_CST) &&
	     now_ms() - t0 < 5000;)
		h_sleep_ms(1);
	CHECK(__atomic_load_n(&s->entered, __ATOMIC_SEQ_CST));
}

/* ---- 1: coherence per mode ---------------------------------------------- */

static const char *const paths[] = {
	"a", "a/f", "a/f/x", "a/new", "a/b", "a/b/g", "a/g2", "a/b/h",
	"a/b/empty", "a/b/sub", "a/b/sub/x", "d", "d/e", "d/e/f", "d/e/new2",
	"a/d2", "a/d2/e", "a/d2/e/f", "a/d2/e/new2", "a/d3", "a/d3/e",
	"a/d3/e/out1", "a/d3/e/in1", "a/o1", "a/o1/x", "a/o1/y", "l", "l/x",
	"l/h", "l.tmp", "zz", "a/zz/q", "h/l1", "a/l2", NULL
};

/* A hard link whose other name (h/m1) is never looked up. */
static const char *const other_link[] = { "a/m2", NULL };

static void make_tree(void)
{
	CHECK(mkdir(at("a"), 0755) == 0);
	touch(at("a/f"));
	CHECK(mkdir(at("a/b"), 0755) == 0);
	touch(at("a/b/g"));
	touch(at("a/b/h"));
	CHECK(mkdir(at("a/b/empty"), 0755) == 0);
	CHECK(mkdir(at("d"), 0755) == 0);
	CHECK(mkdir(at("d/e"), 0755) == 0);
	touch(at("d/e/f"));
	CHECK(symlink("a/f", at("l")) == 0);
	CHECK(mkdir(at("h"), 0755) == 0);
	touch(at("h/l1"));
	CHECK(link(at("h/l1"), at("a/l2")) == 0);
	touch(at("h/m1"));
	CHECK(link(at("h/m1"), at("a/m2")) == 0);
}

/* Each change, then the wait for the cache to agree. */
static void changes(struct dc_cache *c, enum dc_watch_mode m, double limit)
{
	const char *mode = dc_watch_mode_name(m);

	touch(at("a/new"));
	expect_agree(c, paths, limit, mode, "create");
	CHECK(unlink(at("a/f")) == 0);
	expect_agree(c, paths, limit, mode, "unlink");
	CHECK(rename(at("a/b/g"), at("a/g2")) == 0);
	expect_agree(c, paths, limit, mode, "rename a file");
	CHECK(rename(at("d"), at("a/d2")) == 0);
	expect_agree(c, paths, limit, mode, "rename a directory tree");
	touch(at("a/d2/e/new2"));
	expect_agree(c, paths, limit, mode, "create in a moved directory");
	CHECK(mkdir(at("a/b/sub"), 0755) == 0);
	expect_agree(c, paths, limit, mode, "mkdir");
	CHECK(rmdir(at("a/b/empty")) == 0);
	expect_agree(c, paths, limit, mode, "rmdir");
	CHECK(chmod(at("a/b/h"), 0600) == 0);
	expect_agree(c, paths, limit, mode, "chmod a file");
	CHECK(chmod(at("a/b"), 0700) == 0);
	expect_agree(c, paths, limit, mode, "chmod a directory");
	CHECK(symlink("a/b", at("l.tmp")) == 0);
	CHECK(rename(at("l.tmp"), at("l")) == 0);
	expect_agree(c, paths, limit, mode, "replace a symlink");
	/* out of root and back: what is below root changes twice */
	CHECK(rename(at("a/d2"), out_at("d2")) == 0);
	expect_agree(c, paths, limit, mode, "move a directory out of root");
	touch(out_at("d2/e/out1"));
	CHECK(rename(out_at("d2"), at("a/d3")) == 0);
	expect_agree(c, paths, limit, mode, "move it back in");
	touch(at("a/d3/e/in1"));
	expect_agree(c, paths, limit, mode, "create in the directory moved back");
	/* a directory first seen outside root (a change in it, let be
	 * judged there), then moved in: changes in it count from then on */
	CHECK(mkdir(out_at("o1"), 0755) == 0);
	touch(out_at("o1/x"));
	h_sleep_ms(LIMIT_MS / 2);
	CHECK(rename(out_at("o1"), at("a/o1")) == 0);
	expect_agree(c, paths, limit, mode, "move a directory into root");
	touch(at("a/o1/y"));
	expect_agree(c, paths, limit, mode, "create in the directory moved in");
	/* attributes are the inode's: every cached name of it follows */
	CHECK(chmod(at("h/l1"), 0640) == 0);
	expect_agree(c, paths, limit, mode, "chmod through one of two cached links");
	/* through a name the cache never held: inotify has no descriptor to
	 * look the name up in (docs/design.md, "Not seen") */
	CHECK(chmod(at("h/m1"), 0640) == 0);
	if (m != DC_WATCH_INOTIFY)
		expect_agree(c, other_link, limit, mode,
			     "chmod through an uncached link");
}

static void test_coherence(enum dc_watch_mode mode)
{
	const char *name = dc_watch_mode_name(mode);
	struct dc_watch_options o = {
		.mode = mode, .ttl_ms = TTL_MS, .changed = on_changed,
		.log = on_log,
	};
	double limit = mode == DC_WATCH_TTL ? TTL_MS + LIMIT_MS : LIMIT_MS;
	struct dc_watch *w = NULL;
	struct dc_cache *c = NULL;
	struct said s;
	int err;

	if (mode == DC_WATCH_FANOTIFY && geteuid() != 0) {
		skip("fanotify coherence: not root (fanotify needs CAP_SYS_ADMIN)");
		return;
	}
	if (!make_top())
		return;
	said_init(&s);
	o.arg = &s;
	make_tree();
	CHECK_EQ(new_cache(top, 0, &c), 0);
	if (!c)
		goto out;
	err = dc_watch_start(c, top, &o, &w);
	CHECK_EQ(err, 0);
	if (err)
		goto out;
	CHECK_EQ(dc_watch_mode_of(w), mode);
	CHECK(said_log_has(&s, name));
	/* cache everything, twice: the second pass must be all hits */
	CHECK(all_agree(c, paths, true));
	CHECK(all_agree(c, paths, true));
	CHECK(all_agree(c, other_link, true));
	changes(c, mode, limit);
	if (mode != DC_WATCH_TTL) {
		CHECK(said_get(&s, &s.names) > 0);
		CHECK(said_get(&s, &s.self_events) >= 0);
	}
	CHECK_EQ(said_get(&s, &s.all), 0);
	CHECK_EQ(dc_debug_check(c), 0);
out:
	said_show(&s, name);
	dc_watch_stop(w);
	if (c)
		dc_cache_destroy(c);
	remove_top();
}

/* ---- fanotify's ignore_self --------------------------------------------- */

static void test_ignore_self(void)
{
	static const char *const one[] = { "mine", "theirs", NULL };
	struct dc_watch_options o = { .mode = DC_WATCH_FANOTIFY, .ignore_self = 1 };
	struct dc_watch *w = NULL;
	struct dc_cache *c = NULL;
	struct dc_inode ds;
	pid_t pid;
	int st;

	if (geteuid() != 0) {
		skip("fanotify ignore_self: not root");
		return;
	}
	if (!make_top())
		return;
	CHECK_EQ(new_cache(top, 0, &c), 0);
	if (c)
		CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	if (!w)
		goto out;
	CHECK(all_agree(c, one, true));
	/* ours: the cache is not told (we would have told it ourselves) */
	touch(at("mine"));
	h_sleep_ms(3 * LIMIT_MS);
	CHECK_EQ(dc_resolve(c, NULL, "mine", 0, &ds), -ENOENT);
	/* another process's: it is */
	pid = fork();
	if (pid == 0) {
		int fd = open(at("theirs"), O_CREAT | O_WRONLY, 0644);

		_exit(fd < 0);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	      WEXITSTATUS(st) == 0);
	expect_agree(c, one + 1, LIMIT_MS, "fanotify", "another process's create");
	CHECK_EQ(dc_resolve(c, NULL, "mine", 0, &ds), -ENOENT);
out:
	dc_watch_stop(w);
	if (c)
		dc_cache_destroy(c);
	remove_top();
}

/* ---- 2: overflow ---------------------------------------------------------- */

#define FLOOD	20000
#define SMALL_QUEUE	64	/* events a small queue holds */
#define SMALL_FLOOD	200

/* The kernel's limit on queued events for mode's new groups. */
static const char *queue_param(enum dc_watch_mode mode)
{
	return mode == DC_WATCH_FANOTIFY ? "/proc/sys/fs/fanotify/max_queued_events" :
					   "/proc/sys/fs/inotify/max_queued_events";
}

static bool write_param(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	bool ok = f && fprintf(f, "%ld\n", v) > 0;

	if (f)
		ok &= fclose(f) == 0;
	return ok;
}

/*
 * small 0: the kernel's own queue (16,384 events), flooded with 20,000:
 * the watcher, far behind when it reads again, may skip the backlog
 * before it reaches the kernel's overflow event; either way it must
 * forget everything.  small 1: a group made with a queue of 64 events
 * (the limit is read when the group is made, and set back at once), so
 * that 200 changes overflow a queue the watcher reads in one go: the
 * kernel's overflow event itself must be what it reports.
 */
static void test_overflow(enum dc_watch_mode mode, bool small)
{
	static const char *const some[] = {
		"big", "big/first", "big/f00000", "big/f09999", "big/f19999",
		"big/g", NULL
	};
	static const char *const some_small[] = {
		"big", "big/first", "big/f00000", "big/f00199", "big/f00200", "big/g", NULL
	};
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct dc_watch_options o = {
		.mode = mode, .changed = on_changed, .log = on_log,
	};
	struct dc_watch *w = NULL;
	struct dc_cache *c = NULL;
	int flood = small ? SMALL_FLOOD : FLOOD;
	long was = 0;
	char name[64], what[80], msg[160];
	struct said s;
	double t0;
	int i;

	snprintf(what, sizeof(what), "%s overflow%s", dc_watch_mode_name(mode),
		 small ? " of a small queue" : "");
	if ((mode == DC_WATCH_FANOTIFY || small) && geteuid() != 0) {
		snprintf(msg, sizeof(msg), "%s: not root", what);
		skip(msg);
		return;
	}
	if (small) {
		FILE *f = fopen(queue_param(mode), "r");

		if (!f || fscanf(f, "%ld", &was) != 1 || was < SMALL_QUEUE) {
			if (f)
				fclose(f);
			snprintf(msg, sizeof(msg), "%s: no %s", what, queue_param(mode));
			skip(msg);
			return;
		}
		fclose(f);
	}
	if (!make_top())
		return;
	said_init(&s);
	s.gate = &gate;
	o.arg = &s;
	CHECK(mkdir(at("big"), 0755) == 0);
	CHECK_EQ(new_cache(top, 0, &c), 0);
	if (c && small && !write_param(queue_param(mode), SMALL_QUEUE))
		CHECK(!"setting the queue's limit");
	if (c)
		CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	if (small)
		CHECK(write_param(queue_param(mode), was));
	if (!w)
		goto out;
	CHECK(all_agree(c, some, true));
	hold_watcher(&s, &gate, at("big/first"));
	/* more than the kernel queues (16,384 by default, both kinds) */
	for (i = 0; i < flood; i++) {
		snprintf(name, sizeof(name), "big/f%05d", i);
		touch(at(name));
	}
	CHECK(mkdir(at("big/g"), 0755) == 0);
	pthread_mutex_unlock(&gate);
	for (t0 = now_ms(); !said_get(&s, &s.all) && now_ms() - t0 < 10000;)
		h_sleep_ms(1);
	CHECK(said_get(&s, &s.all) >= 1);
	CHECK_EQ(said_get(&s, &s.degraded), 0);
	CHECK(said_log_has(&s, "overflow"));
	if (small) {
		snprintf(name, sizeof(name), "the %s queue overflowed", dc_watch_mode_name(mode));
		CHECK(said_log_has(&s, name));
	}
	expect_agree(c, small ? some_small : some, LIMIT_MS, dc_watch_mode_name(mode),
		     "after overflow");
	CHECK_EQ(dc_watch_mode_of(w), mode);
out:
	said_show(&s, what);
	dc_watch_stop(w);
	if (c)
		dc_cache_destroy(c);
	remove_top();
	pthread_mutex_destroy(&gate);
}

static bool case_top;	/* fanotify_case made top: its end removes it */

/*
 * The fanotify cases below: top anew holding D/f (0644), linked as
 * top/link (its directory dir made first) or, link NULL, as g outside
 * root; a cache of top and a fanotify watcher telling s.  false: skipped
 * (not root) or failed, said.
 */
static bool fanotify_case(const char *what, struct said *s, const char *dir,
			  const char *link_name, struct dc_cache **c,
			  struct dc_watch **w)
{
	struct dc_watch_options o = {
		.mode = DC_WATCH_FANOTIFY, .changed = on_changed, .log = on_log,
		.arg = s,
	};
	char msg[128];

	*c = NULL;
	*w = NULL;
	case_top = false;
	if (geteuid() != 0) {
		snprintf(msg, sizeof(msg), "fanotify, %s: not root", what);
		skip(msg);
		return false;
	}
	if (!make_top())
		return false;
	case_top = true;
	CHECK(mkdir(at("D"), 0755) == 0);
	if (dir)
		CHECK(mkdir(at(dir), 0755) == 0);
	touch(at("D/f"));
	CHECK(chmod(at("D/f"), 0644) == 0);
	CHECK(link(at("D/f"), link_name ? at(link_name) : out_at("g")) == 0);
	CHECK_EQ(new_cache(top, 0, c), 0);
	if (*c)
		CHECK_EQ(dc_watch_start(*c, top, &o, w), 0);
	return *w != NULL;
}

/* Every path agrees in the end; how soon is test_coherence's to judge. */
static void agree_in_the_end(struct dc_cache *c, const char *const *paths,
			     const char *what)
{
	if (wait_agree(c, paths, LIMIT_MS) < 0) {
		fprintf(stderr, "fanotify: %s never showed\n", what);
		CHECK(!"a change never showed");
		all_agree(c, paths, true);
	} else {
		CHECK(true);
	}
}

static void fanotify_case_end(struct said *s, const char *what,
			      struct dc_cache *c, struct dc_watch *w)
{
	said_show(s, what);
	dc_watch_stop(w);
	if (c)
		dc_cache_destroy(c);
	if (case_top)
		remove_top();
}

/* ---- a change read after its directory went ------------------------------
 * fanotify names a change by its directory's handle and the name; when
 * the directory is gone by the time the event is read, the changed file's
 * own handle still says which inode changed, and its other cached names
 * (a hard link elsewhere) must learn of it.  The watcher is held in its
 * first changed() while D/f's mode changes, D/f leaves the tree and D is
 * removed; E/g, a second name of that file, must then show the new mode.
 */
static void test_gone_dir(void)
{
	static const char *const link2[] = { "E/g", NULL };
	static const char *const names[] = { "E/g", "D/f", "D", NULL };
	pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
	struct dc_watch *w;
	struct dc_cache *c;
	struct said s;

	said_init(&s);
	s.gate = &gate;
	if (fanotify_case("a directory gone before its event", &s, "E", "E/g",
			  &c, &w)) {
		/* E/g alone: a cached D would keep D's inode alive (hostfs
		 * holds a descriptor of each cached directory), and its
		 * handle working */
		CHECK(all_agree(c, link2, true));
		hold_watcher(&s, &gate, at("trigger"));
		CHECK(chmod(at("D/f"), 0600) == 0);
		CHECK(rename(at("D/f"), out_at("f")) == 0);
		CHECK(rmdir(at("D")) == 0);
		pthread_mutex_unlock(&gate);
		/* a file's mode changed, the file moved out and its directory
		 * removed: E/g must agree in the end (never, without the
		 * file's own handle) */
		agree_in_the_end(c, names, "a change read after its directory went");
	}
	fanotify_case_end(&s, "fanotify, a directory gone", c, w);
	pthread_mutex_destroy(&gate);
}

/*
 * fanotify: a file's mode changed through a hard link outside root.  The
 * event names only the outside directory, but the file is cached by its
 * name below root, which must agree in the end.
 */
static void test_link_outside(void)
{
	static const char *const names[] = { "D/f", "D", NULL };
	struct dc_watch *w;
	struct dc_cache *c;
	struct said s;

	said_init(&s);
	if (fanotify_case("a hard link outside root", &s, NULL, NULL, &c, &w)) {
		CHECK(all_agree(c, names, true));
		CHECK(chmod(out_at("g"), 0600) == 0);
		agree_in_the_end(c, names, "a chmod through a hard link outside root");
		/* and the owner heard of the inode, well formed (told after
		 * the cache: waited for, 10 s at most) */
		for (double t0 = now_ms(); !said_get(&s, &s.inodes) &&
		     now_ms() - t0 < 10000;)
			h_sleep_ms(1);
		CHECK(said_get(&s, &s.inodes) >= 1);
		CHECK(said_get(&s, &s.self_events) >= 0);
	}
	fanotify_case_end(&s, "fanotify, a hard link outside root", c, w);
}

/* ---- 3: not root ------------------------------------------------------------ */

/* Run fn in a child; its failures fail us, its exit 77 is a skip. */
static void in_child(void (*fn)(void), const char *what, const char *why_skip)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		h_checks = h_failed = 0;	/* its own count */
		fn();
		fflush(NULL);
		exit(h_failed ? 1 : 0);
	}
	CHECK(pid > 0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		CHECK(!"waitpid");
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s: %s", what, why_skip);
		skip(msg);
		return;
	}
	H_INC(h_checks);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		H_INC(h_failed);
		fprintf(stderr, "%s:%d: %s: the child failed (status %#x)\n",
			__FILE__, __LINE__, what, st);
	}
}

/*
 * The caller lacks what fanotify needs: auto takes inotify, which works,
 * and fanotify asked for by name is refused.  who: the caller, for the
 * messages.
 */
static void fanotify_refused(const char *who)
{
	static const char *const one[] = { "sub", "sub/x", NULL };
	struct dc_watch_options o = { .mode = DC_WATCH_AUTO, .log = on_log };
	struct dc_watch *w = NULL;
	struct dc_cache *c = NULL;
	struct said s;

	said_init(&s);
	o.arg = &s;
	if (!make_top())
		return;
	CHECK(mkdir(at("sub"), 0755) == 0);
	CHECK_EQ(new_cache(top, 0, &c), 0);
	if (c)
		CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	if (w) {
		CHECK_EQ(dc_watch_mode_of(w), DC_WATCH_INOTIFY);
		CHECK(said_log_has(&s, "fanotify not available"));
		CHECK(said_log_has(&s, "using inotify"));
		CHECK(all_agree(c, one, true));
		touch(at("sub/x"));
		expect_agree(c, one, LIMIT_MS, who, "create");
		dc_watch_stop(w);
		w = NULL;
	}
	if (c) {
		o.mode = DC_WATCH_FANOTIFY;
		CHECK_EQ(dc_watch_start(c, top, &o, &w), -EPERM);
		CHECK(w == NULL);
		dc_cache_destroy(c);
	}
	remove_top();
}

/*
 * Root without CAP_DAC_READ_SEARCH (kept: CAP_SYS_ADMIN, which fanotify
 * needs): no handle opens again, so auto takes inotify, and fanotify
 * asked for by name is refused, rather than a watcher whose every event
 * forgets everything.
 */
static void child_no_dac_read_search(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	if (geteuid() != 0)
		exit(77);
	if (syscall(SYS_capget, &hdr, data) != 0)
		exit(77);
	data[0].effective &= ~(1u << CAP_DAC_READ_SEARCH);
	data[0].permitted &= ~(1u << CAP_DAC_READ_SEARCH);
	if (syscall(SYS_capset, &hdr, data) != 0)
		exit(77);
	fanotify_refused("inotify without CAP_DAC_READ_SEARCH");
}

static void child_not_root(void)
{
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	     setresuid(65534, 65534, 65534))) {
		fprintf(stderr, "cannot become uid 65534: %s\n", strerror(errno));
		exit(77);
	}
	fanotify_refused("inotify as 65534");	/* top made as 65534 */
}

/* ---- a spent watch budget ----------------------------------------------------- */

static void child_budget(void)
{
	static const char *const one[] = { "d5", "d5/x", NULL };
	struct dc_watch_options o = {
		.mode = DC_WATCH_INOTIFY, .ttl_ms = TTL_MS, .changed = on_changed,
		.log = on_log,
	};
	struct dc_watch *w = NULL;
	struct dc_cache *c = NULL;
	char name[16];
	struct said s;
	struct stat st;
	int fd[6], i, f;
	double t0;

	/* a namespace of our own, whose watch limit only we feel */
	if (unshare(CLONE_NEWUSER)) {
		fprintf(stderr, "unshare(CLONE_NEWUSER): %s\n", strerror(errno));
		exit(77);
	}
	f = open("/proc/sys/user/max_inotify_watches", O_WRONLY);
	if (f < 0 || write(f, "4", 1) != 1) {
		fprintf(stderr, "max_inotify_watches: %s\n", strerror(errno));
		exit(77);
	}
	close(f);
	said_init(&s);
	o.arg = &s;
	if (!make_top())
		return;
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "d%d", i);
		CHECK(mkdir(at(name), 0755) == 0);
		fd[i] = open(at(name), O_PATH | O_DIRECTORY | O_CLOEXEC);
		CHECK(fd[i] >= 0);
	}
	CHECK_EQ(new_cache(top, 0, &c), 0);
	if (c)
		CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);	/* root: 1 */
	if (!w)
		goto out;
	for (i = 0; i < 3; i++) {			/* 2, 3, 4 */
		CHECK(fstat(fd[i], &st) == 0);
		CHECK_EQ(dc_watch_dir(w, fd[i], st.st_ino, st.st_dev), 0);
	}
	CHECK(fstat(fd[0], &st) == 0);			/* again: no new watch */
	CHECK_EQ(dc_watch_dir(w, fd[0], st.st_ino, st.st_dev), 0);
	CHECK(fstat(fd[3], &st) == 0);
	CHECK_EQ(dc_watch_dir(w, fd[3], st.st_ino, st.st_dev), -ENOSPC);
	CHECK_EQ(dc_watch_mode_of(w), DC_WATCH_TTL);
	CHECK(fstat(fd[4], &st) == 0);
	CHECK_EQ(dc_watch_dir(w, fd[4], st.st_ino, st.st_dev), 0);
	for (t0 = now_ms(); !said_get(&s, &s.degraded) && now_ms() - t0 < 5000;)
		h_sleep_ms(1);
	CHECK_EQ(said_get(&s, &s.degraded), 1);
	CHECK(said_log_has(&s, "max_user_watches"));
	CHECK(said_log_has(&s, "using ttl"));
	CHECK(all_agree(c, one, true));
	touch(at("d5/x"));
	expect_agree(c, one, TTL_MS + LIMIT_MS, "inotify fallen back", "create");
out:
	dc_watch_stop(w);
	if (c)
		dc_cache_destroy(c);
	for (i = 0; i < 6; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	remove_top();
}

/* ---- a second file system below root --------------------------------------- */

static void child_mounts(void)
{
	static const char *const some[] = {
		"m", "m/y", "m/sub", "m/sub/x", "m/sub/z", NULL
	};
	static const enum dc_watch_mode modes[] = { DC_WATCH_FANOTIFY, DC_WATCH_INOTIFY };
	struct dc_watch *w;
	struct dc_cache *c;
	struct said s;
	unsigned i;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "a mount namespace: %s\n", strerror(errno));
		exit(77);
	}
	if (!make_top())
		return;
	CHECK(mkdir(at("m"), 0755) == 0);
	if (mount("tmpfs", at("m"), "tmpfs", 0, "size=1m")) {
		fprintf(stderr, "mount tmpfs: %s\n", strerror(errno));
		remove_top();
		exit(77);
	}
	CHECK(mkdir(at("m/sub"), 0755) == 0);
	for (i = 0; i < 2; i++) {
		struct dc_watch_options o = {
			.mode = modes[i], .ttl_ms = TTL_MS, .changed = on_changed,
			.log = on_log, .arg = &s,
		};
		const char *name = dc_watch_mode_name(modes[i]);
		enum dc_watch_mode now;

		said_init(&s);
		w = NULL;
		c = NULL;
		CHECK_EQ(new_cache(top, 0, &c), 0);
		if (c)
			CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
		if (w) {
			CHECK(all_agree(c, some, true));
			touch(at("m/y"));
			touch(at("m/sub/x"));
			now = dc_watch_mode_of(w);
			/* the tmpfs may not be markable (no fsid, no handles):
			 * then the watcher must have fallen back and said so */
			CHECK(now == modes[i] || (now == DC_WATCH_TTL &&
						  said_log_has(&s, "using ttl")));
			if (now != modes[i])
				printf("%s: fell back on a tmpfs below root\n", name);
			expect_agree(c, some, now == DC_WATCH_TTL ? TTL_MS + LIMIT_MS :
				     LIMIT_MS, name, "changes on a second file system");
			dc_watch_stop(w);
		}
		if (c)
			dc_cache_destroy(c);
		unlink(at("m/y"));
		unlink(at("m/sub/x"));
		unlink(at("m/sub/z"));
	}
	umount2(at("m"), MNT_DETACH);
	remove_top();
}

/* ---- 4: errors and odd uses ---------------------------------------------------- */

static void test_errors(void)
{
	struct dc_watch_options o = { .mode = DC_WATCH_INOTIFY };
	struct dc_memfs *fs = NULL;
	struct dc_options co = { .mode = DC_MODE_RCU };
	struct dc_watch *w = (struct dc_watch *)&o, *w2;
	struct dc_cache *c = NULL;
	enum dc_watch_mode m;
	struct said s;
	unsigned i;
	int fd;

	for (i = DC_WATCH_AUTO; i <= DC_WATCH_FANOTIFY; i++) {
		CHECK(dc_watch_mode_name((enum dc_watch_mode)i) != NULL);
		CHECK_EQ(dc_watch_mode_parse(dc_watch_mode_name((enum dc_watch_mode)i), &m), 0);
		CHECK_EQ(m, i);
	}
	CHECK(dc_watch_mode_name((enum dc_watch_mode)5) == NULL);
	CHECK(dc_watch_mode_name((enum dc_watch_mode)-1) == NULL);
	CHECK_EQ(dc_watch_mode_parse("bogus", &m), -EINVAL);
	CHECK_EQ(dc_watch_mode_parse("", &m), -EINVAL);
	CHECK_EQ(dc_watch_mode_parse("INOTIFY", &m), -EINVAL);
	CHECK_EQ(dc_watch_mode_parse(NULL, &m), -EINVAL);
	CHECK_EQ(dc_watch_mode_parse("ttl", NULL), -EINVAL);

	if (!make_top())
		return;
	/* a backend that is not hostfs: the watcher works, nothing attaches */
	CHECK_EQ(dc_memfs_new(&fs), 0);
	if (!fs)
		goto out;
	co.backend = dc_memfs_backend(fs);
	CHECK_EQ(dc_cache_create(&co, &c), 0);
	if (!c)
		goto out;
	CHECK_EQ(dc_watch_start(c, "/nonexistent/dc-watch", &o, &w), -ENOENT);
	CHECK(w == NULL);
	touch(at("file"));
	CHECK_EQ(dc_watch_start(c, at("file"), &o, &w), -ENOTDIR);
	CHECK_EQ(dc_watch_start(NULL, top, &o, &w), -EINVAL);
	CHECK_EQ(dc_watch_start(c, NULL, &o, &w), -EINVAL);
	CHECK_EQ(dc_watch_start(c, top, NULL, &w), -EINVAL);
	CHECK_EQ(dc_watch_start(c, top, &o, NULL), -EINVAL);
	o.mode = (enum dc_watch_mode)5;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), -EINVAL);
	o.mode = DC_WATCH_INOTIFY;
	/* root as a descriptor: checked as the path is; the name only names */
	o.root_fd_set = 2;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), -EINVAL);
	o.root_fd_set = 0;
	o.root_fd = 3;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), -EINVAL);
	o.root_fd_set = 1;
	o.root_fd = -1;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), -EBADF);
	fd = open(at("file"), O_PATH | O_CLOEXEC);
	o.root_fd = fd;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), -ENOTDIR);
	close(fd);
	fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	o.root_fd = fd;
	CHECK_EQ(dc_watch_start(c, "/nonexistent/named-only", &o, &w), 0);
	close(fd);	/* the watcher keeps its own */
	if (w) {
		CHECK_EQ(dc_watch_mode_of(w), DC_WATCH_INOTIFY);
		dc_watch_stop(w);
	}
	o.root_fd_set = 0;
	o.root_fd = 0;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	if (w) {
		CHECK_EQ(dc_watch_mode_of(w), DC_WATCH_INOTIFY);
		CHECK_EQ(dc_watch_dir(w, -1, 1, 1), -EBADF);
		fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
		CHECK_EQ(dc_watch_dir(w, fd, 1, 1), 0);
		close(fd);
		dc_watch_stop(w);
	}
	CHECK_EQ(dc_watch_dir(NULL, 0, 1, 1), -EINVAL);
	dc_watch_stop(NULL);
	CHECK_EQ(dc_watch_mode_of(NULL), DC_WATCH_OFF);
	o.mode = DC_WATCH_OFF;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	if (w) {
		CHECK_EQ(dc_watch_mode_of(w), DC_WATCH_OFF);
		CHECK_EQ(dc_watch_dir(w, 0, 1, 1), 0);
		dc_watch_stop(w);
	}
	dc_cache_destroy(c);
	c = NULL;

	/* ttl on a cache with TTLs of its own keeps them */
	said_init(&s);
	o = (struct dc_watch_options){ .mode = DC_WATCH_TTL, .log = on_log, .arg = &s };
	CHECK_EQ(new_cache(top, 5000, &c), 0);
	if (!c)
		goto out;
	CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	CHECK_EQ(dc_watch_mode_of(w), DC_WATCH_TTL);
	CHECK(said_log_has(&s, "the cache's own"));
	dc_watch_stop(w);
	/* one watcher per hostfs cache; after it stopped, another may start */
	o = (struct dc_watch_options){ .mode = DC_WATCH_INOTIFY };
	CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	w2 = (struct dc_watch *)&o;
	CHECK_EQ(dc_watch_start(c, top, &o, &w2), -EBUSY);
	CHECK(w2 == NULL);
	dc_watch_stop(w);
	CHECK_EQ(dc_watch_start(c, top, &o, &w), 0);
	dc_watch_stop(w);
out:
	if (c)
		dc_cache_destroy(c);
	if (fs)
		dc_memfs_free(fs);
	remove_top();
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* children first: no thread of ours (or liburcu's) exists yet */
	in_child(child_not_root, "not root", "cannot become uid 65534");
	in_child(child_no_dac_read_search, "without CAP_DAC_READ_SEARCH",
		 "not root, or capabilities not settable");
	if (geteuid() == 0) {
		in_child(child_budget, "spent watch budget",
			 "cannot make a user namespace here (TSan: a second thread)");
		in_child(child_mounts, "a second file system",
			 "cannot make a mount namespace or mount a tmpfs here");
	} else {
		skip("spent watch budget: not root");
		skip("a second file system: not root");
	}
	test_errors();
	test_coherence(DC_WATCH_FANOTIFY);
	test_coherence(DC_WATCH_INOTIFY);
	test_coherence(DC_WATCH_TTL);
	test_ignore_self();
	test_overflow(DC_WATCH_INOTIFY, false);
	test_overflow(DC_WATCH_FANOTIFY, false);
	test_overflow(DC_WATCH_INOTIFY, true);
	test_overflow(DC_WATCH_FANOTIFY, true);
	test_gone_dir();
	test_link_outside();
	printf("test_watch: %lu checks, %lu failed, %lu skipped\n", h_checks,
	       h_failed, skipped);
	return h_failed ? 1 : 0;
}
