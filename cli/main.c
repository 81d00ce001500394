/* main.c -- the ddx command line: diagnose, watch, slurm, record, fleet, refs, show, lint, eval,
 * facts, serve, site.
 *
 * The only code that prints usage or calls exit. One table of options drives getopt_long and
 * every command's --help; each command is a function over the public API (include/ddx.h) plus
 * the internal lint and eval helpers. Exit status: 0 nothing found (or success), 1 a finding
 * (or a failed lint/eval floor), 2 bad usage or an unreadable input.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <unistd.h>

#include "diag.h"

/* ==== options ============================================================================== */

enum {
    CMD_DIAGNOSE = 1 << 0,
    CMD_REFS = 1 << 1,
    CMD_SHOW = 1 << 2,
    CMD_LINT = 1 << 3,
    CMD_EVAL = 1 << 4,
    CMD_WATCH = 1 << 5,
    CMD_RECORD = 1 << 6,
    CMD_FLEET = 1 << 7,
    CMD_SLURM = 1 << 8,
    CMD_FACTS = 1 << 9,
    CMD_SERVE = 1 << 10,
    CMD_SITE = 1 << 11,
    CMD_ALL = 0xfff
};
#define CMD_REPORTS (CMD_DIAGNOSE | CMD_WATCH | CMD_SLURM) /* commands that print a diagnosis */

enum {
    OPT_JSON = 'j',
    OPT_ALL = 'a',
    OPT_VERBOSE = 'v',
    OPT_HELP = 'h',
    OPT_KB = 256,
    OPT_COLOR,
    OPT_NO_COLOR,
    OPT_MIN_TOP1,
    OPT_MIN_TOP3,
    OPT_MIN_NEG,
    OPT_MIN_CULPRIT,
    OPT_MIN_SPOKEN,
    OPT_CATEGORY,
    OPT_FULL,
    OPT_PATTERNS,
    OPT_NO_BUILTIN,
    OPT_OUTPUT = 'o',
    OPT_EVENTS = 300,
    OPT_ON_FINDING,
    OPT_ON_STALL,
    OPT_STALL_AFTER,
    OPT_STALL_FACTOR,
    OPT_STALL_MIN,
    OPT_PID,
    OPT_DB,
    OPT_SINCE,
    OPT_UNTIL,
    OPT_HTML,
    OPT_ALPHA,
    OPT_JOB_ID,
    OPT_USER,
    OPT_PARTITION,
    OPT_NODES,
    OPT_START,
    OPT_END,
    OPT_CLUSTER,
    OPT_IF_FAILED,
    OPT_SAVE,
    OPT_LIST,
    OPT_MARKDOWN,
    OPT_STRICT,
    OPT_OVERRIDE,
    OPT_MAX_CAL_GAP,
    OPT_MAX_BYTES,
    OPT_FORMAT,
    OPT_PORT,
    OPT_LISTEN,
    OPT_MAX_UPLOAD,
    OPT_JOBS,
    OPT_QUIET = 'q'
};

typedef struct cli_opt {
    const char *name;
    int has_arg;
    int key;
    const char *arg;
    unsigned cmds;
    const char *help;
} cli_opt;

