/* metrics.c -- per-rank numeric metrics in any spelling, and what they show.
 *
 * The reader (dx_metrics_parse) is a tokenizer, not a regular expression per format: one pass
 * over the line cuts it into words, numbers (NaN and infinities included), separators (`=` `:`),
 * slashes, brackets and bars; clocks, dates, versions and hexadecimal numbers are set aside as
 * they are read. Each number then takes the words just before it (across one `=` or `:`, and a
 * parenthesised unit as in "(ms)") as its name, the word right after it as its unit when it is
 * one (ms, s, it/s, s/it, samples/s, GB, ...), and "/N" after it as the length of its loop. The
 * name, lower-cased with `_ - . /` read as blanks, is looked up by its longest trailing phrase in
 * one sorted table (names[] below) that maps it to a quantity; a unit in the name (step_time_ms,
 * mem_gb) counts as the value's. A number with no name is still a quantity when its unit says
 * which (tqdm's "4.12it/s", "12.3 ms/it") or when it is a tqdm bar's "| 3/8 [" count. So `k=v`,
 * `k: v`, `k v`, Python dicts, JSON lines, Megatron's `|` fields, tqdm and Lightning bars and
 * their postfixes are one code path, and a new spelling of a name is one row of the table.
 *
 * Readings:
 *   metrics    each rank's metric lines: its step and loop length (progress, batches per epoch),
 *              its step and data-wait times and rates (given to the steps reading); a line
 *              without a rank prefix takes the rank it names ("rank": 1, rank=1)
 *   nan-onset  the first non-finite loss or gradient norm of each rank, by step: the one rank
 *              whose values turn NaN or infinite before every other rank's names where the NaN
 *              came from (the all-reduce spreads it to the others a step later); votes for it
 */
#include "metrics.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <strings.h>

#include "launchers.h"
#include "progress.h"
#include "steps.h"

/* ==== the tokenizer ========================================================================= */

#define MX_SCAN 4096 /* bytes of a line read */
#define MX_TOKS 384

enum { T_WORD, T_NUM, T_SEP, T_SLASH, T_OPEN, T_CLOSE, T_BAR, T_COMMA, T_OTHER };

typedef struct tok {
    unsigned char type;
    unsigned char space; /* a blank before it */
    unsigned char bad;   /* a number that is part of a clock, date, version, hex or list */
    char ch;             /* the punctuation character; for a number: 'w' when it is a word (NaN,
                            inf), whose value does not come from digits */
    uint32_t off, len;
} tok; /* a number's value is kept beside the tokens (val[] of lex), so that a line's tokens can
          be kept without its values (see "line shapes" below) */

static int is_alpha(unsigned char c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
static int is_digit(unsigned char c) { return c >= '0' && c <= '9'; }
static int is_wordc(unsigned char c) { return is_alpha(c) || is_digit(c) || c == '_' || c == '@'; }

/* "nan", "inf", "infinity" in any case: the value, or 0 when the word is none of them. */
static int nonfinite_word(const char *s, size_t n, double *v)
{
    char w[9];
    if (n < 3 || n > 8)
        return 0;
    for (size_t i = 0; i < n; i++)
        w[i] = (char)(s[i] | 0x20);
    w[n] = '\0';
    if (!strcmp(w, "nan")) {
        *v = NAN;
        return 1;
    }
    if (!strcmp(w, "inf") || !strcmp(w, "infinity")) {
        *v = INFINITY;
        return 1;
    }
    return 0;
}

/* The place values of a fraction's digits: tenths[k] is 1 divided by 10, k + 1 times over, as
 * the reading computes it digit by digit (the same doubles, so the same values; made once, to
 * spare each digit a division). */
#define TENTHS 24
static double tenths[TENTHS];
static pthread_once_t tenths_once = PTHREAD_ONCE_INIT;

static void tenths_build(void)
{
    double scale = 1;
    for (size_t k = 0; k < TENTHS; k++)
        tenths[k] = scale /= 10;
}

/* The next place value after the k-th (k from 0) of a fraction whose last one was scale. */
static double next_tenth(size_t k, double scale) { return k < TENTHS ? tenths[k] : scale / 10; }

/* A number at s[i] (digits, one point, an exponent); its end, and its value in *v. */
static size_t lex_number(const char *s, size_t n, size_t i, double *v)
{
    double m = 0, scale = 1;
    int neg = 0;
    if (s[i] == '-' || s[i] == '+')
        neg = s[i++] == '-';
    /* the whole part: the same doubles as m * 10 + digit, read in an integer below 2^53 (where
       every step of that is exact) */
    uint64_t whole = 0;
    while (i < n && is_digit((unsigned char)s[i]) && whole < (1ull << 49))
        whole = whole * 10 + (uint64_t)(s[i++] - '0');
    m = (double)whole;
    while (i < n && is_digit((unsigned char)s[i]))
        m = m * 10 + (s[i++] - '0');
    if (i + 1 < n && s[i] == '.' && is_digit((unsigned char)s[i + 1])) {
        size_t k = 0;
        for (i++; i < n && is_digit((unsigned char)s[i]); i++) {
            scale = next_tenth(k++, scale);
            m += (s[i] - '0') * scale;
        }
    } else if (i < n && s[i] == '.' && (i + 1 == n || !is_alpha((unsigned char)s[i + 1])))
        i++; /* "3." */
    if (i + 1 < n && (s[i] | 0x20) == 'e') {
        size_t j = i + 1;
        int eneg = 0;
        if (j < n && (s[j] == '-' || s[j] == '+'))
            eneg = s[j++] == '-';
        if (j < n && is_digit((unsigned char)s[j])) {
            int e = 0;
            for (; j < n && is_digit((unsigned char)s[j]); j++)
                e = e < 400 ? e * 10 + (s[j] - '0') : e;
            m *= pow(10, eneg ? -e : e);
            i = j;
        }
    }
    *v = neg ? -m : m;
    return i;
}

/* A number's value and end from s[i], its first character (a sign, a digit or a point): the
 * number and the thousands groups that follow it. */
static size_t lex_value(const char *s, size_t n, size_t i, double *v)
{
    size_t off = i;
    int sign = s[i] == '-' || s[i] == '+';
    i = lex_number(s, n, i, v);
    /* thousands separators: "7,282", "1,234,567" (groups of three digits, no point before them,
       no blank after the comma) */
    size_t digits = i - off - (size_t)sign;
    while (digits <= 3 && i + 3 < n && s[i] == ',' && !memchr(s + off, '.', i - off) &&
           is_digit((unsigned char)s[i + 1]) && is_digit((unsigned char)s[i + 2]) &&
           is_digit((unsigned char)s[i + 3]) &&
           (i + 4 == n || !is_digit((unsigned char)s[i + 4]))) {
        double g = (s[i + 1] - '0') * 100 + (s[i + 2] - '0') * 10 + (s[i + 3] - '0');
        *v = *v * 1000 + (*v < 0 ? -g : g);
        i += 4;
        if (i < n && s[i] == '.') { /* "1,234.5" */
            double f = 0, sc = 1;
            size_t k = 0;
            for (i++; i < n && is_digit((unsigned char)s[i]); i++)
                f += (s[i] - '0') * (sc = next_tenth(k++, sc));
            *v += *v < 0 ? -f : f;
            break;
        }
    }
    return i;
}

/* Cuts s into tokens t[0..cap) and the numbers' values val[]; returns how many. */
static size_t lex(const char *s, size_t n, tok *t, double *val, size_t cap)
{
    size_t nt = 0, i = 0;
    int space = 1;
    while (i < n && nt < cap) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\t' || c == '\r') {
            space = 1;
            i++;
            continue;
        }
        if (c == '\'' || c == '"' || c == '`') {
            i++; /* quotes only end a word */
            continue;
        }
        tok *k = &t[nt];
        double *kv = &val[nt];
        k->bad = 0;
        k->ch = 0;
        *kv = 0;
        k->off = (uint32_t)i;
        k->space = (unsigned char)space;
        space = 0;
        int sign = (c == '-' || c == '+') && i + 1 < n;
        unsigned char d = sign ? (unsigned char)s[i + 1] : c;
        if (is_digit(d) ||
            (d == '.' && i + 1 + sign < n && is_digit((unsigned char)s[i + 1 + sign]))) {
            if (sign && nt && !t[nt - 1].space && k->off == t[nt - 1].off + t[nt - 1].len &&
                (t[nt - 1].type == T_WORD || t[nt - 1].type == T_NUM)) {
                /* "lr-3", "2-3": a hyphen, not a sign */
                k->type = T_OTHER;
                k->ch = (char)c;
                k->len = 1;
                i++;
                nt++;
                continue;
            }
            k->type = T_NUM;
            i = lex_value(s, n, i, kv);
            /* a clock, a date, a version, a list without blanks or a hex number is no value */
            if (i + 1 < n &&
                (s[i] == ':' || s[i] == '-' || s[i] == '.' || s[i] == ',' || s[i] == '_') &&
                is_digit((unsigned char)s[i + 1])) {
                k->bad = 1;
                while (i < n && (is_digit((unsigned char)s[i]) || strchr(":-.,_T+", s[i])))
                    i++;
            } else if (i < n && (s[i] == 'x' || s[i] == 'X') && *kv == 0 && i == k->off + 1u) {
                k->bad = 1;
                while (i < n && is_wordc((unsigned char)s[i]))
                    i++;
            }
        } else if (is_alpha(c) || c == '_' || (sign && is_alpha(d))) {
            size_t b = i + (size_t)sign;
            i = b;
            while (i < n) {
                unsigned char e = (unsigned char)s[i];
                if (is_wordc(e) || ((e == '.' || e == '/' || e == '-') && i + 1 < n &&
                                    is_alpha((unsigned char)s[i + 1])))
                    i++;
                else
                    break;
            }
            double v;
            if (nonfinite_word(s + b, i - b, &v)) {
                k->type = T_NUM;
                k->ch = 'w';
                *kv = c == '-' ? -v : v;
            } else if (sign) {
                k->type = T_OTHER; /* "-word": a dash, then a word */
                k->ch = (char)c;
                i = b;
            } else
                k->type = T_WORD;
        } else {
            i++;
            k->ch = (char)c;
            switch (c) {
            case '=':
            case ':':
                k->type = T_SEP;
                break;
            case '/':
                k->type = T_SLASH;
                break;
            case '|':
                k->type = T_BAR;
                break;
            case ',':
            case ';':
                k->type = T_COMMA;
                break;
            case '(':
            case '[':
            case '{':
            case '<':
                k->type = T_OPEN;
                break;
            case ')':
            case ']':
            case '}':
            case '>':
                k->type = T_CLOSE;
                break;
            case '%':
                k->type = T_WORD; /* a unit */
                break;
            default:
                k->type = T_OTHER;
                /* a multi-byte character (a bar's blocks) is one token */
                while (c >= 0x80 && i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
                    i++;
            }
        }
        k->len = (uint32_t)(i - k->off);
        nt++;
    }
    return nt;
}

