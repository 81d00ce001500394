#!/bin/sh
# mutate.sh -- mutation testing: apply each deliberate breakage of a list to a copy of the
# tree, build it, run the tests, and report which test killed it or that it survived.
#
#   scripts/mutate.sh [--list FILE] [--only ID[,ID...]] [--check] [--keep] [--logs DIR]
#                     [--root DIR] [--build CMD] [--test CMD] [--full CMD] [--build-kills RE]
#
# The list (default scripts/mutations.txt) is data: each mutation names a file, an exact
# snippet of it and its replacement, never a line number, so the list survives code that
# moves. A snippet must occur exactly once in its file; one that does not is reported as
# stale (the code changed: point the mutation at the new code) and counts as a failure.
#
#   == ID                         one mutation, up to the next "==" line
#   about: what the breakage is   (one line)
#   file: src/diag.c              the file, from the repository root
#   tests: eval/instrument|kb/    the tests expected to kill it (a ctest -R pattern)
#   find:                         the exact snippet: the lines up to "replace:"
#   replace:                      its replacement: the lines up to the next "==" line or
#                                 comment line (trailing blank lines dropped)
#
# A comment is a line that is "#" or starts with "# "; it ends a replacement, so comments may
# stand between mutations. Inside "find:" every line belongs to the snippet.
#
# Everything happens in a copy of the tree (the working tree, uncommitted changes included,
# without build folders), next to a link to ../shared when there is one; the tree itself is
# never touched. The copy is built once (--build), checked to pass the tests each mutation
# names, then for each mutation: the file is mutated, the copy rebuilt, the named tests run
# (--test, with MUTANT_TESTS set to the pattern), and when they all pass every other test runs
# too (--full): a mutant survives only when nothing fails. The file is restored before the next.
# A build that fails kills the mutant only when its log matches --build-kills (default: the
# generator's lint of the knowledge base, which the build runs, refusing the references);
# any other build failure (the compiler refusing the mutant) marks the mutation BROKEN: it has
# to be rewritten so that it builds, or it says nothing about the tests.
# Exit status: 0 when every mutant was killed, 1 when one survived, is broken or its snippet is
# stale, 2 on bad usage. --check only verifies that every snippet applies (no build, no tests).
# --logs DIR keeps each mutant's build and test output as DIR/ID.log.
#
# Not part of `make test` (a build per mutant takes minutes); `make mutate` runs it, and the
# test mutate/script runs it on a tiny project (tests/data/mutate) to keep the script honest.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
list=""
logs=""
only=""
check=0
keep=0
jobs=${JOBS:-2}
build_cmd=""
test_cmd=""
full_cmd=""
build_kills='ddx-gen: .*(do not pass lint|ranks? )'
while [ $# -gt 0 ]; do
    case "$1" in
    --list) list=$2; shift 2 ;;
    --only) only=",$2,"; shift 2 ;;
    --check) check=1; shift ;;
    --keep) keep=1; shift ;;
    --logs) logs=$2; mkdir -p "$logs" || exit 2; shift 2 ;;
    --root) root=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --build) build_cmd=$2; shift 2 ;;
    --test) test_cmd=$2; shift 2 ;;
    --full) full_cmd=$2; shift 2 ;;
    --build-kills) build_kills=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d'; exit 0 ;;
    *) echo "mutate.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
    esac
