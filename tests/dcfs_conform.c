// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * dcfs_conform.c - a fixed script of POSIX operations, for test_dcfs.sh.
 *
 *   dcfs_conform setup DIR [noxattr]   (as root) fixtures: files and
 *                              directories owned by root with various
 *                              permissions (noxattr: without the extended
 *                              attributes, for file systems that have none)
 *   dcfs_conform run DIR [nfs3]   the script, in DIR/work, as whoever runs
 *                              it (nfs3: without what NFSv3 cannot carry --
 *                              fallocate, RENAME_EXCHANGE, extended
 *                              attributes -- each said as skipped)
 *   dcfs_conform nfs3 DIR      what "run ... nfs3" leaves out, tried in DIR:
 *                              one line each, with its errno's name
 *   dcfs_conform holdwrite FILE   write FILE and keep it open: "written",
 *                              then, after a line on stdin, fsync through
 *                              a second descriptor of it, close a third
 *                              opened for reading, fsync and close the
 *                              first, each said with its errno's name
 *   dcfs_conform stress DIR ID N   one concurrent client (see stress())
 *   dcfs_conform fsync FILE N  append N records, fsync after each, and
 *                              print the count of records made durable
 *
 * "run" prints one line per operation: its name, then "ok" or the errno's
 * name, then what the operation left behind (type, mode, owner, size,
 * links, contents, listings).  It prints nothing that legitimately differs
 * between two directories (inode numbers, device, the current time), so
 * the output of a run on a plain directory and on dcfs must be identical,
 * line for line, for the same user.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static int nline;
static int nfs3;	/* run ... nfs3 */

