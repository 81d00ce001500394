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

#include <ctype.h>
#include <stdatomic.h>
#include <strings.h>

#include <hs/hs.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

struct dx_matcher {
    hs_database_t *db;
    int db_borrowed; /* db points into the binary's built-in image: never freed */
    size_t nsig;
    const dx_signal *const *sigs; /* [nsig], borrowed */
    /* [nsig] compiled on first use, by whichever thread needs it first (the others then use
       that one); NULL until then */
    _Atomic(pcre2_code *) *re;
    _Atomic(unsigned char) *re_bad; /* [nsig] 1 when PCRE2 rejected the pattern */
    unsigned char *anchored;        /* [nsig] 1 when the pattern starts with ^ or ends with $ */
    /* the signals with a prefilter of their own (kept out of db), and their prefilters */
    uint32_t *native;
    dx_prefilter_fn *native_fn;
    size_t nnative;
    /* [nsig] the signal's hand-written matcher (see "hand-written matchers"), NULL: PCRE2 */
    const struct hand_matcher **hand;
    /* whether every expression and prefilter is digit-blind (the shape cache): 0 not known yet,
       1 yes, 2 no */
    _Atomic int blind;
};

/* the shape cache (see "the shape cache" below) */
#define SHAPE_SLOTS 4096u    /* shapes kept (a power of two) */
#define SHAPE_WAYS 4u        /* a shape is kept in one of the 4 slots its hash names */
#define SHAPE_MAX 1024u      /* longer lines are scanned */
#define SHAPE_MIN_LINES 64u  /* a chunk of fewer lines is scanned whole */
#define SHAPE_BLOCK 256u     /* lines looked up, then scanned, then kept, at a time */
#define SHAPE_SKIP 4u        /* chunks scanned whole after one whose shapes rarely repeated */
#define LINE_MISS UINT32_MAX /* a line of no kept shape (its hash in lh) */
#define LINE_LONG (UINT32_MAX - 1)

typedef struct shape_ent {
    uint64_t h; /* its hash; 0: the slot is empty */
    uint32_t len, nsig;
    uint64_t used;  /* when it was last kept or reused (the scan's clock) */
    char *text;     /* the shape [len] (and room for a word's overrun) */
    uint32_t *sigs; /* [nsig] its line's candidates, in order */
    size_t captext, capsig;
} shape_ent;

