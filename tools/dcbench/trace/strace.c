/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * strace.c - the strace line parser (strace.h): text to spans, no state,
 * never a read past the length it is given (it is fuzzed).
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/strace.h"

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool has_prefix(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && memcmp(p, s, n) == 0;
}

static bool has_suffix(const char *p, const char *end, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(end - p) >= n && memcmp(end - n, s, n) == 0;
}

static const char *skip_spaces(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

const char *dct_parse_u32(const char *p, const char *end, uint32_t *v)
{
	uint64_t n = 0;
	const char *s = p;

	while (p < end && is_digit(*p)) {
		n = n * 10 + (uint64_t)(*p - '0');
		if (n > UINT32_MAX)
			return NULL;
		p++;
	}
	*v = (uint32_t)n;
	return p > s ? p : NULL;
}

static const char *parse_pid(const char *p, const char *end, uint32_t *pid)
{
	if (has_prefix(p, end, "[pid")) {
		p = dct_parse_u32(skip_spaces(p + 4, end), end, pid);
		if (!p || p == end || *p != ']')
			return NULL;
		p++;
	} else {
		p = dct_parse_u32(p, end, pid);
	}
	if (!p || p == end || *p != ' ')
		return NULL;
	return skip_spaces(p, end);
}

/* "<... name resumed>rest" */
static int parse_resumed(const char *p, const char *end, struct dct_line *out)
{
	const char *n = p + 5;

	p = n;
	while (p < end && is_word(*p))
		p++;
	if (p == n || (size_t)(p - n) > DCT_NAME_MAX_BYTES ||
	    !has_prefix(p, end, " resumed>"))
		return -1;
	out->type = DCT_LINE_RESUMED;
	out->name = n;
	out->name_len = (size_t)(p - n);
	out->text = p + 9;
	out->text_len = (size_t)(end - out->text);
	return 0;
}

/* "name(args) = ret" or "name(args <unfinished ...>" */
static int parse_call_line(const char *p, const char *end, struct dct_line *out)
{
	static const char unf[] = "<unfinished ...>";
	const char *n = p;

	while (p < end && is_word(*p))
		p++;
	if (p == n || (size_t)(p - n) > DCT_NAME_MAX_BYTES || p == end || *p != '(')
		return -1;
	out->name = n;
	out->name_len = (size_t)(p - n);
	out->text = p;
	if (has_suffix(p, end, unf)) {
		out->type = DCT_LINE_UNFINISHED;
		end -= sizeof(unf) - 1;
	} else {
		out->type = DCT_LINE_CALL;
	}
	out->text_len = (size_t)(end - p);
	return 0;
}

int dct_parse_line(const char *line, size_t len, struct dct_line *out)
{
	const char *p = line, *end = line + len;

	memset(out, 0, sizeof(*out));
	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (skip_spaces(p, end) == end) {
		out->type = DCT_LINE_BLANK;
		return 0;
	}
	p = parse_pid(p, end, &out->pid);
	if (!p)
		goto malformed;
	if (has_prefix(p, end, "--- ")) {
		out->type = DCT_LINE_SIGNAL;
		return 0;
	}
	if (has_prefix(p, end, "+++ ")) {
		out->type = DCT_LINE_EXIT;
		return 0;
	}
	if (has_prefix(p, end, "<... ")) {
		if (parse_resumed(p, end, out) == 0)
			return 0;
	} else if (parse_call_line(p, end, out) == 0) {
		return 0;
	}
malformed:
	out->type = DCT_LINE_MALFORMED;
	return -1;
}

/* p at an opening quote or '<': past the closing one; strace escapes it inside. */
static const char *skip_quoted(const char *p, const char *end, char close)
{
	for (p++; p < end; p++) {
		if (*p == '\\') {
			if (++p == end)
				return NULL;
		} else if (*p == close) {
			return p + 1;
		}
	}
	return NULL;
}

/* p at '"': past the closing quote and a "..." that marks truncation. */
static const char *skip_string(const char *p, const char *end)
{
	p = skip_quoted(p, end, '"');
	return p && has_prefix(p, end, "...") ? p + 3 : p;
}

/* p at '<' of an fd annotation ("3</dir>"). */
static const char *skip_annotation(const char *p, const char *end)
{
	return skip_quoted(p, end, '>');
}

static const char *skip_comment(const char *p, const char *end)
{
	for (p += 2; p + 1 < end; p++)
		if (p[0] == '*' && p[1] == '/')
			return p + 2;
	return NULL;
}

static void add_arg(struct dct_call *c, const char *s, const char *e)
{
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	if (c->nargs < DCT_MAX_ARGS) {
		c->args[c->nargs].p = s;
		c->args[c->nargs].len = (size_t)(e - s);
	}
	c->nargs++;
}

/* One element of the argument list; returns where it ended (at ',' or ')'). */
static const char *skip_arg(const char *p, const char *end, const char *start)
{
	int depth = 0;

	while (p < end) {
		char c = *p;

		if (c == '"')
			p = skip_string(p, end);
		else if (c == '/' && p + 1 < end && p[1] == '*')
			p = skip_comment(p, end);
		else if (c == '<' && p > start && is_word(p[-1]))
			p = skip_annotation(p, end);
		else if (c == '(' || c == '[' || c == '{')
			depth++, p++;
		else if ((c == ')' || c == ']' || c == '}') && depth > 0)
			depth--, p++;
		else if (c == ')' || (c == ',' && depth == 0))
			return p;
		else if (c == ']' || c == '}')
			return NULL;
		else
			p++;
		if (!p)
			return NULL;
	}
	return NULL;
}

/* Decimal or 0x hex, optional '-'; NULL if none or it overflows. */
static const char *parse_ll(const char *p, const char *end, long long *v)
{
	bool neg = p < end && *p == '-';
	unsigned long long n = 0;
	const char *s;
	int base = 10;

	if (neg)
		p++;
	if (has_prefix(p, end, "0x"))
		p += 2, base = 16;
	for (s = p; p < end; p++) {
		int d;

		if (is_digit(*p))
			d = *p - '0';
		else if (base == 16 && ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f'))
			d = (*p | 0x20) - 'a' + 10;
		else
			break;
		if (n > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
			return NULL;
		n = n * (unsigned)base + (unsigned)d;
	}
	if (p == s || n > (unsigned long long)LLONG_MAX)
		return NULL;
	*v = neg ? -(long long)n : (long long)n;
	return p;
}

static const char *parse_errname(const char *p, const char *end, struct dct_span *e)
{
	const char *s = p;

	while (p < end && is_word(*p))
		p++;
	e->p = s;
	e->len = (size_t)(p - s);
	return p;
}

/* After the closing ')': " = 0", " = -1 ENOENT (...)", " = ? ERESTARTSYS". */
static int parse_ret(const char *p, const char *end, struct dct_call *c)
{
	p = skip_spaces(p, end);
	if (p == end || *p != '=')
		return -1;
	p = skip_spaces(p + 1, end);
	if (p < end && *p == '?') {
		c->ret = DCT_RET_UNKNOWN;
		p = skip_spaces(p + 1, end);
		if (p < end && *p == 'E')
			parse_errname(p, end, &c->errname);
		return 0;
	}
	p = parse_ll(p, end, &c->value);
	if (!p)
		return -1;
	c->ret = DCT_RET_NUM;
	if (c->value == -1 && p + 1 < end && *p == ' ' && p[1] == 'E') {
		c->ret = DCT_RET_ERR;
		parse_errname(p + 1, end, &c->errname);
	} else if (c->value == -1) {
		/* a failure with no errno name (a line cut off, or an errno
		 * as a number): what failed is not known, not a success */
		c->ret = DCT_RET_UNKNOWN;
	}
	return 0;
}

int dct_parse_call(const char *text, size_t len, struct dct_call *c)
{
	const char *p = text, *end = text + len;

	memset(c, 0, sizeof(*c));
	if (p == end || *p != '(')
		return -1;
	for (p++;;) {
		const char *s = skip_spaces(p, end), *e = skip_arg(s, end, s);

		if (!e)
			return -1;
		/* "()" and "( )" (a vfork rejoined) have no arguments */
		if (!(*e == ')' && c->nargs == 0 && e == s))
			add_arg(c, s, e);
		p = e + 1;
		if (*e == ')')
			break;
	}
	if (c->nargs > DCT_MAX_ARGS)
		c->nargs = DCT_MAX_ARGS;
	return parse_ret(p, end, c);
}

static int hexval(char c)
{
	if (is_digit(c))
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* One escape after a backslash at *pp; returns the byte, advances *pp. */
static int decode_escape(const char **pp, const char *end)
{
	const char *p = *pp;
	int v = 0, n;

	if (p == end)
		return -1;
	switch (*p) {
	case 'n': *pp = p + 1; return '\n';
	case 't': *pp = p + 1; return '\t';
	case 'r': *pp = p + 1; return '\r';
	case 'v': *pp = p + 1; return '\v';
	case 'f': *pp = p + 1; return '\f';
	case 'a': *pp = p + 1; return '\a';
	case 'b': *pp = p + 1; return '\b';
	case 'x':
		for (n = 0, p++; n < 2 && p < end && hexval(*p) >= 0; n++, p++)
			v = v * 16 + hexval(*p);
		*pp = p;
		return n ? v : -1;
	}
	if (*p >= '0' && *p <= '7') {
		for (n = 0; n < 3 && p < end && *p >= '0' && *p <= '7'; n++, p++)
			v = v * 8 + (*p - '0');
		*pp = p;
		return v & 0xff;
	}
	*pp = p + 1;
	return (unsigned char)*p;	/* \" \\ and anything strace may add */
}

/* Bytes between two delimiters, escapes decoded, NUL-terminated. */
static long decode_between(const char *p, const char *end, char *buf, size_t cap)
{
	size_t n = 0;

	while (p < end) {
		int c = (unsigned char)*p++;

		if (c == '\\' && (c = decode_escape(&p, end)) < 0)
			return -1;
		if (n + 1 >= cap)
			return -1;
		buf[n++] = (char)c;
	}
	if (cap == 0)
		return -1;
	buf[n] = '\0';
	return (long)n;
}

long dct_decode_string(struct dct_span a, char *buf, size_t cap)
{
	const char *end = a.p + a.len;

	if (a.len < 2 || a.p[0] != '"' || skip_string(a.p, end) != end ||
	    end[-1] != '"' || has_suffix(a.p, end, "\"..."))
		return -1;
	return decode_between(a.p + 1, end - 1, buf, cap);
}

bool dct_has_word(struct dct_span a, const char *word)
{
	size_t n = strlen(word);
	const char *p = a.p, *end = a.p + a.len;

	while ((size_t)(end - p) >= n) {
		const char *m = memmem(p, (size_t)(end - p), word, n);

		if (!m)
			return false;
		if ((m == a.p || !is_word(m[-1])) &&
		    (m + n == end || !is_word(m[n])))
			return true;
		p = m + 1;
	}
	return false;
}

enum dct_fd dct_parse_dirfd(struct dct_span a, char *buf, size_t cap, bool *annot)
{
	const char *p = a.p, *end = a.p + a.len, *e;
	enum dct_fd k;
	uint32_t fd;

	*annot = false;
	if (has_prefix(p, end, "AT_FDCWD")) {
		k = DCT_FD_CWD, p += 8;
	} else if (has_prefix(p, end, "-100")) {
		k = DCT_FD_CWD, p += 4;
	} else {
		p = dct_parse_u32(p, end, &fd);
		if (!p)
			return DCT_FD_NONE;
		k = DCT_FD_NUM;
	}
	if (p < end && *p == '<' && (e = skip_annotation(p, end)) == end) {
		long n = decode_between(p + 1, end - 1, buf, cap);

		/* socket:[..], pipe:[..] and paths with a NUL name no directory */
		*annot = n > 0 && buf[0] == '/' && strlen(buf) == (size_t)n;
	}
	return k;
}

bool dct_line_unprefixed(const char *line, size_t len)
{
	const char *p = skip_spaces(line, line + len), *end = line + len;
	struct dct_line l;
	struct dct_call c;

	while (end > p && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	/* strace's own words only: a diff's "--- a/x" is no strace line */
	if (has_prefix(p, end, "--- SIG") || has_prefix(p, end, "+++ exited with ") ||
	    has_prefix(p, end, "+++ killed by "))
		return true;
	if (has_prefix(p, end, "<... "))
		return parse_resumed(p, end, &l) == 0;
	if (parse_call_line(p, end, &l) < 0)
		return false;
	return l.type == DCT_LINE_UNFINISHED ||
	       dct_parse_call(l.text, l.text_len, &c) == 0;
}
