/* norm.c -- text as it arrives: logical lines from the physical lines a log was delivered in.
 *
 * What a user pastes is rarely what the program printed. Four things are undone here, in
 * front of matching, so that every signal sees the message as it was raised (the references
 * then need no per-signal workaround):
 *   - carriage returns: a progress bar redrawn with '\r' and the error printed over it arrive
 *     as one physical line; it is split at each '\r', and of a run of bar redraws only the last
 *     is kept (what the terminal showed);
 *   - logs inside JSON or a Python repr ("log": "...\n...", RuntimeError('...\'x\'...')):
 *     a line holding a literal "\n" and a failure word is split there, and escaped quotes,
 *     backslashes, tabs and \uXXXX escapes are undone (ANSI colours given as \u001b[..m are
 *     dropped);
 *   - hard wraps: when several lines of a chunk stop at exactly the same width (a terminal's
 *     or a tracker's), mid-text, a line at that width is joined with the line after it; so is
 *     a line that ends in NCCL's " :" separator with the plain text that follows it (a paste
 *     broken between a message and its continuation, "message truncated :" / "receiving ...");
 *   - container log records: a line of Docker's json-file driver ({"log":"...","time":...})
 *     is read as its time and the line it holds, unescaped;
 *   - Markdown quotes: a log pasted into an issue as a quote ("> " before most lines) is read
 *     without the quote marks; colours that syslog wrote out as "#033[..m" are dropped;
 *   - glued launcher lines: torchrun's --tee copies each rank's file line by line, and a read
 *     that reaches the end of the file mid-line (a bar redrawn without a newline, a line not yet
 *     flushed whole) is copied at once, headed, without a newline; the next rank's headed line
 *     then continues it ("[default1]:{'loss': 1.07[default0]:{'loss': nan, ...}"). A line that
 *     begins with such a header and holds another of the same role further on is split before
 *     it, so that each rank's text is read as that rank's;
 *   - messages as posters quote them: a message inside a sentence, in backticks, **bold** or
 *     quotes ("when I run it I get `RuntimeError: ...` and then"), is read a second time as a
 *     logical line of its own after the sentence, on the same physical line and after the
 *     line's prefixes, so that a signal anchored at the message's start or end sees it as
 *     raised (diag.c counts a signal once a physical line, so nothing is counted twice); an
 *     exception's repr (RuntimeError('...')) is read as raised ("RuntimeError: ..."); a list
 *     item or heading before an exception ("- ", "1. ", "### ") is read without its markup.
 *     Only a line with a quote mark and a failure word is looked at twice;
 *   - cluster suffixes: Ray's " [repeated 3x across cluster]" is not part of the message
 *     (dx_norm_body_end, used when an anchored pattern is confirmed on a line's body).
 * A chunk that needs none of this is left alone (dx_norm_chunk returns 0) at the cost of one
 * memchr for '\r', one for '\\', a pass over line lengths and one memchr a line that holds a
 * quote mark.
 */
#include "norm.h"

#include <ctype.h>

#include "attrib.h"

#define WRAP_MIN 60  /* narrower "widths" are ordinary short lines */
#define WRAP_MAX 512 /* wider ones are not a terminal's */
#define WRAP_JOIN 16 /* at most this many physical lines joined into one */
#define SAME_START 6 /* lines starting alike are records of one shape, not a wrapped message */

/* ==== suffixes ============================================================================= */

static const char *const suffixes[] = {
    /* Ray's log deduplication (python/ray/_private/ray_logging), "[repeated 3x across cluster]" */
    " across cluster]",
};

