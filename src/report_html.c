/* report_html.c -- the report as one self-contained HTML page, to attach to a ticket or mail.
 *
 * The same report data as the text and JSON writers (report.c), drawn for people: the finding
 * with its confidence, the culprit rank and where it runs, a per-rank timeline (SVG: each
 * rank's span of lines, its failure, symptom and launcher lines, its watchdog timeout, its last
 * line), plots of per-rank series (step time, data wait; loss and gradient norm once the metrics
 * reading exists, see jobview.h) with the straggler or the onset marked, the evidence lines
 * with their file:line and the lines around them (expandable), checks with their verdicts, fix,
 * neighbours, sources as links, the ranks, facts, known-harmless lines, warnings and inputs.
 *
 * Self-contained: inline style (web/ddx.css) and inline SVG, no script, and a
 * Content-Security-Policy that refuses every request (html.c). Every byte that comes from an
 * input (log text, paths, captures, fact values) goes through dx_html_text. Bounded whatever
 * the job: at most TL_ROWS ranks drawn, TL_MARKS marks, SERIES_HI highlighted series of at
 * most DX_VIEW_SERIES_MAX points, RANK_ROWS rows of ranks, FACT_ROWS facts, INPUT_ROWS inputs:
 * a few hundred KB for the largest job. The job model is read only through jobview.h.
 */
#include "html.h"
#include "jobview.h"

#include <math.h>
#include <time.h>

#define TL_ROWS 48        /* ranks drawn on the timeline */
#define TL_MARKS 600      /* event marks on it */
#define TL_BUCKETS 200    /* one mark per role and rank in each 1/TL_BUCKETS of the width */
#define SERIES_RANKS 4096 /* ranks whose series make the band of a plot */
#define SERIES_HI 6       /* ranks drawn as their own line */
#define RANK_ROWS 64      /* rows of the ranks table */
#define FACT_ROWS 200
#define INPUT_ROWS 100
#define EVIDENCE_MAX 8 /* evidence lines per finding, as in the JSON */
#define TITLE_TEXT 160 /* bytes of a line shown in a mark's tooltip */

/* the drawing's geometry, in SVG user units (the drawing scales to the page's width) */
#define W 1000
#define TL_LEFT 104
#define TL_RIGHT 16
#define TL_TOP 28
#define TL_ROW 18
#define PL_LEFT 60
#define PL_RIGHT 84
#define PL_TOP 12
#define PL_H 170

/* ==== small pieces ========================================================================= */

static int site_links(int flags) { return (flags & DDX_HTML_SITE) != 0; }

/* A reference id, linked to its catalogue page inside the site. */
static void ref_id(FILE *out, const char *id, int flags)
{
    dx_html_ref(out, site_links(flags) ? "ref/" : NULL, id);
}

static void event_time(FILE *out, const dx_event *e)
{
    char t[64];
    if (!e->has_time)
        return;
    dx_time_format(&e->time, t, sizeof t);
    fputs(" · ", out);
    dx_html_text(out, t);
}

/* "path:line · rank 3 · time" */
static void event_where(FILE *out, const ddx_report *rep, const dx_event *e)
{
    dx_html_text(out, rep->inputs[e->input].path);
    fprintf(out, ":%llu", (unsigned long long)e->line);
    if (e->rank >= 0)
        fprintf(out, " · rank %d", e->rank);
    event_time(out, e);
}

