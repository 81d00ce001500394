/* facts.c -- the fact store, version comparison, condition evaluation and the fact extractors.
 *
 * Extractors come in two kinds. Line extractors are rows of a table: a pattern with named
 * captures (compiled into the same Vectorscan database as the references' signals, so reading
 * facts costs no extra pass) and the fact each capture sets. Config extractors read a whole
 * DeepSpeed JSON or accelerate YAML file with jansson or libyaml.
 */
#include "facts.h"

#include <ctype.h>
#include <jansson.h>
#include <yaml.h>

#include "match.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

/* ==== the store ============================================================================ */

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The slot of name in the index: where it is, or the empty slot where it would go. */
static size_t slot_of(const dx_facts *f, const char *name)
{
    size_t mask = f->idx_cap - 1, k = name_hash(name) & mask;
    while (f->idx[k] && strcmp(f->v[f->idx[k] - 1].name, name) != 0)
        k = (k + 1) & mask;
    return k;
}

/* Keeps the index at most half full, rebuilt from v when it grows. */
static int index_grow(dx_facts *f, size_t want)
{
    if (f->idx_cap && want * 2 <= f->idx_cap)
        return DDX_OK;
    size_t cap = f->idx_cap ? f->idx_cap : 64;
    while (cap < want * 2)
        cap *= 2;
    uint32_t *idx = dx_calloc(cap, sizeof *idx);
    if (!idx)
        return DDX_ENOMEM;
    dx_free(f->idx);
    f->idx = idx;
    f->idx_cap = cap;
    for (size_t i = 0; i < f->n; i++)
        f->idx[slot_of(f, f->v[i].name)] = (uint32_t)(i + 1);
    return DDX_OK;
}

dx_fact *dx_facts_get(const dx_facts *f, const char *name)
{
    if (!f->idx_cap)
        return NULL;
    uint32_t i = f->idx[slot_of(f, name)];
    return i ? &f->v[i - 1] : NULL;
}

int dx_facts_set(dx_facts *f, const char *name, const char *value, size_t vlen, const char *path,
                 uint64_t line)
{
    while (vlen && isspace((unsigned char)value[vlen - 1]))
        vlen--;
    while (vlen && isspace((unsigned char)*value)) {
        value++;
        vlen--;
    }
    if (!vlen || dx_facts_get(f, name))
        return DDX_OK;
    if (f->n >= UINT32_MAX - 1 || index_grow(f, f->n + 1) != DDX_OK ||
        dx_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(dx_fact)) != DDX_OK)
        return DDX_ENOMEM;
    dx_fact *x = &f->v[f->n];
    memset(x, 0, sizeof *x);
    x->name = dx_strdup(name);
    x->value = dx_strndup(value, vlen > 200 ? 200 : vlen);
    x->path = dx_strdup(path ? path : "");
    x->line = line;
    if (!x->name || !x->value || !x->path) {
        dx_free(x->name);
        dx_free(x->value);
        dx_free(x->path);
        return DDX_ENOMEM;
    }
    f->idx[slot_of(f, x->name)] = (uint32_t)(f->n + 1);
    f->n++;
    return DDX_OK;
}

void dx_facts_fini(dx_facts *f)
{
    dx_free(f->idx);
    for (size_t i = 0; i < f->n; i++) {
        dx_free(f->v[i].name);
        dx_free(f->v[i].value);
        dx_free(f->v[i].path);
    }
    dx_free(f->v);
    memset(f, 0, sizeof *f);
}

/* ==== versions ============================================================================= */

/* Splits the next release component: a number, or a pre-release tag (a, b, rc, dev, alpha,
 * beta) that sorts before the release. Returns 0 at the end ('+' starts local metadata). */
static int next_part(const char **s, long *num, int *pre)
{
    const char *p = *s;
    while (*p == '.' || *p == '-' || *p == '_' || *p == 'v')
        p++;
    if (!*p || *p == '+' || isspace((unsigned char)*p))
        return 0;
    *pre = 0;
    if (isdigit((unsigned char)*p)) {
        *num = strtol(p, (char **)&p, 10);
    } else {
        /* alpha tag: dev < a/alpha < b/beta < rc < release */
        int rank = 0;
        if (!strncmp(p, "dev", 3))
            rank = 1;
        else if (*p == 'a')
            rank = 2;
        else if (*p == 'b')
            rank = 3;
        else if (!strncmp(p, "rc", 2) || *p == 'c')
            rank = 4;
        else if (!strncmp(p, "post", 4))
            rank = 6;
        else
            rank = 5;
        while (isalpha((unsigned char)*p))
            p++;
        *pre = rank;
        *num = isdigit((unsigned char)*p) ? strtol(p, (char **)&p, 10) : 0;
    }
    *s = p;
    return 1;
}

int dx_version_cmp(const char *a, const char *b)
{
    for (;;) {
        long na = 0, nb = 0;
        int pa = 0, pb = 0;
        int ha = next_part(&a, &na, &pa), hb = next_part(&b, &nb, &pb);
        if (!ha && !hb)
            return 0;
        /* a missing component: "2.5" == "2.5.0"; a pre-release tag sorts before it */
        if (!ha) {
            if (pb && pb < 5)
                return 1;
            if (pb == 0 && nb == 0)
                continue;
            return -1;
        }
        if (!hb) {
            if (pa && pa < 5)
                return -1;
            if (pa == 0 && na == 0)
                continue;
            return 1;
        }
        if (pa != pb) {
            /* a number against a tag: release parts sort after pre-release tags */
            int ra = pa ? pa : 5, rb = pb ? pb : 5;
            if (ra != rb)
                return ra < rb ? -1 : 1;
        }
        if (na != nb)
            return na < nb ? -1 : 1;
    }
}

int dx_version_in_range(const char *v, const char *range)
{
    const char *p = range;
    while (*p) {
        while (*p == ',' || isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        char op[3] = {0};
        size_t k = 0;
        while (k < 2 && (*p == '>' || *p == '<' || *p == '=' || *p == '!'))
            op[k++] = *p++;
        while (isspace((unsigned char)*p))
            p++;
        char bound[64];
        size_t n = 0;
        while (*p && *p != ',' && !isspace((unsigned char)*p) && n + 1 < sizeof bound)
            bound[n++] = *p++;
        bound[n] = '\0';
        if (!n)
            return 0;
        int c = dx_version_cmp(v, bound);
        int ok;
        if (!strcmp(op, ">="))
            ok = c >= 0;
        else if (!strcmp(op, ">"))
            ok = c > 0;
        else if (!strcmp(op, "<="))
            ok = c <= 0;
        else if (!strcmp(op, "<"))
            ok = c < 0;
        else if (!strcmp(op, "!="))
            ok = c != 0;
        else
            ok = c == 0; /* "==" or no operator */
        if (!ok)
            return 0;
    }
    return 1;
}

/* ==== conditions =========================================================================== */

static int truthy(const char *s, int *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "1", "on"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "0", "off", "none", "None"};
    for (size_t i = 0; i < DX_ARRAY_LEN(yes); i++)
        if (!strcmp(s, yes[i]))
            return *out = 1, 1;
    for (size_t i = 0; i < DX_ARRAY_LEN(no); i++)
        if (!strcmp(s, no[i]))
            return *out = 0, 1;
    return 0;
}

