/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * path.c - one-probe paths: a table from a whole path string, resolved
 * from the root, to the entry the walk answered, so that a cached path
 * costs one hash of its bytes and one probe however deep it is.
 *
 * A node is made after an rcu-walk from the root that met no ".", "..",
 * or symlink, whose answer is the last component's entry (positive and
 * not a symlink, or negative: -ENOENT).  The answer is then a function of
 * the string, of that entry, and of the directories between the root and
 * it; and few strings rest on one entry ("/a/b", "a/b", "/a//b"...).
 * A node says (key, the string, entry d, a copy of d's inode data, the
 * shard's generation).
 *
 * How a reader knows a node still tells the truth, lock-free:
 *  - d itself: a node is published only while d is as the node copied it.
 *    Every change of d's name, place or inode, and its unhashing, is a seq
 *    write on d that begins by unpublishing d's nodes
 *    (dc__entry_write_begin), before the change's first store; and an adder
 *    publishes a node only if d's seq is still the even one its walk read:
 *    it marks d (DC_F_HASPATH) and then loads the seq, the writer moves the
 *    seq and then loads the mark, so one of them sees the other (see
 *    dc__entry_write_begin).  A reader that loads its chain's head after a
 *    node is unpublished cannot reach it (a node taken out earlier still
 *    links to it, but is reachable only from a head loaded before that), so
 *    one that found a node loaded the head before the first store of any
 *    change of d, and the answer holds as of that load; a hit reads no line
 *    of d.
 *  - the directories above d: a node never re-checks them.  Instead every
 *    change that could make the same string lead elsewhere bumps a
 *    generation first: a directory unhashed (forgotten, evicted, removed),
 *    moved (rename), made suspect or its attributes refreshed in place (its
 *    permission bits may have changed), and the root replaced.  The
 *    generations are sharded by the path's first two components: the
 *    first picks a group of shards, the second one shard in it.  A change
 *    of a directory two or more below the root moves the one shard of its
 *    ancestor two below the root (a change below /usr/lib moves that of
 *    "usr/lib"), one of a directory just below the root its whole group
 *    (every path through /usr, whatever comes next), one of the root every
 *    shard; only the paths of the shards moved, and those that share
 *    them, fall back to the walk.  A path of one component passes no
 *    directory but the root, one of two only the root and its first: any
 *    shard of the first's group is theirs.
 *    Each generation is a seqcount: odd while such a change is made, bumped
 *    (seq_cst) before it and after it.  A walk makes a node only with the
 *    even generation it read before it started, so a walk that saw the old
 *    state during a change never leaves a node that outlives the change
 *    (and only while that generation is still current, checked under
 *    ptab_lock, so that no node is made already stale).  A reader loads
 *    it after finding the node: equal to the node's, it was so
 *    (generations only grow) when the reader loaded its chain's head, so
 *    no such change had begun by then since the node was made.
 *    A node behind only in its generation is brought forward in place: a
 *    walk that read a later generation and found the same answer (the same
 *    d, unchanged since the node was made, as the node is still published;
 *    the same allx and deadline) stores its generation in the node, under
 *    ptab_lock, rather than replacing it with an equal node, which would
 *    cost an allocation and a grace period.  Every value a node's
 *    generation holds, G, was so stored (or made) by a walk that read G
 *    before it walked and found it current under ptab_lock.  A reader that
 *    finds the node's G equal to its shard's has an answer that held at
 *    the later of its head load and the bump to G: the directories were
 *    then as that walk saw them (the reader read G, not a later one), and
 *    d as the node copied it (the node was published from the head load,
 *    or earlier, until the store, and a change of d unpublishes it first).
 *    That instant lies within the probe; for a node never brought forward
 *    it is the head load, as above.
 *  - TTLs: a node lives no longer than the earliest deadline of the
 *    entries its walk passed (the directories and the answer), which the
 *    walk noted as it checked each against its clock; a reader with TTLs
 *    on compares it with the one clock read of its resolve.  Deadlines
 *    only move later (a revalidation confirms the same answer), so a
 *    node's is never later than any of its entries'.
 *
 * Lifetime: nodes are read under rcu_read_lock and freed after a grace
 * period, in batches: an unpublished node waits on c->pdead until a
 * batch's worth (a 256th of the table's cap) has died, and the batch
 * goes to call_rcu as one callback, queued after the last of its nodes
 * was unpublished, so that its grace period outlasts every reader that
 * could have loaded any of them.  Nodes die as fast as the answers they
 * hold change (thousands in a replay of a kernel build's trace, which
 * one thread runs in 0.2 s), and liburcu's callback thread starts a grace
 * period each time it wakes to callbacks: with a callback a node, as often
 * as every 10 ms, its pause between rounds.  A grace period with every CPU
 * busy is dear (its waiter takes a CPU from a reader, sleeps and is woken
 * again and again), so batches cost fewer of them.  A batch is memory
 * held back, counted in the cache's bytes, small beside the table; the
 * shrinker thread leaves a batch not yet full where it is, and dc_shrink
 * hands it over.
 * A reader dereferences only the node, never its d; writers find a
 * node by its d (the leaf chain), and a d that was ever hashed is freed
 * only after an unhash, which took d's nodes out of both chains (above),
 * so no node a writer can reach outlives its d (an unpublished one may;
 * nothing reads its d again).  An
 * entry never hashed gets no node.  An entry a node answers for gets no
 * LRU mark from a hit: the shrinker gives it a second chance instead, and
 * takes its nodes (lru.c).
 *
 * Locking: ptab_lock (mutex) serialises every change of the table, the
 * leaf index and the batch of unpublished nodes; it nests inside the
 * write lock and lru_lock (entry writes, the shrinker; bumps need no
 * lock: atomics), is taken alone by dc_shrink, and is only tried by
 * readers adding a node, who give up the node rather than wait.
 * Readers of the table take nothing.
 */
