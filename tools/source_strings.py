#!/usr/bin/env python3
"""source_strings.py -- list the messages a framework's source raises, asserts, logs or warns,
across releases, and record which ddx reference covers each.

An offline developer tool (Python 3 standard library only, no network). It reads source trees
that are already on the machine -- an unpacked release, a checkout, or a bare git directory and
a tag -- and writes one row per distinct message to data/source-strings/<framework>.tsv:

    file  subsystem  first  last  kind  template  line  disposition  function

`template` is the message with every computed part turned into a placeholder `{name}` (`{name:d}`
for an integer conversion, `{name:x}` hex, `{name:f}` float, `{name:p}` pointer; `{{` and `}}`
are literal braces). `line` is the source line a Python traceback prints for a `raise` or an
`assert`, which is what a reader still has when the message itself was cut. `first` and `last`
are the first and last of the scanned releases where the message exists unchanged.

Two kinds of row hold no message: `bare-assert` (an `assert cond` with no message) and
`bare-raise` (`raise X` or `raise X()` with no argument). A user's log shows them only as the
traceback's last frame, its source line and the bare exception name, so their `template` is that
source line (as Python prints it under the frame) and `function` names the function it is in.

`disposition` is a judgement:
  ref:<id>/<signal>[,<id>/<signal>...]   signals of the catalogue that match the filled message
  not-training-failure: <reason>          a message that does not report a failed training job
  gap: <note>                             a failure the catalogue does not read yet

Commands (run from the repository root):
  extract FRAMEWORK --release LABEL=TREE ...   scan the paths of data/source-strings/FRAMEWORK.paths
          [--add] [--skip-marked REGEX]        (TREE: a folder, or GITDIR@REV for a bare repository;
                                               --add: keep every row already in the data file and
                                               add what these releases hold, for releases scanned
                                               before whose trees are gone; --skip-marked: leave
                                               out a file whose text matches REGEX, the files a
                                               vendor's port of a release changed)
  judge FRAMEWORK [--ddx-cover PATH]           match every row with ddx's own engine (ddx-cover,
                                               built by CMake) and set the dispositions: a match
                                               claims the row, else the first rule of
                                               data/source-strings/FRAMEWORK.rules that applies
  doc [--check]                                write docs/coverage.md from every data file (with
                                               --check: fail when the committed file differs)
  cuts [--ddx-cover PATH] [--check]            the messages as posters cut them (after their
                                               first words, without their final period), each
                                               matched as judge matches messages; writes
                                               docs/cut-forms.md (with --check: fail when a
                                               framework's share still read is below its floor
                                               in tests/kb/cut-forms.floor, a floor fell, or the
                                               doc is stale)

How to add a framework: docs/coverage.md, section "Adding a framework".
"""

import argparse
import ast
import fnmatch
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "data", "source-strings")
COLUMNS = ["file", "subsystem", "first", "last", "kind", "template", "line", "disposition",
           "function"]
MAX_NAME = 40  # placeholder names are cut to this many characters
MIN_LETTERS = 8  # a template with fewer letters of literal text says nothing a signal could read


# ==== TSV ====================================================================================

def tsv_escape(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def tsv_unescape(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}.get(n, "\\" + n))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def read_tsv(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, encoding="utf-8") as f:
        header = None
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw or raw.startswith("#"):
                continue
            cells = raw.split("\t")
            if header is None:
                header = cells
                continue
            rows.append({k: tsv_unescape(v) for k, v in zip(header, cells)})
    return rows


def write_tsv(path, rows, framework):
    with open(path, "w", encoding="utf-8") as f:
        f.write("# %s: messages found in its source; written by tools/source_strings.py "
                "(see docs/coverage.md)\n" % framework)
        f.write("\t".join(COLUMNS) + "\n")
        for r in rows:
            f.write("\t".join(tsv_escape(r.get(k, "")) for k in COLUMNS) + "\n")


def read_table(path):
    """A tab-separated file of the tool's own (paths, rules): lists of cells, comments dropped."""
    out = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            raw = raw.rstrip("\n")
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            out.append([c.strip() for c in raw.split("\t") if c.strip() != ""])
    return out


# ==== versions ===============================================================================

def version_key(v):
    """Orders release labels: 2.4.2 < 2.10.0 < 2.10.0a0? no: a0/rc sort before the release."""
    parts = re.findall(r"\d+|[a-z]+", v.lower())
    key = []
    for p in parts:
        if p.isdigit():
            key.append((1, int(p)))
        else:
            key.append((0, p))  # a letter part (a0, rc1) sorts before what a number would
    return key


# ==== placeholders ===========================================================================

def esc_text(s):
    s = s.replace("{", "{{").replace("}", "}}")
    # a stringified macro argument (marked by literal_chain) is a placeholder named after it
    return re.sub("\x01(\\w+)\x02", r"{\1}", s)


def ph(expr, conv=""):
    """A placeholder for a computed part, named from its expression."""
    name = re.sub(r"\s+", "", expr)
    name = name.replace("{", "(").replace("}", ")").replace(":", ".")
    if len(name) > MAX_NAME:
        name = name[: MAX_NAME - 3] + "..."
    if not name:
        name = "_"
    return "{" + name + (":" + conv if conv else "") + "}"


PRINTF = re.compile(r"%([-+ #0]*)(\d+|\*)?(?:\.(\d+|\*))?(hh|h|ll|l|z|j|t|L|q|I64)?([diouxXeEfgGcspn%])")


def printf_conv(c):
    return {"d": "d", "i": "d", "u": "d", "o": "d", "x": "x", "X": "x", "e": "f", "E": "f",
            "f": "f", "g": "f", "G": "f", "p": "p", "c": "", "s": "", "n": ""}.get(c, "")


def apply_printf(fmt_text, args):
    """fmt_text: the literal format, already brace-escaped; args: placeholder names."""
    out, ai, pos = [], 0, 0
    for m in PRINTF.finditer(fmt_text):
        out.append(fmt_text[pos:m.start()])
        pos = m.end()
        if m.group(5) == "%":
            out.append("%")
            continue
        for star in (m.group(2), m.group(3)):
            if star == "*":
                ai += 1
        name = args[ai] if ai < len(args) else "arg%d" % ai
        ai += 1
        out.append(ph(name, printf_conv(m.group(5))))
    out.append(fmt_text[pos:])
    return "".join(out)


FMT_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def apply_format(fmt_raw, args, kwargs=None):
    """Python str.format / fmt::format: fmt_raw is the unescaped literal."""
    out, auto, pos = [], 0, 0
    kwargs = kwargs or {}
    for m in FMT_FIELD.finditer(fmt_raw):
        out.append(esc_text(fmt_raw[pos:m.start()]))
        pos = m.end()
        if m.group(0) == "{{":
            out.append("{{")
            continue
        if m.group(0) == "}}":
            out.append("}}")
            continue
        field = m.group(1).split("!")[0].split(":")[0]
        conv = m.group(1).split(":")[1][-1:] if ":" in m.group(1) else ""
        conv = {"d": "d", "x": "x", "f": "f", "e": "f", "g": "f"}.get(conv, "")
        if field == "":
            name = args[auto] if auto < len(args) else "arg%d" % auto
            auto += 1
        elif field.isdigit():
            name = args[int(field)] if int(field) < len(args) else "arg" + field
        else:
            name = kwargs.get(field, field)
        if name.startswith("\x00"):  # an argument that is itself a template
            out.append(name[1:])
        else:
            out.append(ph(name, conv))
    out.append(esc_text(fmt_raw[pos:]))
    return "".join(out)


def format_fields(t):
    """A constant kept to be formatted later: its %-conversions and {} fields as placeholders."""
    t = apply_printf(t, [])
    return re.sub(r"\{\{(\w*)\}\}", lambda m: ph(m.group(1) or "arg"), t)


