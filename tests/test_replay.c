/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_replay.c - dcbench's replay on a small hand-built trace whose
 * answers are known: three processes (a parent and two children that
 * race on a shared name), written with the trace writer, read back and
 * replayed in every mode, with 1 and 2 threads and 1 and 2 copies.
 * Every recorded outcome must be reproduced (0 mismatches), the lookup
 * counts must be exact, and so must the hits at 1 thread; then the same
 * trace with one outcome recorded wrong must give exactly 1 mismatch per
 * copy, so the check can fail.  Each run's time in the cache must fit
 * inside its threads' wall clock.
 *
 * Linked with the trace pipeline's objects and libdcache; it uses the
 * replay's public calls (trace/replay.h) alone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "trace/replay.h"
#include "trace/trace.h"

/* ---- building a trace ---------------------------------------------------- */

#define MAXP	4
#define MAXOPS	32
#define MAXPATHS 32

struct tproc {
	uint32_t pid;
	int parent;
	struct dct_op ops[MAXOPS];
	unsigned n;
};

static struct tproc tp[MAXP];
static unsigned ntp;
static const char *tpaths[MAXPATHS];
static unsigned ntpaths;

static uint32_t pid_of(const char *s)
{
	if (!s)
		return DCT_NONE;
	for (unsigned i = 0; i < ntpaths; i++)
		if (!strcmp(tpaths[i], s))
			return i;
	tpaths[ntpaths] = s;
	return ntpaths++;
}

static void add(unsigned proc, unsigned line, unsigned kind, unsigned flags,
		int err, const char *a, const char *b, uint32_t child)
{
	struct dct_op *o = &tp[proc].ops[tp[proc].n++];

	o->kind = (uint8_t)kind;
	o->flags = (uint8_t)flags;
	o->err = (int16_t)err;
	o->path = pid_of(a);
	o->path2 = pid_of(b);
	o->child = child;
	o->line = line;
}

/* Flatten tp[] into a trace file; 0 or -1. */
static int write_trace(const char *file)
{
	static struct dct_proc procs[MAXP];
	static struct dct_op ops[MAXP * MAXOPS];
	static char blob[MAXPATHS * 64];
	static const char *paths[MAXPATHS];
	struct dct_trace t;
	uint64_t n = 0, bl = 0;
	char err[256];

	for (unsigned i = 0; i < ntpaths; i++) {
		size_t l = strlen(tpaths[i]) + 1;

		memcpy(blob + bl, tpaths[i], l);
		paths[i] = blob + bl;
		bl += l;
	}
	for (unsigned i = 0; i < ntp; i++) {
		procs[i].pid = tp[i].pid;
		procs[i].parent = tp[i].parent;
		procs[i].first_op = n;
		procs[i].nops = tp[i].n;
		procs[i].fork_op = procs[i].wait_op = DCT_NO_OP;
		memcpy(ops + n, tp[i].ops, tp[i].n * sizeof(*ops));
		n += tp[i].n;
	}
	for (uint64_t k = 0; k < n; k++) {
		if (ops[k].kind == DCT_FORK)
			procs[ops[k].child].fork_op = k;
		if (ops[k].kind == DCT_WAIT)
			procs[ops[k].child].wait_op = k;
	}
	t.nprocs = ntp;
	t.npaths = ntpaths;
	t.nops = n;
	t.procs = procs;
	t.ops = ops;
	t.paths = paths;
	t.blob = blob;
	t.blob_len = bl;
	if (dct_write(file, &t, err, sizeof(err))) {
		fprintf(stderr, "dct_write: %s\n", err);
		return -1;
	}
	return 0;
}

/*
 * The workload.  P0 makes /src/linux/out and forks P1 and P2, which both
 * use out/a.o without any fork/wait order between them: P2 finds it
 * missing (line 7), P1 creates it (line 8), P2 finds it (line 9) - the
 * replay must keep that order.  P2 makes out/tmp and renames it to b.o;
 * P0 waits for both, looks at what they left, reads a symlink, fails to
 * remove a non-empty directory.  wrong: line 16 recorded as ENOENT.
 */
