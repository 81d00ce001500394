"""assert-one-rank -- the loop asserts its batch size; rank 1's (SCN_BAD_RANK) shard ends in a
short batch at step 3 (3 samples, no drop_last), so its assert fails with an AssertionError while
the other ranks go on to the all-reduce of step 3 and lose their peer."""
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
            x, y = x[:3], y[:3]  # the shard's last, short batch
        assert x.shape[0] == 4, f"expected a batch of 4 samples, got {x.shape[0]}"
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
