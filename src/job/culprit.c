/* culprit.c -- the culprit rank: votes over one policy table.
 *
 * Readings (in their finish) and the scorer (diag.c, once the findings are ranked) cast votes
 * {ranks, source, strength, why}. The policy table below gives each source its precedence, the
 * reason text a report shows when it decides, whether its votes are listed as culprit signals,
 * and whether it is weak (a launcher's account: it names a culprit only when some finding is
 * reported). Vetoes are named predicates: vote vetoes drop a vote before anything is listed or
 * picked; pick vetoes withdraw the pick. Then the strongest vote decides (precedence, then
 * strength, then the order of casting), the others agree or not.
 */
#include "culprit.h"

#include "launchers.h"
#include "watchdog.h"

typedef struct policy {
    const char *source;
    int precedence; /* lower wins; -1 never decides */
    int listed;     /* its votes are culprit signals */
    int weak;       /* decides only when some finding is reported */
    const char *reason;
} policy;

/* in the order culprit signals are listed */
static const policy policies[] = {
    {"dump", -1, 1, 0, NULL},
    {"straggler", 10, 1, 0, "its steps are the slowest"},
    {"flight-recorder", 50, 1, 0, "the flight recorder shows it out of step with the others"},
    /* NCCL's RAS report: a process considered dead, a minority behind in operation count */
    {"nccl-ras", 48, 1, 0, "NCCL's RAS report shows it dead, behind the others or silent"},
    /* fr_trace or the debug server's table, pasted: the ranks that did not join a collective */
    {"analyzer", 55, 1, 0, "a flight-recorder analyzer's output names it"},
    {"stopped", 100, 1, 1, "its output stops long before the others'"},
    {"stack", 80, 1, 0, "its stack is outside any collective while the job hangs"},
    {"desync", 20, 1, 0, "it is alone in a different collective"},
    {"nan", 25, 1, 0, "its loss or gradient norm turned non-finite before any other rank's"},
    /* DDP's parameter check at construction: the rank whose count differs */
    {"params", 24, 1, 0, "it built a model with another number of parameter tensors"},
    {"tracebacks", 60, 1, 0, "its traceback is in a different collective from the others'"},
    {"uneven", 70, 1, 0, "its number of batches differs from every other rank's"},
    /* rank 0 coordinates a monitored barrier: its report outranks the others' pointers at it */
    {"barrier", 28, 1, 0, "rank 0's monitored barrier reports it did not arrive"},
    {"blamed", 30, 1, 0, "the log names this rank"},
    {"root", 40, 1, 0, "the first root failure is on this rank"},
    /* the top finding rests on a fact, and a traceback cut before its message ends the log */
    {"cut-frame", 41, 1, 0, "its traceback, cut before the message, ends in the failing call"},
    {"oom-device", 42, 1, 0, "its GPU ran out of memory (the error names the device; one node)"},
    {"watchdog", 90, 1, 0, "the collective timeouts point at this rank"},
    {"left", 105, 1, 0, "it left the job without an error while the others lost their peer"},
    {"exception", 110, 1, 0, "this rank failed on its own while the others waited"},
    /* (the report's "unrecognised" section says it: not listed again) */
    {"unrecognised", 115, 0, 0, "the failure no reference explains is this rank's own exception"},
    {"launcher", 140, 1, 1, "the launcher saw this rank fail first and stopped the others"},
    {"table-killed", 140, 1, 1, "torchelastic names it as the first failure"},
    {"table", 140, 1, 1, "torchelastic names it as the first failure"},
    /* torchelastic's root-cause entry only echoes a peer's failure; another rank's own exception
       is the root */
    {"table-echo", 35, 1, 0,
     "torchelastic's root cause only echoes its failure, and it raised its own exception"},
    {"busy", 130, 1, 0, "its progress bar stops where the collective fails"},
    {"rank-zero", 120, 1, 0, "the top finding is rank 0 working alone while the others wait"},
    /* the same root failure on at most half of the job's ranks, with nothing to order them:
       those ranks together (two faulty nodes) */
    {"root-several", 45, 1, 0,
     "the first root failure is on this rank and others, with nothing to order them"},
    /* ... on every rank: a tie that names none */
    {"root-tied", -1, 0, 0, NULL},
};

