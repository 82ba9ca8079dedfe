#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/test_dcfs.sh [BUILD_DIR] - dcfs, end to end, as root.
#
# Mounts dcfs (BUILD_DIR/dcfs, default build/) over scratch directories and
# checks: start-up (the mount answers when the command returns) and every
# refused start; the command line (--help lists every option of the
# parser's table, --version, usage errors exit 2), every option as a -o
# mount option, who may use the mount (allow_other, --no-allow-other,
# allow_root); --stats (refused inside the mount point or unwritable,
# written mode 0644 through a temporary file of its own, pid and updated
# telling a dead daemon); listxattr as nobody against the native listing;
# systemd readiness (READY=1, STOPPING=1); in private mount namespaces:
# dcfs as nobody through fusermount3 (/dev/fuse refused with the right
# message, no allow_other by default, user_allow_other, allow_root), a
# daemon's diagnostics in syslog, mount -t fuse.dcfs and an fstab line;
# a script of POSIX operations (tests/dcfs_conform.c) run
# through the mount and on a plain directory, result by result, as root in
# each libdcache mode and as nobody (without and with a supplementary
# group), permission-denied cases included; a truncate the host refuses
# leaves the set-id bits; an append-only file (chattr
# +a) takes appends and refuses an overwrite, as natively; in a directory
# removed under a process, names answer ENOENT and the directory lists
# empty and takes a chmod, as natively; no node leaked (after
# drop_caches the kernel holds only the root, and at exit nothing is
# left); concurrent clients (fsync'ed appends, a 64-entry cache) with the
# source checked byte for byte and only the root held after drop_caches;
# worker threads coming and going; a small compile (and git, if installed)
# through the mount; SIGKILL of the daemon loses nothing that was
# fsync'ed; more nodes than descriptors (files held by handle), then
# out of descriptors (EMFILE, nothing corrupted); SIGTERM, SIGINT and
# fusermount3 -u unmount cleanly; mounted on its own source, dcfs starts
# and shows a file made beneath the mount; on a source without file
# handles (ramfs) it says fanotify cannot work, watches with inotify, and
# tells the kernel of a change through every node it holds of an inode;
# lookup counts stay exact while the source changes under the kernel's
# lookups and floods overflow an event queue made 16 events long
# (fs.{inotify,fanotify}.max_queued_events lowered while the daemon starts,
# and put back at once).  Where the kernel has FUSE over io_uring
# (Linux 6.14+), the test turns the fuse module's enable_uring on (and back
# at the end) and runs the conformance script, the concurrent clients, the
# compile and an fsmeta comparison again with --uring.  dcbench
# coherence: changes made directly in the source must show through the
# mount within 100 ms (fanotify, inotify) or the TTL and 100 ms (ttl);
# within 1 s across floods that overflow the watcher's event queue (dcfs
# must log the overflows); and within the TTL and 150 ms after the inotify
# watch budget runs out and dcfs falls back to ttl, saying so
# (fs.inotify.max_user_watches lowered for that run, and put back at once).
#
# Prints "ok N - ..." / "not ok N - ..." lines and ends with
# "test_dcfs: N passed, M failed, K skipped"; exits 0 only if none failed,
# 77 if it cannot run here (not root, no /dev/fuse, mounting impossible).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DCFS=$PWD/$BUILD/dcfs
T_NAME=test_dcfs
. tests/lib.sh


[ "$(id -u)" = 0 ] || cant "needs root"
[ -c /dev/fuse ] || cant "no /dev/fuse"
command -v fusermount3 >/dev/null || cant "no fusermount3 (apt-get install fuse3)"
[ -x "$DCFS" ] || { echo "test_dcfs: $DCFS is not built"; exit 1; }
CC=${CC:-cc}
command -v "$CC" >/dev/null || CC=gcc

T=$(mktemp -d /tmp/test_dcfs.XXXXXX) || exit 1
chmod 755 "$T"
# an instrumented daemon's stderr is /dev/null once it runs: its
# sanitizer reports go to files here, checked at the end
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/sanitizer"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/sanitizer"
# (TSan: liburcu's own hand-offs are suppressed, as in make check; a
# suppressions= of the caller's, later in the string, wins)
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp ${TSAN_OPTIONS:+$TSAN_OPTIONS }log_path=$T/sanitizer"
MOUNTS=()
DISK=	# a scratch directory on a disk, made where a test needs one
cleanup() {
	local m
	for m in "${MOUNTS[@]}"; do
		if mountpoint -q "$m" 2>/dev/null || grep -q " $m fuse" /proc/mounts; then
			fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
		fi
	done
	for m in "$T"/*.stats; do
		[ -r "$m" ] || continue
		local p
		p=$(stat_val "$m" pid)
		[ -n "$p" ] && grep -q dcfs "/proc/$p/comm" 2>/dev/null && kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
	[ -n "$DISK" ] && rm -rf "$DISK"
	[ -n "$URING_WAS" ] && echo "$URING_WAS" > "$URING_PARAM" 2>/dev/null
	[ -n "$WATCHES_WAS" ] && echo "$WATCHES_WAS" > "$WATCHES_PARAM" 2>/dev/null
	[ -n "$QUEUE_WAS" ] && echo "$QUEUE_WAS" > "$QUEUE_PARAM" 2>/dev/null
}
URING_PARAM=/sys/module/fuse/parameters/enable_uring
URING_WAS=
WATCHES_PARAM=/proc/sys/fs/inotify/max_user_watches
WATCHES_WAS=
QUEUE_PARAM=	# fs.{inotify,fanotify}.max_queued_events, while lowered
QUEUE_WAS=
trap cleanup EXIT
trap 'exit 1' INT TERM

# any_alive PID...: is one of them still running (not a zombie)?  No forks:
# it runs in a sampling loop.
any_alive() {
	local p st
	for p; do
		st=
		[ -r "/proc/$p/stat" ] && read -r _ _ st _ < "/proc/$p/stat" 2>/dev/null
		[ -n "$st" ] && [ "$st" != Z ] && return 0
	done
	return 1
}
ntasks() { local t=("/proc/$1/task/"*); [ -e "${t[0]}" ] && echo ${#t[@]} || echo 0; }

# start NAME SRC [dcfs options]: mounts SRC on $T/NAME.mnt, stats in $T/NAME.stats
start() {
	local name=$1 src=$2
	shift 2
	mkdir -p "$T/$name.mnt"
	MOUNTS+=("$T/$name.mnt")
	"$DCFS" "$src" "$T/$name.mnt" --stats "$T/$name.stats" "$@"
}

# stop NAME: unmount with fusermount3 -u, wait for the daemon to exit
stop() {
	local pid out
	pid=$(stat_val "$T/$1.stats" pid)
	if ! out=$(fusermount3 -u "$T/$1.mnt" 2>&1); then
		echo "# stop $1: $out"
		return 1
	fi
	if ! wait_for 20 gone "$pid"; then
		echo "# stop $1: daemon $pid still running 20 s after the unmount"
		return 1
	fi
	wait_for 5 grep -q '^state exited' "$T/$1.stats"
}

# ---- can we mount at all? ---------------------------------------------------
mkdir -p "$T/probe.src"
if ! start probe "$T/probe.src" 2>"$T/probe.err"; then
	cant "mounting is impossible: $(tail -1 "$T/probe.err")"
fi
stop probe

$CC -std=c11 -O1 -Wall -o "$T/conform" tests/dcfs_conform.c || { echo "test_dcfs: cannot build dcfs_conform"; exit 1; }
CONFORM=$T/conform

# ---- start-up and refused starts ------------------------------------------------
mkdir -p "$T/s.src/sub"
echo hi > "$T/s.src/file"
start s "$T/s.src" && [ "$(cat "$T/s.mnt/file")" = hi ] && is_mounted "$T/s.mnt"
check "the mount answers as soon as dcfs returns" [ $? = 0 ]
check "the daemon runs detached, with its statistics" \
	test -n "$(stat_val "$T/s.stats" pid)" -a "$(stat_val "$T/s.stats" nodes)" -ge 1

refused() {	# DESC REGEX ARGS...: dcfs ARGS exits non-zero, says REGEX, mounts nothing
	local desc=$1 re=$2 out rc
	shift 2
	out=$("$DCFS" "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && echo "$out" | grep -Eq "$re"; then
		ok "refused: $desc"
	else
		notok "refused: $desc (exit $rc: $out)"
	fi
}
mkdir -p "$T/r.mnt"
MOUNTS+=("$T/r.mnt")
refused "missing source" "source .*No such file" "$T/nonexistent" "$T/r.mnt"
refused "source not a directory" "not a directory" "$T/s.src/file" "$T/r.mnt"
refused "missing mount point" "mount point .*No such file" "$T/s.src" "$T/nonexistent"
refused "busy mount point" "busy" "$T/s.src" "$T/s.mnt"
refused "mount point inside the source" "inside the source" "$T/s.src" "$T/s.src/sub"
refused "unknown option" "unknown option '--bogus'" "$T/s.src" "$T/r.mnt" --bogus
refused "bad --mode" "not rcu, global or rwlock" "$T/s.src" "$T/r.mnt" --mode fast
refused "bad --threads" "whole number" "$T/s.src" "$T/r.mnt" --threads 0
refused "bad --attr-timeout" "seconds" "$T/s.src" "$T/r.mnt" --attr-timeout -1
refused "unknown -o option" "unknown option|FUSE session" "$T/s.src" "$T/r.mnt" -o no_such_option
refused "missing arguments" "usage" "$T/s.src"
if command -v unshare >/dev/null && unshare -m true 2>/dev/null; then
	out=$(unshare -m sh -c "mount -t tmpfs none /dev && '$DCFS' '$T/s.src' '$T/r.mnt'" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && echo "$out" | grep -q "/dev/fuse.*modprobe fuse"; then
		ok "refused: no /dev/fuse, saying to load the module"
	else
		notok "refused: no /dev/fuse (exit $rc: $out)"
	fi
else
	skip "refused: no /dev/fuse (no unshare -m here)"
fi
refused "bad --uring" "whole number" "$T/s.src" "$T/r.mnt" --uring=0
# FUSE over io_uring (Linux 6.14+): the fuse module's enable_uring, a
# system-wide setting, on for the --uring tests and put back at the end
URING=0
# (kernel.io_uring_disabled, where set, forbids rings: dcfs would serve
# through /dev/fuse, saying so, and the ring checks could not pass)
if [ -w "$URING_PARAM" ] && [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" = 0 ]; then
	URING_WAS=$(cat "$URING_PARAM")
	echo N > "$URING_PARAM"
	refused "--uring while the kernel's enable_uring is N" "enable_uring" "$T/s.src" "$T/r.mnt" --uring
	echo Y > "$URING_PARAM" && URING=1
	# rings forbidden (kernel.io_uring_disabled 2, put back at once):
	# --uring says so and serves through /dev/fuse
	mkdir -p "$T/fb.src"
	echo hi > "$T/fb.src/file"
	if echo 2 > /proc/sys/kernel/io_uring_disabled 2>/dev/null; then
		out=$(start fb "$T/fb.src" --uring 2>&1)
		rc=$?
		echo 0 > /proc/sys/kernel/io_uring_disabled
		if [ $rc = 0 ] && grep -q "serving through /dev/fuse" <<<"$out" &&
		   [ "$(cat "$T/fb.mnt/file")" = hi ]; then
			ok "--uring where rings are forbidden: says so, serves through /dev/fuse"
		else
			notok "--uring where rings are forbidden (exit $rc: $out)"
		fi
		stop fb
	else
		skip "--uring where rings are forbidden: kernel.io_uring_disabled cannot be set"
	fi
	# a REGISTER that io_uring fails before FUSE sees it (the test hook
	# makes each ring's first one name no descriptor): dcfs must turn the
	# ring off itself, or every request would wait for that queue
	mkdir -p "$T/fr.mnt"
	out=$(DCFS_TEST_FAIL_URING_REGISTER=1 timeout 30 "$DCFS" "$T/fb.src" "$T/fr.mnt" \
		--stats "$T/fr.stats" --uring 2>&1)
	rc=$?
	MOUNTS+=("$T/fr.mnt")
	if [ $rc = 0 ] && [ "$(timeout 10 cat "$T/fr.mnt/file")" = hi ] &&
	   wait_for 3 stat_is "$T/fr.stats" uring = 0; then
		ok "--uring, every REGISTER failed by io_uring: serves through /dev/fuse"
	else
		notok "--uring, every REGISTER failed by io_uring (exit $rc: $out)"
	fi
	stop fr
else
	for c in "--uring while enable_uring is N" "--uring where rings are forbidden" \
		 "--uring, every REGISTER failed by io_uring"; do
		skip "$c: no FUSE over io_uring here (Linux 6.14+, $URING_PARAM) or rings forbidden"
	done
fi
check "refused starts mounted nothing" not_mounted "$T/r.mnt"
check "fusermount3 -u unmounts and the daemon exits" stop s

# ---- the command line: --help, --version, usage errors ----------------------------
# Every long option the parser knows (the options[] table in options.c) must
# be in --help; a usage error is a message and the synopsis on stderr,
# exit 2; the version is libdcache's.
help=$("$DCFS" --help 2>&1); rc=$?
names=$(sed -n '/^} options\[\] = {$/,/^};$/s/^\t{ "\([a-z-]*\)",.*/\1/p' tools/dcfs/options.c)
missing=
for o in $names; do grep -Eq -- "(^|[ ,])--$o([^-a-z]|$)" <<<"$help" || missing="$missing --$o"; done
for o in "-f, --foreground" "-d, --debug" "-o OPT" "-h, --help" "-V, --version" noallow_other; do
	grep -qF -- "$o" <<<"$help" || missing="$missing '$o'"
done
check "--help exits 0 and lists all $(wc -w <<<"$names") long options of the parser, -o and the short ones (missing:${missing:- none})" \
	eval '[ $rc = 0 ] && [ "$(wc -w <<<"$names")" -ge 15 ] && [ -z "$missing" ]'
if command -v man >/dev/null; then
	page=$(MANWIDTH=80 man -E ascii -l man/dcfs.1 2>/dev/null | sed 's/.\x08//g')
	missing=
	for o in $names; do grep -Eq -- "(^|[ ,])--$o([^-a-z]|$)" <<<"$page" || missing="$missing --$o"; done
	for o in $names; do	# (help and version are no mount options)
		case $o in help | version) continue ;; esac
		grep -qF -- "-o ${o//-/_}" <<<"$page" || missing="$missing '-o ${o//-/_}'"
	done
	check "man/dcfs.1 documents every long option and its -o form (missing:${missing:- none})" \
		eval '[ "$(wc -w <<<"$names")" -ge 15 ] && [ -z "$missing" ]'
