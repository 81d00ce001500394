/* lint.c -- checking a folder of references the way the build does: every file parses, every
 * rule of docs/reference-format.md holds, and every example ranks its reference first.
 *
 * Used by `ddx lint [DIR]` and by the generator (tools/gen.c), so a reference that would fail
 * lint can never be built into ddx. The field rules live beside the parser (kb.c); the rules
 * here need more than one field or more than the file: examples ranking first, Vectorscan
 * agreeing with PCRE2, check commands that parse as shell (a small POSIX shell scanner, so
 * lint does not depend on which shell a machine has), real examples that are no documentation
 * samples, ids that collide with a built-in reference, facts nothing produces and the release
 * ranges written in signals' sources. tests/data/lint holds a fixture for each rule
 * (tests/lint_rules.sh).
 */
#include "lint.h"

#include "diag.h"
#include "facts.h"
#include "input.h"
#include "match.h"

/* whether r is one of the references of the folder being linted (not a built-in one) */
static int is_user_ref(const ddx_kb *kb, const dx_ref *r)
{
    return r >= kb->user.refs && r < kb->user.refs + kb->user.n;
}

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
        if (only_user && !is_user_ref(kb, r))
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

/* ==== check commands parse as shell ======================================================== */

/* A check's `command:` is run by hand, so it has to be a shell command as written: a Python
 * expression, prose in parentheses or a `<placeholder>` (a redirection) is not. The scanner
 * covers what check commands use: words with '...', "...", \x, $(...), $((...)), ${...} and
 * `...`; | || && ; & and redirections; ( ) subshells; if/then/elif/else/fi, for/while/until
 * with do/done, { } groups; # comments. `case` is refused (no check needs it). Two things the
 * shell itself accepts are refused too: a <placeholder> in angle brackets (the shell reads a
 * file from one name and truncates another), and a sentence (a command that starts with a word
 * of prose_words: "compare the start times ..." runs a program called compare). */
enum { SH_IF = 1, SH_THEN, SH_ELSE, SH_LOOP, SH_FOR, SH_BODY, SH_BRACE };

typedef struct sh_scan {
    const char *p;
    int in_backquote; /* inside `...`, where a backquote ends the list */
    char why[120];
} sh_scan;

static int sh_fail(sh_scan *sc, const char *fmt, ...) DX_PRINTF(2, 3);
static int sh_fail(sh_scan *sc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sc->why, sizeof sc->why, fmt, ap);
    va_end(ap);
    return -1;
}

static int sh_meta(char c)
{
    return c == '\0' || c == ' ' || c == '\t' || c == '\n' || c == '|' || c == '&' || c == ';' ||
           c == '(' || c == ')' || c == '<' || c == '>';
}

static int sh_list(sh_scan *sc, char end);

/* after "$(", "(" or "`": a nested command list up to its closing character */
static int sh_nested(sh_scan *sc, char end)
{
    sc->in_backquote += end == '`';
    int rc = sh_list(sc, end);
    sc->in_backquote -= end == '`';
    if (rc)
        return -1;
    sc->p++; /* the closing character */
    return 0;
}

/* the rest of "${...}" or "$((...))": balanced brackets */
static int sh_balanced(sh_scan *sc, char open, char close, const char *what)
{
    int depth = 1;
    while (*sc->p && depth) {
        if (*sc->p == '\\' && sc->p[1])
            sc->p++;
        else if (*sc->p == open)
            depth++;
        else if (*sc->p == close)
            depth--;
        sc->p++;
    }
    return depth ? sh_fail(sc, "an unterminated %s", what) : 0;
}

/* a '$' expansion at sc->p */
static int sh_dollar(sh_scan *sc)
{
    sc->p++;
    if (sc->p[0] == '(' && sc->p[1] == '(') {
        sc->p += 2;
        if (sh_balanced(sc, '(', ')', "$(( arithmetic"))
            return -1;
        if (*sc->p != ')')
            return sh_fail(sc, "an unterminated $(( arithmetic");
        sc->p++;
        return 0;
    }
    if (*sc->p == '(') {
        sc->p++;
        return sh_nested(sc, ')');
    }
    if (*sc->p == '{') {
        sc->p++;
        return sh_balanced(sc, '{', '}', "${");
    }
    return 0;
}

