/* web_pages.c -- the catalogue as HTML pages: the index by category with search, one page per
 * reference, the upload page and short message pages; shared by `ddx serve` and `ddx site`.
 *
 * A reference's body is Markdown rendered by md4c (GitHub dialect, raw HTML off, so markup in a
 * reference shows as text); the fields the program uses (signals, checks, variants, neighbours,
 * sources, examples) follow as tables and lists. Search runs in the page (web/catalogue.js)
 * over a data-s attribute per reference: its id, title, category, kind, frameworks, summary and
 * the literal text of its signal patterns, so a fragment of an error message finds it. Links
 * are relative (index.html, ref/<id>.html), so the pages work from a folder, a web server
 * under any path, or ddx serve.
 */
#include "web.h"

#include <md4c-html.h>

#include "html.h"

/* ==== search text ========================================================================== */

/* The literal text of PCRE patterns, for a word search: escaped punctuation as itself; classes,
 * groups' syntax, quantifiers and escapes such as \d as one space. An alternation gives one of
 * its branches, chosen by k (its last branch when it has fewer), so that writing a pattern with
 * k = 0, 1, ... gives each branch in its place: '(?:CUDA|HIP) out of memory' gives "CUDA out of
 * memory" and "HIP out of memory". */

/* After the class, escape or group syntax at p: its end. */
static const char *skip_class(const char *p)
{
    p++;
    if (*p == '^')
        p++;
    if (*p == ']')
        p++;
    while (*p && *p != ']')
        p += (*p == '\\' && p[1]) ? 2 : 1;
    return *p ? p + 1 : p;
}

/* The end of the group whose body starts at p (at its ')' or the string's end), and how many
 * branches it has. */
static const char *group_end(const char *p, int *branches)
{
    int depth = 0;
    *branches = 1;
    while (*p && !(depth == 0 && *p == ')')) {
        if (*p == '\\' && p[1])
            p += 2;
        else if (*p == '[')
            p = skip_class(p);
        else {
            depth += *p == '(';
            depth -= *p == ')';
            *branches += depth == 0 && *p == '|';
            p++;
        }
    }
    return p;
}

/* Writes branch min(k, branches - 1) of the group body at p; returns the group's end. */
static const char *literal(dx_buf *b, const char *p, int k, int *most)
{
    int branches, branch = 0;
    const char *end = group_end(p, &branches);
    int want = k < branches ? k : branches - 1;
    *most = branches > *most ? branches : *most;
    while (p < end) {
        char c = *p, lit = 0;
        if (c == '|') {
            branch++;
            p++;
            continue;
        }
        if (branch != want) { /* another branch: skip it, groups whole */
            if (c == '\\' && p[1])
                p += 2;
            else if (c == '[')
                p = skip_class(p);
            else if (c == '(') {
                int n;
                p = group_end(p + 1, &n);
                p += *p == ')';
            } else
                p++;
            continue;
        }
        if (c == '\\' && p[1]) {
            if (strchr(".()[]{}|?*+^$\\/-'\":=<>!#&%@,;`~", p[1]))
                lit = p[1];
            p += 2;
        } else if (c == '[')
            p = skip_class(p);
        else if (c == '(') {
            p++;
            if (*p == '?') { /* (?: (?<name> (?= (?i) ... */
                p++;
                if (*p == '<' && p[1] != '=' && p[1] != '!')
                    while (*p && *p != '>')
                        p++;
                else if (*p != ':' && *p != '=' && *p != '!' && *p != '<')
                    while (*p && *p != ')' && *p != ':')
                        p++;
                if (*p == ')') { /* a flag group such as (?i): nothing inside */
                    p++;
                    continue;
                }
                p += *p != '\0';
            }
            /* a group's literal text joins what is around it: "(?:Watchdog c|C)aught" is
               "Watchdog caught" (anything not literal inside or after it becomes a blank) */
            p = literal(b, p, k, most);
            p += *p == ')';
            continue;
        } else if (c == '{') {
            while (*p && *p != '}')
                p++;
            p += *p == '}';
        } else {
            if (!strchr("?*+^$.", c))
                lit = c;
            p++;
        }
        dx_buf_addc(b, lit ? lit : ' ');
    }
    return end;
}

/* Appends the literal text of pattern p, once per branch of its widest alternation (at most
 * 6 times). */
