/* barrier.c -- the rank torch.distributed's monitored barrier names as missing.
 *
 * Readings:
 *   monitored-barrier  dist.monitored_barrier is coordinated by rank 0: it waits for every other
 *                      rank and, when one does not arrive in time, reports "Rank N failed to pass
 *                      monitoredBarrier in T ms" and raises. The ranks that did arrive then lose
 *                      rank 0 and say only that they "received errors while waiting for send/recv
 *                      from rank 0", pointing at rank 0's log; rank 0's report, when it is in the
 *                      inputs, is the one that names the rank at fault.
 */
#include "job.h"

static const dx_reading_fact mb_facts[] = {
    {"job.barrier_missing_rank", "int",
     "the one rank that rank 0's monitored barrier reports as not arriving in time (\"Rank N "
     "failed to pass monitoredBarrier\"); the other ranks' lines only point at rank 0's log"},
};

/* ProcessGroupGloo::monitoredBarrier on rank 0: "[Rank 0]: Rank 2 failed to pass monitoredBarrier
 * in 3000 ms" (several ranks: "Ranks 1, 2 failed to pass ...", which names no single one) */
static const dx_signal mb_patterns[] = {
    {"job-barrier-missing", DX_ROLE_NOISE, 0,
     "Rank (?<rank>\\d+) failed to pass monitoredBarrier in \\d+ ms",
     "torch/csrc/distributed/c10d/ProcessGroupGloo.cpp (ProcessGroupGloo::monitoredBarrier)", 0},
};

typedef struct mb_state {
    int rank; /* the rank named, -1 none; -2 two different ranks named */
} mb_state;

const dx_reading dx_reading_monitored_barrier;

static void mb_init(void *st) { ((mb_state *)st)->rank = -1; }

static int mb_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    mb_state *st = stp;
    long long r = dx_hit_ll(h, "rank", -1);
    if (r < 0 || r >= DX_JOB_MAX_RANK || st->rank == -2)
        return DDX_OK;
    st->rank = st->rank < 0 || st->rank == (int)r ? (int)r : -2;
    return DDX_OK;
}

static int mb_finish(dx_job_model *jm, void *stp)
{
    const mb_state *st = stp;
    return st->rank >= 0
               ? dx_job_vote(jm, "barrier", st->rank, 1,
                             "monitored barrier: rank 0 reports that rank %d failed to pass it",
                             st->rank)
               : DDX_OK;
}

static int mb_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const mb_state *st = stp;
    return st->rank >= 0 ? dx_job_fact(f, "job.barrier_missing_rank",
                                       "rank 0's monitored-barrier report", "%d", st->rank)
                         : DDX_OK;
}

const dx_reading dx_reading_monitored_barrier = {
    .name = "monitored-barrier",
    .doc = "the one rank rank 0's monitored barrier reports as not arriving (the other ranks' "
           "lines only point at rank 0); votes for it",
    .facts = mb_facts,
    .nfacts = DX_ARRAY_LEN(mb_facts),
    .patterns = mb_patterns,
    .npatterns = DX_ARRAY_LEN(mb_patterns),
    .state_size = sizeof(mb_state),
    .init = mb_init,
    .on_hit = mb_hit,
    .finish = mb_finish,
    .publish = mb_publish,
};
