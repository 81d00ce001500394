/* nearest.h -- the catalogue references closest to a piece of text (a failure no reference
 * explains), by the words they share with it.
 *
 * A small retrieval (BM25 over each reference's title, summary, signal patterns and body) used
 * only when a failed job has no finding, to point the reader at the references worth reading.
 * What it returns is never a finding: the report calls them "closest".
 */
#ifndef DX_NEAREST_H
#define DX_NEAREST_H

#include "kb.h"

#define DX_NEAREST_MAX 3

typedef struct dx_nearest {
    const dx_ref *ref; /* borrowed from the knowledge base */
    double score;
    char why[200]; /* "shares 'safetensors', 'header' (title, signals)" */
} dx_nearest;

/* Ranks kb's references (noise references excluded) by the words they share with text[0..len)
 * and fills out[0..*n) with at most max of them, best first; a reference that shares too few
 * distinctive words with the text (nearest.c says how few) is not returned. Returns DDX_OK or
 * DDX_ENOMEM. */
DX_HIDDEN int dx_nearest_find(const ddx_kb *kb, const char *text, size_t len, dx_nearest *out,
                              size_t max, size_t *n);

#endif
