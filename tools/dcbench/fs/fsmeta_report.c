// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fsmeta_report.c - `dcbench fsmeta`'s report (fsmeta_report.h): of each
 * configuration the median run by total ops/s (the median, not the best:
 * on a shared machine the best run rewards where the scheduler happened to
 * put the threads), the mean, sd and range, failed operations, the
 * daemon's CPU time, the ratio to native; the info ratios to the peers,
 * the goals, and the JSON document.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/json.h"
#include "fs/fsmeta_report.h"
#include "fs/fsmount.h"


bool fsmeta_is_fuse(const struct config *c)
{
	return strcmp(c->fs.kind, "native") != 0;
}

static double total_rate(const struct run *r)
{
	return fsl_rate(&r->res.total);
}

static void summarise(struct config *c, unsigned repeat)
{
	unsigned order[MAX_REPEAT];
	double sum = 0, ss = 0;

	c->failed = 0;
	c->daemon_ok = true;
	for (unsigned r = 0; r < repeat; r++) {
		double v = total_rate(&c->runs[r]);
		unsigned k = r;

		/* insertion sort by total ops/s: R is small */
		while (k > 0 && total_rate(&c->runs[order[k - 1]]) > v) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = r;
		sum += v;
		c->failed += c->runs[r].res.total.failed;
		c->daemon_ok &= c->runs[r].daemon_ok;
	}
	/* the median, not the best: on a shared machine the best run rewards
	 * where the scheduler happened to put the threads (lower median for
	 * an even R) */
	c->median = order[(repeat - 1) / 2];
	c->med = total_rate(&c->runs[c->median]);
	c->lo = total_rate(&c->runs[order[0]]);
	c->hi = total_rate(&c->runs[order[repeat - 1]]);
	c->mean = sum / repeat;
	for (unsigned r = 0; r < repeat; r++) {
		double d = total_rate(&c->runs[r]) - c->mean;

		ss += d * d;
	}
	c->sd = repeat > 1 ? sqrt(ss / (repeat - 1)) : 0;
}

static struct config *find(struct config *cfg, unsigned n, const char *kind)
{
	/* the kind as it comes, without timeouts or coherence of its own */
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(cfg[i].fs.kind, kind) && !cfg[i].fs.own_to && !cfg[i].fs.coherence[0])
			return &cfg[i];
	return NULL;
}

/* dcfs with a watcher and long timeouts (fsm_config_coherent). */
static struct config *find_coherent(struct config *cfg, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fsm_config_coherent(&cfg[i].fs))
			return &cfg[i];
	return NULL;
}

/* passthrough_ll at timeout 0 (fsm_config_peer0). */
static struct config *find_peer0(struct config *cfg, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (fsm_config_peer0(&cfg[i].fs))
			return &cfg[i];
	return NULL;
}

struct goal {
	char text[320];
	double value, target;
	int met;		/* 1, 0, or -1: not measured */
};

/*
 * Why a ratio of a to b would not compare like with like, or NULL: a side
 * failed operations (a failed readdir prunes a subtree) or walked another
 * number of entries.
 */
static const char *unlike(const struct config *a, const struct config *b)
{
	if (a->failed || b->failed)
		return "a side failed operations";
	if (a->runs[a->median].res.entries != b->runs[b->median].res.entries)
		return "the sides walked different numbers of entries";
	return NULL;
}

static void __attribute__((format(printf, 5, 6)))
set_goal(struct goal *g, double target, double value, int met, const char *fmt, ...)
{
	va_list ap;

	g->target = target;
	g->value = value;
	g->met = met;
	va_start(ap, fmt);
	vsnprintf(g->text, sizeof(g->text), fmt, ap);
	va_end(ap);
}

/* Coherent dcfs (a watcher, long timeouts) against passthrough_ll at
 * timeout 0 and against native.  Two goals. */
