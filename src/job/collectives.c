/* collectives.c -- ranks in different collectives at the same point.
 *
 * Readings:
 *   desync       the rank alone in a different collective: at one NCCL opCount (COLL lines), in
 *                the collective-mismatch reports of TORCH_DISTRIBUTED_DEBUG=DETAIL, or at one
 *                watchdog SeqNum (the watchdog reading's timeouts)
 *   tracebacks   the collective each rank's traceback waits in, and the rank alone in another;
 *                the latest frame line (a traceback cut before its exception ends there)
 */
#include "collectives.h"

#include "launchers.h"
#include "progress.h"
#include "watchdog.h"

/* ==== desync ================================================================================ */

static const dx_reading_fact dy_facts[] = {
    {"job.desync", "string",
     "ddx's job model: ranks timed out in different collectives (watchdog SeqNum/OpType/NumelIn), "
     "or the collective-mismatch reports name one rank's operation against the others', or "
     "NCCL's COLL lines show one rank's operation, count or datatype at an opCount differ; "
     "flight-recorder dumps set it first when they show a mismatch"},
    {"job.size_mismatch", "string",
     "the operation (ALLREDUCE, ALLGATHER, _ALLGATHER_BASE, ...) two ranks run with different "
     "sizes at the same point: both fingerprints of a collective-mismatch report (same OpType, "
     "different TensorShape: a dynamic-shape gather or a different set of parameters, not calls "
     "out of order), watchdog timeouts at one SeqNum with different NumelIn, NCCL COLL lines at "
     "one opCount with different counts"},
    {"job.fewer_collectives", "int",
     "the one rank that finished every step of its loop cleanly while every other rank, with a "
     "loop of the same length, failed or timed out in the middle of it: it issued fewer "
     "collectives per step (a no_sync or a skipped reduction on that rank only)"},
    {"job.fingerprint_diff", "string",
     "what the two fingerprints of TORCH_DISTRIBUTED_DEBUG's collective-mismatch reports differ "
     "in: `operation` when any report pairs two different OpTypes (calls out of order), else "
     "`shape` (the same OpType with different TensorShape)"},
};

enum { DY_MISMATCH, DY_NCCL_COLL };

static const dx_signal dy_patterns[] = {
    /* TORCH_DISTRIBUTED_DEBUG=DETAIL: "Rank 1 is running collective: CollectiveFingerPrint(
     * OpType=BROADCAST, ...), but Rank 0 is running collective: CollectiveFingerPrint(
     * OpType=ALLREDUCE, ..." (2.x adds SequenceNumber=N before OpType) */
    [DY_MISMATCH] = {"job-collective-mismatch", DX_ROLE_NOISE, 0,
                     "Rank (?<r1>\\d+) is running (?:inconsistent )?collective: "
                     "CollectiveFingerPrint\\((?:SequenceNumber=\\d+,? ?)?OpType=(?<op1>\\w+)"
                     "(?:, TensorShape=\\[(?<sh1>[^\\]]*)\\])?.*?, but Rank (?<r2>\\d+) is "
                     "running (?:inconsistent )?collective: CollectiveFingerPrint\\("
                     "(?:SequenceNumber=\\d+,? ?)?OpType=(?<op2>\\w+)"
                     "(?:, TensorShape=\\[(?<sh2>[^\\]]*)\\])?",
                     "torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp (both fingerprints: "
                     "the operation and, when the collective has tensors, their shapes)",
                     0},
    /* NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL: "host:pid:tid [dev] NCCL INFO Broadcast: opCount 0
     * sendbuff 0x.. recvbuff 0x.. count 53 datatype 4 op 0 root 0 comm 0x.. [nranks=8] stream" */
    [DY_NCCL_COLL] = {"job-nccl-coll", DX_ROLE_NOISE, 0,
                      "(?<host>[\\w.-]+):(?<pid>\\d+):\\d+ \\[(?<dev>\\d+)\\] NCCL INFO "
                      "(?<op>AllReduce|Broadcast|AllGather|ReduceScatter|Reduce|Send|Recv|"
                      "AllToAll): opCount (?<oc>[0-9a-f]+) sendbuff \\S+ recvbuff \\S+ count "
                      "(?<count>\\d+) datatype (?<dt>\\d+)",
                      "nccl src/enqueue.cc (collective INFO line)", 0},
};

