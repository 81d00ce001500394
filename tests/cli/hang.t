# The question users ask of a hang, answered first in the text report: which ranks, on which
# host/GPU/pid, where they stand, how sure; and the flight recorder's section says how many dumps
# were read and compared.

# 8 ranks, full JSON dumps and an NCCL log with each rank's host and pid: ranks 3 and 6.
$ diagnose tests/data/frdump/sets/full-json-nccl
? 1
> Hang: ranks 3 (on node-a, GPU 3, pid 4103) and 6 (on node-b, GPU 2, pid 4106) hold up the others
>   where: rank 3 never joined collective 6 (nccl:all_to_all_single) of process group 2 (ep)
>   how sure: confirmed
>   read: 8 flight-recorder dumps, 8 compared
> flight recorder (8 dumps, 8 compared)
>   culprits: ranks 3, 6
< every rank reached the same collectives

# Only-active pickles named as torchcomms names them, one of them empty.
$ diagnose tests/data/frdump/sets/active-pickle-tc
? 1
> Hang: ranks 3 and 6 hold up the others
>   read: 8 flight-recorder dumps, 7 compared, 1 empty
> empty-dump: rank 5 wrote an empty dump (torchcomm_fr_trace_5)

# A healthy job's dumps: the claim that every rank reached the same collectives, and no lead.
$ diagnose tests/data/frdump/sets/healthy-json
? 0
> flight recorder (8 dumps, 8 compared)
>   every rank reached the same collectives with the same operations
< Hang:

# One dump alone compares nothing and claims nothing.
$ diagnose tests/data/frdump/sets/healthy-json/nccl_trace_rank_0
? 0
> flight recorder (1 dump, 0 compared)
> fewer than two readable dumps of one process group: nothing to compare
< every rank reached the same collectives

# A CUDA memory snapshot found beside the dumps is not counted as a dump.
$ diagnose tests/data/frdump/sets/healthy-json/nccl_trace_rank_0 tests/data/frdump/snapshot.pickle
? 0
> snapshot.pickle: a CUDA memory snapshot (torch.cuda.memory._dump_snapshot), not a flight-recorder dump
> flight recorder (1 dump, 0 compared)
< every rank reached the same collectives

# NCCL's RAS report: the rank behind in operation count, with its GPU, process and node.
$ diagnose tests/job/nccl-ras/behind-text/ras.txt
? 1
> Hang: rank 5 (on node-b, GPU 1, pid 51105) holds up the others
>   evidence: NCCL RAS: rank 5 (GPU 1, process 51105 on node-b) launched AllReduce operations only up to 1233

# fr_trace's output pasted into a ticket.
$ diagnose tests/job/fr-analyzer/fr-trace-tutorial/fr_trace.txt
? 1
> Hang: rank 1 holds up the others
>   evidence: flight-recorder analyzer: rank 1 did not join collective 5 (nccl:all_reduce) of group 0:default_pg

# A process NCCL's RAS report holds dead: the others hang on it, and the report leads with it.
$ diagnose tests/job/nccl-ras/dead-text/ras.txt
? 1
> Hang: rank 6 (on node-b, GPU 2, pid 61106) holds up the others
>   evidence: NCCL RAS: considered dead: process 61106 on node node-b
>   how sure: confirmed

# The JSON and the HTML report carry the same answer.
$ diagnose --json tests/data/frdump/sets/full-json-nccl
? 1
> "hang": {
> "rank": 6,
> "host": "node-b",
> "pid": 4106
> "where": "rank 3 never joined collective 6 (nccl:all_to_all_single) of process group 2 (ep)"
> "flight_recorder": "8 flight-recorder dumps, 8 compared"

$ diagnose --format html tests/data/frdump/sets/full-json-nccl
? 1
> <dt>Culprit rank</dt><dd><strong>rank 3</strong> on node-a · GPU 3 · pid 4103</dd>
> <dt>Also culprit</dt><dd><strong>rank 6</strong> on node-b · GPU 2 · pid 4106</dd>
> <dt>Where it stands</dt><dd>rank 3 never joined collective 6 (nccl:all_to_all_single) of process group 2 (ep)</dd>
> <dt>Dumps read</dt><dd>8 flight-recorder dumps, 8 compared</dd>

$ diagnose --format html tests/job/nccl-ras/dead-text/ras.txt
? 1
> <dt>The evidence</dt><dd>NCCL RAS: considered dead: process 61106 on node node-b (GPU 2), rank 6</dd>
