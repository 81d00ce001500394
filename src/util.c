/* util.c -- allocation, errors and growable buffers shared by every module.
 *
 * All allocation in ddx goes through dx_malloc/dx_calloc/dx_realloc so that tests can make the
 * Nth allocation fail with dx_alloc_fail_after and check that every caller copes.
 */
#include "dx.h"

#include <ctype.h>

static long fail_countdown; /* 0: never fail; N: the Nth allocation from now fails */

void dx_alloc_fail_after(long n) { fail_countdown = n; }

static bool should_fail(void)
{
    if (fail_countdown <= 0)
        return false;
    return --fail_countdown == 0;
}

void *dx_malloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *dx_calloc(size_t count, size_t size)
{
    if (should_fail())
        return NULL;
    return calloc(count ? count : 1, size ? size : 1);
}

void *dx_realloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void dx_free(void *p) { free(p); }

char *dx_strndup(const char *s, size_t n)
{
    char *d = dx_malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *dx_strdup(const char *s) { return s ? dx_strndup(s, strlen(s)) : NULL; }

int dx_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return DDX_OK;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return DDX_ENOMEM;
        ncap *= 2;
    }
    if (elem && ncap > SIZE_MAX / elem)
        return DDX_ENOMEM;
    void *np = dx_realloc(*p, ncap * elem);
    if (!np)
        return DDX_ENOMEM;
    *p = np;
    *cap = ncap;
    return DDX_OK;
}

int dx_err(ddx_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

int dx_buf_add(dx_buf *b, const void *p, size_t n)
{
    if (n > SIZE_MAX - b->n - 1)
        return DDX_ENOMEM;
    if (dx_grow((void **)&b->p, &b->cap, b->n + n + 1, 1) != DDX_OK)
        return DDX_ENOMEM;
    if (n)
        memcpy(b->p + b->n, p, n);
    b->n += n;
    b->p[b->n] = '\0';
    return DDX_OK;
}

int dx_buf_addc(dx_buf *b, char c) { return dx_buf_add(b, &c, 1); }

int dx_buf_addf(dx_buf *b, const char *fmt, ...)
{
    char small[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return DDX_EINVAL;
    if ((size_t)n < sizeof small)
        return dx_buf_add(b, small, (size_t)n);
    if (dx_grow((void **)&b->p, &b->cap, b->n + (size_t)n + 1, 1) != DDX_OK)
        return DDX_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
    return DDX_OK;
}

const char *dx_buf_cstr(dx_buf *b)
{
    if (!b->p && dx_buf_add(b, "", 0) != DDX_OK)
        return "";
    return b->p;
}

void dx_buf_fini(dx_buf *b)
{
    dx_free(b->p);
    b->p = NULL;
    b->n = b->cap = 0;
}

bool dx_blank(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isspace((unsigned char)p[i]))
            return false;
    return true;
}
