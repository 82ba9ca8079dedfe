#!/usr/bin/env bash
# make run: replay the shipped Linux kernel build trace through libdcache
# in every mode and compare them (docs/dcbench.md).
#
#   1. import data/linux-6.1-tinyconfig-j2.strace.xz into
#      build/trace/linux-6.1-tinyconfig-j2.trace, unless that is there and
#      newer than the log (DCBENCH_REIMPORT=1 forces it);
#   2. dcbench compare at 1, 2, 4 and 8 threads, 5 runs each, the plot in
#      build/compare.svg.
#
# Everything it writes is under build/, which git ignores.
# DCBENCH_THREADS and DCBENCH_RUNS override the thread list and run count.
set -euo pipefail

cd "$(dirname "$0")/.."
name=linux-6.1-tinyconfig-j2
log=data/$name.strace.xz
out=build
trace=$out/trace/$name.trace
plot=$out/compare.svg
dcbench=$out/dcbench

if [ ! -x "$dcbench" ]; then
	echo "run.sh: $dcbench is missing: run make first" >&2
	exit 1
fi
if [ ! -r "$log" ]; then
	echo "run.sh: $log not found: it ships with the source tree" >&2
	exit 1
fi
mkdir -p "$out/trace"
if [ ! -s "$trace" ] || [ "$log" -nt "$trace" ] || [ -n "${DCBENCH_REIMPORT:-}" ]; then
	echo "run.sh: importing $log into $trace" >&2
	tmp="$trace.tmp.$$"
	trap 'rm -f "$tmp"' EXIT
	"$dcbench" import "$log" -o "$tmp" >/dev/null
	mv -f "$tmp" "$trace"
	trap - EXIT
fi
"$dcbench" compare "$trace" --threads "${DCBENCH_THREADS:-1,2,4,8}" \
	--runs "${DCBENCH_RUNS:-5}" --plot "$plot"
echo "run.sh: trace $trace, plot $plot" >&2
