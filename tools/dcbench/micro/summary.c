/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * summary.c - from the runs to the figures: each cell's medians, means
 * and spreads, the paired wall-clock scaling, the kernel's syscall floor;
 * the cells not fully measured; and the figures the project aims for.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "common/stats.h"
#include "micro/micro.h"
#include "micro/util.h"


/*
 * Wall-clock scaling: each run's throughput (all threads' operations over
 * the wall time) over that of the 1-thread run beside it, in the same
 * round; the median of those ratios.
 */
static double paired_scaling(const struct cell *c, const struct cell *one)
{
	double r[MAX_RUNS];

	for (unsigned i = 0; i < c->nr; i++)
		r[i] = c->mopsw[i] / one->mopsw[i];
	return stats_median(r, c->nr);
}

/* The kernel's floor, and what each component costs beyond it: each
 * run's ns/lookup less the floor run right after it, per component. */
static void beyond_floor(struct cell *c)
{
	double per = (double)c->comps / (double)c->lookups, r[MAX_RUNS];

	for (unsigned i = 0; i < c->nr; i++)
		r[i] = (c->ns[i] - c->floor[i]) / per;
	c->floor_med = stats_median(c->floor, c->nfloor);
	c->beyond_med = stats_median(r, c->nr);
}

void summarize(struct bench *b)
{
	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);

				c->ns_med = c->nsc_med = c->mops_med = NAN;
				c->ns_mean = c->ns_sd = c->mops_mean = c->mops_sd = NAN;
				c->scaling = c->mopsw_med = c->share_med = NAN;
				c->floor_med = c->beyond_med = NAN;
				if (!b->ran[sc] || !c->measured || !c->nr)
					continue;
				c->ns_med = stats_median(c->ns, c->nr);
				c->ns_mean = stats_mean(c->ns, c->nr);
				c->ns_sd = stats_sd(c->ns, c->nr);
				c->nsc_med = sc == SC_MIXED1 || sc == SC_MIXED10 ? NAN :
					     stats_median(c->nsc, c->nr);
				c->mops_med = stats_median(c->mops, c->nr);
				c->mops_mean = stats_mean(c->mops, c->nr);
				c->mops_sd = stats_sd(c->mops, c->nr);
				c->mopsw_med = stats_median(c->mopsw, c->nr);
				c->share_med = stats_median(c->share, c->nr);
				if (c->nfloor == c->nr && c->comps)
					beyond_floor(c);
			}
	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_get(b, sc, b->tl[ti], k);
				struct cell *one = cell_get(b, sc, 1, k);

				if (c && one && c->nr == one->nr)
					c->scaling = paired_scaling(c, one);
			}
}

/*
 * Every cell asked for must be measured in every run, and every timed
 * lookup must have answered as the tree says (a failing lookup is
 * cheaper: a broken implementation would look fast); otherwise the
 * figures do not mean what they say.  Names each such cell on stderr;
 * returns how many were not measured.
 */
unsigned check_cells(struct bench *b)
{
	unsigned unmeasured = 0;

	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl && b->ran[sc]; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);
				unsigned T = b->tl[ti];

				if (!b->impl[k] || c->skipped)
					continue;
				if (!c->measured || c->nr < b->runs) {
					fprintf(stderr, "dcbench micro: %s %s, %u thread%s: not "
						"measured (%u of %u runs): %s\n", sc_names[sc],
						im_names[k], T, plural(T), c->nr, b->runs,
						c->why[0] ? c->why : "?");
					unmeasured++;
				}
				if (c->wrong)
					fprintf(stderr, "dcbench micro: %s %s, %u thread%s: %"
						PRIu64 " timed lookups answered otherwise than "
						"the tree says\n", sc_names[sc], im_names[k], T,
						plural(T), c->wrong);
				b->wrong_lookups += c->wrong;
			}
	return unmeasured;
}

/* a's ns/lookup over b's (same scenario and threads); NaN if either is missing */
double ratio(struct bench *b, int sc, unsigned threads, int ka, int kb)
{
	struct cell *x = cell_get(b, sc, threads, ka), *y = cell_get(b, sc, threads, kb);

	return x && y ? x->ns_med / y->ns_med : NAN;
}

