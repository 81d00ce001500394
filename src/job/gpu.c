/* gpu.c -- GPU monitors (nvidia-smi's process table, gpustat) pasted with a log.
 *
 * Reading:
 *   gpu-monitors  per GPU index, the processes holding 1 GiB or more; one GPU holding two or
 *                 more while another listed GPU holds none
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
