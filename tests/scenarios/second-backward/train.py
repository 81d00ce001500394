"""second-backward -- DDP(static_graph=True) and an extra backward through the same DDP output (a
penalty term written as a second backward after loss.backward(retain_graph=True)): the reducer
gets a backward pass it does not expect and fails an internal assertion on every rank."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch.nn as nn  # noqa: E402


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp(static_graph=True)
    data = batches(rank, 4)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        opt.zero_grad()
        out = ddp(x)
        loss = nn.functional.mse_loss(out, y)
        loss.backward(retain_graph=True)
        reg = 1e-3 * out.pow(2).mean()
        (loss + reg).backward()  # second backward through the same forward
        opt.step()
        log_step(rank, step, len(data), loss.detach(), t0)
    done(rank)


if __name__ == "__main__":
    main()