typedef struct coll_sig {
    long long oc, count;
    int dt;
    char op[16];
} coll_sig;

typedef struct dy_state {
    char coll_host[64]; /* the host of NCCL COLL lines, "" until one is seen */
    int coll_multi_host;
    int rank;      /* the rank alone in a different collective, -1 */
    char why[256]; /* "" when no desync was seen */
    /* the first operation two ranks ran with different sizes at one point, and how it was seen
       ("" none) */
    char size_op[32];
    char size_why[300];
    int fp_diff; /* the mismatch reports differ in: 1 shape only, 2 operation (0 none read) */
    int fewer;   /* rank is the one that finished a loop its peers, as long, failed in */
} dy_state;

typedef struct dy_rank {
    char fp_op[24];  /* its operation in "Detected mismatch between collectives" lines */
    coll_sig sig[8]; /* NCCL COLL lines: the first opCounts this rank issued */
    int nsig;
} dy_rank;

const dx_reading dx_reading_desync;

static void dy_init(void *st) { ((dy_state *)st)->rank = -1; }

/* A size mismatch: the first one seen is kept. */
static void size_mismatch(dy_state *st, const char *op, const char *fmt, ...) DX_PRINTF(3, 4);
static void size_mismatch(dy_state *st, const char *op, const char *fmt, ...)
{
    if (st->size_op[0])
        return;
    snprintf(st->size_op, sizeof st->size_op, "%s", op);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->size_why, sizeof st->size_why, fmt, ap);
    va_end(ap);
}

/* A collective-mismatch report compares two fingerprints: different operations are calls out of
 * order (each rank's operation is kept, for the rank alone in its own); the same operation with
 * different tensor shapes is no desync but a size mismatch (a gather of per-rank sizes, a
 * different set of parameters reduced), read within the line. */
static int dy_mismatch(dx_job_model *jm, dy_state *st, const dx_hit *h)
{
    char op1[32], op2[32], sh1[64], sh2[64];
    dx_hit_copy(h, "op1", op1, sizeof op1);
    dx_hit_copy(h, "op2", op2, sizeof op2);
    dx_hit_copy(h, "sh1", sh1, sizeof sh1);
    dx_hit_copy(h, "sh2", sh2, sizeof sh2);
    if (strcmp(op1, op2))
        st->fp_diff = 2;
    else if (sh1[0] && sh2[0] && strcmp(sh1, sh2)) {
        if (!st->fp_diff)
            st->fp_diff = 1;
        size_mismatch(st, op1,
                      "the collective-mismatch report: rank %lld runs %s of shape [%s] while rank "
                      "%lld runs it of shape [%s]",
                      dx_hit_ll(h, "r1", -1), op1, sh1, dx_hit_ll(h, "r2", -1), sh2);
    }
    /* each rank's operation, for the rank alone in its own (a report of one operation on both
       sides still tells both ranks' operation) */
    for (int k = 1; k <= 2; k++) {
        char rn[4], on[4];
        snprintf(rn, sizeof rn, "r%d", k);
        snprintf(on, sizeof on, "op%d", k);
        long long r = dx_hit_ll(h, rn, -1);
        dy_rank *x =
            dx_job_rstate(jm, &dx_reading_desync, (int)(r >= 0 && r < DX_JOB_MAX_RANK ? r : -1), 1);
        if (x && !x->fp_op[0])
            dx_hit_copy(h, on, x->fp_op, sizeof x->fp_op);
    }
    return DDX_OK;
}

/* The process of a COLL line: the rank the line's prefix or file gives, else the rank whose NCCL
 * init line had this pid, else (one host only) the CUDA device index. */
