/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * names.c - pass 1 of replay's preparation, and what it builds: the tree
 * of names every path of the trace is interned into (a hash of (parent,
 * name) finds a node), and the arena the copies' paths live in.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcache.h"
#include "trace/replay_internal.h"
#include "trace/util.h"

static uint64_t hash_name(uint32_t parent, const char *s, size_t len)
{
	uint64_t h = HASH_FNV_OFFSET ^ ((uint64_t)parent * 0x9e3779b97f4a7c15ull);

	return hash_mix64(hash_fnv1a(s, len, h) ^ len);
}

uint32_t rp_node_find(struct rp_prep *p, uint32_t parent, const char *s, size_t len)
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
uint32_t rp_name_store(struct rp_prep *p, const char *s, size_t len)
{
	size_t off = p->names_len;

	if (off + len + 1 > UINT32_MAX ||
	    dct_grow(&p->names, &p->names_cap, off + len + 1, 1))
		return NONE;
	memcpy(p->names + off, s, len);
	p->names[off + len] = '\0';
	p->names_len += len + 1;
	return (uint32_t)off;
}

/* The node for name in parent, made if missing; NONE when out of memory. */
uint32_t rp_node_get(struct rp_prep *p, uint32_t parent, const char *s, size_t len)
{
	uint32_t n = rp_node_find(p, parent, s, len);
	struct node *d;
	size_t i;

	if (n != NONE)
		return n;
	if (p->nnodes >= NONE - 1 || (p->nnodes + 1) * 2 > p->ht_mask + 1) {
		if (p->nnodes >= NONE - 1 || ht_grow(p))
			return NONE;
	}
	if (dct_grow(&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*p->nodes)))
		return NONE;
	n = (uint32_t)p->nnodes;
	d = &p->nodes[n];
	memset(d, 0, sizeof(*d));
	d->name = rp_name_store(p, s, len);
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

int rp_nodes_init(struct rp_prep *p)
{
	struct node *r;

	p->ht_mask = 1023;
	p->ht = malloc((p->ht_mask + 1) * sizeof(*p->ht));
	if (!p->ht || dct_grow(&p->nodes, &p->nodes_cap, 1, sizeof(*p->nodes)))
		return -1;
	memset(p->ht, 0xff, (p->ht_mask + 1) * sizeof(*p->ht));
	r = &p->nodes[0];
	memset(r, 0, sizeof(*r));
	r->name = rp_name_store(p, "", 0);
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

/* ---- pass 1: paths ---- */

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
				if (dct_grow(&p->dreqs, &p->dreqs_cap, p->ndreqs + 1,
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
			cur = rp_node_get(p, cur, q, len);
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

int rp_pass_paths(struct rp_prep *p)
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
