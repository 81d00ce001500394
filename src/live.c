/* live.c -- a running job's lines in bounded memory, the diagnosis when a failure's evidence is
 * complete, and stalls (see live.h for what the digest keeps and when a diagnosis is due).
 *
 * Each line read becomes an entry of its source's list (ordered by line number). Entries are
 * reference-counted: the rings (latest lines of a source, of a rank, of a signal and rank) hold
 * one reference each while the line is among their latest; a pin (head, first lines of a
 * signal, the context of a failure line) holds one for good. An entry no one holds is freed at
 * once. The byte budget stops pins and ring growth, never the rings' replacement of their
 * oldest line, so memory stays bounded whatever the job prints.
 *
 * Lines are cleaned as a diagnosis cleans them (a trailing '\r' and ANSI escape sequences
 * dropped) and matched in batches with the knowledge base's matcher; a diagnosis runs the
 * ordinary engine over the digest and maps its line numbers back (remap()).
 */
#include "live.h"

#include <math.h>

#include "diag.h"
#include "match.h"

#define RANK_MAX (1 << 20) /* ranks above this are read but not tracked */
#define CTX_PINS 8         /* failure contexts pinned per rank (or per source, unranked) */
#define BATCH_MAX (1u << 20)
#define IV_KEEP 64 /* step intervals kept per rank */
#define LAST_TEXT 200

/* ==== entries and rings ===================================================================== */

typedef struct entry {
    struct entry *prev, *next;
    uint64_t line;
    uint32_t refs;
    uint32_t len;
    uint32_t src; /* the source whose list holds it */
    unsigned pinned : 1;
    char text[]; /* len bytes, no '\n' */
} entry;

typedef struct ring {
    entry **v;
    uint32_t cap, n, head; /* v[head] is the oldest */
} ring;

typedef struct source {
    char *name;
    int file_rank;
    uint64_t lines, bytes;
    uint64_t head_bytes;
    dx_buf part; /* the partial last line, raw */
    int skip;    /* the partial line is over DX_LINE_MAX: the rest is dropped */
    entry *first, *last;
    ring tail;
    int ctx_pins;
    int is_file;
} source;

typedef struct rstate {
    int seen;
    ring tail;
    int64_t last_at, last_prog;
    uint32_t nprog;
    float iv[IV_KEEP]; /* seconds between progress lines, a ring */
    uint32_t niv;
    long long step, total; /* the last "step N/M" (N, M), -1 unknown */
    long pid;
    int source;
    uint64_t line;
    int ctx_pins;
    int silent_reported;
    char last[LAST_TEXT];
} rstate;

typedef struct keep {
    uint32_t sig; /* UINT32_MAX: empty slot */
    int32_t rank;
    uint32_t nfirst;
    ring last;
} keep;

enum {
    SK_FAIL = 1 << 0,     /* a failure line of a reference: a diagnosis becomes due */
    SK_PROGRESS = 1 << 1, /* a step or progress line */
    SK_STEPS = 1 << 2,    /* keep DX_LIVE_KEEP_STEPS of its latest lines */
    SK_CONTEXT = 1 << 3   /* keep the lines before it (an exception ends its traceback) */
};

/* Job-model lines by id (job.c's extractor table): which are progress and which carry a time
 * per step. An id that is not there (renamed) is simply not used. */
static const struct {
    const char *id;
    unsigned kind;
} job_sigs[] = {
    {"job-progress", SK_PROGRESS | SK_STEPS},
    {"job-tqdm-progress", SK_PROGRESS | SK_STEPS},
    {"job-megatron-iter", SK_PROGRESS | SK_STEPS},
    {"job-step-time", SK_PROGRESS | SK_STEPS},
    {"job-step-took", SK_PROGRESS | SK_STEPS},
    {"job-tqdm-speed", SK_PROGRESS | SK_STEPS},
    {"job-ds-samples", SK_PROGRESS | SK_STEPS},
    {"job-data-time", SK_STEPS},
    {"job-exception", SK_CONTEXT},
};

