#!/bin/sh
# mutate_selftest.sh -- scripts/mutate.sh on a tiny project (tests/data/mutate): a mutant the
# test kills is reported killed by that test, one no test looks at survives, one that breaks
# the build is broken (or killed, when the build's failure is one that counts), a snippet that
# is gone is stale; the exit status says so,
# and the project itself is left as it was (mutate.sh works on a copy).
#
#   tests/mutate_selftest.sh ROOT
set -u
root=${1:?usage: mutate_selftest.sh ROOT}
cd "$root" || exit 2
proj=tests/data/mutate/project
before=$(cd "$proj" && find . -type f | sort | xargs cat | cksum)
out=$(sh scripts/mutate.sh --root "$proj" --list tests/data/mutate/list.txt \
    --build 'sh build.sh' --test 'sh test.sh' --full 'sh test.sh' 2>&1)
code=$?
after=$(cd "$proj" && find . -type f | sort | xargs cat | cksum)
fails=0
expect() {
    printf '%s\n' "$out" | grep -qF -- "$1" || { echo "FAIL: mutate.sh did not say: $1"; fails=$((fails + 1)); }
}
expect "killed   adds-minus  by sum-adds: subtract instead of add"
expect "SURVIVED big-threshold: the 'big' branch at 20 instead of 10"
expect "BROKEN   no-parse: it does not build"
expect "STALE    gone: the snippet is not in sum.sh exactly once (found 0)"
expect "mutate.sh: 1 killed, 1 survived, 1 broken, 1 stale"
out3=$(sh scripts/mutate.sh --root "$proj" --list tests/data/mutate/list.txt --only no-parse \
    --build 'sh build.sh' --test 'sh test.sh' --full 'sh test.sh' --build-kills 'Syntax error' 2>&1)
printf '%s\n' "$out3" | grep -qF "killed   no-parse  by the build (" ||
    { echo "FAIL: with --build-kills, a build that fails that way kills: $out3"; fails=$((fails + 1)); }
[ "$code" = 1 ] || { echo "FAIL: exit status $code with a survivor and a stale snippet, expected 1"; fails=$((fails + 1)); }
[ "$before" = "$after" ] || { echo "FAIL: the project changed (mutate.sh must work on a copy)"; fails=$((fails + 1)); }
[ -z "$(find "$proj" -name '*.orig' -o -name '*.mutant' -o -name build)" ] ||
    { echo "FAIL: mutate.sh left files in the project"; fails=$((fails + 1)); }
out2=$(sh scripts/mutate.sh --root "$proj" --list tests/data/mutate/list.txt --only adds-minus \
    --build 'sh build.sh' --test 'sh test.sh' --full 'sh test.sh' 2>&1)
code=$?
[ "$code" = 0 ] && printf '%s\n' "$out2" | grep -qF "mutate.sh: 1 killed, 0 survived, 0 broken, 0 stale" ||
    { echo "FAIL: --only adds-minus: exit $code: $out2"; fails=$((fails + 1)); }
if [ "$fails" != 0 ]; then
    printf '%s\n' "$out" | sed 's/^/    /'
    exit 1
fi
echo "mutate.sh: killed, survived, broken and stale mutants reported; the project untouched"
