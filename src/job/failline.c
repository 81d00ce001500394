/* failline.c -- lines that say a job failed or hung without a Python exception.
 *
 * Reading:
 *   failure-lines  each job's first line that states a failure in a form other than a Python
 *                  exception line: a logger's ERROR record (Ray's, DeepSpeed's), argparse's
 *                  "PROG: error: ...", a native library's record of a failed system call with
 *                  its errno ("tcp_socket.cc: 69: Failed bind on ..., errno=99"), a process
 *                  manager's or IDE's record of a process that exited non-zero (Open MPI,
 *                  MPICH's Hydra, PyCharm's "Process finished with exit code 1"), Hydra's
 *                  "Error executing job with overrides", Ray's record of a worker or actor that
 *                  died, c10::Error's "Exception raised from ..." header, CANN's error record
 *                  on Ascend NPUs ("EE9999[PID: N] ..."), ssh refusing a launcher's
 *                  connection, torch's "NCCL error in: FILE:LINE, ..." printed without its
 *                  exception class, an NCCL WARN line
 *                  (less the optional libraries NCCL warns it could not open, which healthy runs
 *                  print); and a stall: a note that the output stopped or the job froze ("[no
 *                  further output for 25+ minutes]", "> program freezes"). A job whose log shows
 *                  only such lines printed no exception, so without this the unrecognised-failure
 *                  report (unrec.c) would stay silent on it. No vote: such a line says that
 *                  something failed, rarely that its rank started it.
 */
#include "failline.h"

enum {
    FL_RAY,
    FL_DEEPSPEED,
    FL_ARGPARSE,
    FL_SSH,
    FL_NCCL_ERROR,
    FL_NCCL_WARN,
    FL_STATE_DICT,
    FL_NATIVE_ERRNO,
    FL_MPI_EXIT,
    FL_IDE_EXIT,
    FL_HYDRA,
    FL_RAY_DIED,
    FL_C10_RAISED,
    FL_CANN,
    FL_STALL
};

