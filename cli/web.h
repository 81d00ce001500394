/* web.h -- what the files of ddx-web share: the catalogue pages that `ddx serve` and
 * `ddx site` both write (web_pages.c), so the two look the same.
 *
 * Only ddx-web is built from cli/web_*.c (it links md4c and libmicrohttpd); the static ddx runs
 * it for `serve` and `site` (launch.c). Pages are written to a FILE: a file for `ddx site`, an
 * open_memstream buffer for `ddx serve`.
 */
#ifndef DDX_CLI_WEB_H
#define DDX_CLI_WEB_H

#include "cli.h"

typedef struct cli_web {
    const ddx_kb *kb;
    int upload;        /* the pages link the upload page (ddx serve) */
    size_t max_upload; /* bytes, for the upload page */
} cli_web;

/* The catalogue: every reference by category, with search (index.html, or / when served). */
int cli_web_catalogue(FILE *out, const cli_web *w);
/* Reference i's page (ref/<id>.html): its Markdown body rendered by md4c, then its signals,
 * checks, variants, neighbours (linked), sources and examples. */
int cli_web_ref(FILE *out, const cli_web *w, size_t i);
/* The page to paste or upload a log (ddx serve); error, when given, is shown on it. */
int cli_web_upload(FILE *out, const cli_web *w, const char *error);
/* A page that says one thing (not found, too large, busy): a title and a sentence. */
int cli_web_message(FILE *out, const cli_web *w, const char *root, const char *title,
                    const char *message);

#endif