static unsigned coherent_goals(struct config *cfg, unsigned n, struct goal *g)
{
	struct config *coh = find_coherent(cfg, n), *pt0 = find_peer0(cfg, n);
	struct config *nat = find(cfg, n, "native");
	const char *why;
	double v;

	if (!coh || !pt0)
		set_goal(&g[0], 20, NAN, -1, "dcfs coherent / passthrough_ll@0 (>= 20): not "
			 "measured (--configs lacks rcu@default or passthrough_ll@0)");
	else if ((why = unlike(coh, pt0)) || !(pt0->med > 0))
		set_goal(&g[0], 20, NAN, -1, "%s / %s (>= 20): not measured (%s)",
			 coh->label, pt0->label, why ? why : "no rate");
	else {
		v = coh->med / pt0->med;
		set_goal(&g[0], 20, v, v >= 20, "%s / %s = %.1f (>= 20)", coh->label,
			 pt0->label, v);
	}
	if (!coh || !nat)
		set_goal(&g[1], 1.5, NAN, -1, "native / dcfs coherent (<= 1.5): not measured "
			 "(--configs lacks native or rcu@default)");
	else if ((why = unlike(coh, nat)) || !(coh->med > 0))
		set_goal(&g[1], 1.5, NAN, -1, "native / %s (<= 1.5): not measured (%s)",
			 coh->label, why ? why : "no rate");
	else {
		v = nat->med / coh->med;
		set_goal(&g[1], 1.5, v, v <= 1.5, "native / %s = %.2f (<= 1.5)", coh->label, v);
	}
	return 2;
}

/* rcu against passthrough_ll and global, and its failed operations; then
 * coherent_goals.  Returns how many goals g holds (at most 5). */
static unsigned goals(struct config *cfg, unsigned n, struct goal *g)
{
	struct config *rcu = find(cfg, n, "rcu"), *glo = find(cfg, n, "global");
	struct config *ptl = find(cfg, n, "passthrough_ll");
	const char *why;
	double v;

	if (rcu && ptl && (why = unlike(rcu, ptl)))
		set_goal(&g[0], 3, NAN, -1, "dcfs rcu / passthrough_ll (>= 3): not measured "
			 "(%s)", why);
	else if (rcu && ptl && ptl->med > 0) {
		v = rcu->med / ptl->med;
		set_goal(&g[0], 3, v, v >= 3, "dcfs rcu / passthrough_ll = %.2f (>= 3)", v);
	} else
		set_goal(&g[0], 3, NAN, -1, "dcfs rcu / passthrough_ll (>= 3): not measured "
			 "(--configs lacks rcu or passthrough_ll)");
	if (rcu)
		set_goal(&g[1], 0, (double)rcu->failed, rcu->failed == 0,
			 "dcfs rcu failed operations = %llu", (unsigned long long)rcu->failed);
	else
		set_goal(&g[1], 0, NAN, -1, "dcfs rcu failed operations = 0: not measured "
			 "(--configs lacks rcu)");
	/* "no slower than global, within one standard deviation": met when
	 * rcu's median is at least global's less the pooled sd of the two
	 * (0 with one run: then rcu >= global) */
	if (rcu && glo && (why = unlike(rcu, glo)))
		set_goal(&g[2], 1, NAN, -1, "dcfs rcu / global (>= 1): not measured (%s)", why);
	else if (rcu && glo && glo->med > 0) {
		double sd = sqrt((rcu->sd * rcu->sd + glo->sd * glo->sd) / 2);

		v = rcu->med / glo->med;
		set_goal(&g[2], 1, v, rcu->med >= glo->med - sd, "dcfs rcu / global = %.2f "
			 "(>= 1 within one sd: %.0f >= %.0f - %.0f ops/s)", v, rcu->med,
			 glo->med, sd);
	} else
		set_goal(&g[2], 1, NAN, -1, "dcfs rcu / global (>= 1): not measured "
			 "(--configs lacks rcu or global)");
	return 3 + coherent_goals(cfg, n, g + 3);
}

/* An "info:" ratio of a to b, when --configs has both: a median over a
 * median, or "not measured" when they did unlike work. */
static void print_info(FILE *f, const char *what, const struct config *a,
		       const struct config *b)
{
	const char *why;

	if (!a || !b)
		return;
	if ((why = unlike(a, b)) || !(b->med > 0))
		fprintf(f, "info: %s: not measured (%s)\n", what, why ? why : "no rate");
	else
		fprintf(f, "info: %s = %.2f\n", what, a->med / b->med);
}

