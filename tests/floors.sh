#!/bin/sh
# floors.sh -- the accuracy floors only rise, mechanically: tests/floors.tsv is checked for its
# form, then compared with the previous commit's (git show HEAD~1:tests/floors.tsv; every parent
# of a merge, and MERGE_HEAD during one) and with HEAD's (an uncommitted edit); a floor lower than there, or a set or floor that is gone,
# fails. Without git history (a tarball, a shallow clone) there is nothing to compare with: the
# test says so and exits 77 (skipped).
#
#   tests/floors.sh ROOT [FILE]      FILE defaults to ROOT/tests/floors.tsv
set -u
root=${1:?usage: floors.sh ROOT [FILE]}
file=${2:-$root/tests/floors.tsv}
rel=tests/floors.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# rows: set TAB paths TAB top1 TAB top3 TAB negatives TAB culprit TAB spoken
rows() { grep -v '^#' "$1" | grep -v '^[[:space:]]*$'; }
rows "$file" >"$tmp/now" || { echo "FAIL: $file has no rows"; exit 1; }
tab=$(printf '\t')
while IFS="$tab" read -r set paths t1 t3 neg cul spk extra; do
    if [ -z "$spk" ] || [ -n "${extra:-}" ]; then
        echo "FAIL: $file: row '$set' does not have seven TAB-separated columns"
        fails=$((fails + 1))
        continue
    fi
    for v in "$t1" "$t3" "$neg" "$cul" "$spk"; do
        case "$v" in
        -) ;;
        *[!0-9.]* | '' | .*) echo "FAIL: $file: row '$set': floor '$v' is not a number or -"
            fails=$((fails + 1)) ;;
        *) awk -v v="$v" 'BEGIN {exit !(v >= 0 && v <= 100)}' ||
            { echo "FAIL: $file: row '$set': floor $v is not between 0 and 100"; fails=$((fails + 1)); } ;;
        esac
    done
done <"$tmp/now"
cut -f1 "$tmp/now" | sort | uniq -d | while read -r s; do echo "FAIL: set '$s' has two rows"; done |
    tee "$tmp/dupsets"
[ -s "$tmp/dupsets" ] && fails=$((fails + 1))
[ "$fails" = 0 ] || exit 1

# compare with an earlier version: every floor there must be here, at least as high (a version
# from before the spoken column has none there)
compare() { # label earlier-file
    while IFS="$tab" read -r set paths t1 t3 neg cul spk; do
        spk=${spk:--}
        [ "$t1$t3$neg$cul$spk" = ----- ] && continue # a set without floors
        now=$(awk -F "$tab" -v s="$set" '$1 == s' "$tmp/now")
        if [ -z "$now" ]; then
            echo "FAIL: set '$set' had floors in $1 and has none now"
            fails=$((fails + 1))
            continue
        fi
        i=3
        for name in top-1 top-3 negatives culprit spoken; do
            old=$(printf '%s\n' "$set$tab$paths$tab$t1$tab$t3$tab$neg$tab$cul$tab$spk" | cut -f$i)
            new=$(printf '%s\n' "$now" | cut -f$i)
            i=$((i + 1))
            [ "$old" = - ] && continue
            if [ "$new" = - ] || awk -v o="$old" -v n="$new" 'BEGIN {exit !(n < o)}'; then
                echo "FAIL: the $name floor of '$set' is $new, lower than $old in $1 (floors only rise)"
                fails=$((fails + 1))
            fi
        done
    done
}

command -v git >/dev/null 2>&1 || { echo "SKIPPED: git is not installed: no earlier floors to compare with"; exit 77; }
git -C "$root" rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "SKIPPED: $root has no git history (a tarball?): no earlier floors to compare with"; exit 77; }
# before tests/floors.tsv, the floors were --min-* options of the eval tests in
# tests/CMakeLists.txt: read them in the same rows, so the commit that moved them is checked too
legacy_rows() {
    tr '\n' ' ' | grep -oE 'NAME eval/[a-z0-9-]+[^)]*' | while read -r line; do
        set=$(printf '%s\n' "$line" | sed -E 's#^NAME eval/([a-z0-9-]+).*#\1#')
        f() { printf '%s\n' "$line" | sed -nE "s#.*--min-$1 ([0-9.]+).*#\1#p"; }
        printf '%s\t-\t%s\t%s\t%s\t%s\n' "$set" "$(f top1)" "$(f top3)" "$(f negatives)" \
            "$(f culprit)" | sed -E 's#\t(\t|$)#\t-\1#g; s#\t(\t|$)#\t-\1#g'
    done
}
# every parent of HEAD (a merge's other side too: its floors may be higher) and HEAD itself
revs=""
n=1
while git -C "$root" rev-parse --verify -q "HEAD^$n" >/dev/null 2>&1; do
    revs="$revs HEAD^$n"
    n=$((n + 1))
done
git -C "$root" rev-parse --verify -q MERGE_HEAD >/dev/null 2>&1 && revs="$revs MERGE_HEAD"
compared=""
for rev in $revs HEAD; do
    if git -C "$root" show "$rev:$rel" >"$tmp/$rev" 2>/dev/null; then
        rows "$tmp/$rev" >"$tmp/$rev.rows"
    elif git -C "$root" show "$rev:tests/CMakeLists.txt" 2>/dev/null | legacy_rows >"$tmp/$rev.rows" &&
        [ -s "$tmp/$rev.rows" ]; then
        rev="$rev (tests/CMakeLists.txt)"
    else
        continue
    fi
    compare "$rev" <"$tmp/${rev%% *}.rows"
    compared="$compared $rev"
done
[ -n "$compared" ] ||
    { echo "SKIPPED: neither HEAD's parents nor HEAD have $rel (a shallow clone, or the file is new): nothing to compare"; exit 77; }
[ "$fails" = 0 ] || exit 1
echo "floors: $(wc -l <"$tmp/now") sets, none lower than in$compared"
