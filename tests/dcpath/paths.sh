# paths.sh - sourced by tests/test_dcpath.sh (bash).
#
# dc_gen_paths ROOT: fills the array DC_PATHS with every path to check against
# the kernel: the literal lines of paths.txt, the cases that cannot be written
# there (empty path, tab/newline/high bytes, 256-byte names, paths around
# PATH_MAX = 4096), and every entry of the tree under ROOT (built by gentree.sh)
# with the variants P, P/, /P, P/. and P/.. .

dc_rep() { local s="" i; for ((i = 0; i < $2; i++)); do s+="$1"; done; printf '%s' "$s"; }

dc_gen_paths() {
    local root=$1 here line p
    here=$(dirname "${BASH_SOURCE[0]}")
    DC_PATHS=()

    # 1. paths.txt, literally.
    while IFS= read -r line || [ -n "$line" ]; do
        case $line in "" | "# "* | "#") continue ;; esac
        DC_PATHS+=("$line")
    done <"$here/paths.txt"

    # 2. Cases paths.txt cannot hold.
    local N255 N256 D255 S255 L255 LP d100
    N255=$(dc_rep N 255); N256=$(dc_rep N 256)
    D255=$(dc_rep D 255); S255=$(dc_rep S 255); L255=$(dc_rep L 255)
    LP=$L255; for ((i = 1; i < 16; i++)); do LP+="/$L255"; done   # 4095 bytes
    d100=$(dc_rep d/ 99)d

    DC_PATHS+=(
        ""                                  # empty path: ENOENT
        "trail " "trail" "trail /" "trail /."
        $'tab\there' $'tab\there/' $'tab\t' $'tab\there\t'
        $'nl\nhere' $'nl\nhere/.' $'nl' 'here' $'nl\nhere\n'
        $'\xff\xfehigh' $'\xff\xfehigh/' $'\xff\xfe' $'\xff'
        $'caf\xc3\xa9' $'caf\xc3\xa9/..' 'caf' $'caf\xc3'
        $'ctl\x01\x1b' $'ctl\x01'
        $'dir\ttab' $'dir\ttab/' $'dir\ttab/in' $'dir\ttab/in/'
        $'lnk\ttab' $'lnk\ttab/' $'lnk\ttab/.'
        $'lnk\\bs\nnl' $'lnk\\bs\nnl/' 'lnk\bs' $'lnk\\\\bs\nnl'
        'back\\slash' "\\"
        # 255/256-byte names
        "$N255" "$N255/" "$N255/." "/$N255" "dir1/../$N255"
        "dir1/$D255" "dir1/$D255/" "dir1/$D255/f" "dir1/$D255/f/"
        "dir1/$S255" "dir1/$S255/" "dir1/$S255/.."
        "$N256"                             # ENAMETOOLONG (the fs lookup)
        "$N256/" "$N256/.." "/$N256" "$N256/x"
        "missing/$N256"                     # ENOENT: missing fails first
        "missing/$N256/x"
        "dir1/$N256"                        # ENAMETOOLONG
        "dir1/$N256/.." "dir1/$N256/x" "dir1/$D255/$N256"
        "file/$N256"                        # ENOTDIR
        "dangle/$N256" "self/$N256" "ldir/$N256" "lfile/$N256"
        "$(dc_rep x 1000)" "dir1/$(dc_rep x 5000)"
        # deep chain
        "deep/$d100" "deep/$d100/" "deep/$d100/bottom" "deep/$d100/bottom/"
        "deep/$d100/$(dc_rep ../ 101)file"
        "deep/$d100/$(dc_rep ../ 150)file"
        "deep/$d100/$(dc_rep .. 1)/$(dc_rep ../ 99)d/$(dc_rep d/ 98)d/bottom"
        # total symlink count across components: upl/u -> .
        "upl/$(dc_rep u/ 39)file" "upl/$(dc_rep u/ 40)file" "upl/$(dc_rep u/ 41)file"
        "upl/$(dc_rep u/ 40)" "upl/$(dc_rep u/ 41)"
        "upl/$(dc_rep u/ 39)u" "upl/$(dc_rep u/ 40)u" "upl/$(dc_rep u/ 41)u"
        "upl/$(dc_rep u/ 40)u/" "upl/$(dc_rep u/ 40)."
        "chain/$(dc_rep ../chain/ 30)c40_1"
        # around PATH_MAX (4096 bytes including the NUL)
        "$LP"                               # 4095 bytes: resolves
        "$LP/" "/$LP" "./$LP"               # 4096, 4096, 4097: ENAMETOOLONG
        "${LP%/*}" "${LP%/*}/f" "${LP%/*}/f/" "${LP%/*}/."
        "${LP%/*}/$(dc_rep ../ 15)file"
        "dir1$(dc_rep / 4087)file"          # 4095 bytes: resolves
        "dir1$(dc_rep / 4088)file"          # 4096 bytes: ENAMETOOLONG
        "$(dc_rep ./ 2043)dir1/file"        # 4095
        "$(dc_rep ./ 2043)/dir1/file"       # 4096
        "missing$(dc_rep / 4088)"           # 4095: ENOENT
        "missing$(dc_rep / 4089)"           # 4096: ENAMETOOLONG beats ENOENT
        "file$(dc_rep / 4091)"              # 4095: ENOTDIR
        "file$(dc_rep / 4092)"              # 4096: ENAMETOOLONG
        "$(dc_rep / 4095)" "$(dc_rep / 4096)"
        "$(dc_rep ../ 1364)fil"             # 4095: ENOENT
        "$(dc_rep ../ 1364)file"            # 4096
        "$(dc_rep x 8000)"
        # long symlink targets
        lt lt/ lt/file lt/sub/deepfile "lt/$(dc_rep ./ 1000)file"
        "lt/$(dc_rep ./ 2040)file"           # 4087 bytes, >7 KB once expanded
        lt4095 lt4095/ lt4095/.. "dir1/../lt4095"
    )

    # 3. Every entry of the tree, with variants.
    local -a ents=()
    mapfile -d '' ents < <(cd "$root" && find . -mindepth 1 -print0 | LC_ALL=C sort -z)
    for p in "${ents[@]}"; do
        p=${p#./}
        DC_PATHS+=("$p" "$p/" "/$p" "$p/." "$p/..")
    done
}
