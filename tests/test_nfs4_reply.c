// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_nfs4_reply.c - replies a broken or hostile NFS server could send
 * are refused, not read.
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
 * server stopped at a failed op, one cut short though it says every op
 * succeeded, and one whose op failed under a COMPOUND that says OK.  It
 * also hands it lengths no reply holds (which libnfs 4.0's decoder lets
 * through), a NUL in a text, READDIR names no directory holds and
 * cookies that would start a listing over, and checks the NFSv3
 * listings' checks of names and of a page's progress, pages that come
 * round again included, and the name an fsid gives its file system.  Built without
 * libnfs, it has nothing to check and says so.
 */
#include "harness.h"

#ifdef DC_HAVE_NFS
#include "nfs/nfs4.c"

static int took;			/* calls of the caller's take */
static nfsstat3 status_seen;		/* the status it was given */
static char link_seen[16];		/* the text READLINK answered */
static char names_seen[64];		/* READDIR's names, each and ' ' */

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

static int take_getattr(void *res, void *arg)
{
	GETATTR3res *out = res;

	(void)arg;
	took++;
	status_seen = out->status;
	return 0;
}

static int take_readdir3(void *res, void *arg)
{
	READDIR3res *out = res;
	const entry3 *e;
	size_t at = 0;

	(void)arg;
	took++;
	status_seen = out->status;
	if (out->status != NFS3_OK)
		return 0;
	for (e = out->READDIR3res_u.resok.reply.entries; e; e = e->nextentry)
		at += (size_t)snprintf(names_seen + at, sizeof(names_seen) - at,
				       "%s ", e->name);
	return 0;
}

static char fh[] = "handle";

/* proc with args as nfs4_exchange builds it, its ops recorded as it
 * records them; n ops. */
static struct v4call call_of(int proc, void *args, int (*take)(void *, void *),
			     unsigned n)
{
	struct v4call v = { .proc = proc, .take = take };
	struct compound cmp;
	struct open_owner own;

	memset(&cmp, 0, sizeof(cmp));
	CHECK_EQ(build(NULL, &cmp, &v, args, &own), 0);
	record_sent(&v, &cmp);
	CHECK_EQ(v.nsent, n);
	return v;
}

/* take4 on a reply of n results, status status. */
static int reply(struct v4call *v, nfsstat4 status, nfs_resop4 *res, unsigned n)
{
	COMPOUND4res r;

	memset(&r, 0, sizeof(r));
	r.status = status;
	r.resarray.resarray_len = n;
	r.resarray.resarray_val = res;
	took = 0;
	status_seen = (nfsstat3)-1;
	link_seen[0] = names_seen[0] = '\0';
	return take4(&r, v);
}

/* READLINK: PUTFH, READLINK. */
static int readlink_reply(nfsstat4 status, nfs_resop4 *res, unsigned n)
{
	READLINK3args a = { .symlink = { .data = { sizeof(fh), fh } } };
	struct v4call v = call_of(NFS3_READLINK, &a, take_readlink, 2);

	CHECK_EQ(v.i_main, 1);
	return reply(&v, status, res, n);
}

static void set_link(nfs_resop4 *o, u_int len, char *val)
{
	memset(o, 0, sizeof(*o));
	o->resop = OP_READLINK;
	o->nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link.utf8string_len = len;
	o->nfs_resop4_u.opreadlink.READLINK4res_u.resok4.link.utf8string_val = val;
}

static void test_ops(void)
{
	static char text[] = "abc", other[] = "xyz";
	nfs_resop4 res[3];

	memset(res, 0, sizeof(res));
	res[0].resop = OP_PUTFH;
	set_link(&res[1], 3, text);

	/* as asked: the link's text reaches the caller */
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), 0);
	CHECK_EQ(took, 1);
	CHECK(strcmp(link_seen, "abc") == 0);

	/* a READ's result where the READLINK's is: refused */
	memset(&res[1], 0, sizeof(res[1]));
	res[1].resop = OP_READ;
	res[1].nfs_resop4_u.opread.READ4res_u.resok4.eof = 3;
	res[1].nfs_resop4_u.opread.READ4res_u.resok4.data.data_len = 3;
	res[1].nfs_resop4_u.opread.READ4res_u.resok4.data.data_val = other;
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -EIO);
	CHECK_EQ(took, 0);

	/* a result more than the ops sent: refused */
	set_link(&res[1], 3, text);
	res[2].resop = OP_GETATTR;
	CHECK_EQ(readlink_reply(NFS4_OK, res, 3), -EIO);
	CHECK_EQ(took, 0);

	/* the COMPOUND OK, its READLINK failed (its result all zeros past
	 * the status, which would read as an empty text): refused */
	memset(&res[1], 0, sizeof(res[1]));
	res[1].resop = OP_READLINK;
	res[1].nfs_resop4_u.opreadlink.status = NFS4ERR_IO;
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -EIO);
	CHECK_EQ(took, 0);

	/* the server stopped at a PUTFH it refused: its error, answered */
	res[0].nfs_resop4_u.opputfh.status = NFS4ERR_STALE;
	CHECK_EQ(readlink_reply(NFS4ERR_STALE, res, 1), 0);
	CHECK_EQ(took, 1);
	CHECK_EQ(status_seen, NFS3ERR_STALE);
	CHECK(link_seen[0] == '\0');

	/* every op answered OK but the READLINK's result missing: refused */
	res[0].nfs_resop4_u.opputfh.status = NFS4_OK;
	CHECK_EQ(readlink_reply(NFS4_OK, res, 1), -EIO);
	CHECK_EQ(took, 0);
}

