/* job.c -- the job model's core: ranks, the readings' private state, dispatching lines and hits
 * to the readings of the registry, finishing and publishing, votes.
 *
 * The readings themselves live in src/job/ (one file per family) and are listed, in the order
 * they run, in src/job/registry.c. This file knows none of them by name: it walks the registry.
 * Per-rank private state is one block per rank, each reading at a fixed offset (its rank_size,
 * rounded up to the alignment of any type); job-wide state is one allocation per reading.
 */
#include "job.h"

#include <pthread.h>

#include "match.h"

#define ALIGN(n) (((n) + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1))

/* ==== the readings' places ================================================================== */

static size_t index_of(const dx_reading *rd)
{
    for (size_t i = 0; i < dx_nreadings; i++)
        if (dx_readings[i] == rd)
            return i;
    return SIZE_MAX; /* a reading not in the registry: a bug */
}

/* The offset of reading i's per-rank state in a rank's block, and the block's size (i = n). */
static size_t rank_offset(size_t i)
{
    size_t off = 0;
    for (size_t k = 0; k < i && k < dx_nreadings; k++)
        off += ALIGN(dx_readings[k]->rank_size);
    return off;
}

/* Each reading's index and offset in a rank's block, found by its address: an open-addressing
 * table made once (dx_rank_priv and dx_job_state run several times a line); and the readings
 * that read every line or place lines, in registry order, so that a line visits only them. */
#define RP_SLOTS 256 /* a power of two; the registry must fill at most half */

static struct {
    const dx_reading *rd;
    size_t off, idx;
} rp_table[RP_SLOTS];
static int rp_full; /* more readings than the table holds: walk the registry */
static pthread_once_t rp_once = PTHREAD_ONCE_INIT;
static uint8_t on_line_of[RP_SLOTS / 2], line_rank_of[RP_SLOTS / 2];
static size_t n_on_line, n_line_rank;

static size_t rp_slot(const dx_reading *rd)
{
    return (size_t)(((uintptr_t)rd >> 3) * 0x9e3779b97f4a7c15ull >> 56) & (RP_SLOTS - 1);
}

static void rp_build(void)
{
    if (dx_nreadings > RP_SLOTS / 2) {
        rp_full = 1;
        return;
    }
    size_t off = 0;
    for (size_t i = 0; i < dx_nreadings; i++) {
        size_t k = rp_slot(dx_readings[i]);
        while (rp_table[k].rd)
            k = (k + 1) & (RP_SLOTS - 1);
        rp_table[k].rd = dx_readings[i];
        rp_table[k].off = off;
        rp_table[k].idx = i;
        off += ALIGN(dx_readings[i]->rank_size);
        if (dx_readings[i]->on_line)
            on_line_of[n_on_line++] = (uint8_t)i;
        if (dx_readings[i]->line_rank)
            line_rank_of[n_line_rank++] = (uint8_t)i;
    }
}

/* The slot of reading rd in rp_table, or -1 (the table is full, or rd is not registered). */
static long rp_find(const dx_reading *rd)
{
    pthread_once(&rp_once, rp_build);
    if (rp_full)
        return -1;
    for (size_t k = rp_slot(rd); rp_table[k].rd; k = (k + 1) & (RP_SLOTS - 1))
        if (rp_table[k].rd == rd)
            return (long)k;
    return -1;
}

void *dx_job_state(const dx_job_model *jm, const dx_reading *rd)
{
    long k = rp_find(rd);
    size_t i = k >= 0 ? rp_table[k].idx : index_of(rd);
    return i < dx_nreadings && jm->state ? jm->state[i] : NULL;
}

void *dx_rank_priv(const dx_job_model *jm, const dx_rank *x, const dx_reading *rd)
{
    (void)jm;
    if (!x || !x->priv || !rd->rank_size)
        return NULL;
    long k = rp_find(rd);
    if (k >= 0)
        return x->priv + rp_table[k].off;
    if (!rp_full)
        return NULL;
    size_t i = index_of(rd);
    return i < dx_nreadings ? x->priv + rank_offset(i) : NULL;
}

void *dx_job_rstate(dx_job_model *jm, const dx_reading *rd, int r, int create)
{
    dx_rank *x = create ? dx_job_rank(jm, r) : (dx_rank *)dx_job_rank_get(jm, r);
    return dx_rank_priv(jm, x, rd);
}

