"""dataloader-worker-error -- a DataLoader worker of rank 1 fails to decode a sample (a truncated
UTF-8 record) at step 3; the DataLoader re-raises it in the rank's main process as "Caught
UnicodeDecodeError in DataLoader worker process N" with the worker's original traceback, and the
other rank loses its peer in the next all-reduce."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

BAD = bad_rank(1)
BATCH, STEPS, BAD_STEP = 4, 8, 3


class Records(Dataset):
    def __init__(self, rank):
        self.rank = rank
        self.x = torch.cat([x for x, _ in batches(rank, STEPS, BATCH)])

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        raw = "caption: a dog on a beach".encode()
        if self.rank == BAD and i == (BAD_STEP - 1) * BATCH + 2:
            raw = raw[:-1] + b"\xe2\x82"  # the record was cut inside a multi-byte character
        raw.decode("utf-8")
        x = self.x[i]
        return x, x.sum(dim=0, keepdim=True) * 0.5


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    loader = DataLoader(Records(rank), batch_size=BATCH, num_workers=2)
    t0 = time.time()
    for step, (x, y) in enumerate(loader, 1):
        log_step(rank, step, len(loader), train_step(ddp, opt, x, y), t0)
        t0 = time.time()
    done(rank)


if __name__ == "__main__":
    main()
