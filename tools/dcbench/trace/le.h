/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * le.h - the trace file's integers: little-endian whatever the machine,
 * read and written a byte at a time so that no alignment is assumed.
 */
#ifndef DCBENCH_TRACE_LE_H
#define DCBENCH_TRACE_LE_H

#include <stdint.h>

static inline uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t get64(const unsigned char *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static inline void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static inline void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

#endif /* DCBENCH_TRACE_LE_H */
