"""exception-one-rank -- rank 2 (SCN_BAD_RANK) hits a Python exception in its data pipeline
(a malformed record); the other ranks wait in the next all-reduce and lose their peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import json  # noqa: E402

BAD = bad_rank(2)


def load_record(rank, step):
    text = '{"tokens": [1, 2, 3]}' if not (rank == BAD and step == 3) else '{"tokens": [1, 2, '
    return json.loads(text)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    for step, (x, y) in enumerate(data, 1):
        load_record(rank, step)
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
