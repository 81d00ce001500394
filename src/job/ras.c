/* ras.c -- NCCL's RAS report (`ncclras`) read as hang evidence.
 *
 * Reading:
 *   nccl-ras  the text report line by line (the communicator blocks of its Errors and Warnings
 *             sections and the ranks and processes each names) and, through dx_nccl_ras_json,
 *             its JSON form; the verdict of src/ras.c: processes considered dead, a minority of
 *             ranks behind in a communicator's operation count, ranks or processes without
 *             data, ranks that reported errors; votes for those ranks and gives them their
 *             GPU, process and node
 *
 * The report's rank lines read differently under each heading ("#g-i (hash) INCOMPLETE" lists
 * the ranks missing, "N ranks have launched up to operation X" the ranks at that count, "N ranks
 * have status S" ...): the hits run in line order, and the latest heading says what the next
 * rank line is. Formats: NCCL src/ras/client_support.cc, 2.24 to 2.30 (2.24 says "different
 * collective operation counts" and lists missing ranks as "The missing ranks: 3,5"; later
 * releases name the function and list each missing rank with its process).
 */
#include "ras.h"

#include "../ras.h"

static const dx_reading_fact ras_facts[] = {
    {"nccl.ras_behind", "string",
     "NCCL's RAS report (text or JSON): the ranks, a minority of their communicator, that launched "
     "fewer operations than the others, with their GPU, process and node"},
    {"nccl.ras_mismatch", "string",
     "NCCL's RAS report: a communicator whose ranks launched different numbers of operations "
     "(\"Communicator ranks have different AllGather operation counts\"), whichever side is the "
     "larger"},
    {"nccl.ras_dead", "string",
     "NCCL's RAS report: processes considered dead (unreachable via the RAS network), with their "
     "node, GPUs and rank when a communicator names it"},
    {"nccl.ras_missing", "string",
     "NCCL's RAS report: ranks or processes it got no communicator data from (INCOMPLETE)"},
    {"nccl.ras_error", "string",
     "NCCL's RAS report: ranks that reported an initialization or asynchronous error"},
};

enum {
    RAS_COMM,
    RAS_SECTION,
    RAS_DEAD_N,
    RAS_MISSING_PROCS,
    RAS_MISSING_RANKS_N,
    RAS_PROCESS,
    RAS_MISSING_LIST,
    RAS_COUNTS,
    RAS_GROUP_OPS,
    RAS_RANK_OPS,
    RAS_GROUP_STATUS,
    RAS_RANK_STATUS,
    RAS_GROUP_ERROR,
    RAS_RANK_ERROR,
    RAS_RANK,
    RAS_TABLE_ROW,
};

#define RAS_SRC "NCCL src/ras/client_support.cc (rasClientRunComms)"
/* a rank's GPU, process and node, or that RAS could not find its process */
#define RAS_WHO                                                                                    \
    " -- (?:GPU (?<gpu>\\d+)(?: \\(NVML \\d+\\))? managed by process (?<pid>\\d+) on node "        \
    "(?<host>\\S+)|\\[process information not found\\])"

