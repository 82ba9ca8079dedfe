/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * nfs4_attr.h - NFSv4 attributes to and from NFSv3's (nfs4_attr.c).
 * Private to tools/nfs: nfs4.c sends NFSv3's calls as COMPOUNDs.
 */
#ifndef DCNFS_NFS4_ATTR_H
#define DCNFS_NFS4_ATTR_H

#include <stdint.h>

#include <nfsc/libnfs.h>
#include <nfsc/libnfs-raw.h>
#include <nfsc/libnfs-raw-nfs.h>
#include <nfsc/libnfs-raw-nfs4.h>

#define ATTR_BYTES	128	/* one encoded fattr4 we send at most */
#define NOBODY		65534u	/* an owner name no number stands for */

/* Attribute bits, as fattr4's bitmap words hold them. */
#define W0(n)	(1u << (n))
#define W1(n)	(1u << ((n) - 32))

/* The attributes a GETATTR answered. */
struct attrs4 {
	fattr3 a;
	uint64_t files_avail, files_free, files_total;
	uint64_t space_avail, space_free, space_total;
};

/* A fattr4 into at: every attribute its bitmap says it holds; -EIO for
 * one not known here (its size is not) or a short list. */
int nfs4_attrs_take(const fattr4 *f, struct attrs4 *at);
/* An NFSv3 sattr3 as a fattr4 into f, its bitmap in mask and its bytes
 * in buf (ATTR_BYTES); -EINVAL if they do not fit. */
int nfs4_attrs_put(const sattr3 *s, fattr4 *f, uint32_t mask[2],
		   unsigned char *buf);
/* f holds one attribute, the type (for VERIFY and NVERIFY): its bitmap
 * in *mask, its value in val. */
void nfs4_attr_type(fattr4 *f, uint32_t *mask, unsigned char val[4],
		    uint32_t type);

#endif