/* A PCRE2 search of value for pattern; an invalid pattern never matches (lint rejects it). */
static int regex_matches(const char *pattern, const char *value)
{
    int ec;
    PCRE2_SIZE eo;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, 0, &ec, &eo, NULL);
    if (!re)
        return 0;
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int rc = md ? pcre2_match(re, (PCRE2_SPTR)value, strlen(value), 0, 0, md, NULL) : -1;
    pcre2_match_data_free(md);
    pcre2_code_free(re);
    return rc >= 0;
}

/* Sets name, when it is not known yet, from the fact src (its path and line; value NULL takes
 * src's value). Both are copied first: setting a fact may move the others. */
static int derive_fact(dx_facts *f, const char *name, const dx_fact *src, const char *value)
{
    if (!src || dx_facts_get(f, name))
        return DDX_OK;
    char *path = dx_strdup(src->path), *val = dx_strdup(value ? value : src->value);
    uint64_t line = src->line;
    int rc = path && val ? dx_facts_set(f, name, val, strlen(val), path, line) : DDX_ENOMEM;
    dx_free(path);
    dx_free(val);
    return rc;
}

/* torch 1.x printed NCCL's version code (major*10000 + minor*100 + patch from 2.9 on) as if it
 * were major*1000 + minor*100 + patch, so NCCL 2.11.4 (21104) shows as "NCCL version 21.1.4" and
 * 2.10.3 as "21.0.3": read such a value back as the release it is. */
static int nccl_version_fixup(dx_facts *f)
{
    dx_fact *x = dx_facts_get(f, "nccl.version");
    int major, minor, patch, n = 0;
    if (!x || sscanf(x->value, "%d.%d.%d%n", &major, &minor, &patch, &n) != 3 || major < 20 ||
        major > 99 || minor > 9 || patch > 99)
        return DDX_OK;
    long code = major * 1000L + minor * 100L + patch;
    char buf[48];
    snprintf(buf, sizeof buf, "%ld.%ld.%ld%s", code / 10000, code % 10000 / 100, code % 100,
             x->value + n);
    char *v = dx_strdup(buf);
    if (!v)
        return DDX_ENOMEM;
    dx_free(x->value);
    x->value = v;
    return DDX_OK;
}

int dx_facts_derive(dx_facts *f)
{
    int rc = nccl_version_fixup(f);
    if (rc)
        return rc;
    /* the watchdog prints milliseconds; references reason in seconds */
    const dx_fact *ms = dx_facts_get(f, "nccl.timeout_ms");
    if (ms) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", strtoll(ms->value, NULL, 10) / 1000);
        rc = derive_fact(f, "nccl.timeout_s", ms, buf);
    }
    const dx_fact *dt = dx_facts_get(f, "accelerate.distributed_type");
    int fsdp = dt && !strcmp(dt->value, "FSDP");
    /* an accelerate FSDP config without fsdp_version runs FSDP1 (accelerate's default) */
    if (!rc && fsdp)
        rc = derive_fact(f, "fsdp.version", dx_facts_get(f, "accelerate.distributed_type"), "1");
    /* under an accelerate FSDP config, its mixed_precision is the policy FSDP applies */
    if (!rc && fsdp)
        rc = derive_fact(f, "fsdp.mixed_precision", dx_facts_get(f, "accelerate.mixed_precision"),
                         NULL);
    return rc;
}

int dx_cond_eval(const dx_cond *c, dx_facts *f, dx_fact **used)
{
    dx_fact *x = c->fact ? dx_facts_get(f, c->fact) : NULL;
    if (used)
        *used = x;
    if (c->op == DX_OP_EXISTS) {
        /* a fact seen proves "exists"; a fact not seen proves nothing (the inputs may just
         * not include the file that would show it), so "exists: true" is then unknown */
        int want = 1;
        truthy(c->value ? c->value : "true", &want);
        if (x) {
            x->used = 1;
            return want;
        }
        return want ? -1 : 1;
    }
    if (!x)
        return -1;
    x->used = 1;
    switch (c->op) {
    case DX_OP_RANGE:
        return dx_version_in_range(x->value, c->value);
    case DX_OP_MATCHES:
        return regex_matches(c->value, x->value);
    default: {
        int a, b;
        if (truthy(x->value, &a) && truthy(c->value, &b))
            return a == b;
        char *ea, *eb;
        double da = strtod(x->value, &ea), db = strtod(c->value, &eb);
        if (!*ea && !*eb && ea != x->value && eb != c->value)
            return da == db;
        return strcmp(x->value, c->value) == 0;
    }
    }
}

/* ==== line extractors ====================================================================== */

/* Each row: an id, a pattern with named captures, the fact it sets and where the value comes
 * from. In `fact`, "{pkg}" and "{name}" are replaced by those captures (package names are
 * normalised: lower case, '-' as '_', a few aliases); the value is the capture "v", or `value`
 * when the row only tests presence or builds the value from captures ("{maj}.{min}").
 * docs/facts.md lists them. */
typedef struct extractor {
    dx_signal sig;
    const char *fact;
    const char *value; /* fixed value or template, or NULL to take the capture "v" */
} extractor;

#define PKGS                                                                                       \
    "torch|deepspeed|transformers|accelerate|peft|trl|bitsandbytes|flash[-_]attn|"                 \
    "jax|jaxlib|ray|megatron[-_]core|vllm|apex|triton|nvidia[-_]nccl[-_]cu\\d+|"                   \
    "xformers|torchvision|lightning|pytorch[-_]lightning|pytorch|python|numpy"
#define VER "(?<v>\\d+(?:\\.\\w+)+(?:\\+[\\w.]+)?)"
#define ROW(id_, pat, fact_)                                                                       \
    {                                                                                              \
        {id_, DX_ROLE_NOISE, 0, pat, NULL, 0}, fact_, NULL                                         \
    }
#define HAS(id_, pat, fact_)                                                                       \
    {                                                                                              \
        {id_, DX_ROLE_NOISE, 0, pat, NULL, 0}, fact_, "true"                                       \
    }
#define VAL(id_, pat, fact_, value_)                                                               \
    {                                                                                              \
        {id_, DX_ROLE_NOISE, 0, pat, NULL, 0}, fact_, value_                                       \
    }
