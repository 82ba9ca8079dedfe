/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay.c - replay a dcbench trace through libdcache (see replay.h and
 * docs/dcbench.md).
 *
 * Preparation, once per trace, in five passes:
 *
 *  1. paths: every path is split into components and interned into a tree
 *     of names (lexically: "a/b/.." is "a"; the components before a ".."
 *     are remembered, since they must be directories for the walk to pass).
 *  2. order: a topological order of all ops that follows the log's line
 *     numbers where it can: program order, FORK before the child's first
 *     op, the child's EXIT before the parent's WAIT for it, and the child's
 *     first successful EXECVE (or EXIT) before the op after a vfork.  The
 *     fork/wait critical path is measured here.
 *  3. inference: the ops are simulated in that order against a model in
 *     which every name's state is unknown until an op says something about
 *     it.  The first thing said about a name that existed before the trace
 *     changed it fixes its initial state; that is the namespace built
 *     before each run.  Every name the trace creates, removes or renames is
 *     marked "changed".
 *  4. dependencies: an op that touches a changed name (as its path or as a
 *     directory on the way) must see the same state as in the trace, so it
 *     waits for the last op of another process that changed that name, and
 *     a change waits for the ops of other processes that looked at the
 *     name since the previous change.  Together with fork/wait this makes
 *     every answer of the replay deterministic.
 *  5. private roots: the top (depth 2) directory of every changed name is
 *     private; copy k >= 1 of the trace uses "ROOT.k" instead of ROOT.
 *
 * The replay: one rproc per (copy, trace process).  A worker runs one
 * rproc at a time, op after op, until the process exits or an op must
 * wait for another process; then it parks the rproc on that process's
 * waiter list and takes another ready one (own queue first, then stealing,
 * then a brief spin and a condition variable).  No lock is taken per op:
 * an op's dependencies are read with one acquire load each, and a process
 * publishes its progress only at the ops someone depends on.
 *
 * The time in the cache: each worker stamps CLOCK_MONOTONIC before and
 * after every path op, in every mode, and adds the difference to a counter
 * of its own; the memfs updates a cache mode applies are stamped again and
 * taken back out.  Wall time, so that a thread asleep on a cache lock keeps
 * counting.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dcache.h"
#include "replay.h"
#include "trace.h"

#define NONE	UINT32_MAX

static const char *const mode_names[RP_NMODES] = {
	[RP_RCU] = "rcu", [RP_GLOBAL] = "global", [RP_RWLOCK] = "rwlock",
	[RP_NULL] = "null",
};

const char *rp_mode_name(int mode)
{
	return mode >= 0 && mode < RP_NMODES ? mode_names[mode] : "?";
}

int rp_mode_parse(const char *name)
{
	for (int i = 0; i < RP_NMODES; i++)
		if (name && !strcmp(name, mode_names[i]))
			return i;
	return -1;
}

/* ---- small helpers -------------------------------------------------------- */

static void rp_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void rp_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* Make room for need elements of size sz in *a (capacity *cap). */
static int grow(void *a, size_t *cap, size_t need, size_t sz)
{
	void **ap = a;
	size_t n = *cap ? *cap : 16;
	void *b;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	b = realloc(*ap, n * sz);
	if (!b)
		return -1;
	*ap = b;
	*cap = n;
	return 0;
}

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_name(uint32_t parent, const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ull;
	}
	return hash64(h ^ len);
}

/* A chunk allocator for strings that live as long as the prep. */
struct arena {
	struct arena_blk *blk;
};
struct arena_blk {
	struct arena_blk *next;
	size_t used, size;
	char data[];
};

static char *arena_alloc(struct arena *a, size_t n)
{
	struct arena_blk *b = a->blk;

	if (!b || b->size - b->used < n) {
		size_t sz = n > 65536 ? n : 65536;

		b = malloc(sizeof(*b) + sz);
		if (!b)
			return NULL;
		b->next = a->blk;
		b->used = 0;
		b->size = sz;
		a->blk = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

static char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

static void arena_free(struct arena *a)
{
	while (a->blk) {
		struct arena_blk *n = a->blk->next;

		free(a->blk);
		a->blk = n;
	}
}

/* ---- the name tree ------------------------------------------------------------ */

enum { S_UNKNOWN, S_ABSENT, S_EXISTS };		/* init and cur */
enum { P_DIR = 1, P_REG = 2, P_LNK = 4, P_ANY = 7 };	/* possible types */
enum { T_NONE, T_DIR, T_REG, T_LNK, T_ANY };		/* a known type */

#define N_INITIAL	0x001	/* the name's current incarnation is the initial one */
#define N_CHANGED	0x002	/* the trace creates, removes or renames it */
#define N_LINKDIR	0x004	/* if it is a symlink, followed as a directory */
#define N_LINKFILE	0x008	/* if it is a symlink, followed as a file */
#define N_WEAKDIR	0x010	/* mkdir said EEXIST: a directory unless told otherwise */
#define N_BAD		0x020	/* a name the cache cannot hold (too long) */
#define N_ROOT		0x040	/* a private root */
#define N_PRIVATE	0x080	/* a private root or below one */

struct node {
	uint32_t parent;	/* the root is its own parent */
	uint32_t child;		/* first child, NONE */
	uint32_t sibling;	/* next sibling, NONE */
	uint32_t name;		/* offset of the NUL-terminated name in names */
	uint32_t target;	/* initial symlinks: offset of the target's name */
	uint16_t len;
	uint16_t flags;
	uint16_t depth;		/* root 0 */
	uint8_t init, cur;	/* S_* */
	uint8_t poss;		/* P_*: initial type, as far as known */
	uint8_t ctype;		/* T_*: type of the current incarnation if not initial */
	uint8_t itype;		/* T_*: the initial type decided at the end */
};

struct pinfo {
	uint32_t node;		/* lexical target; NONE if unusable */
	uint32_t dreq;		/* first index in dreqs of the ".." prefixes */
	uint16_t ndreq;
	uint16_t ncomp;		/* components, ".." included */
	uint8_t use;		/* PU_* */
};

#define PU_PATH		0x01	/* used as a path */
#define PU_SLASH	0x02	/* ... with a trailing slash */
#define PU_PARENT	0x04	/* ... by an op that needs its parent and name */
#define PU_TEXT		0x08	/* a symlink's target text */
#define PU_BAD		0x10	/* too long: no inference */
#define PU_LONGNAME	0x20	/* a component is too long; node: the walk before it */

/* Per-op flags (opf) */
#define OF_DEPS		0x01	/* has dependencies */
#define OF_NOTIFY	0x02	/* another op waits for this one */
#define OF_WR1		0x04	/* changes path's name (inference) */
#define OF_WR2		0x08	/* changes path2's name */

struct dep {
	uint32_t proc;		/* process index within the copy */
	uint32_t need;		/* ops it must have completed */
};

/* One copy's view of a path. */
struct cpath {
	const char *s;		/* the path to resolve */
	const char *slash;	/* s + "/", or NULL */
	const char *parent;	/* the directory part, or NULL */
	const char *name;	/* the last component (points into s), or NULL */
	uint32_t nlen;
};

struct rp_prep {
	const struct dct_trace *t;
	struct rp_info info;

	/* names */
	struct node *nodes;
	size_t nnodes, nodes_cap;
	char *names;
	size_t names_len, names_cap;
	uint32_t *ht;
	size_t ht_mask;

	/* paths */
	struct pinfo *pi;
	uint32_t *dreqs;
	size_t ndreqs, dreqs_cap;

	/* ops */
	uint32_t *owner;	/* op -> process */
	uint8_t *opf;		/* OF_* */
	uint64_t *dep_off;	/* nops + 1 */
	struct dep *deps;
	uint64_t ndeps;

	/* copies */
	struct cpath **cp;	/* cp[k][path id] */
	unsigned ncopies;	/* built so far */
	char **roots;
	struct arena arena;
	uint64_t conflicts;
};

static uint32_t node_find(struct rp_prep *p, uint32_t parent, const char *s, size_t len)
{
	size_t i = hash_name(parent, s, len) & p->ht_mask;

	for (;; i = (i + 1) & p->ht_mask) {
		uint32_t n = p->ht[i];

		if (n == NONE)
			return NONE;
		if (p->nodes[n].parent == parent && p->nodes[n].len == len &&
		    !memcmp(p->names + p->nodes[n].name, s, len) && n != 0)
			return n;
	}
}

static int ht_grow(struct rp_prep *p)
{
	size_t nsize = (p->ht_mask + 1) * 2;
	uint32_t *ht = malloc(nsize * sizeof(*ht));

	if (!ht)
		return -1;
	memset(ht, 0xff, nsize * sizeof(*ht));
	for (size_t n = 1; n < p->nnodes; n++) {
		struct node *d = &p->nodes[n];
		size_t i = hash_name(d->parent, p->names + d->name, d->len) & (nsize - 1);

		while (ht[i] != NONE)
			i = (i + 1) & (nsize - 1);
		ht[i] = (uint32_t)n;
	}
	free(p->ht);
	p->ht = ht;
	p->ht_mask = nsize - 1;
	return 0;
}

/* Store a NUL-terminated name; its offset, or NONE. */
static uint32_t name_store(struct rp_prep *p, const char *s, size_t len)
{
	size_t off = p->names_len;

	if (off + len + 1 > UINT32_MAX ||
	    grow(&p->names, &p->names_cap, off + len + 1, 1))
		return NONE;
	memcpy(p->names + off, s, len);
	p->names[off + len] = '\0';
	p->names_len += len + 1;
	return (uint32_t)off;
}

/* The node for name in parent, made if missing; NONE when out of memory. */
static uint32_t node_get(struct rp_prep *p, uint32_t parent, const char *s, size_t len)
{
	uint32_t n = node_find(p, parent, s, len);
	struct node *d;
	size_t i;

	if (n != NONE)
		return n;
	if (p->nnodes >= NONE - 1 || (p->nnodes + 1) * 2 > p->ht_mask + 1) {
		if (p->nnodes >= NONE - 1 || ht_grow(p))
			return NONE;
	}
	if (grow(&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*p->nodes)))
		return NONE;
	n = (uint32_t)p->nnodes;
	d = &p->nodes[n];
	memset(d, 0, sizeof(*d));
	d->name = name_store(p, s, len);
	if (d->name == NONE)
		return NONE;
	p->nnodes++;
	d = &p->nodes[n];
	d->parent = parent;
	d->len = (uint16_t)len;
	d->depth = p->nodes[parent].depth + 1;
	d->child = NONE;
	d->sibling = p->nodes[parent].child;
	p->nodes[parent].child = n;
	d->target = NONE;
	d->poss = P_ANY;
	if (len > DC_NAME_MAX)
		d->flags |= N_BAD;
	i = hash_name(parent, s, len) & p->ht_mask;
	while (p->ht[i] != NONE)
		i = (i + 1) & p->ht_mask;
	p->ht[i] = n;
	return n;
}

static int nodes_init(struct rp_prep *p)
{
	struct node *r;

	p->ht_mask = 1023;
	p->ht = malloc((p->ht_mask + 1) * sizeof(*p->ht));
	if (!p->ht || grow(&p->nodes, &p->nodes_cap, 1, sizeof(*p->nodes)))
		return -1;
	memset(p->ht, 0xff, (p->ht_mask + 1) * sizeof(*p->ht));
	r = &p->nodes[0];
	memset(r, 0, sizeof(*r));
	r->name = name_store(p, "", 0);
	if (r->name == NONE)
		return -1;
	r->child = r->sibling = r->target = NONE;
	r->init = r->cur = S_EXISTS;
	r->poss = P_DIR;
	r->itype = T_DIR;
	r->flags = N_INITIAL;
	p->nnodes = 1;
	return 0;
}

/* ---- pass 1: paths ------------------------------------------------------------- */

/* Split path id into nodes; 0, or -1 when out of memory. */
static int parse_path(struct rp_prep *p, uint32_t id)
{
	const char *s = p->t->paths[id], *q = s;
	struct pinfo *pi = &p->pi[id];
	uint32_t cur = 0;
	unsigned ncomp = 0;

	pi->dreq = (uint32_t)p->ndreqs;
	if (strlen(s) >= DC_PATH_MAX)
		pi->use |= PU_BAD;
	while (*q) {
		const char *e;
		size_t len;

		while (*q == '/')
			q++;
		if (!*q)
			break;
		e = strchr(q, '/');
		len = e ? (size_t)(e - q) : strlen(q);
		ncomp++;
		if (len == 2 && q[0] == '.' && q[1] == '.') {
			if (cur != 0) {
				if (grow(&p->dreqs, &p->dreqs_cap, p->ndreqs + 1,
					 sizeof(*p->dreqs)))
					return -1;
				p->dreqs[p->ndreqs++] = cur;
				pi->ndreq++;
				cur = p->nodes[cur].parent;
			}
		} else if (len > DC_NAME_MAX) {
			pi->use |= PU_LONGNAME;
			break;
		} else if (!(len == 1 && q[0] == '.')) {
			cur = node_get(p, cur, q, len);
			if (cur == NONE)
				return -1;
		}
		q += len;
		if (pi->ndreq == UINT16_MAX)
			pi->use |= PU_BAD;
	}
	pi->node = (pi->use & PU_BAD) ? NONE : cur;
	pi->ncomp = ncomp > UINT16_MAX ? UINT16_MAX : (uint16_t)ncomp;
	return 0;
}

static int pass_paths(struct rp_prep *p)
{
	const struct dct_trace *t = p->t;

	p->pi = calloc(t->npaths ? t->npaths : 1, sizeof(*p->pi));
	if (!p->pi)
		return -1;
	for (uint64_t i = 0; i < t->nops; i++) {
		const struct dct_op *o = &t->ops[i];
		int np = dct_kind_paths(o->kind);

		if (np >= 1) {
			p->pi[o->path].use |= PU_PATH;
			if (o->flags & DCT_F_SLASH)
				p->pi[o->path].use |= PU_SLASH;
			if (o->kind >= DCT_MKDIR && o->kind <= DCT_SYMLINK)
				p->pi[o->path].use |= PU_PARENT;
			if (o->kind == DCT_OPEN && (o->flags & DCT_F_CREAT))
				p->pi[o->path].use |= PU_PARENT;
		}
		if (np >= 2) {
			if (o->kind == DCT_SYMLINK) {
				p->pi[o->path2].use |= PU_TEXT;
			} else {
				p->pi[o->path2].use |= PU_PATH | PU_PARENT;
				if (o->flags & DCT_F_SLASH2)
					p->pi[o->path2].use |= PU_SLASH;
			}
		}
	}
	for (uint32_t id = 0; id < t->npaths; id++) {
		p->pi[id].node = NONE;
		if ((p->pi[id].use & PU_PATH) && parse_path(p, id))
			return -1;
	}
	return 0;
}

/* ---- pass 2: the order ----------------------------------------------------------- */

struct heap {
	uint32_t *a;
	size_t n;
	const uint64_t *key;	/* per process */
};

static bool heap_less(const struct heap *h, uint32_t x, uint32_t y)
{
	return h->key[x] < h->key[y] || (h->key[x] == h->key[y] && x < y);
}

static void heap_push(struct heap *h, uint32_t x)
{
	size_t i = h->n++;

	while (i > 0) {
		size_t up = (i - 1) / 2;

		if (!heap_less(h, x, h->a[up]))
			break;
		h->a[i] = h->a[up];
		i = up;
	}
	h->a[i] = x;
}

static uint32_t heap_pop(struct heap *h)
{
	uint32_t top = h->a[0], x = h->a[--h->n];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, m = l;

		if (l >= h->n)
			break;
		if (l + 1 < h->n && heap_less(h, h->a[l + 1], h->a[l]))
			m = l + 1;
		if (!heap_less(h, h->a[m], x))
			break;
		h->a[i] = h->a[m];
		i = m;
	}
	if (h->n)
		h->a[i] = x;
	return top;
}

