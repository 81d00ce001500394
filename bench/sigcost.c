/* sigcost.c -- where a log's matching time goes, signal by signal (ddx-sigcost, for bench/).
 *
 * Reads one log the way ddx diagnose does (input.c chunks, norm.c logical lines) with the
 * built-in knowledge base, and for every signal counts the candidate lines Vectorscan proposes,
 * how many PCRE2 confirms and the time the confirmations took. With --solo it also compiles each
 * signal alone into its own Vectorscan database and times a scan of the first 16 MB of the log
 * with it, which says which patterns are expensive to scan for at all (a leading class, a short or
 * common literal, a wide repeat) whatever their candidates. Prints the rows by cost, worst first:
 *
 *   ddx-sigcost [--solo] [--top N] LOG
 *
 * Not part of ddx; built beside it for the benchmark (bench/README.md).
 */
#include "dx.h"

#include <hs/hs.h>
#include <time.h>

#include "input.h"
#include "kb.h"
#include "match.h"
#include "norm.h"

typedef struct row {
    size_t sig;
    uint64_t cands, confirmed;
    double confirm_s, solo_s;
} row;

typedef struct ctx {
    const ddx_kb *kb;
    dx_scan *scan;
    row *rows;
    uint64_t bytes, lines, ncands;
    double scan_s;
    char *sample; /* the first bytes of the log, for --solo */
    size_t nsample, capsample;
} ctx;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the machine may be shared */
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define SAMPLE_MAX (16u << 20)

static int on_member(void *ud, const dx_member *m, dx_reader *r)
{
    (void)m;
    ctx *c = ud;
    dx_chunk ch;
    dx_norm norm = {0};
    ddx_error err = {0};
    int rc;
    while ((rc = dx_reader_next(r, &ch, &err)) > 0) {
        int logical = dx_norm_chunk(&norm, ch.data, ch.len, ch.first_line);
        if (logical < 0)
            return logical;
        const char *data = logical ? norm.out.p : ch.data;
        size_t len = logical ? norm.out.n : ch.len;
        if (c->nsample < SAMPLE_MAX) {
            size_t k = len < SAMPLE_MAX - c->nsample ? len : SAMPLE_MAX - c->nsample;
            if (dx_grow((void **)&c->sample, &c->capsample, c->nsample + k, 1))
                return DDX_ENOMEM;
            memcpy(c->sample + c->nsample, data, k);
            c->nsample += k;
        }
        const dx_cand *cands;
        size_t n;
        double t0 = now();
        if ((rc = dx_scan_chunk(c->scan, data, len, &cands, &n, &err)))
            return rc;
        c->scan_s += now() - t0;
        c->bytes += len;
        c->lines += ch.nlines;
        c->ncands += n;
        for (size_t i = 0; i < n; i++) {
            row *w = &c->rows[cands[i].sig];
            w->cands++;
            double t1 = now();
            w->confirmed += (uint64_t)dx_scan_confirm(c->scan, cands[i].sig, data + cands[i].line,
                                                      cands[i].end - cands[i].line);
            w->confirm_s += now() - t1;
        }
    }
    dx_norm_fini(&norm);
    return rc < 0 ? rc : DDX_OK;
}

static int on_hs(unsigned id, unsigned long long from, unsigned long long to, unsigned flags,
                 void *ud)
{
    (void)id, (void)from, (void)to, (void)flags;
    (*(uint64_t *)ud)++;
    return 0;
}

/* Each signal alone: its own database, one timed scan of the sample. */
static void solo(ctx *c)
{
    for (size_t s = 0; s < c->kb->nsig; s++) {
        const dx_signal *sg = c->kb->sigs[s];
        char *p = dx_hs_pattern(sg->pattern);
        hs_database_t *db = NULL;
        hs_compile_error_t *ce = NULL;
        unsigned fl = HS_FLAG_PREFILTER | HS_FLAG_MULTILINE | (sg->caseless ? HS_FLAG_CASELESS : 0);
        if (!p || hs_compile(p, fl, HS_MODE_BLOCK, NULL, &db, &ce) != HS_SUCCESS) {
            hs_free_compile_error(ce);
            dx_free(p);
            continue;
        }
        hs_scratch_t *sc = NULL;
        uint64_t hits = 0;
        if (hs_alloc_scratch(db, &sc) == HS_SUCCESS) {
            double t0 = now();
            hs_scan(db, c->sample, (unsigned)c->nsample, 0, sc, on_hs, &hits);
            c->rows[s].solo_s = now() - t0;
            hs_free_scratch(sc);
        }
        hs_free_database(db);
        dx_free(p);
    }
}

