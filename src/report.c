/* report.c -- writing a report as JSON (the contract of PRODUCT.md §5) or as terminal text, and
 * writing references for `ddx refs` and `ddx show`.
 *
 * JSON goes through jansson with sorted-free, insertion-ordered objects so output is stable.
 * Text is short by default (the finding, where it started, a few evidence lines, checks, fix,
 * sources) and complete with DDX_TEXT_VERBOSE (every candidate, the score terms, facts,
 * timeline). Colour only when asked (the CLI asks on a terminal without NO_COLOR).
 */
#include "diag.h"
#include "job/progress.h"
#include "jobview.h"

#include <jansson.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>

#define EVIDENCE_JSON_MAX 8
#define EVIDENCE_TEXT_MAX 5

/* ==== JSON ================================================================================= */

/* A JSON string of text from an input: jansson refuses invalid UTF-8 (it would drop the field),
 * so such bytes become U+FFFD; control characters stay (JSON escapes them). */
static json_t *jtext(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j)
        return j;
    char *c = dx_utf8_dup(s);
    j = json_string(c ? c : "");
    dx_free(c);
    return j;
}

static json_t *jstr(const char *s) { return s ? jtext(s) : json_null(); }

static json_t *jrank(int r) { return r >= 0 ? json_integer(r) : json_null(); }

static json_t *jtime(const dx_event *e)
{
    if (!e->has_time)
        return json_null();
    char buf[64];
    dx_time_format(&e->time, buf, sizeof buf);
    return jtext(buf);
}

static double round3(double v) { return round(v * 1000.0) / 1000.0; }

/* A fact value typed as JSON: integers and booleans as such, everything else as text. */
static json_t *jfact(const char *v)
{
    if (!strcmp(v, "true") || !strcmp(v, "True"))
        return json_true();
    if (!strcmp(v, "false") || !strcmp(v, "False"))
        return json_false();
    char *end;
    long long n = strtoll(v, &end, 10);
    if (*v && !*end && (v[0] != '0' || !v[1]) && strlen(v) < 15)
        return json_integer(n);
    return jtext(v);
}

static json_t *jevent(const ddx_report *rep, const dx_event *e)
{
    json_t *o = json_object();
    json_object_set_new(o, "path", jtext(rep->inputs[e->input].path));
    json_object_set_new(o, "line", json_integer((json_int_t)e->line));
    json_object_set_new(o, "rank", jrank(e->rank));
    json_object_set_new(o, "time", jtime(e));
    return o;
}

static json_t *jstrings(const char *const *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(a, jtext(v[i]));
    return a;
}

static const char *check_status(int s)
{
    return s == DX_CHECK_CONFIRMED      ? "confirmed"
           : s == DX_CHECK_CONTRADICTED ? "contradicted"
                                        : "not_visible";
}

static json_t *jfinding(const ddx_report *rep, const dx_finding *f)
{
    const dx_ref *r = f->ref;
    json_t *o = json_object();
    json_object_set_new(o, "id", jtext(r->id));
    json_object_set_new(o, "title", jtext(r->title));
    json_object_set_new(o, "category", jtext(r->category));
    json_object_set_new(o, "kind", jtext(r->kind));
    json_object_set_new(o, "confidence", json_real(round3(f->confidence)));
    json_object_set_new(o, "level", jtext(dx_level_name(f->confidence)));
    if (f->variant) {
        json_t *v = json_object();
        json_object_set_new(v, "id", jtext(f->variant->id));
        json_object_set_new(v, "title", jtext(f->variant->title));
        json_object_set_new(o, "variant", v);
    }
    json_t *ranks = json_array();
    for (size_t i = 0; i < f->nranks; i++)
        json_array_append_new(ranks, json_integer(f->ranks[i]));
    json_object_set_new(o, "ranks", ranks);
    json_object_set_new(o, "first_seen", f->first ? jevent(rep, f->first) : json_null());
    json_t *ev = json_array();
    uint64_t last_seq = UINT64_MAX;
    for (size_t i = 0, k = 0; i < f->nevid && k < EVIDENCE_JSON_MAX; i++) {
        const dx_evid *d = &f->evid[i];
        if (d->ev->seq == last_seq)
            continue;
        last_seq = d->ev->seq;
        json_t *e = jevent(rep, d->ev);
        json_object_set_new(e, "role", jtext(dx_role_name(d->sig->role)));
        json_object_set_new(e, "signal", jtext(d->sig->id));
        json_object_set_new(e, "text", jtext(d->ev->text));
        json_object_set_new(e, "weight", json_real(round3(d->weight)));
        if (d->ev->caps)
            json_object_set_new(e, "captures", jtext(d->ev->caps));
        json_array_append_new(ev, e);
        k++;
    }
    json_object_set_new(o, "evidence", ev);
    json_t *sc = json_array();
    for (size_t i = 0; i < f->ncontribs; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "value", json_real(round3(f->contribs[i].value)));
        json_object_set_new(c, "why", jtext(f->contribs[i].why));
        json_array_append_new(sc, c);
    }
    json_object_set_new(o, "score", sc);
    json_t *ch = json_array();
    for (size_t i = 0; i < f->nchecks; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "text", jtext(f->checks[i].chk->says));
        json_object_set_new(c, "status", jtext(check_status(f->checks[i].status)));
        json_object_set_new(c, "because", jtext(f->checks[i].because));
        if (f->checks[i].chk->command)
            json_object_set_new(c, "command", jtext(f->checks[i].chk->command));
        json_array_append_new(ch, c);
    }
    json_object_set_new(o, "checks", ch);
    json_t *fix = json_array();
    if (f->variant)
        for (size_t i = 0; i < f->variant->nfix; i++)
            json_array_append_new(fix, jtext(f->variant->fix[i]));
    for (size_t i = 0; i < r->nfix; i++)
        json_array_append_new(fix, jtext(r->fix[i]));
    json_object_set_new(o, "fix", fix);
    json_t *nb = json_array();
    for (size_t i = 0; i < r->nneighbours; i++) {
        json_t *n = json_object();
        json_object_set_new(n, "id", jtext(r->neighbours[i].id));
        json_object_set_new(n, "tell", jtext(r->neighbours[i].tell));
        json_array_append_new(nb, n);
    }
    json_object_set_new(o, "neighbours", nb);
    json_object_set_new(o, "sources", jstrings(r->sources, r->nsources));
    return o;
}

/* The failure no reference explains (diag.c, unrec.c), or null. */
static json_t *junrec(const ddx_report *rep)
{
    const dx_unrec *u = rep->unrec;
    if (!u)
        return json_null();
    int known = u->seq != DX_UNREC_NOWHERE && (size_t)(u->seq >> 40) < rep->ninputs;
    json_t *o = json_object();
    json_object_set_new(o, "rank", jrank(u->rank));
    json_object_set_new(o, "path", known ? jtext(rep->inputs[u->seq >> 40].path) : json_null());
    json_object_set_new(o, "line",
                        known ? json_integer((json_int_t)(u->seq & DX_SEQ_LINE)) : json_null());
    json_object_set_new(o, "text", jstr(u->text));
    json_object_set_new(o, "exception", jstr(u->exception));
    json_object_set_new(o, "original", json_boolean(u->original));
    json_t *near = json_array();
    for (size_t i = 0; i < u->nnearest; i++)
        json_array_append_new(
            near, json_pack("{s:s,s:s}", "id", u->nearest[i].ref->id, "why", u->nearest[i].why));
    json_object_set_new(o, "nearest", near);
    return o;
}

