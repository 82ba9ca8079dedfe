#!/usr/bin/env bash
# test_nfs_dcfs.sh BUILD_DIR [3|4] - dcfs over NFS, against a real
# NFS-Ganesha.
#
# Serves a scratch directory with scripts/nfs-server.sh and mounts it
# with BUILD_DIR/dcfs nfs://127.0.0.1/export, over NFSv3 (the default) or
# NFSv4 (4: the URL's ?version=4).  The reference is the same
# operations on the exported directory itself:
#   - the POSIX script tests/dcfs_conform.c, run natively and through the
#     mount, as root, as nobody and as nobody with a supplementary group,
#     must print the same lines (results, errnos, modes, owners, sizes,
#     contents, listings), leaving out only what dcfs over NFS cannot carry
#     (fallocate, RENAME_EXCHANGE, extended attributes), whose errors
#     through the mount are checked as docs/dcfs.md documents them;
#   - a cached stat of an unchanged path sends no RPC (two mounts: one
#     pass, then four, must send the same LOOKUPs and GETATTRs);
#   - two clients: each change through one, and each made in the exported
#     directory directly, shows in the other within the documented bound
#     (entry timeout + TTL + acdir); concurrent creates, renames and
#     unlinks from both leave the server's tree as expected;
#   - a file open through the mount reads on after an unlink or a rename
#     over it, and its hidden name goes at its close; a rename over it
#     that the server refuses leaves it its name;
#   - a server restart: data fsync'ed before it is on the server, and
#     reads after it answer right or fail, never wrong data; changes
#     made first after it, over connections left idle across it, are
#     done (the connection closed by the server is seen, not used);
#   - a server in its grace period after a restart: a truncate and a
#     create through the mount wait for it to end (the server answers
#     JUKEBOX, or GRACE) and are done; a truncate whose caller is killed
#     meanwhile ends then, not done;
#   - a small real compile (cc with an include directory) through the
#     mount, and the program it built runs.
# Where the server cannot run (not root, packages missing, an NFS server
# already registered here, dcfs built without libnfs, no FUSE) every check
# is a skip with the reason.  Output is TAP-like; exit 1 on failure.
set -uo pipefail
export LC_ALL=C