static const cli_opt options[] = {
    {"json", no_argument, OPT_JSON, NULL, CMD_REPORTS | CMD_REFS | CMD_SHOW | CMD_EVAL | CMD_FLEET,
     "write JSON (for diagnose: the contract in docs/json.md)"},
    {"format", required_argument, OPT_FORMAT, "FMT", CMD_DIAGNOSE,
     "text (default), json (= --json) or html (one self-contained page) on standard output"},
    {"all", no_argument, OPT_ALL, NULL, CMD_REPORTS, "also report low-confidence candidates"},
    {"jobs", required_argument, OPT_JOBS, "N", CMD_DIAGNOSE,
     "read the inputs with N threads (default: one per processor, at most 8); the report is the "
     "same whatever N"},
    {"verbose", no_argument, OPT_VERBOSE, NULL, CMD_REPORTS | CMD_SHOW | CMD_EVAL | CMD_LINT,
     "say everything: score terms, facts, timeline (eval: every miss; show: patterns, examples)"},
    {"kb", required_argument, OPT_KB, "DIR",
     CMD_REPORTS | CMD_REFS | CMD_SHOW | CMD_EVAL | CMD_SERVE | CMD_SITE,
     "add the references in DIR (<category>/<id>.md, checked as lint checks them) to the "
     "built-in ones; may be given more than once"},
    {"override", no_argument, OPT_OVERRIDE, NULL,
     CMD_REPORTS | CMD_REFS | CMD_SHOW | CMD_EVAL | CMD_SERVE | CMD_SITE,
     "let a --kb reference replace the built-in one with its id"},
    {"no-builtin", no_argument, OPT_NO_BUILTIN, NULL,
     CMD_REPORTS | CMD_REFS | CMD_SHOW | CMD_EVAL | CMD_LINT | CMD_SERVE | CMD_SITE,
     "use only the references given with --kb (lint: only those of DIR, without the built-in "
     "ones)"},
    {"port", required_argument, OPT_PORT, "N", CMD_SERVE,
     "the TCP port (default 8080; 0: any free port, printed at start)"},
    {"listen", required_argument, OPT_LISTEN, "ADDR", CMD_SERVE,
     "the address to listen on (default 127.0.0.1: this machine only)"},
    {"max-upload", required_argument, OPT_MAX_UPLOAD, "MB", CMD_SERVE,
     "the largest upload accepted, in MiB (default 64); read in memory, never written to disk"},
    {"color", required_argument, OPT_COLOR, "WHEN", CMD_REPORTS | CMD_SHOW,
     "auto (default: on a terminal unless NO_COLOR is set), always or never"},
    {"no-color", no_argument, OPT_NO_COLOR, NULL, CMD_REPORTS | CMD_SHOW, "same as --color=never"},
    {"category", required_argument, OPT_CATEGORY, "CAT", CMD_REFS,
     "only references of this category"},
    {"full", no_argument, OPT_FULL, NULL, CMD_REFS, "with --json: every field of each reference"},
    {"patterns", no_argument, OPT_PATTERNS, NULL, CMD_REFS,
     "print every signal pattern, one a line (PCRE2 syntax; for benchmarks and other tools)"},
    {"min-top1", required_argument, OPT_MIN_TOP1, "PCT", CMD_EVAL,
     "fail (exit 1) when top-1 accuracy is below PCT"},
    {"min-top3", required_argument, OPT_MIN_TOP3, "PCT", CMD_EVAL,
     "fail when top-3 accuracy is below PCT"},
    {"min-negatives", required_argument, OPT_MIN_NEG, "PCT", CMD_EVAL,
     "fail when fewer than PCT of negative cases stay clean"},
    {"min-culprit", required_argument, OPT_MIN_CULPRIT, "PCT", CMD_EVAL,
     "fail when culprit-rank accuracy is below PCT"},
    {"min-spoken", required_argument, OPT_MIN_SPOKEN, "PCT", CMD_EVAL,
     "fail when fewer than PCT of failed jobs get a finding or an unrecognised-failure report "
     "(the others are mute)"},
    {"max-calibration-gap", required_argument, OPT_MAX_CAL_GAP, "PTS", CMD_EVAL,
     "fail when, in a confidence bin of 10 findings or more, the share right is more than PTS "
     "points from the mean confidence"},
    {"output", required_argument, OPT_OUTPUT, "FILE", CMD_DIAGNOSE | CMD_WATCH,
     "write the report to FILE (watch: ddx's own lines and the final diagnosis; default: "
     "standard error)"},
    {"quiet", no_argument, OPT_QUIET, NULL, CMD_DIAGNOSE,
     "one line: the top finding, its confidence and culprit rank (exit status unchanged)"},
    {"strict", no_argument, OPT_STRICT, NULL, CMD_DIAGNOSE,
     "any warning about the inputs (unreadable, damaged, skipped, cut) makes the exit status 2"},
    {"max-bytes", required_argument, OPT_MAX_BYTES, "N", CMD_DIAGNOSE,
     "stop reading after N bytes of text in all (K, M, G suffixes); a warning says where"},
    {"events", required_argument, OPT_EVENTS, "FILE", CMD_WATCH,
     "write one JSON event per line to FILE, - for standard output (docs/watch.md)"},
    {"on-finding", required_argument, OPT_ON_FINDING, "CMD", CMD_WATCH,
     "run CMD (sh -c) on each finding; DDX_EVENT holds its JSON, DDX_PIDS the job's pids"},
    {"on-stall", required_argument, OPT_ON_STALL, "CMD", CMD_WATCH,
     "run CMD (sh -c) on each stall; DDX_EVENT, DDX_PIDS, DDX_SILENT_RANKS"},
    {"stall-after", required_argument, OPT_STALL_AFTER, "SEC", CMD_WATCH,
     "a stall is SEC seconds without progress (default: K x the median step time)"},
    {"stall-factor", required_argument, OPT_STALL_FACTOR, "K", CMD_WATCH,
     "without --stall-after: K times the median step time (default 10)"},
    {"stall-min", required_argument, OPT_STALL_MIN, "SEC", CMD_WATCH,
     "without --stall-after: never less than SEC seconds (default 60)"},
    {"pid", required_argument, OPT_PID, "PID", CMD_WATCH,
     "following files: stop when process PID ends (else at Ctrl-C or SIGTERM)"},
    {"db", required_argument, OPT_DB, "FILE", CMD_RECORD | CMD_FLEET | CMD_SLURM,
     "the fleet store (default: $DDX_DB, else ddx-fleet.db in the current folder)"},
    {"since", required_argument, OPT_SINCE, "WHEN", CMD_FLEET,
     "jobs that ended since WHEN: 7d, 12h, 30m, or a date (2024-05-01[T12:00:00Z]); default 7d"},
    {"until", required_argument, OPT_UNTIL, "WHEN", CMD_FLEET,
     "jobs that ended before WHEN (default: now)"},
    {"html", required_argument, OPT_HTML, "FILE", CMD_DIAGNOSE | CMD_FLEET,
     "also write the report as one self-contained HTML page to FILE"},
    {"alpha", required_argument, OPT_ALPHA, "P", CMD_FLEET,
     "family-wise error rate of the bad-host test (default 0.01; docs/fleet.md)"},
    {"job-id", required_argument, OPT_JOB_ID, "ID", CMD_RECORD,
     "the job's id, when the report does not carry it"},
    {"user", required_argument, OPT_USER, "NAME", CMD_RECORD, "the job's user"},
    {"partition", required_argument, OPT_PARTITION, "NAME", CMD_RECORD, "the job's partition"},
    {"nodes", required_argument, OPT_NODES, "LIST", CMD_RECORD,
     "the job's hosts, comma-separated, in task order (node[01-04] ranges are expanded)"},
    {"start", required_argument, OPT_START, "TIME", CMD_RECORD, "when the job started (ISO 8601)"},
    {"end", required_argument, OPT_END, "TIME", CMD_RECORD, "when the job ended (ISO 8601)"},
    {"cluster", required_argument, OPT_CLUSTER, "NAME", CMD_RECORD, "the cluster's name"},
    {"if-failed", no_argument, OPT_IF_FAILED, NULL, CMD_SLURM,
     "do nothing (exit 0) unless the job failed, timed out, ran out of memory or lost a node"},
    {"save", no_argument, OPT_SAVE, NULL, CMD_SLURM,
     "also write the JSON report beside the job's output: ddx-JOBID.json"},
    {"list", no_argument, OPT_LIST, NULL, CMD_FACTS,
     "list every job reading with its facts and patterns, then the culprit votes (the default)"},
    {"markdown", no_argument, OPT_MARKDOWN, NULL, CMD_FACTS,
     "print the job facts as the rows of docs/facts.md's table"},
    {"help", no_argument, OPT_HELP, NULL, CMD_ALL, "show this help"},
};

