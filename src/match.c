/* match.c -- Vectorscan candidates, PCRE2 confirmation (the Suricata-style two-stage engine).
 *
 * Every signal pattern goes into one Vectorscan block-mode database compiled with
 * HS_FLAG_PREFILTER, so constructs Vectorscan cannot run exactly still give a superset of the
 * true matches. The match callback only records (signal, line) candidates, at most one per pair.
 * PCRE2 then confirms each candidate on its line alone and extracts named captures. PCRE2
 * patterns are compiled lazily, the first time a signal has a candidate, so start-up does not
 * pay for the hundreds of patterns a log never comes near.
 */
#include "match.h"

#include <hs/hs.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

struct dx_matcher {
    hs_database_t *db;
    int db_borrowed; /* db points into the binary's built-in image: never freed */
    size_t nsig;
    const dx_signal *const *sigs; /* [nsig], borrowed */
    pcre2_code **re;              /* [nsig], compiled on first use; NULL until then */
    unsigned char *re_bad;        /* [nsig] 1 when PCRE2 rejected the pattern */
    unsigned char *anchored;      /* [nsig] 1 when the pattern starts with ^ or ends with $ */
};

struct dx_scan {
    dx_matcher *m;
    hs_scratch_t *scratch;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    uint32_t last_sig_ok; /* the signal of the last confirmed match */
    const char *last_line;
    dx_cand *cands;
    size_t ncands, capcands;
    size_t *line_end; /* [nsig] end of the last line a signal was recorded on, +1 */
    const char *data;
    size_t len;
    int oom;
};

/* ==== building ============================================================================= */

static unsigned hs_flags(const dx_signal *s)
{
    return HS_FLAG_PREFILTER | HS_FLAG_MULTILINE | (s->caseless ? HS_FLAG_CASELESS : 0);
}

/* The pattern as Vectorscan gets it: every negated class also excludes the newline, and \s is
 * spelled as the blanks other than the newline. Matches
 * are confirmed line by line, so this changes nothing PCRE2 accepts; it works around a
 * Vectorscan 5.4 fault where a literal, a negated class of a character the literal holds and
 * that character again (`File "[^"]+", line`) stop matching once the class spans more than
 * about 64 bytes. Returns a new string, or NULL when out of memory. */
char *dx_hs_pattern(const char *p)
{
    size_t n = strlen(p);
    char *out = dx_malloc(12 * n + 32);
    if (!out)
        return NULL;
    size_t o = 0;
    int in_class = 0;
    /* a leading ^ is the start of a line's body, which may follow a launcher's or logger's
     * prefix (ending in a blank, ']', ':', ')' or '>'): PCRE2 confirms the anchor on the body.
     * (A bare unanchored form would be a superset too, but it made Vectorscan 5.4 drop another
     * signal's candidates: lint's candidate check caught it.) */
    if (p[0] == '^') {
        static const char body_start[] = "(?:^|[ \\t\\]:>)])";
        memcpy(out, body_start, sizeof body_start - 1);
        o = sizeof body_start - 1;
    }
    for (size_t i = p[0] == '^' ? 1 : 0; i < n; i++) {
        char c = p[i];
        if (c == '\\' && i + 1 < n && p[i + 1] == 's') {
            /* \s also matches the newline: a match could then end on the next line */
            const char *ws = in_class ? " \\t\\r\\f\\v" : "[ \\t\\r\\f\\v]";
            size_t k = strlen(ws);
            memcpy(out + o, ws, k);
            o += k;
            i++;
            continue;
        }
        if (c == '\\' && i + 1 < n) {
            out[o++] = c;
            out[o++] = p[++i];
            continue;
        }
        if (in_class) {
            if (c == '[' && i + 1 < n && p[i + 1] == ':') { /* [:alpha:] */
                const char *end = strstr(p + i + 2, ":]");
                if (end) {
                    size_t k = (size_t)(end - (p + i)) + 2;
                    memcpy(out + o, p + i, k);
                    o += k;
                    i += k - 1;
                    continue;
                }
            }
            if (c == ']')
                in_class = 0;
            out[o++] = c;
            continue;
        }
        if (c == '$' && i + 1 == n) {
            /* ... and a trailing $ its end, which a cluster framework's suffix or blanks may
             * follow in the line */
            static const char body_end[] = "(?:$|[ \\t])";
            memcpy(out + o, body_end, sizeof body_end - 1);
            o += sizeof body_end - 1;
            continue;
        }
        out[o++] = c;
        if (c != '[')
            continue;
        in_class = 1;
        if (i + 1 < n && p[i + 1] == '^') {
            out[o++] = p[++i];
            if (i + 1 < n && p[i + 1] == ']') /* a leading ']' is a literal */
                out[o++] = p[++i];
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (i + 1 < n && p[i + 1] == ']')
            out[o++] = p[++i];
    }
    out[o] = '\0';
    return out;
}

int dx_pattern_check(const char *pattern, int caseless, char *msg, size_t cap)
{
    int errcode;
    PCRE2_SIZE off;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
                                   caseless ? PCRE2_CASELESS : 0, &errcode, &off, NULL);
    if (!re) {
        char buf[256];
        pcre2_get_error_message(errcode, (PCRE2_UCHAR *)buf, sizeof buf);
        snprintf(msg, cap, "PCRE2 rejects the pattern at offset %zu: %s", (size_t)off, buf);
        return DDX_EFORMAT;
    }
    pcre2_code_free(re);
    hs_database_t *db = NULL;
    hs_compile_error_t *ce = NULL;
    dx_signal s = {.caseless = caseless};
    char *hp = dx_hs_pattern(pattern);
    if (!hp) {
        snprintf(msg, cap, "out of memory");
        return DDX_ENOMEM;
    }
    if (hs_compile(hp, hs_flags(&s), HS_MODE_BLOCK, NULL, &db, &ce) != HS_SUCCESS) {
        snprintf(msg, cap, "Vectorscan rejects the pattern: %s",
                 ce && ce->message ? ce->message : "unknown error");
        hs_free_compile_error(ce);
        dx_free(hp);
        return DDX_EFORMAT;
    }
    dx_free(hp);
    hs_free_database(db);
    return DDX_OK;
}

