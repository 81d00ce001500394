/* commands.c -- ddx diagnose, refs, show and lint. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "diag.h"

#include "lint.h"

/* ---- diagnose ------------------------------------------------------------------------------ */

typedef struct diag_cli {
    int tty;            /* standard error is a terminal: warnings in colour, progress shown */
    int progress_shown; /* a progress line is on screen: cleared before the next line */
    double start, last; /* when reading started, and when progress was last shown */
} diag_cli;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void clear_progress(diag_cli *d)
{
    if (d->progress_shown) {
        fputs("\r\033[K", stderr);
        d->progress_shown = 0;
    }
}

/* Each warning on standard error as it happens, cleaned of whatever an input's name holds. */
static void on_warning(void *ud, const char *msg)
{
    diag_cli *d = ud;
    clear_progress(d);
    fputs(d->tty ? "ddx: \033[33mwarning:\033[0m " : "ddx: warning: ", stderr);
    dx_clean_write(stderr, msg, 2000);
    fputc('\n', stderr);
}

/* A progress line on a terminal once reading takes more than two seconds, five times a second. */
static void on_progress(void *ud, const char *path, unsigned long long bytes)
{
    diag_cli *d = ud;
    double t = now_s();
    if (t - d->start < 2.0 || t - d->last < 0.2)
        return;
    d->last = t;
    fprintf(stderr, "\r\033[Kddx: %.1f MiB read, now ", (double)bytes / (1 << 20));
    dx_clean_write(stderr, path, 60);
    d->progress_shown = 1;
}

/* --quiet: one line that says what the report says. */
static int write_summary(const ddx_report *rep, FILE *out)
{
    if (ddx_report_count(rep)) {
        const char *id = ddx_report_id(rep, 0);
        size_t idx;
        const dx_ref *r = NULL;
        if (!ddx_kb_find(rep->kb, id, &idx))
            r = rep->kb->refs[idx];
        fprintf(out, "%s (%s %.2f)", id, ddx_report_level(rep, 0), ddx_report_confidence(rep, 0));
        if (ddx_report_culprit_rank(rep) >= 0)
            fprintf(out, " culprit rank %d", ddx_report_culprit_rank(rep));
        fputs(": ", out);
        dx_clean_write(out, r ? r->title : "", 200);
    } else if (ddx_report_unrecognised(rep)) {
        fputs("unrecognised failure", out);
        if (rep->unrec->rank >= 0)
            fprintf(out, " on rank %d", rep->unrec->rank);
        fputs(": ", out);
        dx_clean_write(out, rep->unrec->text, 200);
    } else {
        fprintf(out, "no known failure in %zu input%s", ddx_report_inputs_read(rep),
                ddx_report_inputs_read(rep) == 1 ? "" : "s");
    }
    if (ddx_report_inputs_unreadable(rep))
        fprintf(out, " (partial: %zu input%s unreadable)", ddx_report_inputs_unreadable(rep),
                ddx_report_inputs_unreadable(rep) == 1 ? "" : "s");
    fputc('\n', out);
    return ferror(out) ? -1 : 0;
}

enum { FMT_TEXT, FMT_JSON, FMT_HTML };

static const char *const formats[] = {
    [FMT_TEXT] = "text", [FMT_JSON] = "json", [FMT_HTML] = "html"};

static int write_report(const ddx_report *rep, int fmt, const cli_args *a, FILE *out, ddx_error *e)
{
    switch (fmt) {
    case FMT_JSON:
        return ddx_report_write_json(rep, out, e);
    case FMT_HTML:
        return ddx_report_write_html(rep, 0, out, e);
    default:
        return ddx_report_write_text(rep, cli_text_flags(a, out) | DDX_TEXT_NO_WARNINGS, out, e);
    }
}

/* --html FILE: the page, written straight to FILE (which may be /dev/stdout or a pipe). */
static int write_html_file(const ddx_report *rep, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return cli_fail("--html %s: cannot create it: %s", path, strerror(errno));
    ddx_error e = {0};
    int rc = ddx_report_write_html(rep, 0, f, &e);
    int err = errno;
    if (fclose(f) && !rc)
        return cli_fail("--html %s: cannot write it: %s", path, strerror(errno));
    if (rc)
        return cli_fail("--html %s: cannot write it: %s", path,
                        e.message[0] ? e.message : strerror(err));
    return 0;
}

