#!/bin/sh
# run.sh -- CLI transcripts: each tests/cli/*.t file is a list of commands with the exit status
# and the text their output must contain.
#
#   $ diagnose /nonexistent/rank3.log      the arguments after `ddx`, run from the repo root
#   ? 2                                    the exit status
#   > No such file or directory            text that must appear in stdout or stderr
#   < Traceback                            text that must NOT appear
#
# Blank lines and lines starting with # are ignored.
set -u
ddx=$1
file=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0
cmd=""
check_pending() { :; }
while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
    '$'|'$ '*)
        cmd=${line#\$}; cmd=${cmd# }
        # shellcheck disable=SC2086
        eval "TZ=UTC LC_ALL=C NO_COLOR=1 \"$ddx\" $cmd" >"$out" 2>&1 </dev/null
        code=$?
        ;;
    '? '*)
        want=${line#? }
        if [ "$code" != "$want" ]; then
            echo "FAIL: ddx $cmd: exit $code, expected $want"; sed 's/^/    /' "$out" | head -20
            fails=$((fails + 1))
        fi
        ;;
    '> '*)
        text=${line#> }
        if ! grep -qF -- "$text" "$out"; then
            echo "FAIL: ddx $cmd: output lacks: $text"; sed 's/^/    /' "$out" | head -20
            fails=$((fails + 1))
        fi
        ;;
    '< '*)
        text=${line#< }
        if grep -qF -- "$text" "$out"; then
            echo "FAIL: ddx $cmd: output has: $text"
            fails=$((fails + 1))
        fi
        ;;
    esac
done <"$file"
[ "$fails" = 0 ] || exit 1
exit 0
