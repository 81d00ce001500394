/* attrib.c -- peeling launcher and logger prefixes off a log line: rank, host, pid, time, level.
 *
 * One table, `recognisers`, has a row per prefix format: its name, its DX_PFX_* bit, the classes
 * of byte it can start with, and a parse function. dx_attrib_line applies the table again and
 * again at the start of the line, so nested prefixes peel off in whatever order the launchers
 * stacked them ("0: [rank0]:[E0501 ...] ", "host1: [default3]:[2024-05-01 ...] [INFO] ..."):
 * skip blanks, try every row whose first-byte class fits, take the first that matches, repeat
 * until none does. A row matches at most once per line. Adding a launcher's format is one row,
 * one parse function and one test.
 *
 * A parse function gets the text at the current position (not NUL-terminated: it must never
 * look at s[n] or beyond) and returns how many bytes the prefix spans, 0 when it does not fit.
 * It parses into locals and writes to the dx_attr only once it has matched. The first prefix to
 * name a rank, local rank, pid or host wins (the outer launcher knows best); a time replaces an
 * earlier one only when the earlier lacked a year, because inner loggers print fuller dates than
 * glog. Each prefix also takes one blank after it; further blanks are skipped only to look for
 * another prefix, so that a traceback's indentation stays in the body.
 *
 * It runs on every line of multi-gigabyte logs: a line whose first byte no row can start with is
 * rejected after one table look-up, and every parse function tests its first bytes before
 * anything else.
 *
 * Also here: the rank a per-rank file's name implies (dx_attrib_rank_from_name), and time keys
 * and ISO 8601 formatting with days-from-civil arithmetic (no dependence on TZ or libc time).
 * Everything is pure: no allocation, no global state.
 */
#include "attrib.h"

/* ===================================================================================== */
/* Small scanners over (s, n)                                                              */
/* ===================================================================================== */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
static bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool is_alpha(char c) { return is_lower(c) || is_upper(c); }
static bool is_alnum(char c) { return is_alpha(c) || is_digit(c); }
static bool is_blank(char c) { return c == ' ' || c == '\t'; }
static char to_lower(char c) { return is_upper(c) ? (char)(c - 'A' + 'a') : c; }

/* Reads exactly k digits at s[i]; 0 when they are not all there. */
static bool fixed_digits(const char *s, size_t n, size_t i, size_t k, int *v)
{
    if (i + k > n)
        return false;
    int x = 0;
    for (size_t j = 0; j < k; j++) {
        if (!is_digit(s[i + j]))
            return false;
        x = x * 10 + (s[i + j] - '0');
    }
    *v = x;
    return true;
}

/* Reads 1..max digits at s[i] into *v; returns how many (0: none, or more than max). */
static size_t some_digits(const char *s, size_t n, size_t i, size_t max, long *v)
{
    size_t j = i;
    long x = 0;
    *v = 0;
    while (j < n && is_digit(s[j])) {
        if (j - i == max)
            return 0;
        x = x * 10 + (s[j] - '0');
        j++;
    }
    *v = x;
    return j - i;
}

/* The length of the literal lit when s[i..] starts with it, else 0 (lit is never empty). A
 * byte loop: the literals are a few bytes long and most lines differ at the first one, so this
 * costs less than strlen and memcmp, which every line would call. */
static size_t lit_at(const char *s, size_t n, size_t i, const char *lit)
{
    if (i > n)
        return 0;
    size_t k = 0;
    while (lit[k] && i + k < n && s[i + k] == lit[k])
        k++;
    return lit[k] ? 0 : k;
}

/* Does s[i..] start with the literal lit? */
static bool has_at(const char *s, size_t n, size_t i, const char *lit)
{
    return !*lit ? i <= n : lit_at(s, n, i, lit) != 0;
}

/* The same, ignoring ASCII case (lit in lower case). */
static bool has_at_nocase(const char *s, size_t n, size_t i, const char *lit)
{
    size_t k = strlen(lit);
    if (i > n || n - i < k)
        return false;
    for (size_t j = 0; j < k; j++)
        if (to_lower(s[i + j]) != lit[j])
            return false;
    return true;
}

/* Takes one blank after a prefix, if there is one. */
static size_t one_blank(const char *s, size_t n, size_t i)
{
    return i < n && is_blank(s[i]) ? i + 1 : i;
}

/* ===================================================================================== */
/* Dates and times                                                                         */
/* ===================================================================================== */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The inverse: the civil date of a day count. */
static void civil_from_days(int64_t z, int *y, int *m, int *d)
{
    z += 719468;
    const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    const int64_t doe = z - era * 146097;
    const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = (int)(yoe + era * 400 + (*m <= 2));
}

static bool valid_date(int y, int m, int d)
{
    static const int mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1])
        return false;
    if (m == 2 && d == 29 && y != 0 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return false;
    return true;
}

/* "HH:MM:SS" then an optional fraction ('.' or ',' and 1-12 digits; nanoseconds are cut to
 * microseconds). Returns the bytes used, 0 when it is not a time of day. */
static size_t parse_hms(const char *s, size_t n, dx_time *t)
{
    int h, mi, se;
    if (!fixed_digits(s, n, 0, 2, &h) || !has_at(s, n, 2, ":") || !fixed_digits(s, n, 3, 2, &mi) ||
        !has_at(s, n, 5, ":") || !fixed_digits(s, n, 6, 2, &se))
        return 0;
    if (h > 23 || mi > 59 || se > 60)
        return 0;
    size_t i = 8;
    int usec = 0;
    if (i + 1 < n && (s[i] == '.' || s[i] == ',') && is_digit(s[i + 1])) {
        size_t j = i + 1, k = 0;
        while (j < n && is_digit(s[j]) && k < 12) {
            if (k < 6)
                usec = usec * 10 + (s[j] - '0');
            j++, k++;
        }
        for (; k < 6; k++)
            usec *= 10;
        i = j;
    }
    if (i < n && is_digit(s[i])) /* 13+ fraction digits or "12:00:001": not a time we know */
        return 0;
    t->hour = h, t->min = mi, t->sec = se, t->usec = usec;
    return i;
}

/* Moves t (which must carry a date) back by off_min minutes, to UTC. */
static void shift_to_utc(dx_time *t, int off_min)
{
    int64_t secs = days_from_civil(t->year, t->month, t->day) * 86400 + t->hour * 3600 +
                   t->min * 60 + t->sec - (int64_t)off_min * 60;
    int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
    int64_t rem = secs - days * 86400;
    civil_from_days(days, &t->year, &t->month, &t->day);
    t->hour = (int)(rem / 3600);
    t->min = (int)(rem % 3600 / 60);
    t->sec = (int)(rem % 60);
}

