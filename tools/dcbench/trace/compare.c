/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compare.c - dcbench compare: the cache modes replayed interleaved at
 * each thread count, rcu set against each lock mode, the goals judged,
 * and optionally lookups/s plotted against threads (plot.c).
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace/report.h"

#define MAX_TLIST	32	/* thread counts in --threads */

const char dcb_compare_help[] =
"usage: dcbench compare TRACE [OPTIONS]\n"
"\n"
"  --threads LIST  thread counts, comma-separated (default 1,2,4,8)\n"
"  --copies K      copies at every thread count (default: as many as threads)\n"
"  --runs R        timed runs per mode and thread count (default 5)\n"
"  --modes LIST    cache modes (default rcu,global,rwlock); null always runs\n"
"  --warmup        one untimed run of each mode first, at each thread count\n"
"                  (its mismatches count as the timed runs' do)\n"
"  --complete-after N|off  list a directory after N backend ENOENT answers\n"
"                  in it (default 1), or never\n"
"  --plot FILE     lookups/s against threads, one line per mode, drawn by\n"
"                  gnuplot into FILE (.svg or .png)\n"
"  --json          one JSON document on stdout\n"
"  -h, --help      this help\n"
"\n"
"Modes run interleaved (null rcu global rwlock null rcu ...).  Medians are\n"
"judged; mean and sd are shown beside.  Time in the cache = wall time from\n"
"the start to the end of each path op, summed over threads, less the memfs\n"
"updates it applied: the cache calls and their time asleep on locks.  Every\n"
"mode, null too, pays the same two clock stamps per op; null's figure is\n"
"their cost.  \"CPU beyond null\" = the mode's user + system CPU time minus\n"
"the null mode's: it also holds the memfs updates and the scheduler's\n"
"spinning, and misses time asleep.  A cache mode's median run must last 100 ms\n"
"to be timed: with shorter runs the trace is too short to time, and nothing\n"
"is compared; a goal whose figures are missing or zero is not measured.\n"
"Exit status: 0 success; 1 mismatches, or a failure; 2 usage error;\n"
"3 the runs were too short to time, goals not judged.\n";

struct cmp {
	int a, b;
	unsigned threads;
	double ca, cb, less_pct, sd;
	bool within_sd, too_short, failed;
};

/* Did a's runs answer wrong or fail updates?  Then its work was not the
 * other modes', and nothing is compared with it. */
static bool failed(const struct agg *a)
{
	return a->mismatches || a->update_errors;
}

static void compare_pair(const struct agg *x, const struct agg *y, struct cmp *c)
{
	c->a = x->mode;
	c->b = y->mode;
	c->threads = x->threads;
	c->ca = x->cache_s;
	c->cb = y->cache_s;
	c->failed = failed(x) || failed(y);
	c->less_pct = c->cb > 0 && !c->failed ? 100 * (c->cb - c->ca) / c->cb : NAN;
	c->sd = (!isnan(x->cache_sd) && !isnan(y->cache_sd)) ?
		sqrt(x->cache_sd * x->cache_sd + y->cache_sd * y->cache_sd) : NAN;
	c->within_sd = !isnan(c->sd) && fabs(c->ca - c->cb) <= c->sd;
	c->too_short = x->too_short || y->too_short;
}

static void print_cmp(FILE *f, const struct cmp *c)
{
	if (c->too_short) {
		fprintf(f, "%s vs %s at %u thread%s: not compared (runs under %.0f ms: "
			"too short to time)\n", rp_mode_name(c->a), rp_mode_name(c->b),
			c->threads, c->threads == 1 ? "" : "s", MIN_TIMED_S * 1e3);
		return;
	}
	if (c->failed) {
		fprintf(f, "%s vs %s at %u thread%s: not compared (mismatches or failed"
			" updates: not the same work)\n", rp_mode_name(c->a),
			rp_mode_name(c->b), c->threads, c->threads == 1 ? "" : "s");
		return;
	}
	if (isnan(c->less_pct)) {
		fprintf(f, "%s vs %s at %u thread%s: not comparable (no time in the cache"
			" measured)\n", rp_mode_name(c->a), rp_mode_name(c->b), c->threads,
			c->threads == 1 ? "" : "s");
		return;
	}
	fprintf(f, "%s vs %s at %u thread%s: %.1f%% %s time in the cache (%.3fs vs %.3fs)%s\n",
		rp_mode_name(c->a), rp_mode_name(c->b), c->threads,
		c->threads == 1 ? "" : "s", fabs(c->less_pct),
		c->less_pct >= 0 ? "less" : "more", c->ca, c->cb,
		c->within_sd ? "; within one sd: no clear difference" : "");
}

