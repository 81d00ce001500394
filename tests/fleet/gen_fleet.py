#!/usr/bin/python3
"""gen_fleet.py -- a generated fleet: JSON reports of failed jobs, as the Slurm epilog leaves them
(ddx slurm --json), with one host planted as a repeated culprit, and the figures a fleet report
over them must give, computed here independently of ddx.

  gen_fleet.py OUTDIR [--jobs N] [--seed S] [--bad HOST]

Writes OUTDIR/reports/<cluster>/<YYYY-MM-DD>/ddx-<id>.json (plus a few JSON files that are not
ddx reports, which ingesting must skip) and OUTDIR/truth.json. Jobs end between 2026-01-01 and
2026-01-15; the report window is 2026-01-08 to 2026-01-15, the week before is the trend's.

The null model of the host test: a job's culprit host is any of its n hosts with chance 1/n.
Every job but the planted ones follows it (the culprit rank is uniform over the job's ranks,
8 a host); a job that ran on the bad host blames it with extra chance PLANT.
"""
import argparse
import datetime
import json
import os
import random

CLASSES = [  # id, title, category, weight
    ("nccl-watchdog-timeout", "A collective timed out in NCCL's watchdog", "pytorch-fsdp-ddp", 20),
    ("cuda-oom", "CUDA out of memory", "pytorch-fsdp-ddp", 16),
    ("childfailed-exitcode-9", "A training worker was SIGKILLed (exit code -9)", "pytorch-fsdp-ddp",
     10),
    ("remote-rank-crash", "Another rank died and this rank only sees the broken connection", "nccl",
     9),
    ("nccl-ib-error", "NCCL reports an InfiniBand error", "nccl", 7),
    ("gpu-hardware-fault", "The GPU reported a hardware fault", "hardware", 5),
    ("cuda-illegal-memory-access", "An illegal memory access on the GPU", "cuda", 5),
    ("ddp-unused-parameters", "DDP stops because some parameters got no gradient", "pytorch-fsdp-ddp",
     6),
    ("ddp-port-conflict", "The rendezvous port is already taken", "pytorch-fsdp-ddp", 4),
    ("ddp-rank-stuck", "One rank stopped making progress", "pytorch-fsdp-ddp", 4),
]
HARDWARE = ["gpu-hardware-fault", "nccl-ib-error", "cuda-illegal-memory-access",
            "nccl-watchdog-timeout"]
