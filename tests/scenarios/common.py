"""common.py -- shared pieces of the scenario training scripts (tests/scenarios/*/train.py).

Each scenario is a tiny but real DDP job on CPU (gloo) that fails on purpose in one way. This
module holds what they all do the same way: the process group with a short timeout (so hangs end
in seconds), a toy model and per-rank data, a step that prints what a training loop prints, and
@record so torchelastic writes each failing rank's error.json. Nothing here is specific to one
failure; the failure itself is visible in each train.py.
"""
import datetime
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record  # noqa: F401 (re-export)
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: F401 (re-export)

PG_TIMEOUT_S = float(os.environ.get("SCN_PG_TIMEOUT", "5"))


def log(msg):
    print(msg, flush=True)


def setup(seed=0):
    """Join the gloo process group (env://) with a short timeout; returns (rank, world_size)."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=PG_TIMEOUT_S))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(seed)
    log(f"[rank {rank}] process group ready: backend=gloo world_size={world} "
        f"timeout={PG_TIMEOUT_S:g}s pid={os.getpid()}")
    return rank, world


def teardown():
    dist.destroy_process_group()


class Net(nn.Module):
    def __init__(self, d_in=8, d_hidden=16, d_out=1):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def batches(rank, n, batch_size=4, d_in=8):
    """n (x, y) batches, different per rank like a DistributedSampler shard."""
    g = torch.Generator().manual_seed(1000 + rank)
    out = []
    for _ in range(n):
        x = torch.randn(batch_size, d_in, generator=g)
        out.append((x, x.sum(dim=1, keepdim=True) * 0.5))
    return out


def make_ddp(model=None, **kw):
    model = model if model is not None else Net()
    ddp = DDP(model, **kw)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    return ddp, opt


def train_step(ddp, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def log_step(rank, step, total, loss, t0):
    log(f"[rank {rank}] step {step}/{total} loss {float(loss):.4f} step_time {time.time() - t0:.3f}s")


def done(rank):
    log(f"[rank {rank}] training finished")
    teardown()
    sys.exit(0)