/*
 * Lengths no real reply has: libnfs 4.0's decoder passes one of 2^31 or
 * more with the pointer inside the reply (here, a 4-byte buffer), so a
 * reader that trusted it would allocate len + 1 = 0 bytes and copy 4 GiB.
 */
static void test_lengths(void)
{
	static char small[4] = "abc", nul[] = "a\0b";
	nfs_resop4 res[3];

	memset(res, 0, sizeof(res));
	res[0].resop = OP_PUTFH;

	set_link(&res[1], 0xffffffffu, small);
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -EIO);
	CHECK_EQ(took, 0);
	set_link(&res[1], 0x80000000u, small);
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -EIO);
	set_link(&res[1], 70000, small);	/* no file system's */
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -EIO);
	{
		static char path[DC_PATH_MAX];

		memset(path, 'p', sizeof(path));
		set_link(&res[1], DC_PATH_MAX, path);	/* as over NFSv3 */
		CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -ENAMETOOLONG);
		set_link(&res[1], DC_PATH_MAX - 1, path);
		CHECK_EQ(readlink_reply(NFS4_OK, res, 2), 0);
		CHECK_EQ(took, 1);
	}
	set_link(&res[1], 3, nul);		/* a NUL would cut it short */
	CHECK_EQ(readlink_reply(NFS4_OK, res, 2), -EIO);
	CHECK_EQ(took, 0);

	/* GETATTR (PUTFH, GETATTR): an attribute list 4 GiB long */
	{
		GETATTR3args a = { .object = { .data = { sizeof(fh), fh } } };
		struct v4call v = call_of(NFS3_GETATTR, &a, take_getattr, 2);
		uint32_t mask[2] = { 0, 0 };
		fattr4 *f = &res[1].nfs_resop4_u.opgetattr.GETATTR4res_u.resok4.obj_attributes;

		memset(&res[1], 0, sizeof(res[1]));
		res[1].resop = OP_GETATTR;
		mask[0] = 1u << FATTR4_TYPE;
		f->attrmask.bitmap4_len = 2;
		f->attrmask.bitmap4_val = mask;
		f->attr_vals.attrlist4_len = 0xffffffffu;
		f->attr_vals.attrlist4_val = small;
		CHECK_EQ(reply(&v, NFS4_OK, res, 2), -EIO);
		CHECK_EQ(took, 0);
		/* the same list at its true length: read */
		f->attr_vals.attrlist4_len = 4;
		memcpy(small, "\0\0\0\1", 4);	/* NF4REG */
		CHECK_EQ(reply(&v, NFS4_OK, res, 2), 0);
		CHECK_EQ(took, 1);
		CHECK_EQ(status_seen, NFS3_OK);
		/* a bitmap longer than any attribute asked for */
		f->attrmask.bitmap4_len = 0x40000000u;
		CHECK_EQ(reply(&v, NFS4_OK, res, 2), -EIO);
		CHECK_EQ(took, 0);
		memcpy(small, "abc", 4);
	}
}

/* READDIR from cookie 3 (PUTFH, GETATTR, READDIR: no "." or ".." made
 * up), its one entry named name (len bytes). */
