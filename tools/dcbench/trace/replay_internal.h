/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * replay_internal.h - what replay's preparation works on (struct rp_prep)
 * and its passes, one file each; see replay.h and docs/dcbench.md.
 *
 * Preparation, once per trace, in five passes:
 *
 *  1. paths (names.c): every path is split into components and interned
 *     into a tree of names (lexically: "a/b/.." is "a"; the components
 *     before a ".." are remembered, since they must be directories for the
 *     walk to pass).
 *  2. order (order.c): a topological order of all ops that follows the
 *     log's line numbers where it can: program order, FORK before the
 *     child's first op, the child's EXIT before the parent's WAIT for it,
 *     and the child's first successful EXECVE (or EXIT) before the op after
 *     a vfork.  The fork/wait critical path is measured here.
 *  3. inference (infer.c): the ops are simulated in that order against a
 *     model in which every name's state is unknown until an op says
 *     something about it.  The first thing said about a name that existed
 *     before the trace changed it fixes its initial state; that is the
 *     namespace built before each run.  Every name the trace creates,
 *     removes or renames is marked "changed".
 *  4. dependencies (deps.c): an op that touches a changed name (as its
 *     path or as a directory on the way) must see the same state as in the
 *     trace, so it waits for the last op of another process that changed
 *     that name, and a change waits for the ops of other processes that
 *     looked at the name since the previous change.  Together with
 *     fork/wait this makes every answer of the replay deterministic.
 *  5. private roots (copies.c): the top (depth 2) directory of every
 *     changed name is private; copy k >= 1 of the trace uses "ROOT.k"
 *     instead of ROOT.
 *
 * prepare.c runs them; the replay itself is sched.h's.  A prep is built by
 * one thread; rp_run() only reads it, but for the copies it adds first.
 */
#ifndef DCBENCH_TRACE_REPLAY_INTERNAL_H
#define DCBENCH_TRACE_REPLAY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hash.h"
#include "common/arena.h"
#include "trace/replay.h"
#include "trace/trace.h"

#define NONE	UINT32_MAX


/* ---- the name tree ---- */

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

/* ---- the name tree (names.c); NULL or NONE: out of memory ---- */

int rp_nodes_init(struct rp_prep *p);		/* the root alone; 0 or -1 */
/* The node for name s in parent; NONE if there is none. */
uint32_t rp_node_find(struct rp_prep *p, uint32_t parent, const char *s, size_t len);
/* The node for name s in parent, made if missing (may move p->names). */
uint32_t rp_node_get(struct rp_prep *p, uint32_t parent, const char *s, size_t len);
/* Store a NUL-terminated name in p->names; its offset. */
uint32_t rp_name_store(struct rp_prep *p, const char *s, size_t len);

/* ---- the passes: 0, or -1 (out of memory, or with a message in err) ---- */

int rp_pass_paths(struct rp_prep *p);
int rp_pass_order(struct rp_prep *p, uint64_t *order, char *err, size_t errlen);
int rp_pass_infer(struct rp_prep *p, const uint64_t *order, char *err, size_t errlen);
int rp_pass_deps(struct rp_prep *p, const uint64_t *order, char *err, size_t errlen);
int rp_pass_roots(struct rp_prep *p, char *err, size_t errlen);

/* The fork/wait dependency of op li of process pr, in *d; false if none. */
bool rp_struct_dep(const struct dct_trace *t, uint32_t pr, uint64_t li, struct dep *d);
/* Is this recorded error one the namespace decides? (else: "it resolved") */
bool rp_err_determined(unsigned kind, int e);

/* ---- copies (copies.c) ---- */

/* Make the path tables of copies [p->ncopies, k). */
int rp_build_copies(struct rp_prep *p, unsigned k, char *err, size_t errlen);
/* The name node ni has in copy k (roots get ".k"), into buf; its length. */
size_t rp_copy_name(const struct rp_prep *p, uint32_t ni, unsigned k,
		    char *buf, size_t size);

#endif /* DCBENCH_TRACE_REPLAY_INTERNAL_H */
