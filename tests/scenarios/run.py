#!/usr/bin/python3
"""run.py -- run the live failure scenarios with torchrun on CPU and check ddx's diagnosis of each.

Each tests/scenarios/<name>/ holds a scenario.json and, unless it runs another scenario's script
(a variant: the same failure in another output style or launcher), a train.py that fails on
purpose (or, for `healthy` and the stragglers, finishes). scenario.json:

  script         the script to run, relative to the scenario's folder (default train.py)
  nprocs         processes to start (per launcher, see agents)
  launch         "torchrun" (through launch.py, the option-parsing fix for torch 1.13),
                 "spawn" (launch_spawn.py: torch.multiprocessing.spawn, no log folder) or
                 "manual" (the harness starts the ranks itself, e.g. fewer than world_size)
  world_size     manual and spawn launches: the WORLD_SIZE the ranks are told
  torchrun_args  extra launcher arguments; "{port}" in them becomes the scenario's port and
                 "{is_host}" true for the first agent, false for the others (c10d's is_host:
                 on one machine every agent would otherwise try to host the store)
  tee, redirects torchrun's --tee/--redirects values (default "3"); null leaves the option out
  log_dir        false: no --log_dir (torchrun then keeps error files under TMPDIR, which the
                 harness points into the run's folder, not into logs/)
  agents         torchrun launchers started with the same arguments, all writing to console.log
                 (default 1; several make a multi-node job on one host, node i logging under
                 logs/node<i>)
  ulimit_v_mb    an address-space limit (ulimit -v, RLIMIT_AS) for the launcher and its ranks
  env            extra environment for the ranks (common.py lists the SCN_* variables)
  occupy_port    true: the harness listens on MASTER_PORT itself before starting the job
  sigterm_after  seconds after the start when the harness sends SIGTERM to the launcher process
                 alone (a scheduler's time limit reaching the job step), not to its workers
  top            the reference id ddx must rank first; null: ddx must find nothing
                 (no diagnosis at level likely or confirmed)
  culprit_rank   the rank ddx must blame; null: not checked (no single rank is at fault);
                 "unknown": ddx must name no culprit, because nothing in what the job left
                 behind ties the failure to a rank (the bad rank is set, but no line says which
                 process is which)
  expect_exit    0 or "nonzero": the job's own exit status, to prove the failure reproduced
  timeout        seconds before the scenario's whole process group is killed
  known_failing  optional: why ddx does not meet the expectation yet. Such a scenario is
                 reported as XFAIL (or XPASS once it passes) and does not fail the run;
                 its job must still reproduce.

For each scenario the harness keeps console.log (the launcher's tee of every rank plus its own
output) and the --log_dir tree (<run_id>/attempt_0/<local_rank>/{stdout,stderr}.log and
error.json), runs `ddx diagnose --json console.log logs` on them and compares. A manual launch
writes the same layout itself. Scenarios run 3 at a time, each in its own session/process group,
killed as a group on timeout and reaped at the end.

  /usr/bin/python3 tests/scenarios/run.py [--ddx PATH] [--jobs N] [--out DIR] [--keep]
                                          [--timeout S] [--record-golden] [--shard K/N] [NAME ...]

--shard K/N runs every N-th scenario of the sorted list starting at the K-th (1-based), so that
ctest can run the live suite as N tests that each fit their time limit.

Exit status: 0 all expectations met (known failures aside), 1 a regression or a scenario that did
not reproduce, 2 usage or setup error, 77 torch is not importable (ctest SKIP_RETURN_CODE).
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON = "/usr/bin/python3"
GOLDEN = os.path.join(HERE, "golden")
LIVE_LEVELS = ("likely", "confirmed")

_groups_lock = threading.Lock()
_groups = set()  # process-group ids still to reap
_stopping = threading.Event()  # set on SIGINT/SIGTERM: start nothing new


# ---------------------------------------------------------------------------- processes

def _register(pgid):
    with _groups_lock:
        _groups.add(pgid)


def _kill_group(pgid, grace=2.0):
    """SIGTERM the group, then SIGKILL whatever is left after `grace` seconds."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    else:
        end = time.time() + grace
        while time.time() < end:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    with _groups_lock:
        _groups.discard(pgid)


def _kill_all_groups():
    with _groups_lock:
        pending = list(_groups)
    for pgid in pending:
        _kill_group(pgid, grace=0.5)


