/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * order.c - pass 2 of replay's preparation: one order of all ops that
 * keeps program order and fork/wait/vfork order and otherwise follows the
 * log's lines, and the fork/wait critical path.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/replay_internal.h"
#include "trace/util.h"

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
bool rp_struct_dep(const struct dct_trace *t, uint32_t pr, uint64_t li,
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
int rp_pass_order(struct rp_prep *p, uint64_t *order, char *err, size_t errlen)
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
		dct_fail(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < np; i++) {
		const struct dct_proc *pp = &t->procs[i];

		whead[i] = NONE;
		key[i] = t->ops[pp->first_op].line;
		if (pp->nops > UINT32_MAX) {
			dct_fail(err, errlen, "process %u has too many ops", i);
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

			if (rp_struct_dep(t, pr, li, &d) && done[d.proc] < d.need) {
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
			if (rp_struct_dep(t, pr, li, &d)) {
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
		dct_fail(err, errlen, "the trace's fork/wait structure cannot be "
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