static const char *ename(int e)
{
	static char buf[16];

	switch (e) {
	case 0: return "ok";
#define E(x) case x: return #x;
	E(ENOENT) E(EEXIST) E(ENOTDIR) E(EISDIR) E(ENOTEMPTY) E(EINVAL)
	E(EACCES) E(EPERM) E(ELOOP) E(ENAMETOOLONG) E(ENODATA) E(ERANGE)
	E(EXDEV) E(EBADF) E(EBUSY) E(EMLINK) E(ENOSPC) E(EROFS) E(ETXTBSY)
	E(EOPNOTSUPP) E(ESTALE) E(EIO) E(ENXIO) E(EFBIG) E(EMFILE) E(ENOSYS)
	E(EFAULT) E(ESPIPE) E(ENOTCONN)
#undef E
	}
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("%03d ", ++nline);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* The result of a call that returns -1 and sets errno on failure. */
static const char *res(long r)
{
	return ename(r < 0 ? errno : 0);
}

/* A printable form of a name (odd bytes as \xNN). */
static const char *shown(const char *s)
{
	static char buf[4 * 256 + 1];
	char *q = buf;

	for (; *s && q < buf + sizeof(buf) - 5; s++) {
		unsigned char c = (unsigned char)*s;

		if (c > 32 && c < 127 && c != '\\')
			*q++ = (char)c;
		else
			q += sprintf(q, "\\x%02x", c);
	}
	*q = '\0';
	return buf;
}

static const char *ftype(mode_t m)
{
	return S_ISREG(m) ? "reg" : S_ISDIR(m) ? "dir" : S_ISLNK(m) ? "lnk" :
	       S_ISFIFO(m) ? "fifo" : S_ISCHR(m) ? "chr" : S_ISBLK(m) ? "blk" :
	       S_ISSOCK(m) ? "sock" : "?";
}

/* What a name is now: lstat, summarised. */
static const char *st(const char *path)
{
	static char buf[256];
	struct stat s;

	if (lstat(path, &s) < 0)
		return ename(errno);
	snprintf(buf, sizeof(buf), "%s %04o %u:%u size=%lld nlink=%lu%s",
		 ftype(s.st_mode), (unsigned)(s.st_mode & 07777),
		 (unsigned)s.st_uid, (unsigned)s.st_gid,
		 S_ISDIR(s.st_mode) ? 0LL : (long long)s.st_size,
		 S_ISDIR(s.st_mode) ? 0UL : (unsigned long)s.st_nlink,
		 S_ISCHR(s.st_mode) ? (major(s.st_rdev) == 1 ? " rdev=1:3" : " rdev=?") : "");
	return buf;
}

static void show(const char *label, const char *path)
{
	say("%s: %s", label, st(path));
}

/* The contents of a file (up to 200 bytes) or the errno. */
static const char *cat(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return ename(errno);
	n = read(fd, buf, 200);
	close(fd);
	if (n < 0)
		return ename(errno);
	buf[n] = '\0';
	return shown(buf);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's names, sorted, with their types. */
static void listing(const char *label, const char *path)
{
	char *names[512], line[8192];
	size_t n = 0, i, len = 0;
	struct dirent *e;
	DIR *d = opendir(path);

	if (!d) {
		say("%s: %s", label, ename(errno));
		return;
	}
	while ((e = readdir(d)) && n < 512)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	line[0] = '\0';
	for (i = 0; i < n; i++) {
		char p[4096];
		struct stat s;

		snprintf(p, sizeof(p), "%s/%s", path, names[i]);
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%s(%s)",
					i ? "," : "", shown(names[i]),
					lstat(p, &s) == 0 ? ftype(s.st_mode) : "?");
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		free(names[i]);
	}
	say("%s: [%s]", label, line);
}

static int put(const char *path, int flags, mode_t mode, const char *text)
{
	int fd = open(path, flags, mode);
	ssize_t n = 0;

	if (fd < 0)
		return -1;
	if (text)
		n = write(fd, text, strlen(text));
	close(fd);
	return n < 0 ? -1 : 0;
}

static void same_inode(const char *label, const char *a, const char *b)
{
	struct stat x, y;

	if (lstat(a, &x) < 0 || lstat(b, &y) < 0)
		say("%s: %s", label, ename(errno));
	else
		say("%s: %s", label, x.st_ino == y.st_ino ? "same" : "different");
}

static void times(const char *label, const char *path)
{
	struct stat s;
	time_t now = time(NULL);

	if (lstat(path, &s) < 0) {
		say("%s: %s", label, ename(errno));
		return;
	}
#define T(t) (llabs((long long)(t) - (long long)now) < 120 ? 0LL : (long long)(t))
	say("%s: atime=%lld.%09ld mtime=%lld.%09ld (0: now)", label,
	    T(s.st_atim.tv_sec), T(s.st_atim.tv_sec) ? s.st_atim.tv_nsec : 0,
	    T(s.st_mtim.tv_sec), T(s.st_mtim.tv_sec) ? s.st_mtim.tv_nsec : 0);
#undef T
}

/* ---- setup (as root) ------------------------------------------------------ */

static int setup(int xattrs)
{
	int ok = 1;

	ok &= mkdir("ro_dir", 0755) == 0;
	ok &= put("ro_dir/f", O_CREAT | O_WRONLY, 0644, "read only dir\n") == 0;
	ok &= put("secret", O_CREAT | O_WRONLY, 0600, "s3cret\n") == 0;
	ok &= mkdir("sticky", 0777) == 0 && chmod("sticky", 01777) == 0;
	ok &= put("sticky/rootfile", O_CREAT | O_WRONLY, 0644, "root's\n") == 0;
	ok &= put("other_rw", O_CREAT | O_WRONLY, 0666, "anyone\n") == 0;
	ok &= put("setid", O_CREAT | O_WRONLY, 0644, "set-id\n") == 0 &&
	      chmod("setid", 06777) == 0;
	ok &= put("setid_trunc", O_CREAT | O_WRONLY, 0644, "set-id\n") == 0 &&
	      chmod("setid_trunc", 06777) == 0;
	ok &= put("setid_otrunc", O_CREAT | O_WRONLY, 0644, "set-id\n") == 0 &&
	      chmod("setid_otrunc", 06777) == 0;
	ok &= mkdir("noexec", 0700) == 0;
	ok &= put("noexec/f", O_CREAT | O_WRONLY, 0644, "x") == 0;
	ok &= mkdir("sg", 0777) == 0 && chown("sg", 0, 4242) == 0 &&
	      chmod("sg", 02777) == 0;
	ok &= mkdir("grp", 0770) == 0 && chown("grp", 0, 4242) == 0 &&
	      chmod("grp", 0770) == 0;
	ok &= mkdir("work", 0777) == 0 && chmod("work", 0777) == 0;
	if (xattrs) {
		ok &= setxattr("other_rw", "user.root", "r", 1, 0) == 0;
		ok &= setxattr("other_rw", "trusted.root", "t", 1, 0) == 0;
	}
	if (!ok)
		perror("setup");
	return ok ? 0 : 1;
}

/* ---- the script ---------------------------------------------------------- */

static void files(void)
{
	char buf[64];
	int fd;
	ssize_t n;

	fd = open("f1", O_CREAT | O_EXCL | O_WRONLY, 0644);
	say("create f1 excl: %s", res(fd >= 0 ? 0 : -1));
	if (fd >= 0)
		close(fd);
	show("f1", "f1");
	fd = open("f1", O_WRONLY);
	n = fd < 0 ? -1 : write(fd, "hello world\n", 12);
	say("write f1: %s %zd", res(n), n);
	if (fd >= 0)
		close(fd);
	say("read f1: %s", cat("f1"));
	say("create f1 excl again: %s", res(open("f1", O_CREAT | O_EXCL | O_WRONLY, 0644)));
	say("truncate f1 5: %s", res(truncate("f1", 5)));
	say("read f1: %s", cat("f1"));
	fd = open("f1", O_RDWR);
	say("ftruncate f1 100: %s", res(fd < 0 ? -1 : ftruncate(fd, 100)));
	show("f1", "f1");
	n = fd < 0 ? -1 : pwrite(fd, "XY", 2, 1);
	say("pwrite f1 at 1: %s", res(n));
	say("fsync f1: %s", res(fd < 0 ? -1 : fsync(fd)));
	say("fdatasync f1: %s", res(fd < 0 ? -1 : fdatasync(fd)));
	if (nfs3)
		say("fallocate f1: skipped (NFSv3 has no ALLOCATE)");
	else
		say("fallocate f1: %s", res(fd < 0 ? -1 : fallocate(fd, 0, 0, 8192)));
	show("f1", "f1");
	say("lseek data: %lld", fd < 0 ? -1LL : (long long)lseek(fd, 0, SEEK_DATA));
	if (fd >= 0)
		close(fd);
	fd = open("f1", O_WRONLY | O_APPEND);
	n = fd < 0 ? -1 : write(fd, "tail", 4);
	say("append f1: %s", res(n));
	if (fd >= 0)
		close(fd);
	show("f1", "f1");
	fd = open("f1", O_WRONLY | O_TRUNC);
	say("open f1 O_TRUNC: %s", res(fd));
	if (fd >= 0)
		close(fd);
	show("f1", "f1");
	put("f1", O_WRONLY, 0, "content of f1\n");
	say("chmod f1 0600: %s", res(chmod("f1", 0600)));
	show("f1", "f1");
	say("chmod f1 04755: %s", res(chmod("f1", 04755)));
	show("f1", "f1");
	fd = open("f1", O_WRONLY);
	n = fd < 0 ? -1 : write(fd, "c", 1);
	say("write to setuid f1: %s", res(n));
	if (fd >= 0)
		close(fd);
	show("f1 (setuid cleared if not root)", "f1");
	say("chmod f1 0644: %s", res(chmod("f1", 0644)));
	say("chown f1 -1:own: %s", res(chown("f1", (uid_t)-1, getgid())));
	say("chown f1 0:0: %s", res(chown("f1", 0, 0)));
	show("f1", "f1");
	say("chown f1 12345:54321: %s", res(chown("f1", 12345, 54321)));
	show("f1", "f1");
	say("chown f1 back: %s", res(chown("f1", getuid(), getgid())));
	say("lchown f1: %s", res(lchown("f1", getuid(), (gid_t)-1)));
	{
		struct timespec tv[2] = { { 1000000000, 123456789 }, { 1234567890, 5 } };

		say("utimensat f1 explicit: %s", res(utimensat(AT_FDCWD, "f1", tv, 0)));
		times("f1 times", "f1");
		tv[0].tv_nsec = UTIME_OMIT;
		tv[1].tv_nsec = UTIME_NOW;
		say("utimensat f1 mtime now: %s", res(utimensat(AT_FDCWD, "f1", tv, 0)));
		times("f1 times", "f1");
		say("utimensat other_rw now: %s", res(utimensat(AT_FDCWD, "../other_rw", NULL, 0)));
		tv[0] = tv[1] = (struct timespec){ 1, 0 };
		say("utimensat other_rw explicit: %s", res(utimensat(AT_FDCWD, "../other_rw", tv, 0)));
		say("utimensat secret explicit: %s", res(utimensat(AT_FDCWD, "../secret", tv, 0)));
	}
	{
		int a = open("f1", O_RDONLY);
		int b = open("cfr", O_CREAT | O_WRONLY | O_TRUNC, 0644);
		loff_t ia = 0, ib = 0;

		n = a < 0 || b < 0 ? -1 : copy_file_range(a, &ia, b, &ib, 8, 0);
		say("copy_file_range 8: %s %zd", res(n), n);
		if (a >= 0)
			close(a);
		if (b >= 0)
			close(b);
		say("read cfr: %s", cat("cfr"));
	}
	say("read ../secret: %s", cat("../secret"));
	say("read ../other_rw: %s", cat("../other_rw"));
	say("write ../other_rw: %s", res(put("../other_rw", O_WRONLY | O_APPEND, 0, "more\n")));
	say("truncate ../secret: %s", res(truncate("../secret", 0)));
	say("chmod ../secret: %s", res(chmod("../secret", 0644)));
	say("chown ../secret: %s", res(chown("../secret", getuid(), getgid())));
	say("access ../secret R: %s", res(access("../secret", R_OK)));
	say("access f1 W: %s", res(access("f1", W_OK)));
	say("access f1 X: %s", res(access("f1", X_OK)));
	show("../secret", "../secret");
	buf[0] = '\0';
	(void)buf;
}

static void dirs(void)
{
	say("mkdir d1: %s", res(mkdir("d1", 0755)));
	show("d1", "d1");
	say("mkdir d1 again: %s", res(mkdir("d1", 0755)));
	say("mkdir d1/sub 0700: %s", res(mkdir("d1/sub", 0700)));
	show("d1/sub", "d1/sub");
	say("mkdir 01777: %s", res(mkdir("dsticky", 01777)));
	show("dsticky", "dsticky");
	say("rmdir d1 (not empty): %s", res(rmdir("d1")));
	say("rmdir f1 (a file): %s", res(rmdir("f1")));
	say("rmdir nonexistent: %s", res(rmdir("nonexistent")));
	say("rmdir .: %s", res(rmdir(".")));
	say("rmdir d1/sub/..: %s", res(rmdir("d1/sub/..")));
	say("open nonexistent/x: %s", res(open("nonexistent/x", O_RDONLY)));
	say("open f1/x: %s", res(open("f1/x", O_RDONLY)));
	say("creat f1/x: %s", res(open("f1/x", O_CREAT | O_WRONLY, 0644)));
	say("open d1 O_WRONLY: %s", res(open("d1", O_WRONLY)));
	say("open f1 O_DIRECTORY: %s", res(open("f1", O_RDONLY | O_DIRECTORY)));
	say("unlink d1: %s", res(unlink("d1")));
	say("mkdir ../ro_dir/x: %s", res(mkdir("../ro_dir/x", 0755)));
	say("creat ../ro_dir/x: %s", res(open("../ro_dir/x", O_CREAT | O_WRONLY, 0644)));
	say("unlink ../ro_dir/f: %s", res(unlink("../ro_dir/f")));
	say("rename ../ro_dir/f: %s", res(rename("../ro_dir/f", "stolen")));
	say("stat ../noexec/f: %s", st("../noexec/f"));
	say("list ../noexec: %s", res(opendir("../noexec") ? 0 : -1));
	say("unlink ../sticky/rootfile: %s", res(unlink("../sticky/rootfile")));
	say("creat ../sticky/mine: %s", res(put("../sticky/mine", O_CREAT | O_WRONLY, 0640, "m")));
	show("../sticky/mine", "../sticky/mine");
	say("unlink ../sticky/mine: %s", res(unlink("../sticky/mine")));
	/* a write by one without CAP_FSETID drops another's set-id bits */
	say("append to ../setid: %s", res(put("../setid", O_WRONLY | O_APPEND, 0, "w")));
	show("../setid (set-id bits after the write)", "../setid");
	say("truncate ../setid_trunc: %s", res(truncate("../setid_trunc", 2)));
	show("../setid_trunc (set-id bits after the truncate)", "../setid_trunc");
	say("open ../setid_otrunc O_TRUNC, write: %s",
	    res(put("../setid_otrunc", O_WRONLY | O_TRUNC, 0, "t")));
	show("../setid_otrunc (set-id bits after O_TRUNC)", "../setid_otrunc");
	say("creat ../sg/file: %s", res(put("../sg/file", O_CREAT | O_WRONLY, 0644, "g")));
	show("../sg/file (group of the directory)", "../sg/file");
	say("mkdir ../sg/dir: %s", res(mkdir("../sg/dir", 0755)));
	show("../sg/dir (setgid inherited)", "../sg/dir");
	say("chmod g+s ../sg/file: %s", res(chmod("../sg/file", 02644)));
	show("../sg/file (setgid kept only by members)", "../sg/file");
	say("creat 02755 in ../sg: %s", res(put("../sg/sgid", O_CREAT | O_WRONLY, 02755, NULL)));
	show("../sg/sgid", "../sg/sgid");
	listing("list ../sg", "../sg");
	/* writable only through the supplementary group 4242 */
	say("creat ../grp/f: %s", res(put("../grp/f", O_CREAT | O_WRONLY, 0664, "g")));
	show("../grp/f", "../grp/f");
	say("mkdir ../grp/d: %s", res(mkdir("../grp/d", 0775)));
	show("../grp/d", "../grp/d");
	say("symlink ../grp/l: %s", res(symlink("f", "../grp/l")));
	say("mkfifo ../grp/p: %s", res(mkfifo("../grp/p", 0600)));
	say("rename in ../grp: %s", res(rename("../grp/f", "../grp/g")));
	listing("list ../grp", "../grp");
	say("chown ../grp/g to group 4242: %s", res(chown("../grp/g", (uid_t)-1, 4242)));
	show("../grp/g", "../grp/g");
	unlink("../grp/g");
	unlink("../grp/l");
	unlink("../grp/p");
	rmdir("../grp/d");
	say("unlink ../sg/file: %s", res(unlink("../sg/file")));
	say("unlink ../sg/sgid: %s", res(unlink("../sg/sgid")));
	say("rmdir ../sg/dir: %s", res(rmdir("../sg/dir")));
}

static void renames(void)
{
	say("rename f1 f2: %s", res(rename("f1", "f2")));
	say("stat f1: %s", st("f1"));
	show("f2", "f2");
	put("f3", O_CREAT | O_WRONLY, 0640, "this is f3\n");
	say("rename f3 over f2: %s", res(rename("f3", "f2")));
	say("read f2: %s", cat("f2"));
	show("f2", "f2");
	say("stat f3: %s", st("f3"));
	say("rename d1 d2: %s", res(rename("d1", "d2")));
	show("d2/sub (moved with it)", "d2/sub");
	say("rename f2 over d2: %s", res(rename("f2", "d2")));
	say("rename d2 over f2: %s", res(rename("d2", "f2")));
	say("mkdir d3: %s", res(mkdir("d3", 0700)));
	say("rename d2 over empty d3: %s", res(rename("d2", "d3")));
	show("d3/sub", "d3/sub");
	say("stat d2: %s", st("d2"));
	mkdir("d4", 0755);
	put("d4/x", O_CREAT | O_WRONLY, 0644, "in d4\n");
	say("rename d3 over non-empty d4: %s", res(rename("d3", "d4")));
	say("rename d3 into own subtree: %s", res(rename("d3", "d3/sub/x")));
	say("rename nonexistent: %s", res(rename("nonexistent", "zz")));
	say("rename to nonexistent/dir: %s", res(rename("f2", "nonexistent/zz")));
	say("noreplace f2 -> d4/x: %s", res(renameat2(AT_FDCWD, "f2", AT_FDCWD, "d4/x", RENAME_NOREPLACE)));
	say("noreplace f2 -> f5: %s", res(renameat2(AT_FDCWD, "f2", AT_FDCWD, "f5", RENAME_NOREPLACE)));
	show("f5", "f5");
	if (nfs3) {
		say("exchange: skipped (NFSv3 has no RENAME_EXCHANGE)");
	} else {
		say("exchange f5 <-> d4: %s", res(renameat2(AT_FDCWD, "f5", AT_FDCWD, "d4", RENAME_EXCHANGE)));
		show("f5 (now the directory)", "f5");
		show("d4 (now the file)", "d4");
		say("read f5/x: %s", cat("f5/x"));
		say("creat f5/y: %s", res(put("f5/y", O_CREAT | O_WRONLY, 0600, "y")));
		listing("list f5", "f5");
		say("exchange with nonexistent: %s", res(renameat2(AT_FDCWD, "d4", AT_FDCWD, "nonexistent", RENAME_EXCHANGE)));
		say("exchange back: %s", res(renameat2(AT_FDCWD, "d4", AT_FDCWD, "f5", RENAME_EXCHANGE)));
		listing("list d4", "d4");
		say("read d4/y: %s", cat("d4/y"));
	}
	say("rename d4/x to d3/sub/x2: %s", res(rename("d4/x", "d3/sub/x2")));
	say("read d3/sub/x2: %s", cat("d3/sub/x2"));
	say("rename to itself: %s", res(rename("f5", "f5")));
	say("rename . : %s", res(rename(".", "dot")));
}

static void links(void)
{
	say("link f5 hl: %s", res(link("f5", "hl")));
	show("hl", "hl");
	show("f5", "f5");
	same_inode("f5 == hl", "f5", "hl");
	say("link f5 over existing hl: %s", res(link("f5", "hl")));
	say("link dir: %s", res(link("d4", "dl")));
	say("link nonexistent: %s", res(link("nonexistent", "nl")));
	say("link ../secret: %s", res(link("../secret", "sl")));
	say("unlink f5: %s", res(unlink("f5")));
	show("hl (one link left)", "hl");
	say("read hl: %s", cat("hl"));
	say("symlink s1 -> target: %s", res(symlink("target", "s1")));
	show("s1", "s1");
	{
		char buf[256];
		ssize_t n = readlink("s1", buf, sizeof(buf) - 1);

		if (n >= 0)
			buf[n] = '\0';
		say("readlink s1: %s %s", res(n), n >= 0 ? buf : "");
		n = readlink("hl", buf, sizeof(buf));
		say("readlink hl (not a link): %s", res(n));
	}
	say("open dangling s1: %s", res(open("s1", O_RDONLY)));
	say("symlink s1 again: %s", res(symlink("x", "s1")));
	say("symlink s2 -> s3: %s", res(symlink("s3", "s2")));
	say("symlink s3 -> s2: %s", res(symlink("s2", "s3")));
	say("open loop s2: %s", res(open("s2", O_RDONLY)));
	say("stat loop s2/x: %s", st("s2/x"));
	say("symlink s4 -> d4: %s", res(symlink("d4", "s4")));
	say("read s4/y: %s", cat("s4/y"));
	say("open s4 O_NOFOLLOW: %s", res(open("s4", O_RDONLY | O_NOFOLLOW)));
	say("open s4/ O_NOFOLLOW: %s", res(open("s4/", O_RDONLY | O_NOFOLLOW)));
	say("symlink hls -> hl: %s", res(symlink("hl", "hls")));
	say("write through hls: %s", res(put("hls", O_WRONLY | O_TRUNC, 0, "via link\n")));
	say("read hl: %s", cat("hl"));
	say("link to symlink: %s", res(linkat(AT_FDCWD, "hls", AT_FDCWD, "hls2", 0)));
	show("hls2", "hls2");
	say("unlink hls2: %s", res(unlink("hls2")));
	{
		/* a chain of 41 links is one too many */
		char a[32], b[32];
		int i;

		for (i = 0; i < 41; i++) {
			snprintf(a, sizeof(a), "c%02d", i);
			snprintf(b, sizeof(b), "c%02d", i + 1);
			if (symlink(b, a) < 0)
				break;
		}
		put("c41", O_CREAT | O_WRONLY, 0644, "end of chain\n");
		say("read c01 (40 links): %s", cat("c01"));
		say("read c00 (41 links): %s", cat("c00"));
	}
	say("unlink hl: %s", res(unlink("hl")));
	say("unlink hl again: %s", res(unlink("hl")));
	say("stat hl: %s", st("hl"));
}

static void xattrs(void)
{
	char buf[256];
	ssize_t n;

	if (nfs3) {
		say("xattrs: skipped (NFSv3 has none)");
		return;
	}
	put("xf", O_CREAT | O_WRONLY, 0644, "x");
	say("setxattr user.a: %s", res(setxattr("xf", "user.a", "value-a", 7, 0)));
	n = getxattr("xf", "user.a", buf, sizeof(buf) - 1);
	if (n >= 0)
		buf[n] = '\0';
	say("getxattr user.a: %s %s", res(n), n >= 0 ? buf : "");
	say("getxattr size 0: %zd", getxattr("xf", "user.a", NULL, 0));
	say("getxattr small buffer: %s", res(getxattr("xf", "user.a", buf, 2)));
	say("setxattr create existing: %s", res(setxattr("xf", "user.a", "v", 1, XATTR_CREATE)));
	say("setxattr replace missing: %s", res(setxattr("xf", "user.b", "v", 1, XATTR_REPLACE)));
	say("setxattr user.b: %s", res(setxattr("xf", "user.b", "", 0, 0)));
	n = listxattr("xf", buf, sizeof(buf));
	{
		/* names are NUL-separated, in no promised order: sort them */
		char *names[16], line[256] = "";
		int k = 0, i;
		char *p;

		for (p = buf; n > 0 && p < buf + n && k < 16; p += strlen(p) + 1)
			names[k++] = p;
		qsort(names, (size_t)k, sizeof(*names), cmp_str);
		for (i = 0; i < k; i++)
			snprintf(line + strlen(line), sizeof(line) - strlen(line),
				 "%s%s", i ? "," : "", names[i]);
		say("listxattr: %s [%s]", res(n), line);
	}
	say("removexattr user.a: %s", res(removexattr("xf", "user.a")));
	say("getxattr removed: %s", res(getxattr("xf", "user.a", buf, sizeof(buf))));
	say("removexattr missing: %s", res(removexattr("xf", "user.zz")));
	say("setxattr on ../secret: %s", res(setxattr("../secret", "user.x", "1", 1, 0)));
	say("getxattr on ../other_rw: %s", res(getxattr("../other_rw", "user.root", buf, sizeof(buf))));
	say("setxattr trusted: %s", res(setxattr("xf", "trusted.t", "1", 1, 0)));
	n = listxattr("../other_rw", buf, sizeof(buf));
	{
		char line[512] = "";
		char *p;

		for (p = buf; n > 0 && p < buf + n; p += strlen(p) + 1)
			if ((!strncmp(p, "user.", 5) || !strncmp(p, "trusted.", 8)) &&
			    strlen(line) + strlen(p) + 2 < sizeof(line)) {
				strcat(line, p);
				strcat(line, " ");
			}
		say("listxattr ../other_rw: %s [%s]", res(n), line);
	}
	symlink("xf", "xs");
	say("lsetxattr user on symlink: %s", res(lsetxattr("xs", "user.a", "1", 1, 0)));
	say("setxattr through symlink: %s", res(setxattr("xs", "user.c", "1", 1, 0)));
	say("getxattr xf user.c: %s", res(getxattr("xf", "user.c", buf, sizeof(buf))));
}

static void specials(void)
{
	say("mkfifo p1: %s", res(mkfifo("p1", 0640)));
	show("p1", "p1");
	say("mknod fifo p2: %s", res(mknod("p2", S_IFIFO | 0600, 0)));
	show("p2", "p2");
	say("mknod chr c1: %s", res(mknod("c1", S_IFCHR | 0644, makedev(1, 3))));
	show("c1", "c1");
	say("mknod reg r1: %s", res(mknod("r1", S_IFREG | 0604, 0)));
	show("r1", "r1");
	say("mknod existing: %s", res(mknod("p1", S_IFIFO | 0600, 0)));
	say("unlink p1: %s", res(unlink("p1")));
	say("unlink c1: %s", res(unlink("c1")));
}

static void names(void)
{
	char name[300], odd1[128], odd2[129], path[4200];
	size_t len;
	int i, k;

	memset(name, 'n', 255);
	name[255] = '\0';
	say("creat 255-byte name: %s", res(put(name, O_CREAT | O_WRONLY, 0644, "long")));
	say("read 255-byte name: %s", cat(name));
	say("mkdir 255-byte name/: %s", res(mkdir(name, 0755)));
	name[255] = 'n';
	name[256] = '\0';
	say("creat 256-byte name: %s", res(open(name, O_CREAT | O_WRONLY, 0644)));
	say("stat 256-byte name: %s", st(name));
	name[255] = '\0';
	say("rename 255 -> 255 other: %s", res(rename(name, (memset(path, 'm', 255), path[255] = '\0', path))));
	say("unlink 255-byte name: %s", res(unlink(path)));
	/* every byte but '/' and NUL, in two names */
	for (i = 1, k = 0; i < 128; i++)
		if (i != '/')
			odd1[k++] = (char)i;
	odd1[k] = '\0';
	for (i = 128, k = 0; i < 256; i++)
		odd2[k++] = (char)i;
	odd2[k] = '\0';
	say("creat odd1: %s", res(put(odd1, O_CREAT | O_WRONLY, 0644, "odd1")));
	say("mkdir odd2: %s", res(mkdir(odd2, 0755)));
	snprintf(path, sizeof(path), "%s/%s", odd2, odd1);
	say("rename odd1 into odd2: %s", res(rename(odd1, path)));
	say("read odd2/odd1: %s", cat(path));
	listing("list odd2", odd2);
	say("creat name with newline: %s", res(put("a\nb", O_CREAT | O_WRONLY, 0644, NULL)));
	say("creat name ' .. ': %s", res(put(" .. ", O_CREAT | O_WRONLY, 0644, NULL)));
	say("creat name '...': %s", res(put("...", O_CREAT | O_WRONLY, 0644, NULL)));
	/* a path of 4095 bytes works, 4096 does not */
	mkdir("deep", 0755);
	strcpy(path, "deep");
	len = strlen(path);
	memset(name, 'p', 200);
	name[200] = '\0';
	while (len + 1 + 200 < 3800) {
		path[len++] = '/';
		memcpy(path + len, name, 201);
		len += 200;
		if (mkdir(path, 0755) < 0)
			break;
	}
	say("deep directory: %s length %zu", res(0), len);
	path[len++] = '/';
	memset(path + len, 'q', 4095 - len);
	path[4095] = '\0';
	{
		/* the last component is longer than 255: shorten with a dir */
		size_t last = 4095 - len;

		while (last > 250) {
			path[len + 200] = '/';
			path[len + 201] = '\0';
			if (mkdir(path, 0755) < 0)
				break;
			memset(path + len + 201, 'q', 4095 - (len + 201));
			path[4095] = '\0';
			len += 201;
			last = 4095 - len;
		}
	}
	say("creat path of %zu bytes: %s", strlen(path),
	    res(put(path, O_CREAT | O_WRONLY, 0644, "deep")));
	say("read it: %s", cat(path));
	path[4095] = 'q';
	path[4096] = '\0';
	say("creat path of %zu bytes: %s", strlen(path),
	    res(open(path, O_CREAT | O_WRONLY, 0644)));
}

static void finale(void)
{
	struct statfs a;
	int r = statfs(".", &a);

	say("statfs namelen: %s %ld", res(r), r < 0 ? 0L : (long)a.f_namelen);
	listing("list work", ".");
	listing("list ..", "..");
}

static int run(void)
{
	if (chdir("work") < 0) {
		perror("work");
		return 1;
	}
	files();
	dirs();
	renames();
	links();
	xattrs();
	specials();
	names();
	finale();
	return 0;
}

/* Data written before something happens elsewhere (a server restart),
 * made durable after it: what fsync and close answer. */
static int hold_write(const char *path)
{
	char buf[4096], line[16];
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	int other = open(path, O_WRONLY), reader = open(path, O_RDONLY);

	memset(buf, 'w', sizeof(buf));
	if (fd < 0 || other < 0 || reader < 0 ||
	    write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		perror(path);
		return 1;
	}
	printf("written\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 1;
	/* a file's data is the file's, whichever descriptor wrote it (the
	 * kernel writes a shared mapping back through any) */
	printf("fsync other: %s\n", res(fsync(other)));
	/* a reader's close has nothing to commit nor to tell */
	printf("close reader: %s\n", res(close(reader)));
	printf("fsync: %s\n", res(fsync(fd)));
	printf("close: %s\n", res(close(fd)));
	close(other);
	return 0;
}

/* What NFSv3 cannot carry, tried: through dcfs over NFS, the errors
 * docs/dcfs.md documents. */
static int nfs3_left_out(void)
{
	int fd = open("nfs3_probe", O_CREAT | O_RDWR, 0644);

	if (fd < 0 || mkdir("nfs3_dir", 0755) < 0) {
		perror("nfs3");
		return 1;
	}
	say("fallocate: %s", res(fallocate(fd, 0, 0, 8192)));
	close(fd);
	say("rename exchange: %s", res(renameat2(AT_FDCWD, "nfs3_probe", AT_FDCWD,
						 "nfs3_dir", RENAME_EXCHANGE)));
	say("setxattr user.a: %s", res(setxattr("nfs3_probe", "user.a", "v", 1, 0)));
	say("listxattr: %s", res(listxattr("nfs3_probe", NULL, 0) > 0 ? 0 : -1));
	return 0;
}

/* Append rec to path (opened afresh, so its name is looked up) and fsync. */
static int append_synced(const char *path, const char *rec)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_APPEND, 0644), err = 0;
	ssize_t len = (ssize_t)strlen(rec);

	if (fd < 0)
		return -1;
	if (write(fd, rec, (size_t)len) != len || fsync(fd) < 0)
		err = -1;
	close(fd);
	return err;
}

