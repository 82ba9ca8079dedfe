/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * json.h - a tiny streaming JSON writer for dcbench's --json output.
 *
 * One document per writer.  Objects and arrays nest up to JSON_MAX_DEPTH;
 * commas, indentation and string escaping are taken care of.  Numbers that
 * are NaN or infinite come out as null, so "unmeasured" is written as a NaN
 * by the caller.  Strings are written as UTF-8: bytes that are not valid
 * UTF-8 (a path may hold any byte) are written as \u00XX, their Latin-1
 * reading, so the document always parses.
 */
#ifndef DCBENCH_JSON_H
#define DCBENCH_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH	16
#define JSON_SCHEMA_VERSION	1	/* dcbench's "schema_version" */

struct json {
	FILE *f;
	int depth;
	bool first[JSON_MAX_DEPTH];	/* nothing written yet at this level */
	bool key_pending;		/* a key was written, its value is next */
};

void json_init(struct json *j, FILE *f);
/* Ends the document with a newline and flushes; 0, or -1 on a write error. */
int json_finish(struct json *j);

void json_obj_begin(struct json *j);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j);
void json_arr_end(struct json *j);
void json_key(struct json *j, const char *key);

void json_str(struct json *j, const char *s);	/* NULL: null */
void json_num(struct json *j, double v);	/* NaN, inf: null */
void json_int(struct json *j, long long v);
void json_uint(struct json *j, uint64_t v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);

/* key and value in one call */
void json_kstr(struct json *j, const char *key, const char *s);
void json_knum(struct json *j, const char *key, double v);
void json_kint(struct json *j, const char *key, long long v);
void json_kuint(struct json *j, const char *key, uint64_t v);
void json_kbool(struct json *j, const char *key, bool v);
void json_knull(struct json *j, const char *key);

#endif /* DCBENCH_JSON_H */
