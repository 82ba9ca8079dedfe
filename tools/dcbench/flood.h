/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* flood.h - `dcbench flood`: names made to share a hash chain, and their cost. */
#ifndef DCB_FLOOD_H
#define DCB_FLOOD_H

#define DCB_FLOOD_SHORT	8	/* bytes of a name of the unkeyed set */
#define DCB_FLOOD_LONG	176	/* bytes of a name of the differential set */

/*
 * n names of DCB_FLOOD_SHORT bytes (plus a NUL, in names[i * 9]) that share
 * one hash under an unkeyed hash of this construction: a constant
 * starting state, a 64-bit multiply-xorshift per word, the parent only
 * perturbing the bucket.
 */
void dcb_flood_unkeyed(char *names, int n);
/*
 * n names (at most 2,048) of DCB_FLOOD_LONG bytes (plus a NUL, in
 * names[i * 177]) that share one state under a 64-bit multiply-xorshift
 * mixing, whatever its key or starting state.
 */
void dcb_flood_differential(char *names, int n);

int dcb_flood_main(int argc, char **argv);

#endif