def dollar_template(t):
    """string.Template's ${name} placeholders as the data's {name}."""
    return re.sub(r"\$\{\{?(\w+)\}?\}", r"{\1}", t)


def letters(template):
    text = re.sub(r"\{[^{}]*\}", "", template.replace("{{", "").replace("}}", ""))
    return sum(1 for c in text if c.isalpha())


# ==== Python =================================================================================

LOG_LEVELS = {"warning": "log-warning", "warn": "log-warning", "error": "log-error",
              "exception": "log-error", "critical": "log-error", "fatal": "log-error",
              "info": "log-info", "debug": "log-debug"}
BARE_EXC = re.compile(r"^[A-Z]\w*(Error|Exception|Exit|Interrupt|Failure|Timeout)$")
LOGGER_NAMES = re.compile(r"^(_?log(ger)?|_?LOG(GER)?|logging|_logger|log_|.*_logger|.*_log)$")


class PyScanner(ast.NodeVisitor):
    """Collects (kind, template, line) from one Python module."""

    def __init__(self, text):
        self.lines = text.splitlines()
        self.out = []
        self.scopes = [{}]  # name -> [(lineno, node)] string assignments in the enclosing function
        self.raised = set()  # ids of the exception calls of raise statements
        self.funcs = []  # the names of the enclosing functions, innermost last
        self.modules = {}  # exception class name -> the module that defines it (module_names)

    # -- expressions to templates --
    def template(self, node, depth=0):
        if depth > 6:
            return ph(ast.unparse(node))
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                return esc_text(node.value)
            return esc_text(str(node.value))
        if isinstance(node, ast.JoinedStr):
            parts = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    parts.append(esc_text(str(v.value)))
                elif isinstance(v, ast.FormattedValue):
                    conv = ""
                    if v.format_spec is not None:
                        spec = ast.unparse(v.format_spec)
                        conv = {"d": "d", "x": "x", "f": "f", "e": "f", "g": "f"}.get(
                            spec.rstrip("'\"")[-1:], "")
                    parts.append(ph(ast.unparse(v.value), conv))
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            # a chain a + b + c (or a message grown by += in one function) is left-deep: its
            # operands are read side by side, so a long chain does not reach the depth limit
            parts = []
            while isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                parts.append(node.right)
                node = node.left
            parts.append(node)
            return "".join(self.template(p, depth + 1) for p in reversed(parts))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and self.is_str(node.left):
            fmt = self.template(node.left, depth + 1)
            if isinstance(node.right, ast.Tuple):
                args = [ast.unparse(e) for e in node.right.elts]
            else:
                args = [ast.unparse(node.right)]
            return apply_printf(fmt, args)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "format" and isinstance(
                    f.value, ast.Constant) and isinstance(f.value.value, str):
                args = []
                for a in node.args:
                    t = self.template(a, depth + 1) if self.is_str(a) else None
                    args.append("\x00" + t if t is not None else ast.unparse(a))
                kw = {k.arg: ast.unparse(k.value) for k in node.keywords if k.arg}
                return apply_format(f.value.value, args, kw)
            if isinstance(f, ast.Name) and f.id == "str" and len(node.args) == 1:
                return ph(ast.unparse(node.args[0]))
            if isinstance(f, ast.Attribute) and f.attr == "join":
                return ph(ast.unparse(node))
        if isinstance(node, ast.Name):
            bound = self.lookup(node.id, node.lineno)
            if bound is not None and depth < 4:
                return self.template(bound, depth + 1)
        if isinstance(node, ast.Lambda):
            return self.template(node.body, depth + 1)
        return ph(ast.unparse(node))

    def is_str(self, node):
        if isinstance(node, ast.Constant):
            return isinstance(node.value, str)
        if isinstance(node, ast.JoinedStr):
            return True
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            return self.is_str(node.left) or self.is_str(node.right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            return node.func.attr == "format" and self.is_str(node.func.value)
        return False

    def lookup(self, name, lineno):
        for scope in reversed(self.scopes):
            if name in scope:
                best = None
                for ln, val in scope[name]:
                    if ln <= lineno:
                        best = val
                return best
        return None

    # -- scopes: string assignments of the enclosing function --
    def visit_FunctionDef(self, node):
        scope = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(
                    sub.targets[0], ast.Name) and self.is_str(sub.value):
                scope.setdefault(sub.targets[0].id, []).append((sub.lineno, sub.value))
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name) and isinstance(
                    sub.op, ast.Add) and self.is_str(sub.value):
                prev = scope.get(sub.target.id)
                if prev:
                    joined = ast.BinOp(left=prev[-1][1], op=ast.Add(), right=sub.value)
                    prev.append((sub.lineno, joined))
        self.scopes.append(scope)
        self.funcs.append(node.name)
        self.generic_visit(node)
        self.funcs.pop()
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    # -- statements and calls --
    def src_line(self, node):
        if 0 < node.lineno <= len(self.lines):
            return self.lines[node.lineno - 1].strip()
        return ""

    def add(self, kind, template, line=""):
        if template is None:
            return
        self.out.append((kind, template, line, ""))

    def add_bare(self, kind, node, exc_name=""):
        """A statement that prints no message of its own: its source line is the row, and for
        a raise the traceback's last line, the class as Python prints it, is its line."""
        src = self.src_line(node)
        if not src:
            return
        printed = ""
        if exc_name:
            head, _, last = exc_name.rpartition(".")
            mod = self.modules.get(head.split(".")[0] if head else last)
            if head and mod:  # module.Class: the module imported under that name
                printed = mod + head[len(head.split(".")[0]):] + "." + last
            elif head:
                printed = exc_name
            else:
                printed = (mod + "." + last) if mod else last
        self.out.append((kind, esc_text(src), printed, self.funcs[-1] if self.funcs else "<module>"))

    def visit_Assign(self, node):
        # a message kept in a variable or an attribute, used by code this scan does not follow
        # (an exception's message attribute, a module's format template)
        if self.is_str(node.value):
            t = self.template(node.value)
            if isinstance(node.value, ast.Constant):
                t = format_fields(t)
            if letters(t) >= 12 and " " in t:
                self.add("str", dollar_template(t))
        self.generic_visit(node)

    def visit_Return(self, node):
        # an exception class's __str__ returns the message Python prints after the class name
        if self.funcs and self.funcs[-1] == "__str__" and node.value is not None and \
                self.is_str(node.value):
            t = self.template(node.value)
            if letters(t) >= 12 and " " in t:
                self.add("str", t)
        self.generic_visit(node)

    def in_raise(self, node):
        return id(node) in self.raised

    def visit_Raise(self, node):
        exc = node.exc
        if isinstance(exc, ast.Call):
            self.raised.add(id(exc))
        if isinstance(exc, ast.Call) and (exc.args or exc.keywords):
            name = ast.unparse(exc.func).split(".")[-1]
            arg = exc.args[0] if exc.args else exc.keywords[0].value
            t = self.template(arg)
            self.add("raise", esc_text(name) + ": " + t, self.src_line(node))
        elif (isinstance(exc, ast.Call) and BARE_EXC.match(ast.unparse(exc.func).split(".")[-1])) \
                or (isinstance(exc, (ast.Name, ast.Attribute))
                    and BARE_EXC.match(ast.unparse(exc).split(".")[-1])):
            # raise X / raise X(): the exception's name alone (a name that is a caught exception
            # being raised again, `raise e`, is not a class name and is left out)
            cls = exc.func if isinstance(exc, ast.Call) else exc
            self.add_bare("bare-raise", node, ast.unparse(cls))
        self.generic_visit(node)

    def visit_Assert(self, node):
        if node.msg is not None:
            self.add("assert", "AssertionError: " + self.template(node.msg), self.src_line(node))
        else:
            self.add_bare("bare-assert", node)
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        fname = ast.unparse(f)
        attr = f.attr if isinstance(f, ast.Attribute) else (f.id if isinstance(f, ast.Name) else "")
        owner = ast.unparse(f.value) if isinstance(f, ast.Attribute) else ""
        args = node.args
        if fname in ("warnings.warn", "warn", "warn_once") and args:
            self.add("warn", self.template(args[0]))
        elif attr in LOG_LEVELS and isinstance(f, ast.Attribute) and (
                LOGGER_NAMES.match(owner.split(".")[-1]) or owner.endswith("logger")) and args:
            t = self.template(args[0])
            if len(args) > 1 and "%" in t:
                t = apply_printf(t, [ast.unparse(a) for a in args[1:]])
            self.add(LOG_LEVELS[attr], t)
        elif attr in ("log_single_rank", "log_on_each_pipeline_stage") and len(args) >= 3 and \
                isinstance(args[1], ast.Attribute) and args[1].attr.lower() in LOG_LEVELS:
            # Megatron's helpers: log_single_rank(logger, logging.ERROR, "...", *args)
            t = self.template(args[2])
            if len(args) > 3 and "%" in t:
                t = apply_printf(t, [ast.unparse(a) for a in args[3:]])
            self.add(LOG_LEVELS[args[1].attr.lower()], t)
        elif attr.endswith("_log_and_throw") and len(args) >= 2:
            name = ast.unparse(args[0]).split(".")[-1]
            self.add("raise", esc_text(name) + ": " + self.template(args[1]), self.src_line(node))
        elif attr == "__init__" and owner.startswith("super(") and args and self.is_str(args[0]):
            # an exception class passing its message to its base: super().__init__("...")
            t = self.template(args[0])
            if letters(t) >= 12 and " " in t:
                self.add("str", t)
        elif (fname == "print" or attr == "add_log_entry") and args and self.is_str(args[0]):
            # text written straight to the terminal: a plain print, or bitsandbytes' CUDA-setup
            # log, whose entries are printed as they are when the setup fails
            self.add("print", self.template(args[0]))
        elif re.match(r"^torch\._check(_\w+)?$", fname) and len(args) >= 2:
            self.add("check", self.template(args[1]), self.src_line(node))
        elif attr in ("deprecated", "_deprecated") and args and self.is_str(args[0]):
            # @deprecated("...") prints its text as a warning when the function is called
            self.add("warn", self.template(args[0]))
        elif attr in ("_p_assert", "p_assert") and len(args) >= 2:
            self.add("assert", "AssertionError: " + self.template(args[1]), self.src_line(node))
        elif attr == "_raise_assert_with_print" and args:
            self.add("raise", "AssertionError: " + self.template(args[0]), self.src_line(node))
        elif args and self.is_str(args[0]) and not self.in_raise(node) and re.search(
                r"(Error|Exception)$", attr):
            # an exception built here and raised elsewhere (returned, stored, passed on)
            self.add("raise", esc_text(attr) + ": " + self.template(args[0]), self.src_line(node))
        elif args and self.is_str(args[0]) and re.search(r"_error$|_warn(ing)?$", attr):
            # a helper that builds or reports a message: _error("..."), rank_zero_warn("...")
            self.add("warn" if "warn" in attr else "raise", self.template(args[0]),
                     self.src_line(node))
        self.generic_visit(node)


