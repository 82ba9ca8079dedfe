/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run.h - the parts of `dcbench coherence` (coherence.h) and what they
 * share: the set-up from the command line, one file system's run, the
 * tree's names, a change's plan and what each side shows of a name.
 *
 * Threads: the main thread plans, makes and measures the changes and is
 * the only one to change a name list, always under its lock; a reader
 * (readers.c) copies one name at a time under names.lock, so the main
 * thread reads the lists without it.  Besides the names, readers only
 * read the run's fixed fields and the atomics stop and warm.  Flooding
 * threads (flood.c) touch only their own struct and the flood's stop.
 */
#ifndef DCBENCH_COHERENCE_RUN_H
#define DCBENCH_COHERENCE_RUN_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define MAX_KINDS	9		/* every kind fsmount.c knows, once each */
#define POLL_NS		200000		/* between two polls of the mount */
#define MAX_CHECKS	24		/* names one change is checked on */
#define MAX_DESCENDANTS	8		/* checked below a renamed directory */
#define REL_MAX		256		/* a path inside the tree */
#define MAX_DEPTH	8		/* directories nest no deeper */
#define DATA_MAX	65536		/* files stay smaller */
#define BIG_FILE	16384		/* nothing is appended past this */
#define XATTR_NAME	"user.dcbench"
#define XATTR_MAX	64
#define MAX_EXAMPLES	5
#define MAX_READERS	64
#define NEVER		INT64_MAX	/* the lag of a change never seen */
#define FLOOD_DIR	".dcbench-flood"	/* in the tree's root: no change's */
#define FLOOD_THREADS	64		/* flooding threads at most */
#define STALL_NS	20000000	/* a wake-up this late: its CPU stalled */

enum chg {
	C_CREATE, C_UNLINK, C_RENAME, C_RENAME_DIR, C_MKDIR, C_RMDIR,
	C_REPLACE, C_PWRITE, C_TRUNCATE, C_APPEND, C_CHMOD, C_CHOWN,
	C_LINK, C_UNLINK_LINK, C_RETARGET, C_SETXATTR, C_RMXATTR, C_NCHG
};

/* "create", ..., "removexattr": the report's and the examples' words */
extern const char *const chg_names[C_NCHG];

struct setup {
	const char *kinds[MAX_KINDS];
	unsigned nkinds;
	char source[PATH_MAX], mount[PATH_MAX], work[PATH_MAX];
	unsigned changes, bound_ms, give_up_ms, seed, readers, through;
	unsigned flood;			/* files per flood; 0: no floods */
	double peer_to;			/* < 0: passthrough_ll's own */
	const char *dcfs_args, *json;
	bool require, require_overflow;
	mode_t umask;
};

/* A name the tree holds, as the source has it. */
struct ent {
	char path[REL_MAX];
	char type;			/* 'f' file, 'd' directory, 'l' symlink */
};

struct names {
	struct ent *e;
	size_t n, cap;
	pthread_mutex_t lock;		/* readers copy a path under it */
};

/* What to compare on a name, besides whether it exists and its type. */
enum { W_ATTR = 1, W_DATA = 2, W_XATTR = 4, W_LIST = 8 };

struct check {
	char path[REL_MAX];
	unsigned what;
};

/* A name as one side shows it: what a user would look at. */
struct view {
	int err;			/* of lstat: 0 or ENOENT, ... */
	mode_t mode;
	uid_t uid;
	gid_t gid;
	off_t size;
	nlink_t nlink;
	int target_err;
	char target[REL_MAX];
	int data_err;
	size_t data_len;
	uint64_t data_hash;
	int xattr_err;
	size_t xattr_len;
	char xattr[XATTR_MAX];
	int list_err;
	unsigned list_n;
	uint64_t list_hash;
};

struct plan {
	enum chg chg;
	bool via_mount;
	char type;			/* of a */
	char a[REL_MAX], b[REL_MAX], tmp[REL_MAX], target[REL_MAX];
	mode_t mode;
	uid_t uid;
	gid_t gid;
	off_t off, size;
	unsigned char data[4096];	/* the bytes written */
	size_t n;
	char xval[XATTR_MAX];
	size_t xlen;
	uint64_t want_hash;		/* a's contents afterwards */
	size_t want_len;
	nlink_t want_nlink;
	struct check chk[MAX_CHECKS];
	unsigned nchk;
};

struct rec {
	unsigned char chg;
	bool via_mount, failed;
	bool flood;			/* made during a flood */
	int64_t lag;			/* ns, or NEVER; direct changes only */
	int64_t t0;			/* clock_ns() when the change was made */
	int late_example;		/* its line in run.late, or -1 */
	bool in_stall;			/* late, and a CPU stalled meanwhile
					 * (set by coh_summarise) */
};