struct dx_live {
    const ddx_kb *kb;
    dx_scan *scan;
    uint8_t *sigkind;   /* [kb->nsig] SK_* */
    uint16_t *sigfirst; /* [kb->nsig] lines pinned per signal overall */
    size_t budget;
    uint64_t bytes, nkept, nlines, ndiag;
    source *src;
    size_t nsrc, capsrc;
    rstate **ranks; /* [nranks], allocated on first sight */
    size_t nranks;
    keep *keeps; /* open addressing on (sig, rank) */
    size_t capkeeps, nkeeps;
    dx_buf batch;
    /* the pending diagnosis */
    int armed;
    int64_t armed_at, last_line_at;
    int trig_source, trig_rank;
    uint64_t trig_line;
    int64_t trig_at;
    char *trig_text;
    /* stalls */
    int64_t start_at, last_prog_at;
    int saw_prog, saw_line;
    int job_stalled;
};

static int entry_cost(const entry *e) { return (int)(sizeof(entry) + e->len); }

static void entry_unlink(dx_live *lv, entry *e)
{
    source *s = &lv->src[e->src];
    if (e->prev)
        e->prev->next = e->next;
    else
        s->first = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        s->last = e->prev;
    lv->bytes -= (uint64_t)entry_cost(e);
    lv->nkept--;
    dx_free(e);
}

static void unref(dx_live *lv, entry *e)
{
    if (--e->refs == 0)
        entry_unlink(lv, e);
}

static int over_budget(const dx_live *lv, int hard)
{
    return lv->bytes > (hard ? 2 * (uint64_t)lv->budget : (uint64_t)lv->budget);
}

static void pin(dx_live *lv, entry *e)
{
    if (e->pinned || over_budget(lv, 0))
        return;
    e->pinned = 1;
    e->refs++;
}

/* Pushes e as the latest of r (cap elements, allocated on first use); the oldest is let go when
 * r is full. Growth stops at the hard budget. */
static int ring_push(dx_live *lv, ring *r, uint32_t cap, entry *e)
{
    if (!r->v) {
        if (!(r->v = dx_calloc(cap, sizeof(entry *))))
            return DDX_ENOMEM;
        r->cap = cap;
    }
    if (r->n == r->cap) {
        entry *old = r->v[r->head];
        r->v[r->head] = e;
        r->head = (r->head + 1) % r->cap;
        e->refs++;
        unref(lv, old);
        return DDX_OK;
    }
    if (over_budget(lv, 1))
        return DDX_OK;
    r->v[(r->head + r->n) % r->cap] = e;
    r->n++;
    e->refs++;
    return DDX_OK;
}

/* ==== ranks and keeps ======================================================================== */

static rstate *rank_get(dx_live *lv, int r)
{
    if (r < 0 || r >= RANK_MAX)
        return NULL;
    if ((size_t)r >= lv->nranks) {
        size_t n = lv->nranks ? lv->nranks : 16;
        while (n <= (size_t)r)
            n *= 2;
        rstate **v = dx_realloc(lv->ranks, n * sizeof *v);
        if (!v)
            return NULL;
        memset(v + lv->nranks, 0, (n - lv->nranks) * sizeof *v);
        lv->ranks = v;
        lv->nranks = n;
    }
    if (!lv->ranks[r]) {
        rstate *x = dx_calloc(1, sizeof *x);
        if (!x)
            return NULL;
        x->step = x->total = -1;
        x->pid = -1;
        x->source = -1;
        lv->ranks[r] = x;
    }
    return lv->ranks[r];
}

static size_t keep_hash(uint32_t sig, int32_t rank, size_t cap)
{
    uint64_t h = ((uint64_t)sig << 32 | (uint32_t)rank) * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 32) & (cap - 1);
}

static keep *keep_get(dx_live *lv, uint32_t sig, int32_t rank)
{
    if (2 * (lv->nkeeps + 1) > lv->capkeeps) {
        size_t cap = lv->capkeeps ? 2 * lv->capkeeps : 256;
        keep *v = dx_malloc(cap * sizeof *v);
        if (!v)
            return NULL;
        for (size_t i = 0; i < cap; i++)
            v[i].sig = UINT32_MAX;
        for (size_t i = 0; i < lv->capkeeps; i++) {
            keep *k = &lv->keeps[i];
            if (k->sig == UINT32_MAX)
                continue;
            size_t j = keep_hash(k->sig, k->rank, cap);
            while (v[j].sig != UINT32_MAX)
                j = (j + 1) & (cap - 1);
            v[j] = *k;
        }
        dx_free(lv->keeps);
        lv->keeps = v;
        lv->capkeeps = cap;
    }
    size_t j = keep_hash(sig, rank, lv->capkeeps);
    while (lv->keeps[j].sig != UINT32_MAX) {
        if (lv->keeps[j].sig == sig && lv->keeps[j].rank == rank)
            return &lv->keeps[j];
        j = (j + 1) & (lv->capkeeps - 1);
    }
    keep *k = &lv->keeps[j];
    memset(k, 0, sizeof *k);
    k->sig = sig;
    k->rank = rank;
    lv->nkeeps++;
    return k;
}

