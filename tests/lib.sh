# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/lib.sh - what the shell tests share.  A script sets T_NAME and
# sources this file; each check prints "ok N - ..." or "not ok N - ...",
# and t_finish prints "T_NAME: N passed, M failed, K skipped" (the line
# make check counts) and exits 1 when anything failed.

n=0 passed=0 failed=0 skipped=0

ok()    { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $*"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $*"; }
skip()  { n=$((n + 1)); skipped=$((skipped + 1)); echo "ok $n - # SKIP $*"; }
# check DESC CMD...: CMD alone.  In "check DESC [ A ] && [ B ]" the shell
# ends check's arguments at &&, and [ B ]'s answer is lost: compound
# conditions go to check_all DESC 'A && B', which evaluates the whole string.
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
check_all() { local d=$1; if eval "$2"; then ok "$d"; else notok "$d"; fi; }
# diag: standard input as comment lines under the last check
diag()  { sed 's/^/#   /' | head -20; }
# cant WHY: this machine cannot run the test (make check counts a skip)
cant()  { echo "$T_NAME: cannot run here: $*"; exit 77; }

# ---- dcfs daemons: their --stats files, mounts and processes ----
# stat_val FILE KEY: KEY's value in a --stats file
stat_val() { sed -n "s/^$2 //p" "$1" 2>/dev/null | head -1; }
# stat_is FILE KEY OP VALUE: test(1) on the value, read anew at each call
# (wait_for takes it so: an argument "$(stat_val ...)" would be read once)
stat_is() { test "$(stat_val "$1" "$2")" "$3" "$4"; }
# stats_since FILE: wait until the dcfs --stats FILE is rewritten after
# this moment (it is every second), so that what it says is since then
stats_since() { local t; t=$(date +%s); wait_for 5 stat_is "$1" updated -gt "$t"; }
# wait_for SECONDS CMD...: poll until CMD succeeds
wait_for() {
	local tries=$(($1 * 20))
	shift
	while [ $tries -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		tries=$((tries - 1))
	done
	return 1
}
is_mounted() { grep -q " $1 fuse.dcfs " /proc/mounts; }
not_mounted() { ! grep -q " $1 fuse" /proc/mounts; }
# gone PID: exited, or a zombie
gone() { ! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

t_finish() {
	echo "$T_NAME: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	exit
}