/* At most max bytes of s, cut at a character boundary (s is valid UTF-8). */
static size_t cut_utf8(const char *s, size_t max)
{
    size_t n = strlen(s);
    if (n <= max)
        return n;
    while (max && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}

static const char *role_name(int role) { return dx_role_name(role); }

/* "12:00:01" (with the date when the span crosses days) of a time key */
static void key_label(FILE *out, int64_t key, int64_t span)
{
    time_t t = (time_t)(key / 1000000);
    struct tm tm;
    char buf[48];
    if (!gmtime_r(&t, &tm))
        return;
    if (span > INT64_C(2) * 86400 * 1000000)
        strftime(buf, sizeof buf, "%m-%d %H:%M", &tm);
    else
        strftime(buf, sizeof buf, "%H:%M:%S", &tm);
    fputs(buf, out);
    if (span < INT64_C(10) * 1000000)
        fprintf(out, ".%01d", (int)((key / 100000) % 10));
}

/* "2024-05-01 12:00:01.500": a time for a table (milliseconds are enough to order ranks) */
static void short_time(FILE *out, const dx_time *t)
{
    if (t->month && t->year)
        fprintf(out, "%04d-%02d-%02d ", t->year, t->month, t->day);
    else if (t->month)
        fprintf(out, "%02d-%02d ", t->month, t->day);
    fprintf(out, "%02d:%02d:%02d.%03d%s", t->hour, t->min, t->sec, t->usec / 1000,
            t->tz_known ? " UTC" : "");
}

/* ==== the verdict ========================================================================== */

/* No finding, but the job failed: the failure no reference explains, and the closest
 * references (never findings). */
static void write_unrec(FILE *out, const ddx_report *rep, int flags)
{
    const dx_unrec *u = rep->unrec;
    fputs("<section class=\"card level-likely\" id=\"verdict\"><p class=\"kicker\">Diagnosis"
          "</p><h1>Unrecognised failure</h1><p>The job failed, and no reference in the catalogue "
          "explains it. Its root error:</p><dl class=\"kv\"><dt>Where</dt><dd>",
          out);
    if (u->seq != DX_UNREC_NOWHERE && (size_t)(u->seq >> 40) < rep->ninputs) {
        dx_html_text(out, rep->inputs[u->seq >> 40].path);
        fprintf(out, ":%llu", (unsigned long long)(u->seq & DX_SEQ_LINE));
    } else
        fputs("the launcher's report", out);
    if (u->rank >= 0)
        fprintf(out, " · rank %d", u->rank);
    fputs("</dd><dt>Line</dt><dd class=\"mono small\">", out);
    dx_html_text(out, u->text);
    fputs("</dd>", out);
    if (u->exception) {
        fputs("<dt>Exception</dt><dd><code>", out);
        dx_html_text(out, u->exception);
        fputs("</code></dd>", out);
    }
    fputs("</dl>", out);
    if (u->echo)
        fputs("<p class=\"muted\">This line echoes a failure elsewhere (a peer's crash, a "
              "launcher's signal): the process that failed first left no error in the inputs.</p>",
              out);
    if (u->nnearest) {
        fputs("<h3>Closest references (to read, not findings)</h3><dl class=\"kv\">", out);
        for (size_t i = 0; i < u->nnearest; i++) {
            fputs("<dt>", out);
            ref_id(out, u->nearest[i].ref->id, flags);
            fputs("</dt><dd>", out);
            dx_html_text(out, u->nearest[i].ref->title);
            fputs(" <span class=\"muted small\">", out);
            dx_html_text(out, u->nearest[i].why);
            fputs("</span></dd>", out);
        }
        fputs("</dl>", out);
    }
    fputs("</section>\n", out);
}

static void write_verdict(FILE *out, const ddx_report *rep, int flags)
{
    uint64_t lines = 0;
    for (size_t i = 0; i < rep->ninputs; i++)
        lines += rep->inputs[i].lines;
    if (!rep->nkept && rep->unrec) {
        write_unrec(out, rep, flags);
        return;
    }
    if (!rep->nkept) {
        fputs("<section class=\"card\" id=\"verdict\"><p class=\"kicker\">Diagnosis</p>"
              "<h1>No known failure found</h1><p>",
              out);
        fprintf(out, "ddx read %zu input%s (%llu lines) and no reference of its catalogue fits.",
                rep->ninputs, rep->ninputs == 1 ? "" : "s", (unsigned long long)lines);
        if (rep->nf && !rep->all)
            fprintf(out,
                    " %zu weak candidate%s stayed below the reporting threshold "
                    "(<code>ddx diagnose --all</code> shows them).",
                    rep->nf, rep->nf == 1 ? "" : "s");
        fputs("</p></section>\n", out);
        return;
    }
    const dx_finding *f = &rep->f[0];
    const char *level = dx_level_name(f->confidence);
    fprintf(out, "<section class=\"card level-%s\" id=\"verdict\">", level);
    fprintf(out, "<p class=\"kicker\">Diagnosis · %s · confidence %.0f %%</p><h1>", level,
            100 * f->confidence);
    dx_html_text(out, f->ref->title);
    fputs("</h1><p>", out);
    ref_id(out, f->ref->id, flags);
    fputs(" <span class=\"muted\">", out);
    dx_html_text(out, f->ref->category);
    fputs(" · ", out);
    dx_html_text(out, f->ref->kind);
    fputs("</span></p>", out);
    fprintf(out,
            "<div class=\"meter\" title=\"confidence %.2f\"><span style=\"width:%.0f%%\">"
            "</span></div>",
            f->confidence, 100 * f->confidence);
    if (f->ref->summary) {
        fputs("<p>", out);
        dx_html_inline(out, f->ref->summary);
        fputs("</p>", out);
    }
    fputs("<dl class=\"kv\">", out);
    if (f->variant) {
        fputs("<dt>Variant</dt><dd>", out);
        dx_html_text(out, f->variant->title);
        fputs("</dd>", out);
    }
    int culprits[16];
    size_t nc = dx_view_culprits(rep, culprits, DX_ARRAY_LEN(culprits));
    for (size_t i = 0; i < nc; i++) {
        dx_rank_info v;
        fprintf(out, "<dt>%s</dt><dd><strong>rank %d</strong>", i ? "Also culprit" : "Culprit rank",
                culprits[i]);
        if (dx_view_rank(rep, (size_t)culprits[i], &v)) {
            if (v.host) {
                fputs(" on ", out);
                dx_html_text(out, v.host);
            }
            if (v.gpu >= 0)
                fprintf(out, " · GPU %d", v.gpu);
            if (v.pid >= 0)
                fprintf(out, " · pid %lld", v.pid);
        }
        fputs("</dd>", out);
    }
    dx_hang_view hv;
    dx_report_hang(rep, &hv);
    if (hv.known && hv.where[0]) {
        fprintf(out, "<dt>%s</dt><dd>", hv.from_fr ? "Where it stands" : "The evidence");
        dx_html_text(out, hv.where);
        fputs("</dd>", out);
    }
    if (hv.known && hv.read[0]) {
        fputs("<dt>Dumps read</dt><dd>", out);
        dx_html_text(out, hv.read);
        fputs("</dd>", out);
    }
    if (nc && rep->culprit_why) {
        fputs("<dt>Why that rank</dt><dd>", out);
        dx_html_text(out, rep->culprit_why);
        if (rep->nculprit_signals) {
            fputs("<ul class=\"small\">", out);
            dx_html_items(out, (const char *const *)rep->culprit_signals, rep->nculprit_signals);
            fputs("</ul>", out);
        }
        fputs("</dd>", out);
    }
    if (f->first) {
        fputs("<dt>Started</dt><dd>", out);
        event_where(out, rep, f->first);
        fputs("</dd>", out);
    }
    if (f->nranks) {
        fputs("<dt>Ranks that printed it</dt><dd>", out);
        for (size_t i = 0; i < f->nranks && i < 32; i++)
            fprintf(out, "%s%d", i ? ", " : "", f->ranks[i]);
        if (f->nranks > 32)
            fprintf(out, " and %zu more", f->nranks - 32);
        fputs("</dd>", out);
    }
    fprintf(out, "<dt>Inputs</dt><dd>%zu (%llu lines, %zu rank%s)</dd></dl></section>\n",
            rep->ninputs, (unsigned long long)lines, dx_view_rank_count(rep),
            dx_view_rank_count(rep) == 1 ? "" : "s");
}

/* ==== the timeline ========================================================================= */

typedef struct axis {
    int by_time;          /* keys are times; else positions in reading order */
    int64_t lo, hi;       /* the range drawn */
    int64_t in_lo, in_hi; /* by_time: what lies outside is far from the job and is not drawn */
    uint64_t *base;       /* by_time == 0: lines before each input */
    size_t nbase;
} axis;

static int64_t seq_pos(const axis *ax, uint64_t seq)
{
    size_t in = (size_t)(seq >> 40);
    uint64_t line = seq & ((UINT64_C(1) << 40) - 1);
    return (int64_t)((in < ax->nbase ? ax->base[in] : 0) + line);
}

static double ax_x(const axis *ax, int64_t v)
{
    double span = (double)(ax->hi - ax->lo);
    double f = span > 0 ? (double)(v - ax->lo) / span : 0.5;
    if (f < 0)
        f = 0;
    if (f > 1)
        f = 1;
    return TL_LEFT + f * (W - TL_LEFT - TL_RIGHT);
}

/* Where an event sits on the axis; 0 when it cannot be placed (no time on a time axis, or a
 * time far from the job's). */
static int ev_pos(const axis *ax, const dx_event *e, int64_t *v)
{
    if (!ax->by_time) {
        *v = seq_pos(ax, e->seq);
        return 1;
    }
    if (!e->has_time || e->tkey < ax->in_lo || e->tkey > ax->in_hi)
        return 0;
    *v = e->tkey;
    return 1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The time axis over the drawn ranks' spans and the events. Lines whose times lie far from the
 * bulk of the ranks' (a line pasted from another day, a clock that jumped) would squeeze the
 * job into a sliver: the range kept is the middle 80 % of the ranks' first and last times,
 * widened by its own length (at least a minute) on each side. */
static void time_axis(const ddx_report *rep, const dx_rank_info *rows, size_t n, axis *ax)
{
    int64_t keys[2 * TL_ROWS];
    size_t nk = 0;
    for (size_t i = 0; i < n; i++)
        if (rows[i].has_first_time && rows[i].has_last_time) {
            keys[nk++] = rows[i].first_key;
            keys[nk++] = rows[i].last_key;
        }
    qsort(keys, nk, sizeof *keys, cmp_i64);
    int64_t lo = keys[nk / 10], hi = keys[nk - 1 - nk / 10];
    int64_t pad = hi - lo > INT64_C(60000000) ? hi - lo : INT64_C(60000000);
    ax->in_lo = lo - pad;
    ax->in_hi = hi + pad;
    ax->lo = INT64_MAX;
    ax->hi = INT64_MIN;
    for (size_t i = 0; i < nk; i++)
        if (keys[i] >= ax->in_lo && keys[i] <= ax->in_hi) {
            ax->lo = keys[i] < ax->lo ? keys[i] : ax->lo;
            ax->hi = keys[i] > ax->hi ? keys[i] : ax->hi;
        }
    const ddx_kb *kb = rep->kb;
    for (size_t s = 0; s < kb->nsig; s++)
        for (size_t k = 0; DX_SIG_IS_REF(kb->sig_ref[s]) && kb->sigs[s]->role != DX_ROLE_NOISE &&
                           rep->hits[s] && k < rep->hits[s]->nev;
             k++) {
            int64_t v;
            if (ev_pos(ax, &rep->hits[s]->ev[k], &v)) {
                ax->lo = v < ax->lo ? v : ax->lo;
                ax->hi = v > ax->hi ? v : ax->hi;
            }
        }
    if (ax->hi <= ax->lo)
        ax->hi = ax->lo + 1000000;
}

/* The axis in reading order: each input's lines after the previous inputs'. */
static int order_axis(const ddx_report *rep, axis *ax)
{
    ax->nbase = rep->ninputs;
    if (!(ax->base = dx_calloc(ax->nbase ? ax->nbase : 1, sizeof *ax->base)))
        return DDX_ENOMEM;
    uint64_t sum = 0;
    for (size_t i = 0; i < rep->ninputs; i++) {
        ax->base[i] = sum;
        sum += rep->inputs[i].lines;
    }
    ax->lo = 1;
    ax->hi = sum > 1 ? (int64_t)sum : 2;
    return DDX_OK;
}

static int rank_priority(const dx_rank_info *v)
{
    if (v->culprit)
        return 4;
    if (!strcmp(v->state, "failed"))
        return 3;
    if (strcmp(v->state, "healthy") != 0 || v->timed_out)
        return 2;
    return 0;
}

static int cmp_rank_view(const void *a, const void *b)
{
    const dx_rank_info *x = a, *y = b;
    return (x->rank > y->rank) - (x->rank < y->rank);
}

/* The ranks to draw or list, at most max: the culprits, failed, then other unusual ranks, then
 * the rest in rank order; returned sorted by rank. *nall gets how many ranks exist. */
static size_t pick_ranks(const ddx_report *rep, dx_rank_info *rows, size_t max, size_t *nall)
{
    size_t n = 0, lim = dx_view_rank_limit(rep);
    *nall = dx_view_rank_count(rep);
    for (int want = 4; want >= 0 && n < max; want--)
        for (size_t r = 0; r < lim && n < max; r++) {
            dx_rank_info v;
            if (dx_view_rank(rep, r, &v) && rank_priority(&v) == want)
                rows[n++] = v;
        }
    qsort(rows, n, sizeof *rows, cmp_rank_view);
    return n;
}

static long row_of(const dx_rank_info *rows, size_t n, int rank, long other)
{
    if (rank < 0)
        return other;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (rows[mid].rank < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && rows[lo].rank == rank ? (long)lo : -1;
}

static void tl_axis_labels(FILE *out, const axis *ax, double y)
{
    for (int i = 0; i <= 4; i++) {
        int64_t v = ax->lo + (ax->hi - ax->lo) * i / 4;
        double x = ax_x(ax, v);
        fprintf(out, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>", x,
                TL_TOP - 6, x, y);
        fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">", x, TL_TOP - 10,
                i == 0   ? "start"
                : i == 4 ? "end"
                         : "middle");
        if (ax->by_time)
            key_label(out, v, ax->hi - ax->lo);
        else
            fprintf(out, "line %lld", (long long)v);
        fputs("</text>", out);
    }
}

/* One event mark with its tooltip; big marks the finding's first line. */
static void tl_mark(FILE *out, const ddx_report *rep, const dx_event *e, const dx_ref *ref,
                    const dx_signal *sig, double x, double y, int big)
{
    const char *role = role_name(sig->role);
    if (big || sig->role == DX_ROLE_ROOT) {
        double s = big ? 7 : 5;
        fprintf(out, "<path class=\"ev-%s%s\" d=\"M%.1f %.1fl%.1f %.1fl%.1f %.1fl%.1f %.1fz\">",
                role, big ? " start" : "", x, y - s, s, s, -s, s, -s, -s);
    } else
        fprintf(out, "<circle class=\"ev-%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\">", role, x, y);
    fputs("<title>", out);
    if (big)
        fputs("where the finding started: ", out);
    event_where(out, rep, e);
    fputs("\n", out);
    dx_html_text(out, role);
    fputs(" line of ", out);
    dx_html_text(out, ref->id);
    fputs(": ", out);
    dx_html_textn(out, e->text, cut_utf8(e->text, TITLE_TEXT));
    fputs(big || sig->role == DX_ROLE_ROOT ? "</title></path>" : "</title></circle>", out);
}

/* One rank's row: its label, the bar of its lines, its last line, its watchdog timeout. */
static void tl_row(FILE *out, const ddx_report *rep, const axis *ax, const dx_rank_info *v,
                   double y)
{
    fprintf(out, "<text x=\"0\" y=\"%.1f\" dy=\".35em\"%s>rank %d%s</text>", y,
            v->culprit ? " class=\"lbl-hi\"" : "", v->rank, v->culprit ? " ★" : "");
    int64_t a = 0, b = 0;
    int ok = 0;
    if (ax->by_time && v->has_first_time && v->has_last_time) {
        a = v->first_key < ax->in_lo ? ax->in_lo : v->first_key;
        b = v->last_key > ax->in_hi ? ax->in_hi : v->last_key;
        ok = a <= b;
    } else if (!ax->by_time && v->first_seq) {
        a = seq_pos(ax, v->first_seq);
        b = seq_pos(ax, v->last_seq);
        ok = 1;
    }
    if (!ok) {
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" dy=\".35em\">(%s)</text>", TL_LEFT, y,
                ax->by_time && v->has_first_time ? "its times lie far from the rest of the job"
                                                 : "no time stamps");
        return;
    }
    double x0 = ax_x(ax, a), x1 = ax_x(ax, b);
    fprintf(out,
            "<rect class=\"bar%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"10\">"
            "<title>rank %d: %llu lines, %s</title></rect>",
            v->culprit || !strcmp(v->state, "failed") ? " hi" : "", x0, y - 5,
            x1 - x0 < 2 ? 2 : x1 - x0, v->rank, (unsigned long long)v->lines, v->state);
    fprintf(out,
            "<line class=\"ev-end\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>"
            "rank %d: its last line, ",
            x1, y - 7, x1, y + 7, v->rank);
    size_t in = (size_t)(v->last_seq >> 40);
    if (v->last_seq && in < rep->ninputs) {
        dx_html_text(out, rep->inputs[in].path);
        fprintf(out, ":%llu", (unsigned long long)(v->last_seq & ((UINT64_C(1) << 40) - 1)));
    }
    if (v->has_last_time) {
        fputs(" at ", out);
        short_time(out, &v->last_time);
    }
    fputs("</title></line>", out);
    if (v->timed_out && ax->by_time && v->has_timeout_time && v->timeout_key >= ax->in_lo &&
        v->timeout_key <= ax->in_hi) {
        fprintf(out,
                "<circle class=\"ev-timeout\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"><title>rank %d: "
                "watchdog timeout",
                ax_x(ax, v->timeout_key), y, v->rank);
        if (v->timeout_op) {
            fputs(" in ", out);
            dx_html_text(out, v->timeout_op);
        }
        if (v->timeout_seq >= 0)
            fprintf(out, " #%lld", v->timeout_seq);
        fputs("</title></circle>", out);
    }
}

/* The marks of the events: the earliest lines of every signal, root lines first, one mark per
 * role, row and 1/TL_BUCKETS of the width, at most TL_MARKS; returns the lines not drawn. */
static size_t tl_marks(FILE *out, const ddx_report *rep, const axis *ax, const dx_rank_info *rows,
                       size_t n, int other)
{
    const ddx_kb *kb = rep->kb;
    size_t nrows = n + (other ? 1 : 0), marks = 0, skipped = 0;
    unsigned char *seen = dx_calloc(nrows * TL_BUCKETS, 1);
    const dx_event *start = rep->nkept ? rep->f[0].first : NULL;
    for (int pass = 0; pass < 2 && seen; pass++)
        for (size_t s = 0; s < kb->nsig; s++) {
            const dx_signal *sig = kb->sigs[s];
            if (!DX_SIG_IS_REF(kb->sig_ref[s]) || !rep->hits[s] || sig->role == DX_ROLE_NOISE ||
                (sig->role == DX_ROLE_ROOT) != (pass == 0))
                continue;
            for (size_t k = 0; k < rep->hits[s]->nev; k++) {
                const dx_event *e = &rep->hits[s]->ev[k];
                long row = row_of(rows, n, e->rank, other ? (long)n : -1);
                int64_t v;
                if (row < 0 || !ev_pos(ax, e, &v) || (marks >= TL_MARKS && e != start)) {
                    skipped++;
                    continue;
                }
                double x = ax_x(ax, v);
                size_t b = (size_t)((x - TL_LEFT) / (W - TL_LEFT - TL_RIGHT) * (TL_BUCKETS - 1));
                unsigned char bit = (unsigned char)(1u << (sig->role & 7));
                unsigned char *cell = &seen[(size_t)row * TL_BUCKETS + b];
                if ((*cell & bit) && e != start)
                    continue; /* a mark of this kind is already there */
                *cell |= bit;
                marks++;
                tl_mark(out, rep, e, kb->refs[kb->sig_ref[s]], sig, x,
                        TL_TOP + (double)row * TL_ROW + TL_ROW / 2.0, e == start);
            }
        }
    dx_free(seen);
    return skipped;
}

static void tl_caption(FILE *out, const ddx_report *rep, const axis *ax, size_t n, size_t nall,
                       size_t skipped)
{
    fputs("</svg><figcaption>", out);
    if (ax->by_time)
        fputs("Each bar runs from a rank's first to its last time-stamped line (the tick: its "
              "last line). ",
              out);
    else
        fputs("The inputs carry no time stamps: the axis is the order in which lines were read, "
              "and each bar runs from a rank's first to its last line. ",
              out);
    fputs("Marks are the earliest lines of each signal; hover for the line. ", out);
    if (n < nall)
        fprintf(out, "%zu of %zu ranks drawn: the culprit, failed and unusual ranks first. ", n,
                nall);
    if (skipped)
        fprintf(out,
                "%zu line%s not drawn (no time stamp, a time far from the rest of the job, "
                "or a rank not drawn). ",
                skipped, skipped == 1 ? "" : "s");
    int restarts = dx_view_restarts(rep);
    if (restarts) {
        fprintf(out, "The launcher restarted the worker group %d time%s", restarts,
                restarts == 1 ? "" : "s");
        fputs(". ", out);
    }
    fputs("</figcaption><div class=\"legend\"><span><i class=\"bar\"></i>lines of a rank</span>"
          "<span><i class=\"root\"></i>failure (root)</span><span><i class=\"symptom\"></i>"
          "symptom</span><span><i class=\"wrapper\"></i>launcher or wrapper</span>"
          "<span><i class=\"timeout\"></i>watchdog timeout</span><span><i class=\"end\"></i>"
          "last line</span><span>★ culprit (diamond: where the finding started)</span></div>"
          "</figure></section>\n",
          out);
}

static void write_timeline(FILE *out, const ddx_report *rep)
{
    dx_rank_info *rows = dx_calloc(TL_ROWS, sizeof *rows);
    axis ax = {0};
    if (!rows)
        return;
    size_t nall, n = pick_ranks(rep, rows, TL_ROWS, &nall);
    size_t timed = 0;
    for (size_t i = 0; i < n; i++)
        timed += rows[i].has_first_time && rows[i].has_last_time;
    ax.by_time = timed && timed * 2 >= n;
    if (ax.by_time)
        time_axis(rep, rows, n, &ax);
    else if (order_axis(rep, &ax)) {
        dx_free(rows);
        return;
    }
    /* lines no rank can be given (a launcher's table) get a row of their own */
    const ddx_kb *kb = rep->kb;
    int other = 0;
    for (size_t s = 0; s < kb->nsig && !other; s++)
        for (size_t k = 0; DX_SIG_IS_REF(kb->sig_ref[s]) && kb->sigs[s]->role != DX_ROLE_NOISE &&
                           rep->hits[s] && k < rep->hits[s]->nev;
             k++) {
            int64_t v;
            other |= rep->hits[s]->ev[k].rank < 0 && ev_pos(&ax, &rep->hits[s]->ev[k], &v);
        }
    if (n || other) {
        size_t nrows = n + (other ? 1 : 0);
        double bottom = TL_TOP + (double)nrows * TL_ROW;
        fputs("<section class=\"card\" id=\"timeline\"><h2>Timeline</h2>", out);
        fprintf(out,
                "<figure><svg class=\"chart\" viewBox=\"0 0 %d %.0f\" role=\"img\" "
                "aria-label=\"each rank's lines over %s\">",
                W, bottom + 8, ax.by_time ? "time" : "the order they were read");
        tl_axis_labels(out, &ax, bottom);
        for (size_t i = 0; i < n; i++)
            tl_row(out, rep, &ax, &rows[i], TL_TOP + (double)i * TL_ROW + TL_ROW / 2.0);
        if (other)
            fprintf(out, "<text x=\"0\" y=\"%.1f\" dy=\".35em\">no rank</text>",
                    TL_TOP + (double)n * TL_ROW + TL_ROW / 2.0);
        size_t skipped = tl_marks(out, rep, &ax, rows, n, other);
        tl_caption(out, rep, &ax, n, nall, skipped);
    }
    dx_free(ax.base);
    dx_free(rows);
}

/* ==== per-rank series ====================================================================== */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void polyline(FILE *out, const char *cls, const double *v, size_t n, size_t len, double ymax)
{
    double pw = W - PL_LEFT - PL_RIGHT;
    fprintf(out, "<polyline class=\"%s\" points=\"", cls);
    for (size_t i = 0; i < n; i++) {
        size_t at = len - n + i; /* right-aligned: the last sample of every rank at the end */
        double x = PL_LEFT + (len > 1 ? (double)at / (double)(len - 1) : 0.5) * pw;
        double y = PL_TOP + (1 - (ymax > 0 ? v[i] / ymax : 0)) * PL_H;
        fprintf(out, "%s%.1f,%.1f", i ? " " : "", x, y);
    }
    fputs("\"/>", out);
}

/* One plot of a series kind over every rank: the band from the lowest to the highest rank at
 * each step, the median, and the ranks that stand out (the straggler, the culprit, an onset)
 * as their own lines. Nothing when no rank has two samples. */
static void write_series(FILE *out, const ddx_report *rep, dx_series_kind kind)
{
    size_t lim = dx_view_rank_limit(rep), L = 0, nr = 0;
    double *m = NULL;  /* [nr][DX_VIEW_SERIES_MAX], right-aligned, NAN where a rank has none */
    int hi[SERIES_HI]; /* ranks drawn on their own: stragglers and onsets (red), culprits */
    size_t nhi = 0;
    double buf[DX_VIEW_SERIES_MAX];
    for (size_t r = 0; r < lim && nr < SERIES_RANKS; r++)
        if (dx_view_series(rep, (int)r, kind, buf, DX_VIEW_SERIES_MAX) >= 2)
            nr++;
    if (!nr || !(m = dx_malloc(nr * DX_VIEW_SERIES_MAX * sizeof *m)))
        return;
    int *who = dx_malloc(nr * sizeof *who);
    double *col = dx_malloc(nr * sizeof *col);
    if (!who || !col)
        goto done;
    size_t k = 0;
    double ymax = 0;
    for (size_t r = 0; r < lim && k < nr; r++) {
        size_t n = dx_view_series(rep, (int)r, kind, buf, DX_VIEW_SERIES_MAX);
        if (n < 2)
            continue;
        who[k] = (int)r;
        for (size_t i = 0; i < DX_VIEW_SERIES_MAX; i++)
            m[k * DX_VIEW_SERIES_MAX + i] = NAN;
        for (size_t i = 0; i < n; i++) {
            m[k * DX_VIEW_SERIES_MAX + DX_VIEW_SERIES_MAX - n + i] = buf[i];
            if (isfinite(buf[i]) && buf[i] > ymax)
                ymax = buf[i];
        }
        L = n > L ? n : L;
        dx_rank_info v;
        if (nhi < SERIES_HI && dx_view_rank(rep, r, &v) &&
            (v.slow || v.culprit || dx_view_series_mark(rep, (int)r, kind) >= 0))
            hi[nhi++] = (int)r;
        k++;
    }
    if (ymax <= 0)
        ymax = 1;
    const char *unit = dx_view_series_unit(kind);
    fprintf(out, "<figure><h3>");
    dx_html_text(out, dx_view_series_title(rep, kind));
    fprintf(out, "</h3><svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", W,
            PL_TOP + PL_H + 26);
    dx_html_text(out, dx_view_series_title(rep, kind));
    fputs(" per rank\">", out);
    for (int g = 0; g <= 2; g++) {
        double y = PL_TOP + PL_H * (1 - g / 2.0);
        fprintf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PL_LEFT,
                y, W - PL_RIGHT, y);
        fprintf(out, "<text x=\"%d\" y=\"%.1f\" dy=\".35em\" text-anchor=\"end\">%.3g%s</text>",
                PL_LEFT - 6, y, ymax * g / 2.0, unit);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\">%zu steps back</text>", PL_LEFT, PL_TOP + PL_H + 18,
            L - 1);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">last step</text>", W - PL_RIGHT,
            PL_TOP + PL_H + 18);
    /* the band and the median over the ranks that have a sample at each step */
    double lo[DX_VIEW_SERIES_MAX], hi_v[DX_VIEW_SERIES_MAX], med[DX_VIEW_SERIES_MAX];
    for (size_t i = 0; i < L; i++) {
        size_t c = 0, at = DX_VIEW_SERIES_MAX - L + i;
        for (size_t j = 0; j < nr; j++)
            if (isfinite(m[j * DX_VIEW_SERIES_MAX + at]))
                col[c++] = m[j * DX_VIEW_SERIES_MAX + at];
        qsort(col, c, sizeof *col, cmp_double);
        lo[i] = c ? col[0] : 0;
        hi_v[i] = c ? col[c - 1] : 0;
        med[i] = c ? (c % 2 ? col[c / 2] : (col[c / 2 - 1] + col[c / 2]) / 2) : 0;
    }
    double pw = W - PL_LEFT - PL_RIGHT;
    fputs("<polygon class=\"band\" points=\"", out);
    for (size_t i = 0; i < 2 * L; i++) {
        size_t j = i < L ? i : 2 * L - 1 - i;
        double v = i < L ? hi_v[j] : lo[j];
        fprintf(out, "%s%.1f,%.1f", i ? " " : "", PL_LEFT + (L > 1 ? (double)j / (L - 1) : .5) * pw,
                PL_TOP + (1 - v / ymax) * PL_H);
    }
    fputs("\"><title>from the lowest to the highest rank at each step</title></polygon>", out);
    for (size_t j = 0; j < nr && nr <= 8; j++) { /* few ranks: each its own thin line */
        const double *row = m + j * DX_VIEW_SERIES_MAX;
        size_t n = 0;
        while (n < L && isfinite(row[DX_VIEW_SERIES_MAX - 1 - n]))
            n++;
        polyline(out, "line", row + DX_VIEW_SERIES_MAX - n, n, L, ymax);
    }
    polyline(out, "med", med, L, L, ymax);
    for (size_t h = 0; h < nhi; h++) {
        size_t n = dx_view_series(rep, hi[h], kind, buf, DX_VIEW_SERIES_MAX);
        long mark = dx_view_series_mark(rep, hi[h], kind);
        dx_rank_info v;
        int red = mark >= 0 || (dx_view_rank(rep, (size_t)hi[h], &v) && v.slow);
        polyline(out, red ? "line hi" : "line cul", buf, n, L, ymax);
        double y = PL_TOP + (1 - buf[n - 1] / ymax) * PL_H;
        fprintf(out, "<text class=\"%s\" x=\"%d\" y=\"%.1f\" dy=\".35em\">rank %d</text>",
                red ? "lbl-hi" : "lbl-cul", W - PL_RIGHT + 6, y, hi[h]);
        if (mark >= 0 && (size_t)mark < n) {
            double x = PL_LEFT + (double)(L - n + (size_t)mark) / (L > 1 ? L - 1 : 1) * pw;
            fprintf(out,
                    "<line class=\"onset\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\">"
                    "<title>rank %d turns bad here</title></line>",
                    x, PL_TOP, x, PL_TOP + PL_H, hi[h]);
        }
    }
    fprintf(out,
            "</svg><figcaption>The last %zu samples of each of %zu rank%s, right-aligned. "
            "Band: the lowest to the highest rank at each step; grey line: the median",
            L, nr, nr == 1 ? "" : "s");
    for (size_t h = 0; h < nhi; h++) {
        dx_rank_info v;
        if (!dx_view_rank(rep, (size_t)hi[h], &v))
            continue;
        long mark = dx_view_series_mark(rep, v.rank, kind);
        fprintf(out, "; %s: rank %d", mark >= 0 || v.slow ? "red" : "blue", v.rank);
        if (v.slow && v.rel_speed > 0)
            fprintf(out, ", the straggler, at %.0f %% of the fastest rank's speed",
                    100 * v.rel_speed);
        if (mark >= 0)
            fputs(", which turns bad at the dashed line", out);
        if (v.culprit)
            fputs(", the culprit", out);
    }
    fputs(".</figcaption></figure>", out);
