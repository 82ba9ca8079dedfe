/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro.h - dcbench micro, the micro-benchmark suite (docs/micro.md): the
 * interface between its files.
 *
 * Six implementations answer the same path lookups, in the same process,
 * interleaved run by run (A B C ... A B C ...), so every comparison is a
 * ratio of figures measured side by side:
 *
 *   rcu, rwlock, global   libdcache's three modes, dc_resolve on a warm
 *                         cache over memfs (every lookup a hit)   impl.c
 *   kernel                fstatat(AT_FDCWD, path) of the same tree
 *                         materialized on a tmpfs we mount (cwd = its
 *                         root)                         ref_kernel.c, mount.c
 *   lfht                  liburcu's cds_lfht keyed by (parent, name), walked
 *                         one component at a time under one rcu_read_lock
 *                                                                 ref_lfht.c
 *   mutex                 one pthread mutex around a chained hash table of
 *                         (parent, name), taken once per component
 *                                                                ref_mutex.c
 *
 * Scenarios (hot, small, negative, deep, longnames, cold, mixed-1,
 * mixed-10, samefile, depth2 ... depth16; scenario.c over the trees of
 * tree.c and treegen.c) are built once each; in each of --runs rounds every implementation runs
 * for --ms milliseconds at every thread count, in turn (rounds.c, on the
 * threads of pool.c), and the median is reported (summary.c, report.c,
 * report_json.c, report_plot.c); scaling pairs each run with the 1-thread
 * run beside it (wall-clock throughput).  Each thread walks its own
 * shuffled array of path pointers, generated before timing.  Every
 * implementation's answers are checked against the tree before it is
 * timed (that pass also warms it).
 *
 * The storm scenario (storm.c) is of libdcache's modes alone: many
 * threads missing at once in directories of their own, on a backend that
 * sleeps as a network file system would; its threads and figures are its
 * own.
 *
 * Also measured (costs.c): bytes per cached entry (dc_get_stats after
 * warming a cache of exactly the tree), and the cost of a rename and of a
 * create+unlink pair (memfs + cache, and cache alone), single-threaded.
 *
 * Threads: the main thread builds, checks and frees everything, and
 * drives the workers through two barriers (pool.c); while they run it
 * only sleeps and sets the stop flag.  Every thread is registered with
 * liburcu (urcu-memb) for cds_lfht.
 */
#ifndef DCBENCH_MICRO_MICRO_H
#define DCBENCH_MICRO_MICRO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/arena.h"
#include "dcache.h"

#define MAX_TLIST	16		/* thread counts per invocation */
#define MAX_THREADS	256
#define MAX_RUNS	101
#define LMAX		(1u << 20)	/* a thread's path array, at most */
#define SAMEFILE_LEN	4096
#define NSDIR		16		/* directories a mixed worker updates */
#define NSLOT		256		/* a mixed worker's name slots */
#define BATCH		16		/* lookups between looks at the stop flag */
#define PBUF		4096

enum { SC_HOT, SC_SMALL, SC_NEGATIVE, SC_DEEP, SC_LONGNAMES, SC_COLD,
       SC_MIXED1, SC_MIXED10, SC_SAMEFILE, SC_DEPTH2, SC_DEPTH4, SC_DEPTH8,
       SC_DEPTH16, SC_STORM, SC_NR };
extern const char *const sc_names[SC_NR];

/* depth2 to depth16: the trees that differ only in their paths' depth. */
static inline bool is_depth(int sc)
{
	return sc >= SC_DEPTH2 && sc <= SC_DEPTH16;
}
#define DEPTH_LEAVES	4096		/* files of each depth scenario's tree */
#define NDEPTH		4		/* depth2 ... depth16 */
/* Components of every path of depth scenario sc, or 0 for another. */
unsigned sc_depth(int sc);

