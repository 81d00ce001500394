"""ckpt-keys-mismatch -- each rank resumes from a checkpoint; rank 1's (SCN_BAD_RANK) copy was written
by an older version of the model whose output layer was called "head", so load_state_dict fails
with missing and unexpected keys before DDP is built; the other ranks wait for it in DDP's
construction and lose their peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)


def checkpoint(rank):
    sd = Net().state_dict()
    if rank == BAD:  # the older model version's names
        sd = {k.replace("fc2.", "head."): v for k, v in sd.items()}
    return {"model": sd, "step": 100}


@record
def main():
    rank, world = setup()
    model = Net()
    ckpt = checkpoint(rank)
    log(f"[rank {rank}] resuming from step {ckpt['step']}")
    model.load_state_dict(ckpt["model"])
    ddp, opt = make_ddp(model)
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
