/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.c - read and write dcbench trace files (trace.h).
 *
 * The reader trusts nothing in the file: every count is checked against the
 * file's size before anything is allocated, every index against the table
 * it indexes (validate.c), and a CRC-32 covers everything after the header,
 * so a damaged trace is refused with a message instead of replayed wrongly.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/le.h"
#include "trace/trace.h"
#include "trace/util.h"

/* Header field offsets; docs/trace-format.md has the table. */
#define H_MAGIC		0
#define H_VERSION	8
#define H_HSIZE		12
#define H_NPROCS	16
#define H_NPATHS	20
#define H_NOPS		24
#define H_STRTAB	32
#define H_PROCSIZE	40
#define H_OPSIZE	44
#define H_FILESIZE	48
#define H_CRC		56
#define H_RESERVED	60

static void encode_proc(unsigned char *b, const struct dct_proc *p)
{
	put32(b, p->pid);
	put32(b + 4, (uint32_t)p->parent);
	put64(b + 8, p->first_op);
	put64(b + 16, p->nops);
	put64(b + 24, p->fork_op);
	put64(b + 32, p->wait_op);
}

static void decode_proc(struct dct_proc *p, const unsigned char *b)
{
	p->pid = get32(b);
	p->parent = (int32_t)get32(b + 4);
	p->first_op = get64(b + 8);
	p->nops = get64(b + 16);
	p->fork_op = get64(b + 24);
	p->wait_op = get64(b + 32);
}

static void encode_op(unsigned char *b, const struct dct_op *o)
{
	b[0] = o->kind;
	b[1] = o->flags;
	b[2] = (unsigned char)((uint16_t)o->err & 0xff);
	b[3] = (unsigned char)((uint16_t)o->err >> 8);
	put32(b + 4, o->path);
	put32(b + 8, o->path2);
	put32(b + 12, o->child);
	put32(b + 16, o->line);
}

static void decode_op(struct dct_op *o, const unsigned char *b)
{
	o->kind = b[0];
	o->flags = b[1];
	o->err = (int16_t)(uint16_t)(b[2] | b[3] << 8);
	o->path = get32(b + 4);
	o->path2 = get32(b + 8);
	o->child = get32(b + 12);
	o->line = get32(b + 16);
}

/*
 * The body is produced twice: once into the CRC, once into the file, so the
 * header (which holds the CRC) can be written first to a stream that
 * cannot seek.
 */
struct sink {
	FILE *f;	/* NULL: only accumulate the CRC */
	uint32_t crc;
	bool failed;
};

static void sink_put(struct sink *s, const void *buf, size_t len)
{
	if (!s->f)
		s->crc = lzma_crc32(buf, len, s->crc);
	else if (!s->failed && fwrite(buf, 1, len, s->f) != len)
		s->failed = true;
}

static void emit_body(struct sink *s, const struct dct_trace *t)
{
	unsigned char buf[64 * DCT_OP_SIZE];
	size_t n = 0;

	sink_put(s, t->blob, t->blob_len);
	for (uint32_t i = 0; i < t->nprocs; i++) {
		encode_proc(buf, &t->procs[i]);
		sink_put(s, buf, DCT_PROC_SIZE);
	}
	for (uint64_t i = 0; i < t->nops; i++) {
		encode_op(buf + n, &t->ops[i]);
		n += DCT_OP_SIZE;
		if (n == sizeof(buf)) {
			sink_put(s, buf, n);
			n = 0;
		}
	}
	sink_put(s, buf, n);
}

static uint64_t body_size(const struct dct_trace *t)
{
	return t->blob_len + (uint64_t)t->nprocs * DCT_PROC_SIZE +
	       t->nops * DCT_OP_SIZE;
}

/* The blob must hold exactly the npaths strings paths[] points at. */
static int check_blob(const struct dct_trace *t, char *err, size_t errlen)
{
	uint64_t off = 0;

	for (uint32_t i = 0; i < t->npaths; i++) {
		size_t n = strlen(t->paths[i]);

		if (n > DCT_PATH_MAX || off + n + 1 > t->blob_len ||
		    memcmp(t->blob + off, t->paths[i], n + 1) != 0) {
			dct_fail(err, errlen, "string table does not match path %" PRIu32, i);
			return -1;
		}
		off += n + 1;
	}
	if (off != t->blob_len) {
		dct_fail(err, errlen, "string table has %" PRIu64 " stray bytes",
		     t->blob_len - off);
		return -1;
	}
	return 0;
}