static int dump(json_t *root, FILE *out, ddx_error *err)
{
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(root);
    if (rc || fputc('\n', out) == EOF)
        return dx_err(err, DDX_EIO, "cannot write the output: %s", strerror(errno));
    return DDX_OK;
}

/* ==== the hang: which ranks, where they run, where they stand, how sure ================== */

/* The report leads with the culprit when the culprit is known and the top finding is a hang, or
 * NCCL's RAS report holds a process dead: whatever killed it, the others hang on it. */
static int hang_known(const ddx_report *rep)
{
    return rep->nkept && rep->culprit >= 0 && rep->nculprit_ranks &&
           (!strcmp(rep->f[0].ref->kind, "hang") || dx_facts_get(&rep->facts, "nccl.ras_dead"));
}

static int fr_culprit(const ddx_report *rep, int rank)
{
    for (size_t i = 0; i < rep->frv.nculprits; i++)
        if (rep->frv.culprits[i] == rank)
            return 1;
    return 0;
}

/* Where the culprit stands: the flight recorder's reading when it names the culprit, else the
 * deciding signal's own line. */
static const char *hang_where(const ddx_report *rep)
{
    if (rep->frv.where[0] && fr_culprit(rep, rep->culprit))
        return rep->frv.where;
    return rep->culprit_decided && rep->culprit_decided[0] ? rep->culprit_decided : NULL;
}

/* "4 flight-recorder dumps, 3 compared, 1 empty" (noun: what a dump is called), or "" when
 * there was none. */
void dx_report_fr_count(const ddx_report *rep, const char *noun, char *buf, size_t cap)
{
    const dx_fr_verdict *v = &rep->frv;
    buf[0] = 0;
    if (!v->ndumps && !v->nunplaced)
        return;
    int w = snprintf(buf, cap, "%zu %s%s, %zu compared", v->ndumps, noun, v->ndumps == 1 ? "" : "s",
                     v->ncompared);
    const struct {
        size_t n;
        const char *what;
    } also[] = {{v->nempty, "empty"},
                {v->nrefused, "unreadable"},
                {v->nunplaced, "without a rank"},
                {v->nduplicate, "a second dump of one rank"}};
    for (size_t i = 0; i < DX_ARRAY_LEN(also) && w > 0 && (size_t)w < cap; i++)
        if (also[i].n)
            w += snprintf(buf + w, cap - (size_t)w, ", %zu %s", also[i].n, also[i].what);
}

int dx_report_fr_all_same(const ddx_report *rep)
{
    const dx_fr_verdict *v = &rep->frv;
    return !rep->nfrf && v->ncompared >= 2 && v->ncompared == v->ndumps && !v->nunplaced;
}

void dx_report_hang(const ddx_report *rep, dx_hang_view *v)
{
    memset(v, 0, sizeof *v);
    if (!(v->known = hang_known(rep)))
        return;
    const char *where = hang_where(rep);
    v->from_fr = where && where == rep->frv.where;
    if (v->from_fr)
        snprintf(v->where, sizeof v->where, "rank %d %s", rep->culprit, where);
    else if (where)
        snprintf(v->where, sizeof v->where, "%s", where);
    dx_report_fr_count(rep, "flight-recorder dump", v->read, sizeof v->read);
}

static json_t *jhang(const ddx_report *rep)
{
    if (!hang_known(rep))
        return json_null();
    json_t *o = json_object(), *ranks = json_array(), *procs = json_array();
    for (size_t i = 0; i < rep->nculprit_ranks; i++) {
        int r = rep->culprit_ranks[i];
        json_array_append_new(ranks, json_integer(r));
        const dx_rank *x = dx_job_rank_get(&rep->job, r);
        json_t *p = json_object();
        json_object_set_new(p, "rank", json_integer(r));
        json_object_set_new(p, "host", x && x->host[0] ? json_string(x->host) : json_null());
        json_object_set_new(p, "cuda_dev",
                            x && x->cuda_dev >= 0 ? json_integer(x->cuda_dev) : json_null());
        json_object_set_new(p, "pid", x && x->pid >= 0 ? json_integer(x->pid) : json_null());
        json_array_append_new(procs, p);
    }
    const dx_finding *f = &rep->f[0];
    json_object_set_new(o, "ranks", ranks);
    json_object_set_new(o, "processes", procs);
    dx_hang_view hv;
    dx_report_hang(rep, &hv);
    json_object_set_new(o, "where", hv.where[0] ? json_string(hv.where) : json_null());
    json_object_set_new(o, "finding", json_string(f->ref->id));
    json_object_set_new(o, "confidence", json_real(round3(f->confidence)));
    json_object_set_new(o, "level", json_string(dx_level_name(f->confidence)));
    json_object_set_new(o, "reason", jstr(rep->culprit_why));
    char buf[200];
    dx_report_fr_count(rep, "flight-recorder dump", buf, sizeof buf);
    json_object_set_new(o, "flight_recorder", buf[0] ? json_string(buf) : json_null());
    return o;
}

static json_t *jflight_recorder(const ddx_report *rep)
{
    const dx_fr_verdict *v = &rep->frv;
    json_t *fr = json_object();
    json_object_set_new(fr, "dumps", json_integer((json_int_t)v->ndumps));
    json_object_set_new(fr, "compared", json_integer((json_int_t)v->ncompared));
    json_object_set_new(fr, "empty", json_integer((json_int_t)v->nempty));
    json_object_set_new(fr, "unreadable", json_integer((json_int_t)v->nrefused));
    json_object_set_new(fr, "without_rank", json_integer((json_int_t)v->nunplaced));
    json_object_set_new(fr, "process_groups", json_integer((json_int_t)v->ngroups));
    json_t *cr = json_array();
    for (size_t i = 0; i < v->nculprits; i++)
        json_array_append_new(cr, json_integer(v->culprits[i]));
    json_object_set_new(fr, "culprit_ranks", cr);
    json_object_set_new(fr, "decisive", json_boolean(v->decisive));
    json_object_set_new(fr, "where", v->where[0] ? json_string(v->where) : json_null());
    json_t *frf = json_array();
    for (size_t i = 0; i < rep->nfrf; i++) {
        const dx_fr_finding *x = &rep->frf[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(dx_frdump_kind_name(x->kind)));
        json_object_set_new(o, "rank", jrank(x->rank));
        json_object_set_new(o, "culprit", json_boolean(x->root));
        json_object_set_new(o, "process_group", json_string(x->pg));
        json_object_set_new(o, "desc", x->desc[0] ? json_string(x->desc) : json_null());
        json_object_set_new(o, "seq", x->seq >= 0 ? json_integer(x->seq) : json_null());
        json_object_set_new(o, "op", x->op[0] ? json_string(x->op) : json_null());
        json_object_set_new(o, "why", json_string(x->why));
        json_array_append_new(frf, o);
    }
    json_object_set_new(fr, "findings", frf);
    return fr;
}

