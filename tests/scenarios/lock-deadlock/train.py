"""lock-deadlock -- rank 1 runs a background metrics-flush thread; at step 3 the flush takes the
metrics lock and then the writer lock while the training loop, logging its step, takes the writer
lock and then the metrics lock (lock-order inversion). Both threads wait forever; rank 1 prints
nothing more and never joins step 3's all-reduce, so the other ranks time out there. The order of
events is forced, so the deadlock happens on every run."""
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

BAD = bad_rank(1)
metrics_lock, writer_lock = threading.Lock(), threading.Lock()
flush_has_metrics, loop_has_writer = threading.Event(), threading.Event()


def flush_metrics():
    with metrics_lock:
        flush_has_metrics.set()
        loop_has_writer.wait()
        with writer_lock:  # never granted: the loop holds it
            pass


def log_metrics_locked(step):
    with writer_lock:
        loop_has_writer.set()
        flush_has_metrics.wait()
        with metrics_lock:  # never granted: the flush thread holds it
            log(f"metrics of step {step} written")


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    for step, (x, y) in enumerate(data, 1):
        if rank == BAD and step == 3:
            threading.Thread(target=flush_metrics, daemon=True, name="metrics-flush").start()
            log_metrics_locked(step - 1)
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    done(rank)


if __name__ == "__main__":
    main()
