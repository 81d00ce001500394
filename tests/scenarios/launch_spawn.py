"""launch_spawn.py -- start a scenario script with torch.multiprocessing.spawn instead of torchrun.

  launch_spawn.py --nprocs N [--world-size W] SCRIPT

The way many scripts start their ranks themselves: one Python process calls mp.spawn(worker,
nprocs=N), each child sets RANK/LOCAL_RANK/WORLD_SIZE (W, default N), imports SCRIPT as a module
(so that what it defines can be pickled, e.g. a Dataset for DataLoader workers) and runs its main()
(MASTER_ADDR/MASTER_PORT come from the environment, so rank 0 hosts the TCPStore). Every rank
writes to the inherited stdout/stderr with no prefix and no log folder; when a rank fails,
mp.spawn terminates the others and raises ProcessRaisedException (a Python error) or
ProcessExitedException (a signal or exit code) in the parent, which exits 1.
"""
import argparse
import importlib
import os
import sys

import torch.multiprocessing as mp


def worker(local_rank, script, nprocs, world_size):
    os.environ.update(RANK=str(local_rank), LOCAL_RANK=str(local_rank),
                      WORLD_SIZE=str(world_size), LOCAL_WORLD_SIZE=str(nprocs))
    sys.path.insert(0, os.path.dirname(script))
    module = importlib.import_module(os.path.splitext(os.path.basename(script))[0])
    module.main()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nprocs", type=int, required=True)
    ap.add_argument("--world-size", type=int)
    ap.add_argument("script")
    a = ap.parse_args()
    world = a.world_size or a.nprocs
    mp.spawn(worker, args=(os.path.realpath(a.script), a.nprocs, world), nprocs=a.nprocs, join=True)


if __name__ == "__main__":
    main()