static int portable; /* compile for any x86-64 (the built-in image), not for this CPU */

void dx_matcher_portable(int on) { portable = on; }

static int compile_db(dx_matcher *m, ddx_error *err)
{
    const char **pats = dx_calloc(m->nsig, sizeof(char *));
    unsigned *flags = dx_calloc(m->nsig, sizeof(unsigned));
    unsigned *ids = dx_calloc(m->nsig, sizeof(unsigned));
    int rc = DDX_OK;
    if (!pats || !flags || !ids) {
        rc = dx_err(err, DDX_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < m->nsig; i++) {
        if (!(pats[i] = dx_hs_pattern(m->sigs[i]->pattern))) {
            rc = dx_err(err, DDX_ENOMEM, "out of memory");
            goto fail;
        }
        flags[i] = hs_flags(m->sigs[i]);
        ids[i] = (unsigned)i;
    }
    hs_compile_error_t *ce = NULL;
    hs_platform_info_t generic = {0, 0, 0, 0};
    if (hs_compile_multi(pats, flags, ids, (unsigned)m->nsig, HS_MODE_BLOCK,
                         portable ? &generic : NULL, &m->db, &ce) != HS_SUCCESS) {
        int bad = ce ? ce->expression : -1;
        if (bad >= 0 && (size_t)bad < m->nsig)
            rc = dx_err(err, DDX_EFORMAT, "signal '%s': Vectorscan rejects the pattern: %s",
                        m->sigs[bad]->id, ce->message);
        else
            rc = dx_err(err, DDX_EFORMAT, "cannot compile the pattern database: %s",
                        ce && ce->message ? ce->message : "unknown error");
        hs_free_compile_error(ce);
    }
fail:
    for (size_t i = 0; pats && i < m->nsig; i++)
        dx_free((void *)pats[i]);
    dx_free(pats);
    dx_free(flags);
    dx_free(ids);
    return rc;
}

/* Whether a pattern is anchored to the start (a leading ^) or the end (a trailing $ that is
 * not escaped) of what it matches: such a pattern is also tried on a line's body. */
static int is_anchored(const char *p)
{
    size_t n = strlen(p), bs = 0;
    if (n && p[0] == '^')
        return 1;
    if (!n || p[n - 1] != '$')
        return 0;
    for (size_t i = n - 1; i > 0 && p[i - 1] == '\\'; i--)
        bs++;
    return bs % 2 == 0;
}

int dx_matcher_new(dx_matcher **out, const dx_signal *const *sigs, size_t nsig,
                   const unsigned char *hsdb, size_t hsdb_len, ddx_error *err)
{
    dx_matcher *m = dx_calloc(1, sizeof *m);
    if (!m)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    m->nsig = nsig;
    m->sigs = sigs;
    m->re = dx_calloc(nsig ? nsig : 1, sizeof(pcre2_code *));
    m->re_bad = dx_calloc(nsig ? nsig : 1, 1);
    m->anchored = dx_calloc(nsig ? nsig : 1, 1);
    if (!m->re || !m->re_bad || !m->anchored) {
        dx_matcher_free(m);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nsig; i++)
        m->anchored[i] = is_anchored(sigs[i]->pattern);
    if (!nsig) {
        *out = m;
        return DDX_OK;
    }
    /* the built-in image is a database as Vectorscan lays it out in memory (its offsets are
     * relative), so it is used where it lies: nothing to copy or check at start-up */
    size_t have = 0;
    hs_database_t *img = (hs_database_t *)(uintptr_t)hsdb;
    char *info = NULL;
    if (hsdb && hsdb_len && ((uintptr_t)hsdb & 63) == 0 &&
        hs_database_size(img, &have) == HS_SUCCESS && have == hsdb_len &&
        hs_database_info(img, &info) == HS_SUCCESS) {
        free(info);
        m->db = img;
        m->db_borrowed = 1;
    } else {
        m->db = NULL;
        int rc = compile_db(m, err);
        if (rc) {
            dx_matcher_free(m);
            return rc;
        }
    }
    *out = m;
    return DDX_OK;
}

void dx_matcher_free(dx_matcher *m)
{
    if (!m)
        return;
    if (m->db && !m->db_borrowed)
        hs_free_database(m->db);
    for (size_t i = 0; m->re && i < m->nsig; i++)
        pcre2_code_free(m->re[i]);
    dx_free(m->re);
    dx_free(m->re_bad);
    dx_free(m->anchored);
    dx_free(m);
}

size_t dx_matcher_count(const dx_matcher *m) { return m->nsig; }

int dx_matcher_image(const dx_matcher *m, char **bytes, size_t *len, ddx_error *err)
{
    *bytes = NULL;
    *len = 0;
    if (!m->db)
        return DDX_OK;
    /* Vectorscan places the engine inside a database at the first 64-byte boundary after its
     * header, counted from the address the database was built at. A copy of the compiled
     * database is only usable at an address with the same remainder modulo 64; so the image is
     * rebuilt at a 64-byte aligned address, the alignment the generated array is declared with
     * (a plain copy of a database that malloc placed elsewhere crashes the scanner). */
    char *ser = NULL;
    size_t serlen = 0, l = 0;
    if (hs_serialize_database(m->db, &ser, &serlen) != HS_SUCCESS)
        return dx_err(err, DDX_EINVAL, "cannot serialise the pattern database");
    if (hs_serialized_database_size(ser, serlen, &l) != HS_SUCCESS) {
        free(ser);
        return dx_err(err, DDX_EINVAL, "cannot measure the pattern database");
    }
    void *img = NULL;
    if (posix_memalign(&img, 64, l) != 0) {
        free(ser);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    hs_error_t hrc = hs_deserialize_database_at(ser, serlen, (hs_database_t *)img);
    free(ser);
    size_t have = 0;
    if (hrc != HS_SUCCESS || hs_database_size((hs_database_t *)img, &have) != HS_SUCCESS ||
        have != l) {
        free(img);
        return dx_err(err, DDX_EINVAL, "cannot lay out the pattern database image");
    }
    *bytes = img; /* freed with dx_free (free) like any other allocation */
    *len = l;
    return DDX_OK;
}

/* ==== scanning ============================================================================= */

int dx_scan_new(dx_scan **out, dx_matcher *m, ddx_error *err)
{
    dx_scan *s = dx_calloc(1, sizeof *s);
    if (!s)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    s->m = m;
    s->line_end = dx_calloc(m->nsig ? m->nsig : 1, sizeof(size_t));
    s->md = pcre2_match_data_create(32, NULL);
    s->mctx = pcre2_match_context_create(NULL);
    if (!s->line_end || !s->md || !s->mctx ||
        (m->db && hs_alloc_scratch(m->db, &s->scratch) != HS_SUCCESS)) {
        dx_scan_free(s);
        return dx_err(err, DDX_ENOMEM, "out of memory for the scan scratch space");
    }
    pcre2_set_match_limit(s->mctx, 200000);
    pcre2_set_depth_limit(s->mctx, 5000);
    *out = s;
    return DDX_OK;
}

void dx_scan_free(dx_scan *s)
{
    if (!s)
        return;
    if (s->scratch)
        hs_free_scratch(s->scratch);
    pcre2_match_data_free(s->md);
    pcre2_match_context_free(s->mctx);
    dx_free(s->cands);
    dx_free(s->line_end);
    dx_free(s);
}

static int on_match(unsigned int id, unsigned long long from, unsigned long long to,
                    unsigned int flags, void *ctx)
{
    (void)from;
    (void)flags;
    dx_scan *s = ctx;
    /* the line is the one holding the last matched byte: a prefilter approximation may have
     * matched the newline itself (a trailing \s or [^x]) */
    size_t pos = to ? (size_t)to - 1 : 0;
    if (pos >= s->len)
        pos = s->len ? s->len - 1 : 0;
    if (pos < s->line_end[id])
        return 0; /* this signal already has a candidate on this line */
    const char *nl = memchr(s->data + pos, '\n', s->len - pos);
    size_t lend = nl ? (size_t)(nl - s->data) : s->len;
    s->line_end[id] = lend + 1;
    size_t start = 0;
    if (pos > 0) {
        const char *prev = memrchr(s->data, '\n', pos);
        start = prev ? (size_t)(prev - s->data) + 1 : 0;
    }
    if (dx_grow((void **)&s->cands, &s->capcands, s->ncands + 1, sizeof(dx_cand)) != DDX_OK) {
        s->oom = 1;
        return 1;
    }
    s->cands[s->ncands++] = (dx_cand){start, lend, id};
    return 0;
}

static int cmp_cand(const void *a, const void *b)
{
    const dx_cand *x = a, *y = b;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->sig < y->sig ? -1 : x->sig > y->sig;
}

int dx_scan_chunk(dx_scan *s, const char *data, size_t len, const dx_cand **cands, size_t *ncands,
                  ddx_error *err)
{
    s->ncands = 0;
    *cands = s->cands;
    *ncands = 0;
    if (!s->m->db || !len)
        return DDX_OK;
    memset(s->line_end, 0, s->m->nsig * sizeof(size_t));
    s->data = data;
    s->len = len;
    s->oom = 0;
    size_t off = 0;
    /* hs_scan takes an unsigned int length */
    while (off < len) {
        size_t n = len - off;
        if (n > (1u << 30))
            n = 1u << 30;
        hs_error_t rc = hs_scan(s->m->db, data + off, (unsigned)n, 0, s->scratch, on_match, s);
        if (rc != HS_SUCCESS && rc != HS_SCAN_TERMINATED)
            return dx_err(err, DDX_EIO, "pattern scan failed (Vectorscan error %d)", (int)rc);
        if (s->oom)
            return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
        off += n;
    }
    if (s->ncands > 1)
        qsort(s->cands, s->ncands, sizeof(dx_cand), cmp_cand);
    *cands = s->cands;
    *ncands = s->ncands;
    return DDX_OK;
}

int dx_scan_confirm_line(dx_scan *s, uint32_t sig, const char *line, size_t len, size_t body,
                         size_t body_len)
{
    if (dx_scan_confirm(s, sig, line, len))
        return 1;
    if (sig >= s->m->nsig || !s->m->anchored[sig] || (body == 0 && body_len == len) || body > len ||
        body_len > len - body)
        return 0;
    return dx_scan_confirm(s, sig, line + body, body_len);
}

int dx_scan_confirm(dx_scan *s, uint32_t sig, const char *line, size_t len)
{
    dx_matcher *m = s->m;
    if (sig >= m->nsig || m->re_bad[sig])
        return 0;
    if (!m->re[sig]) {
        int ec;
        PCRE2_SIZE eo;
        const dx_signal *sg = m->sigs[sig];
        m->re[sig] = pcre2_compile((PCRE2_SPTR)sg->pattern, PCRE2_ZERO_TERMINATED,
                                   sg->caseless ? PCRE2_CASELESS : 0, &ec, &eo, NULL);
        if (!m->re[sig]) {
            m->re_bad[sig] = 1;
            return 0;
        }
        pcre2_jit_compile(m->re[sig], PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    }
    int rc = pcre2_match(m->re[sig], (PCRE2_SPTR)line, len, 0, 0, s->md, s->mctx);
    if (rc < 0)
        return 0;
    s->last_sig_ok = sig;
    s->last_line = line;
    return 1;
}

int dx_scan_capture_at(dx_scan *s, size_t i, const char **name, dx_str *value)
{
    pcre2_code *re = s->m->re[s->last_sig_ok];
    uint32_t count = 0, entry = 0;
    PCRE2_SPTR table;
    if (!re || pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count) != 0 || i >= count)
        return 0;
    pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &entry);
    pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &table);
    PCRE2_SPTR e = table + i * entry;
    uint32_t group = ((uint32_t)e[0] << 8) | e[1];
    *name = (const char *)(e + 2);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
    uint32_t npairs = pcre2_get_ovector_count(s->md);
    if (group >= npairs || ov[2 * group] == PCRE2_UNSET) {
        value->p = NULL;
        value->n = 0;
    } else {
        value->p = s->last_line + ov[2 * group];
        value->n = ov[2 * group + 1] - ov[2 * group];
    }
    return 1;
}

int dx_scan_capture(dx_scan *s, const char *name, dx_str *out)
{
    const char *nm;
    dx_str v;
    for (size_t i = 0; dx_scan_capture_at(s, i, &nm, &v); i++)
        if (!strcmp(nm, name) && v.p) {
            *out = v;
            return 1;
        }
    return 0;
}
