/* eval.c -- ddx eval: accuracy on a labelled corpus (the format of shared/corpus).
 *
 * Each case is a folder: the job's files plus case.json with "expected" (reference ids, best
 * first), "other" (negative-* marks a log that must produce no finding), and "culprit_rank".
 * ddx sees every file of the case except case.json. A case is right at top-1 when the first
 * diagnosis is any expected id, at top-3 when one of the first three is; a negative (or a case
 * that expects nothing) is clean when no diagnosis reaches `likely`. Figures are printed for
 * the whole corpus and per category (the case folder's name up to its last '-').
 *
 * A failed job whose cause no reference covers ("failed": true, "expected": []) is neither a
 * positive nor a negative: it is counted apart as unplaced (a finding there is no hit, and
 * nothing reported is no clean negative). Over every failed job (the positives and the
 * unplaced), a silent one is where ddx says nothing useful: no finding reaches `likely` and the
 * report names no unrecognised failure either, so the user is left with nothing or guesses.
 * A mute one is the worst of those: no finding at all and no unrecognised failure, the report
 * says only "No known failure found".
 *
 * A figure with nothing to count (no positives, no negatives, no culprit labels: 0/0) is no
 * figure: the text shows "–" and the JSON null, and a floor asked of it fails, since a floor
 * that nothing measures cannot hold. JSON percentages are rounded to one decimal (the text's
 * precision) and carry their counts beside them, so nothing needs the unrounded value.
 * tests/eval-fixture is a corpus whose right answers are known by construction; its exact
 * figures are asserted there, so any change to how a case is counted fails a test.
 *
 * Calibration: every finding reported (and, apart, the top finding of each case) falls in a bin
 * of its confidence; a bin shows how many findings it holds, their mean confidence (predicted)
 * and the share of them that are an expected id (observed; any finding of a negative is wrong).
 * A confidence that means what it says has observed close to predicted in every bin.
 */
#include "cli.h"

#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#include "diag.h"

typedef struct tally {
    char name[32];
    unsigned cases, pos, top1, top3, neg, clean, cul, culok;
    unsigned unplaced, failed, silent, mute; /* failed: positives and unplaced */
} tally;

/* Confidence bins: [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1]; a bin counts for
 * --max-calibration-gap when it holds CAL_MIN findings or more (fewer say little). */
#define CAL_BINS 5
#define CAL_MIN 10
typedef struct cal_bin {
    unsigned n, right;
    double sum;
} cal_bin;

static const char *const cal_names[CAL_BINS] = {"0.0-0.2", "0.2-0.4", "0.4-0.6", "0.6-0.8",
                                                "0.8-1.0"};

static void cal_add(cal_bin *b, double c, int right)
{
    int i = (int)(c * CAL_BINS);
    i = i < 0 ? 0 : i >= CAL_BINS ? CAL_BINS - 1 : i;
    b[i].n++;
    b[i].sum += c;
    b[i].right += right != 0;
}

typedef struct eval_state {
    cal_bin cal_all[CAL_BINS]; /* every finding reported */
    cal_bin cal_top[CAL_BINS]; /* the first finding of each case */
    tally total;
    tally cats[64];
    size_t ncats;
    int verbose, json;
    json_t *jcases;
} eval_state;

static tally *cat_of(eval_state *st, const char *case_name)
{
    char name[32];
    const char *dash = strrchr(case_name, '-');
    size_t n = dash ? (size_t)(dash - case_name) : strlen(case_name);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, case_name, n);
    name[n] = '\0';
    for (size_t i = 0; i < st->ncats; i++)
        if (!strcmp(st->cats[i].name, name))
            return &st->cats[i];
    if (st->ncats == DX_ARRAY_LEN(st->cats))
        return &st->cats[st->ncats - 1];
    tally *t = &st->cats[st->ncats++];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, n + 1);
    return t;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static char **list_names(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d)
        return NULL;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        if (dx_grow((void **)&v, &cap, *n + 1, sizeof(char *)))
            break;
        v[(*n)++] = dx_strdup(e->d_name);
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof(char *), cmp_str);
    return v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx_free(v[i]);
    dx_free(v);
}

static int expected_has(json_t *exp, const char *id)
{
    size_t i;
    json_t *v;
    json_array_foreach(exp, i,
                       v) if (json_is_string(v) && !strcmp(json_string_value(v), id)) return 1;
    return 0;
}

