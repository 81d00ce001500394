/* nearest.c -- the catalogue references closest to a piece of text, by the words they share.
 *
 * Each reference is a bag of words from its title (weight 3), summary (2), signal patterns (2,
 * with the regular-expression syntax taken out) and body (1); identifiers are also split at
 * underscores and case changes ("ChildFailedError" gives "childfailederror", "child", "failed").
 * The text is scored against every bag with BM25, and a reference must share at least two
 * distinctive words (found in at most one reference in eight; one found in at most one
 * reference in twenty counts as two), and score at least 40 % of the best, to be returned. The index is
 * built per call: it is used once per diagnosis at most, when a failed job has no finding.
 */
#include "nearest.h"

#include <ctype.h>
#include <math.h>

#define W_TITLE 3.0f
#define W_SUMMARY 2.0f
#define W_SIGNAL 2.0f
#define W_BODY 1.0f
#define F_TITLE 1u
#define F_SUMMARY 2u
#define F_SIGNAL 4u
#define F_BODY 8u
#define BM25_K1 1.2
#define BM25_B 0.75
#define QUERY_MAX 64 /* distinct words read from the text */

typedef struct term {
    uint64_t h;
    float tf;
    unsigned fields;
} term;

typedef struct doc {
    term *t;
    size_t n, cap;
    double len;
} doc;

typedef struct qword {
    uint64_t h;
    char s[32];
    size_t df;
} qword;

typedef void (*word_fn)(void *ud, const char *w, size_t n);

static const char *const stop[] = {
    "the",
    "and",
    "for",
    "with",
    "this",
    "that",
    "from",
    "not",
    "are",
    "was",
    "were",
    "you",
    "your",
    "has",
    "have",
    "had",
    "been",
    "but",
    "can",
    "when",
    "which",
    "will",
    "would",
    "should",
    "could",
    "into",
    "its",
    "than",
    "then",
    "there",
    "their",
    "they",
    "these",
    "those",
    "what",
    "where",
    "while",
    "also",
    "only",
    "more",
    "most",
    "some",
    "any",
    "all",
    "one",
    "two",
    "does",
    "did",
    "other",
    "each",
    "use",
    "used",
    "using",
    "see",
    "error",
    "errors",
    "exception",
    "traceback",
    "recent",
    "call",
    "last",
    "file",
    "line",
    "self",
    "none",
    "true",
    "false",
    "return",
    "raise",
    "site",
    "packages",
    "lib",
    "python",
    "usr",
    "local",
    "home",
    "main",
    "module",
    "py",
    "args",
    "kwargs",
    /* Python's own exception classes and the words of their messages say nothing about which
       failure it is; a framework's own class (SafetensorError, DistBackendError) does */
    "runtimeerror",
    "runtime",
    "valueerror",
    "value",
    "typeerror",
    "type",
    "attributeerror",
    "attribute",
    "keyerror",
    "key",
    "assertionerror",
    "assertion",
    "indexerror",
    "index",
    "oserror",
    "ioerror",
    "notimplementederror",
    "implemented",
    "object",
    "raised",
    "looks",
    "got",
    "found",
    "seen",
    "failed",
    "failure",
    "invalid",
    "cannot",
    "unable",
    "please",
    "too",
    "many",
    "much",
    "such",
    "very",
    "just",
};

static int is_stop(const char *w, size_t n)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(stop); i++)
        if (strlen(stop[i]) == n && !memcmp(stop[i], w, n))
            return 1;
    return 0;
}

static uint64_t hash_word(const char *w, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)tolower((unsigned char)w[i]);
        h *= 1099511628211u;
    }
    return h;
}

/* One word: kept when it has 3 to 31 characters, is not all digits or hex, and is not a stop
 * word. */
static void emit(word_fn fn, void *ud, const char *w, size_t n)
{
    if (n < 3 || n > 31)
        return;
    char low[32];
    int digits = 1;
    for (size_t i = 0; i < n; i++) {
        low[i] = (char)tolower((unsigned char)w[i]);
        digits &= isdigit((unsigned char)w[i]) != 0;
    }
    if (digits || (low[0] == '0' && low[1] == 'x') || is_stop(low, n))
        return;
    fn(ud, low, n);
}

/* Splits an identifier at underscores and case changes ("ProcessGroupNCCL" -> process, group,
 * nccl; "find_unused_parameters" -> find, unused, parameters). */
static void emit_parts(word_fn fn, void *ud, const char *w, size_t n)
{
    size_t start = 0;
    for (size_t i = 1; i <= n; i++) {
        int cut = i == n || w[i] == '_';
        if (!cut && isupper((unsigned char)w[i]))
            cut =
                islower((unsigned char)w[i - 1]) ||
                (i + 1 < n && isupper((unsigned char)w[i - 1]) && islower((unsigned char)w[i + 1]));
        if (!cut)
            continue;
        while (start < i && w[start] == '_')
            start++;
        if (i > start && (start > 0 || i < n))
            emit(fn, ud, w + start, i - start);
        start = i;
    }
}

