/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.c - dcbench micro's general helpers (util.h): allocation, time,
 * RNG, statistics, the xz reader and the gnuplot runner.
 */
#include <errno.h>
#include <lzma.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "micro/util.h"

#define MAX_MEDIAN	101	/* figures median() sorts on its stack */

extern char **environ;

void oom(size_t n)
{
	fprintf(stderr, "dcbench micro: out of memory (%zu bytes)\n", n);
	exit(1);	/* the atexit handler unmounts */
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rng_next(uint64_t *s)	/* splitmix64 */
{
	uint64_t z = (*s += GOLDEN);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 16;

	while (p < n)
		p <<= 1;
	return p;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double median(const double *v, unsigned n)
{
	double t[MAX_MEDIAN];

	if (n == 0)
		return NAN;
	memcpy(t, v, n * sizeof(*t));
	qsort(t, n, sizeof(*t), cmp_double);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

double mean(const double *v, unsigned n)
{
	double s = 0;

	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return n ? s / n : NAN;
}

double stddev(const double *v, unsigned n)
{
	double m = mean(v, n), s = 0;

	if (n < 2)
		return NAN;
	for (unsigned i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return sqrt(s / (n - 1));
}


/* Read a whole file, decompressing it if it is xz. */
int slurp(const char *file, char **out, size_t *outlen)
{
	static const unsigned char xzmagic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	FILE *f = fopen(file, "rb");
	char *raw = NULL, *dec = NULL;
	size_t len = 0, cap = 0, dlen = 0, dcap;
	lzma_stream lz = LZMA_STREAM_INIT;
	lzma_ret ret;

	if (!f) {
		fprintf(stderr, "dcbench micro: %s: %s\n", file, strerror(errno));
		return -1;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			cap = cap ? cap * 2 : (1u << 20);
			raw = xrealloc(raw, cap);
		}
		n = fread(raw + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "dcbench micro: %s: read error\n", file);
		fclose(f);
		free(raw);
		return -1;
	}
	fclose(f);
	if (len < 6 || memcmp(raw, xzmagic, 6)) {
		*out = raw;
		*outlen = len;
		return 0;
	}
	if (lzma_stream_decoder(&lz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
		fprintf(stderr, "dcbench micro: %s: cannot start the xz decoder\n", file);
		free(raw);
		return -1;
	}
	dcap = len * 8;
	dec = xmalloc(dcap);
	lz.next_in = (const uint8_t *)raw;
	lz.avail_in = len;
	do {
		if (dlen == dcap) {
			dcap *= 2;
			dec = xrealloc(dec, dcap);
		}
		lz.next_out = (uint8_t *)dec + dlen;
		lz.avail_out = dcap - dlen;
		ret = lzma_code(&lz, LZMA_FINISH);
		dlen = dcap - lz.avail_out;
	} while (ret == LZMA_OK);
	lzma_end(&lz);
	free(raw);
	if (ret != LZMA_STREAM_END) {
		fprintf(stderr, "dcbench micro: %s: corrupt xz data (%d)\n", file, (int)ret);
		free(dec);
		return -1;
	}
	*out = dec;
	*outlen = dlen;
	return 0;
}

bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		snprintf(buf, sizeof(buf), "%.*s/gnuplot", (int)len, len ? p : ".");
		if (access(buf, X_OK) == 0)
			return true;
		if (!e)
			return false;
		p = e + 1;
	}
}


int run_gnuplot(const char *cmd, const char *script)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	pid_t pid;
	int status, err;

	fflush(NULL);
	err = posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ);
	if (err) {
		fprintf(stderr, "dcbench %s: cannot run gnuplot: %s; no plot drawn\n",
			cmd, strerror(err));
		unlink(script);
		return -1;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	unlink(script);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "dcbench %s: gnuplot failed; no plot drawn\n", cmd);
		return -1;
	}
	return 0;
}
