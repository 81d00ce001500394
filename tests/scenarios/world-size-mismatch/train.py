"""world-size-mismatch -- WORLD_SIZE says 3 but only 2 processes are started
(a wrong --nnodes/--nproc count): the ranks that came wait in the store until the timeout.
Started by hand (no torchrun) because 1.13's rendezvous waits a fixed 300 s."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
@record
def main():
    log(f"[rank {os.environ['RANK']}] joining: MASTER_ADDR={os.environ['MASTER_ADDR']} "
        f"MASTER_PORT={os.environ['MASTER_PORT']} WORLD_SIZE={os.environ['WORLD_SIZE']}")
    rank, world = setup()
    ddp, opt = make_ddp()
    for step, (x, y) in enumerate(batches(rank, 3), 1):
        t0 = time.time()
        log_step(rank, step, 3, train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
