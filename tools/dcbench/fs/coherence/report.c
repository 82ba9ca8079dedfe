// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * report.c - what `dcbench coherence` reports: per file system the lags
 * by kind of change (nearest-rank percentiles), the floods, examples of
 * changes seen late, never seen or failed, and all of it as JSON.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fs/fsmount.h"
#include "common/json.h"
#include "fs/coherence/run.h"

static int cmp_lag(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* nearest rank: the smallest lag with at least q of them at or below it */
static int64_t rank(const int64_t *v, size_t n, double q)
{
	size_t k = (size_t)ceil(q * (double)n);

	if (!n)
		return -1;
	return v[k ? k - 1 : 0];
}

static void summarise_one(const struct run *r, int chg, struct stats *st, int64_t *lags)
{
	const int64_t bound = (int64_t)r->s->bound_ms * 1000000;
	size_t n = 0;

	memset(st, 0, sizeof(*st));
	st->max_seen = -1;
	for (size_t i = 0; i < r->nrec; i++) {
		const struct rec *x = &r->recs[i];

		if (chg >= 0 && x->chg != chg)
			continue;
		st->via += x->via_mount;
		st->failed += x->failed;
		if (x->via_mount || x->failed)
			continue;
		lags[n++] = x->lag;
		st->direct++;
		st->over += x->lag > bound;
		st->over_in_stall += x->in_stall;	/* marked only when late */
		st->never += x->lag == NEVER;
		if (x->lag != NEVER && x->lag > st->max_seen)
			st->max_seen = x->lag;
	}
	qsort(lags, n, sizeof(*lags), cmp_lag);
	st->p50 = rank(lags, n, 0.50);
	st->p99 = rank(lags, n, 0.99);
	st->max = n ? lags[n - 1] : -1;
}

/* A late change a CPU stalled across: marked, and its example line says
 * so.  After the witnesses have stopped (it records a stall when
 * the stall ends, which may be after the change was judged). */
static void mark_stalls(struct run *r)
{
	const int64_t bound = (int64_t)r->s->bound_ms * 1000000;
	const char *why = " (a CPU stalled meanwhile)";

	for (size_t i = 0; i < r->nrec; i++) {
		struct rec *x = &r->recs[i];
		char *line;

		if (x->via_mount || x->failed || x->lag == NEVER || x->lag <= bound ||
		    !coh_witness_saw(&r->wit, x->t0, x->t0 + x->lag))
			continue;
		x->in_stall = true;
		if (x->late_example < 0)
			continue;
		line = r->late[x->late_example];
		if (strlen(line) + strlen(why) < sizeof(r->late[0]))
			strcat(line, why);
	}
}

int coh_summarise(struct run *r)
{
	int64_t *lags = malloc((r->nrec + 1) * sizeof(*lags));

	if (!lags)
		return -1;
	mark_stalls(r);
	summarise_one(r, -1, &r->all, lags);
	r->flood_changes = 0;
	r->flood_max = -1;
	for (size_t i = 0; i < r->nrec; i++) {
		const struct rec *x = &r->recs[i];

		if (!x->flood || x->via_mount || x->failed)
			continue;
		r->flood_changes++;
		if (x->lag > r->flood_max)
			r->flood_max = x->lag;
	}
	for (int c = 0; c < C_NCHG; c++)
		summarise_one(r, c, &r->by[c], lags);
	free(lags);
	return 0;
}

/* A lag in ms for the table: "-" unmeasured, ">G" never seen. */
static const char *ms(int64_t v, unsigned give_up_ms, char *buf, size_t size)
{
	if (v < 0)
		coh_put(buf, size, "-");
	else if (v == NEVER)
		coh_put(buf, size, ">%u", give_up_ms);
	else
		coh_put(buf, size, "%.3f", (double)v * 1e-6);
	return buf;
}

static void print_row(FILE *f, const char *name, const struct stats *st, unsigned g)
{
	char a[32], b[32], c[32];

	fprintf(f, "%-12s %7u %10s %10s %10s %7u %6u %6u %6u\n", name, st->direct,
		ms(st->p50, g, a, sizeof(a)), ms(st->p99, g, b, sizeof(b)),
		ms(st->max, g, c, sizeof(c)), st->over, st->never, st->via, st->failed);
}

static void describe_kind(const struct run *r, char *out, size_t size)
{
	const struct setup *s = r->s;

	if (!strcmp(r->kind, "native"))
		coh_put(out, size, "nothing mounted: the source itself");
	else if (!strncmp(r->kind, "passthrough_ll", 14) && s->peer_to >= 0)
		coh_put(out, size, "%s, -o timeout=%g", r->kind, s->peer_to);
	else if (!strncmp(r->kind, "passthrough_ll", 14))
		coh_put(out, size, "%s, its own timeout (1 s)", r->kind);
	else
		coh_put(out, size, "dcfs --mode %.*s%s%s%s", (int)strcspn(r->kind, "-"), r->kind,
		    strchr(r->kind, '-') ? " --uring" : "",
		    s->dcfs_args && *s->dcfs_args ? " " : " (its own timeouts)",
		    s->dcfs_args ? s->dcfs_args : "");
}

/* How often the CPUs stalled, each one's count, and the late changes
 * that overlapped a stall. */
static void print_stalls(FILE *f, const struct run *r)
{
	const struct witness *w = &r->wit;

	fprintf(f, "  a CPU stalled %u time%s while changes were timed (", w->stalls,
		w->stalls == 1 ? "" : "s");
	for (int cpu = -1, sep = 0; cpu < CPU_SETSIZE; cpu++) {
		unsigned n = coh_witness_on(w, cpu);

		if (n && cpu < 0)
			fprintf(f, "%sunpinned %u", sep++ ? ", " : "", n);
		else if (n)
			fprintf(f, "%scpu%d %u", sep++ ? ", " : "", cpu, n);
	}
	fprintf(f, "): a thread on each of the %u CPUs that only sleeps woke over %d ms "
		"late (the longest stall %.1f ms%s%s); %u of the late changes overlapped "
		"a stall%s\n", w->nthreads, STALL_NS / 1000000, (double)w->longest * 1e-6,
		w->raised ? "" : "; at normal priority, so a busy CPU may be all it was",
		w->pinned ? "" : "; not all pinned to their CPUs",
		r->all.over_in_stall, w->lost ? "; some stalls were not kept (no memory)" : "");
}

void coh_print_kind(FILE *f, const struct run *r)
{
	const struct setup *s = r->s;
	char how[PATH_MAX + 64], col[16];

	describe_kind(r, how, sizeof(how));
	fprintf(f, "\ncoherence %s: %s\n", r->kind, how);
	if (r->error[0])
		fprintf(f, "  error: %s\n", r->error);
	if (!r->nrec && r->error[0])
		return;
	fprintf(f, "  %zu names in %s/%s, all read through the mount in %.2f s; "
		"%u reader%s, %llu operations\n", r->entries, s->source, r->name, r->warm_s,
		s->readers, s->readers == 1 ? "" : "s", (unsigned long long)r->reader_ops);
	coh_put(col, sizeof(col), ">%ums", s->bound_ms);
	fprintf(f, "%-12s %7s %10s %10s %10s %7s %6s %6s %6s\n", "change", "direct", "p50_ms",
		"p99_ms", "max_ms", col, "never", "mount", "failed");
	for (int c = 0; c < C_NCHG; c++)
		if (r->by[c].direct || r->by[c].via)
			print_row(f, chg_names[c], &r->by[c], s->give_up_ms);
	print_row(f, "all", &r->all, s->give_up_ms);
	if (r->skipped)
		fprintf(f, "  %llu changes not made: the mount still showed an older state "
			"of their names after %u ms\n", (unsigned long long)r->skipped, s->give_up_ms);
	if (r->note[0])
		fprintf(f, "  note: %s\n", r->note);
	if (s->flood) {
		char mx[32];

		fprintf(f, "  floods: %u in %s/%s/%s, of %u files and more while a change was "
			"made: %llu files, %.2f s in all; ", r->floods, s->source, r->name,
			FLOOD_DIR, s->flood, (unsigned long long)r->flood_files, r->flood_s);
		if (r->overflows >= 0)
			fprintf(f, "the daemon logged %d overflow%s\n", r->overflows,
				r->overflows == 1 ? "" : "s");
		else
			fprintf(f, "%s\n", fsm_kind_dcfs(r->kind) ? "no daemon log to read" :
				"no dcfs: overflows not known");
		fprintf(f, "  the %u change%s made during the floods: max %s%s\n",
			r->flood_changes, r->flood_changes == 1 ? "" : "s",
			ms(r->flood_max, s->give_up_ms, mx, sizeof(mx)),
			r->flood_max >= 0 && r->flood_max != NEVER ? " ms" : "");
	}
	if (r->flood_err[0])
		fprintf(f, "  flood failed: %s\n", r->flood_err);
	if (r->nnever)
		fprintf(f, "  never seen (the first %u):\n", r->nnever);
	for (unsigned i = 0; i < r->nnever; i++)
		fprintf(f, "    %s\n", r->never[i]);
	if (!r->wit.watched)
		fprintf(f, "  the CPUs' stalls were not watched (no thread for each)\n");
	else if (r->wit.stalls)
		print_stalls(f, r);
	if (r->nlate)
		fprintf(f, "  later than %u ms (the first %u), with what the mount showed until "
			"then:\n", s->bound_ms, r->nlate);
	for (unsigned i = 0; i < r->nlate; i++)
		fprintf(f, "    %s\n", r->late[i]);
	if (r->nfails)
		fprintf(f, "  failed (the first %u):\n", r->nfails);
	for (unsigned i = 0; i < r->nfails; i++)
		fprintf(f, "    %s\n", r->fails[i]);
}

void coh_print_verdict(FILE *f, const struct run *r)
{
	char p99[32], fl[64] = "", st[16] = "-";

	if (!r->ran) {
		fprintf(f, "coherence %s: did not run: %s\n", r->kind,
			r->error[0] ? r->error : "interrupted");
		return;
	}
	if (r->s->flood && r->overflows >= 0)
		coh_put(fl, sizeof(fl), "; floods %u, overflows logged %d", r->floods, r->overflows);
	else if (r->s->flood)
		coh_put(fl, sizeof(fl), "; floods %u, overflows logged -", r->floods);
	if (r->wit.watched)
		coh_put(st, sizeof(st), "%u", r->all.over_in_stall);
	fprintf(f, "coherence %s: %u changes, stale>%ums %u (in a CPU stall %s), never "
		"seen %u, p99 %s%s; through the mount %u, failed %u%s\n", r->kind, r->all.direct,
		r->s->bound_ms, r->all.over, st, r->all.never, ms(r->all.p99, r->s->give_up_ms, p99, sizeof(p99)),
		r->all.p99 >= 0 && r->all.p99 != NEVER ? " ms" : "", r->all.via, r->all.failed, fl);
}

static double ms_json(int64_t v)
{
	return v < 0 || v == NEVER ? NAN : (double)v * 1e-6;
}

static void stats_json(struct json *j, const struct stats *st, bool watched)
{
	json_kuint(j, "direct", st->direct);
	json_knum(j, "p50_ms", ms_json(st->p50));
	json_knum(j, "p99_ms", ms_json(st->p99));
	json_knum(j, "max_ms", ms_json(st->max));
	json_knum(j, "max_seen_ms", ms_json(st->max_seen));
	json_kuint(j, "over_bound", st->over);
	if (watched)
		json_kuint(j, "over_bound_in_stall", st->over_in_stall);
	else
		json_knull(j, "over_bound_in_stall");
	json_kuint(j, "never_seen", st->never);
	json_kuint(j, "through_mount", st->via);
	json_kuint(j, "failed", st->failed);
}

static void strings_json(struct json *j, const char *key, char (*list)[640], unsigned n)
{
	json_key(j, key);
	json_arr_begin(j);
	for (unsigned i = 0; i < n; i++)
		json_str(j, list[i]);
	json_arr_end(j);
}

/* A message, or null when there is none. */
static void text_or_null(struct json *j, const char *key, const char *s)
{
	if (s[0])
		json_kstr(j, key, s);
	else
		json_knull(j, key);
}

int coh_write_json(const struct setup *s, struct run *runs, FILE *f)
{
	struct json j;

	json_init(&j, f);
	json_obj_begin(&j);
	json_kint(&j, "schema_version", JSON_SCHEMA_VERSION);
	json_kstr(&j, "command", "coherence");
	json_kstr(&j, "source", s->source);
	json_kstr(&j, "mount", s->mount);
	json_kuint(&j, "changes", s->changes);
	json_kuint(&j, "bound_ms", s->bound_ms);
	json_kuint(&j, "give_up_ms", s->give_up_ms);
	json_kuint(&j, "poll_us", POLL_NS / 1000);
	json_kuint(&j, "seed", s->seed);
	json_kuint(&j, "readers", s->readers);
	json_kuint(&j, "through_mount_percent", s->through);
	json_knum(&j, "peer_timeout", s->peer_to >= 0 ? s->peer_to : NAN);
	json_kstr(&j, "dcfs_args", s->dcfs_args ? s->dcfs_args : "");
	json_kuint(&j, "flood", s->flood);
	json_key(&j, "results");
	json_arr_begin(&j);
	for (unsigned i = 0; i < s->nkinds; i++) {
		struct run *r = &runs[i];

		json_obj_begin(&j);
		json_kstr(&j, "kind", r->kind);
		json_kbool(&j, "ran", r->ran);
		text_or_null(&j, "error", r->error);
		json_kuint(&j, "names", r->entries);
		json_kbool(&j, "xattrs", r->xattrs);
		json_knum(&j, "warm_up_s", r->warm_s);
		json_kuint(&j, "reader_ops", r->reader_ops);
		if (r->wit.watched) {
			json_kuint(&j, "cpu_stalls", r->wit.stalls);
			json_kuint(&j, "cpus_watched", r->wit.nthreads);
			json_knum(&j, "longest_stall_ms", (double)r->wit.longest * 1e-6);
			json_kbool(&j, "stall_witnesses_at_nice_minus_20", r->wit.raised);
			json_kbool(&j, "stall_witnesses_pinned", r->wit.pinned);
		} else {
			json_knull(&j, "cpu_stalls");
			json_knull(&j, "cpus_watched");
			json_knull(&j, "longest_stall_ms");
			json_knull(&j, "stall_witnesses_at_nice_minus_20");
			json_knull(&j, "stall_witnesses_pinned");
		}
		json_kuint(&j, "skipped_stale_before", r->skipped);
		text_or_null(&j, "note", r->note);
		json_kuint(&j, "floods", r->floods);
		json_kuint(&j, "flood_files", r->flood_files);
		json_knum(&j, "flood_s", r->flood_s);
		json_kuint(&j, "flood_changes", r->flood_changes);
		json_knum(&j, "flood_changes_max_ms", ms_json(r->flood_max));
		if (r->overflows >= 0)
			json_kint(&j, "overflows_logged", r->overflows);
		else
			json_knull(&j, "overflows_logged");
		text_or_null(&j, "flood_error", r->flood_err);
		stats_json(&j, &r->all, r->wit.watched);
		json_key(&j, "by_change");
		json_arr_begin(&j);
		for (int c = 0; c < C_NCHG; c++) {
			json_obj_begin(&j);
			json_kstr(&j, "change", chg_names[c]);
			stats_json(&j, &r->by[c], r->wit.watched);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		strings_json(&j, "never_seen_examples", r->never, r->nnever);
		strings_json(&j, "late_examples", r->late, r->nlate);
		strings_json(&j, "failed_examples", r->fails, r->nfails);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	return json_finish(&j);
}