typedef struct command {
    const char *name;
    unsigned bit;
    const char *usage;
    const char *brief; /* one line for the command list */
    const char *about;
    int (*run)(cli_args *a);
} command;

static const command commands[] = {
    {"diagnose", CMD_DIAGNOSE, "ddx diagnose [OPTIONS] PATH...",
     "say what happened to a job, on which rank first, and how sure ddx is",
     "Read what a failed job left (log files, folders, .gz/.zst/.xz/.bz2/.lz4 streams, .tar and\n"
     ".zip archives, - for standard input) and say what happened, on which rank first, how sure\n"
     "ddx is and why. Warnings about the inputs go to standard error as they happen.\n"
     "Exit status: 0 nothing found, 1 a finding or a failure no reference explains, 2 bad usage,\n"
     "no input could be read, the report could not be written, or a warning under --strict,\n"
     "3 a report was written but some inputs could not be read (a partial report).",
     cli_diagnose},
    {"watch", CMD_WATCH, "ddx watch [OPTIONS] [PATH...] [-- CMD [ARGS...]]",
     "run a job (or follow its logs) and name a failure or a stall as it happens",
     "Run CMD (a launcher: torchrun, srun, deepspeed, ...), passing its standard output and error\n"
     "through unchanged, and/or follow the log files and folders PATH... of a running job. A known\n"
     "failure is named the moment its evidence is complete, a stall (no progress on any rank, or\n"
     "one rank silent while the others progress) when it is seen; the full diagnosis is printed\n"
     "when the job ends. Events as JSON lines: --events (schema in docs/watch.md).\n"
     "Exit status: CMD's (128+N when a signal N ended it); following files only, as diagnose.",
     cli_watch},
    {"slurm", CMD_SLURM, "ddx slurm [OPTIONS] JOBID [PATH...]",
     "diagnose a Slurm job by its id: its outputs, nodes and task layout from scontrol",
     "Find a Slurm job's outputs (StdOut, StdErr, the per-task files of srun --output patterns in\n"
     "its batch script, files named after the job in its working folder, and any PATH given) with\n"
     "scontrol (or sacct), and diagnose them with the node list and task-to-node map as facts.\n"
     "For the scheduler's epilog: --if-failed, --save, --db (contrib/slurm/).\n"
     "Exit status: 0 nothing found (or the job did not fail, with --if-failed), 1 a finding,\n"
     "2 bad usage, an unknown job or an unreadable input.",
     cli_slurm},
    {"record", CMD_RECORD, "ddx record [OPTIONS] REPORT.json...",
     "store diagnoses (JSON reports) in the fleet store",
     "Store each JSON report (ddx diagnose --json, ddx slurm --json) in the fleet store (SQLite,\n"
     "WAL mode: safe for concurrent epilogs on one host). A job already stored is replaced.\n"
     "The job's id, user, nodes and times come from the report's \"job\" object, or the options.",
     cli_record},
    {"fleet", CMD_FLEET, "ddx fleet ingest DIR... | ddx fleet report [OPTIONS]",
     "across jobs: ingest reports, count failure classes, find bad hosts",
     "ingest DIR...  store every JSON report under DIR (idempotent: a report stored before is\n"
     "               skipped, a job whose report changed is updated)\n"
     "report         failure classes by count and trend, the jobs behind each, time lost\n"
     "               (nodes x hours), and the hosts implicated as culprit in more jobs than\n"
     "               chance allows (the test: docs/fleet.md); text, --json, --html FILE.",
     cli_fleet},
    {"refs", CMD_REFS, "ddx refs [OPTIONS] [QUERY]",
     "list the known failures (references), or those matching QUERY",
     "List the references of the knowledge base; QUERY keeps those whose id, title, category or\n"
     "summary contains it (case-insensitive).",
     cli_refs},
    {"show", CMD_SHOW, "ddx show [OPTIONS] ID",
     "show one reference: causes, checks, fix, neighbours, sources",
     "Show one reference: what happens, likely causes, evidence checks, fix, neighbours, sources.",
     cli_show},
    {"lint", CMD_LINT, "ddx lint [OPTIONS] [DIR]",
     "check a folder of references and that their examples rank them first",
     "Check a folder of references (default: ./references): every field, both pattern engines,\n"
     "and that every example ranks its reference first. Exit status 0 when clean, 1 otherwise.",
     cli_lint},
    {"eval", CMD_EVAL, "ddx eval [OPTIONS] DIR...",
     "score ddx on labelled cases: top-1, top-3, clean negatives, culprit rank",
     "Score a labelled corpus: each case is a folder with the job's files and a case.json\n"
     "(expected ids, culprit rank). Reports top-1, top-3, clean negatives and culprit accuracy,\n"
     "per category. Exit status 1 when a --min-* floor is not met.",
     cli_eval},
    {"facts", CMD_FACTS, "ddx facts [--list | --markdown]",
     "list the job model's readings, the facts they publish and the culprit votes",
     "List the job model's readings (src/job/registry.c) in the order they run, each with the\n"
     "facts it publishes and its patterns (with their sources), then the culprit policy: each\n"
     "vote's source, its precedence and the reason a report gives when it decides.",
     cli_facts},
    {"serve", CMD_SERVE, "ddx serve [OPTIONS]",
     "browse and search the catalogue, and diagnose uploaded logs, in a browser",
     "Serve the catalogue as a local website: references by category with search, each\n"
     "reference's page, a page to paste or upload a log (or an archive) and see the HTML report,\n"
     "and the CLI's JSON under /api/ (refs, refs/ID, diagnose). Listens on 127.0.0.1 unless\n"
     "--listen names another address. Uploads are read in memory, size-capped, never stored.\n"
     "Stop it with Ctrl-C.",
     cli_serve},
    {"site", CMD_SITE, "ddx site [OPTIONS] DIR",
     "write the catalogue as static pages to DIR (for an internal wiki or GitHub Pages)",
     "Write the catalogue as static HTML pages to DIR (created if missing): DIR/index.html with\n"
     "search, and DIR/ref/ID.html for each reference, with the same look as 'ddx serve'.",
     cli_site},
};