#include <stdlib.h>

#include "internal.h"

__thread struct dc_pace dc__pace;

/*
 * A node: what a hit reads comes first (the key, the generation, the
 * length and the copy of d's inode data), then what only writers use,
 * then the string.  A hit returns the node's copy of d's inode data,
 * taken by the walk that made the node, and reads no line of d: the node
 * is unpublished before d changes.  A node off both chains can be reached
 * by no writer, and no reader reads the writers' fields, so what frees it
 * takes their place: the link of the batch it waits in, or, when no batch
 * header could be allocated, its own RCU head and the cache whose bytes
 * it counts.
 */
struct dc_pnode {
	struct dc_pnode *next;		/* chain in c->ptab; RCU-read */
	uint64_t key;
	uint64_t gen;			/* its shard's generation when made, or
					 * brought forward to; atomic */
	uint16_t len;
	uint8_t shard;
	bool allx;			/* every directory on the way: 0111 set */
	uint32_t until;			/* answers before this tick (FOREVER) */
	struct dc_inode in;		/* d's inode data (mode 0: -ENOENT) */
	union {
		struct {		/* writers only; ptab_lock */
			struct dc_dentry *d;	/* the answer (leaf chain) */
			struct dc_pnode *lnext;	/* chain in c->pleaf, by d;
						 * unpublished: in c->pdead */
		};
		struct {		/* off both chains, freed alone after
					 * readers (hand_over) */
			struct rcu_head rcu;
			struct dc_cache *c;
		};
	};
	char path[];			/* len bytes */
};
_Static_assert(DC_PATH_SHARDS <= 256, "dc_pnode.shard is 8 bits");
_Static_assert(DC_PATH_MAX - 1 <= UINT16_MAX, "dc_pnode.len is 16 bits");

/*
 * A node's deadline, in ticks of 2^24 ns (16.8 ms) since c->pt0, rounded
 * down, so that a node dies up to a tick before its earliest entry does,
 * never after; FOREVER: no entry on the way has one.  32 bits of ticks
 * last 2.3 years from the cache's creation; a deadline past them (or
 * already past) makes no node, and the walk answers.
 */
#define TICK_SHIFT	24
#define FOREVER		UINT32_MAX

static bool deadline_ticks(const struct dc_cache *c, uint64_t until, uint32_t *out)
{
	uint64_t t;

	if (!until) {
		*out = FOREVER;
		return true;
	}
	if (until <= c->pt0)
		return false;
	t = (until - c->pt0) >> TICK_SHIFT;
	if (t == 0 || t >= FOREVER)
		return false;
	*out = (uint32_t)t;
	return true;
}

/* Does n still answer at now (a dc__now() time, not 0)?  A now before
 * pt0 (read from the precise clock, now from its coarse twin, which lags
 * it) is before every deadline too. */