static size_t trim_blank(const char *line, size_t start, size_t len)
{
    while (len > start && (line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    return len;
}

size_t dx_norm_body_end(const char *line, size_t start, size_t len)
{
    len = trim_blank(line, start, len);
    for (size_t i = 0; i < DX_ARRAY_LEN(suffixes); i++) {
        size_t k = strlen(suffixes[i]);
        if (len - start < k || memcmp(line + len - k, suffixes[i], k))
            continue;
        const char *open = memrchr(line + start, '[', len - k - start);
        if (open && open + 10 < line + len && !memcmp(open, "[repeated ", 10))
            return trim_blank(line, start, (size_t)(open - line));
    }
    return len;
}

/* ==== output =============================================================================== */

void dx_norm_fini(dx_norm *n)
{
    dx_buf_fini(&n->out);
    dx_buf_fini(&n->rec);
    dx_buf_fini(&n->quote);
    dx_free(n->first);
    dx_free(n->span);
    memset(n, 0, sizeof *n);
}

/* Appends one logical line as it is. */
static int put(dx_norm *n, const char *p, size_t len, uint64_t first, uint32_t span)
{
    if (n->nlines == n->cap) {
        size_t cap = n->cap ? 2 * n->cap : 256;
        uint64_t *f = dx_realloc(n->first, cap * sizeof *f);
        if (!f)
            return DDX_ENOMEM;
        n->first = f;
        uint32_t *s = dx_realloc(n->span, cap * sizeof *s);
        if (!s)
            return DDX_ENOMEM;
        n->span = s;
        n->cap = cap;
    }
    if (dx_buf_add(&n->out, p, len) || dx_buf_addc(&n->out, '\n'))
        return DDX_ENOMEM;
    n->first[n->nlines] = first;
    n->span[n->nlines++] = span;
    return DDX_OK;
}

/* ==== messages as posters quote them ======================================================== */

/* Whether p[0..len) holds a failure word: "Error", "Exception", "Traceback", "error:",
 * "FAILED", "Fatal", "FATAL", "Killed", "Signal ". This runs on every line that holds a quote,
 * so the bytes that start no word (all but a few capitals, and ':' for "error:") are skipped
 * with one table lookup each. */
static int fail_word(const char *p, size_t len)
{
    static const unsigned char lead[256] = {
        ['E'] = 1, ['F'] = 1, ['T'] = 1, ['K'] = 1, ['S'] = 1, [':'] = 1};
    static const char *const words[] = {"Error", "Exception", "Traceback", "FAILED",
                                        "Fatal", "FATAL",     "Killed",    "Signal "};
    for (size_t i = 0; i < len; i++) {
        while (i < len && !lead[(unsigned char)p[i]])
            i++;
        if (i == len)
            break;
        if (p[i] == ':') {
            if (i >= 5 && !memcmp(p + i - 5, "error", 5))
                return 1;
            continue;
        }
        for (size_t k = 0; k < DX_ARRAY_LEN(words); k++) {
            size_t wl = strlen(words[k]);
            if (words[k][0] == p[i] && wl <= len - i && !memcmp(p + i, words[k], wl))
                return 1;
        }
    }
    return 0;
}

static int word_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The length of the list or heading markup a line starts with ("- ", "* ", "+ ", "1. ", "2) ",
 * "### "), when an exception or a failure word begins what follows (is in its first two words,
 * "RuntimeError: ...", "NCCL error: ..."); 0 otherwise. */
static size_t markup_prefix(const char *p, size_t len)
{
    size_t i = 0;
    if (len < 3)
        return 0;
    if ((p[0] == '-' || p[0] == '*' || p[0] == '+') && p[1] == ' ')
        i = 2;
    else if (p[0] == '#') {
        while (i < len && i < 6 && p[i] == '#')
            i++;
        if (i >= len || p[i] != ' ')
            return 0;
        i++;
    } else if (isdigit((unsigned char)p[0])) {
        while (i < len && i < 3 && isdigit((unsigned char)p[i]))
            i++;
        if (i + 1 >= len || (p[i] != '.' && p[i] != ')') || p[i + 1] != ' ')
            return 0;
        i += 2;
    } else
        return 0;
    while (i < len && p[i] == ' ')
        i++;
    size_t w = i, words = 0;
    while (w < len && words < 2)
        words += p[w++] == ' ';
    return w > i && fail_word(p + i, w - i) ? i : 0;
}

/* The next quoted span of p[0..len) from *at: its text [*s, *e) and where it ends (*at, past
 * its closing mark); 0 when there is none. Marks: `code`, **bold**, "..." and '...'; a quote
 * opens only where no letter or digit stands before it and no blank after it, and closes only
 * where none stands after it and no blank before it (an apostrophe is no quote). */
static int next_span(const char *p, size_t len, size_t *at, size_t *s, size_t *e)
{
    static const unsigned char mark[256] = {['`'] = 1, ['*'] = 1, ['"'] = 1, ['\''] = 1};
    for (size_t i = *at; i + 2 < len; i++) {
        while (i + 2 < len && !mark[(unsigned char)p[i]])
            i++;
        if (i + 2 >= len)
            return 0;
        char c = p[i];
        if (c == '`') {
            const char *q = memchr(p + i + 1, '`', len - i - 1);
            if (!q)
                return 0;
            *s = i + 1;
            *e = (size_t)(q - p);
            *at = *e + 1;
            return 1;
        }
        if (c == '*' && p[i + 1] == '*' && p[i + 2] != '*') {
            const char *q = memmem(p + i + 2, len - i - 2, "**", 2);
            if (!q)
                return 0;
            *s = i + 2;
            *e = (size_t)(q - p);
            *at = *e + 2;
            return 1;
        }
        if ((c != '"' && c != '\'') || (i && (word_char(p[i - 1]) || p[i - 1] == c)) ||
            isspace((unsigned char)p[i + 1]) || p[i + 1] == c)
            continue;
        for (size_t k = i + 2; k < len; k++)
            if (p[k] == c && !isspace((unsigned char)p[k - 1]) &&
                (k + 1 == len || !word_char(p[k + 1]))) {
                *s = i + 1;
                *e = k;
                *at = k + 1;
                return 1;
            }
        return 0; /* an unclosed quote: what follows is prose */
    }
    return 0;
}

/* The exception name of a repr whose quoted argument starts at s ("RuntimeError('...')",
 * "torch.OutOfMemoryError(\"...\")"): its start and length; 0 when the quote follows none. */
static size_t repr_name(const char *p, size_t s, size_t *start)
{
    if (s < 7 || p[s - 2] != '(')
        return 0;
    size_t b = s - 2;
    while (b > 0 && word_char(p[b - 1]))
        b--;
    size_t nl = s - 2 - b;
    if (nl < 5 || !isupper((unsigned char)p[b]) ||
        !((nl >= 5 && !memcmp(p + s - 7, "Error", 5)) ||
          (nl >= 9 && s >= 11 && !memcmp(p + s - 11, "Exception", 9))))
        return 0;
    *start = b;
    return nl;
}

#define SPAN_MIN 8  /* a shorter span is a word in quotes, not a message */
#define SPANS_MAX 4 /* at most this many spans of one line are read */

/* Whether text (a line's body) is a source line a traceback prints for a raise or an assert:
 * its quoted message is code, read by the signals of source lines, and the message itself
 * follows in the traceback. */
static int source_line(const char *p, size_t len)
{
    while (len && (*p == ' ' || *p == '\t')) {
        p++;
        len--;
    }
    return (len > 6 && !memcmp(p, "raise ", 6)) || (len > 7 && !memcmp(p, "assert ", 7));
}

/* Appends line p[0..len) as read, then each quoted span of it that holds an exception name or a
 * failure word and a blank (a message, not a name), as a logical line of its own on the same
 * physical line, after the line's prefixes (its rank and time); an exception's repr is read as
 * Python would have raised it ("Name: text"). A line that starts with list or heading markup
 * before an exception is read without the markup. */
/* Whether the span [*s, *e) of p, as next_span found it, is a message: it is trimmed of a
 * sentence's end, and holds a blank and an exception name or a failure word (*nl 0), or is the
 * argument of an exception's repr (*nl the length of its name, at *b). */
static int span_message(const char *p, size_t *s, size_t *e, size_t *b, size_t *nl)
{
    while (*e > *s && (p[*e - 1] == ' ' || p[*e - 1] == '.' || p[*e - 1] == ','))
        (*e)--; /* "... out of memory." as a sentence's end */
    *nl = 0;
    if (*e - *s < SPAN_MIN || !memchr(p + *s, ' ', *e - *s))
        return 0;
    if (fail_word(p + *s, *e - *s))
        return 1;
    return p[*s - 1] != '`' && p[*s - 1] != '*' && (*nl = repr_name(p, *s, b)) > 0;
}

static int emit(dx_norm *n, const char *p, size_t len, uint64_t first, uint32_t span)
{
    if (!n->marked)
        return put(n, p, len, first, span);
    size_t m = markup_prefix(p, len);
    p += m;
    len -= m;
    int rc = put(n, p, len, first, span);
    if (rc || !fail_word(p, len))
        return rc;
    dx_attr a;
    dx_attrib_line(p, len, &a);
    if (a.body >= len || source_line(p + a.body, len - a.body))
        return DDX_OK;
    size_t at = a.body, s, e, b, nl, k = 0;
    while (k < SPANS_MAX && next_span(p, len, &at, &s, &e)) {
        if (!span_message(p, &s, &e, &b, &nl))
            continue;
        n->quote.n = 0;
        if (dx_buf_add(&n->quote, p, a.body) || dx_buf_add(&n->quote, p + b, nl) ||
            (nl && dx_buf_add(&n->quote, ": ", 2)) || dx_buf_add(&n->quote, p + s, e - s))
            return DDX_ENOMEM;
        if ((rc = put(n, n->quote.p, n->quote.n, first, span)))
            return rc;
        k++;
    }
    return DDX_OK;
}

/* ==== escapes ============================================================================== */

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* Appends one \uXXXX code point (the four hex digits at p) as UTF-8; 0 when p is not one. */
static int add_uescape(dx_buf *b, const char *p, size_t left)
{
    if (left < 4)
        return 0;
    unsigned cp = 0;
    for (int i = 0; i < 4; i++) {
        int v = hexval((unsigned char)p[i]);
        if (v < 0)
            return 0;
        cp = cp << 4 | (unsigned)v;
    }
    char u[3];
    size_t k;
    if (cp < 0x20 || (cp >= 0xd800 && cp < 0xe000))
        return cp == 0x1b ? -1 : 0; /* ESC: the caller drops the sequence it starts */
    if (cp < 0x80) {
        u[0] = (char)cp;
        k = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xc0 | cp >> 6);
        u[1] = (char)(0x80 | (cp & 0x3f));
        k = 2;
    } else {
        u[0] = (char)(0xe0 | cp >> 12);
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        u[2] = (char)(0x80 | (cp & 0x3f));
        k = 3;
    }
    return dx_buf_add(b, u, k) ? -2 : 1;
}

/* Emits p[0..len) with its escapes undone, split at each literal "\n" when split is set. */
static int emit_unescaped(dx_norm *n, dx_buf *tmp, const char *p, size_t len, int split,
                          uint64_t first, uint32_t span)
{
    tmp->n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (c != '\\' || i + 1 == len) {
            if (dx_buf_addc(tmp, c))
                return DDX_ENOMEM;
            continue;
        }
        char e = p[i + 1];
        if (e == 'n' && split) {
            if (!dx_blank(tmp->p, tmp->n) && emit(n, tmp->p, tmp->n, first, span))
                return DDX_ENOMEM;
            tmp->n = 0;
            i++;
            continue;
        }
        if (e == 'u') {
            int r = add_uescape(tmp, p + i + 2, len - i - 2);
            if (r == -2)
                return DDX_ENOMEM;
            if (r == 1) {
                i += 5;
                continue;
            }
            if (r == -1) { /* \u001b[...m: a colour */
                size_t j = i + 6;
                if (j < len && p[j] == '[')
                    for (j++; j < len && !isalpha((unsigned char)p[j]); j++)
                        ;
                i = j < len ? j : len - 1;
                continue;
            }
        }
        char out = e == '"' || e == '\'' || e == '\\' ? e : e == 't' ? ' ' : 0;
        if (!out) {
            if (dx_buf_addc(tmp, c))
                return DDX_ENOMEM;
            continue;
        }
        if (dx_buf_addc(tmp, out))
            return DDX_ENOMEM;
        i++;
    }
    if (tmp->n && !dx_blank(tmp->p, tmp->n))
        return emit(n, tmp->p, tmp->n, first, span);
    return DDX_OK;
}

