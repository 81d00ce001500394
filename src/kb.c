/* kb.c -- opening the knowledge base: built-in references, user references, the matcher over
 * all their signals, and the rules `ddx lint` checks.
 *
 * The built-in references are static data generated at build time (kb_data.c); with no user
 * folder, the pattern database is deserialised from the bytes the generator embedded, so
 * start-up does not compile anything. With --kb DIR the database is compiled at run time.
 */
#include "kb.h"

#include <ctype.h>
#include <sys/stat.h>

#include "facts.h"
#include "job.h"
#include "match.h"

int dx_kb_build(ddx_kb *kb, const unsigned char *hsdb, size_t hsdb_len, ddx_error *err)
{
    size_t n = dx_fact_extractor_count() + dx_job_extractor_count();
    for (size_t r = 0; r < kb->nrefs; r++)
        n += kb->refs[r]->nsignals;
    kb->nsig = n;
    kb->sigs = dx_calloc(n ? n : 1, sizeof(dx_signal *));
    kb->sig_ref = dx_calloc(n ? n : 1, sizeof(uint32_t));
    kb->sig_idx = dx_calloc(n ? n : 1, sizeof(uint32_t));
    if (!kb->sigs || !kb->sig_ref || !kb->sig_idx)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t r = 0; r < kb->nrefs; r++)
        for (size_t i = 0; i < kb->refs[r]->nsignals; i++, k++) {
            kb->sigs[k] = &kb->refs[r]->signals[i];
            kb->sig_ref[k] = (uint32_t)r;
            kb->sig_idx[k] = (uint32_t)i;
        }
    for (size_t i = 0; i < dx_fact_extractor_count(); i++, k++) {
        kb->sigs[k] = dx_fact_extractor_signal(i);
        kb->sig_ref[k] = DX_SIG_FACT;
        kb->sig_idx[k] = (uint32_t)i;
    }
    for (size_t i = 0; i < dx_job_extractor_count(); i++, k++) {
        kb->sigs[k] = dx_job_extractor_signal(i);
        kb->sig_ref[k] = DX_SIG_JOB;
        kb->sig_idx[k] = (uint32_t)i;
    }
    /* the job model's rows may come with a prefilter of their own */
    dx_prefilter_fn *pre = dx_calloc(n ? n : 1, sizeof *pre);
    if (!pre)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    for (size_t i = 0; i < dx_job_extractor_count(); i++)
        pre[n - dx_job_extractor_count() + i] = dx_job_extractor_prefilter(i);
    int rc = dx_matcher_new(&kb->m, kb->sigs, pre, kb->nsig, hsdb, hsdb_len, err);
    dx_free(pre);
    return rc;
}

void ddx_kb_close(ddx_kb *kb)
{
    if (!kb)
        return;
    dx_matcher_free(kb->m);
    dx_free(kb->sigs);
    dx_free(kb->sig_ref);
    dx_free(kb->sig_idx);
    dx_free(kb->refs);
    dx_reflist_fini(&kb->user);
    dx_free((char *)kb->dir);
    dx_free(kb);
}

int dx_kb_merge(ddx_kb *kb, int with_builtin, ddx_error *err)
{
    const dx_builtin *b = dx_builtin_get();
    size_t nb = with_builtin ? b->nrefs : 0;
    kb->refs = dx_calloc(nb + kb->user.n + 1, sizeof(dx_ref *));
    if (!kb->refs)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    for (size_t i = 0; i < nb; i++) {
        int replaced = 0;
        for (size_t j = 0; j < kb->user.n; j++)
            replaced |= !strcmp(kb->user.refs[j].id, b->refs[i].id);
        if (!replaced)
            kb->refs[kb->nrefs++] = &b->refs[i];
    }
    for (size_t j = 0; j < kb->user.n; j++)
        kb->refs[kb->nrefs++] = &kb->user.refs[j];
    return DDX_OK;
}

/* The first problem of a list (the most useful message; lint lists them all) as err; prefix,
 * when given, goes before it ("DIR/": lint names references by their path in the folder). */
