/* ras.c -- NCCL's RAS report: the model of its communicators, ranks and processes, the reader of
 * its JSON form, and the verdict (see ras.h).
 *
 * The JSON form (NCCL 2.29+, src/ras/client_support.cc: jsonWriteHeader .. jsonWriteFooter) is
 * {"nccl_version", "cuda_runtime_version", "cuda_driver_version", "timestamp",
 * "communicators_count", "communicators": [{"hash", "secondary_hash", "size", "ranks_count",
 * "missing_ranks_count", "ranks": [{"rank", "host", "pid", "cuda_dev", "nvml_dev", "status":
 * {"init_state", "async_error", "finalize_called", "destroy_flag", "abort_flag"},
 * "collective_counts": {"Broadcast": n, "AllReduce": n, ...}}], "missing_ranks": [{"rank",
 * "host", "pid", "cuda_dev", "nvml_dev", "status": {"unresponsive", "considered_dead"}}]}],
 * "ras": {"collection_time_sec", "timeouts_count"}}; init_state and async_error are ncclResult_t
 * codes (0 success, 7 in progress). The text form is read by the reading nccl-ras.
 */
#include "ras.h"

#include <jansson.h>

static void copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = 0;
}

void dx_ras_fini(dx_ras *r)
{
    for (size_t i = 0; i < r->ncomms; i++)
        dx_free(r->comms[i].ranks);
    dx_free(r->comms);
    dx_free(r->procs);
    memset(r, 0, sizeof *r);
}

dx_ras_comm *dx_ras_comm_get(dx_ras *r, const char *hash, size_t n, int *oom)
{
    char h[24];
    copy(h, sizeof h, hash, n);
    if (h[0] == '0' && (h[1] == 'x' || h[1] == 'X'))
        memmove(h, h + 2, strlen(h + 2) + 1);
    for (size_t i = 0; i < r->ncomms; i++)
        if (!strcmp(r->comms[i].hash, h))
            return &r->comms[i];
    if (r->ncomms >= DX_RAS_MAX_COMMS)
        return NULL;
    if (dx_grow((void **)&r->comms, &r->capcomms, r->ncomms + 1, sizeof *r->comms)) {
        *oom = 1;
        return NULL;
    }
    dx_ras_comm *c = &r->comms[r->ncomms++];
    memset(c, 0, sizeof *c);
    memcpy(c->hash, h, sizeof h);
    c->size = -1;
    return c;
}

dx_ras_rank *dx_ras_rank_get(dx_ras_comm *c, int rank, int *oom)
{
    if (rank < 0 || rank >= DX_RAS_MAX_RANKS)
        return NULL;
    for (size_t i = 0; i < c->nranks; i++)
        if (c->ranks[i].rank == rank)
            return &c->ranks[i];
    if (dx_grow((void **)&c->ranks, &c->cap, c->nranks + 1, sizeof *c->ranks)) {
        *oom = 1;
        return NULL;
    }
    dx_ras_rank *x = &c->ranks[c->nranks++];
    memset(x, 0, sizeof *x);
    x->rank = rank;
    x->pid = x->ops = -1;
    x->cuda_dev = -1;
    return x;
}

int dx_ras_proc_add(dx_ras *r, long long pid, const char *host, size_t hn, const char *gpus,
                    size_t gn, int dead)
{
    for (size_t i = 0; i < r->nprocs; i++)
        if (r->procs[i].pid == pid && strlen(r->procs[i].host) == hn &&
            !memcmp(r->procs[i].host, host, hn)) {
            r->procs[i].dead |= dead;
            return DDX_OK;
        }
    if (r->nprocs >= DX_RAS_MAX_COMMS)
        return DDX_OK;
    if (dx_grow((void **)&r->procs, &r->capprocs, r->nprocs + 1, sizeof *r->procs))
        return DDX_ENOMEM;
    dx_ras_proc *p = &r->procs[r->nprocs++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    copy(p->host, sizeof p->host, host, hn);
    copy(p->gpus, sizeof p->gpus, gpus, gn);
    p->dead = dead;
    return DDX_OK;
}

/* ---- JSON ---- */

int dx_ras_json_head(const char *head, size_t n)
{
    return memmem(head, n, "\"communicators\"", 15) && memmem(head, n, "\"nccl_version\"", 14);
}

static long long jint(json_t *o, const char *key, long long def)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : def;
}

