/* launchers.c -- what launchers and Python said about a failure.
 *
 * Readings:
 *   exceptions    each rank's first Python exception line (and its first original one: neither
 *                 a launcher's wrapper nor an echo of another rank's failure, dx_unrec_is_echo)
 *   torchelastic  the ChildFailedError table: its "Root Cause (first observed failure)" entry,
 *                 killed entries, hosts and pids, each entry's error; votes for the rank it
 *                 names, or, when that entry only echoes a peer's failure, for the rank whose
 *                 entry or traceback holds an original exception
 *   launcher      the one rank torchelastic's agent, mp.spawn, the failures dict or srun saw
 *                 fail while the others were stopped
 *   restarts      torchelastic's and ft_launcher's restarts
 *   teardown      the launcher stopping its workers with no worker's error printed
 */
#include "launchers.h"

#include "metrics.h"
#include "unrec.h"
#include "watchdog.h"

/* ==== exceptions ============================================================================ */

/* the last line of a Python traceback: "SomeError: message"; Ray's repr of a task's failure:
 * "ray.exceptions.RayTaskError(KeyError): ray::Actor.method() (pid=...)"; and an exception's
 * repr as loggers and trainers print a caught one: "MisconfigurationException('message ...')" */
static const dx_signal ex_patterns[] = {
    {"job-exception", DX_ROLE_NOISE, 0,
     "^(?<exc>[A-Za-z_][\\w.]*(?:Error|Exception|Interrupt))(?:(?:\\([\\w.]+\\))?(?:: |$)|\\(['\"])",
     "CPython traceback format; Ray's RayTaskError names the task's exception class in "
     "parentheses (python/ray/exceptions.py, RayTaskError.make_dual_exception_type, Ray 1.x to "
     "2.x); repr(exception) as logging and trainers print a caught exception (CPython's "
     "BaseException.__repr__: the class, then its arguments' reprs in parentheses)",
     0},
};

typedef struct ex_state {
    int unranked; /* exception lines not attributed to any rank */
    int workers;  /* exception lines other than the launchers' own */
    /* the first exception line not attributed to any rank, and the first original one */
    char *unranked_first, *unranked_original;
    uint64_t unranked_first_seq, unranked_original_seq;
    uint64_t last_seq; /* where the latest exception line was */
} ex_state;

typedef struct ex_rank {
    char *first; /* the first exception line it printed (200 bytes at most) */
    uint64_t first_seq;
    char *original; /* the first that is neither a launcher's wrapper nor an echo */
    uint64_t original_seq;
} ex_rank;

const dx_reading dx_reading_exceptions;

static void ex_fini(void *stp)
{
    ex_state *st = stp;
    dx_free(st->unranked_first);
    dx_free(st->unranked_original);
}

static void ex_rank_fini(void *rs)
{
    ex_rank *x = rs;
    dx_free(x->first);
    dx_free(x->original);
}

/* The launchers' own exceptions report a child's failure, they are not one. */
static int launcher_exception(const dx_str *exc)
{
    static const char *const names[] = {"ChildFailedError", "ProcessExitedException",
                                        "CalledProcessError"};
    for (size_t k = 0; k < DX_ARRAY_LEN(names); k++) {
        size_t n = strlen(names[k]);
        if (exc->n >= n && !memcmp(exc->p + exc->n - n, names[k], n))
            return 1;
    }
    return 0;
}

static int ex_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)row;
    ex_state *st = stp;
    dx_str exc;
    int launcher = dx_hit_str(h, "exc", &exc) && launcher_exception(&exc);
    if (h->rank < 0 && !launcher)
        st->unranked++;
    if (!launcher)
        st->workers++;
    if (h->seq > st->last_seq)
        st->last_seq = h->seq;
    ex_rank *x = dx_job_rstate(jm, &dx_reading_exceptions, h->rank, 1);
    size_t n = h->len > 200 ? 200 : h->len;
    char **first = x ? &x->first : &st->unranked_first;
    if (!*first) {
        if (!(*first = dx_strndup(h->text, n)))
            return DDX_ENOMEM;
        *(x ? &x->first_seq : &st->unranked_first_seq) = h->seq;
    }
    /* the first exception that is the rank's own, not an echo of another's failure (one
     * without a rank is kept apart) */
    char **orig = x ? &x->original : &st->unranked_original;
    if (!launcher && !*orig && !dx_unrec_is_echo(h->text, h->len)) {
        if (!(*orig = dx_strndup(h->text, n)))
            return DDX_ENOMEM;
        *(x ? &x->original_seq : &st->unranked_original_seq) = h->seq;
    }
    return DDX_OK;
}

const char *dx_exception_first(const dx_job_model *jm, const dx_rank *x, uint64_t *seq)
{
    const ex_rank *e = dx_rank_priv(jm, x, &dx_reading_exceptions);
    if (seq)
        *seq = e ? e->first_seq : 0;
    return e ? e->first : NULL;
}

