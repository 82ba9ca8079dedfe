/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * compare.c - dcbench replay and dcbench compare: run the replay
 * (replay.c), summarise the runs kernbench-style (median judged, mean and
 * standard deviation beside it), take the time in the cache the replay
 * measured (wall time inside each path op, replay.h), set the process's
 * CPU time beyond the null mode's beside it, and print, plot and write
 * JSON.
 */
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "replay.h"
#include "trace.h"

extern char **environ;

/* Where the report goes: stdout, or stderr when stdout carries JSON. */
static FILE *rep;

#define MAX_RUNS	1000
#define MAX_TLIST	32
#define MAX_PRINT	5	/* mismatches printed per invocation */
/*
 * A cache mode's median run must last this long to be timed: below it,
 * thread start-up and the clocks' granularity outweigh the lookups, and
 * ratios of such times say nothing.
 */
#define MIN_TIMED_S	0.100
/*
 * replay's and compare's "schema_version": 2 since cache_s is measured
 * inside the ops (it was CPU time beyond the null mode's, now
 * cpu_over_null_s).
 */
#define RP_SCHEMA_VERSION	2
/* What the time in the cache holds, for the report. */
#define CACHE_TIME_IS	"wall time inside cache calls, lock waits in, memfs updates out"

/* R runs of one (mode, threads, copies), and what is derived from them. */
struct agg {
	int mode;
	unsigned threads, copies, runs, done;
	bool over;			/* threads > cores */
	bool too_short;			/* a cache mode's runs under MIN_TIMED_S */
	struct rp_result *r;		/* runs */
	/* derived (NAN: unmeasured) */
	double elapsed_s, elapsed_mean, elapsed_sd;
	double user_s, sys_s, cpu_s, cpu_sd, cpu_pct;
	double cache_s, cache_sd;		/* measured inside the ops */
	double cpu_over_null_s, cpu_over_null_sd;	/* cpu_s beyond null's */
	double lookups_per_s, ns_per_lookup, ns_per_component, cpu_ns_per_lookup;
	double hit_share, negative_share;
	uint64_t lookups, hits, negative_hits, misses, restarts, lock_waits,
		 entries, components;
	uint64_t checked, mismatches, unchecked, update_errors;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	double *s;
	double m;

