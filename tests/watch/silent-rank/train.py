"""silent-rank -- three ranks print a step line every 0.1 s, with no collective in the loop (a
local pre-processing pass); rank 1 blocks for 4 s at step 10 (a stuck read), then goes on, and
every rank finishes. What `ddx watch` must see: rank 1 silent while ranks 0 and 2 progress."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "scenarios"))
from common import log, setup, teardown  # noqa: E402

STEPS = 40


def main():
    rank, world = setup()
    for step in range(1, STEPS + 1):
        t0 = time.time()
        if rank == 1 and step == 10:
            time.sleep(4.0)
        time.sleep(0.1)
        log(f"[rank {rank}] preprocess step {step}/{STEPS} step_time {time.time() - t0:.3f}s")
    log(f"[rank {rank}] preprocessing finished")
    teardown()


if __name__ == "__main__":
    main()
