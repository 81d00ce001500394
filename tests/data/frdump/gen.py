# gen.py -- writes the flight-recorder fixtures of tests/unit/test_frdump.c (run with
# /usr/bin/python3 from this folder). The same dump of rank 3 as JSON and as pickles of
# protocols 2, 4 and 5, plus pickles that must be refused. Shaped like torch's FlightRecorder
# dump (torch/csrc/distributed/c10d/FlightRecorder*.cpp): version 2.4, 4 ranks, one PG.
import json, pickle

def entry(i, seq, op, sizes, dtype, state, dur=None, p2p=False, p2pseq=0):
    e = {
        "record_id": i, "pg_id": 0, "process_group": ["0", "default_pg"],
        "collective_seq_id": seq, "p2p_seq_id": p2pseq, "op_id": i + 1,
        "profiling_name": op, "time_created_ns": 1717000000000000000 + i * 1000,
        "input_sizes": sizes, "input_dtypes": [dtype] * len(sizes),
        "output_sizes": sizes, "output_dtypes": [dtype] * len(sizes),
        "state": state, "time_discovered_started_ns": None,
        "time_discovered_completed_ns": None, "retired": state == "completed",
        "timeout_ms": 600000, "is_p2p": p2p,
        "thread_name": "pt_autograd_0", "thread_id": "140000",
    }
    if dur is not None:
        e["duration_ms"] = dur
    return e

entries = [
    entry(0, 1, "nccl:all_reduce", [[1024, 1024]], "Float", "completed", 1.5),
    entry(1, 2, "nccl:all_gather", [[4096], [4096]], "BFloat16", "completed", 0.25),
    entry(2, 2, "nccl:send 3->0", [[16]], "Long", "completed", None, True, 1),
    entry(3, 3, "nccl:_reduce_scatter_base", [[8, 128]], "Half", "started"),
    entry(4, 4, "nccl:all_reduce", [[1]], "Float", "scheduled"),
]
dump = {
    "version": "2.4",
    "comm_lib_version": "2.21.5",
    "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1, 2, 3]"}},
    "pg_status": {"0": {"last_enqueued_collective": 4, "last_started_collective": 3,
                        "last_completed_collective": 2}},
    "entries": entries,
    "nccl_comm_state": {"0": {"ncclCommInitRank": "ok"}},
    "a_future_key": [1, {"x": None}],
}
open("rank3.json", "w").write(json.dumps(dump, indent=1))
pdump = json.loads(json.dumps(dump))
frames = [{"name": "train_step", "filename": "train.py", "line": 42},
          {"name": "all_reduce", "filename": "distributed_c10d.py", "line": 2288}]
for e in pdump["entries"]:
    e["frames"] = frames          # one shared list: BINGET of a container in pickles
pdump["nccl_comm_state"]["raw"] = b"\x00\x01\x02"  # bytes (protocol 4/5 only)
for proto in (4, 5):
    open("rank3.p%d.pkl" % proto, "wb").write(pickle.dumps(pdump, protocol=proto))
del pdump["nccl_comm_state"]["raw"]  # protocol 2 pickles bytes with a REDUCE
open("rank3.p2.pkl", "wb").write(pickle.dumps(pdump, protocol=2))

class Evil:
    def __reduce__(self):
        return (print, ("this must never run",))
evil = {"version": "2.4", "entries": [Evil()]}
open("evil.p2.pkl", "wb").write(pickle.dumps(evil, protocol=2))
open("evil.p4.pkl", "wb").write(pickle.dumps(evil, protocol=4))
