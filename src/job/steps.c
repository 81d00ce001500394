/* steps.c -- step times and stragglers.
 *
 * Readings:
 *   megatron-straggler  Megatron's straggler detector reports: the rank each names slowest, and
 *                       the widest spreads of throughput and round-trip time
 *   steps               each rank's recent step and data-wait times (trainer lines, tqdm rates,
 *                       DeepSpeed's samples per second; flight-recorder work when no log has
 *                       them), median and MAD, and the straggler; votes for it
 */
#include "steps.h"

#include <math.h>

/* ==== megatron-straggler ==================================================================== */

static const dx_reading_fact ms_facts[] = {
    {"straggler.etpt_spread", "float",
     "Megatron's straggler detector reports (--log-straggler): the widest 1 - MnEtpt/MxEtpt over "
     "the reports"},
    {"straggler.rtt_spread", "float", "the same reports: the widest MxRtt/MnRtt - 1"},
};

/* Megatron's straggler detector: "| MnRtt/Rnk: 3453.08ms/8 | MxRtt/Rnk: 3468.20ms/0 | ... |
 * MnEtpt/Rnk: 296.02TF/0 | MxEtpt/Rnk: 297.32TF/8" (min/max over all ranks, with the rank) */
static const dx_signal ms_patterns[] = {
    {"job-megatron-straggler", DX_ROLE_NOISE, 0,
     "MnRtt/Rnk: (?<mnrtt>[\\d.]+)ms/(?<mnr>\\d+) \\| MxRtt/Rnk: "
     "(?<mxrtt>[\\d.]+)ms/(?<mxr>\\d+)(?:.*?MnEtpt/Rnk: (?<mne>[\\d.]+)TF/"
     "(?<mner>\\d+) \\| MxEtpt/Rnk: (?<mxe>[\\d.]+)TF/\\d+)?",
     "megatron/core/utils.py (StragglerDetector.report)", 0},
};

typedef struct ms_state {
    int reports;
    /* the widest spreads any report showed: 1 - min/max throughput, max/min round trip - 1 (-1
       none) */
    double etpt_spread, rtt_spread;
} ms_state;

typedef struct ms_rank {
    int votes; /* reports naming it the slowest */
    /* its speed relative to the best in those reports (median-free: the largest ratio seen, the
       most favourable to it) */
    double ratio;
} ms_rank;

const dx_reading dx_reading_megatron_straggler;

static void ms_init(void *stp)
{
    ms_state *st = stp;
    st->etpt_spread = st->rtt_spread = -1;
}

/* The slowest rank of a report: the lowest throughput when given, else the longest round trip;
 * it counts when it is below 0.75 of the best. */
static int ms_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)row;
    ms_state *st = stp;
    double mne = dx_hit_double(h, "mne"), mxe = dx_hit_double(h, "mxe");
    double mnrtt = dx_hit_double(h, "mnrtt"), mxrtt = dx_hit_double(h, "mxrtt");
    long long slow = -1;
    double ratio = 1;
    if (mne > 0 && mxe > 0) {
        if ((ratio = mne / mxe) < 0.75)
            slow = dx_hit_ll(h, "mner", -1);
    } else if (mnrtt > 0 && mxrtt > 0 && (ratio = mnrtt / mxrtt) < 0.75)
        slow = dx_hit_ll(h, "mxr", -1);
    st->reports++;
    if (mne > 0 && mxe > 0 && 1 - mne / mxe > st->etpt_spread)
        st->etpt_spread = 1 - mne / mxe;
    if (mnrtt > 0 && mxrtt > 0 && mxrtt / mnrtt - 1 > st->rtt_spread)
        st->rtt_spread = mxrtt / mnrtt - 1;
    ms_rank *x = dx_job_rstate(jm, &dx_reading_megatron_straggler,
                               (int)(slow >= 0 && slow < DX_JOB_MAX_RANK ? slow : -1), 1);
    if (x) {
        x->votes++;
        if (ratio > x->ratio)
            x->ratio = ratio;
    }
    return DDX_OK;
}

int dx_megatron_reports(const dx_job_model *jm)
{
    return ((const ms_state *)dx_job_state(jm, &dx_reading_megatron_straggler))->reports;
}

int dx_megatron_named(const dx_job_model *jm, const dx_rank *x, double *ratio)
{
    const ms_rank *m = dx_rank_priv(jm, x, &dx_reading_megatron_straggler);
    *ratio = m ? m->ratio : 0;
    return m ? m->votes : 0;
}

static int ms_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const ms_state *st = stp;
    int rc = DDX_OK;
    if (st->etpt_spread >= 0)
        rc = dx_job_fact(f, "straggler.etpt_spread",
                         "Megatron's straggler report: 1 - MnEtpt / MxEtpt, the widest report",
                         "%.3f", st->etpt_spread);
    if (!rc && st->rtt_spread >= 0)
        rc = dx_job_fact(f, "straggler.rtt_spread",
                         "Megatron's straggler report: MxRtt / MnRtt - 1, the widest report",
                         "%.3f", st->rtt_spread);
    return rc;
}

