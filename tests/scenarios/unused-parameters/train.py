"""unused-parameters -- a module with a branch that forward() never uses, under DDP
without find_unused_parameters: the second iteration raises the reducer's error on every rank."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch.nn as nn  # noqa: E402


class TwoHeads(Net):
    def __init__(self):
        super().__init__()
        self.aux_head = nn.Linear(16, 1)  # only meant for an auxiliary loss that is switched off

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp(TwoHeads())
    data = batches(rank, 5)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        loss = train_step(ddp, opt, x, y)
        log_step(rank, step, len(data), loss, t0)
    done(rank)


if __name__ == "__main__":
    main()
