# gen_sets.py -- writes the flight-recorder dump sets of tests/data/frdump/sets/ (run with
# /usr/bin/python3 from this folder; the files it writes are committed).
#
# The shape is the writer's: torch/csrc/distributed/c10d/FlightRecorderDetail.hpp (dump_json:
# "entries" left out when empty, pg_status values as strings; dump_dict pickled as plain data with
# "entries" always present), dump versions 2.x, and torchcomms' hook, which writes the same. Every
# set is one hung job of 8 ranks on 2 nodes with four kinds of process group, as Megatron-style
# jobs have them: the default group (name "0", desc default_pg, ranks 0-7), tensor-parallel pairs
# {0,1} {2,3} {4,5} {6,7} (all named "1", as split groups share a name), expert-parallel pairs
# {0,2} {1,3} {4,6} {5,7} (named "2") and pipeline pairs {0,4} {1,5} {2,6} {3,7} (named "3", p2p
# only). Each rank's local process-group ids (an entry's pg_id, the keys of pg_status) differ from
# rank to rank: even ranks created tp, ep, pp in that order, odd ranks ep, pp, tp.
#
# Five iterations complete everywhere: per iteration two tp all_reduces, one ep all_to_all_single,
# a pipeline send/recv pair and a default-group all_reduce. In the sixth, ranks 3 and 6 (the two
# faulty ranks) never start: rank 2 and rank 7 wait in their first tp all_reduce for them; ranks 0,
# 1, 4 and 5 finish both tp all_reduces and wait in the ep all_to_all for ranks 2, 3, 6 and 7. So
# ranks 2 and 7 are behind in their ep groups only because they wait in tp for a faulty rank.
#
# Sets (file-name styles and formats vary, the job does not):
#   full-json-nccl     full dumps, JSON, nccl_trace_rank_N, with an NCCL log giving hosts and pids
#   full-pickle-dump   full dumps, pickle, _dump_N, and rank 5's dump empty (0 bytes)
#   active-json-trace  only-active dumps (every entry "scheduled"), JSON, trace_N.json
#   active-pickle-tc   only-active dumps, pickle, torchcomm_fr_trace_N, rank 5's dump empty
#   healthy-json       the five iterations only: no rank is behind
#   desync-pickle      the five iterations, then every rank in a default-group all_reduce but rank
#                      5, which runs all_gather there (pickle, _dump_N)
import json, os, pickle

N = 8
TP = [(0, 1), (2, 3), (4, 5), (6, 7)]
EP = [(0, 2), (1, 3), (4, 6), (5, 7)]
PP = [(0, 4), (1, 5), (2, 6), (3, 7)]
FAULTY = (3, 6)
HOST = ["node-a", "node-a", "node-a", "node-a", "node-b", "node-b", "node-b", "node-b"]


def group_of(pairs, r):
    return next(p for p in pairs if r in p)


def groups(r):
    tp, ep, pp = group_of(TP, r), group_of(EP, r), group_of(PP, r)
    g = {"default": ("0", "default_pg", list(range(N)), 0)}
    ids = {"tp": 1, "ep": 2, "pp": 3} if r % 2 == 0 else {"ep": 1, "pp": 2, "tp": 3}
    g["tp"] = ("1", "tp", list(tp), ids["tp"])
    g["ep"] = ("2", "ep", list(ep), ids["ep"])
    g["pp"] = ("3", "pp", list(pp), ids["pp"])
    return g