struct dx_scan {
    dx_matcher *m;
    hs_scratch_t *scratch;
    pcre2_match_data *md;
    pcre2_match_context *mctx;
    uint32_t last_sig_ok;  /* the signal of the last confirmed match */
    const char *last_line; /* where its subject starts (the line, or the line's body) */
    /* its capture offsets from last_line, start and end of each group (UINT32_MAX: unset): a
       copy of PCRE2's, or a match another scan confirmed and this one replays */
    uint32_t own[2 * DX_SCAN_PAIRS];
    const uint32_t *ov;
    size_t npairs;
    /* the named-group table of signal names_sig (UINT32_MAX none yet), read once per signal
       change rather than on every capture asked for */
    uint32_t names_sig, names_count, names_entry;
    PCRE2_SPTR names;
    dx_cand *cands;
    size_t ncands, capcands;
    dx_cand *merged; /* where the native candidates are merged with Vectorscan's */
    size_t capmerged;
    size_t *line_end; /* [nsig] end of the last line a signal was recorded on, +1 */
    const char *data;
    size_t len;
    size_t base; /* where in data the scan being run starts */
    int oom;
    /* the shape cache (see "the shape cache"): SHAPE_SLOTS shapes, allocated on first use */
    shape_ent *shapes;
    uint32_t *lstat; /* [lines of the chunk] the slot of its shape, LINE_MISS or LINE_LONG */
    uint64_t *lh;    /* [lines of the chunk] a new shape's hash */
    size_t caplstat, caplh;
    char mask[SHAPE_MAX + 8]; /* the shape of the line being looked up */
    int shape_mode;           /* DX_SHAPES_ */
    unsigned shape_skip;      /* chunks still to scan whole */
    uint64_t shape_chunks, shape_hits, shape_lines, shape_clock;
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

/* ==== fast patterns ========================================================================
 *
 * Suricata's "fast pattern": most signals hold a literal that every match contains ("Watchdog
 * caught collective operation timeout"); Vectorscan finds such literals far faster than it runs
 * the whole prefilter of the pattern (a literal set compiles to FDR or Teddy alone, with no rose
 * program or NFA behind it). So each signal goes into the database either as the strongest set of
 * literals one of which every match of it contains (each literal its own expression, with the
 * signal's number as its id), or, when it has no strong enough set, as the pattern itself in
 * prefilter mode. Either way the candidates stay a superset of the lines PCRE2 matches: a
 * literal is only taken from text every match must hold, and PCRE2 confirms every candidate.
 *
 * The analysis reads the PCRE2 syntax the references use: literal characters and escapes, \Q..\E,
 * small classes ([Ss], [-_]), groups and alternations (their strings multiplied out while the set
 * stays small), quantifiers. Anything it does not know (inline options, conditionals, verbs)
 * leaves the pattern to the prefilter. A literal is weak when it is short or a word every log is
 * full of ("rank", "step", "error"); a weak set also leaves the pattern to the prefilter, whose
 * full regex rejects most of the lines such a word is on. */

#define FP_SET 16   /* strings in one literal set */
#define FP_LEN 96   /* bytes of one literal */
#define FP_DEPTH 24 /* nested groups */
#define FP_MIN_SCORE 40

typedef struct fp_set {
    size_t n;
    unsigned char len[FP_SET];
    unsigned char icase[FP_SET]; /* matched without regard to ASCII case */
    char s[FP_SET][FP_LEN];
} fp_set;

/* What an item, a sequence or an alternation matches: exactly one string of ex (when exact),
 * and a text that contains one string of req (when has_req). */
typedef struct fp_res {
    int exact, has_req;
    fp_set ex, req;
} fp_res;

typedef struct fp_ctx {
    const char *p;
    size_t n, i;
    int icase; /* the signal is caseless */
    int bad;   /* syntax the analysis does not know */
} fp_ctx;

/* Words that fill healthy logs: a literal that is one of them (whatever its case) finds a
 * candidate on most lines. */
static const char *const fp_common[] = {
    "batch", "cuda",  "data",  "debug",   "epoch", "error",   "info", "iter", "iteration",
    "line",  "loss",  "model", "nccl",    "node",  "process", "rank", "step", "time",
    "torch", "train", "warn",  "warning", "world", "size",    "file", "with", "from",
};

static int fp_is_common(const char *s, size_t n)
{
    for (size_t k = 0; k < DX_ARRAY_LEN(fp_common); k++)
        if (strlen(fp_common[k]) == n && !strncasecmp(s, fp_common[k], n))
            return 1;
    return 0;
}

/* How good a set is as a fast pattern: its weakest string decides. */
static int fp_score(const fp_set *s)
{
    if (!s->n)
        return -1;
    int worst = INT32_MAX;
    for (size_t k = 0; k < s->n; k++) {
        size_t len = s->len[k], letters = 0;
        for (size_t j = 0; j < len; j++)
            letters += isalnum((unsigned char)s->s[k][j]) != 0;
        int v = (int)len * 10 - (s->icase[k] ? 4 : 0);
        /* the word alone, or the word and a blank: as common as the word */
        size_t core = len;
        while (core && !isalnum((unsigned char)s->s[k][core - 1]))
            core--;
        size_t start = 0;
        while (start < core && !isalnum((unsigned char)s->s[k][start]))
            start++;
        if (fp_is_common(s->s[k] + start, core - start))
            v = (int)(core - start) * 3;
        if (!letters)
            v /= 2; /* punctuation and digits: "]: ", "%|" */
        if (v < worst)
            worst = v;
    }
    return worst - (int)s->n; /* fewer strings scan a little faster */
}

static void fp_one(fp_set *s, const char *p, size_t n, int icase)
{
    s->n = 1;
    memcpy(s->s[0], p, n);
    s->len[0] = (unsigned char)n;
    s->icase[0] = (unsigned char)icase;
}

/* a x b: every string of a followed by every string of b; 0 when it would not fit */
static int fp_cross(fp_set *a, const fp_set *b)
{
    if (a->n * b->n > FP_SET)
        return 0;
    fp_set out = {0};
    for (size_t i = 0; i < a->n; i++)
        for (size_t j = 0; j < b->n; j++) {
            if (a->len[i] + b->len[j] > FP_LEN)
                return 0;
            size_t k = out.n++;
            memcpy(out.s[k], a->s[i], a->len[i]);
            memcpy(out.s[k] + a->len[i], b->s[j], b->len[j]);
            out.len[k] = (unsigned char)(a->len[i] + b->len[j]);
            out.icase[k] = a->icase[i] | b->icase[j];
        }
    *a = out;
    return 1;
}

/* a + b (the union); 0 when it would not fit */
static int fp_union(fp_set *a, const fp_set *b)
{
    for (size_t j = 0; j < b->n; j++) {
        int dup = 0;
        for (size_t i = 0; i < a->n && !dup; i++)
            dup = a->len[i] == b->len[j] && a->icase[i] == b->icase[j] &&
                  !memcmp(a->s[i], b->s[j], b->len[j]);
        if (dup)
            continue;
        if (a->n == FP_SET)
            return 0;
        size_t k = a->n++;
        memcpy(a->s[k], b->s[j], b->len[j]);
        a->len[k] = b->len[j];
        a->icase[k] = b->icase[j];
    }
    return 1;
}

/* Keeps the better of *best and s as the required set. */
static void fp_offer(fp_res *r, const fp_set *s)
{
    if (!s->n || (s->n == 1 && !s->len[0]))
        return;
    if (!r->has_req || fp_score(s) > fp_score(&r->req)) {
        r->req = *s;
        r->has_req = 1;
    }
}

static void fp_alt(fp_ctx *c, fp_res *out, int depth);

/* A quantifier after an item: its least count (-1: none there), and whether it is exactly 1. */
static int fp_quant(fp_ctx *c, long *min, long *max)
{
    *min = *max = 1;
    if (c->i >= c->n)
        return 0;
    char q = c->p[c->i];
    if (q == '?' || q == '*' || q == '+') {
        *min = q == '+';
        *max = q == '?' ? 1 : -1;
        c->i++;
    } else if (q == '{') {
        size_t j = c->i + 1;
        long lo = 0, hi = -1;
        int dig = 0;
        while (j < c->n && isdigit((unsigned char)c->p[j]) && lo < 100000)
            lo = lo * 10 + (c->p[j++] - '0'), dig = 1;
        if (j < c->n && c->p[j] == '}' && dig) {
            hi = lo;
        } else if (j < c->n && c->p[j] == ',') {
            j++;
            int dig2 = 0;
            long h = 0;
            while (j < c->n && isdigit((unsigned char)c->p[j]) && h < 100000)
                h = h * 10 + (c->p[j++] - '0'), dig2 = 1;
            if (!(j < c->n && c->p[j] == '}') || (!dig && !dig2))
                return 0; /* a literal '{' */
            hi = dig2 ? h : -1;
        } else {
            return 0;
        }
        c->i = j + 1;
        *min = lo;
        *max = hi;
    } else {
        return 0;
    }
    if (c->i < c->n && (c->p[c->i] == '?' || c->p[c->i] == '+'))
        c->i++; /* lazy or possessive: the same texts */
    return 1;
}

/* A class "[...]": exact when it lists at most 4 plain characters, or a letter in both cases. */
static void fp_class(fp_ctx *c, fp_res *r)
{
    size_t j = c->i + 1;
    int neg = j < c->n && c->p[j] == '^';
    if (neg)
        j++;
    char chars[8];
    size_t nch = 0;
    int plain = !neg;
    if (j < c->n && c->p[j] == ']') {
        chars[nch++] = ']';
        j++;
    }
    while (j < c->n && c->p[j] != ']') {
        char ch = c->p[j];
        if (ch == '[' && j + 1 < c->n && c->p[j + 1] == ':') {
            const char *e = strstr(c->p + j + 2, ":]");
            if (!e) {
                c->bad = 1;
                return;
            }
            j = (size_t)(e - c->p) + 2;
            plain = 0;
            continue;
        }
        if (ch == '\\' && j + 1 < c->n) {
            char e = c->p[j + 1];
            j += 2;
            if (isalnum((unsigned char)e)) {
                if (e == 'x' || e == 'p' || e == 'P') { /* skip what follows: not plain */
                    plain = 0;
                    continue;
                }
                plain = 0;
                continue;
            }
            ch = e;
        } else {
            if (ch == '-' && nch && j + 1 < c->n && c->p[j + 1] != ']')
                plain = 0; /* a range */
            j++;
        }
        if (nch < sizeof chars)
            chars[nch++] = ch;
        else
            plain = 0;
    }
    if (j >= c->n) {
        c->bad = 1;
        return;
    }
    c->i = j + 1;
    r->exact = 0;
    if (!plain || !nch || nch > 4)
        return;
    if (nch == 2 && isalpha((unsigned char)chars[0]) && chars[0] != chars[1] &&
        tolower((unsigned char)chars[0]) == tolower((unsigned char)chars[1])) {
        char lo = (char)tolower((unsigned char)chars[0]);
        fp_one(&r->ex, &lo, 1, 1);
        r->exact = 1;
        return;
    }
    r->ex.n = 0;
    for (size_t k = 0; k < nch; k++) {
        if (chars[k] == '\n')
            return;
        fp_set one;
        fp_one(&one, &chars[k], 1, c->icase);
        fp_union(&r->ex, &one);
    }
    r->exact = 1;
}

/* One item (without its quantifier): a character, an escape, a class, a group. Sets r; a
 * zero-width item (an anchor, a lookaround) is exact with the empty string. */
static void fp_item(fp_ctx *c, fp_res *r, int depth)
{
    memset(r, 0, sizeof *r);
    char ch = c->p[c->i];
    if (ch == '[') {
        fp_class(c, r);
        return;
    }
    if (ch == '(') {
        c->i++;
        int look = 0;
        if (c->i < c->n && c->p[c->i] == '?') {
            const char *q = c->p + c->i + 1;
            size_t left = c->n - c->i - 1;
            if (left && (q[0] == ':' || q[0] == '>' || q[0] == '|')) {
                c->i += 2;
            } else if (left && (q[0] == '=' || q[0] == '!')) {
                c->i += 2;
                look = 1;
            } else if (left >= 2 && q[0] == '<' && (q[1] == '=' || q[1] == '!')) {
                c->i += 3;
                look = 1;
            } else if (left &&
                       (q[0] == '<' || q[0] == '\'' || (q[0] == 'P' && left > 1 && q[1] == '<'))) {
                char close = q[0] == '\'' ? '\'' : '>';
                const char *e = memchr(q, close, left);
                if (!e) {
                    c->bad = 1;
                    return;
                }
                c->i = (size_t)(e - c->p) + 1;
            } else if (left && q[0] == '#') {
                const char *e = memchr(q, ')', left);
                if (!e) {
                    c->bad = 1;
                    return;
                }
                c->i = (size_t)(e - c->p) + 1;
                r->exact = 1;
                r->ex.n = 1; /* the empty string */
                return;
            } else {
                c->bad = 1; /* inline options, conditionals, recursion, backreferences by name */
                return;
            }
        } else if (c->i < c->n && c->p[c->i] == '*') {
            c->bad = 1; /* (*VERB) */
            return;
        }
        if (depth >= FP_DEPTH) {
            c->bad = 1;
            return;
        }
        fp_alt(c, r, depth + 1);
        if (c->bad || c->i >= c->n || c->p[c->i] != ')') {
            c->bad = 1;
            return;
        }
        c->i++;
        if (look) { /* zero width: it adds no text to the match */
            memset(r, 0, sizeof *r);
            r->exact = 1;
            r->ex.n = 1;
        }
        return;
    }
    if (ch == '^' || ch == '$') {
        c->i++;
        r->exact = 1;
        r->ex.n = 1;
        return;
    }
    if (ch == '.') {
        c->i++;
        return;
    }
    if (ch == '\\') {
        if (c->i + 1 >= c->n) {
            c->bad = 1;
            return;
        }
        char e = c->p[c->i + 1];
        c->i += 2;
        if (!isalnum((unsigned char)e)) {
            fp_one(&r->ex, &e, 1, c->icase);
            r->exact = 1;
            return;
        }
        static const char zero[] = "bBAzZGK";
        static const char any[] = "dDwWsShHvVNRX";
        if (strchr(zero, e)) {
            r->exact = 1;
            r->ex.n = 1;
            return;
        }
        if (strchr(any, e))
            return;
        if (e == 't' || e == 'r' || e == 'f' || e == 'e' || e == 'a') {
            char v = e == 't' ? '\t' : e == 'r' ? '\r' : e == 'f' ? '\f' : e == 'e' ? 0x1b : 0x07;
            fp_one(&r->ex, &v, 1, 0);
            r->exact = 1;
            return;
        }
        if (e == 'Q') {
            const char *end = NULL;
            for (size_t j = c->i; j + 1 < c->n && !end; j++)
                if (c->p[j] == '\\' && c->p[j + 1] == 'E')
                    end = c->p + j;
            size_t len = (size_t)((end ? end : c->p + c->n) - (c->p + c->i));
            if (len > FP_LEN || memchr(c->p + c->i, '\n', len)) {
                c->bad = 1;
                return;
            }
            fp_one(&r->ex, c->p + c->i, len, c->icase);
            r->exact = 1;
            c->i += len + (end ? 2 : 0);
            return;
        }
        if ((e == 'p' || e == 'P') && c->i < c->n && c->p[c->i] == '{') {
            const char *end = memchr(c->p + c->i, '}', c->n - c->i);
            if (!end) {
                c->bad = 1;
                return;
            }
            c->i = (size_t)(end - c->p) + 1;
            return;
        }
        if ((isdigit((unsigned char)e) && e != '0') || e == 'n')
            return; /* a backreference, or a newline (no line holds one): some text */
        c->bad = 1; /* \x, \o, \c, \g, \k and the rest: not read here */
        return;
    }
    if (ch == '|' || ch == ')' || ch == '*' || ch == '+' || ch == '?') {
        c->bad = 1;
        return;
    }
    c->i++;
    if (ch == '\n')
        return;
    fp_one(&r->ex, &ch, 1, c->icase);
    r->exact = 1;
}

/* A sequence of items up to '|', ')' or the end. */
static void fp_seq(fp_ctx *c, fp_res *out, int depth)
{
    memset(out, 0, sizeof *out);
    fp_set run;
    run.n = 1;
    run.len[0] = 0;
    run.icase[0] = 0;
    int exact = 1;
    while (c->i < c->n && c->p[c->i] != '|' && c->p[c->i] != ')' && !c->bad) {
        fp_res it;
        fp_item(c, &it, depth);
        if (c->bad)
            return;
        long min, max;
        fp_quant(c, &min, &max);
        if (min == 1 && max == 1 && it.exact) {
            if (!fp_cross(&run, &it.ex)) {
                fp_offer(out, &run);
                run = it.ex;
            }
            continue;
        }
        exact = 0;
        if (min >= 1 && it.exact) {
            /* x+ or x{n,}: run then one x is required, and the last x starts the next run */
            fp_set r2 = run;
            if (fp_cross(&r2, &it.ex))
                fp_offer(out, &r2);
            fp_offer(out, &run);
            run = it.ex;
            continue;
        }
        fp_offer(out, &run);
        run.n = 1;
        run.len[0] = 0;
        run.icase[0] = 0;
        if (min >= 1 && it.has_req)
            fp_offer(out, &it.req);
    }
    fp_offer(out, &run);
    out->exact = exact;
    if (exact)
        out->ex = run;
}

/* Alternatives up to ')' or the end: exact when every one is; required when every one has a
 * required set (their union). */
static void fp_alt(fp_ctx *c, fp_res *out, int depth)
{
    memset(out, 0, sizeof *out);
    int first = 1;
    for (;;) {
        fp_res b;
        fp_seq(c, &b, depth);
        if (c->bad)
            return;
        if (first) {
            *out = b;
            first = 0;
        } else {
            out->exact = out->exact && b.exact && fp_union(&out->ex, &b.ex);
            out->has_req = out->has_req && b.has_req && fp_union(&out->req, &b.req);
        }
        if (c->i < c->n && c->p[c->i] == '|') {
            c->i++;
            continue;
        }
        return;
    }
}

/* The fast pattern of a signal: its literal set in *out when a strong one exists (1), else 0. */
static int fp_literals(const char *pattern, int caseless, fp_set *out)
{
    fp_ctx c = {pattern, strlen(pattern), 0, caseless, 0};
    fp_res r;
    fp_alt(&c, &r, 0);
    if (c.bad || c.i != c.n || !r.has_req || fp_score(&r.req) < FP_MIN_SCORE)
        return 0;
    *out = r.req;
    return 1;
}

static int portable; /* compile for any x86-64 (the built-in image), not for this CPU */

void dx_matcher_portable(int on) { portable = on; }

/* A literal as a Vectorscan expression: letters and digits as they are, every other byte as
 * \xHH. Returns a new string, or NULL when out of memory. */
static char *fp_expression(const char *s, size_t n)
{
    char *out = dx_malloc(4 * n + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (isalnum(ch) && ch < 0x80) {
            out[o++] = (char)ch;
        } else {
            static const char hex[] = "0123456789abcdef";
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[ch >> 4];
            out[o++] = hex[ch & 15];
        }
    }
    out[o] = '\0';
    return out;
}

int dx_pattern_literals(const char *pattern, int caseless, dx_buf *out)
{
    fp_set set;
    if (!fp_literals(pattern, caseless, &set))
        return 0;
    for (size_t k = 0; k < set.n; k++)
        if (dx_buf_add(out, set.s[k], set.len[k]) ||
            dx_buf_add(out, set.icase[k] ? " (any case)\n" : "\n", set.icase[k] ? 12 : 1))
            return DDX_ENOMEM;
    return (int)set.n;
}

/* The expressions of the database: each signal's fast-pattern literals, or its prefilter. */
typedef struct exprs {
    char **pats;
    unsigned *flags, *ids;
    size_t n, cap;
} exprs;

static int expr_add(exprs *e, char *pat, unsigned flags, unsigned id)
{
    if (!pat)
        return DDX_ENOMEM;
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 256;
        char **p = dx_realloc(e->pats, cap * sizeof *p);
        if (!p) {
            dx_free(pat);
            return DDX_ENOMEM;
        }
        e->pats = p;
        unsigned *f = dx_realloc(e->flags, cap * sizeof *f);
        if (!f) {
            dx_free(pat);
            return DDX_ENOMEM;
        }
        e->flags = f;
        unsigned *d = dx_realloc(e->ids, cap * sizeof *d);
        if (!d) {
            dx_free(pat);
            return DDX_ENOMEM;
        }
        e->ids = d;
        e->cap = cap;
    }
    e->pats[e->n] = pat;
    e->flags[e->n] = flags;
    e->ids[e->n++] = id;
    return DDX_OK;
}

