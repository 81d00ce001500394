# ddx facts lists the job model's readings from the registry (src/job/registry.c) and the culprit
# policy (src/job/culprit.c).
$ facts --list
? 0
> watchdog: NCCL's and gloo's collective timeouts per rank
>     pattern  job-watchdog-timeout: torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp
>     fact     job.stuck_rank (int)
> Culprit votes (src/job/culprit.c)
>   desync           precedence  20  it is alone in a different collective
>   table-echo       precedence  35  torchelastic's root cause only echoes its failure

$ facts
? 0
> stuck-rank: the one rank that printed no timeout

$ facts --markdown
? 0
> | name | type | from | reading |
> | job.hosts | int | distinct hosts of the ranks (NCCL Init COMPLETE lines, torchelastic's table) | hosts |

$ facts extra
? 2
> facts: takes no arguments

$ facts --help
? 0
> --markdown

# lint: every fact a reference's context or checks name is one ddx can produce (a job reading's,
# an extractor's, a config reader's, a derived one); a misspelt name is caught, known ones pass.
$ lint tests/data/kb-badfact
? 1
> test/b-root.md: fact 'job.stuck_ranks' is produced by nothing
> test/b-root.md: fact 'torch.verson' is produced by nothing
< 'job.hosts'
< 'nccl.rank.3.host'
< 'megatron_core.version'
< 'env.NCCL_DEBUG'
< 'torch.version'