/* Whether a line holds escapes worth undoing; *split: it is a log with literal "\n" in it. */
static int wants_unescape(const char *p, size_t len, int *split)
{
    *split = 0;
    int quote = 0, nl = 0;
    for (const char *b = memchr(p, '\\', len); b && b + 1 < p + len;
         b = memchr(b + 2, '\\', (size_t)(p + len - (b + 2)))) {
        nl |= b[1] == 'n';
        quote |= b[1] == '"' || b[1] == '\'' || b[1] == 'u';
        if (b + 2 >= p + len)
            break;
    }
    if (nl && fail_word(p, len))
        *split = 1;
    return *split || quote;
}

/* ==== carriage returns ===================================================================== */

static int bar_like(const char *p, size_t len)
{
    static const char *const marks[] = {"%|", "it/s", "s/it", "\xe2\x96\x88", "\xe2\x94\x81"};
    for (size_t i = 0; i < DX_ARRAY_LEN(marks); i++)
        if (memmem(p, len, marks[i], strlen(marks[i])))
            return 1;
    return 0;
}

/* ==== container log records ================================================================ */

/* The end of the JSON string that starts at p (just after its opening quote): its closing
 * quote, or NULL. */
static const char *json_string_end(const char *p, const char *end)
{
    for (; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p;
    }
    return NULL;
}

