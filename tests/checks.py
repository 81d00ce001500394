"""checks.py -- what the Python test harnesses (tests/watch, tests/fleet, tests/slurm) share: a
check that prints PASS or FAIL with why, the summary and exit status, a free TCP port.
"""
import socket
import time

results = []


def check(name, ok, why=""):
    """Records and prints one check; the reason is printed either way (why it failed, or what
    was seen). Returns ok."""
    results.append((name, bool(ok)))
    note = f": {why}" if why and not ok else (f" ({why})" if why else "")
    print(f"{'PASS' if ok else 'FAIL'} {name}{note}", flush=True)
    return ok


def summary(t0):
    """Prints the count of checks and failures since t0; returns the exit status (0 or 1)."""
    failed = [n for n, ok in results if not ok]
    print(f"\n{len(results)} checks in {time.time() - t0:.1f} s: {len(failed)} failed")
    return 1 if failed else 0


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
