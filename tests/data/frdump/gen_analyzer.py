# gen_analyzer.py -- writes tests/data/frdump/analyzer/: the cases PyTorch's own flight-recorder
# analyzer tests build in code (test/distributed/flight_recorder/test_fr_analysis.py:
# FlightRecorderE2ETest.testBuildDB cases 1-6, FlightRecorderEventTest.test_match_one_event's event
# pairs and test_all_events, FlightRecorderOpBackendTest's backend prefixes), as two-rank dump
# files, each with the verdict PyTorch's analyzer reaches
# (torch/distributed/flight_recorder/components/{builder,utils,types}.py) written as the expect.txt
# of tests/job/run.sh. Run with /usr/bin/python3 from this folder; the files it writes
# are committed.
#
# The events are built as the test builds them (create_one_event: string sequence ids, dtypes as a
# plain string, "frames": [], no pg_id), in the template's dumps (pg_config "0" default_pg ranks
# [0, 1], and "1" sub_pg whose ranks are [0] on rank 0 and [1] on rank 1: two groups that share a
# name), version "2.8". Pickles of protocol 2 as the writer's, JSON for every third case.
import json, os, pickle, shutil

COLLECTIVES = sorted([
    "broadcast", "_broadcast_oop", "reduce", "_reduce_oop", "all_gather", "all_gather_single",
    "all_gather_v", "all_reduce", "_all_gather_base", "all_gather_into_tensor_coalesced",
    "reduce_scatter", "reduce_scatter_single", "reduce_scatter_v",
    "reduce_scatter_tensor_coalesced", "_reduce_scatter_base", "gather", "scatter", "all_to_all",
    "all_to_all_single", "all_to_all_v_single", "all_reduce_barrier", "barrier", "split",
    "new_window", "allreduce_coalesced", "ALLGATHER_coalesced", "REDUCE_SCATTER_coalesced"])


def event(name, pg, ins, outs, state="scheduled", seq=0, p2p=0, out_dtypes="float32"):
    return {"profiling_name": "nccl:" + name, "state": state, "process_group": list(pg),
            "input_sizes": ins, "output_sizes": outs, "input_dtypes": "float32",
            "output_dtypes": out_dtypes, "collective_seq_id": str(seq), "p2p_seq_id": str(p2p),
            "time_created_ns": 0, "frames": []}


def entry(record, name, ins, outs, state="completed", seq=0, p2p=0, out_dtypes="float32",
          pg=("0", "default")):
    e = event(name, pg, ins, outs, state, seq, p2p, out_dtypes)
    e.update({"record_id": record, "is_p2p": False})
    return e


def template(rank):
    return {"entries": [], "version": "2.8", "rank": rank,
            "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"},
                          "1": {"name": "1", "desc": "sub_pg", "ranks": "[%d]" % rank}}}


cases = []


def case(name, why, r0, r1, expect):
    cases.append((name, why, r0, r1, expect))


# ---- FlightRecorderE2ETest.testBuildDB ----
d0, d1 = template(0), template(1)
for d in (d0, d1):
    d["entries"] += [entry(0, "all_reduce", [[4, 4]], [[4, 4]]),
                     entry(1, "all_reduce", [[5, 5]], [[5, 5]], pg=("1", "sub_pg"))]
case("build-db-1", "matched all_reduce in the default group and in two groups both named 1 "
     "(3 collectives, every check passes)", d0, d1, ["no fr", "culprit = null"])

d0, d1 = template(0), template(1)
for d in (d0, d1):
    d["entries"].append(entry(0, "allreduce_coalesced", [[4, 4]], [[4, 4]]))
case("build-db-2", "matched allreduce_coalesced", d0, d1, ["no fr", "culprit = null"])

d0, d1 = template(0), template(1)
for d in (d0, d1):
    d["entries"] += [entry(0, "broadcast", [[4, 4]], [[4, 4]]),
                     entry(1, "broadcast", [[4, 4]], [[4, 4]]), entry(2, "coalesced", [[]], [[]])]
case("build-db-3", "matched slow-path coalesced broadcasts (one sequence number)", d0, d1,
     ["no fr", "culprit = null"])