done:
    dx_free(col);
    dx_free(who);
    dx_free(m);
}

static void write_plots(FILE *out, const ddx_report *rep)
{
    size_t lim = dx_view_rank_limit(rep);
    double buf[2];
    int any = 0;
    for (int k = 0; k < DX_SERIES_COUNT && !any; k++)
        for (size_t r = 0; r < lim && !any; r++)
            any = dx_view_series(rep, (int)r, (dx_series_kind)k, buf, 2) >= 2;
    if (!any)
        return;
    const char *why;
    int straggler = dx_view_straggler(rep, &why);
    fputs("<section class=\"card\" id=\"plots\"><h2>Per-rank series</h2>", out);
    if (straggler >= 0 && why && *why) {
        fprintf(out, "<p>Straggler: <strong>rank %d</strong> — ", straggler);
        dx_html_text(out, why);
        fputs("</p>", out);
    }
    for (int k = 0; k < DX_SERIES_COUNT; k++)
        write_series(out, rep, (dx_series_kind)k);
    fputs("</section>\n", out);
}

/* ==== a finding's blocks =================================================================== */

/* The lines around an event ("NUMBER\tTEXT" joined by '\n'), numbered. */
static void ctx_lines(FILE *out, const char *text)
{
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        const char *tab = memchr(p, '\t', n);
        size_t skip = tab ? (size_t)(tab - p) + 1 : 0;
        fprintf(out, "<span class=\"n\">%.*s</span>", tab ? (int)(tab - p) : 0, p);
        dx_html_textn(out, p + skip, n - skip);
        fputc('\n', out);
        p = nl ? nl + 1 : NULL;
    }
}

