#!/bin/sh
# Every labelled case of a corpus that carries env or config files must show, in the JSON, at
# least one evidence check of its top finding resolved from those files (confirmed or
# contradicted). Negatives (no expected id) have no top finding to check; eval scores them.
# Usage: checks_resolved.sh DDX_BINARY CORPUS_DIR
[ $# -eq 2 ] || { echo "usage: $0 DDX_BINARY CORPUS_DIR" >&2; exit 2; }
exec python3 - "$@" <<'PY'
import json, os, subprocess, sys

ddx, corpus = os.path.abspath(sys.argv[1]), sys.argv[2]
bad = seen = 0
for case in sorted(os.listdir(corpus)):
    d = os.path.join(corpus, case)
    if not os.path.isdir(d):
        continue
    files = [f for f in sorted(os.listdir(d)) if f != "case.json"]
    try:
        with open(os.path.join(d, "case.json")) as f:
            if not json.load(f).get("expected"):
                continue
    except (OSError, ValueError):
        pass
    if not any(f.startswith(("env", "config")) or f.endswith((".yaml", ".yml", ".json"))
               for f in files):
        continue
    seen += 1
    out = subprocess.run([ddx, "diagnose", "--json"] + [os.path.join(d, f) for f in files],
                         capture_output=True, text=True)
    try:
        rep = json.loads(out.stdout)
    except ValueError:
        print(f"{case}: ddx printed no JSON ({out.stderr.strip()})")
        bad += 1
        continue
    if not rep["diagnoses"]:
        print(f"{case}: no finding")
        bad += 1
        continue
    top = rep["diagnoses"][0]
    resolved = [c for c in top["checks"] if c["status"] != "not_visible"]
    if not resolved:
        print(f"{case}: {top['id']}: no check resolved from the case's env/config files")
        bad += 1
print(f"{seen - bad}/{seen} cases with env or config files resolve a check")
sys.exit(1 if bad or not seen else 0)
PY