/* A record of Docker's json-file log driver (what `docker logs` reads, and log collectors ship):
 * {"log":"<the line, escaped, with its \n>","stream":"stderr","time":"<RFC 3339>"}. Rewritten
 * into rec as "<time> <the line, still escaped>", so that the line is read as the program
 * printed it, after a time prefix attrib.c knows. 0 when p is no such record. */
static int docker_record(dx_buf *rec, const char *p, size_t len)
{
    static const char head[] = "{\"log\":\"", when[] = "\"time\":\"";
    const char *end = p + len;
    if (len < sizeof head || memcmp(p, head, sizeof head - 1))
        return 0;
    const char *v = p + sizeof head - 1, *ve = json_string_end(v, end);
    if (!ve)
        return 0;
    rec->n = 0;
    const char *t = memmem(ve, (size_t)(end - ve), when, sizeof when - 1);
    if (t) {
        const char *ts = t + sizeof when - 1, *te = json_string_end(ts, end);
        if (te && (dx_buf_add(rec, ts, (size_t)(te - ts)) || dx_buf_addc(rec, ' ')))
            return DDX_ENOMEM;
    }
    if (dx_buf_add(rec, v, (size_t)(ve - v)))
        return DDX_ENOMEM;
    return 1;
}

/* A traceback frame with a Windows path (File "C:\Users\...\batchnorm.py", line 682): its
 * backslashes are separators, not escapes ("\nn\modules" holds no newline). The path is
 * written into tmp with slashes, as frames print everywhere else, so that frame signals read it
 * and the escape reading below leaves it alone. 1 when rewritten, 0 when p is no such frame. */