/* Where the part of a pattern after its last unbounded gap at the top level starts (".*" or
 * "[^\n]*", lazy or not), or NULL when it has none worth cutting at. Every match of the pattern
 * ends with a match of that part, on the same line, so the part alone proposes a superset of the
 * pattern's candidate lines (PCRE2 confirms the whole pattern), without the gap's states: a gap
 * after a frequent word keeps an NFA live to the end of every line holding the word. Not cut: a
 * pattern with a top-level alternative, an inline option or a back reference (the part would
 * mean something else), or a part too short to be selective. */
static const char *gap_suffix(const char *p)
{
    static const char line_gap[] = "[^\\n]*";
    const char *cut = NULL;
    int depth = 0;
    for (const char *c = p; *c; c++) {
        if (*c == '\\') {
            if ((c[1] >= '1' && c[1] <= '9') || c[1] == 'k' || c[1] == 'g')
                return NULL;
            c += c[1] != '\0';
            continue;
        }
        const char *gap_end = NULL;
        if (*c == '[') {
            if (!depth && !strncmp(c, line_gap, sizeof line_gap - 1))
                gap_end = c + sizeof line_gap - 1;
            const char *e = c + 1 + (c[1] == '^');
            e += *e == ']';
            for (; *e && *e != ']'; e++)
                e += *e == '\\' && e[1];
            if (!*e)
                return NULL;
            c = e;
        } else if (*c == '(') {
            if (c[1] == '?' && !strchr(":<=!>|P", c[2]))
                return NULL; /* (?i) and the like */
            depth++;
        } else if (*c == ')') {
            depth--;
        } else if (*c == '|' && !depth) {
            return NULL;
        } else if (*c == '.' && c[1] == '*' && !depth) {
            gap_end = c + 2;
        }
        if (gap_end) {
            cut = gap_end + (*gap_end == '?' || *gap_end == '+');
            c = cut - 1;
        }
    }
    return cut && strlen(cut) >= 12 ? cut : NULL;
}