def module_names(tree, path):
    """Where each exception class a module can raise is defined: name -> dotted module, from
    the module's own classes and its `from X import Y` lines (relative ones resolved against
    path). Python prints a raised class as module.Name unless it is a builtin."""
    parts = path[:-3].split("/") if path.endswith(".py") else []
    here = ".".join(parts[:-1] if parts and parts[-1] == "__init__" else parts)
    package = parts[:-1]
    names = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names[node.name] = here
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 else package
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for alias in node.names:
                if mod and alias.name == "*":
                    names.setdefault("*", []).append(mod)  # a star import: followed on demand
                elif mod:
                    names[alias.asname or alias.name] = mod
    return names


def scan_python(text, path=""):
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    s = PyScanner(text)
    s.modules = module_names(tree, path)
    s.visit(tree)
    return s.out


# ==== C and C++ ==============================================================================

def strip_comments(text):
    """Comments become spaces (newlines kept); string and char literals are kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                elif text[j] == "\n":
                    break
                j += 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if m:
                end = text.find(")" + m.group(1) + '"', i)
                end = n if end < 0 else end + len(m.group(1)) + 2
                out.append(text[i:end])
                i = end
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out).replace("\\\n", "  ")


def after_literal(text, i):
    """text[i] opens a string or character literal; returns the index after its closing quote."""
    c, j, n = text[i], i + 1, len(text)
    while j < n and text[j] != c:
        if text[j] == "\\":
            j += 1
        j += 1
    return j + 1


def balanced(text, start):
    """text[start] is '('; returns (index after the matching ')', [top-level args])."""
    depth, i, n = 0, start, len(text)
    args, cur = [], start + 1
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            i = after_literal(text, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[cur:i])
                return i + 1, [a.strip() for a in args if a.strip() != ""]
        elif c == "<" and depth >= 1:
            pass
        elif c == "," and depth == 1:
            args.append(text[cur:i])
            cur = i + 1
        i += 1
    return n, []


def split_top(expr, sep):
    """Splits expr on sep at nesting depth 0, outside literals."""
    parts, depth, i, cur, n = [], 0, 0, 0, len(expr)
    while i < n:
        c = expr[i]
        if c == '"' or c == "'":
            i = after_literal(expr, i)
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and expr.startswith(sep, i):
            if sep == "+" and (expr.startswith("++", i) or (i > 0 and expr[i - 1] == "+")):
                i += 1
                continue
            if sep == "<<" and expr.startswith("<<=", i):
                i += 3
                continue
            parts.append(expr[cur:i])
            i += len(sep)
            cur = i
            continue
        i += 1
    parts.append(expr[cur:])
    return [p.strip() for p in parts]


C_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "", "a": "",
         "e": "", "?": "?"}


def c_unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            out.append(C_ESC.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


LITERAL = re.compile(r'(?:u8|L|u|U)?"((?:[^"\\\n]|\\.)*)"|R"([^(\s]*)\((.*?)\)\2"', re.S)
PRI_MACRO = re.compile(r"^PRI([diouxX])(8|16|32|64|PTR|MAX)$")


def literal_chain(expr):
    """When expr is only string literals (and PRIxNN macros), their raw text joined; else None."""
    pos, out, e = 0, [], expr.strip()
    while pos < len(e):
        while pos < len(e) and e[pos].isspace():
            pos += 1
        if pos >= len(e):
            break
        m = LITERAL.match(e, pos)
        if m:
            out.append(c_unescape(m.group(1)) if m.group(1) is not None else m.group(3))
            pos = m.end()
            continue
        m = re.match(r"[A-Za-z_]\w*", e[pos:])
        if m and PRI_MACRO.match(m.group(0)):
            out.append("l" + PRI_MACRO.match(m.group(0)).group(1))
            pos += m.end()
            continue
        if m and out and not e[pos + m.end():].lstrip().startswith("("):
            # a macro that stands for a literal between literals ("Call to " name " failed")
            out.append("\x01" + m.group(0) + "\x02")
            pos += m.end()
            continue
        m2 = re.match(r"#\s*([A-Za-z_]\w*)", e[pos:])
        if m2:  # a macro argument stringified in a macro body: #call
            out.append("\x01" + m2.group(1) + "\x02")
            pos += m2.end()
            continue
        return None
    return "".join(out) if out else None


class CScanner:
    """Collects (kind, template, line) from one C or C++ file."""

    CHECKS = {
        # name: (kind, index of the first message argument, style)
        "TORCH_CHECK": ("check", 1, "concat"),
        "TORCH_CHECK_VALUE": ("check", 1, "concat"),
        "TORCH_CHECK_TYPE": ("check", 1, "concat"),
        "TORCH_CHECK_INDEX": ("check", 1, "concat"),
        "TORCH_CHECK_LINALG": ("check", 1, "concat"),
        "TORCH_CHECK_NOT_IMPLEMENTED": ("check", 1, "concat"),
        "TORCH_CHECK_ARG": ("check", 2, "concat"),
        "TORCH_CHECK_WITH": ("check", 2, "concat"),
        "REDUCER_CHECK": ("check", 2, "concat"),
        "TORCH_UCC_LOG_ERROR": ("log-error", 1, "concat"),
        "CAFFE_THROW": ("throw", 0, "concat"),
        "recordError": ("str", 0, "fmt"),
        "CAFFE_ENFORCE": ("check", 1, "concat"),
        "AT_ERROR": ("throw", 0, "concat"),
        "TORCH_INTERNAL_ASSERT": ("internal-assert", 1, "assert"),
        "C10_THROW_ERROR": ("throw", 1, "concat"),
        "C10D_THROW_ERROR": ("throw", 1, "concat"),
        "TORCH_WARN": ("warn", 0, "concat"),
        "TORCH_WARN_ONCE": ("warn", 0, "concat"),
        "C10D_ERROR": ("log-error", 0, "fmt"),
        "C10D_WARNING": ("log-warning", 0, "fmt"),
        "C10D_INFO": ("log-info", 0, "fmt"),
        "C10D_DEBUG": ("log-debug", 0, "fmt"),
        "fmt::format": ("str", 0, "fmt"),
        "c10::str": ("str", 0, "concat"),
        "WARN": ("nccl-warn", 0, "printf"),
        "INFO": ("nccl-info", 1, "printf"),
    }
    CALL = re.compile(r"(?<![\w:.>])(" + "|".join(re.escape(k) for k in CHECKS) + r")\s*\(")
    THROW = re.compile(r"\bthrow\s+(?:std::|c10::|::)?(\w+)\s*\(")
    STREAM = re.compile(r"(?<![\w:])(?:LOG|VLOG|LOG_IF|LOG_EVERY_N|LOG_FIRST_N|C10_LOG_FIRST_N|"
                        r"C10_LOG_EVERY_N)\s*\(\s*(\w+)[^;]*?\)\s*<<")
    ASSIGN = re.compile(r'(?<![\w.>])(\w+)(?:\[\])?\s*(\+?=)\s*((?:(?:u8|L|u|U)?"(?:[^"\\\n]|\\.)*"\s*)+);')
    PIECE = re.compile(r'(?:\breturn\s+|\.append\(\s*)((?:(?:u8|L|u|U)?"(?:[^"\\\n]|\\.)*"\s*)+)[;)]')
    SSTREAM = re.compile(r'(?<![\w.>:])(?:ss|oss|os|stream|msg|message|out|buf|err|errMsg|'
                         r'error_msg|str|s)\s*<<\s*(?=(?:u8|L)?")')
    LEVELS = {"INFO": "log-info", "WARNING": "log-warning", "ERROR": "log-error",
              "FATAL": "log-error", "DFATAL": "log-error"}

    def __init__(self, text, path):
        self.text = strip_comments(text)
        self.path = path
        self.out = []

    def expr(self, e, depth=0, at=0):
        """One C++ expression (an argument) as a template."""
        e = e.strip()
        if depth > 5:
            return ph(e)
        lit = literal_chain(e)
        if lit is not None:
            return esc_text(lit)
        parts = split_top(e, "+")
        if len(parts) > 1 and any(literal_chain(p) is not None or p.startswith(
                ("c10::str", "std::string(", "fmt::format")) for p in parts):
            return "".join(self.expr(p, depth + 1, at) for p in parts)
        m = re.match(r"^(c10::str|::c10::str|std::string|fmt::format|c10::detail::formatLogMessage"
                     r"|formatLogMessage|std::to_string|c10::to_string)\s*\(", e)
        if m:
            end, args = balanced(e, m.end() - 1)
            if end == len(e):
                name = m.group(1).split("::")[-1]
                if name in ("str", "string"):
                    return "".join(self.expr(a, depth + 1, at) for a in args)
                if name in ("format", "formatLogMessage"):
                    return self.fmt(args, depth + 1, at)
                if name == "to_string" and args:
                    return ph(args[0])
        if re.match(r"^[A-Za-z_]\w*$", e) and e not in ("__FILE__", "__LINE__", "__func__"):
            bound = self.resolve(e, at)
            if bound is not None:
                return self.expr(bound, depth + 1, at)
        if e in ("__FILE__", "__LINE__"):
            return "{" + e + "}"
        m = re.match(r"^C10_STRINGIZE\((__FILE__|__LINE__)\)$", e)
        if m:
            return "{" + m.group(1) + "}"
        return ph(re.sub(r"\.c_str\(\)$", "", e))

    def resolve(self, name, at):
        """The string expression last assigned to local name before offset at (same function,
        at most 150 lines up), or None."""
        start = max(0, self.text.rfind("\n", 0, max(0, at - 12000)))
        window = self.text[start:at]
        pat = re.compile(r"(?:\b(?:std::string|auto|const\s+auto|const\s+std::string|auto&&|"
                         r"std::string_view)\s*&?\s+)?\b" + re.escape(name) + r"\s*(=|\()")
        best = None
        for m in pat.finditer(window):
            if m.group(1) == "(":
                if not re.match(r"\s*(std::string|auto|const)", window[max(0, m.start() - 20):m.start()][-20:]) \
                        and "string" not in window[max(0, m.start() - 25):m.start()]:
                    continue
                end, args = balanced(window, m.end() - 1)
                if len(args) == 1:
                    best = args[0]
                continue
            if window.startswith("==", m.end() - 1):
                continue
            semi = self.stmt_end(window, m.end())
            best = window[m.end():semi]
        if best is None:
            return None
        best = best.strip()
        if literal_chain(best) is not None or '"' in best or best.startswith(("c10::str", "fmt::")):
            return best
        return None

    @staticmethod
    def stmt_end(text, pos):
        depth, i, n = 0, pos, len(text)
        while i < n:
            c = text[i]
            if c == '"' or c == "'":
                i = after_literal(text, i)
                continue
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth < 0:
                    return i  # the statement was the last part of an enclosing expression
            elif c == ";" and depth <= 0:
                return i
            i += 1
        return n

    def concat(self, args, depth, at):
        return "".join(self.expr(a, depth, at) for a in args)

    def fmt(self, args, depth, at):
        if not args:
            return ""
        lit = literal_chain(args[0])
        if lit is None:
            return self.concat(args, depth, at)
        names = []
        for a in args[1:]:
            t = self.expr(a, depth + 1, at)
            names.append("\x00" + t if not re.match(r"^\{[^{}]*\}$", t) else t[1:-1])
        return apply_format(lit, names)

    def printf(self, args, depth, at):
        if not args:
            return ""
        lit = literal_chain(args[0])
        if lit is None:
            return self.concat(args, depth, at)
        return apply_printf(esc_text(lit), [a for a in args[1:]])

    def scan(self):
        t = self.text
        for m in self.CALL.finditer(t):
            name = m.group(1)
            kind, first, style = self.CHECKS[name]
            end, args = balanced(t, m.end() - 1)
            msg = args[first:]
            if style == "assert":
                cond = re.sub(r"\s+", " ", args[0]) if args else ""
                tail = self.concat(msg, 0, m.start())
                tpl = (esc_text(cond) + ' INTERNAL ASSERT FAILED at "{__FILE__}":{__LINE__}, '
                       "please report a bug to PyTorch. " + tail)
                self.out.append((kind, tpl.rstrip(), ""))
                continue
            if not msg:
                if name.startswith("TORCH_CHECK") and args:
                    cond = re.sub(r"\s+", " ", args[0 if name != "TORCH_CHECK_WITH" else 1])
                    self.out.append((kind, "Expected " + esc_text(cond) + " to be true, but got false.", ""))
                continue
            if style == "fmt":
                tpl = self.fmt(msg, 0, m.start())
                if name.startswith("C10D_"):
                    tpl = "[c10d] " + tpl
            elif style == "printf":
                tpl = self.printf(msg, 0, m.start())
            else:
                tpl = self.concat(msg, 0, m.start())
            self.out.append((kind, tpl, ""))
        for m in self.PIECE.finditer(t):
            # a message returned or appended piece by piece: return "..."; msg.append("...");
            lit = literal_chain(m.group(1))
            if lit is not None:
                self.out.append(("str", esc_text(lit), ""))
        for m in self.ASSIGN.finditer(t):
            # a message, or part of one, kept in a variable: std::string msg = "..." "...";
            lit = literal_chain(m.group(3))
            if lit is not None:
                self.out.append(("str", esc_text(lit), ""))
        for m in self.SSTREAM.finditer(t):
            # a message written into a string stream: ss << "..." << x << "...";
            stop = self.stmt_end(t, m.end())
            parts = split_top(t[m.end():stop], "<<")
            if any(literal_chain(p) is not None for p in parts):
                tpl = "".join(self.expr(p, 0, m.start()) for p in parts if p)
                self.out.append(("str", tpl, ""))
        for m in self.THROW.finditer(t):
            end, args = balanced(t, m.end() - 1)
            if args:
                self.out.append(("throw", self.concat(args[:1], 0, m.start()), ""))
        for m in self.STREAM.finditer(t):
            kind = self.LEVELS.get(m.group(1), "log-debug" if m.group(0).startswith("VLOG") else "log-info")
            stop = self.stmt_end(t, m.end())
            parts = split_top(t[m.end():stop], "<<")
            tpl = "".join(self.expr(p, 0, m.start()) for p in parts if p)
            self.out.append((kind, tpl, ""))
        return self.out


def scan_c(text, path):
    return CScanner(text, path).scan()


# ==== trees ==================================================================================

class Tree:
    """A source tree: a folder, or a bare git directory at a revision (GITDIR@REV)."""

    def __init__(self, spec):
        self.git, self.rev, self.dir = None, None, None
        if "@" in spec and not os.path.isdir(spec):
            self.git, self.rev = spec.rsplit("@", 1)
        else:
            self.dir = spec
        self._files = None

    def files(self):
        if self._files is None:
            if self.git:
                out = subprocess.run(["git", "--git-dir", self.git, "ls-tree", "-r", "--name-only",
                                      self.rev], capture_output=True, text=True, check=True).stdout
                self._files = out.split("\n")
            else:
                found = []
                for base, _dirs, names in os.walk(self.dir):
                    for nm in names:
                        found.append(os.path.relpath(os.path.join(base, nm), self.dir))
                self._files = found
        return [f for f in self._files if f]

    def read(self, path):
        if self.git:
            r = subprocess.run(["git", "--git-dir", self.git, "show", self.rev + ":" + path],
                               capture_output=True, check=True)
            return r.stdout.decode("utf-8", "replace")
        with open(os.path.join(self.dir, path), encoding="utf-8", errors="replace") as f:
            return f.read()


def load_paths(framework):
    """data/source-strings/<framework>.paths: 'subsystem<TAB>glob' lines; subsystem '!' leaves
    the paths out."""
    rules = []
    for cells in read_table(os.path.join(DATA, framework + ".paths")):
        if len(cells) >= 2:
            rules.append((cells[0], cells[1]))
    return rules


def subsystem_of(path, rules):
    for sub, glob in rules:
        if fnmatch.fnmatchcase(path, glob):
            return None if sub == "!" else sub
    return None


SCANNERS = {".py": "py", ".c": "c", ".cc": "c", ".cpp": "c", ".cu": "c", ".h": "c", ".hpp": "c",
            ".cuh": "c"}


def defining_module(tree, mod, name, cache, depth=0):
    """The module that defines class name, starting from the module it is imported from: a
    package that re-exports it (its __init__ imports it from a submodule) is followed."""
    key = (id(tree), mod, name)
    if key in cache:
        return cache[key]
    cache[key] = mod
    files = set(tree.files())
    base = mod.replace(".", "/")
    for path in (base + ".py", base + "/__init__.py"):
        if path not in files or depth > 4:
            continue
        try:
            names = module_names(ast.parse(tree.read(path)), path)
        except (SyntaxError, subprocess.CalledProcessError):
            break
        found = names.get(name)
        if found and found != mod:
            cache[key] = defining_module(tree, found, name, cache, depth + 1)
        elif not found:
            for star in names.get("*", []):
                deeper = defining_module(tree, star, name, cache, depth + 1)
                if deeper != star or star_defines(tree, star, name):
                    cache[key] = deeper
                    break
        break
    return cache[key]


def star_defines(tree, mod, name):
    """Whether module mod defines class name itself."""
    base = mod.replace(".", "/")
    for path in (base + ".py", base + "/__init__.py"):
        if path in set(tree.files()):
            try:
                body = ast.parse(tree.read(path)).body
            except (SyntaxError, subprocess.CalledProcessError):
                return False
            return any(isinstance(n, ast.ClassDef) and n.name == name for n in body)
    return False


def cmd_extract(a):
    rules = load_paths(a.framework)
    skip = re.compile(a.skip_marked) if a.skip_marked else None
    releases = []
    for spec in a.release:
        label, _, tree = spec.partition("=")
        releases.append((label, Tree(tree)))
    releases.sort(key=lambda r: version_key(r[0]))
    old_rows = read_tsv(os.path.join(DATA, a.framework + ".tsv"))
    old = {(r["file"], r["kind"], r["template"], r.get("function", "")): r for r in old_rows}
    found = {}  # (file, kind, template, function) -> {releases, line, subsystem}
    labels = {spec.partition("=")[0] for spec in a.release}
    if a.add:
        # the rows of releases scanned before stay, with the releases they were seen in; a row
        # seen only in releases scanned again now is dropped unless the scan finds it again
        for key, r in old.items():
            if r["first"] in labels and r["last"] in labels:
                continue
            found[key] = {"rel": {r["first"], r["last"]}, "line": r["line"], "sub": r["subsystem"]}
    defined = {}  # defining_module's cache
    for label, tree in releases:
        n = skipped = 0
        for path in tree.files():
            ext = os.path.splitext(path)[1]
            if ext not in SCANNERS:
                continue
            sub = subsystem_of(path, rules)
            if sub is None:
                continue
            text = tree.read(path)
            if skip and skip.search(text):
                skipped += 1
                continue
            rows = scan_python(text, path) if SCANNERS[ext] == "py" else scan_c(text, path)
            n += 1
            full = [row[1] for row in rows if row[0] != "str"]
            for row in rows:
                kind, tpl, line = row[:3]
                func = row[3] if len(row) > 3 else ""
                if kind == "bare-raise" and "." in line:
                    mod, _, cls = line.rpartition(".")
                    line = defining_module(tree, mod, cls, defined) + "." + cls
                if kind == "str" and any(tpl.strip() in t for t in full):
                    continue  # a message kept in a variable that a check or log already holds
                tpl = tpl.strip()
                if letters(tpl) < MIN_LETTERS and letters(line) < MIN_LETTERS:
                    continue
                key = (path, kind, tpl, func)
                e = found.setdefault(key, {"rel": set(), "line": line, "sub": sub})
                newest = not e["rel"] or version_key(label) >= max(
                    (version_key(v) for v in e["rel"]))
                e["rel"].add(label)
                if line and newest:
                    e["line"] = line  # the newest release's source line
        print("%s: %d files%s" % (label, n, ", %d left out as marked" % skipped if skipped else ""),
              file=sys.stderr)
    # messages assembled across statements or functions, recorded by hand from the source
    for m in read_tsv(os.path.join(DATA, a.framework + ".manual")):
        key = (m["file"], m["kind"], m["template"], m.get("function", ""))
        e = found.setdefault(key, {"rel": set(), "line": m.get("line", ""),
                                   "sub": subsystem_of(m["file"], rules) or "other"})
        e["rel"].update([m["first"], m["last"]])
    order = [r[0] for r in releases]
    rows = []
    for (path, kind, tpl, func), e in found.items():
        rel = sorted(e["rel"], key=version_key)
        prev = old.get((path, kind, tpl, func), {})
        rows.append({"file": path, "subsystem": e["sub"], "first": rel[0], "last": rel[-1],
                     "kind": kind, "template": tpl, "line": e["line"],
                     "disposition": prev.get("disposition", ""), "function": func})
    rows.sort(key=lambda r: (r["subsystem"], r["file"], r["template"], r["kind"], r["function"]))
    write_tsv(os.path.join(DATA, a.framework + ".tsv"), rows, a.framework)
    print("%d strings from %d releases (%s)" % (len(rows), len(order), ", ".join(order)),
          file=sys.stderr)


# ==== judging ================================================================================

def load_rules(framework):
    """data/source-strings/<framework>.rules: kind-glob, file-glob, template regex (Python),
    disposition; the first rule that applies judges a row no signal matches."""
    out = []
    for cells in read_table(os.path.join(DATA, framework + ".rules")):
        if len(cells) != 4:
            raise SystemExit("%s.rules: want 4 cells, got %r" % (framework, cells))
        kind, glob, regex, disp = cells
        out.append((kind, glob, re.compile(regex), disp))
    return out


def cmd_judge(a):
    path = os.path.join(DATA, a.framework + ".tsv")
    rows = read_tsv(path)
    res = subprocess.run([a.ddx_cover, "match", path], capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit("ddx-cover failed: " + res.stderr)
    matched = {}
    for ln in res.stdout.splitlines():
        idx, _, sigs = ln.partition("\t")
        matched[int(idx)] = sigs
    rules = load_rules(a.framework)
    counts = {}
    for i, r in enumerate(rows):
        if matched.get(i):
            r["disposition"] = "ref:" + matched[i]
        else:
            r["disposition"] = "gap: not judged yet"
            for kind, glob, regex, disp in rules:
                if fnmatch.fnmatchcase(r["kind"], kind) and fnmatch.fnmatchcase(r["file"], glob) \
                        and (regex.search(r["template"]) or (r["line"] and regex.search(r["line"]))):
                    r["disposition"] = disp
                    break
        d = r["disposition"].split(":")[0]
        counts[d] = counts.get(d, 0) + 1
    write_tsv(path, rows, a.framework)
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())), file=sys.stderr)


# ==== docs/coverage.md =======================================================================

DOC_HEAD = """# Coverage of the frameworks' own messages