static int dy_coll(dx_job_model *jm, dy_state *st, const dx_hit *h)
{
    dx_str host, op, ocs;
    if (!dx_hit_str(h, "host", &host) || !dx_hit_str(h, "op", &op) || !dx_hit_str(h, "oc", &ocs))
        return DDX_OK;
    if (!st->coll_host[0])
        snprintf(st->coll_host, sizeof st->coll_host, "%.*s", (int)host.n, host.p);
    else if (strlen(st->coll_host) != host.n || memcmp(st->coll_host, host.p, host.n))
        st->coll_multi_host = 1;
    int r = h->rank;
    long long pid = dx_hit_ll(h, "pid", -1);
    for (size_t k = 0; r < 0 && k < jm->nby; k++)
        if (jm->by_rank[k] && jm->by_rank[k]->pid == pid)
            r = (int)k;
    if (r < 0 && !st->coll_multi_host)
        r = (int)dx_hit_ll(h, "dev", -1);
    dy_rank *x = dx_job_rstate(jm, &dx_reading_desync, r, 1);
    if (!x || x->nsig >= (int)DX_ARRAY_LEN(x->sig))
        return DDX_OK;
    char buf[24];
    snprintf(buf, sizeof buf, "%.*s", (int)(ocs.n < 20 ? ocs.n : 20), ocs.p);
    long long oc = strtoll(buf, NULL, 16);
    for (int k = 0; k < x->nsig; k++)
        if (x->sig[k].oc == oc)
            return DDX_OK; /* the first call at an opCount is the one to compare */
    coll_sig *c = &x->sig[x->nsig++];
    c->oc = oc;
    c->count = dx_hit_ll(h, "count", -1);
    c->dt = (int)dx_hit_ll(h, "dt", -1);
    snprintf(c->op, sizeof c->op, "%.*s", (int)op.n, op.p);
    return DDX_OK;
}

static int dy_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    return row == DY_MISMATCH ? dy_mismatch(jm, stp, h) : dy_coll(jm, stp, h);
}

static int same_sig(const coll_sig *a, const coll_sig *b)
{
    return !strcmp(a->op, b->op) && a->count == b->count && a->dt == b->dt;
}

/* NCCL's own COLL lines: at one opCount, the rank whose operation, count or datatype differs
 * from what every other rank issued (x alone against at least two others that agree). */
static int dy_from_coll(dx_job_model *jm, dy_state *st, const dx_rank *x, const dy_rank *xs, int i)
{
    size_t same = 0, other = 0;
    const coll_sig *odd = NULL;
    for (size_t b = 0; b < jm->nby; b++) {
        const dy_rank *y = dx_rank_priv(jm, jm->by_rank[b], &dx_reading_desync);
        for (int j = 0; y && y != xs && j < y->nsig; j++) {
            if (y->sig[j].oc != xs->sig[i].oc)
                continue;
            if (same_sig(&y->sig[j], &xs->sig[i]))
                same++;
            else {
                other++;
                odd = &y->sig[j];
            }
        }
    }
    if (!other || !odd)
        return 0;
    if (!strcmp(odd->op, xs->sig[i].op) && odd->count != xs->sig[i].count)
        size_mismatch(st, xs->sig[i].op,
                      "NCCL's collective log: at opCount %llx rank %d calls %s with count %lld "
                      "while another rank calls it with count %lld",
                      (unsigned long long)xs->sig[i].oc, x->rank, xs->sig[i].op, xs->sig[i].count,
                      odd->count);
    if (same || other < 2)
        return 0;
    for (size_t b = 0; b < jm->nby; b++) {
        const dy_rank *y = dx_rank_priv(jm, jm->by_rank[b], &dx_reading_desync);
        for (int j = 0; y && y != xs && j < y->nsig; j++)
            if (y->sig[j].oc == xs->sig[i].oc && !same_sig(&y->sig[j], odd))
                return 0;
    }
    st->rank = x->rank;
    snprintf(st->why, sizeof st->why,
             "NCCL's collective log: at opCount %llx rank %d calls %s with count %lld datatype %d "
             "while the other %zu ranks call %s with count %lld datatype %d",
             (unsigned long long)xs->sig[i].oc, x->rank, xs->sig[i].op, xs->sig[i].count,
             xs->sig[i].dt, other, odd->op, odd->count, odd->dt);
    return 1;
}