const dx_reading dx_reading_megatron_straggler = {
    .name = "megatron-straggler",
    .doc = "Megatron's straggler detector reports: the rank each names slowest, and the widest "
           "spreads of throughput and round-trip time",
    .facts = ms_facts,
    .nfacts = DX_ARRAY_LEN(ms_facts),
    .patterns = ms_patterns,
    .npatterns = DX_ARRAY_LEN(ms_patterns),
    .state_size = sizeof(ms_state),
    .rank_size = sizeof(ms_rank),
    .init = ms_init,
    .on_hit = ms_hit,
    .publish = ms_publish,
};

/* ==== steps ================================================================================= */

static const dx_reading_fact sp_facts[] = {
    {"job.straggler_rank", "int",
     "per-rank step times (median/MAD), the slowest rank; when no log gives step times, "
     "flight-recorder dumps give each rank's working time between collectives (next "
     "collective's time_created_ns minus the previous one's creation + duration_ms); "
     "Megatron's straggler detector when neither names one"},
    {"job.straggler_speed_pct", "int", "that rank's speed relative to the fastest rank's, in %"},
};

enum { SP_STEP_TIME, SP_DATA_TIME, SP_MEGATRON_ITER, SP_TQDM_SPEED, SP_DS_SAMPLES, SP_STEP_TOOK };

static const dx_signal sp_patterns[] = {
    /* step times as trainers print them: "step_time 0.25s", "iter_time: 0.3 s" */
    [SP_STEP_TIME] = {"job-step-time", DX_ROLE_NOISE, 0,
                      "\\b(?:step|iter|iteration|batch)_?time[=: ]+(?<s>\\d+(?:\\.\\d+)?) ?s\\b",
                      "common trainer step logs", 0},
    [SP_DATA_TIME] = {"job-data-time", DX_ROLE_NOISE, 0,
                      "\\bdata_?time[=: ]+(?<s>\\d+(?:\\.\\d+)?) ?s\\b", "common trainer step logs",
                      0},
    /* Megatron: "elapsed time per iteration (ms): 1234.5" */
    [SP_MEGATRON_ITER] = {"job-megatron-iter", DX_ROLE_NOISE, 0,
                          "elapsed time per iteration \\(ms\\): (?<ms>\\d+(?:\\.\\d+)?)",
                          "megatron/training/training.py", 0},
    /* tqdm: "10/100 [00:05<00:45,  2.00it/s]" or "3.50s/it]" */
    [SP_TQDM_SPEED] = {"job-tqdm-speed", DX_ROLE_NOISE, 0,
                       "(?:(?<ips>\\d+(?:\\.\\d+)?)it/s|(?<s>\\d+(?:\\.\\d+)?)s/it)[\\],]",
                       "tqdm progress bars (Hugging Face Trainer; Lightning adds ', loss=...')", 0},
    /* DeepSpeed timers: "SamplesPerSec=12.3" */
    [SP_DS_SAMPLES] = {"job-ds-samples", DX_ROLE_NOISE, 0, "SamplesPerSec=(?<sps>\\d+(?:\\.\\d+)?)",
                       "deepspeed/utils/timer.py", 0},
    /* generic step logs: "step 120 ... time 0.52s", "Step 3: loss=1.2, took 1.8 sec" */
    [SP_STEP_TOOK] = {"job-step-took", DX_ROLE_NOISE, 0,
                      "\\b[Ss]tep:? \\d+\\b[^\\n]*?\\b(?:time|took|elapsed)[=: ]+"
                      "(?<s>\\d+(?:\\.\\d+)?) ?s(?:ec(?:onds?)?)?\\b",
                      "common trainer step logs", 0},
};

typedef struct sp_state {
    int straggler; /* the slowest flagged rank, -1 none */
    int kind;      /* 0 step time, 1 data wait */
    char why[256];
    int from_fr; /* the step samples are flight-recorder work intervals */
} sp_state;

typedef struct sp_rank {
    /* per-step durations in seconds, the most recent of each kind: [0] whole step, [1] data */
    float step[2][64];
    uint32_t nstep[2]; /* samples seen (the ring holds the last 64) */
    double median[2];  /* 0 when too few samples */
    double mad[2];
    double rel_speed; /* fastest rank's median step / this rank's (1 = fastest) */
    int slow;         /* flagged as a straggler */
} sp_rank;

const dx_reading dx_reading_steps;

static void sp_init(void *st) { ((sp_state *)st)->straggler = -1; }

