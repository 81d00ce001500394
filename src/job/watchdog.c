/* watchdog.c -- collective timeouts: NCCL's watchdog lines and sequence numbers, gloo's timeout,
 * the dump signal of PyTorch 2.4+, and a timeout that follows a loop's end.
 *
 * Readings:
 *   watchdog            each rank's timeout (SeqNum, OpType, NumelIn), its last enqueued and
 *                       completed work; votes for the rank the sequence numbers point at
 *   dump-signal         which rank's watchdog fired first (informative: a rank that waited)
 *   timeout-after-loop  the one rank that timed out after a loop showed its end
 */
#include "watchdog.h"

#include "launchers.h"
#include "match.h"
#include "progress.h"

/* ==== watchdog ============================================================================== */

enum { WD_WATCHDOG, WD_LAST_COMPLETED, WD_GLOO, WD_BLOCKING, WD_LOOSE, WD_WRAPPED };

static const dx_signal wd_patterns[] = {
    /* PyTorch ProcessGroupNCCL: SeqNum since 1.11, OpType alone before */
    [WD_WATCHDOG] = {"job-watchdog-timeout", DX_ROLE_NOISE, 0,
                     "\\[Rank (?<rank>\\d+)\\] Watchdog caught collective operation timeout: "
                     "Work\\w*\\((?:SeqNum=(?<seq>\\d+), )?OpType=(?<op>\\w+)"
                     "(?:, NumelIn=(?<numel>\\d+))?",
                     "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* 2.4-2.5 "last enqueued NCCL work: E, last completed NCCL work: C"; 2.6+ "last enqueued
     * work: E, last completed work: C" */
    [WD_LAST_COMPLETED] = {"job-last-completed", DX_ROLE_NOISE, 0,
                           "(?:(?<to>Timeout) at NCCL work: (?<seq>\\d+), )?"
                           "[Ll]ast enqueued (?:NCCL )?work: (?<enq>-?\\d+), last completed "
                           "(?:NCCL )?work: (?<done>-?\\d+)",
                           "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* gloo's own timeout (third_party/gloo/gloo/transport/tcp/unbound_buffer.cc) */
    [WD_GLOO] = {"job-gloo-timeout", DX_ROLE_NOISE, 0,
                 "Timed out waiting (?<ms>\\d+)ms for (?<op>recv|send) operation to "
                 "complete",
                 "third_party/gloo/gloo/transport/tcp/unbound_buffer.cc", 0},
    /* the blocking-wait form: "[Rank 0] Work WorkNCCL(SeqNum=2109, OpType=_ALLGATHER_BASE,
     * NumelIn=40960, NumelOut=81920, Timeout(ms)=1800000) timed out in blocking wait" */
    [WD_BLOCKING] = {"job-blocking-wait", DX_ROLE_NOISE, 0,
                     "Work Work\\w*\\((?:SeqNum=(?<seq>\\d+), )?OpType=(?<op>\\w+)"
                     "(?:, NumelIn=(?<numel>\\d+))?(?:[^()]|\\([^()]*\\))*\\) timed out "
                     "in blocking wait",
                     "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* the watchdog line with other output interleaved into its first words (ranks writing to
     * one console): the work description after "...ion timeout: " is still intact */
    [WD_LOOSE] = {"job-watchdog-timeout-loose", DX_ROLE_NOISE, 0,
                  "ion timeout: Work\\w*\\((?:SeqNum=(?<seq>\\d+), )?OpType=(?<op>\\w+)"
                  "(?:, NumelIn=(?<numel>\\d+))?",
                  "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    /* the watchdog message wrapped after its first words (a terminal or a reporter's paste),
     * the work description on the next line, or cut there by a retrieval or a paste that ends
     * mid-line: "[Rank 1] Watchdog", "[Rank 1] Watchdog caught collective operation timeout:"
     * (no other message of ProcessGroupNCCL starts "[Rank N] Watchdog") */
    [WD_WRAPPED] = {"job-watchdog-wrapped", DX_ROLE_NOISE, 0,
                    "\\[Rank (?<rank>\\d+)\\] Watchdog(?: caught(?: collective(?: operation"
                    "(?: timeout:?)?)?)?)?[ \\t\\r]*$",
                    "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
};

typedef struct wd_state {
    int nlines;          /* watchdog timeout lines read so far */
    size_t nranks;       /* ranks that timed out */
    int after_rank;      /* the first rank timing out after a loop's end, -1 none */
    char after_why[200]; /* "" none */
} wd_state;

const dx_reading dx_reading_watchdog;

static void wd_init(void *st) { ((wd_state *)st)->after_rank = -1; }

static void wd_rank_init(void *rs)
{
    dx_timeout *t = rs;
    t->seq = t->numel = t->last_completed = t->last_enqueued = -1;
}

const dx_timeout *dx_watchdog_of(const dx_job_model *jm, const dx_rank *x)
{
    return dx_rank_priv(jm, x, &dx_reading_watchdog);
}

int dx_watchdog_timed_out(const dx_job_model *jm, int rank)
{
    const dx_timeout *t = dx_watchdog_of(jm, dx_job_rank_get(jm, rank));
    return t && t->timed_out;
}

size_t dx_watchdog_ranks(const dx_job_model *jm)
{
    const wd_state *st = dx_job_state(jm, &dx_reading_watchdog);
    return st ? st->nranks : 0;
}

int dx_watchdog_lines(const dx_job_model *jm)
{
    const wd_state *st = dx_job_state(jm, &dx_reading_watchdog);
    return st ? st->nlines : 0;
}

static void set_timed_out(wd_state *st, dx_timeout *t)
{
    if (!t->timed_out)
        st->nranks++;
    t->timed_out = 1;
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
static void more_watchdogs(dx_job_model *jm, wd_state *st, const char *text, size_t len, int first)
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
        dx_timeout *t = dx_job_rstate(jm, &dx_reading_watchdog, (int)r, 1);
        if (!t || t->timed_out)
            continue;
        set_timed_out(st, t);
        st->nlines++;
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
        t->seq = leading_ll(sq, end);
        t->numel = leading_ll(nm, end);
        if (op) {
            size_t n = 0;
            while (op + n < end && n < sizeof t->op - 1 &&
                   (op[n] == '_' || (op[n] >= 'A' && op[n] <= 'Z')))
                n++;
            memcpy(t->op, op, n);
            t->op[n] = '\0';
        }
    }
}

/* A watchdog line in any of its forms. "[Rank N]" is the rank within the process group (a
 * pipeline or tensor-parallel subgroup has its own numbering): the line's prefix or file gives
 * the global rank. */
static int wd_timeout(dx_job_model *jm, wd_state *st, size_t row, const dx_hit *h)
{
    /* a wrapped or cut line's own "[Rank N]" names its rank: such a line often ends a console
     * line that began with another rank's output (a progress bar glued to it, its prefix the
     * line's), and its message carries no work a subgroup's rank could be confused with */
    long long own = dx_hit_ll(h, "rank", -1);
    long long r = row == WD_WRAPPED && own >= 0 ? own : h->rank >= 0 ? h->rank : own;
    int rank = (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1);
    dx_timeout *t = dx_job_rstate(jm, &dx_reading_watchdog, rank, 1);
    if (!t)
        return DDX_OK;
    st->nlines++;
    const char *done = dx_progress_done_what(jm);
    if (done[0] && !st->after_why[0]) {
        snprintf(st->after_why, sizeof st->after_why,
                 "rank %d's collective timed out after %s (the end of a loop: saving, evaluation "
                 "or the next epoch follows)",
                 rank, done);
        st->after_rank = rank;
    }
    if (!t->timed_out) {
        set_timed_out(st, t);
        t->seq = dx_hit_ll(h, "seq", -1);
        t->numel = dx_hit_ll(h, "numel", -1);
        dx_hit_copy(h, "op", t->op, sizeof t->op);
    }
    if (row == WD_WATCHDOG)
        more_watchdogs(jm, st, h->text, h->len, rank);
    return DDX_OK;
}

static int wd_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    wd_state *st = stp;
    jm->line_echo = 1; /* a timeout: the rank that printed it waited for another */
    if (row == WD_LAST_COMPLETED) {
        dx_timeout *t = dx_job_rstate(jm, &dx_reading_watchdog, h->rank, 1);
        if (t && !t->has_last_completed) {
            t->last_completed = dx_hit_ll(h, "done", -1);
            t->last_enqueued = dx_hit_ll(h, "enq", -1);
            t->has_last_completed = 1;
        }
        /* "Timeout at NCCL work: N" (2.4+) says the rank timed out even when its watchdog
         * line is not in the inputs */
        dx_str to;
        if (t && !t->timed_out && dx_hit_str(h, "to", &to) && to.n) {
            set_timed_out(st, t);
            t->seq = dx_hit_ll(h, "seq", -1);
        }
        return DDX_OK;
    }
    if (row == WD_GLOO) {
        dx_timeout *t = dx_job_rstate(jm, &dx_reading_watchdog, h->rank, 1);
        if (t && !t->timed_out) {
            set_timed_out(st, t);
            dx_str op;
            if (dx_hit_str(h, "op", &op))
                snprintf(t->op, sizeof t->op, "gloo %.*s", (int)op.n, op.p);
        }
        return DDX_OK;
    }
    return wd_timeout(jm, st, row, h);
}

/* The rank the sequence numbers point at, most direct first: among ranks that printed timeouts,
 * the one whose last completed collective is behind the others'; the one that enqueued the
 * fewest; the one with nothing in flight while others wait on one; then a rank that timed out
 * after a loop's end (rank 0's end-of-loop work), or the stuck rank. */
static int wd_behind(const dx_job_model *jm, size_t timed, char *why, size_t cap)
{
    long long lo = -1, hi = -1;
    int lo_rank = -1, nlo = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_timeout *t = dx_watchdog_of(jm, jm->by_rank[r]);
        if (!t || !t->has_last_completed || t->last_completed < 0)
            continue;
        if (lo < 0 || t->last_completed < lo) {
            lo = t->last_completed;
            lo_rank = (int)r;
            nlo = 1;
        } else if (t->last_completed == lo)
            nlo++;
        if (t->last_completed > hi)
            hi = t->last_completed;
    }
    if (timed && lo >= 0 && hi > lo && nlo == 1) {
        snprintf(why, cap,
                 "rank %d's last completed collective (%lld) is behind the others' (up "
                 "to %lld)",
                 lo_rank, lo, hi);
        return lo_rank;
    }
    return -1;
}

/* The rank that enqueued the fewest collectives (its "last enqueued", or at least the sequence
 * number it timed out in) while the others moved on to later ones. */
static int wd_fewest(const dx_job_model *jm, size_t timed, char *why, size_t cap)
{
    long long best = -1;
    int best_rank = -1, nbest = 0, nest = 0;
    for (size_t r = 0; r < jm->nby && timed >= 2; r++) {
        const dx_timeout *t = dx_watchdog_of(jm, jm->by_rank[r]);
        if (!t)
            continue;
        long long e = t->last_enqueued;
        if (t->timed_out && t->seq > e)
            e = t->seq;
        if (e < 0)
            continue;
        nest++;
        if (best < 0 || e < best) {
            best = e;
            best_rank = (int)r;
            nbest = 1;
        } else if (e == best)
            nbest++;
    }
    if (nest >= 3 && nbest == 1) {
        snprintf(why, cap,
                 "rank %d enqueued collectives only up to %lld while the other ranks "
                 "had moved on to later ones",
                 best_rank, best);
        return best_rank;
    }
    return -1;
}

/* A rank with nothing in flight (last enqueued = last completed) while the others wait on an
 * enqueued collective never entered it. */
static int wd_idle(const dx_job_model *jm, char *why, size_t cap)
{
    size_t idle = 0, pending = 0;
    int idle_rank = -1;
    long long idle_n = -1;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_timeout *t = dx_watchdog_of(jm, jm->by_rank[r]);
        if (!t || !t->has_last_completed || t->last_enqueued < 0 || t->last_completed < 0)
            continue;
        if (t->last_enqueued == t->last_completed) {
            idle++;
            idle_rank = (int)r;
            idle_n = t->last_completed;
        } else if (t->last_enqueued > t->last_completed)
            pending++;
    }
    if (idle == 1 && pending >= 1) {
        snprintf(why, cap,
                 "rank %d had no collective in flight (last enqueued = last completed "
                 "= %lld) while %zu rank%s waited on one",
                 idle_rank, idle_n, pending, pending == 1 ? "" : "s");
        return idle_rank;
    }
    return -1;
}