static const dx_signal ras_patterns[] = {
    [RAS_COMM] = {"job-ras-comm", DX_ROLE_NOISE, 0,
                  "^#(?<g>\\d+)-(?<i>\\d+) \\((?<hash>[0-9a-f]{16})\\) "
                  "(?<kind>INCOMPLETE|ERROR|MISMATCH)\\s*$",
                  RAS_SRC " ('#%d-%d (%016lx) INCOMPLETE|ERROR|MISMATCH': group, communicator, "
                          "hash)",
                  0},
    [RAS_SECTION] = {"job-ras-section", DX_ROLE_NOISE, 0, "^(?<sec>INCOMPLETE|DEAD|TIMEOUT)\\s*$",
                     RAS_SRC " (the Errors section's job-wide headings)", 0},
    [RAS_DEAD_N] = {"job-ras-dead", DX_ROLE_NOISE, 0,
                    "^\\s*(?<n>\\d+) job process(?:es are| is) considered dead \\(unreachable via "
                    "the RAS network\\)",
                    RAS_SRC, 0},
    [RAS_MISSING_PROCS] = {"job-ras-missing-procs", DX_ROLE_NOISE, 0,
                           "^\\s*Missing communicator data from (?<n>\\d+) job process", RAS_SRC,
                           0},
    [RAS_MISSING_RANKS_N] = {"job-ras-missing-ranks", DX_ROLE_NOISE, 0,
                             "^\\s*Missing communicator data from (?<n>\\d+) ranks?\\s*$", RAS_SRC,
                             0},
    [RAS_PROCESS] = {"job-ras-process", DX_ROLE_NOISE, 0,
                     "^\\s*Process (?<pid>\\d+) on node (?<host>\\S+) managing GPUs? "
                     "(?<gpus>[\\d,]+)",
                     RAS_SRC " (the processes of the INCOMPLETE and DEAD headings; also the "
                             "RAS network's missing processes)",
                     0},
    [RAS_MISSING_LIST] = {"job-ras-missing-list", DX_ROLE_NOISE, 0,
                          "^\\s*The missing ranks?: (?<list>\\d+(?:,\\d+)*)",
                          "NCCL 2.24 src/ras/client_support.cc (a communicator's missing ranks)",
                          0},
    [RAS_COUNTS] = {"job-ras-counts", DX_ROLE_NOISE, 0,
                    "^\\s*Communicator ranks have different (?:(?<func>[A-Za-z]+) )?operation "
                    "counts",
                    RAS_SRC " ('different %s operation counts' per function; 2.24: 'different "
                            "collective operation counts')",
                    0},
    [RAS_GROUP_OPS] = {"job-ras-group-ops", DX_ROLE_NOISE, 0,
                       "^\\s*(?<n>\\d+) ranks have (?:launched up to operation (?<ops>\\d+)|not "
                       "launched any operations)",
                       RAS_SRC, 0},
    [RAS_RANK_OPS] = {"job-ras-rank-ops", DX_ROLE_NOISE, 0,
                      "^\\s*Rank (?<rank>\\d+) has (?:launched up to operation (?<ops>\\d+)|not "
                      "launched any operations)" RAS_WHO,
                      RAS_SRC, 0},
    [RAS_GROUP_STATUS] = {"job-ras-group-status", DX_ROLE_NOISE, 0,
                          "^\\s*(?<n>\\d+) ranks have status (?<status>[A-Z]+)", RAS_SRC, 0},
    [RAS_RANK_STATUS] = {"job-ras-rank-status", DX_ROLE_NOISE, 0,
                         "^\\s*Rank (?<rank>\\d+) has status (?<status>[A-Z]+)" RAS_WHO, RAS_SRC,
                         0},
    [RAS_GROUP_ERROR] = {"job-ras-group-error", DX_ROLE_NOISE, 0,
                         "^\\s*(?<n>\\d+) ranks reported (?<err>[A-Za-z][A-Za-z ]+?)\\s*$",
                         RAS_SRC " (rasClientBreakDownErrors)", 0},
    [RAS_RANK_ERROR] = {"job-ras-rank-error", DX_ROLE_NOISE, 0,
                        "^\\s*Rank (?<rank>\\d+) reported (?<err>[A-Za-z][A-Za-z ]+?)" RAS_WHO,
                        RAS_SRC " (rasClientBreakDownErrors)", 0},
    [RAS_RANK] = {"job-ras-rank", DX_ROLE_NOISE, 0, "^\\s*Rank (?<rank>\\d+)" RAS_WHO, RAS_SRC, 0},
    [RAS_TABLE_ROW] = {"job-ras-table", DX_ROLE_NOISE, 0,
                       "^\\s*(?<g>\\d+)\\s+\\d+\\s+\\d+\\s+[\\d-]+\\s+(?<size>\\d+)\\s+\\d+\\s+"
                       "(?:NOCOMM|INIT|RUNNING|FINALIZE|ABORT)\\s+[A-Z,]+\\s*$",
                       RAS_SRC " (the summary table: group, comms in group, nodes per comm, ranks "
                               "per node, ranks per comm, ranks in group, status, errors)",
                       0},
};

enum {
    UNDER_NONE,
    UNDER_INCOMPLETE,
    UNDER_DEAD,
    UNDER_COMM_INCOMPLETE,
    UNDER_OPS,
    UNDER_STATUS,
    UNDER_ERROR
};

typedef struct ras_state {
    dx_ras r;
    dx_ras_comm *cur;   /* the communicator of the latest "#g-i (hash)" heading */
    int under;          /* what the next rank or process line belongs to */
    long long value;    /* the count the latest group line gives (-1: none) */
    char what[40];      /* the status or error of the latest group line */
    int group_size[64]; /* the summary table: ranks per communicator of group g */
    int oom;
    dx_ras_verdict v;
} ras_state;

const dx_reading dx_reading_nccl_ras;

static void ras_fini(void *st) { dx_ras_fini(&((ras_state *)st)->r); }

static void hit_copy(const dx_hit *h, const char *name, char *buf, size_t cap)
{
    dx_hit_copy(h, name, buf, cap);
}