/* one word at sc->p, which is no metacharacter */
static int sh_word(sh_scan *sc)
{
    while (!sh_meta(*sc->p) && !(*sc->p == '`' && sc->in_backquote)) {
        char c = *sc->p;
        if (c == '\\') {
            sc->p += sc->p[1] ? 2 : 1;
        } else if (c == '\'') {
            const char *q = strchr(sc->p + 1, '\'');
            if (!q)
                return sh_fail(sc, "an unterminated single quote");
            sc->p = q + 1;
        } else if (c == '"') {
            sc->p++;
            while (*sc->p && *sc->p != '"') {
                if (*sc->p == '\\' && sc->p[1])
                    sc->p += 2;
                else if (*sc->p == '$') {
                    if (sh_dollar(sc))
                        return -1;
                } else if (*sc->p == '`') {
                    sc->p++;
                    if (sh_nested(sc, '`'))
                        return -1;
                } else
                    sc->p++;
            }
            if (!*sc->p)
                return sh_fail(sc, "an unterminated double quote");
            sc->p++;
        } else if (c == '$') {
            if (sh_dollar(sc))
                return -1;
        } else if (c == '`') {
            sc->p++;
            if (sh_nested(sc, '`'))
                return -1;
        } else
            sc->p++;
    }
    return 0;
}

static int sh_is(const char *w, size_t n, const char *kw)
{
    return strlen(kw) == n && !memcmp(w, kw, n);
}

/* the reserved words that continue or close a compound command: the state it needs on top of
 * the stack, and the state it leaves there (0: it closes the compound) */
static const struct {
    const char *word;
    int from, to;
} sh_keywords[] = {
    {"then", SH_IF, SH_THEN}, {"elif", SH_THEN, SH_IF}, {"else", SH_THEN, SH_ELSE},
    {"fi", SH_THEN, 0},       {"fi", SH_ELSE, 0},       {"do", SH_LOOP, SH_BODY},
    {"do", SH_FOR, SH_BODY},  {"done", SH_BODY, 0},     {"}", SH_BRACE, 0},
};

/* the reserved words that open a compound command */
static const struct {
    const char *word;
    int state;
} sh_openers[] = {
    {"if", SH_IF}, {"while", SH_LOOP}, {"until", SH_LOOP}, {"for", SH_FOR}, {"{", SH_BRACE}};

/* words that start a sentence or a line of Python, never a check command (the second word,
 * when given, must follow: `read -r` is the shell's read, `read the traceback` is prose) */
static const struct {
    const char *word, *next;
} prose_words[] = {
    {"compare", NULL}, {"rerun", NULL}, {"look", NULL},  {"verify", NULL}, {"inspect", NULL},
    {"see", NULL},     {"note", NULL},  {"print", NULL}, {"import", NULL}, {"from", NULL},
    {"check", NULL},   {"read", "the"}, {"run", "the"},  {"open", "the"},  {"count", "the"},
};

/* A command list up to `end` ('\0' for the whole command, ')' or '`' when nested); leaves sc->p
 * on the end character. */
