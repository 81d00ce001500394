/* job.c -- the job model: ranks, watchdog timeouts and torchelastic's root-cause entry.
 *
 * The extractors are rows of a table, compiled into the same Vectorscan database as every
 * reference signal (kb.c appends them after the fact extractors), so reading them costs no
 * extra pass over the logs.
 */
#include "job.h"

#include <limits.h>
#include <math.h>

#include "match.h"
#include "unrec.h"

void dx_job_model_init(dx_job_model *jm)
{
    memset(jm, 0, sizeof *jm);
    jm->rc_rank = -1;
    jm->last_frame_rank = -1;
    jm->straggler = -1;
    jm->desync_rank = -1;
    jm->table_rank = -1;
    jm->killed_rank = -1;
    jm->stack_rank = -1;
    jm->hdr_rank = -1;
    jm->uneven_rank = -1;
    jm->after_done_rank = -1;
    jm->stack_cur = -1;
    jm->stopped_rank = -1;
    jm->stuck_rank = -1;
    jm->coll_rank = -1;
    jm->agent_rank = -1;
    jm->dump_from = -1;
    jm->busy_rank = -1;
    jm->meg_etpt_spread = jm->meg_rtt_spread = -1;
    jm->srun_rank = -1;
}

/* A desync: ranks that timed out at the same collective sequence number in different operations
 * (or with the same operation but different sizes, which the watchdog line does not show). The
 * rank whose operation differs from all the others' is the suspect. */
/* The one rank alone in its value while every other rank that has one shares another: has()
 * says whether a rank has a value, same() whether two ranks' values are equal. Returns that
 * rank (and one of the others in *other, how many in *nothers), or NULL. With two ranks each is
 * "alone"; callers that need a majority check *nothers. */
static const dx_rank *alone_rank(const dx_job_model *jm, int (*has)(const dx_rank *),
                                 int (*same)(const dx_rank *, const dx_rank *),
                                 const dx_rank **other, size_t *nothers)
{
    for (size_t a = 0; a < jm->nby; a++) {
        const dx_rank *x = jm->by_rank[a];
        if (!x || !has(x))
            continue;
        size_t n = 0;
        const dx_rank *o = NULL;
        int agree = 1, alone = 1;
        for (size_t b = 0; b < jm->nby && alone && agree; b++) {
            const dx_rank *y = jm->by_rank[b];
            if (!y || y == x || !has(y))
                continue;
            if (same(y, x))
                alone = 0;
            else if (!o)
                o = y;
            else
                agree = same(y, o);
            n++;
        }
        if (alone && agree && o) {
            *other = o;
            *nothers = n;
            return x;
        }
    }
    return NULL;
}

static int has_fp(const dx_rank *x) { return x->fp_op[0] != '\0'; }
static int same_fp(const dx_rank *a, const dx_rank *b) { return !strcmp(a->fp_op, b->fp_op); }
static int has_coll(const dx_rank *x) { return x->coll != NULL; }
static int same_coll(const dx_rank *a, const dx_rank *b) { return !strcmp(a->coll, b->coll); }
static int has_batches(const dx_rank *x) { return x->nbatches >= 0; }
static int same_batches(const dx_rank *a, const dx_rank *b) { return a->nbatches == b->nbatches; }

static void find_desync(dx_job_model *jm)
{
    /* NCCL's own COLL lines: at one opCount, the rank whose operation, count or datatype differs
     * from what every other rank issued */
    for (size_t a = 0; a < jm->nby; a++) {
        const dx_rank *x = jm->by_rank[a];
        for (int i = 0; x && i < x->ncoll_sig; i++) {
            size_t same = 0, other = 0;
            const dx_rank *odd = NULL;
            int oi = 0;
            for (size_t b = 0; b < jm->nby; b++) {
                const dx_rank *y = jm->by_rank[b];
                for (int j = 0; y && y != x && j < y->ncoll_sig; j++) {
                    if (y->coll_sig[j].oc != x->coll_sig[i].oc)
                        continue;
                    if (!strcmp(y->coll_sig[j].op, x->coll_sig[i].op) &&
                        y->coll_sig[j].count == x->coll_sig[i].count &&
                        y->coll_sig[j].dt == x->coll_sig[i].dt)
                        same++;
                    else {
                        other++;
                        odd = y;
                        oi = j;
                    }
                }
            }
            /* x alone against at least two others that agree with each other */
            if (same == 0 && other >= 2 && odd) {
                int agree = 1;
                for (size_t b = 0; b < jm->nby && agree; b++) {
                    const dx_rank *y = jm->by_rank[b];
                    for (int j = 0; y && y != x && j < y->ncoll_sig; j++)
                        if (y->coll_sig[j].oc == x->coll_sig[i].oc &&
                            (strcmp(y->coll_sig[j].op, odd->coll_sig[oi].op) ||
                             y->coll_sig[j].count != odd->coll_sig[oi].count ||
                             y->coll_sig[j].dt != odd->coll_sig[oi].dt))
                            agree = 0;
                }
                if (!agree)
                    continue;
                jm->desync_rank = x->rank;
                snprintf(
                    jm->desync_why, sizeof jm->desync_why,
                    "NCCL's collective log: at opCount %llx rank %d calls %s with count %lld "
                    "datatype %d while the other %zu ranks call %s with count %lld datatype %d",
                    (unsigned long long)x->coll_sig[i].oc, x->rank, x->coll_sig[i].op,
                    x->coll_sig[i].count, x->coll_sig[i].dt, other, odd->coll_sig[oi].op,
                    odd->coll_sig[oi].count, odd->coll_sig[oi].dt);
                return;
            }
        }
    }
    /* the mismatch reports of TORCH_DISTRIBUTED_DEBUG=DETAIL name each rank's operation; which
     * pair of ranks each report compares varies from run to run, the operations do not */
    {
        const dx_rank *other = NULL;
        size_t n = 0;
        const dx_rank *x = alone_rank(jm, has_fp, same_fp, &other, &n);
        if (x && n >= 2) {
            jm->desync_rank = x->rank;
            snprintf(jm->desync_why, sizeof jm->desync_why,
                     "the collective-mismatch reports show rank %d running %s while the other "
                     "%zu ranks run %s",
                     x->rank, x->fp_op, n, other->fp_op);
            return;
        }
    }
    /* first pass: the same SeqNum in different operations (the strongest form); second pass:
     * timed-out ranks stuck in different operations at all (their SeqNums may differ when
     * one rank skipped or added a collective earlier) */
    for (int pass = 0; pass < 2; pass++)
        for (size_t a = 0; a < jm->nby; a++) {
            const dx_rank *x = jm->by_rank[a];
            if (!x || !x->timed_out || !x->timeout_op[0] || (pass == 0 && x->timeout_seq < 0))
                continue;
            size_t same = 0, other = 0;
            const dx_rank *odd = NULL;
            for (size_t b = 0; b < jm->nby; b++) {
                const dx_rank *y = jm->by_rank[b];
                if (!y || !y->timed_out || !y->timeout_op[0] ||
                    (pass == 0 && y->timeout_seq != x->timeout_seq))
                    continue;
                /* at one SeqNum, a different size counts like a different operation */
                int size_differs = pass == 0 && x->timeout_numel >= 0 && y->timeout_numel >= 0 &&
                                   x->timeout_numel != y->timeout_numel;
                if (!strcmp(y->timeout_op, x->timeout_op) && !size_differs)
                    same++;
                else {
                    other++;
                    odd = y;
                }
            }
            if (!other)
                continue;
            /* the suspect is a rank alone in its operation while all the others share one:
             * odd when x is in the majority, x itself when it is the one alone */
            if (same > other && other == 1)
                jm->desync_rank = odd->rank;
            else if (same == 1 && other > 1) {
                int shared = 1;
                for (size_t b = 0; b < jm->nby && shared; b++) {
                    const dx_rank *y = jm->by_rank[b];
                    if (y && y != x && y->timed_out && y->timeout_op[0] &&
                        (pass == 1 || y->timeout_seq == x->timeout_seq))
                        shared = !strcmp(y->timeout_op, odd->timeout_op) &&
                                 y->timeout_numel == odd->timeout_numel;
                }
                if (shared)
                    jm->desync_rank = x->rank;
            }
            if (pass == 0)
                snprintf(jm->desync_why, sizeof jm->desync_why,
                         "at SeqNum %lld rank %d runs %s of %lld elements while rank %d runs %s "
                         "of %lld",
                         x->timeout_seq, x->rank, x->timeout_op, x->timeout_numel, odd->rank,
                         odd->timeout_op, odd->timeout_numel);
            else
                snprintf(jm->desync_why, sizeof jm->desync_why,
                         "rank %d timed out in %s while rank %d timed out in %s", x->rank,
                         x->timeout_op, odd->rank, odd->timeout_op);
            if (jm->desync_rank >= 0)
                snprintf(jm->desync_why + strlen(jm->desync_why),
                         sizeof jm->desync_why - strlen(jm->desync_why),
                         "; rank %d is alone in its operation", jm->desync_rank);
            return;
        }
}

void dx_job_model_fini(dx_job_model *jm)
{
    for (size_t i = 0; i < jm->nby; i++)
        if (jm->by_rank[i]) {
            dx_free(jm->by_rank[i]->first_error);
            dx_free(jm->by_rank[i]->first_exception);
            dx_free(jm->by_rank[i]->first_original);
            dx_free(jm->by_rank[i]->waits_in);
            dx_free(jm->by_rank[i]->coll);
            dx_free(jm->by_rank[i]->coll_caller);
            dx_free(jm->by_rank[i]);
        }
    dx_free(jm->by_rank);
    dx_free(jm->rc_where);
    dx_free(jm->unranked_original);
    memset(jm, 0, sizeof *jm);
}

dx_rank *dx_job_rank(dx_job_model *jm, int r)
{
    if (r < 0 || r >= DX_JOB_MAX_RANK)
        return NULL;
    if ((size_t)r >= jm->nby) {
        size_t cap = jm->nby;
        if (dx_grow((void **)&jm->by_rank, &cap, (size_t)r + 1, sizeof(dx_rank *)))
            return NULL;
        memset(jm->by_rank + jm->nby, 0, (cap - jm->nby) * sizeof(dx_rank *));
        jm->nby = cap;
    }
    if (!jm->by_rank[r]) {
        dx_rank *x = dx_calloc(1, sizeof *x);
        if (!x)
            return NULL;
        x->rank = r;
        x->cuda_dev = -1;
        x->pid = -1;
        x->nbatches = -1;
        x->timeout_seq = -1;
        x->timeout_numel = -1;
        x->last_completed = -1;
        x->last_enqueued = -1;
        jm->by_rank[r] = x;
        jm->nranks++;
    }
    return jm->by_rank[r];
}

int dx_job_line(dx_job_model *jm, int rank, const dx_attr *a)
{
    if (jm->rc_lines_left > 0)
        jm->rc_lines_left--;
    if (jm->hdr_left > 0)
        jm->hdr_left--;
    if (rank < 0)
        return DDX_OK;
    dx_rank *x = dx_job_rank(jm, rank);
    if (!x)
        return rank >= DX_JOB_MAX_RANK ? DDX_OK : DDX_ENOMEM;
    x->lines++;
    if (a->has_time) {
        x->has_time = 1;
        x->last_time = a->time;
    }
    return DDX_OK;
}

/* A frame in the standard library's blocking calls (threading, queue, selectors, sockets,
 * multiprocessing): where a thread waits, not what it waits for. */
static int stdlib_wait_frame(const char *file, size_t n)
{
    static const char *const libs[] = {"threading.py",  "queue.py",      "selectors.py",
                                       "socket.py",     "subprocess.py", "ssl.py",
                                       "connection.py", "synchronize.py"};
    if (memmem(file, n, "multiprocessing/", 16))
        return 1;
    const char *slash = memrchr(file, '/', n);
    const char *base = slash ? slash + 1 : file;
    size_t bn = (size_t)(file + n - base);
    for (size_t i = 0; i < DX_ARRAY_LEN(libs); i++)
        if (strlen(libs[i]) == bn && !memcmp(base, libs[i], bn))
            return 1;
    return 0;
}