const char *dx_culprit_source(size_t i, int *precedence, const char **reason)
{
    if (i >= DX_ARRAY_LEN(policies))
        return NULL;
    *precedence = policies[i].precedence;
    *reason = policies[i].reason;
    return policies[i].source;
}

static const policy *policy_of(const dx_vote *v)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(policies); i++)
        if (!strcmp(policies[i].source, v->source))
            return &policies[i];
    return NULL; /* a source missing from the table: a bug, the vote is ignored */
}

static int is(const dx_vote *v, const char *source) { return !strcmp(v->source, source); }

static int names(const dx_vote *v, int rank)
{
    for (size_t i = 0; i < v->nranks; i++)
        if (v->ranks[i] == rank)
            return 1;
    return 0;
}

/* A vote of source (not vetoed) naming rank, or any rank when rank < 0. */
static const dx_vote *find_vote(const dx_job_model *jm, const char *source, int rank)
{
    for (size_t i = 0; i < jm->nvotes; i++) {
        const dx_vote *v = &jm->votes[i];
        if (!v->vetoed && is(v, source) && (rank < 0 || names(v, rank)))
            return v;
    }
    return NULL;
}

/* ==== vetoes ================================================================================ */

/* Step times name a straggler only when the top finding is about speed. */
static int straggler_without_perf_finding(const dx_job_model *jm, const dx_culprit_ctx *ctx,
                                          const dx_vote *v)
{
    (void)jm;
    return is(v, "straggler") &&
           !(ctx->top_kind && (!strcmp(ctx->top_kind, "perf") || !strcmp(ctx->top_kind, "silent")));
}

/* The launcher's one failed rank counts only when torchelastic's table names none. */
static int launcher_under_table(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *v)
{
    (void)ctx;
    return is(v, "launcher") && (find_vote(jm, "table", -1) || find_vote(jm, "table-killed", -1));
}

/* A launcher entry whose own error was a collective timeout names a rank that waited. */
static int waiting_rank_named(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *v)
{
    (void)ctx;
    return (is(v, "table") || is(v, "launcher")) && v->nranks &&
           dx_watchdog_timed_out(jm, v->ranks[0]);
}

/* The same root failure on several ranks with nothing to order them: torchelastic's pick among
 * them (by whole-second error-file times) is no better evidence. */
static int tied_root_named(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *v)
{
    (void)ctx;
    return (is(v, "table") || is(v, "launcher")) && v->nranks &&
           (find_vote(jm, "root-tied", v->ranks[0]) || find_vote(jm, "root-several", v->ranks[0]));
}

/* Every rank of two or more raised the same exception (the same text: all waited for the same
 * thing, a world that never formed, a store that never answered): the launcher's pick of the
 * first to exit orders nothing. */
static int same_exception_named(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *v)
{
    (void)ctx;
    if (!(is(v, "table") || is(v, "launcher") || is(v, "table-killed")) || !v->nranks)
        return 0;
    const dx_rank *named = dx_job_rank_get(jm, v->ranks[0]);
    const char *exc = named ? dx_exception_first(jm, named, NULL) : NULL;
    if (!exc)
        return 0;
    size_t ranks = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        const char *e = dx_exception_first(jm, x, NULL);
        if (!e || strcmp(e, exc) || x->first_error)
            return 0;
        ranks++;
    }
    return ranks >= 2;
}

/* torchelastic's root-cause entry that only echoes a peer's failure names a victim. */
static int echoed_root_cause(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *v)
{
    (void)ctx;
    return is(v, "table") && find_vote(jm, "table-echo", -1);
}

static const struct {
    const char *name;
    int (*drops)(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *v);
} vetoes[] = {
    {"straggler-without-perf-finding", straggler_without_perf_finding},
    {"launcher-under-table", launcher_under_table},
    {"waiting-rank-named", waiting_rank_named},
    {"tied-root-named", tied_root_named},
    {"same-exception-named", same_exception_named},
    {"echoed-root-cause", echoed_root_cause},
};

/* With no finding reported (nor a failure no reference explains), a launcher's account or
 * output that stops early alone names no culprit. */
static int weak_votes_without_finding(const dx_job_model *jm, const dx_culprit_ctx *ctx,
                                      const dx_vote *pick)
{
    (void)pick;
    if (ctx->nkept || ctx->unrecognised)
        return 0;
    for (size_t i = 0; i < jm->nvotes; i++) {
        const policy *p = policy_of(&jm->votes[i]);
        if (!jm->votes[i].vetoed && p && p->precedence >= 0 && !p->weak)
            return 0;
    }
    return 1;
}

