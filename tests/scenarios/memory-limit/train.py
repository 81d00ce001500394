"""memory-limit -- the job runs under an address-space limit (scenario.json's ulimit_v_mb: ulimit
-v for the launcher and every rank). At step 3 rank 2 loads its whole shard into RAM for faster
epochs, far more than the limit allows: SCN_ALLOC=torch (default) allocates it as one tensor and
torch's CPU allocator fails ("DefaultCPUAllocator: can't allocate memory"), SCN_ALLOC=python
builds it as a bytes buffer and Python raises MemoryError. The other ranks lose their peer in
the next all-reduce."""
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from common import *  # noqa: E402,F401,F403
import torch  # noqa: E402

BAD = bad_rank(2)
CACHE_GB = 4  # larger than any limit the scenarios set


def cache_shard(rank):
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY or limit >= CACHE_GB << 30:
        sys.exit("memory-limit: run under an address-space limit below "
                 f"{CACHE_GB} GB (scenario.json ulimit_v_mb), or this would really take the RAM")
    log(f"[rank {rank}] caching shard in memory ({CACHE_GB} GB)")
    if os.environ.get("SCN_ALLOC", "torch") == "python":
        return bytearray(CACHE_GB << 30)
    return torch.empty(CACHE_GB << 28, dtype=torch.float32)


@record
def main():
    rank, world = setup()
    ddp, opt = make_ddp()
    data = batches(rank, 8)
    cache = None
    for step, (x, y) in enumerate(data, 1):
        if rank == BAD and step == 3:
            cache = cache_shard(rank)
        t0 = time.time()
        log_step(rank, step, len(data), train_step(ddp, opt, x, y), t0)
    del cache
    done(rank)


if __name__ == "__main__":
    main()