else
	skip "man/dcfs.1 documents every option (no man here)"
fi
want="dcfs (dcache) $(sed -n 's/^#define DC_VERSION_STRING[[:space:]]*"\(.*\)"/\1/p' include/dcache.h)"
out=$("$DCFS" --version 2>&1); rc=$?
check "--version prints '$want' and exits 0 (exit $rc: '$out')" eval '[ $rc = 0 ] && [ "$out" = "$want" ]'
usage_refused() {	# DESC REGEX ARGS...: exit 2, REGEX and the synopsis on stderr, nothing on stdout
	local desc=$1 re=$2 out err rc
	shift 2
	out=$("$DCFS" "$@" 2>"$T/usage.err")
	rc=$?
	err=$(cat "$T/usage.err")
	if [ $rc = 2 ] && [ -z "$out" ] && grep -Eq -- "$re" <<<"$err" && grep -q '^usage: dcfs SOURCE_DIR MOUNTPOINT' <<<"$err"; then
		ok "usage error, exit 2: $desc"
	else
		notok "usage error, exit 2: $desc (exit $rc: $err$out)"
	fi
}
usage_refused "unknown option" "unknown option '--bogus'" "$T/s.src" "$T/r.mnt" --bogus
usage_refused "unknown short option" "unknown option '-x'" "$T/s.src" "$T/r.mnt" -x
usage_refused "missing arguments" "SOURCE_DIR and MOUNTPOINT" "$T/s.src"
usage_refused "--readers above --threads, the range named" "from 1 to 8" "$T/s.src" "$T/r.mnt" --threads 8 --readers 100
usage_refused "-o readers= above the default 10 threads" "from 1 to 10" "$T/s.src" "$T/r.mnt" -o readers=100
usage_refused "-o stats without a value" "-o stats needs a value" "$T/s.src" "$T/r.mnt" -o stats
usage_refused "-o foreground=1" "-o foreground takes no value" "$T/s.src" "$T/r.mnt" -o foreground=1
usage_refused "-o mode=fast" "-o mode: 'fast' is not rcu" "$T/s.src" "$T/r.mnt" -o mode=fast
usage_refused "a mount option libfuse refuses" "libfuse refused" "$T/s.src" "$T/r.mnt" -o no_such_option

# ---- every option as a mount option; who may use the mount -------------------------
mkdir -p "$T/o.src"
echo hi > "$T/o.src/file"
chmod 644 "$T/o.src/file"
if start o "$T/o.src" -o mode=global,coherence=off,ttl=500,entry_timeout=0,attr_timeout=0,cache_entries=100,threads=3,readers=1,open_requests,noatime,defaults,nofail,x-systemd.automount; then
	check "-o mode=global,coherence=off,...,noatime: applied (stats: mode $(stat_val "$T/o.stats" mode), coherence $(stat_val "$T/o.stats" coherence); fstab-only options ignored)" \
		test "$(stat_val "$T/o.stats" mode) $(stat_val "$T/o.stats" coherence)" = "global off" -a \
		"$(cat "$T/o.mnt/file")" = hi
	check "as root allow_other is the default" grep -q " $T/o.mnt fuse.dcfs .*,allow_other" /proc/mounts
	check "noatime went on to the kernel" grep -q " $T/o.mnt fuse.dcfs [^ ]*noatime" /proc/mounts
	# open_requests: a handle of a file opened O_APPEND takes a positional
	# write once fcntl took O_APPEND off, and appends while it is on
	appendw() {
		/usr/bin/python3 -c '
import fcntl, os, sys
p = sys.argv[1]
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
os.write(fd, b"abc")
fcntl.fcntl(fd, fcntl.F_SETFL, 0)
os.pwrite(fd, b"X", 0)
os.close(fd)
fd = os.open(p, os.O_WRONLY | os.O_APPEND)
os.write(fd, b"d")
os.close(fd)
print(open(p).read())' "$1" 2>&1 | tail -1
	}
	# and O_DIRECT, 4 KiB aligned, where the source takes it natively
	directw() {
		/usr/bin/python3 -c '
import mmap, os, sys
p = sys.argv[1]
buf = mmap.mmap(-1, 4096)
buf.write(b"d" * 4096)
fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
os.write(fd, buf)
os.close(fd)
fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
got = mmap.mmap(-1, 4096)
print(os.readv(fd, [got]))' "$1" 2>&1 | tail -1
	}
	if [ -x /usr/bin/python3 ]; then
		nat=$(appendw "$T/o.src/app-native") mnt=$(appendw "$T/o.mnt/app")
		check_all "--open-requests, O_APPEND taken off by fcntl, then an append: native '$nat', mount '$mnt'" \
			'[ "$nat" = Xbcd ] && [ "$mnt" = "$nat" ]'
		nat=$(directw "$T/o.src/direct-native")
		if [ "$nat" = 4096 ]; then
			mnt=$(directw "$T/o.mnt/direct")
			check "--open-requests, O_DIRECT 4 KiB written and read back: native $nat, mount $mnt" \
				test "$mnt" = 4096
		else
			skip "--open-requests and O_DIRECT: the source takes none ($nat)"
		fi
	else
		skip "--open-requests and O_APPEND: no /usr/bin/python3"
		skip "--open-requests and O_DIRECT: no /usr/bin/python3"
	fi
	stop o
else
	notok "-o with dcfs options: mount"
fi
# --readdirplus: with both timeouts 0 a listing is plain READDIR (no node
# per entry) unless asked; auto lets the kernel's first listing carry the
# attributes, as a peer at libfuse's defaults does
for i in 1 2 3 4 5; do echo "$i" > "$T/o.src/rp$i"; done
for rp in default auto off; do
	# shellcheck disable=SC2046 # the option: two words or none
	if start o "$T/o.src" --entry-timeout 0 --attr-timeout 0 \
		$([ $rp = default ] || echo "--readdirplus $rp"); then
		ls "$T/o.mnt" > /dev/null
		if [ $rp = auto ]; then
			wait_for 5 stat_is "$T/o.stats" nodes_total -ge 6
		else
			# the counters are rewritten every second: two rewrites
			sleep 2.1
		fi
		made=$(stat_val "$T/o.stats" nodes_total)
		if [ $rp = auto ]; then
			check "--readdirplus auto, timeouts 0: the listing made a node per entry ($made)" \
				test "$made" -ge 6
		else
			check "--readdirplus $rp, timeouts 0: the listing made no node ($made)" \
				test "$made" = 1
		fi
		stop o
	else
		notok "--readdirplus $rp: mount"
	fi
done
rm -f "$T"/o.src/rp?
out=$("$DCFS" "$T/o.src" "$T/o.mnt" --readdirplus bogus 2>&1); rc=$?
check_all "refused: --readdirplus bogus, exit 2 ($rc)" '[ $rc = 2 ] && grep -q "not auto or off" <<<"$out"'
NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
if $NB true 2>/dev/null; then
	for way in --no-allow-other "-o noallow_other" "-o no_allow_other"; do
		# shellcheck disable=SC2086 # way: words
		if start o "$T/o.src" $way; then
			cat "$T/o.mnt/file" > /dev/null
			out=$($NB cat "$T/o.mnt/file" 2>&1)
			check "$way: no allow_other, and nobody is refused ($out)" \
				test -z "$(grep " $T/o.mnt fuse.dcfs .*allow_other" /proc/mounts)" -a "$out" != hi
			stop o
		else
			notok "$way: mount"
		fi
	done
	# allow_root as root is the kernel's own check: root only, whatever
	# the kernel has cached from root's own use
	if start o "$T/o.src" -o allow_root; then
		got=$(cat "$T/o.mnt/file"; stat -c %s "$T/o.mnt/file")
		out=$($NB stat -c %s "$T/o.mnt/file" 2>&1; $NB cat "$T/o.mnt/file" 2>&1; $NB ls "$T/o.mnt" 2>&1)
		check "-o allow_root: root reads ($(echo $got)), nobody is refused even what root just used ($(echo $out))" \
			test "$(echo $got)" = "hi 3" -a "$(grep -c 'Permission denied' <<<"$out")" = 3
		stop o
	else
		notok "-o allow_root: mount"
	fi
else
	skip "--no-allow-other and allow_root (no setpriv)"
fi

