# cases.t -- what ddx must do with each hostile input of scripts/hostile-inputs.py (format: the
# top of tests/hostile/run.py). Each command runs under a 1 GiB address-space limit and a time
# limit; most cases below failed on ddx before issue 22 (the note above each says how).

# ---- memory and CPU bombs -------------------------------------------------------------------

# a 40 KB .xz flight-recorder dump that expands to 250 MB of JSON: read up to the cap, a warning
# names the file and the limit, the log beside it is still diagnosed (was: 3 GB, or "JSON: out
# of memory" at 1 GiB after 12 s)
$ diagnose $H/fr-json-bomb
? 1
> cuda-oom
2> fr-json-bomb/nccl_trace_rank_0.xz: larger than 25165824 bytes, the limit for this kind of file
@ 10

# the same as a pickle (was: "out of memory", exit 2, no report)
$ diagnose $H/fr-pickle-bomb
? 1
> cuda-oom
2> fr-pickle-bomb/nccl_trace_rank_0.xz: larger than 25165824 bytes
@ 10

# configs nested 200,000 levels deep: refused before any parser slows down, the depth named
# (was: minutes, quadratic in the nesting)
$ diagnose $H/config-deep-yaml
? 1
> cuda-oom
2> config-deep-yaml/config.yaml:2: nested deeper than 64 levels; not read as a config
@ 5
$ diagnose $H/config-deep-json
? 1
> cuda-oom
2> config-deep-json/ds_config.json:1: nested deeper than 64 levels
@ 5

# YAML aliases that name 20^8 paths: walked at most 100,000 steps (was: minutes)
$ diagnose $H/config-aliases
? 1
> cuda-oom
@ 5

# a --kb reference nested as deep: a clear error naming the depth, at once (was: minutes)
$ diagnose --kb $H/kb-deep $H/utf16
? 2
2> kb-deep/cuda/deep-nesting.md
2> nested deeper than 64 levels
@ 5
$ diagnose --kb $H/kb-deep-indent $H/utf16
? 2
2> nested deeper than 64 levels
@ 5

# ---- ranks beyond the model ------------------------------------------------------------------

# a dump named _rank_70000, and one holding "rank": 65536: read (the model holds 2^20 ranks),
# never "out of memory" (was: exit 2 and no report)
$ diagnose $H/rank-70000
? 1
> cuda-oom
2< out of memory
$ diagnose $H/rank-65536
? 1
> cuda-oom
2< out of memory
# a line of rank 99999 in a log: read
$ diagnose $H/rank-prefix-99999
? 1
> cuda-oom

# ---- text that is not plain UTF-8 -------------------------------------------------------------

# the first 8 KB of the log are NULs (logrotate's copytruncate): read (was: "not text; skipped",
# exit 0); 3 MB of them too
$ diagnose $H/nul-lead
? 1
> cuda-oom
2< not text
$ diagnose $H/nul-lead-big
? 1
> cuda-oom
# 200 KB of NULs in the middle of the log: the failure line after them is read whole
$ diagnose $H/nul-pad
? 1
> cuda-oom
> torch.OutOfMemoryError: CUDA out of memory
# UTF-16 with a byte order mark, UTF-16BE without one, UTF-32, UTF-16 after NULs (was: skipped)
$ diagnose $H/utf16
? 1
> cuda-oom
$ diagnose $H/utf16be-nobom
? 1
> cuda-oom
$ diagnose $H/utf32
? 1
> cuda-oom
$ diagnose $H/utf16-nul-lead
? 1
> cuda-oom

# ---- damaged and other containers ------------------------------------------------------------

# a .tar.gz/.tar.xz/.tar.zst cut 20 KB after the failing rank's log: every member before the
# cut is read, the damage reported (was: no finding, exit 0: the failing rank's log was lost)
$ diagnose $H/trunc-tar-gz
? 1
> cuda-oom
> Culprit rank: 2
2> trunc-tar-gz/job.tar.gz:job/rank1.log: cut short by damage to the archive
2> truncated gzip stream
$ diagnose $H/trunc-tar-xz
? 1
> cuda-oom
2> truncated xz stream
$ diagnose $H/trunc-tar-zst
? 1
> cuda-oom
2> truncated zstd stream
# a zip member with a bad CRC: its lines are read, with a warning (was: dropped)
$ diagnose $H/zip-bad-crc
? 1
> cuda-oom
2> zip-bad-crc/job.zip:job/rank2.log: ZIP bad CRC
# bzip2 and lz4 streams, and tars in them (was: "not text; skipped")
$ diagnose $H/bz2
? 1
> cuda-oom
$ diagnose $H/lz4
? 1
> cuda-oom
$ diagnose $H/tar-bz2
? 1
> cuda-oom
$ diagnose $H/tar-lz4
? 1
> cuda-oom

# ---- unreadable files, names with escapes, ddx's own reports ----------------------------------