Generated by `tools/source_strings.py doc` from `data/source-strings/*.tsv`; do not edit by hand
(the test `kb/coverage-doc` fails when this file is stale).

Each data file lists every message that the scanned source files of a framework raise, assert,
log or warn, over the releases scanned, with a judgement: **covered** (a signal of the catalogue
matches the message, filled with sample values, in ddx's own engine; a signal that argues against
its reference, a marker, or one that counts only as a log's last line names no cause and claims
nothing), **not a training failure** (with the reason), or **gap** (a failure that no reference
reads yet). The test
`kb/source-strings` checks, with no source tree at hand, that every claimed message is still
matched by the signals that claim it, and that every signal whose `source` names a scanned file
matches at least one message of that file (docs/reference-format.md, "source").

Rows of kind `bare-assert` and `bare-raise` hold no message: an `assert cond` without one, or a
`raise X` whose text is not given there, reaches a user's log only as the traceback's last frame,
the source line Python prints under it and the bare exception name. Their template is that source
line, judged like any message (a signal that reads the source line claims it), and the gap list
names the function it is in.

The releases scanned are those whose source could be had: PyTorch 1.13.1 and 2.6.0 (Debian's
source packages), a snapshot of its main branch from March 2025 (2.7.0a0), and 2.0.0 and 2.4.0 as
a vendor's port of those releases carries them (MetaX's mcPytorch; the files the port changed,
those that name its hardware, left out); NCCL at the last patch of every minor release from 2.4
to 2.30; transformers as the copies of its package that public projects carry in their own
repositories (its own history is too large to fetch), each labelled with the `__version__` it
declares, a development snapshot (4.14.0.dev0, 4.56.0.dev0) or a release; Ray at its tags 1.0.0,
1.4.0 and 1.8.0 and then, since the copies that could be had after 2021 carry no release tags,
its master branch on six dates, labelled YYYY.MM (2022.06 to 2026.05; data/source-strings/
ray.paths gives the day of each). "first..last" is therefore the first and last scanned release
where a message exists unchanged, not the exact release that introduced or removed it.
"""

DOC_HOWTO = """
## How the data is made

