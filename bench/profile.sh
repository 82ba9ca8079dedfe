#!/usr/bin/env bash
# bench/profile.sh: where a lookup's time goes, counted rather than timed.
#
# The VMs we measure on expose no hardware performance counters (`perf
# stat -e cycles,cache-misses` says "not supported"), so this counts with
# valgrind instead: `dcbench micro` runs under callgrind, which collects
# only inside the timed runs of the benchmark's worker threads (their
# function run_timed; the untimed passes before them, which make the
# cache's entries and path nodes, are left out, so the counts are of a
# warm cache and do not depend on how many lookups the run got through),
# and every count is divided by the lookups and components those timed
# runs did (the JSON's "lookups" and "components").  Two simulated machines, one
# run each per implementation:
#
#   caches  D1 32 KiB 8-way, and the 1 MiB 8-way second-level cache as
#           callgrind's last level ("L2 misses"): 64-byte lines
#   TLB     the same hierarchy with 4 KiB "lines": a 64-entry fully
#           associative first-level data TLB and a 2,048-entry 16-way
#           second-level TLB (AMD Zen 2/3 sizes; x86 Intel cores are close)
#
# The counts are of a model (no prefetchers, no page walks, data accesses
# only in the TLB model), and repeatable: they do not depend on what else
# the machine is doing.  bench/results/micro-history.md says what the recorded runs showed.
#
# Usage: bench/profile.sh [--scenario S] [--impls a,b,...] [--ms N] [--ttl MS]
#                         [--as UID:GID[:G1,...]]
#   --scenario  one dcbench micro scenario (default hot)
#   --impls     default rcu,global,lfht,mutex (kernel: its work is in the
#               kernel, which valgrind does not see)
#   --ms        collection time per implementation under valgrind (default
#               3000; about 50 times slower than native).  valgrind runs
#               one thread at a time; --fair-sched=yes hands the CPU round
#               so that the main thread's end of a run is not held back for
#               minutes by a worker that keeps taking it back
#   --ttl       libdcache's caches with TTLs of MS ms (dcbench micro --ttl):
#               what expiry checks cost a walk (default 0: none)
#   --as        libdcache resolves as that user (dcbench micro --as): what
#               the search-permission check costs a walk
# Writes bench/results/profile-HOST-DATE.txt; PROFILE_OUT=FILE overrides.
# DCBENCH names another dcbench binary (default build/dcbench).
set -uo pipefail

top=$(git rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "$0")/.." && pwd))
cd "$top" || exit 1
dcbench=${DCBENCH:-build/dcbench}
scenario=hot
impls=rcu,global,lfht,mutex
ms=3000
ttl=0
as=

usage() {
	sed -n '/^# Usage:/,/^# DCBENCH/p' "$0" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case $1 in
	--scenario) [ $# -ge 2 ] || usage; scenario=$2; shift 2 ;;
	--impls) [ $# -ge 2 ] || usage; impls=$2; shift 2 ;;
	--ms) [ $# -ge 2 ] || usage; ms=$2; shift 2 ;;
	--ttl) [ $# -ge 2 ] || usage; ttl=$2; shift 2 ;;
	--as) [ $# -ge 2 ] || usage; as=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "profile.sh: unknown argument: $1" >&2; usage ;;
	esac
done
case $ms in ''|*[!0-9]*) echo "profile.sh: --ms takes a number" >&2; exit 2 ;; esac
case $ttl in ''|*[!0-9]*) echo "profile.sh: --ttl takes a number" >&2; exit 2 ;; esac
if ! command -v valgrind >/dev/null; then
	echo "profile.sh: valgrind is not installed (Debian: valgrind)" >&2
	exit 1
fi
if [ ! -x "$dcbench" ]; then
	echo "profile.sh: $dcbench is missing: run make first" >&2
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p bench/results
out=${PROFILE_OUT:-bench/results/profile-$(hostname)-$(date -u +%Y-%m-%dT%H%MZ).txt}