_ports_lock = threading.Lock()
_ports_given = set()


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port():
    """A MASTER_PORT for one scenario: below the kernel's ephemeral range, so that no socket the
    running jobs open (NCCL, gloo and store clients bind port 0) can be handed the same port
    between this check and torchrun's bind; not given to another scenario of this run; free now."""
    hi = _ephemeral_low()
    lo = max(1024, hi - 12000)
    with _ports_lock:
        for _ in range(500):
            port = random.randrange(lo, hi)
            if port in _ports_given:
                continue
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                try:
                    s.bind(("127.0.0.1", port))
                except OSError:
                    continue
            _ports_given.add(port)
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def base_env(port, extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TORCH_", "NCCL_", "GLOO_", "TORCHELASTIC_"))
           and k not in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env.update({
        "GLOO_SOCKET_IFNAME": "lo",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "OMP_NUM_THREADS": "1",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "SCN_PG_TIMEOUT": os.environ.get("SCN_PG_TIMEOUT", "5"),
    })
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _wait(proc, deadline):
    """Wait for proc until deadline or an interrupt; True when it ended in time."""
    while proc.poll() is None:
        if time.time() >= deadline or _stopping.is_set():
            return False
        try:
            proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
    return True


def torchrun_cmd(sc, script, port, log_dir, agent=0):
    cmd = [PYTHON, os.path.join(HERE, "launch.py"),
           "--nnodes", "1", "--nproc_per_node", str(sc["nprocs"]),
           "--master_addr", "127.0.0.1", "--master_port", str(port), "--monitor_interval", "1"]
    for opt in ("redirects", "tee"):
        if sc.get(opt, "3") is not None:
            cmd += [f"--{opt}", str(sc.get(opt, "3"))]
    if log_dir:
        cmd += ["--log_dir", log_dir]
    subst = {"{port}": str(port), "{is_host}": "true" if agent == 0 else "false"}
    extra = []
    for arg in sc.get("torchrun_args", []):
        for key, value in subst.items():
            arg = arg.replace(key, value)
        extra.append(arg)
    return cmd + extra + [script]


def commands(sc, port):
    """The launcher command lines of the scenario's job (one per agent)."""
    script = os.path.normpath(os.path.join(sc["dir"], sc.get("script", "train.py")))
    how = sc.get("launch", "torchrun")
    world = str(sc.get("world_size", sc["nprocs"]))
    if how == "manual":
        return [[PYTHON, os.path.join(HERE, "launch_manual.py"), "--nprocs", str(sc["nprocs"]),
                 "--world-size", world, "--log-dir", "logs", script]]
    if how == "spawn":
        return [[PYTHON, os.path.join(HERE, "launch_spawn.py"), "--nprocs", str(sc["nprocs"]),
                 "--world-size", world, script]]
    agents = sc.get("agents", 1)
    use_dir = sc.get("log_dir", True)
    return [torchrun_cmd(sc, script, port,
                         (f"logs/node{i}" if agents > 1 else "logs") if use_dir else None, i)
            for i in range(agents)]


def _limits(sc):
    """A preexec_fn applying the scenario's ulimit -v, or None."""
    mb = sc.get("ulimit_v_mb")
    if not mb:
        return None

    def apply():
        import resource
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        resource.setrlimit(resource.RLIMIT_AS, (mb << 20, hard))
    return apply


def launch(sc, work, port, env):
    """Start the scenario's job in a new session; returns (exit status, timed out). With several
    agents the status is the first nonzero one."""
    if not sc.get("log_dir", True):
        env = dict(env, TMPDIR=os.path.join(work, "tmp"))
        os.makedirs(env["TMPDIR"])
    procs = []
    with open(os.path.join(work, "console.log"), "wb") as console:
        for cmd in commands(sc, port):
            p = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.DEVNULL,
                                 stdout=console, stderr=subprocess.STDOUT,
                                 start_new_session=True, preexec_fn=_limits(sc))
            _register(p.pid)
            procs.append(p)
    deadline = time.time() + sc["timeout"]
    if sc.get("sigterm_after"):
        stop_at = time.time() + sc["sigterm_after"]
        if all([_wait(p, stop_at) for p in procs]) is False and not _stopping.is_set():
            for p in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGTERM)
    ok = all([_wait(p, deadline) for p in procs])
    for p in procs:
        _kill_group(p.pid)  # timeout, or ranks the agent left behind
        if not ok:
            p.wait()
    codes = [p.returncode for p in procs]
    return next((c for c in codes if c != 0), 0), not ok


# ---------------------------------------------------------------------------- checking

def run_ddx(ddx, work, inputs):
    """Run ddx diagnose --json on inputs (relative to work); returns (report or None, error)."""
    try:
        r = subprocess.run([ddx, "diagnose", "--json", *inputs], cwd=work, capture_output=True,
                           timeout=120, env=dict(os.environ, TZ="UTC", LC_ALL="C", NO_COLOR="1"))
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"ddx did not run: {e}"
    with open(os.path.join(work, "ddx.json"), "wb") as f:
        f.write(r.stdout)
    if r.returncode not in (0, 1):
        return None, f"ddx exited {r.returncode}: {r.stderr.decode(errors='replace')[-500:]}"
    try:
        return json.loads(r.stdout), None
    except ValueError as e:
        return None, f"ddx printed no JSON: {e}"


