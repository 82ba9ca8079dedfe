// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * log.c - dcfs's diagnostics, libfuse's among them: on stderr ("dcfs: "
 * first) until dcfs runs as a daemon, then through syslog (ident dcfs,
 * facility daemon), since a daemon's stderr is /dev/null.
 *
 * Any thread may log; each message is one write (no interleaving).  The
 * switch to syslog is one relaxed flag, set once by the main thread.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dcfs.h"

static bool log_syslog;			/* dcfs_log: syslog, not stderr */

static void vlog(int prio, const char *fmt, va_list ap)
{
	char msg[1024];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (__atomic_load_n(&log_syslog, __ATOMIC_RELAXED))
		syslog(prio, "%s", msg);
	else
		fprintf(stderr, "dcfs: %s\n", msg);	/* one write: no interleaving */
}

void dcfs_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_ERR, fmt, ap);
	va_end(ap);
	exit(1);
}

/* libfuse's own messages (and its -d request log) take the same way. */
static void fuse_log_hook(enum fuse_log_level level, const char *fmt,
			  va_list ap)
{
	char msg[1024];
	size_t n;

	if (!__atomic_load_n(&log_syslog, __ATOMIC_RELAXED)) {
		vfprintf(stderr, fmt, ap);
		return;
	}
	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	syslog((int)level, "%s", msg);	/* fuse_log_level is syslog's scale */
}

/* Connected at once (LOG_NDELAY): a sandboxed daemon sees no /dev/log. */
void log_open_syslog(void)
{
	openlog("dcfs", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void dcfs_log_to_syslog(void)
{
	log_open_syslog();
	__atomic_store_n(&log_syslog, true, __ATOMIC_RELAXED);
}

void log_take_fuse(void)
{
	fuse_set_log_func(fuse_log_hook);
}
