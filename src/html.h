/* html.h -- writing HTML safely: escaping every byte that is not ours, links only to safe
 * addresses, and the frame (head, style, header, footer) that every page ddx writes shares.
 *
 * Used by report_html.c (the report) and by the catalogue pages of `ddx serve` / `ddx site`
 * (cli/web_pages.c), so they look the same. Output goes to a FILE (a file, stdout, or an
 * open_memstream buffer); callers check ferror once at the end. The style sheet and the one
 * script are web/ assets embedded at build time (web/embed.cmake).
 */
#ifndef DX_HTML_H
#define DX_HTML_H

#include "dx.h"
#include "kb.h"

/* the embedded assets (generated web_assets.c) */
extern const char dx_web_ddx_css[];
extern const size_t dx_web_ddx_css_len;
extern const char dx_web_catalogue_js[];
extern const size_t dx_web_catalogue_js_len;
extern const char dx_web_catalogue_js_sha256[];

/* Writes s as HTML text or as an attribute value (quoted with "): & < > " ' are escaped and
 * control characters other than tab and newline become U+FFFD. NULL writes nothing. */
DX_HIDDEN void dx_html_text(FILE *out, const char *s);
DX_HIDDEN void dx_html_textn(FILE *out, const char *s, size_t n);
/* Like dx_html_text, and a `backquoted` span becomes <code>span</code> (the references write
 * commands and messages that way). */
DX_HIDDEN void dx_html_inline(FILE *out, const char *s);
/* printf, then escapes the result (for numbers mixed with text from the inputs). */
DX_HIDDEN void dx_html_textf(FILE *out, const char *fmt, ...) DX_PRINTF(2, 3);

/* Whether url may be an href: http:// or https://, or a relative path of letters, digits and
 * "-_./#?=&%" that names no scheme. Anything else (javascript:, data:, file:) is shown as
 * text, never linked. */
DX_HIDDEN int dx_html_url_ok(const char *url);
/* <a href="url">text</a> when url is safe, else the text alone (text NULL: the url). */
DX_HIDDEN void dx_html_link(FILE *out, const char *url, const char *text);

/* <code>id</code> of a reference, linked to prefix + id + ".html" when prefix is not NULL. */
DX_HIDDEN void dx_html_ref(FILE *out, const char *prefix, const char *id);
/* One <li> per string of v (dx_html_inline), for a list the caller opens and closes. */
DX_HIDDEN void dx_html_items(FILE *out, const char *const *v, size_t n);

/* A reference's neighbours as a <dl>: each id (linked to prefix + id + ".html" when prefix is
 * given and kb has that reference) and how to tell it apart. Nothing when it has none. */
DX_HIDDEN void dx_html_neighbours(FILE *out, const ddx_kb *kb, const dx_ref *r, const char *prefix);
/* A reference's sources as a <ul> of links. */
DX_HIDDEN void dx_html_sources(FILE *out, const dx_ref *r);

typedef struct dx_html_page {
    const char *title;      /* <title>, escaped */
    const char *root;       /* relative path to the site's root ("", "../"); NULL: no site nav */
    int upload;             /* the nav links to the upload page (ddx serve) */
    int script;             /* inline web/catalogue.js (allowed by its hash in the CSP) */
    const char *body_class; /* NULL none */
} dx_html_page;

/* From <!doctype> to the opening <main>: charset, viewport, a Content-Security-Policy that
 * allows no request at all (and no script unless pg->script), the style sheet, the header. */
DX_HIDDEN void dx_html_begin(FILE *out, const dx_html_page *pg);
/* Closes <main>, writes the footer line (escaped; may be NULL) and the script if any. */
DX_HIDDEN void dx_html_end(FILE *out, const dx_html_page *pg, const char *footer);

#endif