static bool alive(const struct dc_cache *c, const struct dc_pnode *n, uint64_t now)
{
	uint64_t t = now > c->pt0 ? (now - c->pt0) >> TICK_SHIFT : 0;

	return n->until == FOREVER || t < n->until;
}

static size_t node_size(size_t len)
{
	return sizeof(struct dc_pnode) + len;
}

int dc__paths_init(struct dc_cache *c)
{
	unsigned bits = 8;

	/* a head per four entries of the cap, at most 2^18; four nodes a
	 * head at most, so that chains stay short however many entries there
	 * are (a probe that misses reads a whole chain) */
	while (bits < 18 && (1ull << bits) < c->max_entries / 4)
		bits++;
	c->pbits = bits;
	c->pmax = c->max_entries < (4ull << bits) ? c->max_entries : 4ull << bits;
	c->ptab = dc__calloc(c, (sizeof(*c->ptab) + sizeof(*c->pleaf)) << bits);
	if (!c->ptab)
		return -ENOMEM;
	c->pleaf = (struct dc_pnode **)(c->ptab + (1ull << bits));
	c->pt0 = dc__now(c);
	c->pdead_max = c->pmax >> 8 ? c->pmax >> 8 : 1;	/* see Lifetime */
	return 0;
}

static void node_free_cb(struct rcu_head *head)
{
	struct dc_pnode *n = caa_container_of(head, struct dc_pnode, rcu);
	struct dc_cache *c;

	dc__rcu_after_grace(head);	/* before the node is read (TSan) */
	c = n->c;
	dc__free(c, n, node_size(n->len));
	dc__tsan_release(c);	/* dc_cache_destroy's rcu_barrier acquires */
}

/* A batch of unpublished nodes, freed after the readers. */
struct dead_batch {
	struct rcu_head rcu;
	struct dc_cache *c;
	struct dc_pnode *list;		/* through lnext */
};

static void free_nodes(struct dc_cache *c, struct dc_pnode *n)
{
	struct dc_pnode *next;

	for (; n; n = next) {
		next = n->lnext;
		dc__free(c, n, node_size(n->len));
	}
}

static void dead_batch_cb(struct rcu_head *head)
{
	struct dead_batch *b = caa_container_of(head, struct dead_batch, rcu);
	struct dc_cache *c;

	dc__rcu_after_grace(head);	/* before the nodes are read (TSan) */
	c = b->c;
	free_nodes(c, b->list);
	dc__free(c, b, sizeof(*b));
	dc__tsan_release(c);	/* dc_cache_destroy's rcu_barrier acquires */
}

/* Hand the waiting unpublished nodes to call_rcu.  ptab_lock held. */
static void hand_over(struct dc_cache *c)
{
	struct dc_pnode *n = c->pdead, *next;
	struct dead_batch *b;

	if (!n)
		return;
	c->pdead = NULL;
	c->nr_pdead = 0;
	b = dc__malloc(c, sizeof(*b));
	if (b) {
		b->c = c;
		b->list = n;
		dc__call_rcu(&b->rcu, dead_batch_cb);
		return;
	}
	/* no memory for the batch: each node goes alone, in its own head */
	for (; n; n = next) {
		next = n->lnext;
		n->c = c;
		dc__call_rcu(&n->rcu, node_free_cb);
	}
}

/* Hand over the nodes waiting for a batch to fill (dc_shrink). */
void dc__paths_release(struct dc_cache *c)
{
	if (!c->ptab)
		return;
	pthread_mutex_lock(&c->ptab_lock);
	hand_over(c);
	pthread_mutex_unlock(&c->ptab_lock);
}

/* Every node, at destroy: no reader is left. */
void dc__paths_free(struct dc_cache *c)
{
	free_nodes(c, c->pdead);
	if (c->ptab) {
		for (size_t i = 0; i < (1ull << c->pbits); i++) {
			struct dc_pnode *n = c->ptab[i], *next;

			for (; n; n = next) {
				next = n->next;
				dc__free(c, n, node_size(n->len));
			}
		}
		dc__free(c, c->ptab, (sizeof(*c->ptab) + sizeof(*c->pleaf)) << c->pbits);
	}
}

/* The first shard of the group of the paths whose first component is
 * name (len bytes). */
static uint32_t group_of(const struct dc_cache *c, const char *name, size_t len)
{
	return (uint32_t)(dc__hash_key(c, name, len) >> 58) % DC_PATH_GROUPS *
	       DC_PATH_SLOTS;
}