/* The CPUs' stalls, as a thread pinned to each that only sleeps saw them
 * (witness.c). */
struct stall {
	int64_t from, to;		/* clock_ns() */
	int cpu;			/* whose witness saw it; -1: not pinned */
};

struct wthread;

struct witness {
	struct wthread *th;		/* one per CPU, while they run */
	unsigned nthreads;		/* how many ran (the CPUs watched) */
	bool watched;			/* every CPU was: the counts hold */
	bool raised, pinned;		/* every witness at nice -20, on its CPU */
	atomic_bool stop;
	pthread_mutex_t lock;		/* the record, while they run */
	struct stall *stall;		/* every stall, in the order they ended */
	unsigned stalls, cap;
	bool lost;			/* a stall not kept (no memory) */
	int64_t longest;		/* ns */
};

struct run;
struct flood;			/* flood.c's, while one is under way */

/* A thread reading through the mount all along (readers.c). */
struct reader {
	pthread_t thread;
	struct run *r;
	unsigned id;
	uint64_t rng, ops;
};

struct stats {
	unsigned direct, over, never, via, failed;
	unsigned over_in_stall;		/* of over: a CPU stalled meanwhile */
	int64_t p50, p99, max, max_seen;	/* ns; -1 when nothing measured */
};

struct run {
	const struct setup *s;
	const char *kind;
	char name[64];			/* the tree's directory in the source */
	char src[PATH_MAX];		/* the tree's root in the source */
	char mnt[PATH_MAX];		/* and through the mount */
	struct names names, quar;	/* the tree; what was left stale */
	uint64_t rng;
	unsigned next;			/* for fresh names */
	bool xattrs;
	size_t entries;			/* the tree as made */
	unsigned char *buf;		/* DATA_MAX + 1: what a look reads */
	unsigned char *old;		/* 2 * DATA_MAX: a file, as it will be */
	struct rec *recs;
	size_t nrec;
	uint64_t skipped, reader_ops;
	double warm_s;
	unsigned floods;		/* made */
	uint64_t flood_files;		/* files they made, all together */
	struct flood *flood;		/* one is under way */
	unsigned flood_changes;		/* direct changes timed during them */
	int64_t flood_max;		/* their largest lag (ns, NEVER); -1: none */
	int overflows;			/* the daemon logged; -1: no dcfs log */
	double flood_s;			/* the floods' own time, all together */
	char flood_err[320];
	atomic_bool stop;
	atomic_uint warm;
	bool tried, ran, dead;
	char error[512], note[256];
	char never[MAX_EXAMPLES][640], late[MAX_EXAMPLES][640], fails[MAX_EXAMPLES][640];
	unsigned nnever, nlate, nfails;
	const char *moving;		/* the directory a destination is sought for */
	size_t moving_height, moving_len;
	struct stats all, by[C_NCHG];
	struct witness wit;
};

/* The signal that interrupted the command, or 0: every loop stops on it. */
extern volatile sig_atomic_t coh_interrupted;

/* ---- witness.c: the machine's stalls ------------------------------------ */

/* Start a witness on each CPU this process may run on: 0, or -1 (none
 * left running, w->watched stays false: no stalls known). */
int coh_witness_start(struct witness *w);
/* Stop and join them (nothing when none started); the record stays. */
void coh_witness_stop(struct witness *w);
/* Did a CPU stall between clock_ns() times t0 and t1?  Only once the
 * witnesses are stopped: a stall is recorded when it ends. */
bool coh_witness_saw(const struct witness *w, int64_t t0, int64_t t1);
/* How many stalls the witness on cpu saw (-1: an unpinned one's). */
unsigned coh_witness_on(const struct witness *w, int cpu);
/* Free its record. */
void coh_witness_free(struct witness *w);

/* ---- util.c: small things ---------------------------------------------- */

/* The next number of the seeded sequence *s below n (0 when n is 0): one
 * seed makes the same tree and the same changes. */
unsigned coh_below(uint64_t *s, unsigned n);
/* snprintf for text that may be cut short. */
void __attribute__((format(printf, 3, 4)))
coh_put(char *out, size_t size, const char *fmt, ...);
/* "ENOENT", or strerror's words when the name is not known. */
const char *coh_err_name(int err);
/* Is path dir itself or below it? */
bool coh_within(const char *path, const char *dir);
/* Components of a relative path: 1 for "d0". */
unsigned coh_depth(const char *path);
/* base/rel into out (PATH_MAX bytes). */
void coh_at(char *out, const char *base, const char *rel);
/* "d0/s1" for "d0/s1/f3"; "." for a name at the top (REL_MAX bytes). */
void coh_parent_of(const char *path, char *out);
/* All n bytes, through EINTR and short writes; 0 or -1 with errno. */
int coh_write_all(int fd, const void *p, size_t n);
/* At most max bytes of path, not following a symlink: the length, or -1
 * with errno. */