GPUS = 8                 # ranks a host
PLANT = 0.35             # extra chance that a job on the bad host blames it
T0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
SINCE = datetime.datetime(2026, 1, 8, tzinfo=datetime.timezone.utc)
UNTIL = datetime.datetime(2026, 1, 15, tzinfo=datetime.timezone.utc)


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def tail(probs, k):
    """P(X >= k), X a sum of Bernoulli(p): the whole distribution by convolution."""
    dist = [1.0]
    for p in probs:
        nxt = [0.0] * (len(dist) + 1)
        for j, v in enumerate(dist):
            nxt[j] += v * (1 - p)
            nxt[j + 1] += v * p
        dist = nxt
    return sum(dist[k:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--jobs", type=int, default=1200)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--bad", default="gpu017")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    hosts = [f"gpu{i:03d}" for i in range(1, 81)]
    jobs = []
    for j in range(a.jobs):
        n = rnd.choices([1, 2, 4, 8, 16], weights=[20, 25, 25, 20, 10])[0]
        nodes = sorted(rnd.sample(hosts, n))
        end = T0 + datetime.timedelta(seconds=rnd.randrange(14 * 86400))
        start = end - datetime.timedelta(seconds=rnd.randrange(600, 12 * 3600))
        cls = rnd.choices(CLASSES, weights=[c[3] for c in CLASSES])[0]
        finding = cls if rnd.random() > 0.08 else None
        culprit = rnd.randrange(n * GPUS) if rnd.random() < 0.85 else None
        planted = a.bad in nodes and n >= 2 and rnd.random() < PLANT
        if planted:
            k = nodes.index(a.bad)
            culprit = k * GPUS + rnd.randrange(1, GPUS)
            pick = rnd.choice(HARDWARE)
            finding = next(c for c in CLASSES if c[0] == pick)
        jobs.append(dict(id=str(4000000 + j), cluster=rnd.choice(["alpha", "beta"]),
                         user=f"user{rnd.randrange(30)}", partition=rnd.choice(["gpu", "long"]),
                         nodes=nodes, start=start, end=end, finding=finding, culprit=culprit,
                         planted=planted, host_in_job=rnd.random() < 0.5))

    os.makedirs(a.out, exist_ok=True)
    for jb in jobs:
        n = len(jb["nodes"])
        task_nodes = [h for h in jb["nodes"] for _ in range(GPUS)]
        chost = task_nodes[jb["culprit"]] if jb["culprit"] is not None else None
        diag = []
        if jb["finding"]:
            fid, title, cat, _ = jb["finding"]
            line = 100 + int(jb["id"]) % 900
            ev = {"path": f"/scratch/{jb['user']}/job-{jb['id']}/task-{jb['culprit'] or 0}.out",
                  "line": line, "rank": jb["culprit"], "role": "root", "signal": f"{fid}-line",
                  "text": f"error line of {fid} in job {jb['id']}", "weight": 2.0}
            diag.append({"id": fid, "title": title, "category": cat, "kind": "crash",
                         "confidence": 0.91, "level": "confirmed",
                         "ranks": [jb["culprit"]] if jb["culprit"] is not None else [],
                         "first_seen": {k: ev[k] for k in ("path", "line", "rank")},
                         "evidence": [ev]})
        job = {"scheduler": "slurm", "id": jb["id"], "cluster": jb["cluster"],
               "user": jb["user"], "partition": jb["partition"], "state": "FAILED",
               "exit_code": "1:0", "failed": True, "start": iso(jb["start"]),
               "end": iso(jb["end"]), "nodes": jb["nodes"], "task_nodes": task_nodes}
        # half the reports name the culprit's host; the others leave it to the task layout
        job["culprit_host"] = chost if jb["host_in_job"] else None
        rep = {"schema": 1, "ddx_version": "0.1.0", "inputs": [], "culprit_rank": jb["culprit"],
               "diagnoses": diag, "facts": {}, "job": job}
        d = os.path.join(a.out, "reports", jb["cluster"], jb["end"].strftime("%Y-%m-%d"))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"ddx-{jb['id']}.json"), "w") as f:
            json.dump(rep, f)
        jb["culprit_host"] = chost
    # files ingesting must skip: other JSON, a broken file, a text file
    with open(os.path.join(a.out, "reports", "inventory.json"), "w") as f:
        json.dump({"hosts": hosts}, f)
    with open(os.path.join(a.out, "reports", "broken.json"), "w") as f:
        f.write('{"schema": 1, "diagnoses": [')
    with open(os.path.join(a.out, "reports", "README.txt"), "w") as f:
        f.write("epilog reports\n")

    # ---- the figures of the report over [SINCE, UNTIL)
    def in_win(jb, lo, hi):
        return lo <= jb["end"] < hi
    prev_lo = SINCE - (UNTIL - SINCE)
    win = [jb for jb in jobs if in_win(jb, SINCE, UNTIL)]
    classes = {}
    for jb in win:
        if jb["finding"]:
            c = classes.setdefault(jb["finding"][0], {"jobs": 0, "previous": 0, "node_hours": 0.0})
            c["jobs"] += 1
            c["node_hours"] += len(jb["nodes"]) * (jb["end"] - jb["start"]).total_seconds() / 3600
    for jb in jobs:
        if jb["finding"] and in_win(jb, prev_lo, SINCE) and jb["finding"][0] in classes:
            classes[jb["finding"][0]]["previous"] += 1
    considered = [jb for jb in win if jb["culprit"] not in (None, 0) and len(jb["nodes"]) >= 2]
    per_host = {}
    for jb in considered:
        for h in jb["nodes"]:
            s = per_host.setdefault(h, {"probs": [], "x": 0})
            s["probs"].append(1 / len(jb["nodes"]))
            s["x"] += jb["culprit_host"] == h
    pvals = sorted((tail(s["probs"], s["x"]), h) for h, s in per_host.items())
    m = len(pvals)
    adj, run = {}, 0.0
    for i, (p, h) in enumerate(pvals):
        run = max(run, p * (m - i))
        adj[h] = min(1.0, run)
    bad = per_host[a.bad]
    truth = {
        "since": iso(SINCE), "until": iso(UNTIL), "bad_host": a.bad,
        "jobs": len(win), "jobs_with_finding": sum(1 for jb in win if jb["finding"]),
        "node_hours_lost": sum(len(jb["nodes"]) * (jb["end"] - jb["start"]).total_seconds()
                               for jb in win) / 3600,
        "classes": classes, "hosts_tested": m, "jobs_considered": len(considered),
        "flagged": sorted(h for h, q in adj.items() if q <= 0.01 and per_host[h]["x"] >= 2),
        "bad": {"culprit_jobs": bad["x"], "jobs": len(bad["probs"]),
                "expected": sum(bad["probs"]), "p_value": tail(bad["probs"], bad["x"]),
                "p_adjusted": adj[a.bad],
                "job_ids": sorted(jb["id"] for jb in considered if jb["culprit_host"] == a.bad)},
        "planted": sum(1 for jb in jobs if jb["planted"]),
        "total_reports": len(jobs),
    }
    with open(os.path.join(a.out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