/* ==== units ================================================================================= */

enum { U_NONE, U_TIME, U_STEP_TIME, U_RATE, U_THROUGHPUT, U_MEMORY, U_PERCENT };

typedef struct unit {
    const char *name; /* lower case */
    int kind;
    double scale; /* to seconds, bytes */
    double si;    /* a memory letter read as a multiplier on other quantities ("22.8K" tokens/s,
                     "11.5K" ms), 0 when it is none */
} unit;

/* sorted by name (the unit test checks it) */
static const unit units[] = {
    {"%", U_PERCENT, 1, 0},
    {"b", U_MEMORY, 1, 0},
    {"batch/s", U_RATE, 1, 0},
    {"batches/s", U_RATE, 1, 0},
    {"g", U_MEMORY, 1073741824.0, 1e9},
    {"gb", U_MEMORY, 1e9, 0},
    {"gib", U_MEMORY, 1073741824.0, 0},
    {"h", U_TIME, 3600, 0},
    {"hours", U_TIME, 3600, 0},
    {"img/s", U_THROUGHPUT, 1, 0},
    {"it/s", U_RATE, 1, 0},
    {"iter/s", U_RATE, 1, 0},
    {"k", U_MEMORY, 1024, 1e3},
    {"kb", U_MEMORY, 1e3, 0},
    {"kib", U_MEMORY, 1024, 0},
    {"m", U_MEMORY, 1048576.0, 1e6},
    {"mb", U_MEMORY, 1e6, 0},
    {"mib", U_MEMORY, 1048576.0, 0},
    {"min", U_TIME, 60, 0},
    {"mins", U_TIME, 60, 0},
    {"minutes", U_TIME, 60, 0},
    {"ms", U_TIME, 1e-3, 0},
    {"ms/batch", U_STEP_TIME, 1e-3, 0},
    {"ms/it", U_STEP_TIME, 1e-3, 0},
    {"ms/iter", U_STEP_TIME, 1e-3, 0},
    {"ms/step", U_STEP_TIME, 1e-3, 0},
    {"msec", U_TIME, 1e-3, 0},
    {"ns", U_TIME, 1e-9, 0},
    {"s", U_TIME, 1, 0},
    {"s/batch", U_STEP_TIME, 1, 0},
    {"s/it", U_STEP_TIME, 1, 0},
    {"s/iter", U_STEP_TIME, 1, 0},
    {"s/step", U_STEP_TIME, 1, 0},
    {"sample/s", U_THROUGHPUT, 1, 0},
    {"samples/s", U_THROUGHPUT, 1, 0},
    {"samples/sec", U_THROUGHPUT, 1, 0},
    {"sec", U_TIME, 1, 0},
    {"sec/it", U_STEP_TIME, 1, 0},
    {"second", U_TIME, 1, 0},
    {"seconds", U_TIME, 1, 0},
    {"secs", U_TIME, 1, 0},
    {"step/s", U_RATE, 1, 0},
    {"steps/s", U_RATE, 1, 0},
    {"tb", U_MEMORY, 1e12, 0},
    {"tok/s", U_THROUGHPUT, 1, 0},
    {"tokens/s", U_THROUGHPUT, 1, 0},
    {"tokens/sec", U_THROUGHPUT, 1, 0},
    {"us", U_TIME, 1e-6, 0},
};

/* ==== looking names up ====================================================================== */

/* The unit and name tables are looked up for nearly every word of every metric line, so each
 * has an open-addressing hash index (built once, on first use, shared by every thread): one hash
 * of the lower-cased word and, nearly always, one string compare. The tables stay the sorted
 * source of truth; the index only finds a row faster than a binary search would. */

#define LK_SLOTS 512 /* a power of two, at least twice the rows of either table */

typedef struct lk_index {
    uint32_t hash[LK_SLOTS];
    uint16_t row[LK_SLOTS]; /* row + 1; 0 an empty slot */
} lk_index;

static lk_index unit_index, name_index;
static pthread_once_t lk_once = PTHREAD_ONCE_INIT;

/* FNV-1a over s[0..n), never 0 (0 is kept for nothing) */
static uint32_t lk_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h | 1;
}

static void lk_add(lk_index *x, const char *key, size_t row)
{
    uint32_t h = lk_hash(key, strlen(key));
    size_t i = h & (LK_SLOTS - 1);
    while (x->row[i])
        i = (i + 1) & (LK_SLOTS - 1);
    x->hash[i] = h;
    x->row[i] = (uint16_t)(row + 1);
}

static void lk_build(void);

/* The row of table x whose name (rows of size elem, the name its first member) is s[0..n), or
 * NULL. */
static const void *lk_find(const lk_index *x, const void *table, size_t elem, const char *s,
                           size_t n)
{
    uint32_t h = lk_hash(s, n);
    for (size_t i = h & (LK_SLOTS - 1); x->row[i]; i = (i + 1) & (LK_SLOTS - 1)) {
        if (x->hash[i] != h)
            continue;
        const void *e = (const char *)table + (size_t)(x->row[i] - 1) * elem;
        const char *name = *(const char *const *)e;
        if (!strncmp(name, s, n) && name[n] == '\0')
            return e;
    }
    return NULL;
}

