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
#include "job/collectives.h"
#include "job/culprit.h"
#include "job/launchers.h"
#include "job/ras.h"
#include "job/steps.h"
#include "match.h"
#include "norm.h"
#include "scan.h"
#include "sigcond.h"

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
/* One rank's flight-recorder dump, as read (decompressed): its parse tree takes up to about 20
 * times this, so the cap bounds the memory a dump can take whatever its compressed size. Real
 * dumps of the default 2,000 entries are a few MiB. */
#define DX_FRDUMP_MAX (24u << 20)
/* The entries kept over every dump of a job (each dump keeps at most DX_FR_MAX_ENTRIES). */
#define DX_FR_TOTAL_ENTRIES 2000000u
#define DX_INPUTS_MAX 200000u /* files and members read; more are counted in a warning */

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
    ddx_warning_fn on_warning; /* each warning as it happens, or NULL */
    void *warning_ud;
    ddx_progress_fn on_progress; /* bytes read so far, after each chunk, or NULL */
    void *progress_ud;
    unsigned long long max_bytes; /* stop reading after this many bytes in all; 0 no limit */
    int threads;                  /* 0: dx_pipe_default_threads */
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

void ddx_job_set_threads(ddx_job *job, int n)
{
    if (job)
        job->threads = n > 0 ? n : 0;
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

void ddx_job_on_warning(ddx_job *job, ddx_warning_fn fn, void *ud)
{
    job->on_warning = fn;
    job->warning_ud = ud;
}

void ddx_job_on_progress(ddx_job *job, ddx_progress_fn fn, void *ud)
{
    job->on_progress = fn;
    job->progress_ud = ud;
}

void ddx_job_set_max_bytes(ddx_job *job, unsigned long long max) { job->max_bytes = max; }

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

/* Whether the valid UTF-8 sequence p[0..len) is a control a terminal acts on: C1 codes (U+0080
 * to U+009F: an 8-bit CSI starts an escape sequence on many terminals) and the bidirectional
 * overrides and isolates (U+202A..U+202E, U+2066..U+2069) that reorder what is shown. */
static int is_wide_control(const unsigned char *p, size_t len)
{
    if (len == 2)
        return p[0] == 0xC2 && p[1] < 0xA0;
    return len == 3 && p[0] == 0xE2 &&
           ((p[1] == 0x80 && p[2] >= 0xAA && p[2] <= 0xAE) ||
            (p[1] == 0x81 && p[2] >= 0xA6 && p[2] <= 0xA9));
}

/* The text of p[0..n) as it may be shown: one unit at p written to out (1 to 4 bytes); returns
 * the bytes of p it stands for. Control characters become '?' (a tab a space), C1 codes and
 * direction overrides '?', invalid UTF-8 U+FFFD. */
static size_t clean_unit(const unsigned char *p, size_t n, char out[4], size_t *outlen)
{
    size_t l = utf8_len(p, n);
    if (l == 0) {
        memcpy(out, "\xEF\xBF\xBD", 3); /* U+FFFD */
        *outlen = 3;
        return 1;
    }
    if ((l == 1 && (p[0] < 0x20 || p[0] == 0x7F)) || is_wide_control(p, l)) {
        out[0] = p[0] == '\t' ? ' ' : '?';
        *outlen = 1;
        return l;
    }
    memcpy(out, p, l);
    *outlen = l;
    return l;
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
        /* a run of printable ASCII is its own text: added at once, as far as the units added
           one by one would go (each while the text is 4 bytes short of max) */
        size_t run = 0, room = max - 3 - b.n;
        while (run < room && i + run < n && p[i + run] >= 0x20 && p[i + run] < 0x7F)
            run++;
        if (run) {
            dx_buf_add(&b, (const char *)p + i, run);
            i += run;
            continue;
        }
        char u[4];
        size_t ul;
        i += clean_unit(p + i, n - i, u, &ul);
        dx_buf_add(&b, u, ul);
    }
    if (!b.p && dx_buf_add(&b, "", 0) != DDX_OK)
        return NULL;
    return b.p;
}

void dx_clean_write(FILE *out, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, w = 0;
    while (i < n) {
        char u[4];
        size_t ul, used = clean_unit(p + i, n - i, u, &ul);
        if (w + ul > max) {
            fputs("...", out);
            return;
        }
        /* runs of plain text go out in one piece */
        if (ul == used && !memcmp(u, p + i, ul)) {
            size_t j = i + used;
            while (j < n && w + (j - i) < max) {
                size_t l2 = clean_unit(p + j, n - j, u, &ul);
                if (ul != l2 || memcmp(u, p + j, ul) != 0 || w + (j - i) + l2 > max)
                    break;
                j += l2;
            }
            fwrite(p + i, 1, j - i, out);
            w += j - i;
            i = j;
            continue;
        }
        fwrite(u, 1, ul, out);
        w += ul;
        i += used;
    }
}