static int windows_frame(dx_buf *tmp, const char *p, size_t len)
{
    const char *f = memmem(p, len, "File \"", 6);
    if (!f)
        return 0;
    const char *q = f + 6, *end = p + len;
    if (end - q < 3 || !isalpha((unsigned char)q[0]) || q[1] != ':' ||
        (q[2] != '\\' && q[2] != '/'))
        return 0;
    const char *close = memchr(q, '"', (size_t)(end - q));
    if (!close)
        close = end;
    tmp->n = 0;
    if (dx_buf_add(tmp, p, len))
        return DDX_ENOMEM;
    for (size_t i = (size_t)(q - p); i < (size_t)(close - p); i++)
        if (tmp->p[i] == '\\')
            tmp->p[i] = '/';
    return 1;
}

static int emit_segment(dx_norm *n, dx_buf *tmp, const char *p, size_t len, uint64_t first,
                        uint32_t span)
{
    int win = memchr(p, '\\', len) ? windows_frame(tmp, p, len) : 0;
    if (win < 0)
        return win;
    if (win)
        return emit(n, tmp->p, tmp->n, first, span);
    int rec = docker_record(&n->rec, p, len);
    if (rec < 0)
        return rec;
    if (rec)
        return emit_unescaped(n, tmp, n->rec.p, n->rec.n, 1, first, span);
    int split;
    if (wants_unescape(p, len, &split))
        return emit_unescaped(n, tmp, p, len, split, first, span);
    return emit(n, p, len, first, span);
}

/* One logical line before carriage returns: its segments, of a run of bar redraws the last. */
static int emit_line(dx_norm *n, dx_buf *tmp, const char *p, size_t len, uint64_t first,
                     uint32_t span)
{
    const char *cr = memchr(p, '\r', len);
    if (!cr)
        return emit_segment(n, tmp, p, len, first, span);
    const char *end = p + len, *s = p;
    int emitted = 0;
    while (s < end) {
        const char *e = memchr(s, '\r', (size_t)(end - s));
        if (!e)
            e = end;
        size_t sl = (size_t)(e - s);
        const char *next = e < end ? e + 1 : end;
        if (!dx_blank(s, sl)) {
            /* a bar redrawn by the next non-blank segment is not what the terminal showed */
            const char *t = next;
            while (t < end) {
                const char *te = memchr(t, '\r', (size_t)(end - t));
                if (!te)
                    te = end;
                if (!dx_blank(t, (size_t)(te - t)))
                    break;
                t = te < end ? te + 1 : end;
            }
            int redrawn = t < end && bar_like(s, sl);
            if (redrawn) {
                const char *te = memchr(t, '\r', (size_t)(end - t));
                redrawn = bar_like(t, (size_t)((te ? te : end) - t));
            }
            if (!redrawn) {
                int rc = emit_segment(n, tmp, s, sl, first, span);
                if (rc)
                    return rc;
                emitted = 1;
            }
        }
        s = next;
    }
    return emitted ? DDX_OK : emit(n, "", 0, first, span);
}

/* ==== glued launcher lines =================================================================== */

/* The length of torchrun's tee header at p ("[default0]:", "[trainer12]:"; the role's letters,
 * the local rank's digits), 0 none; *role: the length of "[" and the role's letters. */
static size_t tee_header(const char *p, size_t len, size_t *role)
{
    size_t i = 1;
    if (len < 5 || p[0] != '[')
        return 0;
    while (i < len && (isalpha((unsigned char)p[i]) || p[i] == '_'))
        i++;
    size_t r = i;
    while (i < len && isdigit((unsigned char)p[i]))
        i++;
    if (r == 1 || i == r || i - r > 6 || i + 1 >= len || p[i] != ']' || p[i + 1] != ':')
        return 0;
    *role = r;
    return i + 2;
}

/* Where, after its own header, a headed line holds another header of the same role; NULL none. */
static const char *glued_header(const char *p, size_t len)
{
    size_t role, h = tee_header(p, len, &role), r2;
    if (!h)
        return NULL;
    /* each '[' after the header that starts the same role (p starts with '['): memchr finds the
     * few brackets of a line faster than memmem finds the role's text */
    const char *end = p + len;
    for (const char *q = memchr(p + h, '[', len - h); q;
         q = q + 1 < end ? memchr(q + 1, '[', (size_t)(end - q - 1)) : NULL) {
        size_t left = (size_t)(end - q);
        if (left >= role && !memcmp(q, p, role) && tee_header(q, left, &r2) && r2 == role)
            return q;
    }
    return NULL;
}

/* A line split before each glued header, each piece a logical line of its own. */
static int emit_unglued(dx_norm *n, dx_buf *tmp, const char *p, size_t len, uint64_t first,
                        uint32_t span)
{
    for (const char *g; (g = glued_header(p, len));) {
        int rc = emit_line(n, tmp, p, (size_t)(g - p), first, span);
        if (rc)
            return rc;
        len -= (size_t)(g - p);
        p = g;
    }
    return emit_line(n, tmp, p, len, first, span);
}

