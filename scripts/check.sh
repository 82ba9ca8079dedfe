#!/usr/bin/env bash
# make check: build and run every test, three times over --
#   plain (-O2), ASan+UBSan, TSan -- plus a warning-free build with clang.
# Stress tests run DC_TEST_SECONDS seconds per mode (default 2).
# Ends with "N passed, N failed, N skipped", counting each test's own
# checks where it prints them (a build, or a test that prints no count,
# is one); exits 1 if anything failed.
set -u
cd "$(dirname "$0")/.."
export DC_TEST_SECONDS="${DC_TEST_SECONDS:-2}"
export DC_TEST_DATA="$PWD/tests/data"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSAN_OPTIONS="suppressions=$PWD/tests/tsan.supp halt_on_error=1 second_deadlock_stack=1"
jobs=$(nproc 2>/dev/null || echo 2)
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0 failed=0 skipped=0
# what git sees before: the tests must leave the tree as they found it
tree_before=$(git status --porcelain 2>/dev/null)

# counts LOG: "P F S" from a test's closing line ("NAME: N passed, M
# failed[, K skipped]" or "NAME: N checks, M failed[, K skipped]"), or
# nothing when it printed neither.
counts() {
	sed -nE 's/^[A-Za-z0-9_.]+: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$/\1 \2 \4/p
		  s/^[A-Za-z0-9_.]+: ([0-9]+) checks, ([0-9]+) failed(, ([0-9]+) skipped)?$/= \1 \2 \4/p' "$1" |
		tail -1 | awk '$1 == "=" { print $2 - $3, $3, $4 + 0; next } { print $1, $2, $3 + 0 }'
}

# run NAME CMD...: one test; its output is shown only when it fails.  Its
# own counts go into the totals; a failure counts at least one failed
# check, whatever it printed.  Returns 1 when it failed.
run() {
	local name=$1 log rc p=1 f=0 s=0 c
	shift
	log="$logs/$(echo "$name" | tr -c 'A-Za-z0-9_-' _).log"
	local t0=$SECONDS
	"$@" >"$log" 2>&1
	rc=$?
	c=$(counts "$log")
	[ -n "$c" ] && read -r p f s <<<"$c"
	if [ $rc -eq 0 ] && [ "$f" -eq 0 ]; then
		passed=$((passed + p)) skipped=$((skipped + s))
		echo "ok - $name ($((SECONDS - t0))s): $(grep -E 'checks|passed|violations' "$log" | tail -1)"
	elif [ $rc -eq 77 ]; then
		skipped=$((skipped + 1))
		echo "skip - $name: $(tail -1 "$log")"
	else
		# a crash, or a failure its own count missed: one at least
		[ "$f" -gt 0 ] || f=1
		[ -n "$c" ] && passed=$((passed + p))
		failed=$((failed + f)) skipped=$((skipped + s))
		echo "not ok - $name (exit $rc)"
		show_failure "$log" | sed 's/^/    /'
		return 1
	fi
}

# A sanitizer report in full (both stacks of a race, say: the tail of the
# log would cut it), a script's failed checks wherever they are in its
# log, or else the last lines.
show_failure() {
	local pat='^(WARNING|ERROR): [A-Za-z]+Sanitizer|runtime error:'

	if grep -qE "$pat" "$1"; then
		awk -v pat="$pat" '$0 ~ pat { on = 1 } on' "$1" | head -200
	elif grep -q '^not ok' "$1"; then
		# a script's failed checks, each with the comment lines after it,
		# wherever they are in a long log; then its end
		awk '/^not ok/ { on = 1; print; next } on && /^#/ { print; next } { on = 0 }' "$1" | head -100
		echo ...
		tail -5 "$1"
	else
		tail -40 "$1"
	fi
}

# every test program a build must make: one per tests/test_*.c, and the
# fuzz corpora replayed
expected=$(cd tests && ls test_*.c | sed 's/\.c$//'; echo test_corpus_walk; echo test_corpus_import)
for san in "" asan tsan; do
	label=${san:-plain}
	build=build${san:+-$san}
	# a failed build leaves the last one's programs: none of them runs
	if ! run "build $label" make -s -j"$jobs" SAN="$san" WERROR=-Werror tests; then
		failed=$((failed + $(wc -w <<<"$expected")))
		echo "not ok - $label: $(wc -w <<<"$expected") test programs not run (the build failed)"
		continue
	fi
	for t in $expected; do
		if [ -x "$build/tests/$t" ]; then
			run "$label $t" "$build/tests/$t"
		else
			failed=$((failed + 1))
			echo "not ok - $label $t: not built"
		fi
	done
done
# the resolver against the kernel's own path resolution (openat2)
run "plain test_dcpath.sh" tests/test_dcpath.sh build
# dcfs end to end through a real FUSE mount (skipped without /dev/fuse)
run "plain test_dcfs.sh" tests/test_dcfs.sh build
run "asan test_dcfs.sh" tests/test_dcfs.sh build-asan
# dcfs against unprivileged users: attacks refused through the mount as natively
run "plain test_security.sh" tests/test_security.sh build
run "tsan test_security.sh" tests/test_security.sh build-tsan
# libdcache over NFS: dcpath on an NFS-Ganesha export against the kernel
# (skipped without root, the server or libnfs)
run "plain test_nfs.sh" tests/test_nfs.sh build
run "asan test_nfs.sh" tests/test_nfs.sh build-asan
run "plain test_nfs.sh (NFSv4)" tests/test_nfs.sh build 4
run "asan test_nfs.sh (NFSv4)" tests/test_nfs.sh build-asan 4
# dcfs over NFS: conformance against the exported directory, two clients,
# a server restart, a compile (skipped as test_nfs.sh is)
run "plain test_nfs_dcfs.sh" tests/test_nfs_dcfs.sh build
run "asan test_nfs_dcfs.sh" tests/test_nfs_dcfs.sh build-asan
run "plain test_nfs_dcfs.sh (NFSv4)" tests/test_nfs_dcfs.sh build 4
run "asan test_nfs_dcfs.sh (NFSv4)" tests/test_nfs_dcfs.sh build-asan 4
# dcbench micro, briefly, on the shipped tree listing (skipped without it)
run "plain test_micro.sh" tests/test_micro.sh build
run "asan test_micro.sh" tests/test_micro.sh build-asan
# dcbench kernbench on a stand-in tree, compiled through dcfs
run "plain test_kernbench.sh" tests/test_kernbench.sh build
# the library installed, linked through pkg-config, README and examples/
run "plain test_install.sh" tests/test_install.sh build
# the tools' options, messages, exit codes and man pages
run "plain test_tools.sh" tests/test_tools.sh build
# clang: the same sources, no warnings
if command -v clang >/dev/null; then
	run "build clang" make -s -j"$jobs" CC=clang BUILD=build-clang WERROR=-Werror tests
else
	skipped=$((skipped + 1))
	echo "skip - build clang: clang is not installed"
fi

if [ "$(git status --porcelain 2>/dev/null)" = "$tree_before" ]; then
	passed=$((passed + 1))
	echo "ok - the tests left the source tree as they found it (git status)"
else
	failed=$((failed + 1))
	echo "not ok - the tests changed the source tree:"
	diff <(echo "$tree_before") <(git status --porcelain 2>/dev/null) | sed 's/^/    /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