static void words(const char *p, size_t n, word_fn fn, void *ud)
{
    size_t i = 0;
    while (i < n) {
        while (i < n && !(isalnum((unsigned char)p[i]) || p[i] == '_'))
            i++;
        size_t s = i;
        while (i < n && (isalnum((unsigned char)p[i]) || p[i] == '_'))
            i++;
        if (i > s) {
            emit(fn, ud, p + s, i - s);
            emit_parts(fn, ud, p + s, i - s);
        }
    }
}

/* A signal pattern as plain words: named groups, escapes (\d, \s, \b) and group syntax out. */
static int pattern_words(const char *pat, dx_buf *out)
{
    out->n = 0;
    for (const char *p = pat; *p; p++) {
        if (p[0] == '(' && p[1] == '?') {
            p += 2;
            if (*p == '<' && p[1] != '=' && p[1] != '!')
                while (*p && *p != '>')
                    p++;
            if (!*p)
                break;
            continue;
        }
        if (*p == '\\' && p[1]) {
            p++;
            if (isalpha((unsigned char)*p)) {
                if (dx_buf_addc(out, ' '))
                    return DDX_ENOMEM;
                continue;
            }
        }
        if (dx_buf_addc(out, *p))
            return DDX_ENOMEM;
    }
    return dx_buf_addc(out, ' ');
}

/* ---- the reference bags ---- */

typedef struct doc_add {
    doc *d;
    float w;
    unsigned field;
    int oom;
} doc_add;

static void doc_word(void *ud, const char *w, size_t n)
{
    doc_add *a = ud;
    if (a->oom || dx_grow((void **)&a->d->t, &a->d->cap, a->d->n + 1, sizeof(term))) {
        a->oom = 1;
        return;
    }
    a->d->t[a->d->n++] = (term){hash_word(w, n), a->w, a->field};
    a->d->len += a->w;
}

static int cmp_term(const void *a, const void *b)
{
    const term *x = a, *y = b;
    return x->h < y->h ? -1 : x->h > y->h;
}

static void doc_merge(doc *d)
{
    if (!d->n)
        return;
    qsort(d->t, d->n, sizeof(term), cmp_term);
    size_t w = 0;
    for (size_t i = 1; i < d->n; i++) {
        if (d->t[i].h == d->t[w].h) {
            d->t[w].tf += d->t[i].tf;
            d->t[w].fields |= d->t[i].fields;
        } else
            d->t[++w] = d->t[i];
    }
    d->n = w + 1;
}

static const term *doc_find(const doc *d, uint64_t h)
{
    size_t lo = 0, hi = d->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->t[mid].h == h)
            return &d->t[mid];
        if (d->t[mid].h < h)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int build_doc(const dx_ref *r, doc *d, dx_buf *tmp)
{
    doc_add a = {d, W_TITLE, F_TITLE, 0};
    words(r->title, strlen(r->title), doc_word, &a);
    if (r->summary) {
        a.w = W_SUMMARY;
        a.field = F_SUMMARY;
        words(r->summary, strlen(r->summary), doc_word, &a);
    }
    a.w = W_SIGNAL;
    a.field = F_SIGNAL;
    for (size_t s = 0; s < r->nsignals && !a.oom; s++) {
        if (r->signals[s].role == DX_ROLE_AGAINST || r->signals[s].role == DX_ROLE_NOISE)
            continue;
        if (pattern_words(r->signals[s].pattern, tmp))
            return DDX_ENOMEM;
        words(tmp->p, tmp->n, doc_word, &a);
    }
    if (r->body) {
        size_t blen;
        const char *head = NULL, *end = r->body + strlen(r->body);
        /* the search record says where examples came from, not what the failure is */
        if (dx_ref_section(r, DX_EXAMPLES_SECTION, &blen, &head) && head)
            end = head;
        a.w = W_BODY;
        a.field = F_BODY;
        words(r->body, (size_t)(end - r->body), doc_word, &a);
    }
    if (a.oom)
        return DDX_ENOMEM;
    doc_merge(d);
    return DDX_OK;
}

/* ---- the query ---- */

typedef struct query {
    qword w[QUERY_MAX];
    size_t n;
} query;

static void query_word(void *ud, const char *w, size_t n)
{
    query *q = ud;
    uint64_t h = hash_word(w, n);
    for (size_t i = 0; i < q->n; i++)
        if (q->w[i].h == h)
            return;
    if (q->n == QUERY_MAX)
        return;
    qword *x = &q->w[q->n++];
    x->h = h;
    memcpy(x->s, w, n);
    x->s[n] = '\0';
    x->df = 0;
}

static void field_names(unsigned f, char *buf, size_t cap)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {F_TITLE, "title"}, {F_SUMMARY, "summary"}, {F_SIGNAL, "signals"}, {F_BODY, "text"}};
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < DX_ARRAY_LEN(names); i++)
        if ((f & names[i].bit) && n < cap)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", names[i].name);
}