/* ==== digit-blind expressions ===============================================================
 *
 * A trainer's lines repeat a handful of shapes: the same text with other numbers in it. The scan
 * keeps, per shape (the line with every digit read as '0'), the candidates a line of that shape
 * got, and gives them to the next line of the shape without scanning it (the shape cache,
 * below). That is exact only if no expression of the database can tell one digit from another:
 * then two lines that differ only in their digits' values get the same candidates. So every
 * expression is made digit-blind as it is added, and the candidates stay a superset of the lines
 * PCRE2 matches (PCRE2 still confirms each candidate on its own text): a digit in a literal
 * becomes \d, a class holding some digits but not all gets all ten (a negated one becomes "any
 * byte but the newline"), a \x escape naming a digit becomes \d. A quantifier's counts ({20,})
 * and a group's name ((?<r1>...)) keep their digits: they name no byte. What this reading does
 * not know (a back reference, an octal escape, \p, \Q, a conditional) is left as it is and makes
 * the expression unsure: a matcher with an unsure expression keeps no shape cache. test_scan.c
 * checks that the built-in database's expressions are all blind, and that lines of a cached
 * shape get the candidates a scan of each gives. */

#define ALL_DIGITS 0x3ffu

/* The digits (bit d for '0' + d) in the byte range lo..hi. */
static unsigned digits_in(unsigned lo, unsigned hi)
{
    unsigned d = 0;
    for (unsigned v = lo < '0' ? '0' : lo; v <= hi && v <= '9'; v++)
        d |= 1u << (v - '0');
    return d;
}

static int hex_val(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The escape at p[i] ('\\'): its length; *value the byte it names, or -1 for a set of bytes or an
 * assertion (its digits in *digits: all or none), or -2 for one this reading does not know. */
static size_t escape_at(const char *p, size_t i, int *value, unsigned *digits)
{
    static const char named[] = "ntrfea"; /* escapes naming one byte, and the bytes */
    static const unsigned char named_byte[] = {'\n', '\t', '\r', '\f', 27, 7};
    char c = p[i + 1];
    *digits = 0;
    *value = -1;
    if (c == 'x') {
        size_t k = i + 2;
        unsigned v = 0;
        if (p[k] == '{') {
            for (k++; hex_val(p[k]) >= 0; k++)
                v = (v * 16 + (unsigned)hex_val(p[k])) & 0xfff;
            if (p[k] != '}') {
                *value = -2;
                return k - i;
            }
            k++;
        } else {
            for (size_t e = k + 2; k < e && hex_val(p[k]) >= 0; k++)
                v = v * 16 + (unsigned)hex_val(p[k]);
        }
        *value = v > 0xff ? -2 : (int)v;
        return k - i;
    }
    if (c != '\0' && strchr("dwSHVN", c))
        *digits = ALL_DIGITS;
    else if (c != '\0' && strchr("DWshvRbBAzZG", c))
        *digits = 0;
    else if (c != '\0' && strchr(named, c))
        *value = named_byte[strchr(named, c) - named];
    else if (c == '\0' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
             (c >= 'A' && c <= 'Z'))
        *value = -2; /* a back reference, octal, \p, \g, \k, \c, \o, \Q, \E, \K, \X ... */
    else
        *value = (unsigned char)c; /* an escaped punctuation byte */
    return c == '\0' ? 1 : 2;
}

/* The class at p[i] ('['): its length, the digits it holds (before negation), whether it is
 * negated; *sure 0 when it holds something this reading does not know. */
static size_t class_at(const char *p, size_t i, unsigned *digits, int *negated, int *sure)
{
    size_t k = i + 1;
    *digits = 0;
    *negated = p[k] == '^';
    k += (size_t)*negated;
    int first = 1;
    while (p[k] && (p[k] != ']' || first)) {
        first = 0;
        int lo;
        unsigned d = 0;
        if (p[k] == '[' && p[k + 1] == ':') { /* [:alpha:] */
            const char *end = strstr(p + k + 2, ":]");
            if (!end) {
                *sure = 0;
                return strlen(p + i);
            }
            static const char *const with_digits[] = {"alnum", "digit", "xdigit",
                                                      "graph", "print", "word"};
            size_t n = (size_t)(end - (p + k + 2));
            const char *name = p + k + 2 + (p[k + 2] == '^');
            int neg = p[k + 2] == '^', has = 0;
            for (size_t w = 0; w < DX_ARRAY_LEN(with_digits); w++)
                has |= strlen(with_digits[w]) == n - (size_t)neg &&
                       !strncmp(name, with_digits[w], n - (size_t)neg);
            *digits |= has != neg ? ALL_DIGITS : 0;
            k = (size_t)(end - p) + 2;
            continue;
        }
        size_t len = 1;
        if (p[k] == '\\')
            len = escape_at(p, k, &lo, &d);
        else
            lo = (unsigned char)p[k];
        if (lo == -2)
            *sure = 0;
        k += len;
        if (lo >= 0 && p[k] == '-' && p[k + 1] && p[k + 1] != ']') { /* a range lo-hi */
            int hi;
            unsigned hd = 0;
            size_t hl = 1;
            if (p[k + 1] == '\\')
                hl = escape_at(p, k + 1, &hi, &hd);
            else
                hi = (unsigned char)p[k + 1];
            if (hi < 0)
                *sure = 0;
            else
                d = digits_in((unsigned)lo, (unsigned)hi);
            k += 1 + hl;
        } else if (lo >= 0) {
            d = digits_in((unsigned)lo, (unsigned)lo);
        }
        *digits |= d;
    }
    if (!p[k])
        *sure = 0;
    return p[k] ? k + 1 - i : k - i;
}

/* Whether p[i] ('{') starts a quantifier: {n}, {n,} or {n,m}; its length, or 0. */
static size_t quantifier_at(const char *p, size_t i)
{
    size_t k = i + 1, d = k;
    while (p[k] >= '0' && p[k] <= '9')
        k++;
    if (k == d)
        return 0;
    if (p[k] == ',')
        for (k++; p[k] >= '0' && p[k] <= '9'; k++)
            ;
    return p[k] == '}' ? k + 1 - i : 0;
}

/* The expression p made digit-blind (a new string, NULL when out of memory); *sure 0 when it holds
 * a construct this reading does not know (left as it was). */
static char *blind_expr(const char *p, int *sure)
{
    size_t n = strlen(p);
    char *out = dx_malloc(3 * n + 16);
    if (!out)
        return NULL;
    *sure = 1;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        char c = p[i];
        size_t len = 1;
        if (c == '\\') {
            int v;
            unsigned d;
            len = escape_at(p, i, &v, &d);
            if (v == -2)
                *sure = 0;
            if (v >= '0' && v <= '9') {
                memcpy(out + o, "\\d", 2);
                o += 2;
                i += len;
                continue;
            }
        } else if (c == '[') {
            unsigned d;
            int neg;
            len = class_at(p, i, &d, &neg, sure);
            if (d && d != ALL_DIGITS && p[i + len - 1] == ']') {
                if (neg) {
                    memcpy(out + o, "[^\\n]", 5);
                    o += 5;
                } else {
                    /* \d first (after a leading ']', which is a literal there) */
                    size_t at = 1 + (p[i + 1] == ']');
                    memcpy(out + o, p + i, at);
                    memcpy(out + o + at, "\\d", 2);
                    memcpy(out + o + at + 2, p + i + at, len - at);
                    o += len + 2;
                }
                i += len;
                continue;
            }
        } else if (c == '{') {
            size_t q = quantifier_at(p, i);
            len = q ? q : 1;
        } else if (c == '(' && p[i + 1] == '?') {
            /* a group's name keeps its digits; a conditional or a comment is not read */
            const char *name = NULL;
            if ((p[i + 2] == '<' && p[i + 3] != '=' && p[i + 3] != '!') || p[i + 2] == '\'')
                name = p + i + 3;
            else if (p[i + 2] == 'P' && p[i + 3] == '<')
                name = p + i + 4;
            if (name) {
                const char *end = strpbrk(name, ">'");
                len = end ? (size_t)(end - (p + i)) + 1 : n - i;
            } else {
                if (p[i + 2] == '(' || p[i + 2] == '#' || (p[i + 2] >= '0' && p[i + 2] <= '9') ||
                    p[i + 2] == 'R' || p[i + 2] == '&' || p[i + 2] == '+')
                    *sure = 0;
                len = 2;
            }
        } else if (c >= '0' && c <= '9') {
            memcpy(out + o, "\\d", 2);
            o += 2;
            i++;
            continue;
        }
        memcpy(out + o, p + i, len);
        o += len;
        i += len;
    }
    out[o] = '\0';
    return out;
}