	if (n == 0)
		return NAN;
	s = malloc(n * sizeof(*s));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static double mean(const double *v, unsigned n)
{
	double s = 0;

	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : NAN;
}

/* Sample standard deviation; NAN for fewer than two values. */
static double sdev(const double *v, unsigned n)
{
	double m = mean(v, n), s = 0;

	if (n < 2)
		return NAN;
	for (unsigned i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (n - 1));
}

/* The median of a counter over the runs. */
static uint64_t median_u(const struct agg *a, size_t off)
{
	double v[MAX_RUNS] = { 0 };

	for (unsigned i = 0; i < a->done; i++)
		v[i] = (double)*(const uint64_t *)((const char *)&a->r[i] + off);
	return a->done ? (uint64_t)median(v, a->done) : 0;
}

#define MEDIAN_U(a, field)	median_u((a), offsetof(struct rp_result, field))

/* Fill in what the runs say; null: the null mode's aggregate, or NULL. */
static void derive(struct agg *a, const struct agg *null)
{
	double el[MAX_RUNS] = { 0 }, us[MAX_RUNS] = { 0 }, sy[MAX_RUNS] = { 0 };
	double cpu[MAX_RUNS] = { 0 }, pct[MAX_RUNS] = { 0 }, in[MAX_RUNS] = { 0 };
	bool cache = a->mode != RP_NULL;
	unsigned n = a->done;

	for (unsigned i = 0; i < n; i++) {
		el[i] = a->r[i].elapsed_s;
		us[i] = a->r[i].user_s;
		sy[i] = a->r[i].sys_s;
		cpu[i] = us[i] + sy[i];
		pct[i] = el[i] > 0 ? 100 * cpu[i] / el[i] : NAN;
		in[i] = a->r[i].cache_s;
	}
	a->elapsed_s = median(el, n);
	a->elapsed_mean = mean(el, n);
	a->elapsed_sd = sdev(el, n);
	a->user_s = median(us, n);
	a->sys_s = median(sy, n);
	a->cpu_s = median(cpu, n);
	a->cpu_sd = sdev(cpu, n);
	a->cpu_pct = median(pct, n);
	a->cache_s = median(in, n);
	a->cache_sd = sdev(in, n);
	a->lookups = MEDIAN_U(a, lookups);
	a->hits = MEDIAN_U(a, hits);
	a->negative_hits = MEDIAN_U(a, negative_hits);
	a->misses = MEDIAN_U(a, misses);
	a->restarts = MEDIAN_U(a, restarts);
	a->lock_waits = MEDIAN_U(a, lock_waits);
	a->entries = MEDIAN_U(a, entries);
	a->components = n ? a->r[0].components : 0;
	a->checked = a->mismatches = a->unchecked = a->update_errors = 0;
	for (unsigned i = 0; i < n; i++) {
		a->checked += a->r[i].checked;
		a->mismatches += a->r[i].mismatches;
		a->unchecked += a->r[i].unchecked;
		a->update_errors += a->r[i].update_errors;
	}
	a->lookups_per_s = a->elapsed_s > 0 ? (double)a->lookups / a->elapsed_s : NAN;
	a->cpu_ns_per_lookup = a->lookups ? a->cpu_s * 1e9 / (double)a->lookups : NAN;
	a->cpu_over_null_s = a->cpu_over_null_sd = NAN;
	if (cache && null && null->done) {
		a->cpu_over_null_s = a->cpu_s - null->cpu_s;
		a->cpu_over_null_sd = (n > 1 && null->done > 1) ?
			sqrt(a->cpu_sd * a->cpu_sd + null->cpu_sd * null->cpu_sd) : NAN;
	}
	a->ns_per_lookup = cache && a->lookups ?
			   a->cache_s * 1e9 / (double)a->lookups : NAN;
	a->ns_per_component = cache && a->components ?
			      a->cache_s * 1e9 / (double)a->components : NAN;
	a->hit_share = cache && a->lookups ? (double)a->hits / (double)a->lookups : NAN;
	a->negative_share = cache && a->lookups ?
			    (double)a->negative_hits / (double)a->lookups : NAN;
	a->too_short = cache && !(a->elapsed_s >= MIN_TIMED_S);
}

/* ---- printing ------------------------------------------------------------------ */

static const char *fmt_s(double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3fs", v);
	return buf;
}

static const char *fmt_rate(double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else if (v >= 1e6)
		snprintf(buf, size, "%.2fM", v / 1e6);
	else if (v >= 1e3)
		snprintf(buf, size, "%.1fk", v / 1e3);
	else
		snprintf(buf, size, "%.0f", v);
	return buf;
}

static const char *fmt_pct(double share, char *buf, size_t size)
{
	if (isnan(share))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f%%", 100 * share);
	return buf;
}

/* The time in the cache, and what it holds. */
static void print_cache_time(FILE *f, const struct agg *a)
{
	char b1[32];

	fprintf(f, "        in cache %s", fmt_s(a->cache_s, b1, sizeof(b1)));
	if (!isnan(a->cache_sd))
		fprintf(f, " (sd %.3fs)", a->cache_sd);
	if (a->mode == RP_NULL)
		fputs(": the clock stamps alone, no cache; every mode's figure holds "
		      "as much\n", f);
	else
		fputs(": " CACHE_TIME_IS "\n", f);
}

static void print_agg(FILE *f, const struct agg *a)
{
	char b1[32], b2[32], b3[32];

	fprintf(f, "%-7s Elapsed: %.3fs User: %.3fs System: %.3fs CPU: %.1f%%  "
		"[median of %u; mean %.3fs sd %s]\n",
		rp_mode_name(a->mode), a->elapsed_s, a->user_s, a->sys_s, a->cpu_pct,
		a->done, a->elapsed_mean, fmt_s(a->elapsed_sd, b1, sizeof(b1)));
	print_cache_time(f, a);
	if (a->mode == RP_NULL) {
		fprintf(f, "        no cache: the replay machinery alone; %s planned lookups/s;"
			" mismatches %llu\n", fmt_rate(a->lookups_per_s, b2, sizeof(b2)),
			(unsigned long long)a->mismatches);
		return;
	}
	fprintf(f, "        %s lookups/s", fmt_rate(a->lookups_per_s, b2, sizeof(b2)));
	if (!isnan(a->ns_per_lookup))
		fprintf(f, "  %.0f ns/lookup  %.1f ns/component", a->ns_per_lookup,
			a->ns_per_component);
	if (!isnan(a->cpu_over_null_s))
		fprintf(f, "  CPU beyond null %.3fs", a->cpu_over_null_s);
	else if (!isnan(a->cpu_ns_per_lookup))
		fprintf(f, "  %.0f ns CPU/lookup", a->cpu_ns_per_lookup);
	fprintf(f, "\n        lookups %llu  hits %s  negative %s  misses %llu"
		"  restarts %llu  lock waits %llu  mismatches %llu",
		(unsigned long long)a->lookups, fmt_pct(a->hit_share, b1, sizeof(b1)),
		fmt_pct(a->negative_share, b3, sizeof(b3)), (unsigned long long)a->misses,
		(unsigned long long)a->restarts, (unsigned long long)a->lock_waits,
		(unsigned long long)a->mismatches);
	if (a->update_errors)
		fprintf(f, "  update errors %llu", (unsigned long long)a->update_errors);
	fputc('\n', f);
}

static void print_info(FILE *f, const char *file, const struct dct_trace *t,
		       const struct rp_info *in)
{
	fprintf(f, "trace %s: %llu processes, %llu ops (%llu with paths), %u paths\n",
		file, (unsigned long long)in->procs, (unsigned long long)in->ops,
		(unsigned long long)in->path_ops, t->npaths);
	fprintf(f, "namespace at the start: %llu directories, %llu files, %llu symlinks"
		" (+%llu targets); %llu names changed by the trace; %llu inference "
		"conflicts\n", (unsigned long long)in->init_dirs,
		(unsigned long long)in->init_files, (unsigned long long)in->init_links,
		(unsigned long long)in->init_link_targets,
		(unsigned long long)in->changed_names, (unsigned long long)in->conflicts);
	fprintf(f, "private roots (copied per copy): %u", in->nroots);
	for (unsigned i = 0; i < in->nroots && i < 3; i++)
		fprintf(f, "%s%s", i ? ", " : " (", in->roots[i]);
	fprintf(f, "%s\n", in->nroots > 3 ? ", ...)" : in->nroots ? ")" : "");
	fprintf(f, "dependencies kept: %llu (%llu through shared names)\n",
		(unsigned long long)in->deps, (unsigned long long)in->conflict_deps);
	fprintf(f, "bound: fork/wait critical path %llu of %llu ops: best speed-up of "
		"one copy %.2fx (%.2fx with the replay's dependencies)\n",
		(unsigned long long)in->critical_ops, (unsigned long long)in->ops,
		in->bound, in->bound_replay);
}

/* ---- JSON ----------------------------------------------------------------------- */

static void json_u_or_null(struct json *j, const char *k, uint64_t v, bool have)
{
	if (have)
		json_kuint(j, k, v);
	else
		json_knull(j, k);
}

static void agg_json(struct json *j, const struct agg *a)
{
	bool cache = a->mode != RP_NULL;

	json_obj_begin(j);
	json_kstr(j, "mode", rp_mode_name(a->mode));
	json_kuint(j, "threads", a->threads);
	json_kuint(j, "copies", a->copies);
	json_kuint(j, "runs", a->done);
	json_kbool(j, "oversubscribed", a->over);
	json_kbool(j, "too_short", a->too_short);
	json_knum(j, "elapsed_s", a->elapsed_s);
	json_knum(j, "elapsed_mean", a->elapsed_mean);
	json_knum(j, "elapsed_sd", a->elapsed_sd);
	json_knum(j, "user_s", a->user_s);
	json_knum(j, "sys_s", a->sys_s);
	json_knum(j, "cpu_s", a->cpu_s);
	json_knum(j, "cpu_sd", a->cpu_sd);
	json_knum(j, "cpu_pct", a->cpu_pct);
	json_knum(j, "cache_s", a->cache_s);
	json_knum(j, "cache_sd", a->cache_sd);
	json_knum(j, "cpu_over_null_s", a->cpu_over_null_s);
	json_knum(j, "cpu_over_null_sd", a->cpu_over_null_sd);
	json_kuint(j, "lookups", a->lookups);
	json_knum(j, "lookups_per_s", a->lookups_per_s);
	json_knum(j, "ns_per_lookup", a->ns_per_lookup);
	json_knum(j, "ns_per_component", a->ns_per_component);
	json_knum(j, "cpu_ns_per_lookup", a->cpu_ns_per_lookup);
	json_kuint(j, "components", a->components);
	json_u_or_null(j, "hits", a->hits, cache);
	json_knum(j, "hit_share", a->hit_share);
	json_u_or_null(j, "negative_hits", a->negative_hits, cache);
	json_knum(j, "negative_share", a->negative_share);
	json_u_or_null(j, "misses", a->misses, cache);
	json_u_or_null(j, "restarts", a->restarts, cache);
	json_u_or_null(j, "lock_waits", a->lock_waits, cache);
	json_u_or_null(j, "entries", a->entries, cache);
	json_kuint(j, "checked", a->checked);
	json_kuint(j, "mismatches", a->mismatches);
	json_kuint(j, "unchecked", a->unchecked);
	json_kuint(j, "update_errors", a->update_errors);
	json_obj_end(j);
}

static void info_json(struct json *j, const char *file, const struct dct_trace *t,
		      const struct rp_info *in)
{
	json_kstr(j, "trace", file);
	json_kuint(j, "cores", cli_cores());
	json_key(j, "trace_info");
	json_obj_begin(j);
	json_kuint(j, "processes", in->procs);
	json_kuint(j, "ops", in->ops);
	json_kuint(j, "path_ops", in->path_ops);
	json_kuint(j, "paths", t->npaths);
	json_kuint(j, "components", in->components);
	json_kuint(j, "init_dirs", in->init_dirs);
	json_kuint(j, "init_files", in->init_files);
	json_kuint(j, "init_links", in->init_links);
	json_kuint(j, "changed_names", in->changed_names);
	json_kuint(j, "inference_conflicts", in->conflicts);
	json_kuint(j, "unchecked_ops", in->unchecked);
	json_kuint(j, "deps", in->deps);
	json_kuint(j, "conflict_deps", in->conflict_deps);
	json_key(j, "private_roots");
	json_arr_begin(j);
	for (unsigned i = 0; i < in->nroots; i++)
		json_str(j, in->roots[i]);
	json_arr_end(j);
	json_obj_end(j);
	json_knum(j, "bound", in->bound);
	json_kuint(j, "critical_ops", in->critical_ops);
	json_knum(j, "bound_replay", in->bound_replay);
	json_kuint(j, "critical_ops_replay", in->critical_ops_replay);
}

/* ---- shared set-up ---------------------------------------------------------------- */

struct setup {
	const char *cmd, *file;
	struct dct_trace *t;
	struct rp_prep *p;
};

static int setup_open(struct setup *s)
{
	char err[512];

	if (dct_read(s->file, &s->t, err, sizeof(err))) {
		fprintf(stderr, "dcbench %s: %s\n", s->cmd, err);
		return EXIT_FAIL;
	}
	if (rp_prepare(s->t, &s->p, err, sizeof(err))) {
		fprintf(stderr, "dcbench %s: %s: %s\n", s->cmd, s->file, err);
		dct_free(s->t);
		return EXIT_FAIL;
	}
	print_info(rep, s->file, s->t, rp_get_info(s->p));
	return 0;
}

static void setup_close(struct setup *s)
{
	rp_free(s->p);
	dct_free(s->t);
}

/* One run into a (NULL: a warm-up, not kept).  0 or EXIT_FAIL. */
static int run_one(struct setup *s, int mode, unsigned threads, unsigned copies,
		   struct agg *a, unsigned *printed)
{
	struct rp_config cfg = {
		.mode = mode, .threads = threads, .copies = copies,
		.progress = cli_progress() ? stderr : NULL,
		.mismatch_log = stderr,
		.max_print = *printed < MAX_PRINT ? MAX_PRINT - *printed : 0,
	};
	struct rp_result res;
	char err[512];