/* ==== hard wraps =========================================================================== */

typedef struct pline {
    const char *p;
    size_t len;      /* without trailing blanks */
    const char *end; /* where the physical line ends in the chunk (its '\n' or the chunk's end) */
    int mark;        /* it may hold a message as a poster quotes it (quotes_message) */
} pline;

static int table_end(char c)
{
    return c == '|' || c == '+' || c == '-' || c == '=' || c == '*' || c == '#' || c == ')' ||
           c == ']' || c == '}' || c == '.' || (unsigned char)c >= 0x80;
}

/* Whether physical line a (at the wrap width) continues on line b. */
static int continues(const pline *a, const pline *b)
{
    /* an indented line is a frame or a block of its own; a single blank is where the terminal
       cut the text just before a space */
    if (!b->len ||
        (isspace((unsigned char)b->p[0]) && (b->len < 2 || isspace((unsigned char)b->p[1]))) ||
        table_end(a->p[a->len - 1]))
        return 0;
    if (a->len >= SAME_START && b->len >= SAME_START && !memcmp(a->p, b->p, SAME_START))
        return 0;
    dx_attr at;
    dx_attrib_line(b->p, b->len, &at);
    return !(at.body > 0 || at.has_time);
}

/* Whether line a, which ends in NCCL's " :" separator, goes on in line b: a paste or a
 * tracker broke the message after the separator (the text never ends there, so the break is
 * not the program's), and b is plain text that starts no record of its own. */
static int colon_cut(const pline *a, const pline *b)
{
    if (a->len < 3 || a->p[a->len - 1] != ':' || a->p[a->len - 2] != ' ' || !b->len ||
        !isalnum((unsigned char)b->p[0]))
        return 0;
    if (a->len >= SAME_START && b->len >= SAME_START && !memcmp(a->p, b->p, SAME_START))
        return 0;
    dx_attr at;
    dx_attrib_line(b->p, b->len, &at);
    return !(at.body > 0 || at.has_time);
}

/* Whether line i goes on in line i + 1: cut at the chunk's wrap width w, or after a separator. */
static int joins(const pline *v, size_t i, size_t w)
{
    return (w && v[i].len == w && continues(&v[i], &v[i + 1])) || colon_cut(&v[i], &v[i + 1]);
}

/* The width the chunk's lines were hard-wrapped at, or 0: the longest length among lines of
 * WRAP_MIN..WRAP_MAX bytes, when at least two lines of that length continue on the next line
 * (one, when it cuts a word at a common terminal width). */
static size_t wrap_width(const pline *v, size_t nl)
{
    size_t w = 0;
    for (size_t i = 0; i < nl; i++)
        if (v[i].len <= WRAP_MAX && v[i].len > w)
            w = v[i].len;
    if (w < WRAP_MIN)
        return 0;
    size_t cont = 0, midword = 0;
    for (size_t i = 0; i + 1 < nl; i++)
        if (v[i].len == w && continues(&v[i], &v[i + 1])) {
            cont++;
            midword +=
                isalnum((unsigned char)v[i].p[w - 1]) && isalnum((unsigned char)v[i + 1].p[0]);
        }
    static const size_t common[] = {80, 100, 120, 132, 150, 160, 200, 240, 250};
    int is_common = 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(common); i++)
        is_common |= common[i] == w;
    return cont >= 2 || (cont == 1 && midword && is_common) ? w : 0;
}

/* ==== syslog's escapes ===================================================================== */

/* Whether s[0..n) holds "#033[" ('#' is rare in logs: memchr finds the candidates faster than
 * memmem searches). */
static int has_syslog_colour(const char *s, size_t n)
{
    for (const char *p = memchr(s, '#', n); p; p = memchr(p + 1, '#', (size_t)(s + n - p - 1)))
        if ((size_t)(s + n - p) >= 5 && !memcmp(p, "#033[", 5))
            return 1;
    return 0;
}

/* Rewrites every line of v holding "#033[" without its "#033[...X" sequences, into out (the
 * lines then point into out, which must outlive them). */