/* variables of environment dumps that give env.NAME facts */
#define ENVNAMES                                                                                   \
    "(?:NCCL|TORCH|CUDA|MASTER|SLURM|PYTORCH|OMP|DS|ACCELERATE)_\\w+|WORLD_SIZE|"                  \
    "LOCAL_RANK|RANK|LOCAL_WORLD_SIZE"
/* NCCL's "comm 0x.. rank R nranks N cudaDev D [nvmlDev D] busId B [commId 0x..] - Init COMPLETE"
 * after the "host:pid:tid [dev]" prefix (2.7 to 2.28; later releases add nvmlDev and commId,
 * and from 2.21 the caller, "ncclCommInitRank", "ncclCommInitRankConfig", ..., comes first).
 * "ncclCommSplit" / "ncclCommShrink" lines number ranks within the new group: not these. */
#define NCCL_INIT                                                                                  \
    "(?:^|[ \\t:\\]])(?<host>[\\w.-]+):\\d+:\\d+ \\[\\d+\\] NCCL INFO "                            \
    "(?:ncclCommInit\\w* )?comm 0x[0-9a-f]+ rank (?<r>\\d+) nranks (?<n>\\d+) "                    \
    "cudaDev (?<dev>\\d+) (?:nvmlDev \\d+ )?busId (?<bus>[0-9a-f]+) .*Init COMPLETE"
/* launcher flags, on the launcher's line or on a continuation line of a multi-line command */
#define LAUNCH_LINE(l) "(?:(?:" l ")\\b.*[ \\t]|^[ \\t]*)"

