"""emit.py -- writes a fixed mix of bytes to standard output and error, then exits with the
status given (or kills itself with a signal): what `ddx watch` must pass through unchanged.

  emit.py STATUS        exit with STATUS
  emit.py -SIGNAL       end by that signal (e.g. -15)
The bytes: lines and a line cut across writes, CRLF, NUL and invalid UTF-8, an ANSI colour
sequence, a 100 000-byte line, carriage-return progress, and output that ends without a newline.
"""
import os
import signal
import sys
import time

out, err = sys.stdout.buffer, sys.stderr.buffer


def both(o, e):
    out.write(o)
    out.flush()
    err.write(e)
    err.flush()


both(b"[rank 0] step 1/3 loss 0.5\n", b"to stderr\n")
out.write(b"a line cut ")
out.flush()
time.sleep(0.05)
both(b"across writes\r\n\x00binary \xff\xfe bytes\n", b"\x1b[31mred\x1b[0m warning\n")
for i in range(5):
    both(b"\r progress %d/5" % i, b"")
    time.sleep(0.01)
both(b"\n" + b"x" * 100000 + b"\n", b"E" * 70000 + b"\n")
both(b"the end without a newline", b"stderr ends without one too")
arg = sys.argv[1] if len(sys.argv) > 1 else "0"
if arg.startswith("-"):
    os.kill(os.getpid(), int(arg[1:]))
    time.sleep(5)
sys.exit(int(arg))