/* Ops process c must have completed for a vfork parent to go on. */
static uint32_t vfork_need(const struct dct_trace *t, uint32_t c)
{
	const struct dct_proc *pc = &t->procs[c];

	for (uint64_t k = 0; k < pc->nops; k++) {
		const struct dct_op *o = &t->ops[pc->first_op + k];

		if (o->kind == DCT_EXECVE && o->err == 0)
			return (uint32_t)(k + 1);
	}
	return (uint32_t)pc->nops;
}

/* The structural dependency of op i (local index li of process pr), if any. */
static bool struct_dep(const struct dct_trace *t, uint32_t pr, uint64_t li,
		       struct dep *d)
{
	const struct dct_proc *pp = &t->procs[pr];
	const struct dct_op *o = &t->ops[pp->first_op + li];

	if (o->kind == DCT_WAIT) {
		d->proc = o->child;
		d->need = (uint32_t)t->procs[o->child].nops;
		return true;
	}
	if (li > 0) {
		const struct dct_op *prev = o - 1;

		if (prev->kind == DCT_FORK && (prev->flags & DCT_F_VFORK)) {
			d->proc = prev->child;
			d->need = vfork_need(t, prev->child);
			return true;
		}
	}
	return false;
}

/*
 * Pass 2: order[] gets every op in a topological order that follows the
 * log's lines; cp[] the structural critical path.
 */