/* With no finding reported, the rank whose output stopped early is not blamed on that alone. */
static int stopped_rank_without_finding(const dx_job_model *jm, const dx_culprit_ctx *ctx,
                                        const dx_vote *pick)
{
    return !ctx->nkept && find_vote(jm, "stopped", pick->ranks[0]);
}

static const struct {
    const char *name;
    int (*withdraws)(const dx_job_model *jm, const dx_culprit_ctx *ctx, const dx_vote *pick);
} pick_vetoes[] = {
    {"weak-votes-without-finding", weak_votes_without_finding},
    {"stopped-rank-without-finding", stopped_rank_without_finding},
};

/* ==== pick and explain ====================================================================== */

static int list_signals(const dx_job_model *jm, dx_culprit *out)
{
    for (size_t p = 0; p < DX_ARRAY_LEN(policies); p++)
        for (size_t i = 0; policies[p].listed && i < jm->nvotes; i++) {
            const dx_vote *v = &jm->votes[i];
            if (v->vetoed || !is(v, policies[p].source))
                continue;
            size_t cap = out->nsignals;
            if (dx_grow((void **)&out->signals, &cap, out->nsignals + 1, sizeof(char *)))
                return DDX_ENOMEM;
            if (!(out->signals[out->nsignals] = dx_strdup(v->why)))
                return DDX_ENOMEM;
            out->nsignals++;
        }
    return DDX_OK;
}

/* The deciding vote: the lowest precedence, then the strongest, then the first cast. */
static const dx_vote *strongest(const dx_job_model *jm, const policy **pol)
{
    const dx_vote *best = NULL;
    for (size_t i = 0; i < jm->nvotes; i++) {
        const dx_vote *v = &jm->votes[i];
        const policy *p = policy_of(v);
        if (v->vetoed || !p || p->precedence < 0 || !v->nranks)
            continue;
        if (!best || p->precedence < (*pol)->precedence ||
            (p->precedence == (*pol)->precedence && v->strength > best->strength)) {
            best = v;
            *pol = p;
        }
    }
    return best;
}

int dx_culprit_pick(dx_job_model *jm, const dx_culprit_ctx *ctx, dx_culprit *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    for (size_t k = 0; k < DX_ARRAY_LEN(vetoes); k++)
        for (size_t i = 0; i < jm->nvotes; i++)
            if (!jm->votes[i].vetoed && vetoes[k].drops(jm, ctx, &jm->votes[i]))
                jm->votes[i].vetoed = 1;
    int rc = list_signals(jm, out);
    const policy *pol = NULL;
    const dx_vote *pick = strongest(jm, &pol);
    if (rc || !pick)
        return rc;
    for (size_t k = 0; k < DX_ARRAY_LEN(pick_vetoes); k++)
        if (pick_vetoes[k].withdraws(jm, ctx, pick))
            return DDX_OK;
    out->rank = pick->ranks[0];
    out->nranks = pick->nranks;
    memcpy(out->ranks, pick->ranks, pick->nranks * sizeof *pick->ranks);
    /* a vote agrees when it names one of the picked ranks */
    int agree = 1;
    for (size_t i = 0; i < jm->nvotes; i++) {
        const dx_vote *v = &jm->votes[i];
        const policy *p = policy_of(v);
        int named = 0;
        for (size_t k = 0; k < out->nranks && !named; k++)
            named = names(v, out->ranks[k]);
        if (!v->vetoed && p && p->precedence >= 0 && v->nranks && !named)
            agree = 0;
    }
    char buf[700];
    snprintf(buf, sizeof buf, "%s%s", pol->reason,
             agree ? "; the other signals agree or are silent"
                   : "; other signals disagree (see culprit_signals)");
    out->why = dx_strdup(buf);
    out->decided = dx_strdup(pick->why ? pick->why : "");
    return out->why && out->decided ? DDX_OK : DDX_ENOMEM;
}

void dx_culprit_fini(dx_culprit *c)
{
    dx_free(c->why);
    dx_free(c->decided);
    for (size_t i = 0; i < c->nsignals; i++)
        dx_free(c->signals[i]);
    dx_free(c->signals);
    memset(c, 0, sizeof *c);
    c->rank = -1;
}
