#!/bin/sh
# run.sh -- ctest entry for tests/slurm/run.py: a real single-node Slurm (munge, slurmctld, slurmd
# from Debian's packages) started in a temporary folder, real failing torchrun jobs through
# sbatch, ddx slurm and the epilog. Exit 77 (ctest: skipped) with the reason printed where Slurm
# cannot start: not root, packages or torch missing, daemons that do not come up.
#
#   tests/slurm/run.sh DDX
set -u
[ $# -ge 1 ] || { echo "usage: $0 DDX" >&2; exit 2; }
if [ ! -x /usr/bin/python3 ]; then
    echo "SKIP: no /usr/bin/python3 (install it with DDX_WITH_TORCH=1 sh scripts/install-deps.sh)"
    exit 77
fi
exec /usr/bin/python3 "$(dirname "$0")/run.py" --ddx "$1"