int ddx_report_write_json(const ddx_report *rep, FILE *out, ddx_error *err)
{
    json_t *root = json_object();
    json_object_set_new(root, "schema", json_integer(DDX_SCHEMA));
    json_object_set_new(root, "ddx_version", jtext(DDX_VERSION));
    json_t *inputs = json_array();
    for (size_t i = 0; i < rep->ninputs; i++) {
        const dx_input_info *in = &rep->inputs[i];
        json_t *o = json_object();
        json_object_set_new(o, "path", jtext(in->path));
        json_object_set_new(o, "kind", jtext(dx_kind_name(in->kind)));
        json_t *ranks = json_array();
        for (size_t k = 0; k < in->nranks; k++)
            json_array_append_new(ranks, json_integer(in->ranks[k]));
        json_object_set_new(o, "ranks", ranks);
        json_object_set_new(o, "bytes", json_integer((json_int_t)in->bytes));
        json_object_set_new(o, "lines", json_integer((json_int_t)in->lines));
        json_array_append_new(inputs, o);
    }
    json_object_set_new(root, "inputs", inputs);
    json_object_set_new(root, "unrecognised", junrec(rep));
    json_object_set_new(root, "culprit_rank", jrank(rep->culprit));
    json_t *cr = json_array();
    for (size_t i = 0; i < rep->nculprit_ranks; i++)
        json_array_append_new(cr, json_integer(rep->culprit_ranks[i]));
    json_object_set_new(root, "culprit_ranks", cr);
    json_object_set_new(root, "culprit_reason", jstr(rep->culprit_why));
    json_t *cs = json_array();
    for (size_t i = 0; i < rep->nculprit_signals; i++)
        json_array_append_new(cs, jtext(rep->culprit_signals[i]));
    json_object_set_new(root, "culprit_signals", cs);
    json_object_set_new(root, "hang", jhang(rep));
    json_t *ranks = json_array();
    for (size_t r = 0, k = 0; r < rep->job.nby && k < 1024; r++) {
        const dx_rank *x = rep->job.by_rank[r];
        if (!x)
            continue;
        dx_rank_view v;
        dx_job_rank_view(&rep->job, x, &v);
        v.state = dx_view_state(rep, x->rank, v.state);
        json_t *o = json_object();
        char buf[64];
        json_object_set_new(o, "rank", json_integer(x->rank));
        json_object_set_new(o, "state", jtext(dx_view_state(rep, x->rank, v.state)));
        json_object_set_new(o, "host", x->host[0] ? jtext(x->host) : json_null());
        json_object_set_new(o, "cuda_dev",
                            x->cuda_dev >= 0 ? json_integer(x->cuda_dev) : json_null());
        json_object_set_new(o, "bus_id", x->bus_id[0] ? jtext(x->bus_id) : json_null());
        json_object_set_new(o, "pid", x->pid >= 0 ? json_integer(x->pid) : json_null());
        json_object_set_new(o, "progress",
                            v.has_prog
                                ? json_pack("[I,I]", (json_int_t)v.prog_n, (json_int_t)v.prog_m)
                                : json_null());
        json_object_set_new(o, "lines", json_integer((json_int_t)x->lines));
        if (x->has_time) {
            dx_time_format(&x->last_time, buf, sizeof buf);
            json_object_set_new(o, "last_seen", jtext(buf));
        } else
            json_object_set_new(o, "last_seen", json_null());
        json_object_set_new(o, "first_error", jstr(x->first_error));
        json_object_set_new(o, "waits_in", jstr(v.waits_in));
        json_object_set_new(o, "timeout_seq",
                            v.timeout_seq >= 0 ? json_integer(v.timeout_seq) : json_null());
        json_object_set_new(o, "timeout_op",
                            v.timeout_op && v.timeout_op[0] ? jtext(v.timeout_op) : json_null());
        json_object_set_new(o, "step_median_s",
                            v.step_median[0] > 0 ? json_real(round3(v.step_median[0]))
                                                 : json_null());
        json_object_set_new(o, "relative_speed",
                            v.step_median[0] > 0 || v.slow ? json_real(round3(v.rel_speed))
                                                           : json_null());
        json_object_set_new(o, "last_completed",
                            v.has_last_completed ? json_integer(v.last_completed) : json_null());
        json_array_append_new(ranks, o);
        k++;
    }
    json_object_set_new(root, "ranks", ranks);
    json_t *fr = jflight_recorder(rep);
    json_object_set_new(root, "flight_recorder", fr);
    json_t *diags = json_array();
    for (size_t i = 0; i < rep->nkept; i++)
        json_array_append_new(diags, jfinding(rep, &rep->f[i]));
    json_object_set_new(root, "diagnoses", diags);
    json_t *facts = json_object(), *fsrc = json_object();
    for (size_t i = 0; i < rep->facts.n; i++) {
        const dx_fact *x = &rep->facts.v[i];
        char buf[400];
        json_object_set_new(facts, x->name, jfact(x->value));
        if (x->line)
            snprintf(buf, sizeof buf, "%s:%llu", x->path, (unsigned long long)x->line);
        else
            snprintf(buf, sizeof buf, "%s", x->path);
        json_object_set_new(fsrc, x->name, jtext(buf));
    }
    json_object_set_new(root, "facts", facts);
    json_object_set_new(root, "fact_sources", fsrc);
    json_t *tl = json_array();
    for (size_t i = 0; i < rep->ntimeline; i++) {
        const dx_tl *t = &rep->timeline[i];
        json_t *o = jevent(rep, t->ev);
        char buf[600];
        snprintf(buf, sizeof buf, "%s/%s: %s", t->ref->id, t->sig->id, t->ev->text);
        json_object_set_new(o, "event", jtext(buf));
        json_array_append_new(tl, o);
    }
    json_object_set_new(root, "timeline", tl);
    json_t *w = json_array();
    for (size_t i = 0; i < rep->nwarnings; i++)
        json_array_append_new(w, jtext(rep->warnings[i]));
    json_object_set_new(root, "warnings", w);
    /* the inputs that could not be read at all (each has a warning and an "unreadable" input):
       more than 0, the report is partial */
    json_object_set_new(root, "unreadable_inputs", json_integer((json_int_t)rep->nunreadable));
    json_object_set_new(root, "noise_lines", json_integer((json_int_t)rep->noise_lines));
    json_t *noise = json_array();
    for (size_t r = 0; r < rep->kb->nrefs; r++) {
        const dx_event *first;
        size_t n = strcmp(rep->kb->refs[r]->kind, "noise") ? 0 : dx_report_noise(rep, r, &first);
        if (!n)
            continue;
        json_t *o = jevent(rep, first);
        json_object_set_new(o, "id", jtext(rep->kb->refs[r]->id));
        json_object_set_new(o, "title", jtext(rep->kb->refs[r]->title));
        json_object_set_new(o, "count", json_integer((json_int_t)n));
        json_array_append_new(noise, o);
    }
    json_object_set_new(root, "noise", noise);
    return dump(root, out, err);
}

/* ==== text ================================================================================= */

/* Every name and text that comes from an input (paths, archive members, log lines, values,
 * host names) goes out through put()/putn(): control characters, C1 codes and direction
 * overrides are replaced, so no input can move the cursor, clear the screen or fake a line of
 * the report. Only the report's own format strings and styles reach the terminal as they are. */
static void put(FILE *out, const char *s) { dx_clean_write(out, s ? s : "", SIZE_MAX); }
static void putn(FILE *out, const char *s, size_t max) { dx_clean_write(out, s ? s : "", max); }

typedef struct style {
    const char *bold, *dim, *red, *yellow, *green, *cyan, *off;
} style;

static style make_style(int color)
{
    if (color)
        return (style){"\033[1m",  "\033[2m",  "\033[31m", "\033[33m",
                       "\033[32m", "\033[36m", "\033[0m"};
    return (style){"", "", "", "", "", "", ""};
}

static const char *level_color(const style *s, double c)
{
    return c >= 0.8 ? s->red : c >= 0.5 ? s->yellow : s->dim;
}