/* ==== opening ================================================================================ */

int dx_live_new(dx_live **out, const ddx_kb *kb, size_t budget, ddx_error *err)
{
    *out = NULL;
    dx_live *lv = dx_calloc(1, sizeof *lv);
    if (!lv)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    lv->kb = kb;
    lv->budget = budget ? budget : DX_LIVE_BUDGET;
    lv->trig_source = -1;
    lv->trig_rank = -1;
    lv->sigkind = dx_calloc(kb->nsig ? kb->nsig : 1, 1);
    lv->sigfirst = dx_calloc(kb->nsig ? kb->nsig : 1, sizeof(uint16_t));
    if (!lv->sigkind || !lv->sigfirst) {
        dx_live_free(lv);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    int rc = dx_scan_new(&lv->scan, kb->m, err);
    if (rc) {
        dx_live_free(lv);
        return rc;
    }
    for (size_t s = 0; s < kb->nsig; s++) {
        const dx_signal *sg = kb->sigs[s];
        if (DX_SIG_IS_REF(kb->sig_ref[s])) {
            const dx_ref *r = kb->refs[kb->sig_ref[s]];
            if (strcmp(r->kind, "noise") != 0 && sg->role != DX_ROLE_AGAINST &&
                sg->role != DX_ROLE_NOISE)
                lv->sigkind[s] = SK_FAIL | SK_CONTEXT;
        } else if (kb->sig_ref[s] == DX_SIG_JOB) {
            for (size_t k = 0; k < DX_ARRAY_LEN(job_sigs); k++)
                if (!strcmp(sg->id, job_sigs[k].id))
                    lv->sigkind[s] = (uint8_t)job_sigs[k].kind;
        }
    }
    *out = lv;
    return DDX_OK;
}

void dx_live_free(dx_live *lv)
{
    if (!lv)
        return;
    for (size_t i = 0; i < lv->nsrc; i++) {
        source *s = &lv->src[i];
        for (entry *e = s->first, *n; e; e = n) {
            n = e->next;
            dx_free(e);
        }
        dx_free(s->tail.v);
        dx_free(s->name);
        dx_buf_fini(&s->part);
    }
    dx_free(lv->src);
    for (size_t r = 0; r < lv->nranks; r++) {
        if (lv->ranks[r])
            dx_free(lv->ranks[r]->tail.v);
        dx_free(lv->ranks[r]);
    }
    dx_free(lv->ranks);
    for (size_t i = 0; i < lv->capkeeps; i++)
        if (lv->keeps[i].sig != UINT32_MAX)
            dx_free(lv->keeps[i].last.v);
    dx_free(lv->keeps);
    dx_buf_fini(&lv->batch);
    dx_free(lv->trig_text);
    dx_free(lv->sigkind);
    dx_free(lv->sigfirst);
    dx_scan_free(lv->scan);
    dx_free(lv);
}

int dx_live_add_source(dx_live *lv, const char *name, int is_file, int *id, ddx_error *err)
{
    if (dx_grow((void **)&lv->src, &lv->capsrc, lv->nsrc + 1, sizeof(source)))
        return dx_err(err, DDX_ENOMEM, "out of memory");
    source *s = &lv->src[lv->nsrc];
    memset(s, 0, sizeof *s);
    if (!(s->name = dx_strdup(name ? name : "<buffer>")))
        return dx_err(err, DDX_ENOMEM, "out of memory");
    s->file_rank = dx_attrib_rank_from_name(s->name, NULL);
    s->is_file = is_file;
    *id = (int)lv->nsrc++;
    return DDX_OK;
}

const char *dx_live_source_name(const dx_live *lv, int id)
{
    return id >= 0 && (size_t)id < lv->nsrc ? lv->src[id].name : NULL;
}

/* ==== reading lines ========================================================================== */

/* Appends line p[0..n) to b cleaned as the input reader cleans it: ANSI escape sequences (CSI,
 * and string sequences up to BEL or ESC \) dropped, a trailing '\r' dropped; then '\n'. */
static int clean_line(dx_buf *b, const char *p, size_t n)
{
    if (n && p[n - 1] == '\r')
        n--;
    size_t i = 0;
    while (i < n) {
        const char *esc = memchr(p + i, 0x1b, n - i);
        size_t stop = esc ? (size_t)(esc - p) : n;
        if (stop > i && dx_buf_add(b, p + i, stop - i))
            return DDX_ENOMEM;
        if (!esc)
            break;
        i = stop + 1;
        if (i >= n)
            break;
        unsigned char c = (unsigned char)p[i];
        if (c == '[') {
            i++;
            while (i < n && !((unsigned char)p[i] >= 0x40 && (unsigned char)p[i] <= 0x7e))
                i++;
            i++;
        } else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
            i++;
            while (i < n && p[i] != 0x07 && !(p[i] == 0x1b && i + 1 < n && p[i + 1] == '\\'))
                i++;
            i += i < n && p[i] == 0x1b ? 2 : 1;
        } else if (c >= 0x20 && c <= 0x7e) {
            i++;
        }
    }
    return dx_buf_addc(b, '\n');
}

