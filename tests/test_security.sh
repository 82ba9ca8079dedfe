#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/test_security.sh [BUILD_DIR] - dcfs against unprivileged users, as root.
#
# dcfs runs as root with allow_other and default_permissions, so every
# user's access through the mount is judged by the kernel against what
# dcfs reports, and then carried out by a root daemon.  This suite makes
# throwaway users (an attacker dcsec_a, a victim dcsec_v, a bystander
# dcsec_o, and a group dcsec_g the attacker belongs to), runs each attack
# as the attacker both directly on the source directory and through a dcfs
# mount of it, and requires the mount to refuse what the source refuses:
#
#  1. a POSIX ACL entry u:ATTACKER:--- on a 0644 file: reading it;
#  2. an ACL u:ATTACKER:r-x on a 0777 directory: removing a file in it;
#  3. an ACL g:GROUP:--- on a 0777 directory, the attacker in GROUP
#     (supplementary): creating in it;
#  4. an ext4 file system with 5% reserved for root: the attacker fills it
#     through the mount no further than natively (256 KiB slack), and root
#     can still write 1 MiB on it afterwards; and still after the attacker
#     writes 4 MiB more through a shared mapping of a file in the mount
#     (its pages written back by the kernel, with no caller);
#  5. a symlink planted in the source where the kernel cached "no such
#     name", pointing outside the source: a write of that name through
#     the mount must not reach the file it points to -- by the attacker
#     (to root's 0644 file: refused, as natively) and by root (to a 0600
#     file).  Root writes from a mount namespace where the directory
#     outside is a decoy: a link the kernel itself sees and follows (as
#     natively) lands in the decoy, while dcfs following it as root in the
#     source would reach the real file, which must stay unchanged;
#  6. a sticky directory whose names were swapped on the host after the
#     attacker's kernel cached them: the attacker can neither remove nor
#     rename the victim's file through a stale name of its own file; and a
#     victim's exclusive create (O_EXCL, as mkstemp) of names cached as
#     absent, after the attacker planted a file and a symlink to its own
#     file there, fails as natively and writes nothing into the
#     attacker's files;
#  7. a directory the attacker could write, moved on the host into the
#     victim's 0700 directory: the attacker's cached path no longer
#     reaches it (no create, no listing, nothing appears in it);
#  8. an inode number reused on the host (an ext4 with 64 inodes): a file
#     the attacker looked up, forgotten by the kernel (drop_caches, and
#     the forget seen by dcfs) but still cached by dcfs, is deleted on
#     the host; the victim's new file in its 0700 directory gets its
#     number and root reads it through the mount; the attacker's read of
#     the old name must not return the victim's data;
#  9. the victim's read leases on 12 files (SIGIO ignored, so they last
#     fs.lease-break-time, set to 5 s for the run) and other users'
#     writers blocked on them through the mount: root's stat of an
#     unrelated, uncached name is answered within 100 ms;
# 10. dcfs with 512 descriptors: the attacker's 600 symlinks listed with
#     ls -l and held (O_PATH), then 600 descriptors of one directory held
#     open through the mount, then 600 directories held (O_PATH), then
#     600 files with two names held (O_PATH) and their first names
#     removed, then 600 files held and removed: root and another user
#     can still look up, create and read (no EMFILE);
# 11. 30,000 RENAME_EXCHANGEs of two directories under --cache-entries 64:
#     the cache stays within 9/8 of its cap (+16), other users unaffected;
# 12. --stats FILE in an attacker-writable directory, FILE a planted
#     symlink to a root 0600 file: that file unchanged, FILE a regular
#     file of mode 0644 even under umask 0;
# 13. dcfs without CAP_SETUID: refuses to serve (non-zero exit, nothing
#     mounted, the capability named);
# 14. a rename that leaves a whiteout (the caller holding CAP_MKNOD, as in
#     a user namespace): the whiteout is the caller's, not root's;
# 15. a root 0600 file renamed by the attacker onto the name its O_CREAT
#     is making, between dcfs's create and its look at the name (the
#     daemon pauses there, DCFS_TEST_CREATE_PAUSE_MS): the create must
#     not hand the attacker that file open;
# 16. the attacker's O_CREAT, and in dcfs's pause the attacker renames
#     the new file away, the victim makes its own file under that name,
#     and dcfs runs out of descriptors (its limit lowered from outside):
#     the create fails with EMFILE and the victim's file must stay (dcfs
#     takes back a creation it cannot answer for, but not another's
#     file, and only as the caller), in a sticky directory and in one
#     where the attacker could remove the victim's file itself;
# 17. as 15 for a regular file made by mknod(2) (a MKNOD request, as a
#     kernel NFS server's CREATE makes): the answer must not be root's
#     file, which such a server would then open with no check of its
#     mode;
# 18. as 15 for link(2) of the attacker's file, kernel timeouts an hour
#     long: the name must not stay cached as the attacker's file;
# 19. dcfs with 512 descriptors: the attacker holds 600 descriptors of a
#     directory of 20,000 names open through the mount (past the
#     descriptor budget each open reads the listing whole, a snapshot):
#     another user and root can still list a directory;
# 20. dcfs with 4 threads over a source with a FUSE mount inside it
#     whose daemon is stopped (SIGSTOP): the attacker's 20 lookups in it
#     hang, and another user's read elsewhere must be answered within
#     10 s, with at most 12 workers (the attacker's stuck ones below 8);
#     then dcfs must exit on SIGTERM, and unmount, although workers are
#     stuck; and so must dcfs --uring whose ring threads are stuck so
#     (where the kernel has FUSE over io_uring);
# 21. dcfs with 20 threads over the same source: the attacker's 16
#     reads of her own files in the stopped FUSE mount hang (16
#     readahead requests, which the kernel sends in the background);
#     another user's read of an uncached file elsewhere must be answered
#     within 10 s (the kernel's default of 12 background requests in
#     flight made it wait for them);
# 22. the attacker lists the extended attributes of her file through the
#     mount for 3 s while another process sets and removes one on the host
#     (dcfs, for a caller not root, sizes the list, then reads it): every
#     answer must be the list as it was at some moment, never an error
#     or bytes the daemon did not read.
# 23. the victim's lease on a file (SIGIO ignored, fs.lease-break-time
#     set to 60 s): a process of the attacker's that writes the file
#     through the mount waits for the lease, as natively (seen in its
#     wchan: in a FUSE request; natively in __break_lease); a signal it
#     handles with SA_RESTART (SIGUSR1) must leave it waiting (its open
#     restarted) and a SIGKILL after must still end it, and a SIGKILL
#     alone, or a SIGQUIT (its default dumps core), must end another,
#     each within 5 s (the kernel waits for dcfs's answer even to
#     SIGKILL).  Natively the same.
#
# The stale-cache attacks (5-8) mount with --coherence=off and hour-long
# kernel timeouts, so the kernel and dcfs keep what they cached while the
# host changes underneath.  Native outcomes are measured each run, not
# assumed; a check fails if the native attack does not fail (the set-up
# would be wrong).  The only time bound is 9's 100 ms.
#
# Prints "ok N - ..." / "not ok N - ..." lines and ends with
# "test_security: N passed, M failed, K skipped"; exits 0 only if none
# failed, 77 if it cannot run here (not root, no /dev/fuse, no useradd,
# setpriv or python3, mounting impossible).  Everything it makes (users,
# group, mounts, loop devices, fs.lease-break-time) is undone at exit.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${1:-build}
DCFS=$PWD/$BUILD/dcfs
T_NAME=test_security
. tests/lib.sh


[ "$(id -u)" = 0 ] || cant "needs root"
[ -c /dev/fuse ] || cant "no /dev/fuse"
command -v fusermount3 >/dev/null || cant "no fusermount3 (apt-get install fuse3)"
for c in useradd userdel usermod groupadd groupdel setpriv; do
	command -v $c >/dev/null || cant "no $c"
done
getent group users >/dev/null || cant "no group 'users' for the throwaway users"
# the system's python, not a per-user shim: the users run it too
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || cant "no python3"
[ -x "$DCFS" ] || { echo "test_security: $DCFS is not built"; exit 1; }

