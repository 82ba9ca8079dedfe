#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# nfs-server.sh - a private NFS-Ganesha server over one directory, for the
# NFS backend's tests and for trying it by hand (docs/nfs.md).
#
#   scripts/nfs-server.sh start DIR STATEDIR [PORT]
#   scripts/nfs-server.sh stop STATEDIR
#
# start writes STATEDIR/ganesha.conf (DIR exported with FSAL VFS as
# nfs://127.0.0.1/export, NFSv3 and NFSv4, no squashing, read-write to
# 127.0.0.1 alone; the server bound to 127.0.0.1, NFS on PORT, 2049 by
# default; NFSv4 owners as bare numbers; no grace period unless
# NFS_SERVER_GRACE_PERIOD gives one in seconds (1 to 180); attributes
# never cached, so that changes made in DIR directly show), starts rpcbind
# when none answers, starts ganesha.nfsd with its pid file, log and
# recovery directory in STATEDIR, and waits (NFS_SERVER_WAIT seconds, 30)
# until the export answers a MOUNT.  It prints the export's URL.  stop
# sends SIGTERM, then SIGKILL after NFS_SERVER_GRACE seconds (5; ganesha
# may not exit on SIGTERM while it holds clients), and stops rpcbind only
# when start started it.
#
# Exit status: 0 done; 1 the server could not start or stop (the reason,
# and the log's tail, on stderr); 2 usage error.  Needs root.
set -uo pipefail

PSEUDO=/export
WAIT=${NFS_SERVER_WAIT:-30}
GRACE=${NFS_SERVER_GRACE:-5}
GRACE_PERIOD=${NFS_SERVER_GRACE_PERIOD:-0}

die() { echo "nfs-server: $*" >&2; exit 1; }
usage() {
	echo "usage: nfs-server.sh start DIR STATEDIR [PORT] | stop STATEDIR" >&2
	exit 2
}

# running PID: the process runs (a zombie nobody reaped has exited)
running() {
	local st

	st=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) && [ -n "$st" ] && [ "$st" != Z ]
}
# alive PIDFILE: the pid it names runs
alive() { [ -s "$1" ] && running "$(cat "$1")"; }

# seconds since T0 (an EPOCHREALTIME), with one decimal
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }

log_tail() {
	[ -s "$1" ] || { echo "nfs-server: (the log $1 is empty)" >&2; return; }
	echo "nfs-server: the last lines of $1:" >&2
	tail -15 "$1" | sed 's/^/    /' >&2
}

# The directory the FSAL's plugin lies in: where the package put it.
plugins_dir() {
	local so

	so=$(dpkg -L nfs-ganesha-vfs 2>/dev/null | grep '/libfsalvfs\.so$' | head -1)
	[ -n "$so" ] && dirname "$so"
}

# The NFSv4 block's grace lines: none, or GRACE_PERIOD seconds.
grace_conf() {
	if [ "$GRACE_PERIOD" -eq 0 ]; then
		printf '\tGraceless = true;'
	else
		printf '\tGraceless = false;\n\tGrace_Period = %d;\n\tLease_Lifetime = %d;' \
			"$GRACE_PERIOD" "$GRACE_PERIOD"
	fi
}

write_conf() { # write_conf DIR STATEDIR PORT
	local plugins

	plugins=$(plugins_dir) || true
	cat >"$2/ganesha.conf" <<EOF
# written by scripts/nfs-server.sh: DIR exported to 127.0.0.1 alone
NFS_CORE_PARAM {
	Bind_addr = 127.0.0.1;
	NFS_Port = $3;
	Protocols = 3, 4;
	Enable_NLM = false;
	Enable_RQUOTA = false;
	Enable_UDP = false;
	# NFSv3 mounts name the export by its pseudo path, as NFSv4 does
	mount_path_pseudo = true;
	${plugins:+Plugins_Dir = "$plugins";}
}
NFS_KRB5 {
	Active_krb5 = false;
}
NFSv4 {
	# owners and groups as bare numbers, never names through idmapd
	Allow_Numeric_Owners = true;
	Only_Numeric_Owners = true;
	UseGetpwnam = false;
$(grace_conf)
	RecoveryBackend = fs;
	RecoveryRoot = "$2/recovery";
}
EXPORT {
	Export_Id = 1;
	Path = "$1";
	Pseudo = "$PSEUDO";
	Protocols = 3, 4;
	Transports = TCP;
	SecType = sys;
	Squash = none;
	# attributes are asked of the file system each time, so that what
	# is changed in DIR directly shows through the server at once
	Attr_Expiration_Time = 0;
	Access_Type = None;
	CLIENT {
		Clients = 127.0.0.1;
		Access_Type = RW;
	}
	FSAL {
		Name = VFS;
	}
}
LOG {
	Default_Log_Level = EVENT;
}
EOF
}

