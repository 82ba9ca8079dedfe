/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * internal.h - libdcache's private structures and helpers.
 *
 * Locking rules (see docs/design.md for the full story):
 *
 *  c->wlock (mutex; in rwlock mode the write side of c->rwlock instead)
 *	serializes every change of the namespace the cache holds: hash chain
 *	insert/remove, an entry's parent, name, hash, inode fields, flags
 *	DEAD/PENDING/STALE/REVAL, the inode index, dir_stamp,
 *	deadlines (expires),
 *	c->rename_seq, nr_neg_astray, and the choice of LRU victims -- but
 *	for what a miss does in rcu mode, in the miss side (below).  In
 *	global mode the same mutex is also taken by readers, one component
 *	at a time.  Never held across a backend call.
 *  the miss side (rcu mode: c->mslots, c->wside; lock.c)
 *	a miss's two short sections (miss.c) take, instead of wlock, a count
 *	that keeps every writer out, as wlock would, but not other misses;
 *	a writer raises wside and waits for the counts to drain.  Misses
 *	order among themselves by c->chain_lock (a stripe per hash bucket:
 *	find and insert of a name, and removal from its chain) and
 *	c->index_lock (a stripe per inode-index chain: dc__inodes_add),
 *	which nest inside the miss side, chain before index.  A miss
 *	writes no entry but those it makes: its PENDING one (hashing,
 *	settling or unhashing it), which others only wait on, a negative
 *	one from a complete listing, an unhashed one below a forgotten
 *	directory.  In the other modes a
 *	miss takes the write lock and neither stripe.
 *  c->lru_lock (mutex)
 *	the two LRU lists, each entry's lru_next, LISTED and ONNEG, and
 *	nr_isolated.  Nests inside wlock and the miss side's stripes;
 *	dc_put takes it alone.
 *  c->list_lock (mutex)
 *	complete-directory records (complete.c) and DC_F_HASLIST.  Nests
 *	inside wlock and the miss side; dc__free_now takes it alone.
 *  c->shrink_lock + c->shrink_cv
 *	only to ask the shrinker thread to run (lru.c) and to stop it.
 *	Innermost; never held while the thread shrinks.
 *  c->waitq[] (a mutex and a condvar per slot, by the entry's address)
 *	only to sleep until a PENDING entry is settled or a REVAL one is
 *	checked: a waiter sleeps on its entry's slot, the settler wakes that
 *	slot alone (miss.c, wait_clear).  Innermost.
 *  lock-free (rcu mode readers)
 *	read every field above with relaxed atomic loads (pointers with
 *	acquire) inside rcu_read_lock(), and trust nothing they read until the
 *	entry's seq is re-checked unchanged (see dc__seq_begin/dc__seq_retry);
 *	a one-probe path hit reads no entry at all: every entry write first
 *	unpublishes the entry's path nodes (path.c, dc__entry_write_begin).
 *  d->count
 *	atomic; DC_COUNT_DEAD once the shrinker has claimed the entry, or
 *	while an update changes the unused entry's inode in place.
 * docs/design.md, "Locks and their order", has the whole table.
 */
#ifndef DC_INTERNAL_H
#define DC_INTERNAL_H

#define _LGPL_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#define RCU_MEMBARRIER	/* the memb flavour: see docs/design.md */
#include <urcu.h>

#include "dcache-debug.h"

/*
 * A pause where a race matters: between a lock-free reader's snapshot and
 * its check, inside a writer's odd seq, between the two halves of a
 * Dekker handshake.  Nothing in the library as built.  The Makefile
 * builds it again with DC_RACE_WINDOWS for tests/test_race.c, which
 * defines dc__race_window() to yield the CPU now and then, so that
 * interleavings a machine with few cores rarely shows become common.
 */
#ifdef DC_RACE_WINDOWS
void dc__race_window(void);
#else
#define dc__race_window() ((void)0)
#endif

/* Every byte of p (size bytes) is zero. */
static inline bool dc__zeroed(const void *p, size_t size)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < size; i++)
		if (b[i])
			return false;
	return true;
}

#define DC_API __attribute__((visibility("default")))

#define DC_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* An enum's names (cache.c): the name of value v in a table of n, NULL
 * past its end; the value named name, or -EINVAL (name NULL or unknown). */
const char *dc__enum_name(const char *const *names, size_t n, unsigned v);
int dc__enum_parse(const char *const *names, size_t n, const char *name);

#if defined(__SANITIZE_THREAD__)
#define DC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DC_TSAN 1
#endif
#endif
#ifdef DC_TSAN
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define dc__tsan_acquire(addr)	__tsan_acquire(addr)
#define dc__tsan_release(addr)	__tsan_release(addr)
#else
#define dc__tsan_acquire(addr)	((void)(addr))
#define dc__tsan_release(addr)	((void)(addr))
#endif

/* ---- relaxed/acquire/release accessors -------------------------------- */
#define dc__load(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define dc__load_acq(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define dc__store(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define dc__store_rel(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

/*
 * A name as readers see it: its length travels with its bytes, so a reader
 * that raced a rename can never pair a new pointer with an old length.
 * Published names are never modified; a rename installs another.
 */
struct dc_name {
	uint32_t len;
	char s[];		/* len bytes (an xname adds a NUL) */
};

/* An allocated name (long names, renamed entries, symlink targets). */
struct dc_xname {
	struct rcu_head rcu;
	struct dc_cache *c;	/* whose bytes these are */
	struct dc_name n;	/* must stay last */
};

#define DC_INLINE_NAME	32	/* names up to this many bytes live in the entry */

/*
 * The entry.  128 bytes; with its bucket share (at most 8 bytes) and its
 * inode index share (at most 4), at most 140 per cached name of up to 32
 * bytes.  What the rcu-walk reads comes
 * first, the inline name included, and the fields lookups write (count,
 * by reference takers) come last: a walk should not share a line with
 * other threads' writes (Linux moved d_lockref off that line in 2024).
 *
 * The owner (uid, gid) fits in the 128 bytes by two narrowings that
 * lose nothing: flags are 16 bits (11 are defined, DC_F_LAST below), and
 * mode is 16 bits, which is all an st_mode has (S_IFMT | 07777 is
 * 0xffff; Linux's umode_t and statx's stx_mode are 16 bits), every mode
 * taken in being checked by dc__mode_ok; and a directory's generation,
 * compared across a miss, lives in the cache (dc__dir_changed_since)
 * rather than in the entry.
 */