static int wd_finish(dx_job_model *jm, void *stp)
{
    wd_state *st = stp;
    char why[300] = "";
    int wd = wd_behind(jm, st->nranks, why, sizeof why);
    if (wd < 0)
        wd = wd_fewest(jm, st->nranks, why, sizeof why);
    if (wd < 0)
        wd = wd_idle(jm, why, sizeof why);
    /* one rank alone timed out after a loop's end: what runs there on one rank only (saving,
     * evaluation, logging) runs on rank 0; either rank 0 issued a collective the others never
     * joined, or another rank waited while rank 0 worked alone */
    int after = wd < 0 ? dx_after_loop_rank(jm) : -1;
    if (after == 0)
        snprintf(why, sizeof why,
                 "rank 0 alone timed out, in a collective after the loop had ended, and no other "
                 "rank timed out or failed: a collective of rank-0-only code (saving, logging) "
                 "that the others, finished, never joined");
    else if (after > 0)
        snprintf(why, sizeof why,
                 "rank %d alone timed out, in a collective after the loop had ended, and no other "
                 "rank timed out or failed: it waited for rank 0's own end-of-loop work (saving, "
                 "evaluation)",
                 after);
    if (after >= 0)
        wd = 0;
    size_t stimed = 0;
    const char *swhy = NULL;
    int stuck = wd < 0 ? dx_stuck_rank(jm, &stimed, &swhy) : -1;
    if (stuck >= 0 && stimed)
        snprintf(why, sizeof why,
                 "%zu rank%s reported a watchdog timeout; rank %d, seen in the logs, reported "
                 "none",
                 stimed, stimed == 1 ? "" : "s", stuck);
    else if (stuck >= 0)
        snprintf(why, sizeof why, "%s", swhy);
    if (stuck >= 0)
        wd = stuck;
    return wd >= 0 ? dx_job_vote(jm, "watchdog", wd, 1, "collective timeouts: %s", why) : DDX_OK;
}