static double round_to(double v, int places)
{
    double k = pow(10, places);
    return round(v * k) / k;
}

/* one case's counts, added to the total and to its category */
typedef struct counts {
    int pos, top1, top3, neg, clean, cul, culok, unplaced, failed, silent, mute;
} counts;

static void add(tally *t, const counts *c)
{
    t->cases++;
    t->pos += c->pos;
    t->top1 += c->top1;
    t->top3 += c->top3;
    t->neg += c->neg;
    t->clean += c->clean;
    t->cul += c->cul;
    t->culok += c->culok;
    t->unplaced += c->unplaced;
    t->failed += c->failed;
    t->silent += c->silent;
    t->mute += c->mute;
}

static int run_case(eval_state *st, const ddx_kb *kb, const char *dir, const char *name)
{
    dx_buf p = {0};
    json_error_t je;
    dx_buf_addf(&p, "%s/case.json", dir);
    json_t *cj = json_load_file(p.p, 0, &je);
    dx_buf_fini(&p);
    if (!cj)
        return cli_fail("eval: %s/case.json: %s (line %d)", dir, je.text, je.line);
    json_t *exp = json_object_get(cj, "expected");
    const char *other = json_string_value(json_object_get(cj, "other"));
    json_t *jcul = json_object_get(cj, "culprit_rank");
    if (!json_is_array(exp)) {
        json_decref(cj);
        return cli_fail("eval: %s/case.json: 'expected' must be a list of reference ids", dir);
    }
    int unplaced = json_array_size(exp) == 0 && json_is_true(json_object_get(cj, "failed"));
    int negative =
        !unplaced && (json_array_size(exp) == 0 || (other && !strncmp(other, "negative", 8)));

    ddx_job *job = NULL;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    size_t nfiles;
    char **files = list_names(dir, &nfiles);
    int rc = ddx_job_new(&job, kb, &e);
    for (size_t i = 0; !rc && i < nfiles; i++) {
        if (!strcmp(files[i], "case.json"))
            continue;
        dx_buf_addf(&p, "%s/%s", dir, files[i]);
        rc = ddx_job_add_path(job, p.p, &e);
        dx_buf_fini(&p);
    }
    free_names(files, nfiles);
    if (!rc)
        rc = ddx_job_diagnose(job, 0, &rep, &e);
    if (rc) {
        ddx_job_free(job);
        json_decref(cj);
        return cli_fail("eval: %s: %s", dir, e.message);
    }
    size_t n = ddx_report_count(rep), at = 0; /* at: 1 + where the first expected id is */
    int top1 = 0, top3 = 0, clean = 1;
    for (size_t i = 0; i < n; i++) {
        int hit = !negative && expected_has(exp, ddx_report_id(rep, i));
        if (hit) {
            top1 |= i == 0;
            top3 |= i < 3;
            if (!at)
                at = i + 1;
        }
        if (ddx_report_confidence(rep, i) >= 0.5)
            clean = 0;
        cal_add(st->cal_all, ddx_report_confidence(rep, i), hit);
        if (i == 0)
            cal_add(st->cal_top, ddx_report_confidence(rep, i), hit);
    }
    int has_cul = json_is_integer(jcul);
    int culok = has_cul && ddx_report_culprit_rank(rep) == (int)json_integer_value(jcul);
    int pos = !negative && !unplaced, unrec = ddx_report_unrecognised(rep);
    /* clean: nothing at likely; for a failed job, that without an unrecognised failure is silent */
    int silent = !negative && clean && !unrec;
    int mute = silent && n == 0; /* "No known failure found" */
    counts c = {pos,      pos && top1,     pos && top3, negative, negative && clean, has_cul, culok,
                unplaced, pos || unplaced, silent,      mute};
    add(&st->total, &c);
    add(cat_of(st, name), &c);
    int right = negative ? clean : top1; /* an unplaced case has no right answer */
    if (st->json) {
        json_t *o = json_object();
        json_object_set_new(o, "case", json_string(name));
        json_object_set_new(o, "expected", json_deep_copy(exp));
        json_object_set_new(o, "got", n ? json_string(ddx_report_id(rep, 0)) : json_null());
        json_object_set_new(o, "confidence",
                            n ? json_real(round_to(ddx_report_confidence(rep, 0), 3))
                              : json_null());
        json_object_set_new(o, "negative", json_boolean(negative));
        json_object_set_new(o, "unplaced", json_boolean(unplaced));
        json_object_set_new(o, "unrecognised", json_boolean(unrec));
        json_object_set_new(o, "silent", json_boolean(silent));
        json_object_set_new(o, "mute", json_boolean(mute));
        json_object_set_new(o, "rank", at ? json_integer((json_int_t)at) : json_null());
        json_object_set_new(o, "right", unplaced ? json_null() : json_boolean(right));
        json_object_set_new(o, "top3",
                            unplaced ? json_null() : json_boolean(negative ? clean : top3));
        json_t *fs = json_array();
        for (size_t i = 0; i < n; i++) {
            json_t *f = json_object();
            json_object_set_new(f, "id", json_string(ddx_report_id(rep, i)));
            json_object_set_new(f, "confidence", json_real(ddx_report_confidence(rep, i)));
            json_object_set_new(
                f, "right", json_boolean(!negative && expected_has(exp, ddx_report_id(rep, i))));
            json_object_set_new(f, "logit", json_real(rep->f[i].logit));
            json_object_set_new(f, "has_root", json_integer(rep->f[i].has_root));
            json_object_set_new(f, "unexplained", json_integer(rep->f[i].unexplained));
            json_object_set_new(f, "ctx_pos", json_integer(rep->f[i].ctx_pos));
            json_object_set_new(f, "raw", json_real(rep->f[i].raw));
            json_object_set_new(f, "nf", json_integer((json_int_t)rep->nf));
            json_array_append_new(fs, f);
        }
        json_object_set_new(o, "findings", fs);
        json_object_set_new(o, "culprit_expected", has_cul ? json_deep_copy(jcul) : json_null());
        int cr = ddx_report_culprit_rank(rep);
        json_object_set_new(o, "culprit", cr >= 0 ? json_integer(cr) : json_null());
        json_array_append_new(st->jcases, o);
    } else if (st->verbose && unplaced) {
        if (silent)
            printf("%-10s %-5s failed, no reference covers it, and ddx says nothing at likely "
                   "and no unrecognised failure\n",
                   name, "SILENT");
    } else if (st->verbose && (!right || silent || (has_cul && !culok))) {
        printf("%-10s %-5s expected %s%s, got %s (%.2f)", name, right ? "ok" : "MISS",
               negative ? "nothing" : json_string_value(json_array_get(exp, 0)),
               json_array_size(exp) > 1 ? ",..." : "", n ? ddx_report_id(rep, 0) : "nothing",
               n ? ddx_report_confidence(rep, 0) : 0.0);
        if (!right && !negative && top3)
            printf("; expected id in the top three");
        if (has_cul)
            printf("; culprit %lld, got %d", (long long)json_integer_value(jcul),
                   ddx_report_culprit_rank(rep));
        if (silent)
            printf(mute ? "; silent (mute: no finding at all)" : "; silent");
        putchar('\n');
    }
    ddx_report_free(rep);
    ddx_job_free(job);
    json_decref(cj);
    return 0;
}