/* A new entry for line p[0..n) of s (cut to DX_LIVE_LINE_KEEP), appended to its list. */
static entry *entry_add(dx_live *lv, int sid, const char *p, size_t n)
{
    source *s = &lv->src[sid];
    if (n > DX_LIVE_LINE_KEEP)
        n = DX_LIVE_LINE_KEEP;
    entry *e = dx_malloc(sizeof(entry) + n);
    if (!e)
        return NULL;
    memset(e, 0, sizeof *e);
    memcpy(e->text, p, n);
    e->len = (uint32_t)n;
    e->line = s->lines;
    e->src = (uint32_t)sid;
    e->prev = s->last;
    if (s->last)
        s->last->next = e;
    else
        s->first = e;
    s->last = e;
    lv->bytes += (uint64_t)entry_cost(e);
    lv->nkept++;
    return e;
}

/* Pins the lines before a failure line: its rank's latest lines, or its source's. */
static void pin_context(dx_live *lv, source *s, rstate *x)
{
    ring *r = x ? &x->tail : &s->tail;
    int *count = x ? &x->ctx_pins : &s->ctx_pins;
    if (*count >= CTX_PINS)
        return;
    (*count)++;
    for (uint32_t i = 0; i < r->n; i++)
        pin(lv, r->v[(r->head + i) % r->cap]);
}

static int parse_ll(dx_str v, long long *out)
{
    long long x = 0;
    if (!v.n || v.n > 15)
        return -1;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9')
            return -1;
        x = x * 10 + (v.p[i] - '0');
    }
    *out = x;
    return 0;
}

static void progress(dx_live *lv, rstate *x, int64_t now)
{
    lv->saw_prog = 1;
    lv->last_prog_at = now;
    lv->job_stalled = 0;
    if (!x)
        return;
    if (x->nprog && now > x->last_prog) {
        x->iv[x->niv % IV_KEEP] = (float)((double)(now - x->last_prog) / 1e6);
        x->niv++;
    }
    x->nprog++;
    x->last_prog = now;
    x->silent_reported = 0;
}

