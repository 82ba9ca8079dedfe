/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report.c - the runs of dcbench replay and dcbench compare summarised
 * kernbench-style (median judged, mean and standard deviation beside it):
 * the time in the cache the replay measured (wall time inside each path
 * op, replay.h), the process's CPU time beyond the null mode's beside it;
 * printed, and written as JSON.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace/report.h"
#include "common/stats.h"

/* The median of a counter over the runs. */
static uint64_t median_u(const struct agg *a, size_t off)
{
	double v[MAX_RUNS] = { 0 };

	for (unsigned i = 0; i < a->done; i++)
		v[i] = (double)*(const uint64_t *)((const char *)&a->r[i] + off);
	return a->done ? (uint64_t)stats_median(v, a->done) : 0;
}

#define MEDIAN_U(a, field)	median_u((a), offsetof(struct rp_result, field))

/* Fill in what the runs say; null: the null mode's aggregate, or NULL. */
void report_derive(struct agg *a, const struct agg *null)
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
	a->elapsed_s = stats_median(el, n);
	a->elapsed_mean = stats_mean(el, n);
	a->elapsed_sd = stats_sd(el, n);
	a->user_s = stats_median(us, n);
	a->sys_s = stats_median(sy, n);
	a->cpu_s = stats_median(cpu, n);
	a->cpu_sd = stats_sd(cpu, n);
	a->cpu_pct = stats_median(pct, n);
	a->cache_s = stats_median(in, n);
	a->cache_sd = stats_sd(in, n);
	a->lookups = MEDIAN_U(a, lookups);
	a->hits = MEDIAN_U(a, hits);
	a->negative_hits = MEDIAN_U(a, negative_hits);
	a->misses = MEDIAN_U(a, misses);
	a->restarts = MEDIAN_U(a, restarts);
	a->path_hits = MEDIAN_U(a, path_hits);
	a->lock_waits = MEDIAN_U(a, lock_waits);
	a->entries = MEDIAN_U(a, entries);
	a->negative_misses = MEDIAN_U(a, negative_misses);
	a->complete_answers = MEDIAN_U(a, complete_answers);
	a->readdirs = MEDIAN_U(a, readdirs);
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
	a->path_hit_share = cache && a->lookups ?
			    (double)a->path_hits / (double)a->lookups : NAN;
	a->too_short = cache && !(a->elapsed_s >= MIN_TIMED_S);
}

static const char *fmt_s(double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.3fs", v);
	return buf;
}

const char *report_fmt_rate(double v, char *buf, size_t size)
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

