// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * proc.c - other programs: is one installed, run one and wait; this one's
 * descriptor limit (proc.h).
 */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc.h"

extern char **environ;

bool proc_on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, len ? p : ".", prog);
		if (access(buf, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}

int proc_run(char *const argv[])
{
	pid_t pid;
	int err, status;

	/* the child must not write again what this process has buffered */
	fflush(NULL);
	err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
	if (err)
		return -err;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 256 + WTERMSIG(status);
}

rlim_t proc_raise_nofile(void)
{
	struct rlimit rl;
	FILE *f;
	unsigned long nr_open = 0;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open > rl.rlim_max) {
		struct rlimit up = { nr_open, nr_open };

		if (setrlimit(RLIMIT_NOFILE, &up) == 0)
			return nr_open;
	}
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

/*
 * Signals whose default action leaves the process alive: ignore (SIGCHLD,
 * SIGCONT, SIGURG, SIGWINCH) or stop (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU).
 * Every other one, pending with its default action, kills.
 */
#define SIGBIT(s)	(1ull << ((s) - 1))
#define SURVIVED	(SIGBIT(SIGCHLD) | SIGBIT(SIGCONT) | SIGBIT(SIGURG) | \
			 SIGBIT(SIGWINCH) | SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | \
			 SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))

/*
 * A fatal signal queues SIGKILL on each of the dying process's threads,
 * but one that dumps core (SIGQUIT, SIGABRT...) stays itself, and so does
 * any for a traced process, whose signals wait for its tracer, which may
 * drop them (a debugger's ^C): for it SIGKILL alone is sure.
 */
int proc_dying(pid_t pid)
{
	unsigned long long pending = 0, blocked = 0, caught = 0, ignored = 0, v;
	char path[40], line[128];
	long tracer = 0;
	FILE *f;

	if (pid <= 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "SigPnd: %llx", &v) == 1 ||
		    sscanf(line, "ShdPnd: %llx", &v) == 1)
			pending |= v;
		else if (sscanf(line, "SigBlk: %llx", &v) == 1)
			blocked = v;
		else if (sscanf(line, "SigIgn: %llx", &v) == 1)
			ignored = v;
		else if (sscanf(line, "SigCgt: %llx", &v) == 1)
			caught = v;
		else
			sscanf(line, "TracerPid: %ld", &tracer);
	}
	fclose(f);
	return (pending & SIGBIT(SIGKILL)) ||
	       (!tracer && (pending & ~blocked & ~caught & ~ignored & ~SURVIVED));
}