/* The decimal number at p (before end), -1 when none. */
static long long leading_ll(const char *p, const char *end)
{
    long long v = 0;
    int nd = 0;
    while (p && p < end && *p >= '0' && *p <= '9' && nd < 18) {
        v = v * 10 + (*p++ - '0');
        nd++;
    }
    return nd ? v : -1;
}

/* Ranks writing to one console can run their lines together: every further "[Rank N] Watchdog
 * caught collective operation timeout: WorkNCCL(SeqNum=S, OpType=OP" on the line is rank N's
 * own timeout (the match gave the first one, of rank first). */
static void more_watchdogs(dx_job_model *jm, const char *text, size_t len, int first)
{
    static const char key[] = "] Watchdog caught collective operation timeout: Work";
    const size_t kn = sizeof key - 1;
    const char *end = text + len, *k = memmem(text, len, key, kn); /* the match's own */
    while (k && (k = memmem(k + kn, (size_t)(end - k - kn), key, kn)) != NULL) {
        /* back to "[Rank N" just before the key */
        const char *d = k;
        while (d > text && d[-1] >= '0' && d[-1] <= '9' && k - d < 7)
            d--;
        if (d == k || d - text < 6 || memcmp(d - 6, "[Rank ", 6))
            continue;
        long long r = leading_ll(d, k);
        if (r == first || r >= DX_JOB_MAX_RANK)
            continue;
        dx_rank *x = dx_job_rank(jm, (int)r);
        if (!x || x->timed_out)
            continue;
        x->timed_out = 1;
        jm->nwatchdog++;
        const char *p = k + kn;
        const char *sq = NULL, *op = NULL, *nm = NULL;
        for (const char *q = p; q + 9 <= end && q < p + 80 && *q != ')'; q++) {
            if (!sq && !memcmp(q, "SeqNum=", 7))
                sq = q + 7;
            if (!op && !memcmp(q, "OpType=", 7))
                op = q + 7;
            if (!nm && !memcmp(q, "NumelIn=", 8))
                nm = q + 8;
        }
        x->timeout_seq = leading_ll(sq, end);
        x->timeout_numel = leading_ll(nm, end);
        if (op) {
            size_t n = 0;
            while (op + n < end && n < sizeof x->timeout_op - 1 &&
                   (op[n] == '_' || (op[n] >= 'A' && op[n] <= 'Z')))
                n++;
            memcpy(x->timeout_op, op, n);
            x->timeout_op[n] = '\0';
        }
    }
}

/* ==== extractors =========================================================================== */

enum {
    JX_WATCHDOG,
    JX_LAST_COMPLETED,
    JX_ROOT_CAUSE,
    JX_TABLE_RANK,
    JX_TABLE_EXITCODE,
    JX_GLOO_TIMEOUT,
    JX_EXCEPTION,
    JX_STEP_TIME,
    JX_DATA_TIME,
    JX_MEGATRON_ITER,
    JX_TQDM_SPEED,
    JX_DS_SAMPLES,
    JX_BLOCKING_WAIT,
    JX_PYSPY_THREAD,
    JX_PYSPY_FRAME,
    JX_FH_THREAD,
    JX_FH_FRAME,
    JX_PROGRESS,
    JX_TQDM_PROGRESS,
    JX_TB_FRAME,
    JX_MISMATCH,
    JX_AGENT_FAILED,
    JX_SRUN_TASK,
    JX_SPAWN_EXIT,
    JX_TABLE_HOST,
    JX_NCCL_INIT,
    JX_RESTART,
    JX_CLOSING,
    JX_WATCHDOG_LOOSE,
    JX_DUMP_FIRST,
    JX_DUMP_RECEIVED,
    JX_DUMP_OBSERVED,
    JX_MEG_STRAGGLER,
    JX_STEP_TOOK,
    JX_NCCL_COLL,
    JX_BAR_CUT,
    JX_WATCHDOG_RAN,
    JX_LONG_WORK,
    JX_RANK_BATCHES,
    JX_STACK_HEADER,
    JX_STACK_HEADER_RANK,
    JX_PYSPY_PROCESS,
    JX_TRAIN_DONE,
    JX_BAR_CLEARED,
    JX_WATCHDOG_WRAPPED,
    JX_PROCESS_FAILURE,
    JX_MEMBER,
    JX_STORE_BARRIER,
    JX_NT_HEADER,
    JX_NT_ROW,
    JX_NT_FAIL,
    JX_NT_DEVICE,
    JX_VIEW_SIZE,
    JX_NCCL_NET,
    JX_DS_KILLING,
    JX_SHARD_SIZES,
    JX_SMI_PROCESS,
    JX_GPUSTAT,
    JX_PHASE_VALIDATION,
    JX_PHASE_GENERATION,
    JX_PHASE_RAY_START,
    JX_BAR_ZERO
};

