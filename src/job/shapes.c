/* shapes.c -- tensor sizes in shape errors that betray a sharding mismatch.
 *
 * Readings:
 *   view-shape   a view() whose shape asks for exactly k times the elements its tensor holds: a
 *                1/k shard viewed with the full size
 *   shard-sizes  two flat sizes of one parameter where one is k times the other up to FSDP's
 *                padding: shards written by one world size and read by another
 *   param-shard  load_state_dict's size mismatches that are all partitions of one tensor (one
 *                dimension k times the other's, or the same elements split another way): a
 *                checkpoint saved with another tensor- or model-parallel size
 */
#include "job.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ==== view-shape ============================================================================ */

static const dx_reading_fact vs_facts[] = {
    {"job.view_shard", "int",
     "k, when a view()/reshape() refused a shape whose elements are exactly k (2 to 64) times the "
     "size of the tensor it was given (\"shape '[1, 21, 32, 128]' is invalid for input of size "
     "43008\" is k = 2; with a -1 dimension, the known dimensions' product over the size): a 1/k "
     "shard viewed with the full size"},
};

/* torch's view()/reshape() refusing a shape: "shape '[1, 21, 32, 128]' is invalid for input of
 * size 43008" (one dimension may be -1, inferred) */
static const dx_signal vs_patterns[] = {
    {"job-view-size", DX_ROLE_NOISE, 0,
     "shape '\\[(?<dims>-?\\d+(?:, -?\\d+){1,7})\\]' is invalid for input of "
     "size (?<n>\\d+)",
     "aten/src/ATen/InferSize.h (infer_size_impl: \"shape '[...]' is invalid for "
     "input of size N\")",
     0},
};

typedef struct vs_state {
    int k; /* 0 none */
    char shape[64];
} vs_state;

/* The product of the dimensions of "a, b, -1, c" (one -1 at most); 0 when not a shape. */
static long long dims_product(char *dims)
{
    long long prod = 1;
    int infer = 0;
    for (char *p = dims, *e; *p; p = e) {
        while (*p == ',' || *p == ' ')
            p++;
        long long v = strtoll(p, &e, 10);
        if (e == p || v > (INT64_C(1) << 40))
            return 0;
        if (v < 0) {
            if (v != -1 || infer++)
                return 0;
        } else if (v == 0 || prod > (INT64_C(1) << 50) / v) {
            return 0;
        } else {
            prod *= v;
        }
    }
    return prod;
}

/* A view that asks for exactly k times the elements its tensor holds (k from 2 to 64): every
 * stated dimension fits the full model but the tensor is a 1/k shard, as when attention heads are
 * split k ways by tensor parallelism and the view still counts them all. With an inferred (-1)
 * dimension the known dimensions' product is then k times the size: a fraction of one head. */
static int vs_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    vs_state *st = stp;
    dx_str d;
    char dims[128];
    long long n = dx_hit_ll(h, "n", -1);
    if (st->k || n <= 0 || !dx_hit_str(h, "dims", &d) || !d.n || d.n >= sizeof dims)
        return DDX_OK;
    memcpy(dims, d.p, d.n);
    dims[d.n] = 0;
    long long prod = dims_product(dims);
    if (prod <= n || prod % n)
        return DDX_OK;
    long long k = prod / n;
    if (k < 2 || k > 64)
        return DDX_OK;
    st->k = (int)k;
    snprintf(st->shape, sizeof st->shape, "[%.*s]",
             (int)(d.n < sizeof st->shape - 3 ? d.n : sizeof st->shape - 3), d.p);
    return DDX_OK;
}

static int vs_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const vs_state *st = stp;
    if (!st->k)
        return DDX_OK;
    char why[160];
    snprintf(why, sizeof why, "the view shape %s asks for %d times the elements its tensor holds",
             st->shape, st->k);
    return dx_job_fact(f, "job.view_shard", why, "%d", st->k);
}

const dx_reading dx_reading_view_shape = {
    .name = "view-shape",
    .doc = "a view() or reshape() refusing a shape that asks for exactly k times the elements of "
           "its tensor: a 1/k shard viewed with the full size",
    .facts = vs_facts,
    .nfacts = DX_ARRAY_LEN(vs_facts),
    .patterns = vs_patterns,
    .npatterns = DX_ARRAY_LEN(vs_patterns),
    .state_size = sizeof(vs_state),
    .on_hit = vs_hit,
    .publish = vs_publish,
};

