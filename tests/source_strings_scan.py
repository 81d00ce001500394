#!/usr/bin/env python3
"""source_strings_scan.py -- the message scan of tools/source_strings.py on a small made-up tree.

The coverage data (data/source-strings) is only as good as the scan that wrote it, and the data
tests check signals against the data, not the scan. This test builds a tiny package in a
temporary folder and checks what the scan extracts from it: a message-less assert and a bare
raise become rows of their own with their source line and function, a raised class is named as
Python prints it (through a package that re-exports it with a star import), a caught exception
raised again is left out, a long concatenation is read whole, and `extract --add` keeps the rows
of a release whose tree is gone while dropping a row the release scanned again no longer holds.

    python3 tests/source_strings_scan.py SOURCE_DIR
"""

import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import source_strings as ss  # noqa: E402

FILES = {
    "pkg/__init__.py": "from .api import *  # noqa\n",
    "pkg/api.py": "class JoinTimeoutError(RuntimeError):\n    pass\n",
    "pkg/run.py": '''from pkg import JoinTimeoutError


def wait_for_peers(peers, deadline):
    assert len(set(p.dtype for p in peers)) == 1
    assert deadline > 0, "the deadline must be positive"
    if not peers:
        raise JoinTimeoutError()
    try:
        peers[0].join()
    except OSError as e:
        raise e


class Base:
    def step(self):
        raise NotImplementedError


def explain(path, model_ok, optim_ok):
    err = f"Tried to load from {path} but found no metadata file."
    if model_ok:
        err += " However, a model folder exists."
        err += f" Pass {path}/model_0"
        err += " instead."
    elif optim_ok:
        err += " However, an optimizer folder exists."
        err += f" Pass {path}/optim_0"
        err += " instead."
    raise ValueError(err)
''',
}

failures = []
checked = [0]


def check(what, ok):
    checked[0] += 1
    if not ok:
        failures.append(what)


def rows_of(tree, path):
    return ss.scan_python(tree.read(path), path)


with tempfile.TemporaryDirectory() as tmp:
    for rel, text in FILES.items():
        os.makedirs(os.path.join(tmp, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(tmp, rel), "w", encoding="utf-8") as f:
            f.write(text)
    tree = ss.Tree(tmp)
    rows = rows_of(tree, "pkg/run.py")
    bare = [r for r in rows if r[0].startswith("bare-")]

    # a message-less assert: its source line, in its function
    check("bare assert row", ("bare-assert", "assert len(set(p.dtype for p in peers)) == 1", "",
                              "wait_for_peers") in bare)
    # an assert with a message stays a message row, not a bare one
    check("assert with a message is not bare",
          not any("deadline > 0" in r[1] for r in bare) and
          any(r[0] == "assert" and "the deadline must be positive" in r[1] for r in rows))
    # a bare raise of an imported class: named from the module it is imported from ...
    raised = [r for r in bare if r[0] == "bare-raise" and "JoinTimeoutError" in r[1]]
    check("bare raise row", len(raised) == 1 and raised[0][3] == "wait_for_peers")
    check("raised class named through its import", raised and raised[0][2] == "pkg.JoinTimeoutError")
    # ... and, once extract follows the package's star import, from the module defining it
    check("star import followed to the defining module",
          ss.defining_module(tree, "pkg", "JoinTimeoutError", {}) == "pkg.api")
    # raising a caught exception again is no row of its own
    check("raise e left out", not any(r[1] == "raise e" for r in bare))
    # an abstract method's bare raise names a builtin as Python prints it
    check("builtin bare raise", ("bare-raise", "raise NotImplementedError", "NotImplementedError",
                                 "step") in bare)
    # a message grown by += in one function is read whole, not cut at the depth limit
    msg = [r[1] for r in rows if r[0] == "raise" and r[1].startswith("ValueError: ")]
    check("long concatenation read whole",
          any(m.startswith("ValueError: Tried to load from {path} but found no metadata file.")
              and "{f" not in m for m in msg))

    # extract --add: a row of a release whose tree is gone stays; a row seen only in releases
    # scanned again that the scan no longer finds goes
    data = os.path.join(tmp, "data")
    os.makedirs(data)
    with open(os.path.join(data, "toy.paths"), "w", encoding="utf-8") as f:
        f.write("core\tpkg/*\n")
    old = [
        {"file": "pkg/run.py", "subsystem": "core", "first": "0.9", "last": "1.0", "kind": "raise",
         "template": "ValueError: kept from a release whose tree is gone", "line": "",
         "disposition": "", "function": ""},
        {"file": "pkg/run.py", "subsystem": "core", "first": "1.0", "last": "1.0", "kind": "raise",
         "template": "ValueError: {f'a garbled template'}", "line": "", "disposition": "",
         "function": ""},
    ]
    ss.DATA = data
    ss.write_tsv(os.path.join(data, "toy.tsv"), old, "toy")
    args = type("A", (), {"framework": "toy", "release": ["1.0=" + tmp], "add": True,
                          "skip_marked": None})()
    devnull = open(os.devnull, "w")
    saved, sys.stderr = sys.stderr, devnull
    try:
        ss.cmd_extract(args)
    finally:
        sys.stderr = saved
        devnull.close()
    got = {r["template"]: r for r in ss.read_tsv(os.path.join(data, "toy.tsv"))}
    check("--add keeps a row of a release not rescanned",
          "ValueError: kept from a release whose tree is gone" in got)
    check("--add drops a stale row of a rescanned release",
          "ValueError: {f'a garbled template'}" not in got)
    check("--add writes the new bare rows with their function",
          any(r["kind"] == "bare-assert" and r["function"] == "wait_for_peers"
              for r in got.values()))
    check("bare raise printed as its defining module's class",
          any(r["kind"] == "bare-raise" and r["line"] == "pkg.api.JoinTimeoutError"
              for r in got.values()))

for f in failures:
    print("FAIL: " + f)
print("%d passed, %d failed" % (checked[0] - len(failures), len(failures)))
sys.exit(1 if failures else 0)