static const dx_signal extractors[] = {
    /* PyTorch ProcessGroupNCCL: SeqNum since 1.11, OpType alone before */
    [JX_WATCHDOG] = {"job-watchdog-timeout", DX_ROLE_NOISE, 0,
                     "\\[Rank (?<rank>\\d+)\\] Watchdog caught collective operation timeout: "
                     "Work\\w*\\((?:SeqNum=(?<seq>\\d+), )?OpType=(?<op>\\w+)"
                     "(?:, NumelIn=(?<numel>\\d+))?",
                     "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* 2.4-2.5 "last enqueued NCCL work: E, last completed NCCL work: C"; 2.6+ "last enqueued
     * work: E, last completed work: C" */
    [JX_LAST_COMPLETED] = {"job-last-completed", DX_ROLE_NOISE, 0,
                           "(?:(?<to>Timeout) at NCCL work: (?<seq>\\d+), )?"
                           "[Ll]ast enqueued (?:NCCL )?work: (?<enq>-?\\d+), last completed "
                           "(?:NCCL )?work: (?<done>-?\\d+)",
                           "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* torchelastic's ChildFailedError table */
    [JX_ROOT_CAUSE] = {"job-root-cause", DX_ROLE_NOISE, 0,
                       "Root Cause \\(first observed failure\\) ?:",
                       "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    [JX_TABLE_RANK] = {"job-table-rank", DX_ROLE_NOISE, 0,
                       "(?:^\\s*|\\b)rank\\s*:? ?(?<rank>\\d+) \\(local[_ ]rank: \\d+\\)",
                       "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    [JX_TABLE_EXITCODE] = {"job-table-exitcode", DX_ROLE_NOISE, 0,
                           "(?:^\\s*|\\))exitcode\\s*: (?<code>-?\\d+) \\(pid: (?<pid>\\d+)",
                           "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    /* gloo's own timeout (third_party/gloo/gloo/transport/tcp/unbound_buffer.cc) */
    [JX_GLOO_TIMEOUT] = {"job-gloo-timeout", DX_ROLE_NOISE, 0,
                         "Timed out waiting (?<ms>\\d+)ms for (?<op>recv|send) operation to "
                         "complete",
                         "third_party/gloo/gloo/transport/tcp/unbound_buffer.cc", 0},
    /* the last line of a Python traceback: "SomeError: message" */
    [JX_EXCEPTION] = {"job-exception", DX_ROLE_NOISE, 0,
                      "^(?<exc>[A-Za-z_][\\w.]*(?:Error|Exception|Interrupt))(?:: |$)",
                      "CPython traceback format", 0},
    /* step times as trainers print them: "step_time 0.25s", "iter_time: 0.3 s" */
    [JX_STEP_TIME] = {"job-step-time", DX_ROLE_NOISE, 0,
                      "\\b(?:step|iter|iteration|batch)_?time[=: ]+(?<s>\\d+(?:\\.\\d+)?) ?s\\b",
                      "common trainer step logs", 0},
    [JX_DATA_TIME] = {"job-data-time", DX_ROLE_NOISE, 0,
                      "\\bdata_?time[=: ]+(?<s>\\d+(?:\\.\\d+)?) ?s\\b", "common trainer step logs",
                      0},
    /* Megatron: "elapsed time per iteration (ms): 1234.5" */
    [JX_MEGATRON_ITER] = {"job-megatron-iter", DX_ROLE_NOISE, 0,
                          "elapsed time per iteration \\(ms\\): (?<ms>\\d+(?:\\.\\d+)?)",
                          "megatron/training/training.py", 0},
    /* tqdm: "10/100 [00:05<00:45,  2.00it/s]" or "3.50s/it]" */
    [JX_TQDM_SPEED] = {"job-tqdm-speed", DX_ROLE_NOISE, 0,
                       "(?:(?<ips>\\d+(?:\\.\\d+)?)it/s|(?<s>\\d+(?:\\.\\d+)?)s/it)[\\],]",
                       "tqdm progress bars (Hugging Face Trainer; Lightning adds ', loss=...')", 0},
    /* DeepSpeed timers: "SamplesPerSec=12.3" */
    [JX_DS_SAMPLES] = {"job-ds-samples", DX_ROLE_NOISE, 0, "SamplesPerSec=(?<sps>\\d+(?:\\.\\d+)?)",
                       "deepspeed/utils/timer.py", 0},
    /* the blocking-wait form: "[Rank 0] Work WorkNCCL(SeqNum=2109, OpType=_ALLGATHER_BASE,
     * NumelIn=40960, NumelOut=81920, Timeout(ms)=1800000) timed out in blocking wait" */
    [JX_BLOCKING_WAIT] = {"job-blocking-wait", DX_ROLE_NOISE, 0,
                          "Work Work\\w*\\((?:SeqNum=(?<seq>\\d+), )?OpType=(?<op>\\w+)"
                          "(?:, NumelIn=(?<numel>\\d+))?(?:[^()]|\\([^()]*\\))*\\) timed out "
                          "in blocking wait",
                          "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* py-spy dump: 'Thread 123 (active): "MainThread"' then '    fn (file.py:12)' */
    [JX_PYSPY_THREAD] =
        {"job-pyspy-thread", DX_ROLE_NOISE, 0,
         "^Thread (?:0x[0-9A-Fa-f]+|\\d+) \\((?:active|idle)[^)]*\\): \"MainThread\"",
         "py-spy dump output", 0},
    [JX_PYSPY_FRAME] = {"job-pyspy-frame", DX_ROLE_NOISE, 0,
                        "^ {4}(?<fn>[\\w.<>]+) \\((?<file>[^():]+):(?<line>\\d+)\\)",
                        "py-spy dump output", 0},
    /* faulthandler: 'Current thread 0x... (most recent call first):' then
     * '  File "x.py", line 12 in fn' */
    [JX_FH_THREAD] = {"job-faulthandler-thread", DX_ROLE_NOISE, 0,
                      "^(?:Current thread|Thread) 0x[0-9a-f]+ \\(most recent call first\\):",
                      "CPython faulthandler", 0},
    [JX_FH_FRAME] = {"job-faulthandler-frame", DX_ROLE_NOISE, 0,
                     "^ +File \"(?<file>[^\"]+)\", line (?<line>\\d+) in (?<fn>[\\w.<>]+)",
                     "CPython faulthandler", 0},
    /* progress as trainers print it: "step 3/6", "Step: 10/100", Megatron's
     * "iteration      100/    5000 |" */
    [JX_PROGRESS] = {"job-progress", DX_ROLE_NOISE, 0,
                     "\\b(?:[Ss]tep|[Ii]ter(?:ation)?|[Bb]atch)\\s*[:=]?\\s*\\[?\\s*(?<n>\\d+)\\s*/"
                     "\\s*(?<m>\\d+)\\b",
                     "common trainer step logs; megatron/training/training.py", 0},
    /* tqdm bars (Hugging Face Trainer, Lightning): "| 45/100 [00:05<00:06," */
    [JX_TQDM_PROGRESS] = {"job-tqdm-progress", DX_ROLE_NOISE, 0,
                          "\\|\\s*(?<n>\\d+)/(?<m>\\d+) \\[\\d", "tqdm progress bars", 0},
    /* a Python traceback frame: '  File "x.py", line 12, in fn' */
    [JX_TB_FRAME] = {"job-traceback-frame", DX_ROLE_NOISE, 0,
                     "File \"(?<file>[^\"]+)\", line \\d+, in (?<fn>[\\w.<>]+)[ \\t\\r]*$",
                     "CPython traceback format", 0},
    /* TORCH_DISTRIBUTED_DEBUG=DETAIL: "Rank 1 is running collective: CollectiveFingerPrint(
     * OpType=BROADCAST, ...), but Rank 0 is running collective: CollectiveFingerPrint(
     * OpType=ALLREDUCE, ..." (2.x adds SequenceNumber=N before OpType) */
    [JX_MISMATCH] = {"job-collective-mismatch", DX_ROLE_NOISE, 0,
                     "Rank (?<r1>\\d+) is running collective: CollectiveFingerPrint\\("
                     "(?:SequenceNumber=\\d+, )?OpType=(?<op1>\\w+).*?, but Rank (?<r2>\\d+) is "
                     "running collective: CollectiveFingerPrint\\((?:SequenceNumber=\\d+, )?"
                     "OpType=(?<op2>\\w+)",
                     "torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp", 0},
    /* torchelastic's agent: "failed (exitcode: -9) local_rank: 3 (pid: 180497) of binary" */
    [JX_AGENT_FAILED] = {"job-agent-failed", DX_ROLE_NOISE, 0,
                         "failed \\(exitcode: (?<code>-?\\d+)\\) local_rank: (?<rank>\\d+) "
                         "\\(pid: \\d+\\)",
                         "torch/distributed/elastic/multiprocessing/api.py", 0},
    /* Slurm: "srun: error: node12: task 5: Exited with exit code 1" (the others: "Killed") */
    [JX_SRUN_TASK] = {"job-srun-task", DX_ROLE_NOISE, 0,
                      "srun: error: \\S+: task (?<rank>\\d+): Exited with exit code (?<code>\\d+)",
                      "slurm src/srun (task exit report)", 0},
    /* torch.multiprocessing.spawn: "process 1 terminated with signal SIGKILL" / "process 0
     * terminated with exit code 1" */
    [JX_SPAWN_EXIT] = {"job-spawn-exit", DX_ROLE_NOISE, 0,
                       "ProcessExitedException: process (?<rank>\\d+) terminated with (?:signal "
                       "(?<sig>SIG[A-Z]+)|exit code (?<code>\\d+))",
                       "torch/multiprocessing/spawn.py", 0},
    [JX_TABLE_HOST] = {"job-table-host", DX_ROLE_NOISE, 0, "^\\s*host\\s*: (?<host>[\\w.-]+)\\s*$",
                       "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    /* NCCL: "node1:1234:1234 [3] NCCL INFO ncclCommInitRank comm 0x55 rank 3 nranks 8 cudaDev 3
     * nvmlDev 3 busId 1c000 commId 0x.. - Init COMPLETE" (the function name since 2.19) */
    [JX_NCCL_INIT] =
        {"job-nccl-init", DX_ROLE_NOISE, 0,
         "(?<host>[\\w.-]+):(?<pid>\\d+):\\d+ \\[\\d+\\] NCCL INFO (?:\\w+ )?comm 0x[0-9a-f]+ "
         "rank (?<rank>\\d+) nranks (?<n>\\d+) cudaDev (?<dev>\\d+)(?: nvmlDev \\d+)? "
         "busId (?<bus>[0-9a-f]+)",
         "nccl src/init.cc", 0},
    /* torchelastic's agent: "[default] Worker group FAILED. 2/3 attempts left; will restart
     * worker group" */
    [JX_RESTART] = {"job-restart", DX_ROLE_NOISE, 0,
                    "Worker group \\w+\\. (?<left>\\d+)/(?<max>\\d+) attempts left; will restart "
                    "worker group|\\brestart_count=(?<count>\\d+)|"
                    "\\bCycle: (?<cycle>\\d+) Event: \\w+ Node: ",
                    "torch/distributed/elastic/agent/server/api.py; nvidia-resiliency-ext's "
                    "ft_launcher, nvidia_resiliency_ext/shared_utils/profiling.py ('  - Cycle: N "
                    "Event: failure_detected Node: ... Rank: ... Time: ... UTC', N counting the "
                    "failures detected)",
                    0},
    [JX_CLOSING] = {"job-closing-signal", DX_ROLE_NOISE, 0,
                    "Sending process \\d+ closing signal SIG[A-Z]+",
                    "torch/distributed/elastic/multiprocessing/api.py", 0},
    /* the watchdog line with other output interleaved into its first words (ranks writing to
     * one console): the work description after "...ion timeout: " is still intact */
    [JX_WATCHDOG_LOOSE] = {"job-watchdog-timeout-loose", DX_ROLE_NOISE, 0,
                           "ion timeout: Work\\w*\\((?:SeqNum=(?<seq>\\d+), )?OpType=(?<op>\\w+)"
                           "(?:, NumelIn=(?<numel>\\d+))?",
                           "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* PyTorch 2.4+: the rank whose own watchdog fired first broadcasts a dump signal; the
     * others report observing it */
    [JX_DUMP_FIRST] = {"job-dump-first", DX_ROLE_NOISE, 0,
                       "First PG on this rank to signal dumping",
                       "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    [JX_DUMP_RECEIVED] = {"job-dump-received", DX_ROLE_NOISE, 0,
                          "Received a dump signal due to a collective timeout from (?:this local "
                          "rank|rank (?<from>\\d+))",
                          "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    [JX_DUMP_OBSERVED] = {"job-dump-observed", DX_ROLE_NOISE, 0,
                          "Observed flight recorder dump signal from another rank",
                          "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* Megatron's straggler detector: "| MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | ...
     * | MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8" (min/max over all ranks, with the rank) */
    [JX_MEG_STRAGGLER] = {"job-megatron-straggler", DX_ROLE_NOISE, 0,
                          "MnRtt/Rnk: (?<mnrtt>[\\d.]+)ms/(?<mnr>\\d+) \\| MxRtt/Rnk: "
                          "(?<mxrtt>[\\d.]+)ms/(?<mxr>\\d+)(?:.*?MnEtpt/Rnk: (?<mne>[\\d.]+)TF/"
                          "(?<mner>\\d+) \\| MxEtpt/Rnk: (?<mxe>[\\d.]+)TF/\\d+)?",
                          "megatron/core/utils.py (StragglerDetector.report)", 0},
    /* generic step logs: "step 120 ... time 0.52s", "Step 3: loss=1.2, took 1.8 sec" */
    [JX_STEP_TOOK] =
        {"job-step-took", DX_ROLE_NOISE, 0,
         "\\b[Ss]tep:? \\d+\\b[^\\n]*?\\b(?:time|took|elapsed)[=: ]+(?<s>\\d+(?:\\.\\d+)?) ?"
         "s(?:ec(?:onds?)?)?\\b",
         "common trainer step logs", 0},
    /* NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL: "host:pid:tid [dev] NCCL INFO Broadcast: opCount 0
     * sendbuff 0x.. recvbuff 0x.. count 53 datatype 4 op 0 root 0 comm 0x.. [nranks=8] stream" */
    [JX_NCCL_COLL] =
        {"job-nccl-coll", DX_ROLE_NOISE, 0,
         "(?<host>[\\w.-]+):(?<pid>\\d+):\\d+ \\[(?<dev>\\d+)\\] NCCL INFO "
         "(?<op>AllReduce|Broadcast|AllGather|ReduceScatter|Reduce|Send|Recv|AllToAll): "
         "opCount (?<oc>[0-9a-f]+) sendbuff \\S+ recvbuff \\S+ count (?<count>\\d+) "
         "datatype (?<dt>\\d+)",
         "nccl src/enqueue.cc (collective INFO line)", 0},
    /* a tqdm bar left unfinished when the process group reports a failed collective on the same
     * console line: that rank was busy in a long loop (evaluation, preprocessing, saving) */
    [JX_BAR_CUT] =
        {"job-bar-cut", DX_ROLE_NOISE, 0,
         "\\b\\d{1,2}%\\|[^|]*\\| *\\d+/\\d+ \\[[^\\]]*\\](?:\\[E |\\[rank\\d+\\]:\\[E|"
         "\\[E\\d{4} )",
         "tqdm progress bars; torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp log prefix", 0},
    /* how long the timed-out collective ran: with the line's time, when it started */
    [JX_WATCHDOG_RAN] =
        {"job-watchdog-ran", DX_ROLE_NOISE, 0,
         "Watchdog caught collective operation timeout: Work\\w*\\((?:[^()]|\\([^()]*\\))*"
         "\\) ran for "
         "(?<ms>\\d+) milliseconds before timing",
         "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* a rank announcing long work of its own (saving, evaluating, loading, preprocessing) */
    [JX_LONG_WORK] =
        {"job-long-work", DX_ROLE_NOISE, 0,
         "\\b(?:[Ss]aving (?:the )?(?:latest |best |final )?(?:model |sharded )?checkpoint|"
         "[Ss]aving model (?:checkpoint )?to|[Rr]unning [Ee]valuation|[Ss]tart(?:ing)? "
         "(?:of )?[Ee]valuation|[Ss]tart of validation)\\b",
         "common trainer logs (Hugging Face Trainer 'Saving model checkpoint to', "
         "'***** Running Evaluation *****')",
         0},
    /* per-rank data sizes people print when a job hangs: "Rank = 2, Number of batches 8",
     * "rank 0: len(dataloader)=120" */
    [JX_RANK_BATCHES] =
        {"job-rank-batches", DX_ROLE_NOISE, 0,
         "\\b[Rr]ank\\s*[=:]?\\s*(?<rank>\\d+)\\b[,:]?\\s*(?:[Nn]umber of batches|"
         "num_batches|len\\((?:train_)?dataloader\\)|batches per epoch)\\s*[=:]?\\s*"
         "(?<m>\\d+)",
         "per-rank data sizes printed by training scripts", 0},
    /* who a posted stack dump belongs to, when its lines carry no rank prefix: a heading such
     * as "The stack for rank0:" / "py-spy dump of rank 3" / "Rank 5:" on its own line, or
     * py-spy's own first line, "Process 4242: python train.py --local_rank=1" */
    [JX_STACK_HEADER] = {"job-stack-header", DX_ROLE_NOISE, 0,
                         "^(?:[Tt]he )?(?:[Pp]y-?[Ss]py |[Pp]ython |[Mm]ain[- ]thread )?"
                         "(?:[Ss]tack|[Dd]ump|[Tt]race(?:back)?)s? (?:of|for|from|on) "
                         "(?:global )?[Rr]ank ?(?<rank>\\d+)\\b",
                         "stack dumps as posted in reports", 0},
    [JX_STACK_HEADER_RANK] =
        {"job-stack-header-rank", DX_ROLE_NOISE, 0,
         "^[Rr]ank ?(?<rank>\\d+)(?: (?:stack|py-spy dump|dump|trace))? ?:? *$",
         "stack dumps as posted in reports", 0},
    [JX_PYSPY_PROCESS] = {"job-pyspy-process", DX_ROLE_NOISE, 0,
                          "^Process \\d+: [^\\n]*--local[_-]rank[= ](?<rank>\\d+)",
                          "py-spy dump output (first line: the process and its command line)", 0},
    /* trainers announcing the end of training */
    [JX_TRAIN_DONE] = {"job-train-done", DX_ROLE_NOISE, 0,
                       "`Trainer\\.fit` stopped: `max_(?:epochs|steps)=[^`\\s]+` reached|"
                       "Training completed\\. Do not forget to share your model",
                       "lightning/pytorch/loops/fit_loop.py (rank_zero_info); "
                       "transformers/trainer.py (_inner_training_loop)",
                       0},
    /* a bar closed with leave=False: tqdm overwrites it with spaces */
    [JX_BAR_CLEARED] = {"job-bar-cleared", DX_ROLE_NOISE, 0, "^ {20,}\\r?$",
                        "tqdm (std.py close(): the bar's line blanked when leave=False)", 0},
    /* the watchdog message wrapped after its first words (a terminal or a reporter's paste):
     * the work description follows on the next line */
    [JX_WATCHDOG_WRAPPED] = {"job-watchdog-wrapped", DX_ROLE_NOISE, 0,
                             "\\[Rank (?<rank>\\d+)\\] Watchdog caught collective operation "
                             "timeout:[ \\t\\r]*$",
                             "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* torchelastic's RunResult.failures as printed (a dict by global rank): "{0:
     * ProcessFailure(local_rank=0, pid=54, exitcode=-7, ...)}" */
    [JX_PROCESS_FAILURE] = {"job-process-failure", DX_ROLE_NOISE, 0,
                            "\\b(?<rank>\\d+): ProcessFailure\\(local_rank=\\d+, pid=\\d+, "
                            "exitcode=(?<code>-?\\d+)",
                            "torch/distributed/elastic/multiprocessing/errors/__init__.py "
                            "(ProcessFailure, a dataclass: its repr)",
                            0},
    /* Lightning's process-group set-up, one line per process: "Initializing distributed:
     * GLOBAL_RANK: 1, MEMBER: 2/4" (2.x; "initializing ddp: ..." in 1.x) */
    [JX_MEMBER] = {"job-member", DX_ROLE_NOISE, 0,
                   "(?:[Ii]nitializing distributed|initializing ddp): GLOBAL_RANK: (?<g>\\d+), "
                   "MEMBER: \\d+/(?<n>\\d+)",
                   "lightning/fabric/strategies/ddp.py, lightning/pytorch/strategies/ddp.py "
                   "(_setup_distributed logs it; pytorch_lightning/plugins/training_type/ddp.py "
                   "in 1.x)",
                   0},
    /* process-group set-up counting the processes that checked in: "Waiting in store based
     * barrier to initialize process group for rank: 2, key: store_based_barrier_key:2
     * (world_size=8, worker_count=7, timeout=0:30:00)", and its timeout */
    [JX_STORE_BARRIER] = {"job-store-barrier", DX_ROLE_NOISE, 0,
                          "store based barrier [^(]*\\(world_size=(?<w>\\d+), "
                          "(?:worker_count|num_workers_joined)=(?<j>\\d+)",
                          "torch/distributed/distributed_c10d.py (_store_based_barrier; "
                          "worker_count up to 1.13, num_workers_joined in 2.0)",
                          0},
    /* nccl-tests (all_reduce_perf, ...): the result table's header, its rows, its failures and
     * its device list; a header with no row after it means the first collective never ended */
    [JX_NT_HEADER] =
        {"job-nccltests-header", DX_ROLE_NOISE, 0,
         "\\b(?:size|bytes)\\s+(?:count|N)\\s+type\\s+(?:redop|op)\\b",
         "nccl-tests src/common.cu (the table header: '#  size  count  type  redop  root  "
         "time  algbw  busbw #wrong ...'; 'bytes N type op time ...' before 2.0; the columns "
         "after the operation are not required, as a pasted header is often cut there)",
         0},
    [JX_NT_ROW] = {"job-nccltests-row", DX_ROLE_NOISE, 0,
                   "\\b\\d+\\s+\\d+\\s+(?:float|half|double|bfloat16|int8|uint8|int32|uint32|"
                   "int64|uint64|fp8_e4m3|fp8_e5m2)\\s+(?:sum|prod|max|min|avg|mulsum|none)\\s",
                   "nccl-tests src/common.cu (a result row: size, count, type, redop, ...)", 0},
    [JX_NT_FAIL] =
        {"job-nccltests-fail", DX_ROLE_NOISE, 0, "Test (?:NCCL |CUDA )?failure \\S+:\\d+",
         "nccl-tests src/common.h (NCCLCHECK/CUDACHECK: 'Test NCCL failure common.cu:N')", 0},
    [JX_NT_DEVICE] =
        {"job-nccltests-device", DX_ROLE_NOISE, 0,
         "Rank\\s+\\d+ (?:Group\\s+\\d+ )?(?:Pid\\s+\\d+ on\\s+(?<host>\\S+) "
         "device|uses device)\\s+\\d+ \\[",
         "nccl-tests src/common.cu (the device list: '#  Rank  0 Group  0 Pid 587622 on "
         "host device  0 [0x21] ...'; 'Rank  0 uses device  0 [0x05] ...' before 2.0)",
         0},
    /* torch's view()/reshape() refusing a shape: "shape '[1, 21, 32, 128]' is invalid for input
     * of size 43008" (one dimension may be -1, inferred) */
    [JX_VIEW_SIZE] = {"job-view-size", DX_ROLE_NOISE, 0,
                      "shape '\\[(?<dims>-?\\d+(?:, -?\\d+){1,7})\\]' is invalid for input of "
                      "size (?<n>\\d+)",
                      "aten/src/ATen/InferSize.h (infer_size_impl: \"shape '[...]' is invalid for "
                      "input of size N\")",
                      0},
    /* the network transport each NCCL process chose */
    [JX_NCCL_NET] = {"job-nccl-net", DX_ROLE_NOISE, 0,
                     "NCCL INFO Using network (?<net>IB|Socket)\\b",
                     "nccl src/net.cc, src/init.cc (INFO \"Using network %s\")", 0},
    /* the DeepSpeed launcher tearing its workers down after one exited */
    [JX_DS_KILLING] = {"job-ds-killing", DX_ROLE_NOISE, 0,
                       "\\[launch\\.py:\\d+:sigkill_handler\\] Killing subprocess \\d+",
                       "deepspeed/launcher/launch.py (sigkill_handler)", 0},
    /* an elementwise op on two 1-D tensors of different sizes (an optimizer step or a load
     * combining a saved flat shard with a new one) */
    [JX_SHARD_SIZES] = {"job-shard-sizes", DX_ROLE_NOISE, 0,
                        "The size of tensor a \\((?<a>\\d{5,})\\) must match the size of tensor "
                        "b \\((?<b>\\d{5,})\\) at non-singleton dimension 0",
                        "aten/src/ATen/ExpandUtils.cpp (infer_size_impl: \"The size of tensor a "
                        "(A) must match the size of tensor b (B) at non-singleton dimension D\")",
                        0},
    /* nvidia-smi's process table: "|    0   N/A  N/A   1234567      C   python    36804MiB |"
     * (GPU, GI and CI ids since the A100 drivers; GPU and PID alone before) */
    [JX_SMI_PROCESS] = {"job-smi-process", DX_ROLE_NOISE, 0,
                        "^\\|\\s+(?<gpu>\\d+)\\s+(?:N/A\\s+N/A\\s+|\\d+\\s+\\d+\\s+)?\\d+\\s+"
                        "(?:C|G|C\\+G|M|M\\+C)\\s+\\S.*\\s(?<mem>\\d+)MiB\\s*\\|",
                        "nvidia-smi (the Processes table)", 0},
    /* gpustat: "[0] NVIDIA A100-PCIE-40GB | 29'C,   0 % | 40176 / 40960 MB | user(36804M)" */
    [JX_GPUSTAT] = {"job-gpustat", DX_ROLE_NOISE, 0,
                    "^\\[(?<gpu>\\d+)\\] [^|]+\\|[^|]+\\| *\\d+ / +\\d+ MB \\|(?<procs>.*)$",
                    "gpustat (one line per GPU, its processes as user(memM))", 0},
    /* lines that start a phase; the phase a stuck job is in when one is its last line */
    [JX_PHASE_VALIDATION] = {"job-phase-validation", DX_ROLE_NOISE, 0,
                             "(?:\\bValidation DataLoader \\d+:|\\*{5} Running Evaluation \\*{5})",
                             "lightning src/lightning/pytorch/loops/progress bars (the validation "
                             "bar's description 'Validation DataLoader 0'); transformers "
                             "trainer.py evaluation_loop ('***** Running Evaluation *****')",
                             0},
    [JX_PHASE_GENERATION] = {"job-phase-generation", DX_ROLE_NOISE, 0,
                             "\\bGenerat(?:ing|e|ion)\\b[^|\\n]{0,40}: +0%\\|",
                             "a tqdm generation bar at 0% (TRL, DPO/PPO trainers and evaluation "
                             "scripts that sample from the policy)",
                             0},
    [JX_PHASE_RAY_START] = {"job-phase-ray-start", DX_ROLE_NOISE, 0,
                            "INFO trainer\\.py:\\d+ -- Trainer logs will be logged in: |"
                            "\\b[Ww]aiting for (?:the )?(?:\\w+ )?placement group\\b",
                            "ray python/ray/train/trainer.py (Ray 1.x Trainer.start, before the "
                            "worker group asks for its resources); the waits RL trainers log "
                            "before pg.ready() returns (verl 'Waiting for placement group to be "
                            "ready...', others 'to be created' or 'to be scheduled')",
                            0},
    /* a tqdm bar that has not completed one item: after NCCL set up its communicators, the
     * first work that needs them */
    [JX_BAR_ZERO] = {"job-bar-zero", DX_ROLE_NOISE, 0, "\\b0%\\|[^|]*\\| *0/\\d+ \\[",
                     "tqdm progress bars at 0/N", 0},
};

size_t dx_job_extractor_count(void) { return DX_ARRAY_LEN(extractors); }

const dx_signal *dx_job_extractor_signal(size_t i) { return &extractors[i]; }

static double cap_double(struct dx_scan *s, const char *name)
{
    dx_str v;
    char buf[32];
    if (!dx_scan_capture(s, name, &v) || !v.n || v.n >= sizeof buf)
        return -1;
    memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    return strtod(buf, NULL);
}

static void add_step(dx_job_model *jm, int rank, int kind, double seconds)
{
    dx_rank *x = dx_job_rank(jm, rank);
    if (!x || !(seconds >= 0) || seconds > 1e6)
        return;
    x->step[kind][x->nstep[kind] % DX_ARRAY_LEN(x->step[kind])] = (float)seconds;
    x->nstep[kind]++;
}

void dx_job_add_fr_work(void *jm_, int rank, double seconds)
{
    dx_job_model *jm = jm_;
    jm->steps_from_fr = 1;
    add_step(jm, rank, 0, seconds);
}

static long long cap_ll(struct dx_scan *s, const char *name, long long def)
{
    dx_str v;
    if (!dx_scan_capture(s, name, &v) || !v.n || v.n > 18)
        return def;
    long long n = 0;
    size_t i = 0;
    int neg = v.p[0] == '-';
    for (i = neg; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return def;
        n = n * 10 + (v.p[i] - '0');
    }
    return neg ? -n : n;
}

/* Is fn one of torch.distributed's collectives (or a wait on one)? */
static int is_collective_fn(const dx_str *fn)
{
    static const char *const names[] = {"all_reduce",
                                        "all_gather",
                                        "all_gather_into_tensor",
                                        "_all_gather_base",
                                        "broadcast",
                                        "barrier",
                                        "monitored_barrier",
                                        "reduce_scatter",
                                        "reduce_scatter_tensor",
                                        "_reduce_scatter_base",
                                        "all_to_all",
                                        "all_to_all_single",
                                        "reduce",
                                        "gather",
                                        "scatter",
                                        "all_gather_object",
                                        "broadcast_object_list",
                                        "gather_object",
                                        "scatter_object_list",
                                        "send",
                                        "recv",
                                        "isend",
                                        "irecv",
                                        "batch_isend_irecv"};
    for (size_t i = 0; i < DX_ARRAY_LEN(names); i++)
        if (strlen(names[i]) == fn->n && !memcmp(names[i], fn->p, fn->n))
            return 1;
    return 0;
}

/* Is a stack frame a collective or a wait on one? ("wait" only in torch.distributed's own
 * files: the standard library's threading wait is not a collective; "synchronize" only CUDA's) */
static int frame_in_collective(const dx_str *fn, const dx_str *file)
{
    if (is_collective_fn(fn))
        return 1;
    if (fn->n == 4 && !memcmp(fn->p, "wait", 4))
        return memmem(file->p, file->n, "distributed", 11) != NULL;
    if (fn->n == 11 && !memcmp(fn->p, "synchronize", 11))
        return memmem(file->p, file->n, "cuda", 4) != NULL;
    return 0;
}

/* A view that asks for exactly k times the elements its tensor holds (k from 2 to 64): every
 * stated dimension fits the full model but the tensor is a 1/k shard, as when attention heads are
 * split k ways by tensor parallelism and the view still counts them all. With an inferred (-1)
 * dimension the known dimensions' product is then k times the size: a fraction of one head. */
static int view_size(dx_job_model *jm, struct dx_scan *s)
{
    dx_str d;
    char dims[128];
    long long n = cap_ll(s, "n", -1);
    if (jm->view_shard || n <= 0 || !dx_scan_capture(s, "dims", &d) || !d.n || d.n >= sizeof dims)
        return DDX_OK;
    memcpy(dims, d.p, d.n);
    dims[d.n] = 0;
    long long prod = 1;
    int infer = 0;
    for (char *p = dims, *e; *p; p = e) {
        while (*p == ',' || *p == ' ')
            p++;
        long long v = strtoll(p, &e, 10);
        if (e == p || v > (INT64_C(1) << 40))
            return DDX_OK;
        if (v < 0) {
            if (v != -1 || infer++)
                return DDX_OK;
        } else if (v == 0 || prod > (INT64_C(1) << 50) / v) {
            return DDX_OK;
        } else {
            prod *= v;
        }
    }
    if (prod <= n || prod % n)
        return DDX_OK;
    long long k = prod / n;
    if (k < 2 || k > 64)
        return DDX_OK;
    jm->view_shard = (int)k;
    snprintf(jm->view_shape, sizeof jm->view_shape, "[%.*s]",
             (int)(d.n < sizeof jm->view_shape - 3 ? d.n : sizeof jm->view_shape - 3), d.p);
    return DDX_OK;
}

/* Two flat shards of one parameter group from different world sizes: FSDP pads a flat
 * parameter to a multiple of the world size and gives each rank ceil(N / W) elements, so a
 * shard from W ranks is k times one from k*W ranks, less than k elements short. Sizes of 10^4
 * elements and up (the dimension-0 size of a whole flat shard, not of a layer). */
static int shard_sizes(dx_job_model *jm, struct dx_scan *s)
{
    long long a = cap_ll(s, "a", -1), b = cap_ll(s, "b", -1);
    if (jm->shard_ratio || a < 10000 || b < 10000 || a == b)
        return DDX_OK;
    long long big = a > b ? a : b, small = a > b ? b : a;
    long long k = (big + small / 2) / small;
    if (k < 2 || k > 64 || llabs(big - k * small) >= k)
        return DDX_OK;
    jm->shard_ratio = (int)k;
    snprintf(jm->shard_sizes, sizeof jm->shard_sizes, "%lld and %lld", a, b);
    return DDX_OK;
}

/* A traceback frame: remember the innermost frame outside torch; the first time a rank's
 * traceback enters a collective of distributed_c10d, record the collective and that caller. */
static int tb_frame(dx_job_model *jm, struct dx_scan *s, int rank)
{
    dx_rank *x = dx_job_rank(jm, rank);
    dx_str file, fn;
    if (!x || !dx_scan_capture(s, "file", &file) || !dx_scan_capture(s, "fn", &fn))
        return DDX_OK;
    int in_torch = memmem(file.p, file.n, "/torch/", 7) != NULL;
    if (!in_torch) {
        size_t n = fn.n < sizeof x->tb_caller - 1 ? fn.n : sizeof x->tb_caller - 1;
        memcpy(x->tb_caller, fn.p, n);
        x->tb_caller[n] = '\0';
        return DDX_OK;
    }
    if (x->coll || !memmem(file.p, file.n, "distributed_c10d.py", 19) || !is_collective_fn(&fn))
        return DDX_OK;
    if (!(x->coll = dx_strndup(fn.p, fn.n)))
        return DDX_ENOMEM;
    if (x->tb_caller[0] && !(x->coll_caller = dx_strdup(x->tb_caller)))
        return DDX_ENOMEM;
    return DDX_OK;
}

int dx_job_hit(dx_job_model *jm, size_t i, struct dx_scan *s, int rank, const char *path,
               uint64_t line, const char *text, size_t len, uint64_t seq)
{
    switch (i) {
    case JX_BAR_CLEARED:
        if (rank < 0 && !jm->nwatchdog && jm->bar0_before[0])
            jm->bar0_closed = 1;
        return DDX_OK;
    case JX_TRAIN_DONE:
        snprintf(jm->done_what, sizeof jm->done_what, "the trainer's end-of-training message");
        return DDX_OK;
    case JX_WATCHDOG:
    case JX_WATCHDOG_LOOSE:
    case JX_WATCHDOG_WRAPPED:
    case JX_BLOCKING_WAIT: {
        /* "[Rank N]" is the rank within the process group (a pipeline or tensor-parallel
         * subgroup has its own numbering): the line's prefix or file gives the global rank */
        long long r = rank >= 0 ? rank : cap_ll(s, "rank", -1);
        dx_rank *x = dx_job_rank(jm, (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1));
        if (!x)
            return DDX_OK;
        jm->nwatchdog++;
        if (jm->done_what[0] && !jm->after_done_why[0]) {
            snprintf(jm->after_done_why, sizeof jm->after_done_why,
                     "rank %d's collective timed "
                     "out after %s (the end of a loop: saving, evaluation or the next epoch "
                     "follows)",
                     x->rank, jm->done_what);
            jm->after_done_rank = x->rank;
        }
        if (!x->timed_out) {
            x->timed_out = 1;
            x->timeout_seq = cap_ll(s, "seq", -1);
            x->timeout_numel = cap_ll(s, "numel", -1);
            dx_str op;
            if (dx_scan_capture(s, "op", &op)) {
                size_t n = op.n < sizeof x->timeout_op - 1 ? op.n : sizeof x->timeout_op - 1;
                memcpy(x->timeout_op, op.p, n);
                x->timeout_op[n] = '\0';
            }
        }
        if (i == JX_WATCHDOG)
            more_watchdogs(jm, text, len, x->rank);
        return DDX_OK;
    }
    case JX_LAST_COMPLETED: {
        dx_rank *x = dx_job_rank(jm, rank);
        if (x && !x->has_last_completed) {
            x->last_completed = cap_ll(s, "done", -1);
            x->last_enqueued = cap_ll(s, "enq", -1);
            x->has_last_completed = 1;
        }
        /* "Timeout at NCCL work: N" (2.4+) says the rank timed out even when its watchdog
         * line is not in the inputs */
        dx_str to;
        if (x && !x->timed_out && dx_scan_capture(s, "to", &to) && to.n) {
            x->timed_out = 1;
            x->timeout_seq = cap_ll(s, "seq", -1);
        }
        return DDX_OK;
    }
    case JX_ROOT_CAUSE:
        jm->rc_lines_left = 8;
        return DDX_OK;
    case JX_TABLE_HOST: {
        dx_str h;
        if (dx_scan_capture(s, "host", &h))
            snprintf(jm->table_host, sizeof jm->table_host, "%.*s", (int)h.n, h.p);
        return DDX_OK;
    }
    case JX_NCCL_INIT: {
        int n = (int)cap_ll(s, "n", -1);
        if (n > jm->nccl_nranks)
            jm->nccl_nranks = n;
        /* the rank in the line is the rank within that communicator: trust it only for the
         * largest one (the world), else use the rank the line's prefix or file gives */
        int r = rank >= 0 ? rank : n == jm->nccl_nranks ? (int)cap_ll(s, "rank", -1) : -1;
        dx_rank *x = dx_job_rank(jm, r);
        dx_str h, bus;
        if (!x || x->host[0] || !dx_scan_capture(s, "host", &h))
            return DDX_OK;
        snprintf(x->host, sizeof x->host, "%.*s", (int)h.n, h.p);
        x->cuda_dev = (int)cap_ll(s, "dev", -1);
        x->pid = cap_ll(s, "pid", -1);
        if (dx_scan_capture(s, "bus", &bus))
            snprintf(x->bus_id, sizeof x->bus_id, "%.*s", (int)bus.n, bus.p);
        return DDX_OK;
    }
    case JX_DUMP_FIRST:
    case JX_DUMP_RECEIVED:
    case JX_DUMP_OBSERVED: {
        dx_rank *x = dx_job_rank(jm, rank);
        long long from = i == JX_DUMP_RECEIVED ? cap_ll(s, "from", -1) : -1;
        if (from >= 0 && from < DX_JOB_MAX_RANK && jm->dump_from < 0)
            jm->dump_from = (int)from;
        if (!x)
            return DDX_OK;
        if (i == JX_DUMP_OBSERVED)
            x->dump_observed = 1;
        else if (from < 0)
            x->dump_first = 1;
        return DDX_OK;
    }
    case JX_MEG_STRAGGLER: {
        /* the slowest rank of this report: the lowest throughput when given, else the longest
         * round-trip; it counts when it is below 0.75 of the best */
        double mne = cap_double(s, "mne"), mxe = cap_double(s, "mxe");
        double mnrtt = cap_double(s, "mnrtt"), mxrtt = cap_double(s, "mxrtt");
        long long slow = -1;
        double ratio = 1;
        if (mne > 0 && mxe > 0) {
            if ((ratio = mne / mxe) < 0.75)
                slow = cap_ll(s, "mner", -1);
        } else if (mnrtt > 0 && mxrtt > 0 && (ratio = mnrtt / mxrtt) < 0.75)
            slow = cap_ll(s, "mxr", -1);
        jm->meg_reports++;
        if (mne > 0 && mxe > 0 && 1 - mne / mxe > jm->meg_etpt_spread)
            jm->meg_etpt_spread = 1 - mne / mxe;
        if (mnrtt > 0 && mxrtt > 0 && mxrtt / mnrtt - 1 > jm->meg_rtt_spread)
            jm->meg_rtt_spread = mxrtt / mnrtt - 1;
        dx_rank *x = dx_job_rank(jm, (int)(slow >= 0 && slow < DX_JOB_MAX_RANK ? slow : -1));
        if (x) {
            x->meg_votes++;
            if (ratio > x->meg_ratio)
                x->meg_ratio = ratio;
        }
        return DDX_OK;
    }
    case JX_STEP_TOOK:
        /* (a line that also carries step_time= is counted once, by that extractor) */
        if (!memmem(text, len, "_time", 5))
            add_step(jm, rank, 0, cap_double(s, "s"));
        return DDX_OK;
    case JX_NCCL_COLL: {
        dx_str host, op, ocs;
        if (!dx_scan_capture(s, "host", &host) || !dx_scan_capture(s, "op", &op) ||
            !dx_scan_capture(s, "oc", &ocs))
            return DDX_OK;
        if (!jm->coll_host[0])
            snprintf(jm->coll_host, sizeof jm->coll_host, "%.*s", (int)host.n, host.p);
        else if (strlen(jm->coll_host) != host.n || memcmp(jm->coll_host, host.p, host.n))
            jm->coll_multi_host = 1;
        /* the process: the rank the line's prefix or file gives, else the rank whose NCCL init
         * line had this pid, else (one host only) the CUDA device index */
        int r = rank;
        long long pid = cap_ll(s, "pid", -1);
        for (size_t k = 0; r < 0 && k < jm->nby; k++)
            if (jm->by_rank[k] && jm->by_rank[k]->pid == pid)
                r = (int)k;
        if (r < 0 && !jm->coll_multi_host)
            r = (int)cap_ll(s, "dev", -1);
        dx_rank *x = dx_job_rank(jm, r);
        if (!x || x->ncoll_sig >= (int)DX_ARRAY_LEN(x->coll_sig))
            return DDX_OK;
        char buf[24];
        snprintf(buf, sizeof buf, "%.*s", (int)(ocs.n < 20 ? ocs.n : 20), ocs.p);
        long long oc = strtoll(buf, NULL, 16);
        for (int k = 0; k < x->ncoll_sig; k++)
            if (x->coll_sig[k].oc == oc)
                return DDX_OK; /* the first call at an opCount is the one to compare */
        int k = x->ncoll_sig++;
        x->coll_sig[k].oc = oc;
        x->coll_sig[k].count = cap_ll(s, "count", -1);
        x->coll_sig[k].dt = (int)cap_ll(s, "dt", -1);
        snprintf(x->coll_sig[k].op, sizeof x->coll_sig[k].op, "%.*s", (int)op.n, op.p);
        return DDX_OK;
    }
    case JX_WATCHDOG_RAN:
        if (jm->line_has_time && jm->nwait < (int)DX_ARRAY_LEN(jm->wait)) {
            jm->wait[jm->nwait].t = jm->line_time;
            jm->wait[jm->nwait].rank = rank;
            jm->wait[jm->nwait].ran_ms = cap_ll(s, "ms", -1);
            jm->nwait++;
        }
        return DDX_OK;
    case JX_LONG_WORK:
        if (jm->line_has_time && jm->nwork < (int)DX_ARRAY_LEN(jm->work)) {
            jm->work[jm->nwork].t = jm->line_time;
            jm->work[jm->nwork].rank = rank;
            jm->nwork++;
        }
        return DDX_OK;
    case JX_RANK_BATCHES: {
        long long r = cap_ll(s, "rank", -1);
        dx_rank *x = dx_job_rank(jm, (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1));
        if (x)
            x->nbatches = cap_ll(s, "m", -1);
        return DDX_OK;
    }
    case JX_BAR_CUT:
        if (jm->busy_rank < 0)
            jm->busy_rank = rank >= 0 ? rank : 0;
        return DDX_OK;
    case JX_CLOSING:
        jm->closing++;
        return DDX_OK;
    case JX_RESTART: {
        /* "... attempts left; will restart" counts one restart; the rendezvous result's
         * "restart_count=N" says how many happened so far */
        long long n = cap_ll(s, "count", -1);
        if (n < 0)
            n = cap_ll(s, "cycle", -1); /* restart cycle N follows the N-th failure */
        if (n >= 0) {
            if (n > jm->restarts)
                jm->restarts = (int)n;
        } else {
            jm->restarts++;
            jm->max_restarts = (int)cap_ll(s, "max", 0);
        }
        return DDX_OK;
    }
    case JX_TABLE_RANK:
        jm->table_rank = (int)cap_ll(s, "rank", -1);
        if (jm->table_rank >= 0) {
            dx_rank *t = dx_job_rank(jm, jm->table_rank);
            if (t)
                t->in_table = 1;
        }
        if (jm->table_host[0] && jm->table_rank >= 0) {
            dx_rank *x = dx_job_rank(jm, jm->table_rank);
            if (x && !x->host[0])
                snprintf(x->host, sizeof x->host, "%s", jm->table_host);
            jm->table_host[0] = '\0';
        }
        if (jm->rc_lines_left > 0 && jm->rc_rank < 0) {
            jm->rc_rank = (int)cap_ll(s, "rank", -1);
            char buf[512];
            snprintf(buf, sizeof buf, "%s:%llu", path, (unsigned long long)line);
            dx_free(jm->rc_where);
            jm->rc_where = dx_strdup(buf);
        }
        return DDX_OK;
    case JX_TABLE_EXITCODE:
        if (jm->table_rank >= 0) {
            dx_rank *t = dx_job_rank(jm, jm->table_rank);
            if (t && t->pid < 0)
                t->pid = cap_ll(s, "pid", -1);
        }
        if (cap_ll(s, "code", 0) == -9 && jm->table_rank >= 0 && jm->killed_rank < 0)
            jm->killed_rank = jm->table_rank;
        if (jm->rc_lines_left > 0 && !jm->rc_has_exitcode) {
            jm->rc_exitcode = (int)cap_ll(s, "code", 0);
            jm->rc_has_exitcode = 1;
        }
        return DDX_OK;
    case JX_GLOO_TIMEOUT: {
        dx_rank *x = dx_job_rank(jm, rank);
        if (x && !x->timed_out) {
            x->timed_out = 1;
            dx_str op;
            if (dx_scan_capture(s, "op", &op))
                snprintf(x->timeout_op, sizeof x->timeout_op, "gloo %.*s", (int)op.n, op.p);
        }
        return DDX_OK;
    }
    case JX_EXCEPTION: {
        dx_str exc;
        /* the launchers' own exceptions report a child's failure, they are not one */
        static const char *const launcher_exc[] = {"ChildFailedError", "ProcessExitedException",
                                                   "CalledProcessError"};
        int launcher = 0;
        if (dx_scan_capture(s, "exc", &exc))
            for (size_t k = 0; k < DX_ARRAY_LEN(launcher_exc) && !launcher; k++) {
                size_t n = strlen(launcher_exc[k]);
                launcher = exc.n >= n && !memcmp(exc.p + exc.n - n, launcher_exc[k], n);
            }
        if (rank < 0 && !launcher)
            jm->unranked_exc++;
        if (!launcher)
            jm->worker_exc++;
        if (seq > jm->last_exc_seq)
            jm->last_exc_seq = seq;
        dx_rank *x = dx_job_rank(jm, rank);
        size_t n = len > 200 ? 200 : len;
        if (x && !x->first_exception) {
            x->first_exception = dx_strndup(text, n);
            x->first_exception_seq = seq;
            if (!x->first_exception)
                return DDX_ENOMEM;
        }
        /* the first exception that is the rank's own, not an echo of another's failure */
        char **orig = x ? &x->first_original : &jm->unranked_original;
        if (!launcher && !*orig && !dx_unrec_is_echo(text, len)) {
            if (!(*orig = dx_strndup(text, n)))
                return DDX_ENOMEM;
            *(x ? &x->first_original_seq : &jm->unranked_original_seq) = seq;
        }
        return DDX_OK;
    }
    case JX_STEP_TIME:
        add_step(jm, rank, 0, cap_double(s, "s"));
        return DDX_OK;
    case JX_DATA_TIME:
        add_step(jm, rank, 1, cap_double(s, "s"));
        return DDX_OK;
    case JX_MEGATRON_ITER:
        add_step(jm, rank, 0, cap_double(s, "ms") / 1000.0);
        return DDX_OK;
    case JX_TQDM_SPEED: {
        double ips = cap_double(s, "ips"), sec = cap_double(s, "s");
        if (ips > 0)
            add_step(jm, rank, 0, 1.0 / ips);
        else if (sec >= 0)
            add_step(jm, rank, 0, sec);
        return DDX_OK;
    }
    case JX_STACK_HEADER:
    case JX_STACK_HEADER_RANK:
    case JX_PYSPY_PROCESS: {
        long long r = cap_ll(s, "rank", -1);
        if (rank < 0 && r >= 0 && r < DX_JOB_MAX_RANK) {
            jm->hdr_rank = (int)r;
            jm->hdr_left = 6; /* the stack starts within a few lines of its heading */
        }
        return DDX_OK;
    }
    case JX_PYSPY_THREAD:
    case JX_FH_THREAD: {
        if (rank < 0 && jm->hdr_left > 0)
            rank = jm->hdr_rank;
        jm->stack_cur = rank;
        jm->hdr_left = 0;
        dx_rank *x = dx_job_rank(jm, rank);
        if (x && !x->waits_in)
            x->stack_pending = 1;
        return DDX_OK;
    }
    case JX_PYSPY_FRAME:
    case JX_FH_FRAME: {
        if (rank < 0)
            rank = jm->stack_cur;
        dx_rank *x = dx_job_rank(jm, rank);
        if (!x || !x->stack_pending)
            return DDX_OK;
        dx_str fn, file, ln;
        if (!dx_scan_capture(s, "fn", &fn) || !dx_scan_capture(s, "file", &file) ||
            !dx_scan_capture(s, "line", &ln)) {
            x->stack_pending = 0;
            return DDX_OK;
        }
        /* keep the file's last two path components: enough to read, short to print */
        const char *f = file.p + file.n;
        int slashes = 0;
        while (f > file.p && !(f[-1] == '/' && ++slashes == 3))
            f--;
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s (%.*s:%.*s)", (int)fn.n, fn.p, (int)(file.p + file.n - f),
                 f, (int)ln.n, ln.p);
        int lib = stdlib_wait_frame(file.p, file.n);
        if (!x->waits_in) {
            /* the innermost frame; when it is the standard library's waiting (a lock, a queue,
             * a socket), the first caller outside it says what the rank waits for */
            x->waits_in = dx_strdup(buf);
            if (!x->waits_in)
                return DDX_ENOMEM;
            x->waits_coll = frame_in_collective(&fn, &file);
            x->stack_pending = lib ? 8 : 0;
            return DDX_OK;
        }
        if (lib) {
            x->stack_pending--;
            return DDX_OK;
        }
        x->stack_pending = 0;
        x->waits_coll |= frame_in_collective(&fn, &file);
        size_t n = strlen(x->waits_in) + strlen(buf) + 16;
        char *w = dx_malloc(n);
        if (!w)
            return DDX_ENOMEM;
        snprintf(w, n, "%s, called from %s", x->waits_in, buf);
        dx_free(x->waits_in);
        x->waits_in = w;
        return DDX_OK;
    }
    case JX_PROGRESS:
    case JX_TQDM_PROGRESS: {
        dx_rank *x = dx_job_rank(jm, rank);
        long long n = cap_ll(s, "n", -1), m = cap_ll(s, "m", -1);
        if (x && n >= 0 && m > 0 && n <= m) {
            x->prog_n = n;
            x->prog_m = m;
            x->has_prog = 1;
        }
        /* an unprefixed bar before any timeout: trainers draw bars on rank 0 */
        if (rank < 0 && !jm->nwatchdog && n >= 0 && m > 0 && n <= m) {
            snprintf(jm->bar0_before, sizeof jm->bar0_before, "%lld/%lld", n, m);
            jm->bar0_closed = n == m;
        }
        if (n > 0 && n == m && !jm->done_what[0])
            snprintf(jm->done_what, sizeof jm->done_what, "a progress bar at %lld/%lld", n, m);
        return DDX_OK;
    }
    case JX_TB_FRAME:
        /* the latest frame read: a traceback that ends without its exception line was cut */
        if (seq > jm->last_frame_seq || !jm->last_frame[0]) {
            while (len && (*text == ' ' || *text == '\t')) {
                text++;
                len--;
            }
            size_t n = len < sizeof jm->last_frame - 1 ? len : sizeof jm->last_frame - 1;
            memcpy(jm->last_frame, text, n);
            jm->last_frame[n] = '\0';
            jm->last_frame_seq = seq;
            jm->last_frame_rank = rank;
        }
        return tb_frame(jm, s, rank);
    case JX_NT_HEADER:
        jm->nt_header = 1;
        jm->nt_rows = 0;
        return DDX_OK;
    case JX_NT_ROW:
        jm->nt_rows++;
        return DDX_OK;
    case JX_NT_FAIL:
        jm->nt_fail = 1;
        return DDX_OK;
    case JX_NT_DEVICE: {
        dx_str h;
        jm->nt_gpus++;
        if (dx_scan_capture(s, "host", &h) && h.n && h.n < sizeof jm->nt_host) {
            if (!jm->nt_host[0])
                snprintf(jm->nt_host, sizeof jm->nt_host, "%.*s", (int)h.n, h.p);
            else if (strlen(jm->nt_host) != h.n || memcmp(jm->nt_host, h.p, h.n))
                jm->nt_multi_host = 1;
        }
        return DDX_OK;
    }
    case JX_VIEW_SIZE:
        return view_size(jm, s);
    case JX_DS_KILLING:
        jm->ds_killing++;
        return DDX_OK;
    case JX_SHARD_SIZES:
        return shard_sizes(jm, s);
    case JX_SMI_PROCESS:
    case JX_GPUSTAT: {
        long long g = cap_ll(s, "gpu", -1);
        if (g < 0 || g >= (long long)sizeof jm->gpu_big)
            return DDX_OK;
        jm->gpu_listed[g] = 1;
        if (i == JX_SMI_PROCESS) {
            if (cap_ll(s, "mem", 0) >= 1024 && jm->gpu_big[g] < 255)
                jm->gpu_big[g]++;
            return DDX_OK;
        }
        /* gpustat's process list: name(NNNNM) entries */
        dx_str p;
        if (!dx_scan_capture(s, "procs", &p))
            return DDX_OK;
        for (size_t k = 0; k + 1 < p.n; k++) {
            if (p.p[k] != '(')
                continue;
            long long mb = 0;
            size_t j = k + 1;
            while (j < p.n && p.p[j] >= '0' && p.p[j] <= '9' && mb < 10000000)
                mb = mb * 10 + (p.p[j++] - '0');
            if (j < p.n && p.p[j] == 'M' && j + 1 < p.n && p.p[j + 1] == ')' && mb >= 1024 &&
                jm->gpu_big[g] < 255)
                jm->gpu_big[g]++;
        }
        return DDX_OK;
    }
    case JX_BAR_ZERO:
        /* only after NCCL communicators came up, and not over a line that names its phase */
        if (!jm->nccl_nranks || (jm->phase_seq == seq && jm->phase_last))
            return DDX_OK;
        /* fall through */
    case JX_PHASE_VALIDATION:
    case JX_PHASE_GENERATION:
    case JX_PHASE_RAY_START:
        jm->phase = i == JX_PHASE_VALIDATION   ? DX_PHASE_VALIDATION
                    : i == JX_PHASE_GENERATION ? DX_PHASE_GENERATION
                    : i == JX_PHASE_RAY_START  ? DX_PHASE_RAY_START
                                               : DX_PHASE_FIRST_COLLECTIVE;
        jm->phase_seq = seq;
        jm->phase_last = 1;
        jm->phase_len = len < sizeof jm->phase_text ? len : sizeof jm->phase_text;
        memcpy(jm->phase_text, text, jm->phase_len);
        snprintf(jm->phase_where, sizeof jm->phase_where, "%s:%llu", path,
                 (unsigned long long)line);
        return DDX_OK;
    case JX_NCCL_NET: {
        dx_str net;
        if (dx_scan_capture(s, "net", &net) && net.n)
            jm->nets |= net.p[0] == 'I' ? 1 : 2;
        return DDX_OK;
    }
    case JX_MEMBER: {
        /* each process announces its global rank once: a rank announced twice was taken by two
         * processes (each launcher task started its own set), and the world never completes */
        long long g = cap_ll(s, "g", -1);
        if (g >= 0 && g < (long long)sizeof jm->members) {
            if (jm->members[g] < 255)
                jm->members[g]++;
            jm->member_world = (int)cap_ll(s, "n", 0);
        }
        return DDX_OK;
    }
    case JX_STORE_BARRIER: {
        /* the most processes any waiting rank saw checked in: the final count */
        long long w = cap_ll(s, "w", -1), j = cap_ll(s, "j", -1);
        if (w > 0 && j >= 0 && j <= w && w <= INT_MAX) {
            if (w != jm->barrier_world)
                jm->barrier_joined = 0;
            jm->barrier_world = (int)w;
            if (j > jm->barrier_joined)
                jm->barrier_joined = (int)j;
        }
        return DDX_OK;
    }
    case JX_PROCESS_FAILURE:
        jm->launcher_report = 1;
        /* fall through */
    case JX_AGENT_FAILED: {
        int r = (int)cap_ll(s, "rank", -1);
        if (r >= 0 && r != jm->agent_rank) {
            if (jm->agent_rank < 0) {
                jm->agent_rank = r;
                jm->agent_code = (int)cap_ll(s, "code", 0);
            }
            jm->nagent++;
        }
        return DDX_OK;
    }
    case JX_SPAWN_EXIT: {
        int r = (int)cap_ll(s, "rank", -1);
        jm->launcher_report = 1;
        dx_str sig;
        int code = (int)cap_ll(s, "code", 1);
        if (dx_scan_capture(s, "sig", &sig) && sig.n) {
            static const struct {
                const char *name;
                int num;
            } sigs[] = {
                {"SIGKILL", 9}, {"SIGSEGV", 11}, {"SIGABRT", 6}, {"SIGBUS", 7}, {"SIGTERM", 15}};
            code = -1;
            for (size_t k = 0; k < DX_ARRAY_LEN(sigs); k++)
                if (strlen(sigs[k].name) == sig.n && !memcmp(sigs[k].name, sig.p, sig.n))
                    code = -sigs[k].num;
        }
        if (r >= 0 && r != jm->agent_rank) {
            if (jm->agent_rank < 0) {
                jm->agent_rank = r;
                jm->agent_code = code;
            }
            jm->nagent++;
        }
        return DDX_OK;
    }
    case JX_SRUN_TASK: {
        int r = (int)cap_ll(s, "rank", -1);
        if (r >= 0 && r != jm->srun_rank && cap_ll(s, "code", 0) != 0) {
            if (jm->srun_rank < 0) {
                jm->srun_rank = r;
                jm->srun_code = (int)cap_ll(s, "code", 0);
            }
            jm->nsrun++;
        }
        return DDX_OK;
    }
    case JX_MISMATCH:
        for (int k = 1; k <= 2; k++) {
            char rn[4], on[4];
            snprintf(rn, sizeof rn, "r%d", k);
            snprintf(on, sizeof on, "op%d", k);
            long long r = cap_ll(s, rn, -1);
            dx_str op;
            dx_rank *x = dx_job_rank(jm, (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1));
            if (x && !x->fp_op[0] && dx_scan_capture(s, on, &op))
                snprintf(x->fp_op, sizeof x->fp_op, "%.*s", (int)op.n, op.p);
        }
        return DDX_OK;
    case JX_DS_SAMPLES: {
        double sps = cap_double(s, "sps");
        if (sps > 0)
            add_step(jm, rank, 0, 1.0 / sps);
        return DDX_OK;
    }
    default:
        return DDX_OK;
    }
}

/* ==== stragglers =========================================================================== */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static double median_of(float *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* Median and median absolute deviation of a rank's recent samples of one kind. */
static void robust(dx_rank *x, int kind)
{
    size_t n =
        x->nstep[kind] < DX_ARRAY_LEN(x->step[kind]) ? x->nstep[kind] : DX_ARRAY_LEN(x->step[kind]);
    if (n < 5)
        return; /* too few steps to tell a straggler from warm-up noise */
    float v[DX_ARRAY_LEN(x->step[0])];
    memcpy(v, x->step[kind], n * sizeof *v);
    double med = median_of(v, n);
    for (size_t i = 0; i < n; i++)
        v[i] = (float)fabs(v[i] - med);
    x->step_median[kind] = med;
    x->step_mad[kind] = median_of(v, n);
}

/* A rank is slow when its median step takes 1/0.75 of the fastest rank's or more (its speed
 * relative to the fastest is below 0.75) and at least 50 ms longer, over at least 5 steps; when steps are synchronised (DDP makes every rank's
 * step as slow as the slowest), the time a rank spends waiting for data tells instead: a rank
 * whose median data wait exceeds the fastest's by a quarter of its step and 50 ms. */
/* With stack dumps of several ranks: one rank outside any collective while the others all
 * wait in one is the rank the others wait for. */
static void find_stack_outlier(dx_job_model *jm)
{
    size_t dumped = 0, waiting = 0;
    int outside = -1, noutside = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x || !x->waits_in)
            continue;
        dumped++;
        if (x->waits_coll)
            waiting++;
        else {
            outside = x->rank;
            noutside++;
        }
    }
    int failed = 0;
    for (size_t r = 0; r < jm->nby && !failed; r++)
        failed = jm->by_rank[r] && (jm->by_rank[r]->first_exception || jm->by_rank[r]->timed_out);
    if (dumped >= 2 && noutside == 1 && waiting == dumped - 1) {
        jm->stack_rank = outside;
        snprintf(jm->stack_why, sizeof jm->stack_why,
                 "every dumped rank waits in a collective "
                 "except rank %d, in %s",
                 outside, jm->by_rank[outside]->waits_in);
    } else if (dumped == 1 && noutside == 1 && !failed) {
        /* one rank's stack, taken because the job hung (people dump the rank they suspect):
         * it is not waiting for the others, so it is the one the others wait for */
        jm->stack_rank = outside;
        snprintf(jm->stack_why, sizeof jm->stack_why,
                 "the one dumped rank, %d, is outside any "
                 "collective, in %s, and no rank failed or timed out",
                 outside, jm->by_rank[outside]->waits_in);
        if (jm->stuck_rank < 0) {
            jm->stuck_rank = outside;
            snprintf(jm->stuck_why, sizeof jm->stuck_why, "%.255s", jm->stack_why);
        }
    }
    if (waiting && !failed)
        snprintf(jm->hang_why, sizeof jm->hang_why,
                 "%zu of %zu dumped rank%s wait%s in a collective and no rank failed or timed out",
                 waiting, dumped, dumped == 1 ? "" : "s", waiting == 1 ? "s" : "");
}

/* Per-rank output that stops early: one rank's last timestamped line at least two minutes
 * before every other rank's last line, while they went on (a hang or a dead rank starts there). */
static void find_stopped(dx_job_model *jm)
{
    int64_t first = INT64_MAX, second = INT64_MAX;
    int who = -1;
    size_t with = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x || !x->has_time)
            continue;
        with++;
        int64_t t = dx_time_key(&x->last_time, NULL);
        if (t < first) {
            second = first;
            first = t;
            who = x->rank;
        } else if (t < second)
            second = t;
    }
    if (with < 2 || who < 0 || second == INT64_MAX || second - first < 120 * INT64_C(1000000))
        return;
    jm->stopped_rank = who;
    jm->by_rank[who]->stopped = 1;
    char t[64];
    dx_time_format(&jm->by_rank[who]->last_time, t, sizeof t);
    snprintf(jm->stopped_why, sizeof jm->stopped_why,
             "rank %d's output stops at %s, %lld s before any other rank's", who, t,
             (long long)((second - first) / 1000000));
}

int dx_rank_finished(const dx_rank *x) { return x->has_prog && x->prog_n == x->prog_m; }

/* Uneven inputs: a rank that printed the last step of its loop ("step 4/4") and neither failed
 * nor timed out, while a peer that counts more steps per epoch ("step 4/6") timed out or
 * failed waiting: the peer is in a collective the finished rank will never join. */
static void find_uneven(dx_job_model *jm)
{
    /* the ranks' own data sizes, when printed: one rank with another number of batches per
     * epoch than all the others */
    {
        const dx_rank *other = NULL;
        size_t n = 0;
        const dx_rank *x = alone_rank(jm, has_batches, same_batches, &other, &n);
        if (x) {
            jm->uneven = 1;
            snprintf(jm->uneven_why, sizeof jm->uneven_why,
                     "rank %d has %lld batches per epoch while the other %zu rank%s %lld", x->rank,
                     x->nbatches, n, n == 1 ? " has" : "s have", other->nbatches);
            /* with three or more ranks the odd one out is the rank whose extra (or missing)
             * collectives no peer matches; between two ranks neither is odder than the other */
            if (n >= 2)
                jm->uneven_rank = x->rank;
            return;
        }
    }
    for (size_t a = 0; a < jm->nby; a++) {
        const dx_rank *done = jm->by_rank[a];
        if (!done || !dx_rank_finished(done) || done->timed_out || done->first_exception)
            continue;
        for (size_t b = 0; b < jm->nby; b++) {
            const dx_rank *w = jm->by_rank[b];
            if (!w || w == done || !w->has_prog || w->prog_m <= done->prog_m ||
                !(w->timed_out || w->first_exception))
                continue;
            jm->uneven = 1;
            snprintf(jm->uneven_why, sizeof jm->uneven_why,
                     "rank %d finished all %lld steps of its loop while rank %d, with %lld steps "
                     "to run, was at step %lld and %s",
                     done->rank, done->prog_m, w->rank, w->prog_m, w->prog_n,
                     w->timed_out ? "timed out waiting" : "failed");
            return;
        }
    }
}

/* A stuck rank: some ranks timed out in a collective, and exactly one other rank, seen in the
 * logs, printed no timeout, no error and had not finished its loop: the others wait for it. */
static void find_stuck(dx_job_model *jm)
{
    size_t timed = 0, quiet = 0, failed = 0, rooted = 0;
    const dx_rank *q = NULL;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        rooted += x->first_error != NULL;
        if (x->timed_out)
            timed++;
        else if (x->in_table)
            failed++;
        else if (!x->first_error && !x->first_exception && !dx_rank_finished(x)) {
            quiet++;
            q = x;
        }
    }
    /* (ranks the launcher's table lists as failed count here too, unless some rank printed a
     * root failure of its own, which then explains the table) */
    if (timed + (rooted ? 0 : failed) >= 2 && quiet == 0) {
        /* a rank that printed nothing at all: the one gap in the timed-out ranks 0..max */
        int gap = -1, ngap = 0;
        size_t top = 0;
        for (size_t r = 0; r < jm->nby; r++)
            if (jm->by_rank[r])
                top = r;
        for (size_t r = 0; r < top; r++)
            if (!jm->by_rank[r] || !jm->by_rank[r]->lines) {
                if (!jm->by_rank[r] || !(jm->by_rank[r]->timed_out || jm->by_rank[r]->in_table)) {
                    gap = (int)r;
                    ngap++;
                }
            }
        if (ngap == 1) {
            jm->stuck_rank = gap;
            (void)dx_job_rank(jm, gap); /* listed among the ranks, as silent */
            snprintf(jm->stuck_why, sizeof jm->stuck_why,
                     "%zu ranks timed out or failed; rank %d, between them, printed nothing and "
                     "did not fail",
                     timed + failed, gap);
        }
        return;
    }
    if (!timed || quiet != 1)
        return;
    jm->stuck_rank = q->rank;
    jm->stuck_timed = timed;
    if (q->has_prog)
        snprintf(jm->stuck_why, sizeof jm->stuck_why,
                 "%zu rank%s timed out waiting in a collective; rank %d printed no timeout and no "
                 "error, and its last progress was step %lld of %lld",
                 timed, timed == 1 ? "" : "s", q->rank, q->prog_n, q->prog_m);
    else
        snprintf(jm->stuck_why, sizeof jm->stuck_why,
                 "%zu rank%s timed out waiting in a collective; rank %d printed no timeout and no "
                 "error",
                 timed, timed == 1 ? "" : "s", q->rank);
}

static int eval_name(const char *fn)
{
    static const char *const names[] = {"eval", "valid", "test", "metric", "score", "predict"};
    char low[64];
    size_t i = 0;
    for (; fn[i] && i < sizeof low - 1; i++)
        low[i] = (char)(fn[i] >= 'A' && fn[i] <= 'Z' ? fn[i] + 32 : fn[i]);
    low[i] = '\0';
    for (i = 0; i < DX_ARRAY_LEN(names); i++)
        if (strstr(low, names[i]))
            return 1;
    return 0;
}

/* Tracebacks that end in different collectives on different ranks: the ranks called different
 * collectives at the same point. One rank in a collective while every other rank waits in a
 * barrier (or in one shared collective) is the rank off the common path. */
static void find_coll_mismatch(dx_job_model *jm)
{
    const dx_rank *other = NULL;
    size_t n = 0;
    const dx_rank *x = alone_rank(jm, has_coll, same_coll, &other, &n);
    if (!x)
        return;
    /* with two ranks either could be the odd one: the one not at a barrier is */
    if (n == 1 && !strcmp(x->coll, "barrier")) {
        const dx_rank *t = x;
        x = other;
        other = t;
        if (!strcmp(x->coll, "barrier"))
            return;
    }
    jm->coll_rank = x->rank;
    jm->eval_coll = x->coll_caller && eval_name(x->coll_caller);
    snprintf(jm->coll_why, sizeof jm->coll_why, "rank %d is in %s (called from %s) while %s in %s",
             x->rank, x->coll, x->coll_caller ? x->coll_caller : "?",
             n == 1 ? "the other rank is" : "every other rank is", other->coll);
}

void dx_job_finish(dx_job_model *jm)
{
    find_desync(jm);
    find_uneven(jm);
    find_stuck(jm);
    find_coll_mismatch(jm);
    find_stack_outlier(jm);
    find_stopped(jm);
    size_t with[2] = {0, 0};
    double fastest[2] = {0, 0};
    for (size_t r = 0; r < jm->nby; r++) {
        dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        for (int k = 0; k < 2; k++) {
            robust(x, k);
            if (x->step_median[k] > 0 || (k == 1 && x->nstep[k] >= 5)) {
                if (!with[k] || x->step_median[k] < fastest[k])
                    fastest[k] = x->step_median[k];
                with[k]++;
            }
        }
    }
    double worst = 1.0;
    for (size_t r = 0; r < jm->nby; r++) {
        dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        x->rel_speed = 1.0;
        if (with[0] >= 2 && x->step_median[0] > 0) {
            x->rel_speed = fastest[0] / x->step_median[0];
            /* and slower by a margin that is not timer noise on millisecond steps */
            if (x->rel_speed < 0.75 && x->step_median[0] - fastest[0] >= 0.05) {
                x->slow = 1;
                if (x->rel_speed < worst) {
                    worst = x->rel_speed;
                    jm->straggler = x->rank;
                    jm->straggler_kind = 0;
                    if (jm->steps_from_fr)
                        snprintf(jm->straggler_why, sizeof jm->straggler_why,
                                 "flight recorder: rank %d works a median %.3f s (MAD %.3f) "
                                 "between the end of one collective and the start of the next, "
                                 "against %.3f s on the fastest rank: %.0f%% of its speed",
                                 x->rank, x->step_median[0], x->step_mad[0], fastest[0],
                                 100 * x->rel_speed);
                    else
                        snprintf(jm->straggler_why, sizeof jm->straggler_why,
                                 "rank %d's median step takes %.3f s (MAD %.3f) against %.3f s "
                                 "on the fastest rank: %.0f%% of its speed",
                                 x->rank, x->step_median[0], x->step_mad[0], fastest[0],
                                 100 * x->rel_speed);
                }
            }
        }
        if (with[1] >= 2 && x->nstep[1] >= 5 && jm->straggler < 0) {
            double extra = x->step_median[1] - fastest[1];
            double step = x->step_median[0] > 0 ? x->step_median[0] : x->step_median[1];
            if (extra > 0.05 && extra > 0.25 * step) {
                x->slow = 1;
                x->rel_speed = step > 0 ? (step - extra) / step : 0;
                if (x->rel_speed < worst) {
                    worst = x->rel_speed;
                    jm->straggler = x->rank;
                    jm->straggler_kind = 1;
                    snprintf(jm->straggler_why, sizeof jm->straggler_why,
                             "rank %d waits %.3f s for data per step (MAD %.3f) against %.3f s on "
                             "the fastest rank; the others wait for it in every collective",
                             x->rank, x->step_median[1], x->step_mad[1], fastest[1]);
                }
            }
        }
    }
    /* a collective that timed out started (line time - how long it ran) when one rank logged
     * the start of long work of its own: that rank kept the others waiting */
    for (int w = 0; w < jm->nwait && jm->busy_rank < 0; w++) {
        if (jm->wait[w].ran_ms < 0)
            continue;
        dx_time tw = jm->wait[w].t;
        if (!tw.year)
            tw.year = jm->year;
        int64_t start = dx_time_key(&tw, NULL) - (int64_t)jm->wait[w].ran_ms * 1000;
        for (int k = 0; k < jm->nwork; k++) {
            dx_time tk = jm->work[k].t;
            if (!tk.year)
                tk.year = jm->year;
            int64_t d = dx_time_key(&tk, NULL) - start;
            int r = jm->work[k].rank >= 0 ? jm->work[k].rank : 0;
            if (d < -60 * INT64_C(1000000) || d > 5 * INT64_C(1000000) || r == jm->wait[w].rank)
                continue;
            jm->busy_rank = r;
            char t[64];
            dx_time_format(&tk, t, sizeof t);
            snprintf(jm->busy_why, sizeof jm->busy_why,
                     "the collective rank %d timed out in started at about %s, when rank %d%s "
                     "logged the start of long work (saving, evaluation)",
                     jm->wait[w].rank, t, r,
                     jm->work[k].rank >= 0 ? "" : " (no rank prefix: rank 0 logs)");
            break;
        }
    }
    /* the one rank that timed out after a loop's end, while no other rank timed out or failed:
     * the others had finished, so its collective is one only it issued */
    if (jm->after_done_rank >= 0) {
        size_t timed = 0, failed = 0;
        for (size_t r = 0; r < jm->nby; r++) {
            const dx_rank *x = jm->by_rank[r];
            if (!x)
                continue;
            timed += x->timed_out;
            failed += (int)x->rank != jm->after_done_rank && (x->first_error || x->first_exception);
        }
        if (timed != 1 || failed)
            jm->after_done_rank = -1;
    }
    /* rank 0 alone in work of its own: its (unprefixed) progress bar is the last output before
     * other ranks time out in a collective, that loop had ended (the bar reached its total or
     * was blanked on close), and rank 0 itself reports no timeout and no error; so it went on
     * to something else rather than wait with them (rank-0-only evaluation, saving). A bar cut
     * mid-loop is not enough: every rank stalls in the same step then, rank 0 included. */
    if (jm->busy_rank < 0 && jm->bar0_before[0] && jm->bar0_closed) {
        const dx_rank *z = jm->nby ? jm->by_rank[0] : NULL;
        size_t others = 0;
        for (size_t r = 1; r < jm->nby; r++)
            others += jm->by_rank[r] && jm->by_rank[r]->timed_out;
        if (others && !(z && (z->timed_out || z->first_error || z->first_exception))) {
            jm->busy_rank = 0;
            snprintf(jm->busy_why, sizeof jm->busy_why,
                     "an unprefixed progress bar (trainers draw bars on rank 0) ran to %s and "
                     "closed just before %zu other rank%s timed out in a collective, and rank 0 "
                     "reported no timeout: it was busy alone while they waited",
                     jm->bar0_before, others, others == 1 ? "" : "s");
        }
    }
    /* Megatron's straggler detector, when step times gave no straggler: the rank named slowest
     * in at least half of its reports */
    for (size_t r = 0; r < jm->nby && jm->straggler < 0 && jm->meg_reports; r++) {
        dx_rank *x = jm->by_rank[r];
        if (!x || !x->meg_votes || 2 * x->meg_votes < jm->meg_reports)
            continue;
        jm->straggler = x->rank;
        jm->straggler_kind = 0;
        x->slow = 1;
        x->rel_speed = x->meg_ratio;
        snprintf(jm->straggler_why, sizeof jm->straggler_why,
                 "Megatron's straggler detector names rank %d the slowest in %d of its %d reports, "
                 "at %.0f%% of the best rank or less",
                 x->rank, x->meg_votes, jm->meg_reports, 100 * x->meg_ratio);
    }
    if (jm->straggler >= 0 && jm->by_rank[jm->straggler]->host[0]) {
        size_t n = strlen(jm->straggler_why);
        snprintf(jm->straggler_why + n, sizeof jm->straggler_why - n, " (on %s)",
                 jm->by_rank[jm->straggler]->host);
    }
}
