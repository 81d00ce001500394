/* stacks.c -- stack dumps (py-spy dump, faulthandler): where each rank's main thread waits.
 *
 * Reading:
 *   stacks   the innermost frame of each dumped rank's main thread (and, when that frame is the
 *            standard library's waiting, the first caller outside it); the rank outside any
 *            collective while the others wait in one; a hang when nothing failed
 */
#include "stacks.h"

#include "collectives.h"
#include "launchers.h"
#include "norm.h"
#include "watchdog.h"

static const dx_reading_fact st_facts[] = {
    {"job.hang", "string",
     "py-spy or faulthandler dumps show ranks waiting in collectives and no rank failed or timed "
     "out"},
};

enum {
    ST_PYSPY_THREAD,
    ST_PYSPY_FRAME,
    ST_FH_THREAD,
    ST_FH_FRAME,
    ST_HEADER,
    ST_HEADER_RANK,
    ST_PYSPY_PROCESS
};

static const dx_signal st_patterns[] = {
    /* py-spy dump: 'Thread 123 (active): "MainThread"' then '    fn (file.py:12)' */
    [ST_PYSPY_THREAD] = {"job-pyspy-thread", DX_ROLE_NOISE, 0,
                         "^Thread (?:0x[0-9A-Fa-f]+|\\d+) \\((?:active|idle)[^)]*\\): "
                         "\"MainThread\"",
                         "py-spy dump output", 0},
    [ST_PYSPY_FRAME] = {"job-pyspy-frame", DX_ROLE_NOISE, 0,
                        "^ {4}(?<fn>[\\w.<>]+) \\((?<file>[^():]+):(?<line>\\d+)\\)",
                        "py-spy dump output", 0},
    /* faulthandler: 'Current thread 0x... (most recent call first):' then
     * '  File "x.py", line 12 in fn' */
    [ST_FH_THREAD] = {"job-faulthandler-thread", DX_ROLE_NOISE, 0,
                      "^(?:Current thread|Thread) 0x[0-9a-f]+ \\(most recent call first\\):",
                      "CPython faulthandler", 0},
    [ST_FH_FRAME] = {"job-faulthandler-frame", DX_ROLE_NOISE, 0,
                     "^ +File \"(?<file>[^\"]+)\", line (?<line>\\d+) in (?<fn>[\\w.<>]+)",
                     "CPython faulthandler", 0},
    /* who a posted stack dump belongs to, when its lines carry no rank prefix: a heading such
     * as "The stack for rank0:" / "py-spy dump of rank 3" / "Rank 5:" on its own line, or
     * py-spy's own first line, "Process 4242: python train.py --local_rank=1" */
    [ST_HEADER] = {"job-stack-header", DX_ROLE_NOISE, 0,
                   "^(?:[Tt]he )?(?:[Pp]y-?[Ss]py |[Pp]ython |[Mm]ain[- ]thread )?"
                   "(?:[Ss]tack|[Dd]ump|[Tt]race(?:back)?)s? (?:of|for|from|on) "
                   "(?:global )?[Rr]ank ?(?<rank>\\d+)\\b",
                   "stack dumps as posted in reports", 0},
    [ST_HEADER_RANK] = {"job-stack-header-rank", DX_ROLE_NOISE, 0,
                        "^[Rr]ank ?(?<rank>\\d+)(?: (?:stack|py-spy dump|dump|trace))? ?:? *$",
                        "stack dumps as posted in reports", 0},
    [ST_PYSPY_PROCESS] = {"job-pyspy-process", DX_ROLE_NOISE, 0,
                          "^Process \\d+: [^\\n]*--local[_-]rank[= ](?<rank>\\d+)",
                          "py-spy dump output (first line: the process and its command line)", 0},
};

/* ==== the rows' own prefilters ============================================================== */

/* Two rows whose Vectorscan forms cost the scan much on every log: a leading ^ is read there as
 * any body's start (after a blank, ']', ':', ')' or '>'), so " {4}" runs an automaton at every
 * run of blanks and "[Rr]ank" at every "[rank3]:" prefix. Each gets a test instead, true on
 * every line the row's pattern matches, on the whole line or on any part of it (its body, where
 * PCRE2 tries an anchored pattern again): the line is then confirmed by PCRE2 as before. The
 * unit test (test_match.c) checks both against PCRE2 on generated lines. */

static int is_frame_word(unsigned char c)
{
    return ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '<' || c == '>';
}

