#!/bin/sh
# need.sh -- run a test only when the paths it reads are there; otherwise say which is missing
# and exit 77, which ctest reports as skipped (SKIP_RETURN_CODE 77), so a test on the shared
# corpus kept beside the repository is skipped with its reason rather than silently absent.
#
#   tests/need.sh PATH... -- COMMAND [ARG...]
set -u
missing=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    [ -e "$1" ] || missing="$missing $1"
    shift
done
[ $# -gt 0 ] || { echo "need.sh: usage: need.sh PATH... -- COMMAND [ARG...]" >&2; exit 2; }
shift
if [ -n "$missing" ]; then
    echo "SKIPPED: not here:$missing (the shared corpus is kept beside the repository, not in it)"
    exit 77
fi
exec "$@"
