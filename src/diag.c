/* diag.c -- a job and its diagnosis: read every input, turn confirmed matches into events,
 * score every reference as additive log-odds, and rank them.
 *
 * Reading: each input is walked (input.c); a member is classified; configs feed facts; logs are
 * scanned chunk by chunk. Vectorscan proposes (line, signal) candidates, PCRE2 confirms them,
 * and each confirmed hit becomes an event attributed to a rank and a time (attrib.c). Memory is
 * bounded by the number of signals and ranks: each signal keeps its earliest DX_HITS_KEEP
 * events and a count.
 *
 * Scoring (every term is recorded as a contribution with its reason, so the report can say
 * what moved each number):
 *   logit = ln(prior / (1 - prior))
 *         + the weight of each signal seen (its first, earliest hit; `against` subtracts)
 *         + each context condition that holds (+w) or is contradicted by a known fact (-w)
 *         + DX_EARLIEST_ROOT when its root line is the earliest root failure of the job
 *         - DX_NO_ROOT when it has no root line while another reference has one (unless its
 *           lines came more than DX_CAUSE_LAG before that root line, by the log's times).
 * Confidence is a softmax over the candidates and an explicit "nothing known" outcome whose
 * logit is 0, so a log with a lone weak line stays quiet.
 */
#include "diag.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include "jobview.h"
#include "match.h"
#include "norm.h"

#define DX_EARLIEST_ROOT 0.7
#define DX_NO_ROOT 1.0
/* a root failure this much later (in microseconds) caused nothing printed before it */
#define DX_CAUSE_LAG (INT64_C(60) * 1000000)
#define DX_KEEP_MIN 0.25 /* a candidate below this confidence is reported only with --all */
#define DX_KEEP_MAX 5
#define DX_DIFF_MIN 0.08 /* the least confidence of a differential alternative (differential()) */
#define DX_WEAK_MAX 3    /* the most weak readings of a log no candidate explains well */
#define DX_TIMELINE_MAX 60
#define DX_CONFIG_MAX (16u << 20)
#define DX_FRDUMP_MAX (256u << 20) /* one rank's flight-recorder dump */

/* ==== the job ============================================================================== */

typedef struct job_input {
    char *path; /* NULL for a buffer */
    char *name;
    char *data;
    size_t len;
} job_input;

struct ddx_job {
    const ddx_kb *kb;
    job_input *in;
    size_t n, cap;
};

int ddx_job_new(ddx_job **out, const ddx_kb *kb, ddx_error *err)
{
    if (!out || !kb)
        return dx_err(err, DDX_EINVAL, "ddx_job_new: no knowledge base");
    *out = dx_calloc(1, sizeof(ddx_job));
    if (!*out)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    (*out)->kb = kb;
    return DDX_OK;
}

void ddx_job_free(ddx_job *job)
{
    if (!job)
        return;
    for (size_t i = 0; i < job->n; i++) {
        dx_free(job->in[i].path);
        dx_free(job->in[i].name);
        dx_free(job->in[i].data);
    }
    dx_free(job->in);
    dx_free(job);
}

int ddx_job_add_path(ddx_job *job, const char *path, ddx_error *err)
{
    if (!path || !*path)
        return dx_err(err, DDX_EINVAL, "empty input path");
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) != 0)
        return dx_err(err, DDX_EIO,
                      "%s: %s (check the path; pass log files, folders or "
                      "archives)",
                      path, strerror(errno));
    if (dx_grow((void **)&job->in, &job->cap, job->n + 1, sizeof(job_input)) != DDX_OK)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    job_input *in = &job->in[job->n];
    memset(in, 0, sizeof *in);
    if (!(in->path = dx_strdup(path)))
        return dx_err(err, DDX_ENOMEM, "out of memory");
    job->n++;
    return DDX_OK;
}

int ddx_job_add_buffer(ddx_job *job, const char *name, const void *data, size_t len, ddx_error *err)
{
    if (dx_grow((void **)&job->in, &job->cap, job->n + 1, sizeof(job_input)) != DDX_OK)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    job_input *in = &job->in[job->n];
    memset(in, 0, sizeof *in);
    in->name = dx_strdup(name ? name : "buffer");
    in->data = dx_malloc(len ? len : 1);
    if (!in->name || !in->data) {
        dx_free(in->name);
        dx_free(in->data);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    if (len)
        memcpy(in->data, data, len);
    in->len = len;
    job->n++;
    return DDX_OK;
}

/* ==== text helpers ========================================================================= */

const char *dx_level_name(double c)
{
    return c >= 0.8 ? "confirmed" : c >= 0.5 ? "likely" : "possible";
}

/* Length of the valid UTF-8 sequence at p (1..4), or 0 when invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    if (p[0] < 0x80)
        return 1;
    size_t len = (p[0] & 0xE0) == 0xC0   ? 2
                 : (p[0] & 0xF0) == 0xE0 ? 3
                 : (p[0] & 0xF8) == 0xF0 ? 4
                                         : 0;
    if (!len || len > n || (len == 2 && p[0] < 0xC2))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if (len == 3 && ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0)))
        return 0;
    if (len == 4 &&
        ((p[0] == 0xF0 && p[1] < 0x90) || p[0] > 0xF4 || (p[0] == 0xF4 && p[1] >= 0x90)))
        return 0;
    return len;
}

char *dx_clean_text(const char *s, size_t n, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    dx_buf b = {0};
    size_t i = 0;
    while (i < n) {
        if (b.n + 4 > max) {
            dx_buf_add(&b, "...", 3);
            break;
        }
        size_t l = utf8_len(p + i, n - i);
        if (l == 0) {
            dx_buf_add(&b, "\xEF\xBF\xBD", 3); /* U+FFFD */
            i++;
        } else if (l == 1 && (p[i] < 0x20 || p[i] == 0x7F)) {
            dx_buf_addc(&b, p[i] == '\t' ? ' ' : '?');
            i++;
        } else {
            dx_buf_add(&b, p + i, l);
            i += l;
        }
    }
    if (!b.p && dx_buf_add(&b, "", 0) != DDX_OK)
        return NULL;
    return b.p;
}

/* ==== reading ============================================================================== */

typedef struct scan_state {
    ddx_report *rep;
    const ddx_kb *kb;
    dx_scan *scan;
    ddx_error *err;
    int year; /* the year of the first full date seen: fills glog times */
    int rc;
    long rescan; /* >= 0: the input index of a config whose lines are being scanned */
} scan_state;

static int add_warning(ddx_report *rep, const char *msg)
{
    if (rep->nwarnings >= 100)
        return DDX_OK;
    if (dx_grow((void **)&rep->warnings, &rep->capwarnings, rep->nwarnings + 1, sizeof(char *)))
        return DDX_ENOMEM;
    if (!(rep->warnings[rep->nwarnings] = dx_strdup(msg)))
        return DDX_ENOMEM;
    rep->nwarnings++;
    return DDX_OK;
}

static void on_warn(void *ud, const char *msg)
{
    scan_state *st = ud;
    add_warning(st->rep, msg);
}