static void print_table(FILE *f, struct config *cfg, unsigned n, unsigned repeat,
			const struct config *nat)
{
	fprintf(f, "%-22s %7s %9s %9s %9s %9s %9s %8s %15s %6s %11s %8s\n", "config",
		"entries", "walk/s", "stat/s", "mix/s", "total/s", "mean", "sd", "total-range",
		"failed", "usr/sys_s", "x_native");
	for (unsigned i = 0; i < n; i++) {
		const struct config *c = &cfg[i];
		const struct run *m = &c->runs[c->median];
		char range[40], cpu[32], x[16];

		snprintf(range, sizeof(range), "%.0f-%.0f", c->lo, c->hi);
		if (fsmeta_is_fuse(c))
			snprintf(cpu, sizeof(cpu), "%.2f/%.2f", m->user_s, m->sys_s);
		else
			snprintf(cpu, sizeof(cpu), "-/-");
		if (nat && nat->med > 0 && !unlike(c, nat))
			snprintf(x, sizeof(x), "%.3f", c->med / nat->med);
		else
			snprintf(x, sizeof(x), "-");
		fprintf(f, "%-22s %7zu %9.0f %9.0f %9.0f %9.0f %9.0f %8.0f %15s %6llu %11s %8s\n",
			c->label, m->res.entries, fsl_rate(&m->res.phase[FSL_WALK]),
			fsl_rate(&m->res.phase[FSL_STAT]), fsl_rate(&m->res.phase[FSL_MIX]),
			c->med, c->mean, c->sd, range, (unsigned long long)c->failed, cpu, x);
	}
	/* what failed, so that a failure can be told from a slow run */
	for (unsigned i = 0; i < n; i++) {
		const struct config *c = &cfg[i];

		if (!c->failed)
			continue;
		for (unsigned r = 0; r < repeat; r++)
			if (c->runs[r].res.total.failed) {
				fprintf(f, "%s: %llu failed operations; the first in run %u: %s\n",
					c->label, (unsigned long long)c->failed, r + 1,
					c->runs[r].res.total.first_error);
				break;
			}
	}
}