ssize_t coh_read_file(const char *path, unsigned char *buf, size_t max);

/* ---- names.c: the tree's names, and those left stale ------------------- */

/* Appends a name; -1 when out of memory. */
int coh_names_add(struct names *t, const char *path, char type);
void coh_names_del(struct names *t, const char *path);
/* from, and everything below it, is now called to. */
void coh_names_move(struct names *t, const char *from, const char *to);
bool coh_has_children(const struct names *t, const char *dir);
/* May a change touch path: is neither it nor a directory above it stale? */
bool coh_usable(const struct run *r, const char *path);
/* Is dir's listing stale through the mount? */
bool coh_listing_stale(const struct run *r, const char *dir);
/* Does a stale name lie below dir? */
bool coh_holds_stale(const struct run *r, const char *dir);
/* Leaves path alone from now on: type 'n' the name and all below it, 'l'
 * only its listing. */
void coh_quarantine(struct run *r, const char *path, char type);

/* ---- view.c: looking at a name ----------------------------------------- */

/* The listing of path into v->list_n and the order-free v->list_hash. */
void coh_list_dir(const char *path, struct view *v);
/* What base/c->path shows of c->what; buf holds DATA_MAX + 1 bytes. */
void coh_observe(const char *base, const struct check *c, struct view *v,
		 unsigned char *buf);
/* Does the mount's view a agree with the source's b on what? */
bool coh_same(const struct view *a, const struct view *b, unsigned what);
/* Has the mount stopped answering (the daemon died)? */
bool coh_dead(const struct view *v);
/* "file 0644 0:0 size 12 nlink 1 data 12 B #1a2b3c4d", for the report. */
void coh_describe(const struct view *v, unsigned what, char *out, size_t size);

/* ---- tree.c: the tree in the source ------------------------------------ */

/* Makes the tree in r->src and its names; -1 with r->error. */
int coh_make_tree(struct run *r);
/* Removes root and all below it, never crossing into another mount. */
void coh_remove_tree(const char *root);

/* ---- flood.c: floods of files behind the mount ------------------------- */

/* FLOOD_DIR and a directory in it per flooding thread; -1 with r->error. */
int coh_make_flood_dirs(struct run *r);
/* Starts a flood (r->flood) and returns once --flood files are made. */
void coh_flood_begin(struct run *r);
/* The change is made: the flood's threads stop making files. */
void coh_flood_stop(struct run *r);
/* Waits for the flood's files to be removed; r->flood is NULL again. */
void coh_flood_end(struct run *r);
/* The overflows the daemon logged, or -1 when it is no dcfs or its log
 * cannot be read. */
int coh_overflows_logged(const struct run *r);

/* ---- readers.c: reading through the mount all along -------------------- */

/* Starts r->s->readers readers and returns once they have read every name
 * of the tree; -1 with r->error. */
int coh_start_readers(struct run *r, struct reader *rd);
/* Stops them, adding their operations to r->reader_ops. */
void coh_stop_readers(struct run *r, struct reader *rd);

/* ---- plan.c, change.c: a change ------------------------------------------ */

/* A random kind of change with names to make it on, clear of every stale
 * name; false if none fits. */
bool coh_plan_change(struct run *r, struct plan *p, bool via_mount);
/* Makes p's change under base (the tree in the source, or through the
 * mount): 0, or the errno of the call *call names. */
int coh_apply(const struct plan *p, const char *base, const char **call);
/* Does the source show what p meant to do?  v[i] is check i after it. */
bool coh_intended(const struct run *r, const struct plan *p, const struct view *v);
/* The names as the source now has them, p made. */
void coh_commit(struct run *r, const struct plan *p);

/* ---- lag.c, kind.c: measuring ---------------------------------------------- */

/* --changes changes, one at a time, each timed (and floods among them). */
void coh_run_changes(struct run *r);
/* One file system: its tree made, mounted, read, changed, unmounted,
 * removed; r->ran when all of it ran. */
void coh_run_kind(struct run *r);

/* ---- report.c ------------------------------------------------------------------ */

/* r->all and r->by from its records; -1 when out of memory. */
int coh_summarise(struct run *r);
/* One file system's table, notes and examples. */
void coh_print_kind(FILE *f, const struct run *r);
/* Its line of the closing summary. */
void coh_print_verdict(FILE *f, const struct run *r);
/* Every run as one JSON document; json_finish's result. */
int coh_write_json(const struct setup *s, struct run *runs, FILE *f);

#endif /* DCBENCH_COHERENCE_RUN_H */