static void write_event_where(FILE *out, const ddx_report *rep, const dx_event *e)
{
    put(out, rep->inputs[e->input].path);
    fprintf(out, ":%llu", (unsigned long long)e->line);
    if (e->rank >= 0)
        fprintf(out, " (rank %d)", e->rank);
    if (e->has_time) {
        char buf[64];
        dx_time_format(&e->time, buf, sizeof buf);
        fprintf(out, " at %s", buf);
    }
}

/* Where a finding would be: the failure no reference explains, and the closest references. */
static void write_unrec(FILE *out, const ddx_report *rep, const style *s)
{
    const dx_unrec *u = rep->unrec;
    fprintf(out,
            "%sUnrecognised failure%s: the job failed, and no reference in the catalogue "
            "explains it\n",
            s->bold, s->off);
    fputs("  ", out);
    if (u->seq != DX_UNREC_NOWHERE && (size_t)(u->seq >> 40) < rep->ninputs) {
        put(out, rep->inputs[u->seq >> 40].path);
        fprintf(out, ":%llu", (unsigned long long)(u->seq & DX_SEQ_LINE));
    } else
        fputs("the launcher's report", out);
    if (u->rank >= 0)
        fprintf(out, " (rank %d)", u->rank);
    fputs("\n    ", out);
    put(out, u->text);
    fputc('\n', out);
    if (u->echo)
        fputs("  This line echoes a failure elsewhere (a peer's crash, a launcher's signal): the "
              "process that failed first left no error in the inputs.\n",
              out);
    if (u->nnearest) {
        fputs("  closest references (to read, not findings):\n", out);
        for (size_t i = 0; i < u->nnearest; i++) {
            fprintf(out, "    %s", s->bold);
            put(out, u->nearest[i].ref->id);
            fprintf(out, "%s: ", s->off);
            put(out, u->nearest[i].why);
            fputc('\n', out);
        }
    }
}

/* The evidence lines a short report shows: at most max, one line per rank before any rank's
 * second line (and lines without a rank among the first), then in time order. */
static size_t pick_evidence(const dx_finding *f, size_t max, size_t *pick)
{
    size_t n = 0;
    for (int pass = 0; pass < 2 && n < max; pass++) {
        uint64_t last_seq = UINT64_MAX;
        for (size_t i = 0; i < f->nevid && n < max; i++) {
            const dx_evid *d = &f->evid[i];
            if (d->ev->seq == last_seq)
                continue;
            last_seq = d->ev->seq;
            int taken = 0, rank_seen = 0;
            for (size_t k = 0; k < n; k++) {
                taken |= f->evid[pick[k]].ev->seq == d->ev->seq;
                rank_seen |= d->ev->rank >= 0 && f->evid[pick[k]].ev->rank == d->ev->rank;
            }
            if (taken || (pass == 0 && rank_seen))
                continue;
            pick[n++] = i;
        }
    }
    /* back in time order (evid is sorted by time, so by index) */
    for (size_t a = 1; a < n; a++)
        for (size_t b = a; b > 0 && pick[b - 1] > pick[b]; b--) {
            size_t t = pick[b];
            pick[b] = pick[b - 1];
            pick[b - 1] = t;
        }
    return n;
}

static void write_finding(FILE *out, const ddx_report *rep, const dx_finding *f, int verbose,
                          const style *s)
{
    const dx_ref *r = f->ref;
    fprintf(out, "%s", s->bold);
    put(out, r->id);
    fprintf(out, "%s  ", s->off);
    put(out, r->title);
    fprintf(out, "\n  %s%s%s, confidence %.2f", level_color(s, f->confidence),
            dx_level_name(f->confidence), s->off, f->confidence);
    if (f->nranks) {
        fprintf(out, "; rank%s ", f->nranks > 1 ? "s" : "");
        for (size_t i = 0; i < f->nranks && i < 8; i++)
            fprintf(out, "%s%d", i ? "," : "", f->ranks[i]);
        if (f->nranks > 8)
            fprintf(out, ",... (%zu)", f->nranks);
    }
    fputc('\n', out);
    if (f->variant) {
        fputs("  cause: ", out);
        put(out, f->variant->title);
        fputc('\n', out);
    }
    if (f->first) {
        fprintf(out, "  started: ");
        write_event_where(out, rep, f->first);
        fputc('\n', out);
    }
    if (f->nevid)
        fprintf(out, "  %sevidence%s\n", s->bold, s->off);
    else {
        /* proved by facts alone: say which */
        fprintf(out, "  %sbecause%s\n", s->bold, s->off);
        for (size_t i = 1; i < f->ncontribs; i++)
            if (f->contribs[i].value > 0) {
                fputs("    ", out);
                put(out, f->contribs[i].why);
                fputc('\n', out);
            }
    }
    size_t max = verbose ? f->nevid : EVIDENCE_TEXT_MAX, npick;
    size_t pick_small[EVIDENCE_TEXT_MAX], *pick = pick_small;
    if (verbose && !(pick = dx_calloc(f->nevid ? f->nevid : 1, sizeof *pick)))
        pick = pick_small, max = EVIDENCE_TEXT_MAX;
    npick = pick_evidence(f, max, pick);
    for (size_t k = 0; k < npick; k++) {
        const dx_evid *d = &f->evid[pick[k]];
        fprintf(out, "    %s", s->dim);
        put(out, rep->inputs[d->ev->input].path);
        fprintf(out, ":%llu%s", (unsigned long long)d->ev->line, s->off);
        if (d->ev->rank >= 0)
            fprintf(out, " %s[rank %d]%s", s->cyan, d->ev->rank, s->off);
        /* at most 200 bytes, cut before a character, not inside one */
        size_t n = strlen(d->ev->text);
        if (n > 200)
            for (n = 200; n && ((unsigned char)d->ev->text[n] & 0xC0) == 0x80; n--)
                ;
        fprintf(out, " %s: ", dx_role_name(d->sig->role));
        putn(out, d->ev->text, n);
        fputc('\n', out);
    }
    if (pick != pick_small)
        dx_free(pick);
    if (f->nchecks) {
        fprintf(out, "  %schecks%s\n", s->bold, s->off);
        for (size_t i = 0; i < f->nchecks; i++) {
            const dx_checkres *c = &f->checks[i];
            const char *mark = c->status == DX_CHECK_CONFIRMED      ? "[x]"
                               : c->status == DX_CHECK_CONTRADICTED ? "[!]"
                                                                    : "[ ]";
            const char *col = c->status == DX_CHECK_CONFIRMED      ? s->green
                              : c->status == DX_CHECK_CONTRADICTED ? s->red
                                                                   : "";
            fprintf(out, "    %s%s%s ", col, mark, s->off);
            put(out, c->chk->says);
            fputc('\n', out);
            if (c->status != DX_CHECK_NOT_VISIBLE || verbose || c->chk->command) {
                fprintf(out, "        %s", s->dim);
                put(out, c->status == DX_CHECK_NOT_VISIBLE && c->chk->command && !verbose
                             ? c->chk->command
                             : c->because);
                fprintf(out, "%s\n", s->off);
            }
        }
    }
    size_t nfix = (f->variant ? f->variant->nfix : 0) + r->nfix;
    if (nfix) {
        fprintf(out, "  %sfix%s\n", s->bold, s->off);
        size_t k = 1;
        for (size_t i = 0; f->variant && i < f->variant->nfix; i++) {
            fprintf(out, "    %zu. ", k++);
            put(out, f->variant->fix[i]);
            fputc('\n', out);
        }
        for (size_t i = 0; i < r->nfix; i++) {
            fprintf(out, "    %zu. ", k++);
            put(out, r->fix[i]);
            fputc('\n', out);
        }
    }
    if (r->nsources) {
        fprintf(out, "  %ssources%s\n", s->bold, s->off);
        for (size_t i = 0; i < r->nsources && (verbose || i < 3); i++) {
            fputs("    ", out);
            put(out, r->sources[i]);
            fputc('\n', out);
        }
    }
    if (verbose) {
        fprintf(out, "  %swhy this score%s (log-odds)\n", s->bold, s->off);
        for (size_t i = 0; i < f->ncontribs; i++) {
            fprintf(out, "    %+6.2f  ", f->contribs[i].value);
            put(out, f->contribs[i].why);
            fputc('\n', out);
        }
        for (size_t i = 0; i < r->nneighbours; i++) {
            fputs("  not to confuse with ", out);
            put(out, r->neighbours[i].id);
            fputs(": ", out);
            put(out, r->neighbours[i].tell);
            fputc('\n', out);
        }
    }
}

