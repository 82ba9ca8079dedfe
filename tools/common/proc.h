/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * proc.h - other programs: is one installed, run one and wait for it, is
 * one being killed; and this one's descriptor limit.
 */
#ifndef DC_TOOLS_PROC_H
#define DC_TOOLS_PROC_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

/*
 * Is prog an executable file in one of $PATH's directories (an empty
 * entry is the current directory; no $PATH: /usr/local/bin:/usr/bin:/bin)?
 */
bool proc_on_path(const char *prog);

/*
 * Runs argv[0] (looked up in $PATH) with argv, stdio inherited, and waits
 * for it: its exit status (0-255), 256 + the signal that killed it, or
 * -errno when it could not be started.
 */
int proc_run(char *const argv[]);

/*
 * Is process pid being killed?  A signal it does not block, pending with
 * its default action (neither caught nor ignored), that ends a process.
 * For a process that waits in the kernel for a file system's answer, a
 * fatal signal stays pending until it leaves.  A traced process: SIGKILL
 * only.  1 yes, 0 no, -1 it cannot be looked at (pid 0 or below, none in
 * our namespace, a hidden /proc): the caller says what that means.
 */
int proc_dying(pid_t pid);

/*
 * RLIMIT_NOFILE as high as it goes: both limits at fs.nr_open where this
 * process may lift the hard limit (root), else the soft one at the hard
 * one.  Best effort; the soft limit it leaves.
 */
rlim_t proc_raise_nofile(void);

#endif