static const extractor extractors[] = {
    /* pip freeze "torch==2.1.0", pip list "torch   2.1.0", conda list "torch  2.1.0  py3.10_cuda12.1_0
     * pytorch", collect_env "[pip3] torch==2.1.0" / "[conda] torch 2.1.0 ..." */
    ROW("pip-package", "^(?:\\[(?:pip3?|conda)\\] )?(?<pkg>" PKGS ")(?:==?| +|: *)" VER "(?:\\s|$)",
        "{pkg}.version"),
    /* Lightning's bug-report environment: "\t- torch:             1.12.1" */
    ROW("lightning-env", "^[ \\t]*- (?<pkg>" PKGS "): +" VER "(?:[ \\t\\r]|$)", "{pkg}.version"),
    /* the same list with "*" bullets in issue templates ("* deepspeed: 0.9.2"); its own row, as
     * an alternation of the two bullets after the indentation gets no candidate from Vectorscan */
    ROW("star-env", "^[ \\t]*\\* (?<pkg>" PKGS "): +" VER "(?:[ \\t\\r]|$)", "{pkg}.version"),
    /* the same list with bold names: "- **torch**: 2.12.0+cu130" */
    ROW("bold-env", "^[ \\t]*[-*] \\*\\*(?<pkg>" PKGS ")\\*\\*: +" VER "(?:[ \\t\\r]|$)",
        "{pkg}.version"),
    /* python -m torch.utils.collect_env */
    ROW("collect-env-torch", "^PyTorch version: " VER, "torch.version"),
    ROW("collect-env-cuda", "^CUDA used to build PyTorch: (?<v>\\d+\\.\\d+)", "cuda.version"),
    ROW("collect-env-driver", "^Nvidia driver version: (?<v>\\d+(?:\\.\\d+)+)",
        "cuda.driver_version"),
    ROW("collect-env-python", "^Python version: (?<v>\\d+\\.\\d+\\.\\d+)", "python.version"),
    ROW("collect-env-gpu",
        "^(?:GPU models and configuration: )?GPU 0: "
        "(?<v>(?:NVIDIA|Tesla|Quadro|GeForce|TITAN) [^(\\r\\n]+?)(?: \\(UUID.*)?$",
        "gpu.model"),
    /* transformers-cli env / accelerate env */
    ROW("hf-env-version",
        "^- `?(?<pkg>[Tt]ransformers|[Aa]ccelerate|PEFT|TRL|DeepSpeed)`? version: " VER,
        "{pkg}.version"),
    ROW("hf-env-torch", "^- PyTorch version \\(GPU\\?\\): " VER, "torch.version"),
    ROW("hf-env-python", "^- Python version: (?<v>\\d+\\.\\d+\\.\\d+)", "python.version"),
    ROW("hf-env-gpu", "^- GPU type: (?<v>\\S.*?)[ \\t\\r]*$", "gpu.model"),
    /* accelerate env's "- `Accelerate` default config:" block */
    ROW("acc-env-type", "^[ \\t]+- distributed_type: (?<v>\\w+)", "accelerate.distributed_type"),
    ROW("acc-env-nproc", "^[ \\t]+- num_processes: (?<v>\\d+)", "accelerate.num_processes"),
    ROW("acc-env-nnodes", "^[ \\t]+- num_machines: (?<v>\\d+)", "launcher.nnodes"),
    ROW("acc-env-port", "^[ \\t]+- main_process_port: (?<v>\\d+)", "launcher.master_port"),
    ROW("acc-env-zero", "^[ \\t]+- deepspeed_config: \\{.*'zero_stage': (?<v>\\d)",
        "deepspeed.zero_stage"),
    /* ds_report */
    ROW("ds-report-torch", "^torch version \\.+ " VER, "torch.version"),
    ROW("ds-report-deepspeed", "^deepspeed info \\.+ " VER, "deepspeed.version"),
    ROW("ds-report-cuda", "^torch cuda version \\.+ (?<v>\\d+\\.\\d+)", "cuda.version"),
    /* DeepSpeed's own start-up line */
    ROW("ds-info-version", "DeepSpeed info: version=" VER, "deepspeed.version"),
    /* the driver version typed into a report by hand: "Driver version: 535.104.05", "驱动版本：515.43.04"
     * (Chinese, with a full-width colon); three digits first, as NVIDIA numbers its drivers */
    ROW("hand-driver",
        "^[ \\t]*-?[ \\t]*(?:NVIDIA |Nvidia |nvidia )?(?:[Dd]river(?: [Vv]ersion)?|驱动(?:版本)?)[ \\t]*"
        "(?::|：)[ \\t]*(?<v>\\d{3}\\.\\d+(?:\\.\\d+)?)",
        "cuda.driver_version"),
    /* hardware and NCCL typed into a report by hand: "- GPU: 8x H200 (Driver: 550.90.07)",
     * "- NCCL:  v2.23.4" */
    ROW("hand-gpu",
        "^[ \\t]*-?[ \\t]*(?:\\*\\*)?GPUs?(?:\\*\\*)?:[ \\t]*(?:\\d+ ?[xX] ?)?"
        "(?<v>(?:NVIDIA )?[A-Z][\\w-]*(?: [\\w-]+)*?)[ \\t]*(?:\\(|,|$)",
        "gpu.model"),
    ROW("hand-gpu-count",
        "^[ \\t]*-?[ \\t]*(?:\\*\\*)?GPUs?(?:\\*\\*)?:[ \\t]*(?<v>\\d+) ?[xX] ?[A-Z]", "gpu.count"),
    ROW("hand-nccl", "^[ \\t]*-?[ \\t]*NCCL:[ \\t]*v?(?<v>2\\.\\d+\\.\\d+)", "nccl.version"),
    /* the PyTorch version typed alone on a line: "PyTorch 2.5", "torch: 2.4.1", "- PyTorch version:
     * 2.5.1+cu121" (nothing else on the line, so prose that names a version is not read) */
    ROW("hand-torch",
        "^[ \\t]*-?[ \\t]*(?:PyTorch|Pytorch|pytorch|[Tt]orch)(?: [Vv]ersion)?[ \\t]*(?::|：|==|=)?[ \\t]*v?"
        "(?<v>[12]\\.\\d+(?:\\.\\d+)?(?:\\+[\\w.]+)?)[ \\t\\r]*$",
        "torch.version"),
    /* nvidia-smi */
    ROW("nvidia-smi-driver", "Driver Version[ \\t]*: (?<v>\\d+(?:\\.\\d+)+)",
        "cuda.driver_version"),
    ROW("nvidia-smi-cuda", "(?:NVIDIA-SMI .*CUDA Version|^CUDA Version[ \\t]+): (?<v>\\d+\\.\\d+)",
        "cuda.driver_cuda"),
    ROW("nvidia-smi-gpu",
        "^\\|\\s+0\\s+(?<v>(?:NVIDIA|Tesla|Quadro|GeForce) [\\w .-]+?)\\s+(?:On|Off)\\s+\\|",
        "gpu.model"),
    /* nccl-tests: "#  Rank  0 Group  0 Pid 587622 on host device  0 [0x21] NVIDIA GeForce RTX 4090"
     * (older builds print no Group) */
    ROW("nccl-tests-device",
        "^#\\s+Rank\\s+0 (?:Group\\s+\\d+ )?Pid\\s+\\d+ on\\s+\\S+ device\\s+\\d+ \\[[0-9a-fx:.]+\\] "
        "(?<v>\\S.*?)[ \\t\\r]*$",
        "gpu.model"),
    ROW("nvidia-smi-mem", "^\\|.*\\d+MiB / +(?<v>\\d+)MiB \\|", "gpu.memory_mib"),
    /* nvidia-smi -q: the first "Total" is the first GPU's "FB Memory Usage" (BAR1 comes after) */
    ROW("nvidia-smi-q-count", "^Attached GPUs[ \\t]+: (?<v>\\d+)", "gpu.count"),
    /* torch.cuda's capability warning names the GPU: "NVIDIA GeForce RTX 5090 with CUDA
     * capability sm_120 is not compatible with the current PyTorch installation." */
    ROW("torch-capability-gpu", "^(?<v>NVIDIA [^\\r\\n]+?) with CUDA capability sm_\\d+",
        "gpu.model"),
    ROW("nvidia-smi-q-name", "^[ \\t]+Product Name[ \\t]+: (?<v>\\S.*?)[ \\t\\r]*$", "gpu.model"),
    ROW("nvidia-smi-q-mem", "^[ \\t]+Total[ \\t]+: (?<v>\\d+) MiB", "gpu.memory_mib"),
    /* CUDA out-of-memory messages: "GPU 0 has a total capacity of 79.15 GiB" (2.1+, "capacty" in
     * some), "(GPU 0; 15.90 GiB total capacity; ..." before */
    ROW("oom-capacity",
        "(?:GPU \\d+ has a total capac\\w+ of |\\(GPU \\d+; )(?<v>\\d+(?:\\.\\d+)?) GiB",
        "gpu.memory_gib"),
    /* NCCL */
    ROW("nccl-version", "NCCL version (?<v>\\d+\\.\\d+\\.\\d+)", "nccl.version"),
    ROW("nccl-cuda", "NCCL version \\d+\\.\\d+\\.\\d+[\\w.-]*\\+cuda(?<v>\\d+\\.\\d+)",
        "nccl.cuda_version"),
    /* the CUDA version the driver supports, as nvidia-smi's header: 12010 is 12.1 */
    VAL("nccl-driver-cuda", "NCCL INFO cudaDriverVersion (?<maj>\\d+)0(?<min>\\d)0\\b",
        "cuda.driver_cuda", "{maj}.{min}"),
    ROW("nccl-network", "NCCL INFO Using network (?<v>\\w+)", "nccl.network"),
    ROW("nccl-transport-ib", "NCCL INFO NET/IB ?: Using \\[\\d\\](?<v>\\w+)", "nccl.ib_device"),
    ROW("nccl-socket-if",
        "NCCL INFO NET/Socket ?: Using \\[\\d\\](?<v>[\\w.-]+):", "nccl.socket_ifname"),
    ROW("timeout-ms", "Timeout\\(ms\\)=(?<v>\\d+)", "nccl.timeout_ms"),
    /* rank <-> host <-> GPU, from each rank's "Init COMPLETE" (the first communicator wins) */
    VAL("nccl-init-nranks", NCCL_INIT, "nccl.nranks", "{n}"),
    VAL("nccl-init-host", NCCL_INIT, "nccl.rank.{r}.host", "{host}"),
    VAL("nccl-init-dev", NCCL_INIT, "nccl.rank.{r}.cuda_dev", "{dev}"),
    VAL("nccl-init-busid", NCCL_INIT, "nccl.rank.{r}.busid", "{bus}"),
    /* environment dumps */
    /* env / printenv, "export NAME=value", "# NAME='value'" (the env an ESPnet/Kaldi job log
     * starts with); quotes around the value are dropped */
    ROW("env-var", "^(?:export |# )?(?<name>" ENVNAMES ")=[\"']?(?<v>[^\"'\\s]*)", "env.{name}"),
    /* print(os.environ) / pprint of a dict: " 'SLURM_JOB_ID': '7099018'," */
    ROW("env-dict", "^[ \\t{]*'(?<name>" ENVNAMES ")': '(?<v>[^']*)'", "env.{name}"),
    /* mpirun's "-x NAME=value" exports a variable to every rank (the first one on the line) */
    ROW("env-mpirun-x", "\\s-x\\s+(?<name>" ENVNAMES ")=[\"']?(?<v>[^\"'\\s]*)", "env.{name}"),
    /* launcher command lines */
    /* torchrun / python -m torch.distributed.run, deepspeed (--num_gpus, --num_nodes) */
    ROW("launcher-nproc",
        LAUNCH_LINE(
            "torchrun|torch\\.distributed\\.(?:run|launch)|deepspeed") "--(?:nproc[_-]per[_-]node|num_gpus)[= ][\"']?(?<v>\\d+)",
        "launcher.nproc_per_node"),
    ROW("launcher-nnodes",
        LAUNCH_LINE(
            "torchrun|torch\\.distributed\\.(?:run|launch)|deepspeed") "--(?:nnodes|num_nodes)[= ][\"']?(?<v>\\d+)",
        "launcher.nnodes"),
    ROW("launcher-port", "--(?:master[_-]port|main_process_port)[= ][\"']?(?<v>\\d+)",
        "launcher.master_port"),
    ROW("launcher-addr", "--(?:master[_-]addr|main_process_ip)[= ][\"']?(?<v>[\\w.-]+)",
        "launcher.master_addr"),
    /* at a line start (indented in a snippet) or after a shell prompt ("...$ ", "> ",
     * "host:dir# "), not in a commented-out line */
    ROW("launcher-name",
        "(?:^[ \\t]*|[$>] |[^ \\t#]# |\\b[A-Z_]+=\\S* )(?<v>torchrun|deepspeed|accelerate launch|"
        "srun|mpirun|mpiexec|python3?(?: -m torch\\.distributed\\.(?:run|launch))?) +"
        "(?:-|\\S+\\.py\\b|python|\\\\$)",
        "launcher.name"),
    /* accelerate launch: --num_processes counts every process of every machine */
    ROW("launcher-acc-nproc",
        LAUNCH_LINE("accelerate launch") "--num[_-]processes[= ][\"']?(?<v>\\d+)",
        "accelerate.num_processes"),
    ROW("launcher-acc-nnodes",
        LAUNCH_LINE("accelerate launch") "--num[_-]machines[= ][\"']?(?<v>\\d+)",
        "launcher.nnodes"),
    /* Slurm: srun flags or the batch script's #SBATCH lines (srun -N is nodes) */
    ROW("slurm-nodes", "(?:^#SBATCH +|\\bsrun\\b.*?[ \\t])(?:-N ?|--nodes[= ])(?<v>\\d+)",
        "launcher.nnodes"),
    ROW("slurm-per-node", "(?:^#SBATCH +|\\bsrun\\b.*?[ \\t])--ntasks-per-node[= ](?<v>\\d+)",
        "launcher.nproc_per_node"),
    ROW("slurm-ntasks", "(?:^#SBATCH +|\\bsrun\\b.*?[ \\t])(?:-n ?|--ntasks[= ])(?<v>\\d+)",
        "job.world_size"),
    /* mpirun / mpiexec: -np is every process; Open MPI's -N, -npernode, --map-by ppr:N:node and
     * MPICH's -ppn (--ppn in Cray PALS' mpiexec) count per node. The first such option after the
     * launcher's name counts: options of the program it starts come later (nccl-tests' own
     * "-c 0" is not a process count) */
    ROW("mpi-np", "\\bmpi(?:run|exec)\\b.*?[ \\t]-{1,2}(?:np?|c) ?(?<v>\\d+)", "job.world_size"),
    ROW("mpi-per-node",
        "\\bmpi(?:run|exec)\\b.*?[ \\t](?:-N |-{1,2}n?pernode |-{1,2}ppn[ =]|--map-by ppr:)(?<v>\\d+)",
        "launcher.nproc_per_node"),
    /* DeepSpeed's launcher: "[launch.py:151:main] nnodes=1, num_local_procs=1, node_rank=0" */
    ROW("ds-launch-nnodes", "\\bnnodes=(?<v>\\d+), num_local_procs=\\d+", "launcher.nnodes"),
    ROW("ds-launch-nproc", "\\bnnodes=\\d+, num_local_procs=(?<v>\\d+)", "launcher.nproc_per_node"),
    ROW("ds-launch-world", "\\bdist_world_size=(?<v>\\d+)", "job.world_size"),
    /* Megatron prints its arguments at start-up ("  sequence_parallel ....... True") and takes
     * them as flags */
    ROW("megatron-arg-sp", "\\bsequence_parallel \\.{3,} (?<v>True|False)",
        "megatron.sequence_parallel"),
    ROW("megatron-arg-tp", "\\btensor_model_parallel_size \\.{3,} (?<v>\\d+)",
        "megatron.tensor_model_parallel_size"),
    ROW("megatron-flag-tp", "--tensor-model-parallel-size[= ](?<v>\\d+)",
        "megatron.tensor_model_parallel_size"),
    HAS("megatron-flag-sp", "--sequence-parallel(?:[ \\t\\\\]|$)", "megatron.sequence_parallel"),
    /* "using world size: 2, data-parallel size: 1, ..., pipeline-model-parallel size: 2,
     * encoder-pipeline-model-parallel size: 0" (megatron/training/arguments.py) */
    ROW("megatron-world-pp", "[ ,]pipeline-model-parallel size: (?<v>\\d+)",
        "megatron.pipeline_model_parallel_size"),
    ROW("megatron-flag-pp", "--pipeline-model-parallel-size[= ](?<v>\\d+)",
        "megatron.pipeline_model_parallel_size"),
    /* Hugging Face TrainingArguments printed in logs, or given as flags or YAML keys
     * (ddp_find_unused_parameters=None leaves it to the Trainer: on unless the model uses
     * gradient checkpointing, so it sets no fact) */
    ROW("ta-unused", "ddp_find_unused_parameters(?:=|: | )(?<v>[Tt]rue|[Ff]alse)\\b",
        "ddp.find_unused_parameters"),
    ROW("ta-gc", "(?:^|[ ,(])gradient_checkpointing=(?<v>True|False)",
        "trainer.gradient_checkpointing"),
    ROW("ta-timeout", "(?:--)?ddp_timeout(?:=|: | )(?<v>\\d+)", "trainer.ddp_timeout_s"),
    ROW("ta-deepspeed",
        "(?:^|[ ,(])deepspeed=(?!None(?:[,)\\s]|$))(?!\\d+\\.\\d)(?<v>[^=,)\\s][^,)\\s]*)",
        "trainer.deepspeed"),
    /* verl's Hydra overrides: "actor_rollout_ref.actor.fsdp_config.param_offload=True",
     * "...fsdp_config.offload_policy=True" (FSDP2) */
    ROW("verl-offload", "fsdp_config\\.(?:offload_policy|param_offload)=(?<v>[Tt]rue|[Ff]alse)\\b",
        "fsdp.cpu_offload"),
    /* frameworks present in tracebacks */
    HAS("tb-deepspeed", "(?:site|dist)-packages/deepspeed/", "deepspeed.in_traceback"),
    HAS("tb-accelerate", "(?:site|dist)-packages/accelerate/", "accelerate.in_traceback"),
    HAS("tb-fsdp", "torch/distributed/fsdp/", "fsdp.in_traceback"),
    HAS("tb-megatron", "megatron/(?:core|training)/", "megatron.in_traceback"),
    HAS("tb-trl", "(?:site|dist)-packages/trl/", "trl.in_traceback"),
    HAS("tb-peft", "(?:site|dist)-packages/peft/", "peft.in_traceback"),
    HAS("tb-bnb", "(?:site|dist)-packages/bitsandbytes/", "bitsandbytes.in_traceback"),
    /* versions in paths: ".../lib/python3.10/site-packages/", ".../deepspeed-0.14.2-py3.10.egg/" */
    ROW("tb-python", "/python(?<v>3\\.\\d+)/(?:site|dist)-packages/", "python.version"),
    ROW("tb-egg", "/(?<pkg>" PKGS ")-" VER "-py3\\.\\d+(?:-[\\w-]+)?\\.egg/", "{pkg}.version"),
    /* quantisation config printed by transformers */
    ROW("bnb-4bit", "[\"']?load_in_4bit[\"']?[:=] ?(?<v>[Tt]rue|[Ff]alse)", "bnb.load_in_4bit"),
    ROW("bnb-8bit", "[\"']?load_in_8bit[\"']?[:=] ?(?<v>[Tt]rue|[Ff]alse)", "bnb.load_in_8bit"),
    ROW("bnb-storage", "bnb_4bit_quant_storage[\"']?[:=] ?[\"']?(?:torch\\.)?(?<v>\\w+)",
        "bnb.quant_storage"),
};
#undef ROW
#undef HAS
#undef VAL