struct dc_dentry {
	struct dc_dentry *hnext;	/* hash chain; wlock or a miss's chain
					 * stripe, RCU-read */
	struct dc_dentry *parent;	/* holds a count on it; wlock */
	struct dc_name *name;		/* iname or an xname; wlock */
	uint32_t hash;			/* of the name alone; wlock */
	uint32_t seq;			/* odd while being changed */
	uint16_t flags;			/* DC_F_*; atomic */
	uint16_t mode;			/* inode data: wlock + seq; 0: negative */
	uint32_t uid;			/* owner; inode data */
	uint64_t ino;
	_Alignas(4) unsigned char iname[4 + DC_INLINE_NAME];
	uint32_t gid;			/* group; inode data */
	uint64_t cookie;
	uint32_t gen;
	int32_t count;			/* references; atomic */
	uintptr_t aux;			/* symlink: xname target (wlock + seq, RCU-read);
					 * other hashed positives: next in c->inodes
					 * (wlock, or a miss's index stripe) */
	struct dc_dentry *lru_next;	/* lru_lock */
	uint64_t expires;		/* the answer's deadline (dc__now() time), 0:
					 * none; wlock, RCU-read (see dc__expired) */
};
/* memory per entry is a figure the project tracks (docs/design.md) */
_Static_assert(sizeof(struct dc_dentry) <= 128, "struct dc_dentry outgrew 128 bytes");

enum {
	DC_F_DEAD	= 1u << 0,	/* unhashed, never rehashed */
	DC_F_PENDING	= 1u << 1,	/* backend lookup in flight */
	DC_F_STALE	= 1u << 2,	/* an update overtook the pending lookup */
	DC_F_FAILED	= 1u << 3,	/* pending lookup failed; -errno in ino */
	DC_F_REFERENCED	= 1u << 4,	/* LRU second chance */
	DC_F_ONNEG	= 1u << 5,	/* sits on the negative LRU list */
	DC_F_ROOT	= 1u << 6,
	DC_F_LISTED	= 1u << 7,	/* on an LRU list (lru_lock) */
	DC_F_REVAL	= 1u << 8,	/* expired; one thread asks the backend */
	DC_F_SUSPECT	= 1u << 9,	/* directory whose attributes changed: checked
					 * again before use (wlock + seq) */
	DC_F_UNINDEXED	= 1u << 10,	/* positive, hashed, left out of the inode
					 * index (too many names of its inode) */
	DC_F_HASLIST	= 1u << 11,	/* directory with a record in c->lists
					 * (complete.c); set under list_lock */
	DC_F_HASPATH	= 1u << 12,	/* may answer a node in c->ptab (path.c);
					 * set under ptab_lock, cleared under it
					 * and the write lock; read without them
					 * by entry writes and the shrinker */
	DC_F_LAST	= DC_F_HASPATH
};
_Static_assert(DC_F_LAST <= UINT16_MAX, "flags outgrew dc_dentry.flags");

/* A backend op's answer as the cache takes it: 0 or a negative errno, as
 * the contract says; a positive value, which it forbids, is -EIO, never
 * passed on for a caller to take for success. */
static inline int dc__be_err(int err)
{
	return err > 0 ? -EIO : err;
}

/* A mode the entry can hold: a type, and no bit above st_mode's 16. */
static inline bool dc__mode_ok(uint32_t mode)
{
	return (mode & S_IFMT) && mode <= UINT16_MAX;
}

/* The inode data of d (write lock held, or d's seq checked after). */
static inline struct dc_inode dc__inode_of(const struct dc_dentry *d)
{
	return (struct dc_inode){
		.ino = __atomic_load_n(&d->ino, __ATOMIC_RELAXED),
		.cookie = __atomic_load_n(&d->cookie, __ATOMIC_RELAXED),
		.mode = __atomic_load_n(&d->mode, __ATOMIC_RELAXED),
		.gen = __atomic_load_n(&d->gen, __ATOMIC_RELAXED),
		.uid = __atomic_load_n(&d->uid, __ATOMIC_RELAXED),
		.gid = __atomic_load_n(&d->gid, __ATOMIC_RELAXED),
	};
}

#define DC_COUNT_DEAD	(INT32_MIN / 2)

/*
 * Flags are changed by writers (under the write lock) and by lock-free
 * lookups (REFERENCED), so every change is an atomic read-modify-write:
 * a writer's plain store could undo a reader's bit, or the reverse.
 */
static inline uint16_t dc__flags(const struct dc_dentry *d)
{
	return __atomic_load_n(&d->flags, __ATOMIC_RELAXED);
}

static inline void dc__flags_set(struct dc_dentry *d, uint32_t f)
{
	__atomic_or_fetch(&d->flags, (uint16_t)f, __ATOMIC_RELAXED);
}

/* release: what the writer did before clearing (PENDING) is seen by those
 * who see the bit clear with an acquire load */
static inline void dc__flags_clear(struct dc_dentry *d, uint32_t f)
{
	__atomic_and_fetch(&d->flags, (uint16_t)~f, __ATOMIC_RELEASE);
}

struct dc_lru {
	struct dc_dentry *head, *tail;
};

/* Per-thread statistics: written by their thread only, summed on read. */
enum {
	DC_ST_LOOKUPS, DC_ST_HITS, DC_ST_NEG_HITS, DC_ST_MISSES, DC_ST_RESTARTS,
	DC_ST_EVICTIONS, DC_ST_LOCK_WAITS, DC_ST_MISS_WAITS, DC_ST_NEG_MISSES,
	DC_ST_COMPLETE, DC_ST_READDIRS, DC_ST_PATH_HITS, DC_ST_PATH_NEG_HITS,
	DC_ST_NR
};
struct dc_tstat {
	char pad0[64];			/* no other thread's data on v's lines */
	uint64_t v[DC_ST_NR];
	pthread_t owner;
	struct dc_tstat *next;
	char pad1[64];
};