# rank 2's log is a broken link: listed as unreadable, never read as a rank that printed nothing
# (was: "rank 2, between them, printed nothing", culprit rank 2, exit 1)
$ diagnose $H/unreadable
? 3
< printed nothing
< Culprit rank: 2
2> unreadable/rank2.log: broken symbolic link
2> partial report
$ diagnose --json $H/unreadable
? 3
j d['unreadable_inputs'] == 1
j any(i['kind'] == 'unreadable' and i['ranks'] == [2] for i in d['inputs'])

# an archive member named with escape sequences (clear screen, a window title, a fake verdict):
# shown without a single control character (was: printed raw)
$ diagnose $H/escapes
? 1
!clean
$ diagnose --verbose $H/escapes
!clean

# an empty folder, a folder of broken links, a folder of binaries, a path that does not exist:
# exit 2 and a message, never "No known failure found in 0 inputs" and 0 (was: exit 0)
$ diagnose $H/empty
? 2
2> no input could be read
< No known failure
$ diagnose $H/only-unreadable
? 2
2> every file given is unreadable
$ diagnose $H/only-binary
? 2
2> no input could be read
$ diagnose $H/does-not-exist
? 2

# warnings go to standard error as they happen, never into the report on standard output (was:
# appended to the report on standard output)
$ diagnose $H/fr-json-bomb
< warning:
2> warning:
# --strict turns a warning into exit 2 (the report is still written)
$ diagnose --strict $H/trunc-tar-gz
? 2
> cuda-oom
2> --strict

# one bad path among good ones: the report of the others, and exit 3 (was: no report, exit 2)
$ diagnose $H/nul-lead $H/does-not-exist
? 3
> cuda-oom
2> does-not-exist
2> partial report

# a report saved into the job's folder is not read back as evidence on the next run (was: its
# quoted OOM line made a finding of a healthy rank's log)
% "$DDX" diagnose $H/utf16 > $H/saved-report/report.txt; "$DDX" diagnose --json $H/utf16 > $H/saved-report/report.json
$ diagnose $H/saved-report
? 0
> No known failure
2> saved-report/report.json: a report ddx wrote; not read as evidence
2> saved-report/report.txt: a report ddx wrote

# writing to a full disk fails loudly (exit 2), for every command
$ diagnose $H/utf16 > /dev/full
? 2
2> No space left on device
$ refs nccl > /dev/full
? 2
$ show cuda-oom > /dev/full
? 2
# refs with no match exits 1 (was: 0)
$ refs no-such-reference-anywhere
? 1
2> no reference matches

# ---- confidence ------------------------------------------------------------------------------

# corroborating evidence never lowers a finding: rank 2's log alone, then the whole job (the
# other ranks' timeouts and aborted communicators) (was: confirmed 0.82 alone, likely 0.71 with
# the whole job); the same for the cut archive
$ diagnose --json $H/plain-rank2
= alone d['diagnoses'][0]['confidence']
j d['diagnoses'][0]['id'] == 'cuda-oom'
$ diagnose --json $H/plain-job
j d['diagnoses'][0]['id'] == 'cuda-oom'
j d['diagnoses'][0]['level'] == 'confirmed'
j d['diagnoses'][0]['confidence'] >= v['alone']
$ diagnose --json $H/trunc-tar-gz
j d['diagnoses'][0]['id'] == 'cuda-oom'
j d['diagnoses'][0]['confidence'] >= v['alone']
# a plain CUDA OOM with no DeepSpeed anywhere: no DeepSpeed reading reaches likely (was:
# deepspeed-oom likely 0.61)
$ diagnose --json $H/plain-rank2
j all(x['level'] == 'possible' for x in d['diagnoses'][1:])
j [x['level'] for x in d['diagnoses'] if x['id'] == 'deepspeed-oom'] in ([], ['possible'])
# "Process 4242 has ... memory in use" in the OOM of rank 2, whose own pid is 4242 (NCCL's init
# line): not another process holding the GPU (was: the other-process-holds-gpu line counted)
$ diagnose --verbose $H/own-pid
> cuda-oom
< other-process-holds-gpu
# the flight-recorder summary claims only what was compared: a dump refused is not "every rank
# reached the same collectives" (was: said so with every dump refused)
$ diagnose $H/fr-json-bomb
> flight recorder (1 dump, 0 compared, 1 unreadable)
< reached the same collectives
< every rank reached
$ diagnose $H/fr-one-dump
> flight recorder (1 dump, 0 compared)
> nothing to compare
< every rank reached
$ diagnose $H/fr-snapshot
< every rank reached
< reached the same collectives

# ---- a long stretch without progress ----------------------------------------------------------

# the last step line at 09:08:50, the time limit at 11:01:00: said in a line (was: nothing)
$ diagnose $H/progress-gap
? 1
> no progress for 1 h 52 min before the time limit

# ---- scale ------------------------------------------------------------------------------------

# 100,000 ranks time out in one collective and one rank is silent: found in seconds, the table
# in a few lines (was: 500 s, dx_job_finish compared every rank with every other)
$ diagnose $H/ranks-100k
? 1
> Culprit rank: 77777
> 99999 ranks  timed out
@ 30