static int is_case(const char *dir)
{
    dx_buf p = {0};
    struct stat s;
    dx_buf_addf(&p, "%s/case.json", dir);
    int yes = stat(p.p, &s) == 0;
    dx_buf_fini(&p);
    return yes;
}

/* a / b as a percentage; NAN when b is 0 (nothing to count is no figure, not 100 %) */
static double pct(unsigned a, unsigned b) { return b ? 100.0 * a / b : NAN; }

/* "  90.9%", or the dash of a figure with nothing to count, in the same six columns */
static const char *pct_text(char *buf, size_t cap, unsigned a, unsigned b)
{
    if (!b)
        snprintf(buf, cap, "     \xe2\x80\x93"); /* U+2013, an en dash */
    else
        snprintf(buf, cap, "%5.1f%%", pct(a, b));
    return buf;
}

static void print_tally(const tally *t, const char *label)
{
    char p1[16], p3[16], pn[16], pc[16], ps[16], pm[16];
    printf("%-8s cases %3u  top-1 %3u/%-3u %s  top-3 %s  negatives clean %u/%u "
           "%s  culprit %u/%u %s  unplaced %u  silent %u/%u %s  mute %u/%u %s\n",
           label, t->cases, t->top1, t->pos, pct_text(p1, sizeof p1, t->top1, t->pos),
           pct_text(p3, sizeof p3, t->top3, t->pos), t->clean, t->neg,
           pct_text(pn, sizeof pn, t->clean, t->neg), t->culok, t->cul,
           pct_text(pc, sizeof pc, t->culok, t->cul), t->unplaced, t->silent, t->failed,
           pct_text(ps, sizeof ps, t->silent, t->failed), t->mute, t->failed,
           pct_text(pm, sizeof pm, t->mute, t->failed));
}