static int readdir_reply(char *name, u_int len)
{
	READDIR3args a = { .dir = { .data = { sizeof(fh), fh } }, .cookie = 3,
			   .count = 4096 };
	struct v4call v = call_of(NFS3_READDIR, &a, take_readdir3, 3);
	nfs_resop4 res[3];
	entry4 e;

	memset(res, 0, sizeof(res));
	memset(&e, 0, sizeof(e));
	res[0].resop = OP_PUTFH;
	res[1].resop = OP_GETATTR;
	res[2].resop = OP_READDIR;
	e.cookie = 10;
	e.name.utf8string_len = len;
	e.name.utf8string_val = name;
	res[2].nfs_resop4_u.opreaddir.READDIR4res_u.resok4.reply.entries = &e;
	res[2].nfs_resop4_u.opreaddir.READDIR4res_u.resok4.reply.eof = 1;
	return reply(&v, NFS4_OK, res, 3);
}

static void test_readdir(void)
{
	static char x[4] = "xyz", big[300];
	READDIR3args a = { .dir = { .data = { sizeof(fh), fh } }, .count = 4096 };
	struct v4call v;
	nfs_resop4 res[5];
	entry4 e;

	CHECK_EQ(readdir_reply(x, 3), 0);
	CHECK_EQ(took, 1);
	CHECK(strcmp(names_seen, "xyz ") == 0);
	CHECK_EQ(readdir_reply(x, 0xffffffffu), -EIO);
	CHECK_EQ(readdir_reply(x, 0), -EIO);
	x[1] = '\0';
	CHECK_EQ(readdir_reply(x, 3), -EIO);
	x[1] = 'y';
	CHECK_EQ(took, 0);
	/* longer than DC_NAME_MAX, yet a name some file system holds: on to
	 * the callers, which skip it and keep its cookie */
	memset(big, 'b', sizeof(big));
	CHECK_EQ(readdir_reply(big, sizeof(big)), 0);
	CHECK_EQ(took, 1);

	/* from the start, at the export's root: "." and ".." made up, and
	 * the LOOKUPP for ".."'s fileid (PUTFH, GETATTR, READDIR, LOOKUPP,
	 * GETATTR) fails there, so the COMPOUND fails with 4 results of 5;
	 * the listing stands */
	v = call_of(NFS3_READDIR, &a, take_readdir3, 5);
	memset(res, 0, sizeof(res));
	memset(&e, 0, sizeof(e));
	res[0].resop = OP_PUTFH;
	res[1].resop = OP_GETATTR;
	res[2].resop = OP_READDIR;
	res[3].resop = OP_LOOKUPP;
	res[3].nfs_resop4_u.oplookupp.status = NFS4ERR_NOENT;
	e.cookie = 10;
	e.name.utf8string_len = 3;
	e.name.utf8string_val = x;
	res[2].nfs_resop4_u.opreaddir.READDIR4res_u.resok4.reply.entries = &e;
	res[2].nfs_resop4_u.opreaddir.READDIR4res_u.resok4.reply.eof = 1;
	CHECK_EQ(reply(&v, NFS4ERR_NOENT, res, 4), 0);
	CHECK_EQ(took, 1);
	CHECK_EQ(status_seen, NFS3_OK);
	CHECK(strcmp(names_seen, ". .. xyz ") == 0);
}

/* LOOKUP (PUTFH, GETATTR, LOOKUP, GETFH, GETATTR) cut short before its
 * last GETATTR under a COMPOUND that says OK: refused, where the reader
 * would have answered without the attributes. */
static int take_lookup(void *res, void *arg)
{
	(void)res;
	(void)arg;
	took++;
	return 0;
}