struct dc_slab;

#define DC_INVAL_SLOTS	64
#define DC_WAIT_SLOTS	64	/* sleepers on PENDING / REVAL entries, by address */
#define DC_MISS_SLOTS	16	/* the miss side's counts, by thread (lock.c) */
#define DC_CHAIN_LOCKS	64	/* misses' stripes of the hash buckets */
#define DC_INDEX_LOCKS	16	/* misses' stripes of the inode index */

/* One slot's count of misses inside their sections, on a line of its own:
 * misses write it, writers read them all. */
struct dc_mslot {
	_Alignas(64) uint32_t n;
};
#define DC_DIR_SLOTS	256
#define DC_INDEX_MAX	32	/* names of one non-directory inode indexed */

/*
 * One wait slot: threads waiting for a PENDING or REVAL entry sleep on
 * the slot its address hashes to, so a settle wakes that name's waiters
 * (and any other name's sharing the slot, which look again and sleep
 * on), not every waiter of the cache.  A line (or two) of its own: the
 * slots are taken by unrelated misses at once.
 */
struct dc_waitq {
	_Alignas(64) pthread_mutex_t lock;
	pthread_cond_t cv;
};

/* The name hash's secret key (hash.c). */
struct dc_hkey {
	uint64_t k0, k1;
};

/* One shard's generation of the one-probe table (path.c), on a line of
 * its own: a change bumps its shard's alone, and the probes of the other
 * shards keep theirs in their caches.  The shards are 32 groups of 8: a
 * path's group is its first component's, its place in the group its
 * second's. */
#define DC_PATH_GROUPS	32
#define DC_PATH_SLOTS	8
#define DC_PATH_SHARDS	(DC_PATH_GROUPS * DC_PATH_SLOTS)
struct dc_pgen {
	_Alignas(64) uint64_t v;	/* odd while a change is under way */
};

/*
 * The cache.  Lock-free readers read the first group, and of the rest
 * only the one-probe table's shard generations (pgen, a line each); the
 * counters that misses and updates write start on a line of their own.
 */
struct dc_cache {
	enum dc_mode mode;
	uint64_t id;			/* tells caches apart in thread-local slots */
	struct dc_backend be;
	struct dc_dentry **buckets;	/* RCU-read, wlock-written */
	uint64_t nbuckets;
	unsigned shift;			/* 64 - log2(nbuckets) */
	struct dc_dentry *root;		/* RCU-read (acquire); wlock-written
					 * (dc_invalidate of the root swaps it) */
	uint32_t rename_seq;		/* odd while an entry moves between chains */
	uint32_t ttl_on;		/* either TTL non-zero; atomic (dc_set_ttl) */
	uint32_t ttl_clock;		/* 1: CLOCK_MONOTONIC, 0: its coarse twin */
	uint64_t ttl_pos, ttl_neg;	/* deadline - stamp in ns, 0: never
					 * expire; atomic, written under wlock */
	struct dc_hkey hkey;		/* keys the name hash; random per cache */
	/* the one-probe table (path.c), as a probe reads it: set at
	 * creation, but pfull, flipped rarely under ptab_lock (set by an add
	 * that fills the table, cleared by an unpublish a sixteenth below) */
	struct dc_pnode **ptab;		/* RCU-read; ptab_lock */
	unsigned pbits;
	uint32_t pfull;			/* 1: the table holds pmax nodes, or
					 * nearly (path.c); atomic */
	uint64_t pt0;			/* dc__now() when the table began: nodes'
					 * deadlines count from it (path.c) */
	uint64_t pmax;			/* nodes at most: four a head, within the cap */
	/* a test's hook, called before a walk offers a node (walk.c) */
	void (*dbg_padd)(void *);
	void *dbg_padd_arg;

	_Alignas(64) pthread_mutex_t wlock;
	uint32_t wside;			/* rcu mode: open to misses, or shut by
					 * a writer, with misses asleep on it
					 * or not (lock.c); atomic */
	/* a test's hook, called inside every miss's first section */
	void (*dbg_miss)(void *);
	void *dbg_miss_arg;
	struct dc_dentry **inodes;	/* hashed positives but symlinks, by
					 * (ino, gen); wlock, or a miss's index
					 * stripe to add (heads atomic: read
					 * unlocked to prefetch) */
	unsigned inodes_shift;
	uint64_t forgot_all;		/* times everything was forgotten
					 * (swap_root, forget_all): wlock;
					 * atomic, read unlocked by updates */
	bool dir_aliases;		/* a directory has been cached under two
					 * live entries (a bind mount in the
					 * tree): set once, by dc__inodes_add
					 * (wlock, or a miss's index stripe);
					 * read by writers; atomic */
	/* inode invalidations (wlock): a count, and per slot of (ino, gen)
	 * the count when one last hit it, so that a miss in flight across
	 * one is not cached (lookup_slow); and per slot, the names left out
	 * of the index (UNINDEXED), which make dc_invalidate_inode forget
	 * all rather than miss them */
	uint64_t inval_seq;
	uint64_t inval_stamp[DC_INVAL_SLOTS];
	uint32_t unindexed[DC_INVAL_SLOTS];
	/* names changed in a directory (wlock): per slot of the directory's
	 * entry, the inval_seq when names in one last changed, so that a
	 * miss in flight there across the change is not cached (a 64-bit
	 * count never wraps; two directories sharing a slot only leave an
	 * answer uncached) */
	uint64_t dir_stamp[DC_DIR_SLOTS];
	pthread_rwlock_t rwlock;

	pthread_mutex_t lru_lock;
	struct dc_lru lru_pos, lru_neg;
	uint64_t nr_entries;		/* allocated, not yet evicted; atomic */
	uint64_t nr_negative;		/* of which negative; atomic */
	uint64_t nr_neg_astray;		/* negative, on lru_pos; wlock (misses
					 * never change it: a PENDING entry is
					 * on lru_neg, and not negative) */
	uint64_t nr_isolated;		/* held, so taken off the lists; lru_lock */
	uint64_t max_entries, max_negative;
	uint64_t nr_freeing;		/* evicted, waiting for a grace period */
	uint64_t nr_freed_now;		/* dc__free_some calls that freed (atomic) */