void report_agg(FILE *f, const struct agg *a)
{
	char b1[32], b2[32], b3[32], b4[32];

	fprintf(f, "%-7s Elapsed: %.3fs User: %.3fs System: %.3fs CPU: %.1f%%  "
		"[median of %u; mean %.3fs sd %s]\n",
		rp_mode_name(a->mode), a->elapsed_s, a->user_s, a->sys_s, a->cpu_pct,
		a->done, a->elapsed_mean, fmt_s(a->elapsed_sd, b1, sizeof(b1)));
	print_cache_time(f, a);
	if (a->mode == RP_NULL) {
		fprintf(f, "        no cache: the replay machinery alone; %s planned lookups/s;"
			" mismatches %llu\n", report_fmt_rate(a->lookups_per_s, b2, sizeof(b2)),
			(unsigned long long)a->mismatches);
		return;
	}
	fprintf(f, "        %s lookups/s", report_fmt_rate(a->lookups_per_s, b2, sizeof(b2)));
	if (!isnan(a->ns_per_lookup))
		fprintf(f, "  %.0f ns/lookup  %.1f ns/component", a->ns_per_lookup,
			a->ns_per_component);
	if (!isnan(a->cpu_over_null_s))
		fprintf(f, "  CPU beyond null %.3fs", a->cpu_over_null_s);
	else if (!isnan(a->cpu_ns_per_lookup))
		fprintf(f, "  %.0f ns CPU/lookup", a->cpu_ns_per_lookup);
	fprintf(f, "\n        lookups %llu  hits %s  negative %s  one-probe %s  misses %llu"
		"  restarts %llu  lock waits %llu  mismatches %llu",
		(unsigned long long)a->lookups, fmt_pct(a->hit_share, b1, sizeof(b1)),
		fmt_pct(a->negative_share, b3, sizeof(b3)),
		fmt_pct(a->path_hit_share, b4, sizeof(b4)), (unsigned long long)a->misses,
		(unsigned long long)a->restarts, (unsigned long long)a->lock_waits,
		(unsigned long long)a->mismatches);
	if (a->update_errors)
		fprintf(f, "  update errors %llu", (unsigned long long)a->update_errors);
	if (a->mode != RP_NULL)
		fprintf(f, "\n        backend ENOENT %llu  ENOENT from listings %llu"
			"  listings %llu", (unsigned long long)a->negative_misses,
			(unsigned long long)a->complete_answers,
			(unsigned long long)a->readdirs);
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

/*
 * An aggregate's figures in the JSON document's order: a double (NaN is
 * written null: unmeasured), a counter, or a counter of the cache's that
 * the null mode, which has no cache, writes as null.
 */
enum agg_kind { A_NUM, A_UINT, A_CACHE };
#define NUM(f)		{ #f, offsetof(struct agg, f), A_NUM }
#define UINT(f)		{ #f, offsetof(struct agg, f), A_UINT }
#define CACHE(f)	{ #f, offsetof(struct agg, f), A_CACHE }
static const struct {
	const char *key;
	size_t off;
	enum agg_kind kind;
} agg_fields[] = {
	NUM(elapsed_s), NUM(elapsed_mean), NUM(elapsed_sd), NUM(user_s), NUM(sys_s),
	NUM(cpu_s), NUM(cpu_sd), NUM(cpu_pct), NUM(cache_s), NUM(cache_sd),
	NUM(cpu_over_null_s), NUM(cpu_over_null_sd),
	UINT(lookups), NUM(lookups_per_s), NUM(ns_per_lookup), NUM(ns_per_component),
	NUM(cpu_ns_per_lookup), UINT(components),
	CACHE(hits), NUM(hit_share), CACHE(negative_hits), NUM(negative_share),
	CACHE(path_hits), NUM(path_hit_share),
	CACHE(misses), CACHE(restarts), CACHE(lock_waits), CACHE(entries),
	CACHE(negative_misses), CACHE(complete_answers), CACHE(readdirs),
	UINT(checked), UINT(mismatches), UINT(unchecked), UINT(update_errors),
};
#undef NUM
#undef UINT
#undef CACHE

static void agg_field_json(struct json *j, const struct agg *a, unsigned i)
{
	const char *at = (const char *)a + agg_fields[i].off;
	uint64_t u;
	double d;

	switch (agg_fields[i].kind) {
	case A_NUM:
		memcpy(&d, at, sizeof(d));
		json_knum(j, agg_fields[i].key, d);
		break;
	case A_CACHE:
		if (a->mode == RP_NULL) {
			json_knull(j, agg_fields[i].key);
			break;
		}
		/* fall through */
	case A_UINT:
		memcpy(&u, at, sizeof(u));
		json_kuint(j, agg_fields[i].key, u);
		break;
	}
}

void report_agg_json(struct json *j, const struct agg *a)
{
	json_obj_begin(j);
	json_kstr(j, "mode", rp_mode_name(a->mode));
	json_kuint(j, "threads", a->threads);
	json_kuint(j, "copies", a->copies);
	json_kuint(j, "runs", a->done);
	json_kbool(j, "oversubscribed", a->over);
	json_kbool(j, "too_short", a->too_short);
	for (unsigned i = 0; i < sizeof(agg_fields) / sizeof(agg_fields[0]); i++)
		agg_field_json(j, a, i);
	json_obj_end(j);
}

void report_info_json(struct json *j, const char *file, const struct dct_trace *t,
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

int run_opt(const char *cmd, const char *help, int argc, char **argv, int *i,
	    struct run_opts *o, int *rc)
{
	const char *v = NULL;
	int bad = 0;

	if (!strcmp(argv[*i], "-h") || cli_opt(cmd, argc, argv, i, "help", false, &v, &bad)) {
		if (!bad)
			fputs(help, stdout);
		*rc = bad ? bad : EXIT_OK;
		return CLI_EXIT;
	}
	if (cli_opt(cmd, argc, argv, i, "copies", true, &v, &bad)) {
		if (!bad)
			bad = cli_uint(cmd, "--copies", v, 1, RP_MAX_COPIES, &o->copies);
	} else if (cli_opt(cmd, argc, argv, i, "runs", true, &v, &bad)) {
		if (!bad)
			bad = cli_uint(cmd, "--runs", v, 1, MAX_RUNS, &o->runs);
	} else if (cli_opt(cmd, argc, argv, i, "warmup", false, &v, &bad)) {
		o->warmup = !bad;
	} else if (cli_opt(cmd, argc, argv, i, "complete-after", true, &v, &bad)) {
		if (!bad && !strcmp(v, "off"))
			o->complete_after = DC_COMPLETE_OFF;
		else if (!bad)
			bad = cli_uint(cmd, "--complete-after", v, 1, 1000000,
				       &o->complete_after);
	} else if (cli_opt(cmd, argc, argv, i, "json", false, &v, &bad)) {
		o->json = !bad;
	} else {
		return CLI_NONE;
	}
	*rc = bad;
	return bad ? CLI_EXIT : CLI_TAKEN;
}

int report_trace_arg(const char *cmd, char *arg, const char **file)
{
	if (arg[0] == '-' && arg[1])
		return cli_usage(cmd, "unknown option '%s'", arg);
	if (*file)
		return cli_usage(cmd, "one trace at a time ('%s' and '%s')", *file, arg);
	*file = arg;
	return 0;
}

int report_open(struct setup *s)
{
	char err[512];

	if (!s->file)
		return cli_usage(s->cmd, "which trace?");
	if (dct_read(s->file, &s->t, err, sizeof(err))) {
		fprintf(stderr, "dcbench %s: %s\n", s->cmd, err);
		return EXIT_FAIL;
	}
	if (rp_prepare(s->t, &s->p, err, sizeof(err))) {
		fprintf(stderr, "dcbench %s: %s: %s\n", s->cmd, s->file, err);
		dct_free(s->t);
		return EXIT_FAIL;
	}
	print_info(s->rep, s->file, s->t, rp_get_info(s->p));
	return 0;
}

void report_close(struct setup *s)
{
	rp_free(s->p);
	dct_free(s->t);
}

/* One run into a (NULL: a warm-up, not kept).  0 or EXIT_FAIL. */
int report_run(struct setup *s, int mode, unsigned threads, unsigned copies,
		   struct agg *a, unsigned *printed)
{
	struct rp_config cfg = {
		.mode = mode, .threads = threads, .copies = copies,
		.progress = cli_progress() ? stderr : NULL,
		.mismatch_log = stderr,
		.max_print = *printed < MAX_PRINT ? MAX_PRINT - *printed : 0,
		.complete_after = s->complete_after,
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
	else
		s->warm_wrong += res.mismatches + res.update_errors;
	return 0;
}

/* A run too short to time, said the same way everywhere; then what follows. */
void report_too_short(FILE *f, const struct dct_trace *t, const struct agg *a,
			    const char *then)
{
	fprintf(f, "trace too short to time: %llu ops, %.3f ms a run (%s, %u thread%s; "
		"at least %.0f ms wanted); %s\n",
		(unsigned long long)t->nops * a->copies, a->elapsed_s * 1e3,
		rp_mode_name(a->mode), a->threads, a->threads == 1 ? "" : "s",
		MIN_TIMED_S * 1e3, then);
}
