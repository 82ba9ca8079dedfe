/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * report_json.c - the report as one JSON document on stdout (--json):
 * the run's settings, the tree, bytes per entry, a row per measured cell,
 * the cells not measured and why, the path depths side by side, the
 * storm, update costs and the goals.
 */
#include <math.h>
#include <stdio.h>

#include "common/json.h"
#include "micro/micro.h"

/* 2 since "scaling" is of wall-clock throughput and the lookups counted
 * wrong replaced the failed ones */
#define MICRO_SCHEMA_VERSION	2

static const char *const u_names[U_NR] = {
	"rename", "rename_cache_only", "create_unlink", "create_unlink_cache_only",
};

static void json_bytes(struct json *j, struct bench *b)
{
	const struct bytes_res *br[3] = { &b->by_hot, &b->by_short, &b->by_full };
	static const char *const key[3] = { "hot", "short_names", "short_names_65536" };

	json_key(j, "bytes");
	json_obj_begin(j);
	for (int i = 0; i < 3; i++) {
		json_key(j, key[i]);
		if (!br[i]->ok) {
			json_null(j);
			continue;
		}
		json_obj_begin(j);
		json_kuint(j, "entries", br[i]->entries);
		json_kuint(j, "bytes", br[i]->bytes);
		json_kuint(j, "max_entries", br[i]->max_entries);
		json_knum(j, "bytes_per_entry", br[i]->bpe);
		json_kuint(j, "empty_cache_bytes", br[i]->empty_bytes);
		json_knum(j, "bytes_per_added_entry", br[i]->marginal);
		json_kuint(j, "bytes_with_paths", br[i]->bytes_paths);
		json_knum(j, "bytes_per_entry_with_paths", br[i]->bpe_paths);
		json_kuint(j, "one_probe_paths", br[i]->paths);
		json_obj_end(j);
	}
	json_knum(j, "lfht_bytes_per_entry",
		  b->ref_bpe[IM_LFHT] > 0 ? b->ref_bpe[IM_LFHT] : NAN);
	json_knum(j, "mutex_bytes_per_entry",
		  b->ref_bpe[IM_MUTEX] > 0 ? b->ref_bpe[IM_MUTEX] : NAN);
	json_obj_end(j);
}

/* A row of results: one measured cell. */
static void json_cell(struct json *j, struct bench *b, int sc, unsigned ti, int k,
		      const struct cell *c)
{
	json_obj_begin(j);
	json_kstr(j, "scenario", sc_names[sc]);
	json_kstr(j, "impl", im_names[k]);
	json_kuint(j, "threads", b->tl[ti]);
	json_kbool(j, "oversubscribed", b->tl[ti] > b->cores);
	json_knum(j, "ns_per_lookup", c->ns_med);
	json_knum(j, "ns_per_component", c->nsc_med);
	json_knum(j, "mops", c->mops_med);
	json_knum(j, "ns_per_lookup_mean", c->ns_mean);
	json_knum(j, "ns_per_lookup_sd", c->ns_sd);
	json_knum(j, "mops_mean", c->mops_mean);
	json_knum(j, "mops_sd", c->mops_sd);
	json_knum(j, "scaling", c->scaling);
	json_knum(j, "mops_wall", c->mopsw_med);
	if (k == IM_KERNEL) {
		json_knum(j, "syscall_floor_ns", c->floor_med);
		json_knum(j, "ns_per_component_beyond_floor", c->beyond_med);
	}
	json_knum(j, "cpu_share", c->share_med);
	json_kuint(j, "runs", c->nr);
	json_key(j, "ratio");
	json_obj_begin(j);
	for (int r = 0; r < IM_NR; r++)
		if (r != k && b->impl[r])
			json_knum(j, im_names[r], ratio(b, sc, b->tl[ti], k, r));
	json_obj_end(j);
	json_kuint(j, "operations", c->ops);
	json_kuint(j, "lookups", c->lookups);
	json_kuint(j, "components", c->comps);
	json_kuint(j, "updates", c->upd);
	json_kuint(j, "wrong_lookups", c->wrong);
	json_kuint(j, "failed_updates", c->uerr);
	if (im_is_dc(k)) {
		json_kuint(j, "dc_misses", c->dc_misses);
		json_kuint(j, "dc_restarts", c->dc_restarts);
	}
	json_obj_end(j);
}

static void json_results(struct json *j, struct bench *b)
{
	json_key(j, "results");
	json_arr_begin(j);
	for (int sc = 0; sc < SC_NR; sc++) {
		if (!b->ran[sc])
			continue;
		for (unsigned ti = 0; ti < b->ntl; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);

				if (!b->impl[k] || !c->measured || !c->nr)
					continue;
				json_cell(j, b, sc, ti, k, c);
			}
	}
	json_arr_end(j);
}