static void build(bool wrong)
{
	enum { P0, P1, P2 };

	memset(tp, 0, sizeof(tp));
	ntp = 3;
	ntpaths = 0;
	tp[P0].pid = 100; tp[P0].parent = -1;
	tp[P1].pid = 101; tp[P1].parent = P0;
	tp[P2].pid = 102; tp[P2].parent = P0;

	add(P0, 1, DCT_STAT, 0, 0, "/src/linux", NULL, DCT_NONE);
	add(P0, 2, DCT_STAT, 0, 0, "/src/linux/Makefile", NULL, DCT_NONE);
	add(P0, 3, DCT_OPEN, 0, ENOENT, "/src/linux/missing.h", NULL, DCT_NONE);
	add(P0, 4, DCT_MKDIR, 0, 0, "/src/linux/out", NULL, DCT_NONE);
	add(P0, 5, DCT_FORK, 0, 0, NULL, NULL, P1);
	add(P0, 6, DCT_FORK, 0, 0, NULL, NULL, P2);
	add(P2, 7, DCT_STAT, 0, ENOENT, "/src/linux/out/a.o", NULL, DCT_NONE);
	add(P1, 8, DCT_OPEN, DCT_F_CREAT | DCT_F_EXCL, 0, "/src/linux/out/a.o", NULL, DCT_NONE);
	add(P2, 9, DCT_STAT, 0, 0, "/src/linux/out/a.o", NULL, DCT_NONE);
	add(P2, 10, DCT_OPEN, DCT_F_CREAT | DCT_F_EXCL, 0, "/src/linux/out/tmp", NULL, DCT_NONE);
	add(P2, 11, DCT_RENAME, 0, 0, "/src/linux/out/tmp", "/src/linux/out/b.o", DCT_NONE);
	add(P1, 12, DCT_EXIT, 0, 0, NULL, NULL, DCT_NONE);
	add(P2, 13, DCT_EXIT, 0, 0, NULL, NULL, DCT_NONE);
	add(P0, 14, DCT_WAIT, 0, 0, NULL, NULL, P1);
	add(P0, 15, DCT_WAIT, 0, 0, NULL, NULL, P2);
	add(P0, 16, DCT_STAT, 0, wrong ? ENOENT : 0, "/src/linux/out/a.o", NULL, DCT_NONE);
	add(P0, 17, DCT_STAT, 0, ENOENT, "/src/linux/out/tmp", NULL, DCT_NONE);
	add(P0, 18, DCT_STAT, 0, 0, "/src/linux/out/b.o", NULL, DCT_NONE);
	add(P0, 19, DCT_READLINK, 0, 0, "/usr/bin/cc", NULL, DCT_NONE);
	add(P0, 20, DCT_READLINK, 0, EINVAL, "/src/linux/Makefile", NULL, DCT_NONE);
	add(P0, 21, DCT_STAT, 0, 0, "/usr/bin/cc", NULL, DCT_NONE);
	add(P0, 22, DCT_OPEN, 0, ENOTDIR, "/src/linux/Makefile/x", NULL, DCT_NONE);
	add(P0, 23, DCT_UNLINK, 0, 0, "/src/linux/out/a.o", NULL, DCT_NONE);
	add(P0, 24, DCT_RMDIR, 0, ENOTEMPTY, "/src/linux/out", NULL, DCT_NONE);
	add(P0, 25, DCT_STAT, 0, ENOENT, "/src/linux/missing.h", NULL, DCT_NONE);
	add(P0, 26, DCT_EXIT, DCT_F_IMPLIED, 0, NULL, NULL, DCT_NONE);
}

#define NOPS		26
#define NPATHOPS	19
#define LOOKUPS		27	/* dc_* lookup calls: see planned_lookups */
#define HITS		14	/* at 1 thread, 1 copy: worked out by hand */
#define NEG_HITS	3	/* out/a.o (line 8), out/tmp (17), missing.h (25) */
#define MISSES		12	/* src linux Makefile missing.h out a.o tmp b.o
				   usr bin cc cc.dcbench-target */

static struct dct_trace *load(bool wrong, const char *file)
{
	struct dct_trace *t = NULL;
	char err[256];

	build(wrong);
	if (write_trace(file))
		return NULL;
	if (dct_read(file, &t, err, sizeof(err))) {
		fprintf(stderr, "dct_read: %s\n", err);
		return NULL;
	}
	return t;
}

static void check_info(const struct rp_info *in)
{
	CHECK_EQ(in->procs, 3);
	CHECK_EQ(in->ops, NOPS);
	CHECK_EQ(in->path_ops, NPATHOPS);
	CHECK_EQ(in->planned_lookups, LOOKUPS);
	CHECK_EQ(in->conflicts, 0);
	CHECK_EQ(in->init_links, 1);		/* /usr/bin/cc */
	CHECK_EQ(in->changed_names, 4);		/* out a.o tmp b.o */
	CHECK_EQ(in->nroots, 1);
	CHECK(in->nroots == 1 && !strcmp(in->roots[0], "/src/linux"));
	/* P0 to its second fork (6), P2 (5 ops), P0's waits and 11 more ops */
	CHECK_EQ(in->critical_ops, 23);
	/* P1's create waits for P2's first op, P2's line 9 for the create */
	CHECK_EQ(in->critical_ops_replay, 24);
	CHECK(in->bound > 1.12 && in->bound < 1.14);
	CHECK(in->conflict_deps >= 2);
}