static int pass_order(struct rp_prep *p, uint64_t *order, char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	uint32_t np = t->nprocs;
	uint64_t *done = calloc(np, sizeof(*done));
	uint64_t *key = calloc(np, sizeof(*key));
	uint32_t *wnext = malloc(np * sizeof(*wnext));
	uint32_t *whead = malloc(np * sizeof(*whead));
	uint32_t *wneed = malloc(np * sizeof(*wneed));
	uint32_t *cp = malloc((t->nops ? t->nops : 1) * sizeof(*cp));
	struct heap h = { malloc(np * sizeof(uint32_t)), 0, key };
	uint64_t k = 0, crit = 0;
	int rc = -1;

	if (!done || !key || !wnext || !whead || !wneed || !cp || !h.a) {
		rp_fail(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < np; i++) {
		const struct dct_proc *pp = &t->procs[i];

		whead[i] = NONE;
		key[i] = t->ops[pp->first_op].line;
		if (pp->nops > UINT32_MAX) {
			rp_fail(err, errlen, "process %u has too many ops", i);
			goto out;
		}
		for (uint64_t j = 0; j < pp->nops; j++)
			p->owner[pp->first_op + j] = i;
		if (pp->parent < 0)
			heap_push(&h, i);
	}
	while (h.n) {
		uint32_t pr = heap_pop(&h);
		const struct dct_proc *pp = &t->procs[pr];

		for (;;) {
			uint64_t li = done[pr], i = pp->first_op + li;
			const struct dct_op *o = &t->ops[i];
			struct dep d;
			uint32_t c = 0;

			if (struct_dep(t, pr, li, &d) && done[d.proc] < d.need) {
				/* blocked until d.proc has done d.need ops */
				wneed[pr] = d.need;
				wnext[pr] = whead[d.proc];
				whead[d.proc] = pr;
				break;
			}
			order[k++] = i;
			c = li ? cp[i - 1] : 0;
			if (li == 0 && pp->parent >= 0 && cp[pp->fork_op] > c)
				c = cp[pp->fork_op];
			if (struct_dep(t, pr, li, &d)) {
				uint64_t j = t->procs[d.proc].first_op + d.need - 1;

				if (cp[j] > c)
					c = cp[j];
			}
			cp[i] = c + 1;
			if (cp[i] > crit)
				crit = cp[i];
			done[pr]++;
			if (o->kind == DCT_FORK) {
				key[o->child] = t->ops[t->procs[o->child].first_op].line;
				heap_push(&h, o->child);
			}
			/* wake the processes waiting for this one */
			for (uint32_t *w = &whead[pr]; *w != NONE;) {
				uint32_t x = *w;

				if (wneed[x] <= done[pr]) {
					*w = wnext[x];
					key[x] = t->ops[t->procs[x].first_op + done[x]].line;
					heap_push(&h, x);
				} else {
					w = &wnext[x];
				}
			}
			if (done[pr] == pp->nops)
				break;
			key[pr] = t->ops[i + 1].line;
			if (h.n && heap_less(&h, h.a[0], pr)) {
				heap_push(&h, pr);
				break;
			}
		}
	}
	if (k != t->nops) {
		rp_fail(err, errlen, "the trace's fork/wait structure cannot be "
		     "scheduled (%llu of %llu ops ordered)",
		     (unsigned long long)k, (unsigned long long)t->nops);
		goto out;
	}
	p->info.critical_ops = crit;
	rc = 0;
out:
	free(done);
	free(key);
	free(wnext);
	free(whead);
	free(wneed);
	free(cp);
	free(h.a);
	return rc;
}

/* ---- pass 3: inference ----------------------------------------------------------- */

static bool follows_dir(const struct node *n)
{
	return n->cur == S_EXISTS &&
	       ((n->flags & N_INITIAL) ? (n->poss & (P_DIR | P_LNK)) != 0 :
		(n->ctype == T_DIR || n->ctype == T_LNK || n->ctype == T_ANY));
}

/* The current incarnation of n is wanted to be one of the types in want. */
static void constrain(struct rp_prep *p, struct node *n, unsigned want,
		      unsigned linkflag)
{
	if (n->flags & N_INITIAL) {
		unsigned np = n->poss & want;
		unsigned fl = n->flags | ((np & P_LNK) ? linkflag : 0);

		if ((fl & N_LINKDIR) && (fl & N_LINKFILE))
			np &= ~(unsigned)P_LNK;
		if (!np) {
			p->conflicts++;
			return;
		}
		n->poss = (uint8_t)np;
		n->flags = (uint16_t)fl;
		return;
	}
	switch (n->ctype) {
	case T_DIR: if (!(want & P_DIR)) p->conflicts++; break;
	case T_REG: if (!(want & P_REG)) p->conflicts++; break;
	case T_LNK: if (!(want & P_LNK)) p->conflicts++; break;
	default: break;
	}
}

/* n exists now, of a type in want. */
static void exist1(struct rp_prep *p, uint32_t ni, unsigned want, unsigned linkflag)
{
	struct node *n = &p->nodes[ni];

	if (n->flags & N_BAD)
		return;
	switch (n->cur) {
	case S_UNKNOWN:
		n->init = n->cur = S_EXISTS;
		n->flags |= N_INITIAL;
		constrain(p, n, want, linkflag);
		break;
	case S_EXISTS:
		constrain(p, n, want, linkflag);
		break;
	default:
		p->conflicts++;
		break;
	}
}

/* Every directory on the way to ni exists (ni itself not included). */
static void exist_above(struct rp_prep *p, uint32_t ni)
{
	uint32_t stack[DC_PATH_MAX / 2 + 2];
	unsigned n = 0;

	for (uint32_t a = p->nodes[ni].parent; a != 0 && n < sizeof(stack) / sizeof(stack[0]);
	     a = p->nodes[a].parent)
		stack[n++] = a;
	while (n)
		exist1(p, stack[--n], P_DIR | P_LNK, N_LINKDIR);
}

/* The whole walk of path id succeeded up to its last component. */
static void exist_walk(struct rp_prep *p, uint32_t id)
{
	const struct pinfo *pi = &p->pi[id];

	for (unsigned i = 0; i < pi->ndreq; i++) {
		uint32_t d = p->dreqs[pi->dreq + i];

		exist_above(p, d);
		exist1(p, d, P_DIR | P_LNK, N_LINKDIR);
	}
	if (pi->node != 0)
		exist_above(p, pi->node);
}

static void exist_path(struct rp_prep *p, uint32_t id, unsigned want,
		       unsigned linkflag)
{
	exist_walk(p, id);
	if (p->pi[id].node != 0)
		exist1(p, p->pi[id].node, want, linkflag);
}

/* Every ancestor (and ".." prefix) of path id is known to exist. */
static bool walk_known(struct rp_prep *p, uint32_t id, uint32_t ni)
{
	const struct pinfo *pi = &p->pi[id];

	for (uint32_t a = p->nodes[ni].parent; a != 0; a = p->nodes[a].parent)
		if (!follows_dir(&p->nodes[a]))
			return false;
	for (unsigned i = 0; i < pi->ndreq; i++) {
		uint32_t d = p->dreqs[pi->dreq + i];

		if (!follows_dir(&p->nodes[d]))
			return false;
		for (uint32_t a = p->nodes[d].parent; a != 0; a = p->nodes[a].parent)
			if (!follows_dir(&p->nodes[a]))
				return false;
	}
	return true;
}

/* Set the subtree below ni (not ni) to absent; unknown names were never there. */
static void subtree_absent(struct rp_prep *p, uint32_t ni)
{
	uint32_t n = p->nodes[ni].child;

	while (n != NONE) {
		struct node *d = &p->nodes[n];

		if (d->cur == S_UNKNOWN)
			d->init = S_ABSENT;
		d->cur = S_ABSENT;
		d->flags &= (uint16_t)~N_INITIAL;
		if (d->child != NONE) {
			n = d->child;
			continue;
		}
		while (n != ni && p->nodes[n].sibling == NONE)
			n = p->nodes[n].parent;
		if (n == ni)
			break;
		n = p->nodes[n].sibling;
	}
}

/* The last component of path id did not exist (ENOENT). */
static void absent_path(struct rp_prep *p, uint32_t id)
{
	const struct pinfo *pi = &p->pi[id];
	uint32_t ni = pi->node;
	struct node *n = &p->nodes[ni];

	/* the walk went through every name on the way that exists: directories */
	for (uint32_t a = n->parent; ni != 0 && a != 0; a = p->nodes[a].parent)
		if (p->nodes[a].cur == S_EXISTS)
			constrain(p, &p->nodes[a], P_DIR | P_LNK, N_LINKDIR);
	for (unsigned i = 0; i < pi->ndreq; i++)
		for (uint32_t a = p->dreqs[pi->dreq + i]; a != 0; a = p->nodes[a].parent)
			if (p->nodes[a].cur == S_EXISTS)
				constrain(p, &p->nodes[a], P_DIR | P_LNK, N_LINKDIR);
	if (ni == 0 || !walk_known(p, id, ni))
		return;		/* some directory on the way may be the missing one */
	if (n->cur == S_UNKNOWN) {
		n->init = n->cur = S_ABSENT;
		subtree_absent(p, ni);
	} else if (n->cur == S_EXISTS && !(n->flags & N_INITIAL && n->poss & P_LNK)) {
		p->conflicts++;
	}
}

/* Name ni appears (created by the trace) as type. */
static void create_node(struct rp_prep *p, uint32_t ni, unsigned type)
{
	struct node *n = &p->nodes[ni];

	if (n->cur == S_UNKNOWN) {
		n->init = S_ABSENT;
		subtree_absent(p, ni);
	} else if (n->cur == S_EXISTS) {
		p->conflicts++;
	}
	n->cur = S_EXISTS;
	n->ctype = (uint8_t)type;
	n->flags = (uint16_t)((n->flags & ~N_INITIAL) | N_CHANGED);
}

static void remove_node(struct rp_prep *p, uint32_t ni)
{
	struct node *n = &p->nodes[ni];

	n->cur = S_ABSENT;
	n->flags = (uint16_t)((n->flags & ~N_INITIAL) | N_CHANGED);
	subtree_absent(p, ni);
}

static unsigned cur_type(const struct node *n)
{
	if (!(n->flags & N_INITIAL))
		return n->ctype;
	switch (n->poss) {
	case P_DIR: return T_DIR;
	case P_REG: return T_REG;
	case P_LNK: return T_LNK;
	default: return T_ANY;
	}
}

/* Copy the existing names below from to below to (a renamed directory). */
static int move_subtree(struct rp_prep *p, uint32_t from, uint32_t to, unsigned depth)
{
	if (depth > DC_PATH_MAX / 2)
		return 0;
	for (uint32_t c = p->nodes[from].child; c != NONE; c = p->nodes[c].sibling) {
		char name[DC_NAME_MAX + 1];
		size_t len = p->nodes[c].len;
		uint32_t d;

		if (p->nodes[c].cur != S_EXISTS || len > DC_NAME_MAX)
			continue;
		/* a copy: node_get may move the names it points into */
		memcpy(name, p->names + p->nodes[c].name, len);
		d = node_get(p, to, name, len);
		if (d == NONE)
			return -1;
		if (p->nodes[d].cur == S_UNKNOWN)
			p->nodes[d].init = S_ABSENT;
		p->nodes[d].cur = S_EXISTS;
		p->nodes[d].ctype = (uint8_t)cur_type(&p->nodes[c]);
		p->nodes[d].flags = (uint16_t)((p->nodes[d].flags & ~N_INITIAL) | N_CHANGED);
		if (move_subtree(p, c, d, depth + 1))
			return -1;
	}
	return 0;
}

/* Is this recorded error one the namespace decides? (else: "it resolved") */
static bool err_determined(unsigned kind, int e)
{
	switch (e) {
	case 0: case ENOENT: case ENOTDIR: case ELOOP: case ENAMETOOLONG:
	case EEXIST: case EISDIR: case ENOTEMPTY:
		return true;
	case EINVAL:
		return kind == DCT_READLINK;
	default:
		return false;
	}
}

/* What op i says about the names, applied to the model.  *wr: OF_WR*. */
static int infer_op(struct rp_prep *p, const struct dct_op *o, uint8_t *wr)
{
	uint32_t id = o->path, id2 = o->path2;
	int e = o->err;
	unsigned fl = o->flags;
	uint32_t n, n2;
	bool follow = !(fl & DCT_F_NOFOLLOW);
	unsigned fwant = P_ANY, flink = 0;

	if (dct_kind_paths(o->kind) == 0 || e == DCT_ERR_UNKNOWN)
		return 0;
	if (p->pi[id].use & PU_BAD)
		return 0;
	n = p->pi[id].node;
	if (p->pi[id].use & PU_LONGNAME) {
		/* the walk got as far as the long name: a directory */
		if (e == ENAMETOOLONG) {
			exist_walk(p, id);
			if (n != 0)
				exist1(p, n, P_DIR | P_LNK, N_LINKDIR);
		}
		return 0;
	}
	if (o->kind == DCT_LSTAT || o->kind == DCT_READLINK)
		follow = false;
	if (fl & DCT_F_SLASH) {
		fwant = P_DIR | P_LNK;
		flink = N_LINKDIR;
	}
	if (o->kind == DCT_SYMLINK && p->t->paths[id2][0] == '\0')
		return 0;	/* an empty target: ENOENT before any lookup */
	if (e == ENOENT) {
		switch (o->kind) {
		case DCT_RENAME: case DCT_LINK:
			return 0;	/* either name may be the missing one */
		case DCT_OPEN:
			if (!(fl & DCT_F_CREAT)) {
				absent_path(p, id);
				return 0;
			}
			/* fall through - O_CREAT fails with ENOENT on the directory */
		case DCT_MKDIR: case DCT_MKNOD: case DCT_SYMLINK:
			if (n != 0 && p->nodes[n].parent != 0 &&
			    walk_known(p, id, p->nodes[n].parent)) {
				uint32_t par = p->nodes[n].parent;

				if (p->nodes[par].cur == S_UNKNOWN) {
					p->nodes[par].init = p->nodes[par].cur = S_ABSENT;
					subtree_absent(p, par);
				}
			}
			return 0;
		default:
			absent_path(p, id);
			return 0;
		}
	}
	if (e == ELOOP || e == ENAMETOOLONG)
		return 0;
	if (e == ENOTDIR) {
		bool self = (fl & (DCT_F_SLASH)) || o->kind == DCT_CHDIR ||
			    o->kind == DCT_RMDIR ||
			    (o->kind == DCT_OPEN && (fl & DCT_F_DIRECTORY));

		if (o->kind == DCT_RENAME || o->kind == DCT_LINK) {
			/* a slash on either name of a non-directory source */
			if (o->kind == DCT_RENAME && (fl & (DCT_F_SLASH | DCT_F_SLASH2)))
				exist_path(p, id, P_REG | P_LNK, 0);
		} else if (self) {
			exist_path(p, id, P_REG | P_LNK, N_LINKFILE);
		} else if (n != 0 && p->nodes[n].parent != 0 && p->pi[id].ndreq == 0) {
			exist_above(p, p->nodes[n].parent);
			exist1(p, p->nodes[n].parent, P_REG | P_LNK, N_LINKFILE);
		}
		return 0;
	}
	if (e == EEXIST) {
		uint32_t ti = id;

		if (o->kind == DCT_RENAME || o->kind == DCT_LINK) {
			/* the old name is looked up first: it exists */
			ti = id2;
			if (p->pi[ti].use & (PU_BAD | PU_LONGNAME))
				return 0;
			exist_path(p, id, P_ANY, 0);
		}
		if (p->pi[ti].use & (PU_BAD | PU_LONGNAME))
			return 0;
		exist_path(p, ti, P_ANY, 0);
		if (o->kind == DCT_MKDIR && p->pi[ti].node != 0)
			p->nodes[p->pi[ti].node].flags |= N_WEAKDIR;
		return 0;
	}
	if (e == EISDIR || e == ENOTEMPTY) {
		exist_path(p, id, P_DIR | (follow ? P_LNK : 0), N_LINKDIR);
		return 0;
	}
	if (e != 0) {
		if (o->kind == DCT_READLINK && e == EINVAL)
			exist_path(p, id, P_DIR | P_REG, 0);
		else if (o->kind != DCT_RENAME && o->kind != DCT_LINK)
			exist_path(p, id, P_ANY, 0);
		return 0;
	}

	/* success */
	switch (o->kind) {
	case DCT_OPEN:
		if ((fl & DCT_F_CREAT) && n != 0 &&
		    ((fl & DCT_F_EXCL) || p->nodes[n].cur == S_ABSENT)) {
			exist_walk(p, id);
			create_node(p, n, T_REG);
			*wr |= OF_WR1;
			return 0;
		}
		if ((fl & DCT_F_DIRECTORY) || (fl & DCT_F_SLASH))
			exist_path(p, id, follow ? P_DIR | P_LNK : P_DIR, N_LINKDIR);
		else if (fl & DCT_F_CREAT)
			exist_path(p, id, follow ? P_REG | P_LNK : P_REG, N_LINKFILE);
		else
			exist_path(p, id, fwant, flink);
		return 0;
	case DCT_STAT: case DCT_ACCESS: case DCT_UTIMENS: case DCT_CHMOD:
	case DCT_CHOWN: case DCT_LSTAT:
		exist_path(p, id, fwant, flink);
		return 0;
	case DCT_TRUNCATE:
		exist_path(p, id, P_REG | P_LNK, N_LINKFILE);
		return 0;
	case DCT_READLINK:
		exist_path(p, id, P_LNK, 0);
		return 0;
	case DCT_EXECVE:
		exist_path(p, id, P_REG | P_LNK, N_LINKFILE);
		return 0;
	case DCT_CHDIR:
		exist_path(p, id, P_DIR | P_LNK, N_LINKDIR);
		return 0;
	case DCT_MKDIR: case DCT_MKNOD: case DCT_SYMLINK:
		if (n == 0)
			return 0;
		exist_walk(p, id);
		create_node(p, n, o->kind == DCT_MKDIR ? T_DIR :
				  o->kind == DCT_SYMLINK ? T_LNK : T_REG);
		*wr |= OF_WR1;
		return 0;
	case DCT_UNLINK:
		if (n == 0)
			return 0;
		exist_path(p, id, P_REG | P_LNK, 0);
		remove_node(p, n);
		*wr |= OF_WR1;
		return 0;
	case DCT_RMDIR:
		if (n == 0)
			return 0;
		exist_path(p, id, P_DIR, 0);
		for (uint32_t c = p->nodes[n].child; c != NONE; c = p->nodes[c].sibling)
			if (p->nodes[c].cur == S_EXISTS)
				p->conflicts++;
		remove_node(p, n);
		*wr |= OF_WR1;
		return 0;
	case DCT_RENAME: case DCT_LINK:
		if (p->pi[id2].use & (PU_BAD | PU_LONGNAME))
			return 0;
		n2 = p->pi[id2].node;
		if (n == 0 || n2 == 0 || n == n2)
			return 0;
		exist_path(p, id, o->kind == DCT_LINK ? P_REG | P_LNK : P_ANY, 0);
		exist_walk(p, id2);
		if (o->kind == DCT_LINK) {
			create_node(p, n2, T_REG);
			*wr |= OF_WR2;
			return 0;
		}
		if (fl & DCT_F_EXCHANGE) {
			exist1(p, n2, P_ANY, 0);
			p->nodes[n].flags = (uint16_t)((p->nodes[n].flags & ~N_INITIAL) | N_CHANGED);
			p->nodes[n2].flags = (uint16_t)((p->nodes[n2].flags & ~N_INITIAL) | N_CHANGED);
			p->nodes[n].ctype = p->nodes[n2].ctype = T_ANY;
			*wr |= OF_WR1 | OF_WR2;
			return 0;
		}
		for (uint32_t a = n2; a != 0; a = p->nodes[a].parent)
			if (a == n) {
				p->conflicts++;	/* into itself: cannot have succeeded */
				return 0;
			}
		{
			unsigned type = cur_type(&p->nodes[n]);

			if (p->nodes[n2].cur == S_EXISTS)
				remove_node(p, n2);
			create_node(p, n2, type);
			if (move_subtree(p, n, n2, 0))
				return -1;
			remove_node(p, n);
		}
		*wr |= OF_WR1 | OF_WR2;
		return 0;
	default:
		return 0;
	}
}

/* The initial type of a name that existed, from what was learnt. */
static unsigned decide_type(const struct node *n)
{
	unsigned poss = n->poss;

	if ((n->flags & N_LINKDIR) && (n->flags & N_LINKFILE))
		poss &= ~(unsigned)P_LNK;
	if (poss == P_LNK)
		return T_LNK;
	if (poss == P_DIR)
		return T_DIR;
	if ((poss & P_DIR) && ((n->flags & N_WEAKDIR) || !(poss & P_REG)))
		return T_DIR;
	if (poss & P_REG)
		return T_REG;
	if (poss & P_DIR)
		return T_DIR;
	return T_LNK;
}

static int pass_infer(struct rp_prep *p, const uint64_t *order, char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	char buf[DC_NAME_MAX + 64];

	for (uint64_t k = 0; k < t->nops; k++) {
		uint64_t i = order[k];
		uint8_t wr = 0;

		if (t->ops[i].err == DCT_ERR_UNKNOWN && dct_kind_paths(t->ops[i].kind))
			p->info.unchecked++;
		if (infer_op(p, &t->ops[i], &wr)) {
			rp_fail(err, errlen, "out of memory");
			return -1;
		}
		p->opf[i] |= wr;
	}
	p->info.conflicts = p->conflicts;
	/* decide the types; symlinks get a sibling to point at */
	for (size_t ni = 1; ni < p->nnodes; ni++) {
		struct node *n = &p->nodes[ni];

		if (n->flags & N_CHANGED)
			p->info.changed_names++;
		if (n->init != S_EXISTS || (n->flags & N_BAD))
			continue;
		n->itype = (uint8_t)decide_type(n);
		if (n->itype == T_DIR)
			p->info.init_dirs++;
		else if (n->itype == T_REG)
			p->info.init_files++;
		if (n->itype != T_LNK)
			continue;
		p->info.init_links++;
		p->info.init_link_targets++;
		for (unsigned k = 0;; k++) {
			size_t len;

			if (n->len > DC_NAME_MAX - 24)	/* no room: point at "." */
				len = (size_t)snprintf(buf, sizeof(buf), ".");
			else if (k == 0)
				len = (size_t)snprintf(buf, sizeof(buf), "%s.dcbench-target",
						       p->names + n->name);
			else
				len = (size_t)snprintf(buf, sizeof(buf), "%s.dcbench-target%u",
						       p->names + n->name, k);
			if (buf[0] != '.' || buf[1] != '\0') {
				if (node_find(p, n->parent, buf, len) != NONE)
					continue;
			}
			n->target = name_store(p, buf, len);
			if (n->target == NONE) {
				rp_fail(err, errlen, "out of memory");
				return -1;
			}
			break;
		}
	}
	return 0;
}

/* ---- pass 4: dependencies --------------------------------------------------------- */

struct mstate {
	uint32_t wproc, wneed;	/* the last change, wproc NONE if none */
	struct dep *r;		/* readers since */
	size_t nr, cap;
};

/* A map (process, process) -> ops already waited for, to drop repeats. */
struct known {
	uint64_t *key;
	uint32_t *val;
	size_t mask, n;
};

static int known_grow(struct known *k)
{
	size_t nsize = k->mask ? (k->mask + 1) * 2 : 4096;
	uint64_t *key = malloc(nsize * sizeof(*key));
	uint32_t *val = malloc(nsize * sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		return -1;
	}
	memset(key, 0xff, nsize * sizeof(*key));
	for (size_t i = 0; k->mask && i <= k->mask; i++) {
		size_t j;

		if (k->key[i] == UINT64_MAX)
			continue;
		for (j = hash64(k->key[i]) & (nsize - 1); key[j] != UINT64_MAX;
		     j = (j + 1) & (nsize - 1))
			;
		key[j] = k->key[i];
		val[j] = k->val[i];
	}
	free(k->key);
	free(k->val);
	k->key = key;
	k->val = val;
	k->mask = nsize - 1;
	return 0;
}

/* The slot of (a, b); NULL when out of memory. */
static uint32_t *known_slot(struct known *k, uint32_t a, uint32_t b)
{
	uint64_t key = (uint64_t)a << 32 | b;
	size_t i;

	if ((k->n + 1) * 2 > k->mask + 1 && known_grow(k))
		return NULL;
	for (i = hash64(key) & k->mask; k->key[i] != UINT64_MAX; i = (i + 1) & k->mask)
		if (k->key[i] == key)
			return &k->val[i];
	k->key[i] = key;
	k->val[i] = 0;
	k->n++;
	return &k->val[i];
}

struct depbuf {
	struct dep *d;
	size_t n, cap;
};

static int depbuf_add(struct depbuf *b, uint32_t proc, uint32_t need)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->d[i].proc == proc) {
			if (b->d[i].need < need)
				b->d[i].need = need;
			return 0;
		}
	if (grow(&b->d, &b->cap, b->n + 1, sizeof(*b->d)))
		return -1;
	b->d[b->n].proc = proc;
	b->d[b->n].need = need;
	b->n++;
	return 0;
}

