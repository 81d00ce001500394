#!/usr/bin/python3
"""run.py -- tests of `ddx watch`: passthrough, exit status, signals, events, hooks, following
files, bounded memory, and (with torch) live torchrun jobs that fail or stall.

  run.py --ddx build/ddx basic     no torch needed: every check but the live jobs
  run.py --ddx build/ddx live      torchrun jobs on CPU (tests/scenarios); exit 77 without torch

Each check prints PASS or FAIL and why; the exit status is 0 when all pass, 1 otherwise, 2 on a
usage or setup error, 77 (ctest: skipped) when the live checks cannot run. Times are measured
here, on the same clock as the events' "time": the harness reads ddx's output as it comes and
notes when each line arrived.
"""
import argparse
import datetime
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from checks import check, free_port, summary  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
SCEN = os.path.join(ROOT, "tests", "scenarios")
GOLDEN = os.path.join(SCEN, "golden")
PYTHON = "/usr/bin/python3"
LATENCY_MAX = 2.0   # a finding within this many seconds of the line that completed it
TICK = 0.25         # ddx watch checks stalls this often
SEEN_LATE = 0.1     # the harness reads a line a little after ddx has (ddx passes it on)
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")




def event_time(ev):
    return datetime.datetime.strptime(ev["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def read_events(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


class Run:
    """ddx watch with its standard output and error read line by line as they come."""

    def __init__(self, args, cwd, env=None):
        self.lines = {"<stdout>": [], "<stderr>": []}  # (arrival time, bytes)
        self.raw = {"<stdout>": bytearray(), "<stderr>": bytearray()}
        self.p = subprocess.Popen(args, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True)
        self.threads = [threading.Thread(target=self._read, args=(self.p.stdout, "<stdout>")),
                        threading.Thread(target=self._read, args=(self.p.stderr, "<stderr>"))]
        for t in self.threads:
            t.start()

    def _read(self, f, name):
        part = b""
        while True:
            chunk = os.read(f.fileno(), 65536)
            now = time.time()
            if not chunk:
                break
            self.raw[name] += chunk
            part += chunk
            *whole, part = part.split(b"\n")
            for line in whole:
                self.lines[name].append((now, line))
        if part:
            self.lines[name].append((time.time(), part))

    def wait(self, timeout):
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.p.pid, signal.SIGKILL)
            self.p.wait()
        for t in self.threads:
            t.join()
        return self.p.returncode

    def arrival(self, stream, lineno):
        v = self.lines.get(stream, [])
        return v[lineno - 1] if 0 < lineno <= len(v) else (None, None)


# ------------------------------------------------------------------------------------ basic

def test_passthrough(ddx, work):
    emit = [PYTHON, os.path.join(HERE, "emit.py")]
    for arg, want in (("3", 3), ("0", 0), ("-15", 128 + 15), ("-9", 128 + 9)):
        bare = subprocess.run(emit + [arg], capture_output=True, stdin=subprocess.DEVNULL)
        rep = os.path.join(work, "pass.txt")
        ev = os.path.join(work, "pass.jsonl")
        w = subprocess.run([ddx, "watch", "-o", rep, "--events", ev, "--"] + emit + [arg],
                           capture_output=True, stdin=subprocess.DEVNULL)
        bare_status = bare.returncode if bare.returncode >= 0 else 128 - bare.returncode
        check(f"passthrough {arg}: stdout byte-identical", w.stdout == bare.stdout,
              f"{len(w.stdout)} bytes vs {len(bare.stdout)} run bare")
        check(f"passthrough {arg}: stderr byte-identical", w.stderr == bare.stderr,
              f"{len(w.stderr)} bytes vs {len(bare.stderr)} run bare")
        check(f"passthrough {arg}: exit status {want} kept", w.returncode == want == bare_status,
              f"ddx exited {w.returncode}, the command bare {bare_status}")
        exits = [e for e in read_events(ev) if e["event"] == "exit"]
        check(f"passthrough {arg}: exit event", len(exits) == 1 and exits[0]["status"] == want,
              f"{exits}")
    # without -o, ddx's own lines go to standard error after the job's: stdout stays identical
    bare = subprocess.run(emit + ["0"], capture_output=True, stdin=subprocess.DEVNULL)
    w = subprocess.run([ddx, "watch", "--"] + emit + ["0"], capture_output=True,
                       stdin=subprocess.DEVNULL)
    check("passthrough without -o: stdout identical, stderr starts with the job's",
          w.stdout == bare.stdout and w.stderr.startswith(bare.stderr)
          and b"ddx: [watch] the job ended with exit status 0" in w.stderr[len(bare.stderr):])
    w = subprocess.run([ddx, "watch", "--", "/nonexistent/launcher"], capture_output=True)
    check("a command that cannot run: 127 and a message",
          w.returncode == 127 and b"cannot run '/nonexistent/launcher'" in w.stderr, w.stderr)


def test_interrupt(ddx, work):
    """SIGINT to ddx reaches the child's whole process group; ddx exits 128+2 as the job did."""
    gc = os.path.join(work, "grandchild.pid")
    # (a shell's background job would ignore SIGINT: POSIX asks it to; a Python child does not)
    prog = (f"import subprocess; p = subprocess.Popen(['sleep', '60']); "
            f"open({gc!r}, 'w').write(str(p.pid)); print('started', flush=True); p.wait()")
    p = subprocess.Popen([ddx, "watch", "-o", os.devnull, "--", PYTHON, "-c", prog],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = p.stdout.readline()
    t0 = time.time()
    while not os.path.exists(gc) and time.time() - t0 < 5:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    try:
        code = p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        p.kill()
        code = None
    with open(gc) as f:
        pid = int(f.read())

    def running(pid):
        # a process that died but was not reaped yet (a zombie waiting for init) is gone too
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (FileNotFoundError, ProcessLookupError, IndexError):
            return False

    t0 = time.time()
    alive = running(pid)
    while alive and time.time() - t0 < 3:  # the signal may take a moment on a loaded machine
        time.sleep(0.05)
        alive = running(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    check("Ctrl-C: forwarded to the job's process group, exit 130",
          line == b"started\n" and code == 130 and not alive,
          f"exit {code}, grandchild {'alive' if alive else 'gone'}")


def test_events_hooks(ddx, work):
    """A failure printed by a running command: the finding comes before the command ends, with
    its trigger line numbered as the output is; the hook gets the event and the job's pids."""
    console = os.path.join(GOLDEN, "unused-parameters", "console.log")
    ev = os.path.join(work, "hook.jsonl")
    hook_out = os.path.join(work, "hook.txt")
    r = Run([ddx, "watch", "-o", os.path.join(work, "hook-report.txt"), "--events", ev,
             "--on-finding", f'printf "%s|%s|%s" "$DDX_FINDING_ID" "$DDX_PIDS" "$DDX_EVENT" '
                             f'> {hook_out}', "--",
             "sh", "-c", f"cat {console} >&2; sleep 2; echo done"], work)
    code = r.wait(30)
    evs = read_events(ev)
    kinds = [e["event"] for e in evs]
    finds = [e for e in evs if e["event"] == "finding"]
    ok = code == 0 and finds and finds[0]["id"] == "ddp-unused-parameters"
    check("events: a finding while the command runs", ok and kinds.index("finding") <
          kinds.index("exit"), f"exit {code}, events {kinds}, findings "
          f"{[f['id'] for f in finds]}")
    if finds:
        t = finds[0]["trigger"]
        at, text = r.arrival(t["path"], t["line"])
        same = text is not None and ANSI.sub(b"", text).decode(errors="replace").startswith(
            t["text"].rstrip("."))
        check("events: the trigger is the line at that number of the output", same,
              f"{t} vs {text!r}")
        lat = event_time(finds[0]) - at if at else None
        check(f"events: reported within {LATENCY_MAX} s of its line",
              lat is not None and lat <= LATENCY_MAX, f"{lat:.3f} s" if lat else "no line")
    time.sleep(0.2)
    hook = open(hook_out).read() if os.path.exists(hook_out) else ""
    parts = hook.split("|", 2)
    pid = next((e["pid"] for e in evs if e["event"] == "start"), None)
    ok = len(parts) == 3 and parts[0] == "ddp-unused-parameters" and \
        str(pid) in parts[1].split() and json.loads(parts[2])["event"] == "finding"
    check("--on-finding: DDX_FINDING_ID, DDX_PIDS (with the child), DDX_EVENT", ok, hook[:200])
    end = [e for e in evs if e["event"] == "end"]
    top = end and end[0]["report"]["diagnoses"][0]["id"]
    check("end event: the full report", top == "ddp-unused-parameters", f"{top}")


def pad(src, n, dst):
    """src with n lines that match nothing inserted after its first third, attributed to the
    same ranks: a long job whose digest must keep what the diagnosis needs."""
    with open(src, "rb") as f:
        lines = f.read().split(b"\n")
    mid = len(lines) // 3
    ranks = sorted({l[1:l.index(b"]")] for l in lines if l.startswith(b"[default")}) or [b"x"]
    with open(dst, "wb") as out:
        out.write(b"\n".join(lines[:mid]) + b"\n")
        for i in range(n):
            out.write(b"[%s]:loader: prefetched shard %d of the corpus\n" % (ranks[i % len(ranks)],
                                                                           i))
        out.write(b"\n".join(lines[mid:]))


def report_summary(report):
    d = report.get("diagnoses") or []
    return [(x["id"], x["level"], x["confidence"]) for x in d[:3]], report.get("culprit_rank")


def test_digest(ddx, work, memory=True):
    """A long job's output through ddx watch: the final diagnosis from the bounded digest is the
    one ddx diagnose gives on the whole output, and memory does not grow with the length."""
    for name in ("sigkill-rank", "desync", "straggler", "uneven-inputs", "exception-one-rank",
                 "sleep-before-collective"):
        padded = os.path.join(work, f"{name}.log")
        pad(os.path.join(GOLDEN, name, "console.log"), 100000, padded)
        d = subprocess.run([ddx, "diagnose", "--json", padded], capture_output=True)
        ev = os.path.join(work, f"{name}.jsonl")
        subprocess.run([ddx, "watch", "-o", os.devnull, "--events", ev, "--", "cat", padded],
                       capture_output=True)
        end = [e for e in read_events(ev) if e["event"] == "end"][0]
        want, got = report_summary(json.loads(d.stdout)), report_summary(end["report"])
        check(f"digest {name}: same diagnosis as ddx diagnose on the whole output", want == got,
              f"{got} vs {want}")
    # a failure no reference explains: the digest keeps its line, and maps its number back
    unrec = os.path.join(work, "unrec.log")
    with open(unrec, "w") as f:
        for i in range(3000):
            f.write(f"[default{i % 2}]:[rank {i % 2}] step {i // 2 + 1}/5000 loss 0.5\n")
        f.write("[default1]:Traceback (most recent call last):\n"
                "[default1]:  File \"/home/u/train.py\", line 12, in <module>\n"
                "[default1]:    load_shard(path)\n"
                "[default1]:zarr.errors.ContainsGroupError: path 'shard-7' contains a group\n")
        for i in range(50000):
            f.write(f"[default0]:loader: prefetched shard {i}\n")
        f.write("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) "
                "local_rank: 1 (pid: 4242) of binary: /usr/bin/python3\n")
    d = json.loads(subprocess.run([ddx, "diagnose", "--json", unrec], capture_output=True).stdout)
    ev = os.path.join(work, "unrec.jsonl")
    subprocess.run([ddx, "watch", "-o", os.devnull, "--events", ev, "--", "cat", unrec],
                   capture_output=True)
    end = [e for e in read_events(ev) if e["event"] == "end"][0]["report"]
    keys = ("rank", "line", "text", "exception")
    want = d["unrecognised"] and {k: d["unrecognised"][k] for k in keys}
    got = end["unrecognised"] and {k: end["unrecognised"][k] for k in keys}
    check("digest: a failure no reference explains, at its own line", want and want == got,
          f"{got} vs {want}")
    if not memory:
        return
    rss = {}
    for n in (200000, 2000000):
        padded = os.path.join(work, f"mem{n}.log")
        pad(os.path.join(GOLDEN, "sigkill-rank", "console.log"), n, padded)
        ev = os.path.join(work, "mem.jsonl")
        p = subprocess.run(["/usr/bin/time", "-f", "%M", ddx, "watch", "-o", os.devnull,
                            "--events", ev, "--", "cat", padded], capture_output=True)
        rss[n] = int(p.stderr.split()[-1])
        stats = [e for e in read_events(ev) if e["event"] == "end"][0]["stats"]
        rss[n, "kept"] = stats["kept_bytes"]
        os.unlink(padded)
    grow = rss[2000000] - rss[200000]
    check("bounded memory: 10 times the lines, the same memory",
          grow < 4096 and rss[2000000, "kept"] < 2 * rss[200000, "kept"] + 65536,
          f"max RSS {rss[200000]} KiB then {rss[2000000]} KiB; digest {rss[200000, 'kept']} "
          f"then {rss[2000000, 'kept']} bytes")


def test_files(ddx, work):
    """Following a folder of a running job: files that appear, a rotated file, a truncated
    file; the finding names the file and line; ddx ends when --pid ends."""
    logs = os.path.join(work, "logs")
    os.makedirs(logs)
    err_line = (b"RuntimeError: Expected to have finished reduction in the prior iteration "
                b"before starting a new one. This error indicates that your module has "
                b"parameters that were not used in producing loss.\n")
    port_line = (b"RuntimeError: The server socket has failed to listen on any local network "
                 b"address. The server socket has failed to bind to [::]:29500 (errno: 98 - "
                 b"Address already in use).\n")
    writer = os.path.join(work, "writer.py")
    with open(writer, "w") as f:
        f.write(f"""
import os, time
logs = {logs!r}
def w(name, data, mode="ab"):
    with open(os.path.join(logs, name), mode) as f:
        f.write(data)
for i in range(1, 6):
    w("rank_0.log", b"[rank 0] step %d/50 loss 0.5\\n" % i)
    w("rank_1.log", b"[rank 1] step %d/50 loss 0.5\\n" % i)
    time.sleep(0.1)
os.rename(os.path.join(logs, "rank_0.log"), os.path.join(logs, "rank_0.log.1"))
w("rank_0.log", b"[rank 0] after rotation\\n" * 3)
w("rank_1.log", b"", "wb")
w("rank_1.log", b"[rank 1] after truncation\\n")
time.sleep(0.6)
w("rank_0.log", {port_line!r})
time.sleep(2.0)
w("rank_2.log", b"[rank 2] step 6/50\\n" + {err_line!r})
time.sleep(2.0)
""")
    wp = subprocess.Popen([PYTHON, writer])
    ev = os.path.join(work, "files.jsonl")
    t0 = time.time()
    p = subprocess.run([ddx, "watch", "--events", ev, "--pid", str(wp.pid), logs],
                       capture_output=True, timeout=60)
    wp.wait()
    evs = read_events(ev)
    finds = {e["id"]: e for e in evs if e["event"] == "finding"}
    f1 = finds.get("ddp-unused-parameters")
    check("files: a new file's failure, with its path and line",
          f1 is not None and f1["trigger"]["path"] == os.path.join(logs, "rank_2.log")
          and f1["trigger"]["line"] == 2 and f1["trigger"]["rank"] == 2,
          f"{[(e['id'], e['trigger']) for e in finds.values()]}")
    f2 = finds.get("ddp-port-conflict")
    check("files: a rotated file is followed (its new lines, numbered as on disk)",
          f2 is not None and f2["trigger"]["path"] == os.path.join(logs, "rank_0.log")
          and f2["trigger"]["line"] == 4, f"{f2 and f2['trigger']}")
    end = [e for e in evs if e["event"] == "end"]
    inputs = {i["path"]: i for i in end[0]["report"]["inputs"]} if end else {}
    r1 = inputs.get(os.path.join(logs, "rank_1.log"))
    check("files: a truncated file is read again from its start",
          r1 is not None and r1["lines"] == 1, f"{r1}")
    check("files: ddx ends when --pid ends, with the diagnosis (exit 1: a finding)",
          p.returncode == 1 and time.time() - t0 < 20 and end, f"exit {p.returncode}")


# ------------------------------------------------------------------------------------- live


def job_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCH_", "NCCL_", "GLOO_", "TORCHELASTIC_"))
           and k not in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update(GLOO_SOCKET_IFNAME="lo", MASTER_ADDR="127.0.0.1", OMP_NUM_THREADS="1",
               PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1", SCN_PG_TIMEOUT="5")
    return env


def torchrun(script, nprocs, work):
    os.makedirs(work, exist_ok=True)
    return [PYTHON, os.path.join(SCEN, "launch.py"), "--nnodes", "1", "--nproc_per_node",
            str(nprocs), "--master_addr", "127.0.0.1", "--master_port", str(free_port()),
            "--monitor_interval", "1", "--redirects", "3", "--tee", "3", "--log_dir",
            os.path.join(work, "logs"), script]


def live_job(ddx, work, name, script, nprocs, opts):
    d = os.path.join(work, name)
    ev = os.path.join(d, "events.jsonl")
    os.makedirs(d)
    r = Run([ddx, "watch", "-o", os.path.join(d, "report.txt"), "--events", ev] + opts +
            ["--"] + torchrun(script, nprocs, d), d, job_env())
    code = r.wait(120)
    return r, code, read_events(ev)


def check_finding(name, r, code, evs, want_id, want_culprit):
    finds = [e for e in evs if e["event"] == "finding"]
    exits = [e for e in evs if e["event"] == "exit"]
    check(f"live {name}: the job failed and ddx kept its exit status",
          code not in (0, None) and exits and exits[0]["status"] == code, f"exit {code}")
    f = next((e for e in finds if e["id"] == want_id), None)
    if not check(f"live {name}: {want_id} reported while the job runs", f is not None,
                 f"findings {[e['id'] for e in finds]}"):
        return
    at, text = r.arrival(f["trigger"]["path"], f["trigger"]["line"])
    lat = event_time(f) - at if at else None
    check(f"live {name}: within {LATENCY_MAX} s of the failure line",
          lat is not None and 0 <= lat <= LATENCY_MAX and
          ANSI.sub(b"", text).decode(errors="replace").startswith(f["trigger"]["text"][:60]),
          f"{lat:.3f} s after {text!r}" if lat is not None else f"line {f['trigger']} not seen")
    end = [e for e in evs if e["event"] == "end"][0]["report"]
    top = end["diagnoses"][0]["id"] if end["diagnoses"] else None
    check(f"live {name}: the final diagnosis", top == want_id and
          (want_culprit is None or end["culprit_rank"] == want_culprit),
          f"top {top}, culprit {end['culprit_rank']}")


def last_progress_before(r, t, rank=None):
    """When the last step line (of rank, or any) arrived before time t."""
    best = None
    pat = re.compile(rb"\[rank (\d+)\] (?:preprocess )?step \d+/\d+")
    for stream in r.lines.values():
        for at, line in stream:
            m = pat.search(line)
            if m and at <= t and (rank is None or int(m.group(1)) == rank):
                best = at if best is None or at > best else best
    return best


def run_live(ddx, work):
    jobs = {}

    def go(name, script, nprocs, opts):
        jobs[name] = live_job(ddx, work, name, script, nprocs, opts)

    plan = [
        ("sigkill-rank", os.path.join(SCEN, "sigkill-rank", "train.py"), 3, []),
        ("unused-parameters", os.path.join(SCEN, "unused-parameters", "train.py"), 2, []),
        ("sleep-before-collective", os.path.join(SCEN, "sleep-before-collective", "train.py"), 2,
         ["--stall-after", "2"]),
        ("silent-rank", os.path.join(HERE, "silent-rank", "train.py"), 3,
         ["--stall-factor", "10", "--stall-min", "1"]),
    ]
    # two jobs at a time: each is 2 or 3 processes on a small machine
    for i in range(0, len(plan), 2):
        ts = [threading.Thread(target=go, args=p) for p in plan[i:i + 2]]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    r, code, evs = jobs["sigkill-rank"]
    check_finding("sigkill-rank", r, code, evs, "childfailed-exitcode-9", 1)
    r, code, evs = jobs["unused-parameters"]
    check_finding("unused-parameters", r, code, evs, "ddp-unused-parameters", None)

    r, code, evs = jobs["sleep-before-collective"]
    stalls = [e for e in evs if e["event"] == "stall"]
    s = stalls[0] if stalls else None
    if check("live sleep-before-collective: a stall of the whole job",
             s is not None and s["kind"] == "job" and sorted(s["silent_ranks"]) == [0, 1],
             f"{stalls}"):
        last = last_progress_before(r, event_time(s))
        gap = event_time(s) - last if last else None
        check("live sleep-before-collective: named within the window (--stall-after 2)",
              gap is not None and 2.0 - SEEN_LATE <= gap <= 2.0 + TICK + 0.5,
              f"{gap:.3f} s after the last "
              f"step line" if gap else "no step line")
    end = [e for e in evs if e["event"] == "end"][0]["report"]
    top = end["diagnoses"][0]["id"] if end["diagnoses"] else None
    check("live sleep-before-collective: the final diagnosis names the stuck rank",
          top == "ddp-rank-stuck" and end["culprit_rank"] == 1 and code != 0,
          f"top {top}, culprit {end['culprit_rank']}, exit {code}")

    r, code, evs = jobs["silent-rank"]
    stalls = [e for e in evs if e["event"] == "stall"]
    s = stalls[0] if stalls else None
    if check("live silent-rank: rank 1 named silent while ranks 0 and 2 progress",
             s is not None and s["kind"] == "ranks" and s["silent_ranks"] == [1]
             and sorted(s["active_ranks"]) == [0, 2] and s["threshold_from"] == "step-time",
             f"{stalls}"):
        last = last_progress_before(r, event_time(s), rank=1)
        gap = event_time(s) - last if last else None
        thr = s["threshold_s"]
        check("live silent-rank: within the window (10 x the median step time, at least 1 s)",
              gap is not None and 1.0 <= thr <= 1.6 and thr - SEEN_LATE <= gap <= thr + TICK + 0.5,
              f"threshold {thr} s, stall {gap:.3f} s after rank 1's last step" if gap else "")
    check("live silent-rank: the job succeeded and ddx exits 0", code == 0, f"exit {code}")


def torch_available():
    p = subprocess.run([PYTHON, "-c", "import torch.distributed as d; assert d.is_available()"],
                       capture_output=True)
    return p.returncode == 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddx", default=os.path.join(ROOT, "build", "ddx"))
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-memory", action="store_true",
                    help="skip the bounded-memory check (sanitizer builds hold freed memory)")
    ap.add_argument("what", choices=["basic", "live"])
    a = ap.parse_args()
    ddx = os.path.abspath(a.ddx)
    if not os.access(ddx, os.X_OK):
        print(f"run.py: no ddx at {ddx}", file=sys.stderr)
        return 2
    if a.what == "live" and not torch_available():
        print("run.py: SKIP: /usr/bin/python3 cannot import torch.distributed "
              "(DDX_WITH_TORCH=1 sh scripts/install-deps.sh)")
        return 77
    work = tempfile.mkdtemp(prefix="ddx-watch-")
    t0 = time.time()
    try:
        if a.what == "basic":
            test_passthrough(ddx, work)
            test_interrupt(ddx, work)
            test_events_hooks(ddx, work)
            test_files(ddx, work)
            test_digest(ddx, work, memory=not a.no_memory)
        else:
            run_live(ddx, work)
    finally:
        if a.keep:
            print(f"run.py: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return summary(t0)


if __name__ == "__main__":
    sys.exit(main())