/*
 * One of several concurrent clients: in its own directory c<ID> it makes
 * N files, renames each, reads it back, and unlinks every third, and
 * appends a record to its log c<ID>/log each round, fsync'ed, reading the
 * whole log back at the end; in the shared directory it renames one file
 * of its own back and forth and hard-links another.  The final tree is
 * exactly predictable: a run on a plain directory makes it byte for byte.
 */
static int stress(const char *id, int n)
{
	char dir[64], a[128], b[128], buf[64], want[64], log[128];
	size_t loglen = 0, cap = (size_t)n * 32 + 1;
	char *logwant = malloc(cap), *loghave = malloc(cap);
	int i, bad = 0, fd;
	ssize_t got = -1;

	if (!logwant || !loghave)
		return 1;

	snprintf(dir, sizeof(dir), "c%s", id);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return 1;
	snprintf(log, sizeof(log), "%s/log", dir);
	for (i = 0; i < n; i++) {
		snprintf(a, sizeof(a), "%s/tmp%d", dir, i);
		snprintf(b, sizeof(b), "%s/f%d", dir, i);
		snprintf(want, sizeof(want), "%s:%d\n", id, i);
		if (put(a, O_CREAT | O_EXCL | O_WRONLY, 0644, want) < 0 ||
		    rename(a, b) < 0) {
			bad++;
			continue;
		}
		snprintf(buf, sizeof(buf), "%s", cat(b));
		if (strcmp(buf, shown(want)) != 0)
			bad++;
		if (i % 3 == 0 && unlink(b) < 0)
			bad++;
		snprintf(a, sizeof(a), "shared/%s-x", id);
		snprintf(b, sizeof(b), "shared/%s-y", id);
		if (i == 0 && put(a, O_CREAT | O_WRONLY, 0644, id) < 0)
			bad++;
		if (rename(i % 2 ? b : a, i % 2 ? a : b) < 0)
			bad++;
		if (lstat("shared", &(struct stat){ 0 }) < 0)
			bad++;
		snprintf(buf, sizeof(buf), "%s log %d\n", id, i);
		if (append_synced(log, buf) < 0)
			bad++;
		loglen += (size_t)snprintf(logwant + loglen, cap - loglen, "%s", buf);
	}
	snprintf(a, sizeof(a), "shared/%s-%s", id, n % 2 ? "y" : "x");
	snprintf(b, sizeof(b), "shared/%s-link", id);
	if (link(a, b) < 0)
		bad++;
	if ((fd = open(log, O_RDONLY)) >= 0) {
		got = read(fd, loghave, cap);
		close(fd);
	}
	if (got != (ssize_t)loglen || memcmp(loghave, logwant, loglen) != 0)
		bad++;
	free(logwant);
	free(loghave);
	if (bad)
		fprintf(stderr, "client %s: %d failures\n", id, bad);
	return bad ? 1 : 0;
}

