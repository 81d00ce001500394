/* html.c -- escaping, safe links and the page frame shared by every page ddx writes (html.h).
 *
 * The Content-Security-Policy of each page is its own guarantee of being self-contained:
 * default-src 'none' refuses every request (images, fonts, frames, fetches), styles may only be
 * inline, and the one script allowed is web/catalogue.js by its SHA-256; the report allows none.
 * So even a mistake in escaping could not run injected code or reach the network.
 */
#include "html.h"

void dx_html_textn(FILE *out, const char *s, size_t n)
{
    if (!s)
        return;
    const char *start = s; /* bytes from here on need no escape: written in one go */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        const char *rep = NULL;
        switch (c) {
        case '&':
            rep = "&amp;";
            break;
        case '<':
            rep = "&lt;";
            break;
        case '>':
            rep = "&gt;";
            break;
        case '"':
            rep = "&quot;";
            break;
        case '\'':
            rep = "&#39;";
            break;
        default:
            if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f)
                rep = "\xef\xbf\xbd"; /* U+FFFD */
        }
        if (!rep)
            continue;
        fwrite(start, 1, (size_t)(s + i - start), out);
        fputs(rep, out);
        start = s + i + 1;
    }
    fwrite(start, 1, (size_t)(s + n - start), out);
}

void dx_html_text(FILE *out, const char *s)
{
    if (s)
        dx_html_textn(out, s, strlen(s));
}

void dx_html_inline(FILE *out, const char *s)
{
    while (s && *s) {
        const char *open = strchr(s, '`');
        const char *close = open ? strchr(open + 1, '`') : NULL;
        if (!close) {
            dx_html_text(out, s);
            return;
        }
        dx_html_textn(out, s, (size_t)(open - s));
        fputs("<code>", out);
        dx_html_textn(out, open + 1, (size_t)(close - open - 1));
        fputs("</code>", out);
        s = close + 1;
    }
}

void dx_html_textf(FILE *out, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        dx_html_textn(out, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

int dx_html_url_ok(const char *url)
{
    if (!url || !*url)
        return 0;
    if (!strncmp(url, "https://", 8) || !strncmp(url, "http://", 7))
        return !strpbrk(url, " \t\n\r\"'<>\\`");
    for (const char *p = url; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("-_./#?=&%", c)))
            return 0; /* a ':' would name a scheme */
    }
    return 1;
}

void dx_html_link(FILE *out, const char *url, const char *text)
{
    if (!dx_html_url_ok(url)) {
        dx_html_text(out, text ? text : url);
        return;
    }
    fputs("<a href=\"", out);
    dx_html_text(out, url);
    fputs("\">", out);
    dx_html_text(out, text ? text : url);
    fputs("</a>", out);
}

void dx_html_ref(FILE *out, const char *prefix, const char *id)
{
    int link = prefix && dx_html_url_ok(id);
    if (link) {
        fputs("<a href=\"", out);
        dx_html_text(out, prefix);
        dx_html_text(out, id);
        fputs(".html\">", out);
    }
    fputs("<code>", out);
    dx_html_text(out, id);
    fputs(link ? "</code></a>" : "</code>", out);
}

void dx_html_items(FILE *out, const char *const *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        fputs("<li>", out);
        dx_html_inline(out, v[i]);
        fputs("</li>", out);
    }
}

void dx_html_neighbours(FILE *out, const ddx_kb *kb, const dx_ref *r, const char *prefix)
{
    if (!r->nneighbours)
        return;
    fputs("<dl class=\"kv\">", out);
    for (size_t i = 0; i < r->nneighbours; i++) {
        size_t idx;
        fputs("<dt>", out);
        dx_html_ref(out, ddx_kb_find(kb, r->neighbours[i].id, &idx) ? NULL : prefix,
                    r->neighbours[i].id);
        fputs("</dt><dd>", out);
        dx_html_inline(out, r->neighbours[i].tell);
        fputs("</dd>", out);
    }
    fputs("</dl>", out);
}

void dx_html_sources(FILE *out, const dx_ref *r)
{
    fputs("<ul>", out);
    for (size_t i = 0; i < r->nsources; i++) {
        fputs("<li>", out);
        dx_html_link(out, r->sources[i], NULL);
        fputs("</li>", out);
    }
    fputs("</ul>", out);
}

void dx_html_begin(FILE *out, const dx_html_page *pg)
{
    fputs("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"color-scheme\" content=\"light dark\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'self'",
          out);
    if (pg->script)
        fprintf(out, "; script-src 'sha256-%s'", dx_web_catalogue_js_sha256);
    fputs("\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<title>", out);
    dx_html_text(out, pg->title);
    fputs("</title>\n<style>\n", out);
    fwrite(dx_web_ddx_css, 1, dx_web_ddx_css_len, out);
    fprintf(out, "</style>\n</head>\n<body%s%s%s>\n<header class=\"top\">",
            pg->body_class ? " class=\"" : "", pg->body_class ? pg->body_class : "",
            pg->body_class ? "\"" : "");
    if (pg->root) {
        fputs("<a class=\"brand\" href=\"", out);
        dx_html_text(out, *pg->root ? pg->root : "./");
        fputs("\">ddx</a><nav><a href=\"", out);
        dx_html_text(out, *pg->root ? pg->root : "./");
        fputs("\">Catalogue</a>", out);
        if (pg->upload) {
            fputs("<a href=\"", out);
            dx_html_text(out, pg->root);
            fputs("diagnose\">Diagnose a log</a>", out);
        }
        fputs("</nav>", out);
    } else
        fputs("<span class=\"brand\">ddx</span><span class=\"muted\">differential diagnosis of "
              "a distributed training job</span>",
              out);
    fputs("</header>\n<main>\n", out);
}

void dx_html_end(FILE *out, const dx_html_page *pg, const char *footer)
{
    fputs("</main>\n<footer>", out);
    dx_html_text(out, footer);
    fputs("</footer>\n", out);
    if (pg->script) {
        fputs("<script>", out);
        fwrite(dx_web_catalogue_js, 1, dx_web_catalogue_js_len, out);
        fputs("</script>\n", out);
    }
    fputs("</body>\n</html>\n", out);
}
