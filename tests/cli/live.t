# ddx watch, slurm, record and fleet: usage and bad input (their behaviour: tests/watch,
# tests/slurm, tests/fleet).
$ watch --help
? 0
> Usage: ddx watch [OPTIONS] [PATH...] [-- CMD [ARGS...]]
> --stall-after SEC
> --on-finding CMD
> docs/watch.md

$ watch
? 2
> give a command after --

$ watch --
? 2
> nothing after --: give the command to run

$ watch /nonexistent/logs
? 2
> /nonexistent/logs: No such file or directory

$ watch --pid 1 -- true
? 2
> --pid is for following files

$ watch --stall-after soon -- true
? 2
> --stall-after takes a positive number, not 'soon'

# options after -- belong to the command, and its exit status is kept
$ watch -o /dev/null -- sh -c 'echo --help; exit 7'
? 7
> --help
< Usage: ddx watch

$ watch -o /dev/null -- /nonexistent/launcher
? 127
> cannot run '/nonexistent/launcher'

$ slurm
? 2
> give a job id

$ slurm '12;reboot'
? 2
> not a Slurm job id

$ record
? 2
> give the JSON reports to store

$ record --db /nonexistent/dir/fleet.db tests/cli/live.t
? 2
> /nonexistent/dir/fleet.db: cannot open or write the fleet store

$ fleet
? 2
> give 'ingest DIR...' or 'report'

$ fleet report --since yesterday
? 2
> --since 'yesterday': give 7d, 12h, 30m or a date

$ fleet report --alpha 2
? 2
> --alpha takes a probability between 0 and 1