static void wd_describe(const dx_job_model *jm, const void *stp, const void *rs, dx_rank_view *v)
{
    (void)jm;
    const wd_state *st = stp;
    const dx_timeout *t = rs;
    v->timed_out = t->timed_out;
    v->timeout_seq = t->seq;
    v->timeout_op = t->op;
    v->has_last_completed = t->has_last_completed;
    v->last_completed = t->last_completed;
    v->any_timed_out = st->nranks > 0;
}

const dx_reading dx_reading_watchdog = {
    .name = "watchdog",
    .doc = "NCCL's and gloo's collective timeouts per rank: the operation, its sequence number "
           "and size, the last work enqueued and completed; votes for the rank they point at",
    .patterns = wd_patterns,
    .npatterns = DX_ARRAY_LEN(wd_patterns),
    .state_size = sizeof(wd_state),
    .rank_size = sizeof(dx_timeout),
    .init = wd_init,
    .rank_init = wd_rank_init,
    .on_hit = wd_hit,
    .finish = wd_finish,
    .describe = wd_describe,
};

/* ==== dump-signal =========================================================================== */

enum { DS_FIRST, DS_RECEIVED, DS_OBSERVED };

static const dx_signal ds_patterns[] = {
    /* PyTorch 2.4+: the rank whose own watchdog fired first broadcasts a dump signal; the
     * others report observing it */
    [DS_FIRST] = {"job-dump-first", DX_ROLE_NOISE, 0, "First PG on this rank to signal dumping",
                  "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    [DS_RECEIVED] = {"job-dump-received", DX_ROLE_NOISE, 0,
                     "Received a dump signal due to a collective timeout from (?:this local "
                     "rank|rank (?<from>\\d+))",
                     "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
    [DS_OBSERVED] = {"job-dump-observed", DX_ROLE_NOISE, 0,
                     "Observed flight recorder dump signal from another rank",
                     "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp", 0},
};

typedef struct ds_state {
    int from; /* "Received a dump signal ... from rank K": K, -1 none */
} ds_state;

typedef struct ds_rank {
    int first;    /* "First PG on this rank to signal dumping" / "... from this local rank" */
    int observed; /* "Observed flight recorder dump signal from another rank" */
} ds_rank;

const dx_reading dx_reading_dump_signal;

static void ds_init(void *st) { ((ds_state *)st)->from = -1; }

static int ds_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    ds_state *st = stp;
    ds_rank *x = dx_job_rstate(jm, &dx_reading_dump_signal, h->rank, 1);
    long long from = row == DS_RECEIVED ? dx_hit_ll(h, "from", -1) : -1;
    if (from >= 0 && from < DX_JOB_MAX_RANK && st->from < 0)
        st->from = (int)from;
    if (!x)
        return DDX_OK;
    if (row == DS_OBSERVED)
        x->observed = 1;
    else if (from < 0)
        x->first = 1;
    return DDX_OK;
}

