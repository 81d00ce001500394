/* sigcost.c -- where a log's matching time goes, signal by signal (ddx-sigcost, for bench/).
 *
 * Reads one log the way ddx diagnose does (input.c chunks, norm.c logical lines) with the
 * built-in knowledge base, and for every signal counts the candidate lines Vectorscan proposes,
 * how many PCRE2 confirms and the time the confirmations took. With --solo it also compiles each
 * signal alone into its own Vectorscan database and times a scan of the first 16 MB of the log
 * with it, which says which patterns are expensive to scan for at all (a leading class, a short or
 * common literal, a wide repeat) whatever their candidates. Prints the rows by cost, worst first:
 *
 *   ddx-sigcost [--solo] [--split] [--top N] LOG
 *
 * With --split it also times the scan with parts of the database compiled alone (the signals
 * that go in as literals, those that go in as patterns; references, facts, job rows).
 *
 * Not part of ddx; built beside it for the benchmark (bench/README.md).
 */
#include "dx.h"

#include <hs/hs.h>
#include <time.h>

#include "input.h"
#include "job.h"
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

/* The CPU time of scanning the sample with the database of the signals keep() accepts, compiled
 * alone (best of five), and how many candidates it proposes. */
static double part_scan(ctx *c, int (*keep)(const ddx_kb *, size_t), size_t *nsig, uint64_t *nc)
{
    const ddx_kb *kb = c->kb;
    const dx_signal **sub = dx_calloc(kb->nsig ? kb->nsig : 1, sizeof *sub);
    double best = -1;
    *nsig = 0;
    *nc = 0;
    for (size_t s = 0; sub && s < kb->nsig; s++)
        if (keep(kb, s))
            sub[(*nsig)++] = kb->sigs[s];
    dx_matcher *m = NULL;
    dx_scan *sc = NULL;
    ddx_error err = {0};
    if (sub && *nsig && !dx_matcher_new(&m, sub, NULL, *nsig, NULL, 0, &err) &&
        !dx_scan_new(&sc, m, &err))
        for (int run = 0; run < 5; run++) {
            const dx_cand *cands;
            size_t n = 0;
            double t0 = now();
            if (dx_scan_chunk(sc, c->sample, c->nsample, &cands, &n, &err))
                break;
            double t = now() - t0;
            best = best < 0 || t < best ? t : best;
            *nc = n;
        }
    dx_scan_free(sc);
    dx_matcher_free(m);
    dx_free(sub);
    return best;
}

static int is_literal(const ddx_kb *kb, size_t s)
{
    dx_buf b = {0};
    int n = dx_pattern_literals(kb->sigs[s]->pattern, kb->sigs[s]->caseless, &b);
    dx_buf_fini(&b);
    return n > 0;
}

static int job_prefiltered(size_t s, const ddx_kb *kb)
{
    size_t nj = dx_job_extractor_count(), first = kb->nsig - nj;
    return s >= first && dx_job_extractor_prefilter(s - first);
}

static int part_all(const ddx_kb *kb, size_t s) { return !job_prefiltered(s, kb); }
static int part_literal(const ddx_kb *kb, size_t s)
{
    return !job_prefiltered(s, kb) && is_literal(kb, s);
}
static int part_pattern(const ddx_kb *kb, size_t s)
{
    return !job_prefiltered(s, kb) && !is_literal(kb, s);
}
static int part_refs(const ddx_kb *kb, size_t s)
{
    return kb->sig_ref[s] != DX_SIG_FACT && kb->sig_ref[s] != DX_SIG_JOB;
}
static int part_facts(const ddx_kb *kb, size_t s) { return kb->sig_ref[s] == DX_SIG_FACT; }
static int part_job(const ddx_kb *kb, size_t s)
{
    return kb->sig_ref[s] == DX_SIG_JOB && !job_prefiltered(s, kb);
}

static size_t left_out = SIZE_MAX; /* the signal part_pattern_but leaves out */
static int part_pattern_but(const ddx_kb *kb, size_t s)
{
    return s != left_out && part_pattern(kb, s);
}

/* The database's parts, each compiled alone: where the scan's time goes between the signals
 * that go in as literals and those that go in as patterns, and between references, facts and
 * the job model's rows. */
static void split(ctx *c)
{
    static const struct {
        const char *name;
        int (*keep)(const ddx_kb *, size_t);
    } parts[] = {{"all (as ddx scans)", part_all},
                 {"literal signals", part_literal},
                 {"pattern signals", part_pattern},
                 {"references", part_refs},
                 {"facts", part_facts},
                 {"job rows", part_job}};
    printf("scan of the first %.1f MB by parts of the database (CPU, best of 5):\n",
           c->nsample / 1e6);
    for (size_t i = 0; i < DX_ARRAY_LEN(parts); i++) {
        size_t n;
        uint64_t nc;
        double t = part_scan(c, parts[i].keep, &n, &nc);
        printf("  %-20s %5zu signals %8.1f ms %9llu candidates\n", parts[i].name, n, t * 1e3,
               (unsigned long long)nc);
    }
    /* each pattern signal's share: the pattern part's time without it */
    size_t n;
    uint64_t nc;
    double all = part_scan(c, part_pattern, &n, &nc);
    printf("the pattern signals, each left out of their part (%.1f ms with all):\n", all * 1e3);
    for (size_t s = 0; s < c->kb->nsig; s++) {
        if (!part_pattern(c->kb, s))
            continue;
        left_out = s;
        double t = part_scan(c, part_pattern_but, &n, &nc);
        printf("  %8.1f ms less without %-40s %.90s\n", (all - t) * 1e3, c->kb->sigs[s]->id,
               c->kb->sigs[s]->pattern);
    }
    left_out = SIZE_MAX;
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
    int want_solo = 0, want_split = 0;
    long top = 40;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--solo"))
            want_solo = 1;
        else if (!strcmp(argv[i], "--split"))
            want_split = 1;
        else if (!strcmp(argv[i], "--top") && i + 1 < argc)
            top = strtol(argv[++i], NULL, 10);
        else
            path = argv[i];
    }
    if (!path) {
        fprintf(stderr, "usage: ddx-sigcost [--solo] [--split] [--top N] LOG\n");
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
    if (want_split)
        split(&c);
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