/* ==== the model ============================================================================= */

int dx_job_model_init(dx_job_model *jm)
{
    memset(jm, 0, sizeof *jm);
    jm->any_failure = -1;
    jm->state = dx_calloc(dx_nreadings, sizeof(void *));
    jm->stage = dx_calloc(dx_nreadings, 1);
    if (!jm->state || !jm->stage)
        return DDX_ENOMEM;
    for (size_t i = 0; i < dx_nreadings; i++) {
        const dx_reading *rd = dx_readings[i];
        if (!rd->state_size)
            continue;
        if (!(jm->state[i] = dx_calloc(1, rd->state_size)))
            return DDX_ENOMEM;
        if (rd->init)
            rd->init(jm->state[i]);
    }
    return DDX_OK;
}

static void rank_free(dx_rank *x)
{
    if (!x)
        return;
    for (size_t i = 0; x->priv && i < dx_nreadings; i++)
        if (dx_readings[i]->rank_fini)
            dx_readings[i]->rank_fini(x->priv + rank_offset(i));
    dx_free(x->priv);
    dx_free(x->first_error);
    dx_free(x);
}

void dx_job_model_fini(dx_job_model *jm)
{
    for (size_t i = 0; i < jm->nby; i++)
        rank_free(jm->by_rank[i]);
    dx_free(jm->by_rank);
    for (size_t i = 0; jm->state && i < dx_nreadings; i++) {
        if (jm->state[i] && dx_readings[i]->fini)
            dx_readings[i]->fini(jm->state[i]);
        dx_free(jm->state[i]);
    }
    dx_free(jm->state);
    dx_free(jm->stage);
    for (size_t i = 0; i < jm->nvotes; i++)
        dx_free(jm->votes[i].why);
    dx_free(jm->votes);
    memset(jm, 0, sizeof *jm);
}

const dx_rank *dx_job_rank_get(const dx_job_model *jm, int r)
{
    return r >= 0 && (size_t)r < jm->nby ? jm->by_rank[r] : NULL;
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
        size_t bytes = rank_offset(dx_nreadings);
        if (!x || !(x->priv = dx_calloc(1, bytes ? bytes : 1))) {
            dx_free(x);
            return NULL;
        }
        x->rank = r;
        x->cuda_dev = -1;
        x->pid = -1;
        for (size_t i = 0; i < dx_nreadings; i++)
            if (dx_readings[i]->rank_init)
                dx_readings[i]->rank_init(x->priv + rank_offset(i));
        jm->by_rank[r] = x;
        jm->nranks++;
    }
    return jm->by_rank[r];
}

int dx_job_need(dx_job_model *jm, const dx_reading *rd)
{
    size_t i = index_of(rd);
    if (i >= dx_nreadings || jm->stage[i])
        return DDX_OK; /* finished, or finishing (then its verdict so far is what there is) */
    jm->stage[i] = 1;
    int rc = rd->finish ? rd->finish(jm, jm->state[i]) : DDX_OK;
    jm->stage[i] = 2;
    return rc;
}

int dx_job_any_failure(dx_job_model *jm)
{
    if (jm->any_failure < 0)
        jm->any_failure = jm->any_failure_fn ? jm->any_failure_fn(jm->any_failure_ud) != 0 : 0;
    return jm->any_failure;
}

/* ==== reading lines and hits ================================================================ */

int dx_job_line_rank(dx_job_model *jm, const dx_line *l)
{
    int own = -1;
    pthread_once(&rp_once, rp_build);
    size_t n = rp_full ? dx_nreadings : n_line_rank;
    for (size_t k = 0; k < n; k++) {
        size_t i = rp_full ? k : line_rank_of[k];
        const dx_reading *rd = dx_readings[i];
        int r = rd->line_rank ? rd->line_rank(jm, jm->state[i], l) : -1;
        if (own < 0 && r >= 0 && r < DX_JOB_MAX_RANK)
            own = r;
    }
    return own;
}

