"""straggler -- rank 2 (SCN_BAD_RANK) is consistently slow (a slow input pipeline) but nothing fails:
every step waits for it, the job finishes; only the per-rank data times show it."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(2)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 12)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        if rank == BAD:
            time.sleep(0.25)  # slow data loading on this rank
        t_data = time.time() - t0
        loss = train_step(ddp, opt, x, y)
        log_step(rank, step, len(data), loss, t0, data_time=t_data)
    done(rank)


if __name__ == "__main__":
    main()