static void pattern_text(dx_buf *b, const char *p)
{
    int most = 1;
    for (int k = 0; k < most && k < 6; k++) {
        literal(b, p, k, &most);
        dx_buf_add(b, " | ", 3);
    }
}

static void search_attr(FILE *out, const dx_ref *r)
{
    dx_buf b = {0};
    dx_buf_addf(&b, "%s %s %s %s %s ", r->id, r->title, r->category, r->kind,
                r->summary ? r->summary : "");
    for (size_t i = 0; i < r->nframeworks; i++)
        dx_buf_addf(&b, "%s ", r->frameworks[i]);
    for (size_t i = 0; i < r->nsignals; i++)
        pattern_text(&b, r->signals[i].pattern);
    fputs(" data-s=\"", out);
    dx_html_textn(out, b.p, b.n);
    fputc('"', out);
    dx_buf_fini(&b);
}

/* ==== the index ============================================================================ */

static int cmp_ref(const void *a, const void *b, void *kb)
{
    const dx_ref *const *refs = ((const ddx_kb *)kb)->refs;
    const dx_ref *x = refs[*(const size_t *)a], *y = refs[*(const size_t *)b];
    int c = strcmp(x->category, y->category);
    return c ? c : strcmp(x->id, y->id);
}

static void page_begin(FILE *out, const cli_web *w, const char *title, const char *root, int script)
{
    dx_html_page pg = {title, root, w->upload, script, NULL};
    dx_html_begin(out, &pg);
}

static int page_end(FILE *out, const cli_web *w, const char *root, int script)
{
    dx_html_page pg = {NULL, root, w->upload, script, NULL};
    char foot[200];
    snprintf(foot, sizeof foot,
             "ddx %s · %zu references · the catalogue of known failures of distributed training",
             DDX_VERSION, w->kb->nrefs);
    dx_html_end(out, &pg, foot);
    return ferror(out) ? -1 : 0;
}

int cli_web_catalogue(FILE *out, const cli_web *w)
{
    const ddx_kb *kb = w->kb;
    size_t *order = dx_malloc((kb->nrefs ? kb->nrefs : 1) * sizeof *order);
    if (!order)
        return -1;
    for (size_t i = 0; i < kb->nrefs; i++)
        order[i] = i;
    qsort_r(order, kb->nrefs, sizeof *order, cmp_ref, (void *)kb);
    page_begin(out, w, "ddx: the catalogue of known failures", "", 1);
    fputs("<h1>Known failures of distributed training</h1>"
          "<p class=\"muted\">Each reference says what happens, the messages that show it, how "
          "to confirm it and what to change. Search by id, title, framework or a piece of the "
          "error message.</p>"
          "<input id=\"q\" class=\"search\" type=\"search\" placeholder=\"Search: a message, "
          "an id, a framework\" aria-label=\"Search the catalogue\" autofocus>",
          out);
    fprintf(out,
            "<p id=\"count\" class=\"muted small\" aria-live=\"polite\">%zu references</p>"
            "<ul id=\"results\" class=\"plain refs hidden\"></ul>",
            kb->nrefs);
    const char *cat = NULL;
    for (size_t k = 0; k < kb->nrefs; k++) {
        const dx_ref *r = kb->refs[order[k]];
        if (!cat || strcmp(cat, r->category) != 0) {
            if (cat)
                fputs("</ul></section>", out);
            cat = r->category;
            size_t n = 0;
            for (size_t j = k; j < kb->nrefs && !strcmp(kb->refs[order[j]]->category, cat); j++)
                n++;
            fputs("<section class=\"cat\"><h2 id=\"cat-", out);
            dx_html_text(out, cat);
            fputs("\">", out);
            dx_html_text(out, cat);
            fprintf(out, " <span class=\"muted small\">%zu</span></h2><ul class=\"plain refs\">",
                    n);
        }
        fputs("<li", out);
        search_attr(out, r);
        fputs("><a href=\"ref/", out);
        dx_html_text(out, r->id);
        fputs(".html\">", out);
        dx_html_text(out, r->title);
        fputs("</a><span class=\"rid\">", out);
        dx_html_text(out, r->id);
        fputs(" · ", out);
        dx_html_text(out, r->kind);
        fputs("</span></li>", out);
    }
    if (cat)
        fputs("</ul></section>", out);
    dx_free(order);
    return page_end(out, w, "", 1);
}

