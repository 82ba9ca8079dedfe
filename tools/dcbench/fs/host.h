/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * host.h - what the file-system benchmarks (coherence, fsmeta, kernbench)
 * need of the machine around their runs: a usable /dev/fuse, a work
 * directory for the mount point and the daemons' logs, and signals that
 * end the run in hand cleanly.  Messages go to stderr as "dcbench CMD: ...".
 */
#ifndef DCBENCH_FS_HOST_H
#define DCBENCH_FS_HOST_H

#include <signal.h>

/* Is /dev/fuse a character device this process may open?  0, or -1 with
 * a message saying how to get one. */
int fsh_check_fuse(const char *cmd);

enum fsh_work { FSH_WORK_FOUND, FSH_WORK_MADE, FSH_WORK_TEMP };

/*
 * The work directory into out (PATH_MAX bytes, absolute): arg, made if it
 * is not there, or, when arg is NULL, a new $TMPDIR/dcbench-CMD.XXXXXX
 * ($TMPDIR or /tmp).  *how says which; opt is the option arg came from,
 * for the message.  0, or -1 with a message.
 */
int fsh_make_work(const char *cmd, const char *opt, const char *arg, char *out,
		  enum fsh_work *how);

/* Removes the files in work (one level, never into a directory, so that a
 * mount still there is never walked) and then work; says so if it stays. */
void fsh_remove_work(const char *cmd, const char *work);

/* Sends SIGINT, SIGTERM and SIGHUP to handler (with SA_RESTART), the
 * actions they had into old; fsh_restore_signals puts those back. */
void fsh_catch_signals(void (*handler)(int), struct sigaction old[3]);
void fsh_restore_signals(const struct sigaction old[3]);

#endif /* DCBENCH_FS_HOST_H */