static int has_fp(const void *rs) { return ((const dy_rank *)rs)->fp_op[0] != '\0'; }
static int same_fp(const void *a, const void *b)
{
    return !strcmp(((const dy_rank *)a)->fp_op, ((const dy_rank *)b)->fp_op);
}

/* Two ranks in two different collectives: each report names its own rank against the other, and
 * which rank prints first varies from run to run. The tracebacks tell them apart: a rank whose
 * traceback is inside autograd's backward with no explicit collective waits in the all-reduce
 * DDP's reducer issues at every step (the path every rank takes), while the other rank called a
 * collective of torch.distributed itself; that rank left the common path. NULL when the
 * tracebacks do not show exactly this. */
static const dx_rank *off_common_path(const dx_job_model *jm, const dx_rank *a, const dx_rank *b,
                                      const dx_rank **other)
{
    const dy_rank *as = dx_rank_priv(jm, a, &dx_reading_desync);
    const dy_rank *bs = dx_rank_priv(jm, b, &dx_reading_desync);
    int a_ddp = !strcmp(as->fp_op, "ALLREDUCE") && dx_traceback_in_backward(jm, a->rank);
    int b_ddp = !strcmp(bs->fp_op, "ALLREDUCE") && dx_traceback_in_backward(jm, b->rank);
    if (a_ddp == b_ddp)
        return NULL;
    const dx_rank *odd = a_ddp ? b : a;
    if (!dx_traceback_collective(jm, odd->rank))
        return NULL;
    *other = a_ddp ? a : b;
    return odd;
}

/* The mismatch reports of TORCH_DISTRIBUTED_DEBUG=DETAIL name each rank's operation; which pair
 * of ranks each report compares varies from run to run, the operations do not. */
static int dy_from_fingerprints(dx_job_model *jm, dy_state *st)
{
    const dx_rank *other = NULL;
    size_t n = 0;
    const dx_rank *x = dx_job_alone_rank(jm, &dx_reading_desync, has_fp, same_fp, &other, &n);
    if (x && n == 1)
        x = off_common_path(jm, x, other, &other);
    if (!x)
        return 0;
    st->rank = x->rank;
    const char *xop = ((const dy_rank *)dx_rank_priv(jm, x, &dx_reading_desync))->fp_op;
    const char *oop = ((const dy_rank *)dx_rank_priv(jm, other, &dx_reading_desync))->fp_op;
    if (n == 1)
        snprintf(st->why, sizeof st->why,
                 "the collective-mismatch reports show rank %d calling %s itself while rank %d "
                 "runs DDP's gradient %s inside backward",
                 x->rank, xop, other->rank, oop);
    else
        snprintf(st->why, sizeof st->why,
                 "the collective-mismatch reports show rank %d running %s while the other %zu "
                 "ranks run %s",
                 x->rank, xop, n, oop);
    return 1;
}

/* Are two timed-out operations one collective? The same operation; or gloo's send and recv, the
 * two halves of the point-to-point exchanges its collectives are made of (a ring all-reduce has
 * every rank send to one peer while it receives from another: one rank waits in send, its peer
 * in recv, for the same missing rank). */
static int same_op(const char *a, const char *b)
{
    static const char *const halves[] = {"gloo send", "gloo recv"};
    int ha = 0, hb = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(halves); i++) {
        ha |= !strcmp(a, halves[i]);
        hb |= !strcmp(b, halves[i]);
    }
    return !strcmp(a, b) || (ha && hb);
}

/* Is t a timeout with an operation, at SeqNum seq when pass 0 asks for one? */
static int wd_usable(const dx_timeout *t, int pass)
{
    return t && t->timed_out && t->op[0] && (pass || t->seq >= 0);
}

/* The watchdog's timeouts at x's SeqNum (pass 0) or at all (pass 1): the suspect is a rank alone
 * in its operation while all the others share one (at one SeqNum a different size counts like a
 * different operation). Returns 1 when x's comparison is the job's desync reading. */
