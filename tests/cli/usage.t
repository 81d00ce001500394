# Usage, help and errors: every command answers --help; bad usage exits 2 with a message.
$ --version
? 0
> ddx 0.1.0

$ --help
? 0
> diagnose
> Run 'ddx COMMAND --help'

$
? 2
> Usage: ddx COMMAND

$ frobnicate
? 2
> unknown command 'frobnicate'

$ diagnose --help
? 0
> Usage: ddx diagnose
> Exit status: 0 nothing found, 1 a finding or a failure no reference explains, 2 bad
> --json

$ refs --help
? 0
> Usage: ddx refs

$ show --help
? 0
> Usage: ddx show

$ lint --help
? 0
> Usage: ddx lint

$ eval --help
? 0
> --min-top1

$ diagnose
? 2
> give at least one PATH

$ diagnose --bogus x.log
? 2
> unknown or incomplete option '--bogus'

$ diagnose /nonexistent/rank3.log
? 2
> /nonexistent/rank3.log: No such file or directory

$ diagnose --color sometimes x
? 2
> --color takes auto, always or never

$ show no-such-reference
? 2
> no reference 'no-such-reference'

$ eval --min-top1 150 tests/data
? 2
> percentage between 0 and 100

$ diagnose --no-builtin tests/data/kb/examples/t-root/one.log
? 2
> --no-builtin needs --kb DIR
