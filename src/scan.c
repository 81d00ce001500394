/* scan.c -- a chunk's scan, and the pipeline that runs chunks' scans on every core.
 *
 * The scan of a chunk (dx_piece_scan): norm.c's logical lines, one Vectorscan pass for the
 * candidates, each line's start and the rank its prefixes name (dx_attrib_rank, cheap on lines
 * that name none), and for each line with candidates its attribution and the PCRE2 confirmation
 * of each candidate, whose capture offsets are kept so the thread that applies the piece can
 * replay them. Nothing else of a line is read here: a line no pattern proposes costs the
 * search for its end and its rank.
 *
 * The pipeline (dx_pipe): a ring of at most DX_PIPE_MAX pieces. The submitting thread copies
 * each chunk into a free piece and marks it ready; worker threads (and the submitting thread,
 * while it would otherwise wait) scan ready pieces; the submitting thread alone applies done
 * pieces, from the ring's head, so in submission order. With one thread, or until a second
 * chunk arrives, a chunk is scanned and applied at once where the reader holds it.
 */
#include "scan.h"

#include <pthread.h>
#include <sched.h>
#include <unistd.h>

/* ==== one piece ============================================================================== */

const char *dx_piece_line(const dx_piece *p, size_t i, size_t *len)
{
    *len = p->off[i + 1] - p->off[i] - 1;
    return p->data + p->off[i];
}

uint64_t dx_piece_lineno(const dx_piece *p, size_t i)
{
    return p->logical ? p->norm.first[i] : p->first_line + i;
}

/* Finds every line's start and the rank its prefixes name. */
static int index_lines(dx_piece *p)
{
    const char *d = p->data;
    size_t n = p->dlen, off = 0, i = 0;
    while (off < n) {
        if (i + 2 > p->capnl) {
            size_t cap = p->capnl ? 2 * p->capnl : 8192;
            uint32_t *o = dx_realloc(p->off, cap * sizeof *o);
            if (!o)
                return DDX_ENOMEM;
            p->off = o;
            int32_t *r = dx_realloc(p->rank, cap * sizeof *r);
            if (!r)
                return DDX_ENOMEM;
            p->rank = r;
            p->capnl = cap;
        }
        const char *nl = memchr(d + off, '\n', n - off);
        size_t len = nl ? (size_t)(nl - (d + off)) : n - off;
        p->off[i] = (uint32_t)off;
        p->rank[i++] = dx_attrib_rank(d + off, len);
        off += len + 1;
    }
    if (!p->off && !(p->off = dx_malloc(sizeof *p->off)))
        return DDX_ENOMEM;
    p->off[i] = (uint32_t)(off > n ? n + 1 : off);
    p->nl = i;
    return DDX_OK;
}

/* Confirms the candidates of line li (cands[0..n), all on it). */
static int confirm_line(dx_piece *p, dx_scan *s, size_t li, const dx_cand *cands, size_t n)
{
    size_t len;
    const char *line = dx_piece_line(p, li, &len);
    dx_cline c = {.line = (uint32_t)li};
    dx_attrib_line(line, len, &c.a);
    c.body_end = dx_norm_body_end(line, c.a.body, len);
    size_t before = p->nhits;
    for (size_t k = 0; k < n; k++) {
        if (!dx_scan_confirm_line(s, cands[k].sig, line, len, c.a.body, c.body_end - c.a.body))
            continue;
        const char *base;
        const uint32_t *ov;
        size_t npairs = dx_scan_last(s, &base, &ov);
        if (dx_grow((void **)&p->hits, &p->caphits, p->nhits + 1, sizeof *p->hits) ||
            dx_grow((void **)&p->ovs, &p->capovs, p->novs + 2 * npairs + 1, sizeof *p->ovs))
            return DDX_ENOMEM;
        p->hits[p->nhits++] = (dx_hitrec){(uint32_t)li, cands[k].sig, (uint32_t)p->novs,
                                          (uint16_t)npairs, base != line};
        memcpy(p->ovs + p->novs, ov, 2 * npairs * sizeof *ov);
        p->novs += 2 * npairs;
    }
    if (p->nhits == before)
        return DDX_OK;
    if (dx_grow((void **)&p->cl, &p->capcl, p->ncl + 1, sizeof *p->cl))
        return DDX_ENOMEM;
    p->cl[p->ncl++] = c;
    return DDX_OK;
}

