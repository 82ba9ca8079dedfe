/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * logreader.c - an strace log read as a stream of text, plain or xz
 * (told apart by the first bytes, so pipes and misnamed files work),
 * through one fixed buffer: the log is never held whole.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/logreader.h"

static const unsigned char xz_magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };

int lr_open(struct logreader *r, const char *path, char *err, size_t errlen)
{
	struct stat st;
	size_t n;

	memset(r, 0, sizeof(*r));
	r->f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	r->in = malloc(READ_CHUNK);
	if (!r->f || !r->in) {
		snprintf(err, errlen, "%s: %s", path, r->f ? "out of memory" : strerror(errno));
		return -1;
	}
	if (fstat(fileno(r->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: is a directory, not a file", path);
		return -1;
	}
	/* sniff by content, not name: pipes and misnamed files work too */
	n = fread(r->in, 1, sizeof(xz_magic), r->f);
	r->xz = n == sizeof(xz_magic) && memcmp(r->in, xz_magic, n) == 0;
	if (!r->xz) {
		r->held = n;
		return 0;
	}
	r->lz = (lzma_stream)LZMA_STREAM_INIT;
	if (lzma_stream_decoder(&r->lz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
		snprintf(err, errlen, "%s: cannot start the xz decoder", path);
		return -1;
	}
	r->lz.next_in = r->in;
	r->lz.avail_in = n;
	return 0;
}

void lr_close(struct logreader *r)
{
	if (r->xz)
		lzma_end(&r->lz);
	if (r->f && r->f != stdin)
		fclose(r->f);
	free(r->in);
}

static long lr_read_plain(struct logreader *r, char *buf, size_t cap)
{
	size_t n;

	if (r->held) {
		n = r->held < cap ? r->held : cap;
		memcpy(buf, r->in, n);
		memmove(r->in, r->in + n, r->held - n);
		r->held -= n;
		return (long)n;
	}
	n = fread(buf, 1, cap, r->f);
	return n == 0 && ferror(r->f) ? -1 : (long)n;
}

static const char *lzma_why(lzma_ret ret)
{
	switch (ret) {
	case LZMA_MEM_ERROR: return "out of memory";
	case LZMA_FORMAT_ERROR: return "not xz data";
	case LZMA_DATA_ERROR: return "corrupt xz data";
	case LZMA_BUF_ERROR: return "truncated xz data";
	default: return "xz decoder error";
	}
}

long lr_read(struct logreader *r, char *buf, size_t cap, char *err, size_t errlen)
{
	if (!r->xz) {
		long n = lr_read_plain(r, buf, cap);

		if (n < 0)
			snprintf(err, errlen, "read error: %s", strerror(errno));
		return n;
	}
	if (r->done)
		return 0;
	r->lz.next_out = (uint8_t *)buf;
	r->lz.avail_out = cap;
	for (;;) {
		lzma_ret ret;

		if (r->lz.avail_in == 0 && !r->in_eof) {
			r->lz.next_in = r->in;
			r->lz.avail_in = fread(r->in, 1, READ_CHUNK, r->f);
			if (r->lz.avail_in == 0 && ferror(r->f)) {
				snprintf(err, errlen, "read error: %s", strerror(errno));
				return -1;
			}
			r->in_eof = r->lz.avail_in == 0;
		}
		ret = lzma_code(&r->lz, r->in_eof ? LZMA_FINISH : LZMA_RUN);
		if (ret == LZMA_STREAM_END)
			r->done = true;
		else if (ret != LZMA_OK) {
			snprintf(err, errlen, "%s", lzma_why(ret));
			return -1;
		}
		if (r->lz.avail_out < cap || r->done)
			return (long)(cap - r->lz.avail_out);
	}
}