1. `data/source-strings/<framework>.paths` names the files to scan, one `subsystem<TAB>glob`
   a line (the first glob that matches a path gives its subsystem; the subsystem `!` leaves it out).
   Start from the files the references cite and add their siblings.
2. Put the releases on the machine: an unpacked release, a checkout, or a bare git directory and
   a tag (`GITDIR@TAG`), then
   `python3 tools/source_strings.py extract <framework> --release 2.6.0=DIR --release ...`.
   Python files are read with `ast` (`raise`, `assert ..., msg`, `warnings.warn`, `logger.*`,
   the text an exception's `__str__` returns or passes to `super().__init__`,
   `torch._check`, `_log_and_throw`, Megatron's `log_single_rank`, `print` and bitsandbytes'
   `add_log_entry` (kind `print`), with f-strings, `%`, `.format` and local message variables
   turned into templates); C and C++ files with a small scanner (`TORCH_CHECK*`,
   `TORCH_INTERNAL_ASSERT`, `C10_THROW_ERROR`, `TORCH_WARN*`, `C10D_*` logging, `LOG(...) <<`
   streams, `fmt::format`, `c10::str`, `throw X(...)`, NCCL's `WARN`/`INFO` printf formats).
   An `assert` with no message and a `raise X` with no argument are rows of their own
   (`bare-assert`, `bare-raise`: the source line, with the function in the last column).
   A row whose template holds fewer than 8 letters of literal text is dropped.
   `--add` keeps the rows already in the data file (releases scanned before whose trees are no
   longer at hand) and adds what the releases given hold.
   Messages the source assembles across statements or functions (a stream written in pieces,
   a prefix added by a caller) are recorded by hand in `<framework>.manual` (same columns, with
   a note) and merged in.
3. Build (`cmake --build build`), then `python3 tools/source_strings.py judge <framework>`: ddx's
   own engine (`build/ddx-cover`, PCRE2 and Vectorscan over the built-in references) fills each
   template's placeholders with sample values and matches it, and the source line of a
   `raise` or `assert`, as log lines, each line alone; a match claims the row for those
   signals. The first fillings guess a value from the placeholder's name (a rank, a size, a
   path) or take it from `<framework>.samples` (file glob, key, values: the k-th filling takes
   each placeholder's k-th value, so an exit code and its signal name go together); then every
   placeholder is filled with `0`, `x` and nothing. Log and warning rows are matched again as
   their loggers print them (Python logging, torch's handler, glog as c10 prints it, NCCL's
   debug prefix, a C++ error as Python raises it). Every other row is judged by the first rule
   of `data/source-strings/<framework>.rules` that applies (kind, file, template regex,
   disposition), else left as `gap: not judged yet`.
4. `python3 tools/source_strings.py doc` rewrites this file.

## Adding a framework

Write `data/source-strings/<name>.paths` and `<name>.rules` (and `<name>.samples`,
`<name>.manual` when the messages need them), run steps 2 to 4, and commit the data files with
this page; the tests pick up every `*.tsv` in the folder. A framework whose messages are not
Python, C or C++ (Go, Rust) needs a scanner in the tool first. Write or widen
signals for the gaps a reference should read, naming the file and the release range in their
`source` (`path [<name> <first>..<last>]`, docs/reference-format.md), and judge again.
"""


def cmd_doc(a):
    lines = [DOC_HEAD]
    tsvs = sorted(f for f in os.listdir(DATA) if f.endswith(".tsv"))
    summary = ["", "## Summary", "",
               "| framework | releases scanned | strings | covered | not a training failure | gap |",
               "|---|---|---:|---:|---:|---:|"]
    detail = []
    bare = ["", "## Message-less asserts and bare raises", "",
            "| framework | rows | covered | not a training failure | gap |",
            "|---|---:|---:|---:|---:|"]
    for name in tsvs:
        fw = name[:-4]
        rows = read_tsv(os.path.join(DATA, name))
        rels = sorted({r["first"] for r in rows} | {r["last"] for r in rows}, key=version_key)
        tot = {"ref": 0, "not-training-failure": 0, "gap": 0}
        subs = {}
        for r in rows:
            d = r["disposition"].split(":")[0]
            tot[d] = tot.get(d, 0) + 1
            s = subs.setdefault(r["subsystem"], {"n": 0, "ref": 0, "not-training-failure": 0,
                                                 "gap": 0, "reasons": {}, "gaps": [], "refs": set()})
            s["n"] += 1
            s[d] = s.get(d, 0) + 1
            if d == "ref":
                for claim in r["disposition"][4:].split(","):
                    s["refs"].add(claim.split("/")[0])
            elif d == "not-training-failure":
                reason = r["disposition"].split(":", 1)[1].strip()
                s["reasons"][reason] = s["reasons"].get(reason, 0) + 1
            else:
                s["gaps"].append(r)
        summary.append("| %s | %s | %d | %d | %d | %d |" % (
            fw, ", ".join(rels), len(rows), tot["ref"], tot["not-training-failure"], tot["gap"]))
        btot = {"n": 0, "ref": 0, "not-training-failure": 0, "gap": 0}
        for r in rows:
            if r["kind"].startswith("bare-"):
                btot["n"] += 1
                btot[r["disposition"].split(":")[0]] += 1
        if btot["n"]:
            bare.append("| %s | %d | %d | %d | %d |" % (fw, btot["n"], btot["ref"],
                                                       btot["not-training-failure"], btot["gap"]))
        detail += ["", "## %s" % fw, "",
                   "| subsystem | strings | covered | not a training failure | gap |",
                   "|---|---:|---:|---:|---:|"]
        for sub in sorted(subs):
            s = subs[sub]
            detail.append("| %s | %d | %d | %d | %d |" % (sub, s["n"], s["ref"],
                                                          s["not-training-failure"], s["gap"]))
        for sub in sorted(subs):
            s = subs[sub]
            detail += ["", "### %s: %s" % (fw, sub), ""]
            if s["refs"]:
                detail.append("Covered by: " + ", ".join(sorted(s["refs"])) + ".")
                detail.append("")
            if s["reasons"]:
                detail.append("Left out, with the reason (strings):")
                detail.append("")
                for reason, n in sorted(s["reasons"].items(), key=lambda kv: (-kv[1], kv[0])):
                    detail.append("- %s (%d)" % (reason, n))
                detail.append("")
            if s["gaps"]:
                detail.append("Gaps (a failure no reference reads yet):")
                detail.append("")
                for r in s["gaps"]:
                    tpl = r["template"].replace("\n", " ").replace("|", "\\|")
                    if len(tpl) > 140:
                        tpl = tpl[:137] + "..."
                    note = r["disposition"].split(":", 1)[1].strip()
                    where = os.path.basename(r["file"])
                    if r.get("function"):
                        where += ", in " + r["function"]
                    detail.append("- `%s` (%s, %s..%s): %s" % (
                        tpl.replace("`", "'"), where, r["first"], r["last"], note))
                detail.append("")
    text = "\n".join(lines + summary + bare + detail).rstrip() + "\n" + DOC_HOWTO
    out = os.path.join(ROOT, "docs", "coverage.md")
    if a.check:
        with open(out, encoding="utf-8") as f:
            if f.read() != text:
                print("docs/coverage.md is stale: run python3 tools/source_strings.py doc",
                      file=sys.stderr)
                return 1
        return 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


# ==== cut forms ==============================================================================

CUT_MIN_WORDS = 4   # a poster's cut keeps at least this many words ...
CUT_MIN_CHARS = 30  # ... or this many characters; a shorter one says too little to be read
CUT_DOC = os.path.join(ROOT, "docs", "cut-forms.md")
CUT_FLOORS = os.path.join(ROOT, "tests", "kb", "cut-forms.floor")


def first_placeholder(tpl):
    """Where the first placeholder of a template starts (a '{' that is not a literal '{{')."""
    i = 0
    while i < len(tpl):
        if tpl[i] == "{":
            if tpl[i + 1:i + 2] == "{":
                i += 2
                continue
            return i
        if tpl[i] == "}" and tpl[i + 1:i + 2] == "}":
            i += 2
            continue
        i += 1
    return len(tpl)


def cut_forms(tpl):
    """The forms a poster cuts a message to: ("first-words", the message up to its first
    placeholder or sentence end, at least CUT_MIN_WORDS words or CUT_MIN_CHARS characters) and
    ("no-period", the message without its final period); only those that differ from it."""
    whole = tpl.split("\n")[0].rstrip()
    out = []
    end = first_placeholder(whole)
    m = re.search(r"[.!?](?=\s)", whole)
    if m and m.start() < end:
        end = m.start()
    head = whole[:end].rstrip(" \t,;:([-'\"=")
    if len(head) < len(whole.rstrip(".")) and \
            (len(head.split()) >= CUT_MIN_WORDS or len(head) >= CUT_MIN_CHARS):
        out.append(("first-words", head))
    if whole.endswith(".") and not whole.endswith("..") and len(whole) > 1:
        if whole[:-1] != head:
            out.append(("no-period", whole[:-1]))
    return out


def claimed_refs(disp):
    return {c.split("/")[0] for c in disp[4:].split(",")} if disp.startswith("ref:") else set()


def cover_match(ddx_cover, fw, rows, samples):
    """ddx-cover's matches of rows (a list of row dicts) as judge makes them: {index: set of
    reference ids}; with the framework's samples file beside them when samples is set."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, fw + ".tsv")
        write_tsv(path, rows, fw)
        src = os.path.join(DATA, fw + ".samples")
        if samples and os.path.exists(src):
            with open(src, encoding="utf-8") as f, \
                    open(os.path.join(tmp, fw + ".samples"), "w", encoding="utf-8") as g:
                g.write(f.read())
        res = subprocess.run([ddx_cover, "match", path], capture_output=True, text=True)
        if res.returncode != 0:
            raise SystemExit("ddx-cover failed: " + res.stderr)
    matched = {}
    for ln in res.stdout.splitlines():
        idx, _, sigs = ln.partition("\t")
        matched[int(idx)] = {c.split("/")[0] for c in sigs.split(",") if c}
    return matched