def judge(report, top, culprit):
    """Compare a ddx report with the expectation; returns (ok, got_top, got_culprit, why)."""
    diags = report.get("diagnoses") or []
    got_top = diags[0]["id"] if diags else None
    got_culprit = report.get("culprit_rank")
    if top is None:
        live = [d["id"] for d in diags if d.get("level") in LIVE_LEVELS]
        if live:
            return False, got_top, got_culprit, f"expected no finding, got {', '.join(live)}"
        return True, got_top, got_culprit, ""
    if got_top != top:
        return False, got_top, got_culprit, f"top is {got_top}, expected {top}"
    if culprit == "unknown":
        if got_culprit is not None:
            return False, got_top, got_culprit, \
                f"culprit rank {got_culprit}, expected none (no line ties the failure to a rank)"
    elif culprit is not None and got_culprit != culprit:
        return False, got_top, got_culprit, f"culprit rank {got_culprit}, expected {culprit}"
    return True, got_top, got_culprit, ""


def load_scenarios(names):
    out = []
    for name in sorted(os.listdir(HERE)):
        d = os.path.join(HERE, name)
        f = os.path.join(d, "scenario.json")
        if not os.path.isfile(f) or (names and name not in names):
            continue
        with open(f) as fh:
            sc = json.load(fh)
        sc.update(name=name, dir=d)
        sc.setdefault("timeout", 60)
        out.append(sc)
    missing = set(names) - {s["name"] for s in out}
    if missing:
        sys.exit(f"run.py: unknown scenario(s): {', '.join(sorted(missing))}")
    return out