static int first_problem(const dx_buf *problems, const char *dir, const char *prefix,
                         ddx_error *err)
{
    const char *nl = strchr(problems->p, '\n');
    return dx_err(err, DDX_EFORMAT, "%s%s%.*s%s%s%s", prefix ? prefix : "", prefix ? "/" : "",
                  (int)(nl ? nl - problems->p : (long)problems->n), problems->p,
                  nl && nl[1] ? " (run `ddx lint " : "", nl && nl[1] ? dir : "",
                  nl && nl[1] ? "` for every problem)" : "");
}

/* Loads the references of dirs[0..n) on top of the built-in ones (unless DDX_KB_NO_BUILTIN):
 * each folder must hold <category>/<id>.md references, and each reference must pass lint's
 * checks; an id already built in is refused unless DDX_KB_OVERRIDE, an id given twice always. */
static int open_common(ddx_kb **out, const char *const *dirs, size_t ndirs, int flags,
                       ddx_error *err)
{
    const dx_builtin *b = dx_builtin_get();
    int with_builtin = !(flags & DDX_KB_NO_BUILTIN);
    ddx_kb *kb = dx_calloc(1, sizeof *kb);
    dx_buf problems = {0};
    int rc = DDX_OK;
    if (!kb)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    for (size_t d = 0; d < ndirs; d++) {
        size_t before = kb->user.n;
        rc = dx_kb_load_dir(dirs[d], &kb->user, &problems, err);
        if (rc == DDX_EFORMAT && problems.n)
            first_problem(&problems, dirs[d], NULL, err);
        if (rc)
            goto fail;
        if (kb->user.n == before) {
            rc = dx_err(err, DDX_EFORMAT,
                        "%s: no references in this folder; a knowledge base holds "
                        "<category>/<id>.md files (docs/reference-format.md)",
                        dirs[d]);
            goto fail;
        }
        for (size_t i = before; i < kb->user.n; i++) {
            const dx_ref *r = &kb->user.refs[i];
            for (size_t j = 0; j < i; j++)
                if (!strcmp(kb->user.refs[j].id, r->id)) {
                    rc = dx_err(err, DDX_EFORMAT, "%s/%s: id '%s' is given twice (also in %s)",
                                dirs[d], r->file, r->id, kb->user.refs[j].file);
                    goto fail;
                }
            for (size_t j = 0; with_builtin && !(flags & DDX_KB_OVERRIDE) && j < b->nrefs; j++)
                if (!strcmp(b->refs[j].id, r->id)) {
                    rc = dx_err(err, DDX_EFORMAT,
                                "%s/%s: id '%s' is a built-in reference; pass --override to "
                                "replace it, or give yours another id",
                                dirs[d], r->file, r->id);
                    goto fail;
                }
        }
    }
    if (ndirs && !(kb->dir = dx_strdup(dirs[0]))) {
        rc = dx_err(err, DDX_ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = dx_kb_merge(kb, with_builtin, err)))
        goto fail;
    /* lint's checks, on the references loaded from the folders (example paths: one folder) */
    if (ndirs && dx_kb_lint(kb, ndirs == 1 ? dirs[0] : NULL, 1, &problems) != DDX_OK) {
        rc = problems.n ? first_problem(&problems, ndirs == 1 ? dirs[0] : "DIR",
                                        ndirs == 1 ? dirs[0] : NULL, err)
                        : dx_err(err, DDX_EFORMAT, "%s: invalid references", dirs[0]);
        goto fail;
    }
    int pristine = with_builtin && kb->user.n == 0;
    rc = dx_kb_build(kb, pristine ? b->hsdb : NULL, pristine ? b->hsdb_len : 0, err);
    if (rc)
        goto fail;
    dx_buf_fini(&problems);
    *out = kb;
    return DDX_OK;
fail:
    dx_buf_fini(&problems);
    ddx_kb_close(kb);
    return rc;
}

int ddx_kb_open(ddx_kb **out, const char *user_dir, ddx_error *err)
{
    return open_common(out, &user_dir, user_dir ? 1 : 0, DDX_KB_OVERRIDE, err);
}

int ddx_kb_open_dir(ddx_kb **out, const char *dir, ddx_error *err)
{
    return open_common(out, &dir, 1, DDX_KB_NO_BUILTIN, err);
}

int ddx_kb_open_dirs(ddx_kb **out, const char *const *dirs, size_t n, int flags, ddx_error *err)
{
    return open_common(out, dirs, n, flags, err);
}

size_t ddx_kb_count(const ddx_kb *kb) { return kb->nrefs; }

