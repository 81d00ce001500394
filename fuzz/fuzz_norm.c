/* fuzz_norm.c -- libFuzzer target for norm.c: physical lines to logical lines.
 *
 * The input becomes one chunk of whole lines (a '\n' is added when it lacks one, as the reader
 * hands chunks out). Checks what the scan relies on: every logical line ends in '\n', the line
 * numbers start at the chunk's first line and never go back, each logical line covers at least
 * one physical line, and the suffix trimmer stays inside the line.
 *
 * Build and run: make fuzz (docs/robustness.md).
 */
#include "norm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    size_t len = size;
    if (!len || text[len - 1] != '\n')
        text[len++] = '\n';
    dx_norm n = {0};
    int rc = dx_norm_chunk(&n, text, len, 7);
    if (rc == 1 && !n.nlines && n.out.n) /* text with no logical line */
        __builtin_trap();
    if (rc == 1 && n.nlines) { /* (no lines at all: an escaped blank, and out may be NULL) */
        const char *p = n.out.p, *end = n.out.p + n.out.n;
        uint64_t prev = 7;
        for (size_t i = 0; i < n.nlines; i++) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl || n.first[i] < prev || n.span[i] == 0)
                __builtin_trap();
            prev = n.first[i];
            p = nl + 1;
        }
        if (p != end)
            __builtin_trap();
    }
    for (size_t s = 0, e; s < len; s = e + 1) {
        e = (size_t)((const char *)memchr(text + s, '\n', len - s) - text);
        size_t start = (e - s) / 3;
        size_t b = dx_norm_body_end(text + s, start, e - s);
        if (b < start || b > e - s)
            __builtin_trap();
    }
    dx_norm_fini(&n);
    free(text);
    return 0;
}
