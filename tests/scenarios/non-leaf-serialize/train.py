"""non-leaf-serialize -- rank 0 (SCN_BAD_RANK) hands the model output (a non-leaf tensor that
requires grad) to a background writer process through a multiprocessing pipe; pickling it
raises, the other rank loses its peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch.multiprocessing as mp  # noqa: E402

BAD = bad_rank(0)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    send_end = None
    if rank == BAD:
        _, send_end = mp.Pipe(duplex=False)  # to the async sample writer
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        out = ddp(x)
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log_step(rank, step, len(data), loss.detach(), t0)
        if rank == BAD and step == 3:
            log(f"[rank {rank}] sending samples of step {step} to the writer")
            send_end.send({"step": step, "pred": out})  # out is not detached
    done(rank)


if __name__ == "__main__":
    main()
