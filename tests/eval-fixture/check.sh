#!/bin/sh
# check.sh -- `ddx eval` tested as an instrument: the fixture corpus (corpus/, judged with the
# fixture references in kb/ alone) has right answers known by construction, so its figures are
# known exactly. Checks the JSON against expect.tsv (one property a line), the text table
# against expected.txt (the dash of a 0/0 figure included), the --verbose list, and the floors
# at their edges.
#
#   tests/eval-fixture/check.sh DDX
#
# Calibration: the confidence bins `ddx eval` reports are known here too (the confidences are
# fixed by the fixture's weights and the calibration in src/diag.c), asserted in expect.tsv and
# in the text table like the other figures.
set -u
ddx=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root" || exit 2
command -v jq >/dev/null 2>&1 || { echo "check.sh: jq is needed (scripts/install-deps.sh)"; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ev() { TZ=UTC LC_ALL=C NO_COLOR=1 "$ddx" eval --no-builtin --kb tests/eval-fixture/kb "$@"; }

ev --json tests/eval-fixture/corpus >"$tmp/out.json" 2>"$tmp/err"
code=$?
[ "$code" = 0 ] || fail "eval --json exited $code: $(cat "$tmp/err")"
tab=$(printf '\t')
while IFS="$tab" read -r path want why; do
    case "$path" in '' | '#'*) continue ;; esac
    got=$(jq -c "$path" "$tmp/out.json" 2>&1)
    [ "$got" = "$want" ] || fail "$path is $got, expected $want ($why)"
done <"$here/expect.tsv"

ev tests/eval-fixture/corpus >"$tmp/out.txt" 2>&1
code=$?
[ "$code" = 0 ] || fail "eval exited $code"
diff -u "$here/expected.txt" "$tmp/out.txt" || fail "the text figures differ from expected.txt"

# --verbose lists every miss and every silent failed job, and nothing else
ev --verbose tests/eval-fixture/corpus >"$tmp/v.txt" 2>&1
sed '/^calibration/,$d' "$tmp/v.txt" | grep -v '^[a-z]* *cases ' | cut -d' ' -f1 | tr '\n' ' ' >"$tmp/v.names"
want="cul-absent cul-wrong neg-confirmed neg-likely top-absent top-fourth top-possible top-second top-third unp-nothing "
[ "$(cat "$tmp/v.names")" = "$want" ] || fail "eval --verbose lists '$(cat "$tmp/v.names")', expected '$want'"
grep -q '^top-possible .*; silent$' "$tmp/v.txt" || fail "eval --verbose does not mark top-possible silent"

# floors: at the figure passes, a hair above fails and says by how much; a floor on a figure
# with nothing to count (0/0) fails instead of passing as 100 %
floor() { # expected-exit text-or-empty args...
    want=$1 text=$2
    shift 2
    ev "$@" >"$tmp/f.out" 2>&1
    code=$?
    [ "$code" = "$want" ] || fail "eval $*: exit $code, expected $want: $(cat "$tmp/f.out")"
    [ -z "$text" ] || grep -qF -- "$text" "$tmp/f.out" || fail "eval $*: no '$text' in: $(cat "$tmp/f.out")"
}
c=tests/eval-fixture/corpus
floor 0 "" --min-top1 60 --min-top3 80 --min-negatives 60 --min-culprit 33.3 $c
floor 1 "top-1 6/10 = 60.00% is below the floor 60.1%" --min-top1 60.1 $c
floor 1 "top-3 8/10 = 80.00% is below the floor 81%" --min-top3 81 $c
floor 1 "negatives clean 3/5 = 60.00% is below the floor 61%" --min-negatives 61 $c
floor 1 "culprit rank 1/3 = 33.33% is below the floor 34%" --min-culprit 34 $c
floor 1 "the culprit rank floor 0% measures nothing: no cases with a culprit_rank" \
    --min-culprit 0 $c/neg-nothing
floor 1 "the top-1 floor 0% measures nothing: no labelled positive cases" --min-top1 0 $c/neg-nothing
floor 1 "the negatives clean floor 0% measures nothing: no negative cases" \
    --min-negatives 0 $c/top-first
floor 0 "" --min-negatives 100 $c/neg-nothing

[ "$fails" = 0 ] || exit 1
echo "eval fixture: $(grep -c '^[.[]' "$here/expect.tsv") JSON properties, the text table, the verbose list and 9 floors hold"
