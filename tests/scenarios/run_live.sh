#!/bin/sh
# run_live.sh -- ctest entry for the live scenarios: run run.py with Debian's /usr/bin/python3,
# or exit 77 (ctest SKIP_RETURN_CODE) when that interpreter or its torch is missing.
#
#   tests/scenarios/run_live.sh DDX [run.py options]
set -u
[ $# -ge 1 ] || { echo "usage: $0 DDX [run.py options]" >&2; exit 2; }
ddx=$1
shift
if [ ! -x /usr/bin/python3 ] || ! /usr/bin/python3 -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2>/dev/null; then
    echo "SKIP: /usr/bin/python3 has no torch (install with DDX_WITH_TORCH=1 sh scripts/install-deps.sh)"
    exit 77
fi
exec /usr/bin/python3 "$(dirname "$0")/run.py" --ddx "$ddx" "$@"
