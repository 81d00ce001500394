/* cli.h -- what the command files of the ddx CLI share. */
#ifndef DDX_CLI_H
#define DDX_CLI_H

#include "dx.h"
#include "kb.h"

typedef struct cli_args {
    int json, all, verbose, full, patterns, no_builtin, markdown;
    int color;               /* -1 auto, 0 never, 1 always */
    const char *kb_dirs[16]; /* --kb, in order */
    size_t nkb;
    int override; /* --override: a --kb reference may replace a built-in one */
    const char *category;
    double min_top1, min_top3, min_neg, min_culprit, min_spoken; /* -1: no floor */
    double max_cal_gap;                                          /* eval: -1 no limit */
    /* watch */
    const char *events, *output, *on_finding, *on_stall;
    double stall_after, stall_factor, stall_min; /* -1: not given */
    long pid;                                    /* -1: not given */
    /* fleet, record, slurm; html also for diagnose (--html FILE) */
    const char *db, *since, *until, *html;
    double alpha; /* -1: not given */
    const char *job_id, *user, *partition, *nodes, *start, *end, *cluster;
    int if_failed, save;
    int strict, quiet;    /* diagnose */
    double max_bytes;     /* diagnose: 0 no limit */
    const char *format;   /* diagnose --format: text, json, html (NULL: text) */
    int port;             /* serve --port, -1: the default */
    int jobs;             /* diagnose --jobs: threads reading the inputs, 0: the default */
    const char *listen;   /* serve --listen, NULL: 127.0.0.1 */
    double max_upload_mb; /* serve --max-upload, -1: the default */
    char **args;
    size_t nargs;
    char **cmd; /* after "--" (watch): the command to run, NULL when none */
    size_t ncmd;
    int argc; /* the whole command line, for running ddx-web with it */
    char **argv;
} cli_args;

int cli_fail(const char *fmt, ...) DX_PRINTF(1, 2);
int cli_color(const cli_args *a);
/* ddx_report_write_text's flags for output to out: colour (as cli_color, for out), verbose. */
int cli_text_flags(const cli_args *a, FILE *out);
int cli_open_kb(const cli_args *a, ddx_kb **kb);

int cli_diagnose(cli_args *a);
int cli_refs(cli_args *a);
int cli_show(cli_args *a);
int cli_lint(cli_args *a);
int cli_eval(cli_args *a);
int cli_watch(cli_args *a);
int cli_record(cli_args *a);
int cli_fleet(cli_args *a);
int cli_slurm(cli_args *a);
int cli_facts(cli_args *a);
/* The web commands: in ddx-web (cli/web_*.c, linked with libmicrohttpd and md4c); the static ddx
 * runs ddx-web for them (cli/launch.c). */
int cli_serve(cli_args *a);
int cli_site(cli_args *a);
/* Does reference r match `ddx refs` filters: QUERY (id, title, category or summary contain it,
 * any case; NULL any) and --category (NULL any)? */
int cli_ref_matches(const dx_ref *r, const char *query, const char *category);
/* The JSON array of `ddx refs --json [--full] [--category C] [QUERY]`; returns how many. */
size_t cli_refs_json(FILE *out, const ddx_kb *kb, const char *query, const char *category,
                     int full);

#endif
