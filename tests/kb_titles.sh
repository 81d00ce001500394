#!/bin/sh
# kb_titles.sh -- every reference's title is in our own words: none is the title a seed list
# gives for its id (../shared/seed-references.tsv, ../shared/extension-references.tsv: the
# catalogue's working titles, which we do not copy), compared without case and punctuation.
#
#   tests/kb_titles.sh ROOT SEED_TSV...
set -u
root=${1:?usage: kb_titles.sh ROOT SEED_TSV...}
shift
cd "$root" || exit 2
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
squash() { tr 'A-Z' 'a-z' | tr -c 'a-z0-9\n' ' ' | tr -s ' ' | sed 's/^ //; s/ $//'; }
# id TAB squashed seed title
for tsv in "$@"; do
    awk -F '\t' 'NR > 1 && $1 != "" {print $1 "\t" $3}' "$tsv"
done | while IFS="$(printf '\t')" read -r id title; do
    printf '%s\t%s\n' "$id" "$(printf '%s' "$title" | squash)"
done >"$tmp"
fails=0
n=0
for f in references/*/*.md; do
    id=$(sed -n '2,/^---/s/^id: *//p' "$f" | head -1)
    title=$(sed -n '2,/^---/s/^title: *//p' "$f" | head -1 | sed "s/^'//; s/'\$//; s/''/'/g" | squash)
    seed=$(awk -F '\t' -v id="$id" '$1 == id {print $2}' "$tmp")
    [ -n "$seed" ] || continue
    n=$((n + 1))
    if [ "$title" = "$seed" ]; then
        echo "FAIL: $f: the title is the seed list's title for $id word for word; write it in our own words"
        fails=$((fails + 1))
    fi
done
[ "$fails" = 0 ] || exit 1
echo "titles: $n references with a seed title, none copied"