# ---- --stats FILE -----------------------------------------------------------------
# Inside the mount point writing it would wait on dcfs itself before dcfs
# serves (start-up hung for good, SIGTERM ignored, a dead mount left):
# refused before mounting, also through a symlink.  (timeout: so that a
# hang fails the check instead of the run.)
# abort_fuse MNT: end a mount whose daemon hangs, and the daemon (the one
# whose command line names MNT, a path of this run's own)
abort_fuse() {
	local dev p
	dev=$(awk -v m="$1" '$5 == m { print $3 }' /proc/self/mountinfo | tail -1)
	[ -n "$dev" ] && echo 1 > "/sys/fs/fuse/connections/${dev#*:}/abort" 2>/dev/null
	for p in /proc/[0-9]*; do
		tr '\0' '\n' < "$p/cmdline" 2>/dev/null | grep -qxF -- "$1" && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	umount -l "$1" 2>/dev/null
}
mkdir -p "$T/sa1.mnt" "$T/sa2.mnt" "$T/sb.mnt"
MOUNTS+=("$T/sa1.mnt" "$T/sa2.mnt" "$T/sb.mnt")
ln -s "$T/sa2.mnt" "$T/sa2.link"
for pair in "sa1.mnt sa1.mnt/x.stats" "sa2.mnt sa2.link/x.stats"; do
	m=$T/${pair%% *} f=$T/${pair#* }
	# (into a file: a hung daemon would hold a command substitution's pipe)
	timeout -k 5 20 "$DCFS" "$T/s.src" "$m" --stats "$f" > "$T/sa.out" 2>&1
	rc=$?
	out=$(cat "$T/sa.out")
	[ $rc = 1 ] || abort_fuse "$m"
	check "refused: --stats $f inside the mount point (exit $rc: $out)" \
		eval '[ $rc = 1 ] && grep -q "inside the mount point" <<<"$out" && not_mounted "$m"'
done
for f in "$T/nonexistent/x.stats" "$T/s.src/file/x.stats"; do
	out=$("$DCFS" "$T/s.src" "$T/sb.mnt" --stats "$f" 2>&1)
	rc=$?
	check "refused: --stats $f cannot be written (exit $rc: $out)" \
		eval '[ $rc = 1 ] && grep -q -- "--stats" <<<"$out" && not_mounted "$T/sb.mnt"'
	not_mounted "$T/sb.mnt" || fusermount3 -u "$T/sb.mnt"
done
# written through a new file of its own beside FILE, never a name planted
# there, mode 0644 whatever the umask
echo precious > "$T/victim"
ln -s "$T/victim" "$T/sc.stats.tmp"
mkdir -p "$T/sc.src"
if start sc "$T/sc.src"; then
	sleep 1.2	# a rewrite or two
	check "--stats: mode 0644 ($(stat -c %a "$T/sc.stats")), a plain file, the planted $T/sc.stats.tmp symlink not followed ($(cat "$T/victim"))" \
		test "$(stat -c %a "$T/sc.stats")" = 644 -a ! -L "$T/sc.stats" -a "$(cat "$T/victim")" = precious
	# a reader tells a dead daemon by its pid, or by updated falling
	# behind the one-second rewrites
	pid=$(stat_val "$T/sc.stats" pid)
	u0=$(stat_val "$T/sc.stats" updated)
	sleep 2.2
	u1=$(stat_val "$T/sc.stats" updated)
	check "--stats: pid $pid alive, updated $u0 -> $u1 follows the clock ($(date +%s))" \
		eval '[ -n "$pid" ] && kill -0 "$pid" && [ -n "$u0" ] && [ "$u1" -gt "$u0" ] &&
		      [ $(($(date +%s) - u1)) -le 2 ]'
	kill -KILL "$pid"
	wait_for 5 gone "$pid"
	sleep 2.5
	u2=$(stat_val "$T/sc.stats" updated)
	check "--stats after SIGKILL: still 'state $(stat_val "$T/sc.stats" state)', but pid $pid is gone and updated ($u2) is $(($(date +%s) - ${u2:-0})) s old" \
		eval 'gone "$pid" && [ -n "$u2" ] && [ $(($(date +%s) - u2)) -ge 2 ]'
	fusermount3 -u "$T/sc.mnt" 2>/dev/null || umount -l "$T/sc.mnt"
	check "--stats: no temporary file left beside it" test -z "$(find "$T" -maxdepth 1 -name '.sc.stats.*')"
else
	notok "--stats: mount"
fi

# ---- helpers: xattrs by hand, a datagram socket's receiver ------------------------------
cat > "$T/helper.c" <<'EOF'
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[65536];
	ssize_t n, i;

	if (argc == 3 && !strcmp(argv[1], "listxattr")) {
		n = listxattr(argv[2], buf, sizeof(buf));
		if (n < 0) {
			perror(argv[2]);
			return 1;
		}
		for (i = 0; i < n; i += (ssize_t)strlen(buf + i) + 1)
			puts(buf + i);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "setxattr")) {
		if (setxattr(argv[2], argv[3], argv[4], strlen(argv[4]), 0) == 0)
			return 0;
		perror(argv[3]);
		return 1;
	}
	if (argc == 4 && !strcmp(argv[1], "recv")) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int s = socket(AF_UNIX, SOCK_DGRAM, 0), out;

		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[2]);
		unlink(argv[2]);
		out = open(argv[3], O_WRONLY | O_CREAT | O_APPEND, 0644);
		if (s < 0 || out < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror(argv[2]);
			return 1;
		}
		chmod(argv[2], 0666);
		while ((n = recv(s, buf, sizeof(buf) - 1, 0)) >= 0) {
			buf[n++] = '\n';
			if (write(out, buf, (size_t)n) != n)
				return 1;
		}
		return 1;
	}
	fprintf(stderr, "usage: helper listxattr PATH | setxattr PATH NAME VALUE | recv SOCKET FILE\n");
	return 2;
}
EOF
$CC -std=c11 -D_GNU_SOURCE -O1 -Wall -o "$T/helper" "$T/helper.c" || { echo "test_dcfs: cannot build the helper"; exit 1; }
HELPER=$T/helper

# ---- listxattr as a user other than root -------------------------------------------------
# trusted.* is the kernel's to hide from that user; the rest must come
# through whole and in order, whatever sits between.
mkdir -p "$T/xa.src"
: > "$T/xa.src/f"
chmod 644 "$T/xa.src/f"
if "$HELPER" setxattr "$T/xa.src/f" trusted.a 1 2>/dev/null &&
   "$HELPER" setxattr "$T/xa.src/f" security.s 2 2>/dev/null; then
	"$HELPER" setxattr "$T/xa.src/f" trusted.bb 3 &&
		"$HELPER" setxattr "$T/xa.src/f" user.big "$(printf '%0100d' 4)" &&
		"$HELPER" setxattr "$T/xa.src/f" trusted.ccc 5 &&
		"$HELPER" setxattr "$T/xa.src/f" user.x 6
	if ! $NB true 2>/dev/null; then
		skip "listxattr as nobody (no setpriv)"
	elif start xa "$T/xa.src"; then
		native=$($NB "$HELPER" listxattr "$T/xa.src/f" 2>&1 | tr '\n' ' ')
		got=$($NB "$HELPER" listxattr "$T/xa.mnt/f" 2>&1 | tr '\n' ' ')
		check "listxattr as nobody through the mount is the native one: '$got' (native '$native')" \
			test "$got" = "$native" -a -n "$(grep user.big <<<"$native")"
		check "listxattr as root: every name, trusted.* included" \
			test "$("$HELPER" listxattr "$T/xa.mnt/f" | tr '\n' ' ')" = "$("$HELPER" listxattr "$T/xa.src/f" | tr '\n' ' ')"
		stop xa
	else
		notok "listxattr as nobody: mount"
	fi
else
	skip "listxattr as nobody (no trusted.* or security.* xattrs on $T)"
fi

# ---- systemd: readiness -----------------------------------------------------------------
# With NOTIFY_SOCKET set, dcfs says READY=1 once it serves (a daemonizing
# dcfs adds MAINPID, the daemon's pid) and STOPPING=1 when it ends.
"$HELPER" recv "$T/notify.sock" "$T/notify.out" & recv=$!
wait_for 5 test -S "$T/notify.sock"
mkdir -p "$T/sd.src" "$T/sd.mnt"
echo hi > "$T/sd.src/file"
MOUNTS+=("$T/sd.mnt")
NOTIFY_SOCKET=$T/notify.sock "$DCFS" "$T/sd.src" "$T/sd.mnt" --foreground --stats "$T/sd.stats" 2>/dev/null &
fg=$!
wait_for 10 grep -q '^READY=1$' "$T/notify.out"
check "--foreground under systemd: READY=1, and the mount answers" \
	eval 'grep -q "^READY=1$" "$T/notify.out" && [ "$(cat "$T/sd.mnt/file" 2>&1)" = hi ]'
kill -TERM $fg
wait $fg
check "and STOPPING=1 when it ends (SIGTERM)" grep -q '^STOPPING=1$' "$T/notify.out"
: > "$T/notify.out"
if NOTIFY_SOCKET=$T/notify.sock start sd "$T/sd.src" 2>/dev/null; then
	wait_for 5 grep -q '^MAINPID=' "$T/notify.out"
	check "daemonizing under systemd: READY=1 with MAINPID $(sed -n 's/^MAINPID=//p' "$T/notify.out"), the daemon's ($(stat_val "$T/sd.stats" pid))" \
		eval 'grep -q "^READY=1$" "$T/notify.out" &&
		      [ "$(sed -n "s/^MAINPID=//p" "$T/notify.out")" = "$(stat_val "$T/sd.stats" pid)" ]'
	stop sd
else
	notok "daemonizing under systemd: mount"
fi
kill $recv 2>/dev/null
wait $recv 2>/dev/null

# ---- in a private mount namespace: users other than root, syslog, mount(8) --------------
# A tmpfs over /dev there (with its own /dev/fuse, /dev/null and /dev/log)
# and a bind-mounted /etc/fuse.conf: what these checks change is seen by
# nothing else.  The script prints PASS/FAIL/SKIP lines, counted here.
ns_run() {	# NAME: runs $T/NAME.ns.sh in a new mount namespace
	local line
	while IFS= read -r line; do
		case $line in
		"PASS "*) ok "${line#PASS }" ;;
		"FAIL "*) notok "${line#FAIL }" ;;
		"SKIP "*) skip "${line#SKIP }" ;;
		*) echo "# $line" ;;
		esac
	done < <(env DCFS="$DCFS" T="$T" HELPER="$HELPER" unshare -m --propagation private bash "$T/$1.ns.sh" 2>&1)
}
cat > "$T/ns.common.sh" <<'EOF'
set -u
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
verdict() { local d=$1; shift; if "$@"; then pass "$d"; else fail "$d"; fi; }
private_dev() {	# MODE of /dev/fuse
	mount -t tmpfs -o mode=755 dcfs-test-dev /dev &&
		mknod -m 666 /dev/null c 1 3 && mknod -m "$1" /dev/fuse c 10 229
}
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
wait_for() { local t=$(($1 * 20)); shift; while [ $t -gt 0 ]; do "$@" && return 0; sleep 0.05; t=$((t - 1)); done; return 1; }
stat_val() { sed -n "s/^$2 //p" "$1" 2>/dev/null | head -1; }
NB="setpriv --reuid=nobody --regid=nogroup --clear-groups"
OTHER="setpriv --reuid=4242 --regid=4242 --clear-groups"
EOF
if ! command -v unshare >/dev/null || ! unshare -m --propagation private true 2>/dev/null; then
	skip "users other than root, syslog, mount(8) (no unshare -m here)"
elif ! $NB true 2>/dev/null; then
	skip "users other than root, syslog, mount(8) (no setpriv)"
else
	mkdir -p "$T/nb/src" "$T/nb/mnt"
	echo hi > "$T/nb/src/file"
	chown -R nobody:nogroup "$T/nb"
	cat > "$T/nb.ns.sh" <<'EOF'
. "$T/ns.common.sh"
private_dev 600 || { fail "a private /dev"; exit; }
D=$T/nb
out=$($NB "$DCFS" "$D/src" "$D/mnt" 2>&1)
verdict "as nobody, /dev/fuse mode 0600: refused, saying it needs read and write access, not a module ($out)" \
	eval 'grep -q "reading and writing" <<<"$out" && ! grep -qi module <<<"$out"'
chmod 666 /dev/fuse
printf '#user_allow_other\n' > "$T/fuse.conf.no"
printf 'user_allow_other\n' > "$T/fuse.conf.yes"
mount --bind "$T/fuse.conf.no" /etc/fuse.conf || { fail "bind /etc/fuse.conf"; exit; }
if out=$($NB "$DCFS" "$D/src" "$D/mnt" --stats "$D/st" 2>&1); then
	verdict "as nobody: fanotify is not permitted, and dcfs says so and watches with inotify ($out)" \
		eval 'grep -q "coherence: fanotify not available on .*; using inotify" <<<"$out" &&
		      [ "$(stat_val "$D/st" coherence)" = inotify ]'
	opts=$(grep " $D/mnt fuse.dcfs " /proc/mounts | cut -d' ' -f4)
	verdict "as nobody, by default: mounted through fusermount3 without allow_other ($opts)" \
		eval 'grep -q user_id=65534 <<<"$opts" && ! grep -q allow_other <<<"$opts"'
	verdict "nobody reads, root is refused (the kernel's rule without allow_other)" \
		eval '[ "$($NB cat "$D/mnt/file")" = hi ] && ! cat "$D/mnt/file" 2>/dev/null'
	# a file created read-only and written through the descriptor that
	# made it (as git makes its objects): natively the write is allowed
	ro=$($NB /usr/bin/python3 -c '
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o444)
os.write(fd, b"obj")
os.ftruncate(fd, 3)
os.fsync(fd)
os.lseek(fd, 0, os.SEEK_SET)
os.close(fd)
print(open(p).read())' "$D/mnt/ro-made" 2>&1 | tail -1)
	verdict "as nobody: a file created 0444 takes the writes of the descriptor that made it ($ro)" \
		test "$ro" = obj
	pid=$(stat_val "$D/st" pid)
	$NB fusermount3 -u "$D/mnt"
	verdict "as nobody: fusermount3 -u, the daemon exits" wait_for 10 gone "$pid"
else
	fail "as nobody, by default: mount"
fi
out=$($NB "$DCFS" "$D/src" "$D/mnt" --allow-other 2>&1)
verdict "as nobody, --allow-other without user_allow_other in /etc/fuse.conf: refused, saying so ($out)" \
	eval 'grep -q user_allow_other <<<"$out" && ! grep -q " $D/mnt " /proc/mounts'
mount --bind "$T/fuse.conf.yes" /etc/fuse.conf
if $NB "$DCFS" "$D/src" "$D/mnt" -o allow_other --stats "$D/st" 2>/dev/null; then
	verdict "as nobody, -o allow_other with user_allow_other: another user reads" \
		eval '[ "$($OTHER cat "$D/mnt/file" 2>&1)" = hi ]'
	pid=$(stat_val "$D/st" pid)
	$NB fusermount3 -u "$D/mnt"
	wait_for 10 gone "$pid"
else
	fail "as nobody, -o allow_other: mount"
fi
out=$($NB "$DCFS" "$D/src" "$D/mnt" -o allow_root --entry-timeout 5 2>&1)
verdict "as nobody, allow_root with kernel timeouts above 0: a usage error ($out)" \
	eval 'grep -q "timeout 0" <<<"$out"'
