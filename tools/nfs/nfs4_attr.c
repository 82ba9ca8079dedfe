// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nfs4_attr.c - NFSv4 attributes (fattr4: a bitmap, then each set
 * attribute's XDR in number order) read into NFSv3's fattr3 and written
 * from its sattr3, for nfs4.c.  Owners travel as numeric strings, which
 * the server is set to send and take.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nfs/nfs4_attr.h"

/* ---- fattr4: decoding ----------------------------------------------------- */

struct xdr_in {
	const unsigned char *p, *end;
};

static int get32(struct xdr_in *x, uint32_t *v)
{
	if (x->end - x->p < 4)
		return -EIO;
	*v = (uint32_t)x->p[0] << 24 | (uint32_t)x->p[1] << 16 |
	     (uint32_t)x->p[2] << 8 | x->p[3];
	x->p += 4;
	return 0;
}

static int get64(struct xdr_in *x, uint64_t *v)
{
	uint32_t hi, lo;

	if (get32(x, &hi) || get32(x, &lo))
		return -EIO;
	*v = (uint64_t)hi << 32 | lo;
	return 0;
}

static int get_time(struct xdr_in *x, nfstime3 *t)
{
	uint64_t s;
	uint32_t ns;

	if (get64(x, &s) || get32(x, &ns))
		return -EIO;
	t->seconds = (u_int)s;	/* fattr3's seconds are 32 bits */
	t->nseconds = ns;
	return 0;
}

/* An owner string: a number, or nobody for a name this client cannot map. */
static int get_owner(struct xdr_in *x, uint32_t *id)
{
	uint32_t len, pad;
	char buf[16], *end;
	unsigned long v;

	if (get32(x, &len))
		return -EIO;
	pad = (4 - (len & 3)) & 3;
	if ((size_t)(x->end - x->p) < (size_t)len + pad)
		return -EIO;
	*id = NOBODY;
	if (len && len < sizeof(buf)) {
		memcpy(buf, x->p, len);
		buf[len] = '\0';
		errno = 0;
		v = strtoul(buf, &end, 10);
		if (!errno && !*end && buf[0] != '-' && v <= UINT32_MAX)
			*id = (uint32_t)v;
	}
	x->p += len + pad;
	return 0;
}

/* One attribute, number n, of x into at. */
static int get_attr(struct xdr_in *x, unsigned n, struct attrs4 *at)
{
	fattr3 *a = &at->a;
	uint64_t fsid_minor;
	uint32_t v;

	switch (n) {
	case FATTR4_TYPE:
		if (get32(x, &v))
			return -EIO;
		/* NF4REG..NF4FIFO are NF3REG..NF3FIFO; named attributes are
		 * no file here */
		a->type = v >= NF4REG && v <= NF4FIFO ? (ftype3)v : (ftype3)0;
		return 0;
	case FATTR4_SIZE:		return get64(x, &a->size);
	case FATTR4_FSID:
		if (get64(x, &a->fsid) || get64(x, &fsid_minor))
			return -EIO;
		/* NFSv4's fsid is two numbers (Linux's server: the device's
		 * major and minor): fold the second into every bit, or two
		 * file systems of one disk would share a name */
		a->fsid ^= fsid_minor * 0x9e3779b97f4a7c15ull;
		return 0;
	case FATTR4_FILEID:		return get64(x, &a->fileid);
	case FATTR4_FILES_AVAIL:	return get64(x, &at->files_avail);
	case FATTR4_FILES_FREE:		return get64(x, &at->files_free);
	case FATTR4_FILES_TOTAL:	return get64(x, &at->files_total);
	case FATTR4_MODE:
		if (get32(x, &v))
			return -EIO;
		a->mode = v & 07777;
		return 0;
	case FATTR4_NUMLINKS:		return get32(x, &a->nlink);
	case FATTR4_OWNER:		return get_owner(x, &a->uid);
	case FATTR4_OWNER_GROUP:	return get_owner(x, &a->gid);
	case FATTR4_RAWDEV:
		return get32(x, &a->rdev.specdata1) ||
		       get32(x, &a->rdev.specdata2) ? -EIO : 0;
	case FATTR4_SPACE_AVAIL:	return get64(x, &at->space_avail);
	case FATTR4_SPACE_FREE:		return get64(x, &at->space_free);
	case FATTR4_SPACE_TOTAL:	return get64(x, &at->space_total);
	case FATTR4_SPACE_USED:		return get64(x, &a->used);
	case FATTR4_TIME_ACCESS:	return get_time(x, &a->atime);
	case FATTR4_TIME_METADATA:	return get_time(x, &a->ctime);
	case FATTR4_TIME_MODIFY:	return get_time(x, &a->mtime);
	default:
		return -EIO;	/* not asked for: its size is unknown here */
	}
}

/*
 * Lengths the server sent are bounded before they are used: libnfs
 * 4.0's decoder lets a length of 2^31 or more through with the data
 * pointer inside the reply, so end would lie far past it.  The attributes
 * read here take about 100 bytes and two owner strings; a bitmap of the
 * attributes asked for is two or three words.
 */
