#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# tests/test_micro.sh [BUILD_DIR] - dcbench micro end to end on the
# shipped Linux tree listing, briefly (one run of 20 ms per cell: a smoke
# test of the suite, not a measurement; no figure is asserted).  Checks
# that every implementation answered every lookup right (the suite
# verifies each answer against the tree), that the report and the JSON
# document hold what docs/micro.md promises (the depth scenarios' ratios,
# the storm's, thread counts above the cores), that --ref-node-bytes says
# what it changed, and the refusals of bad options; and, where valgrind
# can run the build, that bench/profile.sh prints its counts.
#
# Prints "ok N - ..." / "not ok N - ..." and ends with
# "test_micro: N passed, M failed, K skipped"; exit 1 when the listing
# (data/ of the source tree) is not there.
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
DCBENCH=$PWD/$BUILD/dcbench
TREE=$PWD/data/linux-6.1-tree.tsv.xz
T_NAME=test_micro
. tests/lib.sh


[ -x "$DCBENCH" ] || { echo "test_micro: build $BUILD first"; exit 1; }
[ -r "$TREE" ] || { echo "test_micro: $TREE is missing: it ships with the source"; exit 1; }

T=$(mktemp -d /tmp/test_micro.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
brief=(--tree "$TREE" --threads 1,2 --runs 1 --ms 20)

"$DCBENCH" micro "${brief[@]}" --scenarios small,negative,mixed-10 --json \
	> "$T/out.json" 2> "$T/out.txt"
check "three scenarios, every implementation: exit 0" [ $? = 0 ]
check "no wrong answer" \
	sh -c "! grep -Eq '\"wrong_answers\": [1-9]' '$T/out.json' && grep -q '\"wrong_answers\": 0' '$T/out.json'"
check "no failed update" \
	sh -c "! grep -Eq '\"failed_updates\": [1-9]' '$T/out.json' && grep -q '\"failed_updates\": 0' '$T/out.json'"
check "JSON: schema_version" grep -q '"schema_version": 2' "$T/out.json"
check "JSON: no timed lookup answered wrong (negative's misses expected)" \
	sh -c "! grep -Eq '\"wrong_lookups\": [1-9]' '$T/out.json' && grep -q '\"wrong_lookups\": 0' '$T/out.json'"
for impl in rcu rwlock global kernel lfht mutex; do
	c=$(grep -A1 '"scenario": ' "$T/out.json" | grep -c "\"impl\": \"$impl\"")
	check "JSON: $impl has 6 results (3 scenarios x 2 thread counts), has $c" [ "$c" = 6 ]
done
check "JSON: bytes_per_entry measured" grep -Eq '"bytes_per_entry": [0-9]' "$T/out.json"
check "JSON: the references unpadded" grep -q '"ref_node_bytes": 0' "$T/out.json"
check "report: the table of each scenario" \
	sh -c "grep -q '^small: ' '$T/out.txt' && grep -q '^negative: ' '$T/out.txt' && grep -q '^mixed-10: ' '$T/out.txt'"
check "report: bytes per cached entry" grep -q '^bytes per cached entry' "$T/out.txt"
check "report: update costs" grep -q '^update costs' "$T/out.txt"
check "report: the goals, with hot's marked not measured" \
	grep -Eq 'hot 1 thread: rcu ns/path / lfht ns/path +- .*not measured' "$T/out.txt"
check "report: one run is flagged as indicative" grep -q 'indicative only' "$T/out.txt"
if command -v python3 >/dev/null; then
	check "the JSON parses" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/out.json"
	# names <= 32 bytes and no symlinks: every path but the root's gets a
	# node, and the goal's figure counts them
	check "JSON: bytes with a path node for each entry but the root, over the entries alone" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
b = d["bytes"]["short_names"]
assert b["one_probe_paths"] == b["entries"] - 1, (b["one_probe_paths"], b["entries"])
assert b["bytes_with_paths"] > b["bytes"], b
assert abs(b["bytes_per_entry_with_paths"] - b["bytes_with_paths"] / b["entries"]) < 0.01, b
assert d["bytes_per_entry_short_names_with_paths"] == b["bytes_per_entry_with_paths"]' "$T/out.json"
else
	skip "the JSON parses (no python3: scripts/deps.sh installs it)"
	skip "JSON: bytes with a path node for each entry (no python3)"
fi

"$DCBENCH" micro "${brief[@]}" --scenarios hot,negative --impls rcu,lfht,mutex \
	--no-bytes --no-updates --ref-node-bytes 120 --json > "$T/pad.json" 2> "$T/pad.txt"
check "--ref-node-bytes 120: exit 0" [ $? = 0 ]
check "--ref-node-bytes: the header says so" grep -q '^references padded: .*at least 120 bytes' "$T/pad.txt"
check "--ref-node-bytes: the goals against lfht are not measured" \
	grep -Eq 'negative 2 threads: rcu scaling / lfht scaling +- .*not measured' "$T/pad.txt"
check "--ref-node-bytes: the goal per path against lfht is not measured" \
	grep -Eq 'hot 1 thread: rcu ns/path / lfht ns/path +- .*not measured' "$T/pad.txt"
"$DCBENCH" micro --tree "$TREE" --threads 1 --runs 1 --ms 20 --scenarios hot --impls rcu,lfht \
	--no-bytes --no-updates > "$T/unpad.txt" 2>&1
check "unpadded: the goal per path against lfht has its value" \
	grep -Eq 'hot 1 thread: rcu ns/path / lfht ns/path +[0-9]+\.[0-9]+ ' "$T/unpad.txt"
check "--ref-node-bytes: in the JSON" grep -q '"ref_node_bytes": 120' "$T/pad.json"
check "--ref-node-bytes: still no wrong answer" grep -q '"wrong_answers": 0' "$T/pad.json"

check "JSON: components counted" grep -Eq '"components": [1-9]' "$T/out.json"

# rcu-ttl (rcu with TTLs) and rcu-as (rcu resolving as 1000:1000:5,6),
# in the same rounds as rcu: each goal is the ratio of its cell to rcu's,
# and not measured once --ttl or --as gives rcu the same
"$DCBENCH" micro --tree "$TREE" --threads 1 --runs 1 --ms 20 --scenarios hot \
	--impls rcu,rcu-ttl,rcu-as --no-bytes --no-updates --json > "$T/same.json" 2> "$T/same.txt"
check "rcu-ttl, rcu-as: exit 0" [ $? = 0 ]
check_all "rcu-ttl, rcu-as: the header gives the TTL and the credential" \
	'grep -q "^rcu-ttl: rcu with TTLs of 3600000 ms" "$T/same.txt" &&
	 grep -q "^rcu-as: rcu resolving as 1000:1000 with 2 groups" "$T/same.txt"'
"$DCBENCH" micro --tree "$TREE" --threads 1 --runs 1 --ms 20 --scenarios hot \
	--impls rcu,rcu-ttl,rcu-as --no-bytes --no-updates --ttl 5000 --as 2000:3000 \
	--json > "$T/same2.json" 2>/dev/null
check "rcu-ttl, rcu-as with --ttl and --as: exit 0" [ $? = 0 ]
if command -v python3 >/dev/null; then
	check "JSON: rcu-ttl and rcu-as measured, their goals the ratios to rcu; null with --ttl, --as" python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
def cells(d):
    return {c["impl"]: c for c in d["results"] if c["scenario"] == "hot" and c["threads"] == 1}
def goal(d, impl):
    g = [x for x in d["goals"] if x["goal"].startswith("hot 1 thread: %s ns / rcu ns" % impl)]
    return g[0] if len(g) == 1 else None
def good(impl, target):
    r, g, g2 = cells(a), goal(a, impl), goal(b, impl)
    return (r[impl]["lookups"] > 0 and r[impl]["wrong_lookups"] == 0 and
            cells(b)[impl]["wrong_lookups"] == 0 and g and g["target"] == target and
            abs(g["value"] - r[impl]["ns_per_lookup"] / r["rcu"]["ns_per_lookup"]) < 1e-3 * g["value"] and
            g2 and g2["value"] is None)
fields = lambda d: (d["ttl_ms"], d["rcu_ttl_ms"], d["rcu_as_uid"], d["rcu_as_gid"], d["rcu_as_ngroups"])
sys.exit(not (good("rcu-ttl", 1.05) and good("rcu-as", 1.1) and
              fields(a) == (0, 3600000, 1000, 1000, 2) and
              fields(b) == (5000, 5000, 2000, 3000, 0)))' "$T/same.json" "$T/same2.json"
else
	skip "JSON: rcu-ttl and rcu-as (no python3)"
fi

# --no-warm: the timed runs alone, still checked
"$DCBENCH" micro "${brief[@]}" --threads 1 --scenarios small --impls rcu --no-bytes \
	--no-updates --no-warm --json > "$T/nowarm.json" 2> "$T/nowarm.err"
check "--no-warm: exit 0" [ $? = 0 ]
check "--no-warm: lookups made and counted" grep -Eq '"lookups": [1-9]' "$T/nowarm.json"
check "--no-warm: no wrong answer" grep -q '"wrong_answers": 0' "$T/nowarm.json"

# bench/profile.sh, briefly, where valgrind can run the binary (not under
# a sanitizer): it must print a row of counts for the implementation
if command -v valgrind >/dev/null && ! ldd "$DCBENCH" 2>/dev/null | grep -q 'lib[at]san'; then
	DCBENCH=$DCBENCH PROFILE_OUT=$T/prof.txt bash bench/profile.sh --scenario small \
		--impls rcu --ms 100 > "$T/prof.out" 2>&1
	check "profile.sh: exit 0" [ $? = 0 ]
	check "profile.sh: a row of counts for rcu" \
		grep -Eq '^rcu +[1-9][0-9]* +[1-9][0-9.]* \( *[1-9][0-9.]*\)' "$T/prof.txt"
	bash bench/profile.sh --bogus > /dev/null 2>&1
	check "profile.sh: refused: --bogus (exit 2)" [ $? = 2 ]
	bash bench/profile.sh --ms x > /dev/null 2>&1
	check "profile.sh: refused: --ms x (exit 2)" [ $? = 2 ]
elif command -v valgrind >/dev/null; then
	skip "bench/profile.sh (valgrind cannot run a sanitizer build)"
else
	skip "bench/profile.sh (no valgrind: scripts/deps.sh installs it)"
fi

if command -v gnuplot >/dev/null; then
	"$DCBENCH" micro "${brief[@]}" --scenarios small --impls rcu,mutex --no-bytes \
		--no-updates --plot "$T/p.svg" > /dev/null 2>&1
	check "--plot: an SVG" grep -q '<svg' "$T/p.svg"
else
	skip "--plot (no gnuplot: scripts/deps.sh installs it)"
fi

# --as: libdcache resolves as that user, every lookup right (exit 0), and
# says so in the header and the JSON
"$DCBENCH" micro "${brief[@]}" --threads 1 --scenarios small,negative --impls rcu,global \
	--no-bytes --no-updates --as 1000:1000:5,6 --json > "$T/as.json" 2> "$T/as.txt"
rc=$?
check_all "--as: exit 0, the header and the JSON say so" \
	'[ $rc = 0 ] && grep -q "^libdcache resolves as 1000:1000 with 2 groups" "$T/as.txt" && grep -q "\"as_ngroups\": *2" "$T/as.json"'

for bad in "--ref-node-bytes 5000" "--ref-node-bytes x" "--runs 0" "--threads 0" \
	   "--scenarios bogus" "--impls zfs" "--bogus" "--storm-threads 0" \
	   "--storm-threads 257" "--backend-delay-us 0" "--as 1" "--as 1:2:" "--as 1:x"; do
	# shellcheck disable=SC2086
	"$DCBENCH" micro $bad > /dev/null 2>&1
	check "refused: $bad (exit 2)" [ $? = 2 ]
done
"$DCBENCH" micro --tree "$T/none.tsv.xz" --scenarios small > /dev/null 2> "$T/err.txt"
rc=$?
check_all "a missing listing: exit 1, names it" '[ $rc = 1 ] && grep -q none.tsv.xz "$T/err.txt"'
# a listing past the lines its 32-bit index holds (2^26 + 1 lines, blank)
head -c $(((1 << 26) + 1)) /dev/zero | tr '\0' '\n' > "$T/huge.tsv"
"$DCBENCH" micro --tree "$T/huge.tsv" --scenarios small > /dev/null 2> "$T/err.txt"
rc=$?
rm -f "$T/huge.tsv"
check_all "a listing of too many lines: exit 1, says so" \
	'[ $rc = 1 ] && grep -q "huge.tsv: 67108865 lines, more than a listing may have" "$T/err.txt"'

# The thread counts take turns, run by run (1 2 1 2, not 1 1 2 2), so
# scaling can pair each 2-thread run with the 1-thread run beside it.
DCBENCH_MICRO_DEBUG=1 "$DCBENCH" micro "${brief[@]}" --runs 2 --scenarios small \
	--impls lfht --no-bytes --no-updates > /dev/null 2> "$T/order.txt"
# An untimed warm-up run leads each turn (warm1).
order=$(sed -n 's/^lfht\(-warm\)\{0,1\} T\([0-9]*\) w0:.*/\1\2/p' "$T/order.txt" |
	sed 's/^-//' | tr '\n' ' ')
check "runs: a warm-up, then the thread counts interleaved (warm1 1 2 warm1 1 2), were: $order" \
	[ "$order" = "warm1 1 2 warm1 1 2 " ]

# The depth scenarios, compared with each other, take turns in every
# round (2 16 2 16), so that their ratio pairs runs made side by side.
DCBENCH_MICRO_DEBUG=1 "$DCBENCH" micro "${brief[@]}" --runs 2 --threads 1 \
	--scenarios depth2,depth16 --impls lfht --no-bytes --no-updates > /dev/null 2> "$T/dorder.txt"
order=$(sed -n 's/^lfht T1 w0:.* \[depth\([0-9]*\)\]$/\1/p' "$T/dorder.txt" | tr '\n' ' ')
check "runs: the depths take turns in each round (2 16 2 16), were: $order" \
	[ "$order" = "2 16 2 16 " ]

# Scaling is the wall-clock throughput at N threads over the 1-thread run
# beside it (all threads' operations over the time from the start barrier
# to the last thread's end), not a rate over each thread's time on a CPU:
# with one run of each, exactly the ratio of the two rows' mops_wall.
if command -v python3 >/dev/null; then
	"$DCBENCH" micro "${brief[@]}" --scenarios small --impls lfht --no-bytes \
		--no-updates --json > "$T/wall.json" 2> /dev/null
	check "JSON: scaling is mops_wall at 2 threads over mops_wall at 1" python3 -c '
import json, sys
r = {c["threads"]: c for c in json.load(open(sys.argv[1]))["results"]}
w1, w2 = r[1]["mops_wall"], r[2]["mops_wall"]
sys.exit(not (w1 > 0 and abs(r[2]["scaling"] - w2 / w1) <= 1e-6 * (w2 / w1) + 1e-9))' "$T/wall.json"
else
	skip "JSON: scaling from wall-clock throughput (no python3)"
fi

# The kernel's figure with its syscall floor beside it, per component beyond it
check "report: the kernel's syscall floor" \
	grep -Eq '^ +1 thread: floor [0-9.]+ ns, -?[0-9.]+ ns/comp beyond' "$T/out.txt"
if command -v python3 >/dev/null; then
	check "JSON: the kernel's floor and ns per component beyond it, outside mixed" python3 -c '
import json, sys
k = [c for c in json.load(open(sys.argv[1]))["results"] if c["impl"] == "kernel"]
num = lambda c: all(isinstance(c[f], float) for f in
                    ("syscall_floor_ns", "ns_per_component_beyond_floor"))
sys.exit(not (len(k) == 6 and all(num(c) == (c["scenario"] != "mixed-10") for c in k)))' "$T/out.json"
else
	skip "JSON: the kernel's floor (no python3)"
fi

# The depth scenarios: one tree each of 4,096 files, every path exactly N
# components; every implementation (the kernel on its own tree) measured,
# no lookup failed, and each one's depth16/depth2 ratio reported.
"$DCBENCH" micro --tree "$TREE" --threads 1 --runs 1 --ms 20 --no-bytes --no-updates \
	--scenarios depth2,depth4,depth8,depth16 --json > "$T/depth.json" 2> "$T/depth.txt"
check "depth2..depth16: exit 0" [ $? = 0 ]
check "depth: 4096 paths in every tree" \
	[ "$(grep -cE '^depth(2|4|8|16): [0-9]+ entries, 4096 paths looked up' "$T/depth.txt")" = 4 ]
check "report: the depths side by side, rcu's ratio" \
	grep -Eq '^ +1  rcu +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9]+\.[0-9]{3}$' "$T/depth.txt"
if command -v python3 >/dev/null; then
	check "JSON: every depth, every implementation: lookups, none failed, N components each" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = {(c["scenario"], c["impl"]): c for c in d["results"]}
impls = ("rcu", "rwlock", "global", "rcu-ttl", "rcu-as", "kernel", "lfht", "mutex")
ok = all(r[("depth%d" % n, i)]["lookups"] > 0 and
         r[("depth%d" % n, i)]["wrong_lookups"] == 0 and
         r[("depth%d" % n, i)]["components"] == n * r[("depth%d" % n, i)]["lookups"]
         for n in (2, 4, 8, 16) for i in impls)
sys.exit(not (ok and d["wrong_lookups"] == 0 and d["unmeasured"] == 0))' "$T/depth.json"
	check "JSON: depth16_over_depth2 per implementation, from the ns per path" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rows = {x["impl"]: x for x in d["depth"] if x["threads"] == 1}
def good(x):
    ns = x["ns_per_path"]
    return (all(type(ns["depth%d" % n]) in (int, float) and ns["depth%d" % n] > 0
                for n in (2, 4, 8, 16)) and
            abs(x["depth16_over_depth2"] - ns["depth16"] / ns["depth2"]) < 1e-6 * x["depth16_over_depth2"])
sys.exit(not (len(rows) == 8 and all(good(x) for x in rows.values())))' "$T/depth.json"
	check "JSON: the depth goal is rcu's depth16_over_depth2, against 1.5" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
rcu = [x for x in d["depth"] if x["threads"] == 1 and x["impl"] == "rcu"][0]
g = [x for x in d["goals"] if x["goal"].startswith("depth16 1 thread: rcu ns/path")]
sys.exit(not (len(g) == 1 and g[0]["op"] == "<=" and g[0]["target"] == 1.5 and
              abs(g[0]["value"] - rcu["depth16_over_depth2"]) < 1e-3 * g[0]["value"] and
              g[0]["met"] == (g[0]["value"] <= 1.5)))' "$T/depth.json"
else
	skip "JSON: the depth scenarios (no python3)"
	skip "JSON: the depth goal (no python3)"
fi

# The cold-miss storm: every lookup a fresh name, so each reaches the
# backend exactly once; no lookup failed; the ratio to the ideal
# (threads / delay) cannot exceed 1, since every lookup sleeps the delay.
"$DCBENCH" micro --tree "$TREE" --runs 2 --ms 50 --no-bytes --no-updates \
	--scenarios storm --storm-threads 4 --backend-delay-us 100 --json \
	> "$T/storm.json" 2> "$T/storm.txt"
check "storm: exit 0" [ $? = 0 ]
check "report: storm's ideal, 4 threads / 100 us" \
	grep -q '^  ideal 40000 lookups/s (threads / delay)' "$T/storm.txt"
check "report: a storm row per mode, none failed" \
	[ "$(grep -cE '^  (rcu|rwlock|global) +[0-9]+ +[0-9.]+ .* 0$' "$T/storm.txt")" = 3 ]
check "report: the backend alone's storm row, none failed, no ratio to itself" \
	[ "$(grep -cE '^  alone +[0-9]+ +[0-9.]+ +- +[0-9.]+ .* 0$' "$T/storm.txt")" = 1 ]
if command -v python3 >/dev/null; then
	check "JSON: storm, every mode: lookups, none failed, one backend call each, ratios, switches" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["storm"]
def good(x):
    num = lambda k: type(x[k]) in (int, float)	# null: not measured
    return (x["runs"] == 2 and x["lookups"] > 0 and x["failed_lookups"] == 0 and
            x["backend_calls"] == x["lookups"] and x["dc_misses_per_lookup"] == 1 and
            all(num(k) for k in ("ratio_to_ideal", "ratio_to_measured_ideal",
                                 "miss_waits_per_lookup", "lock_waits_per_lookup",
                                 "backend_call_us", "cpu_us_per_lookup")) and
            0 < x["ratio_to_ideal"] <= 1.0001 and x["backend_call_us"] >= 100 and
            x["switches_per_lookup"] >= 0.5)	# each lookup sleeps once
sys.exit(not (s["threads"] == 4 and s["backend_delay_us"] == 100 and
              s["ideal_lookups_per_s"] == 40000 and
              [x["impl"] for x in s["results"]] == ["rcu", "rwlock", "global"] and
              all(good(x) for x in s["results"])))' "$T/storm.json"
	check "JSON: storm, the backend alone: its lookups, none failed; each mode's ratio to it" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["storm"]
a = s["alone"]
ok = (a["runs"] == 2 and a["lookups"] > 0 and a["failed_lookups"] == 0 and
      0 < a["ratio_to_ideal"] <= 1.0001 and a["backend_call_us"] >= 100 and
      a["cpu_us_per_lookup"] > 0 and a["switches_per_lookup"] >= 0.5 and
      abs(a["ratio_to_ideal"] - a["lookups_per_s"] / s["ideal_lookups_per_s"]) < 1e-6 and
      all(abs(x["ratio_to_alone"] - x["lookups_per_s"] / a["lookups_per_s"]) < 1e-6
          for x in s["results"]))
sys.exit(not ok)' "$T/storm.json"
else
	skip "JSON: the storm (no python3)"
	skip "JSON: storm, the backend alone (no python3)"
fi
"$DCBENCH" micro --tree "$TREE" --scenarios storm --impls lfht --runs 1 --ms 20 \
	--no-bytes --no-updates > /dev/null 2> "$T/storm-none.txt"
rc=$?
check_all "storm without a libdcache mode: exit 1, says why" \
	'[ $rc = 1 ] && grep -q "storm: no libdcache mode asked for" "$T/storm-none.txt"'

# Thread counts above the core count: every one measured, marked
# oversubscribed where it is, with its wall-clock throughput; and the
# bytes per entry reported beside them.
"$DCBENCH" micro --tree "$TREE" --scenarios hot --impls rcu --threads 8,16,32 \
	--runs 1 --ms 20 --no-updates --json > "$T/over.json" 2> "$T/over.txt"
check "hot at 8,16,32 threads: exit 0" [ $? = 0 ]
if command -v python3 >/dev/null; then
	check "JSON: 8, 16, 32 threads each measured, wall-clock Mops, oversubscribed flagged" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = {c["threads"]: c for c in d["results"] if c["scenario"] == "hot"}
ok = sorted(r) == [8, 16, 32] and all(
    c["operations"] > 0 and c["wrong_lookups"] == 0 and c["mops_wall"] > 0 and
    c["oversubscribed"] == (t > d["cores"]) for t, c in r.items())
sys.exit(not (ok and d["threads"] == [8, 16, 32] and d["bytes_per_entry"] > 0))' "$T/over.json"
else
	skip "JSON: hot above the core count (no python3)"
fi
check "report: bytes per cached entry beside them" \
	grep -Eq '^  the hot tree, max_entries = its size +[0-9.]+ B' "$T/over.txt"

# A listing with an entry twice: the kernel cannot create its tree.  A
# cell asked for and not measured fails the run, by name, and has no row.
printf 'd\ta\nf\ta/x.c\nf\ta/y.c\nf\ta/x.c\n' > "$T/twice.tsv"
"$DCBENCH" micro --tree "$T/twice.tsv" --scenarios hot --impls kernel --threads 1 \
	--runs 1 --ms 20 --no-bytes --no-updates --json > "$T/twice.json" 2> "$T/twice.txt"
rc=$?
check_all "no kernel tree: exit 1, the cell named" \
	'[ $rc = 1 ] && grep -q "^dcbench micro: hot kernel, 1 thread: not measured" "$T/twice.txt"'
if command -v python3 >/dev/null; then
	check "no kernel tree: no row in results, one in not_measured" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
nm = [(c["scenario"], c["impl"], c["by_design"]) for c in d["not_measured"]]
sys.exit(not (d["results"] == [] and nm == [("hot", "kernel", False)]))' "$T/twice.json"
else
	skip "no kernel tree: the JSON (no python3)"
fi

# The kernel's tree emptied under the timed run (through the magic link of
# dcbench's working directory, its root then): every lookup fails, cheaply,
# and the run must fail rather than report the speed.
# dcbench starts in an empty directory of its own and goes back there
# between runs: the removal below runs only while its working directory
# (/proc/PID/cwd) is on another file system than that directory and the
# checkout, that is, in the tree on its own tmpfs (whose path depends on
# the mount namespaces, so it is not matched by name)
mkdir "$T/jail"
jail_dev=$(stat -c %d "$T/jail") repo_dev=$(stat -c %d .)
(cd "$T/jail" && DCBENCH_MICRO_DEBUG=1 exec "$DCBENCH" micro "${brief[@]}" --threads 1 \
	--runs 3 --ms 400 --scenarios small --impls kernel --no-bytes --no-updates \
	> /dev/null 2> "$T/gone.txt") &
pid=$!
# once the first timed run has ended (its line printed; every answer was
# checked before it), the two runs left find the tree gone
for _ in $(seq 3000); do
	grep -q '^kernel T1 w0:' "$T/gone.txt" && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.01
done
for _ in $(seq 1000); do
	dev=$(stat -L -c %d "/proc/$pid/cwd" 2>/dev/null)
	if [ -n "$dev" ] && [ "$dev" != "$jail_dev" ] && [ "$dev" != "$repo_dev" ]; then
		find "/proc/$pid/cwd/" -mindepth 1 -xdev -delete 2>/dev/null
		break
	fi
	kill -0 $pid 2>/dev/null || break
	sleep 0.001
done
wait $pid
rc=$?
check_all "tree gone mid-run: exit 1, the wrong lookups named" \
	'[ $rc = 1 ] && grep -Eq "^dcbench micro: small kernel, 1 thread: [1-9][0-9]* timed lookups answered otherwise" "$T/gone.txt"'

t_finish
