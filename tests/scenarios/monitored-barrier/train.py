"""monitored-barrier -- the loop checks that every rank is alive at step 3 with
dist.monitored_barrier (3 s); rank 2 (SCN_BAD_RANK, never 0) is stuck 30 s in a slow shard read
before it. Rank 0's monitored barrier names the rank that did not arrive and raises; the launcher
then stops the others."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

import datetime  # noqa: E402

BAD = bad_rank(2)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
        if step == 3:
            if rank == BAD:
                time.sleep(30)  # a shard read that hangs on a slow mount
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=3))
    done(rank)


if __name__ == "__main__":
    main()