/* The place in its group of the shard of the paths whose second component
 * is name (len bytes). */
static uint32_t slot_of(const struct dc_cache *c, const char *name, size_t len)
{
	return (uint32_t)(dc__hash_key(c, name, len) >> 32) % DC_PATH_SLOTS;
}

static struct dc_pnode **leaf_chain(struct dc_cache *c, const struct dc_dentry *d)
{
	uintptr_t p = (uintptr_t)d;

	return &c->pleaf[(p >> 7 ^ p >> (7 + c->pbits)) & ((1ull << c->pbits) - 1)];
}

/* ---- writers -------------------------------------------------------------
 *
 * A shard's generation is a seqcount: odd while a change that may make its
 * paths lead elsewhere is being made (writers hold the write lock, so they
 * come one at a time), even otherwise.  A node is made only at the even
 * generation read before its walk, and answers only while the generation
 * is still that one; a reader that reads it odd neither answers from a
 * node nor makes one.
 */

static void bump(struct dc_cache *c, uint32_t set)
{
	uint32_t first = set & 0xffff, n = set >> 16;

	/* seq_cst: the first bump before the change's stores (which come
	 * after in program order, and are release or seq writes), the second
	 * after them; pairs with the acquire loads of dc__path_gen (before a
	 * walk) and dc__path_add (under ptab_lock), and a reader that finds
	 * a node after the first bump sees it (dc__path_lookup) */
	for (uint32_t i = first; i < first + n; i++)
		__atomic_add_fetch(&c->pgen[i].v, 1, __ATOMIC_SEQ_CST);
}

/*
 * The shards of the paths through directory d: the one of its ancestor
 * two below the root (d itself at that depth), the group of d just below
 * the root, or DC_PATH_ALL for a root, current or former.  Write lock
 * held: parents are stable.
 */
uint32_t dc__path_shards(const struct dc_cache *c, const struct dc_dentry *d)
{
	const struct dc_dentry *top = d, *second = NULL;

	while (top->parent && top->parent->parent) {
		second = top;
		top = top->parent;
	}
	if (!top->parent)
		return DC_PATH_ALL;
	if (!second)
		return DC_PATH_SET(group_of(c, top->name->s, top->name->len),
				   DC_PATH_SLOTS);
	return DC_PATH_SET(group_of(c, top->name->s, top->name->len) +
			   slot_of(c, second->name->s, second->name->len), 1);
}

/* Before and after a change of the paths of a set of shards (a
 * dc__path_shards; DC_PATH_ALL: all): their generations go odd, then even
 * again.  Write lock held. */
void dc__path_change_begin(struct dc_cache *c, uint32_t set)
{
	if (!c->ptab)
		return;
	/* inside a change of all (forget_all's unhashes), every shard is odd
	 * already: a set's own change must not make it even */
	if (set == DC_PATH_ALL ? c->pall++ : c->pall)
		return;
	bump(c, set);
	dc__race_window();
}

void dc__path_change_end(struct dc_cache *c, uint32_t set)
{
	if (!c->ptab)
		return;
	if (set == DC_PATH_ALL ? --c->pall : c->pall)
		return;
	bump(c, set);
}

/* Unpublish n from its key chain (readers may still hold it: it is freed
 * after them), having taken it off its leaf chain.  ptab_lock held. */
static void unpublish(struct dc_cache *c, struct dc_pnode *n)
{
	struct dc_pnode **tp = &c->ptab[n->key & ((1ull << c->pbits) - 1)];

	while (*tp != n)
		tp = &(*tp)->next;
	/* a reader on n still finds the rest of the chain through n->next;
	 * release: a reader that follows the new link to the next node
	 * sees that node's fields (pairs with the chain's acquire loads) */
	dc__store_rel(*tp, n->next);
	/* pfull clears a sixteenth below the cap, so that a table at the cap
	 * does not flip it (and the line probes read) with every change */
	if (__atomic_sub_fetch(&c->nr_pnodes, 1, __ATOMIC_RELAXED) <
	    c->pmax - c->pmax / 16 && dc__load(c->pfull))
		dc__store(c->pfull, 0);
	/* off both chains now (the caller took it off its leaf chain): it
	 * waits for its batch, linked through its leaf link */
	n->lnext = c->pdead;
	c->pdead = n;
	if (++c->nr_pdead >= c->pdead_max)
		hand_over(c);
}

