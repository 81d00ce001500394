"""launch_manual.py -- start the ranks of a job by hand, without torchrun (scenario harness only).

  launch_manual.py --nprocs N --world-size W --log-dir DIR SCRIPT

Starts N processes of SCRIPT with RANK 0..N-1 and WORLD_SIZE W (W may be larger than N: the
world-size scenario), MASTER_ADDR/MASTER_PORT taken from the environment. Like torchrun
--redirects 3 --tee 3 it writes each rank's output to DIR/manual/attempt_0/<rank>/{stdout,stderr}.log
and copies it, prefixed "[default<rank>]:", to its own stdout. Exits with the first nonzero exit
status of a rank (0 when all succeed). The ranks stay in this process's process group, so the
harness ends all of them with one killpg.
"""
import argparse
import os
import subprocess
import sys
import threading


def relay(stream, path, prefix, lock):
    out = sys.stdout.buffer
    with open(path, "wb") as f:
        for line in iter(stream.readline, b""):
            f.write(line)
            f.flush()
            with lock:
                out.write(prefix + line)
                out.flush()
    stream.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nprocs", type=int, required=True)
    ap.add_argument("--world-size", type=int, required=True)
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("script")
    a = ap.parse_args()
    lock = threading.Lock()
    procs, threads = [], []
    for r in range(a.nprocs):
        d = os.path.join(a.log_dir, "manual", "attempt_0", str(r))
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(a.world_size),
                   LOCAL_WORLD_SIZE=str(a.nprocs), GROUP_RANK="0")
        p = subprocess.Popen([sys.executable, a.script], env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(p)
        for name, stream in (("stdout", p.stdout), ("stderr", p.stderr)):
            t = threading.Thread(target=relay, daemon=True,
                                 args=(stream, os.path.join(d, name + ".log"),
                                       f"[default{r}]:".encode(), lock))
            t.start()
            threads.append(t)
    codes = [p.wait() for p in procs]
    for t in threads:
        t.join()
    for r, (p, c) in enumerate(zip(procs, codes)):
        print(f"launch_manual: rank {r} (pid {p.pid}) exited with {c}", flush=True)
    sys.exit(next((c if c > 0 else 128 - c for c in codes if c != 0), 0))


if __name__ == "__main__":
    main()
