/* job.h -- the job model: a registry of readings over every rank's lines, and the votes that
 * name a culprit rank.
 *
 * A reading is one unit (src/job/<family>.c, one row of the registry in src/job/registry.c): its
 * name, a doc line, the facts it publishes, its pattern rows (compiled into the same Vectorscan
 * database as the references' signals, so reading them costs no extra pass), the size of its
 * private job-wide and per-rank state, and its callbacks: on_line for every attributed line,
 * on_hit for a confirmed match of one of its patterns, finish once every input is read (its
 * verdicts and votes), publish (its facts) and describe (its part of a rank's summary).
 *
 * The model owns the ranks (dense by rank), each rank's identity (host, GPU, pid: written by
 * whichever reading sees it first) and a block of private state per reading. A reading keeps its
 * private state to itself: another reading reads it only through the accessors its family header
 * (src/job/<family>.h) declares. Readings run in registry order: on a line matched by patterns of
 * several readings, the earlier row sees the line first; finish runs once per reading, pulled
 * earlier when another reading's accessor needs its verdict (dx_job_need); publish runs in
 * registry order, which is the order of the facts in a report.
 *
 * Lifetimes: everything the model holds lives until dx_job_model_fini (the report's lifetime);
 * hit and line views (dx_hit, dx_line) borrow the chunk being read and are valid only during the
 * callback: copy what you keep.
 */
#ifndef DX_JOB_H
#define DX_JOB_H

#include <stdarg.h>

#include "attrib.h"
#include "facts.h"
#include "kb.h"

struct dx_scan;

#define DX_JOB_MAX_RANK (1 << 20) /* ranks a job model holds (dense); beyond: read without a rank */
#define DX_VOTE_RANKS 64

typedef struct dx_rank {
    int rank;
    uint64_t lines;
    int has_time;
    dx_time last_time;
    char *first_error; /* the first root line of any reference on this rank (diag.c sets it) */
    int unreadable; /* a file of this rank could not be read (diag.c): its silence says nothing */
    /* identity: from NCCL's Init COMPLETE line or torchelastic's table, first writer wins */
    char host[64];
    int cuda_dev;  /* -1 unknown */
    long long pid; /* -1 unknown */
    char bus_id[20];
    unsigned char *priv; /* the readings' private per-rank state (dx_job_rstate) */
} dx_rank;

/* A vote for the culprit: which rank(s), from which source (a row of the policy table in
 * src/job/culprit.c), how strong within its source, and the line that explains it. */
typedef struct dx_vote {
    const char *source;
    int ranks[DX_VOTE_RANKS];
    size_t nranks;
    double strength;
    char *why;
    int vetoed; /* set by a veto of the policy (culprit.c) */
} dx_vote;

typedef struct dx_job_model {
    dx_rank **by_rank; /* dense: by_rank[r] for r < nby */
    size_t nby;
    size_t nranks;
    int year;             /* the job's year, for times that carry none (set before finish) */
    void **state;         /* [dx_nreadings] each reading's private job-wide state */
    unsigned char *stage; /* [dx_nreadings] 0 reading, 1 finishing, 2 finished */
    int line_echo;        /* the line being read only echoes another rank's failure */
    dx_vote *votes;
    size_t nvotes, capvotes;
    /* whether any reference read a failure line (asked of diag.c at most once, when a reading
       needs it): -1 not asked yet */
    int (*any_failure_fn)(const void *ud);
    const void *any_failure_ud;
    int any_failure;
} dx_job_model;

/* ---- what a reading sees --------------------------------------------------------------------- */

/* An attributed log line (on_line), before the pattern hits on it. */
typedef struct dx_line {
    int rank; /* -1 unknown */
    const dx_attr *attr;
    const char *path;
    uint64_t lineno;
    uint64_t seq;     /* (input << 40) | line: the order of reading */
    const char *text; /* the whole line, not NUL-terminated */
    size_t len;
} dx_line;

/* A confirmed match of one of a reading's patterns. */
typedef struct dx_hit {
    struct dx_scan *scan; /* its captures (dx_hit_ll, dx_hit_str, ...) */
    int rank;             /* the line's rank (prefix or file name), -1 unknown */
    const char *path;
    uint64_t line;
    uint64_t seq;
    const char *text; /* the line's body (after its rank and time prefix) */
    size_t len;
    int has_time; /* the line's own time */
    dx_time time;
    int echo; /* a reference whose lines come from victims (culprit: other-rank) read this line */
} dx_hit;