/* Informative only: the rank whose watchdog fired first waited longest, it is not the one it
 * waited for. */
static int ds_finish(dx_job_model *jm, void *stp)
{
    const ds_state *st = stp;
    int first = st->from;
    size_t observed = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const ds_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_dump_signal);
        if (x && x->first && first < 0)
            first = (int)r;
        observed += x && x->observed;
    }
    if (first < 0)
        return DDX_OK;
    return dx_job_vote(jm, "dump", first, 0,
                       "dump signal: rank %d's watchdog fired first%s (a rank that waited, not "
                       "the one it waited for)",
                       first, observed ? " and the other ranks observed its signal" : "");
}

const dx_reading dx_reading_dump_signal = {
    .name = "dump-signal",
    .doc = "PyTorch 2.4+'s flight-recorder dump signal: which rank's watchdog fired first (a "
           "rank that waited; informative only)",
    .patterns = ds_patterns,
    .npatterns = DX_ARRAY_LEN(ds_patterns),
    .state_size = sizeof(ds_state),
    .rank_size = sizeof(ds_rank),
    .init = ds_init,
    .on_hit = ds_hit,
    .finish = ds_finish,
};

/* ==== timeout-after-loop ==================================================================== */

/* (That a timeout after a loop's end points at what follows the loop is the references' rule:
 * their `after: loop-end` signals. This reading keeps the mechanism: the one rank that timed out
 * there, whose collective the others, done with their loops, never joined.) */