static void write_evidence(FILE *out, const ddx_report *rep, const dx_finding *f)
{
    if (!f->nevid)
        return;
    fputs("<h3>Evidence</h3><ul class=\"plain\">", out);
    uint64_t last_seq = UINT64_MAX;
    size_t shown = 0;
    for (size_t i = 0; i < f->nevid && shown < EVIDENCE_MAX; i++) {
        const dx_evid *d = &f->evid[i];
        const dx_event *e = d->ev;
        if (e->seq == last_seq)
            continue;
        last_seq = e->seq;
        shown++;
        int ctx = e->before || e->after;
        fputs(ctx ? "<li><details class=\"ev\"><summary>" : "<li><div class=\"ev\">", out);
        fprintf(out, "<span class=\"badge role-%s\">%s</span> <span class=\"where\">",
                role_name(d->sig->role), role_name(d->sig->role));
        event_where(out, rep, e);
        fprintf(out, " · %+.1f</span><span class=\"text\">", d->weight);
        dx_html_text(out, e->text);
        fputs("</span>", out);
        if (!ctx) {
            fputs("</div></li>", out);
            continue;
        }
        fputs("</summary><pre class=\"ctx\">", out);
        ctx_lines(out, e->before);
        fprintf(out, "<span class=\"hit\"><span class=\"n\">%llu</span>",
                (unsigned long long)e->line);
        dx_html_text(out, e->text);
        fputs("</span>", out);
        ctx_lines(out, e->after);
        fputs("</pre></details></li>", out);
    }
    if (f->nevid > shown)
        fprintf(out,
                "<li class=\"muted small\">%zu more (<code>ddx diagnose --verbose</code>)"
                "</li>",
                f->nevid - shown);
    fputs("</ul>", out);
}

