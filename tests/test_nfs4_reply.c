// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_nfs4_reply.c - a COMPOUND reply that does not answer the ops that
 * were sent is refused, not read.
 *
 * libnfs decodes each result of a COMPOUND as the op the server names in
 * it.  tools/nfs/nfs4.c reads the result at an op's index as that op's:
 * a server that named another op there (a broken or hostile one) would
 * have its fields read as the wrong type, a flag as a length and a
 * count's neighbour as a pointer.  This program is nfs4.c itself, built
 * with these checks, and hands its reply reader (take4) replies made by
 * hand, for a READLINK built and recorded as nfs4_exchange does it: one
 * that answers as asked, one with a READ's result where the READLINK's
 * should be, one with more results than ops, one cut short where the
 * server stopped at a failed op, and one cut short though it says every
 * op succeeded.  Built without
 * libnfs, it has nothing to check and says so.
 */
#include "harness.h"

#ifdef DC_HAVE_NFS
#include "nfs/nfs4.c"

static int took;			/* calls of the caller's take */
static nfsstat3 status_seen;		/* the status it was given */
static char link_seen[16];		/* the text READLINK answered */

static int take_readlink(void *res, void *arg)
{
	READLINK3res *out = res;

	(void)arg;
	took++;
	status_seen = out->status;
	if (out->status == NFS3_OK)
		snprintf(link_seen, sizeof(link_seen), "%s",
			 out->READLINK3res_u.resok.data);
	return 0;
}

/* A READLINK as nfs4_exchange sends it (PUTFH, READLINK), its ops
 * recorded as it records them. */
static struct v4call readlink_call(void)
{
	static char fh[] = "handle";
	struct v4call v = { .proc = NFS3_READLINK, .take = take_readlink };
	READLINK3args a = { .symlink = { .data = { sizeof(fh), fh } } };
	struct compound cmp;
	struct open_owner own;

	memset(&cmp, 0, sizeof(cmp));
	CHECK_EQ(build(NULL, &cmp, &v, &a, &own), 0);
	record_sent(&v, &cmp);
	CHECK_EQ(v.nsent, 2);
	CHECK_EQ(v.i_main, 1);
	return v;
}

static int take(nfsstat4 status, nfs_resop4 *res, unsigned n)
{
	COMPOUND4res r;
	struct v4call v = readlink_call();

	memset(&r, 0, sizeof(r));
	r.status = status;
	r.resarray.resarray_len = n;
	r.resarray.resarray_val = res;
	took = 0;
	link_seen[0] = '\0';
	return take4(&r, &v);
}

int main(void)
{
	static char text[] = "abc", other[] = "xyz";
	nfs_resop4 res[3];

	memset(res, 0, sizeof(res));
	res[0].resop = OP_PUTFH;
	res[1].resop = OP_READLINK;
	res[1].nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link.utf8string_len = 3;
	res[1].nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link.utf8string_val = text;

	/* as asked: the link's text reaches the caller */
	CHECK_EQ(take(NFS4_OK, res, 2), 0);
	CHECK_EQ(took, 1);
	CHECK(strcmp(link_seen, "abc") == 0);

	/* a READ's result where the READLINK's is: refused */
	memset(&res[1], 0, sizeof(res[1]));
	res[1].resop = OP_READ;
	res[1].nfs_resop4_u.opread.READ4res_u.resok4.eof = 3;
	res[1].nfs_resop4_u.opread.READ4res_u.resok4.data.data_len = 3;
	res[1].nfs_resop4_u.opread.READ4res_u.resok4.data.data_val = other;
	CHECK_EQ(take(NFS4_OK, res, 2), -EIO);
	CHECK_EQ(took, 0);

	/* a result more than the ops sent: refused */
	memset(&res[1], 0, sizeof(res[1]));
	res[1].resop = OP_READLINK;
	res[1].nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link.utf8string_len = 3;
	res[1].nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link.utf8string_val = text;
	res[2].resop = OP_GETATTR;
	CHECK_EQ(take(NFS4_OK, res, 3), -EIO);
	CHECK_EQ(took, 0);

	/* the server stopped at a PUTFH it refused: its error, answered */
	memset(&res[0], 0, sizeof(res[0]));
	res[0].resop = OP_PUTFH;
	res[0].nfs_resop4_u.opputfh.status = NFS4ERR_STALE;
	CHECK_EQ(take(NFS4ERR_STALE, res, 1), 0);
	CHECK_EQ(took, 1);
	CHECK_EQ(status_seen, NFS3ERR_STALE);
	CHECK(link_seen[0] == '\0');

	/* every op answered OK but the READLINK's result missing: refused */
	res[0].nfs_resop4_u.opputfh.status = NFS4_OK;
	CHECK_EQ(take(NFS4_OK, res, 1), -EIO);
	CHECK_EQ(took, 0);

	return h_done("test_nfs4_reply");
}
#else
int main(void)
{
	SKIP("built without libnfs");
	return h_done("test_nfs4_reply");
}
#endif
