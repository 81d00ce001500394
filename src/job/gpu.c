/* gpu.c -- GPU monitors (nvidia-smi's process table, gpustat) pasted with a log, and the GPU a
 * CUDA error names.
 *
 * Readings:
 *   gpu-monitors  per GPU index, the processes holding 1 GiB or more; one GPU holding two or
 *                 more while another listed GPU holds none
 *   oom-device    the GPU an out-of-memory error names ("(GPU 2; ...", "GPU 2 has a total
 *                 capacity") when no prefix gives the line a rank: on one node, that device is
 *                 the local rank's; votes for it
 */
#include "job.h"

static const dx_reading_fact gm_facts[] = {
    {"job.gpu_shared", "int",
     "a GPU index that a GPU monitor (nvidia-smi's process table, gpustat's process list) shows "
     "holding two or more processes of 1 GiB or more while another listed GPU holds none: "
     "several ranks run on one device"},
};

enum { GM_SMI, GM_GPUSTAT };

static const dx_signal gm_patterns[] = {
    /* nvidia-smi's process table: "|    0   N/A  N/A   1234567      C   python    36804MiB |"
     * (GPU, GI and CI ids since the A100 drivers; GPU and PID alone before) */
    [GM_SMI] = {"job-smi-process", DX_ROLE_NOISE, 0,
                "^\\|\\s+(?<gpu>\\d+)\\s+(?:N/A\\s+N/A\\s+|\\d+\\s+\\d+\\s+)?\\d+\\s+"
                "(?:C|G|C\\+G|M|M\\+C)\\s+\\S.*\\s(?<mem>\\d+)MiB\\s*\\|",
                "nvidia-smi (the Processes table)", 0},
    /* gpustat: "[0] NVIDIA A100-PCIE-40GB | 29'C,   0 % | 40176 / 40960 MB | user(36804M)" */
    [GM_GPUSTAT] = {"job-gpustat", DX_ROLE_NOISE, 0,
                    "^\\[(?<gpu>\\d+)\\] [^|]+\\|[^|]+\\| *\\d+ / +\\d+ MB \\|(?<procs>.*)$",
                    "gpustat (one line per GPU, its processes as user(memM))", 0},
};

/* per GPU index, processes holding 1 GiB or more, and whether the GPU was listed at all */
typedef struct gm_state {
    unsigned char big[64];
    unsigned char listed[64];
} gm_state;

static void add_big(gm_state *st, long long g)
{
    if (st->big[g] < 255)
        st->big[g]++;
}

static int gm_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    gm_state *st = stp;
    long long g = dx_hit_ll(h, "gpu", -1);
    if (g < 0 || g >= (long long)sizeof st->big)
        return DDX_OK;
    st->listed[g] = 1;
    if (row == GM_SMI) {
        if (dx_hit_ll(h, "mem", 0) >= 1024)
            add_big(st, g);
        return DDX_OK;
    }
    /* gpustat's process list: name(NNNNM) entries */
    dx_str p;
    if (!dx_hit_str(h, "procs", &p))
        return DDX_OK;
    for (size_t k = 0; k + 1 < p.n; k++) {
        if (p.p[k] != '(')
            continue;
        long long mb = 0;
        size_t j = k + 1;
        while (j < p.n && p.p[j] >= '0' && p.p[j] <= '9' && mb < 10000000)
            mb = mb * 10 + (p.p[j++] - '0');
        if (j < p.n && p.p[j] == 'M' && j + 1 < p.n && p.p[j + 1] == ')' && mb >= 1024)
            add_big(st, g);
    }
    return DDX_OK;
}

/* A GPU monitor shows one GPU holding two or more big processes while another listed GPU holds
 * none: several ranks landed on the same device. */