static const char *check_word(int s)
{
    return s == DX_CHECK_CONFIRMED      ? "confirmed"
           : s == DX_CHECK_CONTRADICTED ? "contradicted"
                                        : "not_visible";
}

static void write_checks(FILE *out, const dx_finding *f)
{
    if (!f->nchecks)
        return;
    fputs("<h3>Checks</h3><ul class=\"plain\">", out);
    for (size_t i = 0; i < f->nchecks; i++) {
        const dx_checkres *c = &f->checks[i];
        const char *w = check_word(c->status);
        fprintf(out, "<li><span class=\"badge ck-%s\">%s</span> ", w,
                c->status == DX_CHECK_NOT_VISIBLE ? "to check" : w);
        dx_html_inline(out, c->chk->says);
        if (c->because && c->status != DX_CHECK_NOT_VISIBLE) {
            fputs("<div class=\"muted small\">", out);
            dx_html_text(out, c->because);
            fputs("</div>", out);
        }
        if (c->chk->command) {
            fputs("<pre><code>", out);
            dx_html_text(out, c->chk->command);
            fputs("</code></pre>", out);
        }
        fputs("</li>", out);
    }
    fputs("</ul>", out);
}

static void write_fix(FILE *out, const dx_finding *f)
{
    const dx_ref *r = f->ref;
    if (!r->nfix && !(f->variant && f->variant->nfix))
        return;
    fputs("<h3>Fix</h3><ol>", out);
    if (f->variant)
        dx_html_items(out, f->variant->fix, f->variant->nfix);
    dx_html_items(out, r->fix, r->nfix);
    fputs("</ol>", out);
}