char *dx_blind_expression(const char *p, int *sure) { return blind_expr(p, sure); }

/* Expression p (freed) made digit-blind; NULL when out of memory. One this reading is not sure
 * of stays as blind_expr leaves it (the matcher then keeps no shape cache). */
static char *blind_of(char *p)
{
    int sure;
    char *b = p ? blind_expr(p, &sure) : NULL;
    dx_free(p);
    return b;
}

/* The database's expressions: each signal's fast-pattern literals, or its prefilter, made
 * digit-blind; the signals with a prefilter of their own have none. */
static int build_exprs(const dx_matcher *m, exprs *e)
{
    int rc = DDX_OK;
    for (size_t i = 0, nat = 0; i < m->nsig && !rc; i++) {
        const dx_signal *sg = m->sigs[i];
        if (nat < m->nnative && m->native[nat] == i) {
            nat++;
            continue; /* its lines are found by its own test (native_cands) */
        }
        fp_set set;
        if (fp_literals(sg->pattern, sg->caseless, &set)) {
            for (size_t k = 0; k < set.n && !rc; k++)
                rc = expr_add(e, blind_of(fp_expression(set.s[k], set.len[k])),
                              set.icase[k] ? HS_FLAG_CASELESS : 0, (unsigned)i);
        } else {
            const char *part = gap_suffix(sg->pattern);
            rc = expr_add(e, blind_of(dx_hs_pattern(part ? part : sg->pattern)), hs_flags(sg),
                          (unsigned)i);
        }
    }
    return rc;
}

static void exprs_free(exprs *e)
{
    for (size_t i = 0; i < e->n; i++)
        dx_free(e->pats[i]);
    dx_free(e->pats);
    dx_free(e->flags);
    dx_free(e->ids);
}

