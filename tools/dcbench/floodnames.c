/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * floodnames.c - names made to share one hash chain (flood.h), for
 * `dcbench flood` and tests/test_bounds.c.  Each set inverts or cancels
 * a weak construction of a name hash (unkeyed; a mixing some difference
 * survives), so that a cache whose hash is keyed and whose mixing no
 * difference survives spreads them like any names.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "flood.h"

#define K1	0x9e3779b97f4a7c15ull

static uint64_t inverse(uint64_t k)	/* of an odd k, mod 2^64 */
{
	uint64_t x = k;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - k * x;
	return x;
}

/* h such that (t = (h ^ w) * K1, t ^ (t >> 29)) == r */
static uint64_t unmix(uint64_t r, uint64_t w)
{
	uint64_t t = r ^ (r >> 29) ^ (r >> 58);	/* x ^ (x >> 29), inverted */

	return (t * inverse(K1)) ^ w;
}

/* An 8-byte name w is usable when no byte is NUL or '/'. */
static bool usable(uint64_t w)
{
	int i;

	for (i = 0; i < 8; i++) {
		unsigned char b = (unsigned char)(w >> (8 * i));

		if (b == 0 || b == '/')
			return false;
	}
	return true;
}

/* The hash is inverted: pick final states that fold to one value, undo
 * the length's mix, then the word's. */
void dcb_flood_unkeyed(char *names, int n)
{
	const uint64_t h0 = 0x243f6a8885a308d3ull, fold = 0x1234567;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	int i = 0;

	while (i < n) {
		uint64_t a, h2, w;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		a = rng >> 32;
		h2 = a << 32 | (fold ^ a);	/* h2 ^ (h2 >> 32) is fold */
		w = unmix(unmix(h2, DCB_FLOOD_SHORT), 0) ^ h0;
		if (!usable(w))
			continue;
		memcpy(names + (size_t)i * 9, &w, 8);
		names[(size_t)i * 9 + 8] = '\0';
		i++;
	}
}

void dcb_flood_differential(char *names, int n)
{
	const uint64_t d1 = 1ull << 63, d2 = 1ull << 63 | 1ull << 34;
	int i, p;

	for (i = 0; i < n; i++) {
		char *name = names + (size_t)i * (DCB_FLOOD_LONG + 1);

		for (p = 0; p < DCB_FLOOD_LONG / 8; p++) {
			uint64_t w = 0x6161616161616161ull + (uint64_t)p * 0x0101010101010101ull;

			if (i >> (p / 2) & 1)	/* 11 pairs: 2,048 names */
				w ^= p % 2 ? d2 : d1;
			memcpy(name + 8 * p, &w, 8);
		}
		name[DCB_FLOOD_LONG] = '\0';
	}
}
