"""nan-onset -- a corrupt sample (an inf feature) in rank 1's shard makes that rank's loss nan at
step 4; no anomaly detection, nothing raises there. DDP averages the nan gradient into every
rank's update, so from step 5 on every rank's loss is nan too: the onset is on one rank, one step
earlier than on the others. SCN_ON_NAN=stop (default): the loop's guard raises after two
non-finite losses in a row on a rank (rank 1 first, the others then lose their peer);
SCN_ON_NAN=continue: the job trains on and finishes, as trainers without a guard do."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)
STOP = os.environ.get("SCN_ON_NAN", "stop") == "stop"


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    nonfinite = 0
    for step, (x, y) in enumerate(data, 1):
        if rank == BAD and step == 4:
            x[1, 3] = float("inf")  # a corrupt record in this rank's shard
        t0 = time.time()
        loss = train_step(ddp, opt, x, y)
        log_step(rank, step, len(data), loss, t0)
        nonfinite = nonfinite + 1 if not math.isfinite(float(loss)) else 0
        if STOP and nonfinite >= 2:
            raise FloatingPointError(f"loss is {float(loss)} for {nonfinite} consecutive steps "
                                     f"(step {step}); stopping")
    done(rank)


if __name__ == "__main__":
    main()