/* Find program in $PATH. */

static struct agg *find_agg(struct agg *ag, unsigned n, int mode, unsigned threads)
{
	for (unsigned i = 0; i < n; i++)
		if (ag[i].mode == mode && ag[i].threads == threads)
			return &ag[i];
	return NULL;
}

static const char *met(bool ok)
{
	return ok ? "met" : "NOT MET";
}

/* "2 threads (2 copies)" */
static const char *where(const struct agg *a, char *buf, size_t size)
{
	snprintf(buf, size, "%u thread%s (%u cop%s)", a->threads,
		 a->threads == 1 ? "" : "s", a->copies, a->copies == 1 ? "y" : "ies");
	return buf;
}

/* "1 thread" */
static const char *threads_s(unsigned n, char *buf, size_t size)
{
	snprintf(buf, size, "%u thread%s", n, n == 1 ? "" : "s");
	return buf;
}

/*
 * Why a's time in the cache cannot be judged, in buf; NULL when it can:
 * not run, no lookups (the time would be the replay's, not the cache's),
 * or none measured.
 */
static const char *cache_unmeasured(const struct agg *a, int mode, unsigned threads,
				    char *buf, size_t size)
{
	char t[32];

	threads_s(threads, t, sizeof(t));
	if (!a)
		snprintf(buf, size, "%s was not run at %s", rp_mode_name(mode), t);
	else if (!a->lookups)
		snprintf(buf, size, "%s made no lookups at %s: nothing in the cache to time",
			 rp_mode_name(mode), t);
	else if (!(a->cache_s > 0))
		snprintf(buf, size, "no time in the cache measured for %s at %s",
			 rp_mode_name(mode), t);
	else if (failed(a))
		snprintf(buf, size, "%s had mismatches or failed updates at %s",
			 rp_mode_name(mode), t);
	else
		return NULL;
	return buf;
}

/* rcu's time in the cache against global's at one thread count; judge:
 * the runs were long enough to time. */
static void goal_cache(FILE *f, const struct agg *r, const struct agg *g,
		       unsigned threads, double goal, bool judge)
{
	char w[64], why[128];
	const char *no = cache_unmeasured(r, RP_RCU, threads, why, sizeof(why));

	if (!no)
		no = cache_unmeasured(g, RP_GLOBAL, threads, why, sizeof(why));
	if (no) {
		fprintf(f, "  rcu time in the cache at %s vs global: not measured (%s)\n",
			threads_s(threads, w, sizeof(w)), no);
		return;
	}
	if (!judge) {
		fprintf(f, "  rcu time in the cache at %s vs global: not judged (too short "
			"to time)\n", where(r, w, sizeof(w)));
		return;
	}
	fprintf(f, "  rcu time in the cache at %s vs global: %.2fx (%.3fs vs %.3fs; "
		"goal <= %.2fx): %s\n", where(r, w, sizeof(w)), r->cache_s / g->cache_s,
		r->cache_s, g->cache_s, goal, met(r->cache_s <= goal * g->cache_s));
}

/* Why rcu's lookups/s at threads cannot be judged, in buf; NULL when it can. */
static const char *rate_unmeasured(const struct agg *a, unsigned threads, char *buf,
				   size_t size)
{
	char t[32];

	threads_s(threads, t, sizeof(t));
	if (!a)
		snprintf(buf, size, "rcu was not run at %s", t);
	else if (!(a->lookups_per_s > 0))
		snprintf(buf, size, "rcu made no lookups at %s", t);
	else if (failed(a))
		snprintf(buf, size, "rcu had mismatches or failed updates at %s", t);
	else
		return NULL;
	return buf;
}

/* rcu's lookups/s at 2 threads against its own at 1. */
static void goal_scaling(FILE *f, const struct agg *r1, const struct agg *r2, double goal,
			 bool judge)
{
	char w1[64], w2[64], b1[32], b2[32], why[128];
	const char *no = rate_unmeasured(r1, 1, why, sizeof(why));

	if (!no)
		no = rate_unmeasured(r2, 2, why, sizeof(why));
	if (no) {
		fprintf(f, "  rcu lookups/s at 2 threads vs 1 thread: not measured (%s)\n", no);
		return;
	}
	if (!judge) {
		fprintf(f, "  rcu lookups/s at %s vs %s: not judged (too short to time)\n",
			where(r2, w2, sizeof(w2)), where(r1, w1, sizeof(w1)));
		return;
	}
	fprintf(f, "  rcu lookups/s at %s vs %s: %.2fx (%s/s vs %s/s; goal >= %.2fx): %s\n",
		where(r2, w2, sizeof(w2)), where(r1, w1, sizeof(w1)),
		r2->lookups_per_s / r1->lookups_per_s,
		report_fmt_rate(r2->lookups_per_s, b2, sizeof(b2)),
		report_fmt_rate(r1->lookups_per_s, b1, sizeof(b1)), goal,
		met(r2->lookups_per_s >= goal * r1->lookups_per_s));
}

