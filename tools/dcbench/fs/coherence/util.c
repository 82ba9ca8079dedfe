// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * util.c - the small things every part of `dcbench coherence` uses:
 * draws from the seeded sequence (common/rng.h), bounded formatting,
 * relative paths inside the tree, whole-file reads and writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/rng.h"
#include "fs/coherence/run.h"

unsigned coh_below(uint64_t *s, unsigned n)
{
	return n ? (unsigned)(rng_next(s) % n) : 0;
}

/* snprintf for text that may be cut short (names are kept short enough
 * that paths never are) */
void coh_put(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}


const char *coh_err_name(int err)
{
	const char *n = strerrorname_np(err);

	return n ? n : strerror(err);
}

/* Is path dir itself or below it? */
bool coh_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '/' || path[n] == '\0');
}

unsigned coh_depth(const char *path)
{
	unsigned d = 1;

	for (; *path; path++)
		d += *path == '/';
	return d;
}

void coh_at(char *out, const char *base, const char *rel)
{
	coh_put(out, PATH_MAX, "%s/%s", base, rel);
}

/* "d0/s1" for "d0/s1/f3"; "." for a name at the top. */
void coh_parent_of(const char *path, char *out)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		coh_put(out, REL_MAX, ".");
	else
		coh_put(out, REL_MAX, "%.*s", (int)(slash - path), path);
}

int coh_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads at most max bytes of path; the length, or -1 with errno. */
ssize_t coh_read_file(const char *path, unsigned char *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	int saved;

	if (fd < 0)
		return -1;
	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (ssize_t)got;
}