static void write_links(FILE *out, const ddx_report *rep, const dx_ref *r, int flags)
{
    if (r->nneighbours) {
        fputs("<h3>Not to confuse with</h3>", out);
        dx_html_neighbours(out, rep->kb, r, site_links(flags) ? "ref/" : NULL);
    }
    if (r->nsources) {
        fputs("<h3>Sources</h3>", out);
        dx_html_sources(out, r);
    }
}

static void write_score(FILE *out, const dx_finding *f)
{
    fputs("<details><summary>Why this score (log-odds terms)</summary><div class=\"scroll\">"
          "<table><tbody>",
          out);
    for (size_t i = 0; i < f->ncontribs; i++) {
        fprintf(out, "<tr><td class=\"num\">%+.2f</td><td>", f->contribs[i].value);
        dx_html_text(out, f->contribs[i].why);
        fputs("</td></tr>", out);
    }
    fputs("</tbody></table></div></details>", out);
}

static void write_finding_body(FILE *out, const ddx_report *rep, const dx_finding *f, int flags)
{
    write_evidence(out, rep, f);
    write_checks(out, f);
    write_fix(out, f);
    write_links(out, rep, f->ref, flags);
    write_score(out, f);
}

static void write_also(FILE *out, const ddx_report *rep, int flags)
{
    if (rep->nkept < 2)
        return;
    fputs("<section class=\"card\" id=\"also\"><h2>Also possible</h2>", out);
    for (size_t i = 1; i < rep->nkept; i++) {
        const dx_finding *f = &rep->f[i];
        fputs("<details><summary>", out);
        dx_html_text(out, f->ref->title);
        fprintf(out, " <span class=\"muted\">(%s, %.2f)</span></summary><p>",
                dx_level_name(f->confidence), f->confidence);
        ref_id(out, f->ref->id, flags);
        if (f->first) {
            fputs(" <span class=\"muted\">started at ", out);
            event_where(out, rep, f->first);
            fputs("</span>", out);
        }
        fputs("</p>", out);
        write_finding_body(out, rep, f, flags);
        fputs("</details>", out);
    }
    fputs("</section>\n", out);
}

