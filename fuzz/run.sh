#!/bin/sh
# run.sh -- a fuzzing campaign over every libFuzzer target of fuzz/ (make fuzz-run).
#
#   fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
#
# Each target runs SECONDS seconds at the lowest priority (nice 19) with a 2 GiB memory limit
# and a 10 s limit per input, from seeds taken from the repository (logs, configs, dumps,
# references; small compressed files and archives made here from a log). The corpus each run
# grows is kept in BUILD_DIR/fuzz-corpus/TARGET, so campaigns add up; crashes, leaks, timeouts
# and out-of-memory inputs go to BUILD_DIR/fuzz-crashes/. Each one found becomes a regression
# test (tests/unit/test_fuzz_regressions.c) and a row of docs/robustness.md. One summary line
# per target: executions, CPU seconds, corpus size, findings.
set -u
build=$1
secs=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
targets=${*:-$(cd "$build" && ls fuzz_* 2>/dev/null)}
[ -n "$targets" ] || { echo "fuzz/run.sh: no fuzz targets in $build (make fuzz)" >&2; exit 2; }
seeds="$build/fuzz-seeds"
crashes="$build/fuzz-crashes"
mkdir -p "$crashes"

# seeds per kind, made once
if [ ! -d "$seeds" ]; then
    mkdir -p "$seeds/log" "$seeds/config" "$seeds/frdump" "$seeds/reference" "$seeds/input"
    i=0
    for f in $(find "$root/tests/corpus" "$root/tests/job" "$root/tests/scenarios" -type f \
               \( -name '*.log' -o -name '*.txt' -o -name '*.out' \) -size -64k | sort | head -400); do
        i=$((i + 1)); cp "$f" "$seeds/log/$i"
    done
    for f in $(find "$root/tests" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*config*.json' \) \
               -size -64k | sort | head -200); do
        i=$((i + 1)); cp "$f" "$seeds/config/$i"
    done
    for f in $(find "$root/tests" -type f \( -name 'nccl_trace*' -o -name '*.pkl' -o -path '*frdump*.json' \) \
               -size -256k | sort); do
        i=$((i + 1)); cp "$f" "$seeds/frdump/$i"
    done
    for f in $(find "$root/references" -name '*.md' | sort | head -200); do
        i=$((i + 1)); cp "$f" "$seeds/reference/$i"
    done
    log=$(find "$root/tests/corpus" -name '*.log' -size -16k | sort | head -1)
    cp "$log" "$seeds/input/plain"
    gzip -c "$log" >"$seeds/input/log.gz" 2>/dev/null
    xz -c "$log" >"$seeds/input/log.xz" 2>/dev/null
    zstd -q -c "$log" >"$seeds/input/log.zst" 2>/dev/null
    bzip2 -c "$log" >"$seeds/input/log.bz2" 2>/dev/null
    lz4 -q -c "$log" >"$seeds/input/log.lz4" 2>/dev/null
    (cd "$(dirname "$log")" && tar cf "$seeds/input/job.tar" "$(basename "$log")" &&
        tar czf "$seeds/input/job.tgz" "$(basename "$log")" &&
        zip -q "$seeds/input/job.zip" "$(basename "$log")") 2>/dev/null
    iconv -f UTF-8 -t UTF-16 "$log" >"$seeds/input/log.utf16" 2>/dev/null
    find "$seeds/input" -size 0 -delete
fi

kind_of() {
    case $1 in
    fuzz_attrib | fuzz_norm | fuzz_scan) echo log ;;
    fuzz_config) echo config ;;
    fuzz_frdump | fuzz_ras) echo frdump ;;
    fuzz_reference) echo reference ;;
    fuzz_input) echo input ;;
    *) echo log ;;
    esac
}

for t in $targets; do
    corpus="$build/fuzz-corpus/$t"
    mkdir -p "$corpus"
    kind=$(kind_of "$t")
    extra=""
    [ "$t" = fuzz_scan ] && extra="$seeds/config $seeds/input"
    log="$build/fuzz-$t.log"
    start=$(date +%s)
    # shellcheck disable=SC2086
    /usr/bin/time -f "%U %S" -o "$build/fuzz-$t.time" nice -n 19 "$build/$t" \
        -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$crashes/$t-" \
        "$corpus" "$seeds/$kind" $extra >"$log" 2>&1
    rc=$?
    cpu=$(awk '{printf "%.0f", $1 + $2}' "$build/fuzz-$t.time" 2>/dev/null)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    found=$(ls "$crashes" | grep -c "^$t-" || true)
    echo "$t: ${execs:-?} inputs in ${cpu:-?} CPU s ($(($(date +%s) - start)) s wall), corpus $(ls "$corpus" | wc -l), findings $found, exit $rc"
done