static const unit *find_unit(const char *s, size_t n)
{
    char w[16];
    if (!n || n >= sizeof w)
        return NULL;
    for (size_t i = 0; i < n; i++)
        w[i] = (char)((unsigned char)s[i] < 0x80 && is_alpha((unsigned char)s[i]) ? s[i] | 0x20
                                                                                  : s[i]);
    pthread_once(&lk_once, lk_build);
    return lk_find(&unit_index, units, sizeof *units, w, n);
}

/* ==== names ================================================================================= */

enum {
    F_TOTAL = 1,    /* counts only as "n/N" */
    F_STEPLINE = 2, /* counts only on a line that also gives a step (a generic word) */
    F_TIMEUNIT = 4  /* counts only with a unit of time */
};

typedef struct name {
    const char *name; /* lower case, words separated by one blank */
    int q;
    int flags;
} name;

/* Every spelling of a quantity's name, by the longest trailing phrase of the words before a
 * value. DX_Q_NONE rows stop a shorter phrase from matching ("loss scale" is not a loss). Sorted
 * by name (the unit test checks it). */
static const name names[] = {
    {"allocated", DX_Q_MEMORY, 0},
    {"average loss", DX_Q_LOSS, 0},
    {"avg loss", DX_Q_LOSS, 0},
    {"backward time", DX_Q_NONE, 0},
    {"base lr", DX_Q_NONE, 0},
    {"batch", DX_Q_STEP, F_TOTAL},
    {"batch time", DX_Q_STEP_TIME, 0},
    {"batches per epoch", DX_Q_TOTAL, 0},
    {"currsamplespersec", DX_Q_THROUGHPUT, 0},
    {"data", DX_Q_DATA_TIME, F_STEPLINE},
    {"data load time", DX_Q_DATA_TIME, 0},
    {"data loading", DX_Q_DATA_TIME, 0},
    {"data loading time", DX_Q_DATA_TIME, 0},
    {"data time", DX_Q_DATA_TIME, 0},
    {"data wait", DX_Q_DATA_TIME, 0},
    {"dataloader time", DX_Q_DATA_TIME, 0},
    {"dp rank", DX_Q_NONE, 0},
    {"duration", DX_Q_STEP_TIME, F_STEPLINE},
    {"elapsed", DX_Q_STEP_TIME, F_STEPLINE},
    {"elapsed time per iteration", DX_Q_STEP_TIME, 0},
    {"epoch", DX_Q_EPOCH, 0},
    {"eval loss", DX_Q_EVAL_LOSS, 0},
    {"examples s", DX_Q_THROUGHPUT, 0},
    {"forward time", DX_Q_NONE, 0},
    {"global grad norm", DX_Q_GRAD_NORM, 0},
    {"global rank", DX_Q_RANK, 0},
    {"global step", DX_Q_STEP, 0},
    {"gnorm", DX_Q_GRAD_NORM, 0},
    {"gpu mem", DX_Q_MEMORY, 0},
    {"gpu memory", DX_Q_MEMORY, 0},
    {"grad norm", DX_Q_GRAD_NORM, 0},
    {"gradient norm", DX_Q_GRAD_NORM, 0},
    {"it", DX_Q_STEP, 0},
    {"iter", DX_Q_STEP, 0},
    {"iter time", DX_Q_STEP_TIME, 0},
    {"iteration", DX_Q_STEP, 0},
    {"iteration time", DX_Q_STEP_TIME, 0},
    {"iters", DX_Q_STEP, 0},
    {"learning rate", DX_Q_LR, 0},
    {"len dataloader", DX_Q_TOTAL, 0},
    {"len train dataloader", DX_Q_TOTAL, 0},
    {"lm loss", DX_Q_LOSS, 0},
    {"local rank", DX_Q_NONE, 0},
    {"loss", DX_Q_LOSS, 0},
    {"loss scale", DX_Q_NONE, 0},
    {"loss total", DX_Q_LOSS, 0},
    {"lr", DX_Q_LR, 0},
    {"max allocated", DX_Q_MEMORY, 0},
    {"max mem", DX_Q_MEMORY, 0},
    {"max memory", DX_Q_MEMORY, 0},
    {"max memory allocated", DX_Q_MEMORY, 0},
    {"max steps", DX_Q_TOTAL, 0},
    {"maxmemallocated", DX_Q_MEMORY, 0},
    {"mean loss", DX_Q_LOSS, 0},
    {"mem", DX_Q_MEMORY, 0},
    {"memallocated", DX_Q_MEMORY, 0},
    {"memory", DX_Q_MEMORY, 0},
    {"memory allocated", DX_Q_MEMORY, 0},
    {"nan iterations", DX_Q_NAN_COUNT, 0},
    {"nll loss", DX_Q_LOSS, 0},
    {"node rank", DX_Q_NONE, 0},
    {"num batches", DX_Q_TOTAL, 0},
    {"num steps", DX_Q_TOTAL, 0},
    {"num training steps", DX_Q_TOTAL, 0},
    {"num updates", DX_Q_STEP, 0},
    {"number of batches", DX_Q_TOTAL, 0},
    {"number of nan iterations", DX_Q_NAN_COUNT, 0},
    {"optimizer step", DX_Q_STEP, 0},
    {"peak memory", DX_Q_MEMORY, 0},
    {"pp rank", DX_Q_NONE, 0},
    {"rank", DX_Q_RANK, 0},
    {"reduced train loss", DX_Q_LOSS, 0},
    {"runningavgsamplespersec", DX_Q_THROUGHPUT, 0},
    {"samples per sec", DX_Q_THROUGHPUT, 0},
    {"samples per second", DX_Q_THROUGHPUT, 0},
    {"samples s", DX_Q_THROUGHPUT, 0},
    {"samples sec", DX_Q_THROUGHPUT, 0},
    {"samplespersec", DX_Q_THROUGHPUT, 0},
    {"step", DX_Q_STEP, 0},
    {"step duration", DX_Q_STEP_TIME, 0},
    {"step time", DX_Q_STEP_TIME, 0},
    {"steps per epoch", DX_Q_TOTAL, 0},
    {"steps per second", DX_Q_STEP_RATE, 0},
    {"test loss", DX_Q_EVAL_LOSS, 0},
    {"tgs", DX_Q_THROUGHPUT, 0},
    {"throughput", DX_Q_THROUGHPUT, 0},
    {"time", DX_Q_STEP_TIME, F_STEPLINE},
    {"time per iteration", DX_Q_STEP_TIME, 0},
    {"time per step", DX_Q_STEP_TIME, 0},
    {"tokens per sec", DX_Q_THROUGHPUT, 0},
    {"tokens per sec per gpu", DX_Q_THROUGHPUT, 0},
    {"tokens per second", DX_Q_THROUGHPUT, 0},
    {"tokens s", DX_Q_THROUGHPUT, 0},
    {"took", DX_Q_STEP_TIME, F_STEPLINE | F_TIMEUNIT},
    {"total batches", DX_Q_TOTAL, 0},
    {"total loss", DX_Q_LOSS, 0},
    {"total norm", DX_Q_GRAD_NORM, 0},
    {"total optimization steps", DX_Q_TOTAL, 0},
    {"total steps", DX_Q_TOTAL, 0},
    {"tp rank", DX_Q_NONE, 0},
    {"tps", DX_Q_THROUGHPUT, 0},
    {"train loss", DX_Q_LOSS, 0},
    {"train loss epoch", DX_Q_LOSS, 0},
    {"train loss step", DX_Q_LOSS, 0},
    {"train samples per second", DX_Q_THROUGHPUT, 0},
    {"train step time", DX_Q_STEP_TIME, 0},
    {"train steps per second", DX_Q_STEP_RATE, 0},
    {"training loss", DX_Q_LOSS, 0},
    {"ups", DX_Q_STEP_RATE, 0},
    {"val loss", DX_Q_EVAL_LOSS, 0},
    {"valid loss", DX_Q_EVAL_LOSS, 0},
    {"validation loss", DX_Q_EVAL_LOSS, 0},
    {"world size", DX_Q_NONE, 0},
    {"wps", DX_Q_THROUGHPUT, 0},
};

_Static_assert(DX_ARRAY_LEN(units) * 2 <= LK_SLOTS && DX_ARRAY_LEN(names) * 2 <= LK_SLOTS,
               "the hash index needs room");