int dct_write_fp(FILE *f, const struct dct_trace *t, char *err, size_t errlen)
{
	unsigned char h[DCT_HEADER_SIZE] = { 0 };
	struct sink crc = { .f = NULL }, out = { .f = f };

	if (check_blob(t, err, errlen) || dct_validate(t, err, errlen))
		return -1;
	emit_body(&crc, t);
	memcpy(h + H_MAGIC, DCT_MAGIC, 8);
	put32(h + H_VERSION, DCT_VERSION);
	put32(h + H_HSIZE, DCT_HEADER_SIZE);
	put32(h + H_NPROCS, t->nprocs);
	put32(h + H_NPATHS, t->npaths);
	put64(h + H_NOPS, t->nops);
	put64(h + H_STRTAB, t->blob_len);
	put32(h + H_PROCSIZE, DCT_PROC_SIZE);
	put32(h + H_OPSIZE, DCT_OP_SIZE);
	put64(h + H_FILESIZE, DCT_HEADER_SIZE + body_size(t));
	put32(h + H_CRC, crc.crc);
	sink_put(&out, h, sizeof(h));
	emit_body(&out, t);
	if (out.failed || fflush(f) != 0) {
		dct_fail(err, errlen, "write failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int dct_write(const char *file, const struct dct_trace *t, char *err, size_t errlen)
{
	FILE *f = fopen(file, "wb");
	int rc;

	if (!f) {
		dct_fail(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	rc = dct_write_fp(f, t, err, errlen);
	if (fclose(f) != 0 && rc == 0) {
		dct_fail(err, errlen, "%s: %s", file, strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(file);	/* never leave a half-written trace behind */
	return rc;
}

int dct_out_open(struct dct_out *o, const char *path, char *err, size_t errlen)
{
	o->path = path;
	o->created = true;
	o->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (o->fd < 0 && errno == EEXIST) {
		o->created = false;
		o->fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	if (o->fd < 0) {
		dct_fail(err, errlen, "cannot write the trace to %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

void dct_out_abandon(struct dct_out *o)
{
	close(o->fd);
	if (o->created)
		unlink(o->path);
}

int dct_out_write(struct dct_out *o, const struct dct_trace *t, char *err, size_t errlen)
{
	struct stat st;
	char why[256];
	FILE *f = NULL;
	bool reg;
	int rc = -1;

	/* a device or a fifo (-o /dev/null) is written, never truncated or removed */
	reg = fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode);
	if ((reg && ftruncate(o->fd, 0)) || !(f = fdopen(o->fd, "wb"))) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
		close(o->fd);
	} else {
		rc = dct_write_fp(f, t, why, sizeof(why));
		if (fclose(f) && !rc) {
			snprintf(why, sizeof(why), "%s", strerror(errno));
			rc = -1;
		}
	}
	if (rc) {
		dct_fail(err, errlen, "cannot write the trace to %s: %s", o->path, why);
		if (reg)
			unlink(o->path);	/* never leave a half-written trace behind */
	}
	return rc;
}

void dct_free(struct dct_trace *t)
{
	if (!t)
		return;
	free(t->procs);
	free(t->ops);
	free(t->paths);
	free(t->blob);
	free(t);
}

static int check_header(const unsigned char *b, size_t len, char *err, size_t errlen)
{
	uint32_t v;

	if (len < 8 || memcmp(b, DCT_MAGIC, 8) != 0) {
		dct_fail(err, errlen, "not a dcbench trace (bad magic)");
		return -1;
	}
	if (len < DCT_HEADER_SIZE) {
		dct_fail(err, errlen, "truncated trace: %zu bytes, shorter than the"
		     " %d-byte header", len, DCT_HEADER_SIZE);
		return -1;
	}
	v = get32(b + H_VERSION);
	if (v != DCT_VERSION) {
		dct_fail(err, errlen, "unsupported trace version %" PRIu32
		     " (this dcbench reads version %d)", v, DCT_VERSION);
		return -1;
	}
	if (get32(b + H_HSIZE) != DCT_HEADER_SIZE ||
	    get32(b + H_PROCSIZE) != DCT_PROC_SIZE ||
	    get32(b + H_OPSIZE) != DCT_OP_SIZE || get32(b + H_RESERVED) != 0) {
		dct_fail(err, errlen, "corrupt trace header (record sizes)");
		return -1;
	}
	return 0;
}

/* The sizes in the header must add up to the file, without overflow. */
static int check_sizes(const unsigned char *b, size_t len, char *err, size_t errlen)
{
	uint64_t fsize = get64(b + H_FILESIZE), strtab = get64(b + H_STRTAB);
	uint64_t nprocs = get32(b + H_NPROCS), nops = get64(b + H_NOPS);
	uint64_t room;

	if (fsize > len) {
		dct_fail(err, errlen, "truncated trace: header says %" PRIu64
		     " bytes, file has %zu", fsize, len);
		return -1;
	}
	if (fsize < len) {
		dct_fail(err, errlen, "corrupt trace: %zu bytes after the %" PRIu64
		     " the header announces", len - (size_t)fsize, fsize);
		return -1;
	}
	room = fsize - DCT_HEADER_SIZE;
	if (strtab > room || nprocs * DCT_PROC_SIZE > room - strtab ||
	    nops > (room - strtab - nprocs * DCT_PROC_SIZE) / DCT_OP_SIZE ||
	    nops * DCT_OP_SIZE != room - strtab - nprocs * DCT_PROC_SIZE) {
		dct_fail(err, errlen, "corrupt trace header: counts do not add up to"
		     " the file size");
		return -1;
	}
	if (get32(b + H_NPATHS) > strtab) {
		dct_fail(err, errlen, "corrupt trace header: more paths than string bytes");
		return -1;
	}
	if (lzma_crc32(b + DCT_HEADER_SIZE, room, 0) != get32(b + H_CRC)) {
		dct_fail(err, errlen, "corrupt trace: checksum mismatch");
		return -1;
	}
	return 0;
}

/* Split the string table into npaths strings, each at most DCT_PATH_MAX. */
static int load_paths(struct dct_trace *t, const unsigned char *s,
		      char *err, size_t errlen)
{
	uint64_t off = 0;

	t->blob = malloc(t->blob_len ? t->blob_len : 1);
	t->paths = malloc((t->npaths ? t->npaths : 1) * sizeof(*t->paths));
	if (!t->blob || !t->paths) {
		dct_fail(err, errlen, "out of memory for %" PRIu32 " paths", t->npaths);
		return -1;
	}
	memcpy(t->blob, s, t->blob_len);
	for (uint32_t i = 0; i < t->npaths; i++) {
		const char *p = t->blob + off;
		const char *nul = memchr(p, '\0', t->blob_len - off);

		if (!nul) {
			dct_fail(err, errlen, "corrupt trace: string table ends inside"
			     " path %" PRIu32, i);
			return -1;
		}
		if ((size_t)(nul - p) > DCT_PATH_MAX) {
			dct_fail(err, errlen, "corrupt trace: path %" PRIu32 " is %zu bytes,"
			     " over the %d-byte limit", i, (size_t)(nul - p), DCT_PATH_MAX);
			return -1;
		}
		t->paths[i] = p;
		off += (uint64_t)(nul - p) + 1;
	}
	if (off != t->blob_len) {
		dct_fail(err, errlen, "corrupt trace: %" PRIu64 " bytes after the last"
		     " path in the string table", t->blob_len - off);
		return -1;
	}
	return 0;
}

static int load_records(struct dct_trace *t, const unsigned char *b,
			char *err, size_t errlen)
{
	t->procs = calloc(t->nprocs ? t->nprocs : 1, sizeof(*t->procs));
	t->ops = calloc(t->nops ? t->nops : 1, sizeof(*t->ops));
	if (!t->procs || !t->ops) {
		dct_fail(err, errlen, "out of memory for %" PRIu64 " ops", t->nops);
		return -1;
	}
	for (uint32_t i = 0; i < t->nprocs; i++, b += DCT_PROC_SIZE)
		decode_proc(&t->procs[i], b);
	for (uint64_t i = 0; i < t->nops; i++, b += DCT_OP_SIZE)
		decode_op(&t->ops[i], b);
	return 0;
}

int dct_read_mem(const void *buf, size_t len, struct dct_trace **out,
		 char *err, size_t errlen)
{
	const unsigned char *b = buf;
	struct dct_trace *t;

	*out = NULL;
	if (check_header(b, len, err, errlen) || check_sizes(b, len, err, errlen))
		return -1;
	t = calloc(1, sizeof(*t));
	if (!t) {
		dct_fail(err, errlen, "out of memory");
		return -1;
	}
	t->nprocs = get32(b + H_NPROCS);
	t->npaths = get32(b + H_NPATHS);
	t->nops = get64(b + H_NOPS);
	t->blob_len = get64(b + H_STRTAB);
	if (load_paths(t, b + DCT_HEADER_SIZE, err, errlen) ||
	    load_records(t, b + DCT_HEADER_SIZE + t->blob_len, err, errlen) ||
	    dct_validate(t, err, errlen)) {
		dct_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

static unsigned char *slurp(const char *file, size_t *len, char *err, size_t errlen)
{
	FILE *f = fopen(file, "rb");
	unsigned char *buf = NULL;
	struct stat st;

	if (!f) {
		dct_fail(err, errlen, "%s: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > SIZE_MAX - 1) {
		dct_fail(err, errlen, "%s: not a regular file", file);
		goto out;
	}
	*len = (size_t)st.st_size;
	buf = malloc(*len ? *len : 1);
	if (!buf) {
		dct_fail(err, errlen, "%s: out of memory for %zu bytes", file, *len);
		goto out;
	}
	if (fread(buf, 1, *len, f) != *len) {
		dct_fail(err, errlen, "%s: read failed", file);
		free(buf);
		buf = NULL;
	}
out:
	fclose(f);
	return buf;
}

int dct_read(const char *file, struct dct_trace **out, char *err, size_t errlen)
{
	size_t len = 0;
	unsigned char *buf;
	int rc;
	char why[256] = "";

	*out = NULL;
	buf = slurp(file, &len, err, errlen);
	if (!buf)
		return -1;
	rc = dct_read_mem(buf, len, out, why, sizeof(why));
	if (rc)
		dct_fail(err, errlen, "%s: %s", file, why);
	free(buf);
	return rc;
}