/* Take n off its leaf's chain.  ptab_lock held. */
static void leaf_unlink(struct dc_cache *c, struct dc_pnode *n)
{
	struct dc_pnode **pp = leaf_chain(c, n->d);

	while (*pp != n)
		pp = &(*pp)->lnext;
	*pp = n->lnext;
}

/*
 * Unpublish d's nodes, then clear d's mark.  Write lock held: the mark is
 * cleared only here, under both locks and after the unpublishing, which
 * is what lets an entry write that reads it clear skip the lock (a clear
 * it reads came from an earlier write-lock section that took the nodes).
 */
void dc__path_forget_leaf(struct dc_cache *c, struct dc_dentry *d)
{
	struct dc_pnode **pp, *n;

	if (!c->ptab)
		return;
	pthread_mutex_lock(&c->ptab_lock);
	if (!(dc__flags(d) & DC_F_HASPATH)) {
		pthread_mutex_unlock(&c->ptab_lock);
		return;
	}
	for (pp = leaf_chain(c, d); (n = *pp);) {
		if (n->d != d) {
			pp = &n->lnext;
			continue;
		}
		*pp = n->lnext;
		unpublish(c, n);
	}
	dc__flags_clear(d, DC_F_HASPATH);
	pthread_mutex_unlock(&c->ptab_lock);
}

/*
 * Begin a change of entry d (write lock held, or a miss's own PENDING
 * entry under its chain stripe; dc__entry_write_end ends it): d's seq
 * goes odd, then d's nodes are unpublished, before the
 * caller's first store.  Only an entry marked DC_F_HASPATH can have a
 * node, and the mark is read without ptab_lock, so that a change of an
 * entry without nodes costs no lock; against an adder that read d's
 * seq before it went odd, the two sides are ordered as Dekker's: the
 * adder sets the mark, then loads the seq; we move the seq, then load
 * the mark; all four seq_cst, so one of us sees the other's store.
 * Either we see the mark, and under ptab_lock (after the adder's
 * section) take the node if it was published; or we see a later clear
 * of it, by a dc__path_forget_leaf that took the node (clears happen
 * only there, under the write lock we hold); or the adder sees the odd
 * seq and publishes nothing.  (That a seq_cst load reads no store older
 * than a seq_cst store before it in the total order is C++20's rule,
 * which the compilers' mappings have always given.)
 */
void dc__entry_write_begin(struct dc_cache *c, struct dc_dentry *d)
{
	uint32_t fl;

	/* seq_cst: see above; writers of d's seq hold the write lock, or
	 * are the miss that owns d while it is PENDING (no nodes: below) */
	__atomic_fetch_add(&d->seq, 1, __ATOMIC_SEQ_CST);
	dc__race_window();
	fl = __atomic_load_n(&d->flags, __ATOMIC_SEQ_CST);
	/* none to take, nor any to come, from an entry still PENDING (set
	 * only at birth; no walk answers with it, so no adder holds its
	 * seq) or DEAD (its unhash was an entry write that took them, and
	 * adders refuse it) */
	if ((fl & DC_F_HASPATH) && !(fl & (DC_F_PENDING | DC_F_DEAD)))
		dc__path_forget_leaf(c, d);
	/* release fence: the odd seq, and the chain stores that unpublished
	 * d's nodes (an unlock alone lets later stores move above it),
	 * before the caller's stores of the change, as dc__seq_write_begin */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	dc__race_window();
}

/* ---- readers ------------------------------------------------------------- */

/* The first component of path: its name and length (0: none). */
static size_t first_component(const char *path, size_t len, const char **name)
{
	size_t i = 0, j;

	while (i < len && path[i] == '/')
		i++;
	for (j = i; j < len && path[j] != '/'; j++)
		;
	*name = path + i;
	return j - i;
}

/* The shard of path's node (see the top of this file), or -1 for a path
 * with no first component, which gets none. */
static int32_t shard_of_path(const struct dc_cache *c, const char *path, size_t len)
{
	const char *a, *b;
	size_t alen = first_component(path, len, &a), rest, blen;

	if (!alen)
		return -1;
	rest = (size_t)(a + alen - path);
	blen = first_component(a + alen, len - rest, &b);
	return (int32_t)(group_of(c, a, alen) + (blen ? slot_of(c, b, blen) : 0));
}

