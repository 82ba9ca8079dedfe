/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * coherence.h - `dcbench coherence`: how long a change made directly in
 * the source directory, behind a FUSE file system's back, takes to show
 * through its mount (fsmount.h), and how many changes never show.
 */
#ifndef DCBENCH_COHERENCE_H
#define DCBENCH_COHERENCE_H

/* argv[0] is "coherence"; returns the exit status (0, 1, 2: cli.h). */
int dcb_coherence_main(int argc, char **argv);

#endif /* DCBENCH_COHERENCE_H */
