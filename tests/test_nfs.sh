#!/usr/bin/env bash
# test_nfs.sh BUILD_DIR [3|4] - libdcache over NFS, against a real
# NFS-Ganesha, over NFSv3 (the default) or NFSv4 (4: ?version=4).
#
# Builds a tree of tricky cases in a temp dir, serves it with
# scripts/nfs-server.sh, and resolves a path list through BUILD_DIR/dcpath
# with the export as its root.  The reference is the kernel on the
# exported directory itself: tests/dcpath/kref.c (openat2 with
# RESOLVE_IN_ROOT, then fstat: the inode or the errno), compared line by
# line, and dcpath's own --compare-dir, which checks the file type too.
# Then what the cache saves: resolving the same paths again sends no
# LOOKUP, and names missing from a listed directory are answered without
# one.  Then coherence across clients, as docs/nfs.md "What a second
# client sees" bounds it: past their TTL, entries of an unchanged tree
# cost GETATTRs and no LOOKUP; changes made in the exported directory
# behind the server's back (create, unlink, rename, chmod in a changed
# directory and in an unchanged one, a name in a listed directory) show in two clients once TTL + acdir has passed, and
# at once with --lookupcache none; a client without TTLs keeps the old
# answers (so the comparison can fail); across a server restart answers
# stay right or are errors.  dcpath's --compare-dir counts wrong answers
# (the kernel's on the exported directory at the moment of asking).
# Last, the server stops and no ganesha.nfsd of ours is left.
# Where the server cannot run (not root, packages missing, an NFS server
# already registered here, dcpath built without libnfs) every check is a
# skip with the reason.  Output is TAP-like; exit 1 on failure.
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
DCPATH=$BUILD/dcpath
KREF=$BUILD/kref
SERVER=$TOP/scripts/nfs-server.sh
URL=nfs://127.0.0.1/export
[ "$VERSION" = 4 ] && URL="$URL?version=4"
MODES=(rcu global rwlock)
TMO=60                                  # seconds per program run

T_NAME=test_nfs
[ "$VERSION" = 4 ] && T_NAME=test_nfs_v4
. "$TESTS/lib.sh"

# Every check below, by name, so that a machine that cannot run them
# counts each as a skip.
CHECKS=("the server starts")
for m in "${MODES[@]}"; do CHECKS+=("follow --mode $m matches the kernel" "--nofollow --mode $m matches the kernel"); done
CHECKS+=("--compare-dir: types and errnos match the kernel's"
	 "a second pass answers as the first"
	 "a cached stat of an unchanged path: 0 LOOKUP RPCs"
	 "missing names in a listed directory: no LOOKUP"
	 "an unchanged tree past its TTL: GETATTRs, no LOOKUP"
	 "--lookupcache none: a rename shows at once"
	 "--lookupcache positive: a new name shows after acdir"
	 "two clients see each change once TTL + acdir passed"
	 "a client without TTLs keeps the old answers"
	 "a server restart between passes: right answers or errors"
	 "no wrong answer over all passes"
	 "the server stops" "no ganesha.nfsd of ours is left")
