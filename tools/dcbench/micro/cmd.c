/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cmd.c - `dcbench micro`: its command line (parsed with cli.h, as every
 * dcbench command is), finding the shipped listing, and the run from
 * setting up the kernel's file system to the report.  Exit status: 0
 * success, 1 failure (a setup error or a wrong answer from any
 * implementation), 2 usage error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <urcu/urcu-memb.h>

#include "cli.h"
#include "micro/micro.h"
#include "micro/util.h"

#define CMD "micro"

FILE *rep;
bool debug_runs;
static bool show_progress;

const char *plural(unsigned n)
{
	return n == 1 ? "" : "s";
}

void progress(const char *fmt, ...)
{
	va_list ap;

	if (!show_progress)
		return;
	fputs("micro: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char dcb_micro_help[] =
"usage: dcbench micro [--json] [--plot FILE.svg|.png] [--scenarios LIST]\n"
"                     [--threads LIST] [--runs N] [--ms N] [--tree FILE]\n"
"                     [--impls LIST] [--cold-entries N] [--pin] [--seed N]\n"
"                     [--no-bytes] [--no-updates] [--no-warm]\n"
"                     [--ref-node-bytes N]\n"
"                     [--ttl MS] [--storm-threads N] [--backend-delay-us N]\n"
"                     [--as UID:GID[:G1,...]]\n"
"\n"
"Micro-benchmarks of libdcache (rcu, rwlock, global) against the kernel's\n"
"dcache (fstatat on a tmpfs copy), liburcu's cds_lfht and a mutex-guarded\n"
"hash table, interleaved in one run; medians of --runs runs (default 5)\n"
"of --ms milliseconds each (default 300).\n"
"\n"
"  --scenarios  hot,small,negative,deep,longnames,cold,mixed-1,mixed-10,\n"
"               samefile,depth2,depth4,depth8,depth16,storm (default: all)\n"
"               depthN: 4,096 files, every path N components, the trees\n"
"               differing only in their chains' length; the report gives\n"
"               each implementation's ns per path over depth2's\n"
"               storm: libdcache's modes only; every lookup a miss, each\n"
"               thread in a directory of its own, on a backend that sleeps;\n"
"               lookups/s against the ideal threads / delay and against\n"
"               the same threads calling the backend alone\n"
"  --threads    thread counts (default 1,2,4,8; above the core count they\n"
"               are marked oversubscribed)\n"
"  --impls      rcu,rwlock,global,rcu-ttl,rcu-as,kernel,lfht,mutex (default:\n"
"               all)  rcu-ttl: rcu with TTLs on (those of --ttl, or an hour);\n"
"               rcu-as: rcu resolving as a user (dc_resolve_as; --as's\n"
"               credential, or 1000:1000:5,6); neither is in the storm\n"
"  --tree       the listing (default: data/linux-6.1-tree.tsv.xz\n"
"               of the source tree, or share/dcache/ when installed)\n"
"  --runs N     timed runs of each measurement, 1 to 101 (default 5)\n"
"  --ms N       milliseconds a run (default 300)\n"
"  --seed N     the random trees and lookup orders (default 20240601)\n"
"  --cold-entries  entries of the cold tree (default 5000000)\n"
"  --pin        pin thread i to CPU i when threads <= cores\n"
"  --no-bytes, --no-updates  skip the bytes-per-entry and update-cost parts\n"
"  --no-warm    no untimed run before each implementation's timed ones, so\n"
"               the worker threads make only the lookups the report counts\n"
"               (bench/profile.sh, which divides what they did by them)\n"
"  --ref-node-bytes N  pad the nodes of cds_lfht and the mutex table to N\n"
"               bytes (default: as small as their names allow): what a\n"
"               lookup costs when the table's footprint grows\n"
"  --ttl MS     libdcache's caches with TTLs of MS ms on every answer\n"
"               (what expiry costs a lookup: a clock read, each deadline\n"
"               checked; answers that expire mid-run are revalidated, so\n"
"               keep MS above --ms to measure hot lookups)\n"
"  --storm-threads N  storm's threads, 1 to 256 (default 16; --threads\n"
"               is the other scenarios')\n"
"  --backend-delay-us N  storm's backend sleeps N us per lookup, 1 to\n"
"               1000000 (default 50)\n"
"  --as UID:GID[:G1,...]  libdcache's lookups with dc_resolve_as for that\n"
"               credential (search permission checked on every directory;\n"
"               the tree's directories are 0755, owned by 0:0): run with\n"
"               and without to see what the check costs\n"
"  --json       one JSON document on stdout; the table goes to stderr\n"
"  --plot FILE  wall-clock Mops/s against threads, one panel per scenario (gnuplot)\n"
"  -h, --help   this help\n"
"\n"
"The kernel reference needs root (mount -t tmpfs); without it, /dev/shm.\n"
"docs/micro.md explains every figure.\n";

/* --as UID:GID[:G1,G2,...] into b->cred (at most 16 groups); 0, or
 * EXIT_USAGE with a message. */
static int parse_cred(const char *s, struct bench *b)
{
	struct dc_cred *cr = &b->cred;
	unsigned long long v[2 + 16];
	unsigned n = 0;
	const char *p = s;
	char *end;

	for (;;) {
		if (*p < '0' || *p > '9' || n == 2 + 16)
			goto bad;
		errno = 0;
		v[n++] = strtoull(p, &end, 10);
		if (errno || v[n - 1] >= UINT32_MAX)
			goto bad;
		if (*end == '\0')
			break;
		if (*end != (n <= 2 ? ':' : ','))
			goto bad;
		p = end + 1;
	}
	if (n < 2)
		goto bad;
	cr->uid = (uint32_t)v[0];
	cr->gid = (uint32_t)v[1];
	cr->ngroups = n - 2;
	for (unsigned i = 2; i < n; i++)
		b->groups[i - 2] = (uint32_t)v[i];
	cr->groups = b->groups;
	b->as = true;
	return 0;
bad:
	return cli_usage(CMD, "--as is UID:GID[:G1,G2,...] (at most 16 groups), not '%s'", s);
}

/* A comma-separated list of names from table into sel[]. */
static int parse_names(const char *o, const char *s, const char *const *table,
		       int n, bool *sel)
{
	memset(sel, 0, (size_t)n * sizeof(*sel));
	for (const char *p = s;;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		int k;

		for (k = 0; k < n; k++)
			if (strlen(table[k]) == len && !strncmp(table[k], p, len))
				break;
		if (k == n)
			return cli_usage(CMD, "--%s: unknown name '%.*s'", o, (int)len, p);
		sel[k] = true;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/*
 * The options into b: 0, EXIT_USAGE (with a message), or -1 when --help
 * was printed.
 */
static int parse_args(struct bench *b, int argc, char **argv)
{
	int bad = 0;

	for (int i = 1; i < argc && !bad; i++) {
		const char *v = NULL;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(dcb_micro_help, stdout);
			return -1;
		} else if (cli_opt(CMD, argc, argv, &i, "json", false, &v, &bad)) {
			b->json = true;
		} else if (cli_opt(CMD, argc, argv, &i, "pin", false, &v, &bad)) {
			b->pin = true;
		} else if (cli_opt(CMD, argc, argv, &i, "no-bytes", false, &v, &bad)) {
			b->no_bytes = true;
		} else if (cli_opt(CMD, argc, argv, &i, "no-updates", false, &v, &bad)) {
			b->no_updates = true;
		} else if (cli_opt(CMD, argc, argv, &i, "no-warm", false, &v, &bad)) {
			b->no_warm = true;
		} else if (cli_opt(CMD, argc, argv, &i, "ref-node-bytes", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--ref-node-bytes", v, 0, 4096,
					       &b->ref_node_bytes);
		} else if (cli_opt(CMD, argc, argv, &i, "ttl", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--ttl", v, 0, 86400000, &b->ttl_ms);
		} else if (cli_opt(CMD, argc, argv, &i, "as", true, &v, &bad)) {
			if (!bad)
				bad = parse_cred(v, b);
		} else if (cli_opt(CMD, argc, argv, &i, "plot", true, &v, &bad)) {
			const char *ext = v ? strrchr(v, '.') : NULL;

			if (!bad && (!ext || (strcmp(ext, ".svg") && strcmp(ext, ".png"))))
				bad = cli_usage(CMD, "--plot wants a .svg or .png file, not '%s'", v);
			b->plot = v;
		} else if (cli_opt(CMD, argc, argv, &i, "tree", true, &v, &bad)) {
			b->treefile = v;
		} else if (cli_opt(CMD, argc, argv, &i, "scenarios", true, &v, &bad)) {
			if (!bad)
				bad = parse_names("scenarios", v, sc_names, SC_NR, b->scen);
		} else if (cli_opt(CMD, argc, argv, &i, "impls", true, &v, &bad)) {
			if (!bad)
				bad = parse_names("impls", v, im_names, IM_NR, b->impl);
		} else if (cli_opt(CMD, argc, argv, &i, "runs", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--runs", v, 1, MAX_RUNS, &b->runs);
		} else if (cli_opt(CMD, argc, argv, &i, "ms", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--ms", v, 1, 60000, &b->ms);
		} else if (cli_opt(CMD, argc, argv, &i, "seed", true, &v, &bad)) {
			if (!bad)
				bad = cli_u64(CMD, "--seed", v, 0, UINT64_MAX, &b->seed);
		} else if (cli_opt(CMD, argc, argv, &i, "cold-entries", true, &v, &bad)) {
			if (!bad)
				bad = cli_u64(CMD, "--cold-entries", v, 20000, 100000000,
					      &b->cold_entries);
		} else if (cli_opt(CMD, argc, argv, &i, "storm-threads", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--storm-threads", v, 1, MAX_THREADS,
					       &b->storm_threads);
		} else if (cli_opt(CMD, argc, argv, &i, "backend-delay-us", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint(CMD, "--backend-delay-us", v, 1, 1000000,
					       &b->storm_delay_us);
		} else if (cli_opt(CMD, argc, argv, &i, "threads", true, &v, &bad)) {
			if (!bad)
				bad = cli_uint_list(CMD, "--threads", v, 1, MAX_THREADS,
						    b->tl, MAX_TLIST, &b->ntl);
		} else if (!bad) {
			bad = cli_usage(CMD, "unknown %s '%s'",
					argv[i][0] == '-' ? "option" : "argument", argv[i]);
		}
	}
	return bad;
}

static void set_defaults(struct bench *b)
{
	static const unsigned threads[] = { 1, 2, 4, 8 };

	b->runs = 5;
	b->ms = 300;
	b->cold_entries = 5000000;
	b->seed = 20240601;
	b->storm_threads = 16;
	b->storm_delay_us = 50;
	for (int k = 0; k < SC_NR; k++)
		b->scen[k] = true;
	for (int k = 0; k < IM_NR; k++)
		b->impl[k] = true;
	b->ntl = sizeof(threads) / sizeof(threads[0]);
	memcpy(b->tl, threads, sizeof(threads));
}

/* ascending thread counts: the plot and the scaling want it */
static void sort_threads(struct bench *b)
{
	for (unsigned i = 1; i < b->ntl; i++)
		for (unsigned k = i; k > 0 && b->tl[k - 1] > b->tl[k]; k--) {
			unsigned t = b->tl[k];

			b->tl[k] = b->tl[k - 1];
			b->tl[k - 1] = t;
		}
}


/*
 * The listing ships with the project: data/ beside the build directory
 * the binary runs from (build/dcbench), or share/dcache/ beside an
 * installed bin/.
 */
static char *find_tree(void)
{
	static const char *const rel[] = {
		"/../data/linux-6.1-tree.tsv.xz",
		"/../share/dcache/linux-6.1-tree.tsv.xz",
	};
	char exe[PBUF], buf[PBUF + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s", exe, rel[i]);
		if (access(buf, R_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

/* Every part asked for, then the report in each form asked for: the
 * exit status. */
static int measure_and_report(struct bench *b)
{
	char date[64], host[256] = "unknown";
	time_t now = time(NULL);
	int status = 0;

	gethostname(host, sizeof(host) - 1);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	if (!b->no_bytes)
		run_bytes(b);
	for (int sc = 0; sc < SC_NR; sc++) {
		int ids[SC_NR], n = 0;

		if (!b->scen[sc])
			continue;
		if (sc == SC_STORM) {
			if (run_storm(b))
				status = 1;
			continue;
		}
		/* the depths are compared with each other: measured together */
		if (is_depth(sc)) {
			for (; sc < SC_NR && is_depth(sc); sc++)
				if (b->scen[sc])
					ids[n++] = sc;
			sc--;
		} else {
			ids[n++] = sc;
		}
		if (run_scenarios(b, ids, n))
			status = 1;
	}
	if (!b->no_updates)
		run_updates(b);
	summarize(b);
	b->unmeasured += check_cells(b);
	print_report(b, date, host);
	if (b->json)
		write_json(b, date, host);
	if (b->plot && plot(b, b->plot, host, date) < 0)
		status = status ? status : 1;
	if (b->mismatches || b->update_errors || b->wrong_lookups || b->unmeasured)
		status = 1;
	return status;
}

int dcb_micro_main(int argc, char **argv)
{
	struct bench *b = xcalloc(1, sizeof(*b));
	char *treefile = NULL;
	int bad, status = 0;

	set_defaults(b);
	bad = parse_args(b, argc, argv);
	if (bad) {
		free(b);
		return bad < 0 ? EXIT_OK : EXIT_USAGE;
	}
	sort_threads(b);
	ref_hash_init(b->seed);
	rep = b->json ? stderr : stdout;
	show_progress = cli_progress();
	debug_runs = getenv("DCBENCH_MICRO_DEBUG") != NULL;
	raise_nofile();
	b->cores = cli_cores();
	if (!b->treefile) {
		treefile = find_tree();
		if (!treefile) {
			fprintf(stderr, "dcbench micro: cannot find the tree listing "
				"(data/linux-6.1-tree.tsv.xz beside the build directory, or "
				"share/dcache/ of an installed dcbench); name it with "
				"--tree FILE\n");
			free(b);
			return EXIT_FAIL;
		}
		b->treefile = treefile;
	}
	if (kfs_init()) {
		free(treefile);
		free(b);
		return EXIT_FAIL;
	}
	/* before any thread exists: unshare(CLONE_NEWNS) applies to the caller */
	if (b->impl[IM_KERNEL])
		kfs_setup();
	urcu_memb_register_thread();
	b->cells = xcalloc((size_t)SC_NR * b->ntl * IM_NR, sizeof(*b->cells));
	progress("reading %s", b->treefile);
	b->hot = tree_parse(b->treefile);
	status = b->hot ? measure_and_report(b) : EXIT_FAIL;
	fflush(NULL);
	kfs_end();
	urcu_memb_unregister_thread();
	tree_free(b->hot);
	free(b->cells);
	free(treefile);
	free(b);
	return status;
}
