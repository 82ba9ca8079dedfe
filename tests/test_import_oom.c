// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_import_oom.c - the strace importer when memory runs out.
 *
 * This program is linked with malloc, calloc, realloc and strdup
 * wrapped (-Wl,--wrap=..., Makefile), so that every allocation the
 * importer and the code it uses make can be failed.  For each log in
 * tests/data/strace (or DC_TEST_DATA/strace, or argv[1]/strace) it
 * counts the calls one import makes, then imports the log again once
 * per call, failing that call alone.  Each such import must end in one
 * of two ways: an error that says "out of memory", or the same trace as
 * the import that failed nothing.  The trace file that import makes is
 * then read back (dct_read_mem) in the same way.  The ASan build adds
 * what no check here can see: no double free, no leak, no read of freed
 * memory.  Allocations the C library makes for its own use
 * (stdio's buffers) are not failed.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/import.h"
#include "trace/trace.h"
#include "harness.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

/* Single-threaded: the importer makes no threads. */
static bool armed;		/* count (and maybe fail) the calls */
static unsigned long calls;	/* made while armed */
static unsigned long fail_at;	/* the call to fail, counting from 1; 0: none */
static bool failed_one;		/* fail_at was reached */

static bool fail_now(void)
{
	if (!armed)
		return false;
	if (++calls != fail_at)
		return false;
	failed_one = true;
	return true;
}

void *__wrap_malloc(size_t n)
{
	return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_now() ? NULL : __real_realloc(p, n);
}

/* strdup's own malloc is inside the C library, out of the wrap's reach */
char *__wrap_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = fail_now() ? NULL : __real_malloc(n);

	return d ? memcpy(d, s, n) : NULL;
}

/* The log's lines (each without its '\n'), read whole. */
struct log {
	char *text;
	size_t *start, *len, n;
};

/* Split l->text (size bytes, with room for one more) into lines. */
static bool log_split(struct log *l, size_t size)
{
	size_t i, n = 0;

	l->text[size] = '\n';
	for (i = 0; i < size; i++)
		n += l->text[i] == '\n';
	l->start = calloc(n + 1, sizeof(*l->start));
	l->len = calloc(n + 1, sizeof(*l->len));
	if (!l->start || !l->len)
		return false;
	for (i = 0; i < size; ) {
		char *nl = memchr(l->text + i, '\n', size + 1 - i);
		size_t e = (size_t)(nl - l->text);

		l->start[l->n] = i;
		l->len[l->n++] = e - i;
		i = e + 1;
	}
	return true;
}

static bool log_read(const char *path, struct log *l)
{
	FILE *f = fopen(path, "r");
	long size;

	memset(l, 0, sizeof(*l));
	if (!f)
		return false;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(l->text = malloc((size_t)size + 1)) ||
	    fread(l->text, 1, (size_t)size, f) != (size_t)size) {
		fclose(f);
		return false;
	}
	fclose(f);
	return log_split(l, (size_t)size);
}

static bool log_of(const char *text, struct log *l)
{
	size_t size = strlen(text);

	memset(l, 0, sizeof(*l));
	if (!(l->text = malloc(size + 1)))
		return false;
	memcpy(l->text, text, size);
	return log_split(l, size);
}

static void log_free(struct log *l)
{
	free(l->text);
	free(l->start);
	free(l->len);
}

/* The trace as text, or NULL. */
static char *dump(const struct dct_trace *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	dct_dump(f, t);
	fclose(f);
	return buf;
}

/*
 * One import of l, failing call fail (0: none), armed around the
 * importer's own work only.  0 with *text the trace's dump, or -1 with
 * err filled.
 */
static int import_once(const struct log *l, unsigned long fail, char **text,
		       char *err, size_t errlen)
{
	struct dct_importer *im;
	struct dct_trace *t = NULL;
	int rc = -1;

	*text = NULL;
	calls = 0;
	fail_at = fail;
	failed_one = false;
	armed = true;
	im = dct_importer_new();
	if (im) {
		for (size_t i = 0; i < l->n; i++)
			dct_importer_line(im, l->text + l->start[i], l->len[i]);
		rc = dct_importer_finish(im, &t, NULL, err, errlen);
	} else {
		snprintf(err, errlen, "out of memory");
	}
	armed = false;
	if (rc == 0) {
		*text = dump(t);
		if (!*text)
			rc = -1, snprintf(err, errlen, "cannot dump the trace");
	}
	dct_free(t);
	dct_importer_free(im);
	return rc;
}

/* What one import or read with call n of total failed ended in (rc,
 * got or err) against want, the answer with none failed: counted in
 * *oom or *same, and a failure said with what (kind). */
static void judge(const char *name, const char *kind, unsigned long n,
		  unsigned long total, int rc, const char *got, const char *want,
		  const char *err, unsigned long *oom, unsigned long *same)
{
	CHECK(failed_one);
	if (rc == 0) {
		++*same;
		if (strcmp(got, want)) {
			CHECK(!"a failed allocation changed the trace");
			fprintf(stderr, "test_import_oom: %s: %s call %lu of %lu "
				"failed, and the trace differs\n", name, kind, n, total);
		}
	} else {
		++*oom;
		if (!strstr(err, "out of memory")) {
			CHECK(!"a failed allocation, said as another error");
			fprintf(stderr, "test_import_oom: %s: %s call %lu of %lu "
				"failed: \"%s\"\n", name, kind, n, total, err);
		}
	}
}

