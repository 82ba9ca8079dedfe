/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * import.c - strace log -> dcbench trace (import.h): lines in, handed to
 * their process (proc.c, syscalls.c); at the end every process closed and
 * the ops gathered into a trace; and dct_import(), which streams a log
 * file through it (logreader.c) and writes the trace if the log is usable.
 *
 * Only the output grows with the log: the ops, and the string table of
 * distinct paths.  The log itself is never held, not even one process's
 * share of it.
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace/import_internal.h"
#include "common/logreader.h"
#include "trace/util.h"

/* ---- lines ---- */

static void on_unfinished(struct dct_importer *im, const struct dct_line *l)
{
	struct proc *p = im_live_proc(im, l->pid);

	if (!p)
		return;
	p->last_line = im_clamp_line(im->lineno);
	if (p->unf) {
		im_count_malformed(im);	/* the previous one never resumed */
		free(p->unf);
	}
	p->unf = malloc(l->text_len + 1);
	if (!p->unf) {
		im->oom = true;
		return;
	}
	memcpy(p->unf, l->text, l->text_len);
	p->unf[l->text_len] = '\0';
	p->unf_len = l->text_len;
	memcpy(p->unf_name, l->name, l->name_len);
	p->unf_name[l->name_len] = '\0';
	p->unf_line = im_clamp_line(im->lineno);
}

/* Rejoin "<... name resumed>rest" with its unfinished half, then handle it. */
static void on_resumed(struct dct_importer *im, const struct dct_line *l)
{
	struct proc *p = im_find_proc(im, l->pid);
	const char *rest = l->text;
	size_t rlen = l->text_len, n;
	static const char unf[] = " <unfinished ...>";

	if (!p || !p->unf || strlen(p->unf_name) != l->name_len ||
	    memcmp(p->unf_name, l->name, l->name_len) != 0) {
		im_count_malformed(im);
		return;
	}
	/* "<... wait4 resumed> <unfinished ...>) = ?": it died in the call */
	if (rlen >= sizeof(unf) - 1 && memcmp(rest, unf, sizeof(unf) - 1) == 0)
		rest += sizeof(unf) - 1, rlen -= sizeof(unf) - 1;
	n = p->unf_len + rlen;
	if (dct_grow(&im->join, &im->join_cap, n + 1, 1)) {
		im->oom = true;
		return;
	}
	memcpy(im->join, p->unf, p->unf_len);
	memcpy(im->join + p->unf_len, rest, rlen);
	im->join[n] = '\0';
	free(p->unf);
	p->unf = NULL;
	p->last_line = im_clamp_line(im->lineno);
	im_handle_call(im, p, (struct dct_span){ l->name, l->name_len },
		    (struct dct_span){ im->join, n }, p->unf_line, im->lineno);
}

void dct_importer_line(struct dct_importer *im, const char *line, size_t len)
{
	struct dct_line l;
	struct proc *p;

	im->lineno++;
	im->sum.lines++;
	im->sum.bytes += len + 1;
	if (im->oom)
		return;
	if (dct_parse_line(line, len, &l) < 0) {
		im_count_malformed(im);
		if (dct_line_unprefixed(line, len))
			im->sum.unprefixed++;
		return;
	}
	switch (l.type) {
	case DCT_LINE_BLANK:
		im->sum.blank++;
		break;
	case DCT_LINE_CALL:
		p = im_live_proc(im, l.pid);
		if (p) {
			p->last_line = im_clamp_line(im->lineno);
			im_handle_call(im, p, (struct dct_span){ l.name, l.name_len },
				    (struct dct_span){ l.text, l.text_len },
				    im->lineno, im->lineno);
		}
		break;
	case DCT_LINE_UNFINISHED:
		on_unfinished(im, &l);
		break;
	case DCT_LINE_RESUMED:
		on_resumed(im, &l);
		break;
	case DCT_LINE_SIGNAL:
		im->sum.signals++;
		break;
	case DCT_LINE_EXIT:
		p = im_find_proc(im, l.pid);
		if (p)
			im_do_exit(im, p, im->lineno);
		break;
	default:
		break;
	}
}