if [ $# -lt 1 ] || [ $# -gt 2 ] || [[ ! ${2:-3} =~ ^[34]$ ]]; then
	echo "usage: $0 BUILD_DIR [3|4]" >&2
	exit 2
fi
BUILD=$1
VERSION=${2:-3}
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$TESTS")
DCFS=$BUILD/dcfs
SERVER=$TOP/scripts/nfs-server.sh
BASE=nfs://127.0.0.1/export
# the URL every mount takes; PARAMS: what it asks besides the export
PARAMS=
[ "$VERSION" = 4 ] && PARAMS="version=4"
URL=$BASE${PARAMS:+?$PARAMS}
# the two-client mounts' timeouts, and the bound on staleness they give
# (docs/dcfs.md "Over NFS": names entry timeout + TTL + acdir, attributes
# attr timeout + ac)
FAST=(--entry-timeout 0.2 --attr-timeout 0.2 --ttl 200 --neg-ttl 200 --acdir 100 --ac 200)
BOUND_MS=500

T_NAME=test_nfs_dcfs
[ "$VERSION" = 4 ] && T_NAME=test_nfs_dcfs_v4
. "$TESTS/lib.sh"

CHECKS=("the server starts" "dcfs mounts the export"
	"conformance as root" "conformance as nobody"
	"conformance as nobody with group 4242"
	"what dcfs over NFS cannot carry fails as documented"
	"a bad export: exit 1 with the server's answer"
	"a bad URL: a usage error (exit 2) naming what is wrong"
	"through build/netdelay (nfsport=, mountport=): a file made reads back"
	"a cached stat of an unchanged path: 0 LOOKUP and 0 GETATTR RPCs"
	"files unchanged for long: their attributes trusted longer (--acregmax)"
	"a file changed just after it was made: the change shows within --ac"
	"--lookupcache positive: a name made in a directory long unchanged shows at once"
	"a name made through the mount: another client's next change there shows within --acdir"
	"two clients: changes through one show in the other within the bound"
	"two clients: changes in the exported directory show in both within the bound"
	"two clients: concurrent creates, renames, unlinks leave the expected tree"
	"O_CREAT of a file another client made: the caller's access is checked"
	"a file unlinked while open reads on, and its hidden name goes at close"
	"a file replaced by a rename while open reads on, and its hidden name goes at close"
	"a hidden name looked up while open: gone from the cache at close"
	"a rename the server refuses over a file open here leaves that file its name"
	"every -o given reaches the mount (two: noatime, noexec)"
	"a refused rmdir of the working directory: names relative to it still answer"
	"a server restart: fsync'ed data is on the server"
	"a server restart: lookups after it are answered, on new connections"
	"a server restart: reads answer right or fail, never wrong"
	"a server restart between a write and its fsync: fsync through another descriptor, fsync and close say EIO; a reader's close does not"
	"a server restart: changes as the first calls after it, over connections idle across it, are done"
	"a server in its grace period: a truncate and a create made in it are done, sent again when asked"
	"a server in its grace period: a truncate waiting for it ends when its caller is killed, undone"
	"a small compile through the mount builds a program that runs"
	"the mounts unmount and their daemons exit"
	"no sanitizer report from any daemon"
	"the server stops")
next=0
# skip_rest WHY: the checks not yet made skipped, then the end; after a
# failure of dcfs or the server, count it first (fail_rest)
skip_rest() {
	local i

	for ((i = next; i < ${#CHECKS[@]}; i++)); do skip "${CHECKS[i]}: $1"; done
	t_finish
}
done_check() { next=$((next + 1)); }
# fail_rest WHY: the check at hand failed, which the rest depend on
fail_rest() {
	notok "${CHECKS[next]}: $1"
	done_check
	skip_rest "$1"
}

[ "$(id -u)" -eq 0 ] || skip_rest "needs root (ganesha.nfsd serves every user's files)"
[ -x "$DCFS" ] || skip_rest "$DCFS is not built"
if [[ $("$DCFS" "$URL" /nonexistent 2>&1) == *"without NFS support"* ]]; then
	skip_rest "dcfs was built without NFS support (no libnfs-dev)"
fi
[ -e /dev/fuse ] || skip_rest "no /dev/fuse"
for p in ganesha.nfsd rpcbind rpcinfo fusermount3 setpriv; do
	command -v "$p" >/dev/null || skip_rest "$p is not installed (scripts/deps.sh installs it)"
done
if rpcinfo -p 127.0.0.1 2>/dev/null | grep -qw nfs; then
	skip_rest "an NFS server is registered with rpcbind here already"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_nfs_dcfs.XXXXXX") || exit 1
chmod 755 "$TMP"
ROOT=$TMP/root STATE=$TMP/state
CONFORM=$TMP/conform
started=0
MOUNTS=()
cleanup() {
	local m

	for m in "${MOUNTS[@]}"; do fusermount3 -u -z "$m" 2>/dev/null; done
	[ $started = 1 ] && "$SERVER" stop "$STATE" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
# sanitizer reports (of a sanitizer build) go to files here, checked at the end
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$TMP/sanitizer"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$TMP/sanitizer"
${CC:-cc} -std=c11 -O1 -Wall -o "$CONFORM" "$TESTS/dcfs_conform.c" ||
	fail_rest "tests/dcfs_conform.c does not compile"
mkdir -p "$ROOT"
chmod 755 "$ROOT"

ms_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }'; }

t0=$EPOCHREALTIME
if "$SERVER" start "$ROOT" "$STATE" >"$TMP/start.out" 2>&1; then
	started=1
	# files to be old by the time the age rule is checked
	mkdir -p "$ROOT/aged" "$ROOT/aged2" "$ROOT/aged3" &&
		for i in $(seq 1 20); do echo "$i" >"$ROOT/aged/f$i"; done
	aged_t0=$EPOCHREALTIME
	ok "${CHECKS[next]} ($(ms_since "$t0") ms)"
	done_check
else
	# as in test_nfs.sh: a server that cannot start here (a root without
	# the network services ganesha needs) is a counted skip
	diag <"$TMP/start.out"
	skip_rest "the server did not start or its export did not answer (log above)"
fi

# mount NAME [OPTIONS...]: dcfs on $TMP/NAME, RPC counts to $TMP/NAME.stats
# at unmount
mount_dcfs() {
	local name=$1
	shift
	mkdir -p "$TMP/$name"
	"$DCFS" "$URL" "$TMP/$name" --stats "$TMP/$name.stats" "$@" \
		>"$TMP/$name.log" 2>&1 || return 1
	MOUNTS+=("$TMP/$name")
}
# unmount NAME: 0 once the daemon wrote its statistics and exited
unmount_dcfs() {
	local i

	fusermount3 -u "$TMP/$1" 2>/dev/null || return 1
	for ((i = 0; i < 100; i++)); do
		[ -s "$TMP/$1.stats" ] && return 0
		sleep 0.05
	done
	return 1
}
# stat_of NAME KEY: KEY=VALUE from NAME's statistics
stat_of() { grep -o "\b$2=[0-9]*" "$TMP/$1.stats" | head -1 | cut -d= -f2; }

if mount_dcfs A; then
	ok "${CHECKS[next]} (daemon started, $(grep -c fuse.dcfs /proc/mounts) dcfs mount)"
	done_check
else
	diag <"$TMP/A.log"
	fail_rest "the mount failed"
fi

# --- conformance: the same script on the exported directory and through dcfs ---
# conform NAME LABEL WHO...: WHO is the command prefix (empty: root)
conform() {
	local name=$1 label=$2 total same=0 bad=0 a b
	shift 2
	mkdir -p "$ROOT/$name.nat" "$TMP/A/$name.mnt"
	chmod 755 "$ROOT/$name.nat" "$TMP/A/$name.mnt"
	if ! "$CONFORM" setup "$ROOT/$name.nat" noxattr ||
	   ! "$CONFORM" setup "$TMP/A/$name.mnt" noxattr; then
		notok "${CHECKS[next]}: setup"
		return
	fi
	"$@" timeout 120 "$CONFORM" run "$ROOT/$name.nat" nfs3 >"$TMP/$name.out.nat" 2>&1
	"$@" timeout 120 "$CONFORM" run "$TMP/A/$name.mnt" nfs3 >"$TMP/$name.out.mnt" 2>&1
	total=$(wc -l <"$TMP/$name.out.nat")
	while IFS= read -r a && IFS= read -r b <&3; do
		if [ "$a" = "$b" ]; then
			same=$((same + 1))
		else
			bad=$((bad + 1))
			[ $bad -le 5 ] && echo "native '$a' but dcfs '$b'"
		fi
	done <"$TMP/$name.out.nat" 3<"$TMP/$name.out.mnt" >"$TMP/$name.diff"
	check_all "${CHECKS[next]} ($label): $same/$total operations identical to the exported directory's" \
		'[ "$total" -ge 190 ] && [ "$same" = "$total" ] && [ "$(wc -l <"$TMP/$name.out.mnt")" = "$total" ]'
	diag <"$TMP/$name.diff"
}
conform c_root root
done_check
NOBODY=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
conform c_nob nobody "${NOBODY[@]}"
done_check
conform c_grp "nobody, group 4242" setpriv --reuid=nobody --regid=nogroup --groups=4242
done_check

mkdir -p "$TMP/A/left_out"
"$CONFORM" nfs3 "$TMP/A/left_out" >"$TMP/left_out" 2>&1
printf '%s\n' "001 fallocate: EOPNOTSUPP" "002 rename exchange: EINVAL" \
	"003 setxattr user.a: EOPNOTSUPP" "004 listxattr: EOPNOTSUPP" >"$TMP/left_out.want"
check "${CHECKS[next]}: $(cut -d' ' -f2- "$TMP/left_out" | paste -sd, -)" \
	cmp -s "$TMP/left_out" "$TMP/left_out.want"
done_check

mkdir -p "$TMP/bad"
"$DCFS" nfs://127.0.0.1/no-such-export "$TMP/bad" >"$TMP/bad.out" 2>&1
rc=$?
check_all "${CHECKS[next]}: $(head -1 "$TMP/bad.out")" \
	'[ $rc = 1 ] && grep -q "no-such-export: " "$TMP/bad.out" && ! grep -q " $TMP/bad " /proc/mounts'
done_check

bad_params=0
for q in "?nfsport=0" "?nfsport=x" "?version=5" "?&" "?version=3&" "?mountport=70000" "?color=red"; do
	"$DCFS" "$BASE$q" "$TMP/bad" >"$TMP/badp.out" 2>&1
	rc=$?
	[ $rc = 2 ] && grep -q "bad parameter '" "$TMP/badp.out" && bad_params=$((bad_params + 1))
done
"$DCFS" nfs://127.0.0.1:2049/export "$TMP/bad" >"$TMP/badh.out" 2>&1
rc=$?
[ $rc = 2 ] && grep -q "a port is given as ?nfsport=N" "$TMP/badh.out" && bad_params=$((bad_params + 1))
check "${CHECKS[next]}: $bad_params of 8 refused ($(head -1 "$TMP/badp.out"); $(head -1 "$TMP/badh.out"))" \
	[ $bad_params = 8 ]
done_check

# the ports given in the URL, the connection relayed with a delay (what
# bench/fsmeta.sh --nfs-delay-us measures through)
mport=$(rpcinfo -p 127.0.0.1 | awk '$2 == 3 && $3 == "tcp" && $5 == "mountd" { print $4; exit }')
# two ports nothing listens on
p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
while ss -ltnH "( sport = :$p1 or sport = :$p2 )" 2>/dev/null | grep -q .; do
	p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
done
if [ -x "$BUILD/netdelay" ] && [ -n "$mport" ] && command -v ss >/dev/null; then
	coproc RELAY { exec "$BUILD/netdelay" --delay-us 500 "$p1:2049" "$p2:$mport"; }
	read -r -t 10 ready <&"${RELAY[0]}"
	URL_SAVED=$URL
	URL="$BASE?nfsport=$p1&mountport=$p2${PARAMS:+&$PARAMS}"
	if [ "${ready:-}" = "netdelay: ready" ] && mount_dcfs R; then
		echo relayed >"$TMP/R/relayed" 2>/dev/null
		got=$(cat "$TMP/R/relayed" 2>/dev/null)
		# the mount's connections go through the relay, not to 2049
		via=$(ss -tnH state established "( dport = :$p1 )" | wc -l)
		unmount_dcfs R
		check_all "${CHECKS[next]}: read '$got', $via connection(s) through the relay" \
			'[ "$got" = relayed ] && [ "$(cat "$ROOT/relayed")" = relayed ] && [ "$via" -ge 1 ]'
	else
		notok "${CHECKS[next]}: the relay (${ready:-no answer}) or the mount failed"
		diag <"$TMP/R.log"
	fi
	URL=$URL_SAVED
	kill "$RELAY_PID" 2>/dev/null
	wait "$RELAY_PID" 2>/dev/null
else
	skip "${CHECKS[next]}: no $BUILD/netdelay, no mountd port registered, or no ss (iproute2)"
fi
done_check

# --- what the cache saves ----------------------------------------------------------
mkdir -p "$ROOT"/tree/a/b/c "$ROOT"/tree/d
for i in $(seq 1 20); do echo "$i" >"$ROOT/tree/a/b/c/f$i"; echo "$i" >"$ROOT/tree/d/g$i"; done
SPATHS=()
for i in $(seq 1 20); do SPATHS+=("tree/a/b/c/f$i" "tree/d/g$i" "tree/missing$i"); done
# stat_passes NAME N: N passes over SPATHS, each past the kernel's entry
# timeout, so that each asks dcfs again; the cache trusts its answers
stat_passes() {
	local p

	mount_dcfs "$1" --entry-timeout 0.1 --attr-timeout 0.1 --ttl 600000 --neg-ttl 600000 \
		--ac 600000 --acdir 600000 || return 1
	for ((p = 0; p < $2; p++)); do
		(cd "$TMP/$1" && stat -c %i "${SPATHS[@]}" >/dev/null 2>&1)
		sleep 0.3
	done
	unmount_dcfs "$1"
}
if stat_passes S1 1 && stat_passes S4 4; then
	l1=$(stat_of S1 LOOKUP) l4=$(stat_of S4 LOOKUP) g1=$(stat_of S1 GETATTR) g4=$(stat_of S4 GETATTR)
	check_all "${CHECKS[next]}: LOOKUP $l1 for one pass, $l4 for four; GETATTR $g1 and $g4" \
		'[ -n "$l1" ] && [ "$l1" -gt 0 ] && [ "$l4" = "$l1" ] && [ "$g4" = "$g1" ]'
else
	notok "${CHECKS[next]}: a mount failed"
	cat "$TMP"/S*.log | diag
fi
done_check

# --- trust that grows with age ----------------------------------------------------
# Attributes are trusted for a tenth of how long the inode had been
# unchanged, within [--ac, --acregmax].  Files 8 s old: 0.8 s; eight stats
# of them 150 ms apart each, GETATTR about twice, against each time with
# --ac 100 alone (a fixed 100 ms).
AGED=()
for i in $(seq 1 20); do AGED+=("f$i"); done
aged_passes() {
	local name=$1 p
	shift
	mount_dcfs "$name" --entry-timeout 0 --attr-timeout 0 --ttl 600000 --neg-ttl 600000 \
		--acdir 100 --ac 100 "$@" || return 1
	for ((p = 0; p < 8; p++)); do
		(cd "$TMP/$name/aged" && stat -c %i "${AGED[@]}" >/dev/null 2>&1)
		sleep 0.15
	done
	unmount_dcfs "$name"
}
wait_s=$(awk -v a="$aged_t0" -v b="$EPOCHREALTIME" 'BEGIN { w = 8.5 - (b - a); print (w > 0 ? w : 0) }')
sleep "$wait_s"
if aged_passes G1 --acregmax 60000 && aged_passes G2; then
	g1=$(stat_of G1 GETATTR) g2=$(stat_of G2 GETATTR)
	check_all "${CHECKS[next]}: GETATTR $g1 with --acregmax 60000, $g2 with --ac 100 alone" \
		'[ -n "$g1" ] && [ -n "$g2" ] && [ $((g1 * 2)) -lt "$g2" ]'
else
	notok "${CHECKS[next]}: a mount failed"
	cat "$TMP"/G*.log | diag
fi
done_check
# ... but what changed lately is trusted for --ac only: a file made, seen,
# then changed on the server shows within 100 ms + the poll
if mount_dcfs G3 --entry-timeout 0 --attr-timeout 0 --ac 100 --acregmax 60000 \
	--acdir 100 --acdirmax 60000; then
	echo y >"$ROOT/aged/young" && chmod 644 "$ROOT/aged/young"
	m0=$(stat -c %a "$TMP/G3/aged/young" 2>&1)
	chmod 600 "$ROOT/aged/young"
	t0=$EPOCHREALTIME m1=
	while [ "$(ms_since "$t0")" -lt 3000 ]; do
		m1=$(stat -c %a "$TMP/G3/aged/young" 2>&1)
		[ "$m1" = 600 ] && break
		sleep 0.02
	done
	lag=$(ms_since "$t0")
	check_all "${CHECKS[next]}: mode $m0, then $m1 after $lag ms (bound 500)" \
		'[ "$m0" = 644 ] && [ "$m1" = 600 ] && [ "$lag" -le 500 ]'
	unmount_dcfs G3
else
	notok "${CHECKS[next]}: the mount failed"
	diag <"$TMP/G3.log"
fi
done_check
# seen_after NAME PATH: poll stat of PATH through mount NAME for 3 s;
# the ms until it answered into $lag
seen_after() {
	local t0=$EPOCHREALTIME
	lag=
	while [ "$(ms_since "$t0")" -lt 3000 ]; do
		stat "$TMP/$1/$2" >/dev/null 2>&1 && break
		sleep 0.02
	done
	lag=$(ms_since "$t0")
}
# a directory 20 s old, trusted 2 s by age, but not where no absent name
# is kept: each lookup of one checks it against attributes --acdir old
if mount_dcfs G4 --entry-timeout 0 --attr-timeout 0 --lookupcache positive; then
	stat "$TMP/G4/aged2/theirs" >/dev/null 2>&1; before=$?
	echo t >"$ROOT/aged2/theirs"
	seen_after G4 aged2/theirs
	check_all "${CHECKS[next]}: absent (stat exit $before), then there after $lag ms (bound 500)" \
		'[ "$before" != 0 ] && [ "$lag" -le 500 ]'
	unmount_dcfs G4
else
	notok "${CHECKS[next]}: the mount failed"
	diag <"$TMP/G4.log"
fi
done_check
# a directory 20 s old, its absent name cached; a name made in it through
# the mount makes it changed lately: another client's name there shows
# within --neg-ttl + --acdir, not the 2 s its age would give
if mount_dcfs G5 --entry-timeout 0 --attr-timeout 0 --neg-ttl 100; then
	stat "$TMP/G5/aged3/theirs" >/dev/null 2>&1; before=$?
	echo m >"$TMP/G5/aged3/mine"
	echo t >"$ROOT/aged3/theirs"
	seen_after G5 aged3/theirs
	check_all "${CHECKS[next]}: absent (stat exit $before), then there after $lag ms (bound 500)" \
		'[ "$before" != 0 ] && [ "$lag" -le 500 ]'
	unmount_dcfs G5
else
	notok "${CHECKS[next]}: the mount failed"
	diag <"$TMP/G5.log"
fi
done_check

# --- two clients ---------------------------------------------------------------------
mount_dcfs B1 "${FAST[@]}" && mount_dcfs B2 "${FAST[@]}" || fail_rest "the two client mounts failed"
X=$TMP/B1 Y=$TMP/B2
mkdir -p "$X/two/dir" && echo one >"$X/two/file" && echo r >"$X/two/ren" &&
	echo gone >"$X/two/gone" && chmod 644 "$X/two/file"
sleep 1
# seen_within WHAT CMD: poll CMD until it holds; its delay (ms) in $delay,
# and a line to $TMP/late when it took longer than the bound
seen_within() {
	local t0=$EPOCHREALTIME

	until eval "$2"; do
		if [ "$(ms_since "$t0")" -gt 5000 ]; then
			echo "$1: not seen after 5 s" >>"$TMP/late"
			return 1
		fi
		sleep 0.02
	done
	delay=$(ms_since "$t0")
	[ "$delay" -le $((BOUND_MS + 100)) ] || echo "$1: seen after $delay ms" >>"$TMP/late"
	[ "$delay" -gt "${worst:-0}" ] && worst=$delay
	return 0
}
: >"$TMP/late"
worst=0
# changes through X, each looked for through Y (which looked before)
stat "$Y/two/new" "$Y/two/dir/sub" "$Y/two/ren2" "$Y/two/file" "$Y/two/gone" >/dev/null 2>&1
echo new >"$X/two/new";            seen_within create '[ "$(cat "$Y/two/new" 2>/dev/null)" = new ]'
mkdir "$X/two/dir/sub";            seen_within mkdir '[ -d "$Y/two/dir/sub" ]'
mv "$X/two/ren" "$X/two/ren2";     seen_within rename '[ -e "$Y/two/ren2" ] && [ ! -e "$Y/two/ren" ]'
rm "$X/two/gone";                  seen_within unlink '[ ! -e "$Y/two/gone" ]'
chmod 600 "$X/two/file";           seen_within chmod '[ "$(stat -c %a "$Y/two/file")" = 600 ]'
echo rewritten >"$X/two/file";     seen_within rewrite '[ "$(cat "$Y/two/file")" = rewritten ]'
mv "$X/two/dir" "$X/two/dir2";     seen_within "rename a directory" '[ -d "$Y/two/dir2/sub" ] && [ ! -e "$Y/two/dir" ]'
check_all "${CHECKS[next]} ($BOUND_MS ms): 7 changes, the slowest seen after $worst ms" '[ ! -s "$TMP/late" ]'
diag <"$TMP/late"
done_check

: >"$TMP/late"
worst=0
stat "$X/two/direct" "$Y/two/direct" >/dev/null 2>&1
echo d >"$ROOT/two/direct"
seen_within "direct create (X)" '[ -e "$X/two/direct" ]'
seen_within "direct create (Y)" '[ -e "$Y/two/direct" ]'
mv "$ROOT/two/dir2" "$ROOT/two/dir3"
seen_within "direct rename (X)" '[ -d "$X/two/dir3/sub" ] && [ ! -e "$X/two/dir2" ]'
seen_within "direct rename (Y)" '[ -d "$Y/two/dir3/sub" ] && [ ! -e "$Y/two/dir2" ]'
check_all "${CHECKS[next]} ($BOUND_MS ms): the slowest after $worst ms" '[ ! -s "$TMP/late" ]'
diag <"$TMP/late"
done_check

# both clients at once in one directory: X makes x0..x99 and renames the
# even ones, Y makes y0..y99 and removes the odd ones
mkdir "$X/race"
sleep 1
(for i in $(seq 0 99); do echo "$i" >"$X/race/x$i"; done
 for i in $(seq 0 2 99); do mv "$X/race/x$i" "$X/race/rx$i"; done) &
pa=$!
(for i in $(seq 0 99); do echo "$i" >"$Y/race/y$i"; done
 for i in $(seq 1 2 99); do rm "$Y/race/y$i"; done) &
pb=$!
wait $pa; ra=$?
wait $pb; rb=$?
want=$( (for i in $(seq 0 99); do
		if ((i % 2)); then echo "x$i"; else echo "rx$i"; echo "y$i"; fi
	 done) | sort)
got=$(ls "$ROOT/race" | sort)
bad=$(for f in $got; do [ "$(cat "$ROOT/race/$f")" = "${f//[!0-9]/}" ] || echo "$f"; done)
check_all "${CHECKS[next]}: $(echo "$got" | wc -l) names, $(echo "$want" | wc -l) expected, contents right" \
	'[ $ra = 0 ] && [ $rb = 0 ] && [ "$got" = "$want" ] && [ -z "$bad" ]'
[ "$got" = "$want" ] || diff <(echo "$want") <(echo "$got") | diag
done_check

# another client (here the server's directory itself) makes a file the
# kernel behind A still holds as absent: nobody's O_CREAT of it must not
# open it unchecked (a CREATE that opens what exists would)
# (in a directory anyone may write, so the kernel lets the create through)
mkdir -m 777 "$ROOT/pub" && chmod 777 "$ROOT/pub"
stat "$TMP/A/pub/theirs" >/dev/null 2>&1
echo theirs >"$ROOT/pub/theirs" && chmod 600 "$ROOT/pub/theirs"
"${NOBODY[@]}" sh -c "echo mine >>'$TMP/A/pub/theirs'" 2>"$TMP/theirs.err"
crc=$?
check_all "${CHECKS[next]}: exit $crc ($(head -c 80 "$TMP/theirs.err" | sed "s|$TMP|TMP|")), contents '$(cat "$ROOT/pub/theirs")'" \
	'[ $crc != 0 ] && [ "$(cat "$ROOT/pub/theirs")" = theirs ]'
done_check

# hidden_after_close: the hidden names left in the export's root once
# the last close of their file (its RELEASE, which comes asynchronously)
# went through
hidden_after_close() {
	local i left

	for ((i = 0; i < 40; i++)); do
		left=$(ls -A "$ROOT" | grep -c '^\.dcfs-silly\.')
		[ "$left" = 0 ] && break
		sleep 0.05
	done
	echo "$left"
}
echo "still here" >"$X/silly"
exec 8<"$X/silly"
rm "$X/silly"
got=$(cat <&8)
hidden=$(ls -A "$ROOT" | grep -c '^\.dcfs-silly\.')
exec 8<&-
left=$(hidden_after_close)
check_all "${CHECKS[next]}: read '$got', $hidden hidden name while open, $left after close, gone from X: $([ -e "$X/silly" ] && echo no || echo yes)" \
	'[ "$got" = "still here" ] && [ $hidden = 1 ] && [ $left = 0 ] && [ ! -e "$X/silly" ]'
done_check

echo kept >"$X/target" && echo new >"$X/source"
exec 8<"$X/target"
mv "$X/source" "$X/target"
got=$(cat <&8)
now=$(cat "$X/target")
hidden=$(ls -A "$ROOT" | grep -c '^\.dcfs-silly\.')
exec 8<&-
left=$(hidden_after_close)
check_all "${CHECKS[next]}: the open file reads '$got', the name '$now', $hidden hidden name while open, $left after close" \
	'[ "$got" = kept ] && [ "$now" = new ] && [ $hidden = 1 ] && [ $left = 0 ]'
done_check

# the hidden name looked up through a mount whose cache trusts its answers
# long (the kernel asks every time): after the close removes it, the
# cache must not answer it
if mount_dcfs HN --entry-timeout 0 --attr-timeout 0 --ttl 600000 --neg-ttl 600000 \
	--ac 600000 --acdir 600000; then
	echo kept >"$TMP/HN/hn"
	exec 8<"$TMP/HN/hn"
	rm "$TMP/HN/hn"
	hn=$(ls -A "$ROOT" | grep '^\.dcfs-silly\.' | head -1)
	before=$(stat -c %s "$TMP/HN/$hn" 2>&1)
	exec 8<&-
	left=$(hidden_after_close)
	after=$(stat -c %s "$TMP/HN/$hn" 2>&1 | sed "s|$TMP|TMP|")
	unmount_dcfs HN
	check_all "${CHECKS[next]}: $hn while open: size $before; $left left after close; then: $after" \
		'[ -n "$hn" ] && [ "$before" = 5 ] && [ $left = 0 ] && [[ $after == *"No such file"* ]]'
else
	notok "${CHECKS[next]}: the mount failed"
	diag <"$TMP/HN.log"
fi
done_check

# the source removed on the server behind a mount that still holds it
# (long timeouts), so that the server refuses the RENAME after dcfs hid
# the open target
# (and two -o, both of which must reach the mount)
if mount_dcfs H --entry-timeout 60 --attr-timeout 60 --ttl 600000 --neg-ttl 600000 \
	--ac 600000 --acdir 600000 -o noatime -o noexec; then
	hopts=$(awk -v m="$TMP/H" '$2 == m { print $4 }' /proc/mounts)
	mkdir "$ROOT/refused"
	# both made on the server, then looked up through the mount (a create
	# through it would leave the cache without the name)
	echo kept >"$ROOT/refused/target" && echo new >"$ROOT/refused/source"
	exec 8<"$TMP/H/refused/target"
	stat "$TMP/H/refused/source" >/dev/null
	rm "$ROOT/refused/source"
	mv "$TMP/H/refused/source" "$TMP/H/refused/target" 2>"$TMP/refused.err"
	mrc=$?
	got=$(cat <&8)
	now=$(cat "$ROOT/refused/target" 2>/dev/null)
	hidden=$(ls -A "$ROOT/refused" | grep -c '^\.dcfs-silly\.')
	exec 8<&-
	unmount_dcfs H
	check_all "${CHECKS[next]}: mv exit $mrc ($(sed "s|$TMP|TMP|g" "$TMP/refused.err" | head -c 100)), the open file reads '$got', the server's target '$now', $hidden hidden names" \
		'[ $mrc != 0 ] && [ "$got" = kept ] && [ "$now" = kept ] && [ $hidden = 0 ]'
	done_check
	check_all "${CHECKS[next]}: the mount's options $hopts" \
		'[[ ,$hopts, == *,noatime,* ]] && [[ ,$hopts, == *,noexec,* ]]'
else
	notok "${CHECKS[next]}: the mount failed"
	diag <"$TMP/H.log"
	done_check
	notok "${CHECKS[next]}: the mount failed"
fi
done_check

# a working directory whose rmdir the server refused (not empty): a
# create and a lookup relative to it are answered as natively
mkdir -p "$X/cwd" && touch "$X/cwd/x"
(
	cd "$X/cwd" || exit 9
	rmdir "$X/cwd" 2>/dev/null
	echo "rmdir $?"
	touch made 2>&1 && echo "touch 0"
	cat missing 2>&1 | sed "s|.*: ||"
) >"$TMP/cwd.out"
got=$(tr '\n' ';' <"$TMP/cwd.out")
check_all "${CHECKS[next]}: $got" \
	'[ "$got" = "rmdir 1;touch 0;No such file or directory;" ] && [ -e "$ROOT/cwd/made" ]'
done_check

# --- a server restart ------------------------------------------------------------
# restart.bin: 64 KiB written and fsync'ed through X before the restart
head -c 65536 /dev/urandom >"$TMP/restart.want"
dd if="$TMP/restart.want" of="$X/restart.bin" bs=65536 conv=fsync status=none
src=$?
# names the mount has not looked up, for after the restart; and 8 lookups
# at once before it, so that dcfs keeps several connections idle, each
# one the restart breaks
for i in 1 2 3 4; do echo "fresh$i" >"$ROOT/fresh$i"; done
for i in 1 2 3 4 5 6 7 8; do echo "par$i" >"$ROOT/par$i"; done
for i in 1 2 3 4 5 6 7 8; do stat "$X/par$i" >/dev/null 2>&1 & done
wait
"$SERVER" stop "$STATE" >"$TMP/restart.out" 2>&1 &&
	"$SERVER" start "$ROOT" "$STATE" >>"$TMP/restart.out" 2>&1
restarted=$?
check_all "${CHECKS[next]} (dd exit $src, server back: exit $restarted)" \
	'[ $src = 0 ] && [ $restarted = 0 ] && cmp -s "$TMP/restart.want" "$ROOT/restart.bin"'
[ $restarted = 0 ] || diag <"$TMP/restart.out"
done_check
# one at a time: each the first use of a connection since the restart,
# or of one made after it
answered=0 errs=
for i in 1 2 3 4; do
	if got=$(cat "$X/fresh$i" 2>&1) && [ "$got" = "fresh$i" ]; then
		answered=$((answered + 1))
	else
		errs="$errs $got;"
	fi
done
check_all "${CHECKS[next]}: $answered of 4 answered${errs:+ (${errs# })}" '[ $answered = 4 ]'
done_check
right=0 failed_reads=0 wrong=0
for c in "$X" "$Y" "$X" "$Y"; do
	if cat "$c/restart.bin" >"$TMP/restart.got" 2>/dev/null; then
		if cmp -s "$TMP/restart.got" "$TMP/restart.want"; then
			right=$((right + 1))
		else
			wrong=$((wrong + 1))
		fi
	else
		failed_reads=$((failed_reads + 1))
	fi
	sleep 0.3
done
check_all "${CHECKS[next]}: $right right, $failed_reads failed, $wrong wrong" \
	'[ $wrong = 0 ] && [ $right -ge 1 ]'
done_check

# data written UNSTABLE, then the server restarts (a new write verifier):
# the server may have lost it, and fsync (through any descriptor of the
# file) and close must say so
coproc HOLD { "$CONFORM" holdwrite "$X/verf.bin"; }
# copies: bash closes HOLD's descriptors (and unsets HOLD_PID) as soon as it
# reaps the program, which can fall between reading its two last lines
hold_pid=$HOLD_PID
exec {hold_r}<&"${HOLD[0]}" {hold_w}>&"${HOLD[1]}"
read -r -t 10 line <&"$hold_r"
"$SERVER" stop "$STATE" >"$TMP/restart2.out" 2>&1 &&
	"$SERVER" start "$ROOT" "$STATE" >>"$TMP/restart2.out" 2>&1
restarted=$?
echo go >&"$hold_w"
read -r -t 30 r_other <&"$hold_r"
read -r -t 30 r_reader <&"$hold_r"
read -r -t 30 r_fsync <&"$hold_r"
read -r -t 30 r_close <&"$hold_r"
wait "$hold_pid" 2>/dev/null
exec {hold_r}<&- {hold_w}>&-
check_all "${CHECKS[next]}: '${line:-}', then '${r_other:-}', '${r_reader:-}', '${r_fsync:-}', '${r_close:-}' (server back: exit $restarted)" \
	'[ "${line:-}" = written ] && [ "${r_other:-}" = "fsync other: EIO" ] && [ "${r_reader:-}" = "close reader: ok" ] && [ "${r_fsync:-}" = "fsync: EIO" ] && [ "${r_close:-}" = "close: EIO" ] && [ $restarted = 0 ]'
done_check

# connections left idle across a restart, and then changes whose names
# were looked up before it (the kernel and the cache hold the answers),
# so that no lookup meets a dead connection first: a mkdir, a create, an
# unlink and a rename, one at a time.  After the write-verifier check:
# placed just before it, that check once saw its fsync succeed over
# NFSv4, as if the server's verifier had not changed across the restart
if mount_dcfs R; then
	for i in 1 2 3 4 5 6 7 8; do echo "idle$i" >"$ROOT/idle$i"; done
	for i in 1 2 3 4 5 6 7 8; do stat "$TMP/R/idle$i" >/dev/null 2>&1 & done
	wait
	stat "$TMP/R/new.d" "$TMP/R/new.f" "$TMP/R/idle2b" >/dev/null 2>&1
	"$SERVER" stop "$STATE" >"$TMP/restart4.out" 2>&1 &&
		"$SERVER" start "$ROOT" "$STATE" >>"$TMP/restart4.out" 2>&1
	restarted=$?
	errs=
	mkdir "$TMP/R/new.d" 2>>"$TMP/after.err" || errs="$errs mkdir"
	echo new >"$TMP/R/new.f" 2>>"$TMP/after.err" || errs="$errs create"
	rm "$TMP/R/idle1" 2>>"$TMP/after.err" || errs="$errs unlink"
	mv "$TMP/R/idle2" "$TMP/R/idle2b" 2>>"$TMP/after.err" || errs="$errs rename"
	said=${errs:+ failed:}${errs:- all done}
	check_all "${CHECKS[next]}:$said (server back: exit $restarted)" \
		'[ -z "$errs" ] && [ $restarted = 0 ] && [ -d "$ROOT/new.d" ] &&
		 [ "$(cat "$ROOT/new.f")" = new ] && [ ! -e "$ROOT/idle1" ] &&
		 [ "$(cat "$ROOT/idle2b")" = idle2 ]'
	[ -z "$errs" ] || diag <"$TMP/after.err"
	unmount_dcfs R
else
	notok "${CHECKS[next]}: the mount failed"
	diag <"$TMP/R.log"
fi
done_check

# --- a server in its grace period ------------------------------------------------
# Ganesha keeps its grace period after a restart only for clients that held
# NFSv4 state before it: G4, an NFSv4 mount, makes a file (an OPEN) first.
# In grace it answers a truncate (NFSv3 SETATTR of the size; NFSv4 too) and
# an NFSv4 create (OPEN) with JUKEBOX or GRACE: asked to send them again.
GRACE_S=10
if URL=$BASE?version=4 mount_dcfs G4 && mount_dcfs GR --entry-timeout 0 --attr-timeout 0; then
	echo held >"$TMP/G4/grace-held"
	echo 0123456789 >"$TMP/GR/grace.txt"
	echo 0123456789 >"$TMP/GR/grace-killed.txt"
	"$SERVER" stop "$STATE" >"$TMP/restart3.out" 2>&1 &&
		NFS_SERVER_GRACE_PERIOD=$GRACE_S "$SERVER" start "$ROOT" "$STATE" >>"$TMP/restart3.out" 2>&1
	restarted=$?
	# a caller killed while its truncate waits for the grace period: it
	# goes at once (within 3 s), as over Linux's client, and the file
	# keeps its size
	truncate -s 2 "$TMP/GR/grace-killed.txt" 2>/dev/null &
	kpid=$!
	disown "$kpid"	# its death by SIGKILL is expected: not reported
	sleep 1
	kill -0 "$kpid" 2>/dev/null && kwaited=yes || kwaited=no
	tk=$EPOCHREALTIME
	kill -9 "$kpid" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$kpid" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$kpid" 2>/dev/null && kgone=no || kgone=yes
	kms=$(ms_since "$tk")
	t0=$EPOCHREALTIME
	truncate -s 4 "$TMP/GR/grace.txt" 2>"$TMP/grace.err"
	trc=$?
	echo made >"$TMP/GR/grace-new" 2>>"$TMP/grace.err"
	crc=$?
	waited=$(ms_since "$t0")
	unmount_dcfs GR
	unmount_dcfs G4
	later=$(stat_of GR later)
	conns=$(stat_of GR connects)
	size=$(stat -c %s "$ROOT/grace.txt" 2>/dev/null)
	made=$(cat "$ROOT/grace-new" 2>/dev/null)
	# each call sent again takes an idle connection: fewer connections
	# made in all than calls sent again
	check_all "${CHECKS[next]}: truncate exit $trc, create exit $crc after $waited ms, $later RPCs sent again when asked, $conns connections made (server back: exit $restarted)" \
		'[ $restarted = 0 ] && [ $trc = 0 ] && [ $crc = 0 ] && [ "$size" = 4 ] && [ "$made" = made ] && [ "${later:-0}" -gt 0 ] && [ "${conns:-99}" -lt "$later" ]'
	diag <"$TMP/grace.err"
	[ $restarted = 0 ] || diag <"$TMP/restart3.out"
	done_check
	ksize=$(stat -c %s "$ROOT/grace-killed.txt" 2>/dev/null)
	check_all "${CHECKS[next]}: waiting after 1 s: $kwaited; gone $kms ms after SIGKILL: $kgone; its file's size $ksize (11: not truncated)" \
		'[ $restarted = 0 ] && [ $kwaited = yes ] && [ $kgone = yes ] && [ "$kms" -lt 3000 ] && [ "$ksize" = 11 ]'
else
	notok "${CHECKS[next]}: the mounts G4 and GR failed"
	diag <"$TMP/G4.log"
	diag <"$TMP/GR.log"
	done_check
	notok "${CHECKS[next]}: the mounts G4 and GR failed"
fi
done_check

# --- a small compile ---------------------------------------------------------------
mkdir -p "$X/proj/include" "$X/proj/src"
cat >"$X/proj/include/greet.h" <<'EOF'
#define GREETING "built over NFS"
const char *greet(void);
EOF
cat >"$X/proj/src/greet.c" <<'EOF'
#include "greet.h"
const char *greet(void) { return GREETING; }
EOF
cat >"$X/proj/src/main.c" <<'EOF'
#include <stdio.h>
#include "greet.h"
int main(void) { puts(greet()); return 0; }
EOF
(cd "$X/proj" && ${CC:-cc} -Iinclude -c src/greet.c -o greet.o &&
	${CC:-cc} -Iinclude -c src/main.c -o main.o && ${CC:-cc} greet.o main.o -o hello) \
	>"$TMP/cc.out" 2>&1
ccrc=$?
out=$("$X/proj/hello" 2>&1)
check_all "${CHECKS[next]}: cc exit $ccrc, it prints '$out'" \
	'[ $ccrc = 0 ] && [ "$out" = "built over NFS" ] && cmp -s "$X/proj/hello" "$ROOT/proj/hello"'
diag <"$TMP/cc.out"
done_check

# --- the end -------------------------------------------------------------------------
umounted=0
for m in A B1 B2; do unmount_dcfs "$m" && umounted=$((umounted + 1)); done
# a daemon exits after its statistics: the cache's teardown (and, in
# sanitizer builds, the leak check) take a moment
for ((i = 0; i < 100; i++)); do
	left=$(pgrep -f "dcfs nfs://[^ ]* $TMP/" | wc -l)
	[ "$left" = 0 ] && break
	sleep 0.05
done
MOUNTS=()
check_all "${CHECKS[next]}: $umounted of 3 unmounted, $left daemons left" '[ $umounted = 3 ] && [ $left = 0 ]'
done_check
reports=$(ls "$TMP"/sanitizer.* 2>/dev/null)
check "${CHECKS[next]}" [ -z "$reports" ]
[ -n "$reports" ] && cat $reports | diag
done_check

"$SERVER" stop "$STATE" >"$TMP/stop.out" 2>&1
rc=$?
started=0
check "${CHECKS[next]} (exit $rc)" [ $rc = 0 ]
done_check

t_finish
