#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/test_kernbench.sh [BUILD_DIR] - dcbench kernbench end to end, as
# root, on a small tree with a Makefile that stands in for the kernel (the
# real build takes minutes: that is `make kernbench`, a benchmark).  Each
# run must really compile through a dcfs mount: the test checks the
# object files that the last (dcfs) run wrote, the report's lines, the
# JSON document, and the refusals (no tree, no .config, a failing build,
# bad options, not root).
#
# Prints "ok N - ..." / "not ok N - ..." and ends with
# "test_kernbench: N passed, M failed, K skipped"; exit 77 if it cannot
# run here (not root, no /dev/fuse).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DCBENCH=$PWD/$BUILD/dcbench
T_NAME=test_kernbench
. tests/lib.sh


[ "$(id -u)" = 0 ] || cant "needs root"
[ -c /dev/fuse ] || cant "no /dev/fuse"
[ -x "$DCBENCH" ] && [ -x "$BUILD/dcfs" ] || { echo "test_kernbench: build $BUILD first"; exit 1; }
CC=${CC:-cc}
command -v "$CC" >/dev/null || CC=gcc

T=$(mktemp -d /tmp/test_kernbench.XXXXXX) || exit 1
chmod 755 "$T"
trap 'grep -q " $T/" /proc/mounts && umount -l "$T"/work/mnt 2>/dev/null; rm -rf "$T"' EXIT

# the stand-in tree: a .config, eight C files and a header in two
# directories, a Makefile that builds them into one program
tree=$T/tree
mkdir -p "$tree/lib" "$tree/include"
touch "$tree/.config"
echo '#define SCALE 3' > "$tree/include/scale.h"
for i in 1 2 3 4 5 6 7; do
	printf '#include "scale.h"\nint f%d(int x) { return x * SCALE + %d; }\n' $i $i > "$tree/lib/f$i.c"
