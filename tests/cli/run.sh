#!/bin/sh
# run.sh -- CLI transcripts: each tests/cli/*.t file is a list of commands with the exit status
# and the text their output must contain.
#
#   $ diagnose /nonexistent/rank3.log      the arguments after `ddx`, run from the repo root
#   ? 2                                    the exit status (every step must have one)
#   > No such file or directory            text that must appear in stdout or stderr
#   < Traceback                            text that must NOT appear
#
# Blank lines and lines starting with # are ignored. A step without its exit-status line is
# refused: "must not contain" lines alone pass whatever the command does, even when it crashes.
set -u
ddx=$1
file=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0
cmd=""
have_cmd=0
have_status=0
lineno=0
# the step that just ended must have said its exit status
end_step() {
    if [ "$have_cmd" = 1 ] && [ "$have_status" = 0 ]; then
        echo "FAIL: $file:$cmd_line: step 'ddx $cmd' has no exit-status line ('? N')"
        fails=$((fails + 1))
    fi
}
# a check before any command checks nothing
need_cmd() {
    if [ "$have_cmd" = 0 ]; then
        echo "FAIL: $file:$lineno: '$1' before any '\$' command line"
        fails=$((fails + 1))
        return 1
    fi
    return 0
}
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    case "$line" in
    '$'|'$ '*)
        end_step
        cmd=${line#\$}; cmd=${cmd# }
        cmd_line=$lineno
        have_cmd=1
        have_status=0
        # shellcheck disable=SC2086
        eval "TZ=UTC LC_ALL=C NO_COLOR=1 \"$ddx\" $cmd" >"$out" 2>&1 </dev/null
        code=$?
        ;;
    '? '*)
        need_cmd "$line" || continue
        if [ "$have_status" = 1 ]; then
            echo "FAIL: $file:$lineno: a second exit-status line for 'ddx $cmd'"
            fails=$((fails + 1))
        fi
        have_status=1
        want=${line#? }
        if [ "$code" != "$want" ]; then
            echo "FAIL: ddx $cmd: exit $code, expected $want"; sed 's/^/    /' "$out" | head -20
            fails=$((fails + 1))
        fi
        ;;
    '> '*)
        need_cmd "$line" || continue
        text=${line#> }
        if ! grep -qF -- "$text" "$out"; then
            echo "FAIL: ddx $cmd: output lacks: $text"; sed 's/^/    /' "$out" | head -20
            fails=$((fails + 1))
        fi
        ;;
    '< '*)
        need_cmd "$line" || continue
        text=${line#< }
        if grep -qF -- "$text" "$out"; then
            echo "FAIL: ddx $cmd: output has: $text"
            fails=$((fails + 1))
        fi
        ;;
    ''|'#'*) ;;
    *)
        echo "FAIL: $file:$lineno: not a transcript line (\$ ? > < or #): $line"
        fails=$((fails + 1))
        ;;
    esac
done <"$file"
end_step
[ "$have_cmd" = 1 ] || { echo "FAIL: $file: no command"; fails=$((fails + 1)); }
[ "$fails" = 0 ] || exit 1
exit 0