size_t dx_fact_extractor_count(void) { return DX_ARRAY_LEN(extractors); }

const dx_signal *dx_fact_extractor_signal(size_t i) { return &extractors[i].sig; }

/* Package name as a fact prefix: lower case, '-' as '_', aliases for distribution names. */
static size_t norm_pkg(dx_str pkg, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < pkg.n && n + 1 < cap; i++) {
        char c = pkg.p[i];
        out[n++] = c == '-' ? '_' : (char)tolower((unsigned char)c);
    }
    out[n] = '\0';
    if (!strncmp(out, "nvidia_nccl_cu", 14))
        n = (size_t)snprintf(out, cap, "nccl");
    else if (!strcmp(out, "pytorch"))
        n = (size_t)snprintf(out, cap, "torch");
    else if (!strcmp(out, "pytorch_lightning"))
        n = (size_t)snprintf(out, cap, "lightning");
    return n;
}

/* Expands a template: "{cap}" is replaced by that capture ("{pkg}" normalised). Returns the
 * length written, or 0 when a capture is missing or the result does not fit. */
static size_t expand(const char *tmpl, struct dx_scan *s, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = tmpl; *p;) {
        if (n + 1 >= cap)
            return 0;
        if (*p != '{') {
            out[n++] = *p++;
            continue;
        }
        const char *end = strchr(p, '}');
        if (!end)
            return 0;
        char cname[32];
        size_t cl =
            (size_t)(end - p - 1) < sizeof cname - 1 ? (size_t)(end - p - 1) : sizeof cname - 1;
        memcpy(cname, p + 1, cl);
        cname[cl] = '\0';
        dx_str v;
        if (!dx_scan_capture(s, cname, &v))
            return 0;
        char tmp[64];
        if (!strcmp(cname, "pkg"))
            norm_pkg(v, tmp, sizeof tmp);
        else
            snprintf(tmp, sizeof tmp, "%.*s", (int)v.n, v.p);
        n += (size_t)snprintf(out + n, cap - n, "%s", tmp);
        if (n >= cap)
            return 0;
        p = end + 1;
    }
    out[n] = '\0';
    return n;
}