	/* the shrinker thread (lru.c): shrink_lock guards shrink_wanted (also
	 * read without it, as a hint) and shrink_stop; shrink_cv wakes it.
	 * Innermost: taken with no other lock held. */
	pthread_t shrinker;
	pthread_mutex_t shrink_lock;
	pthread_cond_t shrink_cv;
	bool shrink_wanted;		/* an adder found the cache over a cap */
	bool shrink_stop;		/* dc_cache_destroy: exit */

	pthread_mutex_t stat_lock;
	struct dc_tstat *tstats;	/* every thread's counters */
	struct dc_tstat spill;		/* atomically updated when no slot */
	uint64_t bytes;			/* bytes allocated for this cache; atomic */

	struct dc_slab *slab;

	/* complete directories (complete.c): a record per directory with
	 * negative misses or a listing; list_lock, which nests inside wlock
	 * and is taken alone when an entry is freed */
	/* one-probe paths (path.c): a table from whole paths to answers
	 * (ptab, above with what else a probe reads), RCU-read; ptab_lock
	 * (nests inside wlock) for every change of it, of the index by
	 * answer, pleaf, and of the batch of unpublished nodes, pdead;
	 * per-shard generations, atomic */
	pthread_mutex_t ptab_lock;
	struct dc_pnode **pleaf;
	unsigned pall;			/* changes of all shards under way; wlock */
	uint64_t nr_pnodes;		/* atomic; changed under ptab_lock */
	struct dc_pnode *pdead;		/* unpublished nodes waiting to go to
					 * call_rcu as one batch; ptab_lock */
	uint64_t nr_pdead, pdead_max;	/* how many wait; a batch's size */
	struct dc_pgen pgen[DC_PATH_SHARDS];	/* 64 bits: never wraps to a
						 * node's */
	pthread_mutex_t list_lock;
	struct dc_list **lists;		/* DC_LIST_BUCKETS chains */
	uint32_t nr_lists;
	uint32_t list_hand;		/* next bucket to evict from */
	uint32_t complete_after, complete_max;	/* DC_COMPLETE_OFF: off */

	struct dc_waitq waitq[DC_WAIT_SLOTS];	/* see wait_clear (miss.c) */

	/* the miss side of the write lock (lock.c): a count of misses in
	 * their sections per slot of threads, a line each */
	struct dc_mslot mslots[DC_MISS_SLOTS];
	pthread_mutex_t chain_lock[DC_CHAIN_LOCKS];
	pthread_mutex_t index_lock[DC_INDEX_LOCKS];
};

/* ---- alloc.c ---------------------------------------------------------- */
void *dc__malloc(struct dc_cache *c, size_t size);
void *dc__calloc(struct dc_cache *c, size_t size);
void *dc__calloc_aligned(size_t size);	/* 64-byte aligned, uncounted per cache */
void dc__free(struct dc_cache *c, void *p, size_t size);
int dc__slab_new(struct dc_slab **out, size_t objsize);
void *dc__slab_alloc(struct dc_cache *c);
void dc__slab_free(struct dc_cache *c, void *obj);
void dc__slab_destroy(struct dc_cache *c);

/* ---- lock.c ----------------------------------------------------------- */
void dc__thread_register(void);

/* Every public call: make sure the thread is an RCU reader (it may have
 * registered itself; then it is left alone). */
static inline void dc__thread_enter(void)
{
	if (__builtin_expect(!URCU_TLS(urcu_memb_reader).registered, 0))
		dc__thread_register();
}
void dc__read_lock(struct dc_cache *c);
void dc__read_unlock(struct dc_cache *c);
void dc__write_lock(struct dc_cache *c);
void dc__write_unlock(struct dc_cache *c);
void dc__miss_begin(struct dc_cache *c);
void dc__miss_end(struct dc_cache *c);
void dc__chain_lock(struct dc_cache *c, uint32_t hash);
void dc__chain_unlock(struct dc_cache *c, uint32_t hash);
void dc__stat_add_slow(struct dc_cache *c, int which, uint64_t n);
void dc__stat_sum(struct dc_cache *c, uint64_t out[DC_ST_NR]);
void dc__stat_free(struct dc_cache *c);

/* This thread's counters for the cache it used last (see lock.c). */
struct dc_tslot {
	uint64_t id;
	struct dc_tstat *st;
};
extern __thread struct dc_tslot dc__tslot;

static inline void dc__stat_add(struct dc_cache *c, int which, uint64_t n)
{
	struct dc_tstat *t = dc__tslot.st;

	if (__builtin_expect(dc__tslot.id != c->id, 0)) {
		dc__stat_add_slow(c, which, n);
		return;
	}
	/* only this thread writes it; relaxed so dc_get_stats may read it */
	dc__store(t->v[which], dc__load(t->v[which]) + n);
}

static inline void dc__stat_inc(struct dc_cache *c, int which)
{
	dc__stat_add(c, which, 1);
}

/*
 * Sequence counts.  A writer (holding wlock, or a miss settling its own
 * entry under the entry's chain stripe) makes seq odd, changes the
 * fields, makes it even; a reader snapshots an even seq, reads, and
 * re-checks.  Fields are relaxed atomics, so the fences carry the order.
 */
static inline uint32_t dc__seq_begin(const uint32_t *seq)
{
	/* acquire: the field reads that follow cannot move above this load */
	uint32_t v = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

	dc__race_window();
	return v;
}

static inline bool dc__seq_retry(const uint32_t *seq, uint32_t start)
{
	dc__race_window();
	/* acquire fence: the field reads before it complete before the re-read */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (start & 1) || __atomic_load_n(seq, __ATOMIC_RELAXED) != start;
}

static inline void dc__seq_write_begin(uint32_t *seq)
{
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELAXED);
	/* release fence: the odd count is visible before any field store */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dc__race_window();
}

