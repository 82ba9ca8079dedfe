/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernbench.h - `dcbench kernbench`: a kernel tree built natively and
 * through dcfs in each libdcache mode, timed the way kernbench did.
 */
#ifndef DCBENCH_KERNBENCH_H
#define DCBENCH_KERNBENCH_H

/* argv[0] is "kernbench"; returns the exit status (0, 1, 2: cli.h). */
int dcb_kernbench_main(int argc, char **argv);

#endif /* DCBENCH_KERNBENCH_H */