# rpcbind answers, or is started here (its pid kept in STATEDIR).
ensure_rpcbind() { # ensure_rpcbind STATEDIR
	local i

	rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
	command -v rpcbind >/dev/null || die "rpcbind is not installed (scripts/deps.sh installs it)"
	rpcbind -f -w >"$1/rpcbind.log" 2>&1 &
	echo $! >"$1/rpcbind.pid"
	for ((i = 0; i < 50; i++)); do
		rpcinfo -p 127.0.0.1 >/dev/null 2>&1 && return 0
		alive "$1/rpcbind.pid" || break
		sleep 0.1
	done
	log_tail "$1/rpcbind.log"
	die "rpcbind did not start"
}

# The export answers a MOUNT (and so NFS) through rpcbind.
answers() {
	timeout 5 nfs-ls "nfs://127.0.0.1$PSEUDO?version=3" >/dev/null 2>&1
}

start() { # start DIR STATEDIR [PORT]
	local dir state port t0 i

	[ $# -ge 2 ] && [ $# -le 3 ] || usage
	port=${3:-2049}
	[[ $port =~ ^[0-9]+$ ]] && [ "$port" -gt 0 ] && [ "$port" -lt 65536 ] ||
		die "PORT must be a number from 1 to 65535, not '$port'"
	[[ $GRACE_PERIOD =~ ^[0-9]+$ ]] && [ "$GRACE_PERIOD" -le 180 ] ||
		die "NFS_SERVER_GRACE_PERIOD must be a number of seconds from 0 to 180, not '$GRACE_PERIOD'"
	[ "$(id -u)" -eq 0 ] || die "must run as root (ganesha.nfsd serves every user's files)"
	command -v ganesha.nfsd >/dev/null ||
		die "ganesha.nfsd is not installed (scripts/deps.sh installs nfs-ganesha, nfs-ganesha-vfs)"
	[ -n "$(plugins_dir)" ] || die "the VFS FSAL is not installed (package nfs-ganesha-vfs)"
	command -v nfs-ls >/dev/null || die "nfs-ls is not installed (package libnfs-utils)"
	dir=$(cd "$1" 2>/dev/null && pwd -P) || die "$1: not a directory"
	mkdir -p "$2/recovery" || die "$2: cannot create it"
	state=$(cd "$2" && pwd -P)
	if alive "$state/ganesha.pid"; then
		die "a server already runs for $state (pid $(cat "$state/ganesha.pid"))"
	fi
	write_conf "$dir" "$state" "$port"
	: >"$state/ganesha.log"
	t0=$EPOCHREALTIME
	ensure_rpcbind "$state"
	# -F: stays ours, so the pid is the one $! gives; -p: where it says so too
	setsid ganesha.nfsd -F -f "$state/ganesha.conf" -L "$state/ganesha.log" \
		-p "$state/ganesha.nfsd.pid" -N NIV_EVENT </dev/null >>"$state/ganesha.log" 2>&1 &
	echo $! >"$state/ganesha.pid"
	for ((i = 0; i < WAIT * 5; i++)); do
		if ! alive "$state/ganesha.pid"; then
			log_tail "$state/ganesha.log"
			stop_rpcbind "$state"
			die "ganesha.nfsd exited at start (configuration $state/ganesha.conf)"
		fi
		if answers; then
			echo "nfs-server: nfs://127.0.0.1$PSEUDO serves $dir" \
				"(pid $(cat "$state/ganesha.pid"), up in $(since "$t0") s)"
			return 0
		fi
		sleep 0.2
	done
	log_tail "$state/ganesha.log"
	stop "$state" >/dev/null 2>&1
	die "the export did not answer within $WAIT s"
}

stop_rpcbind() { # stop_rpcbind STATEDIR: only the one start started
	local pf=$1/rpcbind.pid

	[ -s "$pf" ] || return 0
	alive "$pf" && kill -TERM "$(cat "$pf")" 2>/dev/null
	rm -f "$pf"
}

stop() { # stop STATEDIR
	local pf pid i

	[ $# -eq 1 ] || usage
	pf=$1/ganesha.pid
	[ -d "$1" ] || die "$1: no such state directory"
	if alive "$pf"; then
		pid=$(cat "$pf")
		kill -TERM "$pid"
		for ((i = 0; i < GRACE * 10; i++)); do
			running "$pid" || break
			sleep 0.1
		done
		if running "$pid"; then
			echo "nfs-server: ganesha.nfsd $pid ignored SIGTERM for $GRACE s: SIGKILL" >&2
			kill -KILL "$pid"
			for ((i = 0; i < 50; i++)); do
				running "$pid" || break
				sleep 0.1
			done
			running "$pid" && die "ganesha.nfsd $pid survived SIGKILL"
		fi
	fi
	rm -f "$pf" "$1/ganesha.nfsd.pid"
	stop_rpcbind "$1"
	return 0
}

case ${1:-} in
start) shift; start "$@" ;;
stop) shift; stop "$@" ;;
*) usage ;;
esac