const char *ddx_kb_ref_id(const ddx_kb *kb, size_t i)
{
    return i < kb->nrefs ? kb->refs[i]->id : NULL;
}

int ddx_kb_find(const ddx_kb *kb, const char *id, size_t *index)
{
    for (size_t i = 0; i < kb->nrefs; i++)
        if (!strcmp(kb->refs[i]->id, id)) {
            if (index)
                *index = i;
            return DDX_OK;
        }
    return DDX_ENOTFOUND;
}

/* ==== lint rules =========================================================================== */

static const char *const kinds[] = {"crash", "hang", "oom", "config", "silent", "perf", "noise"};
static const char *const sections[] = {"## What happens", "## Likely causes", "## Evidence checks",
                                       "## Fix", "## Tell it apart from"};

const char *dx_ref_section(const dx_ref *r, const char *heading, size_t *len, const char **head)
{
    size_t hl = strlen(heading);
    for (const char *p = r->body; p && *p;) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        while (ll > hl && (p[ll - 1] == ' ' || p[ll - 1] == '\r'))
            ll--;
        if (ll == hl && !strncmp(p, heading, hl)) {
            const char *start = eol ? eol + 1 : p + strlen(p), *end = start;
            while (*end && strncmp(end, "## ", 3)) {
                const char *n = strchr(end, '\n');
                end = n ? n + 1 : end + strlen(end);
            }
            *len = (size_t)(end - start);
            if (head)
                *head = p;
            return start;
        }
        p = eol ? eol + 1 : NULL;
    }
    return NULL;
}

size_t dx_ref_nconstructed(const dx_ref *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->nexamples; i++)
        n += r->examples[i].constructed != 0;
    return n;
}

static int valid_id(const char *s)
{
    if (!s || !*s || *s == '-')
        return 0;
    for (; *s; s++)
        if (!(islower((unsigned char)*s) || isdigit((unsigned char)*s) || *s == '-'))
            return 0;
    return 1;
}

static int is_url(const char *s) { return !strncmp(s, "https://", 8) || !strncmp(s, "http://", 7); }

#define PROBLEM(...)                                                                               \
    do {                                                                                           \
        dx_buf_addf(problems, __VA_ARGS__);                                                        \
        dx_buf_addc(problems, '\n');                                                               \
        bad = 1;                                                                                   \
    } while (0)

