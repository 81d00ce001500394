# The HTML report (diagnose --html / --format html) and the web commands' usage and errors.
# tests/data/html/markup.log holds "<script>" and '"><img onerror=' in its lines: the page
# shows them escaped and holds no script and no image of its own.

$ diagnose --format html tests/data/html/markup.log
? 1
> <!doctype html>
> Content-Security-Policy
> default-src 'none'
> cuda-oom
> &lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt; &quot;&gt;&lt;img src=x onerror=alert(1)&gt;
> &lt;script&gt;alert(2)&lt;/script&gt;
< <script
< <img
< script-src

$ diagnose --html /dev/null tests/data/html/markup.log
? 1
> cuda-oom  CUDA out of memory
< <!doctype html>

$ diagnose --format html examples/orpo-gather-shape-mismatch/
? 1
> all-gather-dynamic-shapes
> id="timeline"
> class="badge role-root"
> Culprit rank

$ diagnose --format html tests/scenarios/golden/healthy/console.log
? 0
> No known failure found

$ diagnose --format yaml examples/orpo-gather-shape-mismatch/
? 2
> --format takes text, json or html, not 'yaml'

$ diagnose --json --format html examples/orpo-gather-shape-mismatch/
? 2
> ask for two formats

$ diagnose --format json examples/orpo-gather-shape-mismatch/
? 1
> "schema": 1

$ diagnose --html /nonexistent-dir/r.html examples/orpo-gather-shape-mismatch/
? 2
> --html /nonexistent-dir/r.html: cannot create it

$ diagnose --help
? 0
> --html FILE
> --format FMT

$ serve --help
? 0
> Usage: ddx serve
> --port N
> --listen ADDR
> --max-upload MB
> 127.0.0.1

$ site --help
? 0
> Usage: ddx site [OPTIONS] DIR

$ serve --port 70000
? 2
> --port takes a number from 0 to 65535

$ serve --listen example.org
? 2
> --listen takes an IP address

$ serve --max-upload 0
? 2
> --max-upload takes a size in MiB

$ serve extra
? 2
> serve: takes no arguments

$ site
? 2
> site: give one DIR

$ site tests/data/html/markup.log
? 2
> is not a folder

# A failed job no reference explains: the page names its root error, never "nothing found".
$ diagnose --format html tests/data/unrec/unplaced-error.log
? 1
> <title>ddx: unrecognised failure</title>
> <h1>Unrecognised failure</h1>
> tests/data/unrec/unplaced-error.log:8 · rank 1
> KeyError: &#39;input_ids&#39;
< No known failure found