/* ---- the ranks of a job -------------------------------------------------------------------- */

/* One rank's row, less its number: the state and what the readings say. */
static void write_rank_row(FILE *out, const dx_rank *x, const dx_rank_view *v, int with_time)
{
    fprintf(out, with_time ? "%-9s" : "%s", v->state);
    if (with_time) {
        char t[64] = "-";
        if (x->has_time)
            dx_time_format(&x->last_time, t, sizeof t);
        fprintf(out, "  last seen %s", t);
    }
    if (with_time && x->host[0]) {
        fputs("  on ", out);
        put(out, x->host);
    }
    if (with_time && x->cuda_dev >= 0)
        fprintf(out, " gpu %d", x->cuda_dev);
    if (with_time && x->pid >= 0)
        fprintf(out, " pid %lld", x->pid);
    if (v->has_prog)
        fprintf(out, "  step %lld/%lld", v->prog_n, v->prog_m);
    const char *op = v->timeout_op && v->timeout_op[0] ? v->timeout_op : NULL;
    if (v->timed_out) {
        fputs("  in ", out);
        put(out, op ? op : v->timeout_seq >= 0 ? "collective" : "a collective");
        if (v->timeout_seq >= 0)
            fprintf(out, " #%lld", v->timeout_seq);
    }
    if (v->has_last_completed)
        fprintf(out, "  last completed %lld", v->last_completed);
    if (with_time && v->step_median[0] > 0)
        fprintf(out, "  step %.3fs", v->step_median[0]);
    if (with_time && v->nstep[1] >= 5)
        fprintf(out, "  data wait %.3fs", v->step_median[1]);
    if (v->slow_data)
        fprintf(out, "  (waits for data %.0f%% of its step)", 100 * (1 - v->rel_speed));
    else if (v->slow)
        fprintf(out, "  (%.0f%% of the fastest rank's speed)", 100 * v->rel_speed);
    if (v->waits_in) {
        fputs("  waits in ", out);
        put(out, v->waits_in);
    }
    if (x->first_error) {
        fputs("  ", out);
        putn(out, x->first_error, 100);
    }
}

/* The row of a rank with its number, as --verbose lists every rank. */
static void write_rank_line(FILE *out, const ddx_report *rep, const dx_rank *x)
{
    dx_rank_view v;
    dx_job_rank_view(&rep->job, x, &v);
    v.state = dx_view_state(rep, x->rank, v.state);
    fprintf(out, "  %5d  ", x->rank);
    write_rank_row(out, x, &v, 1);
    fputc('\n', out);
}

typedef struct rank_row {
    const dx_rank *x;
    int order;     /* culprit 0, failed 1, silent 2, slow 3, unreadable 4, timed out 5, healthy 6 */
    char key[256]; /* the row without the rank, its time and identity: equal rows collapse */
} rank_row;

static int rank_order(const ddx_report *rep, const dx_rank *x, const char *state)
{
    for (size_t i = 0; i < rep->nculprit_ranks; i++)
        if (rep->culprit_ranks[i] == x->rank)
            return 0;
    static const char *const states[] = {"failed",     "silent",    "slow",
                                         "unreadable", "timed out", "healthy"};
    for (size_t i = 0; i < DX_ARRAY_LEN(states); i++)
        if (!strcmp(state, states[i]))
            return (int)i + 1;
    return 6;
}

static int cmp_rank_row(const void *a, const void *b)
{
    const rank_row *x = a, *y = b;
    if (x->order != y->order)
        return x->order - y->order;
    int k = strcmp(x->key, y->key);
    return k ? k : x->x->rank - y->x->rank;
}

/* "0-508, 510, 512-1023": the ranks of rows[from..to), which are sorted by rank within a key. */
static void write_rank_list(FILE *out, const rank_row *rows, size_t from, size_t to, size_t max)
{
    size_t shown = 0;
    for (size_t i = from; i < to;) {
        size_t j = i;
        while (j + 1 < to && rows[j + 1].x->rank == rows[j].x->rank + 1)
            j++;
        if (shown++ == max) {
            fputs(", ...", out);
            return;
        }
        fprintf(out, "%s%d", i > from ? ", " : "", rows[i].x->rank);
        if (j > i)
            fprintf(out, "%s%d", j == i + 1 ? ", " : "-", rows[j].x->rank);
        i = j + 1;
    }
}

/* The ranks table of a short report: the culprit ranks, then failed, silent, slow and unreadable
 * ranks one a line (at most RANKS_ONE_BY_ONE of them), then the other ranks in groups of
 * identical rows ("509 ranks  timed out  in ALLREDUCE #4821: 0-508"). A job of any size takes a
 * few lines. */
#define RANKS_ONE_BY_ONE 8
#define RANK_GROUPS_MAX 8
#define RANKS_SMALL_JOB 16 /* a job this small: every rank on its own line, the notable first */
static int write_ranks_short(FILE *out, const ddx_report *rep)
{
    const dx_job_model *jm = &rep->job;
    rank_row *rows = dx_calloc(jm->nranks ? jm->nranks : 1, sizeof *rows);
    if (!rows)
        return DDX_ENOMEM;
    size_t n = 0;
    for (size_t r = 0; r < jm->nby && n < jm->nranks; r++) {
        const dx_rank *x = jm->by_rank[r];
        if (!x)
            continue;
        dx_rank_view v;
        dx_job_rank_view(jm, x, &v);
        v.state = dx_view_state(rep, x->rank, v.state);
        rank_row *w = &rows[n++];
        w->x = x;
        w->order = rank_order(rep, x, v.state);
        FILE *k = fmemopen(w->key, sizeof w->key - 1, "w");
        if (k) {
            write_rank_row(k, x, &v, 0);
            fclose(k);
        }
    }
    qsort(rows, n, sizeof *rows, cmp_rank_row);
    size_t one = 0, groups = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && rows[j].order == rows[i].order && !strcmp(rows[j].key, rows[i].key))
            j++;
        int alone =
            (rows[i].order <= 4 && one + (j - i) <= RANKS_ONE_BY_ONE) || n <= RANKS_SMALL_JOB;
        if (alone || j - i == 1) {
            for (size_t k = i; k < j; k++, one++) {
                if (!alone && one >= RANKS_ONE_BY_ONE + RANK_GROUPS_MAX)
                    break;
                write_rank_line(out, rep, rows[k].x);
            }
        } else {
            if (groups++ == RANK_GROUPS_MAX) {
                fprintf(out, "  ... %zu ranks in all (--verbose lists them)\n", jm->nranks);
                break;
            }
            fprintf(out, "  %zu ranks  ", j - i);
            put(out, rows[i].key);
            fputs(": ", out);
            write_rank_list(out, rows, i, j, 12);
            fputc('\n', out);
        }
        i = j;
    }
    dx_free(rows);
    return DDX_OK;
}

