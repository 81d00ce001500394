#!/bin/sh
# bench/run.sh -- how fast ddx reads a large multi-rank log, against wc -l and ripgrep.
# POSIX sh; needs python3 (standard library), hyperfine, rg, GNU time (/usr/bin/time), gzip, zstd.
#
#   sh bench/run.sh                     quick: a 100 MB log
#   sh bench/run.sh --full              100 MB and 1 GB (1024 MB)
#   sh bench/run.sh --sizes "50 300" --build build --ranks 32 --runs 5 --out results-table.md
#
# Options:
#   --build DIR        build folder holding ddx (default: build)
#   --sizes "N ..."    sizes in MB (default: 100; --full: "100 1024")
#   --full             same as --sizes "100 1024"
#   --gen job|chatter  the data: gen_job.py's trainer job, every rank printing a step line each
#                      step (default), or gen.py's launcher and logging chatter (the first bench)
#   --ranks N          ranks in the generated job (default 64 for job, 16 for chatter)
#   --seed N           generator seed (default 1)
#   --runs N           hyperfine runs per command below 500 MB (default 5; 3 from 500 MB on)
#   --pcre2-max-mb N   run the (slow) rg -P figure only up to this size (default 200; 0 = never)
#   --workdir DIR      where the generated data go (default: a new folder under ${TMPDIR:-/tmp});
#                      removed at the end unless --keep
#   --keep             keep the generated data
#   --out FILE         also write the markdown table to FILE
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
gen=job
sizes=100
ranks=
seed=1
runs=
pcre2_max=200
workdir=
keep=0
out=

while [ $# -gt 0 ]; do
    case "$1" in
        --build) build=$2; shift 2 ;;
        --gen) gen=$2; shift 2 ;;
        --sizes) sizes=$2; shift 2 ;;
        --full) sizes="100 1024"; shift ;;
        --ranks) ranks=$2; shift 2 ;;
        --seed) seed=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --pcre2-max-mb) pcre2_max=$2; shift 2 ;;
        --workdir) workdir=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

case "$gen" in
    job) genpy=gen_job.py; ranks=${ranks:-64} ;;
    chatter) genpy=gen.py; ranks=${ranks:-16} ;;
    *) echo "run.sh: --gen takes job or chatter, not $gen" >&2; exit 2 ;;