/* One read of the trace file image img, failing call fail: as
 * import_once. */
static int read_once(const char *img, size_t len, unsigned long fail, char **text,
		     char *err, size_t errlen)
{
	struct dct_trace *t = NULL;
	int rc;

	*text = NULL;
	calls = 0;
	fail_at = fail;
	failed_one = false;
	armed = true;
	rc = dct_read_mem(img, len, &t, err, errlen);
	armed = false;
	if (rc == 0) {
		*text = dump(t);
		if (!*text)
			rc = -1, snprintf(err, errlen, "cannot dump the trace");
	}
	dct_free(t);
	return rc;
}

/* The trace file image l imports to (unarmed), or NULL. */
static char *image_of(const struct log *l, size_t *len)
{
	struct dct_importer *im = dct_importer_new();
	struct dct_trace *t = NULL;
	char err[256], *img = NULL;
	FILE *f;

	if (!im)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		dct_importer_line(im, l->text + l->start[i], l->len[i]);
	if (dct_importer_finish(im, &t, NULL, err, sizeof(err)) == 0 &&
	    (f = open_memstream(&img, len))) {
		if (dct_write_fp(f, t, err, sizeof(err)))
			*len = 0;
		fclose(f);
	}
	dct_importer_free(im);
	dct_free(t);
	if (img && !*len) {
		free(img);
		img = NULL;
	}
	return img;
}

/* The reader of the trace file that l imports to, each of its calls
 * failed in turn, as the importer's in sweep(). */
static void sweep_read(const char *name, const struct log *l)
{
	char err[256], *want = NULL, *got, *img;
	unsigned long total, n, oom = 0, same = 0;
	size_t len = 0;

	img = image_of(l, &len);
	CHECK(img != NULL);
	if (!img)
		return;
	CHECK_EQ(read_once(img, len, 0, &want, err, sizeof(err)), 0);
	total = calls;
	CHECK(!failed_one && total > 0);
	for (n = 1; want && n <= total; n++) {
		int rc = read_once(img, len, n, &got, err, sizeof(err));

		judge(name, "read", n, total, rc, got, want, err, &oom, &same);
		free(got);
	}
	printf("test_import_oom: %s: its trace read back, %lu calls failed one at "
	       "a time: %lu out of memory, %lu the same trace\n", name, total, oom,
	       same);
	free(want);
	free(img);
}

static void sweep(const char *name, const struct log *l)
{
	char err[256], *want = NULL, *got;
	unsigned long total, n, oom = 0, same = 0;

	CHECK_EQ(import_once(l, 0, &want, err, sizeof(err)), 0);
	total = calls;
	CHECK(!failed_one && total > 0);
	for (n = 1; want && n <= total; n++) {
		int rc = import_once(l, n, &got, err, sizeof(err));

		judge(name, "import", n, total, rc, got, want, err, &oom, &same);
		free(got);
	}
	printf("test_import_oom: %s: %lu calls failed one at a time: %lu out of "
	       "memory, %lu the same trace\n", name, total, oom, same);
	if (want)
		sweep_read(name, l);
	free(want);
}

static void sweep_file(const char *dir, const char *name)
{
	char path[2048];
	struct log l;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (log_read(path, &l)) {
		sweep(name, &l);
	} else {
		CHECK(!"cannot read a log");
		fprintf(stderr, "test_import_oom: %s: cannot read\n", path);
	}
	log_free(&l);
}

/* A process whose working directory the log never shows changes to a
 * relative one: the chdir waits among the process's pending paths, in a
 * list the importer grows. */
static const char pending_chdir[] =
	"100 chdir(\"sub\") = 0\n"
	"100 openat(AT_FDCWD, \"a.c\", O_RDONLY) = 3</src/sub/a.c>\n"
	"100 chdir(\"..\") = 0\n"
	"100 openat(AT_FDCWD, \"b.c\", O_RDONLY) = 3</src/b.c>\n"
	"100 exit_group(0) = ?\n"
	"100 +++ exited with 0 +++\n";

static int is_log(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && strcmp(d->d_name + n - 4, ".txt") == 0;
}

int main(int argc, char **argv)
{
	const char *data = argc > 1 ? argv[1] : getenv("DC_TEST_DATA");
	struct dirent **list;
	char dir[1024];
	struct log l;
	int n;

	snprintf(dir, sizeof(dir), "%s/strace", data ? data : "tests/data");
	n = scandir(dir, &list, is_log, alphasort);
	CHECK(n > 0);
	if (n <= 0) {
		fprintf(stderr, "test_import_oom: %s: no logs\n", dir);
		return h_done("test_import_oom");
	}
	if (log_of(pending_chdir, &l))
		sweep("pending chdir", &l);
	else
		CHECK(!"no memory for a log");
	log_free(&l);
	for (int i = 0; i < n; i++) {
		sweep_file(dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return h_done("test_import_oom");
}
