#!/usr/bin/env bash
# test_tools.sh BUILD_DIR - what BUILD_DIR/dcbench and BUILD_DIR/dcpath
# tell their user: refusals, messages, exit statuses, help, version, and
# the manual pages.
#
#  - dcbench import refuses, with its reason and exit 1, what no trace can
#    be made of (empty, not strace, strace without -f, mostly malformed),
#    names a log or a trace place it cannot use, and imports real logs;
#  - dcbench compare on a trace too short to time says so, judges nothing
#    and exits 3; on the shipped kernel-build trace (when it is there) each
#    goal line names what it measured; every mode's report has its time in
#    the cache and what that holds; on a trace with no lookups every goal
#    line is there, "not measured" with the reason; replay's JSON has the
#    time in the cache (schema_version 2); a crafted trace whose renames
#    would copy millions of names is refused with the reason;
#  - --version, --help of every command; every long option each parser
#    accepts (found in the sources with grep) is in its --help and in the
#    manual page; unknown options give a message, the usage and exit 2;
#  - every man/*.1 and man/*.3 formats without a warning.
#
# Needs no root.  Output is TAP-like; exit 1 on failure.
set -uo pipefail
export LC_ALL=C

if [ $# -ne 1 ]; then echo "usage: $0 BUILD_DIR" >&2; exit 2; fi
BUILD=$1
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DCBENCH=$BUILD/dcbench
DCPATH=$BUILD/dcpath
SNIPPETS=$TOP/tests/data/strace
TMO=120                                 # seconds per program run

T_NAME=test_tools
. "$TOP/tests/lib.sh"

for p in "$DCBENCH" "$DCPATH"; do
    [ -x "$p" ] || { notok "$p exists"; t_finish; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/test_tools.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

# run PROG ARGS...: stdout in $TMP/out, stderr in $TMP/err, status in RC.
run() {
    timeout $TMO "$@" >"$TMP/out" 2>"$TMP/err" </dev/null
    RC=$?
}

# expect DESC WANT_RC STDERR_ERE PROG ARGS...: exit status and message.
expect() {
    local desc=$1 want=$2 ere=$3; shift 3
    run "$@"
    if [ "$RC" -ne "$want" ]; then
        notok "$desc: exit $RC, want $want"; diag <"$TMP/err"
    elif [ -n "$ere" ] && ! grep -qE -- "$ere" "$TMP/err"; then
        notok "$desc: stderr lacks /$ere/"; diag <"$TMP/err"
    else
        ok "$desc (exit $RC)"
    fi
}

# --- import: real logs ------------------------------------------------------------
for log in "$SNIPPETS"/*.txt "$TOP/tests/fuzz/corpus_import/seed_real_head.txt"; do
    [ -e "$log" ] || continue
    rm -f "$TMP/t.trace"
    expect "import $(basename "$log")" 0 "^trace: " "$DCBENCH" import "$log" -o "$TMP/t.trace"
    [ -s "$TMP/t.trace" ] || notok "import $(basename "$log"): no trace written"
done
# a live log, where strace can trace here
if command -v strace >/dev/null &&
   strace -f -y -qq -e trace=%file,%process,chdir,fchdir -o "$TMP/live.log" \
       sh -c 'ls / >/dev/null; cat /dev/null' 2>"$TMP/strace.err"; then
    expect "import of a fresh strace -f -y log" 0 "" "$DCBENCH" import "$TMP/live.log" -o "$TMP/live.trace"
    strace -y -qq -e trace=%file,%process,chdir,fchdir -o "$TMP/nof.log" ls / >/dev/null 2>&1
    expect "import of a fresh log made without -f: refused" 1 "without -f.*strace -f -y" \
        "$DCBENCH" import "$TMP/nof.log" -o "$TMP/nof.trace"
else
    skip "no strace that can trace here: $(head -1 "$TMP/strace.err" 2>/dev/null)"
fi

# --- import: what it must refuse ------------------------------------------------------
: >"$TMP/empty.log"
printf '\n \n\t\n' >"$TMP/blank.log"
sed -E 's/^[0-9]+ +//' "$SNIPPETS/fork.txt" >"$TMP/nopid.log"
{ echo '1 stat("/a", 0x1) = 0'; echo '1 stat("/b", 0x1) = 0'
  echo 'tcpmux 1/tcp'; echo 'echo 7/tcp'; echo 'http 80/tcp www'; } >"$TMP/most.log"
printf 'tcpmux\t\t1/tcp\t\t\t# TCP port service multiplexer\nhttp\t\t80/tcp\t\twww\n' >"$TMP/services"
expect "import of an empty log: refused" 1 "empty log" \
    "$DCBENCH" import "$TMP/empty.log" -o "$TMP/x.trace"
expect "import of blank lines: refused" 1 "empty log: 3 lines, all blank" \
    "$DCBENCH" import "$TMP/blank.log" -o "$TMP/x.trace"
expect "import of binary bytes (an ELF file): refused" 1 "not an strace log" \
    "$DCBENCH" import "$DCPATH" -o "$TMP/x.trace"
expect "import of a services file: refused" 1 "not an strace log" \
    "$DCBENCH" import "$TMP/services" -o "$TMP/x.trace"
if [ -r /etc/services ]; then
    expect "import of /etc/services: refused" 1 "not an strace log" \
        "$DCBENCH" import /etc/services -o "$TMP/x.trace"
fi
expect "import of strace output without pids: refused, hint at -f" 1 \
    "lines have no process id in front: strace ran without -f.*capture with strace -f -y" \
    "$DCBENCH" import "$TMP/nopid.log" -o "$TMP/x.trace"
expect "import of a mostly malformed log: refused, with counts and the limit" 1 \
    "3 of 5 lines are malformed \(the first is line 3\); more than 50%" \
    "$DCBENCH" import "$TMP/most.log" -o "$TMP/x.trace"
expect "import of a trace (not a log): refused" 1 "not an strace log" \
    "$DCBENCH" import "$TMP/t.trace" -o "$TMP/x.trace"
if [ -e "$TMP/x.trace" ]; then notok "refused imports left $TMP/x.trace"; else ok "refused imports left no trace"; fi
echo old >"$TMP/keep.trace"
run "$DCBENCH" import "$TMP/empty.log" -o "$TMP/keep.trace"
if echo old | cmp -s - "$TMP/keep.trace"; then ok "a refused import spares the trace there"; else notok "a refused import clobbered the trace there"; fi

# --- import: files and options it cannot use ----------------------------------------------
expect "import of a missing file" 1 "nonexistent.log: No such file" \
    "$DCBENCH" import "$TMP/nonexistent.log" -o "$TMP/x.trace"
expect "import of a directory" 1 "is a directory" \
    "$DCBENCH" import "$TMP" -o "$TMP/x.trace"
expect "import -o into a missing directory" 1 "cannot write the trace to .*/nodir/x.trace: No such file" \
    "$DCBENCH" import "$SNIPPETS/fork.txt" -o "$TMP/nodir/x.trace"
expect "import -o a directory" 1 "cannot write the trace to .*: Is a directory" \
    "$DCBENCH" import "$SNIPPETS/fork.txt" -o "$TMP"
cp "$SNIPPETS/fork.txt" "$TMP/inplace.log"
expect "import -o the log itself: refused, the log kept" 1 "would overwrite the log it is read from" \
    "$DCBENCH" import "$TMP/inplace.log" -o "$TMP/inplace.log"
cmp -s "$SNIPPETS/fork.txt" "$TMP/inplace.log" || notok "import -o the log itself: the log was overwritten"
expect "import with a bad option" 2 "unknown option '--bogus'" \
    "$DCBENCH" import "$SNIPPETS/fork.txt" --bogus -o "$TMP/x.trace"
expect "import without -o" 2 "-o TRACE" "$DCBENCH" import "$SNIPPETS/fork.txt"
expect "import -o without a value" 2 "needs a file name" "$DCBENCH" import "$SNIPPETS/fork.txt" -o
expect "import of nothing" 2 "which strace log" "$DCBENCH" import -o "$TMP/x.trace"
expect "capture -o into a missing directory: fails before the command runs" 1 \
    "cannot write the trace to" "$DCBENCH" capture -o "$TMP/nodir/x.trace" -- touch "$TMP/ran"
[ -e "$TMP/ran" ] && notok "capture ran its command, then found it could not write the trace"
run "$DCBENCH" capture -o "$TMP/cap.trace" --keep-log "$TMP/cap.log" -- touch "$TMP/ran"
if [ "$RC" -ne 0 ]; then
    notok "capture --keep-log: exit $RC"; diag <"$TMP/err"
elif ! grep -qE '^[0-9]+ +execve\(' "$TMP/cap.log" 2>/dev/null; then
    notok "capture --keep-log: the strace log was not kept ($TMP/cap.log)"; diag <"$TMP/err"
else
    ok "capture --keep-log: the trace written and the strace log kept"
fi
# a command's own exit status 127 (a shell's "not found") is the
# command's failure, not strace's: the trace is written and the status said
rm -f "$TMP/c127.trace"
expect "capture of a command exiting 127: the trace written, its status said" 1 \
    "exited with status 127; the trace was written" \
    "$DCBENCH" capture -o "$TMP/c127.trace" -- sh -c 'true; exit 127'
[ -s "$TMP/c127.trace" ] || notok "capture of a command exiting 127: no trace written"
expect "capture of a program that does not exist: said, no trace" 1 \
    "strace recorded nothing .*the command did not run" \
    "$DCBENCH" capture -o "$TMP/cnone.trace" -- "$TMP/no-such-program"
[ -e "$TMP/cnone.trace" ] && notok "capture of a program that does not exist left a trace"

# --- netdelay: what it refuses, with the reason ---------------------------------------------
if [ -x "$BUILD/netdelay" ]; then
    expect "netdelay without --delay-us" 2 "the first argument is --delay-us" "$BUILD/netdelay" 1:2
    expect "netdelay with a bad delay" 2 "takes 0 to 1000000 microseconds, not 'x'" \
        "$BUILD/netdelay" --delay-us x 40001:40002
    expect "netdelay with a bad port pair" 2 "'40001:x' is no LISTEN_PORT:TARGET_PORT" \
        "$BUILD/netdelay" --delay-us 5 40001:x
    expect "netdelay with 9 port pairs: refused before it listens" 2 "at most 8 port pairs" \
        "$BUILD/netdelay" --delay-us 5 $(for i in $(seq 1 9); do echo "$((40000 + 2 * i)):$((40001 + 2 * i))"; done)
    expect "netdelay --help: the synopsis, exit 0" 0 "" "$BUILD/netdelay" --help
else
    skip "netdelay: $BUILD/netdelay is not built"
fi

# --- micro and compare: trees and plots they cannot use -------------------------------------------
printf 'f\ta\t1\nf\tb\t2\n' >"$TMP/nodirs.tsv"
expect "micro mixed-1 on a tree with no directory below its root: refused, said" 1 \
    "mixed-1: the tree has no directory below its root" \
    "$DCBENCH" micro --scenarios mixed-1 --impls rcu --threads 1 --runs 1 --ms 1 --no-bytes \
    --no-updates --tree "$TMP/nodirs.tsv"
if command -v gnuplot >/dev/null; then
    # (too short to time alone, it would exit 3)
    run "$DCBENCH" import "$SNIPPETS/fork.txt" -o "$TMP/plot.trace"
    expect "compare --plot into a missing directory: gnuplot's failure fails the command" 1 \
        "gnuplot failed; no plot drawn" \
        "$DCBENCH" compare "$TMP/plot.trace" --threads 1 --runs 1 --modes rcu --plot "$TMP/nodir/x.svg"
else
    skip "compare --plot into a missing directory: gnuplot is not installed"
fi

# --- compare: a mode that answered wrong is compared with nothing -------------------------------
# one path's outcome recorded wrong (absent, then there, with no change
# between): every mode mismatches once, so no comparison or goal is made
printf '%s\n' '500 openat(AT_FDCWD</src>, "Makefile", O_RDONLY) = 3</src/Makefile>' \
    '500 stat("/src/Makefile", 0x7ffe00000001) = -1 ENOENT (No such file or directory)' \
    '500 stat("/src/Makefile", {st_mode=S_IFREG|0644, st_size=1, ...}) = 0' >"$TMP/wrong.log"
run "$DCBENCH" import "$TMP/wrong.log" -o "$TMP/wrong.trace"
"$DCBENCH" compare "$TMP/wrong.trace" --threads 1,2 --runs 1 --modes rcu,global --json \
    >"$TMP/wrong.json" 2>"$TMP/wrong.err"
rc=$?
if [ $rc = 1 ] && grep -q '"not_same_work": true' "$TMP/wrong.json" &&
   ! grep -q '"not_same_work": false' "$TMP/wrong.json" &&
   ! grep -Eq '"less_time_pct": [0-9-]' "$TMP/wrong.json" &&
   grep -q 'rcu lookups/s at 2 threads vs 1 thread: not measured (rcu had mismatches' "$TMP/wrong.err"; then
    ok "compare with mismatches: no comparison made, goals not measured, exit 1"
else
    notok "compare with mismatches: exit $rc, or a comparison or goal made"; diag <"$TMP/wrong.err"
fi

# --- compare and replay: too short to time ----------------------------------------------------
run "$DCBENCH" import "$SNIPPETS/fork.txt" -o "$TMP/fork.trace"
run "$DCBENCH" compare "$TMP/fork.trace" --threads 1,2 --runs 1
if [ "$RC" -ne 3 ]; then
    notok "compare of a short trace: exit $RC, want 3"; diag <"$TMP/err"
elif ! grep -qE '^  trace too short to time: [0-9]+ ops, [0-9.]+ ms a run .*; goals not judged$' "$TMP/out"; then
    notok "compare of a short trace: no 'trace too short to time ... goals not judged'"; diag <"$TMP/out"
elif grep -q 'NOT MET' "$TMP/out"; then
    notok "compare of a short trace judged goals"; grep 'NOT MET' "$TMP/out" | diag
else
    ok "compare of a short trace: too short to time, goals not judged (exit 3)"
fi
run "$DCBENCH" compare "$TMP/fork.trace" --threads 1 --runs 1 --json
if [ "$RC" -eq 3 ] && grep -q '"goals_judged": *false' "$TMP/out"; then
    ok "compare --json of a short trace: goals_judged false"
else
    notok "compare --json of a short trace: exit $RC, goals_judged not false"; diag <"$TMP/out"
fi
run "$DCBENCH" replay "$TMP/fork.trace" --runs 1
if [ "$RC" -eq 0 ] && grep -q '^trace too short to time: ' "$TMP/out"; then
    ok "replay of a short trace: said too short to time (exit 0)"
else
    notok "replay of a short trace: exit $RC, or not said too short"; diag <"$TMP/out"
fi
# a crafted log: a directory of 1,200 names renamed 1,200 times, each rename
# copying the names below it in the replay's model (1.44 million from 2,402
# lines): refused with the reason, where it would grow without bound
{
    echo '700 mkdir("/d", 0755) = 0'
    for i in $(seq 1 1200); do echo "700 mkdir(\"/d/f$i\", 0755) = 0"; done
    echo '700 rename("/d", "/r1") = 0'
    for i in $(seq 1 1199); do echo "700 rename(\"/r$i\", \"/r$((i + 1))\") = 0"; done
    echo '700 +++ exited with 0 +++'
} >"$TMP/chain.log"
run "$DCBENCH" import "$TMP/chain.log" -o "$TMP/chain.trace"
expect "replay of renames that would copy too many names: refused" 1 \
    "the renames of directories in the trace copy more than [0-9]+ names \(line [0-9]+\): too many to replay" \
    "$DCBENCH" replay "$TMP/chain.trace" --runs 1
# cache_lines FILE: each mode's line in a compare or replay report is
# followed by its time in the cache, saying what that holds; the count of
# modes reported, or "bad" naming the first line that is not.
cache_lines() {
    awk '/^(null|rcu|global|rwlock) +Elapsed: / { n++; mode = $1; want = 1; next }
         want && mode == "null" && /^        in cache [0-9.]+s( \(sd [0-9.]+s\))?: the clock stamps alone, no cache; every mode.s figure holds as much$/ { want = 0; next }
         want && mode != "null" && /^        in cache [0-9.]+s( \(sd [0-9.]+s\))?: wall time inside cache calls, lock waits in, memfs updates out$/ { want = 0; next }
         want { print "bad: " mode ": " $0; failed = 1; exit }
         END { if (failed) exit; if (want) print "bad: " mode ": nothing after it"; else print n + 0 }' "$1"
}
# a trace with no lookups: a symlink with an empty target answers ENOENT
# before any lookup, so the cache is never called
printf '%s\n' '500 symlink("", "/tmp/a") = -1 ENOENT (No such file or directory)' \
    '500 symlink("", "/tmp/b") = -1 ENOENT (No such file or directory)' \
    '500 exit_group(0) = ?' >"$TMP/nolook.log"
run "$DCBENCH" import "$TMP/nolook.log" -o "$TMP/nolook.trace"
run "$DCBENCH" compare "$TMP/nolook.trace" --threads 1,2 --runs 1
nlines=$(cache_lines "$TMP/out")
if [ "$RC" -ne 3 ] || [ "$nlines" != 8 ]; then
    notok "compare: every mode's time in the cache and what it holds (exit $RC, $nlines)"; diag <"$TMP/out"
else
    ok "compare: every mode's time in the cache and what it holds"
fi
goals=$(sed -n '/^goals/,$p' "$TMP/out" | grep -E '^  rcu (time in the cache|lookups/s)')
want='^  rcu (time in the cache at [12] threads? vs global|lookups/s at 2 threads vs 1 thread): not measured \(rcu made no lookups at [12] threads?[^)]*\)$'
if [ "$(printf '%s\n' "$goals" | grep -cE "$want")" -ne 3 ]; then
    notok "compare of a trace with no lookups: each timing goal not measured, with the reason"
    sed -n '/^goals/,$p' "$TMP/out" | diag
else
    ok "compare of a trace with no lookups: each timing goal not measured, with the reason"
fi
run "$DCBENCH" compare "$TMP/nolook.trace" --threads 4 --runs 1 --modes rcu
if [ "$(grep -c ': not measured (rcu was not run at [12] threads\?)$' "$TMP/out")" -eq 3 ]; then
    ok "compare without 1 and 2 threads: each timing goal not measured, with the reason"
else
    notok "compare without 1 and 2 threads: goals not each said not measured"; sed -n '/^goals/,$p' "$TMP/out" | diag
fi
run "$DCBENCH" replay "$TMP/fork.trace" --runs 2 --mode global --json
nlines=$(cache_lines "$TMP/err")
if [ "$RC" -eq 0 ] && [ "$nlines" = 1 ] && grep -q '"schema_version": 2' "$TMP/out" &&
   grep -qE '"cache_s": [0-9.e-]+,' "$TMP/out" && grep -q '"cpu_over_null_s": null' "$TMP/out"; then
    ok "replay measures the time in the cache (JSON schema_version 2)"
else
    notok "replay: exit $RC, no time in the cache measured, or not schema_version 2 ($nlines)"; diag <"$TMP/out"
fi
# goal lines on a trace long enough: the shipped kernel build
KLOG=$TOP/data/linux-6.1-tinyconfig-j2.strace.xz
if [ ! -r "$KLOG" ]; then
    notok "goal lines: $KLOG is missing (it ships with the source)"
else
    run "$DCBENCH" import "$KLOG" -o "$TMP/k.trace"
    [ "$RC" -eq 0 ] && ok "import of the shipped kernel-build log" || { notok "import of $KLOG: exit $RC"; diag <"$TMP/err"; }
    run "$DCBENCH" compare "$TMP/k.trace" --threads 1,2 --runs 1 --modes rcu,global
    goals=$(sed -n '/^goals/,$p' "$TMP/out" | tail -n +2)
    want='^  ((mismatches in every mode and run: [0-9]+ \(goal 0\)|rcu time in the cache at [0-9]+ threads? \([0-9]+ cop(y|ies)\) vs global: [0-9.]+x \([0-9.]+s vs [0-9.]+s; goal <= [0-9.]+x\)|rcu lookups/s at [0-9]+ threads? \([0-9]+ cop(y|ies)\) vs [0-9]+ threads? \([0-9]+ cop(y|ies)\): [0-9.]+x \([0-9.]+[kM]?/s vs [0-9.]+[kM]?/s; goal >= [0-9.]+x\)): (met|NOT MET)|rcu lookups/s at (8|16|32) threads vs its best: not measured \(rcu was not run at (8|16|32) threads\))$'
    bad=$(printf '%s\n' "$goals" | grep -vE "$want")
    if [ "$RC" -gt 1 ] || [ "$(printf '%s\n' "$goals" | grep -c .)" -ne 7 ] || [ -n "$bad" ]; then
        notok "compare goal lines name what was measured (exit $RC)"; printf '%s\n' "$goals" | diag
    else
        ok "compare goal lines name what was measured"
    fi
    if grep -qx 'goals (time in the cache: wall time inside cache calls, lock waits in, memfs updates out, summed over threads; medians of 1 run):' "$TMP/out" &&
       [ "$(cache_lines "$TMP/out")" = 6 ]; then
        ok "compare of the kernel build: the goals and every mode say what the time in the cache holds"
    else
        notok "compare of the kernel build: goals or a mode do not say what the time in the cache holds"
        { grep '^goals' "$TMP/out"; cache_lines "$TMP/out"; } | diag
    fi
    # each mode's share of lookups answered by one probe of the whole
    # path: rcu's above 0, global's 0 (it has no path table)
    probes=$(awk '/^(rcu|global|rwlock) /{m=$1} /one-probe/{for(i=1;i<=NF;i++) if($i=="one-probe") print m, $(i+1)}' "$TMP/out" | tr '\n' ' ')
    if printf '%s\n' "$probes" | grep -qE '^rcu [1-9][0-9]?\.[0-9]% global 0\.0% rcu [1-9][0-9]?\.[0-9]% global 0\.0% $'; then
        ok "compare reports each mode's one-probe share (rcu's above 0, global's 0): $probes"
    else
        notok "compare's one-probe shares, rcu then global at 1 and 2 threads, were: $probes"
    fi
    # above the cores: rcu's lookups/s at 8 threads over its best in the
    # run (here the 2-thread one, or the 8-thread one itself), from the
    # JSON's figures; at 8 threads alone, no run at or below the cores
    if ! command -v python3 >/dev/null; then
        skip "compare: rcu at 8 threads over its best (no python3)"
    else
    run "$DCBENCH" compare "$TMP/k.trace" --threads 2,8 --runs 1 --modes rcu --json
    line=$(grep '^  rcu lookups/s at 8 threads' "$TMP/err")
    want=$(python3 -c '
import json, sys
r = {x["threads"]: x["lookups_per_s"] for x in json.load(open(sys.argv[1]))["results"] if x["mode"] == "rcu"}
print("%.2fx" % (r[8] / max(r.values())))' "$TMP/out" 2>/dev/null)
    if [ "$RC" -le 1 ] && [ -n "$want" ] &&
       printf '%s\n' "$line" | grep -qE "^  rcu lookups/s at 8 threads \(8 copies\) vs its best, at (2|8) threads \((2|8) copies\): $want \([0-9.]+[kM]?/s vs [0-9.]+[kM]?/s; goal >= 0\.90x\): (met|NOT MET)$"; then
        ok "compare: rcu at 8 threads over its best, $want"
    else
        notok "compare: rcu at 8 threads over its best: exit $RC, want $want, line: $line"
    fi
    fi
    if [ "$(nproc)" -ge 8 ]; then
        skip "compare at 8 threads alone: $(nproc) cores, so 8 threads are not above them"
    else
        run "$DCBENCH" compare "$TMP/k.trace" --threads 8 --runs 1 --modes rcu
        if grep -qE '^  rcu lookups/s at 8 threads vs its best: not measured \(rcu was not run at [0-9]+ threads? or fewer, the cores\)$' "$TMP/out"; then
            ok "compare: rcu above the cores alone is not judged against itself"
        else
            notok "compare at 8 threads alone: exit $RC, $(grep 'at 8 threads' "$TMP/out")"
        fi
    fi
fi

# --- version ----------------------------------------------------------------------------------
version=""
for prog in dcbench dcpath; do
    run "$BUILD/$prog" --version
    if [ "$RC" -eq 0 ] && grep -qxE "$prog \(dcache\) [0-9]+\.[0-9]+\.[0-9]+.*" "$TMP/out"; then
        ok "$prog --version: $(cat "$TMP/out")"
        v=$(sed 's/.*(dcache) //' "$TMP/out")
        [ -n "$version" ] && [ "$v" != "$version" ] && notok "dcbench and dcpath report versions $version and $v"
        version=$v
    else
        notok "$prog --version: exit $RC, printed '$(head -c 200 "$TMP/out")'"; diag <"$TMP/err"
    fi
done

hversion=$(sed -n 's/^#define DC_VERSION_STRING[^"]*"\(.*\)"/\1/p' "$TOP/include/dcache.h")
if [ -n "$hversion" ] && [ -n "$version" ]; then
    if [ "$version" = "$hversion" ]; then ok "--version is the header's $hversion"; else notok "--version says $version, include/dcache.h $hversion"; fi
fi

# --- help and options, from the sources ---------------------------------------------------------
# options FILE: "COMMAND OPTION" for every long option the file's parsers take:
# cli_opt(..., "NAME", ...), getopt's
# { "NAME", ..._argument } and strcmp(ARG, "--NAME").  The command is that
# of the function it is in (cmd_NAME, main: dcbench itself), else the file's
# (dcb_NAME_main, or dcpath); a helper NAME_opt's options are those of the
# commands that call it (join_helpers).
# join_helpers: options' output with each "@call CMD HELPER" replaced by
# CMD's lines for every "=helper HELPER OPTION"
join_helpers() {
    awk '$1 == "=helper" { h[$2] = h[$2] " " $3; next }
         $1 == "@call" { call[++n] = $2 " " $3; next }
         { print }
         END {
             for (i = 1; i <= n; i++) {
                 split(call[i], c, " ")
                 k = split(h[c[2]], o, " ")
                 for (j = 1; j <= k; j++)
                     print c[1], o[j]
             }
         }'
}
options() {
    local f=$1 fcmd
    fcmd=$(grep -oE '^int dcb_[a-z]+_main\(' "$f" | sed -E 's/^int dcb_([a-z]+)_main\(/\1/' | head -1)
    case $f in */dcpath.c) fcmd=dcpath ;; esac
    awk -v fcmd="$fcmd" -v file="$f" '
        /^[a-z][^;]*[a-z_0-9]\(/ && $0 !~ /;[ \t]*$/ && $0 !~ /^(if|for|while|switch|return)/ {
            s = $0
            if (match(s, /[a-z_][a-z0-9_]*\(/))
                fn = substr(s, RSTART, RLENGTH - 1)
        }
        {
            s = $0
            # a command calling a helper that scans options (NAME_opt,
            # in this file or another): joined to its options below
            if (fn ~ /^cmd_/) {
                t = $0
                while (match(t, /[a-z_]+_opt\(/)) {
                    h = substr(t, RSTART, RLENGTH - 1)
                    t = substr(t, RSTART + RLENGTH)
                    if (h != "cli_opt")
                        print "@call", substr(fn, 5), h
                }
            }
            while (match(s, /((cli_|[^_a-z])opt\([^,()]*,? *argc, argv, &?i, |[{] *|strcmp\([a-z]+(\[[a-z0-9]+\])?, )"(--)?[a-z][a-z0-9-]*"(, *(no|required|optional)_argument)?/)) {
                m = substr(s, RSTART, RLENGTH)
                s = substr(s, RSTART + RLENGTH)
                if (m ~ /^[{]/ && m !~ /_argument$/)
                    continue
                if (m ~ /^strcmp/ && m !~ /"--/)
                    continue
                sub(/"(, *(no|required|optional)_argument)?$/, "", m)
                sub(/.*"(--)?/, "", m)
                cmd = fn ~ /^cmd_/ ? substr(fn, 5) : fn == "main" && fcmd == "" ? "dcbench" : fcmd
                if (cmd == "" && fn ~ /_opt$/) {
                    print "=helper", fn, m
                    continue
                }
                if (cmd == "")
                    cmd = "?" file ":" fn
                print cmd, m
            }
        }' "$f"
}
{ find "$TOP"/tools/dcbench -name '*.c' | sort | while read -r f; do
      options "$f"
  done; } | join_helpers | sort -u >"$TMP/dcbench.opts"
options "$TOP/tools/dcpath/dcpath.c" | sort -u >"$TMP/dcpath.opts"
# the commands, from dcbench's command table
sed -n '/commands\[\] = {/,/^};/p' "$TOP/tools/dcbench/main.c" |
    grep -oE '\{ "[a-z]+", ' | sed -E 's/\{ "([a-z]+)", /\1/' >"$TMP/commands"

if [ "$(wc -l <"$TMP/commands")" -lt 4 ] || [ "$(wc -l <"$TMP/dcbench.opts")" -lt 20 ]; then
    notok "the commands and options found in the sources: $(wc -l <"$TMP/commands") commands, $(wc -l <"$TMP/dcbench.opts") options"
fi
if grep -q '^?' "$TMP/dcbench.opts" "$TMP/dcpath.opts"; then
    notok "options outside any command's parser"; grep -h '^?' "$TMP/dcbench.opts" | diag
fi

run "$DCBENCH" --help
cp "$TMP/out" "$TMP/help.dcbench"
if [ "$RC" -ne 0 ]; then notok "dcbench --help: exit $RC"; fi
missing=""
while read -r c; do
    grep -qE "^  $c( |$)" "$TMP/help.dcbench" || missing+=" $c"
done <"$TMP/commands"
if [ -n "$missing" ]; then notok "dcbench --help lacks commands:$missing"; else ok "dcbench --help lists all $(wc -l <"$TMP/commands") commands"; fi

# help_has HELPFILE OPTION: is --OPTION in the help, as a word?
help_has() { grep -qE -- "(^|[^a-z0-9-])--$2([^a-z0-9-]|\$)" "$1"; }
while read -r c; do
    run "$DCBENCH" "$c" --help
    cp "$TMP/out" "$TMP/help.$c"
    if [ "$RC" -ne 0 ] || [ ! -s "$TMP/help.$c" ] || ! grep -q "^usage: dcbench $c" "$TMP/help.$c"; then
        notok "dcbench $c --help: exit $RC, on stdout a usage line"; diag <"$TMP/err"; continue
    fi
    ok "dcbench $c --help (exit 0)"
    expect "dcbench $c with an unknown option: message and usage" 2 "unknown option" \
        "$DCBENCH" "$c" --no-such-option
    grep -q "^usage: dcbench $c" "$TMP/err" || notok "dcbench $c --no-such-option: no usage on stderr"
done <"$TMP/commands"
expect "dcbench with an unknown option" 2 "unknown option '--bogus'" "$DCBENCH" --bogus
expect "compare --threads with a count twice" 2 "--threads: 1 twice" \
    "$DCBENCH" compare "$TMP/fork.trace" --threads 1,2,1
expect "micro --threads with a count twice" 2 "--threads: 2 twice" \
    "$DCBENCH" micro --threads 2,2
expect "micro --plot of a file that is no .svg or .png" 2 "--plot wants a .svg or .png file" \
    "$DCBENCH" micro --plot "$TMP/out.pdf"
expect "dcbench with an unknown command" 2 "unknown command 'bogus'" "$DCBENCH" bogus

# every option of every parser in its command's --help
while read -r c o; do
    h=$TMP/help.$c
    if [ ! -e "$h" ]; then notok "--$o: parsed for '$c', which is no command"; continue; fi
    name="dcbench $c"; [ "$c" = dcbench ] && name=dcbench
    if help_has "$h" "$o"; then ok "$name --help has --$o"; else notok "$name --help lacks --$o"; fi
done <"$TMP/dcbench.opts"

run "$DCPATH" --help
cp "$TMP/out" "$TMP/help.dcpath"
if [ "$RC" -eq 0 ] && grep -q '^usage: dcpath ' "$TMP/help.dcpath" && grep -qi 'exit status' "$TMP/help.dcpath"; then
    ok "dcpath --help: usage and exit status"
else
    notok "dcpath --help: exit $RC, usage and exit status on stdout"; diag <"$TMP/help.dcpath"
fi
while read -r _ o; do
    if help_has "$TMP/help.dcpath" "$o"; then ok "dcpath --help has --$o"; else notok "dcpath --help lacks --$o"; fi
done <"$TMP/dcpath.opts"
for a in "--no-such-option" "-x" "--root"; do
    expect "dcpath $a: message and usage" 2 "^usage: dcpath " "$DCPATH" $a
    grep -q '^dcpath: ' "$TMP/err" || notok "dcpath $a: no 'dcpath: ' message"
done
expect "dcpath without paths" 2 "which paths" "$DCPATH" --root "$TMP"
expect "dcpath without --root" 2 "--root DIR is required" "$DCPATH" x

# --- manual pages ---------------------------------------------------------------------------------
MANS=("$TOP"/man/*.1 "$TOP"/man/*.3)
for want in dcbench.1 dcpath.1; do
    [ -e "$TOP/man/$want" ] || notok "man/$want exists"
done
if ! command -v man >/dev/null || ! command -v groff >/dev/null; then
    notok "man pages: man or groff is not installed (scripts/deps.sh installs man-db, groff-base)"
else
    for m in "${MANS[@]}"; do
        [ -e "$m" ] || continue
        w=$(MANWIDTH=80 timeout $TMO man --warnings -E UTF-8 -l "$m" 2>&1 >/dev/null)
        rc=$?
        if [ $rc -ne 0 ] || [ -n "$w" ]; then
            notok "man/$(basename "$m") formats without warnings (exit $rc)"; printf '%s\n' "$w" | diag
        else
            ok "man/$(basename "$m") formats without warnings"
        fi
    done
    # every option a parser takes is in the page
    for prog in dcbench dcpath; do
        page=$TOP/man/$prog.1
        [ -e "$page" ] || continue
        MANWIDTH=80 man -E ascii -l "$page" 2>/dev/null | sed 's/.\x08//g' >"$TMP/man.$prog"
        missing=""
        while read -r _ o; do
            help_has "$TMP/man.$prog" "$o" || missing+=" --$o"
        done <"$TMP/$prog.opts"
        if [ "$prog" = dcbench ]; then
            while read -r c; do grep -qE "(^|[^a-z])dcbench $c([^a-z]|\$)" "$TMP/man.$prog" || missing+=" $c"; done <"$TMP/commands"
        fi
        if [ -n "$missing" ]; then notok "man/$prog.1 lacks:$missing"; else ok "man/$prog.1 has every command and option"; fi
    done
fi

# each page names the version it documents: the header's
VERSION=$(sed -n 's/^#define DC_VERSION_STRING[^"]*"\(.*\)"/\1/p' "$TOP/include/dcache.h")
for m in "${MANS[@]}"; do
    [ -e "$m" ] || continue
    if grep -q "^\.TH [A-Z]* [0-9] [0-9-]* \"dcache $VERSION\"" "$m"; then
        ok "man/$(basename "$m") documents dcache $VERSION"
    else
        notok "man/$(basename "$m"): .TH does not say \"dcache $VERSION\""
    fi
done

# ---- the shell tests' own check helpers ---------------------------------------
# check DESC CMD... runs CMD alone: in "check DESC [ A ] && [ B ]" the shell
# hands check [ A ], and [ B ]'s answer is lost.  Compound conditions go to
# check_all DESC 'A && B', which evaluates the whole string.  First the
# shared check_all (tests/lib.sh) is fed a false second conjunct and must
# say "not ok", and every shell test must use tests/lib.sh rather than a
# copy of its own; then no script may join a condition to a check call
# outside it.
out=$(bash -c ". '$TOP/tests/lib.sh'
    check_all 'x' 'true && false'; check_all 'y' 'true && true'" 2>&1)
if grep -q '^not ok [0-9]* - x$' <<<"$out" && grep -q '^ok [0-9]* - y$' <<<"$out"; then
    ok "tests/lib.sh: check_all fails a false second conjunct, passes a true one"
else
    notok "tests/lib.sh: check_all on 'true && false', 'true && true': $(tr '\n' ' ' <<<"$out")"
fi
own=$(grep -lE '^(ok|notok|check|check_all)\(\) *\{' "$TOP"/tests/test_*.sh)
no_lib=$(grep -L '^\. .*tests/lib\.sh"\?$\|^\. "\$TESTS/lib\.sh"$' "$TOP"/tests/test_*.sh)
if [ -z "$own" ] && [ -z "$no_lib" ]; then
    ok "every shell test takes its check helpers from tests/lib.sh"
else
    notok "shell tests with their own check helpers or without tests/lib.sh:"
    printf '%s\n' $own $no_lib | sort -u | diag
fi
# a check call whose condition starts with [ or test, on its line or on
# the continuation line after it, quoted strings taken out: an && or ||
# left over joins a condition outside the call
joined=$(awk '
    cont && /^[ \t]*(\[|test[ \t])/ { print FILENAME ":" FNR ": " $0 }
    { cont = 0 }
    /^[ \t]*check[ \t]/ {
        if ($0 ~ /\\$/) cont = 1
        else if ($0 ~ /^[ \t]*check[ \t]+"[^"]*"[ \t]+(\[|test[ \t])/) print FILENAME ":" FNR ": " $0
    }' "$TOP"/tests/*.sh |
    sed -E "s/'[^']*'//g; s/\"([^\"\\]|\\.)*\"//g" | grep -E '&&|\|\|')
if [ -z "$joined" ]; then
    ok "no shell test joins a condition to check outside its arguments (use check_all)"
else
    notok "conditions joined outside check (only the first is checked):"
    diag <<<"$joined"
fi
# make fuzz compiles its fuzzers from source lists of its own: every
# source they name must exist (make -n stops at one that does not)
if make -n -s -C "$TOP" fuzzers >"$TMP/fuzzers" 2>&1; then
    ok "make fuzz: every source its fuzzers compile exists"
else
    notok "make fuzz: a source its fuzzers compile is missing"
    diag <"$TMP/fuzzers"
fi
# dcbench micro's references hash components with libdcache's own
# function, as libdcache does: the tools' byte-wise FNV-1a (common/hash.h)
# is, in micro, the listing loader's alone (tree.c, its index of
# directories)
M=$TMP/micro.src
cat "$TOP"/tools/dcbench/micro/*.[ch] >"$M"
fnv_files=$(grep -l 'hash_fnv1a(\|0x100000001b3' "$TOP"/tools/dcbench/micro/*.[ch])
if [ "$fnv_files" = "$TOP/tools/dcbench/micro/tree.c" ] &&
   ! grep -q '0x100000001b3' "$M" && grep -q 'dc__hash_component(' "$M"; then
    ok "dcbench micro: every implementation hashes with dc__hash_component; FNV-1a only in the listing loader"
else
    notok "dcbench micro: a byte-wise hash outside the listing loader (in: $(echo $fnv_files))"
fi

t_finish
