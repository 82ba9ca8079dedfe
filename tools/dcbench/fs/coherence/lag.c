// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lag.c - measuring the changes: before each, the mount must show the old
 * state of every name it touches; after it, the mount is polled until it
 * shows what the source shows.  The lag runs from the return of the
 * change's last system call to the end of the first poll that agreed; a
 * change not seen within --give-up-ms is never seen.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "cli.h"
#include "fs/coherence/run.h"

/* between two polls of the mount */
static void pause_poll(void)
{
	struct timespec t = { 0, POLL_NS };

	nanosleep(&t, NULL);
}

enum { AGREED, NOT_SEEN, DEAD, STOPPED };

/*
 * Polls the mount until every check agrees with want[], or limit_ns has
 * passed since t0.  *lag runs from t0 to the end of the poll that agreed.
 * A poll stops at its first disagreement: *bad is the last such check
 * (MAX_CHECKS if there was none) and *seen what the mount showed.
 */
static int await(struct run *r, const struct plan *p, const struct view *want,
		 int64_t t0, int64_t limit_ns, int64_t *lag, unsigned *bad,
		 struct view *seen)
{
	struct view v;

	*bad = MAX_CHECKS;
	for (;;) {
		unsigned i;
		int64_t t;

		for (i = 0; i < p->nchk; i++) {
			coh_observe(r->mnt, &p->chk[i], &v, r->buf);
			if (coh_dead(&v))
				return DEAD;
			if (!coh_same(&v, &want[i], p->chk[i].what)) {
				*seen = v;
				break;
			}
		}
		t = (int64_t)clock_ns();
		if (i == p->nchk) {
			*lag = t - t0;
			return AGREED;
		}
		*bad = i;
		if (t - t0 >= limit_ns)
			return NOT_SEEN;
		if (coh_interrupted)
			return STOPPED;
		pause_poll();
	}
}

static void example(char (*list)[640], unsigned *n, const struct plan *p,
		    const struct check *c, const char *what, const struct view *mnt,
		    const struct view *src)
{
	char m[256], s[256];

	if (*n == MAX_EXAMPLES)
		return;
	if (mnt && src) {
		coh_describe(mnt, c->what, m, sizeof(m));
		coh_describe(src, c->what, s, sizeof(s));
		coh_put(list[(*n)++], 640, "%s%s %s%s%s: %s: mount %s, source %s", chg_names[p->chg],
		    p->via_mount ? " (through the mount)" : "", p->a, what ? ", " : "",
		    what ? what : "", c->path, m, s);
	} else {
		coh_put(list[(*n)++], 640, "%s%s %s: %s", chg_names[p->chg],
		    p->via_mount ? " (through the mount)" : "", p->a, what);
	}
}

/* Every name of p the mount disagrees on, once given up on: the name, or
 * only its listing when that is all that differs. */
static void quarantine_stale(struct run *r, const struct plan *p, const struct view *want)
{
	struct view seen;

	for (unsigned i = 0; i < p->nchk; i++) {
		unsigned what = p->chk[i].what;

		coh_observe(r->mnt, &p->chk[i], &seen, r->buf);
		if (coh_same(&seen, &want[i], what))
			continue;
		coh_quarantine(r, p->chk[i].path, coh_same(&seen, &want[i], what & ~W_LIST) ? 'l' : 'n');
	}
}

/* A change seen after the bound: what the mount showed until then. */
static void late(struct run *r, const struct plan *p, int64_t lag, unsigned bad,
		 const struct view *seen, const struct view *now)
{
	char why[320];

	if (bad == MAX_CHECKS) {
		coh_put(why, sizeof(why), "%.3f ms, the first look", (double)lag * 1e-6);
		example(r->late, &r->nlate, p, NULL, why, NULL, NULL);
	} else {
		coh_put(why, sizeof(why), "%.3f ms", (double)lag * 1e-6);
		example(r->late, &r->nlate, p, &p->chk[bad], why, seen, &now[bad]);
	}
}

static void dead_mount(struct run *r)
{
	r->dead = true;
	coh_put(r->error, sizeof(r->error), "the mount stopped answering (ENOTCONN): the "
	    "daemon died; see %s/daemon-%s.log", r->s->work, r->kind);
}

/*
 * One change: wait until the mount shows the old state of its names, make
 * it, check the source shows it, then time the mount (or, through the
 * mount, check both at once).  0 when made, 1 when skipped (the mount
 * never showed the old state), -1 to stop.
 */