static int drop_syslog_colours(pline *v, size_t nl, dx_buf *out)
{
    size_t *off = dx_calloc(nl ? nl : 1, sizeof *off);
    if (!off)
        return DDX_ENOMEM;
    for (size_t i = 0; i < nl; i++) {
        off[i] = SIZE_MAX;
        if (!has_syslog_colour(v[i].p, v[i].len))
            continue;
        off[i] = out->n;
        size_t start = out->n;
        for (size_t k = 0; k < v[i].len; k++) {
            if (k + 5 <= v[i].len && !memcmp(v[i].p + k, "#033[", 5)) {
                size_t j = k + 5;
                while (j < v[i].len && (isdigit((unsigned char)v[i].p[j]) || v[i].p[j] == ';'))
                    j++;
                if (j < v[i].len && isalpha((unsigned char)v[i].p[j])) {
                    k = j;
                    continue;
                }
            }
            if (dx_buf_addc(out, v[i].p[k])) {
                dx_free(off);
                return DDX_ENOMEM;
            }
        }
        v[i].len = out->n - start;
    }
    for (size_t i = 0; i < nl; i++)
        if (off[i] != SIZE_MAX) {
            v[i].p = out->p ? out->p + off[i] : "";
            v[i].len = trim_blank(v[i].p, 0, v[i].len);
        }
    dx_free(off);
    return DDX_OK;
}

/* Whether p[0..len) may hold a message quoted with mark c (one of marks[]): a span that
 * next_span could give, of SPAN_MIN bytes or more, holding a blank and an exception name or a
 * failure word, or an exception's repr. A looser test than emit's (spans of other marks around
 * it are not looked at), made with memchr alone: most lines with a quote hold a path, a dict's
 * keys, a list of names. */
static int quotes_message(const char *p, size_t len, char c)
{
    const char *end = p + len;
    for (const char *o = memchr(p, c, len); o && o + 2 < end;) {
        const char *s = o + (c == '*' ? 2 : 1), *q = s;
        if (c == '*' && o[1] != '*') {
            o = memchr(o + 1, c, (size_t)(end - o - 1));
            continue;
        }
        if ((c == '"' || c == '\'') &&
            ((o > p && (word_char(o[-1]) || o[-1] == c)) || isspace((unsigned char)o[1]))) {
            o = memchr(o + 1, c, (size_t)(end - o - 1));
            continue;
        }
        /* the closing mark (a quote: with no blank before it and no letter after it) */
        for (q = memchr(s, c, (size_t)(end - s)); q; q = memchr(q + 1, c, (size_t)(end - q - 1))) {
            if (c == '`' || (c == '*' && q + 1 < end && q[1] == '*'))
                break;
            if ((c == '"' || c == '\'') && !isspace((unsigned char)q[-1]) &&
                (q + 1 == end || !word_char(q[1])))
                break;
            if (q + 1 >= end)
                q = NULL;
            if (!q)
                break;
        }
        if (!q)
            return memchr(p, '\\', len) && fail_word(p, len); /* escapes undone may close it */
        size_t b, n = (size_t)(q - s);
        if (n >= SPAN_MIN && memchr(s, ' ', n) &&
            (fail_word(s, n) || (c != '`' && c != '*' && repr_name(p, (size_t)(s - p), &b))))
            return 1;
        o = q + (c == '*' ? 2 : 1);
        o = o < end ? memchr(o, c, (size_t)(end - o)) : NULL;
    }
    return 0;
}

/* Marks the lines of v that may hold a message as a poster quotes it; 1 when one does. Each of
 * the marks is looked for over the chunk (data[0..len)), and again only once a line has passed
 * its last find, so a line that holds none costs a comparison. */
static int mark_quotes(pline *v, size_t nl, const char *data, size_t len)
{
    static const char marks[] = "`*\"'";
    const char *next[sizeof marks - 1], *end = data + len, *lo = end;
    int any = 0;
    for (size_t k = 0; k < DX_ARRAY_LEN(next); k++) {
        next[k] = memchr(data, marks[k], len);
        if (next[k] && next[k] < lo)
            lo = next[k];
    }
    for (size_t i = 0; i < nl; i++) {
        const char *p = v[i].p;
        size_t l = v[i].len;
        if (!l)
            continue;
        int hit = 0;
        if (p < data || p >= end) { /* rewritten without its colours: outside the chunk */
            for (size_t k = 0; k < DX_ARRAY_LEN(next); k++)
                hit |= memchr(p, marks[k], l) && quotes_message(p, l, marks[k]);
        } else if (lo < p + l) {
            lo = end;
            for (size_t k = 0; k < DX_ARRAY_LEN(next); k++) {
                if (next[k] && next[k] < p)
                    next[k] = memchr(p, marks[k], (size_t)(end - p));
                if (next[k] && next[k] < p + l)
                    hit = hit || quotes_message(p, l, marks[k]);
                if (next[k] && next[k] < lo)
                    lo = next[k];
            }
        }
        char c = p[0];
        int list = c == '-' || c == '*' || c == '+' || c == '#' || isdigit((unsigned char)c);
        v[i].mark = hit || (list && markup_prefix(p, l));
        any |= v[i].mark;
    }
    return any;
}

/* ==== the chunk ============================================================================ */

/* Whether data[0..len) holds a Docker record's start, {"log":" (found by its '{', which a log
 * of figures holds few of: a memmem over the chunk cost about one instruction a byte). */