/* ==== a reference ========================================================================== */

static void md_out(const MD_CHAR *text, MD_SIZE size, void *ud)
{
    fwrite(text, 1, size, (FILE *)ud);
}

static void write_signals(FILE *out, const dx_ref *r)
{
    if (!r->nsignals)
        return;
    fputs("<section class=\"card\"><h2>Signals</h2><p class=\"muted small\">The lines ddx looks "
          "for (PCRE2 patterns), their role and the log-odds each adds.</p><div class=\"scroll\">"
          "<table><thead><tr><th>role</th><th class=\"num\">weight</th><th>pattern</th>"
          "<th>where the message comes from</th></tr></thead><tbody>",
          out);
    for (size_t i = 0; i < r->nsignals; i++) {
        const dx_signal *s = &r->signals[i];
        fprintf(out, "<tr><td class=\"role-%s\">%s</td><td class=\"num\">%.1f</td><td><code>",
                dx_role_name(s->role), dx_role_name(s->role), s->weight);
        dx_html_text(out, s->pattern);
        fputs("</code></td><td class=\"small\">", out);
        dx_html_text(out, s->source);
        fputs("</td></tr>", out);
    }
    fputs("</tbody></table></div></section>", out);
}

static void write_cond(FILE *out, const dx_cond *c)
{
    fputs("<code>", out);
    dx_html_text(out, c->fact);
    fprintf(out, " %s", dx_op_name(c->op));
    if (c->value) {
        fputc(' ', out);
        dx_html_text(out, c->value);
    }
    fputs("</code>", out);
}

static void write_checks(FILE *out, const dx_ref *r)
{
    if (!r->nchecks)
        return;
    fputs("<section class=\"card\"><h2>Checks</h2><ul class=\"plain\">", out);
    for (size_t i = 0; i < r->nchecks; i++) {
        const dx_check *c = &r->checks[i];
        fputs("<li>", out);
        dx_html_text(out, c->says);
        if (c->cond.fact) {
            fputs("<div class=\"muted small\">ddx decides it from the fact ", out);
            write_cond(out, &c->cond);
            fputs("</div>", out);
        }
        if (c->command) {
            fputs("<pre><code>", out);
            dx_html_text(out, c->command);
            fputs("</code></pre>", out);
        }
        fputs("</li>", out);
    }
    fputs("</ul></section>", out);
}

static void write_context(FILE *out, const dx_ref *r)
{
    if (!r->ncontext)
        return;
    fputs("<section class=\"card\"><h2>Context</h2><ul class=\"plain\">", out);
    for (size_t i = 0; i < r->ncontext; i++) {
        const dx_cond *c = &r->context[i];
        fprintf(out, "<li><span class=\"badge\">%+.1f</span> ", c->weight);
        write_cond(out, c);
        if (c->says) {
            fputs(": ", out);
            dx_html_text(out, c->says);
        }
        fputs("</li>", out);
    }
    fputs("</ul></section>", out);
}

static void write_variants(FILE *out, const dx_ref *r)
{
    if (!r->nvariants)
        return;
    fputs("<section class=\"card\"><h2>Variants</h2>", out);
    for (size_t i = 0; i < r->nvariants; i++) {
        const dx_variant *v = &r->variants[i];
        fputs("<h3>", out);
        dx_html_text(out, v->title);
        fputs(" <span class=\"rid\">", out);
        dx_html_text(out, v->id);
        fputs("</span></h3>", out);
        if (v->nfix) {
            fputs("<ol>", out);
            dx_html_items(out, v->fix, v->nfix);
            fputs("</ol>", out);
        }
    }
    fputs("</section>", out);
}

static void write_links(FILE *out, const cli_web *w, const dx_ref *r)
{
    if (r->nneighbours) {
        fputs("<section class=\"card\"><h2>Not to confuse with</h2>", out);
        dx_html_neighbours(out, w->kb, r, "");
        fputs("</section>", out);
    }
    fputs("<section class=\"card\"><h2>Sources</h2>", out);
    dx_html_sources(out, r);
    if (r->nexamples) {
        fputs("<h3>Examples</h3><p class=\"muted small\">Logs that must rank this reference "
              "first (they run as tests).</p><ul>",
              out);
        for (size_t i = 0; i < r->nexamples; i++) {
            fputs("<li><code>", out);
            dx_html_text(out, r->examples[i].path);
            fputs("</code> ", out);
            if (r->examples[i].constructed)
                fputs("<span class=\"muted\">constructed from</span> ", out);
            dx_html_link(out, r->examples[i].source, NULL);
            fputs("</li>", out);
        }
        fputs("</ul>", out);
    }
    fputs("</section>", out);
}