d0, d1 = template(0), template(1)
d0["entries"] += [entry(0, "_broadcast_oop", [[4, 4]], [[4, 4]]),
                  entry(1, "_broadcast_oop", [[5, 5]], [[5, 5]]),
                  entry(2, "ALLGATHER_coalesced", [[]], [[]])]
d1["entries"] += [entry(0, "_broadcast_oop", [[4, 4]], [[4, 4]]),
                  entry(1, "_broadcast_oop", [[4, 4]], [[4, 4]]),
                  entry(2, "ALLGATHER_coalesced", [[]], [[]])]
case("build-db-4", "uneven coalesced broadcasts: the second _broadcast_oop fails the check "
     "(sizes differ, two ranks, no majority)", d0, d1,
     ["fr size ~ rank 0 has input sizes [[5,5]], rank 1 has input sizes [[4,4]]",
      "fact job.desync ~ no majority", "culprit = null"])

d0, d1 = template(0), template(1)
for d in (d0, d1):
    d["entries"] += [entry(0, "_reduce_oop", [[4, 4]], [[4, 4]]),
                     entry(1, "_reduce_oop", [[4, 4]], [[4, 4]]),
                     entry(2, "REDUCE_SCATTER_coalesced", [[]], [[]])]
case("build-db-5", "matched coalesced reduces", d0, d1, ["no fr", "culprit = null"])

d0, d1 = template(0), template(1)
d0["entries"].append(entry(0, "all_reduce", [[4, 4]], [[4, 4]]))
d1["entries"] += [entry(0, "all_reduce", [[4, 4]], [[4, 4]]),
                  entry(1, "_reduce_oop", [[4, 4]], [[4, 4]]),
                  entry(2, "_reduce_oop", [[4, 4]], [[4, 4]]),
                  entry(3, "REDUCE_SCATTER_coalesced", [[]], [[]])]
case("build-db-6", "an empty coalesced call on rank 0: rank 0 is the missing rank of "
     "_reduce_oop", d0, d1,
     ["fr missing-rank ~ rank 0 of PG 0 has no entry for nccl:_reduce_oop", "fr culprits = 0",
      "culprit = 0", "top = nccl-hang-culprit-rank", "level >= likely"])

# ---- FlightRecorderEventTest.test_match_one_event: event a on rank 0, event b on rank 1 ----
pg = ("0", "default")
e1 = event("all_reduce", pg, [[4, 4]], [[4, 4]], "scheduled", 1)
pairs = [
    ("event-same", "e1 with e1: fully matched", e1, e1, ["no fr"]),
    ("event-type", "e1 with e2: collective type mismatch", e1,
     event("all_gather", pg, [[4, 4]], [[4, 4]], "scheduled", 1),
     ["fr op ~ rank 0 runs nccl:all_reduce, rank 1 runs nccl:all_gather",
      "fact job.desync ~ no majority"]),
    ("event-alltoall", "e3 with e4: all_to_all, undecided (sizes not compared)",
     event("all_to_all", pg, [[4, 4]], [[4, 4]], "scheduled", 1),
     event("all_to_all", pg, [[4, 4]], [[4, 4]], "scheduled", 1), ["no fr"]),
    ("event-input-size", "e1 with e5: input sizes differ", e1,
     event("all_reduce", pg, [[5, 4]], [[4, 4]], "scheduled", 1, 1),
     ["fr size ~ rank 1 has input sizes [[5,4]]"]),
    ("event-output-size", "e1 with e6: output sizes differ", e1,
     event("all_reduce", pg, [[4, 4]], [[5, 4]], "scheduled", 1, 2),
     ["fr size ~ rank 1 has output sizes [[5,4]]"]),
    ("event-rule", "e7 with e7: an all_reduce whose output is not its input, on both ranks",
     event("all_reduce", pg, [[4, 4]], [[5, 4]], "scheduled", 2),
     event("all_reduce", pg, [[4, 4]], [[5, 4]], "scheduled", 2),
     ["fr size ~ every rank records nccl:all_reduce with input sizes [[4,4]] but output sizes "
      "[[5,4]]", "no fact job.desync", "culprit = null"]),
    ("event-state", "e1 with e9: state mismatch (scheduled against completed)", e1,
     event("all_reduce", pg, [[4, 4]], [[4, 4]], "completed", 1),
     ["fr state ~ rank 0 has collective 1 of PG 0 (nccl:all_reduce) scheduled while rank 1 "
      "completed it", "culprit = 0"]),
    ("event-dtype", "e10 with e9: dtype mismatch (float16 output against float32)",
     event("all_reduce", pg, [[4, 4]], [[4, 4]], "completed", 1, out_dtypes="float16"),
     event("all_reduce", pg, [[4, 4]], [[4, 4]], "completed", 1),
     ["fr dtype ~ rank 0 has output dtypes float16, rank 1 has output dtypes float32",
      "fact job.desync ~ output dtypes"]),
    ("event-gather", "e11 with e12: a gather's output lives on its root: fully matched",
     event("gather", pg, [[4, 4]], [[4, 4], [4, 4]], "completed", 1),
     event("gather", pg, [[4, 4]], [[]], "completed", 1, out_dtypes=""), ["no fr"]),
    ("event-gather-2", "e11 with e13: fully matched",
     event("gather", pg, [[4, 4]], [[4, 4], [4, 4]], "completed", 1),
     event("gather", pg, [[4, 4]], [[4, 4]], "completed", 1, out_dtypes=""), ["no fr"]),
]
for name, why, a, b, expect in pairs:
    d0, d1 = template(0), template(1)
    a = dict(a, record_id=0, is_p2p=False)
    b = dict(b, record_id=0, is_p2p=False)
    d0["entries"].append(a)
    d1["entries"].append(b)
    case(name, why, d0, d1, expect)