int dx_fact_extract(size_t i, struct dx_scan *s, dx_facts *f, const char *path, uint64_t line)
{
    if (i >= DX_ARRAY_LEN(extractors))
        return DDX_OK;
    const extractor *x = &extractors[i];
    char name[160], value[160];
    if (!expand(x->fact, s, name, sizeof name))
        return DDX_OK;
    if (x->value) {
        size_t n = expand(x->value, s, value, sizeof value);
        return n ? dx_facts_set(f, name, value, n, path, line) : DDX_OK;
    }
    dx_str v;
    if (!dx_scan_capture(s, "v", &v))
        return DDX_OK;
    return dx_facts_set(f, name, v.p, v.n, path, line);
}

/* ==== config files ========================================================================= */

/* The JSON text being read, for the line numbers jansson does not keep. */
typedef struct json_src {
    const char *text;
    size_t len;
    const char *path;
} json_src;

/* Offset of the member name "key" (followed by ':') at or after from; len when absent. */
static size_t json_key_at(const json_src *j, size_t from, const char *key)
{
    size_t kl = strlen(key);
    for (size_t i = from; i + kl + 2 <= j->len; i++) {
        if (j->text[i] != '"' || memcmp(j->text + i + 1, key, kl) || j->text[i + kl + 1] != '"')
            continue;
        size_t k = i + kl + 2;
        while (k < j->len && isspace((unsigned char)j->text[k]))
            k++;
        if (k < j->len && j->text[k] == ':')
            return i;
    }
    return j->len;
}

/* Line of the last of the nested member names keys[0].keys[1]..., searched in turn; 0 when one
 * is not found. */
static uint64_t json_line(const json_src *j, const char *const *keys, size_t nkeys)
{
    size_t at = 0;
    for (size_t k = 0; k < nkeys; k++)
        if ((at = json_key_at(j, at, keys[k])) >= j->len)
            return 0;
    uint64_t line = 1;
    for (size_t i = 0; i < at; i++)
        line += j->text[i] == '\n';
    return line;
}

/* Sets name from the JSON value at the path of member names keys (the value v). */
static void json_fact(dx_facts *f, const char *name, json_t *v, const json_src *j,
                      const char *const *keys, size_t nkeys)
{
    char buf[64];
    if (!v)
        return;
    uint64_t line = json_line(j, keys, nkeys);
    if (json_is_string(v))
        dx_facts_set(f, name, json_string_value(v), strlen(json_string_value(v)), j->path, line);
    else if (json_is_integer(v)) {
        int n = snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        dx_facts_set(f, name, buf, (size_t)n, j->path, line);
    } else if (json_is_real(v)) {
        int n = snprintf(buf, sizeof buf, "%g", json_real_value(v));
        dx_facts_set(f, name, buf, (size_t)n, j->path, line);
    } else if (json_is_boolean(v))
        dx_facts_set(f, name, json_is_true(v) ? "true" : "false", json_is_true(v) ? 4 : 5, j->path,
                     line);
}

#define JSON_FACT(f, name, v, j, ...)                                                              \
    json_fact(f, name, v, j, (const char *const[]){__VA_ARGS__},                                   \
              sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))

/* Keys of accelerate / FSDP / DeepSpeed YAML configs and the facts they give. A key is the
 * dotted path of mapping keys from the document's root. */