# field NAME FILE: the first "NAME": number in a dcbench JSON document
field() {
	sed -n "s/^ *\"$1\": \([0-9][0-9]*\),*$/\1/p" "$2" | head -1
}

# run IMPL MODEL: one callgrind run; prints "Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw lookups components"
run() {
	local im=$1 model=$2 geo
	case $model in
	caches) geo=(--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,8,64) ;;
	tlb) geo=(--I1=32768,8,64 --D1=262144,64,4096 --LL=8388608,16,4096) ;;
	esac
	valgrind --tool=callgrind --fair-sched=yes --cache-sim=yes "${geo[@]}" \
		--toggle-collect=run_timed \
		--callgrind-out-file="$tmp/$im.$model.cg" \
		"$dcbench" micro --scenarios "$scenario" --threads 1 --impls "$im" \
		--runs 1 --ms "$ms" --ttl "$ttl" ${as:+--as "$as"} --no-bytes --no-updates --json \
		>"$tmp/$im.$model.json" 2>"$tmp/$im.$model.err"
	local rc=$? totals lookups comps
	totals=$(sed -n 's/^totals: //p' "$tmp/$im.$model.cg" 2>/dev/null)
	# callgrind leaves out trailing events that counted 0 (a warm run
	# may write no line it misses): nine fields, zeros added
	if [ -n "$totals" ]; then
		# shellcheck disable=SC2086
		set -- $totals
		while [ $# -lt 9 ]; do set -- "$@" 0; done
		totals="$*"
	fi
	lookups=$(field lookups "$tmp/$im.$model.json")
	comps=$(field components "$tmp/$im.$model.json")
	if [ $rc != 0 ] || [ -z "$totals" ] || [ -z "$lookups" ] || [ "$lookups" = 0 ]; then
		echo "profile.sh: $im ($model) failed (exit $rc); its output:" >&2
		tail -20 "$tmp/$im.$model.err" >&2
		return 1
	fi
	echo "$totals $lookups $comps"
}

{
	echo "bench/profile.sh --scenario $scenario --impls $impls --ms $ms --ttl $ttl${as:+ --as $as}"
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)  host: $(hostname)  commit: $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "valgrind: $(valgrind --version)  cpu: $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
	echo "simulated: caches D1 32 KiB 8-way, L2 1 MiB 8-way, 64 B lines;"
	echo "           TLB 64-entry fully associative, then 2,048-entry 16-way, 4 KiB pages"
	echo "per lookup (per component in brackets), one thread, collected in the worker threads only:"
	printf '%-7s %9s %17s %9s %17s %17s %17s %17s\n' impl lookups instructions 'data reads' 'D1 misses' 'L2 misses' 'TLB1 misses' 'TLB2 misses'
} | tee "$out"

failed=0
for im in ${impls//,/ }; do
	if ! c=$(run "$im" caches) || ! t=$(run "$im" tlb); then
		failed=1
		continue
	fi
	# shellcheck disable=SC2086
	set -- $c
	awk -v im="$im" -v ir="$1" -v dr="$2" -v d1="$5" -v d1w="$6" -v l2="$8" -v l2w="$9" \
	    -v n="${10}" -v k="${11}" -v t1="$(echo "$t" | awk '{print $5 + $6}')" \
	    -v t2="$(echo "$t" | awk '{print $8 + $9}')" -v tn="$(echo "$t" | awk '{print $10}')" \
	    -v tk="$(echo "$t" | awk '{print $11}')" 'BEGIN {
		printf "%-7s %9d %8.1f (%6.1f) %10.1f %8.2f (%6.3f) %8.2f (%6.3f) %8.2f (%6.3f) %8.3f (%6.3f)\n",
			im, n, ir / n, ir / k, dr / n, (d1 + d1w) / n, (d1 + d1w) / k,
			(l2 + l2w) / n, (l2 + l2w) / k, t1 / tn, t1 / tk, t2 / tn, t2 / tk
	}' | tee -a "$out"
done
echo "wrote $out" >&2
exit $failed