/* ==== shard-sizes =========================================================================== */

static const dx_reading_fact ss_facts[] = {
    {"job.shard_ratio", "int",
     "k, when a failed elementwise op names two 1-D sizes of 10^4 elements or more (\"The size of "
     "tensor a (A) must match the size of tensor b (B) at non-singleton dimension 0\") and the "
     "larger is k (2 to 64) times the smaller, less than k short (FSDP pads a flat parameter to a "
     "multiple of the world size): flat shards written by one number of ranks and read by k times "
     "as many or as few"},
};

/* an elementwise op on two 1-D tensors of different sizes (an optimizer step or a load combining
 * a saved flat shard with a new one) */
static const dx_signal ss_patterns[] = {
    {"job-shard-sizes", DX_ROLE_NOISE, 0,
     "The size of tensor a \\((?<a>\\d{5,})\\) must match the size of tensor "
     "b \\((?<b>\\d{5,})\\) at non-singleton dimension 0",
     "aten/src/ATen/ExpandUtils.cpp (infer_size_impl: \"The size of tensor a "
     "(A) must match the size of tensor b (B) at non-singleton dimension D\")",
     0},
};

typedef struct ss_state {
    int k; /* 0 none */
    char sizes[64];
} ss_state;

/* Two flat shards of one parameter group from different world sizes: FSDP pads a flat parameter
 * to a multiple of the world size and gives each rank ceil(N / W) elements, so a shard from W
 * ranks is k times one from k*W ranks, less than k elements short. Sizes of 10^4 elements and up
 * (the dimension-0 size of a whole flat shard, not of a layer). */
static int ss_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    ss_state *st = stp;
    long long a = dx_hit_ll(h, "a", -1), b = dx_hit_ll(h, "b", -1);
    if (st->k || a < 10000 || b < 10000 || a == b)
        return DDX_OK;
    long long big = a > b ? a : b, small = a > b ? b : a;
    long long k = (big + small / 2) / small;
    if (k < 2 || k > 64 || llabs(big - k * small) >= k)
        return DDX_OK;
    st->k = (int)k;
    snprintf(st->sizes, sizeof st->sizes, "%lld and %lld", a, b);
    return DDX_OK;
}

static int ss_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const ss_state *st = stp;
    if (!st->k)
        return DDX_OK;
    char why[300];
    snprintf(why, sizeof why,
             "a size mismatch of %s elements, one %d times the other up to padding: flat shards "
             "written by one number of ranks and read by %d times as many (or as few)",
             st->sizes, st->k, st->k);
    return dx_job_fact(f, "job.shard_ratio", why, "%d", st->k);
}

const dx_reading dx_reading_shard_sizes = {
    .name = "shard-sizes",
    .doc = "two flat sizes of one parameter, one k times the other up to FSDP's padding: shards "
           "written by one world size and read by another",
    .facts = ss_facts,
    .nfacts = DX_ARRAY_LEN(ss_facts),
    .patterns = ss_patterns,
    .npatterns = DX_ARRAY_LEN(ss_patterns),
    .state_size = sizeof(ss_state),
    .on_hit = ss_hit,
    .publish = ss_publish,
};

/* ==== param-shard =========================================================================== */

static const dx_reading_fact ps_facts[] = {
    {"job.param_shard", "int",
     "k, when load_state_dict's size mismatches ('size mismatch for NAME: copying a param with "
     "shape torch.Size([..]) from checkpoint, the shape in current model is torch.Size([..])') "
     "are all partitions of one tensor: the same number of dimensions, and either exactly one "
     "dimension differs, one k (2 to 64) times the other, or the same elements are split another "
     "way (k is then the larger ratio of one dimension); a mismatch of any other kind (two "
     "dimensions grown, a size that is no multiple, an empty placeholder) sets nothing: a model "
     "of another size, not another partition"},
};