static uint64_t path_key(const struct dc_cache *c, const char *path, size_t len)
{
	return dc__hash_bytes(&c->hkey, path, len);
}

/* The node for path (key its hash) in its chain, or NULL.  Inside
 * rcu_read_lock, or under ptab_lock.  Inlined: a hit's probe is this
 * loop, and the call cost each hit about 25 instructions more. */
static inline __attribute__((always_inline))
struct dc_pnode *chain_find(struct dc_cache *c, uint64_t key,
				   const char *path, size_t len)
{
	struct dc_pnode *n;

	/* acquire: pairs with the adder's release of the chain head */
	for (n = dc__load_acq(c->ptab[key & ((1ull << c->pbits) - 1)]); n;
	     n = dc__load_acq(n->next))
		if (n->key == key && n->len == len && !memcmp(n->path, path, len))
			return n;
	return NULL;
}

/* One probe of a full table, found (a node) or not, in this thread's
 * count (dc__path_skip). */
static void pace_count(const struct dc_cache *c, bool found)
{
	if (dc__pace.id != c->id)
		dc__pace = (struct dc_pace){ .id = c->id };
	dc__pace.hits += found;
	if (++dc__pace.probes == DC_PACE_WINDOW) {
		if (dc__pace.hits < DC_PACE_WINDOW / 2)
			dc__pace.skip = DC_PACE_SKIP;
		dc__pace.probes = dc__pace.hits = 0;
	}
}

/*
 * The answer for path (len bytes, from the root) from its node: 0 with
 * *st filled, -ENOENT, or -ECHILD (no node, or one that may be stale, or
 * past its deadline at now: walk).  now: the resolve's clock, 0 with TTLs
 * off.  Inside rcu_read_lock.
 */
int dc__path_lookup(struct dc_cache *c, const char *path, size_t len,
		    bool checked, uint64_t now, struct dc_inode *st)
{
	uint64_t key = path_key(c, path, len);
	/* a path with no first component ("/", "//") finds no node, since
	 * dc__path_add makes none for it: no need to look for one here */
	struct dc_pnode *n = chain_find(c, key, path, len);
	uint64_t gen;

	/* too few probes find a node, with the table full: leave it alone
	 * for a while (dc__path_skip) */
	if (__builtin_expect(dc__load(c->pfull), 0))
		pace_count(c, n != NULL);
	if (!n)
		return -ECHILD;
	dc__race_window();

	/* a checked resolve (dc_resolve_as) only where every directory on
	 * the way lets anyone search it: then it passes whoever asks */
	if (checked && !n->allx)
		return -ECHILD;
	/* n was in its chain, so its d had not changed since n was made (a
	 * change unpublishes d's nodes before its first store); the shard's
	 * generation, still n's (even: nodes are made at even ones only),
	 * says no directory above had begun to change either (the bump comes
	 * before any such change; for a node brought forward in place, see
	 * the top of this file).  Both loads relaxed: the acquire load that
	 * found n keeps them after it; on a mismatch nothing read is used,
	 * and on a match nothing read depends on the store of n's generation
	 * (its other fields are never written once it is published). */
	gen = __atomic_load_n(&c->pgen[n->shard].v, __ATOMIC_RELAXED);
	dc__race_window();
	if (gen != __atomic_load_n(&n->gen, __ATOMIC_RELAXED))
		return -ECHILD;
	if (now && !alive(c, n, now))
		return -ECHILD;
	*st = n->in;
	/* one counter per answer; dc_get_stats adds it to lookups and to
	 * the hits of its sign */
	if (!st->mode) {
		dc__stat_inc(c, DC_ST_PATH_NEG_HITS);
		return -ENOENT;
	}
	dc__stat_inc(c, DC_ST_PATH_HITS);
	return 0;
}

/*
 * Remember path's answer d (its seq seq, read by the rcu-walk that just
 * answered, which met no ".", ".." or symlink and started at the root;
 * in, d's inode data as that walk copied it at seq), with shard and gen
 * as dc__path_gen gave them before that walk, and until the earliest
 * deadline the walk passed (0: none).  Best effort:
 * nothing on no memory, past the cap, or with ptab_lock busy.  No lock
 * held.
 */