/* job-pyspy-frame: " {4}[\w.<>]+ \([^():]+:\d+\)" anywhere in the line (each class ends where
 * the next part begins, so each '(' decides it: the word before it and what follows). */
static int frame_prefilter(const char *s, size_t n)
{
    for (const char *q = memchr(s, '(', n); q; q = memchr(q + 1, '(', (size_t)(s + n - q - 1))) {
        size_t j = (size_t)(q - s), w = j - 1, k = j + 1;
        if (j < 6 || s[j - 1] != ' ')
            continue;
        while (w > 0 && is_frame_word((unsigned char)s[w - 1]))
            w--;
        if (w == j - 1 || w < 4 || memcmp(s + w - 4, "    ", 4))
            continue;
        while (k < n && s[k] != '(' && s[k] != ')' && s[k] != ':')
            k++;
        if (k == j + 1 || k >= n || s[k] != ':')
            continue;
        size_t d = ++k;
        while (k < n && s[k] >= '0' && s[k] <= '9')
            k++;
        if (k > d && k < n && s[k] == ')')
            return 1;
    }
    return 0;
}

/* Whether s[0..e) ends as the heading row does: "[Rr]ank ?\d+", then perhaps " stack",
 * " py-spy dump", " dump" or " trace", ' ', ':' and blanks (read leniently: any run of blanks, tabs
 * and colons, with or without the word). */
static int rank_heading_end(const char *s, size_t e)
{
    static const char *const words[] = {" py-spy dump", " stack", " dump", " trace"};
    while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == ':'))
        e--;
    /* most lines end otherwise: in a digit or a word's last letter, or they are not this row's */
    if (!e || !((s[e - 1] >= '0' && s[e - 1] <= '9') || s[e - 1] == 'p' || s[e - 1] == 'k' ||
                s[e - 1] == 'e'))
        return 0;
    for (size_t w = 0; w <= DX_ARRAY_LEN(words); w++) {
        size_t x = e;
        if (w < DX_ARRAY_LEN(words)) {
            size_t k = strlen(words[w]);
            if (x < k || s[x - 1] != words[w][k - 1] || memcmp(s + x - k, words[w], k))
                continue;
            x -= k;
        }
        size_t d = x;
        while (x > 0 && s[x - 1] >= '0' && s[x - 1] <= '9')
            x--;
        if (x == d)
            continue;
        if (x > 0 && s[x - 1] == ' ')
            x--;
        if (x >= 4 && s[x - 1] == 'k' && s[x - 2] == 'n' && s[x - 3] == 'a' &&
            (s[x - 4] == 'R' || s[x - 4] == 'r'))
            return 1;
    }
    return 0;
}

/* job-stack-header-rank: "^[Rr]ank ?\d+( (stack|py-spy dump|dump|trace))? ?:? *$" ends where the
 * line ends or where its body does (less a cluster framework's suffix and the blanks). */
static int heading_prefilter(const char *s, size_t n)
{
    return rank_heading_end(s, n) || rank_heading_end(s, dx_norm_body_end(s, 0, n));
}

static const dx_prefilter_fn st_prefilters[] = {
    [ST_PYSPY_FRAME] = frame_prefilter,
    [ST_HEADER_RANK] = heading_prefilter,
    [ST_PYSPY_PROCESS] = NULL,
};

typedef struct st_state {
    int hdr_rank; /* the rank a stack dump's heading names ("The stack for rank0:") */
    int hdr_left; /* lines left in which that heading applies */
    int cur;      /* the rank of the stack dump being read, -1 none */
    /* a rank whose stack is outside any collective while the other dumped ranks wait in one,
       -1 none; lone: it is the only dump and nothing failed */
    int rank;
    int lone;
    char why[300];
    /* stack dumps show ranks waiting in collectives and no rank failed: a hang ("" when not) */
    char hang[200];
    /* the innermost frame of the first dumped stack, ranked or not ("" none), its rank and
       where; dump_pending: its thread line was read, its frame not yet */
    char dump[256];
    uint64_t dump_seq;
    int dump_rank, dump_pending;
} st_state;

typedef struct st_rank {
    /* innermost frame of the main thread: "all_reduce (torch/distributed/distributed_c10d.py:2050)" */
    char *waits_in;
    int waits_coll; /* that frame (or its first caller outside the standard library's waits) is a
                       collective of torch.distributed or a wait on one */
    /* frames still to read of the main thread's stack: the innermost, then callers until one
       outside the standard library's waits */
    int pending;
} st_rank;