static void print_options(FILE *out, unsigned bit)
{
    fputs("\nOptions:\n", out);
    for (size_t i = 0; i < DX_ARRAY_LEN(options); i++) {
        const cli_opt *o = &options[i];
        if (!(o->cmds & bit))
            continue;
        char left[64];
        if (o->key < 256)
            snprintf(left, sizeof left, "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        else
            snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "",
                     o->arg ? o->arg : "");
        fprintf(out, "  %-24s %s\n", left, o->help);
    }
}

static void usage_main(FILE *out)
{
    fprintf(out,
            "ddx %s -- differential diagnosis of failed distributed training jobs\n\n"
            "Usage: ddx COMMAND [OPTIONS] [ARGS]\n\nCommands:\n",
            DDX_VERSION);
    for (size_t i = 0; i < DX_ARRAY_LEN(commands); i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].brief);
    fputs("\nRun 'ddx COMMAND --help' for a command's options. Examples:\n"
          "  ddx diagnose logs/                 a job's folder of logs\n"
          "  ddx diagnose --json job.tar.gz     the JSON report of an archive\n"
          "  kubectl logs pod | ddx diagnose -  standard input\n"
          "  ddx watch -- torchrun train.py     a live job: failures and stalls as they happen\n"
          "  ddx slurm 1234567                  a Slurm job by its id\n"
          "  ddx fleet report --since 7d        failure classes and bad hosts across jobs\n"
          "  ddx refs nccl                      references about NCCL\n"
          "  ddx show cuda-oom                  one reference\n"
          "  ddx diagnose --html r.html logs/   also write the report as one HTML page\n"
          "  ddx serve                          the catalogue at http://127.0.0.1:8080/\n"
          "\nOther options: --version, --help.\n",
          out);
}

