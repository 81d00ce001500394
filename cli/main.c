/* main.c -- the ddx command line: diagnose, refs, show, lint, eval.
 *
 * The only code that prints usage or calls exit. One table of options drives getopt_long and
 * every command's --help; each command is a function over the public API (include/ddx.h) plus
 * the internal lint and eval helpers. Exit status: 0 nothing found (or success), 1 a finding
 * (or a failed lint/eval floor), 2 bad usage or an unreadable input.
 */
#include "cli.h"

#include <getopt.h>
#include <unistd.h>

/* ==== options ============================================================================== */

enum {
    CMD_DIAGNOSE = 1 << 0,
    CMD_REFS = 1 << 1,
    CMD_SHOW = 1 << 2,
    CMD_LINT = 1 << 3,
    CMD_EVAL = 1 << 4,
    CMD_ALL = 0x1f
};

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
    OPT_CATEGORY,
    OPT_FULL,
    OPT_PATTERNS,
    OPT_NO_BUILTIN
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
    {"json", no_argument, OPT_JSON, NULL, CMD_DIAGNOSE | CMD_REFS | CMD_SHOW | CMD_EVAL,
     "write JSON (for diagnose: the contract in docs/json.md)"},
    {"all", no_argument, OPT_ALL, NULL, CMD_DIAGNOSE, "also report low-confidence candidates"},
    {"verbose", no_argument, OPT_VERBOSE, NULL, CMD_DIAGNOSE | CMD_SHOW | CMD_EVAL | CMD_LINT,
     "say everything: score terms, facts, timeline (eval: every miss; show: patterns, examples)"},
    {"kb", required_argument, OPT_KB, "DIR", CMD_DIAGNOSE | CMD_REFS | CMD_SHOW | CMD_EVAL,
     "add the references in DIR (<category>/<id>.md) to the built-in ones"},
    {"no-builtin", no_argument, OPT_NO_BUILTIN, NULL,
     CMD_DIAGNOSE | CMD_REFS | CMD_SHOW | CMD_EVAL | CMD_LINT,
     "use only the references given with --kb (lint: only those of DIR, without the built-in "
     "ones)"},
    {"color", required_argument, OPT_COLOR, "WHEN", CMD_DIAGNOSE | CMD_SHOW,
     "auto (default: on a terminal unless NO_COLOR is set), always or never"},
    {"no-color", no_argument, OPT_NO_COLOR, NULL, CMD_DIAGNOSE | CMD_SHOW, "same as --color=never"},
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
     "Read what a failed job left (log files, folders, .gz/.zst/.xz, .tar(.gz)/.zip archives, - for\n"
     "standard input) and say what happened, on which rank first, how sure ddx is and why.\n"
     "Exit status: 0 nothing found, 1 a finding, 2 bad usage or an unreadable input.",
     cli_diagnose},
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
          "  ddx refs nccl                      references about NCCL\n"
          "  ddx show cuda-oom                  one reference\n"
          "\nOther options: --version, --help.\n",
          out);
}

static void usage_command(FILE *out, const command *c)
{
    fprintf(out, "Usage: %s\n\n%s\n", c->usage, c->about);
    print_options(out, c->bit);
}

/* ==== helpers shared by the commands ======================================================= */

int cli_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("ddx: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

int cli_color(const cli_args *a)
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
    return isatty(STDOUT_FILENO);
}

int cli_open_kb(const cli_args *a, ddx_kb **kb)
{
    ddx_error e = {0};
    if (a->no_builtin && !a->kb_dir)
        return cli_fail("--no-builtin needs --kb DIR (the references to use instead)");
    int rc = a->no_builtin ? ddx_kb_open_dir(kb, a->kb_dir, &e) : ddx_kb_open(kb, a->kb_dir, &e);
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

/* ==== main ================================================================================= */

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
                    return 0;
                }
        usage_main(stdout);
        return 0;
    }
    if (!strcmp(name, "--version") || !strcmp(name, "-V") || !strcmp(name, "version")) {
        printf("ddx %s (JSON schema %d)\n", DDX_VERSION, DDX_SCHEMA);
        return 0;
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
    a.min_top1 = a.min_top3 = a.min_neg = a.min_culprit = -1;
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
        case OPT_KB:
            /* one folder only: a second --kb would silently replace the first */
            if (a.kb_dir)
                return cli_fail("%s: --kb given twice ('%s', '%s'); put the references in one "
                                "folder (<category>/<id>.md) and pass it once",
                                cmd->name, a.kb_dir, optarg);
            a.kb_dir = optarg;
            break;
        case OPT_CATEGORY:
            a.category = optarg;
            break;
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
        case OPT_MIN_CULPRIT: {
            double *dst = c == OPT_MIN_TOP1   ? &a.min_top1
                          : c == OPT_MIN_TOP3 ? &a.min_top3
                          : c == OPT_MIN_NEG  ? &a.min_neg
                                              : &a.min_culprit;
            if (parse_pct(optarg, dst))
                return cli_fail("%s takes a percentage between 0 and 100, not '%s'",
                                argv[optind - 1], optarg);
            break;
        }
        case OPT_HELP:
            usage_command(stdout, cmd);
            return 0;
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
    a.args = argv + optind;
    a.nargs = (size_t)(argc - optind);
    return cmd->run(&a);
}
