#!/usr/bin/python3
"""run.py -- tests of the fleet store and report: a generated fleet of 1,200 failed jobs with one
host planted as a repeated culprit (gen_fleet.py), ingested twice (idempotent), reported, and
every figure of the report checked against the generator's own count; concurrent writers; a
damaged, foreign, locked or newer store refused with a clear error and left as it was.

  run.py --ddx build/ddx

Exit status 0 when every check passes, 1 otherwise, 2 on a usage error.
"""
import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from checks import check, summary  # noqa: E402
WINDOW = ["--since", "2026-01-08T00:00:00Z", "--until", "2026-01-15T00:00:00Z"]



def close(a, b, rel=1e-9, abs_=0.0):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def ddx(binary, *args, env=None):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([binary, *args], capture_output=True, text=True, env=e)


def table_digest(db):
    con = sqlite3.connect(db)
    rows = con.execute("SELECT job_key, finding, culprit_rank, culprit_host, nodes, nnodes,"
                       " start_time, end_time, report_sha FROM jobs ORDER BY job_key").fetchall()
    nodes = con.execute("SELECT count(*) FROM job_nodes").fetchone()[0]
    con.close()
    return hashlib.sha256(repr(rows).encode()).hexdigest(), len(rows), nodes


def test_report(binary, work):
    gen = os.path.join(work, "gen")
    subprocess.run([sys.executable, os.path.join(HERE, "gen_fleet.py"), gen], check=True)
    with open(os.path.join(gen, "truth.json")) as f:
        truth = json.load(f)
    db = os.path.join(work, "fleet.db")
    reports = os.path.join(gen, "reports")
    t0 = time.time()
    r = ddx(binary, "fleet", "ingest", "--db", db, reports)
    took = time.time() - t0
    check("ingest: every report stored, the files that are not reports skipped",
          r.returncode == 0 and f"{truth['total_reports']} stored, 0 updated, 0 already stored, "
          f"2 skipped" in r.stdout, f"{r.stdout.strip()} {r.stderr.strip()} in {took:.2f} s")
    first = table_digest(db)
    r = ddx(binary, "fleet", "ingest", "--db", db, reports)
    check("ingest again: idempotent (nothing new, the same rows)",
          r.returncode == 0 and f"0 stored, 0 updated, {truth['total_reports']} already stored"
          in r.stdout and table_digest(db) == first, r.stdout.strip())
    check("store: one row per job, one per host of each job",
          first[1] == truth["total_reports"] and first[2] > first[1], f"{first[1:]}")

    html = os.path.join(work, "fleet.html")
    r = ddx(binary, "fleet", "report", "--db", db, "--json", "--html", html, *WINDOW)
    if not check("report --json", r.returncode == 0, r.stderr):
        return
    rep = json.loads(r.stdout)
    check("report: jobs in the window", rep["jobs"] == truth["jobs"] and
          rep["jobs_with_finding"] == truth["jobs_with_finding"],
          f"{rep['jobs']}/{rep['jobs_with_finding']} vs {truth['jobs']}/"
          f"{truth['jobs_with_finding']}")
    check("report: node-hours lost", close(rep["node_hours_lost"], truth["node_hours_lost"],
                                           abs_=0.01),
          f"{rep['node_hours_lost']} vs {truth['node_hours_lost']:.2f}")
    got = {c["id"]: c for c in rep["classes"]}
    bad = [k for k, v in truth["classes"].items()
           if k not in got or got[k]["jobs"] != v["jobs"] or got[k]["previous"] != v["previous"]
           or not close(got[k]["node_hours"], v["node_hours"], abs_=0.01)
           or len(got[k]["job_ids"]) != min(20, v["jobs"])]
    check("report: each failure class's jobs, the week before, node-hours",
          not bad and len(got) == len(truth["classes"]), f"differ: {bad}")
    trends = all(c["trend"] == ("new" if not c["previous"] else "up" if c["jobs"] > c["previous"]
                                else "down" if c["jobs"] < c["previous"] else "same")
                 for c in rep["classes"])
    order = [c["jobs"] for c in rep["classes"]] == sorted((c["jobs"] for c in rep["classes"]),
                                                          reverse=True)
    check("report: trends, and classes by count", trends and order)
    t = rep["host_test"]
    check("host test: hosts tested and jobs considered",
          t["hosts_tested"] == truth["hosts_tested"] and
          t["jobs_considered"] == truth["jobs_considered"], f"{t}")
    flagged = [h["host"] for h in rep["bad_hosts"]]
    check("host test: the planted host is found, and no other", flagged == truth["flagged"] ==
          [truth["bad_host"]], f"flagged {flagged}, expected {truth['flagged']}")
    if rep["bad_hosts"]:
        h, b = rep["bad_hosts"][0], truth["bad"]
        check("host test: its figures (culprit jobs, jobs, expected, p, Holm-adjusted p)",
              h["culprit_jobs"] == b["culprit_jobs"] and h["jobs"] == b["jobs"] and
              close(h["expected"], b["expected"], abs_=0.001) and
              close(h["p_value"], b["p_value"], rel=1e-6) and
              close(h["p_adjusted"], b["p_adjusted"], rel=1e-6),
              f"{h['culprit_jobs']}/{h['jobs']}, expected {h['expected']}, p {h['p_value']:.4g} "
              f"(truth {b['p_value']:.4g}), adjusted {h['p_adjusted']:.4g}")
        ids = sorted(j["job_id"] for j in h["jobs_as_evidence"])
        check("host test: the jobs behind it, as evidence", ids == b["job_ids"] and
              all(j["evidence"] for j in h["jobs_as_evidence"]), f"{len(ids)} jobs")
    page = open(html).read() if os.path.exists(html) else ""
    check("report --html: one self-contained page naming the host and the classes",
          page.startswith("<!DOCTYPE html>") and truth["bad_host"] in page and
          "nccl-watchdog-timeout" in page and "<script" not in page and "http" not in page)
    r = ddx(binary, "fleet", "report", "--db", db, *WINDOW)
    check("report as text", r.returncode == 0 and f"{truth['bad_host']}: culprit of "
          f"{truth['bad']['culprit_jobs']} of its {truth['bad']['jobs']} jobs" in r.stdout,
          r.stdout[-300:])
    r = ddx(binary, "fleet", "report", "--db", db, "--json", "--since", "2026-01-14T00:00:00Z",
            "--until", "2026-01-15T00:00:00Z")
    day = json.loads(r.stdout) if r.returncode == 0 else {}
    check("report: a narrower window (--since) counts fewer jobs",
          0 < day.get("jobs", 0) < truth["jobs"], f"{day.get('jobs')}")