static void jcopy(char *dst, size_t cap, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_string(v) && strcmp(json_string_value(v), "unknown"))
        copy(dst, cap, json_string_value(v), json_string_length(v));
}

/* The ncclResult_t names NCCL's RAS client gives errors (ncclErrorToString there). */
static const char *nccl_result(long long code)
{
    static const char *const names[] = {"",
                                        "Unhandled CUDA error",
                                        "System error",
                                        "Internal error",
                                        "Invalid argument",
                                        "Invalid usage",
                                        "Remote process error",
                                        ""};
    return code > 0 && (size_t)code < DX_ARRAY_LEN(names) ? names[code]
           : code                                         ? "Unexpected error"
                                                          : "";
}

/* The one function whose counts differ most visibly: the counts of that function become ops. */
static void json_counts(dx_ras_comm *c, json_t *ranks)
{
    json_t *first = json_object_get(json_array_get(ranks, 0), "collective_counts");
    const char *key;
    json_t *v;
    json_object_foreach(first, key, v)
    {
        size_t i;
        json_t *r;
        int differ = 0;
        json_array_foreach(ranks, i, r)
        {
            json_t *x = json_object_get(json_object_get(r, "collective_counts"), key);
            differ |= !json_is_integer(x) || !json_equal(x, v);
        }
        if (!differ)
            continue;
        copy(c->func, sizeof c->func, key, strlen(key));
        json_array_foreach(ranks, i, r)
        {
            json_t *x = json_object_get(json_object_get(r, "collective_counts"), key);
            for (size_t k = 0; k < c->nranks; k++)
                if (c->ranks[k].rank == jint(r, "rank", -1) && json_is_integer(x))
                    c->ranks[k].ops = (long long)json_integer_value(x);
        }
        return;
    }
}

/* A rank record of the report (in "ranks" or "missing_ranks"): its rank, host, pid, GPU. */
static dx_ras_rank *json_rank(dx_ras_comm *c, json_t *rj, int *oom)
{
    dx_ras_rank *x = dx_ras_rank_get(c, (int)jint(rj, "rank", -1), oom);
    if (x) {
        jcopy(x->host, sizeof x->host, rj, "host");
        x->pid = jint(rj, "pid", -1);
        x->cuda_dev = (int)jint(rj, "cuda_dev", -1);
    }
    return x;
}

