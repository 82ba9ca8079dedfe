// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_api.c - the public API as a user meets it: version calls,
 * reserved space, update calls over hostfs with cookies the caller
 * cannot know, hostfs's descriptor budget, and what a held entry answers
 * after its name is gone.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dcache.h"
#include "harness.h"

static char tmpdir[] = "/tmp/test_api.XXXXXX";

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own */
}

static struct dc_cache *hostfs_cache(const struct dc_hostfs_options *ho)
{
	struct dc_options o = { .mode = DC_MODE_RCU };
	struct dc_cache *c = NULL;

	CHECK_EQ(dc_hostfs_open(tmpdir, ho, &o.backend), 0);
	CHECK_EQ(dc_cache_create(&o, &c), 0);
	return c;
}

/* What stat(2) says of rel, as the cache's update calls take it. */
static struct dc_inode host_inode(const char *rel, uint64_t cookie)
{
	char path[512];
	struct stat st;
	struct dc_inode in = { 0 };

	snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
	CHECK_EQ(lstat(path, &st), 0);
	in.ino = st.st_ino;
	in.mode = st.st_mode;
	in.gen = dc_hostfs_gen(st.st_dev);
	in.cookie = cookie;
	return in;
}

static void test_version(void)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", DC_VERSION_MAJOR,
		 DC_VERSION_MINOR, DC_VERSION_PATCH);
	CHECK(strcmp(dc_version(), want) == 0);
	CHECK(strcmp(dc_version(), DC_VERSION_STRING) == 0);
	CHECK_EQ(dc_version_number(), DC_VERSION_NUMBER);
}

/* Reserved space is refused unless zero, so it can be given a meaning. */
static void test_reserved(void)
{
	struct dc_hostfs_options ho = { 0 };
	struct dc_options o = { .mode = DC_MODE_RCU };
	struct dc_backend_ops ops;
	struct dc_backend b;
	struct dc_cache *c = NULL;
	struct dc_stats st;

	CHECK_EQ(dc_hostfs_backend(tmpdir, &o.backend), 0);
	o.reserved[6] = 1;
	CHECK_EQ(dc_cache_create(&o, &c), -EINVAL);	/* and destroys the backend */
	CHECK(c == NULL);

	CHECK_EQ(dc_hostfs_backend(tmpdir, &b), 0);
	ops = *b.ops;
	ops.reserved[0] = (void (*)(void))test_reserved;
	o.reserved[6] = 0;
	o.backend.ops = &ops;
	o.backend.ctx = b.ctx;
	CHECK_EQ(dc_cache_create(&o, &c), -EINVAL);

	ho.reserved[3] = 1;
	CHECK_EQ(dc_hostfs_open(tmpdir, &ho, &b), -EINVAL);
	ho.reserved[3] = 0;
	ho.reserved32 = 1;
	CHECK_EQ(dc_hostfs_open(tmpdir, &ho, &b), -EINVAL);

	c = hostfs_cache(NULL);
	memset(&st, 0xff, sizeof(st));
	dc_get_stats(c, &st);
	for (size_t i = 0; i < sizeof(st.reserved) / sizeof(st.reserved[0]); i++)
		CHECK_EQ(st.reserved[i], 0);
	{
		struct dc_watch_options wo = { .mode = DC_WATCH_TTL };
		struct dc_watch *w = NULL;

		wo.reserved[0] = 1;
		CHECK_EQ(dc_watch_start(c, tmpdir, &wo, &w), -EINVAL);
		CHECK(w == NULL);
	}
	dc_cache_destroy(c);
}

/*
 * A directory made and told of with a cookie hostfs did not make (0, or
 * the inode number, the natural guesses): resolving below it works, and
 * releasing it closes nothing of the caller's.
 */