/* IM_RCUTTL: rcu with TTLs on (--ttl, or an hour); IM_RCUAS: rcu resolving
 * with dc_resolve_as (rcuas_cred).  Beside rcu in
 * every round, so that what expiry and the search checks cost is a ratio
 * of one run; the storm (k <= IM_GLOBAL) leaves them out */
enum { IM_RCU, IM_RWLOCK, IM_GLOBAL, IM_RCUTTL, IM_RCUAS, IM_KERNEL, IM_LFHT,
       IM_MUTEX, IM_NR };
extern const char *const im_names[IM_NR];
static inline bool im_is_dc(int k) { return k <= IM_RCUAS; }
/* rcu-ttl's TTL in ms, given --ttl's (0: none): --ttl's, or an hour */
uint32_t rcuttl_ms(uint32_t ttl_ms);
/* rcu-as's credential, given --as's (NULL: none): --as's, or 1000:1000
 * with groups 5 and 6 (not root, so every check is made whole: owner,
 * then the groups, then the other bits) */
const struct dc_cred *rcuas_cred(const struct dc_cred *as);

/* ---- the run's output (cmd.c) ---------------------------------------------- */

extern FILE *rep;		/* the human report: stdout, or stderr with --json */
extern bool debug_runs;		/* DCBENCH_MICRO_DEBUG: every thread's every run */

/* "micro: ..." on stderr when it is a terminal. */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "s" unless n is 1. */
const char *plural(unsigned n);

/* ---- the tree (tree.c, treegen.c) ------------------------------------------- */

struct tnode {
	uint32_t parent;	/* the root (0) is its own parent */
	uint32_t name;		/* offset in the pool: the name and a NUL */
	uint32_t target;	/* symlinks: offset of the target text */
	uint16_t len;
	char type;		/* 'd', 'f' or 'l' */
	uint8_t depth;		/* components from the root */
};

struct tree {
	char label[16];		/* its directory on the kernel's tmpfs */
	struct tnode *n;
	uint32_t nn, cap;
	char *pool;
	size_t plen, pcap;
	uint32_t nfiles, ndirs, nlinks;
	uint32_t *dirs;		/* directories but the root (mixed updates) */
	bool kmade, kfailed;	/* materialized on the kernel's file system */
};

/* Append a node under parent; its index.  A name is at most 255 bytes. */
uint32_t tree_add(struct tree *t, uint32_t parent, char type, const char *name,
		  size_t len, const char *target, size_t tlen);
/* A tree holding its root alone; label names its directory on the tmpfs. */
struct tree *tree_new(const char *label);
void tree_free(struct tree *t);
/* Node i's name (NUL-terminated). */
const char *tname(const struct tree *t, uint32_t i);
/* The st_mode a node of this type gets in every implementation. */
uint32_t tnode_mode(const struct tnode *x);
/* Node i's path relative to the root into buf; its length, or -1 if it
 * does not fit. */
long tree_path(const struct tree *t, uint32_t i, char *buf, size_t size);
/* Fill t->dirs; call once the tree is complete. */
void tree_index_dirs(struct tree *t);
/* The listing in file (plain or xz); NULL with a message on stderr. */
struct tree *tree_parse(const char *file);

/* A subset of about `want` entries: random files and their ancestors. */
struct tree *tree_subset(const struct tree *src, uint32_t want, const char *label,
			 uint64_t seed);
/* The tree without symlinks and without any name over max bytes; at most
 * limit entries (the root included), taken in order. */
struct tree *tree_filter(const struct tree *src, size_t max, uint32_t limit,
			 const char *label);
/* The generated trees of the deep, longnames and cold scenarios. */
struct tree *tree_deep(void);
/* depthN: DEPTH_LEAVES files, every path `depth` components (2 to 255);
 * the trees of two depths differ only in the length of their chains. */
struct tree *tree_depth(unsigned depth);
struct tree *tree_longnames(uint64_t seed);
struct tree *tree_cold(uint64_t entries, uint64_t seed);

/* ---- what a scenario looks up (scenario.c) -------------------------------- */