static int gm_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const gm_state *st = stp;
    for (size_t g = 0; g < sizeof st->big; g++) {
        if (st->big[g] < 2)
            continue;
        size_t h = 0;
        while (h < sizeof st->big && !(h != g && st->listed[h] && !st->big[h]))
            h++;
        if (h == sizeof st->big)
            return DDX_OK;
        char why[200];
        snprintf(why, sizeof why,
                 "GPU %zu holds %d processes of 1 GiB or more while GPU %zu holds none "
                 "(nvidia-smi or gpustat)",
                 g, st->big[g], h);
        return dx_job_fact(f, "job.gpu_shared", why, "%zu", g);
    }
    return DDX_OK;
}

const dx_reading dx_reading_gpu_monitors = {
    .name = "gpu-monitors",
    .doc = "nvidia-smi's process table and gpustat: one GPU holding two or more big processes "
           "while another holds none",
    .facts = gm_facts,
    .nfacts = DX_ARRAY_LEN(gm_facts),
    .patterns = gm_patterns,
    .npatterns = DX_ARRAY_LEN(gm_patterns),
    .state_size = sizeof(gm_state),
    .on_hit = gm_hit,
    .publish = gm_publish,
};

/* ==== oom-device ============================================================================ */

/* PyTorch's caching allocator names the device: "Tried to allocate 20.00 MiB (GPU 2; 23.69 GiB
 * total capacity; ..." up to 2.0, "Tried to allocate 4.22 GiB. GPU 2 has a total capacity of
 * ..." since 2.1 ("capacty" in 2.1's spelling) */
static const dx_signal od_patterns[] = {
    {"job-oom-device", DX_ROLE_NOISE, 0,
     "CUDA out of memory\\. Tried to allocate \\d+(?:\\.\\d+)? [KMGT]?i?B(?: \\(GPU (?<g1>\\d+);|"
     "\\. GPU (?<g2>\\d+) has a total capac)",
     "c10/cuda/CUDACachingAllocator.cpp (the out-of-memory message names the device)", 0},
};

typedef struct od_state {
    int gpu;    /* the device the first out-of-memory line without a rank names, -1 none */
    int ranked; /* an out-of-memory line had a rank of its own */
    char where[200];
} od_state;

const dx_reading dx_reading_oom_device;

static void od_init(void *st) { ((od_state *)st)->gpu = -1; }

static int od_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    od_state *st = stp;
    if (h->rank >= 0) {
        st->ranked = 1;
        return DDX_OK;
    }
    long long g = dx_hit_ll(h, "g1", -1);
    if (g < 0)
        g = dx_hit_ll(h, "g2", -1);
    if (st->gpu < 0 && g >= 0 && g < DX_JOB_MAX_RANK) {
        st->gpu = (int)g;
        snprintf(st->where, sizeof st->where, "%s:%llu", h->path, (unsigned long long)h->line);
    }
    return DDX_OK;
}

/* A distributed job on one node (two ranks or more known, one host at most) whose
 * out-of-memory error carries no rank: each process drives the GPU of its local rank, so the
 * device the error names is the rank that ran out. */
static int od_finish(dx_job_model *jm, void *stp)
{
    const od_state *st = stp;
    if (st->gpu < 0 || st->ranked || jm->nranks < 2)
        return DDX_OK;
    const char *host = NULL;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x || !x->host[0])
            continue;
        if (host && strcmp(host, x->host))
            return DDX_OK; /* several nodes: GPU N is on every one of them */
        host = x->host;
    }
    return dx_job_vote(jm, "oom-device", st->gpu, 1,
                       "out of memory: the error at %s names GPU %d, which on one node is local "
                       "rank %d's",
                       st->where, st->gpu, st->gpu);
}

const dx_reading dx_reading_oom_device = {
    .name = "oom-device",
    .doc = "the GPU an out-of-memory error without a rank prefix names: on one node, the local "
           "rank that ran out; votes for it",
    .patterns = od_patterns,
    .npatterns = DX_ARRAY_LEN(od_patterns),
    .state_size = sizeof(od_state),
    .init = od_init,
    .on_hit = od_hit,
    .finish = od_finish,
};