/* ---- a long stretch without progress ------------------------------------------------------- */

/* "no progress for 1 h 52 min before the time limit": a job that stopped making progress long
 * before it ended (a hang the scheduler's time limit ended, or a log that goes on without steps). */
static void write_progress_gap(FILE *out, const ddx_report *rep)
{
    double gap;
    int limit;
    dx_time last;
    if (!dx_progress_gap(&rep->job, &gap, &limit, &last))
        return;
    long min = (long)(gap / 60);
    char when[48];
    dx_time_format(&last, when, sizeof when);
    fputs("\nno progress for ", out);
    if (min >= 60)
        fprintf(out, "%ld h %ld min", min / 60, min % 60);
    else
        fprintf(out, "%ld min", min);
    fprintf(out, " before %s (the last progress line at %s)\n",
            limit ? "the time limit" : "the end of the log", when);
}

/* ---- the flight recorder ------------------------------------------------------------------- */

/* The answer to "which rank, on which node, stuck where, how sure", first. */
static void write_hang(FILE *out, const ddx_report *rep, const style *s)
{
    if (!hang_known(rep))
        return;
    size_t n = rep->nculprit_ranks;
    fprintf(out, "%sHang:%s rank%s ", s->bold, s->off, n > 1 ? "s" : "");
    for (size_t i = 0; i < n && i < 8; i++) {
        int r = rep->culprit_ranks[i];
        const dx_rank *x = dx_job_rank_get(&rep->job, r);
        fprintf(out, "%s%s%d%s", i ? (i + 1 == n ? " and " : ", ") : "", s->bold, r, s->off);
        if (x && (x->host[0] || x->cuda_dev >= 0 || x->pid >= 0)) {
            const char *sep = "";
            fputs(" (", out);
            if (x->host[0]) {
                fputs("on ", out);
                put(out, x->host);
                sep = ", ";
            }
            if (x->cuda_dev >= 0) {
                fprintf(out, "%sGPU %d", sep, x->cuda_dev);
                sep = ", ";
            }
            if (x->pid >= 0)
                fprintf(out, "%spid %lld", sep, x->pid);
            fputc(')', out);
        }
    }
    if (n > 8)
        fprintf(out, " and %zu more", n - 8);
    fprintf(out, " hold%s up the others\n", n > 1 ? "" : "s");
    const char *where = hang_where(rep);
    if (where && where == rep->frv.where)
        fprintf(out, "  where: rank %d ", rep->culprit);
    else if (where)
        fputs("  evidence: ", out);
    if (where) {
        put(out, where);
        fputc('\n', out);
    }
    const dx_finding *f = &rep->f[0];
    fprintf(out, "  how sure: %s%s %.2f%s (%s); %s\n", level_color(s, f->confidence),
            dx_level_name(f->confidence), f->confidence, s->off, f->ref->id,
            rep->culprit_why ? rep->culprit_why : "");
    char buf[200];
    dx_report_fr_count(rep, "flight-recorder dump", buf, sizeof buf);
    if (buf[0])
        fprintf(out, "  read: %s\n", buf);
    fputc('\n', out);
}

/* The flight recorder's section: what was read and compared, and what it shows. It claims that
 * every rank reached the same collectives only when at least two dumps were compared and none
 * was missing, empty or unreadable. */
static void write_flight_recorder(FILE *out, const ddx_report *rep, int verbose, const style *s)
{
    const dx_fr_verdict *v = &rep->frv;
    if (!v->ndumps && !v->nunplaced)
        return;
    char buf[200];
    dx_report_fr_count(rep, "dump", buf, sizeof buf);
    fprintf(out, "\n%sflight recorder%s (%s)\n", s->bold, s->off, buf);
    if (v->nculprits) {
        fprintf(out, "  culprit%s: rank%s ", v->nculprits > 1 ? "s" : "",
                v->nculprits > 1 ? "s" : "");
        for (size_t i = 0; i < v->nculprits && i < 16; i++)
            fprintf(out, "%s%d", i ? ", " : "", v->culprits[i]);
        fprintf(out, "%s\n", v->decisive ? "" : " (the dumps do not settle it)");
    }
    if (!rep->nfrf) {
        if (dx_report_fr_all_same(rep))
            fprintf(out, "  every rank reached the same collectives with the same operations\n");
        else if (v->ncompared >= 2)
            fprintf(out, "  no difference among the %zu dumps compared\n", v->ncompared);
        else
            fprintf(out, "  fewer than two readable dumps of one process group: nothing to "
                         "compare\n");
    }
    /* the first findings, and every empty or unreadable dump */
    size_t shown = 0;
    for (size_t i = 0; i < rep->nfrf; i++)
        if (verbose || i < 4 || rep->frf[i].kind == DX_FR_EMPTY_DUMP) {
            fprintf(out, "  %s: ", dx_frdump_kind_name(rep->frf[i].kind));
            put(out, rep->frf[i].why);
            fputc('\n', out);
            shown++;
        }
    if (shown < rep->nfrf)
        fprintf(out, "  ... %zu findings in all (--verbose lists them)\n", rep->nfrf);
}

