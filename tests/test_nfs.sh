#!/usr/bin/env bash
# test_nfs.sh BUILD_DIR - libdcache over NFS, against a real NFS-Ganesha.
#
# Builds a tree of tricky cases in a temp dir, serves it with
# scripts/nfs-server.sh, and resolves a path list through BUILD_DIR/dcpath
# with the export (NFSv3) as its root.  The reference is the kernel on the
# exported directory itself: tests/dcpath/kref.c (openat2 with
# RESOLVE_IN_ROOT, then fstat: the inode or the errno), compared line by
# line, and dcpath's own --compare-dir, which checks the file type too.
# Then what the cache saves: resolving the same paths again sends no
# LOOKUP, and names missing from a listed directory are answered without
# one.  Last, the server stops and no ganesha.nfsd of ours is left.
# Where the server cannot run (not root, packages missing, an NFS server
# already registered here, dcpath built without libnfs) every check is a
# skip with the reason.  Output is TAP-like; exit 1 on failure.
set -uo pipefail
export LC_ALL=C

if [ $# -ne 1 ]; then echo "usage: $0 BUILD_DIR" >&2; exit 2; fi
BUILD=$1
TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(dirname "$TESTS")
DCPATH=$BUILD/dcpath
KREF=$BUILD/kref
SERVER=$TOP/scripts/nfs-server.sh
URL=nfs://127.0.0.1/export
MODES=(rcu global rwlock)
TMO=60                                  # seconds per program run

T_NAME=test_nfs
. "$TESTS/lib.sh"

# Every check below, by name, so that a machine that cannot run them
# counts each as a skip.
CHECKS=("the server starts")
for m in "${MODES[@]}"; do CHECKS+=("follow --mode $m matches the kernel" "--nofollow --mode $m matches the kernel"); done
CHECKS+=("--compare-dir: types and errnos match the kernel's"
	 "a second pass answers as the first"
	 "a cached stat of an unchanged path: 0 LOOKUP RPCs"
	 "missing names in a listed directory: no LOOKUP"
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
	notok "${CHECKS[next]}"; diag <"$TMP/start.out"
	done_check
	skip_rest "the server did not start"
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