next=0
# skip_rest WHY: every check not yet made is skipped, then the end
skip_rest() {
	local i

	for ((i = next; i < ${#CHECKS[@]}; i++)); do skip "${CHECKS[i]}: $1"; done
	t_finish
}
# done_check: one more of CHECKS made
done_check() { next=$((next + 1)); }

[ "$(id -u)" -eq 0 ] || skip_rest "needs root (ganesha.nfsd serves every user's files)"
[ -x "$DCPATH" ] || skip_rest "$DCPATH is not built"
if [[ $("$DCPATH" --root "$URL" . 2>&1) == *"NFS support was not built"* ]]; then
	skip_rest "dcpath was built without NFS support (no libnfs-dev)"
fi
for p in ganesha.nfsd rpcbind rpcinfo nfs-ls; do
	command -v "$p" >/dev/null || skip_rest "$p is not installed (scripts/deps.sh installs it)"
done
if rpcinfo -p 127.0.0.1 2>/dev/null | grep -qw nfs; then
	skip_rest "an NFS server is registered with rpcbind here already"
fi
if [ ! -x "$KREF" ] || [ "$TESTS/dcpath/kref.c" -nt "$KREF" ]; then
	${CC:-cc} -std=c11 -O2 -Wall -Wextra -o "$KREF" "$TESTS/dcpath/kref.c" ||
		skip_rest "the kernel reference tests/dcpath/kref.c does not compile"
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_nfs.XXXXXX") || exit 1
ROOT=$TMP/root STATE=$TMP/state
started=0
cleanup() {
	[ $started = 1 ] && "$SERVER" stop "$STATE" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

# --- the tree: made before the server starts --------------------------------
N255=$(printf 'N%.0s' {1..255}); N256=${N255}N
DEEP=deep$(printf '/d%s' {1..24})
mkdir -p "$ROOT"/a/b/c "$ROOT/$DEEP" "$ROOT"/big "$ROOT"/noexec/sub "$ROOT"/empty
echo f >"$ROOT"/f
echo f3 >"$ROOT"/a/b/c/f3
echo leaf >"$ROOT/$DEEP/leaf"
ln "$ROOT"/f "$ROOT"/a/hard
mkfifo "$ROOT"/fifo
: >"$ROOT/$N255"
echo secret >"$ROOT"/noexec/secret
chmod 0600 "$ROOT"/noexec		# no search permission for anyone
ln -s a/b "$ROOT"/lrel
ln -s /a/b/c/f3 "$ROOT"/labs
ln -s nope "$ROOT"/dangle
ln -s lloop "$ROOT"/lloop
ln -s .. "$ROOT"/a/up
ln -s f "$ROOT"/lfile
ln -s ../../f "$ROOT"/a/b/lup
(cd "$ROOT"/big && for i in $(seq 1 2000); do : >"n$i"; done)
# what the coherence checks change
mkdir -p "$ROOT"/co/big2
echo g >"$ROOT"/co/gone
echo r >"$ROOT"/co/r1
echo m >"$ROOT"/co/m
echo k >"$ROOT"/co/keep
chmod 0644 "$ROOT"/co/m
mkdir "$ROOT"/co2		# a chmod alone: the directory does not change
echo m >"$ROOT"/co2/m
chmod 0644 "$ROOT"/co2/m
(cd "$ROOT"/co/big2 && for i in $(seq 1 50); do : >"n$i"; done)
built=$EPOCHREALTIME

PATHS=(. / .. f a a/ a/b/c/f3 a/./b/../b/c/f3 "a//b///c" a/hard fifo fifo/
       "$N255" "$N256" "a/$N256" lrel lrel/c/f3 lrel/ labs labs/ dangle dangle/
       lloop lloop/ a/up a/up/f a/up/a/up/f lfile lfile/ f/x f/. a/b/lup
       missing missing/x a/missing a/b/c/missing "$DEEP/leaf" "$DEEP/nope"
       "$DEEP/leaf/x" noexec noexec/secret noexec/sub noexec/nope empty
       empty/x big big/n1 big/n2000 big/n2001 /../../f)

# --- the server -------------------------------------------------------------------------
t0=$EPOCHREALTIME
if "$SERVER" start "$ROOT" "$STATE" >"$TMP/start.out" 2>&1; then
	started=1
	ok "${CHECKS[next]} ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s)"
	done_check
else
	# a server that cannot start here (a root without the network
	# services ganesha needs) is a counted skip, its log shown
	diag <"$TMP/start.out"
	skip_rest "the server did not start or its export did not answer (log above)"
fi

# --- the answers, against the kernel's on the exported directory ---------------------------
# compare REF OUT: the first differing lines; status 0 when equal
compare() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" | head -20 | cut -c1-200
	return 1
}
for m in "${MODES[@]}"; do
	for nf in "" --nofollow; do
		timeout $TMO "$KREF" --root "$ROOT" $nf "${PATHS[@]}" >"$TMP/ref" 2>"$TMP/ref.err"
		rrc=$?
		timeout $TMO "$DCPATH" --root "$URL" --mode "$m" $nf "${PATHS[@]}" >"$TMP/out" 2>"$TMP/out.err"
		rc=$?
		desc=${CHECKS[next]}
		if ! compare "$TMP/ref" "$TMP/out" >"$TMP/diff"; then
			notok "$desc"; { head -8 "$TMP/out.err"; echo "< kernel, > dcpath over NFS"; cat "$TMP/diff"; } | diag
		elif [ $rc -ne $rrc ]; then
			notok "$desc: exit $rc, the kernel's $rrc"; diag <"$TMP/out.err"
		else
			ok "$desc (${#PATHS[@]} paths)"
		fi
		done_check
	done
done

timeout $TMO "$DCPATH" --root "$URL" --compare-dir "$ROOT" "${PATHS[@]}" >/dev/null 2>"$TMP/cmp.err"
rc=$?
check_all "${CHECKS[next]} (exit $rc)" '[ $rc -eq 1 ] && [ ! -s "$TMP/cmp.err" ]'
[ -s "$TMP/cmp.err" ] && diag <"$TMP/cmp.err"
done_check

# --- what the cache saves ------------------------------------------------------------------
# stat_of FILE PASS KEY: KEY's figure in the --stats line of pass PASS
stat_of() {
	sed -n "s/^dcpath: pass $2: .*[ ;]$3=\([0-9]*\).*/\1/p" "$1" | head -1
}
npaths=${#PATHS[@]}
timeout $TMO "$DCPATH" --root "$URL" --passes 2 --stats "${PATHS[@]}" >"$TMP/two" 2>"$TMP/two.err"
check_all "${CHECKS[next]}" 'cmp -s <(head -$npaths "$TMP/two") <(tail -n +$((npaths + 1)) "$TMP/two") && [ $(wc -l <"$TMP/two") -eq $((2 * npaths)) ]'
done_check
l1=$(stat_of "$TMP/two.err" 1 LOOKUP) l2=$(stat_of "$TMP/two.err" 2 LOOKUP)
g2=$(stat_of "$TMP/two.err" 2 GETATTR) r2=$(stat_of "$TMP/two.err" 2 READLINK)
check_all "${CHECKS[next]}: the first pass $l1, the second ${l2:-?} (GETATTR ${g2:-?}, READLINK ${r2:-?})" \
	'[ -n "$l1" ] && [ "$l1" -gt 0 ] && [ "$l2" = 0 ] && [ "$g2" = 0 ] && [ "$r2" = 0 ]'
diag <"$TMP/two.err"
done_check

# big/ holds 2000 names: listing it takes several READDIR pages.  The
# first missing name costs a LOOKUP (and big/ one), the listing answers
# the 19 others.
miss=()
for i in $(seq 1 20); do miss+=("big/absent$i"); done
timeout $TMO "$DCPATH" --root "$URL" --stats "${miss[@]}" >/dev/null 2>"$TMP/miss.err"
lk=$(stat_of "$TMP/miss.err" 1 LOOKUP) rd=$(stat_of "$TMP/miss.err" 1 READDIR)
ca=$(stat_of "$TMP/miss.err" 1 complete_answers)
check_all "${CHECKS[next]}: 20 absent names, ${lk:-?} LOOKUPs, ${rd:-?} READDIRs, ${ca:-?} answered from the listing" \
	'[ "$lk" = 2 ] && [ -n "$rd" ] && [ "$rd" -ge 2 ] && [ "$ca" = 19 ]'
diag <"$TMP/miss.err"
done_check

# --- coherence across clients -----------------------------------------------------------
TTL=300 ACDIR=100		# ms; ACDIR: the backend's default acdir_ms
# wrong_of ERR: the answers --compare-dir found different from the kernel's
wrong_of() { grep -c ': the cache says' "$1"; }
# sleep_past T0 MS: sleep until MS milliseconds after T0 (an EPOCHREALTIME)
sleep_past() {
	local s

	s=$(awk -v a="$1" -v ms="$2" -v b="$EPOCHREALTIME" 'BEGIN { d = a + ms / 1000 - b; printf "%.3f", (d > 0 ? d : 0) }')
	sleep "$s"
}
# A client: a dcpath with its own cache and connections, waiting for a
# line on its fifo between passes (--wait-stdin).
# client_start NAME ARGS...: started; client_next NAME: one more pass;
# client_lines NAME N: wait (10 s at most) until its output has N lines
client_start() {
	local name=$1 fd

	shift
	mkfifo "$TMP/$name.in"
	timeout $TMO "$DCPATH" --root "$URL" --wait-stdin --stats --compare-dir "$ROOT" "$@" \
		<"$TMP/$name.in" >"$TMP/$name.out" 2>"$TMP/$name.err" &
	eval "pid_$name=\$!"
	exec {fd}>"$TMP/$name.in"
	eval "fd_$name=\$fd"
}
client_next() { local fd="fd_$1"; echo >&"${!fd}"; }
client_lines() {
	local i

	for ((i = 0; i < 500; i++)); do
		[ "$(wc -l <"$TMP/$1.out")" -ge "$2" ] && return 0
		sleep 0.02
	done
	return 1
}
# client_end NAME: its exit status, once it has finished its passes
client_end() {
	local fd="fd_$1" pid="pid_$1"

	eval "exec ${!fd}>&-"
	wait "${!pid}"
}
total_wrong=0

# Directories more than a second old vouch for their answers (docs/nfs.md).
sleep_past "$built" 1100
timeout $TMO "$DCPATH" --root "$URL" --ttl $TTL --neg-ttl $TTL --passes 2 --repeat-every $((TTL + 100)) \
	--stats --compare-dir "$ROOT" "${PATHS[@]}" >"$TMP/ttl" 2>"$TMP/ttl.err"
rc=$?
w=$(wrong_of "$TMP/ttl.err") total_wrong=$((total_wrong + w))
l2=$(stat_of "$TMP/ttl.err" 2 LOOKUP) g2=$(stat_of "$TMP/ttl.err" 2 GETATTR)
d2=$(stat_of "$TMP/ttl.err" 2 READDIR) v2=$(stat_of "$TMP/ttl.err" 2 revalidations)
check_all "${CHECKS[next]}: ${v2:-?} expired entries checked with ${g2:-?} GETATTRs, ${l2:-?} LOOKUPs, ${d2:-?} READDIRs (exit $rc, $w wrong)" \
	'[ "$l2" = 0 ] && [ "$d2" = 0 ] && [ -n "$v2" ] && [ "$v2" -gt 0 ] && [ "$g2" -le "$v2" ] && [ $rc -eq 1 ] && [ $w = 0 ]'
diag <"$TMP/ttl.err"
done_check

CO=(co/new co/gone co/r1 co/r2 co/m co/big2/absent co/big2/n1 co/big2/absent2 co2/m)
client_start A --ttl $TTL --neg-ttl $TTL --passes 3 "${CO[@]}"
client_start B --ttl $TTL --neg-ttl $TTL --passes 3 "${CO[@]}"
client_start C --passes 2 "${CO[@]}"
client_start E --lookupcache positive --passes 2 co/new2
client_start F --lookupcache none --passes 2 co/keep co/kept
for c in A B C; do client_lines $c ${#CO[@]}; done
client_lines E 1; client_lines F 2
t0=$EPOCHREALTIME
echo n >"$ROOT"/co/new
rm "$ROOT"/co/gone
mv "$ROOT"/co/r1 "$ROOT"/co/r2
chmod 0600 "$ROOT"/co/m
chmod 0600 "$ROOT"/co2/m
: >"$ROOT"/co/big2/absent
echo n2 >"$ROOT"/co/new2
mv "$ROOT"/co/keep "$ROOT"/co/kept
client_next F
sleep_past "$t0" $((ACDIR + 50))
client_next E
sleep_past "$t0" $((TTL + ACDIR + 100))
for c in A B C; do client_next $c; done
client_lines A $((2 * ${#CO[@]})); client_lines B $((2 * ${#CO[@]}))
client_next A; client_next B	# a third pass at once: answered from the cache
for c in A B C E F; do client_end $c; eval "rc_$c=$?"; done

w=$(wrong_of "$TMP/F.err") total_wrong=$((total_wrong + w))
check_all "${CHECKS[next]} (pass 2: LOOKUP $(stat_of "$TMP/F.err" 2 LOOKUP), GETATTR $(stat_of "$TMP/F.err" 2 GETATTR); exit $rc_F, $w wrong)" \
	'[ $w = 0 ] && [ "$(sed -n 3p "$TMP/F.out")" = "co/keep	ENOENT" ] && [ $rc_F = 1 ]'
diag <"$TMP/F.err"
done_check
w=$(wrong_of "$TMP/E.err") total_wrong=$((total_wrong + w))
check_all "${CHECKS[next]} (exit $rc_E, $w wrong)" \
	'[ $w = 0 ] && [ $rc_E = 1 ] && [ "$(head -1 "$TMP/E.out")" = "co/new2	ENOENT" ] && [ "$(sed -n 2p "$TMP/E.out")" != "co/new2	ENOENT" ]'
diag <"$TMP/E.err"
done_check
wa=$(wrong_of "$TMP/A.err") wb=$(wrong_of "$TMP/B.err") total_wrong=$((total_wrong + wa + wb))
check_all "${CHECKS[next]}: A pass 2 LOOKUP $(stat_of "$TMP/A.err" 2 LOOKUP) GETATTR $(stat_of "$TMP/A.err" 2 GETATTR), pass 3 LOOKUP $(stat_of "$TMP/A.err" 3 LOOKUP) GETATTR $(stat_of "$TMP/A.err" 3 GETATTR) ($wa and $wb wrong)" \
	'[ $wa = 0 ] && [ $wb = 0 ] && [ $rc_A = 1 ] && [ $rc_B = 1 ] && [ "$(wc -l <"$TMP/A.out")" -eq $((3 * ${#CO[@]})) ] && cmp -s "$TMP/A.out" "$TMP/B.out" && ! cmp -s <(head -${#CO[@]} "$TMP/A.out") <(sed -n "$((${#CO[@]} + 1)),$((2 * ${#CO[@]}))p" "$TMP/A.out")'
cat "$TMP/A.err" "$TMP/B.err" | diag
done_check
wc_=$(wrong_of "$TMP/C.err")
check_all "${CHECKS[next]}: $wc_ of 7 changes unseen (exit $rc_C)" '[ "$wc_" = 7 ] && [ $rc_C = 3 ]'
done_check

# The server stops and starts again between two passes of a client: its
# handles survive (FSAL VFS handles are the file system's), connections
# are made anew.  An error is allowed, a wrong answer is not.
client_start D --ttl 200 --neg-ttl 200 --passes 2 "${PATHS[@]}"
client_lines D $npaths
"$SERVER" stop "$STATE" >"$TMP/restart.out" 2>&1 &&
	"$SERVER" start "$ROOT" "$STATE" >>"$TMP/restart.out" 2>&1
restarted=$?
sleep 0.3
client_next D
client_end D
rc=$?
errs=$(grep -cE ': the cache says E(STALE|IO|TIMEDOUT|CONNREFUSED|CONNRESET|AGAIN),' "$TMP/D.err")
w=$(($(wrong_of "$TMP/D.err") - errs)) total_wrong=$((total_wrong + w))
check_all "${CHECKS[next]}: $((2 * npaths - errs - w)) right, $errs errors, $w wrong; pass 2 LOOKUP $(stat_of "$TMP/D.err" 2 LOOKUP) GETATTR $(stat_of "$TMP/D.err" 2 GETATTR) connects $(stat_of "$TMP/D.err" 2 connects) retries $(stat_of "$TMP/D.err" 2 retries)" \
	'[ $restarted = 0 ] && [ $w = 0 ] && [ "$(wc -l <"$TMP/D.out")" -eq $((2 * npaths)) ]'
{ cat "$TMP/restart.out"; cat "$TMP/D.err"; } | diag
done_check
[ $restarted = 0 ] || skip_rest "the server did not start again"

check_all "${CHECKS[next]}: $total_wrong" '[ $total_wrong = 0 ]'
done_check

# --- stopping ----------------------------------------------------------------------------
pid=$(cat "$STATE/ganesha.pid" 2>/dev/null)
t0=$EPOCHREALTIME
"$SERVER" stop "$STATE" >"$TMP/stop.out" 2>&1
rc=$?
started=0
check_all "${CHECKS[next]} (exit $rc, $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s)" '[ $rc -eq 0 ]'
[ -s "$TMP/stop.out" ] && diag <"$TMP/stop.out"
done_check
# a zombie (state Z) has exited: where nothing reaps orphans it stays listed
left=""
for p in $(pgrep -x ganesha.nfsd); do
	st=$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && grep -qF "$STATE" "/proc/$p/cmdline" 2>/dev/null && left+=" $p"
done
check_all "${CHECKS[next]} (pid ${pid:-?})" '[ -z "$left" ]'
[ -n "$left" ] && echo "still running:$left" | diag
done_check

t_finish
