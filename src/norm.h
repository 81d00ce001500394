/* norm.h -- text as it arrives: the layer in front of matching that undoes what terminals,
 * trackers, loggers and cluster frameworks do to a log line before ddx reads it.
 *
 * Two services, both over borrowed text:
 *   - dx_norm_body_end: where a line's message ends once the suffixes a cluster framework adds
 *     are taken off (Ray's " [repeated 3x across cluster]"), so anchored patterns see the
 *     message as the program printed it;
 *   - dx_norm_chunk: a chunk of physical lines rewritten as logical lines: segments a carriage
 *     return glued together (a progress bar and the error printed over it) split apart, a log
 *     embedded in JSON or a Python repr (escaped quotes, literal "\n") unescaped and split,
 *     lines hard-wrapped at a terminal's width joined again, a container runtime's JSON record
 *     read as the line it holds, a message quoted inside a poster's sentence (backticks, bold,
 *     quotes, an exception's repr) read again as a line of its own, list and heading markup
 *     before an exception taken off. Each logical line keeps the number
 *     of the physical line it starts on and how many it covers, so evidence still cites the
 *     original file and line.
 */
#ifndef DX_NORM_H
#define DX_NORM_H

#include "dx.h"

/* The length of line[0..len) without the suffixes cluster frameworks append and trailing
 * blanks (at least start, which is where the message begins). */
DX_HIDDEN size_t dx_norm_body_end(const char *line, size_t start, size_t len);

typedef struct dx_norm {
    dx_buf out;      /* the logical lines, each ending in '\n' */
    dx_buf rec;      /* scratch: a container log record rewritten */
    dx_buf quote;    /* scratch: an exception's repr read as raised */
    int marked;      /* the physical line(s) being read may hold a quoted message */
    uint64_t *first; /* [nlines] physical line number each logical line starts on */
    uint32_t *span;  /* [nlines] physical lines it covers (more than 1: a joined wrap) */
    size_t nlines, cap;
} dx_norm;

/* Rewrites data[0..len) (whole lines, each ending in '\n'; the first is physical line
 * first_line) as logical lines in n. Returns 1 when n holds them, 0 when the chunk needs no
 * change (read data as it is), or DDX_ENOMEM. n is reused across calls; dx_norm_fini frees
 * it. */
DX_HIDDEN int dx_norm_chunk(dx_norm *n, const char *data, size_t len, uint64_t first_line);
DX_HIDDEN void dx_norm_fini(dx_norm *n);

#endif