DX_HIDDEN long long dx_hit_ll(const dx_hit *h, const char *name, long long def);
DX_HIDDEN double dx_hit_double(const dx_hit *h, const char *name); /* -1 none */
DX_HIDDEN int dx_hit_str(const dx_hit *h, const char *name, dx_str *out);
/* The capture as a C string in buf ("" when absent), cut to cap - 1 bytes. */
DX_HIDDEN void dx_hit_copy(const dx_hit *h, const char *name, char *buf, size_t cap);

/* One rank's summary as a report shows it: the core fields, and what each reading describes. */
typedef struct dx_rank_view {
    const dx_rank *x;
    const char *state; /* failed, slow, silent, timed out, healthy */
    int has_prog;
    long long prog_n, prog_m;
    const char *waits_in;
    int timed_out;
    long long timeout_seq; /* -1 unknown */
    const char *timeout_op;
    int has_last_completed;
    long long last_completed;
    double step_median[2]; /* [0] whole step, [1] data wait; 0 when too few samples */
    uint32_t nstep[2];
    double rel_speed;
    int slow;          /* flagged as a straggler */
    int slow_data;     /* ... by the time it waits for data */
    int stopped;       /* its output stopped long before the others' */
    int finished;      /* it printed the last step of its loop */
    int raised;        /* it raised an original exception of its own */
    int any_timed_out; /* some rank of the job timed out */
} dx_rank_view;

/* ---- the registry ---------------------------------------------------------------------------- */

typedef struct dx_reading_fact {
    const char *name; /* "job.stuck_rank" */
    const char *type; /* int, string, float */
    const char *from; /* where it comes from: the "from" column of docs/facts.md */
} dx_reading_fact;

typedef struct dx_reading {
    const char *name; /* its test folder is tests/job/<name>/ */
    const char *doc;
    const dx_reading_fact *facts;
    size_t nfacts;
    const dx_signal *patterns; /* each with its source */
    size_t npatterns;
    /* optional: [npatterns] each pattern's own prefilter (NULL none; see dx_prefilter_fn) */
    const dx_prefilter_fn *prefilters;
    size_t state_size; /* private job-wide state, zeroed */
    size_t rank_size;  /* private per-rank state, zeroed */
    void (*init)(void *st);
    void (*rank_init)(void *rs);
    void (*fini)(void *st);
    void (*rank_fini)(void *rs);
    /* the rank a line belongs to when its prefix and file give none (a process naming itself,
       a launcher's report that introduces a worker's traceback), else -1; sees every line
       first, before on_line */
    int (*line_rank)(dx_job_model *jm, void *st, const dx_line *l);
    int (*on_line)(dx_job_model *jm, void *st, const dx_line *l);
    /* optional: 0 while on_line would leave the state as it is for any line no pattern hits
       from the line of sequence number seq on, in the same input (a countdown at zero, nothing
       pending), so that the scan need not attribute and pass such lines one by one; NULL:
       on_line wants every line */
    int (*wants_lines)(const void *st, uint64_t seq);
    int (*on_hit)(dx_job_model *jm, void *st, size_t pattern, const dx_hit *h);
    int (*finish)(dx_job_model *jm, void *st);
    int (*publish)(dx_job_model *jm, void *st, dx_facts *f);
    void (*describe)(const dx_job_model *jm, const void *st, const void *rs, dx_rank_view *v);
} dx_reading;

DX_HIDDEN extern const dx_reading *const dx_readings[];
DX_HIDDEN extern const size_t dx_nreadings;

/* Defines a reading's row-count fields from its arrays. */
#define DX_READING_FACTS(a) a, DX_ARRAY_LEN(a)
#define DX_READING_PATTERNS(a) a, DX_ARRAY_LEN(a)

/* ---- the model ------------------------------------------------------------------------------- */

DX_HIDDEN int dx_job_model_init(dx_job_model *jm);
DX_HIDDEN void dx_job_model_fini(dx_job_model *jm);
/* The record of rank r (created on first use); NULL when r is out of range or memory ran out. */
DX_HIDDEN dx_rank *dx_job_rank(dx_job_model *jm, int r);
/* The record of rank r if it exists, else NULL (creates nothing). */
DX_HIDDEN const dx_rank *dx_job_rank_get(const dx_job_model *jm, int r);
/* Reading rd's job-wide state; its per-rank state of rank r (created with the rank when create is
 * set, else NULL when the rank does not exist), or of the record x. */