/* Op (pr, need) looks at changed name m. */
static int dep_read(struct mstate *m, struct depbuf *b, uint32_t pr, uint32_t need)
{
	if (m->wproc != NONE && m->wproc != pr && depbuf_add(b, m->wproc, m->wneed))
		return -1;
	if (m->nr && m->r[m->nr - 1].proc == pr) {
		m->r[m->nr - 1].need = need;
		return 0;
	}
	if (grow(&m->r, &m->cap, m->nr + 1, sizeof(*m->r)))
		return -1;
	m->r[m->nr].proc = pr;
	m->r[m->nr].need = need;
	m->nr++;
	return 0;
}

/* Op (pr, need) changes name m. */
static int dep_write(struct mstate *m, struct depbuf *b, uint32_t pr, uint32_t need)
{
	if (m->wproc != NONE && m->wproc != pr && depbuf_add(b, m->wproc, m->wneed))
		return -1;
	for (size_t i = 0; i < m->nr; i++)
		if (m->r[i].proc != pr && depbuf_add(b, m->r[i].proc, m->r[i].need))
			return -1;
	m->nr = 0;
	m->wproc = pr;
	m->wneed = need;
	return 0;
}

/* Reads of the changed names on the way to node ni (ni included unless skip). */
static int dep_chain(struct rp_prep *p, const uint32_t *midx, struct mstate *ms,
		     struct depbuf *b, uint32_t ni, uint32_t skip,
		     uint32_t pr, uint32_t need)
{
	for (uint32_t a = ni; a != 0; a = p->nodes[a].parent)
		if (midx[a] != NONE && a != skip &&
		    dep_read(&ms[midx[a]], b, pr, need))
			return -1;
	return 0;
}

static int dep_path(struct rp_prep *p, const uint32_t *midx, struct mstate *ms,
		    struct depbuf *b, uint32_t id, uint32_t skip,
		    uint32_t pr, uint32_t need)
{
	const struct pinfo *pi = &p->pi[id];

	if (pi->node == NONE)
		return 0;
	for (unsigned i = 0; i < pi->ndreq; i++)
		if (dep_chain(p, midx, ms, b, p->dreqs[pi->dreq + i], NONE, pr, need))
			return -1;
	return dep_chain(p, midx, ms, b, pi->node, skip, pr, need);
}

