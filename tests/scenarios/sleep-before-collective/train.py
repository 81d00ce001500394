"""sleep-before-collective -- rank 1 (SCN_BAD_RANK) blocks (here: a long sleep, as a hung
file read or lock would) before the gradient all-reduce of step 3; it prints nothing, the
others time out waiting for it."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        if rank == BAD and step == 3:
            time.sleep(10 * PG_TIMEOUT_S)  # stuck: no output, no error
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