int dx_job_line(dx_job_model *jm, const dx_line *l)
{
    jm->line_echo = 0;
    dx_rank *x = l->rank >= 0 ? dx_job_rank(jm, l->rank) : NULL;
    if (x) {
        x->lines++;
        if (l->attr->has_time) {
            x->has_time = 1;
            x->last_time = l->attr->time;
        }
    } else if (l->rank >= 0 && l->rank < DX_JOB_MAX_RANK)
        return DDX_ENOMEM;
    pthread_once(&rp_once, rp_build);
    size_t n = rp_full ? dx_nreadings : n_on_line;
    for (size_t k = 0; k < n; k++) {
        size_t i = rp_full ? k : on_line_of[k];
        const dx_reading *rd = dx_readings[i];
        int rc = rd->on_line ? rd->on_line(jm, jm->state[i], l) : DDX_OK;
        if (rc)
            return rc;
    }
    return DDX_OK;
}

int dx_job_wants_lines(const dx_job_model *jm, uint64_t seq)
{
    for (size_t i = 0; i < dx_nreadings; i++) {
        const dx_reading *rd = dx_readings[i];
        if (rd->on_line && (!rd->wants_lines || rd->wants_lines(jm->state[i], seq)))
            return 1;
    }
    return 0;
}

int dx_job_lines_seen(dx_job_model *jm, int r, uint64_t n)
{
    dx_rank *x = r >= 0 ? dx_job_rank(jm, r) : NULL;
    if (x)
        x->lines += n;
    else if (r >= 0 && r < DX_JOB_MAX_RANK)
        return DDX_ENOMEM;
    return DDX_OK;
}

void dx_job_rank_time(dx_job_model *jm, int r, const dx_time *t)
{
    dx_rank *x = (dx_rank *)dx_job_rank_get(jm, r);
    if (x) {
        x->has_time = 1;
        x->last_time = *t;
    }
}

size_t dx_job_extractor_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < dx_nreadings; i++)
        n += dx_readings[i]->npatterns;
    return n;
}

/* The reading of extractor i, and i's row within it. */
static size_t reading_of(size_t i, size_t *row)
{
    size_t k = 0;
    while (k < dx_nreadings && i >= dx_readings[k]->npatterns)
        i -= dx_readings[k++]->npatterns;
    *row = i;
    return k;
}

const dx_signal *dx_job_extractor_signal(size_t i)
{
    size_t row, k = reading_of(i, &row);
    return k < dx_nreadings ? &dx_readings[k]->patterns[row] : NULL;
}

dx_prefilter_fn dx_job_extractor_prefilter(size_t i)
{
    size_t row, k = reading_of(i, &row);
    return k < dx_nreadings && dx_readings[k]->prefilters ? dx_readings[k]->prefilters[row] : NULL;
}

int dx_job_hit(dx_job_model *jm, size_t i, const dx_hit *h)
{
    size_t row, k = reading_of(i, &row);
    if (k >= dx_nreadings || !dx_readings[k]->on_hit)
        return DDX_OK;
    return dx_readings[k]->on_hit(jm, jm->state[k], row, h);
}

long long dx_hit_ll(const dx_hit *h, const char *name, long long def)
{
    dx_str v;
    if (!dx_scan_capture(h->scan, name, &v) || !v.n || v.n > 18)
        return def;
    long long n = 0;
    int neg = v.p[0] == '-';
    for (size_t i = (size_t)neg; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return def;
        n = n * 10 + (v.p[i] - '0');
    }
    return neg ? -n : n;
}

double dx_hit_double(const dx_hit *h, const char *name)
{
    dx_str v;
    char buf[32];
    if (!dx_scan_capture(h->scan, name, &v) || !v.n || v.n >= sizeof buf)
        return -1;
    memcpy(buf, v.p, v.n);
    buf[v.n] = '\0';
    return strtod(buf, NULL);
}

int dx_hit_str(const dx_hit *h, const char *name, dx_str *out)
{
    return dx_scan_capture(h->scan, name, out);
}

void dx_hit_copy(const dx_hit *h, const char *name, char *buf, size_t cap)
{
    dx_str v;
    if (!dx_scan_capture(h->scan, name, &v))
        v.n = 0;
    snprintf(buf, cap, "%.*s", (int)v.n, v.n ? v.p : "");
}

/* ==== finishing and publishing ============================================================== */

int dx_job_finish(dx_job_model *jm)
{
    for (size_t i = 0; i < dx_nreadings; i++) {
        int rc = dx_job_need(jm, dx_readings[i]);
        if (rc)
            return rc;
    }
    return DDX_OK;
}