/* The cells asked for without a row in results, and why. */
static void json_not_measured(struct json *j, struct bench *b)
{
	json_key(j, "not_measured");
	json_arr_begin(j);
	for (int sc = 0; sc < SC_NR; sc++)
		for (unsigned ti = 0; ti < b->ntl && b->ran[sc]; ti++)
			for (int k = 0; k < IM_NR; k++) {
				struct cell *c = cell_at(b, sc, ti, k);

				if (!b->impl[k] || (c->measured && c->nr))
					continue;
				json_obj_begin(j);
				json_kstr(j, "scenario", sc_names[sc]);
				json_kstr(j, "impl", im_names[k]);
				json_kuint(j, "threads", b->tl[ti]);
				json_kstr(j, "why", c->why[0] ? c->why : "?");
				json_kbool(j, "by_design", c->skipped);
				json_obj_end(j);
			}
	json_arr_end(j);
}

/* Each implementation's ns per path at every depth, and over depth2's. */
static void json_depth(struct json *j, struct bench *b)
{
	static const int sc[NDEPTH] = { SC_DEPTH2, SC_DEPTH4, SC_DEPTH8, SC_DEPTH16 };

	json_key(j, "depth");
	json_arr_begin(j);
	for (unsigned ti = 0; ti < b->ntl; ti++)
		for (int k = 0; k < IM_NR; k++) {
			bool any = false;

			for (int d = 0; d < NDEPTH; d++)
				any |= b->ran[sc[d]];
			if (!any || !b->impl[k])
				continue;
			json_obj_begin(j);
			json_kstr(j, "impl", im_names[k]);
			json_kuint(j, "threads", b->tl[ti]);
			json_key(j, "ns_per_path");
			json_obj_begin(j);
			for (int d = 0; d < NDEPTH; d++) {
				struct cell *c = cell_get(b, sc[d], b->tl[ti], k);

				json_knum(j, sc_names[sc[d]], c ? c->ns_med : NAN);
			}
			json_obj_end(j);
			json_knum(j, "depth16_over_depth2",
				  depth_ratio(b, SC_DEPTH16, b->tl[ti], k));
			json_obj_end(j);
		}
	json_arr_end(j);
}

/* The backend alone: the same threads' calls with no cache between. */
static void json_storm_alone(struct json *j, struct bench *b, double ideal)
{
	const struct storm_res *a = &b->storm_alone;
	double call = a->calls ? (double)a->call_ns / (double)a->calls / 1e3 : NAN;

	json_key(j, "alone");
	json_obj_begin(j);
	json_kuint(j, "runs", a->nr);
	json_knum(j, "lookups_per_s", a->nr ? a->rate_med : NAN);
	json_knum(j, "ratio_to_ideal", a->nr && !a->failed ? a->rate_med / ideal : NAN);
	json_knum(j, "backend_call_us", call);
	json_knum(j, "cpu_us_per_lookup", a->lookups ?
		  (double)a->cpu_ns / (double)a->lookups / 1e3 : NAN);
	json_knum(j, "switches_per_lookup", a->lookups ?
		  (double)a->csw / (double)a->lookups : NAN);
	json_kuint(j, "lookups", a->lookups);
	json_kuint(j, "failed_lookups", a->failed);
	json_obj_end(j);
}

/* The storm's settings, the backend alone, and a row per libdcache mode
 * asked for. */
