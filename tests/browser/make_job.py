#!/usr/bin/python3
"""make_job.py -- writes a small failed 8-rank job for the browser tests (deterministic).

Each rank logs 60 training steps with Python logging times and a step_time; rank 5 is slow
(a straggler). Rank 3 runs out of CUDA memory at step 41; the line before its error and the
error line itself carry markup ("<script>", '"><img onerror=') that the HTML report must show
as text. The other ranks hit the NCCL watchdog ten minutes later. NCCL's Init COMPLETE lines
give each rank a host, GPU and pid; the launcher's log holds torchelastic's failure table.

Usage: make_job.py DIR
"""
import os
import sys

INJECT = '<script>document.title="pwned"</script> "><img src=x onerror=alert(1)>'


def stamp(sec):
    return "2024-05-01 12:%02d:%02d,%03d" % (sec // 60, sec % 60, int(sec * 1000) % 1000)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for r in range(8):
        lines = []
        t = 1.0
        host = "node%d" % (r // 4)
        pid = 4100 + r
        lines.append("%s:%d:%d [%d] NCCL INFO comm 0x5a1 rank %d nranks 8 cudaDev %d nvmlDev %d "
                     "busId %d000 commId 0x9e2 - Init COMPLETE" % (host, pid, pid, r % 4, r, r % 4,
                                                                   r % 4, 17 + r))
        steps = 41 if r == 3 else 60
        for s in range(1, steps + 1):
            dt = 0.8 if r == 5 else 0.5 + 0.01 * ((s * 7 + r) % 5)
            t += dt
            lines.append("%s INFO trainer: step %d loss %.3f step_time %.2fs"
                         % (stamp(t), s, 2.5 - s * 0.01, dt))
        if r == 3:
            lines.append("%s INFO trainer: loading batch from %s" % (stamp(t + 0.1), INJECT))
            lines.append("%s ERROR trainer: torch.OutOfMemoryError: CUDA out of memory. Tried to "
                         "allocate 2.00 GiB (GPU 3; 79.15 GiB total capacity; 76.02 GiB already "
                         "allocated) %s" % (stamp(t + 0.2), INJECT))
            lines.append("Traceback (most recent call last):")
            lines.append('  File "train.py", line 88, in <module>')
        else:
            lines.append("%s ERROR trainer: [Rank %d] Watchdog caught collective operation "
                         "timeout: WorkNCCL(SeqNum=812, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                         "Timeout(ms)=600000) ran for 600043 milliseconds before timing out."
                         % (stamp(t + 600), r))
        with open(os.path.join(out, "rank%d.log" % r), "w") as f:
            f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "launcher.log"), "w") as f:
        f.write("""torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2024-05-01_12:10:41
  host      : node0
  rank      : 3 (local_rank: 3)
  exitcode  : 1 (pid: 4103)
  error_file: <N/A>
  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html
============================================================
""")


if __name__ == "__main__":
    main()
