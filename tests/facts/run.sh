#!/bin/sh
# Fact extractor cases: tests/facts/<case>/ holds real output pasted in a public report (the
# files) and expect.txt: "source: URL", then one "fact.name = value @ file:line" a line (the
# value as `ddx diagnose --json` prints it: true/false for booleans).
# Runs `ddx diagnose --json` on each case's files (all but expect.txt, from inside the case
# folder) and checks every expected fact's value and the file:line it came from.
# Prints one line per failure; exits non-zero if any.
# Usage: run.sh DDX_BINARY CASE_DIR...
if [ $# -lt 2 ]; then
    echo "usage: $0 DDX_BINARY CASE_DIR..." >&2
    exit 2
fi
exec python3 - "$@" <<'PY'
import json, os, subprocess, sys

ddx = os.path.abspath(sys.argv[1])
status = 0


def text(v):
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def check(case):
    name = os.path.basename(os.path.normpath(case))
    expect = os.path.join(case, "expect.txt")
    if not os.path.isfile(expect):
        print("%s: no expect.txt" % name)
        return 1
    files = sorted(f for f in os.listdir(case)
                   if f != "expect.txt" and os.path.isfile(os.path.join(case, f)))
    p = subprocess.run([ddx, "diagnose", "--json"] + files, cwd=case,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # numbers stay as printed: "15.90" is not 15.9
        d = json.loads(p.stdout.decode("utf-8", "replace"), parse_float=str, parse_int=str)
    except ValueError as e:
        print("%s: ddx did not print JSON (%s): %s" % (name, e, p.stderr.decode()[-300:]))
        return 1
    facts, sources = d.get("facts", {}), d.get("fact_sources", {})
    bad = 0
    with open(expect) as f:
        lines = f.read().splitlines()
    if not lines or not lines[0].startswith("source: http"):
        print("%s: expect.txt must start with \"source: URL\"" % name)
        bad += 1
    for n, line in enumerate(lines[1:], 2):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            lhs, where = line.rsplit(" @ ", 1)
            fact, value = lhs.split(" = ", 1)
        except ValueError:
            print("%s: expect.txt:%d: not \"fact = value @ file:line\"" % (name, n))
            bad += 1
            continue
        fact, value, where = fact.strip(), value.strip(), where.strip()
        if fact not in facts:
            print("%s: %s missing (expected %s @ %s)" % (name, fact, value, where))
            bad += 1
            continue
        if text(facts[fact]) != value:
            print("%s: %s = %s, expected %s" % (name, fact, text(facts[fact]), value))
            bad += 1
        if sources.get(fact) != where:
            print("%s: %s from %s, expected %s" % (name, fact, sources.get(fact), where))
            bad += 1
    return 1 if bad else 0


for case in sys.argv[2:]:
    status |= check(case)
sys.exit(status)
PY
