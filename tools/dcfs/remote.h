/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * remote.h - dcfs over an NFS export (remote.c), built where libnfs is.
 */
#ifndef DCFS_REMOTE_H
#define DCFS_REMOTE_H

#include <string.h>

/* Is source an export (nfs://...) rather than a directory? */
static inline int remote_source(const char *source)
{
	return source && !strncmp(source, "nfs://", 6);
}

/* dcfs's whole run for "dcfs nfs://HOST/EXPORT MOUNTPOINT ...": its exit
 * status. */
int remote_main(int argc, char **argv);

#endif