const char *dx_exception_original(const dx_job_model *jm, const dx_rank *x, uint64_t *seq)
{
    const ex_rank *e = dx_rank_priv(jm, x, &dx_reading_exceptions);
    if (seq)
        *seq = e ? e->original_seq : 0;
    return e ? e->original : NULL;
}

const char *dx_exception_unranked_original(const dx_job_model *jm, uint64_t *seq)
{
    const ex_state *st = dx_job_state(jm, &dx_reading_exceptions);
    *seq = st->unranked_original_seq;
    return st->unranked_original;
}

const char *dx_exception_unranked_first(const dx_job_model *jm, uint64_t *seq)
{
    const ex_state *st = dx_job_state(jm, &dx_reading_exceptions);
    *seq = st->unranked_first_seq;
    return st->unranked_first;
}

uint64_t dx_exception_last_seq(const dx_job_model *jm)
{
    return ((const ex_state *)dx_job_state(jm, &dx_reading_exceptions))->last_seq;
}

static void ex_describe(const dx_job_model *jm, const void *st, const void *rs, dx_rank_view *v)
{
    (void)jm;
    (void)st;
    v->raised = ((const ex_rank *)rs)->original != NULL;
}

int dx_exception_unranked(const dx_job_model *jm)
{
    return ((const ex_state *)dx_job_state(jm, &dx_reading_exceptions))->unranked;
}

int dx_exception_workers(const dx_job_model *jm)
{
    return ((const ex_state *)dx_job_state(jm, &dx_reading_exceptions))->workers;
}

const dx_reading dx_reading_exceptions = {
    .name = "exceptions",
    .doc = "each rank's first Python exception line, and its first original one (neither a "
           "launcher's wrapper nor an echo of another rank's failure)",
    .patterns = ex_patterns,
    .npatterns = DX_ARRAY_LEN(ex_patterns),
    .state_size = sizeof(ex_state),
    .rank_size = sizeof(ex_rank),
    .fini = ex_fini,
    .rank_fini = ex_rank_fini,
    .on_hit = ex_hit,
    .describe = ex_describe,
};

/* ==== torchelastic ========================================================================== */

enum { TE_ROOT_CAUSE, TE_RANK, TE_EXITCODE, TE_HOST, TE_EXCEPTION, TE_BORDER };

/* torchelastic's ChildFailedError table */
static const dx_signal te_patterns[] = {
    [TE_ROOT_CAUSE] = {"job-root-cause", DX_ROLE_NOISE, 0,
                       "Root Cause \\(first observed failure\\) ?:",
                       "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    [TE_RANK] = {"job-table-rank", DX_ROLE_NOISE, 0,
                 "(?:^\\s*|\\b)rank\\s*:? ?(?<rank>\\d+) \\(local[_ ]rank: \\d+\\)",
                 "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    [TE_EXITCODE] = {"job-table-exitcode", DX_ROLE_NOISE, 0,
                     "(?:^\\s*|\\))exitcode\\s*: (?<code>-?\\d+) \\(pid: (?<pid>\\d+)",
                     "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    [TE_HOST] = {"job-table-host", DX_ROLE_NOISE, 0, "^\\s*host\\s*: (?<host>[\\w.-]+)\\s*$",
                 "torch/distributed/elastic/multiprocessing/errors/__init__.py", 0},
    /* an entry's traceback (the failed rank's error file, indented under "traceback :") ends in
     * its exception line */
    [TE_EXCEPTION] = {"job-table-exception", DX_ROLE_NOISE, 0,
                      "^[ \\t]+(?<exc>[A-Za-z_][\\w.]*(?:Error|Exception|Interrupt)): ",
                      "torch/distributed/elastic/multiprocessing/errors/__init__.py "
                      "(_format_failure: the error file's message under 'traceback :')",
                      0},
    /* the table's borders end the entry being read */
    [TE_BORDER] = {"job-table-border", DX_ROLE_NOISE, 0, "^\\s*(?:={20,}|-{20,})\\s*$",
                   "torch/distributed/elastic/multiprocessing/errors/__init__.py (format_msg: "
                   "'=' and '-' rules between its sections)",
                   0},
};

typedef struct te_state {
    int rc_lines_left; /* lines still inside a "Root Cause" block */
    int rc_rank;       /* the root-cause entry's rank, -1 none */
    int rc_exitcode;
    int rc_has_exitcode;
    char *rc_where;      /* "path:line" of its rank line */
    int table_rank;      /* the rank of the entry being read, -1 none */
    int killed_rank;     /* an entry killed by SIGKILL (exit code -9), -1 none */
    char table_host[64]; /* the "host :" line of the entry being read */
    int entry;           /* the rank whose entry's traceback is being read, -1 none */
} te_state;

