#!/usr/bin/env python3
"""run.py -- the hostile-input set: ddx on inputs built to break it, under time and memory limits.

    python3 tests/hostile/run.py DDX [--no-limits] [--keep DIR]

scripts/hostile-inputs.py writes the inputs into a temporary folder ($H); tests/hostile/cases.t
says what ddx must do with each. Every command runs with its address space limited to 1 GiB
(ulimit -v) and a time limit (20 s unless the case sets one), so a memory or CPU bomb fails the
test instead of the machine. --no-limits drops the memory limit (AddressSanitizer reserves
terabytes of address space) and multiplies the time limits by 5.

cases.t, one directive a line (blank lines and # comments are skipped):
  % CMD        a shell command to prepare a case ($DDX is ddx, $H the inputs); not checked
  $ ARGS       ddx ARGS, through sh -c with $DDX and $H set (redirections allowed)
  ? N          its exit status
  > TEXT       text its standard output must contain      < TEXT   must not contain
  2> TEXT      text its standard error must contain       2< TEXT  must not contain
  !clean       no control character (other than newline) and no C1 code in either stream
  @ SECONDS    its time limit
  = NAME EXPR  keep the value of a Python expression over d (its standard output as JSON)
  j EXPR       a Python expression over d and v (the values kept) that must be true
"""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEM = 1 << 30


def main():
    args = sys.argv[1:]
    ddx = os.path.abspath(args[0])
    limits = "--no-limits" not in args
    keep = args[args.index("--keep") + 1] if "--keep" in args else None
    h = keep or tempfile.mkdtemp(prefix="ddx-hostile-")
    if keep:
        shutil.rmtree(keep, ignore_errors=True)
    t0 = time.time()
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "hostile-inputs.py"), h],
                   check=True)
    print("hostile: inputs written in %.1f s" % (time.time() - t0))
    env = dict(os.environ, DDX=ddx, H=h, TZ="UTC", LC_ALL="C", NO_COLOR="1")
    fails, ncmd, saved = 0, 0, {}
    cur = None

    def run(cmd, limit):
        def pre():
            if limits:
                resource.setrlimit(resource.RLIMIT_AS, (MEM, MEM))
        start = time.time()
        # a session of its own, so that a command past its limit is killed with every process
        # it started (sh, and ddx under it), never left running
        p = subprocess.Popen(["sh", "-c", '"$DDX" ' + cmd], cwd=ROOT, env=env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=pre, start_new_session=True)
        try:
            out, err = p.communicate(timeout=limit * (1 if limits else 5))
            return p.returncode, out, err, time.time() - start
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            return "timeout", out or b"", err or b"", time.time() - start

    def fail(msg):
        nonlocal fails
        fails += 1
        print("FAIL: ddx %s: %s" % (cur["cmd"], msg))
        for name in ("out", "err"):
            text = cur[name].decode("utf-8", "replace")
            if text:
                print("    std%s: %s" % (name, text[:1500].replace("\n", "\n    ")))

    def flush():
        """Runs the pending command (its limit may come after it) and checks it."""
        if cur is None or cur.get("done"):
            return
        cur["done"] = True
        code, out, err, took = run(cur["cmd"], cur["limit"])
        cur.update(code=code, out=out, err=err)
        print("  %-70.70s %5.2f s  exit %s" % (cur["cmd"], took, code))
        if code == "timeout":
            fail("ran past its time limit of %s s" % cur["limit"])
        for kind, text in cur["checks"]:
            check(kind, text)

    def check(kind, text):
        out, err = cur["out"].decode("utf-8", "replace"), cur["err"].decode("utf-8", "replace")
        if kind == "?" and str(cur["code"]) != text:
            fail("exit %s, expected %s" % (cur["code"], text))
        elif kind == ">" and text not in out:
            fail("standard output lacks: " + text)
        elif kind == "<" and text in out:
            fail("standard output has: " + text)
        elif kind == "2>" and text not in err:
            fail("standard error lacks: " + text)
        elif kind == "2<" and text in err:
            fail("standard error has: " + text)
        elif kind == "!clean":
            bad = re.search("[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]", out + err)
            if bad:
                fail("a control character reached the terminal: %r" % bad.group(0))
        elif kind in ("=", "j"):
            try:
                d = json.loads(out) if out.strip() else None
            except ValueError:
                d = None
            try:
                if kind == "=":
                    name, expr = text.split(" ", 1)
                    saved[name] = eval(expr, {"d": d, "v": saved})
                elif not eval(text, {"d": d, "v": saved}):
                    fail("not true: %s (values kept: %s)" % (text, saved))
            except Exception as e:  # a missing key is a failure of the case, not of the runner
                fail("%s: %s: %s" % (text, type(e).__name__, e))

    with open(os.path.join(ROOT, "tests", "hostile", "cases.t")) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            kind, _, text = line.partition(" ")
            if kind == "%":
                flush()
                subprocess.run(["sh", "-c", text], cwd=ROOT, env=env, check=False)
            elif kind == "$":
                flush()
                ncmd += 1
                cur = {"cmd": text, "limit": 20, "checks": []}
            elif kind == "@":
                cur["limit"] = float(text)
            else:
                cur["checks"].append((kind, text))
    flush()
    if not keep:
        shutil.rmtree(h, ignore_errors=True)
    print("hostile: %d commands, %d failures" % (ncmd, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
