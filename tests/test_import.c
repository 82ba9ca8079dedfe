/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test_import.c - the strace importer and the trace file format.
 *
 *	test_import [DATA_DIR]		(else $DC_TEST_DATA, else "tests/data")
 *
 * Each DATA_DIR/strace/NAME.txt is imported, read back, dumped and compared
 * with NAME.expected: the dump, then the summary's counters on one line.
 * Then logs no trace can be made of (empty, no strace, strace without -f,
 * mostly malformed), which the importer must refuse, saying why; damaged
 * traces, which must all be refused with a message; and a trace built by
 * hand from docs/trace-format.md, which must be accepted.
 */
#include <dirent.h>
#include <errno.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/import.h"
#include "trace/le.h"
#include "trace/trace.h"

static int checks, failed;

#define CHECK(cond) check((cond), __FILE__, __LINE__, "%s", #cond)
#define CHECKF(cond, ...) check((cond), __FILE__, __LINE__, __VA_ARGS__)

static bool check(bool ok, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static bool check(bool ok, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (ok)
		return true;
	failed++;
	fprintf(stderr, "%s:%d: check failed: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return false;
}

static char tmpdir[] = "/tmp/test_import.XXXXXX";

static char *tmp_path(const char *name)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
		*len = fread(buf, 1, (size_t)n, f);
		buf[*len] = '\0';
	}
	fclose(f);
	return buf;
}

static bool write_all(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");
	bool ok = f && fwrite(buf, 1, len, f) == len;

	if (f && fclose(f) != 0)
		ok = false;
	return ok;
}

/* The text a snippet's .expected holds: dump, then the counters. */
static char *dump_text(const struct dct_trace *t, const struct dct_import_summary *s)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	dct_dump(f, t);
	if (s)
		dct_import_summary_brief(f, s);
	fclose(f);
	return text;
}

static void report_diff(const char *name, const char *want, const char *got)
{
	int line = 1;

	while (*want && *want == *got) {
		line += *want == '\n';
		want++, got++;
	}
	while (line > 1 && want[-1] != '\n')
		want--, got--;
	fprintf(stderr, "%s: line %d differs\n  expected: %.*s\n  got:      %.*s\n",
		name, line, (int)strcspn(want, "\n"), want, (int)strcspn(got, "\n"), got);
}

/* Import log, read the trace back, return the dump text (NULL on failure). */
static char *import_and_dump(const char *log, const char *trace)
{
	struct dct_import_summary sum;
	struct dct_trace *t = NULL;
	char err[512] = "", *text = NULL;

	if (!CHECKF(dct_import(log, trace, &sum, NULL, err, sizeof(err)) == 0,
		    "import %s: %s", log, err))
		return NULL;
	if (CHECKF(dct_read(trace, &t, err, sizeof(err)) == 0, "read %s: %s", trace, err))
		text = dump_text(t, &sum);
	dct_free(t);
	return text;
}

/* The writer is deterministic: writing what we read gives the same bytes. */
static void check_rewrite(const char *trace)
{
	struct dct_trace *t = NULL;
	unsigned char *file;
	char *mem = NULL, err[256];
	size_t flen = 0, mlen = 0;
	FILE *f;

	file = read_all(trace, &flen);
	if (!CHECK(file) || !CHECK(dct_read(trace, &t, err, sizeof(err)) == 0)) {
		free(file);
		return;
	}
	f = open_memstream(&mem, &mlen);
	CHECK(f && dct_write_fp(f, t, err, sizeof(err)) == 0);
	if (f)
		fclose(f);
	CHECKF(mlen == flen && memcmp(mem, file, flen) == 0, "%s: rewrite differs", trace);
	free(mem);
	free(file);
	dct_free(t);
}

static void test_snippet(const char *dir, const char *name)
{
	char log[2048], exp[2048], *got, *trace = tmp_path("snippet.trace");
	unsigned char *want;
	size_t wlen = 0;

	snprintf(log, sizeof(log), "%s/%s", dir, name);
	snprintf(exp, sizeof(exp), "%s/%.*s.expected", dir,
		 (int)(strlen(name) - 4), name);
	want = read_all(exp, &wlen);
	if (!CHECKF(want != NULL, "%s: cannot read", exp))
		return;
	got = import_and_dump(log, trace);
	if (got && !CHECKF(strcmp((char *)want, got) == 0, "%s: dump differs", name))
		report_diff(name, (char *)want, got);
	if (got)
		check_rewrite(trace);
	free(got);
	free(want);
}

