# gen.py -- writes job/ of this golden case (run with python3 from this folder): flight-recorder
# dumps of a 4-rank job that did not fail, shaped like torch's FlightRecorder dump (version 2.4,
# with TORCH_NCCL_ENABLE_TIMING=1 so entries carry duration_ms). Every rank computes about
# 200 ms between all-reduces, except rank 2, which needs 320 ms; the others wait for it inside
# each all-reduce, so their durations are long and rank 2's are short. Ranks 0 and 1 are
# written as JSON, ranks 2 and 3 as protocol-2 and protocol-4 pickles.
import json, os, pickle, random

random.seed(7)
N, WORK, SLOW_RANK, SLOW_WORK, XFER = 40, 0.200, 2, 0.320, 0.004
t0 = 1717000000.0
end = t0  # every rank leaves a collective at the same time
dumps = {r: [] for r in range(4)}
for k in range(1, N + 1):
    arrive = {}
    for r in range(4):
        w = (SLOW_WORK if r == SLOW_RANK else WORK) * random.uniform(0.95, 1.05)
        arrive[r] = end + w
    end = max(arrive.values()) + XFER
    for r in range(4):
        dumps[r].append({
            "record_id": k - 1, "pg_id": 0, "process_group": ["0", "default_pg"],
            "collective_seq_id": k, "p2p_seq_id": 0, "op_id": k,
            "profiling_name": "nccl:all_reduce", "time_created_ns": int(arrive[r] * 1e9),
            "input_sizes": [[1048576]], "input_dtypes": ["Float"],
            "output_sizes": [[1048576]], "output_dtypes": ["Float"],
            "state": "completed", "time_discovered_started_ns": None,
            "time_discovered_completed_ns": None, "retired": True, "timeout_ms": 600000,
            "is_p2p": False, "duration_ms": round((end - arrive[r]) * 1000, 3),
            "thread_name": "pt_autograd_0", "thread_id": "140000",
        })
os.makedirs("job", exist_ok=True)
for r in range(4):
    dump = {
        "version": "2.4", "comm_lib_version": "2.21.5",
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
        "pg_status": {"0": {"last_enqueued_collective": N, "last_started_collective": N,
                            "last_completed_collective": N}},
        "entries": dumps[r],
    }
    path = "job/nccl_trace_rank_%d" % r
    if r < 2:
        open(path, "w").write(json.dumps(dump, indent=1))
    else:
        open(path, "wb").write(pickle.dumps(dump, protocol=2 if r == 2 else 4))
