/* lint.c -- checking a folder of references the way the build does: every file parses, every
 * rule of docs/reference-format.md holds, and every example ranks its reference first.
 *
 * Used by `ddx lint [DIR]` and by the generator (tools/gen.c), so a reference that would fail
 * lint can never be built into ddx.
 */
#include "lint.h"

#include "diag.h"
#include "facts.h"
#include "input.h"
#include "match.h"

/* The two-stage engine trusts Vectorscan to propose every line PCRE2 would match. Vectorscan
 * has faults where one pattern in a database silently stops others from matching, so every
 * example is also checked the slow way: each line against each signal with PCRE2 alone, and
 * any line PCRE2 matches without a Vectorscan candidate is a problem. */
typedef struct pf_state {
    const ddx_kb *kb;
    dx_scan *scan;
    dx_buf *problems;
    const char *file;
    int bad;
} pf_state;

/* Vectorscan's faults can depend on where a match starts in the buffer (two near-identical
 * patterns once stopped matching past the 16th byte), so each signal an example line matches
 * is checked again behind prefixes of the lengths launchers and loggers put before a message. */
static const char *const pf_prefixes[] = {
    "host-7: ",
    "[rank12]:[E1205 12:00:00.123456789 ProcessGroupNCCL.cpp:1234] ",
    "2024-05-01 12:00:01,123 - trainer - ERROR - [default3]:(RayTrainWorker pid=4242, "
    "ip=10.0.0.7) ",
};

static int pf_behind_prefixes(pf_state *st, const dx_member *m, uint64_t lineno, const char *line,
                              size_t len, const uint32_t *sigs, size_t nsigs)
{
    dx_buf b = {0};
    ddx_error e = {0};
    for (size_t p = 0; p < DX_ARRAY_LEN(pf_prefixes); p++) {
        size_t plen = strlen(pf_prefixes[p]);
        b.n = 0;
        if (dx_buf_add(&b, pf_prefixes[p], plen) || dx_buf_add(&b, line, len) ||
            dx_buf_addc(&b, '\n')) {
            dx_buf_fini(&b);
            return DDX_ENOMEM;
        }
        const dx_cand *cands;
        size_t ncands;
        if (dx_scan_chunk(st->scan, b.p, b.n, &cands, &ncands, &e))
            break;
        for (size_t k = 0; k < nsigs; k++) {
            int found = 0;
            for (size_t c = 0; c < ncands && !found; c++)
                found = cands[c].sig == sigs[k];
            if (found || !dx_scan_confirm(st->scan, sigs[k], b.p, b.n - 1))
                continue;
            dx_buf_addf(st->problems,
                        "%s: %s:%llu: signal '%s' matches with PCRE2 behind a %zu-byte prefix "
                        "but Vectorscan proposed no candidate (a Vectorscan fault; rewrite a "
                        "pattern of this database)\n",
                        st->file, m->path, (unsigned long long)lineno, st->kb->sigs[sigs[k]]->id,
                        plen);
            st->bad = 1;
        }
    }
    dx_buf_fini(&b);
    return DDX_OK;
}

static int pf_member(void *ud, const dx_member *m, dx_reader *r)
{
    pf_state *st = ud;
    dx_chunk c;
    int rc;
    ddx_error e = {0};
    while ((rc = dx_reader_next(r, &c, &e)) > 0) {
        const dx_cand *cands;
        size_t ncands;
        if ((rc = dx_scan_chunk(st->scan, c.data, c.len, &cands, &ncands, &e)))
            return rc;
        /* the candidates are reused by the confirmations below: copy the (line, sig) pairs */
        dx_cand *cp = dx_malloc((ncands ? ncands : 1) * sizeof *cp);
        if (!cp)
            return DDX_ENOMEM;
        if (ncands)
            memcpy(cp, cands, ncands * sizeof *cp);
        size_t off = 0, ci = 0;
        uint64_t lineno = c.first_line;
        while (off < c.len) {
            const char *line = c.data + off;
            const char *nl = memchr(line, '\n', c.len - off);
            size_t len = nl ? (size_t)(nl - line) : c.len - off;
            while (ci < ncands && cp[ci].line < off)
                ci++;
            size_t first = ci;
            uint32_t matched[32];
            size_t nmatched = 0;
            for (uint32_t s = 0; s < st->kb->nsig; s++) {
                if (!dx_scan_confirm(st->scan, s, line, len))
                    continue;
                if (nmatched < DX_ARRAY_LEN(matched))
                    matched[nmatched++] = s;
                int found = 0;
                for (size_t k = first; k < ncands && cp[k].line == off && !found; k++)
                    found = cp[k].sig == s;
                if (!found) {
                    dx_buf_addf(st->problems,
                                "%s: %s:%llu: signal '%s' matches with PCRE2 but "
                                "Vectorscan proposed no candidate (a Vectorscan fault; rewrite a "
                                "pattern of this database)\n",
                                st->file, m->path, (unsigned long long)lineno, st->kb->sigs[s]->id);
                    st->bad = 1;
                }
            }
            if (nmatched && pf_behind_prefixes(st, m, lineno, line, len, matched, nmatched)) {
                dx_free(cp);
                return DDX_ENOMEM;
            }
            lineno++;
            off += len + 1;
        }
        dx_free(cp);
    }
    return rc < 0 ? rc : DDX_OK;
}