static const dx_signal fl_patterns[] = {
    [FL_RAY] = {"job-failline-ray", DX_ROLE_NOISE, 0, "\\bERROR [\\w.]+\\.py:\\d+ -- \\S",
                "ray python/ray/_private/ray_constants.py LOGGER_FORMAT (\"%(asctime)s\\t"
                "%(levelname)s %(filename)s:%(lineno)s -- %(message)s\"), Ray 1.x to 2.x",
                0},
    [FL_DEEPSPEED] = {"job-failline-deepspeed", DX_ROLE_NOISE, 0,
                      "\\[(?:ERROR|CRITICAL)\\] \\[[\\w.]+\\.py:\\d+:\\w+\\] \\S",
                      "deepspeed/utils/logging.py (\"[%(asctime)s] [%(levelname)s] "
                      "[%(filename)s:%(lineno)d:%(funcName)s] %(message)s\")",
                      0},
    [FL_ARGPARSE] = {"job-failline-argparse", DX_ROLE_NOISE, 0, "^[\\w.+/-]+: error: \\S",
                     "CPython Lib/argparse.py ArgumentParser.error (\"%(prog)s: error: "
                     "%(message)s\"), exit status 2",
                     0},
    [FL_SSH] = {"job-failline-ssh", DX_ROLE_NOISE, 0,
                "\\bssh: (?:connect to host \\S+ port \\d+: \\S|Could not resolve hostname \\S+: )|"
                "\\bPermission denied \\(publickey|^(?:\\S+: )?Host key verification failed\\.",
                "OpenSSH sshconnect.c (ssh_connect_direct: \"connect to host %s port %s: %s\"), "
                "ssh.c (\"Could not resolve hostname %s: %s\"), sshconnect2.c (\"Permission "
                "denied (%s)\"), sshconnect.c (\"Host key verification failed.\"); pdsh and the "
                "DeepSpeed and MPI launchers print them prefixed with the host",
                0},
    [FL_NCCL_ERROR] = {"job-failline-nccl-error", DX_ROLE_NOISE, 0,
                       "\\bNCCL error in: \\S+:\\d+, \\S",
                       "torch/csrc/distributed/c10d/NCCLUtils.hpp C10D_NCCL_CHECK (\"NCCL error "
                       "in: \" __FILE__ \":\" __LINE__ \", \"), torch 1.0 to 2.x, and the 1.x "
                       "ProcessGroupNCCL.cpp's own NCCL_CHECK",
                       0},
    [FL_NCCL_WARN] = {"job-failline-nccl-warn", DX_ROLE_NOISE, 0, "\\bNCCL WARN \\S",
                      "nccl src/include/debug.h (the WARN macro: \"%s:%d:%d [%d] %s:%d NCCL WARN "
                      "...\"), every release",
                      0},
    [FL_STATE_DICT] = {"job-failline-state-dict", DX_ROLE_NOISE, 0,
                       "\\bsize mismatch for [\\w.]+: copying a param with shape |"
                       "\\b(?:Missing|Unexpected) key\\(s\\) in state_dict: \"",
                       "torch/nn/modules/module.py (load_state_dict's error list: \"size mismatch "
                       "for {}: copying a param with shape {} from checkpoint, the shape in "
                       "current model is {}.\", \"Missing key(s) in state_dict: ...\", "
                       "\"Unexpected key(s) in state_dict: ...\"), torch 1.x to 2.x: the body "
                       "of the RuntimeError, often pasted without its first line",
                       0},
    [FL_NATIVE_ERRNO] = {"job-failline-native-errno", DX_ROLE_NOISE, 0,
                         "^(?:\\[[\\d:. -]+\\] ?)?[\\w./-]+\\.(?:cc|cpp|cxx|c|cu|h|hpp): ?\\d+:? "
                         "[^\\n]*\\b(?:[Ff]ailed|[Cc]annot|[Uu]nable to|[Cc]ould not)\\b"
                         "[^\\n]*(?:\\berrno\\b|\\berror: )",
                         "a native library's own log record, opened by its source file and line "
                         "(dmlc-core's LOG: \"[time] FILE:LINE: \"), that reports a failed system "
                         "call with the system's reason: DGL src/rpc/network/tcp_socket.cc "
                         "(\"Failed bind on IP:PORT, errno=N\" in the 0.4 releases, \"Failed bind "
                         "on IP:PORT , error: STRERROR\" later, the same for connect and listen); "
                         "torch's c10d warnings (\"[W socket.cpp:N] ... (errno: 99 - ...)\"), "
                         "which healthy runs print while they retry, open with a severity, not a "
                         "file",
                         0},
    [FL_MPI_EXIT] = {"job-failline-mpi-exit", DX_ROLE_NOISE, 0,
                     "\\b(?:mpirun|mpiexec|prterun|prte) detected that one or more processes "
                     "exited with non-zero status|^Primary job +terminated normally, but \\d+ "
                     "process(?:es)? returned|\\bBAD TERMINATION OF ONE OF YOUR APPLICATION "
                     "PROCESSES\\b",
                     "Open MPI's help texts for a rank that exited non-zero (orte/tools/orterun "
                     "help-orterun.txt and errmgr's help-errmgr-base.txt, 1.x to 4.x: \"mpirun "
                     "detected that one or more processes exited with non-zero status, thus "
                     "causing ...\", \"Primary job  terminated normally, but 1 process returned "
                     "...\"; prterun's in 5.x), and MPICH's Hydra process manager (Intel MPI's "
                     "too): \"=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\"",
                     0},
    [FL_IDE_EXIT] = {"job-failline-ide-exit", DX_ROLE_NOISE, 0,
                     "^Process finished with exit code (?:-\\d+|[1-9]\\d*)\\b",
                     "the last line JetBrains IDEs' run console (PyCharm) prints under a script "
                     "that ended: \"Process finished with exit code N\"; 0 is a clean end, any "
                     "other code (a negative one for a Windows status, 137 or 139 for a signal) "
                     "a failed run, often pasted alone above a cut traceback",
                     0},
    [FL_HYDRA] = {"job-failline-hydra", DX_ROLE_NOISE, 0,
                  "^Error executing job with overrides: \\[",
                  "hydra/core/utils.py (JobReturn.return_value: \"Error executing job with "
                  "overrides: {overrides}\" to stderr before it re-raises the task function's "
                  "exception), Hydra 1.1 to 1.3; with HYDRA_FULL_ERROR unset the traceback that "
                  "follows is shortened, and posters often keep only this line",
                  0},
    [FL_RAY_DIED] = {"job-failline-ray-died", DX_ROLE_NOISE, 0,
                     "\\bA worker died or was killed while executing a task by an unexpected "
                     "system error\\b|\\bThe actor died unexpectedly before finishing this "
                     "task\\b",
                     "Ray 2.x: the raylet's record of a worker process that died under a task "
                     "(src/ray/raylet/node_manager.cc, \"(raylet) A worker died or was killed "
                     "while executing a task by an unexpected system error. ...\") and the body "
                     "of ActorDiedError (python/ray/exceptions.py, \"The actor died unexpectedly "
                     "before finishing this task.\"), printed without the exception's class by "
                     "Ray Train and Tune",
                     0},
    [FL_C10_RAISED] = {"job-failline-c10-raised", DX_ROLE_NOISE, 0,
                       "\\bException raised from \\S+ at \\S+:\\d+ \\(most recent call first\\)",
                       "c10/util/Exception.cpp (c10::Error's backtrace header: \"Exception raised "
                       "from FUNCTION at FILE:LINE (most recent call first):\"), torch 1.6 to 2.x: "
                       "a C++ exception was thrown, its message cut above it or printed on "
                       "another rank's stream",
                       0},
    [FL_CANN] = {"job-failline-cann", DX_ROLE_NOISE, 0,
                 "^E[A-Z][0-9A-F]{4}(?:: |\\[PID: ?\\d+\\] )\\S",
                 "Huawei CANN's error records on Ascend NPUs (torch_npu, MindSpore): an error "
                 "code of E, the reporting module's letter and four hex digits, then \": \" "
                 "(\"EE9999: Inner Error!\", \"EI0002: ...\") or the process (\"EE9999[PID: "
                 "43311] The error from device(chipId:1, dieId:0) ...\"); warnings and info "
                 "records use W and I codes",
                 0},
    [FL_STALL] = {"job-failline-stall", DX_ROLE_NOISE, 0,
                  "^[\\s\\[(<>#*_-]*(?:\\[\\w+\\]:? )?(?:no (?:further|more) output\\b|nothing "
                  "(?:more|else) (?:is )?(?:printed|logged)\\b|(?:then )?(?:the )?`?[\\w.()]+`? "
                  "(?:then )?(?:freezes|froze|hangs|hung|stalls|stalled|deadlocks|is stuck|gets "
                  "stuck|got stuck)\\b|(?:and )?(?:then )?(?:hangs?|stuck|freezes?) "
                  "(?:here|there|forever)\\b)",
                  "how people note in a posted log, or title a report, that the output stopped "
                  "(\"[no further output for 25 minutes]\", \"> program freezes\", \"[Bug]: "
                  "ncclAllReduce deadlocks on ...\"): a hang leaves no line of its own",
                  1},
};