/* A line too long to keep: counted, never parsed. */
static void overlong_line(struct dct_importer *im)
{
	im->lineno++;
	im->sum.lines++;
	im_count_malformed(im);
}

/* ---- finishing: from per-process state to a trace ---- */

struct dct_importer *dct_importer_new(void)
{
	assert(im_systab_sorted());
	return calloc(1, sizeof(struct dct_importer));
}

void dct_importer_free(struct dct_importer *im)
{
	if (!im)
		return;
	for (size_t i = 0; i < im->nprocs; i++)
		im_free_proc(im->procs[i]);
	free(im->procs);
	free(im->pidmap);
	free(im->pidkey);
	free(im->join);
	strtab_free(&im->paths);
	free(im);
}

/* Close every process: its pending call, its pending paths, its EXIT. */
static void finish_procs(struct dct_importer *im)
{
	for (size_t i = 0; i < im->nprocs && !im->oom; i++) {
		struct proc *p = im->procs[i];

		if (p->unf) {
			if (!strcmp(p->unf_name, "exit_group") || !strcmp(p->unf_name, "exit"))
				im_do_exit(im, p, p->unf_line);
			else
				im->sum.unfinished_at_eof++;
		}
		im_drop_pending(im, p);
		if (!p->has_exit && im_add_op(im, p, DCT_EXIT, DCT_F_IMPLIED, 0,
					   p->last_line) >= 0)
			p->has_exit = true;
		if (p->parent < 0 && i > 0)
			im->sum.orphans++;
	}
}

static int cmp_unknown(const void *a, const void *b)
{
	const struct unknown_name *x = a, *y = b;

	return (x->count < y->count) - (x->count > y->count);
}

static void fill_summary(struct dct_importer *im, const struct dct_trace *t)
{
	struct dct_import_summary *s = &im->sum;

	s->processes = t->nprocs;
	s->ops = t->nops;
	s->distinct_paths = t->npaths;
	for (uint64_t i = 0; i < t->nops; i++) {
		const struct dct_op *o = &t->ops[i];

		s->ops_by_kind[o->kind]++;
		if (dct_kind_paths(o->kind) == 0)
			continue;
		s->path_ops++;
		s->path_ops_failed += o->err != 0;
		s->path_ops_enoent += o->err == ENOENT;
	}
	qsort(im->unknown, im->nunknown, sizeof(im->unknown[0]), cmp_unknown);
	for (size_t i = 0; i < im->nunknown && i < DCT_TOP_UNKNOWN; i++) {
		memcpy(s->unknown[i].name, im->unknown[i].name, sizeof(s->unknown[i].name));
		s->unknown[i].count = im->unknown[i].count;
	}
}

static bool alloc_trace(struct dct_importer *im, struct dct_trace *t)
{
	uint64_t n = 0;

	for (size_t i = 0; i < im->nprocs; i++)
		for (size_t k = 0; k < im->procs[i]->nops; k++)
			n += im->procs[i]->ops[k].kind != DEAD_OP;
	t->nprocs = (uint32_t)im->nprocs;
	t->nops = n;
	t->npaths = im->paths.n;
	t->procs = calloc(im->nprocs ? im->nprocs : 1, sizeof(*t->procs));
	t->ops = malloc((n ? n : 1) * sizeof(*t->ops));
	t->paths = malloc((im->paths.n ? im->paths.n : 1) * sizeof(*t->paths));
	return t->procs && t->ops && t->paths;
}