typedef struct al_state {
    int rank; /* the one rank that timed out after the loop, when no other timed out or failed */
} al_state;

const dx_reading dx_reading_timeout_after_loop;

static int al_finish(dx_job_model *jm, void *stp)
{
    al_state *st = stp;
    const wd_state *wd = dx_job_state(jm, &dx_reading_watchdog);
    st->rank = wd->after_rank;
    if (st->rank < 0)
        return DDX_OK;
    /* the others had finished, so its collective is one only it issued */
    size_t failed = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        failed += x && (int)r != st->rank && (x->first_error || dx_exception_first(jm, x, NULL));
    }
    if (wd->nranks != 1 || failed)
        st->rank = -1;
    return DDX_OK;
}

int dx_after_loop_rank(dx_job_model *jm)
{
    (void)dx_job_need(jm, &dx_reading_timeout_after_loop);
    const al_state *st = dx_job_state(jm, &dx_reading_timeout_after_loop);
    return st->rank;
}

const dx_reading dx_reading_timeout_after_loop = {
    .name = "timeout-after-loop",
    .doc = "the one rank whose watchdog timed out after a loop showed its end while no other rank "
           "timed out or failed (its collective is one the others never joined)",
    .state_size = sizeof(al_state),
    .finish = al_finish,
};