static void test_hostfs_cookies(void)
{
	struct dc_cache *c = hostfs_cache(NULL);
	struct dc_dentry *root = dc_root(c);
	struct dc_inode in, got;
	char path[512];
	int mine, fds;

	/* a descriptor of the application's, the number a guess would close */
	mine = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(mine >= 0);

	snprintf(path, sizeof(path), "%s/d0", tmpdir);
	CHECK_EQ(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/d0/f", tmpdir);
	CHECK_EQ(close(open(path, O_CREAT | O_WRONLY, 0644)), 0);
	in = host_inode("d0", 0);
	CHECK_EQ(dc_mkdir(c, root, "d0", &in), 0);
	CHECK_EQ(dc_resolve(c, NULL, "d0/f", 0, &got), 0);
	CHECK_EQ(got.ino, host_inode("d0/f", 0).ino);

	snprintf(path, sizeof(path), "%s/d1", tmpdir);
	CHECK_EQ(mkdir(path, 0755), 0);
	in = host_inode("d1", (uint64_t)mine + 1);	/* what "fd + 1" would be */
	CHECK_EQ(dc_mkdir(c, root, "d1", &in), 0);
	CHECK_EQ(dc_resolve(c, NULL, "d1", 0, &got), 0);
	CHECK_EQ(got.ino, in.ino);

	snprintf(path, sizeof(path), "%s/l", tmpdir);
	CHECK_EQ(symlink("d0/f", path), 0);
	in = host_inode("l", 0);
	CHECK_EQ(dc_symlink(c, root, "l", &in, "d0/f"), 0);
	CHECK_EQ(dc_resolve(c, NULL, "l", 0, &got), 0);
	CHECK_EQ(got.ino, host_inode("d0/f", 0).ino);

	/* told of an inode the name no longer is: forgotten, not believed */
	snprintf(path, sizeof(path), "%s/d2", tmpdir);
	CHECK_EQ(mkdir(path, 0755), 0);
	in = host_inode("d2", 0);
	in.ino += 1000000;
	CHECK_EQ(dc_mkdir(c, root, "d2", &in), 0);
	CHECK_EQ(dc_resolve(c, NULL, "d2", 0, &got), 0);
	CHECK_EQ(got.ino, host_inode("d2", 0).ino);
	/* a name already gone again: forgotten, the truth answered */
	in = host_inode("d2", 0);
	CHECK_EQ(rmdir(path), 0);
	CHECK_EQ(dc_mkdir(c, root, "d2", &in), 0);
	CHECK_EQ(dc_resolve(c, NULL, "d2", 0, &got), -ENOENT);

	dc_put(c, root);
	fds = count_fds();
	dc_cache_destroy(c);
	/* the application's descriptor is still open; the cache's are closed */
	CHECK(fcntl(mine, F_GETFD) >= 0);
	CHECK(count_fds() < fds);
	close(mine);
}

/* Many directories under a small budget, and under a low RLIMIT_NOFILE. */
static void test_hostfs_budget(void)
{
	enum { NDIRS = 300, BUDGET = 32 };
	struct dc_hostfs_options ho = { .max_fds = BUDGET };
	struct dc_cache *c;
	struct dc_inode got;
	struct rlimit old, low;
	char path[512];
	int fds, fails = 0, most = 0;

	snprintf(path, sizeof(path), "%s/many", tmpdir);
	CHECK_EQ(mkdir(path, 0755), 0);
	for (int i = 0; i < NDIRS; i++) {
		snprintf(path, sizeof(path), "%s/many/%d", tmpdir, i);
		CHECK_EQ(mkdir(path, 0755), 0);
	}

	fds = count_fds();
	c = hostfs_cache(&ho);
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < NDIRS; i++) {
			snprintf(path, sizeof(path), "many/%d", i);
			if (dc_resolve(c, NULL, path, 0, &got) != 0)
				fails++;
			if (count_fds() - fds > most)
				most = count_fds() - fds;
		}
	}
	CHECK_EQ(fails, 0);
	CHECK(most <= BUDGET + 1);	/* + the root's */
	dc_cache_destroy(c);
	CHECK_EQ(count_fds(), fds);

	/* the default budget: half the soft limit, whatever is open */
	CHECK_EQ(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)fds + 64;
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
	c = hostfs_cache(NULL);
	fails = 0;
	for (int i = 0; i < NDIRS; i++) {
		snprintf(path, sizeof(path), "many/%d", i);
		if (dc_resolve(c, NULL, path, 0, &got) != 0)
			fails++;
	}
	CHECK_EQ(fails, 0);
	/* the program keeps descriptors of its own */
	{
		int fd = open("/dev/null", O_RDONLY);

		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
	}
	dc_cache_destroy(c);
	CHECK_EQ(setrlimit(RLIMIT_NOFILE, &old), 0);
}

/* A held entry keeps answering the inode it named; lookups the truth. */
static void test_held_after_unlink(void)
{
	struct dc_cache *c = hostfs_cache(NULL);
	struct dc_dentry *d = NULL, *root = dc_root(c);
	struct dc_inode a, b;
	char path[512];

	snprintf(path, sizeof(path), "%s/held", tmpdir);
	CHECK_EQ(close(open(path, O_CREAT | O_WRONLY, 0644)), 0);
	CHECK_EQ(dc_walk(c, NULL, "held", 0, &d), 0);
	CHECK_EQ(dc_dentry_stat(d, &a), 0);
	CHECK_EQ(unlink(path), 0);
	CHECK_EQ(dc_unlink(c, root, "held"), 0);
	CHECK_EQ(dc_dentry_stat(d, &b), 0);
	CHECK_EQ(b.ino, a.ino);
	CHECK_EQ(dc_resolve(c, NULL, "held", 0, &b), -ENOENT);
	dc_put(c, d);
	dc_put(c, root);
	dc_cache_destroy(c);
}

static void rm_rf(const char *path)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	if (system(cmd) != 0)
		fprintf(stderr, "test_api: could not remove %s\n", path);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	test_version();
	test_reserved();
	test_hostfs_cookies();
	test_hostfs_budget();
	test_held_after_unlink();
	rm_rf(tmpdir);
	return h_done("test_api");
}
