"""time-limit-sigterm -- a healthy but slow job (0.5 s per step, 30 steps) whose allocation ends:
the scheduler's time limit sends SIGTERM to the launcher (scenario.json's sigterm_after), which
shuts the workers down while they train. Nothing in training fails."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403



@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 30)
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        time.sleep(0.5)  # the real work of a step
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
