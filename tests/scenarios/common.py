"""common.py -- shared pieces of the scenario training scripts (tests/scenarios/*/train.py).

Each scenario is a tiny but real DDP job on CPU (gloo) that fails on purpose in one way. This
module holds what they all do the same way: the process group with a short timeout (so hangs end
in seconds), a toy model and per-rank data, a step that prints what a training loop prints (in the
output style SCN_STYLE names, see trainlog.py), and @record so torchelastic writes each failing
rank's error.json. Nothing here is specific to one failure; the failure itself is visible in each
train.py.

The environment a scenario.json can set for its script:
  SCN_STYLE       output style (trainlog.py; default plain)
  SCN_BAD_RANK    the rank that misbehaves (each script has its own default; see bad_rank)
  SCN_RECORD      0: no @record, so torchelastic gets no error file (error_file: <N/A>)
  SCN_WORLD_SIZE  a world size passed to init_process_group explicitly, overriding the launcher's
  SCN_PG_TIMEOUT  the process-group timeout in seconds (the harness sets 5)
"""
import datetime
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.elastic.multiprocessing.errors import record as _record
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: F401 (re-export)

import trainlog

PG_TIMEOUT_S = float(os.environ.get("SCN_PG_TIMEOUT", "5"))
STYLE = trainlog.from_env()
_model = {}  # the DDP module and optimizer of make_ddp, for the lr and gradient norm log_step prints


def record(fn):
    """torchelastic's @record (writes the rank's error.json), unless SCN_RECORD=0."""
    return fn if os.environ.get("SCN_RECORD", "1") == "0" else _record(fn)


def bad_rank(default):
    """The rank that misbehaves: SCN_BAD_RANK, or the script's own default."""
    return int(os.environ.get("SCN_BAD_RANK", default))


def log(msg):
    STYLE.info(msg)


def setup(seed=0):
    """Join the gloo process group (env://) with a short timeout; returns (rank, world_size)."""
    torch.set_num_threads(1)
    STYLE.before_init(int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1")))
    kw = {}
    if os.environ.get("SCN_WORLD_SIZE"):
        kw = {"world_size": int(os.environ["SCN_WORLD_SIZE"]), "rank": int(os.environ["RANK"])}
        log(f"init_process_group(backend='gloo', world_size={kw['world_size']}, rank={kw['rank']})")
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=PG_TIMEOUT_S), **kw)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(seed)
    STYLE.ready(rank, world, PG_TIMEOUT_S, os.getpid())
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
    _model.update(ddp=ddp, opt=opt)
    return ddp, opt


def train_step(ddp, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    opt.step()
    return loss.detach()


def grad_norm():
    """The total L2 norm of the gradients of make_ddp's model (nan when one is nan)."""
    ddp = _model.get("ddp")
    if ddp is None:
        return 0.0
    sq = sum(float(p.grad.pow(2).sum()) for p in ddp.parameters() if p.grad is not None)
    return math.sqrt(sq) if sq == sq else float("nan")


def log_step(rank, step, total, loss, t0, data_time=None, epoch=0):
    """Report one finished step in the scenario's style (loss, lr, gradient norm, times)."""
    opt = _model.get("opt")
    lr = opt.param_groups[0]["lr"] if opt is not None else 0.0
    STYLE.step(trainlog.Step(rank, step, total, float(loss), time.time() - t0, lr, grad_norm(),
                             data_time=data_time, epoch=epoch))


def done(rank):
    STYLE.finish(rank)
    teardown()
    sys.exit(0)