int ddx_report_write_text(const ddx_report *rep, int flags, FILE *out, ddx_error *err)
{
    style s = make_style(flags & DDX_TEXT_COLOR);
    int verbose = (flags & DDX_TEXT_VERBOSE) != 0;
    uint64_t lines = 0;
    for (size_t i = 0; i < rep->ninputs; i++)
        lines += rep->inputs[i].lines;
    write_hang(out, rep, &s);
    if (!rep->nkept && rep->unrec) {
        write_unrec(out, rep, &s);
    } else if (!rep->nkept) {
        fprintf(out, "No known failure found in %zu input%s (%llu lines).\n", rep->nread,
                rep->nread == 1 ? "" : "s", (unsigned long long)lines);
        if (rep->nf && !rep->all)
            fprintf(out,
                    "%zu weak candidate%s below the reporting threshold; see them with "
                    "--all.\n",
                    rep->nf, rep->nf == 1 ? "" : "s");
    }
    for (size_t i = 0; i < rep->nkept; i++) {
        if (i == 1 && !verbose) {
            fprintf(out, "\n%salso possible%s\n", s.bold, s.off);
        }
        if (i >= 1 && !verbose) {
            const dx_finding *f = &rep->f[i];
            fprintf(out, "  %s", s.bold);
            put(out, f->ref->id);
            fprintf(out, "%s (%s %.2f) ", s.off, dx_level_name(f->confidence), f->confidence);
            put(out, f->ref->title);
            if (f->first) {
                fputs(" - ", out);
                write_event_where(out, rep, f->first);
            }
            fputc('\n', out);
            continue;
        }
        if (i)
            fputc('\n', out);
        write_finding(out, rep, &rep->f[i], verbose, &s);
    }
    if (rep->culprit >= 0) {
        fprintf(out, "\nCulprit rank: %s%d%s (", s.bold, rep->culprit, s.off);
        put(out, rep->culprit_why);
        fputs(")\n", out);
        for (size_t i = 0; verbose && i < rep->nculprit_signals; i++) {
            fputs("  - ", out);
            put(out, rep->culprit_signals[i]);
            fputc('\n', out);
        }
    }
    if (rep->job.nranks > 1 && (verbose || rep->nkept)) {
        fprintf(out, "\n%sranks%s\n", s.bold, s.off);
        if (!verbose) {
            if (write_ranks_short(out, rep))
                return dx_err(err, DDX_ENOMEM, "out of memory");
        } else {
            size_t shown = 0;
            for (size_t r = 0; r < rep->job.nby; r++) {
                const dx_rank *x = rep->job.by_rank[r];
                if (!x)
                    continue;
                if (shown++ == 4096) {
                    fprintf(out, "  ... %zu ranks in all (the JSON report has them all)\n",
                            rep->job.nranks);
                    break;
                }
                write_rank_line(out, rep, x);
            }
        }
    }
    write_progress_gap(out, rep);
    write_flight_recorder(out, rep, verbose, &s);
    size_t nused = 0;
    for (size_t i = 0; i < rep->facts.n; i++)
        nused += rep->facts.v[i].used != 0;
    if (rep->facts.n && (verbose || (nused && rep->nkept))) {
        fprintf(out, "\n%s%s%s\n", s.bold, verbose ? "facts" : "facts used", s.off);
        for (size_t i = 0; i < rep->facts.n; i++) {
            const dx_fact *x = &rep->facts.v[i];
            if (!verbose && !x->used)
                continue;
            fputs("  ", out);
            put(out, x->name);
            fputs(" = ", out);
            put(out, x->value);
            fprintf(out, "  %s(", s.dim);
            put(out, x->path);
            if (x->line)
                fprintf(out, ":%llu", (unsigned long long)x->line);
            fprintf(out, ")%s%s\n", s.off, verbose && x->used ? "  [used]" : "");
        }
    }
    if (verbose && rep->ntimeline) {
        fprintf(out, "\n%stimeline%s\n", s.bold, s.off);
        for (size_t i = 0; i < rep->ntimeline; i++) {
            const dx_tl *t = &rep->timeline[i];
            fputs("  ", out);
            write_event_where(out, rep, t->ev);
            fputc(' ', out);
            put(out, t->ref->id);
            fputc('/', out);
            put(out, t->sig->id);
            fputc('\n', out);
        }
    }
    if (verbose && rep->noise_lines) {
        fprintf(out, "\n%sknown-harmless lines%s (not findings)\n", s.bold, s.off);
        for (size_t r = 0; r < rep->kb->nrefs; r++) {
            const dx_event *first;
            size_t n =
                strcmp(rep->kb->refs[r]->kind, "noise") ? 0 : dx_report_noise(rep, r, &first);
            if (!n)
                continue;
            fprintf(out, "  %zu x ", n);
            put(out, rep->kb->refs[r]->id);
            fputs(" (", out);
            put(out, rep->kb->refs[r]->title);
            fputs("), first at ", out);
            write_event_where(out, rep, first);
            fputc('\n', out);
        }
    }
    if (!(flags & DDX_TEXT_NO_WARNINGS))
        for (size_t i = 0; i < rep->nwarnings; i++) {
            fprintf(out, "%swarning:%s ", s.yellow, s.off);
            put(out, rep->warnings[i]);
            fputc('\n', out);
        }
    else if (rep->nwarnings)
        fprintf(out, "\n%s%zu warning%s about the inputs, shown as they came%s\n", s.yellow,
                rep->nwarnings, rep->nwarnings == 1 ? "" : "s", s.off);
    if (rep->nunreadable)
        fprintf(out, "%sPartial report: %zu input%s could not be read (see the warnings).%s\n",
                s.yellow, rep->nunreadable, rep->nunreadable == 1 ? "" : "s", s.off);
    if (rep->nkept && !verbose)
        fprintf(out, "\n%sMore: --verbose (score terms, facts, timeline), --json.%s\n", s.dim,
                s.off);
    if (ferror(out))
        return dx_err(err, DDX_EIO, "cannot write the output: %s", strerror(errno));
    return DDX_OK;
}

/* ==== references =========================================================================== */

static json_t *jcond(const dx_cond *c)
{
    json_t *o = json_object();
    json_object_set_new(o, "fact", json_string(c->fact));
    json_object_set_new(o, dx_op_name(c->op), jstr(c->value));
    return o;
}

int ddx_kb_write_ref_json(const ddx_kb *kb, size_t i, int full, FILE *out, ddx_error *err)
{
    if (i >= kb->nrefs)
        return dx_err(err, DDX_ENOTFOUND, "no reference number %zu", i);
    const dx_ref *r = kb->refs[i];
    json_t *o = json_object();
    json_object_set_new(o, "id", json_string(r->id));
    json_object_set_new(o, "title", json_string(r->title));
    json_object_set_new(o, "category", json_string(r->category));
    json_object_set_new(o, "kind", json_string(r->kind));
    json_object_set_new(o, "frameworks", jstrings(r->frameworks, r->nframeworks));
    json_object_set_new(o, "summary", jstr(r->summary));
    json_object_set_new(o, "prior", json_real(r->prior));
    json_object_set_new(o, "sources", jstrings(r->sources, r->nsources));
    if (full) {
        json_t *sg = json_array();
        for (size_t k = 0; k < r->nsignals; k++) {
            const dx_signal *s = &r->signals[k];
            json_t *x = json_object();
            json_object_set_new(x, "id", json_string(s->id));
            json_object_set_new(x, "role", json_string(dx_role_name(s->role)));
            json_object_set_new(x, "weight", json_real(s->weight));
            json_object_set_new(x, "pattern", json_string(s->pattern));
            json_object_set_new(x, "source", jstr(s->source));
            const dx_sigcond *c = r->conds ? &r->conds[k] : NULL;
            if (c && c->at_end)
                json_object_set_new(x, "at_end", json_true());
            const char *const named[][2] = {{"after", c ? c->after : NULL},
                                            {"not_after", c ? c->not_after : NULL},
                                            {"not_followed_by", c ? c->not_followed_by : NULL},
                                            {"repeats", c ? c->repeats : NULL},
                                            {"missing", c ? c->missing : NULL},
                                            {"out_of", c ? c->out_of : NULL},
                                            {"differs", c ? c->differs : NULL}};
            for (size_t n = 0; n < DX_ARRAY_LEN(named); n++)
                if (named[n][1])
                    json_object_set_new(x, named[n][0], json_string(named[n][1]));
            json_array_append_new(sg, x);
        }
        json_object_set_new(o, "signals", sg);
        json_t *ctx = json_array();
        for (size_t k = 0; k < r->ncontext; k++) {
            json_t *c = jcond(&r->context[k]);
            json_object_set_new(c, "weight", json_real(r->context[k].weight));
            if (r->context[k].root)
                json_object_set_new(c, "root", json_true());
            json_array_append_new(ctx, c);
        }
        json_object_set_new(o, "context", ctx);
        json_t *ch = json_array();
        for (size_t k = 0; k < r->nchecks; k++) {
            const dx_check *c = &r->checks[k];
            json_t *x = c->cond.fact ? jcond(&c->cond) : json_object();
            json_object_set_new(x, "says", json_string(c->says));
            if (c->command)
                json_object_set_new(x, "command", json_string(c->command));
            json_array_append_new(ch, x);
        }
        json_object_set_new(o, "checks", ch);
        json_t *va = json_array();
        for (size_t k = 0; k < r->nvariants; k++) {
            const dx_variant *v = &r->variants[k];
            json_t *x = json_object();
            json_object_set_new(x, "id", json_string(v->id));
            json_object_set_new(x, "title", json_string(v->title));
            json_object_set_new(x, "signals", jstrings(v->signals, v->nsignals));
            json_object_set_new(x, "fix", jstrings(v->fix, v->nfix));
            json_array_append_new(va, x);
        }
        json_object_set_new(o, "variants", va);
        json_t *nb = json_array();
        for (size_t k = 0; k < r->nneighbours; k++) {
            json_t *x = json_object();
            json_object_set_new(x, "id", json_string(r->neighbours[k].id));
            json_object_set_new(x, "tell", json_string(r->neighbours[k].tell));
            json_array_append_new(nb, x);
        }
        json_object_set_new(o, "neighbours", nb);
        json_t *ex = json_array();
        for (size_t k = 0; k < r->nexamples; k++) {
            json_t *x = json_object();
            json_object_set_new(x, "path", json_string(r->examples[k].path));
            json_object_set_new(x, "source", json_string(r->examples[k].source));
            json_object_set_new(x, "constructed", json_boolean(r->examples[k].constructed));
            json_array_append_new(ex, x);
        }
        json_object_set_new(o, "examples", ex);
        json_object_set_new(o, "fix", jstrings(r->fix, r->nfix));
        json_object_set_new(o, "body", json_string(r->body));
    }
    return dump(o, out, err);
}