/* Append records, fsync each, report each durable count on stdout. */
static int fsyncer(const char *file, int n)
{
	char rec[64];
	int fd = open(file, O_CREAT | O_WRONLY | O_APPEND, 0644), i;

	if (fd < 0)
		return 1;
	for (i = 0; i < n; i++) {
		int len = snprintf(rec, sizeof(rec), "record %08d\n", i);

		if (write(fd, rec, (size_t)len) != len || fsync(fd) < 0)
			return 1;
		printf("%d\n", i + 1);
		fflush(stdout);
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dcfs_conform setup|run|stress|fsync DIR ...\n");
		return 2;
	}
	if (!strcmp(argv[1], "fsync"))
		return fsyncer(argv[2], argc > 3 ? atoi(argv[3]) : 1000);
	if (!strcmp(argv[1], "holdwrite"))
		return hold_write(argv[2]);
	if (chdir(argv[2]) < 0) {
		perror(argv[2]);
		return 1;
	}
	umask(022);
	if (!strcmp(argv[1], "setup"))
		return setup(argc < 4 || strcmp(argv[3], "noxattr"));
	if (!strcmp(argv[1], "run")) {
		nfs3 = argc > 3 && !strcmp(argv[3], "nfs3");
		return run();
	}
	if (!strcmp(argv[1], "nfs3"))
		return nfs3_left_out();
	if (!strcmp(argv[1], "stress") && argc > 4)
		return stress(argv[3], atoi(argv[4]));
	return 2;
}
