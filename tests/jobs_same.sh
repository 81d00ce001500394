#!/bin/sh
# jobs_same.sh -- the report is byte for byte the same whatever the number of threads reading
# the inputs: a generated multi-rank job (bench/gen_job.py, several chunks, failures scattered
# and at the end) as one interleaved log and as one file per rank, in JSON, verbose text and
# HTML, with --jobs 1, 2 and 3. Usage: jobs_same.sh DDX SOURCE_DIR
set -eu
ddx=$1
src=$2
w=$(mktemp -d "${TMPDIR:-/tmp}/ddx-jobs.XXXXXX")
trap 'rm -rf "$w"' EXIT
/usr/bin/python3 "$src/bench/gen_job.py" --size-mb 6 --ranks 16 --seed 7 --failure-lines 40 \
    --out "$w/job.log" --per-rank-dir "$w/ranks" > /dev/null 2>&1
fail=0
for input in "$w/job.log" "$w/ranks"; do
    for fmt in "--json" "--verbose" "--format html"; do
        for j in 1 2 3; do
            set +e
            # shellcheck disable=SC2086
            "$ddx" diagnose $fmt --jobs "$j" "$input" > "$w/out.$j" 2> "$w/err.$j"
            echo "exit $?" >> "$w/out.$j"
            set -e
        done
        # the report names what the generator put in: a test that cannot pass on empty output
        if ! grep -q "childfailed\|nccl\|cuda" "$w/out.1"; then
            echo "FAIL: $input $fmt: --jobs 1 found nothing:" >&2
            head -20 "$w/out.1" "$w/err.1" >&2
            fail=1
        fi
        for j in 2 3; do
            if ! cmp -s "$w/out.1" "$w/out.$j" || ! cmp -s "$w/err.1" "$w/err.$j"; then
                echo "FAIL: $input $fmt: --jobs $j differs from --jobs 1:" >&2
                diff "$w/out.1" "$w/out.$j" | head -20 >&2
                diff "$w/err.1" "$w/err.$j" | head -5 >&2
                fail=1
            fi
        done
    done
done
[ "$fail" = 0 ] && echo "ok: the same report with 1, 2 and 3 threads"
exit "$fail"
