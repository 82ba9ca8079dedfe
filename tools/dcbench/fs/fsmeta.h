/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsmeta.h - `dcbench fsmeta`: the metadata load (fsload.h) on a tree,
 * natively, through dcfs in each libdcache mode and through libfuse's
 * passthrough_ll example (fsmount.h), with the project's goals.
 */
#ifndef DCBENCH_FSMETA_H
#define DCBENCH_FSMETA_H

/* argv[0] is "fsmeta"; returns the exit status (0, 1, 2: cli.h). */
int dcb_fsmeta_main(int argc, char **argv);

#endif /* DCBENCH_FSMETA_H */