static int sh_list(sh_scan *sc, char end)
{
    int stack[32], depth = 0;
    int words = 0;      /* words of the current simple command (1 after a closed compound) */
    int need = 0;       /* the last operator or keyword needs a command after it */
    int redirect = 0;   /* a redirection waits for its file */
    int for_header = 0; /* reading "for NAME in WORDS" up to its ';' */
    char op[8] = "";    /* that operator or keyword, for the message */
    int prose = 0;      /* 1 + the prose_words entry the command's first word is */
    for (;;) {
        char c = *sc->p;
        if (c == ' ' || c == '\t') {
            sc->p++;
            continue;
        }
        if (c == '#') { /* between words: a comment to the end of the line */
            while (*sc->p && *sc->p != '\n')
                sc->p++;
            continue;
        }
        if (c == '\0' || (end && c == end)) {
            if (c != end)
                return sh_fail(sc, end == '`' ? "an unterminated backquote"
                                              : "an unterminated $( or (");
            if (redirect)
                return sh_fail(sc, "the redirection '%s' has no file after it", op);
            if (need)
                return sh_fail(sc, "it ends with '%s'", op);
            if (depth || for_header)
                return sh_fail(sc, "an if, for, while or { is not closed (fi, done, })");
            return 0;
        }
        if (c == '<' || c == '>') {
            const char *s = sc->p++;
            if (redirect)
                return sh_fail(sc,
                               "a redirection right after the redirection '%s' (a "
                               "<placeholder>?)",
                               op);
            if (*sc->p == c || *sc->p == '&' || (c == '<' && *sc->p == '>') ||
                (c == '>' && *sc->p == '|'))
                sc->p++;
            if (c == '<' && s[1] == '<' && *sc->p == '-')
                sc->p++;
            snprintf(op, sizeof op, "%.*s", (int)(sc->p - s), s);
            redirect = 1;
            continue;
        }
        if (c == '\n') { /* ends a command; blank lines and a line after | or && are fine */
            sc->p++;
            if (redirect)
                return sh_fail(sc, "the redirection '%s' has no file after it", op);
            if (for_header) {
                for_header = 0;
                need = 1;
                snprintf(op, sizeof op, "for");
            }
            words = 0;
            continue;
        }
        if (c == '|' || c == '&' || c == ';') {
            const char *s = sc->p++;
            if (*sc->p == c)
                sc->p++;
            int n = (int)(sc->p - s);
            if (redirect)
                return sh_fail(sc, "the redirection '%s' has no file after it", op);
            if (c == ';' && n == 2)
                return sh_fail(sc, "';;' outside a case");
            if (for_header && c != '|' && n == 1) {
                for_header = 0; /* "for x in a b;": do must follow */
                words = 0;
                need = 1;
                snprintf(op, sizeof op, "for");
                continue;
            }
            if (!words)
                return sh_fail(sc, "'%.*s' with no command before it", n, s);
            words = 0;
            need = c == '|' || n == 2; /* | || && need a command after them; ; and & do not */
            snprintf(op, sizeof op, "%.*s", n, s);
            continue;
        }
        if (c == '(') {
            if (words || redirect || for_header)
                return sh_fail(sc, "'(' after a word: Python code, a function call or prose "
                                   "in parentheses is no shell command");
            sc->p++;
            if (sh_nested(sc, ')'))
                return -1;
            words = 1;
            need = 0;
            continue;
        }
        if (c == ')')
            return sh_fail(sc, "an unmatched ')'");
        const char *w = sc->p;
        if (sh_word(sc))
            return -1;
        size_t n = (size_t)(sc->p - w);
        if (redirect) {
            redirect = 0;
            words += !words; /* "> file cmd": the redirection starts the command */
            if (op[0] == '<' && !op[1] && *sc->p == '>')
                return sh_fail(sc,
                               "'<%.*s>' is a placeholder the shell reads as two "
                               "redirections; write it as a NAME",
                               (int)n, w);
            continue;
        }
        if (for_header) {
            if (++words == 2 && sh_is(w, n, "do")) { /* "for x do" */
                for_header = 0;
                stack[depth - 1] = SH_BODY;
                words = 0;
                need = 1;
                snprintf(op, sizeof op, "do");
            }
            continue;
        }
        if (words++) {
            if (words == 2 && prose) {
                size_t k = (size_t)(prose - 1);
                if (sh_is(w, n, prose_words[k].next))
                    return sh_fail(sc, "it reads as a sentence ('%s %s ...'), not a command",
                                   prose_words[k].word, prose_words[k].next);
            }
            continue;
        }
        prose = 0;
        for (size_t k = 0; k < DX_ARRAY_LEN(prose_words); k++)
            if (sh_is(w, n, prose_words[k].word)) {
                if (!prose_words[k].next)
                    return sh_fail(sc,
                                   "it starts with '%s', a sentence or Python rather than "
                                   "a command",
                                   prose_words[k].word);
                prose = (int)k + 1;
            }
        /* the first word of a command: a reserved word? */
        int after = need; /* right after an operator or keyword that needs a command */
        need = 0;
        int top = depth ? stack[depth - 1] : 0, known = 0;
        for (size_t k = 0; k < DX_ARRAY_LEN(sh_openers); k++)
            if (sh_is(w, n, sh_openers[k].word)) {
                if (depth == (int)DX_ARRAY_LEN(stack))
                    return sh_fail(sc, "nested too deeply");
                stack[depth++] = sh_openers[k].state;
                for_header = sh_openers[k].state == SH_FOR;
                words = 0;
                need = !for_header;
                snprintf(op, sizeof op, "%s", sh_openers[k].word);
                known = 1;
            }
        for (size_t k = 0; k < DX_ARRAY_LEN(sh_keywords) && !known; k++) {
            if (!sh_is(w, n, sh_keywords[k].word) || top != sh_keywords[k].from ||
                (after && !(top == SH_FOR && !strcmp(op, "for"))))
                continue;
            known = 1;
            if (sh_keywords[k].to) {
                stack[depth - 1] = sh_keywords[k].to;
                words = 0;
                need = 1;
            } else
                depth--; /* a closed compound is a whole command: words stays 1 */
            snprintf(op, sizeof op, "%s", sh_keywords[k].word);
        }
        if (known)
            continue;
        for (size_t k = 0; k < DX_ARRAY_LEN(sh_keywords); k++)
            if (sh_is(w, n, sh_keywords[k].word))
                return sh_fail(sc, "'%s' where the shell does not expect it", sh_keywords[k].word);
        if (sh_is(w, n, "case"))
            return sh_fail(sc, "'case' (not supported in a check command)");
        if (sh_is(w, n, "!"))
            words = 0;
    }
}