struct targets {
	char *pool;
	size_t plen, pcap;
	size_t *off;
	const char **path;
	int32_t *expect;	/* tree node, or -1: the name must not exist */
	uint8_t *ncomp;
	uint32_t n, cap;
};

struct scen {
	int id;
	struct tree *t;
	struct targets tg;
	unsigned mixed_pct;	/* updates per hundred operations */
	bool samefile;
	uint32_t negatives;
	uint64_t max_entries, max_negative;	/* the dc caches' caps */
	uint64_t nbuckets;	/* the references' bucket count: load <= 1 */
	unsigned ref_node_bytes; /* the references' nodes padded to this */
	uint32_t ttl_ms;	/* the dc caches' TTLs (0: none) */
	const struct dc_cred *cred;	/* dc lookups: dc_resolve_as (NULL: dc_resolve) */
};

struct bench;
/* Scenario id over b's trees and options: 0, -1 when it has nothing to
 * look up, or -2 when it makes updates and the tree has no directory
 * below its root.  scen_free in either case. */
int scen_build(struct bench *b, struct scen *s, int id);
void scen_free(struct bench *b, struct scen *s);
/* Components of all the paths. */
uint64_t tg_comps(const struct targets *g);

/* ---- the implementations (impl.c, ref_*.c) ----------------------------------- */


struct fsinst {			/* a memfs holding a tree */
	struct dc_memfs *fs;
	uint32_t *mino;		/* tree node -> memfs inode number */
};

struct lnode;
struct mnode;

struct mtab {
	pthread_mutex_t lock;
	struct mnode **b;
	unsigned shift;
};

struct impl {
	int kind;
	bool ok;
	bool skipped;		/* not offered in this scenario (kernel, cold) */
	char why[400];		/* why not measured */
	/* dc */
	struct fsinst *fs;
	bool fs_owner;
	struct dc_cache *c;
	const struct dc_cred *cred;	/* resolve as (--as), or NULL */
	/* kernel */
	char kdir[512];
	/* lfht */
	struct cds_lfht *ht;
	struct lnode *lroot;
	/* mutex */
	struct mtab mt;
	struct mnode *mroot;
	struct arena ar;
	size_t bytes;		/* references: bytes their table holds */
};

struct res {
	uint32_t id, mode;
};

struct dirh {			/* directories to update in, in one implementation */
	struct dc_dentry *d[NSDIR];
	uint64_t ino[NSDIR];	/* memfs */
	int fd[NSDIR];		/* kernel: O_PATH descriptors */
	void *node[NSDIR];	/* lfht, mutex */
	unsigned n;
};

/* impl.c: any of the six, by kind */

/* Build implementation kind for s; the dc modes use shared when not NULL
 * (else a memfs of their own).  0, or nonzero with im->why set (or
 * im->skipped: not offered in this scenario).  im_destroy in either case. */
int im_build(struct impl *im, int kind, struct scen *s, struct fsinst *shared);
void im_destroy(struct impl *im);
/* Check every answer against the tree, twice: the first pass fills the
 * cache, the second hits it (and so makes libdcache's one-probe nodes), so
 * that a timed run, however short, starts from a warm cache.  The number
 * of wrong answers, the first few printed. */
uint64_t im_check(struct impl *im, const struct scen *s);
/* Hold the n directories dirs[] of t in h for updates; 0 or -errno.
 * dirh_close in either case. */
int dirh_open(struct impl *im, struct dirh *h, const struct tree *t,
	      const uint32_t *dirs, unsigned n);
void dirh_close(struct impl *im, struct dirh *h);
/* Updates in h's directories k, a, b: 0 or -errno. */
int im_create(struct impl *im, struct dirh *h, unsigned k, const char *name);
int im_unlink(struct impl *im, struct dirh *h, unsigned k, const char *name);
int im_rename(struct impl *im, struct dirh *h, unsigned a, const char *oname,
	      unsigned b, const char *nname);