static int run_change(struct run *r, struct plan *p)
{
	static struct view old[MAX_CHECKS], now[MAX_CHECKS];
	const int64_t give_up = (int64_t)r->s->give_up_ms * 1000000;
	struct view seen;
	const char *call;
	struct rec *rec;
	unsigned bad = 0;
	int64_t t0, lag;
	int err, st;

	for (unsigned i = 0; i < p->nchk; i++)
		coh_observe(r->src, &p->chk[i], &old[i], r->buf);
	st = await(r, p, old, (int64_t)clock_ns(), give_up, &lag, &bad, &seen);
	if (st == DEAD)
		dead_mount(r);
	if (st == DEAD || st == STOPPED)
		return -1;
	if (st == NOT_SEEN) {
		r->skipped++;
		quarantine_stale(r, p, old);
		return 1;
	}

	err = coh_apply(p, p->via_mount ? r->mnt : r->src, &call);
	t0 = (int64_t)clock_ns();
	coh_flood_stop(r);
	for (unsigned i = 0; i < p->nchk; i++)
		coh_observe(r->src, &p->chk[i], &now[i], r->buf);

	rec = &r->recs[r->nrec++];
	rec->chg = (unsigned char)p->chg;
	rec->via_mount = p->via_mount;
	rec->flood = r->flood != NULL;
	rec->lag = NEVER;
	rec->late_example = -1;
	if (err || !coh_intended(r, p, now)) {
		char why[320];

		if (err)
			coh_put(why, sizeof(why), "%s: %s", call, coh_err_name(err));
		else
			coh_put(why, sizeof(why), "the source does not show it");
		rec->failed = true;
		example(r->fails, &r->nfails, p, NULL, why, NULL, NULL);
		if (coh_intended(r, p, now))
			coh_commit(r, p);
		coh_quarantine(r, p->a, 'n');
		return 0;
	}
	coh_commit(r, p);
	if (p->via_mount) {
		for (unsigned i = 0; i < p->nchk; i++) {
			coh_observe(r->mnt, &p->chk[i], &seen, r->buf);
			if (coh_dead(&seen)) {
				dead_mount(r);
				return -1;
			}
			if (!coh_same(&seen, &now[i], p->chk[i].what)) {
				rec->failed = true;
				example(r->fails, &r->nfails, p, &p->chk[i], NULL, &seen, &now[i]);
				quarantine_stale(r, p, now);
				break;
			}
		}
		return 0;
	}
	st = await(r, p, now, t0, give_up, &lag, &bad, &seen);
	if (st == DEAD)
		dead_mount(r);
	if (st == DEAD || st == STOPPED) {
		r->nrec--;
		return -1;
	}
	if (st == NOT_SEEN) {
		example(r->never, &r->nnever, p, &p->chk[bad], NULL, &seen, &now[bad]);
		quarantine_stale(r, p, now);
		return 0;
	}
	rec->lag = lag;
	rec->t0 = t0;
	if (lag > (int64_t)r->s->bound_ms * 1000000) {
		unsigned n = r->nlate;

		late(r, p, lag, bad, &seen, now);
		if (r->nlate > n)
			rec->late_example = (int)n;
	}
	return 0;
}

/*
 * The changes, one at a time.  With --flood, a flood begins before the
 * first change and then every quarter of them, and the change that follows
 * is made directly in the source while the flood still fills the watcher's
 * queue: its event is likely lost, and only the recovery from the overflow
 * can show it.
 */
void coh_run_changes(struct run *r)
{
	unsigned made = 0, attempts = 0, limit = 2 * r->s->changes + 100;
	unsigned every = r->s->changes / 4 ? r->s->changes / 4 : 1, next_flood = 0;

	while (made < r->s->changes && !coh_interrupted) {
		struct plan p;
		bool via;
		int rc;

		if (++attempts > limit) {
			coh_put(r->note, sizeof(r->note), "stopped after %u changes: the mount "
			    "was stale before %llu of them", made,
			    (unsigned long long)r->skipped);
			break;
		}
		if (r->s->flood && made == next_flood && !r->flood) {
			coh_flood_begin(r);
			next_flood += every;
		}
		via = coh_below(&r->rng, 100) < r->s->through && !r->flood;
		if (!coh_plan_change(r, &p, via)) {
			coh_put(r->note, sizeof(r->note), "stopped after %u changes: no name "
			    "left that a change could be made on", made);
			break;
		}
		rc = run_change(r, &p);
		if (r->flood)
			coh_flood_end(r);
		if (rc < 0)
			break;
		if (rc == 0)
			made++;
		if (cli_progress() && made % 50 == 0)
			fprintf(stderr, "\r  %s: %u/%u changes   ", r->kind, made, r->s->changes);
	}
	if (r->flood)
		coh_flood_end(r);
}