static json_t *jpct(unsigned a, unsigned b)
{
    return b ? json_real(round_to(pct(a, b), 1)) : json_null();
}

static void print_cal(const cal_bin *b, const char *what)
{
    printf("calibration, %s:\n  %-8s %8s %10s %9s\n", what, "bin", "findings", "predicted",
           "observed");
    for (int i = 0; i < CAL_BINS; i++)
        if (b[i].n)
            printf("  %-8s %8u %9.1f%% %8.1f%%\n", cal_names[i], b[i].n, 100 * b[i].sum / b[i].n,
                   pct(b[i].right, b[i].n));
}

static json_t *jcal(const cal_bin *b)
{
    json_t *a = json_array();
    for (int i = 0; i < CAL_BINS; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "bin", json_string(cal_names[i]));
        json_object_set_new(o, "findings", json_integer(b[i].n));
        json_object_set_new(o, "predicted",
                            b[i].n ? json_real(100 * b[i].sum / b[i].n) : json_null());
        json_object_set_new(o, "observed",
                            b[i].n ? json_real(pct(b[i].right, b[i].n)) : json_null());
        json_array_append_new(a, o);
    }
    return a;
}

/* The largest gap between observed and predicted (percentage points) over the bins that hold
 * at least min findings, and that bin in *worst. */
static double cal_gap(const cal_bin *b, unsigned min, int *worst)
{
    double gap = 0;
    *worst = -1;
    for (int i = 0; i < CAL_BINS; i++) {
        if (b[i].n < min)
            continue;
        double g = fabs(pct(b[i].right, b[i].n) - 100 * b[i].sum / b[i].n);
        if (g > gap || *worst < 0) {
            gap = g;
            *worst = i;
        }
    }
    return gap;
}

static json_t *jtally(const tally *t)
{
    json_t *o = json_object();
    json_object_set_new(o, "cases", json_integer(t->cases));
    json_object_set_new(o, "top1", jpct(t->top1, t->pos));
    json_object_set_new(o, "top3", jpct(t->top3, t->pos));
    json_object_set_new(o, "negatives_clean", jpct(t->clean, t->neg));
    json_object_set_new(o, "culprit", jpct(t->culok, t->cul));
    json_object_set_new(o, "silent", jpct(t->silent, t->failed));
    json_object_set_new(o, "positives", json_integer(t->pos));
    json_object_set_new(o, "top1_right", json_integer(t->top1));
    json_object_set_new(o, "top3_right", json_integer(t->top3));
    json_object_set_new(o, "negatives", json_integer(t->neg));
    json_object_set_new(o, "negatives_clean_count", json_integer(t->clean));
    json_object_set_new(o, "culprit_cases", json_integer(t->cul));
    json_object_set_new(o, "culprit_right", json_integer(t->culok));
    json_object_set_new(o, "unplaced", json_integer(t->unplaced));
    json_object_set_new(o, "failed_jobs", json_integer(t->failed));
    json_object_set_new(o, "silent_count", json_integer(t->silent));
    json_object_set_new(o, "mute", jpct(t->mute, t->failed));
    json_object_set_new(o, "mute_count", json_integer(t->mute));
    return o;
}