# ---- FlightRecorderEventTest.test_all_events: every collective with sizes that pass ----
d0, d1 = template(0), template(1)
for i, c in enumerate(COLLECTIVES):
    ins, outs = [[4, 4]], [[4, 4]]
    if c in ("reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced"):
        outs = [[ins[0][0] * 2]]
    if c in ("all_gather", "_all_gather_base", "all_gather_into_tensor_coalesced"):
        outs = [[16 * 2]]
    for d in (d0, d1):
        d["entries"].append(dict(event(c, pg, ins, outs, "scheduled", i + 1), record_id=i,
                                 is_p2p=False))
case("all-events", "every collective the analyzer knows, with sizes its rules accept (each its "
     "own sequence number): fully matched", d0, d1, ["no fr"])

# ---- FlightRecorderOpBackendTest: the analyzer takes the collective after any of the backends'
# prefixes (nccl, ncclx, gloo, xccl); the state mismatch of e1 with e9 under each other prefix ----
for backend in ("ncclx", "gloo", "xccl"):
    d0, d1 = template(0), template(1)
    for d, state in ((d0, "scheduled"), (d1, "completed")):
        e = dict(event("all_reduce", pg, [[4, 4]], [[4, 4]], state, 1), record_id=0, is_p2p=False)
        e["profiling_name"] = backend + ":all_reduce"
        d["entries"].append(e)
    case("backend-" + backend, "e1 with e9 under the %s backend's prefix: state mismatch" % backend,
         d0, d1, ["fr state ~ rank 0 has collective 1 of PG 0 (%s:all_reduce) scheduled while "
                  "rank 1 completed it" % backend, "culprit = 0"])

shutil.rmtree("analyzer", ignore_errors=True)
for i, (name, why, r0, r1, expect) in enumerate(cases):
    folder = os.path.join("analyzer", name)
    os.makedirs(folder)
    for r, d in ((0, r0), (1, r1)):
        path = os.path.join(folder, "dump_file_rank_%d" % r)
        if i % 3 == 2:
            open(path, "w").write(json.dumps(d, indent=1))
        else:
            open(path, "wb").write(pickle.dumps(d, protocol=2))
    with open(os.path.join(folder, "expect.txt"), "w") as f:
        f.write("source: constructed -- PyTorch's test/distributed/flight_recorder/"
                "test_fr_analysis.py builds this case in code: %s\n" % why)
        f.write("".join(line + "\n" for line in expect))
