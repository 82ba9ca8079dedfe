/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.c - read, validate, write and dump dcbench trace files.
 *
 * The reader trusts nothing in the file: every count is checked against the
 * file's size before anything is allocated, every index against the table
 * it indexes, and a CRC-32 covers everything after the header, so a damaged
 * trace is refused with a message instead of replayed wrongly.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace.h"

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

static const char *const kind_names[DCT_NKINDS] = {
	[DCT_OPEN] = "OPEN", [DCT_STAT] = "STAT", [DCT_LSTAT] = "LSTAT",
	[DCT_ACCESS] = "ACCESS", [DCT_READLINK] = "READLINK",
	[DCT_EXECVE] = "EXECVE", [DCT_CHDIR] = "CHDIR", [DCT_MKDIR] = "MKDIR",
	[DCT_MKNOD] = "MKNOD", [DCT_UNLINK] = "UNLINK", [DCT_RMDIR] = "RMDIR",
	[DCT_RENAME] = "RENAME", [DCT_LINK] = "LINK", [DCT_SYMLINK] = "SYMLINK",
	[DCT_TRUNCATE] = "TRUNCATE", [DCT_UTIMENS] = "UTIMENS",
	[DCT_CHMOD] = "CHMOD", [DCT_CHOWN] = "CHOWN", [DCT_FORK] = "FORK",
	[DCT_WAIT] = "WAIT", [DCT_EXIT] = "EXIT",
};

#define F_PATH1	(DCT_F_SLASH | DCT_F_NOFOLLOW)
#define DCT_ERRNO_MAX	4095	/* the kernel's MAX_ERRNO */

/* Flags each kind may carry; anything else is corruption. */
static const uint8_t kind_flags[DCT_NKINDS] = {
	[DCT_OPEN] = F_PATH1 | DCT_F_CREAT | DCT_F_EXCL | DCT_F_DIRECTORY | DCT_F_TRUNC,
	[DCT_STAT] = DCT_F_SLASH, [DCT_LSTAT] = DCT_F_SLASH,
	[DCT_ACCESS] = F_PATH1, [DCT_READLINK] = DCT_F_SLASH,
	[DCT_EXECVE] = DCT_F_SLASH, [DCT_CHDIR] = DCT_F_SLASH,
	[DCT_MKDIR] = DCT_F_SLASH, [DCT_MKNOD] = DCT_F_SLASH,
	[DCT_UNLINK] = DCT_F_SLASH, [DCT_RMDIR] = DCT_F_SLASH,
	[DCT_RENAME] = DCT_F_SLASH | DCT_F_SLASH2 | DCT_F_NOREPLACE |
		       DCT_F_EXCHANGE | DCT_F_WHITEOUT,
	[DCT_LINK] = F_PATH1 | DCT_F_SLASH2,
	[DCT_SYMLINK] = DCT_F_SLASH,
	[DCT_TRUNCATE] = DCT_F_SLASH, [DCT_UTIMENS] = F_PATH1,
	[DCT_CHMOD] = F_PATH1, [DCT_CHOWN] = F_PATH1,
	[DCT_FORK] = DCT_F_THREAD | DCT_F_VFORK,
	[DCT_WAIT] = 0, [DCT_EXIT] = DCT_F_IMPLIED,
};

const char *dct_kind_name(unsigned kind)
{
	return kind < DCT_NKINDS ? kind_names[kind] : "?";
}

int dct_kind_paths(unsigned kind)
{
	switch (kind) {
	case DCT_RENAME:
	case DCT_LINK:
	case DCT_SYMLINK:
		return 2;
	case DCT_FORK:
	case DCT_WAIT:
	case DCT_EXIT:
		return 0;
	default:
		return kind < DCT_NKINDS ? 1 : 0;
	}
}

static bool kind_has_child(unsigned kind)
{
	return kind == DCT_FORK || kind == DCT_WAIT;
}