char *dx_utf8_dup(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    dx_buf b = {0};
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(p + i, n - i);
        if (l == 0) {
            dx_buf_add(&b, "\xEF\xBF\xBD", 3);
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

typedef struct member_ctx member_ctx;

typedef struct scan_state {
    ddx_report *rep;
    const ddx_kb *kb;
    const ddx_job *job;
    dx_scan *scan; /* replays the matches the pipeline's threads confirmed */
    dx_pipe *pipe;
    int threads;
    int year; /* the year of the first full date seen: fills glog times */
    int rc;
    long rescan;              /* >= 0: the input index of a config whose lines are being scanned */
    unsigned long long bytes; /* bytes of text read so far, in all */
    int budget_hit;           /* max_bytes was reached: the chunks after it are not applied */
    size_t fr_entries;        /* flight-recorder entries kept so far, over every dump */
    size_t inputs_over;       /* members not read because of DX_INPUTS_MAX */
    ctx_src ctx;         /* the line being applied in its chunk, for the lines around an event */
    member_ctx *members; /* every member record, freed at the end */
    /* per chunk, by rank (< nrank, which grows with the highest rank seen up to DX_JOB_MAX_RANK):
       lines counted not yet given to the job model, the last line of the rank in the chunk (+1,
       0 none), and the ranks that have either */
    size_t nrank;
    uint32_t *cnt, *last, *first;
    int *touched, *fresh;
    size_t ntouched, nfresh;
    /* [lines of the chunk] the rank's line before and after it (+1, 0 none) */
    uint32_t *prev, *next;
    size_t capprev, capnext;
    unsigned char *timed; /* [nrank / 8] ranks whose span has its first time */
    dx_sigcond_state *sc; /* signals with conditions on where their line stands (sigcond.c) */
} scan_state;

/* Keeps a warning (the first DX_WARN_KEEP; the rest are counted) and passes it on to the job's
 * callback as it happens. */
static int add_warning_to(ddx_report *rep, const ddx_job *job, const char *msg)
{
    if (rep->nwarnings >= DX_WARN_KEEP) {
        rep->warnings_dropped++;
        return DDX_OK;
    }
    if (dx_grow((void **)&rep->warnings, &rep->capwarnings, rep->nwarnings + 1, sizeof(char *)))
        return DDX_ENOMEM;
    if (!(rep->warnings[rep->nwarnings] = dx_strdup(msg)))
        return DDX_ENOMEM;
    rep->nwarnings++;
    if (job && job->on_warning)
        job->on_warning(job->warning_ud, msg);
    return DDX_OK;
}

static int add_warning(scan_state *st, const char *msg)
{
    return add_warning_to(st->rep, st->job, msg);
}

static int add_warningf(scan_state *st, const char *fmt, ...) DX_PRINTF(2, 3);
static int add_warningf(scan_state *st, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return add_warning(st, msg);
}

static int add_rank(int **arr, size_t *n, size_t *cap, int rank, size_t max);

/* A new entry of the report's inputs for path, of kind kind. NULL when memory runs out. */
static dx_input_info *new_input(ddx_report *rep, const char *path, dx_kind kind)
{
    if (dx_grow((void **)&rep->inputs, &rep->capinputs, rep->ninputs + 1, sizeof(dx_input_info)))
        return NULL;
    dx_input_info *info = &rep->inputs[rep->ninputs];
    memset(info, 0, sizeof *info);
    info->kind = kind;
    if (!(info->path = dx_strdup(path)))
        return NULL;
    rep->ninputs++;
    return info;
}

/* A file or member that could not be read at all: listed among the inputs as unreadable, with
 * the rank its name gives, and that rank marked, so the job model never takes its silence for
 * a rank that printed nothing. */
static int note_unreadable(scan_state *st, const char *path)
{
    ddx_report *rep = st->rep;
    dx_input_info *info = new_input(rep, path, DX_KIND_UNREADABLE);
    if (!info)
        return DDX_ENOMEM;
    rep->nunreadable++;
    const char *base = strrchr(path, '/');
    int rank = dx_attrib_rank_from_name(base ? base + 1 : path, NULL);
    if (rank >= 0 && rank < DX_JOB_MAX_RANK) {
        dx_rank *x = dx_job_rank(&rep->job, rank);
        if (!x)
            return DDX_ENOMEM;
        x->unreadable = 1;
        if (add_rank(&info->ranks, &info->nranks, &info->capranks, rank, 4096))
            return DDX_ENOMEM;
    }
    return DDX_OK;
}

static void on_warn(void *ud, dx_warn_kind kind, const char *path, const char *msg)
{
    scan_state *st = ud;
    if (st->rc)
        return;
    /* the warnings of the members before it first */
    if ((st->rc = dx_pipe_drain(st->pipe)))
        return;
    if (kind == DX_WARN_UNREADABLE && st->rescan < 0)
        st->rc = note_unreadable(st, path);
    if (!st->rc)
        st->rc = add_warning(st, msg);
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

/* Counts a confirmed hit of signal sig (event e, not yet kept) and finds its place among the
 * signal's earliest DX_HITS_KEEP events: *pos, or DX_HITS_KEEP when it is not kept (a later one,
 * or its physical line was counted already: norm.c reads one as several logical lines). */
static int count_hit(ddx_report *rep, uint32_t sig, const dx_event *e, size_t *pos)
{
    *pos = DX_HITS_KEEP;
    if (!rep->hits[sig] && !(rep->hits[sig] = dx_calloc(1, sizeof(dx_sighits))))
        return DDX_ENOMEM;
    dx_sighits *h = rep->hits[sig];
    if (h->count && h->last_seq == e->seq)
        return DDX_OK;
    h->last_seq = e->seq;
    h->count++;
    int dup = e->rank < 0;
    for (size_t i = 0; i < h->nranks; i++)
        dup |= h->ranks[i] == e->rank;
    if (!dup && h->nranks < DX_ARRAY_LEN(h->ranks))
        h->ranks[h->nranks++] = e->rank;
    size_t at = h->nev;
    while (at > 0 && event_before(e, &h->ev[at - 1]))
        at--;
    *pos = at;
    return DDX_OK;
}

/* Keeps e (taken over) at pos among h's events, dropping the latest when they are full. */
static void place_event(dx_sighits *h, size_t pos, const dx_event *e)
{
    if (h->nev == DX_HITS_KEEP)
        event_fini(&h->ev[--h->nev]);
    memmove(&h->ev[pos + 1], &h->ev[pos], (h->nev - pos) * sizeof(dx_event));
    h->ev[pos] = *e;
    h->nev++;
}

/* The event of a confirmed line as record_hit keeps it: its cleaned text and captures. */
static int build_event(scan_state *st, const dx_event *proto, const char *line, size_t len,
                       dx_event *e)
{
    *e = *proto;
    e->text = dx_clean_text(line, len, 400);
    e->caps = NULL;
    e->before = e->after = NULL;
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
    return e->text ? DDX_OK : DDX_ENOMEM;
}

/* Records a confirmed hit of signal sig on line (len bytes, in the chunk st->ctx describes) as an
 * event, when it is among the signal's earliest: the text and lines around it are built only
 * then. */
static int record_hit(scan_state *st, uint32_t sig, const dx_event *proto, const char *line,
                      size_t len)
{
    size_t pos;
    int rc = count_hit(st->rep, sig, proto, &pos);
    if (rc || pos >= DX_HITS_KEEP)
        return rc;
    dx_event e;
    rc = build_event(st, proto, line, len, &e);
    place_event(st->rep->hits[sig], pos, &e);
    if (rc)
        return rc;
    if (st->kb->sigs[sig]->role != DX_ROLE_NOISE) {
        dx_event *kept = &st->rep->hits[sig]->ev[pos];
        int oom = 0;
        kept->before = context_lines(&st->ctx, line, len, 1, &oom);
        kept->after = context_lines(&st->ctx, line, len, 0, &oom);
        if (oom)
            return DDX_ENOMEM;
    }
    return DDX_OK;
}

/* A built event of signal sig that a condition let through (sigcond.c): counted and kept among
 * the earliest as record_hit does; takes e's text and captures. */
static int insert_event(ddx_report *rep, uint32_t sig, dx_event *e)
{
    size_t pos;
    int rc = count_hit(rep, sig, e, &pos);
    if (rc || pos >= DX_HITS_KEEP) {
        event_fini(e);
        return rc;
    }
    place_event(rep->hits[sig], pos, e);
    return DDX_OK;
}

/* An event a signal's condition let through: kept as a hit, and a root line is its rank's first
 * failure when it has none. */
static int commit_event(void *ud, uint32_t sig, dx_event *e)
{
    scan_state *st = ud;
    const ddx_kb *kb = st->kb;
    int rank = e->rank;
    char *first =
        kb->sigs[sig]->role == DX_ROLE_ROOT && rank >= 0 && e->text ? dx_strdup(e->text) : NULL;
    int rc = insert_event(st->rep, sig, e);
    dx_rank *x = first && !rc ? dx_job_rank(&st->rep->job, rank) : NULL;
    if (x && !x->first_error) {
        x->first_error = first;
        first = NULL;
    }
    dx_free(first);
    return rc;
}

static int any_failure_line(const ddx_report *rep);
static int failed_so_far(void *ud) { return any_failure_line(((scan_state *)ud)->rep); }

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

/* A confirmed hit of a reference's signal on a line: an event (and the rank's first root
 * failure). */
static int ref_hit(scan_state *st, uint32_t sig, const dx_line *l, const dx_attr *a,
                   const dx_event *proto)
{
    const ddx_kb *kb = st->kb;
    const dx_signal *sg = kb->sigs[sig];
    if (sg->role == DX_ROLE_NOISE)
        st->rep->noise_lines++; /* kept as events too, to show as noise */
    dx_event ev = *proto;
    dx_str cr;
    if (ev.rank < 0 && dx_scan_capture(st->scan, "rank", &cr))
        ev.rank = parse_int(cr);
    ev.blamed = dx_scan_capture(st->scan, "culprit", &cr) ? parse_int(cr) : -1;
    if (dx_sigcond_watches(st->sc, sig)) {
        dx_event e;
        int rc = build_event(st, &ev, l->text, l->len, &e);
        if (rc) {
            event_fini(&e);
            return rc;
        }
        return dx_sigcond_hit(st->sc, sig, &e, st->scan, commit_event, st);
    }
    int rc = record_hit(st, sig, &ev, l->text, l->len);
    if (rc || sg->role != DX_ROLE_ROOT || ev.rank < 0 || kb->sig_ref[sig] >= kb->nrefs)
        return rc;
    dx_rank *x = dx_job_rank(&st->rep->job, ev.rank);
    if (x && !x->first_error)
        x->first_error = dx_clean_text(l->text + a->body, l->len - a->body, 200);
    return DDX_OK;
}

/* ---- applying a scanned chunk (scan.c did the scan, maybe on another thread) ---------------- */

/* One flight-recorder dump: read whole (up to DX_FRDUMP_MAX), parsed, kept when it has a rank
 * the model holds and the job's entries stay under DX_FR_TOTAL_ENTRIES. A dump that cannot be
 * used stays in the list as refused (the verdict counts it, frdump.c) and is said in a warning,
 * so no summary speaks for it. */
static int read_frdump(scan_state *st, const dx_member *m, dx_reader *r, dx_input_info *info,
                       ddx_error *e)
{
    ddx_report *rep = st->rep;
    const char *name = m->name ? m->name : m->path;
    char *data = NULL;
    size_t len = 0;
    if (dx_grow((void **)&rep->fr, &rep->capfr, rep->nfr + 1, sizeof(dx_frdump)))
        return DDX_ENOMEM;
    dx_frdump *d = &rep->fr[rep->nfr++];
    memset(d, 0, sizeof *d);
    int rc = dx_reader_read_all(r, DX_FRDUMP_MAX, &data, &len, e);
    if (rc == DDX_OK) {
        info->bytes = len;
        rc = dx_frdump_parse(name, data, len, d, e);
        if (rc == DDX_OK && d->rank >= DX_JOB_MAX_RANK)
            rc = dx_err(e, DDX_EFORMAT,
                        "%s: rank %d is beyond the %d ranks ddx models; this dump is not "
                        "compared with the others",
                        m->path, d->rank, DX_JOB_MAX_RANK);
        else if (rc == DDX_OK && st->fr_entries + d->nentries > DX_FR_TOTAL_ENTRIES)
            rc = dx_err(e, DDX_EFORMAT,
                        "%s: the flight-recorder dumps read so far hold %zu entries, the most "
                        "ddx keeps (%u); this dump is not compared with the others",
                        m->path, st->fr_entries, DX_FR_TOTAL_ENTRIES);
        if (rc == DDX_OK) {
            st->fr_entries += d->nentries;
            if (d->rank >= 0 &&
                (add_rank(&info->ranks, &info->nranks, &info->capranks, d->rank, 4096) ||
                 !dx_job_rank(&rep->job, d->rank)))
                rc = DDX_ENOMEM;
        }
    }
    dx_free(data);
    if (rc && rc != DDX_ENOMEM) {
        if (d->status != DX_FR_REFUSED) { /* over its budget, or read but not kept */
            dx_frdump_fini(d);
            memset(d, 0, sizeof *d);
            dx_frdump_empty(name, d);
            d->status = DX_FR_REFUSED;
        }
        if (d->rank >= DX_JOB_MAX_RANK)
            d->rank = -1;
        rep->fr_refused++;
    }
    return rc;
}

/* An empty file is evidence too: a rank's per-rank log that stayed empty names a rank that
 * printed nothing; one named like a flight-recorder dump ("..._7") is that rank's empty dump,
 * counted when another dump of the job shares its name's prefix (frdump.c). */
static int empty_input(ddx_report *rep, const char *name)
{
    int rank = dx_attrib_rank_from_name(name, NULL);
    if (rank >= 0 && !dx_job_rank(&rep->job, rank))
        return DDX_ENOMEM;
    if (!dx_frdump_name_ranked(name))
        return DDX_OK;
    if (dx_grow((void **)&rep->fr, &rep->capfr, rep->nfr + 1, sizeof(dx_frdump)))
        return DDX_ENOMEM;
    dx_frdump_empty(name, &rep->fr[rep->nfr++]);
    return DDX_OK;
}

/* What the applying thread keeps of a member while its chunks are applied. */
struct member_ctx {
    member_ctx *next;
    char *path; /* display path, copied: the member is gone by the time its chunks are applied */
    char *name; /* its name as given (the rank a file name implies), copied */
    uint32_t input;
    int as_log;
    int file_rank;
    int last_rank;      /* the rank of the previous line (skips the input's rank set) */
    int have_last_time; /* the last time seen in the member before the current chunk */
    dx_time last_time;
    unsigned char *seen; /* [nseen] ranks already in the input's rank set (a bit each) */
    size_t nseen;
    /* the lines of the current chunk already searched for the latest time (lt_upto), and the
       latest time found among them (lt_line: +1, 0 none) */
    size_t lt_upto, lt_line;
    dx_time lt;
    int failed; /* a chunk could not be scanned: the rest of the member is not read */
    int rc;     /* how reading it ended */
    ddx_error err;
    uint64_t failed_bytes;
};

static member_ctx *member_new(scan_state *st, const dx_member *m, uint32_t input, int as_log)
{
    member_ctx *mb = dx_calloc(1, sizeof *mb);
    if (!mb || !(mb->path = dx_strdup(m->path)) ||
        !(mb->name = dx_strdup(m->name ? m->name : m->path))) {
        if (mb)
            dx_free(mb->path);
        dx_free(mb);
        return NULL;
    }
    mb->input = input;
    mb->as_log = as_log;
    mb->file_rank = dx_attrib_rank_from_name(mb->name, NULL);
    mb->last_rank = -1;
    mb->next = st->members;
    st->members = mb;
    return mb;
}

/* The line's time, when it has one. */
static int line_time(const char *line, size_t len, dx_time *t)
{
    if (!dx_attrib_may_have_time(line, len))
        return 0;
    dx_attr a;
    dx_attrib_line(line, len, &a);
    if (a.has_time)
        *t = a.time;
    return a.has_time;
}

/* The last time seen in the member up to line i of the chunk (i included), as the events of
 * that line take it: lines are searched from i down to those searched before, once each. */
static int time_upto(member_ctx *mb, const dx_piece *p, size_t i, dx_time *t)
{
    for (size_t j = i + 1; j > mb->lt_upto; j--) {
        size_t len;
        const char *line = dx_piece_line(p, j - 1, &len);
        if (line_time(line, len, &mb->lt)) {
            mb->lt_line = j;
            break;
        }
    }
    if (i + 1 > mb->lt_upto)
        mb->lt_upto = i + 1;
    if (mb->lt_line) {
        *t = mb->lt;
        return 1;
    }
    *t = mb->last_time;
    return mb->have_last_time;
}

/* *p, of old elements of elem bytes, grown to n with the new ones zero. */
static int grow_zero(void **p, size_t old, size_t n, size_t elem)
{
    void *q = dx_realloc(*p, n * elem);
    if (!q)
        return DDX_ENOMEM;
    memset((char *)q + old * elem, 0, (n - old) * elem);
    *p = q;
    return DDX_OK;
}

/* The tables by rank hold rank r (< DX_JOB_MAX_RANK): they grow with the highest rank the job
 * shows, so a job costs memory for the ranks it has, not for every rank the model could hold. */
static int rank_room(scan_state *st, int r)
{
    if ((size_t)r < st->nrank)
        return DDX_OK;
    size_t n = st->nrank ? st->nrank : 64;
    while (n <= (size_t)r)
        n *= 2;
    n = n > DX_JOB_MAX_RANK ? DX_JOB_MAX_RANK : n;
    size_t o = st->nrank;
    if (grow_zero((void **)&st->cnt, o, n, sizeof *st->cnt) ||
        grow_zero((void **)&st->last, o, n, sizeof *st->last) ||
        grow_zero((void **)&st->first, o, n, sizeof *st->first) ||
        grow_zero((void **)&st->touched, o, n, sizeof *st->touched) ||
        grow_zero((void **)&st->fresh, o, n, sizeof *st->fresh) ||
        grow_zero((void **)&st->timed, (o + 7) / 8, (n + 7) / 8, 1))
        return DDX_ENOMEM;
    st->nrank = n;
    return DDX_OK;
}

/* Rank r (< DX_JOB_MAX_RANK) into the member's set of ranks seen; whether it was there. */
static int seen_rank(member_ctx *mb, int r, int *known)
{
    size_t byte = (size_t)r >> 3;
    if (byte >= mb->nseen) {
        size_t n = mb->nseen ? mb->nseen : 8;
        while (n <= byte)
            n *= 2;
        if (grow_zero((void **)&mb->seen, mb->nseen, n, 1))
            return DDX_ENOMEM;
        mb->nseen = n;
    }
    *known = mb->seen[byte] >> (r & 7) & 1;
    mb->seen[byte] |= (unsigned char)(1u << (r & 7));
    return DDX_OK;
}

/* Rank r's line: into the input's rank set, and (logs) counted for the job model unless the
 * caller passes the line itself (counted: 0); line i's place in the rank's chain. */
static int see_rank(scan_state *st, member_ctx *mb, int r, size_t i, int count)
{
    if (r >= 0 && r != mb->last_rank) {
        int known = 0;
        dx_input_info *info = &st->rep->inputs[mb->input];
        if ((r < DX_JOB_MAX_RANK && seen_rank(mb, r, &known)) ||
            (!known && add_rank(&info->ranks, &info->nranks, &info->capranks, r, 4096)))
            return DDX_ENOMEM;
    }
    mb->last_rank = r;
    if (!mb->as_log || r < 0 || r >= DX_JOB_MAX_RANK)
        return DDX_OK;
    if (rank_room(st, r))
        return DDX_ENOMEM;
    if (!st->last[r] && !st->cnt[r]) {
        st->touched[st->ntouched++] = r;
        st->first[r] = (uint32_t)i + 1;
    }
    if (count && !st->cnt[r]++)
        st->fresh[st->nfresh++] = r;
    st->prev[i] = st->last[r];
    st->next[i] = 0;
    if (st->last[r])
        st->next[st->last[r] - 1] = (uint32_t)i + 1;
    st->last[r] = (uint32_t)i + 1;
    return DDX_OK;
}

/* The lines counted since the last flush go to the job model, ranks in the order first seen. */
static int flush_counts(scan_state *st)
{
    for (size_t k = 0; k < st->nfresh; k++) {
        int r = st->fresh[k];
        if (dx_job_lines_seen(&st->rep->job, r, st->cnt[r]))
            return DDX_ENOMEM;
        st->cnt[r] = 0;
    }
    st->nfresh = 0;
    return DDX_OK;
}

/* The confirmed candidates of line i: facts, job readings, references' events. A line a victim
 * reference (culprit: other-rank) reads is an echo of another rank's failure for the job
 * readings (which come after the references' signals). */
static int line_hits(scan_state *st, member_ctx *mb, const dx_piece *p, size_t i, size_t *hi,
                     const dx_line *l, const dx_attr *a)
{
    const ddx_kb *kb = st->kb;
    int echo = 0, have_proto = 0, rc;
    dx_event proto = {0};
    for (; *hi < p->nhits && p->hits[*hi].line == i; (*hi)++) {
        const dx_hitrec *h = &p->hits[*hi];
        uint32_t sig = h->sig;
        dx_scan_replay(st->scan, sig, l->text + (h->on_body ? a->body : 0), p->ovs + h->ov,
                       h->npairs);
        uint32_t ref = kb->sig_ref[sig];
        if (ref == DX_SIG_FACT) {
            rc = dx_fact_extract(kb->sig_idx[sig], st->scan, &st->rep->facts, l->path, l->lineno);
        } else if (!mb->as_log) {
            rc = DDX_OK; /* env dumps give facts, not failures */
        } else if (ref == DX_SIG_JOB) {
            dx_hit jh = {.scan = st->scan,
                         .rank = l->rank,
                         .path = l->path,
                         .line = l->lineno,
                         .seq = l->seq,
                         .text = l->text + a->body,
                         .len = l->len - a->body,
                         .has_time = a->has_time,
                         .time = a->time,
                         .echo = echo};
            rc = dx_job_hit(&st->rep->job, kb->sig_idx[sig], &jh);
        } else {
            echo |= kb->refs[ref]->culprit_other == 1 && kb->sigs[sig]->role != DX_ROLE_NOISE;
            if (!have_proto) {
                /* the event's time: the last one the member printed up to this line */
                proto.input = mb->input;
                proto.line = l->lineno;
                proto.rank = l->rank;
                proto.has_time = time_upto(mb, p, i, &proto.time);
                proto.seq = l->seq;
                have_proto = 1;
            }
            rc = ref_hit(st, sig, l, a, &proto);
        }
        if (rc)
            return rc;
    }
    return DDX_OK;
}

/* The rank line i of the member is read with: r, or none (-1) when r is beyond the ranks the
 * model holds (said once per job, in a warning). */
static int model_rank(scan_state *st, const member_ctx *mb, const dx_piece *p, size_t i, int r,
                      int *out)
{
    *out = r;
    if (r < DX_JOB_MAX_RANK)
        return DDX_OK;
    *out = -1;
    if (st->rep->wide_ranks++)
        return DDX_OK;
    return add_warningf(st,
                        "%s:%llu: rank %d is beyond the %d ranks ddx models; lines of such ranks "
                        "are read without their rank",
                        mb->path, (unsigned long long)dx_piece_lineno(p, i), r, DX_JOB_MAX_RANK);
}

/* Line i read in full: attributed, passed to the job model, its confirmed candidates applied. */
static int full_line(scan_state *st, member_ctx *mb, const dx_piece *p, size_t i, size_t *hi,
                     size_t *ci)
{
    size_t len;
    const char *line = dx_piece_line(p, i, &len);
    dx_attr a;
    if (*ci < p->ncl && p->cl[*ci].line == i)
        a = p->cl[(*ci)++].a;
    else
        dx_attrib_line(line, len, &a);
    int rank;
    int rc = model_rank(st, mb, p, i,
                        a.rank >= 0         ? a.rank
                        : a.local_rank >= 0 ? a.local_rank
                                            : mb->file_rank,
                        &rank);
    if (rc)
        return rc;
    uint64_t lineno = dx_piece_lineno(p, i);
    dx_line l = {rank, &a, mb->path, lineno, ((uint64_t)mb->input << 40) | lineno, line, len};
    /* a line the job model places (a worker's traceback under mp.spawn's report) */
    int own = mb->as_log ? dx_job_line_rank(&st->rep->job, &l) : -1;
    if (rank < 0 && own >= 0)
        l.rank = rank = own;
    if (see_rank(st, mb, rank, i, 0) || flush_counts(st))
        return DDX_ENOMEM;
    if (mb->as_log && (rc = dx_job_line(&st->rep->job, &l)))
        return rc;
    if (mb->as_log) {
        size_t body_end = dx_norm_body_end(line, a.body, len);
        dx_sigcond_line(st->sc, mb->input, l.seq, line + a.body,
                        body_end > a.body ? body_end - a.body : 0);
    }
    /* the lines around an event: the chunk's (the rank's span is noted at the chunk's end) */
    st->ctx = (ctx_src){p->data, p->data + p->dlen, p->logical ? p->norm.first : NULL, i, lineno};
    return line_hits(st, mb, p, i, hi, &l, &a);
}

/* Line j (+1) of p as a time-only attribution, for the report's span of a rank. */
static int span_note(scan_state *st, const member_ctx *mb, const dx_piece *p, int r, uint32_t j,
                     const dx_time *t)
{
    dx_attr a = {0};
    if (t) {
        a.has_time = 1;
        a.time = *t;
    }
    return dx_view_note_line(st->rep, r, ((uint64_t)mb->input << 40) | dx_piece_lineno(p, j - 1),
                             &a);
}

/* The first (dir 1, along next) or last (dir 0, along prev) line with a time of the rank's
 * chain from line j (+1); 0 when none. */
static uint32_t chain_time(const scan_state *st, const dx_piece *p, uint32_t j, int dir, dx_time *t)
{
    for (; j; j = dir ? st->next[j - 1] : st->prev[j - 1]) {
        size_t len;
        const char *line = dx_piece_line(p, j - 1, &len);
        if (line_time(line, len, t))
            return j;
    }
    return 0;
}

/* The end of a chunk: each rank's last time (the job model reads them only once every input is
 * read) and its span of lines in the report (as noting each line in turn would leave it: its
 * first line, first time, last time and last line), the member's last time, the job's year. */
static int chunk_times(scan_state *st, member_ctx *mb, const dx_piece *p)
{
    for (size_t k = 0; k < st->ntouched; k++) {
        int r = st->touched[k];
        dx_time t;
        int rc = span_note(st, mb, p, r, st->first[r], NULL);
        if (!rc && !(st->timed[r >> 3] >> (r & 7) & 1)) {
            uint32_t j = chain_time(st, p, st->first[r], 1, &t);
            if (j) {
                st->timed[r >> 3] |= (unsigned char)(1u << (r & 7));
                rc = span_note(st, mb, p, r, j, &t);
            }
        }
        uint32_t j = rc ? 0 : chain_time(st, p, st->last[r], 0, &t);
        if (j) {
            dx_job_rank_time(&st->rep->job, r, &t);
            rc = span_note(st, mb, p, r, j, &t);
        }
        if (rc || (rc = span_note(st, mb, p, r, st->last[r], NULL)))
            return rc;
        st->last[r] = st->first[r] = 0;
    }
    st->ntouched = 0;
    if (p->nl)
        mb->have_last_time = time_upto(mb, p, p->nl - 1, &mb->last_time);
    mb->lt_upto = mb->lt_line = 0;
    for (size_t i = 0; i < p->nl && !st->year; i++) {
        size_t len;
        const char *line = dx_piece_line(p, i, &len);
        dx_time t;
        if (line_time(line, len, &t) && t.year)
            st->year = t.year;
    }
    return DDX_OK;
}

static int apply_chunk(scan_state *st, member_ctx *mb, const dx_piece *p)
{
    ddx_report *rep = st->rep;
    if (st->budget_hit)
        return DDX_OK; /* --max-bytes was reached at an earlier chunk: the rest is not read */
    for (size_t t = 0; t < p->ntrunc && rep->nwarnings < 20; t++)
        if (add_warningf(st, "%s:%llu: line longer than %u KiB; only its start was read", mb->path,
                         (unsigned long long)p->trunc[t], DX_LINE_MAX >> 10))
            return DDX_ENOMEM;
    if (dx_grow((void **)&st->prev, &st->capprev, p->nl ? p->nl : 1, sizeof *st->prev) ||
        dx_grow((void **)&st->next, &st->capnext, p->nl ? p->nl : 1, sizeof *st->next))
        return DDX_ENOMEM;
    size_t hi = 0, ci = 0;
    int rc = DDX_OK;
    for (size_t i = 0; i < p->nl && !rc;) {
        size_t next = hi < p->nhits ? p->hits[hi].line : p->nl;
        uint64_t seq = ((uint64_t)mb->input << 40) | dx_piece_lineno(p, i);
        if (i < next && !(mb->as_log &&
                          (dx_job_wants_lines(&rep->job, seq) || dx_sigcond_wants_lines(st->sc)))) {
            /* lines no pattern hit and no reading wants: their ranks, counted */
            for (int r; i < next && !rc; i++)
                if (!(rc = model_rank(st, mb, p, i, p->rank[i] >= 0 ? p->rank[i] : mb->file_rank,
                                      &r)))
                    rc = see_rank(st, mb, r, i, 1);
            continue;
        }
        rc = full_line(st, mb, p, i, &hi, &ci);
        i++;
    }
    if (rc || (rc = flush_counts(st)))
        return rc;
    if ((rc = chunk_times(st, mb, p)))
        return rc;
    rep->inputs[mb->input].lines = p->first_line + p->nlines - 1;
    /* the bytes read so far: the progress line, and the --max-bytes budget */
    st->bytes += p->rawlen;
    const ddx_job *job = st->job;
    if (job->on_progress)
        job->on_progress(job->progress_ud, mb->path, st->bytes);
    if (job->max_bytes && st->bytes >= job->max_bytes) {
        st->budget_hit = 1;
        return add_warningf(st,
                            "%s:%llu: stopped reading here: %llu bytes read, the limit "
                            "--max-bytes set; the inputs after this point are not read",
                            mb->path, (unsigned long long)rep->inputs[mb->input].lines, st->bytes);
    }
    return DDX_OK;
}

/* The end of a member: how much was read, and a warning when it could not be read to its end
 * (a member that cannot be read to the end keeps what was read; the walk goes on). */
static int end_member(scan_state *st, member_ctx *mb, const dx_piece *p)
{
    dx_input_info *info = &st->rep->inputs[mb->input];
    /* the conditions that wait for the end of an input (sigcond.c) */
    if (mb->as_log && dx_sigcond_input_end(st->sc, commit_event, st))
        return DDX_ENOMEM;
    int rc = mb->failed ? mb->rc : p->end_rc;
    dx_free(mb->seen); /* its ranks are in the input's set: the member's own is done */
    mb->seen = NULL;
    mb->nseen = 0;
    if (!info->bytes && rc != DDX_ENOMEM)
        info->bytes = mb->failed ? mb->failed_bytes : p->bytes;
    mb->rc = rc;
    if (!mb->failed)
        mb->err = p->end_err;
    if (st->rescan >= 0 || rc == DDX_ENOMEM)
        return rc == DDX_ENOMEM ? rc : DDX_OK; /* a config's lines: its caller says */
    if (rc)
        return add_warning(st, mb->err.message[0] ? mb->err.message : "an input could not be read");
    return info->bytes ? DDX_OK : empty_input(st->rep, mb->name);
}

static int apply_piece(void *ud, dx_piece *p)
{
    scan_state *st = ud;
    member_ctx *mb = p->member;
    if (p->kind == DX_PIECE_END)
        return end_member(st, mb, p);
    if (mb->failed)
        return DDX_OK; /* the member's reading stopped at an earlier chunk */
    if (p->rc) {
        mb->failed = 1;
        mb->rc = p->rc;
        mb->err = p->err;
        mb->failed_bytes = p->bytes;
        return p->rc == DDX_ENOMEM ? DDX_ENOMEM : DDX_OK;
    }
    return apply_chunk(st, mb, p);
}

static int job_budget(const scan_state *st) { return st->job->max_bytes != 0; }

/* A log's chunks into the pipeline (the member's lines are applied in order, maybe later). */
static int scan_log(scan_state *st, const dx_member *m, dx_reader *r, uint32_t input_index,
                    int as_log)
{
    member_ctx *mb = member_new(st, m, input_index, as_log);
    if (!mb)
        return DDX_ENOMEM;
    dx_chunk c;
    ddx_error e = {0};
    int rc = DDX_OK;
    while (!st->budget_hit && (rc = dx_reader_next(r, &c, &e)) > 0)
        if ((rc = dx_pipe_chunk(st->pipe, mb, &c, dx_reader_bytes(r))))
            return rc;
    return dx_pipe_end(st->pipe, mb, rc, &e, dx_reader_bytes(r));
}

/* A config or a RAS report, read whole (up to DX_CONFIG_MAX) and counted. */
static int read_whole(dx_reader *r, dx_input_info *info, char **text, size_t *len, ddx_error *e)
{
    int rc = dx_reader_read_all(r, DX_CONFIG_MAX, text, len, e);
    if (rc == DDX_OK) {
        info->bytes = *len;
        for (size_t i = 0; i < *len; i++)
            info->lines += (*text)[i] == '\n';
    }
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
        int rc = scan_log(st, m, r, (uint32_t)st->rescan, 1);
        if (!rc)
            rc = dx_pipe_drain(st->pipe);
        return rc ? rc : st->members->rc;
    }
    if (rep->ninputs >= DX_INPUTS_MAX) {
        st->inputs_over++;
        return DDX_OK;
    }
    dx_reader_peek(r, &head, &nhead);
    dx_kind kind = dx_input_classify(m->name ? m->name : m->path, head, nhead);
    /* anything but a log changes the report at once: what the pipeline holds comes first */
    int drc = kind == DX_KIND_LOG || kind == DX_KIND_ENV ? DDX_OK : dx_pipe_drain(st->pipe);
    if (drc)
        return drc;
    dx_input_info *info = new_input(rep, m->path, kind);
    if (!info)
        return DDX_ENOMEM;
    uint32_t idx = (uint32_t)(rep->ninputs - 1);
    int rc = DDX_OK;
    ddx_error e = {0};
    if (kind == DX_KIND_CONFIG) {
        char *text = NULL;
        size_t len = 0;
        rc = read_whole(r, info, &text, &len, &e);
        if (rc == DDX_OK) {
            rc = dx_facts_from_config(&rep->facts, m->path, text, len, &e);
            if (rc == DDX_EFORMAT) /* not read as a config (too deep): a warning, go on */
                rc = add_warning(st, e.message);
            if (rc == DDX_OK) {
                st->rescan = (long)idx;
                rc = dx_input_walk_buffer(m->path, text, len, on_member, on_warn, st, &e);
                st->rescan = -1;
                if (rc == DDX_OK)
                    rc = st->rc;
            }
        }
        dx_free(text);
    } else if (kind == DX_KIND_LOG || kind == DX_KIND_ENV) {
        /* the pipeline says how reading it ended, and keeps an empty one (end_member) */
        rep->nread++;
        rc = scan_log(st, m, r, idx, kind == DX_KIND_LOG);
        /* with a --max-bytes budget, each member is applied before the next is read: the walk
           stops where the budget ran out */
        if (!rc && job_budget(st) && !(rc = dx_pipe_drain(st->pipe)) && st->budget_hit)
            rc = DDX_EINVAL; /* stops the walk: read_inputs knows why */
        return rc;
    } else if (kind == DX_KIND_RAS) {
        char *text = NULL;
        size_t len = 0;
        rc = read_whole(r, info, &text, &len, &e);
        if (rc == DDX_OK)
            rc = dx_nccl_ras_json(&rep->job, m->path, text, len, &e);
        dx_free(text);
    } else if (kind == DX_KIND_FRDUMP) {
        rc = read_frdump(st, m, r, info, &e);
    } else {
        info->bytes = m->size_hint;
        if (kind == DX_KIND_BINARY)
            rc = add_warningf(st,
                              "%s: not text; skipped (pass the logs it holds as plain files or "
                              "an archive)",
                              m->path);
        else if (kind == DX_KIND_REPORT) {
            rep->nreports++;
            rc = add_warningf(st,
                              "%s: a report ddx wrote; not read as evidence (save reports "
                              "outside the job's folder to keep this note away)",
                              m->path);
        }
    }
    if (kind != DX_KIND_BINARY && kind != DX_KIND_REPORT)
        rep->nread++;
    if (rc == DDX_ENOMEM)
        return rc;
    if (rc) {
        /* a member that cannot be read to the end: keep what was read, warn, go on */
        rc = add_warning(st, e.message[0] ? e.message : "an input could not be read");
    }
    if (!rc && st->budget_hit)
        return DDX_EINVAL; /* stops the walk: read_inputs knows why */
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

/* Whether event e names, in its other_pid capture ("Process 4242 has 77.92 GiB memory in use"
 * in a CUDA OOM lists every process on the GPU, the rank's own among them), a process of the
 * job itself: then it is no other process. */
static int own_pid_event(const ddx_report *rep, const dx_event *e)
{
    const char *c = e->caps ? strstr(e->caps, "other_pid=") : NULL;
    if (!c || (c != e->caps && c[-1] != ' '))
        return 0;
    char *end;
    long long pid = strtoll(c + strlen("other_pid="), &end, 10);
    if (end == c + strlen("other_pid=") || pid <= 0)
        return 0;
    const dx_job_model *jm = &rep->job;
    for (size_t r = 0; r < jm->nby; r++)
        if (jm->by_rank[r] && jm->by_rank[r]->pid == pid)
            return 1;
    return 0;
}

/* Whether a signal's hit counts: any event kept, unless every one only names the job's own
 * processes as another process. */
static int signal_counts(const ddx_report *rep, const dx_sighits *h)
{
    if (!h->count)
        return 0;
    for (size_t k = 0; k < h->nev; k++)
        if (!own_pid_event(rep, &h->ev[k]))
            return 1;
    return h->nev == 0;
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
        if (signal_counts(rep, hits_of(rep, first_sig + i)) &&
            r->signals[i].role != DX_ROLE_AGAINST)
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
        if (!signal_counts(rep, h))
            continue;
        size_t k0 = 0;
        while (k0 < h->nev && own_pid_event(rep, &h->ev[k0]))
            k0++;
        const dx_event *e = k0 < h->nev ? &h->ev[k0] : &h->ev[0];
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
            if (own_pid_event(rep, &h->ev[k]))
                continue;
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
        f->fact_root |= v == 1 && c->root;
        if (w == 0)
            continue;
        f->ctx_pos += w > 0;
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
                    signal_counts(rep, hits_of(rep, first_sig + i)))
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

/* The share a candidate takes of the explanations that compete with it (what keeping it in a
 * report decides on; the confidence a report shows is calibrated from it, calibrate()): a
 * softmax over the candidates and the "nothing known" outcome (logit 0). Candidates resting on
 * the same lines as each other do not compete (one is a reading of the other's evidence);
 * candidates that explain different lines do, except that a candidate resting only on
 * consequences (no root line of its own) does not compete with the one that reads the job's
 * earliest root failure: the other ranks' timeouts after a crash corroborate it, and must
 * never lower it. rep->f must be sorted best first. */
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
            if (evidence_within(f, g) || evidence_within(g, f) || (f->earliest && !g->has_root))
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

/* ==== calibration ========================================================================== */

/* The confidence a report shows is the share of findings like it that were right on the
 * labelled corpora (docs/accuracy.md, "Calibration"): a logistic function of whether it is the
 * report's top finding and of its log-odds, fitted on both corpora (shared and tests/corpus):
 *   confidence = 1 / (1 + exp(-(CAL_BIAS + CAL_TOP [top] + CAL_LOGIT clamp(logit, +-4))))
 * The top finding of a report is right far more often than its share of the softmax said (96 %
 * of top findings on the corpora, 93 % on the first-look batches, whatever the share), an
 * alternative far less (about 20 %). A finding in one of the cases below stays under likely
 * (CAL_CAP), whatever the fit says: each is a class the corpora show to be right about half the
 * time or less, and a negative log must never yield likely. */
#define CAL_BIAS (-1.04)
#define CAL_TOP 4.10
#define CAL_LOGIT 0.33
#define CAL_CAP 0.49

static int finding_has_line(const dx_finding *f, uint64_t seq);

/* A weak reading: kept only because nothing explains a failure line better (or shown only with
 * --all), below the share a report keeps on its own. */
static int cap_weak(const ddx_report *rep, size_t i)
{
    (void)rep;
    return rep->f[i].raw < DX_KEEP_MIN;
}

/* The top finding rests on no root line of its own while a rank raised an exception its lines
 * do not include: that exception may be the failure. */
static int cap_unexplained(const ddx_report *rep, size_t i)
{
    return i == 0 && !rep->f[i].has_root && rep->f[i].unexplained;
}

/* An alternative with nothing of its own: every line it reads is one the top finding reads,
 * and no condition of its framework or context holds (deepspeed-oom on a plain CUDA OOM with no
 * DeepSpeed anywhere). */
static int cap_no_own_evidence(const ddx_report *rep, size_t i)
{
    const dx_finding *f = &rep->f[i];
    if (i == 0 || f->ctx_pos)
        return 0;
    for (size_t k = 0; k < f->nevid; k++)
        if (f->evid[k].weight > 0 && !finding_has_line(&rep->f[0], f->evid[k].ev->seq))
            return 0;
    return 1;
}

static const struct {
    int (*applies)(const ddx_report *rep, size_t i);
    const char *why;
} cal_caps[] = {
    {cap_weak, "a weak reading (kept only because nothing explains the failure line better)"},
    {cap_unexplained, "no root line of its own, while a rank raised an exception it does not "
                      "read"},
    {cap_no_own_evidence, "an alternative with no line or context of its own"},
};

static void calibrate(ddx_report *rep)
{
    for (size_t i = 0; i < rep->nf; i++) {
        dx_finding *f = &rep->f[i];
        double l = f->logit < -4 ? -4 : f->logit > 4 ? 4 : f->logit;
        double z = CAL_BIAS + (i == 0 ? CAL_TOP : 0) + CAL_LOGIT * l;
        f->confidence = 1 / (1 + exp(-z));
        for (size_t k = 0; k < DX_ARRAY_LEN(cal_caps) && !f->capped; k++)
            if (cal_caps[k].applies(rep, i))
                f->capped = cal_caps[k].why;
        if (f->capped && f->confidence > CAL_CAP)
            f->confidence = CAL_CAP;
    }
}

/* Whether the finding's lines include the line read at seq. */
static int finding_has_line(const dx_finding *f, uint64_t seq)
{
    for (size_t k = 0; k < f->nevid; k++)
        if (f->evid[k].weight > 0 && f->evid[k].ev->seq == seq)
            return 1;
    return 0;
}

/* Whether some rank raised an exception of its own (not an echo of another rank's failure, not
 * a launcher's record) on a line the finding does not read: the failure may be that one. */
static int unexplained_exception(const ddx_report *rep, const dx_finding *f)
{
    const dx_job_model *jm = &rep->job;
    uint64_t seq;
    for (size_t r = 0; r < jm->nby; r++)
        if (jm->by_rank[r] && dx_exception_original(jm, jm->by_rank[r], &seq) &&
            !finding_has_line(f, seq))
            return 1;
    return dx_exception_unranked_original(jm, &seq) && !finding_has_line(f, seq);
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
    for (size_t k = 0; k < f->nevid; k++) {
        const dx_signal *s = f->evid[k].sig;
        /* a stall's line (at_end: its input stops there, nothing failed anywhere) is evidence by
         * where it stands, however harmless the line itself */
        int stall = f->ref->conds && f->ref->conds[s - f->ref->signals].at_end;
        if (f->evid[k].weight > 0 && (s->role == DX_ROLE_ROOT || s->role == DX_ROLE_SYMPTOM) &&
            (stall || !is_noise_line(rep, f->evid[k].ev->seq)))
            return 1;
    }
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
        f->earliest = covers;
        if (covers)
            rc = add_contrib(f, DX_EARLIEST_ROOT, "the earliest root failure in the job (%s)",
                             where(rep, earliest, wbuf, sizeof wbuf));
        else if (!f->has_root && !f->fact_root && !long_before(f->first, earliest))
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
    for (size_t i = 0; i < rep->nf; i++) {
        rep->f[i].raw = rep->f[i].confidence;
        rep->f[i].unexplained = unexplained_exception(rep, &rep->f[i]);
    }
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
    calibrate(rep);
    rc = build_timeline(rep);
done:
    dx_free(first_sig);
    dx_free(fsig);
    return rc;
}

/* ==== the culprit =========================================================================== */

/* The first root failure of the top finding, on a rank that is known. The same root failure on
 * several ranks, with nothing in the log's times to show one failing first, names none of them
 * alone: when they are at most half of the job's ranks (two faulty nodes among healthy ones),
 * they are the culprits together; when more printed it, a failure of the whole job is likelier,
 * and they are only tied (a vote that decides nothing, but vetoes the launcher's pick among
 * them, made by whole-second error-file times). */
static int vote_root(ddx_report *rep, const dx_finding *top)
{
    if (!top || !top->first_ranked || !top->has_root || top->ref->culprit_other)
        return DDX_OK;
    const dx_event *f0 = top->first_ranked;
    int ranks[DX_VOTE_RANKS] = {f0->rank}, tied = 0;
    size_t n = 1;
    for (size_t i = 0; i < top->nevid; i++) {
        const dx_event *ev = top->evid[i].ev;
        if (top->evid[i].sig->role != DX_ROLE_ROOT || ev->rank < 0)
            continue;
        size_t k = 0;
        while (k < n && ranks[k] != ev->rank)
            k++;
        if (k == n && n < DX_ARRAY_LEN(ranks))
            ranks[n++] = ev->rank;
        tied |= ev->rank != f0->rank && !(f0->has_time && ev->has_time && f0->tkey < ev->tkey);
    }
    if (!tied)
        return dx_job_vote(&rep->job, "root", f0->rank, 1, "first root failure: rank %d (%s)",
                           f0->rank, top->ref->id);
    if (2 * n <= rep->job.nranks)
        return dx_job_vote_ranks(&rep->job, "root-several", ranks, n, 1,
                                 "first root failure on %zu of the %zu ranks, with nothing to "
                                 "order them: ranks %d and %d%s (%s)",
                                 n, rep->job.nranks, ranks[0], ranks[1], n > 2 ? " and others" : "",
                                 top->ref->id);
    return dx_job_vote_ranks(&rep->job, "root-tied", ranks, n, 0,
                             "the same root failure (%s) on every rank", top->ref->id);
}

/* A rank the lines themselves name ("but Rank 1 is running collective ..."): the one most of the
 * top finding's evidence names. */
static int vote_blamed(ddx_report *rep, const dx_finding *top)
{
    int votes[8] = {0}, cand[8], blamed = -1, best = 0;
    size_t nc = 0;
    for (size_t i = 0; top && i < top->nevid; i++) {
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
    for (size_t k = 0; k < nc; k++)
        if (votes[k] > best) {
            best = votes[k];
            blamed = cand[k];
        }
    return blamed < 0
               ? DDX_OK
               : dx_job_vote(&rep->job, "blamed", blamed, best,
                             "named in the log: the %s lines blame rank %d", top->ref->id, blamed);
}

/* The lines of a victim reference come from the ranks that waited: the culprit is the rank that
 * raised its own exception first without printing them. */
static int vote_exception(ddx_report *rep, const dx_finding *top)
{
    const dx_job_model *jm = &rep->job;
    uint64_t best = UINT64_MAX, seq;
    int exc = -1;
    const char *text = NULL;
    for (size_t r = 0; top && top->ref->culprit_other && r < jm->nby; r++) {
        const char *first = dx_exception_first(jm, jm->by_rank[r], &seq);
        int victim = 0;
        for (size_t k = 0; first && k < top->nranks; k++)
            victim |= top->ranks[k] == (int)r;
        if (first && !victim && seq < best) {
            best = seq;
            exc = (int)r;
            text = first;
        }
    }
    return exc < 0 ? DDX_OK
                   : dx_job_vote(&rep->job, "exception", exc, 1,
                                 "rank %d raised its own exception (%s) while the others only saw "
                                 "it fail",
                                 exc, text);
}

/* The top finding rests on no ranked line (a fact of the job's state shows the failure) and a
 * traceback cut before its exception line is the job's last word: the rank that printed that
 * traceback is the one that failed (its innermost frame raised). */
static int vote_cut_frame(ddx_report *rep, const dx_finding *top)
{
    if (!top || top->first_ranked || top->ref->culprit_other)
        return DDX_OK;
    uint64_t seq;
    int rank;
    const char *frame = dx_traceback_last_frame(&rep->job, &seq, &rank);
    if (!frame[0] || rank < 0 || seq <= dx_exception_last_seq(&rep->job))
        return DDX_OK;
    return dx_job_vote(&rep->job, "cut-frame", rank, 1,
                       "rank %d's traceback, cut before its exception, ends in the failing call "
                       "(%s)",
                       rank, top->ref->id);
}

/* The flight recorder's culprits, in one vote: the ranks its comparison holds responsible (the
 * rank of its first reason first), with the reasons of the first two. */
static int vote_flight_recorder(ddx_report *rep)
{
    const dx_fr_verdict *v = &rep->frv;
    if (!v->nculprits)
        return DDX_OK;
    int ranks[DX_FR_MAX_CULPRITS];
    size_t n = 0;
    const dx_fr_finding *why[2] = {NULL, NULL};
    for (size_t i = 0; i < rep->nfrf && n < 2; i++)
        if (rep->frf[i].root && (!why[0] || why[0]->rank != rep->frf[i].rank))
            why[n++] = &rep->frf[i];
    n = 0;
    if (why[0])
        ranks[n++] = why[0]->rank;
    for (size_t i = 0; i < v->nculprits && n < DX_ARRAY_LEN(ranks); i++)
        if (!why[0] || v->culprits[i] != why[0]->rank)
            ranks[n++] = v->culprits[i];
    return dx_job_vote_ranks(&rep->job, "flight-recorder", ranks,
                             n < DX_VOTE_RANKS ? n : DX_VOTE_RANKS, v->decisive ? 2 : 1,
                             "flight recorder (%s, %zu dump%s compared): %s%s%s",
                             dx_frdump_kind_name(why[0] ? why[0]->kind : v->kind), v->ncompared,
                             v->ncompared == 1 ? "" : "s", why[0] ? why[0]->why : v->where,
                             why[1] ? "; " : "", why[1] ? why[1]->why : "");
}

/* The scorer's votes: the top finding's root failure and the rank its lines blame, the rank
 * that failed on its own under a victim reference, rank 0 under a rank-zero reference, the rank
 * of the original exception no reference explains, and the flight recorder's first finding that
 * names a rank. */
static int scorer_votes(ddx_report *rep, const dx_finding *top)
{
    int rc = vote_root(rep, top);
    if (!rc)
        rc = vote_blamed(rep, top);
    if (!rc)
        rc = vote_exception(rep, top);
    if (!rc)
        rc = vote_cut_frame(rep, top);
    if (!rc && top && top->ref->culprit_other == 2)
        rc = dx_job_vote(&rep->job, "rank-zero", 0, 1,
                         "%s: rank 0 does work alone while the others wait for it", top->ref->id);
    /* no reference explains the failure, but a rank raised its own exception: the failure ddx
     * could not place is that rank's */
    if (!rc && !rep->nreported && rep->unrec && rep->unrec->original && rep->unrec->rank >= 0)
        rc = dx_job_vote(&rep->job, "unrecognised", rep->unrec->rank, 1,
                         "the failure no reference explains: rank %d's own exception",
                         rep->unrec->rank);
    return rc ? rc : vote_flight_recorder(rep);
}

/* The culprit rank: the scorer adds its votes to the readings', and the policy (src/job/
 * culprit.c) picks and explains. */
static int find_culprit(ddx_report *rep)
{
    const dx_finding *top = rep->nkept ? &rep->f[0] : NULL;
    int rc = scorer_votes(rep, top);
    if (rc)
        return rc;
    dx_culprit_ctx ctx = {rep->nkept, top ? top->ref->kind : NULL, rep->unrec != NULL};
    dx_culprit c;
    rc = dx_culprit_pick(&rep->job, &ctx, &c);
    rep->culprit = c.rank;
    rep->nculprit_ranks = c.nranks;
    memcpy(rep->culprit_ranks, c.ranks, c.nranks * sizeof *c.ranks);
    rep->culprit_why = c.why;
    rep->culprit_decided = c.decided;
    rep->culprit_signals = c.signals;
    rep->nculprit_signals = c.nsignals;
    c.why = NULL;
    c.decided = NULL;
    c.signals = NULL;
    c.nsignals = 0;
    dx_culprit_fini(&c);
    return rc;
}

/* ==== derived facts ========================================================================== */

/* Facts diag.c sets itself: the flight recorder's comparison, and the configuration sanity
 * checks below. */
static const char *const derived_facts[] = {"job.fr_missing",
                                            "job.desync",
                                            "job.fr_culprit",
                                            "job.fr_desync",
                                            "deepspeed.batch_arithmetic",
                                            "deepspeed.offload_client_optimizer",
                                            "megatron.sp_without_tp"};

int dx_diag_fact_known(const char *name)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(derived_facts); i++)
        if (!strcmp(derived_facts[i], name))
            return 1;
    return 0;
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

/* Walks every input of the job through on_member. */
/* An input that cannot be read at all (a file that went away, a damaged archive) is one
 * unreadable input: a warning, and the others are read. Only memory running out stops. */
static int read_inputs(ddx_job *job, scan_state *st, ddx_error *err)
{
    for (size_t i = 0; i < job->n && !st->budget_hit; i++) {
        job_input *in = &job->in[i];
        const char *name = in->path ? in->path : in->name;
        ddx_error e = {0};
        int rc = in->path ? dx_input_walk(in->path, on_member, on_warn, st, &e)
                          : dx_input_walk_buffer(in->name, in->data, in->len, on_member, on_warn,
                                                 st, &e);
        if (rc == DDX_ENOMEM || st->rc == DDX_ENOMEM)
            return dx_err(err, DDX_ENOMEM, "out of memory while reading %s", name);
        if (rc && !st->budget_hit) {
            /* the warnings of the members before it first */
            if ((rc = dx_pipe_drain(st->pipe)) || (rc = note_unreadable(st, name)) ||
                (rc = add_warning(st, e.message[0] ? e.message : "an input could not be read")))
                return dx_err(err, rc, "out of memory while reading %s", name);
        }
    }
    int rc = dx_pipe_drain(st->pipe);
    if (rc)
        return dx_err(err, rc, "out of memory while reading the inputs");
    if (st->inputs_over &&
        add_warningf(st,
                     "%zu more files or archive members were not read: ddx reads at most %u "
                     "inputs of one job; pass the ranks' logs that matter",
                     st->inputs_over, DX_INPUTS_MAX))
        return dx_err(err, DDX_ENOMEM, "out of memory");
    return DDX_OK;
}

/* The scan state's own memory: the pipeline, the tables by rank, the member records. */
static int scan_state_init(scan_state *st, ddx_job *job, ddx_report *rep, ddx_error *err)
{
    st->rep = rep;
    st->kb = job->kb;
    st->job = job;
    st->rescan = -1;
    int rc = dx_scan_new(&st->scan, job->kb->m, err);
    if (!rc && (rc = dx_sigcond_new(&st->sc, job->kb)))
        rc = dx_err(err, rc, "out of memory");
    if (!rc)
        rc = dx_pipe_new(&st->pipe, job->kb->m,
                         job->threads ? job->threads : dx_pipe_default_threads(), apply_piece, st,
                         err);
    return rc;
}

static void scan_state_fini(scan_state *st)
{
    dx_pipe_free(st->pipe);
    dx_scan_free(st->scan);
    dx_sigcond_free(st->sc);
    dx_free(st->cnt);
    dx_free(st->last);
    dx_free(st->first);
    dx_free(st->timed);
    dx_free(st->next);
    dx_free(st->touched);
    dx_free(st->fresh);
    dx_free(st->prev);
    while (st->members) {
        member_ctx *mb = st->members;
        st->members = mb->next;
        dx_free(mb->path);
        dx_free(mb->name);
        dx_free(mb->seen);
        dx_free(mb);
    }
}

static int any_failure(const void *rep) { return any_failure_line(rep); }

/* The flight recorder's facts: job.fr_missing (a rank behind, unfinished or without a readable
 * dump: its culprits' reason first), job.desync (ranks that differ in a collective) and, when the
 * dumps decide, job.fr_culprit (the ranks they hold responsible) and, when what puts the first of
 * them out of step is a different collective, size or dtype, job.fr_desync (the same ranks). */
static int fr_facts(ddx_report *rep)
{
    const dx_fr_verdict *v = &rep->frv;
    char src[96];
    snprintf(src, sizeof src, "%zu flight-recorder dump%s compared", v->ncompared,
             v->ncompared == 1 ? "" : "s");
    int rc = DDX_OK;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < rep->nfrf && !rc; i++) {
            const dx_fr_finding *x = &rep->frf[i];
            if (x->rule || (pass == 0 && !x->root) || (pass == 1 && x->seq < 0))
                continue; /* a dump missing or empty is the culprits' reason, or none */
            const char *name = x->kind == DX_FR_MISSING_RANK || x->kind == DX_FR_STATE ||
                                       x->kind == DX_FR_EMPTY_DUMP
                                   ? "job.fr_missing"
                                   : "job.desync";
            if (!dx_facts_get(&rep->facts, name))
                rc = dx_facts_set(&rep->facts, name, x->why, strlen(x->why), src, 0);
        }
    if (!rc && v->decisive && v->nculprits && !dx_facts_get(&rep->facts, "job.fr_culprit")) {
        dx_buf b = {0};
        for (size_t i = 0; i < v->nculprits; i++)
            dx_buf_addf(&b, "%s%d", i ? "," : "", v->culprits[i]);
        rc = dx_facts_set(&rep->facts, "job.fr_culprit", dx_buf_cstr(&b), b.n, src, 0);
        if (!rc && (v->kind == DX_FR_OP || v->kind == DX_FR_SIZE || v->kind == DX_FR_DTYPE))
            rc = dx_facts_set(&rep->facts, "job.fr_desync", dx_buf_cstr(&b), b.n, src, 0);
        dx_buf_fini(&b);
    }
    return rc;
}

/* The job model once every input is read: glog times take the job's year, the flight recorder's
 * work between collectives stands for step times when no log gave any (the two are not mixed),
 * the readings finish, and the facts are published (the flight recorder's first). */
static int model_job(ddx_report *rep, const ddx_job *job, int year)
{
    dx_job_model *jm = &rep->job;
    for (size_t r = 0; r < jm->nby && year; r++) {
        dx_rank *x = jm->by_rank[r];
        if (x && x->has_time && !x->last_time.year && x->last_time.month)
            x->last_time.year = year;
    }
    jm->year = year;
    jm->any_failure_fn = any_failure;
    jm->any_failure_ud = rep;
    if (rep->nfr && !dx_steps_from_logs(jm))
        (void)dx_frdump_work(rep->fr, rep->nfr, dx_steps_add_fr_work, jm);
    int rc = dx_job_finish(jm);
    if (rep->nfr) {
        rep->nfrf =
            dx_frdump_analyze(rep->fr, rep->nfr, rep->frf, DX_ARRAY_LEN(rep->frf), &rep->frv);
        for (size_t i = 0; i < rep->frv.nwarn && !rc; i++)
            rc = add_warning_to(rep, job, rep->frv.warn[i]);
    }
    if (!rc)
        rc = fr_facts(rep);
    if (!rc)
        rc = dx_job_publish(jm, &rep->facts);
    if (!rc)
        rc = dx_facts_derive(&rep->facts);
    return rc ? rc : derive_sanity(&rep->facts);
}

/* Glog times carry no year: events take the job's; then each gets its sortable time. */
static void time_events(ddx_report *rep, int year)
{
    for (size_t s = 0; s < rep->kb->nsig; s++)
        for (size_t k = 0; rep->hits[s] && k < rep->hits[s]->nev; k++) {
            dx_event *e = &rep->hits[s]->ev[k];
            if (e->has_time && !e->time.year && e->time.month && year)
                e->time.year = year;
            if (e->has_time)
                e->tkey = dx_time_key(&e->time, NULL);
        }
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
    rep->all = (flags & DDX_DIAG_ALL) != 0;
    rep->hits = dx_calloc(kb->nsig ? kb->nsig : 1, sizeof(dx_sighits *));
    if ((rc = dx_job_model_init(&rep->job)) || !rep->hits) {
        rc = dx_err(err, DDX_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = scan_state_init(&st, job, rep, err)) || (rc = read_inputs(job, &st, err)))
        goto fail;
    /* the conditions decided over the whole job (sigcond.c), with the scan's state still live */
    if ((rc = dx_sigcond_finish(st.sc, failed_so_far, commit_event, &st))) {
        dx_err(err, rc, "out of memory");
        goto fail;
    }
    if (rep->warnings_dropped) {
        /* one more than the cap: says how many were not kept */
        char msg[200];
        snprintf(msg, sizeof msg,
                 "%zu more warnings like these were not kept (ddx keeps the first %d)",
                 rep->warnings_dropped, DX_WARN_KEEP);
        rep->nwarnings--;
        char *last = rep->warnings[rep->nwarnings];
        if ((rc = add_warning_to(rep, job, msg)) ||
            dx_grow((void **)&rep->warnings, &rep->capwarnings, rep->nwarnings + 1,
                    sizeof(char *))) {
            dx_free(last);
            rc = dx_err(err, DDX_ENOMEM, "out of memory");
            goto fail;
        }
        /* the last warning kept goes back before the summary */
        rep->warnings[rep->nwarnings] = rep->warnings[rep->nwarnings - 1];
        rep->warnings[rep->nwarnings - 1] = last;
        rep->nwarnings++;
    }
    int year = st.year;
    scan_state_fini(&st);
    memset(&st, 0, sizeof st);
    if ((rc = model_job(rep, job, year))) {
        dx_err(err, rc, "out of memory");
        goto fail;
    }
    time_events(rep, year);
    if ((rc = score_all(rep))) {
        dx_err(err, rc, "out of memory while scoring");
        goto fail;
    }
    if ((!rep->nreported && (rc = dx_unrec_find(rep, &rep->unrec))) || (rc = find_culprit(rep))) {
        dx_err(err, rc, "out of memory");
        goto fail;
    }
    *out = rep;
    return DDX_OK;
fail:
    scan_state_fini(&st);
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
    dx_free(rep->culprit_decided);
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

size_t ddx_report_culprit_ranks(const ddx_report *rep, const int **ranks)
{
    *ranks = rep->culprit_ranks;
    return rep->nculprit_ranks;
}

size_t ddx_report_warning_count(const ddx_report *rep) { return rep->nwarnings; }

size_t ddx_report_inputs_read(const ddx_report *rep) { return rep->nread; }

size_t ddx_report_inputs_unreadable(const ddx_report *rep) { return rep->nunreadable; }

const char *ddx_report_warning(const ddx_report *rep, size_t i)
{
    return i < rep->nwarnings ? rep->warnings[i] : NULL;
}