static void add_step(dx_job_model *jm, int rank, int kind, double seconds)
{
    sp_rank *x = dx_job_rstate(jm, &dx_reading_steps, rank, 1);
    if (!x || !(seconds >= 0) || seconds > 1e6)
        return;
    x->step[kind][x->nstep[kind] % DX_ARRAY_LEN(x->step[kind])] = (float)seconds;
    x->nstep[kind]++;
}

void dx_steps_add_fr_work(void *jmp, int rank, double seconds)
{
    dx_job_model *jm = jmp;
    ((sp_state *)dx_job_state(jm, &dx_reading_steps))->from_fr = 1;
    add_step(jm, rank, 0, seconds);
}

size_t dx_steps_samples(const dx_job_model *jm, int rank, int kind, double *out, size_t max)
{
    const dx_rank *x = dx_job_rank_get(jm, rank);
    const sp_rank *s = x ? dx_rank_priv(jm, x, &dx_reading_steps) : NULL;
    if (!s || kind < 0 || kind > 1)
        return 0;
    size_t ring = DX_ARRAY_LEN(s->step[kind]);
    size_t have = s->nstep[kind] < ring ? s->nstep[kind] : ring;
    size_t n = have < max ? have : max;
    /* once the ring has wrapped, its oldest sample is where the next one would go */
    size_t start = s->nstep[kind] > ring ? s->nstep[kind] % ring : 0;
    for (size_t i = 0; i < n; i++)
        out[i] = s->step[kind][(start + have - n + i) % ring];
    return n;
}

int dx_steps_straggler(const dx_job_model *jm, const char **why, int *from_fr)
{
    const sp_state *st = dx_job_state(jm, &dx_reading_steps);
    if (why)
        *why = st->why;
    if (from_fr)
        *from_fr = st->from_fr;
    return st->straggler;
}

int dx_steps_from_logs(const dx_job_model *jm)
{
    for (size_t r = 0; r < jm->nby; r++) {
        const sp_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_steps);
        if (x && x->nstep[0])
            return 1;
    }
    return 0;
}

static int sp_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)stp;
    switch (row) {
    case SP_STEP_TIME:
    case SP_DATA_TIME:
        add_step(jm, h->rank, row == SP_DATA_TIME, dx_hit_double(h, "s"));
        break;
    case SP_MEGATRON_ITER:
        add_step(jm, h->rank, 0, dx_hit_double(h, "ms") / 1000.0);
        break;
    case SP_TQDM_SPEED: {
        double ips = dx_hit_double(h, "ips"), sec = dx_hit_double(h, "s");
        if (ips > 0)
            add_step(jm, h->rank, 0, 1.0 / ips);
        else if (sec >= 0)
            add_step(jm, h->rank, 0, sec);
        break;
    }
    case SP_DS_SAMPLES: {
        double sps = dx_hit_double(h, "sps");
        if (sps > 0)
            add_step(jm, h->rank, 0, 1.0 / sps);
        break;
    }
    default:
        /* (a line that also carries step_time= is counted once, by that pattern) */
        if (!memmem(h->text, h->len, "_time", 5))
            add_step(jm, h->rank, 0, dx_hit_double(h, "s"));
    }
    return DDX_OK;
}

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
static void robust(sp_rank *x, int kind)
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
    x->median[kind] = med;
    x->mad[kind] = median_of(v, n);
}

/* A rank is slow when its median step takes 1/0.75 of the fastest rank's or more and at least
 * 50 ms longer, over at least 5 steps; when steps are synchronised (DDP makes every rank's step
 * as slow as the slowest), the time a rank spends waiting for data tells instead: a rank whose
 * median data wait exceeds the fastest's by a quarter of its step and 50 ms. */
static void sp_flag(dx_job_model *jm, sp_state *st, const double fastest[2], const size_t with[2])
{
    double worst = 1.0;
    for (size_t r = 0; r < jm->nby; r++) {
        sp_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_steps);
        if (!x)
            continue;
        x->rel_speed = 1.0;
        if (with[0] >= 2 && x->median[0] > 0) {
            x->rel_speed = fastest[0] / x->median[0];
            /* and slower by a margin that is not timer noise on millisecond steps */
            if (x->rel_speed < 0.75 && x->median[0] - fastest[0] >= 0.05) {
                x->slow = 1;
                if (x->rel_speed < worst) {
                    worst = x->rel_speed;
                    st->straggler = (int)r;
                    st->kind = 0;
                    if (st->from_fr)
                        snprintf(st->why, sizeof st->why,
                                 "flight recorder: rank %zu works a median %.3f s (MAD %.3f) "
                                 "between the end of one collective and the start of the next, "
                                 "against %.3f s on the fastest rank: %.0f%% of its speed",
                                 r, x->median[0], x->mad[0], fastest[0], 100 * x->rel_speed);
                    else
                        snprintf(st->why, sizeof st->why,
                                 "rank %zu's median step takes %.3f s (MAD %.3f) against %.3f s "
                                 "on the fastest rank: %.0f%% of its speed",
                                 r, x->median[0], x->mad[0], fastest[0], 100 * x->rel_speed);
                }
            }
        }
        if (with[1] >= 2 && x->nstep[1] >= 5 && st->straggler < 0) {
            double extra = x->median[1] - fastest[1];
            double step = x->median[0] > 0 ? x->median[0] : x->median[1];
            if (extra > 0.05 && extra > 0.25 * step) {
                x->slow = 1;
                x->rel_speed = step > 0 ? (step - extra) / step : 0;
                if (x->rel_speed < worst) {
                    worst = x->rel_speed;
                    st->straggler = (int)r;
                    st->kind = 1;
                    snprintf(st->why, sizeof st->why,
                             "rank %zu waits %.3f s for data per step (MAD %.3f) against %.3f s on "
                             "the fastest rank; the others wait for it in every collective",
                             r, x->median[1], x->mad[1], fastest[1]);
                }
            }
        }
    }
}