/* ==== the job ============================================================================== */

enum { COL_WHERE, COL_SEEN, COL_PROG, COL_STEP, COL_TIMEOUT, COL_ERROR, NCOLS };

static const char *const col_head[NCOLS] = {"<th>where</th>",
                                            "<th>last seen</th>",
                                            "<th>progress</th>",
                                            "<th class=\"num\">step</th>",
                                            "<th>timeout / waits in</th>",
                                            "<th>first error</th>"};

/* Which columns have something in them for these ranks. */
static void ranks_columns(const dx_rank_info *rows, size_t n, int *has)
{
    memset(has, 0, NCOLS * sizeof *has);
    for (size_t i = 0; i < n; i++) {
        const dx_rank_info *v = &rows[i];
        has[COL_WHERE] |= v->host || v->gpu >= 0 || v->pid >= 0;
        has[COL_SEEN] |= v->has_last_time;
        has[COL_PROG] |= v->has_prog;
        has[COL_STEP] |= v->step_median > 0;
        has[COL_TIMEOUT] |= v->timed_out || v->waits_in;
        has[COL_ERROR] |= v->first_error != NULL;
    }
}

static void rank_cell(FILE *out, const dx_rank_info *v, int col)
{
    switch (col) {
    case COL_WHERE:
        fputs("<td class=\"nw\">", out);
        if (v->host)
            dx_html_text(out, v->host);
        if (v->gpu >= 0)
            fprintf(out, "%sGPU %d", v->host ? " · " : "", v->gpu);
        if (v->pid >= 0)
            fprintf(out, "%spid %lld", v->host || v->gpu >= 0 ? " · " : "", v->pid);
        break;
    case COL_SEEN:
        fputs("<td class=\"nw\">", out);
        if (v->has_last_time)
            short_time(out, &v->last_time);
        break;
    case COL_PROG:
        fputs("<td class=\"nw\">", out);
        if (v->has_prog)
            fprintf(out, "%lld/%lld", v->prog_n, v->prog_m);
        break;
    case COL_STEP:
        fputs("<td class=\"num nw\">", out);
        if (v->step_median > 0)
            fprintf(out, "%.3f s", v->step_median);
        if (v->slow && v->rel_speed > 0)
            fprintf(out, " (%.0f %%)", 100 * v->rel_speed);
        break;
    case COL_TIMEOUT:
        fputs("<td>", out);
        if (v->timed_out) {
            dx_html_text(out, v->timeout_op ? v->timeout_op : "a collective");
            if (v->timeout_seq >= 0)
                fprintf(out, " #%lld", v->timeout_seq);
            if (v->last_completed >= 0)
                fprintf(out, " (last completed %lld)", v->last_completed);
        }
        if (v->waits_in) {
            fputs(" <code>", out);
            dx_html_text(out, v->waits_in);
            fputs("</code>", out);
        }
        break;
    default:
        fputs("<td class=\"mono small\">", out);
        dx_html_text(out, v->first_error);
    }
    fputs("</td>", out);
}

static void write_ranks(FILE *out, const ddx_report *rep)
{
    dx_rank_info *rows = dx_calloc(RANK_ROWS, sizeof *rows);
    if (!rows)
        return;
    size_t nall, n = pick_ranks(rep, rows, RANK_ROWS, &nall);
    if (n < 2 && !(n == 1 && rows[0].culprit)) {
        dx_free(rows);
        return;
    }
    int has[NCOLS];
    ranks_columns(rows, n, has);
    fputs("<section class=\"card\" id=\"ranks\"><h2>Ranks</h2><div class=\"scroll\"><table>"
          "<thead><tr><th class=\"num\">rank</th><th>state</th>",
          out);
    for (int c = 0; c < NCOLS; c++)
        if (has[c])
            fputs(col_head[c], out);
    fputs("</tr></thead><tbody>", out);
    for (size_t i = 0; i < n; i++) {
        const dx_rank_info *v = &rows[i];
        char cls[16];
        snprintf(cls, sizeof cls, "st-%s", v->state);
        for (char *c = cls; *c; c++)
            *c = *c == ' ' ? '-' : *c;
        fprintf(out, "<tr%s id=\"rank-%d\"><td class=\"num\">%d</td><td class=\"%s nw\">%s%s</td>",
                v->culprit ? " class=\"culprit\"" : "", v->rank, v->rank, cls, v->state,
                v->culprit ? " (culprit)" : "");
        for (int c = 0; c < NCOLS; c++)
            if (has[c])
                rank_cell(out, v, c);
        fputs("</tr>", out);
    }
    fputs("</tbody></table></div>", out);
    if (n < nall)
        fprintf(out,
                "<p class=\"muted small\">%zu of %zu ranks listed: the culprit, failed and "
                "unusual ranks first (<code>ddx diagnose --json</code> lists them all).</p>",
                n, nall);
    fputs("</section>\n", out);
    dx_free(rows);
}