static inline void dc__seq_write_end(uint32_t *seq)
{
	dc__race_window();
	/* release: every field store is visible before the even count */
	__atomic_store_n(seq, *seq + 1, __ATOMIC_RELEASE);
}

#ifdef DC_TSAN
/* One address for the readers' releases and the reclaimers' acquires. */
extern char dc__rcu_token;
#endif

static inline void dc__rcu_lock(void)
{
	rcu_read_lock();
}

static inline void dc__rcu_unlock(void)
{
#ifdef DC_TSAN
	/* Pairs with the acquire in the RCU free callbacks: everything this
	 * read section did happens before the memory is reused. */
	__tsan_release(&dc__rcu_token);
#endif
	rcu_read_unlock();
}

/*
 * Deferred frees.  ThreadSanitizer sees neither liburcu's grace periods
 * nor its callback queue, so we tell it: queuing a callback releases on
 * its head, and the callback acquires the head and the readers' token.
 * Without TSan these are plain call_rcu and nothing.
 */
static inline void dc__call_rcu(struct rcu_head *head,
				void (*fn)(struct rcu_head *))
{
#ifdef DC_TSAN
	__tsan_release(head);
#endif
	call_rcu(head, fn);
}

static inline void dc__rcu_after_grace(struct rcu_head *head)
{
#ifdef DC_TSAN
	if (head)
		__tsan_acquire(head);
	__tsan_acquire(&dc__rcu_token);
#else
	(void)head;
#endif
}

/* dir's slot in c->dir_stamp (DC_DIR_SLOTS: 2^8) */
static inline unsigned dc__dir_slot(const struct dc_dentry *dir)
{
	return (unsigned)(((uintptr_t)dir * 0x9e3779b97f4a7c15ull) >> 56);
}

/* Did names in directory dir change since c->inval_seq was since?  wlock or
 * its miss side. */
static inline bool dc__dir_changed_since(const struct dc_cache *c,
					 const struct dc_dentry *dir, uint64_t since)
{
	return c->inval_seq != since && c->dir_stamp[dc__dir_slot(dir)] > since;
}

/* ---- hash.c -------------------------------------------------------------
 * The per-component pieces of the lookup are inline here: the rcu-walk
 * calls them once per component, and a call each costs more than their
 * bodies on a cached lookup.  See hash.c for the table's rules.
 */
uint64_t dc__hash_key(const struct dc_cache *c, const char *s, size_t len);
uint32_t dc__hash_name(const struct dc_cache *c, const struct dc_dentry *dir,
		       const char *s, size_t len);
int dc__hash_init(struct dc_cache *c, uint64_t max_entries);
struct dc_dentry *dc__find_locked(struct dc_cache *c, struct dc_dentry *dir,
				  const char *s, size_t len, uint32_t hash);
void dc__hash_insert(struct dc_cache *c, struct dc_dentry *d);
void dc__hash_remove(struct dc_cache *c, struct dc_dentry *d);
/* The inode index holds every hashed positive entry but symlinks (whose
 * aux is their text); it is linked through aux. */
static inline bool dc__indexed(uint32_t mode)
{
	return mode && !S_ISLNK(mode);
}
void dc__prefetch_chain(struct dc_cache *c, uint32_t hash);
void dc__prefetch_inode(struct dc_cache *c, uint64_t ino, uint32_t gen);
void dc__inodes_add(struct dc_cache *c, struct dc_dentry *d);
void dc__inodes_del(struct dc_cache *c, struct dc_dentry *d);
struct dc_dentry *dc__inodes_first(struct dc_cache *c, uint64_t ino, uint32_t gen);
size_t dc__inodes_size(const struct dc_cache *c);
unsigned dc__inval_slot(uint64_t ino, uint32_t gen);
/* Was inode (ino, gen) invalidated since c->inval_seq was since?  wlock or
 * its miss side. */
static inline bool dc__inode_changed_since(const struct dc_cache *c, uint64_t ino,
					   uint32_t gen, uint64_t since)
{
	return c->inval_seq != since &&
	       c->inval_stamp[dc__inval_slot(ino, gen)] > since;
}

#define DC_ONES	0x0101010101010101ull
#define DC_HIGHS	0x8080808080808080ull
#define DC_SLASHES	0x2f2f2f2f2f2f2f2full	/* '/' in every byte */

/* Bytes before the first '/' in w (8 when none): a zero byte of w ^ '/'s.
 * The borrow trick can mark bytes above a true zero, never below one. */
static inline unsigned dc__slash_at(uint64_t w)
{
	uint64_t x = w ^ DC_SLASHES;
	uint64_t z = (x - DC_ONES) & ~x & DC_HIGHS;

	return z ? (unsigned)__builtin_ctzll(z) / 8 : 8;
}

/*
 * The 128-bit product of a and b, its halves folded together.  With one
 * operand secret, how the output changes with the other cannot be known
 * without the secret: no input difference leads to a known output
 * difference, as flipping the top bit does through a 64-bit multiply
 * (which let names be made to collide under every key).
 */
