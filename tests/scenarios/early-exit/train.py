"""early-exit -- rank 1 decides on its own to stop: its early-stopping check looks at its local
validation loss only, runs out of patience after step 4, and the rank returns and exits with
status 0. The other ranks go on to step 5 and wait in its gradient all-reduce for a peer that is
gone."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
BAD = bad_rank(1)
PATIENCE = 2


def local_val_loss(rank, step):
    """The validation loss on this rank's own split (a fixed curve, so that the run is the same
    every time): it falls on every rank except BAD, where it turns up after step 2."""
    return 1.0 / step if rank != BAD or step <= 2 else 0.4 + 0.05 * step


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    best, waited = float("inf"), 0
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
        val = local_val_loss(rank, step)
        if val < best:
            best, waited = val, 0
        else:
            waited += 1
        if waited >= PATIENCE:
            log(f"[rank {rank}] early stopping at step {step}: val_loss {val:.4f} did not improve "
                f"on {best:.4f} for {PATIENCE} evaluations")
            break
    done(rank)


if __name__ == "__main__":
    main()