/* A memfs holding t, for the dc modes: 0 or -errno (with a message). */
int fs_build(const struct tree *t, struct fsinst *out);
void fs_free(struct fsinst *f);

/* ref.c: what the two in-memory references share */

/* The references' nodes packed like libdcache's slab (common/arena.h);
 * out of memory, it exits. */
void *ref_alloc(struct arena *a, size_t n);
/* Draw the references' hash key from seed (before any table is built). */
void ref_hash_init(uint64_t seed);

/* ref_lfht.c: liburcu's cds_lfht (calls: a registered thread) */

/* The table of t, nodes padded to node_bytes: 0, or -ENOMEM with im->why. */
int lfht_build(struct impl *im, const struct tree *t, uint64_t nbuckets,
	       size_t node_bytes);
void lfht_destroy(struct impl *im);
/* Walk p one component at a time under one read lock: 0 or -errno. */
int lfht_resolve(struct impl *im, const char *p, struct res *r);
/* The node of directory p (the caller holds on to it), or NULL. */
struct lnode *lfht_node(struct impl *im, const char *p);
int lfht_create(struct impl *im, struct lnode *dir, const char *name);
int lfht_unlink(struct impl *im, struct lnode *dir, const char *name);
int lfht_rename(struct impl *im, struct lnode *odir, const char *oname,
		struct lnode *ndir, const char *nname);

/* ref_mutex.c: one mutex around a chained hash table (the same calls) */

int mtab_build(struct impl *im, const struct tree *t, uint64_t nbuckets,
	       size_t node_bytes);
void mtab_destroy(struct impl *im);
int mtab_resolve(struct impl *im, const char *p, struct res *r);
struct mnode *mtab_node(struct impl *im, const char *p);
int mtab_create(struct impl *im, struct mnode *dir, const char *name);
int mtab_unlink(struct impl *im, struct mnode *dir, const char *name);
int mtab_rename(struct impl *im, struct mnode *odir, const char *oname,
		struct mnode *ndir, const char *nname);

/* ref_kernel.c: the kernel's dcache, the tree on our tmpfs */

/* im->kdir: s's tree materialized (once per tree); 0, or -1 with im->why
 * (im->skipped for cold). */
int kernel_build(struct impl *im, const struct scen *s);
/* chdir to the tree's root for a run: 0 or -errno; kfs_leave after. */
int kernel_enter(const struct impl *im);

/* mount.c: the private tmpfs, the working directory, clean-up */

/* Remember the working directory: 0, or -1 with a message. */
int kfs_init(void);
/* Make the tmpfs (or the /dev/shm fallback), in a mount namespace of our
 * own when we can; before any thread exists.  0, or -1 (kfs_note says
 * why).  Installs the signal handlers and the atexit clean-up. */
int kfs_setup(void);
/* The directory trees are materialized in, or NULL when there is none. */
const char *kfs_dir(void);
/* What the kernel's file system is, for the report. */
const char *kfs_note(void);
/* Back to the working directory after a kernel run; exits if it cannot. */
void kfs_leave(void);
/* Unmount, remove the directory, forget the working directory. */
void kfs_end(void);

/* ---- threads and timed runs (pool.c) --------------------------------------- */

struct slot {			/* one create / rename / unlink triple */
	char a[24], b[24];
	uint8_t da, db;
};

struct pool;

struct worker {
	_Alignas(64) struct pool *p;
	pthread_t th;
	unsigned idx;
	const char **paths;
	uint32_t *tix;		/* target index of each path */
	uint8_t *miss;		/* 1: the path must answer ENOENT */
	uint64_t *cpre;		/* components looked up in [0, i) */
	uint32_t *lpre;		/* lookups in [0, i) (mixed) */
	uint8_t *kind;		/* mixed: an update step at i */
	uint32_t n;
	struct slot *slots;
	uint32_t sdir[NSDIR];	/* tree nodes of the update directories */
	struct dirh dh[IM_NR];
	unsigned step, j;	/* where the worker is in its triples */
	int schedfd;		/* /proc/thread-self/schedstat, or -1 */
	/* the last run */
	uint64_t t0, t1, wait0, wait1, run0, run1, wraps, wrong, uerr;
	uint64_t ops, lookups, comps;
	uint32_t pos;
};