static int pass_deps(struct rp_prep *p, const uint64_t *order, char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	uint32_t *midx = malloc(p->nnodes * sizeof(*midx));
	uint32_t *cp = malloc((t->nops ? t->nops : 1) * sizeof(*cp));
	struct mstate *ms = NULL;
	struct known kn = { 0 };
	struct depbuf b = { 0 };
	struct { uint64_t op; struct dep d; } *tmp = NULL;
	size_t ntmp = 0, tcap = 0, nm = 0;
	uint64_t crit = 0;
	int rc = -1;

	if (!midx || !cp || known_grow(&kn))
		goto oom;
	for (size_t n = 0; n < p->nnodes; n++)
		midx[n] = (p->nodes[n].flags & N_CHANGED) ? (uint32_t)nm++ : NONE;
	ms = calloc(nm ? nm : 1, sizeof(*ms));
	if (!ms)
		goto oom;
	for (size_t i = 0; i < nm; i++)
		ms[i].wproc = NONE;

	for (uint64_t k = 0; k < t->nops; k++) {
		uint64_t i = order[k];
		const struct dct_op *o = &t->ops[i];
		uint32_t pr = p->owner[i];
		const struct dct_proc *pp = &t->procs[pr];
		uint32_t li = (uint32_t)(i - pp->first_op), c;
		struct dep d;
		uint32_t w1 = NONE, w2 = NONE;

		b.n = 0;
		if (struct_dep(t, pr, li, &d) && depbuf_add(&b, d.proc, d.need))
			goto oom;
		if (dct_kind_paths(o->kind) >= 1) {
			if (p->opf[i] & OF_WR1)
				w1 = p->pi[o->path].node;
			if (p->opf[i] & OF_WR2)
				w2 = p->pi[o->path2].node;
			if (dep_path(p, midx, ms, &b, o->path, w1, pr, li + 1))
				goto oom;
			if (o->kind == DCT_RENAME || o->kind == DCT_LINK)
				if (dep_path(p, midx, ms, &b, o->path2, w2, pr, li + 1))
					goto oom;
			if (w1 != NONE && midx[w1] != NONE &&
			    dep_write(&ms[midx[w1]], &b, pr, li + 1))
				goto oom;
			if (w2 != NONE && w2 != w1 && midx[w2] != NONE &&
			    dep_write(&ms[midx[w2]], &b, pr, li + 1))
				goto oom;
		}
		/* the critical path through everything kept */
		c = li ? cp[i - 1] : 0;
		if (li == 0 && pp->parent >= 0 && cp[pp->fork_op] > c)
			c = cp[pp->fork_op];
		for (size_t j = 0; j < b.n; j++) {
			uint32_t *kv;
			uint64_t tgt;

			if (b.d[j].proc == pr || b.d[j].need == 0)
				continue;
			tgt = t->procs[b.d[j].proc].first_op + b.d[j].need - 1;
			if (cp[tgt] > c)
				c = cp[tgt];
			kv = known_slot(&kn, pr, b.d[j].proc);
			if (!kv)
				goto oom;
			if (*kv >= b.d[j].need)
				continue;	/* already waited for as much */
			*kv = b.d[j].need;
			if (grow(&tmp, &tcap, ntmp + 1, sizeof(*tmp)))
				goto oom;
			tmp[ntmp].op = i;
			tmp[ntmp].d = b.d[j];
			ntmp++;
			if (o->kind != DCT_WAIT && !(j == 0 && struct_dep(t, pr, li, &d)))
				p->info.conflict_deps++;
		}
		cp[i] = c + 1;
		if (cp[i] > crit)
			crit = cp[i];
		/* a child starts knowing its parent got as far as the fork */
		if (o->kind == DCT_FORK) {
			uint32_t *kv = known_slot(&kn, o->child, pr);

			if (!kv)
				goto oom;
			*kv = li + 1;
		}
	}
	p->info.critical_ops_replay = crit;
	p->info.deps = ntmp;

	/* into CSR form, by op index */
	p->dep_off = calloc(t->nops + 1, sizeof(*p->dep_off));
	p->deps = malloc((ntmp ? ntmp : 1) * sizeof(*p->deps));
	if (!p->dep_off || !p->deps)
		goto oom;
	for (size_t j = 0; j < ntmp; j++)
		p->dep_off[tmp[j].op + 1]++;
	for (uint64_t i = 0; i < t->nops; i++)
		p->dep_off[i + 1] += p->dep_off[i];
	{
		uint64_t *fill = malloc((t->nops ? t->nops : 1) * sizeof(*fill));

		if (!fill)
			goto oom;
		memcpy(fill, p->dep_off, t->nops * sizeof(*fill));
		for (size_t j = 0; j < ntmp; j++) {
			const struct dct_proc *q = &t->procs[tmp[j].d.proc];

			p->deps[fill[tmp[j].op]++] = tmp[j].d;
			p->opf[tmp[j].op] |= OF_DEPS;
			p->opf[q->first_op + tmp[j].d.need - 1] |= OF_NOTIFY;
		}
		free(fill);
	}
	p->ndeps = ntmp;
	rc = 0;
	goto out;
oom:
	rp_fail(err, errlen, "out of memory");
out:
	for (size_t i = 0; ms && i < nm; i++)
		free(ms[i].r);
	free(ms);
	free(midx);
	free(cp);
	free(kn.key);
	free(kn.val);
	free(b.d);
	free(tmp);
	return rc;
}

/* ---- pass 5: private roots and copies --------------------------------------------- */

static int pass_roots(struct rp_prep *p, char *err, size_t errlen)
{
	size_t nroots = 0;

	for (size_t ni = 1; ni < p->nnodes; ni++) {
		uint32_t a = (uint32_t)ni;

		if (!(p->nodes[ni].flags & N_CHANGED))
			continue;
		while (p->nodes[a].depth > 2)
			a = p->nodes[a].parent;
		p->nodes[a].flags |= N_ROOT;
	}
	/* keep the outermost; mark everything below a root private */
	for (size_t ni = 1; ni < p->nnodes; ni++) {
		struct node *n = &p->nodes[ni];
		bool under = (p->nodes[n->parent].flags & N_PRIVATE) != 0;

		if (under)
			n->flags &= (uint16_t)~N_ROOT;
		if (under || (n->flags & N_ROOT))
			n->flags |= N_PRIVATE;
		if (n->flags & N_ROOT)
			nroots++;
	}
	p->roots = calloc(nroots + 1, sizeof(*p->roots));
	if (!p->roots) {
		rp_fail(err, errlen, "out of memory");
		return -1;
	}
	for (size_t ni = 1; ni < p->nnodes; ni++) {
		char path[DC_PATH_MAX + 1];
		size_t pos = sizeof(path) - 1;

		if (!(p->nodes[ni].flags & N_ROOT))
			continue;
		path[pos] = '\0';
		for (uint32_t a = (uint32_t)ni; a != 0; a = p->nodes[a].parent) {
			size_t l = p->nodes[a].len;

			if (l + 1 > pos)
				break;
			pos -= l;
			memcpy(path + pos, p->names + p->nodes[a].name, l);
			path[--pos] = '/';
		}
		p->roots[p->info.nroots] = arena_strndup(&p->arena, path + pos,
							 sizeof(path) - 1 - pos);
		if (!p->roots[p->info.nroots]) {
			rp_fail(err, errlen, "out of memory");
			return -1;
		}
		p->info.nroots++;
	}
	p->info.roots = (const char *const *)p->roots;
	return 0;
}

/* The name a node has in copy k (roots get ".k"), into buf. */
static size_t copy_name(const struct rp_prep *p, uint32_t ni, unsigned k,
			char *buf, size_t size)
{
	const struct node *n = &p->nodes[ni];

	if (k > 0 && (n->flags & N_ROOT))
		return (size_t)snprintf(buf, size, "%s.%u", p->names + n->name, k);
	return (size_t)snprintf(buf, size, "%s", p->names + n->name);
}

/*
 * Path s as copy k sees it, or NULL when it is the same as copy 0's.
 * A path whose text starts with a private root (before any "..") gets the
 * root renamed; one that reaches a private name only lexically is
 * rewritten as its lexical form.
 */
static char *copy_path(struct rp_prep *p, const char *s, uint32_t lexnode, unsigned k,
		       bool *too_long)
{
	char buf[DC_PATH_MAX + 64], name[DC_NAME_MAX + 16];
	const char *q = s;
	uint32_t cur = 0;

	*too_long = false;
	while (*q) {
		const char *e;
		size_t len, nl;

		while (*q == '/')
			q++;
		if (!*q)
			break;
		e = strchr(q, '/');
		len = e ? (size_t)(e - q) : strlen(q);
		if ((len == 2 && q[0] == '.' && q[1] == '.') || len > DC_NAME_MAX)
			break;
		cur = node_find(p, cur, q, len);
		if (cur == NONE)
			break;
		if (p->nodes[cur].flags & N_ROOT) {
			nl = copy_name(p, cur, k, name, sizeof(name));
			if ((size_t)(q - s) + nl + strlen(q + len) >= sizeof(buf)) {
				*too_long = true;
				return NULL;
			}
			snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(q - s), s, name, q + len);
			return arena_strndup(&p->arena, buf, strlen(buf));
		}
		q += len;
	}
	if (lexnode == NONE || lexnode == 0 || !(p->nodes[lexnode].flags & N_PRIVATE))
		return NULL;
	{
		size_t pos = sizeof(buf) - 1;

		buf[pos] = '\0';
		for (uint32_t a = lexnode; a != 0; a = p->nodes[a].parent) {
			size_t l = copy_name(p, a, k, name, sizeof(name));

			if (l + 1 > pos) {
				*too_long = true;
				return NULL;
			}
			pos -= l;
			memcpy(buf + pos, name, l);
			buf[--pos] = '/';
		}
		return arena_strndup(&p->arena, buf + pos, sizeof(buf) - 1 - pos);
	}
}

/* Fill in slash, parent and name for an entry whose s is set. */
static int cpath_finish(struct rp_prep *p, struct cpath *c, uint8_t use)
{
	size_t len = strlen(c->s);
	const char *last;

	if (use & PU_SLASH) {
		char *sl = arena_alloc(&p->arena, len + 2);

		if (!sl)
			return -1;
		memcpy(sl, c->s, len);
		sl[len] = '/';
		sl[len + 1] = '\0';
		c->slash = sl;
	}
	if (!(use & PU_PARENT))
		return 0;
	last = strrchr(c->s, '/');
	if (!last || !last[1] || !strcmp(last + 1, "..") || !strcmp(last + 1, ".") ||
	    strlen(last + 1) > DC_NAME_MAX)
		return 0;	/* no name to create or remove: replayed as a lookup */
	c->parent = last == c->s ? "/" : arena_strndup(&p->arena, c->s, (size_t)(last - c->s));
	if (!c->parent)
		return -1;
	c->name = last + 1;
	c->nlen = (uint32_t)strlen(last + 1);
	return 0;
}

/* Make the path tables of copies [p->ncopies, k). */
static int build_copies(struct rp_prep *p, unsigned k, char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	struct cpath **cp;

	if (k <= p->ncopies)
		return 0;
	cp = realloc(p->cp, k * sizeof(*cp));
	if (!cp)
		goto oom;
	p->cp = cp;
	for (unsigned c = p->ncopies; c < k; c++) {
		/* a root's new name must not be a name the trace uses */
		for (size_t ni = 1; c > 0 && ni < p->nnodes; ni++) {
			char name[DC_NAME_MAX + 16];
			size_t nl;

			if (!(p->nodes[ni].flags & N_ROOT))
				continue;
			nl = copy_name(p, (uint32_t)ni, c, name, sizeof(name));
			if (nl > DC_NAME_MAX ||
			    node_find(p, p->nodes[ni].parent, name, nl) != NONE) {
				rp_fail(err, errlen, "copy %u: the private root name "
				     "\"%s\" is too long or used by the trace", c, name);
				return -1;
			}
		}
		cp[c] = calloc(t->npaths ? t->npaths : 1, sizeof(**cp));
		if (!cp[c])
			goto oom;
		p->ncopies = c + 1;
		for (uint32_t id = 0; id < t->npaths; id++) {
			struct cpath *e = &cp[c][id];
			const struct pinfo *pi = &p->pi[id];
			bool tl = false;
			char *s = NULL;

			if (!(pi->use & (PU_PATH | PU_TEXT)))
				continue;
			if (c > 0) {
				if (pi->use & PU_PATH)
					s = copy_path(p, t->paths[id],
						      (pi->use & PU_LONGNAME) ? NONE : pi->node,
						      c, &tl);
				else if (t->paths[id][0] == '/')
					s = copy_path(p, t->paths[id], NONE, c, &tl);
				if (!s && !tl) {
					*e = cp[0][id];	/* shared */
					continue;
				}
				if (tl) {
					/* longer than a path may be: resolves to ENAMETOOLONG */
					s = arena_alloc(&p->arena, DC_PATH_MAX + 2);
					if (!s)
						goto oom;
					memset(s, 'x', DC_PATH_MAX + 1);
					s[0] = '/';
					s[DC_PATH_MAX + 1] = '\0';
				}
			}
			e->s = s ? s : t->paths[id];
			if ((pi->use & PU_PATH) && cpath_finish(p, e, pi->use))
				goto oom;
		}
	}
	return 0;
oom:
	rp_fail(err, errlen, "out of memory");
	return -1;
}

/* ---- preparation ---------------------------------------------------------------- */

