#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/coherence.sh - `dcbench coherence` in every setting the comparison
# names, one after the other on one machine, into one report:
#
#   dcfs --coherence=fanotify, inotify, ttl (--ttl 100), off (its defaults:
#   an hour of kernel timeouts with a watcher, 0 with ttl, 1 s off), then
#   libfuse's passthrough_ll at its 1 s timeout and at timeout 0
#
# each with the same seed and number of changes, so each makes the same
# changes.  The report goes to bench/results/coherence-HOST-DATE.txt
# (COHERENCE_OUT=FILE overrides) and stdout.
#
#   bench/coherence.sh [--changes N (1000)] [--seed S (1)] [any other
#                       dcbench coherence option: --readers R, --flood N ...]
#
# Needs root (mounts) and a built tree (make).  DCBENCH names another
# dcbench binary (default build/dcbench).
set -uo pipefail

top=$(git rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
cd "$top" || exit 1
dcbench=${DCBENCH:-build/dcbench}
changes=1000
seed=1
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--changes) [ $# -ge 2 ] || { echo "coherence.sh: --changes needs a value" >&2; exit 2; }
		changes=$2; shift 2 ;;
	--seed) [ $# -ge 2 ] || { echo "coherence.sh: --seed needs a value" >&2; exit 2; }
		seed=$2; shift 2 ;;
	-h|--help) sed -n '3,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) extra+=("$1"); shift ;;
	esac
done
[ -x "$dcbench" ] || { echo "coherence.sh: $dcbench is missing: run make first" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "coherence.sh: needs root (it mounts file systems)" >&2; exit 1; }
mkdir -p bench/results
out=${COHERENCE_OUT:-bench/results/coherence-$(hostname)-$(date -u +%Y-%m-%dT%H%MZ).txt}

run() {	# LABEL ARGS...: one dcbench coherence run, its report into $out
	local label=$1
	shift
	echo "== $label: $dcbench coherence --changes $changes --seed $seed $* ${extra[*]}"
	"$dcbench" coherence --changes "$changes" --seed "$seed" "$@" "${extra[@]}" 2>&1
	echo "   (exit $?)"
	echo
}

{
	echo "bench/coherence.sh --changes $changes --seed $seed ${extra[*]}"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')  kernel: $(uname -r)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo
	run "dcfs fanotify" --fs rcu --dcfs-args "--coherence=fanotify"
	run "dcfs inotify" --fs rcu --dcfs-args "--coherence=inotify"
	run "dcfs ttl 100 ms" --fs rcu --dcfs-args "--coherence=ttl --ttl 100"
	run "dcfs off" --fs rcu --dcfs-args "--coherence=off"
	run "passthrough_ll (timeout 1 s)" --fs passthrough_ll
	run "passthrough_ll timeout 0" --fs passthrough_ll --peer-timeout 0
	echo "summary:"
} > "$out.tmp"
grep -E '^(== |coherence [a-z_]+: [0-9])' "$out.tmp" >> "$out.tmp.sum"
cat "$out.tmp.sum" >> "$out.tmp"
rm -f "$out.tmp.sum"
mv "$out.tmp" "$out"
cat "$out"
echo "wrote $out" >&2
