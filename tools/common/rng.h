/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * rng.h - the tools' seeded random numbers: splitmix64, whose whole state
 * is one 64-bit word, so a seed reproduces a run's choices and each
 * thread can carry its own sequence.
 */
#ifndef DC_TOOLS_RNG_H
#define DC_TOOLS_RNG_H

#include <stdint.h>

#define RNG_GOLDEN	0x9e3779b97f4a7c15ull	/* splitmix64's increment */

/* splitmix64's finaliser: a bijection that spreads every input bit. */
static inline uint64_t rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The next number of the sequence whose state is *s. */
static inline uint64_t rng_next(uint64_t *s)
{
	return rng_mix(*s += RNG_GOLDEN);
}

/* A number in [0, n), by multiply-shift (no division). */
static inline uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

#endif