void dc__path_add(struct dc_cache *c, const char *path, size_t len,
		  struct dc_dentry *d, uint32_t seq, const struct dc_inode *in,
		  int32_t shard, uint64_t gen, bool allx, uint64_t until)
{
	uint64_t key;
	struct dc_pnode *n, *o, **head;
	uint32_t ticks;

	if (shard < 0 || (gen & 1) || !deadline_ticks(c, until, &ticks))
		return;
	key = path_key(c, path, len);
	/* a full table takes a node only in place of one for the same
	 * string: without one, nothing to pay for (a path resolved once,
	 * such as most of a cold cache's, stops here) */
	if (__atomic_load_n(&c->nr_pnodes, __ATOMIC_RELAXED) >= c->pmax &&
	    !chain_find(c, key, path, len))
		return;
	/* best effort, so never wait: a holder preempted on a busy machine
	 * would put every walk that ends here to sleep behind it, and the
	 * next walk of the path tries again */
	if (pthread_mutex_trylock(&c->ptab_lock) != 0)
		return;
	dc__race_window();
	/* d marked before its seq is checked, both seq_cst: against a
	 * change of d, which moves the seq and then looks for the mark
	 * (dc__entry_write_begin).  A mark seen here was set so by an
	 * earlier holder of this lock, before our load.  A mark left on an
	 * entry whose node is not published costs it a lock at its next
	 * change, and one second chance; the next dc__path_forget_leaf for
	 * it (that change, or the shrinker) clears it. */
	if (!(dc__flags(d) & DC_F_HASPATH))
		__atomic_fetch_or(&d->flags, (uint16_t)DC_F_HASPATH, __ATOMIC_SEQ_CST);
	dc__race_window();
	/* d still what the walk saw, and the walk's generation still current */
	if ((dc__flags(d) & DC_F_DEAD) ||
	    __atomic_load_n(&d->seq, __ATOMIC_SEQ_CST) != seq ||
	    __atomic_load_n(&c->pgen[shard].v, __ATOMIC_ACQUIRE) != gen)
		goto out;
	/* a node for the string already, with the same answer (published,
	 * so its d is as it copied it): kept (two walks of one path raced
	 * here), or brought forward to this generation in place (see the
	 * top of this file; it is never ahead of the current one) */
	o = chain_find(c, key, path, len);
	if (o && o->d == d && o->allx == allx) {
		if (o->gen == gen && o->until >= ticks)
			goto out;
		if (o->until == ticks) {
			dc__race_window();
			/* relaxed: a reader that sees it needs no other
			 * store of ours, as no other field changes */
			__atomic_store_n(&o->gen, gen, __ATOMIC_RELAXED);
			goto out;
		}
	}
	/* else a new node, in o's place, or for a new string only while
	 * the table holds fewer than pmax nodes */
	if (!o && __atomic_load_n(&c->nr_pnodes, __ATOMIC_RELAXED) >= c->pmax)
		goto out;
	n = dc__malloc(c, node_size(len));
	if (!n)
		goto out;
	n->key = key;
	n->d = d;
	n->shard = (uint8_t)shard;
	n->gen = gen;
	n->len = (uint16_t)len;
	n->allx = allx;
	n->until = ticks;
	n->in = *in;
	memcpy(n->path, path, len);
	if (o) {
		leaf_unlink(c, o);
		unpublish(c, o);
	}
	n->lnext = *leaf_chain(c, d);
	*leaf_chain(c, d) = n;
	head = &c->ptab[key & ((1ull << c->pbits) - 1)];
	n->next = *head;
	dc__race_window();
	/* release: the node's fields before the pointer to it */
	dc__store_rel(*head, n);
	if (__atomic_add_fetch(&c->nr_pnodes, 1, __ATOMIC_RELAXED) >= c->pmax &&
	    !dc__load(c->pfull))
		dc__store(c->pfull, 1);
out:
	pthread_mutex_unlock(&c->ptab_lock);
}

/* The shard of path's node (*shard; -1: it gets none) and its generation,
 * which a walk of path reads before it starts, to hand to dc__path_add. */
uint64_t dc__path_gen(const struct dc_cache *c, const char *path, size_t len,
		      int32_t *shard)
{
	uint64_t gen;

	*shard = shard_of_path(c, path, len);
	if (*shard < 0)
		return 0;
	gen = __atomic_load_n(&c->pgen[*shard].v, __ATOMIC_ACQUIRE);
	dc__race_window();
	return gen;
}