const char *dct_errno_name(int err)
{
	if (err <= 0)
		return NULL;
	return strerrorname_np(err);
}

/* Linux errnos all lie below 134; the scan is cheap and needs no table. */
int dct_errno_from_name(const char *name, size_t len)
{
	for (int e = 1; e < 256; e++) {
		const char *n = strerrorname_np(e);

		if (n && strlen(n) == len && memcmp(n, name, len) == 0)
			return e;
	}
	return 0;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- little-endian encoding ---- */

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint64_t get64(const unsigned char *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

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

/* ---- validation ---- */

/* Absolute and lexically normal: what the importer promises for paths. */
static bool path_is_normal(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || s[0] != '/')
		return false;
	if (n > 1 && s[n - 1] == '/')
		return false;
	for (const char *p = s; (p = strchr(p, '/')); p++) {
		if (p[1] == '/')
			return false;
		if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			return false;
	}
	return true;
}

static int check_path(const struct dct_trace *t, const uint8_t *normal,
		      uint64_t i, uint32_t id, bool any_text, const char *which,
		      char *err, size_t errlen)
{
	if (id >= t->npaths) {
		fail(err, errlen, "op %" PRIu64 ": %s %" PRIu32
		     " out of range (%" PRIu32 " paths)", i, which, id, t->npaths);
		return -1;
	}
	if (!any_text && !normal[id]) {
		fail(err, errlen, "op %" PRIu64 ": %s %" PRIu32
		     " is not a normalised absolute path", i, which, id);
		return -1;
	}
	return 0;
}

static int check_child(const struct dct_trace *t, uint32_t owner, uint64_t i,
		       const struct dct_op *o, char *err, size_t errlen)
{
	const struct dct_proc *c;
	uint64_t back;

	if (o->child >= t->nprocs) {
		fail(err, errlen, "op %" PRIu64 ": child %" PRIu32
		     " out of range (%" PRIu32 " processes)", i, o->child, t->nprocs);
		return -1;
	}
	c = &t->procs[o->child];
	back = o->kind == DCT_FORK ? c->fork_op : c->wait_op;
	if (c->parent != (int32_t)owner || back != i) {
		fail(err, errlen, "op %" PRIu64 ": %s of process %" PRIu32
		     " does not match that process's record", i,
		     dct_kind_name(o->kind), o->child);
		return -1;
	}
	return 0;
}

static int check_op(const struct dct_trace *t, const uint8_t *normal,
		    uint32_t owner, uint64_t i, char *err, size_t errlen)
{
	const struct dct_op *o = &t->ops[i];
	int np;

	if (o->kind >= DCT_NKINDS) {
		fail(err, errlen, "op %" PRIu64 ": unknown kind %u", i, o->kind);
		return -1;
	}
	if (o->flags & ~kind_flags[o->kind]) {
		fail(err, errlen, "op %" PRIu64 ": flags 0x%x not valid for %s",
		     i, o->flags, kind_names[o->kind]);
		return -1;
	}
	if (o->err < DCT_ERR_UNKNOWN || o->err > DCT_ERRNO_MAX) {
		fail(err, errlen, "op %" PRIu64 ": bad error %d", i, o->err);
		return -1;
	}
	np = dct_kind_paths(o->kind);
	if (np >= 1 && check_path(t, normal, i, o->path, false, "path", err, errlen))
		return -1;
	if (np >= 2 && check_path(t, normal, i, o->path2, o->kind == DCT_SYMLINK,
				  "path2", err, errlen))
		return -1;
	if ((np < 1 && o->path != DCT_NONE) || (np < 2 && o->path2 != DCT_NONE)) {
		fail(err, errlen, "op %" PRIu64 ": %s carries an unused path",
		     i, kind_names[o->kind]);
		return -1;
	}
	if (kind_has_child(o->kind))
		return check_child(t, owner, i, o, err, errlen);
	if (o->child != DCT_NONE) {
		fail(err, errlen, "op %" PRIu64 ": %s carries a child", i,
		     kind_names[o->kind]);
		return -1;
	}
	return 0;
}

static int check_link(const struct dct_trace *t, uint32_t i, uint64_t op,
		      unsigned kind, const char *what, char *err, size_t errlen)
{
	const struct dct_proc *p = &t->procs[i], *pp;

	if (op == DCT_NO_OP)
		return 0;
	if (p->parent < 0) {
		fail(err, errlen, "process %" PRIu32 ": %s without a parent", i, what);
		return -1;
	}
	pp = &t->procs[p->parent];
	if (op < pp->first_op || op - pp->first_op >= pp->nops ||
	    t->ops[op].kind != kind || t->ops[op].child != i) {
		fail(err, errlen, "process %" PRIu32 ": %s %" PRIu64
		     " is not its parent's %s of it", i, what, op, kind_names[kind]);
		return -1;
	}
	return 0;
}

static int check_proc(const struct dct_trace *t, uint32_t i, uint64_t *next,
		      char *err, size_t errlen)
{
	const struct dct_proc *p = &t->procs[i];

	if (p->parent < -1 || (p->parent >= 0 && (uint32_t)p->parent >= i)) {
		fail(err, errlen, "process %" PRIu32 ": parent %" PRId32
		     " is not an earlier process", i, p->parent);
		return -1;
	}
	if (p->first_op != *next || p->nops == 0 || p->nops > t->nops - *next) {
		fail(err, errlen, "process %" PRIu32 ": ops [%" PRIu64 ", +%" PRIu64
		     ") do not continue at %" PRIu64 " within %" PRIu64 " ops",
		     i, p->first_op, p->nops, *next, t->nops);
		return -1;
	}
	*next += p->nops;
	if ((p->parent >= 0) != (p->fork_op != DCT_NO_OP)) {
		fail(err, errlen, "process %" PRIu32 ": fork_op must be set exactly"
		     " when there is a parent", i);
		return -1;
	}
	if (p->wait_op != DCT_NO_OP && p->wait_op <= p->fork_op) {
		fail(err, errlen, "process %" PRIu32 ": reaped before it was forked", i);
		return -1;
	}
	return 0;
}

/* Every process ends with its one EXIT; link records are checked by check_op. */
static int check_proc_ops(const struct dct_trace *t, const uint8_t *normal,
			  uint32_t i, char *err, size_t errlen)
{
	const struct dct_proc *p = &t->procs[i];
	uint64_t end = p->first_op + p->nops;

	for (uint64_t k = p->first_op; k < end; k++) {
		if (check_op(t, normal, i, k, err, errlen))
			return -1;
		if ((t->ops[k].kind == DCT_EXIT) != (k == end - 1)) {
			fail(err, errlen, "process %" PRIu32 ": EXIT must be its last op"
			     " and only there (op %" PRIu64 ")", i, k);
			return -1;
		}
	}
	if (check_link(t, i, p->fork_op, DCT_FORK, "fork_op", err, errlen) ||
	    check_link(t, i, p->wait_op, DCT_WAIT, "wait_op", err, errlen))
		return -1;
	return 0;
}

int dct_validate(const struct dct_trace *t, char *err, size_t errlen)
{
	uint64_t next = 0;
	uint8_t *normal;
	int rc = -1;

	if (t->nprocs > INT32_MAX) {
		fail(err, errlen, "%" PRIu32 " processes: too many", t->nprocs);
		return -1;
	}
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (check_proc(t, i, &next, err, errlen))
			return -1;
	if (next != t->nops) {
		fail(err, errlen, "processes cover %" PRIu64 " of %" PRIu64 " ops",
		     next, t->nops);
		return -1;
	}
	normal = malloc(t->npaths ? t->npaths : 1);
	if (!normal) {
		fail(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < t->npaths; i++)
		normal[i] = path_is_normal(t->paths[i]);
	for (uint32_t i = 0; i < t->nprocs; i++)
		if (check_proc_ops(t, normal, i, err, errlen))
			goto out;
	rc = 0;
out:
	free(normal);
	return rc;
}

/* ---- writing ---- */

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
			fail(err, errlen, "string table does not match path %" PRIu32, i);
			return -1;
		}
		off += n + 1;
	}
	if (off != t->blob_len) {
		fail(err, errlen, "string table has %" PRIu64 " stray bytes",
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
		fail(err, errlen, "write failed: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int dct_write(const char *file, const struct dct_trace *t, char *err, size_t errlen)
{
	FILE *f = fopen(file, "wb");
	int rc;

	if (!f) {
		fail(err, errlen, "%s: %s", file, strerror(errno));
		return -1;
	}
	rc = dct_write_fp(f, t, err, errlen);
	if (fclose(f) != 0 && rc == 0) {
		fail(err, errlen, "%s: %s", file, strerror(errno));
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
		fail(err, errlen, "cannot write the trace to %s: %s", path, strerror(errno));
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
		fail(err, errlen, "cannot write the trace to %s: %s", o->path, why);
		if (reg)
			unlink(o->path);	/* never leave a half-written trace behind */
	}
	return rc;
}

/* ---- reading ---- */

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
		fail(err, errlen, "not a dcbench trace (bad magic)");
		return -1;
	}
	if (len < DCT_HEADER_SIZE) {
		fail(err, errlen, "truncated trace: %zu bytes, shorter than the"
		     " %d-byte header", len, DCT_HEADER_SIZE);
		return -1;
	}
	v = get32(b + H_VERSION);
	if (v != DCT_VERSION) {
		fail(err, errlen, "unsupported trace version %" PRIu32
		     " (this dcbench reads version %d)", v, DCT_VERSION);
		return -1;
	}
	if (get32(b + H_HSIZE) != DCT_HEADER_SIZE ||
	    get32(b + H_PROCSIZE) != DCT_PROC_SIZE ||
	    get32(b + H_OPSIZE) != DCT_OP_SIZE || get32(b + H_RESERVED) != 0) {
		fail(err, errlen, "corrupt trace header (record sizes)");
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
		fail(err, errlen, "truncated trace: header says %" PRIu64
		     " bytes, file has %zu", fsize, len);
		return -1;
	}
	if (fsize < len) {
		fail(err, errlen, "corrupt trace: %zu bytes after the %" PRIu64
		     " the header announces", len - (size_t)fsize, fsize);
		return -1;
	}
	room = fsize - DCT_HEADER_SIZE;
	if (strtab > room || nprocs * DCT_PROC_SIZE > room - strtab ||
	    nops > (room - strtab - nprocs * DCT_PROC_SIZE) / DCT_OP_SIZE ||
	    nops * DCT_OP_SIZE != room - strtab - nprocs * DCT_PROC_SIZE) {
		fail(err, errlen, "corrupt trace header: counts do not add up to"
		     " the file size");
		return -1;
	}
	if (get32(b + H_NPATHS) > strtab) {
		fail(err, errlen, "corrupt trace header: more paths than string bytes");
		return -1;
	}
	if (lzma_crc32(b + DCT_HEADER_SIZE, room, 0) != get32(b + H_CRC)) {
		fail(err, errlen, "corrupt trace: checksum mismatch");
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
		fail(err, errlen, "out of memory for %" PRIu32 " paths", t->npaths);
		return -1;
	}
	memcpy(t->blob, s, t->blob_len);
	for (uint32_t i = 0; i < t->npaths; i++) {
		const char *p = t->blob + off;
		const char *nul = memchr(p, '\0', t->blob_len - off);

		if (!nul) {
			fail(err, errlen, "corrupt trace: string table ends inside"
			     " path %" PRIu32, i);
			return -1;
		}
		if ((size_t)(nul - p) > DCT_PATH_MAX) {
			fail(err, errlen, "corrupt trace: path %" PRIu32 " is %zu bytes,"
			     " over the %d-byte limit", i, (size_t)(nul - p), DCT_PATH_MAX);
			return -1;
		}
		t->paths[i] = p;
		off += (uint64_t)(nul - p) + 1;
	}
	if (off != t->blob_len) {
		fail(err, errlen, "corrupt trace: %" PRIu64 " bytes after the last"
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
		fail(err, errlen, "out of memory for %" PRIu64 " ops", t->nops);
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
		fail(err, errlen, "out of memory");
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
		fail(err, errlen, "%s: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > SIZE_MAX - 1) {
		fail(err, errlen, "%s: not a regular file", file);
		goto out;
	}
	*len = (size_t)st.st_size;
	buf = malloc(*len ? *len : 1);
	if (!buf) {
		fail(err, errlen, "%s: out of memory for %zu bytes", file, *len);
		goto out;
	}
	if (fread(buf, 1, *len, f) != *len) {
		fail(err, errlen, "%s: read failed", file);
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
		fail(err, errlen, "%s: %s", file, why);
	free(buf);
	return rc;
}

/* ---- text dump ---- */

/* Quote only paths a reader could split wrongly or that hold odd bytes. */
static void dump_str(FILE *f, const char *s)
{
	bool plain = *s != '\0';

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '"' || *p == '\\')
			plain = false;
	if (plain) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p < ' ' || *p >= 0x7f)
			fprintf(f, "\\%03o", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static const char *flag_name(unsigned kind, unsigned bit)
{
	switch (bit) {
	case DCT_F_SLASH: return "slash";
	case DCT_F_SLASH2: return "slash2";
	case DCT_F_NOFOLLOW: return "nofollow";
	}
	if (kind == DCT_OPEN)
		switch (bit) {
		case DCT_F_CREAT: return "creat";
		case DCT_F_EXCL: return "excl";
		case DCT_F_DIRECTORY: return "directory";
		case DCT_F_TRUNC: return "trunc";
		}
	if (kind == DCT_RENAME)
		switch (bit) {
		case DCT_F_NOREPLACE: return "noreplace";
		case DCT_F_EXCHANGE: return "exchange";
		case DCT_F_WHITEOUT: return "whiteout";
		}
	if (kind == DCT_FORK)
		return bit == DCT_F_THREAD ? "thread" : "vfork";
	return "implied";
}

static void dump_op(FILE *f, const struct dct_trace *t, const struct dct_proc *p,
		    const struct dct_op *o)
{
	const char *en = dct_errno_name(o->err);
	int np = dct_kind_paths(o->kind);

	fprintf(f, "%" PRIu32 " %s", p->pid, dct_kind_name(o->kind));
	for (unsigned bit = 1; bit < 0x100; bit <<= 1)
		if (o->flags & bit)
			fprintf(f, "+%s", flag_name(o->kind, bit));
	if (o->err == 0)
		fputs(" 0", f);
	else if (o->err == DCT_ERR_UNKNOWN)
		fputs(" ?", f);
	else if (en)
		fprintf(f, " %s", en);
	else
		fprintf(f, " E%d", o->err);
	if (np >= 1) {
		fputc(' ', f);
		dump_str(f, t->paths[o->path]);
	}
	if (np >= 2) {
		fputc(' ', f);
		dump_str(f, t->paths[o->path2]);
	}
	if (kind_has_child(o->kind))
		fprintf(f, " %" PRIu32, t->procs[o->child].pid);
	fputc('\n', f);
}

void dct_dump(FILE *f, const struct dct_trace *t)
{
	for (uint32_t i = 0; i < t->nprocs; i++) {
		const struct dct_proc *p = &t->procs[i];

		for (uint64_t k = 0; k < p->nops; k++)
			dump_op(f, t, p, &t->ops[p->first_op + k]);
	}
}