static void lk_build(void)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(units); i++)
        lk_add(&unit_index, units[i].name, i);
    for (size_t i = 0; i < DX_ARRAY_LEN(names); i++)
        lk_add(&name_index, names[i].name, i);
}

/* The row of names[] for the phrase s[0..n) (lower case, one blank between words), or NULL. */
static const name *find_name(const char *s, size_t n)
{
    pthread_once(&lk_once, lk_build);
    return lk_find(&name_index, names, sizeof *names, s, n);
}

/* Words a name may end with that are not part of it: units ("step_time_ms") and copulas ("the
 * loss is nan"). */
static int trailing_filler(const char *w, size_t n, const unit **u)
{
    if ((n == 2 && !memcmp(w, "is", 2)) || (n == 3 && !memcmp(w, "was", 3)))
        return 1;
    const unit *x = find_unit(w, n);
    if (x && (x->kind == U_TIME || (x->kind == U_MEMORY && n >= 2))) {
        *u = x;
        return 1;
    }
    return 0;
}

/* The quantity named by the words w[0..nw) (token indices into t), lower-cased, `_ - . /` read
 * as blanks, trailing units and copulas dropped (a unit goes to *u), and looked up by the longest
 * trailing phrase. */
static const name *lookup_name(const char *s, const tok *t, const size_t *w, size_t nw,
                               const unit **u)
{
    char buf[96];
    size_t starts[8], ns = 0, len = 0;
    for (size_t k = 0; k < nw; k++) {
        const tok *x = &t[w[k]];
        int inword = 0;
        for (size_t i = 0; i < x->len; i++) {
            unsigned char c = (unsigned char)s[x->off + i];
            if (c == '_' || c == '-' || c == '.' || c == '/') {
                inword = 0;
                continue;
            }
            if (!inword) {
                if (ns == DX_ARRAY_LEN(starts) || len + 2 >= sizeof buf)
                    return NULL;
                if (len)
                    buf[len++] = ' ';
                starts[ns++] = len;
                inword = 1;
            }
            if (len + 1 >= sizeof buf)
                return NULL;
            buf[len++] = (char)(is_alpha(c) ? c | 0x20 : c);
        }
    }
    buf[len] = '\0';
    /* the whole phrase first ("tokens_per_sec", "examples/s" are names), then without its
     * trailing fillers */
    const name *whole = ns ? find_name(buf, len) : NULL;
    if (whole && whole->q != DX_Q_NONE)
        return whole;
    while (ns > 1 && trailing_filler(buf + starts[ns - 1], len - starts[ns - 1], u)) {
        len = starts[--ns] - 1;
        buf[len] = '\0';
    }
    for (size_t k = 0; k < ns; k++) {
        const name *hit = find_name(buf + starts[k], len - starts[k]);
        if (hit)
            return hit;
    }
    return NULL;
}

int dx_metrics_tables_sorted(void)
{
    for (size_t i = 0; i < DX_ARRAY_LEN(names); i++)
        if ((i && strcmp(names[i - 1].name, names[i].name) >= 0) ||
            strpbrk(names[i].name, "0123456789"))
            return 0;
    for (size_t i = 0; i < DX_ARRAY_LEN(units); i++)
        if ((i && strcmp(units[i - 1].name, units[i].name) >= 0) ||
            strpbrk(units[i].name, "0123456789"))
            return 0;
    return 1;
}

/* ==== pairing names and values ============================================================== */

/* The words that name the value at token i: back over one separator, a parenthesised part
 * ("(ms)", "len(dataloader)"), and the words before it. Fills w (in order) and returns how many;
 * *u is a unit found in parentheses; *sep whether a separator stood between. */
static size_t name_words(const char *s, const tok *t, size_t i, size_t *w, size_t cap,
                         const unit **u, int *sep)
{
    size_t rev[8], n = 0;
    size_t k = i;
    *sep = 0;
    if (k && t[k - 1].type == T_SEP) {
        k--;
        *sep = 1;
    }
    /* "(ms)", "(dataloader)" or "[Loss]" just before */
    if (k >= 3 && t[k - 1].type == T_CLOSE && (t[k - 1].ch == ')' || t[k - 1].ch == ']') &&
        t[k - 2].type == T_WORD && t[k - 3].type == T_OPEN &&
        t[k - 3].ch == (t[k - 1].ch == ')' ? '(' : '[')) {
        const unit *x = find_unit(s + t[k - 2].off, t[k - 2].len);
        if (x)
            *u = x;
        else
            rev[n++] = k - 2;
        k -= 3;
    }
    /* a value in brackets named by the word before them: "Epoch [1]", "Epoch: [127/300]",
     * "iter[ 14/ 15]" */
    if (!*sep && n == 0 && k >= 2 && t[k - 1].type == T_OPEN && t[k - 1].ch == '[') {
        size_t b = k - 1;
        if (b >= 2 && t[b - 1].type == T_SEP)
            b--;
        if (b && t[b - 1].type == T_WORD && t[b - 1].ch != '%') {
            k = b;
            *sep = 1;
        }
    }
    while (k && n < DX_ARRAY_LEN(rev) && t[k - 1].type == T_WORD && t[k - 1].ch != '%') {
        /* a word that is a value's unit ("0.5 s loss 1.2") belongs to the value before it */
        if (k >= 2 && t[k - 2].type == T_NUM && n && find_unit(s + t[k - 1].off, t[k - 1].len))
            break;
        rev[n++] = --k;
        if (*sep == 0 && n == 1 && k && t[k - 1].type == T_NUM)
            break; /* "0.5 loss 1.2": one word between two numbers names the second */
    }
    size_t m = n < cap ? n : cap;
    for (size_t j = 0; j < m; j++)
        w[j] = rev[n - 1 - j + (n - m)];
    return m;
}

/* A count "n/N" with no name that still is a loop's progress: a tqdm bar's "| 3/8 [00:01<",
 * a bracketed "[  50/7330]" or "[  50/5004 (  1%)]" (mmcv, the ImageNet example, timm), and
 * fairseq's "epoch 001:    100 / 1563". */
static int keyless_count(const tok *t, size_t nt, size_t i, size_t j)
{
    if (!i)
        return 0;
    const tok *p = &t[i - 1], *x = j < nt ? &t[j] : NULL;
    if (p->type == T_BAR)
        return x && x->type == T_OPEN && x->ch == '[';
    if (p->type == T_OPEN && p->ch == '[')
        return x && ((x->type == T_CLOSE && x->ch == ']') || (x->type == T_OPEN && x->ch == '('));
    return p->type == T_SEP && i >= 2 && t[i - 2].type == T_NUM && !t[i - 2].bad;
}

static int is_step_q(const dx_metric *m) { return m->q == DX_Q_STEP; }

/* What a number's pairing looks up, from the tokens and the words' text alone (never from a
 * value): the unit after it, the unit its name or parentheses give, its name's row and words. */
typedef struct look {
    const unit *u, *ku;
    const name *nm;
    uint16_t w0, wl; /* the first and last word of its name */
    uint8_t nw;      /* words in its name, 0 none */
    uint8_t ready;
} look;

static void look_up(const char *s, const tok *t, size_t nt, size_t i, look *x)
{
    size_t j = i + 1;
    if (j + 1 < nt && t[j].type == T_SLASH && t[j + 1].type == T_NUM && !t[j + 1].bad)
        j += 2;
    x->u = NULL;
    if (j < nt && t[j].type == T_WORD && (!t[j].space || t[j].len > 1 || s[t[j].off] != '%'))
        x->u = find_unit(s + t[j].off, t[j].len);
    x->ku = NULL;
    size_t w[8];
    int sep;
    size_t nw = name_words(s, t, i, w, DX_ARRAY_LEN(w), &x->ku, &sep);
    x->nm = nw ? lookup_name(s, t, w, nw, &x->ku) : NULL;
    x->nw = (uint8_t)nw;
    x->w0 = (uint16_t)(nw ? w[0] : 0);
    x->wl = (uint16_t)(nw ? w[nw - 1] : 0);
    x->ready = 1;
}

/* What the pairing decides for number t[i] from the tokens and the words alone, before its
 * value is known: its total's token, the multiplier and unit it takes, the quantity its name or
 * unit gives (or that only a keyless "n/N" count can give it), its name's flags and place. A
 * number whose plan can never yield a metric (no quantity, and no keyless count) is skipped
 * whatever its value; a line of a known shape keeps the plans of its other numbers. */