/* NCCL WARN lines healthy runs print: an optional library NCCL could not open and then does
 * without (src/misc/ibvwrap.cc, nvmlwrap.cc when no IB stack or NVML is installed), and the
 * advisory warnings after which NCCL adjusts a setting or falls back and goes on (the
 * source-strings data judges 37 such WARN messages of 2.4-2.30 so: "Could not create rings,
 * falling back on simple ring", "..., ignoring address", "Disabling other rings", "No NVML
 * device handle. Skipping nvlink detection.", "..., defaulting to ALL", "No NVML, trying to use
 * CUDA instead", "not dumping topology", "Unsetting POLICY_EFFICIENCY"): by the words that say it
 * goes on. */
static const char *const benign_warns[] = {
    "Failed to open lib",
    "lib wrapper not initialized",
    "falling back",
    "fallback",
    "gnoring",
    "isabling",
    "kipping",
    "defaulting to",
    "trying to use",
    "not dumping",
    "Unsetting",
};

static const dx_reading_fact fl_facts[] = {
    {"job.failure_line", "string",
     "the first line stating a failure that is not a Python exception line (a logger's ERROR "
     "record, argparse's error, ssh refusing a launcher, a native library's failed system call, "
     "a process manager's or IDE's record of a non-zero exit, Hydra's and Ray's failure records, "
     "c10's exception header, torch's NCCL error text, an NCCL WARN)"},
    {"job.failure_line_rank", "int", "the rank whose output holds job.failure_line, when known"},
    {"job.stall_note", "string",
     "a note in the log that its output stopped or the job froze (a hang prints no line of its "
     "own)"},
};