/* Reads the cleaned lines of s in lv->batch (each ends in '\n'), arrived at now. */
static int read_batch(dx_live *lv, int sid, int64_t now)
{
    source *s = &lv->src[sid];
    const char *data = lv->batch.p;
    size_t len = lv->batch.n;
    const dx_cand *cands;
    size_t ncands, ci = 0;
    ddx_error e = {0};
    int rc = dx_scan_chunk(lv->scan, data, len, &cands, &ncands, &e);
    if (rc)
        return rc;
    size_t off = 0;
    while (off < len) {
        const char *line = data + off;
        const char *nl = memchr(line, '\n', len - off);
        size_t n = nl ? (size_t)(nl - line) : len - off;
        s->lines++;
        lv->nlines++;
        lv->last_line_at = now;
        lv->saw_line = 1;
        if (!lv->saw_prog)
            lv->job_stalled = 0;
        dx_attr a;
        dx_attrib_line(line, n, &a);
        int rank = a.rank >= 0 ? a.rank : a.local_rank >= 0 ? a.local_rank : s->file_rank;
        rstate *x = rank >= 0 ? rank_get(lv, rank) : NULL;
        if (rank >= 0 && rank < RANK_MAX && !x)
            return DDX_ENOMEM;
        entry *en = entry_add(lv, sid, line, n);
        if (!en)
            return DDX_ENOMEM;
        en->refs = 1; /* held while this line is read */
        if (s->lines <= DX_LIVE_HEAD_LINES && s->head_bytes < DX_LIVE_HEAD_BYTES) {
            s->head_bytes += n + 1;
            pin(lv, en);
        }
        if ((rc = ring_push(lv, &s->tail, DX_LIVE_TAIL, en)))
            return rc;
        if (x) {
            x->seen = 1;
            x->last_at = now;
            x->source = sid;
            x->line = s->lines;
            size_t body = a.body <= n ? a.body : 0;
            size_t k = n - body < LAST_TEXT - 1 ? n - body : LAST_TEXT - 1;
            memcpy(x->last, line + body, k);
            x->last[k] = '\0';
            if (a.pid > 0)
                x->pid = a.pid;
            if ((rc = ring_push(lv, &x->tail, DX_LIVE_RANK_TAIL, en)))
                return rc;
        }
        for (; ci < ncands && cands[ci].line == off; ci++) {
            uint32_t sig = cands[ci].sig;
            if (!dx_scan_confirm(lv->scan, sig, line, n))
                continue;
            unsigned kind = lv->sigkind[sig];
            if (lv->sigfirst[sig] < DX_LIVE_KEEP_SIGNAL) {
                lv->sigfirst[sig]++;
                pin(lv, en);
            }
            keep *k = keep_get(lv, sig, rank);
            if (!k)
                return DDX_ENOMEM;
            if (k->nfirst < DX_LIVE_KEEP_FIRST) {
                k->nfirst++;
                pin(lv, en);
            } else if ((rc = ring_push(lv, &k->last,
                                       kind & SK_STEPS ? DX_LIVE_KEEP_STEPS : DX_LIVE_KEEP_LAST,
                                       en)))
                return rc;
            if (kind & SK_CONTEXT)
                pin_context(lv, s, x);
            if (kind & SK_PROGRESS) {
                dx_str v;
                long long step;
                if (x && dx_scan_capture(lv->scan, "n", &v) && !parse_ll(v, &step)) {
                    x->step = step;
                    x->total =
                        dx_scan_capture(lv->scan, "m", &v) && !parse_ll(v, &step) ? step : -1;
                }
                progress(lv, x, now);
            }
            if (kind & SK_FAIL) {
                if (!lv->armed) {
                    lv->armed = 1;
                    lv->armed_at = now;
                }
                char *t = dx_clean_text(line, n, 400);
                if (!t)
                    return DDX_ENOMEM;
                dx_free(lv->trig_text);
                lv->trig_text = t;
                lv->trig_source = sid;
                lv->trig_line = s->lines;
                lv->trig_rank = rank;
                dx_str v;
                long long cr;
                if (rank < 0 && dx_scan_capture(lv->scan, "rank", &v) && !parse_ll(v, &cr) &&
                    cr < RANK_MAX)
                    lv->trig_rank = (int)cr; /* the line names its rank: "boom on rank 3" */
                lv->trig_at = now;
            }
        }
        unref(lv, en);
        off += n + 1;
    }
    lv->batch.n = 0;
    return DDX_OK;
}

int dx_live_feed(dx_live *lv, int id, const void *data, size_t n, int64_t now)
{
    if (id < 0 || (size_t)id >= lv->nsrc)
        return DDX_EINVAL;
    source *s = &lv->src[id];
    const char *p = data;
    int rc;
    s->bytes += n;
    while (n) {
        const char *nl = memchr(p, '\n', n);
        size_t seg = nl ? (size_t)(nl - p) : n;
        if (!s->skip) {
            size_t room = DX_LINE_MAX - s->part.n;
            size_t take = seg < room ? seg : room;
            if (take && dx_buf_add(&s->part, p, take))
                return DDX_ENOMEM;
            if (seg > room)
                s->skip = 1;
        }
        if (!nl)
            break;
        if (clean_line(&lv->batch, s->part.p ? s->part.p : "", s->part.n))
            return DDX_ENOMEM;
        s->part.n = 0;
        s->skip = 0;
        if (lv->batch.n >= BATCH_MAX && (rc = read_batch(lv, id, now)))
            return rc;
        p = nl + 1;
        n -= seg + 1;
    }
    return lv->batch.n ? read_batch(lv, id, now) : DDX_OK;
}

