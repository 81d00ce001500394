# A failed job that no reference explains is named, never reported as "nothing found"
# (tests/data/unrec; the report format is docs/json.md's "unrecognised").

# Rank 1 raised its own exception; rank 0 was interrupted afterwards (an echo). The root error
# is rank 1's, it is not a finding, and the culprit is rank 1.
$ diagnose --json tests/data/unrec/unplaced-error.log
? 1
> "diagnoses": []
> "rank": 1,
> "line": 8,
> "text": "KeyError: 'input_ids'",
> "exception": "KeyError",
> "original": true,
> "culprit_rank": 1,
< "line": 12,

$ diagnose tests/data/unrec/unplaced-error.log
? 1
> Unrecognised failure: the job failed
> tests/data/unrec/unplaced-error.log:8 (rank 1)
< No known failure found

# Only echoes (both ranks interrupted): named, marked as not the rank's own failure, and no rank
# is blamed.
$ diagnose --json tests/data/unrec/echo-only.log
? 1
> "exception": "KeyboardInterrupt",
> "original": false,
> "culprit_rank": null,

# A failure a reference explains is a finding, and nothing is unrecognised; the error printed
# over a progress bar with carriage returns is read on its own, with its rank.
$ diagnose --json tests/data/unrec/cr-bar-error.log
? 1
> "unrecognised": null,
> "id": "ddp-unused-parameters",
> "culprit_rank": 1,

# A healthy run: nothing found, nothing unrecognised.
$ diagnose --json tests/golden/healthy-json/train.log
? 0
> "unrecognised": null,

# A traceback cut before its exception line (a poster's excerpt) still shows a failed job: its
# innermost frame is named.
$ diagnose --json tests/data/unrec/cut-traceback.log
? 1
> "text": "a traceback cut before its exception line; its innermost frame: File \"/opt/seg/models/backbone.py\", line 87, in forward",
> "line": 7,
> "original": true,

# A failure stated without an exception line (argparse's "PROG: error:", printed under a
# launcher) is named; it is not known to be the rank's own, so no rank is blamed for it.
$ diagnose --json tests/data/unrec/argparse-error.log
? 1
> "text": "train.py: error: the following arguments are required: --output_dir/--output-dir",
> "line": 3,
> "original": false,
> "culprit_rank": null,

# A hang leaves no error line: a stack dump of a live process (py-spy's, no rank) that no reference
# reads (the project's own barrier; a ZeRO-1/2 reduction would be deepspeed-zero-hang) is named
# with its main thread's innermost frame ...
$ diagnose --json tests/data/unrec/pyspy-hang.log
? 1
> "text": "the job hung: a stack dump of a live process, with no error; its innermost frame: wait_for_peers (myproject/sync/barrier.py:88)",
> "line": 4,

# ... and so is the poster's note that the output stopped.
$ diagnose tests/data/unrec/stall-note.log
? 1
> Unrecognised failure: the job failed
> the job hung, as a note in the inputs says (no error line): > the program freezes here
> tests/data/unrec/stall-note.log:5
< No known failure found
< This line echoes a failure elsewhere

# Only echoes: the text report says the failing process left no error in the inputs.
$ diagnose tests/data/unrec/echo-only.log
? 1
> This line echoes a failure elsewhere

# A healthy run's warnings that mention a hang, and NCCL's warning about an optional library it
# does without, are not a failure: nothing unrecognised.
$ diagnose --json tests/data/unrec/healthy-nccl-warn.log
? 0
> "unrecognised": null,

# A message-less assert whose source line is all the traceback prints is read only in the frame
# that raises it: the one-dtype assert of ZeRO-3's defragment names mixed parameter dtypes, the
# same assert in PyTorch's jagged_from_list is no DeepSpeed failure (an unrecognised one).
$ diagnose tests/firstlook/batch-4b/ds-001/log.txt
? 1
> deepspeed-zero3-mixed-dtype-allgather
$ diagnose --json tests/data/unrec/jagged-assert.log
? 1
> "diagnoses": []
> "exception": "AssertionError",
< deepspeed-zero3

# A Windows traceback cut inside the message of SyncBatchNorm's CPU-input check: the frame's
# backslashes are read as path separators ("\nn\modules" is no newline) and the source line of
# the raise still names the check.
$ diagnose tests/firstlook/batch-4a/ddp-003/log.txt
? 1
> syncbn-without-process-group
< Unrecognised failure

# A traceback cut after the source line of CPython's recvfds raise ("received %d items of
# ancdata") still names the descriptor-passing failure of DataLoader workers.
$ diagnose tests/firstlook/batch-4a/ddp-006/log.txt
? 1
> dataloader-too-many-open-files

# NCCL's IB completion error as a network plugin built from net_ib.cc prints it (its own name
# after "NET/IB", no blank before the colon), pasted inside a sentence.
$ diagnose tests/firstlook/batch-4a/nccl-005/log.txt
? 1
> nccl-ib-error

