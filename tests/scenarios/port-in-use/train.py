"""port-in-use -- the job's MASTER_PORT is already taken by another process (the
harness holds it open), so the launcher's TCPStore cannot listen."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    for step, (x, y) in enumerate(batches(rank, 3), 1):
        t0 = time.time()
        log_step(rank, step, 3, train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