int cli_diagnose(cli_args *a)
{
    if (!a->nargs)
        return cli_fail("diagnose: give at least one PATH (a log, a folder, an archive, or - for "
                        "standard input); see 'ddx diagnose --help'");
    int fmt = a->json ? FMT_JSON : FMT_TEXT;
    if (a->format) {
        for (fmt = 0; fmt < (int)DX_ARRAY_LEN(formats) && strcmp(a->format, formats[fmt]); fmt++)
            ;
        if (fmt == (int)DX_ARRAY_LEN(formats))
            return cli_fail("diagnose: --format takes text, json or html, not '%s'", a->format);
        if (a->json && fmt != FMT_JSON)
            return cli_fail("diagnose: --json and --format %s ask for two formats; give one",
                            a->format);
    }
    ddx_kb *kb = NULL;
    ddx_job *job = NULL;
    ddx_report *rep = NULL;
    ddx_error e = {0};
    FILE *out = stdout;
    diag_cli d = {isatty(STDERR_FILENO), 0, now_s(), 0};
    int status = 2;
    size_t missing = 0, added = 0;
    if (a->output && !(out = fopen(a->output, "w")))
        return cli_fail("diagnose: cannot write %s: %s", a->output, strerror(errno));
    if (cli_open_kb(a, &kb))
        goto done;
    if (ddx_job_new(&job, kb, &e)) {
        cli_fail("%s", e.message);
        goto done;
    }
    ddx_job_on_warning(job, on_warning, &d);
    if (d.tty && !a->quiet)
        ddx_job_on_progress(job, on_progress, &d);
    if (a->max_bytes > 0)
        ddx_job_set_max_bytes(job, (unsigned long long)a->max_bytes);
    ddx_job_set_threads(job, a->jobs);
    int stdin_seen = 0;
    for (size_t i = 0; i < a->nargs; i++) {
        if (!strcmp(a->args[i], "-") && stdin_seen++)
            continue;
        /* a path that does not exist is reported and the others are read: a partial report */
        if (ddx_job_add_path(job, a->args[i], &e)) {
            cli_fail("%s", e.message);
            missing++;
            continue;
        }
        added++;
    }
    if (!added) {
        cli_fail("diagnose: none of the %zu path%s given exists; nothing to diagnose", a->nargs,
                 a->nargs == 1 ? "" : "s");
        goto done;
    }
    if (ddx_job_diagnose(job, a->all ? DDX_DIAG_ALL : 0, &rep, &e)) {
        clear_progress(&d);
        cli_fail("%s", e.message);
        goto done;
    }
    clear_progress(&d);
    size_t nread = ddx_report_inputs_read(rep);
    if (!nread) {
        /* nothing to rest a report on: say so, and never "no known failure" with exit 0 */
        cli_fail("diagnose: no input could be read: %s%s",
                 ddx_report_inputs_unreadable(rep) ? "every file given is unreadable"
                 : ddx_report_warning_count(rep)   ? "every file given was skipped (see the "
                                                     "warnings)"
                                                   : "no file in the paths given",
                 missing ? ", and some paths do not exist" : "");
        if (fmt == FMT_JSON && ddx_report_write_json(rep, out, &e) == DDX_OK)
            fflush(out);
        goto done;
    }
    if (a->html && write_html_file(rep, a->html))
        goto done;
    int rc = a->quiet ? (write_summary(rep, out) ? DDX_EIO : DDX_OK)
                      : write_report(rep, fmt, a, out, &e);
    if (rc || fflush(out) || ferror(out)) {
        cli_fail("cannot write the report%s%s: %s", a->output ? " to " : "",
                 a->output ? a->output : "", e.message[0] ? e.message : strerror(errno));
        goto done;
    }
    /* a finding, or a failure the catalogue cannot place: either way the report names one */
    status = ddx_report_count(rep) || ddx_report_unrecognised(rep) ? 1 : 0;
    if (missing || ddx_report_inputs_unreadable(rep)) {
        size_t n = missing + ddx_report_inputs_unreadable(rep);
        fprintf(stderr, "ddx: partial report: %zu input%s could not be read (exit status 3)\n", n,
                n == 1 ? "" : "s");
        status = 3;
    }
    if (a->strict && (status == 3 || ddx_report_warning_count(rep))) {
        fprintf(stderr, "ddx: --strict: %zu warning%s about the inputs (exit status 2)\n",
                ddx_report_warning_count(rep) + missing,
                ddx_report_warning_count(rep) + missing == 1 ? "" : "s");
        status = 2;
    }
done:
    if (out != stdout && fclose(out) && status != 2)
        status = cli_fail("cannot write %s: %s", a->output, strerror(errno));
    ddx_report_free(rep);
    ddx_job_free(job);
    ddx_kb_close(kb);
    return status;
}

