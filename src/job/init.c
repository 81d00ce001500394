/* init.c -- process-group set-up: NCCL's communicators and transport, the ranks announced at
 * set-up, the store-based barrier, and the hosts of the ranks.
 *
 * Readings:
 *   nccl-init      each rank's host, pid, GPU and bus from NCCL's Init COMPLETE lines; the
 *                  largest communicator
 *   members        the rank of Lightning's unprefixed set-up lines (GLOBAL_RANK: g)
 *   store-barrier  processes that never reached the store-based barrier of set-up
 *   nccl-net       processes that chose different transports (IB and sockets)
 *   hosts          how many hosts the ranks ran on
 */
#include "init.h"

#include <limits.h>

#include "launchers.h"

/* ==== nccl-init ============================================================================= */

/* NCCL: "node1:1234:1234 [3] NCCL INFO ncclCommInitRank comm 0x55 rank 3 nranks 8 cudaDev 3
 * nvmlDev 3 busId 1c000 commId 0x.. - Init COMPLETE" (the function name since 2.19) */
static const dx_signal ni_patterns[] = {
    {"job-nccl-init", DX_ROLE_NOISE, 0,
     "(?<host>[\\w.-]+):(?<pid>\\d+):\\d+ \\[\\d+\\] NCCL INFO (?:\\w+ )?comm 0x[0-9a-f]+ "
     "rank (?<rank>\\d+) nranks (?<n>\\d+) cudaDev (?<dev>\\d+)(?: nvmlDev \\d+)? "
     "busId (?<bus>[0-9a-f]+)",
     "nccl src/init.cc", 0},
};

typedef struct ni_state {
    int nranks; /* the largest communicator seen */
} ni_state;

const dx_reading dx_reading_nccl_init;

/* The rank in the line is the rank within that communicator: trusted only for the largest one
 * (the world), else the rank the line's prefix or file gives. */
static int ni_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)row;
    ni_state *st = stp;
    int n = (int)dx_hit_ll(h, "n", -1);
    if (n > st->nranks)
        st->nranks = n;
    int r = h->rank >= 0 ? h->rank : n == st->nranks ? (int)dx_hit_ll(h, "rank", -1) : -1;
    dx_rank *x = dx_job_rank(jm, r);
    dx_str host;
    if (!x || x->host[0] || !dx_hit_str(h, "host", &host))
        return DDX_OK;
    snprintf(x->host, sizeof x->host, "%.*s", (int)host.n, host.p);
    x->cuda_dev = (int)dx_hit_ll(h, "dev", -1);
    x->pid = dx_hit_ll(h, "pid", -1);
    dx_str bus;
    if (dx_hit_str(h, "bus", &bus))
        snprintf(x->bus_id, sizeof x->bus_id, "%.*s", (int)bus.n, bus.p);
    return DDX_OK;
}

int dx_nccl_nranks(const dx_job_model *jm)
{
    return ((const ni_state *)dx_job_state(jm, &dx_reading_nccl_init))->nranks;
}

const dx_reading dx_reading_nccl_init = {
    .name = "nccl-init",
    .doc = "each rank's host, pid, CUDA device and bus id from NCCL's Init COMPLETE lines, and "
           "the largest communicator's size",
    .patterns = ni_patterns,
    .npatterns = DX_ARRAY_LEN(ni_patterns),
    .state_size = sizeof(ni_state),
    .on_hit = ni_hit,
};

/* ==== members =============================================================================== */

/* (A global rank announced twice while another is missing is the references' rule: the
 * counting conditions of torchrun-slurm-step's signal. This reading keeps the attribution.) */

/* Lightning's announcement is the announcing process's own line: an unprefixed "Initializing
 * distributed: GLOBAL_RANK: 1, MEMBER: 2/4" (mp.spawn, or one console for every process) is rank
 * 1's. */
static int me_line_rank(dx_job_model *jm, void *stp, const dx_line *l)
{
    (void)jm;
    (void)stp;
    static const char key[] = "GLOBAL_RANK: ";
    size_t b = l->attr->body <= l->len ? l->attr->body : l->len;
    if (l->rank >= 0 || l->len - b < 40)
        return -1;
    const char *s = l->text + b, *g = memmem(s, l->len - b, key, sizeof key - 1);
    if (!g || g - s > 40 ||
        (!memmem(s, (size_t)(g - s), "nitializing distributed", 23) &&
         !memmem(s, (size_t)(g - s), "nitializing ddp", 15)))
        return -1;
    long long r = 0;
    size_t i = (size_t)(g - s) + sizeof key - 1, k = i;
    while (i < l->len - b && i < k + 7 && s[i] >= '0' && s[i] <= '9')
        r = r * 10 + (s[i++] - '0');
    return i > k ? (int)r : -1;
}

const dx_reading dx_reading_members = {
    .name = "members",
    .doc = "the process each of Lightning's set-up lines comes from: an unprefixed "
           "'Initializing distributed: GLOBAL_RANK: g' is rank g's own line",
    .line_rank = me_line_rank,
};

/* ==== store-barrier ========================================================================= */

static const dx_reading_fact sb_facts[] = {
    {"job.init_missing", "int",
     "processes that never checked in at the store-based barrier of process-group set-up (its "
     "world_size minus the largest worker count printed), for a world of three or more"},
};

/* process-group set-up counting the processes that checked in: "Waiting in store based barrier
 * to initialize process group for rank: 2, key: store_based_barrier_key:2 (world_size=8,
 * worker_count=7, timeout=0:30:00)", and its timeout */