static const struct {
    const char *key;
    const char *fact;
} yaml_keys[] = {
    {"distributed_type", "accelerate.distributed_type"},
    {"mixed_precision", "accelerate.mixed_precision"},
    {"num_processes", "accelerate.num_processes"},
    {"num_machines", "launcher.nnodes"},
    {"main_process_port", "launcher.master_port"},
    {"main_process_ip", "launcher.master_addr"},
    {"deepspeed_config.zero_stage", "deepspeed.zero_stage"},
    {"deepspeed_config.offload_optimizer_device", "deepspeed.offload_optimizer"},
    {"deepspeed_config.offload_param_device", "deepspeed.offload_param"},
    {"deepspeed_config.zero3_init_flag", "deepspeed.zero3_init"},
    {"deepspeed_config.gradient_accumulation_steps", "deepspeed.gradient_accumulation_steps"},
    {"fsdp_config.fsdp_sharding_strategy", "fsdp.sharding_strategy"},
    {"fsdp_config.fsdp_offload_params", "fsdp.cpu_offload"},
    {"fsdp_config.fsdp_auto_wrap_policy", "fsdp.auto_wrap_policy"},
    {"fsdp_config.fsdp_use_orig_params", "fsdp.use_orig_params"},
    {"fsdp_config.fsdp_version", "fsdp.version"},
    {"fsdp_config.fsdp_activation_checkpointing", "fsdp.activation_checkpointing"},
    {"fsdp_config.fsdp_transformer_layer_cls_to_wrap", "fsdp.transformer_layer_cls"},
    {"fsdp_config.fsdp_cpu_ram_efficient_loading", "fsdp.cpu_ram_efficient_loading"},
    {"fsdp_config.fsdp_state_dict_type", "fsdp.state_dict_type"},
    {"fsdp_config.fsdp_backward_prefetch", "fsdp.backward_prefetch"},
    {"fsdp_config.fsdp_backward_prefetch_policy", "fsdp.backward_prefetch"},
    {"fsdp_config.fsdp_reshard_after_forward", "fsdp.reshard_after_forward"},
    /* NeMo / Megatron YAML (the model section, or a flat file) */
    {"model.tensor_model_parallel_size", "megatron.tensor_model_parallel_size"},
    {"tensor_model_parallel_size", "megatron.tensor_model_parallel_size"},
    {"model.sequence_parallel", "megatron.sequence_parallel"},
    {"sequence_parallel", "megatron.sequence_parallel"},
};

/* An environment variable set in a YAML config: Ray's runtime_env ("env_vars: {NCCL_DEBUG:
 * INFO}", alone or under runtime_env:), as verl, OpenRLHF and EasyR1 jobs pass them. The name is
 * the last key after an "env_vars" component, in the shell's form (upper case, digits, _). */
static const char *yaml_env_name(const char *key)
{
    const char *p = key;
    while ((p = strstr(p, "env_vars."))) {
        if (p == key || p[-1] == '.') {
            const char *name = p + strlen("env_vars.");
            if (!isupper((unsigned char)*name) && *name != '_')
                return NULL; /* also "" (a shell name starts with a letter or _) */
            for (const char *c = name; *c; c++)
                if (!isupper((unsigned char)*c) && !isdigit((unsigned char)*c) && *c != '_')
                    return NULL;
            return name;
        }
        p++;
    }
    return NULL;
}

/* Mapping pairs yaml_walk visits in one document at most: aliases can make a small document a
 * tree of billions of paths (each alias of a mapping of aliases is walked again). */
#define YAML_VISITS_MAX 100000

static void yaml_walk(yaml_document_t *doc, yaml_node_t *n, char *key, size_t klen, dx_facts *f,
                      const char *path, int depth, size_t *visits)
{
    if (!n || depth > 8 || ++*visits > YAML_VISITS_MAX)
        return;
    if (n->type == YAML_SCALAR_NODE) {
        const char *sv = (const char *)n->data.scalar.value;
        if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
            (!strcmp(sv, "null") || !strcmp(sv, "Null") || !strcmp(sv, "NULL") || !strcmp(sv, "~")))
            return; /* "main_process_ip: null" sets nothing */
        const char *env = yaml_env_name(key);
        if (env) {
            char name[160];
            snprintf(name, sizeof name, "env.%s", env);
            dx_facts_set(f, name, sv, n->data.scalar.length, path, n->start_mark.line + 1);
            return;
        }
        for (size_t i = 0; i < DX_ARRAY_LEN(yaml_keys); i++)
            if (!strcmp(yaml_keys[i].key, key)) {
                dx_facts_set(f, yaml_keys[i].fact, (const char *)n->data.scalar.value,
                             n->data.scalar.length, path, n->start_mark.line + 1);
                if (!strcmp(key, "distributed_type")) {
                    const char *v = (const char *)n->data.scalar.value;
                    if (!strcmp(v, "FSDP"))
                        dx_facts_set(f, "fsdp.enabled", "true", 4, path, n->start_mark.line + 1);
                    else if (!strcmp(v, "DEEPSPEED"))
                        dx_facts_set(f, "deepspeed.enabled", "true", 4, path,
                                     n->start_mark.line + 1);
                }
            }
        return;
    }
    if (n->type != YAML_MAPPING_NODE)
        return;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        if (!k || k->type != YAML_SCALAR_NODE)
            continue;
        size_t add = k->data.scalar.length + (klen ? 1 : 0);
        if (klen + add + 1 > 256)
            continue;
        if (klen)
            key[klen] = '.';
        memcpy(key + klen + (klen ? 1 : 0), k->data.scalar.value, k->data.scalar.length);
        key[klen + add] = '\0';
        yaml_walk(doc, yaml_document_get_node(doc, p->value), key, klen + add, f, path, depth + 1,
                  visits);
        key[klen] = '\0';
    }
}

static int facts_from_yaml(dx_facts *f, const char *path, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return DDX_ENOMEM;
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (yaml_parser_load(&parser, &doc)) {
        char key[256] = "";
        size_t visits = 0;
        yaml_walk(&doc, yaml_document_get_root_node(&doc), key, 0, f, path, 0, &visits);
        yaml_document_delete(&doc);
    }
    yaml_parser_delete(&parser);
    return DDX_OK;
}

size_t dx_nesting_depth(const char *text, size_t len, size_t max, size_t *line)
{
    size_t depth = 0, deepest = 0, lineno = 1, at = 0;
    /* indentation: the indents of the enclosing lines, kept as a stack (at most max + 1) */
    size_t indent[DX_CONFIG_DEPTH + 2],
        nind = 0, cap = max + 2 < DX_ARRAY_LEN(indent) ? max + 2 : DX_ARRAY_LEN(indent);
    int bol = 1; /* at the beginning of a line */
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (bol) {
            size_t k = i;
            while (k < len && text[k] == ' ')
                k++;
            bol = 0;
            if (k < len && text[k] != '\n' && text[k] != '\r' && text[k] != '#') {
                size_t ind = k - i;
                while (nind && indent[nind - 1] >= ind)
                    nind--;
                if (nind < cap)
                    indent[nind++] = ind;
            }
        }
        if (c == '\n') {
            lineno++;
            bol = 1;
        } else if (c == '"' || c == '\'') {
            /* a quoted string, to its end on the same line (YAML's and JSON's escapes) */
            for (i++; i < len && text[i] != c && text[i] != '\n'; i++)
                if (c == '"' && text[i] == '\\')
                    i++;
            if (i < len && text[i] == '\n') {
                lineno++;
                bol = 1;
            }
        } else if (c == '[' || c == '{') {
            depth++;
        } else if ((c == ']' || c == '}') && depth) {
            depth--;
        }
        size_t d = (depth > nind ? depth : nind);
        if (d > deepest) {
            deepest = d;
            at = lineno;
            if (deepest > max)
                break;
        }
    }
    if (line)
        *line = at;
    return deepest;
}

