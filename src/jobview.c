/* jobview.c -- the job as the HTML report draws it (see jobview.h): the accessors over the job
 * model, and the per-rank spans of lines the report keeps while the inputs are read.
 *
 * dx_view_note_line runs for every attributed line, so it only stores: the first line of a rank
 * once, then its last line and last time on every line. Time keys are computed when asked, with
 * the job's year for times that carry none (glog).
 */
#include "jobview.h"

#include "job/launchers.h"
#include "job/progress.h"
#include "job/steps.h"

typedef struct dx_span {
    uint64_t first_seq, last_seq; /* 0: no line of this rank */
    int has_first_time, has_last_time;
    dx_time first_time, last_time;
} dx_span;

int dx_view_note_line(ddx_report *rep, int rank, uint64_t seq, const dx_attr *a)
{
    if (rank < 0 || rank >= DX_JOB_MAX_RANK)
        return DDX_OK;
    if ((size_t)rank >= rep->nspans) {
        size_t cap = rep->nspans;
        if (dx_grow((void **)&rep->spans, &cap, (size_t)rank + 1, sizeof(dx_span)))
            return DDX_ENOMEM;
        memset(rep->spans + rep->nspans, 0, (cap - rep->nspans) * sizeof(dx_span));
        rep->nspans = cap;
    }
    dx_span *s = &rep->spans[rank];
    if (!s->first_seq)
        s->first_seq = seq;
    s->last_seq = seq;
    if (a->has_time) {
        if (!s->has_first_time) {
            s->has_first_time = 1;
            s->first_time = a->time;
        }
        s->has_last_time = 1;
        s->last_time = a->time;
    }
    return DDX_OK;
}

void dx_view_fini(ddx_report *rep)
{
    dx_free(rep->spans);
    rep->spans = NULL;
    rep->nspans = 0;
}

/* A time's sort key, with the job's year when the time has a date but no year. */
static int64_t time_key(const ddx_report *rep, dx_time t)
{
    if (!t.year && t.month && rep->job.year)
        t.year = rep->job.year;
    return dx_time_key(&t, NULL);
}

size_t dx_view_rank_limit(const ddx_report *rep)
{
    return rep->job.nby > rep->nspans ? rep->job.nby : rep->nspans;
}

size_t dx_view_rank_count(const ddx_report *rep)
{
    size_t n = 0;
    for (size_t r = 0; r < dx_view_rank_limit(rep); r++)
        n += dx_job_rank_get(&rep->job, (int)r) || (r < rep->nspans && rep->spans[r].first_seq);
    return n;
}

const char *dx_view_state(const ddx_report *rep, int rank, const char *state)
{
    for (size_t i = 0; rep->frv.decisive && i < rep->frv.nculprits; i++)
        if (rep->frv.culprits[i] == rank && !strcmp(state, "healthy"))
            return "silent";
    return state;
}

size_t dx_view_culprits(const ddx_report *rep, int *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < rep->nculprit_ranks && n < max; i++)
        out[n++] = rep->culprit_ranks[i];
    if (!n && rep->culprit >= 0 && max)
        out[n++] = rep->culprit;
    return n;
}

int dx_view_rank(const ddx_report *rep, size_t r, dx_rank_info *out)
{
    const dx_rank *x = dx_job_rank_get(&rep->job, (int)r);
    const dx_span *s = r < rep->nspans && rep->spans[r].first_seq ? &rep->spans[r] : NULL;
    if (!x && !s)
        return 0;
    memset(out, 0, sizeof *out);
    out->rank = (int)r;
    out->gpu = -1;
    out->pid = out->timeout_seq = out->last_completed = -1;
    out->state = "healthy";
    if (s) {
        out->first_seq = s->first_seq;
        out->last_seq = s->last_seq;
        if ((out->has_first_time = s->has_first_time))
            out->first_time = s->first_time;
        if ((out->has_last_time = s->has_last_time))
            out->last_time = s->last_time;
    }
    if (x) {
        dx_rank_view v;
        dx_job_rank_view(&rep->job, x, &v);
        out->state = v.state;
        out->host = x->host[0] ? x->host : NULL;
        out->gpu = x->cuda_dev;
        out->pid = x->pid;
        out->lines = x->lines;
        if (!out->has_last_time && x->has_time) {
            out->has_last_time = 1;
            out->last_time = x->last_time;
        }
        out->first_error = x->first_error;
        out->timed_out = v.timed_out;
        out->timeout_op = v.timeout_op && v.timeout_op[0] ? v.timeout_op : NULL;
        out->timeout_seq = v.timeout_seq;
        out->last_completed = v.has_last_completed ? v.last_completed : -1;
        out->slow = v.slow;
        out->step_median = v.step_median[0];
        out->rel_speed = v.step_median[0] > 0 || v.slow ? v.rel_speed : 0;
        out->waits_in = v.waits_in;
        if ((out->has_prog = v.has_prog)) {
            out->prog_n = v.prog_n;
            out->prog_m = v.prog_m;
        }
        dx_time t;
        if (out->timed_out && dx_progress_timeout_at(&rep->job, (int)r, &t)) {
            out->has_timeout_time = 1;
            out->timeout_key = time_key(rep, t);
        }
    }
    if (out->has_first_time)
        out->first_key = time_key(rep, out->first_time);
    if (out->has_last_time)
        out->last_key = time_key(rep, out->last_time);
    int c[DX_VOTE_RANKS];
    size_t nc = dx_view_culprits(rep, c, DX_ARRAY_LEN(c));
    for (size_t i = 0; i < nc; i++)
        out->culprit |= c[i] == (int)r;
    out->state = dx_view_state(rep, (int)r, out->state);
    return 1;
}

int dx_view_restarts(const ddx_report *rep) { return dx_restarts(&rep->job); }

int dx_view_straggler(const ddx_report *rep, const char **why)
{
    return dx_steps_straggler(&rep->job, why, NULL);
}

/* ---- series ---- */

static const struct {
    const char *title, *unit;
} series_info[DX_SERIES_COUNT] = {
    [DX_SERIES_STEP] = {"Step time", "s"},
    [DX_SERIES_DATA_WAIT] = {"Time waiting for data", "s"},
    [DX_SERIES_LOSS] = {"Loss", ""},
    [DX_SERIES_GRAD_NORM] = {"Gradient norm", ""},
};

const char *dx_view_series_title(const ddx_report *rep, dx_series_kind kind)
{
    int from_fr = 0;
    (void)dx_steps_straggler(&rep->job, NULL, &from_fr);
    if (kind == DX_SERIES_STEP && from_fr)
        return "Working time between collectives (flight recorder)";
    return kind < DX_SERIES_COUNT ? series_info[kind].title : "";
}

const char *dx_view_series_unit(dx_series_kind kind)
{
    return kind < DX_SERIES_COUNT ? series_info[kind].unit : "";
}

size_t dx_view_series(const ddx_report *rep, int rank, dx_series_kind kind, double *out, size_t max)
{
    if (kind != DX_SERIES_STEP && kind != DX_SERIES_DATA_WAIT)
        return 0; /* loss and gradient norm: the metrics reading will provide them */
    return dx_steps_samples(&rep->job, rank, kind == DX_SERIES_STEP ? 0 : 1, out, max);
}

long dx_view_series_mark(const ddx_report *rep, int rank, dx_series_kind kind)
{
    (void)rep;
    (void)rank;
    (void)kind;
    return -1; /* the NaN onset of a loss: the metrics reading will provide it */
}