int dx_live_end_line(dx_live *lv, int id, int64_t now)
{
    if (id < 0 || (size_t)id >= lv->nsrc)
        return DDX_EINVAL;
    source *s = &lv->src[id];
    if (!s->part.n && !s->skip)
        return DDX_OK;
    if (clean_line(&lv->batch, s->part.p ? s->part.p : "", s->part.n))
        return DDX_ENOMEM;
    s->part.n = 0;
    s->skip = 0;
    return read_batch(lv, id, now);
}

int dx_live_restart(dx_live *lv, int id, int64_t now)
{
    int rc = dx_live_end_line(lv, id, now);
    if (!rc)
        lv->src[id].lines = 0;
    return rc;
}

int64_t dx_live_due(const dx_live *lv)
{
    if (!lv->armed)
        return 0;
    int64_t a = lv->armed_at + DX_LIVE_WAIT_US, b = lv->last_line_at + DX_LIVE_SETTLE_US;
    return a < b ? a : b;
}

void dx_live_trigger(const dx_live *lv, dx_live_line *out)
{
    out->source = lv->trig_source;
    out->line = lv->trig_line;
    out->rank = lv->trig_rank;
    out->at = lv->trig_at;
    out->text = lv->trig_text ? lv->trig_text : "";
}

/* ==== diagnosis ============================================================================== */

/* The digest of source s as one buffer, and for each of its lines the source's line number;
 * a partial last line is taken as the last line. */
static int digest(const source *s, dx_buf *b, uint64_t **map, size_t *nmap)
{
    size_t n = 0;
    for (const entry *e = s->first; e; e = e->next)
        n++;
    *map = dx_malloc((n + 1) * sizeof(uint64_t));
    if (!*map)
        return DDX_ENOMEM;
    size_t i = 0;
    for (const entry *e = s->first; e; e = e->next) {
        if (dx_buf_add(b, e->text, e->len) || dx_buf_addc(b, '\n'))
            return DDX_ENOMEM;
        (*map)[i++] = e->line;
    }
    if (s->part.n) {
        size_t k = s->part.n < DX_LIVE_LINE_KEEP ? s->part.n : DX_LIVE_LINE_KEEP;
        if (dx_buf_add(b, s->part.p, k) || dx_buf_addc(b, '\n'))
            return DDX_ENOMEM;
        (*map)[i++] = s->lines + 1;
    }
    *nmap = i;
    return DDX_OK;
}

typedef struct srcmap {
    uint64_t *map;
    size_t n;
    uint64_t lines, bytes;
    const char *name;
} srcmap;

/* Line numbers of the digest's buffers become the sources' own: every event the report keeps
 * (evidence, first lines, the timeline point to them), the unrecognised failure's place, the
 * facts read from lines, and each input's size. */
static void remap(ddx_report *rep, const srcmap *m, size_t nm)
{
    long *of = dx_calloc(rep->ninputs ? rep->ninputs : 1, sizeof(long));
    if (!of)
        return;
    for (size_t i = 0; i < rep->ninputs; i++) {
        of[i] = -1;
        for (size_t k = 0; k < nm; k++)
            if (m[k].map && !strcmp(rep->inputs[i].path, m[k].name))
                of[i] = (long)k;
        if (of[i] >= 0) {
            rep->inputs[i].lines = m[of[i]].lines;
            rep->inputs[i].bytes = m[of[i]].bytes;
        }
    }
    for (size_t s = 0; s < rep->kb->nsig; s++)
        for (size_t k = 0; rep->hits[s] && k < rep->hits[s]->nev; k++) {
            dx_event *e = &rep->hits[s]->ev[k];
            long w = e->input < rep->ninputs ? of[e->input] : -1;
            if (w >= 0 && e->line >= 1 && e->line <= m[w].n)
                e->line = m[w].map[e->line - 1];
        }
    /* the failure no reference explains: its place is a seq (input << 40 | line) */
    if (rep->unrec && rep->unrec->seq != DX_UNREC_NOWHERE) {
        uint64_t in = rep->unrec->seq >> 40, line = rep->unrec->seq & DX_SEQ_LINE;
        long w = in < rep->ninputs ? of[in] : -1;
        if (w >= 0 && line >= 1 && line <= m[w].n)
            rep->unrec->seq = in << 40 | m[w].map[line - 1];
    }
    for (size_t i = 0; i < rep->facts.n; i++) {
        dx_fact *x = &rep->facts.v[i];
        for (size_t k = 0; k < nm && x->line; k++)
            if (m[k].map && !strcmp(x->path, m[k].name) && x->line <= m[k].n) {
                x->line = m[k].map[x->line - 1];
                break;
            }
    }
    dx_free(of);
}

