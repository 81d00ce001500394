"""straggler -- rank 2 is consistently slow (a slow input pipeline) but nothing fails:
every step waits for it, the job finishes; only the per-rank step times show it."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 12)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        if rank == 2:
            time.sleep(0.25)  # slow data loading on this rank
        t_data = time.time() - t0
        loss = train_step(ddp, opt, x, y)
        log(f"[rank {rank}] step {step}/{len(data)} loss {float(loss):.4f} "
            f"step_time {time.time() - t0:.3f}s data_time {t_data:.3f}s")
    done(rank)


if __name__ == "__main__":
    main()