def run_one(sc, ddx, out_root):
    t0 = time.time()
    if _stopping.is_set():
        return {"name": sc["name"], "status": "FAIL", "why": "interrupted", "seconds": 0,
                "known_failing": sc.get("known_failing")}
    work = os.path.join(out_root, sc["name"])
    os.makedirs(os.path.join(work, "logs"))
    holder = None
    port = free_port()
    if sc.get("occupy_port"):
        holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        holder.bind(("0.0.0.0", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
    env = base_env(port, sc.get("env", {}))
    try:
        code, timed_out = launch(sc, work, port, env)
    finally:
        if holder:
            holder.close()
    res = {"name": sc["name"], "job_exit": code, "timed_out": timed_out,
           "expect_top": sc["top"], "expect_culprit": sc["culprit_rank"],
           "known_failing": sc.get("known_failing"), "work": work}
    if _stopping.is_set():
        res.update(status="FAIL", why="interrupted", seconds=round(time.time() - t0, 1))
        return res
    want = sc.get("expect_exit", "nonzero")
    reproduced = (code == 0) if want == 0 else (code != 0)
    if timed_out:
        res.update(status="FAIL", why=f"job still running after {sc['timeout']} s (killed)")
    elif not reproduced:
        res.update(status="FAIL", why=f"job exited {code}, expected {want}: did not reproduce")
    else:
        report, err = run_ddx(ddx, work, ["console.log", "logs"])
        if report is None:
            res.update(status="FAIL", why=err)
        else:
            ok, got_top, got_culprit, why = judge(report, sc["top"], sc["culprit_rank"])
            res.update(got_top=got_top, got_culprit=got_culprit, why=why)
            if sc.get("known_failing"):
                res["status"] = "XPASS" if ok else "XFAIL"
            else:
                res["status"] = "PASS" if ok else "FAIL"
    res["seconds"] = round(time.time() - t0, 1)
    return res


def record_golden(sc, res):
    """Keep this run's logs as tests/scenarios/golden/<name>/ with its expected.json."""
    dst = os.path.join(GOLDEN, sc["name"])
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    shutil.copy2(os.path.join(res["work"], "console.log"), dst)
    shutil.copytree(os.path.join(res["work"], "logs"), os.path.join(dst, "logs"))
    # the recorded tracebacks name where the repository was checked out and the launcher's own
    # lines where the run's folder was: keep those out of git
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for folder, _, files in os.walk(dst):
        for fn in files:
            path = os.path.join(folder, fn)
            with open(path, "rb") as f:
                data = f.read()
            clean = data.replace(root.encode() + b"/", b"/home/user/ddx/")
            clean = clean.replace(os.path.abspath(res["work"]).encode() + b"/", b"/home/user/run/")
            if clean != data:
                with open(path, "wb") as f:
                    f.write(clean)
    exp = {"top": sc["top"], "culprit_rank": sc["culprit_rank"]}
    if sc.get("known_failing"):
        exp["known_failing"] = sc["known_failing"]
    with open(os.path.join(dst, "expected.json"), "w") as f:
        json.dump(exp, f, indent=2)
        f.write("\n")


def torch_available():
    """Can PYTHON import torch.distributed? Asked without importing torch when we are PYTHON."""
    if os.path.realpath(sys.executable) == os.path.realpath(PYTHON):
        import importlib.util
        return importlib.util.find_spec("torch") is not None
    probe = subprocess.run([PYTHON, "-c", "import torch.distributed as d; assert d.is_available()"],
                           capture_output=True)
    return probe.returncode == 0


def main():
    ap = argparse.ArgumentParser(description="Run the live torchrun failure scenarios.")
    ap.add_argument("--ddx", default=os.path.join(ROOT, "build", "ddx"))
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--out", help="keep each scenario's logs under OUT/<name> (default: temp, removed)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--timeout", type=float, help="override every scenario's timeout (seconds)")
    ap.add_argument("--record-golden", action="store_true",
                    help="copy the logs of every reproduced scenario to golden/<name>/")
    ap.add_argument("--shard", help="K/N: run only every N-th scenario, starting at the K-th")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()

    def on_signal(signum, frame):
        _stopping.set()
        _kill_all_groups()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if not torch_available():
        print("run.py: SKIP: /usr/bin/python3 cannot import torch.distributed "
              "(DDX_WITH_TORCH=1 sh scripts/install-deps.sh)")
        return 77
    if not os.access(a.ddx, os.X_OK):
        print(f"run.py: no ddx binary at {a.ddx}", file=sys.stderr)
        return 2
    a.ddx = os.path.abspath(a.ddx)
    scenarios = load_scenarios(a.names)
    if a.shard:
        try:
            k, n = (int(v) for v in a.shard.split("/"))
            assert 1 <= k <= n
        except (ValueError, AssertionError):
            print(f"run.py: --shard wants K/N with 1 <= K <= N, not {a.shard}", file=sys.stderr)
            return 2
        scenarios = scenarios[k - 1::n]
    if a.timeout:
        for sc in scenarios:
            sc["timeout"] = a.timeout

    if a.out:
        out_root = os.path.abspath(a.out)
        shutil.rmtree(out_root, ignore_errors=True)
        os.makedirs(out_root)
    else:
        out_root = tempfile.mkdtemp(prefix="ddx-scenarios-")

    t0 = time.time()
    results = []
    # the biggest scenarios first, so the pool's tail is short
    order = sorted(scenarios, key=lambda s: (-s["nprocs"], s["name"]))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs))
    try:
        futs = {pool.submit(run_one, sc, a.ddx, out_root): sc for sc in order}
        for fut in concurrent.futures.as_completed(futs):
            sc = futs[fut]
            try:
                res = fut.result()
            except Exception as e:  # a harness bug: report it as a failure of that scenario
                res = {"name": sc["name"], "status": "FAIL", "why": f"harness error: {e!r}",
                       "seconds": 0, "known_failing": sc.get("known_failing")}
            results.append(res)
            print(f"{res['status']:5} {res['name']:24} {res['seconds']:6.1f}s  "
                  f"top={res.get('got_top')} culprit={res.get('got_culprit')}"
                  + (f"  ({res['why']})" if res.get("why") else ""), flush=True)
            if a.record_golden and res.get("status") in ("PASS", "FAIL", "XFAIL", "XPASS") \
                    and "got_top" in res:
                record_golden(sc, res)
    except BaseException:  # SIGINT/SIGTERM (SystemExit) or a bug: start nothing more
        _stopping.set()
        pool.shutdown(wait=False, cancel_futures=True)
        _kill_all_groups()
        if not (a.out or a.keep):
            shutil.rmtree(out_root, ignore_errors=True)
        print("run.py: interrupted; every scenario's process group was killed", file=sys.stderr)
        raise
    pool.shutdown()
    _kill_all_groups()

    wall = time.time() - t0
    results.sort(key=lambda r: r["name"])
    with open(os.path.join(out_root, "summary.json"), "w") as f:
        json.dump({"wall_seconds": round(wall, 1), "results": results}, f, indent=2)
    by = {s: [r["name"] for r in results if r["status"] == s]
          for s in ("PASS", "FAIL", "XFAIL", "XPASS")}
    print(f"\n{len(results)} scenarios in {wall:.1f}s: {len(by['PASS'])} passed, "
          f"{len(by['FAIL'])} failed, {len(by['XFAIL'])} known failing, "
          f"{len(by['XPASS'])} known failing but now passing")
    for s in ("FAIL", "XFAIL", "XPASS"):
        if by[s]:
            print(f"  {s}: {' '.join(by[s])}")
    if by["XPASS"]:
        print("  (XPASS: remove known_failing from those scenario.json files)")
    if a.out or a.keep:
        print(f"logs kept in {out_root}")
    else:
        shutil.rmtree(out_root, ignore_errors=True)
    return 1 if by["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