static void json_storm(struct json *j, struct bench *b)
{
	double ideal = (double)b->storm_threads * 1e6 / b->storm_delay_us;

	json_key(j, "storm");
	if (!b->storm_ran) {
		json_null(j);
		return;
	}
	json_obj_begin(j);
	json_kuint(j, "threads", b->storm_threads);
	json_kuint(j, "backend_delay_us", b->storm_delay_us);
	json_knum(j, "ideal_lookups_per_s", ideal);
	json_storm_alone(j, b, ideal);
	json_key(j, "results");
	json_arr_begin(j);
	for (int k = 0; k <= IM_GLOBAL; k++) {
		const struct storm_res *r = &b->storm[k];
		double n = (double)r->lookups;
		double call = r->calls ? (double)r->call_ns / (double)r->calls / 1e3 : NAN;

		if (!b->impl[k])
			continue;
		json_obj_begin(j);
		json_kstr(j, "impl", im_names[k]);
		json_kuint(j, "runs", r->nr);
		if (!r->nr) {
			json_kstr(j, "not_measured", r->why[0] ? r->why : "?");
			json_obj_end(j);
			continue;
		}
		json_knum(j, "lookups_per_s", r->rate_med);
		json_knum(j, "ratio_to_ideal", r->failed ? NAN : r->rate_med / ideal);
		json_knum(j, "ratio_to_alone", r->failed || b->storm_alone.failed ||
			  !b->storm_alone.nr ? NAN : r->rate_med / b->storm_alone.rate_med);
		json_knum(j, "backend_call_us", call);
		json_knum(j, "ratio_to_measured_ideal", r->failed ? NAN :
			  r->rate_med * call / 1e6 / b->storm_threads);
		json_knum(j, "cpu_us_per_lookup", (double)r->cpu_ns / n / 1e3);
		json_knum(j, "switches_per_lookup", (double)r->csw / n);
		json_kuint(j, "lookups", r->lookups);
		json_kuint(j, "failed_lookups", r->failed);
		json_kuint(j, "backend_calls", r->calls);
		json_knum(j, "backend_calls_per_lookup", (double)r->calls / n);
		json_knum(j, "dc_misses_per_lookup", (double)r->dc_misses / n);
		json_knum(j, "miss_waits_per_lookup", (double)r->miss_waits / n);
		json_knum(j, "lock_waits_per_lookup", (double)r->lock_waits / n);
		json_kuint(j, "evictions", r->evictions);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void json_updates(struct json *j, struct bench *b)
{
	json_key(j, "updates");
	json_arr_begin(j);
	for (int k = 0; k < IM_NR && b->upd_ran; k++) {
		if (!b->impl[k])
			continue;
		json_obj_begin(j);
		json_kstr(j, "impl", im_names[k]);
		for (int u = 0; u < U_NR; u++) {
			char key[64];

			snprintf(key, sizeof(key), "%s_ns", u_names[u]);
			json_knum(j, key, b->upd_n[k][u] ? b->upd_med[k][u] : NAN);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_goals(struct json *j, struct bench *b)
{
	struct goal g[32];
	unsigned ng = make_goals(b, g);

	json_key(j, "goals");
	json_arr_begin(j);
	for (unsigned i = 0; i < ng; i++) {
		int m = goal_met(&g[i]);

		json_obj_begin(j);
		json_kstr(j, "goal", g[i].name);
		json_knum(j, "value", g[i].value);
		json_kstr(j, "op", g[i].le ? "<=" : ">=");
		json_knum(j, "target", g[i].target);
		if (m < 0)
			json_knull(j, "met");
		else
			json_kbool(j, "met", m);
		json_obj_end(j);
	}
	json_arr_end(j);
}

void write_json(struct bench *b, const char *date, const char *host)
{
	struct json j;

	json_init(&j, stdout);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", MICRO_SCHEMA_VERSION);
	json_kstr(&j, "command", "micro");
	json_kstr(&j, "host", host);
	json_kstr(&j, "date", date);
	json_kuint(&j, "cores", b->cores);
	json_kuint(&j, "runs", b->runs);
	json_kuint(&j, "ms_per_run", b->ms);
	json_kuint(&j, "ref_node_bytes", b->ref_node_bytes);
	json_kuint(&j, "ttl_ms", b->ttl_ms);
	json_kuint(&j, "rcu_ttl_ms", rcuttl_ms(b->ttl_ms));
	{
		const struct dc_cred *cr = rcuas_cred(b->as ? &b->cred : NULL);

		json_kuint(&j, "rcu_as_uid", cr->uid);
		json_kuint(&j, "rcu_as_gid", cr->gid);
		json_kuint(&j, "rcu_as_ngroups", cr->ngroups);
	}
	if (b->as) {
		json_kuint(&j, "as_uid", b->cred.uid);
		json_kuint(&j, "as_gid", b->cred.gid);
		json_kuint(&j, "as_ngroups", b->cred.ngroups);
	}
	json_key(&j, "threads");
	json_arr_begin(&j);
	for (unsigned i = 0; i < b->ntl; i++)
		json_uint(&j, b->tl[i]);
	json_arr_end(&j);
	json_kstr(&j, "kernel_fs", b->impl[IM_KERNEL] ? kfs_note() : NULL);
	json_key(&j, "tree");
	json_obj_begin(&j);
	json_kstr(&j, "file", b->treefile);
	json_kuint(&j, "entries", b->hot->nn - 1);
	json_kuint(&j, "directories", b->hot->ndirs);
	json_kuint(&j, "files", b->hot->nfiles);
	json_kuint(&j, "symlinks", b->hot->nlinks);
	json_obj_end(&j);
	json_knum(&j, "bytes_per_entry", b->by_hot.ok ? b->by_hot.bpe : NAN);
	json_knum(&j, "bytes_per_entry_short_names", b->by_short.ok ? b->by_short.bpe : NAN);
	json_knum(&j, "bytes_per_entry_short_names_with_paths",
		  b->by_short.ok ? b->by_short.bpe_paths : NAN);
	json_bytes(&j, b);
	json_results(&j, b);
	json_not_measured(&j, b);
	json_depth(&j, b);
	json_storm(&j, b);
	json_updates(&j, b);
	json_goals(&j, b);
	json_kuint(&j, "wrong_answers", b->mismatches);
	json_kuint(&j, "wrong_lookups", b->wrong_lookups);
	json_kuint(&j, "failed_updates", b->update_errors);
	json_kuint(&j, "unmeasured", b->unmeasured);
	json_obj_end(&j);
	json_finish(&j);
}
