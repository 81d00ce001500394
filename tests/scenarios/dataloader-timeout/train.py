"""dataloader-timeout -- the ranks read their shard through a DataLoader with one worker and
timeout=2; on rank 1 (SCN_BAD_RANK) the worker hangs 30 s reading sample 12 (a stalled network
mount), so the loader raises "DataLoader timed out after 2 seconds" in the main process at step 4;
the other ranks wait in the all-reduce and lose their peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

from torch.utils.data import DataLoader, Dataset  # noqa: E402

BAD = bad_rank(1)


class Shard(Dataset):
    def __init__(self, rank):
        self.rank = rank
        self.data = [s for b in batches(rank, 6) for s in zip(*b)]

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        if self.rank == BAD and i == 12:
            time.sleep(30)  # the read stalls
        return self.data[i]


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    loader = DataLoader(Shard(rank), batch_size=4, num_workers=1, timeout=2)
    for step, (x, y) in enumerate(loader, 1):
        t0 = time.time()
        log_step(rank, step, len(loader), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