static int add_rank(int **arr, size_t *n, size_t *cap, int rank, size_t max)
{
    size_t lo = 0, hi = *n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((*arr)[mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < *n && (*arr)[lo] == rank)
        return DDX_OK;
    if (*n >= max)
        return DDX_OK;
    if (dx_grow((void **)arr, cap, *n + 1, sizeof(int)))
        return DDX_ENOMEM;
    memmove(*arr + lo + 1, *arr + lo, (*n - lo) * sizeof(int));
    (*arr)[lo] = rank;
    (*n)++;
    return DDX_OK;
}

/* a before b: by time when both have one, else by reading order */
static int event_before(const dx_event *a, const dx_event *b)
{
    if (a->has_time && b->has_time && a->tkey != b->tkey)
        return a->tkey < b->tkey;
    return a->seq < b->seq;
}

/* a came more than DX_CAUSE_LAG before b by the log's own times: b cannot have caused it */
static int long_before(const dx_event *a, const dx_event *b)
{
    return a && b && a->has_time && b->has_time && a->tkey < b->tkey - DX_CAUSE_LAG;
}

static void event_fini(dx_event *e)
{
    dx_free(e->text);
    dx_free(e->caps);
    dx_free(e->before);
    dx_free(e->after);
    e->text = e->caps = e->before = e->after = NULL;
}

/* Where the line being recorded sits, for the lines around it: the chunk's text [lo, hi) of
 * whole lines, the line's index among them, and each line's number (first[i] when the chunk's
 * lines are logical ones that may span several physical lines, else the line's number plus its
 * offset from the recorded one). */
typedef struct ctx_src {
    const char *lo, *hi;
    const uint64_t *first; /* NULL: consecutive numbers from line */
    size_t idx;
    uint64_t line;
} ctx_src;

static uint64_t ctx_number(const ctx_src *c, long delta)
{
    return c->first ? c->first[(long)c->idx + delta] : (uint64_t)((long long)c->line + delta);
}

/* Up to DX_CONTEXT_LINES lines of the chunk just before (before) or after the line at
 * [at, at + len), each "NUMBER\tTEXT" with TEXT cleaned like an event's, joined by '\n'. NULL
 * when there are none; *oom set when memory ran out. */
static char *context_lines(const ctx_src *c, const char *at, size_t len, int before, int *oom)
{
    dx_str v[DX_CONTEXT_LINES];
    size_t n = 0;
    if (before) {
        const char *end = at > c->lo ? at - 1 : c->lo; /* the '\n' ending the line before */
        while (n < DX_CONTEXT_LINES && end > c->lo) {
            const char *nl = memrchr(c->lo, '\n', (size_t)(end - c->lo));
            const char *start = nl ? nl + 1 : c->lo;
            v[n++] = (dx_str){start, (size_t)(end - start)};
            end = nl ? nl : c->lo;
        }
    } else {
        const char *p = at + len + 1;
        while (n < DX_CONTEXT_LINES && p < c->hi) {
            const char *nl = memchr(p, '\n', (size_t)(c->hi - p));
            const char *end = nl ? nl : c->hi;
            v[n++] = (dx_str){p, (size_t)(end - p)};
            p = end + 1;
        }
    }
    dx_buf b = {0};
    for (size_t k = 0; k < n; k++) {
        /* reading order: the lines before were found nearest first */
        size_t i = before ? n - 1 - k : k;
        long delta = before ? -(long)(i + 1) : (long)(i + 1);
        char *t = dx_clean_text(v[i].p, v[i].n, 300);
        if (!t || (k && dx_buf_addc(&b, '\n')) ||
            dx_buf_addf(&b, "%llu\t%s", (unsigned long long)ctx_number(c, delta), t)) {
            dx_free(t);
            dx_buf_fini(&b);
            *oom = 1;
            return NULL;
        }
        dx_free(t);
    }
    return n ? (char *)dx_buf_cstr(&b) : NULL;
}

static const dx_sighits no_hits;

/* The hits of signal s (an empty record when it has none). */
static const dx_sighits *hits_of(const ddx_report *rep, size_t s)
{
    return rep->hits[s] ? rep->hits[s] : &no_hits;
}

/* Records a confirmed hit of signal sig on line (len bytes, in the chunk ctx describes) as an
 * event, when it is among the signal's earliest. */
static int record_hit(scan_state *st, uint32_t sig, const dx_event *proto, const char *line,
                      size_t len, const ctx_src *ctx)
{
    if (!st->rep->hits[sig] && !(st->rep->hits[sig] = dx_calloc(1, sizeof(dx_sighits))))
        return DDX_ENOMEM;
    dx_sighits *h = st->rep->hits[sig];
    /* one physical line read as several logical lines (norm.c) counts once per signal */
    if (h->count && h->last_seq == proto->seq)
        return DDX_OK;
    h->last_seq = proto->seq;
    h->count++;
    if (proto->rank >= 0) {
        int dup = 0;
        for (size_t i = 0; i < h->nranks; i++)
            dup |= h->ranks[i] == proto->rank;
        if (!dup && h->nranks < DX_ARRAY_LEN(h->ranks))
            h->ranks[h->nranks++] = proto->rank;
    }
    /* keep the earliest DX_HITS_KEEP events */
    size_t pos = h->nev;
    while (pos > 0 && event_before(proto, &h->ev[pos - 1]))
        pos--;
    if (pos >= DX_HITS_KEEP)
        return DDX_OK;
    if (h->nev == DX_HITS_KEEP)
        event_fini(&h->ev[--h->nev]);
    memmove(&h->ev[pos + 1], &h->ev[pos], (h->nev - pos) * sizeof(dx_event));
    dx_event *e = &h->ev[pos];
    *e = *proto;
    e->text = dx_clean_text(line, len, 400);
    e->caps = NULL;
    dx_buf caps = {0};
    const char *name;
    dx_str v;
    for (size_t i = 0; dx_scan_capture_at(st->scan, i, &name, &v); i++) {
        if (!v.p)
            continue;
        char *val = dx_clean_text(v.p, v.n, 120);
        dx_buf_addf(&caps, "%s%s=%s", caps.n ? ", " : "", name, val ? val : "");
        dx_free(val);
    }
    e->caps = caps.p;
    e->before = e->after = NULL;
    h->nev++;
    if (!e->text)
        return DDX_ENOMEM;
    if (st->kb->sigs[sig]->role != DX_ROLE_NOISE) {
        int oom = 0;
        e->before = context_lines(ctx, line, len, 1, &oom);
        e->after = context_lines(ctx, line, len, 0, &oom);
        if (oom)
            return DDX_ENOMEM;
    }
    return DDX_OK;
}

static int parse_int(dx_str s)
{
    long v = 0;
    if (!s.n || s.n > 9)
        return -1;
    for (size_t i = 0; i < s.n; i++) {
        if (s.p[i] < '0' || s.p[i] > '9')
            return -1;
        v = v * 10 + (s.p[i] - '0');
    }
    return (int)v;
}

static int scan_log(scan_state *st, const dx_member *m, dx_reader *r, dx_input_info *info,
                    uint32_t input_index, int as_log)
{
    const ddx_kb *kb = st->kb;
    int is_local = 0;
    int file_rank = dx_attrib_rank_from_name(m->name ? m->name : m->path, &is_local);
    dx_time last_time;
    int have_last_time = 0;
    int last_rank = -1; /* consecutive lines of one rank skip the rank set */
    memset(&last_time, 0, sizeof last_time);
    dx_chunk c;
    dx_norm norm = {0};
    int rc;
    while ((rc = dx_reader_next(r, &c, st->err)) > 0) {
        const dx_cand *cands;
        size_t ncands, ci = 0;
        /* logical lines: what terminals, trackers and cluster frameworks did to the text undone
         * (norm.c); each keeps the number of the physical line it starts on */
        int logical = dx_norm_chunk(&norm, c.data, c.len, c.first_line);
        if (logical < 0) {
            rc = logical;
            break;
        }
        const char *data = logical ? norm.out.p : c.data;
        size_t dlen = logical ? norm.out.n : c.len;
        rc = dx_scan_chunk(st->scan, data, dlen, &cands, &ncands, st->err);
        if (rc)
            break;
        for (size_t t = 0; t < c.ntrunc && st->rep->nwarnings < 20; t++) {
            char w[600];
            snprintf(w, sizeof w, "%s:%llu: line longer than %u KiB; only its start was read",
                     m->path, (unsigned long long)c.trunc_lines[t], DX_LINE_MAX >> 10);
            if ((rc = add_warning(st->rep, w)))
                goto done;
        }
        uint64_t lineno = c.first_line;
        size_t off = 0, li = 0;
        while (off < dlen) {
            const char *line = data + off;
            const char *nl = memchr(line, '\n', dlen - off);
            size_t len = nl ? (size_t)(nl - line) : dlen - off;
            if (logical)
                lineno = norm.first[li];
            li++;
            dx_attr a;
            dx_attrib_line(line, len, &a);
            size_t body_end = dx_norm_body_end(line, a.body, len);
            int rank = a.rank >= 0 ? a.rank : a.local_rank >= 0 ? a.local_rank : file_rank;
            if (a.has_time) {
                if (a.time.year)
                    st->year = st->year ? st->year : a.time.year;
                last_time = a.time;
                have_last_time = 1;
            }
            if (rank >= 0 && rank != last_rank &&
                add_rank(&info->ranks, &info->nranks, &info->capranks, rank, 4096)) {
                rc = DDX_ENOMEM;
                goto done;
            }
            last_rank = rank;
            if (as_log && ((rc = dx_job_line(&st->rep->job, rank, &a)) ||
                           (rc = dx_view_note_line(st->rep, rank,
                                                   ((uint64_t)input_index << 40) | lineno, &a))))
                goto done;
            for (; ci < ncands && cands[ci].line == off; ci++) {
                uint32_t sig = cands[ci].sig;
                if (!dx_scan_confirm_line(st->scan, sig, line, len, a.body, body_end - a.body))
                    continue;
                if (kb->sig_ref[sig] == DX_SIG_FACT) {
                    if ((rc = dx_fact_extract(kb->sig_idx[sig], st->scan, &st->rep->facts, m->path,
                                              lineno)))
                        goto done;
                    continue;
                }
                if (!as_log)
                    continue; /* env dumps give facts, not failures */
                if (kb->sig_ref[sig] == DX_SIG_JOB) {
                    /* (the line's own time, for the extractors that time what they see) */
                    st->rep->job.line_has_time = a.has_time;
                    if (a.has_time)
                        st->rep->job.line_time = a.time;
                    if ((rc = dx_job_hit(&st->rep->job, kb->sig_idx[sig], st->scan, rank, m->path,
                                         lineno, line + a.body, len - a.body,
                                         ((uint64_t)input_index << 40) | lineno)))
                        goto done;
                    continue;
                }
                const dx_signal *sg = kb->sigs[sig];
                if (sg->role == DX_ROLE_NOISE)
                    st->rep->noise_lines++; /* kept as events too, to show as noise */
                dx_event ev = {0};
                ev.input = input_index;
                ev.line = lineno;
                ev.rank = rank;
                dx_str cr;
                if (ev.rank < 0 && dx_scan_capture(st->scan, "rank", &cr))
                    ev.rank = parse_int(cr);
                ev.blamed = dx_scan_capture(st->scan, "culprit", &cr) ? parse_int(cr) : -1;
                ev.has_time = have_last_time;
                ev.time = last_time;
                ev.seq = ((uint64_t)input_index << 40) | lineno;
                ctx_src ctx = {data, data + dlen, logical ? norm.first : NULL, li - 1, lineno};
                if ((rc = record_hit(st, sig, &ev, line, len, &ctx)))
                    goto done;
                if (sg->role == DX_ROLE_ROOT && ev.rank >= 0 && kb->sig_ref[sig] < kb->nrefs) {
                    dx_rank *x = dx_job_rank(&st->rep->job, ev.rank);
                    if (x && !x->first_error)
                        x->first_error = dx_clean_text(line + a.body, len - a.body, 200);
                }
            }
            /* a line after the latest phase start in the same input: the job went on */
            if (st->rep->job.phase_last &&
                st->rep->job.phase_seq != (((uint64_t)input_index << 40) | lineno) &&
                st->rep->job.phase_seq >> 40 == input_index && !dx_blank(line, len))
                st->rep->job.phase_last = 0;
            lineno++;
            off += len + 1;
        }
        info->lines = c.first_line + c.nlines - 1;
    }
    if (!info->bytes)
        info->bytes = dx_reader_bytes(r);
done:
    dx_norm_fini(&norm);
    return rc;
}

static int on_member(void *ud, const dx_member *m, dx_reader *r)
{
    scan_state *st = ud;
    ddx_report *rep = st->rep;
    const char *head;
    size_t nhead;
    if (st->rescan >= 0) {
        /* the lines of a config file: people paste an error under the YAML they used */
        ddx_error e = {0};
        st->err = &e;
        return scan_log(st, m, r, &rep->inputs[st->rescan], (uint32_t)st->rescan, 1);
    }
    dx_reader_peek(r, &head, &nhead);
    dx_kind kind = dx_input_classify(m->name ? m->name : m->path, head, nhead);
    if (dx_grow((void **)&rep->inputs, &rep->capinputs, rep->ninputs + 1, sizeof(dx_input_info)))
        return DDX_ENOMEM;
    dx_input_info *info = &rep->inputs[rep->ninputs];
    memset(info, 0, sizeof *info);
    info->kind = kind;
    if (!(info->path = dx_strdup(m->path)))
        return DDX_ENOMEM;
    uint32_t idx = (uint32_t)rep->ninputs++;
    int rc = DDX_OK;
    ddx_error e = {0};
    if (kind == DX_KIND_CONFIG) {
        char *text = NULL;
        size_t len = 0;
        rc = dx_reader_read_all(r, DX_CONFIG_MAX, &text, &len, &e);
        if (rc == DDX_OK) {
            info->bytes = len;
            for (size_t i = 0; i < len; i++)
                info->lines += text[i] == '\n';
            rc = dx_facts_from_config(&rep->facts, m->path, text, len);
            if (rc == DDX_OK) {
                st->rescan = (long)idx;
                rc = dx_input_walk_buffer(m->path, text, len, on_member, on_warn, st, &e);
                st->rescan = -1;
            }
        }
        dx_free(text);
    } else if (kind == DX_KIND_LOG || kind == DX_KIND_ENV) {
        st->err = &e;
        rc = scan_log(st, m, r, info, idx, kind == DX_KIND_LOG);
    } else if (kind == DX_KIND_FRDUMP) {
        char *data = NULL;
        size_t len = 0;
        rc = dx_reader_read_all(r, DX_FRDUMP_MAX, &data, &len, &e);
        if (rc == DDX_OK) {
            info->bytes = len;
            if (dx_grow((void **)&rep->fr, &rep->capfr, rep->nfr + 1, sizeof(dx_frdump))) {
                dx_free(data);
                return DDX_ENOMEM;
            }
            dx_frdump *d = &rep->fr[rep->nfr++];
            rc = dx_frdump_parse(m->name ? m->name : m->path, data, len, d, &e);
            if (rc == DDX_OK && d->rank >= 0 &&
                (add_rank(&info->ranks, &info->nranks, &info->capranks, d->rank, 4096) ||
                 !dx_job_rank(&rep->job, d->rank)))
                rc = DDX_ENOMEM;
        }
        dx_free(data);
    } else {
        info->bytes = m->size_hint;
        if (kind == DX_KIND_BINARY) {
            dx_buf w = {0};
            dx_buf_addf(&w,
                        "%s: not text; skipped (pass the logs it holds as plain files or an "
                        "archive)",
                        m->path);
            rc = add_warning(rep, dx_buf_cstr(&w));
            dx_buf_fini(&w);
        }
    }
    if (rc == DDX_ENOMEM)
        return rc;
    if (rc) {
        /* a member that cannot be read to the end: keep what was read, warn, go on */
        rc = add_warning(rep, e.message[0] ? e.message : "an input could not be read");
    }
    return rc;
}

/* ==== scoring ============================================================================== */

static int add_contrib(dx_finding *f, double value, const char *fmt, ...) DX_PRINTF(3, 4);
static int add_contrib(dx_finding *f, double value, const char *fmt, ...)
{
    if (dx_grow((void **)&f->contribs, &f->capcontribs, f->ncontribs + 1, sizeof(dx_contrib)))
        return DDX_ENOMEM;
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    dx_contrib *c = &f->contribs[f->ncontribs];
    c->value = value;
    if (!(c->why = dx_strdup(buf)))
        return DDX_ENOMEM;
    f->ncontribs++;
    f->logit += value;
    return DDX_OK;
}

static const char *where(const ddx_report *rep, const dx_event *e, char *buf, size_t cap)
{
    if (e->rank >= 0)
        snprintf(buf, cap, "%s:%llu, rank %d", rep->inputs[e->input].path,
                 (unsigned long long)e->line, e->rank);
    else
        snprintf(buf, cap, "%s:%llu", rep->inputs[e->input].path, (unsigned long long)e->line);
    return buf;
}

static void finding_fini(dx_finding *f)
{
    for (size_t i = 0; i < f->ncontribs; i++)
        dx_free(f->contribs[i].why);
    dx_free(f->contribs);
    dx_free(f->evid);
    dx_free(f->ranks);
    for (size_t i = 0; i < f->nchecks; i++)
        dx_free(f->checks[i].because);
    dx_free(f->checks);
}

static int describe_fact(char *buf, size_t cap, const dx_fact *x)
{
    if (x->line)
        return snprintf(buf, cap, "%s = %s, from %s:%llu", x->name, x->value, x->path,
                        (unsigned long long)x->line);
    return snprintf(buf, cap, "%s = %s, from %s", x->name, x->value, x->path);
}

/* Scores reference r into f; returns 0 with f->ref NULL when it is no candidate. */
static int score_ref(ddx_report *rep, size_t ri, size_t first_sig, dx_finding *f)
{
    const ddx_kb *kb = rep->kb;
    const dx_ref *r = kb->refs[ri];
    memset(f, 0, sizeof *f);
    if (!strcmp(r->kind, "noise"))
        return DDX_OK;
    int seen = 0;
    for (size_t i = 0; i < r->nsignals; i++)
        if (hits_of(rep, first_sig + i)->count && r->signals[i].role != DX_ROLE_AGAINST)
            seen = 1;
    double ctx_sum = 0;
    int ctx_known = 0;
    if (!seen && r->nsignals) {
        /* no line of its own, but a fact that alone proves it (weight >= 2) still makes it a
         * candidate: a straggler seen only in step times, a config that cannot work */
        int decisive = 0;
        for (size_t i = 0; i < r->ncontext && !decisive; i++)
            decisive =
                r->context[i].weight >= 2.0 && dx_cond_eval(&r->context[i], &rep->facts, NULL) == 1;
        if (!decisive)
            return DDX_OK;
    }
    if (!r->nsignals) {
        /* a configuration reference proved by facts alone: every condition must hold */
        for (size_t i = 0; i < r->ncontext; i++) {
            int v = dx_cond_eval(&r->context[i], &rep->facts, NULL);
            if (v != 1)
                return DDX_OK;
            ctx_known++;
        }
        if (!ctx_known)
            return DDX_OK;
    }
    f->ref = r;
    int rc;
    char wbuf[300];
    double p = r->prior;
    if ((rc = add_contrib(f, log(p / (1 - p)), "prior: %.3g of real failures are this", p)))
        return rc;
    for (size_t i = 0; i < r->nsignals; i++) {
        const dx_sighits *h = hits_of(rep, first_sig + i);
        const dx_signal *s = &r->signals[i];
        if (!h->count)
            continue;
        const dx_event *e = &h->ev[0];
        double w = s->role == DX_ROLE_AGAINST ? -s->weight : s->weight;
        rc = add_contrib(f, w, "%s line '%s' at %s%s", dx_role_name(s->role), s->id,
                         where(rep, e, wbuf, sizeof wbuf), h->count > 1 ? " (and more)" : "");
        if (rc)
            return rc;
        if (s->role == DX_ROLE_ROOT) {
            if (!f->has_root || event_before(e, f->first))
                f->first = e;
            f->has_root = 1;
            for (size_t k = 0; k < h->nev; k++)
                if (h->ev[k].rank >= 0 &&
                    (!f->first_ranked || event_before(&h->ev[k], f->first_ranked)))
                    f->first_ranked = &h->ev[k];
        } else if (!f->has_root && s->role != DX_ROLE_AGAINST &&
                   (!f->first || event_before(e, f->first)))
            f->first = e;
        for (size_t k = 0; k < h->nev; k++) {
            if (dx_grow((void **)&f->evid, &f->capevid, f->nevid + 1, sizeof(dx_evid)))
                return DDX_ENOMEM;
            f->evid[f->nevid++] = (dx_evid){&h->ev[k], s, w};
        }
        for (size_t k = 0; k < h->nranks; k++)
            if (s->role != DX_ROLE_AGAINST &&
                add_rank(&f->ranks, &f->nranks, &f->capranks, h->ranks[k], 1024))
                return DDX_ENOMEM;
    }
    for (size_t i = 0; i < r->ncontext; i++) {
        const dx_cond *c = &r->context[i];
        dx_fact *x = NULL;
        int v = dx_cond_eval(c, &rep->facts, &x);
        if (v < 0)
            continue;
        char fb[400];
        if (x)
            describe_fact(fb, sizeof fb, x);
        else
            snprintf(fb, sizeof fb, "no %s in the inputs", c->fact);
        /* a condition that fails lowers the candidate; a condition that argues against it
         * (negative weight) counts only when it holds */
        double w = v ? c->weight : c->weight > 0 && !c->raise_only ? -c->weight : 0;
        if (w == 0)
            continue;
        ctx_sum += w;
        if ((rc = add_contrib(f, w, "%s%s%s (%s)", c->says ? c->says : c->fact,
                              v ? "" : ": contradicted", "", fb)))
            return rc;
    }
    (void)ctx_sum;
    return DDX_OK;
}

static int cmp_evid(const void *a, const void *b)
{
    const dx_evid *x = a, *y = b;
    if (event_before(x->ev, y->ev))
        return -1;
    if (event_before(y->ev, x->ev))
        return 1;
    return 0;
}

static int cmp_finding(const void *a, const void *b)
{
    const dx_finding *x = a, *y = b;
    if (x->logit != y->logit)
        return x->logit > y->logit ? -1 : 1;
    return strcmp(x->ref->id, y->ref->id);
}

static int pick_variant(const ddx_report *rep, size_t first_sig, dx_finding *f)
{
    const dx_ref *r = f->ref;
    double best = 0;
    for (size_t v = 0; v < r->nvariants; v++) {
        double w = 0;
        for (size_t j = 0; j < r->variants[v].nsignals; j++)
            for (size_t i = 0; i < r->nsignals; i++)
                if (!strcmp(r->signals[i].id, r->variants[v].signals[j]) &&
                    hits_of(rep, first_sig + i)->count)
                    w += r->signals[i].weight + 0.001; /* a weightless signal still selects */
        if (w > best) {
            best = w;
            f->variant = &r->variants[v];
        }
    }
    return DDX_OK;
}

static int resolve_checks(ddx_report *rep, dx_finding *f)
{
    const dx_ref *r = f->ref;
    if (!r->nchecks)
        return DDX_OK;
    f->checks = dx_calloc(r->nchecks, sizeof(dx_checkres));
    if (!f->checks)
        return DDX_ENOMEM;
    f->nchecks = r->nchecks;
    for (size_t i = 0; i < r->nchecks; i++) {
        const dx_check *c = &r->checks[i];
        dx_checkres *cr = &f->checks[i];
        char buf[500];
        cr->chk = c;
        if (!c->cond.fact) {
            cr->status = DX_CHECK_NOT_VISIBLE;
            snprintf(buf, sizeof buf, "check by hand%s%s", c->command ? ": " : "",
                     c->command ? c->command : "");
        } else {
            dx_fact *x = NULL;
            int v = dx_cond_eval(&c->cond, &rep->facts, &x);
            cr->status = v < 0 ? DX_CHECK_NOT_VISIBLE
                         : v   ? DX_CHECK_CONFIRMED
                               : DX_CHECK_CONTRADICTED;
            if (x)
                describe_fact(buf, sizeof buf, x);
            else
                snprintf(buf, sizeof buf, "%s is not in the inputs%s%s", c->cond.fact,
                         c->command ? "; to see it: " : "", c->command ? c->command : "");
        }
        if (!(cr->because = dx_strdup(buf)))
            return DDX_ENOMEM;
    }
    return DDX_OK;
}

static int cmp_tl(const void *a, const void *b)
{
    const dx_tl *x = a, *y = b;
    if (event_before(x->ev, y->ev))
        return -1;
    if (event_before(y->ev, x->ev))
        return 1;
    return 0;
}

static int build_timeline(ddx_report *rep)
{
    const ddx_kb *kb = rep->kb;
    size_t n = 0;
    for (size_t s = 0; s < kb->nsig; s++)
        if (DX_SIG_IS_REF(kb->sig_ref[s]) && kb->sigs[s]->role != DX_ROLE_NOISE)
            n += hits_of(rep, s)->nev;
    if (!n)
        return DDX_OK;
    rep->timeline = dx_calloc(n, sizeof(dx_tl));
    if (!rep->timeline)
        return DDX_ENOMEM;
    for (size_t s = 0; s < kb->nsig; s++) {
        if (!DX_SIG_IS_REF(kb->sig_ref[s]) || kb->sigs[s]->role == DX_ROLE_NOISE)
            continue;
        for (size_t k = 0; k < hits_of(rep, s)->nev; k++)
            rep->timeline[rep->ntimeline++] =
                (dx_tl){&rep->hits[s]->ev[k], kb->refs[kb->sig_ref[s]], kb->sigs[s]};
    }
    qsort(rep->timeline, rep->ntimeline, sizeof(dx_tl), cmp_tl);
    /* one entry per line: the same line can match several references */
    size_t w = 0;
    for (size_t i = 0; i < rep->ntimeline; i++) {
        if (w && rep->timeline[w - 1].ev->seq == rep->timeline[i].ev->seq)
            continue;
        rep->timeline[w++] = rep->timeline[i];
    }
    rep->ntimeline = w < DX_TIMELINE_MAX ? w : DX_TIMELINE_MAX;
    return DDX_OK;
}

/* Is every line that supports a also a line that supports b? Then a is another reading of the
 * same evidence (often a more or less specific form of b), not a competing explanation. */
static int evidence_within(const dx_finding *a, const dx_finding *b)
{
    for (size_t i = 0; i < a->nevid; i++) {
        if (a->evid[i].weight <= 0)
            continue;
        int found = 0;
        for (size_t j = 0; j < b->nevid && !found; j++)
            found = b->evid[j].ev->seq == a->evid[i].ev->seq;
        if (!found)
            return 0;
    }
    return 1;
}

/* Confidence is a softmax over the explanations that compete with a candidate, plus the
 * "nothing known" outcome (logit 0). Candidates resting on the same lines as each other do not
 * compete (one is a reading of the other's evidence); candidates that explain different lines
 * do. rep->f must be sorted best first. */
static void confidences(ddx_report *rep)
{
    size_t n = rep->nf;
    for (size_t i = 0; i < n; i++) {
        dx_finding *f = &rep->f[i];
        double z = 1.0 + exp(f->logit);
        for (size_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            const dx_finding *g = &rep->f[j];
            /* g competes unless one's evidence lies within the other's, or g is itself a
             * reading of a better candidate's lines */
            if (evidence_within(f, g) || evidence_within(g, f))
                continue;
            int subsumed = 0;
            for (size_t k = 0; k < j && !subsumed; k++)
                subsumed = k != i && evidence_within(g, &rep->f[k]);
            if (!subsumed)
                z += exp(g->logit);
        }
        f->confidence = exp(f->logit) / z;
    }
}
/* The differential: a candidate below DX_KEEP_MIN is still shown when it reads one of the top
 * finding's root lines as a failure line of its own (its root, or a symptom it produces), so the
 * same message is explained two ways (the reader sees both, and the checks that tell them
 * apart). Down to DX_DIFF_MIN. */
static int differential(const ddx_report *rep, size_t i)
{
    const dx_finding *top = &rep->f[0], *f = &rep->f[i];
    if (i == 0 || f->confidence < DX_DIFF_MIN || !top->has_root)
        return 0;
    for (size_t a = 0; a < top->nevid; a++) {
        if (top->evid[a].sig->role != DX_ROLE_ROOT || top->evid[a].weight <= 0)
            continue;
        for (size_t b = 0; b < f->nevid; b++)
            if ((f->evid[b].sig->role == DX_ROLE_ROOT || f->evid[b].sig->role == DX_ROLE_SYMPTOM) &&
                f->evid[b].weight > 0 && f->evid[b].ev->seq == top->evid[a].ev->seq)
                return 1;
    }
    return 0;
}

/* Whether a known-harmless line (a signal of a noise reference) is the line read at seq. */
static int is_noise_line(const ddx_report *rep, uint64_t seq)
{
    const ddx_kb *kb = rep->kb;
    for (size_t s = 0; s < kb->nsig; s++) {
        if (!DX_SIG_IS_REF(kb->sig_ref[s]) || kb->sigs[s]->role != DX_ROLE_NOISE)
            continue;
        const dx_sighits *h = hits_of(rep, s);
        for (size_t k = 0; k < h->nev; k++)
            if (h->ev[k].seq == seq)
                return 1;
    }
    return 0;
}

/* Whether a finding rests on a failure line of its own (a root or symptom line that counts for
 * it), not only on launcher wrappers, context facts, timing or lines the harmless catalogue
 * knows (ZeRO-3's "Invalidate trace cache" is a symptom of some hangs, and by itself noise). */
static int has_failure_line(const ddx_report *rep, const dx_finding *f)
{
    for (size_t k = 0; k < f->nevid; k++)
        if (f->evid[k].weight > 0 &&
            (f->evid[k].sig->role == DX_ROLE_ROOT || f->evid[k].sig->role == DX_ROLE_SYMPTOM) &&
            !is_noise_line(rep, f->evid[k].ev->seq))
            return 1;
    return 0;
}

/* Whether any reference read a failure line (a root or symptom line that is not one the
 * harmless catalogue knows) anywhere in the inputs. */
static int any_failure_line(const ddx_report *rep)
{
    const ddx_kb *kb = rep->kb;
    for (size_t s = 0; s < kb->nsig; s++) {
        if (!DX_SIG_IS_REF(kb->sig_ref[s]) ||
            (kb->sigs[s]->role != DX_ROLE_ROOT && kb->sigs[s]->role != DX_ROLE_SYMPTOM))
            continue;
        const dx_sighits *h = hits_of(rep, s);
        for (size_t k = 0; k < h->nev; k++)
            if (!is_noise_line(rep, h->ev[k].seq))
                return 1;
    }
    return 0;
}

static int score_all(ddx_report *rep)
{
    const ddx_kb *kb = rep->kb;
    int rc;
    rep->f = dx_calloc(kb->nrefs ? kb->nrefs : 1, sizeof(dx_finding));
    size_t *first_sig = dx_calloc(kb->nrefs ? kb->nrefs : 1, sizeof(size_t));
    size_t *fsig = dx_calloc(kb->nrefs ? kb->nrefs : 1, sizeof(size_t));
    if (!rep->f || !first_sig || !fsig) {
        dx_free(first_sig);
        dx_free(fsig);
        return DDX_ENOMEM;
    }
    for (size_t r = 0, s = 0; r < kb->nrefs; r++) {
        first_sig[r] = s;
        s += kb->refs[r]->nsignals;
    }
    for (size_t r = 0; r < kb->nrefs; r++) {
        dx_finding f;
        if ((rc = score_ref(rep, r, first_sig[r], &f))) {
            finding_fini(&f);
            goto done;
        }
        if (f.ref) {
            fsig[rep->nf] = first_sig[r];
            rep->f[rep->nf++] = f;
        }
    }
    /* the differential: the earliest root failure outranks what it caused. The root lines of a
     * reference whose lines are printed by the victims of another rank (culprit: other-rank: a
     * peer closed the connection, a Ray node died) give way to a root failure of another kind
     * unless the log's own times put them well before it: the victim's line and the crash that
     * caused it are printed within moments, and interleaved output puts either first. */
    const dx_event *earliest = NULL, *victim = NULL;
    for (size_t i = 0; i < rep->nf; i++) {
        const dx_event **e = rep->f[i].ref->culprit_other ? &victim : &earliest;
        if (rep->f[i].has_root && (!*e || event_before(rep->f[i].first, *e)))
            *e = rep->f[i].first;
    }
    if (!earliest || long_before(victim, earliest))
        earliest = victim;
    char wbuf[300];
    for (size_t i = 0; i < rep->nf && earliest; i++) {
        dx_finding *f = &rep->f[i];
        /* a reference that reads the earliest root line itself (whatever role it gives it) is
         * an alternative explanation of the failure, not a consequence of it */
        int covers = 0;
        for (size_t k = 0; k < f->nevid && !covers; k++)
            covers = f->evid[k].weight > 0 && f->evid[k].ev->seq == earliest->seq;
        if (covers)
            rc = add_contrib(f, DX_EARLIEST_ROOT, "the earliest root failure in the job (%s)",
                             where(rep, earliest, wbuf, sizeof wbuf));
        else if (!f->has_root && !long_before(f->first, earliest))
            rc = add_contrib(f, -DX_NO_ROOT,
                             "only consequences seen, while a root failure is "
                             "at %s",
                             where(rep, earliest, wbuf, sizeof wbuf));
        else
            rc = DDX_OK;
        if (rc)
            goto done;
    }
    for (size_t i = 0; i < rep->nf; i++) {
        dx_finding *f = &rep->f[i];
        if (f->nevid > 1)
            qsort(f->evid, f->nevid, sizeof(dx_evid), cmp_evid);
        if ((rc = pick_variant(rep, fsig[i], f)) || (rc = resolve_checks(rep, f)))
            goto done;
    }
    qsort(rep->f, rep->nf, sizeof(dx_finding), cmp_finding);
    confidences(rep);
    size_t kept = 0;
    for (size_t i = 0; i < rep->nf; i++) {
        if (kept >= DX_KEEP_MAX || (rep->f[i].confidence < DX_KEEP_MIN && !differential(rep, i)))
            break;
        kept++;
    }
    const int kept_strong = kept > 0;
    /* A log with a failure line that no candidate explains well: say what it could be, weakly
     * (the few best readings of that line, each marked possible), rather than nothing. A
     * candidate resting only on launcher wrappers or context is no reading of the line: it is
     * passed over (moved below the readings kept) instead of ending the list. */
    for (size_t j = 0; !kept_strong && j < rep->nf && kept < DX_WEAK_MAX; j++) {
        if (rep->f[j].confidence < DX_DIFF_MIN || !has_failure_line(rep, &rep->f[j]))
            continue;
        if (!rep->all) {
            dx_finding t = rep->f[j];
            memmove(&rep->f[kept + 1], &rep->f[kept], (j - kept) * sizeof *rep->f);
            rep->f[kept] = t;
        }
        kept++;
    }
    rep->nreported = kept;
    rep->nkept = rep->all ? rep->nf : kept;
    rc = build_timeline(rep);
done:
    dx_free(first_sig);
    dx_free(fsig);
    return rc;
}

static int add_culprit_signal(ddx_report *rep, const char *fmt, ...) DX_PRINTF(2, 3);
static int add_culprit_signal(ddx_report *rep, const char *fmt, ...)
{
    char buf[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t cap = rep->nculprit_signals;
    if (dx_grow((void **)&rep->culprit_signals, &cap, rep->nculprit_signals + 1, sizeof(char *)))
        return DDX_ENOMEM;
    if (!(rep->culprit_signals[rep->nculprit_signals] = dx_strdup(buf)))
        return DDX_ENOMEM;
    rep->nculprit_signals++;
    return DDX_OK;
}

/* The culprit rank, from independent signals, most direct first:
 *   1. the first root failure of the top finding, on a rank that is known;
 *   2. the NCCL watchdog: among ranks that printed timeouts, the one whose last completed
 *      collective is behind the others, or the one known rank that printed no timeout at all;
 *   3. torchelastic's "Root Cause (first observed failure)" entry (a signal-killed worker has
 *      no error file, so its "first observed" time is when the agent noticed: least reliable).
 * The first that names a single rank decides; the others are reported as agreeing or not. */
/* The launcher's one failed rank exited with -6 (SIGABRT) while ranks report watchdog timeouts:
 * the watchdog took a waiting rank down, so the launcher saw a victim first, not the cause. */
static int launcher_saw_victim(const dx_job_model *jm)
{
    if ((jm->nagent == 1 ? jm->agent_code : jm->srun_code) != -6)
        return 0;
    for (size_t r = 0; r < jm->nby; r++)
        if (jm->by_rank[r] && jm->by_rank[r]->timed_out)
            return 1;
    return 0;
}

static int find_culprit(ddx_report *rep)
{
    dx_job_model *jm = &rep->job;
    int root = -1, wd = -1, table = jm->rc_rank, blamed = -1, exc = -1;
    /* torchelastic picks its "first observed failure" by whole-second error-file times, and a
     * worker killed by SIGKILL has no error file: when another entry of the table was killed
     * while the named root cause only exited with an error, the killed rank is the better
     * reading (its peers fail because it vanished) */
    int table_killed = jm->killed_rank >= 0 && jm->killed_rank != table &&
                       !(jm->rc_has_exitcode && jm->rc_exitcode < 0);
    if (table_killed)
        table = jm->killed_rank;
    /* without a table: the one local rank the agent saw fail ("failed (exitcode: -9)
     * local_rank: 3") while it sent the others SIGTERM, or the one srun task that exited
     * with an error while the others were killed */
    int launcher = -1;
    char lwhy[200] = "";
    if (table < 0 && jm->nagent == 1) {
        launcher = jm->agent_rank;
        snprintf(lwhy, sizeof lwhy,
                 "torchelastic's agent saw local rank %d fail (exit code %d) "
                 "and stopped the others",
                 launcher, jm->agent_code);
    } else if (table < 0 && jm->nsrun == 1) {
        launcher = jm->srun_rank;
        snprintf(lwhy, sizeof lwhy, "srun: task %d exited with code %d; the others were stopped",
                 launcher, jm->srun_code);
    }
    if (launcher_saw_victim(jm))
        launcher = -1;
    if (launcher >= 0)
        table = launcher;
    /* a launcher entry whose own error was a collective timeout names a rank that waited */
    if (!table_killed && table >= 0 && (size_t)table < jm->nby && jm->by_rank[table] &&
        jm->by_rank[table]->timed_out)
        table = launcher = -1;
    int rc = DDX_OK;
    rep->culprit = -1;
    const dx_finding *top = rep->nkept ? &rep->f[0] : NULL;
    if (top && top->first_ranked && top->has_root && !top->ref->culprit_other) {
        root = top->first_ranked->rank;
        /* the same root failure on several ranks names none of them, unless the log's times
         * show one rank failing first */
        const dx_event *f0 = top->first_ranked;
        for (size_t i = 0; i < top->nevid && root >= 0; i++) {
            const dx_event *ev = top->evid[i].ev;
            if (top->evid[i].sig->role != DX_ROLE_ROOT || ev->rank < 0 || ev->rank == f0->rank)
                continue;
            if (!(f0->has_time && ev->has_time && f0->tkey < ev->tkey))
                root = -1;
        }
        /* and then torchelastic's pick among them (by whole-second error-file times) is no
         * better evidence */
        if (root < 0 && table >= 0 && !table_killed)
            for (size_t i = 0; i < top->nevid; i++)
                if (top->evid[i].sig->role == DX_ROLE_ROOT && top->evid[i].ev->rank == table) {
                    table = launcher = -1;
                    break;
                }
    }
    /* a rank the lines themselves name ("but Rank 1 is running collective ...") */
    if (top) {
        int votes[8] = {0}, cand[8];
        size_t nc = 0;
        for (size_t i = 0; i < top->nevid; i++) {
            int b = top->evid[i].ev->blamed;
            if (b < 0 || top->evid[i].weight <= 0)
                continue;
            size_t k = 0;
            while (k < nc && cand[k] != b)
                k++;
            if (k == nc && nc < DX_ARRAY_LEN(cand))
                cand[nc++] = b;
            if (k < nc)
                votes[k]++;
        }
        int best = 0;
        for (size_t k = 0; k < nc; k++)
            if (votes[k] > best) {
                best = votes[k];
                blamed = cand[k];
            }
    }
    /* the lines of a victim reference come from the ranks that waited: the culprit is the rank
     * that raised its own exception first without printing them */
    if (top && top->ref->culprit_other) {
        uint64_t best = UINT64_MAX;
        for (size_t r = 0; r < jm->nby; r++) {
            const dx_rank *x = jm->by_rank[r];
            if (!x || !x->first_exception)
                continue;
            int victim = 0;
            for (size_t k = 0; k < top->nranks; k++)
                victim |= top->ranks[k] == x->rank;
            if (!victim && x->first_exception_seq < best) {
                best = x->first_exception_seq;
                exc = x->rank;
            }
        }
    }
    /* no reference explains the failure, but a rank raised its own exception: the failure
     * ddx could not place is that rank's */
    int unplaced = !rep->nreported && rep->unrec && rep->unrec->original ? rep->unrec->rank : -1;
    /* the watchdog picture */
    size_t timed = 0;
    long long lo = -1, hi = -1;
    int lo_rank = -1, nlo = 0;
    for (size_t r = 0; r < jm->nby; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        if (x->timed_out)
            timed++;
        if (x->has_last_completed && x->last_completed >= 0) {
            if (lo < 0 || x->last_completed < lo) {
                lo = x->last_completed;
                lo_rank = x->rank;
                nlo = 1;
            } else if (x->last_completed == lo)
                nlo++;
            if (x->last_completed > hi)
                hi = x->last_completed;
        }
    }
    char why[300] = "";
    if (timed && lo >= 0 && hi > lo && nlo == 1) {
        wd = lo_rank;
        snprintf(why, sizeof why,
                 "rank %d's last completed collective (%lld) is behind the "
                 "others' (up to %lld)",
                 wd, lo, hi);
    }
    /* the rank that enqueued the fewest collectives (its "last enqueued", or at least the
     * sequence number it timed out in) while the others moved on to later ones */
    if (wd < 0 && timed >= 2) {
        long long best = -1;
        int best_rank = -1, nbest = 0, nest = 0;
        for (size_t r = 0; r < jm->nby; r++) {
            const dx_rank *x = jm->by_rank[r];
            if (!x)
                continue;
            long long e = x->last_enqueued;
            if (x->timed_out && x->timeout_seq > e)
                e = x->timeout_seq;
            if (e < 0)
                continue;
            nest++;
            if (best < 0 || e < best) {
                best = e;
                best_rank = x->rank;
                nbest = 1;
            } else if (e == best)
                nbest++;
        }
        if (nest >= 3 && nbest == 1) {
            wd = best_rank;
            snprintf(why, sizeof why,
                     "rank %d enqueued collectives only up to %lld while the "
                     "other ranks had moved on to later ones",
                     wd, best);
        }
    }
    /* a rank with nothing in flight (last enqueued = last completed) while the others wait on
     * an enqueued collective never entered it */
    if (wd < 0) {
        size_t idle = 0, pending = 0;
        int idle_rank = -1;
        long long idle_n = -1;
        for (size_t r = 0; r < jm->nby; r++) {
            const dx_rank *x = jm->by_rank[r];
            if (!x || !x->has_last_completed || x->last_enqueued < 0 || x->last_completed < 0)
                continue;
            if (x->last_enqueued == x->last_completed) {
                idle++;
                idle_rank = x->rank;
                idle_n = x->last_completed;
            } else if (x->last_enqueued > x->last_completed)
                pending++;
        }
        if (idle == 1 && pending >= 1) {
            wd = idle_rank;
            snprintf(why, sizeof why,
                     "rank %d had no collective in flight (last enqueued = last "
                     "completed = %lld) while %zu rank%s waited on one",
                     wd, idle_n, pending, pending == 1 ? "" : "s");
        }
    }
    /* one rank alone timed out after a loop's end: what runs there on one rank only (saving,
     * evaluation, logging) runs on rank 0; either rank 0 issued a collective the others never
     * joined, or another rank waited while rank 0 worked alone */
    if (wd < 0 && jm->after_done_rank >= 0) {
        wd = 0;
        if (jm->after_done_rank == 0)
            snprintf(why, sizeof why,
                     "rank 0 alone timed out, in a collective after the loop had "
                     "ended, and no other rank timed out or failed: a collective of rank-0-only "
                     "code (saving, logging) that the others, finished, never joined");
        else
            snprintf(why, sizeof why,
                     "rank %d alone timed out, in a collective after the loop "
                     "had ended, and no other rank timed out or failed: it waited for rank 0's "
                     "own end-of-loop work (saving, evaluation)",
                     jm->after_done_rank);
    }
    if (wd < 0 && jm->stuck_rank >= 0) {
        wd = jm->stuck_rank;
        if (jm->stuck_timed)
            snprintf(why, sizeof why,
                     "%zu rank%s reported a watchdog timeout; rank %d, seen in "
                     "the logs, reported none",
                     jm->stuck_timed, jm->stuck_timed == 1 ? "" : "s", wd);
        else
            snprintf(why, sizeof why, "%s", jm->stuck_why);
    }
    {
        int first = jm->dump_from;
        size_t observed = 0;
        for (size_t r = 0; r < jm->nby; r++) {
            const dx_rank *x = jm->by_rank[r];
            if (x && x->dump_first && first < 0)
                first = x->rank;
            observed += x && x->dump_observed;
        }
        /* informative only: the rank whose watchdog fired first waited longest, it is not the
         * one it waited for */
        if (first >= 0 && (rc = add_culprit_signal(
                               rep,
                               "dump signal: rank %d's watchdog fired first%s (a rank "
                               "that waited, not the one it waited for)",
                               first, observed ? " and the other ranks observed its signal" : "")))
            return rc;
    }
    int slow = -1;
    if (top && jm->straggler >= 0 &&
        (!strcmp(top->ref->kind, "perf") || !strcmp(top->ref->kind, "silent")))
        slow = jm->straggler;
    if (slow >= 0 && (rc = add_culprit_signal(rep, "step times: %s", jm->straggler_why)))
        return rc;
    int fr = -1;
    for (size_t i = 0; i < rep->nfrf && fr < 0; i++)
        if (rep->frf[i].rank >= 0) {
            fr = rep->frf[i].rank;
            if ((rc = add_culprit_signal(rep, "flight recorder (%s): %s",
                                         dx_frdump_kind_name(rep->frf[i].kind), rep->frf[i].why)))
                return rc;
        }
    int desync = jm->desync_rank;
    int stack = jm->stack_rank;
    int stopped = jm->stopped_rank;
    if (stopped >= 0 && (rc = add_culprit_signal(rep, "output: %s", jm->stopped_why)))
        return rc;
    if (stack >= 0 && (rc = add_culprit_signal(rep, "stack dumps: %s", jm->stack_why)))
        return rc;
    if (desync >= 0 && (rc = add_culprit_signal(rep, "collective desync: %s", jm->desync_why)))
        return rc;
    int coll = jm->coll_rank;
    if (coll >= 0 && (rc = add_culprit_signal(rep, "tracebacks: %s", jm->coll_why)))
        return rc;
    int uneven = jm->uneven_rank;
    if (uneven >= 0 && (rc = add_culprit_signal(rep, "per-rank data: %s", jm->uneven_why)))
        return rc;
    if (blamed >= 0 && (rc = add_culprit_signal(rep,
                                                "named in the log: the %s lines blame "
                                                "rank %d",
                                                top->ref->id, blamed)))
        return rc;
    if (root >= 0 &&
        (rc = add_culprit_signal(rep, "first root failure: rank %d (%s)", root, rep->f[0].ref->id)))
        return rc;
    if (wd >= 0 && (rc = add_culprit_signal(rep, "collective timeouts: %s", why)))
        return rc;
    if (exc >= 0 &&
        (rc = add_culprit_signal(rep,
                                 "rank %d raised its own exception (%s) while the others "
                                 "only saw it fail",
                                 exc, jm->by_rank[exc]->first_exception)))
        return rc;
    if (launcher >= 0) {
        if ((rc = add_culprit_signal(rep, "launcher: %s", lwhy)))
            return rc;
    } else if (table >= 0 && table_killed) {
        if ((rc = add_culprit_signal(rep,
                                     "torchelastic: rank %d was killed by SIGKILL (exit code "
                                     "-9); the table's 'first observed failure', rank %d, only "
                                     "exited with an error, likely after losing its peer",
                                     table, jm->rc_rank)))
            return rc;
    } else if (table >= 0) {
        if (jm->rc_has_exitcode && jm->rc_exitcode < 0)
            rc = add_culprit_signal(rep,
                                    "torchelastic root cause: rank %d, exit code %d (killed "
                                    "by signal %d, so its time is when the agent noticed; %s)",
                                    table, jm->rc_exitcode, -jm->rc_exitcode,
                                    jm->rc_where ? jm->rc_where : "");
        else
            rc = add_culprit_signal(rep, "torchelastic root cause: rank %d (%s)", table,
                                    jm->rc_where ? jm->rc_where : "");
        if (rc)
            return rc;
    }
    /* a rank whose progress bar the collective error cut off was busy while others waited */
    int busy = jm->busy_rank;
    if (busy >= 0 && (size_t)busy < jm->nby && jm->by_rank[busy] && jm->by_rank[busy]->timed_out)
        busy = -1;
    rc = DDX_OK;
    if (busy >= 0 && jm->busy_why[0])
        rc = add_culprit_signal(rep, "timing: %s", jm->busy_why);
    else if (busy >= 0)
        rc = add_culprit_signal(rep,
                                "progress: rank %d's progress bar%s stops where the "
                                "collective fails, so it was still busy in a long loop",
                                busy,
                                (size_t)busy < jm->nby && jm->by_rank[busy] &&
                                        jm->by_rank[busy]->lines
                                    ? ""
                                    : " (no rank prefix: bars are "
                                      "drawn by rank 0)");
    if (rc)
        return rc;
    /* the reference's own explanation: rank 0 worked alone while the others waited */
    int zero = top && top->ref->culprit_other == 2 ? 0 : -1;
    if (zero >= 0 && (rc = add_culprit_signal(rep,
                                              "%s: rank 0 does work alone while the "
                                              "others wait for it",
                                              top->ref->id)))
        return rc;
    int pick = slow >= 0       ? slow
               : desync >= 0   ? desync
               : blamed >= 0   ? blamed
               : root >= 0     ? root
               : fr >= 0       ? fr
               : coll >= 0     ? coll
               : uneven >= 0   ? uneven
               : stack >= 0    ? stack
               : wd >= 0       ? wd
               : stopped >= 0  ? stopped
               : exc >= 0      ? exc
               : unplaced >= 0 ? unplaced
               : zero >= 0     ? zero
               : busy >= 0     ? busy
                               : table;
    if (pick < 0)
        return DDX_OK;
    /* a launcher table alone is used only when some finding is reported */
    if (slow < 0 && blamed < 0 && fr < 0 && desync < 0 && coll < 0 && uneven < 0 && root < 0 &&
        stack < 0 && wd < 0 && exc < 0 && unplaced < 0 && zero < 0 && busy < 0 && !rep->nkept &&
        !rep->unrec)
        return DDX_OK;
    /* output that stops early alone is not enough to blame a rank when nothing failed */
    if (pick == stopped && !rep->nkept)
        return DDX_OK;
    rep->culprit = pick;
    int all[] = {slow, blamed,  fr,  desync,   coll, uneven, root, stack,
                 wd,   stopped, exc, unplaced, zero, busy,   table};
    int agree = 1;
    for (size_t i = 0; i < DX_ARRAY_LEN(all); i++)
        agree &= all[i] < 0 || all[i] == pick;
    char buf[700];
    snprintf(buf, sizeof buf, "%s%s",
             slow >= 0       ? "its steps are the slowest"
             : desync >= 0   ? "it is alone in a different collective"
             : blamed >= 0   ? "the log names this rank"
             : root >= 0     ? "the first root failure is on this rank"
             : fr >= 0       ? "the flight recorder shows it out of step with the others"
             : coll >= 0     ? "its traceback is in a different collective from the others'"
             : uneven >= 0   ? "its number of batches differs from every other rank's"
             : stack >= 0    ? "its stack is outside any collective while the job hangs"
             : wd >= 0       ? "the collective timeouts point at this rank"
             : stopped >= 0  ? "its output stops long before the others'"
             : exc >= 0      ? "this rank failed on its own while the others waited"
             : unplaced >= 0 ? "the failure no reference explains is this rank's own exception"
             : zero >= 0     ? "the top finding is rank 0 working alone while the others wait"
             : busy >= 0     ? "its progress bar stops where the collective fails"
             : launcher >= 0 ? "the launcher saw this rank fail first and stopped the others"
                             : "torchelastic names it as the first failure",
             agree ? "; the other signals agree or are silent"
                   : "; other signals disagree (see culprit_signals)");
    rep->culprit_why = dx_strdup(buf);
    return rep->culprit_why ? DDX_OK : DDX_ENOMEM;
}

/* ==== configuration sanity ================================================================ */

static long long fact_int(const dx_facts *f, const char *name, const dx_fact **src)
{
    const dx_fact *x = dx_facts_get(f, name);
    if (src)
        *src = x;
    if (!x || !x->value[0])
        return -1;
    char *end;
    long long v = strtoll(x->value, &end, 10);
    return *end || v < 0 ? -1 : v;
}

static const char *fact_where(const dx_fact *x, char *buf, size_t cap)
{
    if (!x)
        return "";
    if (x->line)
        snprintf(buf, cap, "%s:%llu", x->path, (unsigned long long)x->line);
    else
        snprintf(buf, cap, "%s", x->path);
    return buf;
}

/* Facts that prove a known failure before any log line does: DeepSpeed's batch arithmetic
 * (train_batch_size must equal micro batch x accumulation x world size) and Megatron's sequence
 * parallelism without tensor parallelism. Each becomes a fact references take as context. */
static int derive_sanity(dx_facts *f)
{
    const dx_fact *ft, *fm, *fg, *fw;
    long long tb = fact_int(f, "deepspeed.train_batch_size", &ft);
    long long mb = fact_int(f, "deepspeed.train_micro_batch_size_per_gpu", &fm);
    long long gas = fact_int(f, "deepspeed.gradient_accumulation_steps", &fg);
    long long ws = fact_int(f, "job.world_size", &fw);
    if (ws < 0) {
        long long np = fact_int(f, "launcher.nproc_per_node", &fw);
        const dx_fact *fn;
        long long nn = fact_int(f, "launcher.nnodes", &fn);
        ws = np > 0 ? np * (nn > 0 ? nn : 1) : -1;
    }
    char v[300], w1[200], w2[200];
    int rc = DDX_OK;
    if (tb > 0 && mb > 0 && !dx_facts_get(f, "deepspeed.batch_arithmetic")) {
        long long g = gas > 0 ? gas : 1;
        int n = 0;
        if (gas > 0 && ws > 0 && tb != mb * g * ws)
            n = snprintf(v, sizeof v,
                         "train_batch_size %lld != %lld (micro) x %lld (accumulation) "
                         "x %lld (world size) = %lld",
                         tb, mb, g, ws, mb * g * ws);
        else if (gas > 0 && tb % (mb * g))
            n = snprintf(v, sizeof v,
                         "train_batch_size %lld is not a multiple of %lld (micro) x "
                         "%lld (accumulation): no world size fits",
                         tb, mb, g);
        if (n > 0) {
            /* (copied first: setting a fact may move the others) */
            snprintf(w1, sizeof w1, "%s", ft->path);
            rc = dx_facts_set(f, "deepspeed.batch_arithmetic", v, (size_t)n, w1, ft->line);
        }
    }
    /* ZeRO-Offload with the script's own optimizer: DeepSpeed 0.8.3+ refuses it unless
     * zero_force_ds_cpu_optimizer is false */
    const dx_fact *oo = dx_facts_get(f, "deepspeed.offload_optimizer");
    const dx_fact *opt = dx_facts_get(f, "deepspeed.optimizer");
    const dx_fact *force = dx_facts_get(f, "deepspeed.zero_force_ds_cpu_optimizer");
    if (!rc && oo && opt && !strcmp(opt->value, "client") &&
        (!strcmp(oo->value, "cpu") || !strcmp(oo->value, "nvme")) &&
        !(force && !strcmp(force->value, "false")) &&
        !dx_facts_get(f, "deepspeed.offload_client_optimizer")) {
        int n = snprintf(v, sizeof v,
                         "offload_optimizer is %s and the DeepSpeed config names no "
                         "optimizer, so the training script's own optimizer is offloaded",
                         oo->value);
        uint64_t line = oo->line;
        snprintf(w1, sizeof w1, "%s", oo->path);
        rc = dx_facts_set(f, "deepspeed.offload_client_optimizer", v, (size_t)n, w1, line);
    }
    const dx_fact *sp = dx_facts_get(f, "megatron.sequence_parallel");
    const dx_fact *tp;
    long long tps = fact_int(f, "megatron.tensor_model_parallel_size", &tp);
    if (!rc && sp && tps == 1 && !dx_facts_get(f, "megatron.sp_without_tp")) {
        int want = 0;
        if (!strcmp(sp->value, "true") || !strcmp(sp->value, "True"))
            want = 1;
        if (want) {
            int n = snprintf(v, sizeof v,
                             "sequence_parallel is on with tensor_model_parallel_size 1 "
                             "(from %s)",
                             fact_where(tp, w1, sizeof w1));
            uint64_t line = sp->line;
            snprintf(w2, sizeof w2, "%s", sp->path);
            rc = dx_facts_set(f, "megatron.sp_without_tp", v, (size_t)n, w2, line);
        }
    }
    return rc;
}

/* ==== the entry point ====================================================================== */

/* job.duplicate_rank: a global rank that two processes announced (Lightning's "GLOBAL_RANK: g,
 * MEMBER: m/n" lines) while other ranks of that world announced none: each launcher task started
 * its own set of processes, so the world never completes. Both are required, so a log read twice
 * (a console copy next to the file) does not count. */
static int duplicate_rank_fact(ddx_report *rep, const dx_job_model *jm)
{
    size_t world = jm->member_world > 0 ? (size_t)jm->member_world : 0;
    if (world > sizeof jm->members)
        world = sizeof jm->members;
    int dup = -1, times = 0;
    size_t missing = 0, first_missing = 0;
    for (size_t g = 0; g < sizeof jm->members; g++) {
        if (jm->members[g] > 1 && dup < 0) {
            dup = (int)g;
            times = jm->members[g];
        }
        if (g < world && !jm->members[g] && !missing++)
            first_missing = g;
    }
    if (dup < 0 || !missing)
        return DDX_OK;
    char v[16], why[200];
    int n = snprintf(v, sizeof v, "%d", dup);
    snprintf(why, sizeof why,
             "Lightning's 'GLOBAL_RANK: g, MEMBER: m/n' lines: global rank %d announced by %d "
             "processes, %zu of the %zu ranks (the first: %zu) by none",
             dup, times, missing, world, first_missing);
    return dx_facts_set(&rep->facts, "job.duplicate_rank", v, (size_t)n, why, 0);
}

int ddx_job_diagnose(ddx_job *job, int flags, ddx_report **out, ddx_error *err)
{
    const ddx_kb *kb = job->kb;
    ddx_report *rep = dx_calloc(1, sizeof *rep);
    scan_state st = {0};
    int rc = DDX_OK;
    if (!rep)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    rep->kb = kb;
    rep->culprit = -1;
    dx_job_model_init(&rep->job);
    rep->all = (flags & DDX_DIAG_ALL) != 0;
    rep->hits = dx_calloc(kb->nsig ? kb->nsig : 1, sizeof(dx_sighits *));
    if (!rep->hits) {
        rc = dx_err(err, DDX_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = dx_scan_new(&st.scan, kb->m, err)))
        goto fail;
    st.rep = rep;
    st.kb = kb;
    st.rescan = -1;
    for (size_t i = 0; i < job->n; i++) {
        job_input *in = &job->in[i];
        ddx_error e = {0};
        if (in->path)
            rc = dx_input_walk(in->path, on_member, on_warn, &st, &e);
        else
            rc = dx_input_walk_buffer(in->name, in->data, in->len, on_member, on_warn, &st, &e);
        if (rc == DDX_ENOMEM) {
            dx_err(err, rc, "out of memory while reading %s", in->path ? in->path : in->name);
            goto fail;
        }
        if (rc) {
            dx_err(err, rc, "%s", e.message);
            goto fail;
        }
    }
    for (size_t r = 0; r < rep->job.nby && st.year; r++) {
        dx_rank *x = rep->job.by_rank[r];
        if (x && x->has_time && !x->last_time.year && x->last_time.month)
            x->last_time.year = st.year; /* glog times carry no year: give them the job's */
    }
    rep->job.year = st.year;
    {
        /* per-rank working time between collectives from the flight recorder, when no log
         * gave step times (the two are not mixed) */
        int steps = 0;
        for (size_t r = 0; r < rep->job.nby && !steps; r++)
            steps = rep->job.by_rank[r] && rep->job.by_rank[r]->nstep[0];
        if (rep->nfr && !steps)
            (void)dx_frdump_work(rep->fr, rep->nfr, dx_job_add_fr_work, &rep->job);
    }
    dx_job_finish(&rep->job);
    dx_view_finish(rep);
    if (rep->nfr) {
        rep->nfrf = dx_frdump_analyze(rep->fr, rep->nfr, rep->frf, DX_ARRAY_LEN(rep->frf));
        for (size_t i = 0; i < rep->nfrf && !rc; i++) {
            const dx_fr_finding *x = &rep->frf[i];
            const char *name = x->kind == DX_FR_MISSING_RANK || x->kind == DX_FR_STATE
                                   ? "job.fr_missing"
                                   : "job.desync";
            if (!dx_facts_get(&rep->facts, name))
                rc = dx_facts_set(&rep->facts, name, x->why, strlen(x->why),
                                  "flight-recorder dumps", 0);
        }
        if (rc) {
            dx_err(err, rc, "out of memory");
            goto fail;
        }
    }
    if (rep->job.desync_why[0] &&
        (rc = dx_facts_set(&rep->facts, "job.desync", rep->job.desync_why,
                           strlen(rep->job.desync_why), "watchdog timeouts of every rank", 0))) {
        dx_err(err, rc, "out of memory");
        goto fail;
    }
    {
        const dx_job_model *jm = &rep->job;
        char v[32];
        if (jm->uneven)
            rc = dx_facts_set(&rep->facts, "job.uneven_inputs", jm->uneven_why,
                              strlen(jm->uneven_why), "per-rank step progress", 0);
        if (!rc && jm->after_done_why[0])
            rc = dx_facts_set(&rep->facts, "job.timeout_after_loop", jm->after_done_why,
                              strlen(jm->after_done_why), "line order in the job's output", 0);
        if (!rc && jm->stuck_rank >= 0) {
            int n = snprintf(v, sizeof v, "%d", jm->stuck_rank);
            rc = dx_facts_set(&rep->facts, "job.stuck_rank", v, (size_t)n, jm->stuck_why, 0);
        }
        /* the agent's report counts when it stopped other workers (a multi-process job) */
        int lr = jm->nagent == 1 && (jm->closing || jm->launcher_report) ? jm->agent_rank
                 : jm->nsrun == 1                                        ? jm->srun_rank
                                                                         : -1;
        /* an exception printed without a rank is most likely that rank's own error */
        if (jm->unranked_exc)
            lr = -1;
        if (launcher_saw_victim(jm))
            lr = -1;
        /* only when that rank's own error is not in the inputs: then its log is what to read */
        if (lr >= 0 && (size_t)lr < jm->nby && jm->by_rank[lr] &&
            (jm->by_rank[lr]->first_exception || jm->by_rank[lr]->first_error ||
             jm->by_rank[lr]->timed_out))
            lr = -1;
        if (!rc && lr >= 0) {
            int n = snprintf(v, sizeof v, "%d", lr);
            rc = dx_facts_set(&rep->facts, "job.launcher_failed_rank", v, (size_t)n,
                              jm->nagent == 1 ? "torchelastic's agent: the one local rank that "
                                                "failed while the others were stopped"
                                              : "srun: the one task that "
                                                "exited with an error",
                              0);
            n = snprintf(v, sizeof v, "%d", jm->nagent == 1 ? jm->agent_code : jm->srun_code);
            if (!rc)
                rc = dx_facts_set(&rep->facts, "job.launcher_exitcode", v, (size_t)n,
                                  "the launcher's report of that rank", 0);
        }
        if (!rc && jm->busy_rank >= 0 &&
            !((size_t)jm->busy_rank < jm->nby && jm->by_rank[jm->busy_rank] &&
              jm->by_rank[jm->busy_rank]->timed_out)) {
            int n = snprintf(v, sizeof v, "%d", jm->busy_rank);
            rc = dx_facts_set(
                &rep->facts, "job.busy_rank", v, (size_t)n,
                jm->busy_why[0] ? jm->busy_why : "a progress bar the collective error cut off", 0);
        }
        if (!rc && jm->hang_why[0])
            rc = dx_facts_set(&rep->facts, "job.hang", jm->hang_why, strlen(jm->hang_why),
                              "py-spy or faulthandler stack dumps", 0);
        if (!rc && jm->restarts) {
            int n = snprintf(v, sizeof v, "%d", jm->restarts);
            rc = dx_facts_set(&rep->facts, "job.restarts", v, (size_t)n,
                              "torchelastic's 'will restart worker group' lines", 0);
        }
        if (!rc && !jm->restarts)
            rc = duplicate_rank_fact(rep, jm);
        /* nccl-tests stopped after its table header on one host: the first collective of a
         * single-node multi-GPU run never completed (the peer-to-peer path hangs) */
        if (!rc && jm->nt_header && !jm->nt_rows && !jm->nt_fail && !jm->nt_multi_host &&
            jm->nt_gpus >= 2) {
            char why[160];
            int n = snprintf(why, sizeof why,
                             "nccl-tests listed %d GPUs on one host, printed its result table's "
                             "header and no result row",
                             jm->nt_gpus);
            rc = dx_facts_set(&rep->facts, "job.nccltests_stalled", why, (size_t)n,
                              "nccl-tests' device list and result table", 0);
        }
        /* no reference read a failure line anywhere (asked once, and only when a reading below
         * could use it) */
        const int quiet = (jm->ds_killing || jm->closing || (jm->phase && jm->phase_last)) &&
                          !any_failure_line(rep);
        /* the launcher tore the workers down, and no worker printed an exception or a failure
         * line, and no exit code other than -9 is known: a worker died without Python seeing
         * it, by a signal (the kernel's OOM killer sends SIGKILL) */
        if (!rc && (jm->ds_killing || jm->closing) && !jm->worker_exc &&
            !(jm->nagent && jm->agent_code != -9) && quiet) {
            static const char why[] =
                "the launcher stopped the workers and no worker printed a traceback or an error "
                "first, nor an exit code that says otherwise: one died by a signal";
            const char *who = jm->ds_killing ? "deepspeed" : "torchrun";
            rc = dx_facts_set(&rep->facts, "job.silent_teardown", who, strlen(who), why, 0);
        }
        /* a GPU monitor shows one GPU holding two or more big processes while another listed
         * GPU holds none: several ranks landed on the same device */
        for (size_t g = 0; !rc && g < sizeof jm->gpu_big; g++) {
            if (jm->gpu_big[g] < 2)
                continue;
            size_t h = 0;
            while (h < sizeof jm->gpu_big && !(h != g && jm->gpu_listed[h] && !jm->gpu_big[h]))
                h++;
            if (h == sizeof jm->gpu_big)
                break;
            char why[200];
            int n = snprintf(v, sizeof v, "%zu", g);
            snprintf(why, sizeof why,
                     "GPU %zu holds %d processes of 1 GiB or more while GPU %zu holds none "
                     "(nvidia-smi or gpustat)",
                     g, jm->gpu_big[g], h);
            rc = dx_facts_set(&rep->facts, "job.gpu_shared", v, (size_t)n, why, 0);
            break;
        }
        if (!rc && jm->shard_ratio) {
            char why[300];
            int n = snprintf(v, sizeof v, "%d", jm->shard_ratio);
            snprintf(why, sizeof why,
                     "a size mismatch of %s elements, one %d times the other up to padding: "
                     "flat shards written by one number of ranks and read by %d times as many "
                     "(or as few)",
                     jm->shard_sizes, jm->shard_ratio, jm->shard_ratio);
            rc = dx_facts_set(&rep->facts, "job.shard_ratio", v, (size_t)n, why, 0);
        }
        /* a log that ends, with no failure line anywhere, on the line that started a phase
         * (validation, generation, a Ray trainer's start-up or placement-group wait, the first
         * 0/N bar after NCCL came up): the job stalled there, and where it stalled is what
         * tells the usual causes apart */
        if (!rc && jm->phase && jm->phase_last && quiet) {
            static const char *const name[] = {"", "validation", "generation", "ray-start",
                                               "first-collective"};
            /* the line and its place as shown: valid UTF-8, cut with "..." */
            char *text = dx_clean_text(jm->phase_text, jm->phase_len, 100);
            char *where = dx_clean_text(jm->phase_where, strlen(jm->phase_where), 200);
            char why[400];
            snprintf(why, sizeof why,
                     "the log ends, with no error before it, on '%s' (%s): the job stopped "
                     "making progress as that phase began",
                     text ? text : "", where ? where : "");
            dx_free(text);
            dx_free(where);
            rc = dx_facts_set(&rep->facts, "job.stalled_at", name[jm->phase],
                              strlen(name[jm->phase]), why, 0);
        }
        /* processes of a world of three or more that never reached the set-up barrier: one is a
         * process stuck or slow before init; a missing node or a wrong world size leaves more
         * out (and in a world of two either reading fits, so none is given) */
        if (!rc && jm->barrier_world >= 3 && jm->barrier_joined < jm->barrier_world) {
            int n = snprintf(v, sizeof v, "%d", jm->barrier_world - jm->barrier_joined);
            rc = dx_facts_set(&rep->facts, "job.init_missing", v, (size_t)n,
                              "the store-based barrier's world_size and worker count", 0);
        }
        /* Megatron's straggler reports: how far the slowest rank trails the fastest */
        if (!rc && jm->meg_etpt_spread >= 0) {
            int n = snprintf(v, sizeof v, "%.3f", jm->meg_etpt_spread);
            rc = dx_facts_set(&rep->facts, "straggler.etpt_spread", v, (size_t)n,
                              "Megatron's straggler report: 1 - MnEtpt / MxEtpt, the widest "
                              "report",
                              0);
        }
        if (!rc && jm->meg_rtt_spread >= 0) {
            int n = snprintf(v, sizeof v, "%.3f", jm->meg_rtt_spread);
            rc = dx_facts_set(&rep->facts, "straggler.rtt_spread", v, (size_t)n,
                              "Megatron's straggler report: MxRtt / MnRtt - 1, the widest report",
                              0);
        }
        /* some NCCL processes chose InfiniBand and others sockets: their connections cannot
         * meet (a node without a usable IB device, or NCCL_IB_DISABLE set on some nodes) */
        if (!rc && jm->nets == 3)
            rc = dx_facts_set(&rep->facts, "job.net_mixed", "IB and Socket", 13,
                              "NCCL's \"Using network\" lines of different processes", 0);
        if (!rc && jm->view_shard) {
            int n = snprintf(v, sizeof v, "%d", jm->view_shard);
            char why[160];
            snprintf(why, sizeof why,
                     "the view shape %s asks for %d times the elements its tensor holds",
                     jm->view_shape, jm->view_shard);
            rc = dx_facts_set(&rep->facts, "job.view_shard", v, (size_t)n, why, 0);
        }
        size_t nhosts = 0;
        for (size_t a = 0; a < jm->nby; a++) {
            const dx_rank *x = jm->by_rank[a];
            if (!x || !x->host[0])
                continue;
            int dup = 0;
            for (size_t b = 0; b < a && !dup; b++)
                dup = jm->by_rank[b] && !strcmp(jm->by_rank[b]->host, x->host);
            nhosts += !dup;
        }
        if (!rc && nhosts) {
            int n = snprintf(v, sizeof v, "%zu", nhosts);
            rc = dx_facts_set(&rep->facts, "job.hosts", v, (size_t)n,
                              "hosts of the ranks (NCCL Init COMPLETE lines, torchelastic's table)",
                              0);
        }
        if (!rc && jm->coll_rank >= 0)
            rc = dx_facts_set(&rep->facts, "job.collective_mismatch", jm->coll_why,
                              strlen(jm->coll_why), "the ranks' tracebacks", 0);
        if (!rc && jm->coll_rank >= 0 && jm->eval_coll) {
            int n = snprintf(v, sizeof v, "%d", jm->coll_rank);
            rc = dx_facts_set(&rep->facts, "job.eval_collective_rank", v, (size_t)n, jm->coll_why,
                              0);
        }
        if (rc) {
            dx_err(err, rc, "out of memory");
            goto fail;
        }
    }
    if (rep->job.straggler >= 0) {
        const dx_rank *x = rep->job.by_rank[rep->job.straggler];
        char v[32];
        int n = snprintf(v, sizeof v, "%d", x->rank);
        const char *from = rep->job.steps_from_fr ? "flight-recorder work between collectives"
                                                  : "per-rank step times";
        rc = dx_facts_set(&rep->facts, "job.straggler_rank", v, (size_t)n, from, 0);
        n = snprintf(v, sizeof v, "%d", (int)(100 * x->rel_speed + 0.5));
        if (!rc)
            rc = dx_facts_set(&rep->facts, "job.straggler_speed_pct", v, (size_t)n, from, 0);
        if (rc) {
            dx_err(err, rc, "out of memory");
            goto fail;
        }
    }
    if ((rc = dx_facts_derive(&rep->facts)) || (rc = derive_sanity(&rep->facts))) {
        dx_err(err, rc, "out of memory");
        goto fail;
    }
    for (size_t s = 0; s < kb->nsig; s++)
        for (size_t k = 0; rep->hits[s] && k < rep->hits[s]->nev; k++) {
            dx_event *e = &rep->hits[s]->ev[k];
            if (e->has_time && !e->time.year && e->time.month && st.year)
                e->time.year = st.year; /* glog times carry no year: give them the job's */
            if (e->has_time)
                e->tkey = dx_time_key(&e->time, NULL);
        }
    if ((rc = score_all(rep))) {
        dx_err(err, rc, "out of memory while scoring");
        goto fail;
    }
    if ((!rep->nreported && (rc = dx_unrec_find(rep, &rep->unrec))) || (rc = find_culprit(rep))) {
        dx_err(err, rc, "out of memory");
        goto fail;
    }
    dx_scan_free(st.scan);
    *out = rep;
    return DDX_OK;
fail:
    dx_scan_free(st.scan);
    ddx_report_free(rep);
    return rc;
}

void ddx_report_free(ddx_report *rep)
{
    if (!rep)
        return;
    dx_unrec_fini(rep->unrec);
    dx_free(rep->unrec);
    for (size_t i = 0; i < rep->ninputs; i++) {
        dx_free(rep->inputs[i].path);
        dx_free(rep->inputs[i].ranks);
    }
    dx_free(rep->inputs);
    for (size_t i = 0; i < rep->nf; i++)
        finding_fini(&rep->f[i]);
    dx_free(rep->f);
    if (rep->hits && rep->kb)
        for (size_t s = 0; s < rep->kb->nsig; s++) {
            for (size_t k = 0; rep->hits[s] && k < rep->hits[s]->nev; k++)
                event_fini(&rep->hits[s]->ev[k]);
            dx_free(rep->hits[s]);
        }
    dx_free(rep->hits);
    dx_free(rep->timeline);
    for (size_t i = 0; i < rep->nwarnings; i++)
        dx_free(rep->warnings[i]);
    dx_free(rep->warnings);
    dx_free(rep->culprit_why);
    for (size_t i = 0; i < rep->nculprit_signals; i++)
        dx_free(rep->culprit_signals[i]);
    dx_free(rep->culprit_signals);
    dx_job_model_fini(&rep->job);
    for (size_t i = 0; i < rep->nfr; i++)
        dx_frdump_fini(&rep->fr[i]);
    dx_free(rep->fr);
    dx_facts_fini(&rep->facts);
    dx_view_fini(rep);
    dx_free(rep);
}

size_t ddx_report_count(const ddx_report *rep) { return rep->nkept; }

int ddx_report_unrecognised(const ddx_report *rep) { return rep->unrec != NULL; }

size_t dx_report_noise(const ddx_report *rep, size_t ref, const dx_event **first)
{
    const ddx_kb *kb = rep->kb;
    size_t count = 0;
    *first = NULL;
    for (size_t s = 0; s < kb->nsig; s++) {
        if (kb->sig_ref[s] != ref || !rep->hits[s])
            continue;
        count += rep->hits[s]->count;
        if (rep->hits[s]->nev && (!*first || event_before(&rep->hits[s]->ev[0], *first)))
            *first = &rep->hits[s]->ev[0];
    }
    return count;
}

const char *ddx_report_id(const ddx_report *rep, size_t i)
{
    return i < rep->nkept ? rep->f[i].ref->id : NULL;
}

double ddx_report_confidence(const ddx_report *rep, size_t i)
{
    return i < rep->nkept ? rep->f[i].confidence : 0;
}

const char *ddx_report_level(const ddx_report *rep, size_t i)
{
    return i < rep->nkept ? dx_level_name(rep->f[i].confidence) : NULL;
}

int ddx_report_culprit_rank(const ddx_report *rep) { return rep->culprit; }

size_t ddx_report_warning_count(const ddx_report *rep) { return rep->nwarnings; }

const char *ddx_report_warning(const ddx_report *rep, size_t i)
{
    return i < rep->nwarnings ? rep->warnings[i] : NULL;
}
