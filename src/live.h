/* live.h -- diagnosing a job while it runs: lines fed as they arrive, a bounded digest of them,
 * the moment a finding's evidence is complete, and stalls (no progress, or one rank silent).
 *
 * A dx_live takes the raw bytes of any number of sources (a launcher's stdout and stderr, the
 * files of a job's log folder) and, line by line, matches them against the whole knowledge base
 * once (the same two-stage engine as a diagnosis), attributes them to a rank, and keeps a
 * digest: the subsequence of lines a diagnosis needs. Memory is bounded by a byte budget and
 * by the number of ranks and signals seen, never by the length of the job. The digest keeps:
 *   - the head of each source (versions, environment, the launcher's command line);
 *   - for each signal and rank, the first DX_LIVE_KEEP_FIRST and the latest lines it matched
 *     (DX_LIVE_KEEP_LAST, or DX_LIVE_KEEP_STEPS for step-time lines, which the straggler
 *     reading takes medians over), and the first DX_LIVE_KEEP_SIGNAL of each signal overall;
 *   - the lines before each failure line of its rank (the traceback that ends in it);
 *   - the latest lines of each rank and of each source (what a log ends on).
 * A diagnosis is the ordinary one (ddx_job_diagnose) over the digest, one buffer per source,
 * with every line number and line count mapped back to the source's own.
 *
 * When a line matches a failure signal (any role but `against` and `noise` of a reference that
 * is not noise), a diagnosis becomes due once the burst of lines it belongs to is over: the
 * output has been quiet for DX_LIVE_SETTLE_US, or DX_LIVE_WAIT_US has passed since that line
 * (whichever comes first). Then a finding's evidence is as complete as the output makes it.
 *
 * Times are microseconds of a monotonic clock the caller gives. The library never prints;
 * the CLI (cli/watch.c) runs processes, follows files and writes events.
 */
#ifndef DX_LIVE_H
#define DX_LIVE_H

#include "dx.h"

#define DX_LIVE_BUDGET (32u << 20)      /* default digest budget in bytes */
#define DX_LIVE_SETTLE_US (300 * 1000)  /* quiet time that ends a burst of failure lines */
#define DX_LIVE_WAIT_US (1000 * 1000)   /* the longest wait after a failure line */
#define DX_LIVE_HEAD_LINES 1000         /* head of each source kept */
#define DX_LIVE_HEAD_BYTES (256u << 10) /* ... or this many bytes, whichever comes first */
#define DX_LIVE_TAIL 200                /* latest lines kept per source */
#define DX_LIVE_RANK_TAIL 64            /* latest lines kept per rank */
#define DX_LIVE_KEEP_FIRST 2            /* first lines kept per signal and rank */
#define DX_LIVE_KEEP_LAST 2             /* latest lines kept per signal and rank */
#define DX_LIVE_KEEP_STEPS 64           /* latest step-time lines kept per signal and rank */
#define DX_LIVE_KEEP_SIGNAL 16          /* first lines kept per signal overall */
#define DX_LIVE_LINE_KEEP (8u << 10)    /* a kept line is cut to this many bytes */

typedef struct dx_live dx_live;

/* Opens a live diagnosis over kb (borrowed: it must outlive the dx_live). budget is the digest's
 * byte budget (0: DX_LIVE_BUDGET). */
DX_HIDDEN int dx_live_new(dx_live **out, const ddx_kb *kb, size_t budget, ddx_error *err);
DX_HIDDEN void dx_live_free(dx_live *lv);

/* Adds a source named name (copied; "<stdout>", or a file's path), returning its number. The
 * name is what reports and events show; a name that is a per-rank file name gives its lines a
 * default rank, as in a diagnosis. is_file: it is a file on disk, which a final diagnosis may
 * read whole instead (DX_LIVE_STREAMS_ONLY). */
DX_HIDDEN int dx_live_add_source(dx_live *lv, const char *name, int is_file, int *id,
                                 ddx_error *err);
DX_HIDDEN const char *dx_live_source_name(const dx_live *lv, int id);

/* Feeds n raw bytes of source id that arrived at time now. Complete lines are read at once;
 * a partial last line waits for its end (or dx_live_end_line). */
DX_HIDDEN int dx_live_feed(dx_live *lv, int id, const void *p, size_t n, int64_t now);
/* Takes a partial last line of source id as a whole line (the source ended or was truncated). */
DX_HIDDEN int dx_live_end_line(dx_live *lv, int id, int64_t now);