typedef struct plan {
    const unit *u;      /* the unit after the multiplier's rule, or the name's; NULL none */
    double si;          /* a multiplier letter's factor, 0 none */
    uint32_t key, nkey; /* the name as written (0, 0 none) */
    uint16_t i, tot;    /* the number's token, its total's (0 none) */
    uint8_t q;          /* the quantity its name or unit gives, DX_Q_NONE none */
    uint8_t keyless;    /* no quantity, but a keyless "n/N" count if its total is not negative */
    uint8_t uk;         /* the unit's kind */
    uint8_t fl;         /* its name's flags */
} plan;

/* The plan of number t[i] (lk: its lookups, made here when not ready); 0 when it never yields a
 * metric. */
static int plan_number(const char *s, const tok *t, size_t nt, size_t i, look *x, plan *p)
{
    size_t j = i + 1;
    p->i = (uint16_t)i;
    p->tot = 0;
    if (j + 1 < nt && t[j].type == T_SLASH && t[j + 1].type == T_NUM && !t[j + 1].bad) {
        p->tot = (uint16_t)(j + 1);
        j += 2;
    }
    if (!x->ready)
        look_up(s, t, nt, i, x);
    const unit *u = x->u, *ku = x->ku;
    const name *nm_ = x->nm;
    /* a letter after a count is a multiplier ("22.8K" tokens/s, "11.5K" in a field named
       _ms), except on memory */
    int timeq = nm_ && (nm_->q == DX_Q_STEP_TIME || nm_->q == DX_Q_DATA_TIME);
    p->si = 0;
    if (u && u->si > 0 && timeq && !strcmp(u->name, "m"))
        u = find_unit("min", 3); /* "0.4m": minutes */
    else if (u && u->si > 0 && (!nm_ || nm_->q != DX_Q_MEMORY)) {
        p->si = u->si;
        u = NULL;
    }
    if (!u)
        u = ku;
    int q = DX_Q_NONE;
    p->fl = 0;
    p->key = p->nkey = 0;
    if (nm_) {
        q = nm_->q;
        p->fl = (uint8_t)nm_->flags;
        if (x->nw) {
            p->key = t[x->w0].off;
            p->nkey = t[x->wl].off + t[x->wl].len - t[x->w0].off;
        }
    }
    /* the unit can say more than the name, or name the quantity alone */
    int uk = u ? u->kind : U_NONE;
    p->keyless = 0;
    if (uk == U_STEP_TIME && (q == DX_Q_NONE || q == DX_Q_STEP_TIME))
        q = DX_Q_STEP_TIME;
    else if (uk == U_RATE && (q == DX_Q_NONE || q == DX_Q_STEP_TIME))
        q = DX_Q_STEP_RATE;
    else if (uk == U_THROUGHPUT && (q == DX_Q_NONE || q == DX_Q_STEP_TIME))
        q = DX_Q_THROUGHPUT;
    else if (q == DX_Q_NONE && p->tot && keyless_count(t, nt, i, j))
        p->keyless = 1;
    p->q = (uint8_t)q;
    p->u = u;
    p->uk = (uint8_t)uk;
    return q != DX_Q_NONE || p->keyless;
}

/* Applies plan p to the values val[]: the metric into *m, or 0 when the values rule it out. */
static int plan_apply(const plan *p, const double *val, dx_metric *m)
{
    *m = (dx_metric){p->q, val[p->i], p->tot ? val[p->tot] : -1, p->key, p->nkey};
    if (p->si > 0)
        m->v *= p->si;
    if (p->keyless && m->total >= 0)
        m->q = DX_Q_STEP;
    if (m->q == DX_Q_NONE)
        return 0;
    /* an index, a count or a rank is a whole number ("step: 1172.13" is a timer's ms) */
    if ((m->q == DX_Q_STEP || m->q == DX_Q_TOTAL || m->q == DX_Q_RANK) &&
        (!isfinite(m->v) || m->v != floor(m->v) || m->v < 0))
        return 0;
    if ((p->fl & F_TOTAL) && m->total < 0)
        return 0;
    if ((p->fl & F_TIMEUNIT) && p->uk != U_TIME)
        return 0;
    /* units: times to seconds, memory to bytes */
    if ((m->q == DX_Q_STEP_TIME || m->q == DX_Q_DATA_TIME) &&
        (p->uk == U_TIME || p->uk == U_STEP_TIME))
        m->v *= p->u->scale;
    else if (m->q == DX_Q_MEMORY && p->uk == U_MEMORY)
        m->v *= p->u->scale;
    else if ((m->q == DX_Q_STEP_TIME || m->q == DX_Q_DATA_TIME) && p->uk != U_NONE)
        return 0; /* a time with a unit that is not one */
    return 1;
}

/* The metrics of the plans p[0..np) (in token order) with the values val[], into out[0..cap);
 * returns how many. A metric "n/N" takes its total's token with it. */
static size_t plans_apply(const plan *p, size_t np, const double *val, dx_metric *out, size_t cap)
{
    size_t nm = 0, skip = 0; /* tokens up to skip - 1 are taken */
    int flags[64];
    if (cap > DX_ARRAY_LEN(flags))
        cap = DX_ARRAY_LEN(flags);
    for (size_t k = 0; k < np && nm < cap; k++) {
        if (p[k].i < skip)
            continue;
        dx_metric m;
        if (!plan_apply(&p[k], val, &m))
            continue;
        flags[nm] = p[k].fl;
        out[nm++] = m;
        if (m.total >= 0)
            skip = (size_t)p[k].i + 3u; /* the total is no value of its own */
    }
    /* generic words count only on a line that also gives a step */
    int has_step = 0;
    for (size_t k = 0; k < nm; k++)
        has_step |= is_step_q(&out[k]);
    size_t w = 0;
    for (size_t k = 0; k < nm; k++)
        if (!(flags[k] & F_STEPLINE) || has_step)
            out[w++] = out[k];
    return w;
}

/* The plans of the numbers of t[0..nt) that may yield a metric, into p[0..cap) (lk[i]: number
 * i's lookups, filled where not ready); returns how many. */
static size_t plan_all(const char *s, const tok *t, size_t nt, look *lk, plan *p, size_t cap)
{
    size_t np = 0;
    for (size_t i = 0; i < nt && np < cap; i++)
        if (t[i].type == T_NUM && !t[i].bad && plan_number(s, t, nt, i, &lk[i], &p[np]))
            np++;
    return np;
}

size_t dx_metrics_parse(const char *s, size_t n, dx_metric *out, size_t cap)
{
    return dx_metrics_parse_memo(NULL, s, n, out, cap);
}

/* ==== line shapes =========================================================================== */

/* A trainer prints the same line at every step with other numbers in it. Two lines that differ
 * only in which digits they hold (the same length, every other byte the same) cut into the same
 * tokens: the tokenizer decides by character class, never by a digit's value, except in one
 * place (a "0x" prefix), and lines with a digit before an x are never memoised. Their words are
 * the same, and so is every lookup, since no name or unit holds a digit (the unit test checks
 * it). So a memo keeps, per shape (the line with every digit read as 0), the tokens and the
 * lookups of each number; a line of a known shape only has its numbers' values read again, and
 * the pairing (which does depend on values: a step must be whole, a total positive) runs as for
 * a new line. A shape is kept from its second line on, so that lines seen once cost no copy. */

#define MEMO_SLOTS 256    /* a power of two */
#define MEMO_MAX_LEN 1024 /* longer lines are read afresh each time */
#define MEMO_MAX_TOKS 160

typedef struct shape {
    uint64_t hash;
    uint32_t n, nt, nnum, np;
    plan *p;           /* [np] the plans of the numbers that may yield a metric */
    double *word;      /* [nt] the values of numbers that are words (NaN, inf) */
    tok *t;            /* [nt] */
    uint16_t *num;     /* [nnum] the numbers whose value is read: those the plans name */
    unsigned char *sk; /* [n] the shape */
} shape;

struct dx_metrics_memo {
    uint64_t seen[MEMO_SLOTS]; /* the hash of the last shape seen once in each slot */
    shape *sh[MEMO_SLOTS];
};