static void pf_warn(void *ud, dx_warn_kind kind, const char *path, const char *msg)
{
    (void)ud;
    (void)kind;
    (void)path;
    (void)msg;
}

int dx_prefilter_check(const ddx_kb *kb, const char *path, const char *label, dx_buf *problems)
{
    pf_state st = {kb, NULL, problems, label, 0};
    ddx_error e = {0};
    if (dx_scan_new(&st.scan, kb->m, &e))
        return -1;
    if (dx_input_walk(path, pf_member, pf_warn, &st, &e))
        st.bad = -1;
    dx_scan_free(st.scan);
    return st.bad;
}

static int check_prefilter(const ddx_kb *kb, const char *dir, int only_user, dx_buf *problems)
{
    pf_state st = {kb, NULL, problems, NULL, 0};
    ddx_error e = {0};
    if (dx_scan_new(&st.scan, kb->m, &e))
        return 1;
    for (size_t i = 0; i < kb->nrefs; i++) {
        const dx_ref *r = kb->refs[i];
        int is_user = r >= kb->user.refs && r < kb->user.refs + kb->user.n;
        if (only_user && !is_user)
            continue;
        st.file = r->file;
        for (size_t k = 0; k < r->nexamples; k++) {
            dx_buf path = {0};
            dx_buf_addf(&path, "%s/%s", dir, r->examples[k].path);
            dx_input_walk(dx_buf_cstr(&path), pf_member, pf_warn, &st, &e);
            dx_buf_fini(&path);
        }
    }
    dx_scan_free(st.scan);
    return st.bad;
}

static int check_examples(const ddx_kb *kb, const char *dir, int only_user, dx_buf *problems,
                          size_t *nchecked)
{
    int bad = 0;
    for (size_t i = 0; i < kb->nrefs; i++) {
        const dx_ref *r = kb->refs[i];
        int is_user = r >= kb->user.refs && r < kb->user.refs + kb->user.n;
        if (only_user && !is_user)
            continue;
        for (size_t k = 0; k < r->nexamples; k++) {
            dx_buf path = {0};
            ddx_job *job = NULL;
            ddx_report *rep = NULL;
            ddx_error e = {0};
            dx_buf_addf(&path, "%s/%s", dir, r->examples[k].path);
            int rc = ddx_job_new(&job, kb, &e);
            if (!rc)
                rc = ddx_job_add_path(job, dx_buf_cstr(&path), &e);
            if (!rc)
                rc = ddx_job_diagnose(job, DDX_DIAG_ALL, &rep, &e);
            if (rc) {
                dx_buf_addf(problems, "%s: example %s: %s\n", r->file, r->examples[k].path,
                            e.message);
                bad = 1;
            } else if (!strcmp(r->kind, "noise")) {
                /* a known-harmless example: recognised, and no finding worth telling */
                const dx_event *first;
                size_t hits = dx_report_noise(rep, i, &first);
                int loud = rep->nf && rep->f[0].confidence >= 0.5;
                if (!hits || loud) {
                    dx_buf_addf(problems, "%s: example %s %s\n", r->file, r->examples[k].path,
                                !hits ? "is not recognised by its noise signals"
                                      : "yields a finding at likely or above");
                    bad = 1;
                }
            } else if (!rep->nf || strcmp(rep->f[0].ref->id, r->id) != 0) {
                dx_buf_addf(problems, "%s: example %s ranks %s first (%.2f), not %s", r->file,
                            r->examples[k].path, rep->nf ? rep->f[0].ref->id : "nothing",
                            rep->nf ? rep->f[0].confidence : 0.0, r->id);
                for (size_t j = 0; j < rep->nf; j++)
                    if (rep->f[j].ref == r)
                        dx_buf_addf(problems, " (it is #%zu at %.2f)", j + 1, rep->f[j].confidence);
                dx_buf_addc(problems, '\n');
                bad = 1;
            }
            (*nchecked)++;
            ddx_report_free(rep);
            ddx_job_free(job);
            dx_buf_fini(&path);
        }
    }
    return bad;
}

/* Facts references name on purpose although nothing reads them yet (the condition waits for the
 * first log that shows them), with why. */
static const struct {
    const char *name;
    const char *why;
} unread_facts[] = {
    {"ddp.static_graph", "DDP's static_graph: no public log shows the setting yet"},
};

/* Is a fact a reference names one ddx can produce: a job reading's (the registry), an
 * extractor's or config reader's (facts.c), or one diag.c derives? */
static int fact_exists(const char *name)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(unread_facts); i++)
        if (!strcmp(unread_facts[i].name, name))
            return 1;
    return dx_job_fact_owner(name) || dx_fact_known(name) || dx_diag_fact_known(name);
}

