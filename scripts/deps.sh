#!/usr/bin/env bash
# Install the Debian packages the build, the tests and the benchmarks need,
# when any is missing.  Safe to run again: it does nothing when all are there.
set -euo pipefail

pkgs=(gcc make pkg-config liburcu-dev liblzma-dev xz-utils clang strace
      gnuplot-nox libfuse3-dev fuse3 libseccomp-dev valgrind python3 man-db
      groff-base acl e2fsprogs passwd libnfs-dev libnfs-utils nfs-ganesha
      nfs-ganesha-vfs rpcbind iproute2)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
