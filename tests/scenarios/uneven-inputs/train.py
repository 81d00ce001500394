"""uneven-inputs -- rank 1's (SCN_BAD_RANK's) shard has fewer batches (no DistributedSampler padding, no
Join): that rank leaves the loop and goes to a long end-of-epoch task while the others wait in the
gradient all-reduce of its extra batch until the gloo timeout."""
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
    n = 4 if rank == BAD else 6  # this rank got a shorter shard
    data = batches(rank, n)
    log(f"[rank {rank}] epoch 0: {len(data)} batches in this rank's shard")
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        loss = train_step(ddp, opt, x, y)
        log_step(rank, step, len(data), loss, t0)
    log(f"[rank {rank}] epoch 0 done, writing epoch summary")
    time.sleep(4 * PG_TIMEOUT_S)  # end-of-epoch work on the rank that finished first
    dist.barrier()
    done(rank)


if __name__ == "__main__":
    main()
