#!/bin/sh
# run.sh -- one golden end-to-end case: run ddx with the case's arguments and compare its
# standard output and exit status with the recorded ones.
#
#   tests/golden/run.sh DDX CASE_DIR           check
#   tests/golden/run.sh --update DDX CASE_DIR  record the current output as expected
#
# A case folder holds `args` (the arguments, one line, run from the repository root),
# `expected.out` and `expected.exit`. Output is made deterministic with TZ=UTC, LC_ALL=C and
# NO_COLOR. Inputs live in the case folder, so paths in the output are relative and stable.
set -u
update=0
[ "${1:-}" = "--update" ] && { update=1; shift; }
ddx=$1
case_dir=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
args=$(cat "$case_dir/args")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2086
TZ=UTC LC_ALL=C NO_COLOR=1 "$ddx" $args >"$out" 2>&1
code=$?
if [ "$update" = 1 ]; then
    cp "$out" "$case_dir/expected.out"
    echo "$code" >"$case_dir/expected.exit"
    exit 0
fi
want=$(cat "$case_dir/expected.exit")
if [ "$code" != "$want" ]; then
    echo "exit status $code, expected $want" >&2
    cat "$out" >&2
    exit 1
fi
if ! diff -u "$case_dir/expected.out" "$out"; then
    echo "output differs from $case_dir/expected.out (rerun with --update after checking it)" >&2
    exit 1
fi
exit 0
