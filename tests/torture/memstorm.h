/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * memstorm.h - the memory bound under churn: many distinct names, half of
 * them missing, resolved through a capped cache whose live bytes and the
 * process's resident growth must stay under the bound (memstorm.c).
 */
#ifndef DCB_MEMSTORM_H
#define DCB_MEMSTORM_H

#include <stdbool.h>
#include <stdint.h>

#include "dcache.h"

struct memstorm_opts {
	uint64_t names;		/* distinct paths resolved, at least 1 */
	uint64_t cap;		/* the cache's max_entries, at least 64 */
	int threads;		/* resolving threads, 1 to 256 */
	enum dc_mode mode;
	bool json;		/* one JSON document on stdout instead of text */
};

struct memstorm_result {
	uint64_t wrong;		/* answers not what the backend says */
	uint64_t evictions;
	uint64_t peak_entries, peak_bytes;	/* the cache's, sampled */
	uint64_t peak_rss;	/* resident growth over the process before */
	uint64_t bound;		/* what both peaks must stay under, bytes */
	double seconds;
};

/*
 * Runs one storm, fills r (zeroed when the run could not start) and reports it on stdout; 0 when every answer was right
 * and both peaks stayed under the bound, 1 otherwise (or on a failure,
 * said on stderr).
 */
int memstorm_run(const struct memstorm_opts *o, struct memstorm_result *r);

#endif
