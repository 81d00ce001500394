#!/bin/sh
# run.sh -- one golden end-to-end case: run ddx with the case's arguments and check the
# properties the case guards, each asserted directly on the output.
#
#   tests/golden/run.sh DDX CASE_DIR           check
#   tests/golden/run.sh --update DDX CASE_DIR  record the output of a JSON contract case
#
# A case folder holds `args` (the arguments, one line, run from the repository root) and
# `props`: the properties, each named and followed by its checks (two spaces in):
#
#   property: the first root line ranks first      what the case protects, in words
#     exit: 1                                      the exit status
#     json .diagnoses[0].id == "t-root"            a jq filter and the value it must give
#     has: Culprit rank: 1                         text the output must contain
#     lacks: only consequences seen                text it must not contain
#     before: t-root  A root >> t-symptom          the first text comes before the second
#
# A case whose purpose is the JSON contract (docs/json.md) also keeps the whole output in
# `expected.out`, compared byte for byte; every other case asserts only its properties, so a
# change elsewhere in the output does not make it fail, and a change to what it guards does.
# Output is made deterministic with TZ=UTC, LC_ALL=C and NO_COLOR.
set -u
update=0
[ "${1:-}" = "--update" ] && { update=1; shift; }
ddx=$1
case_dir=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
command -v jq >/dev/null 2>&1 || { echo "golden: jq is needed (scripts/install-deps.sh)"; exit 2; }
args=$(cat "$case_dir/args")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
TZ=UTC LC_ALL=C NO_COLOR=1 "$ddx" $args >"$out" 2>&1
code=$?
if [ "$update" = 1 ]; then
    [ -f "$case_dir/expected.out" ] || { echo "$case_dir keeps no snapshot (props only)"; exit 2; }
    cp "$out" "$case_dir/expected.out"
    exit 0
fi
[ -f "$case_dir/props" ] || { echo "$case_dir: no props file (the properties the case guards)"; exit 2; }
fails=0
props=0
checks=0
prop=""
fail() {
    echo "FAIL [$prop]: $*"
    fails=$((fails + 1))
}
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
    '' | '#'*) continue ;;
    'property: '*)
        [ -z "$prop" ] || [ "$checks" -gt 0 ] || fail "the property has no check"
        prop=${line#property: }
        props=$((props + 1))
        checks=0
        continue ;;
    '  '*) ;;
    *) echo "$case_dir/props: not a property or a check: $line"; exit 2 ;;
    esac
    [ -n "$prop" ] || { echo "$case_dir/props: a check before any property: $line"; exit 2; }
    check=${line#  }
    checks=$((checks + 1))
    case "$check" in
    'exit: '*)
        [ "$code" = "${check#exit: }" ] || fail "exit status $code, expected ${check#exit: }" ;;
    'json '*)
        expr=${check#json }
        filter=${expr% == *}
        want=${expr##* == }
        got=$(jq -c "$filter" "$out" 2>&1) || got="(jq: $got)"
        [ "$got" = "$want" ] || fail "$filter is $got, expected $want" ;;
    'has: '*)
        grep -qF -- "${check#has: }" "$out" || fail "the output lacks: ${check#has: }" ;;
    'lacks: '*)
        ! grep -qF -- "${check#lacks: }" "$out" || fail "the output has: ${check#lacks: }" ;;
    'before: '*)
        pair=${check#before: }
        first=${pair% >> *}
        second=${pair#* >> }
        a=$(grep -nF -- "$first" "$out" | head -1 | cut -d: -f1)
        b=$(grep -nF -- "$second" "$out" | head -1 | cut -d: -f1)
        if [ -z "$a" ] || [ -z "$b" ] || [ "$a" -ge "$b" ]; then
            fail "'$first' (line ${a:-none}) does not come before '$second' (line ${b:-none})"
        fi ;;
    *) echo "$case_dir/props: unknown check: $check"; exit 2 ;;
    esac
done <"$case_dir/props"
[ "$checks" -gt 0 ] || fail "the property has no check"
[ "$props" -gt 0 ] || { echo "$case_dir/props names no property"; exit 2; }
if [ -f "$case_dir/expected.out" ] && ! diff -u "$case_dir/expected.out" "$out"; then
    echo "FAIL [the JSON contract]: the output differs from $case_dir/expected.out (rerun with --update after checking it against docs/json.md)"
    fails=$((fails + 1))
fi
if [ "$fails" != 0 ]; then
    echo "---- output of ddx $args (exit $code):"
    head -60 "$out"
    exit 1
fi
echo "$case_dir: $props properties hold$([ -f "$case_dir/expected.out" ] && echo ', and the JSON contract snapshot')"
exit 0
