/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_cred.c - dc_resolve_as: search permission as Linux's may_lookup
 * checks it, in each mode.
 *
 *  - a table of paths and credentials (root, the owner, a member of the
 *    group, a member through a supplementary group, anyone else) over
 *    directories of modes 0700/0750/0705/0711/0000/0755, with symlinks
 *    through unsearchable ones, "." and ".."; each answer written by hand;
 *    run cold (misses: ref-walk) and warm, where in rcu mode the lock-free
 *    walk must answer (no restart, no miss), -EACCES included;
 *  - the order of errors: an unsearchable directory answers -EACCES for a
 *    missing name, and before -ENOTDIR below it; a non-directory gives
 *    -ENOTDIR before any check; the last component needs nothing;
 *  - owners copied out (dc_resolve, dc_dentry_stat);
 *  - chmod and chown pushed with dc_invalidate_inode are seen at once, on
 *    a directory looked up in, on a held base, and on one reached by "..";
 *    with TTLs, after the TTL without any push; the root's with
 *    dc_invalidate_inode of it;
 *  - the arguments refused (-EINVAL), modes no entry can hold refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "dcache-debug.h"
#include "harness.h"

static struct dc_memfs *fs;
static uint64_t ino_pub, ino_priv, ino_grp, ino_oth, ino_none, ino_priv_d;

static const uint32_t supp_groups[] = { 7, 200, 9 };
enum { ROOT, OWNER, GROUP, SUPP, OTHER, NCRED };
static const struct dc_cred creds[NCRED] = {
	[ROOT] = { 0, 0, 0, NULL },
	[OWNER] = { 100, 100, 0, NULL },
	[GROUP] = { 300, 200, 0, NULL },
	[SUPP] = { 300, 300, 3, supp_groups },
	[OTHER] = { 300, 300, 0, NULL },
};
static const char *const cred_names[NCRED] = { "root", "owner", "group", "supp", "other" };

static uint64_t add(uint64_t dir, const char *name, uint32_t mode, const char *t,
		    uint32_t uid, uint32_t gid)
{
	struct dc_inode in;

	if (dc_memfs_add(fs, dir, name, mode, t, &in) ||
	    dc_memfs_chown(fs, in.ino, uid, gid))
		abort();
	return in.ino;
}

/* Every directory owned 100, group 200 (pub and priv: 100:100); each
 * holds f and d/f. */
static uint64_t add_dir(const char *name, uint32_t perm, uint32_t gid)
{
	uint64_t d = add(DC_MEMFS_ROOT, name, S_IFDIR | perm, NULL, 100, gid), sub;

	add(d, "f", S_IFREG | 0600, NULL, 100, gid);
	sub = add(d, "d", S_IFDIR | 0755, NULL, 100, gid);
	add(sub, "f", S_IFREG | 0644, NULL, 100, gid);
	if (!strcmp(name, "priv"))
		ino_priv_d = sub;
	return d;
}

static void build_tree(void)
{
	if (dc_memfs_new(&fs))
		abort();
	ino_pub = add_dir("pub", 0755, 100);
	ino_priv = add_dir("priv", 0700, 100);
	ino_grp = add_dir("grp", 0750, 200);
	ino_oth = add_dir("oth", 0705, 200);
	add_dir("xonly", 0711, 200);
	ino_none = add_dir("none", 0000, 200);
	add(ino_pub, "lpriv", S_IFLNK | 0777, "/priv/f", 0, 0);
	add(ino_pub, "lrel", S_IFLNK | 0777, "../priv/d", 0, 0);
	add(ino_pub, "lnone", S_IFLNK | 0777, "../none", 0, 0);
	add(ino_pub, "ldot", S_IFLNK | 0777, ".", 0, 0);
	add(ino_priv, "lpub", S_IFLNK | 0777, "/pub/f", 0, 0);
}

/* The answers, one per credential: 0 (resolved) or a negative errno. */
struct expect {
	const char *path;
	unsigned flags;
	int want[NCRED];	/* root, owner, group, supp, other */
};

