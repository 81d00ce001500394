#!/bin/sh
# ddx-epilog.sh -- Slurm epilog: when a job failed, diagnose it with ddx, write the JSON report
# beside the job's output and store it in the fleet store. Install notes: README.md here.
#
# Slurm's advice for epilogs is to return at once and not to call Slurm commands from them:
# this script decides from the environment Slurm gives it when it can (EpilogSlurmctld passes
# the exit codes), then starts ddx detached (ddx asks scontrol about the job once, after the
# epilog has returned) and exits 0 whatever happens (a failing slurmd Epilog drains the node).
#
# Settings, from the environment or /etc/default/ddx-epilog (a shell file):
#   DDX             the ddx binary (default: /usr/local/bin/ddx, else ddx on PATH)
#   DDX_DB          the fleet store (default /var/lib/ddx/fleet.db; empty: store nothing)
#   DDX_SAVE        1 (default): write ddx-JOBID.json beside the job's output; 0: do not
#   DDX_LOG         ddx's own messages (default /var/log/ddx-epilog.log)
#   DDX_EPILOG_ALL  1: diagnose every job, not only those that failed
#   DDX_DELAY       seconds ddx waits before asking about the job (default 1)
set -u
# the detached part (see the end): wait a moment, note the job, run ddx
if [ "${1:-}" = --detached ]; then
    shift
    ready=$1 log=$2 job=$3
    shift 3
    # in a session of our own now: tell the epilog it may return
    rm -f "$ready"
    sleep "${DDX_DELAY:-1}"
    echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) job $job: $*" >>"$log"
    exec "$@" "$job" </dev/null >/dev/null 2>>"$log"
fi
[ -r /etc/default/ddx-epilog ] && . /etc/default/ddx-epilog
# Slurm starts epilogs without a search path
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${PATH:+:$PATH}
export PATH

job=${SLURM_JOB_ID:-}
[ -n "$job" ] || exit 0
# an array task: its own id, not the array's (the first task's SLURM_JOB_ID names the array)
if [ -n "${SLURM_ARRAY_JOB_ID:-}" ] && [ -n "${SLURM_ARRAY_TASK_ID:-}" ]; then
    job=${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}
fi

# EpilogSlurmctld: the batch script and every step ended 0:0, so the job succeeded
if [ "${DDX_EPILOG_ALL:-0}" != 1 ] && [ "${SLURM_JOB_EXIT_CODE2:-}" = "0:0" ] &&
    [ "${SLURM_JOB_DERIVED_EC:-0:0}" = "0:0" ]; then
    exit 0
fi

# slurmd's Epilog runs on every node of the job: act on its first node only
if [ -n "${SLURMD_NODENAME:-}" ] && [ -n "${SLURM_JOB_NODELIST:-}" ]; then
    first=$(printf '%s' "$SLURM_JOB_NODELIST" | sed -e 's/\[\([0-9]*\)[^]]*\]/\1/g' -e 's/,.*//')
    [ "$first" = "$SLURMD_NODENAME" ] || exit 0
fi

ddx=${DDX:-}
if [ -z "$ddx" ]; then
    if [ -x /usr/local/bin/ddx ]; then ddx=/usr/local/bin/ddx; else ddx=$(command -v ddx || :); fi
fi
[ -n "$ddx" ] && [ -x "$ddx" ] || exit 0
db=${DDX_DB-/var/lib/ddx/fleet.db}
log=${DDX_LOG:-/var/log/ddx-epilog.log}
[ -w "$(dirname "$log")" ] || log=/dev/null
set -- "$ddx" slurm --if-failed
[ "${DDX_EPILOG_ALL:-0}" = 1 ] && set -- "$ddx" slurm
[ "${DDX_SAVE:-1}" = 1 ] && set -- "$@" --save
[ -n "$db" ] && set -- "$@" --db "$db"

# In a session of its own (Slurm kills the epilog's process group when the epilog returns),
# and the epilog returns once the detached part has left that group (setsid -f returns before
# its child has called setsid(): returning at once could let Slurm kill it first); ddx writes
# its messages to the log.
ready=$(mktemp "${TMPDIR:-/tmp}/ddx-epilog.XXXXXX") || exit 0
cd / && setsid -f sh "$0" --detached "$ready" "$log" "$job" "$@" </dev/null >/dev/null 2>&1
i=0
while [ -e "$ready" ] && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
rm -f "$ready"
exit 0
