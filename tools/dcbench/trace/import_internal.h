/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * import_internal.h - the importer's state, shared by its three files:
 * proc.c (processes: pids, working directories, ops, paths made
 * absolute), syscalls.c (what each system call means) and import.c (lines
 * in, a trace out).  Single-threaded: one importer per thread.
 */
#ifndef DCBENCH_TRACE_IMPORT_INTERNAL_H
#define DCBENCH_TRACE_IMPORT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/import.h"
#include "trace/strace.h"
#include "trace/strtab.h"
#include "trace/trace.h"

#define PATH_CAP	(DCT_PATH_MAX + 1)
#define LINE_MAX_BYTES	(1u << 20)	/* longer lines are counted malformed */
#define DEAD_OP		0xff		/* kind of an op dropped after the fact */

enum { LIVE, EXITED, REAPED };

/* A relative path waiting for its process's unknown directory. */
struct pend {
	uint64_t op;
	uint8_t slot;		/* 0: path, 1: path2 */
	char *rel;		/* normalised, relative to that directory */
};

struct proc {
	uint32_t pid;
	uint32_t index;		/* in dct_importer.procs */
	int32_t parent;
	uint8_t state;
	bool has_exit;
	bool linked;		/* its fork was seen */
	bool base_from_parent;	/* pending paths may be resolved by the fork */
	char *cwd;		/* absolute, or NULL while unknown */
	char *cwd_rel;		/* while cwd is NULL: relative to the unknown one */
	struct dct_op *ops;
	size_t nops, cap;
	struct pend *pend;
	size_t npend, pcap;
	char *unf;		/* the call left <unfinished ...>, NUL-terminated */
	size_t unf_len;
	char unf_name[DCT_NAME_MAX_BYTES + 1];
	uint32_t unf_line;
	uint32_t last_line;
};

struct unknown_name {
	char name[DCT_NAME_MAX_BYTES + 1];
	uint64_t count;
};

#define MAX_UNKNOWN_NAMES 64

struct dct_importer {
	struct dct_import_summary sum;
	struct strtab paths;
	struct proc **procs;
	size_t nprocs, pcap;
	uint32_t *pidmap;	/* pid -> proc index + 1, open addressing */
	uint32_t *pidkey;
	size_t pidslots, pidused;
	uint64_t lineno;
	bool oom;
	char *join;		/* unfinished + resumed halves, rejoined */
	size_t join_cap;
	char sbuf[PATH_CAP];	/* a decoded string argument */
	char pbuf[PATH_CAP];	/* a path being made absolute */
	char abuf[PATH_CAP];	/* a decoded fd annotation */
	char errname[32];	/* the last errno name looked up, and ... */
	int errnum;		/* ... its number */
	struct unknown_name unknown[MAX_UNKNOWN_NAMES];
	size_t nunknown;
};

/* ---- paths (proc.c) ---- */

/*
 * base (absolute, or relative to an unknown directory) joined with rel,
 * normalised into out (PATH_CAP bytes); its length, or -1 when over
 * DCT_PATH_MAX.
 */
long im_join_path(char *out, const char *base, const char *rel, size_t rlen);
/* A trailing '/' or "/." asks for a directory; "/" itself asks nothing. */
bool im_trailing_slash(const char *s, size_t n);
uint32_t im_clamp_line(uint64_t l);	/* a line number as the trace stores it */

/* ---- processes (proc.c); out of memory sets im->oom ---- */

/* The latest process with this pid, whatever its state; NULL if none. */
struct proc *im_find_proc(const struct dct_importer *im, uint32_t pid);
struct proc *im_new_proc(struct dct_importer *im, uint32_t pid);
/* The running process with this pid; a new one if the pid is new or reused. */
struct proc *im_live_proc(struct dct_importer *im, uint32_t pid);
void im_free_proc(struct proc *p);
void im_count_malformed(struct dct_importer *im);
/* Append an op; its index, or -1 (out of memory, or after the EXIT). */
long long im_add_op(struct dct_importer *im, struct proc *p, unsigned kind,
		    unsigned flags, int err, uint64_t line);
/* Drop the ops whose paths wait for a directory that will never be known. */
void im_drop_pending(struct dct_importer *im, struct proc *p);
/* The string-table id of base + rel made absolute; DCT_NONE if too long. */
uint32_t im_intern_abs(struct dct_importer *im, const char *base,
		       const char *rel, size_t rlen);
/* *dst = a copy of s; false when out of memory. */
bool im_set_str(struct dct_importer *im, char **dst, const char *s);
/* The directory the process stood in at fork is now known. */
void im_learn_base(struct dct_importer *im, struct proc *p, const char *base);
/* The kernel told us the cwd (AT_FDCWD annotation, getcwd): believe it. */
void im_adopt_cwd(struct dct_importer *im, struct proc *p, const char *abs);
/* The cwd became unknowable (fchdir to an fd we cannot name). */
void im_lose_cwd(struct dct_importer *im, struct proc *p);

/* ---- system calls (syscalls.c) ---- */

/* One complete call: name(text), made at line entry, completed at line. */
void im_handle_call(struct dct_importer *im, struct proc *p, struct dct_span name,
		    struct dct_span text, uint64_t entry, uint64_t line);
/* The process exited (its exit line, or an exit call). */
void im_do_exit(struct dct_importer *im, struct proc *p, uint64_t line);
/* The call table is in strcmp order, as its binary search needs. */
bool im_systab_sorted(void);

#endif /* DCBENCH_TRACE_IMPORT_INTERNAL_H */