#define EA	(-EACCES)
#define EN	(-ENOENT)
#define ET	(-ENOTDIR)
static const struct expect table[] = {
	{ "/", 0,		{ 0, 0, 0, 0, 0 } },
	{ ".", 0,		{ 0, 0, 0, 0, 0 } },
	{ "pub/f", 0,		{ 0, 0, 0, 0, 0 } },
	{ "priv", 0,		{ 0, 0, 0, 0, 0 } },	/* the last needs nothing */
	{ "priv/", 0,		{ 0, 0, 0, 0, 0 } },
	{ "priv/f", 0,		{ 0, 0, EA, EA, EA } },
	{ "priv/.", 0,		{ 0, 0, EA, EA, EA } },
	{ "priv/..", 0,		{ 0, 0, EA, EA, EA } },
	{ "priv/missing", 0,	{ EN, EN, EA, EA, EA } },
	{ "priv/f/x", 0,	{ ET, ET, EA, EA, EA } },
	{ "priv/d/f", 0,	{ 0, 0, EA, EA, EA } },
	{ "grp/f", 0,		{ 0, 0, 0, 0, EA } },
	{ "grp/d/f", 0,		{ 0, 0, 0, 0, EA } },
	{ "oth/f", 0,		{ 0, 0, EA, EA, 0 } },	/* group bits, not others' */
	{ "xonly/d/f", 0,	{ 0, 0, 0, 0, 0 } },
	{ "none/f", 0,		{ 0, EA, EA, EA, EA } },
	{ "none/missing", 0,	{ EN, EA, EA, EA, EA } },
	{ "none/..", 0,		{ 0, EA, EA, EA, EA } },
	{ "none/../pub", 0,	{ 0, EA, EA, EA, EA } },
	{ "none", 0,		{ 0, 0, 0, 0, 0 } },
	{ "pub/f/x", 0,		{ ET, ET, ET, ET, ET } },	/* ENOTDIR first */
	{ "pub/missing", 0,	{ EN, EN, EN, EN, EN } },
	{ "pub/lpriv", 0,	{ 0, 0, EA, EA, EA } },
	{ "pub/lpriv", DC_NOFOLLOW, { 0, 0, 0, 0, 0 } },
	{ "pub/lrel/f", 0,	{ 0, 0, EA, EA, EA } },
	{ "pub/lrel", DC_NOFOLLOW, { 0, 0, 0, 0, 0 } },
	{ "pub/lnone", 0,	{ 0, 0, 0, 0, 0 } },	/* followed to none only */
	{ "pub/lnone/f", 0,	{ 0, EA, EA, EA, EA } },
	{ "pub/ldot/ldot/f", 0,	{ 0, 0, 0, 0, 0 } },
	{ "priv/lpub", 0,	{ 0, 0, EA, EA, EA } },
};

static void check_table(struct dc_cache *c, const char *mode, bool warm)
{
	struct dc_stats s0, s1;
	struct dc_inode st;

	dc_get_stats(c, &s0);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		for (int k = 0; k < NCRED; k++) {
			int err = dc_resolve_as(c, NULL, table[i].path, table[i].flags,
						&creds[k], &st);

			if (err != table[i].want[k])
				fprintf(stderr, "%s %s: %s%s as %s: %d, want %d\n", mode,
					warm ? "warm" : "cold", table[i].path,
					table[i].flags ? " (nofollow)" : "",
					cred_names[k], err, table[i].want[k]);
			CHECK_EQ(err, table[i].want[k]);
		}
	dc_get_stats(c, &s1);
	if (warm) {
		/* everything was cached: no backend call, and in rcu mode
		 * every answer (EACCES too) came from the lock-free walk */
		CHECK_EQ(s1.misses, s0.misses);
		if (!strcmp(mode, "rcu"))
			CHECK_EQ(s1.restarts, s0.restarts);
	}
}

static struct dc_cache *open_cache(enum dc_mode mode, uint32_t ttl_ms)
{
	struct dc_options o = { .mode = mode, .backend = dc_memfs_backend(fs),
				.ttl_ms = ttl_ms, .neg_ttl_ms = ttl_ms };
	struct dc_cache *c = NULL;

	if (dc_cache_create(&o, &c))
		abort();
	return c;
}

static int as(struct dc_cache *c, struct dc_dentry *base, const char *path, int k)
{
	struct dc_inode st;

	return dc_resolve_as(c, base, path, 0, &creds[k], &st);
}

