"""exit-silent -- a data-validation helper quits the process when it meets a bad record: at step 4
rank 1 (SCN_BAD_RANK) calls sys.exit(1) (SCN_EXIT=sys, default) or os._exit(3) (SCN_EXIT=os, no
interpreter shutdown, no flush), with no traceback and no message. The other ranks lose their peer
in the next all-reduce."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)
HOW = os.environ.get("SCN_EXIT", "sys")


def check_record(rank, step):
    if rank == BAD and step == 4:
        if HOW == "os":
            os._exit(3)
        sys.exit(1)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    for step, (x, y) in enumerate(data, 1):
        check_record(rank, step)
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