static void write_facts(FILE *out, const ddx_report *rep)
{
    if (!rep->facts.n && !rep->noise_lines && !rep->nfr)
        return;
    fputs("<section class=\"card\" id=\"facts\"><h2>Facts and noise</h2>", out);
    if (rep->nfr) {
        char buf[200];
        dx_report_fr_count(rep, "dump", buf, sizeof buf);
        fputs("<h3>Flight recorder (", out);
        dx_html_text(out, buf[0] ? buf : "no dump of this job");
        fputs(")</h3><ul>", out);
        if (dx_report_fr_all_same(rep))
            fputs("<li>every rank reached the same collectives with the same operations</li>", out);
        else if (!rep->nfrf)
            fputs("<li>nothing to compare, or no difference among the dumps compared</li>", out);
        for (size_t i = 0; i < rep->nfrf; i++) {
            fputs("<li>", out);
            dx_html_text(out, dx_frdump_kind_name(rep->frf[i].kind));
            fputs(": ", out);
            dx_html_text(out, rep->frf[i].why);
            fputs("</li>", out);
        }
        fputs("</ul>", out);
    }
    if (rep->facts.n) {
        fputs("<h3>Facts read from the inputs</h3><div class=\"scroll\"><table><thead><tr>"
              "<th>fact</th><th>value</th><th>from</th></tr></thead><tbody>",
              out);
        size_t shown = 0;
        for (int used = 1; used >= 0; used--) /* the facts the score used first */
            for (size_t i = 0; i < rep->facts.n && shown < FACT_ROWS; i++) {
                const dx_fact *x = &rep->facts.v[i];
                if ((x->used != 0) != used)
                    continue;
                shown++;
                fputs("<tr><td><code>", out);
                dx_html_text(out, x->name);
                fputs("</code>", out);
                if (used)
                    fputs(" <span class=\"badge ck-confirmed\">used</span>", out);
                fputs("</td><td class=\"mono small\">", out);
                dx_html_text(out, x->value);
                fputs("</td><td class=\"small\">", out);
                dx_html_text(out, x->path);
                if (x->line)
                    fprintf(out, ":%llu", (unsigned long long)x->line);
                fputs("</td></tr>", out);
            }
        fputs("</tbody></table></div>", out);
        if (rep->facts.n > shown)
            fprintf(out,
                    "<p class=\"muted small\">%zu more facts in <code>ddx diagnose "
                    "--json</code>.</p>",
                    rep->facts.n - shown);
    }
    if (rep->noise_lines) {
        fprintf(out, "<h3>Known-harmless lines (%llu, not findings)</h3><ul class=\"small\">",
                (unsigned long long)rep->noise_lines);
        for (size_t r = 0; r < rep->kb->nrefs; r++) {
            const dx_event *first;
            size_t n =
                strcmp(rep->kb->refs[r]->kind, "noise") ? 0 : dx_report_noise(rep, r, &first);
            if (!n)
                continue;
            fprintf(out, "<li>%zu × ", n);
            dx_html_text(out, rep->kb->refs[r]->title);
            fputs(" <span class=\"muted\">first at ", out);
            event_where(out, rep, first);
            fputs("</span></li>", out);
        }
        fputs("</ul>", out);
    }
    fputs("</section>\n", out);
}

static void write_inputs(FILE *out, const ddx_report *rep)
{
    fputs("<section class=\"card\" id=\"inputs\"><h2>Inputs</h2>", out);
    if (rep->nwarnings) {
        fputs("<h3 class=\"st-timed-out\">Warnings</h3><ul>", out);
        dx_html_items(out, (const char *const *)rep->warnings, rep->nwarnings);
        fputs("</ul>", out);
    }
    fputs("<div class=\"scroll\"><table><thead><tr><th>input</th><th>kind</th><th>ranks</th>"
          "<th class=\"num\">lines</th><th class=\"num\">bytes</th></tr></thead><tbody>",
          out);
    for (size_t i = 0; i < rep->ninputs && i < INPUT_ROWS; i++) {
        const dx_input_info *in = &rep->inputs[i];
        fputs("<tr><td class=\"small\">", out);
        dx_html_text(out, in->path);
        fprintf(out, "</td><td>%s</td><td>", dx_kind_name(in->kind));
        for (size_t k = 0; k < in->nranks && k < 8; k++)
            fprintf(out, "%s%d", k ? ", " : "", in->ranks[k]);
        if (in->nranks > 8)
            fprintf(out, " … (%zu)", in->nranks);
        fprintf(out, "</td><td class=\"num\">%llu</td><td class=\"num\">%llu</td></tr>",
                (unsigned long long)in->lines, (unsigned long long)in->bytes);
    }
    fputs("</tbody></table></div>", out);
    if (rep->ninputs > INPUT_ROWS)
        fprintf(out, "<p class=\"muted small\">%zu inputs in all.</p>", rep->ninputs);
    fputs("</section>\n", out);
}

/* ==== the page ============================================================================= */

/* Links to the sections the page has. */
static void write_toc(FILE *out, const ddx_report *rep)
{
    size_t lim = dx_view_rank_limit(rep), ranks = dx_view_rank_count(rep);
    double buf[2];
    int series = 0, timeline = ranks > 0 || rep->ntimeline;
    for (int k = 0; k < DX_SERIES_COUNT && !series; k++)
        for (size_t r = 0; r < lim && !series; r++)
            series = dx_view_series(rep, (int)r, (dx_series_kind)k, buf, 2) >= 2;
    const struct {
        int on;
        const char *id, *text;
    } items[] = {
        {timeline, "timeline", "Timeline"},
        {series, "plots", "Series"},
        {rep->nkept > 0, "finding", "Evidence, checks, fix"},
        {rep->nkept > 1, "also", "Also possible"},
        {ranks > 1 || rep->culprit >= 0, "ranks", "Ranks"},
        {rep->facts.n || rep->noise_lines || rep->nfr, "facts", "Facts"},
        {1, "inputs", "Inputs"},
    };
    fputs("<nav class=\"toc\">", out);
    for (size_t i = 0; i < DX_ARRAY_LEN(items); i++)
        if (items[i].on)
            fprintf(out, "<a href=\"#%s\">%s</a>", items[i].id, items[i].text);
    fputs("</nav>\n", out);
}

int ddx_report_write_html(const ddx_report *rep, int flags, FILE *out, ddx_error *err)
{
    char title[300];
    if (rep->nkept)
        snprintf(title, sizeof title, "ddx: %s (%s)", rep->f[0].ref->id,
                 dx_level_name(rep->f[0].confidence));
    else if (rep->unrec)
        snprintf(title, sizeof title, "ddx: unrecognised failure");
    else
        snprintf(title, sizeof title, "ddx: no known failure found");
    dx_html_page pg = {title, site_links(flags) ? "" : NULL, site_links(flags), 0, NULL};
    dx_html_begin(out, &pg);
    write_verdict(out, rep, flags);
    write_toc(out, rep);
    write_timeline(out, rep);
    write_plots(out, rep);
    if (rep->nkept) {
        fputs("<section class=\"card\" id=\"finding\"><h2>What supports it</h2>", out);
        write_finding_body(out, rep, &rep->f[0], flags);
        fputs("</section>\n", out);
    }
    write_also(out, rep, flags);
    write_ranks(out, rep);
    write_facts(out, rep);
    write_inputs(out, rep);
    char foot[160];
    snprintf(foot, sizeof foot,
             "ddx %s · JSON schema %d · one self-contained page: no script, nothing fetched",
             DDX_VERSION, DDX_SCHEMA);
    dx_html_end(out, &pg, foot);
    if (ferror(out))
        return dx_err(err, DDX_EIO, "cannot write the HTML report");
    return DDX_OK;
}