const dx_reading dx_reading_stacks;

static void st_init(void *stp)
{
    st_state *st = stp;
    st->hdr_rank = st->cur = st->rank = st->dump_rank = -1;
}

static void st_rank_fini(void *rs) { dx_free(((st_rank *)rs)->waits_in); }

static int st_line(dx_job_model *jm, void *stp, const dx_line *l)
{
    (void)jm;
    (void)l;
    st_state *st = stp;
    if (st->hdr_left > 0)
        st->hdr_left--;
    return DDX_OK;
}

static int st_wants_lines(const void *stp, uint64_t seq)
{
    (void)seq;
    return ((const st_state *)stp)->hdr_left > 0;
}

/* A frame in the standard library's blocking calls (threading, queue, selectors, sockets,
 * multiprocessing): where a thread waits, not what it waits for. */
static int stdlib_wait_frame(const char *file, size_t n)
{
    static const char *const libs[] = {"threading.py",  "queue.py",      "selectors.py",
                                       "socket.py",     "subprocess.py", "ssl.py",
                                       "connection.py", "synchronize.py"};
    if (memmem(file, n, "multiprocessing/", 16))
        return 1;
    const char *slash = memrchr(file, '/', n);
    const char *base = slash ? slash + 1 : file;
    size_t bn = (size_t)(file + n - base);
    for (size_t i = 0; i < DX_ARRAY_LEN(libs); i++)
        if (strlen(libs[i]) == bn && !memcmp(base, libs[i], bn))
            return 1;
    return 0;
}

static int st_frame(dx_job_model *jm, st_state *st, const dx_hit *h)
{
    st_rank *x = dx_job_rstate(jm, &dx_reading_stacks, h->rank < 0 ? st->cur : h->rank, 1);
    if (!st->dump_pending && (!x || !x->pending))
        return DDX_OK;
    dx_str fn, file, ln;
    if (!dx_hit_str(h, "fn", &fn) || !dx_hit_str(h, "file", &file) || !dx_hit_str(h, "line", &ln)) {
        st->dump_pending = 0;
        if (x)
            x->pending = 0;
        return DDX_OK;
    }
    /* keep the file's last two path components: enough to read, short to print */
    const char *f = file.p + file.n;
    int slashes = 0;
    while (f > file.p && !(f[-1] == '/' && ++slashes == 3))
        f--;
    char buf[256];
    snprintf(buf, sizeof buf, "%.*s (%.*s:%.*s)", (int)fn.n, fn.p, (int)(file.p + file.n - f), f,
             (int)ln.n, ln.p);
    if (st->dump_pending) {
        snprintf(st->dump, sizeof st->dump, "%s", buf);
        st->dump_pending = 0;
    }
    if (!x || !x->pending)
        return DDX_OK;
    int lib = stdlib_wait_frame(file.p, file.n);
    if (!x->waits_in) {
        /* the innermost frame; when it is the standard library's waiting (a lock, a queue, a
         * socket), the first caller outside it says what the rank waits for */
        if (!(x->waits_in = dx_strdup(buf)))
            return DDX_ENOMEM;
        x->waits_coll = dx_frame_in_collective(&fn, &file);
        x->pending = lib ? 8 : 0;
        return DDX_OK;
    }
    if (lib) {
        x->pending--;
        return DDX_OK;
    }
    x->pending = 0;
    x->waits_coll |= dx_frame_in_collective(&fn, &file);
    size_t n = strlen(x->waits_in) + strlen(buf) + 16;
    char *w = dx_malloc(n);
    if (!w)
        return DDX_ENOMEM;
    snprintf(w, n, "%s, called from %s", x->waits_in, buf);
    dx_free(x->waits_in);
    x->waits_in = w;
    return DDX_OK;
}

static int st_hit(dx_job_model *jm, void *stp, size_t row, const dx_hit *h)
{
    st_state *st = stp;
    switch (row) {
    case ST_PYSPY_THREAD:
    case ST_FH_THREAD: {
        int rank = h->rank < 0 && st->hdr_left > 0 ? st->hdr_rank : h->rank;
        st->cur = rank;
        st->hdr_left = 0;
        if (!st->dump[0] && !st->dump_pending) {
            st->dump_pending = 1;
            st->dump_rank = rank;
            st->dump_seq = h->seq;
        }
        st_rank *x = dx_job_rstate(jm, &dx_reading_stacks, rank, 1);
        if (x && !x->waits_in)
            x->pending = 1;
        return DDX_OK;
    }
    case ST_PYSPY_FRAME:
    case ST_FH_FRAME:
        return st_frame(jm, st, h);
    default: {
        long long r = dx_hit_ll(h, "rank", -1);
        if (h->rank < 0 && r >= 0 && r < DX_JOB_MAX_RANK) {
            st->hdr_rank = (int)r;
            st->hdr_left = 6; /* the stack starts within a few lines of its heading */
        }
        return DDX_OK;
    }
    }
}

