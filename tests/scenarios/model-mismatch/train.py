"""model-mismatch -- one rank builds a different model: rank 1 (SCN_BAD_RANK) reads a stale config
override. SCN_MISMATCH=count (default): it adds an extra output layer (more parameter tensors);
SCN_MISMATCH=shape: its hidden layer is 24 wide instead of 16 (same tensors, other shapes). DDP's
construction compares the ranks' parameters and fails before the first step."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

import torch.nn as nn  # noqa: E402

BAD = bad_rank(1)


class NetWithHead(Net):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(1, 1)

    def forward(self, x):
        return self.head(super().forward(x))


@record
def main():
    rank, world = setup()
    model = Net()
    if rank == BAD:
        log(f"[rank {rank}] model config override: {os.environ.get('SCN_MISMATCH', 'count')}")
        model = NetWithHead() if os.environ.get("SCN_MISMATCH", "count") == "count" \
            else Net(d_hidden=24)
    ddp, opt = make_ddp(model)
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