static int validate_one(const dx_ref *r, const dx_ref *const *all, size_t nall, const char *dir,
                        dx_buf *problems)
{
    int bad = 0;
    const char *f = r->file ? r->file : r->id;
    int known_kind = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(kinds); i++)
        known_kind |= !strcmp(r->kind, kinds[i]);
    int noise = !strcmp(r->kind, "noise");
    if (!valid_id(r->id))
        PROBLEM("%s: id '%s' must be lower-case letters, digits and dashes", f, r->id);
    if (!known_kind)
        PROBLEM("%s: kind '%s' is not one of crash, hang, oom, config, silent, perf, noise", f,
                r->kind);
    if (!(r->prior > 0 && r->prior < 1))
        PROBLEM("%s: prior %g must be between 0 and 1", f, r->prior);
    if (!r->nsignals && !r->ncontext)
        PROBLEM("%s: a reference needs signals (or context conditions that prove it)", f);
    for (size_t i = 0; i < r->nsignals; i++) {
        const dx_signal *s = &r->signals[i];
        char msg[300];
        if (!valid_id(s->id))
            PROBLEM("%s: signal id '%s' must be lower-case letters, digits and dashes", f, s->id);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(r->signals[j].id, s->id))
                PROBLEM("%s: signal id '%s' is used twice", f, s->id);
        if (!(s->weight >= 0 && s->weight <= 10))
            PROBLEM("%s: signal '%s': weight %g must be between 0 and 10", f, s->id, s->weight);
        /* the watchdog prints its timeout on the ranks that waited: never the failure itself */
        if (s->role == DX_ROLE_ROOT && strstr(s->pattern, "Watchdog caught collective operation"))
            PROBLEM("%s: signal '%s': a watchdog timeout line is printed by the ranks that "
                    "waited; give it role symptom",
                    f, s->id);
        if ((s->role == DX_ROLE_NOISE) != noise)
            PROBLEM("%s: signal '%s': role noise goes with kind noise, and only there", f, s->id);
        if (dx_pattern_check(s->pattern, s->caseless, msg, sizeof msg))
            PROBLEM("%s: signal '%s': %s", f, s->id, msg);
        else if (!s->pattern[0])
            PROBLEM("%s: signal '%s': empty pattern", f, s->id);
    }
    for (size_t i = 0; i < r->ncontext + r->nchecks; i++) {
        const dx_cond *c = i < r->ncontext ? &r->context[i] : &r->checks[i - r->ncontext].cond;
        char msg[300];
        if (c->fact && c->op == DX_OP_MATCHES && c->value &&
            dx_pattern_check(c->value, 0, msg, sizeof msg))
            PROBLEM("%s: 'matches' on %s: %s", f, c->fact, msg);
    }
    for (size_t i = 0; i < r->nvariants; i++) {
        const dx_variant *v = &r->variants[i];
        for (size_t j = 0; j < v->nsignals; j++) {
            int found = 0;
            for (size_t k = 0; k < r->nsignals; k++)
                found |= !strcmp(r->signals[k].id, v->signals[j]);
            if (!found)
                PROBLEM("%s: variant '%s' names unknown signal '%s'", f, v->id, v->signals[j]);
        }
    }
    for (size_t i = 0; i < r->nneighbours; i++) {
        int found = 0;
        for (size_t k = 0; k < nall; k++)
            found |= !strcmp(all[k]->id, r->neighbours[i].id);
        /* a warning while the catalogue is being written: the fixed ids arrive one by one */
        if (!found)
            dx_buf_addf(problems, "warning: %s: neighbour '%s' is not a known reference\n", f,
                        r->neighbours[i].id);
    }
    if (!noise) {
        if (r->nsources < 2)
            PROBLEM("%s: at least two sources are needed, found %zu", f, r->nsources);
        if (r->nexamples < 2)
            PROBLEM("%s: at least two examples are needed, found %zu", f, r->nexamples);
        for (size_t i = 0; i < DX_ARRAY_LEN(sections); i++)
            if (!strstr(r->body, sections[i]))
                PROBLEM("%s: the body lacks the section '%s'", f, sections[i]);
        if (!r->nfix)
            PROBLEM("%s: '## Fix' has no numbered steps", f);
        /* a constructed example is the fallback for failures with too few public logs: the
           reference has to say what was searched (docs/reference-format.md) */
        size_t nconstructed = dx_ref_nconstructed(r), alen = 0;
        const char *about = dx_ref_section(r, DX_EXAMPLES_SECTION, &alen, NULL);
        if (nconstructed && !(about && !dx_blank(about, alen)))
            PROBLEM("%s: %zu example%s constructed; add a '%s' section saying what was "
                    "searched for real logs and why none was taken",
                    f, nconstructed, nconstructed == 1 ? " is" : "s are", DX_EXAMPLES_SECTION);
    }
    for (size_t i = 0; i < r->nsources; i++)
        if (!is_url(r->sources[i]))
            PROBLEM("%s: source '%s' is not a link", f, r->sources[i]);
    for (size_t i = 0; i < r->nexamples; i++) {
        const dx_example *e = &r->examples[i];
        if (!e->constructed && !is_url(e->source))
            PROBLEM("%s: example '%s' needs the link of the report it comes from", f, e->path);
        if (dir) {
            dx_buf p = {0};
            struct stat st;
            dx_buf_addf(&p, "%s/%s", dir, e->path);
            if (stat(dx_buf_cstr(&p), &st) != 0)
                PROBLEM("%s: example '%s' does not exist", f, e->path);
            dx_buf_fini(&p);
        }
    }
    return bad;
}

int dx_kb_lint(const ddx_kb *kb, const char *dir, int only_user, dx_buf *problems)
{
    int bad = 0;
    for (size_t i = 0; i < kb->nrefs; i++) {
        const dx_ref *r = kb->refs[i];
        int is_user = r >= kb->user.refs && r < kb->user.refs + kb->user.n;
        if (only_user && !is_user)
            continue;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(kb->refs[j]->id, r->id))
                PROBLEM("%s: id '%s' is already used by %s", r->file, r->id, kb->refs[j]->file);
        bad |= validate_one(r, kb->refs, kb->nrefs, dir, problems);
    }
    return bad ? DDX_EFORMAT : DDX_OK;
}