int dx_ras_json(dx_ras *r, const char *name, const char *text, size_t len, ddx_error *err)
{
    json_error_t je;
    json_t *root = json_loadb(text, len, 0, &je);
    if (!root)
        return dx_err(err, DDX_EFORMAT, "%s:%d: JSON: %s", name, je.line, je.text);
    json_t *comms = json_object_get(root, "communicators");
    int rc = DDX_OK, oom = 0;
    if (!json_is_array(comms)) {
        rc = dx_err(err, DDX_EFORMAT, "%s: not an NCCL RAS report (no 'communicators' list)", name);
        goto done;
    }
    r->reports++;
    size_t i;
    json_t *cj;
    json_array_foreach(comms, i, cj)
    {
        json_t *h = json_object_get(cj, "hash");
        if (!json_is_string(h))
            continue;
        dx_ras_comm *c = dx_ras_comm_get(r, json_string_value(h), json_string_length(h), &oom);
        if (!c)
            continue;
        c->size = (int)jint(cj, "size", c->size);
        json_t *ranks = json_object_get(cj, "ranks"), *rj;
        size_t k;
        json_array_foreach(ranks, k, rj)
        {
            dx_ras_rank *x = json_rank(c, rj, &oom);
            if (!x)
                continue;
            json_t *st = json_object_get(rj, "status");
            long long async = jint(st, "async_error", 0), init = jint(st, "init_state", 0);
            const char *e = nccl_result(async && async != 7 ? async : init != 7 ? init : 0);
            copy(x->error, sizeof x->error, e, strlen(e));
            const char *s = json_is_true(json_object_get(st, "abort_flag")) ? "ABORT"
                            : json_is_true(json_object_get(st, "finalize_called")) ||
                                    json_is_true(json_object_get(st, "destroy_flag"))
                                ? "FINALIZE"
                            : init == 0 ? "RUNNING"
                                        : "INIT";
            copy(x->status, sizeof x->status, s, strlen(s));
        }
        json_counts(c, ranks);
        json_array_foreach(json_object_get(cj, "missing_ranks"), k, rj)
        {
            dx_ras_rank *x = json_rank(c, rj, &oom);
            if (!x)
                continue;
            json_t *st = json_object_get(rj, "status");
            x->missing = json_is_true(json_object_get(st, "unresponsive"));
            x->dead = json_is_true(json_object_get(st, "considered_dead"));
            if (!x->missing && !x->dead)
                copy(x->status, sizeof x->status, "NOCOMM", 6);
        }
    }
    if (oom)
        rc = dx_err(err, DDX_ENOMEM, "%s: out of memory", name);
done:
    json_decref(root);
    return rc;
}

/* ---- the verdict ---- */

typedef struct ident {
    int rank; /* global, -1 unknown */
    const dx_ras_comm *comm;
    const dx_ras_rank *x;
} ident;

static int world_size(const dx_ras *r)
{
    int w = 0;
    for (size_t i = 0; i < r->ncomms; i++) {
        int n = r->comms[i].size >= 0 ? r->comms[i].size : (int)r->comms[i].nranks;
        w = n > w ? n : w;
    }
    return w;
}

static int is_world(const dx_ras_comm *c, int w)
{
    return w > 0 && (c->size >= 0 ? c->size : (int)c->nranks) == w;
}

/* The global rank of a process (pid on host): its rank in a world communicator. */
static int rank_of_proc(const dx_ras *r, long long pid, const char *host, int w)
{
    for (size_t i = 0; i < r->ncomms; i++) {
        if (!is_world(&r->comms[i], w))
            continue;
        for (size_t k = 0; k < r->comms[i].nranks; k++) {
            const dx_ras_rank *x = &r->comms[i].ranks[k];
            if (x->pid == pid && pid >= 0 && (!host[0] || !strcmp(x->host, host)))
                return x->rank;
        }
    }
    return -1;
}

/* The global rank of a communicator's rank: itself in a world communicator, else through its
 * process. */
static int global_rank(const dx_ras *r, const dx_ras_comm *c, const dx_ras_rank *x, int w)
{
    if (is_world(c, w))
        return x->rank;
    return x->pid >= 0 ? rank_of_proc(r, x->pid, x->host, w) : -1;
}

static void add_culprit(dx_ras_verdict *v, int rank)
{
    if (rank < 0)
        return;
    for (size_t i = 0; i < v->nculprits; i++)
        if (v->culprits[i] == rank)
            return;
    if (v->nculprits < DX_ARRAY_LEN(v->culprits))
        v->culprits[v->nculprits++] = rank;
}

/* "rank 3 (GPU 3, process 4103 on node-a)" */
static void say_rank(dx_buf *b, const dx_ras_comm *c, const dx_ras_rank *x, int global)
{
    if (global >= 0)
        dx_buf_addf(b, "rank %d", global);
    else
        dx_buf_addf(b, "rank %d of communicator %s", x->rank, c->hash);
    if (x->cuda_dev >= 0 || x->pid >= 0) {
        dx_buf_addf(b, " (");
        if (x->cuda_dev >= 0)
            dx_buf_addf(b, "GPU %d%s", x->cuda_dev, x->pid >= 0 ? ", " : "");
        if (x->pid >= 0)
            dx_buf_addf(b, "process %lld%s%s", x->pid, x->host[0] ? " on " : "", x->host);
        dx_buf_addc(b, ')');
    }
}

