"""sigkill-rank -- rank 1 (SCN_BAD_RANK) is killed with SIGKILL in the middle of training (what the
kernel's OOM killer does); it prints nothing, the others lose their peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import signal  # noqa: E402

BAD = bad_rank(1)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    for step, (x, y) in enumerate(data, 1):
        if rank == BAD and step == 4:
            os.kill(os.getpid(), signal.SIGKILL)
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
