/* lint.c -- checking a folder of references the way the build does: every file parses, every
 * rule of docs/reference-format.md holds, and every example ranks its reference first.
 *
 * Used by `ddx lint [DIR]` and by the generator (tools/gen.c), so a reference that would fail
 * lint can never be built into ddx.
 */
#include "lint.h"

#include "diag.h"

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
                        dx_buf_addf(problems, " (it is #%zu at %.2f)", j + 1,
                                    rep->f[j].confidence);
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
    /* go on as far as possible, so one run lists every problem (and a draft build still gets
     * the references that parsed) */
    if ((rc = dx_kb_build(kb, NULL, 0, err))) {
        ddx_kb_close(kb);
        return rc;
    }
    if (check_examples(kb, dir, 1, problems, &stats->examples))
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
