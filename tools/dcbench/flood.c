/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * flood.c - `dcbench flood`: what names made to share one hash chain cost.
 *
 * Two sets of crafted names, each against ordinary names of the same
 * length, in one directory each of a memfs tree:
 *  unkeyed       8-byte names that share one hash under an unkeyed hash
 *                (a constant start, a 64-bit multiply-xorshift per word):
 *                computed once, they share one chain in every directory
 *                of every process that hashes so;
 *  differential  176-byte names that share one state under a 64-bit
 *                multiply-xorshift whatever its key: flipping a word's top
 *                bit changes the state the same way under every key, and
 *                the next word's flips undo it.
 * Per run, interleaved (crafted first in odd runs, ordinary first in even
 * ones): the time to tell a new cache of every name (dc_create, after the
 * backend has it), then to resolve every path warm.  Reported: medians of
 * the runs, ns per name, and crafted / ordinary.  A cache whose hash
 * holds against them gives ratios near 1.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/clock.h"
#include "common/stats.h"
#include "dcache.h"
#include "cli.h"
#include "flood.h"

struct set {
	const char *name;
	size_t len;			/* bytes of each name */
	char *crafted, *ordinary;	/* n names, len + 1 bytes apart */
	struct dc_inode *cin, *oin;	/* their inodes in the memfs */
	uint64_t cdir, odir;		/* the directories holding them */
	double insert[2][64], resolve[2][64];	/* [crafted?][run], ns per name */
};

/* Tell a new cache of the n names of one directory, then resolve them
 * all warm; ns per name into *ins and *res.  Wrong answers counted. */
static int one_run(struct dc_memfs *fs, enum dc_mode mode, const char *dirname,
		   const char *names, size_t len, const struct dc_inode *in, unsigned n,
		   double *ins, double *res, uint64_t *wrong)
{
	struct dc_options o = { .mode = mode, .max_entries = 1u << 16 };
	size_t plen = strlen(dirname) + len + 3;	/* "/dir/name" and its NUL */
	struct dc_cache *c;
	struct dc_dentry *dir;
	struct dc_inode st;
	char *paths;
	double t0;
	unsigned i;
	int err;

	/* the paths made before the clock starts: the resolves alone timed */
	paths = malloc((size_t)n * plen);
	if (!paths)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		snprintf(paths + (size_t)i * plen, plen, "/%s/%s", dirname,
			 names + (size_t)i * (len + 1));

	o.backend = dc_memfs_backend(fs);
	err = dc_cache_create(&o, &c);
	if (err) {
		free(paths);
		return err;
	}
	err = dc_walk(c, NULL, dirname, 0, &dir);
	if (err) {
		dc_cache_destroy(c);
		free(paths);
		return err;
	}
	t0 = (double)clock_ns();
	for (i = 0; i < n; i++)
		if (dc_create(c, dir, names + (size_t)i * (len + 1), &in[i]))
			(*wrong)++;
	*ins = ((double)clock_ns() - t0) / n;
	dc_put(c, dir);
	t0 = (double)clock_ns();
	for (i = 0; i < n; i++)
		if (dc_resolve(c, NULL, paths + (size_t)i * plen, 0, &st) ||
		    st.ino != in[i].ino)
			(*wrong)++;
	*res = ((double)clock_ns() - t0) / n;
	dc_cache_destroy(c);
	free(paths);
	return 0;
}

static int fill(struct dc_memfs *fs, const char *dirname, const char *names,
		size_t len, struct dc_inode *in, unsigned n, uint64_t *dino)
{
	struct dc_inode d;
	unsigned i;
	int err;

	err = dc_memfs_add(fs, DC_MEMFS_ROOT, dirname, S_IFDIR | 0755, NULL, &d);
	for (i = 0; !err && i < n; i++)
		err = dc_memfs_add(fs, d.ino, names + (size_t)i * (len + 1),
				   S_IFREG | 0644, NULL, &in[i]);
	*dino = d.ino;
	return err;
}

static void ordinary_names(char *names, size_t len, unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		char *name = names + (size_t)i * (len + 1);

		memset(name, 'o', len);
		snprintf(name, len + 1, "o%07u", i);
		if (len > 8)
			name[8] = 'o';	/* snprintf's NUL, inside a long name */
		name[len] = '\0';
	}
}

const char dcb_flood_help[] =
"usage: dcbench flood [--names N] [--runs R] [--mode rcu|global|rwlock] [--json]\n"
"\n"
"Names made to share one hash chain against ordinary names of the same\n"
"length: N of each (default 2000, at most 2048), the time to tell a new\n"
"cache of them and to resolve them warm, medians of R interleaved runs\n"
"(default 7, at most 64).  Prints ns per name and crafted / ordinary;\n"
"ratios near 1 mean the hash holds.\n"
"\n"
"  --names N    names of each kind, 1 to 2048 (default 2000)\n"
"  --runs R     runs, 1 to 64 (default 7)\n"
"  --mode M     rcu, global or rwlock (default rcu)\n"
"  --json       one JSON document on stdout\n"
"  -h, --help   this help\n"
"\n"
"A wrong answer leaves the ratios out ('-', JSON null): those runs did\n"
"not all do the work.\n"
"Exit status: 0 success; 1 a wrong answer; 2 usage error.\n";