typedef struct fl_first {
    char *line; /* 200 bytes at most */
    uint64_t seq;
    int rank;
} fl_first;

typedef struct fl_state {
    fl_first fail, stall;
} fl_state;

const dx_reading dx_reading_failure_lines;

static void fl_init(void *st) { ((fl_state *)st)->fail.rank = ((fl_state *)st)->stall.rank = -1; }

static void fl_fini(void *stp)
{
    fl_state *st = stp;
    dx_free(st->fail.line);
    dx_free(st->stall.line);
}

static int benign_warn(const dx_hit *h)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(benign_warns); i++)
        if (memmem(h->text, h->len, benign_warns[i], strlen(benign_warns[i])))
            return 1;
    return 0;
}

static int fl_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    fl_state *st = stp;
    if (row == FL_NCCL_WARN && benign_warn(h))
        return DDX_OK;
    fl_first *f = row == FL_STALL ? &st->stall : &st->fail;
    if (f->line && f->seq <= h->seq)
        return DDX_OK;
    char *t = dx_strndup(h->text, h->len > 200 ? 200 : h->len);
    if (!t)
        return DDX_ENOMEM;
    dx_free(f->line);
    *f = (fl_first){t, h->seq, h->rank};
    return DDX_OK;
}

const char *dx_failure_line(const dx_job_model *jm, int *rank, uint64_t *seq)
{
    const fl_state *st = dx_job_state(jm, &dx_reading_failure_lines);
    *rank = st->fail.rank;
    *seq = st->fail.seq;
    return st->fail.line;
}

const char *dx_stall_note(const dx_job_model *jm, int *rank, uint64_t *seq)
{
    const fl_state *st = dx_job_state(jm, &dx_reading_failure_lines);
    *rank = st->stall.rank;
    *seq = st->stall.seq;
    return st->stall.line;
}

static int fl_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const fl_state *st = stp;
    int rc = DDX_OK;
    if (st->fail.line)
        rc = dx_job_fact(f, "job.failure_line", "a line of the job's output", "%s", st->fail.line);
    if (!rc && st->fail.line && st->fail.rank >= 0)
        rc = dx_job_fact(f, "job.failure_line_rank", "the rank the line came from", "%d",
                         st->fail.rank);
    if (!rc && st->stall.line)
        rc = dx_job_fact(f, "job.stall_note", "a line of the inputs", "%s", st->stall.line);
    return rc;
}

const dx_reading dx_reading_failure_lines = {
    .name = "failure-lines",
    .doc = "the first line stating a failure that is not a Python exception (a logger's ERROR "
           "record, argparse's error, ssh refusing a launcher, NCCL's errors and warnings) and a "
           "note that the output stopped; named by the unrecognised-failure report when nothing "
           "else shows the failure",
    .facts = fl_facts,
    .nfacts = DX_ARRAY_LEN(fl_facts),
    .patterns = fl_patterns,
    .npatterns = DX_ARRAY_LEN(fl_patterns),
    .state_size = sizeof(fl_state),
    .init = fl_init,
    .fini = fl_fini,
    .on_hit = fl_hit,
    .publish = fl_publish,
};