struct pool {
	unsigned n;
	struct worker *w;
	pthread_barrier_t go, done;
	int stop, quit;
	struct impl *im;
	int scen;		/* the scenario whose paths it looks up */
	bool floor;		/* the kernel's syscall floor, not the paths */
	bool warm;		/* an untimed warm run (not through run_timed) */
	bool pin;
};

/* n workers (threads not started yet), pinned to CPUs when pin. */
void pool_start(struct pool *p, unsigned n, bool pin);
/* Each worker's own shuffled array of paths (and updates, for mixed). */
void make_arrays(struct pool *p, const struct scen *s, uint64_t seed);
/* Start the threads: they wait at p->go for each run. */
void pool_spawn(struct pool *p);
/* Stop and join the threads; then pool_free. */
void pool_join(struct pool *p);
void pool_free(struct pool *p);
/* This thread's time runnable but waiting for a CPU (ns), from the
 * /proc/thread-self/schedstat open at fd; 0 if unreadable. */
uint64_t cpu_wait_ns(int fd);

/* ---- results (rounds.c) ------------------------------------------------------ */

struct cell {			/* one (scenario, threads, implementation) */
	bool measured;
	bool skipped;		/* not offered (kernel, cold): no error */
	char why[400];
	unsigned nr;
	double ns[MAX_RUNS], nsc[MAX_RUNS], mops[MAX_RUNS];
	double mopsw[MAX_RUNS];	/* all threads' ops / wall time */
	double floor[MAX_RUNS];	/* kernel: ns per fstatat(".") */
	unsigned nfloor;
	double share[MAX_RUNS];	/* of the wall time, not waiting for a CPU */
	uint64_t ops, lookups, comps, wrong, upd, uerr;
	uint64_t dc_lookups, dc_misses, dc_restarts;
	double ns_med, ns_mean, ns_sd, nsc_med, mops_med, mops_mean, mops_sd;
	double mopsw_med, share_med;
	double scaling;		/* median of paired wall-clock ratios */
	double floor_med, beyond_med;	/* kernel: floor, ns/comp beyond it */
};

struct storm_res {		/* the storm, one libdcache mode */
	char why[400];
	unsigned nr;
	double rate[MAX_RUNS];	/* lookups/s: all threads' over the wall time */
	double rate_med;
	/* totals over the timed runs */
	uint64_t lookups, failed;
	uint64_t calls, call_ns;	/* the backend's lookups, the time in them */
	uint64_t cpu_ns;		/* the process's CPU time */
	uint64_t csw;			/* the process's context switches */
	uint64_t dc_misses, miss_waits, lock_waits, evictions;
};