dx_metrics_memo *dx_metrics_memo_new(void) { return dx_calloc(1, sizeof(dx_metrics_memo)); }

void dx_metrics_memo_free(dx_metrics_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < MEMO_SLOTS; i++)
        dx_free(m->sh[i]);
    dx_free(m);
}

/* The digits of the eight bytes w: 0x80 in each byte that is one. A byte below 0x80 is a digit
 * when adding 0x80 - '0' sets its top bit and adding 0x7f - '9' does not (neither carries into
 * the next byte). */
static uint64_t digits_of(uint64_t w)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t low = w & ~high;
    return (low + ones * (0x80 - '0')) & ~(low + ones * (0x7f - '9')) & ~w & high;
}

/* The eight bytes w with every digit read as '0', hashed into h. */
static uint64_t shape_word(uint64_t w, uint64_t h, unsigned char *sk)
{
    const uint64_t ones = 0x0101010101010101ull;
    uint64_t m = (digits_of(w) >> 7) * 0xff;
    w = (w & ~m) | (ones * '0' & m);
    memcpy(sk, &w, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

/* The shape of s[0..n) into sk (every digit read as '0'; sk has room for n + 8 bytes), eight
 * bytes at a time; returns its hash. */
static uint64_t shape_of(const char *s, size_t n, unsigned char *sk)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        memcpy(&w, s + i, 8);
        h = shape_word(w, h, sk + i);
    }
    if (i < n) {
        w = 0;
        memcpy(&w, s + i, n - i);
        h = shape_word(w, h, sk + i);
    }
    return h;
}

/* Whether a digit comes right before an x or X in the shape sk[0..n) (the tokenizer reads
 * "0x1f" by the digit's value): such a line is never memoised. A property of the shape, so a
 * line that matches a kept shape has none; only a new shape is looked at. */
static int shape_hex(const unsigned char *sk, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if ((sk[i] | 0x20) == 'x' && sk[i - 1] == '0')
            return 1;
    return 0;
}

/* A new shape from a line's tokens, every plan made (pl[0..np): the line's plans); NULL when
 * out of memory. */
static shape *shape_new(uint64_t h, const unsigned char *sk, size_t n, const tok *t,
                        const double *val, size_t nt, const plan *pl, size_t np)
{
    /* the values the plans read: their numbers' and their totals', in token order */
    unsigned char need[MEMO_MAX_TOKS] = {0};
    size_t nnum = 0;
    for (size_t k = 0; k < np; k++) {
        need[pl[k].i] = 1;
        if (pl[k].tot)
            need[pl[k].tot] = 1;
    }
    for (size_t i = 0; i < nt; i++)
        nnum += need[i];
    size_t size = sizeof(shape) + np * sizeof(plan) + nt * (sizeof(double) + sizeof(tok)) +
                  nnum * sizeof(uint16_t) + n;
    shape *x = dx_malloc(size);
    if (!x)
        return NULL;
    x->hash = h;
    x->n = (uint32_t)n;
    x->nt = (uint32_t)nt;
    x->nnum = (uint32_t)nnum;
    x->np = (uint32_t)np;
    x->p = (plan *)(x + 1);
    x->word = (double *)(x->p + np);
    x->t = (tok *)(x->word + nt);
    x->num = (uint16_t *)(x->t + nt);
    x->sk = (unsigned char *)(x->num + nnum);
    memcpy(x->p, pl, np * sizeof(plan));
    memcpy(x->t, t, nt * sizeof(tok));
    memcpy(x->sk, sk, n);
    nnum = 0;
    for (size_t i = 0; i < nt; i++) {
        x->word[i] = val[i];
        if (need[i])
            x->num[nnum++] = (uint16_t)i;
    }
    return x;
}

size_t dx_metrics_parse_memo(dx_metrics_memo *m, const char *s, size_t n, dx_metric *out,
                             size_t cap)
{
    if (!s || !n || !cap)
        return 0;
    if (n > MX_SCAN)
        n = MX_SCAN;
    pthread_once(&tenths_once, tenths_build);
    unsigned char sk[MEMO_MAX_LEN + 8];
    uint64_t h = 0;
    shape **slot = NULL;
    if (m && n <= MEMO_MAX_LEN) {
        h = shape_of(s, n, sk);
        slot = &m->sh[h & (MEMO_SLOTS - 1)];
        const shape *x = *slot;
        if (x && x->hash == h && x->n == n && !memcmp(x->sk, sk, n)) {
            double val[MEMO_MAX_TOKS];
            for (size_t k = 0; k < x->nnum; k++) {
                size_t i = x->num[k];
                if (x->t[i].ch == 'w')
                    val[i] = x->word[i];
                else
                    lex_value(s, n, x->t[i].off, &val[i]);
            }
            return plans_apply(x->p, x->np, val, out, cap);
        }
        if (shape_hex(sk, n))
            slot = NULL;
    }
    tok t[MX_TOKS];
    double val[MX_TOKS];
    size_t nt = lex(s, n, t, val, MX_TOKS);
    look lk[MX_TOKS];
    for (size_t i = 0; i < nt; i++)
        lk[i].ready = 0;
    plan pl[MX_TOKS];
    size_t np = plan_all(s, t, nt, lk, pl, DX_ARRAY_LEN(pl));
    if (slot && nt <= MEMO_MAX_TOKS) {
        uint64_t *seen = &m->seen[h & (MEMO_SLOTS - 1)];
        if (*seen == h) {
            shape *x = shape_new(h, sk, n, t, val, nt, pl, np);
            if (x) {
                dx_free(*slot);
                *slot = x;
            }
        } else
            *seen = h;
    }
    return plans_apply(pl, np, val, out, cap);
}

const char *dx_qty_name(int q)
{
    static const char *const qn[] = {"none",       "loss",      "eval_loss", "grad_norm",
                                     "lr",         "step_time", "data_time", "step_rate",
                                     "throughput", "memory",    "step",      "total_steps",
                                     "epoch",      "rank",      "nan_count"};
    return q >= 0 && (size_t)q < DX_ARRAY_LEN(qn) ? qn[q] : "?";
}

/* ==== metrics =============================================================================== */

typedef struct mr_rank {
    double step, total; /* its last step and the steps of that loop, -1 unknown */
    uint32_t lines;     /* lines with a metric */
} mr_rank;

/* Step lines no prefix or field gives to a rank (mp.spawn's workers share one console): how
 * many times each step of the first epoch was printed; the most copies of one step is how many
 * processes print them. */
typedef struct mr_state {
    /* the memo of line shapes (made at the first line; without one, when memory is short, each
       line is read afresh, to the same result) */
    dx_metrics_memo *memo;
    int tried;
    uint16_t copies[64];
    int max_copies;
    /* ... and of those copies, how many gave a loss, how many a non-finite one */
    uint16_t losses[64], bad[64];
} mr_state;

const dx_reading dx_reading_metrics;
const dx_reading dx_reading_nan_onset;

int dx_metrics_unranked_copies(const dx_job_model *jm)
{
    const mr_state *st = dx_job_state(jm, &dx_reading_metrics);
    return st ? st->max_copies : 0;
}

static void mr_rank_init(void *rs)
{
    mr_rank *x = rs;
    x->step = x->total = -1;
}

int dx_metrics_step(const dx_job_model *jm, const dx_rank *x, double *step, double *total)
{
    const mr_rank *m = dx_rank_priv(jm, x, &dx_reading_metrics);
    if (!m || !m->lines)
        return 0;
    *step = m->step;
    *total = m->total;
    return 1;
}

static void nan_note(dx_job_model *jm, int rank, const dx_metric *m, double index,
                     const dx_line *l);

/* The first metric of quantity q on the line, or NULL. */
static const dx_metric *first_q(const dx_metric *m, size_t n, int q)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].q == q)
            return &m[i];
    return NULL;
}

/* One sample of each kind per line for the steps reading: the step's time, else its rate, else
 * the throughput (inverted: the straggler compares each rank with the fastest, so any time per
 * unit of work will do, one kind per rank); and the data wait. */