#define ATTRS_MAX_BYTES	65536
#define ATTRS_MAX_WORDS	8

int nfs4_attrs_take(const fattr4 *f, struct attrs4 *at)
{
	struct xdr_in x;
	unsigned w, b;

	memset(at, 0, sizeof(*at));
	if (f->attr_vals.attrlist4_len > ATTRS_MAX_BYTES ||
	    f->attrmask.bitmap4_len > ATTRS_MAX_WORDS)
		return -EIO;
	x.p = (const unsigned char *)f->attr_vals.attrlist4_val;
	x.end = x.p + f->attr_vals.attrlist4_len;
	for (w = 0; w < f->attrmask.bitmap4_len; w++)
		for (b = 0; b < 32; b++)
			if (f->attrmask.bitmap4_val[w] & (1u << b) &&
			    get_attr(&x, w * 32 + b, at))
				return -EIO;
	return 0;
}

/* ---- fattr4: encoding ------------------------------------------------------- */

struct xdr_out {
	unsigned char *p, *end;
	int err;
};

static void put32(struct xdr_out *x, uint32_t v)
{
	if (x->end - x->p < 4) {
		x->err = -EINVAL;
		return;
	}
	x->p[0] = (unsigned char)(v >> 24);
	x->p[1] = (unsigned char)(v >> 16);
	x->p[2] = (unsigned char)(v >> 8);
	x->p[3] = (unsigned char)v;
	x->p += 4;
}

static void put64(struct xdr_out *x, uint64_t v)
{
	put32(x, (uint32_t)(v >> 32));
	put32(x, (uint32_t)v);
}

/* A uid or gid as the numeric owner string the server is set to take. */
static void put_owner(struct xdr_out *x, uint32_t id)
{
	char buf[16];
	int n = snprintf(buf, sizeof(buf), "%" PRIu32, id);

	put32(x, (uint32_t)n);
	if (x->end - x->p < ((n + 3) & ~3)) {
		x->err = -EINVAL;
		return;
	}
	memset(x->p, 0, (size_t)((n + 3) & ~3));
	memcpy(x->p, buf, (size_t)n);
	x->p += (n + 3) & ~3;
}

static void put_settime(struct xdr_out *x, const set_atime *s)
{
	/* set_atime and set_mtime are one layout: how, then the time */
	put32(x, s->set_it == SET_TO_SERVER_TIME ? SET_TO_SERVER_TIME4 :
					    SET_TO_CLIENT_TIME4);
	if (s->set_it == SET_TO_CLIENT_TIME) {
		put64(x, s->set_atime_u.atime.seconds);
		put32(x, s->set_atime_u.atime.nseconds);
	}
}

_Static_assert(sizeof(set_atime) == sizeof(set_mtime), "set_atime");

int nfs4_attrs_put(const sattr3 *s, fattr4 *f, uint32_t mask[2],
		     unsigned char *buf)
{
	struct xdr_out x = { .p = buf, .end = buf + ATTR_BYTES };

	mask[0] = mask[1] = 0;
	/* in attribute number order, as XDR lays them out */
	if (s->size.set_it) {
		mask[0] |= W0(FATTR4_SIZE);
		put64(&x, s->size.set_size3_u.size);
	}
	if (s->mode.set_it) {
		mask[1] |= W1(FATTR4_MODE);
		put32(&x, s->mode.set_mode3_u.mode & 07777);
	}
	if (s->uid.set_it) {
		mask[1] |= W1(FATTR4_OWNER);
		put_owner(&x, s->uid.set_uid3_u.uid);
	}
	if (s->gid.set_it) {
		mask[1] |= W1(FATTR4_OWNER_GROUP);
		put_owner(&x, s->gid.set_gid3_u.gid);
	}
	if (s->atime.set_it != DONT_CHANGE) {
		mask[1] |= W1(FATTR4_TIME_ACCESS_SET);
		put_settime(&x, &s->atime);
	}
	if (s->mtime.set_it != DONT_CHANGE) {
		mask[1] |= W1(FATTR4_TIME_MODIFY_SET);
		put_settime(&x, (const set_atime *)&s->mtime);
	}
	f->attrmask.bitmap4_len = 2;
	f->attrmask.bitmap4_val = mask;
	f->attr_vals.attrlist4_len = (u_int)(x.p - buf);
	f->attr_vals.attrlist4_val = (char *)buf;
	return x.err;
}

void nfs4_attr_type(fattr4 *f, uint32_t *mask, unsigned char val[4],
		    uint32_t type)
{
	struct xdr_out x = { .p = val, .end = val + 4 };

	*mask = W0(FATTR4_TYPE);
	put32(&x, type);
	f->attrmask.bitmap4_len = 1;
	f->attrmask.bitmap4_val = mask;
	f->attr_vals.attrlist4_len = 4;
	f->attr_vals.attrlist4_val = (char *)val;
}
