/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * dump.c - a trace as text, one op per line (dct_dump), for people and
 * for tests that compare imports.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "trace/trace.h"

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
	if (dct_kind_has_child(o->kind))
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