int cli_eval(cli_args *a)
{
    if (!a->nargs)
        return cli_fail("eval: give at least one corpus folder (case folders with case.json)");
    ddx_kb *kb = NULL;
    if (cli_open_kb(a, &kb))
        return 2;
    eval_state st;
    memset(&st, 0, sizeof st);
    st.verbose = a->verbose;
    st.json = a->json;
    st.jcases = json_array();
    int rc = 0;
    for (size_t i = 0; i < a->nargs && !rc; i++) {
        const char *root = a->args[i];
        struct stat s;
        if (stat(root, &s) != 0 || !S_ISDIR(s.st_mode)) {
            rc = cli_fail("eval: %s is not a folder of cases", root);
            break;
        }
        if (is_case(root)) {
            const char *base = strrchr(root, '/');
            rc = run_case(&st, kb, root, base ? base + 1 : root);
            continue;
        }
        size_t n;
        char **names = list_names(root, &n);
        for (size_t k = 0; k < n && !rc; k++) {
            dx_buf p = {0};
            dx_buf_addf(&p, "%s/%s", root, names[k]);
            if (stat(p.p, &s) == 0 && S_ISDIR(s.st_mode) && is_case(p.p))
                rc = run_case(&st, kb, p.p, names[k]);
            dx_buf_fini(&p);
        }
        free_names(names, n);
    }
    ddx_kb_close(kb);
    if (rc) {
        json_decref(st.jcases);
        return rc;
    }
    if (!st.total.cases) {
        json_decref(st.jcases);
        return cli_fail("eval: no case folders (with a case.json) found");
    }
    if (a->json) {
        json_t *o = json_object();
        json_object_set_new(o, "total", jtally(&st.total));
        json_t *cats = json_object();
        for (size_t i = 0; i < st.ncats; i++)
            json_object_set_new(cats, st.cats[i].name, jtally(&st.cats[i]));
        json_object_set_new(o, "categories", cats);
        json_t *cal = json_object();
        json_object_set_new(cal, "findings", jcal(st.cal_all));
        json_object_set_new(cal, "top", jcal(st.cal_top));
        json_object_set_new(o, "calibration", cal);
        json_object_set_new(o, "cases", st.jcases);
        json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
        putchar('\n');
        json_decref(o);
    } else {
        json_decref(st.jcases);
        for (size_t i = 0; i < st.ncats; i++)
            print_tally(&st.cats[i], st.cats[i].name);
        print_tally(&st.total, "total");
        print_cal(st.cal_all, "every finding reported");
        print_cal(st.cal_top, "the top finding of each case");
    }
    const tally *t = &st.total;
    int below = 0;
    struct {
        double floor;
        unsigned right, of;
        const char *what, *cases;
    } floors[] = {
        {a->min_top1, t->top1, t->pos, "top-1", "labelled positive cases"},
        {a->min_top3, t->top3, t->pos, "top-3", "labelled positive cases"},
        {a->min_neg, t->clean, t->neg, "negatives clean", "negative cases"},
        {a->min_culprit, t->culok, t->cul, "culprit rank", "cases with a culprit_rank"},
        {a->min_spoken, t->failed - t->mute, t->failed, "failed jobs not mute", "failed jobs"}};
    for (size_t i = 0; i < DX_ARRAY_LEN(floors); i++) {
        if (floors[i].floor < 0)
            continue;
        if (!floors[i].of) {
            fprintf(stderr, "ddx eval: the %s floor %g%% measures nothing: no %s\n", floors[i].what,
                    floors[i].floor, floors[i].cases);
            below = 1;
        } else if (pct(floors[i].right, floors[i].of) + 1e-9 < floors[i].floor) {
            fprintf(stderr, "ddx eval: %s %u/%u = %.2f%% is below the floor %g%%\n", floors[i].what,
                    floors[i].right, floors[i].of, pct(floors[i].right, floors[i].of),
                    floors[i].floor);
            below = 1;
        }
    }
    /* calibration: in every bin with CAL_MIN findings or more, observed within the gap */
    const cal_bin *cals[] = {st.cal_all, st.cal_top};
    const char *cal_what[] = {"every finding", "top findings"};
    for (size_t k = 0; a->max_cal_gap >= 0 && k < DX_ARRAY_LEN(cals); k++) {
        int worst;
        double gap = cal_gap(cals[k], CAL_MIN, &worst);
        if (worst >= 0 && gap > a->max_cal_gap + 1e-9) {
            fprintf(stderr,
                    "ddx eval: calibration of %s: in bin %s, observed %.1f%% is %.1f points from "
                    "the predicted %.1f%% (at most %.1f allowed)\n",
                    cal_what[k], cal_names[worst], pct(cals[k][worst].right, cals[k][worst].n), gap,
                    100 * cals[k][worst].sum / cals[k][worst].n, a->max_cal_gap);
            below = 1;
        }
    }
    return below;
}
