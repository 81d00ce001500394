#!/bin/sh
# corpus_threads.sh -- every labelled case is its own thread, and no eval case is a thread the
# knowledge base already uses as an example.
#
#   tests/corpus_threads.sh ROOT
#
# The eval sets are tests/corpus, tests/corpus-seen, every tests/firstlook/<batch> and, when it
# is there, ../shared/corpus. A thread is a case.json's "source", normalised: scheme, "www.",
# query, "#issuecomment-..." anchors and trailing slashes dropped, host and owner/repo in lower
# case, and a GitHub pull request the same thread as the issue of that number.
#  1. No thread appears in two cases (two cases of one thread count it twice in the figures).
#  2. No case outside tests/corpus-seen shares its thread with a reference example: lint makes
#     every example rank its reference first, so such a case measures nothing. Cases whose
#     thread a reference took as an example first are kept in tests/corpus-seen and evaluated
#     on their own (docs/accuracy.md); a case there whose thread is no example is misplaced.
set -u
root=${1:?usage: corpus_threads.sh ROOT}
cd "$root" || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v jq >/dev/null 2>&1 || { echo "corpus_threads.sh: jq is needed"; exit 2; }

norm() {
    tr 'A-Z' 'a-z' | sed -E 's#^[a-z]+://##; s#^www\.##; s#[?\#].*$##; s#/+$##;
        s#^(github\.com/[^/]+/[^/]+)/pull/([0-9]+).*$#\1/issues/\2#;
        s#^(github\.com/[^/]+/[^/]+)/issues/([0-9]+)/.*$#\1/issues/\2#'
}

sets="tests/corpus tests/corpus-seen"
for d in tests/firstlook/*/; do [ -d "$d" ] && sets="$sets ${d%/}"; done
if [ -d ../shared/corpus ]; then
    sets="$sets ../shared/corpus"
else
    echo "note: ../shared/corpus is absent; only the repository's own sets are checked"
fi
: >"$tmp/cases"
for s in $sets; do
    find "$s" -name case.json 2>/dev/null | sort >>"$tmp/files"
done
# one jq for every case: "SOURCE<TAB>CASE_DIR" (sources never hold a TAB)
[ -s "$tmp/files" ] && tr '\n' '\0' <"$tmp/files" |
    xargs -0 jq -r '(.source // "MISSING") + "\t" + (input_filename | sub("/case.json$"; ""))' |
    while IFS="$(printf '\t')" read -r src dir; do
        [ "$src" != MISSING ] || { echo "MISSING $dir"; continue; }
        printf '%s %s\n' "$src" "$dir"
    done >"$tmp/raw"
: >"$tmp/cases"
grep '^MISSING ' "$tmp/raw" >>"$tmp/cases"
grep -v '^MISSING ' "$tmp/raw" | awk '{print $1}' | norm >"$tmp/srcs"
grep -v '^MISSING ' "$tmp/raw" | awk '{print $2}' | paste -d ' ' "$tmp/srcs" - >>"$tmp/cases"
fails=0
if grep -q '^MISSING ' "$tmp/cases"; then
    sed -n 's/^MISSING /FAIL: case without a source: /p' "$tmp/cases"
    fails=$((fails + 1))
    grep -v '^MISSING ' "$tmp/cases" >"$tmp/c2" && mv "$tmp/c2" "$tmp/cases"
fi
ncases=$(wc -l <"$tmp/cases")

# 1. no thread twice
awk '{print $1}' "$tmp/cases" | sort | uniq -d >"$tmp/dups"
while read -r t; do
    echo "FAIL: thread $t is more than one case: $(awk -v t="$t" '$1 == t {printf "%s ", $2}' "$tmp/cases")"
    fails=$((fails + 1))
done <"$tmp/dups"

# 2. the threads of the references' examples (front matter, the examples: list)
for f in references/*/*.md; do
    awk 'NR == 1 && /^---/ {fm = 1; next} fm && /^---/ {exit}
         fm && /^[a-z_]+:/ {ex = /^examples:/}
         fm && ex && /^ *source: *https?:/ {sub(/^ *source: */, ""); print}' "$f"
done | norm | sort -u >"$tmp/examples"
while read -r t path; do
    seen=0
    grep -qxF "$t" "$tmp/examples" && seen=1
    case "$path" in
    tests/corpus-seen/*)
        [ "$seen" = 1 ] || {
            echo "FAIL: $path is in tests/corpus-seen but its thread $t is no reference example"
            fails=$((fails + 1))
        } ;;
    *)
        [ "$seen" = 0 ] || {
            echo "FAIL: $path is the thread of a reference example ($t): move it to tests/corpus-seen or drop the example"
            fails=$((fails + 1))
        } ;;
    esac
done <"$tmp/cases"

[ "$fails" = 0 ] || exit 1
echo "corpus threads: $ncases cases in $(echo $sets | wc -w) sets, no thread twice; none outside tests/corpus-seen is one of the $(wc -l <"$tmp/examples") example threads"
