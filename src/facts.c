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

/* ==== the store ============================================================================ */

dx_fact *dx_facts_get(const dx_facts *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (!strcmp(f->v[i].name, name))
            return &f->v[i];
    return NULL;
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
    if (dx_grow((void **)&f->v, &f->cap, f->n + 1, sizeof(dx_fact)) != DDX_OK)
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
    f->n++;
    return DDX_OK;
}

void dx_facts_fini(dx_facts *f)
{
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

int dx_cond_eval(const dx_cond *c, dx_facts *f, dx_fact **used)
{
    dx_fact *x = c->fact ? dx_facts_get(f, c->fact) : NULL;
    if (used)
        *used = x;
    if (c->op == DX_OP_EXISTS) {
        int want = 1;
        truthy(c->value ? c->value : "true", &want);
        if (x)
            x->used = 1;
        return (x != NULL) == want;
    }
    if (!x)
        return -1;
    x->used = 1;
    switch (c->op) {
    case DX_OP_RANGE:
        return dx_version_in_range(x->value, c->value);
    case DX_OP_MATCHES: {
        /* a plain substring test keeps this cheap; regexes are not needed for facts so far */
        return strstr(x->value, c->value) != NULL;
    }
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

/* Each row: an id, a pattern with named captures, and for each capture the fact it sets.
 * A capture named "v" sets the row's fact. Issue-sized list; docs/facts.md documents it. */
typedef struct extractor {
    dx_signal sig;
    const char *fact;
} extractor;

#define ROW(id_, pat, fact_) {{id_, DX_ROLE_NOISE, 0, pat, NULL, 0}, fact_}
static const extractor extractors[] = {
    ROW("pip-torch", "^torch[ =]=*\\s*(?<v>[0-9][0-9A-Za-z.+]*)\\s*$", "torch.version"),
    ROW("collect-env-torch", "^PyTorch version: (?<v>[0-9][0-9A-Za-z.+]*)", "torch.version"),
    ROW("pip-deepspeed", "^deepspeed[ =]=*\\s*(?<v>[0-9][0-9A-Za-z.+]*)\\s*$", "deepspeed.version"),
    ROW("ds-report-version", "deepspeed info \\.+ (?<v>[0-9][0-9A-Za-z.+]*)", "deepspeed.version"),
    ROW("pip-transformers", "^transformers[ =]=*\\s*(?<v>[0-9][0-9A-Za-z.+]*)\\s*$",
        "transformers.version"),
    ROW("pip-accelerate", "^accelerate[ =]=*\\s*(?<v>[0-9][0-9A-Za-z.+]*)\\s*$",
        "accelerate.version"),
    ROW("pip-bitsandbytes", "^bitsandbytes[ =]=*\\s*(?<v>[0-9][0-9A-Za-z.+]*)\\s*$",
        "bitsandbytes.version"),
    ROW("nccl-version", "NCCL version (?<v>\\d+\\.\\d+\\.\\d+)", "nccl.version"),
    ROW("timeout-ms", "Timeout\\(ms\\)=(?<v>\\d+)", "nccl.timeout_ms"),
    ROW("cuda-runtime", "^CUDA used to build PyTorch: (?<v>\\d+\\.\\d+)", "cuda.version"),
};
#undef ROW

size_t dx_fact_extractor_count(void) { return DX_ARRAY_LEN(extractors); }

const dx_signal *dx_fact_extractor_signal(size_t i) { return &extractors[i].sig; }

int dx_fact_extract(size_t i, struct dx_scan *s, dx_facts *f, const char *path, uint64_t line)
{
    dx_str v;
    if (i >= DX_ARRAY_LEN(extractors) || !dx_scan_capture(s, "v", &v))
        return DDX_OK;
    return dx_facts_set(f, extractors[i].fact, v.p, v.n, path, line);
}

/* ==== config files ========================================================================= */

static void json_fact(dx_facts *f, const char *name, json_t *v, const char *path)
{
    char buf[64];
    if (!v)
        return;
    if (json_is_string(v))
        dx_facts_set(f, name, json_string_value(v), strlen(json_string_value(v)), path, 0);
    else if (json_is_integer(v)) {
        int n = snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(v));
        dx_facts_set(f, name, buf, (size_t)n, path, 0);
    } else if (json_is_real(v)) {
        int n = snprintf(buf, sizeof buf, "%g", json_real_value(v));
        dx_facts_set(f, name, buf, (size_t)n, path, 0);
    } else if (json_is_boolean(v))
        dx_facts_set(f, name, json_is_true(v) ? "true" : "false", json_is_true(v) ? 4 : 5, path,
                     0);
}

int dx_facts_from_config(dx_facts *f, const char *path, const char *text, size_t len)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root || !json_is_object(root)) {
        json_decref(root);
        return DDX_OK; /* YAML configs: read by the config extractors (issue: facts) */
    }
    json_t *zero = json_object_get(root, "zero_optimization");
    if (zero) {
        json_fact(f, "deepspeed.zero_stage", json_object_get(zero, "stage"), path);
        json_t *oo = json_object_get(zero, "offload_optimizer");
        json_t *op = json_object_get(zero, "offload_param");
        json_fact(f, "deepspeed.offload_optimizer", oo ? json_object_get(oo, "device") : NULL,
                  path);
        json_fact(f, "deepspeed.offload_param", op ? json_object_get(op, "device") : NULL, path);
    }
    json_t *fp16 = json_object_get(root, "fp16");
    json_t *bf16 = json_object_get(root, "bf16");
    json_fact(f, "deepspeed.fp16", fp16 ? json_object_get(fp16, "enabled") : NULL, path);
    json_fact(f, "deepspeed.bf16", bf16 ? json_object_get(bf16, "enabled") : NULL, path);
    json_fact(f, "deepspeed.train_batch_size", json_object_get(root, "train_batch_size"), path);
    json_fact(f, "deepspeed.train_micro_batch_size_per_gpu",
              json_object_get(root, "train_micro_batch_size_per_gpu"), path);
    json_fact(f, "deepspeed.gradient_accumulation_steps",
              json_object_get(root, "gradient_accumulation_steps"), path);
    json_decref(root);
    return DDX_OK;
}
