/* params.c -- DDP's comparison of the ranks' parameter counts, read for the rank that differs.
 *
 * Reading:
 *   param-counts  the rank that built a model with another number of parameter tensors, from
 *                 DDP's reports "DDP expects same model across all ranks, but Rank A has X params,
 *                 while rank B has inconsistent Y params."
 *
 * DDP's constructor all-gathers every rank's count of parameter tensors; each rank then walks the
 * gathered counts in rank order and raises on the first rank whose count differs from its own
 * (verify_params_across_processes, reducer.cpp). Every rank raises, and each report gives two
 * ranks' counts and one more thing: every rank below B other than A has A's count. So:
 *   - the counts of every report read (torchrun keeps each rank's own): the one rank whose count
 *     differs while two or more others share one;
 *   - one report where B is not the lowest rank other than A: some rank below B agreed with A,
 *     so B is the one that differs;
 *   - one report where one count is 0: that rank gave the check no tensors at all (a model that
 *     was never built, or none of whose parameters requires a gradient);
 *   - otherwise one report cannot tell A from B (the odd rank reporting against the lowest other
 *     rank reads exactly like a normal rank reporting against the odd one). mp.spawn shows only
 *     the first worker that exited, and which one that is varies from run to run. The lines each
 *     process printed before the report can still tell: the rank that took a path of its own
 *     while building its model (an override, an extra layer) printed more lines than every other
 *     rank. On mp.spawn's shared console only the lines that name their process's rank are
 *     that rank's, so rank 0's banners (a Trainer's start-up block) do not count; the reported
 *     worker's traceback, mp.spawn's report, is taken off. Without such a difference the
 *     reading says nothing and the report's own rank stays what the scorer makes of it.
 */
#include "launchers.h"

static const dx_signal pc_patterns[] = {
    {"job-ddp-param-count", DX_ROLE_NOISE, 0,
     "DDP expects same model across all ranks, but Rank (?<a>\\d+) has (?<x>\\d+) params, while "
     "rank (?<b>\\d+) has inconsistent (?<y>\\d+) params",
     "torch/csrc/distributed/c10d/reducer.cpp (verify_params_across_processes, torch 1.10 to "
     "2.x: TORCH_CHECK with \"DDP expects same model across all ranks, but Rank \", its rank, "
     "\" has \", its count, \" params, while rank \", i, \" has inconsistent \", that count, "
     "\" params.\")",
     0},
};

typedef struct pc_rank {
    long long n; /* its count of parameter tensors as a report gave it, -1 unknown */
} pc_rank;

typedef struct pc_state {
    int nreports;
    /* the first report: A (the reporting rank), B, their counts */
    int a, b;
    long long x, y;
    /* the rank of A and B that printed more lines before the report than every other rank,
       when the report came through mp.spawn (its traceback's lines taken off), -1 none; the
       lines it printed and the most any other rank printed */
    int more;
    uint64_t more_lines, other_lines;
} pc_state;

const dx_reading dx_reading_param_counts;

static void pc_init(void *stp)
{
    pc_state *st = stp;
    st->a = st->b = st->more = -1;
}

static void pc_rank_init(void *rs) { ((pc_rank *)rs)->n = -1; }

static int set_count(dx_job_model *jm, int r, long long n)
{
    pc_rank *x = dx_job_rstate(jm, &dx_reading_param_counts, r, 1);
    if (!x)
        return DDX_ENOMEM;
    if (x->n < 0)
        x->n = n;
    return DDX_OK;
}

/* The lines rank r printed up to now, those mp.spawn's report gave it taken off. */
static uint64_t own_lines(const dx_job_model *jm, int r)
{
    const dx_rank *x = dx_job_rank_get(jm, r);
    uint32_t given = 0;
    int raised = dx_spawn_raised(jm, &given);
    if (!x)
        return 0;
    return x->lines - (r == raised && given <= x->lines ? given : 0);
}

/* With the first report, read through mp.spawn's: the one of A and B that printed more lines than
 * every other rank so far. */