	if (rp_run(s->p, &cfg, &res, err, sizeof(err))) {
		fprintf(stderr, "dcbench %s: %s\n", s->cmd, err);
		return EXIT_FAIL;
	}
	if (res.mismatches)
		*printed += (unsigned)(res.mismatches < cfg.max_print ?
				       res.mismatches : cfg.max_print);
	if (a)
		a->r[a->done++] = res;
	return 0;
}

/* A run too short to time, said the same way everywhere; then what follows. */
static void print_too_short(FILE *f, const struct dct_trace *t, const struct agg *a,
			    const char *then)
{
	fprintf(f, "trace too short to time: %llu ops, %.3f ms a run (%s, %u thread%s; "
		"at least %.0f ms wanted); %s\n",
		(unsigned long long)t->nops * a->copies, a->elapsed_s * 1e3,
		rp_mode_name(a->mode), a->threads, a->threads == 1 ? "" : "s",
		MIN_TIMED_S * 1e3, then);
}

/* ---- dcbench replay --------------------------------------------------------------- */

const char dcb_replay_help[] =
"usage: dcbench replay TRACE [OPTIONS]\n"
"\n"
"  --threads N    worker threads (default 1)\n"
"  --copies K     independent copies of the trace replayed at once\n"
"                 (default: as many as threads)\n"
"  --mode M       rcu, global, rwlock or null (default rcu)\n"
"  --runs R       timed runs, each with a fresh namespace and cache (default 5)\n"
"  --warmup       one untimed run first\n"
"  --json         one JSON document on stdout\n"
"  -h, --help     this help\n"
"\n"
"Every answer is checked against the outcome recorded in the trace; the\n"
"first mismatches are printed and the exit status is 1 if there were any.\n"
"Time in the cache = wall time from the start to the end of each path op,\n"
"summed over threads, less the memfs updates it applied: the cache calls\n"
"and their time asleep on locks.  Every mode, null too, pays the same two\n"
"clock stamps per op.  Runs shorter than 100 ms are too short to time, and\n"
"said to be.\n"
"Exit status: 0 no mismatch; 1 mismatches, or a failure; 2 usage error.\n";

int cmd_replay(int argc, char **argv)
{
	const char *cmd = "replay";
	struct setup s = { .cmd = cmd };
	unsigned threads = 1, copies = 0, runs = 5, printed = 0;
	int mode = RP_RCU, bad = 0, rc = EXIT_OK;
	bool json = false, warmup = false;
	struct agg a;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(cmd, argc, argv, &i, "help", false, &v, &bad)) {
			if (bad)
				return bad;
			fputs(dcb_replay_help, stdout);
			return EXIT_OK;
		}
		if (cli_opt(cmd, argc, argv, &i, "threads", true, &v, &bad)) {
			if (bad || (bad = cli_uint(cmd, "--threads", v, 1, RP_MAX_THREADS, &threads)))
				return bad;
		} else if (cli_opt(cmd, argc, argv, &i, "copies", true, &v, &bad)) {
			if (bad || (bad = cli_uint(cmd, "--copies", v, 1, RP_MAX_COPIES, &copies)))
				return bad;
		} else if (cli_opt(cmd, argc, argv, &i, "runs", true, &v, &bad)) {
			if (bad || (bad = cli_uint(cmd, "--runs", v, 1, MAX_RUNS, &runs)))
				return bad;
		} else if (cli_opt(cmd, argc, argv, &i, "mode", true, &v, &bad)) {
			if (bad)
				return bad;
			mode = rp_mode_parse(v);
			if (mode < 0)
				return cli_usage(cmd, "--mode is rcu, global, rwlock or null, not '%s'", v);
		} else if (cli_opt(cmd, argc, argv, &i, "warmup", false, &v, &bad)) {
			if (bad)
				return bad;
			warmup = true;
		} else if (cli_opt(cmd, argc, argv, &i, "json", false, &v, &bad)) {
			if (bad)
				return bad;
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		} else if (s.file) {
			return cli_usage(cmd, "one trace at a time ('%s' and '%s')", s.file, argv[i]);
		} else {
			s.file = argv[i];
		}
	}
	if (!s.file)
		return cli_usage(cmd, "which trace?");
	if (!copies)
		copies = threads;
	rep = json ? stderr : stdout;
	if ((rc = setup_open(&s)))
		return rc;

	memset(&a, 0, sizeof(a));
	a.mode = mode;
	a.threads = threads;
	a.copies = copies;
	a.runs = runs;
	a.over = threads > cli_cores();
	a.r = calloc(runs, sizeof(*a.r));
	if (!a.r) {
		fprintf(stderr, "dcbench replay: out of memory\n");
		setup_close(&s);
		return EXIT_FAIL;
	}
	if (warmup && run_one(&s, mode, threads, copies, NULL, &printed))
		rc = EXIT_FAIL;
	for (unsigned r = 0; !rc && r < runs; r++) {
		if (cli_progress())
			fprintf(stderr, "\r  run %u of %u ", r + 1, runs);
		if (run_one(&s, mode, threads, copies, &a, &printed))
			rc = EXIT_FAIL;
	}
	if (cli_progress())
		fprintf(stderr, "\r%20s\r", "");
	if (!rc) {
		derive(&a, NULL);
		fprintf(rep, "%s, %u thread%s, %u cop%s%s:\n", rp_mode_name(mode), threads,
			threads == 1 ? "" : "s", copies, copies == 1 ? "y" : "ies",
			a.over ? " (oversubscribed)" : "");
		print_agg(rep, &a);
		if (a.too_short)
			print_too_short(rep, s.t, &a, "the times above are noise");
		fprintf(rep, "checked %llu outcomes: %llu mismatches (%llu unchecked)\n",
			(unsigned long long)a.checked, (unsigned long long)a.mismatches,
			(unsigned long long)a.unchecked);
		if (json) {
			struct json j;

			json_init(&j, stdout);
			json_obj_begin(&j);
			json_kint(&j, "schema_version", RP_SCHEMA_VERSION);
			json_kstr(&j, "command", "replay");
			info_json(&j, s.file, s.t, rp_get_info(s.p));
			json_key(&j, "results");
			json_arr_begin(&j);
			agg_json(&j, &a);
			json_arr_end(&j);
			json_obj_end(&j);
			if (json_finish(&j)) {
				fprintf(stderr, "dcbench replay: cannot write to stdout\n");
				rc = EXIT_FAIL;
			}
		}
		if (a.mismatches || a.update_errors)
			rc = EXIT_FAIL;
	}
	free(a.r);
	setup_close(&s);
	return rc;
}

