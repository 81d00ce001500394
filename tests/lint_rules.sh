#!/bin/sh
# lint_rules.sh -- every lint rule has a fixture that breaks it and nothing else.
#
#   tests/lint_rules.sh DDX
#
# Each folder tests/data/lint/<rule> is a small knowledge base (one or two references of the
# category "lint", and their examples) run through `ddx lint --no-builtin` (the built-in
# references take part only where the rule is about them: compiling their patterns again takes
# seconds). Its `expect` file says what lint must answer:
#   ? N        the exit status (1 when not given: lint refuses the folder)
#   > text     text some line of the output must contain
#   @builtin   lint with the built-in references, as `ddx lint DIR` does by default
# and every problem lint prints must be one of the `>` lines, so a fixture cannot pass by
# breaking another rule than the one it names. `good` is the valid reference the others break.
set -u
ddx=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fails=0
n=0
for dir in tests/data/lint/*/; do
    dir=${dir%/}
    rule=${dir##*/}
    [ -f "$dir/expect" ] || { echo "FAIL: $rule: no expect file"; fails=$((fails + 1)); continue; }
    n=$((n + 1))
    only=--no-builtin
    grep -qx '@builtin' "$dir/expect" && only=""
    # shellcheck disable=SC2086
    TZ=UTC LC_ALL=C NO_COLOR=1 "$ddx" lint $only "$dir" >"$out" 2>&1
    code=$?
    want=$(sed -n 's/^? //p' "$dir/expect")
    [ -n "$want" ] || want=1
    if [ "$code" != "$want" ]; then
        echo "FAIL: $rule: exit $code, expected $want"; sed 's/^/    /' "$out"
        fails=$((fails + 1))
        continue
    fi
    sed -n 's/^> //p' "$dir/expect" >"$out.want"
    while IFS= read -r text; do
        grep -qF -- "$text" "$out" || {
            echo "FAIL: $rule: the output lacks: $text"; sed 's/^/    /' "$out"
            fails=$((fails + 1))
        }
    done <"$out.want"
    # every problem is one the fixture expects (the last line is lint's summary of the folder)
    grep -v -F -- "$dir: " "$out" | grep -v '^$' | while IFS= read -r line; do
        grep -qF -f "$out.want" <<EOT || echo "FAIL: $rule: an unexpected problem: $line"
$line
EOT
    done >"$out.extra"
    if [ -s "$out.extra" ]; then
        cat "$out.extra"
        fails=$((fails + 1))
    fi
    rm -f "$out.want" "$out.extra"
done
[ "$fails" = 0 ] || exit 1
echo "lint rules: $n fixtures, each refused (or passed) for its own rule only"