/* Ops become one array, process after process; links become op indices. */
static void copy_ops(struct dct_importer *im, struct dct_trace *t)
{
	uint64_t cur = 0;

	for (size_t i = 0; i < im->nprocs; i++)
		t->procs[i].fork_op = t->procs[i].wait_op = DCT_NO_OP;
	for (size_t i = 0; i < im->nprocs; i++) {
		struct proc *p = im->procs[i];
		struct dct_proc *tp = &t->procs[i];

		tp->pid = p->pid;
		tp->parent = p->parent;
		tp->first_op = cur;
		for (size_t k = 0; k < p->nops; k++) {
			const struct dct_op *o = &p->ops[k];

			if (o->kind == DEAD_OP)
				continue;
			if (o->kind == DCT_FORK)
				t->procs[o->child].fork_op = cur;
			else if (o->kind == DCT_WAIT)
				t->procs[o->child].wait_op = cur;
			t->ops[cur++] = *o;
		}
		tp->nops = cur - tp->first_op;
		free(p->ops);		/* keep the peak to one copy and a bit */
		p->ops = NULL;
		p->nops = p->cap = 0;
	}
}

static void take_paths(struct dct_importer *im, struct dct_trace *t)
{
	struct strtab *s = &im->paths;

	t->blob = s->blob ? s->blob : calloc(1, 1);
	t->blob_len = s->len;
	for (uint32_t i = 0; i < s->n; i++)
		t->paths[i] = t->blob + s->off[i];
	s->blob = NULL;
	s->len = s->cap = 0;
}

int dct_importer_finish(struct dct_importer *im, struct dct_trace **out,
			struct dct_import_summary *sum, char *err, size_t errlen)
{
	struct dct_trace *t;
	char why[200];