static int dy_from_watchdog(dx_job_model *jm, dy_state *st, int pass, const dx_rank *x)
{
    const dx_timeout *tx = dx_watchdog_of(jm, x);
    size_t same = 0, other = 0;
    const dx_rank *odd = NULL;
    for (size_t b = 0; b < jm->nby; b++) {
        const dx_timeout *ty = dx_watchdog_of(jm, jm->by_rank[b]);
        if (!wd_usable(ty, 1) || (pass == 0 && ty->seq != tx->seq))
            continue;
        int size_differs = pass == 0 && tx->numel >= 0 && ty->numel >= 0 && tx->numel != ty->numel;
        if (same_op(ty->op, tx->op) && !size_differs)
            same++;
        else {
            other++;
            odd = jm->by_rank[b];
        }
    }
    if (!other)
        return 0;
    const dx_timeout *to = dx_watchdog_of(jm, odd);
    if (pass == 0 && same_op(to->op, tx->op) && to->numel != tx->numel)
        size_mismatch(st, tx->op,
                      "at SeqNum %lld rank %d runs %s of %lld elements while rank %d runs it "
                      "of %lld",
                      tx->seq, x->rank, tx->op, tx->numel, odd->rank, to->numel);
    /* odd when x is in the majority, x itself when it is the one alone */
    if (same > other && other == 1)
        st->rank = odd->rank;
    else if (same == 1 && other > 1) {
        int shared = 1;
        for (size_t b = 0; b < jm->nby && shared; b++) {
            const dx_timeout *ty = dx_watchdog_of(jm, jm->by_rank[b]);
            if (jm->by_rank[b] != x && wd_usable(ty, 1) && (pass == 1 || ty->seq == tx->seq))
                shared = same_op(ty->op, to->op) && ty->numel == to->numel;
        }
        if (shared)
            st->rank = x->rank;
    }
    if (pass == 0)
        snprintf(st->why, sizeof st->why,
                 "at SeqNum %lld rank %d runs %s of %lld elements while rank %d runs %s of %lld",
                 tx->seq, x->rank, tx->op, tx->numel, odd->rank, to->op, to->numel);
    else
        snprintf(st->why, sizeof st->why, "rank %d timed out in %s while rank %d timed out in %s",
                 x->rank, tx->op, odd->rank, to->op);
    if (st->rank >= 0)
        snprintf(st->why + strlen(st->why), sizeof st->why - strlen(st->why),
                 "; rank %d is alone in its operation", st->rank);
    return 1;
}

/* Whether every usable timeout of the pass agrees with the first (same operation, and at pass 0
 * the same SeqNum and size): then no rank is alone, and the comparison of each rank with all the
 * others (quadratic in ranks) has nothing to find. */
static int wd_all_agree(const dx_job_model *jm, int pass)
{
    const dx_timeout *t0 = NULL;
    for (size_t b = 0; b < jm->nby; b++) {
        const dx_timeout *t = dx_watchdog_of(jm, jm->by_rank[b]);
        if (!wd_usable(t, pass))
            continue;
        if (!t0) {
            t0 = t;
            continue;
        }
        if (strcmp(t->op, t0->op) || (pass == 0 && (t->seq != t0->seq || t->numel != t0->numel)))
            return 0;
    }
    return 1;
}

/* Did rank x fail or time out? */
static int failed(const dx_job_model *jm, const dx_rank *x)
{
    return dx_exception_first(jm, x, NULL) || dx_watchdog_timed_out(jm, x->rank);
}

/* One rank finished every step of its loop cleanly while every other rank, counting the same
 * steps, failed or timed out in the middle of it: with loops of one length, the finished rank
 * ran out of collectives before its peers did, so it issued fewer per step (a no_sync or a
 * skipped reduction on that rank only). Unequal loops are the uneven-inputs reading's. */