int cli_web_ref(FILE *out, const cli_web *w, size_t i)
{
    if (i >= w->kb->nrefs)
        return -1;
    const dx_ref *r = w->kb->refs[i];
    char title[300];
    snprintf(title, sizeof title, "%s · ddx", r->id);
    page_begin(out, w, title, "../", 0);
    fputs("<p class=\"kicker\"><a href=\"../index.html#cat-", out);
    dx_html_text(out, r->category);
    fputs("\">", out);
    dx_html_text(out, r->category);
    fputs("</a> · ", out);
    dx_html_text(out, r->kind);
    fputs("</p><h1>", out);
    dx_html_text(out, r->title);
    fputs("</h1><p><code>", out);
    dx_html_text(out, r->id);
    fputs("</code>", out);
    for (size_t k = 0; k < r->nframeworks; k++) {
        fputs(" <span class=\"badge\">", out);
        dx_html_text(out, r->frameworks[k]);
        fputs("</span>", out);
    }
    fprintf(out, " <span class=\"muted small\">prior %.2f</span></p>", r->prior);
    if (r->summary) {
        fputs("<p>", out);
        dx_html_text(out, r->summary);
        fputs("</p>", out);
    }
    fputs("<section class=\"card body\">", out);
    if (md_html(r->body, (MD_SIZE)strlen(r->body), md_out, out, MD_DIALECT_GITHUB | MD_FLAG_NOHTML,
                0) != 0) {
        fputs("<pre>", out); /* md4c gave up (out of memory): show the text as it is */
        dx_html_text(out, r->body);
        fputs("</pre>", out);
    }
    fputs("</section>", out);
    write_signals(out, r);
    write_context(out, r);
    write_checks(out, r);
    write_variants(out, r);
    write_links(out, w, r);
    return page_end(out, w, "../", 0);
}

/* ==== the upload page and messages ========================================================= */

int cli_web_upload(FILE *out, const cli_web *w, const char *error)
{
    page_begin(out, w, "ddx: diagnose a log", "", 1);
    fprintf(out,
            "<h1>Diagnose a log</h1><p class=\"muted\">Paste what a failed job printed, or "
            "choose its files: logs, environment dumps, configs, flight-recorder dumps, .gz "
            ".zst .xz files and .tar(.gz) or .zip archives. They are read in memory and never "
            "stored; at most %.1f MiB in all.</p>"
            "<form class=\"upload\" method=\"post\" action=\"diagnose\" "
            "enctype=\"multipart/form-data\" data-max=\"%zu\">"
            "<p id=\"upload-error\" class=\"error\" role=\"alert\">",
            (double)w->max_upload / 1048576.0, w->max_upload);
    dx_html_text(out, error);
    fputs("</p><label for=\"text\">Log text</label>"
          "<textarea id=\"text\" name=\"text\" spellcheck=\"false\" placeholder=\"[rank3]: "
          "Traceback (most recent call last): ...\"></textarea>"
          "<p><label for=\"file\">or files</label> <input id=\"file\" type=\"file\" "
          "name=\"file\" multiple></p><button type=\"submit\">Diagnose</button></form>"
          "<p class=\"muted small\">The same as <code>ddx diagnose</code>; for scripts, POST "
          "the files to <code>/api/diagnose</code> for the JSON report.</p>",
          out);
    return page_end(out, w, "", 1);
}

int cli_web_message(FILE *out, const cli_web *w, const char *root, const char *title,
                    const char *message)
{
    page_begin(out, w, title, root, 0);
    fputs("<h1>", out);
    dx_html_text(out, title);
    fputs("</h1><p>", out);
    dx_html_text(out, message);
    fputs("</p><p><a href=\"", out);
    dx_html_text(out, *root ? root : "./");
    fputs("\">Back to the catalogue</a></p>", out);
    return page_end(out, w, root, 0);
}
