/* dx.h -- what every ddx source file includes first: feature macros, allocation, errors, buffers.
 *
 * Internal only. Names shared between files but hidden from the library's users are dx_*;
 * everything else in a file is static. Allocation goes through dx_malloc and friends so tests
 * can make the Nth allocation fail (dx_alloc_fail_after).
 */
#ifndef DX_H
#define DX_H

#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE 1
#define _GNU_SOURCE 1 /* memrchr */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DDX_BUILDING 1
#include "ddx.h"

#if defined(__GNUC__)
#define DX_HIDDEN __attribute__((visibility("hidden")))
#define DX_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DX_HIDDEN
#define DX_PRINTF(a, b)
#endif

#define DX_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- allocation (util.c) ---- */
DX_HIDDEN void *dx_malloc(size_t n);
DX_HIDDEN void *dx_calloc(size_t count, size_t size);
DX_HIDDEN void *dx_realloc(void *p, size_t n);
DX_HIDDEN char *dx_strdup(const char *s);
DX_HIDDEN char *dx_strndup(const char *s, size_t n);
DX_HIDDEN void dx_free(void *p);
/* Tests: the Nth allocation from now fails (0 disables). */
DX_HIDDEN void dx_alloc_fail_after(long n);
/* Grows *p (an array of *cap elements of size elem) so it holds at least need elements. */
DX_HIDDEN int dx_grow(void **p, size_t *cap, size_t need, size_t elem);

/* ---- errors (util.c) ---- */
/* Fills err (may be NULL) and returns code, so callers can `return dx_err(...)`. */
DX_HIDDEN int dx_err(ddx_error *err, int code, const char *fmt, ...) DX_PRINTF(3, 4);

/* ---- growable byte buffer (util.c) ---- */
typedef struct dx_buf {
    char *p; /* NUL-terminated when n > 0 or after dx_buf_cstr */
    size_t n;
    size_t cap;
} dx_buf;
DX_HIDDEN int dx_buf_add(dx_buf *b, const void *p, size_t n);
DX_HIDDEN int dx_buf_addf(dx_buf *b, const char *fmt, ...) DX_PRINTF(2, 3);
DX_HIDDEN int dx_buf_addc(dx_buf *b, char c);
DX_HIDDEN const char *dx_buf_cstr(dx_buf *b);
DX_HIDDEN void dx_buf_fini(dx_buf *b);

/* Whether the n bytes at p are all white space (or n is 0). */
DX_HIDDEN bool dx_blank(const char *p, size_t n);

/* A borrowed view of text: valid only while its owner keeps it. */
typedef struct dx_str {
    const char *p;
    size_t n;
} dx_str;

#endif