/*
 * rcu's lookups/s at threads against its best in the run, at whatever
 * thread count that was: more threads than a machine has cores must not
 * cost much of what it can do.  Judged only beside a run at or below the
 * core count, where the best can be.
 */
static void goal_oversub(FILE *f, struct agg *ag, unsigned nag, unsigned threads,
			 unsigned cores, double goal, bool judge)
{
	struct agg *r = find_agg(ag, nag, RP_RCU, threads), *best = NULL;
	char w1[64], w2[64], b1[32], b2[32], why[128];
	const char *no = rate_unmeasured(r, threads, why, sizeof(why));
	bool under = false;

	for (unsigned i = 0; i < nag; i++) {
		if (ag[i].mode != RP_RCU || !(ag[i].lookups_per_s > 0))
			continue;
		if (failed(&ag[i])) {	/* no best from work not done right */
			snprintf(why, sizeof(why), "rcu had mismatches or failed "
				 "updates at %u thread%s", ag[i].threads,
				 ag[i].threads == 1 ? "" : "s");
			no = why;
		}
		under |= !ag[i].over;
		if (!best || ag[i].lookups_per_s > best->lookups_per_s)
			best = &ag[i];
	}
	if (!no && !under) {
		snprintf(why, sizeof(why), "rcu was not run at %u thread%s or fewer, "
			 "the cores", cores, cores == 1 ? "" : "s");
		no = why;
	}
	if (no) {
		fprintf(f, "  rcu lookups/s at %s vs its best: not measured (%s)\n",
			threads_s(threads, w1, sizeof(w1)), no);
		return;
	}
	if (!judge) {
		fprintf(f, "  rcu lookups/s at %s vs its best: not judged (too short to "
			"time)\n", where(r, w1, sizeof(w1)));
		return;
	}
	fprintf(f, "  rcu lookups/s at %s vs its best, at %s: %.2fx (%s/s vs %s/s; "
		"goal >= %.2fx): %s\n", where(r, w1, sizeof(w1)), where(best, w2, sizeof(w2)),
		r->lookups_per_s / best->lookups_per_s,
		report_fmt_rate(r->lookups_per_s, b1, sizeof(b1)),
		report_fmt_rate(best->lookups_per_s, b2, sizeof(b2)), goal,
		met(r->lookups_per_s >= goal * best->lookups_per_s));
}

/*
 * The goals, a line each, naming what was measured; a goal whose figures
 * are missing says why.  Timing goals are only judged when every cache
 * mode's runs were long enough to time; false when they were not judged.
 */
static bool print_goals(FILE *f, const struct dct_trace *t, struct agg *ag,
			unsigned nag, unsigned runs, unsigned cores, uint64_t warm_wrong)
{
	static const unsigned over[] = { 8, 16, 32 };
	struct agg *r1 = find_agg(ag, nag, RP_RCU, 1), *g1 = find_agg(ag, nag, RP_GLOBAL, 1);
	struct agg *r2 = find_agg(ag, nag, RP_RCU, 2), *g2 = find_agg(ag, nag, RP_GLOBAL, 2);
	struct agg *shortest = NULL;
	uint64_t mism = warm_wrong;	/* the warm-ups' count too */

	for (unsigned i = 0; i < nag; i++) {
		mism += ag[i].mismatches + ag[i].update_errors;
		if (ag[i].too_short &&
		    (!shortest || ag[i].elapsed_s < shortest->elapsed_s))
			shortest = &ag[i];
	}
	fprintf(f, "goals (time in the cache: " CACHE_TIME_IS ", summed over threads; "
		"medians of %u run%s):\n", runs, runs == 1 ? "" : "s");
	fprintf(f, "  mismatches in every mode and run: %llu (goal 0): %s\n",
		(unsigned long long)mism, met(mism == 0));
	if (shortest) {
		fputs("  ", f);
		report_too_short(f, t, shortest, "goals not judged");
	}
	goal_cache(f, r1, g1, 1, 1.02, !shortest);
	goal_cache(f, r2, g2, 2, 0.70, !shortest);
	goal_scaling(f, r1, r2, 1.8, !shortest);
	for (unsigned i = 0; i < sizeof(over) / sizeof(over[0]); i++)
		goal_oversub(f, ag, nag, over[i], cores, 0.9, !shortest);
	return !shortest;
}