done
{
	for i in 1 2 3 4 5 6 7; do echo "int f$i(int);"; done
	echo 'int main(void) { return f1(1) + f7(1) == 14 ? 0 : 1; }'
} > "$tree/main.c"
cat > "$tree/Makefile" <<MK
OBJS = main.o \$(patsubst %.c,%.o,\$(wildcard lib/*.c))
prog: \$(OBJS)
	$CC -o \$@ \$(OBJS)
%.o: %.c
	$CC -Iinclude -O1 -c \$< -o \$@
clean:
	rm -f prog main.o lib/*.o
MK

out=$T/out.json err=$T/err.txt
"$DCBENCH" kernbench --tree "$tree" --runs 2 --modes native,rcu,global --work "$T/work" \
	--json > "$out" 2> "$err"
rc=$?
check "kernbench native,rcu,global x 2 runs exits 0 (rc $rc)" [ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/    /' "$err"
check "the last run (global, through dcfs) built the program" [ -x "$tree/prog" ]
check "the program it built runs" "$tree/prog"
check "every run printed in time's format (6 lines)" \
	[ "$(grep -cE 'run [12]: real [0-9]+m[0-9]+\.[0-9]{3}s  user [0-9]+m[0-9.]+s  sys [0-9]+m[0-9.]+s' "$err")" = 6 ]
check "a kernbench summary line per mode" \
	[ "$(grep -cE '^(native|rcu|global) +Elapsed: [0-9.]+s User: [0-9.]+s System: [0-9.]+s CPU: [0-9.]+%  \[median of 2;' "$err")" = 3 ]
check "the daemon's CPU on a line of its own, for rcu and global" \
	[ "$(grep -cE '^ +dcfs daemon: User: [0-9.]+s System: [0-9.]+s' "$err")" = 2 ]
check "comparison lines (rcu vs native, global vs native, global vs rcu)" \
	[ "$(grep -cE '^(rcu vs native|global vs native|global vs rcu): Elapsed ' "$err")" = 3 ]
check_all "the goal lines (rcu/native Elapsed a goal at timeouts 1 s, daemon CPU info)" \
	'[ "$(grep -c "^goal: rcu Elapsed / native" "$err")" = 1 ] &&
	 [ "$(grep -c "^info: rcu daemon CPU" "$err")" = 1 ]'
check_all "one JSON document with schema_version and 3 series of 2 runs" \
	'[ "$(grep -c "\"schema_version\": 1" "$out")" = 1 ] &&
	 [ "$(grep -cE "\"mode\": \"(native|rcu|global)\"" "$out")" = 3 ] &&
	 [ "$(grep -c "\"elapsed\": [0-9]" "$out")" = 6 ]'
if command -v python3 >/dev/null; then
	check "the JSON parses" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$out"
else
	skip "the JSON parses (no python3: scripts/deps.sh installs it)"
fi
check "nothing left mounted" sh -c "! grep -q ' $T/' /proc/mounts"
check "make clean ran before each run: run 2 compiled every file again" \
	[ "$(grep -c -- '-c lib/f[0-9].c' "$T"/work/build-*cpu-rcu-2.log)" = 7 ]

# the comparison the coherence goal is judged on: native, dcfs coherent
# with its long timeouts, dcfs with no watcher, passthrough_ll at 0
"$DCBENCH" kernbench --tree "$tree" --runs 1 --work "$T/work3" \
	--modes native,rcu@default,rcu@3600/off,passthrough_ll@0 > "$err" 2>&1
rc=$?
check "kernbench with a mode's own timeouts and coherence, and passthrough_ll, exits 0 (rc $rc)" \
	[ $rc = 0 ]
[ $rc = 0 ] || sed 's/^/    /' "$err"
check "a summary line for each of the four modes" \
	[ "$(grep -cE '^(native|rcu@default|rcu@3600/off|passthrough_ll@0) +Elapsed: ' "$err")" = 4 ]
check "passthrough_ll's CPU on a line of its own" \
	[ "$(grep -cE '^ +passthrough_ll daemon: User: [0-9.]+s' "$err")" = 1 ]
check "the coherent goal line" \
	[ "$(grep -cE '^goal: rcu@default Elapsed / native = [0-9.]+ \(<= 1\.03, dcfs coherent' "$err")" = 1 ]
check_all "coherent dcfs against passthrough_ll@0 and against no watcher" \
	'[ "$(grep -cE "^info: passthrough_ll@0 Elapsed / rcu@default = [0-9.]+$" "$err")" = 1 ] &&
	 [ "$(grep -cE "^info: rcu@default Elapsed / rcu@3600/off = [0-9.]+$" "$err")" = 1 ]'
check "the build through passthrough_ll@0 compiled every file" \
	[ "$(grep -c -- '-c lib/f[0-9].c' "$T"/work3/build-*cpu-passthrough_ll@0-1.log)" = 7 ]
check_all "rcu@3600/off's log named without its slash, and its dcfs ran with no watcher" \
	'ls "$T"/work3/build-*cpu-rcu@3600-off-1.log > /dev/null &&
	 grep -q "coherence: off" "$T/work3/daemon-rcu.log"'
check "the program built through passthrough_ll runs" "$tree/prog"
check "nothing left mounted after four modes" sh -c "! grep -q ' $T/' /proc/mounts"

# refusals: clear message, documented exit status
"$DCBENCH" kernbench --tree "$T/none" --modes native > /dev/null 2> "$err"
rc=$?
check_all "no such tree: exit 1, saying so" '[ $rc = 1 ] && grep -q "none: No such file or directory" "$err"'
: >"$T/afile"
"$DCBENCH" kernbench --tree "$T/afile" --modes native > /dev/null 2> "$err"
rc=$?
check_all "a file for a tree: exit 1, not a directory" '[ $rc = 1 ] && grep -q "afile: not a directory" "$err"'
mkdir -p "$T/unconf" && cp "$tree/Makefile" "$T/unconf/"
"$DCBENCH" kernbench --tree "$T/unconf" --modes native > /dev/null 2> "$err"
rc=$?
check_all "tree without .config: exit 1, says how to configure" '[ $rc = 1 ] && grep -q kernbench-setup "$err"'
echo 'int broken(' > "$tree/lib/f8.c"
"$DCBENCH" kernbench --tree "$tree" --runs 1 --modes rcu --work "$T/work2" > /dev/null 2> "$err"
rc=$?
check_all "a failing build through dcfs: exit 1, names the log" '[ $rc = 1 ] && grep -q "failed with status" "$err"'
check "and the failed run left nothing mounted" sh -c "! grep -q ' $T/' /proc/mounts"
rm -f "$tree/lib/f8.c"
"$DCBENCH" kernbench --tree "$tree" --bogus > /dev/null 2>&1
check "unknown option: exit 2" [ $? = 2 ]
"$DCBENCH" kernbench --tree "$tree" --runs 0 > /dev/null 2>&1
check "--runs 0: exit 2" [ $? = 2 ]
"$DCBENCH" kernbench --tree "$tree" --modes native,zfs > /dev/null 2>&1
check "unknown mode: exit 2" [ $? = 2 ]
for m in native@5 passthrough_ll/off rcu@x rcu/sometimes rcu,rcu rcu,dcfs-rcu rcu@1,rcu@1.0 rcu@0x10 rcu@-0 "rcu@ 5" passthrough_hp; do
	"$DCBENCH" kernbench --tree "$tree" --modes "$m" > /dev/null 2> "$err"
	rc=$?
	check_all "--modes $m: exit 2 with a message" '[ $rc = 2 ] && grep -q -- "--modes" "$err"'
done
if command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$DCBENCH" kernbench --tree "$tree" --modes rcu > /dev/null 2> "$err"
	rc=$?
	check_all "not root: exit 1, says why" '[ $rc = 1 ] && grep -q "needs root" "$err"'
else
	skip "not root: refused (no setpriv)"
fi

t_finish