/* Markdown lines for a terminal: headings bold, backquotes dropped. */
static void write_markdown(FILE *out, const style *s, const char *p, size_t n)
{
    while (n && isspace((unsigned char)p[n - 1]))
        n--; /* the caller puts one blank line between blocks */
    while (n && (*p == '\n' || *p == '\r')) {
        p++;
        n--;
    }
    const char *end = p + n;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        size_t len = eol ? (size_t)(eol - p) : (size_t)(end - p);
        if (len > 3 && !strncmp(p, "## ", 3))
            fprintf(out, "%s%.*s%s\n", s->bold, (int)(len - 3), p + 3, s->off);
        else {
            for (size_t k = 0; k < len; k++)
                if (p[k] != '`')
                    fputc(p[k], out);
            fputc('\n', out);
        }
        if (!eol)
            break;
        p = eol + 1;
    }
}

/* A signal's conditions in words, under its pattern (`ddx show --verbose`). */
static void write_conditions(FILE *out, const style *s, const char *id, const dx_sigcond *c)
{
    if (!c || !DX_SIGCOND_ANY(c))
        return;
    fprintf(out, "  %s        %s counts only", s->dim, id);
    const char *sep = "";
    if (c->at_end) {
        fprintf(out, " on the last line of its input, with no failure line anywhere");
        sep = ";";
    }
    if (c->after) {
        fprintf(out, "%s after a line of '%s' in the same input", sep, c->after);
        sep = ";";
    }
    if (c->not_after) {
        fprintf(out, "%s when no line of '%s' came before it in its input", sep, c->not_after);
        sep = ";";
    }
    if (c->not_followed_by) {
        fprintf(out, "%s when no line of '%s' follows it in its input", sep, c->not_followed_by);
        sep = ";";
    }
    if (c->repeats) {
        fprintf(out, "%s when one value of '%s' is on two lines of one input", sep, c->repeats);
        sep = ";";
    }
    if (c->missing) {
        fprintf(out, "%s when some value 0..N-1 of '%s' is on no line (N: the largest '%s')", sep,
                c->missing, c->out_of ? c->out_of : "?");
        sep = ";";
    }
    if (c->differs)
        fprintf(out, "%s for the one rank whose '%s' differs from every other rank's (blamed)", sep,
                c->differs);
    fprintf(out, "%s\n", s->off);
}

int ddx_kb_write_ref_text(const ddx_kb *kb, size_t i, int color, int verbose, FILE *out,
                          ddx_error *err)
{
    if (i >= kb->nrefs)
        return dx_err(err, DDX_ENOTFOUND, "no reference number %zu", i);
    style s = make_style(color);
    const dx_ref *r = kb->refs[i];
    fprintf(out, "%s%s%s\n%s%s · %s · %s%s\n", s.bold, r->title, s.off, s.dim, r->id, r->category,
            r->kind, s.off);
    if (r->summary)
        fprintf(out, "\n%s\n", r->summary);
    fputc('\n', out);
    /* the body, less the notes on where the examples come from (shown with verbose, last) */
    size_t alen = 0;
    const char *cut = NULL;
    const char *about = dx_ref_section(r, DX_EXAMPLES_SECTION, &alen, &cut);
    write_markdown(out, &s, r->body, cut ? (size_t)(cut - r->body) : strlen(r->body));
    if (about && about + alen < r->body + strlen(r->body)) { /* sections after it, if any */
        fputc('\n', out);
        write_markdown(out, &s, about + alen, strlen(about + alen));
    }
    fprintf(out, "\n%sSources%s\n", s.bold, s.off);
    for (size_t k = 0; k < r->nsources; k++)
        fprintf(out, "  %s\n", r->sources[k]);
    size_t nbuilt = dx_ref_nconstructed(r);
    size_t nreal = r->nexamples - nbuilt;
    if (!verbose) {
        /* the machinery (patterns, examples, how they were found) only when asked */
        fprintf(out, "\n%s%zu signal%s", s.dim, r->nsignals, r->nsignals == 1 ? "" : "s");
        if (nreal)
            fprintf(out, ", %zu example%s from public reports", nreal, nreal == 1 ? "" : "s");
        if (nbuilt)
            fprintf(out, ", %zu example%s constructed from the frameworks' own messages", nbuilt,
                    nbuilt == 1 ? "" : "s");
        fprintf(out, "; 'ddx show --verbose %s' lists them%s.%s\n", r->id,
                about ? " and says what was searched for real logs" : "", s.off);
    } else {
        fprintf(out, "\n%sSignals%s\n", s.bold, s.off);
        for (size_t k = 0; k < r->nsignals; k++) {
            fprintf(out, "  %-8s %4.1f  %s\n", dx_role_name(r->signals[k].role),
                    r->signals[k].weight, r->signals[k].pattern);
            write_conditions(out, &s, r->signals[k].id, r->conds ? &r->conds[k] : NULL);
        }
        if (r->ncontext)
            fprintf(out, "\n%sContext%s\n", s.bold, s.off);
        for (size_t k = 0; k < r->ncontext; k++) {
            const dx_cond *c = &r->context[k];
            fprintf(out, "  %+5.1f  %s %s %s%s%s\n", c->weight, c->fact, dx_op_name(c->op),
                    c->value ? c->value : "", c->root ? "  (root: the fact shows the failure)" : "",
                    c->raise_only ? "  (raises only)" : "");
        }
        if (r->nexamples)
            fprintf(out, "\n%sExamples%s\n", s.bold, s.off);
        for (size_t k = 0; k < r->nexamples; k++)
            fprintf(out, "  %s\n    %s%s\n", r->examples[k].path,
                    r->examples[k].constructed ? "constructed from " : "",
                    r->examples[k].source ? r->examples[k].source : "");
        if (about) {
            fprintf(out, "\n%s%s%s\n\n", s.bold, DX_EXAMPLES_SECTION + 3, s.off);
            write_markdown(out, &s, about, alen);
        }
    }
    if (ferror(out))
        return dx_err(err, DDX_EIO, "cannot write the output");
    return DDX_OK;
}
