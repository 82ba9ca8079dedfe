#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/fsmeta.sh - `dcbench fsmeta` on a tree of Linux 6.1's shape: the
# listing data/linux-6.1-tree.tsv.xz materialised with empty
# files (once, kept in the work directory), then
#
#   build/dcbench fsmeta --dir TREE --work WORK/run [OPTIONS...]
#
# which runs the load natively, through dcfs in each mode and through
# libfuse's passthrough_ll, and prints the table and the goals
# (docs/dcbench.md, "fsmeta").
#
#   bench/fsmeta.sh [--tree subset|full|N] [--work DIR] [--json FILE]
#                   [--nfs [--nfs-delay-us US] [--nfs-version 3|4]]
#                   [any other dcbench fsmeta option: --threads N,
#                    --repeat R, --passes P, --mix K, --configs LIST,
#                    --entry-timeout S, --attr-timeout S, --dcfs-opts "..."]
#
# --tree subset (default): the listing without drivers/, arch/, sound/,
#   tools/ and Documentation/ (13,687 entries: what a build of the core
#   reads).  full: all 84,144 entries; a daemon that keeps a descriptor
#   per inode the kernel holds (both do) then runs out of descriptors
#   under a hard limit of 20,000, and the failures are reported as such.
#   N: the first N entries of the subset.
# --work DIR: where the tree, the passthrough_ll build and the logs stay
#   (default ${TMPDIR:-/tmp}/dcfs-fsmeta).
# --json FILE: dcbench's JSON document into FILE; the report still shows.
# --nfs: serve the tree with scripts/nfs-server.sh (NFS-Ganesha, stopped
#   at the end) and measure dcfs over that export, with its name cache
#   and without (--configs native,nfs,nfs-nocache unless given).
# --nfs-delay-us US: the client reaches the server through build/netdelay,
#   which delays each direction by US microseconds (a LAN, where the
#   kernel has no netem qdisc), connecting to its ports directly
#   (nfsport=, mountport=: rpcbind would name the server's own).
# --nfs-version 3|4: the protocol dcfs speaks to the server (default 3).
# DCFS_OPTS, if set, is passed as --dcfs-opts.
# A real tree works as well, without this script:
#   build/dcbench fsmeta --dir /var/tmp/dcache-kernbench/linux-source-6.1
# (bench/kernbench-setup.sh unpacks it).  Needs root, build/dcbench and
# build/dcfs (make).
set -u
cd "$(dirname "$0")/.."
tree=subset work= json= nfs=0 configs=0 delay= version=3
args=()
while [ $# -gt 0 ]; do
	case $1 in
	--tree) tree=$2; shift ;;
	--work) work=$2; shift ;;
	--json) json=$2; shift ;;
	--nfs) nfs=1 ;;
	--nfs-delay-us) delay=$2; shift ;;
	--nfs-version) version=$2; shift ;;
	--configs) configs=1; args+=("$1" "$2"); shift ;;
	-h|--help) sed -n '3,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) args+=("$1") ;;
	esac
	shift
done
die() { echo "fsmeta.sh: $*" >&2; exit 1; }
[[ $version =~ ^[34]$ ]] || die "--nfs-version: 3 or 4, not '$version'"
[ "$(id -u)" = 0 ] || die "needs root (mounts, drop_caches)"
[ -x build/dcbench ] && [ -x build/dcfs ] || die "build/dcbench and build/dcfs first (make)"
LISTING=${FSMETA_LISTING:-$PWD/data/linux-6.1-tree.tsv.xz}
[ -r "$LISTING" ] || die "no tree listing at $LISTING"
work=${work:-${TMPDIR:-/tmp}/dcfs-fsmeta}
tree_dir=$work/tree-$tree
mkdir -p "$work/run" || die "cannot create $work"

# ---- the tree: the listing materialised with empty files ------------------
if [ ! -e "$tree_dir.complete" ]; then
	rm -rf "$tree_dir"
	mkdir -p "$tree_dir"
	sel="$work/listing-$tree.tsv"
	case $tree in
	full) xz -dc "$LISTING" > "$sel" ;;
	subset|[0-9]*)
		xz -dc "$LISTING" |
			awk -F'\t' '$2 !~ /^(drivers|arch|sound|tools|Documentation)(\/|$)/' > "$sel"
		if [ "$tree" != subset ]; then
			head -n "$tree" "$sel" > "$sel.n" && mv "$sel.n" "$sel"
		fi ;;
	*) die "--tree: subset, full or a number" ;;
	esac
	(cd "$tree_dir" &&
		awk -F'\t' '$1 == "d" { print $2 }' "$sel" | xargs -r -d '\n' mkdir -p &&
		awk -F'\t' '$1 == "f" { n = split($2, a, "/"); if (n > 1) { sub("/[^/]*$", "", $2); print $2 } }' "$sel" |
			sort -u | xargs -r -d '\n' mkdir -p &&
		awk -F'\t' '$1 == "f" { print $2 }' "$sel" | xargs -r -d '\n' touch &&
		awk -F'\t' '$1 == "l" { print $2 "\t" $3 }' "$sel" |
			while IFS=$'\t' read -r p t; do mkdir -p "$(dirname "$p")"; ln -sfn "$t" "$p"; done) ||
		die "could not build the tree"
	touch "$tree_dir.complete"
fi

[ -n "${DCFS_OPTS:-}" ] && args+=(--dcfs-opts "$DCFS_OPTS")
if [ $nfs = 1 ]; then
	state=$work/nfs-state
	scripts/nfs-server.sh start "$tree_dir" "$state" >&2 || die "the NFS server did not start"
	trap 'scripts/nfs-server.sh stop "$state" >&2' EXIT
	url=nfs://127.0.0.1/export
	if [ -n "$delay" ]; then
		[ -x build/netdelay ] || die "build/netdelay first (make)"
		mport=$(rpcinfo -p 127.0.0.1 | awk '$2 == 3 && $3 == "tcp" && $5 == "mountd" { print $4; exit }')
		[ -n "$mport" ] || die "the server's mountd port is not registered"
		# two ports nothing listens on
		p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
		while ss -ltnH "( sport = :$p1 or sport = :$p2 )" | grep -q .; do
			p1=$((20000 + RANDOM % 20000)); p2=$((p1 + 1))
		done
		coproc RELAY { exec build/netdelay --delay-us "$delay" "$p1:2049" "$p2:$mport"; }
		trap 'kill $RELAY_PID; scripts/nfs-server.sh stop "$state" >&2' EXIT
		read -r -t 10 ready <&"${RELAY[0]}"
		[ "${ready:-}" = "netdelay: ready" ] || die "netdelay did not start"
		url="$url?nfsport=$p1&mountport=$p2&version=$version"
		echo "fsmeta.sh: the export through netdelay, $delay us each way: $url" >&2
	fi
	[ -n "$delay" ] || url="$url?version=$version"
	args+=(--nfs "$url")
	[ $configs = 1 ] || args+=(--configs native,nfs,nfs-nocache)
fi
if [ -n "$json" ]; then
	build/dcbench fsmeta --dir "$tree_dir" --work "$work/run" "${args[@]}" --json > "$json"
else
	build/dcbench fsmeta --dir "$tree_dir" --work "$work/run" "${args[@]}"
fi
rc=$?
exit $rc