static int dy_from_equal_loops(dx_job_model *jm, dy_state *st)
{
    const dx_rank *done = NULL;
    long long dn, dm, wn = 0;
    size_t peers = 0;
    for (size_t a = 0; a < jm->nby; a++) {
        const dx_rank *x = jm->by_rank[a];
        if (!x || !dx_progress_of(jm, x, &dn, &dm))
            continue;
        if (dx_rank_finished(jm, x) && !failed(jm, x) && dn == dm) {
            if (done)
                return 0; /* two finished ranks: not one odd rank */
            done = x;
        }
    }
    if (!done || !dx_progress_of(jm, done, &dn, &dm))
        return 0;
    for (size_t b = 0; b < jm->nby; b++) {
        const dx_rank *w = jm->by_rank[b];
        long long n, m;
        if (!w || w == done)
            continue;
        if (!dx_progress_of(jm, w, &n, &m) || m != dm || n >= m || !failed(jm, w))
            return 0;
        if (!peers++ || n > wn)
            wn = n;
    }
    if (!peers)
        return 0;
    st->rank = done->rank;
    st->fewer = 1;
    snprintf(
        st->why, sizeof st->why,
        "rank %d finished all %lld steps of its loop while the other %zu rank%s, with the same "
        "%lld steps, failed at step %lld waiting for it: it issued fewer collectives per step",
        done->rank, dm, peers, peers == 1 ? "" : "s", dm, wn + 1);
    return 1;
}

static void dy_find(dx_job_model *jm, dy_state *st)
{
    for (size_t a = 0; a < jm->nby; a++) {
        const dy_rank *xs = dx_rank_priv(jm, jm->by_rank[a], &dx_reading_desync);
        for (int i = 0; xs && i < xs->nsig; i++)
            if (dy_from_coll(jm, st, jm->by_rank[a], xs, i))
                return;
    }
    if (dy_from_fingerprints(jm, st) || dy_from_equal_loops(jm, st))
        return;
    /* first pass: the same SeqNum in different operations (the strongest form); second pass:
     * timed-out ranks stuck in different operations at all (their SeqNums may differ when one
     * rank skipped or added a collective earlier) */
    for (int pass = 0; pass < 2; pass++)
        for (size_t a = 0, agree = wd_all_agree(jm, pass); a < jm->nby && !agree; a++)
            if (wd_usable(dx_watchdog_of(jm, jm->by_rank[a]), pass) &&
                dy_from_watchdog(jm, st, pass, jm->by_rank[a]))
                return;
}

static int dy_finish(dx_job_model *jm, void *stp)
{
    dy_state *st = stp;
    dy_find(jm, st);
    return st->rank >= 0 ? dx_job_vote(jm, "desync", st->rank, 1, "collective desync: %s", st->why)
                         : DDX_OK;
}

static int dy_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const dy_state *st = stp;
    int rc = !st->why[0] ? DDX_OK
             : st->fewer
                 ? dx_job_fact(f, "job.fewer_collectives", st->why, "%d", st->rank)
                 : dx_job_fact(f, "job.desync", "watchdog timeouts of every rank", "%s", st->why);
    if (!rc && st->size_op[0])
        rc = dx_job_fact(f, "job.size_mismatch", st->size_why, "%s", st->size_op);
    if (!rc && st->fp_diff)
        rc = dx_job_fact(f, "job.fingerprint_diff", "the collective-mismatch reports", "%s",
                         st->fp_diff == 2 ? "operation" : "shape");
    return rc;
}

const dx_reading dx_reading_desync = {
    .name = "desync",
    .doc = "ranks in different collectives at one point (NCCL COLL lines, collective-mismatch "
           "reports, watchdog SeqNum and OpType); votes for the rank alone in its collective",
    .facts = dy_facts,
    .nfacts = DX_ARRAY_LEN(dy_facts),
    .patterns = dy_patterns,
    .npatterns = DX_ARRAY_LEN(dy_patterns),
    .state_size = sizeof(dy_state),
    .rank_size = sizeof(dy_rank),
    .init = dy_init,
    .on_hit = dy_hit,
    .finish = dy_finish,
    .publish = dy_publish,
};

/* ==== tracebacks ============================================================================ */

static const dx_reading_fact tb_facts[] = {
    {"job.collective_mismatch", "string",
     "the ranks' tracebacks end in different collectives of torch.distributed, one rank alone in "
     "its collective"},
    {"job.eval_collective_rank", "int",
     "that lone rank's collective was called from an evaluation function (eval, valid, test, "
     "metric, predict)"},
    {"job.cut_frame", "string",
     "the innermost frame of a traceback cut before its exception line (no exception line "
     "follows it anywhere: a poster's or a retrieval's excerpt), as printed ('File \"...\", line "
     "N, in fn'): the function that raised, when the message itself is missing"},
};