static void usage_command(FILE *out, const command *c)
{
    fprintf(out, "Usage: %s\n\n%s\n", c->usage, c->about);
    print_options(out, c->bit);
}

/* ==== the man page and shell completions, from the tables above ============================ */

/* Text for roff: a leading '.' or '\'' escaped, backslashes doubled. */
static void roff(FILE *out, const char *s)
{
    for (const char *p = s; *p; p++) {
        if ((p == s || p[-1] == '\n') && (*p == '.' || *p == '\''))
            fputs("\\&", out);
        if (*p == '\\')
            fputs("\\e", out);
        else if (*p == '-')
            fputs("\\-", out);
        else
            fputc(*p, out);
    }
}

static void print_man(FILE *out)
{
    fprintf(out, ".TH DDX 1 \"\" \"ddx %s\" \"User Commands\"\n", DDX_VERSION);
    fputs(".SH NAME\nddx \\- differential diagnosis of failed distributed training jobs\n"
          ".SH SYNOPSIS\n.B ddx\n.I COMMAND\n[\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n"
          ".SH DESCRIPTION\nddx reads what a failed or stuck distributed training job left "
          "behind (per-rank logs, configs, environment dumps, flight-recorder dumps; plain, "
          "compressed or archived) and says what happened, on which rank first, how sure it is "
          "and why, what to check and what to change.\n.SH COMMANDS\n",
          out);
    for (size_t i = 0; i < DX_ARRAY_LEN(commands); i++) {
        const command *c = &commands[i];
        fputs(".SS ", out);
        roff(out, c->usage);
        fputs("\n", out);
        roff(out, c->about);
        fputs("\n", out);
        for (size_t k = 0; k < DX_ARRAY_LEN(options); k++) {
            const cli_opt *o = &options[k];
            if (!(o->cmds & c->bit))
                continue;
            fputs(".TP\n", out);
            if (o->key < 256)
                fprintf(out, "\\fB\\-%c\\fR, ", o->key);
            fputs("\\fB\\-\\-", out);
            roff(out, o->name);
            fputs("\\fR", out);
            if (o->arg) {
                fputs(" \\fI", out);
                roff(out, o->arg);
                fputs("\\fR", out);
            }
            fputs("\n", out);
            roff(out, o->help);
            fputs("\n", out);
        }
    }
    fputs(".SH EXIT STATUS\nFor \\fBdiagnose\\fR: 0 nothing found; 1 a finding, or a failure no "
          "reference explains; 2 bad usage, no input could be read, a report that could not be "
          "written, or a warning under \\fB\\-\\-strict\\fR; 3 a report was written but some "
          "inputs could not be read (a partial report). \\fBrefs\\fR exits 1 when no reference "
          "matches, \\fBlint\\fR and \\fBeval\\fR 1 when a check or a floor fails.\n"
          ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\nno colour, even on a terminal\n.TP\n.B DDX_DB\n"
          "the fleet store of \\fBrecord\\fR, \\fBfleet\\fR and \\fBslurm\\fR\n"
          ".SH SEE ALSO\nThe JSON contract and the guides: docs/ in the source.\n",
          out);
}