struct bench {
	/* options */
	bool json, pin, no_bytes, no_updates, no_warm;
	unsigned storm_threads, storm_delay_us;
	unsigned ref_node_bytes;
	uint32_t ttl_ms;
	bool as;		/* --as: libdcache resolves with dc_resolve_as */
	struct dc_cred cred;
	uint32_t groups[16];
	const char *plot, *treefile;
	bool scen[SC_NR], impl[IM_NR];
	unsigned tl[MAX_TLIST], ntl;
	unsigned runs, ms;
	uint64_t cold_entries, seed;
	/* state */
	unsigned cores;
	struct tree *hot;
	struct cell *cells;	/* [SC_NR][ntl][IM_NR] */
	bool ran[SC_NR];
	uint64_t mismatches, update_errors;
	uint64_t wrong_lookups;	/* in the timed runs */
	unsigned unmeasured;	/* asked for, not (fully) measured */
	char scen_note[SC_NR][200];
	struct storm_res storm[IM_NR];	/* the dc modes' */
	struct storm_res storm_alone;	/* the backend's calls, no cache */
	bool storm_ran;
	/* bytes per entry */
	struct bytes_res {
		bool ok;
		uint64_t entries, bytes, max_entries;
		uint64_t empty_bytes;	/* the same cache holding its root only */
		double bpe;		/* bytes / entries */
		double marginal;	/* (bytes - empty_bytes) / (entries - 1) */
		/* after every path was resolved again (a walk from the root
		 * that hits makes its one-probe node): the nodes, counted by
		 * a third pass's one-probe answers, and the bytes then */
		uint64_t paths, bytes_paths;
		double bpe_paths;	/* bytes_paths / entries */
	} by_hot, by_short, by_full;
	double ref_bpe[IM_NR];
	/* update costs */
	double upd[IM_NR][4][MAX_RUNS];
	unsigned upd_n[IM_NR][4];
	double upd_med[IM_NR][4];
	bool upd_ran;
};

enum { U_RENAME, U_RENAME_CACHE, U_CU, U_CU_CACHE, U_NR };


/* Cell (scenario sc, thread count index ti, implementation im). */
struct cell *cell_at(struct bench *b, int sc, unsigned ti, int im);
/* The measured cell at that thread count, or NULL (also when any of its
 * lookups or updates failed). */
struct cell *cell_get(struct bench *b, int sc, unsigned threads, int im);
/* Raise the soft descriptor limit to the hard one (kernel workers hold
 * directories open). */
void raise_nofile(void);
/* Build scenarios ids[0, n), check and time every implementation asked
 * for, in interleaved rounds, into b's cells; scenarios given together
 * take turns within each round: 0, or -1 if one had nothing to look up. */
int run_scenarios(struct bench *b, const int *ids, int n);

/* storm.c: the cold-miss storm */

/* Every dc mode asked for, --storm-threads threads each missing in a
 * directory of its own on a backend that sleeps --backend-delay-us per
 * lookup, interleaved in --runs rounds, into b->storm: 0, or -1 when no
 * mode could be measured. */
int run_storm(struct bench *b);

/* costs.c: the single-threaded measurements */

/* Bytes per cached entry of the hot tree, and of the references' tables. */
void run_bytes(struct bench *b);
/* The cost of a rename and of a create+unlink pair, each implementation. */
void run_updates(struct bench *b);

/* summary.c: medians, scaling, goals */

/* Every cell's medians and paired scaling. */
void summarize(struct bench *b);
/* Name on stderr each cell asked for but not measured in every run, or
 * with wrong timed lookups; how many were not measured. */
unsigned check_cells(struct bench *b);
/* a's ns/lookup over b's (same scenario and threads); NaN if either is missing */
double ratio(struct bench *b, int sc, unsigned threads, int ka, int kb);
/* Implementation k's ns per path in depth scenario sc over its ns per
 * path in depth2, at that thread count; NaN if either is missing. */
double depth_ratio(struct bench *b, int sc, unsigned threads, int k);

struct goal {
	char name[96];
	double value, target;
	bool le;		/* value <= target is met (else >=) */
};

/* The figures to reach, into g[] (room for 32); how many. */
unsigned make_goals(struct bench *b, struct goal *g);
/* 1 met, 0 not, -1 not measured. */
int goal_met(const struct goal *g);

/* report.c, report_json.c, report_plot.c: the three outputs */

/* The human report, on rep. */
void print_report(struct bench *b, const char *date, const char *host);
/* One JSON document on stdout. */
void write_json(struct bench *b, const char *date, const char *host);
/* Mops/s against threads, one panel per scenario, into file (.svg or
 * .png) with gnuplot: 0; 1 when gnuplot is not installed (a skip); or
 * -1; with a message. */
int plot(struct bench *b, const char *file, const char *host, const char *date);

#endif /* DCBENCH_MICRO_MICRO_H */