/* a Python traceback frame: '  File "x.py", line 12, in fn' */
static const dx_signal tb_patterns[] = {
    {"job-traceback-frame", DX_ROLE_NOISE, 0,
     "File \"(?<file>[^\"]+)\", line \\d+, in (?<fn>[\\w.<>]+)[ \\t\\r]*$",
     "CPython traceback format", 0},
};

typedef struct tb_state {
    int rank; /* the rank alone in a different collective in the tracebacks, -1 */
    int eval; /* ... called from an evaluation function */
    char why[300];
    /* the latest frame line read ("File \"x.py\", line 3, in f"), its rank and where: a frame
       after the last exception line is a traceback cut before its exception */
    char last_frame[240];
    int last_frame_rank;
    uint64_t last_frame_seq;
} tb_state;

typedef struct tb_rank {
    char caller[64]; /* the innermost frame outside torch of the traceback being read */
    /* the collective its first traceback through distributed_c10d waits in ("all_reduce"), and
       the frame that called it */
    char *coll;
    char *coll_caller;
    int backward; /* a frame of its traceback is torch's autograd backward */
} tb_rank;

const dx_reading dx_reading_tracebacks;

int dx_traceback_in_backward(const dx_job_model *jm, int rank)
{
    const tb_rank *x = dx_rank_priv(jm, dx_job_rank_get(jm, rank), &dx_reading_tracebacks);
    return x && x->backward;
}

const char *dx_traceback_collective(const dx_job_model *jm, int rank)
{
    const tb_rank *x = dx_rank_priv(jm, dx_job_rank_get(jm, rank), &dx_reading_tracebacks);
    return x ? x->coll : NULL;
}

static void tb_init(void *stp)
{
    tb_state *st = stp;
    st->rank = st->last_frame_rank = -1;
}

const char *dx_traceback_last_frame(const dx_job_model *jm, uint64_t *seq, int *rank)
{
    const tb_state *st = dx_job_state(jm, &dx_reading_tracebacks);
    *seq = st->last_frame_seq;
    *rank = st->last_frame_rank;
    return st->last_frame;
}

static void tb_last_frame(tb_state *st, const dx_hit *h)
{
    if (h->seq <= st->last_frame_seq && st->last_frame[0])
        return;
    const char *text = h->text;
    size_t len = h->len;
    while (len && (*text == ' ' || *text == '\t')) {
        text++;
        len--;
    }
    size_t n = len < sizeof st->last_frame - 1 ? len : sizeof st->last_frame - 1;
    memcpy(st->last_frame, text, n);
    st->last_frame[n] = '\0';
    st->last_frame_seq = h->seq;
    st->last_frame_rank = h->rank;
}

static void tb_rank_fini(void *rs)
{
    tb_rank *x = rs;
    dx_free(x->coll);
    dx_free(x->coll_caller);
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

int dx_frame_in_collective(const dx_str *fn, const dx_str *file)
{
    if (is_collective_fn(fn))
        return 1;
    if (fn->n == 4 && !memcmp(fn->p, "wait", 4))
        return memmem(file->p, file->n, "distributed", 11) != NULL;
    if (fn->n == 11 && !memcmp(fn->p, "synchronize", 11))
        return memmem(file->p, file->n, "cuda", 4) != NULL;
    return 0;
}

static int str_is(const dx_str *s, const char *lit)
{
    return strlen(lit) == s->n && !memcmp(s->p, lit, s->n);
}

/* Remember the innermost frame outside torch; the first time a rank's traceback enters a
 * collective of distributed_c10d, record the collective and that caller. */
static int tb_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)row;
    tb_last_frame(stp, h);
    tb_rank *x = dx_job_rstate(jm, &dx_reading_tracebacks, h->rank, 1);
    dx_str file, fn;
    if (!x || !dx_hit_str(h, "file", &file) || !dx_hit_str(h, "fn", &fn))
        return DDX_OK;
    if (!memmem(file.p, file.n, "/torch/", 7)) {
        size_t n = fn.n < sizeof x->caller - 1 ? fn.n : sizeof x->caller - 1;
        memcpy(x->caller, fn.p, n);
        x->caller[n] = '\0';
        return DDX_OK;
    }
    if (!x->coll && (str_is(&fn, "backward") || str_is(&fn, "run_backward")) &&
        memmem(file.p, file.n, "autograd", 8))
        x->backward = 1;
    if (x->coll || !memmem(file.p, file.n, "distributed_c10d.py", 19) || !is_collective_fn(&fn))
        return DDX_OK;
    if (!(x->coll = dx_strndup(fn.p, fn.n)))
        return DDX_ENOMEM;
    if (x->caller[0] && !(x->coll_caller = dx_strdup(x->caller)))
        return DDX_ENOMEM;
    return DDX_OK;
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

