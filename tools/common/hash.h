/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hash.h - the tools' hash for their own tables (a trace's strings and
 * names, a listing's directories, what a mount shows): FNV-1a over bytes,
 * with a 64-bit finaliser for tables indexed by the low bits.  Not for
 * names an adversary picks: libdcache's keyed hash (dc__hash_component)
 * is the one the benchmarks' references use for lookups.
 */
#ifndef DC_TOOLS_HASH_H
#define DC_TOOLS_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_FNV_OFFSET	0xcbf29ce484222325ull	/* FNV-1a's start */

/* FNV-1a of p[0..n), continued from h (HASH_FNV_OFFSET to start). */
static inline uint64_t hash_fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;
	return h;
}

/* MurmurHash3's 64-bit finaliser: every input bit moves the low bits. */
static inline uint64_t hash_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

#endif
