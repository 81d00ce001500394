# The engine on the small test knowledge base (tests/data/kb), independent of the catalogue.
$ diagnose --no-builtin --kb tests/data/kb tests/data/kb/examples/t-root/one.log
? 1
> t-root  A root failure on one rank
> started: tests/data/kb/examples/t-root/one.log:2 (rank 1)
> Culprit rank: 1

# The differential also names a cause that prints the top finding's root line as a symptom of
# its own (t-alt reads a-root's line as a consequence), below the reporting threshold.
$ diagnose --no-builtin --kb tests/data/kb-alt tests/data/kb-alt/examples/a-root/one.log
? 1
> a-root  A jammed widget
> also possible
> t-alt (possible 0.17)

$ lint tests/data/kb-alt
? 0
> 4 references valid, 8 examples rank their reference first

# A weak reading of a failure line is still given when a candidate resting only on a launcher
# wrapper scores higher: that candidate is no reading of the line and is passed over.
$ diagnose --no-builtin --kb tests/data/kb-alt tests/data/weak/wrapper-outranks.log
? 1
> w-read  A weak reading of a vague failure line
< w-launch

# --kb may be given more than once: every folder's references are used.
$ diagnose --no-builtin --kb tests/data/kb --kb tests/data/kb-alt tests/data/kb/examples/t-root/one.log
? 1
> t-root  A root failure on one rank
$ diagnose --no-builtin --kb tests/data/kb --kb tests/data/kb-alt tests/data/kb-alt/examples/a-root/one.log
? 1
> a-root  A jammed widget
# an id in two folders is refused, naming both files as given
$ diagnose --no-builtin --kb tests/data/kb --kb tests/data/kb tests/data/kb/examples/t-root/one.log
? 2
> tests/data/kb/test/t-noise.md: id 't-noise' is given twice
# a folder with the wrong layout (a category folder, not <category>/<id>.md) is refused
$ diagnose --kb tests/data/kb/test tests/data/kb/examples/t-root/one.log
? 2
> tests/data/kb/test: no references in this folder
# an id that is a built-in reference is refused unless --override, which replaces it
$ diagnose --kb tests/data/kb-override tests/data/kb/examples/t-root/one.log
? 2
> tests/data/kb-override/cuda/cuda-oom.md: id 'cuda-oom' is a built-in reference; pass --override
$ refs --kb tests/data/kb-override --override cuda-oom
? 0
> A site's own reading of a CUDA out-of-memory error
# a --kb reference passes lint's checks (a source that is no link is refused)
$ diagnose --kb tests/data/kb-badsource tests/data/kb/examples/t-root/one.log
? 2
> tests/data/kb-badsource/test/t-badsource.md: source 'somewhere on a forum' is not a link

$ diagnose --no-builtin --kb tests/data/kb tests/data/kb/examples/t-symptom
? 1
> t-symptom

$ diagnose --no-builtin --kb tests/data/kb --json tests/data/kb/examples/t-root/one.log
? 1
> "schema": 1
> "culprit_rank": 1
> "level": "confirmed"

$ diagnose --no-builtin --kb tests/data/kb - < tests/data/kb/examples/t-root/two.log
? 1
> t-root

$ diagnose --no-builtin --kb tests/data/kb tests/data/kb/test/t-noise.md
? 0
> No known failure found

$ refs --no-builtin --kb tests/data/kb
? 0
> t-root
> t-symptom

$ refs --no-builtin --kb tests/data/kb --json
? 0
> "id": "t-root"
> "sources"

$ show --no-builtin --kb tests/data/kb t-root
? 0
> A root failure on one rank
> What happens
> 2 signals, 2 examples from public reports; 'ddx show --verbose t-root' lists them.
< Signals

# The patterns, the examples and the notes on where constructed examples come from are kept out
# of the default view and shown, with each example's path and source, when asked for.
$ show --no-builtin --kb tests/data/kb t-weak
? 0
> Read the lines around it.
> 1 example from public reports, 1 example constructed from the frameworks' own messages; 'ddx show --verbose t-weak' lists them and says what was searched for real logs.
< Generic failure seen
< searched the test corpus
< About the examples

$ show --no-builtin --kb tests/data/kb --verbose t-weak
? 0
> Read the lines around it.
> symptom   0.8  Generic failure seen
> examples/t-weak/one.log
> https://example.org/g
> constructed from the test's own wording of the generic line
> About the examples
> searched the test corpus, found none.

$ lint tests/data/kb
? 0
> 4 references valid, 6 examples rank their reference first

$ lint tests/data/kb-bad
? 1
> at least two sources are needed
> not b
> 1 example is constructed; add a '## About the examples' section
> release range 2.6..1.13 runs backwards

$ lint tests/data/no-such-dir
? 2
> is not a folder of references

# Timing: waiting ranks' timeouts printed eleven minutes before a root failure are not its
# consequences (no penalty); twenty seconds before, they are.
$ diagnose --no-builtin --kb tests/data/kb --all --verbose tests/data/timing/late-root.log
? 1
> t-symptom
< only consequences seen

$ diagnose --no-builtin --kb tests/data/kb --all --verbose tests/data/timing/near-root.log
? 1
> only consequences seen, while a root failure is at tests/data/timing/near-root.log:3, rank 2

# A peer's broken connection is printed by the victim of another rank's crash: when both come
# within moments (here interleaved torchrun output, victim first), the crash is the earliest
# root failure; when the log's own times put the broken connection twenty minutes earlier, it
# stays the first failure.
$ diagnose --verbose tests/data/timing/victim-line-first.log
? 1
> all-gather-dynamic-shapes  all_gather (or gather for metrics)
> the earliest root failure in the job (tests/data/timing/victim-line-first.log:23, rank 1)

$ diagnose --verbose tests/data/timing/victim-line-long-before.log
? 1
> remote-rank-crash  Another rank died
> the earliest root failure in the job (tests/data/timing/victim-line-long-before.log:1, rank 0)

# A failure line that no candidate explains well is still reported, weakly (a possible
# finding at its low confidence), rather than as nothing; a launcher summary alone is not.
$ diagnose --no-builtin --kb tests/data/kb tests/data/kb/examples/t-weak/one.log
? 1
> t-weak  A failure line several causes print
> possible, confidence 0.49

$ diagnose --no-builtin --kb tests/data/kb tests/data/weak/wrapper.log
? 0
> No known failure found

# ... nor is a line the harmless catalogue knows, though a reference reads it as a symptom.
$ diagnose --no-builtin --kb tests/data/kb tests/data/weak/harmless.log
? 0
> No known failure found

# a --kb pattern that does not compile is reported with its reference's file and signal (was:
# the signal alone, from Vectorscan, with no file)
$ diagnose --kb tests/data/kb-badpattern tests/data/kb/examples/t-root/one.log
? 2
> tests/data/kb-badpattern/test/t-badpattern.md: signal 'boom': PCRE2 rejects the pattern