# DeepSpeed's two-configs refusal retyped in a question and cut after "deepspeed arguments".
$ diagnose tests/firstlook/batch-4b/ds-002/log.txt
? 1
> deepspeed-init-failed

# "Device index must not be negative" after a source line that takes the index from local_rank
# is a script started without a launcher (local_rank kept at -1); from any other index it is an
# unrecognised failure.
$ diagnose tests/firstlook/batch-4b/launch-003/log.txt
? 1
> launched-without-launcher
$ diagnose --json tests/data/unrec/negative-device-index.log
? 1
> "diagnoses": []
> "exception": "RuntimeError",

# Logs with no exception class that still state a failure. DeepSpeed's slot refusal retyped by
# its reporter (no quotes, the verb misspelt) is the launcher's slot check; the copy of a module
# to its device_ids ("All tensors must be on devices[0]: 0", quoted in a sentence) is DDP's
# device placement check; DGL's native record of a failed bind with its errno is named as an
# unrecognised failure.
$ diagnose tests/firstlook/batch-1b/launch-003/log.txt
? 1
> deepspeed-launcher-slot-not-found
$ diagnose tests/firstlook/batch-4b/ddp-001/log.txt
? 1
> ddp-setup-error
$ diagnose --json tests/firstlook/batch-4a/mx-001/log.txt
? 1
> "diagnoses": []
> "text": "/opt/dgl/src/rpc/network/tcp_socket.cc: 69: Failed bind on xxx.xx.xx.xxx:xxxx(ip+port), errno=99",

# The same replicate check in its older, lower-case wording (constructed: a torch 1.x traceback
# of DDP's single-process multi-device mode, the frames as replicate.py and comm.py print them).
$ diagnose tests/data/unrec/ddp-replicate-old.log
? 1
> ddp-setup-error
< Unrecognised failure

# Only a launcher's wrapper, printed without any rank's prefix (an excerpt that kept the last
# line alone): named, not as the rank's own failure, and no rank is blamed.
$ diagnose --json tests/data/unrec/unranked-wrapper.log
? 1
> "exception": "CalledProcessError",
> "original": false,
> "culprit_rank": null,
> "line": 4,

# Ray's repr of a task's failure ("RayTaskError(KeyError): ray::...") is an exception line and a
# wrapper: the task's own exception below it is the root; cut above it, the wrapper is named as
# an echo (constructed from Ray's format, python/ray/exceptions.py).
$ diagnose --json tests/data/unrec/ray-task-error.log
? 1
> "text": "KeyError: 'input_ids'",
> "original": true,
$ diagnose --json tests/data/unrec/ray-task-error-cut.log
? 1
> "exception": "RayTaskError",
> "original": false,

# Messages as posters quote them inside a sentence: wrapped in quotes, bold markers or
# backticks, cut after their first words or without their final period, in another release's
# wording. Each is read by its message family: a collective the backend lacks (any op, any
# backend, every release's form), the allocator's sentence cut before its sizes, flash-attn's
# refusal without its period, the coordination service under its newer proto package.
$ diagnose -q tests/data/unrec/quoted-backend-op.log
? 1
> pytorch-distributed-error

$ diagnose -q tests/data/unrec/quoted-oom-cut.log
? 1
> cuda-oom

$ diagnose -q tests/data/unrec/quoted-flash-no-period.log
? 1
> flash-attn-unsupported-gpu

$ diagnose -q tests/data/unrec/quoted-register-task.log
? 1
> jax-distributed-init-timeout

# A message quoted inside the poster's sentence (in backticks here) is read as a line of its
# own, on the sentence's line: the launcher's signal line, whose signal wants the message to end
# there, is named instead of "nothing found".
$ diagnose --json tests/data/unrec/quoted-span-prose.log
? 1
> "line": 1,
> "text": "torch.distributed.elastic.multiprocessing.api.SignalException: Process 1234 got signal: 15",
> "exception": "SignalException",

# A message quoted in backticks and cut after its first sentence's words (no period, nothing
# after it) is read by the reference that claims the whole message; the same words in a
# sentence that goes on are not.
$ diagnose -q tests/data/unrec/quoted-cut-weights-only.log
? 1
> checkpoint-weights-only-load

$ diagnose -q tests/data/unrec/prose-weights-only-healthy.log
? 0
< checkpoint-weights-only-load

# Prose that names the failure without the exception line is not the failure.
$ diagnose -q tests/data/unrec/prose-oom-healthy.log
? 0
< cuda-oom

# An exception's repr, as a logger or trainer prints a caught one (the class, then its
# arguments in parentheses), is the failure's own line: named, not "nothing found".
$ diagnose tests/data/unrec/exception-repr.log
? 1
> Unrecognised failure
> MisconfigurationException('You requested gpu
< No known failure found
