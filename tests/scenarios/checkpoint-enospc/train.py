"""checkpoint-enospc -- after step 4 rank 0 saves a checkpoint onto a volume that is full: the
checkpoint file is a link to /dev/full, which fails every write with ENOSPC, as a full disk does
(a read-only folder would not fail: the jobs may run as root). The checkpoint holds the model, the
optimizer and a replay buffer of recent samples (128 KiB): a checkpoint that fits the writer's
buffer would not even notice the full disk. SCN_SAVE=path (default):
torch.save(obj, path), whose zip writer stops with "unexpected pos" and aborts the process;
SCN_SAVE=file: torch.save into an open file, which raises OSError [Errno 28]. SCN_SAVE=shards:
every rank writes its own shard and only rank SCN_BAD_RANK's target is full. The other ranks wait
at the barrier after the save and lose their peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402

MODE = os.environ.get("SCN_SAVE", "path")
BAD = bad_rank(0)
SAVE_STEP = 4


def target(rank, step):
    """The checkpoint path; the one that rank BAD writes is on the full volume."""
    os.makedirs("checkpoints", exist_ok=True)
    name = f"step_{step}" + (f"_rank{rank}" if MODE == "shards" else "") + ".pt"
    path = os.path.join("checkpoints", name)
    if rank == BAD and not os.path.lexists(path):
        os.symlink("/dev/full", path)
    return path


def save(ddp, opt, rank, step):
    path = target(rank, step)
    log(f"[rank {rank}] saving checkpoint to {path}")
    state = {"model": ddp.module.state_dict(), "optimizer": opt.state_dict(), "step": step,
             "replay_buffer": torch.randn(4096, 8)}
    if MODE == "path":
        torch.save(state, path)
    else:
        with open(path, "wb") as f:
            torch.save(state, f)
    log(f"[rank {rank}] checkpoint saved")


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
        if step == SAVE_STEP:
            if MODE == "shards" or rank == 0:
                save(ddp, opt, rank, step)
            dist.barrier()
    done(rank)


if __name__ == "__main__":
    main()