/* memfs's chmod or chown behind the cache, then the push. */
static void chmod_pushed(struct dc_cache *c, uint64_t ino, uint32_t perm)
{
	CHECK_EQ(dc_memfs_chmod(fs, ino, perm), 0);
	CHECK_EQ(dc_invalidate_inode(c, ino, 0), 0);
}

static void chown_pushed(struct dc_cache *c, uint64_t ino, uint32_t uid, uint32_t gid)
{
	CHECK_EQ(dc_memfs_chown(fs, ino, uid, gid), 0);
	CHECK_EQ(dc_invalidate_inode(c, ino, 0), 0);
}

/* Twice each: the first may be a ref-walk that revalidates, the second is
 * the cached (in rcu mode lock-free) answer. */
#define CHECK_AS(c, base, path, k, want) do {				\
	CHECK_EQ(as(c, base, path, k), want);				\
	CHECK_EQ(as(c, base, path, k), want);				\
} while (0)

static void check_changes(enum dc_mode mode)
{
	struct dc_cache *c = open_cache(mode, 0);
	struct dc_dentry *base = NULL, *sub = NULL;
	struct dc_inode st;
	struct dc_stats s0, s1;

	/* warm (the group reaches f), then chmod a directory looked up in */
	CHECK_AS(c, NULL, "grp/d/f", GROUP, 0);
	CHECK_AS(c, NULL, "grp/d/f", OTHER, -EACCES);
	dc_get_stats(c, &s0);
	chmod_pushed(c, ino_grp, 0755);
	CHECK_AS(c, NULL, "grp/d/f", OTHER, 0);
	dc_get_stats(c, &s1);
	/* grp kept in place (one backend call), d and f still cached */
	CHECK_EQ(s1.misses - s0.misses, 1);
	chmod_pushed(c, ino_grp, 0750);
	CHECK_AS(c, NULL, "grp/d/f", OTHER, -EACCES);
	CHECK_AS(c, NULL, "grp/d/f", GROUP, 0);

	/* chown: the owner's bits go to another user */
	CHECK_AS(c, NULL, "priv/f", OWNER, 0);
	CHECK_AS(c, NULL, "priv/f", OTHER, -EACCES);
	chown_pushed(c, ino_priv, 300, 300);
	CHECK_AS(c, NULL, "priv/f", OTHER, 0);
	CHECK_AS(c, NULL, "priv/f", OWNER, -EACCES);
	CHECK_EQ(dc_resolve(c, NULL, "priv", 0, &st), 0);
	CHECK_EQ(st.uid, 300);
	CHECK_EQ(st.gid, 300);
	chown_pushed(c, ino_priv, 100, 100);

	/* a held base, and a directory reached by "..": checked with the
	 * backend before their bits are used */
	CHECK_EQ(dc_walk(c, NULL, "priv", 0, &base), 0);
	CHECK_EQ(dc_walk(c, NULL, "priv/d", 0, &sub), 0);
	CHECK_AS(c, base, "f", OWNER, 0);
	CHECK_AS(c, sub, "../f", OWNER, 0);
	chmod_pushed(c, ino_priv, 0000);
	CHECK_AS(c, base, "f", OWNER, -EACCES);
	CHECK_AS(c, sub, "../f", OWNER, -EACCES);
	CHECK_AS(c, sub, "f", OWNER, 0);	/* d itself is 0755 */
	CHECK_EQ(dc_dentry_stat(base, &st), 0);
	CHECK_EQ(st.mode, S_IFDIR);
	chmod_pushed(c, ino_priv, 0700);
	CHECK_AS(c, base, "f", OWNER, 0);
	CHECK_AS(c, sub, "../f", GROUP, -EACCES);
	dc_put(c, sub);
	dc_put(c, base);

	/* the root: its change is a new root entry */
	CHECK_AS(c, NULL, "pub/f", OTHER, 0);
	chmod_pushed(c, DC_MEMFS_ROOT, 0700);
	CHECK_AS(c, NULL, "pub/f", OTHER, -EACCES);
	CHECK_AS(c, NULL, ".", OTHER, -EACCES);
	CHECK_AS(c, NULL, "/", OTHER, 0);
	CHECK_AS(c, NULL, "pub/f", ROOT, 0);
	chmod_pushed(c, DC_MEMFS_ROOT, 0755);
	CHECK_AS(c, NULL, "pub/f", OTHER, 0);
	CHECK_EQ(dc_debug_check(c), 0);
	dc_cache_destroy(c);
}