void dx_piece_scan(dx_piece *p, dx_scan *s)
{
    p->nl = p->ncl = p->nhits = p->novs = 0;
    memset(&p->err, 0, sizeof p->err);
    int logical = dx_norm_chunk(&p->norm, p->raw, p->rawlen, p->first_line);
    if (logical < 0) {
        p->rc = dx_err(&p->err, logical, "out of memory");
        return;
    }
    p->logical = logical;
    p->data = logical ? p->norm.out.p : p->raw;
    p->dlen = logical ? p->norm.out.n : p->rawlen;
    const dx_cand *cands;
    size_t ncands;
    if ((p->rc = index_lines(p))) {
        dx_err(&p->err, p->rc, "out of memory");
        return;
    }
    if ((p->rc = dx_scan_chunk_lines(s, p->data, p->dlen, p->off, p->nl, &cands, &ncands, &p->err)))
        return;
    size_t li = 0;
    for (size_t k = 0; k < ncands;) {
        size_t start = cands[k].line, e = k + 1;
        while (e < ncands && cands[e].line == start)
            e++;
        while (li < p->nl && p->off[li] < start)
            li++;
        if (li < p->nl && p->off[li] == start &&
            (p->rc = confirm_line(p, s, li, cands + k, e - k))) {
            dx_err(&p->err, p->rc, "out of memory");
            return;
        }
        k = e;
    }
}

void dx_piece_fini(dx_piece *p)
{
    dx_norm_fini(&p->norm);
    dx_free(p->off);
    dx_free(p->rank);
    dx_free(p->cl);
    dx_free(p->hits);
    dx_free(p->ovs);
    memset(p, 0, sizeof *p);
}

static void piece_free(dx_piece *p)
{
    if (!p)
        return;
    dx_free(p->copy);
    dx_piece_fini(p);
    dx_free(p);
}

/* ==== the pipeline ========================================================================== */

enum { FREE = 0, READY, RUNNING, DONE };

#define MAX_WORKERS 15

struct dx_pipe {
    dx_matcher *m;
    int threads;  /* asked for */
    int nworkers; /* started */
    pthread_t tid[MAX_WORKERS];
    dx_scan *wscan[MAX_WORKERS];
    dx_scan *own; /* the submitting thread's */
    dx_apply_fn apply;
    void *ud;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    dx_piece *slot[DX_PIPE_MAX];
    int state[DX_PIPE_MAX];
    size_t cap, head, count;
    int quit;
    int status;      /* the first nonzero status of an apply */
    uint64_t chunks; /* chunks submitted */
};

int dx_pipe_default_threads(void)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n <= 0)
        n = (int)sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 8 ? 8 : n;
}

int dx_pipe_new(dx_pipe **out, dx_matcher *m, int threads, dx_apply_fn apply, void *ud,
                ddx_error *err)
{
    dx_pipe *pp = dx_calloc(1, sizeof *pp);
    if (!pp)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    pp->m = m;
    pp->threads = threads < 1 ? 1 : threads > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : threads;
    pp->apply = apply;
    pp->ud = ud;
    size_t cap = 2 * (size_t)pp->threads + 2;
    pp->cap = cap > DX_PIPE_MAX ? DX_PIPE_MAX : cap;
    int rc = dx_scan_new(&pp->own, m, err);
    if (rc) {
        dx_free(pp);
        return rc;
    }
    if (!(pp->slot[0] = dx_calloc(1, sizeof(dx_piece)))) {
        dx_scan_free(pp->own);
        dx_free(pp);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&pp->mu, NULL);
    pthread_cond_init(&pp->work, NULL);
    pthread_cond_init(&pp->done, NULL);
    *out = pp;
    return DDX_OK;
}