def trace(r, iterations, hung, desync=None):
    """The entries of rank r and its per-group (enqueued, started, completed)."""
    g = groups(r)
    seq = {k: 0 for k in g}
    p2p = {k: 0 for k in g}
    status = {k: [-1, -1, -1] for k in g}
    ents = []
    t = [1717000000000000000 + r * 1000]

    def add(kind, op, sizes, dtype, state, is_p2p=False, out=None):
        name, desc, ranks, pg_id = g[kind]
        if is_p2p:
            p2p[kind] += 1
        else:
            seq[kind] += 1
            st = status[kind]
            st[0] = seq[kind]
            if state in ("started", "completed"):
                st[1] = seq[kind]
            if state == "completed":
                st[2] = seq[kind]
        t[0] += 7_000_000
        e = {
            "record_id": len(ents), "pg_id": pg_id, "process_group": [name, desc],
            "thread_name": "pt_autograd_0", "thread_id": str(140000 + r),
            "collective_seq_id": seq[kind], "p2p_seq_id": p2p[kind], "op_id": len(ents) + 1,
            "profiling_name": op, "time_created_ns": t[0],
            "input_sizes": sizes, "input_dtypes": [dtype] * len(sizes),
            "output_sizes": out if out is not None else sizes,
            "output_dtypes": [dtype] * len(out if out is not None else sizes),
            "state": state, "time_discovered_started_ns": t[0] + 1000 if state != "scheduled" else None,
            "time_discovered_completed_ns": t[0] + 2000 if state == "completed" else None,
            "retired": state == "completed", "timeout_ms": 600000, "is_p2p": is_p2p,
        }
        if state == "completed":
            e["duration_ms"] = 1.25
        ents.append(e)

    pp_peer = [x for x in g["pp"][2] if x != r][0]
    for it in range(1, iterations + 1):
        add("tp", "nccl:all_reduce", [[1024, 4096]], "BFloat16", "completed")
        add("tp", "nccl:all_reduce", [[1024, 4096]], "BFloat16", "completed")
        add("ep", "nccl:all_to_all_single", [[2048, 64]], "BFloat16", "completed")
        if r < pp_peer:
            add("pp", "nccl:send %d->%d" % (0, 1), [[4, 1024]], "BFloat16", "completed", True)
        else:
            add("pp", "nccl:recv %d<-%d" % (1, 0), [[4, 1024]], "BFloat16", "completed", True)
        add("default", "nccl:all_reduce", [[1]], "Float", "completed")
    if desync is not None:  # every rank enters one more default-group collective; one differs
        add("default", "nccl:all_gather" if r == desync else "nccl:all_reduce", [[1]], "Float",
            "started")
    if hung and r not in FAULTY:
        tp_peer = [x for x in g["tp"][2] if x != r][0]
        if tp_peer in FAULTY:
            add("tp", "nccl:all_reduce", [[1024, 4096]], "BFloat16", "started")
        else:
            add("tp", "nccl:all_reduce", [[1024, 4096]], "BFloat16", "completed")
            add("tp", "nccl:all_reduce", [[1024, 4096]], "BFloat16", "completed")
            add("ep", "nccl:all_to_all_single", [[2048, 64]], "BFloat16", "started")
    return g, ents, status


def dump(r, hung, only_active, as_json, desync=None):
    g, ents, status = trace(r, 5, hung, desync)
    if only_active:
        ents = [dict(e, state="scheduled", time_discovered_started_ns=None)
                for e in ents if e["state"] != "completed"]
    pg_config = {name: {"name": name, "desc": desc, "ranks": "[%s]" % ", ".join(map(str, ranks))}
                 for name, desc, ranks, _ in g.values()}
    pg_status = {}
    for k, (name, desc, ranks, pg_id) in g.items():
        st = status[k]
        pg_status[str(pg_id)] = {"last_enqueued_collective": st[0],
                                 "last_started_collective": st[1],
                                 "last_completed_collective": st[2]}
    d = {"version": "2.10" if only_active else "2.4", "comm_lib_version": "2.21.5",
         "pg_config": pg_config, "pg_status": pg_status}
    if as_json:
        d["pg_status"] = {k: {a: str(b) for a, b in v.items()} for k, v in pg_status.items()}
        for e in ents:  # JSON writes 0 for times not discovered
            for key in ("time_discovered_started_ns", "time_discovered_completed_ns"):
                e[key] = e[key] or 0
        if ents:
            d["entries"] = ents
        return json.dumps(d).encode()
    d["entries"] = ents
    d["nccl_comm_state"] = {}
    return pickle.dumps(d, protocol=2)