static void put(char *dst, size_t cap, dx_buf *b)
{
    copy(dst, cap, b->p ? b->p : "", b->n);
    dx_buf_fini(b);
}

/* Operation counts: the ranks behind the furthest count, named when they are a minority. */
static void judge_counts(const dx_ras *r, int w, dx_ras_verdict *v, int *named)
{
    dx_buf mis = {0}, beh = {0};
    for (size_t i = 0; i < r->ncomms; i++) {
        const dx_ras_comm *c = &r->comms[i];
        long long top = -1;
        int total = 0, nbehind = 0;
        for (size_t g = 0; g < c->ngroups; g++) {
            top = c->group_ops[g] > top ? c->group_ops[g] : top;
            total += c->group_n[g];
        }
        for (size_t k = 0; k < c->nranks; k++)
            if (c->ranks[k].ops > top)
                top = c->ranks[k].ops;
        if (!c->ngroups) { /* JSON: every rank has its count */
            for (size_t k = 0; k < c->nranks; k++)
                total += c->ranks[k].ops >= 0;
        }
        for (size_t g = 0; g < c->ngroups; g++)
            nbehind += c->group_ops[g] < top ? c->group_n[g] : 0;
        if (!c->ngroups)
            for (size_t k = 0; k < c->nranks; k++)
                nbehind += c->ranks[k].ops >= 0 && c->ranks[k].ops < top;
        if (top < 0 || !nbehind)
            continue;
        int size = c->size >= 0 ? c->size : total;
        if (!mis.n)
            dx_buf_addf(&mis,
                        "communicator %s (%d ranks): %d rank%s ha%s not launched %s "
                        "operation %lld, which the other %d launched",
                        c->hash, size, nbehind, nbehind == 1 ? "" : "s", nbehind == 1 ? "s" : "ve",
                        c->func[0] ? c->func : "collective", top, total - nbehind);
        if (2 * nbehind > total)
            continue; /* most ranks are behind: those ahead only wait */
        for (size_t k = 0; k < c->nranks; k++) {
            const dx_ras_rank *x = &c->ranks[k];
            if (x->ops < 0 || x->ops >= top)
                continue;
            int gr = global_rank(r, c, x, w);
            if (beh.n < 200) {
                dx_buf_addf(&beh, "%s", beh.n ? "; " : "");
                say_rank(&beh, c, x, gr);
                if (x->ops > 0)
                    dx_buf_addf(&beh,
                                " launched %s operations only up to %lld while the others "
                                "reached %lld",
                                c->func[0] ? c->func : "collective", x->ops, top);
                else
                    dx_buf_addf(&beh, " launched no %s operation while the others reached %lld",
                                c->func[0] ? c->func : "collective", top);
                dx_buf_addf(&beh, " (communicator %s)", c->hash);
            }
            if (!*named || *named == 2) { /* only when no process is dead */
                add_culprit(v, gr);
                *named = 2;
            }
        }
    }
    put(v->mismatch, sizeof v->mismatch, &mis);
    put(v->behind, sizeof v->behind, &beh);
}

/* Adds "rank R (...) <what> <detail>" to b and, when no earlier class named culprits, the rank
 * to the culprits of class `cls`. */
static void note_rank(dx_buf *b, const dx_ras_comm *c, const dx_ras_rank *x, int gr,
                      const char *what, const char *detail, dx_ras_verdict *v, int *named, int cls)
{
    if (b->n < 200) {
        dx_buf_addf(b, "%s", b->n ? "; " : "");
        say_rank(b, c, x, gr);
        dx_buf_addf(b, " %s %s", what, detail);
    }
    if (!*named || *named == cls) {
        add_culprit(v, gr);
        *named = cls;
    }
}

