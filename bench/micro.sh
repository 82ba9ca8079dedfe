#!/usr/bin/env bash
# bench/micro.sh: one complete `dcbench micro` run (docs/micro.md).
#
# Writes, under bench/results/:
#   micro-HOST-DATE.json   the JSON document (dcbench micro --json)
#   micro-HOST-DATE.txt    the human table (and any warnings)
#   micro.svg              Mops/s against threads, one panel per scenario
#
# Runs at nice 5 (MICRO_NICE overrides): the machine may be shared.
# Needs root for the kernel reference's tmpfs (without it, /dev/shm).
# Extra arguments go to dcbench micro, e.g.  bench/micro.sh --runs 7
# DCBENCH names another dcbench binary (default build/dcbench).
set -uo pipefail

top=$(git rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
cd "$top" || exit 1
dcbench=${DCBENCH:-build/dcbench}

if [ ! -x "$dcbench" ]; then
	echo "micro.sh: $dcbench is missing: run make first" >&2
	exit 1
fi
if ! command -v gnuplot >/dev/null; then
	echo "micro.sh: gnuplot is not installed (Debian: gnuplot-nox); no plot" >&2
fi
mkdir -p bench/results
date=$(date -u +%Y-%m-%dT%H%M%SZ)
base="bench/results/micro-$(hostname)-$date"

echo "micro.sh: dcbench micro $*; this takes several minutes" >&2
nice -n "${MICRO_NICE:-5}" "$dcbench" micro --json --plot bench/results/micro.svg "$@" \
	>"$base.json.tmp" 2>"$base.txt"
rc=$?
if [ -s "$base.json.tmp" ]; then
	mv -f "$base.json.tmp" "$base.json"
else
	rm -f "$base.json.tmp"
fi
cat "$base.txt"
msg="wrote $base.txt"
[ -f "$base.json" ] && msg="$msg, $base.json"
[ -f bench/results/micro.svg ] && msg="$msg, bench/results/micro.svg"
echo "micro.sh: exit status $rc; $msg" >&2
exit $rc
