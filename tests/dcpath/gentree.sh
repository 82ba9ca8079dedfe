#!/usr/bin/env bash
# gentree.sh DIR - build the dcpath test tree in DIR (created if missing,
# must be empty).  Every case here is referenced from paths.txt/paths.sh or
# from the by-value assertions in tests/test_dcpath.sh: keep them in sync.
set -euo pipefail
export LC_ALL=C

[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
mkdir -p "$1"
cd "$1"
if [ -n "$(ls -A .)" ]; then echo "gentree: $1 is not empty" >&2; exit 2; fi

rep() { local s="" i; for ((i = 0; i < $2; i++)); do s+="$1"; done; printf '%s' "$s"; }

# --- plain directories and files --------------------------------------------
mkdir -p dir1/sub top dir2 empty upl chain
echo file >file
echo f >dir1/file
echo d >dir1/sub/deepfile
echo t >top/t
echo dash >dir1/-dash
echo hid >dir1/.hidden
echo dots >dir1/...
echo u >upl/file
ln file dir1/hardlink             # same inode as /file
mkfifo fifo

# --- simple relative links ----------------------------------------------------
ln -s file lfile                  # link to a file
ln -s dir1 ldir                   # link to a dir
ln -s dir1/ ldir_slash            # target with trailing slash (dir): ok
ln -s file/ lfile_slash           # target with trailing slash (file): ENOTDIR
ln -s dir1/sub rel_sub            # two-component relative target
ln -s dir1/sub/../file rel_dotdot # '..' inside the target (-> /dir1/file)
ln -s ../../file dir1/sub/l_up2   # climbs to the root's file
ln -s ../ dir1/sub/l_updir        # -> dir1
ln -s .. dir1/up                  # -> root
ln -s . dir1/self_dot             # -> dir1
ln -s . dot                       # -> root
ln -s .. dotdot                   # '..' at the root stays at the root
ln -s lfile lfile2                # 2-link chain to a file
ln -s ldir/sub ldir_sub           # link through a link

# --- absolute links (resolve inside the root under RESOLVE_IN_ROOT/chroot) ----
ln -s /dir1/file abs_file
ln -s /dir1/sub abs_dir
ln -s / abs_root
ln -s //dir1//sub// abs_slashes
ln -s /nonexistent abs_dangle
ln -s /../../../dir1 abs_dotdot
ln -s /ldir/sub abs_chain
ln -s /dir1/../top dir1/sub/abs_up
ln -s /abs_dir/deepfile dir1/abs_nested

# --- escapes: many '..' must clamp at the root ----------------------------------
ln -s "$(rep ../ 12)top" esc
ln -s "dir1/sub/$(rep ../ 20)file" esc_deep
ln -s "$(rep ../ 8)top/t" dir1/sub/esc2
ln -s "/$(rep ../ 30)" esc_root

# --- dangling -------------------------------------------------------------------
ln -s nonexistent dangle
ln -s nonexistent/ dangle_slash
ln -s dir1/nonexistent/x dangle_deep
ln -s file/x via_file             # ENOTDIR when followed

# --- loops ----------------------------------------------------------------------
ln -s self self
ln -s loopb loopa
ln -s loopa loopb
ln -s selfdir/x selfdir           # loops through a non-final component

# --- chains: chain/cN_1 -> cN_2 -> ... -> cN_N -> ../dir1 (N links followed) ----
mkchain() { # mkchain DIR PREFIX N TARGET
    local d=$1 p=$2 n=$3 t=$4 i
    for ((i = 1; i < n; i++)); do ln -s "${p}_$((i + 1))" "$d/${p}_$i"; done
    ln -s "$t" "$d/${p}_$n"
}
mkchain chain c39 39 ../dir1
mkchain chain c40 40 ../dir1
mkchain chain c41 41 ../dir1
mkchain chain c42 42 ../dir1
# The limit is 40 per resolution in total: chain/a20_1 (20 links) leads to dir2,
# where bN_1 is an N-link chain to /file.
mkchain chain a20 20 ../dir2
mkchain dir2 b19 19 ../file
mkchain dir2 b20 20 ../file
mkchain dir2 b21 21 ../file
ln -s a20_1/b19_1 chain/nest40    # 1 + 20 + 19 = 40: ok
ln -s a20_1/b20_1 chain/nest41    # 1 + 20 + 20 = 41: ELOOP
ln -s . upl/u                     # upl/u/u/.../u/file: 40 ok, 41 ELOOP

# --- odd names ------------------------------------------------------------------
echo >"sp ace"
echo >"trail "
echo >$'tab\there'
echo >$'nl\nhere'
echo >'back\slash'
echo >$'\xff\xfehigh'
echo >$'caf\xc3\xa9'
echo >$'ctl\x01\x1b'
mkdir "dir sp"
echo >"dir sp/in"
mkdir $'dir\ttab'
echo >$'dir\ttab/in'
ln -s $'tab\there' $'lnk\ttab'
ln -s $'dir\ttab/in' "lnk sp"
ln -s 'back\slash' $'lnk\\bs\nnl'
N255=$(rep N 255)
D255=$(rep D 255)
S255=$(rep S 255)
echo >"$N255"                     # name of exactly 255 bytes
mkdir "dir1/$D255"
echo >"dir1/$D255/f"
ln -s ../file "dir1/$S255"        # 255-byte symlink name

# --- deep directory chain: deep/d/d/.../d (100 levels) --------------------------
mkdir -p "deep/$(rep d/ 99)d"
echo >"deep/$(rep d/ 99)d/bottom"

# --- 16 dirs named L*255: "L.../L..." x16 is exactly 4095 bytes ------------------
L255=$(rep L 255)
LP=$L255
for ((i = 1; i < 16; i++)); do LP+="/$L255"; done
mkdir -p "$LP"                    # relative path of 4095 bytes: < PATH_MAX
echo >"${LP%/*}/f"                # 15 levels + /f

# --- long symlink targets -------------------------------------------------------
# lt: target ~3 KB; lt/<2 KB of ./>file makes >4096 bytes after expansion, which
# the kernel still resolves (no limit on the expanded length).
ln -s "$(rep ./ 1500)dir1" lt
# lt4095: a target of exactly 4095 bytes (ext4/tmpfs with 4 KiB pages accept it).
T=$(rep ./ 2045)file              # 4094 bytes, plus the leading /
ln -s "/$T" lt4095 2>/dev/null || echo "gentree: note: 4095-byte symlink target refused" >&2

# --- empty symlink target ---------------------------------------------------------
# Linux refuses symlink("", p) with ENOENT, so this case cannot exist on a host
# directory; we try anyway and say so if it ever succeeds.
if command -v python3 >/dev/null 2>&1; then
    if python3 -c 'import os; os.symlink("", "empty_target")' 2>/dev/null; then
        echo "gentree: note: empty symlink target was accepted" >&2
    fi
fi
exit 0