int main(void)
{
	char file[] = "/tmp/test_replay.XXXXXX";
	static const int modes[] = { RP_RCU, RP_GLOBAL, RP_RWLOCK, RP_NULL };
	struct rp_prep *p;
	struct dct_trace *t;
	char err[256];
	int fd = mkstemp(file);

	CHECK(fd >= 0);
	if (fd < 0)
		return h_done("test_replay");
	close(fd);

	for (int wrong = 0; wrong <= 1; wrong++) {
		t = load(wrong, file);
		CHECK(t != NULL);
		if (!t)
			break;
		CHECK_EQ(rp_prepare(t, &p, err, sizeof(err)), 0);
		if (!wrong)
			check_info(rp_get_info(p));
		for (unsigned m = 0; m < 4; m++)
			for (unsigned threads = 1; threads <= 2; threads++)
				for (unsigned copies = 1; copies <= 2; copies++) {
					/* per-name misses, as counted by hand
					 * below: no complete directories */
					struct rp_config cfg = {
						.mode = modes[m], .threads = threads,
						.copies = copies,
						.complete_after = DC_COMPLETE_OFF,
					};
					struct rp_result res, lres;
					unsigned want = wrong && modes[m] != RP_NULL ? copies : 0;

					CHECK_EQ(rp_run(p, &cfg, &res, err, sizeof(err)), 0);
					CHECK_EQ(res.ops, NOPS * copies);
					CHECK_EQ(res.checked, NPATHOPS * copies);
					CHECK_EQ(res.unchecked, 0);
					CHECK_EQ(res.mismatches, want);
					CHECK_EQ(res.update_errors, 0);
					CHECK_EQ(res.lookups, LOOKUPS * copies);
					/* each thread's timed ops lie inside the replay's
					 * wall clock; a cache mode's take some time */
					CHECK(res.cache_s >= 0 &&
					      res.cache_s <= threads * res.elapsed_s + 1e-6);
					CHECK(modes[m] == RP_NULL || res.cache_s > 0);
					if (res.mismatches != want)
						fprintf(stderr, "  (mode %s, %u threads, %u copies)\n",
							rp_mode_name(modes[m]), threads, copies);
					if (modes[m] == RP_NULL || threads > 1 || copies > 1)
						continue;
					CHECK_EQ(res.hits, HITS);
					CHECK_EQ(res.negative_hits, NEG_HITS);
					CHECK_EQ(res.misses, MISSES);
					CHECK_EQ(res.complete_answers, 0);
					/* with listings: each name that was not
					 * there is answered by the backend or by a
					 * listing, and nothing else changes */
					cfg.complete_after = 1;
					CHECK_EQ(rp_run(p, &cfg, &lres, err, sizeof(err)), 0);
					CHECK_EQ(lres.mismatches, want);
					CHECK(lres.complete_answers > 0);
					CHECK_EQ(lres.negative_misses + lres.complete_answers,
						 res.negative_misses);
					CHECK_EQ(lres.misses + lres.complete_answers, MISSES);
					CHECK_EQ(lres.hits, HITS);
				}
		rp_free(p);
		dct_free(t);
	}

	/* the race on out/a.o, many times over: never a mismatch */
	t = load(false, file);
	if (t && rp_prepare(t, &p, err, sizeof(err)) == 0) {
		uint64_t bad = 0;

		for (int i = 0; i < 48; i++) {
			struct rp_config cfg = {
				.mode = i % 3, .threads = 2 + i % 3, .copies = 1 + i % 4,
			};
			struct rp_result res;

			CHECK_EQ(rp_run(p, &cfg, &res, err, sizeof(err)), 0);
			bad += res.mismatches + res.update_errors;
		}
		CHECK_EQ(bad, 0);

		/* configurations rp_run refuses */
		{
			struct rp_config cfg = { .mode = RP_RCU, .threads = 0, .copies = 1 };
			struct rp_result res;

			CHECK_EQ(rp_run(p, &cfg, &res, err, sizeof(err)), -1);
			cfg.threads = 1;
			cfg.copies = 0;
			CHECK_EQ(rp_run(p, &cfg, &res, err, sizeof(err)), -1);
			cfg.copies = 1;
			cfg.mode = 7;
			CHECK_EQ(rp_run(p, &cfg, &res, err, sizeof(err)), -1);
		}
		rp_free(p);
	}
	dct_free(t);
	unlink(file);
	return h_done("test_replay");
}