typedef struct te_rank {
    int in_table; /* listed as failed in the table */
    char *exc;    /* the last exception line of its entry's traceback */
    uint64_t exc_seq;
    int exc_echo; /* ... only echoes another rank's failure (a victim's line) */
} te_rank;

const dx_reading dx_reading_torchelastic;

static void te_init(void *stp)
{
    te_state *st = stp;
    st->rc_rank = st->table_rank = st->killed_rank = st->entry = -1;
}

static void te_rank_fini(void *rs) { dx_free(((te_rank *)rs)->exc); }

static void te_fini(void *stp) { dx_free(((te_state *)stp)->rc_where); }

static int te_line(dx_job_model *jm, void *stp, const dx_line *l)
{
    (void)jm;
    (void)l;
    te_state *st = stp;
    if (st->rc_lines_left > 0)
        st->rc_lines_left--;
    return DDX_OK;
}

static int te_wants_lines(const void *stp, uint64_t seq)
{
    (void)seq;
    return ((const te_state *)stp)->rc_lines_left > 0;
}

static int te_rank_line(dx_job_model *jm, te_state *st, const dx_hit *h)
{
    st->table_rank = st->entry = (int)dx_hit_ll(h, "rank", -1);
    te_rank *t = dx_job_rstate(jm, &dx_reading_torchelastic, st->table_rank, 1);
    if (t)
        t->in_table = 1;
    if (st->table_host[0] && st->table_rank >= 0) {
        dx_rank *x = dx_job_rank(jm, st->table_rank);
        if (x && !x->host[0])
            snprintf(x->host, sizeof x->host, "%s", st->table_host);
        st->table_host[0] = '\0';
    }
    if (st->rc_lines_left > 0 && st->rc_rank < 0) {
        st->rc_rank = (int)dx_hit_ll(h, "rank", -1);
        char buf[512];
        snprintf(buf, sizeof buf, "%s:%llu", h->path, (unsigned long long)h->line);
        dx_free(st->rc_where);
        st->rc_where = dx_strdup(buf);
    }
    return DDX_OK;
}

/* The exception line of an entry's traceback: the last one is the error the rank died of; it is
 * an echo when a victim reference (culprit: other-rank) or a watchdog reading read the line. */
static int te_exception(dx_job_model *jm, te_state *st, const dx_hit *h)
{
    te_rank *t = st->entry >= 0 ? dx_job_rstate(jm, &dx_reading_torchelastic, st->entry, 0) : NULL;
    if (!t)
        return DDX_OK;
    char *exc = dx_strndup(h->text, h->len > 200 ? 200 : h->len);
    if (!exc)
        return DDX_ENOMEM;
    dx_free(t->exc);
    t->exc = exc;
    t->exc_seq = h->seq;
    t->exc_echo = h->echo || jm->line_echo || dx_unrec_is_echo(h->text, h->len);
    return DDX_OK;
}

static int te_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    te_state *st = stp;
    switch (row) {
    case TE_ROOT_CAUSE:
        st->rc_lines_left = 8;
        return DDX_OK;
    case TE_RANK:
        return te_rank_line(jm, st, h);
    case TE_EXITCODE: {
        dx_rank *x = st->table_rank >= 0 ? dx_job_rank(jm, st->table_rank) : NULL;
        if (x && x->pid < 0)
            x->pid = dx_hit_ll(h, "pid", -1);
        if (dx_hit_ll(h, "code", 0) == -9 && st->table_rank >= 0 && st->killed_rank < 0)
            st->killed_rank = st->table_rank;
        if (st->rc_lines_left > 0 && !st->rc_has_exitcode) {
            st->rc_exitcode = (int)dx_hit_ll(h, "code", 0);
            st->rc_has_exitcode = 1;
        }
        return DDX_OK;
    }
    case TE_HOST:
        dx_hit_copy(h, "host", st->table_host, sizeof st->table_host);
        return DDX_OK;
    case TE_EXCEPTION:
        return te_exception(jm, st, h);
    default:
        st->entry = -1;
        return DDX_OK;
    }
}

int dx_table_root(const dx_job_model *jm, int *code, int *has_code, const char **where)
{
    const te_state *st = dx_job_state(jm, &dx_reading_torchelastic);
    *code = st->rc_exitcode;
    *has_code = st->rc_has_exitcode;
    *where = st->rc_where;
    return st->rc_rank;
}

int dx_table_lists(const dx_job_model *jm, const dx_rank *x)
{
    const te_rank *t = dx_rank_priv(jm, x, &dx_reading_torchelastic);
    return t && t->in_table;
}

/* The root-cause entry's own error only echoes a peer's failure (the peer closed the connection,
 * a watchdog or gloo timeout) while another rank's entry, or its own traceback in the logs, holds
 * an original exception: that rank is the root. The entry's error is its traceback's last
 * exception line; without one, the rank's own first exception in the logs stands for it. */
static int te_echo(dx_job_model *jm, const te_state *st)
{
    const dx_rank *rc = dx_job_rank_get(jm, st->rc_rank);
    const te_rank *t = dx_rank_priv(jm, rc, &dx_reading_torchelastic);
    const char *said = t && t->exc ? t->exc : dx_exception_first(jm, rc, NULL);
    int echo = t && t->exc ? t->exc_echo : said && !dx_exception_original(jm, rc, NULL);
    if (!echo)
        return DDX_OK;
    int root = -1;
    uint64_t best = UINT64_MAX, seq;
    const char *orig = NULL, *from = NULL;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        const te_rank *e = dx_rank_priv(jm, x, &dx_reading_torchelastic);
        if (!x || (int)r == st->rc_rank)
            continue;
        if (e && e->exc && !e->exc_echo && (root < 0 || !from || e->exc_seq < best)) {
            /* another entry of the table comes first */
            root = (int)r;
            best = e->exc_seq;
            orig = e->exc;
            from = "its table entry";
        } else if (!from && dx_exception_original(jm, x, &seq) && seq < best) {
            root = (int)r;
            best = seq;
            orig = dx_exception_original(jm, x, NULL);
        }
    }
    if (root < 0)
        return DDX_OK;
    return dx_job_vote(jm, "table-echo", root, 1,
                       "torchelastic: the root-cause entry, rank %d, only echoes a peer's failure "
                       "(%s); rank %d raised its own exception (%s, %s)",
                       st->rc_rank, said, root, orig, from ? from : "its traceback");
}

/* torchelastic picks its "first observed failure" by whole-second error-file times, and a
 * worker killed by SIGKILL has no error file: when another entry of the table was killed while
 * the named root cause only exited with an error, the killed rank is the better reading (its
 * peers fail because it vanished). */
static int te_finish(dx_job_model *jm, void *stp)
{
    const te_state *st = stp;
    int killed = st->killed_rank >= 0 && st->killed_rank != st->rc_rank &&
                 !(st->rc_has_exitcode && st->rc_exitcode < 0);
    const char *where = st->rc_where ? st->rc_where : "";
    if (killed)
        return dx_job_vote(jm, "table-killed", st->killed_rank, 1,
                           "torchelastic: rank %d was killed by SIGKILL (exit code -9); the "
                           "table's 'first observed failure', rank %d, only exited with an error, "
                           "likely after losing its peer",
                           st->killed_rank, st->rc_rank);
    if (st->rc_rank < 0)
        return DDX_OK;
    int rc = te_echo(jm, st);
    if (rc)
        return rc;
    if (st->rc_has_exitcode && st->rc_exitcode < 0)
        return dx_job_vote(jm, "table", st->rc_rank, 1,
                           "torchelastic root cause: rank %d, exit code %d (killed by signal %d, "
                           "so its time is when the agent noticed; %s)",
                           st->rc_rank, st->rc_exitcode, -st->rc_exitcode, where);
    return dx_job_vote(jm, "table", st->rc_rank, 1, "torchelastic root cause: rank %d (%s)",
                       st->rc_rank, where);
}

const dx_reading dx_reading_torchelastic = {
    .name = "torchelastic",
    .doc = "torchelastic's ChildFailedError table: the root-cause entry (rank, exit code, its "
           "error), entries killed by SIGKILL, each entry's host and pid; votes for the rank it "
           "names, or for the rank with an original exception when the root cause only echoes a "
           "peer's failure",
    .patterns = te_patterns,
    .npatterns = DX_ARRAY_LEN(te_patterns),
    .state_size = sizeof(te_state),
    .rank_size = sizeof(te_rank),
    .init = te_init,
    .fini = te_fini,
    .rank_fini = te_rank_fini,
    .on_line = te_line,
    .wants_lines = te_wants_lines,
    .on_hit = te_hit,
    .finish = te_finish,
};

/* ==== launcher ============================================================================== */

static const dx_reading_fact la_facts[] = {
    {"job.launcher_failed_rank", "int",
     "the one rank a launcher saw fail while it stopped the others (torchelastic's agent line, "
     "DeepSpeed's launcher naming the failed worker's --local_rank, srun's task report, "
     "mp.spawn's ProcessExitedException), when that rank's own error is not in the inputs"},
    {"job.launcher_exitcode", "int", "that rank's exit code as the launcher reported it"},
    {"job.spawn_stopped", "int",
     "the worker whose own exception mp.spawn reported (\"-- Process N terminated with the "
     "following error\"), or whose exit with an error code it reported when that worker printed "
     "no exception, in a job of two or more processes: mp.spawn then terminated the others, so "
     "one rank's failure ended the job"},
};

enum { LA_AGENT, LA_SRUN, LA_SPAWN, LA_FAILURES, LA_DEEPSPEED };

static const dx_signal la_patterns[] = {
    /* torchelastic's agent: "failed (exitcode: -9) local_rank: 3 (pid: 180497) of binary" */
    [LA_AGENT] = {"job-agent-failed", DX_ROLE_NOISE, 0,
                  "failed \\(exitcode: (?<code>-?\\d+)\\) local_rank: (?<rank>\\d+) \\(pid: "
                  "\\d+\\)",
                  "torch/distributed/elastic/multiprocessing/api.py", 0},
    /* Slurm: "srun: error: node12: task 5: Exited with exit code 1" (the others: "Killed") */
    [LA_SRUN] = {"job-srun-task", DX_ROLE_NOISE, 0,
                 "srun: error: \\S+: task (?<rank>\\d+): Exited with exit code (?<code>\\d+)",
                 "slurm src/srun (task exit report)", 0},
    /* torch.multiprocessing.spawn: "process 1 terminated with signal SIGKILL" / "process 0
     * terminated with exit code 1" */
    [LA_SPAWN] = {"job-spawn-exit", DX_ROLE_NOISE, 0,
                  "ProcessExitedException: process (?<rank>\\d+) terminated with (?:signal "
                  "(?<sig>SIG[A-Z]+)|exit code (?<code>\\d+))",
                  "torch/multiprocessing/spawn.py", 0},
    /* torchelastic's RunResult.failures as printed (a dict by global rank): "{0:
     * ProcessFailure(local_rank=0, pid=54, exitcode=-7, ...)}" */
    [LA_FAILURES] = {"job-process-failure", DX_ROLE_NOISE, 0,
                     "\\b(?<rank>\\d+): ProcessFailure\\(local_rank=\\d+, pid=\\d+, "
                     "exitcode=(?<code>-?\\d+)",
                     "torch/distributed/elastic/multiprocessing/errors/__init__.py "
                     "(ProcessFailure, a dataclass: its repr)",
                     0},
    /* DeepSpeed's launcher, after a worker failed: "[launch.py:434:sigkill_handler]
     * ['/usr/bin/python3', '-u', 'main.py', '--local_rank=0', ...] exits with return code = -9"
     * (the failed worker's command line, its --local_rank among the arguments) */
    [LA_DEEPSPEED] = {"job-deepspeed-exit", DX_ROLE_NOISE, 0,
                      "sigkill_handler\\] \\[[^\\]]*'--local_rank=(?<rank>\\d+)'[^\\]]*\\] "
                      "exits with return code = (?<code>-?\\d+)",
                      "deepspeed/launcher/launch.py (sigkill_handler: logger.error of the failed "
                      "worker's command and its return code)",
                      0},
};

/* Which launcher a report of one failed rank came from, as the vote and the fact say it (mp.spawn's
 * and the failures dict's reports read as the agent's, their launcher being torchelastic's) */
#define LA_AGENT_WHO                                                                               \
    {                                                                                              \
        "torchelastic's agent",                                                                    \
            "torchelastic's agent: the one local rank that failed while the others were stopped"   \
    }
static const struct {
    const char *name, *fact;
} la_who[] = {
    [LA_AGENT] = LA_AGENT_WHO,
    [LA_SPAWN] = LA_AGENT_WHO,
    [LA_FAILURES] = LA_AGENT_WHO,
    [LA_DEEPSPEED] = {"DeepSpeed's launcher",
                      "DeepSpeed's launcher: the one local rank that failed while the others were "
                      "killed"},
};

typedef struct la_state {
    /* the local rank the agent saw fail ("failed (exitcode: -9) local_rank: 3"), the first one,
       and how many distinct ranks it reported */
    int agent_rank;
    int agent_code;
    int agent_row; /* the pattern that reported it (la_who: which launcher that is) */
    int nagent;
    /* a launcher reported the failures itself (mp.spawn's exception, torchelastic's failures
       dict): it stopped the other workers */
    int report;
    int srun_rank; /* the first srun task that exited with an error, -1 none */
    int srun_code;
    int nsrun;
    /* mp.spawn's report of a worker's exception: the traceback that follows "-- Process N
       terminated with the following error:" is worker N's, up to its exception line; -1 outside
       one */
    int scope;
    int raised;            /* the first worker whose exception mp.spawn reported, -1 none */
    uint32_t raised_lines; /* lines of that report given to that worker */
    int exited; /* the first worker mp.spawn reported exiting with an error code, -1 none */
} la_state;

const dx_reading dx_reading_launcher;

static void la_init(void *stp)
{
    la_state *st = stp;
    st->agent_rank = st->srun_rank = st->scope = st->raised = st->exited = -1;
}

static int starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && !memcmp(s, prefix, k);
}

/* torch.multiprocessing.spawn re-raises a worker's exception in the parent as
 * ProcessRaisedException, its message "-- Process N terminated with the following error:" and
 * the worker's own traceback, unprefixed: those lines are worker N's (spawn's process index is
 * the rank it passes the worker). The traceback ends at its exception line. */
static int la_line_rank(dx_job_model *jm, void *stp, const dx_line *l)
{
    (void)jm;
    la_state *st = stp;
    size_t b = l->attr->body <= l->len ? l->attr->body : l->len;
    const char *s = l->text + b;
    size_t n = l->len - b;
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    if (starts(s, n, "-- Process ")) {
        long long r = 0;
        size_t i = 11;
        while (i < n && i < 20 && s[i] >= '0' && s[i] <= '9')
            r = r * 10 + (s[i++] - '0');
        if (i > 11 && starts(s + i, n - i, " terminated with the following error:")) {
            st->scope = (int)r;
            if (st->raised < 0)
                st->raised = (int)r;
        }
        return -1;
    }
    if (st->scope < 0)
        return -1;
    int r = st->scope;
    if (l->rank >= 0)
        st->scope = -1; /* another process's prefixed output: the report is over */
    else if (!(n == 0 || s[0] == ' ' || s[0] == '\t' ||
               starts(s, n, "Traceback (most recent call last):")))
        st->scope = -1; /* the exception line closes the traceback */
    if (l->rank < 0 && r == st->raised && st->raised_lines < UINT32_MAX)
        st->raised_lines++;
    return l->rank >= 0 ? -1 : r;
}

int dx_spawn_raised(const dx_job_model *jm, uint32_t *lines)
{
    const la_state *st = dx_job_state(jm, &dx_reading_launcher);
    *lines = st->raised_lines;
    return st->raised;
}

static void la_agent(la_state *st, int r, int code, int row)
{
    if (r < 0 || r == st->agent_rank)
        return;
    if (st->agent_rank < 0) {
        st->agent_rank = r;
        st->agent_code = code;
        st->agent_row = row;
    }
    st->nagent++;
}

/* mp.spawn's exit: the signal's number as a negative exit code, as torchelastic writes it */
static int spawn_code(const dx_hit *h)
{
    static const struct {
        const char *name;
        int num;
    } sigs[] = {{"SIGKILL", 9}, {"SIGSEGV", 11}, {"SIGABRT", 6}, {"SIGBUS", 7}, {"SIGTERM", 15}};
    dx_str sig;
    if (!dx_hit_str(h, "sig", &sig) || !sig.n)
        return (int)dx_hit_ll(h, "code", 1);
    for (size_t k = 0; k < DX_ARRAY_LEN(sigs); k++)
        if (strlen(sigs[k].name) == sig.n && !memcmp(sigs[k].name, sig.p, sig.n))
            return -sigs[k].num;
    return -1;
}

static int la_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    la_state *st = stp;
    int r = (int)dx_hit_ll(h, "rank", -1);
    if (row == LA_SRUN) {
        if (r >= 0 && r != st->srun_rank && dx_hit_ll(h, "code", 0) != 0) {
            if (st->srun_rank < 0) {
                st->srun_rank = r;
                st->srun_code = (int)dx_hit_ll(h, "code", 0);
            }
            st->nsrun++;
        }
        return DDX_OK;
    }
    /* (DeepSpeed's sigkill_handler kills every other worker as it reports the failed one) */
    if (row != LA_AGENT)
        st->report = 1;
    dx_str sig;
    if (row == LA_SPAWN && st->exited < 0 && !(dx_hit_str(h, "sig", &sig) && sig.n))
        st->exited = r;
    la_agent(st, r, row == LA_SPAWN ? spawn_code(h) : (int)dx_hit_ll(h, "code", 0), (int)row);
    return DDX_OK;
}

void dx_launcher_report(const dx_job_model *jm, dx_launched *out)
{
    const la_state *st = dx_job_state(jm, &dx_reading_launcher);
    *out = (dx_launched){st->agent_rank, st->agent_code, st->nagent,
                         st->srun_rank,  st->srun_code,  st->nsrun};
}

int dx_launcher_agent(const dx_job_model *jm, int *code)
{
    const la_state *st = dx_job_state(jm, &dx_reading_launcher);
    *code = st->agent_code;
    return st->nagent;
}

/* The launcher's one failed rank exited with -6 (SIGABRT) while ranks report watchdog timeouts:
 * the watchdog took a waiting rank down, so the launcher saw a victim first, not the cause. */
static int saw_victim(const dx_job_model *jm, const la_state *st)
{
    return (st->nagent == 1 ? st->agent_code : st->srun_code) == -6 && dx_watchdog_ranks(jm);
}

/* Without a table: the one local rank the agent saw fail while it sent the others SIGTERM, or
 * the one srun task that exited with an error while the others were killed. */
static int la_finish(dx_job_model *jm, void *stp)
{
    const la_state *st = stp;
    if (saw_victim(jm, st))
        return DDX_OK;
    if (st->nagent == 1)
        return dx_job_vote(jm, "launcher", st->agent_rank, 1,
                           "launcher: %s saw local rank %d fail (exit code %d) and stopped the "
                           "others",
                           la_who[st->agent_row].name, st->agent_rank, st->agent_code);
    if (st->nsrun == 1)
        return dx_job_vote(jm, "launcher", st->srun_rank, 1,
                           "launcher: srun: task %d exited with code %d; the others were stopped",
                           st->srun_rank, st->srun_code);
    return DDX_OK;
}

/* mp.spawn reported worker N's own exception (not an echo of a peer's failure), or its exit
 * with an error code and no exception, and the job had other processes (ranks seen, a higher
 * process index, copies of one step on the shared console): it terminated them, so that one
 * rank's failure ended the job. */
static int spawn_stopped(const dx_job_model *jm, const la_state *st)
{
    int r = st->raised;
    const dx_rank *x = dx_job_rank_get(jm, r);
    if (x && !dx_exception_original(jm, x, NULL))
        return -1;
    if (!x) {
        r = st->exited;
        x = dx_job_rank_get(jm, r);
        if (r < 0 || (x && dx_exception_first(jm, x, NULL)))
            return -1;
    }
    size_t procs = jm->nby > (size_t)r + 1 ? jm->nby : (size_t)r + 1;
    size_t copies = (size_t)dx_metrics_unranked_copies(jm);
    return (copies > procs ? copies : procs) >= 2 ? r : -1;
}

static int la_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    const la_state *st = stp;
    int sp = spawn_stopped(jm, st);
    if (sp >= 0) {
        int rc = dx_job_fact(f, "job.spawn_stopped",
                             "mp.spawn reported this worker's own exception and terminated the "
                             "other processes",
                             "%d", sp);
        if (rc)
            return rc;
    }
    /* the agent's report counts when it stopped other workers (a multi-process job) */
    int lr = st->nagent == 1 && (dx_teardown_closing(jm) || st->report) ? st->agent_rank
             : st->nsrun == 1                                           ? st->srun_rank
                                                                        : -1;
    /* an exception printed without a rank is most likely that rank's own error */
    if (dx_exception_unranked(jm) || saw_victim(jm, st))
        lr = -1;
    /* only when that rank's own error is not in the inputs: then its log is what to read */
    const dx_rank *x = dx_job_rank_get(jm, lr);
    if (x && (dx_exception_first(jm, x, NULL) || x->first_error || dx_watchdog_timed_out(jm, lr)))
        lr = -1;
    if (lr < 0)
        return DDX_OK;
    int rc = dx_job_fact(f, "job.launcher_failed_rank",
                         st->nagent == 1 ? la_who[st->agent_row].fact
                                         : "srun: the one task that exited with an error",
                         "%d", lr);
    return rc ? rc
              : dx_job_fact(f, "job.launcher_exitcode", "the launcher's report of that rank", "%d",
                            st->nagent == 1 ? st->agent_code : st->srun_code);
}

const dx_reading dx_reading_launcher = {
    .name = "launcher",
    .doc = "the one local rank torchelastic's agent (or DeepSpeed's launcher, mp.spawn, the "
           "failures dict) or srun saw fail while it stopped the others; votes for it when no "
           "table names a rank",
    .facts = la_facts,
    .nfacts = DX_ARRAY_LEN(la_facts),
    .patterns = la_patterns,
    .npatterns = DX_ARRAY_LEN(la_patterns),
    .state_size = sizeof(la_state),
    .init = la_init,
    .line_rank = la_line_rank,
    .on_hit = la_hit,
    .finish = la_finish,
    .publish = la_publish,
};

/* ==== restarts ============================================================================== */

static const dx_reading_fact rs_facts[] = {
    {"job.restarts", "int",
     "restarts so far: torchelastic's \"will restart worker group\" lines and "
     "\"restart_count=N\", nvidia-resiliency-ext ft_launcher's \"Cycle: N Event: ...\" markers"},
};

/* torchelastic's agent: "[default] Worker group FAILED. 2/3 attempts left; will restart worker
 * group" */
static const dx_signal rs_patterns[] = {
    {"job-restart", DX_ROLE_NOISE, 0,
     "Worker group \\w+\\. (?<left>\\d+)/(?<max>\\d+) attempts left; will restart "
     "worker group|\\brestart_count=(?<count>\\d+)|"
     "\\bCycle: (?<cycle>\\d+) Event: \\w+ Node: ",
     "torch/distributed/elastic/agent/server/api.py; nvidia-resiliency-ext's "
     "ft_launcher, nvidia_resiliency_ext/shared_utils/profiling.py ('  - Cycle: N "
     "Event: failure_detected Node: ... Rank: ... Time: ... UTC', N counting the "
     "failures detected)",
     0},
};