int dx_job_publish(dx_job_model *jm, dx_facts *f)
{
    for (size_t i = 0; i < dx_nreadings; i++) {
        const dx_reading *rd = dx_readings[i];
        int rc = rd->publish ? rd->publish(jm, jm->state[i], f) : DDX_OK;
        if (rc)
            return rc;
    }
    return DDX_OK;
}

const dx_reading *dx_job_fact_owner(const char *name)
{
    for (size_t i = 0; i < dx_nreadings; i++)
        for (size_t k = 0; k < dx_readings[i]->nfacts; k++)
            if (!strcmp(dx_readings[i]->facts[k].name, name))
                return dx_readings[i];
    return NULL;
}

int dx_job_fact(dx_facts *f, const char *name, const char *source, const char *fmt, ...)
{
    char v[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(v, sizeof v, fmt, ap);
    va_end(ap);
    if (n < 0)
        return DDX_EINVAL;
    return dx_facts_set(f, name, v, (size_t)n < sizeof v ? (size_t)n : sizeof v - 1, source, 0);
}

void dx_job_rank_view(const dx_job_model *jm, const dx_rank *x, dx_rank_view *v)
{
    memset(v, 0, sizeof *v);
    v->x = x;
    v->timeout_seq = -1;
    v->rel_speed = 1.0;
    for (size_t i = 0; i < dx_nreadings; i++)
        if (dx_readings[i]->describe)
            dx_readings[i]->describe(jm, jm->state[i], x->priv + rank_offset(i), v);
    /* failed (a root failure or an original exception on it), slow, silent (output stopped, or no timeout while others
       timed out), timed out, or healthy (finished its loop, or nothing against it) */
    v->state = x->unreadable && !x->lines    ? "unreadable"
               : x->first_error || v->raised ? "failed"
               : v->slow                     ? "slow"
               : v->stopped                  ? "silent"
               : v->timed_out                ? "timed out"
               : v->finished                 ? "healthy"
               : v->any_timed_out            ? "silent"
                                             : "healthy";
}

/* ==== votes ================================================================================= */

static int vote_v(dx_job_model *jm, const char *source, const int *ranks, size_t n, double strength,
                  const char *fmt, va_list ap)
{
    if (dx_grow((void **)&jm->votes, &jm->capvotes, jm->nvotes + 1, sizeof(dx_vote)))
        return DDX_ENOMEM;
    dx_vote *v = &jm->votes[jm->nvotes];
    memset(v, 0, sizeof *v);
    char buf[600];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (!(v->why = dx_strdup(buf)))
        return DDX_ENOMEM;
    v->source = source;
    v->strength = strength;
    for (size_t i = 0; i < n && v->nranks < DX_VOTE_RANKS; i++)
        v->ranks[v->nranks++] = ranks[i];
    jm->nvotes++;
    return DDX_OK;
}

int dx_job_vote(dx_job_model *jm, const char *source, int rank, double strength, const char *fmt,
                ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vote_v(jm, source, &rank, rank >= 0 ? 1 : 0, strength, fmt, ap);
    va_end(ap);
    return rc;
}

int dx_job_vote_ranks(dx_job_model *jm, const char *source, const int *ranks, size_t n,
                      double strength, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = vote_v(jm, source, ranks, n, strength, fmt, ap);
    va_end(ap);
    return rc;
}

/* ==== helpers =============================================================================== */

const dx_rank *dx_job_alone_rank(const dx_job_model *jm, const dx_reading *rd,
                                 int (*has)(const void *rs),
                                 int (*same)(const void *a, const void *b), const dx_rank **other,
                                 size_t *nothers)
{
    for (size_t a = 0; a < jm->nby; a++) {
        const dx_rank *x = jm->by_rank[a];
        const void *xs = dx_rank_priv(jm, x, rd);
        if (!xs || !has(xs))
            continue;
        size_t n = 0;
        const dx_rank *o = NULL;
        int agree = 1, alone = 1;
        for (size_t b = 0; b < jm->nby && alone && agree; b++) {
            const dx_rank *y = jm->by_rank[b];
            const void *ys = dx_rank_priv(jm, y, rd);
            if (!ys || y == x || !has(ys))
                continue;
            if (same(ys, xs))
                alone = 0;
            else if (!o)
                o = y;
            else
                agree = same(ys, dx_rank_priv(jm, o, rd));
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
