/* commands.c -- ddx diagnose, refs, show and lint. */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <sys/stat.h>

#include "lint.h"

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
        return ddx_report_write_text(rep, cli_text_flags(a, out), out, e);
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
    int status = 2;
    if (cli_open_kb(a, &kb))
        return 2;
    if (ddx_job_new(&job, kb, &e)) {
        cli_fail("%s", e.message);
        goto done;
    }
    ddx_job_set_threads(job, a->jobs);
    int stdin_seen = 0;
    for (size_t i = 0; i < a->nargs; i++) {
        if (!strcmp(a->args[i], "-") && stdin_seen++)
            continue;
        if (ddx_job_add_path(job, a->args[i], &e)) {
            cli_fail("%s", e.message);
            goto done;
        }
    }
    if (ddx_job_diagnose(job, a->all ? DDX_DIAG_ALL : 0, &rep, &e)) {
        cli_fail("%s", e.message);
        goto done;
    }
    if (a->html && write_html_file(rep, a->html))
        goto done;
    int rc = write_report(rep, fmt, a, stdout, &e);
    if (rc || fflush(stdout)) {
        cli_fail("%s", e.message[0] ? e.message : "cannot write the output");
        goto done;
    }
    /* a finding, or a failure the catalogue cannot place: either way the report names one */
    status = ddx_report_count(rep) || ddx_report_unrecognised(rep) ? 1 : 0;
done:
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
    if (!shown && !(a->json && !a->patterns))
        fprintf(stderr, "ddx: no reference matches%s%s\n", q ? " " : "", q ? q : "");
    ddx_kb_close(kb);
    return 0;
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