static int icontains(const char *hay, const char *needle)
{
    if (!hay)
        return 0;
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return n == 0;
}

int cli_ref_matches(const dx_ref *r, const char *q, const char *category)
{
    if (category && strcmp(category, r->category) != 0)
        return 0;
    return !q || icontains(r->id, q) || icontains(r->title, q) || icontains(r->category, q) ||
           icontains(r->summary, q);
}

size_t cli_refs_json(FILE *out, const ddx_kb *kb, const char *q, const char *category, int full)
{
    ddx_error e = {0};
    size_t shown = 0;
    fputs("[", out);
    for (size_t i = 0; i < kb->nrefs; i++) {
        if (!cli_ref_matches(kb->refs[i], q, category))
            continue;
        fputs(shown++ ? ",\n" : "\n", out);
        ddx_kb_write_ref_json(kb, i, full, out, &e);
    }
    fputs("]\n", out);
    return shown;
}

int cli_refs(cli_args *a)
{
    if (a->nargs > 1)
        return cli_fail("refs: give at most one QUERY; see 'ddx refs --help'");
    const char *q = a->nargs ? a->args[0] : NULL;
    ddx_kb *kb = NULL;
    if (cli_open_kb(a, &kb))
        return 2;
    size_t shown = 0;
    if (a->json && !a->patterns)
        shown = cli_refs_json(stdout, kb, q, a->category, a->full);
    for (size_t i = 0; i < kb->nrefs && !(a->json && !a->patterns); i++) {
        const dx_ref *r = kb->refs[i];
        if (!cli_ref_matches(r, q, a->category))
            continue;
        if (a->patterns) {
            for (size_t k = 0; k < r->nsignals; k++)
                printf("%s\n", r->signals[k].pattern);
        } else
            printf("%-42s %-18s %s\n", r->id, r->category, r->title);
        shown++;
    }
    if (!shown && !(a->json && !a->patterns)) {
        fputs("ddx: no reference matches", stderr);
        if (q) {
            fputc(' ', stderr);
            dx_clean_write(stderr, q, 200);
        }
        fputc('\n', stderr);
    }
    ddx_kb_close(kb);
    return shown ? 0 : 1; /* like grep: 1 when nothing matched */
}

int cli_show(cli_args *a)
{
    if (a->nargs != 1)
        return cli_fail("show: give one reference ID (list them with 'ddx refs')");
    ddx_kb *kb = NULL;
    if (cli_open_kb(a, &kb))
        return 2;
    size_t idx;
    int status = 0;
    ddx_error e = {0};
    if (ddx_kb_find(kb, a->args[0], &idx)) {
        /* help the user find it: suggest references whose id contains the query */
        status = cli_fail("no reference '%s'; try 'ddx refs %s'", a->args[0], a->args[0]);
    } else if (a->json ? ddx_kb_write_ref_json(kb, idx, 1, stdout, &e)
                       : ddx_kb_write_ref_text(kb, idx, cli_color(a), a->verbose, stdout, &e)) {
        status = cli_fail("%s", e.message);
    }
    ddx_kb_close(kb);
    return status;
}

int cli_lint(cli_args *a)
{
    if (a->nargs > 1)
        return cli_fail("lint: give at most one DIR");
    const char *dir = a->nargs ? a->args[0] : "references";
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return cli_fail("lint: %s is not a folder of references (<category>/<id>.md)%s", dir,
                        a->nargs ? "" : "; give the folder to check");
    dx_buf problems = {0};
    dx_lint_stats stats;
    ddx_error e = {0};
    int rc = dx_lint_dir(dir, !a->no_builtin, NULL, &problems, &stats, &e);
    if (problems.n)
        fputs(problems.p, stdout);
    dx_buf_fini(&problems);
    if (rc == DDX_EFORMAT) {
        printf("%s\n", e.message);
        return 1;
    }
    if (rc)
        return cli_fail("%s", e.message);
    printf("%s: %zu references valid, %zu examples rank their reference first\n", dir, stats.refs,
           stats.examples);
    return 0;
}
