"""allgather-shapes -- gathering per-rank predictions for a metric with
dist.all_gather, but each rank has a different number of samples (the last, ragged batch
leaves rank 1, or SCN_BAD_RANK, with 3 predictions where the others have 4)."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402

BAD = bad_rank(1)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    for step, (x, y) in enumerate(batches(rank, 3), 1):
        t0 = time.time()
        loss = train_step(ddp, opt, x, y)
        log_step(rank, step, 3, loss, t0)
    # evaluation: the last ragged batch leaves rank 1 with 3 predictions instead of 4
    n_eval = 3 if rank == BAD else 4
    with torch.no_grad():
        preds = ddp.module(torch.randn(n_eval, 8)).flatten()
    log(f"[rank {rank}] eval: gathering {preds.numel()} predictions")
    gathered = [torch.empty_like(preds) for _ in range(world)]  # assumes every rank has as many
    dist.all_gather(gathered, preds)
    log(f"[rank {rank}] eval metric {torch.cat(gathered).mean().item():.4f}")
    done(rank)


if __name__ == "__main__":
    main()
