/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.h - dcbench's binary trace: the processes of a recorded workload
 * and, per process, the path operations it made, in order.
 *
 * A trace is imported once from an strace log (trace/import.c) and replayed many
 * times, so the file is compact (each distinct path is stored once; ops
 * name paths by index) and the reader validates everything before handing
 * it out: a replay may index paths[], procs[] and ops[] with the numbers it
 * finds in the trace without checking them again.
 *
 * docs/trace-format.md describes the file byte by byte.
 */
#ifndef DCBENCH_TRACE_TRACE_H
#define DCBENCH_TRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define DCT_MAGIC	"DCTRACE"	/* 8 bytes on disk, NUL included */
#define DCT_VERSION	1
#define DCT_HEADER_SIZE	64
#define DCT_PROC_SIZE	40		/* bytes per process record on disk */
#define DCT_OP_SIZE	20		/* bytes per op record on disk */
#define DCT_PATH_MAX	4096		/* longest string-table entry, NUL excluded */

#define DCT_NONE	UINT32_MAX	/* unused path, path2 or child */
#define DCT_NO_OP	UINT64_MAX	/* no fork_op / wait_op */
#define DCT_ERR_UNKNOWN	(-1)		/* outcome not in the log ("= ?") */

enum dct_kind {
	DCT_OPEN,	/* open, openat, openat2, creat */
	DCT_STAT,	/* stat family following the last symlink; statfs, getxattr */
	DCT_LSTAT,	/* lstat, AT_SYMLINK_NOFOLLOW; lgetxattr */
	DCT_ACCESS,	/* access, faccessat, faccessat2 */
	DCT_READLINK,
	DCT_EXECVE,
	DCT_CHDIR,
	DCT_MKDIR,
	DCT_MKNOD,
	DCT_UNLINK,
	DCT_RMDIR,	/* rmdir, unlinkat(AT_REMOVEDIR) */
	DCT_RENAME,	/* path -> path2 */
	DCT_LINK,	/* new name path2 for existing path */
	DCT_SYMLINK,	/* path: the new link; path2: its target text, verbatim */
	DCT_TRUNCATE,
	DCT_UTIMENS,	/* utimensat, utime, utimes, futimesat */
	DCT_CHMOD,
	DCT_CHOWN,
	DCT_FORK,	/* child: the new process */
	DCT_WAIT,	/* child: the process this wait reaped */
	DCT_EXIT,	/* always the last op of a process, and only there */
	DCT_NKINDS
};

/* Flags common to all kinds that take paths. */
#define DCT_F_SLASH	0x01	/* path ended in '/' or "/." (must be a directory) */
#define DCT_F_SLASH2	0x02	/* the same for path2 (RENAME, LINK) */
#define DCT_F_NOFOLLOW	0x04	/* a symlink in path's last component is not followed */
/* OPEN */
#define DCT_F_CREAT	0x08
#define DCT_F_EXCL	0x10
#define DCT_F_DIRECTORY	0x20
#define DCT_F_TRUNC	0x40
/* RENAME (renameat2 flags) */
#define DCT_F_NOREPLACE	0x08
#define DCT_F_EXCHANGE	0x10
#define DCT_F_WHITEOUT	0x20
/* FORK */
#define DCT_F_THREAD	0x08	/* CLONE_THREAD */
#define DCT_F_VFORK	0x10	/* parent suspended until the child execs or exits */
/* EXIT */
#define DCT_F_IMPLIED	0x08	/* no exit line in the log: the process's last line */

/*
 * One operation.  path and path2 index dct_trace.paths (DCT_NONE where the
 * kind takes none); child indexes dct_trace.procs for FORK and WAIT.
 * Every path of a path-taking kind is absolute and lexically normalised
 * (no "//", no "." components, no trailing '/'; ".." kept), except a
 * SYMLINK's path2, which is the target text exactly as given.
 */
struct dct_op {
	uint8_t kind;		/* enum dct_kind */
	uint8_t flags;		/* DCT_F_* */
	int16_t err;		/* 0, a positive errno, or DCT_ERR_UNKNOWN */
	uint32_t path;
	uint32_t path2;
	uint32_t child;
	uint32_t line;		/* log line: of completion, of entry for FORK */
};

/*
 * One process (pid reuse makes a new one).  Its ops are
 * ops[first_op .. first_op + nops), ending with its EXIT.
 */
struct dct_proc {
	uint32_t pid;
	int32_t parent;		/* index in procs (always < own index), or -1 */
	uint64_t first_op;
	uint64_t nops;
	uint64_t fork_op;	/* the parent's FORK op (index in ops), or DCT_NO_OP */
	uint64_t wait_op;	/* the parent's WAIT op that reaped it, or DCT_NO_OP */
};

struct dct_trace {
	uint32_t nprocs;
	uint32_t npaths;
	uint64_t nops;
	struct dct_proc *procs;
	struct dct_op *ops;
	const char **paths;	/* npaths NUL-terminated strings, pointing into blob */
	char *blob;		/* the string table as stored: strings back to back */
	uint64_t blob_len;
};

/*
 * All functions returning int return 0 on success, -1 on failure with a
 * one-line message in err (errlen bytes, may be 0).
 */

/* Read and validate a trace file or an in-memory image of one. */
int dct_read(const char *file, struct dct_trace **out, char *err, size_t errlen);
int dct_read_mem(const void *buf, size_t len, struct dct_trace **out,
		 char *err, size_t errlen);
void dct_free(struct dct_trace *t);

/* Write t; it is validated first, so a trace written is a trace readable. */
int dct_write(const char *file, const struct dct_trace *t, char *err, size_t errlen);
int dct_write_fp(FILE *f, const struct dct_trace *t, char *err, size_t errlen);

/*
 * A trace file opened before its trace is made, so that a place that
 * cannot be written fails before the work, and a failed import leaves
 * what was there before.  Open, then either write (which closes it) or
 * abandon: that closes it, and removes it if the open created it.
 */
struct dct_out {
	const char *path;
	int fd;
	bool created;
};

int dct_out_open(struct dct_out *o, const char *path, char *err, size_t errlen);
int dct_out_write(struct dct_out *o, const struct dct_trace *t, char *err, size_t errlen);
void dct_out_abandon(struct dct_out *o);

/* Every structural rule of the format (also run by the reader and writer). */
int dct_validate(const struct dct_trace *t, char *err, size_t errlen);

/* Text dump, one op per line: "PID KIND[+flag...] ERR [PATH [PATH2]]". */
void dct_dump(FILE *f, const struct dct_trace *t);

const char *dct_kind_name(unsigned kind);	/* "OPEN"...; "?" when out of range */
int dct_kind_paths(unsigned kind);		/* how many paths the kind takes: 0-2 */
bool dct_kind_has_child(unsigned kind);		/* FORK and WAIT name a process */
const char *dct_errno_name(int err);		/* "ENOENT"; NULL when unknown */
int dct_errno_from_name(const char *name, size_t len);	/* 0 when unknown */

#endif /* DCBENCH_TRACE_TRACE_H */