/* With TTLs a change behind the cache shows once the TTL is past, on a
 * directory looked up in and on a held base alike. */
static void check_ttl(enum dc_mode mode)
{
	struct dc_cache *c = open_cache(mode, 30);
	struct dc_dentry *base = NULL;

	CHECK_AS(c, NULL, "oth/f", OTHER, 0);
	CHECK_EQ(dc_walk(c, NULL, "oth", 0, &base), 0);
	CHECK_AS(c, base, "f", OTHER, 0);
	CHECK_EQ(dc_memfs_chmod(fs, ino_oth, 0700), 0);
	h_sleep_ms(80);
	CHECK_AS(c, base, "f", OTHER, -EACCES);
	CHECK_AS(c, NULL, "oth/f", OTHER, -EACCES);
	CHECK_EQ(dc_memfs_chmod(fs, ino_oth, 0705), 0);
	h_sleep_ms(80);
	CHECK_AS(c, NULL, "oth/f", OTHER, 0);
	CHECK_AS(c, base, "f", OTHER, 0);
	dc_put(c, base);
	dc_cache_destroy(c);
}

static void check_args(void)
{
	struct dc_cache *c = open_cache(DC_MODE_RCU, 0);
	struct dc_cred bad = { 1, 1, 2, NULL };
	struct dc_inode st, in = { .ino = 5000, .mode = S_IFREG | 0644 };
	struct dc_dentry *root = dc_root(c);

	CHECK_EQ(dc_resolve_as(c, NULL, "pub", 0, NULL, &st), -EINVAL);
	CHECK_EQ(dc_resolve_as(c, NULL, "pub", 0, &bad, &st), -EINVAL);
	CHECK_EQ(dc_resolve_as(NULL, NULL, "pub", 0, &creds[ROOT], &st), -EINVAL);
	CHECK_EQ(dc_resolve_as(c, NULL, NULL, 0, &creds[ROOT], &st), -EINVAL);
	CHECK_EQ(dc_resolve_as(c, NULL, "pub", 0, &creds[ROOT], NULL), -EINVAL);
	CHECK_EQ(dc_resolve_as(c, NULL, "pub", 4, &creds[ROOT], &st), -EINVAL);
	CHECK_EQ(dc_resolve_as(c, NULL, "", 0, &creds[ROOT], &st), -ENOENT);
	/* owners come out, with dc_resolve and dc_dentry_stat */
	CHECK_EQ(dc_resolve_as(c, NULL, "grp", 0, &creds[OTHER], &st), 0);
	CHECK_EQ(st.uid, 100);
	CHECK_EQ(st.gid, 200);
	CHECK_EQ(st.ino, ino_grp);
	CHECK_EQ(dc_dentry_stat(root, &st), 0);
	CHECK_EQ(st.uid, 0);
	/* a mode no st_mode has */
	in.mode = 0x10000 | S_IFREG | 0644;
	CHECK_EQ(dc_create(c, root, "big", &in), -EINVAL);
	CHECK_EQ(dc_memfs_chmod(fs, ino_pub, 010000), -EINVAL);
	CHECK_EQ(dc_memfs_chmod(fs, 999999, 0755), -ENOENT);
	CHECK_EQ(dc_memfs_chown(fs, 999999, 1, 1), -ENOENT);
	CHECK_EQ(dc_memfs_chown(NULL, ino_pub, 1, 1), -EINVAL);
	dc_put(c, root);
	dc_cache_destroy(c);
}

int main(void)
{
	static const enum dc_mode modes[] = { DC_MODE_RCU, DC_MODE_GLOBAL, DC_MODE_RWLOCK };

	build_tree();
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct dc_cache *c = open_cache(modes[m], 0);
		const char *name = dc_mode_name(modes[m]);

		check_table(c, name, false);
		check_table(c, name, true);
		CHECK_EQ(dc_debug_check(c), 0);
		dc_cache_destroy(c);
		check_changes(modes[m]);
		check_ttl(modes[m]);
	}
	check_args();
	dc_memfs_free(fs);
	CHECK_EQ(dc_debug_live_entries(), 0);
	return h_done("test_cred");
}
