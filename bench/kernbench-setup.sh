#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/kernbench-setup.sh - the kernel tree that dcbench kernbench builds:
# Debian's linux-source-6.1 unpacked and configured with tinyconfig, plus
# the packages a kernel build needs.  Prints the tree's path last.
#
#   bench/kernbench-setup.sh [DIR]     (default: $KERNBENCH_DIR or
#                                       /var/tmp/dcache-kernbench)
#
# Idempotent: an unpacked, configured tree is reused.  Needs root for
# apt-get when a package is missing.
set -eu
dir=${1:-${KERNBENCH_DIR:-/var/tmp/dcache-kernbench}}
tarball=/usr/src/linux-source-6.1.tar.xz
pkgs="linux-source-6.1 make gcc bc flex bison libelf-dev libssl-dev xz-utils"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "$(id -u)" = 0 ] || { echo "kernbench-setup: needs root to install:$missing" >&2; exit 1; }
	echo "kernbench-setup: installing$missing" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi
[ -r "$tarball" ] || { echo "kernbench-setup: no $tarball" >&2; exit 1; }

tree=$dir/linux-source-6.1
mkdir -p "$dir"
if [ ! -e "$tree/.unpacked" ]; then
	echo "kernbench-setup: unpacking $tarball into $dir" >&2
	rm -rf "$tree"
	tar -C "$dir" -xJf "$tarball"
	touch "$tree/.unpacked"
fi
if [ ! -e "$tree/.config" ]; then
	echo "kernbench-setup: make tinyconfig" >&2
	make -C "$tree" -s tinyconfig >/dev/null
fi
echo "$tree"
