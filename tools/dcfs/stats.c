// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stats.c - --stats FILE: dcfs's counters, the cache's statistics, the
 * daemon's pid and the time, rewritten every second by a thread of its
 * own and once more at exit ("state exited", where nodes_total must be
 * 0).  docs/dcfs.md, "Statistics", lists the fields.
 *
 * Threads: the statistics thread sleeps on stats_cv under stats_lock,
 * which guards only `stopping`; a snapshot is written with no lock held
 * (the counters are relaxed atomics).  The file's directory is resolved
 * and opened once, before the mount, by the main thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "options.h"

static char *stats_dir, *stats_base;	/* FILE's directory, resolved; name */
static int stats_dirfd = -1;		/* that directory, O_PATH */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stats_cv = PTHREAD_COND_INITIALIZER;
static bool stopping;
static pthread_t stats_tid;
static bool have_thread;

/*
 * --stats FILE: its directory, resolved now (dcfs moves to /).  Inside
 * the mount point, writing it would be a request to dcfs itself before
 * dcfs serves: start-up would hang for good, mount and all.
 */
void stats_setup(void)
{
	char *copy, *dir, *base;

	if (!opt.stats_arg)
		return;
	copy = xstrdup(opt.stats_arg);
	base = strrchr(copy, '/');
	if (base) {
		*base++ = '\0';
		dir = *copy ? copy : "/";
	} else {
		base = copy;
		dir = ".";
	}
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		die("--stats '%s': not a file name", opt.stats_arg);
	stats_dir = realpath(dir, NULL);
	if (!stats_dir)
		die("--stats '%s': directory '%s': %s", opt.stats_arg, dir,
		    strerror(errno));
	if (path_within(stats_dir, opt.mnt_abs))
		die("--stats '%s' lies inside the mount point '%s': dcfs would "
		    "wait on itself to write it; put it elsewhere (/run, /tmp)",
		    opt.stats_arg, opt.mnt_abs);
	stats_base = xstrdup(base);
	free(copy);
	/* written through it: the directory stays reachable from a sandbox */
	stats_dirfd = open(stats_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (stats_dirfd < 0)
		die("--stats '%s': directory '%s': %s", opt.stats_arg,
		    stats_dir, strerror(errno));
}

/*
 * A new file of an unpredictable name, .FILE.XXXXXX, in FILE's directory
 * (by its descriptor: a sandboxed daemon no longer sees its path).  O_EXCL
 * and O_NOFOLLOW, as mkostemp: nothing planted there is followed.  The
 * descriptor, or -1 with errno.
 */
static int stats_tmpfile(char *tmp, size_t len)
{
	static const char digits[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint64_t r;
	int tries, i, fd;

	for (tries = 0; tries < 100; tries++) {
		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			r = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull + (uint64_t)tries;
		if (snprintf(tmp, len, ".%s.XXXXXX", stats_base) >= (int)len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		for (i = (int)strlen(tmp) - 6; tmp[i]; i++, r /= 62)
			tmp[i] = digits[r % 62];
		fd = openat(stats_dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL |
			    O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

/*
 * One snapshot, into a new file beside FILE (stats_tmpfile), made 0644
 * whatever the umask, then renamed over FILE: a reader sees the old
 * snapshot or the new one, never half.  0 or an errno.
 */
int stats_write(const char *state, const struct dc_stats *cs,
		enum dc_watch_mode coherence)
{
	char tmp[NAME_MAX + 1];
	int fd, err = 0;
	FILE *f;

	if (!stats_base)
		return 0;
	fd = stats_tmpfile(tmp, sizeof(tmp));
	if (fd < 0)
		return errno;
	if (fchmod(fd, 0644) < 0 || !(f = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlinkat(stats_dirfd, tmp, 0);
		return err;
	}
	fprintf(f,
		"state %s\n"
		"pid %d\n"
		"updated %lld\n"
		"mode %s\n"
		"coherence %s\n"
		"nodes %lld\n"
		"nodes_total %lld\n"
		"node_fds %lld\n"
		"node_fd_budget %lld\n"
		"file_handles %d\n"
		"fdless %lld\n"
		"open_files %lld\n"
		"emfile %llu\n"
		"stale_names %llu\n"
		"workers %lld\n"
		"workers_started %llu\n"
		"workers_stuck %lld\n"
		"stuck_refused %llu\n"
		"uring %d\n"
		"uring_requests %llu\n"
		"cache_lookups %llu\n"
		"cache_hits %llu\n"
		"cache_negative_hits %llu\n"
		"cache_misses %llu\n"
		"cache_restarts %llu\n"
		"cache_evictions %llu\n"
		"cache_lock_waits %llu\n"
		"cache_entries %llu\n"
		"cache_negative %llu\n"
		"cache_bytes %llu\n",
		state, (int)getpid(), (long long)time(NULL),
		dc_mode_name(dcfs.mode), dc_watch_mode_name(coherence),
		(long long)CTR_GET(nodes_active), (long long)CTR_GET(nodes_total),
		(long long)CTR_GET(node_fds), (long long)dcfs.fd_budget,
		dcfs.handle_fd >= 0,
		(long long)CTR_GET(fdless), (long long)CTR_GET(open_files),
		(unsigned long long)CTR_GET(emfile),
		(unsigned long long)CTR_GET(stale),
		(long long)CTR_GET(workers),
		(unsigned long long)CTR_GET(workers_started),
		(long long)CTR_GET(workers_stuck),
		(unsigned long long)CTR_GET(stuck_refused),
		uring_active(), (unsigned long long)uring_requests(),
		(unsigned long long)cs->lookups, (unsigned long long)cs->hits,
		(unsigned long long)cs->negative_hits,
		(unsigned long long)cs->misses, (unsigned long long)cs->restarts,
		(unsigned long long)cs->evictions,
		(unsigned long long)cs->lock_waits,
		(unsigned long long)cs->entries, (unsigned long long)cs->negative,
		(unsigned long long)cs->bytes);
	if (ferror(f))
		err = EIO;
	if (fclose(f) != 0 && !err)
		err = errno;
	if (!err && renameat(stats_dirfd, tmp, stats_dirfd,
			     stats_base) < 0)
		err = errno;
	if (err)
		unlinkat(stats_dirfd, tmp, 0);
	return err;
}

/* The daemon's snapshots: a failure said once, and its end. */
static void write_stats_logged(const char *state, enum dc_watch_mode coherence)
{
	static bool failing;
	struct dc_stats cs;
	int err;

	dc_get_stats(dcfs.cache, &cs);
	err = stats_write(state, &cs, coherence);
	if (err && !failing)
		dcfs_log(LOG_ERR, "--stats %s/%s: %s; trying again every second",
			 stats_dir, stats_base, strerror(err));
	else if (!err && failing)
		dcfs_log(LOG_NOTICE, "--stats %s/%s: written again",
			 stats_dir, stats_base);
	failing = err != 0;
}

static void *stats_thread(void *arg)
{
	struct timespec t;
	sigset_t all;

	(void)arg;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	/* stats_start wrote the first one */
	pthread_mutex_lock(&stats_lock);
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &t);
		t.tv_sec += 1;
		while (!stopping &&
		       pthread_cond_timedwait(&stats_cv, &stats_lock, &t) == 0)
			;
		if (stopping)
			break;
		pthread_mutex_unlock(&stats_lock);
		write_stats_logged("running", coherence_mode());
		pthread_mutex_lock(&stats_lock);
	}
	pthread_mutex_unlock(&stats_lock);
	return NULL;
}

void stats_start(void)
{
	if (!stats_base)
		return;
	write_stats_logged("running", coherence_mode());
	if (pthread_create(&stats_tid, NULL, stats_thread, NULL) == 0)
		have_thread = true;
	else
		dcfs_log(LOG_WARNING, "no statistics thread: --stats %s "
			 "is not updated", opt.stats_arg);
}

void stats_stop(void)
{
	if (!have_thread)
		return;
	pthread_mutex_lock(&stats_lock);
	stopping = true;
	pthread_cond_signal(&stats_cv);
	pthread_mutex_unlock(&stats_lock);
	pthread_join(stats_tid, NULL);
	have_thread = false;
}

void stats_final(const struct dc_stats *cs, enum dc_watch_mode coherence)
{
	int err = stats_write("exited", cs, coherence);

	if (err)
		dcfs_log(LOG_ERR, "--stats %s/%s: %s", stats_dir, stats_base,
			 strerror(err));
}
