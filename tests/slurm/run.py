#!/usr/bin/python3
"""run.py -- ddx slurm and the epilog on a real single-node Slurm started here from Debian's
packages (munge, slurmctld, slurmd), running real failing torchrun jobs through sbatch.

  run.py --ddx build/ddx [--keep]

The cluster lives in a temporary folder: a munge key and socket, a slurm.conf with free ports,
the controller's state, the spool, the logs; EpilogSlurmctld is contrib/slurm/ddx-epilog.sh.
Jobs: a torchrun job whose rank 1 is SIGKILLed (its output in slurm-%j.out); ranks started by
srun with one output file per task (--output=task-%j-%t.out) where rank 2 raises; a job that
succeeds; an array. Checked: ddx slurm finds each job's outputs, names the failure, the culprit
rank and its host; the epilog writes ddx-JOBID.json beside the output and stores the failed jobs
(only them) in the fleet store.

Exit status: 0 all checks pass, 1 a check failed, 2 usage, 77 (ctest: skipped) when Slurm cannot
start here: not root, packages missing, or the daemons do not come up (the reason is printed).
"""
import argparse
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from checks import check, free_port, summary  # noqa: E402
ROOT = os.path.dirname(os.path.dirname(HERE))
SCEN = os.path.join(ROOT, "tests", "scenarios")
PYTHON = "/usr/bin/python3"



def skip(why):
    print(f"SKIP: {why}")
    sys.exit(77)