A=dcsec_a V=dcsec_v O=dcsec_o G=dcsec_g
T=$(mktemp -d /tmp/test_security.XXXXXX) || exit 1
chmod 755 "$T"
# the daemons' reports: a sanitizer opens its log in the thread that
# reports, which may be acting as a user (setfsuid), so anyone may write
mkdir -m 1777 "$T/san"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/san/report"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/san/report"
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:+$TSAN_OPTIONS }log_path=$T/san/report"
MOUNTS=() LOOPS=() PIDS=() USERS_MADE=() GROUP_MADE=
LEASE_PARAM=/proc/sys/fs/lease-break-time
LEASE_WAS=
URING_PARAM=/sys/module/fuse/parameters/enable_uring
URING_WAS=
cleanup() {
	local m p
	for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for m in "${MOUNTS[@]}"; do
		if grep -q " $m fuse" /proc/mounts; then
			fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		fi
	done
	for m in "$T"/*.stats; do
		[ -r "$m" ] || continue
		p=$(stat_val "$m" pid)
		[ -n "$p" ] && grep -q dcfs "/proc/$p/comm" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	for m in "${LOOPS[@]}"; do
		mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m"; }
	done
	[ -n "$LEASE_WAS" ] && echo "$LEASE_WAS" > "$LEASE_PARAM"
	[ -n "$URING_WAS" ] && echo "$URING_WAS" > "$URING_PARAM"
	for p in "${USERS_MADE[@]}"; do userdel -f "$p" 2>/dev/null; done
	[ -n "$GROUP_MADE" ] && groupdel "$G" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM


# start NAME SRC [dcfs options]: mounts SRC on $T/NAME.mnt, stats in $T/NAME.stats
start() {
	local name=$1 src=$2
	shift 2
	mkdir -p "$T/$name.mnt"
	MOUNTS+=("$T/$name.mnt")
	"$DCFS" "$src" "$T/$name.mnt" --stats "$T/$name.stats" "$@" 2>>"$T/$name.err" ||
		{ echo "# dcfs $name: $(tail -1 "$T/$name.err")"; return 1; }
}
stop() {	# stop NAME: unmount, wait for the daemon to exit
	local pid
	pid=$(stat_val "$T/$1.stats" pid)
	fusermount3 -u "$T/$1.mnt" 2>/dev/null || umount -l "$T/$1.mnt" 2>/dev/null
	[ -z "$pid" ] || wait_for 20 gone "$pid"
}
# the kernel and dcfs keep what they cached while the host changes
STALE=(--coherence off --entry-timeout 3600 --attr-timeout 3600)

# as USER CMD...: CMD as that user (group users), with its groups, from /
as() { local u=$1; shift; (cd / && setpriv --reuid="$u" --regid=users --init-groups -- "$@"); }

# op.py OP ARGS: one system call (or a loop of them), printing OK[ detail]
# or the errno's name (EACCES...), so results compare word for word
cat > "$T/op.py" <<'EOF'
import ctypes, errno, fcntl, mmap, os, resource, signal, stat, sys, time

def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def main(op, a):
    if op == "read":
        with open(a[0], "rb") as f:
            return "OK " + f.read().decode(errors="replace").strip()
    if op == "write":	# O_CREAT|O_TRUNC, as the shell's >
        fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, a[1].encode() + b"\n")
        os.close(fd)
        return "OK"
    if op == "excl":	# O_CREAT|O_EXCL, as mkstemp
        fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, a[1].encode() + b"\n")
        os.close(fd)
        return "OK"
    if op == "create":
        os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        return "OK"
    if op == "createread":	# O_RDWR|O_CREAT|O_EXCL, then read what it opened
        fd = os.open(a[0], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        data = os.read(fd, 100)
        os.close(fd)
        return "OK " + data.decode(errors="replace").strip()
    if op == "mknod":	# a regular file, 0600
        os.mknod(a[0], 0o600 | stat.S_IFREG)
        return "OK"
    if op == "link":
        os.link(a[0], a[1])
        return "OK"
    if op == "owner":
        return "OK %d" % os.lstat(a[0]).st_uid
    if op == "unlink":
        os.unlink(a[0])
        return "OK"
    if op == "rename":
        os.rename(a[0], a[1])
        return "OK"
    if op == "ls":
        return "OK " + " ".join(sorted(os.listdir(a[0])))
    if op == "stat":	# each of PATHS
        for p in a:
            os.stat(p)
        return "OK"
    if op == "fill":	# write until the file system refuses
        fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        buf, total = b"\xa5" * 65536, 0
        try:
            while True:
                total += os.write(fd, buf)
        except OSError as e:
            err = name(e)
        os.close(fd)
        return "%d %s" % (total, err)
    if op == "mmapwrite":	# PATH N: N bytes through a shared mapping, msync'ed
        fd = os.open(a[0], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        n = int(a[1])
        os.ftruncate(fd, n)
        m = mmap.mmap(fd, n)
        for off in range(0, n, 65536):
            m[off:off + 65536] = b"\x5a" * min(65536, n - off)
        try:
            m.flush()
            r = "OK"
        except OSError as e:
            r = name(e)
        m.close()
        os.close(fd)
        return r
    if op == "writen":	# PATH N: N bytes, fsync'ed
        fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        left = int(a[1])
        while left > 0:
            left -= os.write(fd, b"\x5a" * min(left, 65536))
        os.fsync(fd)
        os.close(fd)
        return "OK"
    if op == "symlinks":	# DIR N TARGET
        for i in range(int(a[1])):
            os.symlink(a[2], os.path.join(a[0], "l%04d" % i))
        return "OK"
    if op == "dirs":	# DIR N
        for i in range(int(a[1])):
            os.mkdir(os.path.join(a[0], "d%04d" % i))
        return "OK"
    if op == "files":	# DIR N [LINKS]: files f0000..., each also linked as g0000... with LINKS
        for i in range(int(a[1])):
            f = os.path.join(a[0], "f%04d" % i)
            os.close(os.open(f, os.O_WRONLY | os.O_CREAT, 0o644))
            if len(a) > 2:
                os.link(f, os.path.join(a[0], "g%04d" % i))
        return "OK"
    if op == "unlinkall":	# DIR PREFIX: every name of DIR starting with PREFIX
        n = 0
        for x in os.listdir(a[0]):
            if x.startswith(a[1]):
                os.unlink(os.path.join(a[0], x))
                n += 1
        return "OK %d" % n
    if op == "lease":	# hold read leases on FILES until killed
        signal.signal(signal.SIGIO, signal.SIG_IGN)	# do not give them up
        fds = []
        for p in a:
            fd = os.open(p, os.O_RDONLY)
            fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)	# F_SETLEASE
            fds.append(fd)
        print("READY", flush=True)
        while True:
            time.sleep(60)
    if op == "writeto":	# open for writing and write: blocks on a lease
        def interrupted(sig, frame):
            raise InterruptedError(errno.EINTR, "interrupted")
        signal.signal(signal.SIGUSR1, interrupted)
        signal.siginterrupt(signal.SIGUSR1, False)	# SA_RESTART: waits on
        signal.signal(signal.SIGQUIT, signal.SIG_DFL)	# a shell's & ignores it
        fd = os.open(a[0], os.O_WRONLY)
        os.write(fd, b"w")
        return "OK"
    if op == "timestat":	# milliseconds one stat takes
        t0 = time.monotonic()
        try:
            os.stat(a[0])
            r = "OK"
        except OSError as e:
            r = name(e)
        return "%s %.1f" % (r, (time.monotonic() - t0) * 1000)
    if op in ("holddirs", "pin"):
        # holddirs DIR N: N descriptors of DIR; pin DIR: one O_PATH
        # descriptor of each name in DIR (the kernel then keeps them all).
        # Held until killed; what EMFILE refused is retried every 20 ms,
        # so descriptors the daemon frees are taken again.
        resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
        if op == "pin":
            todo = [(os.path.join(a[0], x), os.O_PATH | os.O_NOFOLLOW) for x in os.listdir(a[0])]
        else:
            todo = [(a[0], os.O_RDONLY | os.O_DIRECTORY)] * int(a[1])
        fds, said = [], False
        while True:
            err, left = "OK", []
            for path, flags in todo:
                try:
                    fds.append(os.open(path, flags))
                except OSError as e:
                    err = name(e)
                    left.append((path, flags))
            todo = left
            if not said:
                print("%d %s" % (len(fds), err), flush=True)
                said = True
            time.sleep(0.02 if todo else 60)
    if op == "whiteout":	# A B: rename A to B leaving a whiteout; its owner
        libc = ctypes.CDLL(None, use_errno=True)
        ren = libc.renameat2
        ren.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        if ren(-100, a[0].encode(), -100, a[1].encode(), 4) != 0:	# RENAME_WHITEOUT
            e = ctypes.get_errno()
            return errno.errorcode.get(e, str(e))
        st = os.lstat(a[0])
        return "OK owner %d, %s" % (st.st_uid, "whiteout" if stat.S_ISCHR(st.st_mode) else "not a whiteout")
    if op == "exchange":	# A B N: N RENAME_EXCHANGEs of A and B
        libc = ctypes.CDLL(None, use_errno=True)
        ren = libc.renameat2
        ren.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        x, y = a[0].encode(), a[1].encode()
        for i in range(int(a[2])):
            if ren(-100, x, -100, y, 2) != 0:
                e = ctypes.get_errno()
                return "%s after %d" % (errno.errorcode.get(e, str(e)), i)
        return "OK"
    if op == "nofile":	# PID N: PID's soft descriptor limit becomes N; the old one
        soft, hard = resource.prlimit(int(a[0]), resource.RLIMIT_NOFILE)
        resource.prlimit(int(a[0]), resource.RLIMIT_NOFILE, (int(a[1]), hard))
        return "OK %d" % soft
    raise SystemExit("op.py: unknown op " + op)

try:
    print(main(sys.argv[1], sys.argv[2:]), flush=True)
except OSError as e:
    print(name(e), flush=True)
EOF
chmod 644 "$T/op.py"
op() { local u=$1; shift; as "$u" "$PY" "$T/op.py" "$@"; }
# spawn OUT USER OP ARGS...: op.py in the background, output in OUT; its
# pid (setpriv execs it: the very process) in $spawned, killed at exit
spawn() {
	local out=$1 u=$2
	shift 2
	(cd / && exec setpriv --reuid="$u" --regid=users --init-groups -- "$PY" "$T/op.py" "$@") > "$out" 2>&1 &
	spawned=$!
	disown "$spawned"	# killed on purpose: no "Killed" from bash
	PIDS+=("$spawned")
}
rop() { "$PY" "$T/op.py" "$@"; }	# as root

# refused_same NATIVE MOUNT: the native attack failed, and the mount's the same way
refused_same() { [ "$1" != OK ] && [ "${1#OK }" = "$1" ] && [ "$2" = "$1" ]; }
# refused_both NATIVE MOUNT: both failed (any error)
refused_both() { [ "${1%% *}" != OK ] && [ "${2%% *}" != OK ]; }

# ---- users, and can we mount at all? ------------------------------------------------
MARK="test_security throwaway"
for u in $A $V $O; do	# left by a run that was killed: ours by their comment
	[ "$(getent passwd "$u" | cut -d: -f5)" = "$MARK" ] && userdel -f "$u" >/dev/null 2>&1
done
getent group "$G" >/dev/null && [ -z "$(getent group "$G" | cut -d: -f4)" ] && groupdel "$G" >/dev/null 2>&1
groupadd "$G" || cant "groupadd $G failed (a group of that name exists?)"
GROUP_MADE=1
for u in $A $V $O; do
	useradd -M -N -g users -c "$MARK" -d /nonexistent -s /usr/sbin/nologin "$u" ||
		cant "useradd $u failed (a user of that name exists?)"
	USERS_MADE+=("$u")
done
usermod -a -G "$G" $A
as $A id -G | tr ' ' '\n' | grep -qx "$(getent group $G | cut -d: -f3)" ||
	cant "setpriv --init-groups does not give $A its group $G"

mkdir -p "$T/probe.src"
start probe "$T/probe.src" || cant "mounting is impossible: $(tail -1 "$T/probe.err")"
stop probe

# outside every source: root's secrets, the victim's home
mkdir -p "$T/outside"
chmod 755 "$T/outside"
mkdir -p "$T/vhome/private"
chown $V "$T/vhome/private"
chmod 700 "$T/vhome/private"

# ---- 1-3: POSIX ACLs ----------------------------------------------------------------
if command -v setfacl >/dev/null && S=$T/acl.src && mkdir -p "$S" &&
   touch "$S/probe" && setfacl -m "u:$A:---" "$S/probe" 2>/dev/null; then
	M=$T/acl.mnt
	echo acl-secret > "$S/secret"
	chmod 644 "$S/secret"
	setfacl -m "u:$A:---" "$S/secret"
	mkdir -m 777 "$S/d2" "$S/d3"
	chmod 777 "$S/d2" "$S/d3"
	setfacl -m "u:$A:r-x" "$S/d2"
	echo root > "$S/d2/native"
	echo root > "$S/d2/mnt"
	setfacl -m "g:$G:---" "$S/d3"
	if start acl "$S"; then
		nat=$(op $A read "$S/secret") mnt=$(op $A read "$M/secret")
		check "1. ACL u:$A:--- on a 0644 file, read: native $nat, mount $mnt" refused_same "$nat" "$mnt"
		nat=$(op $A unlink "$S/d2/native") mnt=$(op $A unlink "$M/d2/mnt")
		kept2() { refused_same "$nat" "$mnt" && [ -e "$S/d2/mnt" ]; }
		check "2. ACL u:$A:r-x on a 0777 directory, rm of root's file: native $nat, mount $mnt (file $([ -e "$S/d2/mnt" ] && echo kept || echo deleted))" kept2
		nat=$(op $A create "$S/d3/native") mnt=$(op $A create "$M/d3/mnt")
		none3() { refused_same "$nat" "$mnt" && [ ! -e "$S/d3/mnt" ]; }
		check "3. ACL g:$G:--- on a 0777 directory, create by a member of $G: native $nat, mount $mnt" none3
		stop acl
	else
		for i in 1 2 3; do notok "$i. ACLs: mount"; done
	fi
else
	for i in 1 2 3; do skip "$i. ACLs (no setfacl, or no ACLs on $T)"; done
fi

# loopdisk NAME SIZE MKFS_OPTIONS...: a small ext4 mounted on $T/NAME.disk
loopdisk() {
	local name=$1 size=$2
	shift 2
	command -v mkfs.ext4 >/dev/null || return 1
	truncate -s "$size" "$T/$name.img" &&
		mkfs.ext4 -q -F "$@" "$T/$name.img" >/dev/null 2>&1 &&
		mkdir -p "$T/$name.disk" || return 1
	LOOPS+=("$T/$name.disk")
	mount -o loop "$T/$name.img" "$T/$name.disk" 2>/dev/null
}

# ---- 4: root's reserved blocks ---------------------------------------------------------
if loopdisk rb 32M -m 5; then
	S=$T/rb.disk/src M=$T/rb.mnt
	mkdir -m 777 "$S"
	chmod 777 "$S"
	native=$(op $A fill "$S/native")
	rm -f "$S/native"
	sync
	if start rb "$S"; then
		mnt=$(op $A fill "$M/mnt")
		nb=${native%% *} mb=${mnt%% *}
		within() { [ "${native#* }" = ENOSPC ] && [ "${mnt#* }" = ENOSPC ] && [ "$mb" -le $((nb + 262144)) ]; }
		check "4. filled to ENOSPC as $A: native $nb bytes (${native#* }), mount $mb bytes (${mnt#* }), at most 256 KiB more" within
		root=$(rop writen "$T/rb.disk/root" 1048576)
		check "4. then root still writes 1 MiB natively (root's reserve kept): $root" test "$root" = OK
		rm -f "$T/rb.disk/root"
		# the same through a shared mapping, whose pages the kernel writes
		# back on its own (no caller in the request): the disk is full but
		# for root's reserve, so the attacker's pages must reach dcfs and
		# be refused (ENOSPC, as natively), not fail some other way
		mapped=$(op $A mmapwrite "$M/mapped" 4194304)
		sync
		root=$(rop writen "$T/rb.disk/root" 1048576)
		check_all "4. then $A writes 4 MiB through a shared mapping of a file in the mount ($mapped, ENOSPC expected): root still writes 1 MiB natively: $root" \
			'[ "$mapped" = ENOSPC ] && [ "$root" = OK ]'
		rm -f "$T/rb.disk/root" "$S/mnt" "$S/mapped"
		stop rb
	else
		for i in 1 2 3; do notok "4. reserved blocks: mount"; done
	fi
	umount "$T/rb.disk"
else
	for i in 1 2 3; do skip "4. reserved blocks (no loop device or mkfs.ext4)"; done
fi

# ---- 5: a symlink planted where the kernel cached "no such name" -----------------------
S=$T/sym.src M=$T/sym.mnt
mkdir -p "$S/pub"
chmod 777 "$S/pub"
echo root-secret > "$T/outside/secret5"
chmod 600 "$T/outside/secret5"
echo root-file > "$T/outside/file5"
chmod 644 "$T/outside/file5"
if start sym "$S" "${STALE[@]}"; then
	before=$(rop stat "$M/pub/name")	# ENOENT, cached by the kernel and dcfs
	as $A ln -s "$T/outside/secret5" "$S/pub/name"
	# root writes in a mount namespace of its own where $T/outside is a
	# decoy: should the kernel see the link and follow it itself (as
	# natively), that lands in the decoy; dcfs following it in the
	# source would reach the real file
	mkdir -p "$T/decoy5"
	echo decoy > "$T/decoy5/secret5"
	chmod 600 "$T/decoy5/secret5"
	if unshare -m --propagation private true 2>/dev/null; then
		mnt=$(unshare -m --propagation private sh -c 'mount --bind "$1" "$2" && exec "$3" "$4" write "$5" overwritten' \
			sh "$T/decoy5" "$T/outside" "$PY" "$T/op.py" "$M/pub/name" 2>&1)
		check "5. root writes a name cached absent ($before), now a symlink to a 0600 file outside the source: mount $mnt, that file '$(cat "$T/outside/secret5")' (the decoy the kernel would reach: '$(cat "$T/decoy5/secret5")')" \
			test "$(cat "$T/outside/secret5")" = root-secret
	else
		skip "5. root writes through a planted symlink (no unshare -m here)"
	fi
	before=$(op $A stat "$M/pub/name2")
	as $A ln -s "$T/outside/file5" "$S/pub/name2"
	nat=$(op $A write "$S/pub/name2" overwritten)
	mnt=$(op $A write "$M/pub/name2" overwritten)
	five() { refused_both "$nat" "$mnt" && [ "$(cat "$T/outside/file5")" = root-file ]; }
	check "5. $A writes a name cached absent ($before), now its symlink to root's 0644 file outside: native $nat, mount $mnt, that file '$(cat "$T/outside/file5")'" five
	stop sym
else
	notok "5. planted symlink: mount"
	notok "5. planted symlink: mount"
fi

# ---- 6: sticky directory, names swapped on the host ----------------------------------------
S=$T/stk.src M=$T/stk.mnt
mkdir -p "$S/stk"
chmod 1777 "$S/stk"
op $A write "$S/stk/X" attacker >/dev/null
op $V write "$S/stk/V" victim-data >/dev/null
op $A write "$S/stk/Y" attacker >/dev/null
op $V write "$S/stk/W" victim-data >/dev/null
op $V write "$S/stk/N" victim-data >/dev/null	# for the native attempts
echo attacker-file > "$T/outside/a6"	# the attacker's, outside the source
chown $A "$T/outside/a6"
chmod 666 "$T/outside/a6"
if start stk "$S" "${STALE[@]}"; then
	op $A stat "$M/stk/X" "$M/stk/Y" >/dev/null	# the attacker's view: X, Y are the attacker's
	as $A mv "$S/stk/X" "$S/stk/Xa"
	as $V mv "$S/stk/V" "$S/stk/X"	# now X is the victim's
	nat=$(op $A unlink "$S/stk/N")
	mnt=$(op $A unlink "$M/stk/X")
	sticky() { refused_both "$nat" "$mnt" && [ "$(cat "$S/stk/X" 2>/dev/null)" = victim-data ] &&
		   [ "$(stat -c %U "$S/stk/X")" = $V ]; }
	check "6. sticky: $A removes stk/X, its own when cached, the victim's now: native (the victim's file) $nat, mount $mnt, the victim's file $([ -e "$S/stk/X" ] && echo kept || echo deleted)" sticky
	as $A mv "$S/stk/Y" "$S/stk/Ya"
	as $V mv "$S/stk/W" "$S/stk/Y"	# now Y is the victim's
	nat=$(op $A rename "$S/stk/N" "$S/stk/stolen")
	mnt=$(op $A rename "$M/stk/Y" "$M/stk/stolen")
	kept() { refused_both "$nat" "$mnt" && [ "$(cat "$S/stk/Y" 2>/dev/null)" = victim-data ]; }
	check "6. sticky: $A renames stk/Y away, its own when cached, the victim's now: native (the victim's file) $nat, mount $mnt, the victim's file $([ -e "$S/stk/Y" ] && echo kept || echo moved)" kept
	# the victim's safe creation of names it saw absent, after the
	# attacker planted a file and a symlink to its own file there
	b1=$(op $V stat "$M/stk/report1") b2=$(op $V stat "$M/stk/report2")
	op $A write "$S/stk/report1" planted >/dev/null
	chmod 666 "$S/stk/report1"
	as $A ln -s "$T/outside/a6" "$S/stk/report2"
	op $A write "$S/stk/nat1" planted >/dev/null
	chmod 666 "$S/stk/nat1"
	as $A ln -s "$T/outside/a6" "$S/stk/nat2"
	nat1=$(op $V excl "$S/stk/nat1" victim-secret) nat2=$(op $V excl "$S/stk/nat2" victim-secret)
	mnt1=$(op $V excl "$M/stk/report1" victim-secret) mnt2=$(op $V excl "$M/stk/report2" victim-secret)
	clean() { ! grep -q victim-secret "$S/stk/report1" "$S/stk/nat1" "$T/outside/a6"; }
	excl() { refused_same "$nat1" "$mnt1" && refused_same "$nat2" "$mnt2" && clean; }
	check "6. $V's O_EXCL create of names cached absent ($b1, $b2), then planted by $A (a file, a symlink to $A's file): native $nat1, $nat2; mount $mnt1, $mnt2; $A's files $(clean && echo untouched || echo 'got the data')" excl
	stop stk
else
	notok "6. sticky: mount"
	notok "6. sticky rename: mount"
	notok "6. exclusive create: mount"
fi

# ---- 7: a directory moved out of reach on the host ----------------------------------------
S=$T/mv.src M=$T/mv.mnt
mkdir -p "$S/pub/d"
chmod 777 "$S/pub"
chown $A "$S/pub/d"
if start mv "$S" "${STALE[@]}"; then
	op $A ls "$M/pub/d" >/dev/null
	mv "$S/pub/d" "$T/vhome/private/d"
	nat=$(op $A create "$S/pub/d/native")
	mnt=$(op $A create "$M/pub/d/f")
	nls=$(op $A ls "$S/pub/d") mls=$(op $A ls "$M/pub/d")
	moved() { refused_both "$nat" "$mnt" && refused_both "$nls" "$mls" && [ -z "$(ls -A "$T/vhome/private/d")" ]; }
	check "7. pub/d moved into $V's 0700 directory: create native $nat, mount $mnt; ls native $nls, mount $mls; in the moved directory: '$(ls -A "$T/vhome/private/d" | tr '\n' ' ')'" moved
	stop mv
else
	notok "7. moved directory: mount"
fi

# ---- 8: an inode number reused on the host ---------------------------------------------
# The attacker looks pub/F up through the mount; the kernel then forgets
# it (drop_caches stands in for memory pressure) while dcfs keeps the name
# cached; F is deleted on the host and the victim's new file in its 0700
# directory gets F's inode number (8 MiB, 64 inodes: numbers come back at
# once); root reads that file through the mount; the attacker reads F.
# Natively F is gone (ENOENT): the mount may answer an error or F's own
# old content, never the victim's.
if loopdisk ir 8M -N 64; then
	S=$T/ir.disk/src M=$T/ir.mnt
	mkdir -p "$S/pub" "$S/vdir"
	echo public > "$S/pub/F"
	chmod 644 "$S/pub/F"
	chown $V "$S/vdir"
	chmod 700 "$S/vdir"
	if start ir "$S" "${STALE[@]}"; then
		first=$(op $A stat "$M/pub/F")
		sync
		echo 2 > /proc/sys/vm/drop_caches
		# the forget reaches dcfs (asynchronously) before the deletion:
		# the kernel then holds the root alone
		wait_for 5 stat_is "$T/ir.stats" nodes = 1
		ino=$(stat -c %i "$S/pub/F")
		rm "$S/pub/F"
		nat=$(op $A read "$S/pub/F")
		reused=
		for i in $(seq 64); do	# until the number comes back or inodes run out
			[ "$(op $V write "$S/vdir/G$i" victim-secret)" = OK ] || break
			[ "$(stat -c %i "$S/vdir/G$i")" = "$ino" ] && { reused=G$i; break; }
		done
		if [ -n "$reused" ]; then
			root=$(rop read "$M/vdir/$reused")
			how="reused by the victim's vdir/$reused, which root read through the mount ($root)"
		else
			how="not reused (the inode stays pinned)"
		fi
		mnt=$(op $A read "$M/pub/F")
		noleak() { [ "$first" = OK ] && [ "$nat" = ENOENT ] && [ "${mnt#*victim-secret}" = "$mnt" ]; }
		if [ -n "$reused" ]; then
			check "8. $A's pub/F (stat: $first), forgotten by the kernel, deleted on the host, its number $ino $how: $A reads F: native $nat, mount $mnt" noleak
		else	# no attack was made: nothing to judge
			skip "8. $A's pub/F, deleted on the host: its number $ino $how"
		fi
		stop ir
	else
		notok "8. inode reuse: mount"
	fi
	umount "$T/ir.disk"
else
	skip "8. inode reuse (no loop device or mkfs.ext4)"
fi

# ---- 9: leases held, writers blocked, root's stat answered ------------------------------
S=$T/ls.src M=$T/ls.mnt
mkdir -p "$S/l"
for i in $(seq 13); do echo data > "$S/l/f$i"; done
chown $V "$S/l"/f*
chmod 666 "$S/l"/f*
if start ls "$S" --coherence off --entry-timeout 0 --attr-timeout 0; then
	LEASE_WAS=$(cat "$LEASE_PARAM")
	echo 5 > "$LEASE_PARAM"	# a forgotten holder costs 5 s, not 45
	spawn "$T/lease.out" $V lease "$S/l"/f*
	holder=$spawned
	if wait_for 5 grep -q READY "$T/lease.out"; then
		openers=()
		for i in $(seq 12); do
			u=$A; [ $((i % 2)) = 0 ] && u=$O
			spawn "$T/opener.$i" $u writeto "$M/l/f$i"
			openers+=("$spawned")
		done
		sleep 1
		blocked=0
		for p in "${openers[@]}"; do kill -0 "$p" 2>/dev/null && blocked=$((blocked + 1)); done
		echo fresh > "$S/unrelated"
		got=$(timeout 20 "$PY" "$T/op.py" timestat "$M/unrelated")
		native=$(as $O timeout 1 "$PY" "$T/op.py" writeto "$S/l/f13" >/dev/null 2>&1; [ $? = 124 ] && echo blocks || echo "does not block")
		# the writers must be blocked (natively too), or the stat proves nothing
		fast() { [ $blocked = 12 ] && [ "$native" = blocks ] && [ "${got%% *}" = OK ] &&
			 awk -v t="${got#* }" 'BEGIN { exit !(t <= 100) }'; }
		check "9. 12 writers through the mount blocked on $V's leases ($blocked still blocked; natively a writer $native): root's stat of an unrelated name: ${got:-timed out} ms, within 100 ms" fast
		kill -KILL "$holder" "${openers[@]}" 2>/dev/null
		for p in "$holder" "${openers[@]}"; do wait_for 5 gone "$p"; done
	else
		notok "9. leases: $V could not take them ($(cat "$T/lease.out"))"
		kill -KILL "$holder" 2>/dev/null
	fi
	echo "$LEASE_WAS" > "$LEASE_PARAM"
	LEASE_WAS=
	stop ls
else
	notok "9. leases: mount"
fi

# ---- 10: the descriptors of a daemon with 512 -------------------------------------------
# The attacker's 600 symlinks, listed with ls -l and then held (an O_PATH
# descriptor of each, so the kernel keeps them all, whatever its memory);
# then, those let go and forgotten, 600 descriptors of one directory held
# open through the mount; then 600 directories held (O_PATH).  The
# holders take again whatever EMFILE refused, every 20 ms.  Meanwhile
# root and another user must look up, create and read through the mount.
# fine SUFFIX: root and another user look up, create and read through the
# mount, names never looked up before; prints what failed
fine() {
	local r bad=
	r=$(rop read "$M/r/f$1"); [ "$r" = "OK root-data" ] || bad="$bad root read $r;"
	r=$(rop create "$M/r/new$1"); [ "$r" = OK ] || bad="$bad root create $r;"
	r=$(op $O read "$M/o/f$1"); [ "$r" = "OK o-data" ] || bad="$bad $O read $r;"
	r=$(op $O create "$M/o/new$1"); [ "$r" = OK ] || bad="$bad $O create $r;"
	r=$(op $O stat "$M/o/g$1"); [ "$r" = OK ] || bad="$bad $O stat $r;"
	bad=${bad# }
	echo "${bad:-all OK}"
}
# holder NAME OP ARGS...: the attacker runs op.py OP ARGS in the background,
# holding what it opened, its first line to $T/NAME.out; let_go kills it,
# and has the kernel forget what it held
holder() {
	local name=$1
	shift
	spawn "$T/$name.out" $A "$@"
	held=$spawned
	wait_for 20 test -s "$T/$name.out"
}
let_go() {
	kill -KILL "$held" 2>/dev/null
	wait_for 5 gone "$held"
	sync
	echo 2 > /proc/sys/vm/drop_caches
}
S=$T/fd.src M=$T/fd.mnt
mkdir -p "$S/a" "$S/ad" "$S/al" "$S/ah" "$S/r" "$S/o"
chown $A "$S/a" "$S/ad" "$S/al" "$S/ah"
chown $O "$S/o"
for i in 1 2 3 4 5; do
	echo root-data > "$S/r/f$i"
	op $O write "$S/o/f$i" o-data >/dev/null
	op $O write "$S/o/g$i" o-data >/dev/null
done
op $A symlinks "$S/a" 600 /nonexistent >/dev/null
op $A dirs "$S/ad" 600 >/dev/null
op $A files "$S/al" 600 links >/dev/null
op $A files "$S/ah" 600 >/dev/null
MOUNTS+=("$M")
mkdir -p "$M"
if prlimit --nofile=512:512 "$DCFS" "$S" "$M" --stats "$T/fd.stats" 2>>"$T/fd.err"; then
	as $A ls -l "$M/a" > "$T/ls.out" 2>&1
	holder pin pin "$M/a"
	res=$(fine 1)
	check "10. dcfs with 512 descriptors, $A's 600 symlinks listed with ls -l ($(grep -c ' -> ' "$T/ls.out") shown) and held ($(cat "$T/pin.out")): root and $O: $res" \
		test "$res" = "all OK"
	let_go
	holder hold holddirs "$M/a" 600
	res=$(fine 2)
	check "10. then $A holds the directory open ($(cat "$T/hold.out")): root and $O: $res" \
		test "$res" = "all OK"
	let_go
	holder pind pin "$M/ad"
	res=$(fine 3)
	check "10. then $A holds 600 directories ($(cat "$T/pind.out")): root and $O: $res" \
		test "$res" = "all OK"
	let_go
	# each removal through the mount of a name of a file the kernel holds
	# may give dcfs a descriptor (a file open when its last name goes
	# keeps its data): not for a file with another name, nor past a bound
	holder pinl pin "$M/al"
	stats_since "$T/fd.stats"
	before=$(stat_val "$T/fd.stats" node_fds)
	removed=$(op $A unlinkall "$M/al" f)
	stats_since "$T/fd.stats"
	after=$(stat_val "$T/fd.stats" node_fds)
	res=$(fine 4)
	check_all "10. then $A holds 600 files with two names ($(cat "$T/pinl.out")) and removes their first names ($removed): dcfs's descriptors $before -> $after (a file that keeps a name needs none); root and $O: $res" \
		'[ "$res" = "all OK" ] && [ "$after" -le $((before + 8)) ]'
	let_go
	holder pinh pin "$M/ah"
	removed=$(op $A unlinkall "$M/ah" f)
	stats_since "$T/fd.stats"
	after=$(stat_val "$T/fd.stats" node_fds)
	budget=$(stat_val "$T/fd.stats" node_fd_budget)
	res=$(fine 5)
	check_all "10. then $A holds 600 files ($(cat "$T/pinh.out")) and removes them ($removed): dcfs's descriptors $after (at most 3 x its budget of $budget); root and $O: $res" \
		'[ "$res" = "all OK" ] && [ "$after" -le $((3 * budget)) ]'
	let_go
	stop fd
else
	for i in 1 2 3 4 5; do notok "10. descriptors: mount"; done
fi

# ---- 11: RENAME_EXCHANGE under a cache cap ---------------------------------------------
S=$T/ex.src M=$T/ex.mnt
mkdir -p "$S/x/a/in" "$S/x/b/in" "$S/o"
chown -R $A "$S/x"
chown $O "$S/o"
echo o-data > "$S/o/f"
chown $O "$S/o/f"
if start ex "$S" --cache-entries 64; then
	spawn "$T/ex.out" $A exchange "$M/x/a" "$M/x/b" 30000
	ex=$spawned
	peak=0
	while ! gone "$ex"; do
		e=$(stat_val "$T/ex.stats" cache_entries)
		[ -n "$e" ] && [ "$e" -gt "$peak" ] && peak=$e
		sleep 0.2
	done
	sleep 1.1	# one more snapshot
	e=$(stat_val "$T/ex.stats" cache_entries)
	[ -n "$e" ] && [ "$e" -gt "$peak" ] && peak=$e
	bound=$((64 * 9 / 8 + 16))
	capped() { [ "$(cat "$T/ex.out")" = OK ] && [ "$peak" -le "$bound" ]; }
	check "11. 30,000 exchanges by $A ($(cat "$T/ex.out")) under --cache-entries 64: cache_entries at most $peak (bound $bound), bytes $(stat_val "$T/ex.stats" cache_bytes)" capped
	r1=$(op $O read "$M/o/f") r2=$(op $O create "$M/o/new")
	served() { [ "$r1" = "OK o-data" ] && [ "$r2" = OK ]; }
	check "11. then $O reads ($r1) and creates ($r2)" served
	stop ex
else
	notok "11. exchanges: mount"
	notok "11. exchanges: mount"
fi

# ---- 12: --stats FILE planted as a symlink -------------------------------------------------
S=$T/st.src M=$T/st.mnt
mkdir -p "$S" "$T/w12" "$M"
chmod 777 "$T/w12"
echo precious > "$T/outside/secret12"
chmod 600 "$T/outside/secret12"
as $A ln -s "$T/outside/secret12" "$T/w12/stats"
MOUNTS+=("$M")
out=$(umask 0; "$DCFS" "$S" "$M" --stats "$T/w12/stats" 2>&1)
rc=$?
sleep 1.2	# a rewrite or two
statsok() { [ "$(cat "$T/outside/secret12")" = precious ] && [ "$(stat -c %a "$T/outside/secret12")" = 600 ] &&
	    [ -f "$T/w12/stats" ] && [ ! -L "$T/w12/stats" ] && [ "$(stat -c %a "$T/w12/stats")" = 644 ]; }
check "12. --stats in $A's directory, a symlink to root's 0600 file planted there (exit $rc): that file '$(head -c 40 "$T/outside/secret12" | tr '\n' ' ')' mode $(stat -c %a "$T/outside/secret12"); FILE $(stat -c '%F, mode %a' "$T/w12/stats") under umask 0" statsok
fusermount3 -u "$M" 2>/dev/null

# ---- 13: no CAP_SETUID ---------------------------------------------------------------------
S=$T/nc.src M=$T/nc.mnt
mkdir -p "$S" "$M"
MOUNTS+=("$M")
out=$(setpriv --inh-caps=-setuid --bounding-set=-setuid -- "$DCFS" "$S" "$M" --stats "$T/nc.stats" 2>&1)
rc=$?
mounted=$(is_mounted "$M" && echo mounted || echo "not mounted")
nocap() { [ $rc != 0 ] && not_mounted "$M" && grep -qi 'setuid' <<<"$out"; }
check "13. dcfs without CAP_SETUID: exit $rc, $mounted, said: $(tr '\n' ' ' <<<"${out:-nothing}")" nocap
is_mounted "$M" && stop nc

# ---- 14: a whiteout is the caller's -----------------------------------------------------
# RENAME_WHITEOUT asks CAP_MKNOD of the caller (overlayfs in a user's
# namespace has it); the whiteout left behind belongs to the caller
# natively, and must not be root's through the mount.
S=$T/wo.src N=$T/wo.nat M=$T/wo.mnt
mkdir -p "$S" "$N"
chmod 1777 "$S" "$N"
if start wo "$S"; then
	wo() {
		(cd / && setpriv --reuid=$A --regid=users --init-groups --inh-caps=+mknod \
			--ambient-caps=+mknod -- "$PY" "$T/op.py" write "$1/a" a >/dev/null &&
		 setpriv --reuid=$A --regid=users --init-groups --inh-caps=+mknod \
			--ambient-caps=+mknod -- "$PY" "$T/op.py" whiteout "$1/a" "$1/b")
	}
	nat=$(wo "$N") mnt=$(wo "$M")
	want="OK owner $(id -u $A), whiteout"
	check "14. $A's rename leaving a whiteout: native '$nat', mount '$mnt'" \
		test "$nat|$mnt" = "$want|$want"
	stop wo
else
	notok "14. whiteout: mount"
fi

# ---- 15: a file renamed onto a name between its create and dcfs's look -----------------
# The create is made as the caller (O_CREAT|O_EXCL); dcfs then looks at
# the name to tell the cache and the kernel what it is.  A file renamed
# there in between must not be what the caller gets open: the kernel
# takes the file a CREATE answers for the caller's new one and checks
# nothing.  The daemon pauses 300 ms between the two (a test hook); the
# attacker renames a root 0600 file in a directory it may write (not
# sticky) onto the name once the create has made it, inside the pause.
# swap_race N NAME OP PAUSE: case N, the attacker's OP (createread,
# mknod) of w/new through mount NAME, whose daemon pauses PAUSE ms after
# the host call; the attacker renames root's 0600 file onto the name in
# the pause.  The call must answer EEXIST (the kernel looked again and
# found root's file, which O_EXCL and mknod refuse), root's file stay
# root's; an answer of root's file would be it handed over.
swap_race() {
	local num=$1 name=$2 what=$3 pause=$4 made ren got
	S=$T/$name.src M=$T/$name.mnt
	mkdir -p "$S/w"
	chmod 777 "$S/w"
	echo "root-secret$num" > "$S/w/secret"
	chmod 600 "$S/w/secret"
	if ! DCFS_TEST_CREATE_PAUSE_MS=$pause start "$name" "$S"; then
		notok "$num. $what race: mount"
		return
	fi
	spawn "$T/$name.out" $A "$what" "$M/w/new"
	# made (as the attacker) when the name appears: dcfs is then in its
	# pause, before it looks at the name
	made=no
	wait_for 10 test -e "$S/w/new" && [ "$(stat -c %U "$S/w/new")" = $A ] && made=yes
	ren=$(op $A rename "$S/w/secret" "$S/w/new")
	wait_for 20 gone "$spawned"
	got=$(cat "$T/$name.out")
	check_all "$num. $A's $what of w/new (made: $made), $A renaming root's 0600 file onto it in dcfs's pause ($ren): it answered '$got'; root's file there: $(stat -c '%U %a' "$S/w/new" 2>/dev/null)" \
		'[ $made = yes ] && [ "$ren" = OK ] && [ "$got" = EEXIST ] && [ "$(stat -c %U "$S/w/new")" = root ]'
	stop "$name"
}
swap_race 15 cr createread 300

# rollback DIR MODE: case 16 in the directory DIR of mode MODE
rollback() {
	local d=$1 mode=$2 pid made ren vic lim got left
	mkdir -p "$S/$d"
	chmod "$mode" "$S/$d"
	pid=$(stat_val "$T/rb.stats" pid)
	spawn "$T/rb.out" $A create "$M/$d/new"
	made=no
	wait_for 10 test -e "$S/$d/new" && [ "$(stat -c %U "$S/$d/new")" = $A ] && made=yes
	ren=$(op $A rename "$S/$d/new" "$S/$d/mine")
	vic=$(op $V excl "$S/$d/new" victim16)
	# from 3 on every descriptor dcfs would open is refused (EMFILE)
	lim=$(rop nofile "$pid" 3)
	wait_for 20 gone "$spawned"
	[ "${lim#OK }" != "$lim" ] && rop nofile "$pid" "${lim#OK }" >/dev/null
	got=$(cat "$T/rb.out")
	left=$(rop read "$S/$d/new")
	check_all "16. $A's O_CREAT of $d/new in a directory of mode $mode (made: $made), renamed away ($ren) and $V's file made there ($vic) in dcfs's pause, dcfs out of descriptors ($lim): the create answered '$got'; $V's file: '$left'" \
		'[ $made = yes ] && [ "$ren" = OK ] && [ "$vic" = OK ] && [ "${lim#OK }" != "$lim" ] && [ "$got" = EMFILE ] && [ "$left" = "OK victim16" ]'
}
S=$T/rb.src M=$T/rb.mnt
mkdir -p "$S"
if DCFS_TEST_CREATE_PAUSE_MS=1000 start rb "$S"; then
	rollback t 1777		# the host refuses the caller's unlink
	rollback u 0777		# it would not: the check of what was made
	stop rb
else
	notok "16. rollback: mount"
fi

# 17: the same for a regular file made by mknod(2), a MKNOD request
swap_race 17 mk mknod 1000

S=$T/ln.src M=$T/ln.mnt
mkdir -p "$S/w"
chmod 777 "$S/w"
echo root-secret18 > "$S/w/secret"
chmod 600 "$S/w/secret"
as $A sh -c "echo mine18 > '$S/w/mine'"
if DCFS_TEST_CREATE_PAUSE_MS=1000 start ln "$S" "${STALE[@]}"; then
	spawn "$T/ln.out" $A link "$M/w/mine" "$M/w/lnk"
	made=no
	wait_for 10 test -e "$S/w/lnk" && made=yes
	ren=$(op $A rename "$S/w/secret" "$S/w/lnk")
	wait_for 20 gone "$spawned"
	got=$(cat "$T/ln.out")
	seen=$(op $A owner "$M/w/lnk")
	# EEXIST: the kernel looked again and found root's file, and so
	# does its stat; an answer of the linked file would stay cached
	check_all "18. $A's link of its file to w/lnk (made: $made), $A renaming root's 0600 file onto it in dcfs's pause ($ren): the link answered '$got'; w/lnk's owner through the mount: '$seen'" \
		'[ $made = yes ] && [ "$ren" = OK ] && [ "$got" = EEXIST ] && [ "$seen" = "OK 0" ]'
	stop ln
else
	notok "18. link race: mount"
fi

# ---- 19: directory snapshots past the descriptor budget --------------------------
# 20,000 names make a snapshot of 1 MiB (records of 32 bytes, the size
# rounded up to a power of two): 16 fill one user's share, 64 all of it.
# With 512 descriptors the budget of open directories is 128.
S=$T/sn.src M=$T/sn.mnt
mkdir -p "$S/a" "$S/o"
chown $A "$S/a"
chown $O "$S/o"
op $A symlinks "$S/a" 20000 /nonexistent >/dev/null
op $O write "$S/o/f1" o-data >/dev/null
MOUNTS+=("$M")
mkdir -p "$M"
if prlimit --nofile=512:512 "$DCFS" "$S" "$M" --stats "$T/sn.stats" 2>>"$T/sn.err"; then
	spawn "$T/sn.out" $A holddirs "$M/a" 600
	hold=$spawned
	wait_for 60 test -s "$T/sn.out"
	held=$(cat "$T/sn.out")
	lso=$(op $O ls "$M/o")
	lsr=$(rop ls "$M/o")
	# the attacker is refused (EMFILE) at its share: 128 + 16 held, not
	# 128 + 64
	check_all "19. dcfs with 512 descriptors, $A holding a directory of 20,000 names open ($held): $O's listing '$lso', root's '$lsr'" \
		'[ "${held#* }" = EMFILE ] && [ "${held%% *}" -le 160 ] && [ "$lso" = "OK f1" ] && [ "$lsr" = "OK f1" ]'
	kill -KILL "$hold" 2>/dev/null
	wait_for 5 gone "$hold"
	stop sn
else
	notok "19. snapshots: mount"
fi

# ---- 20: host calls that do not return ------------------------------------------
S=$T/st.src M=$T/st.mnt
mkdir -p "$S/stall" "$S/ok" "$T/st.inner"
echo ok-data > "$S/ok/f"
chmod 755 "$S/ok" "$S/stall"
chmod 644 "$S/ok/f"
MOUNTS+=("$S/stall")
if "$DCFS" "$T/st.inner" "$S/stall" --stats "$T/stin.stats" 2>>"$T/stin.err" &&
   start st "$S" --threads 4; then
	inner=$(stat_val "$T/stin.stats" pid)
	outer=$(stat_val "$T/st.stats" pid)
	rop stat "$M/stall" >/dev/null	# the mount point looked up while it answers
	kill -STOP "$inner"
	stuck=()
	for i in $(seq 1 20); do
		spawn "$T/stA$i.out" $A stat "$M/stall/x$i"
		stuck+=("$spawned")
	done
	# the attacker's requests counted stuck and refused, then the read
	# (twenty processes started as the attacker: slow under a sanitizer)
	wait_for 30 stat_is "$T/st.stats" workers_stuck -ge 4
	wait_for 30 eval 'cat "$T"/stA*.out 2>/dev/null | grep -q ENOMEM'
	spawn "$T/stO.out" $O read "$M/ok/f"
	wait_for 10 gone "$spawned"
	got=$(cat "$T/stO.out")
	nstuck=$(stat_val "$T/st.stats" workers_stuck)
	nworkers=$(stat_val "$T/st.stats" workers)
	refused=$(cat "$T"/stA*.out 2>/dev/null | grep -c ENOMEM)
	check_all "20. dcfs --threads 4, $A's 20 lookups stuck in a stopped FUSE mount inside the source: $O's read elsewhere answered '$got'; workers $nworkers (<= 12), $nstuck of them stuck, $refused of $A's lookups refused (ENOMEM)" \
		'[ "$got" = "OK ok-data" ] && [ "$nworkers" -le 12 ] && [ "${nstuck:-0}" -ge 4 ] && [ "$refused" -ge 1 ]'
	kill -TERM "$outer"
	wait_for 15 gone "$outer"
	gone "$outer" && ended=exited || ended=running
	check_all "20. SIGTERM with $nstuck workers stuck in host calls: dcfs $ended, mounted: $(grep -c " $M fuse" /proc/mounts)" \
		'[ "$ended" = exited ] && ! grep -q " $M fuse" /proc/mounts'
	kill -CONT "$inner"
	for p in "${stuck[@]}"; do wait_for 10 gone "$p"; done
	stop st
	# the same with the requests on FUSE over io_uring's ring threads
	# (Linux 6.14+; the fuse module's enable_uring on, put back at exit)
	if [ -w "$URING_PARAM" ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
		URING_WAS=$(cat "$URING_PARAM")
		echo Y > "$URING_PARAM"
		if start su "$S" --uring && wait_for 5 stat_is "$T/su.stats" uring = 1; then
			outer=$(stat_val "$T/su.stats" pid)
			rop stat "$T/su.mnt/stall" >/dev/null
			kill -STOP "$inner"
			stuck=()
			for i in 1 2 3 4; do
				spawn "$T/suA$i.out" $A stat "$T/su.mnt/stall/y$i"
				stuck+=("$spawned")
			done
			sleep 1
			waiting=0
			for p in "${stuck[@]}"; do gone "$p" || waiting=$((waiting + 1)); done
			requests=$(stat_val "$T/su.stats" uring_requests)
			kill -TERM "$outer"
			wait_for 15 gone "$outer"
			gone "$outer" && ended=exited || ended=running
			check_all "20. dcfs --uring, SIGTERM with $waiting of $A's lookups stuck ($requests requests on its rings): dcfs $ended, mounted: $(grep -c " $T/su.mnt fuse" /proc/mounts)" \
				'[ "$waiting" = 4 ] && [ "${requests:-0}" -ge 1 ] && [ "$ended" = exited ] && ! grep -q " $T/su.mnt fuse" /proc/mounts'
			kill -CONT "$inner"
			for p in "${stuck[@]}"; do wait_for 10 gone "$p"; done
			stop su
		else
			notok "20. dcfs --uring: mount (uring $(stat_val "$T/su.stats" uring))"
		fi
		echo "$URING_WAS" > "$URING_PARAM"
		URING_WAS=
	else
		skip "20. dcfs --uring, SIGTERM with lookups stuck: no FUSE over io_uring here (Linux 6.14+) or rings forbidden"
	fi

	# ---- 21: stuck reads hold the kernel's background requests ----
	# the attacker's own files and directory in the inner mount: the
	# kernel judges her by their mode bits, asking for no ACL there
	for i in $(seq 1 16); do head -c 262144 /dev/zero > "$T/st.inner/r$i"; done
	chown -R $A "$T/st.inner"
	chmod 700 "$T/st.inner"
	head -c 1048576 /dev/zero > "$S/ok/big"
	chmod 644 "$S/ok/big"
	if start sb "$S" --threads 20; then
		outer=$(stat_val "$T/sb.stats" pid)
		for i in $(seq 1 16); do as $A test -r "$T/sb.mnt/stall/r$i"; done
		sync
		echo 1 > /proc/sys/vm/drop_caches	# the pages, not the names
		kill -STOP "$inner"
		stuck=()
		for i in $(seq 1 16); do
			(cd / && exec setpriv --reuid=$A --regid=users --init-groups -- \
				dd if="$T/sb.mnt/stall/r$i" of=/dev/null bs=64k 2>/dev/null) &
			stuck+=("$!")
			PIDS+=("$!")
		done
		wait_for 10 stat_is "$T/sb.stats" workers_stuck -ge 16
		nstuck=$(stat_val "$T/sb.stats" workers_stuck)
		(cd / && timeout 10 setpriv --reuid=$O --regid=users --init-groups -- \
			dd if="$T/sb.mnt/ok/big" of=/dev/null bs=64k 2>/dev/null)
		rc=$?
		check_all "21. dcfs --threads 20, $A's 16 reads stuck in a stopped FUSE mount inside the source ($nstuck workers stuck): $O's read of an uncached file elsewhere exited $rc (124: still waiting after 10 s)" \
			'[ "$nstuck" -ge 16 ] && [ "$rc" = 0 ]'
		kill -CONT "$inner"
		for p in "${stuck[@]}"; do wait_for 10 gone "$p"; done
		stop sb
	else
		notok "21. stuck reads: mount"
	fi
	fusermount3 -u "$S/stall" 2>/dev/null || umount -l "$S/stall"
else
	notok "20. stuck host calls: mounts"
fi

# ---- 22: an extended attribute set and removed while the attacker lists ----
S=$T/xl.src
mkdir -p "$S"
chmod 755 "$S"
: > "$S/f"
chown $A "$S/f"
if start xl "$S"; then
	"$PY" -c '
import os, sys, time
end = time.time() + 3
while time.time() < end:
    os.setxattr(sys.argv[1], "user.x", b"1")
    os.removexattr(sys.argv[1], "user.x")' "$S/f" &
	flip=$!
	PIDS+=("$flip")
	got=$(as $A "$PY" -c '
import os, sys, time
end, n, odd = time.time() + 3, 0, {}
while time.time() < end:
    try:
        l = repr(os.listxattr(sys.argv[1]))
    except OSError as e:
        l = os.strerror(e.errno)
    n += 1
    if l not in ("[]", "[\x27user.x\x27]"):
        odd[l[:40]] = odd.get(l[:40], 0) + 1
print(n, sum(odd.values()), sorted(odd.items())[:3])' "$T/xl.mnt/f" 2>&1)
	wait "$flip"
	check_all "22. $A lists her file's attributes while one is set and removed on the host: lists, odd answers, the first kinds: $got" \
		'[ "${got%% *}" -gt 0 ] 2>/dev/null && [ "$(cut -d" " -f2 <<<"$got")" = 0 ]'
	stop xl
else
	notok "22. listxattr race: mount"
fi

# ---- 23: a killed caller's wait for a lease ends ---------------------------------
# waits_on_lease native|mount PID: PID sleeps in the kernel's lease break,
# or in a FUSE request (whose dcfs waits on the lease)
waits_on_lease() {
	local w
	w=$(cat "/proc/$2/wchan" 2>/dev/null)
	case $1:$w in
	native:*lease*|mount:request_wait_answer|mount:fuse_*) return 0 ;;
	esac
	return 1
}
# a file for each signal: a writer that waits on holds the file's inode
# lock through the mount, which a later writer of the file would wait for
S=$T/li.src M=$T/li.mnt
mkdir -p "$S"
for sig in USR1 KILL QUIT; do echo data > "$S/f.$sig"; done
chown $V "$S"/f.*
chmod 666 "$S"/f.*
if start li "$S" --coherence off --entry-timeout 0 --attr-timeout 0; then
	LEASE_WAS=$(cat "$LEASE_PARAM")
	echo 60 > "$LEASE_PARAM"	# far longer than the checks wait
	spawn "$T/li.lease" $V lease "$S"/f.*
	holder=$spawned
	if wait_for 5 grep -q READY "$T/li.lease"; then
		for where in native mount; do
			for sig in USR1 KILL QUIT; do
				f=$S/f.$sig
				[ $where = mount ] && f=$M/f.$sig
				out=$T/li.$where.$sig
				spawn "$out" $A writeto "$f"
				w=$spawned
				waited=no after=
				# in the wait, past the open's own requests
				wait_for 5 waits_on_lease $where "$w" && sleep 0.5 &&
					waits_on_lease $where "$w" && waited=yes
				if [ $sig = USR1 ]; then
					# handled: the writer waits on, as natively; a
					# SIGKILL later still ends it
					kill -USR1 "$w" 2>/dev/null
					sleep 2
					after="after 2 s $(gone "$w" && echo gone || echo waiting), then SIGKILL: "
					kill -KILL "$w" 2>/dev/null
				else
					kill -"$sig" "$w" 2>/dev/null
				fi
				ended=no
				wait_for 5 gone "$w" && ended=yes
				printf -v "${where}_$sig" 'waited %s, %sended within 5 s %s' $waited "$after" $ended
				kill -KILL "$w" 2>/dev/null	# one that did not end
			done
		done
		check_all "23. $A writes $V's leased file, then SIGUSR1 (handled, SA_RESTART): native ($native_USR1), mount ($mount_USR1); SIGKILL alone: native ($native_KILL), mount ($mount_KILL); SIGQUIT alone (its default dumps core): native ($native_QUIT), mount ($mount_QUIT)" \
			'[ "$native_USR1" = "waited yes, after 2 s waiting, then SIGKILL: ended within 5 s yes" ] &&
			 [ "$mount_USR1" = "$native_USR1" ] &&
			 [ "$native_KILL" = "waited yes, ended within 5 s yes" ] &&
			 [ "$mount_KILL" = "$native_KILL" ] &&
			 [ "$native_QUIT" = "$native_KILL" ] && [ "$mount_QUIT" = "$native_KILL" ]'
		got=$(op $A read "$M/f.KILL")
		check_all "23. then, the lease still held, $A's read through the mount: $got (a read lease lets readers in)" '[ "$got" = "OK data" ]'
	else
		notok "23. lease: $V could not take it ($(cat "$T/li.lease"))"
	fi
	kill -KILL "$holder" 2>/dev/null
	wait_for 5 gone "$holder"
	echo "$LEASE_WAS" > "$LEASE_PARAM"
	LEASE_WAS=
	stop li
else
	notok "23. lease wait: mount"
fi

# an instrumented daemon's reports (its stderr is /dev/null)
if ls "$T"/san/report* >/dev/null 2>&1; then
	notok "sanitizer reports from the daemons: $(head -c 2000 "$T"/san/report*)"
fi

t_finish