int rp_prepare(const struct dct_trace *t, struct rp_prep **out, char *err, size_t errlen)
{
	struct rp_prep *p = calloc(1, sizeof(*p));
	uint64_t *order = NULL;

	if (!p)
		goto oom;
	p->t = t;
	if (t->nprocs == 0 || t->nops == 0) {
		rp_fail(err, errlen, "the trace holds no processes");
		goto fail;
	}
	if (t->nprocs >= NONE / RP_MAX_COPIES) {
		rp_fail(err, errlen, "the trace has too many processes (%u)", t->nprocs);
		goto fail;
	}
	p->owner = malloc(t->nops * sizeof(*p->owner));
	p->opf = calloc(t->nops, 1);
	order = malloc(t->nops * sizeof(*order));
	if (!p->owner || !p->opf || !order || nodes_init(p) || pass_paths(p))
		goto oom;
	if (pass_order(p, order, err, errlen) || pass_infer(p, order, err, errlen) ||
	    pass_deps(p, order, err, errlen) || pass_roots(p, err, errlen) ||
	    build_copies(p, 1, err, errlen))
		goto fail;
	free(order);
	order = NULL;

	p->info.procs = t->nprocs;
	p->info.ops = t->nops;
	for (uint64_t i = 0; i < t->nops; i++) {
		const struct dct_op *o = &t->ops[i];
		int np = dct_kind_paths(o->kind);

		if (np == 0)
			continue;
		p->info.path_ops++;
		p->info.components += p->pi[o->path].ncomp;
		if (np == 2 && o->kind != DCT_SYMLINK)
			p->info.components += p->pi[o->path2].ncomp;
		switch (o->kind) {
		case DCT_OPEN:
			p->info.planned_lookups += (o->flags & DCT_F_CREAT) ? 2 : 1;
			break;
		case DCT_MKDIR: case DCT_MKNOD: case DCT_UNLINK: case DCT_RMDIR:
		case DCT_SYMLINK:
			p->info.planned_lookups += 2;
			break;
		case DCT_RENAME:
			p->info.planned_lookups += 4;
			break;
		case DCT_LINK:
			p->info.planned_lookups += 3;
			break;
		default:
			p->info.planned_lookups += 1;
			break;
		}
	}
	p->info.bound = (double)t->nops / (double)p->info.critical_ops;
	p->info.bound_replay = (double)t->nops / (double)p->info.critical_ops_replay;
	*out = p;
	return 0;
oom:
	rp_fail(err, errlen, "out of memory");
fail:
	free(order);
	rp_free(p);
	return -1;
}

const struct rp_info *rp_get_info(const struct rp_prep *p)
{
	return &p->info;
}

void rp_free(struct rp_prep *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->names);
	free(p->ht);
	free(p->pi);
	free(p->dreqs);
	free(p->owner);
	free(p->opf);
	free(p->dep_off);
	free(p->deps);
	for (unsigned k = 0; k < p->ncopies; k++)
		free(p->cp[k]);
	free(p->cp);
	free(p->roots);
	arena_free(&p->arena);
	free(p);
}

/* ---- the namespace, built before each run ------------------------------------------ */

/*
 * Add initial name ni of copy k in directory dir.  Returns the inode that
 * names below it go into, 0 when it could not be added (a contradiction
 * the inference already counted: a name below a file, say; the name and
 * what is below it are left out), or a negative errno when out of memory.
 */
static int64_t add_initial(struct rp_prep *p, struct dc_memfs *fs, uint32_t ni,
			   unsigned k, uint64_t dir)
{
	const struct node *n = &p->nodes[ni];
	char name[DC_NAME_MAX + 16];
	struct dc_inode in;
	int r;

	copy_name(p, ni, k, name, sizeof(name));
	if (n->itype == T_LNK) {
		/* the link's target: a sibling of the type it is used as */
		const char *tn = p->names + n->target;
		bool self = !strcmp(tn, ".");

		if (!self) {
			r = dc_memfs_add(fs, dir, tn, (n->flags & N_LINKDIR) ?
					 S_IFDIR | 0755 : S_IFREG | 0644, NULL, &in);
			if (r == -ENOMEM)
				return r;
		}
		r = dc_memfs_add(fs, dir, name, S_IFLNK | 0777, tn, &in);
		if (r)
			return r == -ENOMEM ? r : 0;
		if (self)
			return (int64_t)dir;
		/* names below the link live in its target */
		r = dc_memfs_lookup(fs, dir, tn, &in);
		return r ? 0 : (int64_t)in.ino;
	}
	r = dc_memfs_add(fs, dir, name, n->itype == T_DIR ? S_IFDIR | 0755 :
			 S_IFREG | 0644, NULL, &in);
	if (r)
		return r == -ENOMEM ? r : 0;
	return (int64_t)in.ino;
}