/* Megatron's straggler detector, when step times gave no straggler: the rank named slowest in at
 * least half of its reports. */
static void sp_megatron(dx_job_model *jm, sp_state *st)
{
    int reports = dx_megatron_reports(jm);
    for (size_t r = 0; r < jm->nby && st->straggler < 0 && reports; r++) {
        double ratio;
        int votes = dx_megatron_named(jm, jm->by_rank[r], &ratio);
        if (!votes || 2 * votes < reports)
            continue;
        sp_rank *x = dx_job_rstate(jm, &dx_reading_steps, (int)r, 0);
        st->straggler = (int)r;
        st->kind = 0;
        x->slow = 1;
        x->rel_speed = ratio;
        snprintf(st->why, sizeof st->why,
                 "Megatron's straggler detector names rank %zu the slowest in %d of its %d "
                 "reports, at %.0f%% of the best rank or less",
                 r, votes, reports, 100 * ratio);
    }
}

static int sp_finish(dx_job_model *jm, void *stp)
{
    sp_state *st = stp;
    size_t with[2] = {0, 0};
    double fastest[2] = {0, 0};
    for (size_t r = 0; r < jm->nby; r++) {
        sp_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_steps);
        for (int k = 0; x && k < 2; k++) {
            robust(x, k);
            if (x->median[k] > 0 || (k == 1 && x->nstep[k] >= 5)) {
                if (!with[k] || x->median[k] < fastest[k])
                    fastest[k] = x->median[k];
                with[k]++;
            }
        }
    }
    sp_flag(jm, st, fastest, with);
    sp_megatron(jm, st);
    if (st->straggler < 0)
        return DDX_OK;
    const dx_rank *x = jm->by_rank[st->straggler];
    if (x->host[0]) {
        size_t n = strlen(st->why);
        snprintf(st->why + n, sizeof st->why - n, " (on %s)", x->host);
    }
    return dx_job_vote(jm, "straggler", st->straggler, 1, "step times: %s", st->why);
}

static int sp_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    const sp_state *st = stp;
    if (st->straggler < 0)
        return DDX_OK;
    const sp_rank *x = dx_job_rstate(jm, &dx_reading_steps, st->straggler, 0);
    const char *from =
        st->from_fr ? "flight-recorder work between collectives" : "per-rank step times";
    int rc = dx_job_fact(f, "job.straggler_rank", from, "%d", st->straggler);
    return rc ? rc
              : dx_job_fact(f, "job.straggler_speed_pct", from, "%d",
                            (int)(100 * x->rel_speed + 0.5));
}

static void sp_describe(const dx_job_model *jm, const void *stp, const void *rs, dx_rank_view *v)
{
    (void)jm;
    const sp_state *st = stp;
    const sp_rank *x = rs;
    for (int k = 0; k < 2; k++) {
        v->step_median[k] = x->median[k];
        v->nstep[k] = x->nstep[k];
    }
    v->rel_speed = x->rel_speed;
    v->slow = x->slow;
    v->slow_data = x->slow && st->kind == 1 && x->nstep[1] >= 5;
}

const dx_reading dx_reading_steps = {
    .name = "steps",
    .doc = "each rank's step and data-wait times (median and MAD of the last 64), and the "
           "straggler: a rank below 75% of the fastest rank's speed; votes for it",
    .facts = sp_facts,
    .nfacts = DX_ARRAY_LEN(sp_facts),
    .patterns = sp_patterns,
    .npatterns = DX_ARRAY_LEN(sp_patterns),
    .state_size = sizeof(sp_state),
    .rank_size = sizeof(sp_rank),
    .init = sp_init,
    .on_hit = sp_hit,
    .finish = sp_finish,
    .publish = sp_publish,
    .describe = sp_describe,
};