double depth_ratio(struct bench *b, int sc, unsigned threads, int k)
{
	struct cell *x = cell_get(b, sc, threads, k);
	struct cell *two = cell_get(b, SC_DEPTH2, threads, k);

	return x && two ? x->ns_med / two->ns_med : NAN;
}

unsigned make_goals(struct bench *b, struct goal *g)
{
	unsigned n = 0;
	struct cell *c, *l;
	/* against padded references the lfht figures are not the goals' */
	bool refs_ok = b->ref_node_bytes == 0;

#define GOAL(v, le_, tgt, ...) do {						\
		snprintf(g[n].name, sizeof(g[n].name), __VA_ARGS__);		\
		g[n].value = (v);						\
		g[n].target = (tgt);						\
		g[n].le = (le_);						\
		n++;								\
	} while (0)

	GOAL(ratio(b, SC_HOT, 1, IM_RCU, IM_KERNEL), true, 0.05,
	     "hot 1 thread: rcu ns/path / kernel fstatat");
	/* (per component the same ratio: both walk the same paths) */
	GOAL(refs_ok ? ratio(b, SC_HOT, 1, IM_RCU, IM_LFHT) : NAN, true, 0.5,
	     "hot 1 thread: rcu ns/path / lfht ns/path");
	/* a cached path costs about one probe however deep it is */
	GOAL(depth_ratio(b, SC_DEPTH16, 1, IM_RCU), true, 1.5,
	     "depth16 1 thread: rcu ns/path / depth2's");
	c = cell_get(b, SC_HOT, 2, IM_RCU);
	l = cell_get(b, SC_HOT, 2, IM_LFHT);
	GOAL(c && l && refs_ok ? c->scaling / l->scaling : NAN, false, 0.95,
	     "hot 2 threads: rcu scaling / lfht scaling");
	c = cell_get(b, SC_NEGATIVE, 2, IM_RCU);
	l = cell_get(b, SC_NEGATIVE, 2, IM_LFHT);
	GOAL(c && l && refs_ok ? c->scaling / l->scaling : NAN, false, 0.95,
	     "negative 2 threads: rcu scaling / lfht scaling");
	GOAL(1 / ratio(b, SC_HOT, 2, IM_RCU, IM_GLOBAL), false, 3,
	     "hot 2 threads: rcu Mops / global");
	GOAL(1 / ratio(b, SC_NEGATIVE, 2, IM_RCU, IM_GLOBAL), false, 3,
	     "negative 2 threads: rcu Mops / global");
	c = cell_get(b, SC_SMALL, 2, IM_RCU);
	GOAL(c ? c->scaling : NAN, false, 1.9, "small 2 threads: rcu scaling");
	c = cell_get(b, SC_SAMEFILE, 2, IM_RCU);
	GOAL(c ? c->scaling : NAN, false, 1.8, "samefile 2 threads: rcu scaling");
	GOAL(1 / ratio(b, SC_MIXED10, 2, IM_RCU, IM_GLOBAL), false, 1.5,
	     "mixed-10 2 threads: rcu Mops / global");
	/* what expiry checks cost a hit, when only rcu-ttl has TTLs */
	GOAL(b->ttl_ms ? NAN : ratio(b, SC_HOT, 1, IM_RCUTTL, IM_RCU), true, 1.05,
	     "hot 1 thread: rcu-ttl ns / rcu ns (TTLs on / off)");
	/* what the search checks cost a hit, when only rcu-as makes them */
	GOAL(b->as ? NAN : ratio(b, SC_HOT, 1, IM_RCUAS, IM_RCU), true, 1.10,
	     "hot 1 thread: rcu-as ns / rcu ns (checked / plain)");
	for (int sc = 0; sc < SC_NR; sc++)
		if (b->scen[sc] && sc != SC_STORM)
			GOAL(ratio(b, sc, 1, IM_RCU, IM_GLOBAL), true, 1.05,
			     "%s 1 thread: rcu ns / global ns", sc_names[sc]);
	/* every table included: the path table's nodes too, one per path
	 * as a cache whose every path is in use holds them */
	GOAL(b->by_short.ok ? b->by_short.bpe_paths : NAN, true, 128,
	     "bytes per cached entry and its path node, names <= 32 bytes");
#undef GOAL
	return n;
}

int goal_met(const struct goal *g)	/* 1, 0, or -1: not measured */
{
	if (isnan(g->value))
		return -1;
	return g->le ? g->value <= g->target : g->value >= g->target;
}
