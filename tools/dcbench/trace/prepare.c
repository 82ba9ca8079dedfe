/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prepare.c - rp_prepare(): the five passes (replay_internal.h) run in
 * turn over a trace, and what they found counted into rp_info; the modes'
 * names.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcache.h"
#include "trace/replay_internal.h"
#include "trace/util.h"

const char *rp_mode_name(int mode)
{
	const char *n;

	if (mode == RP_NULL)
		return "null";
	n = mode >= 0 ? dc_mode_name((enum dc_mode)mode) : NULL;
	return n ? n : "?";
}

int rp_mode_parse(const char *name)
{
	enum dc_mode m;

	if (name && !strcmp(name, "null"))
		return RP_NULL;
	return dc_mode_parse(name, &m) ? -1 : (int)m;
}

int rp_prepare(const struct dct_trace *t, struct rp_prep **out, char *err, size_t errlen)
{
	struct rp_prep *p = calloc(1, sizeof(*p));
	uint64_t *order = NULL;

	if (!p)
		goto oom;
	p->t = t;
	if (t->nprocs == 0 || t->nops == 0) {
		dct_fail(err, errlen, "the trace holds no processes");
		goto fail;
	}
	if (t->nprocs >= NONE / RP_MAX_COPIES) {
		dct_fail(err, errlen, "the trace has too many processes (%u)", t->nprocs);
		goto fail;
	}
	p->owner = malloc(t->nops * sizeof(*p->owner));
	p->opf = calloc(t->nops, 1);
	order = malloc(t->nops * sizeof(*order));
	if (!p->owner || !p->opf || !order || rp_nodes_init(p) || rp_pass_paths(p))
		goto oom;
	if (rp_pass_order(p, order, err, errlen) || rp_pass_infer(p, order, err, errlen) ||
	    rp_pass_deps(p, order, err, errlen) || rp_pass_roots(p, err, errlen) ||
	    rp_build_copies(p, 1, err, errlen))
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
	dct_fail(err, errlen, "out of memory");
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