typedef struct worker_arg {
    dx_pipe *pp;
    int i;
} worker_arg;

/* The oldest ready piece, marked running (the lock held); -1 when none. */
static int take_ready(dx_pipe *pp)
{
    for (size_t k = 0; k < pp->count; k++) {
        size_t i = (pp->head + k) % pp->cap;
        if (pp->state[i] == READY) {
            pp->state[i] = RUNNING;
            return (int)i;
        }
    }
    return -1;
}

static void *worker(void *arg)
{
    dx_pipe *pp = ((worker_arg *)arg)->pp;
    dx_scan *s = pp->wscan[((worker_arg *)arg)->i];
    dx_free(arg);
    pthread_mutex_lock(&pp->mu);
    while (!pp->quit) {
        int i = take_ready(pp);
        if (i < 0) {
            pthread_cond_wait(&pp->work, &pp->mu);
            continue;
        }
        pthread_mutex_unlock(&pp->mu);
        dx_piece_scan(pp->slot[i], s);
        pthread_mutex_lock(&pp->mu);
        pp->state[i] = DONE;
        pthread_cond_broadcast(&pp->done);
    }
    pthread_mutex_unlock(&pp->mu);
    return NULL;
}

/* Starts the workers and the ring's other pieces (the first time a second chunk arrives). A
 * worker that cannot start leaves fewer threads; none leaves the pipeline in one thread. */
static void start_workers(dx_pipe *pp)
{
    for (size_t i = 1; i < pp->cap; i++)
        if (!(pp->slot[i] = dx_calloc(1, sizeof(dx_piece)))) {
            pp->cap = i;
            break;
        }
    for (int i = 0; i < pp->threads - 1; i++) {
        ddx_error e = {0};
        worker_arg *a = dx_malloc(sizeof *a);
        if (!a || dx_scan_new(&pp->wscan[i], pp->m, &e)) {
            dx_free(a);
            break;
        }
        a->pp = pp;
        a->i = i;
        if (pthread_create(&pp->tid[i], NULL, worker, a) != 0) {
            dx_free(a);
            dx_scan_free(pp->wscan[i]);
            pp->wscan[i] = NULL;
            break;
        }
        pp->nworkers++;
    }
}

/* Applies the head piece (the lock held; released while applying). */
static void apply_head(dx_pipe *pp)
{
    size_t h = pp->head;
    pthread_mutex_unlock(&pp->mu);
    if (!pp->status)
        pp->status = pp->apply(pp->ud, pp->slot[h]);
    pthread_mutex_lock(&pp->mu);
    pp->state[h] = FREE;
    pp->head = (h + 1) % pp->cap;
    pp->count--;
}

/* One step towards a free slot or an empty ring (the lock held): apply the head when it is done,
 * else scan a ready piece here, else wait for a worker. */
static void step(dx_pipe *pp)
{
    if (pp->state[pp->head] == DONE) {
        apply_head(pp);
        return;
    }
    int i = take_ready(pp);
    if (i >= 0) {
        pthread_mutex_unlock(&pp->mu);
        dx_piece_scan(pp->slot[i], pp->own);
        pthread_mutex_lock(&pp->mu);
        pp->state[i] = DONE;
        return;
    }
    pthread_cond_wait(&pp->done, &pp->mu);
}

/* A free piece at the ring's tail (the lock held). */
static dx_piece *tail_piece(dx_pipe *pp, size_t *at)
{
    while (pp->count == pp->cap)
        step(pp);
    *at = (pp->head + pp->count) % pp->cap;
    return pp->slot[*at];
}

static void piece_reset(dx_piece *p, int kind, void *member)
{
    p->kind = kind;
    p->member = member;
    p->rc = DDX_OK;
    p->nl = p->ncl = p->nhits = p->novs = 0;
    p->ntrunc = 0;
}