typedef struct contrib {
    size_t q;
    double v;
} contrib;

static int cmp_contrib(const void *a, const void *b)
{
    const contrib *x = a, *y = b;
    return x->v < y->v ? 1 : x->v > y->v ? -1 : (x->q > y->q) - (x->q < y->q);
}

static int cmp_nearest(const void *a, const void *b)
{
    const dx_nearest *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return strcmp(x->ref->id, y->ref->id);
}

/* Scores document d, writing its best nearest entry into *out; returns 1 when it qualifies. */
static int score_doc(const doc *d, const dx_ref *r, const query *q, size_t ndocs, double avglen,
                     dx_nearest *out)
{
    contrib c[QUERY_MAX];
    size_t nc = 0, distinct = 0;
    double score = 0;
    for (size_t i = 0; i < q->n; i++) {
        const term *t = doc_find(d, q->w[i].h);
        if (!t)
            continue;
        double df = (double)q->w[i].df;
        double idf = log(1.0 + ((double)ndocs - df + 0.5) / (df + 0.5));
        double norm = t->tf + BM25_K1 * (1 - BM25_B + BM25_B * d->len / avglen);
        double v = idf * t->tf * (BM25_K1 + 1) / norm;
        score += v;
        c[nc++] = (contrib){i, v};
        /* a word found in at most one reference in eight is distinctive; in at most
         * one in twenty ("outofmemoryerror", "safetensorerror"), it counts twice */
        distinct += (q->w[i].df * 8 <= ndocs) + (q->w[i].df * 20 <= ndocs);
    }
    if (distinct < 2)
        return 0;
    qsort(c, nc, sizeof *c, cmp_contrib);
    unsigned fields = 0;
    size_t n = 0;
    out->ref = r;
    out->score = score;
    n += (size_t)snprintf(out->why, sizeof out->why, "shares");
    for (size_t i = 0, shown = 0; i < nc && shown < 3; i++) {
        /* a part of a word already shown ("safetensor" of "safetensorerror") adds nothing */
        const char *w = q->w[c[i].q].s;
        int part = 0;
        for (size_t k = 0; k < i && !part; k++)
            part = strstr(q->w[c[k].q].s, w) != NULL || strstr(w, q->w[c[k].q].s) != NULL;
        if (part)
            continue;
        fields |= doc_find(d, q->w[c[i].q].h)->fields;
        n += (size_t)snprintf(out->why + n, n < sizeof out->why ? sizeof out->why - n : 0,
                              "%s '%s'", shown++ ? "," : "", w);
    }
    char fn[64];
    field_names(fields, fn, sizeof fn);
    if (n < sizeof out->why)
        snprintf(out->why + n, sizeof out->why - n, " (%s)", fn);
    return 1;
}

int dx_nearest_find(const ddx_kb *kb, const char *text, size_t len, dx_nearest *out, size_t max,
                    size_t *n)
{
    *n = 0;
    query q;
    q.n = 0;
    words(text, len, query_word, &q);
    if (!q.n || !kb->nrefs || !max)
        return DDX_OK;
    doc *docs = dx_calloc(kb->nrefs, sizeof(doc));
    dx_nearest *cand = dx_calloc(kb->nrefs, sizeof(dx_nearest));
    dx_buf tmp = {0};
    int rc = docs && cand ? DDX_OK : DDX_ENOMEM;
    size_t ndocs = 0, ncand = 0;
    double total = 0;
    for (size_t i = 0; !rc && i < kb->nrefs; i++) {
        if (!strcmp(kb->refs[i]->kind, "noise"))
            continue;
        rc = build_doc(kb->refs[i], &docs[i], &tmp);
        total += docs[i].len;
        ndocs++;
    }
    for (size_t w = 0; !rc && w < q.n; w++)
        for (size_t i = 0; i < kb->nrefs; i++)
            q.w[w].df += docs[i].n && doc_find(&docs[i], q.w[w].h);
    for (size_t i = 0; !rc && ndocs && i < kb->nrefs; i++)
        if (docs[i].n &&
            score_doc(&docs[i], kb->refs[i], &q, ndocs, total / (double)ndocs, &cand[ncand]))
            ncand++;
    if (!rc && ncand) {
        qsort(cand, ncand, sizeof *cand, cmp_nearest);
        /* far behind the best: a reference that shares a word or two by chance */
        while (ncand > 1 && cand[ncand - 1].score < 0.4 * cand[0].score)
            ncand--;
        *n = ncand < max ? ncand : max;
        memcpy(out, cand, *n * sizeof *cand);
    }
    for (size_t i = 0; docs && i < kb->nrefs; i++)
        dx_free(docs[i].t);
    dx_free(docs);
    dx_free(cand);
    dx_buf_fini(&tmp);
    return rc;
}