static int is_snippet(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".txt") == 0;
}

static int test_snippets(const char *dir)
{
	struct dirent **list;
	int n = scandir(dir, &list, is_snippet, alphasort);

	if (!CHECKF(n > 0, "%s: no snippets (%s)", dir, n < 0 ? strerror(errno) : "none"))
		return 0;
	for (int i = 0; i < n; i++) {
		test_snippet(dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return n;
}

/* xz is told by its magic bytes, not the file name. */
static void test_xz(const char *dir)
{
	char log[2048], *plain, *packed;
	unsigned char *text, *xz;
	size_t len = 0, xlen = 0;

	snprintf(log, sizeof(log), "%s/fork.txt", dir);
	text = read_all(log, &len);
	if (!CHECK(text))
		return;
	xz = malloc(len + 1024);
	CHECK(xz && lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, text, len,
					    xz, &xlen, len + 1024) == LZMA_OK);
	CHECK(write_all(tmp_path("fork.log"), xz, xlen));
	plain = import_and_dump(log, tmp_path("a.trace"));
	packed = import_and_dump(tmp_path("fork.log"), tmp_path("b.trace"));
	CHECK(plain && packed && strcmp(plain, packed) == 0);
	/* a damaged xz stream is an error, with a message, never a crash */
	if (xlen > 40) {
		struct dct_import_summary s;
		char err[256] = "";

		CHECK(write_all(tmp_path("cut.log"), xz, xlen - 20));
		CHECK(dct_import(tmp_path("cut.log"), tmp_path("c.trace"), &s, NULL,
				 err, sizeof(err)) == -1 && err[0]);
		CHECK(access(tmp_path("c.trace"), F_OK) != 0);
	}
	free(plain);
	free(packed);
	free(xz);
	free(text);
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Line handling: CRLF, a line over the 1 MiB limit. */
static void test_odd_logs(void)
{
	static const char head[] = "1 stat(\"/crlf\", 0x1) = 0\r\n1 stat(\"/long", tail[] =
		"\", 0x1) = 0\n1 stat(\"/after\", 0x1) = 0\n";
	size_t big = (1u << 20) + 100, n = 0;
	char *log = malloc(sizeof(head) + big + sizeof(tail)), *got;

	if (!CHECK(log))
		return;
	memcpy(log, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	memset(log + n, 'x', big);
	n += big;
	memcpy(log + n, tail, sizeof(tail) - 1);
	n += sizeof(tail) - 1;
	CHECK(write_all(tmp_path("odd.log"), log, n));
	got = import_and_dump(tmp_path("odd.log"), tmp_path("odd.trace"));
	CHECK(starts_with(got, "1 STAT 0 /crlf\n1 STAT 0 /after\n1 EXIT+implied 0\n"
			  "# procs=1 ops=3 paths=2 malformed=1 "));
	free(got);
	free(log);
}

/* Import text as a log; true if refused with a message holding why. */
static bool refused(const char *what, const void *text, size_t len, const char *why,
		    struct dct_import_summary *s)
{
	char err[1024] = "";
	int rc;

	memset(s, 0, sizeof(*s));
	if (!CHECKF(write_all(tmp_path("bad.log"), text, len), "%s: cannot write", what))
		return false;
	rc = dct_import(tmp_path("bad.log"), tmp_path("bad.trace"), s, NULL, err,
			sizeof(err));
	if (rc == 0) {
		unlink(tmp_path("bad.trace"));
		return CHECKF(false, "%s: imported, want refused (%s)", what, why);
	}
	return CHECKF(strstr(err, why) != NULL, "%s: message '%s' lacks '%s'", what,
		      err, why) &&
	       CHECKF(access(tmp_path("bad.trace"), F_OK) != 0,
		      "%s: refused, yet a trace was left", what);
}

static bool accepted(const char *what, const char *text, struct dct_import_summary *s)
{
	char err[1024] = "";

	memset(s, 0, sizeof(*s));
	return CHECKF(write_all(tmp_path("ok.log"), text, strlen(text)), "%s", what) &&
	       CHECKF(dct_import(tmp_path("ok.log"), tmp_path("ok.trace"), s, NULL, err,
				 sizeof(err)) == 0, "%s: refused: %s", what, err);
}

/*
 * Logs that make no trace worth replaying are refused with the reason:
 * empty, no strace log at all, strace without -f, mostly malformed, no
 * lookups.  A failed import leaves no trace and spares an old one.
 */
static void test_unusable(void)
{
	static const char services[] =
		"# Network services, Internet style\n\n"
		"tcpmux\t\t1/tcp\t\t\t\t# TCP port service multiplexer\n"
		"echo\t\t7/tcp\nhttp\t\t80/tcp\t\twww\t\t# WorldWideWeb HTTP\n";
	static const char nof[] =
		"execve(\"/bin/ls\", [\"ls\"], 0x7ffc /* 3 vars */) = 0\n"
		"openat(AT_FDCWD</tmp>, \"/etc/ld.so.cache\", O_RDONLY) = 3</etc/ld.so.cache>\n"
		"stat(\"/x\", 0x1)      = -1 ENOENT (No such file or directory)\n"
		"--- SIGCHLD {si_signo=SIGCHLD} ---\n"
		"+++ exited with 0 +++\n";
	static const char stderr_log[] =	/* a lone process has no prefix */
		"stat(\"/first\", 0x1) = 0\n"
		"[pid 7] stat(\"/a\", 0x1) = 0\n[pid  8] stat(\"/b\", 0x1) = 0\n";
	static const char half[] = "1 stat(\"/a\", 0x1) = 0\n1 stat(\"/b\", 0x1) = 0\n"
				   "x\ny\n\n\n";
	static const char most[] = "1 stat(\"/a\", 0x1) = 0\n1 stat(\"/b\", 0x1) = 0\n"
				   "x\ny\nz\n";
	unsigned char junk[4096];
	struct dct_import_summary s;
	char err[1024] = "";
	unsigned char *old;
	size_t len = 0;

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)(i * 131 + 7);
	refused("empty", "", 0, "empty log", &s);
	refused("blank lines", "\n  \n\t\n", 5, "empty log: 3 lines, all blank", &s);
	refused("binary junk", junk, sizeof(junk), "not an strace log", &s);
	refused("/etc/services", services, strlen(services), "not an strace log", &s);
	if (refused("strace without -f", nof, strlen(nof), "without -f", &s))
		CHECK(s.unprefixed == 5 && s.malformed == 5 && s.processes == 0);
	if (refused("strace -f to stderr", stderr_log, strlen(stderr_log),
		    "1 of 3 lines have no process id", &s))
		CHECK(s.unprefixed == 1 && s.processes == 2);
	if (accepted("half malformed", half, &s))
		CHECK(s.malformed == 2 && s.blank == 2);
	refused("more than half malformed", most, strlen(most),
		"3 of 5 lines are malformed (the first is line 3); more than 50%", &s);
	refused("no path lookup", "1 getpid() = 1\n", 15, "no path lookups", &s);

	/* a refused import spares the trace that was there */
	CHECK(write_all(tmp_path("bad.trace"), "old", 3));
	CHECK(dct_import(tmp_path("bad.log"), tmp_path("bad.trace"), NULL, NULL, err,
			 sizeof(err)) == -1);
	old = read_all(tmp_path("bad.trace"), &len);
	CHECK(old && len == 3 && !memcmp(old, "old", 3));
	free(old);
	unlink(tmp_path("bad.trace"));

	/* what cannot be read or written says so, and is named */
	CHECK(dct_import(tmpdir, tmp_path("x.trace"), NULL, NULL, err, sizeof(err)) == -1 &&
	      strstr(err, "is a directory"));
	CHECK(dct_import(tmp_path("ok.log"), tmpdir, NULL, NULL, err, sizeof(err)) == -1 &&
	      strstr(err, "cannot write the trace to") && strstr(err, "directory"));
	CHECK(dct_import(tmp_path("ok.log"), tmp_path("none/x.trace"), NULL, NULL, err,
			 sizeof(err)) == -1 && strstr(err, "none/x.trace") &&
	      strstr(err, "No such file"));
	CHECK(dct_import_check_output(tmp_path("none/x.trace"), err, sizeof(err)) == -1);
	CHECK(dct_import_check_output(tmp_path("probe.trace"), err, sizeof(err)) == 0 &&
	      access(tmp_path("probe.trace"), F_OK) != 0);
	CHECK(dct_import(tmp_path("ok.log"), "/dev/null", NULL, NULL, err, sizeof(err)) == 0);
}

/* ---- damaged traces ---- */

/* After a deliberate edit, make the CRC right again to reach deeper checks. */
static void fix_crc(unsigned char *b, size_t len)
{
	put32(b + 56, lzma_crc32(b + 64, len - 64, 0));
}

static bool rejected(const unsigned char *b, size_t len, const char *want_in_msg)
{
	struct dct_trace *t = (struct dct_trace *)1;
	char err[256] = "";
	int rc = dct_read_mem(b, len, &t, err, sizeof(err));

	if (rc == 0)
		dct_free(t);
	return rc == -1 && t == NULL && err[0] &&
	       (!want_in_msg || strstr(err, want_in_msg));
}

static void test_truncations(const unsigned char *img, size_t len)
{
	int bad = 0;

	for (size_t cut = 0; cut < len; cut++)
		bad += !rejected(img, cut, NULL);
	CHECKF(bad == 0, "%d truncations accepted", bad);
	CHECK(rejected(img, 7, "magic"));
	CHECK(rejected(img, 63, "truncated"));
	CHECK(rejected(img, len - 1, "truncated"));
}

static void test_flips(const unsigned char *img, size_t len)
{
	unsigned char *b = malloc(len);
	int bad = 0;

	for (size_t i = 0; b && i < len; i++) {
		memcpy(b, img, len);
		b[i] ^= 0x20;
		bad += !rejected(b, len, NULL);
	}
	CHECKF(bad == 0, "%d single-byte changes accepted", bad);
	free(b);
}

/* Offsets from docs/trace-format.md. */
#define OFF_VERSION	8
#define OFF_NPROCS	16
#define OFF_NPATHS	20
#define OFF_NOPS	24
#define OFF_STRTAB	32

struct layout {
	size_t procs, ops;	/* where the records start */
	uint32_t nprocs;
};

static struct layout layout_of(const unsigned char *b)
{
	struct layout l;

	l.nprocs = get32(b + OFF_NPROCS);
	l.procs = 64 + (size_t)get32(b + OFF_STRTAB);	/* string table < 4 GB here */
	l.ops = l.procs + (size_t)l.nprocs * 40;
	return l;
}

/* Edit one field at off (size 1, 4 or 8), fix the CRC, expect refusal. */
static bool edit_rejected(const unsigned char *img, size_t len, size_t off,
			  int size, uint64_t v, const char *msg)
{
	unsigned char *b = malloc(len);
	bool r;

	if (!b)
		return false;
	memcpy(b, img, len);
	if (size == 1)
		b[off] = (unsigned char)v;
	else if (size == 4)
		put32(b + off, (uint32_t)v);
	else
		put64(b + off, v);
	fix_crc(b, len);
	r = rejected(b, len, msg);
	free(b);
	return r;
}

static void test_semantic(const unsigned char *img, size_t len)
{
	struct layout l = layout_of(img);
	uint32_t npaths = get32(img + OFF_NPATHS);

	CHECK(edit_rejected(img, len, 0, 1, 'X', "magic"));
	CHECK(edit_rejected(img, len, OFF_VERSION, 4, 2, "version 2"));
	CHECK(edit_rejected(img, len, OFF_VERSION, 4, 0, "version"));
	CHECK(edit_rejected(img, len, OFF_NOPS, 8, UINT64_MAX / 2, "add up"));
	CHECK(edit_rejected(img, len, OFF_NPROCS, 4, UINT32_MAX, "add up"));
	CHECK(edit_rejected(img, len, OFF_NPATHS, 4, npaths + 1, NULL));
	CHECK(edit_rejected(img, len, OFF_STRTAB, 8, UINT64_MAX, "add up"));
	/* records: process 1's parent is itself; first_op skips; op kinds */
	CHECK(edit_rejected(img, len, l.procs + 40 + 4, 4, 1, "parent"));
	CHECK(edit_rejected(img, len, l.procs + 8, 8, 1, "ops"));
	CHECK(edit_rejected(img, len, l.procs + 24, 8, 0, "fork_op"));
	CHECK(edit_rejected(img, len, l.ops, 1, DCT_NKINDS, "unknown kind"));
	CHECK(edit_rejected(img, len, l.ops + 1, 1, 0x80, "flags"));
	CHECK(edit_rejected(img, len, l.ops + 3, 1, 0x80, "error"));
	CHECK(edit_rejected(img, len, l.ops + 3, 1, 0x10, "error"));
	CHECK(edit_rejected(img, len, l.ops + 4, 4, npaths, "out of range"));
	CHECK(edit_rejected(img, len, l.ops + 12, 4, 0, "child"));
}

/* Corruption of a real trace: the fork snippet, several processes. */
static void test_corrupt(const char *dir)
{
	char log[2048], err[256];
	struct dct_import_summary s;
	unsigned char *img;
	size_t len = 0;

	snprintf(log, sizeof(log), "%s/fork.txt", dir);
	if (!CHECKF(dct_import(log, tmp_path("c.trace"), &s, NULL, err, sizeof(err)) == 0,
		    "%s", err))
		return;
	img = read_all(tmp_path("c.trace"), &len);
	if (!CHECK(img && len > 64))
		return;
	CHECK(!rejected(img, len, NULL));
	test_truncations(img, len);
	test_flips(img, len);
	test_semantic(img, len);
	free(img);
}

/* ---- a trace built by hand, from the format document ---- */

struct hand {
	unsigned char *b;
	size_t len, cap;
};

static void hand_put(struct hand *h, const void *p, size_t n)
{
	if (h->len + n > h->cap) {
		h->cap = (h->len + n) * 2;
		h->b = realloc(h->b, h->cap);
	}
	memcpy(h->b + h->len, p, n);
	h->len += n;
}

static void hand_u32(struct hand *h, uint32_t v)
{
	unsigned char b[4];

	put32(b, v);
	hand_put(h, b, 4);
}

static void hand_u64(struct hand *h, uint64_t v)
{
	unsigned char b[8];

	put64(b, v);
	hand_put(h, b, 8);
}

static void hand_op(struct hand *h, uint8_t kind, uint8_t flags, int16_t err,
		    uint32_t path, uint32_t path2, uint32_t child, uint32_t line)
{
	unsigned char b[4] = { kind, flags, (unsigned char)(err & 0xff),
			       (unsigned char)((uint16_t)err >> 8) };

	hand_put(h, b, 4);
	hand_u32(h, path);
	hand_u32(h, path2);
	hand_u32(h, child);
	hand_u32(h, line);
}

static void hand_proc(struct hand *h, uint32_t pid, int32_t parent, uint64_t first,
		      uint64_t nops, uint64_t fork_op, uint64_t wait_op)
{
	hand_u32(h, pid);
	hand_u32(h, (uint32_t)parent);
	hand_u64(h, first);
	hand_u64(h, nops);
	hand_u64(h, fork_op);
	hand_u64(h, wait_op);
}

/*
 * Two processes: 10 stats path 0 (len plen), forks 11 and waits for it;
 * 11 renames path 0 to path 1, exits.
 */
static struct hand build_by_hand(size_t plen)
{
	struct hand h = { 0 };
	char *p0 = malloc(plen + 1);
	const char *p1 = "/b";
	uint64_t strtab = plen + 1 + strlen(p1) + 1;

	memset(p0, 'a', plen);
	p0[0] = '/';
	p0[plen] = '\0';
	hand_put(&h, "DCTRACE", 8);
	hand_u32(&h, 1);
	hand_u32(&h, 64);
	hand_u32(&h, 2);		/* nprocs */
	hand_u32(&h, 2);		/* npaths */
	hand_u64(&h, 6);		/* nops */
	hand_u64(&h, strtab);
	hand_u32(&h, 40);
	hand_u32(&h, 20);
	hand_u64(&h, 64 + strtab + 2 * 40 + 6 * 20);
	hand_u32(&h, 0);		/* CRC, fixed below */
	hand_u32(&h, 0);
	hand_put(&h, p0, plen + 1);
	hand_put(&h, p1, strlen(p1) + 1);
	hand_proc(&h, 10, -1, 0, 4, UINT64_MAX, UINT64_MAX);
	hand_proc(&h, 11, 0, 4, 2, 1, 2);
	hand_op(&h, DCT_STAT, 0, 2, 0, UINT32_MAX, UINT32_MAX, 1);
	hand_op(&h, DCT_FORK, DCT_F_VFORK, 0, UINT32_MAX, UINT32_MAX, 1, 2);
	hand_op(&h, DCT_WAIT, 0, 0, UINT32_MAX, UINT32_MAX, 1, 5);
	hand_op(&h, DCT_EXIT, 0, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, 6);
	hand_op(&h, DCT_RENAME, DCT_F_NOREPLACE, 0, 0, 1, UINT32_MAX, 3);
	hand_op(&h, DCT_EXIT, DCT_F_IMPLIED, 0, UINT32_MAX, UINT32_MAX, UINT32_MAX, 4);
	fix_crc(h.b, h.len);
	free(p0);
	return h;
}

static void test_by_hand(void)
{
	struct hand h = build_by_hand(10);
	struct dct_trace *t = NULL;
	char err[256] = "", *text;

	CHECKF(dct_read_mem(h.b, h.len, &t, err, sizeof(err)) == 0, "%s", err);
	if (t) {
		text = dump_text(t, NULL);
		CHECK(text && strcmp(text, "10 STAT ENOENT /aaaaaaaaa\n10 FORK+vfork 0 11\n"
				     "10 WAIT 0 11\n10 EXIT 0\n"
				     "11 RENAME+noreplace 0 /aaaaaaaaa /b\n"
				     "11 EXIT+implied 0\n") == 0);
		CHECK(t->procs[1].parent == 0 && t->procs[1].fork_op == 1 &&
		      t->procs[1].wait_op == 2 && t->ops[4].line == 3);
		free(text);
		dct_free(t);
	}
	free(h.b);
	/* paths up to 4096 bytes are fine, one more is refused */
	h = build_by_hand(DCT_PATH_MAX);
	CHECK(!rejected(h.b, h.len, NULL));
	free(h.b);
	h = build_by_hand(DCT_PATH_MAX + 1);
	CHECK(rejected(h.b, h.len, "4096"));
	free(h.b);
}

/* ---- the writer refuses what the reader would ---- */

static void test_writer(void)
{
	const char *paths[1] = { "/x" };
	char blob[] = "/x";
	struct dct_proc proc = { 1, -1, 0, 2, DCT_NO_OP, DCT_NO_OP };
	struct dct_op ops[2] = {
		{ DCT_STAT, 0, 0, 0, DCT_NONE, DCT_NONE, 1 },
		{ DCT_EXIT, 0, 0, DCT_NONE, DCT_NONE, DCT_NONE, 2 },
	};
	struct dct_trace t = { 1, 1, 2, &proc, ops, paths, blob, 3 };
	char err[256] = "", *mem = NULL;
	size_t mlen = 0;
	FILE *f = open_memstream(&mem, &mlen);

	CHECK(f && dct_write_fp(f, &t, err, sizeof(err)) == 0);
	ops[0].path = 1;
	CHECK(dct_write_fp(f, &t, err, sizeof(err)) == -1 && strstr(err, "range"));
	ops[0].path = 0;
	ops[1].kind = DCT_STAT;
	ops[1].path = 0;
	CHECK(dct_write_fp(f, &t, err, sizeof(err)) == -1 && strstr(err, "EXIT"));
	if (f)
		fclose(f);
	free(mem);
	CHECK(dct_read(tmp_path("missing.trace"), (struct dct_trace *[]){ NULL },
		       err, sizeof(err)) == -1 && strstr(err, "missing.trace"));
	CHECK(dct_read(tmpdir, (struct dct_trace *[]){ NULL }, err, sizeof(err)) == -1);
	CHECK(dct_import(tmp_path("missing.log"), tmp_path("x.trace"), NULL, NULL,
			 err, sizeof(err)) == -1 && strstr(err, "missing.log"));
}

/* ---- the parser, directly ---- */

static void test_parser(void)
{
	struct dct_line l;
	struct dct_call c;
	char buf[64];
	static const char call[] =
		"42 openat(AT_FDCWD</a,b>, \"x\\\"y\", O_RDONLY) = -1 ENOENT (No such file)";

	CHECK(dct_parse_line(call, strlen(call), &l) == 0 && l.type == DCT_LINE_CALL &&
	      l.pid == 42 && l.name_len == 6);
	CHECK(dct_parse_call(l.text, l.text_len, &c) == 0 && c.nargs == 3 &&
	      c.ret == DCT_RET_ERR && c.errname.len == 6);
	CHECK(dct_decode_string(c.args[1], buf, sizeof(buf)) == 3 && !strcmp(buf, "x\"y"));
	CHECK(dct_decode_string((struct dct_span){ "\"\\303\\251\\x41\"", 14 },
				buf, sizeof(buf)) == 3 && !strcmp(buf, "\303\251A"));
	CHECK(dct_decode_string((struct dct_span){ "\"abc\"...", 8 }, buf, sizeof(buf)) == -1);
	CHECK(dct_decode_string((struct dct_span){ "\"abcdef\"", 8 }, buf, 4) == -1);
	CHECK(dct_parse_line("7 vfork( <unfinished ...>", 25, &l) == 0 &&
	      l.type == DCT_LINE_UNFINISHED && l.text_len == 2);
	CHECK(dct_parse_line("7 <... vfork resumed>) = 8", 26, &l) == 0 &&
	      l.type == DCT_LINE_RESUMED && l.text_len == 5);
	CHECK(dct_parse_call("( ) = 8", 7, &c) == 0 && c.nargs == 0 && c.value == 8);
	/* -1 with no errno name (a log cut off there): not a success */
	CHECK(dct_parse_call("(AT_FDCWD, \"/x\", O_RDONLY) = -1", 31, &c) == 0 &&
	      c.ret == DCT_RET_UNKNOWN);
	CHECK(dct_parse_call("(AT_FDCWD, \"/x\", O_RDONLY) = -1 2 (No such file)", 48, &c) == 0 &&
	      c.ret == DCT_RET_UNKNOWN);
	CHECK(dct_parse_call("(\"a)\", {x, [y)]}) = 0", 21, &c) == -1);
	CHECK(dct_parse_line("x 1 y", 5, &l) == -1 && l.type == DCT_LINE_MALFORMED);
	CHECK(dct_parse_line("99999999999 stat(\"/\") = 0", 25, &l) == -1);
}

static void cleanup(void)
{
	static const char *names[] = { "snippet.trace", "fork.log", "a.trace", "b.trace",
				       "c.trace", "cut.log", "x.trace", "odd.log",
				       "odd.trace", "bad.log", "bad.trace", "ok.log",
				       "ok.trace" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(tmp_path(names[i]));
	rmdir(tmpdir);
}

int main(int argc, char **argv)
{
	const char *data = argc > 1 ? argv[1] : getenv("DC_TEST_DATA");
	char dir[1024];
	int n;

	snprintf(dir, sizeof(dir), "%s/strace", data ? data : "tests/data");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	n = test_snippets(dir);
	test_xz(dir);
	test_odd_logs();
	test_unusable();
	test_corrupt(dir);
	test_by_hand();
	test_writer();
	test_parser();
	cleanup();
	printf("test_import: %d snippets imported\n", n);
	printf("test_import: %d checks, %d failed\n", checks, failed);
	return failed ? 1 : 0;
}