done
[ -n "$list" ] || list=$root/scripts/mutations.txt
case "$list" in /*) ;; *) list=$(pwd)/$list ;; esac
[ -r "$list" ] || { echo "mutate.sh: cannot read the list $list" >&2; exit 2; }
# the default build and tests: CMake and ctest in the copy (the slow live scenarios left out)
[ -n "$build_cmd" ] || build_cmd="cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j $jobs"
[ -n "$test_cmd" ] || test_cmd="cd build && ctest -j $jobs --stop-on-failure --output-on-failure -E 'scenarios/live' -R \"\$MUTANT_TESTS\""
[ -n "$full_cmd" ] || full_cmd="cd build && ctest -j $jobs --output-on-failure -E 'scenarios/live'"

tmp=$(mktemp -d)
cleanup() { [ "$keep" = 1 ] && echo "kept: $tmp" || rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 2' INT TERM

# ---- the list: one folder per mutation with file, tests, about, find and replace ------------
awk -v dir="$tmp/m" '
    function flush() {
        if (id == "") return
        sub(/\n+$/, "", repl)
        printf "%s", find > (dir "/" id "/find"); close(dir "/" id "/find")
        printf "%s", repl > (dir "/" id "/replace"); close(dir "/" id "/replace")
    }
    /^== / { flush(); id = $2; mode = ""; find = ""; repl = ""; fn = 0; rn = 0
             system("mkdir -p \"" dir "/" id "\""); print id > (dir "/order"); next }
    /^find:$/ && id != "" { mode = "find"; next }
    /^replace:$/ && id != "" { mode = "replace"; next }
    mode == "find" { find = find (fn++ ? "\n" : "") $0; next }
    mode == "replace" && ($0 == "#" || /^# /) { mode = "done"; next }
    mode == "replace" { repl = repl (rn++ ? "\n" : "") $0; next }
    /^#/ || !NF { next }
    mode == "done" { print "mutate.sh: list line " NR " follows a comment inside a mutation: " $0 > "/dev/stderr"; bad = 1; next }
    id != "" && /^about: / { sub(/^about: /, ""); print > (dir "/" id "/about"); next }
    id != "" && /^file: / { sub(/^file: /, ""); print > (dir "/" id "/file"); next }
    id != "" && /^tests: / { sub(/^tests: /, ""); print > (dir "/" id "/tests"); next }
    { print "mutate.sh: list line " NR " is not part of a mutation: " $0 > "/dev/stderr"; bad = 1 }
    END { flush(); exit bad }
' "$list" || exit 2
[ -f "$tmp/m/order" ] || { echo "mutate.sh: no mutation in $list" >&2; exit 2; }
for id in $(cat "$tmp/m/order"); do
    for k in about file tests; do
        [ -s "$tmp/m/$id/$k" ] || { echo "mutate.sh: mutation $id has no '$k:' line" >&2; exit 2; }
    done
    [ -s "$tmp/m/$id/find" ] || { echo "mutate.sh: mutation $id has no snippet to find" >&2; exit 2; }
done
dups=$(sort "$tmp/m/order" | uniq -d)
[ -z "$dups" ] || { echo "mutate.sh: ids used twice: $dups" >&2; exit 2; }

# apply ID TREE: rewrite TREE/file with the snippet replaced; 3 when it is not there exactly once
apply() {
    d=$tmp/m/$1
    f=$2/$(cat "$d/file")
    [ -f "$f" ] || return 4
    awk -v findf="$d/find" -v replf="$d/replace" '
        BEGIN { while ((getline l < findf) > 0) find = find (fn++ ? "\n" : "") l
                while ((getline l < replf) > 0) repl = repl (rn++ ? "\n" : "") l }
        { text = text (tn++ ? "\n" : "") $0 }
        END { n = 0; rest = text; while ((i = index(rest, find)) > 0) { n++; rest = substr(rest, i + length(find)) }
              if (find == "" || n != 1) { print n > "/dev/stderr"; exit 3 }
              i = index(text, find)
              printf "%s%s%s\n", substr(text, 1, i - 1), repl, substr(text, i + length(find)) }
    ' "$f" >"$f.mutant" 2>"$tmp/count" || { rm -f "$f.mutant"; return 3; }
    cp "$f" "$f.orig" && mv "$f.mutant" "$f"
}
restore() { f=$2/$(cat "$tmp/m/$1/file"); mv "$f.orig" "$f"; }
selected() { [ -z "$only" ] || case "$only" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

# ---- the copy -----------------------------------------------------------------------------
copy=$tmp/tree/$(basename "$root")
mkdir -p "$copy"
(cd "$root" && tar --exclude='./build' --exclude='./build-*' --exclude='./.git' -cf - .) |
    (cd "$copy" && tar -xf -) || { echo "mutate.sh: cannot copy $root" >&2; exit 2; }
[ -d "$root/../shared" ] && ln -s "$(cd "$root/../shared" && pwd)" "$tmp/tree/shared"

stale=0
for id in $(cat "$tmp/m/order"); do
    selected "$id" || continue
    if apply "$id" "$copy"; then
        restore "$id" "$copy"
    else
        echo "STALE    $id: the snippet is not in $(cat "$tmp/m/$id/file") exactly once (found $(cat "$tmp/count" 2>/dev/null || echo 0)): $(cat "$tmp/m/$id/about")"
        stale=$((stale + 1))
    fi
done
if [ "$check" = 1 ]; then
    n=$(wc -l <"$tmp/m/order")
    [ "$stale" = 0 ] && echo "mutate.sh: all $n mutations apply" && exit 0
    exit 1
fi

log=$tmp/log
echo "mutate.sh: building a copy of $root"
(cd "$copy" && sh -c "$build_cmd") >"$log" 2>&1 || { tail -30 "$log"; echo "mutate.sh: the unmutated copy does not build" >&2; exit 2; }
# the tests each mutation names must pass before it is applied, or a kill means nothing
pat=$(for id in $(cat "$tmp/m/order"); do selected "$id" && cat "$tmp/m/$id/tests" 2>/dev/null; done | paste -sd'|' -)
(cd "$copy" && MUTANT_TESTS="$pat" sh -c "$test_cmd") >"$log" 2>&1 ||
    { tail -30 "$log"; echo "mutate.sh: the unmutated copy fails the tests the list names" >&2; exit 2; }

killed=0
survived=0
broken=0
# which test failed: the first of ctest's "tests FAILED" list (not of its skipped list), or a
# FAIL line of another runner
failed_test() {
    t=$(sed -n '/The following tests FAILED:/,$ s/^[[:space:]]*[0-9]* - \([^ ]*\) (.*/\1/p' "$1" | head -1)
    [ -n "$t" ] || t=$(sed -n 's/^FAIL: *\([^ :]*\).*/\1/p' "$1" | head -1)
    echo "${t:-a test}"
}
for id in $(cat "$tmp/m/order"); do
    selected "$id" || continue
    about=$(cat "$tmp/m/$id/about" 2>/dev/null)
    apply "$id" "$copy" || continue
    tests=$(cat "$tmp/m/$id/tests" 2>/dev/null)
    if ! (cd "$copy" && sh -c "$build_cmd") >"$log" 2>&1; then
        if grep -qE -- "$build_kills" "$log"; then
            verdict="killed   $id  by the build ($(grep -m1 -E -- "$build_kills" "$log" | cut -c1-100))"
            killed=$((killed + 1))
        else
            verdict="BROKEN   $id: it does not build ($(grep -m1 -E 'error|Error' "$log" | cut -c1-100))"
            broken=$((broken + 1))
        fi
    elif ! (cd "$copy" && MUTANT_TESTS="$tests" sh -c "$test_cmd") >"$log" 2>&1; then
        verdict="killed   $id  by $(failed_test "$log")"
        killed=$((killed + 1))
    elif ! (cd "$copy" && MUTANT_TESTS="$tests" sh -c "$full_cmd") >"$log" 2>&1; then
        verdict="killed   $id  by $(failed_test "$log") (not by the tests it names: $tests)"
        killed=$((killed + 1))
    else
        verdict="SURVIVED $id"
        survived=$((survived + 1))
    fi
    restore "$id" "$copy"
    [ -z "$logs" ] || cp "$log" "$logs/$id.log"
    echo "$verdict: $about"
done
# rebuild the restored copy so --keep leaves a working tree
[ "$keep" = 1 ] && (cd "$copy" && sh -c "$build_cmd") >/dev/null 2>&1
echo "mutate.sh: $killed killed, $survived survived, $broken broken, $stale stale"
[ "$survived" = 0 ] && [ "$broken" = 0 ] && [ "$stale" = 0 ]