int dx_live_diagnose(dx_live *lv, const char *const *paths, size_t npaths, int flags,
                     ddx_report **out, ddx_error *err)
{
    *out = NULL;
    ddx_job *job = NULL;
    srcmap *m = dx_calloc(lv->nsrc ? lv->nsrc : 1, sizeof *m);
    dx_buf b = {0};
    int rc = m ? ddx_job_new(&job, lv->kb, err) : dx_err(err, DDX_ENOMEM, "out of memory");
    for (size_t i = 0; !rc && i < lv->nsrc; i++) {
        const source *s = &lv->src[i];
        if ((!s->first && !s->part.n) || (s->is_file && (flags & DX_LIVE_STREAMS_ONLY)))
            continue; /* nothing read yet: no input; or read whole from its path */
        b.n = 0;
        m[i].name = s->name;
        m[i].lines = s->lines + (s->part.n ? 1 : 0);
        m[i].bytes = s->bytes;
        if ((rc = digest(s, &b, &m[i].map, &m[i].n)))
            rc = dx_err(err, rc, "out of memory");
        else
            rc = ddx_job_add_buffer(job, s->name, b.p, b.n, err);
    }
    for (size_t i = 0; !rc && i < npaths; i++)
        rc = ddx_job_add_path(job, paths[i], err);
    if (!rc)
        rc = ddx_job_diagnose(job, flags & ~DX_LIVE_STREAMS_ONLY, out, err);
    if (!rc) {
        remap(*out, m, lv->nsrc);
        lv->ndiag++;
    }
    lv->armed = 0;
    for (size_t i = 0; m && i < lv->nsrc; i++)
        dx_free(m[i].map);
    dx_free(m);
    dx_buf_fini(&b);
    ddx_job_free(job);
    return rc;
}

/* ==== stalls ================================================================================= */

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A rank that printed the last step of its loop ("step 40/40") has finished, not stalled. */
static int finished(const rstate *x) { return x->total > 0 && x->step >= x->total; }

