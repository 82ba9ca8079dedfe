/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * deps.c - pass 4 of replay's preparation: the dependencies between
 * processes that make every answer of the replay the recorded one (an op
 * on a changed name waits for the change before it, a change for the
 * looks since the one before).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/replay_internal.h"
#include "trace/util.h"

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
		for (j = hash_mix64(k->key[i]) & (nsize - 1); key[j] != UINT64_MAX;
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
	for (i = hash_mix64(key) & k->mask; k->key[i] != UINT64_MAX; i = (i + 1) & k->mask)
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

/* Append (proc, need) to the array *v (*n of them, capacity *cap). */
static int dep_push(struct dep **v, size_t *n, size_t *cap, uint32_t proc, uint32_t need)
{
	if (dct_grow(v, cap, *n + 1, sizeof(**v)))
		return -1;
	(*v)[*n].proc = proc;
	(*v)[*n].need = need;
	(*n)++;
	return 0;
}

static int depbuf_add(struct depbuf *b, uint32_t proc, uint32_t need)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->d[i].proc == proc) {
			if (b->d[i].need < need)
				b->d[i].need = need;
			return 0;
		}
	return dep_push(&b->d, &b->n, &b->cap, proc, need);
}

/* Op of process pr waits for m's last change, if another process made it. */
static int dep_on_writer(const struct mstate *m, struct depbuf *b, uint32_t pr)
{
	if (m->wproc == NONE || m->wproc == pr)
		return 0;
	return depbuf_add(b, m->wproc, m->wneed);
}

/* Op (pr, need) looks at changed name m. */
static int dep_read(struct mstate *m, struct depbuf *b, uint32_t pr, uint32_t need)
{
	if (dep_on_writer(m, b, pr))
		return -1;
	if (m->nr && m->r[m->nr - 1].proc == pr) {
		m->r[m->nr - 1].need = need;
		return 0;
	}
	return dep_push(&m->r, &m->nr, &m->cap, pr, need);
}

/* Op (pr, need) changes name m. */
static int dep_write(struct mstate *m, struct depbuf *b, uint32_t pr, uint32_t need)
{
	if (dep_on_writer(m, b, pr))
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

int rp_pass_deps(struct rp_prep *p, const uint64_t *order, char *err, size_t errlen)
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
		if (rp_struct_dep(t, pr, li, &d) && depbuf_add(&b, d.proc, d.need))
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
			if (dct_grow(&tmp, &tcap, ntmp + 1, sizeof(*tmp)))
				goto oom;
			tmp[ntmp].op = i;
			tmp[ntmp].d = b.d[j];
			ntmp++;
			if (o->kind != DCT_WAIT && !(j == 0 && rp_struct_dep(t, pr, li, &d)))
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
	dct_fail(err, errlen, "out of memory");
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