void dx_ras_judge(const dx_ras *r, dx_ras_verdict *v)
{
    memset(v, 0, sizeof *v);
    int w = world_size(r), named = 0;
    /* dead processes: the report's DEAD list and the missing ranks considered dead */
    dx_buf dead = {0};
    for (size_t i = 0; i < r->nprocs; i++) {
        const dx_ras_proc *p = &r->procs[i];
        if (!p->dead)
            continue;
        int gr = rank_of_proc(r, p->pid, p->host, w);
        dx_buf_addf(&dead, "%sprocess %lld on node %s (GPU %s)", dead.n ? "; " : "", p->pid,
                    p->host, p->gpus);
        if (gr >= 0)
            dx_buf_addf(&dead, ", rank %d", gr);
        add_culprit(v, gr);
        named = 1;
    }
    for (size_t i = 0; i < r->ncomms; i++)
        for (size_t k = 0; k < r->comms[i].nranks; k++) {
            const dx_ras_rank *x = &r->comms[i].ranks[k];
            if (!x->dead)
                continue;
            int gr = global_rank(r, &r->comms[i], x, w);
            if (dead.n < 200) {
                dx_buf_addf(&dead, "%s", dead.n ? "; " : "");
                say_rank(&dead, &r->comms[i], x, gr);
            }
            add_culprit(v, gr);
            named = 1;
        }
    if (!dead.n && r->ndead)
        dx_buf_addf(&dead, "%d process%s considered dead (not named)", r->ndead,
                    r->ndead == 1 ? "" : "es");
    put(v->dead, sizeof v->dead, &dead);
    judge_counts(r, w, v, &named);
    /* ranks and processes without data, then ranks that reported errors */
    dx_buf miss = {0}, err = {0};
    for (int pass = 0; pass < 2; pass++) /* every missing rank before any error */
        for (size_t i = 0; i < r->ncomms; i++)
            for (size_t k = 0; k < r->comms[i].nranks; k++) {
                const dx_ras_comm *c = &r->comms[i];
                const dx_ras_rank *x = &c->ranks[k];
                int gr = global_rank(r, c, x, w);
                if (pass == 0 && x->missing && !x->dead)
                    note_rank(&miss, c, x, gr, "sent no data about communicator", c->hash, v,
                              &named, 3);
                if (pass == 1 && x->error[0])
                    note_rank(&err, c, x, gr, "reported", x->error, v, &named, 4);
            }
    for (size_t i = 0; i < r->nprocs && miss.n < 200; i++)
        if (!r->procs[i].dead)
            dx_buf_addf(&miss, "%sprocess %lld on node %s (GPU %s) sent no communicator data",
                        miss.n ? "; " : "", r->procs[i].pid, r->procs[i].host, r->procs[i].gpus);
    if (!miss.n && r->nmissing_procs)
        dx_buf_addf(&miss, "%d process%s sent no communicator data", r->nmissing_procs,
                    r->nmissing_procs == 1 ? "" : "es");
    put(v->missing, sizeof v->missing, &miss);
    put(v->error, sizeof v->error, &err);
    v->why_kind = named;
    const char *why = named == 1   ? v->dead
                      : named == 2 ? v->behind
                      : named == 3 ? v->missing
                                   : v->error;
    if (named)
        snprintf(v->why, sizeof v->why, "%s%.300s", named == 1 ? "considered dead: " : "", why);
    if (v->nculprits > 1) { /* ascending */
        for (size_t i = 1; i < v->nculprits; i++)
            for (size_t j = i; j > 0 && v->culprits[j - 1] > v->culprits[j]; j--) {
                int t = v->culprits[j];
                v->culprits[j] = v->culprits[j - 1];
                v->culprits[j - 1] = t;
            }
    }
}