static int build_namespace(struct rp_prep *p, struct dc_memfs *fs, unsigned copies,
			   char *err, size_t errlen)
{
	size_t nn = p->nnodes;
	uint64_t *ino = calloc(nn * copies, sizeof(*ino));

	if (!ino) {
		rp_fail(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned k = 0; k < copies; k++)
		ino[(size_t)k * nn] = DC_MEMFS_ROOT;
	for (size_t ni = 1; ni < nn; ni++) {
		const struct node *n = &p->nodes[ni];
		bool priv = (n->flags & N_PRIVATE) != 0;
		bool ppriv = (p->nodes[n->parent].flags & N_PRIVATE) != 0;

		if (n->init != S_EXISTS || (n->flags & N_BAD))
			continue;
		for (unsigned k = 0; k < (priv ? copies : 1); k++) {
			uint64_t dir = ino[(ppriv ? (size_t)k * nn : 0) + n->parent];
			int64_t r;

			if (!dir)
				continue;	/* its directory was left out */
			r = add_initial(p, fs, (uint32_t)ni, k, dir);
			if (r < 0) {
				rp_fail(err, errlen, "building the namespace: out of memory");
				free(ino);
				return -1;
			}
			ino[(priv ? (size_t)k * nn : 0) + ni] = (uint64_t)r;
		}
	}
	free(ino);
	return 0;
}

/* ---- the replay --------------------------------------------------------------------- */

struct rproc {
	uint64_t first, nops, next;	/* next: owned by the running worker */
	uint32_t copy, proc;
	struct rproc *qprev, *qnext;	/* ready queue */
	uint64_t done;			/* published progress; atomic */
	struct rproc *waiters;		/* parked on this one; wl (head read racily) */
	struct rproc *wnext;
	uint64_t wneed;
	pthread_mutex_t wl;
};

struct rqueue {
	pthread_mutex_t lock;
	struct rproc *head, *tail;
};

struct rctx;

struct worker {
	struct rctx *x;
	unsigned id;
	pthread_t th;
	struct rqueue q;
	uint64_t ops;		/* read by the progress printer: relaxed */
	uint64_t checked, mismatches, unchecked, update_errors;
	uint64_t op_ns;		/* wall time inside path ops: own thread only */
	uint64_t update_ns;	/* ... of it in memfs updates: own thread only */
} __attribute__((aligned(64)));

struct rctx {
	struct rp_prep *p;
	const struct rp_config *cfg;
	struct dc_cache *c;
	struct dc_memfs *fs;
	struct rproc *procs;
	uint64_t nprocs;		/* all copies */
	struct worker *w;
	unsigned nw;

	pthread_mutex_t idle_lock;
	pthread_cond_t idle_cv;
	unsigned sleepers;		/* atomic, changed under idle_lock */
	uint64_t pending;		/* rprocs in queues; atomic */
	uint64_t remaining;		/* rprocs not finished; atomic */
	int finished;			/* atomic */
	int deadlock;

	pthread_mutex_t gate_lock;
	pthread_cond_t gate_cv;
	int go;
	unsigned exited;		/* gate_lock */
	pthread_cond_t done_cv;

	pthread_mutex_t log_lock;
	unsigned printed;
};

static void q_push(struct rqueue *q, struct rproc *r)
{
	pthread_mutex_lock(&q->lock);
	r->qprev = NULL;
	r->qnext = q->head;
	if (q->head)
		q->head->qprev = r;
	else
		q->tail = r;
	__atomic_store_n(&q->head, r, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&q->lock);
}

/* From the head (own queue: newest first) or the tail (stealing: oldest). */
static struct rproc *q_pop(struct rqueue *q, bool tail)
{
	struct rproc *r;

	if (!__atomic_load_n(&q->head, __ATOMIC_RELAXED))
		return NULL;
	pthread_mutex_lock(&q->lock);
	r = tail ? q->tail : q->head;
	if (r) {
		if (r->qprev)
			r->qprev->qnext = r->qnext;
		else
			__atomic_store_n(&q->head, r->qnext, __ATOMIC_RELAXED);
		if (r->qnext)
			r->qnext->qprev = r->qprev;
		else
			q->tail = r->qprev;
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

static void make_ready(struct worker *w, struct rproc *r)
{
	struct rctx *x = w->x;

	q_push(&w->q, r);
	__atomic_add_fetch(&x->pending, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&x->sleepers, __ATOMIC_SEQ_CST)) {
		pthread_mutex_lock(&x->idle_lock);
		pthread_cond_signal(&x->idle_cv);
		pthread_mutex_unlock(&x->idle_lock);
	}
}

static struct rproc *take(struct worker *w)
{
	struct rctx *x = w->x;
	struct rproc *r = q_pop(&w->q, false);

	for (unsigned i = 1; !r && i < x->nw; i++)
		r = q_pop(&x->w[(w->id + i) % x->nw].q, true);
	if (r)
		__atomic_sub_fetch(&x->pending, 1, __ATOMIC_SEQ_CST);
	return r;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* The next ready rproc, or NULL when the replay is over. */
static struct rproc *next_proc(struct worker *w)
{
	struct rctx *x = w->x;
	struct rproc *r;

	for (unsigned spin = 0; spin < 2000; spin++) {
		if (__atomic_load_n(&x->finished, __ATOMIC_ACQUIRE))
			return NULL;
		if (__atomic_load_n(&x->pending, __ATOMIC_RELAXED) && (r = take(w)))
			return r;
		if (spin >= 1000)
			sched_yield();
		else
			cpu_relax();
	}
	pthread_mutex_lock(&x->idle_lock);
	__atomic_add_fetch(&x->sleepers, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		if (__atomic_load_n(&x->finished, __ATOMIC_ACQUIRE)) {
			r = NULL;
			break;
		}
		if (__atomic_load_n(&x->pending, __ATOMIC_SEQ_CST)) {
			pthread_mutex_unlock(&x->idle_lock);
			r = take(w);
			pthread_mutex_lock(&x->idle_lock);
			if (r)
				break;
			continue;
		}
		if (__atomic_load_n(&x->sleepers, __ATOMIC_SEQ_CST) == x->nw) {
			/* nobody runs, nothing is ready, and work remains */
			x->deadlock = 1;
			__atomic_store_n(&x->finished, 1, __ATOMIC_RELEASE);
			pthread_cond_broadcast(&x->idle_cv);
			r = NULL;
			break;
		}
		pthread_cond_wait(&x->idle_cv, &x->idle_lock);
	}
	__atomic_sub_fetch(&x->sleepers, 1, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&x->idle_lock);
	return r;
}

/* Park r until q has done need ops; false if that happened meanwhile. */
static bool park(struct rproc *r, struct rproc *q, uint64_t need)
{
	pthread_mutex_lock(&q->wl);
	r->wneed = need;
	r->wnext = q->waiters;
	__atomic_store_n(&q->waiters, r, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&q->done, __ATOMIC_SEQ_CST) >= need) {
		__atomic_store_n(&q->waiters, r->wnext, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&q->wl);
		return false;
	}
	pthread_mutex_unlock(&q->wl);
	return true;
}

static void publish(struct worker *w, struct rproc *r, uint64_t n)
{
	__atomic_store_n(&r->done, n, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&r->waiters, __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&r->wl);
	for (struct rproc **pp = &r->waiters; *pp;) {
		struct rproc *x = *pp;

		if (x->wneed <= n) {
			*pp = x->wnext;
			make_ready(w, x);
		} else {
			pp = &x->wnext;
		}
	}
	pthread_mutex_unlock(&r->wl);
}

static const char *err_text(int e, char *buf, size_t size)
{
	const char *n;

	if (e == 0)
		return "success";
	if (e == DCT_ERR_UNKNOWN)
		return "unknown";
	n = dct_errno_name(e);
	if (n)
		return n;
	snprintf(buf, size, "errno %d", e);
	return buf;
}

static void mismatch(struct worker *w, const struct rproc *r, const struct dct_op *o,
		     int got)
{
	struct rctx *x = w->x;
	const struct dct_trace *t = x->p->t;
	const struct cpath *cp = x->p->cp[r->copy];
	char b1[32], b2[32];

	w->mismatches++;
	if (!x->cfg->mismatch_log)
		return;
	pthread_mutex_lock(&x->log_lock);
	if (x->printed < x->cfg->max_print) {
		x->printed++;
		fprintf(x->cfg->mismatch_log,
			"mismatch: copy %u pid %u line %u %s %s%s%s: recorded %s, replay %s\n",
			r->copy, t->procs[r->proc].pid, o->line, dct_kind_name(o->kind),
			cp[o->path].s, o->kind == DCT_RENAME || o->kind == DCT_LINK ||
			o->kind == DCT_SYMLINK ? " -> " : "",
			o->kind == DCT_RENAME || o->kind == DCT_LINK ||
			o->kind == DCT_SYMLINK ? cp[o->path2].s : "",
			err_text(o->err, b1, sizeof(b1)), err_text(got, b2, sizeof(b2)));
	}
	pthread_mutex_unlock(&x->log_lock);
}

/* Nanoseconds of wall time: a thread asleep on a lock keeps counting. */
static uint64_t stamp_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Close the stamp t0 opened before a memfs update: the backend's work, not
 * the cache's, so it is left out of the time in the cache. */
static void untime(struct worker *w, uint64_t t0)
{
	w->update_ns += stamp_ns() - t0;
}

/* exec_op's answer for an op it cannot check (nothing to create or remove) */
#define GOT_SKIP	(-2)

static void check(struct worker *w, const struct rproc *r, const struct dct_op *o, int got)
{
	int rec = o->err;

	if (rec == DCT_ERR_UNKNOWN || got == GOT_SKIP) {
		w->unchecked++;
		return;
	}
	w->checked++;
	if (rec == got || (!err_determined(o->kind, rec) && got == 0))
		return;
	mismatch(w, r, o, got);
}

/* Resolve s; the result as a positive errno, the answer in *st. */
static int look(struct dc_cache *c, const char *s, unsigned fl, struct dc_inode *st)
{
	int r = dc_resolve(c, NULL, s, fl, st);

	return r < 0 ? -r : 0;
}

/*
 * The directory of e and the entry for its name in it.  Returns a positive
 * errno when the directory cannot be reached; otherwise 0 with *dir
 * referenced, *dino its inode, and *exists / *st about the name.
 */
static int find_parent(struct dc_cache *c, const struct cpath *e, struct dc_dentry **dir,
		       uint64_t *dino, bool *exists, struct dc_inode *st)
{
	struct dc_dentry *d;
	struct dc_inode dst;
	int r;

	r = dc_walk(c, NULL, e->parent, 0, dir);
	if (r < 0)
		return -r;
	r = dc_dentry_stat(*dir, &dst);
	if (r < 0 || !S_ISDIR(dst.mode)) {
		dc_put(c, *dir);
		return r < 0 ? -r : ENOTDIR;
	}
	*dino = dst.ino;
	r = dc_lookup(c, *dir, e->name, e->nlen, &d);
	*exists = r == 0;
	if (r == 0) {
		r = dc_dentry_stat(d, st);
		dc_put(c, d);
		if (r < 0)
			*exists = false;
		return 0;
	}
	if (r == -ENOENT)
		return 0;
	dc_put(c, *dir);
	return -r;
}

/* MKDIR, MKNOD, SYMLINK, UNLINK, RMDIR, OPEN with O_CREAT. */
static int do_name_op(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct rctx *x = w->x;
	struct dc_cache *c = x->c;
	const struct cpath *cp = x->p->cp[r->copy];
	const struct cpath *e = &cp[o->path];
	struct dc_dentry *dir;
	struct dc_inode st;
	struct dc_inode in;
	uint64_t dino;
	/* apply what the trace did; an rmdir said ENOTEMPTY is tried, since
	 * only the backend knows whether the directory is empty */
	bool exists, apply = o->err == 0 ||
			     (o->kind == DCT_RMDIR && o->err == ENOTEMPTY);
	uint64_t t0;
	int got, m;

	got = find_parent(c, e, &dir, &dino, &exists, &st);
	if (got)
		return got;
	switch (o->kind) {
	case DCT_OPEN:
		if (exists) {
			if (o->flags & DCT_F_EXCL)
				got = EEXIST;
			else if (S_ISLNK(st.mode))
				got = look(c, (o->flags & DCT_F_SLASH) ? e->slash : e->s, 0, &st);
			if (!got && S_ISDIR(st.mode))
				got = EISDIR;
			break;
		}
		/* fall through - create a file */
	case DCT_MKDIR:
	case DCT_MKNOD:
	case DCT_SYMLINK:
		if (exists) {
			got = EEXIST;
			break;
		}
		if (!apply)
			break;
		m = o->kind == DCT_MKDIR ? S_IFDIR | 0755 :
		    o->kind == DCT_SYMLINK ? S_IFLNK | 0777 : S_IFREG | 0644;
		t0 = stamp_ns();
		got = -dc_memfs_add(x->fs, dino, e->name, (uint32_t)m,
				    o->kind == DCT_SYMLINK ? cp[o->path2].s : NULL, &in);
		untime(w, t0);
		if (got) {
			w->update_errors++;
			break;
		}
		if (o->kind == DCT_MKDIR)
			dc_mkdir(c, dir, e->name, &in);
		else if (o->kind == DCT_SYMLINK)
			dc_symlink(c, dir, e->name, &in, cp[o->path2].s);
		else
			dc_create(c, dir, e->name, &in);
		break;
	case DCT_UNLINK:
	case DCT_RMDIR:
		if (!exists) {
			got = ENOENT;
			break;
		}
		if (o->kind == DCT_UNLINK && S_ISDIR(st.mode)) {
			got = EISDIR;
			break;
		}
		if (o->kind == DCT_RMDIR && !S_ISDIR(st.mode)) {
			got = ENOTDIR;
			break;
		}
		if (!apply)
			break;
		t0 = stamp_ns();
		got = -dc_memfs_remove(x->fs, dino, e->name, o->kind == DCT_RMDIR);
		untime(w, t0);
		if (got == ENOTEMPTY)
			break;
		if (got) {
			w->update_errors++;
			break;
		}
		if (o->kind == DCT_RMDIR)
			dc_rmdir(c, dir, e->name);
		else
			dc_unlink(c, dir, e->name);
		break;
	default:
		break;
	}
	dc_put(c, dir);
	return got;
}

static int do_rename(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct rctx *x = w->x;
	struct dc_cache *c = x->c;
	const struct cpath *cp = x->p->cp[r->copy];
	const struct cpath *e1 = &cp[o->path], *e2 = &cp[o->path2];
	struct dc_dentry *od, *nd;
	struct dc_inode s1, s2;
	uint64_t oino, nino;
	bool ex1, ex2;
	unsigned fl = 0;
	int got;

	got = find_parent(c, e1, &od, &oino, &ex1, &s1);
	if (got)
		return got;
	got = find_parent(c, e2, &nd, &nino, &ex2, &s2);
	if (got) {
		dc_put(c, od);
		return got;
	}
	if (o->flags & DCT_F_NOREPLACE)
		fl |= DC_RENAME_NOREPLACE;
	if (o->flags & DCT_F_EXCHANGE)
		fl |= DC_RENAME_EXCHANGE;
	if (!ex1)
		got = ENOENT;
	else if (!S_ISDIR(s1.mode) && ((o->flags & DCT_F_SLASH) ||
		 (!(fl & DC_RENAME_EXCHANGE) && (o->flags & DCT_F_SLASH2))))
		got = ENOTDIR;		/* "file/" names a directory */
	else if ((fl & DC_RENAME_NOREPLACE) && ex2)
		got = EEXIST;
	else if ((fl & DC_RENAME_EXCHANGE) && !ex2)
		got = ENOENT;
	else if (o->err == 0) {
		uint64_t t0 = stamp_ns();

		got = -dc_memfs_rename(x->fs, oino, e1->name, nino, e2->name, fl);
		untime(w, t0);
		if (!got)
			dc_rename(c, od, e1->name, nd, e2->name, fl);
	}
	dc_put(c, od);
	dc_put(c, nd);
	/* an error the names do not decide (EINVAL, EXDEV, EBUSY, ...): which
	 * of the two it was about is not recorded */
	if (o->err > 0 && !err_determined(o->kind, o->err))
		return GOT_SKIP;
	return got;
}

static int do_link(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct rctx *x = w->x;
	struct dc_cache *c = x->c;
	const struct cpath *cp = x->p->cp[r->copy];
	const struct cpath *e1 = &cp[o->path], *e2 = &cp[o->path2];
	struct dc_dentry *nd;
	struct dc_inode s1, s2;
	struct dc_inode in;
	uint64_t nino;
	bool ex2;
	int got;

	got = look(c, (o->flags & DCT_F_SLASH) ? e1->slash : e1->s,
		   (o->flags & DCT_F_NOFOLLOW) ? DC_NOFOLLOW : 0, &s1);
	if (got)
		return got;
	if (S_ISDIR(s1.mode))
		return EPERM;
	got = find_parent(c, e2, &nd, &nino, &ex2, &s2);
	if (got)
		return got;
	if (ex2)
		got = EEXIST;
	else if (o->err == 0) {
		uint64_t t0 = stamp_ns();

		got = -dc_memfs_link(x->fs, s1.ino, nino, e2->name, &in);
		untime(w, t0);
		if (got)
			w->update_errors++;
		else
			dc_link(c, nd, e2->name, &in);
	}
	dc_put(c, nd);
	if (o->err > 0 && !err_determined(o->kind, o->err))
		return GOT_SKIP;	/* as for rename */
	return got;
}

/* One op against the cache; the outcome as a positive errno or 0. */
static int exec_op(struct worker *w, const struct rproc *r, const struct dct_op *o)
{
	struct dc_cache *c = w->x->c;
	const struct cpath *e = &w->x->p->cp[r->copy][o->path];
	const char *s = (o->flags & DCT_F_SLASH) ? e->slash : e->s;
	unsigned nofollow = (o->flags & DCT_F_NOFOLLOW) ? DC_NOFOLLOW : 0;
	struct dc_inode st;
	int got;

	switch (o->kind) {
	case DCT_OPEN:
		if ((o->flags & DCT_F_CREAT) && e->name)
			return do_name_op(w, r, o);
		got = look(c, s, nofollow, &st);
		if (got)
			return got;
		if (S_ISLNK(st.mode))
			return ELOOP;
		if ((o->flags & DCT_F_DIRECTORY) && !S_ISDIR(st.mode))
			return ENOTDIR;
		if ((o->flags & DCT_F_TRUNC) && S_ISDIR(st.mode))
			return EISDIR;
		return 0;
	case DCT_STAT: case DCT_ACCESS: case DCT_UTIMENS: case DCT_CHMOD:
	case DCT_CHOWN:
		return look(c, s, nofollow, &st);
	case DCT_TRUNCATE:
		got = look(c, s, 0, &st);
		return got ? got : S_ISDIR(st.mode) ? EISDIR : 0;
	case DCT_LSTAT:
		return look(c, s, DC_NOFOLLOW, &st);
	case DCT_READLINK:
		got = look(c, s, DC_NOFOLLOW, &st);
		return got ? got : S_ISLNK(st.mode) ? 0 : EINVAL;
	case DCT_EXECVE:
		got = look(c, s, 0, &st);
		return got ? got : S_ISDIR(st.mode) ? EACCES : 0;
	case DCT_CHDIR:
		got = look(c, s, 0, &st);
		return got ? got : S_ISDIR(st.mode) ? 0 : ENOTDIR;
	case DCT_MKDIR: case DCT_MKNOD: case DCT_SYMLINK: case DCT_UNLINK:
	case DCT_RMDIR:
		if (o->kind == DCT_SYMLINK &&
		    w->x->p->cp[r->copy][o->path2].s[0] == '\0')
			return ENOENT;	/* an empty target: before any lookup */
		if (e->name)
			return do_name_op(w, r, o);
		/* "/" or a name ending in "..": nothing to make or remove */
		got = look(c, s, DC_NOFOLLOW, &st);
		if (o->kind == DCT_MKDIR || o->kind == DCT_MKNOD || o->kind == DCT_SYMLINK)
			return got ? got : EEXIST;
		return GOT_SKIP;		/* the walk only, not checked */
	case DCT_RENAME:
		if (e->name && w->x->p->cp[r->copy][o->path2].name)
			return do_rename(w, r, o);
		look(c, s, DC_NOFOLLOW, &st);
		return GOT_SKIP;
	case DCT_LINK:
		if (w->x->p->cp[r->copy][o->path2].name)
			return do_link(w, r, o);
		look(c, s, DC_NOFOLLOW, &st);
		return GOT_SKIP;
	default:
		return 0;
	}
}

/*
 * A path op's outcome: exec_op's, or in the null mode the recorded one.
 * Every mode pays these two stamps per op, so the null mode's total is
 * what the measurement itself adds to every mode's.
 */
static int answer(struct worker *w, const struct rproc *r, const struct dct_op *o,
		  bool null)
{
	uint64_t t0 = stamp_ns();
	int got = null ? o->err : exec_op(w, r, o);

	w->op_ns += stamp_ns() - t0;
	return got;
}

/* Run r until it exits or must wait. */
static void run_proc(struct worker *w, struct rproc *r)
{
	struct rctx *x = w->x;
	const struct rp_prep *p = x->p;
	const struct dct_op *ops = p->t->ops;
	struct rproc *base = x->procs + (size_t)r->copy * p->t->nprocs;
	bool null = x->cfg->mode == RP_NULL;
	uint64_t li = r->next;

	for (;;) {
		uint64_t i = r->first + li;
		const struct dct_op *o = &ops[i];
		uint8_t f = p->opf[i];

		if (f & OF_DEPS) {
			for (uint64_t d = p->dep_off[i]; d < p->dep_off[i + 1]; d++) {
				struct rproc *q = &base[p->deps[d].proc];
				uint32_t need = p->deps[d].need;

				if (__atomic_load_n(&q->done, __ATOMIC_ACQUIRE) >= need)
					continue;
				/* before parking: once parked, another worker may run r */
				r->next = li;
				if (park(r, q, need))
					return;
			}
		}
		if (o->kind == DCT_FORK) {
			make_ready(w, &base[o->child]);
		} else if (o->kind == DCT_EXIT || o->kind == DCT_WAIT) {
			;
		} else {
			check(w, r, o, answer(w, r, o, null));
		}
		li++;
		__atomic_store_n(&w->ops, w->ops + 1, __ATOMIC_RELAXED);
		if (f & OF_NOTIFY)
			publish(w, r, li);
		if (li == r->nops) {
			r->next = li;
			if (__atomic_sub_fetch(&x->remaining, 1, __ATOMIC_SEQ_CST) == 0) {
				pthread_mutex_lock(&x->idle_lock);
				__atomic_store_n(&x->finished, 1, __ATOMIC_RELEASE);
				pthread_cond_broadcast(&x->idle_cv);
				pthread_mutex_unlock(&x->idle_lock);
			}
			return;
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rctx *x = w->x;
	struct rproc *r;

	pthread_mutex_lock(&x->gate_lock);
	while (!x->go)
		pthread_cond_wait(&x->gate_cv, &x->gate_lock);
	pthread_mutex_unlock(&x->gate_lock);

	while ((r = next_proc(w)))
		run_proc(w, r);

	pthread_mutex_lock(&x->gate_lock);
	if (++x->exited == x->nw)
		pthread_cond_signal(&x->done_cv);
	pthread_mutex_unlock(&x->gate_lock);
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static void ctx_destroy(struct rctx *x)
{
	for (uint64_t i = 0; x->procs && i < x->nprocs; i++)
		pthread_mutex_destroy(&x->procs[i].wl);
	for (unsigned i = 0; x->w && i < x->nw; i++)
		pthread_mutex_destroy(&x->w[i].q.lock);
	free(x->procs);
	free(x->w);
	if (x->c)
		dc_cache_destroy(x->c);
	if (x->fs)
		dc_memfs_free(x->fs);
	pthread_mutex_destroy(&x->idle_lock);
	pthread_cond_destroy(&x->idle_cv);
	pthread_mutex_destroy(&x->gate_lock);
	pthread_cond_destroy(&x->gate_cv);
	pthread_cond_destroy(&x->done_cv);
	pthread_mutex_destroy(&x->log_lock);
}

int rp_run(struct rp_prep *p, const struct rp_config *cfg, struct rp_result *res,
	   char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	struct rctx x;
	struct rusage ru0, ru1;
	struct dc_stats ds;
	double t0, t1, last = 0;
	unsigned started = 0;
	bool progress_shown = false;
	uint64_t total_ops;
	int rc = -1, r;

	memset(res, 0, sizeof(*res));
	if (cfg->mode < 0 || cfg->mode >= RP_NMODES || cfg->threads < 1 ||
	    cfg->threads > RP_MAX_THREADS || cfg->copies < 1 ||
	    cfg->copies > RP_MAX_COPIES) {
		rp_fail(err, errlen, "bad replay configuration");
		return -1;
	}
	if (build_copies(p, cfg->copies, err, errlen))
		return -1;

	memset(&x, 0, sizeof(x));
	x.p = p;
	x.cfg = cfg;
	x.nw = cfg->threads;
	x.nprocs = (uint64_t)t->nprocs * cfg->copies;
	pthread_mutex_init(&x.idle_lock, NULL);
	pthread_cond_init(&x.idle_cv, NULL);
	pthread_mutex_init(&x.gate_lock, NULL);
	pthread_cond_init(&x.gate_cv, NULL);
	pthread_cond_init(&x.done_cv, NULL);
	pthread_mutex_init(&x.log_lock, NULL);
	x.procs = calloc(x.nprocs, sizeof(*x.procs));
	x.w = aligned_alloc(64, ((x.nw * sizeof(*x.w)) + 63) / 64 * 64);
	if (!x.procs || !x.w) {
		rp_fail(err, errlen, "out of memory");
		goto out;
	}
	memset(x.w, 0, x.nw * sizeof(*x.w));
	for (uint64_t i = 0; i < x.nprocs; i++) {
		struct rproc *rp = &x.procs[i];
		const struct dct_proc *tp = &t->procs[i % t->nprocs];

		rp->copy = (uint32_t)(i / t->nprocs);
		rp->proc = (uint32_t)(i % t->nprocs);
		rp->first = tp->first_op;
		rp->nops = tp->nops;
		pthread_mutex_init(&rp->wl, NULL);
	}
	for (unsigned i = 0; i < x.nw; i++) {
		x.w[i].x = &x;
		x.w[i].id = i;
		pthread_mutex_init(&x.w[i].q.lock, NULL);
	}
	x.remaining = x.nprocs;

	/* the namespace and the cache: not timed */
	if (cfg->mode != RP_NULL) {
		struct dc_options o;

		r = dc_memfs_new(&x.fs);
		if (r) {
			rp_fail(err, errlen, "memfs: %s", strerror(-r));
			goto out;
		}
		if (build_namespace(p, x.fs, cfg->copies, err, errlen))
			goto out;
		memset(&o, 0, sizeof(o));
		o.mode = (enum dc_mode)cfg->mode;
		o.backend = dc_memfs_backend(x.fs);
		r = dc_cache_create(&o, &x.c);
		if (r) {
			rp_fail(err, errlen, "cache: %s", strerror(-r));
			goto out;
		}
	}
	/* the processes that start on their own, spread over the workers */
	for (uint64_t i = 0, k = 0; i < x.nprocs; i++)
		if (t->procs[x.procs[i].proc].parent < 0) {
			q_push(&x.w[k++ % x.nw].q, &x.procs[i]);
			x.pending++;
		}
	for (; started < x.nw; started++)
		if (pthread_create(&x.w[started].th, NULL, worker_main, &x.w[started])) {
			rp_fail(err, errlen, "cannot start thread %u", started);
			__atomic_store_n(&x.finished, 1, __ATOMIC_RELEASE);
			break;
		}

	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_s();
	pthread_mutex_lock(&x.gate_lock);
	x.go = 1;
	pthread_cond_broadcast(&x.gate_cv);
	total_ops = t->nops * cfg->copies;
	while (x.exited < started) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		pthread_cond_timedwait(&x.done_cv, &x.gate_lock, &ts);
		if (cfg->progress && x.exited < started && now_s() - t0 > 2 &&
		    now_s() - last >= 1) {
			uint64_t sum = 0;

			for (unsigned i = 0; i < started; i++)
				sum += __atomic_load_n(&x.w[i].ops, __ATOMIC_RELAXED);
			fprintf(cfg->progress, "\r  %s, %u threads: %3.0f%% of %llu ops ",
				rp_mode_name(cfg->mode), cfg->threads,
				100.0 * (double)sum / (double)total_ops,
				(unsigned long long)total_ops);
			fflush(cfg->progress);
			progress_shown = true;
			last = now_s();
		}
	}
	pthread_mutex_unlock(&x.gate_lock);
	t1 = now_s();
	getrusage(RUSAGE_SELF, &ru1);
	if (progress_shown) {
		fprintf(cfg->progress, "\r%60s\r", "");
		fflush(cfg->progress);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(x.w[i].th, NULL);
	if (started < x.nw)
		goto out;
	if (x.deadlock || x.remaining) {
		rp_fail(err, errlen, "the replay could not finish: %llu processes "
		     "blocked (a dependency cycle)", (unsigned long long)x.remaining);
		goto out;
	}

	res->elapsed_s = t1 - t0;
	res->user_s = tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime);
	res->sys_s = tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime);
	/* every worker has been joined: pthread_join orders its last writes of
	 * these counters before the reads here */
	for (unsigned i = 0; i < x.nw; i++) {
		res->cache_s += (double)(x.w[i].op_ns - x.w[i].update_ns) * 1e-9;
		res->ops += x.w[i].ops;
		res->checked += x.w[i].checked;
		res->mismatches += x.w[i].mismatches;
		res->unchecked += x.w[i].unchecked;
		res->update_errors += x.w[i].update_errors;
	}
	res->components = p->info.components * cfg->copies;
	if (x.c) {
		dc_get_stats(x.c, &ds);
		res->lookups = ds.lookups;
		res->hits = ds.hits;
		res->negative_hits = ds.negative_hits;
		res->misses = ds.misses;
		res->restarts = ds.restarts;
		res->lock_waits = ds.lock_waits;
		res->entries = ds.entries;
	} else {
		res->lookups = p->info.planned_lookups * cfg->copies;
	}
	rc = 0;
out:
	ctx_destroy(&x);
	return rc;
}