static void test_short(void)
{
	static char name[] = "f", handle[] = "fh";
	LOOKUP3args a = { .what = { .dir = { .data = { sizeof(fh), fh } },
				    .name = name } };
	struct v4call v = call_of(NFS3_LOOKUP, &a, take_lookup, 5);
	nfs_resop4 res[5];

	memset(res, 0, sizeof(res));
	res[0].resop = OP_PUTFH;
	res[1].resop = OP_GETATTR;
	res[2].resop = OP_LOOKUP;
	res[3].resop = OP_GETFH;
	res[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_len = 2;
	res[3].nfs_resop4_u.opgetfh.GETFH4res_u.resok4.object.nfs_fh4_val = handle;
	res[4].resop = OP_GETATTR;
	CHECK_EQ(reply(&v, NFS4_OK, res, 5), 0);	/* whole: answered */
	CHECK_EQ(took, 1);
	CHECK_EQ(reply(&v, NFS4_OK, res, 4), -EIO);
	CHECK_EQ(took, 0);
}

/*
 * A listing of `tail` pages, then a cycle of `cycle` pages that comes
 * round for ever: refused within 3 x (tail + cycle) + 2 pages.  A long
 * listing whose cookies never repeat is not.
 */
static void check_loop(uint64_t tail, uint64_t cycle)
{
	struct nfsrpc_loop loop = { 0 };
	cookie3 asked = 0, last;
	uint64_t page, bound = 3 * (tail + cycle) + 2;

	for (page = 0; page <= bound; page++) {
		/* the cookie page ends on: 100, 101... then round the cycle */
		last = 100 + (page < tail ? page : tail + (page - tail) % cycle);
		if (!nfsrpc_page_moves(&loop, asked, last, page))
			break;
		asked = last;
	}
	if (page > bound)
		fprintf(stderr, "a cycle of %llu after %llu pages not refused\n",
			(unsigned long long)cycle, (unsigned long long)tail);
	CHECK(page <= bound);
}

static void test_page_loops(void)
{
	struct nfsrpc_loop loop = { 0 };
	uint64_t page;
	bool moved = true;

	for (uint64_t tail = 0; tail < 40; tail += 3)
		for (uint64_t cycle = 2; cycle < 70; cycle += 5)
			check_loop(tail, cycle);
	check_loop(1000, 2);
	check_loop(3, 1000);
	for (page = 0; page < 100000 && moved; page++)
		moved = nfsrpc_page_moves(&loop, page ? 7 * page : 0, 7 * (page + 1),
					  page);
	CHECK(moved);
}

/* An NFSv4 fsid (major, minor) as the cache's 32-bit name of its file
 * system. */
static uint32_t fsid_name(uint64_t major, uint64_t minor)
{
	unsigned char b[16];
	uint32_t mask[2] = { 1u << FATTR4_FSID, 0 };
	fattr4 f = { .attrmask = { 2, mask }, .attr_vals = { 16, (char *)b } };
	struct attrs4 at;

	for (int i = 0; i < 8; i++) {
		b[i] = (unsigned char)(major >> (56 - 8 * i));
		b[8 + i] = (unsigned char)(minor >> (56 - 8 * i));
	}
	CHECK_EQ(nfs4_attrs_take(&f, &at), 0);
	return nfsrpc_fsid32(at.a.fsid);
}

/* Two file systems whose fsids differ in one part only never share a
 * name: a disk's partitions (Linux's server: major, minor), and NFSv3
 * fsids that differ in their high half alone. */
static void test_fsid(void)
{
	CHECK(fsid_name(8, 1) != fsid_name(8, 2));
	CHECK(fsid_name(8, 1) != fsid_name(9, 1));
	CHECK(fsid_name(8, 1) == fsid_name(8, 1));
	CHECK(nfsrpc_fsid32(1ull << 32 | 5) != nfsrpc_fsid32(2ull << 32 | 5));
}

/* The checks the NFSv3 listings make of each page (nfsio.c, nfsfs.c). */
static void test_pages(void)
{
	char long_name[DC_NAME_MAX + 2];

	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[DC_NAME_MAX + 1] = '\0';
	CHECK_EQ(nfsrpc_name("a"), 0);
	CHECK_EQ(nfsrpc_name("."), 0);
	CHECK_EQ(nfsrpc_name(".."), 0);
	CHECK_EQ(nfsrpc_name(""), -EIO);
	CHECK_EQ(nfsrpc_name(NULL), -EIO);
	CHECK_EQ(nfsrpc_name("a/b"), -EIO);
	CHECK_EQ(nfsrpc_name(long_name), 1);		/* skipped */
	long_name[DC_NAME_MAX] = '\0';
	CHECK_EQ(nfsrpc_name(long_name), 0);

	CHECK(nfsrpc_page_moves(&(struct nfsrpc_loop){ 0 }, 0, 5, 10));
	CHECK(nfsrpc_page_moves(&(struct nfsrpc_loop){ 0 }, 5, 9, 10));
	/* the same page again */
	CHECK(!nfsrpc_page_moves(&(struct nfsrpc_loop){ 0 }, 5, 5, 10));
	/* back to the start */
	CHECK(!nfsrpc_page_moves(&(struct nfsrpc_loop){ 0 }, 5, 0, 10));
	CHECK(!nfsrpc_page_moves(&(struct nfsrpc_loop){ 0 }, 5, 9,
				 NFSRPC_LIST_MAX + 1));
	test_page_loops();
}

int main(void)
{
	test_ops();
	test_lengths();
	test_readdir();
	test_short();
	test_pages();
	test_fsid();
	return h_done("test_nfs4_reply");
}
#else
int main(void)
{
	SKIP("built without libnfs");
	return h_done("test_nfs4_reply");
}
#endif
