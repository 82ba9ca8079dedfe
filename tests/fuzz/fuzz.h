/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuzz.h - how a fuzz target reports a finding (an answer that breaks an
 * invariant it checks).  Under libFuzzer a finding must abort, which is
 * how the fuzzer knows to keep the input; replayed as a test by
 * run_corpus.c it is counted against the input instead, and the replay
 * goes on, so that the run says how many inputs failed.  Each target
 * defines the aborting fuzz_fail weak; run_corpus.c's replaces it.
 */
#ifndef DC_FUZZ_H
#define DC_FUZZ_H

/* The current input failed.  Returns only when replayed by run_corpus.c. */
void fuzz_fail(void);

#endif