	*out = NULL;
	finish_procs(im);
	t = calloc(1, sizeof(*t));
	if (im->oom || !t || !alloc_trace(im, t)) {
		snprintf(err, errlen, "out of memory");
		dct_free(t);
		return -1;
	}
	copy_ops(im, t);
	take_paths(im, t);
	fill_summary(im, t);
	if (sum)
		*sum = im->sum;
	if (!t->blob || dct_validate(t, why, sizeof(why))) {
		snprintf(err, errlen, "internal error, trace invalid: %s",
			 t->blob ? why : "out of memory");
		dct_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

/* ---- the log file ---- */

/* Hand every complete line in buf[0, *len) to im; keep the partial tail. */
static void feed_lines(struct dct_importer *im, char *buf, size_t *len, bool *skipping)
{
	char *s = buf, *e = buf + *len, *nl;
	size_t rest;

	while ((nl = memchr(s, '\n', (size_t)(e - s)))) {
		if (*skipping)
			*skipping = false;	/* the end of an overlong line */
		else if ((size_t)(nl - s) > LINE_MAX_BYTES)
			overlong_line(im);	/* the same limit, however it was read */
		else
			dct_importer_line(im, s, (size_t)(nl - s));
		s = nl + 1;
	}
	rest = (size_t)(e - s);
	if (!*skipping && rest > LINE_MAX_BYTES) {
		overlong_line(im);
		*skipping = true;
	}
	if (*skipping)
		rest = 0;
	memmove(buf, s, rest);
	*len = rest;
}

static int read_log(struct dct_importer *im, struct logreader *r, FILE *progress,
		    char *err, size_t errlen)
{
	size_t cap = LINE_MAX_BYTES + READ_CHUNK, len = 0;
	char *buf = malloc(cap);
	bool skipping = false;
	uint64_t next_report = 64u << 20;
	long n;

	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	while ((n = lr_read(r, buf + len, cap - len, err, errlen)) > 0) {
		len += (size_t)n;
		feed_lines(im, buf, &len, &skipping);
		if (progress && im->sum.bytes >= next_report) {
			fprintf(progress, "import: %" PRIu64 " lines, %" PRIu64 " MB\n",
				im->sum.lines, im->sum.bytes >> 20);
			next_report += 64u << 20;
		}
	}
	if (n == 0 && len > 0 && !skipping)
		dct_importer_line(im, buf, len);	/* a last line without '\n' */
	free(buf);
	return n < 0 ? -1 : 0;
}

#define STRACE_HOW "strace -f -y -qq -e trace=%%file,%%process,chdir,fchdir -o LOG COMMAND"

int dct_import_usable(const struct dct_import_summary *s, char *err, size_t errlen)
{
	uint64_t lines = s->lines - s->blank;
	uint64_t bad = s->malformed < lines ? s->malformed : lines;

	if (lines == 0) {
		if (s->lines)
			snprintf(err, errlen, "empty log: %" PRIu64 " lines, all blank; "
				 "capture one with " STRACE_HOW, s->lines);
		else
			snprintf(err, errlen, "empty log: not one line in it; capture "
				 "one with " STRACE_HOW);
		return -1;
	}
	/* whose calls they are is lost: the trace would miss a process's share */
	if (s->unprefixed) {
		snprintf(err, errlen, "%" PRIu64 " of %" PRIu64 " lines have no process "
			 "id in front: strace ran without -f (or with -ff, or wrote to "
			 "stderr, not to -o LOG); capture with " STRACE_HOW,
			 s->unprefixed, lines);
		return -1;
	}
	if (s->processes == 0) {
		snprintf(err, errlen, "not an strace log: none of its %" PRIu64 " lines "
			 "is a system call as strace -f writes it (\"PID name(args) = "
			 "result\"); capture one with " STRACE_HOW, lines);
		return -1;
	}
	if (bad * 100 > lines * DCT_MALFORMED_PERCENT) {
		snprintf(err, errlen, "%" PRIu64 " of %" PRIu64 " lines are malformed "
			 "(the first is line %" PRIu64 "); more than %d%% is refused: "
			 "not a log of " STRACE_HOW, bad, lines, s->malformed_first_line,
			 DCT_MALFORMED_PERCENT);
		return -1;
	}
	if (s->path_ops == 0) {
		snprintf(err, errlen, "no path lookups in its %" PRIu64 " lines: nothing "
			 "to replay; capture with " STRACE_HOW, lines);
		return -1;
	}
	return 0;
}

int dct_import_check_output(const char *out_trace, char *err, size_t errlen)
{
	struct dct_out o;

	if (dct_out_open(&o, out_trace, err, errlen))
		return -1;
	dct_out_abandon(&o);
	return 0;
}

/* Read the log into im; the trace goes to out if the log is usable.  0 or -1. */
static int import_into(struct dct_importer *im, struct logreader *r,
		       struct dct_out *out, const char *log,
		       struct dct_import_summary *sum, FILE *progress,
		       char *err, size_t errlen)
{
	struct dct_import_summary s;
	struct dct_trace *t = NULL;
	char why[512];
	int rc = -1;

	if (read_log(im, r, progress, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", log, why);
	} else if (dct_importer_finish(im, &t, &s, err, errlen) == 0) {
		if (sum)
			*sum = s;
		if (dct_import_usable(&s, why, sizeof(why)) == 0) {
			rc = dct_out_write(out, t, err, errlen);
			dct_free(t);
			return rc;
		}
		snprintf(err, errlen, "%s: %s", log, why);
	}
	dct_out_abandon(out);
	dct_free(t);
	return rc;
}

/* Are a and b names of one existing file ("-", stdin, is none)? */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return strcmp(a, "-") && stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int dct_import(const char *log, const char *out_trace,
	       struct dct_import_summary *sum, FILE *progress,
	       char *err, size_t errlen)
{
	struct dct_importer *im = dct_importer_new();
	struct dct_out out;
	struct logreader r;
	int rc = -1;

	if (!im) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (same_file(log, out_trace)) {
		snprintf(err, errlen, "%s: the trace would overwrite the log it "
			 "is read from; name another -o", out_trace);
		dct_importer_free(im);
		return -1;
	}
	if (lr_open(&r, log, err, errlen) == 0 &&
	    dct_out_open(&out, out_trace, err, errlen) == 0)
		rc = import_into(im, &r, &out, log, sum, progress, err, errlen);
	lr_close(&r);
	dct_importer_free(im);
	return rc;
}

/* ---- the summary ---- */

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

void dct_import_summary_print(FILE *f, const struct dct_import_summary *s)
{
	fprintf(f, "log:          %" PRIu64 " lines (%" PRIu64 " blank), %.1f MB\n",
		s->lines, s->blank, (double)s->bytes / 1e6);
	fprintf(f, "processes:    %" PRIu64 " (%" PRIu64 " without a parent"
		" besides the first)\n", s->processes, s->orphans);
	fprintf(f, "paths:        %" PRIu64 " distinct\n", s->distinct_paths);
	fprintf(f, "ops:          %" PRIu64 "\n", s->ops);
	for (unsigned k = 0; k < DCT_NKINDS; k++)
		if (s->ops_by_kind[k])
			fprintf(f, "  %-10s %10" PRIu64 "\n", dct_kind_name(k),
				s->ops_by_kind[k]);
	fprintf(f, "path ops:     %" PRIu64 ", failed %" PRIu64 " (%.1f%%),"
		" ENOENT %" PRIu64 " (%.1f%%)\n", s->path_ops, s->path_ops_failed,
		pct(s->path_ops_failed, s->path_ops), s->path_ops_enoent,
		pct(s->path_ops_enoent, s->path_ops));
	fprintf(f, "malformed:    %" PRIu64 " lines", s->malformed);
	if (s->malformed)
		fprintf(f, " (first: line %" PRIu64 ")", s->malformed_first_line);
	fprintf(f, "\nunknown:      %" PRIu64 " calls", s->unknown_calls);
	for (int i = 0; i < DCT_TOP_UNKNOWN && s->unknown[i].count; i++)
		fprintf(f, "%s%s %" PRIu64, i ? ", " : " (", s->unknown[i].name,
			s->unknown[i].count);
	fprintf(f, "%s\n", s->unknown[0].count ? ")" : "");
	fprintf(f, "ignored:      %" PRIu64 " calls without a path lookup\n",
		s->ignored_calls);
	fprintf(f, "skipped:      %" PRIu64 " calls with an empty or NULL path (no lookup)\n",
		s->skipped_fd_calls);
	fprintf(f, "unresolved:   %" PRIu64 " relative paths, directory unknown;"
		" %" PRIu64 " too long\n", s->unresolved, s->too_long);
	fprintf(f, "restarted:    %" PRIu64 "; unfinished at end: %" PRIu64
		"; unmatched waits: %" PRIu64 "\n", s->restarted,
		s->unfinished_at_eof, s->wait_unmatched);
	fprintf(f, "cwd:          %" PRIu64 " corrections from AT_FDCWD annotations\n",
		s->cwd_corrections);
	fprintf(f, "signals:      %" PRIu64 " lines\n", s->signals);
}

void dct_import_summary_brief(FILE *f, const struct dct_import_summary *s)
{
	fprintf(f, "# procs=%" PRIu64 " ops=%" PRIu64 " paths=%" PRIu64
		" malformed=%" PRIu64 " unknown=%" PRIu64 " ignored=%" PRIu64
		" skipped=%" PRIu64 " unresolved=%" PRIu64 " too_long=%" PRIu64
		" restarted=%" PRIu64 " unfinished=%" PRIu64 " orphans=%" PRIu64
		" unmatched_waits=%" PRIu64 " cwd_corrections=%" PRIu64
		" signals=%" PRIu64 "\n", s->processes, s->ops, s->distinct_paths,
		s->malformed, s->unknown_calls, s->ignored_calls,
		s->skipped_fd_calls, s->unresolved, s->too_long, s->restarted,
		s->unfinished_at_eof, s->orphans, s->wait_unmatched,
		s->cwd_corrections, s->signals);
}