static void more_lines(const dx_job_model *jm, pc_state *st)
{
    uint32_t given = 0;
    if (dx_spawn_raised(jm, &given) != st->a || !given)
        return;
    uint64_t la = own_lines(jm, st->a), lb = own_lines(jm, st->b), rest = 0;
    for (size_t r = 0; r < jm->nby; r++)
        if ((int)r != st->a && (int)r != st->b && own_lines(jm, (int)r) > rest)
            rest = own_lines(jm, (int)r);
    int m = la > lb ? st->a : lb > la ? st->b : -1;
    uint64_t ml = la > lb ? la : lb, ol = la > lb ? lb : la;
    if (m >= 0 && ml > rest) {
        st->more = m;
        st->more_lines = ml;
        st->other_lines = ol > rest ? ol : rest;
    }
}

static int pc_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)row;
    pc_state *st = stp;
    long long a = dx_hit_ll(h, "a", -1), b = dx_hit_ll(h, "b", -1);
    long long x = dx_hit_ll(h, "x", -1), y = dx_hit_ll(h, "y", -1);
    if (a < 0 || b < 0 || a == b || a >= DX_JOB_MAX_RANK || b >= DX_JOB_MAX_RANK || x < 0 ||
        y < 0 || x == y)
        return DDX_OK;
    int rc = set_count(jm, (int)a, x);
    if (rc || (rc = set_count(jm, (int)b, y)))
        return rc;
    if (!st->nreports++) {
        st->a = (int)a;
        st->b = (int)b;
        st->x = x;
        st->y = y;
        more_lines(jm, st);
    }
    return DDX_OK;
}

static int has_count(const void *rs) { return ((const pc_rank *)rs)->n >= 0; }

static int same_count(const void *p, const void *q)
{
    return ((const pc_rank *)p)->n == ((const pc_rank *)q)->n;
}

static int pc_finish(dx_job_model *jm, void *stp)
{
    const pc_state *st = stp;
    if (!st->nreports)
        return DDX_OK;
    const dx_rank *other = NULL;
    size_t n = 0;
    const dx_rank *x =
        dx_job_alone_rank(jm, &dx_reading_param_counts, has_count, same_count, &other, &n);
    if (x && n >= 2)
        return dx_job_vote(
            jm, "params", x->rank, 1,
            "DDP's parameter check: rank %d has %lld parameter tensors, the other %zu ranks %lld",
            x->rank, ((const pc_rank *)dx_rank_priv(jm, x, &dx_reading_param_counts))->n, n,
            ((const pc_rank *)dx_rank_priv(jm, other, &dx_reading_param_counts))->n);
    int lowest = st->a == 0 ? 1 : 0; /* the first rank rank A compares with */
    if (st->b > lowest)
        return dx_job_vote(jm, "params", st->b, 1,
                           "DDP's parameter check: rank %d's %lld parameter tensors match every "
                           "rank's below rank %d (rank %d's among them); rank %d has %lld",
                           st->a, st->x, st->b, lowest, st->b, st->y);
    /* a count of 0: that rank gave the check no parameter tensors at all (its model was never
       built, or no parameter of it requires a gradient), the other count is a real model's */
    if ((st->x == 0) != (st->y == 0))
        return dx_job_vote(jm, "params", st->x == 0 ? st->a : st->b, 1,
                           "DDP's parameter check: rank %d has %lld parameter tensors, rank %d "
                           "none at all",
                           st->x == 0 ? st->b : st->a, st->x == 0 ? st->y : st->x,
                           st->x == 0 ? st->a : st->b);
    if (st->more >= 0)
        return dx_job_vote(jm, "params", st->more, 1,
                           "DDP's parameter check: rank %d has %lld parameter tensors and rank %d "
                           "%lld; before the report rank %d printed more lines of its own (%llu) "
                           "than any other rank (at most %llu)",
                           st->a, st->x, st->b, st->y, st->more, (unsigned long long)st->more_lines,
                           (unsigned long long)st->other_lines);
    return DDX_OK;
}

const dx_reading dx_reading_param_counts = {
    .name = "param-counts",
    .doc = "DDP's parameter-count reports at construction: the rank whose count differs (from "
           "every report's two counts, from the rank order of the check, or, with one report "
           "of mp.spawn that cannot tell, the rank that printed more lines than all others "
           "before it); a culprit vote",
    .patterns = pc_patterns,
    .npatterns = DX_ARRAY_LEN(pc_patterns),
    .state_size = sizeof(pc_state),
    .rank_size = sizeof(pc_rank),
    .init = pc_init,
    .rank_init = pc_rank_init,
    .on_hit = pc_hit,
    .finish = pc_finish,
};