static int has_coll(const void *rs) { return ((const tb_rank *)rs)->coll != NULL; }
static int same_coll(const void *a, const void *b)
{
    return !strcmp(((const tb_rank *)a)->coll, ((const tb_rank *)b)->coll);
}

/* Tracebacks that end in different collectives on different ranks: the ranks called different
 * collectives at the same point. One rank in a collective while every other rank waits in a
 * barrier (or in one shared collective) is the rank off the common path. */
static int tb_finish(dx_job_model *jm, void *stp)
{
    tb_state *st = stp;
    const dx_rank *other = NULL;
    size_t n = 0;
    const dx_rank *x =
        dx_job_alone_rank(jm, &dx_reading_tracebacks, has_coll, same_coll, &other, &n);
    if (!x)
        return DDX_OK;
    const tb_rank *xs = dx_rank_priv(jm, x, &dx_reading_tracebacks);
    const tb_rank *os = dx_rank_priv(jm, other, &dx_reading_tracebacks);
    /* with two ranks either could be the odd one: the one not at a barrier is */
    if (n == 1 && !strcmp(xs->coll, "barrier")) {
        const dx_rank *t = x;
        x = other;
        other = t;
        const tb_rank *ts = xs;
        xs = os;
        os = ts;
        if (!strcmp(xs->coll, "barrier"))
            return DDX_OK;
    }
    st->rank = x->rank;
    st->eval = xs->coll_caller && eval_name(xs->coll_caller);
    snprintf(st->why, sizeof st->why, "rank %d is in %s (called from %s) while %s in %s", x->rank,
             xs->coll, xs->coll_caller ? xs->coll_caller : "?",
             n == 1 ? "the other rank is" : "every other rank is", os->coll);
    return dx_job_vote(jm, "tracebacks", x->rank, 1, "tracebacks: %s", st->why);
}

static int tb_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    const tb_state *st = stp;
    if (st->last_frame[0] && st->last_frame_seq > dx_exception_last_seq(jm)) {
        int rc = dx_job_fact(f, "job.cut_frame", "the last frame read, after every exception line",
                             "%s", st->last_frame);
        if (rc)
            return rc;
    }
    if (st->rank < 0)
        return DDX_OK;
    int rc = dx_job_fact(f, "job.collective_mismatch", "the ranks' tracebacks", "%s", st->why);
    if (!rc && st->eval)
        rc = dx_job_fact(f, "job.eval_collective_rank", st->why, "%d", st->rank);
    return rc;
}

const dx_reading dx_reading_tracebacks = {
    .name = "tracebacks",
    .doc = "the collective of torch.distributed each rank's traceback waits in, and the rank "
           "alone in another (votes for it); the innermost frame of a traceback cut before its "
           "exception",
    .facts = tb_facts,
    .nfacts = DX_ARRAY_LEN(tb_facts),
    .patterns = tb_patterns,
    .npatterns = DX_ARRAY_LEN(tb_patterns),
    .state_size = sizeof(tb_state),
    .rank_size = sizeof(tb_rank),
    .init = tb_init,
    .rank_fini = tb_rank_fini,
    .on_hit = tb_hit,
    .finish = tb_finish,
    .publish = tb_publish,
};