def write_set(name, fmt, why, expect, hung=True, only_active=False, as_json=True, empty=(),
              log=False, desync=None):
    os.makedirs(os.path.join("sets", name), exist_ok=True)
    with open(os.path.join("sets", name, "expect.txt"), "w") as f:
        f.write("source: constructed -- flight-recorder dumps in the writer's format "
                "(tests/data/frdump/gen_sets.py): %s\n" % why)
        f.write("".join(line + "\n" for line in expect))
    for r in range(N):
        path = os.path.join("sets", name, fmt % r)
        with open(path, "wb") as f:
            if r not in empty:
                f.write(dump(r, hung, only_active, as_json, desync))
    if log:
        with open(os.path.join("sets", name, "nccl.log"), "w") as f:
            for r in range(N):
                f.write("%s:%d:%d [%d] NCCL INFO comm 0x7f%04x00 rank %d nranks %d cudaDev %d "
                        "nvmlDev %d busId %d000 commId 0x5a17c3 - Init COMPLETE\n"
                        % (HOST[r], 4100 + r, 4200 + r, r % 4, r, r, N, r % 4, r % 4,
                           18 + r % 4))


HUNG = ["fr culprits = 3 6", "culprit_ranks = 3 6", "culprit = 3", "top = nccl-hang-culprit-rank",
        "level >= likely", "fact job.fr_culprit = 3,6", "hang ~ rank 3 never joined collective",
        "rank 3 state = silent", "rank 6 state = silent", "rank 2 state = healthy"]
write_set("full-json-nccl", "nccl_trace_rank_%d",
          "full JSON dumps; ranks 3 and 6 never started the sixth iteration; an NCCL log gives "
          "each rank's host, pid and GPU",
          HUNG + ["fr missing-rank ~ rank 3 of PG 1 (tp) never enqueued collective 11 "
                  "(nccl:all_reduce) that rank 2 reached and waits in",
                  "fr missing-rank ~ rank 6 of PG 2 (ep) never enqueued collective 6",
                  "rank 3 host = node-a", "rank 6 host = node-b", "rank 6 pid = 4106",
                  "rank 6 cuda_dev = 2"], log=True)
write_set("full-pickle-dump", "_dump_%d",
          "full pickled dumps named _dump_N; rank 5's dump is empty", HUNG +
          ["fr empty-dump ~ rank 5 wrote an empty dump (_dump_5)",
           "fr missing-rank ~ rank 6 of PG 1 (tp) never enqueued collective 11"],
          as_json=False, empty=(5,))
write_set("active-json-trace", "trace_%d.json",
          "JSON dumps of only the entries not completed (all scheduled); the faulty ranks' dumps "
          "hold no entry", HUNG +
          ["fr missing-rank ~ rank 3 has nothing of PG 1 (tp) in flight while rank 2 waits in "
           "collective 11 (nccl:all_reduce)",
           "fr missing-rank ~ rank 6 has nothing of PG 2 (ep) in flight while rank 4 waits in "
           "collective 6"], only_active=True)
write_set("active-pickle-tc", "torchcomm_fr_trace_%d",
          "pickled dumps of only the entries not completed, named as torchcomms' hook names "
          "them; rank 5's dump is empty", HUNG +
          ["fr empty-dump ~ rank 5 wrote an empty dump (torchcomm_fr_trace_5)",
           "fr missing-rank ~ rank 3 has nothing of PG 2 (ep) in flight while rank 1 waits"],
          only_active=True, as_json=False, empty=(5,))
write_set("healthy-json", "nccl_trace_rank_%d", "five complete iterations: nobody is behind",
          ["no fr", "culprit = null", "top = null", "no fact job.fr_missing", "no hang",
           "rank 3 state = healthy"],
          hung=False)
write_set("desync-pickle", "_dump_%d",
          "five complete iterations, then rank 5 runs all_gather where the others run all_reduce "
          "in the default group", ["fr culprits = 5", "culprit = 5", "top = collective-desync",
                                   "level >= likely", "fact job.fr_desync = 5",
                                   "fr op ~ rank 5 runs nccl:all_gather while ranks 0, 1, 2, 3, 4, 6 and 7 run",
                                   "hang ~ rank 5 issued nccl:all_gather", "rank 5 state = silent"],
          hung=False, as_json=False, desync=5)