static int has_docker_record(const char *data, size_t len)
{
    static const char head[] = "{\"log\":\"";
    for (const char *p = memchr(data, '{', len); p;
         p = memchr(p + 1, '{', (size_t)(data + len - p - 1)))
        if ((size_t)(data + len - p) >= sizeof head - 1 && !memcmp(p, head, sizeof head - 1))
            return 1;
    return 0;
}

int dx_norm_chunk(dx_norm *n, const char *data, size_t len, uint64_t first_line)
{
    int has_cr = memchr(data, '\r', len) != NULL;
    int has_bs = memchr(data, '\\', len) != NULL;
    /* the physical lines, in one pass (the array grows as they come) */
    size_t nl = 0, capv = len / 64 + 16;
    pline *v = dx_malloc(capv * sizeof *v);
    if (!v)
        return DDX_ENOMEM;
    size_t i = 0, quoted = 0, filled = 0;
    int glued = 0;
    for (const char *p = data; p < data + len; nl++) {
        if (dx_grow((void **)&v, &capv, nl + 1, sizeof *v)) {
            dx_free(v);
            return DDX_ENOMEM;
        }
        const char *e = memchr(p, '\n', (size_t)(data + len - p));
        size_t l = e ? (size_t)(e - p) : (size_t)(data + len - p);
        v[nl] = (pline){p, trim_blank(p, 0, l), p + l, 0};
        quoted += v[nl].len && p[0] == '>';
        filled += v[nl].len > 0;
        glued = glued || (p[0] == '[' && glued_header(p, v[nl].len));
        p += l + 1;
    }
    /* a log pasted as a Markdown quote: most lines start with '>' */
    int unquote = filled && quoted * 10 >= filled * 6;
    for (i = 0; unquote && i < nl; i++)
        if (v[i].len && v[i].p[0] == '>') {
            size_t k = v[i].len > 1 && v[i].p[1] == ' ' ? 2 : 1;
            v[i].p += k;
            v[i].len -= k;
        }
    /* a log that went through syslog (rsyslog, a journal's text export) shows the escape
       character as "#033": "#033[2m(raylet)#033[0m" is a colour, not text, and takes no
       column of the terminal's width */
    dx_buf esc = {0};
    int unesc = has_syslog_colour(data, len);
    if (unesc && drop_syslog_colours(v, nl, &esc)) {
        dx_free(v);
        return DDX_ENOMEM;
    }
    int marked = mark_quotes(v, nl, data, len);
    size_t w = wrap_width(v, nl);
    int cut = 0;
    for (i = 0; i + 1 < nl && !cut; i++)
        cut = colon_cut(&v[i], &v[i + 1]);
    /* Docker's records are looked for last, only when nothing else calls for the rewrite */
    if (!has_cr && !has_bs && !w && !unquote && !unesc && !cut && !glued && !marked &&
        !has_docker_record(data, len)) {
        dx_free(v);
        return 0;
    }
    n->out.n = 0;
    n->nlines = 0;
    dx_buf tmp = {0}, joined = {0};
    int rc = DDX_OK, changed = 0;
    for (i = 0; i < nl && !rc; i++) {
        size_t k = 1;
        while ((w || cut) && k < WRAP_JOIN && i + k < nl && joins(v, i + k - 1, w))
            k++;
        const char *p = v[i].p;
        size_t l = v[i].len; /* a line rewritten without its colours lies outside data */
        if (p >= data && p < data + len)
            l = (size_t)(v[i].end - p);
        /* its quote mark or its colours were taken off */
        changed |= p < data || p >= data + len || (p > data && p[-1] != '\n');
        if (k > 1) {
            joined.n = 0;
            for (size_t j = 0; j < k && !rc; j++) {
                /* the blank after a separator went with the line break */
                if (j && joined.n >= 2 && !memcmp(joined.p + joined.n - 2, " :", 2))
                    rc = dx_buf_addc(&joined, ' ');
                if (!rc)
                    rc = dx_buf_add(&joined, v[i + j].p, v[i + j].len);
            }
            p = joined.p;
            l = joined.n;
            changed = 1;
        }
        size_t before = n->nlines, bytes = n->out.n;
        n->marked = 0;
        for (size_t j = 0; j < k; j++)
            n->marked |= v[i + j].mark;
        if (!rc)
            rc = glued ? emit_unglued(n, &tmp, p, l, first_line + i, (uint32_t)k)
                       : emit_line(n, &tmp, p, l, first_line + i, (uint32_t)k);
        /* anything but the line itself, unchanged, is a change */
        changed |=
            n->nlines != before + 1 || n->out.n - bytes != l + 1 || memcmp(n->out.p + bytes, p, l);
        i += k - 1;
    }
    n->marked = 0;
    dx_buf_fini(&tmp);
    dx_buf_fini(&joined);
    dx_buf_fini(&esc);
    dx_free(v);
    if (rc)
        return rc;
    return changed;
}