/* torch's load_state_dict size check (one line per parameter) */
static const dx_signal ps_patterns[] = {
    {"job-param-size-mismatch", DX_ROLE_NOISE, 0,
     "size mismatch for (?<name>[^\\s:]+): copying a param with shape "
     "torch\\.Size\\(\\[(?<ck>[0-9, ]*)\\]\\) from checkpoint, the shape in current model "
     "is torch\\.Size\\(\\[(?<cur>[0-9, ]*)\\]\\)",
     "torch/nn/modules/module.py (Module._load_from_state_dict: 'size mismatch for {}: copying "
     "a param with shape {} from checkpoint, the shape in current model is {}.')",
     0},
};

typedef struct ps_state {
    int k;     /* the first partition's factor, 0 none */
    int other; /* a mismatch that is no partition was read */
    char why[240];
} ps_state;

/* The dimensions of "a, b, c" into d (at most 8); their number, -1 when not a shape. */
static int ps_dims(const dx_hit *h, const char *cap, long long *d)
{
    dx_str s;
    char buf[96];
    if (!dx_hit_str(h, cap, &s) || s.n >= sizeof buf)
        return -1;
    memcpy(buf, s.p, s.n);
    buf[s.n] = 0;
    int n = 0;
    for (char *p = buf, *e; *p; p = e) {
        while (*p == ',' || *p == ' ')
            p++;
        if (!*p)
            break;
        long long v = strtoll(p, &e, 10);
        if (e == p || n == 8 || v <= 0 || v > (INT64_C(1) << 40))
            return -1; /* an empty dimension (ZeRO-3's placeholder) is no partition */
        d[n++] = v;
    }
    return n;
}

/* k when the shapes a and b (n dimensions each) are two partitions of one tensor, 0 when not. */
static long long ps_partition(const long long *a, const long long *b, int n)
{
    int differ = 0;
    long long k = 0, na = 1, nb = 1;
    for (int i = 0; i < n; i++) {
        na *= a[i];
        nb *= b[i];
        if (a[i] == b[i])
            continue;
        long long big = a[i] > b[i] ? a[i] : b[i], small = a[i] > b[i] ? b[i] : a[i];
        if (big % small)
            return 0;
        differ++;
        k = big / small > k ? big / small : k;
    }
    if (k < 2 || k > 64)
        return 0;
    return differ == 1 || (differ >= 2 && na == nb) ? k : 0;
}

static int ps_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    (void)jm;
    (void)row;
    ps_state *st = stp;
    long long a[8], b[8];
    int na = ps_dims(h, "ck", a), nb = ps_dims(h, "cur", b);
    long long k = na > 0 && na == nb ? ps_partition(a, b, na) : 0;
    if (!k) {
        st->other = 1;
        return DDX_OK;
    }
    if (st->k)
        return DDX_OK;
    st->k = (int)k;
    dx_str name, ck, cur;
    dx_hit_str(h, "name", &name);
    dx_hit_str(h, "ck", &ck);
    dx_hit_str(h, "cur", &cur);
    snprintf(st->why, sizeof st->why,
             "%.*s is [%.*s] in the checkpoint and [%.*s] in the model: the same tensor cut %lld "
             "ways differently",
             (int)(name.n < 80 ? name.n : 80), name.p, (int)(ck.n < 40 ? ck.n : 40), ck.p,
             (int)(cur.n < 40 ? cur.n : 40), cur.p, k);
    return DDX_OK;
}

static int ps_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const ps_state *st = stp;
    if (!st->k || st->other)
        return DDX_OK;
    return dx_job_fact(f, "job.param_shard", st->why, "%d", st->k);
}

const dx_reading dx_reading_param_shard = {
    .name = "param-shard",
    .doc = "load_state_dict's size mismatches that are all partitions of one tensor (one "
           "dimension k times the other's, or the same elements split another way): a checkpoint "
           "saved with another tensor- or model-parallel size",
    .facts = ps_facts,
    .nfacts = DX_ARRAY_LEN(ps_facts),
    .patterns = ps_patterns,
    .npatterns = DX_ARRAY_LEN(ps_patterns),
    .state_size = sizeof(ps_state),
    .on_hit = ps_hit,
    .publish = ps_publish,
};