int dx_lint_shell(const char *cmd, char *why, size_t cap)
{
    sh_scan sc = {cmd, 0, ""};
    int rc = sh_list(&sc, '\0');
    if (why && cap)
        snprintf(why, cap, "%s", rc ? sc.why : "");
    return rc;
}

static int check_examples(const ddx_kb *kb, const char *dir, int only_user, dx_buf *problems,
                          size_t *nchecked)
{
    int bad = 0;
    for (size_t i = 0; i < kb->nrefs; i++) {
        const dx_ref *r = kb->refs[i];
        if (only_user && !is_user_ref(kb, r))
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

static int rule_facts(const dx_ref *r, dx_buf *problems)
{
    int bad = 0;
    for (size_t k = 0; k < r->ncontext + r->nchecks; k++) {
        const char *f = k < r->ncontext ? r->context[k].fact : r->checks[k - r->ncontext].cond.fact;
        if (f && !fact_exists(f)) {
            dx_buf_addf(problems,
                        "%s: fact '%s' is produced by nothing (ddx facts lists the job "
                        "facts, docs/facts.md the others)\n",
                        r->file, f);
            bad = 1;
        }
    }
    return bad;
}

/* ==== rules over the whole reference ===================================================== */

/* every check command parses as a shell command (dx_lint_shell) */
static int rule_commands(const dx_ref *r, dx_buf *problems)
{
    int bad = 0;
    for (size_t k = 0; k < r->nchecks; k++) {
        char why[160];
        const char *cmd = r->checks[k].command;
        if (cmd && dx_lint_shell(cmd, why, sizeof why)) {
            dx_buf_addf(problems,
                        "%s: the command of check %zu does not parse as a shell command (%s): "
                        "%s\n",
                        r->file, k + 1, why, cmd);
            bad = 1;
        }
    }
    return bad;
}

/* Documentation sites show sample output, written or trimmed by the authors: never a real
 * report. A host that starts with one of `prefix`, or ends with `suffix`, or a link that starts
 * with `url` (after the scheme) is documentation. */
static const struct {
    const char *prefix, *suffix, *url;
} doc_sites[] = {
    {"docs.", NULL, NULL},
    {NULL, ".readthedocs.io", NULL},
    {NULL, ".readthedocs.org", NULL},
    {NULL, ".github.io", NULL},
    {NULL, NULL, "pytorch.org/docs/"},
    {NULL, NULL, "pytorch.org/tutorials/"},
    {NULL, NULL, "huggingface.co/docs/"},
    {NULL, NULL, "lightning.ai/docs/"},
    {NULL, NULL, "www.deepspeed.ai/"},
    {NULL, NULL, "deepspeed.ai/"},
    {NULL, NULL, "developer.nvidia.com/"},
    {NULL, NULL, "nvidia.github.io/"},
};

/* the documentation host or site of a link, or NULL when it is none */
const char *dx_lint_doc_site(const char *url, char *buf, size_t cap)
{
    const char *s = strstr(url, "://");
    s = s ? s + 3 : url;
    size_t hl = strcspn(s, "/?#");
    for (size_t i = 0; i < DX_ARRAY_LEN(doc_sites); i++) {
        const char *pre = doc_sites[i].prefix, *suf = doc_sites[i].suffix, *u = doc_sites[i].url;
        int yes = (pre && hl > strlen(pre) && !strncmp(s, pre, strlen(pre))) ||
                  (suf && hl > strlen(suf) && !strncmp(s + hl - strlen(suf), suf, strlen(suf))) ||
                  (u && !strncmp(s, u, strlen(u)));
        if (yes) {
            snprintf(buf, cap, "%.*s", u ? (int)strlen(u) - 1 : (int)hl, s);
            return buf;
        }
    }
    /* a documentation file in a repository: .../blob/<ref>/docs/... */
    const char *blob = strstr(s, "/blob/");
    if (blob && strstr(blob, "/docs/")) {
        snprintf(buf, cap, "a docs/ folder on %.*s", (int)hl, s);
        return buf;
    }
    return NULL;
}

/* an example marked real comes from a report, not from documentation */
static int rule_doc_examples(const dx_ref *r, dx_buf *problems)
{
    int bad = 0;
    for (size_t k = 0; k < r->nexamples; k++) {
        const dx_example *e = &r->examples[k];
        char site[128];
        if (e->constructed || !dx_lint_doc_site(e->source, site, sizeof site))
            continue;
        dx_buf_addf(problems,
                    "%s: example '%s' comes from documentation (%s), which shows sample "
                    "output, not a real report: mark it constructed and say so under '%s', "
                    "or take a real log\n",
                    r->file, e->path, site, DX_EXAMPLES_SECTION);
        bad = 1;
    }
    return bad;
}

/* A reference of dir that takes a built-in reference's id from another file: the user's file
 * would silently replace the built-in one. The same file (category/id.md) is the built-in
 * reference being edited, which is how the catalogue itself is linted. */
static int check_builtin_ids(const ddx_kb *kb, dx_buf *problems)
{
    const dx_builtin *b = dx_builtin_get();
    int bad = 0;
    for (size_t j = 0; j < kb->user.n; j++) {
        const dx_ref *u = &kb->user.refs[j];
        for (size_t i = 0; i < b->nrefs; i++) {
            const dx_ref *r = &b->refs[i];
            if (strcmp(r->id, u->id) != 0 || !strcmp(r->file ? r->file : "", u->file))
                continue;
            dx_buf_addf(problems,
                        "%s: id '%s' is the id of the built-in reference %s; this file would "
                        "replace it: choose another id (or edit %s itself)\n",
                        u->file, u->id, r->file ? r->file : r->id, r->file ? r->file : r->id);
            bad = 1;
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

#define PROBLEM(...)                                                                               \
    do {                                                                                           \
        dx_buf_addf(problems, __VA_ARGS__);                                                        \
        dx_buf_addc(problems, '\n');                                                               \
        bad = 1;                                                                                   \
    } while (0)

/* Does the pattern have a capture of that name? */
static int has_capture(const char *pattern, const char *name)
{
    dx_buf b = {0};
    dx_buf_addf(&b, "(?<%s>", name);
    int found = b.p && strstr(pattern, b.p) != NULL;
    dx_buf_fini(&b);
    return found;
}

static int signal_index(const dx_ref *r, const char *id)
{
    for (size_t i = 0; i < r->nsignals; i++)
        if (!strcmp(r->signals[i].id, id))
            return (int)i;
    return -1;
}

int dx_lint_conditions(const dx_ref *r, dx_buf *problems)
{
    int bad = 0;
    const char *f = r->file ? r->file : r->id;
    for (size_t i = 0; i < r->nsignals; i++) {
        const dx_signal *s = &r->signals[i];
        const dx_sigcond *c = r->conds ? &r->conds[i] : NULL;
        int any = c && DX_SIGCOND_ANY(c);
        if (any && !strcmp(r->kind, "noise"))
            PROBLEM("%s: signal '%s': a known-harmless line takes no condition", f, s->id);
        if (s->role == DX_ROLE_MARKER) {
            int named = 0;
            for (size_t k = 0; r->conds && k < r->nsignals; k++) {
                const dx_sigcond *o = &r->conds[k];
                named |= k != i && ((o->after && !strcmp(o->after, s->id)) ||
                                    (o->not_followed_by && !strcmp(o->not_followed_by, s->id)) ||
                                    (o->not_after && !strcmp(o->not_after, s->id)));
            }
            if (s->weight != 0)
                PROBLEM("%s: signal '%s': a marker is no evidence; give it weight 0", f, s->id);
            if (any)
                PROBLEM("%s: signal '%s': a marker takes no condition", f, s->id);
            if (!named)
                PROBLEM("%s: signal '%s': no signal's after, not_after or not_followed_by names "
                        "this marker",
                        f, s->id);
        }
        if (!any)
            continue;
        const char *const seq[][2] = {{"after", c->after},
                                      {"not_after", c->not_after},
                                      {"not_followed_by", c->not_followed_by}};
        for (size_t k = 0; k < DX_ARRAY_LEN(seq); k++) {
            if (!seq[k][1])
                continue;
            int at = signal_index(r, seq[k][1]);
            if (at < 0)
                PROBLEM("%s: signal '%s': %s names '%s', no signal of this reference", f, s->id,
                        seq[k][0], seq[k][1]);
            else if ((size_t)at == i)
                PROBLEM("%s: signal '%s': %s names the signal itself", f, s->id, seq[k][0]);
        }
        const char *const caps[][2] = {{"repeats", c->repeats},
                                       {"missing", c->missing},
                                       {"out_of", c->out_of},
                                       {"differs", c->differs}};
        for (size_t k = 0; k < DX_ARRAY_LEN(caps); k++)
            if (caps[k][1] && !has_capture(s->pattern, caps[k][1]))
                PROBLEM("%s: signal '%s': %s names the capture '%s', which the pattern lacks "
                        "((?<%s>...))",
                        f, s->id, caps[k][0], caps[k][1], caps[k][1]);
        if (!c->missing != !c->out_of)
            PROBLEM("%s: signal '%s': missing and out_of go together (a capture, and the capture "
                    "holding how many values there are)",
                    f, s->id);
    }
    return bad;
}

/* Rules over one reference of their own (no other reference, no example run): a problem line
 * each, 1 when there was one. */
typedef int (*ref_rule)(const dx_ref *r, dx_buf *problems);
static const ref_rule ref_rules[] = {rule_facts, rule_commands, rule_doc_examples};

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
    /* the rules over one reference, each over every reference of dir in turn */
    for (size_t k = 0; k < DX_ARRAY_LEN(ref_rules); k++)
        for (size_t i = 0; i < kb->nrefs; i++)
            if (is_user_ref(kb, kb->refs[i]))
                bad |= ref_rules[k](kb->refs[i], problems);
    if (with_builtin && check_builtin_ids(kb, problems))
        bad = 1;
    for (size_t i = 0; i < kb->user.n; i++) {
        bad |= dx_lint_source_ranges(&kb->user.refs[i], problems);
        bad |= dx_lint_conditions(&kb->user.refs[i], problems);
    }
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