if $NB "$DCFS" "$D/src" "$D/mnt" -o allow_root --stats "$D/st" 2>/dev/null; then
	$NB cat "$D/mnt/file" > /dev/null
	verdict "as nobody, -o allow_root: nobody and root read, another user is refused" \
		eval '[ "$($NB cat "$D/mnt/file")" = hi ] && [ "$(cat "$D/mnt/file")" = hi ] &&
		      ! $OTHER cat "$D/mnt/file" 2>/dev/null && ! $OTHER stat "$D/mnt/file" >/dev/null 2>&1'
	pid=$(stat_val "$D/st" pid)
	$NB fusermount3 -u "$D/mnt"
	wait_for 10 gone "$pid"
else
	fail "as nobody, -o allow_root: mount"
fi
EOF
	ns_run nb

	# A daemon's diagnostics reach syslog: its --stats directory removed
	# under it, the next rewrite fails and says so, once.
	mkdir -p "$T/sl.src" "$T/sl.mnt" "$T/sl.dir"
	cat > "$T/sl.ns.sh" <<'EOF'
. "$T/ns.common.sh"
private_dev 666 || { fail "a private /dev"; exit; }
"$HELPER" recv /dev/log "$T/sl.log" & recv=$!
wait_for 5 test -S /dev/log
if "$DCFS" "$T/sl.src" "$T/sl.mnt" --stats "$T/sl.dir/x.stats" 2>/dev/null; then
	pid=$(stat_val "$T/sl.dir/x.stats" pid)
	rm -rf "$T/sl.dir"
	wait_for 5 grep -q "dcfs\[$pid\]: --stats" "$T/sl.log"
	verdict "a daemon's diagnostics go to syslog, facility daemon: '$(grep -m1 "dcfs\[" "$T/sl.log")'" \
		grep -q "^<27>.* dcfs\[$pid\]: --stats $T/sl.dir/x.stats: No such file or directory" "$T/sl.log"
	umount "$T/sl.mnt"
	wait_for 10 gone "$pid"
	verdict "and said once: $(grep -c "dcfs\[$pid\]: --stats.*trying again" "$T/sl.log") time(s)" \
		test "$(grep -c "dcfs\[$pid\]: --stats.*trying again" "$T/sl.log")" = 1
else
	fail "syslog: mount"
fi
kill $recv
EOF
	ns_run sl

	# mount(8) and fstab as the documented lines have them, dcfs found
	# as "dcfs" on the PATH mount.fuse3 gets: mount(8) gives its helper
	# none, so /bin/sh's default, where a tmpfs over /usr/local/sbin
	# (this namespace only) holds a link to the dcfs under test
	mkdir -p "$T/mt.src" "$T/mt.mnt"
	echo hi > "$T/mt.src/file"
	cat > "$T/mt.ns.sh" <<'EOF'
. "$T/ns.common.sh"
command -v mount.fuse3 >/dev/null || { echo "SKIP mount -t fuse.dcfs (no mount.fuse3: apt-get install fuse3)"; exit; }
mount -t tmpfs -o mode=755 dcfs-test-sbin /usr/local/sbin && ln -s "$DCFS" /usr/local/sbin/dcfs ||
	{ echo "SKIP mount -t fuse.dcfs (cannot mount over /usr/local/sbin)"; exit; }
[ "$(env -i /bin/sh -c 'command -v dcfs')" = /usr/local/sbin/dcfs ] ||
	{ echo "SKIP mount -t fuse.dcfs (/bin/sh's default PATH has no /usr/local/sbin)"; exit; }
M=$T/mt.mnt
if mount -t fuse.dcfs "$T/mt.src" "$M" -o mode=global,coherence=inotify,ttl=500,entry_timeout=3600,attr_timeout=60,stats=$T/mt.stats,readers=2,threads=4,noatime,nosuid,nodev; then
	verdict "mount -t fuse.dcfs SRC MNT -o mode=global,coherence=inotify,...: mounted, applied (mode $(stat_val "$T/mt.stats" mode), coherence $(stat_val "$T/mt.stats" coherence))" \
		eval '[ "$(stat_val "$T/mt.stats" mode) $(stat_val "$T/mt.stats" coherence)" = "global inotify" ] &&
		      [ "$(cat "$M/file")" = hi ] && grep -q " $M fuse.dcfs [^ ]*noatime" /proc/mounts'
	pid=$(stat_val "$T/mt.stats" pid)
	umount "$M"
	verdict "umount: the daemon exits" eval 'wait_for 10 gone "$pid" && [ "$(stat_val "$T/mt.stats" state)" = exited ]'
else
	fail "mount -t fuse.dcfs SRC MNT -o ..."
fi
printf '%s %s fuse.dcfs ro,mode=rwlock,coherence=off,stats=%s,nofail,_netdev,x-systemd.automount,nosuid,nodev 0 0\n' \
	"$T/mt.src" "$M" "$T/mt.stats" > "$T/mt.fstab"
if mount -T "$T/mt.fstab" "$M"; then
	verdict "an fstab line (ro,mode=rwlock,coherence=off,nofail,_netdev,x-systemd.automount): mounted read-only, applied" \
		eval '[ "$(stat_val "$T/mt.stats" mode) $(stat_val "$T/mt.stats" coherence)" = "rwlock off" ] &&
		      [ "$(cat "$M/file")" = hi ] && ! touch "$M/new" 2>/dev/null'
	umount "$M"
else
	fail "mount -T FSTAB MNT with a fuse.dcfs line"
fi
EOF
	ns_run mt
fi

# ---- conformance: the same script natively and through dcfs ----------------------
# conform NAME MODE WHO...: WHO is the command prefix (empty: root)
conform() {
	local name=$1 mode=$2 label=$3
	shift 3
	mkdir -p "$T/$name.src" "$T/$name.nat"
	chmod 755 "$T/$name.src" "$T/$name.nat"
	# shellcheck disable=SC2086 # CONFORM_OPTS: words
	start "$name" "$T/$name.src" --mode "$mode" $CONFORM_OPTS || { notok "conformance $label: mount"; return; }
	if ! "$CONFORM" setup "$T/$name.nat" || ! "$CONFORM" setup "$T/$name.mnt"; then
		notok "conformance $label: setup"
		return
	fi
	"$@" "$CONFORM" run "$T/$name.nat" > "$T/$name.out.nat" 2>&1
	"$@" "$CONFORM" run "$T/$name.mnt" > "$T/$name.out.mnt" 2>&1
	local total same=0 bad=0 a b
	total=$(wc -l < "$T/$name.out.nat")
	while IFS= read -r a && IFS= read -r b <&3; do
		if [ "$a" = "$b" ]; then
			same=$((same + 1))
		else
			bad=$((bad + 1))
			notok "conformance $label: native '$a' but dcfs '$b'"
		fi
	done < "$T/$name.out.nat" 3< "$T/$name.out.mnt"
	if [ "$total" -ge 200 ] && [ "$same" = "$total" ] &&
	   [ "$(wc -l < "$T/$name.out.mnt")" = "$total" ]; then
		ok "conformance $label: $same/$total operations identical to native (results, errnos, owners, modes, contents)"
	elif [ $bad = 0 ]; then
		notok "conformance $label: $same of $total native lines, $(wc -l < "$T/$name.out.mnt") through dcfs"
	fi
}
CONFORM_OPTS=
conform c_rcu rcu "as root (rcu)"
conform c_glo global "as root (global)"
conform c_rwl rwlock "as root (rwlock)"
if [ $URING = 1 ]; then
	CONFORM_OPTS=--uring conform c_uri rcu "as root (rcu, --uring)"
	# the statistics are rewritten every second
	wait_for 3 stat_is "$T/c_uri.stats" uring_requests -gt 200
	check "--uring: requests came through the ring (uring $(stat_val "$T/c_uri.stats" uring), $(stat_val "$T/c_uri.stats" uring_requests) requests)" \
		test "$(stat_val "$T/c_uri.stats" uring)" = 1 -a "$(stat_val "$T/c_uri.stats" uring_requests)" -gt 200
else
	skip "conformance with --uring (no FUSE over io_uring here: Linux 6.14+, io_uring allowed)"
fi
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
if $NOBODY true 2>/dev/null; then
	conform c_nob rcu "as nobody (rcu)" $NOBODY
	conform c_grp global "as nobody with supplementary group 4242 (global)" \
		setpriv --reuid=nobody --regid=nogroup --groups=4242
	grep -q " creat ../grp/f: ok$" "$T/c_grp.out.mnt"
	check "a supplementary group grants what it grants natively" [ $? = 0 ]
	grep -q " mkdir ../ro_dir/x: EACCES$" "$T/c_nob.out.mnt"
	check "permission denied where native denies it (nobody)" [ $? = 0 ]
else
	skip "conformance as nobody (no setpriv)"
fi

# ---- a truncate the host refuses leaves the set-id bits ----
# the kernel, its attributes of the file kept (coherence off), lets nobody
# truncate a 06777 file that is 04755 on the host by now: the host refuses
# the truncate, and the set-id bits must stay, as natively nothing changed.
# truncate(2) by path: an open through the mount would be checked by the
# kernel alone, against what it kept.  The system's python, which nobody
# may run.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$T/sk.src"
	echo data > "$T/sk.src/f"
	chmod 06777 "$T/sk.src/f"
	if start sk "$T/sk.src" --coherence off --entry-timeout 3600 --attr-timeout 3600; then
		stat "$T/sk.mnt/f" >/dev/null
		chmod 04755 "$T/sk.src/f"
		err=$(setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import errno, os, sys
try:
    os.truncate(sys.argv[1], 0)
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$T/sk.mnt/f" 2>&1)
		mode=$(stat -c %a "$T/sk.src/f")
		check_all "a truncate the host refuses ($err): the file stays mode $mode, $(stat -c %s "$T/sk.src/f") bytes" \
			'[ "$err" = EACCES ] && [ "$mode" = 4755 ] && [ "$(cat "$T/sk.src/f")" = data ]'
		stop sk
	else
		notok "a refused truncate: mount"
	fi
else
	skip "a refused truncate: no /usr/bin/python3"
fi

# ---- an append-only file (chattr +a): opened with O_APPEND, it takes appends ----
mkdir -p "$T/ap.src"
echo one > "$T/ap.src/log"
if ! chattr +a "$T/ap.src/log" 2>/dev/null; then
	skip "an append-only file: chattr +a fails on the file system of $T"
elif start ap "$T/ap.src"; then
	echo two >> "$T/ap.mnt/log"
	a=$?
	echo three >> "$T/ap.mnt/log"
	b=$?
	(echo x > "$T/ap.mnt/log") 2>/dev/null
	c=$?
	got=$(tr '\n' ' ' < "$T/ap.src/log")
	check_all "an append-only file: two appends exit $a, $b and an overwrite $c (natively 0, 0 and 1); it holds '$got'" \
		'[ $a = 0 ] && [ $b = 0 ] && [ $c != 0 ] && [ "$got" = "one two three " ]'
	stop ap
else
	notok "an append-only file: mount"
fi
chattr -a "$T/ap.src/log" 2>/dev/null

# ---- a directory removed while a process stands in it ----
# natively names there answer ENOENT, and the directory itself lists empty
# and takes a chmod: the same through dcfs, whether it was removed on the
# host or through the mount
if command -v python3 >/dev/null; then
	cat > "$T/rmcwd.py" <<'EOF'
import errno, os, sys
def res(f):
    try:
        r = f()
        return "ok" if r is None else "ok %s" % (r,)
    except OSError as e:
        return errno.errorcode[e.errno]
os.mkdir(sys.argv[1] + "/g")
os.chdir(sys.argv[1] + "/g")
os.rmdir(sys.argv[2] + "/g")
print("create", res(lambda: os.close(os.open("x", os.O_CREAT | os.O_WRONLY, 0o644))),
      "stat", res(lambda: os.stat("y") and None), "list", res(lambda: os.listdir(".")),
      "chmod", res(lambda: os.chmod(".", 0o700)), "mkdir", res(lambda: os.mkdir("d")))
EOF
	mkdir -p "$T/rc.src" "$T/rc.nat"
	if start rc "$T/rc.src"; then
		nat=$(python3 "$T/rmcwd.py" "$T/rc.nat" "$T/rc.nat" 2>&1)
		host=$(python3 "$T/rmcwd.py" "$T/rc.mnt" "$T/rc.src" 2>&1)
		rm -rf "$T/rc.src/g"
		mnt=$(python3 "$T/rmcwd.py" "$T/rc.mnt" "$T/rc.mnt" 2>&1)
		check_all "in a directory removed under a process: native '$nat', removed on the host '$host', through the mount '$mnt'" \
			'[ "$host" = "$nat" ] && [ "$mnt" = "$nat" ] && [ "${nat#create ENOENT}" != "$nat" ]'
		stop rc
	else
		notok "a directory removed under a process: mount"
	fi
else
	skip "a directory removed under a process: no python3"
fi

# ---- no leaked nodes -----------------------------------------------------------
sync
echo 2 > /proc/sys/vm/drop_caches
for c in c_rcu c_glo c_rwl c_uri; do
	[ -e "$T/$c.stats" ] || continue
	wait_for 5 stat_is "$T/$c.stats" nodes = 1
	check "after drop_caches the kernel holds only the root ($c: nodes $(stat_val "$T/$c.stats" nodes))" \
		test "$(stat_val "$T/$c.stats" nodes)" = 1
done
for c in c_rcu c_glo c_rwl c_uri c_nob c_grp; do
	[ -e "$T/$c.stats" ] || continue
	stop "$c"
	check "$c unmounted; at exit every node was freed (nodes_total $(stat_val "$T/$c.stats" nodes_total))" \
		test "$(stat_val "$T/$c.stats" state)" = exited -a "$(stat_val "$T/$c.stats" nodes_total)" = 0
done

# ---- concurrent clients ------------------------------------------------------------
# expected final tree of dcfs_conform stress ID N
expected_tree() {
	local id i
	for id in "$@"; do
		echo "./c$id"
		for i in $(seq 0 $((NSTRESS - 1))); do
			[ $((i % 3)) = 0 ] || echo "./c$id/f$i"
		done
		echo "./c$id/log"
		echo "./shared/$id-$([ $((NSTRESS % 2)) = 1 ] && echo y || echo x)"
		echo "./shared/$id-link"
	done
	echo "./shared"
}
NSTRESS=150
# the same clients, one after the other, on a plain directory: the
# expected source tree, byte for byte (every fsync'ed log record)
mkdir -p "$T/st.want/shared"
for id in 1 2 3 4 5 6; do "$CONFORM" stress "$T/st.want" "$id" $NSTRESS; done
STRESS_RUNS="rcu rwlock"
[ $URING = 1 ] && STRESS_RUNS="$STRESS_RUNS rcu+uring"
for mode in $STRESS_RUNS; do
	name=st_${mode/+/_}
	extra=()
	[ "${mode%+uring}" != "$mode" ] && extra=(--uring)
	mkdir -p "$T/$name.src"
	start "$name" "$T/$name.src" --mode "${mode%+uring}" "${extra[@]}" --entry-timeout 0 --attr-timeout 0 --cache-entries 64 ||
		{ notok "concurrent clients ($mode): mount"; continue; }
	mkdir "$T/$name.mnt/shared"
	( for _ in $(seq 20); do echo 2 > /proc/sys/vm/drop_caches; sleep 0.1; done ) &
	dropper=$!
	pids=()
	for id in 1 2 3 4 5 6; do
		"$CONFORM" stress "$T/$name.mnt" "$id" $NSTRESS & pids+=($!)
	done
	bad=0
	for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
	wait $dropper
	check "6 concurrent clients ($mode, timeouts 0, 64-entry cache, drop_caches racing): no failed operation" [ $bad = 0 ]
	(cd "$T/$name.mnt" && find . -mindepth 1 | LC_ALL=C sort) > "$T/$name.tree.mnt"
	(cd "$T/$name.src" && find . -mindepth 1 | LC_ALL=C sort) > "$T/$name.tree.src"
	expected_tree 1 2 3 4 5 6 | LC_ALL=C sort > "$T/$name.tree.want"
	check "final tree through dcfs is the expected one ($mode)" cmp -s "$T/$name.tree.mnt" "$T/$name.tree.want"
	check "final tree in the source is the same ($mode)" cmp -s "$T/$name.tree.src" "$T/$name.tree.want"
	check "file contents survived renames ($mode)" \
		test "$(cat "$T/$name.mnt/c4/f149")" = "4:149" -a "$(cat "$T/$name.src/c2/f98")" = "2:98"
	check "the source is byte for byte the tree the clients make natively, every fsync'ed record in ($mode)" \
		diff -r "$T/st.want" "$T/$name.src"
	check "and so reads the mount ($mode)" diff -r "$T/st.want" "$T/$name.mnt"
	sync
	echo 2 > /proc/sys/vm/drop_caches
	wait_for 5 stat_is "$T/$name.stats" nodes = 1
	check "after the storm and drop_caches the kernel holds only the root ($mode: nodes $(stat_val "$T/$name.stats" nodes); names evicted and looked up again: $(stat_val "$T/$name.stats" cache_evictions) evictions)" \
		test "$(stat_val "$T/$name.stats" nodes)" = 1 -a "$(stat_val "$T/$name.stats" cache_evictions)" -gt 0
	stop "$name"
	check "clean exit after the storm ($mode): nodes_total $(stat_val "$T/$name.stats" nodes_total)" \
		test "$(stat_val "$T/$name.stats" nodes_total)" = 0
	[ ${#extra[@]} = 0 ] ||
		check "the storm went through the ring ($(stat_val "$T/$name.stats" uring_requests) requests)" \
			test "$(stat_val "$T/$name.stats" uring_requests)" -gt 1000
done

# ---- worker threads come and go (liburcu registration) ------------------------------
# One reader (--readers 1); an fsync of 64 MB keeps it on one request for far
# longer than the 10 ms after which the loop starts another worker, so the
# stress clients' requests are served meanwhile.  Extra workers park when the
# stall is over and exit after 2 s parked.  The source must be on a disk:
# on a tmpfs /tmp (a container's, a chroot's) fsync returns at once.
DISK=$(mktemp -d /var/tmp/test_dcfs.XXXXXX) || exit 1
mkdir -p "$DISK/th.src"
if start th "$DISK/th.src" --threads 8 --readers 1 --entry-timeout 0 --attr-timeout 0 --cache-entries 16; then
	mkdir "$T/th.mnt/shared"
	churn=60
	ldd "$DCFS" 2>/dev/null | grep -Eq 'lib(asan|tsan)' && churn=15
	pids=()
	for id in 1 2 3 4 5 6; do "$CONFORM" stress "$T/th.mnt" "$id" $churn & pids+=($!); done
	( for k in 1 2; do
		dd if=/dev/zero of="$T/th.mnt/big$k" bs=1M count=64 conv=fsync status=none || exit 1
		rm -f "$T/th.mnt/big$k"
	  done ) & pids+=($!)
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	check "stress clients and fsyncs beside one stuck reader all succeed ($fails failed)" [ "$fails" = 0 ]
	sleep 3.2	# parked 2 s, then gone; the statistics are rewritten every second
	started=$(stat_val "$T/th.stats" workers_started)
	check "workers were started while the reader was stuck ($started started in all)" [ "$started" -gt 1 ]
	check "and exited after: one worker left ($(stat_val "$T/th.stats" workers))" \
		test "$(stat_val "$T/th.stats" workers)" = 1
	ev0=$(stat_val "$T/th.stats" cache_evictions)
	pids=()
	for id in 7 8 9; do "$CONFORM" stress "$T/th.mnt" "$id" $churn & pids+=($!); done
	fails=0
	for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
	sleep 1.1
	ev1=$(stat_val "$T/th.stats" cache_evictions)
	check_all "grace periods still complete after workers exited (evictions $ev0 -> $ev1), the stress clients all succeed ($fails failed)" \
		'[ "$ev1" -gt "$ev0" ] && [ "$fails" = 0 ]'
	check "unmount after thread churn: the daemon exits cleanly" stop th
	check "nothing left after thread churn (nodes_total $(stat_val "$T/th.stats" nodes_total))" \
		test "$(stat_val "$T/th.stats" nodes_total)" = 0
else
	notok "thread churn: mount"
fi

# ---- large files: writes, spliced reads, in-place overwrite -----------------------------
mkdir -p "$T/io.src"
if start io "$T/io.src"; then
	head -c 9000000 /dev/urandom > "$T/io.rand"
	cp "$T/io.rand" "$T/io.mnt/big"
	check "a 9 MB file written through the mount is in the source" cmp -s "$T/io.rand" "$T/io.src/big"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	check "and reads back through the mount (large reads are spliced)" cmp -s "$T/io.rand" "$T/io.mnt/big"
	printf 'PATCH' | dd of="$T/io.mnt/big" bs=1 seek=4096 conv=notrunc status=none
	printf 'PATCH' | dd of="$T/io.rand" bs=1 seek=4096 conv=notrunc status=none
	truncate -s 5000000 "$T/io.mnt/big"
	truncate -s 5000000 "$T/io.rand"
	check "in-place overwrite and truncate agree with the same on a plain file" cmp -s "$T/io.rand" "$T/io.src/big"
	stop io
else
	notok "large files: mount"
fi

# ---- a small compile (and git) through the mount ---------------------------------------
compile_test() {	# NAME LABEL [dcfs options]
	local name=$1 label=$2 out P
	shift 2
	mkdir -p "$T/$name.src"
	if ! start "$name" "$T/$name.src" "$@"; then
		notok "compile$label: mount"
		return
	fi
	P=$T/$name.mnt/proj
	mkdir -p "$P/src" "$P/include"
	cat > "$P/include/calc.h" <<'EOF'
int add(int a, int b);
int mul(int a, int b);
EOF
	cat > "$P/src/add.c" <<'EOF'
#include "calc.h"
int add(int a, int b) { return a + b; }
EOF
	cat > "$P/src/mul.c" <<'EOF'
#include "calc.h"
int mul(int a, int b) { int r = 0; while (b-- > 0) r = add(r, a); return r; }
EOF
	cat > "$P/src/main.c" <<'EOF'
#include <stdio.h>
#include "calc.h"
int main(void) { printf("%d\n", mul(add(2, 4), 7)); return 0; }
EOF
	printf 'CFLAGS = -O1 -Iinclude\nOBJS = build/add.o build/mul.o build/main.o\n\ncalc: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n\nbuild/%%.o: src/%%.c include/calc.h | build\n\t$(CC) $(CFLAGS) -c -o $@ $<\n\nbuild:\n\tmkdir -p $@\n\nclean:\n\trm -rf build calc\n' > "$P/Makefile"
	out=$(cd "$P" && make -s CC="$CC" -j2 2>&1 && ./calc)
	check "a small C project builds and runs through the mount$label (printed '$out')" [ "$out" = 42 ]
	out=$(cd "$P" && make -s clean && make -s CC="$CC" -j2 2>&1 && ./calc && make -q CC="$CC" calc && echo up-to-date)
	check "clean, rebuild, and make sees it up to date$label" [ "$(echo $out)" = "42 up-to-date" ]
	if command -v git >/dev/null; then
		out=$(cd "$P" && git init -q . && git -c user.name=t -c user.email=t@t add -A &&
			git -c user.name=t -c user.email=t@t commit -qm one && echo x >> src/add.c &&
			git -c user.name=t -c user.email=t@t commit -qam two && git checkout -q HEAD~1 -- src/add.c &&
			git status --porcelain && git log --oneline | wc -l && git fsck --no-progress 2>&1 | head -3)
		check "git init, add, commit, checkout, fsck through the mount$label" [ "$(echo $out)" = "M src/add.c 2" ]
	else
		skip "git through the mount (git not installed)"
	fi
	check "the build's files are in the source$label" test -x "$T/$name.src/proj/calc" -a -f "$T/$name.src/proj/build/main.o"
	stop "$name"
}

compile_test cc ""
if [ $URING = 1 ]; then
	compile_test ccu " (--uring)" --uring
fi

# ---- SIGKILL: what was fsync'ed is in the source --------------------------------------
mkdir -p "$T/k.src"
if start k "$T/k.src"; then
	pid=$(stat_val "$T/k.stats" pid)
	"$CONFORM" fsync "$T/k.mnt/log" 1000000 > "$T/k.count" 2>/dev/null &
	writer=$!
	wait_for 10 test -s "$T/k.count"
	sleep 0.5
	kill -KILL "$pid"
	wait $writer 2>/dev/null
	durable=$(tail -1 "$T/k.count")
	have=$(grep -c '^record [0-9]\{8\}$' "$T/k.src/log")
	check_all "SIGKILL mid-run: all $durable fsync'ed records are in the source ($have there)" \
		'[ -n "$durable" ] && [ "$durable" -gt 0 ] && [ "$have" -ge "$durable" ]'
	check "the records are intact and in order" \
		test "$(head -n "$durable" "$T/k.src/log" | awk '{ if ($2 + 0 != NR - 1) bad++ } END { print bad + 0 }')" = 0
	fusermount3 -u "$T/k.mnt" 2>/dev/null || umount -l "$T/k.mnt"
	check "fusermount3 -u clears the dead mount" not_mounted "$T/k.mnt"
else
	notok "SIGKILL: mount"
fi

# ---- more nodes than descriptors, then out of descriptors ------------------------------
# With 64 descriptors the files' budget is 16: files past it are held by
# handle (fd-less) and everything still works on them.  Then 80 directories
# (one descriptor each, always) run the daemon out: EMFILE, nothing corrupted.
mkdir -p "$T/fd.src"
if ! command -v prlimit >/dev/null; then
	skip "descriptor exhaustion (no prlimit)"
elif ! { MOUNTS+=("$T/fd.mnt") && mkdir -p "$T/fd.mnt" &&
	 prlimit --nofile=64:64 "$DCFS" "$T/fd.src" "$T/fd.mnt" --stats "$T/fd.stats"; }; then
	notok "descriptor exhaustion: dcfs did not start under prlimit --nofile=64:64"
else
	if [ "$(stat_val "$T/fd.stats" file_handles)" = 1 ]; then
		other=0
		for i in $(seq 80); do
			err=$( { echo "$i" > "$T/fd.mnt/f$i"; } 2>&1)
			[ -z "$err" ] || other=$((other + 1))
		done
		check "with 64 descriptors, 80 files created through the mount ($other failed)" [ $other = 0 ]
		wait_for 3 stat_is "$T/fd.stats" fdless -gt 0
		check "files past the budget are held by handle (fdless $(stat_val "$T/fd.stats" fdless), node_fds $(stat_val "$T/fd.stats" node_fds))" \
			test "$(stat_val "$T/fd.stats" fdless)" -gt 0
		bad=0
		for i in $(seq 80); do [ "$(cat "$T/fd.mnt/f$i" 2>&1)" = "$i" ] || bad=$((bad + 1)); done
		check "every file reads back through the mount ($bad wrong)" [ $bad = 0 ]
		(cd "$T/fd.src" && stat -c '%n %i %s %a %h' f* | LC_ALL=C sort) > "$T/fd.st.src"
		(cd "$T/fd.mnt" && stat -c '%n %i %s %a %h' f* | LC_ALL=C sort) > "$T/fd.st.mnt"
		check "stat of every file agrees with the source" cmp -s "$T/fd.st.src" "$T/fd.st.mnt"
		chmod 600 "$T/fd.mnt/f80" && ln "$T/fd.mnt/f80" "$T/fd.mnt/l80" &&
			truncate -s 1 "$T/fd.mnt/f79" && echo more >> "$T/fd.mnt/f78" &&
			touch -d @1000000000 "$T/fd.mnt/f77"
		check "chmod, link, truncate, append and utimes on files held by handle" \
			test "$(stat -c '%a %h' "$T/fd.src/f80") $(stat -c %s "$T/fd.src/f79") $(tail -1 "$T/fd.src/f78") $(stat -c %Y "$T/fd.src/f77")" = "600 2 1 more 1000000000"
		# open, then unlinked through the mount: still readable, as
		# natively (the kernel sends no OPEN; the unlink pins the file)
		sync
		echo 3 > /proc/sys/vm/drop_caches
		stat "$T/fd.mnt"/f* > /dev/null
		exec {hold}< "$T/fd.mnt/f50"
		rm "$T/fd.mnt/f50"
		got=$(cat <&$hold 2>&1)
		exec {hold}<&-
		check "a file held by handle, opened, then unlinked through the mount still reads ('$got')" \
			test "$got" = 50
		rm -f "$T/fd.mnt"/f* "$T/fd.mnt/l80"
	else
		skip "files held by handle (file handles do not work here)"
	fi
	# a directory holds a descriptor while cached, up to half the limit;
	# past it, where file handles work, a handle instead: all 80 are made
	emfile=0 other=0 made=()
	for i in $(seq 80); do
		err=$(mkdir "$T/fd.mnt/d$i" 2>&1)
		case $err in
		"") made+=("d$i") ;;
		*"Too many open files"*) emfile=$((emfile + 1)) ;;
		*) other=$((other + 1)) ;;
		esac
	done
	if [ "$(stat_val "$T/fd.stats" file_handles)" = 1 ]; then
		check "80 directories with 64 descriptors: all made, those past half the limit held by handle (EMFILE $emfile, other errors $other)" \
			test "$emfile $other" = "0 0"
	else
		check "80 directories with 64 descriptors, no file handles: past the limit EMFILE ($emfile) and nothing else ($other)" \
			test "$emfile" -gt 0 -a "$other" = 0
	fi
	check "a failed mkdir left nothing behind: the source has the ${#made[@]} made" \
		test "$(cd "$T/fd.src" && ls -d d* | LC_ALL=C sort | tr '\n' ' ')" = \
		     "$(printf '%s\n' "${made[@]}" | LC_ALL=C sort | tr '\n' ' ')"
	bad=0
	for d in "${made[@]}"; do rmdir "$T/fd.mnt/$d" || bad=$((bad + 1)); done
	# their descriptors close when the kernel forgets them (FORGET is
	# asynchronous)
	sync
	echo 2 > /proc/sys/vm/drop_caches
	wait_for 5 stat_is "$T/fd.stats" nodes = 1
	(cd "$T/fd.src" && ls | LC_ALL=C sort) > "$T/fd.ls.src"
	(cd "$T/fd.mnt" && ls | LC_ALL=C sort) > "$T/fd.ls.mnt"
	check_all "removed through the mount ($bad failed): mount and source agree" \
		'[ $bad = 0 ] && cmp -s "$T/fd.ls.src" "$T/fd.ls.mnt"'
	echo again > "$T/fd.mnt/after"
	check "descriptors come back once the kernel forgets" test "$(cat "$T/fd.src/after")" = again
	check "out-of-descriptor mount unmounts cleanly" stop fd
fi

# ---- SIGTERM and SIGINT unmount ---------------------------------------------------------
for sig in TERM INT; do
	name=sig$sig
	mkdir -p "$T/$name.src"
	if start "$name" "$T/$name.src"; then
		echo data > "$T/$name.mnt/f"
		pid=$(stat_val "$T/$name.stats" pid)
		kill -$sig "$pid"
		wait_for 10 gone "$pid"
		not_mounted "$T/$name.mnt" && [ "$(stat_val "$T/$name.stats" state)" = exited ]
		check "SIG$sig: unmounted and exited" [ $? = 0 ]
		check "SIG$sig: every node freed (nodes_total $(stat_val "$T/$name.stats" nodes_total))" \
			test "$(stat_val "$T/$name.stats" nodes_total)" = 0
	else
		notok "SIG$sig: mount"
	fi
done

# ---- dcbench fsmeta: the benchmark command on a tiny tree ------------------------------
# One run each of native, dcfs rcu and passthrough_ll (built by the command)
# on 224 entries: it must finish with no failed operation, write a JSON
# document that parses, and leave nothing behind (mount, scratch
# directories in the tree, its work directory); then its refusals.
DCBENCH=$PWD/$BUILD/dcbench
if [ -x "$DCBENCH" ]; then
	for d in a b c d; do
		for e in v w x y z; do
			mkdir -p "$T/fm.src/$d/$e"
			for f in 1 2 3 4 5 6 7 8 9 10; do : > "$T/fm.src/$d/$e/f$f.c"; done
		done
	done
	mkdir -p "$T/fm.tmp"
	TMPDIR=$T/fm.tmp "$DCBENCH" fsmeta --dir "$T/fm.src" --configs native,rcu,passthrough_ll \
		--repeat 1 --passes 1 --mix 50 --json > "$T/fm.json" 2> "$T/fm.err"
	rc=$?
	check "dcbench fsmeta: native, dcfs rcu, passthrough_ll on 224 entries, exit 0 (exit $rc)" [ $rc = 0 ]
	[ $rc = 0 ] || sed 's/^/#   /' "$T/fm.err"
	if command -v python3 >/dev/null; then
		check "dcbench fsmeta: the JSON parses; 3 results, 224 entries, 0 failed operations" \
			python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1 and d["command"] == "fsmeta"
assert [r["config"] for r in d["results"]] == ["native", "dcfs-rcu", "passthrough_ll"]
for r in d["results"]:
    assert r["failed"] == 0 and r["daemon_ok"] and r["total_ops_per_s"] > 0
    assert [x["entries"] for x in r["runs"]] == [224]
assert len(d["goals"]) == 5
# the coherent-dcfs goals need rcu@default and passthrough_ll@0
assert all("not measured" in g["goal"] for g in d["goals"][3:])' "$T/fm.json"
	else
		check "dcbench fsmeta: JSON with 3 results, 0 failed operations" \
			test "$(grep -c '"config"' "$T/fm.json")" = 3 -a \
			"$(grep '"failed"' "$T/fm.json" | grep -vc ': 0,')" = 0
	fi
	check "dcbench fsmeta: the report has the table and the goal lines" \
		grep -q "^goal: dcfs rcu failed operations = 0: met" "$T/fm.err"
	check "dcbench fsmeta: nothing left (mount, scratch in the tree, work directory)" \
		test -z "$(grep " $T/fm" /proc/mounts; ls -A "$T/fm.src" | grep fsmeta; ls -A "$T/fm.tmp")"
	if [ $URING = 1 ]; then
		TMPDIR=$T/fm.tmp "$DCBENCH" fsmeta --dir "$T/fm.src" --configs rcu,rcu-uring \
			--repeat 1 --passes 1 --mix 20 > "$T/fmu.out" 2> "$T/fmu.err"
		rc=$?
		# without --json the report is on standard output
		check_all "dcbench fsmeta --configs rcu,rcu-uring: exit 0 (exit $rc), the ring compared with /dev/fuse" \
			'[ $rc = 0 ] && grep -q "^dcfs-rcu-uring .* 0 " "$T/fmu.out" &&
			 grep -q "^info: dcfs rcu-uring / rcu " "$T/fmu.out"'
		[ $rc = 0 ] || sed 's/^/#   /' "$T/fmu.err" "$T/fmu.out"
	fi
	# 64 descriptors: passthrough_ll (one per inode the kernel holds) runs
	# out and its failed readdirs prune the walk; dcfs holds the rest by
	# handle.  A ratio of unlike work is not judged.
	if command -v prlimit >/dev/null; then
		TMPDIR=$T/fm.tmp prlimit --nofile=64:64 "$DCBENCH" fsmeta --dir "$T/fm.src" \
			--configs rcu,passthrough_ll --repeat 1 --passes 1 --mix 20 \
			> "$T/fmf.out" 2> "$T/fmf.err"
		rc=$?
		check_all "dcbench fsmeta, the peer out of descriptors: exit 1 ($rc), the entries it walked shown, the ratio not measured" \
			'[ $rc = 1 ] && grep -Eq "^passthrough_ll +[0-9]+ " "$T/fmf.out" &&
			 grep -q "^goal: dcfs rcu / passthrough_ll (>= 3): not measured (a side failed operations)" "$T/fmf.out"'
	else
		skip "dcbench fsmeta, the peer out of descriptors (no prlimit)"
	fi
	fm_refused() {	# DESC EXIT ARGS...: dcbench fsmeta ARGS exits with EXIT, a message
		local desc=$1 want=$2 out rc
		shift 2
		out=$("$@" 2>&1 >/dev/null)
		rc=$?
		if [ $rc = "$want" ] && [ -n "$out" ]; then
			ok "dcbench fsmeta refused: $desc (exit $rc)"
		else
			notok "dcbench fsmeta refused: $desc (exit $rc, wanted $want: $out)"
		fi
	}
	fm_refused "unknown option" 2 "$DCBENCH" fsmeta --dir "$T/fm.src" --bogus
	fm_refused "no --dir" 2 "$DCBENCH" fsmeta
	fm_refused "bad --configs" 2 "$DCBENCH" fsmeta --dir "$T/fm.src" --configs native,fast
	fm_refused "bad --entry-timeout" 2 "$DCBENCH" fsmeta --dir "$T/fm.src" --entry-timeout -1
	fm_refused "missing --dir" 1 "$DCBENCH" fsmeta --dir "$T/nonexistent"
	fm_refused "passthrough_hp@5 (its timeouts are 0 or its own)" 2 \
		"$DCBENCH" fsmeta --dir "$T/fm.src" --configs passthrough_hp@5
	fm_refused "--passthrough-hp not a program" 1 \
		"$DCBENCH" fsmeta --dir "$T/fm.src" --passthrough-hp "$T/nonexistent"
	fm_refused "passthrough_hp without --passthrough-hp" 1 \
		"$DCBENCH" fsmeta --dir "$T/fm.src" --configs passthrough_hp --repeat 1 --passes 0 --mix 0
	fm_refused "--dir not a directory" 1 "$DCBENCH" fsmeta --dir "$T/s.src/file"
	fm_refused "--work inside --dir" 1 "$DCBENCH" fsmeta --dir "$T/fm.src" --work "$T/fm.src/w"
	if command -v setpriv >/dev/null; then
		fm_refused "not root" 1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$DCBENCH" fsmeta --dir "$T/fm.src"
	else
		skip "dcbench fsmeta refused: not root (no setpriv)"
	fi
	check "dcbench fsmeta: a refused --work it made is removed" test ! -e "$T/fm.src/w"
else
	skip "dcbench fsmeta (no $DCBENCH)"
fi

# ---- removed in the source, still trusted by the cache ------------------------
# ttl mode with a TTL of 10 minutes: the cache trusts its names, and the
# kernel (timeouts 0) asks dcfs every time.  A file or a directory removed
# in the source has no links left, which dcfs sees when it stats what its
# cache answered: the name must be gone at once, not kept as a zombie (a
# directory with no links, listed empty, that mkdir calls EEXIST).
mkdir -p "$T/zb.src"
if start zb "$T/zb.src" --coherence=ttl --ttl 600000 2>"$T/zb.err"; then
	mkdir "$T/zb.src/dir" && echo hi > "$T/zb.src/file"
	seen=$(stat -c %h "$T/zb.mnt/dir" "$T/zb.mnt/file" | tr '\n' ' ')
	rmdir "$T/zb.src/dir" && rm "$T/zb.src/file"
	check_all "a directory and a file removed in the source, cached for 10 minutes: gone from the mount at once (links before: $seen; now: $(stat -c %h "$T/zb.mnt/dir" "$T/zb.mnt/file" 2>&1 | tr '\n' ' '))" \
		'[ "$seen" = "2 1 " ] && ! stat "$T/zb.mnt/dir" 2>/dev/null && ! stat "$T/zb.mnt/file" 2>/dev/null'
	check "... and mkdir of that name through the mount works" mkdir "$T/zb.mnt/dir"
	stop zb
else
	notok "ttl mount for the removed-in-the-source check: $(tail -1 "$T/zb.err")"
fi

# ---- mounted on its own source -----------------------------------------------------------
# dcfs SRC SRC covers its source, which it reads through the descriptor it
# opened before mounting.  Its watcher must watch that directory too: by
# path it would open the mount itself, whose server does not serve yet,
# and start-up would wait forever.  A file made beneath the mount (through
# a descriptor of the source opened before it) must show through it.
mkdir -p "$T/self"
echo old > "$T/self/f"
exec 8<"$T/self"
MOUNTS+=("$T/self")
if timeout 20 "$DCFS" "$T/self" "$T/self" --stats "$T/self.stats" 2>"$T/self.err"; then
	check "mounted on its own source: started, and the mount answers" \
		test "$(cat "$T/self/f" 2>/dev/null)" = old
	# g looked up first, so that the cache and the kernel hold its absence
	stat "$T/self/g" > /dev/null 2>&1
	echo new > "/proc/$$/fd/8/g"
	wait_for 5 test -e "$T/self/g"
	check "... and a file made beneath the mount shows through it" \
		test "$(cat "$T/self/g" 2>/dev/null)" = new
	pid=$(stat_val "$T/self.stats" pid)
	fusermount3 -u "$T/self"
	wait_for 20 gone "$pid"
	check_all "... and it unmounts and exits" '! grep -q " $T/self " /proc/mounts && gone "$pid"'
else
	notok "mounted on its own source: dcfs did not start within 20 s ($(tail -1 "$T/self.err"))"
	# the daemon waits on its own mount: abort it, then let the mount go
	pkill -KILL -f "^$DCFS $T/self $T/self "
	umount -l "$T/self" 2>/dev/null
fi
exec 8<&-

# ---- a source without file handles --------------------------------------------------------
# ramfs has no file handles: no fanotify (its events name directories by
# handle), so dcfs must say so and watch with inotify; and a file node the
# kernel forgot cannot be told from another inode once its descriptor is
# closed, so a hard link looked up meanwhile gets a node of its own, and
# after the first name is looked up again the kernel holds the inode under
# two nodes.  A chmod in the source must reach both.
mkdir -p "$T/rf.src"
if ! mount -t ramfs dcfs-test "$T/rf.src" 2>/dev/null; then
	skip "a source without file handles (cannot mount a ramfs)"
else
	MOUNTS+=("$T/rf.src")
	echo x > "$T/rf.src/a" && ln "$T/rf.src/a" "$T/rf.src/b" && chmod 644 "$T/rf.src/a"
	if start rf "$T/rf.src" 2>"$T/rf.err"; then
		check_all "no file handles: dcfs says fanotify cannot work and watches with inotify ($(grep -m1 'coherence:' "$T/rf.err"))" \
			'grep -q "coherence: fanotify not available on .*; using inotify" "$T/rf.err" &&
			 [ "$(stat_val "$T/rf.stats" coherence)" = inotify ] &&
			 [ "$(stat_val "$T/rf.stats" file_handles)" = 0 ]'
		stat "$T/rf.mnt/a" > /dev/null
		echo 2 > /proc/sys/vm/drop_caches
		wait_for 5 stat_is "$T/rf.stats" nodes = 1
		stat "$T/rf.mnt/b" > /dev/null && stat "$T/rf.mnt/a" > /dev/null
		wait_for 3 stat_is "$T/rf.stats" nodes = 3
		check "the kernel holds the inode under two nodes, and the root (nodes $(stat_val "$T/rf.stats" nodes))" \
			stat_is "$T/rf.stats" nodes = 3
		known=$(stat_val "$T/rf.stats" nodes)
		chmod 600 "$T/rf.src/a"
		wait_for 3 sh -c "[ \"\$(stat -c %a '$T/rf.mnt/a' '$T/rf.mnt/b' | tr '\n' ' ')\" = '600 600 ' ]"
		check "a chmod in the source shows through both names of an inode the kernel holds twice (nodes $known; now $(stat -c %a "$T/rf.mnt/a" "$T/rf.mnt/b" | tr '\n' ' '))" \
			test "$(stat -c %a "$T/rf.mnt/a" "$T/rf.mnt/b" | tr '\n' ' ')" = "600 600 "
		stop rf
	else
		notok "a source without file handles: the mount failed: $(tail -1 "$T/rf.err")"
	fi
	umount "$T/rf.src"
fi

# ---- lookup counts under invalidations -----------------------------------------------
# Each invalidation dcfs passes to the kernel (a name, an inode, or, after
# its event queue overflowed, everything) races the kernel's own lookups
# and FORGETs.  Through all of them the counts must stay exact: once the
# kernel drops its caches it holds only the root, and at exit every node
# was freed.  A reader walks the mount while the source changes under it
# (renames of files and trees, removals, new names, links, a symlink
# retargeted, modes), then a flood of 20,000 names is made in the source
# and removed.  The daemon's event queue is made 16 events long (the
# kernel's limit, read when the daemon makes its group, is set back as
# soon as it has), so that the floods overflow it.
for lcm in fanotify inotify; do
	lc=lc_$lcm
	mkdir -p "$T/$lc.src"
	if ! mount -t tmpfs -o size=256m,mode=0755 dcfs-test "$T/$lc.src" 2>/dev/null; then
		skip "lookup counts under invalidations ($lcm): cannot mount a tmpfs"
		continue
	fi
	MOUNTS+=("$T/$lc.src")
	for d in 0 1 2 3 4 5 6 7; do
		mkdir -p "$T/$lc.src/d$d/sub"
		for f in 0 1 2 3 4 5 6 7; do echo "$d$f" > "$T/$lc.src/d$d/f$f"; done
		ln -s f0 "$T/$lc.src/d$d/link"
	done
	QUEUE_PARAM=/proc/sys/fs/$lcm/max_queued_events
	QUEUE_WAS=$(cat "$QUEUE_PARAM" 2>/dev/null)
	[ -n "$QUEUE_WAS" ] && echo 16 > "$QUEUE_PARAM"
	# in the foreground, so that its log (the overflows) is on its stderr;
	# start runs in a subshell there, so the mount is listed here
	mkdir -p "$T/$lc.mnt"
	MOUNTS+=("$T/$lc.mnt")
	start "$lc" "$T/$lc.src" --coherence=$lcm --foreground 2>"$T/$lc.err" &
	wait_for 10 grep -q "coherence: $lcm" "$T/$lc.err" && wait_for 5 stat_is "$T/$lc.stats" state = running
	rc=$?
	[ -n "$QUEUE_WAS" ] && echo "$QUEUE_WAS" > "$QUEUE_PARAM" && QUEUE_WAS=
	if [ $rc != 0 ]; then
		notok "lookup counts under invalidations ($lcm): the mount failed: $(tail -1 "$T/$lc.err")"
		pkill -KILL -f "^$DCFS $T/$lc.src $T/$lc.mnt "
		umount -l "$T/$lc.mnt" 2>/dev/null
		umount -l "$T/$lc.src"
		continue
	fi
	( end=$((SECONDS + 4)); while [ $SECONDS -lt $end ]; do
		find "$T/$lc.mnt" -exec stat -c %i {} + > /dev/null 2>&1
	  done ) &
	walker=$!
	for round in 1 2 3 4 5 6; do
		ls=$T/$lc.src
		mv "$ls/d0" "$ls/d0.x" && mv "$ls/d0.x" "$ls/d0"
		mv "$ls/d1/f1" "$ls/d2/f1.moved" && mv "$ls/d2/f1.moved" "$ls/d1/f1"
		rm -f "$ls/d3/f3" && echo new > "$ls/d3/f3"
		ln -f "$ls/d4/f4" "$ls/d5/hard" && rm "$ls/d5/hard"
		ln -sfn f$((round % 8)) "$ls/d6/link"
		chmod 0700 "$ls/d7/sub" && chmod 0755 "$ls/d7/sub"
		mkdir "$ls/d7/new$round" && rmdir "$ls/d7/new$round"
		mv "$ls/d2/sub" "$ls/d3/sub.moved" && mv "$ls/d3/sub.moved" "$ls/d2/sub"
		sleep 0.2
	done
	mkdir "$T/$lc.src/flood"
	seq -f "$T/$lc.src/flood/%05g" 20000 | xargs touch
	find "$T/$lc.mnt" -exec stat -c %i {} + > /dev/null 2>&1
	rm -rf "$T/$lc.src/flood"
	wait $walker
	find "$T/$lc.mnt" -exec stat -c %i {} + > /dev/null 2>&1
	overflowed=$(grep -c 'overflow' "$T/$lc.err")
	check "$lcm: the event queue overflowed ($overflowed time(s) logged)" [ "$overflowed" -gt 0 ]
	sync
	echo 2 > /proc/sys/vm/drop_caches
	wait_for 5 stat_is "$T/$lc.stats" nodes = 1
	check "$lcm: after the source changed under the kernel's lookups, drop_caches leaves only the root (nodes $(stat_val "$T/$lc.stats" nodes))" \
		test "$(stat_val "$T/$lc.stats" nodes)" = 1
	stop "$lc"
	check "$lcm: unmounted; at exit every node was freed (nodes_total $(stat_val "$T/$lc.stats" nodes_total))" \
		test "$(stat_val "$T/$lc.stats" state)" = exited -a "$(stat_val "$T/$lc.stats" nodes_total)" = 0
	umount "$T/$lc.src"
done

# ---- dcbench coherence: changes made in the source, behind dcfs ------------------------
# 200 random changes made directly in the source of a warmed-up mount
# (creates, renames of files and trees, writes, chmod, chown, links,
# symlinks, xattrs), in each coherence mode: every one must show through
# the mount within the bound, and the mount and the source must agree at
# once on those made through the mount.  The bound, 500 ms, is generous
# on purpose (a test asserts no timing it could miss on a loaded machine):
# without coherence a change shows after the kernel's 1 s timeout or never,
# and with a 50 ms TTL within 50 ms; the lags themselves are measured by
# dcbench coherence (docs/dcbench.md), not here.
COH_BOUND=500
if [ -x "$DCBENCH" ]; then
	mkdir -p "$T/coh.tmp"
	for args in "" "--coherence=fanotify" "--coherence=inotify" "--coherence=ttl --ttl 50"; do
		bound=$COH_BOUND
		TMPDIR=$T/coh.tmp "$DCBENCH" coherence --fs rcu --changes 200 --require-bound \
			--bound-ms $bound --dcfs-args "$args" > "$T/coh.out" 2>&1
		rc=$?
		check "dcbench coherence --fs rcu${args:+ --dcfs-args $args}: every change seen within $bound ms (exit $rc; $(grep '^coherence rcu: [0-9]' "$T/coh.out"))" \
			[ $rc = 0 ]
		[ $rc = 0 ] || sed 's/^/#   /' "$T/coh.out"
		# the readers' count: some, and not more than a FUSE mount
		# serves in the run's seconds (a count never zeroed is 10^19)
		ops=$(sed -n 's/.* readers*, \([0-9]*\) operations$/\1/p' "$T/coh.out")
		[ -n "$args" ] || check_all "dcbench coherence: the readers' operations counted ($ops)" \
			'[ -n "$ops" ] && [ ${#ops} -le 9 ] && [ "$ops" -gt 0 ]'
	done
	# The stall witnesses, one pinned to each CPU: dcbench stopped for
	# 300 ms in mid-run (SIGSTOP) stalls them all; a real-time loop of
	# 300 ms on one CPU stalls that CPU's alone (a virtual machine's host
	# stops one virtual CPU so), which a witness free to move would not see.
	# stalled_run CMD...: a coherence run, with CMD run 0.2 s into its changes
	stalled_run() {
		TMPDIR=$T/coh.tmp "$DCBENCH" coherence --fs rcu --changes 2000 > "$T/coh.out" 2>&1 &
		pid=$!
		# the witnesses start with the changes (they take seconds)
		wait_for 30 sh -c "grep -qx coh-witness /proc/$pid/task/*/comm 2>/dev/null"
		sleep 0.2
		"$@"
		wait $pid
		rc=$?
		stalls=$(grep '^  a CPU stalled ' "$T/coh.out")
		longest=$(sed -n 's/^  a CPU stalled .*(the longest stall \([0-9]*\)\.[0-9] ms.*/\1/p' "$T/coh.out")
	}
	stalled_run eval 'kill -STOP $pid; sleep 0.3; kill -CONT $pid'
	check_all "dcbench coherence, stopped 300 ms in mid-run: a stall of over 250 ms seen (exit $rc; the longest ${longest:-none} ms)" \
		'[ $rc = 0 ] && [ -n "$longest" ] && [ "$longest" -gt 250 ]'
	cpu=$(taskset -pc $$ 2>/dev/null | sed 's/.*: //; s/.*[,-]//')
	if [ "$(nproc)" -ge 2 ] && [ -n "$cpu" ] && chrt -f 50 true 2>/dev/null; then
		stalled_run chrt -f 50 taskset -c "$cpu" bash -c \
			'e=$((${EPOCHREALTIME/./} + 300000)); while ((${EPOCHREALTIME/./} < e)); do :; done'
		check_all "dcbench coherence, CPU $cpu taken 300 ms by a real-time loop: a stall of over 250 ms seen on it (exit $rc; ${stalls:-no stall line})" \
			'[ $rc = 0 ] && [ -n "$longest" ] && [ "$longest" -gt 250 ] && [[ "$stalls" == *"cpu$cpu "* ]]'
	else
		skip "a stall of one CPU (one CPU here, or no real-time priority)"
	fi
	# Event queue overflows: four floods of 20000 files made in the source
	# (dcbench --flood), each while a change is made there, in the default
	# mode (fanotify) and in inotify mode.  dcfs must log the overflow, and
	# every change must show: the watcher, far behind, skips to the end of
	# the queue and forgets everything.  The source is a tmpfs: on this
	# VM's ext4 files are made at disk speed (a flood takes seconds) and
	# the watcher keeps up.
	mkdir -p "$T/ovf.src"
	if mount -t tmpfs -o size=256m,mode=0755 dcfs-test "$T/ovf.src" 2>/dev/null; then
		MOUNTS+=("$T/ovf.src")
		for args in "" "--coherence=inotify"; do
			TMPDIR=$T/coh.tmp "$DCBENCH" coherence --fs rcu --changes 100 --require-bound \
				--bound-ms $COH_BOUND --flood 20000 --require-overflow --source "$T/ovf.src" \
				--dcfs-args "$args" > "$T/coh.out" 2>&1
			rc=$?
			check "dcbench coherence --flood 20000${args:+ --dcfs-args $args}: overflows logged, every change seen within $COH_BOUND ms (exit $rc; $(grep '^coherence rcu: [0-9]' "$T/coh.out"))" \
				[ $rc = 0 ]
			[ $rc = 0 ] || sed 's/^/#   /' "$T/coh.out"
		done
		umount "$T/ovf.src"
	else
		skip "dcbench coherence --flood (cannot mount a tmpfs)"
	fi
	# The inotify watch budget spent: fs.inotify.max_user_watches (per
	# user, so shared with everything else root runs) set to the watches in
	# use now plus 10, fewer than the tree's 80 directories, for this run
	# only.  dcfs must say it falls back to ttl, and from then on the
	# kernel asks every time and libdcache's TTL (100 ms) bounds the answers.
	used=$(find /proc/[0-9]*/fdinfo -type f 2>/dev/null | xargs grep -h '^inotify' 2>/dev/null | wc -l)
	if [ ! -w "$WATCHES_PARAM" ]; then
		skip "dcbench coherence after the inotify watch budget runs out (cannot set $WATCHES_PARAM)"
	elif [ $((used + 10)) -ge 60 ]; then
		skip "dcbench coherence after the inotify watch budget runs out ($used watches in use)"
	else
		WATCHES_WAS=$(cat "$WATCHES_PARAM")
		echo $((used + 10)) > "$WATCHES_PARAM"
		TMPDIR=$T/coh.tmp "$DCBENCH" coherence --fs rcu --changes 200 --require-bound \
			--bound-ms $COH_BOUND --dcfs-args "--coherence=inotify --ttl 100" \
			--workdir "$T/coh.fb" > "$T/coh.out" 2>&1
		rc=$?
		echo "$WATCHES_WAS" > "$WATCHES_PARAM" && WATCHES_WAS=
		fell=$(grep -c 'inotify watch limit reached (fs.inotify.max_user_watches) on .*; using ttl (100 ms)$' \
			"$T/coh.fb/daemon-rcu.log" 2>/dev/null)
		check "dcbench coherence --dcfs-args --coherence=inotify --ttl 100, $((used + 10)) watches: falls back to ttl, every change seen within $COH_BOUND ms (exit $rc, fell back ${fell:-0} time(s); $(grep '^coherence rcu: [0-9]' "$T/coh.out"))" \
			[ $rc = 0 -a "${fell:-0}" = 1 ]
		[ $rc = 0 -a "${fell:-0}" = 1 ] || sed 's/^/#   /' "$T/coh.out" "$T/coh.fb/daemon-rcu.log"
		rm -rf "$T/coh.fb"
	fi
	check "dcbench coherence: nothing left (mount, trees, work directory)" \
		test -z "$(grep " $T/coh" /proc/mounts; ls -A "$T/coh.tmp")"
else
	skip "dcbench coherence (no $DCBENCH)"
fi

# ---- privileges: capabilities, seccomp, a mount namespace ----------------------------------
# As root dcfs keeps only the capabilities it uses (sandbox.c's kept[]:
# CHOWN, DAC_OVERRIDE, DAC_READ_SEARCH, FOWNER, FSETID, SETGID, SETUID,
# SYS_ADMIN, SYS_NICE, SYS_RESOURCE, MKNOD, SETFCAP: mask 0x89a000df) and
# refuses to start without CAP_SETUID (it would create files as root);
# its seccomp filter kills the daemon on a call outside the list, and in
# log mode lets it through; --sandbox=namespace serves the conformance
# script from a root that holds only the source and /proc.
refused "bad --seccomp" "not kill, log or none" "$T/s.src" "$T/r.mnt" --seccomp=bogus
out=$("$DCFS" "$T/s.src" "$T/r.mnt" -o seccomp=bogus 2>&1); rc=$?
check "refused: -o seccomp=bogus, exit 2 ($rc)" [ $rc = 2 ]
out=$("$DCFS" "$T/s.src" "$T/r.mnt" --sandbox=bogus 2>&1); rc=$?
check "refused: --sandbox=bogus, exit 2 ($rc: $out)" eval '[ $rc = 2 ] && grep -q "not none or namespace" <<<"$out"'
if command -v setpriv >/dev/null; then
	out=$(setpriv --inh-caps=-setuid --bounding-set=-setuid -- "$DCFS" "$T/s.src" "$T/r.mnt" 2>&1); rc=$?
	check "refused: root without CAP_SETUID, exit $rc, nothing mounted ($out)" \
		eval '[ $rc = 1 ] && grep -q CAP_SETUID <<<"$out" && not_mounted "$T/r.mnt"'
else
	skip "refused: root without CAP_SETUID (no setpriv)"
fi
check "refused starts mounted nothing (privileges)" not_mounted "$T/r.mnt"
mkdir -p "$T/pv.src"
echo hi > "$T/pv.src/file"
if start pv "$T/pv.src"; then
	pid=$(stat_val "$T/pv.stats" pid)
	caps() { sed -n "s/^$1:[[:space:]]*//p" "/proc/$pid/status"; }
	prm=$(caps CapPrm) bnd=$(caps CapBnd) inh=$(caps CapInh)
	check "the daemon's capabilities: permitted $prm, bounding $bnd, inheritable $inh: within the kept set, with SETUID and SETGID" \
		eval '[ $((0x$prm & ~0x89a000df)) = 0 ] && [ $((0x$bnd & ~0x89a000df)) = 0 ] &&
		      [ $((0x$inh)) = 0 ] && [ $((0x$prm & 0xc0)) = $((0xc0)) ]'
	check "the daemon runs under its seccomp filter, every thread ($(grep -h '^Seccomp:' /proc/$pid/task/*/status | sort | uniq -c | tr -s ' \n' ' '))" \
		eval '[ -z "$(grep -h "^Seccomp:" /proc/$pid/task/*/status | grep -v "2$")" ] &&
		      [ "$(caps NoNewPrivs)" = 1 ]'
	stop pv
else
	notok "privileges: mount"
fi
out=$(DCFS_TEST_SECCOMP_PROBE=1 "$DCFS" "$T/pv.src" "$T/pv.mnt" 2>&1); rc=$?
check "--seccomp=kill (the default): a call outside the list kills the daemon, nothing left mounted (exit $rc: $out)" \
	eval '[ $rc = 1 ] && grep -q "signal 31" <<<"$out" && not_mounted "$T/pv.mnt"'
not_mounted "$T/pv.mnt" || fusermount3 -u "$T/pv.mnt" 2>/dev/null || umount -l "$T/pv.mnt" 2>/dev/null
if DCFS_TEST_SECCOMP_PROBE=1 start pv "$T/pv.src" --seccomp=log 2>/dev/null; then
	pid=$(stat_val "$T/pv.stats" pid)
	# the kernel's audit record, where dmesg shows it (no auditd)
	logged=$(dmesg 2>/dev/null | grep -c "type=1326.* pid=$pid .*syscall=")
	# a filter is in place (Seccomp: 2), or "log" would be none at all
	filtered=$(awk '$1 == "Seccomp:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
	check_all "--seccomp=log: the call is let through (the mount answers: $(cat "$T/pv.mnt/file")), the daemon filtered (Seccomp: ${filtered:-?}), ${logged:-no} kernel record(s) of it" \
		'[ "$(cat "$T/pv.mnt/file")" = hi ] && [ "$filtered" = 2 ]'
	stop pv
else
	notok "--seccomp=log: mount"
fi
if unshare -m true 2>/dev/null; then
	CONFORM_OPTS=--sandbox=namespace conform c_sbx rcu "as root (--sandbox=namespace)"
	pid=$(stat_val "$T/c_sbx.stats" pid)
	root=$(ls /proc/$pid/root 2>&1 | tr '\n' ' ')
	check "--sandbox=namespace: the daemon's root holds only the source's path and /proc ($root)" \
		eval '[ "$(ls /proc/$pid/root | tr "\n" " ")" = "proc tmp " ] &&
		      [ -d "/proc/$pid/root$T/c_sbx.src" ] && [ ! -e "/proc/$pid/root/etc" ] &&
		      [ "$(ls -A "/proc/$pid/root$T" | tr "\n" " ")" = "c_sbx.mnt c_sbx.src " ]'
	u0=$(stat_val "$T/c_sbx.stats" updated)
	echo behind > "$T/c_sbx.src/behind"
	sleep 1.5
	check "--sandbox=namespace: the statistics are rewritten (updated $u0 -> $(stat_val "$T/c_sbx.stats" updated)), a change made in the source shows ($(cat "$T/c_sbx.mnt/behind" 2>&1))" \
		eval '[ "$(stat_val "$T/c_sbx.stats" updated)" -gt "$u0" ] && [ "$(cat "$T/c_sbx.mnt/behind")" = behind ]'
	kill -TERM "$pid"
	wait_for 10 gone "$pid"
	check "--sandbox=namespace: SIGTERM: the daemon exits clean ($(stat_val "$T/c_sbx.stats" state), $(stat_val "$T/c_sbx.stats" nodes_total) nodes) and the mount is gone" \
		eval 'gone "$pid" && wait_for 5 not_mounted "$T/c_sbx.mnt" &&
		      [ "$(stat_val "$T/c_sbx.stats" state)" = exited ]'
	if start sbk "$T/pv.src" --sandbox=namespace; then
		pid=$(stat_val "$T/sbk.stats" pid)
		kill -KILL "$pid"
		check "--sandbox=namespace: SIGKILL: the child left outside unmounts" \
			eval 'wait_for 5 gone "$pid" && wait_for 5 not_mounted "$T/sbk.mnt"'
	else
		notok "--sandbox=namespace, SIGKILL: mount"
	fi
else
	skip "--sandbox=namespace (no unshare -m here)"
fi

reports=$(ls "$T"/sanitizer.* 2>/dev/null)
if [ -z "$reports" ]; then
	ok "no sanitizer report from any daemon"
else
	notok "sanitizer reports from a daemon:"
	for f in $reports; do sed -n '1,30p' "$f" | sed 's/^/#   /'; done
fi

t_finish