int cmd_compare(int argc, char **argv)
{
	const char *cmd = "compare", *plotfile = NULL;
	struct setup s = { .cmd = cmd };
	struct run_opts o = { .runs = 5 };
	unsigned tl[MAX_TLIST] = { 1, 2, 4, 8 }, nt = 4;
	unsigned printed = 0, nag = 0, ncmp = 0, cores = cli_cores(), step = 0;
	int modes[RP_NMODES] = { RP_NULL, RP_RCU, RP_GLOBAL, RP_RWLOCK };
	unsigned nm = 4;
	int bad = 0, rc = EXIT_OK;
	bool judged;
	struct agg *ag = NULL;
	struct cmp *cmps = NULL;
	FILE *rep;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		switch (run_opt(cmd, dcb_compare_help, argc, argv, &i, &o, &rc)) {
		case CLI_EXIT:
			return rc;
		case CLI_TAKEN:
			continue;
		}
		if (cli_opt(cmd, argc, argv, &i, "threads", true, &v, &bad)) {
			if (bad || (bad = cli_uint_list(cmd, "--threads", v, 1, RP_MAX_THREADS,
							tl, MAX_TLIST, &nt)))
				return bad;
		} else if (cli_opt(cmd, argc, argv, &i, "modes", true, &v, &bad)) {
			if (bad)
				return bad;
			nm = 1;		/* null first, always */
			for (const char *p = v;;) {
				const char *e = strchr(p, ',');
				size_t len = e ? (size_t)(e - p) : strlen(p);
				char name[16];
				int m;

				if (len >= sizeof(name))
					len = sizeof(name) - 1;
				memcpy(name, p, len);
				name[len] = '\0';
				m = rp_mode_parse(name);
				if (m < 0)
					return cli_usage(cmd, "--modes: '%s' is not rcu, global, "
							 "rwlock or null", name);
				bool dup = false;

				for (unsigned k = 0; k < nm; k++)
					dup |= modes[k] == m;
				if (!dup)
					modes[nm++] = m;
				if (!e)
					break;
				p = e + 1;
			}
		} else if (cli_opt(cmd, argc, argv, &i, "plot", true, &v, &bad)) {
			const char *ext;

			if (bad)
				return bad;
			ext = strrchr(v, '.');
			if (!ext || (strcmp(ext, ".svg") && strcmp(ext, ".png")))
				return cli_usage(cmd, "--plot wants a .svg or .png file, not '%s'", v);
			plotfile = v;
		} else {
			bad = report_trace_arg(cmd, argv[i], &s.file);
		}
		if (bad)
			return bad;
	}
	s.rep = rep = o.json ? stderr : stdout;
	s.complete_after = o.complete_after;
	if ((rc = report_open(&s)))
		return rc;

	ag = calloc((size_t)nt * nm, sizeof(*ag));
	cmps = calloc((size_t)nt * nm * 2, sizeof(*cmps));
	if (!ag || !cmps) {
		fprintf(stderr, "dcbench compare: out of memory\n");
		rc = EXIT_FAIL;
		goto out;
	}
	for (unsigned ti = 0; ti < nt; ti++)
		for (unsigned m = 0; m < nm; m++) {
			struct agg *a = &ag[nag++];

			a->mode = modes[m];
			a->threads = tl[ti];
			a->copies = o.copies ? o.copies : tl[ti];
			a->runs = o.runs;
			a->over = tl[ti] > cores;
			a->r = calloc(o.runs, sizeof(*a->r));
			if (!a->r) {
				fprintf(stderr, "dcbench compare: out of memory\n");
				rc = EXIT_FAIL;
				goto out;
			}
		}

	for (unsigned ti = 0; ti < nt && !rc; ti++) {
		struct agg *row = &ag[ti * nm];
		unsigned T = tl[ti], K = row->copies;

		if (o.warmup)
			for (unsigned m = 0; m < nm && !rc; m++)
				rc = report_run(&s, modes[m], T, K, NULL, &printed);
		for (unsigned r = 0; r < o.runs && !rc; r++)
			for (unsigned m = 0; m < nm && !rc; m++) {
				step++;
				if (cli_progress())
					fprintf(stderr, "\r  [%u/%u] %u threads: %s, run %u of %u   ",
						step, nt * nm * o.runs, T, rp_mode_name(modes[m]),
						r + 1, o.runs);
				rc = report_run(&s, modes[m], T, K, &row[m], &printed);
			}
		if (cli_progress())
			fprintf(stderr, "\r%60s\r", "");
		if (rc)
			break;
		for (unsigned m = 0; m < nm; m++)
			report_derive(&row[m], &row[0]);
		fprintf(rep, "\n== %u thread%s, %u cop%s%s ==\n", T, T == 1 ? "" : "s",
			K, K == 1 ? "y" : "ies", row->over ? " (oversubscribed: more threads "
			"than cores)" : "");
		for (unsigned m = 0; m < nm; m++)
			report_agg(rep, &row[m]);
		/* rcu against each lock mode */
		for (unsigned m = 0; m < nm; m++) {
			struct agg *x = NULL;

			for (unsigned k = 0; k < nm; k++)
				if (row[k].mode == RP_RCU)
					x = &row[k];
			if (!x || row[m].mode == RP_RCU || row[m].mode == RP_NULL)
				continue;
			compare_pair(x, &row[m], &cmps[ncmp]);
			print_cmp(rep, &cmps[ncmp]);
			ncmp++;
		}
	}
	if (rc)
		goto out;

	fprintf(rep, "\n");
	for (unsigned m = 0; m < nm; m++) {
		struct agg *one = find_agg(ag, nag, modes[m], tl[0]);
		bool too_short = false;

		if (modes[m] == RP_NULL || !one || !(one->lookups_per_s > 0))
			continue;
		fprintf(rep, "%-7s throughput:", rp_mode_name(modes[m]));
		for (unsigned ti = 0; ti < nt; ti++) {
			struct agg *a = find_agg(ag, nag, modes[m], tl[ti]);
			char b[32];

			if (failed(a) || failed(one))
				fprintf(rep, "  %u: %s/s (-: mismatches)", tl[ti],
					report_fmt_rate(a->lookups_per_s, b, sizeof(b)));
			else
				fprintf(rep, "  %u: %s/s (%.2fx)", tl[ti],
					report_fmt_rate(a->lookups_per_s, b, sizeof(b)),
					a->lookups_per_s / one->lookups_per_s);
			too_short |= a->too_short;
		}
		fputs(too_short ? "  (too short to time)\n" : "\n", rep);
	}
	judged = print_goals(rep, s.t, ag, nag, o.runs, cores, s.warm_wrong);
	if (plotfile) {
		int err = compare_plot(plotfile, s.file, ag, nag, tl, nt, modes, nm,
				       o.copies);

		if (!err)
			fprintf(rep, "plot: %s\n", plotfile);
		else if (err < 0)
			rc = EXIT_FAIL;	/* asked for and not drawn */
	}

	if (o.json) {
		struct json j;

		json_init(&j, stdout);
		json_obj_begin(&j);
		json_kint(&j, "schema_version", RP_SCHEMA_VERSION);
		json_kstr(&j, "command", "compare");
		report_info_json(&j, s.file, s.t, rp_get_info(s.p));
		json_kuint(&j, "runs", o.runs);
		json_knum(&j, "min_timed_s", MIN_TIMED_S);
		json_kbool(&j, "goals_judged", judged);
		json_key(&j, "results");
		json_arr_begin(&j);
		for (unsigned i = 0; i < nag; i++)
			report_agg_json(&j, &ag[i]);
		json_arr_end(&j);
		json_key(&j, "comparisons");
		json_arr_begin(&j);
		for (unsigned i = 0; i < ncmp; i++) {
			json_obj_begin(&j);
			json_kstr(&j, "mode", rp_mode_name(cmps[i].a));
			json_kstr(&j, "versus", rp_mode_name(cmps[i].b));
			json_kuint(&j, "threads", cmps[i].threads);
			json_knum(&j, "cache_s", cmps[i].ca);
			json_knum(&j, "versus_cache_s", cmps[i].cb);
			json_knum(&j, "less_time_pct", cmps[i].less_pct);
			json_knum(&j, "diff_sd", cmps[i].sd);
			json_kbool(&j, "within_sd", cmps[i].within_sd);
			json_kbool(&j, "not_same_work", cmps[i].failed);
			json_kbool(&j, "too_short", cmps[i].too_short);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
		if (json_finish(&j)) {
			fprintf(stderr, "dcbench compare: cannot write to stdout\n");
			rc = EXIT_FAIL;
		}
	}
	if (!rc && !judged)
		rc = EXIT_SHORT;
	for (unsigned i = 0; i < nag; i++)
		if (ag[i].mismatches || ag[i].update_errors)
			rc = EXIT_FAIL;
	if (s.warm_wrong)
		rc = EXIT_FAIL;
out:
	for (unsigned i = 0; ag && i < nag; i++)
		free(ag[i].r);
	free(ag);
	free(cmps);
	report_close(&s);
	return rc;
}
