#!/bin/sh
# floors_selftest.sh -- floors.sh itself: in a scratch repository, a commit that lowers a floor
# (the spoken one too), drops a set or turns a floor into "-" fails; adding the spoken column to
# six-column floors passes; one that raises a floor or adds a set passes;
# a merge that takes a lower floor than either side's fails; a copy without git history is
# skipped (77) with its reason.
#
#   tests/floors_selftest.sh FLOORS_SH
set -u
floors=${1:?usage: floors_selftest.sh FLOORS_SH}
command -v git >/dev/null 2>&1 || { echo "SKIPPED: git is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
g() { git -C "$tmp/repo" -c user.name=floors -c user.email=floors@example.org "$@" >/dev/null 2>&1; }
mkdir -p "$tmp/repo/tests"
g init -q
row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@"; }
commit() { # message rows...
    msg=$1
    shift
    printf '# set\tpaths\ttop1\ttop3\tnegatives\tculprit\tspoken\n' >"$tmp/repo/tests/floors.tsv"
    for r in "$@"; do printf '%s\n' "$r" >>"$tmp/repo/tests/floors.tsv"; done
    g add -A && g commit -q -m "$msg"
}
expect() { # exit-status text description
    out=$(sh "$floors" "$tmp/repo" 2>&1)
    code=$?
    if [ "$code" != "$1" ] || ! printf '%s\n' "$out" | grep -qF -- "$2"; then
        echo "FAIL: $3: exit $code, expected $1 with '$2':"
        printf '%s\n' "$out" | sed 's/^/    /'
        fails=$((fails + 1))
    fi
}
# the layout before the spoken column (six columns): the first version with it compares
printf '# set\tpaths\ttop1\ttop3\tnegatives\tculprit\na\tx\t80\t90\t100\t50\n' >"$tmp/repo/tests/floors.tsv"
g add -A && g commit -q -m six-columns
commit first "$(row a x 80 90 100 50 95)" "$(row b y 70 - 100 - -)"
expect 0 "floors: 2 sets, none lower than in HEAD^1 HEAD" "a spoken column added to six-column floors"
commit raise "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
expect 0 "floors: 3 sets, none lower than in HEAD^1 HEAD" "raising floors and adding a set"
commit lower "$(row a x 81 89.5 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
expect 1 "the top-3 floor of 'a' is 89.5, lower than 90 in HEAD^1" "a lowered floor"
commit back "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
commit mute "$(row a x 81 90 100 50 94)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
expect 1 "the spoken floor of 'a' is 94, lower than 95 in HEAD^1" "a lowered spoken floor (more failed jobs left mute)"
commit back1 "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
commit dash "$(row a x 81 90 100 - 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
expect 1 "the culprit floor of 'a' is -, lower than 50 in HEAD^1" "a floor turned into -"
commit back2 "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
commit drop "$(row a x 81 90 100 50 95)" "$(row c z 10 - - - -)"
expect 1 "set 'b' had floors in HEAD^1 and has none now" "a set that is gone"
commit back3 "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
row a x 80 90 100 50 95 >>"$tmp/repo/tests/floors.tsv"
expect 1 "set 'a' has two rows" "two rows for one set"
commit back4 "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
printf 'a\tx\t81\t90\t100\t50\n' >"$tmp/repo/tests/floors.tsv"
expect 1 "does not have seven TAB-separated columns" "a short row"
printf 'a\tx\t81\t90\t100\t50\t95\nb\ty\t70\t75\t100\t-\t-\nc\tz\t10\t-\t-\t-\t-\n' >"$tmp/repo/tests/floors.tsv"
expect 0 "floors: 3 sets" "the committed floors again, uncommitted"
sed 's/\t70\t/\t69\t/' "$tmp/repo/tests/floors.tsv" >"$tmp/f" && cp "$tmp/f" "$tmp/repo/tests/floors.tsv"
expect 1 "the top-1 floor of 'b' is 69, lower than 70 in HEAD" "an uncommitted lowered floor"
# a merge whose other side raised a floor may not take the lower one
printf 'a\tx\t81\t90\t100\t50\t95\nb\ty\t70\t75\t100\t-\t-\nc\tz\t10\t-\t-\t-\t-\n' >"$tmp/repo/tests/floors.tsv"
g checkout -q -b side
commit side-raise "$(row a x 85 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 10 - - - -)"
g checkout -q -
commit main-moves "$(row a x 81 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 11 - - - -)"
g merge -q --no-commit side
printf 'a\tx\t81\t90\t100\t50\t95\nb\ty\t70\t75\t100\t-\t-\nc\tz\t11\t-\t-\t-\t-\n' >"$tmp/repo/tests/floors.tsv"
expect 1 "the top-1 floor of 'a' is 81, lower than 85 in MERGE_HEAD" "a merge in progress that drops the other side's floor"
g add -A && g commit -q -m merge
expect 1 "the top-1 floor of 'a' is 81, lower than 85 in HEAD^2" "a merge commit that dropped the other side's floor"
commit fixed "$(row a x 85 90 100 50 95)" "$(row b y 70 75 100 - -)" "$(row c z 11 - - - -)"
rm -rf "$tmp/repo/.git"
expect 77 "SKIPPED: $tmp/repo has no git history" "a copy without git history"
[ "$fails" = 0 ] || exit 1
echo "floors.sh: rises pass; a lowered, dashed or dropped floor, a duplicate or short row, a merge below a side fail; no history skips"
