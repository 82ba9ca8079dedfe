#!/usr/bin/env bash
# make run: replay the shipped Linux kernel build trace through libdcache
# in every mode and compare them (docs/dcbench.md).
#
#   1. import ../shared/traces/linux-6.1-tinyconfig-j2.strace.xz into
#      .trace-cache/linux-6.1-tinyconfig-j2.trace, unless that is there and
#      newer than the log (DCBENCH_REIMPORT=1 forces it);
#   2. dcbench compare at 1, 2, 4 and 8 threads, 5 runs each, plot in
#      bench/results/compare.svg.
#
# DCBENCH_THREADS and DCBENCH_RUNS override the thread list and run count.
set -euo pipefail

top=$(git rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
cd "$top"
name=linux-6.1-tinyconfig-j2
log="$top/../shared/traces/$name.strace.xz"
trace=".trace-cache/$name.trace"
dcbench=build/dcbench

if [ ! -x "$dcbench" ]; then
	echo "run.sh: $dcbench is missing: run make first" >&2
	exit 1
fi
if [ ! -r "$log" ]; then
	echo "run.sh: $log not found (the shipped traces live in ../shared/traces)" >&2
	exit 1
fi
mkdir -p .trace-cache bench/results
if [ ! -s "$trace" ] || [ "$log" -nt "$trace" ] || [ -n "${DCBENCH_REIMPORT:-}" ]; then
	echo "importing $log into $trace" >&2
	tmp="$trace.tmp.$$"
	trap 'rm -f "$tmp"' EXIT
	"$dcbench" import "$log" -o "$tmp" >/dev/null
	mv -f "$tmp" "$trace"
	trap - EXIT
fi
exec "$dcbench" compare "$trace" --threads "${DCBENCH_THREADS:-1,2,4,8}" \
	--runs "${DCBENCH_RUNS:-5}" --plot bench/results/compare.svg
