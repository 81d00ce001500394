"""restarts-exhausted -- torchrun with --max_restarts: rank 1 (SCN_BAD_RANK) meets the same corrupt
label at step 3 in every attempt and raises ValueError; the agent restarts the workers until its
restarts are spent, then fails with the last attempt's error."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)


def parse_label(rank, step):
    if rank == BAD and step == 3:
        return float("n/a")  # the record's label field
    return 0.0


@record
def main():
    rank, world = setup()
    log(f"[rank {rank}] attempt {os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}")
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        parse_label(rank, step)
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