def one_report(job_id, culprit=1, nodes=("n1", "n2")):
    return {"schema": 1, "culprit_rank": culprit,
            "diagnoses": [{"id": "cuda-oom", "title": "CUDA out of memory", "category": "x",
                           "level": "confirmed", "confidence": 0.9,
                           "first_seen": {"path": "a.log", "line": 3, "rank": culprit},
                           "evidence": [{"path": "a.log", "line": 3, "text": "oom"}]}],
            "job": {"id": job_id, "cluster": "c", "nodes": list(nodes),
                    "start": "2026-01-10T00:00:00Z", "end": "2026-01-10T02:00:00Z",
                    "task_nodes": ["n1", "n2"]}}


def test_record(binary, work):
    db = os.path.join(work, "rec.db")
    path = os.path.join(work, "r1.json")
    with open(path, "w") as f:
        json.dump(one_report("77"), f)
    r = ddx(binary, "record", "--db", db, path)
    r2 = ddx(binary, "record", "--db", db, path)
    check("record: stored, then already stored", r.returncode == 0 and "stored in" in r.stdout
          and "already stored" in r2.stdout, r.stdout + r.stderr + r2.stdout)
    with open(path, "w") as f:
        json.dump(one_report("77", culprit=0), f)
    r = ddx(binary, "record", "--db", db, path)
    con = sqlite3.connect(db)
    row = con.execute("SELECT count(*), culprit_rank, culprit_host, nnodes FROM jobs").fetchone()
    mode = con.execute("PRAGMA journal_mode").fetchone()[0]
    ver = con.execute("PRAGMA user_version").fetchone()[0]
    con.close()
    check("record: a job's new report replaces its old one", "updated" in r.stdout and
          row == (1, 0, "n1", 2), f"{row}")
    check("store: WAL mode, schema version 2", mode == "wal" and ver == 2, f"{mode} {ver}")
    # a report of ddx diagnose (no job object): the options describe the job
    plain = os.path.join(work, "plain.json")
    with open(plain, "w") as f:
        json.dump({"schema": 1, "culprit_rank": 5, "diagnoses": [], "inputs": []}, f)
    r = ddx(binary, "record", "--db", db, "--job-id", "88", "--nodes", "gpu[01-04]",
            "--start", "2026-01-10T00:00:00Z", "--end", "2026-01-10T01:30:00Z", plain)
    con = sqlite3.connect(db)
    row = con.execute("SELECT nodes, nnodes, end_time - start_time, finding FROM jobs"
                      " WHERE job_id = '88'").fetchone()
    con.close()
    check("record: --job-id, --nodes (ranges expanded), --start, --end for a plain report",
          r.returncode == 0 and row == ("gpu01,gpu02,gpu03,gpu04", 4, 5400, None), f"{row}")
    r = ddx(binary, "record", "--db", db, os.path.join(HERE, "run.py"))
    check("record: not JSON is refused, naming the file", r.returncode == 2 and
          "run.py" in r.stderr and "not JSON" in r.stderr, r.stderr)
    # concurrent writers, as epilogs on one host
    procs = []
    for i in range(8):
        p = os.path.join(work, f"c{i}.json")
        with open(p, "w") as f:
            json.dump(one_report(str(100 + i)), f)
        procs.append(subprocess.Popen([binary, "record", "--db", db, p],
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    codes = [p.wait() for p in procs]
    con = sqlite3.connect(db)
    n = con.execute("SELECT count(*) FROM jobs WHERE CAST(job_id AS INTEGER) BETWEEN 100 AND 107"
                    ).fetchone()[0]
    con.close()
    check("record: 8 writers at once, every report stored", codes == [0] * 8 and n == 8,
          f"exit {codes}, {n} stored")


def test_errors(binary, work):
    rep = os.path.join(work, "r.json")
    with open(rep, "w") as f:
        json.dump(one_report("1"), f)
    # damaged: not a database at all
    bad = os.path.join(work, "damaged.db")
    with open(bad, "wb") as f:
        f.write(os.urandom(8192))
    before = sha(bad)
    outs = [ddx(binary, "record", "--db", bad, rep),
            ddx(binary, "fleet", "ingest", "--db", bad, work),
            ddx(binary, "fleet", "report", "--db", bad)]
    check("a damaged store: a clear error, exit 2, the file left as it was",
          all(o.returncode == 2 and "not a ddx fleet store, or a damaged one" in o.stderr
              and bad in o.stderr for o in outs) and sha(bad) == before,
          " | ".join(o.stderr.strip() for o in outs))
    # a store damaged inside: pages overwritten after the header
    good = os.path.join(work, "good.db")
    gen = os.path.join(work, "gen", "reports")
    ddx(binary, "fleet", "ingest", "--db", good, gen)
    con = sqlite3.connect(good)
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    size = os.path.getsize(good)
    with open(good, "r+b") as f:
        f.seek(size // 2)
        f.write(b"\xff" * 4096 * 4)
    before = sha(good)
    r = ddx(binary, "fleet", "report", "--db", good, *WINDOW)
    check("a store damaged inside: a clear error, the file left as it was",
          r.returncode == 2 and "damaged" in r.stderr and sha(good) == before, r.stderr.strip())
    # someone else's SQLite database
    other = os.path.join(work, "other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = sha(other)
    r = ddx(binary, "record", "--db", other, rep)
    check("another program's database: refused, left as it was", r.returncode == 2 and
          "not a ddx fleet store" in r.stderr and sha(other) == before, r.stderr.strip())
    # newer than this ddx
    newer = os.path.join(work, "newer.db")
    ddx(binary, "record", "--db", newer, rep)
    con = sqlite3.connect(newer)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    r = ddx(binary, "fleet", "report", "--db", newer)
    check("a store of a newer ddx: refused", r.returncode == 2 and "newer ddx" in r.stderr,
          r.stderr.strip())
    # locked by another writer
    locked = os.path.join(work, "locked.db")
    ddx(binary, "record", "--db", locked, rep)
    con = sqlite3.connect(locked, isolation_level=None, timeout=0)
    con.execute("BEGIN EXCLUSIVE")
    con.execute("UPDATE jobs SET user = 'holder'")
    rep2 = os.path.join(work, "r2.json")
    with open(rep2, "w") as f:
        json.dump(one_report("2"), f)
    t0 = time.time()
    r = ddx(binary, "record", "--db", locked, rep2, env={"DDX_DB_BUSY_MS": "300"})
    waited = time.time() - t0
    con.execute("ROLLBACK")
    con.close()
    check("a locked store: a clear error after the busy timeout, nothing written",
          r.returncode == 2 and "locked by another process" in r.stderr and waited < 5,
          f"{r.stderr.strip()} after {waited:.2f} s")
    r = ddx(binary, "record", "--db", locked, rep2)
    con = sqlite3.connect(locked)
    n = con.execute("SELECT count(*) FROM jobs").fetchone()[0]
    con.close()
    check("after the lock: the report is stored, the earlier one kept", r.returncode == 0 and
          n == 2, f"{n} jobs")
    r = ddx(binary, "fleet", "report", "--db", locked, "--since", "yesterday")
    check("--since: a bad time is refused", r.returncode == 2 and "--since" in r.stderr,
          r.stderr.strip())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddx", required=True)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.ddx)
    work = tempfile.mkdtemp(prefix="ddx-fleet-")
    t0 = time.time()
    try:
        test_report(binary, work)
        test_record(binary, work)
        test_errors(binary, work)
    finally:
        if a.keep:
            print(f"run.py: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return summary(t0)


if __name__ == "__main__":
    sys.exit(main())