/* The median of a rank's intervals between progress lines, 0 with fewer than three. */
static double rank_step(const rstate *x)
{
    uint32_t n = x->niv < IV_KEEP ? x->niv : IV_KEEP;
    if (n < 3)
        return 0;
    float v[IV_KEEP];
    memcpy(v, x->iv, n * sizeof(float));
    qsort(v, n, sizeof(float), cmp_float);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/* The job's step time: the median of its ranks' (0 when none is known). */
static double job_step(const dx_live *lv)
{
    size_t n = 0;
    for (size_t r = 0; r < lv->nranks; r++)
        n += lv->ranks[r] && rank_step(lv->ranks[r]) > 0;
    if (!n)
        return 0;
    double *v = dx_malloc(n * sizeof(double));
    if (!v)
        return 0;
    size_t k = 0;
    for (size_t r = 0; r < lv->nranks; r++) {
        double s = lv->ranks[r] ? rank_step(lv->ranks[r]) : 0;
        if (s > 0)
            v[k++] = s;
    }
    qsort(v, k, sizeof(double), cmp_double);
    double med = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2.0;
    dx_free(v);
    return med;
}

/* Ranks in out (up to cap) ordered by when they were last active, earliest first. */
static void add_sorted(const dx_live *lv, int *out, size_t *n, size_t cap, int r, int by_prog)
{
    const rstate *x = lv->ranks[r];
    int64_t t = by_prog ? x->last_prog : x->last_at;
    size_t i = *n < cap ? *n : cap - 1;
    if (*n >= cap) {
        const rstate *y = lv->ranks[out[cap - 1]];
        if ((by_prog ? y->last_prog : y->last_at) <= t)
            return;
    }
    while (i > 0) {
        const rstate *y = lv->ranks[out[i - 1]];
        if ((by_prog ? y->last_prog : y->last_at) <= t)
            break;
        out[i] = out[i - 1];
        i--;
    }
    out[i] = r;
    if (*n < cap)
        (*n)++;
}

int dx_live_stall_check(dx_live *lv, const dx_live_stall_opts *o, int64_t now, dx_live_stall *out)
{
    memset(out, 0, sizeof *out);
    if (!lv->start_at)
        lv->start_at = now;
    out->step_s = job_step(lv);
    if (o->after_s > 0) {
        out->threshold_s = o->after_s;
        out->from_option = 1;
    } else if (out->step_s > 0) {
        out->threshold_s = o->factor * out->step_s;
        if (out->threshold_s < o->min_s)
            out->threshold_s = o->min_s;
    } else
        return 0; /* no threshold yet: no step time seen, none set */
    const int64_t thr = (int64_t)(out->threshold_s * 1e6);
    /* the whole job: no progress line (or, before the first, no line at all) for thr; a job
     * that has printed nothing yet is starting, and one whose ranks all finished their loop
     * is ending */
    int64_t ref = lv->saw_prog ? lv->last_prog_at : lv->last_line_at;
    int all_done = lv->saw_prog;
    for (size_t r = 0; r < lv->nranks && all_done; r++)
        if (lv->ranks[r] && lv->ranks[r]->nprog && !finished(lv->ranks[r]))
            all_done = 0;
    if (lv->saw_line && !all_done && now - ref >= thr) {
        if (lv->job_stalled)
            return 0;
        lv->job_stalled = 1;
        out->kind = DX_STALL_JOB;
        out->silent_s = (double)(now - ref) / 1e6;
        long long top = -1;
        for (size_t r = 0; r < lv->nranks; r++) {
            const rstate *x = lv->ranks[r];
            if (!x || !x->seen)
                continue;
            out->nsilent_total++;
            add_sorted(lv, out->silent, &out->nsilent, DX_STALL_RANKS_MAX, (int)r, 0);
            if (x->step > top)
                top = x->step;
        }
        for (size_t r = 0; r < lv->nranks && top >= 0; r++) {
            const rstate *x = lv->ranks[r];
            if (x && x->seen && x->step >= 0 && x->step < top && out->nlagging < DX_STALL_RANKS_MAX)
                out->lagging[out->nlagging++] = (int)r;
        }
        return 1;
    }
    /* one or more ranks that showed progress went silent while others progress: the others
     * made progress for at least half the threshold after the silent rank's last step (ranks
     * that stop together, a few steps apart, are the whole job stalling, not one rank) */
    int64_t newest = 0;
    for (size_t r = 0; r < lv->nranks; r++) {
        const rstate *x = lv->ranks[r];
        if (x && x->nprog >= 2 && !finished(x) && now - x->last_prog < thr) {
            if (x->last_prog > newest)
                newest = x->last_prog;
            if (out->nactive < DX_STALL_RANKS_MAX)
                out->active[out->nactive++] = (int)r;
        }
    }
    int fresh = 0;
    for (size_t r = 0; r < lv->nranks && out->nactive; r++) {
        rstate *x = lv->ranks[r];
        if (!x || x->nprog < 2 || finished(x) || now - x->last_prog < thr ||
            newest - x->last_prog < thr / 2)
            continue;
        out->nsilent_total++;
        add_sorted(lv, out->silent, &out->nsilent, DX_STALL_RANKS_MAX, (int)r, 1);
        fresh |= !x->silent_reported;
        x->silent_reported = 1;
    }
    if (!out->nsilent || !fresh) {
        memset(out, 0, sizeof *out);
        return 0;
    }
    out->kind = DX_STALL_RANKS;
    out->silent_s = (double)(now - lv->ranks[out->silent[0]]->last_prog) / 1e6;
    return 1;
}

int dx_live_rank_info(const dx_live *lv, int r, dx_live_rank *out)
{
    memset(out, 0, sizeof *out);
    if (r < 0 || (size_t)r >= lv->nranks || !lv->ranks[r] || !lv->ranks[r]->seen)
        return DDX_ENOTFOUND;
    const rstate *x = lv->ranks[r];
    out->last_text = x->last;
    out->last_at = x->last_at;
    out->source = x->source;
    out->line = x->line;
    out->step = x->step;
    out->pid = x->pid;
    return DDX_OK;
}

size_t dx_live_ranks(const dx_live *lv, int *out, size_t cap)
{
    size_t n = 0;
    for (size_t r = 0; r < lv->nranks; r++)
        if (lv->ranks[r] && lv->ranks[r]->seen) {
            if (n < cap)
                out[n] = (int)r;
            n++;
        }
    return n;
}

void dx_live_get_stats(const dx_live *lv, dx_live_stats *out)
{
    out->lines = lv->nlines;
    out->kept_lines = lv->nkept;
    out->kept_bytes = lv->bytes;
    out->diagnoses = lv->ndiag;
}
