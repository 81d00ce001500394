"""nan-one-rank -- a corrupt sample on rank 1 (SCN_BAD_RANK) makes its loss NaN at step 4. The job runs with
autograd anomaly detection on (as one does when chasing NaNs), so that rank's backward raises there;
the other rank loses its peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402

BAD = bad_rank(1)


@record
def main():
    rank, world = setup()
    torch.autograd.set_detect_anomaly(True)
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    for step, (x, y) in enumerate(data, 1):
        if rank == BAD and step == 4:
            x[2, 5] = float("nan")  # corrupt sample in this rank's shard
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
