"""desync -- rank-dependent control flow: a rank whose batch has an outlier loss skips the
step and instead broadcasts a flag, so rank 1 (SCN_BAD_RANK) issues a different collective than the other ranks at the same
point. Run with TORCH_DISTRIBUTED_DEBUG=DETAIL, as one does to find such bugs."""
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
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        if rank == BAD and step == 3:  # "loss spike: skip this batch" -- on this rank only
            log(f"[rank {rank}] step {step}: loss spike, skipping batch")
            flag = torch.ones(1)
            dist.broadcast(flag, src=BAD)
            continue
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
