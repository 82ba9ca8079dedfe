/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.c - the human report: the header, a table per scenario, the
 * kernel's syscall floor, the path depths side by side, the storm, bytes
 * per entry, update costs, the figures to
 * reach and the errors (docs/micro.md explains each column).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "micro/micro.h"

static void fmt(char *buf, size_t size, const char *f, double v)
{
	if (isnan(v) || isinf(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, f, v);
}

/* The kernel's figure is mostly the system call: its floor beside it. */
static void print_floor(struct bench *b, int sc, FILE *f)
{
	const char *sep = "";

	for (unsigned ti = 0; ti < b->ntl; ti++) {
		struct cell *c = cell_get(b, sc, b->tl[ti], IM_KERNEL);

		if (!c || isnan(c->floor_med))
			continue;
		if (!*sep)
			fprintf(f, "  kernel: mostly the system call; its floor, fstatat(\".\") "
				"in the tree's root (no component looked up), and ns per "
				"component beyond it:\n   ");
		fprintf(f, "%s %u thread%s: floor %.1f ns, %.2f ns/comp beyond", sep,
			b->tl[ti], plural(b->tl[ti]), c->floor_med, c->beyond_med);
		sep = ";";
	}
	if (*sep)
		fputc('\n', f);
}

/* One implementation's row at T threads; true if its scaling is more
 * than the CPUs could give. */
static bool print_row(struct bench *b, int sc, unsigned T, int k,
		      const struct cell *c, FILE *f)
{
	static const int refs[] = { IM_KERNEL, IM_LFHT, IM_MUTEX, IM_GLOBAL };
	char v[11][24];
	bool over;

	fmt(v[0], 24, "%.1f", c->ns_med);
	fmt(v[1], 24, "%.2f", c->nsc_med);
	fmt(v[2], 24, "%.3f", c->mops_med);
	fmt(v[3], 24, "%.1f", 100 * c->mops_sd / c->mops_mean);
	/* more than the CPUs could give: the 1-thread runs it is paired
	 * with were slowed */
	over = c->scaling > (T < b->cores ? T : b->cores) + 0.005;
	fmt(v[4], 24, over ? "%.2f!" : "%.2f", c->scaling);
	for (int r = 0; r < 4; r++)
		fmt(v[5 + r], 24, "%.3f",
		    refs[r] == k ? NAN : ratio(b, sc, T, k, refs[r]));
	fmt(v[9], 24, "%.0f", 100 * c->share_med);
	fmt(v[10], 24, "%.3f", c->mopsw_med);
	fprintf(f, "  %3u%s %-7s %10s %8s %8s %5s %4s %9s %7s %8s %7s %7s %7s\n",
		T, T > b->cores ? "*" : " ", im_names[k], v[0], v[1], v[2], v[3],
		v[9], v[10], v[4], v[5], v[6], v[7], v[8]);
	return over;
}

/* libdcache's misses and restarts, where a warm cache had any. */
static void print_dc_notes(struct bench *b, int sc, FILE *f)
{
	for (int k = 0; k < IM_NR; k++) {
		for (unsigned ti = 0; ti < b->ntl; ti++) {
			struct cell *c = cell_at(b, sc, ti, k);

			if (!c->measured || !im_is_dc(k) || !c->dc_lookups)
				continue;
			if (c->dc_misses || c->dc_restarts)
				fprintf(f, "  note: %s at %u threads: %" PRIu64 " misses, %"
					PRIu64 " restarts in %" PRIu64 " lookups\n",
					im_names[k], b->tl[ti], c->dc_misses,
					c->dc_restarts, c->dc_lookups);
		}
	}
}

/* A scenario's table; true if a scaling in it is over the CPUs. */
static bool print_scenario(struct bench *b, int sc, FILE *f)
{
	bool any_over = false;

	fprintf(f, "\n%s: %s\n", sc_names[sc], b->scen_note[sc]);
	fprintf(f, "  thr impl    %10s %8s %8s %5s %4s %9s %7s %8s %7s %7s %7s\n",
		sc == SC_MIXED1 || sc == SC_MIXED10 ? "ns/op" : "ns/lookup",
		"ns/comp", "Mops/s", "sd%", "cpu%", "wall Mops", "scaling",
		"xkernel", "xlfht", "xmutex", "xglobal");
	for (unsigned ti = 0; ti < b->ntl; ti++) {
		unsigned T = b->tl[ti];

		for (int k = 0; k < IM_NR; k++) {
			struct cell *c = cell_at(b, sc, ti, k);

			if (!b->impl[k])
				continue;
			if (!c->measured || !c->nr) {
				fprintf(f, "  %3u%s %-7s not measured: %s\n", T,
					T > b->cores ? "*" : " ", im_names[k],
					c->why[0] ? c->why : "?");
				continue;
			}
			any_over |= print_row(b, sc, T, k, c, f);
		}
	}
	print_floor(b, sc, f);
	print_dc_notes(b, sc, f);
	return any_over;
}

/* Each implementation's ns per path at every depth, and over depth2's. */
static void print_depth(struct bench *b, FILE *f)
{
	static const int sc[NDEPTH] = { SC_DEPTH2, SC_DEPTH4, SC_DEPTH8, SC_DEPTH16 };
	char v[NDEPTH + 1][24];
	bool any = false;

	for (int d = 0; d < NDEPTH; d++)
		any |= b->ran[sc[d]];
	if (!any)
		return;
	fprintf(f, "\npath depth: ns per path (the ns/lookup above), %u files in "
		"every tree, a random one each lookup;\n  depth16/depth2: the same "
		"implementation's, at the same thread count (the aim: <= 1.5)\n",
		DEPTH_LEAVES);
	fprintf(f, "  thr impl     %9s %9s %9s %9s %15s\n", "depth2", "depth4",
		"depth8", "depth16", "depth16/depth2");
	for (unsigned ti = 0; ti < b->ntl; ti++)
		for (int k = 0; k < IM_NR; k++) {
			unsigned T = b->tl[ti];

			if (!b->impl[k])
				continue;
			for (int d = 0; d < NDEPTH; d++) {
				struct cell *c = cell_get(b, sc[d], T, k);

				fmt(v[d], 24, "%.1f", c ? c->ns_med : NAN);
			}
			fmt(v[NDEPTH], 24, "%.3f", depth_ratio(b, SC_DEPTH16, T, k));
			fprintf(f, "  %3u%s %-7s %9s %9s %9s %9s %15s\n", T,
				T > b->cores ? "*" : " ", im_names[k], v[0], v[1],
				v[2], v[3], v[4]);
		}
	fprintf(f, "  (-: not measured, or a lookup failed in it)\n");
}

/* The storm: each mode's throughput against the ideal and against the
 * backend alone, and its waits. */
static void print_storm_row(struct bench *b, FILE *f, const char *name,
			    const struct storm_res *r, bool dc)
{
	double ideal = (double)b->storm_threads * 1e6 / b->storm_delay_us;
	const struct storm_res *a = &b->storm_alone;
	double n = (double)r->lookups, call, cpu;
	char v[11][24];

	if (!r->nr) {
		fprintf(f, "  %-7s not measured: %s\n", name, r->why[0] ? r->why : "?");
		return;
	}
	call = r->calls ? (double)r->call_ns / (double)r->calls / 1e3 : NAN;
	cpu = (double)r->cpu_ns / n / 1e3;
	fmt(v[0], 24, "%.0f", r->rate_med);
	/* fewer lookups done right than made: no ratio to stand on */
	fmt(v[1], 24, "%.3f", r->failed ? NAN : r->rate_med / ideal);
	fmt(v[2], 24, "%.3f", r->failed || a->failed || !a->nr || !dc ? NAN :
	    r->rate_med / a->rate_med);
	fmt(v[3], 24, "%.1f", call);
	fmt(v[4], 24, "%.3f", r->failed ? NAN :
	    r->rate_med * call / 1e6 / b->storm_threads);
	fmt(v[5], 24, "%.2f", cpu);
	fmt(v[6], 24, "%.0f", b->cores * 1e6 / cpu);
	fmt(v[7], 24, "%.2f", (double)r->csw / n);
	fmt(v[8], 24, "%.3f", dc ? (double)r->dc_misses / n : NAN);
	fmt(v[9], 24, "%.3f", dc ? (double)r->miss_waits / n : NAN);
	fmt(v[10], 24, "%.3f", dc ? (double)r->lock_waits / n : NAN);
	fprintf(f, "  %-7s %10s %7s %7s %7s %7s %7s %10s %8s %8s %10s %10s %8" PRIu64 "\n",
		name, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
		v[10], r->failed);
	if (dc && (r->evictions || r->dc_misses != r->calls))
		fprintf(f, "  note: %s: %" PRIu64 " evictions, %" PRIu64
			" backend lookups counted by the cache, %" PRIu64
			" by the backend\n", name, r->evictions, r->dc_misses,
			r->calls);
}

static void print_storm(struct bench *b, FILE *f)
{
	double ideal = (double)b->storm_threads * 1e6 / b->storm_delay_us;

	if (!b->storm_ran)
		return;
	fprintf(f, "\nstorm: %u threads, each looking up fresh names in a "
		"directory of its own (every lookup a miss) on a backend that "
		"sleeps %u us a lookup;\n  ideal %.0f lookups/s (threads / delay); "
		"x ideal: lookups/s over it; alone: the same threads calling the "
		"backend with no cache, x alone: lookups/s over alone's;\n  call us: "
		"a backend lookup's measured time, x call: lookups/s over threads / "
		"call us;\n  CPU us: the process's CPU time per lookup, cpu limit: "
		"the lookups/s %u cores allow at that cost, switches: the process's "
		"context switches per lookup;\n  then per lookup, from "
		"dc_get_stats: backend lookups made (misses), miss_waits, lock_waits\n",
		b->storm_threads, b->storm_delay_us, ideal, b->cores);
	fprintf(f, "  impl    %10s %7s %7s %7s %7s %7s %10s %8s %8s %10s %10s %8s\n",
		"lookups/s", "x ideal", "x alone", "call us", "x call", "CPU us",
		"cpu limit", "switches", "backend", "miss_waits", "lock_waits", "failed");
	print_storm_row(b, f, "alone", &b->storm_alone, false);
	for (int k = 0; k <= IM_GLOBAL; k++)
		if (b->impl[k])
			print_storm_row(b, f, im_names[k], &b->storm[k], true);
}

static void print_header(struct bench *b, const char *date, const char *host,
			 FILE *f)
{
	fprintf(f, "dcbench micro: %s, %s, %u cores; %u runs of %u ms per "
		"implementation, interleaved; medians\n", host, date, b->cores, b->runs, b->ms);
	fprintf(f, "kernel: %s\n", b->impl[IM_KERNEL] ? kfs_note() : "not asked for");
	if (b->ttl_ms)
		fprintf(f, "libdcache TTLs on: %u ms for positive and negative "
			"answers (--ttl)\n", b->ttl_ms);
	if (b->impl[IM_RCUTTL])
		fprintf(f, "rcu-ttl: rcu with TTLs of %u ms on positive and negative "
			"answers\n", rcuttl_ms(b->ttl_ms));
	if (b->as)
		fprintf(f, "libdcache resolves as %u:%u with %u groups (--as): "
			"search permission checked on every directory\n",
			b->cred.uid, b->cred.gid, b->cred.ngroups);
	if (b->impl[IM_RCUAS]) {
		const struct dc_cred *cr = rcuas_cred(b->as ? &b->cred : NULL);

		fprintf(f, "rcu-as: rcu resolving as %u:%u with %u groups "
			"(dc_resolve_as)\n", cr->uid, cr->gid, cr->ngroups);
	}
	if (b->ref_node_bytes)
		fprintf(f, "references padded: every cds_lfht and mutex-table node takes "
			"at least %u bytes (--ref-node-bytes); the goals against cds_lfht "
			"are not measured\n", b->ref_node_bytes);
	fprintf(f, "tree: %s (%u entries: %u directories, %u files, %u symlinks)\n",
		b->treefile, b->hot->nn - 1, b->hot->ndirs, b->hot->nfiles, b->hot->nlinks);
	fprintf(f, "columns: ns per lookup (per operation in mixed) and per component, "
		"per thread, over its time on a CPU;\n  Mops/s: each thread's rate over "
		"its time on a CPU, summed; sd%% of Mops/s over the runs;\n  wall Mops: "
		"all threads' operations / wall time, start barrier to the last thread's "
		"end;\n  scaling = median over the rounds of wall Mops / wall Mops of the "
		"1-thread run beside it;\n  xREF = ns/lookup / REF's ns/lookup in the "
		"same run (below 1: faster than REF)\n");
}

static void print_bytes(struct bench *b, FILE *f)
{
	const struct bytes_res *br[3] = { &b->by_hot, &b->by_short, &b->by_full };
	static const char *const what[3] = {
		"the hot tree, max_entries = its size",
		"its names <= 32 bytes, no symlinks, max_entries = its size",
		"the same, its first 65,536 entries",
	};

	fprintf(f, "\nbytes per cached entry (dc_get_stats bytes / entries, rcu mode, "
		"cache warmed with every entry of the tree;\n  then every path "
		"resolved again, which gives each its one-probe node):\n");
	for (int i = 0; i < 3; i++) {
		if (!br[i]->ok) {
			fprintf(f, "  %-60s not measured\n", what[i]);
			continue;
		}
		fprintf(f, "  %-60s %7.1f B (%" PRIu64 " entries, %" PRIu64
			" bytes; empty cache %" PRIu64 " B, then %.1f B per entry)\n",
			what[i], br[i]->bpe, br[i]->entries, br[i]->bytes,
			br[i]->empty_bytes, br[i]->marginal);
		fprintf(f, "  %-60s %7.1f B (%" PRIu64 " bytes, %" PRIu64
			" paths answered in one probe)\n",
			"  and once every path was resolved again", br[i]->bpe_paths,
			br[i]->bytes_paths, br[i]->paths);
	}
	if (b->ref_bpe[IM_LFHT] > 0 || b->ref_bpe[IM_MUTEX] > 0)
		fprintf(f, "  references (hot tree, buckets = entries rounded up "
			"to a power of two): lfht %.1f B, mutex table %.1f B per entry\n",
			b->ref_bpe[IM_LFHT], b->ref_bpe[IM_MUTEX]);
}

static void print_updates(struct bench *b, FILE *f)
{
	char v[4][24];

	if (!b->upd_ran)
		return;
	fprintf(f, "\nupdate costs, 1 thread, ns per operation (hot tree, the two "
		"biggest directories):\n");
	fprintf(f, "  impl     rename  rename(cache only)  create+unlink  "
		"create+unlink(cache only)\n");
	for (int k = 0; k < IM_NR; k++) {
		if (!b->impl[k] || !b->upd_n[k][U_RENAME])
			continue;
		for (int u = 0; u < U_NR; u++)
			fmt(v[u], 24, "%.0f", b->upd_med[k][u]);
		fprintf(f, "  %-7s %7s %19s %14s %26s\n", im_names[k], v[0], v[1],
			v[2], v[3]);
	}
	fprintf(f, "  (rcu/rwlock/global: memfs + cache; cache only: the dc_* call "
		"alone; references: their table)\n");
}

/* The figures to reach, and the errors that make the run fail. */
static void print_goals(struct bench *b, FILE *f)
{
	struct goal g[32];
	unsigned ng = make_goals(b, g);

	fprintf(f, "\nfigures to reach:\n");
	for (unsigned i = 0; i < ng; i++) {
		int m = goal_met(&g[i]);
		char v[24];

		fmt(v, sizeof(v), "%.3f", g[i].value);
		fprintf(f, "  %-52s %9s  (%s %g)  %s\n", g[i].name, v, g[i].le ? "<=" : ">=",
			g[i].target, m < 0 ? "not measured" : m ? "met" : "NOT MET");
	}
	if (b->runs < 5)
		fprintf(f, "  (fewer than 5 runs: these figures are indicative only)\n");
	if (b->mismatches || b->update_errors || b->wrong_lookups || b->unmeasured)
		fprintf(f, "\nERRORS: %" PRIu64 " wrong answers, %" PRIu64 " timed lookups "
			"answered wrong, %" PRIu64 " failed updates, %u asked for but "
			"not measured\n", b->mismatches, b->wrong_lookups,
			b->update_errors, b->unmeasured);
}

void print_report(struct bench *b, const char *date, const char *host)
{
	bool any_over = false;
	FILE *f = rep;

	print_header(b, date, host, f);
	for (int sc = 0; sc < SC_NR; sc++)
		if (b->ran[sc])
			any_over |= print_scenario(b, sc, f);
	print_depth(b, f);
	print_storm(b, f);
	if (b->ntl && b->tl[b->ntl - 1] > b->cores)
		fprintf(f, "\n* oversubscribed: more threads than the %u cores\n", b->cores);
	if (any_over)
		fprintf(f, "! scaling above min(threads, %u cores), which wall-clock throughput "
			"cannot reach: the 1-thread runs beside it were slowed (the machine's "
			"noise; see sd%%): read it as about the core count\n", b->cores);
	print_bytes(b, f);
	print_updates(b, f);
	print_goals(b, f);
}