static void mr_samples(dx_job_model *jm, int rank, const dx_metric *m, size_t n)
{
    const dx_metric *st = first_q(m, n, DX_Q_STEP_TIME), *rt = first_q(m, n, DX_Q_STEP_RATE),
                    *tp = first_q(m, n, DX_Q_THROUGHPUT), *dt = first_q(m, n, DX_Q_DATA_TIME);
    if (st && isfinite(st->v))
        dx_steps_add(jm, rank, 0, st->v);
    else if (rt && isfinite(rt->v) && rt->v > 0)
        dx_steps_add(jm, rank, 0, 1.0 / rt->v);
    else if (tp && isfinite(tp->v) && tp->v > 0)
        dx_steps_add(jm, rank, 0, 1.0 / tp->v);
    if (dt && isfinite(dt->v))
        dx_steps_add(jm, rank, 1, dt->v);
}

static void unranked_step(mr_state *st, const dx_metric *m, size_t n)
{
    const dx_metric *s = first_q(m, n, DX_Q_STEP), *e = first_q(m, n, DX_Q_EPOCH);
    if (!s || !(s->v >= 0 && s->v < (double)DX_ARRAY_LEN(st->copies)) || s->v != floor(s->v) ||
        (e && e->v != 0))
        return;
    size_t i = (size_t)s->v;
    uint16_t *c = &st->copies[i];
    if (*c < UINT16_MAX && ++*c > st->max_copies)
        st->max_copies = *c;
    const dx_metric *loss = first_q(m, n, DX_Q_LOSS);
    if (loss && st->losses[i] < UINT16_MAX) {
        st->losses[i]++;
        st->bad[i] += !isfinite(loss->v);
    }
}

int dx_metrics_unranked_onset(const dx_job_model *jm, int *copies, int *all_from)
{
    const mr_state *st = dx_job_state(jm, &dx_reading_metrics);
    size_t n = st ? DX_ARRAY_LEN(st->losses) : 0, s = 0;
    while (s < n && !st->bad[s])
        s++;
    if (s == n || st->bad[s] != 1 || st->losses[s] < 2)
        return -1;
    for (size_t t = s + 1; t < n; t++)
        if (st->losses[t] >= 2 && st->bad[t] == st->losses[t]) {
            *copies = st->losses[s];
            *all_from = (int)t;
            return (int)s;
        }
    return -1;
}

static void mr_fini(void *stp) { dx_metrics_memo_free(((mr_state *)stp)->memo); }

static int mr_line(dx_job_model *jm, void *stp, const dx_line *l)
{
    mr_state *st = stp;
    if (!st->tried) {
        st->memo = dx_metrics_memo_new();
        st->tried = 1;
    }
    dx_metric m[32];
    size_t body = l->attr->body <= l->len ? l->attr->body : l->len;
    size_t n = dx_metrics_parse_memo(st->memo, l->text + body, l->len - body, m, DX_ARRAY_LEN(m));
    if (!n)
        return DDX_OK;
    /* the line's rank: its prefix or file, else the rank it names before any other metric
     * ("rank 1 | loss ...", {"rank": 1, ...}; a rank named after them is another message's, as
     * when a watchdog line is glued to a progress bar) */
    int rank = l->rank;
    const dx_metric *r = m[0].q == DX_Q_RANK ? &m[0] : NULL;
    if (rank < 0 && r && r->v >= 0 && r->v < DX_JOB_MAX_RANK && r->v == floor(r->v))
        rank = (int)r->v;
    size_t useful = 0;
    for (size_t i = 0; i < n; i++)
        useful += m[i].q != DX_Q_RANK;
    if (rank < 0 && useful)
        unranked_step(stp, m, n);
    if (rank < 0 || !useful)
        return DDX_OK;
    mr_rank *x = dx_job_rstate(jm, &dx_reading_metrics, rank, 1);
    if (!x)
        return DDX_ENOMEM;
    x->lines++;
    const dx_metric *s = first_q(m, n, DX_Q_STEP), *t = first_q(m, n, DX_Q_TOTAL);
    if (s && isfinite(s->v) && s->v >= 0) {
        x->step = s->v;
        if (s->total > 0)
            x->total = s->total;
    }
    if (t && isfinite(t->v) && t->v > 0)
        x->total = t->v;
    if (s && x->total > 0 && x->step <= x->total && x->step == floor(x->step))
        dx_progress_note(jm, rank, (long long)x->step, (long long)x->total);
    if (s)
        dx_phases_note_step(jm, l);
    mr_samples(jm, rank, m, n);
    /* the index of the line's values: its step (within its epoch when both are given) */
    const dx_metric *e = first_q(m, n, DX_Q_EPOCH);
    double index = -1;
    if (s && isfinite(s->v))
        index = s->v + (e && isfinite(e->v) && e->v == floor(e->v) ? e->v * 1e7 : 0);
    for (size_t i = 0; i < n; i++)
        if (m[i].q == DX_Q_LOSS || m[i].q == DX_Q_GRAD_NORM || m[i].q == DX_Q_EVAL_LOSS ||
            m[i].q == DX_Q_NAN_COUNT)
            nan_note(jm, rank, &m[i], index, l);
    return DDX_OK;
}

/* A line that begins by naming its rank is that process's own: "[rank 1] ...", "rank 1 | ...",
 * "Rank 1: ...", "rank=1 ...", {"rank": 1, ...} (a line indented, as a launcher's table is, or
 * naming the rank later, as a message about another rank does, is not). */
static int mr_line_rank(dx_job_model *jm, void *stp, const dx_line *l)
{
    (void)jm;
    (void)stp;
    if (l->rank >= 0)
        return -1;
    size_t b = l->attr->body <= l->len ? l->attr->body : l->len, n = l->len - b, i = 0;
    const char *s = l->text + b;
    if (n < 6)
        return -1;
    if (s[i] == '[' || s[i] == '{')
        i++;
    if (i < n && s[i] == '"')
        i++;
    if (i + 4 > n || (s[i] | 0x20) != 'r' || (s[i + 1] | 0x20) != 'a' || (s[i + 2] | 0x20) != 'n' ||
        (s[i + 3] | 0x20) != 'k')
        return -1;
    i += 4;
    if (i < n && s[i] == '"')
        i++;
    /* a separator before the number ("rank2 (local_rank: 2)" is a launcher's table) */
    if (i < n && (s[i] == ' ' || s[i] == '=' || s[i] == ':'))
        i++;
    else
        return -1;
    if (i < n && s[i] == ' ')
        i++;
    size_t d = i;
    long long r = 0;
    while (i < n && i < d + 6 && is_digit((unsigned char)s[i]))
        r = r * 10 + (s[i++] - '0');
    if (i == d || (i < n && (is_digit((unsigned char)s[i]) || is_alpha((unsigned char)s[i]) ||
                             s[i] == '.' || s[i] == '/')))
        return -1;
    return (int)r;
}

static void mr_describe(const dx_job_model *jm, const void *st, const void *rs, dx_rank_view *v)
{
    (void)jm;
    (void)st;
    const mr_rank *x = rs;
    /* a rank whose only progress is in its metrics */
    if (!v->has_prog && x->lines && x->step >= 0 && x->total > 0 && x->step <= x->total) {
        v->has_prog = 1;
        v->prog_n = (long long)x->step;
        v->prog_m = (long long)x->total;
    }
}

const dx_reading dx_reading_metrics = {
    .name = "metrics",
    .doc = "each rank's numeric metrics in any spelling (k=v, k: v, dicts, JSON, Megatron's | "
           "fields, tqdm and Lightning bars): its step and loop length, its step and data-wait "
           "times and rates (for the straggler), its losses and gradient norms (for NaN onset)",
    .state_size = sizeof(mr_state),
    .fini = mr_fini,
    .rank_size = sizeof(mr_rank),
    .rank_init = mr_rank_init,
    .line_rank = mr_line_rank,
    .on_line = mr_line,
    .describe = mr_describe,
};

/* ==== nan-onset ============================================================================= */