/* A rank line: the rank (of the current communicator) with what its heading says of it. */
static void rank_line(ras_state *st, size_t row, const dx_hit *h)
{
    if (!st->cur)
        return;
    dx_ras_rank *x = dx_ras_rank_get(st->cur, (int)dx_hit_ll(h, "rank", -1), &st->oom);
    if (!x)
        return;
    if (dx_hit_ll(h, "pid", -1) >= 0) {
        x->pid = dx_hit_ll(h, "pid", -1);
        x->cuda_dev = (int)dx_hit_ll(h, "gpu", -1);
        hit_copy(h, "host", x->host, sizeof x->host);
    }
    dx_str ops;
    switch (row) {
    case RAS_RANK_OPS:
        x->ops = dx_hit_str(h, "ops", &ops) && ops.n ? dx_hit_ll(h, "ops", 0) : 0;
        if (st->cur->ngroups < DX_ARRAY_LEN(st->cur->group_ops)) {
            st->cur->group_ops[st->cur->ngroups] = x->ops;
            st->cur->group_n[st->cur->ngroups++] = 1;
        }
        return;
    case RAS_RANK_STATUS:
        hit_copy(h, "status", x->status, sizeof x->status);
        return;
    case RAS_RANK_ERROR:
        hit_copy(h, "err", x->error, sizeof x->error);
        return;
    default:
        break;
    }
    switch (st->under) {
    case UNDER_COMM_INCOMPLETE:
        x->missing = 1;
        break;
    case UNDER_OPS:
        x->ops = st->value;
        break;
    case UNDER_STATUS:
        snprintf(x->status, sizeof x->status, "%.11s", st->what);
        break;
    case UNDER_ERROR:
        snprintf(x->error, sizeof x->error, "%s", st->what);
        break;
    default:
        break;
    }
}

static int ras_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    ras_state *st = stp;
    dx_str s;
    char buf[64];
    if (row != RAS_TABLE_ROW)
        st->r.reports |= 1; /* a line only a RAS report prints */
    switch (row) {
    case RAS_COMM:
        if (dx_hit_str(h, "hash", &s)) {
            st->cur = dx_ras_comm_get(&st->r, s.p, s.n, &st->oom);
            long long g = dx_hit_ll(h, "g", -1);
            if (st->cur && g >= 0 && g < (long long)DX_ARRAY_LEN(st->group_size) &&
                st->group_size[g] > 0)
                st->cur->size = st->group_size[g];
        }
        hit_copy(h, "kind", buf, sizeof buf);
        st->under = !strcmp(buf, "INCOMPLETE") ? UNDER_COMM_INCOMPLETE : UNDER_NONE;
        break;
    case RAS_SECTION:
        hit_copy(h, "sec", buf, sizeof buf);
        st->under = !strcmp(buf, "DEAD")         ? UNDER_DEAD
                    : !strcmp(buf, "INCOMPLETE") ? UNDER_INCOMPLETE
                                                 : UNDER_NONE;
        st->cur = NULL;
        break;
    case RAS_DEAD_N:
        st->r.ndead = (int)dx_hit_ll(h, "n", 0);
        break;
    case RAS_MISSING_PROCS:
        st->r.nmissing_procs = (int)dx_hit_ll(h, "n", 0);
        break;
    case RAS_MISSING_RANKS_N:
        break;
    case RAS_PROCESS: {
        if (st->under != UNDER_DEAD && st->under != UNDER_INCOMPLETE)
            break;
        dx_str host, gpus;
        if (dx_hit_str(h, "host", &host) && dx_hit_str(h, "gpus", &gpus) &&
            dx_ras_proc_add(&st->r, dx_hit_ll(h, "pid", -1), host.p, host.n, gpus.p, gpus.n,
                            st->under == UNDER_DEAD))
            st->oom = 1;
        break;
    }
    case RAS_MISSING_LIST:
        if (st->cur && dx_hit_str(h, "list", &s))
            for (size_t i = 0; i < s.n;) {
                long long r = 0;
                while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9' && r < DX_RAS_MAX_RANKS)
                    r = r * 10 + (s.p[i++] - '0');
                dx_ras_rank *x = dx_ras_rank_get(st->cur, (int)r, &st->oom);
                if (x)
                    x->missing = 1;
                i++;
            }
        break;
    case RAS_COUNTS:
        if (st->cur) {
            dx_hit_copy(h, "func", st->cur->func, sizeof st->cur->func);
            if (!st->cur->func[0])
                snprintf(st->cur->func, sizeof st->cur->func, "collective");
        }
        st->under = UNDER_NONE;
        break;
    case RAS_GROUP_OPS:
        st->value = dx_hit_str(h, "ops", &s) && s.n ? dx_hit_ll(h, "ops", 0) : 0;
        st->under = UNDER_OPS;
        if (st->cur && st->cur->ngroups < DX_ARRAY_LEN(st->cur->group_ops)) {
            st->cur->group_ops[st->cur->ngroups] = st->value;
            st->cur->group_n[st->cur->ngroups++] = (int)dx_hit_ll(h, "n", 0);
        }
        break;
    case RAS_GROUP_STATUS:
        hit_copy(h, "status", st->what, sizeof st->what);
        st->under = UNDER_STATUS;
        break;
    case RAS_GROUP_ERROR:
        hit_copy(h, "err", st->what, sizeof st->what);
        st->under = UNDER_ERROR;
        break;
    case RAS_TABLE_ROW: {
        long long g = dx_hit_ll(h, "g", -1);
        if (g >= 0 && g < (long long)DX_ARRAY_LEN(st->group_size))
            st->group_size[g] = (int)dx_hit_ll(h, "size", -1);
        break;
    }
    default: /* the rank lines */
        rank_line(st, row, h);
        break;
    }
    return DDX_OK;
}