static inline uint64_t dc__mum(uint64_t a, uint64_t b)
{
	unsigned __int128 r = (unsigned __int128)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

/* One word into the state: both factors depend on the key. */
static inline uint64_t dc__mix(const struct dc_hkey *k, uint64_t h, uint64_t w)
{
	return dc__mum(w ^ k->k1, h ^ k->k0);
}

/* The n < 8 bytes at p as a little-endian word, zero above them: three
 * fixed-size loads, where a memcpy of n bytes would be a call. */
static inline uint64_t dc__load_tail(const char *p, size_t n)
{
	uint64_t w = 0;
	uint32_t x4;
	uint16_t x2;
	unsigned at = 0;

	if (n & 4) {
		memcpy(&x4, p, 4);
		w = x4;
		at = 4;
	}
	if (n & 2) {
		memcpy(&x2, p + at, 2);
		w |= (uint64_t)x2 << (8 * at);
		at += 2;
	}
	if (n & 1)
		w |= (uint64_t)(unsigned char)p[at] << (8 * at);
	return w;
}

/* The state after the last word, with the length, into the key. */
static inline uint64_t dc__hash_finish(const struct dc_hkey *k, uint64_t h,
				       size_t len)
{
	return dc__mum(h ^ (uint64_t)len, k->k1 ^ 0x9e3779b97f4a7c15ull);
}

/*
 * Length and keyed hash of the component at s, in one pass, eight bytes at
 * a time (little-endian loads; the final partial word is copied, never read
 * past end, so ASan and the page after the string have nothing to say).
 * Keyed with the cache's random key, so which names collide differs in
 * every cache and cannot be computed without the key.  *key is not yet
 * tied to a directory: dc__hash_salt makes it the stored hash.
 */
static inline size_t dc__hash_component(const char *s, const char *end,
					const struct dc_hkey *k, uint64_t *key)
{
	const char *p = s;
	uint64_t h = k->k1, w;
	unsigned n;

	for (;;) {
		size_t left = (size_t)(end - p);

		if (left >= 8)
			memcpy(&w, p, 8);
		else
			w = dc__load_tail(p, left);
		n = dc__slash_at(w);
		if (n > left)
			n = (unsigned)left;
		if (n < 8) {
			/* keep the n name bytes only */
			if (n)
				h = dc__mix(k, h, w & (~0ull >> (64 - 8 * n)));
			p += n;
			break;
		}
		h = dc__mix(k, h, w);
		p += 8;
	}
	*key = dc__hash_finish(k, h, (size_t)(p - s));
	return (size_t)(p - s);
}

/* The keyed hash of len bytes that may hold anything ('/' included): the
 * same mixer, for the library's other tables (whole paths, memfs's names,
 * a watcher's file handles).  For a name of under 32 bytes without '/',
 * dc__hash_component's key; longer inputs are taken 32 bytes a step. */
uint64_t dc__hash_bytes(const struct dc_hkey *k, const void *p, size_t len);

/*
 * The hash an entry stores and lookups match: the name's key salted with
 * the directory it is in, as Linux salts hash_name with the parent, so
 * names that share a hash in one directory do not in another.
 */
static inline uint32_t dc__hash_salt(uint64_t key, const struct dc_dentry *dir)
{
	return (uint32_t)dc__mum(key ^ (uintptr_t)dir, 0xd6e8feb86659fd93ull);
}

/* The bucket of a salted hash in a table of 2^(64 - shift) heads. */
static inline size_t dc__bucket_index(uint32_t hash, unsigned shift)
{
	uint64_t k = (uint64_t)hash << 32 | hash;

	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> shift);
}

static inline struct dc_dentry **dc__bucket(struct dc_cache *c, uint32_t hash)
{
	return &c->buckets[dc__bucket_index(hash, c->shift)];
}

static inline bool dc__name_eq(const struct dc_name *n, const char *s, size_t len)
{
	return n->len == len && memcmp(n->s, s, len) == 0;
}

/*
 * Find a settled, hashed entry for (dir, name) without any lock.  Returns it
 * with its sequence snapshot in *seqp, taken before any of the fields it
 * matched were read: the match is proven only when the caller's later
 * dc__seq_retry(&d->seq, *seqp) succeeds (an odd snapshot always fails it),
 * as in Linux's __d_lookup_rcu.  NULL when there is none; a NULL may be a
 * rename's doing (the entry moved chains), so the caller falls back to a
 * slower path and never answers ENOENT from it.  hash is the name's hash
 * salted with dir (dc__hash_salt).  next_key, when not NULL, is the key of
 * the component the caller will look up in the entry found (see the
 * prefetch below).  Caller holds rcu_read_lock.
 */
static inline struct dc_dentry *dc__find_rcu(struct dc_cache *c,
					     struct dc_dentry *dir,
					     const char *s, size_t len,
					     uint32_t hash, uint32_t *seqp,
					     const uint64_t *next_key)
{
	/* fixed at creation (the table never resizes): read them once, not
	 * again after every acquire below */
	struct dc_dentry **const tab = c->buckets;
	const unsigned shift = c->shift;
	struct dc_dentry *d;
	uint32_t seq;

	/* acquire on each link: the entry's fields were written before the
	 * release store that published it (dc__hash_insert) */
	for (d = dc__load_acq(tab[dc__bucket_index(hash, shift)]); d;
	     d = dc__load_acq(d->hnext)) {
		/*
		 * The next component's bucket depends only on its key and d's
		 * address, so start fetching it now, while d's own line is still on its
		 * way: two misses in parallel instead of one after the other.
		 * A prefetch reads nothing we rely on; if d is not the match
		 * (or stale), the fetch is wasted, never wrong.
		 */
		if (next_key)
			__builtin_prefetch(&tab[dc__bucket_index(
				dc__hash_salt(*next_key, d), shift)]);
		/* acquire: the field reads below stay after the snapshot */
		seq = dc__seq_begin(&d->seq);
		if (dc__load(d->hash) != hash || dc__load(d->parent) != dir)
			continue;
		/* SUSPECT: checked again first, on the locked path */
		if (dc__flags(d) & (DC_F_DEAD | DC_F_PENDING | DC_F_SUSPECT))
			continue;
		if (!dc__name_eq(dc__load_acq(d->name), s, len))
			continue;
		*seqp = seq;
		return d;
	}
	return NULL;
}

/* ---- dentry.c --------------------------------------------------------- */
struct dc_dentry *dc__prepare(struct dc_cache *c, const char *name, size_t len);
void dc__unprepare(struct dc_cache *c, struct dc_dentry *d);
struct dc_dentry *dc__alloc_prepared(struct dc_cache *c, struct dc_dentry *d,
				     struct dc_dentry *parent, uint32_t hash,
				     uint32_t flags, const struct dc_inode *in,
				     struct dc_xname *target);
struct dc_dentry *dc__alloc(struct dc_cache *c, struct dc_dentry *parent,
			    const char *name, size_t len, uint32_t hash,
			    uint32_t flags, const struct dc_inode *in,
			    struct dc_xname *target);
