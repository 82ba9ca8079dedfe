/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run_corpus.c - replay a fuzz target's corpus without libFuzzer, as a
 * regression test: every file under the corpus directory (CORPUS_DIR at
 * build time, or the arguments) goes through LLVMFuzzerTestOneInput once.
 * A target reports a finding by aborting, so reaching the end is a pass.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

static int run_dir(const char *dir, unsigned *count)
{
	struct dirent *e;
	char path[4096];
	DIR *d = opendir(dir);

	if (!d) {
		perror(dir);
		return -1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (run_file(path)) {
			perror(path);
			closedir(d);
			return -1;
		}
		(*count)++;
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int i;

	if (argc < 2)
		return run_dir(CORPUS_DIR, &count) ? 1 : (printf("%s: %u inputs, 0 failed\n",
			CORPUS_DIR, count), 0);
	for (i = 1; i < argc; i++)
		if (run_dir(argv[i], &count))
			return 1;
	printf("%u inputs, 0 failed\n", count);
	return 0;
}