int dx_nccl_ras_json(dx_job_model *jm, const char *name, const char *text, size_t len,
                     ddx_error *err)
{
    ras_state *st = dx_job_state(jm, &dx_reading_nccl_ras);
    return st ? dx_ras_json(&st->r, name, text, len, err) : DDX_OK;
}

/* The culprits get the GPU, process and node the report gives them (when nothing else did). */
static void identify(dx_job_model *jm, const ras_state *st, int rank)
{
    dx_rank *x = dx_job_rank(jm, rank);
    if (!x || x->pid >= 0 || x->host[0])
        return;
    int w = 0;
    for (size_t i = 0; i < st->r.ncomms; i++) {
        int n = st->r.comms[i].size >= 0 ? st->r.comms[i].size : (int)st->r.comms[i].nranks;
        w = n > w ? n : w;
    }
    for (size_t i = 0; i < st->r.ncomms; i++) {
        const dx_ras_comm *c = &st->r.comms[i];
        if ((c->size >= 0 ? c->size : (int)c->nranks) != w)
            continue;
        for (size_t k = 0; k < c->nranks; k++)
            if (c->ranks[k].rank == rank && c->ranks[k].pid >= 0) {
                x->pid = c->ranks[k].pid;
                x->cuda_dev = c->ranks[k].cuda_dev;
                snprintf(x->host, sizeof x->host, "%s", c->ranks[k].host);
                return;
            }
    }
}

static int ras_finish(dx_job_model *jm, void *stp)
{
    ras_state *st = stp;
    if (st->oom)
        return DDX_ENOMEM;
    if (!st->r.reports && !st->r.ncomms)
        return DDX_OK;
    dx_ras_judge(&st->r, &st->v);
    for (size_t i = 0; i < st->v.nculprits; i++)
        identify(jm, st, st->v.culprits[i]);
    if (!st->v.nculprits)
        return DDX_OK;
    return dx_job_vote_ranks(jm, "nccl-ras", st->v.culprits,
                             st->v.nculprits < DX_VOTE_RANKS ? st->v.nculprits : DX_VOTE_RANKS,
                             st->v.why_kind <= 2 ? 2 : 1, "NCCL RAS: %s", st->v.why);
}

static int ras_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const ras_state *st = stp;
    const struct {
        const char *name;
        const char *value;
    } facts[] = {{"nccl.ras_behind", st->v.behind},
                 {"nccl.ras_mismatch", st->v.mismatch},
                 {"nccl.ras_dead", st->v.dead},
                 {"nccl.ras_missing", st->v.missing},
                 {"nccl.ras_error", st->v.error}};
    int rc = DDX_OK;
    for (size_t i = 0; i < DX_ARRAY_LEN(facts) && !rc; i++)
        if (facts[i].value[0])
            rc = dx_job_fact(f, facts[i].name, "NCCL's RAS report", "%s", facts[i].value);
    return rc;
}

const dx_reading dx_reading_nccl_ras = {
    .name = "nccl-ras",
    .doc = "NCCL's RAS report (ncclras, text or JSON): processes considered dead, ranks behind in "
           "a communicator's operation count, ranks or processes without data, errors; votes "
           "for those ranks and gives them their GPU, process and node",
    .facts = ras_facts,
    .nfacts = DX_ARRAY_LEN(ras_facts),
    .patterns = ras_patterns,
    .npatterns = DX_ARRAY_LEN(ras_patterns),
    .state_size = sizeof(ras_state),
    .fini = ras_fini,
    .on_hit = ras_hit,
    .finish = ras_finish,
    .publish = ras_publish,
};