static const dx_signal sb_patterns[] = {
    {"job-store-barrier", DX_ROLE_NOISE, 0,
     "store based barrier [^(]*\\(world_size=(?<w>\\d+), "
     "(?:worker_count|num_workers_joined)=(?<j>\\d+)",
     "torch/distributed/distributed_c10d.py (_store_based_barrier; "
     "worker_count up to 1.13, num_workers_joined in 2.0)",
     0},
};

typedef struct sb_state {
    int world;  /* its world size */
    int joined; /* the most processes any waiting rank saw checked in: the final count */
} sb_state;

static int sb_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    sb_state *st = stp;
    long long w = dx_hit_ll(h, "w", -1), j = dx_hit_ll(h, "j", -1);
    if (w > 0 && j >= 0 && j <= w && w <= INT_MAX) {
        if (w != st->world)
            st->joined = 0;
        st->world = (int)w;
        if (j > st->joined)
            st->joined = (int)j;
    }
    return DDX_OK;
}

/* Processes of a world of three or more that never reached the set-up barrier: one is a process
 * stuck or slow before init; a missing node or a wrong world size leaves more out (and in a
 * world of two either reading fits, so none is given). */
static int sb_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const sb_state *st = stp;
    if (st->world < 3 || st->joined >= st->world)
        return DDX_OK;
    return dx_job_fact(f, "job.init_missing",
                       "the store-based barrier's world_size and worker "
                       "count",
                       "%d", st->world - st->joined);
}

const dx_reading dx_reading_store_barrier = {
    .name = "store-barrier",
    .doc = "processes that never checked in at the store-based barrier of process-group set-up",
    .facts = sb_facts,
    .nfacts = DX_ARRAY_LEN(sb_facts),
    .patterns = sb_patterns,
    .npatterns = DX_ARRAY_LEN(sb_patterns),
    .state_size = sizeof(sb_state),
    .on_hit = sb_hit,
    .publish = sb_publish,
};

/* ==== nccl-net ============================================================================== */

static const dx_reading_fact nn_facts[] = {
    {"job.net_mixed", "string",
     "NCCL's \"Using network IB\" and \"Using network Socket\" both appear in the job: some "
     "processes chose InfiniBand and others sockets, so their connections cannot meet"},
};

/* the network transport each NCCL process chose */
static const dx_signal nn_patterns[] = {
    {"job-nccl-net", DX_ROLE_NOISE, 0, "NCCL INFO Using network (?<net>IB|Socket)\\b",
     "nccl src/net.cc, src/init.cc (INFO \"Using network %s\")", 0},
};

typedef struct nn_state {
    int nets; /* 1 IB seen, 2 Socket seen (both: the processes disagree) */
} nn_state;

static int nn_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    nn_state *st = stp;
    dx_str net;
    if (dx_hit_str(h, "net", &net) && net.n)
        st->nets |= net.p[0] == 'I' ? 1 : 2;
    return DDX_OK;
}

/* Some NCCL processes chose InfiniBand and others sockets: their connections cannot meet (a
 * node without a usable IB device, or NCCL_IB_DISABLE set on some nodes). */
static int nn_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const nn_state *st = stp;
    return st->nets == 3 ? dx_job_fact(f, "job.net_mixed",
                                       "NCCL's \"Using network\" lines of different processes",
                                       "IB and Socket")
                         : DDX_OK;
}

const dx_reading dx_reading_nccl_net = {
    .name = "nccl-net",
    .doc = "NCCL processes of one job that chose different transports (InfiniBand and sockets)",
    .facts = nn_facts,
    .nfacts = DX_ARRAY_LEN(nn_facts),
    .patterns = nn_patterns,
    .npatterns = DX_ARRAY_LEN(nn_patterns),
    .state_size = sizeof(nn_state),
    .on_hit = nn_hit,
    .publish = nn_publish,
};

/* ==== hosts ================================================================================= */

static const dx_reading_fact ho_facts[] = {
    {"job.hosts", "int",
     "distinct hosts of the ranks (NCCL Init COMPLETE lines, torchelastic's table)"},
};

static int cmp_host(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The distinct hosts, counted after sorting (comparing every rank with every other took
 * minutes for 100,000 ranks). */
static int ho_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)stp;
    size_t n = 0, nhosts = 0;
    const char **hosts = dx_calloc(jm->nby ? jm->nby : 1, sizeof *hosts);
    if (!hosts)
        return DDX_ENOMEM;
    for (size_t a = 0; a < jm->nby; a++)
        if (jm->by_rank[a] && jm->by_rank[a]->host[0])
            hosts[n++] = jm->by_rank[a]->host;
    qsort(hosts, n, sizeof *hosts, cmp_host);
    for (size_t i = 0; i < n; i++)
        nhosts += i == 0 || strcmp(hosts[i - 1], hosts[i]) != 0;
    dx_free(hosts);
    return nhosts ? dx_job_fact(f, "job.hosts",
                                "hosts of the ranks (NCCL Init COMPLETE lines, torchelastic's "
                                "table)",
                                "%zu", nhosts)
                  : DDX_OK;
}

const dx_reading dx_reading_hosts = {
    .name = "hosts",
    .doc = "how many distinct hosts the ranks ran on",
    .facts = ho_facts,
    .nfacts = DX_ARRAY_LEN(ho_facts),
    .publish = ho_publish,
};
