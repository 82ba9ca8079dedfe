/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * options.h - dcfs's command line as parsed (options.c) and checked
 * against the system (checks.c), for the start-up in main.c.  Written
 * only by the main thread before the mount; read-only after.
 */
#ifndef DCFS_OPTIONS_H
#define DCFS_OPTIONS_H

#include "dcfs.h"

/* Who may use the mount (the kernel's allow_other, libfuse's allow_root). */
enum access {
	ACCESS_DEFAULT,		/* OTHER as root, else OWNER */
	ACCESS_OTHER,		/* every user */
	ACCESS_OWNER,		/* the user dcfs runs as */
	ACCESS_ROOT,		/* that user and root */
};

struct dcfs_opts {
	const char *source, *mountpoint;	/* as given */
	char *src_abs, *mnt_abs;		/* resolved (check_paths) */
	char *stats_arg;			/* --stats as given */
	int threads, readers, uring_depth;	/* uring_depth 0: no --uring */
	uint64_t cache_entries;
	bool foreground;
	enum access access;
	enum dcfs_seccomp seccomp;
	bool seccomp_given, sandbox;
	char *fuse_opts;			/* -o items for libfuse, escaped */
	struct fuse_args fargs;			/* argv[0] and -o options */
};

extern struct dcfs_opts opt;

/*
 * The command line into opt and the dcfs fields it sets (mode, timeouts,
 * coherence...).  --help and --version answer and exit 0; a usage error
 * exits 2 (usage_error).
 */
void parse_args(int argc, char **argv);
/* A usage error: the message and the synopsis on stderr, exit 2. */
void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* strdup, or die (out of memory) */
char *xstrdup(const char *s);

/* checks.c: the source, the mount point, --stats, /dev/fuse and the
 * options that need the system's consent, each failure said (exit 1). */
void check_paths(void);
/* Does path lie in dir (both absolute, resolved) or is it dir? */
bool path_within(const char *path, const char *dir);

#endif /* DCFS_OPTIONS_H */