/* Completion scripts: the commands, and each command's options. */
static void print_completion(FILE *out, const char *shell)
{
    int zsh = !strcmp(shell, "zsh");
    if (zsh)
        fputs("#compdef ddx\n", out);
    fputs("# ddx completion (generated by 'ddx --completion'; do not edit)\n_ddx() {\n", out);
    if (zsh)
        fputs("    local cmd=${words[2]} cur=${words[CURRENT]} opts\n"
              "    if (( CURRENT == 2 )); then compadd -- ",
              out);
    else
        fputs("    local cmd=${COMP_WORDS[1]} cur=${COMP_WORDS[COMP_CWORD]} opts\n"
              "    if [ \"$COMP_CWORD\" -eq 1 ]; then COMPREPLY=($(compgen -W \"",
              out);
    for (size_t i = 0; i < DX_ARRAY_LEN(commands); i++)
        fprintf(out, "%s ", commands[i].name);
    fputs(zsh ? "--help --version; return; fi\n" : "--help --version\" -- \"$cur\")); return; fi\n",
          out);
    fputs("    case $cmd in\n", out);
    for (size_t i = 0; i < DX_ARRAY_LEN(commands); i++) {
        fprintf(out, "    %s) opts=\"", commands[i].name);
        for (size_t k = 0; k < DX_ARRAY_LEN(options); k++)
            if (options[k].cmds & commands[i].bit)
                fprintf(out, "--%s ", options[k].name);
        fputs("\";;\n", out);
    }
    fputs("    esac\n", out);
    if (zsh)
        fputs("    if [[ $cur == -* ]]; then compadd -- ${=opts}; else _files; fi\n}\n"
              "compdef _ddx ddx\n",
              out);
    else
        fputs("    case $cur in\n    -*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"));;\n"
              "    *) COMPREPLY=($(compgen -f -- \"$cur\"));;\n    esac\n}\n"
              "complete -o filenames -F _ddx ddx\n",
              out);
}

/* ==== helpers shared by the commands ======================================================= */

/* Messages name inputs: they go out cleaned, like every name from an input on a terminal. */
int cli_fail(const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fputs("ddx: ", stderr);
    dx_clean_write(stderr, msg, sizeof msg);
    fputc('\n', stderr);
    return 2;
}

/* Colour for output on fd: --color always/never, else a terminal without NO_COLOR. */
static int color_on(const cli_args *a, int fd)
{
    if (a->color == 1)
        return 1;
    if (a->color == 0)
        return 0;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return 0;
    const char *term = getenv("TERM");
    if (term && !strcmp(term, "dumb"))
        return 0;
    return isatty(fd);
}

int cli_color(const cli_args *a) { return color_on(a, STDOUT_FILENO); }

int cli_text_flags(const cli_args *a, FILE *out)
{
    return (color_on(a, fileno(out)) ? DDX_TEXT_COLOR : 0) | (a->verbose ? DDX_TEXT_VERBOSE : 0);
}

int cli_open_kb(const cli_args *a, ddx_kb **kb)
{
    ddx_error e = {0};
    if (a->no_builtin && !a->nkb)
        return cli_fail("--no-builtin needs --kb DIR (the references to use instead)");
    int flags = (a->no_builtin ? DDX_KB_NO_BUILTIN : 0) | (a->override ? DDX_KB_OVERRIDE : 0);
    int rc = ddx_kb_open_dirs(kb, a->kb_dirs, a->nkb, flags, &e);
    if (rc != DDX_OK)
        return cli_fail("%s", e.message);
    return 0;
}

static int parse_pct(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || (*end && strcmp(end, "%") != 0) || v < 0 || v > 100)
        return -1;
    *out = v;
    return 0;
}

/* The long name of the option with this key, for messages. */
static const char *opt_name(int key)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(options); i++)
        if (options[i].key == key)
            return options[i].name;
    return "?";
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v > 0) || v > 1e7)
        return -1;
    *out = v;
    return 0;
}

/* ==== main ================================================================================= */

/* Everything written to standard output must reach it: a full disk or a closed pipe is an error
 * (exit 2) whatever the command found. */
static int finish(int status)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        if (status != 2) /* (a command that failed to write said so already) */
            cli_fail("cannot write the output: %s", errno ? strerror(errno) : "write error");
        return 2;
    }
    return status;
}

