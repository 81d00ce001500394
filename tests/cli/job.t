# The job model's facts from the launcher's and the process group's set-up lines
# (tests/data/job: lines in the formats of Lightning and torch/distributed/distributed_c10d.py).

# Two processes announced global rank 0 (and 1) while ranks 2 and 3 never did.
$ diagnose --json tests/data/job/lightning-duplicate.log
? 1
> "job.duplicate_rank": 0
> "id": "torchrun-slurm-step"

# The same healthy four-process start read twice (a console copy next to the file): no rank is
# missing, so nothing is duplicated.
$ diagnose --json tests/data/job/lightning-read-twice.log
? 0
< job.duplicate_rank

# Seven of eight processes checked in (the largest count printed): one process is missing.
$ diagnose --json tests/data/job/barrier-one-missing.log
? 1
> "job.init_missing": 1
> "id": "ddp-rank-stuck"

# Half the world missing is a missing node or a wrong world size, not one stuck process.
$ diagnose --json --all tests/data/job/barrier-node-missing.log
? 1
> "job.init_missing": 4
> "id": "nccl-world-size-mismatch"
< exactly one process of the world never checked in

# nccl-tests on one host that printed its table header and no result row: the first collective
# never completed; the same run with its rows is healthy.
$ diagnose --json tests/data/job/nccltests-stalled.log
? 1
> "job.nccltests_stalled": "nccl-tests listed 4 GPUs on one host
> "id": "nccl-p2p-unsupported"

$ diagnose --json tests/data/job/nccltests-ok.log
? 0
< job.nccltests_stalled

# A view that asks for exactly k times the elements its tensor holds reads a 1/k shard viewed
# whole (tensor parallelism); a view off by some other amount is an ordinary shape bug.
$ diagnose --json tests/data/job/view-shard.log
? 1
> "job.view_shard": 4
> "id": "shard-viewed-whole"

$ diagnose --json tests/data/job/view-not-shard.log
? 1
< job.view_shard
> "exception": "RuntimeError"

# The launcher's one failed rank exited with -6 (SIGABRT) while another rank reports a watchdog
# timeout: the watchdog took a waiting rank down, so that rank is not blamed.
$ diagnose --json tests/data/job/watchdog-abort-victim.log
? 1
> "culprit_rank": null

# Megatron's straggler reports give the spread between the slowest and fastest rank.
$ diagnose --json references/examples/silent-straggler/constructed-megatron-throttled-rank.log
? 1
> "straggler.etpt_spread": "0.118"
> "straggler.rtt_spread": "0.130"

# Some NCCL processes chose InfiniBand and others sockets: the transports of the job differ.
$ diagnose --json tests/corpus/nccl-041/log.txt
? 1
> "job.net_mixed": "IB and Socket"
> "id": "transports-differ"

# A bare NCCL system error on a single-node job: /dev/shm is read before the network transports.
$ diagnose tests/data/job/system-error-one-node.log
? 1
> nccl-shm-too-small  /dev/shm is too small

# A log with no failure line that ends on the line starting a phase: the job stalled there, and
# the phase names the usual causes (validation: uneven inputs or an epoch-boundary mismatch;
# a generation bar at 0%: generate() without synced GPUs; a Ray trainer's start: resources).
$ diagnose --json tests/data/job/stalled-validation.log
? 1
> "job.stalled_at": "validation"
> "id": "ddp-uneven-inputs-hang"
> "id": "ddp-hang-epoch-boundary"

$ diagnose --json tests/data/job/stalled-generation.log
? 1
> "job.stalled_at": "generation"
> "id": "generate-without-synced-gpus"

$ diagnose --json tests/data/job/stalled-ray-start.log
? 1
> "job.stalled_at": "ray-start"
> "id": "ray-placement-group-timeout"

# ... not when the run went on past that line, nor when an error came first (the error is the
# finding, the stall its consequence).
$ diagnose --json tests/data/job/validation-went-on.log
? 0
< job.stalled_at

$ diagnose --json tests/data/job/stalled-after-error.log
? 1
< job.stalled_at
> "id": "cuda-oom"

# A 1-D size mismatch where one size is a whole multiple of the other up to FSDP's padding
# (56124554 = 4 x 14031139 - 2): flat shards saved by one world size, read by another; two
# vocabulary sizes that merely differ are not.
$ diagnose --json tests/data/job/shard-ratio.log
? 1
> "job.shard_ratio": 4
> "id": "fsdp-state-dict-keys"

$ diagnose --json tests/data/job/shard-not-ratio.log
? 1
> "unrecognised": {
< job.shard_ratio

# A GPU monitor (nvidia-smi's process table, gpustat) that shows one GPU holding two big
# processes while another listed GPU holds none: ranks share a device. One process per GPU
# is the healthy picture.
$ diagnose --json tests/data/job/smi-shared.log
? 1
> "job.gpu_shared": 0
> "id": "nccl-duplicate-gpu"

$ diagnose --json tests/data/job/smi-one-each.log
? 0
< job.gpu_shared

# The launcher tore the workers down and no worker printed a traceback or an error: one died by
# a signal Python never saw (the OOM killer's SIGKILL); with a traceback first, it did not.
$ diagnose --json tests/data/job/ds-silent-kill.log
? 1
> "job.silent_teardown": "deepspeed"
> "id": "childfailed-exitcode-9"

$ diagnose --json tests/data/job/ds-kill-after-error.log
? 1
> "unrecognised": {
< job.silent_teardown

# NCCL set up its communicators and the log ends on a bar still at 0/N: the first work over
# them never completed (the P2P path's classic hang); a bar that completed is a healthy run.
$ diagnose --json tests/data/job/stalled-first-collective.log
? 1
> "job.stalled_at": "first-collective"
> "id": "nccl-p2p-unsupported"

$ diagnose --json tests/data/job/first-collective-done.log
? 0
< job.stalled_at

# A program that logs it is waiting for a Ray placement group and prints nothing after: the
# group was never granted; a wait followed by progress is healthy.
$ diagnose --json tests/data/job/stalled-pg-wait.log
? 1
> "job.stalled_at": "ray-start"
> "id": "ray-placement-group-timeout"

$ diagnose --json tests/data/job/pg-wait-done.log
? 0
< job.stalled_at

# The stalled line is shown cut at a character, not a byte: a long bar of multibyte blocks
# still gives valid UTF-8, so the JSON keeps where the fact came from.
$ diagnose --json tests/data/job/stalled-validation-long.log
? 1
> "job.stalled_at": "the log ends, with no error before it, on 'Validation DataLoader 0:
