/* progress.c -- how far each rank got and where the job stopped.
 *
 * Readings:
 *   progress        the last "step N/M" or tqdm bar of each rank; the end of a loop; the last
 *                   unprefixed bar before the first timeout (rank 0's)
 *   stopped-output  a rank whose output stops long before every other rank's
 *   uneven-inputs   ranks with different numbers of batches, or one that finished a shorter loop
 *   stuck-rank      the one rank that neither timed out, failed nor finished while others waited
 *   left-early      the one rank that stopped without an error (it announced it stops early, or
 *                   its output simply ends) while every other rank failed because a peer went
 *                   away
 *   busy-rank       the rank busy with long work of its own when a collective timed out
 *   phases          the last phase the log reached (launch, init, training, evaluation, ...);
 *                   the stall in a phase is the references' rule (at_end signals)
 */
#include "progress.h"

#include "diag.h"
#include "init.h"
#include "launchers.h"
#include "metrics.h"
#include "stacks.h"
#include "watchdog.h"

/* ==== progress ============================================================================== */

enum { PR_STEP, PR_TQDM, PR_TRAIN_DONE, PR_BAR_CLEARED, PR_TIME_LIMIT };

/* The job-progress row's own prefilter (a trainer prints its step line on every step, so
 * Vectorscan, given the row, proposes most lines of a job's log): a line the row matches holds
 * the '/' between step and total and one of its words, each of which holds "tep" (Step, step),
 * "ter" (Iter, iter, iteration) or "atch" (Batch, batch). */
int dx_progress_step_words(const char *line, size_t len)
{
    if (len < 6 || !memchr(line, '/', len))
        return 0;
    const char *end = line + len;
    for (const char *t = memchr(line + 1, 't', len - 1); t && t + 2 < end;
         t = memchr(t + 1, 't', (size_t)(end - t - 1)))
        if ((t[1] == 'e' && (t[2] == 'p' || t[2] == 'r')) ||
            (t[-1] == 'a' && t[1] == 'c' && t[2] == 'h'))
            return 1;
    return 0;
}

static const dx_signal pr_patterns[] = {
    /* progress as trainers print it: "step 3/6", "Step: 10/100", Megatron's
     * "iteration      100/    5000 |" */
    [PR_STEP] = {"job-progress", DX_ROLE_NOISE, 0,
                 "\\b(?:[Ss]tep|[Ii]ter(?:ation)?|[Bb]atch)\\s*[:=]?\\s*\\[?\\s*(?<n>\\d+)\\s*/"
                 "\\s*(?<m>\\d+)\\b",
                 "common trainer step logs; megatron/training/training.py", 0},
    /* tqdm bars (Hugging Face Trainer, Lightning): "| 45/100 [00:05<00:06," */
    [PR_TQDM] = {"job-tqdm-progress", DX_ROLE_NOISE, 0, "\\|\\s*(?<n>\\d+)/(?<m>\\d+) \\[\\d",
                 "tqdm progress bars", 0},
    /* trainers announcing the end of training */
    [PR_TRAIN_DONE] = {"job-train-done", DX_ROLE_NOISE, 0,
                       "`Trainer\\.fit` stopped: `max_(?:epochs|steps)=[^`\\s]+` reached|"
                       "Training completed\\. Do not forget to share your model",
                       "lightning/pytorch/loops/fit_loop.py (rank_zero_info); "
                       "transformers/trainer.py (_inner_training_loop)",
                       0},
    /* a bar closed with leave=False: tqdm overwrites it with spaces */
    [PR_BAR_CLEARED] = {"job-bar-cleared", DX_ROLE_NOISE, 0, "^ {20,}\\r?$",
                        "tqdm (std.py close(): the bar's line blanked when leave=False)", 0},
    /* the scheduler's time limit, and when it struck (the end of a job that stopped making
       progress long before) */
    [PR_TIME_LIMIT] = {"job-time-limit", DX_ROLE_NOISE, 0,
                       "\\*\\*\\* (?:JOB|STEP) \\S+(?: ON \\S+)? CANCELLED AT "
                       "(?<at>\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d) DUE TO TIME LIMIT",
                       "slurm src/slurmd/slurmstepd/req.c (\"*** %s ON %s CANCELLED AT %s DUE TO "
                       "TIME LIMIT ***\"; older releases omit \"ON host\") and src/srun "
                       "(\"*** STEP %u.%u CANCELLED AT %s DUE TO TIME LIMIT ***\")",
                       0},
};

/* the step row's lines are found by hand (dx_progress_step_words), not by Vectorscan */
static const dx_prefilter_fn pr_prefilters[DX_ARRAY_LEN(pr_patterns)] = {
    [PR_STEP] = dx_progress_step_words,
};

typedef struct pr_state {
    char done_what[64]; /* what showed a loop's end ("a progress bar at 9/9"), "" none */
    /* the last unprefixed progress bar ("5853/6019") read before the first watchdog timeout,
       "" none, and whether that bar's loop ended (n = total, or the bar blanked) */
    char bar0[48];
    int bar0_closed;
    long long bar0_n, bar0_m; /* that bar's numbers */
    int bar0_moved; /* the same bar went on after a timeout was printed (it was not waiting) */
    /* the latest time a progress line carried (any rank), and the time limit's, when seen */
    int has_prog_t, has_limit_t;
    dx_time prog_t, limit_t;
} pr_state;

typedef struct pr_rank {
    long long n, m; /* the last "step N/M" progress it printed */
    int has;
} pr_rank;

const dx_reading dx_reading_progress;

int dx_progress_of(const dx_job_model *jm, const dx_rank *x, long long *n, long long *m)
{
    const pr_rank *p = dx_rank_priv(jm, x, &dx_reading_progress);
    if (!p || !p->has)
        return 0;
    *n = p->n;
    *m = p->m;
    return 1;
}

int dx_rank_finished(const dx_job_model *jm, const dx_rank *x)
{
    const pr_rank *p = dx_rank_priv(jm, x, &dx_reading_progress);
    return p && p->has && p->n == p->m;
}

const char *dx_progress_done_what(const dx_job_model *jm)
{
    const pr_state *st = dx_job_state(jm, &dx_reading_progress);
    return st ? st->done_what : "";
}

int dx_progress_gap(const dx_job_model *jm, double *seconds, int *time_limit, dx_time *last)
{
    const pr_state *st = dx_job_state(jm, &dx_reading_progress);
    if (!st || !st->has_prog_t)
        return 0;
    /* the end: when the time limit struck, or the last line any rank printed with a time */
    int has_end = st->has_limit_t;
    dx_time end = st->limit_t;
    for (size_t r = 0; !st->has_limit_t && r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (x && x->has_time &&
            (!has_end || dx_time_key(&x->last_time, NULL) > dx_time_key(&end, NULL))) {
            end = x->last_time;
            has_end = 1;
        }
    }
    if (!has_end)
        return 0;
    /* a progress line without a date takes the end's (glog prints month and day, no year) */
    int64_t gap = dx_time_key(&end, NULL) - dx_time_key(&st->prog_t, &end);
    *seconds = (double)gap / 1e6;
    *time_limit = st->has_limit_t;
    *last = st->prog_t;
    return gap >= (int64_t)DX_PROGRESS_GAP_S * 1000000;
}

const char *dx_progress_bar0(const dx_job_model *jm, int *closed, int *moved)
{
    const pr_state *st = dx_job_state(jm, &dx_reading_progress);
    *closed = st->bar0_closed;
    *moved = st->bar0_moved;
    return st->bar0;
}

void dx_progress_note(dx_job_model *jm, int rank, long long n, long long m)
{
    pr_rank *x = dx_job_rstate(jm, &dx_reading_progress, rank, 1);
    if (x && n >= 0 && m > 0 && n <= m) {
        x->n = n;
        x->m = m;
        x->has = 1;
    }
}

static int pr_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    pr_state *st = stp;
    if (row == PR_BAR_CLEARED) {
        if (h->rank < 0 && !dx_watchdog_lines(jm) && st->bar0[0])
            st->bar0_closed = 1;
        return DDX_OK;
    }
    if (row == PR_TRAIN_DONE) {
        snprintf(st->done_what, sizeof st->done_what, "the trainer's end-of-training message");
        return DDX_OK;
    }
    if (row == PR_TIME_LIMIT) {
        char at[32];
        dx_time t = {0};
        dx_hit_copy(h, "at", at, sizeof at);
        if (sscanf(at, "%d-%d-%dT%d:%d:%d", &t.year, &t.month, &t.day, &t.hour, &t.min, &t.sec) ==
                6 &&
            (!st->has_limit_t || dx_time_key(&t, NULL) < dx_time_key(&st->limit_t, NULL))) {
            st->limit_t = t;
            st->has_limit_t = 1;
        }
        return DDX_OK;
    }
    pr_rank *x = dx_job_rstate(jm, &dx_reading_progress, h->rank, 1);
    long long n = dx_hit_ll(h, "n", -1), m = dx_hit_ll(h, "m", -1);
    int valid = n >= 0 && m > 0 && n <= m;
    if (valid && h->has_time &&
        (!st->has_prog_t || dx_time_key(&h->time, NULL) > dx_time_key(&st->prog_t, NULL))) {
        st->prog_t = h->time;
        st->has_prog_t = 1;
    }
    if (x && valid) {
        x->n = n;
        x->m = m;
        x->has = 1;
    }
    /* an unprefixed bar before any timeout: trainers draw bars on rank 0; after a timeout, the
     * same bar (same total) further on: its rank kept working while the others waited */
    if (h->rank < 0 && !dx_watchdog_lines(jm) && valid) {
        snprintf(st->bar0, sizeof st->bar0, "%lld/%lld", n, m);
        st->bar0_closed = n == m;
        st->bar0_n = n;
        st->bar0_m = m;
        st->bar0_moved = 0;
    } else if (h->rank < 0 && valid && st->bar0[0] && m == st->bar0_m && n > st->bar0_n)
        st->bar0_moved = 1;
    if (n > 0 && n == m && !st->done_what[0])
        snprintf(st->done_what, sizeof st->done_what, "a progress bar at %lld/%lld", n, m);
    return DDX_OK;
}

static void pr_describe(const dx_job_model *jm, const void *st, const void *rs, dx_rank_view *v)
{
    (void)jm;
    (void)st;
    const pr_rank *p = rs;
    v->has_prog = p->has;
    v->prog_n = p->n;
    v->prog_m = p->m;
    v->finished = p->has && p->n == p->m;
}

const dx_reading dx_reading_progress = {
    .name = "progress",
    .doc = "each rank's last step N/M (trainer lines, tqdm bars), the end of a loop, and rank "
           "0's last bar before the first timeout",
    .patterns = pr_patterns,
    .npatterns = DX_ARRAY_LEN(pr_patterns),
    .prefilters = pr_prefilters,
    .state_size = sizeof(pr_state),
    .rank_size = sizeof(pr_rank),
    .on_hit = pr_hit,
    .describe = pr_describe,
};

/* ==== stopped-output ======================================================================== */

typedef struct so_rank {
    int stopped;
} so_rank;

const dx_reading dx_reading_stopped_output;

/* Per-rank output that stops early: one rank's last timestamped line at least two minutes
 * before every other rank's last line, while they went on (a hang or a dead rank starts there). */
static int so_finish(dx_job_model *jm, void *stp)
{
    (void)stp;
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
        return DDX_OK;
    so_rank *s = dx_job_rstate(jm, &dx_reading_stopped_output, who, 0);
    s->stopped = 1;
    char t[64];
    dx_time_format(&jm->by_rank[who]->last_time, t, sizeof t);
    return dx_job_vote(jm, "stopped", who, 1,
                       "output: rank %d's output stops at %s, %lld s before any other rank's", who,
                       t, (long long)((second - first) / 1000000));
}

static void so_describe(const dx_job_model *jm, const void *st, const void *rs, dx_rank_view *v)
{
    (void)jm;
    (void)st;
    v->stopped = ((const so_rank *)rs)->stopped;
}

const dx_reading dx_reading_stopped_output = {
    .name = "stopped-output",
    .doc = "a rank whose last timestamped line is at least two minutes before every other "
           "rank's last line",
    .rank_size = sizeof(so_rank),
    .finish = so_finish,
    .describe = so_describe,
};

/* ==== uneven-inputs ========================================================================= */

static const dx_reading_fact ui_facts[] = {
    {"job.uneven_inputs", "string",
     "per-rank progress (\"step N/M\", tqdm bars): a rank finished a shorter loop while a rank "
     "with more steps timed out or failed; or the ranks' printed data sizes (\"Rank = 2, Number "
     "of batches 8\", \"rank 0: len(dataloader)=120\") differ"},
};

/* per-rank data sizes people print when a job hangs: "Rank = 2, Number of batches 8",
 * "rank 0: len(dataloader)=120" */
static const dx_signal ui_patterns[] = {
    {"job-rank-batches", DX_ROLE_NOISE, 0,
     "\\b[Rr]ank\\s*[=:]?\\s*(?<rank>\\d+)\\b[,:]?\\s*(?:[Nn]umber of batches|"
     "num_batches|len\\((?:train_)?dataloader\\)|batches per epoch)\\s*[=:]?\\s*"
     "(?<m>\\d+)",
     "per-rank data sizes printed by training scripts", 0},
};

typedef struct ui_state {
    int uneven;
    char why[256];
    int rank; /* the one rank whose data size differs from all (>= 2) others, -1 none */
} ui_state;

typedef struct ui_rank {
    long long nbatches; /* its batches per epoch, -1 unknown */
} ui_rank;

const dx_reading dx_reading_uneven_inputs;

static void ui_init(void *st) { ((ui_state *)st)->rank = -1; }
static void ui_rank_init(void *rs) { ((ui_rank *)rs)->nbatches = -1; }
static int has_batches(const void *rs) { return ((const ui_rank *)rs)->nbatches >= 0; }
static int same_batches(const void *a, const void *b)
{
    return ((const ui_rank *)a)->nbatches == ((const ui_rank *)b)->nbatches;
}

static int ui_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)stp;
    (void)row;
    long long r = dx_hit_ll(h, "rank", -1);
    ui_rank *x = dx_job_rstate(jm, &dx_reading_uneven_inputs,
                               (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1), 1);
    if (x)
        x->nbatches = dx_hit_ll(h, "m", -1);
    return DDX_OK;
}

/* A rank that printed the last step of its loop ("step 4/4") and neither failed nor timed out,
 * while a peer that counts more steps per epoch ("step 4/6") timed out or failed waiting: the
 * peer is in a collective the finished rank will never join. */
static void ui_shorter_loop(dx_job_model *jm, ui_state *st)
{
    for (size_t a = 0; a < jm->nby; a++) {
        const dx_rank *done = jm->by_rank[a];
        long long dn, dm, wn, wm;
        if (!done || !dx_rank_finished(jm, done) || dx_watchdog_timed_out(jm, (int)a) ||
            dx_exception_first(jm, done, NULL) || !dx_progress_of(jm, done, &dn, &dm))
            continue;
        for (size_t b = 0; b < jm->nby; b++) {
            const dx_rank *w = jm->by_rank[b];
            if (!w || w == done || !dx_progress_of(jm, w, &wn, &wm) || wm <= dm)
                continue;
            int timed = dx_watchdog_timed_out(jm, (int)b);
            if (!(timed || dx_exception_first(jm, w, NULL)))
                continue;
            st->uneven = 1;
            snprintf(st->why, sizeof st->why,
                     "rank %d finished all %lld steps of its loop while rank %d, with %lld steps "
                     "to run, was at step %lld and %s",
                     done->rank, dm, w->rank, wm, wn, timed ? "timed out waiting" : "failed");
            return;
        }
    }
}

/* A rank that printed no data size: the length of its loop in its metrics ("it 3/8",
 * "total_steps": 8, a bar's "3/8"). */
static void ui_from_metrics(dx_job_model *jm)
{
    for (size_t r = 0; r < jm->nby; r++) {
        ui_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_uneven_inputs);
        double step, total;
        if (x && x->nbatches < 0 && dx_metrics_step(jm, jm->by_rank[r], &step, &total) &&
            total > 0 && total < 1e15)
            x->nbatches = (long long)total;
    }
}

static int ui_finish(dx_job_model *jm, void *stp)
{
    ui_state *st = stp;
    /* the ranks' own data sizes, when printed: one rank with another number of batches per
     * epoch than all the others */
    const dx_rank *other = NULL;
    size_t n = 0;
    const dx_rank *x =
        dx_job_alone_rank(jm, &dx_reading_uneven_inputs, has_batches, same_batches, &other, &n);
    if (!x) {
        ui_shorter_loop(jm, st);
        if (st->uneven)
            return DDX_OK;
        /* then the lengths of the ranks' loops, as their metrics give them */
        ui_from_metrics(jm);
        x = dx_job_alone_rank(jm, &dx_reading_uneven_inputs, has_batches, same_batches, &other, &n);
        if (!x)
            return DDX_OK;
    }
    const ui_rank *xs = dx_rank_priv(jm, x, &dx_reading_uneven_inputs);
    const ui_rank *os = dx_rank_priv(jm, other, &dx_reading_uneven_inputs);
    st->uneven = 1;
    snprintf(st->why, sizeof st->why,
             "rank %d has %lld batches per epoch while the other %zu rank%s %lld", x->rank,
             xs->nbatches, n, n == 1 ? " has" : "s have", os->nbatches);
    /* with three or more ranks the odd one out is the rank whose extra (or missing) collectives
     * no peer matches; between two ranks neither is odder than the other */
    if (n < 2)
        return DDX_OK;
    st->rank = x->rank;
    return dx_job_vote(jm, "uneven", x->rank, 1, "per-rank data: %s", st->why);
}

static int ui_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const ui_state *st = stp;
    return st->uneven ? dx_job_fact(f, "job.uneven_inputs", "per-rank step progress", "%s", st->why)
                      : DDX_OK;
}

const dx_reading dx_reading_uneven_inputs = {
    .name = "uneven-inputs",
    .doc = "ranks whose printed data sizes differ, or a rank that finished a shorter loop while "
           "a peer with more steps waited; votes for the one rank of three or more that differs",
    .facts = ui_facts,
    .nfacts = DX_ARRAY_LEN(ui_facts),
    .patterns = ui_patterns,
    .npatterns = DX_ARRAY_LEN(ui_patterns),
    .state_size = sizeof(ui_state),
    .rank_size = sizeof(ui_rank),
    .init = ui_init,
    .rank_init = ui_rank_init,
    .on_hit = ui_hit,
    .finish = ui_finish,
    .publish = ui_publish,
};

/* ==== stuck-rank ============================================================================ */

static const dx_reading_fact sr_facts[] = {
    {"job.stuck_rank", "int",
     "the one rank that neither timed out, failed nor finished while the others timed out "
     "waiting; or, when nothing failed, the one rank whose posted stack dump is outside any "
     "collective (a heading such as \"stack for rank 3\" or py-spy's `--local_rank=N` names the "
     "rank; the standard library's waits are skipped to the first caller outside them)"},
};

typedef struct sr_state {
    int rank; /* -1 none */
    char why[256];
    size_t timed; /* ranks that timed out, when the stuck rank was seen in the logs */
} sr_state;

const dx_reading dx_reading_stuck_rank;

static void sr_init(void *st) { ((sr_state *)st)->rank = -1; }

/* A rank that printed nothing at all: the one gap in the ranks 0..max that timed out or failed. */
static void sr_gap(dx_job_model *jm, sr_state *st, size_t timed, size_t failed)
{
    int gap = -1, ngap = 0;
    size_t top = 0;
    for (size_t r = 0; r < jm->nby; r++)
        if (jm->by_rank[r])
            top = r;
    for (size_t r = 0; r < top; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (x && x->lines)
            continue;
        if (!x || !(dx_watchdog_timed_out(jm, (int)r) || dx_table_lists(jm, x))) {
            gap = (int)r;
            ngap++;
        }
    }
    /* a rank whose log could not be read printed nothing ddx knows of: no gap to name */
    if (ngap != 1 || (jm->by_rank[gap] && jm->by_rank[gap]->unreadable))
        return;
    st->rank = gap;
    (void)dx_job_rank(jm, gap); /* listed among the ranks, as silent */
    snprintf(st->why, sizeof st->why,
             "%zu ranks timed out or failed; rank %d, between them, printed nothing and did not "
             "fail",
             timed + failed, gap);
}

/* Some ranks timed out in a collective, and exactly one other rank, seen in the logs, printed no
 * timeout, no error and had not finished its loop: the others wait for it. */
static void sr_quiet(dx_job_model *jm, sr_state *st)
{
    size_t timed = 0, quiet = 0, failed = 0, rooted = 0;
    const dx_rank *q = NULL;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x || (x->unreadable && !x->lines)) /* its log could not be read: not quiet */
            continue;
        rooted += x->first_error != NULL;
        if (dx_watchdog_timed_out(jm, (int)r))
            timed++;
        else if (dx_table_lists(jm, x))
            failed++;
        else if (!x->first_error && !dx_exception_first(jm, x, NULL) && !dx_rank_finished(jm, x)) {
            quiet++;
            q = x;
        }
    }
    /* (ranks the launcher's table lists as failed count here too, unless some rank printed a
     * root failure of its own, which then explains the table) */
    if (timed + (rooted ? 0 : failed) >= 2 && quiet == 0) {
        sr_gap(jm, st, timed, failed);
        return;
    }
    if (!timed || quiet != 1)
        return;
    long long n, m;
    st->rank = q->rank;
    st->timed = timed;
    if (dx_progress_of(jm, q, &n, &m))
        snprintf(st->why, sizeof st->why,
                 "%zu rank%s timed out waiting in a collective; rank %d printed no timeout and no "
                 "error, and its last progress was step %lld of %lld",
                 timed, timed == 1 ? "" : "s", q->rank, n, m);
    else
        snprintf(st->why, sizeof st->why,
                 "%zu rank%s timed out waiting in a collective; rank %d printed no timeout and no "
                 "error",
                 timed, timed == 1 ? "" : "s", q->rank);
}

static int sr_finish(dx_job_model *jm, void *stp)
{
    sr_state *st = stp;
    sr_quiet(jm, st);
    /* nothing timed out or failed and one rank's stack, taken because the job hung, is outside
     * any collective */
    const char *why = NULL;
    int lone = st->rank < 0 ? dx_stacks_lone_rank(jm, &why) : -1;
    if (lone >= 0) {
        st->rank = lone;
        snprintf(st->why, sizeof st->why, "%.255s", why);
    }
    return DDX_OK;
}

int dx_stuck_rank(dx_job_model *jm, size_t *timed, const char **why)
{
    (void)dx_job_need(jm, &dx_reading_stuck_rank);
    const sr_state *st = dx_job_state(jm, &dx_reading_stuck_rank);
    *timed = st->timed;
    *why = st->why;
    return st->rank;
}

static int sr_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const sr_state *st = stp;
    return st->rank >= 0 ? dx_job_fact(f, "job.stuck_rank", st->why, "%d", st->rank) : DDX_OK;
}

const dx_reading dx_reading_stuck_rank = {
    .name = "stuck-rank",
    .doc = "the one rank that printed no timeout, no error and did not finish while the others "
           "timed out waiting (or printed nothing between them), or the lone dumped rank outside "
           "any collective",
    .facts = sr_facts,
    .nfacts = DX_ARRAY_LEN(sr_facts),
    .state_size = sizeof(sr_state),
    .init = sr_init,
    .finish = sr_finish,
    .publish = sr_publish,
};

/* ==== left-early ============================================================================ */

static const dx_reading_fact le_facts[] = {
    {"job.left_rank", "int",
     "the one rank that printed no error and did not finish its loop while every other rank "
     "failed only as the victim of a lost peer (a remote-rank reference reads its error); when "
     "several ranks are quiet, the one that announced it stops early (Lightning's 'Signaling "
     "Trainer to stop', 'early stopping at ...', ignite's 'EarlyStopping: Stop training')"},
};

/* a rank announcing it leaves the training loop on its own */
static const dx_signal le_patterns[] = {
    {"job-early-stop", DX_ROLE_NOISE, 0,
     "Signaling Trainer to stop\\.|(?:\\[[Rr]ank (?<rank>\\d+)\\] )?\\b[Ee]arly[ -]?[Ss]topping"
     "(?: at\\b| triggered|[.!]|:? *$)|EarlyStopping: Stop training",
     "lightning/pytorch/callbacks/early_stopping.py (_evaluate_stopping_criteria: 'Signaling "
     "Trainer to stop.'); ignite/handlers/early_stopping.py ('EarlyStopping: Stop training'); "
     "keras callbacks ('Epoch N: early stopping'); training scripts' own early-stopping lines",
     0},
};

typedef struct le_state {
    int rank; /* -1 none */
    char why[256];
} le_state;

typedef struct le_rank {
    int announced; /* it said it stops early */
} le_rank;

const dx_reading dx_reading_left_early;

static void le_init(void *st) { ((le_state *)st)->rank = -1; }

static int le_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)stp;
    (void)row;
    /* a script's own "[rank 0] early stopping ...", glued to a progress bar, names the rank */
    long long r = h->rank >= 0 ? h->rank : dx_hit_ll(h, "rank", -1);
    le_rank *x =
        dx_job_rstate(jm, &dx_reading_left_early, (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1), 1);
    if (x)
        x->announced = 1;
    return DDX_OK;
}

/* Every rank that failed, failed only because a peer went away (its exceptions are echoes of
 * another rank's failure, no timeout, no original exception), and exactly one rank printed no
 * error and did not finish its loop: that rank left (it returned, or exited with status 0, as a
 * rank that stops early on its own does) and the others lost it. Of several quiet ranks, the one
 * that announced it stops early. */
static int le_finish(dx_job_model *jm, void *stp)
{
    le_state *st = stp;
    size_t victims = 0, quiet = 0, said = 0;
    int q = -1, a = -1;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        if (dx_exception_original(jm, x, NULL) || dx_watchdog_timed_out(jm, (int)r))
            return DDX_OK; /* a failure of its own somewhere, or a hang: other readings' */
        if (dx_exception_first(jm, x, NULL)) {
            victims++; /* only echoes of a lost peer (no original exception, above) */
            continue;
        }
        if (x->first_error)
            return DDX_OK; /* a root failure that is no exception: not a lost peer */
        long long n, m;
        const le_rank *l = dx_rank_priv(jm, x, &dx_reading_left_early);
        int left = l && l->announced;
        if (dx_rank_finished(jm, x) || !(left || dx_progress_of(jm, x, &n, &m)))
            continue; /* finished, or nothing shows where it stopped */
        quiet++;
        q = (int)r;
        if (left) {
            said++;
            a = (int)r;
        }
    }
    if (!victims || !quiet)
        return DDX_OK;
    if (quiet == 1)
        st->rank = q;
    else if (said == 1)
        st->rank = a;
    else
        return DDX_OK;
    const le_rank *l = dx_job_rstate(jm, &dx_reading_left_early, st->rank, 0);
    snprintf(st->why, sizeof st->why,
             "rank %d %s and printed no error, while the %zu rank%s that failed only lost a "
             "peer",
             st->rank,
             l && l->announced ? "announced it stops early" : "stopped before its loop ended",
             victims, victims == 1 ? "" : "s");
    return dx_job_vote(jm, "left", st->rank, 1, "left early: %s", st->why);
}

static int le_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const le_state *st = stp;
    return st->rank >= 0 ? dx_job_fact(f, "job.left_rank", st->why, "%d", st->rank) : DDX_OK;
}

const dx_reading dx_reading_left_early = {
    .name = "left-early",
    .doc = "the one rank that stopped without an error (announcing it stops early, or just "
           "ending) while every other rank failed as the victim of a lost peer; votes for it",
    .facts = le_facts,
    .nfacts = DX_ARRAY_LEN(le_facts),
    .patterns = le_patterns,
    .npatterns = DX_ARRAY_LEN(le_patterns),
    .state_size = sizeof(le_state),
    .rank_size = sizeof(le_rank),
    .init = le_init,
    .on_hit = le_hit,
    .finish = le_finish,
    .publish = le_publish,
};

/* ==== busy-rank ============================================================================= */

static const dx_reading_fact br_facts[] = {
    {"job.busy_rank", "int",
     "the rank busy with long work of its own when a collective timed out: its 'saving "
     "checkpoint'/'running evaluation' line is timed when the collective started (timeout line "
     "time minus 'ran for'), or its progress bar stops where the collective error is printed (no "
     "rank prefix: rank 0); or rank 0, reporting no timeout, while others timed out after its "
     "closed bar, with its bar going on after their timeout, after its evaluation line as the "
     "last phase, or in the job's first or second collective with rank 0 the stuck rank"},
};

enum { BR_BAR_CUT, BR_WATCHDOG_RAN, BR_LONG_WORK };

static const dx_signal br_patterns[] = {
    /* a tqdm bar left unfinished when the process group reports a failed collective on the same
     * console line (the whole bar, or cut while it was drawn: "6%|▋ [E ..."): that rank was busy
     * in a long loop (evaluation, preprocessing, saving). A bar still at 0 items ("0/500") is no
     * such loop: it made no progress in the whole timeout, so that rank was stuck as well. */
    [BR_BAR_CUT] = {"job-bar-cut", DX_ROLE_NOISE, 0,
                    "\\b\\d{1,2}%\\|(?:[^|\\[]*\\| *[1-9]\\d*/\\d+ \\[[^\\]]*\\]|[^|\\[]*)"
                    "(?:\\[E |\\[rank(?<er>\\d+)\\]:\\[E|\\[E\\d{4} )",
                    "tqdm progress bars; torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp log "
                    "prefix",
                    0},
    /* how long the timed-out collective ran: with the line's time, when it started */
    [BR_WATCHDOG_RAN] = {"job-watchdog-ran", DX_ROLE_NOISE, 0,
                         "Watchdog caught collective operation timeout: "
                         "Work\\w*\\((?:[^()]|\\([^()]*\\))*\\) ran for "
                         "(?<ms>\\d+) milliseconds before timing",
                         "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* a rank announcing long work of its own (saving, evaluating, loading, preprocessing) */
    [BR_LONG_WORK] = {"job-long-work", DX_ROLE_NOISE, 0,
                      "\\b(?:[Ss]aving (?:the )?(?:latest |best |final )?(?:model |sharded )?"
                      "checkpoint|[Ss]aving model (?:checkpoint )?to|[Rr]unning [Ee]valuation|"
                      "[Ss]tart(?:ing)? (?:of )?[Ee]valuation|[Ss]tart of validation)\\b",
                      "common trainer logs (Hugging Face Trainer 'Saving model checkpoint to', "
                      "'***** Running Evaluation *****')",
                      0},
};

typedef struct br_state {
    struct {
        dx_time t;
        int rank;
    } work[16]; /* timed lines saying a rank starts long work */
    int nwork;
    struct {
        dx_time t;
        int rank;
        long long ran_ms;
    } wait[16]; /* timed watchdog timeouts */
    int nwait;
    /* the rank whose progress bar a collective error cut off (rank 0 when the bar carries no
       rank: trainers draw bars on rank 0), or that worked alone; -1 none */
    int rank;
    /* the rank of the error that cut an unprefixed bar ("[rank1]:[E..."), -1 none */
    int bar_err_rank;
    char why[300];
} br_state;

const dx_reading dx_reading_busy_rank;

static void br_init(void *st)
{
    ((br_state *)st)->rank = -1;
    ((br_state *)st)->bar_err_rank = -1;
}

/* An unprefixed bar cut by rank r's error in a log that holds lines of rank r alone (one rank's
 * file, or one node's console with one rank): the bar is rank r's own, not rank 0's. */
static int br_bar_is_own(const dx_job_model *jm, int r)
{
    if (r < 0)
        return 0;
    for (size_t k = 0; k < jm->nby; k++)
        if (jm->by_rank[k] && jm->by_rank[k]->lines && (int)k != r)
            return 0;
    return 1;
}

static int br_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    br_state *st = stp;
    if (row == BR_BAR_CUT) {
        if (st->rank < 0) {
            st->rank = h->rank >= 0 ? h->rank : 0;
            st->bar_err_rank = h->rank >= 0 ? -1 : (int)dx_hit_ll(h, "er", -1);
        }
    } else if (row == BR_WATCHDOG_RAN) {
        if (h->has_time && st->nwait < (int)DX_ARRAY_LEN(st->wait)) {
            st->wait[st->nwait].t = h->time;
            st->wait[st->nwait].rank = h->rank;
            st->wait[st->nwait].ran_ms = dx_hit_ll(h, "ms", -1);
            st->nwait++;
        }
    } else if (h->has_time && st->nwork < (int)DX_ARRAY_LEN(st->work)) {
        st->work[st->nwork].t = h->time;
        st->work[st->nwork].rank = h->rank;
        st->nwork++;
    }
    return DDX_OK;
}

int dx_progress_timeout_at(const dx_job_model *jm, int rank, dx_time *t)
{
    const br_state *st = dx_job_state(jm, &dx_reading_busy_rank);
    for (int w = 0; w < st->nwait; w++)
        if (st->wait[w].rank == rank) {
            *t = st->wait[w].t;
            return 1;
        }
    return 0;
}

/* A collective that timed out started (line time - how long it ran) when one rank logged the
 * start of long work of its own: that rank kept the others waiting. */
static void br_timed(dx_job_model *jm, br_state *st)
{
    for (int w = 0; w < st->nwait && st->rank < 0; w++) {
        if (st->wait[w].ran_ms < 0)
            continue;
        dx_time tw = st->wait[w].t;
        if (!tw.year)
            tw.year = jm->year;
        int64_t start = dx_time_key(&tw, NULL) - (int64_t)st->wait[w].ran_ms * 1000;
        for (int k = 0; k < st->nwork; k++) {
            dx_time tk = st->work[k].t;
            if (!tk.year)
                tk.year = jm->year;
            int64_t d = dx_time_key(&tk, NULL) - start;
            int r = st->work[k].rank >= 0 ? st->work[k].rank : 0;
            if (d < -60 * INT64_C(1000000) || d > 5 * INT64_C(1000000) || r == st->wait[w].rank)
                continue;
            st->rank = r;
            char t[64];
            dx_time_format(&tk, t, sizeof t);
            snprintf(st->why, sizeof st->why,
                     "the collective rank %d timed out in started at about %s, when rank %d%s "
                     "logged the start of long work (saving, evaluation)",
                     st->wait[w].rank, t, r,
                     st->work[k].rank >= 0 ? "" : " (no rank prefix: rank 0 logs)");
            break;
        }
    }
}

/* How many ranks other than 0 timed out in a collective while rank 0 reported no timeout and no
 * error (0 when rank 0 did, or none did). */
static size_t br_others_waited(dx_job_model *jm)
{
    const dx_rank *z = dx_job_rank_get(jm, 0);
    if (z && (dx_watchdog_timed_out(jm, 0) || z->first_error || dx_exception_first(jm, z, NULL)))
        return 0;
    size_t others = 0;
    for (size_t r = 1; r < jm->nby; r++)
        others += jm->by_rank[r] && dx_watchdog_timed_out(jm, (int)r);
    return others;
}

/* Rank 0 alone in work of its own: its (unprefixed) progress bar is the last output before other
 * ranks time out in a collective, that loop had ended (the bar reached its total or was blanked
 * on close) or went on after their timeout was printed, and rank 0 itself reports no timeout and
 * no error; so it went on to something else rather than wait with them (rank-0-only evaluation,
 * saving). A bar cut mid-loop is not enough: every rank stalls in the same step then, rank 0
 * included. */
static void br_bar0(dx_job_model *jm, br_state *st, size_t others)
{
    int closed, moved;
    const char *bar = dx_progress_bar0(jm, &closed, &moved);
    if (!bar[0] || !(closed || moved))
        return;
    st->rank = 0;
    snprintf(st->why, sizeof st->why,
             "an unprefixed progress bar (trainers draw bars on rank 0) %s %s %s %zu other rank%s "
             "timed out in a collective, and rank 0 reported no timeout: it was busy alone while "
             "they waited",
             closed ? "ran to" : "was at", bar,
             closed ? "and closed just before" : "and went on after", others,
             others == 1 ? "" : "s");
}

/* Rank 0 announced an evaluation as the last phase before the other ranks timed out in a
 * collective, and reported no timeout itself: the others waited for that work (a COCO or other
 * metric computed on rank 0). A checkpoint phase is not read here: saving gathers the state on
 * every rank first, which the checkpoint references weigh. */
static void br_phase0(dx_job_model *jm, br_state *st, size_t others)
{
    int prank;
    char where[320];
    const char *phase = dx_phase_before_timeout(jm, &prank, where, sizeof where);
    if (!phase || prank > 0 || strcmp(phase, "evaluation"))
        return;
    st->rank = 0;
    snprintf(st->why, sizeof st->why,
             "the last phase before %zu other rank%s timed out in a collective was rank 0's %s "
             "(%.90s), and rank 0 reported no timeout: the others waited for it",
             others, others == 1 ? "" : "s", phase, where);
}

/* The one rank the others wait for is rank 0 and they wait in their first or second collective
 * (SeqNum 1 or 2: the set-up barrier or first broadcast): nothing had run yet, so rank 0 was
 * still in start-up work of its own (preprocessing, loading, downloading) rather than stuck in
 * shared work. */
static void br_first_collective(dx_job_model *jm, br_state *st, size_t others)
{
    size_t timed;
    const char *why;
    (void)others;
    if (dx_stuck_rank(jm, &timed, &why) != 0)
        return;
    long long top = -1;
    for (size_t r = 1; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        const dx_timeout *t = x ? dx_watchdog_of(jm, x) : NULL;
        if (!t || !t->timed_out)
            continue;
        if (t->seq < 1)
            return; /* a sequence number unknown: no telling which collective */
        top = t->seq > top ? t->seq : top;
    }
    if (top < 1 || top > 2)
        return;
    st->rank = 0;
    snprintf(st->why, sizeof st->why,
             "the other ranks timed out in collective %lld of the job, before anything had run, "
             "waiting for rank 0, which printed no timeout: it was still in start-up work of its "
             "own",
             top);
}

static int br_finish(dx_job_model *jm, void *stp)
{
    br_state *st = stp;
    if (st->rank == 0 && !st->why[0] && br_bar_is_own(jm, st->bar_err_rank))
        st->rank = -1;
    br_timed(jm, st);
    /* rank 0 busy alone while the others timed out: the first of these ways to see it names it */
    static void (*const rank0_busy[])(dx_job_model *, br_state *, size_t) = {br_bar0, br_phase0,
                                                                             br_first_collective};
    size_t others = st->rank < 0 ? br_others_waited(jm) : 0;
    for (size_t k = 0; k < DX_ARRAY_LEN(rank0_busy) && st->rank < 0 && others; k++)
        rank0_busy[k](jm, st, others);
    /* a rank whose progress bar the collective error cut off was busy while others waited */
    if (st->rank < 0 || dx_watchdog_timed_out(jm, st->rank))
        return DDX_OK;
    if (st->why[0])
        return dx_job_vote(jm, "busy", st->rank, 1, "timing: %s", st->why);
    const dx_rank *x = dx_job_rank_get(jm, st->rank);
    return dx_job_vote(jm, "busy", st->rank, 1,
                       "progress: rank %d's progress bar%s stops where the collective fails, so "
                       "it was still busy in a long loop",
                       st->rank,
                       x && x->lines ? "" : " (no rank prefix: bars are drawn by rank 0)");
}

static int br_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    const br_state *st = stp;
    if (st->rank < 0 || dx_watchdog_timed_out(jm, st->rank))
        return DDX_OK;
    return dx_job_fact(f, "job.busy_rank",
                       st->why[0] ? st->why : "a progress bar the collective error cut off", "%d",
                       st->rank);
}

const dx_reading dx_reading_busy_rank = {
    .name = "busy-rank",
    .doc = "the rank busy with long work of its own (saving, evaluation) when a collective timed "
           "out, from the timed-out collective's start, a progress bar it cut off or that went "
           "on after it, rank 0's evaluation as the last phase before it, or rank 0 missing from "
           "the job's first collective",
    .facts = br_facts,
    .nfacts = DX_ARRAY_LEN(br_facts),
    .patterns = br_patterns,
    .npatterns = DX_ARRAY_LEN(br_patterns),
    .state_size = sizeof(br_state),
    .init = br_init,
    .on_hit = br_hit,
    .finish = br_finish,
    .publish = br_publish,
};

/* ==== phases ================================================================================ */

static const dx_reading_fact ph_facts[] = {
    {"job.last_phase", "string",
     "the phase of the last phase line read (of the input read last): `launch` (torchelastic's "
     "rendezvous, a Ray trainer waiting for its placement group), `init` (NCCL's Init COMPLETE, "
     "Lightning's set-up lines), `training` (a step in the metrics), `evaluation` (Lightning's "
     "validation bar, the Trainer's evaluation banner, mmdet's, detectron2's and pycocotools' "
     "'Evaluating ...' lines), `generation` (a generation bar), "
     "`checkpoint` (a trainer saving), `done` (a trainer's end-of-training message)"},
};

enum { PH_LAUNCH, PH_INIT, PH_EVALUATION, PH_GENERATION, PH_CHECKPOINT, PH_DONE };

/* lines that start a phase (the steps of training come from the metrics reading) */
static const dx_signal ph_patterns[] = {
    [PH_LAUNCH] = {"job-phase-launch", DX_ROLE_NOISE, 0,
                   "Rendezvous'ing worker group|Starting elastic_operator with launch configs|"
                   "INFO trainer\\.py:\\d+ -- Trainer logs will be logged in: |"
                   "\\b[Ww]aiting for (?:the )?(?:\\w+ )?placement group\\b",
                   "torch/distributed/elastic/agent/server/api.py (_rendezvous); "
                   "torch/distributed/launcher/api.py (launch_agent); ray python/ray/train/"
                   "trainer.py (Ray 1.x); RL trainers' placement-group waits",
                   0},
    [PH_INIT] = {"job-phase-init", DX_ROLE_NOISE, 0,
                 "NCCL INFO (?:\\w+ )?comm 0x[0-9a-f]+ rank \\d+ nranks \\d+ cudaDev|"
                 "All (?:DDP|distributed) processes registered\\. Starting|"
                 "(?:[Ii]nitializing distributed|initializing ddp): GLOBAL_RANK: \\d+",
                 "nccl src/init.cc (Init COMPLETE); lightning/fabric/strategies/ddp.py, "
                 "lightning/pytorch/strategies/ddp.py (_setup_distributed); "
                 "lightning/fabric/utilities/distributed.py (_init_dist_connection: the "
                 "registration banner)",
                 0},
    [PH_EVALUATION] = {"job-phase-evaluation", DX_ROLE_NOISE, 0,
                       "(?:\\bValidation DataLoader \\d+:|\\*{5} Running Evaluation \\*{5}|"
                       "\\bEvaluating [\\w*-]+(?: [\\w*-]+){0,5}\\.\\.\\. *$|"
                       "^Running per image evaluation\\.\\.\\.)",
                       "lightning src/lightning/pytorch/loops (the validation bar's description "
                       "'Validation DataLoader 0'); transformers trainer.py evaluation_loop; "
                       "mmdet evaluation/metrics/coco_metric.py (3.x) and datasets/coco.py (2.x) "
                       "'Evaluating {metric}...'; detectron2 evaluation/coco_evaluation.py "
                       "'Evaluating predictions with {} COCO API...'; pycocotools cocoeval.py "
                       "(evaluate: 'Running per image evaluation...')",
                       0},
    [PH_GENERATION] = {"job-phase-generation", DX_ROLE_NOISE, 0,
                       "\\bGenerat(?:ing|e|ion)\\b[^|\\n]{0,40}: +\\d+%\\|",
                       "a tqdm generation bar (TRL, DPO/PPO trainers, evaluation scripts)", 0},
    [PH_CHECKPOINT] = {"job-phase-checkpoint", DX_ROLE_NOISE, 0,
                       "\\b(?:[Ss]aving (?:the )?(?:latest |best |final )?(?:model )?checkpoint|"
                       "[Ss]aving model checkpoint to)\\b",
                       "transformers trainer.py (_save_checkpoint: 'Saving model checkpoint to'); "
                       "common trainer logs",
                       0},
    [PH_DONE] =
        {"job-phase-done", DX_ROLE_NOISE, 0,
         "`Trainer\\.fit` stopped: |Training completed\\. Do not forget to share your model",
         "lightning/pytorch/loops/fit_loop.py (rank_zero_info); transformers/trainer.py "
         "(_inner_training_loop)",
         0},
};

/* the names of the phases, by pattern row; training is the metrics reading's */
static const char *const ph_names[] = {"launch",     "init",       "evaluation",
                                       "generation", "checkpoint", "done"};

/* The latest phase line: which (a name), where, its text. */
typedef struct ph_state {
    const char *phase; /* NULL none */
    uint64_t seq;
    uint64_t line;  /* the last phase line: its number and file (said at publish, since every */
    char path[300]; /* step line of a trainer's log moves it) */
    /* the last phase read before the first watchdog timeout line: which, its rank, where */
    const char *pre;
    int pre_rank;
    uint64_t pre_seq, pre_line;
    char pre_path[300];
} ph_state;

const dx_reading dx_reading_phases;

static void ph_set(dx_job_model *jm, ph_state *st, const char *phase, int rank, uint64_t seq,
                   const char *path, uint64_t line)
{
    if (!dx_watchdog_lines(jm) && !(st->pre && seq < st->pre_seq)) {
        st->pre = phase;
        st->pre_rank = rank;
        st->pre_seq = seq;
        st->pre_line = line;
        if (strncmp(st->pre_path, path, sizeof st->pre_path))
            snprintf(st->pre_path, sizeof st->pre_path, "%s", path);
    }
    if (st->phase && seq < st->seq)
        return;
    st->phase = phase;
    st->seq = seq;
    st->line = line;
    if (strncmp(st->path, path, sizeof st->path))
        snprintf(st->path, sizeof st->path, "%s", path);
}

void dx_phases_note_step(dx_job_model *jm, const dx_line *l)
{
    ph_set(jm, dx_job_state(jm, &dx_reading_phases), "training", l->rank, l->seq, l->path,
           l->lineno);
}

static int ph_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    ph_set(jm, stp, ph_names[row], h->rank, h->seq, h->path, h->line);
    return DDX_OK;
}

const char *dx_phase_before_timeout(const dx_job_model *jm, int *rank, char *where, size_t cap)
{
    const ph_state *st = dx_job_state(jm, &dx_reading_phases);
    if (!st->pre || !dx_watchdog_lines(jm))
        return NULL;
    *rank = st->pre_rank;
    snprintf(where, cap, "%s:%llu", st->pre_path, (unsigned long long)st->pre_line);
    return st->pre;
}

static int ph_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const ph_state *st = stp;
    if (!st->phase)
        return DDX_OK;
    char where[360];
    snprintf(where, sizeof where, "the last phase line is %s:%llu", st->path,
             (unsigned long long)st->line);
    where[299] = '\0'; /* said in at most 299 bytes, as it always was */
    return dx_job_fact(f, "job.last_phase", where, "%s", st->phase);
}

const dx_reading dx_reading_phases = {
    .name = "phases",
    .doc = "the last phase the log reached (launch, init, training, evaluation, generation, "
           "checkpoint, done)",
    .facts = ph_facts,
    .nfacts = DX_ARRAY_LEN(ph_facts),
    .patterns = ph_patterns,
    .npatterns = DX_ARRAY_LEN(ph_patterns),
    .state_size = sizeof(ph_state),
    .on_hit = ph_hit,
    .publish = ph_publish,
};