/* The file behind source id was replaced (rotated) or truncated: a partial last line is taken
 * as a line, and the lines read next are numbered from 1 again, as the file on disk is. */
DX_HIDDEN int dx_live_restart(dx_live *lv, int id, int64_t now);

/* When a diagnosis is due: a time (possibly past), or 0 when no failure line waits for one. */
DX_HIDDEN int64_t dx_live_due(const dx_live *lv);

/* The latest failure line read (the one that made the pending or last diagnosis due). */
typedef struct dx_live_line {
    int source;       /* -1 when none */
    uint64_t line;    /* the source's own line number */
    int rank;         /* -1 unknown */
    int64_t at;       /* when it arrived */
    const char *text; /* cleaned, at most 400 bytes; borrowed from the dx_live */
} dx_live_line;
DX_HIDDEN void dx_live_trigger(const dx_live *lv, dx_live_line *out);

/* Diagnoses the digest, plus the inputs at paths (read whole, as ddx_job_add_path does), with
 * ddx_job_diagnose's flags, and DX_LIVE_STREAMS_ONLY: leave out the digest of file sources
 * (the caller gives their paths). Clears the pending diagnosis. The report is the caller's. */
#define DX_LIVE_STREAMS_ONLY (1 << 16)
DX_HIDDEN int dx_live_diagnose(dx_live *lv, const char *const *paths, size_t npaths, int flags,
                               ddx_report **out, ddx_error *err);

/* ---- stalls --------------------------------------------------------------------------------
 * Progress is a line that a trainer prints once a step (the job model's step and progress
 * lines: "step 3/100", tqdm bars, "step_time 0.2s", Megatron's iteration times). A rank's step
 * time is the median time between its progress lines. A rank that printed the last step of its
 * loop ("step 40/40") has finished: it is neither silent nor a sign of progress. A job that has
 * printed nothing yet is starting, not stalled; before its first progress line, any line counts
 * as a sign of life. */
typedef struct dx_live_stall_opts {
    double after_s; /* > 0: a stall is this many seconds without progress */
    double factor;  /* else: factor x the median step time ... */
    double min_s;   /* ... but at least this many seconds */
} dx_live_stall_opts;

enum { DX_STALL_NONE = 0, DX_STALL_JOB = 1, DX_STALL_RANKS = 2 };

#define DX_STALL_RANKS_MAX 64
typedef struct dx_live_stall {
    int kind;           /* DX_STALL_* */
    double silent_s;    /* how long the (first named) silent rank, or the job, has been silent */
    double threshold_s; /* the stall threshold that applied */
    double step_s;      /* the median step time, 0 when unknown */
    int from_option;    /* the threshold is after_s (else factor x step time) */
    int silent[DX_STALL_RANKS_MAX]; /* the silent ranks, longest silent first */
    size_t nsilent, nsilent_total;
    int active[DX_STALL_RANKS_MAX]; /* ranks still making progress (DX_STALL_RANKS) */
    size_t nactive;
    int lagging[DX_STALL_RANKS_MAX]; /* ranks whose last step is behind the others' */
    size_t nlagging;
} dx_live_stall;

/* Checks for a stall at time now. Returns 1 and fills out when a new stall begins (each stall
 * is reported once, until progress resumes), else 0. */
DX_HIDDEN int dx_live_stall_check(dx_live *lv, const dx_live_stall_opts *o, int64_t now,
                                  dx_live_stall *out);

/* What the digest knows of rank r: its last line (borrowed text, NULL when none), when it came
 * and where, its last step number (-1 none), its process id (-1 unknown). */
typedef struct dx_live_rank {
    const char *last_text;
    int64_t last_at;
    int source;
    uint64_t line;
    long long step;
    long pid;
} dx_live_rank;
DX_HIDDEN int dx_live_rank_info(const dx_live *lv, int r, dx_live_rank *out);
/* The ranks seen so far, ascending (up to cap); returns how many there are in all. */
DX_HIDDEN size_t dx_live_ranks(const dx_live *lv, int *out, size_t cap);

/* Counters for tests and --verbose: lines read, lines and bytes the digest holds now. */
typedef struct dx_live_stats {
    uint64_t lines;
    uint64_t kept_lines;
    uint64_t kept_bytes;
    uint64_t diagnoses;
} dx_live_stats;
DX_HIDDEN void dx_live_get_stats(const dx_live *lv, dx_live_stats *out);

#endif
