"""unpicklable-object -- after step 3 the ranks exchange their metrics dicts as Python objects;
rank 1's (SCN_BAD_RANK) dict also holds the lock of its metrics writer, which pickle cannot
serialise. SCN_OBJ_OP=gather (default): all_gather_object, where every rank pickles its own dict;
SCN_OBJ_OP=broadcast: broadcast_object_list from the bad rank. The bad rank raises a pickling
error before it sends anything; the others wait in the collective and lose their peer."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403

import threading  # noqa: E402

BAD = bad_rank(1)
OP = os.environ.get("SCN_OBJ_OP", "gather")


def exchange(rank, world, stats):
    if OP == "gather":
        out = [None] * world
        dist.all_gather_object(out, stats)
        return out
    objs = [stats if rank == BAD else None]
    dist.broadcast_object_list(objs, src=BAD)
    return objs


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 6)
    writer_lock = threading.Lock()
    for step, (x, y) in enumerate(data, 1):
        t0 = time.time()
        loss = train_step(ddp, opt, x, y)
        log_step(rank, step, len(data), loss, t0)
        if step == 3:
            stats = {"rank": rank, "step": step, "loss": float(loss)}
            if rank == BAD:
                stats["writer_lock"] = writer_lock  # slipped in with the writer's state
            exchange(rank, world, stats)
    done(rank)


if __name__ == "__main__":
    main()