static int check_facts(const ddx_kb *kb, int only_user, dx_buf *problems)
{
    int bad = 0;
    for (size_t i = 0; i < kb->nrefs; i++) {
        const dx_ref *r = kb->refs[i];
        if (only_user && !(r >= kb->user.refs && r < kb->user.refs + kb->user.n))
            continue;
        for (size_t k = 0; k < r->ncontext + r->nchecks; k++) {
            const char *f =
                k < r->ncontext ? r->context[k].fact : r->checks[k - r->ncontext].cond.fact;
            if (f && !fact_exists(f)) {
                dx_buf_addf(problems,
                            "%s: fact '%s' is produced by nothing (ddx facts lists the job "
                            "facts, docs/facts.md the others)\n",
                            r->file, f);
                bad = 1;
            }
        }
    }
    return bad;
}

/* ==== release ranges in signal sources ===================================================== */

/* Whether [p, p + n) is a release label: a digit, then digits, letters, '.', '+' or '-'. */
static int is_release(const char *p, size_t n)
{
    if (!n || p[0] < '0' || p[0] > '9')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'z') ||
              (p[i] >= 'A' && p[i] <= 'Z') || p[i] == '.' || p[i] == '+' || p[i] == '-'))
            return 0;
    return 1;
}

int dx_lint_source_ranges(const dx_ref *r, dx_buf *problems)
{
    int bad = 0;
    for (size_t i = 0; i < r->nsignals; i++) {
        const dx_signal *sg = &r->signals[i];
        for (const char *p = sg->source ? strchr(sg->source, '[') : NULL; p;
             p = strchr(p + 1, '[')) {
            /* a range starts "[framework " then a digit; anything else is ordinary text */
            size_t fw = 0;
            while ((p[1 + fw] >= 'a' && p[1 + fw] <= 'z') ||
                   (p[1 + fw] >= '0' && p[1 + fw] <= '9') || p[1 + fw] == '-')
                fw++;
            if (!fw || p[1 + fw] != ' ' || p[2 + fw] < '0' || p[2 + fw] > '9')
                continue;
            const char *lo = p + 2 + fw, *close = strchr(lo, ']');
            const char *dots = close ? strstr(lo, "..") : NULL;
            char a[64], b[64];
            size_t na = dots ? (size_t)(dots - lo) : 0, nb = close ? (size_t)(close - dots) : 0;
            if (!dots || dots > close || !is_release(lo, na) || nb < 3 ||
                !is_release(dots + 2, nb - 2) || na >= sizeof a || nb - 2 >= sizeof b) {
                dx_buf_addf(problems,
                            "%s: signal '%s': release range '%.*s' is not "
                            "[framework first..last]\n",
                            r->file, sg->id, close ? (int)(close - p + 1) : (int)strlen(p), p);
                bad = 1;
                continue;
            }
            memcpy(a, lo, na);
            a[na] = '\0';
            memcpy(b, dots + 2, nb - 2);
            b[nb - 2] = '\0';
            if (dx_version_cmp(a, b) > 0) {
                dx_buf_addf(problems, "%s: signal '%s': release range %s..%s runs backwards\n",
                            r->file, sg->id, a, b);
                bad = 1;
            }
        }
    }
    return bad;
}

int dx_lint_dir(const char *dir, int with_builtin, ddx_kb **out, dx_buf *problems,
                dx_lint_stats *stats, ddx_error *err)
{
    ddx_kb *kb = dx_calloc(1, sizeof *kb);
    int rc;
    memset(stats, 0, sizeof *stats);
    if (!kb)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    rc = dx_kb_load_dir(dir, &kb->user, problems, err);
    if (rc && rc != DDX_EFORMAT) {
        ddx_kb_close(kb);
        return rc;
    }
    int bad = rc == DDX_EFORMAT;
    stats->refs = kb->user.n;
    /* the references that parsed, together with the built-in ones they may replace */
    if ((rc = dx_kb_merge(kb, with_builtin, err))) {
        ddx_kb_close(kb);
        return rc;
    }
    if (dx_kb_lint(kb, dir, 1, problems))
        bad = 1;
    if (check_facts(kb, 1, problems))
        bad = 1;
    for (size_t i = 0; i < kb->user.n; i++)
        bad |= dx_lint_source_ranges(&kb->user.refs[i], problems);
    /* go on as far as possible, so one run lists every problem (and a draft build still gets
     * the references that parsed) */
    if ((rc = dx_kb_build(kb, NULL, 0, err))) {
        ddx_kb_close(kb);
        return rc;
    }
    if (check_examples(kb, dir, 1, problems, &stats->examples))
        bad = 1;
    if (check_prefilter(kb, dir, 1, problems))
        bad = 1;
    if (bad) {
        if (out)
            *out = kb; /* still usable: the caller may want to see what ranks first */
        else
            ddx_kb_close(kb);
        return dx_err(err, DDX_EFORMAT, "%s: some references do not pass lint", dir);
    }
    if (out)
        *out = kb;
    else
        ddx_kb_close(kb);
    return DDX_OK;
}