static void piece_chunk(dx_piece *p, const dx_chunk *c, const char *raw)
{
    p->raw = raw;
    p->rawlen = c->len;
    p->first_line = c->first_line;
    p->nlines = c->nlines;
    p->ntrunc = c->ntrunc < DX_ARRAY_LEN(p->trunc) ? c->ntrunc : DX_ARRAY_LEN(p->trunc);
    memcpy(p->trunc, c->trunc_lines, p->ntrunc * sizeof *p->trunc);
}

int dx_pipe_chunk(dx_pipe *pp, void *member, const dx_chunk *c, uint64_t bytes)
{
    if (pp->status)
        return pp->status;
    if (++pp->chunks == 2 && pp->threads > 1)
        start_workers(pp);
    if (!pp->nworkers) {
        /* one thread: scan and apply it now, where the reader holds it */
        dx_piece *p = pp->slot[0];
        piece_reset(p, DX_PIECE_CHUNK, member);
        p->bytes = bytes;
        piece_chunk(p, c, c->data);
        dx_piece_scan(p, pp->own);
        pp->status = pp->apply(pp->ud, p);
        return pp->status;
    }
    pthread_mutex_lock(&pp->mu);
    size_t at;
    dx_piece *p = tail_piece(pp, &at);
    pthread_mutex_unlock(&pp->mu);
    /* a free slot is the submitting thread's alone until it is marked ready */
    piece_reset(p, DX_PIECE_CHUNK, member);
    p->bytes = bytes;
    if (dx_grow((void **)&p->copy, &p->copycap, c->len ? c->len : 1, 1)) {
        pp->status = DDX_ENOMEM;
        return pp->status;
    }
    memcpy(p->copy, c->data, c->len);
    piece_chunk(p, c, p->copy);
    pthread_mutex_lock(&pp->mu);
    pp->state[at] = READY;
    pp->count++;
    pthread_cond_signal(&pp->work);
    while (pp->count && pp->state[pp->head] == DONE)
        apply_head(pp);
    pthread_mutex_unlock(&pp->mu);
    return pp->status;
}

int dx_pipe_end(dx_pipe *pp, void *member, int rc, const ddx_error *err, uint64_t bytes)
{
    if (pp->status)
        return pp->status;
    if (!pp->nworkers) {
        dx_piece *p = pp->slot[0];
        piece_reset(p, DX_PIECE_END, member);
        p->bytes = bytes;
        p->end_rc = rc;
        p->end_err = err ? *err : (ddx_error){0};
        pp->status = pp->apply(pp->ud, p);
        return pp->status;
    }
    pthread_mutex_lock(&pp->mu);
    size_t at;
    dx_piece *p = tail_piece(pp, &at);
    piece_reset(p, DX_PIECE_END, member);
    p->bytes = bytes;
    p->end_rc = rc;
    p->end_err = err ? *err : (ddx_error){0};
    pp->state[at] = DONE; /* nothing to scan */
    pp->count++;
    while (pp->count && pp->state[pp->head] == DONE)
        apply_head(pp);
    pthread_mutex_unlock(&pp->mu);
    return pp->status;
}

int dx_pipe_drain(dx_pipe *pp)
{
    if (!pp->nworkers)
        return pp->status;
    pthread_mutex_lock(&pp->mu);
    while (pp->count)
        step(pp);
    pthread_mutex_unlock(&pp->mu);
    return pp->status;
}

void dx_pipe_free(dx_pipe *pp)
{
    if (!pp)
        return;
    /* a worker finishes the piece it scans, then stops; pieces not applied are dropped */
    pthread_mutex_lock(&pp->mu);
    pp->quit = 1;
    pthread_cond_broadcast(&pp->work);
    pthread_mutex_unlock(&pp->mu);
    for (int i = 0; i < pp->nworkers; i++) {
        pthread_join(pp->tid[i], NULL);
        dx_scan_free(pp->wscan[i]);
    }
    for (size_t i = 0; i < DX_PIPE_MAX; i++)
        piece_free(pp->slot[i]);
    dx_scan_free(pp->own);
    pthread_mutex_destroy(&pp->mu);
    pthread_cond_destroy(&pp->work);
    pthread_cond_destroy(&pp->done);
    dx_free(pp);
}