/* ---- dcbench compare -------------------------------------------------------------- */

const char dcb_compare_help[] =
"usage: dcbench compare TRACE [OPTIONS]\n"
"\n"
"  --threads LIST  thread counts, comma-separated (default 1,2,4,8)\n"
"  --copies K      copies at every thread count (default: as many as threads)\n"
"  --runs R        timed runs per mode and thread count (default 5)\n"
"  --modes LIST    cache modes (default rcu,global,rwlock); null always runs\n"
"  --warmup        one untimed run of each mode first, at each thread count\n"
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
	bool within_sd, too_short;
};

static void compare_pair(const struct agg *x, const struct agg *y, struct cmp *c)
{
	c->a = x->mode;
	c->b = y->mode;
	c->threads = x->threads;
	c->ca = x->cache_s;
	c->cb = y->cache_s;
	c->less_pct = c->cb > 0 ? 100 * (c->cb - c->ca) / c->cb : NAN;
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
static bool have_prog(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
		if (access(buf, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

static void gp_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);	/* gnuplot: '' inside single quotes */
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* Draw lookups/s against threads.  0, or -1 (already said why). */
static int plot(const char *file, const char *trace, struct agg *ag, unsigned nag,
		const unsigned *tl, unsigned nt, const int *modes, unsigned nm,
		unsigned copies)
{
	char script[] = "/tmp/dcbench-plot.XXXXXX";
	const char *ext = strrchr(file, '.');
	bool png = ext && !strcmp(ext, ".png");
	char *argv[] = { "gnuplot", script, NULL };
	FILE *f;
	pid_t pid;
	int fd, status, err;

	if (!have_prog("gnuplot")) {
		fprintf(stderr, "dcbench compare: gnuplot is not installed (Debian: "
			"gnuplot-nox); no plot drawn\n");
		return -1;
	}
	fd = mkstemp(script);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "dcbench compare: plot: %s\n", strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(script);
		}
		return -1;
	}
	fprintf(f, "set terminal %s size 800,500 font 'sans,11'\n",
		png ? "png" : "svg dynamic");
	fputs("set output ", f);
	gp_quote(f, file);
	fputs("\nset title ", f);
	{
		char title[600];

		snprintf(title, sizeof(title), "dcbench compare: %s (%u cores)", trace, cli_cores());
		gp_quote(f, title);
	}
	if (copies)
		fprintf(f, "\nset xlabel 'threads (%u cop%s)'", copies, copies == 1 ? "y" : "ies");
	else
		fputs("\nset xlabel 'threads (as many copies of the trace)'", f);
	fputs("\nset ylabel 'lookups/s'\n"
	      "set logscale x 2\nset key top left\nset grid\nset yrange [0:*]\n"
	      "set format y '%.1s%c'\nset xtics (", f);
	for (unsigned i = 0; i < nt; i++)
		fprintf(f, "%s%u", i ? ", " : "", tl[i]);
	fputs(")\n", f);
	if (nt == 1)	/* one point: give gnuplot an x range around it */
		fprintf(f, "set xrange [%g:%g]\n", tl[0] / 2.0, tl[0] * 2.0);
	/* the cache modes; null (no cache) would only flatten them */
	fputs("plot ", f);
	for (unsigned m = 0, first = 1; m < nm; m++) {
		if (modes[m] == RP_NULL)
			continue;
		fprintf(f, "%s'-' using 1:2 with linespoints lw 2 title '%s'",
			first ? "" : ", ", rp_mode_name(modes[m]));
		first = 0;
	}
	fputc('\n', f);
	for (unsigned m = 0; m < nm; m++) {
		if (modes[m] == RP_NULL)
			continue;
		for (unsigned i = 0; i < nag; i++)
			if (ag[i].mode == modes[m] && !isnan(ag[i].lookups_per_s))
				fprintf(f, "%u %.6g\n", ag[i].threads, ag[i].lookups_per_s);
		fputs("e\n", f);
	}
	if (fclose(f)) {
		unlink(script);
		return -1;
	}
	fflush(NULL);
	err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (err) {
		fprintf(stderr, "dcbench compare: cannot run gnuplot: %s; no plot drawn\n",
			strerror(err));
		unlink(script);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(script);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "dcbench compare: gnuplot failed; no plot drawn\n");
		return -1;
	}
	fprintf(rep, "plot: %s\n", file);
	return 0;
}

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
		fmt_rate(r2->lookups_per_s, b2, sizeof(b2)),
		fmt_rate(r1->lookups_per_s, b1, sizeof(b1)), goal,
		met(r2->lookups_per_s >= goal * r1->lookups_per_s));
}