def measure_cuts(ddx_cover):
    """Per framework: the cut forms of every claimed message, each with the references whose
    signals read it (ddx-cover, as judge runs it). A message whose claim rests on a value a
    sample filled in (an error string put in for "{err}") is left out: a cut that drops the
    placeholder drops what was read. Returns {framework: ([(row, form, text, read, refs)],
    number of messages left out)}."""
    result = {}
    for name in sorted(f for f in os.listdir(DATA) if f.endswith(".tsv")):
        fw = name[:-4]
        rows = [r for r in read_tsv(os.path.join(DATA, name))
                if not r["kind"].startswith("bare-") and r["disposition"].startswith("ref:")]
        own = cover_match(ddx_cover, fw, [dict(r, line="", disposition="") for r in rows], False)
        items, filled = [], 0
        for i, r in enumerate(rows):
            claim = claimed_refs(r["disposition"]) & own.get(i, set())
            if not claim:
                filled += 1
                continue
            for form, text in cut_forms(r["template"]):
                items.append((r, form, text, claim))
        matched = cover_match(ddx_cover, fw, [dict(r, template=text, line="", disposition="")
                                              for r, _, text, _ in items], True) if items else {}
        out = []
        for i, (r, form, text, claim) in enumerate(items):
            refs = matched.get(i, set())
            out.append((r, form, text, bool(refs & claim), refs))
        result[fw] = (out, filled)
    return result