/* A zone right after a time: "Z", "+02:00", "+0200", "-05". Returns bytes used (0: none). */
static size_t parse_zone(const char *s, size_t n, int *off_min)
{
    if (n >= 1 && s[0] == 'Z') {
        *off_min = 0;
        return 1;
    }
    if (n < 3 || (s[0] != '+' && s[0] != '-'))
        return 0;
    int hh, mm = 0;
    if (!fixed_digits(s, n, 1, 2, &hh) || hh > 18)
        return 0;
    size_t i = 3;
    if (has_at(s, n, i, ":") && fixed_digits(s, n, i + 1, 2, &mm))
        i += 3;
    else if (fixed_digits(s, n, i, 2, &mm))
        i += 2;
    if (mm > 59 || (i < n && is_digit(s[i])))
        return 0;
    *off_min = (s[0] == '-' ? -1 : 1) * (hh * 60 + mm);
    return i;
}

/* A date and a time: "YYYY-MM-DD", "YYYY/MM/DD" or "MM/DD/YYYY" (Hugging Face examples), then
 * ' ' or 'T', then parse_hms, then an optional zone (which makes the fields UTC). *sep gets the
 * separator between date and time. Returns the bytes used, 0 when it is not one. */
static size_t parse_datetime(const char *s, size_t n, dx_time *t, char *sep)
{
    int y, m, d;
    size_t i;
    if (n < 19 || !is_digit(s[0]) || !is_digit(s[1]))
        return 0;
    if (fixed_digits(s, n, 0, 4, &y) && (s[4] == '-' || s[4] == '/') &&
        fixed_digits(s, n, 5, 2, &m) && s[7] == s[4] && fixed_digits(s, n, 8, 2, &d)) {
        i = 10;
    } else if (s[2] == '/' && fixed_digits(s, n, 0, 2, &m) && fixed_digits(s, n, 3, 2, &d) &&
               s[5] == '/' && fixed_digits(s, n, 6, 4, &y)) {
        i = 10;
    } else {
        return 0;
    }
    if (y < 1970 || y > 2999 || !valid_date(y, m, d) || i >= n || (s[i] != ' ' && s[i] != 'T'))
        return 0;
    *sep = s[i++];
    dx_time tt = {0};
    size_t used = parse_hms(s + i, n - i, &tt);
    if (!used)
        return 0;
    i += used;
    tt.year = y, tt.month = m, tt.day = d;
    int off;
    size_t z = parse_zone(s + i, n - i, &off);
    if (z) {
        shift_to_utc(&tt, off);
        tt.tz_known = 1;
        i += z;
    }
    *t = tt;
    return i;
}

/* ===================================================================================== */
/* Levels and file:line tags                                                               */
/* ===================================================================================== */

static const struct level_word {
    const char *word; /* upper case, as Python logging and DeepSpeed print it */
    size_t len;
    char level;
} level_words[] = {
    {"DEBUG", 5, 'D'}, {"INFO", 4, 'I'},     {"WARNING", 7, 'W'}, {"WARN", 4, 'W'},
    {"ERROR", 5, 'E'}, {"CRITICAL", 8, 'F'}, {"FATAL", 5, 'F'},   {"TRACE", 5, 'T'},
};

/* A level word at s[i] ending at a non-letter; returns its length and sets *level. */
static size_t level_word_at(const char *s, size_t n, size_t i, char *level)
{
    if (i >= n || !is_upper(s[i]))
        return 0;
    for (size_t k = 0; k < DX_ARRAY_LEN(level_words); k++) {
        size_t len = level_words[k].len;
        if (n - i >= len && memcmp(s + i, level_words[k].word, len) == 0 &&
            (i + len == n || !is_alpha(s[i + len]))) {
            *level = level_words[k].level;
            return len;
        }
    }
    return 0;
}

/* A Python logger name ("torch.distributed.run", "__main__") at s[i]; returns its length. */
static size_t logger_name(const char *s, size_t n, size_t i)
{
    size_t j = i;
    while (j < n && (is_alnum(s[j]) || s[j] == '_' || s[j] == '.') && j - i < 128)
        j++;
    return j - i;
}

/* glog and c10 severity letters. */
static char glog_level(char c)
{
    switch (c) {
    case 'I':
        return 'I';
    case 'W':
        return 'W';
    case 'E':
        return 'E';
    case 'F':
        return 'F';
    case 'V':
        return 'D';
    default:
        return 0;
    }
}

/* A glog location closing a header: "file.cc:12]" (or "path/file.py:12:func]" for DeepSpeed);
 * no blanks, a ':' and digits before the ']'. Returns bytes used including ']', 0 if not. */
static size_t file_line_tag(const char *s, size_t n, size_t i0)
{
    size_t i = i0;
    bool colon_digit = false;
    while (i < n && s[i] != ']' && !is_blank(s[i]) && i - i0 < 256) {
        if (s[i] == ':' && i + 1 < n && is_digit(s[i + 1]))
            colon_digit = true;
        i++;
    }
    if (i >= n || s[i] != ']' || i == i0 || !colon_digit)
        return 0;
    return i + 1 - i0;
}

/* ===================================================================================== */
/* Writing what a prefix found: first wins                                                 */
/* ===================================================================================== */

static void put_rank(dx_attr *a, long r)
{
    if (a->rank < 0)
        a->rank = (int)r;
}

static void put_local_rank(dx_attr *a, long r)
{
    if (a->local_rank < 0)
        a->local_rank = (int)r;
}

static void put_pid(dx_attr *a, long pid)
{
    if (a->pid < 0)
        a->pid = pid;
}

static void put_host(dx_attr *a, const char *p, size_t n)
{
    if (a->host.n == 0 && n > 0) {
        a->host.p = p;
        a->host.n = n;
    }
}

static void put_level(dx_attr *a, char level)
{
    if (!a->level)
        a->level = level;
}

static void put_time(dx_attr *a, const dx_time *t)
{
    if (!a->has_time || (a->time.year == 0 && t->year != 0)) {
        a->time = *t;
        a->has_time = 1;
    }
}

/* ===================================================================================== */
/* The recognisers                                                                          */
/* ===================================================================================== */

/* A rank in brackets at the line's start: OPEN (o bytes), 1-7 digits, CLOSE (c bytes); the length taken (with the
 * one blank after it when blank is set), 0 when the line does not start so. */
static size_t bracket_rank(const char *s, size_t n, dx_attr *a, const char *open, size_t o,
                           const char *close, size_t c, int blank)
{
    long r;
    if (n < o + 1 + c || memcmp(s, open, o) != 0)
        return 0;
    size_t k = some_digits(s, n, o, 7, &r);
    if (!k || n - o - k < c || memcmp(s + o + k, close, c) != 0)
        return 0;
    put_rank(a, r);
    return blank ? one_blank(s, n, o + k + c) : o + k + c;
}

/* torchrun --tee / log_line_prefix_template, global rank: "[rank3]:" (corpus ddp-012). */
static size_t parse_torchrun_rank(const char *s, size_t n, dx_attr *a)
{
    return bracket_rank(s, n, a, "[rank", 5, "]:", 2, 1);
}

