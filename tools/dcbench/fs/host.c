// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * host.c - the machine around a file-system benchmark's runs (host.h):
 * /dev/fuse, the work directory, the signals that end a run.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/host.h"

static const int caught[3] = { SIGINT, SIGTERM, SIGHUP };

int fsh_check_fuse(const char *cmd)
{
	struct stat st;

	if (stat("/dev/fuse", &st) == 0 && S_ISCHR(st.st_mode) &&
	    access("/dev/fuse", R_OK | W_OK) == 0)
		return 0;
	fprintf(stderr, "dcbench %s: no usable /dev/fuse (modprobe fuse; in a "
		"container, give it /dev/fuse)\n", cmd);
	return -1;
}

static int make_temp_work(const char *cmd, char *out)
{
	const char *tmp = getenv("TMPDIR");

	if (!tmp || !*tmp)
		tmp = "/tmp";
	if ((size_t)snprintf(out, PATH_MAX, "%s/dcbench-%s.XXXXXX", tmp, cmd) >= PATH_MAX ||
	    !mkdtemp(out)) {
		fprintf(stderr, "dcbench %s: cannot make a work directory under %s: %s\n",
			cmd, tmp, strerror(errno));
		return -1;
	}
	return 0;
}

int fsh_make_work(const char *cmd, const char *opt, const char *arg, char *out,
		  enum fsh_work *how)
{
	if (!arg) {
		*how = FSH_WORK_TEMP;
		return make_temp_work(cmd, out);
	}
	*how = FSH_WORK_FOUND;
	if (mkdir(arg, 0755) == 0)
		*how = FSH_WORK_MADE;
	else if (errno != EEXIST)
		goto fail;
	if (realpath(arg, out))
		return 0;
fail:
	fprintf(stderr, "dcbench %s: %s %s: %s\n", cmd, opt, arg, strerror(errno));
	return -1;
}

void fsh_remove_work(const char *cmd, const char *work)
{
	char path[PATH_MAX];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(work);

	if (d) {
		while ((e = readdir(d))) {
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", work, e->d_name) >=
			    sizeof(path))
				continue;
			if (lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
				unlink(path);
		}
		closedir(d);
	}
	if (rmdir(work) < 0)
		fprintf(stderr, "dcbench %s: could not remove %s: %s\n", cmd, work,
			strerror(errno));
}

void fsh_catch_signals(void (*handler)(int), struct sigaction old[3])
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(caught[i], &sa, &old[i]);
}

void fsh_restore_signals(const struct sigaction old[3])
{
	for (int i = 0; i < 3; i++)
		sigaction(caught[i], &old[i], NULL);
}
