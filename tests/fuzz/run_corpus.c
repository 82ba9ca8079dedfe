/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run_corpus.c - replay a fuzz target's corpus without libFuzzer, as a
 * regression test: every file under the corpus directory (CORPUS_DIR at
 * build time, or the arguments) goes through LLVMFuzzerTestOneInput once,
 * in name order (a target may keep state across inputs).  An input fails
 * when the target reports a finding (fuzz_fail, see fuzz.h) or the file
 * cannot be read; a crash ends the run, for the sanitizers to report.
 * Ends with "NAME: N passed, M failed" and exits 1 if any failed, or if a
 * directory is missing or empty: a corpus that replays nothing proves
 * nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned findings;	/* fuzz_fail calls for the current input */

void fuzz_fail(void)
{
	findings++;
}

/* The whole of file path into *buf (malloc'd), its size into *size. */
static int slurp(const char *path, uint8_t **buf, size_t *size)
{
	FILE *f = fopen(path, "rb");
	long n = -1;

	*buf = NULL;
	if (f && fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (n >= 0 && fseek(f, 0, SEEK_SET) == 0)
		*buf = malloc(n > 0 ? (size_t)n : 1);
	if (!*buf || fread(*buf, 1, (size_t)n, f) != (size_t)n) {
		if (f)
			fclose(f);
		free(*buf);
		return -1;
	}
	fclose(f);
	*size = (size_t)n;
	return 0;
}

/* One input: 0 if it passed, 1 if it failed (said why on stderr). */
static int run_file(const char *path)
{
	uint8_t *buf;
	size_t n;

	if (slurp(path, &buf, &n)) {
		fprintf(stderr, "FAIL %s: cannot read: %s\n", path, strerror(errno));
		return 1;
	}
	findings = 0;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	if (findings)
		fprintf(stderr, "FAIL %s: %u findings\n", path, findings);
	return findings != 0;
}

static int visible(const struct dirent *e)
{
	return e->d_name[0] != '.';
}

/* Replay dir into the counts; -1 (said why) if it is missing or empty. */
static int run_dir(const char *name, const char *dir, unsigned *passed,
		   unsigned *failed)
{
	struct dirent **list;
	char path[4096];
	int n = scandir(dir, &list, visible, alphasort), i;

	if (n < 0) {
		fprintf(stderr, "%s: cannot open corpus directory %s: %s\n", name, dir,
			strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
		if (run_file(path))
			(*failed)++;
		else
			(*passed)++;
		free(list[i]);
	}
	free(list);
	if (n == 0) {
		fprintf(stderr, "%s: corpus directory %s is empty: nothing replayed\n",
			name, dir);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char *builtin[] = { CORPUS_DIR };
	const char *slash = strrchr(argv[0], '/'), *name = slash ? slash + 1 : argv[0];
	char **dirs = argc > 1 ? argv + 1 : builtin;
	int ndirs = argc > 1 ? argc - 1 : 1, i;
	unsigned passed = 0, failed = 0;

	for (i = 0; i < ndirs; i++)
		if (run_dir(name, dirs[i], &passed, &failed))
			return 1;
	printf("%s: %u passed, %u failed\n", name, passed, failed);
	return failed ? 1 : 0;
}