esac
case "$build" in /*) ;; *) build="$root/$build" ;; esac
ddx="$build/ddx"
[ -x "$ddx" ] || { echo "run.sh: $ddx not found; build first (make build)" >&2; exit 2; }
for t in python3 hyperfine rg gzip zstd; do
    command -v "$t" >/dev/null 2>&1 || { echo "run.sh: $t is missing (apt-get install $t)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "run.sh: GNU time is missing (apt-get install time)" >&2; exit 2; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3

made_workdir=0
if [ -z "$workdir" ]; then
    workdir=$(mktemp -d "${TMPDIR:-/tmp}/ddx-bench.XXXXXX")
    made_workdir=1
else
    mkdir -p "$workdir"
fi
cleanup() {
    if [ "$keep" = 0 ]; then
        if [ "$made_workdir" = 1 ]; then rm -rf "$workdir"
        else rm -rf "$workdir"/job-*.log "$workdir"/job-*.log.gz "$workdir"/job-*.log.zst \
                    "$workdir"/ranks-* "$workdir"/*.json "$workdir"/*.html "$workdir"/pat* "$workdir"/one-line.log \
                    "$workdir"/rss.txt "$workdir"/table.md "$workdir"/rows.tsv "$workdir"/pcre2.sh
        fi
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------------------------------------
# Pattern set for rg: the same patterns ddx uses. Named groups are made plain (rg needs no
# names, PCRE2 rejects a name used twice in one joined pattern, the Rust engine of rg 13 only
# knows (?P<name>...)); duplicates removed. Each pattern is tried alone; rejected ones dropped.
"$ddx" refs --patterns > "$workdir/pat.raw"
n_raw=$(wc -l < "$workdir/pat.raw")
sed -E 's/\(\?<([A-Za-z_][A-Za-z0-9_]*)>/(?:/g' "$workdir/pat.raw" | sort -u > "$workdir/pat.uniq"
# accepted PATFILE ENGINE-FLAG: rg compiles every pattern of PATFILE (exit 2 = rejected)
accepted() {
    set +e; rg $2 -q -f "$1" /dev/null 2>/dev/null; rc=$?; set -e
    [ "$rc" -ne 2 ]
}
# filter ENGINE-FLAG OUT: keep what rg accepts, testing one by one only chunks that fail
filter() {
    : > "$2"
    rm -f "$workdir"/pat.try.*
    split -l 60 "$workdir/pat.uniq" "$workdir/pat.try."
    for c in "$workdir"/pat.try.*; do
        if accepted "$c" "$1"; then cat "$c" >> "$2"; continue; fi
        while IFS= read -r p; do
            printf '%s\n' "$p" > "$workdir/pat.one"
            if accepted "$workdir/pat.one" "$1"; then printf '%s\n' "$p" >> "$2"
            else printf '%s: %s\n' "$1" "$p" >> "$workdir/pat.rejected"; fi
        done < "$c"
    done
    rm -f "$workdir"/pat.try.*
}
: > "$workdir/pat.rejected"
filter --no-unicode "$workdir/pat.rust"
filter -P "$workdir/pat.pcre2"
n_uniq=$(wc -l < "$workdir/pat.uniq")
n_rust=$(wc -l < "$workdir/pat.rust")
n_pcre2=$(wc -l < "$workdir/pat.pcre2")
# PCRE2 cannot compile all patterns as one alternation ("regular expression is too large"):
# rg -P gets them in chunks of 60, one rg run per chunk, each reading the whole file.
split -l 60 "$workdir/pat.pcre2" "$workdir/pat.chunk."
n_chunks=$(ls "$workdir"/pat.chunk.* | wc -l)
echo "patterns: $n_raw from ddx refs --patterns, $n_uniq distinct; rg default engine (--no-unicode) takes $n_rust, rg -P takes $n_pcre2 (in $n_chunks runs of up to 60)" >&2
if [ -s "$workdir/pat.rejected" ]; then echo "rejected by rg:" >&2; cat "$workdir/pat.rejected" >&2; fi

# ---------------------------------------------------------------------------------------------
# measure NAME INPUT_LABEL BYTES RUNS COMMAND: hyperfine mean/stddev + GNU time peak RSS.
rows="$workdir/rows.tsv"
: > "$rows"
measure() {
    name=$1; label=$2; bytes=$3; nruns=$4; cmd=$5
    echo "-- $name: $cmd" >&2
    hyperfine -N -i --style none --warmup 1 --runs "$nruns" --export-json "$workdir/h.json" "$cmd" >/dev/null 2>&1 \
        || hyperfine -i --style none --warmup 1 --runs "$nruns" --export-json "$workdir/h.json" "$cmd" >/dev/null
    set +e
    /usr/bin/time -f '%M' -o "$workdir/rss.txt" sh -c "exec $cmd" >/dev/null 2>&1
    set -e
    rss=$(tail -n 1 "$workdir/rss.txt")
    "$py" - "$workdir/h.json" "$name" "$label" "$bytes" "$rss" >> "$rows" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], "%.6f" % r["mean"], "%.6f" % (r["stddev"] or 0),
                 "%.6f" % r["min"], str(len(r["times"])), sys.argv[5],
                 "%.6f" % (r["user"] + r["system"])]))
EOF
    tail -n 1 "$rows" | awk -F '\t' '{printf "   mean %.3f s  sd %.3f  CPU %.3f s  peak RSS %.1f MB\n", $4, $5, $9, $8/1024}' >&2
}

# pcre2_chunks FILE: run rg -P once per chunk (used through sh -c by measure)
cat > "$workdir/pcre2.sh" <<EOF
#!/bin/sh
for c in "$workdir"/pat.chunk.*; do rg -P -c -f "\$c" "\$1"; done
exit 0
EOF
chmod +x "$workdir/pcre2.sh"

# ---------------------------------------------------------------------------------------------
for mb in $sizes; do
    f="$workdir/job-${mb}MB.log"
    d="$workdir/ranks-${mb}MB"
    echo "== generating $mb MB (ranks $ranks, seed $seed)" >&2
    "$py" "$here/$genpy" --size-mb "$mb" --ranks "$ranks" --seed "$seed" --out "$f" \
        --per-rank-dir "$d" --gz --zst --repo "$root"
    bytes=$(wc -c < "$f")
    dbytes=$(cat "$d"/* | wc -c)
    n=${runs:-}
    if [ -z "$n" ]; then if [ "$mb" -ge 500 ]; then n=3; else n=5; fi; fi
    lbl="${mb} MB"
    sync
    measure "wc -l" "$lbl" "$bytes" "$n" "wc -l $f"
    measure "rg --no-unicode -c -f ($n_rust patterns)" "$lbl" "$bytes" "$n" "rg --no-unicode -c -f $workdir/pat.rust $f"
    if [ "$pcre2_max" -gt 0 ] && [ "$mb" -le "$pcre2_max" ]; then
        measure "rg -P -c -f ($n_pcre2 patterns, $n_chunks runs)" "$lbl" "$bytes" 1 "$workdir/pcre2.sh $f"
    fi
    measure "ddx diagnose --json --jobs 1" "$lbl" "$bytes" "$n" "$ddx diagnose --json --jobs 1 $f"
    measure "ddx diagnose --json" "$lbl" "$bytes" "$n" "$ddx diagnose --json $f"
    measure "ddx diagnose --json .gz" "$lbl (gzip -1, $(wc -c < "$f.gz" | awk '{printf "%.1f", $1/1e6}') MB)" "$bytes" "$n" "$ddx diagnose --json $f.gz"
    measure "ddx diagnose --json .zst" "$lbl (zstd -3, $(wc -c < "$f.zst" | awk '{printf "%.1f", $1/1e6}') MB)" "$bytes" "$n" "$ddx diagnose --json $f.zst"
    measure "ddx diagnose --json --jobs 1 per-rank folder" "$lbl as $(ls "$d" | wc -l) files" "$dbytes" "$n" "$ddx diagnose --json --jobs 1 $d"
    measure "ddx diagnose --json --jobs 2 per-rank folder" "$lbl as $(ls "$d" | wc -l) files" "$dbytes" "$n" "$ddx diagnose --json --jobs 2 $d"
    # what ddx found in the big file (sanity: it should find the inserted failures)
    set +e
    "$ddx" diagnose --json --html "$workdir/found.html" "$f" > "$workdir/found.json"
    set -e
    # the HTML report of the big file opens offline (headless Chromium, when installed)
    if [ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ]; then
        echo "   the HTML report of $mb MB ($(wc -c < "$workdir/found.html") bytes) in a browser:" >&2
        "$py" "$root/tests/browser/run.py" open --ddx "$ddx" --page "$workdir/found.html" >&2 ||
            echo "   run.sh: the HTML report of $mb MB did not open cleanly" >&2
    fi
    "$py" - "$workdir/found.json" "$mb" >&2 <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ids = [d.get("id") for d in j.get("diagnoses", [])][:5]
print("   ddx on %s MB found: %s (culprit rank %s)" % (sys.argv[2], ", ".join(map(str, ids)) or "nothing", j.get("culprit_rank")))
EOF
    if [ "$keep" = 0 ]; then rm -rf "$f" "$f.gz" "$f.zst" "$d"; fi
done

# start-up: one short line
printf '[rank0]: step 1 loss 2.0\n' > "$workdir/one-line.log"
echo "-- start-up" >&2
hyperfine -N -i --style none --warmup 20 --runs 300 --export-json "$workdir/h.json" \
    "$ddx diagnose --json $workdir/one-line.log" >/dev/null 2>&1 \
    || hyperfine -i --style none --warmup 20 --runs 300 --export-json "$workdir/h.json" \
    "$ddx diagnose --json $workdir/one-line.log" >/dev/null
/usr/bin/time -f '%M' -o "$workdir/rss.txt" "$ddx" diagnose --json "$workdir/one-line.log" >/dev/null 2>&1 || true
rss=$(tail -n 1 "$workdir/rss.txt")
"$py" - "$workdir/h.json" "ddx diagnose --json (start-up)" "1 line" 26 "$rss" >> "$rows" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], "%.6f" % r["mean"], "%.6f" % (r["stddev"] or 0),
                 "%.6f" % r["min"], str(len(r["times"])), sys.argv[5],
                 "%.6f" % (r["user"] + r["system"])]))
EOF

# ---------------------------------------------------------------------------------------------
# the table: ratios are against wc -l and rg (Rust engine) on the same size
"$py" - "$rows" > "$workdir/table.md" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
base = {}
for name, label, b, mean, sd, mn, n, rss, cpu in rows:
    size = label.split(" MB")[0]
    if name == "wc -l":
        base.setdefault(size, {})["wc"] = (float(mean), float(cpu))
    elif name.startswith("rg --no-unicode"):
        base.setdefault(size, {})["rg"] = (float(mean), float(cpu))
def ratio(a, b):
    return "%.2f" % (a / b) if b > 0 else "–"
print("| command | input | wall mean ± sd (min), s | CPU user+sys, s | runs | MB/s wall / CPU | × wc -l wall / CPU | × rg wall / CPU | peak RSS (MB) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for name, label, b, mean, sd, mn, n, rss, cpu in rows:
    size = label.split(" MB")[0]
    m, c = float(mean), float(cpu)
    bb = base.get(size, {})
    if name.endswith("(start-up)"):
        wall = "%.2f ms ± %.2f (min %.2f)" % (m * 1e3, float(sd) * 1e3, float(mn) * 1e3)
        cpus = "%.2f ms" % (c * 1e3)
        mbs = xwc = xrg = "–"
    else:
        wall = "%.3f ± %.3f (min %.3f)" % (m, float(sd), float(mn))
        cpus = "%.3f" % c
        mbs = "%s / %s" % ("%.0f" % (int(b) / 1e6 / m) if m > 0 else "–", "%.0f" % (int(b) / 1e6 / c) if c > 0 else "–")
        xwc = "%s / %s" % (ratio(m, bb["wc"][0]), ratio(c, bb["wc"][1])) if "wc" in bb else "–"
        xrg = "%s / %s" % (ratio(m, bb["rg"][0]), ratio(c, bb["rg"][1])) if "rg" in bb else "–"
    print("| `%s` | %s | %s | %s | %s | %s | %s | %s | %.1f |" % (name, label, wall, cpus, n, mbs, xwc, xrg, int(rss) / 1024))
EOF
echo
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); ddx: $("$ddx" --version) (repository HEAD $rev); rg: $(rg --version | sed -n 1p); $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | sed -n 1p); load average: $(cut -d ' ' -f 1-3 /proc/loadavg)"
echo
cat "$workdir/table.md"
if [ -n "$out" ]; then cp "$workdir/table.md" "$out"; fi