DX_HIDDEN void *dx_job_state(const dx_job_model *jm, const dx_reading *rd);
DX_HIDDEN void *dx_job_rstate(dx_job_model *jm, const dx_reading *rd, int r, int create);
DX_HIDDEN void *dx_rank_priv(const dx_job_model *jm, const dx_rank *x, const dx_reading *rd);
/* Runs rd's finish now if it has not run (a reading that reads another's verdict calls this
 * first). Finishing must not depend on itself through others. */
DX_HIDDEN int dx_job_need(dx_job_model *jm, const dx_reading *rd);
/* Whether any reference read a failure line (asked once, through any_failure_fn). */
DX_HIDDEN int dx_job_any_failure(dx_job_model *jm);

/* The rank of line l as the readings read it (their line_rank, in registry order; the first that
 * names one wins), or -1. Called for every log line before dx_job_line; the caller gives the line
 * that rank when its prefix and file gave none. */
DX_HIDDEN int dx_job_line_rank(dx_job_model *jm, const dx_line *l);

/* Called for every log line with its attributed rank (may be -1): counts the line, then every
 * reading's on_line. */
DX_HIDDEN int dx_job_line(dx_job_model *jm, const dx_line *l);
/* Whether some reading's on_line wants the lines no pattern hits from line seq on (see
 * wants_lines). While it
 * is 0 the scan may count such lines with dx_job_lines_seen instead of passing each to
 * dx_job_line, and give each rank's last time with dx_job_rank_time. */
DX_HIDDEN int dx_job_wants_lines(const dx_job_model *jm, uint64_t seq);
/* n more lines of rank r (-1: unknown), counted as dx_job_line counts them. */
DX_HIDDEN int dx_job_lines_seen(dx_job_model *jm, int r, uint64_t n);
/* Rank r's last line with a time had time t (as dx_job_line records it). */
DX_HIDDEN void dx_job_rank_time(dx_job_model *jm, int r, const dx_time *t);

DX_HIDDEN size_t dx_job_extractor_count(void);
DX_HIDDEN const dx_signal *dx_job_extractor_signal(size_t i);
/* Job pattern i's own prefilter, or NULL. */
DX_HIDDEN dx_prefilter_fn dx_job_extractor_prefilter(size_t i);
/* A confirmed hit of job extractor i (numbered across the registry's pattern rows). */
DX_HIDDEN int dx_job_hit(dx_job_model *jm, size_t i, const dx_hit *h);

/* After every input is read: each reading's finish (its verdicts and votes), then publish (its
 * facts, in registry order). */
DX_HIDDEN int dx_job_finish(dx_job_model *jm);
DX_HIDDEN int dx_job_publish(dx_job_model *jm, dx_facts *f);
/* Sets fact name (one the reading declared) with a formatted value. */
DX_HIDDEN int dx_job_fact(dx_facts *f, const char *name, const char *source, const char *fmt, ...)
    DX_PRINTF(4, 5);

/* The summary of rank record x. */
DX_HIDDEN void dx_job_rank_view(const dx_job_model *jm, const dx_rank *x, dx_rank_view *v);

/* Is name a fact some reading publishes? Its reading when it is, else NULL. */
DX_HIDDEN const dx_reading *dx_job_fact_owner(const char *name);

/* ---- votes ----------------------------------------------------------------------------------- */

/* Casts a vote for rank (or ranks[0..n)) from source with the explaining line. */
DX_HIDDEN int dx_job_vote(dx_job_model *jm, const char *source, int rank, double strength,
                          const char *fmt, ...) DX_PRINTF(5, 6);
DX_HIDDEN int dx_job_vote_ranks(dx_job_model *jm, const char *source, const int *ranks, size_t n,
                                double strength, const char *fmt, ...) DX_PRINTF(6, 7);

/* ---- helpers for readings -------------------------------------------------------------------- */

/* The one rank alone in its value while every other rank that has one shares another (rd's
 * per-rank state: has() says whether a rank has a value, same() whether two are equal). Returns
 * that rank (and one of the others in *other, how many in *nothers), or NULL. With two ranks each
 * is "alone"; callers that need a majority check *nothers. */
DX_HIDDEN const dx_rank *dx_job_alone_rank(const dx_job_model *jm, const dx_reading *rd,
                                           int (*has)(const void *rs),
                                           int (*same)(const void *a, const void *b),
                                           const dx_rank **other, size_t *nothers);

#endif