CUT_HEAD = """# Messages cut short: are they still read?

Generated by `tools/source_strings.py cuts` from `data/source-strings/*.tsv`; do not edit by
hand (the test `kb/cut-forms` fails when a framework's share of cut forms still read falls below
its floor in `tests/kb/cut-forms.floor`, and those floors only rise).

A poster often quotes a message cut short: after its first words ("RuntimeError: CUDA out of
memory", with the sizes gone), or without its final period. For every message a reference
claims (docs/coverage.md), two cut forms are built: **first words**, the message up to its first
placeholder or sentence end, kept when that is at least %d words or %d characters; and **no
period**, the message without its final period. Each is matched, as `judge` matches messages,
by ddx's own engine (`build/ddx-cover`); it is **still read** when a signal of a reference that
claims the whole message matches it, **not read** otherwise (it may still match another
reference's signal, named in the list). A message whose claim rests on a value a sample filled
in is left out. A cut form is not always specific enough to be read:
the list below is where a signal could be widened (an optional tail, an optional final period),
never where the cut form would also match a healthy run's output.
""" % (CUT_MIN_WORDS, CUT_MIN_CHARS)


def cut_summary(result):
    out = {}
    for fw, (items, _) in result.items():
        s = {"first-words": [0, 0], "no-period": [0, 0]}
        for _, form, _, ok, _ in items:
            s[form][0] += 1
            s[form][1] += ok
        out[fw] = s
    return out


