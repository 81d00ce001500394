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
