/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * micro.h - dcbench micro: the micro-benchmark suite (docs/micro.md).
 *
 * Measures libdcache's rcu, rwlock and global modes against three
 * references in one run on one machine: the kernel's own dcache (fstatat
 * on a tmpfs copy of the tree), liburcu's cds_lfht walked one component
 * at a time, and one mutex around a chained hash table.
 *
 * Needs -lurcu-cds (cds_lfht) and -llzma on the link line besides the
 * library's own -lurcu-memb -lurcu-common -lpthread.
 */
#ifndef DCBENCH_MICRO_H
#define DCBENCH_MICRO_H

/*
 * `dcbench micro [OPTIONS]`: argv[0] is "micro".  Human text on stdout
 * (stderr with --json, which writes one JSON document to stdout).
 * Returns the exit status: 0 success, 1 failure (a setup error or a wrong
 * answer from any implementation), 2 usage error.
 */
int dcb_micro_main(int argc, char **argv);

#endif /* DCBENCH_MICRO_H */