int dx_matcher_exprs_blind(const dx_matcher *m, char *msg, size_t cap)
{
    exprs e = {0};
    if (build_exprs(m, &e)) {
        exprs_free(&e);
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    int n = (int)e.n;
    for (size_t i = 0; i < e.n && n >= 0; i++) {
        int sure = 0;
        char *b = blind_expr(e.pats[i], &sure);
        if (!b || !sure || strcmp(b, e.pats[i])) {
            snprintf(msg, cap, "signal '%s': expression '%s' is not digit-blind%s",
                     m->sigs[e.ids[i]]->id, e.pats[i], sure ? "" : " (a construct not read)");
            n = -1;
        }
        dx_free(b);
    }
    exprs_free(&e);
    return n;
}

static int compile_db(dx_matcher *m, ddx_error *err)
{
    exprs e = {0};
    int rc = build_exprs(m, &e);
    if (rc) {
        rc = dx_err(err, DDX_ENOMEM, "out of memory");
        goto fail;
    }
    hs_compile_error_t *ce = NULL;
    hs_platform_info_t generic = {0, 0, 0, 0};
    if (hs_compile_multi((const char *const *)e.pats, e.flags, e.ids, (unsigned)e.n, HS_MODE_BLOCK,
                         portable ? &generic : NULL, &m->db, &ce) != HS_SUCCESS) {
        int bad = ce ? ce->expression : -1;
        if (bad >= 0 && (size_t)bad < e.n)
            rc = dx_err(err, DDX_EFORMAT, "signal '%s': Vectorscan rejects the pattern: %s",
                        m->sigs[e.ids[bad]]->id, ce->message);
        else
            rc = dx_err(err, DDX_EFORMAT, "cannot compile the pattern database: %s",
                        ce && ce->message ? ce->message : "unknown error");
        hs_free_compile_error(ce);
    }
fail:
    exprs_free(&e);
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

/* ==== hand-written matchers ================================================================= */

/* A pattern that PCRE2 would confirm on most lines of a job (a trainer's step line) is matched
 * by hand instead: the function finds exactly the match PCRE2 finds (the leftmost, with the
 * same groups: PCRE2's semantics for that pattern, without UTF or UCP, the default character
 * tables), and is used only for a signal whose pattern is that text, byte for byte, and not
 * caseless; any other pattern, or this one changed, goes to PCRE2. The unit test compares both
 * on generated lines (test_match.c). The PCRE2 code is still compiled, for the group names. */
typedef struct hand_matcher {
    const char *pattern;
    /* the match in line[0..len): 1 and the groups' offsets (start, end; group 0 first) in
       ov[0..2*pairs), or 0 */
    int (*match)(const char *line, size_t len, uint32_t *ov);
    size_t pairs;
} hand_matcher;

static int is_space_c(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
static int is_digit_c(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_word_c(unsigned char c)
{
    return is_digit_c(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || c == '_';
}

static size_t skip_spaces(const char *s, size_t n, size_t j)
{
    while (j < n && is_space_c((unsigned char)s[j]))
        j++;
    return j;
}

/* The step row's tail from s[j], after its word: \s*[:=]?\s*\[?\s*(\d+)\s*\/\s*(\d+)\b. Each
 * part takes a class no neighbour takes, so the greedy reading is the only one: backtracking
 * finds no other. */
static int step_tail(const char *s, size_t n, size_t j, uint32_t *ov)
{
    j = skip_spaces(s, n, j);
    if (j < n && (s[j] == ':' || s[j] == '='))
        j++;
    j = skip_spaces(s, n, j);
    if (j < n && s[j] == '[')
        j++;
    j = skip_spaces(s, n, j);
    size_t a = j;
    while (j < n && is_digit_c((unsigned char)s[j]))
        j++;
    size_t b = j;
    j = skip_spaces(s, n, j);
    if (a == b || j >= n || s[j] != '/')
        return 0;
    size_t c = j = skip_spaces(s, n, j + 1);
    while (j < n && is_digit_c((unsigned char)s[j]))
        j++;
    if (j == c || (j < n && is_word_c((unsigned char)s[j])))
        return 0;
    ov[1] = (uint32_t)j;
    ov[2] = (uint32_t)a;
    ov[3] = (uint32_t)b;
    ov[4] = (uint32_t)c;
    ov[5] = (uint32_t)j;
    return 1;
}

/* The step row's word at s[i] (\b before it, then [Ss]tep, [Ii]ter(?:ation)? or [Bb]atch), then
 * its tail; k is the byte of the word that is its first 't' (1, or 2 for batch). */
static int step_at(const char *s, size_t n, size_t i, size_t k, uint32_t *ov)
{
    unsigned char c = (unsigned char)s[i];
    if (i && is_word_c((unsigned char)s[i - 1]))
        return 0; /* no word boundary before it */
    if (k == 2)
        return (c == 'B' || c == 'b') && i + 5 <= n && !memcmp(s + i + 1, "atch", 4) &&
               step_tail(s, n, i + 5, ov);
    if (i + 4 > n)
        return 0;
    if (c == 'S' || c == 's')
        return !memcmp(s + i + 1, "tep", 3) && step_tail(s, n, i + 4, ov);
    if (c == 'I' || c == 'i')
        return !memcmp(s + i + 1, "ter", 3) &&
               ((i + 9 <= n && !memcmp(s + i + 4, "ation", 5) && step_tail(s, n, i + 9, ov)) ||
                step_tail(s, n, i + 4, ov));
    return 0;
}

/* \b(?:[Ss]tep|[Ii]ter(?:ation)?|[Bb]atch), then the tail, at the leftmost start that matches.
 * Every word holds a 't', second (step, iter) or third (batch): each 't' in turn names the two
 * starts it can belong to, the batch one first, so the starts are tried from the left. */
static int step_match(const char *s, size_t n, uint32_t *ov)
{
    if (n >= UINT32_MAX || n < 4)
        return 0;
    for (const char *t = memchr(s + 1, 't', n - 1); t;
         t = memchr(t + 1, 't', (size_t)(s + n - t - 1))) {
        size_t p = (size_t)(t - s);
        if (p >= 2 && step_at(s, n, p - 2, 2, ov)) {
            ov[0] = (uint32_t)(p - 2);
            return 1;
        }
        if (step_at(s, n, p - 1, 1, ov)) {
            ov[0] = (uint32_t)(p - 1);
            return 1;
        }
    }
    return 0;
}

static const hand_matcher hand_matchers[] = {
    {"\\b(?:[Ss]tep|[Ii]ter(?:ation)?|[Bb]atch)\\s*[:=]?\\s*\\[?\\s*(?<n>\\d+)\\s*/\\s*(?<m>\\d+)\\b",
     step_match, 3},
};

static const hand_matcher *hand_for(const dx_signal *sg)
{
    for (size_t k = 0; k < DX_ARRAY_LEN(hand_matchers) && !sg->caseless; k++)
        if (!strcmp(sg->pattern, hand_matchers[k].pattern))
            return &hand_matchers[k];
    return NULL;
}

int dx_matcher_new(dx_matcher **out, const dx_signal *const *sigs, const dx_prefilter_fn *pre,
                   size_t nsig, const unsigned char *hsdb, size_t hsdb_len, ddx_error *err)
{
    dx_matcher *m = dx_calloc(1, sizeof *m);
    if (!m)
        return dx_err(err, DDX_ENOMEM, "out of memory");
    m->nsig = nsig;
    m->sigs = sigs;
    m->re = dx_calloc(nsig ? nsig : 1, sizeof *m->re);
    m->re_bad = dx_calloc(nsig ? nsig : 1, sizeof *m->re_bad);
    m->anchored = dx_calloc(nsig ? nsig : 1, 1);
    m->hand = dx_calloc(nsig ? nsig : 1, sizeof *m->hand);
    if (!m->re || !m->re_bad || !m->anchored || !m->hand) {
        dx_matcher_free(m);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < nsig; i++) {
        m->anchored[i] = is_anchored(sigs[i]->pattern);
        m->hand[i] = hand_for(sigs[i]);
        m->nnative += pre && pre[i];
    }
    if (m->nnative && (!(m->native = dx_calloc(m->nnative, sizeof *m->native)) ||
                       !(m->native_fn = dx_calloc(m->nnative, sizeof *m->native_fn)))) {
        dx_matcher_free(m);
        return dx_err(err, DDX_ENOMEM, "out of memory");
    }
    for (size_t i = 0, k = 0; i < nsig && m->nnative; i++)
        if (pre[i]) {
            m->native[k] = (uint32_t)i;
            m->native_fn[k++] = pre[i];
        }
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
        pcre2_code_free(atomic_load(&m->re[i]));
    dx_free(m->re);
    dx_free(m->re_bad);
    dx_free(m->anchored);
    dx_free(m->hand);
    dx_free(m->native);
    dx_free(m->native_fn);
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
    s->names_sig = UINT32_MAX;
    s->line_end = dx_calloc(m->nsig ? m->nsig : 1, sizeof(size_t));
    s->md = pcre2_match_data_create(DX_SCAN_PAIRS, NULL);
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
    dx_free(s->merged);
    dx_free(s->line_end);
    for (size_t i = 0; s->shapes && i < SHAPE_SLOTS; i++) {
        dx_free(s->shapes[i].text);
        dx_free(s->shapes[i].sigs);
    }
    dx_free(s->shapes);
    dx_free(s->lstat);
    dx_free(s->lh);
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
    size_t pos = s->base + (to ? (size_t)to - 1 : 0);
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

/* Candidates by line, then signal. Vectorscan reports matches in the order they end, so lines
 * come nearly in order and an insertion sort does about one comparison each; past a budget of
 * moves (matches far out of order) the rest is left to qsort. */
static void sort_cands(dx_cand *c, size_t n)
{
    size_t moves = 0;
    for (size_t i = 1; i < n; i++) {
        dx_cand x = c[i];
        size_t j = i;
        for (; j > 0 && cmp_cand(&c[j - 1], &x) > 0 && moves < 4 * n; j--, moves++)
            c[j] = c[j - 1];
        c[j] = x;
        if (moves >= 4 * n) {
            qsort(c, n, sizeof *c, cmp_cand);
            return;
        }
    }
}

/* The candidates of the signals with a prefilter of their own: every line of data[0..len) the
 * test accepts (a superset of the lines the pattern matches within, as Vectorscan's prefilter
 * would give; PCRE2 confirms both alike). */
static int native_cands(dx_scan *s, const char *data, size_t len, const uint32_t *lines,
                        size_t nlines)
{
    const dx_matcher *m = s->m;
    size_t nvs = s->ncands; /* Vectorscan's, sorted */
    for (size_t off = 0, li = 0; off < len; li++) {
        size_t end;
        if (lines) /* the caller's index: line li ends where line li + 1 starts, less one */
            end = li < nlines && lines[li + 1] <= len ? lines[li + 1] - 1 : len;
        else {
            const char *nl = memchr(data + off, '\n', len - off);
            end = nl ? (size_t)(nl - data) : len;
        }
        for (size_t k = 0; k < m->nnative; k++) {
            uint32_t sig = m->native[k];
            if (!m->native_fn[k](data + off, end - off))
                continue;
            if (dx_grow((void **)&s->cands, &s->capcands, s->ncands + 1, sizeof(dx_cand)))
                return DDX_ENOMEM;
            s->cands[s->ncands++] = (dx_cand){off, end, sig};
        }
        off = end + 1;
    }
    /* both runs are in order (line, then signal): merged, as sorting them all would leave them */
    if (s->ncands == nvs || !nvs)
        return DDX_OK;
    if (dx_grow((void **)&s->merged, &s->capmerged, s->ncands, sizeof(dx_cand)))
        return DDX_ENOMEM;
    size_t a = 0, b = nvs, o = 0;
    while (a < nvs || b < s->ncands)
        s->merged[o++] = b == s->ncands || (a < nvs && cmp_cand(&s->cands[a], &s->cands[b]) < 0)
                             ? s->cands[a++]
                             : s->cands[b++];
    dx_cand *t = s->cands;
    size_t tc = s->capcands;
    s->cands = s->merged;
    s->capcands = s->capmerged;
    s->merged = t;
    s->capmerged = tc;
    return DDX_OK;
}

/* ==== the shape cache =======================================================================
 *
 * A line's shape is its text with every digit read as '0'. With a digit-blind database (above)
 * and digit-blind prefilters of the rows' own (the step words, the py-spy frame and the "Rank N:"
 * heading tests read any digit alike), the candidates of a line are a function of its shape:
 * each scan keeps, for the shapes it saw last (a table of SHAPE_SLOTS, a shape in one of the
 * SHAPE_WAYS slots its hash names, replacing the one reused least recently), the signals its
 * line got, and a line of a kept shape gets them
 * without being scanned. The lines of new shapes are scanned as before, a run of them at a
 * time (or the whole chunk, when most are new), and their shapes kept. Lines longer than
 * SHAPE_MAX are always scanned. Where a chunk's lines rarely repeat a kept shape (a log that is
 * not a trainer's), the next chunks are scanned whole without looking their shapes up. The
 * candidates stay a superset of PCRE2's lines either way, and PCRE2 confirms each on its own
 * text, so what ddx reports does not depend on which lines were scanned (test_match.c compares
 * the two on every reference example, digits changed). */

/* 0x80 in each byte of x that is an ASCII digit: a byte below 0x80 is one when adding 0x80 - '0'
 * sets its top bit and adding 0x7f - '9' does not (neither carries into the next byte). */
static inline uint64_t digit_bytes(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80;
    uint64_t low = x & ~high;
    return (low + ones * (0x80 - '0')) & ~(low + ones * (0x7f - '9')) & ~x & high;
}

/* The shape of s[0..n) into out (n rounded up to 8 bytes; the bytes past n are zero) and its
 * hash (never 0). wrong: the test's wrong shape, which reads every letter as 'a' too. */
static inline __attribute__((always_inline)) uint64_t shape_with(const char *s, size_t n, char *out,
                                                                 int wrong)
{
    uint64_t h = 0x243f6a8885a308d3ull ^ n;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        if (n - i >= 8)
            memcpy(&w, s + i, 8);
        else
            for (size_t k = 0; k < n - i; k++)
                w |= (uint64_t)(unsigned char)s[i + k] << (8 * k);
        w &= ~((digit_bytes(w) >> 7) * 0x0f); /* a digit's low four bits: '0' */
        for (size_t k = 0; wrong && k < 8; k++) {
            unsigned char c = (unsigned char)(w >> (8 * k));
            if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')
                w = (w & ~((uint64_t)0xff << (8 * k))) | (uint64_t)'a' << (8 * k);
        }
        memcpy(out + i, &w, 8);
        h = (h + w) * 0x9e3779b97f4a7c15ull;
    }
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h | 1;
}

static uint64_t shape_of(const char *s, size_t n, char *out, int wrong)
{
    return wrong ? shape_with(s, n, out, 1) : shape_with(s, n, out, 0);
}

/* Whether the matcher's database and prefilters are digit-blind, found once (by the first scan
 * of a chunk long enough for the cache). */
static int matcher_blind(dx_matcher *m)
{
    int b = atomic_load_explicit(&m->blind, memory_order_acquire);
    if (b)
        return b == 1;
    b = 1;
    for (size_t i = 0, nat = 0; i < m->nsig && b == 1; i++) {
        if (nat < m->nnative && m->native[nat] == i) {
            nat++;
            continue;
        }
        /* read on the pattern itself: what dx_hs_pattern and the literals add (\n, \t, \xHH,
         * classes of blanks, groups) the rewriting always reads */
        int sure = 0;
        char *bp = blind_expr(m->sigs[i]->pattern, &sure);
        if (!bp || !sure)
            b = 2;
        dx_free(bp);
    }
    atomic_store_explicit(&m->blind, b, memory_order_release);
    return b == 1;
}

/* Keeps line [start, start + n) (hash h) with its candidates cands[0..k). */
static int shape_keep(dx_scan *s, const char *line, size_t n, uint64_t h, const dx_cand *cands,
                      size_t k)
{
    /* in the slot of the four that holds it already (two lines of a block), else in an empty
     * one, else in place of the one reused least recently */
    shape_ent *set = &s->shapes[h & (SHAPE_SLOTS - SHAPE_WAYS)], *e = set;
    for (size_t w = 1; w < SHAPE_WAYS && e->h && e->h != h; w++)
        if (!set[w].h || set[w].h == h || set[w].used < e->used)
            e = &set[w];
    e->used = ++s->shape_clock;
    if (dx_grow((void **)&e->text, &e->captext, n + 8, 1) ||
        dx_grow((void **)&e->sigs, &e->capsig, k ? k : 1, sizeof *e->sigs))
        return DDX_ENOMEM;
    shape_of(line, n, e->text, s->shape_mode == DX_SHAPES_WRONG);
    for (size_t j = 0; j < k; j++)
        e->sigs[j] = cands[j].sig;
    e->h = h;
    e->len = (uint32_t)n;
    e->nsig = (uint32_t)k;
    return DDX_OK;
}

/* Keeps the shapes of the block's lines of new shapes (lines[a..b), their states s->lstat[0..b-a)),
 * each with its candidates (those of the block are s->cands[from..ncands), in order). */
static int shapes_keep(dx_scan *s, const char *data, size_t len, const uint32_t *lines, size_t a,
                       size_t b, size_t from)
{
    size_t k = from;
    for (size_t li = a; li < b; li++) {
        size_t start = lines[li], end = lines[li + 1] <= len ? lines[li + 1] - 1 : len;
        while (k < s->ncands && s->cands[k].line < start)
            k++;
        size_t e = k;
        while (e < s->ncands && s->cands[e].line == start)
            e++;
        if (s->lstat[li - a] == LINE_MISS &&
            shape_keep(s, data + start, end - start, s->lh[li - a], s->cands + k, e - k))
            return DDX_ENOMEM;
        k = e;
    }
    return DDX_OK;
}

/* Scans data[from..to) for candidates, appended to s->cands (in the order Vectorscan ends them). */
static int scan_range(dx_scan *s, size_t from, size_t to, ddx_error *err)
{
    while (s->m->db && from < to) {
        size_t n = to - from;
        if (n > (1u << 30))
            n = 1u << 30;
        s->base = from;
        hs_error_t rc = hs_scan(s->m->db, s->data + from, (unsigned)n, 0, s->scratch, on_match, s);
        if (rc != HS_SUCCESS && rc != HS_SCAN_TERMINATED)
            return dx_err(err, DDX_EIO, "pattern scan failed (Vectorscan error %d)", (int)rc);
        if (s->oom)
            return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
        from += n;
    }
    s->base = 0;
    return DDX_OK;
}

/* The whole chunk scanned (Vectorscan, then the rows' own prefilters), its candidates sorted. */
static int scan_whole(dx_scan *s, const char *data, size_t len, const uint32_t *lines,
                      size_t nlines, ddx_error *err)
{
    int rc = scan_range(s, 0, len, err);
    if (rc)
        return rc;
    sort_cands(s->cands, s->ncands);
    if (s->m->nnative && native_cands(s, data, len, lines, nlines))
        return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
    return DDX_OK;
}

/* The candidates of the rows' own prefilters on line data[start..end), appended. */
static int native_line(dx_scan *s, const char *data, size_t start, size_t end)
{
    const dx_matcher *m = s->m;
    for (size_t k = 0; k < m->nnative; k++) {
        if (!m->native_fn[k](data + start, end - start))
            continue;
        if (dx_grow((void **)&s->cands, &s->capcands, s->ncands + 1, sizeof(dx_cand)))
            return DDX_ENOMEM;
        s->cands[s->ncands++] = (dx_cand){start, end, m->native[k]};
    }
    return DDX_OK;
}

/* Scans lines[a..b) (Vectorscan over their bytes, then the rows' own prefilters), appending their
 * candidates in order. */
static int scan_lines(dx_scan *s, const char *data, size_t len, const uint32_t *lines, size_t a,
                      size_t b, ddx_error *err)
{
    size_t from = s->ncands;
    int rc = scan_range(s, lines[a], lines[b] <= len ? lines[b] : len, err);
    if (rc)
        return rc;
    for (size_t j = a; j < b; j++)
        if (native_line(s, data, lines[j], lines[j + 1] <= len ? lines[j + 1] - 1 : len))
            return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
    sort_cands(s->cands + from, s->ncands - from);
    return DDX_OK;
}

/* The chunk's candidates through the shape cache, a block of SHAPE_BLOCK lines at a time: each
 * line's shape looked up; the lines of kept shapes get their shape's signals, the others are
 * scanned (each run of them, or the whole block when they hold more than a quarter of its
 * bytes); then the block's new shapes are kept (only then: a new shape may take the slot of a
 * shape a later line of the block reuses). */
static int shaped_scan(dx_scan *s, const char *data, size_t len, const uint32_t *lines,
                       size_t nlines, ddx_error *err)
{
    if ((!s->shapes && !(s->shapes = dx_calloc(SHAPE_SLOTS, sizeof *s->shapes))) ||
        dx_grow((void **)&s->lstat, &s->caplstat, SHAPE_BLOCK, sizeof *s->lstat) ||
        dx_grow((void **)&s->lh, &s->caplh, SHAPE_BLOCK, sizeof *s->lh))
        return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
    int wrong = s->shape_mode == DX_SHAPES_WRONG, rc;
    size_t hits = 0;
    for (size_t a = 0; a < nlines; a += SHAPE_BLOCK) {
        size_t b = nlines - a < SHAPE_BLOCK ? nlines : a + SHAPE_BLOCK, missed = 0;
        for (size_t li = a; li < b; li++) {
            size_t start = lines[li], end = lines[li + 1] <= len ? lines[li + 1] - 1 : len;
            size_t n = end - start;
            if (n > SHAPE_MAX) {
                s->lstat[li - a] = LINE_LONG;
                missed += n + 1;
                continue;
            }
            uint64_t h = shape_of(data + start, n, s->mask, wrong);
            uint32_t slot = (uint32_t)(h & (SHAPE_SLOTS - SHAPE_WAYS));
            size_t w = 0;
            for (; w < SHAPE_WAYS; w++) {
                shape_ent *e = &s->shapes[slot + w];
                if (e->h == h && e->len == n && !memcmp(e->text, s->mask, n)) {
                    e->used = ++s->shape_clock;
                    break;
                }
            }
            if (w < SHAPE_WAYS) {
                s->lstat[li - a] = slot + (uint32_t)w;
                hits++;
            } else {
                s->lstat[li - a] = LINE_MISS;
                s->lh[li - a] = h;
                missed += n + 1;
            }
        }
        size_t from = s->ncands, bytes = (lines[b] <= len ? lines[b] : len) - lines[a];
        if (missed > bytes / 4) {
            if ((rc = scan_lines(s, data, len, lines, a, b, err)))
                return rc;
        } else {
            for (size_t li = a; li < b;) {
                if (s->lstat[li - a] >= LINE_LONG) {
                    size_t e = li + 1;
                    while (e < b && s->lstat[e - a] >= LINE_LONG)
                        e++;
                    if ((rc = scan_lines(s, data, len, lines, li, e, err)))
                        return rc;
                    li = e;
                    continue;
                }
                const shape_ent *e = &s->shapes[s->lstat[li - a]];
                size_t start = lines[li], end = lines[li + 1] <= len ? lines[li + 1] - 1 : len;
                if (dx_grow((void **)&s->cands, &s->capcands, s->ncands + e->nsig + 1,
                            sizeof(dx_cand)))
                    return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
                for (uint32_t j = 0; j < e->nsig; j++)
                    s->cands[s->ncands++] = (dx_cand){start, end, e->sigs[j]};
                li++;
            }
        }
        if (shapes_keep(s, data, len, lines, a, b, from))
            return dx_err(err, DDX_ENOMEM, "out of memory while scanning");
    }
    s->shape_hits += hits;
    s->shape_lines += nlines;
    if (s->shape_chunks++ && hits < nlines / 16)
        s->shape_skip = SHAPE_SKIP;
    return DDX_OK;
}

void dx_scan_shapes(dx_scan *s, int mode) { s->shape_mode = mode; }

void dx_scan_shape_stats(const dx_scan *s, uint64_t *reused, uint64_t *lines)
{
    *reused = s->shape_hits;
    *lines = s->shape_lines;
}

int dx_scan_chunk(dx_scan *s, const char *data, size_t len, const dx_cand **cands, size_t *ncands,
                  ddx_error *err)
{
    return dx_scan_chunk_lines(s, data, len, NULL, 0, cands, ncands, err);
}

int dx_scan_chunk_lines(dx_scan *s, const char *data, size_t len, const uint32_t *lines,
                        size_t nlines, const dx_cand **cands, size_t *ncands, ddx_error *err)
{
    s->ncands = 0;
    *cands = s->cands;
    *ncands = 0;
    if ((!s->m->db && !s->m->nnative) || !len)
        return DDX_OK;
    memset(s->line_end, 0, s->m->nsig * sizeof(size_t));
    s->data = data;
    s->len = len;
    s->oom = 0;
    int rc, shaped = lines && nlines >= SHAPE_MIN_LINES && s->shape_mode != DX_SHAPES_OFF &&
                     matcher_blind(s->m);
    if (shaped && s->shape_skip) {
        s->shape_skip--;
        shaped = 0;
    }
    if ((rc = shaped ? shaped_scan(s, data, len, lines, nlines, err)
                     : scan_whole(s, data, len, lines, nlines, err)))
        return rc;
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

/* The PCRE2 code of signal sig, compiled the first time any thread needs it; NULL when PCRE2
 * rejects the pattern. Two threads may compile it at once: the first to publish its code wins,
 * the other frees its own. */
static pcre2_code *code_of(dx_matcher *m, uint32_t sig)
{
    pcre2_code *re = atomic_load_explicit(&m->re[sig], memory_order_acquire);
    if (re || atomic_load_explicit(&m->re_bad[sig], memory_order_relaxed))
        return re;
    int ec;
    PCRE2_SIZE eo;
    const dx_signal *sg = m->sigs[sig];
    re = pcre2_compile((PCRE2_SPTR)sg->pattern, PCRE2_ZERO_TERMINATED,
                       sg->caseless ? PCRE2_CASELESS : 0, &ec, &eo, NULL);
    if (!re) {
        atomic_store_explicit(&m->re_bad[sig], 1, memory_order_relaxed);
        return NULL;
    }
    pcre2_jit_compile(re, PCRE2_JIT_COMPLETE); /* falls back to the interpreter */
    pcre2_code *none = NULL;
    if (!atomic_compare_exchange_strong_explicit(&m->re[sig], &none, re, memory_order_acq_rel,
                                                 memory_order_acquire)) {
        pcre2_code_free(re);
        re = none;
    }
    return re;
}

/* Confirms signal sig with PCRE2 (hand: its hand-written matcher instead, where it has one). */
static int confirm(dx_scan *s, uint32_t sig, const char *line, size_t len, int hand)
{
    dx_matcher *m = s->m;
    if (sig >= m->nsig)
        return 0;
    pcre2_code *re = code_of(m, sig);
    if (!re)
        return 0;
    const hand_matcher *h = hand ? m->hand[sig] : NULL;
    if (h) {
        if (!h->match(line, len, s->own))
            return 0;
        s->ov = s->own;
        s->npairs = h->pairs;
        s->last_sig_ok = sig;
        s->last_line = line;
        return 1;
    }
    int rc = pcre2_match(re, (PCRE2_SPTR)line, len, 0, 0, s->md, s->mctx);
    if (rc < 0)
        return 0;
    /* rc is one more than the highest group set (0: the vector was too short, all are set) */
    size_t npairs = rc > 0 ? (size_t)rc : pcre2_get_ovector_count(s->md);
    if (npairs > DX_SCAN_PAIRS)
        npairs = DX_SCAN_PAIRS;
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
    for (size_t i = 0; i < 2 * npairs; i++)
        s->own[i] = ov[i] == PCRE2_UNSET || ov[i] >= UINT32_MAX ? UINT32_MAX : (uint32_t)ov[i];
    s->ov = s->own;
    s->npairs = npairs;
    s->last_sig_ok = sig;
    s->last_line = line;
    return 1;
}

int dx_scan_confirm(dx_scan *s, uint32_t sig, const char *line, size_t len)
{
    return confirm(s, sig, line, len, 1);
}

int dx_scan_confirm_pcre2(dx_scan *s, uint32_t sig, const char *line, size_t len)
{
    return confirm(s, sig, line, len, 0);
}

int dx_scan_hand_written(const dx_scan *s, uint32_t sig)
{
    return sig < s->m->nsig && s->m->hand[sig];
}

size_t dx_scan_last(const dx_scan *s, const char **base, const uint32_t **ov)
{
    *base = s->last_line;
    *ov = s->ov;
    return s->npairs;
}

void dx_scan_replay(dx_scan *s, uint32_t sig, const char *base, const uint32_t *ov, size_t npairs)
{
    s->last_sig_ok = sig;
    s->last_line = base;
    s->ov = ov;
    s->npairs = npairs;
    if (sig < s->m->nsig)
        (void)code_of(s->m, sig); /* its names (compiled already where it was confirmed) */
}

/* The last confirmed signal's table of named groups: how many, each entry's size, the table;
 * 0 when there is none. */
static uint32_t name_table(dx_scan *s, uint32_t *entry, PCRE2_SPTR *table)
{
    if (!s->ov || s->last_sig_ok >= s->m->nsig)
        return 0;
    if (s->names_sig != s->last_sig_ok) {
        pcre2_code *re = atomic_load_explicit(&s->m->re[s->last_sig_ok], memory_order_acquire);
        uint32_t count = 0;
        if (!re || pcre2_pattern_info(re, PCRE2_INFO_NAMECOUNT, &count) != 0)
            return 0; /* not kept: a code compiled later is read then */
        s->names_count = count;
        if (count) {
            pcre2_pattern_info(re, PCRE2_INFO_NAMEENTRYSIZE, &s->names_entry);
            pcre2_pattern_info(re, PCRE2_INFO_NAMETABLE, &s->names);
        }
        s->names_sig = s->last_sig_ok;
    }
    *entry = s->names_entry;
    *table = s->names;
    return s->names_count;
}

/* Named group e of the table: its name, and its value (NULL when it did not take part). */
static void name_entry(const dx_scan *s, PCRE2_SPTR e, const char **name, dx_str *value)
{
    uint32_t group = ((uint32_t)e[0] << 8) | e[1];
    *name = (const char *)(e + 2);
    if (group >= s->npairs || s->ov[2 * group] == UINT32_MAX) {
        value->p = NULL;
        value->n = 0;
    } else {
        value->p = s->last_line + s->ov[2 * group];
        value->n = s->ov[2 * group + 1] - s->ov[2 * group];
    }
}

int dx_scan_capture_at(dx_scan *s, size_t i, const char **name, dx_str *value)
{
    uint32_t entry = 0;
    PCRE2_SPTR table = NULL;
    uint32_t count = name_table(s, &entry, &table);
    if (i >= count)
        return 0;
    name_entry(s, table + i * entry, name, value);
    return 1;
}

int dx_scan_capture(dx_scan *s, const char *name, dx_str *out)
{
    uint32_t entry = 0;
    PCRE2_SPTR table = NULL;
    uint32_t count = name_table(s, &entry, &table);
    for (uint32_t i = 0; i < count; i++) {
        const char *nm;
        dx_str v;
        name_entry(s, table + i * entry, &nm, &v);
        if (!strcmp(nm, name) && v.p) {
            *out = v;
            return 1;
        }
    }
    return 0;
}
