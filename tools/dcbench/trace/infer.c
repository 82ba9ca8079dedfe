/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * infer.c - pass 3 of replay's preparation: the namespace the build saw
 * when it started, inferred by simulating the ops in order against names
 * whose state is unknown until an op says something about them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcache.h"
#include "trace/replay_internal.h"
#include "trace/util.h"

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

/*
 * The most names the model may hold while it applies the ops: each rename
 * of a directory copies the names below it, so a few thousand renames of
 * a directory with a few thousand names would make millions.  Bounded
 * by the trace's size, so that a crafted trace is refused, not let eat
 * the machine's memory.
 */
#define RP_NODES_BASE		(1u << 20)
#define RP_NODES_PER_PATH	16u

static size_t nodes_max(const struct rp_prep *p)
{
	return RP_NODES_BASE + RP_NODES_PER_PATH * (size_t)p->t->npaths;
}

/* Copy the existing names below from to below to (a renamed directory):
 * 0, -ENOMEM, or -E2BIG past nodes_max. */
static int move_subtree(struct rp_prep *p, uint32_t from, uint32_t to, unsigned depth)
{
	int err;

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
		if (p->nnodes >= nodes_max(p))
			return -E2BIG;
		d = rp_node_get(p, to, name, len);
		if (d == NONE)
			return -ENOMEM;
		if (p->nodes[d].cur == S_UNKNOWN)
			p->nodes[d].init = S_ABSENT;
		p->nodes[d].cur = S_EXISTS;
		p->nodes[d].ctype = (uint8_t)cur_type(&p->nodes[c]);
		p->nodes[d].flags = (uint16_t)((p->nodes[d].flags & ~N_INITIAL) | N_CHANGED);
		err = move_subtree(p, c, d, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

/* Is this recorded error one the namespace decides? (else: "it resolved") */
bool rp_err_determined(unsigned kind, int e)
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

/* What op i says about the names, applied to the model.  *wr: OF_WR*.
 * 0, or move_subtree's error. */
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
			int merr;

			create_node(p, n2, type);
			merr = move_subtree(p, n, n2, 0);
			if (merr)
				return merr;
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

int rp_pass_infer(struct rp_prep *p, const uint64_t *order, char *err, size_t errlen)
{
	const struct dct_trace *t = p->t;
	char buf[DC_NAME_MAX + 64];

	for (uint64_t k = 0; k < t->nops; k++) {
		uint64_t i = order[k];
		uint8_t wr = 0;
		int e;

		if (t->ops[i].err == DCT_ERR_UNKNOWN && dct_kind_paths(t->ops[i].kind))
			p->info.unchecked++;
		e = infer_op(p, &t->ops[i], &wr);
		if (e == -E2BIG) {
			dct_fail(err, errlen, "the renames of directories in the trace "
				 "copy more than %zu names (line %u): "
				 "too many to replay", nodes_max(p), t->ops[i].line);
			return -1;
		}
		if (e) {
			dct_fail(err, errlen, "out of memory");
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
				if (rp_node_find(p, n->parent, buf, len) != NONE)
					continue;
			}
			n->target = rp_name_store(p, buf, len);
			if (n->target == NONE) {
				dct_fail(err, errlen, "out of memory");
				return -1;
			}
			break;
		}
	}
	return 0;
}
