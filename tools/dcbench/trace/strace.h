/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strace.h - the strace line parser: one line of `strace -f -y` text into
 * spans (pid, call name, arguments, result), with no state.  It never
 * reads past the length it is given: tests/fuzz/fuzz_import.c fuzzes it.
 */
#ifndef DCBENCH_TRACE_STRACE_H
#define DCBENCH_TRACE_STRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCT_NAME_MAX_BYTES	23	/* longest syscall name accepted */

enum dct_line_type {
	DCT_LINE_BLANK,
	DCT_LINE_CALL,		/* pid name(args) = ret */
	DCT_LINE_UNFINISHED,	/* pid name(args <unfinished ...> */
	DCT_LINE_RESUMED,	/* pid <... name resumed>rest */
	DCT_LINE_SIGNAL,	/* pid --- SIGxxx ... --- */
	DCT_LINE_EXIT,		/* pid +++ exited with N +++ / killed by */
	DCT_LINE_MALFORMED,
};

/* Spans point into the parsed line. */
struct dct_line {
	enum dct_line_type type;
	uint32_t pid;
	const char *name;	/* the call's name */
	size_t name_len;
	const char *text;	/* CALL: "(args) = ret"; UNFINISHED: "(args";
				   RESUMED: what follows "resumed>" */
	size_t text_len;
};

int dct_parse_line(const char *line, size_t len, struct dct_line *out);

#define DCT_MAX_ARGS	8	/* later arguments are not needed */

struct dct_span {
	const char *p;
	size_t len;
};

enum dct_ret { DCT_RET_NUM, DCT_RET_ERR, DCT_RET_UNKNOWN };

struct dct_call {
	unsigned nargs;		/* at most DCT_MAX_ARGS */
	struct dct_span args[DCT_MAX_ARGS];
	enum dct_ret ret;
	long long value;	/* DCT_RET_NUM */
	struct dct_span errname;/* DCT_RET_ERR, and "= ? ERESTARTSYS" */
};

/* Split "(args) = ret" into arguments and result; 0 or -1 if malformed. */
int dct_parse_call(const char *text, size_t len, struct dct_call *out);

/*
 * Decode a quoted strace string argument ("a\"b\303") into buf; returns
 * its length, or -1 when it is not a complete string or does not fit.
 */
long dct_decode_string(struct dct_span arg, char *buf, size_t cap);

/* Is word, delimited, somewhere in a (flag lists, struct fields)? */
bool dct_has_word(struct dct_span a, const char *word);

/* Unsigned decimal at p, at most UINT32_MAX; past it, or NULL if none. */
const char *dct_parse_u32(const char *p, const char *end, uint32_t *v);

enum dct_fd { DCT_FD_NONE, DCT_FD_CWD, DCT_FD_NUM };

/*
 * A directory-fd argument: AT_FDCWD or a number.  When it carries a -y
 * annotation naming an absolute path, that path is decoded into buf
 * (cap bytes, NUL-terminated) and *annot set.
 */
enum dct_fd dct_parse_dirfd(struct dct_span a, char *buf, size_t cap, bool *annot);

/*
 * Would this line, malformed as it stands, parse with a pid in front?
 * strace writes none without -f, with -ff, nor for a lone process when it
 * writes to stderr: such a log does not say which process made a call.
 */
bool dct_line_unprefixed(const char *line, size_t len);

#endif /* DCBENCH_TRACE_STRACE_H */