static int parse_bytes(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    static const struct {
        char c;
        double mul;
    } units[] = {{'K', 1024.0}, {'M', 1048576.0}, {'G', 1073741824.0}};
    for (size_t i = 0; *end && i < DX_ARRAY_LEN(units); i++)
        if ((end[0] == units[i].c || end[0] == units[i].c + 32) && !end[1]) {
            v *= units[i].mul;
            end++;
        }
    if (end == s || *end || !(v >= 1) || v > 1e18)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
        if (argc > 2)
            for (size_t i = 0; i < DX_ARRAY_LEN(commands); i++)
                if (!strcmp(argv[2], commands[i].name)) {
                    usage_command(stdout, &commands[i]);
                    return finish(0);
                }
        usage_main(stdout);
        return finish(0);
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("ddx %s (JSON schema %d)\n", DDX_VERSION, DDX_SCHEMA);
        return finish(0);
    }
    if (!strcmp(name, "--man")) {
        print_man(stdout);
        return finish(0);
    }
    if (!strcmp(name, "--completion")) {
        if (argc != 3 || (strcmp(argv[2], "bash") && strcmp(argv[2], "zsh")))
            return cli_fail("--completion takes bash or zsh");
        print_completion(stdout, argv[2]);
        return finish(0);
    }
    const command *cmd = NULL;
    for (size_t i = 0; i < DX_ARRAY_LEN(commands); i++)
        if (!strcmp(name, commands[i].name))
            cmd = &commands[i];
    if (!cmd) {
        cli_fail("unknown command '%s'", name);
        usage_main(stderr);
        return 2;
    }

    /* watch: what follows "--" is the command to run, untouched by option parsing */
    char **run_cmd = NULL;
    size_t nrun = 0;
    if (cmd->bit == CMD_WATCH)
        for (int i = 2; i < argc; i++)
            if (!strcmp(argv[i], "--")) {
                run_cmd = argv + i + 1;
                nrun = (size_t)(argc - i - 1);
                argc = i;
                break;
            }

    struct option lopts[DX_ARRAY_LEN(options) + 1];
    char sopts[64];
    size_t ns = 0, nl = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(options); i++) {
        if (!(options[i].cmds & cmd->bit))
            continue;
        lopts[nl++] = (struct option){options[i].name, options[i].has_arg, NULL, options[i].key};
        if (options[i].key < 256 && ns + 3 < sizeof sopts) {
            sopts[ns++] = (char)options[i].key;
            if (options[i].has_arg)
                sopts[ns++] = ':';
        }
    }
    lopts[nl] = (struct option){0, 0, 0, 0};
    sopts[ns] = '\0';

    cli_args a = {0};
    a.color = -1;
    a.min_top1 = a.min_top3 = a.min_neg = a.min_culprit = a.min_spoken = a.max_cal_gap = -1;
    a.stall_after = a.stall_factor = a.stall_min = a.alpha = -1;
    a.pid = -1;
    a.cmd = run_cmd;
    a.ncmd = nrun;
    a.port = -1;
    a.max_upload_mb = -1;
    int c;
    optind = 2;
    opterr = 0;
    while ((c = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
        switch (c) {
        case OPT_JSON:
            a.json = 1;
            break;
        case OPT_ALL:
            a.all = 1;
            break;
        case OPT_VERBOSE:
            a.verbose = 1;
            break;
        case OPT_FULL:
            a.full = 1;
            break;
        case OPT_PATTERNS:
            a.patterns = 1;
            break;
        case OPT_NO_BUILTIN:
            a.no_builtin = 1;
            break;
        case OPT_LIST:
            break; /* the default */
        case OPT_MARKDOWN:
            a.markdown = 1;
            break;
        case OPT_KB:
            if (a.nkb == DX_ARRAY_LEN(a.kb_dirs))
                return cli_fail("%s: --kb given more than %zu times; put the references in "
                                "fewer folders",
                                cmd->name, DX_ARRAY_LEN(a.kb_dirs));
            a.kb_dirs[a.nkb++] = optarg;
            break;
        case OPT_OVERRIDE:
            a.override = 1;
            break;
        case OPT_CATEGORY:
            a.category = optarg;
            break;
        case OPT_FORMAT:
            a.format = optarg;
            break;
        case OPT_LISTEN:
            a.listen = optarg;
            break;
        case OPT_PORT: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 0 || v > 65535)
                return cli_fail("--port takes a number from 0 to 65535, not '%s'", optarg);
            a.port = (int)v;
            break;
        }
        case OPT_MAX_UPLOAD: {
            char *end;
            double v = strtod(optarg, &end);
            if (end == optarg || *end || !(v > 0) || v > 4096)
                return cli_fail("--max-upload takes a size in MiB from 0 to 4096, not '%s'",
                                optarg);
            a.max_upload_mb = v;
            break;
        }
        case OPT_NO_COLOR:
            a.color = 0;
            break;
        case OPT_COLOR:
            if (!strcmp(optarg, "always"))
                a.color = 1;
            else if (!strcmp(optarg, "never"))
                a.color = 0;
            else if (!strcmp(optarg, "auto"))
                a.color = -1;
            else
                return cli_fail("--color takes auto, always or never, not '%s'", optarg);
            break;
        case OPT_MIN_TOP1:
        case OPT_MIN_TOP3:
        case OPT_MIN_NEG:
        case OPT_MIN_CULPRIT:
        case OPT_MIN_SPOKEN:
        case OPT_MAX_CAL_GAP: {
            double *dst = c == OPT_MIN_TOP1      ? &a.min_top1
                          : c == OPT_MIN_TOP3    ? &a.min_top3
                          : c == OPT_MIN_NEG     ? &a.min_neg
                          : c == OPT_MIN_SPOKEN  ? &a.min_spoken
                          : c == OPT_MAX_CAL_GAP ? &a.max_cal_gap
                                                 : &a.min_culprit;
            if (parse_pct(optarg, dst))
                return cli_fail("%s takes a percentage between 0 and 100, not '%s'",
                                argv[optind - 1], optarg);
            break;
        }
        case OPT_OUTPUT:
            a.output = optarg;
            break;
        case OPT_EVENTS:
            a.events = optarg;
            break;
        case OPT_ON_FINDING:
            a.on_finding = optarg;
            break;
        case OPT_ON_STALL:
            a.on_stall = optarg;
            break;
        case OPT_STALL_AFTER:
        case OPT_STALL_FACTOR:
        case OPT_STALL_MIN: {
            double *dst = c == OPT_STALL_AFTER    ? &a.stall_after
                          : c == OPT_STALL_FACTOR ? &a.stall_factor
                                                  : &a.stall_min;
            if (parse_seconds(optarg, dst))
                return cli_fail("--%s takes a positive number, not '%s'", opt_name(c), optarg);
            break;
        }
        case OPT_ALPHA: {
            char *end;
            a.alpha = strtod(optarg, &end);
            if (end == optarg || *end || !(a.alpha > 0 && a.alpha < 1))
                return cli_fail("--alpha takes a probability between 0 and 1, not '%s'", optarg);
            break;
        }
        case OPT_PID: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v <= 0)
                return cli_fail("--pid takes a process id, not '%s'", optarg);
            a.pid = v;
            break;
        }
        case OPT_DB:
            a.db = optarg;
            break;
        case OPT_SINCE:
            a.since = optarg;
            break;
        case OPT_UNTIL:
            a.until = optarg;
            break;
        case OPT_HTML:
            a.html = optarg;
            break;
        case OPT_JOBS: {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (end == optarg || *end || v < 1 || v > 16)
                return cli_fail("--jobs takes a number of threads from 1 to 16, not '%s'", optarg);
            a.jobs = (int)v;
            break;
        }
        case OPT_JOB_ID:
            a.job_id = optarg;
            break;
        case OPT_USER:
            a.user = optarg;
            break;
        case OPT_PARTITION:
            a.partition = optarg;
            break;
        case OPT_NODES:
            a.nodes = optarg;
            break;
        case OPT_START:
            a.start = optarg;
            break;
        case OPT_END:
            a.end = optarg;
            break;
        case OPT_CLUSTER:
            a.cluster = optarg;
            break;
        case OPT_IF_FAILED:
            a.if_failed = 1;
            break;
        case OPT_SAVE:
            a.save = 1;
            break;
        case OPT_STRICT:
            a.strict = 1;
            break;
        case OPT_QUIET:
            a.quiet = 1;
            break;
        case OPT_MAX_BYTES:
            if (parse_bytes(optarg, &a.max_bytes))
                return cli_fail("--max-bytes takes a size in bytes (K, M or G after it), not '%s'",
                                optarg);
            break;
        case OPT_HELP:
            usage_command(stdout, cmd);
            return finish(0);
        default:
            if (optopt)
                cli_fail("%s: unknown option '-%c' (see 'ddx %s --help')", cmd->name, optopt,
                         cmd->name);
            else
                cli_fail("%s: unknown or incomplete option '%s' (see 'ddx %s --help')", cmd->name,
                         argv[optind - 1], cmd->name);
            return 2;
        }
    }
    a.argc = argc;
    a.argv = argv;
    a.args = argv + optind;
    a.nargs = (size_t)(argc - optind);
    return finish(cmd->run(&a));
}