int dcb_flood_main(int argc, char **argv)
{
	struct set sets[2] = {
		{ .name = "unkeyed", .len = DCB_FLOOD_SHORT },
		{ .name = "differential", .len = DCB_FLOOD_LONG },
	};
	enum dc_mode mode = DC_MODE_RCU;
	unsigned names = 2000, runs = 7;
	int json = 0, i, r, s, bad = 0, err = 0;
	struct dc_memfs *fs = NULL;
	uint64_t wrong = 0;
	const char *v;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(dcb_flood_help, stdout);
			return EXIT_OK;
		}
		if (cli_opt("flood", argc, argv, &i, "names", true, &v, &bad)) {
			if (bad || cli_uint("flood", "--names", v, 1, 2048, &names))
				return EXIT_USAGE;
		} else if (cli_opt("flood", argc, argv, &i, "runs", true, &v, &bad)) {
			if (bad || cli_uint("flood", "--runs", v, 1, 64, &runs))
				return EXIT_USAGE;
		} else if (cli_opt("flood", argc, argv, &i, "mode", true, &v, &bad)) {
			if (bad)
				return EXIT_USAGE;
			if (dc_mode_parse(v, &mode))
				return cli_usage("flood", "unknown mode '%s'", v);
		} else if (cli_opt("flood", argc, argv, &i, "json", false, &v, &bad)) {
			if (bad)
				return EXIT_USAGE;
			json = 1;
		} else {
			return cli_usage("flood", "unknown %s '%s'",
					 argv[i][0] == '-' ? "option" : "argument", argv[i]);
		}
	}
	if (dc_memfs_new(&fs))
		goto nomem;
	for (s = 0; s < 2; s++) {
		struct set *t = &sets[s];
		char cname[16], oname[16];

		t->crafted = malloc((size_t)names * (t->len + 1));
		t->ordinary = malloc((size_t)names * (t->len + 1));
		t->cin = calloc((size_t)names, sizeof(*t->cin));
		t->oin = calloc((size_t)names, sizeof(*t->oin));
		if (!t->crafted || !t->ordinary || !t->cin || !t->oin)
			goto nomem;
		if (s == 0)
			dcb_flood_unkeyed(t->crafted, (int)names);
		else
			dcb_flood_differential(t->crafted, (int)names);
		ordinary_names(t->ordinary, t->len, names);
		snprintf(cname, sizeof(cname), "c%d", s);
		snprintf(oname, sizeof(oname), "o%d", s);
		if (fill(fs, cname, t->crafted, t->len, t->cin, names, &t->cdir) ||
		    fill(fs, oname, t->ordinary, t->len, t->oin, names, &t->odir))
			goto nomem;
	}
	for (r = 0; r < (int)runs && !err; r++)
		for (s = 0; s < 2 && !err; s++) {
			struct set *t = &sets[s];
			char cname[16], oname[16];
			int k;

			snprintf(cname, sizeof(cname), "c%d", s);
			snprintf(oname, sizeof(oname), "o%d", s);
			for (k = 0; k < 2 && !err; k++) {
				bool crafted = (k == 0) == (r % 2 == 0);

				err = one_run(fs, mode, crafted ? cname : oname,
					      crafted ? t->crafted : t->ordinary, t->len,
					      crafted ? t->cin : t->oin, names,
					      &t->insert[crafted][r], &t->resolve[crafted][r],
					      &wrong);
			}
		}
	if (err) {
		fprintf(stderr, "dcbench flood: %s\n", strerror(-err));
		goto out;
	}
	if (json)
		printf("{\"schema_version\": 1, \"command\": \"flood\", \"mode\": \"%s\", "
		       "\"names\": %u, \"runs\": %u, \"wrong_answers\": %llu, \"sets\": [",
		       dc_mode_name(mode), names, runs, (unsigned long long)wrong);
	else
		printf("dcbench flood: %u names a set, %s mode, medians of %u interleaved runs\n"
		       "%-13s %14s %14s %8s %14s %14s %8s\n", names, dc_mode_name(mode), runs,
		       "set", "insert crafted", "ordinary", "ratio", "resolve crafted",
		       "ordinary", "ratio");
	for (s = 0; s < 2; s++) {
		struct set *t = &sets[s];
		double ic = stats_median(t->insert[1], runs), io = stats_median(t->insert[0], runs);
		double rc = stats_median(t->resolve[1], runs), ro = stats_median(t->resolve[0], runs);
		/* wrong answers: the runs did not all do the work, no ratio */
		double ir = wrong ? NAN : ic / io, rr = wrong ? NAN : rc / ro;

		char irs[16] = "null", rrs[16] = "null";

		if (!isnan(ir))
			snprintf(irs, sizeof(irs), "%.3f", ir);
		if (!isnan(rr))
			snprintf(rrs, sizeof(rrs), "%.3f", rr);
		if (json)
			printf("%s{\"set\": \"%s\", \"name_bytes\": %zu, "
			       "\"insert_ns\": {\"crafted\": %.1f, \"ordinary\": %.1f, \"ratio\": %s}, "
			       "\"resolve_ns\": {\"crafted\": %.1f, \"ordinary\": %.1f, \"ratio\": %s}}",
			       s ? ", " : "", t->name, t->len, ic, io, irs, rc, ro, rrs);
		else
			printf("%-13s %11.1f ns %11.1f ns %8s %11.1f ns %11.1f ns %8s\n",
			       t->name, ic, io, isnan(ir) ? "-" : irs, rc, ro,
			       isnan(rr) ? "-" : rrs);
	}
	if (json)
		printf("]}\n");
	if (wrong)
		fprintf(stderr, "dcbench flood: %llu wrong answers\n", (unsigned long long)wrong);
	err = wrong ? 1 : 0;
	goto out;
nomem:
	fprintf(stderr, "dcbench flood: out of memory\n");
	err = 1;
out:
	for (s = 0; s < 2; s++) {
		free(sets[s].crafted);
		free(sets[s].ordinary);
		free(sets[s].cin);
		free(sets[s].oin);
	}
	if (fs)
		dc_memfs_free(fs);
	return err < 0 ? 1 : err;
}
