#!/bin/sh
# run.sh -- ctest entry for tests/fleet/run.py: run it with Debian's /usr/bin/python3 (its sqlite3
# module reads the store independently of ddx), or exit 77 (ctest: skipped) without it.
#
#   tests/fleet/run.sh DDX
set -u
[ $# -ge 1 ] || { echo "usage: $0 DDX" >&2; exit 2; }
if [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import sqlite3' 2>/dev/null; then
    echo "SKIP: no /usr/bin/python3 with sqlite3 (install it with DDX_WITH_TORCH=1 sh scripts/install-deps.sh)"
    exit 77
fi
exec /usr/bin/python3 "$(dirname "$0")/run.py" --ddx "$1"