/*
 * The goals, a line each, naming what was measured; a goal whose figures
 * are missing says why.  Timing goals are only judged when every cache
 * mode's runs were long enough to time; false when they were not judged.
 */
static bool print_goals(FILE *f, const struct dct_trace *t, struct agg *ag,
			unsigned nag, unsigned runs)
{
	struct agg *r1 = find_agg(ag, nag, RP_RCU, 1), *g1 = find_agg(ag, nag, RP_GLOBAL, 1);
	struct agg *r2 = find_agg(ag, nag, RP_RCU, 2), *g2 = find_agg(ag, nag, RP_GLOBAL, 2);
	struct agg *shortest = NULL;
	uint64_t mism = 0;

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
		print_too_short(f, t, shortest, "goals not judged");
	}
	goal_cache(f, r1, g1, 1, 1.02, !shortest);
	goal_cache(f, r2, g2, 2, 0.70, !shortest);
	goal_scaling(f, r1, r2, 1.8, !shortest);
	return !shortest;
}

int cmd_compare(int argc, char **argv)
{
	const char *cmd = "compare", *plotfile = NULL;
	struct setup s = { .cmd = cmd };
	unsigned tl[MAX_TLIST] = { 1, 2, 4, 8 }, nt = 4, copies = 0, runs = 5;
	unsigned printed = 0, nag = 0, ncmp = 0, cores = cli_cores(), step = 0;
	int modes[RP_NMODES] = { RP_NULL, RP_RCU, RP_GLOBAL, RP_RWLOCK };
	unsigned nm = 4;
	int bad = 0, rc = EXIT_OK;
	bool json = false, warmup = false, judged;
	struct agg *ag = NULL;
	struct cmp *cmps = NULL;

	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "-h") || cli_opt(cmd, argc, argv, &i, "help", false, &v, &bad)) {
			if (bad)
				return bad;
			fputs(dcb_compare_help, stdout);
			return EXIT_OK;
		}
		if (cli_opt(cmd, argc, argv, &i, "threads", true, &v, &bad)) {
			if (bad || (bad = cli_uint_list(cmd, "--threads", v, 1, RP_MAX_THREADS,
							tl, MAX_TLIST, &nt)))
				return bad;
		} else if (cli_opt(cmd, argc, argv, &i, "copies", true, &v, &bad)) {
			if (bad || (bad = cli_uint(cmd, "--copies", v, 1, RP_MAX_COPIES, &copies)))
				return bad;
		} else if (cli_opt(cmd, argc, argv, &i, "runs", true, &v, &bad)) {
			if (bad || (bad = cli_uint(cmd, "--runs", v, 1, MAX_RUNS, &runs)))
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
		} else if (cli_opt(cmd, argc, argv, &i, "warmup", false, &v, &bad)) {
			if (bad)
				return bad;
			warmup = true;
		} else if (cli_opt(cmd, argc, argv, &i, "json", false, &v, &bad)) {
			if (bad)
				return bad;
			json = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			return cli_usage(cmd, "unknown option '%s'", argv[i]);
		} else if (s.file) {
			return cli_usage(cmd, "one trace at a time ('%s' and '%s')", s.file, argv[i]);
		} else {
			s.file = argv[i];
		}
	}
	if (!s.file)
		return cli_usage(cmd, "which trace?");
	rep = json ? stderr : stdout;
	if ((rc = setup_open(&s)))
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
			a->copies = copies ? copies : tl[ti];
			a->runs = runs;
			a->over = tl[ti] > cores;
			a->r = calloc(runs, sizeof(*a->r));
			if (!a->r) {
				fprintf(stderr, "dcbench compare: out of memory\n");
				rc = EXIT_FAIL;
				goto out;
			}
		}

	for (unsigned ti = 0; ti < nt && !rc; ti++) {
		struct agg *row = &ag[ti * nm];
		unsigned T = tl[ti], K = row->copies;

		if (warmup)
			for (unsigned m = 0; m < nm && !rc; m++)
				rc = run_one(&s, modes[m], T, K, NULL, &printed);
		for (unsigned r = 0; r < runs && !rc; r++)
			for (unsigned m = 0; m < nm && !rc; m++) {
				step++;
				if (cli_progress())
					fprintf(stderr, "\r  [%u/%u] %u threads: %s, run %u of %u   ",
						step, nt * nm * runs, T, rp_mode_name(modes[m]),
						r + 1, runs);
				rc = run_one(&s, modes[m], T, K, &row[m], &printed);
			}
		if (cli_progress())
			fprintf(stderr, "\r%60s\r", "");
		if (rc)
			break;
		for (unsigned m = 0; m < nm; m++)
			derive(&row[m], &row[0]);
		fprintf(rep, "\n== %u thread%s, %u cop%s%s ==\n", T, T == 1 ? "" : "s",
			K, K == 1 ? "y" : "ies", row->over ? " (oversubscribed: more threads "
			"than cores)" : "");
		for (unsigned m = 0; m < nm; m++)
			print_agg(rep, &row[m]);
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

			fprintf(rep, "  %u: %s/s (%.2fx)", tl[ti],
				fmt_rate(a->lookups_per_s, b, sizeof(b)),
				a->lookups_per_s / one->lookups_per_s);
			too_short |= a->too_short;
		}
		fputs(too_short ? "  (too short to time)\n" : "\n", rep);
	}
	judged = print_goals(rep, s.t, ag, nag, runs);
	if (plotfile)
		plot(plotfile, s.file, ag, nag, tl, nt, modes, nm, copies);

	if (json) {
		struct json j;

		json_init(&j, stdout);
		json_obj_begin(&j);
		json_kint(&j, "schema_version", RP_SCHEMA_VERSION);
		json_kstr(&j, "command", "compare");
		info_json(&j, s.file, s.t, rp_get_info(s.p));
		json_kuint(&j, "runs", runs);
		json_knum(&j, "min_timed_s", MIN_TIMED_S);
		json_kbool(&j, "goals_judged", judged);
		json_key(&j, "results");
		json_arr_begin(&j);
		for (unsigned i = 0; i < nag; i++)
			agg_json(&j, &ag[i]);
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
out:
	for (unsigned i = 0; ag && i < nag; i++)
		free(ag[i].r);
	free(ag);
	free(cmps);
	setup_close(&s);
	return rc;
}
