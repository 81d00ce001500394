"""store-wrong-port -- rank 1 (SCN_BAD_RANK) takes the rendezvous port from a stale config that
overrides the launcher's MASTER_PORT with a placeholder, port 1, where nothing listens. Its TCPStore
client cannot connect within the process group's timeout; the other ranks wait for it in the
store-based barrier of init_process_group and time out."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)


@record
def main():
    rank = int(os.environ["RANK"])
    if rank == BAD:
        os.environ["MASTER_PORT"] = "1"
        log(f"rank {rank}: rendezvous at {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}")
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 4)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