/* With stack dumps of several ranks: one rank outside any collective while the others all wait
 * in one is the rank the others wait for. */
static int st_finish(dx_job_model *jm, void *stp)
{
    st_state *st = stp;
    size_t dumped = 0, waiting = 0;
    int outside = -1, noutside = 0, failed = 0;
    const st_rank *out = NULL;
    for (size_t r = 0; r < jm->nby; r++) {
        const st_rank *x = dx_rank_priv(jm, jm->by_rank[r], &dx_reading_stacks);
        failed |= jm->by_rank[r] && (dx_exception_first(jm, jm->by_rank[r], NULL) ||
                                     dx_watchdog_timed_out(jm, (int)r));
        if (!x || !x->waits_in)
            continue;
        dumped++;
        if (x->waits_coll)
            waiting++;
        else {
            outside = (int)r;
            out = x;
            noutside++;
        }
    }
    if (dumped >= 2 && noutside == 1 && waiting == dumped - 1) {
        st->rank = outside;
        snprintf(st->why, sizeof st->why,
                 "every dumped rank waits in a collective except rank %d, in %s", outside,
                 out->waits_in);
    } else if (dumped == 1 && noutside == 1 && !failed) {
        /* one rank's stack, taken because the job hung (people dump the rank they suspect): it
         * is not waiting for the others, so it is the one the others wait for */
        st->rank = outside;
        st->lone = 1;
        snprintf(st->why, sizeof st->why,
                 "the one dumped rank, %d, is outside any collective, in %s, and no rank failed or "
                 "timed out",
                 outside, out->waits_in);
    }
    if (waiting && !failed)
        snprintf(st->hang, sizeof st->hang,
                 "%zu of %zu dumped rank%s wait%s in a collective and no rank failed or timed out",
                 waiting, dumped, dumped == 1 ? "" : "s", waiting == 1 ? "s" : "");
    return st->rank >= 0 ? dx_job_vote(jm, "stack", st->rank, 1, "stack dumps: %s", st->why)
                         : DDX_OK;
}

int dx_stacks_lone_rank(dx_job_model *jm, const char **why)
{
    (void)dx_job_need(jm, &dx_reading_stacks);
    const st_state *st = dx_job_state(jm, &dx_reading_stacks);
    *why = st->why;
    return st->lone ? st->rank : -1;
}

const char *dx_stacks_first_dump(const dx_job_model *jm, int *rank, uint64_t *seq)
{
    const st_state *st = dx_job_state(jm, &dx_reading_stacks);
    *rank = st->dump_rank;
    *seq = st->dump_seq;
    return st->dump[0] ? st->dump : NULL;
}

static int st_publish(dx_job_model *jm, void *stp, dx_facts *f)
{
    (void)jm;
    const st_state *st = stp;
    return st->hang[0]
               ? dx_job_fact(f, "job.hang", "py-spy or faulthandler stack dumps", "%s", st->hang)
               : DDX_OK;
}

static void st_describe(const dx_job_model *jm, const void *stp, const void *rs, dx_rank_view *v)
{
    (void)jm;
    (void)stp;
    v->waits_in = ((const st_rank *)rs)->waits_in;
}

const dx_reading dx_reading_stacks = {
    .name = "stacks",
    .doc = "where each dumped rank's main thread waits (py-spy, faulthandler), the rank outside "
           "any collective while the others wait in one, and a hang when nothing failed",
    .facts = st_facts,
    .nfacts = DX_ARRAY_LEN(st_facts),
    .patterns = st_patterns,
    .npatterns = DX_ARRAY_LEN(st_patterns),
    .prefilters = st_prefilters,
    .state_size = sizeof(st_state),
    .rank_size = sizeof(st_rank),
    .init = st_init,
    .rank_fini = st_rank_fini,
    .on_line = st_line,
    .wants_lines = st_wants_lines,
    .on_hit = st_hit,
    .finish = st_finish,
    .publish = st_publish,
    .describe = st_describe,
};