def cut_doc(result):
    summ = cut_summary(result)
    lines = [CUT_HEAD, "## Summary", "",
             "| framework | cut forms | still read | not read | first words read | "
             "no period read |", "|---|---:|---:|---:|---:|---:|"]
    tot = [0, 0]
    for fw in sorted(summ):
        fwd, nop = summ[fw]["first-words"], summ[fw]["no-period"]
        n, ok = fwd[0] + nop[0], fwd[1] + nop[1]
        if not n:
            continue
        tot[0] += n
        tot[1] += ok
        lines.append("| %s | %d | %d | %d | %d/%d | %d/%d |" % (fw, n, ok, n - ok, fwd[1], fwd[0],
                                                             nop[1], nop[0]))
    lines.append("| **all** | %d | %d | %d | | |" % (tot[0], tot[1], tot[0] - tot[1]))
    lines += ["", "Messages left out because their claim rests on a value a sample filled in "
              "(docs/coverage.md, step 3: an error string put in for a placeholder, which the "
              "cut drops): " + ", ".join("%s %d" % (fw, result[fw][1]) for fw in sorted(result)
                                          if result[fw][1]) + "."]
    for fw in sorted(result):
        miss = [it for it in result[fw][0] if not it[3]]
        if not miss:
            continue
        lines += ["", "## %s: not read" % fw, ""]
        for r, form, text, _, refs in sorted(miss, key=lambda it: (it[0]["file"], it[2])):
            other = (" (matches %s)" % ", ".join(sorted(refs))) if refs else ""
            lines.append("- `%s` (%s, %s; claimed by %s)%s" % (
                text.replace("`", "'").replace("|", "\\|"), form, os.path.basename(r["file"]),
                ", ".join(sorted(claimed_refs(r["disposition"]))), other))
    return "\n".join(lines).rstrip() + "\n"


def read_cut_floors(text):
    floors = {}
    for raw in text.splitlines():
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        fw, pct = raw.split("\t")
        floors[fw] = float(pct)
    return floors


def cmd_cuts(a):
    result = measure_cuts(a.ddx_cover)
    summ = cut_summary(result)
    share = {}
    for fw, s in summ.items():
        n = s["first-words"][0] + s["no-period"][0]
        if n:
            share[fw] = 100.0 * (s["first-words"][1] + s["no-period"][1]) / n
    for fw in sorted(share):
        print("%-12s %6.1f %% of %d cut forms still read" % (
            fw, share[fw], summ[fw]["first-words"][0] + summ[fw]["no-period"][0]),
            file=sys.stderr)
    doc = cut_doc(result)
    if not a.check:
        with open(CUT_DOC, "w", encoding="utf-8") as f:
            f.write(doc)
        return 0
    fails = 0
    with open(CUT_FLOORS, encoding="utf-8") as f:
        floors = read_cut_floors(f.read())
    for fw, floor in sorted(floors.items()):
        if share.get(fw, 0.0) + 1e-9 < floor:
            print("FAIL: %s: %.1f %% of cut forms still read, below the floor %.1f %%" % (
                fw, share.get(fw, 0.0), floor), file=sys.stderr)
            fails += 1
    # the floors only rise: compare with the last two commits' files when there is history (an
    # uncommitted edit, and the commit that made one)
    rel = os.path.relpath(CUT_FLOORS, ROOT)
    for rev in ("HEAD", "HEAD~1"):
        prev = subprocess.run(["git", "-C", ROOT, "show", rev + ":" + rel], capture_output=True,
                              text=True)
        if prev.returncode != 0:
            continue
        for fw, floor in read_cut_floors(prev.stdout).items():
            if fw not in floors or floors[fw] < floor:
                print("FAIL: %s: the cut-form floor fell or went (%.1f in %s)" % (fw, floor, rev),
                      file=sys.stderr)
                fails += 1
    with open(CUT_DOC, encoding="utf-8") as f:
        if f.read() != doc:
            print("FAIL: docs/cut-forms.md is stale: run python3 tools/source_strings.py cuts",
                  file=sys.stderr)
            fails += 1
    return 1 if fails else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract")
    e.add_argument("framework")
    e.add_argument("--release", action="append", required=True, help="LABEL=TREE")
    e.add_argument("--add", action="store_true", help="keep the rows already in the data file")
    e.add_argument("--skip-marked", help="leave out files whose text matches this regex")
    j = sub.add_parser("judge")
    j.add_argument("framework")
    j.add_argument("--ddx-cover", default=os.path.join(ROOT, "build", "ddx-cover"))
    d = sub.add_parser("doc")
    d.add_argument("--check", action="store_true")
    c = sub.add_parser("cuts")
    c.add_argument("--ddx-cover", default=os.path.join(ROOT, "build", "ddx-cover"))
    c.add_argument("--check", action="store_true")
    a = p.parse_args()
    return {"extract": cmd_extract, "judge": cmd_judge, "doc": cmd_doc,
            "cuts": cmd_cuts}[a.cmd](a) or 0


if __name__ == "__main__":
    sys.exit(main())