class Cluster:
    def __init__(self, work, ddx):
        self.work, self.ddx = work, ddx
        self.node = socket.gethostname().split(".")[0]
        self.conf = os.path.join(work, "slurm.conf")
        self.db = os.path.join(work, "fleet.db")
        self.munge_pid = None
        self.env = dict(os.environ, SLURM_CONF=self.conf)

    def start(self):
        w = self.work
        for d in ("munge", "state", "spool", "log", "jobs"):
            os.makedirs(os.path.join(w, d), exist_ok=True)
        os.chmod(w, 0o755)
        os.chmod(os.path.join(w, "munge"), 0o711)
        key = os.path.join(w, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.sock = os.path.join(w, "munge", "munge.socket")
        r = subprocess.run(["munged", "--force", f"--socket={self.sock}", f"--key-file={key}",
                            f"--log-file={w}/log/munged.log", f"--pid-file={w}/munge/munged.pid",
                            f"--seed-file={w}/munge/munged.seed"], capture_output=True, text=True)
        if r.returncode != 0:
            skip(f"munged did not start: {r.stderr.strip()}")
        with open(f"{w}/munge/munged.pid") as f:
            self.munge_pid = int(f.read())
        # the epilog, as a site would install it, with this cluster's settings
        epilog = os.path.join(w, "epilog.sh")
        with open(epilog, "w") as f:
            f.write(f"#!/bin/sh\nexport DDX={self.ddx} DDX_DB={self.db} "
                    f"DDX_LOG={w}/log/ddx-epilog.log SLURM_CONF={self.conf} DDX_DELAY=0\n"
                    f"exec sh {ROOT}/contrib/slurm/ddx-epilog.sh\n")
        os.chmod(epilog, 0o755)
        with open(self.conf, "w") as f:
            f.write(f"""ClusterName=ddxtest
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.sock}
StateSaveLocation={w}/state
SlurmdSpoolDir={w}/spool
SlurmctldPidFile={w}/slurmctld.pid
SlurmdPidFile={w}/slurmd.pid
SlurmctldLogFile={w}/log/slurmctld.log
SlurmdLogFile={w}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
FirstJobId=100000
MinJobAge=3600
KillWait=5
EpilogSlurmctld={epilog}
NodeName={self.node} NodeAddr=127.0.0.1 CPUs=8 RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")
        for daemon in ("slurmctld", "slurmd"):
            r = subprocess.run([daemon, "-f", self.conf], capture_output=True, text=True,
                               env=self.env)
            if r.returncode != 0:
                self.stop()
                skip(f"{daemon} did not start: {r.stderr.strip()} {self.log_tail(daemon)}")
        t0 = time.time()
        while time.time() - t0 < 30:
            r = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True,
                               env=self.env)
            if r.returncode == 0 and r.stdout.strip() in ("idle", "mixed", "allocated"):
                return
            time.sleep(0.5)
        self.stop()
        skip(f"the node did not become idle in 30 s: {self.log_tail('slurmd')}")

    def log_tail(self, daemon):
        try:
            with open(os.path.join(self.work, "log", f"{daemon}.log")) as f:
                return " | ".join(f.read().strip().splitlines()[-3:])
        except OSError:
            return ""

    def stop(self):
        subprocess.run(["scancel", "--user", "root"], capture_output=True, env=self.env)
        subprocess.run(["scontrol", "shutdown"], capture_output=True, env=self.env)
        time.sleep(1)
        for name in ("slurmd.pid", "slurmctld.pid"):
            try:
                with open(os.path.join(self.work, name)) as f:
                    os.kill(int(f.read()), 9)
            except (OSError, ValueError):
                pass
        if self.munge_pid:
            try:
                os.kill(self.munge_pid, 15)
            except OSError:
                pass

    def sbatch(self, args, script, env_extra=None):
        env = dict(self.env, **(env_extra or {}))
        r = subprocess.run(["sbatch", "--parsable"] + args, input=script, capture_output=True,
                           text=True, env=env, cwd=os.path.join(self.work, "jobs"))
        if r.returncode != 0:
            raise RuntimeError(f"sbatch failed: {r.stderr}")
        return r.stdout.strip().split(";")[0]

    def state(self, job):
        r = subprocess.run(["scontrol", "-o", "show", "job", job], capture_output=True,
                           text=True, env=self.env)
        for word in r.stdout.split():
            if word.startswith("JobState="):
                return word.split("=", 1)[1]
        return None

    def wait(self, jobs, timeout=180):
        t0 = time.time()
        while time.time() - t0 < timeout:
            states = [self.state(j) for j in jobs]
            if all(s in ("COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL",
                         "OUT_OF_MEMORY") for s in states):
                return states
            time.sleep(1)
        return [self.state(j) for j in jobs]

    def ddx_slurm(self, *args):
        r = subprocess.run([self.ddx, "slurm", *args], capture_output=True, text=True,
                           env=self.env, cwd=self.work)
        try:
            rep = json.loads(r.stdout) if "--json" in args and r.stdout else None
        except ValueError:
            rep = None
        return r, rep


def job_env():
    env = {"GLOO_SOCKET_IFNAME": "lo", "MASTER_ADDR": "127.0.0.1", "OMP_NUM_THREADS": "1",
           "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "SCN_PG_TIMEOUT": "5"}
    return env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddx", required=True)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    ddx = os.path.abspath(a.ddx)
    if os.geteuid() != 0:
        skip("a test Slurm needs root here (slurmd runs jobs as their users)")
    missing = [b for b in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo")
               if not shutil.which(b)]
    if missing:
        skip(f"{', '.join(missing)} not installed (DDX_WITH_TORCH=1 sh scripts/install-deps.sh "
             f"installs munge, slurmctld, slurmd and slurm-client)")
    if subprocess.run([PYTHON, "-c", "import torch.distributed"], capture_output=True).returncode:
        skip("/usr/bin/python3 has no torch for the jobs (DDX_WITH_TORCH=1 sh "
             "scripts/install-deps.sh)")
    work = tempfile.mkdtemp(prefix="ddx-slurm-")
    c = Cluster(work, ddx)
    t0 = time.time()
    try:
        c.start()
        print(f"Slurm up on {c.node} in {time.time() - t0:.1f} s", flush=True)
        run_checks(c)
    finally:
        c.stop()
        if a.keep:
            print(f"run.py: kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    return summary(t0)


def run_checks(c):
    jobs_dir = os.path.join(c.work, "jobs")
    env = job_env()
    # 1. torchrun in a batch job: rank 1 SIGKILLs itself; the output is slurm-<id>.out
    port = free_port()
    torchrun = c.sbatch(["-J", "sigkill", "-n", "1", "-c", "3", "--output=slurm-%j.out"], f"""#!/bin/sh
exec {PYTHON} {SCEN}/launch.py --nnodes 1 --nproc_per_node 3 --master_addr 127.0.0.1 \\
    --master_port {port} --monitor_interval 1 --redirects 3 --tee 3 --log_dir logs-$SLURM_JOB_ID \\
    {SCEN}/sigkill-rank/train.py
""", env)
    # 2. three ranks started by srun, one output file per task; rank 2 raises
    port = free_port()
    pertask = c.sbatch(["-J", "pertask", "-n", "3", "--output=batch-%j.out"], f"""#!/bin/sh
export MASTER_PORT={port} WORLD_SIZE=$SLURM_NTASKS
srun --output=task-%j-%t.out sh -c 'RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID exec {PYTHON} \\
    {SCEN}/exception-one-rank/train.py'
""", env)
    # 3. a job that succeeds, and 4. an array of two tasks
    ok_job = c.sbatch(["-J", "fine", "--output=fine-%j.out"], "#!/bin/sh\necho all good\n")
    array = c.sbatch(["-J", "arr", "-a", "0-1", "--output=arr-%A_%a.out"],
                     "#!/bin/sh\necho task $SLURM_ARRAY_TASK_ID\nexit 3\n")
    states = c.wait([torchrun, pertask, ok_job])
    check("the jobs ran: the two failing ones failed, the other completed",
          states == ["FAILED", "FAILED", "COMPLETED"], f"{states}")

    r, rep = c.ddx_slurm("--json", torchrun)
    top = rep["diagnoses"][0]["id"] if rep and rep["diagnoses"] else None
    job = rep.get("job", {}) if rep else {}
    check("ddx slurm (torchrun in sbatch): the failure and the culprit rank",
          r.returncode == 1 and top == "childfailed-exitcode-9" and rep["culprit_rank"] == 1,
          f"exit {r.returncode}, top {top}, culprit {rep and rep['culprit_rank']} {r.stderr}")
    check("ddx slurm: the job's output found, its node and host as facts",
          os.path.join(jobs_dir, f"slurm-{torchrun}.out") in job.get("outputs", []) and
          job.get("nodes") == [c.node] and job.get("state") == "FAILED" and
          job.get("culprit_host") == c.node and
          rep["facts"].get("slurm.nodes") == c.node and
          rep["facts"].get("job.culprit_host") == c.node, f"{job}")

    r, rep = c.ddx_slurm("--json", pertask)
    job = rep.get("job", {}) if rep else {}
    tasks = sorted(os.path.join(jobs_dir, f"task-{pertask}-{t}.out") for t in range(3))
    found = sorted(p for p in job.get("outputs", []) if "/task-" in p)
    check("ddx slurm (srun --output=task-%j-%t.out): every task's file, from the batch script",
          found == tasks and os.path.join(jobs_dir, f"batch-{pertask}.out") in job["outputs"],
          f"{job.get('outputs')}")
    check("ddx slurm: the task layout (3 tasks on the node)",
          job.get("task_nodes") == [c.node] * 3 and
          rep["facts"].get("slurm.task_nodes") == f"0-2:{c.node}", f"{job.get('task_nodes')}")
    d = subprocess.run([c.ddx, "diagnose", "--json", *job.get("outputs", [])],
                       capture_output=True, text=True)
    want = json.loads(d.stdout) if d.stdout else {}
    got_top = [x["id"] for x in rep["diagnoses"]] if rep else None
    check("ddx slurm: the same diagnosis as ddx diagnose on those files, rank 2 the culprit",
          got_top == [x["id"] for x in want.get("diagnoses", [])] and got_top and
          rep["culprit_rank"] == 2 == want.get("culprit_rank"),
          f"{got_top} culprit {rep and rep['culprit_rank']} vs "
          f"{[x['id'] for x in want.get('diagnoses', [])]} {want.get('culprit_rank')}")

    r, _ = c.ddx_slurm("--if-failed", ok_job)
    check("ddx slurm --if-failed on a job that succeeded: nothing, exit 0",
          r.returncode == 0 and "did not fail" in r.stderr and not r.stdout, r.stderr)
    r, _ = c.ddx_slurm(array)
    check("ddx slurm on an array's id: name one task", r.returncode == 2 and
          "is an array of 2 tasks" in r.stderr and f"{array}_1" in r.stderr, r.stderr)
    c.wait([f"{array}_0", f"{array}_1"])
    r, rep = c.ddx_slurm("--json", f"{array}_1")
    check("ddx slurm on one array task: its own output", r.returncode in (0, 1) and rep and
          os.path.join(jobs_dir, f"arr-{array}_1.out") in rep["job"]["outputs"] and
          rep["job"]["array_task_id"] == "1", r.stderr + json.dumps(rep and rep["job"]))
    r, _ = c.ddx_slurm("999999")
    check("ddx slurm on an unknown job: exit 2 and why", r.returncode == 2 and
          "not found by scontrol" in r.stderr, r.stderr)

    # the epilog: a report beside each failed job's output, and a row in the store
    saved = {j: os.path.join(jobs_dir, f"ddx-{j}.json") for j in (torchrun, pertask)}
    reports, rows = {}, []
    t0 = time.time()
    while time.time() - t0 < 240:  # the epilog runs detached; a loaded machine delays it
        reports = {j: json.load(open(p)) for j, p in saved.items() if os.path.exists(p)}
        try:
            con = sqlite3.connect(c.db)
            rows = con.execute("SELECT job_id, finding, culprit_rank, culprit_host FROM jobs"
                               " ORDER BY job_id").fetchall()
            con.close()
        except sqlite3.Error:
            rows = []
        if len(reports) == 2 and {torchrun, pertask} <= {r[0] for r in rows}:
            break
        time.sleep(0.5)
    log = os.path.join(c.work, "log", "ddx-epilog.log")
    if len(reports) < 2 and os.path.exists(log):
        print(f"epilog log: {open(log).read()[-800:]}")
    check("epilog: ddx-JOBID.json beside each failed job's output",
          len(reports) == 2 and reports[torchrun]["diagnoses"][0]["id"] ==
          "childfailed-exitcode-9" and reports[torchrun]["job"]["id"] == torchrun,
          f"{sorted(reports)} after {time.time() - t0:.1f} s")
    check("epilog: nothing for the job that succeeded",
          not os.path.exists(os.path.join(jobs_dir, f"ddx-{ok_job}.json")))
    ids = [r[0] for r in rows]
    check("epilog: the failed jobs in the fleet store, with culprit rank and host",
          torchrun in ids and pertask in ids and ok_job not in ids and
          (torchrun, "childfailed-exitcode-9", 1, c.node) in rows, f"{rows}")
    r = subprocess.run([c.ddx, "fleet", "report", "--db", c.db, "--json", "--since", "1d"],
                       capture_output=True, text=True)
    rep = json.loads(r.stdout) if r.returncode == 0 else {}
    check("fleet report over the epilog's store", rep.get("jobs", 0) >= 2 and
          any(x["id"] == "childfailed-exitcode-9" for x in rep.get("classes", [])), r.stderr)


if __name__ == "__main__":
    sys.exit(main())
