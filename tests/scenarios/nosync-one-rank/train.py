"""nosync-one-rank -- gradient accumulation configured on one rank only: rank 1 (SCN_BAD_RANK) got
accumulation_steps=2 from a per-host config, so it runs every other micro-batch under
ddp.no_sync() (no all-reduce) while the others all-reduce every step. It issues half the
all-reduces, finishes its loop and leaves; the others wait in an all-reduce it never joins."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

import torch.nn as nn  # noqa: E402

BAD = bad_rank(1)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    accum = 2 if rank == BAD else 1
    log(f"[rank {rank}] gradient accumulation steps: {accum}")
    data = batches(rank, 8)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        if step % accum:
            with ddp.no_sync():
                loss = nn.functional.mse_loss(ddp(x), y)
                loss.backward()
            loss = loss.detach()
        else:
            loss = train_step(ddp, opt, x, y)
        log_step(rank, step, len(data), loss, t0)
    done(rank)


if __name__ == "__main__":
    main()