/* Lightning's rank_prefixed_message: "[rank: 3] " (lightning/fabric/utilities/rank_zero.py), the
 * global rank, before the message of its rank-aware logging. */
static size_t parse_lightning_rank(const char *s, size_t n, dx_attr *a)
{
    return bracket_rank(s, n, a, "[rank: ", 7, "] ", 2, 0);
}

/* kubectl logs --prefix: "[pod/trainer-worker-0/pytorch] " (the pod, then the container); the
 * pod is the line's host. */
static size_t parse_kubectl(const char *s, size_t n, dx_attr *a)
{
    if (!has_at(s, n, 0, "[pod/"))
        return 0;
    size_t i = 5, h = i;
    while (i < n && i - h < 253 && (is_alnum(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_'))
        i++;
    size_t hn = i - h;
    if (!hn || !has_at(s, n, i, "/"))
        return 0;
    size_t c = ++i;
    while (i < n && i - c < 253 && (is_alnum(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_'))
        i++;
    if (i == c || !has_at(s, n, i, "] "))
        return 0;
    put_host(a, s + h, hn);
    return i + 2;
}

/* torchrun --tee, role name and LOCAL rank: "[default3]:", "[trainer1]:". */
static size_t parse_torchrun_role(const char *s, size_t n, dx_attr *a)
{
    if (n < 5 || s[0] != '[' || !(is_alpha(s[1]) || s[1] == '_'))
        return 0;
    size_t i = 1;
    while (i < n && (is_alnum(s[i]) || s[i] == '_') && i < 64)
        i++;
    size_t d = i;
    while (d > 1 && is_digit(s[d - 1]))
        d--;
    if (d == i || i - d > 7 || !has_at(s, n, i, "]:"))
        return 0;
    if (d - 1 == 4 && memcmp(s + 1, "rank", 4) == 0) /* a second "[rankN]:" is no role */
        return 0;
    long r;
    some_digits(s, n, d, 7, &r);
    put_local_rank(a, r);
    return one_blank(s, n, i + 2);
}

/* mpirun --tag-output: "[1,3]<stderr>:" (jobid, rank; corpus ox-024). */
static size_t parse_mpirun(const char *s, size_t n, dx_attr *a)
{
    long job, r;
    if (n < 7 || s[0] != '[')
        return 0;
    size_t i = 1, k = some_digits(s, n, i, 9, &job);
    if (!k || !has_at(s, n, i + k, ","))
        return 0;
    i += k + 1;
    k = some_digits(s, n, i, 7, &r);
    if (!k || !has_at(s, n, i + k, "]<"))
        return 0;
    i += k + 2;
    size_t w = i;
    while (i < n && is_lower(s[i]) && i - w < 8)
        i++;
    if (i == w || !has_at(s, n, i, ">:"))
        return 0;
    put_rank(a, r);
    return one_blank(s, n, i + 2);
}

/* srun -l: "3: " -- digits, ':' and a blank; only as the first prefix (see the table). */
static size_t parse_srun(const char *s, size_t n, dx_attr *a)
{
    long r;
    size_t k = some_digits(s, n, 0, 6, &r);
    if (!k || !has_at(s, n, k, ":") || k + 1 >= n || !is_blank(s[k + 1]))
        return 0;
    put_rank(a, r);
    return k + 2;
}

/* Words that end in digits and may start a line with ": " but are no host ("epoch3: ..."). */
static const char *const not_hosts[] = {
    "epoch", "step",  "iter",   "iteration", "batch", "rank",  "layer",
    "loss",  "stage", "device", "cuda",      "gpu",   "line",  "test",
    "train", "eval",  "val",    "block",     "part",  "phase", "round",
};

/* pdsh / DeepSpeed multi-node: "worker-1: ", "node001: ", "10.0.0.1: ". Conservative: lower-case
 * letters, digits, '.', '-', '_' only; at least one digit; a letter or a dotted quad; a message
 * after it; and not a counter such as "epoch3". Only as the first prefix. */
static size_t parse_host(const char *s, size_t n, dx_attr *a)
{
    size_t i = 0, digits = 0, letters = 0, dots = 0;
    while (i < n && i < 253 &&
           (is_lower(s[i]) || is_digit(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_')) {
        digits += is_digit(s[i]);
        letters += is_lower(s[i]);
        dots += s[i] == '.';
        i++;
    }
    if (i == 0 || !digits || !has_at(s, n, i, ": ") || i + 2 >= n || is_blank(s[i + 2]))
        return 0;
    if (!letters && dots != 3)
        return 0;
    if (!is_alnum(s[0]) || !is_alnum(s[i - 1]))
        return 0;
    /* "epoch3", "step_100": a word from the stop list, then digits only */
    size_t w = 0;
    while (w < i && is_lower(s[w]))
        w++;
    size_t rest = w;
    if (rest < i && (s[rest] == '_' || s[rest] == '-'))
        rest++;
    bool counter = rest < i;
    for (size_t j = rest; j < i; j++)
        counter = counter && is_digit(s[j]);
    if (counter) {
        for (size_t k = 0; k < DX_ARRAY_LEN(not_hosts); k++)
            if (strlen(not_hosts[k]) == w && memcmp(s, not_hosts[k], w) == 0)
                return 0;
    }
    put_host(a, s, i);
    return i + 2;
}

/* Ray worker output: "(RayTrainWorker pid=1234, ip=10.0.0.1) ", "(pid=1234) ",
 * "(raylet, ip=10.0.0.1) ". A name, then key=value items; needs a pid or an ip. */
static size_t parse_ray(const char *s, size_t n, dx_attr *a)
{
    if (n < 6 || s[0] != '(')
        return 0;
    size_t i = 1;
    long pid = -1;
    const char *ip = NULL;
    size_t ip_n = 0;
    /* optional actor or task name, up to a blank or a comma */
    size_t name = i;
    while (i < n && i - name < 128 &&
           (is_alnum(s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-' || s[i] == ':'))
        i++;
    if (i < n && s[i] == '=') {
        i = name; /* no name: the first item is a key */
    } else if (i < n && (is_blank(s[i]) || s[i] == ',')) {
        if (s[i] == ',')
            i++;
        while (i < n && is_blank(s[i]))
            i++;
    } else {
        return 0;
    }
    for (int items = 0; items < 8; items++) {
        size_t key = i;
        while (i < n && (is_lower(s[i]) || s[i] == '_') && i - key < 16)
            i++;
        if (i == key || !has_at(s, n, i, "="))
            return 0;
        size_t key_n = i - key, val = ++i;
        while (i < n && s[i] != ',' && s[i] != ')' && !is_blank(s[i]) && i - val < 128)
            i++;
        if (i == val || i >= n)
            return 0;
        if (key_n == 3 && memcmp(s + key, "pid", 3) == 0) {
            long v;
            if (some_digits(s, n, val, 10, &v) != i - val)
                return 0;
            pid = v;
        } else if (key_n == 2 && memcmp(s + key, "ip", 2) == 0) {
            ip = s + val;
            ip_n = i - val;
        }
        if (s[i] == ')')
            break;
        if (s[i] == ',')
            i++;
        while (i < n && is_blank(s[i]))
            i++;
    }
    if (i >= n || s[i] != ')' || (pid < 0 && !ip))
        return 0;
    if (pid >= 0)
        put_pid(a, pid);
    put_host(a, ip, ip_n);
    return one_blank(s, n, i + 1);
}

/* glog's date: MMDD (glog), MDD (c10's own logger prints the month unpadded: "W516", corpus
 * ddp-012) or YYYYMMDD (glog 0.7, Debian's torch: "W20261130"). Needs a blank after it. */
static size_t glog_date(const char *s, size_t n, size_t i, dx_time *t)
{
    size_t k = 0;
    while (i + k < n && is_digit(s[i + k]) && k < 9)
        k++;
    if (i + k >= n || s[i + k] != ' ')
        return 0;
    int y = 0, m, d;
    if (k == 8) {
        if (!fixed_digits(s, n, i, 4, &y) || !fixed_digits(s, n, i + 4, 2, &m) ||
            !fixed_digits(s, n, i + 6, 2, &d) || y < 1970)
            return 0;
    } else if (k == 4 || k == 3) {
        if (!fixed_digits(s, n, i, k - 2, &m) || !fixed_digits(s, n, i + k - 2, 2, &d))
            return 0;
    } else {
        return 0;
    }
    if (!valid_date(y, m, d))
        return 0;
    t->year = y, t->month = m, t->day = d;
    return k;
}

/* After glog's time: blanks, an optional thread id, blanks, then "file.cc:12]". Returns the
 * offset just past ']', 0 if it is not there. */
static size_t glog_tail(const char *s, size_t n, size_t i)
{
    while (i < n && s[i] == ' ')
        i++;
    size_t t = i;
    while (i < n && is_digit(s[i]) && i - t < 10)
        i++;
    if (i > t) { /* a thread id, or the file's name starts with digits */
        if (i < n && s[i] == ' ') {
            while (i < n && s[i] == ' ')
                i++;
        } else {
            i = t;
        }
    }
    size_t tag = file_line_tag(s, n, i);
    return tag ? i + tag : 0;
}

/* glog: "E0501 12:00:01.123456  1234 file.cc:12] ", and with the year,
 * "I20261130 03:41:27.523504 21248 socket.cpp:426] " (Debian's torch, see
 * design/torch-on-cpu-notes.md). The number after the time is a thread id, not a pid. */
static size_t parse_glog(const char *s, size_t n, dx_attr *a)
{
    if (n < 20 || !glog_level(s[0]) || !is_digit(s[1]))
        return 0;
    dx_time t = {0};
    size_t k = glog_date(s, n, 1, &t);
    if (!k)
        return 0;
    size_t i = 1 + k + 1;
    size_t used = parse_hms(s + i, n - i, &t);
    if (!used)
        return 0;
    size_t end = glog_tail(s, n, i + used);
    if (!end)
        return 0;
    put_time(a, &t);
    put_level(a, glog_level(s[0]));
    return one_blank(s, n, end);
}

/* c10 logging: "[E1218 12:49:09.086536415 ProcessGroupNCCL.cpp:616] " (torch 2.4+, corpus
 * ddp-027), "[W516 14:34:56.854597329 socket.cpp:489] " (ddp-012), and without a time,
 * "[E ProcessGroupNCCL.cpp:566] " (torch 1.x, ddp-015) or "[W socket.cpp:426] " (ox-039). */
static size_t parse_torch_glog(const char *s, size_t n, dx_attr *a)
{
    if (n < 6 || s[0] != '[' || !glog_level(s[1]))
        return 0;
    dx_time t = {0};
    bool timed = false;
    size_t i;
    if (s[2] == ' ') {
        i = 3;
    } else {
        size_t k = glog_date(s, n, 2, &t);
        if (!k)
            return 0;
        i = 2 + k + 1;
        size_t used = parse_hms(s + i, n - i, &t);
        if (!used)
            return 0;
        i += used;
        timed = true;
    }
    size_t end = glog_tail(s, n, i);
    if (!end)
        return 0;
    if (timed)
        put_time(a, &t);
    put_level(a, glog_level(s[1]));
    return one_blank(s, n, end);
}

/* After a Python-logging time: the level and logger name in the common layouts, e.g.
 * " - INFO - ", " - root - INFO - ", " - INFO - __main__ - " (corpus ddp-009), " | INFO | name | "
 * (fairseq), " INFO ", " [INFO] ", or a glog-style ": E file.cc:12] " (TSL/XLA). Returns the
 * offset after what it took (i itself when nothing fits) and sets *level. */
/* loguru's default record location after the level, "module:function:12 - ", at s[i]: its length,
 * 0 when absent. */
static size_t loguru_location(const char *s, size_t n, size_t i)
{
    size_t j = i;
    for (int part = 0; part < 2; part++) {
        size_t b = j;
        while (j < n && j - b < 128 &&
               (is_alnum(s[j]) || s[j] == '_' || s[j] == '.' || s[j] == '<' || s[j] == '>' ||
                s[j] == '-'))
            j++;
        if (j == b || !has_at(s, n, j, ":"))
            return 0;
        j++;
    }
    long line;
    size_t k = some_digits(s, n, j, 9, &line);
    if (!k || !has_at(s, n, j + k, " - "))
        return 0;
    return j + k + 3 - i;
}

static size_t pylog_tail(const char *s, size_t n, size_t i, char *level)
{
    size_t k;
    char lv = 0; /* copied to *level only when a layout matched */
    /* XLA/TSL: "2024-10-09 15:47:38.568412: E external/xla/...cc:1170] " */
    if (has_at(s, n, i, ": ") && i + 3 < n && glog_level(s[i + 2]) && s[i + 3] == ' ') {
        size_t tag = file_line_tag(s, n, i + 4);
        if (tag) {
            *level = glog_level(s[i + 2]);
            return one_blank(s, n, i + 4 + tag);
        }
    }
    if (has_at(s, n, i, " - ") || has_at(s, n, i, " | ")) {
        const char sep[4] = {' ', s[i + 1], ' ', 0};
        size_t j = i + 3;
        /* the level, or one logger name and then the level */
        for (int field = 0; field < 2; field++) {
            size_t pad = 0; /* loguru pads the level to eight columns: "| ERROR    | " */
            if ((k = level_word_at(s, n, j, &lv)))
                while (j + k + pad < n && s[j + k + pad] == ' ' && pad < 8)
                    pad++;
            if (k && pad && sep[1] == '|' && has_at(s, n, j + k + pad - 1, sep) &&
                (pad > 1 || loguru_location(s, n, j + k + pad + 2))) {
                j += k + pad + 2;
                *level = lv;
                return j + loguru_location(s, n, j);
            }
            if ((k = level_word_at(s, n, j, &lv)) && has_at(s, n, j + k, sep)) {
                j += k + 3;
                /* a logger name after the level: "INFO - __main__ - " */
                size_t nm = logger_name(s, n, j);
                if (nm && has_at(s, n, j + nm, sep))
                    j += nm + 3;
                *level = lv;
                return j;
            }
            size_t nm = logger_name(s, n, j);
            if (!nm || !has_at(s, n, j + nm, sep))
                break;
            j += nm + 3;
        }
        return one_blank(s, n, i);
    }
    if (has_at(s, n, i, " [") && (k = level_word_at(s, n, i + 2, &lv)) &&
        has_at(s, n, i + 2 + k, "]")) {
        *level = lv;
        return one_blank(s, n, i + 2 + k + 1);
    }
    if (has_at(s, n, i, " ") && (k = level_word_at(s, n, i + 1, &lv)) && i + 1 + k < n &&
        (s[i + 1 + k] == ' ' || s[i + 1 + k] == ':')) {
        *level = lv;
        return one_blank(s, n, i + 1 + k + (s[i + 1 + k] == ':'));
    }
    if (has_at(s, n, i, ": "))
        return i + 2;
    return one_blank(s, n, i);
}

/* Python logging's asctime: "2024-05-01 12:00:01,123", "2024/05/01 12:00:01",
 * "09/04/2024 02:49:57" (corpus ddp-009), with the level layouts of pylog_tail. */
static size_t parse_pylog(const char *s, size_t n, dx_attr *a)
{
    dx_time t;
    char sep, level = 0;
    size_t i = parse_datetime(s, n, &t, &sep);
    if (!i || sep != ' ')
        return 0;
    i = pylog_tail(s, n, i, &level);
    put_time(a, &t);
    if (level)
        put_level(a, level);
    return i;
}

/* Python logging's basicConfig default, "%(levelname)s:%(name)s:%(message)s":
 * "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) ..." (corpus
 * fsdp-027). The name must follow the ':' directly, so "ERROR: disk full" is no prefix. */
static size_t parse_pylog_level(const char *s, size_t n, dx_attr *a)
{
    char level = 0;
    size_t k = level_word_at(s, n, 0, &level);
    if (!k || !has_at(s, n, k, ":"))
        return 0;
    size_t nm = logger_name(s, n, k + 1);
    if (!nm || !has_at(s, n, k + 1 + nm, ":"))
        return 0;
    put_level(a, level);
    return k + 1 + nm + 1;
}

/* The stream tag of the CRI log format (containerd and CRI-O, the files under /var/log/pods
 * and /var/log/containers that log collectors ship): " stdout F " or " stderr P " after the
 * time, F a full line, P a part of a longer one. Returns its length at s[i], 0 when absent. */
static size_t cri_stream(const char *s, size_t n, size_t i)
{
    if (!(has_at(s, n, i, " stdout ") || has_at(s, n, i, " stderr ")) || i + 9 >= n ||
        (s[i + 8] != 'F' && s[i + 8] != 'P') || s[i + 9] != ' ')
        return 0;
    return 10;
}

/* ISO 8601: "2024-05-01T12:00:01.123456Z", "2024-05-01T14:00:01+02:00" (to UTC), kubectl
 * --timestamps, structured loggers; with the CRI stream tag, a container runtime's log file:
 * "2024-05-01T12:00:01.123456789Z stderr F ". */
static size_t parse_iso(const char *s, size_t n, dx_attr *a)
{
    dx_time t;
    char sep, level = 0;
    size_t i = parse_datetime(s, n, &t, &sep);
    if (!i || sep != 'T')
        return 0;
    size_t cri = cri_stream(s, n, i);
    if (cri) {
        put_time(a, &t);
        return i + cri;
    }
    i = pylog_tail(s, n, i, &level);
    put_time(a, &t);
    if (level)
        put_level(a, level);
    return i;
}

/* "[2024-05-01 12:00:01,123]" and the like, Ray's "[2024-05-01 12:00:01,123 E 1234 5678]",
 * torchelastic's "[2024-05-01 12:00:01,123] torch.distributed.run: [WARNING] ";
 * with require_level, the DeepSpeed form "[2024-05-01 12:00:01,123] [INFO] [launch.py:123:main] "
 * (corpus ds-012). */
static size_t bracket_time(const char *s, size_t n, dx_attr *a, bool require_level)
{
    if (n < 21 || s[0] != '[' || !is_digit(s[1]))
        return 0;
    dx_time t;
    char sep, level = 0;
    size_t i = parse_datetime(s + 1, n - 1, &t, &sep);
    if (!i)
        return 0;
    i += 1;
    /* Ray's C++ logs (spdlog "[%Y-%m-%d %H:%M:%S,%e %L %P %t]"): level letter, pid, thread id */
    long pid = -1, tid;
    size_t k, k2;
    if (i + 3 < n && s[i] == ' ' && s[i + 1] && strchr("TDIWEC", s[i + 1]) && s[i + 2] == ' ' &&
        (k = some_digits(s, n, i + 3, 10, &pid)) && has_at(s, n, i + 3 + k, " ") &&
        (k2 = some_digits(s, n, i + 4 + k, 10, &tid)) && has_at(s, n, i + 4 + k + k2, "]")) {
        level = s[i + 1] == 'C' ? 'F' : s[i + 1];
        i += 4 + k + k2;
    } else {
        pid = -1;
    }
    if (!has_at(s, n, i, "]"))
        return 0;
    char lv = 0;
    size_t nm;
    /* Hydra's job logging: "[2024-05-01 12:00:01,123][__main__][ERROR] - " */
    if (!require_level && has_at(s, n, i + 1, "[") && (nm = logger_name(s, n, i + 2)) &&
        has_at(s, n, i + 2 + nm, "][") && (k = level_word_at(s, n, i + 2 + nm + 2, &lv)) &&
        has_at(s, n, i + 2 + nm + 2 + k, "] - ")) {
        put_time(a, &t);
        if (pid >= 0)
            put_pid(a, pid);
        put_level(a, lv);
        return i + 2 + nm + 2 + k + 4;
    }
    i = one_blank(s, n, i + 1);
    if (has_at(s, n, i, "[") && (k = level_word_at(s, n, i + 1, &lv)) &&
        has_at(s, n, i + 1 + k, "]")) {
        level = lv;
        i = one_blank(s, n, i + 1 + k + 1);
        size_t tag;
        if (has_at(s, n, i, "[") && (tag = file_line_tag(s, n, i + 1)))
            i = one_blank(s, n, i + 1 + tag);
    } else if (require_level) {
        return 0;
    } else if ((k2 = logger_name(s, n, i)) && has_at(s, n, i + k2, ": [") &&
               (k = level_word_at(s, n, i + k2 + 3, &lv)) && has_at(s, n, i + k2 + 3 + k, "]")) {
        /* torchelastic 2.1-2.3: "[2024-05-01 12:00:01,123] torch.distributed.run: [WARNING] " */
        level = lv;
        i = one_blank(s, n, i + k2 + 3 + k + 1);
    }
    put_time(a, &t);
    if (pid >= 0)
        put_pid(a, pid);
    if (level)
        put_level(a, level);
    return i;
}

static size_t parse_deepspeed(const char *s, size_t n, dx_attr *a)
{
    return bracket_time(s, n, a, true);
}
static size_t parse_time_bracket(const char *s, size_t n, dx_attr *a)
{
    return bracket_time(s, n, a, false);
}

/* mpirun --timestamp-output, C's ctime: "Tue Nov 27 13:49:06 2018" (corpus ox-018, followed
 * directly by "[1,10]<stdout>:"). */
static size_t parse_ctime(const char *s, size_t n, dx_attr *a)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    static const char wdays[] = "MonTueWedThuFriSatSun";
    if (n < 24 || !is_upper(s[0]) || s[3] != ' ' || s[7] != ' ')
        return 0;
    bool wday = false;
    for (size_t k = 0; k < 7 && !wday; k++)
        wday = memcmp(s, wdays + 3 * k, 3) == 0;
    int m = 0;
    for (int k = 0; k < 12 && !m; k++)
        if (memcmp(s + 4, months + 3 * k, 3) == 0)
            m = k + 1;
    if (!wday || !m)
        return 0;
    int d;
    if (fixed_digits(s, n, 8, 2, &d)) {
    } else if (s[8] == ' ' && fixed_digits(s, n, 9, 1, &d)) {
    } else {
        return 0;
    }
    if (s[10] != ' ')
        return 0;
    dx_time t = {0};
    size_t used = parse_hms(s + 11, n - 11, &t);
    if (!used || !has_at(s, n, 11 + used, " "))
        return 0;
    size_t i = 11 + used + 1;
    int y;
    if (!fixed_digits(s, n, i, 4, &y) || y < 1970 || !valid_date(y, m, d))
        return 0;
    t.year = y, t.month = m, t.day = d;
    put_time(a, &t);
    return one_blank(s, n, i + 4);
}

/* The syslog and journal text form (rsyslog's default template, `journalctl` output):
 * "May  1 12:00:01 node1 python[1234]: " or "May 01 12:00:01 node1 kernel: " -- month, day, time
 * (no year), host, the program and its pid. The host is the line's host. */
static size_t parse_syslog(const char *s, size_t n, dx_attr *a)
{
    static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
    if (n < 20 || !is_upper(s[0]) || s[3] != ' ')
        return 0;
    int m = 0, d;
    for (int k = 0; k < 12 && !m; k++)
        if (memcmp(s, months + 3 * k, 3) == 0)
            m = k + 1;
    if (!m)
        return 0;
    if (fixed_digits(s, n, 4, 2, &d)) {
    } else if (s[4] == ' ' && fixed_digits(s, n, 5, 1, &d)) {
    } else {
        return 0;
    }
    if (s[6] != ' ' || !valid_date(2000, m, d))
        return 0;
    dx_time t = {0};
    size_t used = parse_hms(s + 7, n - 7, &t);
    if (!used || !has_at(s, n, 7 + used, " "))
        return 0;
    size_t h = 7 + used + 1, i = h;
    while (i < n && i - h < 64 && (is_alnum(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_'))
        i++;
    size_t hn = i - h;
    if (!hn || !has_at(s, n, i, " "))
        return 0;
    size_t p = ++i;
    while (i < n && i - p < 64 && s[i] != '[' && s[i] != ':' && !is_blank(s[i]))
        i++;
    if (i == p)
        return 0;
    long pid = -1;
    size_t k;
    if (has_at(s, n, i, "[")) {
        if (!(k = some_digits(s, n, i + 1, 10, &pid)) || !has_at(s, n, i + 1 + k, "]"))
            return 0;
        i += 1 + k + 1;
    }
    if (!has_at(s, n, i, ":"))
        return 0;
    t.month = m, t.day = d;
    put_time(a, &t);
    put_host(a, s + h, hn);
    if (pid >= 0)
        put_pid(a, pid);
    return one_blank(s, n, i + 1);
}

/* NCCL debug output: "host:pid:tid [dev] " (corpus ox-003; NCCL 2.26+ may put a
 * "[2025-01-01 12:00:00] " before it, which the bracketed-time row takes). The rest stays in the
 * body ("NCCL INFO ...", "include/shm.h:28 NCCL WARN ..."); the level is read from it. */
static size_t parse_nccl(const char *s, size_t n, dx_attr *a)
{
    size_t i = 0;
    while (i < n && i < 256 && (is_alnum(s[i]) || s[i] == '.' || s[i] == '-' || s[i] == '_'))
        i++;
    if (i == 0 || i >= n || s[i] != ':')
        return 0;
    size_t host_n = i++;
    long pid, tid, dev;
    size_t k = some_digits(s, n, i, 10, &pid);
    if (!k || !has_at(s, n, i + k, ":"))
        return 0;
    i += k + 1;
    if (!(k = some_digits(s, n, i, 10, &tid)) || !has_at(s, n, i + k, " ["))
        return 0;
    i += k + 2;
    if (!(k = some_digits(s, n, i, 4, &dev)) || !has_at(s, n, i + k, "] "))
        return 0;
    i += k + 2;
    /* "NCCL INFO", or "file:line [(func)] NCCL WARN", or old "file:line WARN" (ox-033) */
    char level = 0;
    size_t j = i;
    if (!has_at(s, n, j, "NCCL ")) {
        while (j < n && !is_blank(s[j]) && j - i < 256)
            j++;
        j = one_blank(s, n, j);
        if (has_at(s, n, j, "(")) {
            while (j < n && s[j] != ')' && j - i < 512)
                j++;
            j = one_blank(s, n, j + 1);
        }
    }
    if (has_at(s, n, j, "NCCL "))
        j += 5;
    size_t lk = level_word_at(s, n, j, &level);
    if (lk && j + lk < n && s[j + lk] == ' ')
        put_level(a, level);
    put_host(a, s, host_n);
    put_pid(a, pid);
    return i;
}

/* ---- the table ---- */

/* Classes of first byte; a row lists the ones it can start with. */
enum {
    FB_BRACKET = 1u << 0, /* '[' */
    FB_PAREN = 1u << 1,   /* '(' */
    FB_DIGIT = 1u << 2,
    FB_LOWER = 1u << 3,
    FB_UPPER = 1u << 4,
    FB_OTHER = 1u << 5 /* '-', '.', '_' (a cut NCCL host name, corpus ox-045) */
};

static unsigned first_byte_class(unsigned char c)
{
    if (c == '[')
        return FB_BRACKET;
    if (c == '(')
        return FB_PAREN;
    if (is_digit((char)c))
        return FB_DIGIT;
    if (is_lower((char)c))
        return FB_LOWER;
    if (is_upper((char)c))
        return FB_UPPER;
    if (c == '-' || c == '.' || c == '_')
        return FB_OTHER;
    return 0;
}

enum { ROW_FIRST_ONLY = 1u << 0 }; /* only as the line's outermost prefix */

typedef size_t (*prefix_fn)(const char *s, size_t n, dx_attr *a);

static const struct recogniser {
    const char *name;
    unsigned flag;    /* DX_PFX_* */
    unsigned first;   /* FB_* it can start with */
    unsigned options; /* ROW_* */
    prefix_fn parse;
} recognisers[] = {
    /* Order matters only where two rows could match the same text: the stricter one first. */
    {"torchrun-rank", DX_PFX_TORCHRUN_RANK, FB_BRACKET, 0, parse_torchrun_rank},
    {"mpirun", DX_PFX_MPIRUN, FB_BRACKET, 0, parse_mpirun},
    {"torch-glog", DX_PFX_TORCH_GLOG, FB_BRACKET, 0, parse_torch_glog},
    {"deepspeed", DX_PFX_DEEPSPEED, FB_BRACKET, 0, parse_deepspeed},
    {"time-bracket", DX_PFX_TIME_BRACKET, FB_BRACKET, 0, parse_time_bracket},
    {"torchrun-role", DX_PFX_TORCHRUN_ROLE, FB_BRACKET, 0, parse_torchrun_role},
    {"ray", DX_PFX_RAY, FB_PAREN, 0, parse_ray},
    {"iso8601", DX_PFX_ISO, FB_DIGIT, 0, parse_iso},
    {"pylog", DX_PFX_PYLOG, FB_DIGIT, 0, parse_pylog},
    {"glog", DX_PFX_GLOG, FB_UPPER, 0, parse_glog},
    {"pylog-level", DX_PFX_PYLOG_LEVEL, FB_UPPER, 0, parse_pylog_level},
    {"ctime", DX_PFX_CTIME, FB_UPPER, 0, parse_ctime},
    {"syslog", DX_PFX_SYSLOG, FB_UPPER, ROW_FIRST_ONLY, parse_syslog},
    {"lightning-rank", DX_PFX_LIGHTNING_RANK, FB_BRACKET, 0, parse_lightning_rank},
    {"kubectl", DX_PFX_KUBECTL, FB_BRACKET, ROW_FIRST_ONLY, parse_kubectl},
    {"nccl", DX_PFX_NCCL, FB_DIGIT | FB_LOWER | FB_UPPER | FB_OTHER, 0, parse_nccl},
    {"srun", DX_PFX_SRUN, FB_DIGIT, ROW_FIRST_ONLY, parse_srun},
    {"host", DX_PFX_HOST, FB_DIGIT | FB_LOWER, ROW_FIRST_ONLY, parse_host},
};

const char *dx_attrib_prefix_name(unsigned flag)
{
    for (size_t k = 0; k < DX_ARRAY_LEN(recognisers); k++)
        if (recognisers[k].flag == flag)
            return recognisers[k].name;
    return NULL;
}

void dx_attrib_line(const char *line, size_t n, dx_attr *out)
{
    memset(out, 0, sizeof *out);
    out->rank = -1;
    out->local_rank = -1;
    out->pid = -1;
    if (!line)
        return;

    size_t pos = 0;
    for (int depth = 0; depth < (int)DX_ARRAY_LEN(recognisers); depth++) {
        size_t i = pos;
        while (i < n && is_blank(line[i]))
            i++;
        if (i >= n)
            break;
        unsigned cls = first_byte_class((unsigned char)line[i]);
        if (!cls)
            break;
        size_t used = 0;
        for (size_t k = 0; k < DX_ARRAY_LEN(recognisers) && !used; k++) {
            const struct recogniser *r = &recognisers[k];
            if (!(r->first & cls) || (out->recognised & r->flag) ||
                ((r->options & ROW_FIRST_ONLY) && depth > 0))
                continue;
            used = r->parse(line + i, n - i, out);
            if (used)
                out->recognised |= r->flag;
        }
        if (!used)
            break;
        pos = i + used;
    }
    out->body = pos;
}

/* The rank alone, for the lines no pattern proposes: only four rows can name a rank or a local
 * rank (torchrun's "[rank3]:" and "[default3]:", mpirun's "[1,3]<stderr>:", srun's "3: " as the
 * first prefix), so a line that starts with none of them and holds no "]:" or ">:" has none, and
 * a line that starts with "[rank3]:" has rank 3 whatever follows (the outermost prefix wins).
 * Anything else is read by the whole table. */
int dx_attrib_rank(const char *line, size_t n)
{
    if (!line)
        return -1;
    size_t i = 0;
    while (i < n && is_blank(line[i]))
        i++;
    dx_attr a;
    a.rank = -1;
    int maybe = 0;
    if (i + 5 < n && line[i] == '[' && line[i + 1] == 'r' &&
        (parse_torchrun_rank(line + i, n - i, &a) || parse_lightning_rank(line + i, n - i, &a)))
        return a.rank;
    maybe = i < n && is_digit(line[i]); /* srun's "3: " */
    for (const char *c = memchr(line, ':', n); c && !maybe;
         c = memchr(c + 1, ':', (size_t)(line + n - c - 1)))
        maybe = c > line && (c[-1] == ']' || c[-1] == '>');
    /* Lightning's, behind another prefix: looked for last, by its '[' (a line of figures has
       few; a memmem for the whole text cost more than everything else here) */
    for (const char *b = maybe ? NULL : memchr(line, '[', n); b && !maybe;
         b = memchr(b + 1, '[', (size_t)(line + n - b - 1)))
        maybe = (size_t)(line + n - b) >= 7 && !memcmp(b, "[rank: ", 7);
    if (!maybe)
        return -1;
    dx_attrib_line(line, n, &a);
    return a.rank >= 0 ? a.rank : a.local_rank;
}

/* Every row that gives a time reads it with parse_hms, "HH:MM:SS": a line without two digits, a
 * colon, two digits, a colon and two digits has no time. */
bool dx_attrib_may_have_time(const char *line, size_t n)
{
    for (const char *c = line ? memchr(line, ':', n) : NULL; c;
         c = memchr(c + 1, ':', (size_t)(line + n - c - 1))) {
        size_t i = (size_t)(c - line);
        if (i >= 2 && i + 5 < n && is_digit(c[-2]) && is_digit(c[-1]) && is_digit(c[1]) &&
            is_digit(c[2]) && c[3] == ':' && is_digit(c[4]) && is_digit(c[5]))
            return true;
    }
    return false;
}

/* ===================================================================================== */
/* Ranks from file names                                                                    */
/* ===================================================================================== */

static bool is_sep(char c) { return c == '_' || c == '-' || c == '.'; }

/* Words that may stand before "rank" without making it a global rank ("node_rank_1",
 * "tp_rank_0"). "local" makes it a local rank. */
static const char *const not_global[] = {"node", "group", "tp", "pp", "dp", "ep", "cp", "sp", "mp"};

/* Finds word (lower case) in the component s[0..n) as "<word>[sep]<digits>" that starts the
 * component or follows a separator, with the digits ending the component or followed by a
 * separator: "rank_3.log", "rank3.txt", "log.rank-3", "node0_rank3.log", "nccl_trace_rank_3".
 * Sets *local for "local_rank3" / "localrank3". Returns the number or -1. */
static long word_number(const char *s, size_t n, const char *word, int *local)
{
    size_t w = strlen(word);
    for (size_t i = 0; i + w < n; i++) {
        if (!has_at_nocase(s, n, i, word))
            continue;
        size_t start = i; /* where the word, with a glued "local", begins */
        bool loc = false;
        if (i >= 5 && has_at_nocase(s, n, i - 5, "local")) {
            loc = true;
            start = i - 5;
        }
        if (start > 0 && !is_sep(s[start - 1]))
            continue;
        /* the separated word before: "local_rank", "node_rank" */
        if (!loc && start > 0) {
            size_t e = start - 1, b = e;
            while (b > 0 && is_alpha(s[b - 1]))
                b--;
            if (b == 0 || is_sep(s[b - 1])) {
                if (e - b == 5 && has_at_nocase(s, n, b, "local"))
                    loc = true;
                bool skip = false;
                for (size_t k = 0; k < DX_ARRAY_LEN(not_global) && !skip; k++) {
                    size_t len = strlen(not_global[k]);
                    skip = e - b == len && has_at_nocase(s, n, b, not_global[k]);
                }
                if (skip)
                    continue;
            }
        }
        size_t j = i + w;
        if (j < n && is_sep(s[j]))
            j++;
        long v;
        size_t k = some_digits(s, n, j, 7, &v);
        if (!k || (j + k < n && !is_sep(s[j + k])))
            continue;
        *local = loc;
        return v;
    }
    return -1;
}

/* SLURM "%t" outputs: "<name>-<jobid>_<task>.out", "job.1234.3.out", "slurm-1234_3.out". Only
 * .out and .err (SLURM's), a job id of 3+ digits and a task id without leading zeros, so dates
 * ("2024-05-01.out") and versions do not pass. Caution: an array job's "slurm-%A_%a.out" has
 * the same shape; the name only gives a default that line prefixes override. */
static long slurm_task(const char *s, size_t n)
{
    if (n < 5 || !(has_at(s, n, n - 4, ".out") || has_at(s, n, n - 4, ".err")))
        return -1;
    size_t e = n - 4, b = e;
    while (b > 0 && is_digit(s[b - 1]))
        b--;
    if (b == e || e - b > 6 || (s[b] == '0' && e - b > 1) || b < 2 || !is_sep(s[b - 1]))
        return -1;
    size_t je = b - 1, jb = je;
    while (jb > 0 && is_digit(s[jb - 1]))
        jb--;
    if (je - jb < 3 || (jb > 0 && !is_sep(s[jb - 1])))
        return -1;
    long v;
    some_digits(s, n, b, 6, &v);
    return v;
}

/* torchrun --log-dir: "<run_id>/attempt_<k>/<local_rank>/{stdout,stderr}.log" (and error.json). */
static long torchrun_log_dir(const char *path, size_t n)
{
    /* components from the end: base, local rank, attempt */
    size_t e = n, b = e;
    while (b > 0 && path[b - 1] != '/')
        b--;
    if (e - b != 10 || !(has_at(path, n, b, "stdout.log") || has_at(path, n, b, "stderr.log") ||
                         has_at(path, n, b, "error.json")))
        return -1;
    if (b < 2)
        return -1;
    e = b - 1;
    b = e;
    while (b > 0 && path[b - 1] != '/')
        b--;
    long r;
    if (e == b || some_digits(path, n, b, 7, &r) != e - b)
        return -1;
    if (b < 2)
        return -1;
    size_t ae = b - 1, ab = ae;
    while (ab > 0 && path[ab - 1] != '/')
        ab--;
    long k;
    if (!has_at(path, n, ab, "attempt_") || ae - ab == 8 ||
        some_digits(path, n, ab + 8, 4, &k) != ae - ab - 8)
        return -1;
    return r;
}

int dx_attrib_rank_from_name(const char *path, int *is_local)
{
    int dummy;
    if (!is_local)
        is_local = &dummy;
    *is_local = 0;
    if (!path)
        return -1;
    size_t n = strlen(path);

    long r = torchrun_log_dir(path, n);
    if (r >= 0) {
        *is_local = 1;
        return (int)r;
    }

    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    const char *base = path + b;
    size_t bn = n - b;
    int loc = 0;
    if ((r = word_number(base, bn, "rank", &loc)) >= 0 ||
        (r = word_number(base, bn, "worker", &loc)) >= 0) {
        *is_local = loc;
        return (int)r;
    }
    if ((r = slurm_task(base, bn)) >= 0)
        return (int)r;

    /* a directory named for the rank: "logs/rank3/stdout.txt" */
    if (b >= 2) {
        size_t pe = b - 1, pb = pe;
        while (pb > 0 && path[pb - 1] != '/')
            pb--;
        if ((r = word_number(path + pb, pe - pb, "rank", &loc)) >= 0) {
            *is_local = loc;
            return (int)r;
        }
    }
    return -1;
}

/* ===================================================================================== */
/* Time keys and formatting                                                                 */
/* ===================================================================================== */

int64_t dx_time_key(const dx_time *t, const dx_time *def)
{
    if (!t)
        return 0;
    int y = t->year, m = t->month, d = t->day;
    if (m == 0 && def) { /* no date: the default's */
        m = def->month;
        d = def->day;
        y = def->year;
    }
    if (y == 0 && def)
        y = def->year;
    if (y == 0)
        y = 1970;
    int64_t days = m >= 1 && m <= 12 && d >= 1 && d <= 31 ? days_from_civil(y, m, d) : 0;
    int64_t secs = days * 86400 + (int64_t)t->hour * 3600 + (int64_t)t->min * 60 + t->sec;
    return secs * 1000000 + t->usec;
}

size_t dx_time_format(const dx_time *t, char *buf, size_t cap)
{
    int len;
    char tmp[64];
    if (t->month == 0)
        len = snprintf(tmp, sizeof tmp, "%02d:%02d:%02d.%06d", t->hour, t->min, t->sec, t->usec);
    else if (t->year == 0)
        len = snprintf(tmp, sizeof tmp, "--%02d-%02dT%02d:%02d:%02d.%06d", t->month, t->day,
                       t->hour, t->min, t->sec, t->usec);
    else
        len = snprintf(tmp, sizeof tmp, "%04d-%02d-%02dT%02d:%02d:%02d.%06d%s", t->year, t->month,
                       t->day, t->hour, t->min, t->sec, t->usec, t->tz_known ? "Z" : "");
    if (len < 0)
        len = 0;
    if (cap > 0) {
        size_t k = (size_t)len < cap - 1 ? (size_t)len : cap - 1;
        memcpy(buf, tmp, k);
        buf[k] = 0;
    }
    return (size_t)len;
}
