/* native.c -- a process that died in native code: a signal, C++'s terminate, a fatal Python
 * error, glibc's heap and stack checks.
 *
 * Reading:
 *   native-crash  each rank's first line that says its process died below Python: the shell's
 *                 report of a signal ("Segmentation fault (core dumped)", "line 3: 4242 Killed"),
 *                 libstdc++'s "terminate called after throwing an instance of", CPython's "Fatal
 *                 Python error:", glibc's "double free or corruption" and "*** stack smashing
 *                 detected ***", glog's "*** SIGSEGV (@0x0) received by PID". Such a process
 *                 prints no Python exception, so without this a job that crashed so would leave
 *                 the report silent: the unrecognised-failure report (unrec.c) names the line
 *                 when no exception was printed at all. No vote: the line says a process died,
 *                 not that its rank started the failure.
 */
#include "native.h"

static const dx_signal nc_patterns[] = {
    {"job-native-core-dumped", DX_ROLE_NOISE, 0,
     "\\b(?:Segmentation fault|Bus error|Aborted|Illegal instruction|Floating point exception) "
     "\\(core dumped\\)",
     "the shell's report of a child killed by a signal (bash jobs.c: strsignal() and \" (core "
     "dumped)\")",
     0},
    {"job-native-shell-signal", DX_ROLE_NOISE, 0,
     "line \\d+: +\\d+ (?:Segmentation fault|Bus error|Aborted|Illegal instruction|Floating point "
     "exception|Killed)\\b",
     "bash's \"SCRIPT: line N: PID SIGNAL-NAME COMMAND\" for a command killed by a signal", 0},
    {"job-native-terminate", DX_ROLE_NOISE, 0,
     "terminate called after throwing an instance of '[^']+'",
     "libstdc++ libsupc++/vterminate.cc (the verbose terminate handler)", 0},
    {"job-native-terminate-bare", DX_ROLE_NOISE, 0, "terminate called without an active exception",
     "libstdc++ libsupc++/vterminate.cc", 0},
    {"job-native-fatal-python", DX_ROLE_NOISE, 0, "Fatal Python error: \\S",
     "CPython Python/pylifecycle.c fatal_error() and Modules/faulthandler.c", 0},
    {"job-native-glibc-stack", DX_ROLE_NOISE, 0,
     "\\*\\*\\* (?:stack smashing|buffer overflow) detected \\*\\*\\*",
     "glibc debug/stack_chk_fail.c, debug/fortify_fail.c", 0},
    {"job-native-glibc-heap", DX_ROLE_NOISE, 0,
     "(?:double free or corruption(?: \\((?:out|fasttop|top|!prev)\\))?|free\\(\\): invalid "
     "(?:pointer|size|next size \\w+)|malloc\\(\\): (?:memory corruption|corrupted top size)|"
     "corrupted size vs\\. prev_size)$",
     "glibc malloc/malloc.c malloc_printerr()", 0},
    {"job-native-glog-signal", DX_ROLE_NOISE, 0,
     "\\*\\*\\* SIG[A-Z]+ \\(@0x[0-9a-f]+\\) received by PID \\d+",
     "glog src/signalhandler.cc (folly's symbolizer prints the same)", 0},
};

static const dx_reading_fact nc_facts[] = {
    {"job.native_crash", "string",
     "the first line saying a process died in native code (a signal, C++ terminate, a fatal "
     "Python error, glibc's heap or stack checks), which prints no Python exception"},
    {"job.native_crash_rank", "int", "the rank whose output holds job.native_crash, when known"},
};

typedef struct nc_state {
    char *line; /* the first such line of the job, 200 bytes at most */
    uint64_t seq;
    int rank;
} nc_state;

const dx_reading dx_reading_native_crash;

static void nc_init(void *st) { ((nc_state *)st)->rank = -1; }

static void nc_fini(void *st) { dx_free(((nc_state *)st)->line); }

static int nc_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    nc_state *st = stp;
    if (st->line && st->seq <= h->seq)
        return DDX_OK;
    char *t = dx_strndup(h->text, h->len > 200 ? 200 : h->len);
    if (!t)
        return DDX_ENOMEM;
    dx_free(st->line);
    st->line = t;
    st->seq = h->seq;
    st->rank = h->rank;
    return DDX_OK;
}

const char *dx_native_crash(const dx_job_model *jm, int *rank, uint64_t *seq)
{
    const nc_state *st = dx_job_state(jm, &dx_reading_native_crash);
    *rank = st->rank;
    *seq = st->seq;
    return st->line;
}

static int nc_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const nc_state *st = stp;
    if (!st->line)
        return DDX_OK;
    int rc = dx_job_fact(f, "job.native_crash", "a line of the job's output", "%s", st->line);
    if (!rc && st->rank >= 0)
        rc = dx_job_fact(f, "job.native_crash_rank", "the rank the line came from", "%d", st->rank);
    return rc;
}

const dx_reading dx_reading_native_crash = {
    .name = "native-crash",
    .doc = "the first line saying a process died below Python (a signal, C++ terminate, a fatal "
           "Python error, glibc's checks); named by the unrecognised-failure report when no "
           "exception was printed",
    .facts = nc_facts,
    .nfacts = DX_ARRAY_LEN(nc_facts),
    .patterns = nc_patterns,
    .npatterns = DX_ARRAY_LEN(nc_patterns),
    .state_size = sizeof(nc_state),
    .init = nc_init,
    .fini = nc_fini,
    .on_hit = nc_hit,
    .publish = nc_publish,
};
