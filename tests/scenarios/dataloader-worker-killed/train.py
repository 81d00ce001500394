"""dataloader-worker-killed -- rank 1's DataLoader (2 worker processes) loses a worker: the
worker decoding the batch of step 4 is SIGKILLed, as the kernel's OOM killer does to a worker that
blows up decoding a huge sample (simulated: it kills itself, once the main process has trained on
the batches before, which an event shared with the workers tells it). The rank's main process
raises "DataLoader worker ... exited unexpectedly"; the other ranks lose their peer in the next
all-reduce."""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

BAD = bad_rank(1)
BATCH, STEPS, KILL_STEP = 4, 8, 4


class Shard(Dataset):
    def __init__(self, rank, consumed):
        self.rank, self.consumed = rank, consumed
        self.x = torch.cat([x for x, _ in batches(rank, STEPS, BATCH)])

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        if self.rank == BAD and i == (KILL_STEP - 1) * BATCH:
            self.consumed.wait(60)
            os.kill(os.getpid(), signal.SIGKILL)
        x = self.x[i]
        return x, x.sum(dim=0, keepdim=True) * 0.5


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    consumed = mp.Event()  # set when the steps before KILL_STEP are done
    loader = DataLoader(Shard(rank, consumed), batch_size=BATCH, num_workers=2)
    t0 = time.time()
    for step, (x, y) in enumerate(loader, 1):
        t_data = time.time() - t0
        log_step(rank, step, len(loader), train_step(ddp, opt, x, y), t0, data_time=t_data)
        if step == KILL_STEP - 1:
            consumed.set()
        t0 = time.time()
    done(rank)


if __name__ == "__main__":
    main()