static const dx_reading_fact no_facts[] = {
    {"job.nan_rank", "int",
     "per-rank metrics (any spelling: k=v, dicts, JSON, Megatron's fields, bars): the one rank "
     "whose loss (then gradient norm, validation loss, Megatron's NaN-iteration count) is NaN or "
     "infinite at an earlier step than every other rank's, by the step the line gives, else by "
     "the count of values the rank printed; with step lines that name no rank (mp.spawn's shared "
     "console), the worker mp.spawn reports failing first with an error about a non-finite value"},
    {"job.nan_onset", "string", "the same comparison, said: which rank, which value, which step"},
    {"job.nan_unranked", "int",
     "the step at which one of several processes printing step lines that name no rank (a shared "
     "console, mp.spawn) has a non-finite loss while the others' are finite, before a later step "
     "at which every process's is: NaN onset on one process, its rank unknown"},
};

/* the quantities NaN onset compares, in the order that decides: the loss is each rank's own (the
 * gradient norm is computed after the all-reduce on most trainers, so every rank sees its NaN at
 * the same step) */
static const int no_order[] = {DX_Q_LOSS, DX_Q_NAN_COUNT, DX_Q_GRAD_NORM, DX_Q_EVAL_LOSS};
#define NO_NQ DX_ARRAY_LEN(no_order)

typedef struct no_rank {
    uint32_t seen[NO_NQ]; /* values read of each quantity */
    double onset[NO_NQ];  /* the index of the first non-finite one, -1 none */
    char where[NO_NQ][160];
} no_rank;

typedef struct no_state {
    int rank; /* -1 none */
    char why[400];
    char where[160];
} no_state;

static void no_init(void *st) { ((no_state *)st)->rank = -1; }
static void no_rank_init(void *rs)
{
    no_rank *x = rs;
    for (size_t k = 0; k < NO_NQ; k++)
        x->onset[k] = -1;
}

static size_t no_slot(int q)
{
    for (size_t k = 0; k < NO_NQ; k++)
        if (no_order[k] == q)
            return k;
    return NO_NQ;
}

/* A value of rank's: its index is the line's step, else how many values of that quantity the
 * rank printed so far; a non-finite one moves the rank's onset of that quantity earlier. */
static void nan_note(dx_job_model *jm, int rank, const dx_metric *m, double index, const dx_line *l)
{
    size_t k = no_slot(m->q);
    no_rank *x = dx_job_rstate(jm, &dx_reading_nan_onset, rank, 1);
    if (k == NO_NQ || !x)
        return;
    x->seen[k]++;
    int bad = m->q == DX_Q_NAN_COUNT ? m->v > 0 : !isfinite(m->v);
    double at = index >= 0 ? index : x->seen[k];
    /* the earliest step, not the first line read: stderr and stdout interleave out of order */
    if (!bad || (x->onset[k] >= 0 && x->onset[k] <= at))
        return;
    x->onset[k] = at;
    snprintf(x->where[k], sizeof x->where[k], "%s:%llu", l->path, (unsigned long long)l->lineno);
}

static void index_text(double idx, char *buf, size_t cap)
{
    if (idx >= 1e7)
        snprintf(buf, cap, "epoch %.0f step %.0f", floor(idx / 1e7), fmod(idx, 1e7));
    else
        snprintf(buf, cap, "step %.0f", idx);
}

/* Does the exception line name a non-finite value ("loss is nan", "found NaN in local grad norm",
 * "returned nan values", "inf", "non-finite", FloatingPointError)? */
static int names_nonfinite(const char *s)
{
    static const char *const words[] = {"nan",        "inf",       "infinite",
                                        "non-finite", "nonfinite", "floatingpointerror"};
    for (const char *p = s; p && *p;) {
        while (*p && !isalpha((unsigned char)*p))
            p++;
        const char *w = p;
        while (*p && (isalpha((unsigned char)*p) || *p == '-'))
            p++;
        for (size_t k = 0; k < DX_ARRAY_LEN(words); k++)
            if ((size_t)(p - w) == strlen(words[k]) && !strncasecmp(w, words[k], (size_t)(p - w)))
                return 1;
    }
    return 0;
}

/* Step lines that name no rank showed one process's loss non-finite a step before every
 * process's (dx_metrics_unranked_onset); mp.spawn reported worker r's own exception, and it is
 * about a non-finite value: the process that failed first on its NaN is the one whose loss
 * turned first, and mp.spawn's report gives its rank. */
static void spawn_onset(const dx_job_model *jm, no_state *st)
{
    int copies, all_from, at = dx_metrics_unranked_onset(jm, &copies, &all_from);
    uint32_t given;
    int r = dx_spawn_raised(jm, &given);
    const dx_rank *x = dx_job_rank_get(jm, r);
    const char *ex = x ? dx_exception_original(jm, x, NULL) : NULL;
    if (at < 0 || !ex || !names_nonfinite(ex))
        return;
    st->rank = r;
    snprintf(st->where, sizeof st->where, "mp.spawn's report of process %d", r);
    snprintf(st->why, sizeof st->why,
             "one of the %d processes printing step %d has a non-finite loss, every process's "
             "from step %d (the lines name no rank); mp.spawn reports process %d's own error "
             "about it first (%.120s)",
             copies, at, all_from, r, ex);
}

/* Per quantity, in no_order: the ranks that printed it; the earliest onset; when exactly one rank
 * has it and another rank printed that quantity too (finite then, or non-finite later), that
 * rank is where the NaN began. */
static int no_finish(dx_job_model *jm, void *stp)
{
    no_state *st = stp;
    for (size_t k = 0; k < NO_NQ && st->rank < 0; k++) {
        int first = -1, at_best = 0, with = 0;
        double best = -1, next = -1;
        for (size_t r = 0; r < jm->nby; r++) {
            const no_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_nan_onset);
            if (!x || !x->seen[k])
                continue;
            with++;
            double o = x->onset[k];
            if (o < 0)
                continue;
            if (first < 0 || o < best) {
                if (first >= 0 && (next < 0 || best < next))
                    next = best;
                first = (int)r;
                best = o;
                at_best = 1;
            } else if (o == best)
                at_best++;
            else if (next < 0 || o < next)
                next = o;
        }
        int ties = at_best > 1, others = with - 1;
        if (first < 0 || ties || !others)
            continue;
        const no_rank *x = dx_rank_priv(jm, jm->by_rank[first], &dx_reading_nan_onset);
        char at[48], later[48];
        index_text(best, at, sizeof at);
        if (next >= 0)
            index_text(next, later, sizeof later);
        st->rank = first;
        snprintf(st->where, sizeof st->where, "%s", x->where[k]);
        snprintf(
            st->why, sizeof st->why, "rank %d's %s is %s at %s (%s), before any other rank's%s%s%s",
            first, dx_qty_name(no_order[k]),
            no_order[k] == DX_Q_NAN_COUNT ? "counted NaN" : "non-finite", at, x->where[k],
            next >= 0 ? " (the others' from " : "", next >= 0 ? later : "", next >= 0 ? ")" : "");
    }
    if (st->rank < 0)
        spawn_onset(jm, st);
    if (st->rank < 0)
        return DDX_OK;
    return dx_job_vote(jm, "nan", st->rank, 1, "metrics: %s", st->why);
}

static int no_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    const no_state *st = stp;
    int copies, all_from,
        at = st->rank < 0 ? dx_metrics_unranked_onset(jm, &copies, &all_from) : -1;
    if (at >= 0) {
        int rc = dx_job_fact(f, "job.nan_unranked", "step lines that name no rank", "%d", at);
        return rc ? rc
                  : dx_job_fact(f, "job.nan_onset", "step lines that name no rank",
                                "one of the %d processes printing step %d has a non-finite loss; "
                                "from step %d on every process's is (the lines name no rank)",
                                copies, at, all_from);
    }
    if (st->rank < 0)
        return DDX_OK;
    int rc = dx_job_fact(f, "job.nan_rank", st->why, "%d", st->rank);
    return rc ? rc : dx_job_fact(f, "job.nan_onset", st->where, "%s", st->why);
}

const dx_reading dx_reading_nan_onset = {
    .name = "nan-onset",
    .doc = "the one rank whose loss or gradient norm turns NaN or infinite at an earlier step "
           "than every other rank's (the metrics reading's values); votes for it",
    .facts = no_facts,
    .nfacts = DX_ARRAY_LEN(no_facts),
    .state_size = sizeof(no_state),
    .rank_size = sizeof(no_rank),
    .init = no_init,
    .rank_init = no_rank_init,
    .finish = no_finish,
    .publish = no_publish,
};
