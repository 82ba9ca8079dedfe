/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz_import.c - libFuzzer target for the strace line parser, the
 * importer behind it, and the trace reader.
 *
 *	clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE \
 *	      -Iinclude -Itools -Itools/dcbench tests/fuzz/fuzz_import.c \
 *	      tools/dcbench/trace/{trace,validate,dump,util,strace,strtab,proc,syscalls,import,logreader}.c \
 *	      -llzma -o fuzz_import
 * (make fuzz does this.)
 *	./fuzz_import -max_total_time=60 NEW_CORPUS tests/fuzz/corpus_import
 *
 * An input starting with the trace magic goes to the reader, which must
 * refuse or accept it without a fault.  Anything else is a log: each line
 * goes through the parser layers on its own, then the whole log through
 * the importer, whose trace must always validate and read back the same.
 */
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "trace/import.h"
#include "trace/trace.h"

/* libFuzzer's build: a finding aborts (run_corpus.c counts it instead) */
__attribute__((weak)) void fuzz_fail(void)
{
	abort();
}

static FILE *devnull(void)
{
	static FILE *f;

	if (!f)
		f = fopen("/dev/null", "w");
	return f;
}

static void read_one(const uint8_t *data, size_t size)
{
	struct dct_trace *t;
	char err[256];

	if (dct_read_mem(data, size, &t, err, sizeof(err)) == 0) {
		dct_dump(devnull(), t);
		dct_free(t);
	}
}

/*
 * As given, then with its CRC made right: otherwise nearly every mutation
 * stops at the checksum and the structural checks behind it go unfuzzed.
 */
static void fuzz_reader(const uint8_t *data, size_t size)
{
	uint8_t *copy;
	uint32_t crc;

	read_one(data, size);
	if (size < DCT_HEADER_SIZE || !(copy = malloc(size)))
		return;
	memcpy(copy, data, size);
	crc = lzma_crc32(copy + DCT_HEADER_SIZE, size - DCT_HEADER_SIZE, 0);
	for (int i = 0; i < 4; i++)
		copy[56 + i] = (uint8_t)(crc >> (8 * i));
	read_one(copy, size);
	free(copy);
}

/* The parser layers, one line, independent of any state. */
static void fuzz_line(const char *line, size_t len)
{
	struct dct_line l;
	struct dct_call c;
	char buf[DCT_PATH_MAX + 1];

	if (dct_parse_line(line, len, &l) < 0)
		return;
	if (l.type != DCT_LINE_CALL && l.type != DCT_LINE_RESUMED)
		return;
	if (dct_parse_call(l.text, l.text_len, &c) < 0)
		return;
	for (unsigned i = 0; i < c.nargs; i++)
		dct_decode_string(c.args[i], buf, sizeof(buf));
}

/* What the importer writes, the reader must take back, byte for byte. */
static void check_round_trip(const struct dct_trace *t)
{
	struct dct_trace *back = NULL;
	char *mem = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	if (!f)
		return;
	if (dct_write_fp(f, t, err, sizeof(err)) != 0) {
		fprintf(stderr, "write of an imported trace failed: %s\n", err);
		fuzz_fail();
		fclose(f);
		free(mem);
		return;
	}
	fclose(f);
	if (dct_read_mem(mem, len, &back, err, sizeof(err)) != 0) {
		fprintf(stderr, "imported trace does not read back: %s\n", err);
		fuzz_fail();
	} else if (back->nops != t->nops || back->nprocs != t->nprocs ||
		   back->npaths != t->npaths ||
		   memcmp(back->ops, t->ops, t->nops * sizeof(*t->ops)) != 0) {
		fprintf(stderr, "imported trace reads back different\n");
		fuzz_fail();
	}
	dct_free(back);
	free(mem);
}

static void fuzz_log(const uint8_t *data, size_t size)
{
	struct dct_importer *im = dct_importer_new();
	const char *p = (const char *)data, *end = p + size;
	struct dct_import_summary sum;
	struct dct_trace *t;
	char err[256];

	if (!im)
		return;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		fuzz_line(p, n);
		dct_importer_line(im, p, n);
		p += n + (nl != NULL);
	}
	if (dct_importer_finish(im, &t, &sum, err, sizeof(err)) != 0) {
		/* malformed input is counted, never fatal */
		fprintf(stderr, "import failed: %s\n", err);
		fuzz_fail();
		dct_importer_free(im);
		return;
	}
	check_round_trip(t);
	dct_dump(devnull(), t);
	dct_import_summary_print(devnull(), &sum);
	dct_free(t);
	dct_importer_free(im);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size >= 8 && memcmp(data, DCT_MAGIC, 8) == 0)
		fuzz_reader(data, size);
	else
		fuzz_log(data, size);
	return 0;
}