static void phase_json(struct json *j, const char *key, const struct fsl_phase *p)
{
	json_key(j, key);
	json_obj_begin(j);
	json_kuint(j, "ops", p->ops);
	json_knum(j, "seconds", p->seconds);
	json_knum(j, "ops_per_s", fsl_rate(p));
	json_kuint(j, "failed", p->failed);
	if (p->first_error[0])
		json_kstr(j, "first_error", p->first_error);
	else
		json_knull(j, "first_error");
	json_obj_end(j);
}
static int write_json(const struct setup *s, struct config *cfg, unsigned n,
		      const struct config *nat, const struct goal *g, unsigned ng,
		      bool goals_apply)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", JSON_SCHEMA_VERSION);
	json_kstr(&j, "command", "fsmeta");
	json_kstr(&j, "dir", s->dir);
	json_kuint(&j, "entries", cfg[0].runs[0].res.entries);
	json_kuint(&j, "threads", s->threads);
	json_kuint(&j, "passes", s->passes);
	json_kuint(&j, "mix", s->mix);
	json_knum(&j, "entry_timeout", s->entry_to);
	json_knum(&j, "attr_timeout", s->attr_to);
	json_kuint(&j, "repeat", s->repeat);
	json_kbool(&j, "caches_dropped", s->dropped);
	json_kstr(&j, "dcfs_opts", s->dcfs_opts ? s->dcfs_opts : "");
	json_key(&j, "results");
	json_arr_begin(&j);
	for (unsigned i = 0; i < n; i++) {
		const struct config *c = &cfg[i];
		const struct run *m = &c->runs[c->median];

		json_obj_begin(&j);
		json_kstr(&j, "config", c->label);
		json_kstr(&j, "kind", c->fs.kind);
		json_kuint(&j, "median_run", c->median + 1);
		json_knum(&j, "walk_ops_per_s", fsl_rate(&m->res.phase[FSL_WALK]));
		json_knum(&j, "stat_ops_per_s", fsl_rate(&m->res.phase[FSL_STAT]));
		json_knum(&j, "mix_ops_per_s", fsl_rate(&m->res.phase[FSL_MIX]));
		json_knum(&j, "total_ops_per_s", c->med);
		json_knum(&j, "total_mean", c->mean);
		json_knum(&j, "total_sd", c->sd);
		json_knum(&j, "total_min", c->lo);
		json_knum(&j, "total_max", c->hi);
		json_kuint(&j, "failed", c->failed);
		json_knum(&j, "daemon_user_s", fsmeta_is_fuse(c) ? m->user_s : NAN);
		json_knum(&j, "daemon_sys_s", fsmeta_is_fuse(c) ? m->sys_s : NAN);
		json_kbool(&j, "daemon_ok", c->daemon_ok);
		json_knum(&j, "x_native", nat && nat->med > 0 && !unlike(c, nat) ?
					  c->med / nat->med : NAN);
		json_key(&j, "runs");
		json_arr_begin(&j);
		for (unsigned r = 0; r < s->repeat; r++) {
			const struct run *x = &c->runs[r];

			json_obj_begin(&j);
			json_kuint(&j, "entries", x->res.entries);
			json_key(&j, "phases");
			json_obj_begin(&j);
			for (int p = 0; p < FSL_NPHASES; p++)
				phase_json(&j, fsl_phase_names[p], &x->res.phase[p]);
			json_obj_end(&j);
			phase_json(&j, "total", &x->res.total);
			json_knum(&j, "daemon_user_s", fsmeta_is_fuse(c) ? x->user_s : NAN);
			json_knum(&j, "daemon_sys_s", fsmeta_is_fuse(c) ? x->sys_s : NAN);
			json_kbool(&j, "daemon_ok", x->daemon_ok);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_kbool(&j, "goals_apply", goals_apply);
	json_key(&j, "goals");
	json_arr_begin(&j);
	for (unsigned i = 0; i < ng; i++) {
		json_obj_begin(&j);
		json_kstr(&j, "goal", g[i].text);
		json_knum(&j, "value", g[i].value);
		json_knum(&j, "target", g[i].target);
		if (g[i].met < 0)
			json_knull(&j, "met");
		else
			json_kbool(&j, "met", g[i].met);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	if (json_finish(&j)) {
		fprintf(stderr, "dcbench fsmeta: cannot write to stdout\n");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

int fsmeta_report(FILE *rep, const struct setup *s, struct config *cfg, unsigned ncfg,
		  bool json)
{
	struct config *nat = find(cfg, ncfg, "native"), *rcu = find(cfg, ncfg, "rcu");
	struct config *ptd = find(cfg, ncfg, "passthrough_ll-dp");
	struct config *ptl = find(cfg, ncfg, "passthrough_ll");
	struct config *rcu_uring = find(cfg, ncfg, "rcu-uring");
	bool apply = s->threads == 2 && s->entry_to == 0 && s->attr_to == 0;
	struct goal g[5];
	unsigned ng;
	int rc = EXIT_OK;

	for (unsigned i = 0; i < ncfg; i++) {
		summarise(&cfg[i], s->repeat);
		if (cfg[i].failed || !cfg[i].daemon_ok)
			rc = EXIT_FAIL;
	}
	fprintf(rep, "%zu entries\n", cfg[0].runs[0].res.entries);
	for (unsigned i = 1; i < ncfg; i++)
		if (cfg[i].runs[cfg[i].median].res.entries != cfg[0].runs[0].res.entries)
			fprintf(rep, "%s walked %zu entries in its median run\n",
				cfg[i].label, cfg[i].runs[cfg[i].median].res.entries);
	print_table(rep, cfg, ncfg, s->repeat, nat);
	print_info(rep, "dcfs rcu / passthrough_ll-dp (same mount options)", rcu, ptd);
	print_info(rep, "dcfs rcu / passthrough_hp", rcu, find(cfg, ncfg, "passthrough_hp"));
	print_info(rep, "dcfs rcu-uring / passthrough_ll", rcu_uring, ptl);
	print_info(rep, "dcfs rcu-uring / passthrough_hp-uring (both rings)", rcu_uring,
		   find(cfg, ncfg, "passthrough_hp-uring"));
	print_info(rep, "dcfs rcu-uring / rcu (FUSE over io_uring against /dev/fuse)",
		   rcu_uring, rcu);
	ng = goals(cfg, ncfg, g);
	if (!apply)
		fprintf(rep, "note: the goals are set for --threads 2 with both timeouts 0; "
			"this run differs\n");
	for (unsigned i = 0; i < ng; i++)
		fprintf(rep, "goal: %s%s\n", g[i].text,
			g[i].met < 0 ? "" : g[i].met ? ": met" : ": NOT met");
	if (json && write_json(s, cfg, ncfg, nat, g, ng, apply))
		rc = EXIT_FAIL;
	return rc;
}