struct dc_xname *dc__xname_new(struct dc_cache *c, const char *s, size_t len);
void dc__xname_free_rcu(struct dc_cache *c, struct dc_xname *x);
bool dc__get_not_dead(struct dc_dentry *d);

void dc__unhash(struct dc_cache *c, struct dc_dentry *d);
void dc__set_inode(struct dc_cache *c, struct dc_dentry *d,
		   const struct dc_inode *ino, struct dc_xname *target);
bool dc__replace_inode(struct dc_cache *c, struct dc_dentry *d,
		       const struct dc_inode *in, struct dc_xname *target,
		       struct dc_inode *old_in);
void dc__free_now(struct dc_cache *c, struct dc_dentry *d);
void dc__free_batch(struct dc_cache *c, struct dc_dentry *list, uint64_t n);
void dc__free_list_now(struct dc_cache *c, struct dc_dentry *list);
void dc__bump_dirgen(struct dc_cache *c, struct dc_dentry *dir);
void dc__aliases_name_changed(struct dc_cache *c, struct dc_dentry *dir,
			      uint64_t key);
bool dc__orphaned(const struct dc_dentry *d);
static inline bool dc__is_dir(uint32_t mode) { return S_ISDIR(mode); }
static inline bool dc__is_lnk(uint32_t mode) { return S_ISLNK(mode); }
static inline struct dc_xname *dc__xname_of(struct dc_name *n)
{
	return (struct dc_xname *)((char *)n - offsetof(struct dc_xname, n));
}
static inline size_t dc__xname_size(size_t len)
{
	return sizeof(struct dc_xname) + len + 1;
}

/* ---- expiry (see "Expiry" in docs/design.md) ------------------------------ */

/* Now, in ns of the cache's TTL clock (CLOCK_MONOTONIC_COARSE unless a
 * TTL is too short for it: see set_ttl): a vDSO read, no system call. */
uint64_t dc__now(const struct dc_cache *c);

/* Stamp d's answer with its deadline, from the cache's TTL for its kind
 * (0: none).  Write lock held (or a miss's, for its own entry); a relaxed
 * store, as readers load it. */
static inline void dc__stamp(struct dc_cache *c, struct dc_dentry *d)
{
	uint64_t ttl = dc__load(d->mode) ? dc__load(c->ttl_pos) : dc__load(c->ttl_neg);

	dc__store(d->expires, ttl ? dc__now(c) + ttl : 0);
}

/* The same for an answer the backend gave when asked at asked (dc__now
 * time, read before asking; 0: now): its age counts from the asking, as
 * the backend may have read the state then, just before a change. */
static inline void dc__stamp_asked(struct dc_cache *c, struct dc_dentry *d,
				   uint64_t asked)
{
	uint64_t ttl = dc__load(d->mode) ? dc__load(c->ttl_pos) : dc__load(c->ttl_neg);

	dc__store(d->expires, ttl ? (asked ? asked : dc__now(c)) + ttl : 0);
}

/* Is d's answer past its deadline at now (0: the caller reads no clock,
 * TTLs being off)?  Lock-free readers may race a revalidation that moves
 * the deadline later: either value read is one the answer had, and an
 * older, earlier one only sends them to the locked path. */
static inline bool dc__expired(const struct dc_dentry *d, uint64_t now)
{
	uint64_t e;

	/* TTLs off: no load of expires, which lies past the walk's lines */
	if (!now)
		return false;
	e = dc__load(d->expires);
	return e && e <= now;
}

/* The clock for one walk: read once, and only when TTLs are on. */
static inline uint64_t dc__walk_clock(const struct dc_cache *c)
{
	return dc__load(c->ttl_on) ? dc__now(c) : 0;
}

/* ---- miss.c ----------------------------------------------------------- */
/* The ref-walk's slow path for name in dir (hash: salted with dir): a
 * reference to its entry, asked of the backend at most once at a time
 * (orphan: below a forgotten directory, nothing cached), or an errno. */
int dc__lookup_slow(struct dc_cache *c, struct dc_dentry *dir,
		    const char *name, size_t len, uint32_t hash, bool orphan,
		    struct dc_dentry **out);
/* d in dir is suspect or past its TTL: check it with the backend.  Write
 * lock held, dropped.  1: d holds, referenced; 0: look again. */
int dc__revalidate(struct dc_cache *c, struct dc_dentry *dir, struct dc_dentry *d);
/* A symlink's text into buf (DC_PATH_MAX bytes): its length or an errno. */
int dc__read_target(struct dc_cache *c, const struct dc_inode *link, char *buf);

/* ---- lru.c ------------------------------------------------------------ */
void dc__lru_add(struct dc_cache *c, struct dc_dentry *d);
void dc__lru_relist(struct dc_cache *c, struct dc_dentry *d);
void dc__lru_adopt(struct dc_cache *c, struct dc_dentry *d);

/* A settled negative entry. */
static inline bool dc__is_negative(const struct dc_dentry *d)
{
	return d->mode == 0 && !(dc__flags(d) & (DC_F_PENDING | DC_F_FAILED));
}

/* A negative entry on the positive list, which the negative cap's pass
 * looks for there (lru.c).  Write lock held. */
static inline bool dc__astray(const struct dc_dentry *d)
{
	return dc__is_negative(d) &&
	       (dc__flags(d) & (DC_F_LISTED | DC_F_ONNEG)) == DC_F_LISTED;
}
/* Mark d used since the shrinker last looked (its second chance).  Inline:
 * the rcu-walk calls it once per component. */
static inline void dc__lru_touch(struct dc_dentry *d)
{
	/* test first: a hot entry's line stays shared between CPUs */
	if (!(dc__flags(d) & DC_F_REFERENCED))
		dc__flags_set(d, DC_F_REFERENCED);
}
void dc__maybe_shrink(struct dc_cache *c);
int dc__shrinker_start(struct dc_cache *c);
void dc__shrinker_stop(struct dc_cache *c);
long dc__shrink(struct dc_cache *c, uint64_t target, uint64_t neg_target);
long dc__shrink_now(struct dc_cache *c, uint64_t target);
#define DC_FREE_SOME_MAX	(1u << 16)
bool dc__free_some(struct dc_cache *c, uint64_t seen);
void dc__lru_free_all(struct dc_cache *c);

