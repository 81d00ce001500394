"""rank0-eval-collective -- evaluation runs on rank 0 only, but the metric
code calls dist.all_reduce; the other ranks wait at the barrier after evaluation: both time out."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402


def evaluate(model, rank):
    with torch.no_grad():
        err = model(torch.randn(16, 8)).pow(2).mean()
    dist.all_reduce(err)  # meant for distributed eval, but only rank 0 is here
    return err.item()


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 4)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    if rank == 0:
        log(f"[rank {rank}] running evaluation")
        log(f"[rank {rank}] eval mse {evaluate(ddp.module, rank):.4f}")
    dist.barrier()  # everyone waits for rank 0's evaluation
    done(rank)


if __name__ == "__main__":
    main()