typedef struct rs_state {
    int restarts;
    int max_restarts;
} rs_state;

const dx_reading dx_reading_restarts;

/* "... attempts left; will restart" counts one restart; the rendezvous result's
 * "restart_count=N" says how many happened so far; restart cycle N follows the N-th failure */
static int rs_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    rs_state *st = stp;
    long long n = dx_hit_ll(h, "count", -1);
    if (n < 0)
        n = dx_hit_ll(h, "cycle", -1);
    if (n >= 0) {
        if (n > st->restarts)
            st->restarts = (int)n;
    } else {
        st->restarts++;
        st->max_restarts = (int)dx_hit_ll(h, "max", 0);
    }
    return DDX_OK;
}

int dx_restarts(const dx_job_model *jm)
{
    return ((const rs_state *)dx_job_state(jm, &dx_reading_restarts))->restarts;
}

static int rs_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const rs_state *st = stp;
    return st->restarts
               ? dx_job_fact(f, "job.restarts", "torchelastic's 'will restart worker group' lines",
                             "%d", st->restarts)
               : DDX_OK;
}

const dx_reading dx_reading_restarts = {
    .name = "restarts",
    .doc = "how many times the launcher restarted the workers",
    .facts = rs_facts,
    .nfacts = DX_ARRAY_LEN(rs_facts),
    .patterns = rs_patterns,
    .npatterns = DX_ARRAY_LEN(rs_patterns),
    .state_size = sizeof(rs_state),
    .on_hit = rs_hit,
    .publish = rs_publish,
};

/* ==== teardown ============================================================================== */

static const dx_reading_fact td_facts[] = {
    {"job.silent_teardown", "string",
     "`deepspeed` or `torchrun`: the launcher stopped the workers (DeepSpeed's \"Killing "
     "subprocess N\", torchrun's \"Sending process N closing signal\") while no worker printed an "
     "exception or a line any reference reads as a failure, and no exit code other than -9 is "
     "known: a worker died by a signal"},
};

enum { TD_CLOSING, TD_DS_KILLING };

static const dx_signal td_patterns[] = {
    [TD_CLOSING] = {"job-closing-signal", DX_ROLE_NOISE, 0,
                    "Sending process \\d+ closing signal SIG[A-Z]+",
                    "torch/distributed/elastic/multiprocessing/api.py", 0},
    /* the DeepSpeed launcher tearing its workers down after one exited */
    [TD_DS_KILLING] = {"job-ds-killing", DX_ROLE_NOISE, 0,
                       "\\[launch\\.py:\\d+:sigkill_handler\\] Killing subprocess \\d+",
                       "deepspeed/launcher/launch.py (sigkill_handler)", 0},
};

typedef struct td_state {
    int closing;    /* the agent's "Sending process N closing signal" lines */
    int ds_killing; /* the DeepSpeed launcher's "Killing subprocess N" lines */
} td_state;

const dx_reading dx_reading_teardown;

static int td_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)h;
    td_state *st = stp;
    if (row == TD_CLOSING)
        st->closing++;
    else
        st->ds_killing++;
    return DDX_OK;
}

int dx_teardown_closing(const dx_job_model *jm)
{
    return ((const td_state *)dx_job_state(jm, &dx_reading_teardown))->closing;
}

/* The launcher tore the workers down, and no worker printed an exception or a failure line, and
 * no exit code other than -9 is known: a worker died without Python seeing it, by a signal (the
 * kernel's OOM killer sends SIGKILL). */
static int td_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    const td_state *st = stp;
    int code;
    int nagent = dx_launcher_agent(jm, &code);
    if (!(st->ds_killing || st->closing) || dx_exception_workers(jm) || (nagent && code != -9) ||
        dx_job_any_failure(jm))
        return DDX_OK;
    return dx_job_fact(f, "job.silent_teardown",
                       "the launcher stopped the workers and no worker printed a traceback or an "
                       "error first, nor an exit code that says otherwise: one died by a signal",
                       "%s", st->ds_killing ? "deepspeed" : "torchrun");
}

const dx_reading dx_reading_teardown = {
    .name = "teardown",
    .doc = "the launcher stopping its workers while no worker printed an error: a worker died by "
           "a signal",
    .facts = td_facts,
    .nfacts = DX_ARRAY_LEN(td_facts),
    .patterns = td_patterns,
    .npatterns = DX_ARRAY_LEN(td_patterns),
    .state_size = sizeof(td_state),
    .on_hit = td_hit,
    .publish = td_publish,
};
