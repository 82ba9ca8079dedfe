#!/usr/bin/env bash
# tests/test_install.sh [BUILD_DIR] - the library as its users get it:
# installed with make install-lib / install into a scratch prefix (with a
# multiarch LIBDIR), found through pkg-config, the README's example and
# every program in examples/ built against the installed shared library
# and statically, every function the installed headers declare exported,
# make uninstall leaving nothing, and make lib needing liburcu alone.
#
# Prints "ok N - ..." / "not ok N - ..." and ends with
# "test_install: N passed, M failed, 0 skipped"; exit 1 if any failed.
set -u
cd "$(dirname "$0")/.."
top=$PWD
BUILD=${1:-build}
T=$(mktemp -d /tmp/test_install.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
T_NAME=test_install
. tests/lib.sh

# check DESC CMD...: one check, passed when CMD (one command, or a
# function holding a whole condition) exits 0.

P=$T/prefix
L=$P/lib/x86_64-linux-gnu
mk() { make -s --no-print-directory -C "$top" BUILD="$BUILD" "$@"; }

# ---- install-lib into a prefix the build did not start with ----------------

check "make install-lib PREFIX LIBDIR" mk install-lib PREFIX="$P" LIBDIR="$L" >"$T/log" 2>&1
installed_lib() {
	[ -f "$P/include/dcache.h" ] && [ -f "$P/include/dcache-debug.h" ] &&
	[ -f "$L/libdcache.a" ] && [ -f "$L/libdcache.so.$version" ] &&
	[ -L "$L/libdcache.so.$soversion" ] && [ -L "$L/libdcache.so" ] &&
	[ -f "$L/pkgconfig/dcache.pc" ]
}
version=$(sed -n 's/^#define DC_VERSION_STRING[^"]*"\(.*\)"/\1/p' include/dcache.h)
soversion=$(sed -n 's/^SOVERSION *:= *//p' Makefile)
check "the Makefile names the soname's number ($soversion)" test -n "$soversion"
check "headers, libdcache.a, .so.$version and its links, dcache.pc installed" installed_lib
pc_dirs() {
	grep -qx "prefix=$P" "$L/pkgconfig/dcache.pc" &&
	grep -qx "libdir=$L" "$L/pkgconfig/dcache.pc" &&
	grep -qx "includedir=$P/include" "$L/pkgconfig/dcache.pc"
}
check "dcache.pc names the PREFIX and LIBDIR installed to" pc_dirs

export PKG_CONFIG_PATH=$L/pkgconfig
check "pkg-config --modversion dcache is the header's $version" \
	test "$(pkg-config --modversion dcache 2>&1)" = "$version"

# Every function the installed headers declare is exported by the .so.
# (static inline functions are the header's own)
grep -hv '^static inline' "$P"/include/dcache*.h |
	sed -n 's/^[a-z][a-z0-9_ ]*[ *]\(dc_[a-z0-9_]*\)(.*/\1/p' | sort -u >"$T/declared"
nm -D --defined-only "$L/libdcache.so" | awk '$2 == "T" { print $3 }' | sort -u >"$T/exported"
missing=$(comm -23 "$T/declared" "$T/exported" | tr '\n' ' ')
check "every declared function is exported (missing: ${missing:-none})" test -z "$missing"
check "the headers declare functions at all ($(wc -l <"$T/declared") found)" test "$(wc -l <"$T/declared")" -gt 40
extra=$(comm -13 "$T/declared" "$T/exported" | tr '\n' ' ')
check "nothing but declared functions exported (extra: ${extra:-none})" test -z "$extra"

# ---- the README's example and examples/, against what was installed ----

awk '/^```c$/ { on = 1; next } /^```$/ { on = 0 } on' README.md >"$T/readme.c"
check "README has a C example" test -s "$T/readme.c"

# build NAME SRC: shared, through pkg-config, from the installed prefix
build_shared() {
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Werror $(pkg-config --cflags dcache) "$2" -o "$T/$1" \
		$(pkg-config --libs dcache) >"$T/$1.log" 2>&1 || { cat "$T/$1.log"; return 1; }
	LD_LIBRARY_PATH=$L ldd "$T/$1" | grep -q "$L/libdcache.so.$soversion"
}
build_static() {
	# shellcheck disable=SC2046
	cc -std=c11 -Wall -Werror -static $(pkg-config --cflags dcache) "$2" -o "$T/$1" \
		$(pkg-config --static --libs dcache) >"$T/$1.log" 2>&1 || { cat "$T/$1.log"; return 1; }
	! ldd "$T/$1" >/dev/null 2>&1
}
runs_readme() { LD_LIBRARY_PATH=$L "$T/readme" | grep -q '^inode [0-9]'; }

check "README example links against installed libdcache.so" build_shared readme "$T/readme.c"
check "README example runs: resolves share/doc under /usr" runs_readme
check "README example links statically (pkg-config --static)" build_static readme-static "$T/readme.c"
runs_static() { "$T/readme-static" | grep -q '^inode [0-9]'; }
check "static README example runs" runs_static

for src in examples/*.c; do
	name=$(basename "$src" .c)
	check "examples/$name.c links against installed libdcache.so" build_shared "$name" "$src"
	check "examples/$name.c links statically" build_static "$name-static" "$src"
done
runs_resolve() { LD_LIBRARY_PATH=$L "$T/resolve" /usr share/doc lib | grep -c inode | grep -qx 2; }
runs_memfs()   { LD_LIBRARY_PATH=$L "$T/memfs" | grep -q '^lib/main.c .*inode'; }
runs_watch()   { echo share | LD_LIBRARY_PATH=$L "$T/watch" /usr 0 2>/dev/null | grep -qx 'share: exists'; }
check "examples/resolve runs" runs_resolve
check "examples/memfs runs" runs_memfs
check "examples/watch runs" runs_watch

# ---- the full install, then uninstall ----------------------------------------

check "make install PREFIX LIBDIR" mk install PREFIX="$P" LIBDIR="$L" >"$T/log" 2>&1
installed_all() {
	local m

	[ -x "$P/bin/dcfs" ] && [ -x "$P/bin/dcpath" ] && [ -x "$P/bin/dcbench" ] &&
	[ -f "$P/share/dcache/linux-6.1-tree.tsv.xz" ] || return 1
	for m in man/*.[0-9]; do
		[ -e "$m" ] || continue
		[ -f "$P/share/man/man${m##*.}/$(basename "$m")" ] || return 1
	done
}
check "tools, man pages and data installed" installed_all
check "make uninstall" mk uninstall PREFIX="$P" LIBDIR="$L" >"$T/log" 2>&1
left=$(find "$P" -type f -o -type l | head -5 | tr '\n' ' ')
check "uninstall leaves no file behind (left: ${left:-none})" test -z "$left"

# ---- make lib asks pkg-config for liburcu alone ------------------------------

cat >"$T/pkg-config" <<'EOF'
#!/bin/sh
# pkg-config on a machine with liburcu alone
for a; do
	case $a in fuse3|liburcu-cds|liblzma) exit 1 ;; esac
done
exec pkg-config "$@"
EOF
chmod +x "$T/pkg-config"
lib_alone() {
	make -s --no-print-directory -C "$top" BUILD="$T/b" PKG_CONFIG="$T/pkg-config" lib \
		>"$T/lib.log" 2>&1 && [ -f "$T/b/libdcache.so" ] && [ -f "$T/b/dcache.pc" ]
}
check "make lib builds with liburcu alone" lib_alone
tools_say_what_is_missing() {
	! make -s --no-print-directory -C "$top" BUILD="$T/b" PKG_CONFIG="$T/pkg-config" all \
		>"$T/all.log" 2>&1 &&
	grep -Eq '(fuse3|liburcu-cds|liblzma) not found by' "$T/all.log"
}
check "make without fuse3 stops naming the missing package" tools_say_what_is_missing

t_finish