/* ---- path.c ----------------------------------------------------------- */
struct dc_pnode;
int dc__paths_init(struct dc_cache *c);
void dc__paths_free(struct dc_cache *c);
void dc__paths_release(struct dc_cache *c);
/* A set of shards a change moves: n of them from first (one, a group, or
 * all); two sets either nest or are disjoint. */
#define DC_PATH_SET(first, n)	((uint32_t)(first) | (uint32_t)(n) << 16)
#define DC_PATH_ALL		DC_PATH_SET(0, DC_PATH_SHARDS)
uint32_t dc__path_shards(const struct dc_cache *c, const struct dc_dentry *d);
/* Sets a and b as one change moves them: each shard once, so where they
 * overlap both become the wider. */
static inline void dc__path_sets_join(uint32_t *a, uint32_t *b)
{
	uint32_t af = *a & 0xffff, an = *a >> 16, bf = *b & 0xffff, bn = *b >> 16;

	if (af < bf + bn && bf < af + an)
		*a = *b = an >= bn ? *a : *b;
}
void dc__path_change_begin(struct dc_cache *c, uint32_t set);
void dc__path_change_end(struct dc_cache *c, uint32_t set);
void dc__path_forget_leaf(struct dc_cache *c, struct dc_dentry *d);
void dc__entry_write_begin(struct dc_cache *c, struct dc_dentry *d);
/* The end of dc__entry_write_begin's seq write. */
static inline void dc__entry_write_end(struct dc_dentry *d)
{
	dc__seq_write_end(&d->seq);
}
int dc__path_lookup(struct dc_cache *c, const char *path, size_t len,
		    bool checked, uint64_t now, struct dc_inode *st);
void dc__path_add(struct dc_cache *c, const char *path, size_t len,
		  struct dc_dentry *d, uint32_t seq, const struct dc_inode *in,
		  int32_t shard, uint64_t gen, bool allx, uint64_t until);
uint64_t dc__path_gen(const struct dc_cache *c, const char *path, size_t len,
		      int32_t *shard);

/*
 * A probe that finds no node costs a resolve a hash and its misses in
 * the table for nothing, and a full table learns no new path: so a
 * thread whose last DC_PACE_WINDOW probes found nodes less than half the
 * time, the table being full (a cold cache's paths, most resolved once),
 * leaves the table alone (no probe, no add) for its next DC_PACE_SKIP
 * resolves, then counts again.  Per thread, for the cache it counted in
 * last (path.c counts the probes, and only while the table is full
 * (pfull), so that a hit in a table with room pays for one test of a
 * flag that rarely changes).
 */
#define DC_PACE_WINDOW	32
#define DC_PACE_SKIP	992
struct dc_pace {
	uint64_t id;			/* the cache's (dc_cache.id) */
	uint32_t probes, hits, skip;
};
extern __thread struct dc_pace dc__pace;

/* Leave the one-probe table alone for this resolve?  (A skip counted
 * in another cache is forgotten.) */
static inline bool dc__path_skip(const struct dc_cache *c)
{
	if (__builtin_expect(!dc__pace.skip, 1))
		return false;
	if (dc__pace.id != c->id) {
		dc__pace = (struct dc_pace){ .id = c->id };
		return false;
	}
	dc__pace.skip--;
	return true;
}

/* ---- complete.c ------------------------------------------------------- */
struct dc_list;
int dc__lists_init(struct dc_cache *c);
void dc__lists_free(struct dc_cache *c);
bool dc__listed_absent(struct dc_cache *c, struct dc_dentry *dir,
		       const char *name, size_t len, uint64_t *asked);
bool dc__note_negative(struct dc_cache *c, struct dc_dentry *dir);
void dc__note_found(struct dc_cache *c, struct dc_dentry *dir,
		    const char *name, size_t len);
void dc__list_dir(struct dc_cache *c, struct dc_dentry *dir);
bool dc__list_new(struct dc_cache *c, struct dc_dentry *dir);
void dc__list_forget(struct dc_cache *c, struct dc_dentry *d);
void dc__dir_name_changed(struct dc_cache *c, struct dc_dentry *dir, uint64_t key);
void dc__dir_changed(struct dc_cache *c, struct dc_dentry *dir);

/* ---- update.c -------------------------------------------------------- */
/* dc_invalidate_child, telling in *old (when not NULL) the inode the
 * cache held for the name (ino, gen, mode; all 0 when none or negative;
 * the cookie is never given: the entry is forgotten). */
int dc__invalidate_child(struct dc_cache *c, uint64_t dir_ino, uint32_t dir_gen,
			 const char *name, size_t len, struct dc_inode *old);

/* ---- names (dentry.c) ---------------------------------------------------
 * The one validator of a component: not NULL, not empty, no '/' or NUL,
 * not "." or "..", at most DC_NAME_MAX bytes.  0, -EINVAL or -ENAMETOOLONG.
 */
/* A NUL-terminated name; its length goes to *lenp (only on success). */
int dc__check_name(const char *name, size_t *lenp);
/* A name of len bytes.  -EINVAL for a bad byte even when it is too long. */
int dc__check_name_len(const char *name, size_t len);

/* The same rules in the backends' order (hostfs, memfs): a name too long
 * is -ENAMETOOLONG whatever bytes it holds. */
static inline int dc__check_name_long_first(const char *name, size_t len)
{
	if (name && len > DC_NAME_MAX)
		return -ENAMETOOLONG;
	return dc__check_name_len(name, len);
}

/* ---- hostfs.c (for watch.c) ------------------------------------------ */
/* Attach watcher w to backend be when it is hostfs, whose lookups then give
 * it every directory they return (dc_watch_dir); NULL detaches, waiting for
 * lookups inside dc_watch_dir.  -EINVAL: not hostfs; -EBUSY: watched. */
int dc__hostfs_watch(const struct dc_backend *be, struct dc_watch *w);

#endif /* DC_INTERNAL_H */
