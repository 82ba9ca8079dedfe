/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * logreader.h - read a log file ("-": stdin), plain or xz-compressed.
 */
#ifndef DC_TOOLS_LOGREADER_H
#define DC_TOOLS_LOGREADER_H

#include <lzma.h>
#include <stdbool.h>
#include <stdio.h>

#define READ_CHUNK	(1u << 20)	/* bytes read from the file at a time */

struct logreader {
	FILE *f;
	bool xz, in_eof, done;
	lzma_stream lz;
	unsigned char *in;
	size_t held;		/* plain: bytes read while sniffing, not yet given */
};

/* Open path; 0, or -1 with a message in err.  Close it either way. */
int lr_open(struct logreader *r, const char *path, char *err, size_t errlen);
/* Up to cap bytes of log text; 0 at the end, -1 on error (err set). */
long lr_read(struct logreader *r, char *buf, size_t cap, char *err, size_t errlen);
void lr_close(struct logreader *r);

#endif /* DC_TOOLS_LOGREADER_H */
