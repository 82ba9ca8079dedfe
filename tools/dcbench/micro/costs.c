/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * costs.c - the suite's single-threaded measurements beside the
 * scenarios: bytes per cached entry (dc_get_stats after warming a cache
 * of exactly the tree, then again once every path has its one-probe
 * node, and the references' tables of the same tree), and
 * the cost of a rename and of a create+unlink pair in each implementation
 * (memfs + cache, and the cache alone).
 */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "dcache.h"
#include "common/stats.h"
#include "micro/micro.h"
#include "micro/util.h"

/* ---- bytes per cached entry ---------------------------------------------------- */

/* Resolve every path of t once, from the root. */
static void resolve_all(struct dc_cache *c, const struct tree *t)
{
	struct dc_inode ds;
	char path[PBUF];

	for (uint32_t i = 1; i < t->nn; i++)
		if (tree_path(t, i, path, sizeof(path)) > 0)
			dc_resolve(c, NULL, path, DC_NOFOLLOW, &ds);
}

static void measure_bytes(const struct tree *t, uint64_t max_entries,
			  struct bytes_res *r)
{
	struct fsinst fs;
	struct dc_cache *c;
	struct dc_options o = { .mode = DC_MODE_RCU, .max_entries = max_entries };
	struct dc_stats st;

	memset(r, 0, sizeof(*r));
	if (fs_build(t, &fs))
		return;
	o.backend = dc_memfs_backend(fs.fs);
	if (dc_cache_create(&o, &c) == 0) {
		uint64_t hits0;

		/* the fixed part: buckets, the cache, its root */
		dc_get_stats(c, &st);
		r->empty_bytes = st.bytes;
		resolve_all(c, t);	/* misses: the entries */
		dc_get_stats(c, &st);
		r->ok = st.entries > 1;
		r->entries = st.entries;
		r->bytes = st.bytes;
		r->max_entries = max_entries;
		r->bpe = (double)st.bytes / (double)st.entries;
		r->marginal = r->ok ? (double)(st.bytes - r->empty_bytes) /
				      (double)(st.entries - 1) : NAN;
		resolve_all(c, t);	/* walks that hit: their nodes */
		dc_get_stats(c, &st);
		r->bytes_paths = st.bytes;
		r->bpe_paths = (double)st.bytes / (double)st.entries;
		hits0 = st.path_hits;
		resolve_all(c, t);	/* one probe each where a node is */
		dc_get_stats(c, &st);
		r->paths = st.path_hits - hits0;
		dc_cache_destroy(c);
	}
	dc_memfs_free(fs.fs);
	free(fs.mino);
}

void run_bytes(struct bench *b)
{
	struct tree *t;

	progress("bytes per entry");
	measure_bytes(b->hot, b->hot->nn, &b->by_hot);
	t = tree_filter(b->hot, 32, UINT32_MAX, "short");
	measure_bytes(t, t->nn, &b->by_short);
	tree_free(t);
	t = tree_filter(b->hot, 32, 65536, "full");
	measure_bytes(t, t->nn, &b->by_full);
	tree_free(t);
	/* the references' tables of the hot tree, same bucket count */
	for (int k = IM_LFHT; k <= IM_MUTEX; k++) {
		struct impl im;
		uint64_t nb = pow2_at_least(b->hot->nn);

		memset(&im, 0, sizeof(im));
		im.kind = k;
		if ((k == IM_LFHT ? lfht_build(&im, b->hot, nb, 0) :
				    mtab_build(&im, b->hot, nb, 0)) == 0)
			b->ref_bpe[k] = (double)im.bytes / b->hot->nn;
		im_destroy(&im);
	}
}

/* ---- the cost of updates ------------------------------------------------------ */

static int upd_op(struct impl *im, struct dirh *h, int which, unsigned i)
{
	static const struct dc_inode fake = { 1ull << 40, 1ull << 40, S_IFREG | 0644, 0 };
	int err;

	switch (which) {
	case U_RENAME:
		return i & 1 ? im_rename(im, h, 1, "zzu-y", 0, "zzu-x") :
			       im_rename(im, h, 0, "zzu-x", 1, "zzu-y");
	case U_RENAME_CACHE:
		return i & 1 ? dc_rename(im->c, h->d[1], "zzu-y", h->d[0], "zzu-x", 0) :
			       dc_rename(im->c, h->d[0], "zzu-x", h->d[1], "zzu-y", 0);
	case U_CU:
		err = im_create(im, h, 0, "zzu-z");
		return err ? err : im_unlink(im, h, 0, "zzu-z");
	default:
		err = dc_create(im->c, h->d[0], "zzu-z", &fake);
		return err ? err : dc_unlink(im->c, h->d[0], "zzu-z");
	}
}

/* ns per operation (a rename, or a create+unlink pair) over ms. */
static double time_upd(struct impl *im, struct dirh *h, int which, unsigned ms,
		       int schedfd, uint64_t *errs)
{
	uint64_t w0 = cpu_wait_ns(schedfd), t0 = clock_ns();
	uint64_t end = t0 + (uint64_t)ms * 1000000u, t, w1, n = 0;

	do {
		for (unsigned i = 0; i < 64; i++)	/* even: renames come back */
			*errs += upd_op(im, h, which, i) != 0;
		n += 64;
	} while ((t = clock_ns()) < end);
	w1 = cpu_wait_ns(schedfd);
	/* less the time spent waiting for a CPU (other processes') */
	if (w1 > w0 && w1 - w0 < (t - t0) * 99 / 100)
		t -= w1 - w0;
	return (double)(t - t0) / (double)n;
}

/* The two directories of the tree with the most entries. */
static void biggest_dirs(const struct tree *t, uint32_t out[2])
{
	uint32_t *cnt = xcalloc(t->nn, sizeof(*cnt));

	out[0] = out[1] = t->dirs[0];
	for (uint32_t i = 1; i < t->nn; i++)
		cnt[t->n[i].parent]++;
	cnt[0] = 0;
	for (uint32_t k = 0; k < t->ndirs; k++) {
		uint32_t d = t->dirs[k];

		if (cnt[d] > cnt[out[0]]) {
			out[1] = out[0];
			out[0] = d;
		} else if (d != out[0] && cnt[d] > cnt[out[1]]) {
			out[1] = d;
		}
	}
	free(cnt);
}

void run_updates(struct bench *b)
{
	struct scen s;
	struct impl ims[IM_NR];
	struct dirh h[IM_NR];
	uint32_t dirs[2];
	uint64_t errs = 0, uerrs[IM_NR][U_NR] = { { 0 } };
	unsigned ms = b->ms / 2 ? b->ms / 2 : 1;
	int schedfd;

	progress("update costs: building");
	if (scen_build(b, &s, SC_HOT) || !s.t->ndirs) {
		fprintf(stderr, "dcbench micro: update costs: not measured: %s\n",
			s.t && !s.t->ndirs ? "the tree has no directory below its root"
					   : "nothing to look up");
		b->unmeasured++;
		scen_free(b, &s);
		return;
	}
	biggest_dirs(s.t, dirs);
	schedfd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	for (int k = 0; k < IM_NR; k++) {
		memset(&h[k], 0, sizeof(h[k]));
		memset(&ims[k], 0, sizeof(ims[k]));
		if (!b->impl[k])
			continue;
		/* each dc mode its own memfs: their updates must not collide */
		if (im_build(&ims[k], k, &s, NULL) || im_check(&ims[k], &s) ||
		    dirh_open(&ims[k], &h[k], s.t, dirs, 2) ||
		    im_create(&ims[k], &h[k], 0, "zzu-x")) {
			fprintf(stderr, "dcbench micro: update costs: %s not measured%s%s\n",
				im_names[k], ims[k].why[0] ? ": " : "", ims[k].why);
			b->unmeasured++;
			dirh_close(&ims[k], &h[k]);
			im_destroy(&ims[k]);
			continue;
		}
		ims[k].ok = true;
	}
	for (unsigned r = 0; r < b->runs; r++)
		for (int k = 0; k < IM_NR; k++) {
			if (!ims[k].ok)
				continue;
			for (int u = 0; u < U_NR; u++) {
				if ((u == U_RENAME_CACHE || u == U_CU_CACHE) && !im_is_dc(k))
					continue;
				if (b->upd_n[k][u] < MAX_RUNS)
					b->upd[k][u][b->upd_n[k][u]++] =
						time_upd(&ims[k], &h[k], u, ms, schedfd,
							 &uerrs[k][u]);
			}
		}
	for (int k = 0; k < IM_NR; k++) {
		if (ims[k].ok)
			errs += im_unlink(&ims[k], &h[k], 0, "zzu-x") != 0;
		dirh_close(&ims[k], &h[k]);
		im_destroy(&ims[k]);
		/* an update that failed did not cost what a done one does:
		 * its cell is not measured (the failures counted below) */
		for (int u = 0; u < U_NR; u++) {
			b->upd_med[k][u] = uerrs[k][u] ? NAN :
				stats_median(b->upd[k][u], b->upd_n[k][u]);
			errs += uerrs[k][u];
		}
	}
	if (schedfd >= 0)
		close(schedfd);
	scen_free(b, &s);
	b->update_errors += errs;
	b->upd_ran = true;
}
