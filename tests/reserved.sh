#!/bin/sh
# reserved.sh -- no thread kept for independent evaluation (../shared/corpus/RESERVED.txt) is
# used anywhere: not as a corpus case, a reference example or source, nor named in the docs.
# A thread counts however it is written: .../issues/N, .../pull/N, .../discussions/N or owner/repo#N.
#   tests/reserved.sh SOURCE_DIR RESERVED.txt
set -u
root=$1
list=$2
[ -r "$list" ] || { echo "reserved.sh: cannot read $list" >&2; exit 2; }
pats=$(mktemp) || exit 2
trap 'rm -f "$pats"' EXIT
grep -oE 'https://github\.com/[^/ ]+/[^/ ]+/(issues|pull|discussions)/[0-9]+' "$list" |
    sed -E 's#^https://github\.com/##; s#[.]#\\.#g; s#^(.*)/(issues|pull|discussions)/([0-9]+)$#\1(/issues/|/pull/|/discussions/|\#)\3([^0-9]|$)#' >"$pats"
[ -s "$pats" ] || { echo "reserved.sh: no thread read from $list" >&2; exit 2; }
cd "$root" || exit 2
if grep -rniE -f "$pats" references tests docs README.md; then
    echo "a thread reserved for independent evaluation is used above: remove it"
    exit 1
fi
exit 0