static int by_cost(const void *a, const void *b)
{
    const row *x = a, *y = b;
    double cx = x->confirm_s + x->solo_s, cy = y->confirm_s + y->solo_s; /* sum */
    if (cx != cy)
        return cx < cy ? 1 : -1;
    return x->cands < y->cands ? 1 : x->cands > y->cands ? -1 : 0;
}

static const char *owner(const ddx_kb *kb, size_t s)
{
    uint32_t r = kb->sig_ref[s];
    if (r == DX_SIG_FACT)
        return "fact";
    if (r == DX_SIG_JOB)
        return "job";
    return kb->refs[r]->id;
}

int main(int argc, char **argv)
{
    int want_solo = 0;
    long top = 40;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--solo"))
            want_solo = 1;
        else if (!strcmp(argv[i], "--top") && i + 1 < argc)
            top = strtol(argv[++i], NULL, 10);
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: ddx-sigcost [--solo] [--top N] LOG\n");
        return 2;
    }
    ddx_kb *kb = NULL;
    ddx_error err = {0};
    if (ddx_kb_open(&kb, NULL, &err)) {
        fprintf(stderr, "ddx-sigcost: %s\n", err.message);
        return 2;
    }
    ctx c = {.kb = kb};
    c.rows = dx_calloc(kb->nsig, sizeof(row));
    if (!c.rows || dx_scan_new(&c.scan, kb->m, &err)) {
        fprintf(stderr, "ddx-sigcost: out of memory\n");
        return 2;
    }
    for (size_t s = 0; s < kb->nsig; s++)
        c.rows[s].sig = s;
    double t0 = now();
    int rc = dx_input_walk(path, on_member, NULL, &c, &err);
    double total = now() - t0;
    if (rc) {
        fprintf(stderr, "ddx-sigcost: %s\n", err.message[0] ? err.message : path);
        return 2;
    }
    if (want_solo)
        solo(&c);
    double confirm = 0;
    for (size_t s = 0; s < kb->nsig; s++)
        confirm += c.rows[s].confirm_s;
    printf("%s: %.1f MB, %llu lines, %zu signals; %llu candidates (%.3f a line); read+scan+confirm "
           "%.3f s: Vectorscan %.3f s, PCRE2 confirmations %.3f s\n",
           path, c.bytes / 1e6, (unsigned long long)c.lines, kb->nsig, (unsigned long long)c.ncands,
           c.lines ? (double)c.ncands / (double)c.lines : 0.0, total, c.scan_s, confirm);
    qsort(c.rows, kb->nsig, sizeof(row), by_cost);
    size_t nlit = 0;
    for (size_t s = 0; s < kb->nsig; s++) {
        dx_buf b = {0};
        nlit += dx_pattern_literals(kb->sigs[s]->pattern, kb->sigs[s]->caseless, &b) > 0;
        dx_buf_fini(&b);
    }
    printf("%zu signals go into the database as their fast-pattern literals, %zu as their "
           "pattern (prefilter)\n",
           nlit, kb->nsig - nlit);
    printf("%10s %10s %10s %9s  %-7s %-28s %-40s %s\n", "candidates", "confirmed", "confirm_ms",
           want_solo ? "solo_ms" : "", "engine", "owner", "signal", "pattern");
    for (long i = 0; i < top && (size_t)i < kb->nsig; i++) {
        const row *w = &c.rows[i];
        const dx_signal *sg = kb->sigs[w->sig];
        dx_buf lits = {0};
        int nl = dx_pattern_literals(sg->pattern, sg->caseless, &lits);
        if (nl > 0)
            for (size_t k = 0; k < lits.n; k++)
                lits.p[k] = lits.p[k] == '\n' ? '|' : lits.p[k];
        printf("%10llu %10llu %10.1f %9.1f  %-7s %-28.28s %-40.40s %.100s\n",
               (unsigned long long)w->cands, (unsigned long long)w->confirmed, w->confirm_s * 1e3,
               w->solo_s * 1e3, nl > 0 ? "literal" : "regex", owner(kb, w->sig), sg->id,
               nl > 0 ? lits.p : sg->pattern);
        dx_buf_fini(&lits);
    }
    dx_free(c.sample);
    dx_free(c.rows);
    dx_scan_free(c.scan);
    ddx_kb_close(kb);
    return 0;
}
