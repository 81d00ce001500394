#!/bin/sh
# run.sh -- ctest entry for tests/watch/run.py: run it with Debian's /usr/bin/python3, or exit 77
# (ctest SKIP_RETURN_CODE) when that interpreter is missing (the live checks also skip, inside
# run.py, when it has no torch).
#
#   tests/watch/run.sh DDX basic|live [run.py options]
set -u
[ $# -ge 2 ] || { echo "usage: $0 DDX basic|live [options]" >&2; exit 2; }
if [ ! -x /usr/bin/python3 ]; then
    echo "SKIP: no /usr/bin/python3 (install it with DDX_WITH_TORCH=1 sh scripts/install-deps.sh)"
    exit 77
fi
ddx=$1
shift
exec /usr/bin/python3 "$(dirname "$0")/run.py" --ddx "$ddx" "$@"
