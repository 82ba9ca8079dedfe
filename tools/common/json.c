/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.c - see json.h.  Output is indented two spaces a level; numbers
 * use %.9g (enough for nanoseconds in seconds and for counts up to 2^53
 * written as doubles); integers are written exactly.
 */
#include <math.h>	/* isnan, isinf: macros, no -lm needed */
#include <string.h>

#include "common/json.h"

void json_init(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

int json_finish(struct json *j)
{
	fputc('\n', j->f);
	return (fflush(j->f) || ferror(j->f)) ? -1 : 0;
}

static void indent(struct json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Before any value: the comma and line break it needs, unless after a key. */
static void value_start(struct json *j)
{
	if (j->key_pending) {
		j->key_pending = false;
		return;
	}
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputc(',', j->f);
		indent(j);
	}
	j->first[j->depth] = false;
}

static void open_level(struct json *j, char c)
{
	value_start(j);
	fputc(c, j->f);
	if (j->depth + 1 < JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_level(struct json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty)
		indent(j);
	fputc(c, j->f);
}

void json_obj_begin(struct json *j) { open_level(j, '{'); }
void json_obj_end(struct json *j) { close_level(j, '}'); }
void json_arr_begin(struct json *j) { open_level(j, '['); }
void json_arr_end(struct json *j) { close_level(j, ']'); }

/* Length of a valid UTF-8 sequence at s (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	int n, i;
	unsigned cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void write_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		int n;

		switch (*s) {
		case '"':  fputs("\\\"", f); s++; continue;
		case '\\': fputs("\\\\", f); s++; continue;
		case '\n': fputs("\\n", f); s++; continue;
		case '\t': fputs("\\t", f); s++; continue;
		case '\r': fputs("\\r", f); s++; continue;
		default: break;
		}
		if (*s < 0x20 || *s == 0x7f) {
			fprintf(f, "\\u%04x", *s++);
			continue;
		}
		n = utf8_len(s);
		if (n == 0) {
			fprintf(f, "\\u%04x", *s++);
			continue;
		}
		fwrite(s, 1, (size_t)n, f);
		s += n;
	}
	fputc('"', f);
}

void json_key(struct json *j, const char *key)
{
	value_start(j);
	write_string(j->f, key);
	fputs(": ", j->f);
	j->key_pending = true;
}

void json_str(struct json *j, const char *s)
{
	if (!s) {
		json_null(j);
		return;
	}
	value_start(j);
	write_string(j->f, s);
}

void json_num(struct json *j, double v)
{
	if (isnan(v) || isinf(v)) {
		json_null(j);
		return;
	}
	value_start(j);
	/* range first: converting a huge double to an integer is undefined */
	if (v > -1e15 && v < 1e15 && v == (double)(long long)v)
		fprintf(j->f, "%lld", (long long)v);
	else
		fprintf(j->f, "%.9g", v);
}

void json_int(struct json *j, long long v)
{
	value_start(j);
	fprintf(j->f, "%lld", v);
}

void json_uint(struct json *j, uint64_t v)
{
	value_start(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_bool(struct json *j, bool v)
{
	value_start(j);
	fputs(v ? "true" : "false", j->f);
}

void json_null(struct json *j)
{
	value_start(j);
	fputs("null", j->f);
}

void json_kstr(struct json *j, const char *k, const char *s) { json_key(j, k); json_str(j, s); }
void json_knum(struct json *j, const char *k, double v) { json_key(j, k); json_num(j, v); }
void json_kint(struct json *j, const char *k, long long v) { json_key(j, k); json_int(j, v); }
void json_kuint(struct json *j, const char *k, uint64_t v) { json_key(j, k); json_uint(j, v); }
void json_kbool(struct json *j, const char *k, bool v) { json_key(j, k); json_bool(j, v); }
void json_knull(struct json *j, const char *k) { json_key(j, k); json_null(j); }