int dx_facts_from_config(dx_facts *f, const char *path, const char *text, size_t len,
                         ddx_error *err)
{
    size_t line;
    if (dx_nesting_depth(text, len, DX_CONFIG_DEPTH, &line) > DX_CONFIG_DEPTH)
        return dx_err(err, DDX_EFORMAT,
                      "%s:%zu: nested deeper than %d levels; not read as a config (real "
                      "configs nest a few levels; its lines are still read)",
                      path, line, DX_CONFIG_DEPTH);
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return facts_from_yaml(f, path, text, len);
    }
    json_src j = {text, len, path};
    json_t *zero = json_object_get(root, "zero_optimization");
    if (zero) {
        dx_facts_set(f, "deepspeed.enabled", "true", 4, path,
                     json_line(&j, (const char *const[]){"zero_optimization"}, 1));
        JSON_FACT(f, "deepspeed.zero_stage", json_object_get(zero, "stage"), &j,
                  "zero_optimization", "stage");
        json_t *oo = json_object_get(zero, "offload_optimizer");
        json_t *op = json_object_get(zero, "offload_param");
        JSON_FACT(f, "deepspeed.offload_optimizer", oo ? json_object_get(oo, "device") : NULL, &j,
                  "zero_optimization", "offload_optimizer", "device");
        JSON_FACT(f, "deepspeed.offload_param", op ? json_object_get(op, "device") : NULL, &j,
                  "zero_optimization", "offload_param", "device");
        /* with no "optimizer" section the training script's own optimizer is used (a client
         * optimizer, in DeepSpeed's words) */
        json_t *opt = json_object_get(root, "optimizer");
        json_t *type = opt ? json_object_get(opt, "type") : NULL;
        if (json_is_string(type))
            JSON_FACT(f, "deepspeed.optimizer", type, &j, "optimizer", "type");
        else if (!opt)
            dx_facts_set(f, "deepspeed.optimizer", "client", 6, path,
                         json_line(&j, (const char *const[]){"zero_optimization"}, 1));
        JSON_FACT(f, "deepspeed.zero_force_ds_cpu_optimizer",
                  json_object_get(root, "zero_force_ds_cpu_optimizer"), &j,
                  "zero_force_ds_cpu_optimizer");
    }
    json_t *fp16 = json_object_get(root, "fp16");
    json_t *bf16 = json_object_get(root, "bf16");
    JSON_FACT(f, "deepspeed.fp16", fp16 ? json_object_get(fp16, "enabled") : NULL, &j, "fp16",
              "enabled");
    JSON_FACT(f, "deepspeed.bf16", bf16 ? json_object_get(bf16, "enabled") : NULL, &j, "bf16",
              "enabled");
    JSON_FACT(f, "deepspeed.train_batch_size", json_object_get(root, "train_batch_size"), &j,
              "train_batch_size");
    JSON_FACT(f, "deepspeed.train_micro_batch_size_per_gpu",
              json_object_get(root, "train_micro_batch_size_per_gpu"), &j,
              "train_micro_batch_size_per_gpu");
    JSON_FACT(f, "deepspeed.gradient_accumulation_steps",
              json_object_get(root, "gradient_accumulation_steps"), &j,
              "gradient_accumulation_steps");
    json_decref(root);
    return DDX_OK;
}

/* ==== which facts exist ==================================================================== */

/* Facts set by code rather than by a row of the tables above: the accelerate YAML and DeepSpeed
 * JSON readers, and dx_facts_derive. */
static const char *const code_facts[] = {"fsdp.enabled",
                                         "deepspeed.enabled",
                                         "deepspeed.zero_stage",
                                         "deepspeed.offload_optimizer",
                                         "deepspeed.offload_param",
                                         "deepspeed.optimizer",
                                         "deepspeed.zero_force_ds_cpu_optimizer",
                                         "deepspeed.fp16",
                                         "deepspeed.bf16",
                                         "deepspeed.train_batch_size",
                                         "deepspeed.train_micro_batch_size_per_gpu",
                                         "deepspeed.gradient_accumulation_steps",
                                         "nccl.timeout_s",
                                         "fsdp.version",
                                         "fsdp.mixed_precision"};

/* Can a template's variable ("{pkg}", "{name}", "{r}") take the value seg (n bytes)? */
static int variable_fits(const char *var, size_t vn, const char *seg, size_t n)
{
    char v[64];
    if (!n || n >= sizeof v)
        return 0;
    memcpy(v, seg, n);
    v[n] = '\0';
    if (vn == 3 && !memcmp(var, "pkg", 3))
        return regex_matches("^(?:" PKGS ")$", v);
    if (vn == 4 && !memcmp(var, "name", 4))
        return regex_matches("^(?:" ENVNAMES "|[A-Z_][A-Z0-9_]*)$", v);
    return regex_matches("^\\d+$", v);
}

/* Does name fit the fact template tmpl ("{pkg}.version", "nccl.rank.{r}.host")? A variable
 * stands for one dot-free part of the name. */
static int fits_template(const char *tmpl, const char *name)
{
    while (*tmpl) {
        if (*tmpl != '{') {
            if (*tmpl++ != *name++)
                return 0;
            continue;
        }
        const char *close = strchr(tmpl, '}');
        const char *dot = strchr(name, '.');
        size_t n = dot ? (size_t)(dot - name) : strlen(name);
        if (!close || !variable_fits(tmpl + 1, (size_t)(close - tmpl - 1), name, n))
            return 0;
        tmpl = close + 1;
        name += n;
    }
    return *name == '\0';
}

int dx_fact_known(const char *name)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(extractors); i++)
        if (fits_template(extractors[i].fact, name))
            return 1;
    for (size_t i = 0; i < DX_ARRAY_LEN(yaml_keys); i++)
        if (!strcmp(yaml_keys[i].fact, name))
            return 1;
    for (size_t i = 0; i < DX_ARRAY_LEN(code_facts); i++)
        if (!strcmp(code_facts[i], name))
            return 1;
    return fits_template("env.{name}", name); /* env dumps, YAML env_vars */
}
